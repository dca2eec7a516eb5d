/* shim_conf.c: the keys of mts.conf's [shim] section — containers through an OCI runtime (DESIGN.md section 8, docs/containers.md). */
#include <stddef.h>

#include "cfg.h"

static const struct mts_cfg_schema keys[] = {
	{ "shim", "runtime", MTS_CFG_STR, "auto",
	    "OCI runtime: auto (crun on pure cgroup v2 hosts, else runc), "
	    "runc, crun or a path" },
	{ "shim", "runtime_root", MTS_CFG_STR, "",
	    "runtime state directory (default: RUNDIR/runc)" },
	{ "shim", "cgroup_parent", MTS_CFG_STR, "/mts",
	    "cgroup under which every container gets its own" },
	{ "shim", "rootfs", MTS_CFG_STR, "auto",
	    "task root file systems: auto, overlay or copy" },
	{ "shim", "log_max_size", MTS_CFG_SIZE, "10M",
	    "size at which a task's log file is rotated" },
	{ "shim", "log_max_files", MTS_CFG_UINT, "3",
	    "rotated log files kept per task" },
	{ "shim", "stop_grace", MTS_CFG_DURATION, "10s",
	    "default time between SIGTERM and SIGKILL on stop" },
	{ "shim", "container_seccomp", MTS_CFG_BOOL, "yes",
	    "apply the default container seccomp profile" },
	{ "shim", "acl", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed to use shim.sock" },
	{ "shim", "node_id", MTS_CFG_STR, "",
	    "node id for t/<node>/<task> records (MTS_NODE_ID overrides; "
	    "empty: no statestore writes)" },
	{ "shim", "monitor", MTS_CFG_STR, "",
	    "path of mts-shim-monitor (default: next to mts-shim)" },
	{ "shim", "acl_relay", MTS_CFG_LIST, "",
	    "users (the node's gossipd) allowed the requests other nodes may "
	    "make: task list/inspect, logs, exec, image blobs" },
	{ "shim", "exec_idle_timeout", MTS_CFG_DURATION, "30s",
	    "an exec session nobody polled for this long is killed" },
	{ "shim", "pull_low_speed_limit", MTS_CFG_SIZE, "1K",
	    "an image pull transfer slower than this many bytes a second "
	    "for pull_low_speed_time fails" },
	{ "shim", "pull_low_speed_time", MTS_CFG_DURATION, "30s",
	    "see pull_low_speed_limit" },
	{ "shim", "pull_timeout", MTS_CFG_DURATION, "30m",
	    "deadline of a whole image pull" },
	{ "shim", "pull_max_blob", MTS_CFG_SIZE, "4G",
	    "largest blob (layer) size a pulled manifest may declare" },
	{ "shim", "peer_fetch_rate", MTS_CFG_SIZE, "64M",
	    "bytes a second an image fetch from other nodes receives, at most "
	    "(0: no limit)" },
	{ "shim", "peer_chunk_timeout", MTS_CFG_DURATION, "10s",
	    "deadline of each chunk (1 MiB) of an image fetched from another "
	    "node; then the next holder is asked" },
	{ "shim", "test_corrupt_chunks", MTS_CFG_UINT, "0",
	    "test hook: flip one byte in each of the first N image chunks "
	    "served to other nodes (never set it in production)" },
	{ "shim", "default_pids_limit", MTS_CFG_INT, "4096",
	    "processes (and threads) a task may have when its spec sets no "
	    "pids limit; 0: none" },
	{ NULL, NULL, 0, NULL, NULL },
};

static const struct mts_conf_table shim_conf = { "shim", keys };
MTS_CONF_TABLE(shim_conf);
