/* place_core.h: placement as a pure function — filter the nodes a service may run on (alive, available, constraints, free capacity, max per node), then rank them (spread over nodes, then over each preference label's values, then least loaded; or binpack) and say why when nothing fits. */
#ifndef MTS_PLACE_CORE_H
#define MTS_PLACE_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "constraint.h"
#include "ledger_core.h"

/* A node as the owner sees it (from n/, nl/ and d/ records and SWIM). */
struct mts_place_node {
	struct mts_node_attrs a; /* what constraints look at */
	int alive;               /* SWIM says alive */
	int active;              /* availability active (not drain or pause) */
	struct mts_res capacity, free; /* from its digest */
	uint32_t tasks;                /* all its tasks */
	uint32_t service_tasks;        /* tasks of the service being placed */
};

struct mts_place_req {
	struct mts_res res; /* reservations, else limits */
	const struct mts_constraint *constraints;
	size_t nconstraints;
	const char *const *spread; /* preference labels, in order */
	size_t nspread;
	uint32_t max_per_node; /* 0: no limit */
	int binpack;
	uint32_t count; /* tasks to place */
};

/* Why nodes were left out, for `plan` and `service ps`. */
struct mts_place_why {
	uint32_t nodes, eligible;
	uint32_t down, inactive, constraint, cpu, memory, max_per_node;
	int first_constraint; /* index of the constraint that failed most */
};

/*
 * Chooses a node for each of req->count tasks, as if placing them one at
 * a time (each choice updates the chosen node's free capacity and
 * counts in a working copy; the caller's nodes are not changed). out[i]
 * is an index into nodes; returns how many were placed (fewer than count
 * when capacity or the per-node limit runs out). Deterministic: ties go
 * to the lower node id.
 */
uint32_t mts_place(const struct mts_place_node *nodes, size_t n,
    const struct mts_place_req *req, uint32_t *out, struct mts_place_why *why);
/* A sentence for people: "9 of 9 placeable" or "0 of 1 placeable: no node
 * matches node.labels.disk == ssd". */
void mts_place_explain(const struct mts_place_req *, uint32_t placed,
    const struct mts_place_why *, char *out, size_t outlen);

#endif
