/* image_store.c: the content-addressed image store on disk — records, staging and commit of verified blobs, refcounted removal, task root file systems (no archive or network code: that runs in mts-shim-image). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "fsutil.h"
#include "image_stage.h"
#include "image_store.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

const char *
mts_img_hex(const char *digest)
{
	return digest + 7;
}

int
mts_img_path(char *out, size_t outlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, outlen, fmt, ap);
	va_end(ap);
	return (n < 0 || (size_t)n >= outlen) ? -MTS_ERR_TOOBIG : 0;
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (flag == FTW_DP)
		return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

int
mts_rmtree(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) < 0)
		return errno == ENOENT ? 0 : -MTS_ERR_IO;
	if (!S_ISDIR(sb.st_mode))
		return unlink(path) < 0 ? -MTS_ERR_IO : 0;
	return nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT)
	    ? -MTS_ERR_IO
	    : 0;
}

/* Hashes a file with SHA-256 into digest ("sha256:<hex>") and its size. */
int
mts_img_hash_file(const char *path, char *digest, int64_t *size)
{
	crypto_hash_sha256_state hs;
	uint8_t buf[65536], sha[32];
	ssize_t r;
	int fd, rc = -MTS_ERR_IO;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -MTS_ERR_NOTFOUND;
	crypto_hash_sha256_init(&hs);
	*size = 0;
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		crypto_hash_sha256_update(&hs, buf, (size_t)r);
		*size += r;
	}
	if (r == 0) {
		crypto_hash_sha256_final(&hs, sha);
		mts_digest_format(digest, sha);
		rc = 0;
	}
	close(fd);
	return rc;
}

/* Copies what is left to read of in to dst (created), hashing on the way;
 * in stays open. */
int
mts_img_copy_hash(int in, const char *dst, char *digest, int64_t *size)
{
	crypto_hash_sha256_state hs;
	uint8_t buf[65536], sha[32];
	ssize_t r;
	int out = -1, rc = -MTS_ERR_IO;

	if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) <
	    0)
		goto out;
	crypto_hash_sha256_init(&hs);
	*size = 0;
	while ((r = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)r) != r)
			goto out;
		crypto_hash_sha256_update(&hs, buf, (size_t)r);
		*size += r;
	}
	if (r < 0)
		goto out;
	crypto_hash_sha256_final(&hs, sha);
	mts_digest_format(digest, sha);
	rc = 0;
out:
	if (out >= 0)
		close(out);
	return rc;
}

int
mts_img_read_small(const char *path, char **buf, size_t *len)
{
	struct stat sb;
	ssize_t r;
	int fd, rc = -MTS_ERR_IO;

	*buf = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -MTS_ERR_NOTFOUND;
	if (fstat(fd, &sb) < 0)
		goto out;
	if (sb.st_size > MTS_IMAGE_MAX_JSON) {
		rc = -MTS_ERR_TOOBIG;
		goto out;
	}
	*buf = xmalloc((size_t)sb.st_size + 1);
	r = read(fd, *buf, (size_t)sb.st_size);
	if (r != sb.st_size) {
		free(*buf);
		*buf = NULL;
		goto out;
	}
	(*buf)[r] = '\0';
	*len = (size_t)r;
	rc = 0;
out:
	close(fd);
	return rc;
}

/* --- the store -------------------------------------------------------- */

static int
record_path(struct mts_image_store *st, const char *name, char *out,
    size_t outlen)
{
	char key[520];

	if (strlen(name) > 255)
		return -MTS_ERR_INVAL;
	mts_image_key(name, key, sizeof(key));
	return mts_img_path(out, outlen, "%s/images/%s.json", st->root, key);
}

static char **
strv_from_json(json_t *a, size_t *n)
{
	char **v;
	json_t *e;
	size_t i;

	if (n)
		*n = 0;
	if (!json_is_array(a))
		return NULL;
	v = xcalloc(json_array_size(a) + 1, sizeof(char *));
	json_array_foreach(a, i, e)
	{
		v[i] = xstrdup(json_is_string(e) ? json_string_value(e) : "");
		if (n)
			*n = i + 1;
	}
	return v;
}

static json_t *
strv_to_json(char **v)
{
	json_t *a;
	size_t i;

	if (v == NULL)
		return json_null();
	a = json_array();
	for (i = 0; v[i] != NULL; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

void
mts_image_info_free(struct mts_image_info *in)
{
	if (in == NULL)
		return;
	free(in->name);
	mts_strv_free(in->layers);
	mts_strv_free(in->blobs);
	mts_image_config_free(&in->cfg);
	memset(in, 0, sizeof(*in));
}

static const char *
jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int
load_record(const char *path, struct mts_image_info *out)
{
	json_t *j = json_load_file(path, 0, NULL);
	const char *s;

	memset(out, 0, sizeof(*out));
	if (j == NULL)
		return -MTS_ERR_NOTFOUND;
	out->name = xstrdup((s = jstr(j, "name")) ? s : "");
	snprintf(out->id, sizeof(out->id), "%s", (s = jstr(j, "id")) ? s : "");
	snprintf(out->manifest, sizeof(out->manifest), "%s",
	    (s = jstr(j, "manifest")) ? s : "");
	out->layers =
	    strv_from_json(json_object_get(j, "layers"), &out->nlayers);
	out->blobs = strv_from_json(json_object_get(j, "blobs"), &out->nblobs);
	out->size = json_integer_value(json_object_get(j, "size"));
	out->created_ms =
	    (uint64_t)json_integer_value(json_object_get(j, "created_ms"));
	out->cfg.env = strv_from_json(json_object_get(j, "env"), NULL);
	out->cfg.entrypoint =
	    strv_from_json(json_object_get(j, "entrypoint"), NULL);
	out->cfg.cmd = strv_from_json(json_object_get(j, "cmd"), NULL);
	out->cfg.cwd = (s = jstr(j, "cwd")) ? xstrdup(s) : NULL;
	out->cfg.user = (s = jstr(j, "user")) ? xstrdup(s) : NULL;
	json_decref(j);
	if (out->layers == NULL || out->blobs == NULL) {
		mts_image_info_free(out);
		return -MTS_ERR_INVAL;
	}
	return 0;
}

static int
save_record(struct mts_image_store *st, const struct mts_image_info *in)
{
	char path[PATHMAX], *txt;
	json_t *j;
	int rc;

	if ((rc = record_path(st, in->name, path, sizeof(path))) != 0)
		return rc;
	j = json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:o, s:o, s:o, "
	              "s:s?, s:s?}",
	    "name", in->name, "id", in->id, "manifest", in->manifest, "layers",
	    strv_to_json(in->layers), "blobs", strv_to_json(in->blobs), "size",
	    (json_int_t)in->size, "created_ms", (json_int_t)in->created_ms,
	    "env", strv_to_json(in->cfg.env), "entrypoint",
	    strv_to_json(in->cfg.entrypoint), "cmd", strv_to_json(in->cfg.cmd),
	    "cwd", in->cfg.cwd, "user", in->cfg.user);
	if (j == NULL)
		return -MTS_ERR_INVAL;
	txt = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	rc = mts_write_atomic(path, txt, strlen(txt), 0644, 1) < 0 ? -MTS_ERR_IO
	                                                           : 0;
	free(txt);
	return rc;
}

int
mts_store_list(struct mts_image_store *st, struct mts_image_info **out,
    size_t *n)
{
	char dir[PATHMAX], path[PATHMAX];
	struct dirent *de;
	size_t len;
	DIR *d;

	*out = NULL;
	*n = 0;
	if (mts_img_path(dir, sizeof(dir), "%s/images", st->root) ||
	    (d = opendir(dir)) == NULL)
		return -MTS_ERR_IO;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 ||
		    mts_img_path(path, sizeof(path), "%s/%s", dir, de->d_name))
			continue;
		*out = xreallocarray(*out, *n + 1, sizeof(**out));
		if (load_record(path, &(*out)[*n]) == 0)
			(*n)++;
	}
	closedir(d);
	return 0;
}

int
mts_store_get(struct mts_image_store *st, const char *name,
    struct mts_image_info *out)
{
	struct mts_image_info *all;
	char path[PATHMAX];
	size_t n, i, plen = strlen(name);
	int found = -1;

	memset(out, 0, sizeof(*out));
	if (record_path(st, name, path, sizeof(path)) == 0 &&
	    load_record(path, out) == 0)
		return 0;
	if (strchr(name, ':') == NULL && plen + 7 < sizeof(path)) {
		snprintf(path, sizeof(path), "%s:latest", name);
		if (record_path(st, path, path, sizeof(path)) == 0 &&
		    load_record(path, out) == 0)
			return 0;
	}
	if (strncmp(name, "sha256:", 7) != 0 || plen < 7 + 12 ||
	    mts_store_list(st, &all, &n))
		return -MTS_ERR_NOTFOUND;
	for (i = 0; i < n; i++)
		if (found < 0 && strncmp(all[i].id, name, plen) == 0)
			found = (int)i;
	for (i = 0; i < n; i++)
		if ((int)i == found)
			*out = all[i];
		else
			mts_image_info_free(&all[i]);
	free(all);
	return found < 0 ? -MTS_ERR_NOTFOUND : 0;
}

/* Is digest referenced by any record (as a blob or a layer)? */
static int
referenced(struct mts_image_info *all, size_t n, const char *digest, int layer)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		char **v = layer ? all[i].layers : all[i].blobs;
		for (k = 0; v[k] != NULL; k++)
			if (strcmp(v[k], digest) == 0)
				return 1;
	}
	return 0;
}

/* Removes blobs and layers without a referencing record (refcount 0). */
static void
gc(struct mts_image_store *st)
{
	static const char *const sub[2] = { "blobs/sha256", "layers" };
	struct mts_image_info *all;
	char dir[PATHMAX], dg[MTS_DIGEST_LEN + 8], path[PATHMAX];
	struct dirent *de;
	size_t n, i;
	int k;
	DIR *d;

	if (mts_store_list(st, &all, &n))
		return;
	for (k = 0; k < 2; k++) {
		if (mts_img_path(dir, sizeof(dir), "%s/%s", st->root, sub[k]) ||
		    (d = opendir(dir)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			if (strlen(de->d_name) != 64)
				continue;
			snprintf(dg, sizeof(dg), "sha256:%.64s", de->d_name);
			if (referenced(all, n, dg, k) ||
			    mts_img_path(path, sizeof(path), "%s/%s", dir,
			        de->d_name))
				continue;
			log_debug("image store: dropping unreferenced %s %s",
			    k ? "layer" : "blob", dg);
			mts_rmtree(path);
		}
		closedir(d);
	}
	for (i = 0; i < n; i++)
		mts_image_info_free(&all[i]);
	free(all);
}

int
mts_store_open(const char *root, struct mts_image_store **out, char *err,
    size_t errlen)
{
	static const char *const sub[] = { "blobs/sha256", "layers", "images",
		"tmp" };
	struct mts_image_store *st;
	char path[PATHMAX];
	size_t i;

	*out = NULL;
	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
		if (mts_img_path(path, sizeof(path), "%s/%s", root, sub[i]) ||
		    mts_mkdir_p(path, 0700, 0700) < 0) {
			snprintf(err, errlen, "image store %s: %s", path,
			    strerror(errno));
			return -MTS_ERR_IO;
		}
	st = xcalloc(1, sizeof(*st));
	st->root = xstrdup(root);
	/* Interrupted imports leave only staging dirs and unreferenced
	 * content behind: both go. */
	snprintf(path, sizeof(path), "%s/tmp", root);
	mts_rmtree(path);
	mkdir(path, 0700);
	gc(st);
	*out = st;
	return 0;
}

void
mts_store_close(struct mts_image_store *st)
{
	if (st == NULL)
		return;
	free(st->root);
	free(st);
}

/* --- staging ---------------------------------------------------------- */

int
mts_stage_new(struct mts_image_store *st, struct mts_stage **out, char *err,
    size_t errlen)
{
	struct mts_stage *sg = xcalloc(1, sizeof(*sg));

	sg->st = st;
	if (mts_img_path(sg->dir, sizeof(sg->dir), "%s/tmp/stage.XXXXXX",
	        st->root) ||
	    mkdtemp(sg->dir) == NULL) {
		snprintf(err, errlen, "staging dir: %s", strerror(errno));
		free(sg);
		return -MTS_ERR_IO;
	}
	snprintf(sg->incoming, sizeof(sg->incoming), "%s/incoming", sg->dir);
	*out = sg;
	return 0;
}

void
mts_stage_free(struct mts_stage *sg)
{
	if (sg == NULL)
		return;
	mts_rmtree(sg->dir);
	free(sg->items);
	free(sg);
}

const char *
mts_stage_dir(const struct mts_stage *sg)
{
	return sg->dir;
}

int
mts_img_staged_has(const struct mts_stage *sg, const char *digest, int layer)
{
	size_t i;

	for (i = 0; i < sg->n; i++)
		if (sg->items[i].layer == layer &&
		    strcmp(sg->items[i].digest, digest) == 0)
			return 1;
	return 0;
}

void
mts_img_staged_add(struct mts_stage *sg, const char *digest, int layer)
{
	sg->items = xreallocarray(sg->items, sg->n + 1, sizeof(*sg->items));
	snprintf(sg->items[sg->n].digest, sizeof(sg->items[sg->n].digest), "%s",
	    digest);
	sg->items[sg->n].layer = layer;
	sg->n++;
}

int
mts_stage_blob_path(struct mts_stage *sg, const char *digest, char *out,
    size_t outlen)
{
	if (mts_digest_valid(digest))
		return -MTS_ERR_INVAL;
	if (mts_img_staged_has(sg, digest, 0))
		return mts_img_path(out, outlen, "%s/blob-%s", sg->dir,
		    mts_img_hex(digest));
	return mts_img_path(out, outlen, "%s/blobs/sha256/%s", sg->st->root,
	    mts_img_hex(digest));
}

int
mts_stage_add_blob(struct mts_stage *sg, const char *file, const char *digest,
    int64_t size, char *err, size_t errlen)
{
	char got[MTS_DIGEST_LEN + 1], dst[PATHMAX];
	int64_t gotsize;

	if (mts_digest_valid(digest)) {
		snprintf(err, errlen, "invalid digest \"%s\"", digest);
		return -MTS_ERR_INVAL;
	}
	if (mts_img_hash_file(file, got, &gotsize)) {
		snprintf(err, errlen, "blob %s: cannot read", digest);
		return -MTS_ERR_IO;
	}
	if (size >= 0 && gotsize != size) {
		snprintf(err, errlen,
		    "blob %s: size mismatch (%lld bytes, "
		    "%lld declared)",
		    digest, (long long)gotsize, (long long)size);
		return -MTS_ERR_INVAL;
	}
	if (strcmp(got, digest) != 0) {
		snprintf(err, errlen,
		    "blob %s: digest mismatch (content hashes to %s, %lld "
		    "bytes)",
		    digest, got, (long long)gotsize);
		return -MTS_ERR_INVAL;
	}
	if (mts_img_staged_has(sg, digest, 0))
		return unlink(file) < 0 ? -MTS_ERR_IO : 0;
	if (mts_img_path(dst, sizeof(dst), "%s/blob-%s", sg->dir,
	        mts_img_hex(digest)) ||
	    rename(file, dst) < 0) {
		snprintf(err, errlen, "blob %s: %s", digest, strerror(errno));
		return -MTS_ERR_IO;
	}
	mts_img_staged_add(sg, digest, 0);
	return 0;
}

int
mts_stage_read_blob(struct mts_stage *sg, const char *digest, char **buf,
    size_t *len, char *err, size_t errlen)
{
	char path[PATHMAX];
	int rc;

	if ((rc = mts_stage_blob_path(sg, digest, path, sizeof(path))) != 0 ||
	    (rc = mts_img_read_small(path, buf, len)) != 0)
		snprintf(err, errlen, "blob %s: %s", digest,
		    rc == -MTS_ERR_TOOBIG ? "too large" : "missing");
	return rc;
}

/* Moves everything staged into the store (already-present items are kept)
 * and writes the record last. */
int
mts_img_stage_commit(struct mts_stage *sg, struct mts_image_info *in, char *err,
    size_t errlen)
{
	char src[PATHMAX], dst[PATHMAX];
	size_t i;
	int rc;

	for (i = 0; i < sg->n; i++) {
		const char *h = mts_img_hex(sg->items[i].digest);
		int lay = sg->items[i].layer;
		if (mts_img_path(src, sizeof(src), "%s/%s-%s", sg->dir,
		        lay ? "layer" : "blob", h) ||
		    mts_img_path(dst, sizeof(dst), "%s/%s/%s", sg->st->root,
		        lay ? "layers" : "blobs/sha256", h))
			return -MTS_ERR_TOOBIG;
		if (access(src, F_OK) != 0 || access(dst, F_OK) == 0)
			continue;
		if (rename(src, dst) < 0) {
			snprintf(err, errlen, "store %s: %s", dst,
			    strerror(errno));
			return -MTS_ERR_IO;
		}
	}
	if ((rc = save_record(sg->st, in)) != 0)
		snprintf(err, errlen, "image record for %s: cannot write",
		    in->name);
	return rc;
}

/* Fills the image config fields of in from the config blob. */
int
mts_img_load_config(struct mts_stage *sg, const char *digest,
    struct mts_image_config *cfg, char *err, size_t errlen)
{
	char *buf, msg[400];
	size_t len;
	int rc;

	if ((rc = mts_stage_read_blob(sg, digest, &buf, &len, err, errlen)))
		return rc;
	rc = mts_oci_parse_config(buf, len, cfg, msg, sizeof(msg));
	free(buf);
	if (rc)
		snprintf(err, errlen, "config %s: %s", digest, msg);
	return rc;
}

/* The OCI media type of a staged layer blob: gzip by its magic bytes, a
 * plain tar otherwise. */
static const char *
layer_media_type(const char *path)
{
	uint8_t m[2];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int gz = fd >= 0 && read(fd, m, 2) == 2 && m[0] == 0x1f && m[1] == 0x8b;

	if (fd >= 0)
		close(fd);
	return gz ? "application/vnd.oci.image.layer.v1.tar+gzip"
	          : "application/vnd.oci.image.layer.v1.tar";
}

/* A descriptor of a staged blob; NULL when it is not staged. */
static json_t *
staged_desc(struct mts_stage *sg, const char *digest, const char *media)
{
	char path[PATHMAX];
	struct stat sb;

	if (mts_stage_blob_path(sg, digest, path, sizeof(path)) != 0 ||
	    stat(path, &sb) != 0)
		return NULL;
	return json_pack("{s:s, s:s, s:I}", "mediaType",
	    media ? media : layer_media_type(path), "digest", digest, "size",
	    (json_int_t)sb.st_size);
}

int
mts_stage_make_manifest(struct mts_stage *sg, const char *config,
    const char (*layers)[MTS_DIGEST_LEN + 1], size_t nlayers, char *digest_out,
    char *err, size_t errlen)
{
	json_t *j, *ls = json_array(), *d;
	uint8_t sha[32];
	char *txt = NULL;
	size_t i;
	int rc = -MTS_ERR_IO;

	for (i = 0; i < nlayers; i++) {
		if ((d = staged_desc(sg, layers[i], NULL)) == NULL)
			break;
		json_array_append_new(ls, d);
	}
	d = staged_desc(sg, config, "application/vnd.oci.image.config.v1+json");
	j = json_pack("{s:i, s:s, s:o*, s:o}", "schemaVersion", 2, "mediaType",
	    "application/vnd.oci.image.manifest.v1+json", "config", d, "layers",
	    ls);
	if (j == NULL || d == NULL || i < nlayers) {
		snprintf(err, errlen, "manifest: a blob is not staged");
		json_decref(j);
		return -MTS_ERR_INVAL;
	}
	txt = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	crypto_hash_sha256(sha, (const uint8_t *)txt, strlen(txt));
	mts_digest_format(digest_out, sha);
	if (mts_write_atomic(sg->incoming, txt, strlen(txt), 0644, 0) == 0)
		rc = mts_stage_add_blob(sg, sg->incoming, digest_out,
		    (int64_t)strlen(txt), err, errlen);
	else
		snprintf(err, errlen, "manifest: %s", strerror(errno));
	free(txt);
	return rc;
}

int64_t
mts_img_staged_size(struct mts_stage *sg)
{
	char path[PATHMAX];
	struct stat sb;
	int64_t total = 0;
	size_t i;

	for (i = 0; i < sg->n; i++)
		if (!sg->items[i].layer &&
		    mts_stage_blob_path(sg, sg->items[i].digest, path,
		        sizeof(path)) == 0 &&
		    stat(path, &sb) == 0)
			total += sb.st_size;
	return total;
}

void
mts_img_info_blobs(struct mts_stage *sg, struct mts_image_info *in)
{
	size_t i;

	in->blobs = xcalloc(sg->n + 1, sizeof(char *));
	for (i = 0; i < sg->n; i++)
		if (!sg->items[i].layer)
			in->blobs[in->nblobs++] = xstrdup(sg->items[i].digest);
}

int
mts_store_read_blob(struct mts_image_store *st, const char *digest,
    uint64_t off, size_t max, uint8_t **buf, size_t *len, uint64_t *size)
{
	struct mts_image_info *all;
	char path[PATHMAX];
	struct stat sb;
	size_t n, i;
	ssize_t r;
	int fd, known, rc = -MTS_ERR_IO;

	*buf = NULL;
	*len = 0;
	if (mts_digest_valid(digest) || mts_store_list(st, &all, &n))
		return -MTS_ERR_NOTFOUND;
	known = referenced(all, n, digest, 0);
	for (i = 0; i < n; i++)
		mts_image_info_free(&all[i]);
	free(all);
	if (!known ||
	    mts_img_path(path, sizeof(path), "%s/blobs/sha256/%s", st->root,
	        mts_img_hex(digest)) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -MTS_ERR_NOTFOUND;
	if (fstat(fd, &sb) < 0)
		goto out;
	*size = (uint64_t)sb.st_size;
	if (off > *size) {
		rc = -MTS_ERR_INVAL;
		goto out;
	}
	if (max > *size - off)
		max = (size_t)(*size - off);
	*buf = xmalloc(max + 1);
	if ((r = pread(fd, *buf, max, (off_t)off)) == (ssize_t)max) {
		*len = max;
		rc = 0;
	} else {
		free(*buf);
		*buf = NULL;
	}
out:
	close(fd);
	return rc;
}

int
mts_store_remove(struct mts_image_store *st, const char *name, char *err,
    size_t errlen)
{
	struct mts_image_info in;
	char path[PATHMAX];

	if (mts_store_get(st, name, &in) != 0) {
		snprintf(err, errlen, "no image %s", name);
		return -MTS_ERR_NOTFOUND;
	}
	if (record_path(st, in.name, path, sizeof(path)) || unlink(path) < 0) {
		snprintf(err, errlen, "image %s: cannot remove record", name);
		mts_image_info_free(&in);
		return -MTS_ERR_IO;
	}
	mts_image_info_free(&in);
	gc(st);
	return 0;
}

/* --- task root file systems ------------------------------------------- */

static int copy_tree(int sfd, int dfd);

/* Removes dfd/name, whatever it is (no symlink followed). */
static int
remove_at(int dfd, const char *name)
{
	char path[PATHMAX];
	struct stat db;

	if (fstatat(dfd, name, &db, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (!S_ISDIR(db.st_mode))
		return unlinkat(dfd, name, 0) < 0 ? -MTS_ERR_IO : 0;
	if (mts_img_path(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, name))
		return -MTS_ERR_TOOBIG;
	return mts_rmtree(path);
}

/* A directory entry: merged into an existing directory, or emptied first
 * when the layer marks it opaque. */
static int
copy_dir(int sfd, int dfd, const char *name, const struct stat *sb)
{
	char v[2];
	int s = -1, d = -1, rc = -MTS_ERR_IO;

	if (mkdirat(dfd, name, sb->st_mode & 07777) < 0 && errno != EEXIST)
		return -MTS_ERR_IO;
	if ((s = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0)
		goto out;
	if (fgetxattr(s, OPAQUE_XATTR, v, sizeof(v)) == 1 && v[0] == 'y') {
		remove_at(dfd, name);
		mkdirat(dfd, name, sb->st_mode & 07777);
	}
	if ((d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0)
		goto out;
	rc = copy_tree(s, d);
	fchownat(dfd, name, sb->st_uid, sb->st_gid, AT_SYMLINK_NOFOLLOW);
	fchmodat(dfd, name, sb->st_mode & 07777, 0);
out:
	if (s >= 0)
		close(s);
	if (d >= 0)
		close(d);
	return rc;
}

/* A regular file: contents, owner, mode and times. */
static int
copy_file(int sfd, int dfd, const char *name, const struct stat *sb)
{
	struct timespec ts[2] = { sb->st_atim, sb->st_mtim };
	int s, d = -1, rc = -MTS_ERR_IO;
	ssize_t n;

	if ((s = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -MTS_ERR_IO;
	if ((d = openat(dfd, name,
	         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	         sb->st_mode & 07777)) < 0)
		goto out;
	while ((n = copy_file_range(s, NULL, d, NULL, 1 << 20, 0)) > 0)
		;
	if (n == 0 && fchown(d, sb->st_uid, sb->st_gid) == 0 &&
	    fchmod(d, sb->st_mode & 07777) == 0) {
		futimens(d, ts);
		rc = 0;
	}
out:
	close(s);
	if (d >= 0)
		close(d);
	return rc;
}

/* Applies one entry of a layer onto the flattened root (copy mode): a
 * whiteout (0/0 character device) deletes, anything else replaces what
 * is there (directories merge). */
static int
copy_one(int sfd, int dfd, const char *name)
{
	struct stat sb, db;
	char link[PATHMAX];
	ssize_t n;

	if (fstatat(sfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return -MTS_ERR_IO;
	if (S_ISCHR(sb.st_mode) && sb.st_rdev == makedev(0, 0))
		return remove_at(dfd, name);
	if (fstatat(dfd, name, &db, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !(S_ISDIR(sb.st_mode) && S_ISDIR(db.st_mode)))
		remove_at(dfd, name);
	if (S_ISDIR(sb.st_mode))
		return copy_dir(sfd, dfd, name, &sb);
	if (S_ISREG(sb.st_mode))
		return copy_file(sfd, dfd, name, &sb);
	if (S_ISLNK(sb.st_mode)) {
		if ((n = readlinkat(sfd, name, link, sizeof(link) - 1)) < 0)
			return -MTS_ERR_IO;
		link[n] = '\0';
		if (symlinkat(link, dfd, name) < 0)
			return -MTS_ERR_IO;
	} else if (mknodat(dfd, name, sb.st_mode, sb.st_rdev) < 0)
		return -MTS_ERR_IO;
	fchownat(dfd, name, sb.st_uid, sb.st_gid, AT_SYMLINK_NOFOLLOW);
	return 0;
}

static int
copy_tree(int sfd, int dfd)
{
	struct dirent *de;
	DIR *dir;
	int fd = dup(sfd), rc = 0;

	if (fd < 0 || (dir = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return -MTS_ERR_IO;
	}
	while (rc == 0 && (de = readdir(dir)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = copy_one(sfd, dfd, de->d_name);
	closedir(dir);
	return rc;
}

static int
make_copy(struct mts_image_store *st, const struct mts_image_info *in,
    const char *rootfs)
{
	char path[PATHMAX];
	size_t i;
	int s, d, rc = 0;

	if ((d = open(rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -MTS_ERR_IO;
	for (i = 0; rc == 0 && i < in->nlayers; i++) {
		if (mts_img_path(path, sizeof(path), "%s/layers/%s", st->root,
		        mts_img_hex(in->layers[i])) ||
		    (s = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			rc = -MTS_ERR_NOTFOUND;
			break;
		}
		rc = copy_tree(s, d);
		close(s);
	}
	close(d);
	return rc;
}

static int
make_overlay(struct mts_image_store *st, const struct mts_image_info *in,
    const char *dir, const char *rootfs)
{
	char opts[PATHMAX], up[PATHMAX], wk[PATHMAX];
	size_t i, o;
	int n;

	if (mts_img_path(up, sizeof(up), "%s/upper", dir) ||
	    mts_img_path(wk, sizeof(wk), "%s/work", dir) ||
	    (mkdir(up, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(wk, 0700) < 0 && errno != EEXIST))
		return -MTS_ERR_IO;
	o = 0;
	n = snprintf(opts, sizeof(opts), "lowerdir=");
	o = (size_t)n;
	for (i = in->nlayers; i-- > 0;) {
		n = snprintf(opts + o, sizeof(opts) - o, "%s%s/layers/%s",
		    i + 1 < in->nlayers ? ":" : "", st->root,
		    mts_img_hex(in->layers[i]));
		if (n < 0 || (size_t)n >= sizeof(opts) - o)
			return -MTS_ERR_TOOBIG;
		o += (size_t)n;
	}
	if (in->nlayers == 0)
		return -MTS_ERR_INVAL;
	n = snprintf(opts + o, sizeof(opts) - o, ",upperdir=%s,workdir=%s", up,
	    wk);
	if (n < 0 || (size_t)n >= sizeof(opts) - o)
		return -MTS_ERR_TOOBIG;
	if (mount("overlay", rootfs, "overlay", 0, opts) < 0)
		return -MTS_ERR_IO;
	return 0;
}

int
mts_store_make_rootfs(struct mts_image_store *st,
    const struct mts_image_info *in, const char *dir, enum mts_rootfs_mode mode,
    enum mts_rootfs_mode *used, char *err, size_t errlen)
{
	char rootfs[PATHMAX];
	int rc;

	if (mts_img_path(rootfs, sizeof(rootfs), "%s/rootfs", dir) ||
	    (mkdir(rootfs, 0755) < 0 && errno != EEXIST)) {
		snprintf(err, errlen, "%s: %s", rootfs, strerror(errno));
		return -MTS_ERR_IO;
	}
	if (mode != MTS_ROOTFS_COPY) {
		rc = make_overlay(st, in, dir, rootfs);
		if (rc == 0) {
			*used = MTS_ROOTFS_OVERLAY;
			return 0;
		}
		if (mode == MTS_ROOTFS_OVERLAY) {
			snprintf(err, errlen, "overlay mount on %s: %s", rootfs,
			    strerror(errno));
			return rc;
		}
		log_info("overlayfs refused (%s); copying layers",
		    strerror(errno));
	}
	if ((rc = make_copy(st, in, rootfs)) != 0) {
		snprintf(err, errlen, "copying layers into %s failed", rootfs);
		return rc;
	}
	*used = MTS_ROOTFS_COPY;
	return 0;
}

int
mts_store_release_rootfs(const char *dir)
{
	char rootfs[PATHMAX];

	if (mts_img_path(rootfs, sizeof(rootfs), "%s/rootfs", dir))
		return -MTS_ERR_TOOBIG;
	if (umount2(rootfs, MNT_DETACH) < 0 && errno != EINVAL &&
	    errno != ENOENT)
		return -MTS_ERR_IO;
	return 0;
}
