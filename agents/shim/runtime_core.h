/* runtime_core.h: which OCI runtime the shim drives (runc or crun), decided from the config value, the binaries present and the host's cgroup mode — pure, no file system access. */
#ifndef MTS_RUNTIME_CORE_H
#define MTS_RUNTIME_CORE_H

#include <stddef.h>

enum mts_cgroup_mode {
	MTS_CGROUP_V1,      /* /sys/fs/cgroup: per-controller v1 mounts only */
	MTS_CGROUP_HYBRID,  /* v1 controllers plus a cgroup2 mount (unified/) */
	MTS_CGROUP_UNIFIED, /* /sys/fs/cgroup is cgroup2 */
};

enum mts_runtime_kind {
	MTS_RUNTIME_RUNC,
	MTS_RUNTIME_CRUN,
};

/* What the main found on the host. */
struct mts_runtime_host {
	enum mts_cgroup_mode cgroup;
	const char *runc; /* absolute path of runc in PATH, or NULL */
	const char *crun; /* absolute path of crun in PATH, or NULL */
	int want_exists;  /* the configured PATH (value with a '/') is
			   * an executable file */
};

struct mts_runtime_choice {
	enum mts_runtime_kind kind;
	const char *path; /* points into the host struct or the config value */
	char why[256];    /* one line for the log: why this one */
};

/* Cgroup mode from the file system types of /sys/fs/cgroup and of
 * /sys/fs/cgroup/unified (is_cgroup2: statfs f_type == CGROUP2_SUPER_MAGIC;
 * unified_is_cgroup2 is ignored when root_is_cgroup2). */
enum mts_cgroup_mode mts_cgroup_mode_of(int root_is_cgroup2,
    int unified_is_cgroup2);
const char *mts_cgroup_mode_name(enum mts_cgroup_mode);

/* The runtime a program path is driven as: crun when its file name
 * starts with "crun", runc (and runc-compatible) otherwise. */
enum mts_runtime_kind mts_runtime_kind_of(const char *path);

/*
 * [shim] runtime = auto | runc | crun | PATH:
 *   auto: crun on a unified host when present (faster to start), runc
 *     otherwise; crun is never picked on a hybrid host (it refuses to
 *     create containers there), and on a v1 host only when runc is absent.
 *   runc / crun: that program from PATH; crun on a hybrid host is refused.
 *   PATH (contains '/'): that file, driven as mts_runtime_kind_of says,
 *     with the same hybrid rule.
 * Returns 0 with *out filled, or -MTS_ERR_NOTFOUND / -MTS_ERR_INVAL with
 * err saying why (the config value and the cgroup mode named).
 */
int mts_runtime_choose(const char *want, const struct mts_runtime_host *host,
    struct mts_runtime_choice *out, char *err, size_t errlen);

#endif
