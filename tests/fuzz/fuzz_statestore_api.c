/* fuzz_statestore_api.c: libFuzzer target that drives the real mts-statestore — its dispatch table, handlers, group commit and pruning on its own loop thread, over its socket, on a temporary RocksDB — with well-formed requests built from the input, and checks each reply. */
#define main statestore_main
#include "fuzz_input.h"
#include "fuzz_harness.h"
#include "agents/statestore/statestore.c"
#undef main

#include <pthread.h>
#include <stdarg.h>

#include "mtserr.h"
#include "statestore.pb-c.h"

/* The scan limits proto/statestore.proto states. */
#define SCAN_DEFAULT 1000
#define SCAN_MAX 10000

/*
 * The statestore runs as it does in production, minus init and the
 * sandbox: main's set-up in start(), then its run() (the loop, the commit
 * thread, pruning) on a thread of its own. Each input is a
 * program of requests (get, put, delete, scan, merge, root, page,
 * records) with keys from a small alphabet so that they collide, values
 * of odd sizes (empty, one byte, binary, up to the 1 MiB limit), merges
 * with odd clocks and origins, compare-and-set with right and wrong
 * expectations. Only valid requests are sent, so a reply error other than
 * the ones valid requests can earn (a failed compare-and-set, deleting
 * what is not there, another node's key, records too large for one reply)
 * is a finding, as is a reply that
 * contradicts the request (a put not read back, a scan out of order).
 */

static const char *tdir;
static struct statestore fz;
static struct round fz_rounds[3];
static struct mts_ipc_client *cli;

static void *
loop_thread(void *arg)
{
	run(arg);
	return NULL;
}

/* main() of statestore.c without mts_agent_init, the sandbox and init. */
static void
start(void)
{
	char conf[128], rundir[96], statedir[96], sock[160], err[512];
	pthread_t t;
	FILE *f;

	tdir = fz_scratch("ss");
	snprintf(conf, sizeof(conf), "%s/mts.conf", tdir);
	snprintf(rundir, sizeof(rundir), "%s/run", tdir);
	snprintf(statedir, sizeof(statedir), "%s/state", tdir);
	if ((f = fopen(conf, "w")) == NULL)
		abort();
	/* no fsync (speed); pruning often, with a short retention, so that
	 * it runs between the requests and merges meet its frontiers */
	fprintf(f,
	    "[node]\nrundir = %s\nstatedir = %s\n[statestore]\n"
	    "sync = no\ntombstone_retention = 1s\nprune_interval = 1s\n"
	    "acl_read = %u\nacl_write = %u\nacl_merge = %u\n",
	    rundir, statedir, (unsigned)getuid(), (unsigned)getuid(),
	    (unsigned)getuid());
	fclose(f);
	log_init("statestore", MTS_LOG_WARN);
	if (mts_cfg_load_agent(conf, mts_conf_schema(), "statestore", &fz.cfg,
	        err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	fz.open = &fz_rounds[0];
	fz.syncing = &fz_rounds[1];
	fz.spare = &fz_rounds[2];
	if (mts_crypto_init() < 0)
		abort();
	load_acls(&fz);
	fz.retention_ms =
	    mts_cfg_int(fz.cfg, "statestore", "tombstone_retention");
	fz.prune_interval_ms =
	    mts_cfg_int(fz.cfg, "statestore", "prune_interval");
	fz.mst = mts_mst_new();
	setup_loop(&fz);
	open_store(&fz, statedir);
	open_sockets(&fz, rundir);
	if (pthread_create(&t, NULL, loop_thread, &fz) != 0)
		abort();
	if (mts_ipc_sock_path(sock, sizeof(sock), rundir, "statestore", NULL) <
	        0 ||
	    (cli = mts_ipc_client_open(sock, 10000, err, sizeof(err))) == NULL)
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	start();
	return 0;
}

/* --- reading the program ----------------------------------------------- */

static uint64_t
take64(struct in *in)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | take(in, 0);
	return v;
}

#define KEY_BUF (MTS_KEY_MAX + 1)
#define VAL_MAX MTS_RECORD_MAX_VALUE

static uint8_t valbuf[VAL_MAX];

/* A key: a prefix (some of them node-owned), then a few bytes from a
 * small alphabet, sometimes binary, sometimes the longest allowed. */
static size_t
make_key(struct in *in, uint8_t *k)
{
	static const char *const pre[] = { "a/", "b/", "", "n/", "t/", "d/",
		"c/", "m/" };
	const char *p = pre[take(in, 8)];
	size_t n = strlen(p), len, i;
	unsigned shape = take(in, 16);

	memcpy(k, p, n);
	if (shape == 0) { /* the longest key */
		memset(k + n, 'z', MTS_KEY_MAX - n);
		return MTS_KEY_MAX;
	}
	if (shape == 1 && (p[0] == 'n' || p[0] == 't' || p[0] == 'd')) {
		/* this node's own key */
		memcpy(k + n, fz.node_hex, MTS_NODE_HEX_LEN);
		n += MTS_NODE_HEX_LEN;
		k[n++] = '/';
	}
	/* few enough that keys collide and the database stays small */
	len = 1 + take(in, 3);
	for (i = 0; i < len; i++)
		k[n++] = shape == 2 ? (uint8_t)(take(in, 0) & 0x81)
		                    : (uint8_t)("xyz\xff"[take(in, 4)]);
	return n;
}

/* A value of an odd size: empty, one byte, a few binary bytes, or large
 * (up to the limit), within budget bytes. */
static size_t
make_val(struct in *in, size_t budget)
{
	size_t len;
	unsigned shape = take(in, 8), i;

	switch (shape) {
	case 0:
		len = 0;
		break;
	case 1:
		len = 1;
		break;
	case 2:
		len = (size_t)take(in, 0) << 4 | take(in, 16);
		break;
	case 3: /* large ones now and then: they make a run slow */
		len = take(in, 16) == 0 ? VAL_MAX : take(in, 0) << 8;
		break;
	default:
		len = take(in, 32);
	}
	if (len > budget)
		len = budget;
	for (i = 0; i < len && i < 64; i++)
		valbuf[i] = (uint8_t)take(in, 0);
	for (; i < len; i++)
		valbuf[i] = (uint8_t)(i * 7);
	return len;
}

/* --- checking the replies ------------------------------------------------- */

static void __attribute__((noreturn, format(printf, 1, 2)))
finding(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* Sends req; returns the reply (caller frees) or NULL with *code set to an
 * error that a valid request may get (any other aborts). */
static Mts__Statestore__Reply *
call(Mts__Statestore__Request *req, int *code, uint32_t may_fail)
{
	ProtobufCMessage *rep = NULL;
	char err[512];
	int r;

	r = mts_ipc_client_call(cli, &req->base,
	    &mts__statestore__reply__descriptor, &rep, err, sizeof(err));
	*code = -r;
	if (r == 0) {
		if (mts_pb_oneof_case(rep) != req->body_case)
			finding("request %u got a reply of type %u",
			    req->body_case, mts_pb_oneof_case(rep));
		return (Mts__Statestore__Reply *)rep;
	}
	if (-r > 0 && -r < 32 && (may_fail & (1u << -r)))
		return NULL;
	finding("request %u failed: %s (%s)", req->body_case, err,
	    mts_strerror(r));
}

#define MAY(e) (1u << (e))

static Mts__Record *
get_back(const uint8_t *k, size_t klen, Mts__Statestore__Reply **out)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;
	int code;

	g.key.data = (uint8_t *)k;
	g.key.len = klen;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &g;
	*out = call(&req, &code, 0);
	if (!(*out)->get->found || (*out)->get->record == NULL)
		return NULL;
	return (*out)->get->record;
}

/* The last record seen, for compare-and-set that may succeed. */
static uint64_t last_hlc;
static uint8_t last_origin[MTS_NODE_ID_LEN];

static void
op_write(struct in *in, int del)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Statestore__DeleteReq dr = MTS__STATESTORE__DELETE_REQ__INIT;
	Mts__Statestore__Reply *rep, *back;
	const Mts__Record *got, *r;
	uint8_t k[KEY_BUF];
	size_t klen = make_key(in, k), vlen = 0;
	unsigned cas = take(in, 4);
	int code;

	if (del) {
		dr.key.data = k;
		dr.key.len = klen;
		dr.has_expected = cas != 0;
		dr.expected_hlc = cas == 1 ? 0
		    : cas == 2             ? last_hlc
		                           : take64(in);
		dr.expected_origin.data = last_origin;
		dr.expected_origin.len = cas == 3 ? take(in, 17) : 16;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_DELETE;
		req.delete_ = &dr;
	} else {
		vlen = make_val(in, VAL_MAX);
		put.key.data = k;
		put.key.len = klen;
		put.value.data = valbuf;
		put.value.len = vlen;
		put.has_expected = cas != 0;
		put.expected_hlc = cas == 1 ? 0
		    : cas == 2              ? last_hlc
		                            : take64(in);
		put.expected_origin.data = last_origin;
		put.expected_origin.len = cas == 3 ? take(in, 17) : 16;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
		req.put = &put;
	}
	rep = call(&req, &code,
	    MAY(MTS_ERR_CONFLICT) | MAY(MTS_ERR_DENIED) |
	        (del ? MAY(MTS_ERR_NOTFOUND) : 0));
	if (rep == NULL)
		return;
	r = del ? rep->delete_->record : rep->put->record;
	if (r == NULL || r->tombstone != del || r->value.len != vlen ||
	    (vlen && memcmp(r->value.data, valbuf, vlen) != 0) ||
	    r->origin.len != MTS_NODE_ID_LEN ||
	    memcmp(r->origin.data, fz.node, MTS_NODE_ID_LEN) != 0)
		finding("%s reply does not match the request",
		    del ? "delete" : "put");
	/* read it back: nothing else wrote in between */
	if ((got = get_back(k, klen, &back)) == NULL || got->hlc != r->hlc ||
	    got->tombstone != del || got->value.len != vlen ||
	    (vlen && memcmp(got->value.data, valbuf, vlen) != 0))
		finding("acknowledged %s of %zu-byte key not read back",
		    del ? "delete" : "put", klen);
	last_hlc = r->hlc;
	memcpy(last_origin, r->origin.data, MTS_NODE_ID_LEN);
	mts__statestore__reply__free_unpacked(back, NULL);
	mts__statestore__reply__free_unpacked(rep, NULL);
}

#define MERGE_MAX 8

static void
op_merge(struct in *in)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__MergeReq mr = MTS__STATESTORE__MERGE_REQ__INIT;
	Mts__KeyRecord kr[MERGE_MAX], *krp[MERGE_MAX];
	Mts__Record rec[MERGE_MAX];
	static uint8_t keys[MERGE_MAX][KEY_BUF], origins[MERGE_MAX][16];
	static uint8_t vals[MERGE_MAX][256];
	Mts__Statestore__Reply *rep;
	size_t n = 1 + take(in, MERGE_MAX), i;
	uint64_t now = mts_wall_ms(), ms;
	int code, far = 0, near_edge = 0;

	for (i = 0; i < n; i++) {
		unsigned h = take(in, 8), o = take(in, 4);

		mts__key_record__init(&kr[i]);
		mts__record__init(&rec[i]);
		kr[i].key.data = keys[i];
		kr[i].key.len = make_key(in, keys[i]);
		/* clocks: tiny, near now, the last one seen, huge */
		rec[i].hlc = h == 0 ? 1
		    : h == 1        ? (last_hlc + take(in, 3)) | 1
		    : h == 2        ? UINT64_MAX - take(in, 2)
		    : h == 3
		    ? (mts_wall_ms() +
		          (take(in, 4) == 0 ? MTS_HLC_MAX_AHEAD_MS + take(in, 0)
		                            : 0))
		        << 16
		    : take64(in) | 1;
		memset(origins[i], o == 0 ? 0 : o == 1 ? 0xff : 0x5a, 16);
		if (o == 3)
			memcpy(origins[i], fz.node, 16);
		rec[i].origin.data = origins[i];
		rec[i].origin.len = 16;
		rec[i].tombstone = take(in, 4) == 0;
		if (!rec[i].tombstone) {
			size_t vl = take(in, 0);

			for (size_t j = 0; j < vl; j++)
				vals[i][j] = (uint8_t)take(in, 0);
			rec[i].value.data = vals[i];
			rec[i].value.len = vl;
		}
		kr[i].record = &rec[i];
		krp[i] = &kr[i];
		/* more than MTS_HLC_MAX_AHEAD_MS ahead must be refused (a
		 * second either side of the edge may go either way) */
		ms = mts_hlc_ms(rec[i].hlc);
		far |= ms > now + MTS_HLC_MAX_AHEAD_MS + 1000;
		near_edge |= ms + 1000 >= now + MTS_HLC_MAX_AHEAD_MS;
	}
	mr.records = krp;
	mr.n_records = n;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_MERGE;
	req.merge = &mr;
	rep = call(&req, &code, near_edge ? MAY(MTS_ERR_INVAL) : 0);
	if (far && rep != NULL)
		finding("a merge with a record from the far future was taken");
	if (rep == NULL)
		return;
	if (rep->merge->applied + rep->merge->ignored != n)
		finding("merge of %zu records: %u applied + %u ignored", n,
		    rep->merge->applied, rep->merge->ignored);
	mts__statestore__reply__free_unpacked(rep, NULL);
}

static void
op_scan(struct in *in)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sr = MTS__STATESTORE__SCAN_REQ__INIT;
	Mts__Statestore__Reply *rep;
	uint8_t pre[KEY_BUF], after[KEY_BUF];
	size_t i, plen = 0;
	int code;

	if (take(in, 2))
		plen = make_key(in, pre) - take(in, 2);
	sr.prefix.data = pre;
	sr.prefix.len = plen;
	if (take(in, 2)) {
		sr.start_after.len = make_key(in, after);
		sr.start_after.data = after;
	}
	sr.limit = take(in, 16) == 0 ? 20000 : 1 + take(in, 16);
	sr.include_tombstones = take(in, 2);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
	req.scan = &sr;
	rep = call(&req, &code, 0);
	if (rep->scan->n_items >
	    (sr.limit ? (sr.limit > SCAN_MAX ? SCAN_MAX : sr.limit)
	              : SCAN_DEFAULT))
		finding("scan returned %zu items for limit %u",
		    rep->scan->n_items, sr.limit);
	for (i = 0; i < rep->scan->n_items; i++) {
		const Mts__KeyRecord *it = rep->scan->items[i];
		const ProtobufCBinaryData *k = &it->key;

		if (k->len < plen || memcmp(k->data, pre, plen) != 0)
			finding("scan item %zu outside the prefix", i);
		if (it->record == NULL ||
		    (it->record->tombstone && !sr.include_tombstones))
			finding("scan item %zu: a tombstone not asked for", i);
		if (i > 0) {
			const ProtobufCBinaryData *p =
			    &rep->scan->items[i - 1]->key;
			size_t m = p->len < k->len ? p->len : k->len;
			int c = memcmp(p->data, k->data, m);

			if (c > 0 || (c == 0 && p->len >= k->len))
				finding("scan items %zu and %zu out of order",
				    i - 1, i);
		}
	}
	mts__statestore__reply__free_unpacked(rep, NULL);
}

/* Page hashes seen in root replies and pages, to ask for. */
static uint8_t hashes[64][MTS_HASH_LEN];
static unsigned nhashes;

static void
op_root_page(struct in *in)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq rr = MTS__STATESTORE__ROOT_REQ__INIT;
	Mts__Statestore__PageReq pr = MTS__STATESTORE__PAGE_REQ__INIT;
	Mts__Statestore__Reply *rep;
	uint8_t h[MTS_HASH_LEN];
	int code;

	if (take(in, 2) == 0 || nhashes == 0) {
		req.body_case = MTS__STATESTORE__REQUEST__BODY_ROOT;
		req.root = &rr;
		rep = call(&req, &code, 0);
		if (rep->root->hash.len != MTS_HASH_LEN ||
		    rep->root->live > rep->root->records)
			finding("root: %zu-byte hash, %llu live of %llu",
			    rep->root->hash.len,
			    (unsigned long long)rep->root->live,
			    (unsigned long long)rep->root->records);
		memcpy(hashes[nhashes++ % 64], rep->root->hash.data,
		    MTS_HASH_LEN);
		mts__statestore__reply__free_unpacked(rep, NULL);
		return;
	}
	memcpy(h, hashes[take(in, 0) % (nhashes < 64 ? nhashes : 64)],
	    MTS_HASH_LEN);
	if (take(in, 4) == 0)
		h[take(in, MTS_HASH_LEN)] ^= 1; /* one that does not exist */
	pr.hash.data = h;
	pr.hash.len = MTS_HASH_LEN;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PAGE;
	req.page = &pr;
	rep = call(&req, &code, 0);
	if (rep->page->found && rep->page->page.len == 0)
		finding("page found but empty");
	mts__statestore__reply__free_unpacked(rep, NULL);
}

static void
op_records(struct in *in)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RecordsReq rr = MTS__STATESTORE__RECORDS_REQ__INIT;
	static uint8_t keys[8][KEY_BUF];
	ProtobufCBinaryData k[8];
	Mts__Statestore__Reply *rep;
	size_t n = take(in, 9), i, j;
	int code;

	for (i = 0; i < n; i++) {
		k[i].len = make_key(in, keys[i]);
		k[i].data = keys[i];
	}
	rr.keys = k;
	rr.n_keys = n;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_RECORDS;
	req.records = &rr;
	/* large values: more than a reply may carry */
	if ((rep = call(&req, &code, MAY(MTS_ERR_TOOBIG))) == NULL)
		return;
	if (rep->records->n_records > n)
		finding("records: %zu for %zu keys", rep->records->n_records,
		    n);
	for (i = 0; i < rep->records->n_records; i++) {
		const ProtobufCBinaryData *got = &rep->records->records[i]->key;

		for (j = 0; j < n; j++)
			if (got->len == k[j].len &&
			    memcmp(got->data, k[j].data, got->len) == 0)
				break;
		if (j == n)
			finding("records returned a key not asked for");
	}
	mts__statestore__reply__free_unpacked(rep, NULL);
}

static void
op_get(struct in *in)
{
	Mts__Statestore__Reply *rep;
	uint8_t k[KEY_BUF];
	size_t klen = make_key(in, k);

	(void)get_back(k, klen, &rep);
	mts__statestore__reply__free_unpacked(rep, NULL);
}

static void
op_put(struct in *in)
{
	op_write(in, 0);
}

static void
op_delete(struct in *in)
{
	op_write(in, 1);
}

static void (*const ops[])(struct in *) = { op_get, op_put, op_delete, op_scan,
	op_merge, op_root_page, op_root_page, op_records };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	int n = 0;

	while (in.n > 0 && n++ < 32)
		ops[take(&in, sizeof(ops) / sizeof(ops[0]))](&in);
	return 0;
}
