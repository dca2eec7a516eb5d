/* image_tool.c: mts-shim-image, the helper mts-shim runs for each image import or pull, so archive and network parsing stay out of the long-lived shim (and its memory). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "hash.h"
#include "image_store.h"
#include "peer_core.h"
#include "log.h"
#include "mtserr.h"

/*
 * mts-shim-image import STORE PATH [NAME]
 * mts-shim-image pull [-s BYTES] [-t MS] [-d MS] [-m BYTES] STORE REF [insecure]
 * mts-shim-image fetch [pull options] [-r BYTES] [-c MS] STORE MODE REF RUNDIR
 *     NODE [insecure]
 *
 * fetch: MODE auto (the reference's registry when it names one, else
 * the peers), pull (the registry, then the peers), peers or registry;
 * peers are found in the i/<node> records of the statestore under RUNDIR
 * and asked through its gossipd; NODE is this node's id. -r caps the
 * bytes a second received from peers ([shim] peer_fetch_rate, 0: none),
 * -c is the deadline of one relayed chunk ([shim] peer_chunk_timeout).
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
	    "[-m BYTES] STORE REF [insecure]\n"
	    "       mts-shim-image fetch [pull options] [-r BYTES] [-c MS] "
	    "STORE MODE REF RUNDIR NODE [insecure]\n");
	return 64;
}

/* The pull (and fetch) options; 0 or -1 on a malformed one. */
static int
pull_opts(int argc, char **argv, struct mts_pull_limits *lim,
    struct mts_peer_opts *po)
{
	int64_t *dst;
	char *end;
	int c;

	*lim = (struct mts_pull_limits){ .low_speed = 1024,
		.low_time_ms = 30000,
		.deadline_ms = 30 * 60 * 1000,
		.max_blob = 4LL << 30 };
	*po = (struct mts_peer_opts){ .rate = 0, .chunk_timeout_ms = 10000 };
	while ((c = getopt(argc, argv, "+s:t:d:m:r:c:")) != -1) {
		dst = c == 's' ? &lim->low_speed
		    : c == 't' ? &lim->low_time_ms
		    : c == 'd' ? &lim->deadline_ms
		    : c == 'm' ? &lim->max_blob
		    : c == 'r' ? &po->rate
		    : c == 'c' ? &po->chunk_timeout_ms
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

static const struct {
	const char *name;
	enum mts_img_mode mode;
} modes[] = {
	{ "auto", MTS_MODE_AUTO },
	{ "pull", MTS_MODE_PULL },
	{ "peers", MTS_MODE_PEERS },
	{ "registry", MTS_MODE_REGISTRY },
};

static int
mode_of(const char *s, enum mts_img_mode *m)
{
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(modes[i].name, s) == 0) {
			*m = modes[i].mode;
			return 0;
		}
	return -1;
}

/*
 * fetch: each source in turn until one has the image. The error names
 * every source tried: "image X: not in any registry and no peer has it"
 * when the reference names no registry and no peer holds it, "image X:
 * no peer has it" when only the peers were asked.
 */
static int
fetch(struct mts_image_store *st, enum mts_img_mode mode, const char *ref,
    int insecure, const struct mts_pull_limits *lim,
    const struct mts_peer_opts *po, char *name, size_t namelen, char *err,
    size_t errlen)
{
	enum mts_img_source src[2];
	size_t n = mts_img_sources(ref, mode, src), i;
	char reg[1024] = "", peers[1024] = "";
	int rc = -MTS_ERR_NOTFOUND, prc = 0;

	for (i = 0; i < n; i++) {
		if (src[i] == MTS_SRC_REGISTRY)
			rc = mts_store_pull(st, ref, insecure, lim, name,
			    namelen, reg, sizeof(reg));
		else
			rc = prc = mts_store_fetch_peers(st, ref, po, name,
			    namelen, peers, sizeof(peers));
		if (rc == 0)
			return 0;
		if (i + 1 < n)
			log_warnx("%s", reg[0] ? reg : peers);
	}
	if (mode == MTS_MODE_PEERS)
		snprintf(err, errlen, "image %s: %s", ref, peers);
	else if (reg[0] == '\0' && prc == -MTS_ERR_NOTFOUND)
		snprintf(err, errlen, "image %s: not in any registry and %s",
		    ref, peers);
	else if (reg[0] == '\0')
		snprintf(err, errlen, "image %s: from peers: %s", ref, peers);
	else if (peers[0] == '\0')
		snprintf(err, errlen, "%s", reg);
	else
		snprintf(err, errlen, "%s; and from peers: %s", reg, peers);
	return rc;
}

int
main(int argc, char **argv)
{
	struct mts_image_store *st = NULL;
	struct mts_pull_limits lim;
	struct mts_peer_opts po;
	enum mts_img_mode mode = MTS_MODE_PULL;
	char name[512], err[2048];
	int rc, pull, fet, nargs;

	log_init("shim-image",
	    getenv("MTS_DEBUG") ? MTS_LOG_DEBUG : MTS_LOG_INFO);
	if (argc < 2)
		return usage();
	pull = strcmp(argv[1], "pull") == 0;
	fet = strcmp(argv[1], "fetch") == 0;
	if (!pull && !fet && strcmp(argv[1], "import") != 0)
		return usage();
	argc--;
	argv++;
	if ((pull || fet) && pull_opts(argc, argv, &lim, &po) != 0)
		return usage();
	argc -= pull || fet ? optind : 1;
	argv += pull || fet ? optind : 1;
	nargs = fet ? 5 : 2; /* fixed arguments before the optional one */
	if (argc < nargs || argc > nargs + 1 ||
	    (fet && mode_of(argv[1], &mode) != 0))
		return usage();
	if (mts_crypto_init() != 0 ||
	    curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		printf("ERR %d library initialisation failed\n", MTS_ERR_IO);
		return 1;
	}
	if ((rc = mts_store_open(argv[0], &st, err, sizeof(err))) == 0) {
		if (fet) {
			po.rundir = argv[3];
			po.self = strcmp(argv[4], "-") ? argv[4] : "";
			po.deadline_ms = lim.deadline_ms;
			po.max_blob = lim.max_blob;
			rc = fetch(st, mode, argv[2],
			    argc == 6 && !strcmp(argv[5], "insecure"), &lim,
			    &po, name, sizeof(name), err, sizeof(err));
		} else if (!pull)
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
