/* init_core.c: the supervisor state × event table, dependency ordering and restart backoff of mts-init (no clock, no processes). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "init_core.h"
#include "mtserr.h"
#include "xmalloc.h"

static const char *const state_names[SUP_NSTATES] = {
	[SUP_DOWN] = "down",
	[SUP_WAITING] = "waiting",
	[SUP_STARTING] = "starting",
	[SUP_UP] = "up",
	[SUP_STOPPING] = "stopping",
	[SUP_BACKOFF] = "backoff",
	[SUP_FAILED] = "failed",
};

const char *
mts_sup_state_name(enum mts_sup_state st)
{
	return st < SUP_NSTATES ? state_names[st] : "?";
}

static void
emit(struct mts_init_fxlist *fx, enum mts_init_fx_type t, size_t agent, int sig,
    int64_t delay)
{
	if (fx->n == fx->cap) {
		fx->cap = fx->cap ? fx->cap * 2 : 8;
		fx->v = xreallocarray(fx->v, fx->cap, sizeof(*fx->v));
	}
	fx->v[fx->n++] = (struct mts_init_fx){ t, agent, sig, delay };
}

void
mts_init_fx_free(struct mts_init_fxlist *fx)
{
	free(fx->v);
	fx->v = NULL;
	fx->n = fx->cap = 0;
}

size_t
mts_init_add(struct mts_init_core *c, const char *name,
    const struct mts_sup_params *p)
{
	struct mts_sup *s;

	c->s = xreallocarray(c->s, c->n + 1, sizeof(*c->s));
	s = &c->s[c->n];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->p = *p;
	s->st = SUP_DOWN;
	s->deadline = MTS_TIME_NEVER;
	return c->n++;
}

void
mts_init_set_after(struct mts_init_core *c, size_t i, const size_t *after,
    size_t n)
{
	free(c->s[i].after);
	c->s[i].after = n ? xmemdup(after, n * sizeof(*after)) : NULL;
	c->s[i].nafter = n;
}

void
mts_init_core_free(struct mts_init_core *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->s[i].after);
	free(c->s);
	c->s = NULL;
	c->n = 0;
}

int64_t
mts_init_backoff(int64_t prev_ms, int64_t uptime_ms,
    const struct mts_sup_params *p)
{
	int64_t d;

	if (prev_ms <= 0 || uptime_ms >= p->stable_ms)
		return p->backoff_min_ms;
	d = prev_ms > p->backoff_max_ms / 2 ? p->backoff_max_ms : prev_ms * 2;
	return d < p->backoff_min_ms ? p->backoff_min_ms : d;
}

static int
has_process(enum mts_sup_state st)
{
	return st == SUP_STARTING || st == SUP_UP || st == SUP_STOPPING;
}

/* --- the table's cells: each returns 0 or -MTS_ERR_STATE ---------------- */

typedef int (*cell_fn)(struct mts_init_core *, struct mts_sup *,
    enum mts_sup_exit, mts_time_t, struct mts_init_fxlist *);

static int
c_ignore(struct mts_init_core *c, struct mts_sup *s, enum mts_sup_exit x,
    mts_time_t now, struct mts_init_fxlist *fx)
{
	return 0;
}

/* Start from rest: wanted again, backoff forgotten. */
static int
c_want(struct mts_init_core *c, struct mts_sup *s, enum mts_sup_exit x,
    mts_time_t now, struct mts_init_fxlist *fx)
{
	s->want = 1;
	s->backoff_ms = 0;
	s->st = SUP_WAITING;
	s->deadline = MTS_TIME_NEVER;
	return 0;
}

static int
c_want_running(struct mts_init_core *c, struct mts_sup *s, enum mts_sup_exit x,
    mts_time_t now, struct mts_init_fxlist *fx)
{
	s->want = 1;
	return 0;
}

static int
c_unwant(struct mts_init_core *c, struct mts_sup *s, enum mts_sup_exit x,
    mts_time_t now, struct mts_init_fxlist *fx)
{
	s->want = 0;
	s->restart_pending = 0;
	if (!has_process(s->st)) {
		s->st = SUP_DOWN;
		s->deadline = MTS_TIME_NEVER;
	}
	return 0;
}

static int
c_restart_running(struct mts_init_core *c, struct mts_sup *s,
    enum mts_sup_exit x, mts_time_t now, struct mts_init_fxlist *fx)
{
	s->want = 1;
	s->restart_pending = 1;
	return 0;
}

static int
c_ready(struct mts_init_core *c, struct mts_sup *s, enum mts_sup_exit x,
    mts_time_t now, struct mts_init_fxlist *fx)
{
	s->st = SUP_UP;
	s->ready_at = now;
	s->deadline = MTS_TIME_NEVER;
	return 0;
}

/* A process ended on its own (starting or up). */
static int
c_crashed(struct mts_init_core *c, struct mts_sup *s, enum mts_sup_exit x,
    mts_time_t now, struct mts_init_fxlist *fx)
{
	size_t i = (size_t)(s - c->s);

	s->deadline = MTS_TIME_NEVER;
	if (x == SUP_EXIT_PERMANENT) {
		s->st = SUP_FAILED;
		s->want = 0;
		emit(fx, FX_FAILED, i, 0, 0);
		return 0;
	}
	if (!s->want || c->shutting_down || s->removed ||
	    s->p.restart == SUP_RESTART_NEVER ||
	    (s->p.restart == SUP_RESTART_ON_FAILURE && x == SUP_EXIT_CLEAN)) {
		s->st = SUP_DOWN;
		s->want = 0;
		return 0;
	}
	s->backoff_ms =
	    mts_init_backoff(s->backoff_ms, now - s->started, &s->p);
	s->restarts++;
	s->st = SUP_BACKOFF;
	s->deadline = now + s->backoff_ms;
	emit(fx, FX_BACKOFF, i, 0, s->backoff_ms);
	return 0;
}

/* The exit we asked for. */
static int
c_stopped(struct mts_init_core *c, struct mts_sup *s, enum mts_sup_exit x,
    mts_time_t now, struct mts_init_fxlist *fx)
{
	s->deadline = MTS_TIME_NEVER;
	if ((s->want || s->restart_pending) && !c->shutting_down &&
	    !s->removed) {
		s->restart_pending = 0;
		s->want = 1;
		s->backoff_ms = 0;
		s->st = SUP_WAITING;
	} else {
		s->st = SUP_DOWN;
	}
	return 0;
}

/* Deadline while starting or stopping: no more patience. */
static int
c_kill(struct mts_init_core *c, struct mts_sup *s, enum mts_sup_exit x,
    mts_time_t now, struct mts_init_fxlist *fx)
{
	emit(fx, FX_SIGNAL, (size_t)(s - c->s), SIGKILL, 0);
	s->deadline = MTS_TIME_NEVER;
	return 0;
}

static int
c_backoff_over(struct mts_init_core *c, struct mts_sup *s, enum mts_sup_exit x,
    mts_time_t now, struct mts_init_fxlist *fx)
{
	s->st = SUP_WAITING;
	s->deadline = MTS_TIME_NEVER;
	return 0;
}

/* NULL: impossible (there is no process to be ready or to exit). */
static const cell_fn table[SUP_NSTATES][SUP_NEVENTS] = {
	/*               START           STOP      RESTART            READY     EXIT       TIMER */
	[SUP_DOWN] = { c_want, c_ignore, c_want, NULL, NULL, c_ignore },
	[SUP_WAITING] = { c_ignore, c_unwant, c_ignore, NULL, NULL, c_ignore },
	[SUP_STARTING] = { c_ignore, c_unwant, c_restart_running, c_ready,
	    c_crashed, c_kill },
	[SUP_UP] = { c_ignore, c_unwant, c_restart_running, c_ignore, c_crashed,
	    c_ignore },
	[SUP_STOPPING] = { c_want_running, c_unwant, c_restart_running,
	    c_ignore, c_stopped, c_kill },
	[SUP_BACKOFF] = { c_want, c_unwant, c_want, NULL, NULL,
	    c_backoff_over },
	[SUP_FAILED] = { c_want, c_unwant, c_want, NULL, NULL, c_ignore },
};

static int
deps_up(const struct mts_init_core *c, const struct mts_sup *s)
{
	size_t j;

	for (j = 0; j < s->nafter; j++)
		if (c->s[s->after[j]].st != SUP_UP)
			return 0;
	return 1;
}

/* During shutdown an agent waits until nothing that depends on it runs. */
static int
dependants_gone(const struct mts_init_core *c, size_t i)
{
	size_t k, j;

	for (k = 0; k < c->n; k++)
		for (j = 0; j < c->s[k].nafter; j++)
			if (c->s[k].after[j] == i && has_process(c->s[k].st))
				return 0;
	return 1;
}

/* Applies what follows from the states: spawn the waiting agents whose
 * dependencies are up, signal the running ones that must stop. Repeats
 * until nothing changes (spawning never makes another agent ready, so
 * two passes suffice, but the loop keeps that an implementation detail). */
static void
settle(struct mts_init_core *c, mts_time_t now, struct mts_init_fxlist *fx)
{
	int changed = 1;
	size_t i;

	while (changed) {
		changed = 0;
		for (i = 0; i < c->n; i++) {
			struct mts_sup *s = &c->s[i];

			if (s->st == SUP_WAITING && s->want && !s->removed &&
			    !c->shutting_down && deps_up(c, s)) {
				s->st = SUP_STARTING;
				s->started = now;
				s->deadline = now + s->p.ready_timeout_ms;
				emit(fx, FX_SPAWN, i, 0, 0);
				changed = 1;
			} else if ((s->st == SUP_UP || s->st == SUP_STARTING) &&
			    (!s->want || s->restart_pending) &&
			    (!c->shutting_down || dependants_gone(c, i))) {
				s->st = SUP_STOPPING;
				s->deadline = now + s->p.grace_ms;
				emit(fx, FX_SIGNAL, i, SIGTERM, 0);
				changed = 1;
			}
		}
	}
}

int
mts_init_event(struct mts_init_core *c, size_t i, enum mts_sup_event ev,
    enum mts_sup_exit exit_class, mts_time_t now, struct mts_init_fxlist *fx)
{
	struct mts_sup *s;
	cell_fn fn;
	int rc;

	if (i >= c->n || ev >= SUP_NEVENTS)
		return -MTS_ERR_INVAL;
	s = &c->s[i];
	fn = table[s->st][ev];
	if (fn == NULL)
		return -MTS_ERR_STATE;
	rc = fn(c, s, exit_class, now, fx);
	settle(c, now, fx);
	return rc;
}

void
mts_init_tick(struct mts_init_core *c, mts_time_t now,
    struct mts_init_fxlist *fx)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->s[i].deadline <= now)
			(void)mts_init_event(c, i, SEV_TIMER, SUP_EXIT_CLEAN,
			    now, fx);
}

void
mts_init_shutdown(struct mts_init_core *c, mts_time_t now,
    struct mts_init_fxlist *fx)
{
	size_t i;

	c->shutting_down = 1;
	for (i = 0; i < c->n; i++) {
		c->s[i].want = 0;
		c->s[i].restart_pending = 0;
		if (!has_process(c->s[i].st)) {
			c->s[i].st =
			    c->s[i].st == SUP_FAILED ? SUP_FAILED : SUP_DOWN;
			c->s[i].deadline = MTS_TIME_NEVER;
		}
	}
	settle(c, now, fx);
}

mts_time_t
mts_init_next_deadline(const struct mts_init_core *c)
{
	mts_time_t t = MTS_TIME_NEVER;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->s[i].deadline < t)
			t = c->s[i].deadline;
	return t;
}

int
mts_init_all_down(const struct mts_init_core *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (has_process(c->s[i].st))
			return 0;
	return 1;
}

int
mts_init_all_up(const struct mts_init_core *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->s[i].want && !c->s[i].removed && c->s[i].st != SUP_UP)
			return 0;
	return 1;
}
