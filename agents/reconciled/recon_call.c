/* recon_call.c: reconciled's calls to other agents — to this node's schedd, shim and statestore on their sockets, to another node's schedd or reconciled through the local gossipd's relay — all asynchronous on the loop, with the relayed reply unpacked like a local one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "gossipd.pb-c.h"
#include "log.h"
#include "mtserr.h"
#include "reconciled.h"
#include "xmalloc.h"

struct relay_call {
	const ProtobufCMessageDescriptor *desc;
	rc_call_fn fn;
	void *arg;
};

void
rc_random_hex(char *out, size_t n)
{
	uint8_t b[32];

	if (n > sizeof(b))
		n = sizeof(b);
	randombytes_buf(b, n);
	mts_hex(out, b, n);
}

/* The relay's reply holds the remote agent's packed Reply. */
static void
relay_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct relay_call *c = arg;
	const Mts__Gossipd__Reply *rep = (const Mts__Gossipd__Reply *)m;
	ProtobufCMessage *inner;
	const char *msg = NULL;
	int code;

	if (rc < 0) {
		c->fn(c->arg, rc, NULL, err);
	} else if (rep->relay == NULL ||
	    (inner = protobuf_c_message_unpack(c->desc, NULL,
	         rep->relay->payload.len, rep->relay->payload.data)) == NULL) {
		c->fn(c->arg, -MTS_ERR_INVAL, NULL,
		    "undecodable relayed reply");
	} else {
		if ((code = mts_pb_reply_error(inner, &msg)) != 0)
			c->fn(c->arg, -code, NULL, msg ? msg : "error");
		else
			c->fn(c->arg, 0, inner, "");
		protobuf_c_message_free_unpacked(inner, NULL);
	}
	free(c);
}

static struct mts_ipc_async *
local_client(struct recond *r, const char *agent)
{
	if (strcmp(agent, "schedd") == 0)
		return r->schedd;
	if (strcmp(agent, "shim") == 0)
		return r->shim;
	if (strcmp(agent, "statestore") == 0)
		return r->store;
	if (strcmp(agent, "netd") == 0)
		return r->netd;
	return NULL;
}

static void
relay(struct recond *r, const char *node_hex, const char *agent,
    ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
    int timeout_ms, rc_call_fn fn, void *arg)
{
	Mts__Gossipd__Request g = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__RelayReq rr = MTS__GOSSIPD__RELAY_REQ__INIT;
	struct relay_call *c = xcalloc(1, sizeof(*c));
	uint8_t node[MTS_NODE_ID_LEN], *buf;
	size_t len;

	if (mts_unhex(node, sizeof(node), node_hex, MTS_NODE_HEX_LEN) < 0) {
		free(c);
		fn(arg, -MTS_ERR_INVAL, NULL, "bad node id");
		return;
	}
	mts_pb_set_version(req);
	len = protobuf_c_message_get_packed_size(req);
	buf = xmalloc(len + 1);
	protobuf_c_message_pack(req, buf);
	rr.to_node.data = node;
	rr.to_node.len = sizeof(node);
	rr.agent = (char *)agent;
	rr.payload.data = buf;
	rr.payload.len = len;
	randombytes_buf(&rr.request_id, sizeof(rr.request_id));
	rr.timeout_ms = (uint32_t)timeout_ms;
	g.body_case = MTS__GOSSIPD__REQUEST__BODY_RELAY;
	g.relay = &rr;
	c->desc = reply_desc;
	c->fn = fn;
	c->arg = arg;
	if (mts_ipc_async_call(r->gossipd, &g.base,
	        &mts__gossipd__reply__descriptor, timeout_ms + 1000, relay_done,
	        c) == NULL) {
		free(c);
		fn(arg, -MTS_ERR_CANCELED, NULL, "gossipd client closing");
	}
	free(buf);
}

/* A callback that must never run synchronously from the call is the
 * async client's promise; a closing client (NULL) answers here. */
void
rc_call(struct recond *r, const char *node_hex, const char *agent,
    ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
    int timeout_ms, rc_call_fn fn, void *arg)
{
	struct mts_ipc_async *c;

	if (node_hex != NULL && strcmp(node_hex, r->self) != 0) {
		relay(r, node_hex, agent, req, reply_desc, timeout_ms, fn, arg);
		return;
	}
	if ((c = local_client(r, agent)) == NULL) {
		fn(arg, -MTS_ERR_INVAL, NULL, "no local client");
		return;
	}
	if (mts_ipc_async_call(c, req, reply_desc, timeout_ms, fn, arg) == NULL)
		fn(arg, -MTS_ERR_CANCELED, NULL, "client closing");
}

struct write_call {
	char key[300];
	int del;
	rc_call_fn fn;
	void *arg;
};

static void
write_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct write_call *w = arg;

	if (w->del && rc == -MTS_ERR_NOTFOUND) /* gone already */
		rc = 0;
	if (rc < 0 && rc != -MTS_ERR_CANCELED)
		log_warnx("writing %s: %s", w->key, err);
	if (w->fn)
		w->fn(w->arg, rc, m, err);
	free(w);
}

void
rc_store_write(struct recond *r, const char *key, const uint8_t *value,
    size_t len, rc_call_fn fn, void *arg)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Statestore__DeleteReq del = MTS__STATESTORE__DELETE_REQ__INIT;
	struct write_call *w = xcalloc(1, sizeof(*w));

	snprintf(w->key, sizeof(w->key), "%s", key);
	w->fn = fn;
	w->arg = arg;
	if (value != NULL) {
		put.key.data = (uint8_t *)key;
		put.key.len = strlen(key);
		put.value.data = (uint8_t *)value;
		put.value.len = len;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
		req.put = &put;
	} else {
		w->del = 1;
		del.key.data = (uint8_t *)key;
		del.key.len = strlen(key);
		req.body_case = MTS__STATESTORE__REQUEST__BODY_DELETE;
		req.delete_ = &del;
	}
	if (mts_ipc_async_call(r->store, &req.base,
	        &mts__statestore__reply__descriptor, 0, write_done,
	        w) == NULL) {
		if (fn)
			fn(arg, -MTS_ERR_CANCELED, NULL, "closing");
		free(w);
	}
}
