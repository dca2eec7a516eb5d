/* test_admit.c: unit tests of agents/gossipd/admit_core.c — per-address and total caps on unfinished handshakes, the cap on connections, oldest first, finished connections kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/gossipd/admit_core.h"

static const struct mts_admit_caps caps = { .links = 6,
	.unfinished = 4,
	.unfinished_per_addr = 2 };

static void
test_room_admits(void **state)
{
	struct mts_admit_conn c[] = {
		{ "10.0.0.1:7373", 1, 0 },
		{ "10.0.0.2:5000", 2, 1 },
	};
	struct mts_admit_verdict v;

	mts_admit(c, 2, "10.0.0.2:5001", &caps, &v);
	assert_int_equal(v.admit, 1);
	assert_int_equal(v.nvictims, 0);
}

static void
test_per_addr_closes_its_oldest(void **state)
{
	struct mts_admit_conn c[] = {
		{ "10.0.0.3:1", 1, 1 },
		{ "10.0.0.2:2", 5, 1 }, /* 10.0.0.2's oldest */
		{ "10.0.0.2:3", 7, 1 },
		{ "10.0.0.22:4", 2, 1 }, /* a longer address, same prefix */
	};
	struct mts_admit_verdict v;

	mts_admit(c, 4, "10.0.0.2:9", &caps, &v);
	assert_int_equal(v.admit, 1);
	/* the per-address victim also makes room under the total cap */
	assert_int_equal(v.nvictims, 1);
	assert_int_equal(v.victim[0], 1);
	assert_int_equal(v.why[0], MTS_ADMIT_PER_ADDR);
}

static void
test_total_closes_the_oldest_anywhere(void **state)
{
	struct mts_admit_conn c[] = {
		{ "10.0.0.1:1", 9, 1 },
		{ "10.0.0.2:1", 3, 1 }, /* oldest unfinished */
		{ "10.0.0.3:1", 4, 1 }, { "10.0.0.4:1", 5, 1 },
		{ "10.0.0.5:1", 1, 0 }, /* older, but a member: kept */
	};
	struct mts_admit_verdict v;

	mts_admit(c, 5, "10.0.0.6:1", &caps, &v);
	assert_int_equal(v.admit, 1);
	assert_int_equal(v.nvictims, 1);
	assert_int_equal(v.victim[0], 1);
	assert_int_equal(v.why[0], MTS_ADMIT_UNFINISHED);
}

static void
test_both_caps_two_victims(void **state)
{
	struct mts_admit_conn c[] = {
		{ "10.0.0.1:1", 1, 1 }, /* oldest overall */
		{ "10.0.0.2:1", 2, 1 }, /* 10.0.0.2's oldest */
		{ "10.0.0.2:2", 3, 1 },
		{ "10.0.0.3:1", 4, 1 },
		{ "10.0.0.4:1", 5, 1 },
	};
	struct mts_admit_verdict v;

	mts_admit(c, 5, "10.0.0.2:3", &caps, &v);
	assert_int_equal(v.admit, 1);
	assert_int_equal(v.nvictims, 2);
	assert_int_equal(v.victim[0], 1);
	assert_int_equal(v.why[0], MTS_ADMIT_PER_ADDR);
	assert_int_equal(v.victim[1], 0);
	assert_int_equal(v.why[1], MTS_ADMIT_UNFINISHED);
}

static void
test_links_cap(void **state)
{
	struct mts_admit_conn c[6] = {
		{ "10.0.0.1:1", 1, 0 },
		{ "10.0.0.2:1", 2, 0 },
		{ "10.0.0.3:1", 3, 0 },
		{ "10.0.0.4:1", 4, 0 },
		{ "10.0.0.5:1", 5, 0 },
		{ "10.0.0.6:1", 6, 1 },
	};
	struct mts_admit_verdict v;

	/* at the cap: the one unfinished connection goes */
	mts_admit(c, 6, "10.0.0.9:1", &caps, &v);
	assert_int_equal(v.admit, 1);
	assert_int_equal(v.nvictims, 1);
	assert_int_equal(v.victim[0], 5);
	assert_int_equal(v.why[0], MTS_ADMIT_LINKS);
	/* every connection a member: the newcomer is refused, none closed */
	c[5].unfinished = 0;
	mts_admit(c, 6, "10.0.0.9:1", &caps, &v);
	assert_int_equal(v.admit, 0);
	assert_int_equal(v.nvictims, 0);
}

static void
test_ties_take_the_first(void **state)
{
	struct mts_admit_conn c[] = {
		{ "10.0.0.2:1", 5, 1 },
		{ "10.0.0.2:2", 5, 1 },
	};
	struct mts_admit_verdict v;

	mts_admit(c, 2, "10.0.0.2:3", &caps, &v);
	assert_int_equal(v.nvictims, 1);
	assert_int_equal(v.victim[0], 0);
}

/* Admitting 10,000 connections from 30 addresses, closing the victims:
 * the caps hold after every step and no member is ever closed. */
static void
test_flood_holds_the_caps(void **state)
{
	struct mts_admit_conn c[64];
	char addr[64][32];
	struct mts_admit_verdict v;
	size_t n = 0, i, k, unfinished, from;
	mts_time_t t;

	for (i = 0; i < 2; i++) { /* two members */
		snprintf(addr[n], sizeof(addr[n]), "10.1.0.%zu:7373", i);
		c[n] = (struct mts_admit_conn){ addr[n], 0, 0 };
		n++;
	}
	for (t = 1; t <= 10000; t++) {
		char ra[32];

		snprintf(ra, sizeof(ra), "10.0.0.%u:%u", (unsigned)(t % 30),
		    (unsigned)t);
		mts_admit(c, n, ra, &caps, &v);
		assert_int_equal(v.admit, 1);
		/* close the victims: keep the others, in order */
		for (i = 0, k = 0; i < n; i++) {
			size_t j, gone = 0;

			for (j = 0; j < v.nvictims; j++)
				gone |= v.victim[j] == i;
			if (gone) {
				assert_true(c[i].unfinished);
				continue;
			}
			memmove(addr[k], addr[i], sizeof(addr[k]));
			c[k] = c[i];
			c[k].raddr = addr[k];
			k++;
		}
		n = k;
		memcpy(addr[n], ra, sizeof(ra));
		c[n] = (struct mts_admit_conn){ addr[n], t, 1 };
		n++;
		for (i = 0, unfinished = 0, from = 0; i < n; i++) {
			unfinished += c[i].unfinished;
			from += c[i].unfinished &&
			    strncmp(c[i].raddr, ra, strcspn(ra, ":") + 1) == 0;
		}
		assert_true(n <= caps.links);
		assert_true(unfinished <= caps.unfinished);
		assert_true(from <= caps.unfinished_per_addr);
		assert_false(c[0].unfinished || c[1].unfinished);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_room_admits),
		cmocka_unit_test(test_per_addr_closes_its_oldest),
		cmocka_unit_test(test_total_closes_the_oldest_anywhere),
		cmocka_unit_test(test_both_caps_two_victims),
		cmocka_unit_test(test_links_cap),
		cmocka_unit_test(test_ties_take_the_first),
		cmocka_unit_test(test_flood_holds_the_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
