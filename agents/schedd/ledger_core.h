/* ledger_core.h: a node's slot ledger — its capacity, the tasks committed on it and the live leases, with lease prepare/commit/abort/expiry as a state × event table; pure (time comes in as an argument). */
#ifndef MTS_LEDGER_CORE_H
#define MTS_LEDGER_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "mtstime.h"

#define MTS_LEASE_ID_MAX 64
#define MTS_TASK_ID_MAX 128
#define MTS_SERVICE_MAX 128

/* What a task reserves, and what a node has. */
struct mts_res {
	uint32_t cpu_millis;
	uint64_t memory;
};

enum mts_lease_state {
	LEASE_NONE,      /* unknown lease id */
	LEASE_PREPARED,  /* holds its resources until commit, abort or ttl */
	LEASE_COMMITTED, /* became a task; the task holds the resources */
	LEASE_ENDED,     /* aborted or expired: holds nothing (kept to answer
			    a late commit or a resent prepare) */
	LEASE_NSTATES,
};

enum mts_lease_event {
	LEV_PREPARE,
	LEV_COMMIT,
	LEV_ABORT,
	LEV_EXPIRE,
	LEV_NEVENTS,
};

/* Why a prepare or commit was refused. */
enum mts_ledger_why {
	LEDGER_OK = 0,
	LEDGER_NO_CPU,
	LEDGER_NO_MEMORY,
	LEDGER_MAX_PER_NODE, /* max_replicas_per_node reached here */
	LEDGER_DRAINING,     /* the node takes no new tasks */
	LEDGER_UNKNOWN,      /* commit/abort of a lease this ledger never had */
	LEDGER_ENDED,        /* commit of an aborted or expired lease */
	LEDGER_CONFLICT,     /* the same lease id with other terms */
	LEDGER_FULL,         /* too many leases or tasks tracked */
	LEDGER_PAUSED,       /* availability pause: no new tasks */
};

struct mts_lease {
	char id[MTS_LEASE_ID_MAX];
	char owner[33]; /* the owner node's id, hex */
	char service[MTS_SERVICE_MAX];
	char task[MTS_TASK_ID_MAX]; /* set by commit */
	struct mts_res res;
	uint32_t max_per_node; /* 0: no limit */
	mts_time_t expires;    /* PREPARED: then it ends; ENDED: forgotten */
	enum mts_lease_state state;
};

/* A task the node runs (committed, or found running at start). */
struct mts_ledger_task {
	char id[MTS_TASK_ID_MAX];
	char service[MTS_SERVICE_MAX];
	struct mts_res res;
};

/* What changed in a ledger, for its journal: a lease that was granted,
 * committed, aborted or expired (the lease as it is after the change), a
 * task counted or let go without a lease (mts_ledger_task_add/remove). */
enum mts_ledger_change_kind {
	LCH_GRANT,
	LCH_COMMIT,
	LCH_ABORT,
	LCH_EXPIRE,
	LCH_TASK_ADD,
	LCH_TASK_DEL,
	LCH_NKINDS,
};

struct mts_ledger_change {
	enum mts_ledger_change_kind kind;
	struct mts_lease lease;      /* lease kinds */
	struct mts_ledger_task task; /* task kinds */
};

struct mts_ledger {
	struct mts_res capacity; /* after the configured reserve */
	int draining, paused;    /* availability drain, pause: no new leases */
	struct mts_lease *leases;
	size_t nleases, capleases;
	struct mts_ledger_task *tasks;
	size_t ntasks, captasks;
	size_t max_entries;       /* bound on leases + tasks */
	mts_time_t ended_keep_ms; /* how long an ended lease is remembered */
	/* while record is set, every change is appended here until the
	 * caller takes them (mts_ledger_changes_take) */
	int record;
	struct mts_ledger_change *changes;
	size_t nchanges, capchanges;
};

/* What other nodes learn of this one (the d/<node> digest). */
struct mts_digest {
	struct mts_res capacity, free;
	uint32_t tasks;  /* committed tasks */
	uint32_t leases; /* live leases */
};

void mts_ledger_init(struct mts_ledger *, struct mts_res capacity,
    size_t max_entries);
void mts_ledger_free(struct mts_ledger *);

/* Atomically checks the lease's resources (and the service's per-node
 * limit) against the capacity minus committed tasks minus live leases,
 * and records it until now + ttl_ms. A resent prepare of a live or
 * committed lease with the same terms answers as the first did. */
enum mts_ledger_why mts_ledger_prepare(struct mts_ledger *, const char *lease,
    const char *owner, const char *service, struct mts_res res,
    uint32_t max_per_node, int64_t ttl_ms, mts_time_t now);
/* Turns a prepared lease into task `task`. A resent commit of the same
 * lease and task is OK; a commit after the lease ended is refused. */
enum mts_ledger_why mts_ledger_commit(struct mts_ledger *, const char *lease,
    const char *task, mts_time_t now);
enum mts_ledger_why mts_ledger_abort(struct mts_ledger *, const char *lease,
    mts_time_t now);
/* Ends leases past their ttl and forgets ended ones past ended_keep_ms.
 * Returns how many leases ended. */
size_t mts_ledger_expire(struct mts_ledger *, mts_time_t now);
/* The earliest time expire has work, MTS_TIME_NEVER if none. */
mts_time_t mts_ledger_next_deadline(const struct mts_ledger *);

/* Tasks known without a lease (found running at start, from t/<self>):
 * add is idempotent by id; remove frees what the task held. */
void mts_ledger_task_add(struct mts_ledger *, const char *task,
    const char *service, struct mts_res res);
int mts_ledger_task_remove(struct mts_ledger *, const char *task);

/* Puts back a lease as a saved ledger had it (a restart): a prepared
 * one holds its resources again until its expiry, a committed or ended
 * one answers resends as before. A lease id already known is left as
 * it is. LEDGER_OK or LEDGER_FULL. */
enum mts_ledger_why mts_ledger_lease_restore(struct mts_ledger *,
    const struct mts_lease *);

/* Sets a lease as a journal says it became (a replay): a known id is
 * overwritten, an unknown one added. LEDGER_OK or LEDGER_FULL. */
enum mts_ledger_why mts_ledger_lease_put(struct mts_ledger *,
    const struct mts_lease *);

/* The changes recorded since the last call (the array stays the
 * ledger's, valid until its next change); *n is their number. */
const struct mts_ledger_change *mts_ledger_changes_take(struct mts_ledger *,
    size_t *n);
const char *mts_ledger_change_str(enum mts_ledger_change_kind);

void mts_ledger_digest(const struct mts_ledger *, struct mts_digest *);
/* Tasks of service held here (committed + live leases). */
uint32_t mts_ledger_service_count(const struct mts_ledger *,
    const char *service);
const char *mts_ledger_why_str(enum mts_ledger_why);
/* "prepared", "committed", "ended" ("none"); parse gives LEASE_NONE for
 * anything else. */
const char *mts_lease_state_str(enum mts_lease_state);
enum mts_lease_state mts_lease_state_parse(const char *);

#endif
