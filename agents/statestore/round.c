/* round.c: a group-commit round — pending writes, their RocksDB batch, and an open-addressing key index. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "round.h"
#include "store.h"
#include "xmalloc.h"

void
round_init(struct round *r, struct mts_store *st)
{
	memset(r, 0, sizeof(*r));
	r->st = st;
	r->batch = mts_store_batch_new(st);
}

void
round_reset(struct round *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->pend[i].key);
		free(r->pend[i].enc);
	}
	r->n = 0;
	if (r->nslots)
		memset(r->slot, 0, r->nslots * sizeof(size_t));
	r->nkeys = 0;
	mts_store_batch_free(r->batch);
	r->batch = mts_store_batch_new(r->st);
}

void
round_free(struct round *r)
{
	if (r == NULL || r->st == NULL)
		return;
	round_reset(r);
	mts_store_batch_free(r->batch);
	free(r->pend);
	free(r->slot);
	memset(r, 0, sizeof(*r));
}

static uint64_t
key_hash(const uint8_t *k, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (n--)
		h = (h ^ *k++) * 1099511628211ull;
	return h;
}

/* The slot of key: the one holding it, or the empty one where it goes. */
static size_t *
slot_of(struct round *r, const uint8_t *key, size_t klen)
{
	size_t i = key_hash(key, klen) & (r->nslots - 1);

	for (;; i = (i + 1) & (r->nslots - 1)) {
		struct pending *p;

		if (r->slot[i] == 0)
			return &r->slot[i];
		p = &r->pend[r->slot[i] - 1];
		if (p->klen == klen && memcmp(p->key, key, klen) == 0)
			return &r->slot[i];
	}
}

struct pending *
round_find(struct round *r, const uint8_t *key, size_t klen)
{
	size_t *s;

	if (r->nslots == 0)
		return NULL;
	s = slot_of(r, key, klen);
	return *s ? &r->pend[*s - 1] : NULL;
}

bool
round_is_newest(struct round *r, const struct pending *p)
{
	return round_find(r, p->key, p->klen) == p;
}

/* Keeps the table at most half full. */
static void
grow_slots(struct round *r)
{
	size_t *old = r->slot, oldn = r->nslots, i;

	if ((r->nkeys + 1) * 2 <= r->nslots)
		return;
	r->nslots = r->nslots ? r->nslots * 2 : 256;
	r->slot = xcalloc(r->nslots, sizeof(size_t));
	for (i = 0; i < oldn; i++) {
		if (old[i] != 0) {
			struct pending *p = &r->pend[old[i] - 1];

			*slot_of(r, p->key, p->klen) = old[i];
		}
	}
	free(old);
}

struct pending *
round_add(struct round *r, struct mts_ipc_call *call, uint32_t kind,
    const uint8_t *key, size_t klen, const struct mts_record *rec,
    bool was_live, bool local)
{
	struct pending *p, *prev = round_find(r, key, klen);
	struct mts_buf b;
	size_t *s;

	if (prev != NULL)
		was_live = prev->was_live;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->pend = xreallocarray(r->pend, r->cap, sizeof(*r->pend));
	}
	p = &r->pend[r->n];
	memset(p, 0, sizeof(*p));
	p->call = call;
	p->kind = kind;
	p->key = xmemdup(key, klen);
	p->klen = klen;
	mts_buf_init(&b);
	mts_record_encode(rec, &b);
	p->enc = mts_buf_steal(&b, &p->elen);
	mts_blake2b256(p->rh, p->enc, p->elen);
	p->was_live = was_live;
	p->tombstone = rec->tombstone;
	p->local = local;
	mts_store_batch_put(r->batch, MTS_CF_RECORDS, key, klen, p->enc,
	    p->elen);
	grow_slots(r);
	s = slot_of(r, key, klen);
	if (*s == 0)
		r->nkeys++;
	*s = ++r->n;
	return &r->pend[r->n - 1];
}
