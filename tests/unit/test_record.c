/* test_record.c: record encoding, decoding, rh and CRDT merge laws. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "hash.h"
#include "mtserr.h"
#include "prop.h"
#include "record.h"
#include "xmalloc.h"

#define HDR_LEN 26

/* A random record whose value lives in store (at least 64 bytes); small
 * ranges for hlc, origin and value so that ties happen often. */
static void
random_record(struct prop_rng *rng, struct mts_record *r, uint8_t *store)
{
	memset(r, 0, sizeof(*r));
	r->hlc = 1000 + prop_below(rng, 3);
	memset(r->origin, 0, MTS_NODE_ID_LEN);
	r->origin[15] = (uint8_t)prop_below(rng, 3);
	r->tombstone = prop_below(rng, 4) == 0;
	if (!r->tombstone) {
		r->vlen = (size_t)prop_below(rng, 4);
		memset(store, 'a' + (int)prop_below(rng, 2), r->vlen);
		r->value = store;
	}
}

static bool
same_record(const struct mts_record *a, const struct mts_record *b)
{
	return a->hlc == b->hlc &&
	    memcmp(a->origin, b->origin, MTS_NODE_ID_LEN) == 0 &&
	    a->tombstone == b->tombstone && a->vlen == b->vlen &&
	    (a->vlen == 0 || memcmp(a->value, b->value, a->vlen) == 0);
}

/* The merge rule: the winner of the two. */
static const struct mts_record *
merge(const struct mts_record *a, const struct mts_record *b)
{
	return mts_record_cmp(a, b) >= 0 ? a : b;
}

static void
test_encoding_exact(void **state)
{
	struct mts_record r = { 0 }, d;
	struct mts_buf b;
	uint8_t want[HDR_LEN + 2], h[MTS_HASH_LEN], rh[MTS_HASH_LEN];
	size_t i;

	r.hlc = 0x0102030405060708ull;
	memset(r.origin, 0xaa, MTS_NODE_ID_LEN);
	r.value = (const uint8_t *)"hi";
	r.vlen = 2;
	want[0] = 1;
	for (i = 0; i < 8; i++)
		want[1 + i] = (uint8_t)(i + 1);
	memset(want + 9, 0xaa, 16);
	want[25] = 0;
	want[26] = 'h';
	want[27] = 'i';
	mts_buf_init(&b);
	mts_record_encode(&r, &b);
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.data, want, sizeof(want));
	mts_blake2b256(h, want, sizeof(want));
	mts_record_hash(&r, rh);
	assert_memory_equal(rh, h, MTS_HASH_LEN);
	assert_int_equal(mts_record_decode(b.data, b.len, &d), 0);
	assert_true(same_record(&r, &d));
	assert_ptr_equal(d.value, b.data + HDR_LEN);
	/* a tombstone: flag bit 0, no value */
	mts_buf_reset(&b);
	r.tombstone = true;
	r.vlen = 0;
	r.value = NULL;
	mts_record_encode(&r, &b);
	assert_int_equal(b.len, HDR_LEN);
	assert_int_equal(b.data[25], 1);
	assert_int_equal(mts_record_decode(b.data, b.len, &d), 0);
	assert_true(d.tombstone);
	assert_int_equal(d.vlen, 0);
	mts_buf_free(&b);
}

static void
test_decode_rejects(void **state)
{
	struct mts_record r = { 0 }, d;
	struct mts_buf b;
	uint8_t *big;
	size_t cut;

	r.hlc = 42;
	r.value = (const uint8_t *)"value";
	r.vlen = 5;
	mts_buf_init(&b);
	mts_record_encode(&r, &b);
	for (cut = 0; cut < HDR_LEN; cut++)
		assert_int_equal(mts_record_decode(b.data, cut, &d),
		    -MTS_ERR_INVAL);
	assert_int_equal(mts_record_decode(NULL, 0, &d), -MTS_ERR_INVAL);
	b.data[0] = 0;
	assert_int_equal(mts_record_decode(b.data, b.len, &d), -MTS_ERR_INVAL);
	b.data[0] = 2;
	assert_int_equal(mts_record_decode(b.data, b.len, &d), -MTS_ERR_INVAL);
	b.data[0] = 1;
	b.data[25] = 0x02;
	assert_int_equal(mts_record_decode(b.data, b.len, &d), -MTS_ERR_INVAL);
	b.data[25] = 0x80;
	assert_int_equal(mts_record_decode(b.data, b.len, &d), -MTS_ERR_INVAL);
	/* a tombstone that carries a value */
	b.data[25] = 0x01;
	assert_int_equal(mts_record_decode(b.data, b.len, &d), -MTS_ERR_INVAL);
	assert_int_equal(mts_record_decode(b.data, HDR_LEN, &d), 0);
	mts_buf_free(&b);
	/* the value limit: exactly 1 MiB is fine, one byte more is not */
	big = xcalloc(1, HDR_LEN + MTS_RECORD_MAX_VALUE + 1);
	big[0] = 1;
	assert_int_equal(mts_record_decode(big, HDR_LEN + MTS_RECORD_MAX_VALUE,
	                     &d),
	    0);
	assert_int_equal(d.vlen, MTS_RECORD_MAX_VALUE);
	assert_int_equal(mts_record_decode(big,
	                     HDR_LEN + MTS_RECORD_MAX_VALUE + 1, &d),
	    -MTS_ERR_INVAL);
	free(big);
}

/* Random bytes either fail to decode or are exactly a canonical encoding. */
static void
test_decode_garbage(void **state)
{
	struct prop_rng rng = { prop_seed("record garbage") };
	struct mts_record d;
	struct mts_buf b;
	uint8_t buf[64];
	size_t i, len, ok = 0;

	mts_buf_init(&b);
	for (i = 0; i < 50000; i++) {
		len = (size_t)prop_below(&rng, sizeof(buf));
		prop_bytes(&rng, buf, len);
		if (len > 0 && prop_below(&rng, 2))
			buf[0] = 1;
		if (len > 25 && prop_below(&rng, 2))
			buf[25] &= 1;
		if (mts_record_decode(buf, len, &d) != 0)
			continue;
		ok++;
		mts_buf_reset(&b);
		mts_record_encode(&d, &b);
		assert_int_equal(b.len, len);
		assert_memory_equal(b.data, buf, len);
	}
	assert_true(ok > 0);
	mts_buf_free(&b);
}

static void
test_roundtrip_random(void **state)
{
	struct prop_rng rng = { prop_seed("record roundtrip") };
	struct mts_record r, d;
	struct mts_buf b;
	uint8_t value[300], h1[MTS_HASH_LEN], h2[MTS_HASH_LEN];
	size_t i;

	mts_buf_init(&b);
	for (i = 0; i < 5000; i++) {
		memset(&r, 0, sizeof(r));
		r.hlc = prop_next(&rng);
		prop_bytes(&rng, r.origin, MTS_NODE_ID_LEN);
		r.tombstone = prop_below(&rng, 3) == 0;
		if (!r.tombstone) {
			r.vlen = (size_t)prop_below(&rng, sizeof(value));
			prop_bytes(&rng, value, r.vlen);
			r.value = value;
		}
		mts_buf_reset(&b);
		mts_record_encode(&r, &b);
		assert_int_equal(b.len, HDR_LEN + r.vlen);
		assert_int_equal(mts_record_decode(b.data, b.len, &d), 0);
		assert_true(same_record(&r, &d));
		mts_record_hash(&r, h1);
		mts_blake2b256(h2, b.data, b.len);
		assert_memory_equal(h1, h2, MTS_HASH_LEN);
		assert_int_equal(mts_record_cmp(&r, &d), 0);
	}
	mts_buf_free(&b);
}

static void
test_cmp_order(void **state)
{
	struct mts_record a = { 0 }, b = { 0 };
	uint8_t ha[MTS_HASH_LEN], hb[MTS_HASH_LEN];

	a.hlc = 5;
	b.hlc = 4;
	b.origin[0] = 0xff;
	assert_true(mts_record_cmp(&a, &b) > 0);
	assert_true(mts_record_cmp(&b, &a) < 0);
	b.hlc = 5;
	assert_true(mts_record_cmp(&a, &b) < 0);
	/* equal (hlc, origin): the larger rh wins */
	memcpy(b.origin, a.origin, MTS_NODE_ID_LEN);
	b.tombstone = true;
	mts_record_hash(&a, ha);
	mts_record_hash(&b, hb);
	assert_true(
	    (mts_record_cmp(&a, &b) > 0) == (memcmp(ha, hb, MTS_HASH_LEN) > 0));
	assert_int_not_equal(mts_record_cmp(&a, &b), 0);
	assert_int_equal(mts_record_cmp(&a, &a), 0);
}

static void
test_crdt_laws(void **state)
{
	struct prop_rng rng = { prop_seed("crdt laws") };
	struct mts_record a, b, c;
	uint8_t va[64], vb[64], vc[64];
	const struct mts_record *l, *r;
	size_t i, ties = 0;
	int ab, ba;

	for (i = 0; i < 20000; i++) {
		random_record(&rng, &a, va);
		random_record(&rng, &b, vb);
		random_record(&rng, &c, vc);
		ab = mts_record_cmp(&a, &b);
		ba = mts_record_cmp(&b, &a);
		/* antisymmetric, and 0 exactly for identical records */
		assert_int_equal(ab, -ba);
		assert_true((ab == 0) == same_record(&a, &b));
		if (a.hlc == b.hlc && memcmp(a.origin, b.origin, 16) == 0 &&
		    !same_record(&a, &b))
			ties++;
		/* idempotent */
		assert_true(same_record(merge(&a, &a), &a));
		/* commutative */
		assert_true(same_record(merge(&a, &b), merge(&b, &a)));
		/* associative */
		l = merge(merge(&a, &b), &c);
		r = merge(&a, merge(&b, &c));
		assert_true(same_record(l, r));
		/* the winner is one of the inputs and beats both */
		assert_true(mts_record_cmp(l, &a) >= 0);
		assert_true(mts_record_cmp(l, &b) >= 0);
		assert_true(mts_record_cmp(l, &c) >= 0);
	}
	/* the generator must really exercise the rh tie-break */
	assert_true(ties > 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encoding_exact),
		cmocka_unit_test(test_decode_rejects),
		cmocka_unit_test(test_decode_garbage),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_cmp_order),
		cmocka_unit_test(test_crdt_laws),
	};

	if (mts_crypto_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
