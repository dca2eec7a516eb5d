/* statestore.h: mts-statestore's private state, shared by its main and handlers. */
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

#define ACL_CLASSES 3 /* read, write, merge: bits of the route table */

struct round;
struct committer;

struct statestore {
	struct mts_cfg *cfg;
	struct mts_store *db;
	struct mts_mst *mst;
	struct mts_ipc_server *srv;
	struct mts_pub *pub;
	struct mts_hlc hlc;
	uint8_t node[MTS_NODE_ID_LEN];
	char node_hex[MTS_NODE_HEX_LEN + 1];
	uint64_t live;	     /* records that are not tombstones */
	uint64_t nfrontiers; /* prune frontiers in the meta CF */
	uint64_t commits;    /* synced rounds */
	uint64_t writes;     /* records written through them */

	struct mts_acl acl[ACL_CLASSES]; /* read, write, merge */

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

#endif
