/* fuzz_mst_page.c: libFuzzer target for MST page and record decoding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hash.h"
#include "mst_page.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A decoded page encodes back to exactly the input: nothing was accepted
 * that a canonical encoder would not have produced. */
static void
check_page(const uint8_t *data, size_t size)
{
	static const uint8_t zero[MTS_HASH_LEN];
	struct mts_mst_page_view v;
	struct mts_buf b;
	size_t i;

	if (mts_mst_page_decode(data, size, &v) != 0)
		return;
	mts_buf_init(&b);
	mts_buf_put_u8(&b, (uint8_t)v.level);
	for (i = 0; i < v.nitems; i++) {
		const struct mts_mst_item_view *it = &v.items[i];

		if (mts_mst_level(it->key, it->klen) != v.level)
			abort();
		mts_buf_put(&b, it->child ? it->child : zero, MTS_HASH_LEN);
		mts_buf_put_u16be(&b, (uint16_t)it->klen);
		mts_buf_put(&b, it->key, it->klen);
		mts_buf_put(&b, it->rh, MTS_HASH_LEN);
	}
	mts_buf_put(&b, v.last_child ? v.last_child : zero, MTS_HASH_LEN);
	if (b.len != size || memcmp(b.data, data, size) != 0)
		abort();
	mts_buf_free(&b);
	mts_mst_page_view_free(&v);
}

static void
check_record(const uint8_t *data, size_t size)
{
	struct mts_record r;
	struct mts_buf b;

	if (mts_record_decode(data, size, &r) != 0)
		return;
	mts_buf_init(&b);
	mts_record_encode(&r, &b);
	if (b.len != size || memcmp(b.data, data, size) != 0)
		abort();
	mts_buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;

	if (!ready) {
		if (mts_crypto_init() < 0)
			abort();
		ready = 1;
	}
	check_page(data, size);
	check_record(data, size);
	return 0;
}
