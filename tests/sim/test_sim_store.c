/* test_sim_store.c: mts-sim's shared store — interned records and MST keys and page encodings shared between simulated nodes keep every node's view its own, match the statestore's own MST byte for byte, are freed when the last node lets go, and may be shared by two threads. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mtserr.h"
#include "tests/sim/sim.h"
#include "xmalloc.h"

#define NKEYS 300

static void
key_of(int i, char *buf, size_t len)
{
	snprintf(buf, len, "t/%040d/task-%d", i % 7, i);
}

static void
rh_of(int i, int version, uint8_t rh[MTS_HASH_LEN])
{
	char b[32];

	snprintf(b, sizeof(b), "%d.%d", i, version);
	mts_blake2b256(rh, b, strlen(b));
}

static void
put(struct mts_mst *t, int i, int version)
{
	char key[80];
	uint8_t rh[MTS_HASH_LEN];

	key_of(i, key, sizeof(key));
	rh_of(i, version, rh);
	assert_int_equal(mts_mst_put(t, (const uint8_t *)key, strlen(key), rh),
	    0);
}

/* Every page of t, from its root down, is served with the bytes ref
 * serves for it (ref: an MST of the statestore's own, malloc'ed keys
 * and encodings); returns the pages compared. */
static size_t
same_pages(struct mts_mst *t, struct mts_mst *ref,
    const uint8_t h[MTS_HASH_LEN])
{
	static const uint8_t zero[MTS_HASH_LEN];
	struct mts_mst_page_view v;
	const uint8_t *e1, *e2;
	size_t l1, l2, i, n = 1;
	uint8_t *copy;

	assert_int_equal(mts_mst_page(t, h, &e1, &l1), 0);
	assert_int_equal(mts_mst_page(ref, h, &e2, &l2), 0);
	assert_int_equal(l1, l2);
	assert_memory_equal(e1, e2, l1);
	copy = xmemdup(e1, l1); /* the next mts_mst_page may move it */
	assert_int_equal(mts_mst_page_decode(copy, l1, &v), 0);
	for (i = 0; i < v.nitems; i++)
		if (v.items[i].child &&
		    memcmp(v.items[i].child, zero, MTS_HASH_LEN) != 0)
			n += same_pages(t, ref, v.items[i].child);
	if (v.last_child && memcmp(v.last_child, zero, MTS_HASH_LEN) != 0)
		n += same_pages(t, ref, v.last_child);
	mts_mst_page_view_free(&v);
	free(copy);
	return n;
}

static void
assert_store_empty(void)
{
	struct sim_store_stats st;

	sim_store_stats(&st);
	assert_int_equal(st.recs, 0);
	assert_int_equal(st.rec_bytes, 0);
	assert_int_equal(st.keys, 0);
	assert_int_equal(st.key_bytes, 0);
	assert_int_equal(st.encs, 0);
	assert_int_equal(st.enc_bytes, 0);
}

/* Two nodes' trees share keys and pages; a write on one does not show
 * on the other, and each serves exactly the pages of a tree of its own. */
static void
test_mst_views_independent(void **state)
{
	struct mts_mst *a = sim_mst_new(), *b = sim_mst_new();
	struct mts_mst *ra = mts_mst_new(), *rb = mts_mst_new();
	uint8_t root_a[MTS_HASH_LEN], root_b[MTS_HASH_LEN],
	    root_r[MTS_HASH_LEN], rh[MTS_HASH_LEN], want[MTS_HASH_LEN];
	const uint8_t *ea, *eb;
	size_t la, lb, pages;
	struct sim_store_stats st;
	char key[80];
	int i;

	(void)state;
	for (i = 0; i < NKEYS; i++) {
		put(a, i, 0);
		put(b, i, 0);
		put(ra, i, 0);
		put(rb, i, 0);
	}
	mts_mst_root(a, root_a);
	mts_mst_root(b, root_b);
	mts_mst_root(ra, root_r);
	assert_memory_equal(root_a, root_r, MTS_HASH_LEN);
	assert_memory_equal(root_b, root_r, MTS_HASH_LEN);
	/* the same page is one encoding, the same key one copy */
	assert_int_equal(mts_mst_page(a, root_a, &ea, &la), 0);
	assert_int_equal(mts_mst_page(b, root_b, &eb, &lb), 0);
	assert_ptr_equal(ea, eb);
	pages = same_pages(a, ra, root_a);
	assert_int_equal(same_pages(b, rb, root_b), pages);
	sim_store_stats(&st);
	assert_int_equal(st.keys, NKEYS);
	assert_int_equal(st.encs, pages);

	/* node a writes: b's tree, record hashes and pages stay as they were */
	for (i = 0; i < NKEYS; i += 10) {
		put(a, i, 1);
		put(ra, i, 1);
	}
	put(a, NKEYS, 0);
	put(ra, NKEYS, 0);
	mts_mst_root(a, root_a);
	mts_mst_root(ra, root_r);
	assert_memory_equal(root_a, root_r, MTS_HASH_LEN);
	mts_mst_root(b, root_r);
	assert_memory_equal(root_r, root_b, MTS_HASH_LEN);
	assert_memory_not_equal(root_a, root_b, MTS_HASH_LEN);
	key_of(10, key, sizeof(key));
	assert_int_equal(mts_mst_get(b, (const uint8_t *)key, strlen(key), rh),
	    0);
	rh_of(10, 0, want);
	assert_memory_equal(rh, want, MTS_HASH_LEN);
	key_of(NKEYS, key, sizeof(key));
	assert_int_equal(mts_mst_get(b, (const uint8_t *)key, strlen(key), rh),
	    -MTS_ERR_NOTFOUND);
	same_pages(a, ra, root_a);
	assert_int_equal(same_pages(b, rb, root_b), pages);
	/* the old root stays servable on a (replaced pages are kept) */
	assert_int_equal(mts_mst_page(a, root_b, &ea, &la), 0);
	assert_int_equal(mts_mst_page(b, root_b, &eb, &lb), 0);
	assert_ptr_equal(ea, eb);

	/* and a deletes: b still holds the key */
	key_of(3, key, sizeof(key));
	assert_int_equal(mts_mst_del(a, (const uint8_t *)key, strlen(key)), 0);
	assert_int_equal(mts_mst_get(b, (const uint8_t *)key, strlen(key), rh),
	    0);
	mts_mst_free(a);
	assert_int_equal(same_pages(b, rb, root_b), pages);
	mts_mst_free(b);
	mts_mst_free(ra);
	mts_mst_free(rb);
	assert_store_empty();
}

/* A record held by many nodes is one irec; it goes when the last lets go. */
static void
test_records_refcounted(void **state)
{
	struct mts_record rec = { 0 }, rec2;
	struct irec *r[10], *other;
	uint8_t origin[MTS_NODE_ID_LEN] = { 7 };
	const uint8_t key[] = "s/web";
	struct sim_store_stats st;
	int i;

	(void)state;
	rec.value = (const uint8_t *)"3 1";
	rec.vlen = 3;
	rec.hlc = 42;
	memcpy(rec.origin, origin, sizeof(origin));
	for (i = 0; i < 10; i++)
		r[i] = sim_intern(key, sizeof(key) - 1, &rec);
	for (i = 1; i < 10; i++)
		assert_ptr_equal(r[i], r[0]);
	assert_int_equal(r[0]->refs, 10);
	assert_memory_equal(r[0]->rec.value, "3 1", 3);
	rec2 = rec;
	rec2.value = (const uint8_t *)"4 1";
	other = sim_intern(key, sizeof(key) - 1, &rec2);
	assert_ptr_not_equal(other, r[0]);
	/* one node taking the newer record leaves the others' as it was */
	sim_iunref(r[0]);
	assert_int_equal(r[1]->refs, 9);
	assert_memory_equal(r[1]->rec.value, "3 1", 3);
	sim_store_stats(&st);
	assert_int_equal(st.recs, 2);
	for (i = 1; i < 10; i++)
		sim_iunref(r[i]);
	sim_store_stats(&st);
	assert_int_equal(st.recs, 1);
	sim_iunref(other);
	assert_store_empty();
}

/* mts-sim's worker threads share the tables: two threads interning the
 * same records (each dropping its last reference to one while the other
 * takes it again) and building trees of the same keys end with the trees
 * of one thread alone, and everything freed. */
#define TKEYS 64
#define TROUNDS 2000

struct tshare {
	uint8_t root[MTS_HASH_LEN];
};

static void *
share_run(void *arg)
{
	struct tshare *t = arg;
	struct mts_mst *m = sim_mst_new();
	struct irec *hold[TKEYS] = { 0 }, *r;
	struct mts_record rec = { 0 };
	char key[80], val[16];
	int round, i;

	rec.origin[0] = 9;
	for (round = 0; round < TROUNDS; round++)
		for (i = 0; i < TKEYS; i++) {
			key_of(i, key, sizeof(key));
			snprintf(val, sizeof(val), "v%d", round % 3);
			rec.value = (const uint8_t *)val;
			rec.vlen = strlen(val);
			rec.hlc = (uint64_t)(round % 3) + 1;
			r = sim_intern((const uint8_t *)key, strlen(key), &rec);
			if (mts_mst_put(m, r->key, r->klen, r->rh) < 0)
				abort();
			sim_iunref(hold[i]);
			hold[i] = r;
		}
	mts_mst_root(m, t->root);
	for (i = 0; i < TKEYS; i++)
		sim_iunref(hold[i]);
	mts_mst_free(m);
	return NULL;
}

static void
test_threads_share(void **state)
{
	struct tshare one, two[2];
	pthread_t th[2];
	int i;

	(void)state;
	share_run(&one);
	assert_store_empty();
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, share_run,
		                     &two[i]),
		    0);
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_memory_equal(two[i].root, one.root, MTS_HASH_LEN);
	}
	assert_store_empty();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mst_views_independent),
		cmocka_unit_test(test_records_refcounted),
		cmocka_unit_test(test_threads_share),
	};

	if (mts_crypto_init() < 0)
		return 1;
	sim_intern_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
