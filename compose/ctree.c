/* ctree.c: libyaml events to a plain tree — anchors and aliases (expanded, with a node budget), `<<` merge keys, positions for every node. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "ctree.h"
#include "xmalloc.h"

struct anchor {
	char *name;
	struct cnode *node; /* not owned: lives in the tree */
};

struct builder {
	const char *file;
	struct cnode *stack[CTREE_MAX_DEPTH + 1];
	char *stack_anchor[CTREE_MAX_DEPTH + 1];
	int depth;
	struct cnode *root;
	struct anchor *anchors;
	size_t nanchors;
	size_t nodes; /* created so far, aliases expanded */
	char *err;
	size_t errlen;
};

/* --- nodes ------------------------------------------------------------------ */

struct cnode *
cnode_new(enum cnode_kind kind, const struct cnode *where)
{
	struct cnode *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	if (where) {
		n->file = where->file;
		n->line = where->line;
		n->col = where->col;
	}
	return n;
}

struct cnode *
cnode_scalar(const char *s, const struct cnode *where)
{
	struct cnode *n = cnode_new(CN_SCALAR, where);

	n->str = xstrdup(s);
	n->len = strlen(s);
	return n;
}

void
cnode_free(struct cnode *n)
{
	size_t i;

	if (n == NULL)
		return;
	/* a map still being built may hold a key without its value */
	for (i = 0; i < (n->kind == CN_MAP ? 2 * n->n + (n->len & 1) : n->n);
	     i++)
		cnode_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

static size_t
slots(const struct cnode *n)
{
	return n->kind == CN_MAP ? 2 * n->n : n->n;
}

static size_t
count_nodes(const struct cnode *n)
{
	size_t i, c = 1;

	for (i = 0; i < slots(n); i++)
		c += count_nodes(n->kids[i]);
	return c;
}

struct cnode *
cnode_clone(const struct cnode *n)
{
	struct cnode *c;
	size_t i;

	if (n == NULL)
		return NULL;
	c = xmalloc(sizeof(*c));
	*c = *n;
	if (n->str) {
		c->str = xmalloc(n->len + 1);
		memcpy(c->str, n->str, n->len + 1);
	}
	c->kids =
	    slots(n) ? xreallocarray(NULL, slots(n), sizeof(*c->kids)) : NULL;
	for (i = 0; i < slots(n); i++)
		c->kids[i] = cnode_clone(n->kids[i]);
	return c;
}

void
cnode_push(struct cnode *p, struct cnode *kid)
{
	size_t used = p->kind == CN_MAP ? 2 * p->n + (p->len & 1) : p->n;

	/* a map's half-written pair is tracked in len's low bit */
	p->kids = xreallocarray(p->kids, used + 1, sizeof(*p->kids));
	p->kids[used] = kid;
	if (p->kind != CN_MAP)
		p->n++;
	else if (p->len & 1) {
		p->len &= ~(size_t)1;
		p->n++;
	} else
		p->len |= 1;
}

struct cnode *
cnode_get(const struct cnode *m, const char *key)
{
	size_t i;

	if (m == NULL || m->kind != CN_MAP)
		return NULL;
	for (i = 0; i < m->n; i++)
		if (strcmp(m->kids[2 * i]->str, key) == 0)
			return m->kids[2 * i + 1];
	return NULL;
}

void
cnode_set(struct cnode *m, const char *key, struct cnode *v,
    const struct cnode *where)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		if (strcmp(m->kids[2 * i]->str, key) == 0) {
			cnode_free(m->kids[2 * i + 1]);
			m->kids[2 * i + 1] = v;
			return;
		}
	}
	cnode_push(m, cnode_scalar(key, where ? where : v));
	cnode_push(m, v);
}

int
cnode_del(struct cnode *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		if (strcmp(m->kids[2 * i]->str, key) != 0)
			continue;
		cnode_free(m->kids[2 * i]);
		cnode_free(m->kids[2 * i + 1]);
		memmove(&m->kids[2 * i], &m->kids[2 * i + 2],
		    (2 * (m->n - i - 1)) * sizeof(*m->kids));
		m->n--;
		return 1;
	}
	return 0;
}

int
cnode_is_null(const struct cnode *n)
{
	if (n == NULL)
		return 1;
	if (n->kind != CN_SCALAR || !n->plain)
		return 0;
	return n->len == 0 || strcmp(n->str, "~") == 0 ||
	    strcmp(n->str, "null") == 0 || strcmp(n->str, "Null") == 0 ||
	    strcmp(n->str, "NULL") == 0;
}

const char *
cnode_kind_name(const struct cnode *n)
{
	if (n == NULL || cnode_is_null(n))
		return "null";
	return n->kind == CN_MAP ? "a mapping"
	    : n->kind == CN_SEQ  ? "a list"
	                         : "a string";
}

/* --- building from events ---------------------------------------------------- */

/* "FILE:LINE:COLUMN: message" into b->err; returns -1. */
static int
verr(struct builder *b, size_t line, size_t col, const char *fmt, va_list ap)
{
	int off;

	off = snprintf(b->err, b->errlen, "%s:%zu:%zu: ", b->file, line, col);
	if (off >= 0 && (size_t)off < b->errlen)
		vsnprintf(b->err + off, b->errlen - off, fmt, ap);
	return -1;
}

/* An error at a libyaml mark (0-based). */
static int
berr(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(b, m->line + 1, m->column + 1, fmt, ap);
	va_end(ap);
	return -1;
}

/* An error at a node. */
static int
nerr(struct builder *b, const struct cnode *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(b, (size_t)n->line, (size_t)n->col, fmt, ap);
	va_end(ap);
	return -1;
}

static struct cnode *
node_at(struct builder *b, enum cnode_kind kind, const yaml_mark_t *m)
{
	struct cnode *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->file = b->file;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	b->nodes++;
	return n;
}

static void
add_anchor(struct builder *b, const char *name, struct cnode *n)
{
	size_t i;

	for (i = 0; i < b->nanchors; i++) {
		if (strcmp(b->anchors[i].name, name) == 0) {
			b->anchors[i].node = n; /* YAML: the latest wins */
			return;
		}
	}
	b->anchors =
	    xreallocarray(b->anchors, b->nanchors + 1, sizeof(*b->anchors));
	b->anchors[b->nanchors].name = xstrdup(name);
	b->anchors[b->nanchors++].node = n;
}

/* Hands a finished node to its parent (or makes it the root). */
static int
attach(struct builder *b, struct cnode *n, const yaml_mark_t *m)
{
	struct cnode *p;

	if (b->depth == 0) {
		b->root = n;
		return 0;
	}
	p = b->stack[b->depth - 1];
	if (p->kind == CN_MAP && !(p->len & 1) && n->kind != CN_SCALAR) {
		berr(b, m, "a mapping key must be a string, not %s",
		    cnode_kind_name(n));
		cnode_free(n);
		return -1;
	}
	cnode_push(p, n);
	return 0;
}

/* Applies `<<` merge keys of a finished map: keys of the merged maps that
 * the map does not set itself are added; in a list of maps the earlier
 * ones win. */
static int
apply_merges(struct builder *b, struct cnode *m)
{
	struct cnode *src;
	size_t i, j, k;

	for (i = 0; i < m->n; i++) {
		struct cnode *key = m->kids[2 * i];

		if (!key->plain || strcmp(key->str, "<<") != 0)
			continue;
		src = m->kids[2 * i + 1];
		m->kids[2 * i + 1] = NULL;
		cnode_free(key);
		memmove(&m->kids[2 * i], &m->kids[2 * i + 2],
		    (2 * (m->n - i - 1)) * sizeof(*m->kids));
		m->n--;
		for (j = 0; j < (src->kind == CN_SEQ ? src->n : 1); j++) {
			struct cnode *one =
			    src->kind == CN_SEQ ? src->kids[j] : src;

			if (one->kind != CN_MAP) {
				nerr(b, one,
				    "a merge key (<<) takes a "
				    "mapping or a list of mappings, not %s",
				    cnode_kind_name(one));
				cnode_free(src);
				return -1;
			}
			for (k = 0; k < one->n; k++) {
				if (cnode_get(m, one->kids[2 * k]->str))
					continue;
				cnode_push(m, cnode_clone(one->kids[2 * k]));
				cnode_push(m,
				    cnode_clone(one->kids[2 * k + 1]));
			}
		}
		cnode_free(src);
		i--; /* the pairs moved down one */
	}
	return 0;
}

static int
check_duplicate_key(struct builder *b, const struct cnode *m)
{
	size_t i, j;

	for (i = 0; i < m->n; i++)
		for (j = i + 1; j < m->n; j++)
			if (strcmp(m->kids[2 * i]->str, m->kids[2 * j]->str) ==
			    0)
				return nerr(b, m->kids[2 * j],
				    "duplicate key "
				    "\"%s\" (first at line %d)",
				    m->kids[2 * j]->str, m->kids[2 * i]->line);
	return 0;
}

static int
on_scalar(struct builder *b, yaml_event_t *ev)
{
	struct cnode *n = node_at(b, CN_SCALAR, &ev->start_mark);

	n->len = ev->data.scalar.length;
	n->str = xmalloc(n->len + 1);
	memcpy(n->str, ev->data.scalar.value, n->len);
	n->str[n->len] = '\0';
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (ev->data.scalar.anchor)
		add_anchor(b, (char *)ev->data.scalar.anchor, n);
	return attach(b, n, &ev->start_mark);
}

static int
on_alias(struct builder *b, yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	struct cnode *n = NULL;
	size_t i;

	for (i = 0; i < b->nanchors; i++)
		if (strcmp(b->anchors[i].name, name) == 0)
			n = b->anchors[i].node;
	if (n == NULL)
		return berr(b, &ev->start_mark, "unknown anchor \"*%s\"", name);
	b->nodes += count_nodes(n);
	if (b->nodes > CTREE_MAX_NODES)
		return berr(b, &ev->start_mark,
		    "aliases expand to more than "
		    "%d nodes",
		    CTREE_MAX_NODES);
	n = cnode_clone(n);
	n->line = (int)ev->start_mark.line + 1;
	n->col = (int)ev->start_mark.column + 1;
	return attach(b, n, &ev->start_mark);
}

static int
on_start(struct builder *b, yaml_event_t *ev, enum cnode_kind kind,
    const yaml_char_t *anchor)
{
	if (b->depth >= CTREE_MAX_DEPTH)
		return berr(b, &ev->start_mark,
		    "nested more than %d levels "
		    "deep",
		    CTREE_MAX_DEPTH);
	b->stack[b->depth] = node_at(b, kind, &ev->start_mark);
	b->stack_anchor[b->depth] = anchor ? xstrdup((char *)anchor) : NULL;
	b->depth++;
	return 0;
}

static int
on_end(struct builder *b, yaml_event_t *ev)
{
	struct cnode *n = b->stack[--b->depth];
	char *anchor = b->stack_anchor[b->depth];
	int rc = 0;

	b->stack[b->depth] = NULL;
	b->stack_anchor[b->depth] = NULL;
	if (n->kind == CN_MAP) {
		n->len = 0;
		if (apply_merges(b, n) < 0 || check_duplicate_key(b, n) < 0)
			rc = -1;
	}
	if (rc == 0 && anchor)
		add_anchor(b, anchor, n);
	free(anchor);
	if (rc < 0) {
		cnode_free(n);
		return -1;
	}
	return attach(b, n, &ev->start_mark);
}

static int
on_event(struct builder *b, yaml_event_t *ev, int *docs)
{
	if (b->nodes > CTREE_MAX_NODES)
		return berr(b, &ev->start_mark, "more than %d nodes",
		    CTREE_MAX_NODES);
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++*docs > 1)
			return berr(b, &ev->start_mark,
			    "a Compose file holds "
			    "one YAML document, this is a second one");
		return 0;
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_ALIAS_EVENT:
		return on_alias(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, ev, CN_SEQ, ev->data.sequence_start.anchor);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, ev, CN_MAP, ev->data.mapping_start.anchor);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(b, ev);
	default:
		return 0;
	}
}

static void
builder_free(struct builder *b)
{
	size_t i;

	while (b->depth > 0) {
		b->depth--;
		cnode_free(b->stack[b->depth]);
		free(b->stack_anchor[b->depth]);
	}
	for (i = 0; i < b->nanchors; i++)
		free(b->anchors[i].name);
	free(b->anchors);
}

int
ctree_parse(const char *file, const char *text, size_t len, struct cnode **root,
    char *err, size_t errlen)
{
	struct builder b = { .file = file, .err = err, .errlen = errlen };
	yaml_parser_t p;
	yaml_event_t ev;
	int rc = -1, docs = 0, done = 0;
	yaml_mark_t zero = { 0, 0, 0 };

	*root = NULL;
	if (!yaml_parser_initialize(&p))
		return berr(&b, &zero, "cannot start the YAML parser");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			berr(&b, &p.problem_mark, "invalid YAML: %s%s%s",
			    p.problem ? p.problem : "syntax error",
			    p.context ? " " : "", p.context ? p.context : "");
			goto out;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		if (on_event(&b, &ev, &docs) < 0) {
			yaml_event_delete(&ev);
			goto out;
		}
		yaml_event_delete(&ev);
	}
	if (b.root == NULL || cnode_is_null(b.root)) {
		cnode_free(b.root);
		b.root = node_at(&b, CN_MAP, &zero);
	} else if (b.root->kind != CN_MAP) {
		berr(&b, &zero, "the top level must be a mapping, not %s",
		    cnode_kind_name(b.root));
		goto out;
	}
	*root = b.root;
	b.root = NULL;
	rc = 0;
out:
	cnode_free(b.root);
	builder_free(&b);
	yaml_parser_delete(&p);
	return rc;
}
