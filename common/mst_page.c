/* mst_page.c: the MST page contract — key levels, key order, and the strict decoder of pages from peers. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mst_page.h"
#include "mtserr.h"
#include "xmalloc.h"

static const uint8_t zero_hash[MTS_HASH_LEN];

int
mts_mst_level(const uint8_t *key, size_t klen)
{
	uint8_t h[MTS_HASH_LEN];
	int level = 0, i;

	mts_blake2b256(h, key, klen);
	for (i = 0; i < MTS_HASH_LEN; i++) {
		if (h[i] == 0) {
			level += 2;
			continue;
		}
		if (h[i] < 0x10)
			level++;
		break;
	}
	return level;
}

/* memcmp order, a proper prefix first. */
int
mts_mst_key_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* --- decoding pages from peers -------------------------------------------- */

static int
read_child(struct mts_rd *r, const uint8_t **child)
{
	const uint8_t *h;

	if (mts_rd_bytes(r, &h, MTS_HASH_LEN) < 0)
		return -MTS_ERR_INVAL;
	*child = memcmp(h, zero_hash, MTS_HASH_LEN) == 0 ? NULL : h;
	return 0;
}

static int
read_item(struct mts_rd *r, int level, struct mts_mst_item_view *it)
{
	uint16_t klen;

	if (read_child(r, &it->child) < 0 || mts_rd_u16be(r, &klen) < 0 ||
	    mts_rd_bytes(r, &it->key, klen) < 0 ||
	    mts_rd_bytes(r, &it->rh, MTS_HASH_LEN) < 0)
		return -MTS_ERR_INVAL;
	it->klen = klen;
	if (mts_mst_level(it->key, klen) != level)
		return -MTS_ERR_INVAL;
	return 0;
}

int
mts_mst_page_decode(const uint8_t *buf, size_t len,
    struct mts_mst_page_view *out)
{
	struct mts_mst_item_view it, *prev;
	struct mts_rd r;
	size_t cap = 0;
	uint8_t level;
	int rc = -MTS_ERR_INVAL;

	memset(out, 0, sizeof(*out));
	mts_rd_init(&r, buf, len);
	if (buf == NULL || mts_rd_u8(&r, &level) < 0 ||
	    level > MTS_MST_MAX_LEVEL)
		goto out;
	out->level = level;
	while (r.left > MTS_HASH_LEN) {
		if (read_item(&r, level, &it) < 0)
			goto out;
		prev = out->nitems ? &out->items[out->nitems - 1] : NULL;
		if (prev != NULL &&
		    mts_mst_key_cmp(prev->key, prev->klen, it.key, it.klen) >=
		        0)
			goto out;
		if (out->nitems == cap) {
			cap = cap ? cap * 2 : 8;
			out->items =
			    xreallocarray(out->items, cap, sizeof(*out->items));
		}
		out->items[out->nitems++] = it;
	}
	if (out->nitems == 0 || read_child(&r, &out->last_child) < 0 ||
	    r.left != 0)
		goto out;
	rc = 0;
out:
	if (rc < 0)
		mts_mst_page_view_free(out);
	return rc;
}

void
mts_mst_page_view_free(struct mts_mst_page_view *v)
{
	if (v == NULL)
		return;
	free(v->items);
	memset(v, 0, sizeof(*v));
}
