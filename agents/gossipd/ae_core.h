/* ae_core.h: one anti-entropy walk against a peer — compare roots, descend only into pages unknown locally, collect the keys whose record hash differs. Pure: the local replica is reached through the callbacks given. */
#ifndef MTS_AE_CORE_H
#define MTS_AE_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

/* What the walk asks of the local replica. */
struct mts_ae_local {
	/* 1 if a page with this hash exists locally, 0 if not. NULL: the
	 * walk hands out every page hash and the caller skips those it
	 * holds (when it asks its replica asynchronously). */
	int (*has_page)(void *ctx, const uint8_t h[MTS_HASH_LEN]);
	/* For each of n keys: found[i] = 1 and rh[i] filled if present. */
	void (*rh)(void *ctx, const uint8_t *const *keys, const size_t *klens,
	    size_t n, uint8_t (*rh)[MTS_HASH_LEN], int *found);
	void *ctx;
};

/* A key to pull; key is owned by the walk until taken. */
struct mts_ae_key {
	uint8_t *key;
	size_t klen;
};

struct mts_ae;

struct mts_ae *mts_ae_new(const struct mts_ae_local *);
void mts_ae_free(struct mts_ae *);

/* Starts a walk: 0 when the roots are equal (nothing to do), 1 when pages
 * must be fetched. */
int mts_ae_start(struct mts_ae *, const uint8_t local_root[MTS_HASH_LEN],
    const uint8_t remote_root[MTS_HASH_LEN]);
/* Moves up to max page hashes to request into out; pages the local replica
 * already holds are skipped (their subtrees are equal) when has_page is
 * given. */
size_t mts_ae_next_pages(struct mts_ae *, uint8_t (*out)[MTS_HASH_LEN],
    size_t max);
/* A page the peer sent for hash h. Checks its hash and encoding, queues
 * its unknown children and the keys whose rh differs. 0 or -MTS_ERR_INVAL
 * (wrong hash or malformed page: the walk should be abandoned). */
int mts_ae_on_page(struct mts_ae *, const uint8_t h[MTS_HASH_LEN],
    const uint8_t *page, size_t len);
/* Moves up to max keys (or max_bytes of keys) to pull into out; the caller
 * frees each key. */
size_t mts_ae_next_keys(struct mts_ae *, struct mts_ae_key *out, size_t max,
    size_t max_bytes);
/* 1 when no page or key is waiting. */
int mts_ae_idle(const struct mts_ae *);
/* Pages received so far in this walk. */
uint64_t mts_ae_pages_seen(const struct mts_ae *);

#endif
