/* test_shim_peer.c: obtaining an image a node lacks, as pure logic — registry names in references, the sources tried per mode, name matching, which holders are asked and in which order, retries, pacing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agents/shim/peer_core.h"

static void
test_has_registry(void **state)
{
	static const struct {
		const char *ref;
		int want;
	} cases[] = {
		{ "busybox", 0 },
		{ "busybox:latest", 0 },
		{ "library/busybox", 0 },
		{ "me/app:1", 0 },
		{ "docker.io/library/busybox", 1 },
		{ "registry.local:5000/app", 1 },
		{ "127.0.0.1:5000/app:2", 1 },
		{ "localhost/app", 1 },
		{ "localhost:5000/app", 1 },
		{ "localhostx/app", 0 },
		{ "ghcr.io/o/r@sha256:00", 1 },
		{ "", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (mts_ref_has_registry(cases[i].ref) != cases[i].want)
			fail_msg("%s: want %d", cases[i].ref, cases[i].want);
}

static void
test_sources(void **state)
{
	enum mts_img_source s[2];

	/* a task's image: peers only when no registry is named */
	assert_int_equal(mts_img_sources("busybox:latest", MTS_MODE_AUTO, s),
	    1);
	assert_int_equal(s[0], MTS_SRC_PEERS);
	assert_int_equal(mts_img_sources("r.io/busybox", MTS_MODE_AUTO, s), 2);
	assert_int_equal(s[0], MTS_SRC_REGISTRY);
	assert_int_equal(s[1], MTS_SRC_PEERS);
	/* mtsctl image pull: the registry (Docker Hub by default), then
	 * the peers */
	assert_int_equal(mts_img_sources("busybox", MTS_MODE_PULL, s), 2);
	assert_int_equal(s[0], MTS_SRC_REGISTRY);
	assert_int_equal(s[1], MTS_SRC_PEERS);
	assert_int_equal(mts_img_sources("r.io/x", MTS_MODE_PEERS, s), 1);
	assert_int_equal(s[0], MTS_SRC_PEERS);
	assert_int_equal(mts_img_sources("x", MTS_MODE_REGISTRY, s), 1);
	assert_int_equal(s[0], MTS_SRC_REGISTRY);
}

static void
test_name_match(void **state)
{
	assert_true(mts_img_name_match("busybox:latest", "busybox:latest"));
	assert_true(mts_img_name_match("busybox", "busybox:latest"));
	assert_true(
	    mts_img_name_match("r.io:5000/a/b", "r.io:5000/a/b:latest"));
	assert_false(mts_img_name_match("busybox", "busybox:1"));
	assert_false(mts_img_name_match("busybox:1", "busybox:latest"));
	assert_false(mts_img_name_match("busy", "busybox:latest"));
	assert_false(mts_img_name_match("busybox", "busyboxlatest"));
	assert_false(mts_img_name_match("busybox", "busybox:latestx"));
	assert_false(mts_img_name_match("a@sha256:1", "a@sha256:1:latest"));
}

#define D8(c) c c c c c c c c
#define D(c) "sha256:" D8(c) D8(c) D8(c) D8(c) D8(c) D8(c) D8(c) D8(c)

static const struct mts_held old_bb = { "busybox:latest", D("1"), D("a"), 10,
	1000 };
static const struct mts_held new_bb = { "busybox:latest", D("2"), D("b"), 10,
	2000 };
static const struct mts_held other = { "nginx:1", D("3"), D("c"), 10, 3000 };

static void
test_pick(void **state)
{
	const struct mts_held h1[] = { old_bb, other }, h2[] = { new_bb },
	                      h3[] = { new_bb }, h4[] = { new_bb };
	struct mts_holder hs[] = {
		{ "11111111111111111111111111111111", 1, h1, 2 },
		{ "22222222222222222222222222222222", 1, h2, 1 },
		{ "33333333333333333333333333333333", 1, h3, 1 },
		{ "44444444444444444444444444444444", 0, h4, 1 }, /* dead */
	};
	struct mts_peer_cand c[8];
	struct mts_held chosen;
	size_t n;

	/* the newest image of that name; the dead holder is left out, so
	 * is the node itself */
	n = mts_peer_pick(hs, 4, "33333333333333333333333333333333", "busybox",
	    0, c, 8, &chosen);
	assert_int_equal(n, 1);
	assert_string_equal(c[0].node, "22222222222222222222222222222222");
	assert_string_equal(chosen.manifest, D("2"));
	/* two holders: the seed rotates the order */
	n = mts_peer_pick(hs, 4, "55555555555555555555555555555555",
	    "busybox:latest", 1, c, 8, &chosen);
	assert_int_equal(n, 2);
	assert_string_equal(c[0].node, "33333333333333333333333333333333");
	assert_string_equal(c[1].node, "22222222222222222222222222222222");
	n = mts_peer_pick(hs, 4, "55555555555555555555555555555555",
	    "busybox:latest", 2, c, 8, &chosen);
	assert_string_equal(c[0].node, "22222222222222222222222222222222");
	/* room for one */
	assert_int_equal(mts_peer_pick(hs, 4, "5", "busybox", 0, c, 1, &chosen),
	    1);
	/* the old one, when only its holder is alive */
	hs[1].alive = hs[2].alive = 0;
	n = mts_peer_pick(hs, 4, "5", "busybox", 7, c, 8, &chosen);
	assert_int_equal(n, 1);
	assert_string_equal(c[0].node, "11111111111111111111111111111111");
	assert_string_equal(chosen.manifest, D("1"));
	/* nobody has it; nobody alive but self has it */
	assert_int_equal(mts_peer_pick(hs, 4, "5", "redis", 0, c, 8, &chosen),
	    0);
	assert_int_equal(mts_peer_pick(hs, 4,
	                     "11111111111111111111111111111111", "busybox", 0,
	                     c, 8, &chosen),
	    0);
	assert_int_equal(mts_peer_pick(hs, 0, "5", "busybox", 0, c, 8, &chosen),
	    0);
}

/* Entries of one age: every node chooses the same manifest. */
static void
test_pick_tie(void **state)
{
	struct mts_held a = new_bb, b = new_bb;
	struct mts_holder hs[2] = {
		{ "11111111111111111111111111111111", 1, &a, 1 },
		{ "22222222222222222222222222222222", 1, &b, 1 },
	};
	struct mts_peer_cand c[2];
	struct mts_held chosen;

	snprintf(b.manifest, sizeof(b.manifest), "%s", D("9"));
	assert_int_equal(mts_peer_pick(hs, 2, "3", "busybox", 0, c, 2, &chosen),
	    1);
	assert_string_equal(chosen.manifest, D("9"));
	hs[0].held = &b;
	hs[1].held = &a;
	assert_int_equal(mts_peer_pick(hs, 2, "3", "busybox", 0, c, 2, &chosen),
	    1);
	assert_string_equal(chosen.manifest, D("9"));
	assert_string_equal(c[0].node, "11111111111111111111111111111111");
}

static void
test_tries(void **state)
{
	assert_int_equal(mts_peer_tries(1), MTS_PEER_MIN_TRIES);
	assert_int_equal(mts_peer_tries(2), 4);
	assert_int_equal(mts_peer_tries(10), 20);
}

static void
test_pace(void **state)
{
	struct mts_pace p;

	/* unlimited */
	mts_pace_init(&p, 0, 0);
	mts_pace_took(&p, 1 << 30, 0);
	assert_int_equal(mts_pace_wait(&p, MTS_PEER_CHUNK, 0), 0);
	/* 1 MiB/s: the first chunk at once, the next after about a second */
	mts_pace_init(&p, 1 << 20, 1000);
	assert_int_equal(mts_pace_wait(&p, MTS_PEER_CHUNK, 1000), 0);
	mts_pace_took(&p, MTS_PEER_CHUNK, 1000);
	assert_in_range(mts_pace_wait(&p, MTS_PEER_CHUNK, 1000), 990, 1000);
	assert_in_range(mts_pace_wait(&p, MTS_PEER_CHUNK, 1500), 490, 500);
	assert_int_equal(mts_pace_wait(&p, MTS_PEER_CHUNK, 2000), 0);
	/* a long pause never saves up more than one chunk */
	mts_pace_took(&p, MTS_PEER_CHUNK, 2000);
	assert_int_equal(mts_pace_wait(&p, MTS_PEER_CHUNK, 100000), 0);
	mts_pace_took(&p, MTS_PEER_CHUNK, 100000);
	assert_true(mts_pace_wait(&p, MTS_PEER_CHUNK, 100000) > 900);
	/* ten chunks at 10 MiB/s take about a second */
	{
		mts_time_t now = 0;
		int i;

		mts_pace_init(&p, 10 << 20, now);
		for (i = 0; i < 10; i++) {
			now += mts_pace_wait(&p, MTS_PEER_CHUNK, now);
			mts_pace_took(&p, MTS_PEER_CHUNK, now);
		}
		assert_in_range(now, 850, 950);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_has_registry),
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_name_match),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_pick_tie),
		cmocka_unit_test(test_tries),
		cmocka_unit_test(test_pace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
