/* schedd_place.c: the Place dry-run — a service record (s/<name>) or a spec from the request, the nodes' d/ digests and nl/ labels read from the local statestore asynchronously, and place_core's answer "N of M placeable: why". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "log.h"
#include "mtserr.h"
#include "place_core.h"
#include "schedd.h"
#include "service.pb-c.h"
#include "xmalloc.h"

#define PLACE_MAX_COUNT 10000
#define PLACE_MAX_NODES 10000
#define PLACE_MAX_LABELS 100000
#define PLACE_PAGE 1000

enum place_stage { PS_SERVICE, PS_DIGESTS, PS_LABELS };

struct place_node {
	char id[MTS_NODE_HEX_LEN + 1];
	struct mts_res capacity, free;
	uint32_t tasks;
	int draining;
};

struct place_label {
	char node[MTS_NODE_HEX_LEN + 1];
	char *key, *value;
};

/* One dry-run in progress: the call waits for the statestore's pages. */
struct place_job {
	struct schedd *s;
	struct mts_ipc_call *call;
	enum place_stage stage;
	char service[MTS_SERVICE_MAX];
	uint32_t count;
	int count_given, global;
	struct mts_res res;
	struct mts_constraint *cons;
	size_t ncons;
	char **spread;
	size_t nspread;
	uint32_t max_per_node;
	int binpack;
	struct place_node *nodes;
	size_t nnodes, capnodes;
	struct place_label *labels;
	size_t nlabels, caplabels;
	char after[512];
};

static char *
dup_bytes(const uint8_t *p, size_t n)
{
	char *s = xmalloc(n + 1);

	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static void
job_free(struct place_job *j)
{
	size_t i;

	for (i = 0; i < j->nspread; i++)
		free(j->spread[i]);
	for (i = 0; i < j->nlabels; i++) {
		free(j->labels[i].key);
		free(j->labels[i].value);
	}
	free(j->spread);
	free(j->cons);
	free(j->nodes);
	free(j->labels);
	free(j);
}

static void fail(struct place_job *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
fail(struct place_job *j, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mts_ipc_reply_error(j->call, code, "%s", msg);
	job_free(j);
}

/* Constraints and spread labels as the request or the spec has them.
 * 0, or -1 with the call answered. */
static int
take_placement(struct place_job *j, char **cons, size_t ncons, char **spread,
    size_t nspread)
{
	char err[256];
	size_t i;

	j->cons = xcalloc(ncons + 1, sizeof(*j->cons));
	for (i = 0; i < ncons; i++) {
		if (mts_constraint_parse(cons[i], &j->cons[i], err,
		        sizeof(err)) < 0) {
			fail(j, MTS_ERR_INVAL, "%s", err);
			return -1;
		}
	}
	j->ncons = ncons;
	j->spread = xcalloc(nspread + 1, sizeof(*j->spread));
	for (i = 0; i < nspread; i++)
		j->spread[i] = xstrdup(spread[i]);
	j->nspread = nspread;
	return 0;
}

static void next_page(struct place_job *);

static void
answer(struct place_job *j)
{
	Mts__Schedd__Reply rep = MTS__SCHEDD__REPLY__INIT;
	Mts__Schedd__PlaceRep pr = MTS__SCHEDD__PLACE_REP__INIT;
	struct mts_place_node *pn = xcalloc(j->nnodes + 1, sizeof(*pn));
	struct mts_label *labels = xcalloc(j->nlabels + 1, sizeof(*labels));
	struct mts_place_req req;
	struct mts_place_why why;
	uint32_t *out, placed, i;
	ProtobufCBinaryData *ids;
	uint8_t(*raw)[MTS_NODE_ID_LEN];
	char explain[512];
	size_t k, nl = 0;

	if (j->global && !j->count_given)
		j->count = (uint32_t)j->nnodes; /* one per node */
	for (k = 0; k < j->nnodes; k++) {
		pn[k].a.id = j->nodes[k].id;
		pn[k].a.labels = labels + nl;
		for (i = 0; i < j->nlabels; i++)
			if (strcmp(j->labels[i].node, j->nodes[k].id) == 0) {
				labels[nl].key = j->labels[i].key;
				labels[nl].value = j->labels[i].value;
				nl++;
				pn[k].a.nlabels++;
			}
		pn[k].alive = 1;
		pn[k].active = !j->nodes[k].draining;
		pn[k].capacity = j->nodes[k].capacity;
		pn[k].free = j->nodes[k].free;
		pn[k].tasks = j->nodes[k].tasks;
	}
	memset(&req, 0, sizeof(req));
	req.res = j->res;
	req.constraints = j->cons;
	req.nconstraints = j->ncons;
	req.spread = (const char *const *)j->spread;
	req.nspread = j->nspread;
	req.max_per_node = j->max_per_node;
	req.binpack = j->binpack;
	req.count = j->count;
	out = xcalloc(j->count + 1, sizeof(*out));
	placed = mts_place(pn, j->nnodes, &req, out, &why);
	mts_place_explain(&req, placed, &why, explain, sizeof(explain));
	ids = xcalloc(placed + 1, sizeof(*ids));
	raw = xcalloc(placed + 1, sizeof(*raw));
	pr.nodes = xcalloc(placed + 1, sizeof(*pr.nodes));
	for (i = 0; i < placed; i++) {
		(void)mts_unhex(raw[i], MTS_NODE_ID_LEN, j->nodes[out[i]].id,
		    MTS_NODE_HEX_LEN);
		ids[i].data = raw[i];
		ids[i].len = MTS_NODE_ID_LEN;
		pr.nodes[i] = ids[i];
	}
	pr.n_nodes = placed;
	pr.placed = placed;
	pr.count = j->count;
	pr.explain = explain;
	rep.body_case = MTS__SCHEDD__REPLY__BODY_PLACE;
	rep.place = &pr;
	mts_ipc_reply(j->call, &rep.base);
	free(pr.nodes);
	free(raw);
	free(ids);
	free(out);
	free(labels);
	free(pn);
	job_free(j);
}

/* d/<node>: one digest. */
static void
add_node(struct place_job *j, const Mts__KeyRecord *kr)
{
	Mts__Schedd__Digest *d;
	struct place_node *n;

	if (kr->key.len != 2 + MTS_NODE_HEX_LEN || kr->record == NULL ||
	    kr->record->tombstone || j->nnodes >= PLACE_MAX_NODES)
		return;
	if ((d = mts__schedd__digest__unpack(NULL, kr->record->value.len,
	         kr->record->value.data)) == NULL)
		return;
	if (j->nnodes == j->capnodes) {
		j->capnodes = j->capnodes ? 2 * j->capnodes : 16;
		j->nodes =
		    xreallocarray(j->nodes, j->capnodes, sizeof(*j->nodes));
	}
	n = &j->nodes[j->nnodes++];
	memcpy(n->id, kr->key.data + 2, MTS_NODE_HEX_LEN);
	n->id[MTS_NODE_HEX_LEN] = '\0';
	n->capacity.cpu_millis = d->cpu_millis;
	n->capacity.memory = d->memory;
	n->free.cpu_millis = d->free_cpu_millis;
	n->free.memory = d->free_memory;
	n->tasks = d->tasks;
	n->draining = d->draining;
	mts__schedd__digest__free_unpacked(d, NULL);
}

/* nl/<node>/<key>: one operator label. */
static void
add_label(struct place_job *j, const Mts__KeyRecord *kr)
{
	size_t pre = 3 + MTS_NODE_HEX_LEN;
	struct place_label *l;

	if (kr->key.len <= pre + 1 || kr->key.data[pre] != '/' ||
	    kr->record == NULL || kr->record->tombstone ||
	    j->nlabels >= PLACE_MAX_LABELS)
		return;
	if (j->nlabels == j->caplabels) {
		j->caplabels = j->caplabels ? 2 * j->caplabels : 16;
		j->labels =
		    xreallocarray(j->labels, j->caplabels, sizeof(*j->labels));
	}
	l = &j->labels[j->nlabels++];
	memcpy(l->node, kr->key.data + 3, MTS_NODE_HEX_LEN);
	l->node[MTS_NODE_HEX_LEN] = '\0';
	l->key = dup_bytes(kr->key.data + pre + 1, kr->key.len - pre - 1);
	l->value = dup_bytes(kr->record->value.data, kr->record->value.len);
}

static void
take_service(struct place_job *j, const Mts__Statestore__GetRep *g)
{
	Mts__Service__ServiceRecord *r;
	const Mts__Service__ServiceSpec *sp;
	const Mts__Service__Resources *res;
	const Mts__Service__Placement *pl;

	if (!g->found || g->record == NULL || g->record->tombstone) {
		fail(j, MTS_ERR_NOTFOUND, "no service %s", j->service);
		return;
	}
	r = mts__service__service_record__unpack(NULL, g->record->value.len,
	    g->record->value.data);
	if (r == NULL || (sp = r->spec) == NULL) {
		if (r)
			mts__service__service_record__free_unpacked(r, NULL);
		fail(j, MTS_ERR_INVAL, "s/%s: not a service record",
		    j->service);
		return;
	}
	res = sp->reservations &&
	        (sp->reservations->cpu_millis || sp->reservations->memory)
	    ? sp->reservations
	    : sp->limits;
	if (res) {
		j->res.cpu_millis = res->cpu_millis;
		j->res.memory = res->memory;
	}
	j->global = sp->mode && strncmp(sp->mode, "global", 6) == 0;
	if (!j->count_given)
		j->count = sp->replicas;
	pl = sp->placement;
	if (take_placement(j, pl ? pl->constraints : NULL,
	        pl ? pl->n_constraints : 0, pl ? pl->spread : NULL,
	        pl ? pl->n_spread : 0) < 0) {
		mts__service__service_record__free_unpacked(r, NULL);
		return;
	}
	if (pl) {
		j->max_per_node = pl->max_replicas_per_node;
		j->binpack =
		    pl->strategy && strcmp(pl->strategy, "binpack") == 0;
	}
	mts__service__service_record__free_unpacked(r, NULL);
	if (j->count > PLACE_MAX_COUNT) {
		fail(j, MTS_ERR_INVAL, "%s: too many tasks for a dry-run",
		    j->service);
		return;
	}
	j->stage = PS_DIGESTS;
	j->after[0] = '\0';
	next_page(j);
}

static void
on_page(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct place_job *j = arg;
	const Mts__Statestore__Reply *rep = (const Mts__Statestore__Reply *)m;
	const Mts__Statestore__ScanRep *sc;
	size_t i;

	if (rc < 0) {
		fail(j, MTS_ERR_IO, "statestore: %s", err);
		return;
	}
	if (j->stage == PS_SERVICE) {
		if (rep->get == NULL)
			fail(j, MTS_ERR_IO, "statestore: %s", "no get reply");
		else
			take_service(j, rep->get);
		return;
	}
	if ((sc = rep->scan) == NULL) {
		fail(j, MTS_ERR_IO, "statestore: %s", "no scan reply");
		return;
	}
	for (i = 0; i < sc->n_items; i++) {
		const Mts__KeyRecord *kr = sc->items[i];

		if (j->stage == PS_DIGESTS)
			add_node(j, kr);
		else
			add_label(j, kr);
		if (kr->key.len < sizeof(j->after)) {
			memcpy(j->after, kr->key.data, kr->key.len);
			j->after[kr->key.len] = '\0';
		}
	}
	if (sc->more && sc->n_items > 0) {
		next_page(j);
	} else if (j->stage == PS_DIGESTS) {
		j->stage = PS_LABELS;
		j->after[0] = '\0';
		next_page(j);
	} else {
		answer(j);
	}
}

static void
next_page(struct place_job *j)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sc = MTS__STATESTORE__SCAN_REQ__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;
	char key[MTS_SERVICE_MAX + 8];

	if (j->stage == PS_SERVICE) {
		snprintf(key, sizeof(key), "s/%s", j->service);
		g.key.data = (uint8_t *)key;
		g.key.len = strlen(key);
		req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
		req.get = &g;
	} else {
		sc.prefix.data =
		    (uint8_t *)(j->stage == PS_DIGESTS ? "d/" : "nl/");
		sc.prefix.len = j->stage == PS_DIGESTS ? 2 : 3;
		sc.start_after.data = (uint8_t *)j->after;
		sc.start_after.len = strlen(j->after);
		sc.limit = PLACE_PAGE;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
		req.scan = &sc;
	}
	if (mts_ipc_async_call(j->s->store, &req.base,
	        &mts__statestore__reply__descriptor, 0, on_page, j) == NULL)
		fail(j, MTS_ERR_IO, "%s", "statestore client closing");
}

void
schedd_place(struct schedd *s, const Mts__Schedd__PlaceReq *p,
    struct mts_ipc_call *call)
{
	struct place_job *j = xcalloc(1, sizeof(*j));

	j->s = s;
	j->call = call;
	j->count = p->count;
	j->count_given = p->count != 0;
	if (p->count > PLACE_MAX_COUNT) {
		fail(j, MTS_ERR_INVAL, "at most %d tasks per dry-run",
		    PLACE_MAX_COUNT);
		return;
	}
	if (p->service != NULL && *p->service != '\0') {
		if (strlen(p->service) >= MTS_SERVICE_MAX) {
			fail(j, MTS_ERR_INVAL, "%s", "service name too long");
			return;
		}
		snprintf(j->service, sizeof(j->service), "%s", p->service);
		j->stage = PS_SERVICE;
		next_page(j);
		return;
	}
	if (!j->count_given)
		j->count = 1;
	j->res.cpu_millis = p->cpu_millis;
	j->res.memory = p->memory;
	j->max_per_node = p->max_per_node;
	j->binpack = p->binpack;
	if (take_placement(j, p->constraints, p->n_constraints, p->spread,
	        p->n_spread) < 0)
		return;
	j->stage = PS_DIGESTS;
	next_page(j);
}
