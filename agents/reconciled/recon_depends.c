/* recon_depends.c: depends_on at a first deploy in the owner loop — each service's dependencies and its tasks' counts read from the view for depends_core, whose verdict says which services may place tasks now. */
#include <stdlib.h>
#include <string.h>

#include "reconciled.h"
#include "xmalloc.h"

static const struct rc_member *
member(const struct rc_view *v, const char *hex)
{
	size_t i;

	for (i = 0; i < v->nmembers; i++)
		if (strcmp(v->members[i].hex, hex) == 0)
			return &v->members[i];
	return NULL;
}

/* The nodes a global service runs on: alive, active, every constraint. */
static uint32_t
global_nodes(const struct rc_view *v, const struct rc_svc *s)
{
	uint32_t n = 0;
	size_t i, k;

	for (i = 0; i < v->nmembers; i++) {
		const struct rc_member *m = &v->members[i];
		struct mts_node_attrs a = { .id = m->hex,
			.hostname = m->name,
			.labels = m->labels,
			.nlabels = m->nlabels };
		int ok = m->alive && !m->draining;

		for (k = 0; ok && k < s->core.nconstraints; k++)
			ok = mts_constraint_match(&s->core.constraints[k], &a);
		n += ok;
	}
	return n;
}

/* What the tasks of s (rows) do now: counts for depends_core. */
static void
tally(const struct rc_view *v, const struct rc_svc *s,
    const struct rc_trec *rows, size_t nrows, struct mts_dep_service *d)
{
	size_t i;

	for (i = 0; i < nrows; i++) {
		const struct rc_trec *t = &rows[i];
		const struct rc_member *m;

		if (strcmp(t->service, s->name) != 0)
			continue;
		d->started_before = 1;
		if ((m = member(v, t->node)) == NULL || !m->alive)
			continue; /* what a dead node's record says is stale */
		if (t->state == RC_TASK_RUNNING && t->desired_running) {
			d->running++;
			d->healthy += t->health == UP_HEALTH_NONE ||
			    t->health == UP_HEALTH_HEALTHY;
		}
		d->completed += t->state == RC_TASK_DONE;
		d->failed += t->state == RC_TASK_FAILED;
	}
	d->desired = s->core.mode == RC_GLOBAL || s->core.mode == RC_GLOBAL_JOB
	    ? global_nodes(v, s)
	    : s->core.replicas;
}

/* The dependencies of s's spec (conditions that do not parse count as
 * service_started, as the loader never writes one). */
static struct mts_dep *
deps_of(const struct rc_svc *s, size_t *n)
{
	const Mts__Service__ServiceSpec *sp = s->rec->spec;
	struct mts_dep *d;
	size_t i;

	*n = sp ? sp->n_depends : 0;
	d = xcalloc(*n + 1, sizeof(*d));
	for (i = 0; i < *n; i++) {
		d[i].service = sp->depends[i]->service;
		d[i].required = sp->depends[i]->required;
		if (mts_dep_cond_parse(sp->depends[i]->condition, &d[i].cond) !=
		    0)
			d[i].cond = DEP_STARTED;
	}
	return d;
}

struct mts_dep_verdict *
rc_depends(const struct rc_view *v, const struct rc_trec *rows, size_t nrows)
{
	struct mts_dep_service *ds = xcalloc(v->nsvcs + 1, sizeof(*ds));
	struct mts_dep_verdict *out = xcalloc(v->nsvcs + 1, sizeof(*out));
	size_t i;

	for (i = 0; i < v->nsvcs; i++) {
		ds[i].name = v->svcs[i].name;
		ds[i].deps = deps_of(&v->svcs[i], &ds[i].ndeps);
		tally(v, &v->svcs[i], rows, nrows, &ds[i]);
	}
	mts_dep_decide(ds, v->nsvcs, out);
	for (i = 0; i < v->nsvcs; i++)
		free((void *)ds[i].deps);
	free(ds);
	return out;
}
