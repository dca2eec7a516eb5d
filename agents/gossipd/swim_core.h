/* swim_core.h: SWIM membership as a pure state machine — probes, indirect probes, suspicion with refutation, incarnations, piggybacked updates. */
#ifndef MTS_SWIM_CORE_H
#define MTS_SWIM_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "mtstime.h"

#define MTS_SWIM_ADDR_MAX 64
#define MTS_SWIM_NAME_MAX 64

enum mts_swim_state {
	MTS_SWIM_ALIVE = 0,
	MTS_SWIM_SUSPECT = 1,
	MTS_SWIM_DEAD = 2,
	MTS_SWIM_LEFT = 3,
};

/* What is known of one member; also the unit of gossip. The id, state
 * and incarnation come first, with the member's times: most look-ups
 * read only those, and a member's first cache line holds them. */
struct mts_swim_update {
	uint8_t id[MTS_NODE_ID_LEN];
	enum mts_swim_state state;
	uint64_t inc;
	char addr[MTS_SWIM_ADDR_MAX];
	char name[MTS_SWIM_NAME_MAX];
};

/* A member as held: the same fields, its address and name stored once
 * and sized to fit ("addr\0name\0", owned by the member). Fixed 64-byte
 * buffers made a member 216 bytes and a table of N members N x 216 (all N
 * members of each of 5,000 simulated nodes: 5.4 GB). */
struct mts_swim_entry {
	uint8_t id[MTS_NODE_ID_LEN];
	enum mts_swim_state state;
	uint64_t inc;
	const char *addr;
	const char *name;
};

struct mts_swim_member {
	mts_time_t since;         /* when the state last changed */
	mts_time_t last_seen;     /* last ack or message from it */
	mts_time_t suspect_until; /* when a suspect is declared dead */
	int is_self;
	struct mts_swim_entry u;
};

struct mts_swim_cfg {
	mts_time_t probe_interval; /* default 1000 */
	mts_time_t probe_timeout;  /* default 500 */
	int indirect;              /* default 3 */
	int suspicion_mult;        /* default 4 */
	int retransmit_mult;       /* default 4 */
	mts_time_t dead_reclaim;   /* forget dead members after this; 0 never */
	/* every this often the next dead members in turn are pinged (one per
	 * 5 dead; 0: never), so that the two sides of a healed partition, or
	 * a member restarted unheard, find each other again (default 1000) */
	mts_time_t dead_probe_interval;
	/* while any update still owes transmissions, every gossip_interval
	 * an otherwise empty message goes to gossip_fanout random alive or
	 * suspect members to carry them, and while any member is suspect
	 * one goes to a random suspect (defaults 200 ms, 3; 0: updates only
	 * ride on probes): after a partition heals every member has news of
	 * half the cluster, and the probes' 2 or 3 messages a second carried
	 * it too slowly — suspicions from before the heal ran out before the
	 * refutations arrived, 8 s after a heal of 100 nodes (mts-sim) */
	mts_time_t gossip_interval;
	int gossip_fanout;
};

enum mts_swim_eff_type {
	MTS_SWIM_SEND_PING,    /* to, seq */
	MTS_SWIM_SEND_ACK,     /* to, seq */
	MTS_SWIM_SEND_PINGREQ, /* to, target, seq */
	MTS_SWIM_SEND_GOSSIP,  /* to: a message carrying only updates */
	MTS_SWIM_EVENT,        /* member changed state: update */
};

struct mts_swim_effect {
	enum mts_swim_eff_type type;
	uint8_t to[MTS_NODE_ID_LEN];
	uint8_t target[MTS_NODE_ID_LEN];
	uint64_t seq;
	struct mts_swim_update update; /* EVENT */
	/* EVENT: bad news this node found out itself — its own probe of the
	 * member failed, or the suspicion that probe raised ran out — rather
	 * than heard in gossip. Only such news is worth telling many members
	 * at once (gossipd's broadcast_news); what every member learns and
	 * declares from gossip spreads by piggybacking: told at once by all,
	 * one death cost N x 64 messages and a 50/50 partition N^2 x 16. */
	int news;
};

/* Effects produced by one call, appended in order. */
struct mts_swim_out {
	struct mts_swim_effect *e;
	size_t n, cap;
};

void mts_swim_out_reset(struct mts_swim_out *);
void mts_swim_out_free(struct mts_swim_out *);

struct mts_swim;

void mts_swim_cfg_defaults(struct mts_swim_cfg *);
/* self: this node (its inc is the starting incarnation: pass something that
 * grows across restarts, e.g. wall-clock seconds). seed: the PRNG seed. */
struct mts_swim *mts_swim_new(const struct mts_swim_cfg *,
    const struct mts_swim_update *self, uint64_t seed, mts_time_t now);
void mts_swim_free(struct mts_swim *);

/* Timers: probes, indirect probes, suspicion expiry. Call at least every
 * mts_swim_next_deadline(). */
void mts_swim_tick(struct mts_swim *, mts_time_t now, struct mts_swim_out *);
mts_time_t mts_swim_next_deadline(const struct mts_swim *);

/* Messages from an authenticated peer `from`. */
void mts_swim_on_ping(struct mts_swim *, const uint8_t from[MTS_NODE_ID_LEN],
    uint64_t seq, mts_time_t now, struct mts_swim_out *);
void mts_swim_on_ack(struct mts_swim *, const uint8_t from[MTS_NODE_ID_LEN],
    uint64_t seq, mts_time_t now, struct mts_swim_out *);
void mts_swim_on_pingreq(struct mts_swim *, const uint8_t from[MTS_NODE_ID_LEN],
    const uint8_t target[MTS_NODE_ID_LEN], uint64_t seq, mts_time_t now,
    struct mts_swim_out *);
/* The main could not reach `to` at all (connect refused, connection lost):
 * a direct probe in flight to it fails now rather than at its timeout. */
void mts_swim_on_unreachable(struct mts_swim *,
    const uint8_t to[MTS_NODE_ID_LEN], mts_time_t now, struct mts_swim_out *);
/* Any traffic from a peer proves it is alive at least at the incarnation we
 * know (it refutes suspicion on its own through updates). Call it after
 * applying the message's updates: when they held a suspicion or death of
 * this node, the peer is sent a message (MTS_SWIM_SEND_GOSSIP; the ack,
 * for a ping) whose piggyback starts with this node's state. */
void mts_swim_on_heard(struct mts_swim *, const uint8_t from[MTS_NODE_ID_LEN],
    mts_time_t now, struct mts_swim_out *);

/* A membership update received (piggybacked, or in a hello: the
 * member's own news or another's); an unknown member is added and its
 * update gossiped on, unless it was removed (mts_swim_remove). */
void mts_swim_apply(struct mts_swim *, const struct mts_swim_update *,
    mts_time_t now, struct mts_swim_out *);
/* A member named by the replicated member list (its m/ record, read from
 * this node's store, or the bootstrap's list at a join): an unknown one
 * is added alive at incarnation 0 (u's state and inc are not read), with
 * its event, and not queued for gossip; a known one is left as it is. A
 * removed one is taken back. */
void mts_swim_learn(struct mts_swim *, const struct mts_swim_update *,
    mts_time_t now, struct mts_swim_out *);
/* This node leaves: announces LEFT with a higher incarnation. */
void mts_swim_leave(struct mts_swim *, mts_time_t now, struct mts_swim_out *);
/* Changes this node's advertised address and name (NULL keeps one) and
 * announces them with a higher incarnation. */
void mts_swim_set_self(struct mts_swim *, const char *addr, const char *name);
/* Forgets a member entirely (removed from the cluster) and refuses
 * updates about it (mts_swim_apply) until mts_swim_learn names it again;
 * an id not held is refused as well. */
void mts_swim_remove(struct mts_swim *, const uint8_t id[MTS_NODE_ID_LEN]);

/* Up to max updates to piggyback on the next message, least-sent first
 * (then the member table's order, this node's own first), O(log owed)
 * each; each update is sent retransmit_mult * ceil(log10(n+1)) times,
 * n the member count when it was queued. to (NULL:
 * unknown) is the message's destination: when this node holds it suspect
 * or dead, that update comes first, unasked, so that the member learns it
 * and refutes, and this node's own next; when it told this node a rumour
 * of its own (mts_swim_on_heard), this node's own comes first. */
size_t mts_swim_gossip(struct mts_swim *, const uint8_t *to,
    struct mts_swim_update *out, size_t max);

size_t mts_swim_count(const struct mts_swim *);
const struct mts_swim_member *mts_swim_member_at(const struct mts_swim *,
    size_t i);
/* The member as an update (what gossip would send of it). */
void mts_swim_member_update(const struct mts_swim_member *,
    struct mts_swim_update *);
const struct mts_swim_member *mts_swim_find(const struct mts_swim *,
    const uint8_t id[MTS_NODE_ID_LEN]);
/* Picks up to max random alive members other than self and `except` (may be
 * NULL) into out; returns how many. */
size_t mts_swim_random_alive(struct mts_swim *, const uint8_t *except,
    uint8_t (*out)[MTS_NODE_ID_LEN], size_t max);
/* The current suspicion timeout for the member count. */
mts_time_t mts_swim_suspicion_timeout(const struct mts_swim *);
const char *mts_swim_state_name(enum mts_swim_state);

#endif
