/* shim.c: mts-shim main — configuration, runtime detection, the event loop (shim.sock, signals, monitors, helpers, timers). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <sodium.h>

#include "agent.h"
#include "bundle_core.h"
#include "fsutil.h"
#include "hash.h"
#include "log.h"
#include "loop.h"
#include "mtserr.h"
#include "mtstime.h"
#include "runtime_core.h"
#include "shim.h"
#include "xmalloc.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define SEC "shim"
#define LOOP_SLOW_MS 500

static int
find_in_path(const char *name, char *out, size_t outlen)
{
	const char *path = getenv("PATH"), *p, *e;
	char cand[SHIM_PATH];

	if (strchr(name, '/') != NULL) {
		snprintf(out, outlen, "%s", name);
		return access(name, X_OK) == 0 ? 0 : -MTS_ERR_NOTFOUND;
	}
	if (path == NULL)
		path =
		    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	for (p = path; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchr(p, ':');
		if (e == NULL)
			e = p + strlen(p);
		snprintf(cand, sizeof(cand), "%.*s/%s", (int)(e - p), p, name);
		if (access(cand, X_OK) == 0)
			return snprintf(out, outlen, "%s", cand) >= (int)outlen
			    ? -MTS_ERR_TOOBIG
			    : 0;
	}
	return -MTS_ERR_NOTFOUND;
}

static int
is_cgroup2(const char *path)
{
	struct statfs fs;

	return statfs(path, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

/* [shim] runtime: what is installed and the cgroup mode go in,
 * runtime_core.c decides (and says why, in the log). */
static int
choose_runtime(struct shim_cfg *c, const char *want)
{
	char runc[SHIM_PATH], crun[SHIM_PATH], err[512];
	struct mts_runtime_host h = {
		.cgroup = mts_cgroup_mode_of(is_cgroup2("/sys/fs/cgroup"),
		    is_cgroup2("/sys/fs/cgroup/unified"))
	};
	struct mts_runtime_choice ch;

	h.runc = find_in_path("runc", runc, sizeof(runc)) == 0 ? runc : NULL;
	h.crun = find_in_path("crun", crun, sizeof(crun)) == 0 ? crun : NULL;
	h.want_exists = want[0] == '/' && access(want, X_OK) == 0;
	if (mts_runtime_choose(want, &h, &ch, err, sizeof(err)) != 0) {
		log_warnx("%s", err);
		return -1;
	}
	if (snprintf(c->runtime, sizeof(c->runtime), "%s", ch.path) >=
	    (int)sizeof(c->runtime)) {
		log_warnx("[shim] runtime %s: path too long", ch.path);
		return -1;
	}
	log_info("runtime %s: %s", c->runtime, ch.why);
	return 0;
}

static int
is_node_id(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != MTS_NODE_HEX_LEN)
		return 0;
	for (i = 0; i < MTS_NODE_HEX_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Directories: run, state (under init MTS_STATEDIR is the shim's own;
 * otherwise the shim takes a "shim" directory under the node's), the
 * runtime's root and the cgroup locations. */
static int
config_dirs(struct shim_cfg *c, struct mts_agent *ag)
{
	const char *env = getenv("MTS_STATEDIR");
	const char *v = mts_cfg_str(ag->cfg, SEC, "runtime_root");

	if (snprintf(c->rundir, sizeof(c->rundir), "%s", ag->rundir) >=
	        (int)sizeof(c->rundir) ||
	    snprintf(c->statedir, sizeof(c->statedir), "%s%s", ag->statedir,
	        env && *env ? "" : "/shim") >= (int)sizeof(c->statedir) ||
	    snprintf(c->runtime_root, sizeof(c->runtime_root), "%s%s",
	        v && *v ? v : c->rundir,
	        v && *v ? "" : "/runc") >= (int)sizeof(c->runtime_root)) {
		log_warnx("run, state or runtime_root path too long");
		return -1;
	}
	snprintf(c->cgroup_parent, sizeof(c->cgroup_parent), "%s",
	    mts_cfg_str(ag->cfg, SEC, "cgroup_parent"));
	if (c->cgroup_parent[0] != '/') {
		log_warnx("[shim] cgroup_parent must be absolute");
		return -1;
	}
	snprintf(c->cgroup_mem, sizeof(c->cgroup_mem), "%s",
	    access("/sys/fs/cgroup/memory", F_OK) == 0 ? "/sys/fs/cgroup/memory"
	                                               : "/sys/fs/cgroup");
	return 0;
}

/* The runtime, the monitor and the image helper (both next to mts-shim
 * unless [shim] monitor says where the monitor is). */
static int
config_programs(struct shim_cfg *c, struct mts_cfg *cfg)
{
	const char *v = mts_cfg_str(cfg, SEC, "runtime");
	char *dir;
	int rc = -1;

	if (choose_runtime(c, v) != 0)
		return -1;
	v = mts_cfg_str(cfg, SEC, "monitor");
	if (v && *v)
		dir = xstrdup(v);
	else if ((dir = realpath("/proc/self/exe", NULL)) == NULL)
		dir = xstrdup("./mts-shim");
	if (strrchr(dir, '/') != NULL)
		*strrchr(dir, '/') = '\0';
	else
		snprintf(dir, strlen(dir) + 1, ".");
	if (v && *v)
		snprintf(c->monitor, sizeof(c->monitor), "%s", v);
	else
		snprintf(c->monitor, sizeof(c->monitor), "%s/mts-shim-monitor",
		    dir);
	if (snprintf(c->image_tool, sizeof(c->image_tool), "%s/mts-shim-image",
	        dir) >= (int)sizeof(c->image_tool))
		log_warnx("%s: path too long", dir);
	else if (access(c->monitor, X_OK) != 0)
		log_warnx("[shim] monitor %s: not executable", c->monitor);
	else if (access(c->image_tool, X_OK) != 0)
		log_warnx("%s: not executable", c->image_tool);
	else
		rc = 0;
	free(dir);
	return rc;
}

/* What every task gets unless its spec says otherwise, and what an image
 * pull may cost. */
static int
config_limits(struct shim_cfg *c, struct mts_cfg *cfg)
{
	int64_t pids = mts_cfg_int(cfg, SEC, "default_pids_limit");

	if (pids < 0 || pids >= MTS_PIDS_UNLIMITED) {
		log_warnx("[shim] default_pids_limit %lld: expected 0 (none) to "
		          "%u",
		    (long long)pids, MTS_PIDS_UNLIMITED - 1);
		return -1;
	}
	c->default_pids = (uint32_t)pids;
	c->pull_low_speed = mts_cfg_int(cfg, SEC, "pull_low_speed_limit");
	c->pull_low_time = mts_cfg_int(cfg, SEC, "pull_low_speed_time");
	c->pull_timeout = mts_cfg_int(cfg, SEC, "pull_timeout");
	c->pull_max_blob = mts_cfg_int(cfg, SEC, "pull_max_blob");
	if (c->pull_timeout <= 0 || c->pull_max_blob <= 0) {
		log_warnx("[shim] pull_timeout and pull_max_blob must be "
		          "positive");
		return -1;
	}
	c->peer_rate = mts_cfg_int(cfg, SEC, "peer_fetch_rate");
	c->peer_chunk_timeout = mts_cfg_int(cfg, SEC, "peer_chunk_timeout");
	c->test_corrupt = mts_cfg_int(cfg, SEC, "test_corrupt_chunks");
	if (c->peer_chunk_timeout < 100 || c->peer_chunk_timeout > 60000) {
		log_warnx("[shim] peer_chunk_timeout: expected 100ms to 60s");
		return -1;
	}
	if (c->test_corrupt > 0)
		log_warnx("[shim] test_corrupt_chunks = %lld: a test hook "
		          "spoils image chunks sent to other nodes",
		    (long long)c->test_corrupt);
	return 0;
}

static int
config(struct shim *s, struct mts_agent *ag)
{
	struct shim_cfg *c = &s->cfg;
	struct mts_cfg *cfg = ag->cfg;
	const char *v, *env;
	char err[512];

	if (config_dirs(c, ag) != 0 || config_programs(c, cfg) != 0 ||
	    config_limits(c, cfg) != 0)
		return -1;
	v = mts_cfg_str(cfg, SEC, "rootfs");
	if (!strcmp(v, "auto"))
		c->rootfs = MTS_ROOTFS_AUTO;
	else if (!strcmp(v, "overlay"))
		c->rootfs = MTS_ROOTFS_OVERLAY;
	else if (!strcmp(v, "copy"))
		c->rootfs = MTS_ROOTFS_COPY;
	else {
		log_warnx("[shim] rootfs %s: expected auto, overlay or copy",
		    v);
		return -1;
	}
	c->log_max = mts_cfg_int(cfg, SEC, "log_max_size");
	c->log_keep = mts_cfg_int(cfg, SEC, "log_max_files");
	c->grace = mts_cfg_int(cfg, SEC, "stop_grace");
	c->seccomp = mts_cfg_bool(cfg, SEC, "container_seccomp");
	/* The node id for t/<node>/<task>: MTS_NODE_ID (init sets it), or
	 * the config. */
	env = getenv("MTS_NODE_ID");
	v = mts_cfg_str(cfg, SEC, "node_id");
	snprintf(c->node, sizeof(c->node), "%s",
	    env && *env ? env : (v ? v : ""));
	if (c->node[0] != '\0' && !is_node_id(c->node)) {
		log_warnx("node id \"%s\": expected 32 hex digits", c->node);
		return -1;
	}
	c->exec_idle = mts_cfg_int(cfg, SEC, "exec_idle_timeout");

	if (mts_acl_table_load(&c->acl, shim_service.acl, cfg, SEC, err,
	        sizeof(err)) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	return 0;
}

/* --- the loop ------------------------------------------------------------ */

static void
on_child_signal(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	shim_children_reap(arg);
}

static void
on_stop_signal(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	struct shim *s = arg;

	log_info("signal %d: exiting (containers keep running)",
	    (int)si->ssi_signo);
	mts_loop_stop(s->loop);
}

static void
on_store_timer(void *arg, mts_time_t now)
{
	struct shim *s = arg;

	shim_store_retry(s);
	mts_timer_arm(s->loop, &s->store_timer, now + 1000);
}

/* After every turn: one monitor kept waiting for the next start. */
static void
on_turn(void *arg, mts_time_t now)
{
	shim_monitor_spare(arg);
}

/* The loop and its signals (children, and the stop signals: containers
 * keep running), before anything registers on it. Calls on the loop are
 * meant to be short: a turn over 500 ms is logged (callers of shim.sock
 * wait meanwhile). */
static int
loop_setup(struct shim *s)
{
	if ((s->loop = mts_loop_new()) == NULL ||
	    mts_loop_signal(s->loop, SIGCHLD, on_child_signal, s) < 0 ||
	    mts_loop_signal(s->loop, SIGTERM, on_stop_signal, s) < 0 ||
	    mts_loop_signal(s->loop, SIGINT, on_stop_signal, s) < 0 ||
	    mts_loop_signal(s->loop, SIGHUP, on_stop_signal, s) < 0 ||
	    mts_loop_on_turn(s->loop, on_turn, s) < 0)
		return -1;
	mts_loop_set_slow_ms(s->loop, LOOP_SLOW_MS);
	mts_timer_init(&s->store_timer, "statestore retry", on_store_timer, s);
	mts_timer_arm(s->loop, &s->store_timer, mts_now());
	return 0;
}

static int
setup(struct shim *s)
{
	char path[SHIM_PATH], err[512];

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		log_warn("PR_SET_CHILD_SUBREAPER");
		return -1;
	}
	if (loop_setup(s) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/tasks", s->cfg.statedir);
	if (mts_mkdir_p(path, 0700, 0755) < 0 ||
	    mts_mkdir_p(s->cfg.runtime_root, 0700, 0755) < 0 ||
	    mts_mkdir_p(s->cfg.rundir, 0700, 0755) < 0) {
		log_warn("state directories under %s", s->cfg.statedir);
		return -1;
	}
	if (shim_exec_setup(s) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/images", s->cfg.statedir);
	if (mts_store_open(path, &s->store, err, sizeof(err)) != 0) {
		log_warnx("%s", err);
		return -1;
	}
	s->images_dirty = 1; /* i/<node>, by the statestore timer */
	return 0;
}

int
main(int argc, char **argv)
{
	static struct shim s;
	struct mts_agent ag;
	char path[SHIM_PATH], err[512];

	mts_agent_init(&ag, "shim", argc, argv, NULL, NULL, NULL);
	if (mts_crypto_init() != 0)
		fatalx("libsodium init failed");
	s.spare_fd = -1;
	if (config(&s, &ag) != 0) {
		mts_acl_table_free(&s.cfg.acl);
		mts_agent_free(&ag);
		return MTS_EXIT_USAGE;
	}
	if (setup(&s) != 0)
		return MTS_EXIT_FAILURE;
	log_info("runtime %s, root %s, state %s", s.cfg.runtime,
	    s.cfg.runtime_root, s.cfg.statedir);
	shim_tasks_recover(&s);
	if (mts_agent_sandbox(&ag) != 0)
		return MTS_EXIT_FAILURE;
	if (mts_ipc_sock_path(path, sizeof(path), s.cfg.rundir, "shim", NULL) !=
	        0 ||
	    (s.srv = mts_ipc_server_open(path, &shim_service, &s, err,
	         sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return MTS_EXIT_FAILURE;
	}
	mts_ipc_server_set_acl(s.srv, &s.cfg.acl);
	if (mts_loop_add_server(s.loop, s.srv) != 0)
		return MTS_EXIT_FAILURE;
	mts_agent_ready(&ag);
	if (mts_loop_run(s.loop) != 0)
		fatalx("the loop failed");
	shim_exec_free_all(&s);
	shim_waits_free(&s);
	mts_loop_remove_server(s.loop, s.srv);
	mts_ipc_server_close(s.srv);
	if (s.ss != NULL)
		mts_ipc_client_close(s.ss);
	while (s.tasks != NULL) {
		struct shim_task *t = s.tasks;
		s.tasks = t->next;
		shim_task_free(t);
	}
	mts_store_close(s.store);
	mts_loop_free(s.loop);
	mts_acl_table_free(&s.cfg.acl);
	mts_agent_free(&ag);
	return MTS_EXIT_OK;
}
