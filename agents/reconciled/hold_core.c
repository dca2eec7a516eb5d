/* hold_core.c: the verdict on a task held since its node came back — wait for a converged view, then start it again or stop it (superseded, scaled away, its service or its intent gone) — with no clock or I/O. */
#include <stdio.h>
#include <string.h>

#include "hold_core.h"

int
mts_rc_hold_converged(const struct mts_rc_hold_clock *c)
{
	return c->npeers == 0 || c->synced || c->now - c->since >= c->bound;
}

static int
live(const struct mts_rc_task *t)
{
	return t->desired_running &&
	    (t->state == RC_TASK_PENDING || t->state == RC_TASK_RUNNING);
}

/* The newer live task holding held's slot (a replicated task's
 * replacement, placed while this node was away; for a global service,
 * one on this node), NULL when none. */
static const struct mts_rc_task *
successor(const struct mts_rc_task *held, const struct mts_rc_task *tasks,
    size_t n)
{
	const struct mts_rc_task *t;
	size_t i;

	for (i = 0; i < n; i++) {
		t = &tasks[i];
		if (strcmp(t->id, held->id) == 0 ||
		    strcmp(t->service, held->service) != 0 || !live(t) ||
		    t->slot != held->slot || mts_rc_newer(t, held) <= 0)
			continue;
		if (held->slot != 0 || strcmp(t->node, held->node) == 0)
			return t;
	}
	return NULL;
}

enum mts_rc_hold
mts_rc_hold_decide(const struct mts_rc_hold_clock *c,
    const struct mts_rc_task *held, const struct mts_rc_service *svc,
    const struct mts_rc_task *tasks, size_t ntasks, char *why, size_t whylen)
{
	const struct mts_rc_task *s;

	if (!mts_rc_hold_converged(c))
		return RC_HOLD_WAIT;
	if (!held->desired_running) {
		snprintf(why, whylen, "stopped while its node was down");
		return RC_HOLD_STOP;
	}
	if (svc == NULL) {
		snprintf(why, whylen, "its service was removed");
		return RC_HOLD_STOP;
	}
	if ((s = successor(held, tasks, ntasks)) != NULL) {
		snprintf(why, whylen,
		    "superseded: slot %u runs a newer task %s", held->slot,
		    s->id);
		return RC_HOLD_STOP;
	}
	if (svc->mode == RC_REPLICATED && held->slot > svc->replicas) {
		snprintf(why, whylen, "scaled down: slot %u of %u", held->slot,
		    svc->replicas);
		return RC_HOLD_STOP;
	}
	return RC_HOLD_START;
}
