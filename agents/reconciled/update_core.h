/* update_core.h: the rolling update of one service as a pure function — from its record (version, update and rollback configs, canary, operator control), its tasks (current spec or old, state, health), the update's replicated progress and the wall time, the tasks to start and stop now and the progress to write back (u/<service>, docs/scheduling.md). */
#ifndef MTS_UPDATE_CORE_H
#define MTS_UPDATE_CORE_H

#include <stddef.h>
#include <stdint.h>

#define MTS_UP_ID_MAX 64   /* a task id, with its NUL */
#define MTS_UP_SEEN_MAX 64 /* failed tasks remembered by id */
#define MTS_UP_MSG_MAX 160
/* A new task not healthy this long after it started counts as failed
 * (Nomad's healthy_deadline default). */
#define MTS_UP_HEALTHY_DEADLINE_MS (5 * 60 * 1000)

enum mts_up_order {
	UP_STOP_FIRST,
	UP_START_FIRST,
};

enum mts_up_action_on_failure {
	UP_FAIL_PAUSE,
	UP_FAIL_CONTINUE,
	UP_FAIL_ROLLBACK,
};

/* deploy.update_config or deploy.rollback_config. */
struct mts_up_params {
	uint32_t parallelism; /* 0: all at once */
	uint64_t delay_ms;    /* between batches */
	enum mts_up_order order;
	uint64_t monitor_ms; /* a batch stays healthy this long to be done */
	double max_failure_ratio;
	enum mts_up_action_on_failure failure_action;
};

/* Swarm's defaults: 1, 0 s, stop-first, 5 s, 0, pause. */
void mts_up_params_default(struct mts_up_params *);

/* The service record as the update sees it. */
struct mts_up_service {
	uint64_t version;  /* s/ record version */
	uint32_t replicas; /* replicated modes */
	int rollback;      /* this version rolls back (rollback_config) */
	int has_previous;  /* a previous spec to roll back to */
	struct mts_up_params update, rollback_cfg;
	uint32_t canary; /* x-mts update.canary: 0 none */
	int auto_promote, auto_revert;
	/* the operator's control, in the s/ record */
	int paused;        /* service update --pause */
	uint64_t resumes;  /* grows with each service update --resume */
	uint64_t promoted; /* the version service promote was given */
	uint64_t healthy_deadline_ms; /* 0: MTS_UP_HEALTHY_DEADLINE_MS */
	/* service rebalance: the tasks marked old are moved, one at a time
	 * and start-first, to where spread places their replacements */
	int rebalance;
};

enum mts_up_task_state {
	UP_TASK_PENDING, /* committed, not running yet */
	UP_TASK_RUNNING,
	UP_TASK_EXITED,  /* ended on its own (any exit code) */
	UP_TASK_FAILED,  /* its node gave up on it */
	UP_TASK_STOPPED, /* stopped on purpose */
};

enum mts_up_health {
	UP_HEALTH_NONE, /* no health check: running counts as healthy */
	UP_HEALTH_STARTING,
	UP_HEALTH_HEALTHY,
	UP_HEALTH_UNHEALTHY,
};

/* One task of the service, from its t/ record. Tasks on nodes that are
 * dead or draining are left out by the caller (they are not live). */
struct mts_up_task {
	const char *id;
	int current; /* runs the record's spec (spec digest equal) */
	enum mts_up_task_state state;
	enum mts_up_health health;
	int desired_running; /* 0 once a stop was asked */
	uint64_t started_ms; /* wall ms it started; 0: unknown, no deadline */
	/* the record version it was placed from (0: unknown): a task placed
	 * before the update's version never counts as the update's failure
	 * (the tasks a rebalance or a rollback leaves running) */
	uint64_t version;
};

enum mts_up_phase {
	UP_NONE,      /* no update has run for this service */
	UP_UPDATING,  /* replacing tasks batch by batch */
	UP_CANARY,    /* canaries healthy, waiting for service promote */
	UP_PAUSED,    /* stopped between batches (operator or failure) */
	UP_COMPLETED, /* every task on the version */
	UP_ROLLBACK_STARTED,
	UP_ROLLBACK_PAUSED,
	UP_ROLLBACK_COMPLETED,
};

/* The update's progress: the value of u/<service>, written by the
 * service's owner so that the next owner carries on from it. Times are
 * wall ms, because they cross nodes. */
struct mts_up_status {
	uint64_t version; /* the s/ version this update moves to */
	enum mts_up_phase phase;
	uint32_t batch, batches; /* batch n of m, from 1 */
	uint32_t done;           /* tasks counted updated at the last batch */
	uint32_t target;         /* current tasks wanted when this batch ends */
	uint64_t started_ms, healthy_since_ms, next_batch_ms, ended_ms;
	int paused_by_operator;
	int promoted;      /* canaries promoted (or not a canary update) */
	uint64_t resumes;  /* the operator's resumes already acted on */
	uint32_t failures; /* counted since the update (or resume) began */
	size_t nseen;      /* failed tasks already counted */
	char seen[MTS_UP_SEEN_MAX][MTS_UP_ID_MAX];
	char message[MTS_UP_MSG_MAX];
};

enum mts_up_kind {
	UP_START,        /* place `count` tasks of the record's spec */
	UP_STOP,         /* stop task (index into the tasks) */
	UP_BEGAN,        /* an update (or rollback) began: event */
	UP_BATCH_DONE,   /* batch `count` is done: event */
	UP_PAUSE,        /* the update paused (why): event */
	UP_RESUMED,      /* event */
	UP_CANARY_READY, /* canaries healthy, waiting for promote: event */
	UP_ROLLBACK,     /* write s/ back to the previous spec (rollback set) */
	UP_DONE,         /* the update (or rollback) completed: event */
};

struct mts_up_action {
	enum mts_up_kind kind;
	size_t task;    /* UP_STOP */
	uint32_t count; /* UP_START: tasks; UP_BATCH_DONE: the batch */
	char why[MTS_UP_MSG_MAX];
};

struct mts_up_actions {
	struct mts_up_action *v;
	size_t n, cap;
};

/* Whether the update owns the service's task count now: while it does
 * the caller does not apply its reconciler's count duty (missing or extra
 * replicas) to the service, since the update's UP_START and UP_STOP
 * already keep it, surge and canaries included. */
int mts_up_active(const struct mts_up_status *);

/* One step: appends to out what to do now and updates *st in place (the
 * caller writes u/<service> when it changed). Deterministic in its inputs,
 * and idempotent: a step taken again from the same replicated state (a
 * new owner after the old one died mid-batch) asks for no task twice,
 * because what earlier steps did is visible in the tasks. */
void mts_up_step(const struct mts_up_service *, const struct mts_up_task *,
    size_t ntasks, struct mts_up_status *st, uint64_t now_ms,
    struct mts_up_actions *out);
void mts_up_actions_free(struct mts_up_actions *);

/* Names for u/ records, service inspect and the events. */
const char *mts_up_phase_name(enum mts_up_phase);
int mts_up_phase_parse(const char *, enum mts_up_phase *);
const char *mts_up_kind_name(enum mts_up_kind);
int mts_up_order_parse(const char *, enum mts_up_order *);
int mts_up_failure_parse(const char *, enum mts_up_action_on_failure *);

#endif
