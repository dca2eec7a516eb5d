/* delta_core.c: fingerprint set for delta-push dedupe (open addressing, FIFO ring for eviction). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "agents/gossipd/delta_core.h"
#include "buf.h"
#include "xmalloc.h"

/*
 * The table and the ring grow with the count, up to what cap needs: a
 * set that never fills (a small cluster, each of mts-sim's nodes) costs
 * what it holds, not 1.5 MiB. What it answers does not depend on its
 * size.
 */
struct mts_seen {
	uint64_t *slots; /* 0 = empty; fingerprints are never 0 */
	size_t nslots;   /* power of two, >= 2 * count: at most half full */
	uint64_t *ring;  /* insertion order, for eviction */
	size_t ringcap;  /* allocated; cap once the ring has wrapped */
	size_t cap, head, count;
};

#define SEEN_MIN_SLOTS 32

uint64_t
mts_seen_fingerprint(const uint8_t *key, size_t klen, uint64_t hlc,
    const uint8_t origin[MTS_NODE_ID_LEN])
{
	crypto_generichash_state st;
	uint8_t h[8], b[8];
	uint64_t f;

	mts_put_u64be(b, hlc);
	crypto_generichash_init(&st, NULL, 0, sizeof(h));
	crypto_generichash_update(&st, b, sizeof(b));
	crypto_generichash_update(&st, origin, MTS_NODE_ID_LEN);
	crypto_generichash_update(&st, key, klen);
	crypto_generichash_final(&st, h, sizeof(h));
	f = mts_get_u64be(h);
	return f ? f : 1;
}

struct mts_seen *
mts_seen_new(size_t cap)
{
	struct mts_seen *s = xcalloc(1, sizeof(*s));

	if (cap < 16)
		cap = 16;
	s->cap = cap;
	s->nslots = SEEN_MIN_SLOTS;
	s->slots = xcalloc(s->nslots, sizeof(*s->slots));
	s->ringcap = SEEN_MIN_SLOTS / 2; /* <= cap */
	s->ring = xcalloc(s->ringcap, sizeof(*s->ring));
	return s;
}

void
mts_seen_free(struct mts_seen *s)
{
	if (s == NULL)
		return;
	free(s->slots);
	free(s->ring);
	free(s);
}

static size_t
lookup(const struct mts_seen *s, uint64_t f)
{
	size_t i = (size_t)f & (s->nslots - 1);

	while (s->slots[i] != 0 && s->slots[i] != f)
		i = (i + 1) & (s->nslots - 1);
	return i;
}

/* Deletes f, re-inserting the rest of its probe cluster. */
static void
erase(struct mts_seen *s, uint64_t f)
{
	size_t i = lookup(s, f), j;
	uint64_t g;

	if (s->slots[i] == 0)
		return;
	s->slots[i] = 0;
	for (j = (i + 1) & (s->nslots - 1); s->slots[j] != 0;
	     j = (j + 1) & (s->nslots - 1)) {
		g = s->slots[j];
		s->slots[j] = 0;
		s->slots[lookup(s, g)] = g;
	}
}

int
mts_seen_add(struct mts_seen *s, const uint8_t *key, size_t klen, uint64_t hlc,
    const uint8_t origin[MTS_NODE_ID_LEN])
{
	return mts_seen_add_fp(s, mts_seen_fingerprint(key, klen, hlc, origin));
}

/* Room for one more: the table doubled while it would be more than half
 * full, the ring while it has not wrapped (head == count then). */
static void
grow(struct mts_seen *s)
{
	uint64_t *old = s->slots;
	size_t oldn = s->nslots, i;

	if (s->count == s->ringcap && s->ringcap < s->cap) {
		s->ringcap = 2 * s->ringcap < s->cap ? 2 * s->ringcap : s->cap;
		s->ring = xreallocarray(s->ring, s->ringcap, sizeof(*s->ring));
	}
	if (2 * (s->count + 1) <= s->nslots)
		return;
	s->nslots *= 2;
	s->slots = xcalloc(s->nslots, sizeof(*s->slots));
	for (i = 0; i < oldn; i++)
		if (old[i] != 0)
			s->slots[lookup(s, old[i])] = old[i];
	free(old);
}

int
mts_seen_add_fp(struct mts_seen *s, uint64_t f)
{
	size_t i = lookup(s, f);

	if (s->slots[i] == f)
		return 0;
	if (s->count < s->cap) {
		grow(s);
		i = lookup(s, f);
	} else {
		erase(s, s->ring[s->head]);
		s->count--;
		i = lookup(s, f);
	}
	s->slots[i] = f;
	s->ring[s->head] = f;
	s->head = (s->head + 1) % s->cap;
	s->count++;
	return 1;
}

size_t
mts_seen_count(const struct mts_seen *s)
{
	return s->count;
}

/* Ids compared as two words: a push's hop checks every candidate against
 * a sent-to set of up to 64 ids, thousands of compares a push. */
int
mts_delta_sent_has(const struct mts_delta_sent *ss,
    const uint8_t id[MTS_NODE_ID_LEN])
{
	uint64_t a, b, x, y;
	size_t i;

	memcpy(&a, id, 8);
	memcpy(&b, id + 8, 8);
	for (i = 0; i < ss->n; i++) {
		memcpy(&x, ss->id[i], 8);
		memcpy(&y, ss->id[i] + 8, 8);
		if (x == a && y == b)
			return 1;
	}
	return 0;
}

void
mts_delta_sent_add(struct mts_delta_sent *ss, const uint8_t id[MTS_NODE_ID_LEN])
{
	if (ss->n < MTS_DELTA_MAX_SENT && !mts_delta_sent_has(ss, id))
		memcpy(ss->id[ss->n++], id, MTS_NODE_ID_LEN);
}

size_t
mts_delta_targets(struct mts_delta_sent *sent,
    const uint8_t self[MTS_NODE_ID_LEN], const uint8_t (*cand)[MTS_NODE_ID_LEN],
    size_t ncand, int fanout, uint8_t (*out)[MTS_NODE_ID_LEN])
{
	size_t i, k = 0,
	          max = fanout > 16 ? 16
	    : fanout < 0            ? 0
	                            : (size_t)fanout;

	mts_delta_sent_add(sent, self);
	for (i = 0; i < ncand && k < max; i++)
		if (!mts_delta_sent_has(sent, cand[i]))
			memcpy(out[k++], cand[i], MTS_NODE_ID_LEN);
	for (i = 0; i < k; i++)
		mts_delta_sent_add(sent, out[i]);
	return k;
}

int
mts_delta_fanout(int cfg, size_t n)
{
	int f;

	if (cfg > 0)
		return cfg > 16 ? 16 : cfg;
	f = (n > 1 ? (int)ceil(log((double)n)) : 0) - 1;
	return f < 3 ? 3 : f > 16 ? 16 : f;
}

size_t
mts_delta_wire_first(const struct mts_delta_sent *ss)
{
	return ss->n > MTS_DELTA_WIRE_SENT ? ss->n - MTS_DELTA_WIRE_SENT : 0;
}

size_t
mts_delta_ncand(const struct mts_delta_sent *ss, int fanout)
{
	size_t k = ss->n + 1 + (fanout > 0 ? (size_t)fanout : 0);

	return k > 64 ? 64 : k;
}
