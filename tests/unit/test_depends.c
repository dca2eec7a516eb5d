/* test_depends.c: depends_on at first deploy — a 3-service chain started in dependency order (healthy, started), every replica counted, completed_successfully with a migration job that succeeds or fails, optional and missing dependencies, services that ran before no longer held back, the condition names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/reconciled/depends_core.h"

static void
decide(struct mts_dep_service *v, size_t n, struct mts_dep_verdict *out)
{
	memset(out, 0xa5, n * sizeof(*out)); /* every field must be set */
	mts_dep_decide(v, n, out);
}

/* web needs api healthy, api needs db healthy: they start in that
 * order, each only once the one before has every replica healthy. */
static void
test_chain(void **state)
{
	const struct mts_dep web_d[] = { { "s_api", DEP_HEALTHY, 1 } },
	                     api_d[] = { { "s_db", DEP_HEALTHY, 1 } };
	struct mts_dep_service v[] = {
		{ .name = "s_web", .deps = web_d, .ndeps = 1, .desired = 2 },
		{ .name = "s_api", .deps = api_d, .ndeps = 1, .desired = 2 },
		{ .name = "s_db", .desired = 1 },
	};
	struct mts_dep_verdict o[3];

	decide(v, 3, o);
	assert_false(o[0].may_start);
	assert_false(o[1].may_start);
	assert_true(o[2].may_start);
	assert_string_equal(o[2].why, "");
	assert_string_equal(o[1].why,
	    "waiting for s_db to be healthy (0 of 1)");
	v[2].running = 1; /* running is not healthy */
	decide(v, 3, o);
	assert_false(o[1].may_start);
	v[2].healthy = 1;
	decide(v, 3, o);
	assert_true(o[1].may_start);
	assert_false(o[0].may_start);
	v[1].running = 2;
	v[1].healthy = 1; /* one of two replicas */
	decide(v, 3, o);
	assert_false(o[0].may_start);
	assert_string_equal(o[0].why,
	    "waiting for s_api to be healthy (1 of 2)");
	v[1].healthy = 2;
	decide(v, 3, o);
	assert_true(o[0].may_start);
}

static void
test_started(void **state)
{
	const struct mts_dep d[] = { { "s_db", DEP_STARTED, 1 } };
	struct mts_dep_service v[] = {
		{ .name = "s_web", .deps = d, .ndeps = 1, .desired = 1 },
		{ .name = "s_db", .desired = 0 }, /* 0 still wants one */
	};
	struct mts_dep_verdict o[2];

	decide(v, 2, o);
	assert_false(o[0].may_start);
	assert_string_equal(o[0].why,
	    "waiting for s_db to be started (0 of 1)");
	v[1].running = 1;
	decide(v, 2, o);
	assert_true(o[0].may_start);
	v[1].running = 0; /* a job that already finished counts too */
	v[1].completed = 1;
	decide(v, 2, o);
	assert_true(o[0].may_start);
}

static void
test_completed(void **state)
{
	const struct mts_dep d[] = { { "s_migrate", DEP_COMPLETED, 1 } };
	struct mts_dep_service v[] = {
		{ .name = "s_app", .deps = d, .ndeps = 1, .desired = 3 },
		{ .name = "s_migrate",
		    .desired = 1,
		    .running = 1,
		    .healthy = 1 },
	};
	struct mts_dep_verdict o[2];

	decide(v, 2, o);
	assert_false(o[0].may_start); /* running is not completed */
	v[1].running = v[1].healthy = 0;
	v[1].failed = 1;
	decide(v, 2, o);
	assert_false(o[0].may_start);
	assert_string_equal(o[0].why,
	    "waiting for s_migrate: 1 of its tasks failed (it must complete "
	    "successfully)");
	v[1].completed = 1;
	decide(v, 2, o);
	assert_true(o[0].may_start);
}

static void
test_missing_and_optional(void **state)
{
	const struct mts_dep d[] = { { "s_cache", DEP_HEALTHY, 0 },
		{ "s_db", DEP_STARTED, 1 } };
	struct mts_dep_service v[] = {
		{ .name = "s_web", .deps = d, .ndeps = 2, .desired = 1 },
	};
	struct mts_dep_verdict o[1];

	decide(v, 1, o);
	assert_false(o[0].may_start);
	assert_string_equal(o[0].why, "waiting for s_db: not deployed");
}

/* A service that has run a task is past its first deploy: a restart or
 * an update of it or of its dependencies does not wait again. */
static void
test_started_before(void **state)
{
	const struct mts_dep d[] = { { "s_db", DEP_HEALTHY, 1 } };
	struct mts_dep_service v[] = {
		{ .name = "s_web",
		    .deps = d,
		    .ndeps = 1,
		    .desired = 1,
		    .started_before = 1 },
		{ .name = "s_db", .desired = 1 },
	};
	struct mts_dep_verdict o[2];

	decide(v, 2, o);
	assert_true(o[0].may_start);
	assert_string_equal(o[0].why, "");
	v[0].started_before = 0;
	decide(v, 2, o);
	assert_false(o[0].may_start);
}

static void
test_names(void **state)
{
	enum mts_dep_cond c;

	assert_int_equal(mts_dep_cond_parse("service_healthy", &c), 0);
	assert_int_equal(c, DEP_HEALTHY);
	assert_int_equal(mts_dep_cond_parse("service_completed_successfully",
	                     &c),
	    0);
	assert_int_equal(c, DEP_COMPLETED);
	assert_int_equal(mts_dep_cond_parse("", &c), 0);
	assert_int_equal(c, DEP_STARTED);
	assert_int_equal(mts_dep_cond_parse("service_started", &c), 0);
	assert_int_equal(c, DEP_STARTED);
	assert_int_equal(mts_dep_cond_parse("service_happy", &c), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_started),
		cmocka_unit_test(test_completed),
		cmocka_unit_test(test_missing_and_optional),
		cmocka_unit_test(test_started_before),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
