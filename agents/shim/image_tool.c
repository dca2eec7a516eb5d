/* image_tool.c: mts-shim-image, the helper mts-shim runs for each image import or pull, so archive and network parsing stay out of the long-lived shim (and its memory). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "hash.h"
#include "image_store.h"
#include "log.h"
#include "mtserr.h"

/*
 * mts-shim-image import STORE PATH [NAME]
 * mts-shim-image pull [-s BYTES] [-t MS] [-d MS] [-m BYTES] STORE REF [insecure]
 *
 * pull: -s/-t fail a transfer slower than BYTES a second for MS
 * milliseconds, -d is the deadline of the whole pull, -m the largest
 * declared blob ([shim] pull_low_speed_limit, pull_low_speed_time,
 * pull_timeout, pull_max_blob; the defaults below are theirs).
 *
 * Prints one line: "OK <stored name>" (exit 0) or "ERR <mts_err> <message>"
 * (exit 1). Usage errors exit 64.
 */
static int
usage(void)
{
	fprintf(stderr,
	    "usage: mts-shim-image import STORE PATH [NAME]\n"
	    "       mts-shim-image pull [-s BYTES] [-t MS] [-d MS] "
	    "[-m BYTES] STORE REF [insecure]\n");
	return 64;
}

/* The pull options; 0 or -1 on a malformed one. */
static int
pull_opts(int argc, char **argv, struct mts_pull_limits *lim)
{
	int64_t *dst;
	char *end;
	int c;

	*lim = (struct mts_pull_limits){ .low_speed = 1024,
		.low_time_ms = 30000,
		.deadline_ms = 30 * 60 * 1000,
		.max_blob = 4LL << 30 };
	while ((c = getopt(argc, argv, "+s:t:d:m:")) != -1) {
		dst = c == 's' ? &lim->low_speed
		    : c == 't' ? &lim->low_time_ms
		    : c == 'd' ? &lim->deadline_ms
		    : c == 'm' ? &lim->max_blob
		               : NULL;
		if (dst == NULL)
			return -1;
		errno = 0;
		*dst = strtoll(optarg, &end, 10);
		if (errno != 0 || *end != '\0' || *dst < 0)
			return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct mts_image_store *st = NULL;
	struct mts_pull_limits lim;
	char name[512], err[2048];
	int rc, pull;

	log_init("shim-image",
	    getenv("MTS_DEBUG") ? MTS_LOG_DEBUG : MTS_LOG_WARN);
	if (argc < 2)
		return usage();
	pull = strcmp(argv[1], "pull") == 0;
	if (!pull && strcmp(argv[1], "import") != 0)
		return usage();
	argc--;
	argv++;
	if (pull && pull_opts(argc, argv, &lim) != 0)
		return usage();
	argc -= pull ? optind : 1;
	argv += pull ? optind : 1;
	if (argc < 2 || argc > 3)
		return usage();
	if (mts_crypto_init() != 0 ||
	    curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		printf("ERR %d library initialisation failed\n", MTS_ERR_IO);
		return 1;
	}
	if ((rc = mts_store_open(argv[0], &st, err, sizeof(err))) == 0) {
		if (!pull)
			rc = mts_store_import(st, argv[1],
			    argc == 3 && *argv[2] ? argv[2] : NULL, name,
			    sizeof(name), err, sizeof(err));
		else
			rc = mts_store_pull(st, argv[1],
			    argc == 3 && !strcmp(argv[2], "insecure"), &lim,
			    name, sizeof(name), err, sizeof(err));
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
