/* sstool.c: a test client of mts-statestore — single requests, a durability writer/verifier, a bad-input prober, a load generator. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "ipc.h"
#include "mst_page.h"
#include "mtserr.h"
#include "mtstime.h"
#include "statestore.pb-c.h"

static const char *sock_path;

typedef Mts__Statestore__Request Req;
typedef Mts__Statestore__Reply Rep;

/* Clients a command opened and still holds; closed when it returns. */
static struct mts_ipc_client *held[4];

static struct mts_ipc_client *
connect_or_die(int timeout_ms)
{
	char err[256];
	struct mts_ipc_client *c =
	    mts_ipc_client_open(sock_path, timeout_ms, err, sizeof(err));
	size_t i;

	if (c == NULL) {
		fprintf(stderr, "sstool: %s\n", err);
		exit(1);
	}
	for (i = 0; i < sizeof(held) / sizeof(held[0]); i++) {
		if (held[i] == NULL) {
			held[i] = c;
			break;
		}
	}
	return c;
}

/* Closes a client connect_or_die opened. */
static void
disconnect(struct mts_ipc_client *c)
{
	size_t i;

	for (i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		if (held[i] == c)
			held[i] = NULL;
	mts_ipc_client_close(c);
}

static void
disconnect_all(void)
{
	size_t i;

	for (i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		if (held[i] != NULL)
			disconnect(held[i]);
}

static int
call(struct mts_ipc_client *c, Req *req, Rep **rep, char *err, size_t errlen)
{
	return mts_ipc_client_call(c, &req->base,
	    &mts__statestore__reply__descriptor, (ProtobufCMessage **)rep, err,
	    errlen);
}

static int
do_put(struct mts_ipc_client *c, const char *k, const void *v, size_t vlen,
    char *err, size_t errlen)
{
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	Rep *rep;
	int r;

	put.key.data = (uint8_t *)k;
	put.key.len = strlen(k);
	put.value.data = (uint8_t *)v;
	put.value.len = vlen;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	r = call(c, &req, &rep, err, errlen);
	if (r == 0)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	return r;
}

/* Returns 1 found (value copied to out), 0 absent/deleted, <0 error. */
static int
do_get(struct mts_ipc_client *c, const char *k, char *out, size_t outlen)
{
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	char err[256];
	Rep *rep;
	int r;

	get.key.data = (uint8_t *)k;
	get.key.len = strlen(k);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	if ((r = call(c, &req, &rep, err, sizeof(err))) < 0) {
		fprintf(stderr, "get %s: %s\n", k, err);
		return r;
	}
	r = rep->get->found && !rep->get->record->tombstone;
	if (r)
		snprintf(out, outlen, "%.*s", (int)rep->get->record->value.len,
		    rep->get->record->value.data);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return r;
}

/* writer N LOG: puts w/<i> = v<i> for i < N, retrying through restarts;
 * appends each acknowledged key to LOG (line-buffered, flushed per line). */
static int
cmd_writer(int argc, char **argv)
{
	int n = atoi(argv[0]), i;
	FILE *log = fopen(argv[1], "a");
	struct mts_ipc_client *c = connect_or_die(1000);
	char key[64], val[64], err[256];

	if (log == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "w/%08d", i);
		snprintf(val, sizeof(val), "v%d", i);
		while (do_put(c, key, val, strlen(val), err, sizeof(err)) < 0) {
			/* not acknowledged: reconnect and retry */
			disconnect(c);
			usleep(20000);
			c = connect_or_die(1000);
		}
		fprintf(log, "%s %s\n", key, val);
		fflush(log);
	}
	fclose(log);
	disconnect(c);
	return 0;
}

static int
cmd_verify(int argc, char **argv)
{
	FILE *log = fopen(argv[0], "r");
	struct mts_ipc_client *c = connect_or_die(3000);
	char key[64], val[64], got[128];
	int n = 0, missing = 0, r;

	if (log == NULL)
		return 1;
	while (fscanf(log, "%63s %63s", key, val) == 2) {
		n++;
		r = do_get(c, key, got, sizeof(got));
		if (r != 1 || strcmp(got, val) != 0) {
			fprintf(stderr, "lost acknowledged write %s=%s\n", key,
			    val);
			missing++;
		}
	}
	fclose(log);
	printf("verified %d acknowledged writes, %d missing\n", n, missing);
	return missing ? 1 : 0;
}

static int
cmd_put(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(3000);
	char err[256];
	int r = do_put(c, argv[0], argv[1], strlen(argv[1]), err, sizeof(err));

	if (r < 0)
		fprintf(stderr, "put: %s (%s)\n", err, mts_strerror(r));
	return r < 0;
}

static int
cmd_get(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(3000);
	char got[4096];
	int r = do_get(c, argv[0], got, sizeof(got));

	if (r == 1)
		printf("%s\n", got);
	return r == 1 ? 0 : 1;
}

static int
cmd_root(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(3000);
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq root = MTS__STATESTORE__ROOT_REQ__INIT;
	char err[256], hex[65];
	Rep *rep;

	req.body_case = MTS__STATESTORE__REQUEST__BODY_ROOT;
	req.root = &root;
	if (call(c, &req, &rep, err, sizeof(err)) < 0) {
		fprintf(stderr, "root: %s\n", err);
		return 1;
	}
	mts_hex(hex, rep->root->hash.data, rep->root->hash.len);
	printf("%s %llu %llu %llu\n", hex,
	    (unsigned long long)rep->root->records,
	    (unsigned long long)rep->root->pages,
	    (unsigned long long)rep->root->live);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

/* Sends raw bytes; prints the reply's error code and message. */
static int
raw(struct mts_ipc_client *c, const void *buf, size_t len)
{
	uint8_t *out;
	size_t outlen;
	Rep *rep;
	const char *msg;
	int code, r;

	if ((r = mts_ipc_client_call_raw(c, buf, len, &out, &outlen)) < 0) {
		printf("no reply (%s)\n", mts_strerror(r));
		return r;
	}
	rep = mts__statestore__reply__unpack(NULL, outlen, out);
	free(out);
	if (rep == NULL) {
		printf("undecodable reply\n");
		return -MTS_ERR_INVAL;
	}
	code = mts_pb_reply_error(&rep->base, &msg);
	printf("error %d: %s\n", code, msg);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return code;
}

/* probe: malformed input of every kind; each must get an error reply (or,
 * for oversized, a dropped connection), and the server must keep serving. */
static int
cmd_probe(int argc, char **argv)
{
	static const uint8_t unknown[] = { 0x08, 0x01, 0x9a, 0x06, 0x00 };
	static const uint8_t garbage[] = { 0xff, 0xff, 0xff, 0xff, 0x0f };
	static const uint8_t truncated[] = { 0x08, 0x01, 0x82, 0x01, 0x05, 0x0a,
		0x09, 'a' };
	/* a merge whose record has a 3-byte origin */
	static const uint8_t badmerge[] = { 0x08, 0x01, 0xa2, 0x01, 0x0d, 0x0a,
		0x0b, 0x0a, 0x01, 'k', 0x12, 0x06, 0x12, 0x03, 'a', 'b', 'c',
		0x18, 0x00 };
	struct mts_ipc_client *c = connect_or_die(2000);
	size_t biglen = 5u << 20;
	uint8_t *big = calloc(1, biglen);
	int fails = 0;

	fails += raw(c, unknown, sizeof(unknown)) != MTS_ERR_UNIMPL;
	fails += raw(c, garbage, sizeof(garbage)) != MTS_ERR_INVAL;
	fails += raw(c, truncated, sizeof(truncated)) != MTS_ERR_INVAL;
	fails += raw(c, badmerge, sizeof(badmerge)) != MTS_ERR_INVAL;
	fails += raw(c, "", 0) != MTS_ERR_VERSION;
	disconnect(c);
	c = connect_or_die(1000);
	fails += raw(c, big, biglen) >= 0; /* must not be answered */
	printf("probe: %d unexpected\n", fails);
	fflush(stdout);
	/* nng may block closing a socket whose 5 MiB send the server refused
	 * to read; the process exit tears it down instead. */
	_exit(fails != 0);
}

struct load {
	int id;
	int64_t until_us;
	size_t vsize;
	int64_t *lat; /* microseconds */
	size_t n, cap;
};

static void *
load_thread(void *arg)
{
	struct load *l = arg;
	struct mts_ipc_client *c = connect_or_die(5000);
	char key[64], err[256], *val = malloc(l->vsize);
	int64_t t0;

	memset(val, 'x', l->vsize);
	while ((t0 = mts_now_us()) < l->until_us) {
		snprintf(key, sizeof(key), "b/%d/%zu", l->id, l->n);
		if (do_put(c, key, val, l->vsize, err, sizeof(err)) < 0) {
			fprintf(stderr, "put: %s\n", err);
			break;
		}
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 1024;
			l->lat = realloc(l->lat, l->cap * sizeof(int64_t));
		}
		l->lat[l->n++] = mts_now_us() - t0;
	}
	free(val);
	disconnect(c);
	return NULL;
}

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* load CLIENTS SECONDS VSIZE: prints "puts/s p50_us p99_us". */
static int
cmd_load(int argc, char **argv)
{
	int nc = atoi(argv[0]), i;
	double secs = atof(argv[1]);
	struct load *l = calloc(nc, sizeof(*l));
	pthread_t *t = calloc(nc, sizeof(*t));
	int64_t start = mts_now_us(), *all;
	size_t total = 0, k = 0;

	for (i = 0; i < nc; i++) {
		l[i].id = i;
		l[i].until_us = start + (int64_t)(secs * 1e6);
		l[i].vsize = argc > 2 ? (size_t)atoi(argv[2]) : 100;
		pthread_create(&t[i], NULL, load_thread, &l[i]);
	}
	for (i = 0; i < nc; i++) {
		pthread_join(t[i], NULL);
		total += l[i].n;
	}
	all = calloc(total ? total : 1, sizeof(int64_t));
	for (i = 0; i < nc; i++) {
		memcpy(all + k, l[i].lat, l[i].n * sizeof(int64_t));
		k += l[i].n;
		free(l[i].lat);
	}
	qsort(all, total, sizeof(int64_t), cmp64);
	printf("%.0f %lld %lld\n", total / ((mts_now_us() - start) / 1e6),
	    total ? (long long)all[total / 2] : 0,
	    total ? (long long)all[total * 99 / 100] : 0);
	free(all);
	free(l);
	free(t);
	return 0;
}

static void
print_record(const char *k, size_t klen, const Mts__Record *r)
{
	char origin[33] = "";

	if (r->origin.len == 16)
		mts_hex(origin, r->origin.data, 16);
	printf("%.*s hlc=%llu origin=%s%s value=%.*s\n", (int)klen, k,
	    (unsigned long long)r->hlc, origin, r->tombstone ? " deleted" : "",
	    (int)r->value.len, r->value.data);
}

/* getv KEY: the whole record, tombstones included. */
static int
cmd_getv(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(3000);
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	char err[256];
	Rep *rep;
	int r;

	get.key.data = (uint8_t *)argv[0];
	get.key.len = strlen(argv[0]);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	if (call(c, &req, &rep, err, sizeof(err)) < 0) {
		fprintf(stderr, "get: %s\n", err);
		return 1;
	}
	r = rep->get->found;
	if (r)
		print_record(argv[0], strlen(argv[0]), rep->get->record);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return !r;
}

/* putif KEY VALUE HLC ORIGIN_HEX: compare-and-set put. */
static int
cmd_putif(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(3000);
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	uint8_t origin[16];
	char err[256];
	Rep *rep;
	int r;

	put.key.data = (uint8_t *)argv[0];
	put.key.len = strlen(argv[0]);
	put.value.data = (uint8_t *)argv[1];
	put.value.len = strlen(argv[1]);
	put.has_expected = 1;
	put.expected_hlc = strtoull(argv[2], NULL, 10);
	if (mts_unhex(origin, 16, argv[3], strlen(argv[3])) == 0) {
		put.expected_origin.data = origin;
		put.expected_origin.len = 16;
	}
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	if ((r = call(c, &req, &rep, err, sizeof(err))) < 0) {
		printf("error %d: %s\n", -r, err);
		return 1;
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	printf("ok\n");
	return 0;
}

static int
cmd_del(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(3000);
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__DeleteReq del = MTS__STATESTORE__DELETE_REQ__INIT;
	char err[256];
	Rep *rep;
	int r;

	del.key.data = (uint8_t *)argv[0];
	del.key.len = strlen(argv[0]);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_DELETE;
	req.delete_ = &del;
	if ((r = call(c, &req, &rep, err, sizeof(err))) < 0) {
		printf("error %d: %s\n", -r, err);
		return 1;
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

/* merge KEY VALUE|- HLC ORIGIN_HEX: merges one record ("-" = tombstone);
 * prints "applied N ignored M". */
static int
cmd_merge(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(3000);
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__MergeReq mr = MTS__STATESTORE__MERGE_REQ__INIT;
	Mts__KeyRecord kr = MTS__KEY_RECORD__INIT, *krp = &kr;
	Mts__Record rec = MTS__RECORD__INIT;
	uint8_t origin[16];
	char err[256];
	Rep *rep;
	int r;

	if (mts_unhex(origin, 16, argv[3], strlen(argv[3])) < 0)
		return 2;
	kr.key.data = (uint8_t *)argv[0];
	kr.key.len = strlen(argv[0]);
	rec.tombstone = strcmp(argv[1], "-") == 0;
	if (!rec.tombstone) {
		rec.value.data = (uint8_t *)argv[1];
		rec.value.len = strlen(argv[1]);
	}
	rec.hlc = strtoull(argv[2], NULL, 10);
	rec.origin.data = origin;
	rec.origin.len = 16;
	kr.record = &rec;
	mr.n_records = 1;
	mr.records = &krp;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_MERGE;
	req.merge = &mr;
	if ((r = call(c, &req, &rep, err, sizeof(err))) < 0) {
		printf("error %d: %s\n", -r, err);
		return 1;
	}
	printf("applied %u ignored %u\n", rep->merge->applied,
	    rep->merge->ignored);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

/* watch PREFIX N: prints the first N changes published under PREFIX. */
static int
cmd_watch(int argc, char **argv)
{
	char path[512], err[256];
	nng_socket sub;
	Mts__Statestore__Change *ch;
	int n = atoi(argv[1]), i = 0;
	size_t l = strlen(sock_path);

	if (l < 5 || strcmp(sock_path + l - 5, ".sock") != 0)
		return 2;
	snprintf(path, sizeof(path), "%.*s.pub", (int)(l - 5), sock_path);
	if (mts_sub_open(path, argv[0], strlen(argv[0]), &sub, err,
	        sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	nng_socket_set_ms(sub, NNG_OPT_RECVTIMEO, 10000);
	printf("watching\n");
	fflush(stdout);
	while (i < n &&
	    mts_sub_recv(sub, &mts__statestore__change__descriptor,
	        (ProtobufCMessage **)&ch, 0) == 0) {
		print_record((const char *)ch->key.data, ch->key.len,
		    ch->record);
		fflush(stdout);
		protobuf_c_message_free_unpacked(&ch->base, NULL);
		i++;
	}
	nng_close(sub);
	return i == n ? 0 : 1;
}

/* Fetches the page with hash h and, recursively, its children; checks that
 * each decodes and hashes to the hash it was fetched by. */
static int
walk(struct mts_ipc_client *c, const uint8_t *h, size_t *pages, size_t *items)
{
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PageReq pr = MTS__STATESTORE__PAGE_REQ__INIT;
	struct mts_mst_page_view v;
	uint8_t got[32];
	char err[256];
	Rep *rep;
	size_t i;
	int bad = 0;

	pr.hash.data = (uint8_t *)h;
	pr.hash.len = 32;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PAGE;
	req.page = &pr;
	if (call(c, &req, &rep, err, sizeof(err)) < 0 || !rep->page->found) {
		fprintf(stderr, "page fetch failed\n");
		return 1;
	}
	mts_blake2b256(got, rep->page->page.data, rep->page->page.len);
	if (memcmp(got, h, 32) != 0 ||
	    mts_mst_page_decode(rep->page->page.data, rep->page->page.len, &v) <
	        0) {
		fprintf(stderr, "page does not match its hash or decode\n");
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		return 1;
	}
	(*pages)++;
	*items += v.nitems;
	for (i = 0; i < v.nitems; i++)
		if (v.items[i].child != NULL)
			bad += walk(c, v.items[i].child, pages, items);
	if (v.last_child != NULL)
		bad += walk(c, v.last_child, pages, items);
	mts_mst_page_view_free(&v);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return bad;
}

/* pages: walks the whole tree from the root; prints "pages N items M". */
static int
cmd_pages(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(5000);
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq root = MTS__STATESTORE__ROOT_REQ__INIT;
	static const uint8_t zero[32];
	size_t pages = 0, items = 0;
	char err[256];
	Rep *rep;
	int bad = 0;

	req.body_case = MTS__STATESTORE__REQUEST__BODY_ROOT;
	req.root = &root;
	if (call(c, &req, &rep, err, sizeof(err)) < 0)
		return 1;
	if (memcmp(rep->root->hash.data, zero, 32) != 0)
		bad = walk(c, rep->root->hash.data, &pages, &items);
	printf("pages %zu items %zu (root says %llu pages %llu records)\n",
	    pages, items, (unsigned long long)rep->root->pages,
	    (unsigned long long)rep->root->records);
	bad += pages != rep->root->pages || items != rep->root->records;
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return bad != 0;
}

/* fill N VSIZE HLC_BASE: merges N records k/<i> (deterministic, so two
 * stores filled alike are identical) in requests of 1000. */
static int
cmd_fill(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(30000);
	size_t n = strtoul(argv[0], NULL, 10), vs = strtoul(argv[1], NULL, 10);
	uint64_t base = strtoull(argv[2], NULL, 10);
	size_t step = 1000, i, j, m;
	Mts__KeyRecord *kr = calloc(step, sizeof(*kr)), **krp;
	Mts__Record *rec = calloc(step, sizeof(*rec));
	char(*keys)[32] = calloc(step, 32), err[256];
	uint8_t origin[16] = { 1 }, *val = malloc(vs);
	Rep *rep;

	krp = calloc(step, sizeof(*krp));
	for (i = 0; i < n; i += step) {
		Req req = MTS__STATESTORE__REQUEST__INIT;
		Mts__Statestore__MergeReq mr = MTS__STATESTORE__MERGE_REQ__INIT;

		m = n - i < step ? n - i : step;
		for (j = 0; j < m; j++) {
			mts__key_record__init(&kr[j]);
			mts__record__init(&rec[j]);
			snprintf(keys[j], 32, "k/%09zu", i + j);
			memset(val, 'a' + (i + j) % 26, vs);
			kr[j].key.data = (uint8_t *)keys[j];
			kr[j].key.len = strlen(keys[j]);
			rec[j].hlc = base + i + j;
			rec[j].origin.data = origin;
			rec[j].origin.len = 16;
			rec[j].value.data = val;
			rec[j].value.len = vs;
			kr[j].record = &rec[j];
			krp[j] = &kr[j];
		}
		mr.n_records = m;
		mr.records = krp;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_MERGE;
		req.merge = &mr;
		if (call(c, &req, &rep, err, sizeof(err)) < 0) {
			fprintf(stderr, "fill: %s\n", err);
			return 1;
		}
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
	return 0;
}

static int
fetch_page(struct mts_ipc_client *c, const uint8_t *h, Rep **rep)
{
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PageReq pr = MTS__STATESTORE__PAGE_REQ__INIT;
	char err[256];

	pr.hash.data = (uint8_t *)h;
	pr.hash.len = 32;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PAGE;
	req.page = &pr;
	if (call(c, &req, rep, err, sizeof(err)) < 0)
		return -1;
	return (*rep)->page->found;
}

struct diffstat {
	size_t pages, page_bytes, keys;
	char **diffkeys;
	size_t ndiff;
};

/* Walks the remote tree from h, fetching only pages the local store does
 * not have; collects keys whose rh the local store lacks. */
static void
diff_walk(struct mts_ipc_client *local, struct mts_ipc_client *remote,
    const uint8_t *h, struct diffstat *d)
{
	struct mts_mst_page_view v;
	Rep *rep, *lrep;
	size_t i;

	if (fetch_page(local, h, &lrep) == 1) { /* same subtree here */
		protobuf_c_message_free_unpacked(&lrep->base, NULL);
		return;
	}
	if (fetch_page(remote, h, &rep) != 1)
		return;
	d->pages++;
	d->page_bytes += rep->page->page.len;
	if (mts_mst_page_decode(rep->page->page.data, rep->page->page.len,
	        &v) == 0) {
		for (i = 0; i < v.nitems; i++) {
			if (v.items[i].child != NULL)
				diff_walk(local, remote, v.items[i].child, d);
			/* a differing item: the caller pulls its record */
			d->diffkeys = realloc(d->diffkeys,
			    (d->ndiff + 1) * sizeof(char *));
			d->diffkeys[d->ndiff++] =
			    strndup((const char *)v.items[i].key,
			        v.items[i].klen);
		}
		if (v.last_child != NULL)
			diff_walk(local, remote, v.last_child, d);
		mts_mst_page_view_free(&v);
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
}

/* diff REMOTE_SOCKET: what anti-entropy from REMOTE to this store costs.
 * Prints "pages P page_bytes B candidate_keys K pulled_records R
 * record_bytes RB". Items of fetched pages are candidates; the records
 * whose rh differs are pulled. */
static int
cmd_diff(int argc, char **argv)
{
	struct mts_ipc_client *l = connect_or_die(10000);
	struct mts_ipc_client *r;
	const char *saved = sock_path;
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq root = MTS__STATESTORE__ROOT_REQ__INIT;
	Mts__Statestore__RecordsReq rr = MTS__STATESTORE__RECORDS_REQ__INIT;
	struct diffstat d = { 0 };
	size_t i, pulled = 0, rbytes = 0;
	char err[256];
	Rep *rep;

	sock_path = argv[0];
	r = connect_or_die(10000);
	sock_path = saved;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_ROOT;
	req.root = &root;
	if (call(r, &req, &rep, err, sizeof(err)) < 0)
		return 1;
	diff_walk(l, r, rep->root->hash.data, &d);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	rr.n_keys = d.ndiff;
	rr.keys = calloc(d.ndiff + 1, sizeof(*rr.keys));
	for (i = 0; i < d.ndiff; i++) {
		rr.keys[i].data = (uint8_t *)d.diffkeys[i];
		rr.keys[i].len = strlen(d.diffkeys[i]);
	}
	req.body_case = MTS__STATESTORE__REQUEST__BODY_RECORDS;
	req.records = &rr;
	/* A real exchange first compares each candidate's rh with the local
	 * one (from the local page); pull only the keys that differ. */
	if (call(r, &req, &rep, err, sizeof(err)) < 0)
		return 1;
	for (i = 0; i < rep->records->n_records; i++) {
		Mts__KeyRecord *kr = rep->records->records[i];
		Rep *lr;
		Req g = MTS__STATESTORE__REQUEST__INIT;
		Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
		int same = 0;

		get.key = kr->key;
		g.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
		g.get = &get;
		if (call(l, &g, &lr, err, sizeof(err)) == 0) {
			same = lr->get->found &&
			    lr->get->record->hlc == kr->record->hlc &&
			    lr->get->record->value.len ==
			        kr->record->value.len &&
			    memcmp(lr->get->record->value.data,
			        kr->record->value.data,
			        kr->record->value.len) == 0;
			protobuf_c_message_free_unpacked(&lr->base, NULL);
		}
		if (!same) {
			pulled++;
			rbytes += mts__key_record__get_packed_size(kr);
		}
	}
	printf("pages %zu page_bytes %zu candidate_keys %zu pulled_records %zu "
	       "record_bytes %zu\n",
	    d.pages, d.page_bytes, d.ndiff, pulled, rbytes);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

/* records KEY...: fetches several records in one request and prints them. */
static int
cmd_records(int argc, char **argv)
{
	struct mts_ipc_client *c = connect_or_die(3000);
	Req req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RecordsReq rr = MTS__STATESTORE__RECORDS_REQ__INIT;
	ProtobufCBinaryData *keys = calloc(argc + 1, sizeof(*keys));
	char err[256];
	Rep *rep;
	size_t i;

	for (i = 0; i < (size_t)argc; i++) {
		keys[i].data = (uint8_t *)argv[i];
		keys[i].len = strlen(argv[i]);
	}
	rr.n_keys = argc;
	rr.keys = keys;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_RECORDS;
	req.records = &rr;
	if (call(c, &req, &rep, err, sizeof(err)) < 0) {
		fprintf(stderr, "records: %s\n", err);
		free(keys);
		return 1;
	}
	for (i = 0; i < rep->records->n_records; i++)
		print_record((const char *)rep->records->records[i]->key.data,
		    rep->records->records[i]->key.len,
		    rep->records->records[i]->record);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	free(keys);
	return 0;
}

static const struct {
	const char *name;
	int nargs;
	int (*fn)(int, char **);
	const char *usage;
} cmds[] = {
	{ "put", 2, cmd_put, "put KEY VALUE" },
	{ "get", 1, cmd_get, "get KEY" },
	{ "root", 0, cmd_root, "root" },
	{ "getv", 1, cmd_getv, "getv KEY" },
	{ "putif", 4, cmd_putif, "putif KEY VALUE HLC ORIGIN_HEX" },
	{ "del", 1, cmd_del, "del KEY" },
	{ "merge", 4, cmd_merge, "merge KEY VALUE|- HLC ORIGIN_HEX" },
	{ "watch", 2, cmd_watch, "watch PREFIX N" },
	{ "pages", 0, cmd_pages, "pages" },
	{ "records", 1, cmd_records, "records KEY..." },
	{ "fill", 3, cmd_fill, "fill N VALUE_BYTES HLC_BASE" },
	{ "diff", 1, cmd_diff, "diff REMOTE_SOCKET" },
	{ "writer", 2, cmd_writer, "writer N LOGFILE" },
	{ "verify", 1, cmd_verify, "verify LOGFILE" },
	{ "probe", 0, cmd_probe, "probe" },
	{ "load", 2, cmd_load, "load CLIENTS SECONDS [VALUE_BYTES]" },
};

int
main(int argc, char **argv)
{
	size_t i;

	if (argc < 3)
		goto usage;
	sock_path = argv[1];
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[2], cmds[i].name) == 0 &&
		    argc - 3 >= cmds[i].nargs) {
			int rc = cmds[i].fn(argc - 3, argv + 3);

			disconnect_all();
			return rc;
		}
	}
usage:
	fprintf(stderr, "usage: sstool SOCKET COMMAND ...\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, "  %s\n", cmds[i].usage);
	return 2;
}
