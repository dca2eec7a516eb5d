/* place_core.c: placement — the eligibility filter with its reasons (constraints through common/constraint.c) and the greedy ranking (preference labels as Swarm spreads them, then tasks of the service per node, then load; or binpack). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_core.h"
#include "xmalloc.h"

/* --- filtering -------------------------------------------------------------------- */

struct cand {
	size_t node; /* index into the caller's nodes */
	struct mts_res free;
	uint32_t tasks, service_tasks;
	uint32_t load;   /* load() of the working copy, kept current */
	uint32_t rank;   /* order of its node id among the candidates */
	uint32_t *group; /* per preference level: its group id */
};

static int
fits(const struct cand *c, const struct mts_place_req *r)
{
	return c->free.cpu_millis >= r->res.cpu_millis &&
	    c->free.memory >= r->res.memory &&
	    (r->max_per_node == 0 || c->service_tasks < r->max_per_node);
}

/* Counts the first reason a node is left out; 1 when it is eligible. */
static int
eligible(const struct mts_place_node *n, const struct mts_place_req *r,
    struct mts_place_why *why, uint32_t *fail_by)
{
	size_t k;

	if (!n->alive)
		return why->down++, 0;
	if (!n->active)
		return why->inactive++, 0;
	for (k = 0; k < r->nconstraints; k++) {
		if (!mts_constraint_match(&r->constraints[k], &n->a)) {
			fail_by[k]++;
			return why->constraint++, 0;
		}
	}
	if (n->free.cpu_millis < r->res.cpu_millis)
		return why->cpu++, 0;
	if (n->free.memory < r->res.memory)
		return why->memory++, 0;
	if (r->max_per_node && n->service_tasks >= r->max_per_node)
		return why->max_per_node++, 0;
	return 1;
}

/* --- preference groups ----------------------------------------------------------------- */

/* The values of spread[0..k] of a node, joined by \x1f (a missing label is
 * ""): nodes with equal keys share a group at level k. */
static char *
group_key(const struct mts_place_node *n, size_t k,
    const struct mts_place_req *r)
{
	size_t l, len = 0, off = 0, vl;
	char *key;

	for (l = 0; l <= k; l++) {
		const char *v =
		    mts_label_get(n->a.labels, n->a.nlabels, r->spread[l]);

		len += (v ? strlen(v) : 0) + 1;
	}
	key = xmalloc(len + 1);
	for (l = 0; l <= k; l++) {
		const char *v =
		    mts_label_get(n->a.labels, n->a.nlabels, r->spread[l]);

		vl = v ? strlen(v) : 0;
		memcpy(key + off, v ? v : "", vl);
		off += vl;
		key[off++] = '\x1f';
	}
	key[off] = '\0';
	return key;
}

static uint64_t
str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Gives each candidate its group id at level k (ids are 0..groups-1), by
 * an open-addressing table over the group keys. */
static void
assign_groups(const struct mts_place_node *nodes, struct cand *cands, size_t ne,
    size_t k, const struct mts_place_req *r)
{
	size_t cap = 2 * ne + 1, i, h;
	char **keys = xcalloc(cap, sizeof(*keys));
	uint32_t *ids = xcalloc(cap, sizeof(*ids)), next = 0;

	for (i = 0; i < ne; i++) {
		char *key = group_key(&nodes[cands[i].node], k, r);

		for (h = str_hash(key) % cap; keys[h] && strcmp(keys[h], key);
		     h = (h + 1) % cap)
			;
		if (keys[h] == NULL) {
			keys[h] = key;
			ids[h] = next++;
		} else
			free(key);
		cands[i].group[k] = ids[h];
	}
	for (i = 0; i < cap; i++)
		free(keys[i]);
	free(keys);
	free(ids);
}

/* Per level, the service's tasks in each group (indexed by group id). */
static uint32_t **
group_counts(const struct mts_place_node *nodes, struct cand *cands, size_t ne,
    const struct mts_place_req *r)
{
	uint32_t **cnt = xcalloc(r->nspread ? r->nspread : 1, sizeof(*cnt));
	size_t i, k;

	for (i = 0; i < ne; i++)
		cands[i].group =
		    xcalloc(r->nspread ? r->nspread : 1, sizeof(uint32_t));
	for (k = 0; k < r->nspread; k++) {
		cnt[k] = xcalloc(ne ? ne : 1, sizeof(**cnt));
		assign_groups(nodes, cands, ne, k, r);
		for (i = 0; i < ne; i++)
			cnt[k][cands[i].group[k]] += cands[i].service_tasks;
	}
	return cnt;
}

/* --- ranking ---------------------------------------------------------------------------- */

/* Used share of the tighter resource, in per mille. */
static uint32_t
load(const struct mts_place_node *n, const struct cand *c)
{
	uint64_t cpu = 0, mem = 0;

	if (n->capacity.cpu_millis)
		cpu = (uint64_t)(n->capacity.cpu_millis - c->free.cpu_millis) *
		    1000 / n->capacity.cpu_millis;
	if (n->capacity.memory)
		mem = (n->capacity.memory - c->free.memory) /
		    (n->capacity.memory / 1000 ? n->capacity.memory / 1000 : 1);
	return (uint32_t)(cpu > mem ? cpu : mem);
}

/* < 0 when a is the better choice. */
static int
compare(const struct mts_place_node *nodes, const struct cand *a,
    const struct cand *b, uint32_t *const *cnt, const struct mts_place_req *r)
{
	uint32_t la, lb;
	size_t k;

	for (k = 0; k < r->nspread; k++) {
		uint32_t ga = cnt[k][a->group[k]], gb = cnt[k][b->group[k]];

		if (ga != gb)
			return ga < gb ? -1 : 1;
	}
	la = a->load;
	lb = b->load;
	if (r->binpack) {
		if (la != lb)
			return la > lb ? -1 : 1;
	} else {
		if (a->service_tasks != b->service_tasks)
			return a->service_tasks < b->service_tasks ? -1 : 1;
		if (la != lb)
			return la < lb ? -1 : 1;
		if (a->tasks != b->tasks)
			return a->tasks < b->tasks ? -1 : 1;
	}
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static void
take(const struct mts_place_node *nodes, struct cand *c, uint32_t **cnt,
    const struct mts_place_req *r)
{
	size_t k;

	c->free.cpu_millis -= r->res.cpu_millis;
	c->free.memory -= r->res.memory;
	c->load = load(&nodes[c->node], c);
	c->tasks++;
	c->service_tasks++;
	for (k = 0; k < r->nspread; k++)
		cnt[k][c->group[k]]++;
}

static int
by_id(const void *a, const void *b, void *arg)
{
	const struct mts_place_node *nodes = arg;
	const struct cand *const *x = a, *const *y = b;

	return strcmp(nodes[(*x)->node].a.id, nodes[(*y)->node].a.id);
}

/* Ties go to the lower node id: rank the candidates by id once, so the
 * ranking compares integers. */
static void
rank_by_id(const struct mts_place_node *nodes, struct cand *cands, size_t ne)
{
	struct cand **order = xcalloc(ne ? ne : 1, sizeof(*order));
	size_t i;

	for (i = 0; i < ne; i++)
		order[i] = &cands[i];
	qsort_r(order, ne, sizeof(*order), by_id, (void *)nodes);
	for (i = 0; i < ne; i++)
		order[i]->rank = (uint32_t)i;
	free(order);
}

uint32_t
mts_place(const struct mts_place_node *nodes, size_t n,
    const struct mts_place_req *r, uint32_t *out, struct mts_place_why *why)
{
	struct cand *cands = xcalloc(n ? n : 1, sizeof(*cands));
	uint32_t *fail_by = xcalloc(r->nconstraints + 1, sizeof(*fail_by));
	uint32_t **cnt, placed = 0;
	size_t i, ne = 0, k;

	memset(why, 0, sizeof(*why));
	why->nodes = (uint32_t)n;
	for (i = 0; i < n; i++) {
		if (!eligible(&nodes[i], r, why, fail_by))
			continue;
		cands[ne].node = i;
		cands[ne].free = nodes[i].free;
		cands[ne].tasks = nodes[i].tasks;
		cands[ne].service_tasks = nodes[i].service_tasks;
		cands[ne].load = load(&nodes[i], &cands[ne]);
		ne++;
	}
	why->eligible = (uint32_t)ne;
	why->first_constraint = -1;
	for (k = 0; k < r->nconstraints; k++)
		if (fail_by[k] &&
		    (why->first_constraint < 0 ||
		        fail_by[k] > fail_by[why->first_constraint]))
			why->first_constraint = (int)k;
	cnt = group_counts(nodes, cands, ne, r);
	rank_by_id(nodes, cands, ne);
	for (; placed < r->count; placed++) {
		struct cand *best = NULL;

		for (i = 0; i < ne; i++)
			if (fits(&cands[i], r) &&
			    (best == NULL ||
			        compare(nodes, &cands[i], best, cnt, r) < 0))
				best = &cands[i];
		if (best == NULL)
			break;
		take(nodes, best, cnt, r);
		out[placed] = (uint32_t)best->node;
	}
	for (i = 0; i < ne; i++)
		free(cands[i].group);
	for (k = 0; k < r->nspread; k++)
		free(cnt[k]);
	free(cnt);
	free(cands);
	free(fail_by);
	return placed;
}

/* " (1 down, 2 not active)" when nodes were left out before the other
 * filters, else "". */
static void
left_out(const struct mts_place_why *w, char *out, size_t outlen)
{
	if (w->down && w->inactive)
		snprintf(out, outlen, " (%u down, %u not active)", w->down,
		    w->inactive);
	else if (w->down || w->inactive)
		snprintf(out, outlen, " (%u %s)",
		    w->down ? w->down : w->inactive,
		    w->down ? "down" : "not active");
	else
		out[0] = '\0';
}

/* The reason names what every node that takes tasks (alive and active)
 * lacks; the nodes that do not are counted after it. */
void
mts_place_explain(const struct mts_place_req *r, uint32_t placed,
    const struct mts_place_why *w, char *out, size_t outlen)
{
	int off = snprintf(out, outlen, "%u of %u placeable", placed, r->count);
	uint32_t up = w->nodes - w->down - w->inactive;
	char tail[64];

	if (placed == r->count || off < 0 || (size_t)off >= outlen)
		return;
	out += off;
	outlen -= (size_t)off;
	left_out(w, tail, sizeof(tail));
	if (w->nodes == 0)
		snprintf(out, outlen, ": no nodes");
	else if (up == 0)
		snprintf(out, outlen, ": no node takes tasks%s", tail);
	else if (w->constraint == up && w->first_constraint >= 0) {
		const struct mts_constraint *c =
		    &r->constraints[w->first_constraint];

		snprintf(out, outlen, ": no node matches %s %s %s%s", c->attr,
		    c->op == MTS_CONSTRAINT_EQ ? "==" : "!=", c->value, tail);
	} else if (w->memory == up)
		snprintf(out, outlen, ": insufficient memory on all %u nodes%s",
		    up, tail);
	else if (w->cpu == up)
		snprintf(out, outlen, ": insufficient cpu on all %u nodes%s",
		    up, tail);
	else if (w->eligible == 0)
		snprintf(out, outlen,
		    ": of %u nodes, %u down, %u not active, "
		    "%u fail a constraint, %u lack cpu, %u lack memory, %u at "
		    "max_replicas_per_node",
		    w->nodes, w->down, w->inactive, w->constraint, w->cpu,
		    w->memory, w->max_per_node);
	else
		snprintf(out, outlen,
		    ": the %u eligible node%s ran out of "
		    "capacity or reached max_replicas_per_node",
		    w->eligible, w->eligible == 1 ? "" : "s");
}
