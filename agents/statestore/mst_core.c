/* mst_core.c: incremental Merkle Search Tree with cached page hashes. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mst_core.h"
#include "mtserr.h"
#include "xmalloc.h"

#define MST_MIN_BUCKETS 64
/* Pages that changed stay servable by their old hash for a while: the
 * last RETIRED_MAX of them, at most RETIRED_BYTES of encodings. */
#define RETIRED_MAX 512
#define RETIRED_BYTES (256u << 10)

/*
 * The tree is made of pages exactly as the definition describes them: a page
 * holds the items of one level in key order, and kids[i] is the page of the
 * gap before items[i] (kids[n] the gap after the last item), or NULL when that
 * gap is empty. Pages never hold zero items.
 *
 * Invariant for the hash cache: a page whose hash is not valid ("dirty") has
 * only dirty ancestors, because every change happens on a path walked down
 * from the root and every page on that path is marked dirty. A clean page is
 * in the hash index; a dirty page is not.
 */
struct mst_item {
	uint8_t *key; /* owned */
	size_t klen;
	uint8_t rh[MTS_HASH_LEN];
};

struct mst_page {
	int level;
	size_t n, cap;
	struct mst_item *items; /* cap entries */
	struct mst_page **kids; /* cap + 1 entries */
	bool clean;             /* hash is valid and the page is indexed */
	uint8_t hash[MTS_HASH_LEN];
	uint8_t *enc; /* cached encoding while clean, or NULL */
	size_t enclen;
	struct mst_page *hnext; /* hash index chain */
};

/*
 * A peer's anti-entropy walk asks for pages by the hashes of the root it
 * was given one round trip before, and of the pages it got since. Under a
 * steady trickle of writes (a cluster's digests and task records) the
 * root page served was already replaced when the request for it came, so
 * the walk found nothing and ended: two nodes of 100 in mts-sim stayed
 * without records written 27 s before. A page that was clean (its hash
 * handed out) keeps its encoding here when it changes; a walk goes on
 * against that snapshot, and what it pulls is the current record.
 */
struct mst_retired {
	uint8_t hash[MTS_HASH_LEN];
	uint8_t *enc;
	size_t len;
};

struct mts_mst {
	struct mts_mst_store st; /* where keys and encodings are kept */
	struct mst_page *root;
	struct mst_retired retired[RETIRED_MAX]; /* a ring, oldest at rhead */
	size_t rhead, rcount, rbytes;
	size_t count; /* items */
	size_t npages;
	struct mst_page **buckets; /* hash index of clean pages */
	size_t nbuckets, nindexed;
	struct mts_buf scratch; /* encoding buffer for hashing */
};

static const uint8_t zero_hash[MTS_HASH_LEN];

/* Index of the first item >= key in p (p->n if none). */
static size_t
page_lower_bound(const struct mst_page *p, const uint8_t *key, size_t klen)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mts_mst_key_cmp(p->items[mid].key, p->items[mid].klen, key,
		        klen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool
item_is(const struct mst_page *p, size_t i, const uint8_t *key, size_t klen)
{
	return i < p->n &&
	    mts_mst_key_cmp(p->items[i].key, p->items[i].klen, key, klen) == 0;
}

/* --- hash index of clean pages ------------------------------------------ */

static size_t
bucket_of(const struct mts_mst *t, const uint8_t h[MTS_HASH_LEN])
{
	uint64_t v;

	memcpy(&v, h, sizeof(v));
	return (size_t)(v & (t->nbuckets - 1));
}

static void
index_grow(struct mts_mst *t)
{
	struct mst_page **old = t->buckets;
	size_t oldn = t->nbuckets, i;

	t->nbuckets = oldn ? oldn * 2 : MST_MIN_BUCKETS;
	t->buckets = xcalloc(t->nbuckets, sizeof(*t->buckets));
	for (i = 0; i < oldn; i++) {
		struct mst_page *p = old[i], *next;

		for (; p != NULL; p = next) {
			size_t b = bucket_of(t, p->hash);

			next = p->hnext;
			p->hnext = t->buckets[b];
			t->buckets[b] = p;
		}
	}
	free(old);
}

static void
index_add(struct mts_mst *t, struct mst_page *p)
{
	size_t b;

	if (t->nindexed + 1 > t->nbuckets)
		index_grow(t);
	b = bucket_of(t, p->hash);
	p->hnext = t->buckets[b];
	t->buckets[b] = p;
	t->nindexed++;
}

static void
index_remove(struct mts_mst *t, struct mst_page *p)
{
	struct mst_page **pp = &t->buckets[bucket_of(t, p->hash)];

	for (; *pp != NULL; pp = &(*pp)->hnext) {
		if (*pp == p) {
			*pp = p->hnext;
			p->hnext = NULL;
			t->nindexed--;
			return;
		}
	}
}

static struct mst_page *
index_find(const struct mts_mst *t, const uint8_t h[MTS_HASH_LEN])
{
	struct mst_page *p;

	if (t->nbuckets == 0)
		return NULL;
	for (p = t->buckets[bucket_of(t, h)]; p != NULL; p = p->hnext)
		if (memcmp(p->hash, h, MTS_HASH_LEN) == 0)
			return p;
	return NULL;
}

/* --- retired pages ------------------------------------------------------- */

static void
retired_drop_oldest(struct mts_mst *t)
{
	struct mst_retired *r = &t->retired[t->rhead];

	t->rbytes -= r->len;
	t->st.drop_enc(t->st.ctx, r->enc, r->len);
	r->enc = NULL;
	t->rhead = (t->rhead + 1) % RETIRED_MAX;
	t->rcount--;
}

/* Keeps enc (kept in the store, taken) as the page once served by hash h. */
static void
retire(struct mts_mst *t, const uint8_t h[MTS_HASH_LEN], uint8_t *enc,
    size_t len)
{
	struct mst_retired *r;

	if (len > RETIRED_BYTES) {
		t->st.drop_enc(t->st.ctx, enc, len);
		return;
	}
	while (t->rcount == RETIRED_MAX || t->rbytes + len > RETIRED_BYTES)
		retired_drop_oldest(t);
	r = &t->retired[(t->rhead + t->rcount++) % RETIRED_MAX];
	memcpy(r->hash, h, MTS_HASH_LEN);
	r->enc = enc;
	r->len = len;
	t->rbytes += len;
}

static const struct mst_retired *
retired_find(const struct mts_mst *t, const uint8_t h[MTS_HASH_LEN])
{
	size_t i;
	const struct mst_retired *r;

	for (i = t->rcount; i-- > 0;) {
		r = &t->retired[(t->rhead + i) % RETIRED_MAX];
		if (memcmp(r->hash, h, MTS_HASH_LEN) == 0)
			return r;
	}
	return NULL;
}

/* --- pages ---------------------------------------------------------------- */

static void page_encode(const struct mst_page *, struct mts_buf *);

/* Forgets p's hash, index entry and cached encoding. */
static void
page_forget(struct mts_mst *t, struct mst_page *p)
{
	if (!p->clean)
		return;
	index_remove(t, p);
	if (p->enc != NULL)
		t->st.drop_enc(t->st.ctx, p->enc, p->enclen);
	p->enc = NULL;
	p->enclen = 0;
	p->clean = false;
}

/* Caches the encoding of the clean page p (its kids are clean). */
static void
page_keep_enc(struct mts_mst *t, struct mst_page *p)
{
	struct mts_buf b;
	uint8_t *enc;

	if (p->enc != NULL)
		return;
	mts_buf_init(&b);
	page_encode(p, &b);
	enc = mts_buf_steal(&b, &p->enclen);
	p->enc = t->st.keep_enc(t->st.ctx, p->hash, enc, p->enclen);
}

/* Marks p as about to change: called before any of its items or kids
 * change, while its encoding is still the one its hash was made of
 * (which retire keeps). */
static void
page_touch(struct mts_mst *t, struct mst_page *p)
{
	if (!p->clean)
		return;
	page_keep_enc(t, p);
	retire(t, p->hash, p->enc, p->enclen);
	p->enc = NULL;
	page_forget(t, p);
}

static struct mst_page *
page_new(struct mts_mst *t, int level, size_t cap)
{
	struct mst_page *p = xcalloc(1, sizeof(*p));

	p->level = level;
	p->cap = cap < 1 ? 1 : cap;
	p->items = xreallocarray(NULL, p->cap, sizeof(*p->items));
	p->kids = xcalloc(p->cap + 1, sizeof(*p->kids));
	t->npages++;
	return p;
}

/* Frees the page shell; its items' keys must have been moved or freed
 * (a page that is to stay servable was touched before). */
static void
page_free_shell(struct mts_mst *t, struct mst_page *p)
{
	page_forget(t, p);
	free(p->items);
	free(p->kids);
	free(p);
	t->npages--;
}

static void
page_free_tree(struct mts_mst *t, struct mst_page *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i <= p->n; i++)
		page_free_tree(t, p->kids[i]);
	for (i = 0; i < p->n; i++)
		t->st.drop_key(t->st.ctx, p->items[i].key, p->items[i].klen);
	page_free_shell(t, p);
}

static void
page_reserve(struct mst_page *p, size_t need)
{
	size_t cap = p->cap;

	if (need <= cap)
		return;
	while (cap < need)
		cap += cap / 2 + 1;
	p->items = xreallocarray(p->items, cap, sizeof(*p->items));
	p->kids = xreallocarray(p->kids, cap + 1, sizeof(*p->kids));
	p->cap = cap;
}

/* Gives back the room of a page that lost most of its items (a split). */
static void
page_fit(struct mst_page *p)
{
	if (p->cap <= 2 * p->n)
		return;
	p->cap = p->n;
	p->items = xreallocarray(p->items, p->cap, sizeof(*p->items));
	p->kids = xreallocarray(p->kids, p->cap + 1, sizeof(*p->kids));
}

/* Opens a hole for one item at i; kids[i] and kids[i+1] are the caller's. */
static void
page_insert_at(struct mst_page *p, size_t i, const struct mst_item *it)
{
	page_reserve(p, p->n + 1);
	memmove(&p->items[i + 1], &p->items[i], (p->n - i) * sizeof(*p->items));
	memmove(&p->kids[i + 2], &p->kids[i + 1],
	    (p->n - i) * sizeof(*p->kids));
	p->items[i] = *it;
	p->n++;
}

/* Drops item i and the gap after it; kids[i] is then the caller's. */
static void
page_remove_at(struct mst_page *p, size_t i)
{
	memmove(&p->items[i], &p->items[i + 1],
	    (p->n - i - 1) * sizeof(*p->items));
	memmove(&p->kids[i + 1], &p->kids[i + 2],
	    (p->n - i - 1) * sizeof(*p->kids));
	p->n--;
}

/* --- structural operations ------------------------------------------------ */

/*
 * Splits the subtree p (which does not hold key) into the pages of the key
 * ranges below and above key. p's own page is reused for one side.
 */
static void
mst_split(struct mts_mst *t, struct mst_page *p, const uint8_t *key,
    size_t klen, struct mst_page **lo, struct mst_page **hi)
{
	struct mst_page *cl, *cr, *r;
	size_t i;

	if (p == NULL) {
		*lo = *hi = NULL;
		return;
	}
	page_touch(t, p);
	i = page_lower_bound(p, key, klen);
	mst_split(t, p->kids[i], key, klen, &cl, &cr);
	if (i == 0) {
		p->kids[0] = cr;
		*lo = cl;
		*hi = p;
	} else if (i == p->n) {
		p->kids[i] = cl;
		*lo = p;
		*hi = cr;
	} else {
		r = page_new(t, p->level, p->n - i);
		memcpy(r->items, &p->items[i], (p->n - i) * sizeof(*p->items));
		r->kids[0] = cr;
		memcpy(&r->kids[1], &p->kids[i + 1],
		    (p->n - i) * sizeof(*p->kids));
		r->n = p->n - i;
		p->n = i;
		p->kids[i] = cl;
		page_fit(p);
		*lo = p;
		*hi = r;
	}
}

/* Joins two adjacent subtrees (every key of a below every key of b). */
static struct mst_page *
mst_merge(struct mts_mst *t, struct mst_page *a, struct mst_page *b)
{
	struct mst_page *mid;
	size_t an;

	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	if (a->level > b->level) {
		page_touch(t, a);
		a->kids[a->n] = mst_merge(t, a->kids[a->n], b);
		return a;
	}
	if (a->level < b->level) {
		page_touch(t, b);
		b->kids[0] = mst_merge(t, a, b->kids[0]);
		return b;
	}
	page_touch(t, a);
	page_touch(t, b);
	mid = mst_merge(t, a->kids[a->n], b->kids[0]);
	an = a->n;
	page_reserve(a, an + b->n);
	memcpy(&a->items[an], b->items, b->n * sizeof(*b->items));
	a->kids[an] = mid;
	memcpy(&a->kids[an + 1], &b->kids[1], b->n * sizeof(*b->kids));
	a->n = an + b->n;
	b->n = 0;
	page_free_shell(t, b);
	return a;
}

/* Inserts or replaces it (of the given level) under p; returns the new p. */
static struct mst_page *
mst_insert(struct mts_mst *t, struct mst_page *p, int level,
    struct mst_item *it, bool *added)
{
	struct mst_page *np, *lo, *hi;
	size_t i;

	if (p == NULL || level > p->level) {
		np = page_new(t, level, 1);
		mst_split(t, p, it->key, it->klen, &np->kids[0], &np->kids[1]);
		np->items[0] = *it;
		np->n = 1;
		*added = true;
		return np;
	}
	page_touch(t, p);
	i = page_lower_bound(p, it->key, it->klen);
	if (level < p->level) {
		p->kids[i] = mst_insert(t, p->kids[i], level, it, added);
		return p;
	}
	if (item_is(p, i, it->key, it->klen)) {
		memcpy(p->items[i].rh, it->rh, MTS_HASH_LEN);
		*added = false;
		return p;
	}
	mst_split(t, p->kids[i], it->key, it->klen, &lo, &hi);
	page_insert_at(p, i, it);
	p->kids[i] = lo;
	p->kids[i + 1] = hi;
	*added = true;
	return p;
}

/* Removes key (of the given level, present) under p; returns the new p. */
static struct mst_page *
mst_remove(struct mts_mst *t, struct mst_page *p, int level, const uint8_t *key,
    size_t klen)
{
	struct mst_page *c;
	size_t i;

	page_touch(t, p);
	i = page_lower_bound(p, key, klen);
	if (level < p->level) {
		p->kids[i] = mst_remove(t, p->kids[i], level, key, klen);
		return p;
	}
	t->st.drop_key(t->st.ctx, p->items[i].key, p->items[i].klen);
	c = mst_merge(t, p->kids[i], p->kids[i + 1]);
	page_remove_at(p, i);
	p->kids[i] = c;
	if (p->n > 0)
		return p;
	c = p->kids[0];
	page_free_shell(t, p);
	return c;
}

/* --- public API ----------------------------------------------------------- */

static uint8_t *
heap_keep_key(void *ctx, const uint8_t *key, size_t klen)
{
	(void)ctx;
	return xmemdup(key, klen);
}

static void
heap_drop(void *ctx, uint8_t *p, size_t len)
{
	(void)ctx;
	(void)len;
	free(p);
}

static uint8_t *
heap_keep_enc(void *ctx, const uint8_t h[MTS_HASH_LEN], uint8_t *enc,
    size_t len)
{
	(void)ctx;
	(void)h;
	(void)len;
	return enc;
}

static const struct mts_mst_store heap_store = {
	NULL,
	heap_keep_key,
	heap_drop,
	heap_keep_enc,
	heap_drop,
};

struct mts_mst *
mts_mst_new_store(const struct mts_mst_store *st)
{
	struct mts_mst *t = xcalloc(1, sizeof(*t));

	t->st = *st;
	mts_buf_init(&t->scratch);
	return t;
}

struct mts_mst *
mts_mst_new(void)
{
	return mts_mst_new_store(&heap_store);
}

void
mts_mst_free(struct mts_mst *t)
{
	if (t == NULL)
		return;
	page_free_tree(t, t->root);
	while (t->rcount > 0)
		retired_drop_oldest(t);
	free(t->buckets);
	mts_buf_free(&t->scratch);
	free(t);
}

int
mts_mst_put(struct mts_mst *t, const uint8_t *key, size_t klen,
    const uint8_t rh[MTS_HASH_LEN])
{
	struct mst_item it;
	uint8_t cur[MTS_HASH_LEN];
	bool added = false;

	if (klen > MTS_MST_KEY_LIMIT)
		return -MTS_ERR_TOOBIG;
	if (mts_mst_get(t, key, klen, cur) == 0 &&
	    memcmp(cur, rh, MTS_HASH_LEN) == 0)
		return 0;
	it.key = t->st.keep_key(t->st.ctx, key, klen);
	it.klen = klen;
	memcpy(it.rh, rh, MTS_HASH_LEN);
	t->root = mst_insert(t, t->root, mts_mst_level(key, klen), &it, &added);
	if (added)
		t->count++;
	else
		t->st.drop_key(t->st.ctx, it.key, klen);
	return 0;
}

int
mts_mst_del(struct mts_mst *t, const uint8_t *key, size_t klen)
{
	uint8_t rh[MTS_HASH_LEN];

	/* known present, the path down to it is touched on the way, before
	 * anything under it changes */
	if (mts_mst_get(t, key, klen, rh) < 0)
		return -MTS_ERR_NOTFOUND;
	t->root = mst_remove(t, t->root, mts_mst_level(key, klen), key, klen);
	t->count--;
	return 0;
}

int
mts_mst_get(const struct mts_mst *t, const uint8_t *key, size_t klen,
    uint8_t rh[MTS_HASH_LEN])
{
	const struct mst_page *p = t->root;
	int level;
	size_t i;

	if (klen > MTS_MST_KEY_LIMIT)
		return -MTS_ERR_NOTFOUND;
	level = mts_mst_level(key, klen);
	while (p != NULL && p->level >= level) {
		i = page_lower_bound(p, key, klen);
		if (p->level == level) {
			if (!item_is(p, i, key, klen))
				break;
			memcpy(rh, p->items[i].rh, MTS_HASH_LEN);
			return 0;
		}
		p = p->kids[i];
	}
	return -MTS_ERR_NOTFOUND;
}

/* The canonical encoding of p (whose dirty kids have been hashed) into out. */
static void
page_encode(const struct mst_page *p, struct mts_buf *out)
{
	size_t i;

	mts_buf_put_u8(out, (uint8_t)p->level);
	for (i = 0; i < p->n; i++) {
		const struct mst_item *it = &p->items[i];

		mts_buf_put(out, p->kids[i] ? p->kids[i]->hash : zero_hash,
		    MTS_HASH_LEN);
		mts_buf_put_u16be(out, (uint16_t)it->klen);
		mts_buf_put(out, it->key, it->klen);
		mts_buf_put(out, it->rh, MTS_HASH_LEN);
	}
	mts_buf_put(out, p->kids[p->n] ? p->kids[p->n]->hash : zero_hash,
	    MTS_HASH_LEN);
}

/* Rehashes the dirty pages under p (post-order) and indexes them. */
static void
page_rehash(struct mts_mst *t, struct mst_page *p)
{
	size_t i;

	if (p == NULL || p->clean)
		return;
	for (i = 0; i <= p->n; i++)
		page_rehash(t, p->kids[i]);
	mts_buf_reset(&t->scratch);
	page_encode(p, &t->scratch);
	mts_blake2b256(p->hash, t->scratch.data, t->scratch.len);
	p->clean = true;
	index_add(t, p);
}

void
mts_mst_root(struct mts_mst *t, uint8_t out[MTS_HASH_LEN])
{
	if (t->root == NULL) {
		memset(out, 0, MTS_HASH_LEN);
		return;
	}
	page_rehash(t, t->root);
	memcpy(out, t->root->hash, MTS_HASH_LEN);
}

size_t
mts_mst_count(const struct mts_mst *t)
{
	return t->count;
}

size_t
mts_mst_pages(struct mts_mst *t)
{
	return t->npages;
}

int
mts_mst_page(struct mts_mst *t, const uint8_t h[MTS_HASH_LEN],
    const uint8_t **enc, size_t *len)
{
	struct mst_page *p;
	const struct mst_retired *r;

	page_rehash(t, t->root);
	p = index_find(t, h);
	if (p == NULL && (r = retired_find(t, h)) != NULL) {
		*enc = r->enc;
		*len = r->len;
		return 0;
	}
	if (p == NULL)
		return -MTS_ERR_NOTFOUND;
	page_keep_enc(t, p);
	*enc = p->enc;
	*len = p->enclen;
	return 0;
}
