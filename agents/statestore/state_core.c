/* state_core.c: the statestore's pure decisions (no I/O): what a merge, a CAS or a prune may do. */
#include <string.h>

#include "buf.h"
#include "hlc.h"
#include "mtserr.h"
#include "state_core.h"

void
mts_frontier_encode(const struct mts_frontier *f,
    uint8_t out[MTS_FRONTIER_LEN])
{
	mts_put_u64be(out, f->hlc);
	memcpy(out + 8, f->origin, MTS_NODE_ID_LEN);
	mts_put_u64be(out + 8 + MTS_NODE_ID_LEN, f->pruned_ms);
}

int
mts_frontier_decode(const uint8_t *buf, size_t len, struct mts_frontier *out)
{
	if (len != MTS_FRONTIER_LEN)
		return -MTS_ERR_INVAL;
	out->hlc = mts_get_u64be(buf);
	memcpy(out->origin, buf + 8, MTS_NODE_ID_LEN);
	out->pruned_ms = mts_get_u64be(buf + 8 + MTS_NODE_ID_LEN);
	return 0;
}

/* Orders (hlc, origin) pairs. */
static int
stamp_cmp(uint64_t ha, const uint8_t *oa, uint64_t hb, const uint8_t *ob)
{
	if (ha != hb)
		return ha > hb ? 1 : -1;
	return memcmp(oa, ob, MTS_NODE_ID_LEN);
}

bool
mts_state_merge_wins(const struct mts_record *cur,
    const struct mts_frontier *pf, const struct mts_record *in)
{
	if (pf != NULL && stamp_cmp(in->hlc, in->origin, pf->hlc,
			      pf->origin) <= 0)
		return false; /* as old as what was pruned: no resurrection */
	if (cur == NULL)
		return true;
	return mts_record_cmp(in, cur) > 0;
}

bool
mts_state_cas_ok(const struct mts_record *cur, uint64_t exp_hlc,
    const uint8_t *exp_origin, size_t exp_origin_len)
{
	if (exp_hlc == 0)
		return cur == NULL || cur->tombstone;
	if (cur == NULL || exp_origin_len != MTS_NODE_ID_LEN)
		return false;
	return cur->hlc == exp_hlc &&
	    memcmp(cur->origin, exp_origin, MTS_NODE_ID_LEN) == 0;
}

int
mts_state_owner_check(const char *self_hex, const uint8_t *key, size_t klen)
{
	static const char *const owned[] = {"n/", "d/", "t/"};
	size_t i, seg;

	for (i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
		if (klen < 2 || memcmp(key, owned[i], 2) != 0)
			continue;
		for (seg = 2; seg < klen && key[seg] != '/'; seg++)
			;
		if (seg - 2 != MTS_NODE_HEX_LEN ||
		    memcmp(key + 2, self_hex, MTS_NODE_HEX_LEN) != 0)
			return -MTS_ERR_DENIED;
		return 0;
	}
	return 0;
}

int
mts_state_check_key(const uint8_t *key, size_t klen)
{
	if (klen == 0)
		return -MTS_ERR_INVAL;
	if (klen > MTS_KEY_MAX)
		return -MTS_ERR_TOOBIG;
	return 0;
}

bool
mts_state_tombstone_expired(const struct mts_record *r, uint64_t now_wall_ms,
    uint64_t retention_ms)
{
	return r->tombstone && mts_hlc_ms(r->hlc) + retention_ms <= now_wall_ms;
}

bool
mts_state_frontier_expired(const struct mts_frontier *f, uint64_t now_wall_ms,
    uint64_t retention_ms)
{
	return f->pruned_ms + retention_ms <= now_wall_ms;
}
