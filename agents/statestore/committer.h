/* committer.h: a worker thread that makes one round durable (a synced RocksDB write) while the loop keeps taking requests. */
#ifndef MTS_COMMITTER_H
#define MTS_COMMITTER_H

#include <stddef.h>

struct mts_store;
struct mts_store_batch;
struct committer;

struct committer *committer_start(struct mts_store *);
/* Polls readable when the submitted batch has been written. */
int committer_fd(const struct committer *);
/* Hands a batch to the worker; at most one at a time. The batch stays
 * owned by the caller and must not change until committer_done says 1. */
void committer_submit(struct committer *, struct mts_store_batch *);
int committer_busy(const struct committer *);
/* 1 when the submitted batch is done (its result in *rc, an error text in
 * err), 0 when it is still being written. */
int committer_done(struct committer *, int *rc, char *err, size_t errlen);
/* Waits for the job in flight, then ends the thread. */
void committer_stop(struct committer *);

#endif
