/* shim_exec.c: mts-shim's exec sessions — `runc exec` with pipes or a pseudo-terminal received over a console socket, stdin and output moved by the loop without blocking, long-polled ExecIo replies, and the one-shot ExecReq on top. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <sodium.h>

#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "shim.h"
#include "xmalloc.h"

#define IO_DEFAULT_MAX (256u << 10)
#define ONESHOT_DEFAULT_MS 60000
#define MAX_ARGS 1000

struct shim_exec {
	struct mts_exec core;
	struct shim *shim;
	char task[MTS_TASK_ID_MAX + 1];
	pid_t runtime; /* runc exec, 0 once reaped */
	pid_t proc;    /* tty: the process (reparented to us), 0 */
	int out_fd;    /* runc's stdout+stderr (the process's without
				 * a tty), -1 */
	int in_fd;     /* the process's stdin pipe, -1 */
	int pty;       /* tty: the terminal's master, -1 */
	int lsn, conn; /* tty: the console socket, -1 */
	struct mts_watch *out_w, *in_w, *pty_w; /* the loop's, with the fds */
	struct mts_watch *con_w;                /* lsn's, then conn's */
	struct mts_timer timer; /* the session's next deadline */
	uint16_t rows, cols;    /* window size to apply, 0 = none */
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char pidfile[SHIM_PATH];
	struct mts_ipc_call *call; /* the pending ExecIo or one-shot Exec */
	int call_oneshot;
	mts_time_t call_deadline;
	uint32_t call_max, call_accepted;
	int killed; /* one-shot past its timeout */
	int dead;   /* freed once its last reply is sent */
	struct shim_exec *next;
};

/* --- the runtime's command line ---------------------------------------- */

const char **
shim_exec_argv(struct shim *s, const struct shim_exec_cmd *c)
{
	const char **argv =
	    xcalloc(c->nargs + 2 * c->nenv + 20, sizeof(char *));
	size_t n = 0, i;

	argv[n++] = s->cfg.runtime;
	argv[n++] = "--root";
	argv[n++] = s->cfg.runtime_root;
	argv[n++] = "exec";
	for (i = 0; c->opts != NULL && c->opts[i] != NULL; i++)
		argv[n++] = c->opts[i];
	for (i = 0; i < c->nenv; i++) {
		argv[n++] = "--env";
		argv[n++] = c->env[i];
	}
	argv[n++] = c->task;
	if (c->shell) {
		argv[n++] = "/bin/sh";
		argv[n++] = "-c";
	}
	for (i = 0; i < c->nargs; i++)
		argv[n++] = c->args[i];
	argv[n] = NULL;
	return argv;
}

/* --- sessions ------------------------------------------------------------ */

static struct shim_exec *
find(struct shim *s, uint64_t id)
{
	struct shim_exec *x;

	for (x = s->execs; x != NULL; x = x->next)
		if (x->core.id == id && !x->dead)
			return x;
	return NULL;
}

static size_t
count(const struct shim *s)
{
	const struct shim_exec *x;
	size_t n = 0;

	for (x = s->execs; x != NULL; x = x->next)
		n++;
	return n;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void
close_console(struct shim_exec *x)
{
	mts_watch_free(x->con_w);
	x->con_w = NULL;
	close_fd(&x->lsn);
	close_fd(&x->conn);
	if (x->sock[0] != '\0')
		unlink(x->sock);
	x->sock[0] = '\0';
}

/* No output source is left: the session's output is complete. */
static void
check_eof(struct shim_exec *x)
{
	if (x->out_fd < 0 && x->pty < 0 && x->lsn < 0 && x->conn < 0)
		mts_exec_set_eof(&x->core);
}

static void
exec_free(struct shim_exec *x)
{
	mts_timer_disarm(x->shim->loop, &x->timer);
	shim_close_watched(&x->out_fd, &x->out_w);
	shim_close_watched(&x->in_fd, &x->in_w);
	shim_close_watched(&x->pty, &x->pty_w);
	close_console(x);
	if (x->pidfile[0] != '\0')
		unlink(x->pidfile);
	mts_exec_free(&x->core);
	free(x);
}

static int
status_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The console socket runc connects to with --console-socket. */
static int
console_listen(struct shim *s, struct shim_exec *x)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int n = snprintf(sa.sun_path, sizeof(sa.sun_path),
	    "%s/exec/%016" PRIx64 ".sock", s->cfg.rundir, x->core.id);

	if (n < 0 || (size_t)n >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((x->lsn = socket(AF_UNIX,
	         SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	unlink(sa.sun_path);
	if (bind(x->lsn, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(x->lsn, 1) < 0)
		return -1;
	snprintf(x->sock, sizeof(x->sock), "%s", sa.sun_path);
	return 0;
}

struct spawn_fds {
	int in, out; /* the child's stdin (-1: /dev/null) and stdout/stderr */
};

/* Forks runc exec with the given stdio; argv is built before the fork
 * (the child must not allocate). */
static pid_t
spawn(const char **argv, const struct spawn_fds *f)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	sigset_t none;
	int nul = open("/dev/null", O_RDONLY);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (nul < 0 || dup2(f->in >= 0 ? f->in : nul, 0) < 0 ||
	    dup2(f->out, 1) < 0 || dup2(f->out, 2) < 0)
		_exit(127);
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

/* Pipes, console socket and the runc process of a new session. */
static int
exec_spawn(struct shim *s, struct shim_exec *x, const struct shim_exec_cmd *c,
    int want_stdin, char *err, size_t errlen)
{
	const char *opts[8];
	struct spawn_fds f = { .in = -1, .out = -1 };
	int op[2] = { -1, -1 }, ip[2] = { -1, -1 }, rc = -MTS_ERR_IO, n = 0;
	struct shim_exec_cmd cmd = *c;
	const char **argv;

	snprintf(x->pidfile, sizeof(x->pidfile), "%s/exec/%016" PRIx64 ".pid",
	    s->cfg.rundir, x->core.id);
	if (x->core.tty) {
		if (console_listen(s, x) < 0) {
			snprintf(err, errlen, "console socket: %s",
			    strerror(errno));
			goto out;
		}
		opts[n++] = "--tty";
		opts[n++] = "--detach";
		opts[n++] = "--console-socket";
		opts[n++] = x->sock;
	}
	opts[n++] = "--pid-file";
	opts[n++] = x->pidfile;
	opts[n] = NULL;
	cmd.opts = opts;
	if (pipe2(op, O_CLOEXEC) < 0 ||
	    (want_stdin && !x->core.tty && pipe2(ip, O_CLOEXEC) < 0)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	f.out = op[1];
	f.in = ip[0];
	argv = shim_exec_argv(s, &cmd);
	x->runtime = spawn(argv, &f);
	free(argv);
	if (x->runtime < 0) {
		x->runtime = 0;
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto out;
	}
	x->out_fd = op[0];
	op[0] = -1;
	x->in_fd = ip[1];
	ip[1] = -1;
	fcntl(x->out_fd, F_SETFL, O_NONBLOCK);
	if (x->in_fd >= 0)
		fcntl(x->in_fd, F_SETFL, O_NONBLOCK);
	rc = 0;
out:
	close_fd(&op[0]);
	close_fd(&op[1]);
	close_fd(&ip[0]);
	close_fd(&ip[1]);
	return rc;
}

static int
check_cmd(struct shim_task *t, size_t nargs, size_t nenv, char *err,
    size_t errlen)
{
	if (t->core.state != MTS_TASK_RUNNING) {
		snprintf(err, errlen, "task %s is %s, not running", t->core.id,
		    mts_task_state_name(t->core.state));
		return -MTS_ERR_STATE;
	}
	if (nargs == 0 || nargs > MAX_ARGS || nenv > MAX_ARGS) {
		snprintf(err, errlen,
		    "exec needs a command (and at most %d "
		    "arguments and environment entries)",
		    MAX_ARGS);
		return -MTS_ERR_INVAL;
	}
	return 0;
}

static void on_exec_timer(void *, mts_time_t);
static void exec_after(struct shim_exec *, mts_time_t);

static struct shim_exec *
exec_new(struct shim *s, const char *task, int tty, int oneshot)
{
	struct shim_exec *x = xcalloc(1, sizeof(*x));
	uint64_t id;

	x->shim = s;
	mts_timer_init(&x->timer, "exec", on_exec_timer, x);
	do
		randombytes_buf(&id, sizeof(id));
	while (id == 0 || find(s, id) != NULL);
	mts_exec_init(&x->core, id, tty, oneshot,
	    oneshot ? MTS_TIME_NEVER / 2 : s->cfg.exec_idle, mts_now());
	snprintf(x->task, sizeof(x->task), "%s", task);
	x->out_fd = x->in_fd = x->pty = x->lsn = x->conn = -1;
	return x;
}

/* Starts a session; on 0 it is in s->execs. */
static int
exec_start(struct shim *s, struct shim_task *t, const struct shim_exec_cmd *c,
    int tty, int oneshot, int want_stdin, struct shim_exec **out, char *err,
    size_t errlen)
{
	struct shim_exec *x;
	int rc;

	if ((rc = check_cmd(t, c->nargs, c->nenv, err, errlen)) != 0)
		return rc;
	if (count(s) >= MTS_EXEC_MAX) {
		snprintf(err, errlen,
		    "too many exec sessions (%d) on this node", MTS_EXEC_MAX);
		return -MTS_ERR_TOOBIG;
	}
	x = exec_new(s, t->core.id, tty, oneshot);
	if ((rc = exec_spawn(s, x, c, want_stdin, err, errlen)) != 0) {
		exec_free(x);
		return rc;
	}
	x->next = s->execs;
	s->execs = x;
	*out = x;
	log_info("task %s: exec %s%s (session %016" PRIx64 ")", t->core.id,
	    c->args[0], tty ? " with a terminal" : "", x->core.id);
	return 0;
}

int
shim_exec_begin(struct shim *s, struct shim_task *t,
    const Mts__Shim__ExecStartReq *r, uint64_t *id, char *err, size_t errlen)
{
	struct shim_exec_cmd c = { .task = t->core.id,
		.args = r->args,
		.nargs = r->n_args,
		.env = r->env,
		.nenv = r->n_env };
	struct shim_exec *x;
	int rc;

	if (r->rows > UINT16_MAX || r->cols > UINT16_MAX) {
		snprintf(err, errlen, "window size %ux%u out of range", r->rows,
		    r->cols);
		return -MTS_ERR_INVAL;
	}
	if ((rc = exec_start(s, t, &c, r->tty, 0, r->stdin, &x, err, errlen)) !=
	    0)
		return rc;
	x->rows = (uint16_t)r->rows;
	x->cols = (uint16_t)r->cols;
	*id = x->core.id;
	exec_after(x, mts_now());
	return 0;
}

void
shim_exec_oneshot(struct shim *s, struct shim_task *t,
    const Mts__Shim__ExecReq *r, struct mts_ipc_call *call)
{
	struct shim_exec_cmd c = { .task = t->core.id,
		.args = r->args,
		.nargs = r->n_args,
		.env = r->env,
		.nenv = r->n_env };
	struct shim_exec *x;
	char err[256];
	int rc;

	if ((rc = exec_start(s, t, &c, 0, 1, 0, &x, err, sizeof(err))) != 0) {
		mts_ipc_reply_error(call, -rc, "%s", err);
		return;
	}
	x->call = call;
	x->call_oneshot = 1;
	x->call_deadline =
	    mts_now() + (r->timeout_ms ? r->timeout_ms : ONESHOT_DEFAULT_MS);
	exec_after(x, mts_now());
}

/* --- replies ------------------------------------------------------------- */

static void
reply_io(struct shim_exec *x)
{
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__ExecIoRep io = MTS__SHIM__EXEC_IO_REP__INIT;
	struct mts_buf b;

	mts_buf_init(&b);
	mts_exec_take(&x->core, x->call_max, &b);
	io.output.data = b.data;
	io.output.len = b.len;
	io.stdin_accepted = x->call_accepted;
	if (mts_exec_finished(&x->core)) {
		io.exited = 1;
		io.exit_code = x->core.exit_code;
		x->dead = 1;
	}
	rep.body_case = MTS__SHIM__REPLY__BODY_EXEC_IO;
	rep.exec_io = &io;
	mts_ipc_reply(x->call, &rep.base);
	x->call = NULL;
	mts_buf_free(&b);
}

static void
reply_oneshot(struct shim_exec *x)
{
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__ExecRep er = MTS__SHIM__EXEC_REP__INIT;

	er.exit_code = x->killed ? 124 : x->core.exit_code;
	er.output.data = x->core.out.data;
	er.output.len = x->core.out.len;
	er.truncated = x->core.truncated;
	rep.body_case = MTS__SHIM__REPLY__BODY_EXEC;
	rep.exec = &er;
	mts_ipc_reply(x->call, &rep.base);
	x->call = NULL;
	x->dead = 1;
}

/* A pending ExecIo is answered once there is output, the session is
 * finished or its wait is over. */
static void
maybe_reply(struct shim_exec *x, mts_time_t now)
{
	int finished = x->core.exited && x->core.eof;

	if (x->call == NULL)
		return;
	if (x->call_oneshot) {
		if (finished)
			reply_oneshot(x);
	} else if (x->core.out.len > 0 || finished || now >= x->call_deadline)
		reply_io(x);
}

static void
apply_winsize(struct shim_exec *x)
{
	struct winsize ws = { .ws_row = x->rows, .ws_col = x->cols };

	if (x->pty < 0 || x->rows == 0 || x->cols == 0)
		return;
	if (ioctl(x->pty, TIOCSWINSZ, &ws) < 0)
		log_warn("exec %016" PRIx64 ": TIOCSWINSZ", x->core.id);
	x->rows = x->cols = 0;
}

static pid_t read_pidfile(const char *path);

/* Signals the session's process, if it still runs. */
static void
exec_signal(struct shim_exec *x, int sig)
{
	pid_t pid = x->proc;

	if (pid == 0 && x->runtime > 0) /* without a tty: runc's child */
		pid = read_pidfile(x->pidfile);
	if (pid > 0 && !x->core.exited && kill(pid, sig) < 0)
		log_warn("exec %016" PRIx64 ": kill %d", x->core.id, (int)pid);
}

void
shim_exec_io(struct shim *s, const Mts__Shim__ExecIoReq *r,
    struct mts_ipc_call *call)
{
	struct shim_exec *x = find(s, r->session);
	mts_time_t now = mts_now();
	uint32_t wait =
	    r->wait_ms < MTS_EXEC_WAIT_MAX ? r->wait_ms : MTS_EXEC_WAIT_MAX;

	if (x == NULL || x->call_oneshot) {
		mts_ipc_reply_error(call, MTS_ERR_NOTFOUND,
		    "no exec session %016" PRIx64 " (it ended or was "
		    "abandoned)",
		    r->session);
		return;
	}
	if (x->call != NULL) /* a retry or a second client: the older goes */
		reply_io(x);
	if (x->dead) { /* that reply was the last */
		mts_ipc_reply_error(call, MTS_ERR_NOTFOUND,
		    "exec session %016" PRIx64 " ended", r->session);
		exec_after(x, now);
		return;
	}
	x->core.last_call = now;
	x->call_accepted =
	    (uint32_t)mts_exec_stdin(&x->core, r->stdin.data, r->stdin.len);
	if (r->close_stdin && x->call_accepted == r->stdin.len)
		x->core.close_in = 1;
	if (r->rows > 0 && r->cols > 0 && r->rows <= UINT16_MAX &&
	    r->cols <= UINT16_MAX) {
		x->rows = (uint16_t)r->rows;
		x->cols = (uint16_t)r->cols;
		apply_winsize(x);
	}
	if (r->signal > 0 && r->signal < 65)
		exec_signal(x, (int)r->signal);
	x->call = call;
	x->call_oneshot = 0;
	x->call_max = r->max_bytes && r->max_bytes < IO_DEFAULT_MAX
	    ? r->max_bytes
	    : IO_DEFAULT_MAX;
	x->call_deadline = now + wait;
	exec_after(x, now);
}

/* --- descriptors ---------------------------------------------------------- */

/* Reads what fd has (within the session's room); closes it at EOF (or
 * EIO: a terminal whose every slave is closed). */
static void
read_out(struct shim_exec *x, int *fd, struct mts_watch **w, mts_time_t now)
{
	char buf[65536];
	ssize_t r;
	size_t room;

	while (*fd >= 0 && (room = mts_exec_room(&x->core)) > 0) {
		r = read(*fd, buf, room < sizeof(buf) ? room : sizeof(buf));
		if (r > 0) {
			mts_exec_output(&x->core, buf, (size_t)r);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		shim_close_watched(fd, w);
	}
	check_eof(x);
}

static void
write_in(struct shim_exec *x, int fd)
{
	ssize_t w;

	while (x->core.in.len > 0) {
		w = write(fd, x->core.in.data, x->core.in.len);
		if (w > 0) {
			mts_exec_stdin_written(&x->core, (size_t)w);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		x->core.in.len = 0; /* the reader is gone */
		if (fd == x->in_fd)
			shim_close_watched(&x->in_fd, &x->in_w);
		return;
	}
}

/* runc sends the terminal's master over the console socket (SCM_RIGHTS). */
static void
console_recv(struct shim_exec *x)
{
	char name[4096];
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = name, .iov_len = sizeof(name) };
	struct msghdr mh = { .msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	ssize_t r;

	if (x->conn < 0) {
		x->conn =
		    accept4(x->lsn, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (x->conn < 0)
			return;
		mts_watch_free(x->con_w); /* conn gets its own */
		x->con_w = NULL;
		close_fd(&x->lsn);
	}
	r = recvmsg(x->conn, &mh, MSG_CMSG_CLOEXEC);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	cm = r > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm != NULL && cm->cmsg_level == SOL_SOCKET &&
	    cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int))) {
		memcpy(&x->pty, CMSG_DATA(cm), sizeof(int));
		fcntl(x->pty, F_SETFL, O_NONBLOCK);
		apply_winsize(x);
	} else
		log_warnx("exec %016" PRIx64 ": the runtime sent no terminal",
		    x->core.id);
	close_console(x);
	check_eof(x);
}

/* --- processes -------------------------------------------------------------- */

static pid_t
read_pidfile(const char *path)
{
	char *txt = shim_read_text(path, 31);
	long v = txt != NULL ? strtol(txt, NULL, 10) : 0;

	free(txt);
	return v > 1 && v < INT32_MAX ? (pid_t)v : 0;
}

/* A detached terminal exec: runc has gone, its process is ours now
 * (subreaper). It may have ended already: then its status is in the exits
 * memory, or still unreaped. */
static void
claim_process(struct shim *s, struct shim_exec *x, mts_time_t now)
{
	pid_t pid = read_pidfile(x->pidfile), r;
	int st;

	if (pid == 0) {
		log_warnx("exec %016" PRIx64 ": no pid in %s", x->core.id,
		    x->pidfile);
		mts_exec_exit(&x->core, 126, now);
		return;
	}
	r = waitpid(pid, &st, WNOHANG);
	if (r == pid || (r < 0 && mts_exits_take(&s->exits, pid, &st, now)))
		mts_exec_exit(&x->core, status_code(st), now);
	else if (r == 0)
		x->proc = pid;
	else
		mts_exec_exit(&x->core, 126, now); /* lost: not our child */
}

int
shim_exec_reaped(struct shim *s, pid_t pid, int st)
{
	struct shim_exec *x;
	mts_time_t now = mts_now();

	for (x = s->execs; x != NULL; x = x->next) {
		if (x->runtime == pid) {
			x->runtime = 0;
			if (x->core.tty && WIFEXITED(st) &&
			    WEXITSTATUS(st) == 0)
				claim_process(s, x, now);
			else
				mts_exec_exit(&x->core, status_code(st), now);
			if (x->core.exited)
				close_console(x);
			exec_after(x, now);
			return 1;
		}
		if (x->proc == pid) {
			x->proc = 0;
			mts_exec_exit(&x->core, status_code(st), now);
			exec_after(x, now);
			return 1;
		}
	}
	return 0;
}

/* Kills what a session still runs (the process first, then runc). */
static void
exec_kill(struct shim_exec *x)
{
	exec_signal(x, SIGKILL);
	if (x->runtime > 0)
		kill(x->runtime, SIGKILL);
}

/* What a session does after anything happened to it (and at its
 * deadlines): closing stdin once written, the one-shot timeout, the end of
 * the drain time, replies, abandonment. */
static void
tick_one(struct shim_exec *x, mts_time_t now)
{
	if (x->core.close_in && x->core.in.len == 0)
		shim_close_watched(&x->in_fd, &x->in_w);
	if (x->call_oneshot && x->call != NULL && !x->killed &&
	    now >= x->call_deadline) {
		x->killed = 1;
		exec_kill(x);
	}
	if (mts_exec_drain_over(&x->core, now)) {
		/* Whatever was in flight has arrived; a background child
		 * holding the output open does not keep the session. With a
		 * full buffer the rest waits for the client to take some. */
		read_out(x, &x->out_fd, &x->out_w, now);
		read_out(x, &x->pty, &x->pty_w, now);
		if (mts_exec_room(&x->core) > 0) {
			shim_close_watched(&x->out_fd, &x->out_w);
			shim_close_watched(&x->pty, &x->pty_w);
			close_console(x);
			check_eof(x);
		}
	}
	maybe_reply(x, now);
	if (x->call == NULL && !x->dead && mts_exec_abandoned(&x->core, now)) {
		log_info("exec %016" PRIx64 " in %s: no client for %" PRId64
		         " ms, ended",
		    x->core.id, x->task, x->core.idle);
		exec_kill(x);
		x->dead = 1;
	}
}

static void
exec_unlink(struct shim *s, struct shim_exec *x)
{
	struct shim_exec **pp;

	for (pp = &s->execs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			return;
		}
}

static void on_exec_out(void *, int, uint32_t, mts_time_t);
static void on_exec_in(void *, int, uint32_t, mts_time_t);
static void on_exec_pty(void *, int, uint32_t, mts_time_t);
static void on_exec_console(void *, int, uint32_t, mts_time_t);

/* Watches fd (if open) for events; a watcher follows its descriptor. */
static void
watch(struct shim_exec *x, int fd, struct mts_watch **w, uint32_t events,
    mts_watch_fn fn)
{
	if (fd < 0)
		return;
	if (*w == NULL)
		*w = mts_loop_watch(x->shim->loop, fd, events, "exec", fn, x);
	else if (mts_watch_set(*w, events) < 0)
		fatal("exec %016" PRIx64 ": epoll", x->core.id);
	if (*w == NULL)
		fatalx("cannot watch an exec session's descriptor");
}

/* What the loop waits for: output while there is room, stdin while some is
 * queued, the console socket; the timer at the next deadline. */
static void
exec_watch(struct shim_exec *x)
{
	uint32_t rd = mts_exec_want_read(&x->core) ? MTS_LOOP_IN : 0;
	uint32_t wr = x->core.in.len ? MTS_LOOP_OUT : 0;
	mts_time_t d = mts_exec_next(&x->core);

	watch(x, x->out_fd, &x->out_w, rd, on_exec_out);
	watch(x, x->pty, &x->pty_w, rd | wr, on_exec_pty);
	watch(x, x->in_fd, &x->in_w, wr, on_exec_in);
	watch(x, x->lsn >= 0 ? x->lsn : x->conn, &x->con_w, MTS_LOOP_IN,
	    on_exec_console);
	if (x->call != NULL && x->call_deadline < d)
		d = x->call_deadline;
	mts_timer_arm(x->shim->loop, &x->timer, d);
}

/* After every event of a session: its checks, then what the loop waits
 * for, or, once its last reply is sent, its end. */
static void
exec_after(struct shim_exec *x, mts_time_t now)
{
	if (!x->dead)
		tick_one(x, now);
	if (x->dead && x->call == NULL) {
		exec_unlink(x->shim, x);
		exec_free(x);
		return;
	}
	if (!x->dead)
		exec_watch(x);
}

static void
on_exec_out(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct shim_exec *x = arg;

	read_out(x, &x->out_fd, &x->out_w, now);
	exec_after(x, now);
}

static void
on_exec_in(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct shim_exec *x = arg;

	write_in(x, x->in_fd);
	exec_after(x, now);
}

static void
on_exec_pty(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct shim_exec *x = arg;

	if (events & MTS_LOOP_OUT)
		write_in(x, x->pty);
	read_out(x, &x->pty, &x->pty_w, now);
	exec_after(x, now);
}

static void
on_exec_console(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct shim_exec *x = arg;

	console_recv(x);
	exec_after(x, now);
}

static void
on_exec_timer(void *arg, mts_time_t now)
{
	exec_after(arg, now);
}

/* At exit: a session cannot outlive the shim (nobody could poll it
 * again), so its command is killed, unlike the containers. */
void
shim_exec_free_all(struct shim *s)
{
	struct shim_exec *x;

	while ((x = s->execs) != NULL) {
		s->execs = x->next;
		if (!x->dead)
			exec_kill(x);
		if (x->call != NULL)
			mts_ipc_call_drop(x->call);
		exec_free(x);
	}
}

int
shim_exec_setup(struct shim *s)
{
	char dir[SHIM_PATH];

	snprintf(dir, sizeof(dir), "%s/exec", s->cfg.rundir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_warn("%s", dir);
		return -1;
	}
	return 0;
}
