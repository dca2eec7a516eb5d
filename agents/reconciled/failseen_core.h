/* failseen_core.h: the task failures this node has seen, each stamped with the node's own monotonic time when it first saw it — what [reconciled] failed_avoid counts from, so that no other node's wall clock (a failed task's finished_at, its assigned_at) is compared with this one's. */
#ifndef MTS_FAILSEEN_CORE_H
#define MTS_FAILSEEN_CORE_H

#include <stddef.h>

#include "mtstime.h"

/* One failed task as first seen here. */
struct mts_failure {
	char *id, *service, *node; /* node: 32 hex digits */
	mts_time_t seen;           /* this node's mts_now() when first seen */
	int present;               /* in the last view given */
};

struct mts_failseen {
	struct mts_failure *v;
	size_t n, cap;
};

/* One failed task of the view now: kept with the time it was first seen,
 * or added with now. */
void mts_failseen_note(struct mts_failseen *, const char *id,
    const char *service, const char *node, mts_time_t now);
/* Ends a view: failures not noted since the last sweep (their record
 * went) are forgotten. Call after noting every failed task of a view. */
void mts_failseen_sweep(struct mts_failseen *);
/* Whether a task of service failed on node, as first seen here less than
 * window ms before now. */
int mts_failseen_recent(const struct mts_failseen *, const char *service,
    const char *node, mts_time_t now, mts_time_t window);
void mts_failseen_free(struct mts_failseen *);

#endif
