/* sync.c: replication between nodes — delta push with forward-once dedupe, and anti-entropy rounds (serving pages and records, driving the walk, rate limit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "record.h"
#include "xmalloc.h"

#define AE_REPLY_TIMEOUT 5000
#define AE_MAX_KEYS_SERVED 2048
#define AE_MAX_PAGES_SERVED 256

/* --- delta push ------------------------------------------------------------------- */

static int
valid_record(const Mts__KeyRecord *kr)
{
	return kr && kr->record && kr->key.len > 0 &&
	    kr->key.len <= MTS_KEY_MAX && kr->record->origin.len == 16 &&
	    kr->record->value.len <= MTS_RECORD_MAX_VALUE;
}

#define MAX_SENT_TO 64

/* The nodes a push already reached or was sent to. */
struct sent_set {
	uint8_t id[MAX_SENT_TO][MTS_NODE_ID_LEN];
	size_t n;
};

static int
in_set(const struct sent_set *ss, const uint8_t id[16])
{
	size_t i;

	for (i = 0; i < ss->n; i++)
		if (memcmp(ss->id[i], id, MTS_NODE_ID_LEN) == 0)
			return 1;
	return 0;
}

static void
set_add(struct sent_set *ss, const uint8_t id[16])
{
	if (ss->n < MAX_SENT_TO && !in_set(ss, id))
		memcpy(ss->id[ss->n++], id, MTS_NODE_ID_LEN);
}

/* Sends recs (split into pushes of about GD_CHUNK bytes) to `fanout`
 * random alive peers outside `sent` (which grows by them and is sent
 * along, so the next hop picks yet other nodes). */
static void
push_to_peers(struct gossipd *g, Mts__KeyRecord **recs, size_t n,
    struct sent_set *sent, mts_time_t now)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__Push push = MTS__GOSSIP__PUSH__INIT;
	ProtobufCBinaryData st[MAX_SENT_TO];
	uint8_t cand[64][16], ids[16][16];
	size_t k = 0, c, i, start = 0, end, bytes;
	struct peer *p;
	int fanout = g->cfg.fanout > 16 ? 16 : g->cfg.fanout;

	set_add(sent, g->id);
	c = mts_swim_random_alive(g->swim, NULL, cand, 64);
	for (i = 0; i < c && k < (size_t)fanout; i++)
		if (!in_set(sent, cand[i]))
			memcpy(ids[k++], cand[i], 16);
	for (i = 0; i < k; i++)
		set_add(sent, ids[i]);
	for (i = 0; i < sent->n; i++) {
		st[i].data = sent->id[i];
		st[i].len = MTS_NODE_ID_LEN;
	}
	push.sent_to = st;
	push.n_sent_to = sent->n;
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
		struct sent_set sent = {.n = 0};

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

/* Merges recs in requests of about GD_CHUNK bytes; 0 if all succeeded. */
static int
merge_chunked(struct gossipd *g, Mts__KeyRecord **recs, size_t n)
{
	size_t start = 0, end, bytes;
	int rc = 0;

	while (start < n) {
		for (end = start, bytes = 0; end < n && bytes < GD_CHUNK; end++)
			bytes += mts__key_record__get_packed_size(recs[end]);
		if (gd_store_merge(g, recs + start, end - start) < 0)
			rc = -1;
		start = end;
	}
	return rc;
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
		struct sent_set sent = {.n = 0};

		first = n;
		if ((added = take_fresh(g, push, &fresh, &n, &cap)) == 0)
			continue;
		set_add(&sent, pi->from);
		for (i = 0; i < push->n_sent_to; i++)
			if (push->sent_to[i].len == MTS_NODE_ID_LEN)
				set_add(&sent, push->sent_to[i].data);
		push_to_peers(g, fresh + first, added, &sent, now);
	}
	if (n > 0)
		(void)merge_chunked(g, fresh, n);
	for (pi = g->pushes; pi; pi = next) {
		next = pi->next;
		mts__gossip__msg__free_unpacked(pi->msg, NULL);
		free(pi);
	}
	g->pushes = NULL;
	free(fresh);
}

/* --- anti-entropy: serving ------------------------------------------------------------ */

static void
serve_root(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RootRep rr = MTS__GOSSIP__ROOT_REP__INIT;
	uint8_t root[32];

	if (gd_store_root(g, root) < 0)
		return;
	rr.hash.data = root;
	rr.hash.len = 32;
	msg.id = m->id;
	msg.body_case = MTS__GOSSIP__MSG__BODY_ROOT_REP;
	msg.root_rep = &rr;
	(void)gd_send_on_link(g, l, &msg);
}

static void
serve_pages(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m)
{
	const Mts__Gossip__PageReq *pr = m->page_req;
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__PageRep rep = MTS__GOSSIP__PAGE_REP__INIT;
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PageReq sp = MTS__STATESTORE__PAGE_REQ__INIT;
	size_t n = pr->n_hashes > AE_MAX_PAGES_SERVED ? AE_MAX_PAGES_SERVED :
							pr->n_hashes;
	Mts__Statestore__Reply **reps = xcalloc(n + 1, sizeof(*reps));
	Mts__Gossip__Page *pages = xcalloc(n + 1, sizeof(*pages));
	Mts__Gossip__Page **pp = xcalloc(n + 1, sizeof(*pp));
	size_t i;

	req.body_case = MTS__STATESTORE__REQUEST__BODY_PAGE;
	req.page = &sp;
	for (i = 0; i < n; i++) {
		mts__gossip__page__init(&pages[i]);
		pages[i].hash = pr->hashes[i];
		pp[i] = &pages[i];
		if (pr->hashes[i].len != 32)
			continue;
		sp.hash = pr->hashes[i];
		if (gd_store_call(g, &req, &reps[i]) < 0 || !reps[i]->page ||
		    !reps[i]->page->found)
			continue;
		pages[i].found = 1;
		pages[i].page = reps[i]->page->page;
	}
	rep.pages = pp;
	rep.n_pages = n;
	msg.id = m->id;
	msg.body_case = MTS__GOSSIP__MSG__BODY_PAGE_REP;
	msg.page_rep = &rep;
	(void)gd_send_on_link(g, l, &msg);
	for (i = 0; i < n; i++)
		if (reps[i])
			mts__statestore__reply__free_unpacked(reps[i], NULL);
	free(reps);
	free(pages);
	free(pp);
}

static void
serve_records(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m)
{
	const Mts__Gossip__RecordsReq *rq = m->records_req;
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RecordsRep rep = MTS__GOSSIP__RECORDS_REP__INIT;
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RecordsReq sr = MTS__STATESTORE__RECORDS_REQ__INIT;
	Mts__Statestore__Reply *sp = NULL;

	sr.keys = rq->keys;
	sr.n_keys = rq->n_keys > AE_MAX_KEYS_SERVED ? AE_MAX_KEYS_SERVED :
						      rq->n_keys;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_RECORDS;
	req.records = &sr;
	if (gd_store_call(g, &req, &sp) == 0 && sp->records) {
		rep.records = sp->records->records;
		rep.n_records = sp->records->n_records;
	}
	msg.id = m->id;
	msg.body_case = MTS__GOSSIP__MSG__BODY_RECORDS_REP;
	msg.records_rep = &rep;
	(void)gd_send_on_link(g, l, &msg);
	if (sp)
		mts__statestore__reply__free_unpacked(sp, NULL);
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

static void
walk_end(struct gossipd *g, const char *why, mts_time_t now)
{
	char hex[MTS_NODE_HEX_LEN + 1];

	mts_hex(hex, g->walk.peer, 16);
	if (why)
		log_info("anti-entropy with %.12s abandoned: %s", hex, why);
	else
		log_debug("anti-entropy with %.12s done in %lld ms (%llu pages)",
		    hex, (long long)(now - g->walk.started),
		    (unsigned long long)(g->walk.ae ?
			    mts_ae_pages_seen(g->walk.ae) : 0));
	mts_ae_free(g->walk.ae);
	g->walk.ae = NULL;
	g->walk.active = 0;
	g->walk.req_id = 0;
	g->stats.ae_rounds++;
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

/* Asks for the next records or pages, or ends the walk. */
static void
walk_next(struct gossipd *g, mts_time_t now)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RecordsReq rr = MTS__GOSSIP__RECORDS_REQ__INIT;
	Mts__Gossip__PageReq pr = MTS__GOSSIP__PAGE_REQ__INIT;
	struct mts_ae_key keys[GD_KEY_BATCH];
	ProtobufCBinaryData kb[GD_KEY_BATCH];
	uint8_t hashes[GD_PAGE_BATCH][32];
	ProtobufCBinaryData hb[GD_PAGE_BATCH];
	size_t n, i;
	int rc;

	g->walk.req_id = 0;
	if (!budget_ok(g, now))
		return; /* resumed by gd_ae_tick */
	if ((n = mts_ae_next_keys(g->walk.ae, keys, GD_KEY_BATCH,
		 256u << 10)) > 0) {
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
	} else if ((n = mts_ae_next_pages(g->walk.ae, hashes,
			GD_PAGE_BATCH)) > 0) {
		for (i = 0; i < n; i++) {
			hb[i].data = hashes[i];
			hb[i].len = 32;
		}
		pr.hashes = hb;
		pr.n_hashes = n;
		msg.body_case = MTS__GOSSIP__MSG__BODY_PAGE_REQ;
		msg.page_req = &pr;
		rc = walk_send(g, &msg, now);
	} else {
		walk_end(g, NULL, now);
		return;
	}
	if (rc < 0)
		walk_end(g, "peer unreachable", now);
}

void
gd_ae_start_with(struct gossipd *g, const uint8_t id[16], mts_time_t now)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RootReq rq = MTS__GOSSIP__ROOT_REQ__INIT;

	if (g->walk.active)
		return;
	memset(&g->walk, 0, sizeof(g->walk));
	memcpy(g->walk.peer, id, 16);
	g->walk.active = 1;
	g->walk.started = now;
	g->next_ae = now + g->cfg.ae_interval;
	msg.body_case = MTS__GOSSIP__MSG__BODY_ROOT_REQ;
	msg.root_req = &rq;
	if (walk_send(g, &msg, now) < 0)
		walk_end(g, "peer unreachable", now);
}

static void
on_root(struct gossipd *g, const Mts__Gossip__RootRep *rr, mts_time_t now)
{
	struct mts_ae_local loc;
	uint8_t root[32];

	if (rr->hash.len != 32) {
		walk_end(g, "malformed root", now);
		return;
	}
	if (gd_store_root(g, root) < 0) {
		walk_end(g, "local statestore unavailable", now);
		return;
	}
	gd_ae_local(g, &loc);
	g->walk.ae = mts_ae_new(&loc);
	if (mts_ae_start(g->walk.ae, root, rr->hash.data) == 0) {
		walk_end(g, NULL, now);
		return;
	}
	walk_next(g, now);
}

static void
on_pages(struct gossipd *g, const Mts__Gossip__PageRep *pr, mts_time_t now)
{
	size_t i;

	for (i = 0; i < pr->n_pages; i++) {
		const Mts__Gossip__Page *p = pr->pages[i];

		if (!p->found || p->hash.len != 32)
			continue; /* the peer's tree moved on: next round */
		if (mts_ae_on_page(g->walk.ae, p->hash.data, p->page.data,
			p->page.len) < 0) {
			walk_end(g, "peer sent a page that does not match "
				    "its hash",
			    now);
			return;
		}
	}
	walk_next(g, now);
}

static void
on_records(struct gossipd *g, const Mts__Gossip__RecordsRep *rr,
    mts_time_t now)
{
	Mts__KeyRecord **ok = xcalloc(rr->n_records + 1, sizeof(*ok));
	size_t i, n = 0;

	for (i = 0; i < rr->n_records; i++)
		if (valid_record(rr->records[i]))
			ok[n++] = rr->records[i];
	if (merge_chunked(g, ok, n) == 0)
		g->stats.ae_records += n;
	free(ok);
	walk_next(g, now);
}

void
gd_ae_reply(struct gossipd *g, struct peer *p, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	size_t bytes;

	if (!g->walk.active || g->walk.req_id == 0 || m->id != g->walk.req_id ||
	    p == NULL || memcmp(p->id, g->walk.peer, 16) != 0)
		return; /* late reply of an abandoned walk */
	bytes = mts__gossip__msg__get_packed_size(m);
	g->stats.ae_bytes += bytes;
	g->ae_budget -= (int64_t)bytes;
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
	uint8_t id[1][16];

	if (g->walk.active) {
		if (g->walk.req_id != 0 && now >= g->walk.deadline)
			walk_end(g, "no reply in time", now);
		else if (g->walk.req_id == 0 && g->walk.ae &&
		    budget_ok(g, now))
			walk_next(g, now);
		return;
	}
	if (!g->in_cluster || now < g->next_ae)
		return;
	g->next_ae = now + g->cfg.ae_interval;
	if (mts_swim_random_alive(g->swim, NULL, id, 1) == 1)
		gd_ae_start_with(g, id[0], now);
}
