/* depends_core.h: depends_on at a stack's first deploy as a pure function — from each service's dependencies (service_started, service_healthy, service_completed_successfully) and what its dependencies' tasks do now, which services may start their tasks and, for the others, what they wait for. */
#ifndef MTS_DEPENDS_CORE_H
#define MTS_DEPENDS_CORE_H

#include <stddef.h>
#include <stdint.h>

enum mts_dep_cond {
	DEP_STARTED,   /* service_started: its tasks run */
	DEP_HEALTHY,   /* service_healthy: its tasks run healthy */
	DEP_COMPLETED, /* service_completed_successfully: they exited 0 */
};

struct mts_dep {
	const char *service; /* <stack>_<service> */
	enum mts_dep_cond cond;
	int required; /* 0: a dependency that is not deployed is ignored */
};

/* A service and what its tasks do, from the s/ record and t/ records. */
struct mts_dep_service {
	const char *name;
	const struct mts_dep *deps;
	size_t ndeps;
	/* It has had a task (a t/ record, in any state): not a first deploy
	 * any more, so its dependencies no longer hold it back. */
	int started_before;
	uint32_t
	    desired; /* tasks wanted: replicas, nodes (global), completions (job) */
	uint32_t running;   /* tasks running */
	uint32_t healthy;   /* running and healthy (no health check: running) */
	uint32_t completed; /* tasks that exited 0 */
	uint32_t failed; /* tasks that exited non-zero and will not restart */
};

struct mts_dep_verdict {
	int may_start;
	char why[160]; /* may_start 0: what it waits for */
};

/* Fills out[i] for services[i]. A service waits while any of its
 * dependencies does not meet its condition with every task it wants (at
 * least one): started counts running or completed tasks, healthy the
 * healthy ones, completed the ones that exited 0 (one that failed is
 * reported as such; the dependent keeps waiting for a new deploy). The
 * caller places no task of a waiting service. */
void mts_dep_decide(const struct mts_dep_service *services, size_t n,
    struct mts_dep_verdict *out);
/* "service_started" | "service_healthy" | "service_completed_successfully"
 * ("" is service_started, Compose's default); -1 otherwise. */
int mts_dep_cond_parse(const char *, enum mts_dep_cond *);

#endif
