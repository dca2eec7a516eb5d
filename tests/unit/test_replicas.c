/* test_replicas.c: five replicas, same updates, any order: same state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/statestore/mst_core.h"
#include "buf.h"
#include "hash.h"
#include "mst_ref.h"
#include "mtserr.h"
#include "prop.h"
#include "record.h"
#include "xmalloc.h"

#define NREPLICAS 5
#define NOPS 10000
#define NDUPS 2500
#define NKEYS 1500
#define NORIGINS 5

/* One update as a node would emit it: a put or a delete (tombstone). */
struct op {
	size_t key;
	struct mts_record rec;
	uint8_t value[24];
};

/* A replica: key index -> winning record (NULL if never seen), plus MST. */
struct replica {
	const struct mts_record **recs;
	struct mts_mst *mst;
	size_t applied, won;
};

struct world {
	size_t nkeys;
	char **keys;
	size_t *klens;
	struct op *ops;
};

static void
world_init(struct world *w, struct prop_rng *rng)
{
	uint8_t node[MTS_NODE_ID_LEN];
	size_t i;

	w->nkeys = NKEYS;
	w->keys = xcalloc(NKEYS, sizeof(*w->keys));
	w->klens = xcalloc(NKEYS, sizeof(*w->klens));
	for (i = 0; i < NKEYS; i++) {
		prop_bytes(rng, node, sizeof(node));
		w->keys[i] = xasprintf("t/%02x%02x%02x%02x/%zu", node[0],
		    node[1], node[2], node[3], i);
		w->klens[i] = strlen(w->keys[i]);
	}
	w->ops = xcalloc(NOPS, sizeof(*w->ops));
	for (i = 0; i < NOPS; i++) {
		struct op *o = &w->ops[i];

		o->key = (size_t)prop_below(rng, NKEYS);
		/* a narrow clock range, so equal (hlc, origin) pairs with
		 * different contents happen and the rh tie-break decides */
		o->rec.hlc =
		    (uint64_t)1700000000000 << 16 | prop_below(rng, 40);
		o->rec.origin[0] = (uint8_t)prop_below(rng, NORIGINS);
		o->rec.tombstone = prop_below(rng, 100) < 30;
		if (!o->rec.tombstone) {
			o->rec.vlen =
			    1 + (size_t)prop_below(rng, sizeof(o->value) - 1);
			prop_bytes(rng, o->value, o->rec.vlen);
			o->rec.value = o->value;
		}
	}
}

static void
world_free(struct world *w)
{
	size_t i;

	for (i = 0; i < w->nkeys; i++)
		free(w->keys[i]);
	free(w->keys);
	free(w->klens);
	free(w->ops);
}

/* The merge rule applied to one incoming record. */
static void
replica_apply(struct replica *r, const struct world *w, const struct op *o)
{
	const struct mts_record *cur = r->recs[o->key];
	uint8_t rh[MTS_HASH_LEN];

	r->applied++;
	if (cur != NULL && mts_record_cmp(&o->rec, cur) <= 0)
		return;
	r->recs[o->key] = &o->rec;
	r->won++;
	mts_record_hash(&o->rec, rh);
	assert_int_equal(mts_mst_put(r->mst, (const uint8_t *)w->keys[o->key],
	                     w->klens[o->key], rh),
	    0);
}

/* Every op once plus NDUPS repeats, in an order of this replica's own. */
static void
replica_feed(struct replica *r, const struct world *w, struct prop_rng *rng)
{
	size_t *order = xcalloc(NOPS + NDUPS, sizeof(*order));
	size_t i;

	for (i = 0; i < NOPS; i++)
		order[i] = i;
	for (; i < NOPS + NDUPS; i++)
		order[i] = (size_t)prop_below(rng, NOPS);
	prop_shuffle(rng, order, NOPS + NDUPS);
	for (i = 0; i < NOPS + NDUPS; i++)
		replica_apply(r, w, &w->ops[order[i]]);
	free(order);
}

static void
encode_or_empty(const struct mts_record *rec, struct mts_buf *b)
{
	mts_buf_reset(b);
	if (rec != NULL)
		mts_record_encode(rec, b);
}

/* Replica r holds byte-for-byte what replica 0 holds. */
static void
assert_same_contents(const struct replica *a, const struct replica *r,
    size_t nkeys)
{
	struct mts_buf ea, er;
	size_t k;

	mts_buf_init(&ea);
	mts_buf_init(&er);
	for (k = 0; k < nkeys; k++) {
		encode_or_empty(a->recs[k], &ea);
		encode_or_empty(r->recs[k], &er);
		assert_int_equal(ea.len, er.len);
		if (ea.len > 0)
			assert_memory_equal(ea.data, er.data, ea.len);
	}
	mts_buf_free(&ea);
	mts_buf_free(&er);
}

/* The winner of every key computed directly, and its MST by reference. */
static void
expected_root(const struct world *w, uint8_t root[MTS_HASH_LEN],
    const struct mts_record **best)
{
	struct mst_ref_item *items = xcalloc(w->nkeys, sizeof(*items));
	size_t i, n = 0, pages;

	for (i = 0; i < NOPS; i++) {
		const struct op *o = &w->ops[i];

		if (best[o->key] == NULL ||
		    mts_record_cmp(&o->rec, best[o->key]) > 0)
			best[o->key] = &o->rec;
	}
	for (i = 0; i < w->nkeys; i++) {
		if (best[i] == NULL)
			continue;
		items[n].key = (const uint8_t *)w->keys[i];
		items[n].klen = w->klens[i];
		mts_record_hash(best[i], items[n].rh);
		n++;
	}
	mst_ref_sort(items, n);
	mst_ref_root(items, n, root, &pages);
	free(items);
}

static void
test_five_replicas(void **state)
{
	struct prop_rng rng = { prop_seed("five replicas") };
	struct replica reps[NREPLICAS];
	struct world w;
	const struct mts_record **best;
	uint8_t roots[NREPLICAS][MTS_HASH_LEN], want[MTS_HASH_LEN];
	size_t i, tombstones = 0, live = 0;

	world_init(&w, &rng);
	for (i = 0; i < NREPLICAS; i++) {
		reps[i].recs = xcalloc(w.nkeys, sizeof(*reps[i].recs));
		reps[i].mst = mts_mst_new();
		reps[i].applied = reps[i].won = 0;
		replica_feed(&reps[i], &w, &rng);
		mts_mst_root(reps[i].mst, roots[i]);
	}
	best = xcalloc(w.nkeys, sizeof(*best));
	expected_root(&w, want, best);
	for (i = 0; i < NREPLICAS; i++) {
		assert_same_contents(&reps[0], &reps[i], w.nkeys);
		assert_memory_equal(roots[i], roots[0], MTS_HASH_LEN);
		assert_int_equal(mts_mst_count(reps[i].mst),
		    mts_mst_count(reps[0].mst));
		assert_int_equal(mts_mst_pages(reps[i].mst),
		    mts_mst_pages(reps[0].mst));
		assert_int_equal(reps[i].applied, NOPS + NDUPS);
	}
	/* and what they agree on is the right answer */
	assert_memory_equal(roots[0], want, MTS_HASH_LEN);
	for (i = 0; i < w.nkeys; i++) {
		assert_true((reps[0].recs[i] == NULL) == (best[i] == NULL));
		if (best[i] != NULL)
			assert_int_equal(mts_record_cmp(reps[0].recs[i],
			                     best[i]),
			    0);
		if (best[i] != NULL && best[i]->tombstone)
			tombstones++;
		else if (best[i] != NULL)
			live++;
	}
	/* the mix must have exercised both puts and deletes */
	assert_true(tombstones > 100 && live > 100);
	printf("five replicas: %zu live, %zu tombstones, %zu pages\n", live,
	    tombstones, mts_mst_pages(reps[0].mst));
	for (i = 0; i < NREPLICAS; i++) {
		free(reps[i].recs);
		mts_mst_free(reps[i].mst);
	}
	free(best);
	world_free(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_five_replicas),
	};

	if (mts_crypto_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
