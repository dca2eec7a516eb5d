/* state_core.h: the statestore's pure decisions — the verdict on a write (limits, ownership, compare-and-set, tombstones, merge with prune frontiers), tombstone expiry. */
#ifndef MTS_STATE_CORE_H
#define MTS_STATE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlc.h"
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

/* A write as the statestore receives it: a local put or delete from this
 * node's agents, or a record merged from a peer. */
enum mts_write_kind {
	MTS_WRITE_PUT,
	MTS_WRITE_DELETE,
	MTS_WRITE_MERGE,
};

struct mts_write {
	enum mts_write_kind kind;
	const uint8_t *key;
	size_t klen;
	/* put: the value; delete: nothing; merge: the peer's record */
	struct mts_record rec;
	/* put/delete: compare-and-set against (exp_hlc, exp_origin) */
	bool has_expected;
	uint64_t exp_hlc;
	const uint8_t *exp_origin;
	size_t exp_origin_len;
};

/* The node deciding: its id (stamped on its own writes; in hex for key
 * ownership), its clock, and the wall time of the decision. */
struct mts_state_self {
	const uint8_t *node; /* MTS_NODE_ID_LEN bytes */
	const char *node_hex;
	struct mts_hlc *hlc;
	uint64_t now_wall_ms;
};

enum mts_verdict_kind {
	MTS_VERDICT_REFUSE, /* answered with v->err and v->why */
	MTS_VERDICT_IGNORE, /* a merged record that loses: nothing to store */
	MTS_VERDICT_APPLY,  /* store v->rec */
};

struct mts_verdict {
	enum mts_verdict_kind kind;
	int err;                    /* REFUSE: -MTS_ERR_* */
	char why[MTS_KEY_MAX + 96]; /* REFUSE: for the caller */
	struct mts_record rec;      /* APPLY: value points into w->rec */
	bool was_live;              /* the key had a live record */
};

/* What a write may do, given the key's current record (cur NULL when the
 * key is absent) and prune frontier (pf NULL when it has none). The one
 * decision for the statestore and the simulator:
 *   - mts_state_check_write's limits first (refused);
 *   - put/delete: a failed compare-and-set is refused (CONFLICT), so is a
 *     delete of an absent or deleted key (NOTFOUND); otherwise the record
 *     is stamped with a new HLC and this node as origin;
 *   - merge: the record's HLC is observed; it is applied when it beats
 *     both cur and pf (mts_state_merge_wins), ignored otherwise.
 * Advances *self->hlc only for an applied local write or a merge. */
enum mts_verdict_kind mts_state_verdict(const struct mts_state_self *self,
    const struct mts_record *cur, const struct mts_frontier *pf,
    const struct mts_write *w, struct mts_verdict *v);

/* The checks of a write that need no current record, in the order they
 * are made: key length; put: value size; put/delete: the key belongs to
 * this node (mts_state_owner_check); merge: a well-formed record (no
 * tombstone with a value, value within the limit, hlc not zero). 0, or
 * v->err (REFUSE, with v->why). A merge request runs it on every record
 * before deciding any, so that a bad record refuses the whole request. */
int mts_state_check_write(const struct mts_state_self *self,
    const struct mts_write *w, struct mts_verdict *v);

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
