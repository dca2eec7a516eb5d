/* fuzz_shim_manifest.c: libFuzzer target for the shim's image JSON parsers (index, manifest, config, docker-save manifest). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agents/shim/image_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every parser must either accept (then every digest it returns is valid)
 * or refuse with a message; never crash or leak. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *j = (const char *)data;
	struct mts_oci_index x;
	struct mts_oci_manifest m;
	struct mts_image_config c;
	struct mts_docker_manifest d;
	enum mts_blob_kind k;
	char err[256];
	size_t i;

	if (mts_oci_parse_index(j, size, &x, err, sizeof(err)) == 0) {
		for (i = 0; i < x.n; i++)
			if (mts_digest_valid(x.m[i].digest) != 0)
				abort();
		(void)mts_oci_pick(&x, "linux", "amd64");
	} else if (err[0] == '\0')
		abort();
	mts_oci_index_free(&x);
	if (mts_oci_parse_manifest(j, size, &m, err, sizeof(err)) == 0) {
		if (mts_digest_valid(m.config.digest) != 0)
			abort();
		for (i = 0; i < m.nlayers; i++)
			if (mts_digest_valid(m.layers[i].digest) != 0)
				abort();
	}
	mts_oci_manifest_free(&m);
	if (mts_oci_parse_config(j, size, &c, err, sizeof(err)) == 0)
		for (i = 0; i < c.ndiff; i++)
			if (mts_digest_valid(c.diff_ids[i]) != 0)
				abort();
	mts_image_config_free(&c);
	if (mts_docker_parse_manifest(j, size, &d, err, sizeof(err)) == 0 &&
	    (d.config == NULL || d.layers == NULL))
		abort();
	mts_docker_manifest_free(&d);
	(void)mts_oci_blob_kind(j, size, &k, err, sizeof(err));
	return 0;
}
