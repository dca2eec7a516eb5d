/* statestore_conf.c: the keys of mts.conf's [statestore] section — the replica (DESIGN.md section 5, docs/statestore.md). */
#include <stddef.h>

#include "cfg.h"

static const struct mts_cfg_schema keys[] = {
	{ "statestore", "tombstone_retention", MTS_CFG_DURATION, "7d",
	    "how long deletes are kept before they are pruned" },
	{ "statestore", "prune_interval", MTS_CFG_DURATION, "1h",
	    "how often expired tombstones are looked for" },
	{ "statestore", "max_message", MTS_CFG_SIZE, "4M",
	    "largest request accepted on statestore.sock" },
	{ "statestore", "acl_read", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed get/scan/root/page/records" },
	{ "statestore", "acl_write", MTS_CFG_LIST, "0",
	    "users allowed put/delete" },
	{ "statestore", "acl_merge", MTS_CFG_LIST, "0",
	    "users allowed to merge records from peers (gossipd)" },
	{ "statestore", "sync", MTS_CFG_BOOL, "yes",
	    "fsync the write-ahead log before acknowledging (never turn off "
	    "outside benchmarks)" },
	{ NULL, NULL, 0, NULL, NULL },
};

static const struct mts_conf_table statestore_conf = { "statestore", keys };
MTS_CONF_TABLE(statestore_conf);
