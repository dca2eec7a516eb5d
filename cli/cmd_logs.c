/* cmd_logs.c: `mtsctl logs [-f] [--tail N] [--node NODE] TASK` — a task's output from its shim, on this node or another one through the relay. */
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
	    {"tail", required_argument, NULL, 'n'},
	    {"node", required_argument, NULL, 'N'}, {NULL, 0, NULL, 0}};
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__LogsReq lr = MTS__SHIM__LOGS_REQ__INIT;
	struct timespec pause = {0, FOLLOW_POLL_MS * 1000000L};
	struct shimctl_target tg;
	const char *node = NULL;
	Mts__Shim__Reply *rep;
	int c, rc, follow = 0, done;
	int64_t n;

	while ((c = getopt_long(argc, argv, "fn:", lo, NULL)) != -1) {
		if (c == 'f')
			follow = 1;
		else if (c == 'n' && mts_parse_int(optarg, &n) == 0 && n >= 0 &&
			 n < 1000000)
			lr.tail_lines = (uint32_t)n;
		else if (c == 'N')
			node = optarg;
		else
			return mtsctl_usage(ctx);
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	lr.id = argv[optind];
	if ((rc = shimctl_locate(ctx, lr.id, node, &tg)) != 0)
		return rc;
	req.body_case = MTS__SHIM__REQUEST__BODY_LOGS;
	req.logs = &lr;
	for (;;) {
		if ((rc = shimctl_call_at(ctx, &tg, &req, &rep,
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

static const struct mtsctl_cmd logs_cmds[] = {
	{NULL, cmd_logs, "[-f] [--tail N] [--node NODE] TASK",
	    "print a task's output",
	    "DESCRIPTION\n"
	    "    Prints what TASK wrote to stdout and stderr (kept in rotated\n"
	    "    files by the shim of the node running it). A task this node's\n"
	    "    shim does not have is looked up in the replicated\n"
	    "    t/<node>/<task> records and read from its node through the\n"
	    "    local gossipd's relay.\n\n"
	    "OPTIONS\n"
	    "    -f, --follow      keep printing new output until the task ends\n"
	    "    -n, --tail N      start with the last N lines\n"
	    "    --node NODE       ask this node (a member's name or id prefix)\n"
	    "                      instead of looking the task up\n\n"
	    "EXIT STATUS\n"
	    "    0 done, 3 the task's node is unreachable, 4 permission denied\n"
	    "    (here, by the relay, or by the remote shim), 5 no such task\n"
	    "    on any node.\n"},
	{NULL, NULL, NULL, NULL, NULL},
};

const struct mtsctl_group mtsctl_group_logs = {
	.name = "logs",
	.summary = "a task's output",
	.cmds = logs_cmds,
};
