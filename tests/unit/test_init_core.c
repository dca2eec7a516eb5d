/* test_init_core.c: mts-init's supervisor core — dependency order, readiness, backoff growth and cap, permanent failures, ordered shutdown, impossible cells. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "init/init_core.h"
#include "mtserr.h"

static const struct mts_sup_params P = {
	.restart = SUP_RESTART_ALWAYS,
	.backoff_min_ms = 100,
	.backoff_max_ms = 30000,
	.stable_ms = 10000,
	.grace_ms = 5000,
	.ready_timeout_ms = 2000,
};

struct fixture {
	struct mts_init_core c;
	struct mts_init_fxlist fx;
};

/* Three agents: a; b after a; c after b. */
static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	size_t a = 0, b = 1;

	mts_init_add(&f->c, "a", &P);
	mts_init_add(&f->c, "b", &P);
	mts_init_add(&f->c, "c", &P);
	mts_init_set_after(&f->c, 1, &a, 1);
	mts_init_set_after(&f->c, 2, &b, 1);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	mts_init_core_free(&f->c);
	mts_init_fx_free(&f->fx);
	free(f);
	return 0;
}

static void
ev(struct fixture *f, size_t i, enum mts_sup_event e, enum mts_sup_exit x,
    mts_time_t now)
{
	f->fx.n = 0;
	assert_int_equal(mts_init_event(&f->c, i, e, x, now, &f->fx), 0);
}

/* Number of effects of a type for an agent (SIZE_MAX: any agent). */
static int
count(const struct fixture *f, enum mts_init_fx_type t, size_t agent)
{
	size_t k;
	int n = 0;

	for (k = 0; k < f->fx.n; k++)
		if (f->fx.v[k].type == t &&
		    (agent == SIZE_MAX || f->fx.v[k].agent == agent))
			n++;
	return n;
}

static void
start_all(struct fixture *f)
{
	size_t i;

	for (i = 0; i < 3; i++)
		ev(f, i, SEV_START, 0, 0);
}

static void
test_dependency_order(void **state)
{
	struct fixture *f = *state;

	ev(f, 2, SEV_START, 0, 0);
	assert_int_equal(f->c.s[2].st, SUP_WAITING);
	assert_int_equal(count(f, FX_SPAWN, SIZE_MAX), 0);
	ev(f, 1, SEV_START, 0, 0);
	ev(f, 0, SEV_START, 0, 0);
	assert_int_equal(count(f, FX_SPAWN, 0), 1);
	assert_int_equal(count(f, FX_SPAWN, 1), 0);
	ev(f, 0, SEV_READY, 0, 10);
	assert_int_equal(count(f, FX_SPAWN, 1), 1);
	assert_int_equal(count(f, FX_SPAWN, 2), 0);
	ev(f, 1, SEV_READY, 0, 20);
	assert_int_equal(count(f, FX_SPAWN, 2), 1);
	ev(f, 2, SEV_READY, 0, 30);
	assert_true(mts_init_all_up(&f->c));
}

static void
bring_up(struct fixture *f)
{
	start_all(f);
	ev(f, 0, SEV_READY, 0, 1);
	ev(f, 1, SEV_READY, 0, 2);
	ev(f, 2, SEV_READY, 0, 3);
}

static void
test_backoff_grows_and_caps(void **state)
{
	struct fixture *f = *state;
	int64_t want[] = { 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600,
		30000, 30000 };
	mts_time_t now = 100;
	size_t k;

	bring_up(f);
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		ev(f, 0, SEV_EXIT, SUP_EXIT_FAILURE, now);
		assert_int_equal(f->c.s[0].st, SUP_BACKOFF);
		assert_int_equal(count(f, FX_BACKOFF, 0), 1);
		assert_int_equal(f->c.s[0].backoff_ms, want[k]);
		assert_int_equal(mts_init_next_deadline(&f->c), now + want[k]);
		now += want[k];
		f->fx.n = 0;
		mts_init_tick(&f->c, now, &f->fx);
		assert_int_equal(count(f, FX_SPAWN, 0), 1);
		assert_int_equal(f->c.s[0].st, SUP_STARTING);
		now += 10; /* crashes quickly again */
	}
	assert_int_equal(f->c.s[0].restarts, sizeof(want) / sizeof(want[0]));
	/* A stable run resets the delay. */
	ev(f, 0, SEV_READY, 0, now);
	ev(f, 0, SEV_EXIT, SUP_EXIT_FAILURE, now + P.stable_ms);
	assert_int_equal(f->c.s[0].backoff_ms, 100);
}

static void
test_backoff_pure(void **state)
{
	assert_int_equal(mts_init_backoff(0, 5, &P), 100);
	assert_int_equal(mts_init_backoff(100, 5, &P), 200);
	assert_int_equal(mts_init_backoff(20000, 5, &P), 30000);
	assert_int_equal(mts_init_backoff(30000, 5, &P), 30000);
	assert_int_equal(mts_init_backoff(30000, 10000, &P), 100);
}

static void
test_permanent_not_restarted(void **state)
{
	struct fixture *f = *state;

	bring_up(f);
	ev(f, 2, SEV_EXIT, SUP_EXIT_PERMANENT, 50);
	assert_int_equal(f->c.s[2].st, SUP_FAILED);
	assert_int_equal(count(f, FX_FAILED, 2), 1);
	assert_int_equal(mts_init_next_deadline(&f->c), MTS_TIME_NEVER);
	mts_init_tick(&f->c, 1000000, &f->fx);
	assert_int_equal(f->c.s[2].st, SUP_FAILED);
	/* An operator start clears it. */
	ev(f, 2, SEV_START, 0, 60);
	assert_int_equal(count(f, FX_SPAWN, 2), 1);
}

static void
test_restart_policies(void **state)
{
	struct fixture *f = *state;

	f->c.s[2].p.restart = SUP_RESTART_ON_FAILURE;
	f->c.s[1].p.restart = SUP_RESTART_NEVER;
	bring_up(f);
	ev(f, 2, SEV_EXIT, SUP_EXIT_CLEAN, 10);
	assert_int_equal(f->c.s[2].st, SUP_DOWN);
	ev(f, 1, SEV_EXIT, SUP_EXIT_FAILURE, 10);
	assert_int_equal(f->c.s[1].st, SUP_DOWN);
}

static void
test_shutdown_reverse_order(void **state)
{
	struct fixture *f = *state;

	bring_up(f);
	f->fx.n = 0;
	mts_init_shutdown(&f->c, 100, &f->fx);
	assert_int_equal(f->fx.n, 1);
	assert_int_equal(f->fx.v[0].agent, 2);
	assert_int_equal(f->fx.v[0].sig, SIGTERM);
	ev(f, 2, SEV_EXIT, SUP_EXIT_CLEAN, 110);
	assert_int_equal(count(f, FX_SIGNAL, 1), 1);
	assert_int_equal(count(f, FX_SIGNAL, 0), 0);
	/* b ignores SIGTERM: SIGKILL after the grace period. */
	f->fx.n = 0;
	mts_init_tick(&f->c, 110 + P.grace_ms, &f->fx);
	assert_int_equal(f->fx.n, 1);
	assert_int_equal(f->fx.v[0].sig, SIGKILL);
	ev(f, 1, SEV_EXIT, SUP_EXIT_FAILURE, 6000);
	assert_int_equal(f->c.s[1].st, SUP_DOWN); /* not restarted */
	assert_int_equal(count(f, FX_SIGNAL, 0), 1);
	ev(f, 0, SEV_EXIT, SUP_EXIT_CLEAN, 6010);
	assert_true(mts_init_all_down(&f->c));
	assert_int_equal(count(f, FX_SPAWN, SIZE_MAX), 0);
}

static void
test_ready_timeout_kills(void **state)
{
	struct fixture *f = *state;

	ev(f, 0, SEV_START, 0, 0);
	f->fx.n = 0;
	mts_init_tick(&f->c, P.ready_timeout_ms, &f->fx);
	assert_int_equal(count(f, FX_SIGNAL, 0), 1);
	assert_int_equal(f->fx.v[0].sig, SIGKILL);
	ev(f, 0, SEV_EXIT, SUP_EXIT_FAILURE, P.ready_timeout_ms + 1);
	assert_int_equal(f->c.s[0].st, SUP_BACKOFF);
}

static void
test_operator_stop_restart(void **state)
{
	struct fixture *f = *state;

	bring_up(f);
	ev(f, 1, SEV_STOP, 0, 10);
	assert_int_equal(f->c.s[1].st, SUP_STOPPING);
	ev(f, 1, SEV_EXIT, SUP_EXIT_CLEAN, 20);
	assert_int_equal(f->c.s[1].st, SUP_DOWN);
	ev(f, 1, SEV_RESTART, 0, 30);
	assert_int_equal(count(f, FX_SPAWN, 1), 1);
	ev(f, 1, SEV_READY, 0, 40);
	ev(f, 1, SEV_RESTART, 0, 50);
	assert_int_equal(count(f, FX_SIGNAL, 1), 1);
	ev(f, 1, SEV_EXIT, SUP_EXIT_CLEAN, 60);
	assert_int_equal(count(f, FX_SPAWN, 1), 1);
	assert_int_equal(f->c.s[1].restarts, 0);
}

static void
test_impossible_cells(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(mts_init_event(&f->c, 0, SEV_READY, 0, 0, &f->fx),
	    -MTS_ERR_STATE);
	assert_int_equal(mts_init_event(&f->c, 0, SEV_EXIT, 0, 0, &f->fx),
	    -MTS_ERR_STATE);
	assert_int_equal(mts_init_event(&f->c, 7, SEV_START, 0, 0, &f->fx),
	    -MTS_ERR_INVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dependency_order, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_backoff_grows_and_caps,
		    setup, teardown),
		cmocka_unit_test(test_backoff_pure),
		cmocka_unit_test_setup_teardown(test_permanent_not_restarted,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_policies, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_reverse_order,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_ready_timeout_kills, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_operator_stop_restart,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_impossible_cells, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
