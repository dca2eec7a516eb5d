/* image_core.c: parses OCI/Docker manifests, indexes and configs (jansson) and checks archive paths, whiteouts and references; no I/O. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fsutil.h"
#include "image_core.h"
#include "mtserr.h"
#include "xmalloc.h"

#define ERR(...) \
	do { \
		snprintf(err, errlen, __VA_ARGS__); \
		goto out; \
	} while (0)

static json_t *
load_json(const char *json, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j;

	if (len > MTS_IMAGE_MAX_JSON) {
		snprintf(err, errlen, "document of %zu bytes over the %u limit",
		    len, MTS_IMAGE_MAX_JSON);
		return NULL;
	}
	j = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL)
		snprintf(err, errlen, "invalid JSON at line %d column %d: %s",
		    je.line, je.column, je.text);
	else if (!json_is_object(j)) {
		snprintf(err, errlen, "top level is not an object");
		json_decref(j);
		j = NULL;
	}
	return j;
}

int
mts_digest_valid(const char *s)
{
	size_t i;

	if (s == NULL || strncmp(s, "sha256:", 7) != 0 ||
	    strlen(s) != MTS_DIGEST_LEN)
		return -MTS_ERR_INVAL;
	for (i = 7; i < MTS_DIGEST_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return -MTS_ERR_INVAL;
	return 0;
}

void
mts_digest_format(char *out, const uint8_t sha[32])
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	memcpy(out, "sha256:", 7);
	for (i = 0; i < 32; i++) {
		out[7 + 2 * i] = hx[sha[i] >> 4];
		out[8 + 2 * i] = hx[sha[i] & 15];
	}
	out[MTS_DIGEST_LEN] = '\0';
}

/* An optional string member: NULL when absent, error when not a string. */
static int
opt_str(json_t *o, const char *key, char **dst, const char *where, char *err,
    size_t errlen)
{
	json_t *v = json_object_get(o, key);

	*dst = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s.%s is not a string", where, key);
		return -MTS_ERR_INVAL;
	}
	*dst = xstrdup(json_string_value(v));
	return 0;
}

/* An optional array of strings as a NULL-terminated copy. */
static int
opt_strv(json_t *o, const char *key, char ***dst, size_t *n, const char *where,
    char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key), *e;
	size_t i;

	*dst = NULL;
	if (n)
		*n = 0;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > 4096) {
		snprintf(err, errlen, "%s.%s is not an array (of at most 4096)",
		    where, key);
		return -MTS_ERR_INVAL;
	}
	*dst = xcalloc(json_array_size(v) + 1, sizeof(char *));
	json_array_foreach(v, i, e)
	{
		if (!json_is_string(e)) {
			snprintf(err, errlen, "%s.%s[%zu] is not a string",
			    where, key, i);
			return -MTS_ERR_INVAL;
		}
		(*dst)[i] = xstrdup(json_string_value(e));
		if (n)
			*n = i + 1;
	}
	return 0;
}

static int
parse_desc(json_t *o, struct mts_desc *d, const char *where, char *err,
    size_t errlen)
{
	json_t *dg, *sz, *pl, *an;
	int rc = -MTS_ERR_INVAL;

	memset(d, 0, sizeof(*d));
	d->size = -1;
	if (!json_is_object(o))
		ERR("%s is not an object", where);
	dg = json_object_get(o, "digest");
	if (!json_is_string(dg) || mts_digest_valid(json_string_value(dg)))
		ERR("%s.digest is missing or not a sha256 digest", where);
	memcpy(d->digest, json_string_value(dg), MTS_DIGEST_LEN + 1);
	sz = json_object_get(o, "size");
	if (sz != NULL) {
		if (!json_is_integer(sz) || json_integer_value(sz) < 0)
			ERR("%s.size is not a non-negative integer", where);
		d->size = json_integer_value(sz);
	}
	if (opt_str(o, "mediaType", &d->media_type, where, err, errlen))
		goto out;
	pl = json_object_get(o, "platform");
	if (pl != NULL && json_is_object(pl) &&
	    (opt_str(pl, "os", &d->os, where, err, errlen) ||
	        opt_str(pl, "architecture", &d->arch, where, err, errlen) ||
	        opt_str(pl, "variant", &d->variant, where, err, errlen)))
		goto out;
	an = json_object_get(o, "annotations");
	if (an != NULL && json_is_object(an) &&
	    (opt_str(an, "org.opencontainers.image.ref.name", &d->ref_name,
	         where, err, errlen) ||
	        opt_str(an, "io.containerd.image.name", &d->image_name, where,
	            err, errlen)))
		goto out;
	rc = 0;
out:
	return rc;
}

static void
desc_free(struct mts_desc *d)
{
	free(d->media_type);
	free(d->os);
	free(d->arch);
	free(d->variant);
	free(d->ref_name);
	free(d->image_name);
	memset(d, 0, sizeof(*d));
}

int
mts_oci_blob_kind(const char *json, size_t len, enum mts_blob_kind *kind,
    char *err, size_t errlen)
{
	json_t *j = load_json(json, len, err, errlen), *mt;
	const char *m;

	if (j == NULL)
		return -MTS_ERR_INVAL;
	mt = json_object_get(j, "mediaType");
	m = json_is_string(mt) ? json_string_value(mt) : "";
	if (strstr(m, "index") != NULL || strstr(m, "manifest.list") != NULL ||
	    (*m == '\0' && json_object_get(j, "manifests") != NULL))
		*kind = MTS_BLOB_INDEX;
	else
		*kind = MTS_BLOB_MANIFEST;
	json_decref(j);
	return 0;
}

/* The descriptors of JSON array a into *out (room for spare more, zeroed);
 * *n counts those begun, so that the caller's free covers a failure half
 * way. what names the array in errors: "what[i]: ...". */
static int
parse_descs(json_t *a, size_t spare, struct mts_desc **out, size_t *n,
    const char *what, char *err, size_t errlen)
{
	char where[64];
	json_t *e;
	size_t i;

	*out = xcalloc(json_array_size(a) + spare, sizeof(**out));
	json_array_foreach(a, i, e)
	{
		snprintf(where, sizeof(where), "%s[%zu]", what, i);
		*n = i + 1;
		if (parse_desc(e, &(*out)[i], where, err, errlen))
			return -MTS_ERR_INVAL;
	}
	return 0;
}

int
mts_oci_parse_index(const char *json, size_t len, struct mts_oci_index *out,
    char *err, size_t errlen)
{
	json_t *j, *ms;
	int rc = -MTS_ERR_INVAL;

	memset(out, 0, sizeof(*out));
	if ((j = load_json(json, len, err, errlen)) == NULL)
		return rc;
	ms = json_object_get(j, "manifests");
	if (!json_is_array(ms) || json_array_size(ms) == 0 ||
	    json_array_size(ms) > 1024)
		ERR("index: \"manifests\" is not a non-empty array");
	rc = parse_descs(ms, 0, &out->m, &out->n, "index.manifests", err,
	    errlen);
out:
	json_decref(j);
	return rc;
}

void
mts_oci_index_free(struct mts_oci_index *x)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		desc_free(&x->m[i]);
	free(x->m);
	memset(x, 0, sizeof(*x));
}

int
mts_oci_parse_manifest(const char *json, size_t len,
    struct mts_oci_manifest *out, char *err, size_t errlen)
{
	json_t *j, *ls, *sv;
	int rc = -MTS_ERR_INVAL;

	memset(out, 0, sizeof(*out));
	if ((j = load_json(json, len, err, errlen)) == NULL)
		return rc;
	sv = json_object_get(j, "schemaVersion");
	if (!json_is_integer(sv) || json_integer_value(sv) != 2)
		ERR("manifest: schemaVersion is not 2");
	if (parse_desc(json_object_get(j, "config"), &out->config,
	        "manifest.config", err, errlen))
		goto out;
	ls = json_object_get(j, "layers");
	if (!json_is_array(ls) || json_array_size(ls) > MTS_IMAGE_MAX_LAYERS)
		ERR("manifest: \"layers\" is not an array of at most %d",
		    MTS_IMAGE_MAX_LAYERS);
	rc = parse_descs(ls, 1, &out->layers, &out->nlayers, "manifest.layers",
	    err, errlen);
out:
	json_decref(j);
	return rc;
}

void
mts_oci_manifest_free(struct mts_oci_manifest *m)
{
	size_t i;

	desc_free(&m->config);
	for (i = 0; i < m->nlayers; i++)
		desc_free(&m->layers[i]);
	free(m->layers);
	memset(m, 0, sizeof(*m));
}

int
mts_oci_parse_config(const char *json, size_t len, struct mts_image_config *out,
    char *err, size_t errlen)
{
	json_t *j, *c, *rf;
	size_t i;
	int rc = -MTS_ERR_INVAL;

	memset(out, 0, sizeof(*out));
	if ((j = load_json(json, len, err, errlen)) == NULL)
		return rc;
	if (opt_str(j, "os", &out->os, "config", err, errlen) ||
	    opt_str(j, "architecture", &out->arch, "config", err, errlen))
		goto out;
	c = json_object_get(j, "config");
	if (c != NULL && json_is_object(c) &&
	    (opt_strv(c, "Env", &out->env, NULL, "config.config", err,
	         errlen) ||
	        opt_strv(c, "Entrypoint", &out->entrypoint, NULL,
	            "config.config", err, errlen) ||
	        opt_strv(c, "Cmd", &out->cmd, NULL, "config.config", err,
	            errlen) ||
	        opt_str(c, "WorkingDir", &out->cwd, "config.config", err,
	            errlen) ||
	        opt_str(c, "User", &out->user, "config.config", err, errlen)))
		goto out;
	rf = json_object_get(j, "rootfs");
	if (!json_is_object(rf))
		ERR("config: \"rootfs\" is missing");
	if (opt_strv(rf, "diff_ids", &out->diff_ids, &out->ndiff,
	        "config.rootfs", err, errlen))
		goto out;
	if (out->ndiff > MTS_IMAGE_MAX_LAYERS)
		ERR("config.rootfs.diff_ids: more than %d layers",
		    MTS_IMAGE_MAX_LAYERS);
	for (i = 0; i < out->ndiff; i++)
		if (mts_digest_valid(out->diff_ids[i]))
			ERR("config.rootfs.diff_ids[%zu] is not a sha256 digest",
			    i);
	rc = 0;
out:
	json_decref(j);
	return rc;
}

void
mts_image_config_free(struct mts_image_config *c)
{
	mts_strv_free(c->env);
	mts_strv_free(c->entrypoint);
	mts_strv_free(c->cmd);
	mts_strv_free(c->diff_ids);
	free(c->cwd);
	free(c->user);
	free(c->os);
	free(c->arch);
	memset(c, 0, sizeof(*c));
}

int
mts_docker_parse_manifest(const char *json, size_t len,
    struct mts_docker_manifest *out, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j, *e;
	int rc = -MTS_ERR_INVAL;

	memset(out, 0, sizeof(*out));
	if (len > MTS_IMAGE_MAX_JSON)
		return rc;
	if ((j = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je)) == NULL) {
		snprintf(err, errlen,
		    "manifest.json: invalid JSON at line %d: %s", je.line,
		    je.text);
		return rc;
	}
	if (!json_is_array(j) || json_array_size(j) != 1)
		ERR("manifest.json: expected an array of exactly one image");
	e = json_array_get(j, 0);
	if (!json_is_object(e))
		ERR("manifest.json[0] is not an object");
	if (opt_str(e, "Config", &out->config, "manifest.json[0]", err,
	        errlen) ||
	    opt_strv(e, "Layers", &out->layers, &out->nlayers,
	        "manifest.json[0]", err, errlen) ||
	    opt_strv(e, "RepoTags", &out->tags, NULL, "manifest.json[0]", err,
	        errlen))
		goto out;
	if (out->config == NULL || out->layers == NULL)
		ERR("manifest.json[0]: Config or Layers missing");
	if (out->nlayers > MTS_IMAGE_MAX_LAYERS)
		ERR("manifest.json[0]: more than %d layers",
		    MTS_IMAGE_MAX_LAYERS);
	rc = 0;
out:
	json_decref(j);
	return rc;
}

void
mts_docker_manifest_free(struct mts_docker_manifest *m)
{
	free(m->config);
	mts_strv_free(m->layers);
	mts_strv_free(m->tags);
	memset(m, 0, sizeof(*m));
}

int
mts_oci_pick(const struct mts_oci_index *x, const char *os, const char *arch)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		if (x->m[i].os && x->m[i].arch && strcmp(x->m[i].os, os) == 0 &&
		    strcmp(x->m[i].arch, arch) == 0)
			return (int)i;
	if (x->n == 1 && x->m[0].os == NULL)
		return 0;
	return -MTS_ERR_NOTFOUND;
}

static int
copy_part(char *dst, size_t dstlen, const char *src, size_t n)
{
	if (n >= dstlen)
		return -MTS_ERR_INVAL;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

/* Splits "@sha256:..." off the end of s (length *n) into out->digest. */
static int
ref_split_digest(const char *s, size_t *n, struct mts_ref *out)
{
	const char *at = memchr(s, '@', *n);

	if (at == NULL)
		return 0;
	if (copy_part(out->digest, sizeof(out->digest), at + 1,
	        *n - (size_t)(at + 1 - s)) ||
	    mts_digest_valid(out->digest))
		return -MTS_ERR_INVAL;
	*n = (size_t)(at - s);
	return 0;
}

int
mts_ref_parse(const char *s, struct mts_ref *out)
{
	size_t n = strlen(s), i;
	const char *slash, *colon, *name;

	memset(out, 0, sizeof(*out));
	if (n == 0 || n > 512 || ref_split_digest(s, &n, out))
		return -MTS_ERR_INVAL;
	slash = memchr(s, '/', n);
	name = s;
	if (slash != NULL &&
	    (memchr(s, '.', (size_t)(slash - s)) ||
	        memchr(s, ':', (size_t)(slash - s)) ||
	        (slash - s == 9 && !strncmp(s, "localhost", 9)))) {
		if (copy_part(out->registry, sizeof(out->registry), s,
		        (size_t)(slash - s)))
			return -MTS_ERR_INVAL;
		name = slash + 1;
		n -= (size_t)(name - s);
	} else
		snprintf(out->registry, sizeof(out->registry),
		    "registry-1.docker.io");
	colon = NULL;
	for (i = 0; i < n; i++)
		if (name[i] == ':')
			colon = name + i;
		else if (name[i] == '/')
			colon = NULL;
	if (colon != NULL) {
		if (copy_part(out->tag, sizeof(out->tag), colon + 1,
		        n - (size_t)(colon + 1 - name)) ||
		    out->tag[0] == '\0')
			return -MTS_ERR_INVAL;
		n = (size_t)(colon - name);
	} else if (out->digest[0] == '\0')
		snprintf(out->tag, sizeof(out->tag), "latest");
	if (n == 0)
		return -MTS_ERR_INVAL;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		        (name[i] >= '0' && name[i] <= '9') ||
		        strchr("._-/", name[i]) != NULL))
			return -MTS_ERR_INVAL;
	if (!strcmp(out->registry, "registry-1.docker.io") &&
	    memchr(name, '/', n) == NULL)
		return snprintf(out->repo, sizeof(out->repo), "library/%.*s",
		           (int)n, name) >= (int)sizeof(out->repo)
		    ? -MTS_ERR_INVAL
		    : 0;
	return copy_part(out->repo, sizeof(out->repo), name, n);
}

int
mts_archive_path_clean(const char *in, char *out, size_t outlen)
{
	const char *p = in, *e;
	size_t o = 0, n;

	if (in == NULL || *in == '/' || outlen == 0)
		return -MTS_ERR_INVAL;
	while (*p != '\0') {
		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -MTS_ERR_INVAL;
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (o + n + 2 > outlen)
				return -MTS_ERR_INVAL;
			if (o > 0)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	out[o] = '\0';
	return 0;
}

int
mts_whiteout_classify(const char *clean, enum mts_whiteout *kind, char *target,
    size_t targetlen)
{
	const char *base = strrchr(clean, '/');
	size_t dirlen;

	base = base ? base + 1 : clean;
	dirlen = base > clean ? (size_t)(base - clean - 1) : 0;
	*kind = MTS_WH_NONE;
	if (strncmp(base, ".wh.", 4) != 0)
		return 0;
	if (strcmp(base, ".wh..wh..opq") == 0) {
		*kind = MTS_WH_OPAQUE;
		return copy_part(target, targetlen, clean, dirlen);
	}
	if (base[4] == '\0' || strncmp(base, ".wh..wh.", 8) == 0 ||
	    strcmp(base + 4, ".") == 0 || strcmp(base + 4, "..") == 0)
		return -MTS_ERR_INVAL;
	*kind = MTS_WH_FILE;
	if (dirlen == 0)
		return copy_part(target, targetlen, base + 4, strlen(base + 4));
	if (dirlen + 1 + strlen(base + 4) + 1 > targetlen)
		return -MTS_ERR_INVAL;
	snprintf(target, targetlen, "%.*s/%s", (int)dirlen, clean, base + 4);
	return 0;
}

void
mts_image_key(const char *name, char *out, size_t outlen)
{
	static const char hx[] = "0123456789abcdef";
	size_t i, o = 0;

	for (i = 0; name[i] != '\0' && o + 3 <= outlen; i++) {
		out[o++] = hx[(unsigned char)name[i] >> 4];
		out[o++] = hx[(unsigned char)name[i] & 15];
	}
	if (outlen > 0)
		out[o < outlen ? o : outlen - 1] = '\0';
}
