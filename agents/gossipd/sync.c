/* sync.c: replication between nodes — delta push with forward-once dedupe, and anti-entropy rounds (serving pages and records, driving the walk, rate limit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "mst_page.h"
#include "record.h"
#include "xmalloc.h"

#define AE_REPLY_TIMEOUT 5000
#define AE_MAX_KEYS_SERVED 2048
#define AE_MAX_PAGES_SERVED 256
#define AE_MAX_SERVING 16 /* peer requests served at once */

/* --- delta push ------------------------------------------------------------------- */

static int
valid_record(const Mts__KeyRecord *kr)
{
	return kr && kr->record && kr->key.len > 0 &&
	    kr->key.len <= MTS_KEY_MAX &&
	    kr->record->origin.len == MTS_NODE_ID_LEN &&
	    kr->record->value.len <= MTS_RECORD_MAX_VALUE;
}

/* Sends recs (split into pushes of about GD_CHUNK bytes) to `fanout`
 * (mts_delta_fanout) random alive peers outside `sent` (which grows by
 * them; its last ids are sent along, so the next hop picks yet other
 * nodes). */
static void
push_to_peers(struct gossipd *g, Mts__KeyRecord **recs, size_t n,
    struct mts_delta_sent *sent, mts_time_t now)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__Push push = MTS__GOSSIP__PUSH__INIT;
	ProtobufCBinaryData st[MTS_DELTA_MAX_SENT];
	uint8_t cand[64][MTS_NODE_ID_LEN], ids[16][MTS_NODE_ID_LEN];
	size_t k = 0, c, i, first, start = 0, end, bytes;
	int fanout = mts_delta_fanout(g->cfg.fanout, mts_swim_count(g->swim));
	struct peer *p;

	c = mts_swim_random_alive(g->swim, NULL, cand,
	    mts_delta_ncand(sent, fanout));
	k = mts_delta_targets(sent, g->id,
	    (const uint8_t(*)[MTS_NODE_ID_LEN])cand, c, fanout, ids);
	first = mts_delta_wire_first(sent);
	for (i = first; i < sent->n; i++) {
		st[i - first].data = sent->id[i];
		st[i - first].len = MTS_NODE_ID_LEN;
	}
	push.sent_to = st;
	push.n_sent_to = sent->n - first;
	while (start < n && k > 0) {
		for (end = start, bytes = 0; end < n && bytes < GD_CHUNK; end++)
			bytes += mts__key_record__get_packed_size(recs[end]);
		push.records = recs + start;
		push.n_records = end - start;
		msg.body_case = MTS__GOSSIP__MSG__BODY_PUSH;
		msg.push = &push;
		for (i = 0; i < k; i++) {
			if ((p = gd_peer_find(g, ids[i])) == NULL)
				continue;
			if (gd_send(g, p, &msg, now) == 0)
				g->stats.push_sent++;
		}
		start = end;
	}
}

void
gd_push_local(struct gossipd *g, Mts__KeyRecord **recs, size_t n,
    mts_time_t now)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (valid_record(recs[i]))
			(void)mts_seen_add(g->seen, recs[i]->key.data,
			    recs[i]->key.len, recs[i]->record->hlc,
			    recs[i]->record->origin.data);
	{
		struct mts_delta_sent sent = { .n = 0 };

		push_to_peers(g, recs, n, &sent, now);
	}
}

void
gd_on_push(struct gossipd *g, struct peer *from, Mts__Gossip__Msg *m)
{
	struct push_in *pi = xcalloc(1, sizeof(*pi));

	pi->msg = m;
	memcpy(pi->from, from->id, MTS_NODE_ID_LEN);
	pi->next = g->pushes;
	g->pushes = pi;
	g->stats.push_recv++;
}

/* Merges recs in requests of about GD_CHUNK bytes, without waiting; fn
 * (if any) is called once per request sent. Returns how many were sent. */
static size_t
merge_chunked(struct gossipd *g, Mts__KeyRecord **recs, size_t n,
    gd_store_fn fn, void *arg)
{
	size_t start = 0, end, bytes, sent = 0;

	while (start < n) {
		for (end = start, bytes = 0; end < n && bytes < GD_CHUNK; end++)
			bytes += mts__key_record__get_packed_size(recs[end]);
		gd_store_merge(g, recs + start, end - start, fn, arg);
		sent++;
		start = end;
	}
	return sent;
}

/* Records of one received push seen here for the first time, appended to
 * fresh (grown as needed); returns how many were added. */
static size_t
take_fresh(struct gossipd *g, const Mts__Gossip__Push *push,
    Mts__KeyRecord ***fresh, size_t *n, size_t *cap)
{
	size_t i, added = 0;

	for (i = 0; i < push->n_records; i++) {
		Mts__KeyRecord *kr = push->records[i];

		if (!valid_record(kr) ||
		    !mts_seen_add(g->seen, kr->key.data, kr->key.len,
		        kr->record->hlc, kr->record->origin.data))
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*fresh = xreallocarray(*fresh, *cap, sizeof(**fresh));
		}
		(*fresh)[(*n)++] = kr;
		added++;
	}
	return added;
}

void
gd_push_flush(struct gossipd *g, mts_time_t now)
{
	struct push_in *pi, *next;
	Mts__KeyRecord **fresh = NULL;
	size_t n = 0, cap = 0, i, first, added;

	/* forward once what was new, per push (its own sent_to set: the
	 * nodes that have these records), before the merge so the local
	 * fsync does not delay the next hop */
	for (pi = g->pushes; pi; pi = pi->next) {
		const Mts__Gossip__Push *push = pi->msg->push;
		struct mts_delta_sent sent = { .n = 0 };

		first = n;
		if ((added = take_fresh(g, push, &fresh, &n, &cap)) == 0)
			continue;
		mts_delta_sent_add(&sent, pi->from);
		for (i = 0; i < push->n_sent_to; i++)
			if (push->sent_to[i].len == MTS_NODE_ID_LEN)
				mts_delta_sent_add(&sent,
				    push->sent_to[i].data);
		push_to_peers(g, fresh + first, added, &sent, now);
	}
	if (n > 0)
		(void)merge_chunked(g, fresh, n, NULL, NULL);
	for (pi = g->pushes; pi; pi = next) {
		next = pi->next;
		mts__gossip__msg__free_unpacked(pi->msg, NULL);
		free(pi);
	}
	g->pushes = NULL;
	free(fresh);
}

/* --- anti-entropy: serving ------------------------------------------------------------ */

/*
 * A peer's request is answered from the local statestore asynchronously:
 * what the reply needs is gathered in a struct serve, and the reply goes to
 * the peer (by id: its link may have changed meanwhile) once the last local
 * answer is in. At most AE_MAX_SERVING requests are served at once; more
 * are dropped (the peer's walk times out and tries again later).
 */
struct serve {
	struct gossipd *g;
	uint8_t peer[MTS_NODE_ID_LEN];
	uint64_t msg_id;
	size_t n, left;
	Mts__Gossip__Page *pages; /* page requests: n of them */
	Mts__Gossip__Page **pp;
};

static struct serve *
serve_new(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    size_t n)
{
	struct serve *sv;

	if (g->ae_serving >= AE_MAX_SERVING) {
		log_debug("anti-entropy request from %s dropped: %d in progress",
		    l->raddr, g->ae_serving);
		return NULL;
	}
	sv = xcalloc(1, sizeof(*sv));
	sv->g = g;
	memcpy(sv->peer, l->id, MTS_NODE_ID_LEN);
	sv->msg_id = m->id;
	sv->n = sv->left = n;
	g->ae_serving++;
	return sv;
}

static void
serve_send(struct serve *sv, Mts__Gossip__Msg *msg)
{
	struct peer *p = gd_peer_find(sv->g, sv->peer);

	msg->id = sv->msg_id;
	if (p && !p->removed)
		(void)gd_send(sv->g, p, msg, mts_now());
}

static void
serve_free(struct serve *sv)
{
	size_t i;

	for (i = 0; i < sv->n && sv->pages; i++) {
		free(sv->pages[i].page.data);
		free(sv->pages[i].hash.data);
	}
	free(sv->pages);
	free(sv->pp);
	sv->g->ae_serving--;
	free(sv);
}

static void
root_served(struct gossipd *g, void *arg, int rc,
    const Mts__Statestore__Reply *rep)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RootRep rr = MTS__GOSSIP__ROOT_REP__INIT;
	struct serve *sv = arg;

	if (rc == 0 && rep->root && rep->root->hash.len == MTS_HASH_LEN) {
		rr.hash = rep->root->hash;
		msg.body_case = MTS__GOSSIP__MSG__BODY_ROOT_REP;
		msg.root_rep = &rr;
		serve_send(sv, &msg);
	}
	serve_free(sv);
}

static void
serve_root(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq rr = MTS__STATESTORE__ROOT_REQ__INIT;
	struct serve *sv = serve_new(g, l, m, 1);

	if (sv == NULL)
		return;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_ROOT;
	req.root = &rr;
	gd_store_send(g, &req, root_served, sv);
}

/* One page of a page request: arg points at it, its serve follows. */
struct serve_page {
	struct serve *sv;
	size_t i;
};

static void
page_served(struct gossipd *g, void *arg, int rc,
    const Mts__Statestore__Reply *rep)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__PageRep pr = MTS__GOSSIP__PAGE_REP__INIT;
	struct serve_page *sp = arg;
	struct serve *sv = sp->sv;
	Mts__Gossip__Page *pg = &sv->pages[sp->i];

	free(sp);
	if (rc == 0 && rep->page && rep->page->found) {
		pg->found = 1;
		pg->page.len = rep->page->page.len;
		pg->page.data = xmemdup(rep->page->page.data,
		    pg->page.len ? pg->page.len : 1);
	}
	if (--sv->left > 0)
		return;
	pr.pages = sv->pp;
	pr.n_pages = sv->n;
	msg.body_case = MTS__GOSSIP__MSG__BODY_PAGE_REP;
	msg.page_rep = &pr;
	serve_send(sv, &msg);
	serve_free(sv);
}

static void
serve_pages(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m)
{
	const Mts__Gossip__PageReq *pr = m->page_req;
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PageReq sp = MTS__STATESTORE__PAGE_REQ__INIT;
	size_t n = pr->n_hashes > AE_MAX_PAGES_SERVED ? AE_MAX_PAGES_SERVED
	                                              : pr->n_hashes;
	struct serve *sv;
	struct serve_page *one;
	size_t i;

	if (n == 0 || (sv = serve_new(g, l, m, n)) == NULL)
		return;
	sv->pages = xcalloc(n, sizeof(*sv->pages));
	sv->pp = xcalloc(n, sizeof(*sv->pp));
	for (i = 0; i < n; i++) {
		mts__gossip__page__init(&sv->pages[i]);
		sv->pp[i] = &sv->pages[i];
		/* the hash is echoed back: keep a copy (the request is freed) */
		sv->pages[i].hash.len =
		    pr->hashes[i].len == MTS_HASH_LEN ? MTS_HASH_LEN : 0;
		sv->pages[i].hash.data = sv->pages[i].hash.len
		    ? xmemdup(pr->hashes[i].data, MTS_HASH_LEN)
		    : NULL;
	}
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PAGE;
	req.page = &sp;
	for (i = 0; i < n; i++) {
		one = xcalloc(1, sizeof(*one));
		one->sv = sv;
		one->i = i;
		if (sv->pages[i].hash.len != MTS_HASH_LEN) {
			page_served(g, one, -MTS_ERR_INVAL, NULL);
			continue;
		}
		sp.hash = sv->pages[i].hash;
		gd_store_send(g, &req, page_served, one);
	}
}

static void
records_served(struct gossipd *g, void *arg, int rc,
    const Mts__Statestore__Reply *rep)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RecordsRep rr = MTS__GOSSIP__RECORDS_REP__INIT;

	if (rc == 0 && rep->records) {
		rr.records = rep->records->records;
		rr.n_records = rep->records->n_records;
	}
	msg.body_case = MTS__GOSSIP__MSG__BODY_RECORDS_REP;
	msg.records_rep = &rr;
	serve_send(arg, &msg);
	serve_free(arg);
}

static void
serve_records(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m)
{
	const Mts__Gossip__RecordsReq *rq = m->records_req;
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RecordsReq sr = MTS__STATESTORE__RECORDS_REQ__INIT;
	struct serve *sv = serve_new(g, l, m, 1);

	if (sv == NULL)
		return;
	sr.keys = rq->keys;
	sr.n_keys =
	    rq->n_keys > AE_MAX_KEYS_SERVED ? AE_MAX_KEYS_SERVED : rq->n_keys;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_RECORDS;
	req.records = &sr;
	gd_store_send(g, &req, records_served, sv);
}

void
gd_ae_serve(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m)
{
	switch (m->body_case) {
	case MTS__GOSSIP__MSG__BODY_ROOT_REQ:
		serve_root(g, l, m);
		break;
	case MTS__GOSSIP__MSG__BODY_PAGE_REQ:
		serve_pages(g, l, m);
		break;
	case MTS__GOSSIP__MSG__BODY_RECORDS_REQ:
		serve_records(g, l, m);
		break;
	default:
		break;
	}
}

/* --- anti-entropy: the walk ----------------------------------------------------------- */

/*
 * The walk asks the local replica two things: which of the page hashes it
 * is about to request it already holds (those subtrees are equal), and the
 * record hashes of the keys of each page the peer sent. Both are asked of
 * the statestore asynchronously before the core needs them: page hashes
 * come out of the core unchecked (has_page NULL) and are filtered by the
 * answers; a page reply is held until the records of its keys are in, then
 * fed to the core, whose rh callback reads those answers. Answers for an
 * abandoned walk are recognised by the walk's generation and dropped.
 */

/* A page of the peer's reply held for local answers. */
struct held_page {
	uint8_t h[MTS_HASH_LEN];
	uint8_t *page;
	size_t len;
	uint8_t (*rh)[MTS_HASH_LEN]; /* per item of the page */
	int *found;
	size_t nitems;
};

/* A local answer the walk waits for: arg of the store callbacks. */
struct walk_q {
	uint64_t gen;
	size_t i;
};

static struct walk_q *
walk_q(struct gossipd *g, size_t i)
{
	struct walk_q *q = xcalloc(1, sizeof(*q));

	q->gen = g->walk.gen;
	q->i = i;
	g->walk.local_wait++;
	return q;
}

/* 1 if the answer q belongs to the current walk (q is freed). */
static int
walk_q_take(struct gossipd *g, struct walk_q *q, size_t *i)
{
	int ours = g->walk.active && q->gen == g->walk.gen;

	if (ours) {
		*i = q->i;
		g->walk.local_wait--;
	}
	free(q);
	return ours;
}

static void
held_free(struct gossipd *g)
{
	size_t i;

	for (i = 0; i < g->walk.nheld; i++) {
		free(g->walk.held[i].page);
		free(g->walk.held[i].rh);
		free(g->walk.held[i].found);
	}
	free(g->walk.held);
	g->walk.held = NULL;
	g->walk.nheld = 0;
	free(g->walk.cand);
	free(g->walk.cand_have);
	g->walk.cand = NULL;
	g->walk.cand_have = NULL;
	g->walk.ncand = 0;
}

static void
walk_end(struct gossipd *g, const char *why, mts_time_t now)
{
	char hex[MTS_NODE_HEX_LEN + 1];

	mts_hex(hex, g->walk.peer, MTS_NODE_ID_LEN);
	if (why)
		log_info("anti-entropy with %.12s abandoned: %s", hex, why);
	else
		log_debug("anti-entropy with %.12s done in %lld ms (%llu pages)",
		    hex, (long long)(now - g->walk.started),
		    (unsigned long long)(g->walk.ae
		            ? mts_ae_pages_seen(g->walk.ae)
		            : 0));
	mts_ae_free(g->walk.ae);
	held_free(g);
	g->walk.ae = NULL;
	g->walk.active = 0;
	g->walk.req_id = 0;
	g->walk.local_wait = 0;
	g->walk.gen++;
	g->stats.ae_rounds++;
	g->stats.ae_done += why == NULL;
}

static int
walk_send(struct gossipd *g, Mts__Gossip__Msg *msg, mts_time_t now)
{
	struct peer *p = gd_peer_find(g, g->walk.peer);

	msg->id = ++g->next_id;
	if (p == NULL || gd_send(g, p, msg, now) < 0)
		return -1;
	g->walk.req_id = msg->id;
	g->walk.deadline = now + AE_REPLY_TIMEOUT;
	return 0;
}

static int
budget_ok(struct gossipd *g, mts_time_t now)
{
	if (now - g->ae_budget_at >= 1000) {
		g->ae_budget = g->cfg.ae_rate;
		g->ae_budget_at = now;
	}
	return g->ae_budget > 0;
}

static void walk_next(struct gossipd *, mts_time_t now);

/* Requests the candidate pages the local replica does not hold, or moves
 * on when it holds them all. */
static void
request_pages(struct gossipd *g, mts_time_t now)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__PageReq pr = MTS__GOSSIP__PAGE_REQ__INIT;
	ProtobufCBinaryData hb[GD_PAGE_BATCH];
	size_t i, n = 0;

	for (i = 0; i < g->walk.ncand; i++) {
		if (g->walk.cand_have[i])
			continue;
		hb[n].data = g->walk.cand[i];
		hb[n].len = MTS_HASH_LEN;
		n++;
	}
	if (n == 0) {
		walk_next(g, now);
		return;
	}
	pr.hashes = hb;
	pr.n_hashes = n;
	msg.body_case = MTS__GOSSIP__MSG__BODY_PAGE_REQ;
	msg.page_req = &pr;
	if (walk_send(g, &msg, now) < 0)
		walk_end(g, "peer unreachable", now);
}

static void
cand_answered(struct gossipd *g, void *arg, int rc,
    const Mts__Statestore__Reply *rep)
{
	size_t i;

	if (!walk_q_take(g, arg, &i))
		return;
	g->walk.cand_have[i] = rc == 0 && rep->page && rep->page->found;
	if (g->walk.local_wait == 0)
		request_pages(g, mts_now());
}

/* Asks the statestore which of the next page hashes it holds. */
static int
check_pages(struct gossipd *g)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PageReq pr = MTS__STATESTORE__PAGE_REQ__INIT;
	size_t n, i;

	free(g->walk.cand);
	free(g->walk.cand_have);
	g->walk.cand = xcalloc(GD_PAGE_BATCH, sizeof(*g->walk.cand));
	g->walk.cand_have = xcalloc(GD_PAGE_BATCH, sizeof(int));
	n = mts_ae_next_pages(g->walk.ae, g->walk.cand, GD_PAGE_BATCH);
	g->walk.ncand = n;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PAGE;
	req.page = &pr;
	for (i = 0; i < n; i++) {
		pr.hash.data = g->walk.cand[i];
		pr.hash.len = MTS_HASH_LEN;
		gd_store_send(g, &req, cand_answered, walk_q(g, i));
	}
	return n > 0;
}

/* Asks for the next records or pages, or ends the walk. */
static void
walk_next(struct gossipd *g, mts_time_t now)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RecordsReq rr = MTS__GOSSIP__RECORDS_REQ__INIT;
	struct mts_ae_key keys[GD_KEY_BATCH];
	ProtobufCBinaryData kb[GD_KEY_BATCH];
	size_t n, i;
	int rc;

	g->walk.req_id = 0;
	if (!budget_ok(g, now))
		return; /* resumed by gd_ae_tick */
	if ((n = mts_ae_next_keys(g->walk.ae, keys, GD_KEY_BATCH, 256u << 10)) >
	    0) {
		for (i = 0; i < n; i++) {
			kb[i].data = keys[i].key;
			kb[i].len = keys[i].klen;
		}
		rr.keys = kb;
		rr.n_keys = n;
		msg.body_case = MTS__GOSSIP__MSG__BODY_RECORDS_REQ;
		msg.records_req = &rr;
		rc = walk_send(g, &msg, now);
		for (i = 0; i < n; i++)
			free(keys[i].key);
		if (rc < 0)
			walk_end(g, "peer unreachable", now);
	} else if (!check_pages(g)) {
		walk_end(g, NULL, now);
	}
}

void
gd_ae_start_with(struct gossipd *g, const uint8_t id[MTS_NODE_ID_LEN],
    mts_time_t now)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RootReq rq = MTS__GOSSIP__ROOT_REQ__INIT;
	uint64_t gen = g->walk.gen;

	if (g->walk.active)
		return;
	memset(&g->walk, 0, sizeof(g->walk));
	g->walk.gen = gen + 1;
	memcpy(g->walk.peer, id, MTS_NODE_ID_LEN);
	g->walk.active = 1;
	g->walk.started = now;
	g->next_ae = now + g->cfg.ae_interval;
	msg.body_case = MTS__GOSSIP__MSG__BODY_ROOT_REQ;
	msg.root_req = &rq;
	if (walk_send(g, &msg, now) < 0)
		walk_end(g, "peer unreachable", now);
}

/* The core's rh callback: the answers gathered for the page being fed. */
static void
held_rh(void *ctx, const uint8_t *const *keys, const size_t *klens, size_t n,
    uint8_t (*rh)[MTS_HASH_LEN], int *found)
{
	struct gossipd *g = ctx;
	const struct held_page *hp = g->walk.feeding;
	size_t i;

	for (i = 0; i < n; i++) {
		found[i] = i < hp->nitems && hp->found[i];
		if (found[i])
			memcpy(rh[i], hp->rh[i], MTS_HASH_LEN);
	}
}

static void
local_root_answered(struct gossipd *g, void *arg, int rc,
    const Mts__Statestore__Reply *rep)
{
	struct mts_ae_local loc = { NULL, held_rh, g };
	mts_time_t now = mts_now();
	size_t i;

	if (!walk_q_take(g, arg, &i))
		return;
	if (rc < 0 || rep->root == NULL || rep->root->hash.len != 32) {
		walk_end(g, "local statestore unavailable", now);
		return;
	}
	g->walk.ae = mts_ae_new(&loc);
	if (mts_ae_start(g->walk.ae, rep->root->hash.data,
	        g->walk.remote_root) == 0) {
		walk_end(g, NULL, now);
		return;
	}
	walk_next(g, now);
}

static void
on_root(struct gossipd *g, const Mts__Gossip__RootRep *rr, mts_time_t now)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq q = MTS__STATESTORE__ROOT_REQ__INIT;

	g->walk.req_id = 0;
	if (rr->hash.len != 32) {
		walk_end(g, "malformed root", now);
		return;
	}
	memcpy(g->walk.remote_root, rr->hash.data, MTS_HASH_LEN);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_ROOT;
	req.root = &q;
	gd_store_send(g, &req, local_root_answered, walk_q(g, 0));
}

static int
record_rh(const Mts__Record *r, uint8_t rh[MTS_HASH_LEN])
{
	struct mts_record rec;

	if (r == NULL || r->origin.len != MTS_NODE_ID_LEN)
		return -MTS_ERR_INVAL;
	rec.hlc = r->hlc;
	memcpy(rec.origin, r->origin.data, MTS_NODE_ID_LEN);
	rec.tombstone = r->tombstone;
	rec.value = r->value.data;
	rec.vlen = r->value.len;
	mts_record_hash(&rec, rh);
	return 0;
}

/* Feeds the held pages to the core once every local answer is in. */
static void
feed_held(struct gossipd *g, mts_time_t now)
{
	size_t i;

	for (i = 0; i < g->walk.nheld; i++) {
		struct held_page *hp = &g->walk.held[i];

		g->walk.feeding = hp;
		if (mts_ae_on_page(g->walk.ae, hp->h, hp->page, hp->len) < 0) {
			walk_end(g,
			    "peer sent a page that does not match "
			    "its hash",
			    now);
			return;
		}
	}
	held_free(g);
	walk_next(g, now);
}

static void
keys_answered(struct gossipd *g, void *arg, int rc,
    const Mts__Statestore__Reply *rep)
{
	struct mts_mst_page_view v;
	struct held_page *hp;
	size_t i, j, k;

	if (!walk_q_take(g, arg, &k))
		return;
	hp = &g->walk.held[k];
	if (rc == 0 && rep->records &&
	    mts_mst_page_decode(hp->page, hp->len, &v) == 0) {
		/* replies come in request order with missing keys omitted */
		for (i = 0, j = 0; i < rep->records->n_records &&
		     j < v.nitems && j < hp->nitems;
		     j++) {
			const Mts__KeyRecord *r = rep->records->records[i];

			if (r->key.len != v.items[j].klen ||
			    memcmp(r->key.data, v.items[j].key,
			        v.items[j].klen) != 0)
				continue;
			hp->found[j] = record_rh(r->record, hp->rh[j]) == 0;
			i++;
		}
		mts_mst_page_view_free(&v);
	}
	if (g->walk.local_wait == 0)
		feed_held(g, mts_now());
}

/* Holds page i of the reply and asks for the local records of its keys;
 * a page that does not decode goes to the core as it is (which refuses
 * it). */
static void
hold_page(struct gossipd *g, size_t k, const Mts__Gossip__Page *p)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RecordsReq rr = MTS__STATESTORE__RECORDS_REQ__INIT;
	struct held_page *hp = &g->walk.held[k];
	struct mts_mst_page_view v;
	ProtobufCBinaryData *kb;
	size_t i;

	memcpy(hp->h, p->hash.data, MTS_HASH_LEN);
	hp->len = p->page.len;
	hp->page = xmemdup(p->page.data, p->page.len ? p->page.len : 1);
	if (mts_mst_page_decode(hp->page, hp->len, &v) < 0)
		return;
	if (v.nitems == 0) {
		mts_mst_page_view_free(&v);
		return;
	}
	hp->nitems = v.nitems;
	hp->rh = xcalloc(v.nitems, sizeof(*hp->rh));
	hp->found = xcalloc(v.nitems, sizeof(*hp->found));
	kb = xcalloc(v.nitems, sizeof(*kb));
	for (i = 0; i < v.nitems; i++) {
		kb[i].data = (uint8_t *)v.items[i].key;
		kb[i].len = v.items[i].klen;
	}
	rr.keys = kb;
	rr.n_keys = v.nitems;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_RECORDS;
	req.records = &rr;
	gd_store_send(g, &req, keys_answered, walk_q(g, k));
	free(kb);
	mts_mst_page_view_free(&v);
}

static void
on_pages(struct gossipd *g, const Mts__Gossip__PageRep *pr, mts_time_t now)
{
	size_t i, n = 0;

	held_free(g);
	g->walk.held = xcalloc(pr->n_pages + 1, sizeof(*g->walk.held));
	for (i = 0; i < pr->n_pages; i++) {
		const Mts__Gossip__Page *p = pr->pages[i];

		if (!p->found || p->hash.len != 32)
			continue; /* the peer's tree moved on: next round */
		g->walk.nheld = n + 1;
		hold_page(g, n++, p);
	}
	if (g->walk.local_wait == 0)
		feed_held(g, now);
}

static void
records_merged(struct gossipd *g, void *arg, int rc,
    const Mts__Statestore__Reply *rep)
{
	size_t i;

	if (!walk_q_take(g, arg, &i))
		return;
	if (rc == 0)
		g->stats.ae_records += i;
	if (g->walk.local_wait == 0)
		walk_next(g, mts_now());
}

static void
on_records(struct gossipd *g, const Mts__Gossip__RecordsRep *rr, mts_time_t now)
{
	Mts__KeyRecord **ok = xcalloc(rr->n_records + 1, sizeof(*ok));
	size_t i, n = 0, start = 0, end, bytes;

	for (i = 0; i < rr->n_records; i++)
		if (valid_record(rr->records[i]))
			ok[n++] = rr->records[i];
	/* the walk goes on once the records are stored */
	while (start < n) {
		for (end = start, bytes = 0; end < n && bytes < GD_CHUNK; end++)
			bytes += mts__key_record__get_packed_size(ok[end]);
		gd_store_merge(g, ok + start, end - start, records_merged,
		    walk_q(g, end - start));
		start = end;
	}
	free(ok);
	if (g->walk.local_wait == 0)
		walk_next(g, now);
}

void
gd_ae_reply(struct gossipd *g, struct peer *p, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	size_t bytes;

	if (!g->walk.active || g->walk.req_id == 0 || m->id != g->walk.req_id ||
	    p == NULL || memcmp(p->id, g->walk.peer, MTS_NODE_ID_LEN) != 0)
		return; /* late reply of an abandoned walk */
	bytes = mts__gossip__msg__get_packed_size(m);
	g->stats.ae_bytes += bytes;
	g->ae_budget -= (int64_t)bytes;
	g->walk.req_id = 0;
	switch (m->body_case) {
	case MTS__GOSSIP__MSG__BODY_ROOT_REP:
		on_root(g, m->root_rep, now);
		break;
	case MTS__GOSSIP__MSG__BODY_PAGE_REP:
		on_pages(g, m->page_rep, now);
		break;
	case MTS__GOSSIP__MSG__BODY_RECORDS_REP:
		on_records(g, m->records_rep, now);
		break;
	default:
		break;
	}
}

void
gd_ae_tick(struct gossipd *g, mts_time_t now)
{
	uint8_t id[1][MTS_NODE_ID_LEN];

	if (g->walk.active) {
		if (g->walk.req_id != 0 && now >= g->walk.deadline)
			walk_end(g, "no reply in time", now);
		else if (g->walk.req_id == 0 && g->walk.local_wait == 0 &&
		    g->walk.ae && budget_ok(g, now))
			walk_next(g, now);
		return;
	}
	if (!g->in_cluster || now < g->next_ae)
		return;
	g->next_ae = now + g->cfg.ae_interval;
	if (mts_swim_random_alive(g->swim, NULL, id, 1) == 1)
		gd_ae_start_with(g, id[0], now);
}
