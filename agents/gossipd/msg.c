/* msg.c: dispatch of messages from peers — a table from Msg body to handler; membership updates applied first; relay requests handed to relay.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

typedef void (*msg_fn)(struct gossipd *, struct link *,
    const Mts__Gossip__Msg *, mts_time_t now);

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

static void
on_relay_req(struct gossipd *g, struct link *l, const Mts__Gossip__Msg *m,
    mts_time_t now)
{
	gd_relay_serve(g, l->id, m->relay_req, now);
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
	{ MTS__GOSSIP__MSG__BODY_PING, "ping", 1, on_ping },
	{ MTS__GOSSIP__MSG__BODY_ACK, "ack", 1, on_ack },
	{ MTS__GOSSIP__MSG__BODY_PING_REQ, "ping-req", 1, on_pingreq },
	{ MTS__GOSSIP__MSG__BODY_ROOT_REQ, "root", 1, on_ae_request },
	{ MTS__GOSSIP__MSG__BODY_PAGE_REQ, "pages", 1, on_ae_request },
	{ MTS__GOSSIP__MSG__BODY_RECORDS_REQ, "records", 1, on_ae_request },
	{ MTS__GOSSIP__MSG__BODY_ROOT_REP, "root reply", 1, on_ae_reply },
	{ MTS__GOSSIP__MSG__BODY_PAGE_REP, "pages reply", 1, on_ae_reply },
	{ MTS__GOSSIP__MSG__BODY_RECORDS_REP, "records reply", 1, on_ae_reply },
	{ MTS__GOSSIP__MSG__BODY_RELAY_REQ, "relay", 1, on_relay_req },
	{ MTS__GOSSIP__MSG__BODY_RELAY_REP, "relay reply", 1, on_relay_rep },
	{ MTS__GOSSIP__MSG__BODY_JOIN_REP, "join reply", 0, on_join_rep },
	{ MTS__GOSSIP__MSG__BODY_BYE, "bye", 0, on_bye },
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
		/* only admitted members enter the member list; SWIM refuses
		 * removed ones (mts_swim_remove), whose peer entries stay
		 * for their tombstones */
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
		mts_swim_on_heard(g->swim, l->id, now, &g->out);
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
