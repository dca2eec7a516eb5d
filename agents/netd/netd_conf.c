/* netd_conf.c: the keys of mts.conf's [netd] section — the cluster CIDR, WireGuard's port, the MTU, the wireguard-go binary, who may attach tasks, the forced-collision test hook, the DNS server's port and upstream resolvers (loaded by netd.c; init and mtsctl link this table alone). */
#include <stddef.h>

#include "cfg.h"

static const struct mts_cfg_schema keys[] = {
	{ "netd", "cluster_cidr", MTS_CFG_STR, "10.210.0.0/16",
	    "the overlay's IPv4 range (prefix /8../23): each node claims a /24 "
	    "of it, the last /24 is kept for service VIPs; the same on every "
	    "node" },
	{ "netd", "listen_port", MTS_CFG_INT, "51820",
	    "UDP port of WireGuard (mts0); the same on every node" },
	{ "netd", "mtu", MTS_CFG_INT, "0",
	    "MTU of mts0, mtsbr0 and the tasks' eth0; 0: the lowest MTU of "
	    "the node's up interfaces minus 80 (WireGuard over IPv6)" },
	{ "netd", "wireguard_go", MTS_CFG_STR, "/usr/bin/wireguard-go",
	    "the userspace WireGuard binary that runs mts0" },
	{ "netd", "acl", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed to attach and detach tasks (the "
	    "node's reconciled, mtsctl)" },
	{ "netd", "subnet_force", MTS_CFG_INT, "-1",
	    "test hook: the /24 number (0-based in cluster_cidr) a node "
	    "without a claim tries first, to force collisions; -1: derived "
	    "from the node id" },
	{ "netd", "dns_port", MTS_CFG_INT, "53",
	    "UDP and TCP port of the DNS server on the bridge's address (the "
	    "tasks' resolver); 0: none" },
	{ "netd", "dns_upstream", MTS_CFG_STR, "",
	    "where names that are not the cluster's are forwarded: IPv4 "
	    "addresses with an optional :port, comma-separated; empty: the "
	    "IPv4 nameservers of /etc/resolv.conf" },
	{ NULL, NULL, 0, NULL, NULL },
};

static const struct mts_conf_table netd_conf = { "netd", keys };
MTS_CONF_TABLE(netd_conf);
