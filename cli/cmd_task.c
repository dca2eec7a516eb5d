/* cmd_task.c: `mtsctl task run|ls|inspect|stop|rm` — one-off local containers through shim.sock. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "mtsctl.h"
#include "shim.pb-c.h"
#include "shimctl.h"
#include "xmalloc.h"

int
shimctl_call(struct mtsctl *ctx, Mts__Shim__Request *req,
    Mts__Shim__Reply **rep, Mts__Shim__Reply__BodyCase want, int min_tmo)
{
	int saved = ctx->timeout_ms, rc;

	if (ctx->timeout_ms < min_tmo)
		ctx->timeout_ms = min_tmo;
	rc = mtsctl_call(ctx, "shim", &req->base, &mts__shim__reply__descriptor,
	    (ProtobufCMessage **)rep);
	ctx->timeout_ms = saved;
	if (rc == 0 && (*rep)->body_case != want) {
		mtsctl_err("shim sent an unexpected reply");
		protobuf_c_message_free_unpacked(&(*rep)->base, NULL);
		*rep = NULL;
		return MTSCTL_EFAIL;
	}
	return rc;
}

static json_t *
strv_json(char **v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *
task_json(const Mts__Shim__TaskStatus *t)
{
	const Mts__Shim__TaskSpec *sp = t->spec;
	json_t *o = json_pack("{ss ss ss sI sI sb ss sI sI sI sI ss ss ss}",
	    "id", t->id, "state", t->state, "desired", t->desired, "exit_code",
	    (json_int_t)t->exit_code, "signal", (json_int_t)t->signal,
	    "oom_killed", t->oom_killed, "health", t->health, "restarts",
	    (json_int_t)t->restarts, "pid", (json_int_t)t->pid, "started_at",
	    (json_int_t)t->started_at, "finished_at",
	    (json_int_t)t->finished_at, "error", t->error, "image_id",
	    t->image_id, "rootfs", t->rootfs);

	json_object_set_new(o, "health_output",
	    json_string(t->last_health_output));
	/* ended while the node was down, waiting for reconciled's word */
	json_object_set_new(o, "held", json_boolean(t->held));
	/* the tables' EXIT: "-" while the task has none (exit_code -1) */
	json_object_set_new(o, "exit",
	    t->exit_code < 0 ? json_string("-")
	                     : json_sprintf("%d", (int)t->exit_code));
	if (sp != NULL) {
		json_object_set_new(o, "image", json_string(sp->image));
		json_object_set_new(o, "command",
		    strv_json(sp->command, sp->n_command));
		json_object_set_new(o, "entrypoint",
		    strv_json(sp->entrypoint, sp->n_entrypoint));
		json_object_set_new(o, "service", json_string(sp->service));
		json_object_set_new(o, "memory_limit",
		    json_integer((json_int_t)sp->memory_limit));
		json_object_set_new(o, "cpu_millis",
		    json_integer((json_int_t)sp->cpu_millis));
		json_object_set_new(o, "read_only",
		    json_boolean(sp->read_only));
		/* Values only from the node running the task; elsewhere (a
		 * relayed reply) the names alone. */
		json_object_set_new(o, "env",
		    sp->n_env ? strv_json(sp->env, sp->n_env)
		              : strv_json(sp->env_names, sp->n_env_names));
		json_object_set_new(o, "restart_policy",
		    json_string(sp->restart && sp->restart->condition
		            ? sp->restart->condition
		            : "none"));
	}
	return o;
}

static const struct mtsctl_col task_cols[] = {
	{ "id", "ID" },
	{ "image", "IMAGE" },
	{ "state", "STATE" },
	{ "exit", "EXIT" },
	{ "health", "HEALTH" },
	{ "restarts", "RESTARTS" },
	{ "pid", "PID" },
	{ NULL, NULL },
};

static const struct mtsctl_col inspect_cols[] = {
	{ "id", "id:" },
	{ "image", "image:" },
	{ "image_id", "image id:" },
	{ "state", "state:" },
	{ "desired", "desired:" },
	{ "exit", "exit code:" },
	{ "signal", "signal:" },
	{ "oom_killed", "oom killed:" },
	{ "health", "health:" },
	{ "health_output", "health output:" },
	{ "restarts", "restarts:" },
	{ "restart_policy", "restart policy:" },
	{ "env", "env:" },
	{ "pid", "pid:" },
	{ "started_at", "started at:" },
	{ "finished_at", "finished at:" },
	{ "rootfs", "rootfs:" },
	{ "error", "error:" },
	{ NULL, NULL },
};

/* Options of `task run`, gathered before the spec is built. */
struct run_opts {
	Mts__Shim__TaskSpec sp;
	Mts__Shim__RestartPolicy rp;
	Mts__Shim__HealthCheck hc;
	char *hc_test[3];
	char **env, **dns, **dns_search;
	Mts__Shim__Mount *mounts, **mptrs;
	char *ep[1];
	char *restart; /* owned copy behind rp.condition */
};

static int
parse_ms(const char *opt, const char *v, uint32_t *out)
{
	int64_t ms;

	if (mts_parse_duration(v, &ms) != 0 || ms < 0 || ms > 0xffffffffLL) {
		mtsctl_err("%s %s: expected a duration like 500ms, 10s, 2m",
		    opt, v);
		return -1;
	}
	*out = (uint32_t)ms;
	return 0;
}

static int
parse_u32(const char *opt, const char *v, uint32_t *out)
{
	int64_t n;

	if (mts_parse_int(v, &n) != 0 || n < 0 || n > 0xffffffffLL) {
		mtsctl_err("%s %s: expected a non-negative number", opt, v);
		return -1;
	}
	*out = (uint32_t)n;
	return 0;
}

/* SRC:DST[:ro] as a bind mount. */
static int
add_mount(struct run_opts *o, const char *v)
{
	char *s = xstrdup(v), *dst = strchr(s, ':'), *mode;
	Mts__Shim__Mount *m;

	if (dst == NULL || s[0] != '/' || dst[1] != '/') {
		mtsctl_err("--mount %s: expected /SRC:/DST[:ro]", v);
		free(s);
		return -1;
	}
	*dst++ = '\0';
	mode = strchr(dst, ':');
	if (mode != NULL)
		*mode++ = '\0';
	o->mounts =
	    xreallocarray(o->mounts, o->sp.n_mounts + 1, sizeof(*o->mounts));
	m = &o->mounts[o->sp.n_mounts++];
	mts__shim__mount__init(m);
	m->source = s;
	m->destination = dst;
	m->type = "bind";
	if (mode != NULL && strcmp(mode, "ro") == 0) {
		m->options = xcalloc(3, sizeof(char *));
		m->options[0] = "rbind";
		m->options[1] = "ro";
		m->n_options = 2;
	}
	return 0;
}

enum {
	O_NAME = 256,
	O_ENTRY,
	O_HOST,
	O_RO,
	O_CPU,
	O_PIDS,
	O_RESTART,
	O_RDELAY,
	O_RMAX,
	O_GRACE,
	O_HCMD,
	O_HSHELL,
	O_HHTTP,
	O_HTCP,
	O_HINT,
	O_HTMO,
	O_HRET,
	O_HSTART,
	O_NETNS,
	O_MOUNT,
	O_NOFILE,
	O_DNS,
	O_DNS_SEARCH,
};

static const struct option run_lo[] = {
	{ "name", required_argument, NULL, O_NAME },
	{ "env", required_argument, NULL, 'e' },
	{ "workdir", required_argument, NULL, 'w' },
	{ "user", required_argument, NULL, 'u' },
	{ "memory", required_argument, NULL, 'm' },
	{ "entrypoint", required_argument, NULL, O_ENTRY },
	{ "hostname", required_argument, NULL, O_HOST },
	{ "read-only", no_argument, NULL, O_RO },
	{ "cpu-millis", required_argument, NULL, O_CPU },
	{ "pids-limit", required_argument, NULL, O_PIDS },
	{ "nofile", required_argument, NULL, O_NOFILE },
	{ "restart", required_argument, NULL, O_RESTART },
	{ "restart-delay", required_argument, NULL, O_RDELAY },
	{ "restart-max-delay", required_argument, NULL, O_RMAX },
	{ "stop-grace", required_argument, NULL, O_GRACE },
	{ "health-cmd", required_argument, NULL, O_HSHELL },
	{ "health-exec", required_argument, NULL, O_HCMD },
	{ "health-http", required_argument, NULL, O_HHTTP },
	{ "health-tcp", required_argument, NULL, O_HTCP },
	{ "health-interval", required_argument, NULL, O_HINT },
	{ "health-timeout", required_argument, NULL, O_HTMO },
	{ "health-retries", required_argument, NULL, O_HRET },
	{ "health-start-period", required_argument, NULL, O_HSTART },
	{ "netns", required_argument, NULL, O_NETNS },
	{ "mount", required_argument, NULL, O_MOUNT },
	{ "dns", required_argument, NULL, O_DNS },
	{ "dns-search", required_argument, NULL, O_DNS_SEARCH },
	{ NULL, 0, NULL, 0 },
};

static int
set_health(struct run_opts *o, const char *kind, const char *arg)
{
	o->hc_test[0] = (char *)kind;
	o->hc_test[1] = (char *)arg;
	o->hc.test = o->hc_test;
	o->hc.n_test = 2;
	o->sp.health = &o->hc;
	return 0;
}

static int
set_restart(struct run_opts *o, const char *v)
{
	char *c = xstrdup(v), *colon = strchr(c, ':');

	if (colon != NULL) {
		*colon++ = '\0';
		if (parse_u32("--restart", colon, &o->rp.max_attempts)) {
			free(c);
			return -1;
		}
	}
	if (strcmp(c, "none") && strcmp(c, "on-failure") && strcmp(c, "any") &&
	    strcmp(c, "always")) {
		mtsctl_err("--restart %s: expected none, on-failure[:N] or any",
		    v);
		free(c);
		return -1;
	}
	free(o->restart);
	o->restart = c;
	o->rp.condition = c;
	o->sp.restart = &o->rp;
	return 0;
}

static int
run_opt(struct run_opts *o, int c, const char *v)
{
	int64_t n;

	switch (c) {
	case O_NAME:
		o->sp.id = (char *)v;
		return 0;
	case 'w':
		o->sp.cwd = (char *)v;
		return 0;
	case 'u':
		o->sp.user = (char *)v;
		return 0;
	case O_HOST:
		o->sp.hostname = (char *)v;
		return 0;
	case O_RO:
		o->sp.read_only = 1;
		return 0;
	case O_NETNS:
		o->sp.netns = (char *)v;
		return 0;
	case O_MOUNT:
		return add_mount(o, v);
	case O_DNS:
		o->dns = xreallocarray(o->dns, o->sp.n_dns + 1, sizeof(char *));
		o->dns[o->sp.n_dns++] = (char *)v;
		o->sp.dns = o->dns;
		return 0;
	case O_DNS_SEARCH:
		o->dns_search = xreallocarray(o->dns_search,
		    o->sp.n_dns_search + 1, sizeof(char *));
		o->dns_search[o->sp.n_dns_search++] = (char *)v;
		o->sp.dns_search = o->dns_search;
		return 0;
	case O_ENTRY:
		o->ep[0] = (char *)v;
		o->sp.entrypoint = o->ep;
		o->sp.n_entrypoint = 1;
		return 0;
	case 'e':
		o->env = xreallocarray(o->env, o->sp.n_env + 1, sizeof(char *));
		o->env[o->sp.n_env++] = (char *)v;
		o->sp.env = o->env;
		return 0;
	case 'm':
		if (mts_parse_size(v, &n) != 0 || n <= 0) {
			mtsctl_err("--memory %s: expected a size like 64M", v);
			return -1;
		}
		o->sp.memory_limit = (uint64_t)n;
		return 0;
	case O_CPU:
		return parse_u32("--cpu-millis", v, &o->sp.cpu_millis);
	case O_PIDS:
		/* "max" as in pids.max: no limit, not even the node's default */
		if (strcmp(v, "max") == 0) {
			o->sp.pids_limit = 0xffffffffu;
			return 0;
		}
		if (parse_u32("--pids-limit", v, &o->sp.pids_limit) != 0)
			return -1;
		if (o->sp.pids_limit == 0 || o->sp.pids_limit == 0xffffffffu) {
			mtsctl_err("--pids-limit %s: expected 1 to 4294967294 or "
			           "max",
			    v);
			return -1;
		}
		return 0;
	case O_NOFILE:
		if (mts_parse_int(v, &n) != 0 || n <= 0) {
			mtsctl_err("--nofile %s: expected a positive number",
			    v);
			return -1;
		}
		o->sp.nofile = (uint64_t)n;
		return 0;
	case O_RESTART:
		return set_restart(o, v);
	case O_RDELAY:
		return parse_ms("--restart-delay", v, &o->rp.delay_ms);
	case O_RMAX:
		return parse_ms("--restart-max-delay", v, &o->rp.max_delay_ms);
	case O_GRACE:
		return parse_ms("--stop-grace", v, &o->sp.stop_grace_ms);
	case O_HSHELL:
		return set_health(o, "CMD-SHELL", v);
	case O_HCMD:
		return set_health(o, "CMD", v);
	case O_HHTTP:
		return set_health(o, "HTTP", v);
	case O_HTCP:
		return set_health(o, "TCP", v);
	case O_HINT:
		return parse_ms("--health-interval", v, &o->hc.interval_ms);
	case O_HTMO:
		return parse_ms("--health-timeout", v, &o->hc.timeout_ms);
	case O_HRET:
		return parse_u32("--health-retries", v, &o->hc.retries);
	case O_HSTART:
		return parse_ms("--health-start-period", v,
		    &o->hc.start_period_ms);
	default:
		return -1;
	}
}

static void
run_opts_free(struct run_opts *o)
{
	size_t i;

	for (i = 0; i < o->sp.n_mounts; i++) {
		free(o->mounts[i].source);
		free(o->mounts[i].options);
	}
	free(o->mounts);
	free(o->mptrs);
	free(o->env);
	free(o->dns);
	free(o->dns_search);
	free(o->restart);
}

static int
cmd_run(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskRunReq run = MTS__SHIM__TASK_RUN_REQ__INIT;
	Mts__Shim__Reply *rep;
	struct run_opts o;
	const char *last = NULL; /* the last option's value */
	size_t i;
	int c, rc = MTSCTL_EUSAGE;

	memset(&o, 0, sizeof(o));
	mts__shim__task_spec__init(&o.sp);
	mts__shim__restart_policy__init(&o.rp);
	mts__shim__health_check__init(&o.hc);
	while ((c = getopt_long(argc, argv, "+e:w:u:m:", run_lo, NULL)) != -1) {
		last = optarg;
		if (run_opt(&o, c, optarg) != 0)
			goto out;
	}
	if (mtsctl_dashdash_ended(argv, optind, last)) {
		mtsctl_err("task run: IMAGE is missing: it comes before \"--\" "
		           "(task run [OPTIONS] IMAGE [-- COMMAND...])");
		goto out;
	}
	if (optind >= argc) {
		rc = mtsctl_usage(ctx);
		goto out;
	}
	o.sp.image = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	o.sp.command = argv + optind;
	o.sp.n_command = (size_t)(argc - optind);
	o.mptrs = xcalloc(o.sp.n_mounts + 1, sizeof(*o.mptrs));
	for (i = 0; i < o.sp.n_mounts; i++)
		o.mptrs[i] = &o.mounts[i];
	o.sp.mounts = o.mptrs;
	run.spec = &o.sp;
	req.body_case = MTS__SHIM__REQUEST__BODY_RUN;
	req.run = &run;
	/* the shim fetches an image it lacks first (from its registry or
	 * from other nodes) */
	if ((rc = shimctl_call(ctx, &req, &rep, MTS__SHIM__REPLY__BODY_RUN,
	         10 * 60000)) != 0)
		goto out;
	if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx, task_json(rep->run->task), inspect_cols);
	else
		printf("%s\n", rep->run->task->id);
	if (strcmp(rep->run->task->state, "failed") == 0 &&
	    rep->run->task->error[0] != '\0') {
		mtsctl_err("task %s failed to start: %s", rep->run->task->id,
		    rep->run->task->error);
		rc = MTSCTL_EFAIL;
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
out:
	run_opts_free(&o);
	return rc;
}

static int
cmd_ls(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskListReq ls = MTS__SHIM__TASK_LIST_REQ__INIT;
	Mts__Shim__Reply *rep;
	json_t *rows;
	size_t i;
	int rc;

	if (argc != 1)
		return mtsctl_usage(ctx);
	req.body_case = MTS__SHIM__REQUEST__BODY_LIST;
	req.list = &ls;
	if ((rc = shimctl_call(ctx, &req, &rep, MTS__SHIM__REPLY__BODY_LIST,
	         0)))
		return rc;
	rows = json_array();
	for (i = 0; i < rep->list->n_tasks; i++)
		json_array_append_new(rows, task_json(rep->list->tasks[i]));
	mtsctl_print_rows(ctx, rows, task_cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_inspect(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskInspectReq in = MTS__SHIM__TASK_INSPECT_REQ__INIT;
	Mts__Shim__Reply *rep;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	in.id = argv[1];
	req.body_case = MTS__SHIM__REQUEST__BODY_INSPECT;
	req.inspect = &in;
	if ((rc = shimctl_call(ctx, &req, &rep, MTS__SHIM__REPLY__BODY_INSPECT,
	         0)))
		return rc;
	mtsctl_print_obj(ctx, task_json(rep->inspect->task), inspect_cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_stop(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "grace", required_argument, NULL, 'g' }, { NULL, 0, NULL, 0 }
	};
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskStopReq st = MTS__SHIM__TASK_STOP_REQ__INIT;
	Mts__Shim__Reply *rep;
	int c, rc;

	while ((c = getopt_long(argc, argv, "g:", lo, NULL)) != -1) {
		if (c != 'g' || parse_ms("--grace", optarg, &st.grace_ms))
			return MTSCTL_EUSAGE;
		st.has_grace = 1;
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	st.id = argv[optind];
	req.body_case = MTS__SHIM__REQUEST__BODY_STOP;
	req.stop = &st;
	/* The reply comes when the task has stopped: wait past the grace. */
	if ((rc = shimctl_call(ctx, &req, &rep, MTS__SHIM__REPLY__BODY_STOP,
	         (st.has_grace ? (int)st.grace_ms : 10000) + 30000)))
		return rc;
	if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx, task_json(rep->stop->task), inspect_cols);
	else
		printf("%s %s (exit code %d)\n", rep->stop->task->id,
		    rep->stop->task->state, rep->stop->task->exit_code);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_rm(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = { { "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 } };
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskRemoveReq rm = MTS__SHIM__TASK_REMOVE_REQ__INIT;
	Mts__Shim__Reply *rep;
	int c, rc;

	while ((c = getopt_long(argc, argv, "f", lo, NULL)) != -1) {
		if (c != 'f')
			return mtsctl_usage(ctx);
		rm.force = 1;
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	rm.id = argv[optind];
	req.body_case = MTS__SHIM__REQUEST__BODY_REMOVE;
	req.remove = &rm;
	if ((rc = shimctl_call(ctx, &req, &rep, MTS__SHIM__REPLY__BODY_REMOVE,
	         0)))
		return rc;
	if (ctx->fmt == MTSCTL_FMT_JSON) /* a table prints nothing */
		mtsctl_print_obj(ctx, json_pack("{ss}", "removed", rm.id),
		    NULL);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static const struct mtsctl_cmd cmds[] = {
	{ "run", cmd_run, "[OPTIONS] IMAGE [-- COMMAND...]",
	    "run a one-off container on this node",
	    "DESCRIPTION\n"
	    "    Starts a container from IMAGE (imported or pulled on this\n"
	    "    node) and prints its task id once it runs. COMMAND replaces\n"
	    "    the image's Cmd.\n\n"
	    "OPTIONS\n"
	    "    --name ID                 task id (default: random)\n"
	    "    -e, --env KEY=VALUE       environment (repeatable)\n"
	    "    -w, --workdir DIR         working directory\n"
	    "    -u, --user USER[:GROUP]   user (name from the image, or uid)\n"
	    "    --entrypoint CMD          replaces the image's Entrypoint\n"
	    "    --hostname NAME           (default: the task id)\n"
	    "    --read-only               read-only root file system\n"
	    "    -m, --memory SIZE         memory limit (OOM kill beyond)\n"
	    "    --cpu-millis N            CPU limit, 1000 = one CPU\n"
	    "    --pids-limit N|max        process limit (default: the node's\n"
	    "                              [shim] default_pids_limit)\n"
	    "    --nofile N                RLIMIT_NOFILE\n"
	    "    --mount /SRC:/DST[:ro]    bind mount (repeatable)\n"
	    "    --netns PATH              join this network namespace\n"
	    "    --dns IP                  a nameserver of the task's\n"
	    "                              /etc/resolv.conf (repeat, up to 3)\n"
	    "    --dns-search DOMAIN       a search domain of it (repeat)\n"
	    "    --restart none|on-failure[:N]|any[:N]\n"
	    "    --restart-delay DUR       first restart delay (doubles)\n"
	    "    --restart-max-delay DUR   cap of the restart delay\n"
	    "    --stop-grace DUR          SIGTERM to SIGKILL (default 10s)\n"
	    "    --health-cmd SHELLCMD     health probe run with /bin/sh -c\n"
	    "    --health-exec PROGRAM     health probe program\n"
	    "    --health-http URL         e.g. http://127.0.0.1:80/ (2xx/3xx)\n"
	    "    --health-tcp PORT         TCP connect to 127.0.0.1:PORT\n"
	    "    --health-interval DUR, --health-timeout DUR,\n"
	    "    --health-retries N, --health-start-period DUR\n" },
	{ "ls", cmd_ls, "", "list this node's tasks",
	    "DESCRIPTION\n    Lists the tasks the local shim runs or ran.\n" },
	{ "inspect", cmd_inspect, "TASK", "show a task's state in detail",
	    "DESCRIPTION\n"
	    "    State, exit code, signal, OOM kill, health, restarts and the\n"
	    "    last error of TASK.\n" },
	{ "stop", cmd_stop, "[--grace DUR] TASK", "stop a task",
	    "DESCRIPTION\n"
	    "    Sends SIGTERM, then SIGKILL after the grace period (the\n"
	    "    task's, or --grace), and returns once the task stopped.\n" },
	{ "rm", cmd_rm, "[-f] TASK", "remove a stopped task",
	    "DESCRIPTION\n"
	    "    Removes TASK's container, root file system and logs. -f kills\n"
	    "    a running task first.\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_task = {
	.name = "task",
	.summary = "containers on this node (through the shim)",
	.cmds = cmds,
};
