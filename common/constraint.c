/* constraint.c: parsing and matching placement constraints against a node's attributes and labels. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "constraint.h"

static const char *const attrs[] = { "node.id", "node.hostname",
	"node.platform.os", "node.platform.arch", "node.role", NULL };

static int
known_attr(const char *a)
{
	size_t i;

	if (strncmp(a, "node.labels.", 12) == 0 && a[12])
		return 1;
	if (strncmp(a, "engine.labels.", 14) == 0 && a[14])
		return 1;
	for (i = 0; attrs[i]; i++)
		if (strcmp(a, attrs[i]) == 0)
			return 1;
	return 0;
}

static void
trim_into(char *dst, size_t len, const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

int
mts_constraint_parse(const char *s, struct mts_constraint *c, char *err,
    size_t errlen)
{
	const char *op = strstr(s, "==");

	memset(c, 0, sizeof(*c));
	c->op = MTS_CONSTRAINT_EQ;
	if (op == NULL) {
		op = strstr(s, "!=");
		c->op = MTS_CONSTRAINT_NE;
	}
	if (op == NULL) {
		snprintf(err, errlen,
		    "\"%s\": expected ATTRIBUTE == VALUE or "
		    "ATTRIBUTE != VALUE",
		    s);
		return -1;
	}
	trim_into(c->attr, sizeof(c->attr), s, (size_t)(op - s));
	trim_into(c->value, sizeof(c->value), op + 2, strlen(op + 2));
	if (!known_attr(c->attr)) {
		snprintf(err, errlen,
		    "\"%s\": unknown attribute \"%s\" (node.id, "
		    "node.hostname, node.role, node.platform.os, "
		    "node.platform.arch, node.labels.NAME, engine.labels.NAME)",
		    s, c->attr);
		return -1;
	}
	if (c->value[0] == '\0') {
		snprintf(err, errlen, "\"%s\": no value to compare with", s);
		return -1;
	}
	return 0;
}

const char *
mts_label_get(const struct mts_label *l, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(l[i].key, key) == 0)
			return l[i].value;
	return NULL;
}

static const char *
attr_value(const struct mts_constraint *c, const struct mts_node_attrs *n)
{
	const char *v;

	if (strncmp(c->attr, "node.labels.", 12) == 0)
		return mts_label_get(n->labels, n->nlabels, c->attr + 12);
	if (strncmp(c->attr, "engine.labels.", 14) == 0)
		return mts_label_get(n->engine_labels, n->nengine_labels,
		    c->attr + 14);
	if (strcmp(c->attr, "node.id") == 0)
		return n->id;
	if (strcmp(c->attr, "node.hostname") == 0)
		return n->hostname;
	if (strcmp(c->attr, "node.platform.os") == 0)
		return n->os;
	if (strcmp(c->attr, "node.platform.arch") == 0)
		return n->arch;
	/* node.role: no manager nodes in mts */
	v = mts_label_get(n->labels, n->nlabels, "role");
	return v ? v : "manager";
}

int
mts_constraint_match(const struct mts_constraint *c,
    const struct mts_node_attrs *n)
{
	const char *v = attr_value(c, n);
	int eq = v != NULL && strcmp(v, c->value) == 0;

	return c->op == MTS_CONSTRAINT_EQ ? eq : !eq;
}
