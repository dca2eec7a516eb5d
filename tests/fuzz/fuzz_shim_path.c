/* fuzz_shim_path.c: libFuzzer target for the shim's archive path checker, whiteout classifier and image reference parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agents/shim/image_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An accepted path is relative, has no "." or ".." component and cleans
 * to itself again. */
static void
check_path(const char *in)
{
	char out[512], again[512], tgt[512];
	enum mts_whiteout k;
	const char *p;

	if (mts_archive_path_clean(in, out, sizeof(out)) != 0)
		return;
	if (out[0] == '/' || strcmp(out, "..") == 0 ||
	    strncmp(out, "../", 3) == 0 || strstr(out, "/../") != NULL ||
	    (strlen(out) >= 3 && strcmp(out + strlen(out) - 3, "/..") == 0) ||
	    strstr(out, "//") != NULL)
		abort();
	for (p = out; (p = strstr(p, "./")) != NULL; p++)
		if (p == out || p[-1] == '/')
			abort();
	if (mts_archive_path_clean(out, again, sizeof(again)) != 0 ||
	    strcmp(out, again) != 0)
		abort();
	if (mts_whiteout_classify(out, &k, tgt, sizeof(tgt)) == 0 &&
	    k == MTS_WH_FILE &&
	    (tgt[0] == '\0' ||
	        mts_archive_path_clean(tgt, again, sizeof(again)) != 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[600];
	struct mts_ref r;

	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check_path(s);
	if (mts_ref_parse(s, &r) == 0 &&
	    (r.repo[0] == '\0' || (r.tag[0] == '\0' && r.digest[0] == '\0')))
		abort();
	return 0;
}
