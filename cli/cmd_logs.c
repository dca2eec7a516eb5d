/* cmd_logs.c: `mtsctl logs [-f] [--tail N] [--node NODE] TASK` — a task's output from its shim, on this node or another one through the relay. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cfg.h"
#include "mtsctl.h"
#include "shimctl.h"

#define FOLLOW_POLL_MS 200
/* A JSON line longer than this is cut (and continued in the next object). */
#define JSON_LINE_MAX (1u << 20)

/* What logs prints: the bytes as they are, or (-o json) one object per
 * line. */
struct logs_out {
	const struct mtsctl *ctx;
	const char *task;
	struct mts_buf line; /* the current line so far (JSON) */
	uint64_t line_off;   /* its offset in the task's output */
};

static void
emit_line(struct logs_out *lo, int partial)
{
	json_t *o = json_pack("{ss sI}", "task", lo->task, "offset",
	    (json_int_t)lo->line_off);

	mtsctl_json_set_bytes(lo->ctx, o, "line", lo->line.data, lo->line.len);
	if (partial)
		json_object_set_new(o, "partial", json_true());
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	json_decref(o);
	lo->line_off += lo->line.len + (partial ? 0 : 1);
	mts_buf_reset(&lo->line);
}

/* Output bytes that start at offset off of the task's output. */
static void
logs_write(struct logs_out *lo, const uint8_t *p, size_t len, uint64_t off)
{
	size_t i;

	if (lo->ctx->fmt != MTSCTL_FMT_JSON) {
		fwrite(p, 1, len, stdout);
		return;
	}
	if (lo->line.len == 0)
		lo->line_off = off;
	for (i = 0; i < len; i++) {
		if (p[i] == '\n') {
			emit_line(lo, 0);
			continue;
		}
		mts_buf_put(&lo->line, p + i, 1);
		if (lo->line.len >= JSON_LINE_MAX)
			emit_line(lo, 1);
	}
}

/* The end: a last line without its newline is printed as partial. */
static void
logs_finish(struct logs_out *lo)
{
	if (lo->line.len > 0)
		emit_line(lo, 1);
	fflush(stdout);
	mts_buf_free(&lo->line);
}

/*
 * Reads from lr's offset (or tail) to the current end, then, with follow,
 * until the task ends. skip: discard what is there now (--tail 0: the
 * reads start at the last line and move to the end without printing).
 */
static int
logs_loop(struct mtsctl *ctx, struct shimctl_target *tg, Mts__Shim__LogsReq *lr,
    int follow, int skip, struct logs_out *lo)
{
	struct timespec pause = { 0, FOLLOW_POLL_MS * 1000000L };
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__Reply *rep;
	int rc, done, empty;

	req.body_case = MTS__SHIM__REQUEST__BODY_LOGS;
	req.logs = lr;
	for (;;) {
		if ((rc = shimctl_call_at(ctx, tg, &req, &rep,
		         MTS__SHIM__REPLY__BODY_LOGS, 0)))
			return rc;
		empty = rep->logs->data.len == 0;
		if (!empty && !skip)
			logs_write(lo, rep->logs->data.data,
			    rep->logs->data.len,
			    rep->logs->next_offset - rep->logs->data.len);
		fflush(stdout);
		lr->offset = rep->logs->next_offset;
		lr->tail_lines = 0;
		if (empty && skip) {
			skip = 0;
			done = !follow || rep->logs->finished;
		} else
			done = empty && (!follow || rep->logs->finished);
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		if (done)
			return 0;
		if (empty)
			nanosleep(&pause, NULL);
	}
}

static int
cmd_logs(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "tail", required_argument, NULL, 'n' },
		{ "node", required_argument, NULL, 'N' }, { NULL, 0, NULL, 0 }
	};
	Mts__Shim__LogsReq lr = MTS__SHIM__LOGS_REQ__INIT;
	struct logs_out out = { .ctx = ctx };
	struct shimctl_target tg;
	const char *node = NULL;
	int c, rc, follow = 0, tail0 = 0;
	int64_t n;

	while ((c = getopt_long(argc, argv, "fn:", lo, NULL)) != -1) {
		if (c == 'f')
			follow = 1;
		else if (c == 'n' && mts_parse_int(optarg, &n) == 0 && n >= 0 &&
		    n < 1000000) {
			/* the shim's 0 means "from the start": --tail 0 starts
			 * at the last line and skips to the end */
			lr.tail_lines = n > 0 ? (uint32_t)n : 1;
			tail0 = n == 0;
		} else if (c == 'n') {
			mtsctl_err("--tail %s: expected a number of lines "
			           "(0 to 999999)",
			    optarg);
			return MTSCTL_EUSAGE;
		} else if (c == 'N')
			node = optarg;
		else
			return mtsctl_usage(ctx);
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	lr.id = argv[optind];
	if ((rc = shimctl_locate(ctx, lr.id, node, &tg)) != 0)
		return rc;
	out.task = lr.id;
	mts_buf_init(&out.line);
	rc = logs_loop(ctx, &tg, &lr, follow, tail0, &out);
	logs_finish(&out);
	return rc;
}

static const struct mtsctl_cmd logs_cmds[] = {
	{ NULL, cmd_logs, "[-f] [--tail N] [--node NODE] TASK",
	    "print a task's output",
	    "DESCRIPTION\n"
	    "    Prints what TASK wrote to stdout and stderr (kept in rotated\n"
	    "    files by the shim of the node running it). A task this node's\n"
	    "    shim does not have is looked up in the replicated\n"
	    "    t/<node>/<task> records and read from its node through the\n"
	    "    local gossipd's relay.\n\n"
	    "OPTIONS\n"
	    "    -f, --follow      keep printing new output until the task ends\n"
	    "    -n, --tail N      start with the last N lines (0: none, only\n"
	    "                      what comes next with -f)\n"
	    "    --node NODE       ask this node (a member's name or id prefix)\n"
	    "                      instead of looking the task up\n\n"
	    "    With -o json every line is one JSON object on a line of its\n"
	    "    own: {\"task\": TASK, \"offset\": N, \"line\": TEXT} (offset:\n"
	    "    where the line starts in the task's output; the newline is\n"
	    "    not part of TEXT). A line that is not valid UTF-8 comes as\n"
	    "    \"line_base64\" instead of \"line\"; a last line without its\n"
	    "    newline yet, or one cut at 1 MiB, has \"partial\": true. The\n"
	    "    shim keeps one stream (stdout and stderr merged, no times),\n"
	    "    so there is no per-line stream or time.\n\n"
	    "EXIT STATUS\n"
	    "    0 done, 1 the shim could not read the logs, 2 usage, 3 the\n"
	    "    task's node is unreachable, 4 permission denied (here, by\n"
	    "    the relay, or by the remote shim), 5 no such task on any\n"
	    "    node.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl logs --tail 20 -f shop_web.1.3f2a9c1d\n"
	    "    mtsctl -o json logs --node n2 shop_web.2.8b0e44aa\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_logs = {
	.name = "logs",
	.summary = "a task's output",
	.cmds = logs_cmds,
};
