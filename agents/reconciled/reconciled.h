/* reconciled.h: mts-reconciled's state — its config, the clients of the local agents, the view it last read (members, services, every node's tasks), the tasks of this node it drives, the owner's placements in flight; private to agents/reconciled. */
#ifndef MTS_RECONCILED_H
#define MTS_RECONCILED_H

#include <nng/nng.h>

#include "acl.h"
#include "agent.h"
#include "depends_core.h"
#include "event.h"
#include "failseen_core.h"
#include "hash.h"
#include "hold_core.h"
#include "ipc.h"
#include "loop.h"
#include "nodeinfo.h"
#include "recon_core.h"
#include "netd.pb-c.h"
#include "reconciled.pb-c.h"
#include "schedd.pb-c.h"
#include "service.pb-c.h"
#include "shim.pb-c.h"
#include "statestore.pb-c.h"
#include "svcrec.h"
#include "taskid.h"
#include "update_core.h"

#define RC_SECTION "reconciled"
#define RC_ID_MAX MTS_TASK_ID_LEN /* a task id, as the shim takes it */
#define RC_NAME_MAX 128           /* a service name */
#define RC_KICK_MIN_MS 100 /* a change triggers a refresh at most this often */

struct rc_conf {
	int64_t tick_ms;        /* a full refresh at least this often */
	int64_t lease_ttl_ms;   /* the ttl of an owner's Prepare */
	int64_t assign_wait_ms; /* an assigned task counts until its record
				   arrives, at most this long */
	int64_t backoff_ms, backoff_max_ms; /* a refusing node */
	int64_t settle_ms;       /* the view settles this long after a member
			      came back (recon_view.c's note_returns) */
	int64_t return_hold_ms;  /* the longest a task held since this node
				   came back waits for a synced view */
	uint32_t history;        /* ended tasks kept per service on a node */
	int64_t failed_avoid_ms; /* a node where a task of a service failed
				    takes no replacement of it this long */
	int netd;                /* tasks are attached by the node's netd */
	struct mts_acl_table acl;
};

/* A service as its s/ record says. */
struct rc_svc {
	char *name;
	Mts__Service__ServiceRecord *rec; /* owned */
	struct mts_rc_service core;       /* borrows name and cons */
	struct mts_constraint *cons;
	int bad; /* a constraint does not parse: nothing is placed */
};

/* A task of some node as its t/ record says (or this node's table). */
struct rc_trec {
	char id[RC_ID_MAX + 1];
	char node[MTS_NODE_HEX_LEN + 1];
	char service[RC_NAME_MAX];
	enum mts_rc_task_state state;
	int desired_running;
	uint64_t created;
	uint32_t slot;
	/* for a rolling update (update_core) */
	enum mts_up_health health;
	int has_digest, inflight; /* inflight: placed from the record now */
	uint8_t digest[MTS_SPEC_DIGEST_LEN];
	uint64_t started_ms;
	char error[160];  /* why it failed, as its node says */
	uint64_t version; /* the record version it was placed from; 0: ? */
};

/* A member as gossipd and the nl/ and d/ records say. */
struct rc_member {
	uint8_t id[MTS_NODE_ID_LEN];
	char hex[MTS_NODE_HEX_LEN + 1];
	char *name;
	int alive, draining, paused;
	struct mts_label *labels;
	size_t nlabels;
};

/* What one refresh read. */
struct rc_view {
	struct rc_member *members;
	size_t nmembers;
	struct rc_svc *svcs;
	size_t nsvcs;
	struct rc_trec *tasks;
	size_t ntasks, captasks;
	/* nl/ labels and n/ availabilities, attached to members at the end */
	struct rc_label {
		char node[MTS_NODE_HEX_LEN + 1];
		char *key, *value;
	} * labels;
	size_t nlabels;
	struct rc_avail {
		char node[MTS_NODE_HEX_LEN + 1];
		enum mts_availability a;
	} * avail; /* nodes not active */
	size_t navail;
	int members_ok; /* gossipd answered */
	/* u/ records: rolling update statuses, as the replica holds them */
	struct rc_upd {
		char name[RC_NAME_MAX];
		uint8_t *raw;
		size_t len;
	} * upds;
	size_t nupds;
};

/* A task of this node: the intent (the t/<self>/ record) and what the
 * shim last said. */
struct rc_local {
	char id[RC_ID_MAX + 1];
	char service[RC_NAME_MAX];
	char owner[MTS_NODE_HEX_LEN + 1];
	uint64_t version, assigned_at;
	uint32_t slot;
	uint32_t rcpu;
	uint64_t rmem;
	int want_run;
	int busy;         /* a shim call on it is in flight */
	int started;      /* the shim took it once */
	int listed;       /* in the shim's last list */
	uint64_t run_seq; /* the shim list count when its run returned */
	int dead;         /* record deleted, to be freed */
	char state[16];   /* without a shim status: pending, failed */
	char error[256];
	char stop_why[96];         /* why it was asked to stop, for its event */
	int stop_told;             /* its task.stopped event was written */
	Mts__Shim__TaskStatus *st; /* the shim's last status, owned */
	uint8_t *written;          /* the record last written */
	size_t wlen;
	int writing;
	/* the attachment netd made (cfg.netd): the namespace the shim runs
	 * the task in, its address and networks (written into the record) */
	int attached;
	char netns[512];
	char address[16];
	char dns[16]; /* the node's DNS server (netd's gateway), "" if none */
	char **nets;
	size_t nnets;
	struct rc_local *next;
};

/* A task the owner assigned and has not seen in t/ yet. */
struct rc_inflight {
	char id[RC_ID_MAX + 1];
	char node[MTS_NODE_HEX_LEN + 1];
	char service[RC_NAME_MAX];
	uint32_t slot;
	mts_time_t until;
	struct rc_inflight *next;
};

/* The owner's state for one service it owns (or owned). */
struct rc_own {
	char service[RC_NAME_MAX];
	int busy; /* a placement in flight */
	uint32_t desired, live, pending;
	uint32_t waiting; /* held back by depends_on (message says why) */
	char message[256];
	uint64_t version;
	/* p/<service> as last written */
	uint32_t w_desired, w_live, w_pending, w_waiting;
	char w_message[256];
	/* the last replacement of a failed or lost task, and when */
	char replaced[384], w_replaced[384];
	uint64_t replaced_at;
	int written, writing;
	mts_time_t seen; /* last refresh it was owned */
	/* the rolling update: the status this owner last wrote to u/ */
	struct mts_up_status *upd;
	uint8_t *upd_raw;
	size_t upd_len;
	int upd_writing;
	struct rc_own *next;
};

/* A member that came back: returning in the core's view until `until`. */
struct rc_return {
	char node[MTS_NODE_HEX_LEN + 1];
	mts_time_t until;
	struct rc_return *next;
};

/* A node that refused a Prepare: left out of placements until `until`. */
struct rc_backoff {
	char node[MTS_NODE_HEX_LEN + 1];
	int64_t delay;
	mts_time_t until;
	struct rc_backoff *next;
};

/* A stop asked of another node. Until `until` (or until the node
 * refuses) the task counts as stopping, not live, as its record will say
 * once the node took the stop; then, if the record still says running,
 * the rule may choose it again and the stop is resent. */
struct rc_stopsent {
	char id[RC_ID_MAX + 1];
	mts_time_t until;
	int failed; /* the node did not take it: counts as live again */
	struct rc_stopsent *next;
};

/* The owner this node last computed for a replicated service. */
struct rc_ownerseen {
	char service[RC_NAME_MAX];
	char owner[MTS_NODE_HEX_LEN + 1]; /* "": none */
	struct rc_ownerseen *next;
};

struct recond {
	struct mts_agent *agent;
	struct rc_conf cfg;
	char self[MTS_NODE_HEX_LEN + 1];
	uint8_t self_id[MTS_NODE_ID_LEN];
	struct mts_loop *loop;
	struct mts_ipc_server *srv;
	struct mts_ipc_async *store, *schedd, *shim, *gossipd;
	struct mts_ipc_async *netd; /* cfg.netd only */
	nng_socket ssub, gsub;
	int ssub_open, gsub_open;
	struct mts_watch *ssub_w, *gsub_w;
	struct mts_timer tick_timer, kick_timer;
	mts_time_t last_refresh;
	mts_time_t settle_until; /* a member came back: see note_returns */
	struct rc_return *returns;
	int refreshing, again, stage;
	int adopted;                 /* the first t/<self>/ scan was taken */
	int shim_listed;             /* the shim answered a list */
	uint64_t shim_seq, list_seq; /* lists asked; the one answered */
	char shim_path[512];
	uint64_t refreshes;
	struct rc_view view, next; /* the last complete view, the one read */
	char after[512];           /* scan position */
	struct rc_local *local;
	struct rc_inflight *inflight;
	struct rc_own *own;
	struct rc_backoff *backoff;
	struct rc_stopsent *stops;
	struct mts_failseen failseen; /* failed_avoid's failures */
	struct rc_ownerseen *owners;
	struct mts_event_log *events; /* NULL: events go to the log only */
	/* tasks the shim holds since the node came back (recon_hold.c) */
	mts_time_t started;   /* when this reconciled started */
	uint64_t hold_synced; /* 0, or the refresh from which the view
				 follows a completed anti-entropy round */
	int hold_asking;      /* gossipd's stats asked */
};

extern const struct mts_ipc_service reconciled_service;

/* reconciled_conf.c */
int rc_conf_load(struct rc_conf *, const struct mts_cfg *);

/* recon_view.c: one refresh — gossipd's members, then s/, t/, nl/ and d/
 * from the local statestore, then the shim's tasks — ending in
 * rc_reconcile. rc_kick asks for one soon (debounced). */
void rc_refresh(struct recond *);
void rc_kick(struct recond *);
void rc_view_clear(struct rc_view *);
/* Whether node came back within the settling window (note_returns). */
int rc_returning(const struct recond *, const char *node);
const struct rc_svc *rc_find_svc(const struct rc_view *, const char *name);
/* The u/ value of service in v (NULL: none). */
const struct rc_upd *rc_find_upd(const struct rc_view *, const char *name);
/* Parses a t/ record value into a task row; 0 or -1. */
void rc_trec_update_fields(struct rc_trec *, const Mts__Shim__TaskStatus *);
int rc_trec_from(struct rc_trec *, const char *node, const char *id,
    const Mts__Shim__TaskStatus *);
enum mts_rc_task_state rc_state_of(const char *shim_state, int32_t exit_code,
    int job);

/* recon_depends.c: whether each service of v (by index) may place tasks
 * now under depends_on, from every task row (rows: the view's and this
 * node's, in flight included); the caller frees the array. */
struct mts_dep_verdict *rc_depends(const struct rc_view *v,
    const struct rc_trec *rows, size_t nrows);

/* recon_owner.c: the decisions of a view turned into placements, stops
 * and p/ records. */
void rc_reconcile(struct recond *);
void rc_inflight_seen(struct recond *);
void rc_owner_free(struct recond *);

/* recon_local.c: this node's tasks — assignments, stops, the shim and
 * the t/<self>/ records. */
typedef void (*rc_done_fn)(void *arg, int rc, const char *err);
void rc_local_assign(struct recond *, const Mts__Reconciled__AssignReq *,
    rc_done_fn, void *arg);
int rc_local_stop(struct recond *, const char *task, const char *why);
void rc_local_adopt(struct recond *, const char *id,
    const Mts__Shim__TaskStatus *);
void rc_local_shim_list(struct recond *, const Mts__Shim__TaskListRep *);
void rc_local_converge(struct recond *);

/* recon_hold.c: the verdict on a task the shim holds (its container
 * ended while the node was down); why (whylen bytes) says why to stop. */
enum mts_rc_hold rc_hold_verdict(struct recond *, const struct rc_local *,
    char *why, size_t whylen);
void rc_hold_poll(struct recond *);
struct rc_local *rc_local_find(struct recond *, const char *id);
void rc_local_free_all(struct recond *);
const char *rc_local_state(const struct rc_local *);

/* recon_call.c: a call to an agent of a node — the local socket for this
 * node, gossipd's relay for another. fn gets the unpacked reply (freed
 * after it returns) or an error, exactly once. */
typedef void (*rc_call_fn)(void *arg, int rc, const ProtobufCMessage *reply,
    const char *err);
void rc_call(struct recond *, const char *node_hex, const char *agent,
    ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
    int timeout_ms, rc_call_fn fn, void *arg);
/* Statestore put (value NULL: delete) without waiting; fn may be NULL. */
void rc_store_write(struct recond *, const char *key, const uint8_t *value,
    size_t len, rc_call_fn fn, void *arg);
/* reconciled.c: appends an event to this node's event file
 * ($MTS_RUNDIR/reconciled/events.jsonl) and to the log. */
void rc_event(struct recond *, const char *type, const char *service,
    const char *task, const char *node, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* 2*n random hex digits into out (n bytes of randomness). */
void rc_random_hex(char *out, size_t n);

/* recon_spec.c: the shim's TaskSpec for a task of a service (pure). */
struct rc_spec {
	Mts__Shim__TaskSpec spec;
	Mts__Shim__RestartPolicy restart;
	Mts__Shim__HealthCheck health;
	Mts__Shim__Mount *mounts, **mountp;
	char **env;
	char *hostname;
	uint8_t digest[MTS_SPEC_DIGEST_LEN];
};
void rc_spec_build(const Mts__Service__ServiceSpec *, uint64_t version,
    const char *task, struct rc_spec *);
void rc_spec_free(struct rc_spec *);
/* What a task of the service reserves: reservations, else limits. */
void rc_spec_reservation(const Mts__Service__ServiceSpec *, uint32_t *cpu,
    uint64_t *mem);
enum mts_rc_mode rc_spec_mode(const char *mode);

#endif
