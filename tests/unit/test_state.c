/* test_state.c: the statestore's pure decisions — merge with prune frontiers, CAS, key ownership, expiry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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
	struct mts_record cur = rec(100, 1, 0, "a"), newer = rec(101, 0, 0, "b");
	struct mts_record older = rec(99, 9, 0, "c"), tie = rec(100, 2, 0, "d");

	assert_true(mts_state_merge_wins(NULL, NULL, &cur));
	assert_true(mts_state_merge_wins(&cur, NULL, &newer));
	assert_false(mts_state_merge_wins(&cur, NULL, &older));
	assert_true(mts_state_merge_wins(&cur, NULL, &tie)); /* origin breaks tie */
	assert_false(mts_state_merge_wins(&tie, NULL, &cur));
	assert_false(mts_state_merge_wins(&cur, NULL, &cur)); /* idempotent */
}

static void
test_frontier_blocks_resurrection(void **state)
{
	struct mts_frontier pf = {.hlc = 100, .pruned_ms = 5};
	struct mts_record same = rec(100, 0, 0, "x"), older = rec(50, 7, 0, "y");
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
	struct mts_record cur = rec(100, 4, 0, "a"), dead = rec(100, 4, 1, NULL);
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
			     (const uint8_t *)"n/0123456789abcdef0123456789abcdef",
			     34),
	    0);
	assert_int_equal(mts_state_owner_check(self, (const uint8_t *)"n/0123",
			     6),
	    -MTS_ERR_DENIED);
	/* keys any admin may write */
	assert_int_equal(mts_state_owner_check(self, (const uint8_t *)"s/web",
			     5),
	    0);
	assert_int_equal(mts_state_owner_check(self,
			     (const uint8_t *)"m/fedcba9876543210fedcba9876543210",
			     34),
	    0);
}

static void
test_limits_and_expiry(void **state)
{
	uint8_t big[MTS_KEY_MAX + 1];
	struct mts_record t = rec(mts_hlc_make(1000, 0), 0, 1, NULL);
	struct mts_record live = rec(mts_hlc_make(1000, 0), 0, 0, "x");
	struct mts_frontier f = {.pruned_ms = 500};

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_wins),
		cmocka_unit_test(test_frontier_blocks_resurrection),
		cmocka_unit_test(test_cas),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_limits_and_expiry),
	};

	mts_crypto_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
