/* update_pb.c: s/, t/ and u/ records to the update core's structs and back (mode strings, health and state names, the failed tasks' ids). */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "update_pb.h"
#include "xmalloc.h"

static void
params_from_pb(const Mts__Service__Update *u, struct mts_up_params *p)
{
	mts_up_params_default(p);
	if (u == NULL)
		return;
	p->parallelism = u->parallelism;
	p->delay_ms = u->delay_ms;
	p->monitor_ms = u->monitor_ms;
	p->max_failure_ratio = u->max_failure_ratio;
	if (mts_up_order_parse(u->order, &p->order) != 0)
		p->order = UP_STOP_FIRST;
	if (mts_up_failure_parse(u->failure_action, &p->failure_action) != 0)
		p->failure_action = UP_FAIL_PAUSE;
}

int
mts_up_rebalance_version(const Mts__Service__ServiceRecord *r)
{
	return r->rebalance && r->rebalance->version == r->version &&
	    r->rebalance->n_tasks > 0;
}

int
mts_up_rebalance_moves(const Mts__Service__ServiceRecord *r, const char *task)
{
	size_t i;

	if (!mts_up_rebalance_version(r))
		return 0;
	for (i = 0; i < r->rebalance->n_tasks; i++)
		if (strcmp(r->rebalance->tasks[i], task) == 0)
			return 1;
	return 0;
}

void
mts_up_service_from_pb(const Mts__Service__ServiceRecord *r,
    struct mts_up_service *out)
{
	const Mts__Service__ServiceSpec *s = r->spec;

	memset(out, 0, sizeof(*out));
	out->version = r->version;
	out->replicas = s ? s->replicas : 0;
	out->rollback = r->rollback;
	out->has_previous = r->previous != NULL;
	params_from_pb(s ? s->update : NULL, &out->update);
	params_from_pb(s ? s->rollback : NULL, &out->rollback_cfg);
	if (s && s->canary) {
		out->canary = s->canary->count;
		out->auto_promote = s->canary->auto_promote;
		out->auto_revert = s->canary->auto_revert;
		out->healthy_deadline_ms = s->canary->healthy_deadline_ms;
	}
	if (mts_up_rebalance_version(r)) {
		/* one at a time, start-first: never a healthy task fewer */
		out->rebalance = 1;
		out->update.parallelism = 1;
		out->update.order = UP_START_FIRST;
		out->update.failure_action = UP_FAIL_PAUSE;
		out->canary = 0;
		out->auto_promote = out->auto_revert = 0;
	}
	if (r->control) {
		out->paused = r->control->paused;
		out->resumes = r->control->resumes;
		out->promoted = r->control->promoted;
	}
}

static const struct {
	const char *name;
	enum mts_up_task_state state;
} task_states[] = {
	{ "created", UP_TASK_PENDING },
	{ "pending", UP_TASK_PENDING },
	{ "running", UP_TASK_RUNNING },
	{ "restarting", UP_TASK_RUNNING },
	{ "stopping", UP_TASK_RUNNING }, /* still up: asked to stop */
	{ "exited", UP_TASK_EXITED },
	{ "failed", UP_TASK_FAILED },
	{ "stopped", UP_TASK_STOPPED },
};

static const struct {
	const char *name;
	enum mts_up_health health;
} healths[] = {
	{ "", UP_HEALTH_NONE },
	{ "starting", UP_HEALTH_STARTING },
	{ "healthy", UP_HEALTH_HEALTHY },
	{ "unhealthy", UP_HEALTH_UNHEALTHY },
};

void
mts_up_task_from_pb(const Mts__Shim__TaskStatus *t,
    const uint8_t digest[MTS_SPEC_DIGEST_LEN], struct mts_up_task *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->id = t->id;
	out->current = t->spec &&
	    t->spec->spec_digest.len == MTS_SPEC_DIGEST_LEN &&
	    memcmp(t->spec->spec_digest.data, digest, MTS_SPEC_DIGEST_LEN) == 0;
	out->state = UP_TASK_PENDING;
	for (i = 0; i < sizeof(task_states) / sizeof(task_states[0]); i++)
		if (strcmp(t->state, task_states[i].name) == 0)
			out->state = task_states[i].state;
	out->health = UP_HEALTH_STARTING; /* a name we do not know */
	for (i = 0; i < sizeof(healths) / sizeof(healths[0]); i++)
		if (strcmp(t->health, healths[i].name) == 0)
			out->health = healths[i].health;
	out->desired_running = strcmp(t->desired, "stopped") != 0;
	out->started_ms = t->started_at;
	out->version = t->spec ? t->spec->service_version : 0;
}

int
mts_up_status_decode(const uint8_t *buf, size_t len, struct mts_up_status *out)
{
	Mts__Service__UpdateStatus *u;
	size_t i;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if ((u = mts__service__update_status__unpack(NULL, len, buf)) == NULL)
		return -1;
	if (mts_up_phase_parse(u->state, &out->phase) != 0)
		goto out;
	out->version = u->version;
	out->batch = u->batch;
	out->batches = u->batches;
	out->done = u->done;
	out->target = u->target;
	out->started_ms = u->started_at_ms;
	out->healthy_since_ms = u->healthy_since_ms;
	out->next_batch_ms = u->next_batch_ms;
	out->ended_ms = u->ended_at_ms;
	out->paused_by_operator = u->paused_by_operator;
	out->promoted = u->promoted;
	out->resumes = u->resumes;
	out->failures = u->failures;
	for (i = 0; i < u->n_failed_tasks && i < MTS_UP_SEEN_MAX; i++)
		snprintf(out->seen[out->nseen++], MTS_UP_ID_MAX, "%s",
		    u->failed_tasks[i]);
	snprintf(out->message, sizeof(out->message), "%s", u->message);
	rc = 0;
out:
	if (rc != 0)
		memset(out, 0, sizeof(*out));
	mts__service__update_status__free_unpacked(u, NULL);
	return rc;
}

uint8_t *
mts_up_status_encode(const struct mts_up_status *st, const uint8_t *owner,
    uint64_t from_version, size_t *len)
{
	Mts__Service__UpdateStatus u = MTS__SERVICE__UPDATE_STATUS__INIT;
	char *ids[MTS_UP_SEEN_MAX];
	uint8_t *buf;
	size_t i;

	u.format = 1;
	u.version = st->version;
	u.state = (char *)mts_up_phase_name(st->phase);
	u.batch = st->batch;
	u.batches = st->batches;
	u.done = st->done;
	u.target = st->target;
	u.started_at_ms = st->started_ms;
	u.healthy_since_ms = st->healthy_since_ms;
	u.next_batch_ms = st->next_batch_ms;
	u.ended_at_ms = st->ended_ms;
	u.paused_by_operator = st->paused_by_operator;
	u.promoted = st->promoted;
	u.resumes = st->resumes;
	u.failures = st->failures;
	for (i = 0; i < st->nseen; i++)
		ids[i] = (char *)st->seen[i];
	u.n_failed_tasks = st->nseen;
	u.failed_tasks = ids;
	u.message = (char *)st->message;
	u.owner.data = (uint8_t *)owner;
	u.owner.len = owner ? MTS_NODE_ID_LEN : 0;
	u.from_version = from_version;
	*len = mts__service__update_status__get_packed_size(&u);
	buf = xmalloc(*len ? *len : 1);
	mts__service__update_status__pack(&u, buf);
	return buf;
}
