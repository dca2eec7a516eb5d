/* mst_core.h: the Merkle Search Tree index of (key, rh) items, exactly as DESIGN.md section 5 defines it. */
#ifndef MTS_MST_CORE_H
#define MTS_MST_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

struct mts_mst;

struct mts_mst *mts_mst_new(void);
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

/* Level of a key: leading zero nibbles of BLAKE2b-256(key). */
int mts_mst_level(const uint8_t *key, size_t klen);

/* A decoded page (from a peer): items point into the decoded buffer. */
struct mts_mst_item_view {
	const uint8_t *child; /* hash of the child before this item, or NULL */
	const uint8_t *key;
	size_t klen;
	const uint8_t *rh;
};

struct mts_mst_page_view {
	int level;
	size_t nitems;
	struct mts_mst_item_view *items; /* malloc'ed; mts_mst_page_view_free */
	const uint8_t *last_child;	 /* or NULL */
};

/* Parses a canonical page encoding defensively: keys strictly increasing,
 * every key's level equal to the page level, no trailing bytes. 0 or
 * -MTS_ERR_INVAL. */
int mts_mst_page_decode(const uint8_t *buf, size_t len,
    struct mts_mst_page_view *out);
void mts_mst_page_view_free(struct mts_mst_page_view *);

#endif
