/* sim_node.c: one simulated node — gossipd's SWIM, delta-push and anti-entropy cores fed the virtual network's messages, over an in-memory store (sorted interned records and an MST) behind the statestore's verdict. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/statestore/state_core.h"
#include "mtserr.h"
#include "tests/sim/sim.h"
#include "xmalloc.h"

#define UPDATE_BYTES \
	60 /* a member update on the wire: id, addr, name, state, inc */
#define MSG_BYTES 40 /* framing, Noise tag, message header */

/* --- the store: interned records sorted by key, and the MST -------------- */

static size_t
store_find(const struct sim_node *n, const uint8_t *key, size_t klen, int *hit)
{
	size_t lo = 0, hi = n->nents, mid;
	int c;

	*hit = 0;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = mts_mst_key_cmp(n->ents[mid]->key, n->ents[mid]->klen, key,
		    klen);
		if (c == 0) {
			*hit = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct irec *
sim_store_get(const struct sim_node *n, const uint8_t *key, size_t klen)
{
	int hit;
	size_t i = store_find(n, key, klen, &hit);

	return hit ? n->ents[i] : NULL;
}

/* Stores r (takes the caller's reference) in place of the key's record. */
static void
store_put(struct sim *s, struct sim_node *n, struct irec *r)
{
	int hit;
	size_t i = store_find(n, r->key, r->klen, &hit);

	if (hit) {
		sim_iunref(n->ents[i]);
	} else {
		if (n->nents == n->capents) {
			n->capents = n->capents ? n->capents * 2 : 64;
			n->ents = xreallocarray(n->ents, n->capents,
			    sizeof(*n->ents));
		}
		memmove(n->ents + i + 1, n->ents + i,
		    (n->nents - i) * sizeof(*n->ents));
		n->nents++;
	}
	n->ents[i] = r;
	if (r->klen >= 2 && r->key[1] == '/' && strchr("stnu", r->key[0]))
		n->vgen++;
	if (r->klen >= 2 && memcmp(r->key, "n/", 2) == 0)
		n->mgen++;
	if (mts_mst_put(n->mst, r->key, r->klen, r->rh) < 0)
		abort(); /* keys are checked by the verdict */
	sim_on_apply(s, n, r);
}

static void
self_of(struct sim *s, struct sim_node *n, struct mts_state_self *me)
{
	me->node = n->id;
	me->node_hex = n->hex;
	me->hlc = &n->hlc;
	me->now_wall_ms = SIM_WALL_BASE + (uint64_t)s->now;
}

/* A peer's record through the statestore's verdict; 1 if applied. */
int
sim_node_merge(struct sim *s, struct sim_node *n, struct irec *in)
{
	struct mts_state_self me;
	struct mts_write w = { .kind = MTS_WRITE_MERGE };
	struct mts_verdict v;
	const struct irec *cur = sim_store_get(n, in->key, in->klen);

	self_of(s, n, &me);
	w.key = in->key;
	w.klen = in->klen;
	w.rec = in->rec;
	if (mts_state_verdict(&me, cur ? &cur->rec : NULL, NULL, &w, &v) !=
	    MTS_VERDICT_APPLY) {
		SIM_ST->merges_ignored++;
		return 0;
	}
	SIM_ST->merges_applied++;
	store_put(s, n, sim_iref(in));
	return 1;
}

/* A local put through the verdict, stored: 0 and *out (a reference the
 * caller owns). */
static int
local_put(struct sim *s, struct sim_node *n, const char *key,
    const uint8_t *value, size_t vlen, struct irec **out)
{
	struct mts_state_self me;
	struct mts_write w = { .kind = MTS_WRITE_PUT };
	struct mts_verdict v;
	const struct irec *cur;

	w.key = (const uint8_t *)key;
	w.klen = strlen(key);
	w.rec.value = value;
	w.rec.vlen = vlen;
	cur = sim_store_get(n, w.key, w.klen);
	self_of(s, n, &me);
	if (mts_state_verdict(&me, cur ? &cur->rec : NULL, NULL, &w, &v) !=
	    MTS_VERDICT_APPLY)
		return v.err ? v.err : -MTS_ERR_INVAL;
	*out = sim_intern(w.key, w.klen, &v.rec);
	store_put(s, n, sim_iref(*out));
	return 0;
}

static void
member_record(const struct sim_node *n, char *key, size_t klen, char *val,
    size_t vlen)
{
	snprintf(key, klen, "n/%s", n->hex);
	snprintf(val, vlen, "sim:%d", n->idx);
}

/* A local put, as a node's agent asks its statestore: 0 and *out (a
 * reference the caller owns, NULL if not wanted) when acknowledged. */
int
sim_node_write(struct sim *s, struct sim_node *n, const char *key,
    const uint8_t *value, size_t vlen, struct irec **out)
{
	struct mts_delta_sent sent = { .n = 0 };
	struct irec *r;
	int rc;

	if ((rc = local_put(s, n, key, value, vlen, &r)) < 0)
		return rc;
	if (out)
		*out = sim_iref(r);
	/* gd_push_local: remember it, then push it to fanout peers */
	(void)mts_seen_add_fp(n->seen, r->fp);
	sim_push(s, n, &r, 1, &sent);
	sim_iunref(r);
	return 0;
}

/* --- sending ------------------------------------------------------------- */

static int
idx_of(const uint8_t id[MTS_NODE_ID_LEN])
{
	return (int)mts_get_u32be(id);
}

/* Piggybacks membership updates, as gossipd's pack_msg does on every
 * message, and hands the message to the network. */
void
sim_node_send(struct sim *s, struct sim_node *n, struct sim_msg *m)
{
	struct mts_swim_update up[SIM_MAX_UPDATES];

	m->nup =
	    mts_swim_gossip(n->swim, s->node[m->to].id, up, SIM_MAX_UPDATES);
	if (m->nup > 0)
		m->up = xmemdup(up, m->nup * sizeof(*up));
	m->bytes += MSG_BYTES + m->nup * UPDATE_BYTES;
	SIM_ST->piggy[m->kind] += m->nup * UPDATE_BYTES;
	sim_send(s, m);
}

static size_t
recs_bytes(struct irec **r, size_t n)
{
	size_t i, b = 0;

	for (i = 0; i < n; i++)
		b += r[i]->klen + r[i]->elen + 6;
	return b;
}

/* push_to_peers: the records to fanout random alive peers outside sent. */
void
sim_push(struct sim *s, struct sim_node *n, struct irec **recs, size_t nrecs,
    struct mts_delta_sent *sent)
{
	uint8_t cand[64][MTS_NODE_ID_LEN], ids[16][MTS_NODE_ID_LEN];
	size_t c, k, i, first, bytes;
	int fanout = mts_delta_fanout(s->cfg.fanout, mts_swim_count(n->swim));
	struct sim_msg *m;
	struct sim_body *b;

	c = mts_swim_random_alive(n->swim, NULL, cand,
	    mts_delta_ncand(sent, fanout));
	k = mts_delta_targets(sent, n->id,
	    (const uint8_t(*)[MTS_NODE_ID_LEN])cand, c, fanout, ids);
	if (k == 0)
		return;
	first = mts_delta_wire_first(sent);
	/* one body for all the copies, as one encoding is sent to each */
	b = sim_body_new(recs, nrecs,
	    (const uint8_t(*)[MTS_NODE_ID_LEN])(sent->id + first),
	    sent->n - first);
	b->refs++; /* ours, until the last copy is sent */
	bytes = recs_bytes(recs, nrecs) + b->nsent * 18;
	for (i = 0; i < k; i++) {
		m = sim_msg_new(K_PUSH, n->idx, idx_of(ids[i]));
		sim_msg_set_body(m, b);
		m->bytes = bytes;
		sim_node_send(s, n, m);
	}
	sim_body_unref(b);
}

/* --- SWIM ---------------------------------------------------------------- */

/* broadcast_news (gossipd.c): bad news this node found out itself
 * (swim_core's news flag) is sent at once to up to 64 random alive
 * members as an otherwise empty message. */
static void
news(struct sim *s, struct sim_node *n, const struct mts_swim_update *u)
{
	uint8_t ids[SIM_NEWS_FANOUT][MTS_NODE_ID_LEN];
	size_t k, i;

	k = mts_swim_random_alive(n->swim, u->id, ids, SIM_NEWS_FANOUT);
	for (i = 0; i < k; i++)
		sim_node_send(s, n,
		    sim_msg_new(K_NEWS, n->idx, idx_of(ids[i])));
}

static void
run_effects(struct sim *s, struct sim_node *n, struct mts_swim_out *o)
{
	static const enum sim_kind kind[] = {
		[MTS_SWIM_SEND_PING] = K_PING,
		[MTS_SWIM_SEND_ACK] = K_ACK,
		[MTS_SWIM_SEND_PINGREQ] = K_PINGREQ,
		[MTS_SWIM_SEND_GOSSIP] = K_GOSSIP,
	};
	struct sim_msg *m;
	size_t i;
	int to;

	for (i = 0; i < o->n; i++) {
		struct mts_swim_effect *e = &o->e[i];

		if (e->type == MTS_SWIM_EVENT) {
			n->vgen++;
			n->mgen++;
			sim_on_swim_event(s, n, &e->update);
			if (e->news &&
			    memcmp(e->update.id, n->id, MTS_NODE_ID_LEN) != 0)
				news(s, n, &e->update);
			continue;
		}
		to = idx_of(e->to);
		/* a crashed process's host answers a connect with a reset:
		 * gossipd learns at once that it is unreachable */
		if (e->type == MTS_SWIM_SEND_PING && !s->node[to].up &&
		    s->node[to].group == n->group) {
			struct mts_swim_out out2 = { 0 };

			mts_swim_on_unreachable(n->swim, e->to, s->now, &out2);
			run_effects(s, n, &out2);
			mts_swim_out_free(&out2);
			continue;
		}
		m = sim_msg_new(kind[e->type], n->idx, to);
		m->seq = e->seq;
		m->target = idx_of(e->target);
		m->bytes = e->type == MTS_SWIM_SEND_GOSSIP
		    ? 0
		    : 8 + (e->type == MTS_SWIM_SEND_PINGREQ ? 18 : 0);
		sim_node_send(s, n, m);
	}
	mts_swim_out_reset(o);
}

/* A member record of the replicated list (n/<id>) names a member SWIM
 * may not know yet: it is added alive at incarnation 0, not gossiped
 * (mts_swim_learn, as cluster.c does). */
static void
learn_member(struct sim *s, struct sim_node *n, const struct irec *r,
    struct mts_swim_out *out)
{
	struct mts_swim_update u;
	uint8_t id[MTS_NODE_ID_LEN];

	if (r->klen != 2 + MTS_NODE_HEX_LEN || memcmp(r->key, "n/", 2) != 0 ||
	    r->rec.tombstone)
		return;
	if (mts_unhex(id, sizeof(id), (const char *)r->key + 2,
	        MTS_NODE_HEX_LEN) < 0 ||
	    mts_swim_find(n->swim, id))
		return;
	memset(&u, 0, sizeof(u));
	memcpy(u.id, id, MTS_NODE_ID_LEN);
	snprintf(u.addr, sizeof(u.addr), "sim:%d", idx_of(id));
	snprintf(u.name, sizeof(u.name), "n%d", idx_of(id));
	mts_swim_learn(n->swim, &u, s->now, out);
}

/* --- anti-entropy (sync.c's walk, synchronous local store) --------------- */

static int
has_page(void *ctx, const uint8_t h[MTS_HASH_LEN])
{
	struct sim_node *n = ctx;
	const uint8_t *enc;
	size_t len;

	return mts_mst_page(n->mst, h, &enc, &len) == 0;
}

static void
local_rh(void *ctx, const uint8_t *const *keys, const size_t *klens, size_t k,
    uint8_t (*rh)[MTS_HASH_LEN], int *found)
{
	struct sim_node *n = ctx;
	size_t i;

	for (i = 0; i < k; i++)
		found[i] = mts_mst_get(n->mst, keys[i], klens[i], rh[i]) == 0;
}

static void
walk_end(struct sim_node *n)
{
	mts_ae_free(n->ae);
	n->ae = NULL;
	n->walk_peer = -1;
	n->walk_wait = 0;
	n->walk_id++;
}

static void
walk_send(struct sim *s, struct sim_node *n, struct sim_msg *m)
{
	m->walk = n->walk_id;
	m->seq = ++n->walk_req;
	n->walk_wait = m->seq;
	n->walk_deadline = s->now + SIM_AE_TIMEOUT;
	sim_node_send(s, n, m);
}

/* walk_next: the next keys to pull, else the next pages, else done. */
static void
walk_next(struct sim *s, struct sim_node *n)
{
	struct mts_ae_key keys[SIM_KEY_BATCH];
	uint8_t hs[SIM_PAGE_BATCH][MTS_HASH_LEN];
	struct sim_msg *m;
	size_t k, i;

	if ((k = mts_ae_next_keys(n->ae, keys, SIM_KEY_BATCH, SIM_KEY_BYTES)) >
	    0) {
		m = sim_msg_new(K_REC_REQ, n->idx, n->walk_peer);
		m->keys = xmemdup(keys, k * sizeof(*keys));
		m->nkeys = k;
		for (i = 0; i < k; i++)
			m->bytes += keys[i].klen + 3;
		walk_send(s, n, m);
	} else if ((k = mts_ae_next_pages(n->ae, hs, SIM_PAGE_BATCH)) > 0) {
		m = sim_msg_new(K_PAGE_REQ, n->idx, n->walk_peer);
		m->hashes = xmemdup(hs, k * sizeof(*hs));
		m->nh = k;
		m->bytes = k * (MTS_HASH_LEN + 2);
		walk_send(s, n, m);
	} else {
		walk_end(n);
	}
}

static void
walk_start(struct sim *s, struct sim_node *n)
{
	uint8_t id[1][MTS_NODE_ID_LEN];

	n->next_ae = s->now + s->cfg.ae_interval;
	if (mts_swim_random_alive(n->swim, NULL, id, 1) != 1)
		return;
	n->walk_peer = idx_of(id[0]);
	walk_send(s, n, sim_msg_new(K_ROOT_REQ, n->idx, n->walk_peer));
}

static void
reply(struct sim *s, struct sim_node *n, const struct sim_msg *q,
    struct sim_msg *m)
{
	m->walk = q->walk;
	m->seq = q->seq;
	sim_node_send(s, n, m);
}

static void
serve_pages(struct sim *s, struct sim_node *n, const struct sim_msg *q)
{
	struct sim_msg *m = sim_msg_new(K_PAGE_REP, n->idx, q->from);
	size_t i,
	    k = q->nh > SIM_MAX_PAGES_SERVED ? SIM_MAX_PAGES_SERVED : q->nh;
	const uint8_t *enc;
	size_t len;

	m->pages = xcalloc(k ? k : 1, sizeof(*m->pages));
	for (i = 0; i < k; i++) {
		if (mts_mst_page(n->mst, q->hashes[i], &enc, &len) < 0)
			continue;
		memcpy(m->pages[m->npages].h, q->hashes[i], MTS_HASH_LEN);
		m->pages[m->npages].enc = xmemdup(enc, len);
		m->pages[m->npages].len = len;
		m->npages++;
		m->bytes += len + MTS_HASH_LEN + 4;
	}
	reply(s, n, q, m);
}

static void
serve_records(struct sim *s, struct sim_node *n, const struct sim_msg *q)
{
	struct sim_msg *m = sim_msg_new(K_REC_REP, n->idx, q->from);
	size_t i,
	    k = q->nkeys > SIM_MAX_KEYS_SERVED ? SIM_MAX_KEYS_SERVED : q->nkeys;
	const struct irec *r;

	m->recs = xcalloc(k ? k : 1, sizeof(*m->recs));
	for (i = 0; i < k; i++)
		if ((r = sim_store_get(n, q->keys[i].key, q->keys[i].klen)))
			m->recs[m->nrecs++] = sim_iref((struct irec *)r);
	m->bytes = recs_bytes(m->recs, m->nrecs);
	reply(s, n, q, m);
}

/* A walk's reply: only the one the walk waits for is taken, once (as
 * sync.c matches walk.req_id and clears it). */
static void
on_walk_reply(struct sim *s, struct sim_node *n, const struct sim_msg *m,
    struct mts_swim_out *out)
{
	struct mts_ae_local loc = { has_page, local_rh, n };
	uint8_t root[MTS_HASH_LEN];
	size_t i;

	if (n->walk_peer != m->from || m->walk != n->walk_id ||
	    n->walk_wait == 0 || m->seq != n->walk_wait)
		return;
	n->walk_wait = 0;
	if (m->kind == K_ROOT_REP) {
		n->ae = mts_ae_new(&loc);
		mts_mst_root(n->mst, root);
		if (mts_ae_start(n->ae, root, m->root) == 0) {
			walk_end(n);
			return;
		}
	} else if (m->kind == K_PAGE_REP) {
		for (i = 0; i < m->npages; i++)
			if (mts_ae_on_page(n->ae, m->pages[i].h,
			        m->pages[i].enc, m->pages[i].len) < 0) {
				walk_end(n);
				return;
			}
	} else {
		for (i = 0; i < m->nrecs; i++)
			if (sim_node_merge(s, n, m->recs[i])) {
				SIM_ST->by_ae++;
				learn_member(s, n, m->recs[i], out);
			}
	}
	walk_next(s, n);
}

/* --- delta push in (gd_push_flush, one push at a time) ------------------- */

static void
on_push(struct sim *s, struct sim_node *n, const struct sim_msg *m,
    struct mts_swim_out *out)
{
	struct irec *buf[16],
	    **fresh = m->nrecs <= 16
	    ? buf
	    : xreallocarray(NULL, m->nrecs, sizeof(*fresh));
	struct mts_delta_sent sent = { .n = 0 };
	size_t i, k = 0;

	for (i = 0; i < m->nrecs; i++)
		if (mts_seen_add_fp(n->seen, m->recs[i]->fp))
			fresh[k++] = m->recs[i];
	if (k > 0) {
		mts_delta_sent_add(&sent, s->node[m->from].id);
		for (i = 0; i < m->nsent; i++)
			mts_delta_sent_add(&sent, m->sent[i]);
		sim_push(s, n, fresh, k, &sent);
	}
	for (i = 0; i < k; i++)
		if (sim_node_merge(s, n, fresh[i])) {
			SIM_ST->by_push++;
			if (fresh[i]->track)
				sim_note_write(s, fresh[i], 1);
			learn_member(s, n, fresh[i], out);
		}
	if (fresh != buf)
		free(fresh);
}

/* --- the node's loop ----------------------------------------------------- */

void
sim_node_deliver(struct sim *s, struct sim_node *n, struct sim_msg *m)
{
	struct mts_swim_out out = { 0 };
	struct sim_msg *r;
	size_t i;

	for (i = 0; i < m->nup; i++)
		mts_swim_apply(n->swim, &m->up[i], s->now, &out);
	mts_swim_on_heard(n->swim, s->node[m->from].id, s->now, &out);
	switch (m->kind) {
	case K_PING:
		mts_swim_on_ping(n->swim, s->node[m->from].id, m->seq, s->now,
		    &out);
		break;
	case K_ACK:
		mts_swim_on_ack(n->swim, s->node[m->from].id, m->seq, s->now,
		    &out);
		break;
	case K_PINGREQ:
		mts_swim_on_pingreq(n->swim, s->node[m->from].id,
		    s->node[m->target].id, m->seq, s->now, &out);
		break;
	case K_PUSH:
		on_push(s, n, m, &out);
		break;
	case K_ROOT_REQ:
		r = sim_msg_new(K_ROOT_REP, n->idx, m->from);
		mts_mst_root(n->mst, r->root);
		r->bytes = MTS_HASH_LEN + 2;
		reply(s, n, m, r);
		break;
	case K_PAGE_REQ:
		serve_pages(s, n, m);
		break;
	case K_REC_REQ:
		serve_records(s, n, m);
		break;
	case K_ROOT_REP:
	case K_PAGE_REP:
	case K_REC_REP:
		on_walk_reply(s, n, m, &out);
		break;
	case K_PREPARE:
	case K_COMMIT:
		sim_sched_on_msg(s, n, m);
		break;
	case K_PREPARE_REP:
	case K_COMMIT_REP:
		if (s->recon)
			sim_recon_on_reply(s, n, m);
		else
			sim_sched_on_reply(s, n, m);
		break;
	case K_STOP:
		sim_recon_on_stop(s, n, m);
		break;
	default:
		break;
	}
	run_effects(s, n, &out);
	mts_swim_out_free(&out);
}

static void
next_tick(struct sim *s, struct sim_node *n, mts_time_t at)
{
	n->next_tick = at;
	sim_at(s, at, EV_TICK, n->idx, NULL, n);
}

/* The node's timers; a tick left over from a run before a crash is
 * ignored. */
void
sim_node_tick(struct sim *s, struct sim_node *n)
{
	struct mts_swim_out out = { 0 };

	if (s->now != n->next_tick)
		return;

	mts_swim_tick(n->swim, s->now, &out);
	run_effects(s, n, &out);
	mts_swim_out_free(&out);
	if (n->walk_peer >= 0 && s->now >= n->walk_deadline)
		walk_end(n);
	if (n->walk_peer < 0 && s->now >= n->next_ae)
		walk_start(s, n);
	if (s->sched)
		sim_sched_tick(s, n);
	if (s->recon)
		sim_recon_tick(s, n);
	next_tick(s, n, s->now + SIM_TICK_MS);
}

void
sim_node_init(struct sim *s, struct sim_node *n, int idx)
{
	uint8_t h[MTS_HASH_LEN];
	char seed[32];

	memset(n, 0, sizeof(*n));
	n->idx = idx;
	sim_nrand_seed(n, s->cfg.seed);
	mts_hash_init(&n->trace);
	snprintf(seed, sizeof(seed), "sim node %d", idx);
	mts_blake2b256(h, seed, strlen(seed));
	mts_put_u32be(n->id, (uint32_t)idx);
	memcpy(n->id + 4, h, MTS_NODE_ID_LEN - 4);
	mts_hex(n->hex, n->id, MTS_NODE_ID_LEN);
	n->mst = sim_mst_new();
	n->walk_peer = -1;
	sim_sched_init(n);
}

/* Starts (or restarts) the node's process: fresh cores, the disk kept.
 * Members come from the replicated list on disk, plus the bootstrap node
 * (-1: none) a joining node was given. */
void
sim_node_start(struct sim *s, struct sim_node *n, int bootstrap)
{
	struct mts_swim_cfg cfg;
	struct mts_swim_update self, u;
	struct mts_swim_out out = { 0 };
	char key[2 + MTS_NODE_HEX_LEN + 1], val[32];
	size_t i;

	mts_swim_cfg_defaults(&cfg);
	if (s->cfg.dead_probe >= 0)
		cfg.dead_probe_interval = s->cfg.dead_probe;
	if (s->cfg.gossip_interval >= 0)
		cfg.gossip_interval = s->cfg.gossip_interval;
	memset(&self, 0, sizeof(self));
	memcpy(self.id, n->id, MTS_NODE_ID_LEN);
	snprintf(self.addr, sizeof(self.addr), "sim:%d", n->idx);
	snprintf(self.name, sizeof(self.name), "n%d", n->idx);
	/* gossipd passes wall-clock seconds: it grows across restarts */
	n->life_inc = (SIM_WALL_BASE + (uint64_t)s->now) / 1000;
	self.inc = n->life_inc;
	n->swim = mts_swim_new(&cfg, &self, sim_nrand(n), s->now);
	n->seen = mts_seen_new(65536);
	n->hlc.last = 0;
	n->up = 1;
	n->next_ae = s->now + sim_nrand_int(n, (int)s->cfg.ae_interval);
	n->walk_peer = -1;
	s->nup++;
	for (i = 0; i < n->nents; i++)
		learn_member(s, n, n->ents[i], &out);
	if (bootstrap >= 0 && bootstrap != n->idx) {
		memset(&u, 0, sizeof(u));
		memcpy(u.id, s->node[bootstrap].id, MTS_NODE_ID_LEN);
		snprintf(u.addr, sizeof(u.addr), "sim:%d", bootstrap);
		snprintf(u.name, sizeof(u.name), "n%d", bootstrap);
		mts_swim_learn(n->swim, &u, s->now, &out);
	}
	run_effects(s, n, &out);
	mts_swim_out_free(&out);
	if (!n->ever_started) {
		member_record(n, key, sizeof(key), val, sizeof(val));
		if (sim_node_write(s, n, key, (const uint8_t *)val, strlen(val),
		        NULL) < 0)
			sim_fail(s, "node %d: its member record was refused",
			    n->idx);
	}
	n->ever_started = 1;
	sim_ntrace(s, n, 3, n->idx, 0, n->life_inc);
	next_tick(s, n, s->now + 1 + sim_nrand_int(n, SIM_TICK_MS));
}

void
sim_node_preload(struct sim *s)
{
	char key[2 + MTS_NODE_HEX_LEN + 1], val[32];
	struct irec *r;
	int i, j;

	for (i = 0; i < s->n; i++) {
		struct sim_node *n = &s->node[i];

		member_record(n, key, sizeof(key), val, sizeof(val));
		if (local_put(s, n, key, (const uint8_t *)val, strlen(val),
		        &r) < 0)
			abort(); /* a node's own member record */
		for (j = 0; j < s->n; j++)
			if (j != i)
				store_put(s, &s->node[j], sim_iref(r));
		sim_iunref(r);
		n->ever_started = 1;
	}
}

/* The process dies: everything in memory goes, the disk stays. */
void
sim_node_crash(struct sim *s, struct sim_node *n)
{
	if (!n->up)
		return;
	walk_end(n);
	sim_recon_crash(n);
	mts_swim_free(n->swim);
	mts_seen_free(n->seen);
	n->swim = NULL;
	n->seen = NULL;
	n->up = 0;
	s->nup--;
	sim_ntrace(s, n, 4, n->idx, 0, 0);
}

void
sim_node_free(struct sim_node *n)
{
	size_t i;

	mts_ae_free(n->ae);
	mts_swim_free(n->swim);
	mts_seen_free(n->seen);
	for (i = 0; i < n->nents; i++)
		sim_iunref(n->ents[i]);
	free(n->ents);
	mts_mst_free(n->mst);
	mts_ledger_free(&n->ledger);
	free(n->infl);
	free(n->own);
}
