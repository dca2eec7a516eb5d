/* shim_core.c: the task lifecycle as a state x event table — exits, stop grace, restart backoff, health — with no clock or I/O. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "mtserr.h"
#include "shim_core.h"

typedef int (*step_fn)(struct mts_task *, const struct mts_task_ev *,
    mts_time_t, struct mts_effects *);

static void
emit(struct mts_effects *fx, enum mts_effect_kind kind, int sig)
{
	size_t i;

	for (i = 0; i < fx->n; i++)
		if (fx->e[i].kind == kind && fx->e[i].sig == sig)
			return;
	if (fx->n < MTS_FX_MAX) {
		fx->e[fx->n].kind = kind;
		fx->e[fx->n].sig = sig;
		fx->n++;
	}
}

mts_time_t
mts_task_backoff(const struct mts_task_policy *p, uint32_t n)
{
	mts_time_t d = p->delay > 0 ? p->delay : 100;
	mts_time_t cap = p->max_delay > 0 ? p->max_delay : 30000;

	while (n-- > 0 && d < cap)
		d *= 2;
	return d < cap ? d : cap;
}

static void
finish(struct mts_task *t, enum mts_task_state st, struct mts_effects *fx)
{
	t->state = st;
	t->pid = 0;
	t->deadline = MTS_TIME_NEVER;
	t->probing = 0;
	if (t->health != MTS_HEALTH_NONE)
		t->health = MTS_HEALTH_UNHEALTHY;
	emit(fx, MTS_FX_SAVE, 0);
	emit(fx, MTS_FX_DONE, 0);
}

/* After an exit (or a failed start): restart, or settle. */
static void
after_exit(struct mts_task *t, mts_time_t now, struct mts_effects *fx)
{
	int failed = t->exit_code != 0 || t->signal != 0 || t->oom;
	int again, limit;

	limit = t->pol.max_attempts > 0 && t->streak >= t->pol.max_attempts;

	if (t->want_stop) {
		finish(t, MTS_TASK_EXITED, fx);
		return;
	}
	switch (t->pol.restart) {
	case MTS_RESTART_ON_FAILURE:
		again = failed && !limit;
		break;
	case MTS_RESTART_ANY:
		again = !limit;
		break;
	default:
		again = 0;
		break;
	}
	if (!again) {
		finish(t,
		    failed && t->pol.restart != MTS_RESTART_NONE
		        ? MTS_TASK_FAILED
		        : MTS_TASK_EXITED,
		    fx);
		return;
	}
	t->state = MTS_TASK_RESTARTING;
	t->pid = 0;
	t->probing = 0;
	t->deadline = now + mts_task_backoff(&t->pol, t->streak);
	emit(fx, MTS_FX_SAVE, 0);
}

static int
on_started(struct mts_task *t, const struct mts_task_ev *ev, mts_time_t now,
    struct mts_effects *fx)
{
	t->state = MTS_TASK_RUNNING;
	t->pid = ev->pid;
	t->started = now;
	t->exit_code = -1;
	t->signal = 0;
	t->oom = 0;
	t->deadline = MTS_TIME_NEVER;
	if (t->pol.health) {
		t->health = MTS_HEALTH_STARTING;
		t->health_failures = 0;
		t->next_probe = now + t->pol.hc_interval;
		t->probe_grace_end = now + t->pol.hc_start_period;
	}
	emit(fx, MTS_FX_SAVE, 0);
	if (t->want_stop)
		return mts_task_step(t,
		    &(struct mts_task_ev){ .type = MTS_EV_STOP }, now, fx);
	return 0;
}

static int
on_start_failed(struct mts_task *t, const struct mts_task_ev *ev,
    mts_time_t now, struct mts_effects *fx)
{
	t->exit_code = 127;
	t->signal = 0;
	t->oom = 0;
	after_exit(t, now, fx);
	return 0;
}

static int
on_exit(struct mts_task *t, const struct mts_task_ev *ev, mts_time_t now,
    struct mts_effects *fx)
{
	t->exit_code = ev->code;
	t->signal = ev->sig;
	t->oom = ev->oom;
	if (t->pol.window > 0 && now - t->started >= t->pol.window)
		t->streak = 0; /* it ran long enough: a success */
	after_exit(t, now, fx);
	return 0;
}

static int
on_stop_running(struct mts_task *t, const struct mts_task_ev *ev,
    mts_time_t now, struct mts_effects *fx)
{
	mts_time_t grace = ev->has_grace ? ev->grace : t->pol.grace;

	t->want_stop = 1;
	t->state = MTS_TASK_STOPPING;
	t->deadline = now + grace;
	emit(fx, MTS_FX_SIGNAL, grace > 0 ? SIGTERM : SIGKILL);
	emit(fx, MTS_FX_SAVE, 0);
	return 0;
}

/* Stopping while not yet started: remember, act when it runs. */
static int
on_stop_pending(struct mts_task *t, const struct mts_task_ev *ev,
    mts_time_t now, struct mts_effects *fx)
{
	t->want_stop = 1;
	emit(fx, MTS_FX_SAVE, 0);
	return 0;
}

static int
on_stop_restarting(struct mts_task *t, const struct mts_task_ev *ev,
    mts_time_t now, struct mts_effects *fx)
{
	t->want_stop = 1;
	t->held = 0;
	t->lost = 0;
	finish(t, MTS_TASK_EXITED, fx);
	return 0;
}

static int
on_stop_done(struct mts_task *t, const struct mts_task_ev *ev, mts_time_t now,
    struct mts_effects *fx)
{
	t->want_stop = 1;
	emit(fx, MTS_FX_DONE, 0);
	return 0;
}

static int
on_tick_running(struct mts_task *t, const struct mts_task_ev *ev,
    mts_time_t now, struct mts_effects *fx)
{
	if (t->pol.health && !t->probing && now >= t->next_probe) {
		t->probing = 1;
		t->next_probe = now + t->pol.hc_interval;
		emit(fx, MTS_FX_PROBE, 0);
	}
	return 0;
}

static int
on_tick_stopping(struct mts_task *t, const struct mts_task_ev *ev,
    mts_time_t now, struct mts_effects *fx)
{
	if (now >= t->deadline) {
		t->deadline = MTS_TIME_NEVER;
		emit(fx, MTS_FX_SIGNAL, SIGKILL);
	}
	return 0;
}

/* When a lost task restarts: at once unless it was crash-looping (a
 * streak it had built before the loss keeps its backoff). */
static mts_time_t
lost_deadline(const struct mts_task *t, mts_time_t now)
{
	return t->streak == 0 ? now
	                      : now + mts_task_backoff(&t->pol, t->streak);
}

/* The container ended while the shim was away (the node went down or
 * restarted): not a crash, so neither the streak nor max_attempts count
 * it; a task that was meant to stop, or that has no restart policy, is
 * done; a held one waits for MTS_EV_RELEASE. */
static int
on_lost(struct mts_task *t, const struct mts_task_ev *ev, mts_time_t now,
    struct mts_effects *fx)
{
	int was_restarting = t->state == MTS_TASK_RESTARTING;

	t->exit_code = -1;
	t->signal = 0;
	t->oom = 0;
	if (t->want_stop || t->pol.restart == MTS_RESTART_NONE) {
		finish(t, MTS_TASK_EXITED, fx);
		return 0;
	}
	t->state = MTS_TASK_RESTARTING;
	t->pid = 0;
	t->probing = 0;
	if (t->health != MTS_HEALTH_NONE)
		t->health = MTS_HEALTH_STARTING;
	/* a crash's pending restart stays the crash's */
	t->lost = t->lost || !was_restarting;
	t->held = ev->hold;
	t->deadline = t->held ? MTS_TIME_NEVER
	    : was_restarting && !t->lost
	    ? now + mts_task_backoff(&t->pol, t->streak)
	    : lost_deadline(t, now);
	emit(fx, MTS_FX_SAVE, 0);
	return 0;
}

static int
on_release(struct mts_task *t, const struct mts_task_ev *ev, mts_time_t now,
    struct mts_effects *fx)
{
	if (!t->held)
		return 0;
	t->held = 0;
	t->deadline = t->lost ? lost_deadline(t, now)
	                      : now + mts_task_backoff(&t->pol, t->streak);
	emit(fx, MTS_FX_SAVE, 0);
	return 0;
}

static int
on_tick_restarting(struct mts_task *t, const struct mts_task_ev *ev,
    mts_time_t now, struct mts_effects *fx)
{
	if (now >= t->deadline) {
		t->restarts++;
		t->streak += !t->lost;
		t->lost = 0;
		t->state = MTS_TASK_CREATED;
		t->deadline = MTS_TIME_NEVER;
		emit(fx, MTS_FX_START, 0);
		emit(fx, MTS_FX_SAVE, 0);
	}
	return 0;
}

static int
on_tick_idle(struct mts_task *t, const struct mts_task_ev *ev, mts_time_t now,
    struct mts_effects *fx)
{
	return 0;
}

static int
on_probe(struct mts_task *t, const struct mts_task_ev *ev, mts_time_t now,
    struct mts_effects *fx)
{
	enum mts_health old = t->health;
	uint32_t retries = t->pol.hc_retries ? t->pol.hc_retries : 3;

	t->probing = 0;
	if (ev->ok) {
		t->health_failures = 0;
		t->health = MTS_HEALTH_HEALTHY;
	} else if (!(old == MTS_HEALTH_STARTING && now < t->probe_grace_end)) {
		/* Failures in the start period do not count (Compose). */
		t->health_failures++;
		if (t->health_failures >= retries)
			t->health = MTS_HEALTH_UNHEALTHY;
	}
	if (t->health != old)
		emit(fx, MTS_FX_SAVE, 0);
	return 0;
}

/* A probe that ends after the task stopped running is ignored. */
static int
on_probe_late(struct mts_task *t, const struct mts_task_ev *ev, mts_time_t now,
    struct mts_effects *fx)
{
	t->probing = 0;
	return 0;
}

/* state x event; NULL cells are impossible and refused. */
static const step_fn table[MTS_TASK_NSTATES][MTS_EV_NEVENTS] = {
	[MTS_TASK_CREATED] = { on_started, on_start_failed, on_exit,
	    on_stop_pending, on_tick_idle, on_probe_late, on_lost,
	    on_tick_idle },
	[MTS_TASK_RUNNING] = { NULL, NULL, on_exit, on_stop_running,
	    on_tick_running, on_probe, on_lost, on_tick_idle },
	[MTS_TASK_STOPPING] = { NULL, NULL, on_exit, on_stop_pending,
	    on_tick_stopping, on_probe_late, on_lost, on_tick_idle },
	[MTS_TASK_RESTARTING] = { NULL, NULL, NULL, on_stop_restarting,
	    on_tick_restarting, on_probe_late, on_lost, on_release },
	[MTS_TASK_EXITED] = { NULL, NULL, NULL, on_stop_done, on_tick_idle,
	    on_probe_late, NULL, on_tick_idle },
	[MTS_TASK_FAILED] = { NULL, NULL, NULL, on_stop_done, on_tick_idle,
	    on_probe_late, NULL, on_tick_idle },
};

int
mts_task_step(struct mts_task *t, const struct mts_task_ev *ev, mts_time_t now,
    struct mts_effects *fx)
{
	step_fn fn;

	if ((unsigned)t->state >= MTS_TASK_NSTATES ||
	    (unsigned)ev->type >= MTS_EV_NEVENTS)
		return -MTS_ERR_INVAL;
	fn = table[t->state][ev->type];
	if (fn == NULL)
		return -MTS_ERR_STATE;
	return fn(t, ev, now, fx);
}

void
mts_task_init(struct mts_task *t, const char *id,
    const struct mts_task_policy *pol, mts_time_t now, struct mts_effects *fx)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "%s", id);
	t->pol = *pol;
	t->state = MTS_TASK_CREATED;
	t->exit_code = -1;
	t->deadline = MTS_TIME_NEVER;
	t->next_probe = MTS_TIME_NEVER;
	emit(fx, MTS_FX_START, 0);
	emit(fx, MTS_FX_SAVE, 0);
}

mts_time_t
mts_task_next(const struct mts_task *t)
{
	mts_time_t n = t->deadline;

	if (t->state == MTS_TASK_RUNNING && t->pol.health && !t->probing &&
	    t->next_probe < n)
		n = t->next_probe;
	return n;
}

static const char *const state_names[MTS_TASK_NSTATES] = { "created", "running",
	"stopping", "restarting", "exited", "failed" };

const char *
mts_task_state_name(enum mts_task_state s)
{
	return (unsigned)s < MTS_TASK_NSTATES ? state_names[s] : "?";
}

int
mts_task_state_parse(const char *s, enum mts_task_state *out)
{
	int i;

	for (i = 0; i < MTS_TASK_NSTATES; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*out = (enum mts_task_state)i;
			return 0;
		}
	return -MTS_ERR_INVAL;
}

const char *
mts_health_name(enum mts_health h)
{
	static const char *const n[] = { "", "starting", "healthy",
		"unhealthy" };

	return (unsigned)h < 4 ? n[h] : "?";
}

int
mts_restart_parse(const char *s, enum mts_restart_cond *out)
{
	if (s == NULL || *s == '\0' || !strcmp(s, "none") || !strcmp(s, "no"))
		*out = MTS_RESTART_NONE;
	else if (!strcmp(s, "on-failure"))
		*out = MTS_RESTART_ON_FAILURE;
	else if (!strcmp(s, "any") || !strcmp(s, "always") ||
	    !strcmp(s, "unless-stopped"))
		*out = MTS_RESTART_ANY;
	else
		return -MTS_ERR_INVAL;
	return 0;
}
