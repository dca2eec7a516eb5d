/* sim_store.c: what the simulated nodes share instead of each holding a copy — interned records, the MST's key copies and page encodings, each stored once and reference-counted. */
#include <pthread.h>
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
 *
 * The worker threads share the tables: each chain is behind one of
 * STRIPES locks (by slot). A key's or an encoding's count changes under
 * its lock; a record's is atomic (every merge takes a reference), and
 * the one that drops it to 0 unlinks it under the lock, while a lookup
 * takes a reference only on a record whose count is not 0 (a record
 * being freed is passed over, and a new one made in its place).
 */
#define STRIPES 4096
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
static struct sim_store_stats stats; /* atomic */
static pthread_mutex_t locks[STRIPES];

static pthread_mutex_t *
lock_of(size_t slot)
{
	pthread_mutex_t *l = &locks[slot % STRIPES];

	pthread_mutex_lock(l);
	return l;
}

static void
stat_add(size_t *c, size_t *b, size_t bytes)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(b, bytes, __ATOMIC_RELAXED);
}

static void
stat_sub(size_t *c, size_t *b, size_t bytes)
{
	__atomic_sub_fetch(c, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(b, bytes, __ATOMIC_RELAXED);
}

void
sim_intern_init(void)
{
	size_t i;

	if (itab != NULL)
		return;
	for (i = 0; i < STRIPES; i++)
		pthread_mutex_init(&locks[i], NULL);
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

	__atomic_store_n(&r->refs, 1, __ATOMIC_RELAXED);
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

/* A reference to r unless it is being freed (its count 0); under its
 * stripe's lock. */
static int
iref_live(struct irec *r)
{
	uint32_t c = __atomic_load_n(&r->refs, __ATOMIC_RELAXED);

	do {
		if (c == 0)
			return 0;
	} while (!__atomic_compare_exchange_n(&r->refs, &c, c + 1, 1,
	    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return 1;
}

struct irec *
sim_intern(const uint8_t *key, size_t klen, const struct mts_record *rec)
{
	uint8_t rh[MTS_HASH_LEN];
	struct irec *r;
	pthread_mutex_t *l;
	size_t sl;

	mts_record_hash(rec, rh);
	sl = islot(rh, key, klen);
	l = lock_of(sl);
	for (r = itab[sl]; r; r = r->next)
		if (r->klen == klen && memcmp(r->key, key, klen) == 0 &&
		    memcmp(r->rh, rh, MTS_HASH_LEN) == 0 && iref_live(r)) {
			pthread_mutex_unlock(l);
			return r;
		}
	r = irec_new(key, klen, rec, rh);
	r->next = itab[sl];
	itab[sl] = r;
	pthread_mutex_unlock(l);
	stat_add(&stats.recs, &stats.rec_bytes, sizeof(*r) + klen + r->elen);
	return r;
}

struct irec *
sim_iref(struct irec *r)
{
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	return r;
}

void
sim_iunref(struct irec *r)
{
	struct irec **p;
	pthread_mutex_t *l;
	size_t sl;

	if (r == NULL || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	sl = islot(r->rh, r->key, r->klen);
	l = lock_of(sl);
	for (p = &itab[sl]; *p != r; p = &(*p)->next)
		;
	*p = r->next;
	pthread_mutex_unlock(l);
	stat_sub(&stats.recs, &stats.rec_bytes, sizeof(*r) + r->klen + r->elen);
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
	pthread_mutex_t *l = lock_of(sl);
	struct ikey *k;

	(void)ctx;
	for (k = ktab[sl]; k; k = k->next)
		if (k->klen == klen && memcmp(k->key, key, klen) == 0) {
			k->refs++;
			pthread_mutex_unlock(l);
			return k->key;
		}
	k = xmalloc(sizeof(*k) + klen);
	k->refs = 1;
	k->klen = (uint32_t)klen;
	memcpy(k->key, key, klen);
	k->next = ktab[sl];
	ktab[sl] = k;
	pthread_mutex_unlock(l);
	stat_add(&stats.keys, &stats.key_bytes, sizeof(*k) + klen);
	return k->key;
}

static void
drop_key(void *ctx, uint8_t *key, size_t klen)
{
	struct ikey *k = (struct ikey *)(key - offsetof(struct ikey, key)), **p;
	size_t sl = (size_t)(fnv(key, klen) & (INTERN_SLOTS - 1));
	pthread_mutex_t *l = lock_of(sl);

	(void)ctx;
	if (--k->refs > 0) {
		pthread_mutex_unlock(l);
		return;
	}
	for (p = &ktab[sl]; *p != k; p = &(*p)->next)
		;
	*p = k->next;
	pthread_mutex_unlock(l);
	stat_sub(&stats.keys, &stats.key_bytes, sizeof(*k) + klen);
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
	pthread_mutex_t *l = lock_of(sl);
	struct ienc *e;

	(void)ctx;
	for (e = etab[sl]; e; e = e->next)
		if (e->len == len && memcmp(e->h, h, MTS_HASH_LEN) == 0) {
			e->refs++;
			pthread_mutex_unlock(l);
			free(enc);
			return e->enc;
		}
	e = xmalloc(sizeof(*e) + len);
	e->refs = 1;
	e->len = len;
	memcpy(e->h, h, MTS_HASH_LEN);
	memcpy(e->enc, enc, len);
	e->next = etab[sl];
	etab[sl] = e;
	pthread_mutex_unlock(l);
	free(enc);
	stat_add(&stats.encs, &stats.enc_bytes, sizeof(*e) + len);
	return e->enc;
}

static void
drop_enc(void *ctx, uint8_t *enc, size_t len)
{
	struct ienc *e = (struct ienc *)(enc - offsetof(struct ienc, enc)), **p;
	size_t sl = eslot(e->h);
	pthread_mutex_t *l = lock_of(sl);

	(void)ctx;
	(void)len;
	if (--e->refs > 0) {
		pthread_mutex_unlock(l);
		return;
	}
	for (p = &etab[sl]; *p != e; p = &(*p)->next)
		;
	*p = e->next;
	pthread_mutex_unlock(l);
	stat_sub(&stats.encs, &stats.enc_bytes, sizeof(*e) + e->len);
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
	out->recs = __atomic_load_n(&stats.recs, __ATOMIC_RELAXED);
	out->rec_bytes = __atomic_load_n(&stats.rec_bytes, __ATOMIC_RELAXED);
	out->keys = __atomic_load_n(&stats.keys, __ATOMIC_RELAXED);
	out->key_bytes = __atomic_load_n(&stats.key_bytes, __ATOMIC_RELAXED);
	out->encs = __atomic_load_n(&stats.encs, __ATOMIC_RELAXED);
	out->enc_bytes = __atomic_load_n(&stats.enc_bytes, __ATOMIC_RELAXED);
}
