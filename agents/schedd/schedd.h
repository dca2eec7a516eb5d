/* schedd.h: mts-schedd's state — the node's ledger, its config, the statestore client that writes d/<self> and reads t/<self>/, and the timers; private to agents/schedd. */
#ifndef MTS_SCHEDD_H
#define MTS_SCHEDD_H

#include "acl.h"
#include "agent.h"
#include "hash.h"
#include "buf.h"
#include "ipc.h"
#include "ledger_core.h"
#include "loop.h"
#include "nodeinfo.h"
#include "schedd.pb-c.h"
#include "statestore.pb-c.h"

#define SCHEDD_SECTION "schedd"
#define SCHEDD_DIGEST_MIN_MS 500 /* d/<self> is written at most this often */
#define SCHEDD_SCAN_MS 2000      /* t/<self>/ is read again this often */
/* a member that became alive gets d/<self> written again this long after
 * (further joins meanwhile share the write) */
#define SCHEDD_REJOIN_MS 200

struct schedd_conf {
	struct mts_res capacity; /* after the reserve */
	struct mts_res reserve;
	int64_t lease_ttl_ms;
	struct mts_acl_table acl;
};

struct schedd {
	struct mts_agent *agent;
	struct schedd_conf cfg;
	char self[MTS_NODE_HEX_LEN + 1];
	uint8_t self_id[MTS_NODE_ID_LEN];
	struct mts_ledger ledger;
	struct mts_loop *loop;
	struct mts_ipc_server *srv;
	struct mts_ipc_async *store;
	struct mts_timer expire_timer, digest_timer, scan_timer;
	/* d/<self>: what was last written, whether a write is in flight */
	struct mts_digest written;
	int have_written, digest_busy;
	mts_time_t digest_last;
	int scan_busy;
	char scan_after[512];
	/* n/<self>: what this node says of itself (schedd_node.c) */
	char hostname[256], os[65], arch[65];
	enum mts_availability avail;
	uint64_t avail_at_ms;
	int written_avail; /* the availability d/<self> last said */
	struct mts_timer nodeinfo_timer;
	int nodeinfo_busy, nodeinfo_dirty;
	/* gossipd.sock: membership, for Place; gossipd.pub: members that
	 * became alive, after which d/<self> is written again (what was
	 * written before they were members reaches them by anti-entropy
	 * only, seconds later) */
	struct mts_ipc_async *gossip;
	nng_socket msub;
	int msub_open;
	struct mts_watch *msub_w;
	struct mts_timer rejoin_timer;
	/* $MTS_STATEDIR/ledger and ledger.journal (schedd_save.c): the
	 * paths (NULL: not kept), the journal open for appends (-1: none),
	 * the snapshot's generation its header names, the sizes that decide
	 * a compaction, the records of this turn not written yet and the
	 * replies that wait for them to be synced */
	char *save_path, *journal_path;
	int jfd;
	uint64_t gen;
	size_t snap_len, jbytes, jrecords;
	int jbroken; /* a write failed: the next flush compacts */
	struct mts_buf jbuf;
	struct schedd_held *held;
	size_t nheld, capheld;
};

/* A reply that waits for the journal to be synced. */
enum schedd_held_kind {
	HELD_GRANTED,
	HELD_COMMIT,
	HELD_ABORT,
};

struct schedd_held {
	struct mts_ipc_call *call;
	enum schedd_held_kind kind;
	char lease[MTS_LEASE_ID_MAX];
	uint64_t expires_in_ms; /* HELD_GRANTED */
};

extern const struct mts_ipc_service schedd_service;

/* schedd_conf.c: the capacity (from /proc unless [schedd] cpus/memory),
 * the reserve and lease_ttl (the access table is loaded by schedd.c).
 * 0 or -1 (logged). */
int schedd_conf_load(struct schedd_conf *, const struct mts_cfg *);
/* Parses "2", "0.5", "1.25" CPUs into millicores. 0 or -1. */
int schedd_parse_cpus(const char *s, uint32_t *millis);

/* schedd.c: the ledger changed; d/<self> is written when due and the
 * expiry timer follows the ledger's next deadline. */
void schedd_changed(struct schedd *);
void schedd_digest_fill(const struct schedd *, Mts__Schedd__Digest *);
/* Whether a task in that shim state holds its resources (all but exited
 * and failed; schedd_store.c). */
int schedd_state_holds(const char *state);
/* Applies one t/<self>/<task> record to the ledger (schedd_store.c). */
void schedd_task_record(struct schedd *, const char *key, size_t klen,
    const Mts__Record *rec);

/* schedd_node.c: the platform (uname) and node name, read before the
 * sandbox; the availability kept in n/<self>, read back at start
 * (blocking, before the socket opens: 0 or -1); n/<self> rewritten when
 * a field of schedd's changed (availability, capacity, version). */
void schedd_node_platform(struct schedd *);
int schedd_node_restore(struct schedd *, struct mts_ipc_client *);
void schedd_node_changed(struct schedd *);
void schedd_on_nodeinfo(void *, mts_time_t);
/* Sets the availability (the ledger refuses new prepares unless
 * active) and answers call once n/<self> says so. */
void schedd_set_availability(struct schedd *, enum mts_availability,
    struct mts_ipc_call *);

/* schedd_save.c: the ledger read back at start from its snapshot and its
 * journal (before the t/ scan; 0 or -1 when they cannot be read), then a
 * new snapshot written; the ledger's changes of a loop turn appended to
 * the journal and synced once, after which the held replies are sent
 * (schedd_save_turn, the loop's turn hook); a reply held until then
 * (sent at once when the ledger is not kept). */
int schedd_save_load(struct schedd *);
void schedd_save_turn(void *, mts_time_t);
void schedd_save_hold(struct schedd *, struct mts_ipc_call *,
    enum schedd_held_kind, const char *lease, uint64_t expires_in_ms);
void schedd_save_free(struct schedd *);
/* schedd_api.c: sends a held reply, or an IO error when its change could
 * not be synced (rc < 0). */
void schedd_reply_held(const struct schedd_held *, int rc);

/* The Place dry-run (schedd_place.c): answers call once the statestore
 * gave the service record, the d/ digests and the nl/ labels. */
void schedd_place(struct schedd *, const Mts__Schedd__PlaceReq *,
    struct mts_ipc_call *);
/* The first read of t/<self>/, before the socket opens. 0 or -1. */
int schedd_scan_blocking(struct schedd *, const char *path, int timeout_ms);
/* Timer callbacks: the periodic rescan, the digest write. */
void schedd_on_scan(void *, mts_time_t);
void schedd_on_digest(void *, mts_time_t);

#endif
