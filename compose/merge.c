/* merge.c: several Compose files merged in order (-f a.yml -f b.yml) with Compose's override rules — mappings merge, command/entrypoint/healthcheck.test are replaced, list-or-map keys merge by key, ports and volumes by their target, the other lists append without duplicates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose_int.h"
#include "xmalloc.h"

enum merge_rule {
	M_DEFAULT, /* maps merge recursively, anything else is replaced */
	M_REPLACE, /* the later value replaces the earlier, even a map */
	M_KV,      /* a list of KEY=VALUE (or KEY) or a map: merge by key */
	M_NAMES,   /* a list of names or a map of name: options, by name */
	M_APPEND,  /* a list (or a single string): append what is new */
	M_PORTS,   /* by published/target/protocol */
	M_MOUNTS,  /* by target */
};

/* Paths are relative to a service; "*" in the table is not needed. */
static const struct {
	const char *path;
	enum merge_rule rule;
} rules[] = {
	{ "command", M_REPLACE },
	{ "entrypoint", M_REPLACE },
	{ "healthcheck.test", M_REPLACE },
	{ "environment", M_KV },
	{ "labels", M_KV },
	{ "deploy.labels", M_KV },
	{ "sysctls", M_KV },
	{ "build.args", M_KV },
	{ "networks", M_NAMES },
	{ "depends_on", M_NAMES },
	{ "ports", M_PORTS },
	{ "volumes", M_MOUNTS },
	{ "secrets", M_APPEND },
	{ "configs", M_APPEND },
	{ "cap_add", M_APPEND },
	{ "cap_drop", M_APPEND },
	{ "dns", M_APPEND },
	{ "dns_search", M_APPEND },
	{ "dns_opt", M_APPEND },
	{ "env_file", M_APPEND },
	{ "expose", M_APPEND },
	{ "external_links", M_APPEND },
	{ "links", M_APPEND },
	{ "tmpfs", M_APPEND },
	{ "security_opt", M_APPEND },
	{ "devices", M_APPEND },
	{ "extra_hosts", M_APPEND },
	{ "group_add", M_APPEND },
	{ "deploy.placement.constraints", M_APPEND },
	{ "deploy.placement.preferences", M_APPEND },
};

static enum merge_rule
rule_for(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (strcmp(rules[i].path, path) == 0)
			return rules[i].rule;
	return M_DEFAULT;
}

/* A list-or-map turned into a map (a new tree). With kv, "K=V" items give
 * K: V and "K" items K: null (environment, labels); without, every item
 * is a name with null options (networks, depends_on). NULL (err set) when
 * it is neither a list of strings nor a map. */
static struct cnode *
list_to_map(const struct cnode *n, int kv, char *err, size_t errlen)
{
	struct cnode *m;
	size_t i;

	if (n->kind == CN_MAP)
		return cnode_clone(n);
	if (n->kind != CN_SEQ) {
		compose_err(err, errlen, n,
		    "expected a list or a mapping, "
		    "not %s",
		    cnode_kind_name(n));
		return NULL;
	}
	m = cnode_new(CN_MAP, n);
	for (i = 0; i < n->n; i++) {
		const struct cnode *it = n->kids[i];
		const char *eq = NULL;
		struct cnode *v;
		char *k;

		if (it->kind != CN_SCALAR) {
			compose_err(err, errlen, it, "expected %s, not %s",
			    kv ? "KEY=VALUE" : "a name", cnode_kind_name(it));
			cnode_free(m);
			return NULL;
		}
		if (kv)
			eq = strchr(it->str, '=');
		k = eq ? xmemdup_str(it->str, (size_t)(eq - it->str))
		       : xstrdup(it->str);
		v = eq ? cnode_scalar(eq + 1, it) : cnode_new(CN_SCALAR, it);
		if (!eq) {
			v->str = xstrdup("");
			v->plain = 1; /* null: no value */
		}
		cnode_set(m, k, v, it);
		free(k);
	}
	return m;
}

struct cnode *
compose_kv_map(const struct cnode *n, char *err, size_t errlen)
{
	return list_to_map(n, 1, err, errlen);
}

static struct cnode *
names_map(const struct cnode *n, char *err, size_t errlen)
{
	return list_to_map(n, 0, err, errlen);
}

static struct cnode *
as_list(const struct cnode *n)
{
	struct cnode *l;

	if (n->kind == CN_SEQ)
		return cnode_clone(n);
	l = cnode_new(CN_SEQ, n);
	cnode_push(l, cnode_clone(n));
	return l;
}

/* The identity of a list item for by-key merges. */
static char *
item_key(const struct cnode *it, enum merge_rule rule)
{
	const struct cnode *t;

	if (it->kind == CN_SCALAR) {
		if (rule == M_MOUNTS) {
			char *copy = xstrdup(it->str), *c1, *c2;

			c1 = strchr(copy, ':');
			if (c1 != NULL) {
				c2 = strchr(c1 + 1, ':');
				if (c2)
					*c2 = '\0';
				memmove(copy, c1 + 1, strlen(c1 + 1) + 1);
			}
			return copy;
		}
		return xstrdup(it->str);
	}
	if (it->kind != CN_MAP)
		return NULL;
	if (rule == M_MOUNTS)
		return (t = cnode_get(it, "target")) && t->kind == CN_SCALAR
		    ? xstrdup(t->str)
		    : NULL;
	if (rule == M_PORTS) {
		const struct cnode *ip = cnode_get(it, "host_ip"),
		                   *pub = cnode_get(it, "published"),
		                   *tg = cnode_get(it, "target"),
		                   *pr = cnode_get(it, "protocol");

		return xasprintf("%s:%s:%s/%s",
		    ip && ip->kind == CN_SCALAR ? ip->str : "",
		    pub && pub->kind == CN_SCALAR ? pub->str : "",
		    tg && tg->kind == CN_SCALAR ? tg->str : "",
		    pr && pr->kind == CN_SCALAR ? pr->str : "tcp");
	}
	return NULL;
}

static int
same_item(const struct cnode *a, const struct cnode *b, enum merge_rule rule)
{
	char *ka;
	char *kb;
	int same;

	if (rule == M_APPEND)
		return a->kind == CN_SCALAR && b->kind == CN_SCALAR &&
		    strcmp(a->str, b->str) == 0;
	ka = item_key(a, rule);
	kb = item_key(b, rule);
	same = ka && kb && strcmp(ka, kb) == 0;

	free(ka);
	free(kb);
	return same;
}

/* Appends over's items to base (a list); an item equal by key replaces the
 * earlier one in place. */
static void
merge_list(struct cnode *base, const struct cnode *over, enum merge_rule rule)
{
	struct cnode *add = as_list(over);
	size_t i, j;

	for (i = 0; i < add->n; i++) {
		struct cnode *it = add->kids[i];
		int done = 0;

		for (j = 0; j < base->n && !done; j++) {
			if (same_item(base->kids[j], it, rule)) {
				cnode_free(base->kids[j]);
				base->kids[j] = it;
				done = 1;
			}
		}
		if (!done)
			cnode_push(base, it);
		add->kids[i] = NULL;
	}
	add->n = 0;
	cnode_free(add);
}

static int merge_map(struct cnode *base, const struct cnode *over,
    const char *path, char *err, size_t errlen);

/* Merges over into the value slot *slot (base's value for one key). */
static int
merge_value(struct cnode **slot, const struct cnode *over, const char *path,
    char *err, size_t errlen)
{
	enum merge_rule rule = rule_for(path);
	struct cnode *b = *slot, *m, *o;
	int rc;

	if (rule == M_KV || rule == M_NAMES) {
		m = rule == M_KV ? compose_kv_map(b, err, errlen)
		                 : names_map(b, err, errlen);
		o = m ? (rule == M_KV ? compose_kv_map(over, err, errlen)
		                      : names_map(over, err, errlen))
		      : NULL;
		if (o == NULL) {
			cnode_free(m);
			return -1;
		}
		rc = merge_map(m, o, path, err, errlen);
		cnode_free(o);
		cnode_free(*slot);
		*slot = m;
		return rc;
	}
	if (rule == M_APPEND || rule == M_PORTS || rule == M_MOUNTS) {
		m = as_list(b);
		merge_list(m, over, rule);
		cnode_free(*slot);
		*slot = m;
		return 0;
	}
	if (rule == M_DEFAULT && b->kind == CN_MAP && over->kind == CN_MAP)
		return merge_map(b, over, path, err, errlen);
	cnode_free(*slot);
	*slot = cnode_clone(over);
	return 0;
}

static int
merge_map(struct cnode *base, const struct cnode *over, const char *path,
    char *err, size_t errlen)
{
	size_t i, j;

	for (i = 0; i < over->n; i++) {
		const char *k = over->kids[2 * i]->str;
		const struct cnode *ov = over->kids[2 * i + 1];
		char *sub = *path ? xasprintf("%s.%s", path, k) : xstrdup(k);
		int found = 0, rc = 0;

		for (j = 0; j < base->n && !found; j++) {
			if (strcmp(base->kids[2 * j]->str, k) != 0)
				continue;
			found = 1;
			if (cnode_is_null(base->kids[2 * j + 1]) ||
			    cnode_is_null(ov)) {
				cnode_free(base->kids[2 * j + 1]);
				base->kids[2 * j + 1] = cnode_clone(ov);
			} else
				rc = merge_value(&base->kids[2 * j + 1], ov,
				    sub, err, errlen);
		}
		if (!found) {
			cnode_push(base, cnode_clone(over->kids[2 * i]));
			cnode_push(base, cnode_clone(ov));
		}
		free(sub);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Merges a later file's top level into the earlier one's. Services merge
 * with the service rules; the other top-level maps merge recursively. */
int
compose_merge(struct cnode *base, const struct cnode *over, char *err,
    size_t errlen)
{
	size_t i, j;

	for (i = 0; i < over->n; i++) {
		const char *k = over->kids[2 * i]->str;
		const struct cnode *ov = over->kids[2 * i + 1];
		struct cnode *bv = cnode_get(base, k);

		if (strcmp(k, "services") != 0 || bv == NULL ||
		    bv->kind != CN_MAP || ov->kind != CN_MAP) {
			if (bv && bv->kind == CN_MAP && ov->kind == CN_MAP) {
				if (merge_map(bv, ov, "-", err, errlen) < 0)
					return -1;
			} else
				cnode_set(base, k, cnode_clone(ov),
				    over->kids[2 * i]);
			continue;
		}
		for (j = 0; j < ov->n; j++) {
			const char *name = ov->kids[2 * j]->str;
			struct cnode *bs = cnode_get(bv, name);
			const struct cnode *os = ov->kids[2 * j + 1];

			if (bs && bs->kind == CN_MAP && os->kind == CN_MAP) {
				if (merge_map(bs, os, "", err, errlen) < 0)
					return -1;
			} else
				cnode_set(bv, name, cnode_clone(os),
				    ov->kids[2 * j]);
		}
	}
	return 0;
}
