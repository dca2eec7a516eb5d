/* constraint.h: placement constraints as Swarm writes them ("node.labels.zone == a") and the node attributes they test — shared by schedd (placement) and reconciled (which nodes a global service runs on). */
#ifndef MTS_CONSTRAINT_H
#define MTS_CONSTRAINT_H

#include <stddef.h>

struct mts_label {
	const char *key, *value;
};

/* What a constraint can look at on a node (borrowed strings). */
struct mts_node_attrs {
	const char *id; /* 32 hex digits */
	const char *hostname;
	const char *os, *arch;
	const struct mts_label *labels; /* node labels (nl/ and n/) */
	size_t nlabels;
	const struct mts_label *engine_labels;
	size_t nengine_labels;
};

enum mts_constraint_op {
	MTS_CONSTRAINT_EQ,
	MTS_CONSTRAINT_NE,
};

struct mts_constraint {
	char attr[128]; /* node.id, node.hostname, node.labels.X, ... */
	char value[128];
	enum mts_constraint_op op;
};

/* Parses "ATTR == VALUE" / "ATTR != VALUE" (spaces optional). 0, or -1
 * with err saying what is wrong (an unknown attribute among them). */
int mts_constraint_parse(const char *s, struct mts_constraint *c, char *err,
    size_t errlen);
/* Whether the node satisfies c. node.role matches the label "role" where
 * the node has one; otherwise every node is a manager (mts has no
 * roles). */
int mts_constraint_match(const struct mts_constraint *c,
    const struct mts_node_attrs *node);
/* The value of a label, NULL when the node has none by that key. */
const char *mts_label_get(const struct mts_label *, size_t n, const char *key);

#endif
