/* monitor.c: mts-shim-monitor, one small process per container — creates and starts it, copies its output into rotated log files on common/loop.c, and records its exit status (outlives the shim). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"
#include "loop.h"

/*
 * Usage: mts-shim-monitor, with fd 3 a stream socket to the shim. The
 * shim starts one ahead of need; it waits for its job on fd 3: RUNTIME
 * ROOT ID TASKDIR LOGMAX LOGKEEP CGROUPDIR, each ended by a NUL (EOF
 * instead: it exits quietly). It then writes "R <pid>\n" on fd 3 once the
 * container runs or "E <message>\n" if it could not be started, and
 * closes it. When the container's init exits the monitor writes
 * TASKDIR/exit ("<code> <signal> <oom> <unix ms>\n", atomically), deletes
 * the container from the runtime and exits. Its working directory is
 * TASKDIR. Log segments are TASKDIR/logs/<20-digit absolute offset>.
 */

#define STATUS_FD 3
#define JOB_FIELDS 7
#define JOB_MAX 16384
#define DRAIN_MS 500 /* output still copied after the container's exit */

struct mon {
	const char *runtime, *root, *id, *dir, *cgdir;
	long long logmax;
	int logkeep;
	int logfd;
	uint64_t seg_start, offset; /* current segment start, bytes so far */
	char logdir[4096];
	struct mts_loop *loop;
	int rfd;                 /* the container's output pipe */
	struct mts_watch *out_w; /* rfd's, NULL once it hung up */
	pid_t cpid;              /* the container's init */
	int exited, status;      /* its wait status, once exited */
	struct mts_timer drain;  /* the end of the drain after its exit */
};

static void die_status(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
die_status(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	memcpy(buf, "E ", 2);
	va_start(ap, fmt);
	n = vsnprintf(buf + 2, sizeof(buf) - 3, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(buf) - 3)
		n = (int)sizeof(buf) - 3;
	buf[2 + n] = '\n';
	if (write(STATUS_FD, buf, (size_t)n + 3) < 0)
		_exit(2);
	_exit(1);
}

static int
seg_name(char *out, size_t outlen, const char *dir, uint64_t off)
{
	int n = snprintf(out, outlen, "%s/%020" PRIu64, dir, off);

	return (n < 0 || (size_t)n >= outlen) ? -1 : 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Lists segment offsets in ascending order; returns how many. */
static size_t
list_segments(const char *dir, uint64_t *out, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	char *end;
	DIR *d = opendir(dir);

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		if (strlen(de->d_name) != 20)
			continue;
		out[n] = strtoull(de->d_name, &end, 10);
		if (*end == '\0')
			n++;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), cmp_u64);
	return n;
}

static void
open_segment(struct mon *m, uint64_t start)
{
	char path[4200];

	if (m->logfd >= 0)
		close(m->logfd);
	m->logfd = -1;
	if (seg_name(path, sizeof(path), m->logdir, start) == 0)
		m->logfd =
		    open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	m->seg_start = start;
}

/* Continues after the newest segment (a restarted container keeps its
 * log and offsets). */
static void
log_open(struct mon *m)
{
	uint64_t segs[4096];
	char path[4200];
	struct stat sb;
	size_t n;

	snprintf(m->logdir, sizeof(m->logdir), "%s/logs", m->dir);
	mkdir(m->logdir, 0750);
	m->logfd = -1;
	n = list_segments(m->logdir, segs, 4096);
	if (n == 0) {
		open_segment(m, 0);
		m->offset = 0;
		return;
	}
	open_segment(m, segs[n - 1]);
	seg_name(path, sizeof(path), m->logdir, segs[n - 1]);
	m->offset =
	    segs[n - 1] + (stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0);
}

static void
log_rotate(struct mon *m)
{
	uint64_t segs[4096];
	char path[4200];
	size_t n, i;

	open_segment(m, m->offset);
	n = list_segments(m->logdir, segs, 4096);
	for (i = 0; n > (size_t)m->logkeep && i < n - (size_t)m->logkeep; i++)
		if (seg_name(path, sizeof(path), m->logdir, segs[i]) == 0)
			unlink(path);
}

static void
log_write(struct mon *m, const char *buf, size_t len)
{
	ssize_t w;

	if (m->offset > m->seg_start &&
	    m->offset - m->seg_start + len > (uint64_t)m->logmax)
		log_rotate(m);
	if (m->logfd < 0)
		return;
	w = write(m->logfd, buf, len);
	if (w > 0)
		m->offset += (uint64_t)w;
}

/* Runs argv with stdout/stderr on outfd; returns its wait status. */
static int
run(char *const argv[], int outfd, int errfd)
{
	int st, nul;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* The runtime and the container start with default signal
		 * handling, not the monitor's. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(outfd, 1) < 0 ||
		    dup2(errfd, 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* The last "msg" of the runtime's JSON log, for error reports. */
static void
runtime_error(const struct mon *m, char *out, size_t outlen)
{
	char path[4200], buf[8192], *p, *e;
	ssize_t n;
	int fd;

	snprintf(out, outlen, "runtime failed");
	snprintf(path, sizeof(path), "%s/runtime.log", m->dir);
	if ((fd = open(path, O_RDONLY)) < 0)
		return;
	if (lseek(fd, 0, SEEK_END) > (off_t)sizeof(buf) - 1)
		lseek(fd, -(off_t)(sizeof(buf) - 1), SEEK_END);
	else
		lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* The last "msg" field of the last line is the error. */
	for (p = NULL, e = buf; (e = strstr(e, "\"msg\":\"")) != NULL; e++)
		p = e + 7;
	if (p == NULL)
		return;
	for (e = p; *e != '\0' && !(*e == '"' && e[-1] != '\\'); e++)
		;
	snprintf(out, outlen, "%.*s", (int)(e - p), p);
}

static long long
oom_kills(const char *cgdir)
{
	static const char *const files[] = { "memory.oom_control",
		"memory.events" };
	char path[4200], line[256];
	long long v;
	size_t i;
	FILE *f;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", cgdir, files[i]);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "oom_kill %lld", &v) == 1) {
				fclose(f);
				return v;
			}
		fclose(f);
	}
	return 0;
}

static void
write_exit(const struct mon *m, int status)
{
	char path[4200], buf[128];
	struct timespec ts;
	int n, code = -1, sig = 0;

	if (WIFEXITED(status))
		code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status)) {
		sig = WTERMSIG(status);
		code = 128 + sig;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf), "%d %d %d %lld\n", code, sig,
	    oom_kills(m->cgdir) > 0,
	    (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	snprintf(path, sizeof(path), "%s/exit", m->dir);
	(void)mts_write_atomic(path, buf, (size_t)n, 0644, 1);
}

/* Creates and starts the container in one runtime call (`run --detach`:
 * one runtime start-up instead of two); returns its pid, or reports and
 * exits. */
static pid_t
start(struct mon *m, int outfd)
{
	char bundle[4200], pidfile[4200], rlog[4200], buf[32], msg[512];
	char *runv[] = { (char *)m->runtime, "--root", (char *)m->root, "--log",
		rlog, "--log-format", "json", "run", "--detach", "--bundle",
		bundle, "--pid-file", pidfile, (char *)m->id, NULL };
	ssize_t n;
	int fd;

	snprintf(bundle, sizeof(bundle), "%s/bundle", m->dir);
	snprintf(pidfile, sizeof(pidfile), "%s/pid", m->dir);
	snprintf(rlog, sizeof(rlog), "%s/runtime.log", m->dir);
	unlink(pidfile);
	if (run(runv, outfd, outfd) != 0) {
		runtime_error(m, msg, sizeof(msg));
		die_status("%s", msg);
	}
	if ((fd = open(pidfile, O_RDONLY)) < 0 ||
	    (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		die_status("runtime wrote no pid file");
	close(fd);
	buf[n] = '\0';
	return (pid_t)atoi(buf);
}

/* `runtime delete -f ID` once the exit is recorded (the OOM count is read
 * from the container's cgroup first): the shim learns of the exit when
 * this process ends, with the runtime's state already gone, so it runs
 * no runtime command of its own on the exit path. */
static void
delete_container(const struct mon *m)
{
	char *delv[] = { (char *)m->runtime, "--root", (char *)m->root,
		"delete", "-f", (char *)m->id, NULL };
	int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (nul >= 0) {
		run(delv, nul, nul);
		close(nul);
	}
}

/* The container's exit is recorded, the runtime forgets it, the monitor
 * ends. */
static void
finish(struct mon *m)
{
	mts_timer_disarm(m->loop, &m->drain);
	write_exit(m, m->status);
	delete_container(m);
	mts_loop_stop(m->loop);
}

static void
on_output(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct mon *m = arg;
	char buf[65536];
	ssize_t n;

	if (events & EPOLLIN) {
		if ((n = read(fd, buf, sizeof(buf))) > 0)
			log_write(m, buf, (size_t)n);
		return;
	}
	/* Hung up, nothing left: once the container has exited, done. */
	mts_watch_free(m->out_w);
	m->out_w = NULL;
	if (m->exited)
		finish(m);
}

static void
on_drain_over(void *arg, mts_time_t now)
{
	finish(arg);
}

/* Reaps every child (the monitor is a subreaper); the container's exit
 * starts the drain: what is buffered in the pipe is still copied, for at
 * most DRAIN_MS or until it hangs up. */
static void
on_sigchld(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	struct mon *m = arg;
	pid_t w;
	int st;

	while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
		if (w != m->cpid || m->exited)
			continue;
		m->exited = 1;
		m->status = st;
		if (m->out_w == NULL) {
			finish(m);
			return;
		}
		mts_timer_arm(m->loop, &m->drain, now + DRAIN_MS);
	}
}

/* Reads the job the shim sends on fd 3: RUNTIME ROOT ID TASKDIR LOGMAX
 * LOGKEEP CGROUPDIR, each ended by a NUL. Returns 0, or -1 at EOF before
 * a whole job (the shim let the spare go, or is gone). */
static int
read_job(struct mon *m)
{
	static char buf[JOB_MAX];
	char *f[JOB_FIELDS];
	size_t len = 0, n = 0, i;
	ssize_t r;

	while (n < JOB_FIELDS) {
		if (len == sizeof(buf))
			die_status("monitor job over %zu bytes", sizeof(buf));
		r = read(STATUS_FD, buf + len, sizeof(buf) - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		len += (size_t)r;
		for (n = 0, i = 0; i < len && n < JOB_FIELDS; i++)
			if (buf[i] == '\0')
				n++;
	}
	f[0] = buf;
	for (n = 1, i = 0; n < JOB_FIELDS; i++)
		if (buf[i] == '\0')
			f[n++] = buf + i + 1;
	m->runtime = f[0];
	m->root = f[1];
	m->id = f[2];
	m->dir = f[3];
	m->logmax = atoll(f[4]) > 0 ? atoll(f[4]) : 10 << 20;
	m->logkeep = atoi(f[5]) > 0 ? atoi(f[5]) : 3;
	m->cgdir = f[6];
	return 0;
}

int
main(int argc, char **argv)
{
	struct mon m;
	int lp[2];

	if (argc != 1) {
		fprintf(stderr,
		    "usage: mts-shim-monitor (started by mts-shim, "
		    "which sends the job on fd 3)\n");
		return 64;
	}
	memset(&m, 0, sizeof(m));
	log_init("mts-shim-monitor", MTS_LOG_WARN);
	/* Everything that does not depend on the job is done before it
	 * comes: the shim keeps one monitor waiting, so this is off the
	 * start path. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	setsid();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die_status("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	/* Nobody waits on the monitor's turns: no slow-turn warnings. */
	if ((m.loop = mts_loop_new()) == NULL ||
	    mts_loop_signal(m.loop, SIGCHLD, on_sigchld, &m) < 0 ||
	    pipe2(lp, O_CLOEXEC) < 0)
		die_status("monitor setup: %s", strerror(errno));
	mts_loop_set_slow_ms(m.loop, 0);
	mts_timer_init(&m.drain, "drain", on_drain_over, &m);
	fcntl(lp[0], F_SETPIPE_SZ, 1 << 20);
	if (read_job(&m) != 0) {
		mts_loop_free(m.loop);
		return 0;
	}
	/* The runtime and the container must not inherit the status socket:
	 * the shim reads the report at its end, which a copy in a container
	 * would hold off for the container's whole life. */
	fcntl(STATUS_FD, F_SETFD, FD_CLOEXEC);
	/* The task directory as working directory is how a restarted shim
	 * recognises this monitor (/proc/PID/cwd). */
	if (chdir(m.dir) < 0)
		die_status("%s: %s", m.dir, strerror(errno));
	m.cpid = start(&m, lp[1]);
	close(lp[1]);
	dprintf(STATUS_FD, "R %d\n", (int)m.cpid);
	close(STATUS_FD);
	log_open(&m);
	m.rfd = lp[0];
	if ((m.out_w = mts_loop_watch(m.loop, m.rfd, MTS_LOOP_IN, "output",
	         on_output, &m)) == NULL)
		_exit(3);
	if (mts_loop_run(m.loop) != 0)
		_exit(3);
	mts_loop_free(m.loop);
	return 0;
}
