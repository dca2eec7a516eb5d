/* bundle_core.h: pure construction of an OCI runtime bundle's config.json from a resolved task spec, plus argv/env/user resolution. */
#ifndef MTS_SHIM_BUNDLE_CORE_H
#define MTS_SHIM_BUNDLE_CORE_H

#include <stddef.h>
#include <stdint.h>

/* Docker's default capability set, as a bit mask and as names. */
#define MTS_DEFAULT_CAPS 0x00000000a80425fbULL
extern const char *const mts_default_caps[];

struct mts_bundle_mount {
	const char *source, *destination, *type;
	const char *const *options; /* NULL-terminated, may be NULL */
};

/* Everything config.json needs, already resolved (argv merged with the
 * image's, user mapped to ids). Borrowed pointers. */
struct mts_bundle_spec {
	const char *const *args; /* NULL-terminated, non-empty */
	const char *const *env;  /* NULL-terminated */
	const char *cwd;         /* NULL = "/" */
	uint32_t uid, gid;
	const char *hostname; /* NULL = none set */
	const struct mts_bundle_mount *mounts;
	size_t nmounts;
	const char *netns; /* NULL = a new network namespace */
	int read_only;
	uint64_t memory_limit;    /* bytes, 0 = none */
	uint32_t cpu_millis;      /* 0 = none */
	uint32_t pids_limit;      /* 0 = none */
	uint64_t nofile;          /* 0 = 1048576 */
	const char *cgroups_path; /* e.g. "/mts/<id>" */
	int seccomp;              /* apply the default container profile */
};

/* A task's spec as the bundle needs it: the shim points these at its
 * TaskSpec's fields (borrowed, counted arrays as protobuf has them). */
struct mts_task_mount {
	const char *source, *destination, *type;
	char *const *options;
	size_t noptions;
};

struct mts_task_spec {
	const char *id;
	char *const *entrypoint, *const *command, *const *env;
	size_t nentrypoint, ncommand, nenv;
	const char *cwd, *user, *hostname, *netns; /* "" or NULL = unset */
	const struct mts_task_mount *mounts;
	size_t nmounts;
	int read_only;
	uint64_t memory_limit;
	uint32_t cpu_millis, pids_limit;
	uint64_t nofile;
};

/* What the node brings: its settings and what it read for the task. */
struct mts_bundle_host {
	const char *cgroup_parent; /* [shim] cgroup_parent */
	uint32_t default_pids;     /* [shim] default_pids_limit */
	uint64_t nofile_max; /* the shim's hard RLIMIT_NOFILE, 0 = unknown */
	int seccomp;         /* [shim] container_seccomp */
	const char *passwd, *group; /* the image's files, NULL = missing */
};

struct mts_image_config;

/* The task -> config.json translation: argv and env by Docker's rules, the
 * user resolved against the image's files, the image's working directory,
 * mounts checked (absolute destinations), hostname and cgroup from the id,
 * the limits with the node's defaults. Returns config.json text (caller
 * frees) or NULL with err filled. No I/O. */
char *mts_bundle_for_task(const struct mts_task_spec *,
    const struct mts_image_config *, const struct mts_bundle_host *, char *err,
    size_t errlen);

/* The text of a task's /etc/resolv.conf: "nameserver A" per server (IPv4
 * dotted quads, at most 3, as resolv.conf's MAXNS), "search D..." when
 * search is given (at most 6 domains of letters, digits, '-', '_' and
 * '.'). Caller frees; NULL with err filled for a bad entry. No I/O. */
char *mts_resolv_conf(char *const *servers, size_t nservers,
    char *const *search, size_t nsearch, char *err, size_t errlen);

/* TaskSpec.pids_limit meaning "no limit" (0 means the node's default). */
#define MTS_PIDS_UNLIMITED 0xffffffffu

/* The pids limit a task gets (0 = none): its own, else the node's default. */
uint32_t mts_task_pids_limit(uint32_t requested, uint32_t node_default);

/* Returns config.json text (caller frees) or NULL with err filled. */
char *mts_bundle_config(const struct mts_bundle_spec *, char *err,
    size_t errlen);

/* The process argv by Docker's rules: the task's entrypoint replaces the
 * image's (and then drops the image's Cmd); the task's command replaces the
 * image's Cmd. Returns a NULL-terminated array of borrowed pointers (free
 * only the array) or NULL if it would be empty. */
const char **mts_task_argv(char *const *img_ep, char *const *img_cmd,
    char *const *ep, size_t nep, char *const *cmd, size_t ncmd);

/* The environment: image Env, then task env overriding by name. Returns a
 * NULL-terminated array of borrowed pointers (free only the array). */
const char **mts_task_env(char *const *img_env, char *const *env, size_t nenv);

/* Resolves "uid[:gid]" or "name[:group]" against /etc/passwd and
 * /etc/group texts (either may be NULL). 0 or -MTS_ERR_NOTFOUND/INVAL. */
int mts_user_resolve(const char *user, const char *passwd, const char *group,
    uint32_t *uid, uint32_t *gid);

#endif
