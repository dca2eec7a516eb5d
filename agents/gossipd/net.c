/* net.c: gossipd's TCP side — listener, outgoing dials with backoff, per-link Noise connections, message queues per peer, timeouts. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

#define PEER_QUEUE_MAX (16u << 20)
#define READ_CHUNK 65536
#define JOIN_FIRST_FRAME (32 + MTS_NOISE_TAGLEN)
#define ACCEPT_BATCH 64      /* connections accepted per turn */
#define ACCEPT_PAUSE_MS 1000 /* out of descriptors: stop accepting this long */
#define PEER_LOG_KEYS 64     /* sources x kinds tracked by the limiter */
#define SHORT_LINK_MS 2000   /* a dialled link closed sooner backs off */

static void on_link(void *, int, uint32_t, mts_time_t);
static void on_listener(void *, int, uint32_t, mts_time_t);

/* --- addresses ------------------------------------------------------------ */

/* Parses "a.b.c.d:port" (IPv4 only; loopback and LAN addresses). */
static int
parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[GD_ADDR_MAX];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
		return -MTS_ERR_INVAL;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port <= 0 || port > 65535)
		return -MTS_ERR_INVAL;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (host[0] == '\0')
		sa->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return -MTS_ERR_INVAL;
	return 0;
}

static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	fl = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &fl, sizeof(fl));
}

int
gd_listen(struct gossipd *g)
{
	struct sockaddr_in sa;
	int one = 1;

	if (parse_addr(g->cfg.listen, &sa) < 0) {
		log_warnx("[gossipd] listen: '%s' is not ADDRESS:PORT",
		    g->cfg.listen);
		return -1;
	}
	if ((g->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		log_warn("socket");
		return -1;
	}
	(void)setsockopt(g->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(g->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(g->lfd, 128) < 0) {
		log_warn("listening on %s", g->cfg.listen);
		return -1;
	}
	set_nonblock(g->lfd);
	if ((g->lw = mts_loop_watch(g->loop, g->lfd, MTS_LOOP_IN, "listener",
	         on_listener, g)) == NULL)
		return -1;
	return 0;
}

/* The address part of "ip:port". */
static void
host_of(const char *raddr, char *out, size_t len)
{
	const char *colon = strrchr(raddr, ':');
	size_t n = colon ? (size_t)(colon - raddr) : strlen(raddr);

	if (n >= len)
		n = len - 1;
	memcpy(out, raddr, n);
	out[n] = '\0';
}

/* --- peer errors in the log ----------------------------------------------- */

static void
log_line(int level, const char *line)
{
	if (level == MTS_LOG_WARN)
		log_warnx("%s", line);
	else if (level == MTS_LOG_INFO)
		log_info("%s", line);
	else
		log_debug("%s", line);
}

void
gd_peer_log(struct gossipd *g, int level, const char *raddr, const char *kind,
    const char *fmt, ...)
{
	char key[MTS_RL_KEY_MAX], host[GD_ADDR_MAX], line[512];
	va_list ap;

	if (log_getlevel() < level)
		return;
	if (g->peer_log.slot == NULL)
		mts_rl_init(&g->peer_log, PEER_LOG_KEYS,
		    g->cfg.peer_log_interval);
	host_of(raddr, host, sizeof(host));
	/* "LEVEL HOST KIND": a summary is logged at its lines' level */
	snprintf(key, sizeof(key), "%d %s %s", level, host, kind);
	if (!mts_rl_hit(&g->peer_log, key, mts_loop_now(g->loop)))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_line(level, line);
}

/* "... and N more 'KIND' from HOST in the last S s", at the level of the
 * lines left out (warn for the shared slot, whose lines are of any kind). */
static void
summarize(const struct mts_rl_summary *s)
{
	char key[MTS_RL_KEY_MAX], line[256], *host = key, *kind = NULL;
	int level = MTS_LOG_WARN;

	memcpy(key, s->key, sizeof(key));
	if (strcmp(key, MTS_RL_OTHER) != 0 &&
	    (host = strchr(key, ' ')) != NULL) {
		level = atoi(key);
		*host++ = '\0';
		if ((kind = strchr(host, ' ')) != NULL)
			*kind++ = '\0';
	} else {
		host = "other sources";
	}
	snprintf(line, sizeof(line),
	    "... and %llu more %s%s%sfrom %s in the "
	    "last %lld s",
	    (unsigned long long)s->count, kind ? "'" : "", kind ? kind : "",
	    kind ? "' " : "", host, (long long)(s->span + 500) / 1000);
	log_line(level, line);
}

/* One line for each source and kind of error whose lines were left out in
 * the interval just over. */
static void
peer_log_summaries(struct gossipd *g, mts_time_t now)
{
	struct mts_rl_summary s;

	if (g->peer_log.slot == NULL || now < g->peer_log_next)
		return;
	g->peer_log_next = now + 1000;
	while (mts_rl_expire(&g->peer_log, now, &s))
		summarize(&s);
}

/* --- links ---------------------------------------------------------------- */

static const char *
kind_name(enum link_kind k)
{
	static const char *n[] = { "incoming", "member (in)", "member (out)",
		"join (in)", "join (out)" };

	return n[k];
}

static struct link *
link_new(struct gossipd *g, int fd, enum link_kind kind, const char *raddr,
    mts_time_t now)
{
	struct link *l = xcalloc(1, sizeof(*l));

	l->g = g;
	l->fd = fd;
	l->kind = kind;
	snprintf(l->raddr, sizeof(l->raddr), "%s", raddr);
	l->since = now;
	l->deadline = now + g->cfg.handshake_timeout;
	l->last_rx = now;
	mts_buf_init(&l->peek);
	l->next = g->links;
	g->links = l;
	l->w = mts_loop_watch(g->loop, fd, MTS_LOOP_IN, "link", on_link, l);
	return l;
}

void
gd_update_epoll(struct gossipd *g, struct link *l)
{
	int want = l->connecting || (l->conn && mts_conn_out(l->conn)->len > 0);

	if (l->dead || l->w == NULL || want == l->want_out)
		return;
	if (mts_watch_set(l->w, MTS_LOOP_IN | (want ? MTS_LOOP_OUT : 0)) == 0)
		l->want_out = want;
}

static const char *
link_who(const struct link *l, char *buf, size_t len)
{
	char hex[MTS_NODE_HEX_LEN + 1];

	if (l->has_id) {
		mts_hex(hex, l->id, MTS_NODE_ID_LEN);
		snprintf(buf, len, "%s link %s (node %.12s)",
		    kind_name(l->kind), l->raddr, hex);
	} else {
		snprintf(buf, len, "%s link %s", kind_name(l->kind), l->raddr);
	}
	return buf;
}

void
gd_link_close(struct gossipd *g, struct link *l, const char *why)
{
	char who[160], kind[80];
	size_t n;

	if (l->dead)
		return;
	if (why) {
		/* limited per source, link kind and reason (up to its ':') */
		n = strcspn(why, ":");
		snprintf(kind, sizeof(kind), "%s: %.*s", kind_name(l->kind),
		    (int)(n < 60 ? n : 60), why);
		gd_peer_log(g, MTS_LOG_INFO, l->raddr, kind, "closing %s: %s",
		    link_who(l, who, sizeof(who)), why);
	}
	l->dead = 1;
	mts_watch_free(l->w);
	l->w = NULL;
	close(l->fd);
	if (l->join_call) {
		mts_ipc_reply_error(l->join_call, MTS_ERR_IO,
		    "join through %s failed: %s", l->raddr,
		    why ? why : "connection closed");
		l->join_call = NULL;
	}
	if (l->peer) {
		if (l->peer->link == l)
			l->peer->link = NULL;
		if (l->peer->dial == l)
			l->peer->dial = NULL;
	}
}

static void
link_free(struct link *l)
{
	mts_conn_free(l->conn);
	mts_buf_free(&l->peek);
	free(l);
}

/* Frees closed links (they are only marked dead while handlers run). */
static void
sweep(struct gossipd *g)
{
	struct link **pp = &g->links, *l;

	while ((l = *pp) != NULL) {
		if (l->dead) {
			*pp = l->next;
			link_free(l);
		} else {
			pp = &l->next;
		}
	}
}

/* Writes what the connection has queued; 0 or -1 (link closed). */
static int
flush(struct gossipd *g, struct link *l)
{
	struct mts_buf *o;
	ssize_t w;

	if (l->dead || l->connecting || l->conn == NULL)
		return l->dead ? -1 : 0;
	o = mts_conn_out(l->conn);
	while (o->len > 0) {
		w = write(l->fd, o->data, o->len);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (w <= 0) {
			gd_link_close(g, l, strerror(errno));
			return -1;
		}
		mts_conn_consumed(l->conn, (size_t)w);
	}
	if (o->len == 0 && l->closing) {
		gd_link_close(g, l, NULL);
		return -1;
	}
	gd_update_epoll(g, l);
	return 0;
}

/* --- peers ---------------------------------------------------------------- */

struct peer *
gd_peer_find(struct gossipd *g, const uint8_t id[MTS_NODE_ID_LEN])
{
	struct peer *p;

	for (p = g->peers; p; p = p->next)
		if (memcmp(p->id, id, MTS_NODE_ID_LEN) == 0)
			return p;
	return NULL;
}

struct peer *
gd_peer_get(struct gossipd *g, const uint8_t id[MTS_NODE_ID_LEN])
{
	struct peer *p = gd_peer_find(g, id);

	if (p)
		return p;
	p = xcalloc(1, sizeof(*p));
	memcpy(p->id, id, MTS_NODE_ID_LEN);
	mts_buf_init(&p->q);
	p->next = g->peers;
	g->peers = p;
	return p;
}

/* SWIM declared the member dead. A TCP link to it may be alive in name
 * only: across a partition its retransmissions back off to tens of
 * seconds, and sending on it keeps it from idling out, so after the heal
 * it would stay mute long after the network is whole. Close it; the pings
 * to dead members dial afresh, without an earlier backoff to wait out. */
void
gd_peer_dead(struct gossipd *g, const uint8_t id[MTS_NODE_ID_LEN])
{
	struct peer *p = gd_peer_find(g, id);

	if (p == NULL)
		return;
	gd_drop_peer_links(g, p, "declared dead");
	p->backoff = 0;
	p->next_dial = 0;
}

void
gd_drop_peer_links(struct gossipd *g, struct peer *p, const char *why)
{
	struct link *l;

	for (l = g->links; l; l = l->next)
		if (!l->dead && l->has_id &&
		    memcmp(l->id, p->id, MTS_NODE_ID_LEN) == 0)
			gd_link_close(g, l, why);
	mts_buf_reset(&p->q);
}

/* --- hello ---------------------------------------------------------------- */

void
gd_member_to_pb(const struct mts_swim_update *u, Mts__Gossip__Member *m)
{
	mts__gossip__member__init(m);
	m->node.data = (uint8_t *)u->id;
	m->node.len = MTS_NODE_ID_LEN;
	m->addr = (char *)u->addr;
	m->name = (char *)u->name;
	m->state = (uint32_t)u->state;
	m->incarnation = u->inc;
}

int
gd_member_from_pb(const Mts__Gossip__Member *m, struct mts_swim_update *u)
{
	memset(u, 0, sizeof(*u));
	if (m == NULL || m->node.len != MTS_NODE_ID_LEN ||
	    m->state > MTS_SWIM_LEFT || strlen(m->addr) >= MTS_SWIM_ADDR_MAX ||
	    strlen(m->name) >= MTS_SWIM_NAME_MAX)
		return -MTS_ERR_INVAL;
	memcpy(u->id, m->node.data, MTS_NODE_ID_LEN);
	snprintf(u->addr, sizeof(u->addr), "%s", m->addr);
	snprintf(u->name, sizeof(u->name), "%s", m->name);
	u->state = (enum mts_swim_state)m->state;
	u->inc = m->incarnation;
	return 0;
}

/* Our Hello (IK both ways, join responder): self as SWIM knows it. */
static uint8_t *
pack_hello(struct gossipd *g, size_t *len)
{
	Mts__Gossip__Hello h = MTS__GOSSIP__HELLO__INIT;
	Mts__Gossip__Member m;
	struct mts_swim_update me;
	uint8_t *buf;

	mts_swim_member_update(mts_swim_member_at(g->swim, 0), &me);
	gd_member_to_pb(&me, &m);
	h.version = 1;
	h.self = &m;
	h.cluster_id.data = g->cluster_id;
	h.cluster_id.len = g->in_cluster ? MTS_CLUSTER_ID_LEN : 0;
	*len = mts__gossip__hello__get_packed_size(&h);
	buf = xmalloc(*len + 1);
	mts__gossip__hello__pack(&h, buf);
	return buf;
}

/* The peer's Hello: its address and incarnation go to SWIM. */
static void
take_hello(struct gossipd *g, struct link *l, mts_time_t now)
{
	Mts__Gossip__Hello *h;
	struct mts_swim_update u;
	const uint8_t *data;
	size_t len;

	data = mts_conn_peer_hello(l->conn, &len);
	h = data ? mts__gossip__hello__unpack(NULL, len, data) : NULL;
	if (h == NULL || gd_member_from_pb(h->self, &u) < 0 ||
	    memcmp(u.id, l->id, MTS_NODE_ID_LEN) != 0) {
		if (h)
			mts__gossip__hello__free_unpacked(h, NULL);
		return;
	}
	if (u.addr[0] && l->peer)
		snprintf(l->peer->addr, sizeof(l->peer->addr), "%s", u.addr);
	mts_swim_apply(g->swim, &u, now, &g->out);
	mts__gossip__hello__free_unpacked(h, NULL);
}

/* --- dialing -------------------------------------------------------------- */

static int
tcp_connect(const char *addr, int *fdp)
{
	struct sockaddr_in sa;
	int fd;

	if (parse_addr(addr, &sa) < 0)
		return -MTS_ERR_INVAL;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -MTS_ERR_IO;
	set_nonblock(fd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		return -MTS_ERR_IO;
	}
	*fdp = fd;
	return 0;
}

/* SWIM holds the peer dead: dials to it are SWIM's pings to dead members
 * (dead_probe_interval), which must find it as soon as it is reachable
 * again, so they neither back off longer nor wait longer than that. */
static mts_time_t
dead_peer_cap(struct gossipd *g, const struct peer *p)
{
	const struct mts_swim_member *m = mts_swim_find(g->swim, p->id);
	mts_time_t d = g->cfg.swim.dead_probe_interval;

	if (m == NULL || m->u.state != MTS_SWIM_DEAD || d <= 0)
		return 0;
	return d < 1000 ? 1000 : d;
}

static void
dial_failed(struct gossipd *g, struct peer *p, mts_time_t now)
{
	mts_time_t cap = dead_peer_cap(g, p);

	p->backoff = p->backoff ? p->backoff * 2 : 100;
	if (p->backoff > g->cfg.reconnect_max)
		p->backoff = g->cfg.reconnect_max;
	if (cap && p->backoff > cap)
		p->backoff = cap;
	p->next_dial = now + p->backoff;
	mts_buf_reset(&p->q);
	mts_swim_on_unreachable(g->swim, p->id, now, &g->out);
}

static void
dial(struct gossipd *g, struct peer *p, mts_time_t now)
{
	struct link *l;
	mts_time_t cap;
	int fd;

	if (!g->in_cluster || p->removed || !p->has_pub || p->addr[0] == '\0' ||
	    p->dial)
		return;
	if (now < p->next_dial) {
		/* it refused us a moment ago: fail probes now, not later */
		mts_swim_on_unreachable(g->swim, p->id, now, &g->out);
		return;
	}
	if (tcp_connect(p->addr, &fd) < 0) {
		dial_failed(g, p, now);
		return;
	}
	l = link_new(g, fd, LINK_IK_OUT, p->addr, now);
	/* a SYN lost across a partition is sent again only after 1 s, then
	 * 3 s: a dead peer's dial gives up sooner and the next ping dials
	 * afresh */
	if ((cap = dead_peer_cap(g, p)) > 0 && now + 2 * cap < l->deadline)
		l->deadline = now + 2 * cap;
	l->connecting = 1;
	l->peer = p;
	memcpy(l->id, p->id, MTS_NODE_ID_LEN);
	l->has_id = 1;
	p->dial = l;
	gd_update_epoll(g, l);
}

/* TCP is up: start the IK handshake towards the peer's known key. */
static int
start_ik(struct gossipd *g, struct link *l)
{
	struct mts_conn_cfg cc = { 0 };
	size_t hlen;
	uint8_t *hello = pack_hello(g, &hlen);
	int rc;

	cc.role = MTS_NOISE_INITIATOR;
	cc.protocol = MTS_NOISE_IK;
	cc.s_priv = g->priv;
	cc.rs = l->peer->pub;
	cc.rng = gd_rng;
	cc.verify = gd_verify_member;
	cc.verify_ctx = l;
	cc.max_payload = (size_t)g->cfg.max_payload;
	cc.hello = hello;
	cc.hello_len = hlen;
	rc = mts_conn_new(&l->conn, &cc);
	free(hello);
	return rc;
}

int
gd_dial_join(struct gossipd *g, const struct mts_token *t,
    struct mts_ipc_call *call, mts_time_t now)
{
	Mts__Gossip__JoinHello jh = MTS__GOSSIP__JOIN_HELLO__INIT;
	Mts__Gossip__Member m;
	struct mts_swim_update me;
	struct mts_conn_cfg cc = { 0 };
	struct link *l;
	uint8_t *hello;
	size_t hlen;
	int fd, rc;

	if ((rc = tcp_connect(t->addr, &fd)) < 0)
		return rc;
	l = link_new(g, fd, LINK_JOIN_OUT, t->addr, now);
	l->connecting = 1;
	mts_swim_member_update(mts_swim_member_at(g->swim, 0), &me);
	gd_member_to_pb(&me, &m);
	jh.version = 1;
	jh.self = &m;
	hlen = mts__gossip__join_hello__get_packed_size(&jh);
	hello = xmalloc(hlen + 1);
	mts__gossip__join_hello__pack(&jh, hello);
	cc.role = MTS_NOISE_INITIATOR;
	cc.protocol = MTS_NOISE_XXPSK3;
	cc.s_priv = g->priv;
	cc.psk = t->secret;
	cc.rng = gd_rng;
	cc.verify = gd_verify_any;
	cc.verify_ctx = l;
	cc.hello = hello;
	cc.hello_len = hlen;
	rc = mts_conn_new(&l->conn, &cc);
	free(hello);
	if (rc < 0) {
		gd_link_close(g, l, "cannot start the join handshake");
		return rc;
	}
	l->join_call = call;
	gd_update_epoll(g, l);
	return 0;
}

/* --- sending -------------------------------------------------------------- */

/* to: the destination, when known (its own suspicion goes first). */
static uint8_t *
pack_msg(struct gossipd *g, const uint8_t *to, Mts__Gossip__Msg *msg,
    size_t *len)
{
	struct mts_swim_update u[GD_MAX_UPDATES];
	Mts__Gossip__Member m[GD_MAX_UPDATES], *mp[GD_MAX_UPDATES];
	size_t k, i;
	uint8_t *buf;

	msg->version = 1;
	k = mts_swim_gossip(g->swim, to, u, GD_MAX_UPDATES);
	for (i = 0; i < k; i++) {
		gd_member_to_pb(&u[i], &m[i]);
		mp[i] = &m[i];
	}
	msg->n_updates = k;
	msg->updates = mp;
	*len = mts__gossip__msg__get_packed_size(msg);
	buf = xmalloc(*len + 1);
	mts__gossip__msg__pack(msg, buf);
	msg->n_updates = 0;
	msg->updates = NULL;
	return buf;
}

int
gd_send_on_link(struct gossipd *g, struct link *l, Mts__Gossip__Msg *msg)
{
	size_t len;
	uint8_t *buf;
	int rc;

	if (l->dead || l->conn == NULL || !mts_conn_established(l->conn))
		return -MTS_ERR_STATE;
	buf = pack_msg(g, l->has_id ? l->id : NULL, msg, &len);
	rc = mts_conn_send(l->conn, buf, len);
	free(buf);
	if (rc < 0)
		return rc;
	g->stats.tx_bytes += len;
	l->last_rx = mts_now(); /* activity either way keeps a link */
	return flush(g, l) < 0 ? -MTS_ERR_IO : 0;
}

int
gd_send(struct gossipd *g, struct peer *p, Mts__Gossip__Msg *msg,
    mts_time_t now)
{
	size_t len;
	uint8_t *buf;

	if (p->removed)
		return -MTS_ERR_DENIED;
	if (p->link && !p->link->dead)
		return gd_send_on_link(g, p->link, msg);
	buf = pack_msg(g, p->id, msg, &len);
	if (p->q.len + len + 4 <= PEER_QUEUE_MAX) {
		mts_buf_put_u32be(&p->q, (uint32_t)len);
		mts_buf_put(&p->q, buf, len);
	}
	free(buf);
	dial(g, p, now);
	return 0;
}

/* Sends what was queued while the peer had no link. */
static void
drain_queue(struct gossipd *g, struct peer *p)
{
	struct mts_rd rd;
	uint32_t len;
	const uint8_t *data;
	struct link *l = p->link;

	mts_rd_init(&rd, p->q.data, p->q.len);
	while (mts_rd_u32be(&rd, &len) == 0 &&
	    mts_rd_bytes(&rd, &data, len) == 0) {
		if (mts_conn_send(l->conn, data, len) < 0)
			break;
		g->stats.tx_bytes += len;
	}
	mts_buf_reset(&p->q);
	(void)flush(g, l);
}

/* --- receiving ------------------------------------------------------------ */

/* When both nodes dialled each other, both keep sending on the link the
 * node with the smaller id initiated; the other one goes idle and closes. */
static int
link_pref(struct gossipd *g, const struct link *l)
{
	const uint8_t *init = l->kind == LINK_IK_OUT ? g->id : l->id;
	const uint8_t *resp = l->kind == LINK_IK_OUT ? l->id : g->id;

	return memcmp(init, resp, MTS_NODE_ID_LEN) < 0;
}

static void
established(struct gossipd *g, struct link *l, mts_time_t now)
{
	const uint8_t *rs = mts_conn_remote_static(l->conn);
	struct peer *p;

	mts_node_id(l->id, rs);
	l->has_id = 1;
	l->deadline = MTS_TIME_NEVER;
	switch (l->kind) {
	case LINK_IK_IN:
	case LINK_IK_OUT:
		if (l->tell_removed) {
			gd_tell_removed(g, l);
			break;
		}
		p = gd_peer_get(g, l->id);
		memcpy(p->pub, rs, 32);
		p->has_pub = 1;
		l->peer = p;
		if (p->dial == l)
			p->dial = NULL;
		if (p->link == NULL || p->link->dead ||
		    link_pref(g, l) >= link_pref(g, p->link))
			p->link = l;
		p->backoff = 0;
		p->next_dial = 0;
		take_hello(g, l, now);
		mts_swim_on_heard(g->swim, p->id, now, &g->out);
		log_debug("link to %s up (%s)", l->raddr, kind_name(l->kind));
		drain_queue(g, p);
		break;
	case LINK_JOIN_IN:
		gd_admit(g, l, now);
		break;
	default:
		break;
	}
}

/* First bytes of an accepted connection: a 48-byte first frame is an
 * XXpsk3 join (the initiator's "e" and the tag of its empty payload, which
 * psk mode already encrypts); an IK first message is at least 96 bytes
 * ("e", the encrypted static key, the payload's tag). */
static int
classify_incoming(struct gossipd *g, struct link *l, mts_time_t now)
{
	struct mts_conn_cfg cc = { 0 };
	uint8_t psk[32], *hello = NULL;
	size_t hlen = 0;
	uint32_t flen;
	int rc;

	if (l->peek.len < MTS_FRAME_HDR)
		return 0;
	flen = mts_get_u32be(l->peek.data);
	cc.role = MTS_NOISE_RESPONDER;
	cc.s_priv = g->priv;
	cc.rng = gd_rng;
	cc.max_payload = (size_t)g->cfg.max_payload;
	if (flen == JOIN_FIRST_FRAME) {
		if (!g->in_cluster || gd_join_secret(g, psk) < 0) {
			gd_link_close(g, l,
			    "join attempt, but not in a cluster");
			return -1;
		}
		l->kind = LINK_JOIN_IN;
		cc.protocol = MTS_NOISE_XXPSK3;
		cc.psk = psk;
		cc.verify = gd_verify_any;
	} else {
		l->kind = LINK_IK_IN;
		cc.protocol = MTS_NOISE_IK;
		cc.verify = gd_verify_member;
	}
	cc.verify_ctx = l;
	hello = pack_hello(g, &hlen);
	cc.hello = hello;
	cc.hello_len = hlen;
	rc = mts_conn_new(&l->conn, &cc);
	free(hello);
	if (rc < 0) {
		gd_link_close(g, l, "cannot start the handshake");
		return -1;
	}
	rc = mts_conn_feed(l->conn, l->peek.data, l->peek.len);
	mts_buf_free(&l->peek);
	return rc;
}

static int
feed(struct gossipd *g, struct link *l, const uint8_t *buf, size_t n,
    mts_time_t now)
{
	int was = l->conn && mts_conn_established(l->conn);
	uint8_t *msg;
	size_t len;
	int rc;

	if (l->conn == NULL) {
		mts_buf_put(&l->peek, buf, n);
		rc = classify_incoming(g, l, now);
	} else {
		rc = mts_conn_feed(l->conn, buf, n);
	}
	if (l->dead)
		return -1;
	if (rc < 0) {
		gd_link_close(g, l, mts_conn_error(l->conn));
		return -1;
	}
	if (l->conn == NULL)
		return 0;
	if (!was && mts_conn_established(l->conn))
		established(g, l, now);
	while (!l->dead && mts_conn_next(l->conn, &msg, &len) == 0) {
		g->stats.rx_bytes += len;
		if (!l->tell_removed) /* a removed member is not listened to */
			gd_handle_msg(g, l, msg, len, now);
		free(msg);
	}
	return l->dead ? -1 : flush(g, l);
}

static void
on_readable(struct gossipd *g, struct link *l, mts_time_t now)
{
	uint8_t buf[READ_CHUNK];
	ssize_t r;
	int rounds;

	for (rounds = 0; rounds < 16 && !l->dead; rounds++) {
		r = read(l->fd, buf, sizeof(buf));
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0) {
			if (l->peer && l->peer->link == l && !l->closing)
				mts_swim_on_unreachable(g->swim, l->peer->id,
				    now, &g->out);
			/* dialled and hung up on at once: back off as after a
			 * failed connect, not redial in a loop */
			if (l->kind == LINK_IK_OUT && l->peer && !l->closing &&
			    now - l->since < SHORT_LINK_MS)
				dial_failed(g, l->peer, now);
			gd_link_close(g, l,
			    r == 0 ? (l->closing ? NULL : "closed by peer")
			           : strerror(errno));
			return;
		}
		l->last_rx = now;
		if (feed(g, l, buf, (size_t)r, now) < 0)
			return;
	}
}

static void
on_connected(struct gossipd *g, struct link *l, mts_time_t now)
{
	int err = 0;
	socklen_t elen = sizeof(err);

	l->connecting = 0;
	if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err) {
		if (l->peer)
			dial_failed(g, l->peer, now);
		gd_link_close(g, l, strerror(err ? err : errno));
		return;
	}
	if (l->kind == LINK_IK_OUT && start_ik(g, l) < 0) {
		dial_failed(g, l->peer, now);
		gd_link_close(g, l, "cannot start the handshake");
		return;
	}
	(void)flush(g, l);
}

/* A link's watcher: I/O, then what SWIM asked for in response. */
static void
on_link(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct link *l = arg;
	struct gossipd *g = l->g;

	if (l->dead)
		return;
	if (l->connecting) {
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			on_connected(g, l, now);
	} else {
		if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
			on_readable(g, l, now);
		if (!l->dead && (events & EPOLLOUT))
			(void)flush(g, l);
	}
	gd_swim_effects(g, now);
}

/* An accepted connection that has not finished its handshake. */
static int
unfinished_in(const struct link *l)
{
	return !l->dead && l->kind != LINK_IK_OUT && l->kind != LINK_JOIN_OUT &&
	    (l->conn == NULL || !mts_conn_established(l->conn));
}

/*
 * Makes room for a connection from addr as admit_core decides: over the
 * per-address or the total cap on unfinished handshakes the oldest of them
 * goes, and with max_links open the oldest unfinished one, or (every link
 * is a member's) the newcomer is refused. 0 admits it, -1 refuses it.
 */
static int
make_room(struct gossipd *g, const char *addr)
{
	static const char *why[] = {
		[MTS_ADMIT_PER_ADDR] = "too many unfinished handshakes from "
		                       "its address (max_handshakes_per_addr)",
		[MTS_ADMIT_UNFINISHED] = "too many unfinished handshakes "
		                         "(max_handshakes)",
		[MTS_ADMIT_LINKS] = "too many connections (max_links)",
	};
	struct mts_admit_caps caps = { (size_t)g->cfg.max_links,
		(size_t)g->cfg.max_handshakes,
		(size_t)g->cfg.max_handshakes_ip };
	struct mts_admit_verdict v;
	struct mts_admit_conn *c;
	struct link *l, **ls;
	size_t n = 0, i;

	for (l = g->links; l; l = l->next)
		n += !l->dead;
	c = xcalloc(n + 1, sizeof(*c));
	ls = xcalloc(n + 1, sizeof(*ls));
	i = n; /* the list is newest first; admit_core wants oldest first */
	for (l = g->links; l; l = l->next) {
		if (l->dead)
			continue;
		ls[--i] = l;
		c[i].raddr = l->raddr;
		c[i].since = l->since;
		c[i].unfinished = unfinished_in(l);
	}
	mts_admit(c, n, addr, &caps, &v);
	for (i = 0; i < v.nvictims; i++)
		gd_link_close(g, ls[v.victim[i]], why[v.why[i]]);
	free(c);
	free(ls);
	return v.admit ? 0 : -1;
}

/* Out of descriptors, the waiting connection stays in the backlog and the
 * listener readable: it leaves the loop until gd_net_tick resumes it a
 * second later, instead of spinning. */
static void
accept_pause(struct gossipd *g, mts_time_t now)
{
	gd_peer_log(g, MTS_LOG_WARN, "local", "accept",
	    "accept: %s; not accepting for a second", strerror(errno));
	(void)mts_watch_set(g->lw, 0);
	g->accept_resume = now + ACCEPT_PAUSE_MS;
}

static void
on_listener(void *arg, int lfd, uint32_t events, mts_time_t now)
{
	struct gossipd *g = arg;
	struct sockaddr_in sa;
	socklen_t slen;
	char addr[GD_ADDR_MAX], ip[INET_ADDRSTRLEN];
	int fd, n;

	for (n = 0; n < ACCEPT_BATCH; n++) {
		slen = sizeof(sa);
		fd = accept4(g->lfd, (struct sockaddr *)&sa, &slen,
		    SOCK_CLOEXEC);
		if (fd < 0 &&
		    (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		        errno == ENOMEM)) {
			accept_pause(g, now);
			break;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				gd_peer_log(g, MTS_LOG_WARN, "local", "accept",
				    "accept: %s", strerror(errno));
			break;
		}
		inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
		snprintf(addr, sizeof(addr), "%s:%u", ip, ntohs(sa.sin_port));
		if (make_room(g, addr) < 0) {
			gd_peer_log(g, MTS_LOG_WARN, addr, "refused",
			    "refusing a connection from %s: %lld connections "
			    "open (max_links)",
			    addr, (long long)g->cfg.max_links);
			close(fd);
			continue;
		}
		set_nonblock(fd);
		link_new(g, fd, LINK_IN, addr, now);
	}
	gd_swim_effects(g, now);
}

void
gd_net_tick(struct gossipd *g, mts_time_t now)
{
	struct link *l;
	struct peer *p;

	for (l = g->links; l; l = l->next) {
		if (l->dead)
			continue;
		if (now >= l->deadline) {
			if (l->connecting && l->peer)
				dial_failed(g, l->peer, now);
			gd_link_close(g, l,
			    l->connecting ? "connect timed out"
			                  : "handshake timed out");
		} else if (l->kind != LINK_JOIN_OUT &&
		    now - l->last_rx > g->cfg.idle_timeout) {
			gd_link_close(g, l, "idle");
		}
	}
	for (p = g->peers; p; p = p->next)
		if (p->q.len > 0 && (p->link == NULL || p->link->dead))
			dial(g, p, now);
	if (g->accept_resume && now >= g->accept_resume) {
		g->accept_resume = 0;
		(void)mts_watch_set(g->lw, MTS_LOOP_IN);
	}
	peer_log_summaries(g, now);
	sweep(g);
}
