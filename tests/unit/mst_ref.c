/* mst_ref.c: the MST by its definition, independent of mst_core.c. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mst_ref.h"
#include "xmalloc.h"

/* Leading zero hex digits of BLAKE2b-256(key), read off the hex string. */
static int
ref_level(const uint8_t *key, size_t klen)
{
	uint8_t h[MTS_HASH_LEN];
	char hex[2 * MTS_HASH_LEN + 1];
	int n = 0;

	mts_blake2b256(h, key, klen);
	mts_hex(hex, h, MTS_HASH_LEN);
	while (hex[n] == '0')
		n++;
	return n;
}

static int
ref_cmp(const void *a, const void *b)
{
	const struct mst_ref_item *x = a, *y = b;
	size_t m = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->key, y->key, m);

	if (c != 0)
		return c;
	return (x->klen > y->klen) - (x->klen < y->klen);
}

void
mst_ref_sort(struct mst_ref_item *items, size_t n)
{
	qsort(items, n, sizeof(*items), ref_cmp);
}

/* The page of items[lo, hi) with levels[] precomputed; writes its hash. */
static void
ref_page(const struct mst_ref_item *items, const int *levels, size_t lo,
    size_t hi, uint8_t out[MTS_HASH_LEN], size_t *pages)
{
	uint8_t child[MTS_HASH_LEN];
	struct mts_buf b;
	size_t i, start;
	int top = -1;

	memset(out, 0, MTS_HASH_LEN);
	for (i = lo; i < hi; i++)
		if (levels[i] > top)
			top = levels[i];
	if (top < 0)
		return;
	mts_buf_init(&b);
	mts_buf_put_u8(&b, (uint8_t)top);
	start = lo;
	for (i = lo; i < hi; i++) {
		if (levels[i] != top)
			continue;
		ref_page(items, levels, start, i, child, pages);
		mts_buf_put(&b, child, MTS_HASH_LEN);
		mts_buf_put_u16be(&b, (uint16_t)items[i].klen);
		mts_buf_put(&b, items[i].key, items[i].klen);
		mts_buf_put(&b, items[i].rh, MTS_HASH_LEN);
		start = i + 1;
	}
	ref_page(items, levels, start, hi, child, pages);
	mts_buf_put(&b, child, MTS_HASH_LEN);
	mts_blake2b256(out, b.data, b.len);
	mts_buf_free(&b);
	(*pages)++;
}

void
mst_ref_root(const struct mst_ref_item *items, size_t n,
    uint8_t root[MTS_HASH_LEN], size_t *pages)
{
	int *levels = xcalloc(n + 1, sizeof(*levels));
	size_t i;

	for (i = 0; i < n; i++)
		levels[i] = ref_level(items[i].key, items[i].klen);
	*pages = 0;
	ref_page(items, levels, 0, n, root, pages);
	free(levels);
}
