/* mst_core.h: the Merkle Search Tree index of (key, rh) items, exactly as DESIGN.md section 5 defines it. */
#ifndef MTS_MST_CORE_H
#define MTS_MST_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "mst_page.h"

struct mts_mst;

/*
 * Where a tree keeps its copies of keys and its page encodings (a page's
 * cached encoding and the replaced pages kept servable). mts_mst_new
 * mallocs and frees them; mts-sim shares them between its simulated
 * nodes, since equal keys, and pages of equal hash, are equal bytes.
 * The tree never writes into what it was given.
 */
struct mts_mst_store {
	void *ctx;
	/* A copy of key (klen bytes) the tree holds until drop_key. */
	uint8_t *(*keep_key)(void *ctx, const uint8_t *key, size_t klen);
	void (*drop_key)(void *ctx, uint8_t *key, size_t klen);
	/* The page hashed h, encoded in enc (malloc'ed, taken): what the
	 * tree holds until drop_enc, enc itself or equal bytes. */
	uint8_t *(*keep_enc)(void *ctx, const uint8_t h[MTS_HASH_LEN],
	    uint8_t *enc, size_t len);
	void (*drop_enc)(void *ctx, uint8_t *enc, size_t len);
};

struct mts_mst *mts_mst_new(void);
/* A tree keeping keys and encodings in st (copied; st->ctx must outlive
 * the tree). */
struct mts_mst *mts_mst_new_store(const struct mts_mst_store *st);
void mts_mst_free(struct mts_mst *);

/* Inserts key with record hash rh, or replaces its rh. Copies key. 0, or
 * -MTS_ERR_TOOBIG for a key longer than a page can encode (65535 bytes). */
int mts_mst_put(struct mts_mst *, const uint8_t *key, size_t klen,
    const uint8_t rh[MTS_HASH_LEN]);
/* Removes key; 0, or -MTS_ERR_NOTFOUND. */
int mts_mst_del(struct mts_mst *, const uint8_t *key, size_t klen);
/* The rh stored for key; 0 or -MTS_ERR_NOTFOUND. */
int mts_mst_get(const struct mts_mst *, const uint8_t *key, size_t klen,
    uint8_t rh[MTS_HASH_LEN]);

/* Root hash (32 zero bytes for the empty tree); recomputes what changed. */
void mts_mst_root(struct mts_mst *, uint8_t out[MTS_HASH_LEN]);
size_t mts_mst_count(const struct mts_mst *);
size_t mts_mst_pages(struct mts_mst *);

/* The canonical encoding of the page whose hash is h. *enc stays owned by
 * the tree and is valid until the next put/del. 0 or -MTS_ERR_NOTFOUND. */
int mts_mst_page(struct mts_mst *, const uint8_t h[MTS_HASH_LEN],
    const uint8_t **enc, size_t *len);

#endif
