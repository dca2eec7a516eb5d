/* init_admin.c: mts-init's admin socket (admin.sock) — who may call it, agent list/start/stop/restart, version, reload. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "admin.pb-c.h"
#include "agent.h"
#include "init.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

/* Fills info for agent i; strings point into init's memory. */
static void
fill_info(struct init *in, size_t i, Mts__Admin__AgentInfo *info)
{
	const struct mts_sup *s = &in->core.s[i];
	const struct init_rt *rt = &in->rt[i];
	mts_time_t now = mts_now();
	size_t n;

	mts__admin__agent_info__init(info);
	info->name = (char *)s->name;
	info->state = (char *)mts_sup_state_name(s->st);
	info->pid = rt->pid > 0 ? (uint32_t)rt->pid : 0;
	info->restarts = s->restarts;
	info->uptime_ms = s->st == SUP_UP ? (uint64_t)(now - s->ready_at) : 0;
	info->seccomp = rt->seccomp_on;
	info->last_exit = (char *)rt->last_exit;
	info->status = (char *)rt->status;
	info->next_start_ms = s->st == SUP_BACKOFF && s->deadline > now
	    ? (uint64_t)(s->deadline - now)
	    : 0;
	if (rt->conf == NULL)
		return;
	info->uid = rt->conf->uid;
	info->gid = rt->conf->gid;
	info->user = rt->conf->user;
	info->executable = rt->conf->exec;
	info->capabilities = rt->conf->caps_text;
	for (n = 0; rt->conf->after[n]; n++)
		;
	info->n_after = n;
	info->after = rt->conf->after;
}

static void
h_version(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct init *in = ctx;
	Mts__Admin__Reply rep = MTS__ADMIN__REPLY__INIT;
	Mts__Admin__VersionRep v = MTS__ADMIN__VERSION_REP__INIT;

	v.version = MTS_VERSION;
	v.node = in->conf->node;
	v.uptime_ms = mts_now() - in->started;
	v.pid = getpid();
	v.config = (char *)in->config_path;
	rep.body_case = MTS__ADMIN__REPLY__BODY_VERSION_REP;
	rep.version_rep = &v;
	mts_ipc_reply(call, &rep.base);
}

static void
h_list(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct init *in = ctx;
	Mts__Admin__Reply rep = MTS__ADMIN__REPLY__INIT;
	Mts__Admin__AgentListRep l = MTS__ADMIN__AGENT_LIST_REP__INIT;
	Mts__Admin__AgentInfo *infos, **ptrs;
	size_t i, n = 0;

	infos = xcalloc(in->core.n + 1, sizeof(*infos));
	ptrs = xcalloc(in->core.n + 1, sizeof(*ptrs));
	for (i = 0; i < in->core.n; i++) {
		if (in->core.s[i].removed && in->rt[i].pid == 0)
			continue;
		fill_info(in, i, &infos[n]);
		ptrs[n] = &infos[n];
		n++;
	}
	l.agents = ptrs;
	l.n_agents = n;
	rep.body_case = MTS__ADMIN__REPLY__BODY_AGENT_LIST;
	rep.agent_list = &l;
	mts_ipc_reply(call, &rep.base);
	free(ptrs);
	free(infos);
}

static void
h_ctl(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Admin__AgentCtlReq *req =
	    ((const Mts__Admin__Request *)m)->agent_ctl;
	static const enum mts_sup_event ev[] = { SEV_START, SEV_STOP,
		SEV_RESTART };
	static const char *const what[] = { "start", "stop", "restart" };
	struct init *in = ctx;
	Mts__Admin__Reply rep = MTS__ADMIN__REPLY__INIT;
	Mts__Admin__AgentCtlRep c = MTS__ADMIN__AGENT_CTL_REP__INIT;
	Mts__Admin__AgentInfo info;
	int i = init_find(in, req->name);

	if (i < 0) {
		mts_ipc_reply_error(call, MTS_ERR_NOTFOUND,
		    "no agent named '%s'", req->name);
		return;
	}
	if ((unsigned)req->action > 2) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL, "unknown action %d",
		    req->action);
		return;
	}
	if (in->core.shutting_down) {
		mts_ipc_reply_error(call, MTS_ERR_STATE,
		    "mts-init is shutting down");
		return;
	}
	log_info("agent %s: %s asked by uid %u", req->name, what[req->action],
	    (unsigned)mts_ipc_call_uid(call));
	init_event(in, (size_t)i, ev[req->action]);
	fill_info(in, (size_t)i, &info);
	c.agent = &info;
	rep.body_case = MTS__ADMIN__REPLY__BODY_AGENT_CTL;
	rep.agent_ctl = &c;
	mts_ipc_reply(call, &rep.base);
}

static void
h_reload(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct init *in = ctx;
	Mts__Admin__Reply rep = MTS__ADMIN__REPLY__INIT;
	Mts__Admin__ReloadRep r = MTS__ADMIN__RELOAD_REP__INIT;
	char **re = NULL, **add = NULL, **rm = NULL, err[1024];

	if (init_reload(in, &re, &add, &rm, err, sizeof(err)) < 0) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL, "%s", err);
		return;
	}
	for (r.restarted = re; re[r.n_restarted]; r.n_restarted++)
		;
	for (r.added = add; add[r.n_added]; r.n_added++)
		;
	for (r.removed = rm; rm[r.n_removed]; r.n_removed++)
		;
	rep.body_case = MTS__ADMIN__REPLY__BODY_RELOAD;
	rep.reload = &r;
	mts_ipc_reply(call, &rep.base);
	mts_cfg_list_free(re);
	mts_cfg_list_free(add);
	mts_cfg_list_free(rm);
}

static const struct mts_ipc_route routes[] = {
	{ MTS__ADMIN__REQUEST__BODY_VERSION_REQ, "version", MTS_CALLER_ADMIN,
	    h_version },
	{ MTS__ADMIN__REQUEST__BODY_AGENT_LIST, "agent-list", MTS_CALLER_ADMIN,
	    h_list },
	{ MTS__ADMIN__REQUEST__BODY_AGENT_CTL, "agent-ctl", MTS_CALLER_ADMIN,
	    h_ctl },
	{ MTS__ADMIN__REQUEST__BODY_RELOAD, "reload", MTS_CALLER_ADMIN,
	    h_reload },
};

static const struct mts_ipc_service svc = {
	.name = "admin",
	.request = &mts__admin__request__descriptor,
	.reply = &mts__admin__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.acl = mts_init_admin_acl,
	.maxmsg = 64 << 10,
};

int
init_admin_open(struct init *in, char *err, size_t errlen)
{
	char path[512];

	if (mts_ipc_sock_path(path, sizeof(path), in->conf->rundir, "init",
	        NULL) < 0) {
		snprintf(err, errlen, "%s/init/admin.sock: path too long",
		    in->conf->rundir);
		return -1;
	}
	in->admin = mts_ipc_server_open(path, &svc, in, err, errlen);
	if (in->admin == NULL)
		return -1;
	mts_ipc_server_set_acl(in->admin, &in->conf->admin_acl);
	if (chown(path, 0, in->conf->admin_gid) < 0 || chmod(path, 0660) < 0) {
		snprintf(err, errlen, "%s: cannot set owner and mode", path);
		return -1;
	}
	return 0;
}
