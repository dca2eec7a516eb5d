/* compose.c: loading a stack — each file parsed and interpolated (environment over .env), the files merged in order, the stack named (--stack, name:, the directory), the tree turned into the spec; and freeing it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose_int.h"
#include "xmalloc.h"

struct lookup {
	const struct mts_compose_input *in;
	struct mts_kvlist dotenv;
};

/* The environment wins over .env, as in Compose. */
static const char *
lookup_var(void *arg, const char *name)
{
	struct lookup *l = arg;
	const struct mts_kv *kv;
	const char *v;

	if (l->in->getenv && (v = l->in->getenv(l->in->getenv_arg, name)))
		return v;
	kv = mts_kvlist_get(&l->dotenv, name);
	return kv ? kv->value : NULL;
}

/* Interpolates every scalar value (keys are left as written). */
static int
interpolate(struct cnode *n, int is_key, struct lookup *l, char *err,
    size_t errlen)
{
	char why[256], *out;
	size_t i, outlen;

	if (n->kind == CN_SCALAR) {
		if (is_key || memchr(n->str, '$', n->len) == NULL)
			return 0;
		if (mts_compose_interpolate(n->str, n->len, lookup_var, l, &out,
		        &outlen, why, sizeof(why)) < 0)
			return compose_err(err, errlen, n, "%s", why);
		free(n->str);
		n->str = out;
		n->len = outlen;
		return 0;
	}
	for (i = 0; i < (n->kind == CN_MAP ? 2 * n->n : n->n); i++)
		if (interpolate(n->kids[i], n->kind == CN_MAP && i % 2 == 0, l,
		        err, errlen) < 0)
			return -1;
	return 0;
}

/* A project name as Compose normalizes a directory's name: lower case,
 * only [a-z0-9_-], starting with a letter or digit. */
static char *
normalize_name(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *w = out;

	for (; *s; s++) {
		char ch = (char)tolower((unsigned char)*s);

		if (isalnum((unsigned char)ch) ||
		    ((ch == '_' || ch == '-') && w != out))
			*w++ = ch;
	}
	*w = '\0';
	return out;
}

static int
valid_stack_name(const char *s)
{
	size_t i;

	if (!isalnum((unsigned char)s[0]) || strlen(s) > 63)
		return 0;
	for (i = 0; s[i]; i++)
		if (!(islower((unsigned char)s[i]) ||
		        isdigit((unsigned char)s[i]) || s[i] == '_' ||
		        s[i] == '-'))
			return 0;
	return 1;
}

static int
stack_name(const struct mts_compose_input *in, const struct cnode *root,
    char **out, char *err, size_t errlen)
{
	const struct cnode *n = cnode_get(root, "name");
	struct cnode where = { .file = in->nfiles ? in->files[0].name : "-" };

	if (in->stack && *in->stack)
		*out = xstrdup(in->stack);
	else if (n && n->kind == CN_SCALAR && !cnode_is_null(n)) {
		*out = xstrdup(n->str);
		if (!valid_stack_name(*out)) {
			compose_err(err, errlen, n,
			    "name: \"%s\": a stack name "
			    "is lower-case letters, digits, - and _, starting "
			    "with a letter or digit (at most 63)",
			    *out);
			free(*out);
			*out = NULL;
			return -1;
		}
		return 0;
	} else if (n && !cnode_is_null(n))
		return compose_err(err, errlen, n,
		    "name: expected a string, "
		    "not %s",
		    cnode_kind_name(n));
	else
		*out = normalize_name(in->dirname ? in->dirname : "");
	if (!valid_stack_name(*out)) {
		compose_err(err, errlen, &where,
		    "\"%s\" is not a usable stack "
		    "name (lower-case letters, digits, - and _): give one with "
		    "--stack or name:",
		    *out);
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* environment: FOO (no value) takes FOO from the deploying environment;
 * left without a value when it is not set there either. */
static void
resolve_bare_env(struct mts_stack *st, struct lookup *l)
{
	size_t i, j;

	for (i = 0; i < st->nservices; i++) {
		struct mts_kvlist *e = &st->services[i].environment;

		for (j = 0; j < e->n; j++) {
			const char *v;

			if (e->v[j].value == NULL &&
			    (v = lookup_var(l, e->v[j].key)) != NULL)
				e->v[j].value = xstrdup(v);
		}
	}
}

static int
load_files(const struct mts_compose_input *in, struct lookup *l,
    struct cnode **root, char *err, size_t errlen)
{
	struct cnode *one;
	size_t i;

	*root = NULL;
	if (in->nfiles == 0) {
		snprintf(err, errlen, "no Compose file given");
		return -1;
	}
	for (i = 0; i < in->nfiles; i++) {
		const struct mts_compose_file *f = &in->files[i];

		if (ctree_parse(f->name, f->text, f->len, &one, err, errlen) <
		    0)
			goto fail;
		if (interpolate(one, 0, l, err, errlen) < 0) {
			cnode_free(one);
			goto fail;
		}
		if (*root == NULL) {
			*root = one;
			continue;
		}
		if (compose_merge(*root, one, err, errlen) < 0) {
			cnode_free(one);
			goto fail;
		}
		cnode_free(one);
	}
	return 0;
fail:
	cnode_free(*root);
	*root = NULL;
	return -1;
}

int
mts_compose_load(const struct mts_compose_input *in, struct mts_stack **out,
    char *err, size_t errlen)
{
	struct lookup l = { .in = in };
	struct cnode *root = NULL;
	struct mts_stack *st = NULL;
	int rc = -1;

	*out = NULL;
	if (in->dotenv &&
	    mts_compose_env_parse(in->dotenv_name ? in->dotenv_name : ".env",
	        in->dotenv, &l.dotenv, err, errlen) < 0)
		goto out;
	if (load_files(in, &l, &root, err, errlen) < 0)
		goto out;
	st = xcalloc(1, sizeof(*st));
	if (stack_name(in, root, &st->name, err, errlen) < 0 ||
	    compose_to_stack(root, st, err, errlen) < 0)
		goto out;
	resolve_bare_env(st, &l);
	*out = st;
	st = NULL;
	rc = 0;
out:
	mts_stack_free(st);
	cnode_free(root);
	mts_kvlist_clear(&l.dotenv);
	return rc;
}

/* --- freeing ----------------------------------------------------------------- */

static void
service_free(struct mts_service *s)
{
	size_t i;

	free(s->name);
	free(s->image);
	mts_strv_clear(&s->command);
	mts_strv_clear(&s->entrypoint);
	mts_kvlist_clear(&s->environment);
	mts_strv_clear(&s->env_file);
	mts_kvlist_clear(&s->labels);
	free(s->hostname);
	free(s->user);
	free(s->working_dir);
	free(s->stop_signal);
	mts_strv_clear(&s->health.test);
	for (i = 0; i < s->nports; i++)
		free(s->ports[i].host_ip);
	free(s->ports);
	for (i = 0; i < s->nmounts; i++) {
		free(s->mounts[i].source);
		free(s->mounts[i].target);
	}
	free(s->mounts);
	for (i = 0; i < s->nulimits; i++)
		free(s->ulimits[i].name);
	free(s->ulimits);
	mts_strv_clear(&s->cap_add);
	mts_strv_clear(&s->cap_drop);
	mts_strv_clear(&s->extra_hosts);
	mts_strv_clear(&s->dns);
	mts_kvlist_clear(&s->sysctls);
	free(s->log_driver);
	for (i = 0; i < s->nnetworks; i++) {
		free(s->networks[i].name);
		mts_strv_clear(&s->networks[i].aliases);
		free(s->networks[i].ipv4_address);
	}
	free(s->networks);
	for (i = 0; i < s->ndepends; i++)
		free(s->depends[i].service);
	free(s->depends);
	mts_kvlist_clear(&s->deploy_labels);
	mts_strv_clear(&s->placement.constraints);
	mts_strv_clear(&s->placement.spread);
}

void
mts_stack_free(struct mts_stack *st)
{
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < st->nservices; i++)
		service_free(&st->services[i]);
	free(st->services);
	for (i = 0; i < st->nnetworks; i++) {
		free(st->networks[i].name);
		free(st->networks[i].real_name);
		free(st->networks[i].driver);
		mts_kvlist_clear(&st->networks[i].labels);
	}
	free(st->networks);
	for (i = 0; i < st->nvolumes; i++) {
		free(st->volumes[i].name);
		free(st->volumes[i].real_name);
		free(st->volumes[i].driver);
		mts_kvlist_clear(&st->volumes[i].labels);
	}
	free(st->volumes);
	mts_strv_clear(&st->warnings);
	free(st->name);
	free(st);
}
