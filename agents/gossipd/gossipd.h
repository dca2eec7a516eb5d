/* gossipd.h: private to mts-gossipd — the daemon's state shared by its I/O files (loop, network, statestore client, local API, cluster admission, anti-entropy). */
#ifndef MTS_GOSSIPD_H
#define MTS_GOSSIPD_H

#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "acl.h"
#include "agent.h"
#include "event.h"
#include "agents/gossipd/admit_core.h"
#include "agents/gossipd/ae_core.h"
#include "agents/gossipd/conn_core.h"
#include "agents/gossipd/delta_core.h"
#include "agents/gossipd/swim_core.h"
#include "agents/gossipd/token_core.h"
#include "buf.h"
#include "gossip.pb-c.h"
#include "gossipd.pb-c.h"
#include "hash.h"
#include "ipc.h"
#include "loop.h"
#include "mtstime.h"
#include "ratelimit.h"
#include "statestore.pb-c.h"

#define GD_ADDR_MAX MTS_SWIM_ADDR_MAX
#define GD_MAX_UPDATES 8    /* membership updates piggybacked per message */
#define GD_PAGE_BATCH 64    /* page hashes per anti-entropy request */
#define GD_KEY_BATCH 512    /* keys per records request */
#define GD_CHUNK (1u << 20) /* target size of one transfer */
#define GD_MAX_RELAYS 256

struct gossipd;
struct peer;
struct relay_extra;
struct relay_serving;
struct relay_client;

enum link_kind {
	LINK_IN,       /* accepted, protocol not known yet */
	LINK_IK_IN,    /* a member connecting to us */
	LINK_IK_OUT,   /* we connect to a member */
	LINK_JOIN_IN,  /* a node joining through us (XXpsk3) */
	LINK_JOIN_OUT, /* we join through a bootstrap node */
};

/* One TCP connection. */
struct link {
	struct gossipd *g;
	int fd;
	struct mts_watch *w; /* on the loop while the link is open */
	enum link_kind kind;
	int connecting; /* TCP connect in progress */
	struct mts_conn *conn;
	struct peer *peer; /* once authenticated (IK) */
	uint8_t id[MTS_NODE_ID_LEN];
	int has_id;
	char raddr[GD_ADDR_MAX];
	mts_time_t since;    /* accepted or dialled */
	mts_time_t deadline; /* handshake or connect deadline */
	mts_time_t last_rx;
	int want_out; /* EPOLLOUT armed */
	int dead;
	int closing;      /* close once the output is flushed */
	int tell_removed; /* a removed member: send it its tombstone, close */
	struct mts_buf peek; /* LINK_IN: bytes before the protocol is known */
	struct mts_ipc_call *join_call; /* LINK_JOIN_OUT: the API call */
	struct link *next;
};

/* A member we talk to. */
struct peer {
	uint8_t id[MTS_NODE_ID_LEN];
	uint8_t pub[32];
	int has_pub;
	int removed;
	uint8_t *tomb; /* removed: its m/<node> tombstone (packed Record) */
	size_t tomb_len;
	char addr[GD_ADDR_MAX];
	char name[MTS_SWIM_NAME_MAX];
	struct link *link; /* the established link used to send */
	struct link *dial; /* an outgoing link being set up */
	struct mts_buf q;  /* packed Msgs waiting: u32 length | bytes */
	mts_time_t next_dial;
	mts_time_t backoff;
	struct peer *next;
};

struct gd_cfg {
	char listen[GD_ADDR_MAX];
	char advertise[GD_ADDR_MAX];
	struct mts_swim_cfg swim;
	int fanout;
	mts_time_t ae_interval;
	int64_t ae_rate; /* bytes per second received by anti-entropy */
	int64_t max_payload;
	mts_time_t handshake_timeout;
	mts_time_t idle_timeout;
	mts_time_t reconnect_max;
	mts_time_t store_timeout;
	int64_t max_links;         /* TCP connections in all */
	int64_t max_handshakes;    /* accepted, handshake not finished */
	int64_t max_handshakes_ip; /* the same, from one address */
	mts_time_t peer_log_interval;
};

struct held_page;

/* An anti-entropy walk in progress with one peer (sync.c). */
struct ae_walk {
	struct mts_ae *ae;
	uint8_t peer[MTS_NODE_ID_LEN];
	uint64_t req_id; /* reply awaited, 0 none */
	mts_time_t deadline;
	mts_time_t started;
	int active;
	uint64_t gen;   /* tells this walk's local answers from older ones */
	int local_wait; /* statestore answers awaited */
	uint8_t remote_root[32];
	struct held_page *held; /* the peer's pages, held for local answers */
	size_t nheld;
	const struct held_page *feeding; /* the page the core is reading */
	uint8_t (*cand)[32]; /* page hashes to request unless held locally */
	int *cand_have;
	size_t ncand;
};

/* A relay request awaiting its remote reply. */
struct relay_pending {
	uint64_t id; /* our wire id */
	uint64_t request_id;
	struct mts_ipc_call *call;
	mts_time_t deadline;
};

/* A relay reply remembered for idempotent retries. */
struct relay_done {
	uint8_t from[MTS_NODE_ID_LEN];
	uint64_t request_id;
	uint32_t error;
	uint8_t *payload;
	size_t len;
	mts_time_t expires;
};

struct gd_stats {
	uint64_t rx_bytes, tx_bytes;
	uint64_t ae_rounds, ae_done, ae_records, ae_bytes;
	uint64_t push_sent, push_recv;
};

/* Pushes received in this loop round, merged together at its end. */
struct push_in {
	Mts__Gossip__Msg *msg; /* owned */
	uint8_t from[MTS_NODE_ID_LEN];
	struct push_in *next;
};

struct gossipd {
	struct mts_agent agent;
	struct mts_event_log *events; /* node.alive/suspect/dead (NULL: the
					 log only) */
	struct push_in *pushes;
	struct gd_cfg cfg;
	uint8_t priv[32], pub[32];
	uint8_t id[MTS_NODE_ID_LEN];
	char idhex[MTS_NODE_HEX_LEN + 1];
	char name[MTS_SWIM_NAME_MAX];
	int in_cluster;
	int init_pending;        /* an init's records are being stored */
	uint8_t join_secret[32]; /* c/join, followed through the feed */
	int has_join_secret;
	int removed; /* our own m/<node> is a tombstone: out for good */
	uint8_t cluster_id[MTS_CLUSTER_ID_LEN];
	struct mts_loop *loop;
	struct mts_timer tick; /* wakes the loop for SWIM, AE, relays, links */
	int lfd;
	struct mts_watch *lw;     /* the listener's watcher */
	mts_time_t accept_resume; /* out of descriptors: listen again then */
	struct mts_ratelimit peer_log; /* repeated peer errors */
	mts_time_t peer_log_next;      /* next summary of silenced lines */
	struct link *links;
	struct peer *peers;
	struct mts_swim *swim;
	struct mts_swim_out out;
	struct mts_seen *seen;
	struct mts_ipc_client *store; /* blocking: start-up, admin calls */
	struct mts_ipc_async *astore; /* everything on the loop's path */
	nng_socket sub;
	int subfd;
	struct mts_ipc_server *api;
	struct mts_acl_table acl; /* who may call api: api.c's acl_rules */
	struct mts_pub *pub_feed;
	struct ae_walk walk;
	int ae_serving; /* peer anti-entropy requests being answered */
	mts_time_t next_ae;
	uint64_t next_id;
	int64_t ae_budget; /* bytes still allowed in this second */
	mts_time_t ae_budget_at;
	struct relay_pending relays[GD_MAX_RELAYS];
	size_t nrelays;
	struct relay_done done[GD_MAX_RELAYS];
	size_t ndone;
	struct relay_extra *relay_extra; /* [gossipd] relay_allow */
	size_t nrelay_extra;
	int64_t relay_inflight;        /* per peer, [gossipd] relay_inflight */
	struct relay_serving *serving; /* relayed calls being served */
	struct relay_client *relay_clients; /* one per local agent reached */
	size_t nrelay_clients;
	struct gd_stats stats;
	uint64_t rng; /* seeds cores */
};

/* gossipd.c */
int gd_rng(void *ctx, uint8_t *buf, size_t len);
void gd_swim_effects(struct gossipd *, mts_time_t now);

/* net.c: links, peers and messages */
/* Opens the TCP listener and watches it on g->loop. */
int gd_listen(struct gossipd *);
void gd_net_tick(struct gossipd *, mts_time_t now);
void gd_link_close(struct gossipd *, struct link *, const char *why);
/* Logs an error a peer caused (a failed handshake, a refusal, a malformed
 * frame) at level: at most one line per source address and kind per
 * peer_log_interval; gd_net_tick sums up the lines left out. raddr is
 * "ip:port", kind a short fixed text. */
void gd_peer_log(struct gossipd *, int level, const char *raddr,
    const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
struct peer *gd_peer_find(struct gossipd *, const uint8_t id[MTS_NODE_ID_LEN]);
struct peer *gd_peer_get(struct gossipd *, const uint8_t id[MTS_NODE_ID_LEN]);
/* Sends msg (its version and piggybacked updates are filled here). */
int gd_send(struct gossipd *, struct peer *, Mts__Gossip__Msg *msg,
    mts_time_t now);
int gd_send_on_link(struct gossipd *, struct link *, Mts__Gossip__Msg *msg);
int gd_dial_join(struct gossipd *, const struct mts_token *,
    struct mts_ipc_call *call, mts_time_t now);
void gd_update_epoll(struct gossipd *, struct link *);
void gd_drop_peer_links(struct gossipd *, struct peer *, const char *why);
void gd_peer_dead(struct gossipd *, const uint8_t id[MTS_NODE_ID_LEN]);
void gd_member_to_pb(const struct mts_swim_update *, Mts__Gossip__Member *);
int gd_member_from_pb(const Mts__Gossip__Member *, struct mts_swim_update *);

/* msg.c: peer message handlers */
void gd_handle_msg(struct gossipd *, struct link *, const uint8_t *data,
    size_t len, mts_time_t now);

/* store.c: the local statestore */
int gd_store_open(struct gossipd *);
int gd_store_call(struct gossipd *, Mts__Statestore__Request *req,
    Mts__Statestore__Reply **rep);
int gd_store_get(struct gossipd *, const char *key, Mts__Statestore__Reply **);
int gd_store_put(struct gossipd *, const char *key, const ProtobufCMessage *);
/* The outcome of an asynchronous statestore call (on the loop): rep is
 * valid during the call only; rc < 0 was logged (but NOTFOUND). */
typedef void (*gd_store_fn)(struct gossipd *, void *arg, int rc,
    const Mts__Statestore__Reply *rep);
/* Sends req (packed at once: it may live on the caller's stack); fn may be
 * NULL. */
void gd_store_send(struct gossipd *, Mts__Statestore__Request *req,
    gd_store_fn fn, void *arg);
/* Puts key = packed val. */
void gd_store_put_send(struct gossipd *, const char *key,
    const ProtobufCMessage *val, gd_store_fn fn, void *arg);
void gd_store_merge(struct gossipd *, Mts__KeyRecord **recs, size_t n,
    gd_store_fn fn, void *arg);
void gd_feed_drain(struct gossipd *, mts_time_t now);

/* cluster.c: admission, membership records, join/init */
/* Sends a removed member that completed a handshake its tombstone on l
 * (so it learns it was removed) and closes l once that is written. */
void gd_tell_removed(struct gossipd *, struct link *);
int gd_load_cluster(struct gossipd *, mts_time_t now);
int gd_verify_member(void *ctx, const uint8_t pub[32]);
int gd_verify_any(void *ctx, const uint8_t pub[32]);
void gd_member_record_changed(struct gossipd *, const char *key,
    const Mts__Record *rec, mts_time_t now);
void gd_admit(struct gossipd *, struct link *, mts_time_t now);
void gd_join_reply(struct gossipd *, struct link *,
    const Mts__Gossip__JoinRep *, mts_time_t now);
int gd_join_secret(struct gossipd *, uint8_t secret[32]);
int gd_token(struct gossipd *, char *out, size_t outlen, int rotate,
    const char *advertise);
void gd_publish(struct gossipd *, const struct mts_swim_update *,
    const char *state);

/* api.c: gossipd.sock */
int gd_api_open(struct gossipd *);
void gd_relay_tick(struct gossipd *, mts_time_t now);
void gd_relay_reply(struct gossipd *, const Mts__Gossip__RelayRep *);

/* relay.c: serving relayed calls */
/* Reads [gossipd] relay_allow and relay_inflight; 0 or -1 (logged). */
int gd_relay_open(struct gossipd *);
/* Checks a relayed request against the agent table and the per-peer
 * bound, then calls the agent asynchronously; the reply (or the refusal,
 * at once) goes back to `from`. */
void gd_relay_serve(struct gossipd *, const uint8_t from[MTS_NODE_ID_LEN],
    const Mts__Gossip__RelayReq *, mts_time_t now);
/* The oneof case of a packed Request, from its envelope only. */
int gd_relay_request_type(const uint8_t *buf, size_t len, uint32_t *type);

/* sync.c: delta push and anti-entropy */
void gd_push_local(struct gossipd *, Mts__KeyRecord **recs, size_t n,
    mts_time_t now);
/* Takes ownership of a received Push message until gd_push_flush. */
void gd_on_push(struct gossipd *, struct peer *from, Mts__Gossip__Msg *);
/* Merges every push received since the last call in one request and
 * forwards the records seen for the first time. */
void gd_push_flush(struct gossipd *, mts_time_t now);
void gd_ae_tick(struct gossipd *, mts_time_t now);
void gd_ae_reply(struct gossipd *, struct peer *, const Mts__Gossip__Msg *,
    mts_time_t now);
void gd_ae_serve(struct gossipd *, struct link *, const Mts__Gossip__Msg *);
void gd_ae_start_with(struct gossipd *, const uint8_t id[MTS_NODE_ID_LEN],
    mts_time_t now);

#endif
