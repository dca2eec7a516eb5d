/* netd.h: private to mts-netd — its configuration and state, shared by its main (netd.c), the netlink helpers (netd_nl.c), WireGuard (netd_wg.c), the cluster view (netd_sync.c), attachments (netd_attach.c) and the API (netd_api.c). */
#ifndef NETD_H
#define NETD_H

#include <stdint.h>

#include "acl.h"
#include "agent.h"
#include "buf.h"
#include "event.h"
#include "ipc.h"
#include "loop.h"
#include "disc_core.h"
#include "netd_core.h"
#include "uapi_core.h"

struct nft_ctx;

#define NETD_SECTION "netd"
#define NETD_WG_IF "mts0"
#define NETD_BRIDGE "mtsbr0"
#define NETD_VETH_PREFIX "mtsv" /* + host number: mtsv2 .. mtsv254 */
#define NETD_TASK_IF "eth0"
#define NETD_POLL_MS 250        /* gossipd's members */
#define NETD_SCAN_MS 1000       /* m/ and n/ records */
#define NETD_CLAIM_PREFIX "n/"  /* + node id: NodeInfo, its overlay_subnet */
#define NETD_MEMBER_PREFIX "m/" /* + node id: MemberRecord */
#define NETD_TASK_PREFIX "t/"   /* + node id / task: TaskStatus */
#define NETD_STATUS_WAIT_MAX 32 /* status calls held for fresh counters */

struct netd_conf {
	struct netd_cidr cidr;
	char cidr_text[32];
	unsigned listen_port;
	unsigned mtu; /* 0: the underlay's lowest MTU - NETD_WG_OVERHEAD */
	const char *wireguard_go;
	int32_t subnet_force; /* test hook: the /24 number claimed first */
	unsigned dns_port;    /* on the bridge's address; 0: no DNS server */
	const char *dns_upstream; /* "": /etc/resolv.conf's nameservers */
	struct mts_acl_table acl;
};

/* What netd knows of every node: gossipd's members (alive, address,
 * name), the m/ records (keys) and the n/ records (claims), each record
 * kept only when the last full scan saw it (gen). */
struct netd_ventry {
	struct netd_node node;
	char name[64];
	unsigned key_gen, claim_gen;
};

/* A task of some node as its t/<node>/<task> record says (reconciled
 * writes the address and networks netd's Attach gave it), kept only when
 * the last full scan saw it (gen). */
struct netd_task {
	char node[MTS_NODE_HEX_LEN + 1];
	char id[NETD_TASK_MAX];
	char service[128];
	char state[16];  /* the shim's: running, exited, ... */
	char health[16]; /* "", starting, healthy, unhealthy */
	uint32_t addr;   /* host order; 0: none */
	char nets[NETD_NETS_TEXT];
	int local; /* on this node */
	unsigned gen;
};

struct netd_tasks {
	struct netd_task *t;
	size_t n, cap;
};

struct netd_view {
	struct netd_ventry *e;
	size_t len, cap;
	unsigned gen; /* of the scan under way */
};

struct netd {
	struct mts_agent *agent;
	struct netd_conf cfg;
	uint8_t self_id[MTS_NODE_ID_LEN];
	char self[MTS_NODE_HEX_LEN + 1];
	uint8_t priv[NETD_KEY_LEN], pub[NETD_KEY_LEN];
	struct mts_loop *loop;
	struct mts_ipc_server *srv;
	struct mts_ipc_async *store, *gossip;
	struct netd_view view;
	int scanned;       /* the records were read once */
	int polled;        /* gossipd's members were read once */
	int32_t subnet;    /* the /24 number claimed, -1: none */
	int32_t applied;   /* the /24 the bridge and tasks carry, -1: none */
	int claim_busy;    /* a claim write in flight */
	int32_t claim_put; /* the /24 the last written claim says */
	struct netd_peers have, want;
	struct netd_attachments att;
	struct netd_tasks tasks; /* every node's, from t/ */
	/* table inet mts (netd_nft.c) */
	struct nft_ctx *nft;
	struct mts_timer nft_timer;
	int nft_dirty;
	char *nft_applied;    /* the text last applied */
	uint64_t nft_applies; /* whole rebuilds */
	uint64_t nft_deltas;  /* element changes */
	mts_time_t nft_full_at;
	struct mnl_socket *nl;
	int hostns; /* this netd's own network namespace */
	unsigned mtu;
	char nsdir[256];  /* <rundir>/netd/ns: the tasks' namespaces */
	char wgdir[256];  /* mounted on /run for wireguard-go */
	char wgsock[300]; /* its UAPI socket */
	char attfile[300];
	struct mts_timer poll_timer, scan_timer;
	struct mts_timer wg_timer; /* a new wireguard-go's socket */
	int wg_spawned, wg_ready;  /* started by this netd; configured */
	mts_time_t wg_since;
	/* the UAPI request in flight (netd_uapi.c) */
	struct netd_uapiq uq;
	int ufd;
	struct mts_watch *uw;
	struct mts_timer utimer; /* its deadline */
	char *uout;              /* what it sends */
	size_t uoff, ulen;
	struct mts_buf uin; /* what came back */
	mts_time_t usent;
	/* the last counters read (a get answer without the private key,
	 * malloc'd), for status; the status calls waiting for fresher ones */
	char *wg_stats;
	mts_time_t wg_stats_at;
	struct mts_ipc_call *status_wait[NETD_STATUS_WAIT_MAX];
	size_t status_waiting;
	struct mts_timer status_timer;
	int poll_busy, scan_busy;
	char scan_after[512];
	const char *scan_prefix; /* NETD_MEMBER_PREFIX, then the claims' */
	int failed;              /* stop with MTS_EXIT_FAILURE */
	int rescan, repoll;      /* a feed said so while a read was under way */
	/* the feeds that make the view follow at once: statestore.pub (m/,
	 * n/) and gossipd.pub (member events) */
	nng_socket store_sub, gossip_sub;
	struct mts_watch *store_w, *gossip_w;
	int store_open, gossip_open;
	struct netd_disc *disc;       /* netd_disc.c */
	struct netd_dns *dns;         /* netd_dns.c */
	struct mts_event_log *events; /* <rundir>/netd/events.jsonl */
};

/* netd_nl.c: rtnetlink through libmnl; every call is one request and its
 * acknowledgement on nl. 0 or -errno. */
struct mnl_socket *netd_nl_open(void);
int netd_nl_ifindex(struct mnl_socket *, const char *name, unsigned *mtu);
int netd_nl_bridge(struct mnl_socket *, const char *name, unsigned mtu);
int netd_nl_veth(struct mnl_socket *, const char *host, const char *peer,
    int netns_fd, unsigned mtu);
int netd_nl_set(struct mnl_socket *, const char *name, int up,
    const char *master, unsigned mtu);
/* Sets name's MAC address (a bridge given one keeps it, instead of
 * taking its lowest port's whenever a port comes or goes). */
int netd_nl_set_mac(struct mnl_socket *, const char *name,
    const uint8_t mac[6]);
/* Marks bridge port name isolated: it exchanges frames with the bridge
 * itself only, never with another isolated port. */
int netd_nl_port_isolate(struct mnl_socket *, const char *name);
int netd_nl_addr(struct mnl_socket *, const char *name, uint32_t addr,
    unsigned plen, int add);
/* Removes every IPv4 address of name inside cidr but keep/plen. */
int netd_nl_addr_prune(struct mnl_socket *, const char *name,
    const struct netd_cidr *, uint32_t keep);
int netd_nl_route(struct mnl_socket *, uint32_t dst, unsigned plen, uint32_t gw,
    const char *dev);
int netd_nl_del(struct mnl_socket *, const char *name);
/* The lowest MTU of the up interfaces that are not loopback and not
 * netd's own; 1500 when there is none. */
unsigned netd_nl_underlay_mtu(struct mnl_socket *);

/* netd_uapi.c: wireguard-go's UAPI socket, asynchronous on the loop: one
 * request in flight, the others queued by kind (uapi_core.c), each with a
 * deadline. netd_uapi_push queues a kind and sends it when it is its
 * turn. */
void netd_uapi_init(struct netd *);
void netd_uapi_push(struct netd *, int kind);
void netd_uapi_close(struct netd *);
void netd_uapi_on_timeout(void *arg, mts_time_t now);
/* A non-blocking connect to the socket at path (*fd): 0, -EINPROGRESS, or
 * -errno with *fd -1. */
int netd_uapi_connect(const char *path, int *fd);

/* netd_wg.c: mts0 on wireguard-go, configured through its UAPI.
 * netd_wg_start, before the sandbox, keeps a wireguard-go that serves the
 * socket already or starts one; netd_wg_wait, on the loop, asks it (again
 * every 20 ms while nobody listens, up to 5 s) and configures mts0: the
 * key and port when they differ, then up, MTU, route. Only then
 * n->wg_ready; until then there are no peers. Each kind's request text
 * (malloc'd) and answer handler, for netd_uapi.c: */
int netd_wg_start(struct netd *);
void netd_wg_wait(struct netd *);
void netd_wg_on_wait(void *arg, mts_time_t now);
char *netd_wg_start_req(struct netd *);
void netd_wg_start_done(struct netd *, int rc, char *rep);
char *netd_wg_setup_req(struct netd *);
void netd_wg_setup_done(struct netd *, int rc, char *rep);
char *netd_wg_stats_req(struct netd *);
void netd_wg_stats_done(struct netd *, int rc, char *rep);

/* netd_sync.c: the cluster view (gossipd's members, m/ and n/ records),
 * the claim, the peers. */
void netd_on_poll(void *arg, mts_time_t now);
void netd_on_scan(void *arg, mts_time_t now);
/* Subscribes to both feeds; 0 or -1 (logged). */
int netd_feeds_open(struct netd *);
void netd_feeds_close(struct netd *);
/* Asks for the peers to be synced with WireGuard: the wanted set and its
 * difference are computed when the request is sent (netd_peers_req, NULL
 * when nothing changed), and kept once it answers (netd_peers_done). */
void netd_peers_update(struct netd *);
char *netd_peers_req(struct netd *);
void netd_peers_done(struct netd *, int rc, char *rep);
void netd_view_free(struct netd_view *);
const char *netd_view_name(const struct netd *, const uint8_t node[16]);

/* netd_attach.c: the bridge, the tasks' namespaces and veths. */
/* Writes v to a net sysctl (CAP_NET_ADMIN may, in its namespace); 0 or
 * -1 (errno set). */
int netd_sysctl_write(const char *path, const char *v);
int netd_bridge_apply(struct netd *);
/* nets: comma-joined (netd_nets_join), set on the attachment. */
int netd_attach(struct netd *, const char *task, const char *nets,
    const struct netd_attach **out);
int netd_detach(struct netd *, const char *task, int *found);
/* Reads the persisted attachments back and repairs what the kernel lost. */
int netd_attach_restore(struct netd *);
void netd_attach_path(const struct netd *, const char *task, char *out,
    size_t outlen);
void netd_veth_name(unsigned host, char *out, size_t outlen);

/* netd_nft.c: table inet mts, built from its parts and changed in one
 * transaction: by its set elements when only they differ from the table
 * last applied, else replaced whole. netd_nft_changed asks for a rebuild
 * at the next turn of the loop (several changes, one transaction);
 * netd_nft_apply does it now (0, or -1 logged: the old table stays). */
int netd_nft_open(struct netd *);
void netd_nft_close(struct netd *);
int netd_nft_apply(struct netd *);
void netd_nft_changed(struct netd *);
void netd_nft_on_timer(void *arg, mts_time_t now);

/* netd_disc.c: the service directory (s/, t/ and na/ records, gossipd's
 * liveness) and na/<self>, this node's task addresses. */
int netd_disc_open(struct netd *);
void netd_disc_close(struct netd *);
/* The directory as of the last scan; NULL before netd_disc_open. */
const struct disc *netd_disc_get(const struct netd *);
/* The VIP part of table inet mts (vip_core.c; malloc'd). */
char *netd_disc_nft(struct netd *);
/* The services of the directory for Status: an array of n (malloc'd,
 * one block: free it whole), NULL when there is none. */
struct Mts__Netd__ServiceEndpoint **netd_disc_status(const struct netd *,
    size_t *n);

/* netd_dns.c: the DNS server on the bridge's address. */
int netd_dns_open(struct netd *);
/* Follows the bridge's address (called every 250 ms). */
void netd_dns_tick(struct netd *);
void netd_dns_close(struct netd *);

/* netd_dns_tcp.c: DNS over TCP on the same address (NULL: logged). */
struct sockaddr_in;
struct netd_dns_tcp;
struct netd_dns_tcp *netd_dns_tcp_open(struct netd *,
    const struct sockaddr_in *);
void netd_dns_tcp_tick(struct netd_dns_tcp *, mts_time_t now);
void netd_dns_tcp_close(struct netd_dns_tcp *);

/* netd_api.c. netd_status_flush answers the status calls held for fresh
 * counters (with the counters there are). */
extern const struct mts_ipc_service netd_service;
void netd_status_flush(struct netd *);
void netd_status_on_timer(void *arg, mts_time_t now);

#endif
