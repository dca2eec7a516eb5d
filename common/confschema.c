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

	{NULL, NULL, 0, NULL, NULL},
};
