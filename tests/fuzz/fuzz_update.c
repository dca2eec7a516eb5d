/* fuzz_update.c: the rolling update core fed by the fuzzer — a service's parameters, a u/ status decoded from the input's bytes (as read from the replica), then steps over tasks that appear, change state and health and are stopped; every step must stop only live tasks of another spec, each once, start no more than the service's replicas, leave a status within its counts that encodes and decodes to itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/reconciled/update_pb.h"
#include "fuzz_input.h"

#define MAXT 64

static void
params(struct in *in, struct mts_up_params *p)
{
	mts_up_params_default(p);
	p->parallelism = take(in, 8);
	p->delay_ms = take(in, 4) * 500;
	p->order = take(in, 2) ? UP_START_FIRST : UP_STOP_FIRST;
	p->monitor_ms = take(in, 4) * 500;
	p->max_failure_ratio = take(in, 5) / 4.0;
	p->failure_action = (enum mts_up_action_on_failure)take(in, 3);
}

/* Equal as encoded: the strings up to their NULs. */
static int
same(const struct mts_up_status *a, const struct mts_up_status *b)
{
	size_t i;

	if (a->version != b->version || a->phase != b->phase ||
	    a->batch != b->batch || a->batches != b->batches ||
	    a->done != b->done || a->target != b->target ||
	    a->started_ms != b->started_ms ||
	    a->healthy_since_ms != b->healthy_since_ms ||
	    a->next_batch_ms != b->next_batch_ms ||
	    a->ended_ms != b->ended_ms ||
	    a->paused_by_operator != b->paused_by_operator ||
	    a->promoted != b->promoted || a->resumes != b->resumes ||
	    a->failures != b->failures || a->nseen != b->nseen ||
	    strcmp(a->message, b->message) != 0)
		return 0;
	for (i = 0; i < a->nseen; i++)
		if (strcmp(a->seen[i], b->seen[i]) != 0)
			return 0;
	return 1;
}

static void
check(const struct mts_up_service *s, const struct mts_up_task *t, size_t n,
    const struct mts_up_status *st, const struct mts_up_actions *a)
{
	char stopped[MAXT] = { 0 };
	struct mts_up_status back;
	uint8_t *buf;
	size_t i, len;

	for (i = 0; i < a->n; i++) {
		const struct mts_up_action *x = &a->v[i];

		if (x->kind == UP_STOP) {
			if (x->task >= n || t[x->task].current ||
			    !t[x->task].desired_running || stopped[x->task]++)
				abort();
		} else if (x->kind == UP_START &&
		    (x->count == 0 || x->count > s->replicas))
			abort();
	}
	if (mts_up_active(st) &&
	    (st->target > s->replicas || st->done > st->target ||
	        st->nseen > MTS_UP_SEEN_MAX))
		abort();
	buf = mts_up_status_encode(st, NULL, 0, &len);
	if (mts_up_status_decode(buf, len, &back) != 0 || !same(&back, st))
		abort();
	free(buf);
}

/* Any status an admin could have written to u/: fields straight from
 * the input. */
static void
raw_status(struct in *in, const struct mts_up_service *s,
    struct mts_up_status *st)
{
	memset(st, 0, sizeof(*st));
	st->version = take(in, 2) ? s->version : take(in, 0);
	st->phase = (enum mts_up_phase)take(in, 8);
	st->batch = take(in, 0);
	st->batches = take(in, 0);
	st->done = take(in, 0);
	st->target = take(in, 0);
	st->healthy_since_ms = take(in, 0) * 1000;
	st->next_batch_ms = take(in, 0) * 1000;
	st->promoted = take(in, 2);
	st->paused_by_operator = take(in, 2);
	st->failures = take(in, 0);
}

/* The nodes: one task changes as the input says. */
static void
mutate(struct in *in, struct mts_up_task *t, size_t *n, char (*ids)[16])
{
	unsigned op = take(in, 4), k = *n ? take(in, (unsigned)*n) : 0;

	if (op == 0 && *n < MAXT) {
		memset(&t[*n], 0, sizeof(t[*n]));
		snprintf(ids[*n], 16, "t%zu", *n);
		t[*n].id = ids[*n];
		t[*n].current = take(in, 2);
		t[*n].desired_running = 1;
		t[*n].started_ms = 1000 + take(in, 0) * 100;
		(*n)++;
	} else if (op == 1 && *n)
		t[k].state = (enum mts_up_task_state)take(in, 5);
	else if (op == 2 && *n)
		t[k].health = (enum mts_up_health)take(in, 4);
	else if (op == 3 && *n)
		t[k].desired_running = !t[k].desired_running;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct mts_up_service s;
	struct mts_up_status st;
	struct mts_up_task t[MAXT];
	char ids[MAXT][16];
	size_t n = 0, blob;
	uint64_t now = 100000;

	memset(&s, 0, sizeof(s));
	s.version = 1 + take(&in, 3);
	s.replicas = take(&in, 12);
	s.rollback = take(&in, 2);
	s.has_previous = take(&in, 2);
	params(&in, &s.update);
	params(&in, &s.rollback_cfg);
	s.canary = take(&in, 4);
	s.auto_promote = take(&in, 2);
	s.auto_revert = take(&in, 2);
	s.healthy_deadline_ms = take(&in, 4) * 1000;
	if (take(&in, 2)) { /* a u/ value, as the replica holds it */
		blob = take(&in, 0);
		if (blob > in.n)
			blob = in.n;
		if (mts_up_status_decode(in.p, blob, &st) != 0)
			memset(&st, 0, sizeof(st));
		in.p += blob;
		in.n -= blob;
	} else
		raw_status(&in, &s, &st);
	while (in.n > 0) {
		struct mts_up_actions a = { 0 };
		unsigned ctl = take(&in, 8);

		if (ctl == 0)
			s.paused = !s.paused;
		else if (ctl == 1)
			s.resumes++;
		else if (ctl == 2)
			s.promoted = s.version;
		else if (ctl == 3)
			s.version++;
		mutate(&in, t, &n, ids);
		now += take(&in, 0) * 50;
		mts_up_step(&s, t, n, &st, now, &a);
		check(&s, t, n, &st, &a);
		mts_up_actions_free(&a);
	}
	return 0;
}
