/* recon_hold.c: the node-local side's hold on the tasks this node ran before it went down (the shim holds them) — gossipd asked when its first anti-entropy round with a peer completed, and hold_core's verdict on each, from the view read after it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gossipd.pb-c.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "reconciled.h"
#include "xmalloc.h"

static void
stats_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct recond *r = arg;
	const Mts__Gossipd__Reply *rep = (const Mts__Gossipd__Reply *)m;

	if (rc == -MTS_ERR_CANCELED)
		return;
	r->hold_asking = 0;
	if (rc != 0 || rep->stats == NULL || rep->stats->ae_done == 0 ||
	    r->hold_synced)
		return;
	/* the view must be one read after the round: not the one being
	 * read now */
	r->hold_synced = r->refreshes + (r->refreshing ? 2 : 1);
	log_info("anti-entropy with a peer completed: the tasks held since "
	         "the node's return are decided after the next view");
	rc_kick(r);
}

void
rc_hold_poll(struct recond *r)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__StatsReq sr = MTS__GOSSIPD__STATS_REQ__INIT;

	if (r->hold_synced || r->hold_asking)
		return;
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_STATS;
	req.stats = &sr;
	if (mts_ipc_async_call(r->gossipd, &req.base,
	        &mts__gossipd__reply__descriptor, 2000, stats_done, r) != NULL)
		r->hold_asking = 1;
}

static void
clock_of(struct recond *r, struct mts_rc_hold_clock *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->now = mts_now();
	c->since = r->started;
	c->bound = r->cfg.return_hold_ms;
	for (i = 0; i < r->view.nmembers; i++)
		c->npeers += strcmp(r->view.members[i].hex, r->self) != 0;
	c->synced = r->hold_synced != 0 && r->refreshes >= r->hold_synced;
}

static void
task_of(const struct rc_trec *x, struct mts_rc_task *t)
{
	t->id = x->id;
	t->node = x->node;
	t->service = x->service;
	t->state = x->state;
	t->desired_running = x->desired_running;
	t->created = x->created;
	t->slot = x->slot;
}

enum mts_rc_hold
rc_hold_verdict(struct recond *r, const struct rc_local *l, char *why,
    size_t whylen)
{
	const struct rc_svc *s = rc_find_svc(&r->view, l->service);
	struct mts_rc_hold_clock c;
	struct mts_rc_task held, *tasks;
	enum mts_rc_hold v;
	size_t i, n = 0;

	clock_of(r, &c);
	if (!mts_rc_hold_converged(&c)) {
		rc_hold_poll(r);
		return RC_HOLD_WAIT;
	}
	memset(&held, 0, sizeof(held));
	held.id = l->id;
	held.node = r->self;
	held.service = l->service;
	held.state = RC_TASK_PENDING;
	held.desired_running = l->want_run;
	held.created = l->assigned_at;
	held.slot = l->slot;
	tasks = xcalloc(r->view.ntasks + 1, sizeof(*tasks));
	for (i = 0; i < r->view.ntasks; i++)
		if (strcmp(r->view.tasks[i].service, l->service) == 0)
			task_of(&r->view.tasks[i], &tasks[n++]);
	v = mts_rc_hold_decide(&c, &held, s ? &s->core : NULL, tasks, n, why,
	    whylen);
	free(tasks);
	return v;
}
