/* compose_int.h: what the Compose loader's files share among themselves (not part of compose.h's API). */
#ifndef MTS_COMPOSE_INT_H
#define MTS_COMPOSE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "compose.h"
#include "ctree.h"

/* Writes "FILE:LINE:COLUMN: " and the message into err; returns -1. */
int compose_err(char *err, size_t errlen, const struct cnode *at,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
char *xmemdup_str(const char *s, size_t n);

/* merge.c */
struct cnode *compose_kv_map(const struct cnode *n, char *err, size_t errlen);
int compose_merge(struct cnode *base, const struct cnode *over, char *err,
    size_t errlen);

/* spec.c: the merged, interpolated tree into a stack. */
int compose_to_stack(const struct cnode *root, struct mts_stack *st, char *err,
    size_t errlen);

/* --- spec.c's typed conversions, shared with deploy.c --------------------------- */

struct conv {
	struct mts_stack *st;
	struct mts_service *svc;      /* the service being converted */
	const struct cnode *svc_tree; /* the merged services: mapping */
	char *err;
	size_t errlen;
};

#define CERR(c, at, ...) compose_err((c)->err, (c)->errlen, (at), __VA_ARGS__)

/* Each returns 0, or -1 with the error in c->err; `what` names the key
 * in messages. */
int cv_want(struct conv *, const struct cnode *, enum cnode_kind,
    const char *what);
int cv_str(struct conv *, const struct cnode *, const char *what, char **out);
int cv_word(struct conv *, const struct cnode *, const char *what, char *out,
    size_t outlen, const char *const *allowed);
int cv_bool(struct conv *, const struct cnode *, const char *what, int *out);
int cv_u64(struct conv *, const struct cnode *, const char *what, uint64_t max,
    uint64_t *out);
int cv_u32(struct conv *, const struct cnode *, const char *what,
    uint32_t *out);
int cv_duration(struct conv *, const struct cnode *, const char *what,
    int64_t *ms);
int cv_bytes(struct conv *, const struct cnode *, const char *what,
    uint64_t *out);
int cv_strv(struct conv *, const struct cnode *, const char *what,
    struct mts_strv *out, int split);
int cv_kv(struct conv *, const struct cnode *, const char *what,
    struct mts_kvlist *out);
void cv_warn(struct conv *, const struct cnode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* deploy.c */
int compose_deploy(struct conv *, const struct cnode *deploy);
int compose_xmts(struct conv *, const struct cnode *xmts);
int compose_top_networks(struct conv *, const struct cnode *networks);
int compose_top_volumes(struct conv *, const struct cnode *volumes);
/* Services join <stack>_default when they list no network; depends_on
 * has no cycle. */
int compose_check_refs(struct conv *);
int compose_has_network(const struct mts_stack *, const char *name);
int compose_has_volume(const struct mts_stack *, const char *name);

/* words.c: a command string split into words as a POSIX shell would
 * (quotes and backslashes, no expansion). -1 on unbalanced quotes. */
int compose_shell_split(const char *s, struct mts_strv *out);

#endif
