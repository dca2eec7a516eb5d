/* image_tool.c: mts-shim-image, the helper mts-shim runs for each image import or pull, so archive and network parsing stay out of the long-lived shim (and its memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "hash.h"
#include "image_store.h"
#include "log.h"
#include "mtserr.h"

/*
 * mts-shim-image import STORE PATH [NAME]
 * mts-shim-image pull STORE REF [insecure]
 *
 * Prints one line: "OK <stored name>" (exit 0) or "ERR <mts_err> <message>"
 * (exit 1). Usage errors exit 64.
 */
int
main(int argc, char **argv)
{
	struct mts_image_store *st = NULL;
	char name[512], err[2048];
	int rc;

	log_init("shim-image", getenv("MTS_DEBUG") ? MTS_LOG_DEBUG
						   : MTS_LOG_WARN);
	if (argc < 4 || argc > 5 ||
	    (strcmp(argv[1], "import") != 0 && strcmp(argv[1], "pull") != 0)) {
		fprintf(stderr, "usage: mts-shim-image import STORE PATH [NAME]"
				" | pull STORE REF [insecure]\n");
		return 64;
	}
	if (mts_crypto_init() != 0 ||
	    curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		printf("ERR %d library initialisation failed\n", MTS_ERR_IO);
		return 1;
	}
	if ((rc = mts_store_open(argv[2], &st, err, sizeof(err))) == 0) {
		if (strcmp(argv[1], "import") == 0)
			rc = mts_store_import(st, argv[3],
			    argc == 5 && *argv[4] ? argv[4] : NULL, name,
			    sizeof(name), err, sizeof(err));
		else
			rc = mts_store_pull(st, argv[3],
			    argc == 5 && !strcmp(argv[4], "insecure"), name,
			    sizeof(name), err, sizeof(err));
	}
	mts_store_close(st);
	curl_global_cleanup();
	if (rc != 0) {
		printf("ERR %d %s\n", -rc, err);
		return 1;
	}
	printf("OK %s\n", name);
	return 0;
}
