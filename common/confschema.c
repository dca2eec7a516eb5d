/* confschema.c: every key mts.conf accepts, its type, default and meaning (the one table init and agents share). */
#include <stddef.h>

#include "cfg.h"

/*
 * [node] holds node-wide settings. Every other section configures one agent
 * (its name is the section name): the "*" keys are what init needs to run
 * any agent, the agent-specific keys follow under the agent's own name.
 */
const struct mts_cfg_schema mts_conf_schema[] = {
	{"node", "", MTS_CFG_PLAIN, NULL, NULL},
	{"node", "name", MTS_CFG_STR, NULL,
	    "node name shown to people (default: the hostname)"},
	{"node", "rundir", MTS_CFG_STR, "/run/mts",
	    "directory of the node's sockets (MTS_RUNDIR)"},
	{"node", "statedir", MTS_CFG_STR, "/var/lib/mts",
	    "directory of the node's persistent state"},
	{"node", "debug", MTS_CFG_BOOL, "no", "verbose logging in every agent"},

	/* statestore: the replica (DESIGN.md section 5) */
	{"statestore", "tombstone_retention", MTS_CFG_DURATION, "7d",
	    "how long deletes are kept before they are pruned"},
	{"statestore", "prune_interval", MTS_CFG_DURATION, "1h",
	    "how often expired tombstones are looked for"},
	{"statestore", "max_message", MTS_CFG_SIZE, "4M",
	    "largest request accepted on statestore.sock"},
	{"statestore", "acl_read", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed get/scan/root/page/records"},
	{"statestore", "acl_write", MTS_CFG_LIST, "0",
	    "users allowed put/delete"},
	{"statestore", "acl_merge", MTS_CFG_LIST, "0",
	    "users allowed to merge records from peers (gossipd)"},
	{"statestore", "sync", MTS_CFG_BOOL, "yes",
	    "fsync the write-ahead log before acknowledging (never turn off "
	    "outside benchmarks)"},

	/* init: mts-init itself, and the "*" keys of every agent section */
	{"init", "", MTS_CFG_PLAIN, NULL, NULL},
	{"init", "admin_group", MTS_CFG_STR, "0",
	    "group (name or gid) owning the run directory and admin.sock: "
	    "its members may use mtsctl; agents join it to reach sockets"},
	{"node", "key", MTS_CFG_STR, "",
	    "the node's static X25519 key (32 bytes, mode 0600), created by "
	    "mts-init when missing; default <statedir>/node.key; the node id "
	    "is derived from it"},
	{"*", "node_key", MTS_CFG_BOOL, "no",
	    "give the agent the node's static key (MTS_NODE_KEY_FD): gossipd"},
	{"*", "executable", MTS_CFG_STR, NULL,
	    "the agent's program (absolute, or relative to mts.conf's directory)"},
	{"*", "args", MTS_CFG_LIST, "",
	    "extra arguments, after the standard '-c CONFIG'"},
	{"*", "enabled", MTS_CFG_BOOL, "yes", "no: the section is ignored"},
	{"*", "user", MTS_CFG_STR, NULL, "user to run as (name or uid)"},
	{"*", "group", MTS_CFG_STR, NULL,
	    "group to run as (name or gid; default: the user's group, or the "
	    "uid for a numeric user)"},
	{"*", "groups", MTS_CFG_LIST, "", "supplementary groups"},
	{"*", "capabilities", MTS_CFG_LIST, "",
	    "capabilities kept, ambient (e.g. net_admin), or 'all'"},
	{"*", "seccomp", MTS_CFG_STR, "",
	    "seccomp policy file (empty: no filter)"},
	{"*", "seccomp_debug", MTS_CFG_BOOL, "no",
	    "report a denied syscall by name instead of killing at once"},
	{"*", "after", MTS_CFG_LIST, "",
	    "agents that must be ready before this one starts"},
	{"*", "restart", MTS_CFG_STR, "always", "always, on-failure or never"},
	{"*", "restart_delay", MTS_CFG_DURATION, "100ms",
	    "first restart delay; doubles on each quick crash"},
	{"*", "restart_max_delay", MTS_CFG_DURATION, "30s",
	    "cap of the restart delay"},
	{"*", "restart_reset", MTS_CFG_DURATION, "10s",
	    "a run this long resets the restart delay"},
	{"*", "ready_timeout", MTS_CFG_DURATION, "10s",
	    "time to report readiness before being killed"},
	{"*", "stop_timeout", MTS_CFG_DURATION, "5s",
	    "grace period between SIGTERM and SIGKILL"},
	{"*", "chroot", MTS_CFG_STR, "", "directory to chroot into (empty: none)"},
	{"*", "limit_nofile", MTS_CFG_INT, "4096", "RLIMIT_NOFILE"},
	{"*", "log", MTS_CFG_STR, "",
	    "file for the agent's stderr (empty: mts-init's stderr)"},

	/* gossipd: membership, replication and relay between nodes (docs/gossip.md) */
	{"gossipd", "listen", MTS_CFG_STR, "0.0.0.0:7373",
	    "TCP address:port gossipd accepts peers on"},
	{"gossipd", "advertise", MTS_CFG_STR, "",
	    "address:port other nodes dial (default: listen)"},
	{"gossipd", "probe_interval", MTS_CFG_DURATION, "1s",
	    "SWIM: one failure-detector probe per interval"},
	{"gossipd", "probe_timeout", MTS_CFG_DURATION, "500ms",
	    "SWIM: wait this long for an ack before indirect probes"},
	{"gossipd", "indirect_probes", MTS_CFG_INT, "3",
	    "SWIM: members asked to probe an unresponsive node"},
	{"gossipd", "suspicion_mult", MTS_CFG_INT, "4",
	    "SWIM: suspicion timeout = mult x max(1, log10 N) x probe_interval"},
	{"gossipd", "retransmit_mult", MTS_CFG_INT, "4",
	    "SWIM: an update is piggybacked mult x ceil(log10(N+1)) times"},
	{"gossipd", "dead_reclaim", MTS_CFG_DURATION, "0s",
	    "forget dead members after this long (0: keep them listed)"},
	{"gossipd", "fanout", MTS_CFG_INT, "3",
	    "peers each committed change is pushed to"},
	{"gossipd", "ae_interval", MTS_CFG_DURATION, "2s",
	    "anti-entropy round with one random peer every interval"},
	{"gossipd", "ae_rate", MTS_CFG_SIZE, "32M",
	    "anti-entropy bytes received per second, at most"},
	{"gossipd", "max_payload", MTS_CFG_SIZE, "8M",
	    "largest message accepted from a peer (reassembled)"},
	{"gossipd", "handshake_timeout", MTS_CFG_DURATION, "5s",
	    "connect + Noise handshake must finish within this"},
	{"gossipd", "idle_timeout", MTS_CFG_DURATION, "30s",
	    "close a peer connection unused for this long"},
	{"gossipd", "reconnect_max", MTS_CFG_DURATION, "5s",
	    "longest wait between reconnection attempts"},
	{"gossipd", "statestore_timeout", MTS_CFG_DURATION, "5s",
	    "deadline of each request to the local statestore"},
	{"gossipd", "max_links", MTS_CFG_INT, "2048",
	    "TCP connections in all (members, joins, handshakes); beyond it "
	    "the oldest unfinished handshake is closed, else the newcomer"},
	{"gossipd", "max_handshakes", MTS_CFG_INT, "256",
	    "accepted connections still in their handshake; beyond it the "
	    "oldest is closed"},
	{"gossipd", "max_handshakes_per_addr", MTS_CFG_INT, "16",
	    "the same, from one source address"},
	{"gossipd", "peer_log_interval", MTS_CFG_DURATION, "10s",
	    "repeated peer errors: one line per source and kind per "
	    "interval, then a count of the lines left out"},
	{"gossipd", "acl_relay", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed to relay to other nodes"},

	/* shim: containers through an OCI runtime (DESIGN.md section 8) */
	{"shim", "runtime", MTS_CFG_STR, "auto",
	    "OCI runtime: auto (crun on pure cgroup v2 hosts, else runc), "
	    "runc, crun or a path"},
	{"shim", "runtime_root", MTS_CFG_STR, "",
	    "runtime state directory (default: RUNDIR/runc)"},
	{"shim", "cgroup_parent", MTS_CFG_STR, "/mts",
	    "cgroup under which every container gets its own"},
	{"shim", "rootfs", MTS_CFG_STR, "auto",
	    "task root file systems: auto, overlay or copy"},
	{"shim", "log_max_size", MTS_CFG_SIZE, "10M",
	    "size at which a task's log file is rotated"},
	{"shim", "log_max_files", MTS_CFG_INT, "3",
	    "rotated log files kept per task"},
	{"shim", "stop_grace", MTS_CFG_DURATION, "10s",
	    "default time between SIGTERM and SIGKILL on stop"},
	{"shim", "container_seccomp", MTS_CFG_BOOL, "yes",
	    "apply the default container seccomp profile"},
	{"shim", "acl", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed to use shim.sock"},
	{"shim", "node_id", MTS_CFG_STR, "",
	    "node id for t/<node>/<task> records (MTS_NODE_ID overrides; "
	    "empty: no statestore writes)"},
	{"shim", "monitor", MTS_CFG_STR, "",
	    "path of mts-shim-monitor (default: next to mts-shim)"},
	{"shim", "acl_relay", MTS_CFG_LIST, "",
	    "users (the node's gossipd) allowed the requests other nodes may "
	    "make: task list/inspect, logs, exec"},
	{"shim", "exec_idle_timeout", MTS_CFG_DURATION, "30s",
	    "an exec session nobody polled for this long is killed"},

	{NULL, NULL, 0, NULL, NULL},
};
