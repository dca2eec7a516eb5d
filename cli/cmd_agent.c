/* cmd_agent.c: `mtsctl agent ls|start|stop|restart` — the agents mts-init supervises, over admin.sock. */
#include <stdio.h>
#include <string.h>

#include "admin.pb-c.h"
#include "mtsctl.h"

static const struct mtsctl_col agent_cols[] = {
	{ "name", "NAME" },
	{ "state", "STATE" },
	{ "pid", "PID" },
	{ "user", "USER" },
	{ "restarts", "RESTARTS" },
	{ "uptime", "UPTIME" },
	{ "seccomp", "SECCOMP" },
	{ "last_exit", "LAST EXIT" },
	{ NULL, NULL },
};

static json_t *
agent_json(const Mts__Admin__AgentInfo *a)
{
	char up[32] = "-";
	json_t *o, *after = json_array();
	size_t i;

	if (a->pid != 0 && strcmp(a->state, "up") == 0)
		mtsctl_fmt_duration(up, sizeof(up), a->uptime_ms);
	for (i = 0; i < a->n_after; i++)
		json_array_append_new(after, json_string(a->after[i]));
	o = json_pack("{ss ss sI sI sI ss sI ss sI sb ss ss ss sI so}", "name",
	    a->name, "state", a->state, "pid", (json_int_t)a->pid, "uid",
	    (json_int_t)a->uid, "gid", (json_int_t)a->gid, "user", a->user,
	    "restarts", (json_int_t)a->restarts, "uptime", up, "uptime_ms",
	    (json_int_t)a->uptime_ms, "seccomp_on", a->seccomp, "seccomp",
	    a->seccomp ? "on" : "off", "executable", a->executable,
	    "capabilities", a->capabilities, "next_start_ms",
	    (json_int_t)a->next_start_ms, "after", after);
	json_object_set_new(o, "last_exit",
	    *a->last_exit ? json_string(a->last_exit) : json_null());
	json_object_set_new(o, "status",
	    a->status && *a->status ? json_string(a->status) : json_null());
	if (a->pid == 0)
		json_object_set_new(o, "pid", json_null());
	return o;
}

static int
admin_call(struct mtsctl *ctx, Mts__Admin__Request *req,
    Mts__Admin__Reply **rep, Mts__Admin__Reply__BodyCase want)
{
	int rc = mtsctl_call(ctx, "init", &req->base,
	    &mts__admin__reply__descriptor, (ProtobufCMessage **)rep);

	if (rc == 0 && (*rep)->body_case != want) {
		mtsctl_err("mts-init sent an unexpected reply");
		protobuf_c_message_free_unpacked(&(*rep)->base, NULL);
		*rep = NULL;
		return MTSCTL_EFAIL;
	}
	return rc;
}

/* Under the table: "NAME: status" for each agent that reported one. */
static void
print_statuses(struct mtsctl *ctx, Mts__Admin__AgentInfo **a, size_t n)
{
	size_t i;

	if (ctx->fmt != MTSCTL_FMT_TABLE)
		return;
	for (i = 0; i < n; i++)
		if (a[i]->status && *a[i]->status)
			printf("%s: %s\n", a[i]->name, a[i]->status);
}

static int
cmd_ls(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Admin__Request req = MTS__ADMIN__REQUEST__INIT;
	Mts__Admin__AgentListReq lr = MTS__ADMIN__AGENT_LIST_REQ__INIT;
	Mts__Admin__Reply *rep;
	json_t *rows;
	size_t i;
	int rc;

	if (argc > 1)
		return mtsctl_usage(ctx);
	req.body_case = MTS__ADMIN__REQUEST__BODY_AGENT_LIST;
	req.agent_list = &lr;
	rc = admin_call(ctx, &req, &rep, MTS__ADMIN__REPLY__BODY_AGENT_LIST);
	if (rc != 0)
		return rc;
	rows = json_array();
	for (i = 0; i < rep->agent_list->n_agents; i++)
		json_array_append_new(rows,
		    agent_json(rep->agent_list->agents[i]));
	mtsctl_print_rows(ctx, rows, agent_cols);
	print_statuses(ctx, rep->agent_list->agents, rep->agent_list->n_agents);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
agent_ctl(struct mtsctl *ctx, int argc, char **argv,
    Mts__Admin__AgentCtlReq__Action action)
{
	Mts__Admin__Request req = MTS__ADMIN__REQUEST__INIT;
	Mts__Admin__AgentCtlReq cr = MTS__ADMIN__AGENT_CTL_REQ__INIT;
	Mts__Admin__Reply *rep;
	json_t *rows;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	cr.name = argv[1];
	cr.action = action;
	req.body_case = MTS__ADMIN__REQUEST__BODY_AGENT_CTL;
	req.agent_ctl = &cr;
	rc = admin_call(ctx, &req, &rep, MTS__ADMIN__REPLY__BODY_AGENT_CTL);
	if (rc != 0)
		return rc;
	rows = json_array();
	if (rep->agent_ctl->agent != NULL)
		json_array_append_new(rows, agent_json(rep->agent_ctl->agent));
	mtsctl_print_rows(ctx, rows, agent_cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_start(struct mtsctl *ctx, int argc, char **argv)
{
	return agent_ctl(ctx, argc, argv,
	    MTS__ADMIN__AGENT_CTL_REQ__ACTION__START);
}

static int
cmd_stop(struct mtsctl *ctx, int argc, char **argv)
{
	return agent_ctl(ctx, argc, argv,
	    MTS__ADMIN__AGENT_CTL_REQ__ACTION__STOP);
}

static int
cmd_restart(struct mtsctl *ctx, int argc, char **argv)
{
	return agent_ctl(ctx, argc, argv,
	    MTS__ADMIN__AGENT_CTL_REQ__ACTION__RESTART);
}

static const struct mtsctl_cmd cmds[] = {
	{ "ls", cmd_ls, "", "list the agents and their state",
	    "DESCRIPTION\n"
	    "    Lists every agent of the node's mts.conf as mts-init sees it:\n"
	    "    NAME      the agent's section name in mts.conf\n"
	    "    STATE     down (stopped), waiting (for its dependencies),\n"
	    "              starting (not ready yet), up, stopping, backoff\n"
	    "              (crashed, restart pending), failed (exited with the\n"
	    "              permanent-failure or usage code: not restarted until\n"
	    "              `mtsctl agent start`)\n"
	    "    PID       its process id while one runs\n"
	    "    USER      the user it runs as, as configured\n"
	    "    RESTARTS  automatic restarts since mts-init started\n"
	    "    UPTIME    time since the running process became ready\n"
	    "    SECCOMP   on when a policy is configured and init verified\n"
	    "              that the agent installed it\n"
	    "    LAST EXIT how the previous process ended\n"
	    "    An agent that reported a status (for example a gossipd whose\n"
	    "    node was removed from the cluster) gets a line NAME: STATUS\n"
	    "    under the table (\"status\" in JSON, null when none).\n"
	    "    -o json adds uid, gid, executable, capabilities, after and\n"
	    "    next_start_ms (time until the next restart in backoff).\n"
	    "\nEXAMPLES\n"
	    "    mtsctl agent ls\n"
	    "    mtsctl -o json agent ls\n" },
	{ "start", cmd_start, "NAME", "start an agent that is down or failed",
	    "DESCRIPTION\n"
	    "    Starts the agent NAME (after its dependencies are up). This\n"
	    "    also clears a permanent failure and the restart backoff.\n"
	    "    Prints the agent's line as in `agent ls`; the start itself\n"
	    "    happens asynchronously, watch it with `mtsctl agent ls`.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl agent start statestore\n" },
	{ "stop", cmd_stop, "NAME", "stop an agent and keep it down",
	    "DESCRIPTION\n"
	    "    Stops the agent NAME: SIGTERM to its process group, SIGKILL\n"
	    "    after the configured grace period. Agents that depend on it\n"
	    "    are not stopped. It stays down until `mtsctl agent start`,\n"
	    "    a restart of mts-init or a config reload that changes it.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl agent stop shim\n" },
	{ "restart", cmd_restart, "NAME", "stop an agent and start it again",
	    "DESCRIPTION\n"
	    "    Stops the agent NAME as `agent stop` does, then starts it\n"
	    "    again at once (no backoff). A down or failed agent is simply\n"
	    "    started.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl agent restart statestore\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_agent = { "agent",
	"list, start, stop and restart the node's agents", cmds };
