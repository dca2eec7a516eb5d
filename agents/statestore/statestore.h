/* statestore.h: mts-statestore's private state and the functions its files share (main, API, group commit, pruning). */
#ifndef MTS_STATESTORE_H
#define MTS_STATESTORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "acl.h"
#include "hash.h"
#include "hlc.h"
#include "loop.h"
#include "mtstime.h"

#define SS_META_HLC "hlc" /* meta CF: the HLC as of the last synced round */

struct committer;
struct mts_frontier;
struct mts_ipc_service;
struct mts_record;
struct pending;
struct round;

struct statestore {
	struct mts_cfg *cfg;
	struct mts_store *db;
	struct mts_mst *mst;
	struct mts_ipc_server *srv;
	struct mts_pub *pub;
	struct mts_hlc hlc;
	uint8_t node[MTS_NODE_ID_LEN];
	char node_hex[MTS_NODE_HEX_LEN + 1];
	uint64_t live;       /* records that are not tombstones */
	uint64_t nfrontiers; /* prune frontiers in the meta CF */
	uint64_t commits;    /* synced rounds */
	uint64_t writes;     /* records written through them */

	struct mts_acl_table acl; /* who may call: ss_service.acl */

	/* group commit: the open round takes new writes while the syncing
	 * one is written by the commit thread */
	struct round *open;
	struct round *syncing;
	struct round *spare; /* empty; takes the place of a committed round */
	struct committer *committer;

	struct mts_loop *loop;
	struct mts_timer prune_timer;
	uint64_t retention_ms;
	int64_t prune_interval_ms;
	int prune_due; /* the timer fired; runs when no write is pending */
	int stop;
};

/* statestore_api.c */
extern const struct mts_ipc_service ss_service;
/* Sends p's record on the change feed. */
void ss_publish(struct statestore *, const struct pending *p);
/* Answers the caller of p (a put, delete or a merge's first write). */
void ss_reply_write(const struct pending *p);

/* commit.c */
/* The current record of key as a new write must see it: the open round,
 * then the round being synced, then the database. On 1, *rec points into
 * *buf (free it) or into a round; 0 when absent; <0 on I/O error. */
int ss_current(struct statestore *, const uint8_t *key, size_t klen,
    struct mts_record *rec, uint8_t **buf);
/* Hands the open round to the commit thread (if it is idle), so that the
 * loop keeps accepting requests while the disk syncs: everything that
 * arrives meanwhile forms the next round, one fsync for all of it. */
void ss_round_submit(struct statestore *);
/* Called when the commit thread is done. The next round goes to the disk
 * first (with whatever arrived meanwhile), so the disk never waits for
 * the bookkeeping; then the synced round is applied to the MST, published
 * and only then answered, so no one hears of a write that a crash could
 * still lose. Reads stay right: the committed round is in the database
 * now, the newly submitted one is ss->syncing. */
void ss_round_finish(struct statestore *);

/* prune.c */
/* Key's prune frontier: 1 and *f filled, or 0 when it has none. */
int ss_frontier_get(struct statestore *, const uint8_t *key, size_t klen,
    struct mts_frontier *f);
/* The frontiers in the meta CF, counted at start-up. */
uint64_t ss_frontier_count(struct statestore *);
/* Removes tombstones older than the retention period, leaving a prune
 * frontier in their place, and forgets frontiers that are themselves
 * older than the retention period. One synced batch; run it only when no
 * write is pending. */
void ss_prune(struct statestore *);

#endif
