/* recon_local.c: node-local convergence — this node's tasks as its t/<self>/ records say (reconciled is their only writer), assignments committed with the local schedd, netd asked for a task's namespace and address before the shim runs it there and after the shim removed it, the shim driven to match (run, stop, remove), and each record rewritten when what it says changed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "reconciled.h"
#include "xmalloc.h"

#define RUN_TIMEOUT_MS 1800000 /* the shim may fetch the image first */
#define REMOVE_TIMEOUT_MS 15000
#define NETD_TIMEOUT_MS 10000

static int
terminal(const char *st)
{
	return strcmp(st, "exited") == 0 || strcmp(st, "failed") == 0;
}

const char *
rc_local_state(const struct rc_local *l)
{
	return l->st ? l->st->state : l->state;
}

struct rc_local *
rc_local_find(struct recond *r, const char *id)
{
	struct rc_local *l;

	for (l = r->local; l != NULL; l = l->next)
		if (strcmp(l->id, id) == 0)
			return l;
	return NULL;
}

static struct rc_local *
local_new(struct recond *r, const char *id, const char *service)
{
	struct rc_local *l = xcalloc(1, sizeof(*l));

	snprintf(l->id, sizeof(l->id), "%s", id);
	snprintf(l->service, sizeof(l->service), "%s", service);
	snprintf(l->state, sizeof(l->state), "pending");
	l->next = r->local;
	r->local = l;
	return l;
}

static void
nets_clear(struct rc_local *l)
{
	size_t i;

	for (i = 0; i < l->nnets; i++)
		free(l->nets[i]);
	free(l->nets);
	l->nets = NULL;
	l->nnets = 0;
}

static void
nets_set(struct rc_local *l, char *const *nets, size_t n)
{
	size_t i;

	nets_clear(l);
	l->nets = xcalloc(n + 1, sizeof(*l->nets));
	for (i = 0; i < n; i++)
		l->nets[i] = xstrdup(nets[i]);
	l->nnets = n;
}

static void
local_free(struct rc_local *l)
{
	if (l->st)
		mts__shim__task_status__free_unpacked(l->st, NULL);
	nets_clear(l);
	free(l->written);
	free(l);
}

void
rc_local_free_all(struct recond *r)
{
	struct rc_local *l;

	while ((l = r->local) != NULL) {
		r->local = l->next;
		local_free(l);
	}
}

/* The events of a task of this node whose state changed from `was`:
 * started (each run), failed, stopped. */
static void
state_events(struct recond *r, struct rc_local *l, const char *was)
{
	const char *now = rc_local_state(l), *err = l->st ? l->st->error : "";
	int code = l->st ? l->st->exit_code : -1;

	if (strcmp(was, now) == 0)
		return;
	if (strcmp(now, "running") == 0)
		rc_event(r, "task.started", l->service, l->id, r->agent->node,
		    "%s%s", l->st && l->st->spec ? l->st->spec->image : "",
		    l->st && l->st->restarts ? " (restarted)" : "");
	else if (!l->want_run && terminal(now)) {
		rc_event(r, "task.stopped", l->service, l->id, r->agent->node,
		    "%s", l->stop_why[0] ? l->stop_why : now);
		l->stop_told = 1;
	} else if (strcmp(now, "failed") == 0 ||
	    (strcmp(now, "exited") == 0 && code != 0))
		rc_event(r, "task.failed", l->service, l->id, r->agent->node,
		    "%s",
		    err && *err       ? err
		        : l->error[0] ? l->error
		                      : now);
}

/* Its health check's verdict changed: healthy or unhealthy (not the
 * check ending with a task asked to stop). */
static void
health_events(struct recond *r, const struct rc_local *l, const char *was)
{
	const char *now = l->st && l->st->health ? l->st->health : "";

	if (strcmp(was, now) == 0 || !l->want_run ||
	    strcmp(rc_local_state(l), "running") != 0 ||
	    (strcmp(now, "healthy") != 0 && strcmp(now, "unhealthy") != 0))
		return;
	rc_event(r, now[0] == 'h' ? "task.healthy" : "task.unhealthy",
	    l->service, l->id, r->agent->node, "%s",
	    l->st->last_health_output ? l->st->last_health_output : "");
}

static void
set_status(struct recond *r, struct rc_local *l,
    const Mts__Shim__TaskStatus *st)
{
	char was[16], washealth[16];

	snprintf(was, sizeof(was), "%s", rc_local_state(l));
	snprintf(washealth, sizeof(washealth), "%s",
	    l->st && l->st->health ? l->st->health : "");
	if (l->st)
		mts__shim__task_status__free_unpacked(l->st, NULL);
	l->st =
	    st ? mts_pb_copy(&st->base) : NULL; /* the reply is freed after */
	if (r != NULL) {
		state_events(r, l, was);
		health_events(r, l, washealth);
	}
}

/* --- the record -------------------------------------------------------------- */

struct rec_write {
	struct recond *r;
	char id[RC_ID_MAX + 1];
};

static void
written(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct rec_write *w = arg;
	struct rc_local *l = rc_local_find(w->r, w->id);

	if (l != NULL) {
		l->writing = 0;
		if (rc < 0) { /* written again at the next convergence */
			free(l->written);
			l->written = NULL;
			l->wlen = 0;
		}
	}
	free(w);
}

/* The t/<self>/<id> value: the shim's status (env values left out, as
 * the shim does) with reconciled's fields, or the intent alone. */
static uint8_t *
record_of(struct recond *r, const struct rc_local *l, size_t *len)
{
	Mts__Shim__TaskStatus st;
	Mts__Shim__TaskSpec sp = MTS__SHIM__TASK_SPEC__INIT;
	char **names = NULL;
	uint8_t *buf;
	size_t i;

	if (l->st) {
		st = *l->st;
		if (l->st->spec)
			sp = *l->st->spec;
	} else {
		mts__shim__task_status__init(&st);
		st.id = (char *)l->id;
		st.state = (char *)l->state;
		st.error = (char *)l->error;
		st.exit_code = -1;
	}
	names = xcalloc(sp.n_env + 1, sizeof(*names));
	for (i = 0; i < sp.n_env; i++)
		names[i] =
		    xasprintf("%.*s", (int)strcspn(sp.env[i], "="), sp.env[i]);
	sp.env_names = names;
	sp.n_env_names = sp.n_env;
	sp.env = NULL;
	sp.n_env = 0;
	sp.service = (char *)l->service;
	sp.managed = 1;
	st.spec = &sp;
	if (l->error[0] != '\0' && (st.error == NULL || *st.error == '\0'))
		st.error = (char *)l->error;
	st.desired = l->want_run ? "running" : "stopped";
	sp.service_version = l->version;
	st.slot = l->slot;
	st.assigned_at = l->assigned_at;
	st.owner = (char *)l->owner;
	st.reserved_cpu_millis = l->rcpu;
	st.reserved_memory = l->rmem;
	st.address = (char *)l->address;
	st.networks = l->nets;
	st.n_networks = l->nnets;
	*len = mts__shim__task_status__get_packed_size(&st);
	buf = xmalloc(*len + 1);
	mts__shim__task_status__pack(&st, buf);
	for (i = 0; i < sp.n_env_names; i++)
		free(names[i]);
	free(names);
	return buf;
}

static void
write_record(struct recond *r, struct rc_local *l)
{
	struct rec_write *w;
	char key[128];
	uint8_t *buf;
	size_t len;

	if (l->writing)
		return;
	buf = record_of(r, l, &len);
	if (l->written && l->wlen == len && memcmp(l->written, buf, len) == 0) {
		free(buf);
		return;
	}
	free(l->written);
	l->written = buf;
	l->wlen = len;
	l->writing = 1;
	w = xcalloc(1, sizeof(*w));
	w->r = r;
	snprintf(w->id, sizeof(w->id), "%s", l->id);
	snprintf(key, sizeof(key), "t/%s/%s", r->self, l->id);
	rc_store_write(r, key, buf, len, written, w);
}

/* Deletes the record and forgets the task. */
static void
forget(struct recond *r, struct rc_local *l)
{
	struct rc_local **pp;
	char key[128];

	snprintf(key, sizeof(key), "t/%s/%s", r->self, l->id);
	rc_store_write(r, key, NULL, 0, NULL, NULL);
	log_info("task %s removed", l->id);
	if (l->stop_why[0] != '\0' && !l->stop_told) /* never seen ending */
		rc_event(r, "task.stopped", l->service, l->id, r->agent->node,
		    "%s", l->stop_why);
	for (pp = &r->local; *pp != NULL; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	local_free(l);
}

/* --- adoption, assignment, stop ------------------------------------------------ */

void
rc_local_adopt(struct recond *r, const char *id,
    const Mts__Shim__TaskStatus *st)
{
	struct rc_local *l;

	if (strlen(id) > RC_ID_MAX || rc_local_find(r, id) != NULL ||
	    st->spec == NULL || strlen(st->spec->service) >= RC_NAME_MAX)
		return;
	l = local_new(r, id, st->spec->service);
	snprintf(l->owner, sizeof(l->owner), "%s", st->owner);
	l->version = st->spec->service_version;
	l->assigned_at = st->assigned_at;
	l->slot = st->slot;
	l->rcpu = st->reserved_cpu_millis;
	l->rmem = st->reserved_memory;
	l->want_run = strcmp(st->desired, "stopped") != 0;
	snprintf(l->state, sizeof(l->state), "%s", st->state);
	snprintf(l->error, sizeof(l->error), "%s", st->error);
	l->started = strcmp(st->state, "pending") != 0;
	l->run_seq = 0;
	/* attached again (the same address: Attach is idempotent) if it is
	 * started again; detached when it goes */
	snprintf(l->address, sizeof(l->address), "%s", st->address);
	nets_set(l, st->networks, st->n_networks);
	log_info("task %s (%s): adopted from its record, %s", id, l->service,
	    st->state);
}

struct assign {
	struct recond *r;
	Mts__Reconciled__AssignReq *req; /* a copy */
	rc_done_fn done;
	void *arg;
};

static void
reservation(struct recond *r, struct rc_local *l)
{
	const struct rc_svc *s = rc_find_svc(&r->view, l->service);

	if (s != NULL && l->rcpu == 0 && l->rmem == 0)
		rc_spec_reservation(s->rec->spec, &l->rcpu, &l->rmem);
}

static void
committed(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct assign *a = arg;
	const Mts__Reconciled__AssignReq *q = a->req;
	struct rc_local *l;

	if (rc == 0 && rc_local_find(a->r, q->task) == NULL) {
		l = local_new(a->r, q->task, q->service);
		snprintf(l->owner, sizeof(l->owner), "%s", q->owner);
		l->version = q->version;
		l->slot = q->slot;
		l->assigned_at = mts_wall_ms();
		l->want_run = 1;
		reservation(a->r, l);
		log_info("task %s (%s v%llu slot %u) assigned by %.8s", l->id,
		    l->service, (unsigned long long)l->version, l->slot,
		    l->owner);
		write_record(a->r, l);
		rc_kick(a->r);
	}
	a->done(a->arg, rc, rc == 0 ? "" : err);
	protobuf_c_message_free_unpacked(&a->req->base, NULL);
	free(a);
}

/* Commits the lease with the local schedd, then records the task. done
 * may run before this returns (a request that is refused at once). */
void
rc_local_assign(struct recond *r, const Mts__Reconciled__AssignReq *q,
    rc_done_fn done, void *arg)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__CommitReq c = MTS__SCHEDD__COMMIT_REQ__INIT;
	uint8_t id[MTS_NODE_ID_LEN];
	struct assign *a;

	if (!mts_task_id_valid(q->task) || q->service == NULL ||
	    *q->service == '\0' || strlen(q->service) >= RC_NAME_MAX ||
	    q->lease == NULL || *q->lease == '\0' || q->owner == NULL ||
	    strlen(q->owner) != MTS_NODE_HEX_LEN ||
	    mts_unhex(id, sizeof(id), q->owner, MTS_NODE_HEX_LEN) < 0) {
		done(arg, -MTS_ERR_INVAL,
		    "assign needs a task id (1-64 of [a-z0-9._-]), a service, "
		    "a lease and the owner's node id");
		return;
	}
	if (rc_local_find(r, q->task) != NULL) {
		done(arg, 0, "");
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->r = r;
	a->req = mts_pb_copy(&q->base);
	a->done = done;
	a->arg = arg;
	c.lease = q->lease;
	c.task = q->task;
	req.body_case = MTS__SCHEDD__REQUEST__BODY_COMMIT;
	req.commit = &c;
	rc_call(r, NULL, "schedd", &req.base, &mts__schedd__reply__descriptor,
	    5000, committed, a);
}

int
rc_local_stop(struct recond *r, const char *task, const char *why)
{
	struct rc_local *l = rc_local_find(r, task);

	if (l == NULL)
		return -MTS_ERR_NOTFOUND;
	if (l->want_run) {
		log_info("task %s: stopping (%s)", task, why);
		snprintf(l->stop_why, sizeof(l->stop_why), "%s", why);
		l->want_run = 0;
		write_record(r, l);
		rc_kick(r);
	}
	return 0;
}

/* --- netd: the task's namespace and address ------------------------------------------ */

struct net_op {
	struct recond *r;
	char id[RC_ID_MAX + 1];
};

static struct net_op *
net_op_new(struct recond *r, struct rc_local *l)
{
	struct net_op *o = xcalloc(1, sizeof(*o));

	o->r = r;
	snprintf(o->id, sizeof(o->id), "%s", l->id);
	l->busy = 1;
	return o;
}

/* An attachment refused for good (bad network names, the node's /24
 * full) fails the task here, as a shim refusal does; anything else (netd
 * restarting, no /24 yet) is asked again at the next convergence. */
static void
attached(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct net_op *o = arg;
	const Mts__Netd__Reply *rep = (const Mts__Netd__Reply *)m;
	struct rc_local *l = rc_local_find(o->r, o->id);
	const Mts__Netd__Attachment *a;

	if (l == NULL || rc == -MTS_ERR_CANCELED) {
		free(o);
		return;
	}
	l->busy = 0;
	if (rc == 0 && rep->attach != NULL &&
	    (a = rep->attach->attachment) != NULL && a->netns != NULL &&
	    strlen(a->netns) < sizeof(l->netns)) {
		snprintf(l->netns, sizeof(l->netns), "%s", a->netns);
		snprintf(l->address, sizeof(l->address), "%.*s",
		    (int)strcspn(a->address, "/"), a->address);
		snprintf(l->dns, sizeof(l->dns), "%s",
		    rep->attach->gateway &&
		            strlen(rep->attach->gateway) < sizeof(l->dns)
		        ? rep->attach->gateway
		        : "");
		l->attached = 1;
		log_info("task %s: attached by netd, %s", l->id, l->address);
		rc_kick(o->r);
	} else if (rc == -MTS_ERR_INVAL || rc == -MTS_ERR_TOOBIG) {
		snprintf(l->state, sizeof(l->state), "failed");
		snprintf(l->error, sizeof(l->error), "netd: %s", err);
		l->started = 1;
		log_warnx("task %s: netd: %s", l->id, err);
	} else {
		log_warnx("task %s: netd attach: %s (asked again)", l->id,
		    rc == 0 ? "no attachment in the reply" : err);
	}
	write_record(o->r, l);
	free(o);
}

/* Attach{task, the service's networks}: a service without any (a record
 * not written by mtsctl deploy) is on its stack's default network. */
static void
net_attach(struct recond *r, struct rc_local *l, const struct rc_svc *s)
{
	const Mts__Service__ServiceSpec *sp = s->rec->spec;
	Mts__Netd__Request req = MTS__NETD__REQUEST__INIT;
	Mts__Netd__AttachReq ar = MTS__NETD__ATTACH_REQ__INIT;
	char **nets = xcalloc(sp->n_networks + 1, sizeof(*nets));
	size_t i;

	for (i = 0; i < sp->n_networks; i++)
		nets[i] = sp->networks[i]->name;
	if (sp->n_networks == 0 && sp->stack != NULL && *sp->stack != '\0')
		nets[0] = xasprintf("%s_default", sp->stack);
	nets_set(l, nets, sp->n_networks ? sp->n_networks : nets[0] != NULL);
	if (sp->n_networks == 0)
		free(nets[0]);
	free(nets);
	ar.task = l->id;
	ar.networks = l->nets;
	ar.n_networks = l->nnets;
	req.body_case = MTS__NETD__REQUEST__BODY_ATTACH;
	req.attach = &ar;
	rc_call(r, NULL, "netd", &req.base, &mts__netd__reply__descriptor,
	    NETD_TIMEOUT_MS, attached, net_op_new(r, l));
}

static void
detached(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct net_op *o = arg;
	struct rc_local *l = rc_local_find(o->r, o->id);

	if (l == NULL || rc == -MTS_ERR_CANCELED) {
		free(o);
		return;
	}
	l->busy = 0;
	if (rc < 0) { /* the next convergence asks again */
		log_warnx("task %s: netd detach: %s (asked again)", l->id, err);
	} else {
		forget(o->r, l);
		rc_kick(o->r);
	}
	free(o);
}

/* The end of a task the shim no longer has: its attachment goes (after
 * the shim stopped and removed it: the reverse of the start), then its
 * record. */
static void
finish(struct recond *r, struct rc_local *l)
{
	Mts__Netd__Request req = MTS__NETD__REQUEST__INIT;
	Mts__Netd__DetachReq dr = MTS__NETD__DETACH_REQ__INIT;

	if (!r->cfg.netd) {
		forget(r, l);
		return;
	}
	dr.task = l->id;
	req.body_case = MTS__NETD__REQUEST__BODY_DETACH;
	req.detach = &dr;
	rc_call(r, NULL, "netd", &req.base, &mts__netd__reply__descriptor,
	    NETD_TIMEOUT_MS, detached, net_op_new(r, l));
}

/* --- the shim -------------------------------------------------------------------- */

struct shim_op {
	struct recond *r;
	char id[RC_ID_MAX + 1];
	int what; /* 'r'un, 's'top, 'x' remove */
};

static struct shim_op *
op_new(struct recond *r, struct rc_local *l, int what)
{
	struct shim_op *o = xcalloc(1, sizeof(*o));

	o->r = r;
	snprintf(o->id, sizeof(o->id), "%s", l->id);
	o->what = what;
	l->busy = 1;
	return o;
}

static void
op_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct shim_op *o = arg;
	const Mts__Shim__Reply *rep = (const Mts__Shim__Reply *)m;
	struct rc_local *l = rc_local_find(o->r, o->id);

	if (l == NULL || rc == -MTS_ERR_CANCELED) {
		free(o);
		return;
	}
	l->busy = 0;
	if (o->what == 'r' && rc == 0 && rep->run && rep->run->task) {
		set_status(o->r, l, rep->run->task);
		l->started = 1;
		l->run_seq = o->r->shim_seq;
	} else if (o->what == 'r' && rc != -MTS_ERR_TIMEOUT) {
		/* the shim refused: the task failed here (the owner places
		 * another); a timeout is retried */
		if (rc == -MTS_ERR_CONFLICT) {
			l->started = 1; /* it exists: the next list says how */
		} else {
			snprintf(l->state, sizeof(l->state), "failed");
			snprintf(l->error, sizeof(l->error), "%s", err);
			l->started = 1;
			log_warnx("task %s: %s", l->id, err);
			rc_event(o->r, "task.failed", l->service, l->id,
			    o->r->agent->node, "%s", err);
		}
	} else if (o->what == 's' && rc == 0 && rep->stop && rep->stop->task) {
		set_status(o->r, l, rep->stop->task);
	} else if (o->what == 'x' && (rc == 0 || rc == -MTS_ERR_NOTFOUND)) {
		set_status(NULL, l, NULL);
		finish(o->r, l);
		l = NULL;
	} else if (rc < 0) {
		log_warnx("task %s: shim %s: %s", o->id,
		    o->what == 's'       ? "stop"
		        : o->what == 'x' ? "remove"
		                         : "run",
		    err);
	}
	if (l != NULL)
		write_record(o->r, l);
	rc_kick(o->r);
	free(o);
}

static void
shim_run(struct recond *r, struct rc_local *l, const struct rc_svc *s)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskRunReq run = MTS__SHIM__TASK_RUN_REQ__INIT;
	const char *stack = s->rec->spec->stack;
	char search[80], *dns[1], *dsearch[2];
	struct rc_spec sp;

	rc_spec_build(s->rec->spec, s->rec->version, l->id, &sp);
	if (l->attached)
		sp.spec.netns = l->netns;
	/* the task's resolv.conf: its node's DNS server, the stack's names
	 * first (docs/network.md) */
	if (l->attached && l->dns[0] != '\0' && stack != NULL &&
	    *stack != '\0' && strlen(stack) < sizeof(search) - 5) {
		snprintf(search, sizeof(search), "%s.mts", stack);
		dns[0] = l->dns;
		dsearch[0] = search;
		dsearch[1] = "mts";
		sp.spec.dns = dns;
		sp.spec.n_dns = 1;
		sp.spec.dns_search = dsearch;
		sp.spec.n_dns_search = 2;
	}
	l->version = s->rec->version;
	reservation(r, l);
	run.spec = &sp.spec;
	req.body_case = MTS__SHIM__REQUEST__BODY_RUN;
	req.run = &run;
	log_info("task %s: starting %s", l->id, s->rec->spec->image);
	rc_call(r, NULL, "shim", &req.base, &mts__shim__reply__descriptor,
	    RUN_TIMEOUT_MS, op_done, op_new(r, l, 'r'));
	rc_spec_free(&sp);
}

static void
shim_stop(struct recond *r, struct rc_local *l)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskStopReq st = MTS__SHIM__TASK_STOP_REQ__INIT;
	uint32_t grace = l->st && l->st->spec && l->st->spec->stop_grace_ms
	    ? l->st->spec->stop_grace_ms
	    : 10000;

	st.id = l->id;
	req.body_case = MTS__SHIM__REQUEST__BODY_STOP;
	req.stop = &st;
	rc_call(r, NULL, "shim", &req.base, &mts__shim__reply__descriptor,
	    (int)grace + 15000, op_done, op_new(r, l, 's'));
}

static void
shim_remove(struct recond *r, struct rc_local *l)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskRemoveReq rm = MTS__SHIM__TASK_REMOVE_REQ__INIT;

	rm.id = l->id;
	rm.force = 1;
	req.body_case = MTS__SHIM__REQUEST__BODY_REMOVE;
	req.remove = &rm;
	rc_call(r, NULL, "shim", &req.base, &mts__shim__reply__descriptor,
	    REMOVE_TIMEOUT_MS, op_done, op_new(r, l, 'x'));
}

/* A run of a held task's id releases it: the shim restarts it from its
 * own spec. */
static void
shim_release(struct recond *r, struct rc_local *l)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskRunReq run = MTS__SHIM__TASK_RUN_REQ__INIT;
	Mts__Shim__TaskSpec sp = MTS__SHIM__TASK_SPEC__INIT;

	sp.id = l->id;
	sp.service = l->service;
	sp.managed = 1;
	run.spec = &sp;
	req.body_case = MTS__SHIM__REQUEST__BODY_RUN;
	req.run = &run;
	rc_call(r, NULL, "shim", &req.base, &mts__shim__reply__descriptor,
	    RUN_TIMEOUT_MS, op_done, op_new(r, l, 'r'));
}

/* A task the shim holds since the node came back (its container ended
 * while the node was down) runs again only once a converged view still
 * has it here; superseded or stopped meanwhile, it is stopped instead
 * and never runs. */
static void
decide_held(struct recond *r, struct rc_local *l)
{
	char why[96];

	if (!r->adopted)
		return;
	switch (rc_hold_verdict(r, l, why, sizeof(why))) {
	case RC_HOLD_START:
		log_info("task %s: still assigned here after the node's "
		         "return: restarting it",
		    l->id);
		shim_release(r, l);
		break;
	case RC_HOLD_STOP:
		rc_local_stop(r, l->id, why);
		break;
	case RC_HOLD_WAIT:
		break;
	}
}

/* A task the shim runs for reconciled that has no record any more
 * (stopped and its record removed while reconciled was away). */
static void
stray(struct recond *r, const Mts__Shim__TaskStatus *t)
{
	struct rc_local *l;

	/* a placeholder so that the answer finds the task */
	l = local_new(r, t->id, t->spec->service);
	l->started = 1;
	set_status(NULL, l, t);
	log_info("task %s: not in the intent, stopping and removing it", t->id);
	if (!terminal(t->state)) {
		shim_stop(r, l);
		return;
	}
	shim_remove(r, l);
}

void
rc_local_shim_list(struct recond *r, const Mts__Shim__TaskListRep *list)
{
	struct rc_local *l;
	size_t i;

	for (l = r->local; l != NULL; l = l->next)
		l->listed = 0;
	for (i = 0; i < list->n_tasks; i++) {
		const Mts__Shim__TaskStatus *t = list->tasks[i];

		if ((l = rc_local_find(r, t->id)) != NULL) {
			l->listed = 1;
			l->started = 1;
			if (!l->busy)
				set_status(r, l, t);
		} else if (t->spec && t->spec->managed && t->spec->service &&
		    strlen(t->spec->service) < RC_NAME_MAX &&
		    strlen(t->id) <= RC_ID_MAX) {
			stray(r, t);
			if ((l = rc_local_find(r, t->id)) != NULL)
				l->listed = 1;
		}
	}
	/* a task the shim ran before this list was asked and no longer
	 * has: lost (its state directory went) */
	for (l = r->local; l != NULL; l = l->next)
		if (!l->listed && !l->busy && l->started &&
		    !terminal(rc_local_state(l)) && l->run_seq < r->list_seq) {
			set_status(NULL, l, NULL);
			snprintf(l->state, sizeof(l->state), "failed");
			snprintf(l->error, sizeof(l->error),
			    "the shim no longer has the task");
			rc_event(r, "task.failed", l->service, l->id,
			    r->agent->node, "%s", l->error);
		}
	r->shim_listed = 1;
}

/* --- convergence ----------------------------------------------------------------- */

static int
job_done(const struct rc_local *l, const struct rc_svc *s)
{
	enum mts_rc_mode m = s ? s->core.mode : RC_REPLICATED;

	return (m == RC_REPLICATED_JOB || m == RC_GLOBAL_JOB) && l->st &&
	    strcmp(l->st->state, "exited") == 0 && l->st->exit_code == 0;
}

/* Ended tasks beyond [reconciled] history per service go (the oldest
 * first); a job's completions stay while the service does. */
static void
prune_history(struct recond *r)
{
	struct rc_local *l, *m;

	for (l = r->local; l != NULL; l = l->next) {
		const struct rc_svc *s = rc_find_svc(&r->view, l->service);
		uint32_t newer = 0;

		if (!l->want_run || !terminal(rc_local_state(l)) ||
		    job_done(l, s))
			continue;
		if (s == NULL && r->adopted) { /* the service was removed */
			l->want_run = 0;
			continue;
		}
		for (m = r->local; m != NULL; m = m->next)
			newer += m != l && m->want_run &&
			    strcmp(m->service, l->service) == 0 &&
			    terminal(rc_local_state(m)) && !job_done(m, s) &&
			    m->assigned_at > l->assigned_at;
		if (newer >= r->cfg.history)
			l->want_run = 0;
	}
}

static void
converge_one(struct recond *r, struct rc_local *l)
{
	const char *st = rc_local_state(l);
	const struct rc_svc *s;

	if (l->busy)
		return;
	if (l->want_run && l->st != NULL && l->st->held && l->started) {
		decide_held(r, l);
	} else if (l->want_run) {
		if (l->started || strcmp(l->state, "failed") == 0 ||
		    !r->shim_listed)
			return;
		s = rc_find_svc(&r->view, l->service);
		if (s == NULL)
			return; /* its record has not arrived: wait */
		if (r->cfg.netd && !l->attached)
			net_attach(r, l,
			    s); /* then the shim, in its namespace */
		else
			shim_run(r, l, s);
	} else if (l->st != NULL && !terminal(st)) {
		if (strcmp(st, "stopping") != 0)
			shim_stop(r, l);
	} else if (l->st != NULL || (l->started && !r->shim_listed)) {
		shim_remove(r, l);
	} else {
		finish(r, l);
	}
}

void
rc_local_converge(struct recond *r)
{
	struct rc_local *l, *next;

	prune_history(r);
	for (l = r->local; l != NULL; l = next) {
		next = l->next;
		converge_one(r, l);
	}
	for (l = r->local; l != NULL; l = l->next)
		write_record(r, l);
}
