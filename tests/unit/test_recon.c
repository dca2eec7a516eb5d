/* test_recon.c: reconciled's core — ownership, missing and extra replicas, the deterministic extras rule (the same stops from two owners after a partition, whatever the order of the records), dead and draining nodes, global services, jobs, orphans, the verdict on a returning node's held tasks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/reconciled/failseen_core.h"
#include "agents/reconciled/hold_core.h"
#include "agents/reconciled/recon_core.h"
#include "rendezvous.h"

#define NODES 6

static struct mts_rc_member members[NODES];
static char hex[NODES][33];

static void
setup_members(void)
{
	int i, j;

	for (i = 0; i < NODES; i++) {
		memset(&members[i], 0, sizeof(members[i]));
		for (j = 0; j < MTS_NODE_ID_LEN; j++)
			members[i].id[j] = (uint8_t)(i * 17 + j);
		mts_hex(hex[i], members[i].id, MTS_NODE_ID_LEN);
		members[i].attrs.id = hex[i];
		members[i].attrs.hostname = hex[i];
		members[i].alive = 1;
	}
}

static struct mts_rc_task
task(const char *id, int node, const char *svc, uint64_t created)
{
	struct mts_rc_task t = { .id = id,
		.node = hex[node],
		.service = svc,
		.state = RC_TASK_RUNNING,
		.desired_running = 1,
		.created = created };

	return t;
}

static struct mts_rc_view
view(const struct mts_rc_service *s, size_t ns, const struct mts_rc_task *t,
    size_t nt, int self)
{
	struct mts_rc_view v = { .members = members,
		.nmembers = NODES,
		.services = s,
		.nservices = ns,
		.tasks = t,
		.ntasks = nt,
		.self = hex[self] };

	return v;
}

static int
owner_of(const struct mts_rc_service *s)
{
	struct mts_rc_view v = view(s, 1, NULL, 0, 0);

	return (int)mts_rc_owner(&v, s->name);
}

/* Fresh members: the owner of s, and in after[0..n) the n nodes that
 * follow it. */
static int
owner_then(const struct mts_rc_service *s, int *after, int n)
{
	int o, i;

	setup_members();
	o = owner_of(s);
	for (i = 0; i < n; i++)
		after[i] = (o + 1 + i) % NODES;
	return o;
}

/* A task of svc on node in slot. */
static struct mts_rc_task
slotted(const char *id, int node, const char *svc, uint64_t created,
    uint32_t slot)
{
	struct mts_rc_task t = task(id, node, svc, created);

	t.slot = slot;
	return t;
}

/* One reconcile of v asks for nothing. */
static void
expect_nothing(const struct mts_rc_view *v)
{
	struct mts_rc_actions a = { 0 };

	mts_rc_reconcile(v, &a);
	assert_int_equal(a.n, 0);
	mts_rc_actions_free(&a);
}

/* One reconcile of v asks for one thing: to place count tasks. */
static void
expect_place(const struct mts_rc_view *v, uint32_t count)
{
	struct mts_rc_actions a = { 0 };

	mts_rc_reconcile(v, &a);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.v[0].kind, RC_PLACE);
	assert_int_equal(a.v[0].count, count);
	mts_rc_actions_free(&a);
}

static int weight_calls;

static uint64_t
counted_weight(void *ctx, const char *service,
    const uint8_t id[MTS_NODE_ID_LEN])
{
	weight_calls++;
	return mts_rendezvous_weight(service, id);
}

/* A caller's weight function (a cache) names the same owners. */
static void
test_owner_weight_hook(void **state)
{
	struct mts_rc_service s = { .mode = RC_REPLICATED, .replicas = 1 };
	struct mts_rc_view v;
	char name[32];
	int i;

	setup_members();
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "stack_svc%d", i);
		s.name = name;
		v = view(&s, 1, NULL, 0, 0);
		v.weight = counted_weight;
		assert_int_equal(mts_rc_owner(&v, name), owner_of(&s));
	}
	assert_true(weight_calls >= 200);
}

static void
test_owner_places(void **state)
{
	struct mts_rc_service s = { .name = "shop_web",
		.mode = RC_REPLICATED,
		.replicas = 9 };
	struct mts_rc_actions a = { 0 };
	int o, i, placed = 0;

	setup_members();
	o = owner_of(&s);
	assert_true(o >= 0);
	for (i = 0; i < NODES; i++) {
		struct mts_rc_view v = view(&s, 1, NULL, 0, i);

		mts_rc_reconcile(&v, &a);
		if (a.n) {
			assert_int_equal(i, o); /* only the owner acts */
			assert_int_equal(a.v[0].kind, RC_PLACE);
			assert_int_equal(a.v[0].count, 9);
			assert_string_equal(a.v[0].why, "0 of 9 live");
			placed++;
		}
		mts_rc_actions_free(&a);
	}
	assert_int_equal(placed, 1);
	/* the owner dies: the next in weight order takes over */
	members[o].alive = 0;
	assert_int_not_equal(owner_of(&s), o);
	assert_true(owner_of(&s) >= 0);
	/* a draining node owns nothing */
	members[o].alive = 1;
	members[o].draining = 1;
	assert_int_not_equal(owner_of(&s), o);
}

/* Tasks on a dead node count as missing at once. */
static void
test_dead_node_missing(void **state)
{
	struct mts_rc_service s = { .name = "shop_web",
		.mode = RC_REPLICATED,
		.replicas = 3 };
	struct mts_rc_task t[3];
	struct mts_rc_view v;
	int o, n[2];

	o = owner_then(&s, n, 2);
	t[0] = task("a", n[0], "shop_web", 1);
	t[1] = task("b", n[0], "shop_web", 2);
	t[2] = task("c", n[1], "shop_web", 3);
	v = view(&s, 1, t, 3, o);
	expect_nothing(&v);
	members[n[0]].alive = 0;
	expect_place(&v, 2);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The ids of the tasks an action list stops, sorted. */
static size_t
stopped(const struct mts_rc_view *v, const struct mts_rc_actions *a,
    const char **ids)
{
	size_t i, n = 0;

	for (i = 0; i < a->n; i++)
		if (a->v[i].kind == RC_STOP)
			ids[n++] = v->tasks[a->v[i].task].id;
	qsort(ids, n, sizeof(*ids), cmp_str);
	return n;
}

/* After a partition both sides placed 3: 6 live for 3 wanted. Two nodes
 * that each think they own the service (membership not yet converged)
 * stop the same 3, whatever the order of the records; the node with the
 * most replicas loses them first, then the newest. */
static void
test_heal_same_choice(void **state)
{
	struct mts_rc_service s = { .name = NULL,
		.mode = RC_REPLICATED,
		.replicas = 3 };
	struct mts_rc_task t[6], shuffled[6];
	struct mts_rc_actions a = { 0 }, b = { 0 };
	const char *sa[6], *sb[6];
	char name[32];
	struct mts_rc_view va, vb;
	int oa = -1, ob = -1, k, i;

	setup_members();
	/* a service whose owner is node 4, and node 5 once 4 is gone */
	for (k = 0; k < 1000 && !(oa == 4 && ob == 5); k++) {
		snprintf(name, sizeof(name), "shop_web%d", k);
		s.name = name;
		members[4].alive = 1;
		oa = owner_of(&s);
		members[4].alive = 0;
		ob = owner_of(&s);
	}
	assert_int_equal(oa, 4);
	assert_int_equal(ob, 5);
	/* side A placed on nodes 0 and 1, side B on 2 and 3 (newer HLCs) */
	t[0] = task("a1", 0, name, 10);
	t[1] = task("a2", 0, name, 11);
	t[2] = task("a3", 1, name, 12);
	t[3] = task("b1", 2, name, 20);
	t[4] = task("b2", 3, name, 21);
	t[5] = task("b3", 3, name, 22);
	for (i = 0; i < 6; i++)
		shuffled[i] = t[(i * 5 + 3) % 6];
	members[4].alive = 1;
	va = view(&s, 1, t, 6, 4);
	mts_rc_reconcile(&va, &a);
	members[4].alive = 0; /* node 5 has not heard that 4 is back */
	vb = view(&s, 1, shuffled, 6, 5);
	mts_rc_reconcile(&vb, &b);
	assert_int_equal(stopped(&va, &a, sa), 3);
	assert_int_equal(stopped(&vb, &b, sb), 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(sa[i], sb[i]);
	/* nodes 0 and 3 hold two each: their newest go first (a2, b3),
	 * then with one per node the newest of all (b2) */
	assert_string_equal(sa[0], "a2");
	assert_string_equal(sa[1], "b2");
	assert_string_equal(sa[2], "b3");
	mts_rc_actions_free(&a);
	mts_rc_actions_free(&b);
}

/* A node comes back after its tasks were replaced elsewhere in their
 * slots: its stale tasks stop, not the replacements, although the
 * replacements' nodes now hold the most; a duplicate slot is stale
 * whatever the order of the records. */
static void
test_returning_node_stale(void **state)
{
	struct mts_rc_service s = { .name = "x_web",
		.mode = RC_REPLICATED,
		.replicas = 6 };
	struct mts_rc_task t[8], shuffled[8];
	struct mts_rc_actions a = { 0 }, b = { 0 };
	const char *ids[8], *ids2[8];
	struct mts_rc_view v;
	int o, n[3], i;

	o = owner_then(&s, n, 3);
	for (i = 0; i < 6; i++) {
		static const char *id[] = { "s1", "s2", "s3", "s4", "s5",
			"s6" };

		t[i] = slotted(id[i], n[i % 3], "x_web", (uint64_t)(10 + i),
		    (uint32_t)i + 1);
	}
	/* n[2] held slots 3 and 6; it died: both are missing */
	members[n[2]].alive = 0;
	v = view(&s, 1, t, 6, o);
	expect_place(&v, 2);
	/* replaced in slots 3 and 6 on n[0]; then n[2] comes back */
	t[6] = slotted("r3", n[0], "x_web", 100, 3);
	t[7] = slotted("r6", n[0], "x_web", 101, 6);
	members[n[2]].alive = 1;
	v = view(&s, 1, t, 8, o);
	mts_rc_reconcile(&v, &a);
	assert_int_equal(stopped(&v, &a, ids), 2);
	assert_string_equal(ids[0], "s3");
	assert_string_equal(ids[1], "s6");
	assert_non_null(strstr(a.v[0].why, "stale"));
	for (i = 0; i < 8; i++)
		shuffled[i] = t[(i * 3 + 5) % 8];
	v = view(&s, 1, shuffled, 8, o);
	mts_rc_reconcile(&v, &b);
	assert_int_equal(stopped(&v, &b, ids2), 2);
	assert_string_equal(ids2[0], "s3");
	assert_string_equal(ids2[1], "s6");
	mts_rc_actions_free(&a);
	mts_rc_actions_free(&b);
}

static void
test_extras_most_on_one_node(void **state)
{
	struct mts_rc_service s = { .name = "x_svc",
		.mode = RC_REPLICATED,
		.replicas = 3 };
	struct mts_rc_task t[6];
	struct mts_rc_actions a = { 0 };
	const char *ids[6];
	struct mts_rc_view v;
	int o, n[3];

	o = owner_then(&s, n, 3);
	t[0] = task("t1", n[0], "x_svc", 1);
	t[1] = task("t2", n[0], "x_svc", 2);
	t[2] = task("t3", n[0], "x_svc", 3);
	t[3] = task("t4", n[0], "x_svc", 4);
	t[4] = task("t5", n[1], "x_svc", 100);
	t[5] = task("t6", n[2], "x_svc", 101);
	v = view(&s, 1, t, 6, o);
	mts_rc_reconcile(&v, &a);
	/* 4 on one node: three of them go, newest first; 1 per node left */
	assert_int_equal(stopped(&v, &a, ids), 3);
	assert_string_equal(ids[0], "t2");
	assert_string_equal(ids[1], "t3");
	assert_string_equal(ids[2], "t4");
	assert_string_equal(a.v[0].why, "6 live, 3 wanted");
	mts_rc_actions_free(&a);
}

/* While the view settles (a member came back moments ago) an owner stops
 * no extra but the stale and places nothing; once it settled, the extras
 * go and the missing are placed. */
static void
test_settling_holds_extras(void **state)
{
	struct mts_rc_service s[2] = {
		{ .name = "x_svc", .mode = RC_REPLICATED, .replicas = 3 },
		{ .name = "x_other", .mode = RC_REPLICATED, .replicas = 1 }
	};
	static const char *const names[5] = { "t1", "t2", "t3", "t4", "t5" };
	static char other[32];
	struct mts_rc_task t[5];
	struct mts_rc_actions a = { 0 };
	const char *ids[5];
	struct mts_rc_view v;
	int o, i, placed = 0;

	setup_members();
	/* a second service, missing its one task, with the same owner */
	for (i = 0; i < 1000 && owner_of(&s[1]) != owner_of(&s[0]); i++) {
		snprintf(other, sizeof(other), "x_other%d", i);
		s[1].name = other;
	}
	o = owner_of(&s[0]);
	assert_int_equal(owner_of(&s[1]), o);
	for (i = 0; i < 5; i++) /* 5 live for 3 wanted */
		t[i] = task(names[i], (o + 1 + i) % NODES, "x_svc",
		    (uint64_t)i + 1);
	v = view(s, 2, t, 5, o);
	v.settling = 1;
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 0);
	mts_rc_actions_free(&a);
	v.settling = 0;
	mts_rc_reconcile(&v, &a);
	assert_int_equal(stopped(&v, &a, ids), 2);
	for (i = 0; i < (int)a.n; i++)
		placed += a.v[i].kind == RC_PLACE && a.v[i].service == 1;
	assert_int_equal(placed, 1);
	mts_rc_actions_free(&a);
	/* t5 holds t1's slot and is newer: t1 is stale. While settling it
	 * goes only if its node is the one that came back and t5's is not
	 * (t5's record is then as it is now); t4 waits in any case */
	for (i = 0; i < 5; i++)
		t[i].slot = (uint32_t)i + 1;
	t[4].slot = 1;
	v.settling = 1;
	expect_nothing(&v);
	members[(o + 1) % NODES].returning = 1; /* t1's node */
	mts_rc_reconcile(&v, &a);
	assert_int_equal(stopped(&v, &a, ids), 1);
	assert_string_equal(ids[0], "t1");
	assert_int_equal(a.n, 1); /* and x_other still waits */
	mts_rc_actions_free(&a);
	members[(o + 5) % NODES].returning = 1; /* t5's too */
	expect_nothing(&v);
}

static void
test_global(void **state)
{
	struct mts_constraint c;
	struct mts_label zone_a = { "zone", "a" };
	struct mts_rc_service s = { .name = "mon_agent", .mode = RC_GLOBAL };
	struct mts_rc_task t[2];
	struct mts_rc_actions a = { 0 };
	struct mts_rc_view v;
	char err[128];
	const char *ids[2];

	setup_members();
	v = view(&s, 1, NULL, 0, 2);
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.v[0].kind, RC_PLACE_LOCAL);
	mts_rc_actions_free(&a);
	/* two here: the newer one stops */
	t[0] = task("g1", 2, "mon_agent", 5);
	t[1] = task("g2", 2, "mon_agent", 6);
	v = view(&s, 1, t, 2, 2);
	mts_rc_reconcile(&v, &a);
	assert_int_equal(stopped(&v, &a, ids), 1);
	assert_string_equal(ids[0], "g2");
	mts_rc_actions_free(&a);
	/* a constraint this node fails: its task stops, none is placed */
	assert_int_equal(mts_constraint_parse("node.labels.zone == a", &c, err,
	                     sizeof(err)),
	    0);
	s.constraints = &c;
	s.nconstraints = 1;
	v = view(&s, 1, t, 1, 2);
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.v[0].kind, RC_STOP);
	mts_rc_actions_free(&a);
	members[2].attrs.labels = &zone_a;
	members[2].attrs.nlabels = 1;
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 0);
	/* a global job that completed here is not started again */
	s.mode = RC_GLOBAL_JOB;
	t[0].state = RC_TASK_DONE;
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 0);
	mts_rc_actions_free(&a);
}

static void
test_jobs(void **state)
{
	struct mts_rc_service s = { .name = "batch_run",
		.mode = RC_REPLICATED_JOB,
		.replicas = 3 };
	struct mts_rc_task t[3];
	struct mts_rc_view v;
	int o, n[3];

	o = owner_then(&s, n, 3);
	t[0] = task("j1", n[0], "batch_run", 1);
	t[1] = task("j2", n[1], "batch_run", 2);
	t[2] = task("j3", n[2], "batch_run", 3);
	t[0].state = t[1].state = RC_TASK_DONE;
	v = view(&s, 1, t, 3, o);
	expect_nothing(&v); /* 2 done + 1 running */
	t[2].state = RC_TASK_DONE;
	expect_nothing(&v); /* 3 completions: finished, not restarted */
	t[2].state = RC_TASK_FAILED;
	expect_place(&v, 1);
}

static void
test_orphans_and_drain(void **state)
{
	struct mts_rc_service s = { .name = "shop_web",
		.mode = RC_REPLICATED,
		.replicas = 2 };
	struct mts_rc_task t[3];
	struct mts_rc_actions a = { 0 };
	struct mts_rc_view v;
	int n[2], self;

	owner_then(&s, n, 2);
	self = n[0];
	t[0] = task("old", self, "gone_svc", 1);
	t[1] = task("other", n[1], "gone_svc", 1);
	t[2] = task("w1", self, "shop_web", 2);
	v = view(&s, 1, t, 3, self);
	mts_rc_reconcile(&v, &a);
	/* only this node's orphan: the other node stops its own */
	assert_int_equal(a.n, 1);
	assert_int_equal(a.v[0].kind, RC_STOP);
	assert_int_equal(a.v[0].task, 0);
	assert_string_equal(a.v[0].why, "service removed");
	mts_rc_actions_free(&a);
	/* draining: the owner counts its tasks missing and stops them
	 * (stop-first, the default: at once); the node itself leaves them
	 * to the owner */
	members[self].draining = 1;
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 1);
	assert_string_equal(a.v[0].why, "service removed");
	mts_rc_actions_free(&a);
	v.self = hex[owner_of(&s)];
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.v[0].kind, RC_STOP);
	assert_int_equal(a.v[0].task, 2);
	assert_string_equal(a.v[0].why, "node draining");
	assert_int_equal(a.v[1].kind, RC_PLACE);
	assert_int_equal(a.v[1].count, 2);
	mts_rc_actions_free(&a);
	/* with no owner left (every other node down) the node stops its
	 * own */
	{
		int i;

		for (i = 0; i < NODES; i++)
			members[i].alive = i == self;
	}
	v.self = hex[self];
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.v[1].task, 2);
	assert_string_equal(a.v[1].why, "node draining");
	mts_rc_actions_free(&a);
}

/* start-first: a drained node's task stops only while the service
 * keeps its count running without it; pause keeps tasks, takes no new
 * global one. */
static void
test_drain_start_first_and_pause(void **state)
{
	struct mts_rc_service s = { .name = "x_api",
		.mode = RC_REPLICATED,
		.replicas = 2,
		.start_first = 1 },
	                      g = { .name = "x_mon", .mode = RC_GLOBAL };
	struct mts_rc_task t[4];
	struct mts_rc_actions a = { 0 };
	struct mts_rc_view v;
	int o, n[2], d;

	o = owner_then(&s, n, 2);
	d = n[0];
	t[0] = task("a1", d, "x_api", 1);
	t[1] = task("a2", n[1], "x_api", 2);
	members[d].draining = 1;
	v = view(&s, 1, t, 2, o);
	/* 1 live + 1 drained running = 2: none may stop yet */
	expect_place(&v, 1);
	/* its replacement is placed but not running yet: still none */
	t[2] = task("a3", o, "x_api", 3);
	t[2].state = RC_TASK_PENDING;
	v = view(&s, 1, t, 3, o);
	expect_nothing(&v);
	/* running: the drained one stops */
	t[2].state = RC_TASK_RUNNING;
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.v[0].kind, RC_STOP);
	assert_string_equal(v.tasks[a.v[0].task].id, "a1");
	mts_rc_actions_free(&a);
	/* pause: tasks stay and count, no new global task there */
	members[d].draining = 0;
	members[d].paused = 1;
	v = view(&s, 1, t, 2, o);
	expect_nothing(&v);
	v = view(&g, 1, NULL, 0, d);
	expect_nothing(&v);
	t[3] = task("m1", d, "x_mon", 4);
	v = view(&g, 1, &t[3], 1, d);
	expect_nothing(&v); /* kept */
	members[d].paused = 0;
	v = view(&g, 1, NULL, 0, d);
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.v[0].kind, RC_PLACE_LOCAL);
	mts_rc_actions_free(&a);
	/* drain: the node's global task stops too */
	members[d].draining = 1;
	v = view(&g, 1, &t[3], 1, d);
	mts_rc_reconcile(&v, &a);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.v[0].kind, RC_STOP);
	assert_string_equal(a.v[0].why, "node draining");
	mts_rc_actions_free(&a);
}

/* failed_avoid counts from when this node first saw a failure, on its
 * own monotonic clock: a failure whose node's wall clock runs hours
 * behind or ahead is avoided for the window all the same (the record's
 * finished_at is never read), and no longer after it; a failure still in
 * the view keeps its first sighting; one whose record went is forgotten. */
static void
test_failed_avoid_clock(void **state)
{
	struct mts_failseen fs = { 0 };
	const mts_time_t window = 5 * 60 * 1000;
	mts_time_t t0 = 1000000;

	setup_members();

	mts_failseen_note(&fs, "web.1.a", "web", hex[1], t0);
	mts_failseen_note(&fs, "web.2.b", "web", hex[2], t0);
	mts_failseen_sweep(&fs);
	assert_true(mts_failseen_recent(&fs, "web", hex[1], t0, window));
	assert_true(
	    mts_failseen_recent(&fs, "web", hex[1], t0 + window - 1, window));
	assert_false(mts_failseen_recent(&fs, "web", hex[3], t0, window));
	assert_false(mts_failseen_recent(&fs, "api", hex[1], t0, window));
	/* seen again in later views: still from t0, so it ends */
	mts_failseen_note(&fs, "web.1.a", "web", hex[1], t0 + window / 2);
	mts_failseen_note(&fs, "web.2.b", "web", hex[2], t0 + window / 2);
	mts_failseen_sweep(&fs);
	mts_failseen_note(&fs, "web.1.a", "web", hex[1], t0 + window);
	mts_failseen_sweep(&fs);
	assert_false(
	    mts_failseen_recent(&fs, "web", hex[1], t0 + window, window));
	/* web.2.b's record went (history): forgotten */
	assert_int_equal(fs.n, 1);
	assert_false(mts_failseen_recent(&fs, "web", hex[2], t0 + 1, window));
	/* a new failure on the same node starts its own window */
	mts_failseen_note(&fs, "web.1.a", "web", hex[1], t0 + window + 10);
	mts_failseen_note(&fs, "web.1.c", "web", hex[1], t0 + window + 10);
	mts_failseen_sweep(&fs);
	assert_true(
	    mts_failseen_recent(&fs, "web", hex[1], t0 + 2 * window, window));
	assert_false(mts_failseen_recent(&fs, "web", hex[1],
	    t0 + 2 * window + 10, window));
	mts_failseen_free(&fs);
	mts_failseen_free(NULL);
}

/* A task a returning node held before it went down: nothing is decided
 * before the view converged (a first anti-entropy round, or the bound; at
 * once without peers); then it runs again only while no newer live task
 * holds its slot, its service exists and its slot is within the count. */
static void
test_hold_verdict(void **state)
{
	struct mts_rc_service svc = { .name = "s_web",
		.mode = RC_REPLICATED,
		.replicas = 3 };
	struct mts_rc_task held = { .id = "web.2.aaaa",
		.node = "n3",
		.service = "s_web",
		.state = RC_TASK_PENDING,
		.desired_running = 1,
		.created = 100,
		.slot = 2 };
	struct mts_rc_task tasks[] = {
		{ .id = "web.1.bbbb",
		    .node = "n1",
		    .service = "s_web",
		    .state = RC_TASK_RUNNING,
		    .desired_running = 1,
		    .created = 90,
		    .slot = 1 },
		{ .id = "web.2.cccc",
		    .node = "n1",
		    .service = "s_web",
		    .state = RC_TASK_RUNNING,
		    .desired_running = 1,
		    .created = 200,
		    .slot = 2 },
		{ .id = "db.2.dddd",
		    .node = "n2",
		    .service = "s_db",
		    .state = RC_TASK_RUNNING,
		    .desired_running = 1,
		    .created = 300,
		    .slot = 2 },
	};
	struct mts_rc_hold_clock c = { .now = 1000,
		.since = 0,
		.bound = 5000,
		.npeers = 2 };
	char why[96] = "";

	/* not converged: wait, whatever the view says */
	assert_false(mts_rc_hold_converged(&c));
	assert_int_equal(mts_rc_hold_decide(&c, &held, &svc, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_WAIT);
	/* a single node waits for no one; the bound ends the wait */
	c.npeers = 0;
	assert_true(mts_rc_hold_converged(&c));
	c.npeers = 2;
	c.now = 5000;
	assert_true(mts_rc_hold_converged(&c));
	c.now = 1000;
	c.synced = 1;
	assert_true(mts_rc_hold_converged(&c));
	/* its slot runs a newer task elsewhere: stopped */
	assert_int_equal(mts_rc_hold_decide(&c, &held, &svc, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_STOP);
	assert_non_null(strstr(why, "superseded: slot 2"));
	assert_non_null(strstr(why, "web.2.cccc"));
	/* the replacement stopped or failed since: this one runs */
	tasks[1].desired_running = 0;
	assert_int_equal(mts_rc_hold_decide(&c, &held, &svc, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_START);
	tasks[1].desired_running = 1;
	tasks[1].state = RC_TASK_FAILED;
	assert_int_equal(mts_rc_hold_decide(&c, &held, &svc, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_START);
	/* an older task in its slot does not supersede it */
	tasks[1].state = RC_TASK_RUNNING;
	tasks[1].created = 50;
	assert_int_equal(mts_rc_hold_decide(&c, &held, &svc, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_START);
	/* scaled down below its slot, its service removed, its intent
	 * stopped: stopped */
	svc.replicas = 1;
	assert_int_equal(mts_rc_hold_decide(&c, &held, &svc, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_STOP);
	assert_non_null(strstr(why, "scaled down"));
	svc.replicas = 3;
	assert_int_equal(mts_rc_hold_decide(&c, &held, NULL, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_STOP);
	held.desired_running = 0;
	assert_int_equal(mts_rc_hold_decide(&c, &held, &svc, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_STOP);
	held.desired_running = 1;
	/* a global task (slot 0): superseded only by a newer one on its
	 * own node */
	svc.mode = RC_GLOBAL;
	held.slot = 0;
	tasks[1].slot = 0;
	tasks[1].created = 200;
	assert_int_equal(mts_rc_hold_decide(&c, &held, &svc, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_START);
	tasks[1].node = "n3";
	assert_int_equal(mts_rc_hold_decide(&c, &held, &svc, tasks, 3, why,
	                     sizeof(why)),
	    RC_HOLD_STOP);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_places),
		cmocka_unit_test(test_owner_weight_hook),
		cmocka_unit_test(test_dead_node_missing),
		cmocka_unit_test(test_heal_same_choice),
		cmocka_unit_test(test_extras_most_on_one_node),
		cmocka_unit_test(test_returning_node_stale),
		cmocka_unit_test(test_settling_holds_extras),
		cmocka_unit_test(test_global),
		cmocka_unit_test(test_jobs),
		cmocka_unit_test(test_orphans_and_drain),
		cmocka_unit_test(test_drain_start_first_and_pause),
		cmocka_unit_test(test_failed_avoid_clock),
		cmocka_unit_test(test_hold_verdict),
	};

	mts_crypto_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
