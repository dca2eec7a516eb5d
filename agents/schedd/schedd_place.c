/* schedd_place.c: the Place dry-run — a service record (s/<name>) or a spec from the request, the membership from gossipd, the nodes' d/ digests, n/ records and nl/ labels read from the local statestore asynchronously, and place_core's answer "N of M placeable: why". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "gossipd.pb-c.h"
#include "log.h"
#include "mtserr.h"
#include "place_core.h"
#include "schedd.h"
#include "service.pb-c.h"
#include "shim.pb-c.h"
#include "xmalloc.h"

#define PLACE_MAX_COUNT 10000
#define PLACE_MAX_NODES 10000
#define PLACE_MAX_LABELS 100000
#define PLACE_PAGE 1000

enum place_stage {
	PS_SERVICE,
	PS_MEMBERS,
	PS_DIGESTS,
	PS_NODES,
	PS_LABELS,
	PS_TASKS, /* t/: what the service's running tasks hold */
};

struct place_node {
	char id[MTS_NODE_HEX_LEN + 1];
	struct mts_res capacity, free;
	uint32_t tasks;
	int draining; /* the digest's: takes no new tasks */
	int alive;    /* gossipd: alive or suspect */
	/* from n/<node>, when there is one */
	char hostname[256], os[65], arch[65];
	enum mts_availability avail;
	int have_info;
};

/* A member as gossipd sees it. */
struct place_member {
	char id[MTS_NODE_HEX_LEN + 1];
	int alive;
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
	char replaces[MTS_SERVICE_MAX]; /* its tasks' shares count as free */
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
	struct place_member *members;
	size_t nmembers;
	/* an owner's view: candidates, refusers, tasks of the service */
	uint8_t (*alive)[MTS_NODE_ID_LEN], (*exclude)[MTS_NODE_ID_LEN];
	size_t nalive, nexclude;
	struct place_count {
		uint8_t node[MTS_NODE_ID_LEN];
		uint32_t tasks;
	} * counts;
	size_t ncounts;
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
	free(j->members);
	free(j->alive);
	free(j->exclude);
	free(j->counts);
	free(j);
}

static int
in_ids(uint8_t (*ids)[MTS_NODE_ID_LEN], size_t n, const uint8_t *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (memcmp(ids[i], id, MTS_NODE_ID_LEN) == 0)
			return 1;
	return 0;
}

/* The owner's view of node hex: not a candidate unless the owner sees it
 * alive and does not back it off; how many tasks of the service it runs. */
static void
owner_view(const struct place_job *j, const char *hex,
    struct mts_place_node *pn)
{
	uint8_t id[MTS_NODE_ID_LEN];
	size_t i;

	if (mts_unhex(id, sizeof(id), hex, MTS_NODE_HEX_LEN) < 0)
		return;
	if ((j->nalive > 0 && !in_ids(j->alive, j->nalive, id)) ||
	    in_ids(j->exclude, j->nexclude, id))
		pn->alive = 0;
	for (i = 0; i < j->ncounts; i++)
		if (memcmp(j->counts[i].node, id, MTS_NODE_ID_LEN) == 0)
			pn->service_tasks = j->counts[i].tasks;
}

/* Copies the 16-byte ids of a repeated bytes field (others ignored). */
static size_t
take_ids(const ProtobufCBinaryData *v, size_t n,
    uint8_t (**out)[MTS_NODE_ID_LEN])
{
	size_t i, k = 0;

	*out = xcalloc(n + 1, sizeof(**out));
	for (i = 0; i < n && i < PLACE_MAX_NODES; i++)
		if (v[i].len == MTS_NODE_ID_LEN)
			memcpy((*out)[k++], v[i].data, MTS_NODE_ID_LEN);
	return k;
}

static void
take_view(struct place_job *j, const Mts__Schedd__PlaceReq *p)
{
	size_t i;

	j->nalive = take_ids(p->alive, p->n_alive, &j->alive);
	j->nexclude = take_ids(p->exclude, p->n_exclude, &j->exclude);
	j->counts = xcalloc(p->n_service_tasks + 1, sizeof(*j->counts));
	for (i = 0; i < p->n_service_tasks && i < PLACE_MAX_NODES; i++) {
		const Mts__Schedd__NodeCount *c = p->service_tasks[i];

		if (c->node.len != MTS_NODE_ID_LEN)
			continue;
		memcpy(j->counts[j->ncounts].node, c->node.data,
		    MTS_NODE_ID_LEN);
		j->counts[j->ncounts++].tasks = c->tasks;
	}
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
static void ask_members(struct place_job *);

/* A global service: one task on each node it may run on (alive, active,
 * every constraint met), at most one per node. */
static void
global_count(struct place_job *j, const struct mts_place_node *pn)
{
	size_t k, c;

	j->count = 0;
	j->max_per_node = 1;
	for (k = 0; k < j->nnodes; k++) {
		if (!pn[k].alive || !pn[k].active)
			continue;
		for (c = 0; c < j->ncons; c++)
			if (!mts_constraint_match(&j->cons[c], &pn[k].a))
				break;
		j->count += c == j->ncons;
	}
}

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
		pn[k].a.hostname = j->nodes[k].hostname;
		pn[k].a.os = j->nodes[k].os;
		pn[k].a.arch = j->nodes[k].arch;
		pn[k].alive = j->nodes[k].alive;
		owner_view(j, j->nodes[k].id, &pn[k]);
		pn[k].active = j->nodes[k].have_info
		    ? j->nodes[k].avail == MTS_AVAIL_ACTIVE
		    : !j->nodes[k].draining;
		pn[k].capacity = j->nodes[k].capacity;
		pn[k].free = j->nodes[k].free;
		pn[k].tasks = j->nodes[k].tasks;
	}
	if (j->global && !j->count_given)
		global_count(j, pn);
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

/* The member with that id (32 hex digits at p), NULL if none. */
static const struct place_member *
find_member(const struct place_job *j, const char *p)
{
	size_t i;

	for (i = 0; i < j->nmembers; i++)
		if (memcmp(j->members[i].id, p, MTS_NODE_HEX_LEN) == 0)
			return &j->members[i];
	return NULL;
}

static struct place_node *
find_node(struct place_job *j, const char *id)
{
	size_t i;

	for (i = 0; i < j->nnodes; i++)
		if (strcmp(j->nodes[i].id, id) == 0)
			return &j->nodes[i];
	return NULL;
}

/* Every member gossipd knows but the removed and those that left; dead
 * ones count as down. */
static void
take_members(struct place_job *j, const Mts__Gossipd__MembersRep *mr)
{
	size_t i;

	j->members = xcalloc(mr->n_nodes + 1, sizeof(*j->members));
	for (i = 0; i < mr->n_nodes && j->nmembers < PLACE_MAX_NODES; i++) {
		const Mts__Gossipd__NodeInfo *n = mr->nodes[i];
		struct place_member *m = &j->members[j->nmembers];

		if (n->node.len != MTS_NODE_ID_LEN || n->removed ||
		    n->state == NULL || strcmp(n->state, "left") == 0 ||
		    strcmp(n->state, "removed") == 0)
			continue;
		mts_hex(m->id, n->node.data, MTS_NODE_ID_LEN);
		m->alive = strcmp(n->state, "alive") == 0 ||
		    strcmp(n->state, "suspect") == 0;
		j->nmembers++;
	}
}

/* n/<node>: hostname, platform, availability of a node with a digest. */
static void
add_info(struct place_job *j, const Mts__KeyRecord *kr)
{
	char hex[MTS_NODE_HEX_LEN + 1];
	struct mts_nodeinfo ni;
	struct place_node *n;

	if (kr->record == NULL || kr->record->tombstone ||
	    mts_nodeinfo_key_node(kr->key.data, kr->key.len, hex) < 0 ||
	    (n = find_node(j, hex)) == NULL)
		return;
	if (mts_nodeinfo_decode(kr->record->value.data, kr->record->value.len,
	        &ni) < 0) {
		log_warnx("n/%s: not a NodeInfo record", hex);
		return;
	}
	snprintf(n->hostname, sizeof(n->hostname), "%s", ni.hostname);
	snprintf(n->os, sizeof(n->os), "%s", ni.os);
	snprintf(n->arch, sizeof(n->arch), "%s", ni.arch);
	n->avail = ni.availability;
	n->have_info = 1;
}

/* d/<node>: one digest. */
static void
add_node(struct place_job *j, const Mts__KeyRecord *kr)
{
	const struct place_member *m;
	Mts__Schedd__Digest *d;
	struct place_node *n;

	if (kr->key.len != 2 + MTS_NODE_HEX_LEN || kr->record == NULL ||
	    kr->record->tombstone || j->nnodes >= PLACE_MAX_NODES)
		return;
	if ((m = find_member(j, (const char *)kr->key.data + 2)) == NULL)
		return; /* removed, left, or never a member */
	if ((d = mts__schedd__digest__unpack(NULL, kr->record->value.len,
	         kr->record->value.data)) == NULL)
		return;
	if (j->nnodes == j->capnodes) {
		j->capnodes = j->capnodes ? 2 * j->capnodes : 16;
		j->nodes =
		    xreallocarray(j->nodes, j->capnodes, sizeof(*j->nodes));
	}
	n = &j->nodes[j->nnodes++];
	memset(n, 0, sizeof(*n));
	memcpy(n->id, m->id, sizeof(n->id));
	n->alive = m->alive;
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

/* t/<node>/<task>: a running task of the service being replaced gives
 * its node back what it holds. */
static void
add_task(struct place_job *j, const Mts__KeyRecord *kr)
{
	char node[MTS_NODE_HEX_LEN + 1];
	Mts__Shim__TaskStatus *t;
	struct place_node *n;

	if (kr->key.len <= 2 + MTS_NODE_HEX_LEN + 1 ||
	    kr->key.data[2 + MTS_NODE_HEX_LEN] != '/' || kr->record == NULL ||
	    kr->record->tombstone)
		return;
	memcpy(node, kr->key.data + 2, MTS_NODE_HEX_LEN);
	node[MTS_NODE_HEX_LEN] = '\0';
	if ((n = find_node(j, node)) == NULL)
		return;
	if ((t = mts__shim__task_status__unpack(NULL, kr->record->value.len,
	         kr->record->value.data)) == NULL)
		return;
	if (t->spec != NULL && t->spec->service != NULL &&
	    strcmp(t->spec->service, j->replaces) == 0 &&
	    schedd_state_holds(t->state)) {
		uint64_t cpu =
		    (uint64_t)n->free.cpu_millis + t->spec->cpu_millis;
		uint64_t mem = n->free.memory + t->spec->memory_limit;

		n->free.cpu_millis = cpu < n->capacity.cpu_millis
		    ? (uint32_t)cpu
		    : n->capacity.cpu_millis;
		n->free.memory =
		    mem >= n->free.memory && mem < n->capacity.memory
		    ? mem
		    : n->capacity.memory;
		if (n->tasks > 0)
			n->tasks--;
	}
	mts__shim__task_status__free_unpacked(t, NULL);
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
	snprintf(j->replaces, sizeof(j->replaces), "%s", j->service);
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
	ask_members(j);
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
		else if (j->stage == PS_NODES)
			add_info(j, kr);
		else if (j->stage == PS_LABELS)
			add_label(j, kr);
		else
			add_task(j, kr);
		if (kr->key.len < sizeof(j->after)) {
			memcpy(j->after, kr->key.data, kr->key.len);
			j->after[kr->key.len] = '\0';
		}
	}
	if (sc->more && sc->n_items > 0) {
		next_page(j);
	} else if (j->stage == PS_DIGESTS || j->stage == PS_NODES ||
	    (j->stage == PS_LABELS && j->replaces[0] != '\0')) {
		j->stage = j->stage + 1;
		j->after[0] = '\0';
		next_page(j);
	} else {
		answer(j);
	}
}

static void
on_members(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct place_job *j = arg;
	const Mts__Gossipd__Reply *rep = (const Mts__Gossipd__Reply *)m;

	if (rc < 0 || rep->members == NULL) {
		fail(j, MTS_ERR_IO, "gossipd (the membership): %s",
		    rc < 0 ? err : "no members in the reply");
		return;
	}
	take_members(j, rep->members);
	j->stage = PS_DIGESTS;
	j->after[0] = '\0';
	next_page(j);
}

/* Only nodes gossipd sees alive are placed on. */
static void
ask_members(struct place_job *j)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__MembersReq mr = MTS__GOSSIPD__MEMBERS_REQ__INIT;

	j->stage = PS_MEMBERS;
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_MEMBERS;
	req.members = &mr;
	if (j->s->gossip == NULL ||
	    mts_ipc_async_call(j->s->gossip, &req.base,
	        &mts__gossipd__reply__descriptor, 0, on_members, j) == NULL)
		fail(j, MTS_ERR_IO, "%s", "gossipd client closing");
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
		static const char *const prefixes[] = {
			[PS_DIGESTS] = "d/",
			[PS_NODES] = MTS_NODEINFO_PREFIX,
			[PS_LABELS] = "nl/",
			[PS_TASKS] = "t/",
		};
		const char *prefix = prefixes[j->stage];

		sc.prefix.data = (uint8_t *)prefix;
		sc.prefix.len = strlen(prefix);
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
	take_view(j, p);
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
	j->global = p->global;
	if (p->replaces != NULL && strlen(p->replaces) >= MTS_SERVICE_MAX) {
		fail(j, MTS_ERR_INVAL, "%s", "service name too long");
		return;
	}
	snprintf(j->replaces, sizeof(j->replaces), "%s",
	    p->replaces ? p->replaces : "");
	if (take_placement(j, p->constraints, p->n_constraints, p->spread,
	        p->n_spread) < 0)
		return;
	ask_members(j);
}
