/* test_ratelimit.c: unit tests of common/ratelimit.c — one line per key per interval, summaries after it, the shared slot when the table is full, no event lost under a flood. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ratelimit.h"

static void
test_one_line_per_interval(void **state)
{
	struct mts_ratelimit rl;
	struct mts_rl_summary s;

	mts_rl_init(&rl, 8, 10000);
	assert_int_equal(mts_rl_hit(&rl, "10.0.0.1 refused", 1000), 1);
	assert_int_equal(mts_rl_hit(&rl, "10.0.0.1 refused", 1001), 0);
	assert_int_equal(mts_rl_hit(&rl, "10.0.0.1 refused", 10999), 0);
	assert_int_equal(mts_rl_expire(&rl, 10999, &s), 0); /* not over */
	assert_int_equal(mts_rl_expire(&rl, 11000, &s), 1);
	assert_string_equal(s.key, "10.0.0.1 refused");
	assert_int_equal(s.count, 2);
	assert_int_equal(s.span, 10000);
	assert_int_equal(mts_rl_expire(&rl, 11000, &s), 0);
	/* reported: the next event starts a new interval */
	assert_int_equal(mts_rl_hit(&rl, "10.0.0.1 refused", 11001), 1);
	mts_rl_free(&rl);
}

static void
test_keys_are_independent(void **state)
{
	struct mts_ratelimit rl;
	struct mts_rl_summary s;

	mts_rl_init(&rl, 8, 10000);
	assert_int_equal(mts_rl_hit(&rl, "10.0.0.1 refused", 0), 1);
	assert_int_equal(mts_rl_hit(&rl, "10.0.0.2 refused", 0), 1);
	assert_int_equal(mts_rl_hit(&rl, "10.0.0.1 bad frame", 0), 1);
	assert_int_equal(mts_rl_hit(&rl, "10.0.0.2 refused", 5), 0);
	assert_int_equal(mts_rl_expire(&rl, 10000, &s), 1);
	assert_string_equal(s.key, "10.0.0.2 refused");
	assert_int_equal(s.count, 1);
	/* the quiet keys are released without a summary */
	assert_int_equal(mts_rl_expire(&rl, 10000, &s), 0);
	mts_rl_free(&rl);
}

static void
test_quiet_key_restarts_without_expire(void **state)
{
	struct mts_ratelimit rl;
	struct mts_rl_summary s;

	mts_rl_init(&rl, 2, 1000);
	assert_int_equal(mts_rl_hit(&rl, "a", 0), 1);
	/* nothing was silenced: after the interval the next line is logged
	 * even though nobody called expire */
	assert_int_equal(mts_rl_hit(&rl, "a", 1000), 1);
	assert_int_equal(mts_rl_hit(&rl, "a", 1500), 0);
	/* silenced events keep the interval open until they are reported */
	assert_int_equal(mts_rl_hit(&rl, "a", 2500), 0);
	assert_int_equal(mts_rl_expire(&rl, 2600, &s), 1);
	assert_int_equal(s.count, 2);
	assert_int_equal(s.span, 1600);
	assert_int_equal(mts_rl_hit(&rl, "a", 2600), 1);
	mts_rl_free(&rl);
}

static void
test_full_table_shares_other(void **state)
{
	struct mts_ratelimit rl;
	struct mts_rl_summary s;

	mts_rl_init(&rl, 2, 1000);
	assert_int_equal(mts_rl_hit(&rl, "a", 0), 1);
	assert_int_equal(mts_rl_hit(&rl, "b", 0), 1);
	assert_int_equal(mts_rl_hit(&rl, "a", 1), 0); /* a holds its slot */
	assert_int_equal(mts_rl_hit(&rl, "c", 2), 1); /* first of "other" */
	assert_int_equal(mts_rl_hit(&rl, "d", 3), 0);
	assert_int_equal(mts_rl_hit(&rl, "e", 4), 0);
	assert_int_equal(mts_rl_expire(&rl, 1000, &s), 1);
	assert_string_equal(s.key, "a");
	assert_int_equal(mts_rl_expire(&rl, 1002, &s), 1);
	assert_string_equal(s.key, MTS_RL_OTHER);
	assert_int_equal(s.count, 2);
	assert_int_equal(mts_rl_expire(&rl, 1002, &s), 0);
	/* a slot whose quiet interval is over is taken by a new key */
	assert_int_equal(mts_rl_hit(&rl, "f", 1003), 1);
	assert_int_equal(mts_rl_hit(&rl, "g", 1003), 1);
	assert_int_equal(mts_rl_hit(&rl, "h", 1003), 1); /* other again */
	assert_int_equal(mts_rl_hit(&rl, "f", 1004), 0);
	mts_rl_free(&rl);
}

static void
test_long_keys_truncate(void **state)
{
	struct mts_ratelimit rl;
	char k1[300], k2[300];

	memset(k1, 'x', sizeof(k1) - 1);
	k1[sizeof(k1) - 1] = '\0';
	memcpy(k2, k1, sizeof(k2));
	k2[200] = 'y'; /* differs past the kept prefix: the same key */
	mts_rl_init(&rl, 4, 1000);
	assert_int_equal(mts_rl_hit(&rl, k1, 0), 1);
	assert_int_equal(mts_rl_hit(&rl, k2, 0), 0);
	mts_rl_free(&rl);
}

/* A flood of events from 5,000 keys over 60 s, with expire once a second:
 * no interval logs more than nslots + 1 lines, and every event is either
 * logged or counted in a summary. */
static void
test_flood_bounded_and_counted(void **state)
{
	struct mts_ratelimit rl;
	struct mts_rl_summary s;
	uint64_t events = 0, logged = 0, summed = 0, lines_in_sec;
	uint64_t rng = 42;
	mts_time_t now;
	char key[32];
	int i;

	mts_rl_init(&rl, 16, 10000);
	for (now = 0; now < 60000; now += 1000) {
		lines_in_sec = 0;
		for (i = 0; i < 500; i++) {
			rng = rng * 6364136223846793005ull +
			    1442695040888963407ull;
			snprintf(key, sizeof(key), "10.0.%u.%u %s",
			    (unsigned)(rng >> 40) % 20,
			    (unsigned)(rng >> 50) % 250,
			    (rng >> 33) & 1 ? "refused" : "bad frame");
			events++;
			if (mts_rl_hit(&rl, key, now + i % 1000)) {
				logged++;
				lines_in_sec++;
			}
		}
		while (mts_rl_expire(&rl, now + 999, &s)) {
			summed += s.count;
			lines_in_sec++;
		}
		assert_true(lines_in_sec <= 2 * (16 + 1));
	}
	while (mts_rl_expire(&rl, now + 20000, &s))
		summed += s.count;
	assert_true(logged + summed == events);
	assert_true(logged < events / 20);
	mts_rl_free(&rl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_line_per_interval),
		cmocka_unit_test(test_keys_are_independent),
		cmocka_unit_test(test_quiet_key_restarts_without_expire),
		cmocka_unit_test(test_full_table_shares_other),
		cmocka_unit_test(test_long_keys_truncate),
		cmocka_unit_test(test_flood_bounded_and_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
