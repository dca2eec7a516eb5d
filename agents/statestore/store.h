/* store.h: the statestore's RocksDB layer — column families `records` and `meta`, synced batches, iteration. */
#ifndef MTS_STORE_H
#define MTS_STORE_H

#include <stddef.h>
#include <stdint.h>

struct mts_store;
struct mts_store_batch;
struct mts_store_iter;

enum mts_store_cf {
	MTS_CF_RECORDS = 0, /* key -> canonical record encoding */
	MTS_CF_META = 1,    /* node id, HLC high-water mark, prune frontiers */
};

struct mts_store_opts {
	int sync;            /* fsync the WAL before a batch returns */
	size_t cache_bytes;  /* block cache */
	size_t write_buffer; /* memtable size */
};

/* Opens (creating if missing) the database in dir. NULL and err on failure. */
struct mts_store *mts_store_open(const char *dir, const struct mts_store_opts *,
    char *err, size_t errlen);
void mts_store_close(struct mts_store *);

/* Point read. On 0, *val is malloc'ed (caller frees); -MTS_ERR_NOTFOUND,
 * or -MTS_ERR_IO with err filled. */
int mts_store_get(struct mts_store *, enum mts_store_cf, const void *key,
    size_t klen, uint8_t **val, size_t *vlen, char *err, size_t errlen);

/* A write batch; nothing is visible or durable until mts_store_commit. */
struct mts_store_batch *mts_store_batch_new(struct mts_store *);
void mts_store_batch_free(struct mts_store_batch *);
void mts_store_batch_put(struct mts_store_batch *, enum mts_store_cf,
    const void *key, size_t klen, const void *val, size_t vlen);
void mts_store_batch_del(struct mts_store_batch *, enum mts_store_cf,
    const void *key, size_t klen);
size_t mts_store_batch_count(const struct mts_store_batch *);
/* Writes the batch atomically (synced if the store was opened so). */
int mts_store_commit(struct mts_store *, struct mts_store_batch *, char *err,
    size_t errlen);

/* Iteration in key order from the first key >= start. Key and value
 * pointers are valid until the next call on the iterator. */
struct mts_store_iter *mts_store_iter_new(struct mts_store *, enum mts_store_cf,
    const void *start, size_t slen);
int mts_store_iter_valid(struct mts_store_iter *);
void mts_store_iter_next(struct mts_store_iter *);
const uint8_t *mts_store_iter_key(struct mts_store_iter *, size_t *len);
const uint8_t *mts_store_iter_val(struct mts_store_iter *, size_t *len);
void mts_store_iter_free(struct mts_store_iter *);

#endif
