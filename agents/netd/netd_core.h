/* netd_core.h: mts-netd's pure decisions — the cluster CIDR and the node's /24 (derived from its id, collisions settled by the lowest node id), task addresses in the /24, and the WireGuard peer set with its UAPI diff. */
#ifndef NETD_CORE_H
#define NETD_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

#define NETD_KEY_LEN 32
#define NETD_HOST_FIRST 2  /* .1 is the bridge (gateway, DNS) */
#define NETD_HOST_LAST 254 /* .255 is the broadcast address */
#define NETD_TASK_MAX 128  /* a task id, NUL included */
#define NETD_ENDPOINT_MAX 64
#define NETD_WG_OVERHEAD 80 /* IPv6 outer header 40 + UDP 8 + WireGuard 32 */
#define NETD_NET_MAX 64     /* a network's name, NUL included */
#define NETD_NETS_MAX 16    /* networks a task may be on */
#define NETD_NETS_TEXT (NETD_NETS_MAX * NETD_NET_MAX) /* comma-joined */

/* The cluster CIDR: base address (host order) and prefix length, 8..24. */
struct netd_cidr {
	uint32_t base;
	unsigned plen;
};

/* "10.210.0.0/16" -> cidr; the host bits must be zero. 0 or -MTS_ERR_INVAL. */
int netd_cidr_parse(const char *text, struct netd_cidr *out);
/* How many /24s nodes may claim: all of the CIDR's but the last, which is
 * kept for service VIPs. */
uint32_t netd_subnet_count(const struct netd_cidr *);
/* The network address (host order) of /24 number idx. */
uint32_t netd_subnet_net(const struct netd_cidr *, uint32_t idx);
/* The /24 number of a network address inside the CIDR, or -1. */
int32_t netd_subnet_index(const struct netd_cidr *, uint32_t net);
/* Dotted quad of a host-order address into out (>= 16 bytes). */
void netd_ip_str(char *out, size_t outlen, uint32_t addr);
/* Dotted quad -> host order; 0 or -MTS_ERR_INVAL. */
int netd_ip_parse(const char *text, uint32_t *out);

/* What another node claims: its id and /24 number (-1: none yet). */
struct netd_claim {
	uint8_t node[MTS_NODE_ID_LEN];
	int32_t subnet;
};

/* The k-th /24 a node tries, among n: BLAKE2b of (id, k), modulo n. */
uint32_t netd_candidate(const uint8_t node[MTS_NODE_ID_LEN], uint32_t k,
    uint32_t n);
/*
 * The /24 self should claim given its current claim (-1: none) and the
 * others' claims as the replicated records show them. A claim is kept
 * unless a node with a lower id claims the same /24; otherwise the first
 * candidate nobody else claims. So every collision ends with the lowest
 * id keeping the /24 and the others moving, and once every node sees the
 * same claims no two keep the same one. -1 when every /24 is taken.
 */
int32_t netd_subnet_choose(const uint8_t self[MTS_NODE_ID_LEN], int32_t current,
    const struct netd_claim *others, size_t nothers, uint32_t n);

/* --- task attachments ------------------------------------------------------ */

struct netd_attach {
	char task[NETD_TASK_MAX];
	uint8_t host; /* last octet of the address in the node's /24 */
	char nets[NETD_NETS_TEXT]; /* its networks, comma-joined, sorted */
};

struct netd_attachments {
	struct netd_attach *a;
	size_t n, cap;
};

void netd_att_init(struct netd_attachments *);
void netd_att_free(struct netd_attachments *);
const struct netd_attach *netd_att_find(const struct netd_attachments *,
    const char *task);
/* The task's attachment, made with the lowest free host number when it
 * has none (*created set to 1 then). NULL when the /24 is full or the
 * task id is empty, too long, "." or "..". */
const struct netd_attach *netd_att_add(struct netd_attachments *,
    const char *task, int *created);
/* Records an attachment read back (persisted state): -MTS_ERR_CONFLICT when
 * the task or the host number is taken, -MTS_ERR_INVAL when out of range. */
int netd_att_restore(struct netd_attachments *, const char *task,
    unsigned host);
/* Sets the networks (comma-joined, as netd_nets_join makes them) of the
 * task's attachment: 1 when they changed, 0 when not, -MTS_ERR_NOTFOUND. */
int netd_att_set_nets(struct netd_attachments *, const char *task,
    const char *nets);
/* 1 when the task had an attachment (now gone), 0 otherwise. */
int netd_att_remove(struct netd_attachments *, const char *task);
/* "task host[ net,net...]\n" lines, in host order, into a malloc'd string
 * (caller frees), and back: parse replaces the set; a bad line is
 * -MTS_ERR_INVAL and leaves the set empty. */
char *netd_att_format(const struct netd_attachments *);
int netd_att_parse(struct netd_attachments *, const char *text);

/* --- networks ----------------------------------------------------------------- */

/* A network's name: 1..NETD_NET_MAX-1 bytes of [A-Za-z0-9_.-]. */
int netd_net_ok(const char *name);
/* names[0..n) checked, sorted, duplicates dropped and comma-joined into
 * out (NETD_NETS_TEXT bytes). 0, or -MTS_ERR_INVAL for a bad name or more
 * than NETD_NETS_MAX. */
int netd_nets_join(char *const *names, size_t n, char *out, size_t outlen);
/* Whether nets is "" or a comma-joined list of valid names. */
int netd_nets_valid(const char *nets);
/* Whether the comma-joined list nets holds name. */
int netd_nets_has(const char *nets, const char *name);

/* A task's address and networks as the isolation part of the nftables
 * table needs them: this node's attachments (local) and the other nodes'
 * tasks from their t/ records. */
struct netd_member {
	uint32_t addr;    /* host order */
	const char *nets; /* comma-joined; "" or NULL: none */
	int local;
};

/*
 * The isolation part of the table (nft syntax, malloc'd; caller frees):
 * for every network with a task on this node, a set of the addresses of
 * all its tasks (here and elsewhere) and a rule in chain `isolate` that
 * accepts a packet whose source and destination are both in it; a set
 * `known` of every address that is on some network, with a rule that lets
 * two addresses on no network at all talk (attachments made without one);
 * then `jump allow` (other parts' exceptions) and a counted drop. bridge
 * is the interface whose outgoing packets chain `forward` sends through
 * `isolate` (after accepting established and related ones).
 */
char *netd_nft_isolation(const struct netd_member *, size_t n,
    const char *bridge);

/*
 * The change from one whole table text to the next (both as the parts
 * make them: sets of ipv4_addr with their elements sorted) as nft
 * commands on table (e.g. "inet mts"): "add element" and "delete element"
 * lines for each set whose elements differ, "" when nothing does. NULL
 * when anything else differs (a set added, removed or renamed, a rule, a
 * map), or a text is not in that form: then only a rebuild of the whole
 * table gets there. Malloc'd; caller frees.
 */
char *netd_nft_delta(const char *from, const char *to, const char *table);

/* --- WireGuard peers -------------------------------------------------------- */

/* A peer as WireGuard should have it: the node's key, where it listens,
 * and the /24 that is routed to it. */
struct netd_peer {
	uint8_t node[MTS_NODE_ID_LEN];
	uint8_t key[NETD_KEY_LEN];
	char endpoint[NETD_ENDPOINT_MAX]; /* host:port */
	uint32_t net;                     /* its /24, host order */
};

struct netd_peers {
	struct netd_peer *p;
	size_t n, cap;
};

/* What netd knows of another node: from gossipd (state, address), from
 * its m/<node> record (key), from its subnet claim. */
struct netd_node {
	uint8_t node[MTS_NODE_ID_LEN];
	int alive;   /* alive or suspect, not removed */
	int has_key; /* key is its member record's public key */
	uint8_t key[NETD_KEY_LEN];
	char host[NETD_ENDPOINT_MAX]; /* gossip address without its port */
	int32_t subnet;               /* -1: no claim seen */
};

void netd_peers_init(struct netd_peers *);
void netd_peers_free(struct netd_peers *);
/* The peers WireGuard should have: every live other node with a key, an
 * address and a /24 that no lower node id claims too, sorted by key. */
void netd_peers_want(struct netd_peers *out,
    const uint8_t self[MTS_NODE_ID_LEN], const struct netd_node *nodes,
    size_t n, const struct netd_cidr *cidr, unsigned port);
/* The UAPI "set" lines that turn peers `have` into `want` (both sorted by
 * key), in key order: a removal for each peer gone, and each new or changed
 * peer with its endpoint and one
 * allowed IP (its /24). A malloc'd string (caller frees), "" when equal. */
char *netd_peers_diff(const struct netd_peers *have,
    const struct netd_peers *want);
/* Copies src over dst. */
void netd_peers_copy(struct netd_peers *dst, const struct netd_peers *src);

/* --- WireGuard's UAPI answers (untrusted text) ------------------------------ */

/* The peers of a "get=1" answer, keys only, sorted (endpoints unknown:
 * the first diff sets every wanted peer again and removes the others). */
void netd_uapi_peers(struct netd_peers *out, const char *get);
/* The counters of one peer in a "get=1" answer, zero when it is absent. */
struct netd_wg_stat {
	uint64_t handshake_sec; /* Unix seconds of the latest handshake */
	uint64_t rx, tx;
};
void netd_uapi_stat(const char *get, const uint8_t key[NETD_KEY_LEN],
    struct netd_wg_stat *out);

#endif
