/* state_core.h: the statestore's pure decisions — merge acceptance with prune frontiers, compare-and-set, key ownership, tombstone expiry. */
#ifndef MTS_STATE_CORE_H
#define MTS_STATE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* What a pruned key remembers (meta CF, key "pf/" + key): the (hlc, origin)
 * of the tombstone that was pruned, and when, so that no older record from
 * a peer can bring the key back during the next retention window. */
struct mts_frontier {
	uint64_t hlc;
	uint8_t origin[MTS_NODE_ID_LEN];
	uint64_t pruned_ms; /* wall clock */
};

#define MTS_FRONTIER_LEN (8 + MTS_NODE_ID_LEN + 8)

void mts_frontier_encode(const struct mts_frontier *,
    uint8_t out[MTS_FRONTIER_LEN]);
int mts_frontier_decode(const uint8_t *buf, size_t len,
    struct mts_frontier *out);

/* Whether an incoming record replaces the current one (cur NULL when the
 * key is absent, pf NULL when it has no prune frontier). */
bool mts_state_merge_wins(const struct mts_record *cur,
    const struct mts_frontier *pf, const struct mts_record *in);

/* Compare-and-set: expected hlc 0 matches an absent or deleted key;
 * otherwise hlc and origin must both match. */
bool mts_state_cas_ok(const struct mts_record *cur, uint64_t exp_hlc,
    const uint8_t *exp_origin, size_t exp_origin_len);

/* Keys under n/, d/ and t/ belong to the node named by their second
 * segment; a local write to another node's key is refused. self is the
 * node id in hex (32 characters). 0 or -MTS_ERR_DENIED. */
int mts_state_owner_check(const char *self_hex, const uint8_t *key,
    size_t klen);

/* Key and value limits: 0 or -MTS_ERR_INVAL / -MTS_ERR_TOOBIG. */
int mts_state_check_key(const uint8_t *key, size_t klen);

bool mts_state_tombstone_expired(const struct mts_record *,
    uint64_t now_wall_ms, uint64_t retention_ms);
bool mts_state_frontier_expired(const struct mts_frontier *,
    uint64_t now_wall_ms, uint64_t retention_ms);

#endif
