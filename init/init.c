/* init.c: mts-init's main — config, run and state directories, fork+exec of agents with dropped privileges, on common/loop.c (signals, the agents' notify pipes, admin.sock, a timer at the supervisor's next deadline). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "agent.h"
#include "hash.h"
#include "init.h"
#include "ipc.h"
#include "log.h"
#include "loop.h"
#include "mtserr.h"
#include "privdrop.h"
#include "seccomp_policy.h"
#include "xmalloc.h"

#define NOTIFY_FD 3
#define FILTER_FD 4
#define KEY_FD 5

static void run_fx(struct init *, struct mts_init_fxlist *);
static void on_notify(void *, int, uint32_t, mts_time_t);

int
init_find(const struct init *in, const char *name)
{
	size_t i;

	for (i = 0; i < in->core.n; i++)
		if (!in->core.s[i].removed &&
		    strcmp(in->core.s[i].name, name) == 0)
			return (int)i;
	return -1;
}

void
init_event(struct init *in, size_t i, enum mts_sup_event ev)
{
	struct mts_init_fxlist fx = { 0 };
	enum mts_sup_exit x = SUP_EXIT_FAILURE;

	if (ev == SEV_EXIT && in->rt[i].verify_failed)
		x = SUP_EXIT_PERMANENT;
	if (mts_init_event(&in->core, i, ev, x, mts_now(), &fx) < 0)
		log_warnx("agent %s: event %d impossible in state %s",
		    in->core.s[i].name, ev,
		    mts_sup_state_name(in->core.s[i].st));
	run_fx(in, &fx);
	mts_init_fx_free(&fx);
}

static void
exit_event(struct init *in, size_t i, int status)
{
	struct mts_init_fxlist fx = { 0 };
	enum mts_sup_exit x = SUP_EXIT_FAILURE;

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		x = SUP_EXIT_CLEAN;
	if ((WIFEXITED(status) &&
	        (WEXITSTATUS(status) == MTS_EXIT_PERMANENT ||
	            WEXITSTATUS(status) == MTS_EXIT_USAGE)) ||
	    in->rt[i].verify_failed)
		x = SUP_EXIT_PERMANENT;
	in->rt[i].verify_failed = 0;
	(void)mts_init_event(&in->core, i, SEV_EXIT, x, mts_now(), &fx);
	run_fx(in, &fx);
	mts_init_fx_free(&fx);
}

/* --- spawning ---------------------------------------------------------- */

static char *
agent_statedir(const struct init *in, const struct init_agent *a)
{
	return xasprintf("%s/%s", in->conf->statedir, a->name);
}

static char **
build_env(const struct init *in, const struct init_agent *a)
{
	char **env = xcalloc(16, sizeof(char *));
	char *sd = agent_statedir(in, a);
	size_t n = 0;

	env[n++] = xstrdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin");
	env[n++] = xasprintf("MTS_AGENT=%s", a->name);
	env[n++] = xasprintf("MTS_NODE=%s", in->conf->node);
	env[n++] = xasprintf("MTS_NODE_ID=%s", in->node_id);
	env[n++] = xasprintf("MTS_RUNDIR=%s", in->conf->rundir);
	env[n++] = xasprintf("MTS_STATEDIR=%s", sd);
	env[n++] = xasprintf("MTS_CONFIG=%s", in->config_path);
	env[n++] = xasprintf("MTS_NOTIFY_FD=%d", NOTIFY_FD);
	if (a->filter_fd >= 0) {
		env[n++] = xasprintf("MTS_SECCOMP_FD=%d", FILTER_FD);
		if (a->seccomp_debug)
			env[n++] = xstrdup("MTS_SECCOMP_DEBUG=1");
	}
	if (in->conf->debug)
		env[n++] = xstrdup("MTS_DEBUG=1");
	if (a->node_key)
		env[n++] = xasprintf("MTS_NODE_KEY_FD=%d", KEY_FD);
#ifdef __SANITIZE_ADDRESS__
	/* Sanitizer builds (make check): LeakSanitizer's exit check needs
	 * ptrace, which no agent policy allows, so it is off in sandboxed
	 * agents; the rest of the runtime options are passed on. */
	{
		const char *o = getenv("ASAN_OPTIONS");

		env[n++] = xasprintf("ASAN_OPTIONS=%s%sdetect_leaks=%d",
		    o ? o : "", o ? ":" : "", a->filter_fd < 0);
	}
#endif
	free(sd);
	return env;
}

static char **
build_argv(const struct init *in, const struct init_agent *a)
{
	size_t n = 0, i;
	char **argv;

	for (i = 0; a->args[i]; i++)
		;
	argv = xcalloc(i + 4, sizeof(char *));
	argv[n++] = a->exec;
	argv[n++] = "-c";
	argv[n++] = (char *)in->config_path;
	for (i = 0; a->args[i]; i++)
		argv[n++] = a->args[i];
	return argv;
}

/* In the child: only the fds the agent needs, as 0..4, then the drop. */
static void __attribute__((noreturn))
child_exec(const struct init_agent *a, int logfd, int notify_w, char **argv,
    char **env, const char *dir, const char *keyfile)
{
	struct mts_privdrop d = { .chroot = a->chroot,
		.uid = a->uid,
		.gid = a->gid,
		.groups = a->groups,
		.ngroups = a->ngroups,
		.caps = a->caps,
		.nofile = a->nofile };
	sigset_t all;
	char err[256];
	int nul, l, w, f = -1, k = -1, last = NOTIFY_FD;

	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	setsid();
	nul = open("/dev/null", O_RDWR);
	l = fcntl(logfd, F_DUPFD, 10);
	w = fcntl(notify_w, F_DUPFD, 10);
	if (a->filter_fd >= 0)
		f = fcntl(a->filter_fd, F_DUPFD, 10);
	/* A fresh open file (own offset) of the key, only for this agent. */
	if (a->node_key && (k = open(keyfile, O_RDONLY | O_NOFOLLOW)) >= 0)
		k = fcntl(k, F_DUPFD, 10);
	if (nul < 0 || l < 0 || w < 0 || dup2(nul, 0) < 0 || dup2(l, 1) < 0 ||
	    dup2(l, 2) < 0 || dup2(w, NOTIFY_FD) < 0 ||
	    (f >= 0 && dup2(f, FILTER_FD) < 0) ||
	    (a->node_key && (k < 0 || dup2(k, KEY_FD) < 0)))
		_exit(MTS_EXIT_FAILURE);
	if (f >= 0)
		last = FILTER_FD;
	if (k >= 0)
		last = KEY_FD;
	if (f < 0 && k >= 0) /* keep the numbers fixed: 4 is /dev/null */
		(void)dup2(nul, FILTER_FD);
	close_range(last + 1, ~0U, 0);
	if (chdir(dir) < 0) {
		dprintf(2, "mts-init: %s: chdir %s: %s\n", a->name, dir,
		    strerror(errno));
		_exit(MTS_EXIT_FAILURE);
	}
	if (mts_privdrop(&d, err, sizeof(err)) < 0) {
		dprintf(2, "mts-init: %s: privilege drop: %s\n", a->name, err);
		_exit(MTS_EXIT_PERMANENT);
	}
	execve(a->exec, argv, env);
	dprintf(2, "mts-init: %s: exec %s: %s\n", a->name, a->exec,
	    strerror(errno));
	_exit(MTS_EXIT_FAILURE);
}

static int
prepare_statedir(const struct init *in, const struct init_agent *a)
{
	char *sd = agent_statedir(in, a);
	int rc = 0;

	if ((mkdir(sd, 0700) < 0 && errno != EEXIST) ||
	    chown(sd, a->uid, a->gid) < 0 || chmod(sd, 0700) < 0) {
		log_warn("agent %s: state directory %s", a->name, sd);
		rc = -1;
	}
	free(sd);
	return rc;
}

/* An agent's socket directory <rundir>/<name> (docs/agents.md section 6):
 * only its user can create entries in it, the admin group reaches the
 * sockets (setgid: sockets made there belong to the group). Whatever else
 * holds the name is removed first; the run directory is root's alone, so
 * nothing can swap it meanwhile. */
static int
prepare_sockdir(const struct init_conf *c, const char *name, uid_t uid)
{
	char dir[PATH_MAX];
	struct stat st;

	if (mts_ipc_agent_dir(dir, sizeof(dir), c->rundir, name) < 0) {
		log_warnx("agent %s: no socket directory for that name", name);
		return -1;
	}
	if (lstat(dir, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(dir) < 0)
		goto fail;
	if ((mkdir(dir, 02750) < 0 && errno != EEXIST) ||
	    lchown(dir, uid, c->admin_gid) < 0 || chmod(dir, 02750) < 0)
		goto fail;
	return 0;
fail:
	log_warn("agent %s: socket directory %s", name, dir);
	return -1;
}

static int
spawn(struct init *in, size_t i)
{
	struct init_rt *rt = &in->rt[i];
	const struct init_agent *a = rt->conf;
	char **env, **argv, *sd;
	int p[2], logfd = STDERR_FILENO;
	pid_t pid;
	size_t k;

	if (prepare_statedir(in, a) < 0 ||
	    prepare_sockdir(in->conf, a->name, a->uid) < 0 ||
	    pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (a->log != NULL &&
	    (logfd = open(a->log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	         0640)) < 0) {
		log_warn("agent %s: log file %s", a->name, a->log);
		logfd = STDERR_FILENO;
	}
	env = build_env(in, a);
	argv = build_argv(in, a);
	sd = agent_statedir(in, a);
	pid = fork();
	if (pid == 0)
		child_exec(a, logfd, p[1], argv, env, sd, in->conf->key);
	for (k = 0; env[k]; k++)
		free(env[k]);
	free(env);
	free(argv);
	free(sd);
	close(p[1]);
	if (logfd != STDERR_FILENO)
		close(logfd);
	if (pid < 0) {
		log_warn("agent %s: fork", a->name);
		close(p[0]);
		return -1;
	}
	(void)fcntl(p[0], F_SETFL, O_NONBLOCK);
	rt->pid = pid;
	rt->notify_fd = p[0];
	if ((rt->notify_w = mts_loop_watch(in->loop, p[0], MTS_LOOP_IN,
	         "notify", on_notify, in)) == NULL)
		fatalx("agent %s: cannot watch its notify pipe", a->name);
	rt->nlen = 0;
	rt->sigsys[0] = '\0';
	rt->status[0] = '\0';
	rt->seccomp_on = 0;
	log_info("agent %s: started pid %d (%s, uid %u)", a->name, (int)pid,
	    a->exec, (unsigned)a->uid);
	return 0;
}

static void
run_fx(struct init *in, struct mts_init_fxlist *fx)
{
	size_t k;

	for (k = 0; k < fx->n; k++) {
		struct mts_init_fx *e = &fx->v[k];
		struct init_rt *rt = &in->rt[e->agent];
		const char *name = in->core.s[e->agent].name;

		switch (e->type) {
		case FX_SPAWN:
			if (spawn(in, e->agent) < 0)
				exit_event(in, e->agent, 1 << 8);
			break;
		case FX_SIGNAL:
			if (rt->pid <= 0)
				break;
			log_info("agent %s: sending %s to pid %d", name,
			    sigabbrev_np(e->sig), (int)rt->pid);
			if (kill(-rt->pid, e->sig) < 0)
				(void)kill(rt->pid, e->sig);
			break;
		case FX_BACKOFF:
			log_info("agent %s: restart #%u in %lld ms", name,
			    in->core.s[e->agent].restarts,
			    (long long)e->delay_ms);
			break;
		case FX_FAILED:
			log_warnx("agent %s: permanent failure, not restarted "
			          "(mtsctl agent start %s once fixed)",
			    name, name);
			break;
		}
	}
}

/* --- readiness and exits ---------------------------------------------- */

/* Reads /proc/PID/status field `key` into out. */
static int
proc_field(pid_t pid, const char *key, char *out, size_t outlen)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			snprintf(out, outlen, "%s",
			    line + kl + 1 + strspn(line + kl + 1, " \t"));
			out[strcspn(out, "\n")] = '\0';
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

/* The agent says it is ready: check that it really is sandboxed. 0 yes,
 * -1 no, 1 the process is already gone (its exit decides what happens). */
static int
verify(struct init *in, size_t i)
{
	struct init_rt *rt = &in->rt[i];
	const struct init_agent *a = rt->conf;
	char v[128], want[128];

	if (proc_field(rt->pid, "State", v, sizeof(v)) < 0 || v[0] == 'Z' ||
	    v[0] == 'X')
		return 1;
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", (unsigned)a->uid,
	    (unsigned)a->uid, (unsigned)a->uid, (unsigned)a->uid);
	if (proc_field(rt->pid, "Uid", v, sizeof(v)) < 0 || strcmp(v, want)) {
		log_warnx("agent %s: not running as uid %u", a->name,
		    (unsigned)a->uid);
		return -1;
	}
	if (proc_field(rt->pid, "NoNewPrivs", v, sizeof(v)) < 0 ||
	    strcmp(v, "1") != 0) {
		log_warnx("agent %s: no_new_privs is not set", a->name);
		return -1;
	}
	if (a->filter_fd >= 0 &&
	    (proc_field(rt->pid, "Seccomp", v, sizeof(v)) < 0 ||
	        strcmp(v, "2") != 0)) {
		log_warnx("agent %s: reported ready without installing its "
		          "seccomp filter (see docs/agents.md)",
		    a->name);
		return -1;
	}
	rt->seccomp_on = a->filter_fd >= 0;
	return 0;
}

static void
notify_line(struct init *in, size_t i, const char *line)
{
	struct init_rt *rt = &in->rt[i];
	unsigned nr, arch;
	int r;

	if (strcmp(line, "READY") == 0) {
		if (in->core.s[i].st != SUP_STARTING || rt->conf == NULL)
			return;
		if ((r = verify(in, i)) != 0) {
			if (r < 0) {
				rt->verify_failed = 1;
				(void)kill(-rt->pid, SIGKILL);
			}
			return;
		}
		log_info("agent %s: ready (pid %d, %lld ms)",
		    in->core.s[i].name, (int)rt->pid,
		    (long long)(mts_now() - in->core.s[i].started));
		init_event(in, i, SEV_READY);
	} else if (strncmp(line, "STATUS ", 7) == 0) {
		snprintf(rt->status, sizeof(rt->status), "%s", line + 7);
		log_info("agent %s: %s", in->core.s[i].name, rt->status);
	} else if (sscanf(line, "SIGSYS %u %u", &nr, &arch) == 2) {
		mts_seccomp_syscall_name(arch, (int)nr, rt->sigsys,
		    sizeof(rt->sigsys));
	} else {
		log_warnx("agent %s: unknown notification '%.40s'",
		    in->core.s[i].name, line);
	}
}

static void
notify_close(struct init_rt *rt)
{
	mts_watch_free(rt->notify_w);
	rt->notify_w = NULL;
	if (rt->notify_fd >= 0)
		close(rt->notify_fd);
	rt->notify_fd = -1;
}

static void
notify_read(struct init *in, size_t i)
{
	struct init_rt *rt = &in->rt[i];
	ssize_t r;
	char *nl;

	while (rt->notify_fd >= 0) {
		r = read(rt->notify_fd, rt->nbuf + rt->nlen,
		    sizeof(rt->nbuf) - 1 - rt->nlen);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0) {
			notify_close(rt);
			return;
		}
		rt->nlen += r;
		rt->nbuf[rt->nlen] = '\0';
		while ((nl = strchr(rt->nbuf, '\n')) != NULL) {
			*nl = '\0';
			notify_line(in, i, rt->nbuf);
			rt->nlen -= nl + 1 - rt->nbuf;
			memmove(rt->nbuf, nl + 1, rt->nlen + 1);
		}
		if (rt->nlen == sizeof(rt->nbuf) - 1)
			rt->nlen = 0; /* a line too long: dropped */
	}
}

static void
describe_exit(struct init *in, size_t i, int status)
{
	struct init_rt *rt = &in->rt[i];
	const char *name = in->core.s[i].name;
	int sig;

	if (WIFEXITED(status)) {
		snprintf(rt->last_exit, sizeof(rt->last_exit), "exit %d",
		    WEXITSTATUS(status));
		log_info("agent %s: pid %d exited with code %d", name,
		    (int)rt->pid, WEXITSTATUS(status));
		return;
	}
	sig = WTERMSIG(status);
	snprintf(rt->last_exit, sizeof(rt->last_exit), "signal %d (SIG%s)%s%s",
	    sig, sigabbrev_np(sig) ?: "?", *rt->sigsys ? ": " : "", rt->sigsys);
	if (sig != SIGSYS)
		log_info("agent %s: pid %d killed by signal %d (SIG%s)", name,
		    (int)rt->pid, sig, sigabbrev_np(sig) ?: "?");
	else if (*rt->sigsys)
		log_warnx("agent %s: pid %d killed by SIGSYS: its seccomp "
		          "policy denied syscall %s",
		    name, (int)rt->pid, rt->sigsys);
	else
		log_warnx("agent %s: pid %d killed by SIGSYS: its seccomp "
		          "policy denied a syscall (seccomp_debug = yes names it)",
		    name, (int)rt->pid);
}

static void
reap(struct init *in)
{
	int status;
	pid_t pid;
	size_t i;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < in->core.n; i++)
			if (in->rt[i].pid == pid)
				break;
		if (i == in->core.n) {
			log_debug("reaped orphan pid %d", (int)pid);
			continue;
		}
		notify_read(in, i); /* a last SIGSYS report */
		notify_close(&in->rt[i]);
		describe_exit(in, i, status);
		in->rt[i].pid = 0;
		in->rt[i].seccomp_on = 0;
		/* The process group may hold leftovers of the agent. */
		(void)kill(-pid, SIGKILL);
		exit_event(in, i, status);
	}
}

/* --- setup ------------------------------------------------------------ */

static void
make_dirs(const struct init_conf *c)
{
	if (mkdir(c->statedir, 0755) < 0 && errno != EEXIST)
		fatal("%s", c->statedir);
	if (mkdir(c->rundir, 0750) < 0 && errno != EEXIST)
		fatal("%s", c->rundir);
	/* Group members (admins, agents) reach the agents' directories;
	 * only root creates entries (docs/agents.md section 6). */
	if (chown(c->rundir, 0, c->admin_gid) < 0 || chmod(c->rundir, 0750) < 0)
		fatal("%s", c->rundir);
	if (prepare_sockdir(c, "init", 0) < 0)
		fatalx("cannot make init's socket directory");
}

/* Reads the node's static key, creating it (0600, root) on first start,
 * and derives the node id every agent gets as MTS_NODE_ID. */
static void
load_node_key(struct init *in)
{
	uint8_t key[32], pub[32], id[MTS_NODE_ID_LEN];
	const char *path = in->conf->key;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT) {
		randombytes_buf(key, sizeof(key));
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, key, sizeof(key)) != sizeof(key) ||
		    fsync(fd) < 0)
			fatal("creating the node key %s", path);
		close(fd);
		log_info("created the node key %s", path);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	}
	if (fd < 0 || read(fd, key, sizeof(key)) != sizeof(key))
		fatalx("%s: cannot read a 32-byte node key", path);
	close(fd);
	if (crypto_scalarmult_base(pub, key) != 0)
		fatalx("%s: not a usable X25519 key", path);
	sodium_memzero(key, sizeof(key));
	mts_node_id(id, pub);
	mts_hex(in->node_id, id, sizeof(id));
}

static void
add_agents(struct init *in, struct init_conf *c)
{
	size_t i, j, idx[64], n;

	in->rt = xcalloc(c->n ? c->n : 1, sizeof(*in->rt));
	for (i = 0; i < c->n; i++) {
		mts_init_add(&in->core, c->a[i].name, &c->a[i].p);
		in->rt[i].conf = &c->a[i];
		in->rt[i].notify_fd = -1;
	}
	for (i = 0; i < c->n; i++) {
		for (n = 0, j = 0; c->a[i].after[j] && n < 64; j++)
			idx[n++] = (size_t)init_find(in, c->a[i].after[j]);
		mts_init_set_after(&in->core, i, idx, n);
	}
}

static void
kill_orphans(void)
{
	char path[300], buf[512], *p;
	struct dirent *de;
	DIR *d = opendir("/proc");
	int ppid;
	FILE *f;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == getpid()) {
			log_info("killing leftover process %s", de->d_name);
			(void)kill(atoi(de->d_name), SIGKILL);
		}
		fclose(f);
	}
	if (d != NULL)
		closedir(d);
	while (waitpid(-1, NULL, 0) > 0)
		;
}

/* --- the loop ---------------------------------------------------------- */

/* An agent's notify pipe (the agents' array moves on reload: the agent is
 * found by its descriptor). */
static void
on_notify(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct init *in = arg;
	size_t i;

	for (i = 0; i < in->core.n; i++)
		if (in->rt[i].notify_fd == fd) {
			notify_read(in, i);
			return;
		}
}

static void
on_sigchld(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	reap(arg);
}

static void
on_sighup(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	char err[512];

	if (init_reload(arg, NULL, NULL, NULL, err, sizeof(err)) < 0)
		log_warnx("reload refused, old config kept: %s", err);
}

static void
on_stop(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	struct init *in = arg;
	struct mts_init_fxlist fx = { 0 };

	if (in->core.shutting_down)
		return;
	log_info("stopping every agent (SIG%s)", sigabbrev_np(si->ssi_signo));
	mts_init_shutdown(&in->core, now, &fx);
	run_fx(in, &fx);
	mts_init_fx_free(&fx);
}

static void
on_deadline(void *arg, mts_time_t now)
{
	struct init *in = arg;
	struct mts_init_fxlist fx = { 0 };

	mts_init_tick(&in->core, now, &fx);
	run_fx(in, &fx);
	mts_init_fx_free(&fx);
}

/* The timer follows the core's next deadline. */
static void
arm_deadline(struct init *in)
{
	mts_time_t next = mts_init_next_deadline(&in->core);

	if (next == MTS_TIME_NEVER)
		mts_timer_disarm(in->loop, &in->deadline);
	else if (!in->deadline.armed || in->deadline.when != next)
		mts_timer_arm(in->loop, &in->deadline, next);
}

/* After every turn (any event may move a deadline): the timer is re-armed;
 * the node is ready once every agent is up; a shutdown ends when every
 * agent is down. */
static void
after_turn(void *arg, mts_time_t now)
{
	struct init *in = arg;

	arm_deadline(in);
	if (!in->node_ready_logged && mts_init_all_up(&in->core)) {
		in->node_ready_logged = 1;
		log_info("node ready: %zu agents up in %lld ms", in->core.n,
		    (long long)(mts_now() - in->started));
	}
	if (in->core.shutting_down && mts_init_all_down(&in->core))
		mts_loop_stop(in->loop);
}

/* The loop and its signals, before anything is started. */
static void
loop_setup(struct init *in)
{
	if ((in->loop = mts_loop_new()) == NULL ||
	    mts_loop_signal(in->loop, SIGCHLD, on_sigchld, in) < 0 ||
	    mts_loop_signal(in->loop, SIGTERM, on_stop, in) < 0 ||
	    mts_loop_signal(in->loop, SIGINT, on_stop, in) < 0 ||
	    mts_loop_signal(in->loop, SIGHUP, on_sighup, in) < 0 ||
	    mts_loop_on_turn(in->loop, after_turn, in) < 0)
		fatalx("cannot set up the loop");
	mts_timer_init(&in->deadline, "supervisor", on_deadline, in);
}

static void
usage(void)
{
	fprintf(stderr, "usage: mts-init [-dn] [-c CONFIG]\n");
	exit(MTS_EXIT_USAGE);
}

/* -n: the effective configuration, after the full check passed. */
static int
print_config(struct init *in)
{
	struct mts_cfg *cfg = NULL;
	char err[1024];

	if (mts_cfg_load(in->config_path, mts_conf_schema(), &cfg, err,
	        sizeof(err)) == 0)
		mts_cfg_print(cfg, stdout);
	mts_cfg_free(cfg);
	mts_init_conf_free(in->conf);
	return MTS_EXIT_OK;
}

int
main(int argc, char **argv)
{
	struct init in = { 0 };
	const char *config = MTS_DEFAULT_CONFIG;
	char err[1024], real[PATH_MAX];
	int c, print = 0, debug = 0;
	size_t i;

	while ((c = getopt(argc, argv, "c:ndh")) != -1) {
		if (c == 'c')
			config = optarg;
		else if (c == 'n')
			print = 1;
		else if (c == 'd')
			debug = 1;
		else
			usage();
	}
	log_init("init", debug ? MTS_LOG_DEBUG : MTS_LOG_INFO);
	in.started = mts_now();
	in.config_path = realpath(config, real) ? real : config;
	if (mts_init_conf_load(in.config_path, &in.conf, err, sizeof(err)) <
	    0) {
		fprintf(stderr,
		    "mts-init: %s\nmts-init: configuration refused, "
		    "nothing started\n",
		    err);
		return MTS_EXIT_USAGE;
	}
	if (print)
		return print_config(&in);
	if (in.conf->debug)
		log_setlevel(MTS_LOG_DEBUG);
	if (geteuid() != 0)
		fatalx("mts-init must run as root (it drops each agent's "
		       "privileges)");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		fatal("PR_SET_CHILD_SUBREAPER");
	loop_setup(&in);
	make_dirs(in.conf);
	if (mts_crypto_init() < 0)
		fatalx("libsodium failed to initialize");
	load_node_key(&in);
	if (init_admin_open(&in, err, sizeof(err)) < 0)
		fatalx("%s", err);
	if (in.admin != NULL && mts_loop_add_server(in.loop, in.admin) < 0)
		fatalx("cannot serve admin.sock");
	add_agents(&in, in.conf);
	log_info("mts-init %s: node %s (id %s), %zu agents", MTS_VERSION,
	    in.conf->node, in.node_id, in.conf->n);
	for (i = 0; i < in.core.n; i++)
		init_event(&in, i, SEV_START);
	arm_deadline(&in);
	if (mts_loop_run(in.loop) != 0)
		fatalx("the loop failed");
	kill_orphans();
	if (in.admin != NULL)
		mts_loop_remove_server(in.loop, in.admin);
	mts_ipc_server_close(in.admin);
	mts_loop_free(in.loop);
	log_info("all agents stopped");
	mts_init_core_free(&in.core);
	mts_init_conf_free(in.conf);
	free(in.rt);
	return MTS_EXIT_OK;
}
