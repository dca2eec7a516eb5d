/* ctree.h: the YAML document of a Compose file as a plain tree (maps, sequences, scalars with file:line:column), with anchors, aliases and merge keys resolved. */
#ifndef MTS_CTREE_H
#define MTS_CTREE_H

#include <stddef.h>

enum cnode_kind {
	CN_SCALAR,
	CN_MAP,
	CN_SEQ,
};

/* A map holds n (key, value) pairs in kids[2i], kids[2i+1]; keys are
 * scalars. A sequence holds n items. Every node owns its children. */
struct cnode {
	enum cnode_kind kind;
	char *str;        /* scalar text (interpolated once loaded) */
	size_t len;       /* its length (a scalar may hold NUL bytes) */
	int plain;        /* an unquoted scalar: null, bools and numbers */
	const char *file; /* not owned: the file name given to the parser */
	int line, col;    /* 1-based */
	struct cnode **kids;
	size_t n;
};

/* Bounds against hostile input: alias expansion ("billion laughs") and
 * nesting are limited. */
#define CTREE_MAX_NODES 200000
#define CTREE_MAX_DEPTH 64

/* Parses one YAML document from text. On success *root is a map (an empty
 * document gives an empty map). On failure returns -1 with err holding
 * "FILE:LINE:COLUMN: what is wrong". */
int ctree_parse(const char *file, const char *text, size_t len,
    struct cnode **root, char *err, size_t errlen);
void cnode_free(struct cnode *);
struct cnode *cnode_clone(const struct cnode *);
struct cnode *cnode_new(enum cnode_kind, const struct cnode *where);
struct cnode *cnode_scalar(const char *s, const struct cnode *where);
/* Appends a child (a sequence item, or a key then its value). */
void cnode_push(struct cnode *parent, struct cnode *kid);

/* The value of key in a map, or NULL. */
struct cnode *cnode_get(const struct cnode *map, const char *key);
/* Replaces (or adds) key's value in a map; takes ownership of value. */
void cnode_set(struct cnode *map, const char *key, struct cnode *value,
    const struct cnode *where);
/* Removes key from a map (freeing its value); 1 if it was there. */
int cnode_del(struct cnode *map, const char *key);
/* A plain null (~, null, Null, NULL or empty) scalar, or NULL itself. */
int cnode_is_null(const struct cnode *);
/* "kind" for messages: "a mapping", "a list", "a string". */
const char *cnode_kind_name(const struct cnode *);

#endif
