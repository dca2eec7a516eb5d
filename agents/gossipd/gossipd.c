/* gossipd.c: mts-gossipd main — configuration, the node's static key and id, its watchers, timer and turn hook on common/loop.c, and SWIM effects. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

#define KEY_FILE "node.key"
#define TICK_MS 50

static int print_id;

int
gd_rng(void *ctx, uint8_t *buf, size_t len)
{
	randombytes_buf(buf, len);
	return 0;
}

/* --- configuration -------------------------------------------------------------- */

static mts_time_t
cfg_ms(struct gossipd *g, const char *key)
{
	int64_t v = 0;

	(void)mts_parse_duration(mts_cfg_str(g->agent.cfg, "gossipd", key), &v);
	return v;
}

static int64_t
cfg_int(struct gossipd *g, const char *key)
{
	return mts_cfg_int(g->agent.cfg, "gossipd", key);
}

static int
load_config(struct gossipd *g)
{
	struct gd_cfg *c = &g->cfg;
	const char *adv = mts_cfg_str(g->agent.cfg, "gossipd", "advertise");
	int64_t sz = 0;

	snprintf(c->listen, sizeof(c->listen), "%s",
	    mts_cfg_str(g->agent.cfg, "gossipd", "listen"));
	snprintf(c->advertise, sizeof(c->advertise), "%s",
	    adv && *adv ? adv : c->listen);
	mts_swim_cfg_defaults(&c->swim);
	c->swim.probe_interval = cfg_ms(g, "probe_interval");
	c->swim.probe_timeout = cfg_ms(g, "probe_timeout");
	c->swim.indirect = (int)cfg_int(g, "indirect_probes");
	c->swim.suspicion_mult = (int)cfg_int(g, "suspicion_mult");
	c->swim.retransmit_mult = (int)cfg_int(g, "retransmit_mult");
	c->swim.dead_reclaim = cfg_ms(g, "dead_reclaim");
	c->swim.dead_probe_interval = cfg_ms(g, "dead_probe_interval");
	c->fanout = (int)cfg_int(g, "fanout");
	c->ae_interval = cfg_ms(g, "ae_interval");
	(void)mts_parse_size(mts_cfg_str(g->agent.cfg, "gossipd", "ae_rate"),
	    &c->ae_rate);
	(void)mts_parse_size(mts_cfg_str(g->agent.cfg, "gossipd",
	                         "max_payload"),
	    &sz);
	c->max_payload = sz;
	c->handshake_timeout = cfg_ms(g, "handshake_timeout");
	c->idle_timeout = cfg_ms(g, "idle_timeout");
	c->reconnect_max = cfg_ms(g, "reconnect_max");
	c->store_timeout = cfg_ms(g, "statestore_timeout");
	c->max_links = cfg_int(g, "max_links");
	c->max_handshakes = cfg_int(g, "max_handshakes");
	c->max_handshakes_ip = cfg_int(g, "max_handshakes_per_addr");
	c->peer_log_interval = cfg_ms(g, "peer_log_interval");
	if (c->swim.probe_interval <= 0 || c->swim.probe_timeout <= 0 ||
	    c->swim.probe_timeout >= c->swim.probe_interval) {
		log_warnx("[gossipd] probe_timeout must be positive and below "
		          "probe_interval");
		return -1;
	}
	if (c->swim.indirect < 0 || c->swim.suspicion_mult < 1 ||
	    c->swim.retransmit_mult < 1 || c->fanout < 0 ||
	    c->ae_interval <= 0 || c->ae_rate <= 0 || c->max_payload < 65536 ||
	    c->handshake_timeout <= 0 ||
	    c->idle_timeout <= c->swim.probe_interval ||
	    c->reconnect_max <= 0 || c->store_timeout <= 0 ||
	    c->max_handshakes < 1 || c->max_handshakes_ip < 1 ||
	    c->max_links < c->max_handshakes || c->peer_log_interval <= 0) {
		log_warnx(
		    "[gossipd] a value is out of range (see docs/gossip.md)");
		return -1;
	}
	return 0;
}

/* --- identity ---------------------------------------------------------------------- */

/* Reads the static key, creating it (mode 0600) on first start. */
static int
load_key(struct gossipd *g)
{
	char path[512];
	ssize_t r;
	int fd;

	/* Under mts-init the node key comes from init (MTS_NODE_KEY_FD), so
	 * that every agent's MTS_NODE_ID is this key's node id. */
	if ((r = mts_agent_node_key(g->priv)) == 0)
		goto derive;
	if (r != -MTS_ERR_NOTFOUND) {
		log_warnx("MTS_NODE_KEY_FD: cannot read the node key");
		return -1;
	}
	if (mts_path_join(path, sizeof(path), g->agent.statedir, KEY_FILE) < 0)
		return -1;
	if (mkdir(g->agent.statedir, 0700) < 0 && errno != EEXIST) {
		log_warn("%s", g->agent.statedir);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		r = read(fd, g->priv, sizeof(g->priv));
		close(fd);
		if (r != (ssize_t)sizeof(g->priv)) {
			log_warnx("%s: not a 32-byte key", path);
			return -1;
		}
	} else if (errno == ENOENT) {
		randombytes_buf(g->priv, sizeof(g->priv));
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 ||
		    write(fd, g->priv, sizeof(g->priv)) !=
		        (ssize_t)sizeof(g->priv) ||
		    fsync(fd) < 0) {
			log_warn("writing %s", path);
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
		log_info("created the node key %s", path);
	} else {
		log_warn("%s", path);
		return -1;
	}
derive:
	if (crypto_scalarmult_base(g->pub, g->priv) != 0)
		return -1;
	mts_node_id(g->id, g->pub);
	mts_hex(g->idhex, g->id, MTS_NODE_ID_LEN);
	return 0;
}

static void
load_name(struct gossipd *g)
{
	const char *n = mts_cfg_str(g->agent.cfg, "node", "name");
	char host[MTS_SWIM_NAME_MAX];

	if (n && *n) {
		snprintf(g->name, sizeof(g->name), "%s", n);
	} else if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		snprintf(g->name, sizeof(g->name), "%s", host);
	}
}

/* --- SWIM effects --------------------------------------------------------------------- */

static void
send_probe(struct gossipd *g, const struct mts_swim_effect *e, mts_time_t now)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__Ping ping = MTS__GOSSIP__PING__INIT;
	Mts__Gossip__Ack ack = MTS__GOSSIP__ACK__INIT;
	Mts__Gossip__PingReq pr = MTS__GOSSIP__PING_REQ__INIT;
	struct peer *p = gd_peer_find(g, e->to);

	if (p == NULL)
		return;
	switch (e->type) {
	case MTS_SWIM_SEND_PING:
		ping.seq = e->seq;
		msg.body_case = MTS__GOSSIP__MSG__BODY_PING;
		msg.ping = &ping;
		break;
	case MTS_SWIM_SEND_ACK:
		ack.seq = e->seq;
		msg.body_case = MTS__GOSSIP__MSG__BODY_ACK;
		msg.ack = &ack;
		break;
	case MTS_SWIM_SEND_PINGREQ:
		pr.seq = e->seq;
		pr.target.data = (uint8_t *)e->target;
		pr.target.len = MTS_NODE_ID_LEN;
		msg.body_case = MTS__GOSSIP__MSG__BODY_PING_REQ;
		msg.ping_req = &pr;
		break;
	case MTS_SWIM_SEND_GOSSIP:
		break; /* the piggybacked updates are the message */
	default:
		return;
	}
	(void)gd_send(g, p, &msg, now);
}

/* Bad news travels at once: a member this node found suspect or dead
 * itself (swim_core's news flag) is told to up to 64 alive members
 * directly (the message carries only the piggybacked updates), instead
 * of waiting for probes to carry it. What it learned from gossip it only
 * piggybacks: every member telling 64 others of every death it heard of
 * cost a cluster N x 64 messages a death (mts-sim, docs/scale.md). */
static void
broadcast_news(struct gossipd *g, const struct mts_swim_update *u,
    mts_time_t now)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	uint8_t ids[64][MTS_NODE_ID_LEN];
	size_t n, i;
	struct peer *p;

	n = mts_swim_random_alive(g->swim, u->id, ids, 64);
	for (i = 0; i < n; i++)
		if ((p = gd_peer_find(g, ids[i])) != NULL)
			(void)gd_send(g, p, &msg, now);
}

static void
on_event(struct gossipd *g, const struct mts_swim_update *u, int news,
    mts_time_t now)
{
	char hex[MTS_NODE_HEX_LEN + 1];
	const char *st = mts_swim_state_name(u->state);

	mts_hex(hex, u->id, MTS_NODE_ID_LEN);
	log_info("node %s (%s) is %s (incarnation %llu)", hex, u->name, st,
	    (unsigned long long)u->inc);
	if (memcmp(u->id, g->id, MTS_NODE_ID_LEN) != 0 &&
	    (u->state == MTS_SWIM_ALIVE || u->state == MTS_SWIM_SUSPECT ||
	        u->state == MTS_SWIM_DEAD)) {
		char type[32], msg[96];
		struct mts_event ev = { type, NULL, NULL,
			u->name[0] ? u->name : hex, msg };

		snprintf(type, sizeof(type), "node.%s", st);
		snprintf(msg, sizeof(msg), "%.32s, incarnation %llu", hex,
		    (unsigned long long)u->inc);
		(void)mts_event_emit(g->events, &ev);
	}
	gd_publish(g, u, st);
	if (news && memcmp(u->id, g->id, MTS_NODE_ID_LEN) != 0)
		broadcast_news(g, u, now);
	if (u->state == MTS_SWIM_DEAD &&
	    memcmp(u->id, g->id, MTS_NODE_ID_LEN) != 0)
		gd_peer_dead(g, u->id);
}

/* Carries out what SWIM asked for; handlers may add more effects. */
void
gd_swim_effects(struct gossipd *g, mts_time_t now)
{
	struct mts_swim_out cur;
	size_t i, rounds;

	for (rounds = 0; rounds < 8 && g->out.n > 0; rounds++) {
		cur = g->out;
		memset(&g->out, 0, sizeof(g->out));
		for (i = 0; i < cur.n; i++) {
			if (cur.e[i].type == MTS_SWIM_EVENT)
				on_event(g, &cur.e[i].update, cur.e[i].news,
				    now);
			else
				send_probe(g, &cur.e[i], now);
		}
		mts_swim_out_free(&cur);
	}
}

/* --- the loop ------------------------------------------------------------------------- */

static void
on_feed(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct gossipd *g = arg;

	gd_feed_drain(g, now);
	gd_swim_effects(g, now);
}

/* The tick timer only wakes the loop: its work is the turn hook's. */
static void
on_tick(void *arg, mts_time_t now)
{
}

/* After every turn: merge the pushes it received, let SWIM, anti-entropy,
 * relays and links act on the time, and sleep until the next SWIM
 * deadline (at most TICK_MS). */
static void
on_turn(void *arg, mts_time_t now)
{
	struct gossipd *g = arg;
	mts_time_t next;

	now = mts_now();
	gd_push_flush(g, now);
	if (g->in_cluster)
		mts_swim_tick(g->swim, now, &g->out);
	gd_swim_effects(g, now);
	gd_ae_tick(g, now);
	gd_relay_tick(g, now);
	gd_net_tick(g, now);
	gd_swim_effects(g, now);
	/* out of a cluster SWIM does not tick, and its deadline stays past */
	next = g->in_cluster ? mts_swim_next_deadline(g->swim) : now + TICK_MS;
	if (next > now + TICK_MS)
		next = now + TICK_MS;
	mts_timer_arm(g->loop, &g->tick, next);
}

/* The event file in gossipd's run directory, opened before the sandbox
 * (NULL when it cannot be: events then go to the log only). */
static void
open_events(struct gossipd *g)
{
	char path[512], *slash;

	if (mts_ipc_sock_path(path, sizeof(path), g->agent.rundir, "gossipd",
	        NULL) == 0 &&
	    (slash = strrchr(path, '/')) != NULL) {
		*slash = '\0';
		g->events =
		    mts_event_log_open(path, 0, g->agent.node, "gossipd");
	}
}

static int
setup(struct gossipd *g)
{
	struct mts_swim_update self;
	mts_time_t now = mts_now();
	uint64_t seed;

	if ((g->loop = mts_loop_new()) == NULL ||
	    mts_loop_stop_on_signals(g->loop) < 0)
		return -1;
	open_events(g);
	memset(&self, 0, sizeof(self));
	memcpy(self.id, g->id, MTS_NODE_ID_LEN);
	snprintf(self.addr, sizeof(self.addr), "%s", g->cfg.advertise);
	snprintf(self.name, sizeof(self.name), "%s", g->name);
	/* a restarted node comes back with a larger incarnation */
	self.inc = mts_wall_ms() / 1000;
	randombytes_buf(&seed, sizeof(seed));
	g->swim = mts_swim_new(&g->cfg.swim, &self, seed, now);
	g->seen = mts_seen_new(1u << 16);
	if (gd_listen(g) < 0 || gd_store_open(g) < 0 ||
	    mts_loop_watch(g->loop, g->subfd, MTS_LOOP_IN, "statestore feed",
	        on_feed, g) == NULL)
		return -1;
	if (gd_load_cluster(g, now) < 0)
		log_warnx("could not read the member list; continuing");
	if (gd_relay_open(g) < 0 || gd_api_open(g) < 0 ||
	    mts_loop_add_server(g->loop, g->api) < 0 ||
	    mts_loop_add_pub(g->loop, g->pub_feed) < 0)
		return -1;
	mts_timer_init(&g->tick, "gossip tick", on_tick, g);
	mts_timer_arm(g->loop, &g->tick, now);
	(void)mts_loop_on_turn(g->loop, on_turn, g);
	g->next_ae = now + g->cfg.ae_interval;
	return 0;
}

static int
opt(void *arg, int c, const char *optarg)
{
	if (c != 'i')
		return -1;
	print_id = 1;
	return 0;
}

int
main(int argc, char **argv)
{
	static struct gossipd g;

	mts_agent_init(&g.agent, "gossipd", argc, argv, "i", opt, NULL);
	if (mts_crypto_init() < 0)
		fatalx("libsodium failed to start");
	if (load_key(&g) < 0)
		return MTS_EXIT_PERMANENT;
	if (print_id) {
		printf("%s\n", g.idhex);
		return MTS_EXIT_OK;
	}
	if (load_config(&g) < 0)
		return MTS_EXIT_USAGE;
	load_name(&g);
	if (setup(&g) < 0) {
		log_warnx("start-up failed");
		return MTS_EXIT_FAILURE;
	}
	if (mts_agent_sandbox(&g.agent) < 0)
		return MTS_EXIT_FAILURE;
	log_info("node %s (%s) listening on %s%s", g.idhex, g.name,
	    g.cfg.listen,
	    g.in_cluster ? ", in a cluster" : ", not in a cluster");
	mts_agent_ready(&g.agent);
	if (mts_loop_run(g.loop) < 0)
		return MTS_EXIT_FAILURE;
	mts_event_log_close(g.events);
	mts_agent_free(&g.agent);
	return MTS_EXIT_OK;
}
