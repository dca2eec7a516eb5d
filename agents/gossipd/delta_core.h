/* delta_core.h: delta-push decisions — a bounded set of (key, hlc, origin) fingerprints with FIFO eviction, and the next hops of a push (fanout outside its sent-to set). */
#ifndef MTS_DELTA_CORE_H
#define MTS_DELTA_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

struct mts_seen;

/* A set remembering the last cap distinct updates. */
struct mts_seen *mts_seen_new(size_t cap);
void mts_seen_free(struct mts_seen *);
/* Records (key, hlc, origin); 1 if it was new (forward it), 0 if seen. */
int mts_seen_add(struct mts_seen *, const uint8_t *key, size_t klen,
    uint64_t hlc, const uint8_t origin[MTS_NODE_ID_LEN]);
/* The same in two steps, for a caller that keeps the fingerprint of a
 * record it sees many times (mts-sim: one record, 1,000 nodes). */
uint64_t mts_seen_fingerprint(const uint8_t *key, size_t klen, uint64_t hlc,
    const uint8_t origin[MTS_NODE_ID_LEN]);
int mts_seen_add_fp(struct mts_seen *, uint64_t fingerprint);
size_t mts_seen_count(const struct mts_seen *);

#define MTS_DELTA_MAX_SENT 64

/* The nodes a push already reached or was sent to (carried along with the
 * push, so that each hop picks yet other nodes). */
struct mts_delta_sent {
	uint8_t id[MTS_DELTA_MAX_SENT][MTS_NODE_ID_LEN];
	size_t n;
};

int mts_delta_sent_has(const struct mts_delta_sent *,
    const uint8_t id[MTS_NODE_ID_LEN]);
/* Adds id unless present or the set is full. */
void mts_delta_sent_add(struct mts_delta_sent *,
    const uint8_t id[MTS_NODE_ID_LEN]);
/*
 * A push reaches a member that no hop picked only by anti-entropy (a walk
 * every ae_interval): with every node forwarding once to f random
 * members, a member is missed with probability about e^-f, so at 1,000
 * members and f = 3 each write missed about 55 of them (mts-sim: push
 * alone reached 94.5% of the nodes, not one write all of them, and the
 * p99 to all was 3.9 s, the walks' second rounds). The fanout grows with
 * the cluster instead, ceil(ln n) - 1 (6 at 1,000 members: about 2.5
 * missed a write, which the next walk brings), and its bytes come from
 * the sent-to set: a push carries only its last MTS_DELTA_WIRE_SENT ids
 * (the sender's own targets and the hops just before), which spare about
 * as many copies as the 64 ids of the whole lineage once the cluster is
 * much larger than 64 (a random member is in a set of 64 ids of 1,000 6%
 * of the time), and were four fifths of a copy's bytes at 1,000.
 */
#define MTS_DELTA_WIRE_SENT 12

/* The fanout of a push among n known members: cfg when it is set (> 0),
 * else ceil(ln n) - 1, at least 3; at most 16 either way. */
int mts_delta_fanout(int cfg, size_t n);
/* The index of the first of sent's ids a push carries along (the last
 * MTS_DELTA_WIRE_SENT of them). */
size_t mts_delta_wire_first(const struct mts_delta_sent *);
/* How many random alive members a hop draws as candidates: enough that
 * fanout of them are outside sent whatever it holds (distinct draws), at
 * most 64. */
size_t mts_delta_ncand(const struct mts_delta_sent *, int fanout);

/* The next hops of a push from self: the first fanout (at most 16) of
 * cand (random alive members) outside sent, copied into out; sent grows
 * by self and by them. Returns how many. */
size_t mts_delta_targets(struct mts_delta_sent *sent,
    const uint8_t self[MTS_NODE_ID_LEN], const uint8_t (*cand)[MTS_NODE_ID_LEN],
    size_t ncand, int fanout, uint8_t (*out)[MTS_NODE_ID_LEN]);

#endif
