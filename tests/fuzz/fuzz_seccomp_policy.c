/* fuzz_seccomp_policy.c: libFuzzer target for the seccomp policy parser and compiler (common/seccomp_policy.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "seccomp_policy.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Any text either parses or fails with a "FILE:LINE: " message, and so
 * does compiling what parsed. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mts_seccomp_policy *p = NULL;
	char err[512], *text;
	int fd;

	if (size > 64 << 10 || memchr(data, '\0', size) != NULL)
		return 0;
	text = xmalloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	if (mts_seccomp_parse(text, "f", &p, err, sizeof(err)) < 0) {
		if (strncmp(err, "f:", 2) != 0)
			abort();
	} else {
		fd = memfd_create("fuzz", 0);
		if (fd >= 0 &&
		    mts_seccomp_export(p, 0, fd, err, sizeof(err)) < 0 &&
		    strncmp(err, "f:", 2) != 0)
			abort();
		if (fd >= 0)
			close(fd);
		mts_seccomp_free(p);
	}
	free(text);
	return 0;
}
