/* shim_task.c: mts-shim's task I/O — bundles, monitor processes, runtime calls, effects of the core, persistence, recovery after a restart. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "bundle_core.h"
#include "inroot.h"
#include "fsutil.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "shim.h"
#include "statestore.pb-c.h"
#include "taskid.h"
#include "xmalloc.h"

extern char **environ;

static int
pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

struct shim_task *
shim_task_find(struct shim *s, const char *id)
{
	struct shim_task *t;

	for (t = s->tasks; t != NULL; t = t->next)
		if (strcmp(t->core.id, id) == 0)
			return t;
	return NULL;
}

static int
tpath(char *out, size_t outlen, const struct shim_task *t, const char *name)
{
	int n = snprintf(out, outlen, "%s/%s", t->dir, name);

	return (n < 0 || (size_t)n >= outlen) ? -MTS_ERR_TOOBIG : 0;
}

char *
shim_read_text(const char *path, size_t max)
{
	char *buf = NULL;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf = xmalloc(max + 1);
	n = read(fd, buf, max);
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* --- policy from the spec --------------------------------------------- */

static int
policy_from_spec(const struct shim *s, const Mts__Shim__TaskSpec *sp,
    struct mts_task_policy *p, char *err, size_t errlen)
{
	const Mts__Shim__HealthCheck *h = sp->health;

	memset(p, 0, sizeof(*p));
	p->grace = sp->stop_grace_ms ? sp->stop_grace_ms : s->cfg.grace;
	if (sp->restart != NULL) {
		if (mts_restart_parse(sp->restart->condition, &p->restart)) {
			snprintf(err, errlen,
			    "restart condition \"%s\": "
			    "expected none, on-failure or any",
			    sp->restart->condition);
			return -MTS_ERR_INVAL;
		}
		p->max_attempts = sp->restart->max_attempts;
		p->delay = sp->restart->delay_ms;
		p->max_delay = sp->restart->max_delay_ms;
		p->window = sp->restart->window_ms;
	}
	if (h != NULL && h->n_test > 0 && strcmp(h->test[0], "NONE") != 0) {
		if (strcmp(h->test[0], "CMD") &&
		    strcmp(h->test[0], "CMD-SHELL") &&
		    strcmp(h->test[0], "HTTP") && strcmp(h->test[0], "TCP")) {
			snprintf(err, errlen,
			    "healthcheck test \"%s\": expected "
			    "CMD, CMD-SHELL, HTTP, TCP or NONE",
			    h->test[0]);
			return -MTS_ERR_INVAL;
		}
		if (h->n_test < 2) {
			snprintf(err, errlen,
			    "healthcheck %s needs an argument", h->test[0]);
			return -MTS_ERR_INVAL;
		}
		p->health = 1;
		p->hc_interval = h->interval_ms ? h->interval_ms : 30000;
		p->hc_timeout = h->timeout_ms ? h->timeout_ms : 30000;
		p->hc_retries = h->retries ? h->retries : 3;
		p->hc_start_period = h->start_period_ms;
	}
	return 0;
}

/* --- bundle ----------------------------------------------------------- */

static void
new_id(char *out, size_t outlen)
{
	uint8_t r[8];
	size_t i;

	randombytes_buf(r, sizeof(r));
	for (i = 0; i < sizeof(r) && 2 * i + 2 < outlen; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

#define USER_DB_MAX (1 << 20)

/*
 * The image's /etc/passwd and /etc/group (NULL each when missing). They are
 * read inside the task's root file system as the container sees them: links
 * resolve inside it, never to the host's files (etc/passwd -> /etc/shadow is
 * the image's shadow), and only regular files of at most USER_DB_MAX bytes
 * are read, so a FIFO never blocks the shim. A file that exists but is not
 * such a file is refused, whatever the user: the runtime reads both for
 * every task (home, supplementary groups) and would hang on a FIFO too.
 */
static int
read_user_db(struct shim_task *t, char **passwd, char **group, char *err,
    size_t errlen)
{
	static const char *const names[2] = { "etc/passwd", "etc/group" };
	char **out[2] = { passwd, group }, path[SHIM_PATH];
	size_t i, len;
	int rootfd, rc = 0;

	*passwd = *group = NULL;
	tpath(path, sizeof(path), t, "bundle/rootfs");
	if ((rootfd = open(path,
	         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "the task's root file system: %s",
		    strerror(errno));
		return -MTS_ERR_IO;
	}
	for (i = 0; i < 2 && rc == 0; i++) {
		rc = mts_inroot_read(rootfd, names[i], MTS_INROOT_CHROOT,
		    USER_DB_MAX, out[i], &len);
		if (rc == -ENOENT)
			rc = 0;
		else if (rc != 0) {
			snprintf(err, errlen, "the image's /%s: %s", names[i],
			    mts_inroot_strerror(rc));
			rc = -MTS_ERR_INVAL;
		}
	}
	close(rootfd);
	return rc;
}

/* The bundle core's view of a TaskSpec (pointers into sp; *mounts is
 * allocated, the caller frees it). */
static void
task_spec_of(const Mts__Shim__TaskSpec *sp, struct mts_task_spec *ts,
    struct mts_task_mount **mounts)
{
	size_t i;

	*mounts = xcalloc(sp->n_mounts + 1, sizeof(**mounts));
	for (i = 0; i < sp->n_mounts; i++)
		(*mounts)[i] =
		    (struct mts_task_mount){ .source = sp->mounts[i]->source,
			    .destination = sp->mounts[i]->destination,
			    .type = sp->mounts[i]->type,
			    .options = sp->mounts[i]->options,
			    .noptions = sp->mounts[i]->n_options };
	*ts = (struct mts_task_spec){ .id = sp->id,
		.entrypoint = sp->entrypoint,
		.nentrypoint = sp->n_entrypoint,
		.command = sp->command,
		.ncommand = sp->n_command,
		.env = sp->env,
		.nenv = sp->n_env,
		.cwd = sp->cwd,
		.user = sp->user,
		.hostname = sp->hostname,
		.netns = sp->netns,
		.mounts = *mounts,
		.nmounts = sp->n_mounts,
		.read_only = sp->read_only,
		.memory_limit = sp->memory_limit,
		.cpu_millis = sp->cpu_millis,
		.pids_limit = sp->pids_limit,
		.nofile = sp->nofile };
}

/* The task's resolv.conf, when its spec names nameservers (netd's DNS
 * server), written into the task's directory for a read-only bind mount
 * on /etc/resolv.conf: 1 written (path in out), 0 none asked for, < 0 with
 * err filled. */
static int
write_resolv(struct shim_task *t, char *out, size_t outlen, char *err,
    size_t errlen)
{
	const Mts__Shim__TaskSpec *sp = t->spec;
	char *text;
	int rc;

	if (sp->n_dns == 0)
		return 0;
	if ((text = mts_resolv_conf(sp->dns, sp->n_dns, sp->dns_search,
	         sp->n_dns_search, err, errlen)) == NULL)
		return -MTS_ERR_INVAL;
	tpath(out, outlen, t, "resolv.conf");
	rc = mts_write_atomic(out, text, strlen(text), 0644, 0) < 0
	    ? -MTS_ERR_IO
	    : 1;
	if (rc < 0)
		snprintf(err, errlen, "%s: cannot write", out);
	free(text);
	return rc;
}

/* The bundle's I/O: what the translation needs from the task's root file
 * system and the process limits, then config.json (bundle_core.c builds
 * it). */
static int
write_bundle(struct shim *s, struct shim_task *t,
    const struct mts_image_info *img, char *err, size_t errlen)
{
	struct mts_bundle_host h = { .cgroup_parent = s->cfg.cgroup_parent,
		.default_pids = s->cfg.default_pids,
		.seccomp = s->cfg.seccomp };
	static char *const resolv_opts[] = { "rbind", "ro" };
	struct mts_task_spec ts;
	struct mts_task_mount *mounts;
	struct rlimit rl;
	char path[SHIM_PATH], resolv[SHIM_PATH];
	char *passwd = NULL, *group = NULL, *json = NULL;
	int rc;

	task_spec_of(t->spec, &ts, &mounts);
	if ((rc = write_resolv(t, resolv, sizeof(resolv), err, errlen)) < 0)
		goto out;
	if (rc == 1) /* task_spec_of left a slot */
		mounts[ts.nmounts++] =
		    (struct mts_task_mount){ .source = resolv,
			    .destination = "/etc/resolv.conf",
			    .type = "bind",
			    .options = resolv_opts,
			    .noptions = 2 };
	if ((rc = read_user_db(t, &passwd, &group, err, errlen)) != 0)
		goto out;
	h.passwd = passwd;
	h.group = group;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		h.nofile_max = rl.rlim_max;
	rc = -MTS_ERR_INVAL;
	if ((json = mts_bundle_for_task(&ts, &img->cfg, &h, err, errlen)) ==
	    NULL)
		goto out;
	tpath(path, sizeof(path), t, "bundle/config.json");
	/* No fsync: after a crash an unfinished task directory is removed
	 * at start anyway. */
	rc = mts_write_atomic(path, json, strlen(json), 0600, 0) < 0
	    ? -MTS_ERR_IO
	    : 0;
	if (rc != 0)
		snprintf(err, errlen, "%s: cannot write", path);
out:
	free(json);
	free(mounts);
	free(passwd);
	free(group);
	return rc;
}

/* The spec with its id set to the one the task got: a shallow copy with
 * id replaced is packed and unpacked, so every string of the result is
 * owned by it (an unpacked empty string is protobuf-c's static "", which
 * must never be freed or replaced by hand). */
static Mts__Shim__TaskSpec *
spec_copy_with_id(const Mts__Shim__TaskSpec *sp, const char *id)
{
	Mts__Shim__TaskSpec tmp = *sp;

	tmp.id = (char *)id;
	return mts_pb_copy(&tmp.base);
}

void
shim_task_free(struct shim_task *t)
{
	size_t i;

	if (t == NULL)
		return;
	shim_task_unwatch(t);
	/* a caller still waiting on this task hears that it is gone rather
	 * than waiting on a call nobody holds any more */
	for (i = 0; i < t->nstop; i++)
		mts_ipc_reply_error(t->stop_calls[i], MTS_ERR_NOTFOUND,
		    "task %s was removed while it stopped", t->core.id);
	if (t->run_call != NULL)
		mts_ipc_reply_error(t->run_call, MTS_ERR_NOTFOUND,
		    "task %s was removed before it started", t->core.id);
	if (t->spec != NULL)
		mts__shim__task_spec__free_unpacked(t->spec, NULL);
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->status_fd >= 0)
		close(t->status_fd);
	mts_buf_free(&t->status);
	free(t->stop_calls);
	free(t);
}

static struct shim_task *
task_alloc(struct shim *s, const char *id)
{
	struct shim_task *t = xcalloc(1, sizeof(*t));

	t->pidfd = -1;
	t->status_fd = -1;
	shim_task_loop_init(s, t);
	mts_buf_init(&t->status);
	snprintf(t->dir, sizeof(t->dir), "%s/tasks/%.64s", s->cfg.statedir, id);
	return t;
}

static void apply(struct shim *, struct shim_task *, struct mts_effects *);

int
shim_task_create(struct shim *s, const Mts__Shim__TaskSpec *sp,
    struct shim_task **out, char *err, size_t errlen)
{
	struct mts_image_info img;
	struct mts_task_policy pol;
	struct mts_effects fx = { .n = 0 };
	enum mts_rootfs_mode used;
	struct shim_task *t = NULL;
	char id[MTS_TASK_ID_MAX + 1], path[SHIM_PATH];
	int rc;

	memset(&img, 0, sizeof(img));
	if (sp->image == NULL || *sp->image == '\0') {
		snprintf(err, errlen, "no image given");
		return -MTS_ERR_INVAL;
	}
	if (sp->id != NULL && *sp->id != '\0')
		snprintf(id, sizeof(id), "%s", sp->id);
	else
		new_id(id, sizeof(id));
	if (!mts_task_id_valid(id) ||
	    strlen(sp->id ? sp->id : "") > MTS_TASK_ID_MAX) {
		snprintf(err, errlen, "task id \"%s\": 1-64 of [a-z0-9._-]",
		    sp->id);
		return -MTS_ERR_INVAL;
	}
	if (shim_task_find(s, id) != NULL) {
		snprintf(err, errlen, "task %s exists", id);
		return -MTS_ERR_CONFLICT;
	}
	if ((rc = policy_from_spec(s, sp, &pol, err, errlen)) != 0)
		return rc;
	if (mts_store_get(s->store, sp->image, &img) != 0) {
		snprintf(err, errlen, "no image %s (import or pull it first)",
		    sp->image);
		return -MTS_ERR_NOTFOUND;
	}
	t = task_alloc(s, id);
	t->spec = spec_copy_with_id(sp, id);
	snprintf(t->image_id, sizeof(t->image_id), "%s", img.id);
	tpath(path, sizeof(path), t, "bundle");
	rc = -MTS_ERR_IO;
	if (mkdir(t->dir, 0700) < 0 || mkdir(path, 0700) < 0) {
		snprintf(err, errlen, "%s: %s", t->dir, strerror(errno));
		goto fail;
	}
	if ((rc = mts_store_make_rootfs(s->store, &img, path, s->cfg.rootfs,
	         &used, err, errlen)) != 0 ||
	    (rc = write_bundle(s, t, &img, err, errlen)) != 0)
		goto fail;
	snprintf(t->rootfs_mode, sizeof(t->rootfs_mode), "%s",
	    used == MTS_ROOTFS_OVERLAY ? "overlay" : "copy");
	mts_image_info_free(&img);
	mts_task_init(&t->core, id, &pol, mts_now(), &fx);
	t->next = s->tasks;
	s->tasks = t;
	*out = t;
	apply(s, t, &fx);
	return 0;
fail:
	mts_image_info_free(&img);
	mts_store_release_rootfs(path);
	mts_rmtree(t->dir);
	shim_task_free(t);
	return rc;
}

/* --- runtime and monitor ---------------------------------------------- */

/* posix_spawn of argv with stdin and stdout on /dev/null and stderr on
 * errfd, default signal mask and SIGPIPE. */
static int
spawn_quiet(const char *const *argv, int errfd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
	posix_spawn_file_actions_adddup2(&fa, 0, 1);
	posix_spawn_file_actions_adddup2(&fa, errfd, 2);
	shim_spawnattr_init(&at);
	rc = posix_spawn(pid, argv[0], &fa, &at, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc != 0)
		errno = rc;
	return rc == 0 ? 0 : -MTS_ERR_IO;
}

/* Runs `runtime --root R args...` and waits, at most RUNTIME_WAIT_MS
 * (the runtime's own commands return in milliseconds; one that hangs is
 * killed rather than left to stall the loop). */
#define RUNTIME_WAIT_MS 5000

int
shim_runtime(struct shim *s, const char *const *args, char *err, size_t errlen)
{
	const char *argv[16];
	size_t n = 0, i, got = 0;
	struct pollfd pf;
	mts_time_t end = mts_now() + RUNTIME_WAIT_MS;
	int st = 1 << 8, p[2], eof = 0;
	pid_t pid;
	ssize_t r;

	argv[n++] = s->cfg.runtime;
	argv[n++] = "--root";
	argv[n++] = s->cfg.runtime_root;
	for (i = 0; args[i] != NULL && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -MTS_ERR_IO;
	if (spawn_quiet(argv, p[1], &pid) != 0) {
		close(p[0]);
		close(p[1]);
		return -MTS_ERR_IO;
	}
	close(p[1]);
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	/* Its stderr until EOF (it is exiting) or the deadline. */
	while (mts_now() < end && poll(&pf, 1, (int)(end - mts_now())) > 0) {
		char tmp[256];
		if ((r = read(p[0], tmp, sizeof(tmp))) <= 0) {
			eof = 1;
			break;
		}
		if (errlen > 0 && got < errlen - 1) {
			size_t k = (size_t)r < errlen - 1 - got
			    ? (size_t)r
			    : errlen - 1 - got;
			memcpy(err + got, tmp, k);
			got += k;
		}
	}
	if (errlen > 0)
		err[got] = '\0';
	close(p[0]);
	if (!eof && waitpid(pid, &st, WNOHANG) == 0) {
		log_warnx("%s %s: no answer in %d ms, killed", argv[0], args[0],
		    RUNTIME_WAIT_MS);
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return -MTS_ERR_TIMEOUT;
	}
	while (eof && waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -MTS_ERR_IO;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -MTS_ERR_IO;
}

/* Deletes container id from the runtime if the runtime still has it (the
 * monitor deletes it at exit: this is for monitors that died, removals
 * and orphans). */
static void
runtime_delete(struct shim *s, const char *id)
{
	const char *args[] = { "delete", "-f", id, NULL };
	char err[256], path[SHIM_PATH];

	if (mts_path_join(path, sizeof(path), s->cfg.runtime_root, id) == 0 &&
	    access(path, F_OK) != 0 && errno == ENOENT)
		return;
	shim_runtime(s, args, err, sizeof(err));
}

/* Starts a monitor that waits for its job on the returned socket (its
 * fd 3). */
static int
monitor_spawn(struct shim *s, pid_t *pid, int *fd)
{
	const char *argv[] = { "mts-shim-monitor", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int sp[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return -MTS_ERR_IO;
	/* posix_spawn (vfork-like) rather than fork: no copy of the shim's
	 * page tables. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sp[1], 3);
	posix_spawn_file_actions_addclosefrom_np(&fa, 4);
	shim_spawnattr_init(&at);
	rc = posix_spawn(pid, s->cfg.monitor, &fa, &at, (char *const *)argv,
	    environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(sp[1]);
	if (rc != 0) {
		close(sp[0]);
		errno = rc;
		return -MTS_ERR_IO;
	}
	*fd = sp[0];
	return 0;
}

/* Sends a monitor its job: RUNTIME ROOT ID TASKDIR LOGMAX LOGKEEP
 * CGROUPDIR, each ended by a NUL (monitor.c). */
static int
monitor_job(struct shim *s, struct shim_task *t, int fd)
{
	char logmax[32], logkeep[32], cg[SHIM_PATH + 256];
	const char *f[] = { s->cfg.runtime, s->cfg.runtime_root, t->core.id,
		t->dir, logmax, logkeep, cg };
	struct mts_buf b;
	size_t i, off = 0;
	ssize_t w;
	int rc = 0;

	snprintf(logmax, sizeof(logmax), "%" PRId64, s->cfg.log_max);
	snprintf(logkeep, sizeof(logkeep), "%" PRId64, s->cfg.log_keep);
	snprintf(cg, sizeof(cg), "%s%s/%s", s->cfg.cgroup_mem,
	    s->cfg.cgroup_parent, t->core.id);
	mts_buf_init(&b);
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		mts_buf_put(&b, f[i], strlen(f[i]) + 1);
	while (off < b.len && rc == 0) {
		if ((w = send(fd, b.data + off, b.len - off, MSG_NOSIGNAL)) > 0)
			off += (size_t)w;
		else if (w < 0 && errno != EINTR)
			rc = -MTS_ERR_IO;
	}
	mts_buf_free(&b);
	return rc;
}

/* The waiting monitor, started while no task is starting so that its
 * exec and set-up stay off the next start's path. */
void
shim_monitor_spare(struct shim *s)
{
	struct shim_task *t;

	if (s->spare > 0)
		return;
	for (t = s->tasks; t != NULL; t = t->next)
		if (t->status_fd >= 0)
			return; /* a start is in flight */
	if (monitor_spawn(s, &s->spare, &s->spare_fd) != 0) {
		log_warn("cannot start %s", s->cfg.monitor);
		s->spare = 0;
		s->spare_fd = -1;
	}
}

static int
spawn_monitor(struct shim *s, struct shim_task *t)
{
	char path[SHIM_PATH], pidtxt[32];
	pid_t pid = s->spare;
	int fd = s->spare_fd, tries;

	s->spare = 0;
	s->spare_fd = -1;
	for (tries = 0; tries < 2; tries++) {
		if (pid <= 0 && monitor_spawn(s, &pid, &fd) != 0)
			return -MTS_ERR_IO;
		if (monitor_job(s, t, fd) == 0)
			break;
		/* The spare died meanwhile: reaped by the loop, start one. */
		close(fd);
		kill(pid, SIGKILL);
		pid = 0;
		fd = -1;
	}
	if (pid <= 0)
		return -MTS_ERR_IO;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	t->status_fd = fd;
	mts_buf_reset(&t->status);
	t->monitor = pid;
	t->pidfd = pidfd_open_(pid);
	shim_task_watch(t);
	snprintf(pidtxt, sizeof(pidtxt), "%d\n", (int)pid);
	tpath(path, sizeof(path), t, "monitor.pid");
	/* Not fsync'ed: it serves a restarted shim, and the page cache
	 * outlives the shim; after a machine crash there is no monitor to
	 * find (and the fsync would sit on the start path). */
	(void)mts_write_atomic(path, pidtxt, strlen(pidtxt), 0600, 0);
	return 0;
}

static void
task_start(struct shim *s, struct shim_task *t)
{
	char path[SHIM_PATH];

	tpath(path, sizeof(path), t, "exit");
	unlink(path);
	/* No runtime delete here: the container is deleted at each exit,
	 * at rm, and orphans at start-up. */
	t->error[0] = '\0';
	if (spawn_monitor(s, t) != 0) {
		snprintf(t->error, sizeof(t->error), "cannot start monitor: %s",
		    strerror(errno));
		shim_task_event(s, t,
		    &(struct mts_task_ev){ .type = MTS_EV_START_FAILED });
	}
}

void
shim_task_monitor_status(struct shim *s, struct shim_task *t)
{
	char buf[1024], *nl;
	ssize_t n;

	while ((n = read(t->status_fd, buf, sizeof(buf))) > 0)
		mts_buf_put(&t->status, buf, (size_t)n);
	if (n < 0 && errno == EAGAIN)
		return;
	shim_close_watched(&t->status_fd, &t->status_w);
	mts_buf_put_u8(&t->status, 0);
	nl = strchr((char *)t->status.data, '\n');
	if (nl != NULL)
		*nl = '\0';
	if (t->status.data[0] == 'R' && t->core.state == MTS_TASK_CREATED) {
		t->started_wall = mts_wall_ms();
		shim_task_event(s, t,
		    &(struct mts_task_ev){ .type = MTS_EV_STARTED,
		        .pid = atoi((char *)t->status.data + 2) });
	} else if (t->status.data[0] == 'E') {
		snprintf(t->error, sizeof(t->error), "%s",
		    (char *)t->status.data + 2);
		log_warnx("task %s: %s", t->core.id, t->error);
	}
	/* Without a report the monitor died: its exit is handled by pidfd. */
}

/* Reads TASKDIR/exit: "code signal oom ms". */
static int
read_exit(struct shim_task *t, struct mts_task_ev *ev, uint64_t *ms)
{
	char path[SHIM_PATH], *txt;
	unsigned long long when = 0;
	int rc = -MTS_ERR_NOTFOUND;

	tpath(path, sizeof(path), t, "exit");
	if ((txt = shim_read_text(path, 256)) == NULL)
		return rc;
	if (sscanf(txt, "%d %d %d %llu", &ev->code, &ev->sig, &ev->oom,
	        &when) == 4)
		rc = 0;
	*ms = when;
	free(txt);
	return rc;
}

void
shim_task_monitor_exit(struct shim *s, struct shim_task *t)
{
	struct mts_task_ev ev = { .type = MTS_EV_EXIT };
	uint64_t ms = 0;

	if (t->status_fd >= 0)
		shim_task_monitor_status(s, t);
	shim_close_watched(&t->pidfd, &t->pid_w);
	waitpid(t->monitor, NULL, WNOHANG);
	t->monitor = 0;
	if (t->core.state == MTS_TASK_CREATED) {
		if (t->error[0] == '\0')
			snprintf(t->error, sizeof(t->error),
			    "monitor exited before the container started");
		ev.type = MTS_EV_START_FAILED;
	} else if (read_exit(t, &ev, &ms) != 0) {
		snprintf(t->error, sizeof(t->error),
		    "exit status lost (monitor died)");
		ev.code = -1;
	}
	t->finished_wall = ms ? ms : mts_wall_ms();
	runtime_delete(s, t->core.id);
	if (ev.type == MTS_EV_EXIT)
		log_info("task %s exited: code %d%s", t->core.id, ev.code,
		    ev.oom ? " (out of memory)" : "");
	shim_task_event(s, t, &ev);
}

/* --- effects ---------------------------------------------------------- */

static void
reply_stops(struct shim *s, struct shim_task *t)
{
	size_t i;

	for (i = 0; i < t->nstop; i++)
		shim_reply_task(s, t->stop_calls[i], t,
		    MTS__SHIM__REPLY__BODY_STOP);
	free(t->stop_calls);
	t->stop_calls = NULL;
	t->nstop = 0;
	if (t->run_call != NULL) {
		shim_reply_task(s, t->run_call, t, MTS__SHIM__REPLY__BODY_RUN);
		t->run_call = NULL;
	}
}

static void
apply(struct shim *s, struct shim_task *t, struct mts_effects *fx)
{
	char err[256];
	size_t i;

	for (i = 0; i < fx->n; i++) {
		switch (fx->e[i].kind) {
		case MTS_FX_START:
			task_start(s, t);
			break;
		case MTS_FX_SIGNAL:
			if (t->core.pid > 0)
				kill(t->core.pid, fx->e[i].sig);
			break;
		case MTS_FX_PROBE:
			shim_probe_start(s, t);
			break;
		case MTS_FX_SAVE:
			/* The caller learns first, the disk a moment later:
			 * recovery re-derives a lost "running" from the
			 * monitor. */
			if (t->run_call != NULL &&
			    t->core.state != MTS_TASK_CREATED) {
				shim_reply_task(s, t->run_call, t,
				    MTS__SHIM__REPLY__BODY_RUN);
				t->run_call = NULL;
			}
			shim_task_save(s, t);
			break;
		case MTS_FX_DONE:
			reply_stops(s, t);
			if (t->remove_when_done)
				shim_task_remove(s, t, err, sizeof(err));
			return; /* t may be gone */
		}
	}
}

/* Why a task that reached FAILED is not restarted, for its status (an
 * error already there, from a start that failed, is kept). */
static void
give_up_error(struct shim_task *t)
{
	char how[64];

	if (t->error[0] != '\0')
		return;
	if (t->core.oom)
		snprintf(how, sizeof(how), "killed by the OOM killer");
	else if (t->core.signal)
		snprintf(how, sizeof(how), "killed by signal %d",
		    t->core.signal);
	else
		snprintf(how, sizeof(how), "exit code %d", t->core.exit_code);
	if (t->core.pol.max_attempts > 0)
		snprintf(t->error, sizeof(t->error),
		    "restart policy gave up after %u restarts (%s)",
		    t->core.streak, how);
	else
		snprintf(t->error, sizeof(t->error), "failed (%s)", how);
}

void
shim_task_event(struct shim *s, struct shim_task *t,
    const struct mts_task_ev *ev)
{
	struct mts_effects fx = { .n = 0 };
	enum mts_task_state was = t->core.state;
	mts_time_t now = mts_now();
	int rc = mts_task_step(&t->core, ev, now, &fx);

	if (rc != 0) {
		log_warnx("task %s: event %d impossible in state %s",
		    t->core.id, ev->type, mts_task_state_name(t->core.state));
		return;
	}
	if (t->core.state == MTS_TASK_RESTARTING && !t->core.held &&
	    (was != MTS_TASK_RESTARTING || ev->type == MTS_EV_RELEASE))
		log_info("task %s: restart %u in %lld ms", t->core.id,
		    t->core.restarts + 1, (long long)(t->core.deadline - now));
	else if (t->core.state == MTS_TASK_FAILED && was != MTS_TASK_FAILED) {
		give_up_error(t);
		log_info("task %s: %s", t->core.id, t->error);
	}
	shim_task_watch(t);
	apply(s, t, &fx);
}

void
shim_task_tick(struct shim *s, struct shim_task *t, mts_time_t now)
{
	struct mts_effects fx = { .n = 0 };

	mts_task_step(&t->core, &(struct mts_task_ev){ .type = MTS_EV_TICK },
	    now, &fx);
	shim_task_watch(t);
	apply(s, t, &fx);
}

int
shim_task_remove(struct shim *s, struct shim_task *t, char *err, size_t errlen)
{
	struct shim_task **pp;
	char path[SHIM_PATH], key[256];

	if (t->core.state != MTS_TASK_EXITED &&
	    t->core.state != MTS_TASK_FAILED) {
		snprintf(err, errlen, "task %s is %s; stop it first (or force)",
		    t->core.id, mts_task_state_name(t->core.state));
		return -MTS_ERR_STATE;
	}
	runtime_delete(s, t->core.id);
	tpath(path, sizeof(path), t, "bundle");
	if (mts_store_release_rootfs(path) != 0) {
		snprintf(err, errlen, "cannot unmount %s/rootfs: %s", path,
		    strerror(errno));
		return -MTS_ERR_IO;
	}
	mts_rmtree(t->dir);
	if (s->cfg.node[0] != '\0' && s->ss != NULL && !t->spec->managed) {
		Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
		Mts__Statestore__DeleteReq del =
		    MTS__STATESTORE__DELETE_REQ__INIT;
		ProtobufCMessage *rep = NULL;
		char e[128];
		snprintf(key, sizeof(key), "t/%s/%s", s->cfg.node, t->core.id);
		del.key.data = (uint8_t *)key;
		del.key.len = strlen(key);
		req.body_case = MTS__STATESTORE__REQUEST__BODY_DELETE;
		req.delete_ = &del;
		if (mts_ipc_client_call(s->ss, &req.base,
		        &mts__statestore__reply__descriptor, &rep, e,
		        sizeof(e)) == 0)
			protobuf_c_message_free_unpacked(rep, NULL);
	}
	for (pp = &s->tasks; *pp != NULL; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	log_info("task %s removed", t->core.id);
	shim_task_free(t);
	return 0;
}

/* --- status, persistence, statestore ---------------------------------- */

void
shim_task_status(const struct shim_task *t, Mts__Shim__TaskStatus *st)
{
	mts__shim__task_status__init(st);
	st->id = (char *)t->core.id;
	st->state = (char *)mts_task_state_name(t->core.state);
	st->exit_code = t->core.exit_code;
	st->signal = t->core.signal;
	st->oom_killed = t->core.oom;
	st->health = (char *)mts_health_name(t->core.health);
	st->restarts = t->core.restarts;
	st->held = t->core.held;
	st->streak = t->core.streak;
	st->pid = t->core.pid;
	st->started_at = t->started_wall;
	st->finished_at = t->finished_wall;
	st->error = (char *)t->error;
	st->health_failures = t->core.health_failures;
	st->spec = t->spec;
	st->image_id = (char *)t->image_id;
	st->desired = t->core.want_stop ? "stopped" : "running";
	st->rootfs = (char *)t->rootfs_mode;
	st->last_health_output = (char *)t->health_out;
}

void
shim_task_status_shared(const struct shim_task *t, Mts__Shim__TaskStatus *st,
    struct shim_shared *sh)
{
	size_t i;

	shim_task_status(t, st);
	sh->spec = *t->spec;
	sh->names = xcalloc(t->spec->n_env + 1, sizeof(char *));
	for (i = 0; i < t->spec->n_env; i++)
		sh->names[i] = xasprintf("%.*s",
		    (int)strcspn(t->spec->env[i], "="), t->spec->env[i]);
	sh->spec.env = NULL;
	sh->spec.n_env = 0;
	sh->spec.env_names = sh->names;
	sh->spec.n_env_names = t->spec->n_env;
	st->spec = &sh->spec;
}

void
shim_shared_free(struct shim_shared *sh)
{
	mts_strv_free(sh->names);
	sh->names = NULL;
}

/* A local statestore answers in well under a millisecond; a call is
 * bounded so that a stalled one cannot hold up the shim's loop for long. */
#define STORE_WAIT_MS 300

struct mts_ipc_client *
shim_ss(struct shim *s)
{
	char path[SHIM_PATH], err[256];

	/* After a failure only the once-a-second retry tries again: a
	 * statestore that is down costs the loop at most one bounded
	 * attempt per second, not one per task change. */
	if (s->ss == NULL && mts_now() < s->next_store_retry)
		return NULL;
	if (s->ss == NULL) {
		if (mts_ipc_sock_path(path, sizeof(path), s->cfg.rundir,
		        "statestore", NULL) ||
		    access(path, F_OK) != 0)
			return NULL;
		s->ss =
		    mts_ipc_client_open(path, STORE_WAIT_MS, err, sizeof(err));
	}
	return s->ss;
}

static int
store_put(struct shim *s, struct shim_task *t)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Shim__TaskStatus st;
	struct shim_shared sh;
	ProtobufCMessage *rep = NULL;
	char key[256], err[256];
	uint8_t *buf;
	int rc;

	/* reconciled writes the records of the tasks it manages */
	if (s->cfg.node[0] == '\0' || (t->spec != NULL && t->spec->managed))
		return 0;
	if (shim_ss(s) == NULL)
		return -MTS_ERR_IO;
	/* The record is replicated to every node: env values stay here. */
	shim_task_status_shared(t, &st, &sh);
	buf = xmalloc(protobuf_c_message_get_packed_size(&st.base) + 1);
	put.value.len = protobuf_c_message_pack(&st.base, buf);
	put.value.data = buf;
	shim_shared_free(&sh);
	snprintf(key, sizeof(key), "t/%s/%s", s->cfg.node, t->core.id);
	put.key.data = (uint8_t *)key;
	put.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	rc = mts_ipc_client_call(s->ss, &req.base,
	    &mts__statestore__reply__descriptor, &rep, err, sizeof(err));
	free(buf);
	if (rep != NULL)
		protobuf_c_message_free_unpacked(rep, NULL);
	if (rc != 0) {
		log_debug("statestore put %s: %s", key, err);
		mts_ipc_client_close(s->ss);
		s->ss = NULL;
		s->next_store_retry = mts_now() + 1000;
	}
	return rc;
}

void
shim_task_save(struct shim *s, struct shim_task *t)
{
	Mts__Shim__TaskStatus st;
	char path[SHIM_PATH];
	uint8_t *buf;
	size_t len;

	shim_task_status(t, &st);
	len = protobuf_c_message_get_packed_size(&st.base);
	buf = xmalloc(len + 1);
	protobuf_c_message_pack(&st.base, buf);
	tpath(path, sizeof(path), t, "state.pb");
	if (mts_write_atomic(path, buf, len, 0600, 1) != 0)
		log_warn("task %s: cannot save state", t->core.id);
	free(buf);
	t->dirty_store = store_put(s, t) != 0;
}

/* Writes pending statestore records (the statestore may start later). */
void
shim_store_retry(struct shim *s)
{
	struct shim_task *t;

	s->next_store_retry = 0;
	for (t = s->tasks; t != NULL; t = t->next)
		if (t->dirty_store && (t->dirty_store = store_put(s, t) != 0))
			return;
	if (s->images_dirty)
		shim_images_publish(s);
}

/* --- recovery --------------------------------------------------------- */

/* Is pid a monitor for this task dir (guards against pid reuse)? A
 * monitor runs mts-shim-monitor with the task directory as its working
 * directory. */
static int
is_our_monitor(pid_t pid, const char *dir)
{
	char path[64], buf[SHIM_PATH];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (strcmp(buf, dir) != 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, "mts-shim-monitor") != NULL;
}

static int
load_task(struct shim *s, const char *id, struct shim_task **out)
{
	Mts__Shim__TaskStatus *st;
	struct mts_effects fx = { .n = 0 };
	struct shim_task *t = task_alloc(s, id);
	char path[SHIM_PATH], err[256], *buf;
	enum mts_task_state state;
	int fd;
	ssize_t n;

	tpath(path, sizeof(path), t, "state.pb");
	buf = xmalloc(1 << 20);
	n = -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, 1 << 20);
		close(fd);
	}
	st = n > 0
	    ? mts__shim__task_status__unpack(NULL, (size_t)n, (uint8_t *)buf)
	    : NULL;
	free(buf);
	if (st == NULL || st->spec == NULL ||
	    mts_task_state_parse(st->state, &state) != 0) {
		if (st != NULL)
			mts__shim__task_status__free_unpacked(st, NULL);
		shim_task_free(t);
		return -MTS_ERR_INVAL;
	}
	t->spec = mts_pb_copy(&st->spec->base);
	{
		struct mts_task_policy pol;
		if (policy_from_spec(s, t->spec, &pol, err, sizeof(err)) != 0)
			memset(&pol, 0, sizeof(pol));
		mts_task_init(&t->core, id, &pol, mts_now(), &fx);
	}
	t->core.state = state;
	t->core.want_stop = st->desired && !strcmp(st->desired, "stopped");
	t->core.exit_code = st->exit_code;
	t->core.signal = st->signal;
	t->core.oom = st->oom_killed;
	t->core.restarts = st->restarts;
	/* the streak as it was: a task that crash-looped before the node
	 * went down keeps its backoff, one that ran long starts fresh */
	t->core.streak = st->streak;
	t->core.held = st->held;
	t->core.lost = st->held;
	t->core.pid = st->pid;
	t->core.health_failures = st->health_failures;
	t->core.health = !strcmp(st->health, "healthy") ? MTS_HEALTH_HEALTHY
	    : !strcmp(st->health, "unhealthy")          ? MTS_HEALTH_UNHEALTHY
	    : !strcmp(st->health, "starting")           ? MTS_HEALTH_STARTING
	                                                : MTS_HEALTH_NONE;
	t->started_wall = st->started_at;
	t->finished_wall = st->finished_at;
	snprintf(t->error, sizeof(t->error), "%s", st->error);
	snprintf(t->image_id, sizeof(t->image_id), "%s", st->image_id);
	snprintf(t->rootfs_mode, sizeof(t->rootfs_mode), "%s", st->rootfs);
	snprintf(t->health_out, sizeof(t->health_out), "%s",
	    st->last_health_output);
	mts__shim__task_status__free_unpacked(st, NULL);
	*out = t;
	return 0;
}

static int
exit_recorded(struct shim_task *t)
{
	struct mts_task_ev ev;
	uint64_t ms;

	return read_exit(t, &ev, &ms) == 0;
}

/* A task whose container ended while the shim was away: a task of
 * reconciled is held until reconciled, having checked that the node
 * still holds its assignment, releases it with a run of its id (a task
 * replaced elsewhere meanwhile must not run again, even briefly);
 * another restarts under its policy, at once unless it crash-looped. */
static void
task_lost(struct shim *s, struct shim_task *t)
{
	struct mts_task_ev ev = { .type = MTS_EV_LOST };

	ev.hold = t->spec != NULL && t->spec->managed;
	if (!t->core.want_stop && t->error[0] == '\0')
		snprintf(t->error, sizeof(t->error),
		    "ended while the node was down");
	shim_task_event(s, t, &ev);
	if (t->core.held)
		log_info("task %s: ended while the node was down; held until "
		         "reconciled confirms its assignment",
		    t->core.id);
}

void
shim_task_release(struct shim *s, struct shim_task *t)
{
	struct mts_task_ev ev = { .type = MTS_EV_RELEASE };

	log_info("task %s: released, restarting it", t->core.id);
	shim_task_event(s, t, &ev);
}

/* Re-attaches a loaded task to its monitor, or settles what happened
 * while the shim was away. */
static void
reattach(struct shim *s, struct shim_task *t)
{
	char path[SHIM_PATH], *txt;
	mts_time_t now = mts_now();
	pid_t pid = 0;

	switch (t->core.state) {
	case MTS_TASK_RESTARTING:
		task_lost(s, t);
		return;
	case MTS_TASK_EXITED:
	case MTS_TASK_FAILED:
		shim_task_watch(t);
		return;
	default:
		break;
	}
	tpath(path, sizeof(path), t, "monitor.pid");
	if ((txt = shim_read_text(path, 32)) != NULL)
		pid = (pid_t)atoi(txt);
	free(txt);
	if (pid > 0 && is_our_monitor(pid, t->dir))
		t->pidfd = pidfd_open_(pid);
	t->monitor = pid;
	if (t->core.state == MTS_TASK_STOPPING)
		t->core.deadline = now + t->core.pol.grace;
	if (t->core.state == MTS_TASK_RUNNING && t->core.pol.health) {
		t->core.next_probe = now + t->core.pol.hc_interval;
		t->core.probe_grace_end = now;
	}
	if (t->pidfd < 0 && !exit_recorded(t)) {
		/* Killed with its monitor while we were away (the node went
		 * down): lost, not crashed. */
		t->monitor = 0;
		runtime_delete(s, t->core.id);
		task_lost(s, t);
	} else if (t->pidfd < 0) {
		/* Gone while we were away: its exit file says how. */
		if (t->core.state == MTS_TASK_CREATED)
			t->core.state = MTS_TASK_RUNNING;
		shim_task_monitor_exit(s, t);
	} else {
		shim_task_watch(t);
		log_info("task %s: re-attached to monitor %d (container %d)",
		    t->core.id, (int)pid, t->core.pid);
	}
}

/* Deletes runtime containers under our root that no task owns. */
static void
clean_orphans(struct shim *s)
{
	char dir[SHIM_PATH];
	struct dirent *de;
	DIR *d;

	if ((d = opendir(s->cfg.runtime_root)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || shim_task_find(s, de->d_name))
			continue;
		if (mts_path_join(dir, sizeof(dir), s->cfg.runtime_root,
		        de->d_name) != 0)
			continue;
		log_info("deleting container %s: no task owns it", de->d_name);
		runtime_delete(s, de->d_name);
	}
	closedir(d);
}

void
shim_tasks_recover(struct shim *s)
{
	char dir[SHIM_PATH], path[SHIM_PATH];
	struct shim_task *t, *next, *loaded = NULL;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/tasks", s->cfg.statedir);
	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !mts_task_id_valid(de->d_name))
			continue;
		if (load_task(s, de->d_name, &t) != 0) {
			/* A task whose creation never finished. */
			if (snprintf(path, sizeof(path), "%s/%s/bundle", dir,
			        de->d_name) >= (int)sizeof(path))
				continue;
			log_warnx("task %s: no usable state, removing",
			    de->d_name);
			runtime_delete(s, de->d_name);
			mts_store_release_rootfs(path);
			if (snprintf(path, sizeof(path), "%s/%s", dir,
			        de->d_name) < (int)sizeof(path))
				mts_rmtree(path);
			continue;
		}
		t->next = loaded;
		loaded = t;
	}
	closedir(d);
	for (t = loaded; t != NULL; t = next) {
		next = t->next;
		t->next = s->tasks;
		s->tasks = t;
		t->dirty_store = 1;
	}
	for (t = s->tasks; t != NULL; t = next) {
		next = t->next;
		reattach(s, t);
	}
	clean_orphans(s);
}
