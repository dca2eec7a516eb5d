/* loop.h: the one event loop every agent runs on — fd watchers, a timer queue in mts_time_t, signals through a built-in signalfd, the once-a-second IPC checks, a warning for slow turns. */
#ifndef MTS_LOOP_H
#define MTS_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

#include "mtstime.h"

/*
 * One thread owns a loop and everything registered on it: every function
 * here must be called from that thread (handlers included). A turn waits
 * for the earliest of: a ready descriptor, a due timer, a signal; then runs
 * the ready watchers, the due timers (in deadline order, ties in arming
 * order) and the turn hooks, and warns when that work took longer than the
 * slow-turn threshold. Handlers may add and remove watchers and timers,
 * including the one running and ones whose events are pending in the same
 * turn (a removed watcher's pending events are skipped).
 */
struct mts_loop;
struct mts_ipc_server;
struct mts_pub;

#define MTS_LOOP_IN EPOLLIN
#define MTS_LOOP_OUT EPOLLOUT
#define MTS_LOOP_SLOW_MS_DEFAULT 250

/* What a signal handler is told: the kernel's signalfd record (ssi_signo,
 * ssi_pid, ...). Agents name it this way; the signal plumbing is here. */
typedef struct signalfd_siginfo mts_siginfo_t;

/* events is what epoll reported (EPOLLIN, EPOLLOUT, EPOLLHUP, EPOLLERR). */
typedef void (
    *mts_watch_fn)(void *arg, int fd, uint32_t events, mts_time_t now);
typedef void (*mts_timer_fn)(void *arg, mts_time_t now);
typedef void (
    *mts_signal_fn)(void *arg, const mts_siginfo_t *si, mts_time_t now);
typedef void (*mts_turn_fn)(void *arg, mts_time_t now);
typedef void (*mts_check_fn)(void *obj);

/* A timer lives in its owner's memory (no allocation, re-armable); set it
 * up once with mts_timer_init. It fires once per arming. */
struct mts_timer {
	mts_timer_fn fn;
	void *arg;
	const char *name; /* for the slow-turn warning */
	mts_time_t when;
	uint64_t seq; /* arming order, breaks ties */
	size_t slot;  /* index in the heap while armed */
	int armed;
};

/* A new loop with its epoll set; NULL (logged) on failure. */
struct mts_loop *mts_loop_new(void);
/* Frees the loop and its watchers (not the descriptors, not the timers,
 * which belong to their owners). NULL is fine. */
void mts_loop_free(struct mts_loop *);

/* Watches fd for events (MTS_LOOP_IN and/or MTS_LOOP_OUT; 0 registers it
 * paused: a paused watcher is not called, not even for a hang-up or an
 * error). name labels it in the slow-turn warning. NULL on failure
 * (logged). The loop never closes fd. */
struct mts_watch *mts_loop_watch(struct mts_loop *, int fd, uint32_t events,
    const char *name, mts_watch_fn fn, void *arg);
/* Changes the events watched (0 pauses). 0 or -errno. */
int mts_watch_set(struct mts_watch *, uint32_t events);
uint32_t mts_watch_events(const struct mts_watch *);
/* Stops watching and frees the watcher (at the end of the turn when called
 * from a handler). Call it before closing the descriptor. NULL is fine. */
void mts_watch_free(struct mts_watch *);

void mts_timer_init(struct mts_timer *, const char *name, mts_timer_fn fn,
    void *arg);
/* (Re)arms t to fire at `when` (a past time fires in the next turn). */
void mts_timer_arm(struct mts_loop *, struct mts_timer *t, mts_time_t when);
/* Disarms t if it is armed. */
void mts_timer_disarm(struct mts_loop *, struct mts_timer *t);
/* The earliest armed deadline, MTS_TIME_NEVER when none. */
mts_time_t mts_loop_next_deadline(const struct mts_loop *);

/* Blocks signo and delivers it through the loop's signalfd to fn. SIGPIPE
 * is always ignored on a loop's process. 0, or -errno (logged). */
int mts_loop_signal(struct mts_loop *, int signo, mts_signal_fn fn, void *arg);
/* The usual stop signals (SIGTERM, SIGINT): log the signal and stop the
 * loop; SIGHUP is ignored unless the agent registers its own handler. */
int mts_loop_stop_on_signals(struct mts_loop *);

/* Called after every turn's handlers and timers, in registration order.
 * For work that must follow any event (flushing effects of a core). */
int mts_loop_on_turn(struct mts_loop *, mts_turn_fn fn, void *arg);

/* Attaches obj: fd (unless -1) is watched for input with on_ready(obj),
 * and check(obj) (unless NULL) is called about once a second, for
 * listeners that check themselves. Detach it before freeing obj. 0, or -1
 * (logged). */
int mts_loop_attach(struct mts_loop *, void *obj, int fd, const char *name,
    mts_watch_fn on_ready, mts_check_fn check);
void mts_loop_detach(struct mts_loop *, void *obj);

/* Serves an IPC server on the loop: drains it when readable and calls its
 * once-a-second check. Remove it before closing the server. (loop_ipc.c,
 * on mts_loop_attach.) */
int mts_loop_add_server(struct mts_loop *, struct mts_ipc_server *);
void mts_loop_remove_server(struct mts_loop *, struct mts_ipc_server *);
/* Calls a feed's once-a-second listener check. */
int mts_loop_add_pub(struct mts_loop *, struct mts_pub *);
void mts_loop_remove_pub(struct mts_loop *, struct mts_pub *);

/* A turn whose work took longer than ms is logged with its slowest
 * handler; 0 turns the warning off. */
void mts_loop_set_slow_ms(struct mts_loop *, int ms);

/* Runs turns until mts_loop_stop. 0, or -errno if epoll failed. */
int mts_loop_run(struct mts_loop *);
/* Runs one turn, waiting at most max_wait_ms for something to happen
 * (-1: until the next timer). Returns the number of handlers run, or
 * -errno. For tests and for agents that interleave their own work. */
int mts_loop_run_once(struct mts_loop *, int max_wait_ms);
void mts_loop_stop(struct mts_loop *);
int mts_loop_stopped(const struct mts_loop *);
/* The time the current turn started its work (mts_now() outside a turn). */
mts_time_t mts_loop_now(const struct mts_loop *);

/* Counters, for tests and `stats` replies. */
struct mts_loop_stats {
	uint64_t turns;
	uint64_t slow_turns;
	int64_t max_turn_ms;
};
void mts_loop_get_stats(const struct mts_loop *, struct mts_loop_stats *);

#endif
