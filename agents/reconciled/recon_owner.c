/* recon_owner.c: the core's decisions turned into calls — an owner places missing replicas (schedd's Place over its view, then Prepare on each chosen node and Assign to that node's reconciled, backing off a node that refuses), stops extras where they run, publishes p/<service>; a node places its own task of a global service. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "reconciled.h"
#include "update_pb.h"
#include "xmalloc.h"

#define STOP_RESEND_MS 3000 /* a stop the node did not take, at most */

/* --- small tables -------------------------------------------------------------- */

static struct rc_own *
own_get(struct recond *r, const char *service)
{
	struct rc_own *o;

	for (o = r->own; o != NULL; o = o->next)
		if (strcmp(o->service, service) == 0)
			return o;
	o = xcalloc(1, sizeof(*o));
	snprintf(o->service, sizeof(o->service), "%s", service);
	o->next = r->own;
	r->own = o;
	return o;
}

static struct rc_backoff *
backoff_find(struct recond *r, const char *node)
{
	struct rc_backoff *b;

	for (b = r->backoff; b != NULL; b = b->next)
		if (strcmp(b->node, node) == 0)
			return b;
	return NULL;
}

/* A node refused: leave it out for a while, longer each time. */
static void
backoff_hit(struct recond *r, const char *node)
{
	struct rc_backoff *b = backoff_find(r, node);

	if (b == NULL) {
		b = xcalloc(1, sizeof(*b));
		snprintf(b->node, sizeof(b->node), "%s", node);
		b->next = r->backoff;
		r->backoff = b;
	}
	b->delay = b->delay ? b->delay * 2 : r->cfg.backoff_ms;
	if (b->delay > r->cfg.backoff_max_ms)
		b->delay = r->cfg.backoff_max_ms;
	b->until = mts_now() + b->delay;
}

static void
backoff_clear(struct recond *r, const char *node)
{
	struct rc_backoff **pp, *b;

	for (pp = &r->backoff; (b = *pp) != NULL; pp = &b->next)
		if (strcmp(b->node, node) == 0) {
			*pp = b->next;
			free(b);
			return;
		}
}

static void
inflight_add(struct recond *r, const char *id, const char *node,
    const char *service, uint32_t slot)
{
	struct rc_inflight *f = xcalloc(1, sizeof(*f));

	snprintf(f->id, sizeof(f->id), "%s", id);
	snprintf(f->node, sizeof(f->node), "%s", node);
	snprintf(f->service, sizeof(f->service), "%s", service);
	f->slot = slot;
	f->until = mts_now() + r->cfg.assign_wait_ms;
	f->next = r->inflight;
	r->inflight = f;
}

static int
in_view(struct recond *r, const char *id)
{
	size_t i;

	if (rc_local_find(r, id) != NULL)
		return 1;
	for (i = 0; i < r->view.ntasks; i++)
		if (strcmp(r->view.tasks[i].id, id) == 0)
			return 1;
	return 0;
}

/* Assigned tasks whose record arrived (or that waited too long) stop
 * counting as in flight. */
void
rc_inflight_seen(struct recond *r)
{
	struct rc_inflight **pp = &r->inflight, *f;
	mts_time_t now = mts_now();

	while ((f = *pp) != NULL) {
		if (in_view(r, f->id) || f->until <= now) {
			*pp = f->next;
			free(f);
		} else {
			pp = &f->next;
		}
	}
}

void
rc_owner_free(struct recond *r)
{
	void *p;

	while (r->own != NULL) {
		struct rc_own *o = r->own;

		r->own = o->next;
		free(o->upd);
		free(o->upd_raw);
		free(o);
	}
	while ((p = r->backoff) != NULL) {
		r->backoff = r->backoff->next;
		free(p);
	}
	while ((p = r->inflight) != NULL) {
		r->inflight = r->inflight->next;
		free(p);
	}
	while ((p = r->stops) != NULL) {
		r->stops = r->stops->next;
		free(p);
	}
	mts_failseen_free(&r->failseen);
	while ((p = r->returns) != NULL) {
		r->returns = r->returns->next;
		free(p);
	}
	while ((p = r->owners) != NULL) {
		r->owners = r->owners->next;
		free(p);
	}
}

/* --- the core's view ------------------------------------------------------------- */

struct core_view {
	struct mts_rc_view v;
	struct mts_rc_member *members;
	struct mts_rc_service *svcs;
	size_t *svc_of; /* core index -> r->view.svcs index */
	struct mts_rc_task *tasks;
	struct rc_trec *rows; /* every task, this node's and in flight too */
	size_t nrows;
};

static void
add_row(struct core_view *c, const struct rc_trec *t)
{
	c->rows = xreallocarray(c->rows, c->nrows + 1, sizeof(*c->rows));
	c->rows[c->nrows++] = *t;
}

static void
local_rows(struct recond *r, struct core_view *c)
{
	struct rc_local *l;
	struct rc_inflight *f;
	struct rc_trec t;

	for (l = r->local; l != NULL; l = l->next) {
		memset(&t, 0, sizeof(t));
		snprintf(t.id, sizeof(t.id), "%s", l->id);
		snprintf(t.node, sizeof(t.node), "%s", r->self);
		snprintf(t.service, sizeof(t.service), "%s", l->service);
		t.state = rc_state_of(rc_local_state(l),
		    l->st ? l->st->exit_code : -1, 0);
		t.desired_running = l->want_run;
		t.created = l->assigned_at;
		t.slot = l->slot;
		rc_trec_update_fields(&t, l->st);
		if (l->st == NULL)
			snprintf(t.error, sizeof(t.error), "%.*s",
			    (int)sizeof(t.error) - 1, l->error);
		add_row(c, &t);
	}
	for (f = r->inflight; f != NULL; f = f->next) {
		if (strcmp(f->node, r->self) == 0 &&
		    rc_local_find(r, f->id) != NULL)
			continue;
		memset(&t, 0, sizeof(t));
		snprintf(t.id, sizeof(t.id), "%s", f->id);
		snprintf(t.node, sizeof(t.node), "%s", f->node);
		snprintf(t.service, sizeof(t.service), "%s", f->service);
		t.state = RC_TASK_PENDING;
		t.desired_running = 1;
		t.created = (uint64_t)mts_wall_ms();
		t.slot = f->slot;
		t.inflight = 1;
		add_row(c, &t);
	}
}

static struct rc_stopsent *
stop_find(struct recond *r, const char *id)
{
	struct rc_stopsent *s;

	for (s = r->stops; s != NULL; s = s->next)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

/* Tasks of other nodes this owner asked to stop count as stopping, as
 * their records will say: a view that grows meanwhile (the other side's
 * records arriving after a heal) must not make the rule choose other
 * extras on top of them. */
static void
stopping_rows(struct recond *r, struct core_view *c)
{
	mts_time_t now = mts_now();
	size_t i;

	for (i = 0; i < c->nrows; i++) {
		const struct rc_stopsent *s = stop_find(r, c->rows[i].id);

		if (s != NULL && !s->failed && s->until > now)
			c->rows[i].desired_running = 0;
	}
}

static void
core_view_build(struct recond *r, struct core_view *c)
{
	const struct rc_view *v = &r->view;
	size_t i, n = 0;

	memset(c, 0, sizeof(*c));
	c->members = xcalloc(v->nmembers + 1, sizeof(*c->members));
	for (i = 0; i < v->nmembers; i++) {
		struct mts_rc_member *m = &c->members[i];

		memcpy(m->id, v->members[i].id, MTS_NODE_ID_LEN);
		m->attrs.id = v->members[i].hex;
		m->attrs.hostname = v->members[i].name;
		m->attrs.labels = v->members[i].labels;
		m->attrs.nlabels = v->members[i].nlabels;
		m->alive = v->members[i].alive;
		m->draining = v->members[i].draining;
		m->paused = v->members[i].paused;
		m->returning = rc_returning(r, v->members[i].hex);
	}
	c->svcs = xcalloc(v->nsvcs + 1, sizeof(*c->svcs));
	c->svc_of = xcalloc(v->nsvcs + 1, sizeof(*c->svc_of));
	for (i = 0; i < v->nsvcs; i++)
		if (!v->svcs[i].bad) {
			c->svc_of[n] = i;
			c->svcs[n++] = v->svcs[i].core;
		}
	for (i = 0; i < v->ntasks; i++)
		add_row(c, &v->tasks[i]);
	stopping_rows(r, c);
	local_rows(r, c);
	c->tasks = xcalloc(c->nrows + 1, sizeof(*c->tasks));
	for (i = 0; i < c->nrows; i++) {
		c->tasks[i].id = c->rows[i].id;
		c->tasks[i].node = c->rows[i].node;
		c->tasks[i].service = c->rows[i].service;
		c->tasks[i].state = c->rows[i].state;
		c->tasks[i].desired_running = c->rows[i].desired_running;
		c->tasks[i].created = c->rows[i].created;
		c->tasks[i].slot = c->rows[i].slot;
	}
	c->v.members = c->members;
	c->v.nmembers = v->nmembers;
	c->v.services = c->svcs;
	c->v.nservices = n;
	c->v.tasks = c->tasks;
	c->v.ntasks = c->nrows;
	c->v.self = r->self;
	c->v.settling = mts_now() < r->settle_until;
}

static void
core_view_free(struct core_view *c)
{
	free(c->members);
	free(c->svcs);
	free(c->svc_of);
	free(c->tasks);
	free(c->rows);
}

/* A task counts toward its service as the core counts it. */
static int
row_live(const struct core_view *c, const struct rc_trec *t)
{
	size_t i;

	if (!t->desired_running ||
	    (t->state != RC_TASK_PENDING && t->state != RC_TASK_RUNNING))
		return 0;
	for (i = 0; i < c->v.nmembers; i++)
		if (strcmp(c->members[i].attrs.id, t->node) == 0)
			return c->members[i].alive && !c->members[i].draining;
	return 0;
}

/* --- placing --------------------------------------------------------------------- */

/* One task being placed: Prepare on its node, then Assign there. */
struct placing {
	struct recond *r;
	struct rc_own *own;
	char node[MTS_NODE_HEX_LEN + 1];
	char task[RC_ID_MAX + 1];
	char lease[33];
	char service[RC_NAME_MAX];
	uint64_t version;
	uint32_t slot;
	int *outstanding; /* of the batch, shared */
	/* the task that no longer counts whose slot this one takes */
	char replaces[RC_ID_MAX + 1], rnode[MTS_NODE_HEX_LEN + 1];
	char rwhy[200];
};

/* <service>.<slot>.<random>: [a-z0-9._-], at most 64 characters. */
static void
task_id(char *out, size_t outlen, const char *service, const char *mid)
{
	char base[41], rnd[9];
	size_t i;

	for (i = 0; service[i] != '\0' && i < sizeof(base) - 1; i++) {
		char ch = service[i];

		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		base[i] = (ch >= 'a' && ch <= 'z') ||
		        (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		        ch == '.'
		    ? ch
		    : '-';
	}
	base[i] = '\0';
	if (i == 0 ||
	    !((base[0] >= 'a' && base[0] <= 'z') ||
	        (base[0] >= '0' && base[0] <= '9')))
		base[0] = 't';
	rc_random_hex(rnd, 4);
	snprintf(out, outlen, "%s.%s.%s", base, mid, rnd);
}

static const char *
member_name(struct recond *r, const char *hex)
{
	size_t i;

	for (i = 0; i < r->view.nmembers; i++)
		if (strcmp(r->view.members[i].hex, hex) == 0)
			return r->view.members[i].name;
	return hex;
}

static void
batch_end(struct placing *p)
{
	if (--*p->outstanding == 0) {
		free(p->outstanding);
		p->own->busy = 0;
		rc_kick(p->r);
	}
	free(p);
}

/* A placement that replaces a task: the owner's p/ record says which
 * and why, and so do an event and the log. */
static void
replacement(struct placing *p)
{
	struct rc_own *o = p->own;

	snprintf(o->replaced, sizeof(o->replaced),
	    "%.64s on %.32s %.100s: replaced by %.64s on %.32s", p->replaces,
	    member_name(p->r, p->rnode), p->rwhy, p->task,
	    member_name(p->r, p->node));
	o->replaced_at = (uint64_t)mts_wall_ms();
	rc_event(p->r, "task.replaced", p->service, p->replaces,
	    member_name(p->r, p->rnode), "%s; replaced by %s on %s", p->rwhy,
	    p->task, member_name(p->r, p->node));
}

static void
assigned(void *arg, int rc, const char *err)
{
	struct placing *p = arg;

	if (rc == 0) {
		inflight_add(p->r, p->task, p->node, p->service, p->slot);
		backoff_clear(p->r, p->node);
		rc_event(p->r, "task.placed", p->service, p->task,
		    member_name(p->r, p->node), "slot %u, version %llu",
		    p->slot, (unsigned long long)p->version);
		if (p->replaces[0] != '\0')
			replacement(p);
	} else {
		log_warnx("%s: assigning %s to %s: %s", p->service, p->task,
		    member_name(p->r, p->node), err);
		backoff_hit(p->r, p->node);
	}
	batch_end(p);
}

static void
assign_reply(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	assigned(arg, rc, err);
}

static void
assign(struct placing *p)
{
	Mts__Reconciled__Request req = MTS__RECONCILED__REQUEST__INIT;
	Mts__Reconciled__AssignReq a = MTS__RECONCILED__ASSIGN_REQ__INIT;

	a.task = p->task;
	a.service = p->service;
	a.version = p->version;
	a.slot = p->slot;
	a.lease = p->lease;
	a.owner = p->r->self;
	if (strcmp(p->node, p->r->self) == 0) {
		rc_local_assign(p->r, &a, assigned, p);
		return;
	}
	req.body_case = MTS__RECONCILED__REQUEST__BODY_ASSIGN;
	req.assign = &a;
	rc_call(p->r, p->node, "reconciled", &req.base,
	    &mts__reconciled__reply__descriptor, 5000, assign_reply, p);
}

static void
prepared(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct placing *p = arg;
	const Mts__Schedd__Reply *rep = (const Mts__Schedd__Reply *)m;
	const Mts__Schedd__PrepareRep *pr = rc == 0 ? rep->prepare : NULL;

	if (pr != NULL && pr->granted != NULL) {
		assign(p);
		return;
	}
	if (pr != NULL && pr->rejected != NULL)
		snprintf(p->own->message, sizeof(p->own->message),
		    "%s refused: %s", member_name(p->r, p->node),
		    pr->rejected->reason);
	else
		snprintf(p->own->message, sizeof(p->own->message), "%s: %s",
		    member_name(p->r, p->node),
		    rc < 0 ? err : "no prepare reply");
	log_info("%s: %s", p->service, p->own->message);
	p->own->pending++;
	backoff_hit(p->r, p->node);
	batch_end(p);
}

static void
prepare(struct placing *p, const struct rc_svc *s)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__PrepareReq pr = MTS__SCHEDD__PREPARE_REQ__INIT;
	const Mts__Service__ServiceSpec *sp = s->rec->spec;

	rc_random_hex(p->lease, 16);
	pr.lease = p->lease;
	pr.owner = p->r->self;
	pr.service = p->service;
	rc_spec_reservation(sp, &pr.cpu_millis, &pr.memory);
	pr.max_per_node =
	    sp->placement ? sp->placement->max_replicas_per_node : 0;
	pr.ttl_ms = (uint32_t)p->r->cfg.lease_ttl_ms;
	req.body_case = MTS__SCHEDD__REQUEST__BODY_PREPARE;
	req.prepare = &pr;
	rc_call(p->r, p->node, "schedd", &req.base,
	    &mts__schedd__reply__descriptor, 5000, prepared, p);
}

/* The lowest slots 1.. that no live task of the service holds. */
static uint32_t
next_slot(const struct core_view *c, const char *service, uint32_t after,
    const uint32_t *taken, size_t ntaken)
{
	uint32_t s;
	size_t i, k;

	for (s = after + 1;; s++) {
		int used = 0;

		for (i = 0; i < c->nrows && !used; i++)
			used = strcmp(c->rows[i].service, service) == 0 &&
			    c->rows[i].slot == s && row_live(c, &c->rows[i]);
		for (k = 0; k < ntaken && !used; k++)
			used = taken[k] == s;
		if (!used)
			return s;
	}
}

static const struct mts_rc_member *
core_member(const struct core_view *c, const char *hex)
{
	size_t i;

	for (i = 0; i < c->v.nmembers; i++)
		if (strcmp(c->members[i].attrs.id, hex) == 0)
			return &c->members[i];
	return NULL;
}

/* Whether t was asked to stop (desired stopped) on a node that is alive
 * and active: stopped on purpose (an update's, a scale's or a stale
 * task's stop), however it exited — SIGTERM gives a non-zero code — and
 * so not a failure. */
static int
stopped_on_purpose(const struct core_view *c, const struct rc_trec *t)
{
	const struct mts_rc_member *m = core_member(c, t->node);

	return !t->desired_running && m != NULL && m->alive && !m->draining;
}

/* The task a new one in `slot` replaces: the newest of the service's
 * tasks in that slot that no longer counts (it failed, or its node is
 * dead or drains), with why, into p. A task stopped on purpose is
 * replaced by no one: the update's task.updated or its node's
 * task.stopped says why it ended. */
static void
replaced_row(struct recond *r, const struct core_view *c, struct placing *p)
{
	const struct rc_trec *best = NULL;
	const struct mts_rc_member *m;
	size_t i;

	for (i = 0; i < c->nrows; i++) {
		const struct rc_trec *x = &c->rows[i];

		if (x->slot != p->slot || strcmp(x->service, p->service) != 0 ||
		    row_live(c, x) || x->inflight ||
		    (x->state != RC_TASK_FAILED && !x->desired_running) ||
		    x->state == RC_TASK_DONE || x->state == RC_TASK_STOPPED ||
		    stopped_on_purpose(c, x))
			continue;
		if (best == NULL || x->created > best->created)
			best = x;
	}
	if (best == NULL)
		return;
	snprintf(p->replaces, sizeof(p->replaces), "%s", best->id);
	snprintf(p->rnode, sizeof(p->rnode), "%s", best->node);
	m = core_member(c, best->node);
	if (m == NULL || !m->alive)
		snprintf(p->rwhy, sizeof(p->rwhy), "was lost (node down)");
	else if (m->draining)
		snprintf(p->rwhy, sizeof(p->rwhy), "was moved (node drains)");
	else
		snprintf(p->rwhy, sizeof(p->rwhy), "failed (%s)",
		    best->error[0] ? best->error : "it exited");
}

/* The failed tasks of this refresh's view (not those stopped on
 * purpose), each remembered from when this node first saw it: failed_avoid
 * counts from there on this node's monotonic clock, as no other node's
 * wall clock (the task's finished_at, its owner's assigned_at) can be
 * compared with this one's. */
static void
failures_seen(struct recond *r, const struct core_view *c)
{
	size_t i;

	for (i = 0; i < c->nrows; i++) {
		const struct rc_trec *x = &c->rows[i];

		if (x->state == RC_TASK_FAILED && !stopped_on_purpose(c, x))
			mts_failseen_note(&r->failseen, x->id, x->service,
			    x->node, mts_now());
	}
	mts_failseen_sweep(&r->failseen);
}

/* Whether a task of service failed on node within [reconciled]
 * failed_avoid: a replacement goes elsewhere when it can. */
static int
failed_on(struct recond *r, const char *service, const char *node)
{
	return mts_failseen_recent(&r->failseen, service, node, mts_now(),
	    r->cfg.failed_avoid_ms);
}

struct place_job {
	struct recond *r;
	struct rc_own *own;
	char service[RC_NAME_MAX];
	uint32_t count;
	int global;
};

static void
placed(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct place_job *j = arg;
	struct recond *r = j->r;
	const Mts__Schedd__Reply *rep = (const Mts__Schedd__Reply *)m;
	const Mts__Schedd__PlaceRep *pl = rc == 0 ? rep->place : NULL;
	const struct rc_svc *s = rc_find_svc(&r->view, j->service);
	struct core_view c;
	uint32_t i, slot = 0, *taken;
	int *outstanding;
	char mid[16], hex[MTS_NODE_HEX_LEN + 1];

	if (pl == NULL || s == NULL) {
		snprintf(j->own->message, sizeof(j->own->message), "%s",
		    rc < 0 ? err : "no such service");
		j->own->busy = 0;
		free(j);
		return;
	}
	j->own->pending =
	    j->count - (pl->placed < j->count ? pl->placed : j->count);
	if (pl->placed < j->count &&
	    (pl->placed > 0 || j->own->message[0] == '\0' ||
	        r->backoff == NULL))
		snprintf(j->own->message, sizeof(j->own->message), "%s",
		    pl->explain);
	else if (pl->placed >= j->count)
		j->own->message[0] = '\0';
	if (pl->n_nodes == 0) {
		j->own->busy = 0;
		free(j);
		return;
	}
	core_view_build(r, &c);
	taken = xcalloc(pl->n_nodes + 1, sizeof(*taken));
	outstanding = xcalloc(1, sizeof(*outstanding));
	*outstanding = (int)pl->n_nodes;
	for (i = 0; i < pl->n_nodes; i++) {
		struct placing *p = xcalloc(1, sizeof(*p));

		if (pl->nodes[i].len == MTS_NODE_ID_LEN)
			mts_hex(hex, pl->nodes[i].data, MTS_NODE_ID_LEN);
		else
			snprintf(hex, sizeof(hex), "%s", r->self);
		p->r = r;
		p->own = j->own;
		snprintf(p->node, sizeof(p->node), "%s", hex);
		snprintf(p->service, sizeof(p->service), "%s", j->service);
		p->version = s->rec->version;
		slot = next_slot(&c, j->service, slot, taken, i);
		taken[i] = p->slot = slot;
		snprintf(mid, sizeof(mid), "%u", slot);
		task_id(p->task, sizeof(p->task), j->service, mid);
		p->outstanding = outstanding;
		replaced_row(r, &c, p);
		prepare(p, s);
	}
	free(taken);
	core_view_free(&c);
	free(j);
}

/* The owner's placement of count more tasks: schedd's Place over this
 * node's view (alive members, refusing nodes left out, the service's
 * live tasks per node), then each chosen node. */
static void
place(struct recond *r, const struct core_view *c, const struct rc_svc *s,
    uint32_t count)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__PlaceReq pr = MTS__SCHEDD__PLACE_REQ__INIT;
	struct rc_own *o = own_get(r, s->name);
	ProtobufCBinaryData *alive, *excl, *avoid;
	Mts__Schedd__NodeCount *cnt, **cntp;
	struct place_job *j;
	size_t i, k, na = 0, ne = 0, nv = 0;
	mts_time_t now = mts_now();

	if (o->busy)
		return;
	o->busy = 1;
	alive = xcalloc(c->v.nmembers + 1, sizeof(*alive));
	excl = xcalloc(c->v.nmembers + 1, sizeof(*excl));
	avoid = xcalloc(c->v.nmembers + 1, sizeof(*avoid));
	cnt = xcalloc(c->v.nmembers + 1, sizeof(*cnt));
	cntp = xcalloc(c->v.nmembers + 1, sizeof(*cntp));
	for (i = 0; i < c->v.nmembers; i++) {
		const struct mts_rc_member *m = &c->members[i];
		struct rc_backoff *b = backoff_find(r, m->attrs.id);

		if (!m->alive || m->draining || m->paused)
			continue;
		alive[na].data = (uint8_t *)m->id;
		alive[na++].len = MTS_NODE_ID_LEN;
		if (b != NULL && b->until > now) {
			excl[ne].data = (uint8_t *)m->id;
			excl[ne++].len = MTS_NODE_ID_LEN;
		} else if (failed_on(r, s->name, m->attrs.id)) {
			avoid[nv].data = (uint8_t *)m->id;
			avoid[nv++].len = MTS_NODE_ID_LEN;
		}
		mts__schedd__node_count__init(&cnt[i]);
		cnt[i].node.data = (uint8_t *)m->id;
		cnt[i].node.len = MTS_NODE_ID_LEN;
		for (k = 0; k < c->nrows; k++)
			cnt[i].tasks +=
			    strcmp(c->rows[k].service, s->name) == 0 &&
			    strcmp(c->rows[k].node, m->attrs.id) == 0 &&
			    row_live(c, &c->rows[k]);
		cntp[pr.n_service_tasks++] = &cnt[i];
	}
	/* the nodes where it failed are left out while another can take it */
	if (na <= ne + nv)
		nv = 0;
	for (i = 0; i < nv; i++) {
		char h[MTS_NODE_HEX_LEN + 1];

		mts_hex(h, avoid[i].data, MTS_NODE_ID_LEN);
		log_info("%s: leaving out %s (a task of it failed there)",
		    s->name, member_name(r, h));
		excl[ne++] = avoid[i];
	}
	pr.service = s->name;
	pr.count = count;
	pr.alive = alive;
	pr.n_alive = na;
	pr.exclude = excl;
	pr.n_exclude = ne;
	pr.service_tasks = cntp;
	j = xcalloc(1, sizeof(*j));
	j->r = r;
	j->own = o;
	j->count = count;
	snprintf(j->service, sizeof(j->service), "%s", s->name);
	req.body_case = MTS__SCHEDD__REQUEST__BODY_PLACE;
	req.place = &pr;
	rc_call(r, NULL, "schedd", &req.base, &mts__schedd__reply__descriptor,
	    5000, placed, j);
	free(alive);
	free(excl);
	free(avoid);
	free(cnt);
	free(cntp);
}

/* A global service's task on this node: Prepare here, Assign here. */
static void
place_local(struct recond *r, const struct rc_svc *s)
{
	struct rc_own *o = own_get(r, s->name);
	struct placing *p;
	char mid[16];

	if (o->busy)
		return;
	o->busy = 1;
	p = xcalloc(1, sizeof(*p));
	p->r = r;
	p->own = o;
	snprintf(p->node, sizeof(p->node), "%s", r->self);
	snprintf(p->service, sizeof(p->service), "%s", s->name);
	p->version = s->rec->version;
	snprintf(mid, sizeof(mid), "%.8s", r->self);
	task_id(p->task, sizeof(p->task), s->name, mid);
	p->outstanding = xcalloc(1, sizeof(*p->outstanding));
	*p->outstanding = 1;
	prepare(p, s);
}

/* --- stopping -------------------------------------------------------------------- */

struct stop_call {
	struct recond *r;
	char id[RC_ID_MAX + 1];
};

/* A node that did not take the stop: the task counts as live again
 * (and its stop is resent if the rule still chooses it); NOT_FOUND: the
 * node no longer has it, which is what the stop wanted. */
static void
stop_reply(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct stop_call *c = arg;
	struct rc_stopsent *s;

	if (rc < 0 && rc != -MTS_ERR_NOTFOUND && rc != -MTS_ERR_CANCELED) {
		log_warnx("stopping %s: %s", c->id, err);
		if ((s = stop_find(c->r, c->id)) != NULL) {
			s->failed = 1;
			s->until = mts_now() + STOP_RESEND_MS;
			rc_kick(c->r);
		}
	}
	free(c);
}

/* Asks t's node to stop it (this node's own task at once): 1 when this
 * is the first stop of it, 0 when one was asked for before. */
static int
stop_task(struct recond *r, const struct rc_trec *t, const char *why)
{
	Mts__Reconciled__Request req = MTS__RECONCILED__REQUEST__INIT;
	Mts__Reconciled__StopReq st = MTS__RECONCILED__STOP_REQ__INIT;
	struct rc_stopsent *s;
	struct stop_call *c;
	mts_time_t now = mts_now();
	const struct rc_local *l;
	int first;

	if (strcmp(t->node, r->self) == 0) {
		first = (l = rc_local_find(r, t->id)) != NULL && l->want_run;
		(void)rc_local_stop(r, t->id, why);
		return first;
	}
	if ((s = stop_find(r, t->id)) != NULL && s->until > now)
		return 0;
	if ((first = s == NULL)) {
		s = xcalloc(1, sizeof(*s));
		snprintf(s->id, sizeof(s->id), "%s", t->id);
		s->next = r->stops;
		r->stops = s;
	}
	s->failed = 0;
	s->until = now + r->cfg.assign_wait_ms;
	log_info("%s: stopping %s on %s (%s)", t->service, t->id,
	    member_name(r, t->node), why);
	st.task = (char *)t->id;
	st.reason = (char *)why;
	req.body_case = MTS__RECONCILED__REQUEST__BODY_STOP;
	req.stop = &st;
	c = xcalloc(1, sizeof(*c));
	c->r = r;
	snprintf(c->id, sizeof(c->id), "%s", t->id);
	rc_call(r, t->node, "reconciled", &req.base,
	    &mts__reconciled__reply__descriptor, 5000, stop_reply, c);
	return first;
}

/* Stop records whose time passed go. */
static void
stops_expire(struct recond *r)
{
	struct rc_stopsent **pp = &r->stops, *s;
	mts_time_t now = mts_now();

	while ((s = *pp) != NULL) {
		if (s->until + 60000 < now) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

/* --- p/<service> ------------------------------------------------------------------- */

static void
status_written(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct rc_own *o = arg;

	o->writing = 0;
	if (rc < 0)
		o->written = 0;
}

static void
publish(struct recond *r, struct rc_own *o)
{
	Mts__Reconciled__PlacementStatus ps =
	    MTS__RECONCILED__PLACEMENT_STATUS__INIT;
	char key[RC_NAME_MAX + 4];
	uint8_t *buf;
	size_t len;

	if (o->writing ||
	    (o->written && o->w_desired == o->desired && o->w_live == o->live &&
	        o->w_pending == o->pending && o->w_waiting == o->waiting &&
	        strcmp(o->w_message, o->message) == 0 &&
	        strcmp(o->w_replaced, o->replaced) == 0))
		return;
	ps.owner = r->self;
	ps.version = o->version;
	ps.desired = o->desired;
	ps.live = o->live;
	ps.pending = o->pending;
	ps.waiting = o->waiting;
	ps.message = o->message;
	ps.replaced = o->replaced;
	ps.replaced_at_ms = o->replaced_at;
	ps.updated_at_ms = mts_wall_ms();
	len = mts__reconciled__placement_status__get_packed_size(&ps);
	buf = xmalloc(len + 1);
	mts__reconciled__placement_status__pack(&ps, buf);
	snprintf(key, sizeof(key), "p/%s", o->service);
	o->writing = o->written = 1;
	o->w_desired = o->desired;
	o->w_live = o->live;
	o->w_pending = o->pending;
	o->w_waiting = o->waiting;
	snprintf(o->w_message, sizeof(o->w_message), "%s", o->message);
	snprintf(o->w_replaced, sizeof(o->w_replaced), "%s", o->replaced);
	rc_store_write(r, key, buf, len, status_written, o);
	free(buf);
}

/* The counts of every service this node owns, published when they
 * changed; p/ of an owned service that was removed is deleted. */
static void
owned_status(struct recond *r, const struct core_view *c)
{
	struct rc_own *o;
	size_t i, k;
	mts_time_t now = mts_now();

	for (i = 0; i < c->v.nservices; i++) {
		const struct mts_rc_service *s = &c->svcs[i];
		const struct rc_svc *rs = &r->view.svcs[c->svc_of[i]];
		long ow;

		if (s->mode == RC_GLOBAL || s->mode == RC_GLOBAL_JOB)
			continue;
		ow = mts_rc_owner(&c->v, s->name);
		if (ow < 0 || strcmp(c->members[ow].attrs.id, r->self) != 0)
			continue;
		o = own_get(r, s->name);
		o->seen = now;
		o->desired = s->replicas;
		o->version = rs->rec->version;
		o->live = 0;
		for (k = 0; k < c->nrows; k++)
			o->live += strcmp(c->rows[k].service, s->name) == 0 &&
			    row_live(c, &c->rows[k]);
		if (o->live >= o->desired && o->waiting == 0) {
			o->pending = 0;
			o->message[0] = '\0';
		}
		publish(r, o);
	}
	for (o = r->own; o != NULL; o = o->next) {
		char key[RC_NAME_MAX + 4];

		if (o->written && rc_find_svc(&r->view, o->service) == NULL &&
		    !o->writing) {
			snprintf(key, sizeof(key), "p/%s", o->service);
			rc_store_write(r, key, NULL, 0, NULL, NULL);
			o->written = 0;
		}
	}
}

/* --- rolling updates (update_core) ------------------------------------------------- */

static void
upd_written(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct rc_own *o = arg;

	o->upd_writing = 0;
	if (rc < 0) { /* written again at the next step */
		free(o->upd_raw);
		o->upd_raw = NULL;
		o->upd_len = 0;
	}
}

/* The status to step from: this owner's own while its write is on the
 * way or the replica still holds it, else the replica's (another owner
 * carried the update on meanwhile, or this node just became owner). */
static void
upd_status(struct recond *r, struct rc_own *o, struct mts_up_status *st)
{
	const struct rc_upd *u = rc_find_upd(&r->view, o->service);

	if (o->upd &&
	    (o->upd_writing ||
	        (u && o->upd_raw && u->len == o->upd_len &&
	            memcmp(u->raw, o->upd_raw, u->len) == 0))) {
		*st = *o->upd;
		return;
	}
	if (u == NULL || mts_up_status_decode(u->raw, u->len, st) != 0)
		memset(st, 0, sizeof(*st));
}

/* Writes st to u/<service> when it is not what was last written. */
static void
upd_publish(struct recond *r, struct rc_own *o, const struct mts_up_status *st,
    uint64_t from_version)
{
	char key[RC_NAME_MAX + 4];
	size_t len;
	uint8_t *buf = mts_up_status_encode(st, r->self_id, from_version, &len);

	if (o->upd == NULL)
		o->upd = xmalloc(sizeof(*o->upd));
	*o->upd = *st;
	if (o->upd_writing ||
	    (o->upd_raw && o->upd_len == len &&
	        memcmp(o->upd_raw, buf, len) == 0)) {
		free(buf);
		return;
	}
	free(o->upd_raw);
	o->upd_raw = buf;
	o->upd_len = len;
	o->upd_writing = 1;
	snprintf(key, sizeof(key), "u/%s", o->service);
	rc_store_write(r, key, buf, len, upd_written, o);
}

/* failure_action rollback or auto_revert: s/ back to the previous spec. */
static void
upd_rollback(struct recond *r, const struct rc_svc *s)
{
	Mts__Service__ServiceRecord rec;
	Mts__Service__UpdateControl ctl;
	char key[RC_NAME_MAX + 4];
	uint8_t *buf;
	size_t len;

	if (mts_svc_rollback(s->rec, &rec, &ctl) != 0)
		return;
	rec.updated_at_ms = mts_wall_ms();
	rec.updated_on = r->agent->node ? (char *)r->agent->node : "";
	len = mts__service__service_record__get_packed_size(&rec);
	buf = xmalloc(len + 1);
	mts__service__service_record__pack(&rec, buf);
	snprintf(key, sizeof(key), "s/%s", s->name);
	log_info("%s: rolling back to the spec of version %llu", s->name,
	    (unsigned long long)s->rec->version - 1);
	rc_store_write(r, key, buf, len, NULL, NULL);
	free(buf);
}

static int
upd_node_ok(const struct core_view *c, const char *hex)
{
	size_t i;

	for (i = 0; i < c->v.nmembers; i++)
		if (strcmp(c->members[i].attrs.id, hex) == 0)
			return c->members[i].alive && !c->members[i].draining;
	return 0;
}

/* The update's stop of an old task is recorded as what it is, once: a
 * task.updated event saying what stopped it and the version it moves to
 * (its node's task.stopped says the same); not a failure. */
static void
update_stop(struct recond *r, const char *service, const struct rc_trec *t,
    const char *why)
{
	if (stop_task(r, t, why))
		rc_event(r, "task.updated", service, t->id,
		    member_name(r, t->node), "%s", why);
}

/* One step of service si's rolling update (si: a core index); 1 when the
 * update owns the service's count, so that the reconciler's places and
 * stops of it are left out. */
static int
update_step(struct recond *r, struct core_view *c, size_t si)
{
	const struct rc_svc *s = &r->view.svcs[c->svc_of[si]];
	struct rc_own *o = own_get(r, s->name);
	struct mts_up_actions out = { NULL, 0, 0 };
	struct mts_up_service us;
	struct mts_up_status st;
	struct mts_up_task *t = xcalloc(c->nrows + 1, sizeof(*t));
	size_t *row = xcalloc(c->nrows + 1, sizeof(*row)), n = 0, i;
	uint8_t digest[MTS_SPEC_DIGEST_LEN];
	int active;

	mts_spec_digest(s->rec->spec, digest);
	mts_up_service_from_pb(s->rec, &us);
	for (i = 0; i < c->nrows; i++) {
		const struct rc_trec *x = &c->rows[i];

		if (strcmp(x->service, s->name) != 0 ||
		    !upd_node_ok(c, x->node))
			continue;
		t[n].id = x->id;
		/* a task whose spec is not known yet (just placed, the shim
		 * has not listed it) counts as of the record's spec: only a
		 * digest seen to differ makes a task old, or a rebalance
		 * that moves it */
		t[n].current =
		    (x->inflight || !x->has_digest ||
		        memcmp(x->digest, digest, sizeof(digest)) == 0) &&
		    !mts_up_rebalance_moves(s->rec, x->id);
		t[n].state = x->state == RC_TASK_RUNNING ? UP_TASK_RUNNING
		    : x->state == RC_TASK_PENDING        ? UP_TASK_PENDING
		    : x->state == RC_TASK_FAILED         ? UP_TASK_FAILED
		    : x->state == RC_TASK_DONE           ? UP_TASK_EXITED
		                                         : UP_TASK_STOPPED;
		t[n].health = x->health;
		t[n].desired_running = x->desired_running;
		t[n].started_ms = x->started_ms;
		t[n].version = x->version;
		row[n++] = i;
	}
	upd_status(r, o, &st);
	mts_up_step(&us, t, n, &st, mts_wall_ms(), &out);
	for (i = 0; i < out.n; i++) {
		const struct mts_up_action *a = &out.v[i];

		if (a->kind == UP_START)
			place(r, c, s, a->count);
		else if (a->kind == UP_STOP)
			update_stop(r, s->name, &c->rows[row[a->task]], a->why);
		else if (a->kind == UP_ROLLBACK)
			upd_rollback(r, s);
		if (a->kind != UP_START && a->kind != UP_STOP) {
			struct mts_event ev = { .type =
				                    mts_up_kind_name(a->kind),
				.service = s->name,
				.message = a->why };

			(void)mts_event_emit(r->events, &ev);
		}
	}
	active = mts_up_active(&st);
	if (st.phase != UP_NONE)
		upd_publish(r, o, &st,
		    s->rec->previous_version ? s->rec->previous_version
		                             : s->rec->version - 1);
	mts_up_actions_free(&out);
	free(t);
	free(row);
	return active;
}

/* --- the decisions ------------------------------------------------------------------- */

/* depends_on: a service whose dependencies do not meet their conditions
 * yet places nothing; its owner says what it waits for in p/. 1 when
 * core service si waits. */
static int
held_back(struct recond *r, const struct core_view *c,
    const struct mts_dep_verdict *dv, size_t si, const struct mts_rc_action *a)
{
	const struct mts_dep_verdict *d = &dv[c->svc_of[si]];
	struct rc_own *o;

	if (d->may_start)
		return 0;
	if (a->kind == RC_PLACE) {
		o = own_get(r, c->svcs[si].name);
		if (o->waiting == 0 || strcmp(o->message, d->why) != 0)
			rc_event(r, "service.waiting", c->svcs[si].name, NULL,
			    NULL, "%s", d->why);
		o->waiting = a->count;
		o->pending = 0;
		snprintf(o->message, sizeof(o->message), "%s", d->why);
	}
	return 1;
}

/* Services no longer held back stop saying so. */
static void
waits_clear(struct recond *r, const struct core_view *c,
    const struct mts_dep_verdict *dv)
{
	size_t i;

	for (i = 0; i < c->v.nservices; i++) {
		struct rc_own *o;

		if (!dv[c->svc_of[i]].may_start)
			continue;
		for (o = r->own; o != NULL; o = o->next)
			if (strcmp(o->service, c->svcs[i].name) == 0 &&
			    o->waiting) {
				o->waiting = 0;
				o->message[0] = '\0';
			}
	}
}

/* owner.changed when the owner this node computes for a replicated
 * service is another node than at the last refresh (not at the first
 * sight of the service). */
static void
owner_seen(struct recond *r, const struct core_view *c, const char *service,
    long ow)
{
	const struct rc_svc *s = rc_find_svc(&r->view, service);
	const char *now = ow >= 0 ? c->members[ow].attrs.id : "";
	struct rc_ownerseen *e;

	if (s == NULL || s->core.mode == RC_GLOBAL ||
	    s->core.mode == RC_GLOBAL_JOB)
		return;
	for (e = r->owners; e != NULL; e = e->next)
		if (strcmp(e->service, service) == 0)
			break;
	if (e == NULL) {
		e = xcalloc(1, sizeof(*e));
		snprintf(e->service, sizeof(e->service), "%s", service);
		snprintf(e->owner, sizeof(e->owner), "%s", now);
		e->next = r->owners;
		r->owners = e;
		return;
	}
	if (strcmp(e->owner, now) == 0)
		return;
	rc_event(r, "owner.changed", service, NULL,
	    now[0] ? member_name(r, now) : "", "was %s%s",
	    e->owner[0] ? member_name(r, e->owner) : "none",
	    strcmp(now, r->self) == 0 ? "; this node owns it now" : "");
	snprintf(e->owner, sizeof(e->owner), "%s", now);
}

void
rc_reconcile(struct recond *r)
{
	struct mts_rc_actions out = { NULL, 0, 0 };
	struct mts_dep_verdict *dv;
	struct core_view c;
	char *updating;
	size_t i;

	core_view_build(r, &c);
	failures_seen(r, &c);
	mts_rc_reconcile(&c.v, &out);
	dv = rc_depends(&r->view, c.rows, c.nrows);
	waits_clear(r, &c, dv);
	updating = xcalloc(c.v.nservices + 1, 1);
	for (i = 0; i < c.v.nservices; i++) {
		long ow = mts_rc_owner(&c.v, c.svcs[i].name);

		owner_seen(r, &c, c.svcs[i].name, ow);
		if (c.svcs[i].mode == RC_REPLICATED && ow >= 0 &&
		    strcmp(c.members[ow].attrs.id, r->self) == 0)
			updating[i] = (char)update_step(r, &c, i);
	}
	for (i = 0; i < out.n; i++) {
		const struct mts_rc_action *a = &out.v[i];
		const struct rc_svc *s =
		    a->kind != RC_STOP || a->service != SIZE_MAX
		    ? &r->view.svcs[c.svc_of[a->service]]
		    : NULL;

		if (a->service != SIZE_MAX && updating[a->service] &&
		    a->kind != RC_PLACE_LOCAL &&
		    strcmp(a->why, "node draining") != 0)
			continue; /* the update keeps this service's count */
		if (a->kind != RC_STOP && held_back(r, &c, dv, a->service, a))
			continue;
		if (a->kind == RC_PLACE)
			place(r, &c, s, a->count);
		else if (a->kind == RC_PLACE_LOCAL)
			place_local(r, s);
		else
			stop_task(r, &c.rows[a->task], a->why);
	}
	owned_status(r, &c);
	stops_expire(r);
	mts_rc_actions_free(&out);
	core_view_free(&c);
	free(updating);
	free(dv);
}
