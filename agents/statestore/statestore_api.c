/* statestore_api.c: statestore.sock — get, put, delete, merge, scan, root, page and records requests, their replies and the change feed; authorized by the caller's uid. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "hlc.h"
#include "ipc.h"
#include "log.h"
#include "mst_core.h"
#include "mtserr.h"
#include "record.h"
#include "round.h"
#include "state_core.h"
#include "statestore.h"
#include "statestore.pb-c.h"
#include "store.h"
#include "xmalloc.h"

#define SCAN_DEFAULT 1000
#define SCAN_MAX 10000
#define REPLY_BYTES_MAX (2u << 20) /* values per scan/records reply */

/* --- protobuf <-> record ------------------------------------------------- */

static void
record_to_pb(const struct mts_record *r, Mts__Record *pb)
{
	mts__record__init(pb);
	pb->hlc = r->hlc;
	pb->origin.data = (uint8_t *)r->origin;
	pb->origin.len = MTS_NODE_ID_LEN;
	pb->tombstone = r->tombstone;
	pb->value.data = (uint8_t *)r->value;
	pb->value.len = r->vlen;
}

/* A peer's record as a merge write: -MTS_ERR_INVAL with why when the
 * record is missing or its origin has the wrong length (what the core's
 * struct cannot hold); the rest is mts_state_check_write's. */
static int
merge_write(const Mts__KeyRecord *kr, struct mts_write *w, const char **why)
{
	const Mts__Record *pb = kr->record;

	if (pb == NULL) {
		*why = "missing record";
		return -MTS_ERR_INVAL;
	}
	if (pb->origin.len != MTS_NODE_ID_LEN) {
		*why = "origin is not 16 bytes";
		return -MTS_ERR_INVAL;
	}
	memset(w, 0, sizeof(*w));
	w->kind = MTS_WRITE_MERGE;
	w->key = kr->key.data;
	w->klen = kr->key.len;
	w->rec.hlc = pb->hlc;
	memcpy(w->rec.origin, pb->origin.data, MTS_NODE_ID_LEN);
	w->rec.tombstone = pb->tombstone;
	w->rec.value = pb->value.data;
	w->rec.vlen = pb->value.len;
	return 0;
}

/* This node as the verdict sees it, at the wall time of the request. */
static struct mts_state_self
self_of(struct statestore *ss)
{
	struct mts_state_self self = {
		.node = ss->node,
		.node_hex = ss->node_hex,
		.hlc = &ss->hlc,
		.now_wall_ms = mts_wall_ms(),
	};

	return self;
}

/* --- handlers -------------------------------------------------------------- */

#define SS_REPLY(var) Mts__Statestore__Reply var = MTS__STATESTORE__REPLY__INIT

static void
h_get(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__Request *req = (const void *)m;
	struct statestore *ss = ctx;
	Mts__Statestore__GetRep get = MTS__STATESTORE__GET_REP__INIT;
	Mts__Record pb;
	struct mts_record rec;
	uint8_t *buf = NULL;
	char err[256];
	size_t vlen;
	int r;
	SS_REPLY(rep);

	if (mts_state_check_key(req->get->key.data, req->get->key.len) < 0) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "key must be 1 to %d bytes", MTS_KEY_MAX);
		return;
	}
	r = mts_store_get(ss->db, MTS_CF_RECORDS, req->get->key.data,
	    req->get->key.len, &buf, &vlen, err, sizeof(err));
	if (r < 0 && r != -MTS_ERR_NOTFOUND) {
		mts_ipc_reply_error(call, MTS_ERR_IO, "read failed: %s", err);
		return;
	}
	if (r == 0) {
		if (mts_record_decode(buf, vlen, &rec) < 0) {
			free(buf);
			mts_ipc_reply_error(call, MTS_ERR_IO,
			    "stored record is corrupt");
			return;
		}
		get.found = 1;
		record_to_pb(&rec, &pb);
		get.record = &pb;
	}
	rep.body_case = MTS__STATESTORE__REPLY__BODY_GET;
	rep.get = &get;
	mts_ipc_reply(call, &rep.base);
	free(buf);
}

/* Shared by put and delete: the limits first, then the verdict on the
 * current record; an accepted write joins the open round. */
static void
local_write(struct statestore *ss, struct mts_ipc_call *call, uint32_t kind,
    const struct mts_write *w)
{
	struct mts_state_self self = self_of(ss);
	struct mts_verdict v;
	struct mts_record cur;
	uint8_t *buf;
	int r;

	if (mts_state_check_write(&self, w, &v) < 0) {
		mts_ipc_reply_error(call, v.err, "%s", v.why);
		return;
	}
	r = ss_current(ss, w->key, w->klen, &cur, &buf);
	if (r < 0) {
		mts_ipc_reply_error(call, MTS_ERR_IO,
		    "cannot read current record");
		return;
	}
	if (mts_state_verdict(&self, r ? &cur : NULL, NULL, w, &v) ==
	    MTS_VERDICT_APPLY)
		round_add(ss->open, call, kind, w->key, w->klen, &v.rec,
		    v.was_live, true);
	else
		mts_ipc_reply_error(call, v.err, "%s", v.why);
	free(buf);
}

static void
h_put(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__PutReq *put =
	    ((const Mts__Statestore__Request *)m)->put;
	struct mts_write w = {
		.kind = MTS_WRITE_PUT,
		.key = put->key.data,
		.klen = put->key.len,
		.rec = { .value = put->value.data, .vlen = put->value.len },
		.has_expected = put->has_expected,
		.exp_hlc = put->expected_hlc,
		.exp_origin = put->expected_origin.data,
		.exp_origin_len = put->expected_origin.len,
	};

	local_write(ctx, call, MTS__STATESTORE__REQUEST__BODY_PUT, &w);
}

static void
h_delete(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__DeleteReq *del =
	    ((const Mts__Statestore__Request *)m)->delete_;
	struct mts_write w = {
		.kind = MTS_WRITE_DELETE,
		.key = del->key.data,
		.klen = del->key.len,
		.rec = { .tombstone = true },
		.has_expected = del->has_expected,
		.exp_hlc = del->expected_hlc,
		.exp_origin = del->expected_origin.data,
		.exp_origin_len = del->expected_origin.len,
	};

	local_write(ctx, call, MTS__STATESTORE__REQUEST__BODY_DELETE, &w);
}

/* Checks every record of a merge first: a bad record refuses the whole
 * request (answered here, -1). */
static int
merge_check(const struct mts_state_self *self,
    const Mts__Statestore__MergeReq *mr, struct mts_ipc_call *call)
{
	struct mts_verdict v;
	struct mts_write w;
	const char *why;
	size_t i;

	for (i = 0; i < mr->n_records; i++) {
		const Mts__KeyRecord *kr = mr->records[i];
		int klen = (int)(kr->key.len < MTS_KEY_MAX ? kr->key.len
		                                           : MTS_KEY_MAX);

		if (merge_write(kr, &w, &why) < 0) {
			mts_ipc_reply_error(call, MTS_ERR_INVAL,
			    "record %zu (%.*s): %s", i, klen, kr->key.data,
			    why);
			return -1;
		}
		if (mts_state_check_write(self, &w, &v) < 0) {
			mts_ipc_reply_error(call, v.err,
			    "record %zu (%.*s): %s", i, klen, kr->key.data,
			    v.why);
			return -1;
		}
	}
	return 0;
}

/* The verdict on one merged record; 1 when it joined the open round, 0
 * when ignored, -1 on a read error. */
static int
merge_one(struct statestore *ss, const struct mts_state_self *self,
    const struct mts_write *w)
{
	struct mts_verdict v;
	struct mts_record cur;
	struct mts_frontier pf;
	uint8_t *buf;
	int r, has_pf;

	if ((r = ss_current(ss, w->key, w->klen, &cur, &buf)) < 0)
		return -1;
	/* a frontier matters only where the tombstone it replaced is gone */
	has_pf = r == 0 && ss_frontier_get(ss, w->key, w->klen, &pf);
	if (mts_state_verdict(self, r ? &cur : NULL, has_pf ? &pf : NULL, w,
	        &v) == MTS_VERDICT_APPLY)
		round_add(ss->open, NULL, MTS__STATESTORE__REQUEST__BODY_MERGE,
		    w->key, w->klen, &v.rec, v.was_live, false);
	free(buf);
	return v.kind == MTS_VERDICT_APPLY;
}

static void
h_merge(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__MergeReq *mr =
	    ((const Mts__Statestore__Request *)m)->merge;
	struct statestore *ss = ctx;
	struct mts_state_self self = self_of(ss);
	size_t first = ss->open->n; /* index of this request's first write */
	uint32_t applied = 0, ignored = 0;
	struct mts_write w;
	const char *why;
	size_t i;
	int r;

	if (merge_check(&self, mr, call) < 0)
		return;
	for (i = 0; i < mr->n_records; i++) {
		merge_write(mr->records[i], &w, &why);
		if ((r = merge_one(ss, &self, &w)) < 0) {
			mts_ipc_reply_error(call, MTS_ERR_IO,
			    "cannot read current record");
			/* earlier records of this request stay in the round
			 * without a reply owner: merges are idempotent */
			return;
		}
		applied += r;
		ignored += !r;
	}
	if (applied == 0) { /* nothing to commit: answer now */
		Mts__Statestore__MergeRep mrep =
		    MTS__STATESTORE__MERGE_REP__INIT;
		SS_REPLY(rep);

		mrep.ignored = ignored;
		rep.body_case = MTS__STATESTORE__REPLY__BODY_MERGE;
		rep.merge = &mrep;
		mts_ipc_reply(call, &rep.base);
		return;
	}
	ss->open->pend[first].call = call;
	ss->open->pend[first].applied = applied;
	ss->open->pend[first].ignored = ignored;
}

/* Whether key starts with prefix. */
static int
has_prefix(const uint8_t *key, size_t klen, const ProtobufCBinaryData *p)
{
	return klen >= p->len && memcmp(key, p->data, p->len) == 0;
}

/* A scan reply's items. They own copies of their keys, values and origins:
 * the iterator's memory is only valid until it moves. */
struct scan_items {
	Mts__KeyRecord *kr, **ptrs;
	Mts__Record *pb;
	size_t n;
};

static void
scan_add(struct scan_items *s, const uint8_t *k, size_t klen,
    const struct mts_record *rec)
{
	size_t n = s->n++;

	mts__key_record__init(&s->kr[n]);
	s->kr[n].key.data = xmemdup(k, klen);
	s->kr[n].key.len = klen;
	record_to_pb(rec, &s->pb[n]);
	s->pb[n].value.data = xmemdup(rec->value, rec->vlen);
	s->pb[n].origin.data = xmemdup(rec->origin, MTS_NODE_ID_LEN);
	s->kr[n].record = &s->pb[n];
	s->ptrs[n] = &s->kr[n];
}

static void
scan_free(struct scan_items *s)
{
	while (s->n--) {
		free(s->kr[s->n].key.data);
		free(s->pb[s->n].value.data);
		free(s->pb[s->n].origin.data);
	}
	free(s->kr);
	free(s->pb);
	free(s->ptrs);
}

/* Whether the scan skips the record at k (the start_after key itself, a
 * corrupt record, a tombstone unless asked for). */
static int
scan_skips(const Mts__Statestore__ScanReq *sr, const uint8_t *k, size_t klen,
    const uint8_t *v, size_t vlen, struct mts_record *rec)
{
	if (sr->start_after.len && klen == sr->start_after.len &&
	    memcmp(k, sr->start_after.data, klen) == 0)
		return 1;
	if (mts_record_decode(v, vlen, rec) < 0) {
		log_warnx("scan: stored record of %.*s is corrupt", (int)klen,
		    k);
		return 1;
	}
	return rec->tombstone && !sr->include_tombstones;
}

static void
h_scan(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__ScanReq *sr =
	    ((const Mts__Statestore__Request *)m)->scan;
	struct statestore *ss = ctx;
	Mts__Statestore__ScanRep scan = MTS__STATESTORE__SCAN_REP__INIT;
	struct mts_store_iter *it;
	struct scan_items items;
	struct mts_record rec;
	size_t limit = sr->limit ? sr->limit : SCAN_DEFAULT, bytes = 0;
	const ProtobufCBinaryData *start;
	SS_REPLY(rep);

	if (limit > SCAN_MAX)
		limit = SCAN_MAX;
	items.kr = xcalloc(limit, sizeof(*items.kr));
	items.pb = xcalloc(limit, sizeof(*items.pb));
	items.ptrs = xcalloc(limit, sizeof(*items.ptrs));
	items.n = 0;
	start = sr->start_after.len > sr->prefix.len ? &sr->start_after
	                                             : &sr->prefix;
	it =
	    mts_store_iter_new(ss->db, MTS_CF_RECORDS, start->data, start->len);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen, vlen;
		const uint8_t *k = mts_store_iter_key(it, &klen);
		const uint8_t *v = mts_store_iter_val(it, &vlen);

		if (!has_prefix(k, klen, &sr->prefix))
			break;
		if (scan_skips(sr, k, klen, v, vlen, &rec))
			continue;
		if (items.n == limit || bytes > REPLY_BYTES_MAX) {
			scan.more = 1;
			break;
		}
		scan_add(&items, k, klen, &rec);
		bytes += klen + vlen;
	}
	mts_store_iter_free(it);
	scan.n_items = items.n;
	scan.items = items.ptrs;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_SCAN;
	rep.scan = &scan;
	mts_ipc_reply(call, &rep.base);
	scan_free(&items);
}

static void
h_root(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct statestore *ss = ctx;
	Mts__Statestore__RootRep root = MTS__STATESTORE__ROOT_REP__INIT;
	uint8_t h[MTS_HASH_LEN];
	SS_REPLY(rep);

	mts_mst_root(ss->mst, h);
	root.hash.data = h;
	root.hash.len = sizeof(h);
	root.records = mts_mst_count(ss->mst);
	root.pages = mts_mst_pages(ss->mst);
	root.live = ss->live;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_ROOT;
	rep.root = &root;
	mts_ipc_reply(call, &rep.base);
}

static void
h_page(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__PageReq *pr =
	    ((const Mts__Statestore__Request *)m)->page;
	struct statestore *ss = ctx;
	Mts__Statestore__PageRep page = MTS__STATESTORE__PAGE_REP__INIT;
	uint8_t h[MTS_HASH_LEN];
	const uint8_t *enc;
	size_t len;
	SS_REPLY(rep);

	if (pr->hash.len != MTS_HASH_LEN) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "page hash must be %d bytes, got %zu", MTS_HASH_LEN,
		    pr->hash.len);
		return;
	}
	mts_mst_root(ss->mst, h); /* brings cached page hashes up to date */
	if (mts_mst_page(ss->mst, pr->hash.data, &enc, &len) == 0) {
		page.found = 1;
		page.page.data = (uint8_t *)enc;
		page.page.len = len;
	}
	rep.body_case = MTS__STATESTORE__REPLY__BODY_PAGE;
	rep.page = &page;
	mts_ipc_reply(call, &rep.base);
}

/* One key of a records request: its record decoded into *rec, pointing
 * into *buf (the caller frees it). The stored length, or 0 when the key is
 * out of limits, absent, unreadable or corrupt (then *buf is NULL). */
static size_t
records_one(struct statestore *ss, const ProtobufCBinaryData *k, uint8_t **buf,
    struct mts_record *rec)
{
	size_t vlen;
	char err[256];

	*buf = NULL;
	if (k->len == 0 || k->len > MTS_KEY_MAX ||
	    mts_store_get(ss->db, MTS_CF_RECORDS, k->data, k->len, buf, &vlen,
	        err, sizeof(err)) < 0)
		return 0;
	if (mts_record_decode(*buf, vlen, rec) < 0) {
		free(*buf);
		*buf = NULL;
		return 0;
	}
	return vlen;
}

static void
h_records(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__RecordsReq *rr =
	    ((const Mts__Statestore__Request *)m)->records;
	struct statestore *ss = ctx;
	Mts__Statestore__RecordsRep recs = MTS__STATESTORE__RECORDS_REP__INIT;
	Mts__KeyRecord *items, **ptrs;
	Mts__Record *pbs;
	uint8_t **bufs;
	struct mts_record *rec; /* one each: pbs[] point at their origins */
	size_t i, n = 0, vlen, bytes = 0;
	SS_REPLY(rep);

	if (rr->n_keys > SCAN_MAX) {
		mts_ipc_reply_error(call, MTS_ERR_TOOBIG,
		    "%zu keys asked, at most %d per request", rr->n_keys,
		    SCAN_MAX);
		return;
	}
	items = xcalloc(rr->n_keys, sizeof(*items));
	ptrs = xcalloc(rr->n_keys, sizeof(*ptrs));
	pbs = xcalloc(rr->n_keys, sizeof(*pbs));
	bufs = xcalloc(rr->n_keys, sizeof(*bufs));
	rec = xcalloc(rr->n_keys, sizeof(*rec));
	for (i = 0; i < rr->n_keys && bytes <= 2 * REPLY_BYTES_MAX; i++) {
		if ((vlen = records_one(ss, &rr->keys[i], &bufs[n], &rec[n])) ==
		    0)
			continue;
		mts__key_record__init(&items[n]);
		items[n].key = rr->keys[i];
		record_to_pb(&rec[n], &pbs[n]);
		items[n].record = &pbs[n];
		ptrs[n] = &items[n];
		bytes += vlen;
		n++;
	}
	if (bytes > 2 * REPLY_BYTES_MAX) {
		mts_ipc_reply_error(call, MTS_ERR_TOOBIG,
		    "records over %u bytes: ask for fewer keys",
		    2 * REPLY_BYTES_MAX);
	} else {
		recs.n_records = n;
		recs.records = ptrs;
		rep.body_case = MTS__STATESTORE__REPLY__BODY_RECORDS;
		rep.records = &recs;
		mts_ipc_reply(call, &rep.base);
	}
	while (n--)
		free(bufs[n]);
	free(bufs);
	free(rec);
	free(items);
	free(ptrs);
	free(pbs);
}

/* Who may call what: [statestore] acl_read, acl_write, acl_merge. */
static const struct mts_acl_rule acl_rules[] = {
	{ MTS_CALLER_READ, MTS_ACL_USERS, "acl_read" },
	{ MTS_CALLER_WRITE, MTS_ACL_USERS, "acl_write" },
	{ MTS_CALLER_MERGE, MTS_ACL_USERS, "acl_merge" },
	{ 0, 0, NULL },
};

static const struct mts_ipc_route routes[] = {
	{ MTS__STATESTORE__REQUEST__BODY_GET, "get", MTS_CALLER_READ, h_get },
	{ MTS__STATESTORE__REQUEST__BODY_PUT, "put", MTS_CALLER_WRITE, h_put },
	{ MTS__STATESTORE__REQUEST__BODY_DELETE, "delete", MTS_CALLER_WRITE,
	    h_delete },
	{ MTS__STATESTORE__REQUEST__BODY_SCAN, "scan", MTS_CALLER_READ,
	    h_scan },
	{ MTS__STATESTORE__REQUEST__BODY_MERGE, "merge", MTS_CALLER_MERGE,
	    h_merge },
	{ MTS__STATESTORE__REQUEST__BODY_ROOT, "root", MTS_CALLER_READ,
	    h_root },
	{ MTS__STATESTORE__REQUEST__BODY_PAGE, "page", MTS_CALLER_READ,
	    h_page },
	{ MTS__STATESTORE__REQUEST__BODY_RECORDS, "records", MTS_CALLER_READ,
	    h_records },
};

const struct mts_ipc_service ss_service = {
	.name = "statestore",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.acl = acl_rules,
};

/* --- replies to synced writes, the change feed -------------------------------- */

void
ss_publish(struct statestore *ss, const struct pending *p)
{
	Mts__Statestore__Change ch = MTS__STATESTORE__CHANGE__INIT;
	Mts__Record pb;
	struct mts_record rec;

	if (mts_record_decode(p->enc, p->elen, &rec) < 0)
		return;
	record_to_pb(&rec, &pb);
	ch.key.data = p->key;
	ch.key.len = p->klen;
	ch.record = &pb;
	ch.local = p->local;
	mts_pub_send(ss->pub, p->key, p->klen, &ch.base);
}

void
ss_reply_write(const struct pending *p)
{
	Mts__Statestore__PutRep put = MTS__STATESTORE__PUT_REP__INIT;
	Mts__Statestore__DeleteRep del = MTS__STATESTORE__DELETE_REP__INIT;
	Mts__Statestore__MergeRep merge = MTS__STATESTORE__MERGE_REP__INIT;
	struct mts_record rec;
	Mts__Record pb;
	SS_REPLY(rep);

	mts_record_decode(p->enc, p->elen, &rec);
	record_to_pb(&rec, &pb);
	switch (p->kind) {
	case MTS__STATESTORE__REQUEST__BODY_PUT:
		put.record = &pb;
		rep.body_case = MTS__STATESTORE__REPLY__BODY_PUT;
		rep.put = &put;
		break;
	case MTS__STATESTORE__REQUEST__BODY_DELETE:
		del.record = &pb;
		rep.body_case = MTS__STATESTORE__REPLY__BODY_DELETE;
		rep.delete_ = &del;
		break;
	default:
		merge.applied = p->applied;
		merge.ignored = p->ignored;
		rep.body_case = MTS__STATESTORE__REPLY__BODY_MERGE;
		rep.merge = &merge;
		break;
	}
	mts_ipc_reply(p->call, &rep.base);
}
