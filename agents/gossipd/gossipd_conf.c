/* gossipd_conf.c: the keys of mts.conf's [gossipd] section — membership, replication and relay between nodes (docs/gossip.md). */
#include <stddef.h>

#include "cfg.h"

static const struct mts_cfg_schema keys[] = {
	{ "gossipd", "listen", MTS_CFG_STR, "0.0.0.0:7373",
	    "TCP address:port gossipd accepts peers on" },
	{ "gossipd", "advertise", MTS_CFG_STR, "",
	    "address:port other nodes dial (default: listen)" },
	{ "gossipd", "probe_interval", MTS_CFG_DURATION, "1s",
	    "SWIM: one failure-detector probe per interval" },
	{ "gossipd", "probe_timeout", MTS_CFG_DURATION, "500ms",
	    "SWIM: wait this long for an ack before indirect probes" },
	{ "gossipd", "indirect_probes", MTS_CFG_UINT, "3",
	    "SWIM: members asked to probe an unresponsive node" },
	{ "gossipd", "suspicion_mult", MTS_CFG_UINT, "4",
	    "SWIM: suspicion timeout = mult x max(1, log10 N) x probe_interval" },
	{ "gossipd", "retransmit_mult", MTS_CFG_UINT, "4",
	    "SWIM: an update is piggybacked mult x ceil(log10(N+1)) times" },
	{ "gossipd", "dead_reclaim", MTS_CFG_DURATION, "0s",
	    "forget dead members after this long (0: keep them listed)" },
	{ "gossipd", "dead_probe_interval", MTS_CFG_DURATION, "1s",
	    "SWIM: ping the next dead members in turn this often, so that a healed "
	    "partition or an unheard restart comes back (0: never)" },
	{ "gossipd", "fanout", MTS_CFG_UINT, "0",
	    "peers each committed change is pushed to (0: ceil(ln N) - 1 for N "
	    "members, at least 3; at most 16)" },
	{ "gossipd", "ae_interval", MTS_CFG_DURATION, "1s",
	    "anti-entropy round with one random peer every interval" },
	{ "gossipd", "ae_rate", MTS_CFG_SIZE, "32M",
	    "anti-entropy bytes received per second, at most" },
	{ "gossipd", "max_payload", MTS_CFG_SIZE, "8M",
	    "largest message accepted from a peer (reassembled)" },
	{ "gossipd", "handshake_timeout", MTS_CFG_DURATION, "5s",
	    "connect + Noise handshake must finish within this" },
	{ "gossipd", "idle_timeout", MTS_CFG_DURATION, "30s",
	    "close a peer connection unused for this long" },
	{ "gossipd", "reconnect_max", MTS_CFG_DURATION, "5s",
	    "longest wait between reconnection attempts" },
	{ "gossipd", "statestore_timeout", MTS_CFG_DURATION, "5s",
	    "deadline of each request to the local statestore" },
	{ "gossipd", "max_links", MTS_CFG_UINT, "2048",
	    "TCP connections in all (members, joins, handshakes); beyond it "
	    "the oldest unfinished handshake is closed, else the newcomer" },
	{ "gossipd", "max_handshakes", MTS_CFG_UINT, "256",
	    "accepted connections still in their handshake; beyond it the "
	    "oldest is closed" },
	{ "gossipd", "max_handshakes_per_addr", MTS_CFG_UINT, "16",
	    "the same, from one source address" },
	{ "gossipd", "peer_log_interval", MTS_CFG_DURATION, "10s",
	    "repeated peer errors: one line per source and kind per "
	    "interval, then a count of the lines left out" },
	{ "gossipd", "acl_relay", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed to relay to other nodes" },
	{ "gossipd", "relay_allow", MTS_CFG_LIST, "",
	    "AGENT:REQUEST pairs other nodes may relay here, beyond the "
	    "built-in table (shim: list, inspect, logs, exec)" },
	{ "gossipd", "relay_inflight", MTS_CFG_INT, "16",
	    "relayed calls from one node served at once; more are refused" },
	{ NULL, NULL, 0, NULL, NULL },
};

static const struct mts_conf_table gossipd_conf = { "gossipd", keys };
MTS_CONF_TABLE(gossipd_conf);
