/* peer_core.h: pure logic of obtaining an image a node lacks — where to look (registry, peers), which peers hold it (their i/<node> records), in which order to ask them, how often to retry, and pacing to a byte rate. */
#ifndef MTS_SHIM_PEER_CORE_H
#define MTS_SHIM_PEER_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "image_core.h"
#include "mtstime.h"

#define MTS_PEER_NAME_MAX 255
/* Bytes of blob data in one reply: the whole relayed frame stays within
 * 1 MiB. */
#define MTS_PEER_CHUNK ((1u << 20) - 4096)
#define MTS_PEER_MAX_HELD 4096 /* images listed in one i/<node> record */
#define MTS_PEER_MIN_TRIES 3   /* attempts per blob, at least */

/* One image a node holds, as its i/<node> record lists it. */
struct mts_held {
	char name[MTS_PEER_NAME_MAX + 1];
	char manifest[MTS_DIGEST_LEN + 1];
	char id[MTS_DIGEST_LEN + 1];
	uint64_t size;
	uint64_t created_ms;
};

/* A node's record: node id (32 hex digits), whether gossipd sees it
 * alive, and what it holds. */
struct mts_holder {
	char node[33];
	int alive;
	const struct mts_held *held;
	size_t nheld;
};

/* A peer to ask, and the manifest digest it holds under the name. */
struct mts_peer_cand {
	char node[33];
};

/* Where to look for an image, in order. */
enum mts_img_source {
	MTS_SRC_REGISTRY,
	MTS_SRC_PEERS,
};

/* What was asked: auto (a task needs the image: the registry when the
 * reference names one, then the peers), pull (the registry, then the
 * peers), peers only, registry only. */
enum mts_img_mode {
	MTS_MODE_AUTO,
	MTS_MODE_PULL,
	MTS_MODE_PEERS,
	MTS_MODE_REGISTRY,
};

/* 1 when the reference's first component names a registry host (has a
 * '.' or ':', or is "localhost"), as Docker decides it. */
int mts_ref_has_registry(const char *ref);

/* The sources to try for ref in mode, in order, into out[2]; returns how
 * many. */
size_t mts_img_sources(const char *ref, enum mts_img_mode mode,
    enum mts_img_source out[2]);

/* Whether a stored name answers a wanted one: equal, or want has no tag
 * and no digest and have is want:latest. */
int mts_img_name_match(const char *want, const char *have);

/*
 * The peers to fetch name from: among the alive holders other than self,
 * the ones whose image under that name is the newest (by created_ms, then
 * by the larger manifest digest, so every node picks the same), rotated
 * by seed so that many fetching nodes spread over the holders. Fills
 * cands (room for max), the chosen entry into *chosen, and returns how
 * many candidates; 0 when no alive peer holds it.
 */
size_t mts_peer_pick(const struct mts_holder *holders, size_t n,
    const char *self, const char *name, uint64_t seed,
    struct mts_peer_cand *cands, size_t max, struct mts_held *chosen);

/* Attempts one blob may take with ncand candidates. */
unsigned mts_peer_tries(size_t ncand);

/* A byte rate: requests for more bytes wait until the budget allows them.
 * rate 0 means unlimited. A burst of one chunk is allowed. */
struct mts_pace {
	int64_t rate; /* bytes per second, 0: unlimited */
	int64_t budget;
	mts_time_t at;
};
void mts_pace_init(struct mts_pace *, int64_t rate, mts_time_t now);
/* How long (ms) to wait at now before asking for bytes more. */
mts_time_t mts_pace_wait(const struct mts_pace *, int64_t bytes,
    mts_time_t now);
/* Bytes were asked for at now (negative: given back). */
void mts_pace_took(struct mts_pace *, int64_t bytes, mts_time_t now);

#endif
