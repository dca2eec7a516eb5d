/* sim_net.c: the simulator's substrate — one seeded generator, the virtual clock and its event queue, the virtual network (latency, loss, duplication, reordering, uplink bandwidth, partitions), the trace hash and messages (records are interned in sim_store.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sim/sim.h"
#include "xmalloc.h"

struct sim_ev {
	mts_time_t at;
	uint64_t seq;
	int type, node;
	struct sim_msg *msg;
};

/* --- the one generator (xorshift64*) ------------------------------------- */

uint64_t
sim_rand(struct sim *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dull;
}

double
sim_unif(struct sim *s)
{
	return (double)(sim_rand(s) >> 11) / (double)(1ull << 53);
}

int
sim_rand_int(struct sim *s, int n)
{
	return n > 0 ? (int)(sim_rand(s) % (uint64_t)n) : 0;
}

/* --- trace --------------------------------------------------------------- */

void
sim_trace(struct sim *s, int type, int a, int b, uint64_t c)
{
	uint8_t buf[28];

	mts_put_u64be(buf, (uint64_t)s->now);
	mts_put_u32be(buf + 8, (uint32_t)type);
	mts_put_u32be(buf + 12, (uint32_t)a);
	mts_put_u32be(buf + 16, (uint32_t)b);
	mts_put_u64be(buf + 20, c);
	mts_hash_update(&s->trace, buf, sizeof(buf));
}

/* --- event queue: (time, insertion order) -------------------------------
 * A calendar of one FIFO bucket per millisecond for the next CAL_MS (an
 * event's time maps to one bucket, and a bucket's events are in insertion
 * order), and a binary heap for what lies beyond; the next event is the
 * lesser of the calendar's first and the heap's top. The heap alone cost
 * an eighth of a 1,000-node run in cache misses. */

#define CAL_MS 4096
/* A passed bucket keeps its array up to this many events: the 4,096
 * buckets kept the room of their busiest millisecond for good, 154 MiB
 * of `scale`'s 261 MiB heap at 200 nodes. */
#define CAL_KEEP 256

struct sim_bucket {
	struct sim_ev *v;
	size_t head, n, cap;
};

static int
ev_less(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void heap_push(struct sim *, const struct sim_ev *);

void
sim_at(struct sim *s, mts_time_t when, int type, int node, struct sim_msg *m)
{
	struct sim_ev e = { when, s->evseq++, type, node, m };
	struct sim_bucket *b;

	if (s->cal == NULL)
		s->cal = xcalloc(CAL_MS, sizeof(*s->cal));
	if (when < s->cal_at || when >= s->cal_at + CAL_MS) {
		heap_push(s, &e);
		return;
	}
	b = &s->cal[when % CAL_MS];
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 16;
		b->v = xreallocarray(b->v, b->cap, sizeof(*b->v));
	}
	b->v[b->n++] = e;
	s->ncal++;
}

static void
heap_push(struct sim *s, const struct sim_ev *ep)
{
	size_t i;
	struct sim_ev e = *ep, t;

	if (s->nheap == s->capheap) {
		s->capheap = s->capheap ? s->capheap * 2 : 1024;
		s->heap = xreallocarray(s->heap, s->capheap, sizeof(*s->heap));
	}
	i = s->nheap++;
	s->heap[i] = e;
	while (i > 0 && ev_less(&s->heap[i], &s->heap[(i - 1) / 2])) {
		t = s->heap[i];
		s->heap[i] = s->heap[(i - 1) / 2];
		s->heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct sim_ev
pop(struct sim *s)
{
	struct sim_ev top = s->heap[0], t;
	size_t i = 0, l, m;

	s->heap[0] = s->heap[--s->nheap];
	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < s->nheap && ev_less(&s->heap[l], &s->heap[m]))
			m = l;
		if (l + 1 < s->nheap && ev_less(&s->heap[l + 1], &s->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
	return top;
}

/* The calendar's first event, or NULL; its empty buckets before it are
 * passed for good (nothing is scheduled before the present). */
static struct sim_bucket *
cal_first(struct sim *s)
{
	struct sim_bucket *b;

	while (s->ncal > 0) {
		b = &s->cal[s->cal_at % CAL_MS];
		if (b->head < b->n)
			return b;
		b->head = b->n = 0;
		if (b->cap >
		    CAL_KEEP) { /* not the busiest ms's room for good */
			free(b->v);
			b->v = NULL;
			b->cap = 0;
		}
		s->cal_at++;
	}
	return NULL;
}

/* Runs the next event due before `until`; 0 when there is none. */
int
sim_next(struct sim *s, mts_time_t until)
{
	struct sim_ev e;
	struct sim_node *n;
	struct sim_bucket *b = cal_first(s);

	if (b != NULL &&
	    (s->nheap == 0 || ev_less(&b->v[b->head], &s->heap[0]))) {
		if (b->v[b->head].at >= until)
			return 0;
		e = b->v[b->head++];
		s->ncal--;
	} else {
		if (s->nheap == 0 || s->heap[0].at >= until) {
			if (s->ncal == 0 && s->cal_at < until)
				s->cal_at = until;
			return 0;
		}
		e = pop(s);
	}
	s->now = e.at;
	s->st.events++;
	n = &s->node[e.node];
	if (e.type == EV_TICK) {
		if (n->up)
			sim_node_tick(s, n);
	} else {
		sim_trace(s, 100 + (int)e.msg->kind, e.msg->from, e.node,
		    e.msg->seq ^ e.msg->bytes);
		if (n->up)
			sim_node_deliver(s, n, e.msg);
		sim_msg_unref(e.msg);
	}
	return 1;
}

void
sim_queue_free(struct sim *s)
{
	size_t i, j;

	for (i = 0; i < s->nheap; i++)
		if (s->heap[i].type == EV_MSG)
			sim_msg_unref(s->heap[i].msg);
	for (j = 0; s->cal && j < CAL_MS; j++) {
		for (i = s->cal[j].head; i < s->cal[j].n; i++)
			if (s->cal[j].v[i].type == EV_MSG)
				sim_msg_unref(s->cal[j].v[i].msg);
		free(s->cal[j].v);
	}
	free(s->cal);
	s->cal = NULL;
	s->ncal = 0;
	free(s->heap);
	s->heap = NULL;
	s->nheap = s->capheap = 0;
	sim_msg_pool_free();
}

/* --- network ------------------------------------------------------------- */

/* One-way latency: a base plus an exponential tail, capped. */
static mts_time_t
latency(struct sim *s)
{
	double u = sim_unif(s);
	mts_time_t l =
	    s->cfg.lat_base + (mts_time_t)(-log(1.0 - u) * s->cfg.lat_mean);

	return l > s->cfg.lat_max ? s->cfg.lat_max : l;
}

/* Takes the caller's reference to m. The sender pays the bytes whether
 * or not they arrive; its uplink serialises what it sends. */
void
sim_send(struct sim *s, struct sim_msg *m)
{
	struct sim_node *f = &s->node[m->from], *t = &s->node[m->to];
	int64_t start_us, now_us = (int64_t)s->now * 1000;
	mts_time_t when;

	s->st.bytes[m->kind] += m->bytes;
	s->st.msgs[m->kind]++;
	start_us = f->busy_until_us > now_us ? f->busy_until_us : now_us;
	f->busy_until_us =
	    start_us + (int64_t)m->bytes * 1000000 / s->cfg.bw_bytes;
	if (f->group != t->group ||
	    (s->cfg.loss > 0 && sim_unif(s) < s->cfg.loss)) {
		s->st.dropped++;
		sim_msg_unref(m);
		return;
	}
	when = f->busy_until_us / 1000 + latency(s);
	if (s->cfg.reorder > 0 && sim_unif(s) < s->cfg.reorder)
		when += 1 + sim_rand_int(s, 20);
	if (s->cfg.dup > 0 && sim_unif(s) < s->cfg.dup) {
		m->refs++;
		s->st.duplicated++;
		sim_at(s, when + latency(s), EV_MSG, m->to, m);
	}
	sim_at(s, when, EV_MSG, m->to, m);
}

/* Splits the nodes into ngroups random groups: no message crosses. */
void
sim_partition(struct sim *s, int ngroups)
{
	int i;

	for (i = 0; i < s->n; i++)
		s->node[i].group = sim_rand_int(s, ngroups);
	s->partitioned = 1;
	s->last_unhealthy = s->now;
	sim_trace(s, 1, ngroups, 0, 0);
}

void
sim_heal(struct sim *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		s->node[i].group = 0;
	if (s->partitioned)
		s->last_unhealthy = s->now;
	s->partitioned = 0;
	sim_trace(s, 2, 0, 0, 0);
}

/* --- messages ------------------------------------------------------------ */

static const struct {
	const char *name;
	enum sim_class cls;
} kinds[K_MAX] = {
	[K_PING] = { "ping", C_SWIM },
	[K_ACK] = { "ack", C_SWIM },
	[K_PINGREQ] = { "ping-req", C_SWIM },
	[K_NEWS] = { "news", C_SWIM },
	[K_GOSSIP] = { "gossip", C_SWIM },
	[K_PUSH] = { "push", C_PUSH },
	[K_ROOT_REQ] = { "root-req", C_AE },
	[K_ROOT_REP] = { "root-rep", C_AE },
	[K_PAGE_REQ] = { "page-req", C_AE },
	[K_PAGE_REP] = { "page-rep", C_AE },
	[K_REC_REQ] = { "records-req", C_AE },
	[K_REC_REP] = { "records-rep", C_AE },
	[K_PREPARE] = { "prepare", C_SCHED },
	[K_PREPARE_REP] = { "prepare-rep", C_SCHED },
	[K_COMMIT] = { "commit", C_SCHED },
	[K_COMMIT_REP] = { "commit-rep", C_SCHED },
	[K_STOP] = { "stop", C_SCHED },
};

const char *
sim_kind_name(enum sim_kind k)
{
	return kinds[k].name;
}

enum sim_class
sim_kind_class(enum sim_kind k)
{
	return kinds[k].cls;
}

/* Unreferenced messages, kept for the next: tens of millions of copies
 * go through malloc otherwise (a fifth of a 300-node deploy's time was
 * malloc and free). */
static struct sim_msg *msg_pool;

struct sim_msg *
sim_msg_new(enum sim_kind kind, int from, int to)
{
	struct sim_msg *m = msg_pool;

	if (m != NULL) {
		msg_pool = m->free_next;
		memset(m, 0, sizeof(*m));
	} else
		m = xcalloc(1, sizeof(*m));
	m->refs = 1;
	m->kind = kind;
	m->from = from;
	m->to = to;
	return m;
}

struct sim_body *
sim_body_new(struct irec **recs, size_t nrecs,
    const uint8_t (*sent)[MTS_NODE_ID_LEN], size_t nsent)
{
	struct sim_body *b = xmalloc(
	    sizeof(*b) + nrecs * sizeof(*b->recs) + nsent * MTS_NODE_ID_LEN);
	size_t i;

	b->refs = 0;
	b->nrecs = nrecs;
	b->nsent = nsent;
	for (i = 0; i < nrecs; i++)
		b->recs[i] = sim_iref(recs[i]);
	b->sent = (uint8_t(*)[MTS_NODE_ID_LEN])(void *)(b->recs + nrecs);
	if (nsent > 0)
		memcpy(b->sent, sent, nsent * MTS_NODE_ID_LEN);
	return b;
}

void
sim_msg_set_body(struct sim_msg *m, struct sim_body *b)
{
	b->refs++;
	m->body = b;
	m->recs = b->recs;
	m->nrecs = b->nrecs;
	m->sent = b->sent;
	m->nsent = b->nsent;
}

void
sim_body_unref(struct sim_body *b)
{
	size_t i;

	if (b == NULL || --b->refs > 0)
		return;
	for (i = 0; i < b->nrecs; i++)
		sim_iunref(b->recs[i]);
	free(b);
}

void
sim_msg_unref(struct sim_msg *m)
{
	size_t i;

	if (m == NULL || --m->refs > 0)
		return;
	if (m->body != NULL)
		sim_body_unref(m->body);
	else {
		for (i = 0; i < m->nrecs; i++)
			sim_iunref(m->recs[i]);
		free(m->recs);
		free(m->sent);
	}
	for (i = 0; i < m->npages; i++)
		free(m->pages[i].enc);
	for (i = 0; i < m->nkeys; i++)
		free(m->keys[i].key);
	free(m->up);
	free(m->hashes);
	free(m->pages);
	free(m->keys);
	free(m->task);
	m->free_next = msg_pool;
	msg_pool = m;
}

void
sim_msg_pool_free(void)
{
	struct sim_msg *m;

	while ((m = msg_pool) != NULL) {
		msg_pool = m->free_next;
		free(m);
	}
}
