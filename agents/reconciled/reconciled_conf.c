/* reconciled_conf.c: the keys of mts.conf's [reconciled] section — how often the view is read, the owner's lease ttl, how long an assigned task counts before its record arrives, how long a returning node's held tasks wait for a synced view, the backoff of a refusing node, the ended tasks kept, how long a node where a task failed is avoided, whether tasks get their network from netd, who may call — and their loading. */
#include <stddef.h>

#include "cfg.h"
#include "log.h"
#include "reconciled.h"

static const struct mts_cfg_schema keys[] = {
	{ "reconciled", "tick", MTS_CFG_DURATION, "1s",
	    "a full reconciliation at least this often (changes of the "
	    "state and of membership trigger one sooner)" },
	{ "reconciled", "lease_ttl", MTS_CFG_DURATION, "10s",
	    "ttl of the leases an owner prepares on a node's schedd" },
	{ "reconciled", "assign_wait", MTS_CFG_DURATION, "15s",
	    "an owner counts a task it assigned until its record arrives, "
	    "at most this long" },
	{ "reconciled", "backoff", MTS_CFG_DURATION, "1s",
	    "a node that refused a reservation is left out this long, "
	    "doubling while it keeps refusing" },
	{ "reconciled", "backoff_max", MTS_CFG_DURATION, "30s",
	    "the longest a refusing node is left out" },
	{ "reconciled", "settle", MTS_CFG_DURATION, "5s",
	    "after a member held dead comes back (a healed partition, a "
	    "restart) and at start, owners place nothing and stop only the "
	    "stale tasks of the nodes that came back this long, so that the "
	    "records of both sides and the membership have met" },
	{ "reconciled", "return_hold", MTS_CFG_DURATION, "5s",
	    "after this node (re)starts, a task whose container ended while "
	    "it was down runs again only once its record is checked against "
	    "a synced view (gossipd completed an anti-entropy round with a "
	    "peer; at once without peers), and at most this long after the "
	    "start: one replaced meanwhile is stopped instead" },
	{ "reconciled", "history", MTS_CFG_UINT, "3",
	    "ended tasks (failed, or exited and replaced) a node keeps per "
	    "service for service ps" },
	{ "reconciled", "failed_avoid", MTS_CFG_DURATION, "5m",
	    "a node where a task of a service failed (its restart policy "
	    "gave up) is left out of that service's placements this long, "
	    "while another node can take it; counted from when this node "
	    "first saw the failure, on its own clock" },
	{ "reconciled", "netd", MTS_CFG_BOOL, "no",
	    "the node runs mts-netd: each task gets its network namespace "
	    "and address from netd (Attach, on the networks of its service) "
	    "before the shim starts it in that namespace, and is detached "
	    "after the shim removed it; no: tasks get an empty namespace "
	    "of their own" },
	{ "reconciled", "acl", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed every call on reconciled.sock "
	    "(mtsctl)" },
	{ "reconciled", "acl_relay", MTS_CFG_LIST, "",
	    "users allowed the calls owners on other nodes make through the "
	    "relay (assign, stop): the node's gossipd" },
	{ NULL, NULL, 0, NULL, NULL },
};

static const struct mts_conf_table reconciled_conf = { "reconciled", keys };
MTS_CONF_TABLE(reconciled_conf);

int
rc_conf_load(struct rc_conf *c, const struct mts_cfg *cfg)
{
	c->tick_ms = mts_cfg_int(cfg, RC_SECTION, "tick");
	c->lease_ttl_ms = mts_cfg_int(cfg, RC_SECTION, "lease_ttl");
	c->assign_wait_ms = mts_cfg_int(cfg, RC_SECTION, "assign_wait");
	c->backoff_ms = mts_cfg_int(cfg, RC_SECTION, "backoff");
	c->backoff_max_ms = mts_cfg_int(cfg, RC_SECTION, "backoff_max");
	c->settle_ms = mts_cfg_int(cfg, RC_SECTION, "settle");
	c->return_hold_ms = mts_cfg_int(cfg, RC_SECTION, "return_hold");
	c->history = (uint32_t)mts_cfg_int(cfg, RC_SECTION, "history");
	c->failed_avoid_ms = mts_cfg_int(cfg, RC_SECTION, "failed_avoid");
	c->netd = mts_cfg_bool(cfg, RC_SECTION, "netd");
	if (c->tick_ms <= 0 || c->lease_ttl_ms <= 0 ||
	    c->lease_ttl_ms > 3600000 || c->assign_wait_ms <= 0 ||
	    c->backoff_ms <= 0 || c->backoff_max_ms < c->backoff_ms ||
	    c->settle_ms < 0 || c->settle_ms > 600000 ||
	    c->return_hold_ms < 0 || c->return_hold_ms > 600000) {
		log_warnx("[reconciled] tick, lease_ttl (at most 1h), "
		          "assign_wait and backoff must be more than 0, "
		          "backoff_max at least backoff, settle and "
		          "return_hold 0 to 10m");
		return -1;
	}
	return 0;
}
