/* state_core.c: the statestore's pure decisions (no I/O): the verdict on a put, delete or merge, and what a prune may do. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "hlc.h"
#include "mtserr.h"
#include "state_core.h"

void
mts_frontier_encode(const struct mts_frontier *f, uint8_t out[MTS_FRONTIER_LEN])
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
	if (pf != NULL &&
	    stamp_cmp(in->hlc, in->origin, pf->hlc, pf->origin) <= 0)
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
	static const char *const owned[] = { "n/", "d/", "t/", "i/" };
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

/* Fills v as a refusal; returns err. */
static int __attribute__((format(printf, 3, 4)))
refuse(struct mts_verdict *v, int err, const char *fmt, ...)
{
	va_list ap;

	v->kind = MTS_VERDICT_REFUSE;
	v->err = err;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
	return err;
}

static int
check_merged(const struct mts_state_self *self, const struct mts_record *r,
    struct mts_verdict *v)
{
	uint64_t ms = mts_hlc_ms(r->hlc);

	if (r->tombstone && r->vlen != 0)
		return refuse(v, -MTS_ERR_INVAL, "tombstone with a value");
	if (r->vlen > MTS_RECORD_MAX_VALUE)
		return refuse(v, -MTS_ERR_INVAL, "value over 1 MiB");
	if (r->hlc == 0)
		return refuse(v, -MTS_ERR_INVAL, "hlc is zero");
	/* a record from the far future would win every later write to its
	 * key and, observed, drag this node's clock along (2^64-1 wrapped
	 * it to 0: every local write after it lost) */
	if (ms > self->now_wall_ms + MTS_HLC_MAX_AHEAD_MS)
		return refuse(v, -MTS_ERR_INVAL,
		    "hlc is %llu ms ahead of this node's clock (at most %llu)",
		    (unsigned long long)(ms - self->now_wall_ms),
		    (unsigned long long)MTS_HLC_MAX_AHEAD_MS);
	return 0;
}

static int
check_local(const struct mts_state_self *self, const struct mts_write *w,
    struct mts_verdict *v)
{
	if (w->kind == MTS_WRITE_PUT && w->rec.vlen > MTS_RECORD_MAX_VALUE)
		return refuse(v, -MTS_ERR_TOOBIG,
		    "value of %zu bytes is over the %u-byte limit", w->rec.vlen,
		    MTS_RECORD_MAX_VALUE);
	if (mts_state_owner_check(self->node_hex, w->key, w->klen) < 0)
		return refuse(v, -MTS_ERR_DENIED,
		    "key %.*s belongs to another node (this node is %s)",
		    (int)w->klen, w->key, self->node_hex);
	return 0;
}

int
mts_state_check_write(const struct mts_state_self *self,
    const struct mts_write *w, struct mts_verdict *v)
{
	int r;

	if ((r = mts_state_check_key(w->key, w->klen)) < 0)
		return refuse(v,
		    w->kind == MTS_WRITE_MERGE ? -MTS_ERR_INVAL : r,
		    "key must be 1 to %d bytes", MTS_KEY_MAX);
	if (w->kind == MTS_WRITE_MERGE)
		return check_merged(self, &w->rec, v);
	return check_local(self, w, v);
}

/* A put or delete that passed its checks. */
static enum mts_verdict_kind
local_verdict(const struct mts_state_self *self, const struct mts_record *cur,
    const struct mts_write *w, struct mts_verdict *v)
{
	if (w->has_expected &&
	    !mts_state_cas_ok(cur, w->exp_hlc, w->exp_origin,
	        w->exp_origin_len)) {
		refuse(v, -MTS_ERR_CONFLICT,
		    "compare-and-set failed: the record changed");
		return v->kind;
	}
	if (w->kind == MTS_WRITE_DELETE && (cur == NULL || cur->tombstone)) {
		refuse(v, -MTS_ERR_NOTFOUND, "no such key");
		return v->kind;
	}
	v->rec = w->rec;
	v->rec.tombstone = w->kind == MTS_WRITE_DELETE;
	if (v->rec.tombstone) {
		v->rec.value = NULL;
		v->rec.vlen = 0;
	}
	v->rec.hlc = mts_hlc_now(self->hlc, self->now_wall_ms);
	memcpy(v->rec.origin, self->node, MTS_NODE_ID_LEN);
	v->kind = MTS_VERDICT_APPLY;
	return v->kind;
}

enum mts_verdict_kind
mts_state_verdict(const struct mts_state_self *self,
    const struct mts_record *cur, const struct mts_frontier *pf,
    const struct mts_write *w, struct mts_verdict *v)
{
	v->err = 0;
	v->why[0] = '\0';
	v->was_live = cur != NULL && !cur->tombstone;
	if (mts_state_check_write(self, w, v) < 0)
		return v->kind;
	if (w->kind != MTS_WRITE_MERGE)
		return local_verdict(self, cur, w, v);
	mts_hlc_observe(self->hlc, w->rec.hlc);
	v->rec = w->rec;
	v->kind = mts_state_merge_wins(cur, pf, &w->rec) ? MTS_VERDICT_APPLY
	                                                 : MTS_VERDICT_IGNORE;
	return v->kind;
}
