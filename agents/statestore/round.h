/* round.h: one group-commit round — the writes accepted while the previous round syncs, their batch, and a key index over them. */
#ifndef MTS_ROUND_H
#define MTS_ROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "record.h"

struct mts_ipc_call;
struct mts_store;

/* A write accepted in a round, waiting for the synced commit. */
struct pending {
	struct mts_ipc_call *call; /* who to answer; NULL for the 2nd.. record
				      of a merge */
	uint32_t kind;             /* request body case */
	uint8_t *key;
	size_t klen;
	uint8_t *enc; /* canonical encoding of the new record */
	size_t elen;
	uint8_t rh[MTS_HASH_LEN];
	bool was_live;  /* the key had a live record before this round */
	bool tombstone; /* the new record is a delete */
	bool local;     /* put/delete here, not a merge */
	uint32_t applied, ignored; /* merge counters, on the entry with call */
};

struct round {
	struct mts_store *st;
	struct mts_store_batch *batch;
	struct pending *pend;
	size_t n, cap;
	size_t *slot; /* open addressing: index+1 of the newest entry per key */
	size_t nslots, nkeys;
};

void round_init(struct round *, struct mts_store *);
/* Frees the entries and starts a fresh batch (replies must be sent first). */
void round_reset(struct round *);
void round_free(struct round *);
/* The newest entry for key in this round, or NULL. */
struct pending *round_find(struct round *, const uint8_t *key, size_t klen);
/* Whether p is the newest entry for its key. */
bool round_is_newest(struct round *, const struct pending *p);
/* Adds a write of rec to the round and its batch. was_live is the key's
 * liveness before the round; a key already in the round keeps the value of
 * its first entry. Copies key and the encoding. */
struct pending *round_add(struct round *, struct mts_ipc_call *call,
    uint32_t kind, const uint8_t *key, size_t klen,
    const struct mts_record *rec, bool was_live, bool local);

#endif
