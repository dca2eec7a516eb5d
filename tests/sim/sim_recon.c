/* sim_recon.c: the reconciliation scenarios' pieces — each node's reconciler (its view: SWIM's members and the s/, n/, t/, u/ and d/ records of its own replica, given to recon_core and, for a service being updated, to update_core; places through place_core, prepares and commits on the chosen nodes' ledgers, stops extras), the deployer, updates and drains, and the count invariants and figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/reconciled/recon_core.h"
#include "agents/reconciled/update_pb.h"
#include "rendezvous.h"
#include "tests/sim/sim.h"
#include "xmalloc.h"

#define RECON_MS 1000 /* a reconciliation pass every second */
#define INFL_TTL 6000 /* a prepare unanswered this long: its lease expired */
#define SLOT_CPU 250
#define SLOT_MEM (256ull << 20)
#define DRAIN "drain"
#define UPDATE_PARALLELISM 10
#define UPDATE_MONITOR_MS 1000

/* The decoding of an s/ or t/ record, shared by every node holding it. */
struct parsed {
	char node[MTS_NODE_HEX_LEN + 1];
	char id[MTS_TASK_ID_MAX];
	char svc[32];
	int state, desired;
	int nidx; /* node_of_hex(node) */
	unsigned long long created, version;
	uint32_t replicas;
};

static int
has_prefix(const struct irec *r, const char *p)
{
	size_t l = strlen(p);

	return r->klen >= l && memcmp(r->key, p, l) == 0;
}

static int node_of_hex(const char *hex);

/* "svc state desired created version" for t/<node>/<task>, "replicas
 * version" for s/. */
static const struct parsed *
parse(struct irec *r)
{
	struct parsed *p;
	char buf[128];
	const char *k = (const char *)r->key;
	void *cur = __atomic_load_n(&r->parsed, __ATOMIC_ACQUIRE);

	if (cur || r->rec.tombstone)
		return cur;
	if (r->rec.vlen >= sizeof(buf) || r->klen >= sizeof(p->id) + 40)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	memcpy(buf, r->rec.value, r->rec.vlen);
	buf[r->rec.vlen] = '\0';
	if (has_prefix(r, "s/") && r->klen - 2 < sizeof(p->svc) &&
	    sscanf(buf, "%u %llu", &p->replicas, &p->version) == 2) {
		memcpy(p->svc, k + 2, r->klen - 2);
	} else if (has_prefix(r, "t/") && r->klen > 3 + MTS_NODE_HEX_LEN &&
	    r->klen - 3 - MTS_NODE_HEX_LEN < sizeof(p->id) &&
	    sscanf(buf, "%31s %d %d %llu %llu", p->svc, &p->state, &p->desired,
	        &p->created, &p->version) == 5) {
		memcpy(p->node, k + 2, MTS_NODE_HEX_LEN);
		memcpy(p->id, k + 3 + MTS_NODE_HEX_LEN,
		    r->klen - 3 - MTS_NODE_HEX_LEN);
		p->nidx = node_of_hex(p->node);
	} else {
		free(p);
		return NULL;
	}
	/* another worker may decode the same record: the first one kept */
	if (!__atomic_compare_exchange_n(&r->parsed, &cur, p, 0,
	        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		free(p);
		return cur;
	}
	return p;
}

/* The first record at or after prefix in n's sorted store. */
static size_t
lower_bound(const struct sim_node *n, const char *prefix)
{
	size_t lo = 0, hi = n->nents, mid, l = strlen(prefix);

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (mts_mst_key_cmp(n->ents[mid]->key, n->ents[mid]->klen,
		        (const uint8_t *)prefix, l) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
node_of_hex(const char *hex)
{
	char h[9];

	memcpy(h, hex, 8);
	h[8] = '\0';
	return (int)strtoul(h, NULL, 16);
}

static int
svc_of_name(const char *name)
{
	return strncmp(name, "svc", 3) == 0 ? atoi(name + 3) : -1;
}

/* --- the view a node reconciles with ------------------------------------- */

struct view {
	struct mts_rc_view v;
	struct mts_rc_member *mem;
	struct mts_rc_service *svc;
	struct mts_rc_task *task;
	int *tnode;     /* node index of each task */
	uint64_t *sver; /* version of each service */
	uint64_t *tver; /* version of each task */
	size_t capmem, capsvc, captask;
};

/* One node reconciles at a time on each worker thread. */
static _Thread_local struct view scratch;

void
sim_recon_thread_free(void)
{
	free(scratch.mem);
	free(scratch.svc);
	free(scratch.task);
	free(scratch.tnode);
	free(scratch.sver);
	free(scratch.tver);
	memset(&scratch, 0, sizeof(scratch));
}

static int
draining_in(const struct sim_node *n, const struct sim_node *m)
{
	char key[2 + MTS_NODE_HEX_LEN + 1];
	const struct irec *r;

	snprintf(key, sizeof(key), "n/%s", m->hex);
	r = sim_store_get(n, (const uint8_t *)key, strlen(key));
	return r && r->rec.vlen == strlen(DRAIN) &&
	    memcmp(r->rec.value, DRAIN, strlen(DRAIN)) == 0;
}

static void
view_members(struct sim *s, struct sim_node *n, struct view *w)
{
	size_t i, k = mts_swim_count(n->swim);

	if (k > w->capmem) {
		w->capmem = k;
		w->mem = xreallocarray(w->mem, k, sizeof(*w->mem));
	}
	for (i = 0; i < k; i++) {
		const struct mts_swim_member *m =
		    mts_swim_member_at(n->swim, i);
		struct mts_rc_member *rm = &w->mem[i];
		int idx = (int)mts_get_u32be(m->u.id);

		memset(rm, 0, sizeof(*rm));
		memcpy(rm->id, m->u.id, MTS_NODE_ID_LEN);
		rm->attrs.id = s->node[idx].hex;
		rm->alive = m->u.state == MTS_SWIM_ALIVE ||
		    m->u.state == MTS_SWIM_SUSPECT;
		rm->draining = draining_in(n, &s->node[idx]);
	}
	w->v.members = w->mem;
	w->v.nmembers = k;
}

static void
view_records(struct sim_node *n, struct view *w)
{
	size_t i, end;
	const struct parsed *p;

	w->v.nservices = w->v.ntasks = 0;
	/* a prefix's records lie between it and the next (after '/', '0') */
	end = lower_bound(n, "s0");
	for (i = lower_bound(n, "s/"); i < end; i++) {
		if ((p = parse(n->ents[i])) == NULL)
			continue;
		if (w->v.nservices == w->capsvc) {
			w->capsvc = w->capsvc ? 2 * w->capsvc : 64;
			w->svc =
			    xreallocarray(w->svc, w->capsvc, sizeof(*w->svc));
			w->sver =
			    xreallocarray(w->sver, w->capsvc, sizeof(*w->sver));
		}
		w->sver[w->v.nservices] = p->version;
		memset(&w->svc[w->v.nservices], 0, sizeof(*w->svc));
		w->svc[w->v.nservices].name = p->svc;
		w->svc[w->v.nservices].mode = RC_REPLICATED;
		w->svc[w->v.nservices++].replicas = p->replicas;
	}
	end = lower_bound(n, "t0");
	for (i = lower_bound(n, "t/"); i < end; i++) {
		struct mts_rc_task *t;

		if ((p = parse(n->ents[i])) == NULL)
			continue;
		if (w->v.ntasks == w->captask) {
			w->captask = w->captask ? 2 * w->captask : 1024;
			w->task = xreallocarray(w->task, w->captask,
			    sizeof(*w->task));
			w->tnode = xreallocarray(w->tnode, w->captask,
			    sizeof(*w->tnode));
			w->tver = xreallocarray(w->tver, w->captask,
			    sizeof(*w->tver));
		}
		w->tver[w->v.ntasks] = p->version;
		w->tnode[w->v.ntasks] = p->nidx;
		t = &w->task[w->v.ntasks++];
		memset(t, 0, sizeof(*t)); /* slot 0: the simulator's tasks
					     have no slots */
		t->id = p->id;
		t->node = p->node;
		t->service = p->svc;
		t->state = (enum mts_rc_task_state)p->state;
		t->desired_running = p->desired;
		t->created = p->created;
	}
	w->v.services = w->svc;
	w->v.tasks = w->task;
}

/* --- an owner's placements ----------------------------------------------- */

static uint32_t
inflight(const struct sim_node *n, int svc)
{
	uint32_t c = 0;
	size_t i;

	for (i = 0; i < n->ninfl; i++)
		c += n->infl[i].svc == svc;
	return c;
}

static void
infl_add(struct sim *s, struct sim_node *n, int svc, int to, uint64_t seq)
{
	if (n->ninfl == n->capinfl) {
		n->capinfl = n->capinfl ? 2 * n->capinfl : 64;
		n->infl = xreallocarray(n->infl, n->capinfl, sizeof(*n->infl));
	}
	n->infl[n->ninfl++] = (struct sim_infl){ svc, to, seq, s->now };
}

static void
infl_expire(struct sim *s, struct sim_node *n)
{
	size_t i, k = 0;

	for (i = 0; i < n->ninfl; i++)
		if (s->now - n->infl[i].at < INFL_TTL)
			n->infl[k++] = n->infl[i];
	n->ninfl = k;
}

/* The digest of node m as n's replica holds it, into pn; 0 if none. */
static int
digest_of(const struct sim_node *n, const struct sim_node *m,
    struct mts_place_node *pn)
{
	char key[2 + MTS_NODE_HEX_LEN + 1], buf[96];
	const struct irec *r;
	unsigned cc, fc, t;
	unsigned long long cm, fm;

	snprintf(key, sizeof(key), "d/%s", m->hex);
	r = sim_store_get(n, (const uint8_t *)key, strlen(key));
	if (r == NULL || r->rec.vlen >= sizeof(buf))
		return 0;
	memcpy(buf, r->rec.value, r->rec.vlen);
	buf[r->rec.vlen] = '\0';
	if (sscanf(buf, "%u %llu %u %llu %u", &cc, &cm, &fc, &fm, &t) != 5)
		return 0;
	memset(pn, 0, sizeof(*pn));
	pn->a.id = m->hex;
	pn->capacity.cpu_millis = cc;
	pn->capacity.memory = cm;
	pn->free.cpu_millis = fc;
	pn->free.memory = fm;
	pn->tasks = t;
	return 1;
}

static void
send_req(struct sim *s, struct sim_node *o, int to, enum sim_kind kind, int svc,
    uint64_t seq, uint64_t version)
{
	struct sim_msg *m = sim_msg_new(kind, o->idx, to);

	m->target = svc;
	m->seq = seq;
	m->version = version;
	m->bytes = 120;
	sim_node_send(s, o, m);
}

/* Node acted as svc's owner: the lowest such node of the second is its
 * actor, the highest other its actor2 (an order the threads do not
 * change). Logged during the window. */
void
sim_apply_alog(struct sim *s, const struct sim_log *lg)
{
	const struct sim_alog *l = &lg->u.act;
	struct sim_rsvc *r = &s->rsvcs[l->svc];

	if (r->actor < 0 || r->actor == l->node) {
		r->actor = l->node;
		return;
	}
	if (l->node < r->actor) {
		if (r->actor > r->actor2)
			r->actor2 = r->actor;
		r->actor = l->node;
	} else if (l->node > r->actor2)
		r->actor2 = l->node;
}

static void
act(struct sim *s, int svc, int node)
{
	struct sim_log l = { SIM_LOG_ACT, { .act = { svc, node } } };

	if (svc < 0 || (size_t)svc >= s->nrsvcs)
		return;
	sim_defer(s, &l);
}

/* RC_PLACE or UP_START: count more tasks of the view's service si (at
 * its version), less those in flight, on the members the view holds alive and active, by place_core
 * on their d/ digests; a prepare to each chosen node. */
static void
place(struct sim *s, struct sim_node *o, const struct view *w, size_t si,
    uint32_t count)
{
	struct mts_place_node *pn = xcalloc(w->v.nmembers + 1, sizeof(*pn));
	int *idx = xcalloc(w->v.nmembers + 1, sizeof(*idx));
	uint32_t *here = xcalloc((size_t)s->n, sizeof(*here));
	int g = svc_of_name(w->v.services[si].name);
	uint32_t *out, k = 0, j, placed, busy = inflight(o, g);
	struct mts_place_req req;
	struct mts_place_why why;
	size_t i, t;

	if (count <= busy)
		goto out;
	count -= busy;
	for (t = 0; t < w->v.ntasks; t++)
		here[w->tnode[t]] += w->task[t].desired_running &&
		    w->task[t].state <= RC_TASK_RUNNING &&
		    strcmp(w->task[t].service, w->v.services[si].name) == 0;
	for (i = 0; i < w->v.nmembers; i++) {
		const struct mts_rc_member *m = &w->v.members[i];
		int ni = (int)mts_get_u32be(m->id);

		if (!m->alive || m->draining ||
		    !digest_of(o, &s->node[ni], &pn[k]))
			continue;
		pn[k].alive = pn[k].active = 1;
		pn[k].service_tasks = here[ni];
		idx[k++] = ni;
	}
	memset(&req, 0, sizeof(req));
	req.res.cpu_millis = SLOT_CPU;
	req.res.memory = SLOT_MEM;
	req.count = count;
	out = xcalloc(count, sizeof(*out));
	placed = mts_place(pn, k, &req, out, &why);
	for (j = 0; j < placed; j++) {
		uint64_t seq = o->life_inc * 1000000ull + ++o->rseq;

		infl_add(s, o, g, idx[out[j]], seq);
		send_req(s, o, idx[out[j]], K_PREPARE, g, seq, w->sver[si]);
		SIM_ST->prepares++;
	}
	free(out);
out:
	free(pn);
	free(idx);
	free(here);
}

static void
stop(struct sim *s, struct sim_node *o, const struct view *w, size_t ti)
{
	struct sim_msg *m = sim_msg_new(K_STOP, o->idx, w->tnode[ti]);

	m->task = xstrdup(w->task[ti].id);
	m->bytes = 40 + strlen(m->task);
	SIM_ST->stops++;
	if (w->tnode[ti] == o->idx) {
		sim_recon_on_stop(s, o, m);
		sim_msg_unref(m);
		return;
	}
	sim_node_send(s, o, m);
}

/* The view's weight function: the rendezvous weights kept across passes
 * and shared by the nodes (a weight depends only on its pair). */
static uint64_t
cached_weight(void *ctx, const char *service, const uint8_t id[MTS_NODE_ID_LEN])
{
	struct sim *s = ctx;
	int g = svc_of_name(service), ni = (int)mts_get_u32be(id);
	size_t k;

	if (g < 0 || (size_t)g >= s->nrsvcs || ni < 0 || ni >= s->n)
		return mts_rendezvous_weight(service, id);
	k = (size_t)g * (size_t)s->n + (size_t)ni;
	/* two workers may fill the same weight: with the same value */
	if (!__atomic_load_n(&s->whave[k], __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&s->wcache[k],
		    mts_rendezvous_weight(service, id), __ATOMIC_RELAXED);
		__atomic_store_n(&s->whave[k], 1, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(&s->wcache[k], __ATOMIC_RELAXED);
}

/* --- the rolling update ------------------------------------------------ */

static void
status_of(const struct sim_node *n, const char *svc, struct mts_up_status *st)
{
	char key[48];
	const struct irec *r;

	snprintf(key, sizeof(key), MTS_UP_PREFIX "%s", svc);
	r = sim_store_get(n, (const uint8_t *)key, strlen(key));
	if (r == NULL || r->rec.tombstone ||
	    mts_up_status_decode(r->rec.value, r->rec.vlen, st) < 0)
		memset(st, 0, sizeof(*st));
}

static int
task_live(const struct view *w, size_t t, const uint8_t *alive)
{
	return (w->task[t].state == RC_TASK_PENDING ||
	           w->task[t].state == RC_TASK_RUNNING) &&
	    alive[w->tnode[t]];
}

/* The update core's step for the view's service si, by its owner: its
 * live tasks, the u/ status on this replica; UP_START placed, UP_STOP
 * sent, u/ written back when it changed. 1 while the update holds the
 * service's count (the reconciler's count duty is left out). */
static int
update_step(struct sim *s, struct sim_node *n, const struct view *w, size_t si,
    const uint8_t *alive)
{
	const char *name = w->v.services[si].name;
	struct mts_up_task *ut = xcalloc(w->v.ntasks + 1, sizeof(*ut));
	size_t *map = xcalloc(w->v.ntasks + 1, sizeof(*map)), i, k = 0;
	struct mts_up_status st, old;
	struct mts_up_service us;
	struct mts_up_actions ua = { 0 };
	uint8_t *enc;
	size_t len;
	char key[48];
	long o = mts_rc_owner(&w->v, name);
	int active;

	status_of(n, name, &st);
	if (o < 0 || strcmp(w->v.members[o].attrs.id, n->hex) != 0) {
		active = 0;
		goto out;
	}
	act(s, svc_of_name(name), n->idx);
	for (i = 0; i < w->v.ntasks; i++) {
		if (strcmp(w->task[i].service, name) != 0 ||
		    !task_live(w, i, alive))
			continue;
		ut[k].id = w->task[i].id;
		ut[k].current = w->tver[i] == w->sver[si];
		ut[k].state = w->task[i].state == RC_TASK_PENDING
		    ? UP_TASK_PENDING
		    : UP_TASK_RUNNING;
		ut[k].desired_running = w->task[i].desired_running;
		ut[k].started_ms = SIM_WALL_BASE + w->task[i].created;
		map[k++] = i;
	}
	memset(&us, 0, sizeof(us));
	us.version = w->sver[si];
	us.replicas = w->v.services[si].replicas;
	us.has_previous = 1;
	mts_up_params_default(&us.update);
	us.update.parallelism = UPDATE_PARALLELISM;
	us.update.monitor_ms = UPDATE_MONITOR_MS;
	mts_up_params_default(&us.rollback_cfg);
	old = st;
	mts_up_step(&us, ut, k, &st, SIM_WALL_BASE + (uint64_t)s->now, &ua);
	for (i = 0; i < ua.n; i++)
		if (ua.v[i].kind == UP_START)
			place(s, n, w, si, ua.v[i].count);
		else if (ua.v[i].kind == UP_STOP)
			stop(s, n, w, map[ua.v[i].task]);
	if (memcmp(&old, &st, sizeof(st)) != 0) {
		enc = mts_up_status_encode(&st, n->id, old.version, &len);
		snprintf(key, sizeof(key), MTS_UP_PREFIX "%s", name);
		if (sim_node_write(s, n, key, enc, len, NULL) < 0)
			sim_fail(s, "node %d: its u/ record was refused",
			    n->idx);
		free(enc);
	}
	active = mts_up_active(&st);
	mts_up_actions_free(&ua);
out:
	free(ut);
	free(map);
	return active;
}

/* Which services the update holds now: those with a live task on an older
 * version or an update in progress, stepped by their owner. */
static void
updates(struct sim *s, struct sim_node *n, const struct view *w, uint8_t *held)
{
	uint8_t *alive = xcalloc((size_t)s->n, 1), *stale;
	long *jof = xcalloc(s->nrsvcs + 1, sizeof(*jof));
	struct mts_up_status st;
	size_t i, j;
	int g;

	stale = xcalloc(w->v.nservices + 1, 1);
	for (i = 0; i < w->v.nmembers; i++)
		alive[mts_get_u32be(w->v.members[i].id)] =
		    w->v.members[i].alive && !w->v.members[i].draining;
	for (j = 0; j < s->nrsvcs; j++)
		jof[j] = -1;
	for (j = 0; j < w->v.nservices; j++)
		if ((g = svc_of_name(w->v.services[j].name)) >= 0 &&
		    (size_t)g < s->nrsvcs)
			jof[g] = (long)j;
	for (i = 0; i < w->v.ntasks; i++) {
		g = svc_of_name(w->task[i].service);
		if (g < 0 || (size_t)g >= s->nrsvcs || jof[g] < 0 ||
		    !task_live(w, i, alive))
			continue;
		j = (size_t)jof[g];
		stale[j] |= w->tver[i] != w->sver[j];
	}
	for (j = 0; j < w->v.nservices; j++) {
		status_of(n, w->v.services[j].name, &st);
		if (stale[j] || mts_up_active(&st))
			held[j] = (uint8_t)update_step(s, n, w, j, alive);
	}
	free(alive);
	free(stale);
	free(jof);
}

/* The owners of the view's services, kept while the node's membership
 * (and the services) stay the same, as the view's owners allow. */
static const long *
owners(struct sim_node *n, const struct view *w)
{
	size_t i;

	if (n->own != NULL && n->own_gen == n->mgen &&
	    n->nown == w->v.nservices)
		return n->own;
	n->own = xreallocarray(n->own, w->v.nservices + 1, sizeof(*n->own));
	for (i = 0; i < w->v.nservices; i++)
		n->own[i] = mts_rc_owner(&w->v, w->v.services[i].name);
	n->nown = w->v.nservices;
	n->own_gen = n->mgen;
	return n->own;
}

/* The node's reconciliation pass: recon_core's actions on its view. */
static void
reconcile(struct sim *s, struct sim_node *n)
{
	struct view *w = &scratch;
	struct mts_rc_actions acts = { 0 };
	uint8_t *held;
	size_t i;

	view_members(s, n, w);
	view_records(n, w);
	held = xcalloc(w->v.nservices + 1, 1);
	if (s->update_at)
		updates(s, n, w, held);
	w->v.self = n->hex;
	w->v.weight = cached_weight;
	w->v.weight_ctx = s;
	w->v.owners = owners(n, w);
	mts_rc_reconcile(&w->v, &acts);
	n->last_acts = acts.n;
	for (i = 0; i < acts.n; i++) {
		const struct mts_rc_action *a = &acts.v[i];
		int owned = a->service != SIZE_MAX &&
		    strcmp(a->why, "node draining") != 0;

		if (owned && held[a->service])
			continue; /* the update keeps this count */
		if (owned)
			act(s, svc_of_name(w->v.services[a->service].name),
			    n->idx);
		if (a->kind == RC_PLACE)
			place(s, n, w, a->service, a->count);
		else if (a->kind == RC_STOP)
			stop(s, n, w, a->task);
	}
	mts_rc_actions_free(&acts);
	free(held);
}

void
sim_recon_tick(struct sim *s, struct sim_node *n)
{
	uint64_t gen = n->vgen;

	if (s->now < n->next_recon)
		return;
	n->next_recon = s->now + RECON_MS;
	infl_expire(s, n);
	/* the same view, nothing in flight, no action last time: none now
	 * (recon_core is a function of the view); the simulator's saving */
	if (!s->update_at && n->ninfl == 0 && n->last_acts == 0 &&
	    gen == n->last_vgen)
		return;
	reconcile(s, n);
	n->last_vgen = gen;
}

void
sim_recon_crash(struct sim_node *n)
{
	free(n->infl);
	n->infl = NULL;
	n->ninfl = n->capinfl = 0;
	n->next_recon = 0;
	free(n->own);
	n->own = NULL;
	n->nown = 0;
	n->last_acts = 1;
}

/* --- the target node ----------------------------------------------------- */

static int
write_task(struct sim *s, struct sim_node *n, const char *task, const char *svc,
    int state, int desired, unsigned long long created,
    unsigned long long version, struct irec **out)
{
	char key[3 + MTS_NODE_HEX_LEN + MTS_TASK_ID_MAX], val[128];

	snprintf(key, sizeof(key), "t/%s/%s", n->hex, task);
	snprintf(val, sizeof(val), "%s %d %d %llu %llu", svc, state, desired,
	    created, version);
	return sim_node_write(s, n, key, (const uint8_t *)val, strlen(val),
	    out);
}

/* A commit granted: the node writes the task's record (running). */
void
sim_recon_on_commit(struct sim *s, struct sim_node *n, const char *task,
    int svc, uint64_t version, struct irec **out)
{
	char name[32];

	snprintf(name, sizeof(name), "svc%d", svc);
	if (write_task(s, n, task, name, RC_TASK_RUNNING, 1,
	        (unsigned long long)s->now, version, out) < 0)
		sim_fail(s, "node %d: its task record was refused", n->idx);
}

/* A stop: the ledger lets the task go, its record says stopped. */
void
sim_recon_on_stop(struct sim *s, struct sim_node *n, const struct sim_msg *m)
{
	char key[3 + MTS_NODE_HEX_LEN + MTS_TASK_ID_MAX];
	struct irec *r;
	const struct parsed *p;

	if (mts_ledger_task_remove(&n->ledger, m->task) < 0)
		return;
	n->digest_dirty = 1;
	snprintf(key, sizeof(key), "t/%s/%s", n->hex, m->task);
	r = (struct irec *)sim_store_get(n, (const uint8_t *)key, strlen(key));
	if (r == NULL || (p = parse(r)) == NULL)
		return;
	if (write_task(s, n, m->task, p->svc, RC_TASK_STOPPED, 0, p->created,
	        p->version, NULL) < 0)
		sim_fail(s, "node %d: its task record was refused", n->idx);
}

/* The owner hears back: a granted prepare is committed; a commit's reply
 * carries the task's record, merged at once into the owner's replica. */
void
sim_recon_on_reply(struct sim *s, struct sim_node *o, const struct sim_msg *m)
{
	size_t i;

	for (i = 0; i < o->ninfl; i++)
		if (o->infl[i].seq == m->seq && o->infl[i].to == m->from)
			break;
	if (i == o->ninfl)
		return;
	if (m->kind == K_PREPARE_REP && m->why == LEDGER_OK) {
		o->infl[i].at = s->now;
		send_req(s, o, m->from, K_COMMIT, m->target, m->seq,
		    m->version);
		return;
	}
	o->infl[i] = o->infl[--o->ninfl];
	if (m->why != LEDGER_OK) {
		SIM_ST->refused++;
		return;
	}
	SIM_ST->places++;
	if (m->nrecs == 1)
		(void)sim_node_merge(s, o, m->recs[0]);
}

/* --- the deployer and drains --------------------------------------------- */

static int
random_up(struct sim *s)
{
	int i, k;

	if (s->nup == 0)
		return -1;
	k = sim_rand_int(s, s->nup);
	for (i = 0; i < s->n; i++)
		if (s->node[i].up && k-- == 0)
			return i;
	return -1;
}

void sim_track_write(struct sim *, struct irec *, int writer);

/* nsvcs services of `replicas` each, each written as s/svc<i> by a random
 * node (an admin's deploy through any node). */
void
sim_recon_deploy(struct sim *s, size_t nsvcs, uint32_t replicas)
{
	char key[40], val[16];
	struct irec *r;
	size_t i;
	int w;

	s->recon = s->sched = 1;
	s->rsvcs = xcalloc(nsvcs, sizeof(*s->rsvcs));
	s->nrsvcs = nsvcs;
	s->wcache = xcalloc(nsvcs * (size_t)s->n, sizeof(*s->wcache));
	s->whave = xcalloc(nsvcs * (size_t)s->n, 1);
	for (i = 0; i < nsvcs; i++) {
		struct sim_rsvc *v = &s->rsvcs[i];

		snprintf(v->name, sizeof(v->name), "svc%zu", i);
		v->desired = replicas;
		v->at = s->now;
		v->actor = v->actor2 = v->last_actor = -1;
		snprintf(key, sizeof(key), "s/%s", v->name);
		v->version = 1;
		snprintf(val, sizeof(val), "%u 1", replicas);
		if ((w = random_up(s)) < 0 ||
		    sim_node_write(s, &s->node[w], key, (const uint8_t *)val,
		        strlen(val), &r) < 0) {
			sim_fail(s, "deploy of %s refused", v->name);
			return;
		}
		sim_track_write(s, r, w);
	}
}

/* The node drains itself: its n/ record says so (mtsctl node drain), its
 * schedd refuses new leases. */
void
sim_recon_drain(struct sim *s, int i)
{
	struct sim_node *n = &s->node[i];
	char key[2 + MTS_NODE_HEX_LEN + 1];
	struct irec *r;

	snprintf(key, sizeof(key), "n/%s", n->hex);
	if (sim_node_write(s, n, key, (const uint8_t *)DRAIN, strlen(DRAIN),
	        &r) < 0) {
		sim_fail(s, "node %d: its drain was refused", i);
		return;
	}
	sim_track_write(s, r, i);
	n->draining = 1;
	n->ledger.draining = 1;
	n->digest_dirty = 1;
	s->drains++;
}

/* A new version of every service (a new image, say), each written by a
 * random node; the owners roll their tasks over with the update core. */
void
sim_recon_update(struct sim *s)
{
	char key[40], val[40];
	struct irec *r;
	size_t i;
	int w;

	s->update_at = s->now;
	s->update_floor = UINT32_MAX;
	for (i = 0; i < s->nrsvcs; i++) {
		struct sim_rsvc *v = &s->rsvcs[i];

		v->version++;
		snprintf(key, sizeof(key), "s/%s", v->name);
		snprintf(val, sizeof(val), "%u %llu", v->desired,
		    (unsigned long long)v->version);
		if ((w = random_up(s)) < 0 ||
		    sim_node_write(s, &s->node[w], key, (const uint8_t *)val,
		        strlen(val), &r) < 0) {
			sim_fail(s, "update of %s refused", v->name);
			return;
		}
		sim_track_write(s, r, w);
	}
}

void
sim_recon_mark(struct sim *s, const char *what)
{
	if (s->nmarks < sizeof(s->marks) / sizeof(s->marks[0]))
		s->marks[s->nmarks++] = (struct sim_mark){ what, s->now, 0 };
}

/* --- invariants ---------------------------------------------------------- */

/* The version of node n's task as its own t/ record says. */
static uint64_t
task_version(const struct sim_node *n, const char *task)
{
	char key[3 + MTS_NODE_HEX_LEN + MTS_TASK_ID_MAX];
	struct irec *r;
	const struct parsed *p;

	snprintf(key, sizeof(key), "t/%s/%s", n->hex, task);
	r = (struct irec *)sim_store_get(n, (const uint8_t *)key, strlen(key));
	return r && (p = parse(r)) ? p->version : 0;
}

/* The truth: committed tasks of each service on up, active nodes (and
 * in *old those on an older version than the service's). */
static uint32_t
count_running(struct sim *s, uint32_t *old)
{
	uint32_t total = 0;
	size_t i;
	int j, g;

	*old = 0;
	for (i = 0; i < s->nrsvcs; i++)
		s->rsvcs[i].running = 0;
	for (j = 0; j < s->n; j++) {
		const struct mts_ledger *l = &s->node[j].ledger;

		if (!s->node[j].up || s->node[j].draining)
			continue;
		for (i = 0; i < l->ntasks; i++) {
			g = atoi(l->tasks[i].id + 1);
			if (g >= 0 && (size_t)g < s->nrsvcs) {
				s->rsvcs[g].running++;
				total++;
				if (s->update_at &&
				    task_version(&s->node[j], l->tasks[i].id) <
				        s->rsvcs[g].version)
					(*old)++;
			}
		}
	}
	return total;
}

/* Every drain and deploy write has reached every live node. */
static int
writes_everywhere(const struct sim *s)
{
	size_t i;

	for (i = 0; i < s->nwrites; i++)
		if (s->writes[i].done == 0 && s->node[s->writes[i].writer].up)
			return 0;
	return 1;
}

/* No two owners of a service while membership is stable: with every
 * live node holding the same members (and drains) at this check and the
 * last, one node only acted for each service, the same as before. */
static void
check_owners(struct sim *s)
{
	int stable = sim_membership_converged(s) && writes_everywhere(s);
	size_t i;

	for (i = 0; i < s->nrsvcs && !s->failed; i++) {
		struct sim_rsvc *v = &s->rsvcs[i];

		if (stable && s->stable_prev) {
			s->two_owner_checks++;
			if (v->actor2 >= 0 ||
			    (v->actor >= 0 && v->last_actor >= 0 &&
			        v->actor != v->last_actor))
				sim_fail(s,
				    "two owners of %s while membership is "
				    "stable: nodes %d and %d",
				    v->name, v->actor,
				    v->actor2 >= 0 ? v->actor2 : v->last_actor);
		}
		/* the owner of a second counts only if membership was stable
		 * at both its ends: after a heal it can converge within the
		 * second, whose first actions came from the side's owner */
		if (!stable || !s->stable_prev)
			v->last_actor = -1;
		else if (v->actor >= 0)
			v->last_actor = v->actor;
		v->actor = v->actor2 = -1;
	}
	s->stable_prev = stable;
}

void
sim_recon_check(struct sim *s)
{
	uint32_t total, want = 0, old;
	size_t i, exact = 1, sec = s->nsec > 0 ? s->nsec - 1 : 0;

	s->running = xreallocarray(s->running, sec + 1, sizeof(*s->running));
	s->running[sec][0] = s->running[sec][1] = 0;
	if (!s->recon)
		return;
	total = count_running(s, &old);
	for (i = 0; i < s->nrsvcs; i++) {
		struct sim_rsvc *v = &s->rsvcs[i];

		want += v->desired;
		if (s->update_at && v->running < s->update_floor)
			s->update_floor = v->running;
		if (s->update_at && s->nkills == 0 &&
		    v->running + UPDATE_PARALLELISM < v->desired)
			sim_fail(s,
			    "%s down to %u tasks during its rolling update "
			    "(%u wanted, %d at a time)",
			    v->name, v->running, v->desired,
			    UPDATE_PARALLELISM);
		if (v->running != v->desired)
			exact = 0;
		else if (v->placed == 0)
			v->placed = s->now;
	}
	s->running[sec][0] = total;
	s->running[sec][1] = want;
	for (i = 0; i < s->nmarks && exact && old == 0; i++)
		if (s->marks[i].exact == 0 && s->now > s->marks[i].at)
			s->marks[i].exact = s->now;
	check_owners(s);
}

/* After quiet: every service at exactly its count on the live, active
 * nodes, and nothing left on a drained node. */
void
sim_recon_check_quiet(struct sim *s)
{
	uint32_t old;
	size_t i;
	int j;

	if (!s->recon)
		return;
	(void)count_running(s, &old);
	if (old > 0)
		sim_fail(s, "after quiet %u tasks still run an older version",
		    old);
	for (i = 0; i < s->nrsvcs && !s->failed; i++)
		if (s->rsvcs[i].running != s->rsvcs[i].desired)
			sim_fail(s, "after quiet %s runs %u tasks, desired %u",
			    s->rsvcs[i].name, s->rsvcs[i].running,
			    s->rsvcs[i].desired);
	for (j = 0; j < s->n && !s->failed; j++)
		if (s->node[j].up && s->node[j].draining &&
		    s->node[j].ledger.ntasks > 0)
			sim_fail(s, "drained node %d still runs %zu tasks", j,
			    s->node[j].ledger.ntasks);
}

/* --- the report ---------------------------------------------------------- */

static int
cmp_time(const void *a, const void *b)
{
	mts_time_t x = *(const mts_time_t *)a, y = *(const mts_time_t *)b;

	return x < y ? -1 : x > y;
}

void
sim_recon_report(const struct sim *s)
{
	mts_time_t *v = xcalloc(s->nrsvcs + 1, sizeof(*v)), last = 0;
	size_t i, k = 0;
	uint64_t want = 0;

	if (!s->recon)
		goto out;
	for (i = 0; i < s->nrsvcs; i++) {
		want += s->rsvcs[i].desired;
		if (s->rsvcs[i].placed) {
			v[k++] = s->rsvcs[i].placed - s->rsvcs[i].at;
			if (s->rsvcs[i].placed > last)
				last = s->rsvcs[i].placed;
		}
	}
	qsort(v, k, sizeof(*v), cmp_time);
	printf("%-34s %zu services, %llu replicas, %zu reached their count\n",
	    "deploy (racing owners)", s->nrsvcs, (unsigned long long)want, k);
	if (k > 0)
		printf("%-34s p50 %lld ms  p99 %lld ms  max %lld ms\n",
		    "  time to place a service", (long long)v[(k - 1) / 2],
		    (long long)v[(size_t)((double)(k - 1) * .99)],
		    (long long)v[k - 1]);
	if (k == s->nrsvcs && last > s->rsvcs[0].at)
		printf("%-34s %.0f replicas/s; %llu prepares, %llu refused, "
		       "%llu commits, %llu stops\n",
		    "  placement throughput",
		    (double)want * 1000 / (double)(last - s->rsvcs[0].at),
		    (unsigned long long)s->st.prepares,
		    (unsigned long long)s->st.refused,
		    (unsigned long long)s->st.places,
		    (unsigned long long)s->st.stops);
	for (i = 0; i < s->nmarks; i++)
		if (s->marks[i].exact)
			printf("%-34s %lld ms\n", s->marks[i].what,
			    (long long)(s->marks[i].exact - s->marks[i].at));
		else
			printf("%-34s never\n", s->marks[i].what);
	if (s->update_at)
		printf("%-34s %u of each service's tasks at the least "
		       "(%d at a time)\n",
		    "  rolling update", s->update_floor, UPDATE_PARALLELISM);
	printf("%-34s %llu seconds checked\n", "  one owner per service",
	    (unsigned long long)s->two_owner_checks /
	        (s->nrsvcs ? s->nrsvcs : 1));
out:
	free(v);
}
