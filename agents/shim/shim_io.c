/* shim_io.c: mts-shim's helper processes and files — log segments for `logs`, health probes (exec, TCP, HTTP inside the task's network namespace), image jobs. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "shim.h"
#include "xmalloc.h"

extern char **environ;

#define CHILD_MAX_OUTPUT (1u << 20)
#define IMPORT_WAIT_MS (30 * 60 * 1000)
#define MAX_SEGMENTS 4096

/* --- logs ------------------------------------------------------------- */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct seg {
	uint64_t start, size;
};

/* Segments of a task's log, oldest first; returns how many (<= max). */
static size_t
segments(const char *logdir, struct seg *out, size_t max)
{
	uint64_t starts[MAX_SEGMENTS];
	char path[SHIM_PATH + 32], *end;
	struct dirent *de;
	struct stat sb;
	size_t n = 0, i;
	DIR *d = opendir(logdir);

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < MAX_SEGMENTS) {
		if (strlen(de->d_name) != 20)
			continue;
		starts[n] = strtoull(de->d_name, &end, 10);
		if (*end == '\0')
			n++;
	}
	closedir(d);
	qsort(starts, n, sizeof(*starts), cmp_u64);
	if (n > max) {
		memmove(starts, starts + (n - max), max * sizeof(*starts));
		n = max;
	}
	for (i = 0; i < n; i++) {
		out[i].start = starts[i];
		snprintf(path, sizeof(path), "%s/%020" PRIu64, logdir,
		    starts[i]);
		out[i].size = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	}
	return n;
}

static ssize_t
pread_seg(const char *logdir, const struct seg *sg, uint64_t off, void *buf,
    size_t len)
{
	char path[SHIM_PATH + 32];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/%020" PRIu64, logdir, sg->start);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = pread(fd, buf, len, (off_t)(off - sg->start));
	close(fd);
	return r;
}

/* The offset where the last `lines` lines begin (scans back at most
 * 4 MiB). */
static uint64_t
tail_offset(const char *logdir, const struct seg *sg, size_t n, uint32_t lines)
{
	char buf[65536];
	uint64_t end = sg[n - 1].start + sg[n - 1].size, pos = end;
	uint64_t floor = sg[0].start,
	         lim = end > (4u << 20) ? end - (4u << 20) : 0;
	uint32_t seen = 0;
	size_t k = n;
	ssize_t r, i;

	if (lim < floor)
		lim = floor;
	while (pos > lim && k > 0) {
		while (k > 0 && sg[k - 1].start >= pos)
			k--;
		if (k == 0)
			break;
		uint64_t from = pos - sg[k - 1].start > sizeof(buf)
		    ? pos - sizeof(buf)
		    : sg[k - 1].start;
		r = pread_seg(logdir, &sg[k - 1], from, buf,
		    (size_t)(pos - from));
		if (r <= 0)
			break;
		for (i = r - 1; i >= 0; i--) {
			/* The final newline ends the last line, not a new one. */
			if (buf[i] == '\n' && from + (uint64_t)i + 1 != end &&
			    ++seen == lines)
				return from + (uint64_t)i + 1;
		}
		pos = from;
	}
	return pos;
}

int
shim_logs_read(const char *taskdir, uint64_t offset, uint32_t tail, size_t max,
    struct mts_buf *out, uint64_t *next, uint64_t *end)
{
	static struct seg sg[MAX_SEGMENTS];
	char logdir[SHIM_PATH];
	size_t n, k;
	ssize_t r;

	snprintf(logdir, sizeof(logdir), "%s/logs", taskdir);
	n = segments(logdir, sg, MAX_SEGMENTS);
	*next = offset;
	*end = n ? sg[n - 1].start + sg[n - 1].size : 0;
	if (n == 0)
		return 0;
	if (tail > 0)
		offset = tail_offset(logdir, sg, n, tail);
	if (offset < sg[0].start)
		offset = sg[0].start; /* rotated away */
	for (k = 0; k < n && out->len < max; k++) {
		uint64_t segend = sg[k].start + sg[k].size;
		if (segend <= offset)
			continue;
		if (offset < sg[k].start)
			offset = sg[k].start;
		mts_buf_reserve(out, max - out->len);
		r = pread_seg(logdir, &sg[k], offset, out->data + out->len,
		    (size_t)(segend - offset) < max - out->len
		        ? (size_t)(segend - offset)
		        : max - out->len);
		if (r < 0)
			return -MTS_ERR_IO;
		out->len += (size_t)r;
		offset += (uint64_t)r;
	}
	*next = offset;
	return 0;
}

/* --- helper children -------------------------------------------------- */

static void deliver(struct shim *);

static void
child_output(struct shim_child *c)
{
	char buf[65536];
	ssize_t n;

	while (c->fd >= 0 && (n = read(c->fd, buf, sizeof(buf))) > 0) {
		size_t room = c->out.len < CHILD_MAX_OUTPUT
		    ? CHILD_MAX_OUTPUT - c->out.len
		    : 0;
		if ((size_t)n > room)
			c->truncated = 1;
		mts_buf_put(&c->out, buf, (size_t)n < room ? (size_t)n : room);
	}
}

static void
on_child_output(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct shim_child *c = arg;

	child_output(c);
	if (events & (EPOLLHUP | EPOLLERR))
		shim_close_watched(&c->fd, &c->w);
}

/* Its deadline: killed (its end comes through SIGCHLD); or a child that
 * ended without running (nothing to reap) is delivered. */
static void
on_child_timer(void *arg, mts_time_t now)
{
	struct shim_child *c = arg;

	if (!c->exited && c->pid > 0 && !c->timed_out) {
		c->timed_out = 1;
		kill(c->pid, SIGKILL);
	}
	deliver(c->shim);
}

/* Arms c's timer: its deadline, or now if it is over already. */
static void
child_arm(struct shim_child *c)
{
	mts_timer_arm(c->shim->loop, &c->timer,
	    c->exited ? mts_loop_now(c->shim->loop) : c->deadline);
}

/* Its output pipe p (the read end) becomes the loop's. */
static void
child_watch(struct shim_child *c, int p)
{
	fcntl(p, F_SETFL, O_NONBLOCK);
	c->fd = p;
	c->w = mts_loop_watch(c->shim->loop, p, MTS_LOOP_IN, "helper output",
	    on_child_output, c);
	if (c->w == NULL)
		fatalx("cannot watch a helper's output");
}

static struct shim_child *
child_new(struct shim *s, enum shim_child_kind kind, const char *task)
{
	struct shim_child *c = xcalloc(1, sizeof(*c));

	c->shim = s;
	c->kind = kind;
	c->fd = -1;
	mts_timer_init(&c->timer, "helper", on_child_timer, c);
	mts_buf_init(&c->out);
	snprintf(c->task, sizeof(c->task), "%s", task);
	c->next = s->children;
	s->children = c;
	return c;
}

/* Forks a child whose stdout/stderr go to a pipe the loop reads; the
 * child runs fn(arg) and exits with its return value. */
static int
child_fork(struct shim_child *c, int (*fn)(struct shim *, void *),
    struct shim *s, void *arg)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -MTS_ERR_IO;
	if ((c->pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -MTS_ERR_IO;
	}
	if (c->pid == 0) {
		sigset_t none;
		int nul = open("/dev/null", O_RDONLY);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(p[1], 1) < 0 ||
		    dup2(p[1], 2) < 0)
			_exit(127);
		_exit(fn(s, arg));
	}
	close(p[1]);
	child_watch(c, p[0]);
	return 0;
}

/* Children of the shim start with no blocked signal and SIGPIPE back at
 * its default (the shim itself ignores it). */
void
shim_spawnattr_init(posix_spawnattr_t *at)
{
	sigset_t none, def;

	posix_spawnattr_init(at);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigmask(at, &none);
	posix_spawnattr_setsigdefault(at, &def);
	posix_spawnattr_setflags(at,
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

/* Starts argv (a runtime exec or the image helper) with stdout/stderr on
 * a pipe the loop reads, through posix_spawn: no copy of the shim (and
 * its threads' locks) runs between fork and exec, so nothing of the shim
 * can block the child, and the start costs no page-table copy. */
static int
child_spawn(struct shim_child *c, const char *const *argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int p[2], rc;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -MTS_ERR_IO;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	shim_spawnattr_init(&at);
	rc = posix_spawn(&c->pid, argv[0], &fa, &at, (char *const *)argv,
	    environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		c->pid = 0;
		errno = rc;
		return -MTS_ERR_IO;
	}
	child_watch(c, p[0]);
	return 0;
}

/* In the child: TCP connect (and HTTP GET) inside the task's netns. */
struct net_probe {
	int pid;
	int port;
	int http;
	char path[256];
	char host[64];
	char req[512]; /* the HTTP request, built before forking */
	char ns[64];
};

/* Writes a line to stdout without allocating (runs in a forked child). */
static void
say(const char *msg)
{
	const char *nl = strchr(msg, '\r');
	size_t n = nl ? (size_t)(nl - msg) : strlen(msg);

	if (write(1, msg, n) < 0 || write(1, "\n", 1) < 0)
		_exit(3);
}

static int
do_net_probe(struct shim *s, void *arg)
{
	const struct net_probe *p = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char rep[64];
	int fd, nsfd, code;
	ssize_t n, got = 0;

	if ((nsfd = open(p->ns, O_RDONLY)) < 0 ||
	    setns(nsfd, CLONE_NEWNET) < 0) {
		say("cannot enter the task's network namespace");
		return 2;
	}
	sa.sin_port = htons((uint16_t)p->port);
	inet_pton(AF_INET, p->host, &sa.sin_addr);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		say(errno == ECONNREFUSED ? "connection refused"
		                          : "cannot connect");
		return 1;
	}
	if (!p->http)
		return 0;
	n = (ssize_t)strlen(p->req);
	if (write(fd, p->req, (size_t)n) != n)
		return 1;
	while (got < (ssize_t)sizeof(rep) - 1 &&
	    (n = read(fd, rep + got, sizeof(rep) - 1 - (size_t)got)) > 0)
		got += n;
	rep[got] = '\0';
	if (sscanf(rep, "HTTP/%*d.%*d %d", &code) != 1) {
		say("no HTTP status line");
		return 1;
	}
	say(rep);
	return code >= 200 && code < 400 ? 0 : 1;
}

/* Parses http://HOST:PORT/path (HOST an IPv4 address in the task). */
static int
parse_url(const char *url, struct net_probe *p)
{
	const char *h, *colon, *slash;

	if (strncmp(url, "http://", 7) != 0)
		return -MTS_ERR_INVAL;
	h = url + 7;
	slash = strchr(h, '/');
	colon = memchr(h, ':', slash ? (size_t)(slash - h) : strlen(h));
	if (colon == NULL || (size_t)(colon - h) >= sizeof(p->host))
		return -MTS_ERR_INVAL;
	snprintf(p->host, sizeof(p->host), "%.*s", (int)(colon - h), h);
	p->port = atoi(colon + 1);
	snprintf(p->path, sizeof(p->path), "%s", slash ? slash : "/");
	if (!strcmp(p->host, "localhost"))
		snprintf(p->host, sizeof(p->host), "127.0.0.1");
	return p->port > 0 && p->port < 65536 ? 0 : -MTS_ERR_INVAL;
}

void
shim_probe_start(struct shim *s, struct shim_task *t)
{
	const Mts__Shim__HealthCheck *h = t->spec->health;
	struct shim_child *c = child_new(s, SHIM_CHILD_PROBE, t->core.id);
	struct net_probe np;
	struct shim_exec_cmd a = { .task = t->core.id };
	const char **argv;
	int rc;

	memset(&np, 0, sizeof(np));
	c->deadline = mts_now() + t->core.pol.hc_timeout;
	if (!strcmp(h->test[0], "HTTP") || !strcmp(h->test[0], "TCP")) {
		np.pid = t->core.pid;
		np.http = h->test[0][0] == 'H';
		snprintf(np.host, sizeof(np.host), "127.0.0.1");
		if (np.http ? parse_url(h->test[1], &np)
		            : ((np.port = atoi(h->test[1])) <= 0 ||
		                  np.port > 65535)) {
			snprintf(t->health_out, sizeof(t->health_out),
			    "bad healthcheck target \"%s\"", h->test[1]);
			c->exited = 1;
			c->status = 1 << 8;
			child_arm(c);
			return;
		}
		snprintf(np.ns, sizeof(np.ns), "/proc/%d/ns/net", np.pid);
		snprintf(np.req, sizeof(np.req),
		    "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: mts-shim\r\n"
		    "\r\n",
		    np.path, np.host);
		rc = child_fork(c, do_net_probe, s, &np);
	} else {
		a.args = h->test + 1;
		a.nargs = h->n_test - 1;
		a.shell = !strcmp(h->test[0], "CMD-SHELL");
		argv = shim_exec_argv(s, &a);
		rc = child_spawn(c, argv);
		free(argv);
	}
	if (rc != 0) {
		c->exited = 1;
		c->status = 1 << 8;
	}
	child_arm(c);
}

int
shim_image_start(struct shim *s, const char *const *args, int pull,
    const char *want, struct mts_ipc_call *call)
{
	struct shim_child *c = child_new(s, SHIM_CHILD_IMAGE, "");
	const char *argv[32];
	size_t n = 0;

	argv[n++] = s->cfg.image_tool;
	while (*args != NULL && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	c->pull = pull;
	snprintf(c->want, sizeof(c->want), "%s", want ? want : "");
	/* A pull keeps its own deadline (and reports it); this is for a
	 * helper that hangs regardless. */
	c->deadline =
	    mts_now() + (pull ? s->cfg.pull_timeout + 10000 : IMPORT_WAIT_MS);
	if (child_spawn(c, argv) != 0) {
		c->exited = 1;
		c->pid = 0;
		child_arm(c);
		return -MTS_ERR_IO;
	}
	child_arm(c);
	c->call = call;
	s->image_job = 1;
	return 0;
}

/* "OK name" or "ERR code message" from mts-shim-image. */
static void
image_done(struct shim *s, struct shim_child *c)
{
	char *line, *nl;
	int code;

	s->image_job = 0;
	mts_buf_put_u8(&c->out, 0);
	line = (char *)c->out.data;
	/* What it logged comes first (into the shim's log); the verdict is
	 * the last line. */
	while ((nl = strchr(line, '\n')) != NULL && nl[1] != '\0') {
		log_info("image helper: %.*s", (int)(nl - line), line);
		line = nl + 1;
	}
	if ((nl = strchr(line, '\n')) != NULL)
		*nl = '\0';
	if (strncmp(line, "OK ", 3) == 0 && !c->timed_out) {
		log_info("image %s %s", line + 3,
		    c->pull ? "pulled" : "imported");
		if (c->call != NULL)
			shim_reply_image(s, c->call, line + 3, c->pull);
		shim_images_job_done(s, c->want, 0, 0, line + 3);
	} else if (sscanf(line, "ERR %d", &code) == 1 &&
	    strchr(line + 4, ' ')) {
		log_warnx("image %s: %s", c->pull ? "pull" : "import",
		    strchr(line + 4, ' ') + 1);
		if (c->call != NULL)
			mts_ipc_reply_error(c->call, code, "%s",
			    strchr(line + 4, ' ') + 1);
		shim_images_job_done(s, c->want, -1, code,
		    strchr(line + 4, ' ') + 1);
	} else {
		if (c->call != NULL)
			mts_ipc_reply_error(c->call, MTS_ERR_IO,
			    "image helper failed%s",
			    c->timed_out ? " (timed out)" : "");
		shim_images_job_done(s, c->want, -1, MTS_ERR_IO,
		    c->timed_out ? "image helper timed out"
		                 : "image helper failed");
	}
}

/* Delivers a finished child's result and frees it. */
static void
child_done(struct shim *s, struct shim_child *c)
{
	struct shim_task *t = shim_task_find(s, c->task);
	int ok = WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0 &&
	    !c->timed_out;

	mts_timer_disarm(s->loop, &c->timer);
	child_output(c);
	shim_close_watched(&c->fd, &c->w);
	if (c->kind == SHIM_CHILD_IMAGE) {
		image_done(s, c);
	} else if (c->kind == SHIM_CHILD_PROBE && t != NULL) {
		size_t n = c->out.len < sizeof(t->health_out) - 1
		    ? c->out.len
		    : sizeof(t->health_out) - 1;
		if (c->timed_out)
			snprintf(t->health_out, sizeof(t->health_out),
			    "probe timed out");
		else if (c->out.len > 0 || ok) {
			if (n > 0)
				memcpy(t->health_out, c->out.data, n);
			t->health_out[n] = '\0';
		}
		shim_task_event(s, t,
		    &(struct mts_task_ev){ .type = MTS_EV_PROBE, .ok = ok });
	}
	mts_buf_free(&c->out);
	free(c);
}

/* Finished children (marked by shim_children_reap) are delivered here. */
static void
deliver(struct shim *s)
{
	struct shim_child **pp = &s->children, *c;

	while ((c = *pp) != NULL) {
		if (!c->exited) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		child_done(s, c);
	}
}

/* Reaps every exited child of the shim: helpers and exec sessions get
 * their status; monitors are collected here too (their exits are handled
 * through their pidfd); the rest is remembered a while for an exec
 * session that learns its process's pid late. */
void
shim_children_reap(struct shim *s)
{
	struct shim_child *c;
	pid_t pid;
	int st, mine;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		mine = 0;
		for (c = s->children; c != NULL; c = c->next)
			if (c->pid == pid) {
				c->status = st;
				c->exited = 1;
				mine = 1;
			}
		if (!mine && !shim_exec_reaped(s, pid, st))
			mts_exits_put(&s->exits, pid, st, mts_now());
	}
	deliver(s);
}
