/* json.c: a stack as JSON (for mtsctl -o json) — the canonical printed form read back as a tree, so JSON and YAML never disagree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compose_int.h"

/* Plain scalars keep their YAML type: true/false, null, whole numbers. */
static json_t *
scalar(const struct cnode *n)
{
	char *end;
	long long v;

	if (!n->plain)
		return json_stringn(n->str, n->len);
	if (cnode_is_null(n))
		return json_null();
	if (strcmp(n->str, "true") == 0 || strcmp(n->str, "false") == 0)
		return json_boolean(n->str[0] == 't');
	v = strtoll(n->str, &end, 10);
	if (*end == '\0' && end != n->str)
		return json_integer(v);
	return json_real(strtod(n->str, NULL));
}

static json_t *
to_json(const struct cnode *n)
{
	json_t *j;
	size_t i;

	if (n->kind == CN_SCALAR)
		return scalar(n);
	if (n->kind == CN_SEQ) {
		j = json_array();
		for (i = 0; i < n->n; i++)
			json_array_append_new(j, to_json(n->kids[i]));
		return j;
	}
	j = json_object();
	for (i = 0; i < n->n; i++)
		json_object_set_new(j, n->kids[2 * i]->str,
		    to_json(n->kids[2 * i + 1]));
	return j;
}

json_t *
mts_stack_json(const struct mts_stack *st)
{
	struct cnode *root;
	char *text = NULL, err[256];
	size_t len = 0;
	json_t *j = NULL;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	mts_stack_print(st, f);
	fclose(f);
	if (ctree_parse("printed", text, len, &root, err, sizeof(err)) == 0) {
		j = to_json(root);
		cnode_free(root);
	}
	free(text);
	return j;
}
