/* committer.h: the statestore's commit thread and the rounds it moves — open (the loop adds writes), syncing (written and fsynced), done (applied and answered by the loop). */
#ifndef MTS_COMMITTER_H
#define MTS_COMMITTER_H

#include <stddef.h>

struct mts_store;
struct round;
struct committer;

/*
 * The thread works like RocksDB's own write group leader: the moment one
 * round is synced it takes the open round, with every write the loop added
 * meanwhile, and starts writing it. The disk never waits for the loop to
 * wake up and hand it work; the loop only adds writes (under the lock) and
 * later applies and answers the rounds the thread finished, in order.
 */
struct committer *committer_start(struct mts_store *);
/* Polls readable when a round has finished (see committer_next_done). */
int committer_fd(const struct committer *);

/* Locks the open round so the loop can look at it and add writes. */
struct round *committer_lock(struct committer *);
/* The round being written, or NULL. Only while locked; read-only. */
struct round *committer_syncing(struct committer *);
/* Unlocks; the thread starts on the open round if it is idle. */
void committer_unlock(struct committer *);

/* The oldest finished round (commit order) or NULL. *rc < 0 and err tell a
 * failed write; the thread then takes nothing more until
 * committer_resume. The round is the caller's until committer_release. */
struct round *committer_next_done(struct committer *, int *rc, char *err,
    size_t errlen);
/* Takes back an answered round (reset for reuse). */
void committer_release(struct committer *, struct round *);
/* After a failed round (and the open round failed with it): writing goes on. */
void committer_resume(struct committer *);
/* Nothing is open, being written or waiting to be answered. */
int committer_idle(struct committer *);
/* Writes what is open or in flight, then ends the thread and frees the
 * rounds (every round must have been released). */
void committer_stop(struct committer *);

#endif
