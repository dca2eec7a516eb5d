/* test_schedd.c: mts-schedd's cores — the ledger's lease table (prepare, resend, commit, abort, expiry, limits) with a random-sequence property that nothing is ever over-committed, and placement (spread, preferences, constraints, binpack, limits, the reasons given). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/schedd/journal_core.h"
#include "agents/schedd/ledger_core.h"
#include "agents/schedd/place_core.h"

#define MIB (1024ull * 1024)
#define OWNER "00112233445566778899aabbccddeeff"

static struct mts_res
res(uint32_t cpu, uint64_t mem)
{
	struct mts_res r = { cpu, mem };

	return r;
}

static void
test_ledger_leases(void **state)
{
	struct mts_ledger l;
	struct mts_digest d;

	mts_ledger_init(&l, res(2000, 1024 * MIB), 0);
	assert_int_equal(mts_ledger_prepare(&l, "L1", OWNER, "web",
	                     res(1500, 512 * MIB), 0, 1000, 0),
	    LEDGER_OK);
	/* the lease holds its cpu: a second one does not fit */
	assert_int_equal(mts_ledger_prepare(&l, "L2", OWNER, "web",
	                     res(1000, 1 * MIB), 0, 1000, 0),
	    LEDGER_NO_CPU);
	assert_int_equal(mts_ledger_prepare(&l, "L2", OWNER, "web",
	                     res(100, 600 * MIB), 0, 1000, 0),
	    LEDGER_NO_MEMORY);
	/* a resent prepare answers as the first; other terms conflict */
	assert_int_equal(mts_ledger_prepare(&l, "L1", OWNER, "web",
	                     res(1500, 512 * MIB), 0, 1000, 10),
	    LEDGER_OK);
	assert_int_equal(mts_ledger_prepare(&l, "L1", OWNER, "db",
	                     res(1500, 512 * MIB), 0, 1000, 10),
	    LEDGER_CONFLICT);
	mts_ledger_digest(&l, &d);
	assert_int_equal(d.free.cpu_millis, 500);
	assert_int_equal(d.leases, 1);
	assert_int_equal(d.tasks, 0);
	/* commit, resent commit, commit of another task id */
	assert_int_equal(mts_ledger_commit(&l, "L1", "web.1", 20), LEDGER_OK);
	assert_int_equal(mts_ledger_commit(&l, "L1", "web.1", 30), LEDGER_OK);
	assert_int_equal(mts_ledger_commit(&l, "L1", "web.9", 30),
	    LEDGER_CONFLICT);
	assert_int_equal(mts_ledger_abort(&l, "L1", 30), LEDGER_CONFLICT);
	mts_ledger_digest(&l, &d);
	assert_int_equal(d.tasks, 1);
	assert_int_equal(d.leases, 0);
	assert_int_equal(d.free.cpu_millis, 500);
	/* unknown leases */
	assert_int_equal(mts_ledger_commit(&l, "nope", "t", 30),
	    LEDGER_UNKNOWN);
	/* expiry: an uncommitted lease frees its resources after its ttl */
	assert_int_equal(mts_ledger_prepare(&l, "L3", OWNER, "web",
	                     res(500, 1 * MIB), 0, 100, 100),
	    LEDGER_OK);
	assert_int_equal(mts_ledger_next_deadline(&l), 200);
	assert_int_equal(mts_ledger_prepare(&l, "L4", OWNER, "web",
	                     res(500, 1 * MIB), 0, 100, 150),
	    LEDGER_NO_CPU);
	assert_int_equal(mts_ledger_expire(&l, 200), 1);
	assert_int_equal(mts_ledger_commit(&l, "L3", "web.3", 201),
	    LEDGER_ENDED);
	assert_int_equal(mts_ledger_prepare(&l, "L3", OWNER, "web",
	                     res(500, 1 * MIB), 0, 100, 201),
	    LEDGER_ENDED);
	assert_int_equal(mts_ledger_prepare(&l, "L4", OWNER, "web",
	                     res(500, 1 * MIB), 0, 100, 201),
	    LEDGER_OK);
	assert_int_equal(mts_ledger_abort(&l, "L4", 202), LEDGER_OK);
	assert_int_equal(mts_ledger_abort(&l, "L4", 203), LEDGER_OK);
	/* a removed task frees what it held */
	assert_int_equal(mts_ledger_task_remove(&l, "web.1"), 0);
	assert_int_equal(mts_ledger_task_remove(&l, "web.1"), -1);
	mts_ledger_digest(&l, &d);
	assert_int_equal(d.free.cpu_millis, 2000);
	/* ended leases are forgotten after a while */
	assert_int_equal(mts_ledger_expire(&l, 10 * 60 * 1000 + 300), 0);
	assert_int_equal(l.nleases, 0);
	mts_ledger_free(&l);
}

static void
test_ledger_limits(void **state)
{
	struct mts_ledger l;

	mts_ledger_init(&l, res(10000, 10000 * MIB), 0);
	assert_int_equal(mts_ledger_prepare(&l, "a", OWNER, "web", res(1, 1), 2,
	                     1000, 0),
	    LEDGER_OK);
	mts_ledger_task_add(&l, "web.x", "web", res(1, 1));
	mts_ledger_task_add(&l, "web.x", "web", res(1, 1)); /* idempotent */
	assert_int_equal(mts_ledger_service_count(&l, "web"), 2);
	assert_int_equal(mts_ledger_prepare(&l, "b", OWNER, "web", res(1, 1), 2,
	                     1000, 0),
	    LEDGER_MAX_PER_NODE);
	assert_int_equal(mts_ledger_prepare(&l, "b", OWNER, "db", res(1, 1), 2,
	                     1000, 0),
	    LEDGER_OK);
	l.draining = 1;
	assert_int_equal(mts_ledger_prepare(&l, "c", OWNER, "db", res(1, 1), 0,
	                     1000, 0),
	    LEDGER_DRAINING);
	l.draining = 0;
	l.paused = 1;
	assert_int_equal(mts_ledger_prepare(&l, "c", OWNER, "db", res(1, 1), 0,
	                     1000, 0),
	    LEDGER_PAUSED);
	assert_string_equal(mts_ledger_why_str(LEDGER_PAUSED),
	    "node is paused");
	/* a resent prepare of a lease granted before the pause still
	 * answers as the first one did */
	assert_int_equal(mts_ledger_prepare(&l, "b", OWNER, "db", res(1, 1), 2,
	                     1000, 0),
	    LEDGER_OK);
	assert_string_equal(mts_ledger_why_str(LEDGER_NO_MEMORY),
	    "insufficient memory");
	mts_ledger_free(&l);
}

/* A restart puts back the saved leases: a prepared one holds its share
 * until its expiry and can be committed, a committed one answers a
 * resent commit, an ended one still refuses a late commit; a lease id
 * already known is not replaced, and an unknown state counts as ended. */
static void
test_ledger_restore(void **state)
{
	struct mts_ledger a, b;
	struct mts_digest d;
	size_t i;

	mts_ledger_init(&a, res(1000, 1000), 0);
	assert_int_equal(mts_ledger_prepare(&a, "p", OWNER, "web", res(300, 10),
	                     0, 1000, 0),
	    LEDGER_OK);
	assert_int_equal(mts_ledger_prepare(&a, "c", OWNER, "web", res(200, 10),
	                     0, 1000, 0),
	    LEDGER_OK);
	assert_int_equal(mts_ledger_commit(&a, "c", "task-c", 10), LEDGER_OK);
	assert_int_equal(mts_ledger_prepare(&a, "e", OWNER, "web", res(100, 10),
	                     0, 1000, 0),
	    LEDGER_OK);
	assert_int_equal(mts_ledger_abort(&a, "e", 20), LEDGER_OK);
	/* what a new schedd gets from the file */
	mts_ledger_init(&b, res(1000, 1000), 0);
	for (i = 0; i < a.ntasks; i++)
		mts_ledger_task_add(&b, a.tasks[i].id, a.tasks[i].service,
		    a.tasks[i].res);
	for (i = 0; i < a.nleases; i++)
		assert_int_equal(mts_ledger_lease_restore(&b, &a.leases[i]),
		    LEDGER_OK);
	assert_int_equal(mts_ledger_lease_restore(&b, &a.leases[0]), LEDGER_OK);
	assert_int_equal(b.nleases, 3);
	mts_ledger_digest(&b, &d);
	assert_int_equal(d.free.cpu_millis, 500);
	assert_int_equal(d.tasks, 1);
	assert_int_equal(d.leases, 1);
	assert_int_equal(mts_ledger_prepare(&b, "x", OWNER, "web", res(600, 10),
	                     0, 1000, 30),
	    LEDGER_NO_CPU);
	assert_int_equal(mts_ledger_commit(&b, "c", "task-c", 30), LEDGER_OK);
	assert_int_equal(mts_ledger_commit(&b, "e", "task-e", 30),
	    LEDGER_ENDED);
	assert_int_equal(mts_ledger_commit(&b, "p", "task-p", 30), LEDGER_OK);
	mts_ledger_digest(&b, &d);
	assert_int_equal(d.free.cpu_millis, 500);
	assert_int_equal(d.tasks, 2);
	/* past its expiry a restored prepared lease ends as any other */
	a.leases[0].state = (enum mts_lease_state)99;
	memcpy(a.leases[0].id, "q", 2);
	assert_int_equal(mts_ledger_lease_restore(&b, &a.leases[0]), LEDGER_OK);
	assert_int_equal(mts_ledger_commit(&b, "q", "task-q", 40),
	    LEDGER_ENDED);
	assert_string_equal(mts_lease_state_str(LEASE_COMMITTED), "committed");
	assert_int_equal(mts_lease_state_parse("prepared"), LEASE_PREPARED);
	assert_int_equal(mts_lease_state_parse("bogus"), LEASE_NONE);
	mts_ledger_free(&a);
	mts_ledger_free(&b);
}

/* Random prepares, commits, aborts, removals and clock steps: the ledger
 * never holds more than its capacity. */
static void
test_ledger_never_overcommits(void **state)
{
	unsigned seed = (unsigned)(getenv("SEED") ? atoi(getenv("SEED")) : 7);
	struct mts_ledger l;
	mts_time_t now = 0;
	char id[32], task[32];
	int i;

	printf("seed %u\n", seed);
	mts_ledger_init(&l, res(4000, 4096 * MIB), 0);
	for (i = 0; i < 20000; i++) {
		int op = rand_r(&seed) % 5, n = rand_r(&seed) % 50;
		struct mts_digest d;
		uint64_t cpu = 0, mem = 0;
		size_t k;

		snprintf(id, sizeof(id), "L%d", n);
		snprintf(task, sizeof(task), "T%d", n);
		if (op == 0)
			mts_ledger_prepare(&l, id, OWNER, n % 2 ? "a" : "b",
			    res((uint32_t)(rand_r(&seed) % 1500),
			        (uint64_t)(rand_r(&seed) % 1500) * MIB),
			    3, 500, now);
		else if (op == 1)
			mts_ledger_commit(&l, id, task, now);
		else if (op == 2)
			mts_ledger_abort(&l, id, now);
		else if (op == 3)
			mts_ledger_task_remove(&l, task);
		else
			now += rand_r(&seed) % 300;
		for (k = 0; k < l.ntasks; k++) {
			cpu += l.tasks[k].res.cpu_millis;
			mem += l.tasks[k].res.memory;
		}
		for (k = 0; k < l.nleases; k++) {
			if (l.leases[k].state != LEASE_PREPARED)
				continue;
			cpu += l.leases[k].res.cpu_millis;
			mem += l.leases[k].res.memory;
		}
		if (cpu > 4000 || mem > 4096 * MIB)
			fail_msg("seed %u step %d: %llu millicores, %llu MiB "
			         "held",
			    seed, i, (unsigned long long)cpu,
			    (unsigned long long)(mem / MIB));
		mts_ledger_digest(&l, &d);
		assert_int_equal(d.free.cpu_millis, 4000 - cpu);
	}
	mts_ledger_free(&l);
}

/* --- the journal ------------------------------------------------------------------- */

#define WALL0 1700000000000ull /* the Unix ms of monotonic 0 in these tests */

/* Encodes the changes recorded since the last call onto j. */
static void
journal_take(struct mts_ledger *l, struct mts_buf *j, mts_time_t now)
{
	const struct mts_ledger_change *c;
	size_t i, n;

	c = mts_ledger_changes_take(l, &n);
	for (i = 0; i < n; i++)
		mts_journal_encode(j, &c[i], now, WALL0 + (uint64_t)now);
}

static const struct mts_lease *
lease_of(const struct mts_ledger *l, const char *id)
{
	size_t i;

	for (i = 0; i < l->nleases; i++)
		if (strcmp(l->leases[i].id, id) == 0)
			return &l->leases[i];
	return NULL;
}

static const struct mts_ledger_task *
task_of(const struct mts_ledger *l, const char *id)
{
	size_t i;

	for (i = 0; i < l->ntasks; i++)
		if (strcmp(l->tasks[i].id, id) == 0)
			return &l->tasks[i];
	return NULL;
}

/* Both ledgers hold the same leases and tasks (in any order). */
static void
assert_same_ledger(const struct mts_ledger *a, const struct mts_ledger *b,
    const char *when)
{
	size_t i;

	if (a->nleases != b->nleases || a->ntasks != b->ntasks)
		fail_msg("%s: %zu leases %zu tasks, replayed %zu and %zu", when,
		    a->nleases, a->ntasks, b->nleases, b->ntasks);
	for (i = 0; i < a->nleases; i++) {
		const struct mts_lease *x = &a->leases[i];
		const struct mts_lease *y = lease_of(b, x->id);

		if (y == NULL || y->state != x->state ||
		    y->res.cpu_millis != x->res.cpu_millis ||
		    y->res.memory != x->res.memory ||
		    strcmp(y->task, x->task) != 0 ||
		    strcmp(y->service, x->service) != 0 ||
		    y->expires != x->expires)
			fail_msg("%s: lease %s (%s, until %lld) differs after "
			         "the replay (%s, until %lld)",
			    when, x->id, mts_lease_state_str(x->state),
			    (long long)x->expires,
			    y ? mts_lease_state_str(y->state) : "none",
			    y ? (long long)y->expires : 0);
	}
	for (i = 0; i < a->ntasks; i++) {
		const struct mts_ledger_task *x = &a->tasks[i];
		const struct mts_ledger_task *y = task_of(b, x->id);

		if (y == NULL || y->res.cpu_millis != x->res.cpu_millis ||
		    strcmp(y->service, x->service) != 0)
			fail_msg("%s: task %s differs after the replay", when,
			    x->id);
	}
}

/* A snapshot as schedd_save.c restores one: the leases, then the tasks. */
static void
snapshot_into(struct mts_ledger *dst, const struct mts_ledger *src)
{
	size_t i;

	for (i = 0; i < src->nleases; i++)
		assert_int_equal(mts_ledger_lease_restore(dst, &src->leases[i]),
		    LEDGER_OK);
	for (i = 0; i < src->ntasks; i++)
		mts_ledger_task_add(dst, src->tasks[i].id,
		    src->tasks[i].service, src->tasks[i].res);
}

/* A restart at `now`: the snapshot, the journal, then expiry, as
 * schedd_save_load does it. */
static void
restart(struct mts_ledger *out, const struct mts_ledger *snap,
    const struct mts_buf *j, mts_time_t now, struct mts_journal_replay *rp)
{
	mts_ledger_init(out, snap->capacity, 0);
	out->ended_keep_ms = snap->ended_keep_ms;
	snapshot_into(out, snap);
	mts_journal_replay(out, j->data, j->len, now, WALL0 + (uint64_t)now,
	    rp);
	mts_ledger_expire(out, now);
}

static void
test_journal_records(void **state)
{
	struct mts_ledger l, r, empty;
	struct mts_journal_replay rp;
	struct mts_buf j;
	struct mts_jrec rec;
	size_t off = 0, n = 0;
	uint64_t gen;

	mts_buf_init(&j);
	mts_journal_head(&j, 42);
	assert_int_equal(j.len, MTS_JOURNAL_HEAD);
	assert_int_equal(mts_journal_head_parse(j.data, j.len, &gen), 0);
	assert_int_equal(gen, 42);
	j.data[0] ^= 1;
	assert_int_not_equal(mts_journal_head_parse(j.data, j.len, &gen), 0);
	assert_int_not_equal(mts_journal_head_parse(j.data, 8, &gen), 0);
	mts_buf_reset(&j);
	/* the standard check value of CRC-32C */
	assert_int_equal(mts_crc32c("123456789", 9), 0xe3069283u);

	mts_ledger_init(&l, res(2000, 1024 * MIB), 0);
	mts_ledger_init(&empty, res(2000, 1024 * MIB), 0);
	l.record = 1;
	assert_int_equal(mts_ledger_prepare(&l, "L1", OWNER, "web",
	                     res(500, 64 * MIB), 2, 1000, 10),
	    LEDGER_OK);
	/* a resent prepare changes nothing: no record */
	assert_int_equal(mts_ledger_prepare(&l, "L1", OWNER, "web",
	                     res(500, 64 * MIB), 2, 1000, 11),
	    LEDGER_OK);
	assert_int_equal(l.nchanges, 1);
	assert_int_equal(mts_ledger_commit(&l, "L1", "web.1", 20), LEDGER_OK);
	assert_int_equal(mts_ledger_prepare(&l, "L2", OWNER, "db",
	                     res(300, 64 * MIB), 0, 1000, 20),
	    LEDGER_OK);
	assert_int_equal(mts_ledger_abort(&l, "L2", 30), LEDGER_OK);
	assert_int_equal(mts_ledger_prepare(&l, "L3", OWNER, "db",
	                     res(300, 64 * MIB), 0, 100, 30),
	    LEDGER_OK);
	assert_int_equal(mts_ledger_expire(&l, 200), 1);
	mts_ledger_task_add(&l, "found", "web", res(100, MIB));
	mts_ledger_task_add(&l, "found", "web", res(100, MIB)); /* no record */
	assert_int_equal(mts_ledger_task_remove(&l, "found"), 0);
	assert_int_not_equal(mts_ledger_task_remove(&l, "found"), 0);
	assert_int_equal(l.nchanges, 8);
	assert_string_equal(mts_ledger_change_str(l.changes[5].kind), "expire");
	journal_take(&l, &j, 200);
	assert_int_equal(l.nchanges, 0);

	/* every record decodes to what was encoded, in order */
	{
		static const enum mts_ledger_change_kind want[] = { LCH_GRANT,
			LCH_COMMIT, LCH_GRANT, LCH_ABORT, LCH_GRANT, LCH_EXPIRE,
			LCH_TASK_ADD, LCH_TASK_DEL };

		while (mts_journal_decode(j.data, j.len, &off, &rec) == 1) {
			assert_true(n < 8);
			assert_int_equal(rec.ch.kind, want[n]);
			n++;
		}
		assert_int_equal(n, 8);
		assert_int_equal(off, j.len);
	}
	off = 0;
	assert_int_equal(mts_journal_decode(j.data, j.len, &off, &rec), 1);
	assert_string_equal(rec.ch.lease.id, "L1");
	assert_string_equal(rec.ch.lease.service, "web");
	assert_int_equal(rec.ch.lease.res.cpu_millis, 500);
	assert_int_equal(rec.ch.lease.max_per_node, 2);
	assert_int_equal(rec.expires_at_ms, WALL0 + 1010);
	assert_int_equal(mts_journal_decode(j.data, j.len, &off, &rec), 1);
	assert_string_equal(rec.ch.lease.task, "web.1");

	/* a restart from an empty snapshot and this journal: the same */
	restart(&r, &empty, &j, 200, &rp);
	assert_int_equal(rp.records, 8);
	assert_int_equal(rp.dropped, 0);
	mts_ledger_expire(&l, 200);
	assert_same_ledger(&l, &r, "replay");
	assert_non_null(task_of(&r, "web.1"));
	assert_null(task_of(&r, "found"));
	mts_ledger_free(&r);
	/* a restart after the committed lease's ttl: the task stays (the
	 * replay does not run expiry between a grant and its commit) */
	restart(&r, &empty, &j, 5000, &rp);
	assert_non_null(task_of(&r, "web.1"));
	assert_int_equal(r.ntasks, 1);
	mts_ledger_free(&r);
	mts_ledger_free(&l);
	mts_ledger_free(&empty);
	mts_buf_free(&j);
}

static void
test_journal_torn_tail(void **state)
{
	struct mts_ledger l, r, empty;
	struct mts_journal_replay rp;
	struct mts_buf j;
	size_t full, last, cut, i;

	mts_buf_init(&j);
	mts_ledger_init(&l, res(2000, 1024 * MIB), 0);
	mts_ledger_init(&empty, res(2000, 1024 * MIB), 0);
	l.record = 1;
	mts_ledger_prepare(&l, "L1", OWNER, "web", res(500, MIB), 0, 1000, 0);
	mts_ledger_commit(&l, "L1", "web.1", 1);
	journal_take(&l, &j, 1);
	last = j.len;
	mts_ledger_prepare(&l, "L2", OWNER, "web", res(500, MIB), 0, 1000, 2);
	journal_take(&l, &j, 2);
	full = j.len;
	/* cut anywhere inside the last record: the two before it stand */
	for (cut = last; cut < full; cut++) {
		struct mts_buf t = { j.data, cut, cut };

		restart(&r, &empty, &t, 3, &rp);
		assert_int_equal(rp.records, 2);
		assert_int_equal(rp.good_len, last);
		assert_int_equal(rp.dropped, cut - last);
		assert_null(lease_of(&r, "L2"));
		assert_non_null(task_of(&r, "web.1"));
		mts_ledger_free(&r);
	}
	/* a flipped bit anywhere in the last record: dropped as well */
	for (i = last; i < full; i++) {
		j.data[i] ^= 0x10;
		restart(&r, &empty, &j, 3, &rp);
		assert_int_equal(rp.records, 2);
		assert_int_equal(rp.dropped, full - last);
		mts_ledger_free(&r);
		j.data[i] ^= 0x10;
	}
	/* and in the first: nothing after it is trusted */
	j.data[MTS_JOURNAL_FRAME + 2] ^= 1;
	restart(&r, &empty, &j, 3, &rp);
	assert_int_equal(rp.records, 0);
	assert_int_equal(rp.dropped, full);
	assert_int_equal(r.nleases + r.ntasks, 0);
	mts_ledger_free(&r);
	mts_ledger_free(&l);
	mts_ledger_free(&empty);
	mts_buf_free(&j);
}

static void
test_journal_compact_rule(void **state)
{
	assert_false(mts_journal_compact_due(MTS_JOURNAL_HEAD, 0, 0));
	/* small journals are left alone whatever the snapshot */
	assert_false(
	    mts_journal_compact_due(MTS_JOURNAL_MIN_BYTES - 1, 100, 0));
	assert_true(mts_journal_compact_due(MTS_JOURNAL_MIN_BYTES, 100, 0));
	/* past 4 times the snapshot */
	assert_false(mts_journal_compact_due(4 * 1000000 - 4, 100, 1000000));
	assert_true(mts_journal_compact_due(4 * 1000000, 100, 1000000));
	/* or past the record limit */
	assert_true(
	    mts_journal_compact_due(1000, MTS_JOURNAL_MAX_RECORDS, 1 << 30));
}

/* Random prepares, commits, aborts, task changes and clock steps, with a
 * compaction (snapshot + empty journal) now and then: a restart at any
 * point — snapshot then journal — gives the ledger the live one is. */
static void
test_journal_replay_property(void **state)
{
	unsigned seed0 = (unsigned)(getenv("SEED") ? atoi(getenv("SEED")) : 11);
	unsigned seed = seed0;
	struct mts_ledger l, snap, r;
	struct mts_journal_replay rp;
	struct mts_buf j;
	mts_time_t now = 0;
	char id[32], task[32], when[64];
	int i, restarts = 0;

	printf("seed %u\n", seed);
	mts_buf_init(&j);
	mts_ledger_init(&l, res(4000, 4096 * MIB), 0);
	mts_ledger_init(&snap, res(4000, 4096 * MIB), 0);
	l.ended_keep_ms = snap.ended_keep_ms = 2000;
	l.record = 1;
	for (i = 0; i < 20000; i++) {
		int op = rand_r(&seed) % 8, n = rand_r(&seed) % 40;

		snprintf(id, sizeof(id), "L%d", n);
		snprintf(task, sizeof(task), "T%d", n);
		if (op == 0 || op == 1)
			mts_ledger_prepare(&l, id, OWNER, n % 2 ? "a" : "b",
			    res((uint32_t)(rand_r(&seed) % 1500),
			        (uint64_t)(rand_r(&seed) % 1500) * MIB),
			    0, rand_r(&seed) % 1000, now);
		else if (op == 2)
			mts_ledger_commit(&l, id, task, now);
		else if (op == 3)
			mts_ledger_abort(&l, id, now);
		else if (op == 4)
			n % 2
			    ? (void)mts_ledger_task_remove(&l, task)
			    : mts_ledger_task_add(&l, task, "c", res(10, MIB));
		else if (op == 5)
			mts_ledger_expire(&l, now);
		else
			now += rand_r(&seed) % 200;
		journal_take(&l, &j, now);
		if (rand_r(&seed) % 500 == 0) { /* compaction */
			mts_ledger_free(&snap);
			mts_ledger_init(&snap, l.capacity, 0);
			snap.ended_keep_ms = l.ended_keep_ms;
			snapshot_into(&snap, &l);
			mts_buf_reset(&j);
		}
		if (rand_r(&seed) % 50 == 0) { /* a crash and a restart */
			restart(&r, &snap, &j, now, &rp);
			mts_ledger_expire(&l, now);
			journal_take(&l, &j, now);
			snprintf(when, sizeof(when), "seed %u step %d", seed0,
			    i);
			assert_int_equal(rp.dropped, 0);
			assert_same_ledger(&l, &r, when);
			mts_ledger_free(&r);
			restarts++;
		}
	}
	assert_true(restarts > 100);
	mts_ledger_free(&l);
	mts_ledger_free(&snap);
	mts_buf_free(&j);
}

/* --- placement --------------------------------------------------------------------- */

static struct mts_label zone_a[] = { { "zone", "a" }, { "rack", "1" } };
static struct mts_label zone_a2[] = { { "zone", "a" }, { "rack", "2" } };
static struct mts_label zone_b[] = { { "zone", "b" }, { "rack", "3" },
	{ "role", "worker" } };

static void
three_nodes(struct mts_place_node *n)
{
	static const char *const ids[] = { "aa", "bb", "cc" };
	struct mts_label *labels[] = { zone_a, zone_a2, zone_b };
	size_t nl[] = { 2, 2, 3 };
	int i;

	for (i = 0; i < 3; i++) {
		memset(&n[i], 0, sizeof(n[i]));
		n[i].a.id = ids[i];
		n[i].a.hostname = i == 2 ? "host-c" : "host";
		n[i].a.os = "linux";
		n[i].a.arch = "x86_64";
		n[i].a.labels = labels[i];
		n[i].a.nlabels = nl[i];
		n[i].alive = n[i].active = 1;
		n[i].capacity = n[i].free = res(4000, 4096 * MIB);
	}
}

static uint32_t
count_on(const uint32_t *out, uint32_t placed, uint32_t node)
{
	uint32_t i, c = 0;

	for (i = 0; i < placed; i++)
		c += out[i] == node;
	return c;
}

static void
test_place_spread(void **state)
{
	struct mts_place_node n[3];
	struct mts_place_req r = { .res = res(100, 64 * MIB), .count = 9 };
	struct mts_place_why why;
	uint32_t out[16];

	three_nodes(n);
	assert_int_equal(mts_place(n, 3, &r, out, &why), 9);
	assert_int_equal(count_on(out, 9, 0), 3);
	assert_int_equal(count_on(out, 9, 1), 3);
	assert_int_equal(count_on(out, 9, 2), 3);
	/* ties go to the lower id, and the caller's nodes are untouched */
	assert_int_equal(out[0], 0);
	assert_int_equal(n[0].free.cpu_millis, 4000);
	/* existing tasks of the service count: node 0 has 3 already */
	n[0].service_tasks = 3;
	r.count = 3;
	assert_int_equal(mts_place(n, 3, &r, out, &why), 3);
	assert_int_equal(count_on(out, 3, 0), 0);
	/* down and draining nodes are left out */
	n[0].service_tasks = 0;
	n[1].alive = 0;
	n[2].active = 0;
	assert_int_equal(mts_place(n, 3, &r, out, &why), 3);
	assert_int_equal(count_on(out, 3, 0), 3);
	assert_int_equal(why.down, 1);
	assert_int_equal(why.inactive, 1);
}

static void
test_place_preferences(void **state)
{
	struct mts_place_node n[3];
	const char *spread[] = { "zone" };
	struct mts_place_req r = { .res = res(10, MIB),
		.count = 4,
		.spread = spread,
		.nspread = 1 };
	struct mts_place_why why;
	uint32_t out[8];

	three_nodes(n);
	/* zone a has two nodes, zone b one: 4 tasks are 2 per zone */
	assert_int_equal(mts_place(n, 3, &r, out, &why), 4);
	assert_int_equal(count_on(out, 4, 2), 2);
	assert_int_equal(count_on(out, 4, 0) + count_on(out, 4, 1), 2);
	assert_int_equal(count_on(out, 4, 0), 1);
}

static void
test_place_constraints(void **state)
{
	struct mts_place_node n[3];
	struct mts_constraint c[2];
	struct mts_place_req r = { .res = res(10, MIB),
		.count = 5,
		.constraints = c,
		.nconstraints = 1 };
	struct mts_place_why why;
	uint32_t out[8];
	char err[256], msg[256];

	three_nodes(n);
	assert_int_equal(mts_constraint_parse("node.labels.zone == b", &c[0],
	                     err, sizeof(err)),
	    0);
	assert_int_equal(mts_place(n, 3, &r, out, &why), 5);
	assert_int_equal(count_on(out, 5, 2), 5);
	assert_int_equal(mts_constraint_parse("node.labels.zone!=b", &c[0], err,
	                     sizeof(err)),
	    0);
	assert_int_equal(mts_place(n, 3, &r, out, &why), 5);
	assert_int_equal(count_on(out, 5, 2), 0);
	/* every attribute */
	assert_int_equal(mts_constraint_parse("node.hostname == host-c", &c[0],
	                     err, sizeof(err)),
	    0);
	assert_true(mts_constraint_match(&c[0], &n[2].a));
	assert_false(mts_constraint_match(&c[0], &n[0].a));
	assert_int_equal(mts_constraint_parse("node.id == bb", &c[0], err,
	                     sizeof(err)),
	    0);
	assert_true(mts_constraint_match(&c[0], &n[1].a));
	assert_int_equal(mts_constraint_parse("node.platform.arch == x86_64",
	                     &c[0], err, sizeof(err)),
	    0);
	assert_true(mts_constraint_match(&c[0], &n[1].a));
	/* node.role: the label where set, else every node is a manager */
	assert_int_equal(mts_constraint_parse("node.role == manager", &c[0],
	                     err, sizeof(err)),
	    0);
	assert_true(mts_constraint_match(&c[0], &n[0].a));
	assert_false(mts_constraint_match(&c[0], &n[2].a));
	/* an impossible constraint, and the reason for people */
	assert_int_equal(mts_constraint_parse("node.labels.disk == ssd", &c[0],
	                     err, sizeof(err)),
	    0);
	r.count = 1;
	assert_int_equal(mts_place(n, 3, &r, out, &why), 0);
	mts_place_explain(&r, 0, &why, msg, sizeof(msg));
	assert_string_equal(msg,
	    "0 of 1 placeable: no node matches "
	    "node.labels.disk == ssd");
	/* parse errors */
	assert_int_equal(mts_constraint_parse("node.colour == red", &c[1], err,
	                     sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "unknown attribute \"node.colour\""));
	assert_int_equal(mts_constraint_parse("zone", &c[1], err, sizeof(err)),
	    -1);
	assert_int_equal(mts_constraint_parse("node.id == ", &c[1], err,
	                     sizeof(err)),
	    -1);
}

static void
test_place_capacity(void **state)
{
	struct mts_place_node n[3];
	struct mts_place_req r = { .res = res(1000, 1024 * MIB), .count = 20 };
	struct mts_place_why why;
	uint32_t out[32];
	char msg[256];

	three_nodes(n);
	/* 4 per node fit by cpu and memory: 12 of 20 */
	assert_int_equal(mts_place(n, 3, &r, out, &why), 12);
	mts_place_explain(&r, 12, &why, msg, sizeof(msg));
	assert_string_equal(msg,
	    "12 of 20 placeable: the 3 eligible nodes "
	    "ran out of capacity or reached max_replicas_per_node");
	r.res.memory = 8192 * MIB;
	r.count = 1;
	assert_int_equal(mts_place(n, 3, &r, out, &why), 0);
	mts_place_explain(&r, 0, &why, msg, sizeof(msg));
	assert_string_equal(msg,
	    "0 of 1 placeable: insufficient memory on "
	    "all 3 nodes");
	/* max_replicas_per_node */
	r.res = res(1, 1);
	r.count = 10;
	r.max_per_node = 2;
	assert_int_equal(mts_place(n, 3, &r, out, &why), 6);
	/* binpack fills the first node before the next */
	r.max_per_node = 0;
	r.binpack = 1;
	r.res = res(1000, 16 * MIB);
	r.count = 5;
	assert_int_equal(mts_place(n, 3, &r, out, &why), 5);
	assert_int_equal(count_on(out, 5, 0), 4);
	assert_int_equal(count_on(out, 5, 1), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ledger_leases),
		cmocka_unit_test(test_ledger_limits),
		cmocka_unit_test(test_ledger_never_overcommits),
		cmocka_unit_test(test_ledger_restore),
		cmocka_unit_test(test_journal_records),
		cmocka_unit_test(test_journal_torn_tail),
		cmocka_unit_test(test_journal_compact_rule),
		cmocka_unit_test(test_journal_replay_property),
		cmocka_unit_test(test_place_spread),
		cmocka_unit_test(test_place_preferences),
		cmocka_unit_test(test_place_constraints),
		cmocka_unit_test(test_place_capacity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
