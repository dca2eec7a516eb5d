/* swim_core.c: SWIM failure detector and membership dissemination (incarnations, indirect probes, suspicion, refutation), pure and seeded. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/gossipd/swim_core.h"
#include "xmalloc.h"

#define MAX_RELAYS 64

struct member {
	struct mts_swim_member pub;
	int bcast_left;    /* transmissions of its current update still owed */
	int own_suspicion; /* suspected by this node's own probe */
	uint32_t bpos;     /* 1 + its place in bh; 0: owes nothing */
	int hinted;        /* probed for a stale rumour at hint_inc */
	uint64_t hint_inc;
};

struct relay {
	uint64_t my_seq;
	uint64_t orig_seq;
	uint8_t from[MTS_NODE_ID_LEN];
	uint8_t target[MTS_NODE_ID_LEN];
	mts_time_t expires;
};

struct mts_swim {
	struct mts_swim_cfg cfg;
	struct member *m; /* m[0] is this node */
	size_t n, cap;
	/* members by id: open addressing, 1 + index into m in the low 32
	 * bits (0 empty) and 32 bits of the id's hash above, so that a probe
	 * past other members does not read their entries; at most half full
	 * (every message looks members up: a scan of m cost O(N) a message,
	 * 1,000 memcmp at 1,000 members; then each slot passed read a
	 * member, a fifth of mts-sim's time at 1,000 nodes in cache misses) */
	uint64_t *slot;
	size_t nslots;
	/* the members owing transmissions (bcast_left > 0), a binary heap
	 * in the piggyback's order (bkey): a message's updates are the
	 * first few popped, O(log owed) each. A list of them, passed whole
	 * for every message, cost O(owed) a message: up to N after a
	 * whole-cluster restart; a pass over every member before that was a
	 * fifth of mts-sim's time at 1,000 nodes. */
	uint64_t *bh;
	size_t nbh, capbh;
	size_t nsuspect; /* members held suspect */
	size_t ndead;    /* members held dead: while none is suspect or
			    dead a message's piggyback need not look its
			    destination up */
	uint64_t rng;
	uint64_t seq;
	/* the probe in flight */
	int active, acked, indirect_sent;
	uint8_t target[MTS_NODE_ID_LEN];
	uint64_t probe_seq;
	mts_time_t direct_deadline, probe_end, next_probe;
	mts_time_t next_dead_probe, next_gossip;
	size_t dead_pos; /* the dead member probed last (probe_dead) */
	/* a member to probe next, out of turn (its connection dropped) */
	int has_urgent;
	uint8_t urgent[MTS_NODE_ID_LEN];
	/* a member held alive that others suspect or hold dead at an older
	 * incarnation (stale_hint): probed next, but not twice in a row */
	int has_hint, last_hint;
	uint8_t hint[MTS_NODE_ID_LEN];
	/* this node refuted a rumour of its own on the message being
	 * handled (answer_due), and owes its sender, answer, its own state
	 * on the next message there (has_answer): see mts_swim_on_heard */
	int answer_due, has_answer;
	uint8_t answer[MTS_NODE_ID_LEN];
	/* round-robin probe order (member ids, shuffled each round) */
	uint8_t (*order)[MTS_NODE_ID_LEN];
	size_t norder, order_pos;
	struct relay relays[MAX_RELAYS];
	size_t nrelays;
	/* members removed from the cluster (mts_swim_remove), whose updates
	 * are refused until mts_swim_learn names them again; looked at only
	 * for an id not in the table (members that dead_reclaim forgot are
	 * not here: they come back with their news) */
	uint8_t (*gone)[MTS_NODE_ID_LEN];
	size_t ngone, capgone;
};

/* --- helpers ------------------------------------------------------------ */

static size_t random_members(struct mts_swim *, unsigned states,
    const uint8_t *except, uint8_t (*out)[MTS_NODE_ID_LEN], size_t max);
static void forget(struct mts_swim *, const uint8_t id[MTS_NODE_ID_LEN]);

static uint64_t
rnd(struct mts_swim *s)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dull;
}

static struct mts_swim_effect *
push(struct mts_swim_out *out, enum mts_swim_eff_type t)
{
	struct mts_swim_effect *e;

	if (out->n == out->cap) {
		out->cap = out->cap ? out->cap * 2 : 16;
		out->e = xreallocarray(out->e, out->cap, sizeof(*out->e));
	}
	e = &out->e[out->n++];
	memset(e, 0, sizeof(*e));
	e->type = t;
	return e;
}

void
mts_swim_out_reset(struct mts_swim_out *out)
{
	out->n = 0;
}

void
mts_swim_out_free(struct mts_swim_out *out)
{
	free(out->e);
	memset(out, 0, sizeof(*out));
}

#define SLOT_IDX(v) ((uint32_t)(v))

static uint64_t
id_hash(const uint8_t id[MTS_NODE_ID_LEN])
{
	uint64_t a, b, h;

	memcpy(&a, id, 8);
	memcpy(&b, id + 8, 8);
	h = a ^ (b * 0x9e3779b97f4a7c15ull);
	return h ^ (h >> 29);
}

/*
 * A member's address and name, kept in one block sized to fit
 * ("addr\0name\0"); each truncated as a 64-byte buffer would hold it.
 * Either may be the one held.
 */
static void
set_info(struct member *m, const char *addr, const char *name)
{
	size_t la, ln;
	char *b;

	la = strnlen(addr, MTS_SWIM_ADDR_MAX - 1);
	ln = strnlen(name, MTS_SWIM_NAME_MAX - 1);
	if (m->pub.u.addr != NULL && strncmp(m->pub.u.addr, addr, la) == 0 &&
	    m->pub.u.addr[la] == '\0' &&
	    strncmp(m->pub.u.name, name, ln) == 0 && m->pub.u.name[ln] == '\0')
		return;
	b = xmalloc(la + ln + 2);
	memcpy(b, addr, la);
	b[la] = '\0';
	memcpy(b + la + 1, name, ln);
	b[la + 1 + ln] = '\0';
	free((char *)m->pub.u.addr);
	m->pub.u.addr = b;
	m->pub.u.name = b + la + 1;
}

void
mts_swim_member_update(const struct mts_swim_member *m,
    struct mts_swim_update *u)
{
	/* both are at most 63 bytes (set_info): no check, no scan for the
	 * format (a gossip message copies 8 members) */
	memset(u, 0, sizeof(*u));
	memcpy(u->id, m->u.id, MTS_NODE_ID_LEN);
	memcpy(u->addr, m->u.addr, strlen(m->u.addr) + 1);
	memcpy(u->name, m->u.name, strlen(m->u.name) + 1);
	u->state = m->u.state;
	u->inc = m->u.inc;
}

/* The slot of id in the index: where it is, or the empty slot ending
 * its probe sequence. */
static size_t
id_slot(const struct mts_swim *s, const uint8_t id[MTS_NODE_ID_LEN])
{
	uint64_t h = id_hash(id), tag = h >> 32;
	size_t i;

	for (i = (size_t)h & (s->nslots - 1); s->slot[i] != 0;
	     i = (i + 1) & (s->nslots - 1))
		if (s->slot[i] >> 32 == tag &&
		    memcmp(s->m[SLOT_IDX(s->slot[i]) - 1].pub.u.id, id,
		        MTS_NODE_ID_LEN) == 0)
			break;
	return i;
}

/* Fills slot i with member i0 (an index into m). */
static void
slot_set(struct mts_swim *s, size_t i, size_t i0)
{
	s->slot[i] =
	    (id_hash(s->m[i0].pub.u.id) >> 32) << 32 | (uint64_t)(i0 + 1);
}

/* Builds the index again for the members as they are. */
static void
reindex(struct mts_swim *s)
{
	size_t i;

	for (s->nslots = 16; s->nslots < 2 * s->cap; s->nslots *= 2)
		;
	free(s->slot);
	s->slot = xcalloc(s->nslots, sizeof(*s->slot));
	for (i = 0; i < s->n; i++)
		slot_set(s, id_slot(s, s->m[i].pub.u.id), i);
}

static struct member *
find(const struct mts_swim *s, const uint8_t id[MTS_NODE_ID_LEN])
{
	size_t i = id_slot(s, id);

	return s->slot[i] ? &s->m[SLOT_IDX(s->slot[i]) - 1] : NULL;
}

static int
retransmits(const struct mts_swim *s)
{
	return s->cfg.retransmit_mult * (int)ceil(log10((double)s->n + 1));
}

/*
 * The piggyback's order, least sent first: more transmissions owed
 * first, then the member table's order, which puts this node's own
 * update (m[0]) first among equals: a refutation is the news that
 * matters most to the one who hears it. As a heap key, smallest first:
 * the owed count inverted above the member's index.
 */
static uint64_t
bkey(const struct mts_swim *s, const struct member *m)
{
	return (uint64_t)(UINT32_MAX - (uint32_t)m->bcast_left) << 32 |
	    (uint32_t)(m - s->m);
}

static void
bh_put(struct mts_swim *s, size_t pos, uint64_t key)
{
	s->bh[pos] = key;
	s->m[(uint32_t)key].bpos = (uint32_t)pos + 1;
}

/* Restores the heap around pos, whose key changed. */
static void
bh_fix(struct mts_swim *s, size_t pos)
{
	uint64_t key = s->bh[pos];
	size_t c;

	for (; pos > 0 && key < s->bh[(pos - 1) / 2]; pos = (pos - 1) / 2)
		bh_put(s, pos, s->bh[(pos - 1) / 2]);
	for (; (c = 2 * pos + 1) < s->nbh; pos = c) {
		if (c + 1 < s->nbh && s->bh[c + 1] < s->bh[c])
			c++;
		if (key < s->bh[c])
			break;
		bh_put(s, pos, s->bh[c]);
	}
	bh_put(s, pos, key);
}

/* m owes transmissions: into the heap, or moved within it. */
static void
bh_set(struct mts_swim *s, struct member *m)
{
	if (m->bpos == 0) {
		if (s->nbh == s->capbh) {
			s->capbh = s->capbh ? 2 * s->capbh : 64;
			s->bh = xreallocarray(s->bh, s->capbh, sizeof(*s->bh));
		}
		m->bpos = (uint32_t)++s->nbh;
	}
	s->bh[m->bpos - 1] = bkey(s, m);
	bh_fix(s, m->bpos - 1);
}

/* Takes the first member out of the heap (there is one). */
static struct member *
bh_pop(struct mts_swim *s)
{
	struct member *m = &s->m[(uint32_t)s->bh[0]];

	m->bpos = 0;
	if (--s->nbh > 0) {
		s->bh[0] = s->bh[s->nbh];
		bh_fix(s, 0);
	}
	return m;
}

/* The heap again from the table (after members moved). */
static void
bh_rebuild(struct mts_swim *s)
{
	size_t i;

	s->nbh = 0;
	for (i = 0; i < s->n; i++) {
		s->m[i].bpos = 0;
		if (s->m[i].bcast_left > 0)
			bh_set(s, &s->m[i]);
	}
}

static void
queue_bcast(struct mts_swim *s, struct member *m)
{
	m->bcast_left = retransmits(s);
	bh_set(s, m);
}

static void
emit_event(struct member *m, int news, struct mts_swim_out *out)
{
	struct mts_swim_effect *e = push(out, MTS_SWIM_EVENT);

	mts_swim_member_update(&m->pub, &e->update);
	e->news = news;
}

/* Keeps the counts of suspects (expire and the next deadline skip the
 * scan when there is none) and of the dead. */
static void
put_state(struct mts_swim *s, struct member *m, enum mts_swim_state st)
{
	s->nsuspect -= m->pub.u.state == MTS_SWIM_SUSPECT;
	s->nsuspect += st == MTS_SWIM_SUSPECT;
	s->ndead -= m->pub.u.state == MTS_SWIM_DEAD;
	s->ndead += st == MTS_SWIM_DEAD;
	m->pub.u.state = st;
}

/* news: this node found it out itself (its own probe failed, or the
 * suspicion its own probe raised ran out), not from someone's gossip. */
static void
set_state(struct mts_swim *s, struct member *m, enum mts_swim_state st,
    uint64_t inc, int news, mts_time_t now, struct mts_swim_out *out)
{
	int changed = m->pub.u.state != st;

	put_state(s, m, st);
	m->pub.u.inc = inc;
	if (st == MTS_SWIM_SUSPECT && changed)
		m->pub.suspect_until = now + mts_swim_suspicion_timeout(s);
	if (st != MTS_SWIM_SUSPECT)
		m->own_suspicion = 0;
	if (changed) {
		m->pub.since = now;
		emit_event(m, news && st != MTS_SWIM_ALIVE, out);
	}
	queue_bcast(s, m);
}

/* --- lifecycle ---------------------------------------------------------- */

void
mts_swim_cfg_defaults(struct mts_swim_cfg *c)
{
	c->probe_interval = 1000;
	c->probe_timeout = 500;
	c->indirect = 3;
	c->suspicion_mult = 4;
	c->retransmit_mult = 4;
	c->dead_reclaim = 0;
	c->dead_probe_interval = 1000;
	c->gossip_interval = 200;
	c->gossip_fanout = 3;
}

/*
 * A member learned in the middle of a probe round goes into the rest of
 * the round at a random place (as SWIM's paper has it), not only into the
 * next round: a round is as many seconds as there are members, and after
 * a cluster's nodes joined one by one each node's round held those it knew
 * when the round began, so a node that joined late and crashed was probed
 * by nobody — 3 of 10 crashed nodes of 200 in mts-sim were held alive by
 * all 20 s later.
 */
static void
order_insert(struct mts_swim *s, const uint8_t id[MTS_NODE_ID_LEN])
{
	size_t j;

	if (s->order == NULL)
		return; /* no round yet: the first takes every member */
	s->order = xreallocarray(s->order, s->norder + 1, sizeof(*s->order));
	j = s->order_pos + (size_t)(rnd(s) % (s->norder - s->order_pos + 1));
	memcpy(s->order[s->norder], s->order[j], MTS_NODE_ID_LEN);
	memcpy(s->order[j], id, MTS_NODE_ID_LEN);
	s->norder++;
}

static struct member *
add_member(struct mts_swim *s, const struct mts_swim_update *u, mts_time_t now)
{
	struct member *m;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->m = xreallocarray(s->m, s->cap, sizeof(*s->m));
		reindex(s);
	}
	m = &s->m[s->n++];
	memset(m, 0, sizeof(*m));
	memcpy(m->pub.u.id, u->id, MTS_NODE_ID_LEN);
	m->pub.u.state = u->state;
	m->pub.u.inc = u->inc;
	set_info(m, u->addr, u->name);
	m->pub.since = now;
	m->pub.last_seen = now;
	s->nsuspect += u->state == MTS_SWIM_SUSPECT;
	s->ndead += u->state == MTS_SWIM_DEAD;
	slot_set(s, id_slot(s, u->id), s->n - 1);
	if (s->n > 1)
		order_insert(s, u->id);
	return m;
}

struct mts_swim *
mts_swim_new(const struct mts_swim_cfg *cfg, const struct mts_swim_update *self,
    uint64_t seed, mts_time_t now)
{
	struct mts_swim *s = xcalloc(1, sizeof(*s));
	struct member *me;

	s->cfg = *cfg;
	s->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	me = add_member(s, self, now);
	put_state(s, me, MTS_SWIM_ALIVE);
	me->pub.is_self = 1;
	queue_bcast(s, me);
	s->next_probe = now;
	s->next_dead_probe = now + cfg->dead_probe_interval;
	s->next_gossip = now + cfg->gossip_interval;
	return s;
}

void
mts_swim_free(struct mts_swim *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		free((char *)s->m[i].pub.u.addr);
	free(s->m);
	free(s->slot);
	free(s->order);
	free(s->bh);
	free(s->gone);
	free(s);
}

/* --- probing ------------------------------------------------------------ */

static int
probeable(const struct member *m)
{
	return !m->pub.is_self &&
	    (m->pub.u.state == MTS_SWIM_ALIVE ||
	        m->pub.u.state == MTS_SWIM_SUSPECT);
}

static void
reshuffle(struct mts_swim *s)
{
	size_t i, j;
	uint8_t t[MTS_NODE_ID_LEN];

	s->order = xreallocarray(s->order, s->n ? s->n : 1, sizeof(*s->order));
	s->norder = 0;
	for (i = 0; i < s->n; i++)
		if (probeable(&s->m[i]))
			memcpy(s->order[s->norder++], s->m[i].pub.u.id,
			    MTS_NODE_ID_LEN);
	for (i = s->norder; i > 1; i--) {
		j = rnd(s) % i;
		memcpy(t, s->order[i - 1], MTS_NODE_ID_LEN);
		memcpy(s->order[i - 1], s->order[j], MTS_NODE_ID_LEN);
		memcpy(s->order[j], t, MTS_NODE_ID_LEN);
	}
	s->order_pos = 0;
}

static struct member *
next_target(struct mts_swim *s)
{
	struct member *m;
	int rounds = 0;

	if (s->has_urgent) {
		s->has_urgent = 0;
		if ((m = find(s, s->urgent)) != NULL && probeable(m))
			return m;
	}
	if (s->has_hint && !s->last_hint) {
		s->has_hint = 0;
		s->last_hint = 1;
		if ((m = find(s, s->hint)) != NULL && probeable(m))
			return m;
	}
	s->last_hint = 0;
	while (rounds < 2) {
		if (s->order_pos >= s->norder) {
			reshuffle(s);
			rounds++;
		}
		while (s->order_pos < s->norder) {
			m = find(s, s->order[s->order_pos++]);
			if (m && probeable(m))
				return m;
		}
	}
	return NULL;
}

static void
start_probe(struct mts_swim *s, mts_time_t now, struct mts_swim_out *out)
{
	struct member *m = next_target(s);
	struct mts_swim_effect *e;

	s->next_probe = now + s->cfg.probe_interval;
	if (m == NULL)
		return;
	s->active = 1;
	s->acked = 0;
	s->indirect_sent = 0;
	memcpy(s->target, m->pub.u.id, MTS_NODE_ID_LEN);
	s->probe_seq = ++s->seq;
	s->direct_deadline = now + s->cfg.probe_timeout;
	s->probe_end = now + s->cfg.probe_interval;
	e = push(out, MTS_SWIM_SEND_PING);
	memcpy(e->to, s->target, MTS_NODE_ID_LEN);
	e->seq = s->probe_seq;
}

static void
send_indirect(struct mts_swim *s, struct mts_swim_out *out)
{
	uint8_t ids[16][MTS_NODE_ID_LEN];
	size_t k, i, max = (size_t)s->cfg.indirect;
	struct mts_swim_effect *e;

	if (max > 16)
		max = 16;
	k = mts_swim_random_alive(s, s->target, ids, max);
	for (i = 0; i < k; i++) {
		e = push(out, MTS_SWIM_SEND_PINGREQ);
		memcpy(e->to, ids[i], MTS_NODE_ID_LEN);
		memcpy(e->target, s->target, MTS_NODE_ID_LEN);
		e->seq = s->probe_seq;
	}
	s->indirect_sent = 1;
}

static void
probe_failed(struct mts_swim *s, mts_time_t now, struct mts_swim_out *out)
{
	struct member *m = find(s, s->target);

	s->active = 0;
	if (m && m->pub.u.state == MTS_SWIM_ALIVE) {
		set_state(s, m, MTS_SWIM_SUSPECT, m->pub.u.inc, 1, now, out);
		m->own_suspicion = 1;
	}
}

static void
expire(struct mts_swim *s, mts_time_t now, struct mts_swim_out *out)
{
	size_t i;

	for (i = 1; s->nsuspect > 0 && i < s->n; i++) {
		struct member *m = &s->m[i];

		if (m->pub.u.state == MTS_SWIM_SUSPECT &&
		    now >= m->pub.suspect_until)
			set_state(s, m, MTS_SWIM_DEAD, m->pub.u.inc,
			    m->own_suspicion, now, out);
	}
	for (i = 1; s->cfg.dead_reclaim > 0 && i < s->n; i++) {
		struct member *m = &s->m[i];

		if ((m->pub.u.state == MTS_SWIM_DEAD ||
		        m->pub.u.state == MTS_SWIM_LEFT) &&
		    now - m->pub.since >= s->cfg.dead_reclaim &&
		    m->bcast_left == 0) {
			forget(s, m->pub.u.id);
			i--;
		}
	}
	for (i = 0; i < s->nrelays;) {
		if (s->relays[i].expires <= now)
			s->relays[i] = s->relays[--s->nrelays];
		else
			i++;
	}
}

/*
 * SWIM never probes a dead member, so without this a member held dead by
 * mistake (both sides of a partition, a restart nobody heard of) stays
 * dead for good. Every dead_probe_interval the next dead members in turn
 * (not those that left) get a ping outside the probe round: its outcome
 * changes nothing, but the ping carries the member's own death
 * (mts_swim_gossip puts it first), the member refutes in its ack, and
 * on_heard gossips again what the member itself is held to be. In turn,
 * one per DEAD_PROBE_CYCLE dead members at a time (at most
 * DEAD_PROBE_MAX), so that each is tried within DEAD_PROBE_CYCLE
 * intervals: a few dead, one ping an interval; the other half of 100
 * nodes after a partition, 10.
 */
#define DEAD_PROBE_CYCLE 5
#define DEAD_PROBE_MAX 16

static void
probe_dead(struct mts_swim *s, mts_time_t now, struct mts_swim_out *out)
{
	struct mts_swim_effect *e;
	size_t i, k, ndead = 0, want, sent = 0;

	s->next_dead_probe = now + s->cfg.dead_probe_interval;
	for (i = 1; i < s->n; i++)
		ndead += s->m[i].pub.u.state == MTS_SWIM_DEAD;
	want = (ndead + DEAD_PROBE_CYCLE - 1) / DEAD_PROBE_CYCLE;
	if (want > DEAD_PROBE_MAX)
		want = DEAD_PROBE_MAX;
	for (k = 1; k < s->n && sent < want; k++) {
		i = 1 + (s->dead_pos + k - 1) % (s->n - 1);
		if (s->m[i].pub.u.state != MTS_SWIM_DEAD)
			continue;
		e = push(out, MTS_SWIM_SEND_PING);
		memcpy(e->to, s->m[i].pub.u.id, MTS_NODE_ID_LEN);
		e->seq = ++s->seq;
		sent++;
	}
	if (sent > 0)
		s->dead_pos = 1 + (s->dead_pos + k - 2) % (s->n - 1);
}

/* Updates owed to the cluster go out on their own messages too, not only
 * on the probes' (memberlist's gossip interval), to alive and suspect
 * members; and while any member is held suspect, one of them at random
 * is sent a message too, which carries its own suspicion first
 * (mts_swim_gossip), so that it refutes. Nothing else picks a suspect
 * (push, news and indirect probes go to alive members): a suspicion this
 * node alone raised just before a heal reached its member only when a
 * probe round came to it, long after it had run out into a false death
 * (mts-sim's short set). */
static void
gossip_round(struct mts_swim *s, mts_time_t now, struct mts_swim_out *out)
{
	uint8_t ids[16][MTS_NODE_ID_LEN];
	struct mts_swim_effect *e;
	size_t i, k, max = (size_t)s->cfg.gossip_fanout;

	s->next_gossip = now + s->cfg.gossip_interval;
	k = 0;
	if (s->nsuspect > 0)
		k = random_members(s, 1u << MTS_SWIM_SUSPECT, NULL, ids, 1);
	if (s->nbh > 0)
		k += random_members(s,
		    1u << MTS_SWIM_ALIVE | 1u << MTS_SWIM_SUSPECT,
		    k ? ids[0] : NULL, ids + k, max > 15 ? 15 : max);
	for (i = 0; i < k; i++) {
		e = push(out, MTS_SWIM_SEND_GOSSIP);
		memcpy(e->to, ids[i], MTS_NODE_ID_LEN);
	}
}

void
mts_swim_tick(struct mts_swim *s, mts_time_t now, struct mts_swim_out *out)
{
	expire(s, now, out);
	if (s->cfg.dead_probe_interval > 0 && now >= s->next_dead_probe)
		probe_dead(s, now, out);
	if (s->cfg.gossip_interval > 0 && s->cfg.gossip_fanout > 0 &&
	    now >= s->next_gossip)
		gossip_round(s, now, out);
	if (s->active) {
		if (!s->acked && !s->indirect_sent && now >= s->direct_deadline)
			send_indirect(s, out);
		if (now >= s->probe_end)
			probe_failed(s, now, out);
	}
	if (!s->active && now >= s->next_probe)
		start_probe(s, now, out);
}

mts_time_t
mts_swim_next_deadline(const struct mts_swim *s)
{
	mts_time_t d = s->next_probe;
	size_t i;

	if (s->active) {
		if (!s->indirect_sent && s->direct_deadline < d)
			d = s->direct_deadline;
		if (s->probe_end < d)
			d = s->probe_end;
	}
	for (i = 1; s->nsuspect > 0 && i < s->n; i++)
		if (s->m[i].pub.u.state == MTS_SWIM_SUSPECT &&
		    s->m[i].pub.suspect_until < d)
			d = s->m[i].pub.suspect_until;
	if (s->cfg.dead_probe_interval > 0 && s->next_dead_probe < d)
		d = s->next_dead_probe;
	if (s->cfg.gossip_interval > 0 && s->cfg.gossip_fanout > 0 &&
	    (s->nbh > 0 || s->nsuspect > 0) && s->next_gossip < d)
		d = s->next_gossip;
	return d;
}

/* --- messages ----------------------------------------------------------- */

void
mts_swim_on_heard(struct mts_swim *s, const uint8_t from[MTS_NODE_ID_LEN],
    mts_time_t now, struct mts_swim_out *out)
{
	struct member *m = find(s, from);
	struct mts_swim_effect *e;
	int due = s->answer_due;

	s->answer_due = 0;
	if (m == NULL)
		return;
	m->pub.last_seen = now;
	/* The message carried a suspicion or death of this node (refute): its
	 * sender holds it, and may be the last one who does — the others
	 * heard the refutation, so the one announced again goes no further
	 * than this node's own few transmissions to random members. A
	 * suspecter that missed the refutation told its suspect every few
	 * hundred ms for the whole suspicion timeout and declared it dead
	 * (mts-sim short --nodes 100 --seed 34: eleven live nodes 6.1 to
	 * 8.2 s after the heal, told 4 to 38 times each). So the sender gets
	 * a message of its own, which carries this node's state first. */
	if (due) {
		memcpy(s->answer, from, MTS_NODE_ID_LEN);
		s->has_answer = 1;
		e = push(out, MTS_SWIM_SEND_GOSSIP);
		memcpy(e->to, from, MTS_NODE_ID_LEN);
	}
	/* A member we hold suspect or dead that talks to us may not know:
	 * the news of its fall can be long disseminated, and nobody probes a
	 * dead member. Our reply tells it (mts_swim_gossip puts a suspect or
	 * dead destination's own state first) and it refutes with a higher
	 * incarnation. The news is not gossiped to everyone again: the
	 * member's own side, which hears it alive, would take the stale news
	 * for the latest and hold it dead until the refutation catches up
	 * (a healed partition's first words across did that, and owners
	 * placed replacements of tasks that never stopped). */
}

void
mts_swim_on_ping(struct mts_swim *s, const uint8_t from[MTS_NODE_ID_LEN],
    uint64_t seq, mts_time_t now, struct mts_swim_out *out)
{
	struct mts_swim_effect *e;

	mts_swim_on_heard(s, from, now, out);
	/* the ack is the answer on_heard owes, if any: one message */
	e = out->n > 0 ? &out->e[out->n - 1] : NULL;
	if (e == NULL || e->type != MTS_SWIM_SEND_GOSSIP ||
	    memcmp(e->to, from, MTS_NODE_ID_LEN) != 0)
		e = push(out, MTS_SWIM_SEND_ACK);
	e->type = MTS_SWIM_SEND_ACK;
	memcpy(e->to, from, MTS_NODE_ID_LEN);
	e->seq = seq;
}

void
mts_swim_on_ack(struct mts_swim *s, const uint8_t from[MTS_NODE_ID_LEN],
    uint64_t seq, mts_time_t now, struct mts_swim_out *out)
{
	struct mts_swim_effect *e;
	size_t i;

	mts_swim_on_heard(s, from, now, out);
	if (s->active && seq == s->probe_seq) {
		s->acked = 1;
		s->active = 0;
		mts_swim_on_heard(s, s->target, now, out);
		return;
	}
	for (i = 0; i < s->nrelays; i++) {
		if (s->relays[i].my_seq != seq)
			continue;
		e = push(out, MTS_SWIM_SEND_ACK);
		memcpy(e->to, s->relays[i].from, MTS_NODE_ID_LEN);
		e->seq = s->relays[i].orig_seq;
		s->relays[i] = s->relays[--s->nrelays];
		return;
	}
}

void
mts_swim_on_pingreq(struct mts_swim *s, const uint8_t from[MTS_NODE_ID_LEN],
    const uint8_t target[MTS_NODE_ID_LEN], uint64_t seq, mts_time_t now,
    struct mts_swim_out *out)
{
	struct mts_swim_effect *e;
	struct relay *r;

	mts_swim_on_heard(s, from, now, out);
	if (memcmp(target, s->m[0].pub.u.id, MTS_NODE_ID_LEN) == 0 ||
	    s->nrelays == MAX_RELAYS)
		return;
	r = &s->relays[s->nrelays++];
	r->my_seq = ++s->seq;
	r->orig_seq = seq;
	memcpy(r->from, from, MTS_NODE_ID_LEN);
	memcpy(r->target, target, MTS_NODE_ID_LEN);
	r->expires = now + s->cfg.probe_interval;
	e = push(out, MTS_SWIM_SEND_PING);
	memcpy(e->to, target, MTS_NODE_ID_LEN);
	e->seq = r->my_seq;
}

void
mts_swim_on_unreachable(struct mts_swim *s, const uint8_t to[MTS_NODE_ID_LEN],
    mts_time_t now, struct mts_swim_out *out)
{
	struct member *m = find(s, to);
	size_t i;

	/* a dead member's ping failing (probe_dead) is no news */
	if (m == NULL || !probeable(m))
		return;
	if (s->active && memcmp(s->target, to, MTS_NODE_ID_LEN) == 0) {
		if (!s->acked && !s->indirect_sent)
			send_indirect(s, out);
		if (s->probe_end > now + s->cfg.probe_timeout)
			s->probe_end = now + s->cfg.probe_timeout;
		return;
	}
	/* Not worth a probe out of turn: a member already suspect (its
	 * suspicion runs), or one we only pinged for another's indirect
	 * probe (that probe is the other's). Each relay of a crashed
	 * member's ping-reqs probed it at once, whose ping-reqs made more
	 * relays probe it: a few crashed members drew every probe of 200
	 * nodes for seconds (up to 1,865 pings each in 11 s in mts-sim),
	 * and the round-robin of the others stopped — a crashed member
	 * that nobody was probing stayed alive everywhere for 20 s. */
	if (m->pub.u.state == MTS_SWIM_SUSPECT)
		return;
	for (i = 0; i < s->nrelays; i++)
		if (memcmp(s->relays[i].target, to, MTS_NODE_ID_LEN) == 0)
			return;
	memcpy(s->urgent, to, MTS_NODE_ID_LEN);
	s->has_urgent = 1;
	if (!s->active)
		s->next_probe = now;
}

/* --- updates ------------------------------------------------------------ */

static void
refute(struct mts_swim *s, const struct mts_swim_update *u)
{
	struct member *me = &s->m[0];

	if (me->pub.u.state == MTS_SWIM_LEFT || u->state == MTS_SWIM_ALIVE)
		return;
	/* held suspect or dead: refute with a higher incarnation, or, if
	 * the rumour is older than our incarnation (whoever holds it missed
	 * our last refutation, long spent), announce the current one again */
	if (u->inc >= me->pub.u.inc)
		me->pub.u.inc = u->inc + 1;
	queue_bcast(s, me);
	s->answer_due = 1;
}

static void
copy_info(struct member *m, const struct mts_swim_update *u)
{
	set_info(m, u->addr[0] ? u->addr : m->pub.u.addr,
	    u->name[0] ? u->name : m->pub.u.name);
}

/*
 * SWIM's precedence rules: an update with a larger incarnation always
 * overrides; at the same incarnation, only a worse state does (suspect over
 * alive, dead over alive and suspect, left over any other). Rows are the
 * update's state, columns the state held.
 */
static const unsigned char
    same_inc_overrides[MTS_SWIM_LEFT + 1][MTS_SWIM_LEFT + 1] = {
	    /*                   ALIVE SUSPECT DEAD LEFT */
	    [MTS_SWIM_ALIVE] = { 0, 0, 0, 0 },
	    [MTS_SWIM_SUSPECT] = { 1, 0, 0, 0 },
	    [MTS_SWIM_DEAD] = { 1, 1, 0, 0 },
	    [MTS_SWIM_LEFT] = { 1, 1, 1, 0 },
    };

/* Whether update u overrides what m holds (u->state is checked by the
 * caller, m's state is always one of the four). */
static int
overrides(const struct member *m, const struct mts_swim_update *u)
{
	uint64_t inc = m->pub.u.inc;

	if (u->inc != inc)
		return u->inc > inc;
	return same_inc_overrides[u->state][m->pub.u.state];
}

/*
 * A suspicion or death of a member we hold alive at a newer incarnation
 * is stale, and ignored; but it can be a real failure seen by a member
 * that never heard the newer incarnation: a member learned from the
 * replicated member list is held at incarnation 0 until its own alive
 * update reaches us, and a node that joined after that update was spent
 * never hears it. Its correct detection then convinced only those holding
 * incarnation 0; the others waited for their own probe of the member,
 * once a round of N probes each: at 1,000 nodes (mts-sim) some deaths
 * took 46 to 83 s to reach every node, p50 13 s; at 200 a second wave
 * 12 s after the first. So the member is probed next (once per
 * incarnation we hold, and never two such probes in a row, so that the
 * round-robin goes on): if it is down our own suspicion starts now.
 */
static void
stale_hint(struct mts_swim *s, struct member *m,
    const struct mts_swim_update *u)
{
	if ((u->state != MTS_SWIM_SUSPECT && u->state != MTS_SWIM_DEAD) ||
	    u->inc >= m->pub.u.inc || m->pub.u.state != MTS_SWIM_ALIVE ||
	    (m->hinted && m->hint_inc == m->pub.u.inc) || s->has_hint)
		return;
	m->hinted = 1;
	m->hint_inc = m->pub.u.inc;
	memcpy(s->hint, m->pub.u.id, MTS_NODE_ID_LEN);
	s->has_hint = 1;
}

/* Where id is in the removed list, or s->ngone. */
static size_t
gone_at(const struct mts_swim *s, const uint8_t id[MTS_NODE_ID_LEN])
{
	size_t i;

	for (i = 0; i < s->ngone; i++)
		if (memcmp(s->gone[i], id, MTS_NODE_ID_LEN) == 0)
			break;
	return i;
}

void
mts_swim_apply(struct mts_swim *s, const struct mts_swim_update *u,
    mts_time_t now, struct mts_swim_out *out)
{
	struct member *m;

	if (u->state > MTS_SWIM_LEFT)
		return;
	if (memcmp(u->id, s->m[0].pub.u.id, MTS_NODE_ID_LEN) == 0) {
		refute(s, u);
		return;
	}
	if ((m = find(s, u->id)) == NULL) {
		if (gone_at(s, u->id) < s->ngone)
			return; /* removed: a node that missed the tombstone */
		m = add_member(s, u, now);
		if (u->state == MTS_SWIM_SUSPECT)
			m->pub.suspect_until =
			    now + mts_swim_suspicion_timeout(s);
		if (u->state <= MTS_SWIM_SUSPECT) {
			emit_event(m, 0, out);
			queue_bcast(s, m);
		}
		return;
	}
	if (!overrides(m, u)) {
		stale_hint(s, m, u);
		return;
	}
	copy_info(m, u);
	set_state(s, m, u->state, u->inc, 0, now, out);
}

/*
 * What a node would gossip of a member it read from the member list,
 * alive at incarnation 0, overrides nothing any member holds (a larger
 * incarnation or, at 0, any state wins over it): it only told those that
 * did not know the member at all that it exists, which every node learns
 * from its own copy of the list, the member's record being replicated
 * (pushed when written, then anti-entropy). Queued, it was half of what
 * each node owed after a whole-cluster restart (every node read N members
 * from its disk: N x R(N) transmissions a node of about 2 N x R(N), riding
 * on every message for 10 s at 1,000 nodes and past 25 s at 5,000).
 * Nothing else changes: the member's own alive news (its hello, its
 * messages' piggyback, a joiner's admission at the bootstrap) comes
 * through mts_swim_apply and is gossiped on by everyone who hears it, a
 * changed address only with that news (m/ records of known members are
 * not read here), and a suspicion, death or removal as before. The
 * removed members' old records a node read before their tombstones are
 * no longer gossiped to the members that forgot them.
 */
void
mts_swim_learn(struct mts_swim *s, const struct mts_swim_update *u,
    mts_time_t now, struct mts_swim_out *out)
{
	struct mts_swim_update a;
	struct member *m;
	size_t i;

	if ((i = gone_at(s, u->id)) < s->ngone)
		memmove(s->gone[i], s->gone[--s->ngone], MTS_NODE_ID_LEN);
	if (find(s, u->id) != NULL)
		return;
	a = *u;
	a.state = MTS_SWIM_ALIVE;
	a.inc = 0;
	m = add_member(s, &a, now);
	emit_event(m, 0, out);
}

void
mts_swim_leave(struct mts_swim *s, mts_time_t now, struct mts_swim_out *out)
{
	struct member *me = &s->m[0];

	me->pub.u.inc++;
	me->pub.u.state = MTS_SWIM_LEFT;
	me->pub.since = now;
	queue_bcast(s, me);
	emit_event(me, 0, out);
}

void
mts_swim_set_self(struct mts_swim *s, const char *addr, const char *name)
{
	struct member *me = &s->m[0];

	set_info(me, addr ? addr : me->pub.u.addr,
	    name ? name : me->pub.u.name);
	me->pub.u.inc++;
	queue_bcast(s, me);
}

static void
forget(struct mts_swim *s, const uint8_t id[MTS_NODE_ID_LEN])
{
	struct member *m = find(s, id);

	if (m == NULL || m->pub.is_self)
		return;
	s->nsuspect -= m->pub.u.state == MTS_SWIM_SUSPECT;
	s->ndead -= m->pub.u.state == MTS_SWIM_DEAD;
	free((char *)m->pub.u.addr);
	*m = s->m[--s->n];
	reindex(s);
	bh_rebuild(s);
	if (s->active && memcmp(s->target, id, MTS_NODE_ID_LEN) == 0)
		s->active = 0;
}

/*
 * A member removed from the cluster (its m/ record is a tombstone) is
 * forgotten and its id kept: until every node has the tombstone, some
 * still hold the member alive and gossip it, and an update about an
 * unknown member adds it — it came back, and was published alive to the
 * agents, until declared dead again. Only the member list names it again
 * (mts_swim_learn: a newer live m/ record). A linear list: removals are
 * few, and it is read only for ids not in the table.
 */
void
mts_swim_remove(struct mts_swim *s, const uint8_t id[MTS_NODE_ID_LEN])
{
	if (memcmp(id, s->m[0].pub.u.id, MTS_NODE_ID_LEN) == 0)
		return;
	forget(s, id);
	if (gone_at(s, id) < s->ngone)
		return;
	if (s->ngone == s->capgone) {
		s->capgone = s->capgone ? s->capgone * 2 : 4;
		s->gone = xreallocarray(s->gone, s->capgone, sizeof(*s->gone));
	}
	memcpy(s->gone[s->ngone++], id, MTS_NODE_ID_LEN);
}

/* The first max members owing transmissions, in the heap's order
 * (bkey), taken out of it into c (max entries): the caller puts them back
 * with what they still owe, after the pick, so that none comes twice.
 * Skipped and put back at once: the destination, whose own state the
 * message already carries, and this node's own when it does too
 * (self_sent). */
static size_t
pick_bcast(struct mts_swim *s, const struct member *dst, int self_sent,
    struct member **c, size_t max)
{
	struct member *m, *skip[2];
	size_t k = 0, nskip = 0;

	while (k < max && s->nbh > 0) {
		m = bh_pop(s);
		if (m == dst || (self_sent && m->pub.is_self))
			skip[nskip++] = m;
		else
			c[k++] = m;
	}
	while (nskip > 0)
		bh_set(s, skip[--nskip]);
	return k;
}

size_t
mts_swim_gossip(struct mts_swim *s, const uint8_t *to,
    struct mts_swim_update *out, size_t max)
{
	struct member *cbuf[16], **c, *dst;
	size_t i, k, first = 0;
	int answer;

	if (max == 0)
		return 0;
	answer =
	    s->has_answer && to && memcmp(to, s->answer, MTS_NODE_ID_LEN) == 0;
	if (answer)
		s->has_answer = 0;
	dst = to && (s->nsuspect > 0 || s->ndead > 0) ? find(s, to) : NULL;
	/* a member held suspect or dead gets its own state first, and ours
	 * next: it may hold us dead just the same (the two sides of a
	 * partition); one that told us a rumour of ours gets ours first */
	if (dst && !dst->pub.is_self &&
	    (dst->pub.u.state == MTS_SWIM_SUSPECT ||
	        dst->pub.u.state == MTS_SWIM_DEAD)) {
		mts_swim_member_update(&dst->pub, &out[first++]);
		if (max > 1)
			mts_swim_member_update(&s->m[0].pub, &out[first++]);
	} else {
		dst = NULL;
		if (answer)
			mts_swim_member_update(&s->m[0].pub, &out[first++]);
	}
	if (max == first || s->nbh == 0)
		return first;
	/* a message's few updates need no allocation (every message asks) */
	c = max - first <= 16 ? cbuf
	                      : xreallocarray(NULL, max - first, sizeof(*c));
	k = pick_bcast(s, dst, first > 0, c, max - first);
	for (i = 0; i < k; i++) {
		mts_swim_member_update(&c[i]->pub, &out[first + i]);
		if (--c[i]->bcast_left > 0)
			bh_set(s, c[i]);
	}
	if (c != cbuf)
		free(c);
	return first + k;
}

/* --- queries ------------------------------------------------------------ */

size_t
mts_swim_count(const struct mts_swim *s)
{
	return s->n;
}

const struct mts_swim_member *
mts_swim_member_at(const struct mts_swim *s, size_t i)
{
	return i < s->n ? &s->m[i].pub : NULL;
}

const struct mts_swim_member *
mts_swim_find(const struct mts_swim *s, const uint8_t id[MTS_NODE_ID_LEN])
{
	struct member *m = find(s, id);

	return m ? &m->pub : NULL;
}

/* states: a mask of 1 << the states wanted */
static int
pickable(const struct mts_swim *s, size_t i, unsigned states,
    const uint8_t *except)
{
	return (states & (1u << s->m[i].pub.u.state)) != 0 &&
	    (except == NULL ||
	        memcmp(s->m[i].pub.u.id, except, MTS_NODE_ID_LEN) != 0);
}

/* Draws members at random and keeps the alive ones not drawn already:
 * when most of a large table is alive this finds max of them in about
 * max draws, not a pass over the table. 0 if it gave up (the caller
 * scans). */
static size_t
draw_members(struct mts_swim *s, unsigned states, const uint8_t *except,
    uint8_t (*out)[MTS_NODE_ID_LEN], size_t max)
{
	uint32_t got[64], set[128] = { 0 }; /* set: 1 + index, 0 empty */
	size_t k = 0, tries, i, j;

	if (max > 64 || s->n < 8 * max + 2)
		return 0;
	for (tries = 0; tries < 4 * max && k < max; tries++) {
		i = 1 + (size_t)(rnd(s) % (s->n - 1));
		for (j = (uint32_t)(i * 0x9e3779b1u) >> 25;
		     set[j] != 0 && set[j] != i + 1; j = (j + 1) & 127)
			;
		if (set[j] != 0 || !pickable(s, i, states, except))
			continue;
		set[j] = (uint32_t)i + 1;
		got[k++] = (uint32_t)i;
	}
	if (k < max)
		return 0;
	for (j = 0; j < k; j++)
		memcpy(out[j], s->m[got[j]].pub.u.id, MTS_NODE_ID_LEN);
	return k;
}

/* Up to max random members in the given states, other than self and
 * except. */
static size_t
random_members(struct mts_swim *s, unsigned states, const uint8_t *except,
    uint8_t (*out)[MTS_NODE_ID_LEN], size_t max)
{
	size_t *idx, i, j, k, t;

	if ((k = draw_members(s, states, except, out, max)) > 0)
		return k;
	idx = xreallocarray(NULL, s->n ? s->n : 1, sizeof(*idx));
	for (i = 1; i < s->n; i++)
		if (pickable(s, i, states, except))
			idx[k++] = i;
	for (i = 0; i < k && i < max; i++) {
		j = i + rnd(s) % (k - i);
		t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		memcpy(out[i], s->m[idx[i]].pub.u.id, MTS_NODE_ID_LEN);
	}
	free(idx);
	return i;
}

size_t
mts_swim_random_alive(struct mts_swim *s, const uint8_t *except,
    uint8_t (*out)[MTS_NODE_ID_LEN], size_t max)
{
	return random_members(s, 1u << MTS_SWIM_ALIVE, except, out, max);
}

mts_time_t
mts_swim_suspicion_timeout(const struct mts_swim *s)
{
	double l = s->n > 1 ? log10((double)s->n) : 0;

	if (l < 1)
		l = 1;
	return (mts_time_t)(s->cfg.suspicion_mult * l *
	    (double)s->cfg.probe_interval);
}

const char *
mts_swim_state_name(enum mts_swim_state st)
{
	static const char *names[] = { "alive", "suspect", "dead", "left" };

	return st <= MTS_SWIM_LEFT ? names[st] : "unknown";
}
