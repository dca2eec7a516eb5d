/* shim_api.c: mts-shim's request handlers on shim.sock — the dispatch table of task, logs, exec and image requests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mtserr.h"
#include "peer_core.h"
#include "shim.h"
#include "xmalloc.h"

/* MTS_CALLER_REMOTE is what another node may ask through its gossipd (the
 * relay): look at tasks, read their logs, exec in them, fetch the blobs of
 * stored images. */
#define CALLER_ANY (MTS_CALLER_ADMIN | MTS_CALLER_REMOTE)
#define LOGS_DEFAULT_MAX (256u << 10)
#define LOGS_LIMIT (2u << 20)

/* Only the node's own admins see env values: a caller admitted through
 * acl_relay alone is another node. */
static int
sees_env(struct shim *s, const struct mts_ipc_call *call)
{
	return (mts_acl_classify(&s->cfg.acl, mts_ipc_call_uid(call),
	            mts_ipc_call_gid(call)) &
	           MTS_CALLER_ADMIN) != 0;
}

static void
status_for(struct shim *s, const struct mts_ipc_call *call,
    const struct shim_task *t, Mts__Shim__TaskStatus *st,
    struct shim_shared *sh)
{
	sh->names = NULL;
	if (sees_env(s, call))
		shim_task_status(t, st);
	else
		shim_task_status_shared(t, st, sh);
}

void
shim_reply_task(struct shim *s, struct mts_ipc_call *call,
    const struct shim_task *t, int body)
{
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__TaskRunRep run = MTS__SHIM__TASK_RUN_REP__INIT;
	Mts__Shim__TaskStopRep stop = MTS__SHIM__TASK_STOP_REP__INIT;
	Mts__Shim__TaskInspectRep ins = MTS__SHIM__TASK_INSPECT_REP__INIT;
	Mts__Shim__TaskStatus st;
	struct shim_shared sh;

	status_for(s, call, t, &st, &sh);
	rep.body_case = body;
	switch (body) {
	case MTS__SHIM__REPLY__BODY_RUN:
		run.task = &st;
		rep.run = &run;
		break;
	case MTS__SHIM__REPLY__BODY_STOP:
		stop.task = &st;
		rep.stop = &stop;
		break;
	default:
		ins.task = &st;
		rep.inspect = &ins;
		rep.body_case = MTS__SHIM__REPLY__BODY_INSPECT;
		break;
	}
	mts_ipc_reply(call, &rep.base);
	shim_shared_free(&sh);
}

static struct shim_task *
need_task(struct shim *s, const char *id, struct mts_ipc_call *call)
{
	struct shim_task *t = id ? shim_task_find(s, id) : NULL;

	if (t == NULL)
		mts_ipc_reply_error(call, MTS_ERR_NOTFOUND, "no task %s",
		    id ? id : "(none)");
	return t;
}

void
shim_run(struct shim *s, const Mts__Shim__TaskSpec *spec,
    struct mts_ipc_call *call)
{
	struct shim_task *t;
	char err[512];
	int rc;

	if (spec->id != NULL && (t = shim_task_find(s, spec->id)) != NULL &&
	    t->core.held) {
		shim_task_release(s, t);
		shim_reply_task(s, call, t, MTS__SHIM__REPLY__BODY_RUN);
		return;
	}
	if ((rc = shim_task_create(s, spec, &t, err, sizeof(err))) != 0) {
		mts_ipc_reply_error(call, -rc, "%s", err);
		return;
	}
	log_info("task %s: run %s", t->core.id, t->spec->image);
	if (t->core.state == MTS_TASK_CREATED)
		t->run_call = call; /* replied once started (or failed) */
	else
		shim_reply_task(s, call, t, MTS__SHIM__REPLY__BODY_RUN);
}

/* Whether a run names an image the store lacks (and could run once it is
 * there: a new task id). */
static int
lacks_image(struct shim *s, const Mts__Shim__TaskSpec *sp)
{
	struct mts_image_info in;

	if (sp->image == NULL || sp->image[0] == '\0' ||
	    strlen(sp->image) > MTS_PEER_NAME_MAX ||
	    (sp->id != NULL && shim_task_find(s, sp->id) != NULL))
		return 0;
	if (mts_store_get(s->store, sp->image, &in) == 0) {
		mts_image_info_free(&in);
		return 0;
	}
	return 1;
}

/* A run whose image this node lacks waits while the image is fetched
 * (from its registry or from the peers that hold it: shim_images.c). */
static void
h_run(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__Request *req = (const Mts__Shim__Request *)m;
	const Mts__Shim__TaskSpec *sp = req->run->spec;
	struct shim *s = ctx;

	if (sp == NULL) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL, "run: no task spec");
		return;
	}
	if (lacks_image(s, sp))
		shim_run_wait(s, sp, call);
	else
		shim_run(s, sp, call);
}

static void
h_list(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct shim *s = ctx;
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__TaskListRep ls = MTS__SHIM__TASK_LIST_REP__INIT;
	Mts__Shim__TaskStatus *sts, **ptrs;
	struct shim_shared *sh;
	struct shim_task *t;
	size_t n = 0, i;

	for (t = s->tasks; t != NULL; t = t->next)
		n++;
	sts = xcalloc(n + 1, sizeof(*sts));
	ptrs = xcalloc(n + 1, sizeof(*ptrs));
	sh = xcalloc(n + 1, sizeof(*sh));
	n = 0;
	for (t = s->tasks; t != NULL; t = t->next) {
		status_for(s, call, t, &sts[n], &sh[n]);
		ptrs[n] = &sts[n];
		n++;
	}
	ls.tasks = ptrs;
	ls.n_tasks = n;
	rep.body_case = MTS__SHIM__REPLY__BODY_LIST;
	rep.list = &ls;
	mts_ipc_reply(call, &rep.base);
	for (i = 0; i < n; i++)
		shim_shared_free(&sh[i]);
	free(sh);
	free(sts);
	free(ptrs);
}

static void
h_inspect(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__Request *req = (const Mts__Shim__Request *)m;
	struct shim_task *t = need_task(ctx, req->inspect->id, call);

	if (t != NULL)
		shim_reply_task(ctx, call, t, MTS__SHIM__REPLY__BODY_INSPECT);
}

static void
h_stop(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__Request *req = (const Mts__Shim__Request *)m;
	struct shim_task *t = need_task(ctx, req->stop->id, call);
	struct mts_task_ev ev = { .type = MTS_EV_STOP };

	if (t == NULL)
		return;
	t->stop_calls =
	    xreallocarray(t->stop_calls, t->nstop + 1, sizeof(*t->stop_calls));
	t->stop_calls[t->nstop++] = call;
	ev.has_grace = req->stop->has_grace;
	ev.grace = req->stop->grace_ms;
	log_info("task %s: stop", t->core.id);
	shim_task_event(ctx, t, &ev);
}

static void
h_remove(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__Request *req = (const Mts__Shim__Request *)m;
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__TaskRemoveRep rm = MTS__SHIM__TASK_REMOVE_REP__INIT;
	struct shim_task *t = need_task(ctx, req->remove->id, call);
	char err[512];
	int rc;

	if (t == NULL)
		return;
	if (req->remove->force && t->core.state != MTS_TASK_EXITED &&
	    t->core.state != MTS_TASK_FAILED) {
		t->remove_when_done = 1;
		shim_task_event(ctx, t,
		    &(struct mts_task_ev){ .type = MTS_EV_STOP,
		        .has_grace = 1,
		        .grace = 0 });
		rep.body_case = MTS__SHIM__REPLY__BODY_REMOVE;
		rep.remove = &rm;
		mts_ipc_reply(call, &rep.base);
		return;
	}
	if ((rc = shim_task_remove(ctx, t, err, sizeof(err))) != 0) {
		mts_ipc_reply_error(call, -rc, "%s", err);
		return;
	}
	rep.body_case = MTS__SHIM__REPLY__BODY_REMOVE;
	rep.remove = &rm;
	mts_ipc_reply(call, &rep.base);
}

static void
h_logs(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__LogsReq *lr = ((const Mts__Shim__Request *)m)->logs;
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__LogsRep out = MTS__SHIM__LOGS_REP__INIT;
	struct shim_task *t = need_task(ctx, lr->id, call);
	struct mts_buf buf;
	uint64_t next, end;
	size_t max;

	if (t == NULL)
		return;
	max = lr->max_bytes ? lr->max_bytes : LOGS_DEFAULT_MAX;
	if (max > LOGS_LIMIT)
		max = LOGS_LIMIT;
	mts_buf_init(&buf);
	if (shim_logs_read(t->dir, lr->offset, lr->tail_lines, max, &buf, &next,
	        &end) != 0) {
		mts_buf_free(&buf);
		mts_ipc_reply_error(call, MTS_ERR_IO,
		    "task %s: cannot read "
		    "its log",
		    t->core.id);
		return;
	}
	out.data.data = buf.data;
	out.data.len = buf.len;
	out.next_offset = next;
	out.finished = next >= end &&
	    (t->core.state == MTS_TASK_EXITED ||
	        t->core.state == MTS_TASK_FAILED);
	rep.body_case = MTS__SHIM__REPLY__BODY_LOGS;
	rep.logs = &out;
	mts_ipc_reply(call, &rep.base);
	mts_buf_free(&buf);
}

static void
h_exec(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__ExecReq *er = ((const Mts__Shim__Request *)m)->exec;
	struct shim_task *t = need_task(ctx, er->id, call);

	if (t != NULL)
		shim_exec_oneshot(ctx, t, er, call);
}

static void
h_exec_start(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__ExecStartReq *r =
	    ((const Mts__Shim__Request *)m)->exec_start;
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__ExecStartRep out = MTS__SHIM__EXEC_START_REP__INIT;
	struct shim_task *t = need_task(ctx, r->id, call);
	char err[256];
	int rc;

	if (t == NULL)
		return;
	if ((rc = shim_exec_begin(ctx, t, r, &out.session, err, sizeof(err))) !=
	    0) {
		mts_ipc_reply_error(call, -rc, "%s", err);
		return;
	}
	rep.body_case = MTS__SHIM__REPLY__BODY_EXEC_START;
	rep.exec_start = &out;
	mts_ipc_reply(call, &rep.base);
}

static void
h_exec_io(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	shim_exec_io(ctx, ((const Mts__Shim__Request *)m)->exec_io, call);
}

/* Number of tasks using an image (by id). */
static uint32_t
image_users(struct shim *s, const char *id)
{
	struct shim_task *t;
	uint32_t n = 0;

	for (t = s->tasks; t != NULL; t = t->next)
		n += strcmp(t->image_id, id) == 0;
	return n;
}

static void
image_info(struct shim *s, const struct mts_image_info *in,
    Mts__Shim__ImageInfo *out)
{
	mts__shim__image_info__init(out);
	out->name = in->name;
	out->id = (char *)in->id;
	out->manifest = (char *)in->manifest;
	out->size = (uint64_t)in->size;
	out->layers = (uint32_t)in->nlayers;
	out->created_at = in->created_ms;
	out->tasks = image_users(s, in->id);
}

void
shim_reply_image(struct shim *s, struct mts_ipc_call *call, const char *name,
    int pull)
{
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__ImageImportRep ir = MTS__SHIM__IMAGE_IMPORT_REP__INIT;
	Mts__Shim__ImagePullRep pr = MTS__SHIM__IMAGE_PULL_REP__INIT;
	Mts__Shim__ImageInfo ii;
	struct mts_image_info in;

	if (mts_store_get(s->store, name, &in) != 0) {
		mts_ipc_reply_error(call, MTS_ERR_IO, "image %s vanished",
		    name);
		return;
	}
	image_info(s, &in, &ii);
	if (pull) {
		pr.image = &ii;
		rep.body_case = MTS__SHIM__REPLY__BODY_IMAGE_PULL;
		rep.image_pull = &pr;
	} else {
		ir.image = &ii;
		rep.body_case = MTS__SHIM__REPLY__BODY_IMAGE_IMPORT;
		rep.image_import = &ir;
	}
	mts_ipc_reply(call, &rep.base);
	mts_image_info_free(&in);
}

/* One import or pull at a time: they stage into the same store, and a
 * removal's garbage collection must not run under them. */
static int
image_busy(struct shim *s, struct mts_ipc_call *call)
{
	if (!s->image_job)
		return 0;
	mts_ipc_reply_error(call, MTS_ERR_STATE,
	    "an image import or pull is running; try again when it ends");
	return 1;
}

static void
h_image_import(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__ImageImportReq *r =
	    ((const Mts__Shim__Request *)m)->image_import;
	struct shim *s = ctx;
	char store[SHIM_PATH];
	const char *args[] = { "import", store, r->path, r->name ? r->name : "",
		NULL };

	if (r->path == NULL || r->path[0] != '/') {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "import: the path must be absolute");
		return;
	}
	if (image_busy(s, call))
		return;
	snprintf(store, sizeof(store), "%s/images", s->cfg.statedir);
	if (shim_image_start(s, args, 0, "", call) != 0)
		mts_ipc_reply_error(call, MTS_ERR_IO, "cannot run %s",
		    s->cfg.image_tool);
}

/* source "" pulls from the registry, then asks the peers; "peers" and
 * "registry" ask only those. */
static void
h_image_pull(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__ImagePullReq *r =
	    ((const Mts__Shim__Request *)m)->image_pull;
	struct shim *s = ctx;
	struct shim_fetch_argv a;
	const char *src = r->source && r->source[0] ? r->source : "pull";

	if (strcmp(src, "pull") != 0 && strcmp(src, "peers") != 0 &&
	    strcmp(src, "registry") != 0) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "pull: source \"%.40s\": expected peers or registry", src);
		return;
	}
	if (r->ref == NULL || r->ref[0] == '\0' ||
	    strlen(r->ref) > MTS_PEER_NAME_MAX) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "pull: an image reference of 1-%d bytes",
		    MTS_PEER_NAME_MAX);
		return;
	}
	if (image_busy(s, call))
		return;
	shim_fetch_argv(s, &a, src, r->ref, r->insecure);
	if (shim_image_start(s, a.v, 1, r->ref, call) != 0)
		mts_ipc_reply_error(call, MTS_ERR_IO, "cannot run %s",
		    s->cfg.image_tool);
}

static void
h_image_list(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct shim *s = ctx;
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__ImageListRep ls = MTS__SHIM__IMAGE_LIST_REP__INIT;
	Mts__Shim__ImageInfo *ii, **ptrs;
	struct mts_image_info *all;
	size_t n, i;

	if (mts_store_list(s->store, &all, &n) != 0) {
		mts_ipc_reply_error(call, MTS_ERR_IO, "cannot list images");
		return;
	}
	ii = xcalloc(n + 1, sizeof(*ii));
	ptrs = xcalloc(n + 1, sizeof(*ptrs));
	for (i = 0; i < n; i++) {
		image_info(s, &all[i], &ii[i]);
		ptrs[i] = &ii[i];
	}
	ls.images = ptrs;
	ls.n_images = n;
	rep.body_case = MTS__SHIM__REPLY__BODY_IMAGE_LIST;
	rep.image_list = &ls;
	mts_ipc_reply(call, &rep.base);
	for (i = 0; i < n; i++)
		mts_image_info_free(&all[i]);
	free(all);
	free(ii);
	free(ptrs);
}

static void
h_image_remove(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Shim__ImageRemoveReq *r =
	    ((const Mts__Shim__Request *)m)->image_remove;
	struct shim *s = ctx;
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__ImageRemoveRep rm = MTS__SHIM__IMAGE_REMOVE_REP__INIT;
	struct mts_image_info in;
	char err[512];
	uint32_t users;
	int rc;

	if (image_busy(s, call))
		return;
	if (r->name == NULL || mts_store_get(s->store, r->name, &in) != 0) {
		mts_ipc_reply_error(call, MTS_ERR_NOTFOUND, "no image %s",
		    r->name ? r->name : "");
		return;
	}
	users = image_users(s, in.id);
	mts_image_info_free(&in);
	if (users > 0 && !r->force) {
		mts_ipc_reply_error(call, MTS_ERR_STATE,
		    "image %s is used by %u task(s); remove them first",
		    r->name, users);
		return;
	}
	if ((rc = mts_store_remove(s->store, r->name, err, sizeof(err)))) {
		mts_ipc_reply_error(call, -rc, "%s", err);
		return;
	}
	shim_images_publish(s);
	rep.body_case = MTS__SHIM__REPLY__BODY_IMAGE_REMOVE;
	rep.image_remove = &rm;
	mts_ipc_reply(call, &rep.base);
}

static const struct mts_ipc_route routes[] = {
	{ MTS__SHIM__REQUEST__BODY_RUN, "run", MTS_CALLER_ADMIN, h_run },
	{ MTS__SHIM__REQUEST__BODY_LIST, "list", CALLER_ANY, h_list },
	{ MTS__SHIM__REQUEST__BODY_INSPECT, "inspect", CALLER_ANY, h_inspect },
	{ MTS__SHIM__REQUEST__BODY_STOP, "stop", MTS_CALLER_ADMIN, h_stop },
	{ MTS__SHIM__REQUEST__BODY_REMOVE, "remove", MTS_CALLER_ADMIN,
	    h_remove },
	{ MTS__SHIM__REQUEST__BODY_LOGS, "logs", CALLER_ANY, h_logs },
	{ MTS__SHIM__REQUEST__BODY_EXEC, "exec", CALLER_ANY, h_exec },
	{ MTS__SHIM__REQUEST__BODY_EXEC_START, "exec_start", CALLER_ANY,
	    h_exec_start },
	{ MTS__SHIM__REQUEST__BODY_EXEC_IO, "exec_io", CALLER_ANY, h_exec_io },
	{ MTS__SHIM__REQUEST__BODY_IMAGE_IMPORT, "image_import",
	    MTS_CALLER_ADMIN, h_image_import },
	{ MTS__SHIM__REQUEST__BODY_IMAGE_PULL, "image_pull", MTS_CALLER_ADMIN,
	    h_image_pull },
	{ MTS__SHIM__REQUEST__BODY_IMAGE_LIST, "image_list", MTS_CALLER_ADMIN,
	    h_image_list },
	{ MTS__SHIM__REQUEST__BODY_IMAGE_REMOVE, "image_remove",
	    MTS_CALLER_ADMIN, h_image_remove },
	{ MTS__SHIM__REQUEST__BODY_IMAGE_BLOB, "image_blob", CALLER_ANY,
	    shim_h_image_blob },
};

/* Callers in acl may do everything, those in acl_relay (the gossipd
 * serving other nodes) the remote subset; nobody else anything. */
static const struct mts_acl_rule acl_rules[] = {
	{ MTS_CALLER_ADMIN, MTS_ACL_USERS, "acl" },
	{ MTS_CALLER_REMOTE, MTS_ACL_USERS, "acl_relay" },
	{ 0, 0, NULL },
};

const struct mts_ipc_service shim_service = {
	.name = "shim",
	.request = &mts__shim__request__descriptor,
	.reply = &mts__shim__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.acl = acl_rules,
	.maxmsg = 1u << 20,
};
