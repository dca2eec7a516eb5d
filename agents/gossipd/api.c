/* api.c: gossipd.sock — cluster init/join/token/leave, member list and removal, relay to other nodes, statistics; authorized by the caller's uid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "agents/gossipd/gossipd.h"
#include "acl.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

#define TOKEN_MAX 256

/* Root and gossipd's own user may do everything, the users of
 * [gossipd] acl_relay relay to other nodes, anyone may look. */
static const struct mts_acl_rule acl_rules[] = {
	{ MTS_CALLER_READ | MTS_CALLER_ADMIN | MTS_CALLER_RELAY, MTS_ACL_SELF,
	    NULL },
	{ MTS_CALLER_READ | MTS_CALLER_RELAY, MTS_ACL_USERS, "acl_relay" },
	{ MTS_CALLER_READ, MTS_ACL_ANYONE, NULL },
	{ 0, 0, NULL },
};

static Mts__Gossipd__Request *
body(const ProtobufCMessage *m)
{
	return (Mts__Gossipd__Request *)m;
}

static void
delete_key(struct gossipd *g, const char *key, gd_store_fn fn, void *arg)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__DeleteReq del = MTS__STATESTORE__DELETE_REQ__INIT;

	del.key.data = (uint8_t *)key;
	del.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_DELETE;
	req.delete_ = &del;
	gd_store_send(g, &req, fn, arg);
}

/* --- cluster ------------------------------------------------------------------ */

static void
reply_token(struct mts_ipc_call *call, const char *tok)
{
	Mts__Gossipd__Reply rep = MTS__GOSSIPD__REPLY__INIT;
	Mts__Gossipd__TokenRep tr = MTS__GOSSIPD__TOKEN_REP__INIT;

	tr.token = (char *)tok;
	rep.body_case = MTS__GOSSIPD__REPLY__BODY_TOKEN;
	rep.token = &tr;
	mts_ipc_reply(call, &rep.base);
}

/* An init waiting for the statestore to store its three records. */
struct init_call {
	struct mts_ipc_call *call;
	struct mts_token t; /* cluster id, join secret, our address */
	int left, failed;
};

static void
init_stored(struct gossipd *g, void *arg, int rc,
    const Mts__Statestore__Reply *rep)
{
	struct init_call *ic = arg;
	Mts__Gossipd__Reply r = MTS__GOSSIPD__REPLY__INIT;
	Mts__Gossipd__InitRep ir = MTS__GOSSIPD__INIT_REP__INIT;
	char tok[TOKEN_MAX];

	ic->failed |= rc < 0;
	if (--ic->left > 0)
		return;
	g->init_pending = 0;
	if (ic->failed) {
		mts_ipc_reply_error(ic->call, MTS_ERR_IO,
		    "the statestore refused the cluster records");
	} else if (mts_token_encode(&ic->t, tok, sizeof(tok)) < 0) {
		mts_ipc_reply_error(ic->call, MTS_ERR_IO,
		    "cannot build the token");
	} else {
		memcpy(g->cluster_id, ic->t.cluster_id, MTS_CLUSTER_ID_LEN);
		memcpy(g->join_secret, ic->t.secret, 32);
		g->has_join_secret = 1;
		g->in_cluster = 1;
		log_info("created cluster, advertising %s", ic->t.addr);
		ir.token = tok;
		ir.cluster_id.data = ic->t.cluster_id;
		ir.cluster_id.len = MTS_CLUSTER_ID_LEN;
		r.body_case = MTS__GOSSIPD__REPLY__BODY_INIT;
		r.init = &ir;
		mts_ipc_reply(ic->call, &r.base);
	}
	sodium_memzero(ic, sizeof(*ic));
	free(ic);
}

/* Stores the cluster record, the join secret and our member record, then
 * answers with the token (init_stored). */
static void
store_cluster(struct gossipd *g, struct init_call *ic)
{
	Mts__Gossip__ClusterRecord cr = MTS__GOSSIP__CLUSTER_RECORD__INIT;
	Mts__Gossip__JoinSecret js = MTS__GOSSIP__JOIN_SECRET__INIT;
	Mts__Gossip__MemberRecord mr = MTS__GOSSIP__MEMBER_RECORD__INIT;
	const struct mts_swim_member *me = mts_swim_member_at(g->swim, 0);
	char key[MTS_NODE_HEX_LEN + 3], *addrs[1];

	cr.version = 1;
	cr.cluster_id.data = ic->t.cluster_id;
	cr.cluster_id.len = MTS_CLUSTER_ID_LEN;
	js.version = 1;
	js.secret.data = ic->t.secret;
	js.secret.len = sizeof(ic->t.secret);
	mr.version = 1;
	mr.pubkey.data = g->pub;
	mr.pubkey.len = 32;
	addrs[0] = (char *)me->u.addr;
	mr.addrs = addrs;
	mr.n_addrs = 1;
	mr.admitted_by.data = g->id;
	mr.admitted_by.len = MTS_NODE_ID_LEN;
	mr.joined_at = mts_wall_ms();
	mr.name = (char *)me->u.name;
	snprintf(key, sizeof(key), "m/%s", g->idhex);
	ic->left = 3;
	g->init_pending = 1;
	gd_store_put_send(g, "c/cluster", &cr.base, init_stored, ic);
	gd_store_put_send(g, "c/join", &js.base, init_stored, ic);
	gd_store_put_send(g, key, &mr.base, init_stored, ic);
}

static void
h_init(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct gossipd *g = ctx;
	const Mts__Gossipd__InitReq *rq = body(m)->init;
	struct init_call *ic;

	if (g->in_cluster || g->init_pending) {
		mts_ipc_reply_error(call, MTS_ERR_STATE, "%s",
		    g->in_cluster ? "this node is already in a cluster"
		                  : "an init is already in progress");
		return;
	}
	if (rq->advertise[0] &&
	    (strlen(rq->advertise) >= GD_ADDR_MAX ||
	        strchr(rq->advertise, ':') == NULL)) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "advertise address '%s' is not ADDRESS:PORT",
		    rq->advertise);
		return;
	}
	if (rq->advertise[0])
		mts_swim_set_self(g->swim, rq->advertise, NULL);
	ic = xcalloc(1, sizeof(*ic));
	ic->call = call;
	randombytes_buf(ic->t.cluster_id, sizeof(ic->t.cluster_id));
	randombytes_buf(ic->t.secret, sizeof(ic->t.secret));
	snprintf(ic->t.addr, sizeof(ic->t.addr), "%s",
	    mts_swim_member_at(g->swim, 0)->u.addr);
	store_cluster(g, ic);
}

static void
h_join(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct gossipd *g = ctx;
	const Mts__Gossipd__JoinReq *rq = body(m)->join;
	struct mts_token t;
	char err[128];
	int rc;

	if (g->in_cluster) {
		mts_ipc_reply_error(call, MTS_ERR_STATE,
		    "this node is already in a cluster");
		return;
	}
	if (mts_token_decode(rq->token, &t, err, sizeof(err)) < 0) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL, "%s", err);
		return;
	}
	if (rq->advertise[0] && strlen(rq->advertise) < GD_ADDR_MAX)
		mts_swim_set_self(g->swim, rq->advertise, NULL);
	if ((rc = gd_dial_join(g, &t, call, mts_now())) < 0)
		mts_ipc_reply_error(call, -rc, "cannot connect to %s", t.addr);
	sodium_memzero(&t, sizeof(t));
}

static void
h_token(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct gossipd *g = ctx;
	char tok[TOKEN_MAX];
	int rc;

	rc = gd_token(g, tok, sizeof(tok), body(m)->token->rotate, NULL);
	if (rc == -MTS_ERR_STATE)
		mts_ipc_reply_error(call, MTS_ERR_STATE,
		    "this node is not in a cluster");
	else if (rc < 0)
		mts_ipc_reply_error(call, -rc, "no join secret available");
	else
		reply_token(call, tok);
}

static void
h_leave(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct gossipd *g = ctx;
	Mts__Gossipd__Reply rep = MTS__GOSSIPD__REPLY__INIT;
	Mts__Gossipd__LeaveRep lr = MTS__GOSSIPD__LEAVE_REP__INIT;
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__Bye bye = MTS__GOSSIP__BYE__INIT;
	char key[MTS_NODE_HEX_LEN + 3];
	mts_time_t now = mts_now();
	struct peer *p;

	if (!g->in_cluster) {
		mts_ipc_reply_error(call, MTS_ERR_STATE,
		    "this node is not in a cluster");
		return;
	}
	mts_swim_leave(g->swim, now, &g->out);
	snprintf(key, sizeof(key), "m/%s", g->idhex);
	delete_key(g, key, NULL, NULL);
	/* tell every member directly, then stop talking */
	msg.body_case = MTS__GOSSIP__MSG__BODY_BYE;
	msg.bye = &bye;
	for (p = g->peers; p; p = p->next)
		if (!p->removed && p->link && !p->link->dead)
			(void)gd_send_on_link(g, p->link, &msg);
	g->in_cluster = 0;
	log_info("left the cluster");
	rep.body_case = MTS__GOSSIPD__REPLY__BODY_LEAVE;
	rep.leave = &lr;
	mts_ipc_reply(call, &rep.base);
}

/* --- members ------------------------------------------------------------------- */

static void
h_members(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct gossipd *g = ctx;
	Mts__Gossipd__Reply rep = MTS__GOSSIPD__REPLY__INIT;
	Mts__Gossipd__MembersRep mr = MTS__GOSSIPD__MEMBERS_REP__INIT;
	size_t n = mts_swim_count(g->swim), i;
	Mts__Gossipd__NodeInfo *ni = xcalloc(n + 1, sizeof(*ni));
	Mts__Gossipd__NodeInfo **np = xcalloc(n + 1, sizeof(*np));
	mts_time_t now = mts_now();

	for (i = 0; i < n; i++) {
		const struct mts_swim_member *sm =
		    mts_swim_member_at(g->swim, i);

		mts__gossipd__node_info__init(&ni[i]);
		ni[i].node.data = (uint8_t *)sm->u.id;
		ni[i].node.len = MTS_NODE_ID_LEN;
		ni[i].name = (char *)sm->u.name;
		ni[i].addr = (char *)sm->u.addr;
		ni[i].state = sm->is_self && g->removed
		    ? "removed"
		    : (char *)mts_swim_state_name(sm->u.state);
		ni[i].incarnation = sm->u.inc;
		ni[i].last_seen_ms =
		    sm->is_self ? 0 : (uint64_t)(now - sm->last_seen);
		ni[i].self = sm->is_self;
		np[i] = &ni[i];
	}
	mr.nodes = np;
	mr.n_nodes = n;
	mr.self.data = g->id;
	mr.self.len = MTS_NODE_ID_LEN;
	mr.cluster_id.data = g->cluster_id;
	mr.cluster_id.len = g->in_cluster ? MTS_CLUSTER_ID_LEN : 0;
	rep.body_case = MTS__GOSSIPD__REPLY__BODY_MEMBERS;
	rep.members = &mr;
	mts_ipc_reply(call, &rep.base);
	free(ni);
	free(np);
}

/* Resolves 32 hex digits, a unique hex prefix, or a unique name. */
static int
resolve(struct gossipd *g, const char *s, uint8_t id[MTS_NODE_ID_LEN])
{
	size_t i, n = mts_swim_count(g->swim), hits = 0, len = strlen(s);
	char hex[MTS_NODE_HEX_LEN + 1];
	struct peer *p;

	if (len == MTS_NODE_HEX_LEN &&
	    mts_unhex(id, MTS_NODE_ID_LEN, s, len) == 0)
		return 0;
	for (i = 0; i < n; i++) {
		const struct mts_swim_member *sm =
		    mts_swim_member_at(g->swim, i);

		mts_hex(hex, sm->u.id, MTS_NODE_ID_LEN);
		if ((len > 0 && strncmp(hex, s, len) == 0) ||
		    strcmp(sm->u.name, s) == 0) {
			memcpy(id, sm->u.id, MTS_NODE_ID_LEN);
			hits++;
		}
	}
	for (p = g->peers; hits == 0 && p; p = p->next) {
		mts_hex(hex, p->id, MTS_NODE_ID_LEN);
		if (len > 0 && strncmp(hex, s, len) == 0) {
			memcpy(id, p->id, MTS_NODE_ID_LEN);
			hits++;
		}
	}
	return hits == 1 ? 0
	    : hits == 0  ? -MTS_ERR_NOTFOUND
	                 : -MTS_ERR_CONFLICT;
}

/* A remove waiting for the statestore's delete. */
struct remove_call {
	struct mts_ipc_call *call;
	uint8_t id[MTS_NODE_ID_LEN];
};

static void
removed(struct gossipd *g, void *arg, int rc, const Mts__Statestore__Reply *r)
{
	struct remove_call *rm = arg;
	Mts__Gossipd__Reply rep = MTS__GOSSIPD__REPLY__INIT;
	Mts__Gossipd__RemoveRep rr = MTS__GOSSIPD__REMOVE_REP__INIT;

	if (rc < 0) {
		mts_ipc_reply_error(rm->call, -rc,
		    "statestore refused the delete");
	} else {
		rr.node.data = rm->id;
		rr.node.len = MTS_NODE_ID_LEN;
		rep.body_case = MTS__GOSSIPD__REPLY__BODY_REMOVE;
		rep.remove = &rr;
		mts_ipc_reply(rm->call, &rep.base);
	}
	free(rm);
}

static void
h_remove(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct gossipd *g = ctx;
	const char *who = body(m)->remove->node;
	struct remove_call *rm;
	char key[MTS_NODE_HEX_LEN + 3];
	uint8_t id[MTS_NODE_ID_LEN];
	int rc;

	if ((rc = resolve(g, who, id)) < 0) {
		mts_ipc_reply_error(call, -rc, "%s node '%s'",
		    rc == -MTS_ERR_CONFLICT ? "ambiguous" : "no such", who);
		return;
	}
	if (memcmp(id, g->id, MTS_NODE_ID_LEN) == 0) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "cannot remove this node: use cluster leave");
		return;
	}
	memcpy(key, "m/", 2);
	mts_hex(key + 2, id, MTS_NODE_ID_LEN);
	rm = xcalloc(1, sizeof(*rm));
	rm->call = call;
	memcpy(rm->id, id, MTS_NODE_ID_LEN);
	delete_key(g, key, removed, rm);
}

/* --- relay ---------------------------------------------------------------------- */

static void
h_relay(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct gossipd *g = ctx;
	const Mts__Gossipd__RelayReq *rq = body(m)->relay;
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RelayReq wr = MTS__GOSSIP__RELAY_REQ__INIT;
	struct relay_pending *rp;
	struct peer *p;
	mts_time_t now = mts_now();
	uint32_t tmo = rq->timeout_ms ? rq->timeout_ms : 5000;

	if (rq->to_node.len != MTS_NODE_ID_LEN ||
	    (p = gd_peer_find(g, rq->to_node.data)) == NULL || p->removed) {
		mts_ipc_reply_error(call, MTS_ERR_NOTFOUND,
		    "relay: no such member");
		return;
	}
	if (g->nrelays == GD_MAX_RELAYS) {
		mts_ipc_reply_error(call, MTS_ERR_TOOBIG,
		    "relay: too many requests in flight");
		return;
	}
	wr.id = rq->request_id ? rq->request_id : ++g->next_id;
	wr.agent = rq->agent;
	wr.payload = rq->payload;
	wr.timeout_ms = tmo;
	msg.body_case = MTS__GOSSIP__MSG__BODY_RELAY_REQ;
	msg.relay_req = &wr;
	if (gd_send(g, p, &msg, now) < 0) {
		mts_ipc_reply_error(call, MTS_ERR_IO,
		    "relay: peer unreachable");
		return;
	}
	rp = &g->relays[g->nrelays++];
	rp->id = wr.id;
	rp->request_id = rq->request_id;
	rp->call = call;
	rp->deadline = now + tmo;
}

void
gd_relay_reply(struct gossipd *g, const Mts__Gossip__RelayRep *rr)
{
	Mts__Gossipd__Reply rep = MTS__GOSSIPD__REPLY__INIT;
	Mts__Gossipd__RelayRep ok = MTS__GOSSIPD__RELAY_REP__INIT;
	size_t i;

	for (i = 0; i < g->nrelays; i++) {
		if (g->relays[i].id != rr->id)
			continue;
		if (rr->error) {
			mts_ipc_reply_error(g->relays[i].call,
			    (int)(rr->error <= MTS_ERR_STATE ? rr->error
			                                     : MTS_ERR_IO),
			    "remote: %s", rr->message);
		} else {
			ok.payload = rr->payload;
			rep.body_case = MTS__GOSSIPD__REPLY__BODY_RELAY;
			rep.relay = &ok;
			mts_ipc_reply(g->relays[i].call, &rep.base);
		}
		g->relays[i] = g->relays[--g->nrelays];
		return;
	}
}

void
gd_relay_tick(struct gossipd *g, mts_time_t now)
{
	size_t i;

	for (i = 0; i < g->nrelays;) {
		if (g->relays[i].deadline <= now) {
			mts_ipc_reply_error(g->relays[i].call, MTS_ERR_TIMEOUT,
			    "relay: no reply before the deadline");
			g->relays[i] = g->relays[--g->nrelays];
		} else {
			i++;
		}
	}
}

/* --- statistics ------------------------------------------------------------------ */

static void
h_stats(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct gossipd *g = ctx;
	Mts__Gossipd__Reply rep = MTS__GOSSIPD__REPLY__INIT;
	Mts__Gossipd__StatsRep sr = MTS__GOSSIPD__STATS_REP__INIT;
	struct link *l;

	sr.rx_bytes = g->stats.rx_bytes;
	sr.tx_bytes = g->stats.tx_bytes;
	sr.ae_rounds = g->stats.ae_rounds;
	sr.ae_done = g->stats.ae_done;
	sr.ae_records = g->stats.ae_records;
	sr.ae_bytes = g->stats.ae_bytes;
	sr.push_sent = g->stats.push_sent;
	sr.push_recv = g->stats.push_recv;
	for (l = g->links; l; l = l->next)
		if (!l->dead)
			sr.conns++;
	rep.body_case = MTS__GOSSIPD__REPLY__BODY_STATS;
	rep.stats = &sr;
	mts_ipc_reply(call, &rep.base);
}

static const struct mts_ipc_route routes[] = {
	{ MTS__GOSSIPD__REQUEST__BODY_INIT, "init", MTS_CALLER_ADMIN, h_init },
	{ MTS__GOSSIPD__REQUEST__BODY_JOIN, "join", MTS_CALLER_ADMIN, h_join },
	{ MTS__GOSSIPD__REQUEST__BODY_TOKEN, "token", MTS_CALLER_ADMIN,
	    h_token },
	{ MTS__GOSSIPD__REQUEST__BODY_LEAVE, "leave", MTS_CALLER_ADMIN,
	    h_leave },
	{ MTS__GOSSIPD__REQUEST__BODY_MEMBERS, "members", MTS_CALLER_READ,
	    h_members },
	{ MTS__GOSSIPD__REQUEST__BODY_REMOVE, "remove", MTS_CALLER_ADMIN,
	    h_remove },
	{ MTS__GOSSIPD__REQUEST__BODY_RELAY, "relay", MTS_CALLER_RELAY,
	    h_relay },
	{ MTS__GOSSIPD__REQUEST__BODY_STATS, "stats", MTS_CALLER_READ,
	    h_stats },
};

static const struct mts_ipc_service service = {
	.name = "gossipd",
	.request = &mts__gossipd__request__descriptor,
	.reply = &mts__gossipd__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.acl = acl_rules,
};

int
gd_api_open(struct gossipd *g)
{
	char path[512], err[256];

	if (mts_acl_table_load(&g->acl, acl_rules, g->agent.cfg, "gossipd", err,
	        sizeof(err)) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	if (mts_ipc_sock_path(path, sizeof(path), g->agent.rundir, "gossipd",
	        NULL) < 0)
		return -1;
	if ((g->api = mts_ipc_server_open(path, &service, g, err,
	         sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	mts_ipc_server_set_acl(g->api, &g->acl);
	if (mts_ipc_sock_path(path, sizeof(path), g->agent.rundir, "gossipd",
	        "gossipd.pub") < 0)
		return -1;
	if ((g->pub_feed = mts_pub_open(path, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	return 0;
}
