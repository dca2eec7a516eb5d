/* msg.c: dispatch of messages from peers — a table from Msg body to handler; membership updates applied first; relay requests served. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

#define RELAY_DONE_TTL 60000
#define RELAY_MAX_TIMEOUT 2000

typedef void (*msg_fn)(struct gossipd *, struct link *, const Mts__Gossip__Msg *,
    mts_time_t now);

static void
on_ping(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	mts_swim_on_ping(g->swim, l->id, m->ping->seq, now, &g->out);
}

static void
on_ack(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	mts_swim_on_ack(g->swim, l->id, m->ack->seq, now, &g->out);
}

static void
on_pingreq(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	if (m->ping_req->target.len != MTS_NODE_ID_LEN) {
		log_warnx("ping-req from %s: target is %zu bytes, not %d",
		    l->raddr, m->ping_req->target.len, MTS_NODE_ID_LEN);
		return;
	}
	mts_swim_on_pingreq(g->swim, l->id, m->ping_req->target.data,
	    m->ping_req->seq, now, &g->out);
}

static void
on_ae_request(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	gd_ae_serve(g, l, m);
}

static void
on_ae_reply(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	gd_ae_reply(g, l->peer, m, now);
}

static void
on_relay_rep(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	gd_relay_reply(g, m->relay_rep);
}

static void
on_bye(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	l->closing = 1;
}

/* --- relay, serving side ---------------------------------------------------- */

static int
valid_agent(const char *a)
{
	size_t i, n = strlen(a);

	if (n == 0 || n > 32)
		return 0;
	for (i = 0; i < n; i++)
		if (!((a[i] >= 'a' && a[i] <= 'z') ||
			(a[i] >= '0' && a[i] <= '9') || a[i] == '-' ||
			a[i] == '_'))
			return 0;
	return 1;
}

static struct relay_done *
done_find(struct gossipd *g, const uint8_t from[MTS_NODE_ID_LEN], uint64_t id,
    mts_time_t now)
{
	size_t i;

	for (i = 0; i < g->ndone;) {
		if (g->done[i].expires <= now) {
			free(g->done[i].payload);
			g->done[i] = g->done[--g->ndone];
			continue;
		}
		if (g->done[i].request_id == id &&
		    memcmp(g->done[i].from, from, MTS_NODE_ID_LEN) == 0)
			return &g->done[i];
		i++;
	}
	return NULL;
}

static void
done_add(struct gossipd *g, const uint8_t from[MTS_NODE_ID_LEN], uint64_t id,
    uint32_t err, const uint8_t *p, size_t len, mts_time_t now)
{
	struct relay_done *d;

	if (g->ndone == GD_MAX_RELAYS) {
		free(g->done[0].payload);
		g->done[0] = g->done[--g->ndone];
	}
	d = &g->done[g->ndone++];
	memcpy(d->from, from, MTS_NODE_ID_LEN);
	d->request_id = id;
	d->error = err;
	d->payload = len ? xmemdup(p, len) : NULL;
	d->len = len;
	d->expires = now + RELAY_DONE_TTL;
}

/* Calls the local agent (bounded by the request's timeout). */
static uint32_t
call_agent(struct gossipd *g, const Mts__Gossip__RelayReq *rq, uint8_t **out,
    size_t *outlen, char *err, size_t errlen)
{
	struct mts_ipc_client *c;
	char path[512];
	int tmo = rq->timeout_ms ? (int)rq->timeout_ms : RELAY_MAX_TIMEOUT;
	int rc;

	if (tmo > RELAY_MAX_TIMEOUT)
		tmo = RELAY_MAX_TIMEOUT;
	if ((rc = mts_ipc_sock_path(path, sizeof(path), g->agent.rundir,
		 rq->agent, NULL)) < 0) {
		snprintf(err, errlen, "no agent named '%s'", rq->agent);
		return (uint32_t)-rc;
	}
	if ((c = mts_ipc_client_open(path, tmo, err, errlen)) == NULL)
		return MTS_ERR_NOTFOUND;
	rc = mts_ipc_client_call_raw(c, rq->payload.data, rq->payload.len, out,
	    outlen);
	mts_ipc_client_close(c);
	if (rc < 0) {
		snprintf(err, errlen, "agent %s: %s", rq->agent,
		    mts_strerror(-rc));
		return (uint32_t)-rc;
	}
	return 0;
}

static void
on_relay_req(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	const Mts__Gossip__RelayReq *rq = m->relay_req;
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RelayRep rep = MTS__GOSSIP__RELAY_REP__INIT;
	struct relay_done *d;
	uint8_t *out = NULL;
	size_t outlen = 0;
	char err[256] = "";

	rep.id = rq->id;
	if ((d = done_find(g, l->id, rq->id, now)) != NULL) {
		rep.error = d->error;
		rep.payload.data = d->payload;
		rep.payload.len = d->len;
	} else if (!valid_agent(rq->agent)) {
		rep.error = MTS_ERR_INVAL;
		snprintf(err, sizeof(err), "relay: bad agent name");
	} else {
		rep.error = call_agent(g, rq, &out, &outlen, err, sizeof(err));
		rep.payload.data = out;
		rep.payload.len = outlen;
		done_add(g, l->id, rq->id, rep.error, out, outlen, now);
	}
	rep.message = err;
	msg.body_case = MTS__GOSSIP__MSG__BODY_RELAY_REP;
	msg.relay_rep = &rep;
	(void)gd_send_on_link(g, l, &msg);
	free(out);
}

/* --- dispatch --------------------------------------------------------------- */

static void
on_join_rep(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	if (l->kind != LINK_JOIN_OUT) {
		log_warnx("join reply on a %s link %s: ignored",
		    l->kind == LINK_JOIN_IN ? "join" : "member", l->raddr);
		return;
	}
	gd_join_reply(g, l, m->join_rep, now);
}

static const struct {
	Mts__Gossip__Msg__BodyCase body;
	const char *name;
	int member_only; /* needs an IK (member) link */
	msg_fn fn;
} routes[] = {
	{MTS__GOSSIP__MSG__BODY_PING, "ping", 1, on_ping},
	{MTS__GOSSIP__MSG__BODY_ACK, "ack", 1, on_ack},
	{MTS__GOSSIP__MSG__BODY_PING_REQ, "ping-req", 1, on_pingreq},
	{MTS__GOSSIP__MSG__BODY_ROOT_REQ, "root", 1, on_ae_request},
	{MTS__GOSSIP__MSG__BODY_PAGE_REQ, "pages", 1, on_ae_request},
	{MTS__GOSSIP__MSG__BODY_RECORDS_REQ, "records", 1, on_ae_request},
	{MTS__GOSSIP__MSG__BODY_ROOT_REP, "root reply", 1, on_ae_reply},
	{MTS__GOSSIP__MSG__BODY_PAGE_REP, "pages reply", 1, on_ae_reply},
	{MTS__GOSSIP__MSG__BODY_RECORDS_REP, "records reply", 1, on_ae_reply},
	{MTS__GOSSIP__MSG__BODY_RELAY_REQ, "relay", 1, on_relay_req},
	{MTS__GOSSIP__MSG__BODY_RELAY_REP, "relay reply", 1, on_relay_rep},
	{MTS__GOSSIP__MSG__BODY_JOIN_REP, "join reply", 0, on_join_rep},
	{MTS__GOSSIP__MSG__BODY_BYE, "bye", 0, on_bye},
};

static void
apply_updates(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	struct mts_swim_update u;
	size_t i;

	for (i = 0; i < m->n_updates; i++) {
		if (gd_member_from_pb(m->updates[i], &u) < 0) {
			log_debug("%s: malformed member update ignored",
			    l->raddr);
			continue;
		}
		/* only admitted members enter the member list */
		if (gd_peer_find(g, u.id) == NULL &&
		    memcmp(u.id, g->id, MTS_NODE_ID_LEN) != 0)
			continue;
		mts_swim_apply(g->swim, &u, now, &g->out);
	}
}

void
gd_handle_msg(struct gossipd *g, struct link *l, const uint8_t *data,
    size_t len, mts_time_t now)
{
	Mts__Gossip__Msg *m = mts__gossip__msg__unpack(NULL, len, data);
	int member = l->kind == LINK_IK_IN || l->kind == LINK_IK_OUT;
	size_t i;

	if (m == NULL) {
		gd_link_close(g, l, "undecodable message");
		return;
	}
	if (m->version != 1) {
		log_warnx("%s: message version %u unsupported", l->raddr,
		    m->version);
		gd_link_close(g, l, "unsupported protocol version");
		goto out;
	}
	if (member) {
		apply_updates(g, l, m, now);
		mts_swim_on_heard(g->swim, l->id, now);
	}
	if (m->body_case == MTS__GOSSIP__MSG__BODY_PUSH) {
		if (!member || l->peer == NULL) {
			gd_link_close(g, l, "member message on a join link");
			goto out;
		}
		gd_on_push(g, l->peer, m); /* keeps m */
		return;
	}
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (routes[i].body != m->body_case)
			continue;
		if (routes[i].member_only && (!member || l->peer == NULL)) {
			gd_link_close(g, l, "member message on a join link");
			goto out;
		}
		routes[i].fn(g, l, m, now);
		goto out;
	}
	if (m->body_case != MTS__GOSSIP__MSG__BODY__NOT_SET)
		log_debug("%s: unknown message type %d ignored", l->raddr,
		    (int)m->body_case);
out:
	mts__gossip__msg__free_unpacked(m, NULL);
}
