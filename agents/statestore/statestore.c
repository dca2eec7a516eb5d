/* statestore.c: mts-statestore main — the node's replica: RocksDB records, MST index, local API, change feed. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "agent.h"
#include "cfg.h"
#include "fsutil.h"
#include "hash.h"
#include "hlc.h"
#include "ipc.h"
#include "log.h"
#include "loop.h"
#include "mst_core.h"
#include "mtserr.h"
#include "mtstime.h"
#include "record.h"
#include "state_core.h"
#include "statestore.h"
#include "statestore.pb-c.h"
#include "store.h"
#include "committer.h"
#include "round.h"
#include "xmalloc.h"

#define ROUND_MAX 512		    /* requests gathered when a sync ends */
#define SCAN_DEFAULT 1000
#define SCAN_MAX 10000
#define REPLY_BYTES_MAX (2u << 20) /* values per scan/records reply */

static const char meta_node_id[] = "node_id";
static const char meta_hlc[] = "hlc";
static const char frontier_prefix[] = "pf/";

/* --- reading the current state ------------------------------------------- */

/* The current record of key as a new write must see it: the open round,
 * then the round being synced, then the database. On 1, *rec points into
 * *buf (free it) or into a round; 0 when absent; <0 on I/O error. */
static int
current(struct statestore *ss, const uint8_t *key, size_t klen,
    struct mts_record *rec, uint8_t **buf)
{
	struct pending *p = round_find(ss->open, key, klen);
	size_t vlen;
	char err[256];
	int r;

	*buf = NULL;
	if (p == NULL && committer_busy(ss->committer))
		p = round_find(ss->syncing, key, klen);
	if (p != NULL)
		return mts_record_decode(p->enc, p->elen, rec) == 0 ? 1
								    : -MTS_ERR_IO;
	r = mts_store_get(ss->db, MTS_CF_RECORDS, key, klen, buf, &vlen, err,
	    sizeof(err));
	if (r == -MTS_ERR_NOTFOUND)
		return 0;
	if (r < 0) {
		log_warnx("read %.*s: %s", (int)klen, key, err);
		return r;
	}
	if (mts_record_decode(*buf, vlen, rec) < 0) {
		log_warnx("stored record of %.*s is corrupt", (int)klen, key);
		return -MTS_ERR_IO;
	}
	return 1;
}

static int
frontier(struct statestore *ss, const uint8_t *key, size_t klen,
    struct mts_frontier *f)
{
	uint8_t *mk, *v;
	size_t vlen, plen = sizeof(frontier_prefix) - 1;
	char err[256];
	int r;

	if (ss->nfrontiers == 0)
		return 0;
	mk = xmalloc(plen + klen);
	memcpy(mk, frontier_prefix, plen);
	memcpy(mk + plen, key, klen);
	r = mts_store_get(ss->db, MTS_CF_META, mk, plen + klen, &v, &vlen, err,
	    sizeof(err));
	free(mk);
	if (r < 0)
		return 0;
	r = mts_frontier_decode(v, vlen, f) == 0;
	free(v);
	return r;
}

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

/* Checks a record received from a peer: 0 or -MTS_ERR_INVAL with why. */
static int
record_from_pb(const Mts__Record *pb, struct mts_record *r, const char **why)
{
	if (pb == NULL) {
		*why = "missing record";
		return -MTS_ERR_INVAL;
	}
	if (pb->origin.len != MTS_NODE_ID_LEN) {
		*why = "origin is not 16 bytes";
		return -MTS_ERR_INVAL;
	}
	if (pb->tombstone && pb->value.len != 0) {
		*why = "tombstone with a value";
		return -MTS_ERR_INVAL;
	}
	if (pb->value.len > MTS_RECORD_MAX_VALUE) {
		*why = "value over 1 MiB";
		return -MTS_ERR_INVAL;
	}
	if (pb->hlc == 0) {
		*why = "hlc is zero";
		return -MTS_ERR_INVAL;
	}
	r->hlc = pb->hlc;
	memcpy(r->origin, pb->origin.data, MTS_NODE_ID_LEN);
	r->tombstone = pb->tombstone;
	r->value = pb->value.data;
	r->vlen = pb->value.len;
	return 0;
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

/* Shared by put and delete: a local write of rec (value or tombstone). */
static void
local_write(struct statestore *ss, struct mts_ipc_call *call, uint32_t kind,
    const ProtobufCBinaryData *key, const struct mts_record *tmpl,
    int has_expected, uint64_t exp_hlc, const ProtobufCBinaryData *exp_origin)
{
	struct mts_record cur, rec = *tmpl;
	uint8_t *buf;
	int r;

	if ((r = mts_state_check_key(key->data, key->len)) < 0) {
		mts_ipc_reply_error(call, r, "key must be 1 to %d bytes",
		    MTS_KEY_MAX);
		return;
	}
	if (rec.vlen > MTS_RECORD_MAX_VALUE) {
		mts_ipc_reply_error(call, MTS_ERR_TOOBIG,
		    "value of %zu bytes is over the %u-byte limit", rec.vlen,
		    MTS_RECORD_MAX_VALUE);
		return;
	}
	if (mts_state_owner_check(ss->node_hex, key->data, key->len) < 0) {
		mts_ipc_reply_error(call, MTS_ERR_DENIED,
		    "key %.*s belongs to another node (this node is %s)",
		    (int)key->len, key->data, ss->node_hex);
		return;
	}
	r = current(ss, key->data, key->len, &cur, &buf);
	if (r < 0) {
		mts_ipc_reply_error(call, MTS_ERR_IO, "cannot read current record");
		return;
	}
	if (has_expected && !mts_state_cas_ok(r ? &cur : NULL, exp_hlc,
				exp_origin->data, exp_origin->len)) {
		free(buf);
		mts_ipc_reply_error(call, MTS_ERR_CONFLICT,
		    "compare-and-set failed: the record changed");
		return;
	}
	if (rec.tombstone && (r == 0 || cur.tombstone)) {
		free(buf);
		mts_ipc_reply_error(call, MTS_ERR_NOTFOUND, "no such key");
		return;
	}
	rec.hlc = mts_hlc_now(&ss->hlc, mts_wall_ms());
	memcpy(rec.origin, ss->node, MTS_NODE_ID_LEN);
	round_add(ss->open, call, kind, key->data, key->len, &rec,
	    r == 1 && !cur.tombstone, true);
	free(buf);
}

static void
h_put(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__PutReq *put =
	    ((const Mts__Statestore__Request *)m)->put;
	struct mts_record rec = {0};

	rec.value = put->value.data;
	rec.vlen = put->value.len;
	local_write(ctx, call, MTS__STATESTORE__REQUEST__BODY_PUT, &put->key,
	    &rec, put->has_expected, put->expected_hlc, &put->expected_origin);
}

static void
h_delete(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__DeleteReq *del =
	    ((const Mts__Statestore__Request *)m)->delete_;
	struct mts_record rec = {0};

	rec.tombstone = true;
	local_write(ctx, call, MTS__STATESTORE__REQUEST__BODY_DELETE,
	    &del->key, &rec, del->has_expected, del->expected_hlc,
	    &del->expected_origin);
}

static void
h_merge(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__MergeReq *mr =
	    ((const Mts__Statestore__Request *)m)->merge;
	struct statestore *ss = ctx;
	struct mts_record in, cur;
	struct mts_frontier pf;
	size_t first = SIZE_MAX; /* index of this request's first write */
	uint32_t applied = 0, ignored = 0;
	const char *why;
	uint8_t *buf;
	size_t i;
	int r;

	/* Validate everything first: a bad record refuses the whole request. */
	for (i = 0; i < mr->n_records; i++) {
		const Mts__KeyRecord *kr = mr->records[i];

		if (mts_state_check_key(kr->key.data, kr->key.len) < 0) {
			mts_ipc_reply_error(call, MTS_ERR_INVAL,
			    "record %zu: key must be 1 to %d bytes", i,
			    MTS_KEY_MAX);
			return;
		}
		if (record_from_pb(kr->record, &in, &why) < 0) {
			mts_ipc_reply_error(call, MTS_ERR_INVAL,
			    "record %zu (%.*s): %s", i, (int)kr->key.len,
			    kr->key.data, why);
			return;
		}
	}
	for (i = 0; i < mr->n_records; i++) {
		const Mts__KeyRecord *kr = mr->records[i];
		int has_pf;

		record_from_pb(kr->record, &in, &why);
		mts_hlc_observe(&ss->hlc, in.hlc);
		r = current(ss, kr->key.data, kr->key.len, &cur, &buf);
		if (r < 0) {
			mts_ipc_reply_error(call, MTS_ERR_IO,
			    "cannot read current record");
			/* earlier records of this request stay in the round
			 * without a reply owner: merges are idempotent */
			return;
		}
		has_pf = r == 0 && frontier(ss, kr->key.data, kr->key.len, &pf);
		if (mts_state_merge_wins(r ? &cur : NULL, has_pf ? &pf : NULL,
			&in)) {
			size_t idx = ss->open->n;

			round_add(ss->open, NULL,
			    MTS__STATESTORE__REQUEST__BODY_MERGE, kr->key.data,
			    kr->key.len, &in, r == 1 && !cur.tombstone, false);
			if (first == SIZE_MAX)
				first = idx;
			applied++;
		} else {
			ignored++;
		}
		free(buf);
	}
	if (first == SIZE_MAX) { /* nothing to commit: answer now */
		Mts__Statestore__MergeRep mrep = MTS__STATESTORE__MERGE_REP__INIT;
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

static void
h_scan(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__ScanReq *sr =
	    ((const Mts__Statestore__Request *)m)->scan;
	struct statestore *ss = ctx;
	Mts__Statestore__ScanRep scan = MTS__STATESTORE__SCAN_REP__INIT;
	struct mts_store_iter *it;
	Mts__KeyRecord *items, **ptrs;
	Mts__Record *recs;
	struct mts_record rec;
	size_t limit = sr->limit ? sr->limit : SCAN_DEFAULT, n = 0, bytes = 0;
	const ProtobufCBinaryData *start;
	SS_REPLY(rep);

	if (limit > SCAN_MAX)
		limit = SCAN_MAX;
	items = xcalloc(limit, sizeof(*items));
	recs = xcalloc(limit, sizeof(*recs));
	ptrs = xcalloc(limit, sizeof(*ptrs));
	start = sr->start_after.len > sr->prefix.len ? &sr->start_after
						     : &sr->prefix;
	it = mts_store_iter_new(ss->db, MTS_CF_RECORDS, start->data,
	    start->len);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen, vlen;
		const uint8_t *k = mts_store_iter_key(it, &klen);
		const uint8_t *v = mts_store_iter_val(it, &vlen);

		if (!has_prefix(k, klen, &sr->prefix))
			break;
		if (sr->start_after.len && klen == sr->start_after.len &&
		    memcmp(k, sr->start_after.data, klen) == 0)
			continue;
		if (mts_record_decode(v, vlen, &rec) < 0) {
			log_warnx("scan: stored record of %.*s is corrupt",
			    (int)klen, k);
			continue;
		}
		if (rec.tombstone && !sr->include_tombstones)
			continue;
		if (n == limit || bytes > REPLY_BYTES_MAX) {
			scan.more = 1;
			break;
		}
		/* The iterator's memory is only valid until it moves. */
		mts__key_record__init(&items[n]);
		items[n].key.data = xmemdup(k, klen);
		items[n].key.len = klen;
		record_to_pb(&rec, &recs[n]);
		recs[n].value.data = xmemdup(rec.value, rec.vlen);
		recs[n].origin.data = xmemdup(rec.origin, MTS_NODE_ID_LEN);
		items[n].record = &recs[n];
		ptrs[n] = &items[n];
		bytes += klen + vlen;
		n++;
	}
	mts_store_iter_free(it);
	scan.n_items = n;
	scan.items = ptrs;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_SCAN;
	rep.scan = &scan;
	mts_ipc_reply(call, &rep.base);
	while (n--) {
		free(items[n].key.data);
		free(recs[n].value.data);
		free(recs[n].origin.data);
	}
	free(items);
	free(recs);
	free(ptrs);
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
	char err[256];
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
	for (i = 0; i < rr->n_keys; i++) {
		const ProtobufCBinaryData *k = &rr->keys[i];

		if (k->len == 0 || k->len > MTS_KEY_MAX ||
		    mts_store_get(ss->db, MTS_CF_RECORDS, k->data, k->len,
			&bufs[n], &vlen, err, sizeof(err)) < 0)
			continue;
		if (mts_record_decode(bufs[n], vlen, &rec[n]) < 0) {
			free(bufs[n]);
			continue;
		}
		mts__key_record__init(&items[n]);
		items[n].key = *k;
		record_to_pb(&rec[n], &pbs[n]);
		items[n].record = &pbs[n];
		ptrs[n] = &items[n];
		bytes += vlen;
		n++;
		if (bytes > 2 * REPLY_BYTES_MAX)
			break;
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

#define ACL_READ (1u << 0)
#define ACL_WRITE (1u << 1)
#define ACL_MERGE (1u << 2)

static const struct mts_ipc_route routes[] = {
	{MTS__STATESTORE__REQUEST__BODY_GET, "get", ACL_READ, h_get},
	{MTS__STATESTORE__REQUEST__BODY_PUT, "put", ACL_WRITE, h_put},
	{MTS__STATESTORE__REQUEST__BODY_DELETE, "delete", ACL_WRITE, h_delete},
	{MTS__STATESTORE__REQUEST__BODY_SCAN, "scan", ACL_READ, h_scan},
	{MTS__STATESTORE__REQUEST__BODY_MERGE, "merge", ACL_MERGE, h_merge},
	{MTS__STATESTORE__REQUEST__BODY_ROOT, "root", ACL_READ, h_root},
	{MTS__STATESTORE__REQUEST__BODY_PAGE, "page", ACL_READ, h_page},
	{MTS__STATESTORE__REQUEST__BODY_RECORDS, "records", ACL_READ,
	    h_records},
};

static uint32_t
classify(void *ctx, uid_t uid, gid_t gid)
{
	struct statestore *ss = ctx;
	uint32_t classes = 0;
	size_t c;

	for (c = 0; c < ACL_CLASSES; c++)
		if (mts_acl_has(&ss->acl[c], uid))
			classes |= 1u << c;
	return classes;
}

static const struct mts_ipc_service service = {
	.name = "statestore",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.classify = classify,
};

/* --- commit ---------------------------------------------------------------- */

static void
publish(struct statestore *ss, const struct pending *p)
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

static void
reply_write(const struct pending *p)
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

/* Hands the open round to the commit thread (if it is idle), so that the
 * loop keeps accepting requests while the disk syncs: everything that
 * arrives meanwhile forms the next round, one fsync for all of it. */
static void
round_submit(struct statestore *ss)
{
	struct round *t;
	uint8_t hlcbuf[8];

	if (ss->open->n == 0 || committer_busy(ss->committer))
		return;
	mts_put_u64be(hlcbuf, ss->hlc.last);
	mts_store_batch_put(ss->open->batch, MTS_CF_META, meta_hlc,
	    sizeof(meta_hlc) - 1, hlcbuf, sizeof(hlcbuf));
	t = ss->syncing;
	ss->syncing = ss->open;
	ss->open = t;
	committer_submit(ss->committer, ss->syncing->batch);
}

static void
fail_round(struct round *r, const char *err)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->pend[i].call != NULL)
			mts_ipc_reply_error(r->pend[i].call, MTS_ERR_IO,
			    "write failed: %s", err);
	round_reset(r);
}

/* Called when the commit thread is done. The next round goes to the disk
 * first (with whatever arrived meanwhile), so the disk never waits for the
 * bookkeeping below; then the synced round is applied to the MST,
 * published and only then answered, so no one hears of a write that a
 * crash could still lose. Reads stay right: the committed round is in the
 * database now, the newly submitted one is ss->syncing. */
static void
round_finish(struct statestore *ss)
{
	struct round *r = ss->syncing;
	char err[256];
	size_t i;
	int rc;

	if (!committer_done(ss->committer, &rc, err, sizeof(err)))
		return;
	if (rc < 0) {
		log_warnx("commit of %zu writes failed: %s", r->n, err);
		fail_round(r, err);
		/* the open round was decided on top of the failed one */
		fail_round(ss->open, err);
		return;
	}
	ss->syncing = ss->spare;
	if (!ss->stop)
		mts_ipc_server_drain(ss->srv, ROUND_MAX);
	round_submit(ss);
	for (i = 0; i < r->n; i++) {
		struct pending *p = &r->pend[i];

		mts_mst_put(ss->mst, p->key, p->klen, p->rh);
		/* The key's newest write of the round decides its liveness. */
		if (round_is_newest(r, p))
			ss->live += !p->tombstone - p->was_live;
		publish(ss, p);
	}
	for (i = 0; i < r->n; i++)
		if (r->pend[i].call != NULL)
			reply_write(&r->pend[i]);
	ss->commits++;
	ss->writes += r->n;
	round_reset(r);
	ss->spare = r;
}

/* --- tombstone pruning ------------------------------------------------------ */

/* Removes tombstones older than the retention period, leaving a prune
 * frontier in their place, and forgets frontiers that are themselves older
 * than the retention period. One synced batch. */
static void
prune(struct statestore *ss)
{
	struct mts_store_batch *b = mts_store_batch_new(ss->db);
	struct mts_store_iter *it;
	uint64_t now = mts_wall_ms(), pruned = 0, forgot = 0;
	size_t plen = sizeof(frontier_prefix) - 1;
	uint8_t **dead = NULL, fb[MTS_FRONTIER_LEN];
	size_t *deadlen = NULL, ndead = 0, i;
	struct mts_record rec;
	struct mts_frontier f;
	char err[256];

	it = mts_store_iter_new(ss->db, MTS_CF_RECORDS, NULL, 0);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen, vlen;
		const uint8_t *k = mts_store_iter_key(it, &klen);
		const uint8_t *v = mts_store_iter_val(it, &vlen);
		uint8_t *fk;

		if (mts_record_decode(v, vlen, &rec) < 0 ||
		    !mts_state_tombstone_expired(&rec, now, ss->retention_ms))
			continue;
		f.hlc = rec.hlc;
		memcpy(f.origin, rec.origin, MTS_NODE_ID_LEN);
		f.pruned_ms = now;
		mts_frontier_encode(&f, fb);
		fk = xmalloc(plen + klen);
		memcpy(fk, frontier_prefix, plen);
		memcpy(fk + plen, k, klen);
		mts_store_batch_put(b, MTS_CF_META, fk, plen + klen, fb,
		    sizeof(fb));
		free(fk);
		mts_store_batch_del(b, MTS_CF_RECORDS, k, klen);
		dead = xreallocarray(dead, ndead + 1, sizeof(*dead));
		deadlen = xreallocarray(deadlen, ndead + 1, sizeof(*deadlen));
		dead[ndead] = xmemdup(k, klen);
		deadlen[ndead++] = klen;
	}
	mts_store_iter_free(it);
	it = mts_store_iter_new(ss->db, MTS_CF_META, frontier_prefix, plen);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen, vlen;
		const uint8_t *k = mts_store_iter_key(it, &klen);
		const uint8_t *v = mts_store_iter_val(it, &vlen);

		if (klen < plen || memcmp(k, frontier_prefix, plen) != 0)
			break;
		if (mts_frontier_decode(v, vlen, &f) == 0 &&
		    mts_state_frontier_expired(&f, now, ss->retention_ms)) {
			mts_store_batch_del(b, MTS_CF_META, k, klen);
			forgot++;
		}
	}
	mts_store_iter_free(it);
	if (mts_store_batch_count(b) > 0) {
		if (mts_store_commit(ss->db, b, err, sizeof(err)) < 0) {
			log_warnx("prune: %s", err);
		} else {
			for (i = 0; i < ndead; i++)
				mts_mst_del(ss->mst, dead[i], deadlen[i]);
			pruned = ndead;
			ss->nfrontiers += pruned;
			ss->nfrontiers -= forgot;
			log_info("pruned %llu tombstones, forgot %llu frontiers",
			    (unsigned long long)pruned,
			    (unsigned long long)forgot);
		}
	}
	for (i = 0; i < ndead; i++)
		free(dead[i]);
	free(dead);
	free(deadlen);
	mts_store_batch_free(b);
}

/* --- start-up ---------------------------------------------------------------- */

/* The node id: MTS_NODE_ID (32 hex digits, bound to the node's static key;
 * see docs/agents.md), else the one stored, else a random one (a
 * standalone statestore). */
static void
load_identity(struct statestore *ss)
{
	const char *env = getenv("MTS_NODE_ID");
	struct mts_store_batch *b;
	uint8_t *v = NULL;
	size_t vlen;
	char err[256];
	int stored;

	stored = mts_store_get(ss->db, MTS_CF_META, meta_node_id,
		     sizeof(meta_node_id) - 1, &v, &vlen, err, sizeof(err)) == 0 &&
	    vlen == MTS_NODE_ID_LEN;
	if (env != NULL && *env != '\0') {
		if (mts_unhex(ss->node, MTS_NODE_ID_LEN, env, strlen(env)) < 0)
			fatalx("MTS_NODE_ID must be %d hex digits, got '%s'",
			    MTS_NODE_HEX_LEN, env);
	} else if (stored) {
		memcpy(ss->node, v, MTS_NODE_ID_LEN);
	} else {
		randombytes_buf(ss->node, MTS_NODE_ID_LEN);
	}
	if (!stored || memcmp(v, ss->node, MTS_NODE_ID_LEN) != 0) {
		b = mts_store_batch_new(ss->db);
		mts_store_batch_put(b, MTS_CF_META, meta_node_id,
		    sizeof(meta_node_id) - 1, ss->node, MTS_NODE_ID_LEN);
		if (mts_store_commit(ss->db, b, err, sizeof(err)) < 0)
			fatalx("store node id: %s", err);
		mts_store_batch_free(b);
	}
	free(v);
	mts_hex(ss->node_hex, ss->node, MTS_NODE_ID_LEN);
	v = NULL;
	if (mts_store_get(ss->db, MTS_CF_META, meta_hlc, sizeof(meta_hlc) - 1,
		&v, &vlen, err, sizeof(err)) == 0 &&
	    vlen == 8)
		mts_hlc_observe(&ss->hlc, mts_get_u64be(v));
	free(v);
}

/* Rebuilds the in-memory MST from the records column family. */
static void
rebuild(struct statestore *ss)
{
	struct mts_store_iter *it;
	struct mts_record rec;
	uint8_t rh[MTS_HASH_LEN];
	size_t plen = sizeof(frontier_prefix) - 1, bad = 0;
	int64_t t0 = mts_now_us();

	it = mts_store_iter_new(ss->db, MTS_CF_RECORDS, NULL, 0);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen, vlen;
		const uint8_t *k = mts_store_iter_key(it, &klen);
		const uint8_t *v = mts_store_iter_val(it, &vlen);

		if (mts_record_decode(v, vlen, &rec) < 0) {
			bad++;
			continue;
		}
		mts_blake2b256(rh, v, vlen);
		mts_mst_put(ss->mst, k, klen, rh);
		mts_hlc_observe(&ss->hlc, rec.hlc);
		if (!rec.tombstone)
			ss->live++;
	}
	mts_store_iter_free(it);
	it = mts_store_iter_new(ss->db, MTS_CF_META, frontier_prefix, plen);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen;
		const uint8_t *k = mts_store_iter_key(it, &klen);

		if (klen < plen || memcmp(k, frontier_prefix, plen) != 0)
			break;
		ss->nfrontiers++;
	}
	mts_store_iter_free(it);
	mts_mst_root(ss->mst, rh);
	if (bad)
		log_warnx("%zu stored records are corrupt and were skipped",
		    bad);
	log_info("loaded %zu records (%llu live) in %lld ms",
	    mts_mst_count(ss->mst), (unsigned long long)ss->live,
	    (long long)(mts_now_us() - t0) / 1000);
}

/* Resolves the three ACL lists; an unknown user stops the agent (a typo must
 * not silently lock an agent out). */
static void
load_acls(struct statestore *ss)
{
	static const char *const keys[ACL_CLASSES] = {"acl_read", "acl_write",
	    "acl_merge"};
	char err[512];
	int c;

	for (c = 0; c < ACL_CLASSES; c++) {
		if (mts_acl_load(&ss->acl[c], ss->cfg, "statestore", keys[c],
			err, sizeof(err)) < 0) {
			log_warnx("%s", err);
			exit(MTS_EXIT_USAGE);
		}
	}
}

/* Opens the database and rebuilds the MST: everything that needs the file
 * system beyond the sockets, done before the seccomp filter goes on. */
static void
open_store(struct statestore *ss, const char *statedir)
{
	struct mts_store_opts o = {
		.sync = mts_cfg_bool(ss->cfg, "statestore", "sync"),
		.cache_bytes = 8u << 20,
		.write_buffer = 8u << 20,
	};
	char path[PATH_MAX], err[512];

	if (mts_mkdir_p(statedir, 0750, 0750) < 0)
		fatal("%s", statedir);
	if (mts_path_join(path, sizeof(path), statedir, "statestore") < 0)
		fatalx("state directory path too long");
	if ((ss->db = mts_store_open(path, &o, err, sizeof(err))) == NULL)
		fatalx("open %s: %s", path, err);
	round_init(ss->open, ss->db);
	round_init(ss->syncing, ss->db);
	round_init(ss->spare, ss->db);
	ss->committer = committer_start(ss->db);
	load_identity(ss);
	rebuild(ss);
}

static void
open_sockets(struct statestore *ss, const char *rundir)
{
	char path[PATH_MAX], err[512];

	if (mts_mkdir_p(rundir, 0750, 0750) < 0)
		fatal("%s", rundir);
	if (mts_path_join(path, sizeof(path), rundir, "statestore.sock") < 0)
		fatalx("run directory path too long");
	if ((ss->srv = mts_ipc_server_open(path, &service, ss, err,
		 sizeof(err))) == NULL)
		fatalx("%s", err);
	if (mts_path_join(path, sizeof(path), rundir, "statestore.pub") < 0)
		fatalx("run directory path too long");
	if ((ss->pub = mts_pub_open(path, err, sizeof(err))) == NULL)
		fatalx("%s", err);
}

/* -r and -s override the directories init (or the config) gives. */
struct dirs {
	const char *rundir, *statedir;
};

static int
dir_opt(void *arg, int opt, const char *val)
{
	struct dirs *d = arg;

	if (opt == 'r')
		d->rundir = val;
	else if (opt == 's')
		d->statedir = val;
	else
		return -1;
	return 0;
}

/* SIGTERM/SIGINT: stop taking requests; the loop ends once the rounds
 * already accepted are durable and answered (after_turn). */
static void
on_stop_signal(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	struct statestore *ss = arg;

	log_info("signal %u: shutting down", si->ssi_signo);
	ss->stop = 1;
	mts_loop_remove_server(ss->loop, ss->srv);
}

/* The commit thread is done with the syncing round. */
static void
on_commit(void *arg, int fd, uint32_t events, mts_time_t now)
{
	round_finish(arg);
}

static void
on_prune(void *arg, mts_time_t now)
{
	struct statestore *ss = arg;

	ss->prune_due = 1;
}

/* After every turn: the open round goes to the disk if the commit thread
 * is idle; a due prune runs only when no write is pending (it reads and
 * deletes outside the rounds, so it cannot undo one); a stop ends the
 * loop once nothing is pending. */
static void
after_turn(void *arg, mts_time_t now)
{
	struct statestore *ss = arg;
	int idle;

	round_submit(ss);
	idle = ss->open->n == 0 && !committer_busy(ss->committer);
	if (!idle)
		return;
	if (ss->stop) {
		mts_loop_stop(ss->loop);
		return;
	}
	if (ss->prune_due) {
		ss->prune_due = 0;
		prune(ss);
		mts_timer_arm(ss->loop, &ss->prune_timer,
		    now + ss->prune_interval_ms);
	}
}

/* The loop and its signals, set up before the sandbox goes on. */
static void
setup_loop(struct statestore *ss)
{
	if ((ss->loop = mts_loop_new()) == NULL)
		fatalx("cannot create the event loop");
	/* the usual set (SIGHUP ignored), then a graceful stop instead of
	 * an immediate one */
	if (mts_loop_stop_on_signals(ss->loop) < 0 ||
	    mts_loop_signal(ss->loop, SIGTERM, on_stop_signal, ss) < 0 ||
	    mts_loop_signal(ss->loop, SIGINT, on_stop_signal, ss) < 0)
		fatalx("cannot take signals through the loop");
	if (mts_loop_on_turn(ss->loop, after_turn, ss) < 0)
		fatalx("cannot hook the event loop");
	mts_timer_init(&ss->prune_timer, "prune", on_prune, ss);
}

/* Serves the sockets and the commit thread on the loop, then runs it. */
static void
run(struct statestore *ss)
{
	if (mts_loop_watch(ss->loop, committer_fd(ss->committer), MTS_LOOP_IN,
		"commit", on_commit, ss) == NULL ||
	    mts_loop_add_server(ss->loop, ss->srv) < 0 ||
	    mts_loop_add_pub(ss->loop, ss->pub) < 0)
		fatalx("cannot serve on the event loop");
	mts_timer_arm(ss->loop, &ss->prune_timer,
	    mts_now() + ss->prune_interval_ms);
	if (mts_loop_run(ss->loop) < 0)
		fatalx("event loop failed");
	mts_loop_remove_server(ss->loop, ss->srv);
	mts_loop_remove_pub(ss->loop, ss->pub);
}

int
main(int argc, char **argv)
{
	struct statestore ss;
	struct round rounds[3];
	struct mts_agent agent;
	struct dirs dirs = {NULL, NULL};
	int c;

	memset(&ss, 0, sizeof(ss));
	memset(rounds, 0, sizeof(rounds));
	ss.open = &rounds[0];
	ss.syncing = &rounds[1];
	ss.spare = &rounds[2];
	mts_agent_init(&agent, "statestore", argc, argv, "r:s:", dir_opt,
	    &dirs);
	if (agent.argc != 0) {
		log_warnx("unexpected argument '%s'", agent.argv[0]);
		return MTS_EXIT_USAGE;
	}
	ss.cfg = agent.cfg;
	if (mts_crypto_init() < 0)
		fatalx("libsodium failed to initialize");
	load_acls(&ss);
	ss.retention_ms = mts_cfg_int(ss.cfg, "statestore",
	    "tombstone_retention");
	ss.prune_interval_ms = mts_cfg_int(ss.cfg, "statestore",
	    "prune_interval");
	ss.mst = mts_mst_new();
	setup_loop(&ss);
	open_store(&ss, dirs.statedir ? dirs.statedir : agent.statedir);
	/* The filter covers RocksDB's threads (TSYNC) and every nng thread
	 * started after it. */
	if (mts_agent_sandbox(&agent) < 0)
		return MTS_EXIT_FAILURE;
	open_sockets(&ss, dirs.rundir ? dirs.rundir : agent.rundir);
	log_info("node %s serving", ss.node_hex);
	mts_agent_ready(&agent);
	run(&ss);
	log_info("stopped: %llu writes in %llu synced rounds",
	    (unsigned long long)ss.writes, (unsigned long long)ss.commits);
	mts_ipc_server_close(ss.srv);
	mts_pub_close(ss.pub);
	committer_stop(ss.committer);
	mts_loop_free(ss.loop);
	round_free(&rounds[0]);
	round_free(&rounds[1]);
	round_free(&rounds[2]);
	mts_store_close(ss.db);
	mts_mst_free(ss.mst);
	for (c = 0; c < ACL_CLASSES; c++)
		mts_acl_free(&ss.acl[c]);
	mts_agent_free(&agent);
	return MTS_EXIT_OK;
}
