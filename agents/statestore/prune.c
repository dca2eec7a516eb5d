/* prune.c: tombstone pruning and the prune frontiers it leaves in the meta CF (reading, counting, expiring them). */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mst_core.h"
#include "record.h"
#include "state_core.h"
#include "statestore.h"
#include "store.h"
#include "xmalloc.h"

static const char frontier_prefix[] = "pf/";
#define PREFIX_LEN (sizeof(frontier_prefix) - 1)

/* The meta key of key's frontier, "pf/" + key; the caller frees it. */
static uint8_t *
frontier_key(const uint8_t *key, size_t klen, size_t *len)
{
	uint8_t *fk = xmalloc(PREFIX_LEN + klen);

	memcpy(fk, frontier_prefix, PREFIX_LEN);
	memcpy(fk + PREFIX_LEN, key, klen);
	*len = PREFIX_LEN + klen;
	return fk;
}

/* Whether k (a meta key) is a frontier's. */
static int
is_frontier_key(const uint8_t *k, size_t klen)
{
	return klen >= PREFIX_LEN &&
	    memcmp(k, frontier_prefix, PREFIX_LEN) == 0;
}

int
ss_frontier_get(struct statestore *ss, const uint8_t *key, size_t klen,
    struct mts_frontier *f)
{
	uint8_t *fk, *v;
	size_t flen, vlen;
	char err[256];
	int r;

	if (ss->nfrontiers == 0)
		return 0;
	fk = frontier_key(key, klen, &flen);
	r = mts_store_get(ss->db, MTS_CF_META, fk, flen, &v, &vlen, err,
	    sizeof(err));
	free(fk);
	if (r < 0)
		return 0;
	r = mts_frontier_decode(v, vlen, f) == 0;
	free(v);
	return r;
}

uint64_t
ss_frontier_count(struct statestore *ss)
{
	struct mts_store_iter *it;
	uint64_t n = 0;

	it = mts_store_iter_new(ss->db, MTS_CF_META, frontier_prefix,
	    PREFIX_LEN);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen;
		const uint8_t *k = mts_store_iter_key(it, &klen);

		if (!is_frontier_key(k, klen))
			break;
		n++;
	}
	mts_store_iter_free(it);
	return n;
}

/* What one prune pass gathers before its batch is committed. */
struct sweep {
	struct mts_store_batch *b;
	uint8_t **dead; /* the pruned keys, for the MST once committed */
	size_t *deadlen, ndead;
	uint64_t forgot;
};

/* Replaces k's expired tombstone rec by a frontier, in the batch. */
static void
bury(struct sweep *s, const uint8_t *k, size_t klen,
    const struct mts_record *rec, uint64_t now)
{
	struct mts_frontier f;
	uint8_t fb[MTS_FRONTIER_LEN], *fk;
	size_t flen;

	f.hlc = rec->hlc;
	memcpy(f.origin, rec->origin, MTS_NODE_ID_LEN);
	f.pruned_ms = now;
	mts_frontier_encode(&f, fb);
	fk = frontier_key(k, klen, &flen);
	mts_store_batch_put(s->b, MTS_CF_META, fk, flen, fb, sizeof(fb));
	free(fk);
	mts_store_batch_del(s->b, MTS_CF_RECORDS, k, klen);
	s->dead = xreallocarray(s->dead, s->ndead + 1, sizeof(*s->dead));
	s->deadlen =
	    xreallocarray(s->deadlen, s->ndead + 1, sizeof(*s->deadlen));
	s->dead[s->ndead] = xmemdup(k, klen);
	s->deadlen[s->ndead++] = klen;
}

static void
sweep_tombstones(struct statestore *ss, struct sweep *s, uint64_t now)
{
	struct mts_store_iter *it;
	struct mts_record rec;

	it = mts_store_iter_new(ss->db, MTS_CF_RECORDS, NULL, 0);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen, vlen;
		const uint8_t *k = mts_store_iter_key(it, &klen);
		const uint8_t *v = mts_store_iter_val(it, &vlen);

		if (mts_record_decode(v, vlen, &rec) == 0 &&
		    mts_state_tombstone_expired(&rec, now, ss->retention_ms))
			bury(s, k, klen, &rec, now);
	}
	mts_store_iter_free(it);
}

static void
sweep_frontiers(struct statestore *ss, struct sweep *s, uint64_t now)
{
	struct mts_store_iter *it;
	struct mts_frontier f;

	it = mts_store_iter_new(ss->db, MTS_CF_META, frontier_prefix,
	    PREFIX_LEN);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen, vlen;
		const uint8_t *k = mts_store_iter_key(it, &klen);
		const uint8_t *v = mts_store_iter_val(it, &vlen);

		if (!is_frontier_key(k, klen))
			break;
		if (mts_frontier_decode(v, vlen, &f) == 0 &&
		    mts_state_frontier_expired(&f, now, ss->retention_ms)) {
			mts_store_batch_del(s->b, MTS_CF_META, k, klen);
			s->forgot++;
		}
	}
	mts_store_iter_free(it);
}

/* Commits the pass (one synced batch) and only then updates the MST. */
static void
sweep_commit(struct statestore *ss, struct sweep *s)
{
	char err[256];
	size_t i;

	if (mts_store_batch_count(s->b) == 0)
		return;
	if (mts_store_commit(ss->db, s->b, err, sizeof(err)) < 0) {
		log_warnx("prune: %s", err);
		return;
	}
	for (i = 0; i < s->ndead; i++)
		mts_mst_del(ss->mst, s->dead[i], s->deadlen[i]);
	ss->nfrontiers += s->ndead;
	ss->nfrontiers -= s->forgot;
	log_info("pruned %llu tombstones, forgot %llu frontiers",
	    (unsigned long long)s->ndead, (unsigned long long)s->forgot);
}

void
ss_prune(struct statestore *ss)
{
	struct sweep s = { .b = mts_store_batch_new(ss->db) };
	uint64_t now = mts_wall_ms();
	size_t i;

	sweep_tombstones(ss, &s, now);
	sweep_frontiers(ss, &s, now);
	sweep_commit(ss, &s);
	for (i = 0; i < s.ndead; i++)
		free(s.dead[i]);
	free(s.dead);
	free(s.deadlen);
	mts_store_batch_free(s.b);
}
