/* store.c: gossipd's client of the local statestore — requests with deadlines, the change feed, and the local view the anti-entropy walk uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "record.h"
#include "xmalloc.h"

int
gd_store_open(struct gossipd *g)
{
	char path[512], err[256];

	if (mts_path_join(path, sizeof(path), g->agent.rundir,
		"statestore.sock") < 0)
		return -1;
	g->store = mts_ipc_client_open(path, (int)g->cfg.store_timeout, err,
	    sizeof(err));
	if (g->store == NULL) {
		log_warnx("statestore: %s", err);
		return -1;
	}
	if (mts_path_join(path, sizeof(path), g->agent.rundir,
		"statestore.pub") < 0)
		return -1;
	if (mts_sub_open(path, "", 0, &g->sub, err, sizeof(err)) < 0) {
		log_warnx("statestore feed: %s", err);
		return -1;
	}
	if (mts_ipc_recv_fd(g->sub, &g->subfd) < 0) {
		log_warnx("statestore feed: no receive descriptor");
		return -1;
	}
	return 0;
}

int
gd_store_call(struct gossipd *g, Mts__Statestore__Request *req,
    Mts__Statestore__Reply **rep)
{
	char err[256];
	int rc;

	rc = mts_ipc_client_call(g->store, &req->base,
	    &mts__statestore__reply__descriptor, (ProtobufCMessage **)rep, err,
	    sizeof(err));
	if (rc < 0 && rc != -MTS_ERR_NOTFOUND)
		log_warnx("statestore request %d: %s", (int)req->body_case, err);
	return rc;
}

int
gd_store_get(struct gossipd *g, const char *key, Mts__Statestore__Reply **rep)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	int rc;

	get.key.data = (uint8_t *)key;
	get.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	if ((rc = gd_store_call(g, &req, rep)) < 0)
		return rc;
	if ((*rep)->get == NULL || !(*rep)->get->found ||
	    (*rep)->get->record == NULL) {
		mts__statestore__reply__free_unpacked(*rep, NULL);
		*rep = NULL;
		return -MTS_ERR_NOTFOUND;
	}
	return 0;
}

int
gd_store_put(struct gossipd *g, const char *key, const ProtobufCMessage *val)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	size_t len = protobuf_c_message_get_packed_size(val);
	uint8_t *buf = xmalloc(len + 1);
	int rc;

	protobuf_c_message_pack(val, buf);
	put.key.data = (uint8_t *)key;
	put.key.len = strlen(key);
	put.value.data = buf;
	put.value.len = len;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	rc = gd_store_call(g, &req, &rep);
	if (rep)
		mts__statestore__reply__free_unpacked(rep, NULL);
	free(buf);
	return rc;
}

int
gd_store_delete(struct gossipd *g, const char *key)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__DeleteReq del = MTS__STATESTORE__DELETE_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	int rc;

	del.key.data = (uint8_t *)key;
	del.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_DELETE;
	req.delete_ = &del;
	rc = gd_store_call(g, &req, &rep);
	if (rep)
		mts__statestore__reply__free_unpacked(rep, NULL);
	return rc;
}

int
gd_store_root(struct gossipd *g, uint8_t root[32])
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq rr = MTS__STATESTORE__ROOT_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	int rc;

	req.body_case = MTS__STATESTORE__REQUEST__BODY_ROOT;
	req.root = &rr;
	if ((rc = gd_store_call(g, &req, &rep)) < 0)
		return rc;
	if (rep->root == NULL || rep->root->hash.len != 32)
		rc = -MTS_ERR_INVAL;
	else
		memcpy(root, rep->root->hash.data, 32);
	mts__statestore__reply__free_unpacked(rep, NULL);
	return rc;
}

int
gd_store_merge(struct gossipd *g, Mts__KeyRecord **recs, size_t n)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__MergeReq mr = MTS__STATESTORE__MERGE_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	int rc;

	if (n == 0)
		return 0;
	mr.records = recs;
	mr.n_records = n;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_MERGE;
	req.merge = &mr;
	rc = gd_store_call(g, &req, &rep);
	if (rep)
		mts__statestore__reply__free_unpacked(rep, NULL);
	return rc;
}

/* --- change feed -------------------------------------------------------------- */

/* Committed changes: local ones are pushed to peers (in one batch per
 * drain); member records update admission whatever their origin. */
void
gd_feed_drain(struct gossipd *g, mts_time_t now)
{
	Mts__Statestore__Change *ch[256];
	Mts__KeyRecord kr[256], *krp[256];
	ProtobufCMessage *body;
	size_t n = 0, k = 0, i;
	char key[MTS_KEY_MAX + 1];
	int rc;

	while (n < 256) {
		rc = mts_sub_recv(g->sub, &mts__statestore__change__descriptor,
		    &body, NNG_FLAG_NONBLOCK);
		if (rc == -MTS_ERR_INVAL) {
			log_warnx("statestore feed: malformed change ignored");
			continue;
		}
		if (rc < 0 || body == NULL)
			break; /* nothing more now (or the socket failed) */
		ch[n] = (Mts__Statestore__Change *)body;
		if (ch[n]->record == NULL || ch[n]->key.len > MTS_KEY_MAX) {
			protobuf_c_message_free_unpacked(body, NULL);
			continue;
		}
		n++;
	}
	for (i = 0; i < n; i++) {
		memcpy(key, ch[i]->key.data, ch[i]->key.len);
		key[ch[i]->key.len] = '\0';
		if (strncmp(key, "m/", 2) == 0 || strncmp(key, "c/", 2) == 0)
			gd_member_record_changed(g, key, ch[i]->record, now);
		if (!ch[i]->local)
			continue;
		mts__key_record__init(&kr[k]);
		kr[k].key = ch[i]->key;
		kr[k].record = ch[i]->record;
		krp[k] = &kr[k];
		k++;
	}
	if (k > 0 && g->in_cluster)
		gd_push_local(g, krp, k, now);
	for (i = 0; i < n; i++)
		mts__statestore__change__free_unpacked(ch[i], NULL);
}

/* --- the local view for the anti-entropy walk ---------------------------------- */

static int
has_page(void *ctx, const uint8_t h[MTS_HASH_LEN])
{
	struct gossipd *g = ctx;
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PageReq pr = MTS__STATESTORE__PAGE_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	int found = 0;

	pr.hash.data = (uint8_t *)h;
	pr.hash.len = MTS_HASH_LEN;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PAGE;
	req.page = &pr;
	if (gd_store_call(g, &req, &rep) == 0) {
		found = rep->page && rep->page->found;
		mts__statestore__reply__free_unpacked(rep, NULL);
	}
	return found;
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

static void
local_rh(void *ctx, const uint8_t *const *keys, const size_t *klens, size_t n,
    uint8_t (*rh)[MTS_HASH_LEN], int *found)
{
	struct gossipd *g = ctx;
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RecordsReq rr = MTS__STATESTORE__RECORDS_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	ProtobufCBinaryData *kb = xcalloc(n ? n : 1, sizeof(*kb));
	size_t i, j;

	for (i = 0; i < n; i++) {
		kb[i].data = (uint8_t *)keys[i];
		kb[i].len = klens[i];
		found[i] = 0;
	}
	rr.keys = kb;
	rr.n_keys = n;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_RECORDS;
	req.records = &rr;
	if (gd_store_call(g, &req, &rep) == 0 && rep->records) {
		/* replies come in request order with missing keys omitted */
		for (i = 0, j = 0; i < rep->records->n_records && j < n; j++) {
			const Mts__KeyRecord *r = rep->records->records[i];

			if (r->key.len != klens[j] ||
			    memcmp(r->key.data, keys[j], klens[j]) != 0)
				continue;
			found[j] = record_rh(r->record, rh[j]) == 0;
			i++;
		}
	}
	if (rep)
		mts__statestore__reply__free_unpacked(rep, NULL);
	free(kb);
}

void
gd_ae_local(struct gossipd *g, struct mts_ae_local *l)
{
	l->has_page = has_page;
	l->rh = local_rh;
	l->ctx = g;
}
