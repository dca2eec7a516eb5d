/* test_ae.c: unit tests of the anti-entropy walk (two real MSTs converge, only unknown pages fetched, bad pages refused) and of the delta-push dedupe set, fanout and coverage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/gossipd/ae_core.h"
#include "agents/gossipd/delta_core.h"
#include "agents/statestore/mst_core.h"
#include "mtserr.h"

static int
has_page(void *ctx, const uint8_t h[MTS_HASH_LEN])
{
	const uint8_t *enc;
	size_t len;

	return mts_mst_page(ctx, h, &enc, &len) == 0;
}

static void
rh_of(void *ctx, const uint8_t *const *keys, const size_t *klens, size_t n,
    uint8_t (*rh)[MTS_HASH_LEN], int *found)
{
	size_t i;

	for (i = 0; i < n; i++)
		found[i] = mts_mst_get(ctx, keys[i], klens[i], rh[i]) == 0;
}

static void
fill(struct mts_mst *t, int from, int to, uint8_t salt)
{
	char key[32];
	uint8_t rh[MTS_HASH_LEN];
	int i, n;

	for (i = from; i < to; i++) {
		n = snprintf(key, sizeof(key), "k/%06d", i);
		memset(rh, salt, sizeof(rh));
		rh[0] = (uint8_t)i;
		mts_mst_put(t, (const uint8_t *)key, (size_t)n, rh);
	}
}

/* Walks local (a) against remote (b) and copies what differs; returns the
 * number of pages fetched. */
static size_t
sync_from(struct mts_mst *a, struct mts_mst *b, size_t *pulled)
{
	struct mts_ae_local loc = { has_page, rh_of, a };
	struct mts_ae *ae = mts_ae_new(&loc);
	uint8_t ra[32], rb[32], hs[8][32], rh[32];
	struct mts_ae_key keys[16];
	const uint8_t *enc;
	size_t n, i, len, fetched = 0;

	*pulled = 0;
	mts_mst_root(a, ra);
	mts_mst_root(b, rb);
	if (mts_ae_start(ae, ra, rb) == 0) {
		mts_ae_free(ae);
		return 0;
	}
	while (!mts_ae_idle(ae)) {
		n = mts_ae_next_pages(ae, hs, 8);
		for (i = 0; i < n; i++) {
			assert_int_equal(mts_mst_page(b, hs[i], &enc, &len), 0);
			/* on_page reads enc before we touch b again */
			assert_int_equal(mts_ae_on_page(ae, hs[i], enc, len),
			    0);
			fetched++;
		}
		while ((n = mts_ae_next_keys(ae, keys, 16, 1 << 20)) > 0) {
			for (i = 0; i < n; i++) {
				assert_int_equal(mts_mst_get(b, keys[i].key,
				                     keys[i].klen, rh),
				    0);
				mts_mst_put(a, keys[i].key, keys[i].klen, rh);
				free(keys[i].key);
				(*pulled)++;
			}
		}
	}
	mts_ae_free(ae);
	return fetched;
}

static void
test_walk_converges(void **state)
{
	struct mts_mst *a = mts_mst_new(), *b = mts_mst_new();
	uint8_t ra[32], rb[32];
	size_t pulled, fetched, total;

	fill(a, 0, 3000, 1);
	fill(b, 0, 3000, 1);
	fill(b, 3000, 3050, 1); /* b has 50 more */
	fill(b, 10, 12, 9);     /* and 2 newer versions */
	fetched = sync_from(a, b, &pulled);
	mts_mst_root(a, ra);
	mts_mst_root(b, rb);
	assert_memory_equal(ra, rb, 32);
	assert_int_equal(pulled, 52);
	total = mts_mst_pages(b);
	/* only the changed paths were fetched, not the whole tree */
	assert_true(fetched > 0 && fetched < total / 2);
	/* a second walk has nothing to do */
	assert_int_equal(sync_from(a, b, &pulled), 0);
	mts_mst_free(a);
	mts_mst_free(b);
}

static void
test_walk_from_empty(void **state)
{
	struct mts_mst *a = mts_mst_new(), *b = mts_mst_new();
	uint8_t ra[32], rb[32];
	size_t pulled;

	fill(b, 0, 500, 3);
	sync_from(a, b, &pulled);
	assert_int_equal(pulled, 500);
	mts_mst_root(a, ra);
	mts_mst_root(b, rb);
	assert_memory_equal(ra, rb, 32);
	mts_mst_free(a);
	mts_mst_free(b);
}

static void
test_bad_page_refused(void **state)
{
	struct mts_mst *a = mts_mst_new(), *b = mts_mst_new();
	struct mts_ae_local loc = { has_page, rh_of, a };
	struct mts_ae *ae = mts_ae_new(&loc);
	uint8_t ra[32], rb[32], hs[1][32], *copy;
	const uint8_t *enc;
	size_t len;

	fill(b, 0, 20, 1);
	mts_mst_root(a, ra);
	mts_mst_root(b, rb);
	assert_int_equal(mts_ae_start(ae, ra, rb), 1);
	assert_int_equal(mts_ae_next_pages(ae, hs, 1), 1);
	assert_int_equal(mts_mst_page(b, hs[0], &enc, &len), 0);
	copy = malloc(len);
	memcpy(copy, enc, len);
	copy[len / 2] ^= 1; /* no longer matches its hash */
	assert_int_equal(mts_ae_on_page(ae, hs[0], copy, len), -MTS_ERR_INVAL);
	assert_int_equal(mts_ae_on_page(ae, hs[0], copy, 3), -MTS_ERR_INVAL);
	free(copy);
	mts_ae_free(ae);
	mts_mst_free(a);
	mts_mst_free(b);
}

/* Without has_page the walk hands out every page hash unchecked (gossipd
 * filters them with asynchronous lookups): the root the local side also
 * holds comes out, and nothing is skipped. */
static void
test_unchecked_pages(void **state)
{
	struct mts_mst *a = mts_mst_new(), *b = mts_mst_new();
	struct mts_ae_local loc = { NULL, rh_of, a };
	struct mts_ae *ae = mts_ae_new(&loc);
	struct mts_ae_local checked = { has_page, rh_of, a };
	struct mts_ae *ae2 = mts_ae_new(&checked);
	uint8_t ra[32], rb[32], hs[4][32];

	fill(a, 0, 50, 1);
	fill(b, 0, 50, 1);
	fill(b, 50, 51, 2); /* b differs from a by one key */
	mts_mst_root(a, ra);
	mts_mst_root(b, rb);
	/* the walk starts at b's root, which a does not hold */
	assert_int_equal(mts_ae_start(ae, ra, rb), 1);
	assert_int_equal(mts_ae_next_pages(ae, hs, 4), 1);
	assert_memory_equal(hs[0], rb, 32);
	/* asked for a's own root, the checked walk skips it, the unchecked
	 * one hands it out */
	assert_int_equal(mts_ae_start(ae2, rb, ra), 1);
	assert_int_equal(mts_ae_next_pages(ae2, hs, 4), 0);
	mts_ae_free(ae);
	ae = mts_ae_new(&loc);
	assert_int_equal(mts_ae_start(ae, rb, ra), 1);
	assert_int_equal(mts_ae_next_pages(ae, hs, 4), 1);
	assert_memory_equal(hs[0], ra, 32);
	mts_ae_free(ae);
	mts_ae_free(ae2);
	mts_mst_free(a);
	mts_mst_free(b);
}

/* The set grows with what it holds (mts-sim: 1,000 nodes' sets): every
 * answer, through each growth and after the ring wraps, is the one a
 * plain FIFO of the last cap distinct fingerprints gives. */
static void
test_seen_grows_as_fifo(void **state)
{
	enum { CAP = 700, ADDS = 6000, RANGE = 1500 };
	static uint64_t fifo[CAP];
	struct mts_seen *s = mts_seen_new(CAP);
	uint64_t x = 12345, f;
	size_t n = 0, head = 0, i;
	int want, k;

	(void)state;
	for (k = 0; k < ADDS; k++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		f = 1 + (x >> 33) % RANGE;
		for (i = 0, want = 1; i < n; i++)
			if (fifo[i] == f)
				want = 0;
		if (want) {
			fifo[head] = f; /* the oldest is replaced */
			head = (head + 1) % CAP;
			if (n < CAP)
				n++;
		}
		assert_int_equal(mts_seen_add_fp(s, f), want);
		assert_int_equal(mts_seen_count(s), n);
	}
	mts_seen_free(s);
}

static void
test_seen_dedupe_and_evict(void **state)
{
	struct mts_seen *s = mts_seen_new(100);
	uint8_t origin[16] = { 1 };
	char key[16];
	int i, n;

	assert_int_equal(mts_seen_add(s, (const uint8_t *)"a", 1, 5, origin),
	    1);
	assert_int_equal(mts_seen_add(s, (const uint8_t *)"a", 1, 5, origin),
	    0);
	assert_int_equal(mts_seen_add(s, (const uint8_t *)"a", 1, 6, origin),
	    1);
	origin[0] = 2;
	assert_int_equal(mts_seen_add(s, (const uint8_t *)"a", 1, 6, origin),
	    1);
	for (i = 0; i < 1000; i++) {
		n = snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(mts_seen_add(s, (const uint8_t *)key,
		                     (size_t)n, 1, origin),
		    1);
	}
	assert_int_equal(mts_seen_count(s), 100);
	/* the newest are still remembered, the oldest were evicted */
	assert_int_equal(mts_seen_add(s, (const uint8_t *)"k999", 4, 1, origin),
	    0);
	assert_int_equal(mts_seen_add(s, (const uint8_t *)"k0", 2, 1, origin),
	    1);
	mts_seen_free(s);
}

static void
test_delta_targets(void **state)
{
	struct mts_delta_sent sent = { .n = 0 };
	uint8_t self[16] = { 9 }, cand[5][16], out[16][16];
	int i;

	memset(cand, 0, sizeof(cand));
	for (i = 0; i < 5; i++)
		cand[i][0] = (uint8_t)(i + 1);
	mts_delta_sent_add(&sent, cand[0]); /* already has the records */
	assert_int_equal(mts_delta_targets(&sent, self,
	                     (const uint8_t(*)[16])cand, 5, 3, out),
	    3);
	assert_int_equal(out[0][0], 2);
	assert_int_equal(out[2][0], 4);
	/* the set grew by self and the three hops: the next hop skips them */
	assert_int_equal(sent.n, 5);
	assert_true(mts_delta_sent_has(&sent, self));
	assert_int_equal(mts_delta_targets(&sent, self,
	                     (const uint8_t(*)[16])cand, 5, 3, out),
	    1);
	assert_int_equal(out[0][0], 5);
	assert_int_equal(mts_delta_targets(&sent, self,
	                     (const uint8_t(*)[16])cand, 5, 3, out),
	    0);
}

/* --- push coverage: the cores' hops over a model of 1,000 members ------ */

static uint64_t
xs(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return *r;
}

#define COV_N 1000

/* One write from origin: every member that gets it first forwards it once
 * (mts_delta_targets on distinct random candidates, mts_delta_ncand of
 * them), carrying the ids mts_delta_wire_first leaves on the wire.
 * Returns how many members it reached; *maxwire the most ids carried. */
static int
cover(int origin, int cfg, uint64_t *rng, size_t *maxwire)
{
	static uint8_t id[COV_N][16];
	static struct mts_delta_sent q[COV_N]; /* what each got along */
	static int from[COV_N], queue[COV_N];
	uint8_t cand[64][16], out[16][16];
	char got[COV_N] = { 0 };
	int head = 0, tail = 0, reached = 1, fanout, x, t;
	size_t i, c, k, nc, first;

	fanout = mts_delta_fanout(cfg, COV_N);
	for (x = 0; x < COV_N; x++) {
		memset(id[x], 0, 16);
		memcpy(id[x], &x, sizeof(x));
		id[x][15] = 1; /* never all zero */
	}
	got[origin] = 1;
	q[origin].n = 0;
	from[origin] = -1;
	queue[tail++] = origin;
	while (head < tail) {
		struct mts_delta_sent sent = { .n = 0 };

		x = queue[head++];
		if (from[x] >= 0)
			mts_delta_sent_add(&sent, id[from[x]]);
		for (i = 0; i < q[x].n; i++)
			mts_delta_sent_add(&sent, q[x].id[i]);
		nc = mts_delta_ncand(&sent, fanout);
		for (c = 0; c < nc;) { /* distinct members other than x */
			t = (int)(xs(rng) % COV_N);
			for (i = 0; i < c && memcmp(cand[i], id[t], 16); i++)
				;
			if (t != x && i == c)
				memcpy(cand[c++], id[t], 16);
		}
		k = mts_delta_targets(&sent, id[x], (const uint8_t(*)[16])cand,
		    nc, fanout, out);
		assert_int_equal(k, (size_t)fanout);
		first = mts_delta_wire_first(&sent);
		if (sent.n - first > *maxwire)
			*maxwire = sent.n - first;
		for (i = 0; i < k; i++) {
			memcpy(&t, out[i], sizeof(t));
			if (got[t])
				continue; /* seen: dropped, not forwarded */
			got[t] = 1;
			reached++;
			from[t] = x;
			q[t].n = 0;
			for (c = first; c < sent.n; c++)
				mts_delta_sent_add(&q[t], sent.id[c]);
			queue[tail++] = t;
		}
	}
	return reached;
}

/* At 1,000 members the default fanout (ceil(ln N) - 1 = 6) leaves about
 * 2.5 members a write to anti-entropy; the old fanout of 3 left 55 (94.5%
 * of the members reached: mts-sim's p99 to all was 3.9 s, the walks'
 * second rounds). Each copy carries at most 12 ids (64 before). */
static void
test_push_coverage(void **state)
{
	uint64_t rng = 88172645463325252ull;
	size_t maxwire = 0;
	double sum = 0, old = 0;
	int w, W = 100;

	assert_int_equal(mts_delta_fanout(0, 1000), 6);
	assert_int_equal(mts_delta_fanout(0, 100), 4);
	assert_int_equal(mts_delta_fanout(0, 5), 3);
	assert_int_equal(mts_delta_fanout(0, 1000000000), 16);
	assert_int_equal(mts_delta_fanout(5, 1000), 5);
	assert_int_equal(mts_delta_fanout(40, 1000), 16);
	for (w = 0; w < W; w++)
		sum += cover((int)(xs(&rng) % COV_N), 0, &rng, &maxwire);
	sum /= W;
	print_message("default fanout: %.1f of %d members a write\n", sum,
	    COV_N);
	assert_true(sum >= COV_N - 5);
	assert_true(maxwire <= MTS_DELTA_WIRE_SENT);
	for (w = 0; w < W; w++)
		old += cover((int)(xs(&rng) % COV_N), 3, &rng, &maxwire);
	old /= W;
	print_message("fanout 3: %.1f of %d members a write\n", old, COV_N);
	assert_true(old < COV_N - 30);
}

/* A small cluster's push still ends: the sent-to ids it carries name
 * every member, and the last hop finds no one left. */
static void
test_push_small_cluster_ends(void **state)
{
	struct mts_delta_sent sent = { .n = 0 };
	uint8_t self[16] = { 9 }, cand[4][16], out[16][16];
	int i;

	memset(cand, 0, sizeof(cand));
	for (i = 0; i < 4; i++)
		cand[i][0] = (uint8_t)(i + 1);
	assert_int_equal(mts_delta_ncand(&sent, 3), 4);
	assert_int_equal(mts_delta_targets(&sent, self,
	                     (const uint8_t(*)[16])cand, 4, 3, out),
	    3);
	assert_int_equal(mts_delta_wire_first(&sent), 0); /* all 4 carried */
	/* the receiver adds the sender and the ids carried: one member left */
	assert_int_equal(mts_delta_targets(&sent, out[0],
	                     (const uint8_t(*)[16])cand, 4, 3, out),
	    1);
	assert_int_equal(out[0][0], 4);
	for (i = 0; i < 20; i++)
		mts_delta_sent_add(&sent, (uint8_t[16]){ (uint8_t)(100 + i) });
	assert_int_equal(mts_delta_wire_first(&sent),
	    sent.n - MTS_DELTA_WIRE_SENT);
	assert_int_equal(mts_delta_ncand(&sent, 5), sent.n + 1 + 5);
	for (i = 0; i < 50; i++)
		mts_delta_sent_add(&sent, (uint8_t[16]){ (uint8_t)(150 + i) });
	assert_int_equal(mts_delta_ncand(&sent, 16), 64);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_converges),
		cmocka_unit_test(test_walk_from_empty),
		cmocka_unit_test(test_bad_page_refused),
		cmocka_unit_test(test_unchecked_pages),
		cmocka_unit_test(test_seen_dedupe_and_evict),
		cmocka_unit_test(test_seen_grows_as_fifo),
		cmocka_unit_test(test_delta_targets),
		cmocka_unit_test(test_push_coverage),
		cmocka_unit_test(test_push_small_cluster_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
