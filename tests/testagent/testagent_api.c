/* testagent_api.c: the test agent's requests — its access table, its dispatch table of {type, name, caller classes, handler}, and handlers that turn statestore.proto messages into calls of the core and back. */
#include <stdlib.h>
#include <unistd.h>

#include "mtstime.h"
#include "statestore.pb-c.h"
#include "testagent.h"
#include "xmalloc.h"

/* Every record claims this origin (the test agent is no node). */
static const uint8_t origin[16] = { 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
	0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa };

/* Fills r with rec (r points into rec: valid until the next write). */
static void
fill(Mts__Record *r, const struct ta_record *rec)
{
	r->hlc = rec->hlc;
	r->origin.data = (uint8_t *)origin;
	r->origin.len = sizeof(origin);
	r->tombstone = rec->tomb;
	r->value.data = rec->value;
	r->value.len = rec->vlen;
}

static void
h_get(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__GetReq *g =
	    ((const Mts__Statestore__Request *)m)->get;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__GetRep gr = MTS__STATESTORE__GET_REP__INIT;
	Mts__Record r = MTS__RECORD__INIT;
	struct ta *t = ctx;
	const struct ta_record *rec = ta_get(&t->core, g->key.data, g->key.len);

	if (t->get_ms > 0) /* a slow agent: its loop stalls too */
		usleep((useconds_t)t->get_ms * 1000);
	if (rec != NULL) {
		fill(&r, rec);
		gr.found = 1;
		gr.record = &r;
	}
	rep.body_case = MTS__STATESTORE__REPLY__BODY_GET;
	rep.get = &gr;
	mts_ipc_reply(call, &rep.base);
}

/* Put and delete: one write of the core, the stored record replied. */
static void
reply_write(struct ta *t, struct mts_ipc_call *call,
    const ProtobufCBinaryData *key, const ProtobufCBinaryData *value, int tomb)
{
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__PutRep p = MTS__STATESTORE__PUT_REP__INIT;
	Mts__Statestore__DeleteRep d = MTS__STATESTORE__DELETE_REP__INIT;
	Mts__Record r = MTS__RECORD__INIT;

	fill(&r,
	    ta_put(&t->core, key->data, key->len, value ? value->data : NULL,
	        value ? value->len : 0, tomb, mts_wall_ms()));
	if (tomb) {
		d.record = &r;
		rep.body_case = MTS__STATESTORE__REPLY__BODY_DELETE;
		rep.delete_ = &d;
	} else {
		p.record = &r;
		rep.body_case = MTS__STATESTORE__REPLY__BODY_PUT;
		rep.put = &p;
	}
	mts_ipc_reply(call, &rep.base);
}

static void
h_put(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__PutReq *p =
	    ((const Mts__Statestore__Request *)m)->put;

	reply_write(ctx, call, &p->key, &p->value, 0);
}

static void
h_delete(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__DeleteReq *d =
	    ((const Mts__Statestore__Request *)m)->delete_;

	reply_write(ctx, call, &d->key, NULL, 1);
}

static void
h_scan(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__ScanReq *s =
	    ((const Mts__Statestore__Request *)m)->scan;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__ScanRep sr = MTS__STATESTORE__SCAN_REP__INIT;
	struct ta *t = ctx;
	struct ta_scan q = { .prefix = s->prefix.data,
		.plen = s->prefix.len,
		.after = s->start_after.data,
		.alen = s->start_after.len,
		.tombstones = s->include_tombstones,
		.limit = s->limit };
	size_t want = s->limit ? s->limit : TA_SCAN_DEFAULT, room, i, n;
	const struct ta_record **recs;
	Mts__KeyRecord *kr, **items;
	Mts__Record *rr;
	int more;

	room =
	    want < t->core.n ? want : t->core.n; /* at most this many match */
	recs = xcalloc(room + 1, sizeof(*recs));
	kr = xcalloc(room + 1, sizeof(*kr));
	rr = xcalloc(room + 1, sizeof(*rr));
	items = xcalloc(room + 1, sizeof(*items));
	n = ta_scan(&t->core, &q, recs, &more);
	for (i = 0; i < n; i++) {
		mts__key_record__init(&kr[i]);
		mts__record__init(&rr[i]);
		fill(&rr[i], recs[i]);
		kr[i].key.data = recs[i]->key;
		kr[i].key.len = recs[i]->klen;
		kr[i].record = &rr[i];
		items[i] = &kr[i];
	}
	sr.items = items;
	sr.n_items = n;
	sr.more = more;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_SCAN;
	rep.scan = &sr;
	mts_ipc_reply(call, &rep.base);
	free(items);
	free(rr);
	free(kr);
	free(recs);
}

static void
h_root(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__RootRep r = MTS__STATESTORE__ROOT_REP__INIT;
	struct ta *t = ctx;
	uint8_t h[MTS_HASH_LEN];

	ta_root(&t->core, h, &r.live);
	r.hash.data = h;
	r.hash.len = sizeof(h);
	r.records = t->core.n;
	r.pages = t->core.n ? 1 : 0;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_ROOT;
	rep.root = &r;
	mts_ipc_reply(call, &rep.base);
}

#define READ MTS_CALLER_READ
#define WRITE MTS_CALLER_WRITE

static const struct mts_ipc_route routes[] = {
	{ MTS__STATESTORE__REQUEST__BODY_GET, "get", READ, h_get },
	{ MTS__STATESTORE__REQUEST__BODY_PUT, "put", WRITE, h_put },
	{ MTS__STATESTORE__REQUEST__BODY_DELETE, "delete", WRITE, h_delete },
	{ MTS__STATESTORE__REQUEST__BODY_SCAN, "scan", READ, h_scan },
	{ MTS__STATESTORE__REQUEST__BODY_ROOT, "root", READ, h_root },
};

/* Only the users of [testagent] acl (default root) may call: the
 * admin-denial tests rely on a real refusal. */
static const struct mts_acl_rule acl_rules[] = {
	{ READ | WRITE, MTS_ACL_USERS, "acl" },
	{ 0, 0, NULL },
};

const struct mts_acl_rule ta_acl_open[] = {
	{ READ | WRITE, MTS_ACL_ANYONE, NULL },
	{ 0, 0, NULL },
};

const struct mts_ipc_service ta_service = {
	.name = "testagent",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.acl = acl_rules,
};
