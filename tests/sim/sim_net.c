/* sim_net.c: the simulator's substrate — the seeded generators (the run's and one a node), the virtual clock and its event queue run a millisecond at a time on worker threads, the virtual network (latency, loss, duplication, reordering, uplink bandwidth, partitions), the trace hash and messages (records are interned in sim_store.c). */
#include <linux/futex.h>
#include <sys/syscall.h>

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tests/sim/sim.h"
#include "xmalloc.h"

struct sim_ev {
	mts_time_t at;
	int node, src; /* whose event it is, and which node created it */
	uint64_t seq;  /* src's count of the events it created */
	int type;
	struct sim_msg *msg;
};

/* --- generators (xorshift64*): the run's and one a node ---------------- */

static uint64_t
xorshift(uint64_t *st)
{
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return *st * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, 1) and in [0, n) from one stream (the run's or a
 * node's). */
static double
unif_of(uint64_t *st)
{
	return (double)(xorshift(st) >> 11) / (double)(1ull << 53);
}

static int
int_of(uint64_t *st, int n)
{
	return n > 0 ? (int)(xorshift(st) % (uint64_t)n) : 0;
}

uint64_t
sim_rand(struct sim *s)
{
	return xorshift(&s->rng);
}

double
sim_unif(struct sim *s)
{
	return unif_of(&s->rng);
}

int
sim_rand_int(struct sim *s, int n)
{
	return int_of(&s->rng, n);
}

static uint64_t
splitmix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Node i's stream from the run's seed: splitmix of both, never 0. */
void
sim_nrand_seed(struct sim_node *n, uint64_t seed)
{
	n->rng = splitmix(seed ^ splitmix((uint64_t)n->idx + 1)) | 1;
}

uint64_t
sim_nrand(struct sim_node *n)
{
	return xorshift(&n->rng);
}

double
sim_nunif(struct sim_node *n)
{
	return unif_of(&n->rng);
}

int
sim_nrand_int(struct sim_node *n, int k)
{
	return int_of(&n->rng, k);
}

/* --- trace --------------------------------------------------------------- */

static void
trace_into(mts_hash_ctx *h, mts_time_t now, int type, int a, int b, uint64_t c)
{
	uint8_t buf[28];

	mts_put_u64be(buf, (uint64_t)now);
	mts_put_u32be(buf + 8, (uint32_t)type);
	mts_put_u32be(buf + 12, (uint32_t)a);
	mts_put_u32be(buf + 16, (uint32_t)b);
	mts_put_u64be(buf + 20, c);
	mts_hash_update(h, buf, sizeof(buf));
}

void
sim_trace(struct sim *s, int type, int a, int b, uint64_t c)
{
	trace_into(&s->trace, s->now, type, a, b, c);
}

void
sim_ntrace(struct sim *s, struct sim_node *n, int type, int a, int b,
    uint64_t c)
{
	trace_into(&n->trace, s->now, type, a, b, c);
}

/* Each node's hash holds its own events in their order, which does not
 * depend on how many threads ran them; the run's combines them. */
void
sim_trace_final(struct sim *s, uint8_t out[MTS_HASH_LEN])
{
	uint8_t h[MTS_HASH_LEN];
	int i;

	for (i = 0; i < s->n; i++) {
		mts_hash_final(&s->node[i].trace, h);
		mts_hash_update(&s->trace, h, sizeof(h));
	}
	mts_hash_final(&s->trace, out);
}

/* --- event queue ---------------------------------------------------------
 * A calendar of one bucket per millisecond for the next CAL_MS (an
 * event's time maps to one bucket, which holds only that millisecond's
 * events), and a binary heap for what lies beyond. Only the barrier
 * touches it: during a millisecond's window the workers put what their
 * nodes create in their outboxes. The heap alone cost an eighth of a
 * 1,000-node run in cache misses.
 *
 * Order: a millisecond's events run sorted by (node, creator, the
 * creator's count of events), a key that does not depend on when the
 * event reached the queue, so neither on the threads. */

#define CAL_MS 4096
/* A passed bucket keeps its array up to this many events: the 4,096
 * buckets kept the room of their busiest millisecond for good, 154 MiB
 * of `scale`'s 261 MiB heap at 200 nodes. */
#define CAL_KEEP 256

struct sim_bucket {
	struct sim_ev *v;
	size_t n, cap;
};

static int
ev_cmp(const struct sim_ev *a, const struct sim_ev *b)
{
	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int
ev_less(const struct sim_ev *a, const struct sim_ev *b)
{
	return ev_cmp(a, b) < 0;
}

static void
ev_push(struct sim_ev **v, size_t *n, size_t *cap, const struct sim_ev *e)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xreallocarray(*v, *cap, sizeof(**v));
	}
	(*v)[(*n)++] = *e;
}

static void heap_push(struct sim *, const struct sim_ev *);

static void
queue_put(struct sim *s, const struct sim_ev *e)
{
	struct sim_bucket *b;

	if (s->cal == NULL)
		s->cal = xcalloc(CAL_MS, sizeof(*s->cal));
	if (e->at < s->cal_at || e->at >= s->cal_at + CAL_MS) {
		heap_push(s, e);
		return;
	}
	b = &s->cal[e->at % CAL_MS];
	ev_push(&b->v, &b->n, &b->cap, e);
	s->ncal++;
}

/* Nothing reaches another node within the millisecond it was sent in
 * (every latency is at least cfg.lat_base, 1 ms): what makes the nodes'
 * events of one millisecond independent of each other. */
void
sim_at(struct sim *s, mts_time_t when, int type, int node, struct sim_msg *m,
    struct sim_node *src)
{
	struct sim_ev e = { when, node, src->idx, src->oseq++, type, m };
	struct sim_worker *w = sim_tls_w;

	if (when <= s->now) {
		fprintf(stderr,
		    "mts-sim: an event at %lld ms created at %lld ms\n",
		    (long long)when, (long long)s->now);
		abort();
	}
	if (s->window)
		ev_push(&w->out, &w->nout, &w->capout, &e);
	else
		queue_put(s, &e);
}

static void
heap_push(struct sim *s, const struct sim_ev *ep)
{
	size_t i;
	struct sim_ev e = *ep, t;

	ev_push(&s->heap, &s->nheap, &s->capheap, &e);
	i = s->nheap - 1;
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

/* The calendar's first non-empty bucket, or NULL; its empty buckets
 * before it are passed for good (nothing is scheduled before now). */
static struct sim_bucket *
cal_first(struct sim *s)
{
	struct sim_bucket *b;

	while (s->ncal > 0) {
		b = &s->cal[s->cal_at % CAL_MS];
		if (b->n > 0)
			return b;
		if (b->cap > CAL_KEEP) { /* not the busiest ms's room */
			free(b->v);
			b->v = NULL;
			b->cap = 0;
		}
		s->cal_at++;
	}
	return NULL;
}

static int
ev_qcmp(const void *a, const void *b)
{
	return ev_cmp(a, b);
}

/* The events of the next millisecond before `until` into s->batch,
 * sorted, with where each node's start (s->runs); 0 if there is none. */
static int
take_ms(struct sim *s, mts_time_t until)
{
	struct sim_bucket *b = cal_first(s);
	mts_time_t t;
	size_t i;

	if (b == NULL && s->nheap == 0)
		return 0;
	t = b ? b->v[0].at : s->heap[0].at;
	if (s->nheap > 0 && s->heap[0].at < t)
		t = s->heap[0].at;
	if (t >= until)
		return 0;
	s->nbatch = 0;
	if (b != NULL && b->v[0].at == t) {
		for (i = 0; i < b->n; i++)
			ev_push(&s->batch, &s->nbatch, &s->capbatch, &b->v[i]);
		s->ncal -= b->n;
		b->n = 0;
	}
	while (s->nheap > 0 && s->heap[0].at == t) {
		struct sim_ev e = pop(s);

		ev_push(&s->batch, &s->nbatch, &s->capbatch, &e);
	}
	qsort(s->batch, s->nbatch, sizeof(*s->batch), ev_qcmp);
	s->nruns = 0;
	for (i = 0; i < s->nbatch; i++) {
		if (i > 0 && s->batch[i].node == s->batch[i - 1].node)
			continue;
		if (s->nruns == s->capruns) {
			s->capruns = s->capruns ? 2 * s->capruns : 256;
			s->runs = xreallocarray(s->runs, s->capruns,
			    sizeof(*s->runs));
		}
		s->runs[s->nruns++] = i;
	}
	s->now = t;
	return 1;
}

/* One node's events of the millisecond, in their order. */
static void
run_node(struct sim *s, size_t r)
{
	size_t i, end = r + 1 < s->nruns ? s->runs[r + 1] : s->nbatch;
	struct sim_ev *e;
	struct sim_node *n;

	for (i = s->runs[r]; i < end; i++) {
		e = &s->batch[i];
		n = &s->node[e->node];
		sim_tls_w->cur_node = e->node;
		sim_tls_w->ran++;
		SIM_ST->events++;
		if (e->type == EV_TICK) {
			if (n->up)
				sim_node_tick(s, n);
			continue;
		}
		sim_ntrace(s, n, 100 + (int)e->msg->kind, e->msg->from, e->node,
		    e->msg->seq ^ e->msg->bytes);
		if (n->up)
			sim_node_deliver(s, n, e->msg);
		sim_msg_unref(e->msg);
	}
}

/* --- the workers ---------------------------------------------------------
 * Worker 0 is the main thread; the others wake for a millisecond's batch
 * (gen) and take its nodes a chunk at a time with the main thread. A
 * worker that wakes late finds the batch taken and does nothing: the main
 * thread waits only for the chunks being run (active), so a helper the
 * kernel does not schedule (a loaded machine) delays nothing but its own
 * chunk. The word `next` holds the batch's generation, its count of
 * nodes and the next node: a late worker cannot take a later batch's. A
 * short spin, then a futex: a millisecond holds about 3 ms of work at
 * 1,000 nodes. */

#define GEN_SHIFT 40
#define NR_SHIFT 20
#define IDX_MASK ((1ull << NR_SHIFT) - 1)

struct sim_pool {
	pthread_t *th;
	int gen, quit;
	int active, main_waits;
	uint64_t next; /* gen << 40 | nruns << 20 | next run */
	size_t chunk;
};

_Thread_local struct sim_worker *sim_tls_w;

#define SPIN 2000

static void
futex_wait(int *addr, int val)
{
	(void)syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void
futex_wake(int *addr)
{
	(void)syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL,
	    0);
}

/* Until *addr differs from val. */
static void
wait_change(int *addr, int val)
{
	int i;

	for (i = 0; i < SPIN; i++) {
		if (__atomic_load_n(addr, __ATOMIC_SEQ_CST) != val)
			return;
		__builtin_ia32_pause();
	}
	while (__atomic_load_n(addr, __ATOMIC_SEQ_CST) == val)
		futex_wait(addr, val);
}

/* The batch of generation gen's nodes, a chunk at a time, until none is
 * left (or the batch is another's). */
static void
take_chunks(struct sim *s, struct sim_pool *p, uint64_t gen)
{
	uint64_t v, idx, nr;
	size_t chunk = __atomic_load_n(&p->chunk, __ATOMIC_RELAXED);

	for (;;) {
		v = __atomic_load_n(&p->next, __ATOMIC_SEQ_CST);
		idx = v & IDX_MASK;
		nr = (v >> NR_SHIFT) & IDX_MASK;
		if (v >> GEN_SHIFT != gen || idx >= nr)
			return;
		if (!__atomic_compare_exchange_n(&p->next, &v, v + chunk, 0,
		        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		for (; idx < nr && chunk-- > 0; idx++)
			run_node(s, (size_t)idx);
		chunk = __atomic_load_n(&p->chunk, __ATOMIC_RELAXED);
	}
}

static void *
worker_main(void *arg)
{
	struct sim_worker *w = arg;
	struct sim *s = w->s;
	struct sim_pool *p = s->pool;
	int gen = 0;

	sim_tls_w = w;
	for (;;) {
		wait_change(&p->gen, gen);
		gen = __atomic_load_n(&p->gen, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&p->quit, __ATOMIC_SEQ_CST))
			break;
		__atomic_add_fetch(&p->active, 1, __ATOMIC_SEQ_CST);
		take_chunks(s, p, (uint64_t)(unsigned)gen & 0xffffff);
		if (__atomic_sub_fetch(&p->active, 1, __ATOMIC_SEQ_CST) == 0 &&
		    __atomic_load_n(&p->main_waits, __ATOMIC_SEQ_CST))
			futex_wake(&p->active);
	}
	sim_recon_thread_free();
	return NULL;
}

void
sim_workers_start(struct sim *s)
{
	int i;

	if (s->threads < 1)
		s->threads = 1;
	s->w = xcalloc((size_t)s->threads, sizeof(*s->w));
	for (i = 0; i < s->threads; i++) {
		s->w[i].idx = i;
		s->w[i].s = s;
		s->w[i].fail_node = -1;
	}
	sim_tls_w = &s->w[0];
	s->pool = xcalloc(1, sizeof(*s->pool));
	s->pool->th = xcalloc((size_t)s->threads, sizeof(*s->pool->th));
	for (i = 1; i < s->threads; i++)
		if (pthread_create(&s->pool->th[i], NULL, worker_main,
		        &s->w[i]) != 0)
			fatalx("pthread_create");
}

void
sim_workers_stop(struct sim *s)
{
	struct sim_pool *p = s->pool;
	int i;

	if (p == NULL)
		return;
	__atomic_store_n(&p->quit, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&p->gen, 1, __ATOMIC_SEQ_CST);
	futex_wake(&p->gen);
	for (i = 1; i < s->threads; i++)
		pthread_join(p->th[i], NULL);
	free(p->th);
	free(p);
	s->pool = NULL;
}

/* Fewer nodes than this in a millisecond: the main thread runs them. */
#define PAR_MIN 8

/* The millisecond's nodes on every worker; returns when all are done. */
static void
run_batch(struct sim *s)
{
	struct sim_pool *p = s->pool;
	uint64_t gen;
	size_t r;
	int v;

	s->window = 1;
	if (s->threads == 1 || s->nruns < PAR_MIN) {
		for (r = 0; r < s->nruns; r++)
			run_node(s, r);
		s->window = 0;
		return;
	}
	/* a late worker may read it: its batch is gone, what it reads unused */
	__atomic_store_n(&p->chunk, s->nruns / ((size_t)s->threads * 8) + 1,
	    __ATOMIC_RELAXED);
	gen = (uint64_t)(unsigned)(p->gen + 1) & 0xffffff;
	__atomic_store_n(&p->next,
	    gen << GEN_SHIFT | (uint64_t)s->nruns << NR_SHIFT,
	    __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&p->gen, 1, __ATOMIC_SEQ_CST);
	futex_wake(&p->gen);
	take_chunks(s, p, gen);
	/* the batch is taken: wait for the chunks still running */
	__atomic_store_n(&p->main_waits, 1, __ATOMIC_SEQ_CST);
	while ((v = __atomic_load_n(&p->active, __ATOMIC_SEQ_CST)) != 0)
		wait_change(&p->active, v);
	__atomic_store_n(&p->main_waits, 0, __ATOMIC_SEQ_CST);
	s->window = 0;
}

static void
stats_add(struct sim_stats *a, struct sim_stats *b)
{
	uint64_t *x = (uint64_t *)a, *y = (uint64_t *)b;
	size_t i;

	for (i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		x[i] += y[i];
	memset(b, 0, sizeof(*b));
}

void
sim_stats_fold(struct sim *s)
{
	int i;

	for (i = 0; i < s->threads; i++)
		stats_add(&s->st, &s->w[i].st);
}

/* By kind (enum sim_log_kind). */
static void (*const log_apply[])(struct sim *, const struct sim_log *) = {
	[SIM_LOG_WRITE] = sim_apply_wlog,
	[SIM_LOG_KILL] = sim_apply_klog,
	[SIM_LOG_ACT] = sim_apply_alog,
};

void
sim_defer(struct sim *s, const struct sim_log *l)
{
	struct sim_worker *w = sim_tls_w;

	if (!s->window) {
		log_apply[l->kind](s, l);
		return;
	}
	if (w->nlog == w->caplog) {
		w->caplog = w->caplog ? 2 * w->caplog : 256;
		w->log = xreallocarray(w->log, w->caplog, sizeof(*w->log));
	}
	w->log[w->nlog++] = *l;
}

/* The barrier after a millisecond: the events the workers' nodes created
 * into the queue, their logs applied (each in an order that does not
 * change the outcome), the lowest node's failure reported. */
static void
barrier(struct sim *s)
{
	struct sim_worker *w;
	size_t i;
	int k, f = -1;

	for (k = 0; k < s->threads; k++) {
		w = &s->w[k];
		for (i = 0; i < w->nout; i++)
			queue_put(s, &w->out[i]);
		for (i = 0; i < w->nlog; i++)
			log_apply[w->log[i].kind](s, &w->log[i]);
		w->nout = w->nlog = 0;
		if (w->fail_node >= 0 &&
		    (f < 0 || w->fail_node < s->w[f].fail_node))
			f = k;
	}
	if (f >= 0)
		sim_fail_flush(s, &s->w[f]);
	for (k = 0; k < s->threads; k++)
		s->w[k].fail_node = -1;
	sim_stats_fold(s);
}

void
sim_run_until(struct sim *s, mts_time_t until)
{
	while (take_ms(s, until)) {
		run_batch(s);
		barrier(s);
	}
	if (s->ncal == 0 && s->cal_at < until)
		s->cal_at = until;
}

void
sim_queue_free(struct sim *s)
{
	size_t i, j;

	for (i = 0; i < s->nheap; i++)
		if (s->heap[i].type == EV_MSG)
			sim_msg_unref(s->heap[i].msg);
	for (j = 0; s->cal && j < CAL_MS; j++) {
		for (i = 0; i < s->cal[j].n; i++)
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
	free(s->batch);
	free(s->runs);
	for (j = 0; j < (size_t)s->threads; j++) {
		free(s->w[j].out);
		free(s->w[j].log);
	}
	sim_msg_pool_free(s);
}

/* --- network ------------------------------------------------------------- */

/* One-way latency: a base plus an exponential tail, capped; from the
 * sender's stream. */
static mts_time_t
latency(struct sim *s, struct sim_node *f)
{
	double u = sim_nunif(f);
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

	SIM_ST->bytes[m->kind] += m->bytes;
	SIM_ST->msgs[m->kind]++;
	start_us = f->busy_until_us > now_us ? f->busy_until_us : now_us;
	f->busy_until_us =
	    start_us + (int64_t)m->bytes * 1000000 / s->cfg.bw_bytes;
	if (f->group != t->group ||
	    (s->cfg.loss > 0 && sim_nunif(f) < s->cfg.loss)) {
		SIM_ST->dropped++;
		sim_msg_unref(m);
		return;
	}
	when = f->busy_until_us / 1000 + latency(s, f);
	if (s->cfg.reorder > 0 && sim_nunif(f) < s->cfg.reorder)
		when += 1 + sim_nrand_int(f, 20);
	if (s->cfg.dup > 0 && sim_nunif(f) < s->cfg.dup) {
		m->refs++;
		SIM_ST->duplicated++;
		sim_at(s, when + latency(s, f), EV_MSG, m->to, m, f);
	}
	sim_at(s, when, EV_MSG, m->to, m, f);
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

/* Unreferenced messages, kept for the next, one pool a worker (a
 * message goes back to the pool of the worker that let go of it): tens
 * of millions of copies go through malloc otherwise (a fifth of a
 * 300-node deploy's time was malloc and free). */
struct sim_msg *
sim_msg_new(enum sim_kind kind, int from, int to)
{
	struct sim_msg *m = sim_tls_w->pool;

	if (m != NULL) {
		sim_tls_w->pool = m->free_next;
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

	__atomic_store_n(&b->refs, 0, __ATOMIC_RELAXED);
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
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
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

	if (b == NULL || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) > 0)
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
	m->free_next = sim_tls_w->pool;
	sim_tls_w->pool = m;
}

void
sim_msg_pool_free(struct sim *s)
{
	struct sim_msg *m;
	int i;

	for (i = 0; i < s->threads; i++)
		while ((m = s->w[i].pool) != NULL) {
			s->w[i].pool = m->free_next;
			free(m);
		}
}
