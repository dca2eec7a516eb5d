/* schedd_api.c: mts-schedd's requests — its access table, its dispatch table of {type, name, caller classes, handler}, and handlers that check a request's strings and turn it into one call of the ledger core, and back. */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "mtserr.h"
#include "mtstime.h"
#include "schedd.h"
#include "xmalloc.h"

/* A string field fits the core's buffer and is not empty. */
static int
fits(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && n < max;
}

static int
is_hex_id(const char *s)
{
	uint8_t id[MTS_NODE_ID_LEN];

	return s != NULL && strlen(s) == MTS_NODE_HEX_LEN &&
	    mts_unhex(id, sizeof(id), s, MTS_NODE_HEX_LEN) == 0;
}

/* Ledger answers that are errors, not a Rejected prepare. */
static int
why_errcode(enum mts_ledger_why w)
{
	switch (w) {
	case LEDGER_UNKNOWN:
		return MTS_ERR_NOTFOUND;
	case LEDGER_ENDED:
		return MTS_ERR_STATE;
	default:
		return MTS_ERR_CONFLICT;
	}
}

static void
h_prepare(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Schedd__PrepareReq *p =
	    ((const Mts__Schedd__Request *)m)->prepare;
	Mts__Schedd__Reply rep = MTS__SCHEDD__REPLY__INIT;
	Mts__Schedd__PrepareRep pr = MTS__SCHEDD__PREPARE_REP__INIT;
	Mts__Schedd__Rejected r = MTS__SCHEDD__REJECTED__INIT;
	Mts__Schedd__Digest d = MTS__SCHEDD__DIGEST__INIT;
	struct schedd *s = ctx;
	struct mts_res res;
	enum mts_ledger_why why;
	int64_t ttl;
	mts_time_t now = mts_now();

	if (!fits(p->lease, MTS_LEASE_ID_MAX) || !is_hex_id(p->owner) ||
	    !fits(p->service, MTS_SERVICE_MAX)) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "prepare needs a lease "
		    "id (< %d bytes), the owner's node id (32 hex digits) and "
		    "a service (< %d bytes)",
		    MTS_LEASE_ID_MAX, MTS_SERVICE_MAX);
		return;
	}
	ttl = p->ttl_ms ? (int64_t)p->ttl_ms : s->cfg.lease_ttl_ms;
	res.cpu_millis = p->cpu_millis;
	res.memory = p->memory;
	why = mts_ledger_prepare(&s->ledger, p->lease, p->owner, p->service,
	    res, p->max_per_node, ttl, now);
	if (why == LEDGER_CONFLICT) {
		mts_ipc_reply_error(call, MTS_ERR_CONFLICT, "lease %s: %s",
		    p->lease, mts_ledger_why_str(why));
		return;
	}
	schedd_changed(s);
	if (why == LEDGER_OK) {
		const struct mts_lease *l = NULL;
		size_t i;

		for (i = 0; i < s->ledger.nleases; i++)
			if (strcmp(s->ledger.leases[i].id, p->lease) == 0)
				l = &s->ledger.leases[i];
		/* answered once the grant is in the journal: a restart
		 * cannot forget it then */
		schedd_save_hold(s, call, HELD_GRANTED, p->lease,
		    l && l->state == LEASE_PREPARED && l->expires > now
		        ? (uint64_t)(l->expires - now)
		        : 0);
		return;
	}
	schedd_digest_fill(s, &d);
	r.reason = (char *)mts_ledger_why_str(why);
	r.digest = &d;
	pr.result_case = MTS__SCHEDD__PREPARE_REP__RESULT_REJECTED;
	pr.rejected = &r;
	rep.body_case = MTS__SCHEDD__REPLY__BODY_PREPARE;
	rep.prepare = &pr;
	mts_ipc_reply(call, &rep.base);
}

static void
h_commit(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Schedd__CommitReq *c =
	    ((const Mts__Schedd__Request *)m)->commit;
	struct schedd *s = ctx;
	enum mts_ledger_why why;

	if (!fits(c->lease, MTS_LEASE_ID_MAX) ||
	    !fits(c->task, MTS_TASK_ID_MAX)) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "commit needs a lease "
		    "id (< %d bytes) and a task id (< %d bytes)",
		    MTS_LEASE_ID_MAX, MTS_TASK_ID_MAX);
		return;
	}
	why = mts_ledger_commit(&s->ledger, c->lease, c->task, mts_now());
	schedd_changed(s);
	if (why != LEDGER_OK) {
		mts_ipc_reply_error(call, why_errcode(why), "lease %s: %s",
		    c->lease, mts_ledger_why_str(why));
		return;
	}
	/* the task holds its share here once the journal says so (a
	 * resent commit waits for the same sync) */
	schedd_save_hold(s, call, HELD_COMMIT, c->lease, 0);
}

static void
h_abort(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Schedd__AbortReq *a =
	    ((const Mts__Schedd__Request *)m)->abort;
	struct schedd *s = ctx;
	enum mts_ledger_why why;

	if (!fits(a->lease, MTS_LEASE_ID_MAX)) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "abort needs a lease id "
		    "(< %d bytes)",
		    MTS_LEASE_ID_MAX);
		return;
	}
	why = mts_ledger_abort(&s->ledger, a->lease, mts_now());
	schedd_changed(s);
	if (why != LEDGER_OK) {
		mts_ipc_reply_error(call, why_errcode(why), "lease %s: %s",
		    a->lease,
		    why == LEDGER_CONFLICT ? "committed: the task "
		                             "is stopped, not aborted"
		                           : mts_ledger_why_str(why));
		return;
	}
	schedd_save_hold(s, call, HELD_ABORT, a->lease, 0);
}

/* The answers that waited for the journal's sync. */
void
schedd_reply_held(const struct schedd_held *h, int rc)
{
	Mts__Schedd__Reply rep = MTS__SCHEDD__REPLY__INIT;
	Mts__Schedd__PrepareRep pr = MTS__SCHEDD__PREPARE_REP__INIT;
	Mts__Schedd__Granted g = MTS__SCHEDD__GRANTED__INIT;
	Mts__Schedd__CommitRep cr = MTS__SCHEDD__COMMIT_REP__INIT;
	Mts__Schedd__AbortRep ar = MTS__SCHEDD__ABORT_REP__INIT;

	if (rc < 0) {
		/* not on disk: a restart could forget it, so a grant is not
		 * given (the lease expires with its ttl) */
		mts_ipc_reply_error(h->call, MTS_ERR_IO,
		    "lease %s: the ledger could not be saved", h->lease);
		return;
	}
	switch (h->kind) {
	case HELD_GRANTED:
		g.expires_in_ms = h->expires_in_ms;
		pr.result_case = MTS__SCHEDD__PREPARE_REP__RESULT_GRANTED;
		pr.granted = &g;
		rep.body_case = MTS__SCHEDD__REPLY__BODY_PREPARE;
		rep.prepare = &pr;
		break;
	case HELD_COMMIT:
		rep.body_case = MTS__SCHEDD__REPLY__BODY_COMMIT;
		rep.commit = &cr;
		break;
	case HELD_ABORT:
		rep.body_case = MTS__SCHEDD__REPLY__BODY_ABORT;
		rep.abort = &ar;
		break;
	}
	mts_ipc_reply(h->call, &rep.base);
}

static void
h_ledger(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	Mts__Schedd__Reply rep = MTS__SCHEDD__REPLY__INIT;
	Mts__Schedd__LedgerRep lr = MTS__SCHEDD__LEDGER_REP__INIT;
	Mts__Schedd__Digest d = MTS__SCHEDD__DIGEST__INIT;
	struct schedd *s = ctx;
	const struct mts_ledger *l = &s->ledger;
	mts_time_t now = mts_now();
	Mts__Schedd__Lease *ls, **lp;
	Mts__Schedd__Task *ts, **tp;
	size_t i;

	mts_ledger_expire(&s->ledger, now);
	schedd_changed(s);
	ls = xcalloc(l->nleases + 1, sizeof(*ls));
	lp = xcalloc(l->nleases + 1, sizeof(*lp));
	ts = xcalloc(l->ntasks + 1, sizeof(*ts));
	tp = xcalloc(l->ntasks + 1, sizeof(*tp));
	for (i = 0; i < l->nleases; i++) {
		const struct mts_lease *x = &l->leases[i];

		mts__schedd__lease__init(&ls[i]);
		ls[i].id = (char *)x->id;
		ls[i].owner = (char *)x->owner;
		ls[i].service = (char *)x->service;
		ls[i].cpu_millis = x->res.cpu_millis;
		ls[i].memory = x->res.memory;
		ls[i].state = (char *)mts_lease_state_str(x->state);
		ls[i].task = (char *)x->task;
		if (x->state == LEASE_PREPARED && x->expires > now)
			ls[i].expires_in_ms = (uint64_t)(x->expires - now);
		lp[i] = &ls[i];
	}
	for (i = 0; i < l->ntasks; i++) {
		mts__schedd__task__init(&ts[i]);
		ts[i].id = (char *)l->tasks[i].id;
		ts[i].service = (char *)l->tasks[i].service;
		ts[i].cpu_millis = l->tasks[i].res.cpu_millis;
		ts[i].memory = l->tasks[i].res.memory;
		tp[i] = &ts[i];
	}
	schedd_digest_fill(s, &d);
	lr.node.data = s->self_id;
	lr.node.len = sizeof(s->self_id);
	lr.digest = &d;
	lr.leases = lp;
	lr.n_leases = l->nleases;
	lr.tasks = tp;
	lr.n_tasks = l->ntasks;
	lr.reserve_cpu_millis = s->cfg.reserve.cpu_millis;
	lr.reserve_memory = s->cfg.reserve.memory;
	lr.availability = (char *)mts_availability_str(s->avail);
	rep.body_case = MTS__SCHEDD__REPLY__BODY_LEDGER;
	rep.ledger = &lr;
	mts_ipc_reply(call, &rep.base);
	free(tp);
	free(ts);
	free(lp);
	free(ls);
}

static void
h_place(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	schedd_place(ctx, ((const Mts__Schedd__Request *)m)->place, call);
}

static void
h_availability(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Schedd__AvailabilityReq *a =
	    ((const Mts__Schedd__Request *)m)->availability;
	enum mts_availability want;

	if (a->availability == NULL || *a->availability == '\0' ||
	    mts_availability_parse(a->availability, &want) < 0) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "availability: active, pause or drain");
		return;
	}
	schedd_set_availability(ctx, want, call);
}

#define READ MTS_CALLER_READ
#define WRITE MTS_CALLER_WRITE
#define REMOTE MTS_CALLER_REMOTE

/* Owners on other nodes reserve here through the relay, and `mtsctl node
 * drain` on any node reaches this one's availability: every call but the
 * placement dry-run (local: it reads the local replica) is open to a
 * relayed caller. */
static const struct mts_ipc_route routes[] = {
	{ MTS__SCHEDD__REQUEST__BODY_PREPARE, "prepare", WRITE | REMOTE,
	    h_prepare },
	{ MTS__SCHEDD__REQUEST__BODY_COMMIT, "commit", WRITE | REMOTE,
	    h_commit },
	{ MTS__SCHEDD__REQUEST__BODY_ABORT, "abort", WRITE | REMOTE, h_abort },
	{ MTS__SCHEDD__REQUEST__BODY_LEDGER, "ledger", READ | REMOTE,
	    h_ledger },
	{ MTS__SCHEDD__REQUEST__BODY_PLACE, "place", READ, h_place },
	{ MTS__SCHEDD__REQUEST__BODY_AVAILABILITY, "availability",
	    WRITE | REMOTE, h_availability },
};

/* [schedd] acl: everything (the node's reconciled, root's mtsctl);
 * acl_relay: what a relayed call may do (the node's gossipd). */
static const struct mts_acl_rule acl_rules[] = {
	{ READ | WRITE, MTS_ACL_USERS, "acl" },
	{ REMOTE, MTS_ACL_USERS, "acl_relay" },
	{ 0, 0, NULL },
};

const struct mts_ipc_service schedd_service = {
	.name = "schedd",
	.request = &mts__schedd__request__descriptor,
	.reply = &mts__schedd__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.acl = acl_rules,
};
