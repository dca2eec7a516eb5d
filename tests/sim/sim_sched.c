/* sim_sched.c: the reserve scenario's pieces — each node's slot ledger (schedd's ledger core) answering prepares and commits and publishing its d/<node> digest, and owners placing replicas with the placement core on what their own replica says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sim/sim.h"
#include "xmalloc.h"

#define SLOT_CPU 500
#define SLOT_MEM (256ull << 20)
#define RECON_SLOT_CPU 250 /* 16 tasks per node */
#define LEASE_TTL 5000
#define DIGEST_MIN_MS 500 /* as SCHEDD_DIGEST_MIN_MS */

void
sim_sched_init(struct sim_node *n)
{
	struct mts_res cap = { 4000, 8ull << 30 };

	mts_ledger_init(&n->ledger, cap, 4096);
	n->digest_dirty = 1;
}

/* The digest as a d/<node> record (text: the simulator's encoding; the
 * agent's is protobuf). */
void
sim_sched_tick(struct sim *s, struct sim_node *n)
{
	struct mts_digest d;
	char key[2 + MTS_NODE_HEX_LEN + 1], val[96];

	if (mts_ledger_expire(&n->ledger, s->now) > 0)
		n->digest_dirty = 1;
	if (!n->digest_dirty || s->now < n->digest_next)
		return;
	mts_ledger_digest(&n->ledger, &d);
	snprintf(key, sizeof(key), "d/%s", n->hex);
	snprintf(val, sizeof(val), "%u %llu %u %llu %u", d.capacity.cpu_millis,
	    (unsigned long long)d.capacity.memory, d.free.cpu_millis,
	    (unsigned long long)d.free.memory, d.tasks);
	if (sim_node_write(s, n, key, (const uint8_t *)val, strlen(val), NULL) <
	    0)
		sim_fail(s, "node %d: its digest was refused", n->idx);
	n->digest_dirty = 0;
	n->digest_next = s->now + DIGEST_MIN_MS;
}

static void
reply(struct sim *s, struct sim_node *n, const struct sim_msg *q,
    enum sim_kind kind, enum mts_ledger_why why, struct irec *rec)
{
	struct sim_msg *m = sim_msg_new(kind, n->idx, q->from);

	m->seq = q->seq;
	m->target = q->target; /* the service */
	m->version = q->version;
	m->why = (int)why;
	m->bytes = 80;
	if (rec) {
		m->recs = xcalloc(1, sizeof(*m->recs));
		m->recs[m->nrecs++] = rec;
		m->bytes += rec->klen + rec->elen;
	}
	sim_node_send(s, n, m);
}

/* A prepare or commit from an owner, through the ledger core. With the
 * reconciler, ids carry the owner (two owners race during a partition)
 * and a commit writes the task's t/ record, which the reply carries. */
void
sim_sched_on_msg(struct sim *s, struct sim_node *n, const struct sim_msg *m)
{
	char lease[MTS_LEASE_ID_MAX], task[MTS_TASK_ID_MAX], svc[32];
	struct mts_res res = { SLOT_CPU, SLOT_MEM };
	enum mts_ledger_why why;
	struct irec *rec = NULL;

	if (s->recon)
		res.cpu_millis = RECON_SLOT_CPU;
	snprintf(lease, sizeof(lease), "l%d.%d.%llu", m->target,
	    s->recon ? m->from : 0, (unsigned long long)m->seq);
	snprintf(svc, sizeof(svc), "svc%d", m->target);
	if (m->kind == K_PREPARE) {
		why = mts_ledger_prepare(&n->ledger, lease,
		    s->node[m->from].hex, svc, res, 0, LEASE_TTL, s->now);
		reply(s, n, m, K_PREPARE_REP, why, NULL);
	} else {
		snprintf(task, sizeof(task), "t%d.%d.%llu", m->target,
		    s->recon ? m->from : 0, (unsigned long long)m->seq);
		why = mts_ledger_commit(&n->ledger, lease, task, s->now);
		if (why == LEDGER_OK && s->recon)
			sim_recon_on_commit(s, n, task, m->target, m->version,
			    &rec);
		reply(s, n, m, K_COMMIT_REP, why, rec);
	}
	n->digest_dirty = 1;
}

/* --- owners -------------------------------------------------------------- */

static void
send_req(struct sim *s, int owner, int to, enum sim_kind kind, int svc,
    uint64_t seq)
{
	struct sim_msg *m = sim_msg_new(kind, owner, to);

	m->target = svc;
	m->seq = seq;
	m->bytes = 120;
	sim_node_send(s, &s->node[owner], m);
}

/* The nodes as the owner's replica and SWIM see them. */
static size_t
owner_view(struct sim *s, struct sim_node *o, struct mts_place_node *pn,
    uint32_t *idx)
{
	char key[2 + MTS_NODE_HEX_LEN + 1];
	const struct irec *r;
	char *alive = xcalloc((size_t)s->n, 1);
	unsigned cc, fc, t;
	unsigned long long cm, fm;
	size_t i, k = 0;
	char buf[96];

	for (i = 0; i < mts_swim_count(o->swim); i++) {
		const struct mts_swim_member *m =
		    mts_swim_member_at(o->swim, i);

		if (m->u.state == MTS_SWIM_ALIVE)
			alive[mts_get_u32be(m->u.id)] = 1;
	}
	for (i = 0; i < (size_t)s->n; i++) {
		snprintf(key, sizeof(key), "d/%s", s->node[i].hex);
		r = sim_store_get(o, (const uint8_t *)key, strlen(key));
		if (r == NULL || r->rec.vlen >= sizeof(buf) || !alive[i])
			continue;
		memcpy(buf, r->rec.value, r->rec.vlen);
		buf[r->rec.vlen] = '\0';
		if (sscanf(buf, "%u %llu %u %llu %u", &cc, &cm, &fc, &fm, &t) !=
		    5)
			continue;
		memset(&pn[k], 0, sizeof(pn[k]));
		pn[k].a.id = s->node[i].hex;
		pn[k].alive = pn[k].active = 1;
		pn[k].capacity.cpu_millis = cc;
		pn[k].capacity.memory = cm;
		pn[k].free.cpu_millis = fc;
		pn[k].free.memory = fm;
		pn[k].tasks = t;
		idx[k++] = (uint32_t)i;
	}
	free(alive);
	return k;
}

/* Each owner places what its services still miss, with what it knows. */
void
sim_sched_owners(struct sim *s)
{
	struct mts_place_node *pn = xcalloc((size_t)s->n, sizeof(*pn));
	uint32_t *idx = xcalloc((size_t)s->n, sizeof(*idx));
	uint32_t *out = xcalloc(1024, sizeof(*out));
	struct mts_place_req req;
	struct mts_place_why why;
	size_t i, k;
	uint32_t j, placed, want;

	for (i = 0; i < s->nsvcs; i++) {
		struct sim_svc *v = &s->svcs[i];
		struct sim_node *o = &s->node[v->owner];

		want = v->desired - v->committed - v->inflight;
		if (!o->up || v->committed + v->inflight >= v->desired)
			continue;
		k = owner_view(s, o, pn, idx);
		memset(&req, 0, sizeof(req));
		req.res.cpu_millis = SLOT_CPU;
		req.res.memory = SLOT_MEM;
		req.count = want > 1024 ? 1024 : want;
		placed = mts_place(pn, k, &req, out, &why);
		for (j = 0; j < placed; j++) {
			send_req(s, v->owner, (int)idx[out[j]], K_PREPARE,
			    (int)i, ++v->seq);
			v->inflight++;
			SIM_ST->prepares++;
		}
	}
	free(pn);
	free(idx);
	free(out);
}

/* An owner hears back: a granted prepare is committed, a commit counts. */
void
sim_sched_on_reply(struct sim *s, struct sim_node *o, const struct sim_msg *m)
{
	struct sim_svc *v = &s->svcs[m->target];

	if (m->kind == K_PREPARE_REP && m->why == LEDGER_OK) {
		send_req(s, o->idx, m->from, K_COMMIT, m->target, m->seq);
		return;
	}
	v->inflight--;
	if (m->kind == K_PREPARE_REP) {
		SIM_ST->refused++;
		return;
	}
	if (m->why != LEDGER_OK) {
		SIM_ST->refused++;
		return;
	}
	v->committed++;
	if (v->committed == v->desired)
		v->done = s->now;
}

/* Every second: no node holds more than its capacity (committed tasks
 * plus prepared leases). */
void
sim_sched_check(struct sim *s)
{
	struct mts_ledger *l;
	uint64_t cpu, mem;
	size_t i;
	int j;

	for (j = 0; j < s->n && s->sched; j++) {
		l = &s->node[j].ledger;
		cpu = mem = 0;
		for (i = 0; i < l->ntasks; i++) {
			cpu += l->tasks[i].res.cpu_millis;
			mem += l->tasks[i].res.memory;
		}
		for (i = 0; i < l->nleases; i++)
			if (l->leases[i].state == LEASE_PREPARED) {
				cpu += l->leases[i].res.cpu_millis;
				mem += l->leases[i].res.memory;
			}
		if (cpu > l->capacity.cpu_millis || mem > l->capacity.memory)
			sim_fail(s,
			    "node %d reserves %llu mCPU / %llu bytes, "
			    "over its capacity",
			    j, (unsigned long long)cpu,
			    (unsigned long long)mem);
	}
}

/* After quiet: every service at exactly its desired count. */
void
sim_sched_check_quiet(struct sim *s)
{
	char svc[32];
	size_t i;
	uint32_t have;
	int j;

	for (i = 0; i < s->nsvcs && !s->failed; i++) {
		snprintf(svc, sizeof(svc), "svc%zu", i);
		for (have = 0, j = 0; j < s->n; j++)
			have +=
			    mts_ledger_service_count(&s->node[j].ledger, svc);
		if (have != s->svcs[i].desired)
			sim_fail(s, "service %zu runs %u tasks, desired %u", i,
			    have, s->svcs[i].desired);
	}
}
