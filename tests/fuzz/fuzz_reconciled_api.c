/* fuzz_reconciled_api.c: libFuzzer target that drives the real mts-reconciled — its dispatch table and handlers over its own reconciled.sock on its loop, with its node-local task table — with well-formed assign/stop/status requests built from the input (colliding task ids, leases the stand-in schedd refuses, bad owners, over-long and invalid names), and checks every reply, that a task is held once, only after its lease was committed, with its t/<self>/ record written (desired running, managed, its service), that a stop turns it desired stopped (and, for a task it does not hold, answers NOT_FOUND once its records were read, STATE before), and that status lists exactly the tasks held. */
#define main reconciled_main
#include "fuzz_input.h"
#include "fuzz_harness.h"
#include "agents/reconciled/reconciled.c"
#undef main

#include <stdio.h>

#include "xmalloc.h"

#define MAX_REQS 24
#define REPLY_WAIT_MS 2000
#define MAX_RECS 64

static const char *tdir;
static struct recond fz;
static struct mts_agent fz_agent;
static struct mts_ipc_async *cli;

/* --- stand-ins on reconciled's loop: a statestore of a few records, a
 * schedd whose commits succeed for leases named ok* ------------------------ */

static struct rec {
	char key[160];
	uint8_t *v;
	size_t len;
} recs[MAX_RECS];
static size_t nrecs;

static struct rec *
rec_find(const ProtobufCBinaryData *k)
{
	size_t i;

	for (i = 0; i < nrecs; i++)
		if (strlen(recs[i].key) == k->len &&
		    memcmp(recs[i].key, k->data, k->len) == 0)
			return &recs[i];
	return NULL;
}

static void
rec_put(const ProtobufCBinaryData *k, const ProtobufCBinaryData *v)
{
	struct rec *r = rec_find(k);

	if (r == NULL) {
		if (nrecs == MAX_RECS || k->len >= sizeof(recs[0].key))
			abort();
		r = &recs[nrecs++];
		memset(r, 0, sizeof(*r));
		memcpy(r->key, k->data, k->len);
		r->key[k->len] = '\0';
	}
	free(r->v);
	r->v = xmalloc(v->len + 1);
	memcpy(r->v, v->data, v->len);
	r->len = v->len;
}

static void
rec_del(const ProtobufCBinaryData *k)
{
	struct rec *r = rec_find(k);

	if (r == NULL)
		return;
	free(r->v);
	*r = recs[--nrecs];
}

static void
h_store(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__Request *req = (const void *)m;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__PutRep put = MTS__STATESTORE__PUT_REP__INIT;
	Mts__Statestore__DeleteRep del = MTS__STATESTORE__DELETE_REP__INIT;
	Mts__Statestore__ScanRep scan = MTS__STATESTORE__SCAN_REP__INIT;

	rep.body_case = (Mts__Statestore__Reply__BodyCase)req->body_case;
	if (req->body_case == MTS__STATESTORE__REQUEST__BODY_PUT) {
		rec_put(&req->put->key, &req->put->value);
		rep.put = &put;
	} else if (req->body_case == MTS__STATESTORE__REQUEST__BODY_DELETE) {
		if (rec_find(&req->delete_->key) == NULL) {
			mts_ipc_reply_error(call, MTS_ERR_NOTFOUND, "%s",
			    "no such key");
			return;
		}
		rec_del(&req->delete_->key);
		rep.delete_ = &del;
	} else {
		rep.scan = &scan;
	}
	mts_ipc_reply(call, &rep.base);
}

static const struct mts_ipc_route store_routes[] = {
	{ MTS__STATESTORE__REQUEST__BODY_PUT, "put", MTS_IPC_ANY, h_store },
	{ MTS__STATESTORE__REQUEST__BODY_DELETE, "delete", MTS_IPC_ANY,
	    h_store },
	{ MTS__STATESTORE__REQUEST__BODY_SCAN, "scan", MTS_IPC_ANY, h_store },
};

static const struct mts_ipc_service store_svc = {
	.name = "fuzz-statestore",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = store_routes,
	.nroutes = sizeof(store_routes) / sizeof(store_routes[0]),
};

static void
h_commit(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Schedd__CommitReq *c =
	    ((const Mts__Schedd__Request *)m)->commit;
	Mts__Schedd__Reply rep = MTS__SCHEDD__REPLY__INIT;
	Mts__Schedd__CommitRep cr = MTS__SCHEDD__COMMIT_REP__INIT;

	if (strncmp(c->lease, "ok", 2) != 0) {
		mts_ipc_reply_error(call, MTS_ERR_NOTFOUND, "lease %s: unknown",
		    c->lease);
		return;
	}
	rep.body_case = MTS__SCHEDD__REPLY__BODY_COMMIT;
	rep.commit = &cr;
	mts_ipc_reply(call, &rep.base);
}

static const struct mts_ipc_route schedd_routes[] = {
	{ MTS__SCHEDD__REQUEST__BODY_COMMIT, "commit", MTS_IPC_ANY, h_commit },
};

static const struct mts_ipc_service schedd_svc = {
	.name = "fuzz-schedd",
	.request = &mts__schedd__request__descriptor,
	.reply = &mts__schedd__reply__descriptor,
	.routes = schedd_routes,
	.nroutes = 1,
};

/* main() of reconciled.c without init, the sandbox, the feeds and the
 * refreshes (no gossipd, no shim: only the API and the local table). */
static void
start(void)
{
	char conf[64];

	tdir = fz_scratch("rc");
	snprintf(conf, sizeof(conf), "[reconciled]\nacl = %u\n",
	    (unsigned)getuid());
	fz_agent_start(&fz_agent, "reconciled", tdir, conf, mts_conf_schema());
	fz.agent = &fz_agent;
	if (setup(&fz, &fz_agent) < 0)
		abort();
	fz.store = fz_stand_in(fz.loop, tdir, "store", &store_svc, NULL);
	fz.schedd = fz_stand_in(fz.loop, tdir, "schedd", &schedd_svc, NULL);
	/* a change asks for a refresh, which this harness never runs */
	fz.last_refresh = INT64_MAX / 2;
	cli = fz_serve(fz.loop, tdir, "reconciled", &reconciled_service, &fz,
	    &fz.cfg.acl, REPLY_WAIT_MS, &fz.srv);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	start();
	return 0;
}

/* --- the program and the checks ---------------------------------------------- */

static char longstr[300];

static const char *
take_name(struct in *in, const char *const *names, size_t n)
{
	unsigned c = take(in, 16);

	if (c == 14)
		return "";
	if (c == 15)
		return longstr;
	return names[c % n];
}

static const char *const tasks[] = { "s_a.1.x", "s_a.2.x", "s_b.1.y", "Bad.1",
	"-t", "s_a.1.x" };
static const char *const services[] = { "s_a", "s_b" };
static const char *const leases[] = { "ok1", "ok2", "refused" };
static const char *const owners[] = { "0123456789abcdef0123456789abcdef",
	"ffffffffffffffffffffffffffffffff", "0123", "",
	"0123456789abcdef0123456789abcdeg" };

/* The error code (0 for none) of req's reply; aborts without one. */
static int
call(Mts__Reconciled__Request *req, Mts__Reconciled__Reply **rep)
{
	return fz_call(fz.loop, cli, &req->base,
	    &mts__reconciled__reply__descriptor, REPLY_WAIT_MS,
	    (ProtobufCMessage **)rep);
}

static size_t
held(const char *id)
{
	struct rc_local *l;
	size_t n = 0;

	for (l = fz.local; l != NULL; l = l->next)
		n += id == NULL || strcmp(l->id, id) == 0;
	return n;
}

static int
valid_id(const char *id)
{
	size_t i, n = strlen(id);

	if (n == 0 || n > RC_ID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') ||
		        (id[i] >= '0' && id[i] <= '9') ||
		        (i > 0 && strchr("-_.", id[i]) != NULL)))
			return 0;
	return 1;
}

/* The task's t/<self>/ record, once written (the loop runs until the
 * stand-in statestore has it, or a second passed). */
static Mts__Shim__TaskStatus *
record(const char *id)
{
	char key[160];
	ProtobufCBinaryData k;
	mts_time_t end = mts_now() + 1000;
	struct rec *r;

	snprintf(key, sizeof(key), "t/%s/%s", fz.self, id);
	k.data = (uint8_t *)key;
	k.len = strlen(key);
	while ((r = rec_find(&k)) == NULL && mts_now() < end)
		mts_loop_run_once(fz.loop, 5);
	return r ? mts__shim__task_status__unpack(NULL, r->len, r->v) : NULL;
}

static void
do_assign(struct in *in)
{
	Mts__Reconciled__Request req = MTS__RECONCILED__REQUEST__INIT;
	Mts__Reconciled__AssignReq a = MTS__RECONCILED__ASSIGN_REQ__INIT;
	Mts__Reconciled__Reply *rep;
	Mts__Shim__TaskStatus *st;
	int code, valid, had;

	a.task = (char *)take_name(in, tasks, 6);
	a.service = (char *)take_name(in, services, 2);
	a.lease = (char *)take_name(in, leases, 3);
	a.owner = (char *)owners[take(in, 5)];
	a.version = take(in, 4);
	a.slot = take(in, 10);
	req.body_case = MTS__RECONCILED__REQUEST__BODY_ASSIGN;
	req.assign = &a;
	valid = valid_id(a.task) && *a.service != '\0' &&
	    strlen(a.service) < RC_NAME_MAX && *a.lease != '\0' &&
	    strlen(a.owner) == 32 && strchr(a.owner, 'g') == NULL;
	had = held(a.task) > 0;
	code = call(&req, &rep);
	if (!valid) {
		if (code != MTS_ERR_INVAL)
			abort();
	} else if (had) {
		if (code != 0) /* a resent assign is answered as the first */
			abort();
	} else if (strncmp(a.lease, "ok", 2) != 0) {
		if (code != MTS_ERR_NOTFOUND || held(a.task) != 0)
			abort(); /* never held without a committed lease */
	} else if (code == MTS_ERR_TIMEOUT) {
		/* the agent's own call to the stand-in schedd ran out of
		 * time (a loaded machine): nothing to check but that the
		 * task is held at most once (below) */
	} else {
		if (code != 0 || held(a.task) != 1) {
			fprintf(stderr, "assign %s: code %d, held %zu\n",
			    a.task, code, held(a.task));
			abort();
		}
		if ((st = record(a.task)) == NULL || st->spec == NULL ||
		    !st->spec->managed ||
		    strcmp(st->spec->service, a.service) != 0 ||
		    strcmp(st->desired, "running") != 0 ||
		    strcmp(st->state, "pending") != 0)
			abort();
		mts__shim__task_status__free_unpacked(st, NULL);
	}
	if (held(a.task) > 1)
		abort();
	if (rep)
		mts__reconciled__reply__free_unpacked(rep, NULL);
}

static void
do_stop(struct in *in)
{
	Mts__Reconciled__Request req = MTS__RECONCILED__REQUEST__INIT;
	Mts__Reconciled__StopReq s = MTS__RECONCILED__STOP_REQ__INIT;
	Mts__Reconciled__Reply *rep;
	struct rc_local *l;
	int code;

	s.task = (char *)take_name(in, tasks, 6);
	s.reason = take(in, 2) ? "fuzz" : "";
	/* before its first view (its own records not read yet) a stop of a
	 * task it does not hold is STATE, which the owner resends, not
	 * NOT_FOUND, which it would take as done */
	fz.adopted = take(in, 4) != 0;
	req.body_case = MTS__RECONCILED__REQUEST__BODY_STOP;
	req.stop = &s;
	code = call(&req, &rep);
	l = *s.task != '\0' && strlen(s.task) <= RC_ID_MAX
	    ? rc_local_find(&fz, s.task)
	    : NULL;
	if (*s.task == '\0' || strlen(s.task) > RC_ID_MAX) {
		if (code != MTS_ERR_INVAL)
			abort();
	} else if (l == NULL
	        ? code != (fz.adopted ? MTS_ERR_NOTFOUND : MTS_ERR_STATE)
	        : code != 0 || l->want_run) {
		abort();
	}
	if (rep)
		mts__reconciled__reply__free_unpacked(rep, NULL);
}

static void
do_status(struct in *in)
{
	Mts__Reconciled__Request req = MTS__RECONCILED__REQUEST__INIT;
	Mts__Reconciled__StatusReq sr = MTS__RECONCILED__STATUS_REQ__INIT;
	Mts__Reconciled__Reply *rep;
	size_t i;

	req.body_case = MTS__RECONCILED__REQUEST__BODY_STATUS;
	req.status = &sr;
	if (call(&req, &rep) != 0 ||
	    rep->body_case != MTS__RECONCILED__REPLY__BODY_STATUS ||
	    rep->status->n_tasks != held(NULL))
		abort();
	for (i = 0; i < rep->status->n_tasks; i++) {
		const Mts__Reconciled__LocalTask *t = rep->status->tasks[i];
		struct rc_local *l = rc_local_find(&fz, t->id);

		if (l == NULL ||
		    strcmp(t->desired, l->want_run ? "running" : "stopped") !=
		        0 ||
		    strcmp(t->service, l->service) != 0)
			abort();
	}
	mts__reconciled__reply__free_unpacked(rep, NULL);
}

static void (*const ops[])(struct in *) = {
	do_assign,
	do_assign,
	do_assign,
	do_stop,
	do_status,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	mts_time_t end;
	int i;

	memset(longstr, 'x', sizeof(longstr) - 1);
	for (i = 0; i < MAX_REQS && in.n > 0; i++)
		ops[take(&in, sizeof(ops) / sizeof(ops[0]))](&in);
	/* the next input starts with no task and no record; writes still
	 * in flight land first */
	end = mts_now() + 1000;
	while (mts_ipc_async_inflight(fz.store) > 0 && mts_now() < end)
		mts_loop_run_once(fz.loop, 5);
	rc_local_free_all(&fz);
	while (nrecs > 0) {
		free(recs[nrecs - 1].v);
		nrecs--;
	}
	return 0;
}
