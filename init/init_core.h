/* init_core.h: mts-init's supervision logic — one state machine per agent, dependency order, backoff; pure (time and exits come in as events). */
#ifndef MTS_INIT_CORE_H
#define MTS_INIT_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "mtstime.h"

enum mts_sup_state {
	SUP_DOWN,     /* not running, not wanted */
	SUP_WAITING,  /* wanted, dependencies not up yet */
	SUP_STARTING, /* spawned, readiness not reported yet */
	SUP_UP,       /* ready */
	SUP_STOPPING, /* SIGTERM sent, waiting for the exit */
	SUP_BACKOFF,  /* crashed, restart timer armed */
	SUP_FAILED,   /* permanent failure: not restarted until started */
	SUP_NSTATES,
};

enum mts_sup_event {
	SEV_START,   /* operator or boot: run it */
	SEV_STOP,    /* operator: stop it and keep it down */
	SEV_RESTART, /* operator or reload: stop (if running), start again */
	SEV_READY,   /* the process reported readiness */
	SEV_EXIT,    /* the process exited (with an exit class) */
	SEV_TIMER,   /* the agent's deadline passed */
	SUP_NEVENTS,
};

/* How a process ended, as far as restarting is concerned. */
enum mts_sup_exit {
	SUP_EXIT_CLEAN,     /* exit code 0 */
	SUP_EXIT_FAILURE,   /* other codes, signals */
	SUP_EXIT_PERMANENT, /* the permanent-failure or usage exit codes */
};

enum mts_sup_restart {
	SUP_RESTART_ALWAYS,
	SUP_RESTART_ON_FAILURE,
	SUP_RESTART_NEVER,
};

struct mts_sup_params {
	enum mts_sup_restart restart;
	int64_t backoff_min_ms;   /* first restart delay */
	int64_t backoff_max_ms;   /* cap of the doubling */
	int64_t stable_ms;        /* a run this long resets the backoff */
	int64_t grace_ms;         /* SIGTERM to SIGKILL */
	int64_t ready_timeout_ms; /* spawn to readiness, else SIGKILL */
};

struct mts_sup {
	char name[64];
	struct mts_sup_params p;
	size_t *after; /* indices of dependencies */
	size_t nafter;
	enum mts_sup_state st;
	int want;            /* should be running */
	int restart_pending; /* stop, then start again */
	int removed;         /* dropped by a reload: never started again */
	mts_time_t deadline; /* MTS_TIME_NEVER when no timer */
	mts_time_t started;  /* spawn time of the current process */
	mts_time_t ready_at;
	int64_t backoff_ms; /* delay of the last restart, 0 none */
	uint32_t restarts;
};

/* Effects the main loop carries out. */
enum mts_init_fx_type {
	FX_SPAWN,   /* fork + exec the agent */
	FX_SIGNAL,  /* send sig to the agent's process group */
	FX_BACKOFF, /* note: restart in delay_ms */
	FX_FAILED,  /* note: permanent failure, not restarted */
};

struct mts_init_fx {
	enum mts_init_fx_type type;
	size_t agent;
	int sig;
	int64_t delay_ms;
};

struct mts_init_fxlist {
	struct mts_init_fx *v;
	size_t n, cap;
};

struct mts_init_core {
	struct mts_sup *s;
	size_t n;
	int shutting_down;
};

/* Adds an agent (down, not wanted); returns its index. */
size_t mts_init_add(struct mts_init_core *, const char *name,
    const struct mts_sup_params *);
/* Sets the dependencies of agent i (indices; copied). */
void mts_init_set_after(struct mts_init_core *, size_t i, const size_t *after,
    size_t n);
void mts_init_core_free(struct mts_init_core *);

/*
 * Feeds one event for agent i at time now; effects are appended to fx.
 * exit_class is used by SEV_EXIT only. Returns 0, or -MTS_ERR_STATE for an
 * event impossible in the agent's state (the main logs it loudly).
 */
int mts_init_event(struct mts_init_core *, size_t i, enum mts_sup_event,
    enum mts_sup_exit exit_class, mts_time_t now, struct mts_init_fxlist *);
/* Fires SEV_TIMER for every agent whose deadline is <= now. */
void mts_init_tick(struct mts_init_core *, mts_time_t now,
    struct mts_init_fxlist *);
/* Stops everything, dependants before their dependencies. */
void mts_init_shutdown(struct mts_init_core *, mts_time_t now,
    struct mts_init_fxlist *);
/* The earliest deadline, or MTS_TIME_NEVER. */
mts_time_t mts_init_next_deadline(const struct mts_init_core *);
/* 1 when no agent has a process (after shutdown: time to exit). */
int mts_init_all_down(const struct mts_init_core *);
/* 1 when every wanted agent is up. */
int mts_init_all_up(const struct mts_init_core *);

/* The next restart delay after a run of `uptime` ms, given the previous
 * delay (0: none yet): the minimum after a stable run or the first crash,
 * else double the previous one, capped. */
int64_t mts_init_backoff(int64_t prev_ms, int64_t uptime_ms,
    const struct mts_sup_params *);

const char *mts_sup_state_name(enum mts_sup_state);

void mts_init_fx_free(struct mts_init_fxlist *);

#endif
