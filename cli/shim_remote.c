/* shim_remote.c: where a task runs (the local shim, the t/<node>/<task> records, or --node) and calls to that node's shim, directly or through the local gossipd's relay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "gossipd.pb-c.h"
#include "hash.h"
#include "ipc.h"
#include "mtserr.h"
#include "shimctl.h"
#include "statestore.pb-c.h"
#include "store_scan.h"
#include "xmalloc.h"

#define RELAY_TIMEOUT_MS 3000 /* the remote side bounds its call to 2 s */

/* The members as the local gossipd sees them (caller frees), or NULL with
 * the reason in err. */
static Mts__Gossipd__Reply *
members(struct mtsctl *ctx, int *rc, char *err, size_t errlen)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__MembersReq mr = MTS__GOSSIPD__MEMBERS_REQ__INIT;
	Mts__Gossipd__Reply *rep;

	req.body_case = MTS__GOSSIPD__REQUEST__BODY_MEMBERS;
	req.members = &mr;
	*rc = mtsctl_try_call(ctx, "gossipd", &req.base,
	    &mts__gossipd__reply__descriptor, (ProtobufCMessage **)&rep, err,
	    errlen);
	if (*rc == 0 && rep->body_case != MTS__GOSSIPD__REPLY__BODY_MEMBERS) {
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		snprintf(err, errlen, "gossipd sent an unexpected reply");
		*rc = -MTS_ERR_IO;
	}
	return *rc == 0 ? rep : NULL;
}

/* Fills the target's node and label from a member; refuses one gossip
 * knows to be gone. */
static int
set_member(struct shimctl_target *t, const Mts__Gossipd__NodeInfo *n)
{
	char hex[MTS_NODE_HEX_LEN + 1];

	mts_hex(hex, n->node.data, 16);
	memcpy(t->node, n->node.data, 16);
	snprintf(t->label, sizeof(t->label), "%s (%.12s)",
	    n->name && *n->name ? n->name : "node", hex);
	if (n->removed || !strcmp(n->state, "dead") ||
	    !strcmp(n->state, "left")) {
		mtsctl_err("node %s unreachable: gossip reports it %s",
		    t->label, n->removed ? "removed" : n->state);
		return MTSCTL_EUNREACH;
	}
	t->remote = !n->self;
	return 0;
}

static int
valid_member(const Mts__Gossipd__NodeInfo *n)
{
	return n->node.len == 16 && n->state != NULL;
}

/* --node NAME|ID: a member's name, its id or a unique prefix of it. */
static int
by_node(struct mtsctl *ctx, const char *want, struct shimctl_target *t)
{
	const Mts__Gossipd__NodeInfo *hit = NULL, *n;
	Mts__Gossipd__Reply *rep;
	char hex[MTS_NODE_HEX_LEN + 1], err[512];
	size_t i, nhits = 0, wl = strlen(want);
	int rc;

	if ((rep = members(ctx, &rc, err, sizeof(err))) == NULL) {
		mtsctl_err("--node needs the local gossipd: %s", err);
		return mtsctl_exit_for(rc);
	}
	for (i = 0; i < rep->members->n_nodes; i++) {
		n = rep->members->nodes[i];
		if (!valid_member(n))
			continue;
		mts_hex(hex, n->node.data, 16);
		if ((n->name && !strcmp(n->name, want)) ||
		    (wl > 0 && wl <= MTS_NODE_HEX_LEN &&
		        !strncmp(hex, want, wl))) {
			hit = n;
			nhits++;
		}
	}
	if (nhits != 1) {
		mtsctl_err(nhits ? "node %s is ambiguous: give more of its id"
		                 : "node %s is not a member of this cluster",
		    want);
		rc = nhits ? MTSCTL_EUSAGE : MTSCTL_ENOTFOUND;
	} else
		rc = set_member(t, hit);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return rc;
}

/* Whether the local shim has the task: 0 yes, 1 no (or no shim), else an
 * exit status (already reported). */
static int
local_has(struct mtsctl *ctx, const char *task)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskInspectReq ir = MTS__SHIM__TASK_INSPECT_REQ__INIT;
	Mts__Shim__Reply *rep;
	char err[512];
	int rc;

	ir.id = (char *)task;
	req.body_case = MTS__SHIM__REQUEST__BODY_INSPECT;
	req.inspect = &ir;
	rc = mtsctl_try_call(ctx, "shim", &req.base,
	    &mts__shim__reply__descriptor, (ProtobufCMessage **)&rep, err,
	    sizeof(err));
	if (rc == 0) {
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		return 0;
	}
	if (rc == -MTS_ERR_NOTFOUND)
		return 1;
	mtsctl_err("local shim: %s", err);
	return mtsctl_exit_for(rc);
}

struct holders {
	const char *task;
	const uint8_t *self;
	uint8_t **nodes;
	size_t *n;
};

/* Appends the node of a record t/<node>/<task> (but self) to the list. */
static int
take_holder(void *arg, const char *k, size_t klen, const Mts__Record *rec)
{
	const struct holders *h = arg;
	size_t tl = strlen(h->task);
	uint8_t id[16];

	/* t/ + 32 hex digits + / + task */
	if (klen != 2 + MTS_NODE_HEX_LEN + 1 + tl ||
	    k[2 + MTS_NODE_HEX_LEN] != '/' ||
	    memcmp(k + klen - tl, h->task, tl) != 0 ||
	    mts_unhex(id, 16, k + 2, MTS_NODE_HEX_LEN) != 0 ||
	    (h->self != NULL && !memcmp(id, h->self, 16)))
		return 0;
	*h->nodes = xreallocarray(*h->nodes, *h->n + 1, 16);
	memcpy(*h->nodes + 16 * (*h->n)++, id, 16);
	return 0;
}

/* Appends to *nodes (16 bytes each) every other node with a record
 * t/<node>/<task>. */
static int
scan_records(struct mtsctl *ctx, const char *task, const uint8_t self[16],
    uint8_t **nodes, size_t *n, char *err, size_t errlen)
{
	struct holders h = { task, self, nodes, n };

	return mtsctl_scan_prefix(ctx, "t/", take_holder, &h, err, errlen);
}

static const Mts__Gossipd__NodeInfo *
member_of(const Mts__Gossipd__Reply *rep, const uint8_t id[16])
{
	size_t i;

	for (i = 0; i < rep->members->n_nodes; i++)
		if (valid_member(rep->members->nodes[i]) &&
		    !memcmp(rep->members->nodes[i]->node.data, id, 16))
			return rep->members->nodes[i];
	return NULL;
}

/* The task is not here: the replicated records say where it runs. */
static int
by_records(struct mtsctl *ctx, const char *task, struct shimctl_target *t)
{
	Mts__Gossipd__Reply *rep = NULL;
	const Mts__Gossipd__NodeInfo *m;
	uint8_t *nodes = NULL;
	char err[512], hex[MTS_NODE_HEX_LEN + 1];
	size_t n = 0;
	int rc;

	if ((rep = members(ctx, &rc, err, sizeof(err))) == NULL) {
		mtsctl_err("task %s not found on this node (and no gossipd here "
		           "to look on others: %s)",
		    task, err);
		return rc == -MTS_ERR_NOTFOUND ? MTSCTL_ENOTFOUND
		                               : mtsctl_exit_for(rc);
	}
	rc = scan_records(ctx, task,
	    rep->members->self.len == 16 ? rep->members->self.data : NULL,
	    &nodes, &n, err, sizeof(err));
	if (rc != 0) {
		mtsctl_err("statestore: %s", err);
		rc = mtsctl_exit_for(rc);
	} else if (n == 0) {
		mtsctl_err("task %s not found on any node", task);
		rc = MTSCTL_ENOTFOUND;
	} else if (n > 1) {
		mtsctl_err("task %s exists on %zu nodes: choose one with "
		           "--node",
		    task, n);
		rc = MTSCTL_EUSAGE;
	} else if ((m = member_of(rep, nodes)) == NULL) {
		mts_hex(hex, nodes, 16);
		mtsctl_err("task %s runs on node %s, which is not a member "
		           "any more",
		    task, hex);
		rc = MTSCTL_EUNREACH;
	} else
		rc = set_member(t, m);
	free(nodes);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return rc;
}

int
shimctl_locate(struct mtsctl *ctx, const char *task, const char *node,
    struct shimctl_target *t)
{
	int rc;

	memset(t, 0, sizeof(*t));
	snprintf(t->label, sizeof(t->label), "local");
	if (node != NULL)
		return by_node(ctx, node, t);
	if ((rc = local_has(ctx, task)) != 1)
		return rc;
	return by_records(ctx, task, t);
}

/* --- calls ---------------------------------------------------------------- */

/* Explains a relay failure reported by the local gossipd. */
static int
relay_failed(const struct shimctl_target *t, int rc, const char *err)
{
	int remote = strncmp(err, "remote: ", 8) == 0;

	switch (-rc) {
	case MTS_ERR_DENIED:
		mtsctl_err("permission denied: the local gossipd relays only "
		           "for root, its own user and [gossipd] acl_relay "
		           "(%s)",
		    err);
		return MTSCTL_EDENIED;
	case MTS_ERR_TIMEOUT:
		if (remote)
			mtsctl_err("node %s: its shim did not answer in time",
			    t->label);
		else
			mtsctl_err("node %s unreachable: no reply within %d ms",
			    t->label, RELAY_TIMEOUT_MS);
		return MTSCTL_EUNREACH;
	case MTS_ERR_NOTFOUND:
		if (remote)
			mtsctl_err("node %s runs no shim (%s)", t->label,
			    err + 8);
		else
			mtsctl_err("node %s is not a member of this cluster",
			    t->label);
		return MTSCTL_EUNREACH;
	case MTS_ERR_IO:
		mtsctl_err("node %s unreachable (%s)", t->label, err);
		return MTSCTL_EUNREACH;
	default:
		mtsctl_err("node %s: relay failed: %s", t->label, err);
		return mtsctl_exit_for(rc);
	}
}

/* Unpacks the remote shim's reply and reports an error it carries. */
static int
remote_reply(const struct shimctl_target *t, const ProtobufCBinaryData *p,
    Mts__Shim__Reply **out)
{
	Mts__Shim__Reply *rep = mts__shim__reply__unpack(NULL, p->len, p->data);
	int code;

	if (rep == NULL) {
		mtsctl_err("node %s: undecodable reply from its shim",
		    t->label);
		return MTSCTL_EFAIL;
	}
	if (rep->error == NULL || rep->error->code == 0) {
		*out = rep;
		return 0;
	}
	code = (int)rep->error->code;
	if (code == MTS_ERR_DENIED)
		mtsctl_err("node %s: its shim refused the relayed request (%s); "
		           "its [shim] acl_relay must name that node's gossipd "
		           "user",
		    t->label, rep->error->message);
	else
		mtsctl_err("node %s: %s", t->label, rep->error->message);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return mtsctl_exit_for(-code);
}

int
shimctl_relay(struct mtsctl *ctx, const struct shimctl_target *t,
    const char *agent, ProtobufCMessage *req, Mts__Gossipd__Reply **grep,
    char *err, size_t errlen)
{
	Mts__Gossipd__Request greq = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__RelayReq rr = MTS__GOSSIPD__RELAY_REQ__INIT;
	uint8_t *buf;
	int rc, saved = ctx->timeout_ms;

	mts_pb_set_version(req);
	buf = xmalloc(protobuf_c_message_get_packed_size(req) + 1);
	rr.payload.len = protobuf_c_message_pack(req, buf);
	rr.payload.data = buf;
	rr.to_node.data = (uint8_t *)t->node;
	rr.to_node.len = sizeof(t->node);
	rr.agent = (char *)agent;
	rr.timeout_ms = RELAY_TIMEOUT_MS;
	if (getrandom(&rr.request_id, sizeof(rr.request_id), 0) !=
	    sizeof(rr.request_id))
		rr.request_id = 0; /* gossipd picks one */
	greq.body_case = MTS__GOSSIPD__REQUEST__BODY_RELAY;
	greq.relay = &rr;
	ctx->timeout_ms = RELAY_TIMEOUT_MS + 2000;
	rc = mtsctl_try_call(ctx, "gossipd", &greq.base,
	    &mts__gossipd__reply__descriptor, (ProtobufCMessage **)grep, err,
	    errlen);
	ctx->timeout_ms = saved;
	free(buf);
	return rc;
}

static int
relay_call(struct mtsctl *ctx, const struct shimctl_target *t,
    Mts__Shim__Request *req, Mts__Shim__Reply **out)
{
	Mts__Gossipd__Reply *grep;
	char err[512];
	int rc;

	if ((rc = shimctl_relay(ctx, t, "shim", &req->base, &grep, err,
	         sizeof(err))) != 0)
		return relay_failed(t, rc, err);
	if (grep->body_case != MTS__GOSSIPD__REPLY__BODY_RELAY)
		rc = relay_failed(t, -MTS_ERR_IO, "unexpected reply");
	else
		rc = remote_reply(t, &grep->relay->payload, out);
	protobuf_c_message_free_unpacked(&grep->base, NULL);
	return rc;
}

int
shimctl_call_at(struct mtsctl *ctx, const struct shimctl_target *t,
    Mts__Shim__Request *req, Mts__Shim__Reply **rep,
    Mts__Shim__Reply__BodyCase want, int min_tmo)
{
	int rc;

	if (!t->remote)
		return shimctl_call(ctx, req, rep, want, min_tmo);
	if ((rc = relay_call(ctx, t, req, rep)) != 0)
		return rc;
	if ((*rep)->body_case != want) {
		mtsctl_err("node %s: its shim sent an unexpected reply",
		    t->label);
		protobuf_c_message_free_unpacked(&(*rep)->base, NULL);
		*rep = NULL;
		return MTSCTL_EFAIL;
	}
	return 0;
}
