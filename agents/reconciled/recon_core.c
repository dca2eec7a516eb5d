/* recon_core.c: the reconciliation decisions — who owns a service, how many of its tasks are live, which extras to stop by the shared deterministic rule, and a node's own duties (global services, drains, orphans). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon_core.h"
#include "rendezvous.h"
#include "xmalloc.h"

static void
add(struct mts_rc_actions *out, enum mts_rc_kind kind, size_t service,
    size_t task, uint32_t count, const char *why)
{
	struct mts_rc_action *a;

	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 16;
		out->v = xreallocarray(out->v, out->cap, sizeof(*out->v));
	}
	a = &out->v[out->n++];
	a->kind = kind;
	a->service = service;
	a->task = task;
	a->count = count;
	snprintf(a->why, sizeof(a->why), "%s", why);
}

void
mts_rc_actions_free(struct mts_rc_actions *a)
{
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static const struct mts_rc_member *
member(const struct mts_rc_view *v, const char *hex)
{
	size_t i;

	for (i = 0; i < v->nmembers; i++)
		if (strcmp(v->members[i].attrs.id, hex) == 0)
			return &v->members[i];
	return NULL;
}

long
mts_rc_owner(const struct mts_rc_view *v, const char *service)
{
	uint8_t(*ids)[MTS_NODE_ID_LEN] = xcalloc(v->nmembers + 1, sizeof(*ids));
	size_t *idx = xcalloc(v->nmembers + 1, sizeof(*idx)), n = 0, i;
	long o;

	for (i = 0; i < v->nmembers; i++) {
		if (!v->members[i].alive || v->members[i].draining)
			continue;
		memcpy(ids[n], v->members[i].id, MTS_NODE_ID_LEN);
		idx[n++] = i;
	}
	if (v->weight) {
		uint64_t *w = xcalloc(n + 1, sizeof(*w));

		for (i = 0; i < n; i++)
			w[i] = v->weight(v->weight_ctx, service, ids[i]);
		o = mts_rendezvous_pick(w, (const uint8_t(*)[16])ids, n);
		free(w);
	} else {
		o = mts_rendezvous_owner(service, (const uint8_t(*)[16])ids, n);
	}
	o = o < 0 ? -1 : (long)idx[o];
	free(ids);
	free(idx);
	return o;
}

/* A task that counts toward its service: wanted running, not finished,
 * on a node that is alive and not draining. */
static int
live(const struct mts_rc_view *v, const struct mts_rc_task *t)
{
	const struct mts_rc_member *m = member(v, t->node);

	return t->desired_running &&
	    (t->state == RC_TASK_PENDING || t->state == RC_TASK_RUNNING) && m &&
	    m->alive && !m->draining;
}

static int
eligible(const struct mts_rc_service *s, const struct mts_rc_member *m)
{
	size_t k;

	if (m == NULL || !m->alive || m->draining)
		return 0;
	for (k = 0; k < s->nconstraints; k++)
		if (!mts_constraint_match(&s->constraints[k], &m->attrs))
			return 0;
	return 1;
}

/* The live tasks of service si (on the nodes in `node`, or all when NULL),
 * as indexes into view.tasks. */
static size_t
live_tasks(const struct mts_rc_view *v, size_t si, const char *node,
    size_t **out)
{
	size_t i, n = 0;

	*out = xcalloc(v->ntasks + 1, sizeof(**out));
	for (i = 0; i < v->ntasks; i++) {
		const struct mts_rc_task *t = &v->tasks[i];

		if (strcmp(t->service, v->services[si].name) == 0 &&
		    live(v, t) && (node == NULL || strcmp(t->node, node) == 0))
			(*out)[n++] = i;
	}
	return n;
}

static uint32_t
done_tasks(const struct mts_rc_view *v, size_t si, const char *node)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < v->ntasks; i++)
		n += v->tasks[i].state == RC_TASK_DONE &&
		    strcmp(v->tasks[i].service, v->services[si].name) == 0 &&
		    (node == NULL || strcmp(v->tasks[i].node, node) == 0);
	return n;
}

static size_t
tasks_on(const struct mts_rc_view *v, const size_t *idx, size_t n,
    const char *node)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += idx[i] != SIZE_MAX &&
		    strcmp(v->tasks[idx[i]].node, node) == 0;
	return c;
}

int
mts_rc_newer(const struct mts_rc_task *x, const struct mts_rc_task *y)
{
	int c;

	if (x->created != y->created)
		return x->created > y->created ? 1 : -1;
	c = strcmp(x->id, y->id);
	return c > 0 ? 1 : c < 0 ? -1 : 0;
}

/* Whether the task at idx[k] is stale: a newer task among idx holds its
 * slot (its replacement, placed while its node was dead or cut off). */
static int
stale(const struct mts_rc_view *v, const size_t *idx, size_t n, size_t k)
{
	const struct mts_rc_task *x = &v->tasks[idx[k]];
	size_t i;

	if (x->slot == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (i != k && idx[i] != SIZE_MAX &&
		    v->tasks[idx[i]].slot == x->slot &&
		    mts_rc_newer(&v->tasks[idx[i]], x) > 0)
			return 1;
	return 0;
}

/* > 0 when task a should be stopped before task b (sa, sb: whether each
 * is stale; ca, cb: the tasks on its node). */
static int
stop_first(const struct mts_rc_view *v, size_t a, size_t b, int sa, int sb,
    size_t ca, size_t cb)
{
	const struct mts_rc_task *x = &v->tasks[a], *y = &v->tasks[b];

	if (sa != sb)
		return sa ? 1 : -1;
	if (ca != cb)
		return ca > cb ? 1 : -1;
	return mts_rc_newer(x, y);
}

static int
returning(const struct mts_rc_view *v, size_t ti)
{
	const struct mts_rc_member *m = member(v, v->tasks[ti].node);

	return m != NULL && m->returning;
}

/* What may stop while the view settles: a task on a member that came
 * back moments ago whose slot a newer live task holds on a member this
 * node kept hearing (its record is as it is now). */
static int
settled_stale(const struct mts_rc_view *v, const size_t *idx, size_t n,
    size_t k)
{
	const struct mts_rc_task *x = &v->tasks[idx[k]];
	size_t i;

	if (x->slot == 0 || !returning(v, idx[k]))
		return 0;
	for (i = 0; i < n; i++)
		if (i != k && idx[i] != SIZE_MAX &&
		    v->tasks[idx[i]].slot == x->slot && !returning(v, idx[i]) &&
		    mts_rc_newer(&v->tasks[idx[i]], x) > 0)
			return 1;
	return 0;
}

/* Stops `extra` of the live tasks in idx by the shared rule, one at a
 * time so that each choice sees the counts the previous ones left. */
static void
stop_extras(const struct mts_rc_view *v, size_t si, size_t *idx, size_t n,
    size_t extra, const char *why, struct mts_rc_actions *out)
{
	size_t k, i;
	char swhy[96];

	for (k = 0; k < extra; k++) {
		size_t best = SIZE_MAX, cbest = 0;
		int sbest = 0;

		for (i = 0; i < n; i++) {
			size_t c;
			int st;

			if (idx[i] == SIZE_MAX)
				continue;
			c = tasks_on(v, idx, n, v->tasks[idx[i]].node);
			st = stale(v, idx, n, i);
			if (v->settling && !settled_stale(v, idx, n, i))
				continue;
			if (best == SIZE_MAX ||
			    stop_first(v, idx[i], idx[best], st, sbest, c,
			        cbest) > 0) {
				best = i;
				cbest = c;
				sbest = st;
			}
		}
		if (best == SIZE_MAX)
			return;
		if (sbest)
			snprintf(swhy, sizeof(swhy),
			    "stale: slot %u runs a newer task",
			    v->tasks[idx[best]].slot);
		add(out, RC_STOP, si, idx[best], 0, sbest ? swhy : why);
		idx[best] = SIZE_MAX;
	}
}

static int
on_draining_node(const struct mts_rc_view *v, const struct mts_rc_task *t)
{
	const struct mts_rc_member *m = member(v, t->node);

	return t->desired_running &&
	    (t->state == RC_TASK_PENDING || t->state == RC_TASK_RUNNING) && m &&
	    m->alive && m->draining;
}

/* The owner moves the tasks of service si off draining nodes: they do
 * not count, so their replacements are placed in the same pass; with
 * stop-first each stops at once, with start-first only as many as leave
 * the service running `want` (its live running tasks plus the drained
 * ones still running), the lowest task ids first. */
static void
drain_moves(const struct mts_rc_view *v, size_t si, uint32_t want,
    struct mts_rc_actions *out)
{
	const struct mts_rc_service *s = &v->services[si];
	size_t i, k, nd = 0, running = 0,
	             *d = xcalloc(v->ntasks + 1, sizeof(*d));
	size_t allow;

	for (i = 0; i < v->ntasks; i++) {
		const struct mts_rc_task *t = &v->tasks[i];

		if (strcmp(t->service, s->name) != 0)
			continue;
		if (on_draining_node(v, t)) {
			d[nd++] = i;
			running += t->state == RC_TASK_RUNNING;
		} else if (live(v, t) && t->state == RC_TASK_RUNNING) {
			running++;
		}
	}
	allow = !s->start_first ? nd : running > want ? running - want : 0;
	for (k = 0; k < nd && allow > 0; k++, allow--) {
		size_t best = k;

		for (i = k + 1; i < nd; i++) /* the lowest id first */
			if (strcmp(v->tasks[d[i]].id, v->tasks[d[best]].id) < 0)
				best = i;
		i = d[k];
		d[k] = d[best];
		d[best] = i;
		add(out, RC_STOP, si, d[k], 0, "node draining");
	}
	free(d);
}

/* Owner's duty for a replicated service or job: reach the count. */
static void
reconcile_owned(const struct mts_rc_view *v, size_t si,
    struct mts_rc_actions *out)
{
	const struct mts_rc_service *s = &v->services[si];
	uint32_t done =
	             s->mode == RC_REPLICATED_JOB ? done_tasks(v, si, NULL) : 0,
	         want = s->replicas > done ? s->replicas - done : 0;
	size_t *idx, n = live_tasks(v, si, NULL, &idx);
	char why[96];

	drain_moves(v, si, want, out);
	if (n < want && !v->settling) {
		snprintf(why, sizeof(why), "%zu of %u live", n, want);
		add(out, RC_PLACE, si, 0, (uint32_t)(want - n), why);
	} else if (n > want) {
		snprintf(why, sizeof(why), "%zu live, %u wanted", n, want);
		stop_extras(v, si, idx, n, n - want, why, out);
	}
	free(idx);
}

/* This node's duty for a global service: one task here while eligible. */
static void
reconcile_global(const struct mts_rc_view *v, size_t si,
    struct mts_rc_actions *out)
{
	const struct mts_rc_service *s = &v->services[si];
	const struct mts_rc_member *self = member(v, v->self);
	size_t *idx, n = live_tasks(v, si, v->self, &idx), i;
	int job = s->mode == RC_GLOBAL_JOB;

	if (!eligible(s, self)) {
		/* its tasks here, live or not (a draining node's are not) */
		for (i = 0; i < v->ntasks; i++)
			if (strcmp(v->tasks[i].service, s->name) == 0 &&
			    strcmp(v->tasks[i].node, v->self) == 0 &&
			    v->tasks[i].desired_running &&
			    (v->tasks[i].state == RC_TASK_PENDING ||
			        v->tasks[i].state == RC_TASK_RUNNING))
				add(out, RC_STOP, si, i, 0,
				    self && self->draining
				        ? "node draining"
				        : "this node is not eligible");
	} else if (n == 0 && !self->paused &&
	    !(job && done_tasks(v, si, v->self) > 0))
		add(out, RC_PLACE_LOCAL, si, 0, 1, "no task on this node");
	else if (n > 1)
		stop_extras(v, si, idx, n, n - 1, "more than one task here",
		    out);
	free(idx);
}

static long
find_service(const struct mts_rc_view *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->nservices; i++)
		if (strcmp(v->services[i].name, name) == 0)
			return (long)i;
	return -1;
}

/* This node's tasks that no owner will look after: their service was
 * removed, or this node drains and the service has no owner to move
 * them (its owner stops them, honouring the update order). */
static void
reconcile_own_tasks(const struct mts_rc_view *v, struct mts_rc_actions *out)
{
	const struct mts_rc_member *self = member(v, v->self);
	size_t i;

	for (i = 0; i < v->ntasks; i++) {
		const struct mts_rc_task *t = &v->tasks[i];
		long si;

		if (strcmp(t->node, v->self) != 0 || !t->desired_running ||
		    (t->state != RC_TASK_PENDING &&
		        t->state != RC_TASK_RUNNING))
			continue;
		si = find_service(v, t->service);
		if (si < 0)
			add(out, RC_STOP, SIZE_MAX, i, 0, "service removed");
		else if (self && self->draining &&
		    v->services[si].mode != RC_GLOBAL &&
		    v->services[si].mode != RC_GLOBAL_JOB &&
		    mts_rc_owner(v, t->service) < 0)
			add(out, RC_STOP, (size_t)si, i, 0, "node draining");
	}
}

void
mts_rc_reconcile(const struct mts_rc_view *v, struct mts_rc_actions *out)
{
	size_t i;

	for (i = 0; i < v->nservices; i++) {
		const struct mts_rc_service *s = &v->services[i];
		long o;

		if (s->mode == RC_GLOBAL || s->mode == RC_GLOBAL_JOB) {
			reconcile_global(v, i, out);
			continue;
		}
		o = v->owners ? v->owners[i] : mts_rc_owner(v, s->name);
		if (o >= 0 && strcmp(v->members[o].attrs.id, v->self) == 0)
			reconcile_owned(v, i, out);
	}
	reconcile_own_tasks(v, out);
}
