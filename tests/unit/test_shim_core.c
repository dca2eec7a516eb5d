/* test_shim_core.c: the shim's task state machine — starts, exits, stop grace, restart policies with backoff, health checks, a container lost while the node was down (held, released, crash-loop backoff kept), impossible events. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agents/shim/shim_core.h"
#include "mtserr.h"

static int
has(const struct mts_effects *fx, enum mts_effect_kind k, int sig)
{
	size_t i;

	for (i = 0; i < fx->n; i++)
		if (fx->e[i].kind == k &&
		    (k != MTS_FX_SIGNAL || fx->e[i].sig == sig))
			return 1;
	return 0;
}

static int
step(struct mts_task *t, struct mts_task_ev ev, mts_time_t now,
    struct mts_effects *fx)
{
	fx->n = 0;
	return mts_task_step(t, &ev, now, fx);
}

static void
start(struct mts_task *t, const struct mts_task_policy *p, mts_time_t now)
{
	struct mts_effects fx = { .n = 0 };

	mts_task_init(t, "t1", p, now, &fx);
	assert_true(has(&fx, MTS_FX_START, 0));
	assert_int_equal(t->state, MTS_TASK_CREATED);
	assert_int_equal(step(t,
	                     (struct mts_task_ev){ .type = MTS_EV_STARTED,
	                         .pid = 42 },
	                     now, &fx),
	    0);
	assert_int_equal(t->state, MTS_TASK_RUNNING);
	assert_int_equal(t->pid, 42);
}

static void
test_exit_no_restart(void **st)
{
	struct mts_task_policy p = { .grace = 1000 };
	struct mts_effects fx;
	struct mts_task t;

	start(&t, &p, 0);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT, .code = 3 }, 10,
	    &fx);
	assert_int_equal(t.state, MTS_TASK_EXITED);
	assert_int_equal(t.exit_code, 3);
	assert_true(has(&fx, MTS_FX_DONE, 0));
	assert_true(has(&fx, MTS_FX_SAVE, 0));
	assert_int_equal(mts_task_next(&t), MTS_TIME_NEVER);
}

static void
test_stop_grace(void **st)
{
	struct mts_task_policy p = { .grace = 1000 };
	struct mts_effects fx;
	struct mts_task t;

	start(&t, &p, 0);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_STOP }, 100, &fx);
	assert_int_equal(t.state, MTS_TASK_STOPPING);
	assert_true(has(&fx, MTS_FX_SIGNAL, SIGTERM));
	assert_int_equal(mts_task_next(&t), 1100);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 1099, &fx);
	assert_false(has(&fx, MTS_FX_SIGNAL, SIGKILL));
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 1100, &fx);
	assert_true(has(&fx, MTS_FX_SIGNAL, SIGKILL));
	step(&t,
	    (struct mts_task_ev){ .type = MTS_EV_EXIT,
	        .code = 137,
	        .sig = SIGKILL },
	    1110, &fx);
	assert_int_equal(t.state, MTS_TASK_EXITED);
	assert_int_equal(t.signal, SIGKILL);
	assert_true(t.want_stop);
	/* A stop with a grace of zero kills at once. */
	start(&t, &p, 0);
	step(&t,
	    (struct mts_task_ev){ .type = MTS_EV_STOP,
	        .has_grace = 1,
	        .grace = 0 },
	    5, &fx);
	assert_true(has(&fx, MTS_FX_SIGNAL, SIGKILL));
}

static void
test_stopped_task_is_not_restarted(void **st)
{
	struct mts_task_policy p = { .grace = 1000,
		.restart = MTS_RESTART_ANY };
	struct mts_effects fx;
	struct mts_task t;

	start(&t, &p, 0);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_STOP }, 0, &fx);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT, .code = 0 }, 10,
	    &fx);
	assert_int_equal(t.state, MTS_TASK_EXITED);
	assert_false(has(&fx, MTS_FX_START, 0));
}

static void
test_on_failure_backoff(void **st)
{
	struct mts_task_policy p = { .restart = MTS_RESTART_ON_FAILURE,
		.max_attempts = 3,
		.delay = 100,
		.max_delay = 300 };
	mts_time_t now = 0, want[] = { 100, 200, 300 };
	struct mts_effects fx;
	struct mts_task t;
	int i;

	start(&t, &p, now);
	for (i = 0; i < 3; i++) {
		step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT, .code = 1 },
		    now, &fx);
		assert_int_equal(t.state, MTS_TASK_RESTARTING);
		assert_int_equal(mts_task_next(&t) - now, want[i]);
		step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK },
		    now + want[i] - 1, &fx);
		assert_false(has(&fx, MTS_FX_START, 0));
		now += want[i];
		step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, now, &fx);
		assert_true(has(&fx, MTS_FX_START, 0));
		assert_int_equal(t.restarts, (uint32_t)i + 1);
		step(&t,
		    (struct mts_task_ev){ .type = MTS_EV_STARTED, .pid = 7 },
		    now, &fx);
	}
	step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT, .code = 1 }, now,
	    &fx);
	assert_int_equal(t.state, MTS_TASK_FAILED);
	assert_true(has(&fx, MTS_FX_DONE, 0));
	/* A clean exit is not a failure. */
	start(&t, &p, 0);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT, .code = 0 }, 1,
	    &fx);
	assert_int_equal(t.state, MTS_TASK_EXITED);
	/* An OOM kill is. */
	start(&t, &p, 0);
	step(&t,
	    (struct mts_task_ev){ .type = MTS_EV_EXIT,
	        .code = 137,
	        .sig = 9,
	        .oom = 1 },
	    1, &fx);
	assert_int_equal(t.state, MTS_TASK_RESTARTING);
}

/* Compose's window: max_attempts counts the restarts since the last run
 * that lasted the window, and so does the backoff; without a window every
 * restart counts. */
static mts_time_t
run_for(struct mts_task *t, mts_time_t now, mts_time_t ran,
    enum mts_task_state want, mts_time_t delay)
{
	struct mts_effects fx;

	now += ran;
	step(t, (struct mts_task_ev){ .type = MTS_EV_EXIT, .code = 1 }, now,
	    &fx);
	assert_int_equal(t->state, want);
	if (want != MTS_TASK_RESTARTING)
		return now;
	assert_int_equal(mts_task_next(t) - now, delay);
	now = mts_task_next(t);
	step(t, (struct mts_task_ev){ .type = MTS_EV_TICK }, now, &fx);
	step(t, (struct mts_task_ev){ .type = MTS_EV_STARTED, .pid = 7 }, now,
	    &fx);
	return now;
}

static void
test_restart_window(void **st)
{
	struct mts_task_policy p = { .restart = MTS_RESTART_ON_FAILURE,
		.max_attempts = 2,
		.delay = 100,
		.window = 5000 };
	struct mts_task t;
	mts_time_t now = 0;

	start(&t, &p, now);
	now = run_for(&t, now, 1000, MTS_TASK_RESTARTING, 100);
	now = run_for(&t, now, 1000, MTS_TASK_RESTARTING, 200);
	assert_int_equal(t.streak, 2);
	/* a run of the window forgives both: restarted, the first delay */
	now = run_for(&t, now, 5000, MTS_TASK_RESTARTING, 100);
	assert_int_equal(t.streak, 1);
	now = run_for(&t, now, 1000, MTS_TASK_RESTARTING, 200);
	/* 2 restarts since the long run, and a run just short of the
	 * window: the policy gives up */
	now = run_for(&t, now, 4999, MTS_TASK_FAILED, 0);
	assert_int_equal(t.restarts, 4);
	/* no window: however long the runs, every restart counts */
	p.window = 0;
	start(&t, &p, 0);
	now = run_for(&t, 0, 60000, MTS_TASK_RESTARTING, 100);
	now = run_for(&t, now, 60000, MTS_TASK_RESTARTING, 200);
	(void)run_for(&t, now, 60000, MTS_TASK_FAILED, 0);
}

static void
test_backoff_values(void **st)
{
	struct mts_task_policy p = { .delay = 0, .max_delay = 0 };

	assert_int_equal(mts_task_backoff(&p, 0), 100);
	assert_int_equal(mts_task_backoff(&p, 3), 800);
	assert_int_equal(mts_task_backoff(&p, 60), 30000);
	p.delay = 500;
	p.max_delay = 1200;
	assert_int_equal(mts_task_backoff(&p, 1), 1000);
	assert_int_equal(mts_task_backoff(&p, 2), 1200);
}

static void
test_start_failure(void **st)
{
	struct mts_task_policy p = { .restart = MTS_RESTART_NONE };
	struct mts_effects fx = { .n = 0 };
	struct mts_task t;

	mts_task_init(&t, "t", &p, 0, &fx);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_START_FAILED }, 1, &fx);
	assert_int_equal(t.state, MTS_TASK_EXITED);
	assert_int_equal(t.exit_code, 127);
	p.restart = MTS_RESTART_ON_FAILURE;
	p.max_attempts = 1;
	mts_task_init(&t, "t", &p, 0, &fx);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_START_FAILED }, 1, &fx);
	assert_int_equal(t.state, MTS_TASK_RESTARTING);
}

static void
test_stop_while_restarting(void **st)
{
	struct mts_task_policy p = { .restart = MTS_RESTART_ANY,
		.delay = 1000 };
	struct mts_effects fx;
	struct mts_task t;

	start(&t, &p, 0);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT, .code = 0 }, 1,
	    &fx);
	assert_int_equal(t.state, MTS_TASK_RESTARTING);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_STOP }, 2, &fx);
	assert_int_equal(t.state, MTS_TASK_EXITED);
	assert_true(has(&fx, MTS_FX_DONE, 0));
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 5000, &fx);
	assert_false(has(&fx, MTS_FX_START, 0));
}

static void
test_health(void **st)
{
	struct mts_task_policy p = { .health = 1,
		.hc_interval = 100,
		.hc_timeout = 50,
		.hc_retries = 2,
		.hc_start_period = 250 };
	struct mts_effects fx;
	struct mts_task t;

	start(&t, &p, 0);
	assert_int_equal(t.health, MTS_HEALTH_STARTING);
	assert_int_equal(mts_task_next(&t), 100);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 100, &fx);
	assert_true(has(&fx, MTS_FX_PROBE, 0));
	/* While a probe runs no other is started. */
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 300, &fx);
	assert_false(has(&fx, MTS_FX_PROBE, 0));
	/* Failures in the start period do not count. */
	step(&t, (struct mts_task_ev){ .type = MTS_EV_PROBE, .ok = 0 }, 120,
	    &fx);
	assert_int_equal(t.health_failures, 0);
	assert_int_equal(t.health, MTS_HEALTH_STARTING);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 300, &fx);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_PROBE, .ok = 1 }, 310,
	    &fx);
	assert_int_equal(t.health, MTS_HEALTH_HEALTHY);
	assert_true(has(&fx, MTS_FX_SAVE, 0));
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 400, &fx);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_PROBE, .ok = 0 }, 410,
	    &fx);
	assert_int_equal(t.health, MTS_HEALTH_HEALTHY);
	assert_int_equal(t.health_failures, 1);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 500, &fx);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_PROBE, .ok = 0 }, 510,
	    &fx);
	assert_int_equal(t.health, MTS_HEALTH_UNHEALTHY);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 600, &fx);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_PROBE, .ok = 1 }, 610,
	    &fx);
	assert_int_equal(t.health, MTS_HEALTH_HEALTHY);
	assert_int_equal(t.health_failures, 0);
}

/* A container that ended while the node was down is not a crash: held
 * (a task of reconciled) it never restarts until released, and then
 * restarts at once with the streak untouched; not held, it restarts at
 * once. */
static void
test_lost_held_until_released(void **st)
{
	struct mts_task_policy p = { .restart = MTS_RESTART_ANY,
		.max_attempts = 2,
		.delay = 15000,
		.max_delay = 30000,
		.window = 10000 };
	struct mts_effects fx;
	struct mts_task t;

	start(&t, &p, 0);
	assert_int_equal(step(&t,
	                     (struct mts_task_ev){ .type = MTS_EV_LOST,
	                         .hold = 1 },
	                     100, &fx),
	    0);
	assert_int_equal(t.state, MTS_TASK_RESTARTING);
	assert_true(t.held);
	assert_int_equal(mts_task_next(&t), MTS_TIME_NEVER);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 1000000, &fx);
	assert_false(has(&fx, MTS_FX_START, 0));
	assert_int_equal(t.state, MTS_TASK_RESTARTING);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_RELEASE }, 2000000, &fx);
	assert_false(t.held);
	assert_int_equal(mts_task_next(&t), 2000000); /* no backoff */
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, 2000000, &fx);
	assert_true(has(&fx, MTS_FX_START, 0));
	assert_int_equal(t.restarts, 1);
	assert_int_equal(t.streak, 0); /* not counted against max_attempts */
	/* a second release changes nothing */
	assert_int_equal(step(&t,
	                     (struct mts_task_ev){ .type = MTS_EV_RELEASE },
	                     2000001, &fx),
	    0);
	assert_int_equal(fx.n, 0);
	/* not held: restarts at once */
	start(&t, &p, 0);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_LOST }, 500, &fx);
	assert_false(t.held);
	assert_int_equal(mts_task_next(&t), 500);
	/* held, then stopped: done, never started */
	start(&t, &p, 0);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_LOST, .hold = 1 }, 500,
	    &fx);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_STOP }, 600, &fx);
	assert_int_equal(t.state, MTS_TASK_EXITED);
	assert_false(t.held);
	assert_int_equal(step(&t, (struct mts_task_ev){ .type = MTS_EV_LOST },
	                     700, &fx),
	    -MTS_ERR_STATE);
	/* no restart policy, or stopping when lost: done */
	p.restart = MTS_RESTART_NONE;
	start(&t, &p, 0);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_LOST, .hold = 1 }, 500,
	    &fx);
	assert_int_equal(t.state, MTS_TASK_EXITED);
}

/* A task that crash-looped before the node went down keeps its backoff
 * (and its streak toward max_attempts) when it comes back. */
static void
test_lost_keeps_crash_loop(void **st)
{
	struct mts_task_policy p = { .restart = MTS_RESTART_ON_FAILURE,
		.max_attempts = 5,
		.delay = 100,
		.max_delay = 10000 };
	mts_time_t now = 0;
	struct mts_effects fx;
	struct mts_task t;
	int i;

	start(&t, &p, now);
	for (i = 0; i < 3; i++) { /* three crashes, three restarts */
		step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT, .code = 1 },
		    now, &fx);
		now = mts_task_next(&t);
		step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, now, &fx);
		step(&t,
		    (struct mts_task_ev){ .type = MTS_EV_STARTED, .pid = 7 },
		    now, &fx);
	}
	assert_int_equal(t.streak, 3);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_LOST, .hold = 1 }, now,
	    &fx);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_RELEASE }, now, &fx);
	assert_int_equal(mts_task_next(&t) - now, 800); /* delay * 2^3 */
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, now + 800, &fx);
	assert_true(has(&fx, MTS_FX_START, 0));
	assert_int_equal(t.streak, 3);
	/* lost between two crash restarts: the crash's backoff stands */
	step(&t, (struct mts_task_ev){ .type = MTS_EV_STARTED, .pid = 8 },
	    now + 800, &fx);
	now += 800;
	step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT, .code = 1 }, now,
	    &fx);
	assert_int_equal(mts_task_next(&t) - now, 800);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_LOST }, now + 10, &fx);
	assert_int_equal(mts_task_next(&t) - (now + 10), 800);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_TICK }, now + 810, &fx);
	assert_int_equal(t.streak, 4); /* that restart was a crash's */
}

static void
test_impossible_cells(void **st)
{
	struct mts_task_policy p = { .grace = 10 };
	struct mts_effects fx;
	struct mts_task t;

	start(&t, &p, 0);
	assert_int_equal(step(&t,
	                     (struct mts_task_ev){ .type = MTS_EV_STARTED }, 1,
	                     &fx),
	    -MTS_ERR_STATE);
	assert_int_equal(t.state, MTS_TASK_RUNNING);
	step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT }, 1, &fx);
	assert_int_equal(step(&t, (struct mts_task_ev){ .type = MTS_EV_EXIT },
	                     2, &fx),
	    -MTS_ERR_STATE);
	assert_int_equal(step(&t, (struct mts_task_ev){ .type = 99 }, 2, &fx),
	    -MTS_ERR_INVAL);
	assert_int_equal(fx.n, 0);
}

static void
test_names(void **st)
{
	enum mts_task_state s;
	enum mts_restart_cond c;

	assert_int_equal(mts_task_state_parse("restarting", &s), 0);
	assert_int_equal(s, MTS_TASK_RESTARTING);
	assert_string_equal(mts_task_state_name(MTS_TASK_FAILED), "failed");
	assert_int_equal(mts_task_state_parse("zombie", &s), -MTS_ERR_INVAL);
	assert_int_equal(mts_restart_parse("on-failure", &c), 0);
	assert_int_equal(c, MTS_RESTART_ON_FAILURE);
	assert_int_equal(mts_restart_parse("always", &c), 0);
	assert_int_equal(c, MTS_RESTART_ANY);
	assert_int_equal(mts_restart_parse("", &c), 0);
	assert_int_equal(c, MTS_RESTART_NONE);
	assert_int_equal(mts_restart_parse("sometimes", &c), -MTS_ERR_INVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_no_restart),
		cmocka_unit_test(test_stop_grace),
		cmocka_unit_test(test_stopped_task_is_not_restarted),
		cmocka_unit_test(test_on_failure_backoff),
		cmocka_unit_test(test_backoff_values),
		cmocka_unit_test(test_start_failure),
		cmocka_unit_test(test_stop_while_restarting),
		cmocka_unit_test(test_restart_window),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_lost_held_until_released),
		cmocka_unit_test(test_lost_keeps_crash_loop),
		cmocka_unit_test(test_impossible_cells),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
