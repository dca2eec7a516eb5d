/* buf.c: growable byte buffer and bounds-checked reader. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mtserr.h"
#include "xmalloc.h"

void
mts_buf_init(struct mts_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void
mts_buf_free(struct mts_buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	mts_buf_init(b);
}

void
mts_buf_reset(struct mts_buf *b)
{
	b->len = 0;
}

void
mts_buf_reserve(struct mts_buf *b, size_t more)
{
	size_t want = b->len + more;

	if (want < b->len)
		abort(); /* size_t overflow: a caller bug, never input-driven */
	if (want <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 64;
	while (b->cap < want)
		b->cap *= 2;
	b->data = xreallocarray(b->data, b->cap, 1);
}

void
mts_buf_put(struct mts_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	mts_buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void
mts_buf_put_u8(struct mts_buf *b, uint8_t v)
{
	mts_buf_put(b, &v, 1);
}

void
mts_buf_put_u16be(struct mts_buf *b, uint16_t v)
{
	uint8_t t[2];

	mts_put_u16be(t, v);
	mts_buf_put(b, t, 2);
}

void
mts_buf_put_u32be(struct mts_buf *b, uint32_t v)
{
	uint8_t t[4];

	mts_put_u32be(t, v);
	mts_buf_put(b, t, 4);
}

void
mts_buf_put_u64be(struct mts_buf *b, uint64_t v)
{
	uint8_t t[8];

	mts_put_u64be(t, v);
	mts_buf_put(b, t, 8);
}

uint8_t *
mts_buf_steal(struct mts_buf *b, size_t *len)
{
	uint8_t *d = b->data;

	*len = b->len;
	mts_buf_init(b);
	return d;
}

void
mts_rd_init(struct mts_rd *r, const void *p, size_t n)
{
	r->p = p;
	r->left = n;
}

int
mts_rd_bytes(struct mts_rd *r, const uint8_t **out, size_t n)
{
	if (r->left < n)
		return -MTS_ERR_INVAL;
	*out = r->p;
	r->p += n;
	r->left -= n;
	return 0;
}

int
mts_rd_copy(struct mts_rd *r, void *out, size_t n)
{
	const uint8_t *p;

	if (mts_rd_bytes(r, &p, n) < 0)
		return -MTS_ERR_INVAL;
	if (n)
		memcpy(out, p, n);
	return 0;
}

int
mts_rd_u8(struct mts_rd *r, uint8_t *v)
{
	return mts_rd_copy(r, v, 1);
}

int
mts_rd_u16be(struct mts_rd *r, uint16_t *v)
{
	const uint8_t *p;

	if (mts_rd_bytes(r, &p, 2) < 0)
		return -MTS_ERR_INVAL;
	*v = mts_get_u16be(p);
	return 0;
}

int
mts_rd_u32be(struct mts_rd *r, uint32_t *v)
{
	const uint8_t *p;

	if (mts_rd_bytes(r, &p, 4) < 0)
		return -MTS_ERR_INVAL;
	*v = mts_get_u32be(p);
	return 0;
}

int
mts_rd_u64be(struct mts_rd *r, uint64_t *v)
{
	const uint8_t *p;

	if (mts_rd_bytes(r, &p, 8) < 0)
		return -MTS_ERR_INVAL;
	*v = mts_get_u64be(p);
	return 0;
}
