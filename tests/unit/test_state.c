/* test_state.c: the statestore's pure decisions — the write verdict (a table of puts, deletes and merges), merge with prune frontiers, CAS, key ownership, expiry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <stdlib.h>

#include "agents/statestore/state_core.h"
#include "hlc.h"
#include "mtserr.h"

static struct mts_record
rec(uint64_t hlc, uint8_t origin_byte, int tomb, const char *v)
{
	struct mts_record r;

	memset(&r, 0, sizeof(r));
	r.hlc = hlc;
	memset(r.origin, origin_byte, sizeof(r.origin));
	r.tombstone = tomb;
	r.value = (const uint8_t *)v;
	r.vlen = v ? strlen(v) : 0;
	return r;
}

static void
test_merge_wins(void **state)
{
	struct mts_record cur = rec(100, 1, 0, "a"),
	                  newer = rec(101, 0, 0, "b");
	struct mts_record older = rec(99, 9, 0, "c"), tie = rec(100, 2, 0, "d");

	assert_true(mts_state_merge_wins(NULL, NULL, &cur));
	assert_true(mts_state_merge_wins(&cur, NULL, &newer));
	assert_false(mts_state_merge_wins(&cur, NULL, &older));
	assert_true(
	    mts_state_merge_wins(&cur, NULL, &tie)); /* origin breaks tie */
	assert_false(mts_state_merge_wins(&tie, NULL, &cur));
	assert_false(mts_state_merge_wins(&cur, NULL, &cur)); /* idempotent */
}

static void
test_frontier_blocks_resurrection(void **state)
{
	struct mts_frontier pf = { .hlc = 100, .pruned_ms = 5 };
	struct mts_record same = rec(100, 0, 0, "x"),
	                  older = rec(50, 7, 0, "y");
	struct mts_record newer = rec(101, 0, 0, "z");
	uint8_t enc[MTS_FRONTIER_LEN];
	struct mts_frontier back;

	memset(pf.origin, 3, sizeof(pf.origin));
	memset(same.origin, 3, sizeof(same.origin));
	assert_false(mts_state_merge_wins(NULL, &pf, &same));
	assert_false(mts_state_merge_wins(NULL, &pf, &older));
	assert_true(mts_state_merge_wins(NULL, &pf, &newer));
	mts_frontier_encode(&pf, enc);
	assert_int_equal(mts_frontier_decode(enc, sizeof(enc), &back), 0);
	assert_memory_equal(&back, &pf, sizeof(pf));
	assert_int_equal(mts_frontier_decode(enc, sizeof(enc) - 1, &back),
	    -MTS_ERR_INVAL);
}

static void
test_cas(void **state)
{
	struct mts_record cur = rec(100, 4, 0, "a"),
	                  dead = rec(100, 4, 1, NULL);
	uint8_t o4[16], o5[16];

	memset(o4, 4, 16);
	memset(o5, 5, 16);
	assert_true(mts_state_cas_ok(NULL, 0, NULL, 0));
	assert_true(mts_state_cas_ok(&dead, 0, NULL, 0));
	assert_false(mts_state_cas_ok(&cur, 0, NULL, 0));
	assert_true(mts_state_cas_ok(&cur, 100, o4, 16));
	assert_false(mts_state_cas_ok(&cur, 100, o5, 16));
	assert_false(mts_state_cas_ok(&cur, 99, o4, 16));
	assert_false(mts_state_cas_ok(&cur, 100, o4, 15));
	assert_false(mts_state_cas_ok(NULL, 100, o4, 16));
}

static void
test_owner(void **state)
{
	const char *self = "0123456789abcdef0123456789abcdef";
	const char *own = "t/0123456789abcdef0123456789abcdef/task1";
	const char *other = "t/fedcba9876543210fedcba9876543210/task1";

	assert_int_equal(mts_state_owner_check(self, (const uint8_t *)own,
	                     strlen(own)),
	    0);
	assert_int_equal(mts_state_owner_check(self, (const uint8_t *)other,
	                     strlen(other)),
	    -MTS_ERR_DENIED);
	assert_int_equal(mts_state_owner_check(self,
	                     (const uint8_t
	                             *)"n/0123456789abcdef0123456789abcdef",
	                     34),
	    0);
	assert_int_equal(mts_state_owner_check(self, (const uint8_t *)"n/0123",
	                     6),
	    -MTS_ERR_DENIED);
	/* i/<node>: the images a node holds, written by its own shim */
	assert_int_equal(mts_state_owner_check(self,
	                     (const uint8_t
	                             *)"i/0123456789abcdef0123456789abcdef",
	                     34),
	    0);
	assert_int_equal(mts_state_owner_check(self,
	                     (const uint8_t
	                             *)"i/fedcba9876543210fedcba9876543210",
	                     34),
	    -MTS_ERR_DENIED);
	/* keys any admin may write */
	assert_int_equal(mts_state_owner_check(self, (const uint8_t *)"s/web",
	                     5),
	    0);
	assert_int_equal(mts_state_owner_check(self,
	                     (const uint8_t
	                             *)"m/fedcba9876543210fedcba9876543210",
	                     34),
	    0);
}

static void
test_limits_and_expiry(void **state)
{
	uint8_t big[MTS_KEY_MAX + 1];
	struct mts_record t = rec(mts_hlc_make(1000, 0), 0, 1, NULL);
	struct mts_record live = rec(mts_hlc_make(1000, 0), 0, 0, "x");
	struct mts_frontier f = { .pruned_ms = 500 };

	memset(big, 'k', sizeof(big));
	assert_int_equal(mts_state_check_key(big, 0), -MTS_ERR_INVAL);
	assert_int_equal(mts_state_check_key(big, MTS_KEY_MAX), 0);
	assert_int_equal(mts_state_check_key(big, MTS_KEY_MAX + 1),
	    -MTS_ERR_TOOBIG);
	assert_false(mts_state_tombstone_expired(&t, 1999, 1000));
	assert_true(mts_state_tombstone_expired(&t, 2000, 1000));
	assert_false(mts_state_tombstone_expired(&live, 99999, 1000));
	assert_false(mts_state_frontier_expired(&f, 1499, 1000));
	assert_true(mts_state_frontier_expired(&f, 1500, 1000));
}

/* --- the verdict: one table of writes ------------------------------------- */

#define SELF_HEX "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define OTHER_HEX "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define T0 10     /* the node's HLC before each case, under every in_hlc */
#define WALL 6000 /* the wall clock of each case, ms */
#define BIG (MTS_RECORD_MAX_VALUE + 1)
#define LONGKEY (MTS_KEY_MAX + 1)

enum cur_kind { NONE, LIVE, DEAD };
enum hlc_after {
	H_SAME,  /* the node's HLC did not move */
	H_STAMP, /* a local write was stamped: a new HLC past T0 and WALL */
	H_SEEN,  /* a merged record's HLC was observed */
};

struct vcase {
	const char *name;
	enum mts_write_kind kind;
	const char *key;   /* NULL: LONGKEY bytes of 'k' */
	size_t vlen;       /* put/merge value bytes (zeros) */
	enum cur_kind cur; /* the key's current record: hlc 100, origin 0x11 */
	uint64_t pf_hlc;   /* a prune frontier (origin 0x11); 0: none */
	/* merge: the peer's record */
	uint64_t in_hlc;
	uint8_t in_origin;
	bool in_tomb;
	/* put/delete: compare-and-set */
	bool cas;
	uint64_t exp_hlc;
	uint8_t exp_origin;
	size_t exp_origin_len;
	/* expected */
	enum mts_verdict_kind verdict;
	int err;
	const char *why; /* a part of v.why */
	bool was_live;
	enum hlc_after hlc;
};

#define OWN "n/" SELF_HEX "/info"

static const struct vcase vcases[] = {
	/* local puts */
	{ "put to a new key", MTS_WRITE_PUT, "s/web", 3, NONE,
	    .verdict = MTS_VERDICT_APPLY, .hlc = H_STAMP },
	{ "put over a live record", MTS_WRITE_PUT, "s/web", 3, LIVE,
	    .verdict = MTS_VERDICT_APPLY, .was_live = true, .hlc = H_STAMP },
	{ "put over a tombstone", MTS_WRITE_PUT, "s/web", 3, DEAD,
	    .verdict = MTS_VERDICT_APPLY, .hlc = H_STAMP },
	{ "put with an empty key", MTS_WRITE_PUT, "", 3, NONE,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_INVAL,
	    .why = "key must be 1 to 1024 bytes" },
	{ "put with a key over the limit", MTS_WRITE_PUT, NULL, 3, NONE,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_TOOBIG,
	    .why = "key must be 1 to 1024 bytes" },
	{ "put of a value over 1 MiB", MTS_WRITE_PUT, "s/web", BIG, NONE,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_TOOBIG,
	    .why = "value of 1048577 bytes is over the 1048576-byte limit" },
	{ "put of a value of exactly 1 MiB", MTS_WRITE_PUT, "s/web",
	    MTS_RECORD_MAX_VALUE, NONE, .verdict = MTS_VERDICT_APPLY,
	    .hlc = H_STAMP },
	{ "put to another node's key", MTS_WRITE_PUT, "n/" OTHER_HEX, 3, NONE,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_DENIED,
	    .why = "key n/" OTHER_HEX
	           " belongs to another node (this node is " SELF_HEX ")" },
	{ "put to this node's key", MTS_WRITE_PUT, OWN, 3, NONE,
	    .verdict = MTS_VERDICT_APPLY, .hlc = H_STAMP },
	{ "put refused for its key before its value", MTS_WRITE_PUT, "", BIG,
	    NONE, .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_INVAL },
	{ "put refused for its value before ownership", MTS_WRITE_PUT,
	    "n/" OTHER_HEX, BIG, NONE, .verdict = MTS_VERDICT_REFUSE,
	    .err = -MTS_ERR_TOOBIG },
	/* compare-and-set */
	{ "cas 0 on an absent key", MTS_WRITE_PUT, "s/web", 3, NONE,
	    .cas = true, .verdict = MTS_VERDICT_APPLY, .hlc = H_STAMP },
	{ "cas 0 on a live key", MTS_WRITE_PUT, "s/web", 3, LIVE, .cas = true,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_CONFLICT,
	    .why = "compare-and-set failed" },
	{ "cas 0 on a deleted key", MTS_WRITE_PUT, "s/web", 3, DEAD,
	    .cas = true, .verdict = MTS_VERDICT_APPLY, .hlc = H_STAMP },
	{ "cas on the current stamp", MTS_WRITE_PUT, "s/web", 3, LIVE,
	    .cas = true, .exp_hlc = 100, .exp_origin = 0x11,
	    .exp_origin_len = 16, .verdict = MTS_VERDICT_APPLY,
	    .was_live = true, .hlc = H_STAMP },
	{ "cas on another origin", MTS_WRITE_PUT, "s/web", 3, LIVE, .cas = true,
	    .exp_hlc = 100, .exp_origin = 0x12, .exp_origin_len = 16,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_CONFLICT },
	{ "cas on an older hlc", MTS_WRITE_PUT, "s/web", 3, LIVE, .cas = true,
	    .exp_hlc = 99, .exp_origin = 0x11, .exp_origin_len = 16,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_CONFLICT },
	{ "cas with a 15-byte origin", MTS_WRITE_PUT, "s/web", 3, LIVE,
	    .cas = true, .exp_hlc = 100, .exp_origin = 0x11,
	    .exp_origin_len = 15, .verdict = MTS_VERDICT_REFUSE,
	    .err = -MTS_ERR_CONFLICT },
	{ "cas on a stamp of an absent key", MTS_WRITE_PUT, "s/web", 3, NONE,
	    .cas = true, .exp_hlc = 100, .exp_origin = 0x11,
	    .exp_origin_len = 16, .verdict = MTS_VERDICT_REFUSE,
	    .err = -MTS_ERR_CONFLICT },
	/* local deletes */
	{ "delete of a live key", MTS_WRITE_DELETE, "s/web", 0, LIVE,
	    .verdict = MTS_VERDICT_APPLY, .was_live = true, .hlc = H_STAMP },
	{ "delete of an absent key", MTS_WRITE_DELETE, "s/web", 0, NONE,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_NOTFOUND,
	    .why = "no such key" },
	{ "delete of a deleted key", MTS_WRITE_DELETE, "s/web", 0, DEAD,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_NOTFOUND },
	{ "delete: cas is decided before absence", MTS_WRITE_DELETE, "s/web", 0,
	    NONE, .cas = true, .exp_hlc = 7, .exp_origin = 0x11,
	    .exp_origin_len = 16, .verdict = MTS_VERDICT_REFUSE,
	    .err = -MTS_ERR_CONFLICT },
	{ "delete with cas on the current stamp", MTS_WRITE_DELETE, "s/web", 0,
	    LIVE, .cas = true, .exp_hlc = 100, .exp_origin = 0x11,
	    .exp_origin_len = 16, .verdict = MTS_VERDICT_APPLY,
	    .was_live = true, .hlc = H_STAMP },
	{ "delete of another node's key", MTS_WRITE_DELETE, "t/" OTHER_HEX "/x",
	    0, LIVE, .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_DENIED },
	/* merges from peers */
	{ "merge into an absent key", MTS_WRITE_MERGE, "s/web", 3, NONE,
	    .in_hlc = 50, .in_origin = 0x22, .verdict = MTS_VERDICT_APPLY,
	    .hlc = H_SEEN },
	{ "merge older than the current record", MTS_WRITE_MERGE, "s/web", 3,
	    LIVE, .in_hlc = 99, .in_origin = 0x99,
	    .verdict = MTS_VERDICT_IGNORE, .was_live = true, .hlc = H_SEEN },
	{ "merge newer than the current record", MTS_WRITE_MERGE, "s/web", 3,
	    LIVE, .in_hlc = 101, .in_origin = 0x01,
	    .verdict = MTS_VERDICT_APPLY, .was_live = true, .hlc = H_SEEN },
	{ "merge on an hlc tie, larger origin", MTS_WRITE_MERGE, "s/web", 3,
	    LIVE, .in_hlc = 100, .in_origin = 0x12,
	    .verdict = MTS_VERDICT_APPLY, .was_live = true, .hlc = H_SEEN },
	{ "merge on an hlc tie, smaller origin", MTS_WRITE_MERGE, "s/web", 3,
	    LIVE, .in_hlc = 100, .in_origin = 0x10,
	    .verdict = MTS_VERDICT_IGNORE, .was_live = true, .hlc = H_SEEN },
	{ "merge of a newer tombstone", MTS_WRITE_MERGE, "s/web", 0, LIVE,
	    .in_hlc = 200, .in_origin = 0x22, .in_tomb = true,
	    .verdict = MTS_VERDICT_APPLY, .was_live = true, .hlc = H_SEEN },
	{ "merge over a tombstone", MTS_WRITE_MERGE, "s/web", 3, DEAD,
	    .in_hlc = 200, .in_origin = 0x22, .verdict = MTS_VERDICT_APPLY,
	    .hlc = H_SEEN },
	{ "merge as old as the prune frontier", MTS_WRITE_MERGE, "s/web", 3,
	    NONE, .pf_hlc = 100, .in_hlc = 100, .in_origin = 0x11,
	    .verdict = MTS_VERDICT_IGNORE, .hlc = H_SEEN },
	{ "merge older than the prune frontier", MTS_WRITE_MERGE, "s/web", 3,
	    NONE, .pf_hlc = 100, .in_hlc = 60, .in_origin = 0xff,
	    .verdict = MTS_VERDICT_IGNORE, .hlc = H_SEEN },
	{ "merge newer than the prune frontier", MTS_WRITE_MERGE, "s/web", 3,
	    NONE, .pf_hlc = 100, .in_hlc = 101, .in_origin = 0x00,
	    .verdict = MTS_VERDICT_APPLY, .hlc = H_SEEN },
	{ "merge into another node's key", MTS_WRITE_MERGE, "n/" OTHER_HEX, 3,
	    NONE, .in_hlc = 50, .in_origin = 0xbb, .verdict = MTS_VERDICT_APPLY,
	    .hlc = H_SEEN },
	{ "merge an hour ahead of the wall clock", MTS_WRITE_MERGE, "s/web", 3,
	    NONE, .in_hlc = (uint64_t)(WALL + MTS_HLC_MAX_AHEAD_MS) << 16,
	    .in_origin = 0x22, .verdict = MTS_VERDICT_APPLY, .hlc = H_SEEN },
	{ "merge more than an hour ahead", MTS_WRITE_MERGE, "s/web", 3, NONE,
	    .in_hlc = (uint64_t)(WALL + MTS_HLC_MAX_AHEAD_MS + 1) << 16,
	    .in_origin = 0x22, .verdict = MTS_VERDICT_REFUSE,
	    .err = -MTS_ERR_INVAL, .why = "ahead of this node's clock" },
	{ "merge at the top of the clock", MTS_WRITE_MERGE, "s/web", 3, NONE,
	    .in_hlc = UINT64_MAX, .in_origin = 0x22,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_INVAL,
	    .why = "ahead of this node's clock" },
	{ "merge with hlc zero", MTS_WRITE_MERGE, "s/web", 3, NONE, .in_hlc = 0,
	    .in_origin = 0x22, .verdict = MTS_VERDICT_REFUSE,
	    .err = -MTS_ERR_INVAL, .why = "hlc is zero" },
	{ "merge of a tombstone with a value", MTS_WRITE_MERGE, "s/web", 3,
	    NONE, .in_hlc = 50, .in_origin = 0x22, .in_tomb = true,
	    .verdict = MTS_VERDICT_REFUSE, .err = -MTS_ERR_INVAL,
	    .why = "tombstone with a value" },
	{ "merge of a value over 1 MiB", MTS_WRITE_MERGE, "s/web", BIG, NONE,
	    .in_hlc = 50, .in_origin = 0x22, .verdict = MTS_VERDICT_REFUSE,
	    .err = -MTS_ERR_INVAL, .why = "value over 1 MiB" },
	{ "merge with an empty key", MTS_WRITE_MERGE, "", 3, NONE, .in_hlc = 50,
	    .in_origin = 0x22, .verdict = MTS_VERDICT_REFUSE,
	    .err = -MTS_ERR_INVAL, .why = "key must be 1 to 1024 bytes" },
	{ "merge with a key over the limit", MTS_WRITE_MERGE, NULL, 3, NONE,
	    .in_hlc = 50, .in_origin = 0x22, .verdict = MTS_VERDICT_REFUSE,
	    .err = -MTS_ERR_INVAL },
};

/* Builds case c's write, current record and frontier, runs the verdict
 * and checks it. */
static void
run_vcase(const struct vcase *c, const uint8_t *zeros, const uint8_t *longkey)
{
	uint8_t self_id[MTS_NODE_ID_LEN], exp_origin[MTS_NODE_ID_LEN];
	struct mts_hlc hlc = { .last = T0 };
	struct mts_state_self self = { self_id, SELF_HEX, &hlc, WALL };
	struct mts_record cur =
	    rec(100, 0x11, c->cur == DEAD, c->cur == DEAD ? NULL : "old");
	struct mts_frontier pf = { .hlc = c->pf_hlc, .pruned_ms = 1 };
	struct mts_write w = { .kind = c->kind };
	struct mts_verdict v;

	memset(self_id, 0xaa, sizeof(self_id));
	memset(exp_origin, c->exp_origin, sizeof(exp_origin));
	memset(pf.origin, 0x11, sizeof(pf.origin));
	w.key = c->key ? (const uint8_t *)c->key : longkey;
	w.klen = c->key ? strlen(c->key) : LONGKEY;
	w.rec.value = c->vlen ? zeros : NULL;
	w.rec.vlen = c->vlen;
	w.rec.tombstone = c->kind == MTS_WRITE_DELETE || c->in_tomb;
	if (c->kind == MTS_WRITE_MERGE) {
		w.rec.hlc = c->in_hlc;
		memset(w.rec.origin, c->in_origin, sizeof(w.rec.origin));
	}
	w.has_expected = c->cas;
	w.exp_hlc = c->exp_hlc;
	w.exp_origin = exp_origin;
	w.exp_origin_len = c->exp_origin_len;
	assert_int_equal(mts_state_verdict(&self, c->cur == NONE ? NULL : &cur,
	                     c->pf_hlc ? &pf : NULL, &w, &v),
	    c->verdict);
	assert_int_equal(v.kind, c->verdict);
	if (c->verdict == MTS_VERDICT_REFUSE) {
		assert_int_equal(v.err, c->err);
		if (c->why != NULL)
			assert_non_null(strstr(v.why, c->why));
		/* the stateless part refuses the same before any read;
		 * only a CAS and a delete's absence need the record */
		assert_int_equal(mts_state_check_write(&self, &w, &v),
		    c->err == -MTS_ERR_CONFLICT || c->err == -MTS_ERR_NOTFOUND
		        ? 0
		        : c->err);
	} else {
		assert_int_equal(v.was_live, c->was_live);
		assert_int_equal(mts_state_check_write(&self, &w, &v), 0);
	}
	switch (c->hlc) {
	case H_SAME:
		assert_true(hlc.last == T0);
		break;
	case H_STAMP: /* stamped past both the old HLC and the wall clock */
		assert_true(v.rec.hlc == hlc.last);
		assert_true(v.rec.hlc > T0 && mts_hlc_ms(v.rec.hlc) >= WALL);
		assert_memory_equal(v.rec.origin, self_id, MTS_NODE_ID_LEN);
		assert_int_equal(v.rec.tombstone, c->kind == MTS_WRITE_DELETE);
		assert_int_equal(v.rec.vlen, c->vlen);
		break;
	case H_SEEN:
		assert_true(hlc.last >= c->in_hlc && c->in_hlc > T0);
		if (c->verdict == MTS_VERDICT_APPLY) /* stored as it came */
			assert_memory_equal(&v.rec, &w.rec, sizeof(w.rec));
		break;
	}
}

static void
test_verdict_table(void **state)
{
	uint8_t *zeros = calloc(1, BIG), longkey[LONGKEY];
	size_t i;

	memset(longkey, 'k', sizeof(longkey));
	for (i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		print_message("verdict: %s\n", vcases[i].name);
		run_vcase(&vcases[i], zeros, longkey);
	}
	free(zeros);
}

/* A merged record's HLC moves the node's clock even when it loses, so the
 * node's next write orders after everything it has seen. */
static void
test_verdict_observes_merges(void **state)
{
	uint8_t id[MTS_NODE_ID_LEN];
	struct mts_hlc hlc = { .last = mts_hlc_make(10, 0) };
	struct mts_state_self self = { id, SELF_HEX, &hlc, 10 };
	struct mts_record cur = rec(mts_hlc_make(900, 0), 0x11, 0, "new");
	struct mts_write m = { .kind = MTS_WRITE_MERGE,
		.key = (const uint8_t *)"s/a",
		.klen = 3,
		.rec = rec(mts_hlc_make(800, 0), 0x22, 0, "old") };
	struct mts_write p = { .kind = MTS_WRITE_PUT,
		.key = (const uint8_t *)"s/b",
		.klen = 3,
		.rec = rec(0, 0, 0, "v") };
	struct mts_verdict v;

	memset(id, 0xaa, sizeof(id));
	assert_int_equal(mts_state_verdict(&self, &cur, NULL, &m, &v),
	    MTS_VERDICT_IGNORE);
	assert_int_equal(mts_state_verdict(&self, NULL, NULL, &p, &v),
	    MTS_VERDICT_APPLY);
	assert_true(v.rec.hlc > mts_hlc_make(800, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_wins),
		cmocka_unit_test(test_frontier_blocks_resurrection),
		cmocka_unit_test(test_cas),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_limits_and_expiry),
		cmocka_unit_test(test_verdict_table),
		cmocka_unit_test(test_verdict_observes_merges),
	};

	mts_crypto_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
