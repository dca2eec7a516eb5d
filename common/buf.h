/* buf.h: a growable byte buffer for encoders and a bounds-checked reader for decoders. */
#ifndef MTS_BUF_H
#define MTS_BUF_H

#include <stddef.h>
#include <stdint.h>

/* Owns data (malloc'ed); mts_buf_free releases it. */
struct mts_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

void mts_buf_init(struct mts_buf *);
void mts_buf_free(struct mts_buf *);
void mts_buf_reset(struct mts_buf *);
void mts_buf_reserve(struct mts_buf *, size_t more);
void mts_buf_put(struct mts_buf *, const void *, size_t);
void mts_buf_put_u8(struct mts_buf *, uint8_t);
void mts_buf_put_u16be(struct mts_buf *, uint16_t);
void mts_buf_put_u32be(struct mts_buf *, uint32_t);
void mts_buf_put_u64be(struct mts_buf *, uint64_t);
/* Hands the data to the caller (who frees it) and leaves the buffer empty. */
uint8_t *mts_buf_steal(struct mts_buf *, size_t *len);

/* A read cursor over borrowed bytes; every get fails (-MTS_ERR_INVAL) rather
 * than reading past the end. */
struct mts_rd {
	const uint8_t *p;
	size_t left;
};

void mts_rd_init(struct mts_rd *, const void *, size_t);
int mts_rd_u8(struct mts_rd *, uint8_t *);
int mts_rd_u16be(struct mts_rd *, uint16_t *);
int mts_rd_u32be(struct mts_rd *, uint32_t *);
int mts_rd_u64be(struct mts_rd *, uint64_t *);
/* Points *out at the next n bytes inside the reader's memory (no copy). */
int mts_rd_bytes(struct mts_rd *, const uint8_t **out, size_t n);
int mts_rd_copy(struct mts_rd *, void *out, size_t n);

static inline void
mts_put_u16be(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void
mts_put_u32be(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline void
mts_put_u64be(uint8_t *p, uint64_t v)
{
	mts_put_u32be(p, (uint32_t)(v >> 32));
	mts_put_u32be(p + 4, (uint32_t)v);
}

static inline uint16_t
mts_get_u16be(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
mts_get_u32be(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
mts_get_u64be(const uint8_t *p)
{
	return (uint64_t)mts_get_u32be(p) << 32 | mts_get_u32be(p + 4);
}

#endif
