/* cmd_logs.c: `mtsctl logs [-f] [--tail N] TASK` and `mtsctl exec TASK -- CMD` through shim.sock. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfg.h"
#include "mtsctl.h"
#include "shimctl.h"

#define FOLLOW_POLL_MS 200

static int
cmd_logs(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = {
	    {"follow", no_argument, NULL, 'f'},
	    {"tail", required_argument, NULL, 'n'}, {NULL, 0, NULL, 0}};
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__LogsReq lr = MTS__SHIM__LOGS_REQ__INIT;
	struct timespec pause = {0, FOLLOW_POLL_MS * 1000000L};
	Mts__Shim__Reply *rep;
	int c, rc, follow = 0, done;
	int64_t n;

	while ((c = getopt_long(argc, argv, "fn:", lo, NULL)) != -1) {
		if (c == 'f')
			follow = 1;
		else if (c == 'n' && mts_parse_int(optarg, &n) == 0 && n >= 0 &&
			 n < 1000000)
			lr.tail_lines = (uint32_t)n;
		else
			return mtsctl_usage(ctx);
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	lr.id = argv[optind];
	req.body_case = MTS__SHIM__REQUEST__BODY_LOGS;
	req.logs = &lr;
	for (;;) {
		if ((rc = shimctl_call(ctx, &req, &rep,
			 MTS__SHIM__REPLY__BODY_LOGS, 0)))
			return rc;
		if (rep->logs->data.len > 0)
			fwrite(rep->logs->data.data, 1, rep->logs->data.len,
			    stdout);
		fflush(stdout);
		lr.offset = rep->logs->next_offset;
		lr.tail_lines = 0;
		done = rep->logs->data.len == 0 &&
		    (!follow || rep->logs->finished);
		c = rep->logs->data.len == 0;
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		if (done)
			return 0;
		if (c)
			nanosleep(&pause, NULL);
	}
}

static int
cmd_exec(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = {
	    {"env", required_argument, NULL, 'e'},
	    {"timeout", required_argument, NULL, 'T'}, {NULL, 0, NULL, 0}};
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__ExecReq ex = MTS__SHIM__EXEC_REQ__INIT;
	Mts__Shim__Reply *rep;
	char *env[64];
	int64_t ms;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+e:", lo, NULL)) != -1) {
		if (c == 'e' && ex.n_env < 64)
			env[ex.n_env++] = optarg;
		else if (c == 'T' && mts_parse_duration(optarg, &ms) == 0 &&
			 ms > 0 && ms < 86400000)
			ex.timeout_ms = (uint32_t)ms;
		else
			return mtsctl_usage(ctx);
	}
	if (argc - optind < 2)
		return mtsctl_usage(ctx);
	ex.id = argv[optind++];
	if (strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return mtsctl_usage(ctx);
	ex.args = argv + optind;
	ex.n_args = (size_t)(argc - optind);
	ex.env = env;
	req.body_case = MTS__SHIM__REQUEST__BODY_EXEC;
	req.exec = &ex;
	if ((rc = shimctl_call(ctx, &req, &rep, MTS__SHIM__REPLY__BODY_EXEC,
		 (ex.timeout_ms ? (int)ex.timeout_ms : 60000) + 5000)))
		return rc;
	if (rep->exec->output.len > 0)
		fwrite(rep->exec->output.data, 1, rep->exec->output.len, stdout);
	if (rep->exec->truncated)
		mtsctl_err("output truncated");
	rc = rep->exec->exit_code;
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return rc;
}

static const struct mtsctl_cmd logs_cmds[] = {
	{NULL, cmd_logs, "[-f] [--tail N] TASK", "print a task's output",
	    "DESCRIPTION\n"
	    "    Prints what TASK wrote to stdout and stderr (kept in rotated\n"
	    "    files by the shim).\n\n"
	    "OPTIONS\n"
	    "    -f, --follow      keep printing new output until the task ends\n"
	    "    -n, --tail N      start with the last N lines\n"},
	{NULL, NULL, NULL, NULL, NULL},
};

static const struct mtsctl_cmd exec_cmds[] = {
	{NULL, cmd_exec, "[-e KEY=VALUE] [--timeout DUR] TASK -- COMMAND...",
	    "run a command in a running task",
	    "DESCRIPTION\n"
	    "    Runs COMMAND inside TASK's container (same namespaces,\n"
	    "    capabilities and limits), prints its output and exits with\n"
	    "    its exit code. No terminal is attached and stdin is empty.\n\n"
	    "OPTIONS\n"
	    "    -e, --env KEY=VALUE   extra environment (repeatable)\n"
	    "    --timeout DUR         kill the command after DUR (default 60s)\n"},
	{NULL, NULL, NULL, NULL, NULL},
};

const struct mtsctl_group mtsctl_group_logs = {
	.name = "logs",
	.summary = "a task's output",
	.cmds = logs_cmds,
};

const struct mtsctl_group mtsctl_group_exec = {
	.name = "exec",
	.summary = "run a command in a task",
	.cmds = exec_cmds,
};
