/* test_update.c: the rolling update core driven by a small simulated cluster — every update_config parameter (parallelism, delay, order, monitor, max_failure_ratio, failure_action), rollback_config, pause and resume, canaries with promote, auto_promote and auto_revert, failures that never turn healthy, an owner dying mid-batch, versions that supersede. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/reconciled/update_core.h"
#include "event.h"

#define MAXT 256
#define TICK 100

/* How tasks of one spec behave. */
enum behaviour {
	B_GOOD,      /* healthy `healthy_after` ms after starting */
	B_UNHEALTHY, /* turns unhealthy after healthy_after */
	B_NEVER,     /* stays starting */
	B_CRASH,     /* exits after healthy_after */
};

struct sim {
	struct mts_up_service svc;
	int spec, previous; /* spec ids of the record */
	enum behaviour beh[8];
	uint64_t healthy_after;
	struct mts_up_task t[MAXT];
	int tspec[MAXT];
	char ids[MAXT][16];
	size_t n;
	int next_id;
	struct mts_up_status st;
	uint64_t now;
	/* what was seen */
	uint32_t min_healthy, max_live, min_live;
	unsigned counts[16]; /* actions by kind */
	uint64_t batch_at[32];
	unsigned nbatch;
	int rollbacks_written;
	unsigned stops_with_batch; /* steps that ended a batch and stopped */
	char stop_why[MTS_UP_MSG_MAX]; /* the last UP_STOP's reason */
};

static void
sim_init(struct sim *s, uint32_t replicas)
{
	memset(s, 0, sizeof(*s));
	mts_up_params_default(&s->svc.update);
	mts_up_params_default(&s->svc.rollback_cfg);
	s->svc.version = 1;
	s->svc.replicas = replicas;
	s->spec = 1;
	s->healthy_after = 1000;
	s->now = 1000000;
}

static void
add_task(struct sim *s, int spec, int running)
{
	struct mts_up_task *t = &s->t[s->n];

	assert_true(s->n < MAXT);
	snprintf(s->ids[s->n], sizeof(s->ids[0]), "t%03d", s->next_id++);
	t->id = s->ids[s->n];
	t->state = running ? UP_TASK_RUNNING : UP_TASK_PENDING;
	t->health = running ? UP_HEALTH_HEALTHY : UP_HEALTH_STARTING;
	t->desired_running = 1;
	t->started_ms = s->now;
	t->version = s->svc.version;
	s->tspec[s->n++] = spec;
}

/* A service running `replicas` healthy tasks of spec 1, then a deploy of
 * spec 2 (version 2, spec 1 kept as previous). */
static void
sim_deployed(struct sim *s, uint32_t replicas)
{
	uint32_t i;

	sim_init(s, replicas);
	for (i = 0; i < replicas; i++)
		add_task(s, 1, 1);
	s->now += 60000;
	s->svc.version = 2;
	s->spec = 2;
	s->previous = 1;
	s->svc.has_previous = 1;
}

/* The nodes: tasks start, turn healthy, fail, stop, as their spec says. */
static void
sim_nodes(struct sim *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		struct mts_up_task *t = &s->t[i];
		enum behaviour b = s->beh[s->tspec[i]];
		uint64_t age = s->now - t->started_ms;

		if (!t->desired_running) {
			if (t->state == UP_TASK_PENDING ||
			    t->state == UP_TASK_RUNNING)
				t->state = UP_TASK_STOPPED;
			continue;
		}
		if (t->state == UP_TASK_PENDING && age >= TICK)
			t->state = UP_TASK_RUNNING;
		if (t->state != UP_TASK_RUNNING || age < s->healthy_after)
			continue;
		if (b == B_GOOD && t->health == UP_HEALTH_STARTING)
			t->health = UP_HEALTH_HEALTHY;
		else if (b == B_UNHEALTHY)
			t->health = UP_HEALTH_UNHEALTHY;
		else if (b == B_CRASH)
			t->state = UP_TASK_EXITED;
	}
}

static void
sim_observe(struct sim *s)
{
	uint32_t h = 0, live = 0;
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct mts_up_task *t = &s->t[i];

		live +=
		    t->state == UP_TASK_RUNNING || t->state == UP_TASK_PENDING;
		h += t->state == UP_TASK_RUNNING &&
		    t->health == UP_HEALTH_HEALTHY;
	}
	if (h < s->min_healthy)
		s->min_healthy = h;
	if (live > s->max_live)
		s->max_live = live;
	if (live < s->min_live)
		s->min_live = live;
}

/* The glue: the record's spec decides which tasks are current; the
 * actions become tasks, stops and the rollback's write of s/. */
static void
sim_step(struct sim *s, int apply)
{
	struct mts_up_actions a = { 0 };
	size_t i;

	for (i = 0; i < s->n; i++)
		s->t[i].current = s->tspec[i] == s->spec;
	mts_up_step(&s->svc, s->t, s->n, &s->st, s->now, &a);
	for (i = 0; apply && i < a.n; i++)
		if (a.v[i].kind == UP_BATCH_DONE) {
			size_t k;

			for (k = 0; k < a.n; k++)
				if (a.v[k].kind == UP_STOP) {
					s->stops_with_batch++;
					break;
				}
			break;
		}
	for (i = 0; apply && i < a.n; i++) {
		const struct mts_up_action *x = &a.v[i];
		uint32_t k;

		s->counts[x->kind]++;
		if (getenv("UPD_DEBUG"))
			fprintf(stderr,
			    "%llu %s %u %zu %s [%s b%u/%u d%u t%u]\n",
			    (unsigned long long)s->now,
			    mts_up_kind_name(x->kind), x->count, x->task,
			    x->why, mts_up_phase_name(s->st.phase), s->st.batch,
			    s->st.batches, s->st.done, s->st.target);
		if (x->kind == UP_START)
			for (k = 0; k < x->count; k++)
				add_task(s, s->spec, 0);
		else if (x->kind == UP_STOP) {
			assert_false(s->t[x->task].current);
			assert_true(s->t[x->task].desired_running);
			s->t[x->task].desired_running = 0;
			snprintf(s->stop_why, sizeof(s->stop_why), "%s",
			    x->why);
		} else if (x->kind == UP_BATCH_DONE && s->nbatch < 32)
			s->batch_at[s->nbatch++] = s->now;
		else if (x->kind == UP_ROLLBACK) {
			int cur = s->spec;

			s->spec = s->previous;
			s->previous = cur;
			s->svc.version++;
			s->svc.rollback = 1;
			s->rollbacks_written++;
		}
	}
	mts_up_actions_free(&a);
}

/* Runs for at most ms, stopping early once the update is over. */
static void
sim_run(struct sim *s, uint64_t ms)
{
	uint64_t end = s->now + ms;

	s->min_healthy = s->min_live = UINT32_MAX;
	while (s->now < end) {
		sim_step(s, 1);
		sim_observe(s);
		s->now += TICK;
		sim_nodes(s);
		if (s->st.phase == UP_COMPLETED ||
		    s->st.phase == UP_ROLLBACK_COMPLETED)
			break;
	}
}

static uint32_t
live_of(const struct sim *s, int spec, int healthy)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		n += s->tspec[i] == spec && s->t[i].desired_running &&
		    s->t[i].state == UP_TASK_RUNNING &&
		    (!healthy || s->t[i].health == UP_HEALTH_HEALTHY);
	return n;
}

/* service rebalance: the record's version moves two tasks (marked old
 * by the caller, the spec unchanged), one at a time and start-first; a
 * task the rebalance leaves running that is unhealthy meanwhile neither
 * counts as its failure nor holds a batch. */
static void
test_rebalance(void **state)
{
	struct sim s;
	uint32_t i;

	sim_init(&s, 6);
	for (i = 0; i < 6; i++)
		add_task(&s, 1, 1);
	s.now += 60000;
	s.tspec[4] = s.tspec[5] = 7; /* the movers: not current */
	s.t[0].health = UP_HEALTH_UNHEALTHY;
	s.svc.version = 2;
	s.svc.rebalance = 1;
	s.svc.update.parallelism = 1;
	s.svc.update.order = UP_START_FIRST;
	s.svc.update.monitor_ms = 1000;
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.st.failures, 0);
	assert_int_equal(s.counts[UP_PAUSE], 0);
	assert_int_equal(s.counts[UP_START], 2);
	assert_int_equal(s.counts[UP_STOP], 2);
	assert_int_equal(live_of(&s, 7, 0), 0);
	assert_int_equal(live_of(&s, 1, 0), 6);
	assert_int_equal(s.min_healthy, 5); /* start-first: none fewer */
	assert_int_equal(s.max_live, 7);    /* one at a time */
	assert_true(strstr(s.st.message, "rebalance at version 2") != NULL);
	assert_string_equal(s.stop_why,
	    "stopped by service rebalance to version 2");
}

/* Defaults: one at a time, stop-first, each batch healthy for 5 s. */
static void
test_defaults(void **state)
{
	struct mts_up_params p;
	struct sim s;

	mts_up_params_default(&p);
	assert_int_equal(p.parallelism, 1);
	assert_int_equal(p.delay_ms, 0);
	assert_int_equal(p.order, UP_STOP_FIRST);
	assert_int_equal(p.monitor_ms, 5000);
	assert_true(p.max_failure_ratio == 0);
	assert_int_equal(p.failure_action, UP_FAIL_PAUSE);
	sim_deployed(&s, 3);
	sim_run(&s, 120000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.st.batches, 3);
	assert_int_equal(s.st.batch, 3);
	assert_int_equal(s.nbatch, 3);
	assert_int_equal(live_of(&s, 2, 1), 3);
	assert_int_equal(live_of(&s, 1, 0), 0);
	assert_int_equal(s.min_healthy, 2); /* stop-first: one down at a time */
	assert_int_equal(s.max_live, 3);
	assert_int_equal(s.counts[UP_BEGAN], 1);
	assert_int_equal(s.counts[UP_DONE], 1);
	/* each batch waited for health (1 s) plus monitor (5 s) */
	assert_true(s.batch_at[1] - s.batch_at[0] >= 6000);
	assert_true(s.batch_at[2] - s.batch_at[1] >= 6000);
	/* a step once done asks for nothing */
	sim_step(&s, 1);
	assert_int_equal(s.counts[UP_START], 3);
	assert_int_equal(s.counts[UP_STOP], 3);
}

/* The acceptance case: 6 replicas, parallelism 2: never fewer than 4. */
static void
test_parallelism(void **state)
{
	struct sim s;

	sim_deployed(&s, 6);
	s.svc.update.parallelism = 2;
	s.svc.update.monitor_ms = 1000;
	sim_run(&s, 120000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.st.batches, 3);
	assert_int_equal(s.nbatch, 3);
	assert_int_equal(s.min_healthy, 4);
	assert_int_equal(live_of(&s, 2, 1), 6);
	assert_string_equal(s.st.message,
	    "update to version 2 completed: 6 tasks");
	assert_string_equal(s.stop_why, "stopped by the update to version 2");
	/* with no delay, the step that ends a batch starts the next one (the
	 * owner steps once a refresh: a step later is up to a tick later) */
	assert_int_equal(s.stops_with_batch, 2);
}

/* parallelism 0: every task in one batch. */
static void
test_all_at_once(void **state)
{
	struct sim s;

	sim_deployed(&s, 5);
	s.svc.update.parallelism = 0;
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.st.batches, 1);
	assert_int_equal(s.nbatch, 1);
	assert_int_equal(s.min_healthy, 0);
	assert_int_equal(live_of(&s, 2, 1), 5);
}

/* start-first: the new task runs before an old one stops; the healthy
 * count never drops below the replicas. */
static void
test_start_first(void **state)
{
	struct sim s;

	sim_deployed(&s, 4);
	s.svc.update.order = UP_START_FIRST;
	s.svc.update.parallelism = 2;
	s.svc.update.monitor_ms = 500;
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.min_healthy, 4);
	assert_int_equal(s.max_live, 6);
	assert_int_equal(live_of(&s, 2, 1), 4);
	assert_int_equal(live_of(&s, 1, 0), 0);
}

/* delay: the pause between one batch done and the next batch's start. */
static void
test_delay(void **state)
{
	struct sim s;

	sim_deployed(&s, 3);
	s.svc.update.delay_ms = 10000;
	s.svc.update.monitor_ms = 0;
	sim_run(&s, 120000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.nbatch, 3);
	/* health 1 s + pending 0.1 s + delay 10 s */
	assert_true(s.batch_at[1] - s.batch_at[0] >= 11000);
	assert_true(s.batch_at[1] - s.batch_at[0] < 12500);
}

/* monitor: a batch healthy for less than monitor is not done, and a task
 * that turns unhealthy within it is a failure. */
static void
test_monitor(void **state)
{
	struct sim s;

	sim_deployed(&s, 2);
	s.svc.update.monitor_ms = 20000;
	sim_run(&s, 15000);
	assert_int_equal(s.nbatch, 0);
	assert_int_equal(s.st.phase, UP_UPDATING);
	assert_int_equal(s.st.batch, 1);
	assert_true(s.st.healthy_since_ms != 0);
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_true(s.batch_at[1] - s.batch_at[0] >= 20000);
}

/* failure_action pause (the default): the update stops at the failed
 * batch and the old tasks left keep running. */
static void
test_failure_pause(void **state)
{
	struct sim s;

	sim_deployed(&s, 4);
	s.beh[2] = B_UNHEALTHY;
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_PAUSED);
	assert_false(s.st.paused_by_operator);
	assert_int_equal(s.st.failures, 1);
	assert_int_equal(live_of(&s, 1, 1), 3);
	assert_int_equal(s.nbatch, 0);
	assert_int_equal(s.counts[UP_PAUSE], 1);
	assert_non_null(strstr(s.st.message, "unhealthy (1 failed of 4)"));
	/* --resume forgives the failures: the next failure pauses again */
	s.svc.resumes = 1;
	sim_run(&s, 60000);
	assert_int_equal(s.counts[UP_RESUMED], 1);
	assert_int_equal(s.st.phase, UP_PAUSED);
	assert_int_equal(s.counts[UP_PAUSE], 2);
	/* a good version supersedes the paused update */
	s.svc.version = 3;
	s.spec = 3;
	s.previous = 2;
	s.svc.update.monitor_ms = 1000;
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.st.version, 3);
	assert_int_equal(live_of(&s, 3, 1), 4);
	assert_int_equal(live_of(&s, 1, 0) + live_of(&s, 2, 0), 0);
}

/* failure_action continue: failures are counted and the update goes on. */
static void
test_failure_continue(void **state)
{
	struct sim s;

	sim_deployed(&s, 3);
	s.beh[2] = B_UNHEALTHY;
	s.svc.update.failure_action = UP_FAIL_CONTINUE;
	s.svc.update.monitor_ms = 1000;
	sim_run(&s, 120000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.st.failures, 3);
	assert_int_equal(live_of(&s, 2, 0), 3);
	assert_int_equal(live_of(&s, 1, 0), 0);
}

/* failure_action rollback: the previous spec is written back and rolled
 * out with rollback_config (here all at once, start-first). */
static void
test_failure_rollback(void **state)
{
	struct sim s;

	sim_deployed(&s, 6);
	s.beh[2] = B_CRASH;
	s.svc.update.parallelism = 2;
	s.svc.update.failure_action = UP_FAIL_ROLLBACK;
	s.svc.rollback_cfg.parallelism = 0;
	s.svc.rollback_cfg.order = UP_START_FIRST;
	s.svc.rollback_cfg.monitor_ms = 1000;
	sim_run(&s, 120000);
	assert_int_equal(s.rollbacks_written, 1);
	assert_int_equal(s.st.phase, UP_ROLLBACK_COMPLETED);
	assert_int_equal(s.st.version, 3);
	assert_int_equal(live_of(&s, 1, 1), 6);
	assert_int_equal(live_of(&s, 2, 0), 0);
	assert_true(s.min_healthy >= 4);
	assert_non_null(strstr(s.st.message, "rollback to version 3"));
	/* unhealthy new tasks stay up: the rollback stops them, and says so
	 * (not a failure) */
	sim_deployed(&s, 6);
	s.beh[2] = B_UNHEALTHY;
	s.svc.update.parallelism = 2;
	s.svc.update.failure_action = UP_FAIL_ROLLBACK;
	s.svc.rollback_cfg.monitor_ms = 1000;
	sim_run(&s, 120000);
	assert_int_equal(s.st.phase, UP_ROLLBACK_COMPLETED);
	assert_int_equal(live_of(&s, 2, 0), 0);
	assert_string_equal(s.stop_why, "stopped by the rollback to version 3");
	/* a failing rollback is not rolled back again: it pauses */
	sim_deployed(&s, 2);
	s.svc.rollback = 1;
	s.beh[2] = B_CRASH;
	s.svc.rollback_cfg.failure_action = UP_FAIL_ROLLBACK;
	sim_run(&s, 30000);
	assert_int_equal(s.rollbacks_written, 0);
	assert_int_equal(s.st.phase, UP_ROLLBACK_PAUSED);
	assert_non_null(strstr(s.st.message, "a rollback is not rolled back"));
	/* nor without a previous spec */
	sim_deployed(&s, 2);
	s.svc.has_previous = 0;
	s.beh[2] = B_CRASH;
	s.svc.update.failure_action = UP_FAIL_ROLLBACK;
	sim_run(&s, 30000);
	assert_int_equal(s.st.phase, UP_PAUSED);
	assert_non_null(strstr(s.st.message, "no previous spec"));
}

/* max_failure_ratio: failures up to the ratio of the replicas are taken. */
static void
test_failure_ratio(void **state)
{
	struct sim s;

	sim_deployed(&s, 4);
	s.beh[2] = B_UNHEALTHY;
	s.svc.update.max_failure_ratio = 0.5;
	s.svc.update.monitor_ms = 1000;
	sim_run(&s, 120000);
	assert_int_equal(s.st.phase, UP_PAUSED);
	assert_int_equal(s.st.failures, 3); /* 2/4 is taken, 3/4 is not */
	assert_int_equal(s.nbatch, 2);
}

/* A new task that stays starting counts as failed after the deadline. */
static void
test_healthy_deadline(void **state)
{
	struct sim s;

	sim_deployed(&s, 2);
	s.beh[2] = B_NEVER;
	s.svc.healthy_deadline_ms = 8000;
	sim_run(&s, 7000);
	assert_int_equal(s.st.phase, UP_UPDATING);
	sim_run(&s, 5000);
	assert_int_equal(s.st.phase, UP_PAUSED);
	assert_non_null(strstr(s.st.message, "never turned healthy"));
}

/* --pause holds the update between batches; --resume carries on. */
static void
test_operator_pause(void **state)
{
	struct sim s;
	unsigned batches;

	sim_deployed(&s, 4);
	s.svc.update.monitor_ms = 1000;
	sim_run(&s, 3000);
	assert_int_equal(s.nbatch, 1);
	s.svc.paused = 1;
	sim_run(&s, 30000);
	assert_int_equal(s.st.phase, UP_PAUSED);
	assert_true(s.st.paused_by_operator);
	assert_non_null(strstr(s.st.message, "paused by the operator"));
	batches = s.nbatch;
	assert_true(batches <= 2); /* the batch under way finishes */
	sim_run(&s, 30000);
	assert_int_equal(s.nbatch, batches);
	s.svc.paused = 0;
	s.svc.resumes = 1;
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(live_of(&s, 2, 1), 4);
}

/* Canaries: N new tasks beside the old until promote. */
static void
test_canary_promote(void **state)
{
	struct sim s;

	sim_deployed(&s, 4);
	s.svc.canary = 1;
	s.svc.update.parallelism = 2;
	s.svc.update.monitor_ms = 1000;
	sim_run(&s, 30000);
	assert_int_equal(s.st.phase, UP_CANARY);
	assert_int_equal(s.counts[UP_CANARY_READY], 1);
	assert_int_equal(live_of(&s, 2, 1), 1);
	assert_int_equal(live_of(&s, 1, 1), 4);
	assert_int_equal(s.min_healthy, 4);
	assert_int_equal(s.st.batches, 3); /* canaries, then 2 + 1 */
	s.svc.promoted = 2;
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(live_of(&s, 2, 1), 4);
	assert_int_equal(live_of(&s, 1, 0), 0);
	assert_int_equal(s.max_live, 5);
	/* a promote for another version does nothing */
	sim_deployed(&s, 2);
	s.svc.canary = 1;
	s.svc.promoted = 1;
	sim_run(&s, 30000);
	assert_int_equal(s.st.phase, UP_CANARY);
}

static void
test_canary_auto_promote(void **state)
{
	struct sim s;

	sim_deployed(&s, 3);
	s.svc.canary = 2;
	s.svc.auto_promote = 1;
	s.svc.update.monitor_ms = 1000;
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.counts[UP_CANARY_READY], 0);
	assert_int_equal(live_of(&s, 2, 1), 3);
	assert_int_equal(s.max_live, 5);
	assert_int_equal(s.min_healthy, 2); /* 3 - parallelism, stop-first */
}

/* auto_revert: canaries that never turn healthy roll back, whatever the
 * failure_action says. */
static void
test_canary_auto_revert(void **state)
{
	struct sim s;

	sim_deployed(&s, 3);
	s.svc.canary = 1;
	s.svc.auto_revert = 1;
	s.svc.healthy_deadline_ms = 5000;
	s.beh[2] = B_NEVER;
	sim_run(&s, 60000);
	assert_int_equal(s.rollbacks_written, 1);
	assert_int_equal(s.st.phase, UP_ROLLBACK_COMPLETED);
	assert_int_equal(live_of(&s, 1, 1), 3);
	assert_int_equal(live_of(&s, 2, 0), 0);
	assert_int_equal(s.min_healthy, 3); /* the old ones never stopped */
}

/* The owner dies mid-batch: the next owner steps from the replicated
 * status and the tasks, and asks for nothing twice. */
static void
test_owner_dies(void **state)
{
	struct sim s;
	struct mts_up_status saved;
	struct mts_up_actions a1 = { 0 }, a2 = { 0 };
	size_t i;

	sim_deployed(&s, 6);
	s.svc.update.parallelism = 2;
	s.svc.update.monitor_ms = 1000;
	sim_run(&s, 4000);
	assert_int_equal(s.st.phase, UP_UPDATING);
	/* two owners stepping from the same state agree */
	saved = s.st;
	for (i = 0; i < s.n; i++)
		s.t[i].current = s.tspec[i] == s.spec;
	mts_up_step(&s.svc, s.t, s.n, &s.st, s.now, &a1);
	s.st = saved;
	mts_up_step(&s.svc, s.t, s.n, &s.st, s.now, &a2);
	assert_int_equal(a1.n, a2.n);
	for (i = 0; i < a1.n; i++) {
		assert_int_equal(a1.v[i].kind, a2.v[i].kind);
		assert_int_equal(a1.v[i].task, a2.v[i].task);
		assert_int_equal(a1.v[i].count, a2.v[i].count);
	}
	mts_up_actions_free(&a1);
	mts_up_actions_free(&a2);
	/* a step whose actions were lost, then one that acts: the stops
	 * already asked for are not asked again */
	s.st = saved;
	sim_step(&s, 0);
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_int_equal(s.counts[UP_STOP], 6); /* none twice */
	assert_int_equal(live_of(&s, 2, 1), 6);
	assert_true(s.min_healthy >= 4);
}

/* A scale (same spec, new version) and a first deploy start no update. */
static void
test_no_update(void **state)
{
	struct sim s;

	sim_deployed(&s, 3);
	s.spec = 1; /* version 2 only scaled */
	s.svc.replicas = 5;
	sim_run(&s, 5000);
	assert_int_equal(s.st.phase, UP_NONE);
	assert_int_equal(s.n, 3);
	sim_init(&s, 3);
	sim_run(&s, 5000);
	assert_int_equal(s.st.phase, UP_NONE);
	assert_false(mts_up_active(&s.st));
}

/* A u/ status is not trusted: counts beyond the replicas (any admin can
 * write the key) ask for no more tasks than the service has. */
static void
test_garbage_status(void **state)
{
	struct sim s;

	sim_deployed(&s, 3);
	s.st.version = 2;
	s.st.phase = UP_UPDATING;
	s.st.batch = 7;
	s.st.batches = 1;
	s.st.target = 1000;
	s.st.done = 2000;
	s.st.promoted = 1;
	sim_run(&s, 60000);
	assert_int_equal(s.st.phase, UP_COMPLETED);
	assert_true(s.max_live <= 3);
	assert_int_equal(live_of(&s, 2, 1), 3);
	assert_true(s.st.batches >= s.st.batch);
}

static void
test_names(void **state)
{
	enum mts_up_phase p;
	enum mts_up_order o;
	enum mts_up_action_on_failure f;
	int i;

	for (i = UP_NONE; i <= UP_ROLLBACK_COMPLETED; i++) {
		assert_int_equal(mts_up_phase_parse(mts_up_phase_name(i), &p),
		    0);
		assert_int_equal(p, i);
	}
	assert_int_equal(mts_up_phase_parse("nope", &p), -1);
	assert_int_equal(mts_up_order_parse("start-first", &o), 0);
	assert_int_equal(o, UP_START_FIRST);
	assert_int_equal(mts_up_order_parse("", &o), 0);
	assert_int_equal(o, UP_STOP_FIRST);
	assert_int_equal(mts_up_order_parse("sideways", &o), -1);
	assert_int_equal(mts_up_failure_parse("rollback", &f), 0);
	assert_int_equal(f, UP_FAIL_ROLLBACK);
	assert_int_equal(mts_up_failure_parse("continue", &f), 0);
	assert_int_equal(f, UP_FAIL_CONTINUE);
	assert_int_equal(mts_up_failure_parse(NULL, &f), 0);
	assert_int_equal(f, UP_FAIL_PAUSE);
	assert_int_equal(mts_up_failure_parse("panic", &f), -1);
	assert_string_equal(mts_up_kind_name(UP_BATCH_DONE),
	    "update.batch_done");
	/* the event kinds are event types mtsctl events knows */
	for (i = UP_BEGAN; i <= UP_DONE; i++)
		assert_true(mts_event_known(mts_up_kind_name(i)));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_parallelism),
		cmocka_unit_test(test_all_at_once),
		cmocka_unit_test(test_start_first),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_monitor),
		cmocka_unit_test(test_failure_pause),
		cmocka_unit_test(test_failure_continue),
		cmocka_unit_test(test_failure_rollback),
		cmocka_unit_test(test_failure_ratio),
		cmocka_unit_test(test_healthy_deadline),
		cmocka_unit_test(test_operator_pause),
		cmocka_unit_test(test_canary_promote),
		cmocka_unit_test(test_canary_auto_promote),
		cmocka_unit_test(test_canary_auto_revert),
		cmocka_unit_test(test_owner_dies),
		cmocka_unit_test(test_rebalance),
		cmocka_unit_test(test_no_update),
		cmocka_unit_test(test_garbage_status),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
