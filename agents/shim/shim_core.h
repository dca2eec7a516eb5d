/* shim_core.h: the pure per-task state machine — start, exit, stop with grace, restart policy with backoff, health checks — fed (event, now), emitting effects. */
#ifndef MTS_SHIM_CORE_H
#define MTS_SHIM_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "mtstime.h"
#include "taskid.h"

#define MTS_TASK_ID_MAX MTS_TASK_ID_LEN

enum mts_task_state {
	MTS_TASK_CREATED, /* start asked, not yet running */
	MTS_TASK_RUNNING,
	MTS_TASK_STOPPING,   /* SIGTERM sent, waiting for exit or grace */
	MTS_TASK_RESTARTING, /* exited, waiting for the backoff delay */
	MTS_TASK_EXITED,     /* done, by itself or stopped */
	MTS_TASK_FAILED,     /* restart policy gave up, or could not start */
	MTS_TASK_NSTATES,
};

enum mts_task_event {
	MTS_EV_STARTED,
	MTS_EV_START_FAILED,
	MTS_EV_EXIT,
	MTS_EV_STOP,
	MTS_EV_TICK,
	MTS_EV_PROBE,
	MTS_EV_LOST,    /* the container ended while the shim was away (the
			   node went down): not a crash */
	MTS_EV_RELEASE, /* a held task may start again */
	MTS_EV_NEVENTS,
};

enum mts_restart_cond {
	MTS_RESTART_NONE,
	MTS_RESTART_ON_FAILURE,
	MTS_RESTART_ANY,
};

enum mts_health {
	MTS_HEALTH_NONE,
	MTS_HEALTH_STARTING,
	MTS_HEALTH_HEALTHY,
	MTS_HEALTH_UNHEALTHY,
};

struct mts_task_policy {
	enum mts_restart_cond restart;
	uint32_t max_attempts; /* 0 = unlimited */
	mts_time_t delay;      /* first backoff */
	mts_time_t max_delay;
	mts_time_t window; /* a run this long forgives the restarts before
			      it (0: every restart counts) */
	mts_time_t grace;  /* SIGTERM -> SIGKILL */
	int health;        /* health checks configured */
	mts_time_t hc_interval, hc_timeout, hc_start_period;
	uint32_t hc_retries;
};

struct mts_task {
	char id[MTS_TASK_ID_MAX + 1];
	struct mts_task_policy pol;
	enum mts_task_state state;
	int want_stop; /* desired state is stopped */
	int exit_code; /* -1 none yet */
	int signal;
	int oom;
	uint32_t restarts;
	uint32_t streak; /* restarts since the last run that lasted the
			    policy's window: what max_attempts and the
			    backoff count */
	int held; /* lost: restarting only once released (MTS_EV_RELEASE) */
	int lost; /* the pending restart follows a loss: it is not counted
		     in the streak */
	int pid;
	enum mts_health health;
	uint32_t health_failures;
	int probing; /* a probe is in flight */
	mts_time_t started, deadline, next_probe, probe_grace_end;
};

enum mts_effect_kind {
	MTS_FX_START,  /* (re)create and start the container */
	MTS_FX_SIGNAL, /* send sig to the container */
	MTS_FX_PROBE,  /* run one health probe, report with MTS_EV_PROBE */
	MTS_FX_SAVE,   /* state changed: persist and publish */
	MTS_FX_DONE,   /* reached EXITED/FAILED: release waiters, clean up */
};

struct mts_effect {
	enum mts_effect_kind kind;
	int sig;
};

#define MTS_FX_MAX 8
struct mts_effects {
	struct mts_effect e[MTS_FX_MAX];
	size_t n;
};

/* Event arguments (only the fields of the event are read). */
struct mts_task_ev {
	enum mts_task_event type;
	int pid;            /* STARTED */
	int code, sig, oom; /* EXIT */
	int has_grace;      /* STOP */
	mts_time_t grace;   /* STOP */
	int ok;             /* PROBE */
	int hold;           /* LOST: wait for MTS_EV_RELEASE to restart */
};

/* A new task in state CREATED; emits START. */
void mts_task_init(struct mts_task *, const char *id,
    const struct mts_task_policy *, mts_time_t now, struct mts_effects *fx);

/* Feeds one event. Impossible (state, event) cells return -MTS_ERR_STATE
 * and change nothing. */
int mts_task_step(struct mts_task *, const struct mts_task_ev *, mts_time_t now,
    struct mts_effects *fx);

/* The next time MTS_EV_TICK has something to do (MTS_TIME_NEVER if none). */
mts_time_t mts_task_next(const struct mts_task *);

/* The delay before restart number n (0-based): delay * 2^n, capped. */
mts_time_t mts_task_backoff(const struct mts_task_policy *, uint32_t n);

const char *mts_task_state_name(enum mts_task_state);
int mts_task_state_parse(const char *, enum mts_task_state *);
const char *mts_health_name(enum mts_health);
/* Parses a Compose restart condition ("none", "on-failure", "any" or
 * "always", "unless-stopped"); -MTS_ERR_INVAL otherwise. */
int mts_restart_parse(const char *, enum mts_restart_cond *);

#endif
