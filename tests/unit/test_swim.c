/* test_swim.c: unit tests of the SWIM core — a virtual network of nodes with a virtual clock: detection, indirect probes, refutation, no false suspicion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "agents/gossipd/swim_core.h"

#define MAXN 12

struct vnet {
	struct mts_swim *node[MAXN];
	int n;
	int down[MAXN];      /* process dead: sends and receives nothing */
	int cut[MAXN][MAXN]; /* link i->j drops messages */
	mts_time_t now;
	int events[MAXN][4]; /* per observer, count of events per state */
	long updates;        /* piggybacked updates sent */
};

static void
mkid(uint8_t id[16], int i)
{
	memset(id, 0, 16);
	id[0] = (uint8_t)(i + 1);
}

static int
idx(const uint8_t id[16])
{
	return id[0] - 1;
}

static void deliver(struct vnet *v, int from, struct mts_swim_out *out);

/* Every message also carries piggybacked updates, as gossipd's do. */
static void
piggyback(struct vnet *v, int from, int to)
{
	struct mts_swim_update u[8];
	struct mts_swim_out out = { 0 };
	size_t k, i;

	uint8_t tid[16];

	uint8_t fid[16];

	mkid(tid, to);
	mkid(fid, from);
	k = mts_swim_gossip(v->node[from], tid, u, 8);
	v->updates += (long)k;
	for (i = 0; i < k; i++)
		mts_swim_apply(v->node[to], &u[i], v->now, &out);
	mts_swim_on_heard(v->node[to], fid, v->now, &out);
	deliver(v, to, &out);
	mts_swim_out_free(&out);
}

static void
deliver(struct vnet *v, int from, struct mts_swim_out *o)
{
	struct mts_swim_out out = { 0 };
	uint8_t fid[16];
	size_t i;
	int to;

	mkid(fid, from);
	for (i = 0; i < o->n; i++) {
		struct mts_swim_effect *e = &o->e[i];

		if (e->type == MTS_SWIM_EVENT) {
			v->events[from][e->update.state]++;
			continue;
		}
		to = idx(e->to);
		if (v->down[from] || v->down[to] || v->cut[from][to]) {
			if (e->type == MTS_SWIM_SEND_PING && v->down[to])
				mts_swim_on_unreachable(v->node[from], e->to,
				    v->now, &out);
			continue;
		}
		piggyback(v, from, to);
		switch (e->type) {
		case MTS_SWIM_SEND_PING:
			mts_swim_on_ping(v->node[to], fid, e->seq, v->now,
			    &out);
			break;
		case MTS_SWIM_SEND_ACK:
			mts_swim_on_ack(v->node[to], fid, e->seq, v->now, &out);
			break;
		case MTS_SWIM_SEND_PINGREQ:
			mts_swim_on_pingreq(v->node[to], fid, e->target, e->seq,
			    v->now, &out);
			break;
		default:
			break;
		}
		deliver(v, to, &out);
		mts_swim_out_reset(&out);
	}
	mts_swim_out_free(&out);
}

/* Node i learns every member of the network from the replicated member
 * list, as gossipd does. */
static void
learn_all(struct vnet *v, int i)
{
	struct mts_swim_update u;
	struct mts_swim_out out = { 0 };
	int j;

	for (j = 0; j < v->n; j++) {
		memset(&u, 0, sizeof(u));
		mkid(u.id, j);
		mts_swim_learn(v->node[i], &u, v->now, &out);
	}
	mts_swim_out_free(&out);
}

/* Word that member `subject` is in state st at incarnation inc. */
static struct mts_swim_update
rumour(int subject, enum mts_swim_state st, uint64_t inc)
{
	struct mts_swim_update u;

	memset(&u, 0, sizeof(u));
	mkid(u.id, subject);
	u.state = st;
	u.inc = inc;
	return u;
}

/* Gossips until s has nothing left to retransmit. */
static void
spend_gossip(struct mts_swim *s)
{
	struct mts_swim_update g[8];

	while (mts_swim_gossip(s, NULL, g, 8) > 0)
		;
}

/* A swim instance of member 0 (by mkid) created at time 0. */
static struct mts_swim *
solo(const struct mts_swim_cfg *cfg, uint64_t seed)
{
	struct mts_swim_update self;

	memset(&self, 0, sizeof(self));
	mkid(self.id, 0);
	return mts_swim_new(cfg, &self, seed, 0);
}

/* Cuts every link between nodes 0-1 and nodes 2-4 (both ways). */
static void
cut_2_3(struct vnet *v)
{
	int i, j;

	for (i = 0; i < 5; i++)
		for (j = 0; j < 5; j++)
			v->cut[i][j] = (i < 2) != (j < 2);
}

static void
vnet_init(struct vnet *v, int n)
{
	struct mts_swim_cfg cfg;
	struct mts_swim_update u;
	int i;

	memset(v, 0, sizeof(*v));
	v->n = n;
	v->now = 1000;
	mts_swim_cfg_defaults(&cfg);
	for (i = 0; i < n; i++) {
		memset(&u, 0, sizeof(u));
		mkid(u.id, i);
		snprintf(u.addr, sizeof(u.addr), "127.0.0.1:%d", 17000 + i);
		u.inc = 100;
		v->node[i] = mts_swim_new(&cfg, &u, (uint64_t)i + 1, v->now);
	}
	for (i = 0; i < n; i++)
		learn_all(v, i);
	memset(v->events, 0, sizeof(v->events));
}

static void
vnet_free(struct vnet *v)
{
	int i;

	for (i = 0; i < v->n; i++)
		mts_swim_free(v->node[i]);
}

/* Runs the virtual clock forward in 10 ms steps. */
static void
run(struct vnet *v, mts_time_t ms)
{
	struct mts_swim_out out = { 0 };
	mts_time_t end = v->now + ms;
	int i;

	for (; v->now < end; v->now += 10)
		for (i = 0; i < v->n; i++) {
			if (v->down[i])
				continue;
			mts_swim_tick(v->node[i], v->now, &out);
			deliver(v, i, &out);
			mts_swim_out_reset(&out);
		}
	mts_swim_out_free(&out);
}

static enum mts_swim_state
view(struct vnet *v, int observer, int subject)
{
	uint8_t id[16];
	const struct mts_swim_member *m;

	mkid(id, subject);
	m = mts_swim_find(v->node[observer], id);
	assert_non_null(m);
	return m->u.state;
}

/* Node i starts again at incarnation inc, learns the member list as
 * gossipd does from the replicated state, and is back on the network. */
static void
restart(struct vnet *v, int i, uint64_t inc, uint64_t seed)
{
	struct mts_swim_cfg cfg;
	struct mts_swim_update u = rumour(i, MTS_SWIM_ALIVE, inc);

	mts_swim_free(v->node[i]);
	mts_swim_cfg_defaults(&cfg);
	v->node[i] = mts_swim_new(&cfg, &u, seed, v->now);
	learn_all(v, i);
	v->down[i] = 0;
}

static void
test_idle_no_false_suspicion(void **state)
{
	struct vnet v;
	int i;

	vnet_init(&v, 5);
	run(&v, 60000);
	for (i = 0; i < 5; i++) {
		assert_int_equal(v.events[i][MTS_SWIM_SUSPECT], 0);
		assert_int_equal(v.events[i][MTS_SWIM_DEAD], 0);
	}
	vnet_free(&v);
}

static void
test_kill_detected_by_all(void **state)
{
	struct vnet v;
	mts_time_t t0;
	int i, all;

	vnet_init(&v, 5);
	run(&v, 3000);
	v.down[2] = 1;
	t0 = v.now;
	do {
		run(&v, 100);
		all = 1;
		for (i = 0; i < 5; i++)
			if (i != 2 && view(&v, i, 2) != MTS_SWIM_DEAD)
				all = 0;
	} while (!all && v.now - t0 < 20000);
	assert_true(all);
	/* suspicion timeout is 4 s at 5 nodes: dead within 6 s */
	assert_in_range(v.now - t0, 4000, 6000);
	for (i = 0; i < 5; i++)
		if (i != 2)
			assert_int_equal(view(&v, i, 0), MTS_SWIM_ALIVE);
	vnet_free(&v);
}

static void
test_indirect_probe_avoids_suspicion(void **state)
{
	struct vnet v;
	int i;

	vnet_init(&v, 5);
	/* the direct link 0 <-> 1 is broken, every other path works */
	v.cut[0][1] = v.cut[1][0] = 1;
	run(&v, 30000);
	for (i = 0; i < 5; i++)
		assert_int_equal(v.events[i][MTS_SWIM_DEAD], 0);
	assert_int_equal(view(&v, 0, 1), MTS_SWIM_ALIVE);
	assert_int_equal(view(&v, 1, 0), MTS_SWIM_ALIVE);
	vnet_free(&v);
}

static void
test_refutation(void **state)
{
	struct vnet v;
	struct mts_swim_update u;
	struct mts_swim_out out = { 0 };
	const struct mts_swim_member *me;

	vnet_init(&v, 4);
	/* node 0 hears a rumour that node 3 is suspect */
	u = rumour(3, MTS_SWIM_SUSPECT, 100);
	mts_swim_apply(v.node[0], &u, v.now, &out);
	assert_int_equal(view(&v, 0, 3), MTS_SWIM_SUSPECT);
	deliver(&v, 0, &out);
	mts_swim_out_free(&out);
	run(&v, 3000);
	/* node 3 refuted with a higher incarnation and everyone believes it */
	me = mts_swim_member_at(v.node[3], 0);
	assert_true(me->u.inc > 100);
	assert_int_equal(view(&v, 0, 3), MTS_SWIM_ALIVE);
	assert_int_equal(view(&v, 1, 3), MTS_SWIM_ALIVE);
	assert_int_equal(v.events[1][MTS_SWIM_DEAD], 0);
	vnet_free(&v);
}

static void
test_restart_rejoins_alive(void **state)
{
	struct vnet v;
	int i;

	vnet_init(&v, 5);
	v.down[4] = 1;
	run(&v, 8000);
	assert_int_equal(view(&v, 0, 4), MTS_SWIM_DEAD);
	restart(&v, 4, 200, 99); /* a fresh, larger starting incarnation */
	run(&v, 5000);
	for (i = 0; i < 4; i++)
		assert_int_equal(view(&v, i, 4), MTS_SWIM_ALIVE);
	vnet_free(&v);
}

/* A member declared dead after it restarted (same incarnation, as a
 * gossipd restarted within the second) and after the news of its fall was
 * disseminated: it talks to its peers, learns from their replies, refutes. */
static void
test_dead_member_learns_and_refutes(void **state)
{
	struct vnet v;
	uint8_t id4[16];
	int i;

	vnet_init(&v, 5);
	run(&v, 3000); /* everyone knows node 4 at its incarnation, 100 */
	mkid(id4, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(mts_swim_find(v.node[i], id4)->u.inc, 100);
	v.down[4] = 1;
	run(&v, 30000); /* dead everywhere, retransmissions long spent */
	for (i = 0; i < 4; i++)
		assert_int_equal(view(&v, i, 4), MTS_SWIM_DEAD);
	restart(&v, 4, 100, 77); /* the incarnation it was declared dead at */
	run(&v, 5000);
	for (i = 0; i < 4; i++)
		assert_int_equal(view(&v, i, 4), MTS_SWIM_ALIVE);
	vnet_free(&v);
}

/* A 2/3 partition long enough for both sides to declare the other dead,
 * then healed: nobody probes a dead member in SWIM's round, so only the
 * pings to dead members (dead_probe_interval) bring the sides together. */
static void
test_partition_heals(void **state)
{
	struct vnet v;
	int i, j, all;
	mts_time_t t0;

	vnet_init(&v, 5);
	run(&v, 3000);
	cut_2_3(&v);
	run(&v, 20000);
	for (i = 0; i < 5; i++)
		for (j = 0; j < 5; j++)
			if ((i < 2) != (j < 2))
				assert_int_equal(view(&v, i, j), MTS_SWIM_DEAD);
	memset(v.cut, 0, sizeof(v.cut));
	t0 = v.now;
	do {
		run(&v, 100);
		all = 1;
		for (i = 0; i < 5; i++)
			for (j = 0; j < 5; j++)
				if (i != j && view(&v, i, j) != MTS_SWIM_ALIVE)
					all = 0;
	} while (!all && v.now - t0 < 30000);
	assert_true(all);
	/* three dead members each side, one pinged a second */
	assert_true(v.now - t0 <= 5000);
	vnet_free(&v);
}

/* A member that already refuted hears an older rumour of its death (whoever
 * holds it missed the refutation, whose retransmissions are spent): it
 * announces its current incarnation again rather than staying silent. */
/* After a 2/3 partition heals (one node's links first, as links come
 * back one by one), nobody is declared dead, even for a moment: the first
 * words across carry one side's belief that the other's members are dead,
 * and a node that passed that belief on to everyone (instead of only to
 * the member it concerns, which refutes it) made that member's own side
 * take it for dead until the refutation caught up — a few ms in gossipd,
 * long enough for an owner to place replacements of its tasks. */
static void
test_heal_no_false_death(void **state)
{
	struct vnet v;
	int i, j, wrong = 0;
	mts_time_t t0;

	vnet_init(&v, 5);
	run(&v, 3000);
	cut_2_3(&v);
	run(&v, 30000); /* long enough for every rumour to be spent */
	/* node 1's links come back first, the others 2 s later */
	for (i = 2; i < 5; i++)
		v.cut[1][i] = v.cut[i][1] = 0;
	memset(v.events, 0, sizeof(v.events));
	for (t0 = v.now; v.now - t0 < 10000;) {
		if (v.now - t0 == 2000)
			memset(v.cut, 0, sizeof(v.cut));
		run(&v, 10);
	}
	for (i = 0; i < 5; i++) /* nobody died meanwhile */
		wrong += v.events[i][MTS_SWIM_DEAD];
	assert_int_equal(wrong, 0);
	for (i = 0; i < 5; i++)
		for (j = 0; j < 5; j++)
			assert_int_equal(view(&v, i, j), MTS_SWIM_ALIVE);
	vnet_free(&v);
}

static void
test_stale_rumour_reannounced(void **state)
{
	struct vnet v;
	struct mts_swim_update u, g[8];
	struct mts_swim_out out = { 0 };
	size_t k, i;
	int found = 0;

	vnet_init(&v, 4);
	u = rumour(3, MTS_SWIM_SUSPECT, 100);
	mts_swim_apply(v.node[3], &u, v.now, &out); /* refutes: 101 */
	spend_gossip(v.node[3]);
	u.state = MTS_SWIM_DEAD;
	mts_swim_apply(v.node[3], &u, v.now, &out); /* dead at 100 < 101 */
	k = mts_swim_gossip(v.node[3], NULL, g, 8);
	for (i = 0; i < k; i++)
		if (g[i].id[0] == 4 && g[i].state == MTS_SWIM_ALIVE &&
		    g[i].inc == 101)
			found = 1;
	assert_true(found);
	mts_swim_out_free(&out);
	vnet_free(&v);
}

/* Counts the messages of type t to member j in out. */
static size_t
sends_to(const struct mts_swim_out *out, enum mts_swim_eff_type t, int j)
{
	uint8_t id[16];
	size_t i, c = 0;

	mkid(id, j);
	for (i = 0; i < out->n; i++)
		c += out->e[i].type == t && memcmp(out->e[i].to, id, 16) == 0;
	return c;
}

/* A member told a rumour of its own answers the teller with its state
 * first: the teller may be the last one holding it, whom the refutation
 * announced again to random members need not reach (mts-sim short at 100
 * nodes, seed 34: a suspecter told its suspect 18 times in 8 s, then
 * declared it dead). A ping's answer is its ack; a message without such a
 * rumour gets none. */
static void
test_rumour_teller_answered(void **state)
{
	struct vnet v;
	struct mts_swim_update u, g[8];
	struct mts_swim_out out = { 0 };
	uint8_t id0[16], id1[16];
	size_t k;

	vnet_init(&v, 4);
	mkid(id0, 0);
	mkid(id1, 1);
	u = rumour(3, MTS_SWIM_SUSPECT, 100);
	mts_swim_apply(v.node[3], &u, v.now, &out); /* refutes: 101 */
	spend_gossip(v.node[3]);
	mts_swim_out_reset(&out);
	/* node 0 missed the refutation: its gossip round tells 3 again */
	mts_swim_apply(v.node[3], &u, v.now, &out);
	mts_swim_on_heard(v.node[3], id0, v.now, &out);
	assert_int_equal(sends_to(&out, MTS_SWIM_SEND_GOSSIP, 0), 1);
	k = mts_swim_gossip(v.node[3], id0, g, 8);
	assert_true(k >= 1);
	assert_int_equal(g[0].id[0], 4);
	assert_int_equal(g[0].state, MTS_SWIM_ALIVE);
	assert_int_equal(g[0].inc, 101);
	/* node 1 says nothing of 3: no message back */
	mts_swim_out_reset(&out);
	mts_swim_on_heard(v.node[3], id1, v.now, &out);
	assert_int_equal(out.n, 0);
	/* a ping with the rumour (dead, now) is answered by its ack alone */
	u.state = MTS_SWIM_DEAD;
	mts_swim_apply(v.node[3], &u, v.now, &out);
	mts_swim_on_heard(v.node[3], id1, v.now, &out);
	mts_swim_on_ping(v.node[3], id1, 7, v.now, &out);
	assert_int_equal(sends_to(&out, MTS_SWIM_SEND_GOSSIP, 1), 0);
	assert_int_equal(sends_to(&out, MTS_SWIM_SEND_ACK, 1), 1);
	k = mts_swim_gossip(v.node[3], id1, g, 8);
	assert_true(k >= 1);
	assert_int_equal(g[0].id[0], 4);
	assert_int_equal(g[0].inc, 101);
	mts_swim_out_free(&out);
	vnet_free(&v);
}

/* A message to a member held dead carries that member's state first and
 * ours next, whatever their retransmissions left. */
static void
test_gossip_to_dead_member_first(void **state)
{
	struct vnet v;
	struct mts_swim_update u, g[8];
	struct mts_swim_out out = { 0 };
	uint8_t id2[16];
	size_t k;

	vnet_init(&v, 4);
	u = rumour(2, MTS_SWIM_DEAD, 100);
	mts_swim_apply(v.node[0], &u, v.now, &out);
	spend_gossip(v.node[0]);
	mkid(id2, 2);
	k = mts_swim_gossip(v.node[0], id2, g, 8);
	assert_int_equal(k, 2);
	assert_int_equal(g[0].id[0], 3);
	assert_int_equal(g[0].state, MTS_SWIM_DEAD);
	assert_int_equal(g[1].id[0], 1);
	assert_int_equal(g[1].state, MTS_SWIM_ALIVE);
	assert_int_equal(mts_swim_gossip(v.node[0], id2, g, 1), 1);
	assert_int_equal(g[0].id[0], 3);
	/* an alive destination gets nothing extra */
	mkid(id2, 1);
	assert_int_equal(mts_swim_gossip(v.node[0], id2, g, 8), 0);
	mts_swim_out_free(&out);
	vnet_free(&v);
}

static void
test_update_precedence(void **state)
{
	struct mts_swim_cfg cfg;
	struct mts_swim_update u = rumour(1, MTS_SWIM_ALIVE, 5);
	struct mts_swim_out out = { 0 };
	struct mts_swim *s;
	const struct mts_swim_member *m;

	mts_swim_cfg_defaults(&cfg);
	s = solo(&cfg, 1);
	mts_swim_apply(s, &u, 0, &out);
	u.state = MTS_SWIM_DEAD;
	u.inc = 4; /* older news is ignored */
	mts_swim_apply(s, &u, 0, &out);
	m = mts_swim_find(s, u.id);
	assert_int_equal(m->u.state, MTS_SWIM_ALIVE);
	u.state = MTS_SWIM_ALIVE;
	u.inc = 5; /* alive needs a strictly larger incarnation */
	u.state = MTS_SWIM_SUSPECT;
	mts_swim_apply(s, &u, 0, &out);
	assert_int_equal(m->u.state, MTS_SWIM_SUSPECT);
	u.state = MTS_SWIM_ALIVE;
	mts_swim_apply(s, &u, 0, &out);
	assert_int_equal(m->u.state, MTS_SWIM_SUSPECT);
	u.inc = 6;
	mts_swim_apply(s, &u, 0, &out);
	assert_int_equal(m->u.state, MTS_SWIM_ALIVE);
	u.state = MTS_SWIM_LEFT;
	mts_swim_apply(s, &u, 0, &out);
	assert_int_equal(m->u.state, MTS_SWIM_LEFT);
	/* piggyback budget: 4 * ceil(log10(3)) = 4 sends, then nothing */
	{
		struct mts_swim_update g[4];
		int sends = 0;

		while (mts_swim_gossip(s, NULL, g, 4) > 0 && sends < 100)
			sends++;
		assert_in_range(sends, 1, 8);
	}
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

/* Only news this node found out itself is flagged for broadcasting: a
 * suspicion raised by its own failed probe, and the death that suspicion
 * ran out into; what it heard in gossip, and declared from it, is not
 * (gossipd's broadcast_news, one message to 64 members each, made every
 * death cost a cluster N x 64 messages). */
static void
test_news_only_firsthand(void **state)
{
	struct mts_swim_cfg cfg;
	struct mts_swim_update u = rumour(1, MTS_SWIM_ALIVE, 0);
	struct mts_swim_out out = { 0 };
	struct mts_swim *s;
	mts_time_t t, to;
	size_t i;
	int sus = -1, dead = -1, learned_sus = -1, learned_dead = -1;

	mts_swim_cfg_defaults(&cfg);
	cfg.gossip_interval = 0;
	cfg.dead_probe_interval = 0;
	s = solo(&cfg, 1);
	mts_swim_apply(s, &u, 0, &out);
	mkid(u.id, 2);
	u.state = MTS_SWIM_SUSPECT; /* heard: 2 is suspect */
	mts_swim_apply(s, &u, 0, &out);
	to = mts_swim_suspicion_timeout(s);
	/* 1 never answers: its probes fail here */
	for (t = 0; t <= 2 * to + 3000; t += 10) {
		mts_swim_out_reset(&out);
		mts_swim_tick(s, t, &out);
		if (t == 0)
			mts_swim_apply(s, &u, 0, &out);
		for (i = 0; i < out.n; i++) {
			struct mts_swim_effect *e = &out.e[i];

			if (e->type != MTS_SWIM_EVENT)
				continue;
			/* mkid: member i has id[0] == i + 1 */
			if (e->update.id[0] == 3 &&
			    e->update.state == MTS_SWIM_DEAD)
				learned_dead = e->news;
			if (e->update.id[0] == 2 &&
			    e->update.state == MTS_SWIM_SUSPECT)
				sus = e->news;
			if (e->update.id[0] == 2 &&
			    e->update.state == MTS_SWIM_DEAD)
				dead = e->news;
		}
	}
	mts_swim_out_reset(&out);
	mkid(u.id, 3);
	u.state = MTS_SWIM_ALIVE;
	mts_swim_apply(s, &u, t, &out);
	u.state = MTS_SWIM_SUSPECT;
	mts_swim_apply(s, &u, t, &out);
	for (i = 0; i < out.n; i++)
		if (out.e[i].type == MTS_SWIM_EVENT &&
		    out.e[i].update.state == MTS_SWIM_SUSPECT)
			learned_sus = out.e[i].news;
	assert_int_equal(sus, 1);
	assert_int_equal(dead, 1);
	assert_int_equal(learned_sus, 0);
	assert_int_equal(learned_dead, 0);
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

/* A suspect is sent a message of its own every gossip interval (its
 * suspicion first), even with nothing else to gossip, so that it refutes
 * before the suspicion runs out: nothing else picks a suspect. */
static void
test_suspect_is_told(void **state)
{
	struct vnet v;
	struct mts_swim_update u;
	struct mts_swim_out out = { 0 };
	uint8_t id2[16];
	mts_time_t t;
	size_t i;
	int told = 0;

	vnet_init(&v, 4);
	u = rumour(2, MTS_SWIM_SUSPECT, 100);
	mts_swim_apply(v.node[0], &u, v.now, &out);
	spend_gossip(v.node[0]);
	mkid(id2, 2);
	for (t = v.now; t < v.now + 250 && !told; t += 10) {
		mts_swim_out_reset(&out);
		mts_swim_tick(v.node[0], t, &out);
		for (i = 0; i < out.n; i++)
			told |= out.e[i].type == MTS_SWIM_SEND_GOSSIP &&
			    memcmp(out.e[i].to, id2, 16) == 0;
	}
	assert_true(told);
	/* on the network: 2 hears of it and refutes well within the
	 * suspicion timeout */
	mts_swim_out_free(&out);
	vnet_free(&v);
	vnet_init(&v, 4);
	mts_swim_apply(v.node[0], &u, v.now, &out);
	run(&v, 1000);
	assert_int_equal(view(&v, 0, 2), MTS_SWIM_ALIVE);
	assert_int_equal(v.events[0][MTS_SWIM_DEAD], 0);
	mts_swim_out_free(&out);
	vnet_free(&v);
}

/* One swim instance knowing members 1..n (ids by mkid), none answering. */
static struct mts_swim *
lone(int n, struct mts_swim_out *out)
{
	struct mts_swim_cfg cfg;
	struct mts_swim_update u;
	struct mts_swim *s;
	int i;

	mts_swim_cfg_defaults(&cfg);
	cfg.gossip_interval = 0;
	s = solo(&cfg, 7);
	memset(&u, 0, sizeof(u));
	for (i = 1; i <= n; i++) {
		mkid(u.id, i);
		u.id[1] = (uint8_t)(i >> 8);
		mts_swim_apply(s, &u, 0, out);
	}
	return s;
}

static int
pinged(const struct mts_swim_out *out, const uint8_t id[16])
{
	size_t i;

	for (i = 0; i < out->n; i++)
		if (out->e[i].type == MTS_SWIM_SEND_PING &&
		    memcmp(out->e[i].to, id, 16) == 0)
			return 1;
	return 0;
}

/* A member learned in the middle of a probe round is probed in that
 * round: before, it waited for the next one, as many seconds away as
 * there are members. */
static void
test_new_member_probed_this_round(void **state)
{
	struct mts_swim_out out = { 0 };
	struct mts_swim *s = lone(200, &out);
	struct mts_swim_update u;
	mts_time_t t;
	int seen = 0;

	mts_swim_tick(s, 0, &out); /* the round begins: 200 members */
	memset(&u, 0, sizeof(u));
	mkid(u.id, 201);
	u.id[1] = 201 >> 8;
	mts_swim_apply(s, &u, 10, &out);
	for (t = 10; t <= 200 * 1000 && !seen; t += 100) {
		mts_swim_out_reset(&out);
		mts_swim_tick(s, t, &out);
		seen = pinged(&out, u.id);
	}
	assert_true(seen);
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

/* A member found unreachable when pinged for another member's indirect
 * probe is not probed out of turn: each relay doing so made more relays
 * (its own probe's ping-reqs), and a few crashed members drew all the
 * probes of a cluster. */
static void
test_relay_unreachable_not_urgent(void **state)
{
	struct mts_swim_out out = { 0 };
	struct mts_swim *s = lone(100, &out);
	uint8_t from[16], target[16];
	size_t i;
	int relayed = 0;

	mts_swim_tick(s, 0, &out);
	mkid(from, 1);
	mkid(target, 50);
	mts_swim_out_reset(&out);
	mts_swim_on_pingreq(s, from, target, 9, 100, &out);
	for (i = 0; i < out.n; i++)
		relayed |= out.e[i].type == MTS_SWIM_SEND_PING &&
		    memcmp(out.e[i].to, target, 16) == 0;
	assert_true(relayed);
	mts_swim_out_reset(&out);
	mts_swim_on_unreachable(s, target, 101, &out);
	/* the probe in flight ends at 1000; the next starts there, and is
	 * not the relay's target */
	mts_swim_tick(s, 1000, &out);
	assert_false(pinged(&out, target));
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

/* A message's piggyback looks only at the members owing transmissions:
 * with 5,000 members and one update owed, 400,000 messages took a pass
 * over the whole table each (2 * 10^9 members looked at, 1.7 s of CPU;
 * at 1,000 nodes a fifth of mts-sim's time); now a few. The picks stay
 * those of the whole table's order, also after a member owing some is
 * removed (the others move in the table). */
static void
test_piggyback_looks_at_owed_only(void **state)
{
	struct mts_swim_out out = { 0 };
	struct mts_swim_update u, g[8];
	struct mts_swim *s = lone(5000, &out);
	clock_t t0;
	double cpu;
	size_t k, j;
	int i, seen;

	mts_swim_out_reset(&out);
	spend_gossip(s);
	memset(&u, 0, sizeof(u));
	mkid(u.id, 7);
	t0 = clock();
	for (i = 0; i < 400000; i++) {
		u.inc = (uint64_t)i + 1; /* a refutation: newer, owed again */
		mts_swim_apply(s, &u, 0, &out);
		mts_swim_out_reset(&out);
		k = mts_swim_gossip(s, NULL, g, 8);
		assert_int_equal(k, 1);
		assert_int_equal(g[0].inc, u.inc);
	}
	cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
	print_message("400,000 piggybacks among 5,000 members: %.3f s\n", cpu);
	assert_true(cpu < 0.3);
	/* four owed, the first removed: the other three still go, in the
	 * table's order (all sent as often) */
	spend_gossip(s);
	for (i = 5; i <= 11; i += 2) {
		mkid(u.id, i);
		u.id[1] = (uint8_t)(i >> 8);
		u.inc = 1000000;
		mts_swim_apply(s, &u, 0, &out);
	}
	mts_swim_out_reset(&out);
	mkid(u.id, 5);
	mts_swim_remove(s, u.id);
	k = mts_swim_gossip(s, NULL, g, 8);
	assert_int_equal(k, 3);
	for (j = 0, seen = 0; j < k; j++) {
		assert_int_not_equal(idx(g[j].id), 5); /* removed */
		seen |= 1 << idx(g[j].id);
	}
	assert_int_equal(seen, (1 << 7) | (1 << 9) | (1 << 11));
	assert_true(idx(g[0].id) < idx(g[1].id) && idx(g[1].id) < idx(g[2].id));
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

/* 4 x ceil(log10(n + 1)): an update's transmissions at n members. */
static int
retransmits_at(size_t n)
{
	size_t p;
	int r = 0;

	for (p = 1; p < n + 1; p *= 10)
		r += 4;
	return r;
}

/* The member's place in s's table. */
static size_t
place_of(struct mts_swim *s, const uint8_t id[16])
{
	size_t i;

	for (i = 0; i < mts_swim_count(s); i++)
		if (memcmp(mts_swim_member_at(s, i)->u.id, id, 16) == 0)
			return i;
	fail();
	return 0;
}

/* What the piggyback should pick, by sorting every member owing
 * transmissions: most owed first, then the table's order (this node's
 * own first). skip: members not to pick (-1: none). */
static size_t
reference_pick(struct mts_swim *s, const int *owed, int n, int skip1, int skip2,
    int *pick, size_t max)
{
	size_t k = 0, j;
	int i, t;

	for (i = 0; i < n; i++) {
		if (owed[i] == 0 || i == skip1 || i == skip2)
			continue;
		pick[k++] = i;
		for (j = k - 1; j > 0; j--) {
			uint8_t a[16], b[16];

			mkid(a, pick[j]);
			mkid(b, pick[j - 1]);
			if (owed[pick[j]] < owed[pick[j - 1]] ||
			    (owed[pick[j]] == owed[pick[j - 1]] &&
			        place_of(s, a) > place_of(s, b)))
				break;
			t = pick[j];
			pick[j] = pick[j - 1];
			pick[j - 1] = t;
		}
	}
	return k < max ? k : max;
}

/* The piggyback picks what a sort of every member owing transmissions
 * would (a heap since the owed list, passed whole for every message,
 * cost O(owed) a message): 3,000 steps of members added, refuted,
 * suspected and removed (the others move in the table; a removed one
 * comes back through the member list), this node
 * refuting a rumour of itself, and messages of
 * 1 to 8 updates, some to a suspect, which gets its own state and ours
 * first and neither among the picks. */
static void
test_piggyback_order(void **state)
{
	struct mts_swim_cfg cfg;
	struct mts_swim_out out = { 0 };
	struct mts_swim_update u, g[8];
	struct mts_swim *s;
	int owed[200] = { 0 }, known[200] = { 0 }, suspect[200] = { 0 };
	int gone[200] = { 0 };
	uint64_t inc[200] = { 0 }, r = 12345;
	int pick[200], n = 1, step, i, to, first, op;
	size_t k, max, j;

	mts_swim_cfg_defaults(&cfg);
	cfg.gossip_interval = 0;
	s = solo(&cfg, 3);
	owed[0] = retransmits_at(1);
	known[0] = 1;
	for (step = 0; step < 3000; step++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		i = (int)((r >> 33) % (uint64_t)n);
		memset(&u, 0, sizeof(u));
		op = (int)((r >> 20) % 10);
		if (op < 2 && n < 200)
			i = n++; /* a member never heard of */
		if (op < 4 && i > 0) {
			mkid(u.id, i);
			if (gone[i]) /* named again by the member list */
				mts_swim_learn(s, &u, 0, &out);
			gone[i] = 0;
			u.inc = ++inc[i];
			u.state = (r >> 40) % 3 == 0 ? MTS_SWIM_SUSPECT
			                             : MTS_SWIM_ALIVE;
			mts_swim_apply(s, &u, 0, &out);
			known[i] = 1;
			suspect[i] = u.state == MTS_SWIM_SUSPECT;
			owed[i] = retransmits_at(mts_swim_count(s));
		} else if (op == 4 && i == 0) {
			mkid(u.id, 0); /* held suspect: this node refutes */
			u.state = MTS_SWIM_SUSPECT;
			mts_swim_apply(s, &u, 0, &out);
			owed[0] = retransmits_at(mts_swim_count(s));
		} else if (op == 4 && known[i]) {
			mkid(u.id, i);
			mts_swim_remove(s, u.id);
			known[i] = suspect[i] = owed[i] = 0;
			gone[i] = 1;
			inc[i] = 0;
		} else if (op > 4) {
			to = (r >> 44) % 2 ? i : -1;
			mkid(u.id, to);
			max = 1 + (r >> 50) % 8;
			k = mts_swim_gossip(s, to >= 0 ? u.id : NULL, g, max);
			first = to > 0 && known[to] && suspect[to];
			if (first) {
				assert_int_equal(idx(g[0].id), to);
				if (max > 1)
					assert_int_equal(idx(g[1].id), 0);
			}
			first = first ? (max > 1 ? 2 : 1) : 0;
			assert_int_equal(k,
			    first +
			        reference_pick(s, owed, n, first ? to : -1,
			            first ? 0 : -1, pick, max - (size_t)first));
			for (j = (size_t)first; j < k; j++) {
				assert_int_equal(idx(g[j].id), pick[j - first]);
				owed[pick[j - first]]--;
			}
		}
		mts_swim_out_reset(&out);
	}
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

/* A message's piggyback costs what it picks, not what is owed: 10,000
 * members each owing its transmissions (a whole-cluster restart leaves
 * every node owing about two updates a member), spent 8 a message. A
 * pass over the owed list for each message was 10,000 members looked at
 * for each of some 19,000 messages. */
static void
test_piggyback_costs_what_it_picks(void **state)
{
	struct mts_swim_out out = { 0 };
	struct mts_swim_update g[8];
	struct mts_swim *s = lone(10000, &out);
	size_t k, sent = 0, msgs = 0, expect = 4;
	clock_t t0;
	double cpu;
	int i;

	for (i = 1; i <= 10000; i++)
		expect += (size_t)retransmits_at((size_t)i + 1);
	t0 = clock();
	while ((k = mts_swim_gossip(s, NULL, g, 8)) > 0) {
		sent += k;
		msgs++;
	}
	cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
	print_message("%zu updates in %zu messages among 10,000 owed: %.3f s\n",
	    sent, msgs, cpu);
	assert_int_equal(sent, expect);
	assert_true(cpu < 0.2);
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

/* A member read from the replicated member list is added (with its
 * event) and not gossiped: every node reads the same list, and alive at
 * 0 overrides nothing. Its own news and any news of it still are; so is
 * a member first heard of in gossip. Before, all 1,000 were owed. */
static void
test_list_member_not_gossiped(void **state)
{
	struct mts_swim_cfg cfg;
	struct mts_swim_out out = { 0 };
	struct mts_swim_update u, g[8];
	struct mts_swim *s;
	const struct mts_swim_member *m;
	size_t i, k;

	mts_swim_cfg_defaults(&cfg);
	s = solo(&cfg, 5);
	spend_gossip(s); /* our own alive */
	for (i = 1; i <= 1000; i++) {
		u = rumour((int)(i & 255), MTS_SWIM_SUSPECT, 9); /* not read */
		u.id[1] = (uint8_t)(i >> 8);
		mts_swim_learn(s, &u, 10, &out);
	}
	assert_int_equal(mts_swim_count(s), 1001);
	assert_int_equal(out.n, 1000);
	for (i = 0; i < out.n; i++) {
		assert_int_equal(out.e[i].type, MTS_SWIM_EVENT);
		assert_int_equal(out.e[i].update.state, MTS_SWIM_ALIVE);
		assert_int_equal(out.e[i].update.inc, 0);
	}
	assert_int_equal(mts_swim_gossip(s, NULL, g, 8), 0);
	/* nothing owed: no gossip round sends anything */
	mts_swim_out_reset(&out);
	mts_swim_tick(s, 1000, &out);
	for (i = 0; i < out.n; i++)
		assert_int_not_equal(out.e[i].type, MTS_SWIM_SEND_GOSSIP);
	/* member 5's own alive, heard: gossiped, at its incarnation */
	u = rumour(5, MTS_SWIM_ALIVE, 7);
	snprintf(u.addr, sizeof(u.addr), "10.0.0.5:7000");
	mts_swim_out_reset(&out);
	mts_swim_apply(s, &u, 20, &out);
	k = mts_swim_gossip(s, NULL, g, 8);
	assert_int_equal(k, 1);
	assert_int_equal(idx(g[0].id), 5);
	assert_int_equal(g[0].inc, 7);
	spend_gossip(s);
	/* its record read again (another address) changes nothing */
	u = rumour(5, MTS_SWIM_ALIVE, 0);
	snprintf(u.addr, sizeof(u.addr), "10.9.9.9:1");
	mts_swim_out_reset(&out);
	mts_swim_learn(s, &u, 30, &out);
	assert_int_equal(out.n, 0);
	m = mts_swim_find(s, u.id);
	assert_int_equal(m->u.inc, 7);
	assert_string_equal(m->u.addr, "10.0.0.5:7000");
	assert_int_equal(mts_swim_gossip(s, NULL, g, 8), 0);
	/* a suspicion of a listed member is gossiped */
	u = rumour(6, MTS_SWIM_SUSPECT, 0);
	mts_swim_apply(s, &u, 40, &out);
	k = mts_swim_gossip(s, NULL, g, 8);
	assert_int_equal(k, 1);
	assert_int_equal(g[0].state, MTS_SWIM_SUSPECT);
	spend_gossip(s);
	/* a member first heard of in gossip is gossiped on */
	u = rumour(3, MTS_SWIM_ALIVE, 2);
	u.id[1] = 9; /* 2,307: in no list */
	mts_swim_apply(s, &u, 50, &out);
	k = mts_swim_gossip(s, NULL, g, 8);
	assert_int_equal(k, 1);
	assert_int_equal(g[0].id[1], 9);
	spend_gossip(s);
	/* our own refutation is */
	u = rumour(0, MTS_SWIM_SUSPECT, 0);
	mts_swim_apply(s, &u, 60, &out);
	k = mts_swim_gossip(s, NULL, g, 8);
	assert_int_equal(k, 1);
	assert_int_equal(idx(g[0].id), 0);
	assert_int_equal(g[0].inc, 1);
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

/* A whole-cluster restart: every node starts again at a new incarnation
 * and reads every member from the list on its disk. Each node's own
 * alive news still reaches every other, and the gossip is that news
 * alone: its own alive 4 times (sent when it knew only itself), each
 * other's new incarnation 4 x ceil(log10(13)) = 8 times, 92 a node, 1,104
 * in all. Before, each also gossiped the 11 members it read, until their
 * news came: 1,341. */
static void
test_restart_gossips_news_only(void **state)
{
	struct vnet v;
	const struct mts_swim_member *m;
	uint8_t id[16];
	int i, j;

	vnet_init(&v, MAXN);
	run(&v, 30000); /* the first start's news spent */
	for (i = 0; i < MAXN; i++)
		restart(&v, i, 500 + (uint64_t)i, 40 + (uint64_t)i);
	v.updates = 0;
	run(&v, 30000);
	for (i = 0; i < MAXN; i++)
		for (j = 0; j < MAXN; j++) {
			mkid(id, j);
			m = mts_swim_find(v.node[i], id);
			assert_non_null(m);
			assert_int_equal(m->u.state, MTS_SWIM_ALIVE);
			assert_int_equal(m->u.inc, 500 + (uint64_t)j);
		}
	print_message("%ld updates sent after the restart\n", v.updates);
	assert_true(v.updates <= MAXN * ((MAXN - 1) * 8 + 4));
	vnet_free(&v);
}

/* A joining member's record reaches some nodes late: those still without
 * it learn the member from its own alive news, which it gossips itself
 * and everyone who hears it gossips on. */
static void
test_joiner_known_by_its_news(void **state)
{
	struct vnet v;
	const struct mts_swim_member *m;
	struct mts_swim_cfg cfg;
	struct mts_swim_update u = rumour(5, MTS_SWIM_ALIVE, 300);
	uint8_t id[16];
	int i;

	vnet_init(&v, 5);
	run(&v, 20000);
	mts_swim_cfg_defaults(&cfg);
	v.node[5] = mts_swim_new(&cfg, &u, 77, v.now);
	v.n = 6;
	learn_all(&v, 5); /* the joiner has the whole list */
	run(&v, 10000);
	mkid(id, 5);
	for (i = 0; i < 5; i++) {
		m = mts_swim_find(v.node[i], id);
		assert_non_null(m);
		assert_int_equal(m->u.state, MTS_SWIM_ALIVE);
		assert_int_equal(m->u.inc, 300);
	}
	vnet_free(&v);
}

/* A removed member stays out: gossip of it from a node that has not
 * merged its tombstone yet (at a newer incarnation, or of a member never
 * held: a tombstone read at startup) neither adds it back nor publishes
 * it, until the member list names it again (a newer live m/ record); one
 * that dead_reclaim forgot comes back with its news. */
static void
test_removed_member_stays_out(void **state)
{
	struct mts_swim_cfg cfg;
	struct mts_swim_out out = { 0 };
	struct mts_swim_update u = rumour(1, MTS_SWIM_ALIVE, 5), g[8];
	struct mts_swim *s;
	const struct mts_swim_member *m;

	mts_swim_cfg_defaults(&cfg);
	cfg.dead_reclaim = 1000;
	s = solo(&cfg, 7);
	mts_swim_apply(s, &u, 0, &out);
	assert_non_null(mts_swim_find(s, u.id));
	spend_gossip(s);
	mts_swim_remove(s, u.id);
	mts_swim_out_reset(&out);
	u.inc = 6;
	mts_swim_apply(s, &u, 10, &out);
	u.state = MTS_SWIM_SUSPECT;
	mts_swim_apply(s, &u, 10, &out);
	assert_null(mts_swim_find(s, u.id));
	assert_int_equal(out.n, 0); /* no "alive" event */
	assert_int_equal(mts_swim_gossip(s, NULL, g, 8), 0);
	u = rumour(2, MTS_SWIM_ALIVE, 1);
	mts_swim_remove(s, u.id);
	mts_swim_apply(s, &u, 10, &out);
	assert_null(mts_swim_find(s, u.id));
	assert_int_equal(out.n, 0);
	/* named again by the member list, then its news counts again */
	u = rumour(1, MTS_SWIM_ALIVE, 7);
	mts_swim_learn(s, &u, 20, &out);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.e[0].type, MTS_SWIM_EVENT);
	mts_swim_apply(s, &u, 20, &out);
	m = mts_swim_find(s, u.id);
	assert_non_null(m);
	assert_int_equal(m->u.inc, 7);
	/* held dead, forgotten by dead_reclaim, back alive with its news */
	u = rumour(1, MTS_SWIM_DEAD, 7);
	mts_swim_apply(s, &u, 30, &out);
	spend_gossip(s);
	mts_swim_tick(s, 2000, &out);
	assert_null(mts_swim_find(s, u.id));
	u = rumour(1, MTS_SWIM_ALIVE, 8);
	mts_swim_apply(s, &u, 2100, &out);
	assert_non_null(mts_swim_find(s, u.id));
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

/* Two probes from now: the member pinged by each (-1: none). */
static int
next_pinged(struct mts_swim *s, struct mts_swim_out *out, mts_time_t *t)
{
	size_t i;
	int who = -1;

	for (; who < 0 && *t < 100000; *t += 100) {
		mts_swim_out_reset(out);
		mts_swim_tick(s, *t, out);
		for (i = 0; i < out->n; i++)
			if (out->e[i].type == MTS_SWIM_SEND_PING)
				who = idx(out->e[i].to);
	}
	return who;
}

/* A death declared at an older incarnation than ours (the declarer knew
 * the member only from the member list, at 0) is ignored, but the member
 * is probed next, once for the incarnation we hold: before, only our
 * round-robin found it, at 1,000 nodes up to 70 s later. */
static void
test_stale_death_probes_member(void **state)
{
	struct mts_swim_out out = { 0 };
	struct mts_swim *s = lone(200, &out);
	struct mts_swim_update u;
	mts_time_t t = 0;
	int a, b;

	mts_swim_tick(s, 0, &out); /* the round begins: 200 members */
	memset(&u, 0, sizeof(u));
	mkid(u.id, 77);
	u.inc = 5; /* its own alive, heard here */
	mts_swim_apply(s, &u, 10, &out);
	u.inc = 0;
	u.state = MTS_SWIM_DEAD; /* another's detection, at 0 */
	mts_swim_out_reset(&out);
	mts_swim_apply(s, &u, 20, &out);
	assert_int_equal(out.n, 0); /* stale: no event, nothing gossiped */
	assert_int_equal(mts_swim_find(s, u.id)->u.state, MTS_SWIM_ALIVE);
	t = 1000;
	assert_int_equal(next_pinged(s, &out, &t), 77);
	/* once for incarnation 5: the same rumour again is not a hint */
	mts_swim_on_ack(s, u.id, 0, t, &out); /* not the probe's: no effect */
	mts_swim_apply(s, &u, t, &out);
	t += 1000;
	a = next_pinged(s, &out, &t);
	assert_int_not_equal(a, 77);
	/* two members hinted: one probe of the round-robin between */
	for (a = 80; a <= 81; a++) {
		mkid(u.id, a);
		u.state = MTS_SWIM_ALIVE;
		u.inc = 5;
		mts_swim_apply(s, &u, t, &out);
		u.state = MTS_SWIM_SUSPECT;
		u.inc = 0;
		mts_swim_apply(s, &u, t,
		    &out); /* 81: one is pending, not taken */
	}
	t += 1000;
	assert_int_equal(next_pinged(s, &out, &t), 80);
	t += 1000;
	b = next_pinged(s, &out, &t);
	assert_true(b != 80 && b != 81);
	mts_swim_out_free(&out);
	mts_swim_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_no_false_suspicion),
		cmocka_unit_test(test_kill_detected_by_all),
		cmocka_unit_test(test_indirect_probe_avoids_suspicion),
		cmocka_unit_test(test_refutation),
		cmocka_unit_test(test_restart_rejoins_alive),
		cmocka_unit_test(test_dead_member_learns_and_refutes),
		cmocka_unit_test(test_partition_heals),
		cmocka_unit_test(test_heal_no_false_death),
		cmocka_unit_test(test_stale_rumour_reannounced),
		cmocka_unit_test(test_gossip_to_dead_member_first),
		cmocka_unit_test(test_update_precedence),
		cmocka_unit_test(test_news_only_firsthand),
		cmocka_unit_test(test_suspect_is_told),
		cmocka_unit_test(test_rumour_teller_answered),
		cmocka_unit_test(test_new_member_probed_this_round),
		cmocka_unit_test(test_relay_unreachable_not_urgent),
		cmocka_unit_test(test_piggyback_looks_at_owed_only),
		cmocka_unit_test(test_piggyback_order),
		cmocka_unit_test(test_piggyback_costs_what_it_picks),
		cmocka_unit_test(test_stale_death_probes_member),
		cmocka_unit_test(test_list_member_not_gossiped),
		cmocka_unit_test(test_restart_gossips_news_only),
		cmocka_unit_test(test_joiner_known_by_its_news),
		cmocka_unit_test(test_removed_member_stays_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
