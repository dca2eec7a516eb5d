/* cluster.c: cluster identity and admission — m/<node> member records, static-key checks, join (bootstrap and joiner sides), tokens, member events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

/* --- member records ------------------------------------------------------------ */

static int
key_node(const char *key, uint8_t id[MTS_NODE_ID_LEN])
{
	if (strncmp(key, "m/", 2) != 0 || strlen(key + 2) != MTS_NODE_HEX_LEN)
		return -MTS_ERR_INVAL;
	return mts_unhex(id, MTS_NODE_ID_LEN, key + 2, MTS_NODE_HEX_LEN);
}

void
gd_publish(struct gossipd *g, const struct mts_swim_update *u,
    const char *state)
{
	Mts__Gossipd__Event ev = MTS__GOSSIPD__EVENT__INIT;

	if (g->pub_feed == NULL)
		return;
	ev.node.data = (uint8_t *)u->id;
	ev.node.len = MTS_NODE_ID_LEN;
	ev.name = (char *)u->name;
	ev.addr = (char *)u->addr;
	ev.state = (char *)state;
	ev.incarnation = u->inc;
	(void)mts_pub_send(g->pub_feed, state, strlen(state), &ev.base);
}

/* Our own m/<node> is a tombstone (node rm, or cluster leave): the members
 * refuse this identity for good, so stop talking to them, once. */
static void
self_removed(struct gossipd *g)
{
	const struct mts_swim_member *m;
	uint8_t id[MTS_NODE_ID_LEN];
	struct link *l;
	struct peer *p;
	size_t i;

	if (g->removed)
		return;
	g->removed = 1;
	g->in_cluster = 0;
	log_warnx("this node was removed from the cluster (m/%s is a "
	          "tombstone): it no longer talks to the members; to come back, "
	          "wipe its state directory and join with a fresh identity",
	    g->idhex);
	mts_agent_status(&g->agent,
	    "removed from the cluster: not talking to "
	    "its members (rejoin with a fresh identity)");
	for (l = g->links; l; l = l->next)
		gd_link_close(g, l, NULL);
	for (p = g->peers; p; p = p->next)
		mts_buf_reset(&p->q);
	for (i = mts_swim_count(g->swim); i-- > 0;) {
		m = mts_swim_member_at(g->swim, i);
		if (m->is_self)
			continue;
		memcpy(id, m->u.id, MTS_NODE_ID_LEN);
		mts_swim_remove(g->swim, id);
	}
}

/* Keeps a removed member's tombstone to hand it over (gd_tell_removed). */
static void
keep_tombstone(struct peer *p, const Mts__Record *rec)
{
	free(p->tomb);
	p->tomb_len = mts__record__get_packed_size(rec);
	p->tomb = xmalloc(p->tomb_len + 1);
	mts__record__pack(rec, p->tomb);
}

static void
member_removed(struct gossipd *g, const uint8_t id[MTS_NODE_ID_LEN],
    const Mts__Record *rec, mts_time_t now)
{
	struct peer *p;
	struct mts_swim_update u;
	const struct mts_swim_member *m = mts_swim_find(g->swim, id);
	char hex[MTS_NODE_HEX_LEN + 1];

	if (memcmp(id, g->id, MTS_NODE_ID_LEN) == 0) {
		self_removed(g);
		return;
	}
	p = gd_peer_get(g, id);
	keep_tombstone(p, rec);
	if (p->removed)
		return;
	p->removed = 1;
	mts_hex(hex, id, MTS_NODE_ID_LEN);
	log_info("node %s removed from the cluster", hex);
	memset(&u, 0, sizeof(u));
	if (m)
		mts_swim_member_update(m, &u);
	memcpy(u.id, id, MTS_NODE_ID_LEN);
	gd_publish(g, &u, "removed");
	mts_swim_remove(g->swim, id);
	gd_drop_peer_links(g, p, "member removed");
}

/* Applies one m/<node> record (live or tombstone) to the peer table. */
static void
member_record(struct gossipd *g, const char *key, const Mts__Record *rec,
    mts_time_t now)
{
	Mts__Gossip__MemberRecord *mr;
	struct mts_swim_update u;
	uint8_t id[MTS_NODE_ID_LEN], chk[MTS_NODE_ID_LEN];
	struct peer *p;

	if (key_node(key, id) < 0)
		return;
	if (rec->tombstone) {
		member_removed(g, id, rec, now);
		return;
	}
	mr = mts__gossip__member_record__unpack(NULL, rec->value.len,
	    rec->value.data);
	if (mr == NULL || mr->pubkey.len != 32) {
		log_warnx("%s: malformed member record ignored", key);
		goto out;
	}
	mts_node_id(chk, mr->pubkey.data);
	if (memcmp(chk, id, MTS_NODE_ID_LEN) != 0) {
		log_warnx("%s: public key does not match the node id", key);
		goto out;
	}
	if (memcmp(id, g->id, MTS_NODE_ID_LEN) == 0)
		goto out;
	p = gd_peer_get(g, id);
	memcpy(p->pub, mr->pubkey.data, 32);
	p->has_pub = 1;
	p->removed = 0;
	if (mr->n_addrs > 0 && p->addr[0] == '\0')
		snprintf(p->addr, sizeof(p->addr), "%s", mr->addrs[0]);
	snprintf(p->name, sizeof(p->name), "%s", mr->name);
	memset(&u, 0, sizeof(u));
	memcpy(u.id, id, MTS_NODE_ID_LEN);
	snprintf(u.addr, sizeof(u.addr), "%s", p->addr);
	snprintf(u.name, sizeof(u.name), "%s", mr->name);
	mts_swim_learn(g->swim, &u, now, &g->out);
out:
	if (mr)
		mts__gossip__member_record__free_unpacked(mr, NULL);
}

static void
cluster_record(struct gossipd *g, const Mts__Record *rec)
{
	Mts__Gossip__ClusterRecord *cr;

	if (rec->tombstone || g->removed)
		return;
	cr = mts__gossip__cluster_record__unpack(NULL, rec->value.len,
	    rec->value.data);
	if (cr && cr->cluster_id.len == MTS_CLUSTER_ID_LEN) {
		memcpy(g->cluster_id, cr->cluster_id.data, MTS_CLUSTER_ID_LEN);
		g->in_cluster = 1;
	}
	if (cr)
		mts__gossip__cluster_record__free_unpacked(cr, NULL);
}

/* c/join: the join secret, kept in memory so that a join attempt (which
 * anyone who can reach the port makes) never waits on the statestore. */
static void
join_record(struct gossipd *g, const Mts__Record *rec)
{
	Mts__Gossip__JoinSecret *js = NULL;

	if (rec && !rec->tombstone)
		js = mts__gossip__join_secret__unpack(NULL, rec->value.len,
		    rec->value.data);
	g->has_join_secret = js && js->secret.len == 32;
	if (g->has_join_secret)
		memcpy(g->join_secret, js->secret.data, 32);
	else
		sodium_memzero(g->join_secret, sizeof(g->join_secret));
	if (js) {
		sodium_memzero(js->secret.data, js->secret.len);
		mts__gossip__join_secret__free_unpacked(js, NULL);
	}
}

void
gd_member_record_changed(struct gossipd *g, const char *key,
    const Mts__Record *rec, mts_time_t now)
{
	if (strcmp(key, "c/join") == 0) {
		join_record(g, rec);
		return;
	}
	if (strncmp(key, "m/", 2) == 0)
		member_record(g, key, rec, now);
	else if (strcmp(key, "c/cluster") == 0)
		cluster_record(g, rec);
}

/* Reads c/cluster and every m/ record. */
int
gd_load_cluster(struct gossipd *g, mts_time_t now)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sc = MTS__STATESTORE__SCAN_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	char key[MTS_NODE_HEX_LEN + 8];
	ProtobufCBinaryData after = { 0, NULL };
	uint8_t *last = NULL;
	size_t i;
	int rc, more = 1;

	if (gd_store_get(g, "c/cluster", &rep) == 0) {
		cluster_record(g, rep->get->record);
		mts__statestore__reply__free_unpacked(rep, NULL);
	}
	if (gd_store_get(g, "c/join", &rep) == 0) {
		join_record(g, rep->get->record);
		mts__statestore__reply__free_unpacked(rep, NULL);
	}
	sc.prefix.data = (uint8_t *)"m/";
	sc.prefix.len = 2;
	sc.include_tombstones = 1;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
	req.scan = &sc;
	while (more) {
		sc.start_after = after;
		if ((rc = gd_store_call(g, &req, &rep)) < 0) {
			free(last);
			return rc;
		}
		more = rep->scan && rep->scan->more && rep->scan->n_items > 0;
		for (i = 0; rep->scan && i < rep->scan->n_items; i++) {
			const Mts__KeyRecord *kr = rep->scan->items[i];

			if (kr->key.len >= sizeof(key) || kr->record == NULL)
				continue;
			memcpy(key, kr->key.data, kr->key.len);
			key[kr->key.len] = '\0';
			member_record(g, key, kr->record, now);
			free(last);
			last = xmemdup(kr->key.data, kr->key.len);
			after.data = last;
			after.len = kr->key.len;
		}
		mts__statestore__reply__free_unpacked(rep, NULL);
	}
	free(last);
	return 0;
}

/* --- static key checks ---------------------------------------------------------- */

/* Why a member handshake with this key is refused, or NULL. */
static const char *
member_refusal(struct gossipd *g, const uint8_t id[MTS_NODE_ID_LEN],
    const uint8_t pub[32])
{
	struct peer *p = gd_peer_find(g, id);

	if (!g->in_cluster)
		return "this node is not in a cluster";
	if (p == NULL || !p->has_pub)
		return "not an admitted member";
	if (p->removed)
		return "removed from the cluster";
	if (memcmp(p->pub, pub, 32) != 0)
		return "static key differs from its member record";
	return NULL;
}

/* ctx is the link (IK, either direction). */
int
gd_verify_member(void *ctx, const uint8_t pub[32])
{
	struct link *l = ctx;
	uint8_t id[MTS_NODE_ID_LEN];
	char hex[MTS_NODE_HEX_LEN + 1];
	const char *why;
	struct peer *p;

	mts_node_id(id, pub);
	if ((why = member_refusal(l->g, id, pub)) == NULL)
		return 0;
	mts_hex(hex, id, MTS_NODE_ID_LEN);
	p = gd_peer_find(l->g, id);
	if (l->kind == LINK_IK_IN && p && p->removed && p->tomb &&
	    memcmp(p->pub, pub, 32) == 0) {
		/* finish the handshake only to tell it (gd_tell_removed) */
		gd_peer_log(l->g, MTS_LOG_WARN, l->raddr, why,
		    "refusing node %s: %s (%s); handing it its tombstone", hex,
		    why, l->raddr);
		l->tell_removed = 1;
		return 0;
	}
	gd_peer_log(l->g, MTS_LOG_WARN, l->raddr, why,
	    "refusing node %s: %s (%s)", hex, why, l->raddr);
	return -MTS_ERR_DENIED;
}

/* Join handshakes: the PSK (the join secret) is what authorizes. */
int
gd_verify_any(void *ctx, const uint8_t pub[32])
{
	return 0;
}

int
gd_join_secret(struct gossipd *g, uint8_t secret[32])
{
	if (!g->has_join_secret)
		return -MTS_ERR_NOTFOUND;
	memcpy(secret, g->join_secret, 32);
	return 0;
}

int
gd_token(struct gossipd *g, char *out, size_t outlen, int rotate,
    const char *advertise)
{
	Mts__Gossip__JoinSecret js = MTS__GOSSIP__JOIN_SECRET__INIT;
	struct mts_token t;
	const struct mts_swim_member *me = mts_swim_member_at(g->swim, 0);
	int rc;

	if (!g->in_cluster)
		return -MTS_ERR_STATE;
	memset(&t, 0, sizeof(t));
	if (rotate) {
		randombytes_buf(t.secret, sizeof(t.secret));
		js.version = 1;
		js.secret.data = t.secret;
		js.secret.len = sizeof(t.secret);
		if ((rc = gd_store_put(g, "c/join", &js.base)) < 0)
			return rc;
		memcpy(g->join_secret, t.secret, 32);
		g->has_join_secret = 1;
	}
	if ((rc = gd_join_secret(g, t.secret)) < 0)
		return rc;
	memcpy(t.cluster_id, g->cluster_id, MTS_CLUSTER_ID_LEN);
	snprintf(t.addr, sizeof(t.addr), "%s",
	    advertise && *advertise ? advertise : me->u.addr);
	rc = mts_token_encode(&t, out, outlen);
	sodium_memzero(&t, sizeof(t));
	return rc;
}

/* --- join: bootstrap side ---------------------------------------------------------- */

static void
send_join_rep(struct gossipd *g, struct link *l, const char *error)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__JoinRep jr = MTS__GOSSIP__JOIN_REP__INIT;
	Mts__Gossip__MemberInfo *mi = NULL, **mp = NULL;
	const struct mts_swim_member *me = mts_swim_member_at(g->swim, 0);
	struct peer *p;
	size_t n = 0, cap = 1;

	for (p = g->peers; p; p = p->next)
		cap++;
	if (error == NULL) {
		mi = xcalloc(cap, sizeof(*mi));
		mp = xcalloc(cap, sizeof(*mp));
		mts__gossip__member_info__init(&mi[n]);
		mi[n].node.data = g->id;
		mi[n].node.len = MTS_NODE_ID_LEN;
		mi[n].pubkey.data = g->pub;
		mi[n].pubkey.len = 32;
		mi[n].addr = (char *)me->u.addr;
		mi[n].name = (char *)me->u.name;
		mp[n] = &mi[n];
		n++;
		for (p = g->peers; p; p = p->next) {
			if (p->removed || !p->has_pub)
				continue;
			mts__gossip__member_info__init(&mi[n]);
			mi[n].node.data = p->id;
			mi[n].node.len = MTS_NODE_ID_LEN;
			mi[n].pubkey.data = p->pub;
			mi[n].pubkey.len = 32;
			mi[n].addr = p->addr;
			mi[n].name = p->name;
			mp[n] = &mi[n];
			n++;
		}
		jr.cluster_id.data = g->cluster_id;
		jr.cluster_id.len = MTS_CLUSTER_ID_LEN;
	}
	jr.members = mp;
	jr.n_members = n;
	jr.error = (char *)(error ? error : "");
	msg.body_case = MTS__GOSSIP__MSG__BODY_JOIN_REP;
	msg.join_rep = &jr;
	(void)gd_send_on_link(g, l, &msg);
	l->closing = 1;
	free(mi);
	free(mp);
}

/* Stores the new member's record; fn gets the outcome. */
static void
write_member(struct gossipd *g, const uint8_t id[MTS_NODE_ID_LEN],
    const uint8_t pub[32], const char *addr, const char *name, gd_store_fn fn,
    void *arg)
{
	Mts__Gossip__MemberRecord mr = MTS__GOSSIP__MEMBER_RECORD__INIT;
	char key[MTS_NODE_HEX_LEN + 3], *addrs[1];

	mr.version = 1;
	mr.pubkey.data = (uint8_t *)pub;
	mr.pubkey.len = 32;
	addrs[0] = (char *)addr;
	mr.addrs = addrs;
	mr.n_addrs = addr && *addr ? 1 : 0;
	mr.admitted_by.data = g->id;
	mr.admitted_by.len = MTS_NODE_ID_LEN;
	mr.joined_at = mts_wall_ms();
	mr.name = (char *)name;
	memcpy(key, "m/", 2);
	mts_hex(key + 2, id, MTS_NODE_ID_LEN);
	gd_store_put_send(g, key, &mr.base, fn, arg);
}

/* An admission waiting for the new member's record to be stored. */
struct admit_call {
	uint8_t pub[32];
	struct mts_swim_update u;
};

/* The joiner's link, if it is still open (it may close while we wait). */
static struct link *
join_link(struct gossipd *g, const uint8_t id[MTS_NODE_ID_LEN])
{
	struct link *l;

	for (l = g->links; l; l = l->next)
		if (!l->dead && l->kind == LINK_JOIN_IN &&
		    memcmp(l->id, id, MTS_NODE_ID_LEN) == 0)
			return l;
	return NULL;
}

static void
admit_stored(struct gossipd *g, void *arg, int rc,
    const Mts__Statestore__Reply *rep)
{
	struct admit_call *ac = arg;
	struct link *l = join_link(g, ac->u.id);
	char hex[MTS_NODE_HEX_LEN + 1];
	struct peer *p;

	if (rc < 0) {
		if (l)
			send_join_rep(g, l,
			    "the bootstrap node could not "
			    "record the new member");
		free(ac);
		return;
	}
	mts_hex(hex, ac->u.id, MTS_NODE_ID_LEN);
	p = gd_peer_get(g, ac->u.id);
	memcpy(p->pub, ac->pub, 32);
	p->has_pub = 1;
	snprintf(p->addr, sizeof(p->addr), "%s", ac->u.addr);
	snprintf(p->name, sizeof(p->name), "%s", ac->u.name);
	mts_swim_apply(g->swim, &ac->u, mts_loop_now(g->loop), &g->out);
	log_info("admitted node %s (%s, %s)", hex, ac->u.name, ac->u.addr);
	if (l)
		send_join_rep(g, l, NULL);
	free(ac);
}

void
gd_tell_removed(struct gossipd *g, struct link *l)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__Push push = MTS__GOSSIP__PUSH__INIT;
	Mts__KeyRecord kr = MTS__KEY_RECORD__INIT, *krp = &kr;
	struct peer *p = gd_peer_find(g, l->id);
	char key[MTS_NODE_HEX_LEN + 3];

	l->closing = 1;
	if (p == NULL || p->tomb == NULL ||
	    (kr.record = mts__record__unpack(NULL, p->tomb_len, p->tomb)) ==
	        NULL) {
		gd_link_close(g, l, "removed from the cluster");
		return;
	}
	key[0] = 'm';
	key[1] = '/';
	mts_hex(key + 2, l->id, MTS_NODE_ID_LEN);
	kr.key.data = (uint8_t *)key;
	kr.key.len = 2 + MTS_NODE_HEX_LEN;
	push.n_records = 1;
	push.records = &krp;
	msg.body_case = MTS__GOSSIP__MSG__BODY_PUSH;
	msg.push = &push;
	if (gd_send_on_link(g, l, &msg) < 0)
		gd_link_close(g, l, "removed from the cluster");
	mts__record__free_unpacked(kr.record, NULL);
}

void
gd_admit(struct gossipd *g, struct link *l, mts_time_t now)
{
	Mts__Gossip__JoinHello *jh;
	struct mts_swim_update u;
	const uint8_t *data, *rs = mts_conn_remote_static(l->conn);
	struct admit_call *ac;
	struct peer *p;
	size_t len;
	char hex[MTS_NODE_HEX_LEN + 1];

	data = mts_conn_peer_hello(l->conn, &len);
	jh = data ? mts__gossip__join_hello__unpack(NULL, len, data) : NULL;
	mts_hex(hex, l->id, MTS_NODE_ID_LEN);
	if (jh == NULL || gd_member_from_pb(jh->self, &u) < 0 ||
	    memcmp(u.id, l->id, MTS_NODE_ID_LEN) != 0) {
		gd_peer_log(g, MTS_LOG_WARN, l->raddr, "malformed join hello",
		    "join from %s: malformed hello", l->raddr);
		send_join_rep(g, l, "malformed join hello");
		goto out;
	}
	p = gd_peer_find(g, l->id);
	if (p && p->removed) {
		gd_peer_log(g, MTS_LOG_WARN, l->raddr, "removed node joins",
		    "join from %s refused: node %s was removed", l->raddr, hex);
		send_join_rep(g, l,
		    "this node was removed from the cluster; "
		    "join with a fresh identity");
		goto out;
	}
	/* the join reply goes out once the member record is stored */
	ac = xcalloc(1, sizeof(*ac));
	memcpy(ac->pub, rs, 32);
	ac->u = u;
	write_member(g, l->id, rs, u.addr, u.name, admit_stored, ac);
out:
	if (jh)
		mts__gossip__join_hello__free_unpacked(jh, NULL);
}

/* --- join: joiner side ---------------------------------------------------------------- */

static void
learn_member(struct gossipd *g, const Mts__Gossip__MemberInfo *mi,
    mts_time_t now)
{
	struct mts_swim_update u;
	uint8_t chk[MTS_NODE_ID_LEN];
	struct peer *p;

	if (mi->node.len != MTS_NODE_ID_LEN || mi->pubkey.len != 32 ||
	    strlen(mi->addr) >= GD_ADDR_MAX ||
	    strlen(mi->name) >= MTS_SWIM_NAME_MAX)
		return;
	mts_node_id(chk, mi->pubkey.data);
	if (memcmp(chk, mi->node.data, MTS_NODE_ID_LEN) != 0 ||
	    memcmp(chk, g->id, MTS_NODE_ID_LEN) == 0)
		return;
	/* a tombstone of ours stands until a newer live m/ record comes
	 * (member_record); mts_swim_learn would take the member back */
	if ((p = gd_peer_find(g, chk)) != NULL && p->removed)
		return;
	p = gd_peer_get(g, chk);
	memcpy(p->pub, mi->pubkey.data, 32);
	p->has_pub = 1;
	snprintf(p->addr, sizeof(p->addr), "%s", mi->addr);
	snprintf(p->name, sizeof(p->name), "%s", mi->name);
	memset(&u, 0, sizeof(u));
	memcpy(u.id, chk, MTS_NODE_ID_LEN);
	snprintf(u.addr, sizeof(u.addr), "%s", mi->addr);
	snprintf(u.name, sizeof(u.name), "%s", mi->name);
	mts_swim_learn(g->swim, &u, now, &g->out);
}

void
gd_join_reply(struct gossipd *g, struct link *l, const Mts__Gossip__JoinRep *jr,
    mts_time_t now)
{
	Mts__Gossipd__Reply rep = MTS__GOSSIPD__REPLY__INIT;
	Mts__Gossipd__JoinRep ok = MTS__GOSSIPD__JOIN_REP__INIT;
	struct mts_ipc_call *call = l->join_call;
	size_t i;

	l->join_call = NULL;
	if (jr->error[0] || jr->cluster_id.len != MTS_CLUSTER_ID_LEN) {
		log_warnx("join through %s refused: %s", l->raddr,
		    jr->error[0] ? jr->error : "no cluster id");
		if (call)
			mts_ipc_reply_error(call, MTS_ERR_DENIED, "%s",
			    jr->error[0] ? jr->error : "no cluster id");
		gd_link_close(g, l, NULL);
		return;
	}
	memcpy(g->cluster_id, jr->cluster_id.data, MTS_CLUSTER_ID_LEN);
	g->in_cluster = 1;
	g->removed = 0;
	for (i = 0; i < jr->n_members; i++)
		learn_member(g, jr->members[i], now);
	log_info("joined the cluster through %s (%zu members)", l->raddr,
	    jr->n_members);
	if (call) {
		ok.cluster_id = jr->cluster_id;
		ok.members = (uint32_t)jr->n_members;
		rep.body_case = MTS__GOSSIPD__REPLY__BODY_JOIN;
		rep.join = &ok;
		mts_ipc_reply(call, &rep.base);
	}
	gd_link_close(g, l, NULL);
	gd_ae_start_with(g, l->id, now);
}
