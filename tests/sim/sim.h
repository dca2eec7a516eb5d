/* sim.h: the deterministic simulator's shared types — virtual clock and event queue, virtual network, simulated nodes running the production cores, interned records and MST pieces (sim_store.c). */
#ifndef MTS_SIM_H
#define MTS_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "agents/gossipd/ae_core.h"
#include "agents/gossipd/delta_core.h"
#include "agents/gossipd/swim_core.h"
#include "agents/schedd/ledger_core.h"
#include "agents/schedd/place_core.h"
#include "agents/statestore/mst_core.h"
#include "hash.h"
#include "hlc.h"
#include "mtstime.h"
#include "record.h"

/* The same batches and limits as gossipd (gossipd.h, sync.c). */
#define SIM_MAX_UPDATES 8
#define SIM_PAGE_BATCH 64
#define SIM_KEY_BATCH 512
#define SIM_KEY_BYTES (256u << 10)
#define SIM_MAX_PAGES_SERVED 256
#define SIM_MAX_KEYS_SERVED 2048
#define SIM_AE_TIMEOUT 5000
#define SIM_NEWS_FANOUT 64
#define SIM_TICK_MS 100
#define SIM_WALL_BASE 1764547200000ull /* wall clock at virtual time 0 */

struct sim;

/* --- interned records ---------------------------------------------------- */

/* One (key, record) shared by every node holding it. */
struct irec {
	struct irec *next; /* hash chain */
	uint32_t refs;     /* atomic; the chain is behind its stripe's lock */
	uint32_t track;    /* 1 + index of the acknowledged write, or 0 */
	uint8_t rh[MTS_HASH_LEN];
	uint64_t fp;           /* mts_seen_fingerprint of it */
	struct mts_record rec; /* value points into enc */
	void *parsed;          /* the reconciler's decoding, shared (set
				  once, atomically); freed with the record */
	uint8_t *key, *enc;
	size_t klen, elen;
};

void sim_intern_init(void);
/* A reference to the interned (key, rec): the caller owns one ref. */
struct irec *sim_intern(const uint8_t *key, size_t klen,
    const struct mts_record *rec);
struct irec *sim_iref(struct irec *);
void sim_iunref(struct irec *);
/* A node's MST, its keys and page encodings shared with every other's. */
struct mts_mst *sim_mst_new(void);

/* What the shared store holds: counts and bytes (headers included). */
struct sim_store_stats {
	size_t recs, rec_bytes;
	size_t keys, key_bytes;
	size_t encs, enc_bytes;
};
void sim_store_stats(struct sim_store_stats *);

/* --- messages ------------------------------------------------------------ */

enum sim_kind {
	K_PING,
	K_ACK,
	K_PINGREQ,
	K_NEWS,
	K_GOSSIP,
	K_PUSH,
	K_ROOT_REQ,
	K_ROOT_REP,
	K_PAGE_REQ,
	K_PAGE_REP,
	K_REC_REQ,
	K_REC_REP,
	K_PREPARE,
	K_PREPARE_REP,
	K_COMMIT,
	K_COMMIT_REP,
	K_STOP,
	K_MAX
};

enum sim_class { C_SWIM, C_PUSH, C_AE, C_SCHED, C_MAX };

struct sim_page {
	uint8_t h[MTS_HASH_LEN];
	uint8_t *enc;
	size_t len;
};

/* What every copy of one push carries: its records (a ref each) and the
 * ids sent along, once for all the copies (refs: the copies). */
struct sim_body {
	int refs; /* atomic: the copies are freed on the receivers' workers */
	size_t nrecs, nsent;
	uint8_t (*sent)[MTS_NODE_ID_LEN]; /* after recs, in the same block */
	struct irec *recs[];
};

/* A message in flight; shared by its duplicates (refs: only the
 * receiving node's worker touches it once it is sent). */
struct sim_msg {
	int refs;
	struct sim_msg *free_next; /* the pool's list, once unreferenced */
	struct sim_body *body;     /* PUSH: recs and sent point into it */
	enum sim_kind kind;
	int from, to;
	uint64_t seq, walk;
	int target;
	struct mts_swim_update *up; /* nup of them (a message is 1.3 KiB
				       lighter without a full array) */
	size_t nup;
	struct irec **recs; /* PUSH, REC_REP: one ref each */
	size_t nrecs;
	uint8_t (*sent)[MTS_NODE_ID_LEN]; /* PUSH: the ids carried along */
	size_t nsent;
	uint8_t (*hashes)[MTS_HASH_LEN]; /* PAGE_REQ */
	size_t nh;
	struct sim_page *pages; /* PAGE_REP */
	size_t npages;
	struct mts_ae_key *keys; /* REC_REQ */
	size_t nkeys;
	uint8_t root[MTS_HASH_LEN];
	int why;          /* PREPARE_REP, COMMIT_REP: enum mts_ledger_why */
	char *task;       /* STOP: the task id */
	uint64_t version; /* PREPARE, COMMIT: the spec version placed */
	size_t bytes;     /* estimated wire size */
};

struct sim_msg *sim_msg_new(enum sim_kind, int from, int to);
void sim_msg_unref(struct sim_msg *);
/* A body for nrecs records (a ref taken on each) and nsent ids. */
struct sim_body *sim_body_new(struct irec **recs, size_t nrecs,
    const uint8_t (*sent)[MTS_NODE_ID_LEN], size_t nsent);
/* m carries body (takes a ref on it). */
void sim_msg_set_body(struct sim_msg *m, struct sim_body *body);
void sim_body_unref(struct sim_body *);
/* Frees the pools of unreferenced messages. */
void sim_msg_pool_free(struct sim *);
enum sim_class sim_kind_class(enum sim_kind);
const char *sim_kind_name(enum sim_kind);

/* --- nodes --------------------------------------------------------------- */

struct sim_node {
	int idx;
	uint64_t rng;       /* its own stream (sim_nrand) */
	uint64_t oseq;      /* events it created: their order key */
	mts_hash_ctx trace; /* the events it processed */
	uint8_t id[MTS_NODE_ID_LEN];
	char hex[MTS_NODE_HEX_LEN + 1];
	int up, ever_started;
	uint64_t life_inc; /* incarnation of the current run */
	/* memory: lost on a crash */
	struct mts_swim *swim;
	struct mts_seen *seen;
	struct mts_hlc hlc;
	struct mts_ae *ae;
	int walk_peer;
	uint64_t walk_id, walk_req, walk_wait; /* walk, last request, awaited */
	mts_time_t walk_deadline, next_ae;
	/* "disk": kept across a restart */
	struct irec **ents; /* sorted by key */
	size_t nents, capents;
	struct mts_mst *mst;
	/* the node's network interface */
	int64_t busy_until_us;
	mts_time_t next_tick;
	int group; /* partition group */
	/* the reserve scenario: schedd's ledger (kept across a restart) */
	struct mts_ledger ledger;
	int digest_dirty;
	mts_time_t digest_next;
	/* the reconciler (memory: lost on a crash) */
	mts_time_t next_recon;
	struct sim_infl *infl; /* prepares and commits in flight */
	size_t ninfl, capinfl;
	uint64_t rseq;
	int draining; /* the truth: it wrote its drain */
	/* what the last pass saw: a pass over the same view with nothing in
	 * flight gives the same actions, none if the last gave none */
	uint64_t vgen, last_vgen; /* view: s/ t/ n/ u/ records, members */
	uint64_t mgen, own_gen;   /* membership (alive, draining) */
	size_t last_acts;
	long *own; /* owners of the view's services at own_gen */
	size_t nown;
};

/* A prepare an owner sent and has not heard the end of. */
struct sim_infl {
	int svc, to;
	uint64_t seq;
	mts_time_t at;
};

/* A service of the reconciliation scenarios, as the deployer wrote it. */
struct sim_rsvc {
	char name[32];
	uint32_t desired;
	uint32_t running; /* truth: committed tasks on up, active nodes */
	mts_time_t at, placed;
	int actor, actor2;  /* nodes that acted as its owner this second */
	int last_actor;     /* while membership was stable */
	uint64_t version;   /* the s/ record's */
	mts_time_t updated; /* every task on the version at last */
};

/* A disturbance after which the count must come back exactly. */
struct sim_mark {
	const char *what;
	mts_time_t at, exact;
};

/* A service of the reserve scenario and its owner's progress. */
struct sim_svc {
	int owner;
	uint32_t desired, committed, inflight;
	uint64_t seq;
	mts_time_t at, done;
};

/* --- the simulation ------------------------------------------------------ */

struct sim_cfg {
	int nodes;
	uint64_t seed;
	int lat_base, lat_mean, lat_max; /* ms */
	double loss, dup, reorder;
	int64_t bw_bytes; /* per node uplink, bytes per second */
	int fanout;       /* gossipd's fanout; 0: mts_delta_fanout's */
	mts_time_t ae_interval;
	mts_time_t dead_probe; /* SWIM's dead_probe_interval; -1: its default */
	mts_time_t gossip_interval; /* SWIM's gossip_interval; -1: default */
	int verbose;
};

struct sim_write {
	struct irec *r; /* a ref */
	int writer;
	mts_time_t at, done;
	int holders;
	int by_push; /* holders that got it by push */
};

struct sim_kill {
	int victim;
	uint64_t inc;
	mts_time_t at, first, all;
	int seen;
	uint8_t *marked; /* per observer */
};

/* Every field a uint64_t: a worker's are summed as one array (stats_add). */
struct sim_stats {
	uint64_t bytes[K_MAX], msgs[K_MAX];
	uint64_t piggy[K_MAX]; /* of bytes: the member updates riding along */
	uint64_t dropped, duplicated, events;
	uint64_t false_suspect, false_dead;
	uint64_t false_dead_quiet; /* of false_dead: after the quiet began */
	uint64_t merges_applied, merges_ignored, by_push, by_ae;
	uint64_t node_ms; /* sum over nodes of time up */
	uint64_t prepares, refused, places, stops;
};

/* What a worker thread did during one millisecond's window, applied at
 * the barrier (sim_net.c): the order it did it in does not matter. */
struct sim_wlog {
	uint32_t track; /* 1 + index of the write */
	int by_push;    /* 0: a holder more; 1: one that got it by push */
};
struct sim_klog {
	int victim, observer; /* observer declared the crashed victim dead */
};
struct sim_alog {
	int svc, node; /* node acted as the owner of svc */
};
enum sim_log_kind { SIM_LOG_WRITE, SIM_LOG_KILL, SIM_LOG_ACT };
struct sim_log {
	enum sim_log_kind kind;
	union {
		struct sim_wlog write;
		struct sim_klog kill;
		struct sim_alog act;
	} u;
};

/* One worker thread's own (worker 0 is the main thread): its counters,
 * the events its nodes created in the window (to any node), its logs
 * and the first failure it saw, and its pool of messages. */
struct sim_worker {
	int idx;
	struct sim *s;
	struct sim_stats st;
	struct sim_ev *out;
	size_t nout, capout;
	struct sim_log *log;
	size_t nlog, caplog;
	int cur_node;  /* the node whose event runs */
	int fail_node; /* -1, or the node of the failure in fail_why */
	char fail_why[512];
	struct sim_msg *pool;
	uint64_t ran; /* events run */
};

struct sim {
	struct sim_cfg cfg;
	uint64_t rng; /* the run's stream: the scenario's decisions */
	mts_time_t now;
	struct sim_node *node;
	int n, nup;
	struct sim_ev *heap; /* events beyond the calendar's horizon */
	size_t nheap, capheap;
	struct sim_bucket *cal; /* one bucket per ms from cal_at on */
	mts_time_t cal_at;
	size_t ncal;
	struct sim_ev *batch; /* the millisecond's events, sorted */
	size_t nbatch, capbatch;
	size_t *runs; /* where each node's events start in batch */
	size_t nruns, capruns;
	int threads;
	struct sim_worker *w;  /* [threads] */
	struct sim_pool *pool; /* the helper threads */
	int window;          /* the workers run: events go to their outboxes */
	mts_hash_ctx trace;  /* the run's own events (partitions) */
	struct sim_stats st; /* the workers' counters, summed at barriers */
	struct sim_write *writes;
	size_t nwrites, capwrites;
	struct sim_kill *kills;
	size_t nkills, capkills;
	mts_time_t last_unhealthy; /* last time a partition was in place */
	mts_time_t quiet_at;       /* the scenario's quiet begins */
	int partitioned;
	const char *failed; /* first violated invariant */
	int sched;          /* nodes run schedd's ledger and publish digests */
	struct sim_svc *svcs;
	size_t nsvcs;
	int recon; /* nodes run the reconciler over recon_core */
	struct sim_rsvc *rsvcs;
	size_t nrsvcs;
	struct sim_mark marks[8];
	size_t nmarks;
	int stable_prev; /* membership converged at the previous check */
	uint64_t two_owner_checks;
	int drains;
	mts_time_t update_at;   /* the rolling update's s/ writes */
	uint32_t update_floor;  /* fewest live tasks a service had during it */
	uint64_t *wcache;       /* [svc * n + node]: rendezvous weights, kept */
	uint8_t *whave;         /* atomic: a fill races with its same value */
	uint32_t (*running)[2]; /* [sec]: replicas running, desired */
	/* convergence over time: roots per second */
	uint8_t (*roots)[MTS_HASH_LEN]; /* [sec * n + node], zero if down */
	size_t nsec, capsec;
};

/* sim_net.c */
/* The run's stream: decisions the scenario takes at the barrier. */
uint64_t sim_rand(struct sim *);
double sim_unif(struct sim *);
int sim_rand_int(struct sim *, int n);
/* A node's stream: what is random on its behalf. */
void sim_nrand_seed(struct sim_node *, uint64_t seed);
uint64_t sim_nrand(struct sim_node *);
double sim_nunif(struct sim_node *);
int sim_nrand_int(struct sim_node *, int n);
/* Into the run's trace, or node n's. */
void sim_trace(struct sim *, int type, int a, int b, uint64_t c);
void sim_ntrace(struct sim *, struct sim_node *, int type, int a, int b,
    uint64_t c);
/* The run's trace: its own and every node's, in node order. */
void sim_trace_final(struct sim *, uint8_t out[MTS_HASH_LEN]);
void sim_send(struct sim *, struct sim_msg *);
/* An event for node `node` at `when` (after now), created by src. */
void sim_at(struct sim *, mts_time_t when, int type, int node, struct sim_msg *,
    struct sim_node *src);
/* Runs every event due before `until`, a millisecond at a time. */
void sim_run_until(struct sim *, mts_time_t until);
/* Starts the worker threads (s->threads, 1 and more) and ends them. */
void sim_workers_start(struct sim *);
void sim_workers_stop(struct sim *);
/* Sums the workers' counters into s->st. */
void sim_stats_fold(struct sim *);
/* The calling thread's worker. */
extern _Thread_local struct sim_worker *sim_tls_w;
#define SIM_ST (&sim_tls_w->st)
/* What a node's event did to the run's shared bookkeeping (a write
 * reached a node, a crashed node declared dead, an owner acted): applied
 * now between windows, else logged by the worker for the barrier. */
void sim_defer(struct sim *, const struct sim_log *);
void sim_partition(struct sim *, int ngroups);
void sim_heal(struct sim *);
void sim_queue_free(struct sim *);

enum sim_ev_type { EV_MSG, EV_TICK };

/* sim_node.c */
void sim_node_init(struct sim *, struct sim_node *, int idx);
void sim_node_start(struct sim *, struct sim_node *, int bootstrap);
void sim_node_crash(struct sim *, struct sim_node *);
void sim_node_free(struct sim_node *);
/* Every node's disk holds every node's member record, as written by that
 * node (a whole cluster restarting); none has started yet. */
void sim_node_preload(struct sim *);
void sim_node_tick(struct sim *, struct sim_node *);
void sim_node_deliver(struct sim *, struct sim_node *, struct sim_msg *);
int sim_node_write(struct sim *, struct sim_node *, const char *key,
    const uint8_t *value, size_t vlen, struct irec **out);
/* Pushes recs to fanout random alive peers outside sent (push_to_peers). */
void sim_push(struct sim *, struct sim_node *, struct irec **, size_t,
    struct mts_delta_sent *);
const struct irec *sim_store_get(const struct sim_node *, const uint8_t *key,
    size_t klen);
size_t sim_node_bytes(const struct sim_node *);

/* Piggybacks membership updates and sends (gossipd's pack_msg). */
void sim_node_send(struct sim *, struct sim_node *, struct sim_msg *);

/* sim_sched.c */
void sim_sched_init(struct sim_node *);
void sim_sched_tick(struct sim *, struct sim_node *);
void sim_sched_on_msg(struct sim *, struct sim_node *, const struct sim_msg *);
void sim_sched_on_reply(struct sim *, struct sim_node *,
    const struct sim_msg *);
void sim_sched_owners(struct sim *);
void sim_sched_check(struct sim *);
void sim_sched_check_quiet(struct sim *);

/* sim_recon.c */
void sim_recon_tick(struct sim *, struct sim_node *);
void sim_recon_on_stop(struct sim *, struct sim_node *, const struct sim_msg *);
void sim_recon_on_commit(struct sim *, struct sim_node *, const char *task,
    int svc, uint64_t version, struct irec **out);
void sim_recon_on_reply(struct sim *, struct sim_node *,
    const struct sim_msg *);
void sim_recon_crash(struct sim_node *);
void sim_recon_deploy(struct sim *, size_t nsvcs, uint32_t replicas);
void sim_recon_drain(struct sim *, int node);
void sim_recon_update(struct sim *);
void sim_recon_mark(struct sim *, const char *what);
void sim_recon_check(struct sim *);
void sim_recon_check_quiet(struct sim *);
void sim_recon_report(const struct sim *);
void sim_apply_alog(struct sim *, const struct sim_log *);
/* Frees the calling thread's scratch view. */
void sim_recon_thread_free(void);
int sim_membership_converged(const struct sim *);
/* A record from a peer through the statestore's verdict; 1 if applied. */
int sim_node_merge(struct sim *, struct sim_node *, struct irec *);

/* sim_run.c */
/* During the window, a worker's logs; at the barrier, applied at once. */
void sim_note_write(struct sim *, const struct irec *, int by_push);
void sim_apply_wlog(struct sim *, const struct sim_log *);
void sim_apply_klog(struct sim *, const struct sim_log *);
/* A worker's first failure of the window (the lowest node's) now. */
void sim_fail_flush(struct sim *, struct sim_worker *);
void sim_on_swim_event(struct sim *, struct sim_node *observer,
    const struct mts_swim_update *);
void sim_on_apply(struct sim *, struct sim_node *, struct irec *);
void sim_fail(struct sim *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
