/* recon_core.h: reconciliation as a pure function — from the services, the members a node sees and every node's task records, the actions that node must take: place missing replicas and stop extras of the services it owns (rendezvous hashing), and, for itself, global services, drains and tasks of removed services. */
#ifndef MTS_RECON_CORE_H
#define MTS_RECON_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "constraint.h"
#include "hash.h"

enum mts_rc_mode {
	RC_REPLICATED,
	RC_GLOBAL,
	RC_REPLICATED_JOB,
	RC_GLOBAL_JOB,
};

struct mts_rc_member {
	uint8_t id[MTS_NODE_ID_LEN];
	struct mts_node_attrs attrs; /* attrs.id: the id in hex */
	int alive;                   /* SWIM: alive (suspect counts as alive) */
	int draining;                /* availability drain */
	int paused;    /* availability pause: no new tasks, its tasks stay */
	int returning; /* came back moments ago (see the view's settling) */
};

struct mts_rc_service {
	const char *name; /* <stack>_<service> */
	enum mts_rc_mode mode;
	uint32_t replicas; /* replicated modes; completions for a job */
	const struct mts_constraint *constraints;
	size_t nconstraints;
	/* update_config order start-first: a task on a draining node stops
	 * only while the service still runs its count without it */
	int start_first;
};

enum mts_rc_task_state {
	RC_TASK_PENDING, /* committed, not running yet */
	RC_TASK_RUNNING,
	RC_TASK_DONE,    /* exited 0 */
	RC_TASK_FAILED,  /* exited non-zero and the node gave up */
	RC_TASK_STOPPED, /* stopped on purpose */
};

/* A task as its node's t/ record says. */
struct mts_rc_task {
	const char *id;
	const char *node; /* hex id of the node that runs it */
	const char *service;
	enum mts_rc_task_state state;
	int desired_running; /* the node's intent */
	uint64_t created;    /* HLC of its creation: orders "newest" */
	uint32_t slot;       /* replicated: 1..replicas; 0: none */
};

struct mts_rc_view {
	const struct mts_rc_member *members;
	size_t nmembers;
	const struct mts_rc_service *services;
	size_t nservices;
	const struct mts_rc_task *tasks;
	size_t ntasks;
	const char *self; /* this node's id, hex */
	/* A member came back moments ago (a healed partition, a restart),
	 * or this node just started: the records of what ran on the other
	 * side may not all be here yet or be out of date, and the owner this
	 * node would defer to may not be alive in its view yet. Meanwhile an
	 * owner places nothing for a replicated service (a task stopped on
	 * the other side shows as missing until the record of the one that
	 * replaced it arrives) and stops only stale tasks on returning
	 * members: their slot is held by a newer task on a member this node
	 * kept hearing, whose record it therefore holds as it is. */
	int settling;
	/* Optional: the rendezvous weight of (service, member id), for a
	 * caller that keeps the weights across passes (they never change);
	 * NULL: mts_rendezvous_weight each time. */
	uint64_t (*weight)(void *ctx, const char *service,
	    const uint8_t id[MTS_NODE_ID_LEN]);
	void *weight_ctx;
	/* Optional: owners[i] is services[i]'s owner as mts_rc_owner gives
	 * it, for a caller that keeps the owners while the membership stays
	 * the same (each is a pass over the members: S x N weights a pass,
	 * 200,000 at 1,000 nodes and 200 services); NULL: computed here. */
	const long *owners;
};

enum mts_rc_kind {
	RC_PLACE,       /* owner: place `count` tasks of service */
	RC_PLACE_LOCAL, /* global: start one task of service on this node */
	RC_STOP,        /* stop task (on whichever node runs it) */
};

struct mts_rc_action {
	enum mts_rc_kind kind;
	size_t service; /* index into view.services (RC_STOP of an orphan:
			    SIZE_MAX) */
	size_t task;    /* RC_STOP: index into view.tasks */
	uint32_t count; /* RC_PLACE */
	char why[96];   /* for service ps and the logs */
};

struct mts_rc_actions {
	struct mts_rc_action *v;
	size_t n, cap;
};

/* The index of service's owner among the members that are alive and not
 * draining, -1 when there is none. Every node computes the same one from
 * the same membership. */
long mts_rc_owner(const struct mts_rc_view *, const char *service);

/* > 0 when task x was placed after task y (created, then id: the order
 * in which the stale rule and a returning node's hold call one "newer"),
 * < 0 when before, 0 for the same task. */
int mts_rc_newer(const struct mts_rc_task *x, const struct mts_rc_task *y);
/* Appends to out what view.self must do now. Deterministic: the same view
 * gives the same actions in the same order, whatever the order of its
 * tasks. Extras are chosen by the rule both sides of a healed partition
 * share: a stale task first (its slot is also held by a newer live task:
 * it was replaced while its node was dead or cut off), then most tasks of
 * the service on one node, then the newest, then the greatest task id;
 * only stale ones of returning members, and nothing placed, while the
 * view is settling. */
void mts_rc_reconcile(const struct mts_rc_view *, struct mts_rc_actions *out);
void mts_rc_actions_free(struct mts_rc_actions *);

#endif
