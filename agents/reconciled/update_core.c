/* update_core.c: the rolling update state machine — beginning an update when the record's version changes, health-gated batches with monitor and delay, stop-first and start-first, canaries and promote, failure counting against max_failure_ratio and the failure action, operator pause and resume. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "update_core.h"
#include "xmalloc.h"

void
mts_up_params_default(struct mts_up_params *p)
{
	memset(p, 0, sizeof(*p));
	p->parallelism = 1;
	p->order = UP_STOP_FIRST;
	p->monitor_ms = 5000;
	p->failure_action = UP_FAIL_PAUSE;
}

static void __attribute__((format(printf, 5, 6)))
add(struct mts_up_actions *out, enum mts_up_kind kind, size_t task,
    uint32_t count, const char *fmt, ...)
{
	struct mts_up_action *a;
	va_list ap;

	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 8;
		out->v = xreallocarray(out->v, out->cap, sizeof(*out->v));
	}
	a = &out->v[out->n++];
	a->kind = kind;
	a->task = task;
	a->count = count;
	va_start(ap, fmt);
	vsnprintf(a->why, sizeof(a->why), fmt, ap);
	va_end(ap);
}

void
mts_up_actions_free(struct mts_up_actions *a)
{
	free(a->v);
	memset(a, 0, sizeof(*a));
}

int
mts_up_active(const struct mts_up_status *st)
{
	return st->phase != UP_NONE && st->phase != UP_COMPLETED &&
	    st->phase != UP_ROLLBACK_COMPLETED;
}

static int
paused(enum mts_up_phase p)
{
	return p == UP_PAUSED || p == UP_ROLLBACK_PAUSED;
}

/* --- what the tasks say ---------------------------------------------------------- */

static int
is_live(const struct mts_up_task *t)
{
	return t->desired_running &&
	    (t->state == UP_TASK_PENDING || t->state == UP_TASK_RUNNING);
}

static int
is_healthy(const struct mts_up_task *t)
{
	return t->state == UP_TASK_RUNNING &&
	    (t->health == UP_HEALTH_NONE || t->health == UP_HEALTH_HEALTHY);
}

struct counts {
	uint32_t cur, cur_healthy; /* live tasks of the record's spec */
	uint32_t old, old_healthy; /* live tasks of another spec */
	uint32_t stopping;         /* old tasks asked to stop, still up */
	uint32_t cur_failed;       /* live new ones already counted failed */
};

static int seen(const struct mts_up_status *, const char *);

/* Placed from a version before the update's: not one of its tasks. */
static int
before(const struct mts_up_task *t, const struct mts_up_status *st)
{
	return t->version && t->version < st->version;
}

static void
count(const struct mts_up_task *t, size_t n, const struct mts_up_status *st,
    struct counts *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++) {
		int up = t[i].state == UP_TASK_PENDING ||
		    t[i].state == UP_TASK_RUNNING;

		if (t[i].current && is_live(&t[i])) {
			c->cur++;
			c->cur_healthy += is_healthy(&t[i]);
			/* one counted failed, or placed before this update
			 * (a rebalance's or rollback's untouched task): it
			 * does not hold the batch */
			c->cur_failed += !is_healthy(&t[i]) &&
			    (seen(st, t[i].id) || before(&t[i], st));
		} else if (!t[i].current && is_live(&t[i])) {
			c->old++;
			c->old_healthy += is_healthy(&t[i]);
		} else if (!t[i].current && up)
			c->stopping++;
	}
}

/* Why a task of the record's spec counts as failed, or NULL. */
static const char *
failed_why(const struct mts_up_service *s, const struct mts_up_task *t,
    uint64_t now)
{
	uint64_t deadline = s->healthy_deadline_ms ? s->healthy_deadline_ms
	                                           : MTS_UP_HEALTHY_DEADLINE_MS;

	if (!t->current || (t->version && t->version < s->version))
		return NULL;
	if (t->state == UP_TASK_FAILED)
		return "failed";
	if (t->state == UP_TASK_EXITED && t->desired_running)
		return "exited";
	if (!is_live(t))
		return NULL;
	if (t->state == UP_TASK_RUNNING && t->health == UP_HEALTH_UNHEALTHY)
		return "unhealthy";
	if (!is_healthy(t) && t->started_ms && now >= t->started_ms + deadline)
		return "never turned healthy";
	return NULL;
}

static int
seen(const struct mts_up_status *st, const char *id)
{
	size_t i;

	for (i = 0; i < st->nseen; i++)
		if (strcmp(st->seen[i], id) == 0)
			return 1;
	return 0;
}

/* --- the phases ------------------------------------------------------------------ */

static const struct mts_up_params *
params(const struct mts_up_service *s)
{
	return s->rollback ? &s->rollback_cfg : &s->update;
}

static uint32_t
parallelism(const struct mts_up_service *s)
{
	uint32_t p = params(s)->parallelism;

	return p ? p : s->replicas ? s->replicas : 1;
}

static uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t
ceil_div(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

static int
canary_phase(const struct mts_up_service *s, const struct mts_up_status *st)
{
	return !st->promoted && s->canary > 0;
}

static void msg(struct mts_up_status *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
msg(struct mts_up_status *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->message, sizeof(st->message), fmt, ap);
	va_end(ap);
}

/* A new version with tasks of another spec to replace: a fresh status. */
static void
begin(const struct mts_up_service *s, const struct counts *c,
    struct mts_up_status *st, uint64_t now, struct mts_up_actions *out)
{
	const struct mts_up_params *p = params(s);
	/* what runs the spec healthy, and what this update leaves alone */
	uint32_t par = parallelism(s),
	         done = min_u32(c->cur_healthy + c->cur_failed, s->replicas);
	uint32_t canaries = min_u32(s->canary, s->replicas);

	memset(st, 0, sizeof(*st));
	st->version = s->version;
	st->phase = s->rollback ? UP_ROLLBACK_STARTED : UP_UPDATING;
	st->started_ms = now;
	st->resumes = s->resumes;
	st->done = done;
	st->batch = 1;
	st->promoted = s->rollback || s->canary == 0 ||
	    s->promoted == s->version || done >= canaries;
	if (st->promoted) {
		st->batches = ceil_div(s->replicas - done, par);
		st->target = min_u32(s->replicas, done + par);
	} else {
		st->batches = 1 + ceil_div(s->replicas - canaries, par);
		st->target = canaries;
	}
	if (st->batches == 0)
		st->batches = 1;
	msg(st, "%s version %llu: %u of %u tasks, %u at a time, %s",
	    s->rebalance      ? "rebalancing at"
	        : s->rollback ? "rolling back to"
	                      : "updating to",
	    (unsigned long long)s->version, s->replicas - done, s->replicas,
	    par, p->order == UP_START_FIRST ? "start-first" : "stop-first");
	if (!st->promoted)
		msg(st, "version %llu: %u canaries beside %u tasks",
		    (unsigned long long)s->version, canaries, s->replicas);
	add(out, UP_BEGAN, 0, st->batches, "%s", st->message);
}

static void
finish(const struct mts_up_service *s, struct mts_up_status *st, uint64_t now,
    struct mts_up_actions *out)
{
	st->phase = s->rollback ? UP_ROLLBACK_COMPLETED : UP_COMPLETED;
	st->ended_ms = now;
	st->healthy_since_ms = 0;
	msg(st, "%s version %llu completed: %u tasks",
	    s->rebalance      ? "rebalance at"
	        : s->rollback ? "rollback to"
	                      : "update to",
	    (unsigned long long)s->version, s->replicas);
	add(out, UP_DONE, 0, 0, "%s", st->message);
}

static void
pause_now(const struct mts_up_service *s, struct mts_up_status *st,
    int operator, struct mts_up_actions * out)
{
	st->phase = s->rollback ? UP_ROLLBACK_PAUSED : UP_PAUSED;
	st->paused_by_operator = operator;
	st->healthy_since_ms = 0;
	if (operator)
		msg(st, "paused by the operator at batch %u of %u", st->batch,
		    st->batches);
	add(out, UP_PAUSE, 0, 0, "%s", st->message);
}

/* service update --pause / --resume and service promote. */
static void
control(const struct mts_up_service *s, struct mts_up_status *st,
    struct mts_up_actions *out)
{
	if (s->paused && !paused(st->phase)) {
		pause_now(s, st, 1, out);
		return;
	}
	if (!s->paused && paused(st->phase) &&
	    (st->paused_by_operator || s->resumes != st->resumes)) {
		st->phase = s->rollback ? UP_ROLLBACK_STARTED : UP_UPDATING;
		st->paused_by_operator = 0;
		st->resumes = s->resumes;
		st->failures = 0; /* the failures seen so far are forgiven */
		msg(st, "resumed at batch %u of %u", st->batch, st->batches);
		add(out, UP_RESUMED, 0, 0, "%s", st->message);
	}
	if (!st->promoted && s->promoted == s->version)
		st->promoted = 1;
}

/* What the failures ask for once the ratio is exceeded. */
static void
on_failure(const struct mts_up_service *s, struct mts_up_status *st,
    struct mts_up_actions *out)
{
	enum mts_up_action_on_failure a = params(s)->failure_action;

	if (s->auto_revert && !s->rollback)
		a = UP_FAIL_ROLLBACK;
	if (a == UP_FAIL_CONTINUE)
		return;
	if (a == UP_FAIL_ROLLBACK && !s->rollback && s->has_previous) {
		st->phase = UP_ROLLBACK_STARTED;
		st->healthy_since_ms = 0;
		add(out, UP_ROLLBACK, 0, 0, "%s", st->message);
		return;
	}
	if (a == UP_FAIL_ROLLBACK)
		snprintf(st->message + strlen(st->message),
		    sizeof(st->message) - strlen(st->message), "; %s",
		    s->rollback ? "a rollback is not rolled back"
		                : "no previous spec to roll back to");
	pause_now(s, st, 0, out);
}

/* Counts each task of the new spec that failed once (by id); past the
 * ratio, the failure action. */
static void
failures(const struct mts_up_service *s, const struct mts_up_task *t, size_t n,
    struct mts_up_status *st, uint64_t now, struct mts_up_actions *out)
{
	int fresh = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *why = failed_why(s, &t[i], now);

		if (why == NULL || seen(st, t[i].id) ||
		    st->nseen == MTS_UP_SEEN_MAX)
			continue;
		snprintf(st->seen[st->nseen++], MTS_UP_ID_MAX, "%s", t[i].id);
		st->failures++;
		fresh = 1;
		if (!paused(st->phase)) /* keep the reason it paused */
			msg(st, "task %s %s (%u failed of %u)", t[i].id, why,
			    st->failures, s->replicas);
	}
	if (fresh &&
	    (st->phase == UP_UPDATING || st->phase == UP_CANARY ||
	        st->phase == UP_ROLLBACK_STARTED) &&
	    (double)st->failures / (s->replicas ? s->replicas : 1) >
	        params(s)->max_failure_ratio)
		on_failure(s, st, out);
}

/* Health gate: a batch is done once every live task of the new spec is
 * healthy (or already counted failed, within the ratio), the counts are
 * reached and that has held for monitor. */
static int
gate(const struct mts_up_service *s, struct mts_up_status *st,
    const struct counts *c, uint32_t cur_want, uint32_t old_want, uint64_t now)
{
	int ready = c->cur >= cur_want && c->old <= old_want &&
	    c->stopping == 0 && c->cur_healthy + c->cur_failed == c->cur;

	if (!ready) {
		st->healthy_since_ms = 0;
		return 0;
	}
	if (st->healthy_since_ms == 0)
		st->healthy_since_ms = now;
	return now - st->healthy_since_ms >= params(s)->monitor_ms;
}

static void
wants(const struct mts_up_service *s, const struct mts_up_status *st,
    uint32_t *cur_want, uint32_t *old_want)
{
	if (canary_phase(s, st)) {
		*cur_want = st->target;
		*old_want = s->replicas; /* canaries run beside the old */
	} else {
		*cur_want = st->target;
		*old_want =
		    s->replicas > st->target ? s->replicas - st->target : 0;
	}
}

/* Moves the batches on; 1 when the update completed. */
static int
advance(const struct mts_up_service *s, const struct counts *c,
    struct mts_up_status *st, uint64_t now, struct mts_up_actions *out)
{
	uint32_t cw, ow;

	if (st->phase != UP_UPDATING && st->phase != UP_ROLLBACK_STARTED)
		return 0;
	if (st->target == st->done && !canary_phase(s, st)) {
		/* between batches */
		if (st->done >= s->replicas) {
			if (c->old == 0 && c->stopping == 0) {
				finish(s, st, now, out);
				return 1;
			}
			return 0;
		}
		if (now < st->next_batch_ms ||
		    c->old + st->done > s->replicas || c->stopping > 0)
			return 0; /* the delay, or surplus old tasks stopping */
		st->batch++;
		st->target = min_u32(s->replicas, st->done + parallelism(s));
		st->healthy_since_ms = 0;
		msg(st, "batch %u of %u: %u tasks", st->batch, st->batches,
		    st->target - st->done);
		return 0;
	}
	wants(s, st, &cw, &ow);
	if (!gate(s, st, c, cw, ow, now))
		return 0;
	st->healthy_since_ms = 0;
	st->next_batch_ms = now + params(s)->delay_ms;
	if (canary_phase(s, st) && !s->auto_promote) {
		st->phase = UP_CANARY;
		msg(st,
		    "%u canaries healthy: service promote finishes the "
		    "update",
		    st->target);
		add(out, UP_CANARY_READY, 0, st->batch, "%s", st->message);
		return 0;
	}
	add(out, UP_BATCH_DONE, 0, st->batch, "batch %u of %u done", st->batch,
	    st->batches);
	st->done = min_u32(st->target, s->replicas);
	st->promoted = 1;
	if (st->done >= s->replicas && c->old == 0 && c->stopping == 0) {
		finish(s, st, now, out);
		return 1;
	}
	/* with no delay the next batch starts in this step, not the next */
	return st->done < s->replicas && params(s)->delay_ms == 0
	    ? advance(s, c, st, now, out)
	    : 0;
}

/* Promote from UP_CANARY: the canaries count as the first batch. */
static void
promote(const struct mts_up_service *s, struct mts_up_status *st)
{
	if (st->phase != UP_CANARY || !st->promoted)
		return;
	st->phase = UP_UPDATING;
	st->done = min_u32(st->target, s->replicas);
	msg(st, "promoted: %u canaries, %u tasks to go", st->done,
	    s->replicas - st->done);
}

/* > 0 when old task a should stop before b: unhealthy ones first, then
 * the newest, then the greatest id (the same on every owner). */
static int
stop_before(const struct mts_up_task *a, const struct mts_up_task *b)
{
	if (is_healthy(a) != is_healthy(b))
		return is_healthy(b) ? 1 : -1;
	if (a->started_ms != b->started_ms)
		return a->started_ms > b->started_ms ? 1 : -1;
	return strcmp(a->id, b->id);
}

/* Stops k old tasks, each with the reason its node's task.stopped and
 * the owner's task.updated events give: what stopped it and the version
 * it moves to (not a failure: docs/scheduling.md). */
static void
stop_old(const struct mts_up_service *s, const struct mts_up_task *t, size_t n,
    uint32_t k, struct mts_up_actions *out)
{
	const char *by = s->rebalance ? "service rebalance"
	    : s->rollback             ? "the rollback"
	                              : "the update";

	char *taken = xcalloc(n + 1, 1);
	uint32_t j;
	size_t i;

	for (j = 0; j < k; j++) {
		size_t best = SIZE_MAX;

		for (i = 0; i < n; i++)
			if (!t[i].current && is_live(&t[i]) && !taken[i] &&
			    (best == SIZE_MAX ||
			        stop_before(&t[i], &t[best]) > 0))
				best = i;
		if (best == SIZE_MAX)
			break;
		taken[best] = 1;
		add(out, UP_STOP, best, 0, "stopped by %s to version %llu", by,
		    (unsigned long long)s->version);
	}
	free(taken);
}

/* The starts and stops that move the counts toward this batch's (or hold
 * them, paused): stop-first stops old tasks and starts new ones once
 * they are gone; start-first starts new ones and stops old ones only
 * while the healthy tasks stay at the replica count. */
static void
converge(const struct mts_up_service *s, const struct mts_up_task *t, size_t n,
    const struct counts *c, const struct mts_up_status *st,
    struct mts_up_actions *out)
{
	uint32_t cw, ow, stop = 0, start = 0;

	wants(s, st, &cw, &ow);
	if (st->phase == UP_ROLLBACK_STARTED && !s->rollback) {
		/* the rollback's s/ write is pending: the record's spec is
		 * the failing one, so nothing starts or stops meanwhile */
		return;
	} else if (params(s)->order == UP_STOP_FIRST) {
		stop = c->old > ow ? c->old - ow : 0;
		if (stop == 0 && c->stopping == 0 && c->cur < cw)
			start = cw - c->cur;
	} else {
		/* stopping an unhealthy old task first costs no healthy one;
		 * new tasks counted failed and the untouched ones that are
		 * unhealthy do not hold the old ones back */
		uint32_t up = c->cur_healthy + c->old_healthy + c->cur_failed,
		         allowed = (c->old - c->old_healthy) +
		    (up > s->replicas ? up - s->replicas : 0);

		start = c->cur < cw ? cw - c->cur : 0;
		stop = min_u32(c->old > ow ? c->old - ow : 0, allowed);
	}
	if (start)
		add(out, UP_START, 0, start, "batch %u of %u", st->batch,
		    st->batches);
	stop_old(s, t, n, stop, out);
}

/* A status read from the replica is not trusted to be consistent (any
 * admin can write u/): counts beyond the replicas are brought back to
 * them, so that no step asks for more tasks than the service has, and
 * no more tasks count as done than run the new spec (a batch whose task
 * was lost since is health-gated again). */
static void
clamp(const struct mts_up_service *s, const struct counts *c,
    struct mts_up_status *st)
{
	if (st->target > s->replicas)
		st->target = s->replicas;
	if (st->done > st->target)
		st->done = st->target;
	if (st->done > c->cur) /* ...and no more done than there are */
		st->done = c->cur;
	if (st->batches < st->batch)
		st->batches = st->batch;
	if (st->nseen > MTS_UP_SEEN_MAX)
		st->nseen = MTS_UP_SEEN_MAX;
}

void
mts_up_step(const struct mts_up_service *s, const struct mts_up_task *t,
    size_t n, struct mts_up_status *st, uint64_t now,
    struct mts_up_actions *out)
{
	struct counts c;

	count(t, n, st, &c);
	if (st->version != s->version) {
		/* nothing of another spec runs and no update to take over: a
		 * scale or a first deploy, the reconciler's business */
		struct mts_up_status fresh;

		if (c.old == 0 && c.stopping == 0 && !mts_up_active(st))
			return;
		memset(&fresh, 0, sizeof(fresh));
		fresh.version = s->version;
		count(t, n, &fresh, &c); /* as this version's update counts */
		begin(s, &c, st, now, out);
	}
	if (!mts_up_active(st))
		return;
	clamp(s, &c, st);
	if (st->phase == UP_ROLLBACK_STARTED && !s->rollback) {
		add(out, UP_ROLLBACK, 0, 0, "%s", st->message);
		converge(s, t, n, &c, st, out);
		return;
	}
	control(s, st, out);
	promote(s, st);
	failures(s, t, n, st, now, out);
	count(t, n, st, &c); /* the failures just counted */
	if (st->phase == UP_ROLLBACK_STARTED && !s->rollback) {
		converge(s, t, n, &c, st, out);
		return;
	}
	if (advance(s, &c, st, now, out))
		return;
	converge(s, t, n, &c, st, out);
}

/* --- names ----------------------------------------------------------------------- */

static const char *const phase_names[] = {
	[UP_NONE] = "none",
	[UP_UPDATING] = "updating",
	[UP_CANARY] = "canary",
	[UP_PAUSED] = "paused",
	[UP_COMPLETED] = "completed",
	[UP_ROLLBACK_STARTED] = "rollback_started",
	[UP_ROLLBACK_PAUSED] = "rollback_paused",
	[UP_ROLLBACK_COMPLETED] = "rollback_completed",
};

static const char *const kind_names[] = {
	[UP_START] = "start",
	[UP_STOP] = "stop",
	[UP_BEGAN] = "update.started",
	[UP_BATCH_DONE] = "update.batch_done",
	[UP_PAUSE] = "update.paused",
	[UP_RESUMED] = "update.resumed",
	[UP_CANARY_READY] = "update.canary_ready",
	[UP_ROLLBACK] = "update.rolled_back",
	[UP_DONE] = "update.completed",
};

const char *
mts_up_phase_name(enum mts_up_phase p)
{
	return (size_t)p < sizeof(phase_names) / sizeof(phase_names[0])
	    ? phase_names[p]
	    : "?";
}

int
mts_up_phase_parse(const char *s, enum mts_up_phase *out)
{
	size_t i;

	for (i = 0; i < sizeof(phase_names) / sizeof(phase_names[0]); i++)
		if (strcmp(s, phase_names[i]) == 0) {
			*out = (enum mts_up_phase)i;
			return 0;
		}
	return -1;
}

const char *
mts_up_kind_name(enum mts_up_kind k)
{
	return (size_t)k < sizeof(kind_names) / sizeof(kind_names[0])
	    ? kind_names[k]
	    : "?";
}

int
mts_up_order_parse(const char *s, enum mts_up_order *out)
{
	if (s == NULL || *s == '\0' || strcmp(s, "stop-first") == 0)
		*out = UP_STOP_FIRST;
	else if (strcmp(s, "start-first") == 0)
		*out = UP_START_FIRST;
	else
		return -1;
	return 0;
}

int
mts_up_failure_parse(const char *s, enum mts_up_action_on_failure *out)
{
	if (s == NULL || *s == '\0' || strcmp(s, "pause") == 0)
		*out = UP_FAIL_PAUSE;
	else if (strcmp(s, "continue") == 0)
		*out = UP_FAIL_CONTINUE;
	else if (strcmp(s, "rollback") == 0)
		*out = UP_FAIL_ROLLBACK;
	else
		return -1;
	return 0;
}
