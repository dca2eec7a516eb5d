/* cmd_exec.c: `mtsctl exec [-i] [-t] TASK -- CMD` — an exec session in a task's shim (here or through the relay): stdin forwarded, output printed, a raw local terminal with -t, the command's exit code. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "buf.h"
#include "cfg.h"
#include "mtstime.h"
#include "mtsctl.h"
#include "shimctl.h"

#define MAX_ENV 64
#define STDIN_CHUNK (32u << 10)
#define POLL_MIN_MS 10  /* idle polling backs off from here ... */
#define POLL_MAX_MS 200 /* ... to here */
#define LONG_POLL_MS 1000

struct exec_opts {
	int interactive, tty;
	char *env[MAX_ENV];
	size_t nenv;
	const char *node;
	int64_t timeout; /* ms, 0 = none */
};

/* --- the local terminal -------------------------------------------------- */

static struct termios saved_tio;
static volatile sig_atomic_t raw_on, winch, got_sig;

static void
raw_restore(void)
{
	if (raw_on) {
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
		raw_on = 0;
	}
}

/* With a raw terminal a signal restores it and then does what it would
 * have done; without one the first is forwarded to the command. */
static void
on_signal(int sig)
{
	if (sig == SIGWINCH) {
		winch = 1;
		return;
	}
	if (raw_on || got_sig) {
		raw_restore();
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	got_sig = sig;
}

static void
catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
		SIGWINCH };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int
raw_enter(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return -1;
	t = saved_tio;
	cfmakeraw(&t);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) < 0)
		return -1;
	raw_on = 1;
	atexit(raw_restore);
	return 0;
}

static void
window(uint32_t *rows, uint32_t *cols)
{
	struct winsize ws;

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* --- the session ---------------------------------------------------------- */

struct session {
	struct mtsctl *ctx;
	struct shimctl_target tg;
	uint64_t id;
	int tty;
	int in_open; /* stdin attached and not at EOF */
	int close_sent;
	struct mts_buf in;   /* read from stdin, not yet accepted */
	mts_time_t deadline; /* --timeout, or MTS_TIME_NEVER */
	int timed_out;
};

static int
start(struct session *ss, const char *task, const struct exec_opts *o,
    char **args, size_t nargs)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__ExecStartReq sr = MTS__SHIM__EXEC_START_REQ__INIT;
	Mts__Shim__Reply *rep;
	int rc;

	sr.id = (char *)task;
	sr.args = args;
	sr.n_args = nargs;
	sr.env = (char **)o->env;
	sr.n_env = o->nenv;
	sr.tty = o->tty;
	sr.stdin = o->interactive;
	if (o->tty)
		window(&sr.rows, &sr.cols);
	req.body_case = MTS__SHIM__REQUEST__BODY_EXEC_START;
	req.exec_start = &sr;
	if ((rc = shimctl_call_at(ss->ctx, &ss->tg, &req, &rep,
	         MTS__SHIM__REPLY__BODY_EXEC_START, 0)) != 0)
		return rc;
	ss->id = rep->exec_start->session;
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
write_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Drops the n bytes of stdin the shim accepted. */
static void
drop_head(struct mts_buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

/* One ExecIo: sends pending stdin, a resize or a signal, prints the
 * output. Returns 0 and sets *progress, or an exit status; *done and
 * *code when the command ended. */
static int
io_round(struct session *ss, int *progress, int *done, int *code)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__ExecIoReq io = MTS__SHIM__EXEC_IO_REQ__INIT;
	Mts__Shim__Reply *rep;
	int rc, closing;

	io.session = ss->id;
	io.stdin.data = ss->in.data;
	io.stdin.len = ss->in.len < STDIN_CHUNK ? ss->in.len : STDIN_CHUNK;
	closing = !ss->in_open && !ss->close_sent && io.stdin.len == ss->in.len;
	io.close_stdin = closing;
	if (winch && ss->tty) {
		winch = 0;
		window(&io.rows, &io.cols);
	}
	if (got_sig > 0) {
		io.signal = (uint32_t)got_sig;
		got_sig = -1; /* forwarded once; the next one ends mtsctl */
	}
	if (!ss->timed_out && mts_now() >= ss->deadline) {
		ss->timed_out = 1;
		io.signal = SIGKILL;
	}
	/* A long-poll only where nothing else must be watched: no stdin,
	 * and not through the relay (the remote gossipd serves one call at
	 * a time). */
	io.wait_ms = !ss->tg.remote && !ss->in_open ? LONG_POLL_MS : 0;
	req.body_case = MTS__SHIM__REQUEST__BODY_EXEC_IO;
	req.exec_io = &io;
	if ((rc = shimctl_call_at(ss->ctx, &ss->tg, &req, &rep,
	         MTS__SHIM__REPLY__BODY_EXEC_IO, LONG_POLL_MS + 4000)) != 0)
		return rc;
	if (rep->exec_io->output.len > 0 &&
	    write_all(STDOUT_FILENO, rep->exec_io->output.data,
	        rep->exec_io->output.len) < 0)
		ss->in_open = 0; /* our output is gone: wind down */
	drop_head(&ss->in, rep->exec_io->stdin_accepted);
	if (closing && rep->exec_io->stdin_accepted == io.stdin.len)
		ss->close_sent = 1;
	*progress =
	    rep->exec_io->output.len > 0 || rep->exec_io->stdin_accepted > 0;
	*done = rep->exec_io->exited;
	*code = rep->exec_io->exit_code;
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

/* Waits up to ms for stdin (when more is wanted) and reads what came. */
static void
wait_stdin(struct session *ss, int ms)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	uint8_t buf[STDIN_CHUNK];
	ssize_t n;

	if (!ss->in_open || ss->in.len >= STDIN_CHUNK)
		p.fd = -1; /* just the pause (a signal cuts it short) */
	if (poll(&p, 1, ms) <= 0 || !(p.revents & (POLLIN | POLLHUP)))
		return;
	n = read(STDIN_FILENO, buf, sizeof(buf));
	if (n > 0)
		mts_buf_put(&ss->in, buf, (size_t)n);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		ss->in_open = 0;
}

static int
run(struct session *ss, int *code)
{
	int rc, progress, done = 0, pause = 0;

	while (!done) {
		if ((rc = io_round(ss, &progress, &done, code)) != 0)
			return rc;
		if (done || (!ss->tg.remote && !ss->in_open))
			continue; /* finished, or the long-poll was the wait */
		pause = progress ? 0 : (pause ? pause * 2 : POLL_MIN_MS);
		if (pause > POLL_MAX_MS)
			pause = POLL_MAX_MS;
		wait_stdin(ss, pause);
	}
	return 0;
}

/* --- the command ---------------------------------------------------------- */

static int
parse(struct mtsctl *ctx, int argc, char **argv, struct exec_opts *o)
{
	static const struct option lo[] = { { "interactive", no_argument, NULL,
		                                'i' },
		{ "tty", no_argument, NULL, 't' },
		{ "env", required_argument, NULL, 'e' },
		{ "node", required_argument, NULL, 'N' },
		{ "timeout", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 } };
	const char *last = NULL; /* the last option's value */
	int c;

	while ((c = getopt_long(argc, argv, "+ite:", lo, NULL)) != -1) {
		last = optarg;
		if (c == 'i')
			o->interactive = 1;
		else if (c == 't')
			o->tty = o->interactive = 1;
		else if (c == 'e' && o->nenv < MAX_ENV && strchr(optarg, '='))
			o->env[o->nenv++] = optarg;
		else if (c == 'N')
			o->node = optarg;
		else if (c == 'T' &&
		    mts_parse_duration(optarg, &o->timeout) == 0 &&
		    o->timeout > 0)
			;
		else
			return mtsctl_usage(ctx);
	}
	if (mtsctl_dashdash_ended(argv, optind, last)) {
		mtsctl_err("exec: TASK is missing: it comes before \"--\" "
		           "(exec [OPTIONS] TASK -- COMMAND...)");
		return MTSCTL_EUSAGE;
	}
	if (argc - optind == 1 ||
	    (argc - optind == 2 && strcmp(argv[optind + 1], "--") == 0)) {
		mtsctl_err("exec: no COMMAND to run in %s (exec [OPTIONS] "
		           "TASK -- COMMAND...)",
		    argv[optind]);
		return MTSCTL_EUSAGE;
	}
	if (argc - optind < 2)
		return mtsctl_usage(ctx);
	return 0;
}

static int
cmd_exec(struct mtsctl *ctx, int argc, char **argv)
{
	struct exec_opts o = { .interactive = 0 };
	struct session ss = { .ctx = ctx };
	const char *task;
	int rc, code = 0;

	if ((rc = parse(ctx, argc, argv, &o)) != 0)
		return rc;
	task = argv[optind++];
	if (strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return mtsctl_usage(ctx);
	if (o.tty && !isatty(STDIN_FILENO)) {
		mtsctl_err("-t needs a terminal on stdin (this one is not); "
		           "use -i to pass stdin without a terminal");
		return MTSCTL_EUSAGE;
	}
	if ((rc = shimctl_locate(ctx, task, o.node, &ss.tg)) != 0)
		return rc;
	ss.tty = o.tty;
	ss.in_open = o.interactive;
	ss.deadline = o.timeout ? mts_now() + o.timeout : MTS_TIME_NEVER;
	mts_buf_init(&ss.in);
	catch_signals();
	if ((rc = start(&ss, task, &o, argv + optind,
	         (size_t)(argc - optind))) != 0)
		goto out;
	if (o.tty && raw_enter() < 0)
		mtsctl_err("cannot put the terminal in raw mode: keys are "
		           "passed on line by line");
	rc = run(&ss, &code);
	raw_restore();
	if (rc == 0)
		rc = ss.timed_out ? 124 : code;
	if (ss.timed_out)
		mtsctl_err("timed out: the command was killed");
out:
	raw_restore();
	mts_buf_free(&ss.in);
	return rc;
}

static const struct mtsctl_cmd exec_cmds[] = {
	{ NULL, cmd_exec,
	    "[-i] [-t] [-e KEY=VALUE] [--node NODE] [--timeout DUR] TASK -- "
	    "COMMAND...",
	    "run a command in a running task",
	    "DESCRIPTION\n"
	    "    Runs COMMAND inside TASK's container (same namespaces,\n"
	    "    capabilities and limits), prints its output as it comes and\n"
	    "    exits with its exit code (128+N if a signal N killed it). A\n"
	    "    task this node's shim does not have is found through the\n"
	    "    replicated t/<node>/<task> records and reached through the\n"
	    "    local gossipd's relay. Without -i the command's stdin is\n"
	    "    empty. Without -t no terminal is attached and stdout and\n"
	    "    stderr arrive interleaved on stdout. The first SIGINT or\n"
	    "    SIGTERM mtsctl gets is passed on to the command.\n\n"
	    "OPTIONS\n"
	    "    -i, --interactive     pass mtsctl's stdin to the command\n"
	    "    -t, --tty             run it on a terminal: mtsctl's own\n"
	    "                          terminal goes raw (restored on exit),\n"
	    "                          keys and window size are passed on;\n"
	    "                          stdin must be a terminal; implies -i\n"
	    "    -e, --env KEY=VALUE   extra environment (repeatable)\n"
	    "    --node NODE           run it on this node (a member's name or\n"
	    "                          id prefix) instead of looking it up\n"
	    "    --timeout DUR         kill the command after DUR (exit 124)\n\n"
	    "EXIT STATUS\n"
	    "    The command's exit code once it ran; otherwise 2 usage (or\n"
	    "    -t without a terminal), 3 its node is unreachable, 4\n"
	    "    permission denied, 5 no such task on any node.\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_exec = {
	.name = "exec",
	.summary = "run a command in a task",
	.cmds = exec_cmds,
};
