/* record.c: record encoding, strict decoding, rh and merge order. */
#include <string.h>

#include "mtserr.h"
#include "record.h"

#define REC_HDR_LEN (1 + 8 + MTS_NODE_ID_LEN + 1)
#define REC_FLAG_TOMBSTONE 0x01

/* The fixed-size part of the encoding, everything before the value. */
static void
record_header(const struct mts_record *r, uint8_t hdr[REC_HDR_LEN])
{
	hdr[0] = MTS_RECORD_VERSION;
	mts_put_u64be(hdr + 1, r->hlc);
	memcpy(hdr + 9, r->origin, MTS_NODE_ID_LEN);
	hdr[9 + MTS_NODE_ID_LEN] = r->tombstone ? REC_FLAG_TOMBSTONE : 0;
}

void
mts_record_encode(const struct mts_record *r, struct mts_buf *out)
{
	uint8_t hdr[REC_HDR_LEN];

	record_header(r, hdr);
	mts_buf_reserve(out, sizeof(hdr) + r->vlen);
	mts_buf_put(out, hdr, sizeof(hdr));
	if (r->vlen > 0)
		mts_buf_put(out, r->value, r->vlen);
}

int
mts_record_decode(const uint8_t *buf, size_t len, struct mts_record *out)
{
	uint8_t flags;

	if (buf == NULL || len < REC_HDR_LEN)
		return -MTS_ERR_INVAL;
	if (buf[0] != MTS_RECORD_VERSION)
		return -MTS_ERR_INVAL;
	flags = buf[9 + MTS_NODE_ID_LEN];
	if ((flags & ~REC_FLAG_TOMBSTONE) != 0)
		return -MTS_ERR_INVAL;
	if ((flags & REC_FLAG_TOMBSTONE) && len != REC_HDR_LEN)
		return -MTS_ERR_INVAL;
	if (len - REC_HDR_LEN > MTS_RECORD_MAX_VALUE)
		return -MTS_ERR_INVAL;
	out->hlc = mts_get_u64be(buf + 1);
	memcpy(out->origin, buf + 9, MTS_NODE_ID_LEN);
	out->tombstone = (flags & REC_FLAG_TOMBSTONE) != 0;
	out->vlen = len - REC_HDR_LEN;
	out->value = out->vlen > 0 ? buf + REC_HDR_LEN : NULL;
	return 0;
}

void
mts_record_hash(const struct mts_record *r, uint8_t rh[MTS_HASH_LEN])
{
	uint8_t hdr[REC_HDR_LEN];
	mts_hash_ctx ctx;

	record_header(r, hdr);
	mts_hash_init(&ctx);
	mts_hash_update(&ctx, hdr, sizeof(hdr));
	if (r->vlen > 0)
		mts_hash_update(&ctx, r->value, r->vlen);
	mts_hash_final(&ctx, rh);
}

int
mts_record_cmp(const struct mts_record *a, const struct mts_record *b)
{
	uint8_t ha[MTS_HASH_LEN], hb[MTS_HASH_LEN];
	int c;

	if (a->hlc != b->hlc)
		return a->hlc > b->hlc ? 1 : -1;
	c = memcmp(a->origin, b->origin, MTS_NODE_ID_LEN);
	if (c != 0)
		return c > 0 ? 1 : -1;
	mts_record_hash(a, ha);
	mts_record_hash(b, hb);
	c = memcmp(ha, hb, MTS_HASH_LEN);
	return c > 0 ? 1 : c < 0 ? -1 : 0;
}
