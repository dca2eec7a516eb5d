/* recon_view.c: one refresh of what reconciled acts on — the members gossipd sees, then the s/, t/, nl/, n/ and u/ records of the local replica page by page, then the local shim's tasks — read asynchronously into a new view that replaces the last one when complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gossipd.pb-c.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "reconciled.h"
#include "update_pb.h"
#include "xmalloc.h"

#define SCAN_PAGE 1000
#define MAX_ITEMS 200000 /* of each kind in one view */

enum {
	V_MEMBERS,
	V_SVC,
	V_TASKS,
	V_LABELS,
	V_NODES,
	V_UPDATES,
	V_SHIM,
	V_DONE
};

static const char *const prefixes[] = {
	[V_SVC] = "s/",
	[V_TASKS] = "t/",
	[V_LABELS] = "nl/",
	[V_NODES] = "n/",
	[V_UPDATES] = "u/",
};

static void step(struct recond *);

void
rc_view_clear(struct rc_view *v)
{
	size_t i;

	for (i = 0; i < v->nmembers; i++) {
		free(v->members[i].name);
		free(v->members[i].labels);
	}
	for (i = 0; i < v->nsvcs; i++) {
		free(v->svcs[i].name);
		free(v->svcs[i].cons);
		if (v->svcs[i].rec)
			mts__service__service_record__free_unpacked(v->svcs[i]
			                                                .rec,
			    NULL);
	}
	for (i = 0; i < v->nlabels; i++) {
		free(v->labels[i].key);
		free(v->labels[i].value);
	}
	for (i = 0; i < v->nupds; i++)
		free(v->upds[i].raw);
	free(v->upds);
	free(v->members);
	free(v->svcs);
	free(v->tasks);
	free(v->labels);
	free(v->avail);
	memset(v, 0, sizeof(*v));
}

const struct rc_upd *
rc_find_upd(const struct rc_view *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->nupds; i++)
		if (strcmp(v->upds[i].name, name) == 0)
			return &v->upds[i];
	return NULL;
}

const struct rc_svc *
rc_find_svc(const struct rc_view *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->nsvcs; i++)
		if (strcmp(v->svcs[i].name, name) == 0)
			return &v->svcs[i];
	return NULL;
}

enum mts_rc_task_state
rc_state_of(const char *st, int32_t exit_code, int job)
{
	(void)job;
	if (strcmp(st, "running") == 0)
		return RC_TASK_RUNNING;
	if (strcmp(st, "exited") == 0)
		return exit_code == 0 ? RC_TASK_DONE : RC_TASK_FAILED;
	if (strcmp(st, "failed") == 0)
		return RC_TASK_FAILED;
	if (strcmp(st, "stopping") == 0)
		return RC_TASK_STOPPED;
	return RC_TASK_PENDING; /* pending, created, restarting */
}

int
rc_trec_from(struct rc_trec *t, const char *node, const char *id,
    const Mts__Shim__TaskStatus *st)
{
	const char *svc =
	    st->spec && st->spec->service ? st->spec->service : "";

	if (strlen(id) > RC_ID_MAX || strlen(svc) >= RC_NAME_MAX ||
	    strlen(node) != MTS_NODE_HEX_LEN)
		return -1;
	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "%s", id);
	snprintf(t->node, sizeof(t->node), "%s", node);
	snprintf(t->service, sizeof(t->service), "%s", svc);
	t->state = rc_state_of(st->state, st->exit_code, 0);
	t->desired_running = strcmp(st->desired, "stopped") != 0;
	t->created = st->assigned_at ? st->assigned_at : st->started_at;
	t->slot = st->slot;
	rc_trec_update_fields(t, st);
	return 0;
}

/* What a rolling update needs of a task: health, spec digest, start. */
void
rc_trec_update_fields(struct rc_trec *t, const Mts__Shim__TaskStatus *st)
{
	struct mts_up_task u;

	if (st == NULL)
		return;
	mts_up_task_from_pb(st, t->digest, &u); /* its health and start */
	t->health = u.health;
	t->started_ms = u.started_ms;
	snprintf(t->error, sizeof(t->error), "%s", st->error ? st->error : "");
	t->version = u.version;
	if (st->spec && st->spec->spec_digest.len == MTS_SPEC_DIGEST_LEN) {
		memcpy(t->digest, st->spec->spec_digest.data,
		    MTS_SPEC_DIGEST_LEN);
		t->has_digest = 1;
	}
}

/* --- records ------------------------------------------------------------- */

static void
take_service(struct recond *r, const char *name, const Mts__Record *rec)
{
	struct rc_view *v = &r->next;
	Mts__Service__ServiceRecord *sr;
	struct rc_svc *s;
	char err[256];
	size_t i;

	sr = mts__service__service_record__unpack(NULL, rec->value.len,
	    rec->value.data);
	if (sr == NULL || sr->spec == NULL || strlen(name) >= RC_NAME_MAX ||
	    v->nsvcs >= MAX_ITEMS) {
		if (sr)
			mts__service__service_record__free_unpacked(sr, NULL);
		return;
	}
	v->svcs = xreallocarray(v->svcs, v->nsvcs + 1, sizeof(*v->svcs));
	s = &v->svcs[v->nsvcs++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	s->rec = sr;
	if (sr->spec->placement) {
		const Mts__Service__Placement *pl = sr->spec->placement;

		s->cons = xcalloc(pl->n_constraints + 1, sizeof(*s->cons));
		for (i = 0; i < pl->n_constraints; i++)
			if (mts_constraint_parse(pl->constraints[i],
			        &s->cons[i], err, sizeof(err)) < 0)
				s->bad = 1;
		s->core.nconstraints = pl->n_constraints;
	}
	s->core.name = s->name;
	s->core.constraints = s->cons;
	s->core.mode = rc_spec_mode(sr->spec->mode);
	s->core.replicas = sr->spec->replicas;
	s->core.start_first = sr->spec->update && sr->spec->update->order &&
	    strcmp(sr->spec->update->order, "start-first") == 0;
}

/* t/<node>/<task>: this node's own managed records are the intent, read
 * once at start (rc_local_adopt); after that its table is the truth and
 * a managed record it does not hold is stale. */
static void
take_task(struct recond *r, const char *key, const Mts__Record *rec)
{
	struct rc_view *v = &r->next;
	Mts__Shim__TaskStatus *st;
	char node[MTS_NODE_HEX_LEN + 1];
	const char *id = key + 2 + MTS_NODE_HEX_LEN + 1;
	int mine;

	if (strlen(key) <= 3 + MTS_NODE_HEX_LEN ||
	    key[2 + MTS_NODE_HEX_LEN] != '/')
		return;
	memcpy(node, key + 2, MTS_NODE_HEX_LEN);
	node[MTS_NODE_HEX_LEN] = '\0';
	st = mts__shim__task_status__unpack(NULL, rec->value.len,
	    rec->value.data);
	if (st == NULL)
		return;
	if (st->spec == NULL || st->spec->service == NULL ||
	    *st->spec->service == '\0') { /* run by hand: not a service's */
		mts__shim__task_status__free_unpacked(st, NULL);
		return;
	}
	mine = strcmp(node, r->self) == 0 && st->spec->managed;
	if (mine && !r->adopted) {
		rc_local_adopt(r, id, st);
	} else if (mine) {
		if (rc_local_find(r, id) == NULL) {
			log_info("task %s: removing its stale record", id);
			rc_store_write(r, key, NULL, 0, NULL, NULL);
		}
	} else if (v->ntasks < MAX_ITEMS) {
		if (v->ntasks == v->captasks) {
			v->captasks = v->captasks ? 2 * v->captasks : 64;
			v->tasks = xreallocarray(v->tasks, v->captasks,
			    sizeof(*v->tasks));
		}
		if (rc_trec_from(&v->tasks[v->ntasks], node, id, st) == 0)
			v->ntasks++;
	}
	mts__shim__task_status__free_unpacked(st, NULL);
}

/* u/<service>: kept as bytes, decoded by the owner that steps it. */
static void
take_update(struct recond *r, const char *name, const Mts__Record *rec)
{
	struct rc_view *v = &r->next;
	struct rc_upd *u;

	if (strlen(name) >= RC_NAME_MAX || v->nupds >= MAX_ITEMS)
		return;
	v->upds = xreallocarray(v->upds, v->nupds + 1, sizeof(*v->upds));
	u = &v->upds[v->nupds++];
	snprintf(u->name, sizeof(u->name), "%s", name);
	u->raw = xmemdup(rec->value.data, rec->value.len ? rec->value.len : 1);
	u->len = rec->value.len;
}

static void
take_label(struct recond *r, const char *key, const Mts__Record *rec)
{
	struct rc_view *v = &r->next;
	size_t pre = 3 + MTS_NODE_HEX_LEN;
	struct rc_label *l;

	if (strlen(key) <= pre + 1 || key[pre] != '/' ||
	    v->nlabels >= MAX_ITEMS)
		return;
	v->labels = xreallocarray(v->labels, v->nlabels + 1, sizeof(*l));
	l = &v->labels[v->nlabels++];
	memcpy(l->node, key + 3, MTS_NODE_HEX_LEN);
	l->node[MTS_NODE_HEX_LEN] = '\0';
	l->key = xstrdup(key + pre + 1);
	l->value = xmalloc(rec->value.len + 1);
	memcpy(l->value, rec->value.data, rec->value.len);
	l->value[rec->value.len] = '\0';
}

/* n/<node>: what the node says of itself; only its availability is
 * kept, for the nodes that are not active (pause, drain). */
static void
take_node(struct recond *r, const char *key, const Mts__Record *rec)
{
	struct rc_view *v = &r->next;
	struct mts_nodeinfo ni;
	char hex[MTS_NODE_HEX_LEN + 1];

	if (v->navail >= MAX_ITEMS ||
	    mts_nodeinfo_key_node((const uint8_t *)key, strlen(key), hex) !=
	        0 ||
	    mts_nodeinfo_decode(rec->value.data, rec->value.len, &ni) != 0 ||
	    ni.availability == MTS_AVAIL_ACTIVE)
		return;
	v->avail = xreallocarray(v->avail, v->navail + 1, sizeof(*v->avail));
	snprintf(v->avail[v->navail].node, sizeof(v->avail[v->navail].node),
	    "%s", hex);
	v->avail[v->navail++].a = ni.availability;
}

static void
take_item(struct recond *r, const Mts__KeyRecord *kr)
{
	char key[512];

	if (kr->record == NULL || kr->record->tombstone ||
	    kr->key.len >= sizeof(key))
		return;
	memcpy(key, kr->key.data, kr->key.len);
	key[kr->key.len] = '\0';
	if (r->stage == V_SVC)
		take_service(r, key + 2, kr->record);
	else if (r->stage == V_TASKS)
		take_task(r, key, kr->record);
	else if (r->stage == V_LABELS)
		take_label(r, key, kr->record);
	else if (r->stage == V_NODES)
		take_node(r, key, kr->record);
	else
		take_update(r, key + 2, kr->record);
}

/* --- the steps ------------------------------------------------------------- */

static void
fail(struct recond *r, const char *what, const char *err)
{
	log_warnx("refresh: %s: %s", what, err);
	rc_view_clear(&r->next);
	r->refreshing = 0;
}

static void
members_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct recond *r = arg;
	const Mts__Gossipd__Reply *rep = (const Mts__Gossipd__Reply *)m;
	struct rc_view *v = &r->next;
	size_t i;

	if (rc == -MTS_ERR_CANCELED)
		return;
	if (rc == 0 && rep->members != NULL) {
		v->members_ok = 1;
		v->members =
		    xcalloc(rep->members->n_nodes + 1, sizeof(*v->members));
		for (i = 0; i < rep->members->n_nodes; i++) {
			const Mts__Gossipd__NodeInfo *n =
			    rep->members->nodes[i];
			struct rc_member *x = &v->members[v->nmembers];

			if (n->node.len != MTS_NODE_ID_LEN)
				continue;
			memcpy(x->id, n->node.data, MTS_NODE_ID_LEN);
			mts_hex(x->hex, x->id, MTS_NODE_ID_LEN);
			x->name = xstrdup(n->name ? n->name : "");
			x->alive = !n->removed &&
			    (strcmp(n->state, "alive") == 0 ||
			        strcmp(n->state, "suspect") == 0);
			v->nmembers++;
		}
	}
	if (v->nmembers == 0) { /* a lone node: itself */
		free(v->members);
		v->members = xcalloc(1, sizeof(*v->members));
		memcpy(v->members[0].id, r->self_id, MTS_NODE_ID_LEN);
		snprintf(v->members[0].hex, sizeof(v->members[0].hex), "%s",
		    r->self);
		v->members[0].name =
		    xstrdup(r->agent->node ? r->agent->node : "");
		v->members[0].alive = 1;
		v->nmembers = 1;
	}
	r->stage = V_SVC;
	r->after[0] = '\0';
	step(r);
}

static void
page_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct recond *r = arg;
	const Mts__Statestore__Reply *rep = (const Mts__Statestore__Reply *)m;
	const Mts__Statestore__ScanRep *sc;
	size_t i;

	if (rc == -MTS_ERR_CANCELED)
		return;
	if (rc < 0 || (sc = rep->scan) == NULL) {
		fail(r, prefixes[r->stage], rc < 0 ? err : "no scan reply");
		return;
	}
	for (i = 0; i < sc->n_items; i++) {
		const Mts__KeyRecord *kr = sc->items[i];

		take_item(r, kr);
		if (kr->key.len < sizeof(r->after)) {
			memcpy(r->after, kr->key.data, kr->key.len);
			r->after[kr->key.len] = '\0';
		}
	}
	if (!(sc->more && sc->n_items > 0)) {
		r->stage++;
		r->after[0] = '\0';
	}
	step(r);
}

static void
shim_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct recond *r = arg;
	const Mts__Shim__Reply *rep = (const Mts__Shim__Reply *)m;

	if (rc == -MTS_ERR_CANCELED)
		return;
	if (rc < 0 || rep->list == NULL) {
		/* no shim (yet): the view is still worth acting on; tasks
		 * wait for it */
		log_debug("shim: %s", rc < 0 ? err : "no list reply");
	} else {
		rc_local_shim_list(r, rep->list);
	}
	r->stage = V_DONE;
	step(r);
}

/* The members' labels and availabilities, from nl/ and n/. */
static void
attach(struct rc_view *v)
{
	size_t i, k;

	for (i = 0; i < v->nmembers; i++) {
		struct rc_member *m = &v->members[i];

		m->labels = xcalloc(v->nlabels + 1, sizeof(*m->labels));
		for (k = 0; k < v->nlabels; k++)
			if (strcmp(v->labels[k].node, m->hex) == 0) {
				m->labels[m->nlabels].key = v->labels[k].key;
				m->labels[m->nlabels++].value =
				    v->labels[k].value;
			}
		for (k = 0; k < v->navail; k++)
			if (strcmp(v->avail[k].node, m->hex) == 0) {
				m->draining = v->avail[k].a == MTS_AVAIL_DRAIN;
				m->paused = v->avail[k].a == MTS_AVAIL_PAUSE;
			}
	}
}

/* Remembers that node came back (until `until`); forgets the others
 * whose time is up. */
static void
returned(struct recond *r, const char *node, mts_time_t until)
{
	struct rc_return **pp = &r->returns, *x;
	mts_time_t now = mts_now();
	int found = 0;

	while ((x = *pp) != NULL) {
		if (strcmp(x->node, node) == 0) {
			x->until = until;
			found = 1;
		}
		if (x->until <= now) {
			*pp = x->next;
			free(x);
		} else {
			pp = &x->next;
		}
	}
	if (!found) {
		x = xcalloc(1, sizeof(*x));
		snprintf(x->node, sizeof(x->node), "%s", node);
		x->until = until;
		x->next = r->returns;
		r->returns = x;
	}
}

int
rc_returning(const struct recond *r, const char *node)
{
	const struct rc_return *x;
	mts_time_t now = mts_now();

	for (x = r->returns; x != NULL; x = x->next)
		if (strcmp(x->node, node) == 0)
			return x->until > now;
	return 0;
}

/* A member the last view held dead that the new one holds alive opens a
 * settling window, and so does the start (this node is then the one that
 * came back): the records of what ran on the other side are still on
 * their way or out of date, and so may be the owner this node would
 * defer to (the core places nothing and stops only the returning
 * members' stale tasks meanwhile). A member never seen before (a node
 * joining) does not: it ran nothing. */
static void
note_returns(struct recond *r)
{
	const struct rc_view *o = &r->view, *n = &r->next;
	size_t i, k;

	if (r->refreshes == 0) { /* this node is the one back */
		r->settle_until = mts_now() + r->cfg.settle_ms;
		returned(r, r->self, r->settle_until);
		return;
	}
	for (i = 0; i < n->nmembers; i++) {
		const struct rc_member *m = &n->members[i];
		int back = 0;

		if (!m->alive || strcmp(m->hex, r->self) == 0)
			continue;
		for (k = 0; k < o->nmembers; k++)
			if (strcmp(o->members[k].hex, m->hex) == 0)
				back = !o->members[k].alive;
		if (!back)
			continue;
		log_info("%s came back: for %lld ms nothing is placed and "
		         "only its stale tasks are stopped while the view "
		         "settles",
		    m->name[0] ? m->name : m->hex, (long long)r->cfg.settle_ms);
		r->settle_until = mts_now() + r->cfg.settle_ms;
		returned(r, m->hex, r->settle_until);
	}
}

static void
finish(struct recond *r)
{
	attach(&r->next);
	note_returns(r);
	rc_view_clear(&r->view);
	r->view = r->next;
	memset(&r->next, 0, sizeof(r->next));
	r->adopted = 1;
	r->refreshes++;
	r->refreshing = 0;
	rc_inflight_seen(r);
	rc_local_converge(r);
	rc_reconcile(r);
	if (r->again) {
		r->again = 0;
		rc_kick(r);
	}
}

static void
step(struct recond *r)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sc = MTS__STATESTORE__SCAN_REQ__INIT;
	Mts__Shim__Request sh = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskListReq tl = MTS__SHIM__TASK_LIST_REQ__INIT;

	if (r->stage == V_DONE) {
		finish(r);
		return;
	}
	if (r->stage == V_SHIM && access(r->shim_path, F_OK) != 0) {
		r->stage = V_DONE; /* no shim on this node (yet) */
		finish(r);
		return;
	}
	if (r->stage == V_SHIM) {
		r->list_seq = ++r->shim_seq;
		sh.body_case = MTS__SHIM__REQUEST__BODY_LIST;
		sh.list = &tl;
		rc_call(r, NULL, "shim", &sh.base,
		    &mts__shim__reply__descriptor, 5000, shim_done, r);
		return;
	}
	sc.prefix.data = (uint8_t *)prefixes[r->stage];
	sc.prefix.len = strlen(prefixes[r->stage]);
	sc.start_after.data = (uint8_t *)r->after;
	sc.start_after.len = strlen(r->after);
	sc.limit = SCAN_PAGE;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
	req.scan = &sc;
	rc_call(r, NULL, "statestore", &req.base,
	    &mts__statestore__reply__descriptor, 5000, page_done, r);
}

void
rc_refresh(struct recond *r)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__MembersReq mr = MTS__GOSSIPD__MEMBERS_REQ__INIT;

	if (r->refreshing) {
		r->again = 1;
		return;
	}
	r->refreshing = 1;
	r->last_refresh = mts_now();
	r->stage = V_MEMBERS;
	memset(&r->next, 0, sizeof(r->next));
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_MEMBERS;
	req.members = &mr;
	if (mts_ipc_async_call(r->gossipd, &req.base,
	        &mts__gossipd__reply__descriptor, 2000, members_done,
	        r) == NULL)
		r->refreshing = 0;
}

/* A change worth acting on: a refresh soon, at most every
 * RC_KICK_MIN_MS. */
void
rc_kick(struct recond *r)
{
	mts_time_t due = r->last_refresh + RC_KICK_MIN_MS, now = mts_now();

	if (r->refreshing) {
		r->again = 1;
		return;
	}
	if (!r->kick_timer.armed)
		mts_timer_arm(r->loop, &r->kick_timer, due > now ? due : now);
}
