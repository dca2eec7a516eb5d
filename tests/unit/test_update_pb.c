/* test_update_pb.c: the update's replicated forms — the task-spec digest (a scale or an update_config change replaces no task, an image does), the rollback record, u/ status round trips and refusals, t/ records read as the core's tasks, a rebalance version (its tasks old, one at a time start-first, the next version moving nothing) and healthy_deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/reconciled/update_pb.h"
#include "hash.h"

static void
test_digest(void **state)
{
	Mts__Service__ServiceSpec a = MTS__SERVICE__SERVICE_SPEC__INIT, b;
	Mts__Service__Update u = MTS__SERVICE__UPDATE__INIT;
	Mts__Service__Canary c = MTS__SERVICE__CANARY__INIT;
	uint8_t da[MTS_SPEC_DIGEST_LEN], db[MTS_SPEC_DIGEST_LEN];

	a.name = "shop_web";
	a.image = "nginx:1.25";
	a.replicas = 3;
	b = a;
	mts_spec_digest(&a, da);
	b.replicas = 9;
	u.parallelism = 2;
	b.update = &u;
	b.rollback = &u;
	c.count = 1;
	b.canary = &c;
	mts_spec_digest(&b, db);
	assert_memory_equal(da, db, sizeof(da));
	b.image = "nginx:1.26";
	mts_spec_digest(&b, db);
	assert_memory_not_equal(da, db, sizeof(da));
	b.image = a.image;
	b.user = "1000";
	mts_spec_digest(&b, db);
	assert_memory_not_equal(da, db, sizeof(da));
	assert_int_equal(b.replicas, 9); /* the spec itself untouched */
	assert_ptr_equal(b.update, &u);
}

/* A rebalance version: its tasks old, one at a time and start-first
 * whatever update_config says, no canaries; the next version (copied
 * from it) moves nothing. x-mts healthy_deadline reaches the core. */
static void
test_rebalance_record(void **state)
{
	Mts__Service__ServiceRecord r = MTS__SERVICE__SERVICE_RECORD__INIT;
	Mts__Service__ServiceSpec s = MTS__SERVICE__SERVICE_SPEC__INIT;
	Mts__Service__Update u = MTS__SERVICE__UPDATE__INIT;
	Mts__Service__Canary c = MTS__SERVICE__CANARY__INIT;
	Mts__Service__Rebalance rb = MTS__SERVICE__REBALANCE__INIT;
	char *tasks[] = { "shop_web.3.aa", "shop_web.5.bb" };
	struct mts_up_service us;

	s.replicas = 6;
	u.parallelism = 3;
	u.order = "stop-first";
	u.monitor_ms = 1500;
	s.update = &u;
	c.count = 2;
	c.auto_revert = 1;
	c.healthy_deadline_ms = 3000;
	s.canary = &c;
	r.spec = &s;
	r.version = 4;
	mts_up_service_from_pb(&r, &us);
	assert_false(us.rebalance);
	assert_int_equal(us.update.parallelism, 3);
	assert_int_equal(us.canary, 2);
	assert_int_equal(us.healthy_deadline_ms, 3000);
	rb.version = 4;
	rb.tasks = tasks;
	rb.n_tasks = 2;
	r.rebalance = &rb;
	mts_up_service_from_pb(&r, &us);
	assert_true(us.rebalance);
	assert_int_equal(us.update.parallelism, 1);
	assert_int_equal(us.update.order, UP_START_FIRST);
	assert_int_equal(us.update.monitor_ms, 1500);
	assert_int_equal(us.canary, 0);
	assert_false(us.auto_revert);
	assert_true(mts_up_rebalance_moves(&r, "shop_web.5.bb"));
	assert_false(mts_up_rebalance_moves(&r, "shop_web.1.cc"));
	r.version = 5; /* a later version copied from it */
	mts_up_service_from_pb(&r, &us);
	assert_false(us.rebalance);
	assert_false(mts_up_rebalance_moves(&r, "shop_web.5.bb"));
}

static void
test_rollback_record(void **state)
{
	Mts__Service__ServiceRecord cur = MTS__SERVICE__SERVICE_RECORD__INIT,
	                            out;
	Mts__Service__ServiceSpec s1 = MTS__SERVICE__SERVICE_SPEC__INIT,
	                          s2 = MTS__SERVICE__SERVICE_SPEC__INIT;
	Mts__Service__UpdateControl ctl,
	    old = MTS__SERVICE__UPDATE_CONTROL__INIT;

	cur.version = 7;
	cur.spec = &s2;
	assert_int_equal(mts_svc_rollback(&cur, &out, &ctl), -1);
	cur.previous = &s1;
	old.paused = 1;
	old.resumes = 3;
	cur.control = &old;
	assert_int_equal(mts_svc_rollback(&cur, &out, &ctl), 0);
	assert_int_equal(out.version, 8);
	assert_ptr_equal(out.spec, &s1);
	assert_ptr_equal(out.previous, &s2);
	assert_int_equal(out.previous_version, 7);
	assert_true(out.rollback);
	assert_false(out.control->paused);
	assert_int_equal(out.control->resumes, 3);
}

static void
test_status_round_trip(void **state)
{
	struct mts_up_status st, back;
	uint8_t owner[MTS_NODE_ID_LEN] = { 1, 2, 3 }, *buf;
	Mts__Service__UpdateStatus *u;
	size_t len;

	memset(&st, 0, sizeof(st));
	st.version = 4;
	st.phase = UP_ROLLBACK_PAUSED;
	st.batch = 2;
	st.batches = 3;
	st.done = 2;
	st.target = 4;
	st.started_ms = 1700000000000ULL;
	st.healthy_since_ms = 1700000001000ULL;
	st.next_batch_ms = 1700000002000ULL;
	st.paused_by_operator = 1;
	st.promoted = 1;
	st.resumes = 5;
	st.failures = 2;
	st.nseen = 2;
	snprintf(st.seen[0], MTS_UP_ID_MAX, "a1");
	snprintf(st.seen[1], MTS_UP_ID_MAX, "b2");
	snprintf(st.message, sizeof(st.message), "paused");
	buf = mts_up_status_encode(&st, owner, 3, &len);
	assert_int_equal(mts_up_status_decode(buf, len, &back), 0);
	assert_memory_equal(&st, &back, sizeof(st));
	u = mts__service__update_status__unpack(NULL, len, buf);
	assert_string_equal(u->state, "rollback_paused");
	assert_int_equal(u->from_version, 3);
	assert_memory_equal(u->owner.data, owner, sizeof(owner));
	mts__service__update_status__free_unpacked(u, NULL);
	free(buf);
	/* garbage and unknown states are refused, leaving a fresh status */
	assert_int_equal(mts_up_status_decode((const uint8_t *)"\xff\xff", 2,
	                     &back),
	    -1);
	assert_int_equal(back.phase, UP_NONE);
	{
		Mts__Service__UpdateStatus x =
		    MTS__SERVICE__UPDATE_STATUS__INIT;
		uint8_t b[64];

		x.state = "sideways";
		x.version = 9;
		len = mts__service__update_status__pack(&x, b);
		assert_int_equal(mts_up_status_decode(b, len, &back), -1);
		assert_int_equal(back.version, 0);
	}
}

static void
test_task_and_service(void **state)
{
	Mts__Shim__TaskStatus t = MTS__SHIM__TASK_STATUS__INIT;
	Mts__Shim__TaskSpec ts = MTS__SHIM__TASK_SPEC__INIT;
	Mts__Service__ServiceRecord r = MTS__SERVICE__SERVICE_RECORD__INIT;
	Mts__Service__ServiceSpec s = MTS__SERVICE__SERVICE_SPEC__INIT;
	Mts__Service__Update u = MTS__SERVICE__UPDATE__INIT;
	Mts__Service__UpdateControl c = MTS__SERVICE__UPDATE_CONTROL__INIT;
	uint8_t d[MTS_SPEC_DIGEST_LEN] = { 9 },
	        other[MTS_SPEC_DIGEST_LEN] = { 8 };
	struct mts_up_task ut;
	struct mts_up_service us;

	t.id = "t1";
	t.state = "running";
	t.health = "healthy";
	t.desired = "running";
	t.started_at = 42;
	t.spec = &ts;
	ts.spec_digest.data = d;
	ts.spec_digest.len = sizeof(d);
	mts_up_task_from_pb(&t, d, &ut);
	assert_true(ut.current);
	assert_int_equal(ut.state, UP_TASK_RUNNING);
	assert_int_equal(ut.health, UP_HEALTH_HEALTHY);
	assert_true(ut.desired_running);
	assert_int_equal(ut.started_ms, 42);
	mts_up_task_from_pb(&t, other, &ut);
	assert_false(ut.current);
	t.state = "stopping";
	t.desired = "stopped";
	t.health = "";
	mts_up_task_from_pb(&t, d, &ut);
	assert_int_equal(ut.state, UP_TASK_RUNNING); /* still up */
	assert_false(ut.desired_running);
	assert_int_equal(ut.health, UP_HEALTH_NONE);
	t.state = "failed";
	ts.spec_digest.len = 0; /* a task of before digests: old */
	mts_up_task_from_pb(&t, d, &ut);
	assert_int_equal(ut.state, UP_TASK_FAILED);
	assert_false(ut.current);

	s.replicas = 6;
	u.parallelism = 2;
	u.order = "start-first";
	u.failure_action = "rollback";
	u.monitor_ms = 100;
	u.max_failure_ratio = 0.25;
	u.delay_ms = 7;
	s.update = &u;
	r.spec = &s;
	r.version = 3;
	r.rollback = 1;
	c.paused = 1;
	c.resumes = 2;
	c.promoted = 3;
	r.control = &c;
	mts_up_service_from_pb(&r, &us);
	assert_int_equal(us.version, 3);
	assert_int_equal(us.replicas, 6);
	assert_int_equal(us.update.parallelism, 2);
	assert_int_equal(us.update.order, UP_START_FIRST);
	assert_int_equal(us.update.failure_action, UP_FAIL_ROLLBACK);
	assert_int_equal(us.update.monitor_ms, 100);
	assert_int_equal(us.update.delay_ms, 7);
	assert_true(us.update.max_failure_ratio == 0.25);
	/* no rollback_config: Swarm's defaults */
	assert_int_equal(us.rollback_cfg.parallelism, 1);
	assert_int_equal(us.rollback_cfg.monitor_ms, 5000);
	assert_true(us.rollback);
	assert_false(us.has_previous);
	assert_true(us.paused);
	assert_int_equal(us.resumes, 2);
	assert_int_equal(us.promoted, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_rollback_record),
		cmocka_unit_test(test_rebalance_record),
		cmocka_unit_test(test_status_round_trip),
		cmocka_unit_test(test_task_and_service),
	};

	mts_crypto_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
