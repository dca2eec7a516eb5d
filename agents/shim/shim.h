/* shim.h: private to mts-shim — the agent's state (config, tasks, child processes) shared by its I/O files. */
#ifndef MTS_SHIM_H
#define MTS_SHIM_H

#include <spawn.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "acl.h"
#include "cfg.h"
#include "image_store.h"
#include "ipc.h"
#include "exec_core.h"
#include "loop.h"
#include "shim.pb-c.h"
#include "shim_core.h"

#define SHIM_PATH 4096
#define SHIM_DIRMAX 1024 /* configured directories */
#define SHIM_TASKDIR (SHIM_DIRMAX + 96)

struct shim_cfg {
	char rundir[SHIM_DIRMAX];
	char statedir[SHIM_DIRMAX]; /* the shim's own: tasks/, images/ */
	char runtime[SHIM_DIRMAX];  /* absolute path of runc/crun */
	char runtime_root[SHIM_DIRMAX];
	char monitor[SHIM_DIRMAX];    /* mts-shim-monitor */
	char image_tool[SHIM_DIRMAX]; /* mts-shim-image */
	char cgroup_parent[256];
	char cgroup_mem[SHIM_DIRMAX]; /* memory controller mount */
	char node[64]; /* node id for t/<node>/<task>, "" = none */
	enum mts_rootfs_mode rootfs;
	int64_t log_max, log_keep;
	int64_t grace;
	int seccomp;
	struct mts_acl_table acl; /* who may call shim.sock: [shim] acl,
				   * acl_relay (shim_api.c's shim_acl) */
	int64_t exec_idle;        /* an exec session without a client ends */
	uint32_t default_pids;    /* a task's pids limit unless it sets one */
	int64_t pull_low_speed, pull_low_time, pull_timeout, pull_max_blob;
	int64_t peer_rate;          /* [shim] peer_fetch_rate, bytes/s */
	int64_t peer_chunk_timeout; /* [shim] peer_chunk_timeout, ms */
	int64_t test_corrupt;       /* [shim] test_corrupt_chunks */
};

/* A run waiting for its image (shim_images.c). */
struct shim_wait {
	Mts__Shim__TaskSpec *spec; /* owned copy */
	struct mts_ipc_call *call;
	int fetching; /* its image is being fetched now */
	struct shim_wait *next;
};

struct shim_task {
	struct mts_task core;
	struct shim *shim;
	Mts__Shim__TaskSpec *spec; /* owned, unpacked copy */
	char dir[SHIM_TASKDIR];
	char image_id[80];
	char error[512];
	char health_out[256];
	char rootfs_mode[16];
	uint64_t started_wall, finished_wall;
	pid_t monitor;
	int pidfd;                          /* the monitor's, -1 */
	int status_fd;                      /* monitor start report, -1 */
	struct mts_buf status;              /* bytes read from status_fd */
	struct mts_watch *status_w, *pid_w; /* the loop's, with the fds */
	struct mts_timer timer;             /* at the core's next deadline */
	struct mts_ipc_call *run_call;
	struct mts_ipc_call **stop_calls;
	size_t nstop;
	int remove_when_done;
	int dirty_store; /* statestore write pending */
	struct shim_task *next;
};

enum shim_child_kind {
	SHIM_CHILD_PROBE,
	SHIM_CHILD_IMAGE, /* mts-shim-image import/pull */
};

/* A helper process the loop waits for (probe, image job). */
struct shim_child {
	struct shim *shim;
	enum shim_child_kind kind;
	pid_t pid;
	char task[MTS_TASK_ID_MAX + 1];
	int fd;              /* its output, -1 */
	struct mts_watch *w; /* fd's */
	struct mts_buf out;
	int truncated;
	struct mts_ipc_call *call;
	mts_time_t deadline;
	struct mts_timer timer; /* deadline, or delivery of an early end */
	int timed_out;
	int status;
	int exited;
	int pull;       /* SHIM_CHILD_IMAGE: reply as a pull */
	char want[256]; /* the image asked for, for tasks waiting on it */
	struct shim_child *next;
};

struct shim {
	struct shim_cfg cfg;
	struct mts_image_store *store;
	struct mts_ipc_server *srv;
	struct shim_task *tasks;
	struct shim_child *children;
	struct mts_loop *loop;
	int image_job; /* an import or pull is running */
	mts_time_t next_store_retry;
	struct mts_timer store_timer; /* statestore retries, every second */
	pid_t spare;                  /* a monitor waiting for its job, 0 */
	int spare_fd;                 /* its socket, -1 */
	struct mts_ipc_client *ss;    /* statestore, lazily dialled */
	struct shim_exec *execs;      /* exec sessions (shim_exec.c) */
	struct mts_exits exits;       /* reaped before a session claimed them */
	struct shim_wait *waits;      /* runs waiting for an image */
	int images_dirty;             /* i/<node> to write again */
	int64_t corrupted;            /* chunks the test hook has spoilt */
};

/* A command for the runtime's exec. */
struct shim_exec_cmd {
	const char *task;
	const char *const *opts; /* exec options, NULL-terminated, or NULL */
	char *const *args;
	size_t nargs;
	char *const *env;
	size_t nenv;
	int shell; /* run args[0] through /bin/sh -c */
};

/* shim_watch.c: a task on the loop */
/* Sets up t's timer (task_alloc). */
void shim_task_loop_init(struct shim *, struct shim_task *);
/* Watches t's monitor descriptors that have no watcher yet and arms its
 * timer at the core's next deadline (after every step of the core). */
void shim_task_watch(struct shim_task *);
/* Frees t's watchers and disarms its timer (before t goes). */
void shim_task_unwatch(struct shim_task *);
/* Frees *w (before the descriptor) and closes *fd; both become unset. */
void shim_close_watched(int *fd, struct mts_watch **w);

/* shim_task.c */
struct shim_task *shim_task_find(struct shim *, const char *id);
int shim_task_create(struct shim *, const Mts__Shim__TaskSpec *,
    struct shim_task **out, char *err, size_t errlen);
void shim_task_event(struct shim *, struct shim_task *,
    const struct mts_task_ev *);
/* The core's deadline came (t's timer). */
void shim_task_tick(struct shim *, struct shim_task *, mts_time_t now);
void shim_task_monitor_status(struct shim *, struct shim_task *);
void shim_task_monitor_exit(struct shim *, struct shim_task *);
/* A held task (its container ended while the node was down) restarts. */
void shim_task_release(struct shim *, struct shim_task *);
int shim_task_remove(struct shim *, struct shim_task *, char *err,
    size_t errlen);
void shim_task_status(const struct shim_task *, Mts__Shim__TaskStatus *);
/* The status as it may leave the node (the statestore record, replies to
 * other nodes): the spec's env reduced to env_names, values left out. The
 * status points into sh, which shim_shared_free releases afterwards. */
struct shim_shared {
	Mts__Shim__TaskSpec spec;
	char **names;
};
void shim_task_status_shared(const struct shim_task *, Mts__Shim__TaskStatus *,
    struct shim_shared *sh);
void shim_shared_free(struct shim_shared *);
void shim_tasks_recover(struct shim *);
void shim_task_save(struct shim *, struct shim_task *);
void shim_store_retry(struct shim *);
int shim_runtime(struct shim *, const char *const *args, char *err,
    size_t errlen);
void shim_task_free(struct shim_task *);
/* At most max bytes of a file, NUL-terminated (caller frees); NULL if it
 * cannot be read. */
char *shim_read_text(const char *path, size_t max);
/* Keeps one monitor started ahead of need (none while a start is in
 * flight). */
void shim_monitor_spare(struct shim *);

/* shim_io.c */
/* posix_spawn attributes for every child: empty signal mask, SIGPIPE
 * default. */
void shim_spawnattr_init(posix_spawnattr_t *);
int shim_logs_read(const char *taskdir, uint64_t offset, uint32_t tail,
    size_t max, struct mts_buf *out, uint64_t *next, uint64_t *end);
void shim_probe_start(struct shim *, struct shim_task *);
/* Runs mts-shim-image with args (after the program name); the call (if
 * any) is answered when it ends, then shim_images_job_done runs with want
 * (the image asked for, "" for an import). */
int shim_image_start(struct shim *, const char *const *args, int pull,
    const char *want, struct mts_ipc_call *);
void shim_children_reap(struct shim *);

/* shim_images.c */
/* The statestore client, dialled on first use (NULL while it is down;
 * shim_task.c). */
struct mts_ipc_client *shim_ss(struct shim *);
/* Writes i/<node>: the images of this node's store (again later if the
 * statestore is down). */
void shim_images_publish(struct shim *);
/* Starts fetching the image of a run that lacks it; the run is created
 * (or refused) once the fetch ends. */
void shim_run_wait(struct shim *, const Mts__Shim__TaskSpec *,
    struct mts_ipc_call *);
/* An image job ended (rc 0: name is stored; else code and message). */
void shim_images_job_done(struct shim *, const char *want, int rc, int code,
    const char *msg);
/* The arguments of a helper run fetching ref (source: auto, pull, peers
 * or registry, as mts-shim-image fetch takes them); a.v is the argv after
 * the program name, pointing into a. */
struct shim_fetch_argv {
	char num[6][24];
	char store[SHIM_PATH];
	const char *v[24];
};
void shim_fetch_argv(struct shim *, struct shim_fetch_argv *a,
    const char *source, const char *ref, int insecure);
/* Runs spec now (shim_api.c): replied once started or failed. */
void shim_run(struct shim *, const Mts__Shim__TaskSpec *,
    struct mts_ipc_call *);
void shim_h_image_blob(void *ctx, const ProtobufCMessage *,
    struct mts_ipc_call *);
/* Replies to every waiting run (the shim is exiting). */
void shim_waits_free(struct shim *);

/* shim_exec.c */
/* The runtime exec argv (caller frees the array, not the strings). */
const char **shim_exec_argv(struct shim *, const struct shim_exec_cmd *);
int shim_exec_setup(struct shim *);
int shim_exec_begin(struct shim *, struct shim_task *,
    const Mts__Shim__ExecStartReq *, uint64_t *session, char *err,
    size_t errlen);
/* ExecReq: one session answered as a whole when the process ends. */
void shim_exec_oneshot(struct shim *, struct shim_task *,
    const Mts__Shim__ExecReq *, struct mts_ipc_call *);
void shim_exec_io(struct shim *, const Mts__Shim__ExecIoReq *,
    struct mts_ipc_call *);
/* 1 if pid was one of a session's processes. */
int shim_exec_reaped(struct shim *, pid_t pid, int status);
void shim_exec_free_all(struct shim *);

/* shim_api.c */
extern const struct mts_ipc_service shim_service;
/* Answers an import or pull with the image now stored under name. */
void shim_reply_image(struct shim *, struct mts_ipc_call *, const char *name,
    int pull);
/* Answers with the task's status: the whole spec for the node's own admins
 * ([shim] acl), env names only for everyone else (other nodes). */
void shim_reply_task(struct shim *, struct mts_ipc_call *,
    const struct shim_task *, int body);

#endif
