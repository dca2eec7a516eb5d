/* store.c: gossipd's client of the local statestore — asynchronous requests on the loop (blocking ones only at start-up and for admin calls), and the change feed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "record.h"
#include "xmalloc.h"

int
gd_store_open(struct gossipd *g)
{
	char path[512], err[256];

	if (mts_ipc_sock_path(path, sizeof(path), g->agent.rundir, "statestore",
	        NULL) < 0)
		return -1;
	g->store = mts_ipc_client_open(path, (int)g->cfg.store_timeout, err,
	    sizeof(err));
	if (g->store != NULL)
		g->astore = mts_ipc_async_open(g->loop, path,
		    (int)g->cfg.store_timeout, err, sizeof(err));
	if (g->store == NULL || g->astore == NULL) {
		log_warnx("statestore: %s", err);
		return -1;
	}
	if (mts_ipc_sock_path(path, sizeof(path), g->agent.rundir, "statestore",
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
		log_warnx("statestore request %d: %s", (int)req->body_case,
		    err);
	return rc;
}

/* One asynchronous statestore call: what gd_store_send's callback needs. */
struct store_call {
	struct gossipd *g;
	int type;
	gd_store_fn fn;
	void *arg;
};

static void
store_done(void *arg, int rc, const ProtobufCMessage *rep, const char *err)
{
	struct store_call *sc = arg;

	if (rc < 0 && rc != -MTS_ERR_NOTFOUND && rc != -MTS_ERR_CANCELED)
		log_warnx("statestore request %d: %s", sc->type, err);
	if (sc->fn)
		sc->fn(sc->g, sc->arg, rc, (const Mts__Statestore__Reply *)rep);
	free(sc);
}

void
gd_store_send(struct gossipd *g, Mts__Statestore__Request *req, gd_store_fn fn,
    void *arg)
{
	struct store_call *sc = xcalloc(1, sizeof(*sc));

	sc->g = g;
	sc->type = (int)req->body_case;
	sc->fn = fn;
	sc->arg = arg;
	/* NULL only while the client closes, which is at exit */
	if (mts_ipc_async_call(g->astore, &req->base,
	        &mts__statestore__reply__descriptor, 0, store_done, sc) == NULL)
		free(sc);
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

void
gd_store_put_send(struct gossipd *g, const char *key,
    const ProtobufCMessage *val, gd_store_fn fn, void *arg)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	size_t len = protobuf_c_message_get_packed_size(val);
	uint8_t *buf = xmalloc(len + 1);

	protobuf_c_message_pack(val, buf);
	put.key.data = (uint8_t *)key;
	put.key.len = strlen(key);
	put.value.data = buf;
	put.value.len = len;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	gd_store_send(g, &req, fn, arg);
	sodium_memzero(buf, len); /* it may be the join secret */
	free(buf);
}

void
gd_store_merge(struct gossipd *g, Mts__KeyRecord **recs, size_t n,
    gd_store_fn fn, void *arg)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__MergeReq mr = MTS__STATESTORE__MERGE_REQ__INIT;

	mr.records = recs;
	mr.n_records = n;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_MERGE;
	req.merge = &mr;
	gd_store_send(g, &req, fn, arg);
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
