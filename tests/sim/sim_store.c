/* sim_store.c: what the simulated nodes share instead of each holding a copy — interned records, the MST's key copies and page encodings, each stored once and reference-counted. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sim/sim.h"
#include "xmalloc.h"

#define INTERN_SLOTS (1u << 18)

/*
 * Every node's store holds references to the interned records; every
 * node's MST (mst_core.c, unchanged in what it does) keeps its keys and
 * page encodings here through struct mts_mst_store. Keys and encodings
 * are immutable once stored, so a node replacing a record or a page
 * takes another reference and drops its own: what other nodes hold does
 * not change. A page's encoding is found by its hash (equal hashes,
 * equal bytes).
 */
struct ikey {
	struct ikey *next;
	uint32_t refs;
	uint32_t klen;
	uint8_t key[];
};

struct ienc {
	struct ienc *next;
	uint32_t refs;
	size_t len;
	uint8_t h[MTS_HASH_LEN];
	uint8_t enc[];
};

static struct irec **itab;
static struct ikey **ktab;
static struct ienc **etab;
static struct sim_store_stats stats;

void
sim_intern_init(void)
{
	if (itab != NULL)
		return;
	itab = xcalloc(INTERN_SLOTS, sizeof(*itab));
	ktab = xcalloc(INTERN_SLOTS, sizeof(*ktab));
	etab = xcalloc(INTERN_SLOTS, sizeof(*etab));
}

static uint64_t
fnv(const uint8_t *p, size_t len)
{
	uint64_t k = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < len; i++)
		k = (k ^ p[i]) * 1099511628211ull;
	return k;
}

/* --- records ------------------------------------------------------------- */

static size_t
islot(const uint8_t rh[MTS_HASH_LEN], const uint8_t *key, size_t klen)
{
	uint64_t h = mts_get_u64be(rh) ^ fnv(key, klen);

	return (size_t)(h & (INTERN_SLOTS - 1));
}

static struct irec *
irec_new(const uint8_t *key, size_t klen, const struct mts_record *rec,
    const uint8_t rh[MTS_HASH_LEN])
{
	struct mts_buf b = { 0 };
	struct irec *r = xcalloc(1, sizeof(*r));

	r->refs = 1;
	memcpy(r->rh, rh, MTS_HASH_LEN);
	r->key = xmemdup(key, klen);
	r->klen = klen;
	mts_record_encode(rec, &b);
	r->elen = b.len;
	r->enc = xmemdup(b.data, b.len);
	mts_buf_free(&b);
	if (mts_record_decode(r->enc, r->elen, &r->rec) < 0)
		abort(); /* our own encoding */
	r->fp =
	    mts_seen_fingerprint(r->key, r->klen, r->rec.hlc, r->rec.origin);
	return r;
}

struct irec *
sim_intern(const uint8_t *key, size_t klen, const struct mts_record *rec)
{
	uint8_t rh[MTS_HASH_LEN];
	struct irec *r;
	size_t sl;

	mts_record_hash(rec, rh);
	sl = islot(rh, key, klen);
	for (r = itab[sl]; r; r = r->next)
		if (r->klen == klen && memcmp(r->key, key, klen) == 0 &&
		    memcmp(r->rh, rh, MTS_HASH_LEN) == 0)
			return sim_iref(r);
	r = irec_new(key, klen, rec, rh);
	r->next = itab[sl];
	itab[sl] = r;
	stats.recs++;
	stats.rec_bytes += sizeof(*r) + klen + r->elen;
	return r;
}

struct irec *
sim_iref(struct irec *r)
{
	r->refs++;
	return r;
}

void
sim_iunref(struct irec *r)
{
	struct irec **p;

	if (r == NULL || --r->refs > 0)
		return;
	for (p = &itab[islot(r->rh, r->key, r->klen)]; *p != r; p = &(*p)->next)
		;
	*p = r->next;
	stats.recs--;
	stats.rec_bytes -= sizeof(*r) + r->klen + r->elen;
	free(r->parsed); /* the reconciler's decoding: plain data */
	free(r->key);
	free(r->enc);
	free(r);
}

/* --- the MST's keys and page encodings ----------------------------------- */

static uint8_t *
keep_key(void *ctx, const uint8_t *key, size_t klen)
{
	size_t sl = (size_t)(fnv(key, klen) & (INTERN_SLOTS - 1));
	struct ikey *k;

	(void)ctx;
	for (k = ktab[sl]; k; k = k->next)
		if (k->klen == klen && memcmp(k->key, key, klen) == 0) {
			k->refs++;
			return k->key;
		}
	k = xmalloc(sizeof(*k) + klen);
	k->refs = 1;
	k->klen = (uint32_t)klen;
	memcpy(k->key, key, klen);
	k->next = ktab[sl];
	ktab[sl] = k;
	stats.keys++;
	stats.key_bytes += sizeof(*k) + klen;
	return k->key;
}

static void
drop_key(void *ctx, uint8_t *key, size_t klen)
{
	struct ikey *k = (struct ikey *)(key - offsetof(struct ikey, key)), **p;

	(void)ctx;
	if (--k->refs > 0)
		return;
	for (p = &ktab[fnv(key, klen) & (INTERN_SLOTS - 1)]; *p != k;
	     p = &(*p)->next)
		;
	*p = k->next;
	stats.keys--;
	stats.key_bytes -= sizeof(*k) + klen;
	free(k);
}

static size_t
eslot(const uint8_t h[MTS_HASH_LEN])
{
	return (size_t)(mts_get_u64be(h) & (INTERN_SLOTS - 1));
}

static uint8_t *
keep_enc(void *ctx, const uint8_t h[MTS_HASH_LEN], uint8_t *enc, size_t len)
{
	size_t sl = eslot(h);
	struct ienc *e;

	(void)ctx;
	for (e = etab[sl]; e; e = e->next)
		if (e->len == len && memcmp(e->h, h, MTS_HASH_LEN) == 0) {
			e->refs++;
			free(enc);
			return e->enc;
		}
	e = xmalloc(sizeof(*e) + len);
	e->refs = 1;
	e->len = len;
	memcpy(e->h, h, MTS_HASH_LEN);
	memcpy(e->enc, enc, len);
	free(enc);
	e->next = etab[sl];
	etab[sl] = e;
	stats.encs++;
	stats.enc_bytes += sizeof(*e) + len;
	return e->enc;
}

static void
drop_enc(void *ctx, uint8_t *enc, size_t len)
{
	struct ienc *e = (struct ienc *)(enc - offsetof(struct ienc, enc)), **p;

	(void)ctx;
	(void)len;
	if (--e->refs > 0)
		return;
	for (p = &etab[eslot(e->h)]; *p != e; p = &(*p)->next)
		;
	*p = e->next;
	stats.encs--;
	stats.enc_bytes -= sizeof(*e) + e->len;
	free(e);
}

static const struct mts_mst_store shared = {
	NULL,
	keep_key,
	drop_key,
	keep_enc,
	drop_enc,
};

struct mts_mst *
sim_mst_new(void)
{
	return mts_mst_new_store(&shared);
}

void
sim_store_stats(struct sim_store_stats *out)
{
	*out = stats;
}
