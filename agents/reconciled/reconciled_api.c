/* reconciled_api.c: mts-reconciled's requests — its access table, its dispatch table of {type, name, caller classes, handler}, and the handlers: an owner's Assign and Stop (locally or relayed from another node) and the Status of what this node owns and runs. */
#include <stdlib.h>
#include <string.h>

#include "mtserr.h"
#include "reconciled.h"
#include "xmalloc.h"

static void
assign_done(void *arg, int rc, const char *err)
{
	struct mts_ipc_call *call = arg;
	Mts__Reconciled__Reply rep = MTS__RECONCILED__REPLY__INIT;
	Mts__Reconciled__AssignRep ar = MTS__RECONCILED__ASSIGN_REP__INIT;

	if (rc < 0) {
		mts_ipc_reply_error(call, -rc, "%s", err);
		return;
	}
	rep.body_case = MTS__RECONCILED__REPLY__BODY_ASSIGN;
	rep.assign = &ar;
	mts_ipc_reply(call, &rep.base);
}

static void
h_assign(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	rc_local_assign(ctx, ((const Mts__Reconciled__Request *)m)->assign,
	    assign_done, call);
}

static void
h_stop(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Reconciled__StopReq *s =
	    ((const Mts__Reconciled__Request *)m)->stop;
	Mts__Reconciled__Reply rep = MTS__RECONCILED__REPLY__INIT;
	Mts__Reconciled__StopRep sr = MTS__RECONCILED__STOP_REP__INIT;

	if (s->task == NULL || *s->task == '\0' ||
	    strlen(s->task) > RC_ID_MAX) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "stop needs a task id");
		return;
	}
	if (rc_local_stop(ctx, s->task,
	        s->reason && *s->reason ? s->reason : "asked") < 0) {
		/* before its first view this node has not read its own
		 * records yet: not found is not an answer (the owner would
		 * take the stop as done), it resends on STATE */
		if (!((struct recond *)ctx)->adopted)
			mts_ipc_reply_error(call, MTS_ERR_STATE,
			    "this node has not read its tasks yet");
		else
			mts_ipc_reply_error(call, MTS_ERR_NOTFOUND,
			    "no task %s on this node", s->task);
		return;
	}
	rep.body_case = MTS__RECONCILED__REPLY__BODY_STOP;
	rep.stop = &sr;
	mts_ipc_reply(call, &rep.base);
}

static void
h_status(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct recond *r = ctx;
	Mts__Reconciled__Reply rep = MTS__RECONCILED__REPLY__INIT;
	Mts__Reconciled__StatusRep sr = MTS__RECONCILED__STATUS_REP__INIT;
	Mts__Reconciled__OwnedService *os, **osp;
	Mts__Reconciled__LocalTask *lt, **ltp;
	struct rc_own *o;
	struct rc_local *l;
	size_t no = 0, nl = 0, i;

	for (o = r->own; o != NULL; o = o->next)
		no++;
	for (l = r->local; l != NULL; l = l->next)
		nl++;
	os = xcalloc(no + 1, sizeof(*os));
	osp = xcalloc(no + 1, sizeof(*osp));
	lt = xcalloc(nl + 1, sizeof(*lt));
	ltp = xcalloc(nl + 1, sizeof(*ltp));
	for (o = r->own, i = 0; o != NULL; o = o->next) {
		if (o->seen == 0)
			continue; /* a global service's local placement */
		mts__reconciled__owned_service__init(&os[i]);
		os[i].name = o->service;
		os[i].desired = o->desired;
		os[i].live = o->live;
		os[i].pending = o->pending;
		os[i].message = o->message;
		osp[i] = &os[i];
		i++;
	}
	sr.owned = osp;
	sr.n_owned = i;
	for (l = r->local, i = 0; l != NULL; l = l->next, i++) {
		mts__reconciled__local_task__init(&lt[i]);
		lt[i].id = l->id;
		lt[i].service = l->service;
		lt[i].desired = l->want_run ? "running" : "stopped";
		lt[i].state = (char *)rc_local_state(l);
		lt[i].error = l->st && l->st->error && *l->st->error
		    ? l->st->error
		    : l->error;
		ltp[i] = &lt[i];
	}
	sr.tasks = ltp;
	sr.n_tasks = nl;
	for (i = 0; i < r->view.nmembers; i++)
		sr.members += r->view.members[i].alive;
	sr.refreshes = r->refreshes;
	rep.body_case = MTS__RECONCILED__REPLY__BODY_STATUS;
	rep.status = &sr;
	mts_ipc_reply(call, &rep.base);
	free(os);
	free(osp);
	free(lt);
	free(ltp);
}

#define READ MTS_CALLER_READ
#define WRITE MTS_CALLER_WRITE
#define REMOTE MTS_CALLER_REMOTE

/* Owners on other nodes assign and stop tasks here through the relay;
 * Status is for the node's own admins. */
static const struct mts_ipc_route routes[] = {
	{ MTS__RECONCILED__REQUEST__BODY_ASSIGN, "assign", WRITE | REMOTE,
	    h_assign },
	{ MTS__RECONCILED__REQUEST__BODY_STOP, "stop", WRITE | REMOTE, h_stop },
	{ MTS__RECONCILED__REQUEST__BODY_STATUS, "status", READ, h_status },
};

/* [reconciled] acl: everything (root's mtsctl); acl_relay: what a
 * relayed call may do (the node's gossipd). */
static const struct mts_acl_rule acl_rules[] = {
	{ READ | WRITE, MTS_ACL_USERS, "acl" },
	{ REMOTE, MTS_ACL_USERS, "acl_relay" },
	{ 0, 0, NULL },
};

const struct mts_ipc_service reconciled_service = {
	.name = "reconciled",
	.request = &mts__reconciled__request__descriptor,
	.reply = &mts__reconciled__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.acl = acl_rules,
};
