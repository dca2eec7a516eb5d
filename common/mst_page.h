/* mst_page.h: the MST page contract shared by the statestore and gossipd — key levels, key order and the defensive decoder of a peer's page. */
#ifndef MTS_MST_PAGE_H
#define MTS_MST_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

/*
 * Canonical page encoding (DESIGN.md section 5):
 *   u8 level | { child hash (32, zeros: none) | u16be klen | key | rh (32) }*
 *   | last child hash (32)
 * Keys are strictly increasing and every key's level is the page's level.
 */
#define MTS_MST_MAX_LEVEL (2 * MTS_HASH_LEN)
#define MTS_MST_KEY_LIMIT 0xffffu /* the longest key a page can encode */

/* Level of a key: leading zero nibbles of BLAKE2b-256(key). */
int mts_mst_level(const uint8_t *key, size_t klen);
/* The tree's key order: memcmp order, a proper prefix first. */
int mts_mst_key_cmp(const uint8_t *a, size_t alen, const uint8_t *b,
    size_t blen);

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
	const uint8_t *last_child;       /* or NULL */
};

/* Parses a canonical page encoding defensively: keys strictly increasing,
 * every key's level equal to the page level, no trailing bytes. 0 or
 * -MTS_ERR_INVAL. */
int mts_mst_page_decode(const uint8_t *buf, size_t len,
    struct mts_mst_page_view *out);
void mts_mst_page_view_free(struct mts_mst_page_view *);

#endif
