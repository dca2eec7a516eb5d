/* image_store.c: the content-addressed image store on disk — staged, verified imports, layer unpacking with libarchive, refcounted removal, task root file systems. */
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

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>
#include <sodium.h>

#include "image_store.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

#define PATHMAX 4096
#define OPAQUE_XATTR "trusted.overlay.opaque"

struct mts_image_store {
	char *root;
};

struct staged {
	char digest[MTS_DIGEST_LEN + 1];
	int layer; /* 1: an unpacked layer dir, 0: a blob file */
};

struct mts_stage {
	struct mts_image_store *st;
	char dir[PATHMAX];
	struct staged *items;
	size_t n;
};

static const char *
hexof(const char *digest)
{
	return digest + 7;
}

static int
pathf(char *out, size_t outlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
pathf(char *out, size_t outlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, outlen, fmt, ap);
	va_end(ap);
	return (n < 0 || (size_t)n >= outlen) ? -MTS_ERR_TOOBIG : 0;
}

static int
mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATHMAX];
	char *p;

	if (pathf(tmp, sizeof(tmp), "%s", path))
		return -MTS_ERR_TOOBIG;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -MTS_ERR_IO;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -MTS_ERR_IO;
	return 0;
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
	return nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) ? -MTS_ERR_IO
									   : 0;
}

/* Hashes a file with SHA-256 into digest ("sha256:<hex>") and its size. */
static int
hash_file(const char *path, char *digest, int64_t *size)
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

/* Copies src to dst (created), hashing on the way. */
static int
copy_hash(const char *src, const char *dst, char *digest, int64_t *size)
{
	crypto_hash_sha256_state hs;
	uint8_t buf[65536], sha[32];
	ssize_t r;
	int in, out = -1, rc = -MTS_ERR_IO;

	if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0)
		return -MTS_ERR_NOTFOUND;
	if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
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
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static int
read_small(const char *path, char **buf, size_t *len)
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

/* Writes data to path atomically (tmp file, fsync, rename). */
static int
write_atomic(const char *path, const char *data, size_t len)
{
	char tmp[PATHMAX];
	int fd, rc = -MTS_ERR_IO;

	if (pathf(tmp, sizeof(tmp), "%s.tmp", path))
		return -MTS_ERR_TOOBIG;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return -MTS_ERR_IO;
	if (write(fd, data, len) == (ssize_t)len && fsync(fd) == 0)
		rc = 0;
	close(fd);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -MTS_ERR_IO;
	if (rc)
		unlink(tmp);
	return rc;
}

/* --- archive extraction ----------------------------------------------- */

/* Opens the directory rel below rootfd, component by component, never
 * following a symlink; creates missing components when create is set. */
static int
open_dir_nofollow(int rootfd, const char *rel, int create)
{
	char part[PATHMAX];
	const char *p = rel, *e;
	int fd = dup(rootfd), nfd;
	size_t n;

	while (fd >= 0 && *p != '\0') {
		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n >= sizeof(part)) {
			close(fd);
			return -1;
		}
		memcpy(part, p, n);
		part[n] = '\0';
		if (create && mkdirat(fd, part, 0755) < 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		nfd = openat(fd, part,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
		p += n;
		while (*p == '/')
			p++;
	}
	return fd;
}

/* Records a whiteout inside an unpacked layer the way overlayfs reads it:
 * a 0/0 character device for a deleted file, an xattr for an opaque dir. */
static int
put_whiteout(int rootfd, enum mts_whiteout kind, const char *target)
{
	const char *slash = strrchr(target, '/');
	char dir[PATHMAX];
	int dfd, rc = -MTS_ERR_IO;

	if (kind == MTS_WH_OPAQUE) {
		if ((dfd = open_dir_nofollow(rootfd, target, 1)) < 0)
			return -MTS_ERR_IO;
		if (fsetxattr(dfd, OPAQUE_XATTR, "y", 1, 0) == 0)
			rc = 0;
		close(dfd);
		return rc;
	}
	if (slash != NULL)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - target), target);
	else
		dir[0] = '\0';
	if ((dfd = open_dir_nofollow(rootfd, dir, 1)) < 0)
		return -MTS_ERR_IO;
	unlinkat(dfd, slash ? slash + 1 : target, 0);
	if (mknodat(dfd, slash ? slash + 1 : target, S_IFCHR | 0000,
		makedev(0, 0)) == 0)
		rc = 0;
	close(dfd);
	return rc;
}

static int
copy_entry_data(struct archive *in, struct archive *out)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	int r;

	for (;;) {
		r = archive_read_data_block(in, &buf, &len, &off);
		if (r == ARCHIVE_EOF)
			return ARCHIVE_OK;
		if (r < ARCHIVE_OK)
			return r;
		if (archive_write_data_block(out, buf, len, off) < ARCHIVE_OK)
			return ARCHIVE_FATAL;
	}
}

/* Rewrites an entry's path (and hardlink target) below dest after checking
 * them; fills *kind/target for whiteouts. */
static int
place_entry(struct archive_entry *e, const char *dest, int whiteouts,
    enum mts_whiteout *kind, char *target, size_t targetlen, char *err,
    size_t errlen)
{
	char clean[PATHMAX], full[PATHMAX];
	const char *name = archive_entry_pathname(e), *hl;

	if (name == NULL || mts_archive_path_clean(name, clean, sizeof(clean))) {
		snprintf(err, errlen, "unsafe path in archive: \"%s\"",
		    name ? name : "(none)");
		return -MTS_ERR_INVAL;
	}
	*kind = MTS_WH_NONE;
	if (whiteouts && mts_whiteout_classify(clean, kind, target, targetlen)) {
		snprintf(err, errlen, "malformed whiteout \"%s\"", name);
		return -MTS_ERR_INVAL;
	}
	if (pathf(full, sizeof(full), "%s/%s", dest, clean))
		return -MTS_ERR_TOOBIG;
	archive_entry_set_pathname(e, full);
	hl = archive_entry_hardlink(e);
	if (hl != NULL) {
		if (mts_archive_path_clean(hl, clean, sizeof(clean)) ||
		    clean[0] == '\0') {
			snprintf(err, errlen, "unsafe hard link target \"%s\"",
			    hl);
			return -MTS_ERR_INVAL;
		}
		if (pathf(full, sizeof(full), "%s/%s", dest, clean))
			return -MTS_ERR_TOOBIG;
		archive_entry_set_hardlink(e, full);
	}
	return 0;
}

/* Extracts the tar (any compression libarchive knows) at src into dest.
 * whiteouts: convert .wh. entries for overlayfs (layers) or refuse nothing
 * special (plain archives). Every path is checked before anything is
 * written; symlinks are never followed. */
static int
extract(const char *src, const char *dest, int whiteouts, char *err,
    size_t errlen)
{
	struct archive *in = archive_read_new(), *out = archive_write_disk_new();
	struct archive_entry *e;
	char target[PATHMAX], name[PATHMAX];
	enum mts_whiteout kind;
	int r, rootfd = -1, rc = -MTS_ERR_INVAL, n = 0;

	archive_read_support_filter_all(in);
	archive_read_support_format_tar(in);
	/* No ARCHIVE_EXTRACT_UNLINK: with it libarchive would replace a
	 * symlink in the way by a directory; without it, an entry below a
	 * symlink is refused, which is what a layer doing that deserves. */
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_OWNER |
	    ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
	    ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
	if ((rootfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: %s", dest, strerror(errno));
		rc = -MTS_ERR_IO;
		goto out;
	}
	if (archive_read_open_filename(in, src, 65536) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s", archive_error_string(in));
		goto out;
	}
	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		n++;
		snprintf(name, sizeof(name), "%s",
		    archive_entry_pathname(e) ? archive_entry_pathname(e) : "");
		if ((rc = place_entry(e, dest, whiteouts, &kind, target,
			 sizeof(target), err, errlen)) != 0)
			goto out;
		rc = -MTS_ERR_INVAL;
		if (kind != MTS_WH_NONE) {
			if (put_whiteout(rootfd, kind, target)) {
				snprintf(err, errlen, "whiteout %.400s: %s", target,
				    strerror(errno));
				goto out;
			}
			continue;
		}
		if (archive_write_header(out, e) < ARCHIVE_OK ||
		    copy_entry_data(in, out) < ARCHIVE_OK ||
		    archive_write_finish_entry(out) < ARCHIVE_OK) {
			snprintf(err, errlen, "entry \"%.300s\": %s", name,
			    archive_error_string(out) ? archive_error_string(out)
						      : archive_error_string(in));
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		snprintf(err, errlen, "truncated or corrupt archive: %s",
		    archive_error_string(in));
		goto out;
	}
	if (n == 0) {
		snprintf(err, errlen, "not a tar archive (no entries)");
		goto out;
	}
	rc = 0;
out:
	if (rootfd >= 0)
		close(rootfd);
	archive_read_free(in);
	archive_write_free(out);
	return rc;
}

/* SHA-256 of the decompressed stream of src (a layer's diff id). */
static int
diff_id(const char *src, char *digest, char *err, size_t errlen)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	crypto_hash_sha256_state hs;
	uint8_t buf[65536], sha[32];
	la_ssize_t r;
	int rc = -MTS_ERR_INVAL;

	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	crypto_hash_sha256_init(&hs);
	if (archive_read_open_filename(a, src, 65536) != ARCHIVE_OK ||
	    archive_read_next_header(a, &e) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s", archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_data(a, buf, sizeof(buf))) > 0)
		crypto_hash_sha256_update(&hs, buf, (size_t)r);
	if (r < 0) {
		snprintf(err, errlen, "truncated or corrupt layer: %s",
		    archive_error_string(a));
		goto out;
	}
	crypto_hash_sha256_final(&hs, sha);
	mts_digest_format(digest, sha);
	rc = 0;
out:
	archive_read_free(a);
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
	return pathf(out, outlen, "%s/images/%s.json", st->root, key);
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
	json_array_foreach(a, i, e) {
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

static void
strv_free(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

void
mts_image_info_free(struct mts_image_info *in)
{
	if (in == NULL)
		return;
	free(in->name);
	strv_free(in->layers);
	strv_free(in->blobs);
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
	out->layers = strv_from_json(json_object_get(j, "layers"),
	    &out->nlayers);
	out->blobs = strv_from_json(json_object_get(j, "blobs"), &out->nblobs);
	out->size = json_integer_value(json_object_get(j, "size"));
	out->created_ms = (uint64_t)json_integer_value(
	    json_object_get(j, "created_ms"));
	out->cfg.env = strv_from_json(json_object_get(j, "env"), NULL);
	out->cfg.entrypoint = strv_from_json(json_object_get(j, "entrypoint"),
	    NULL);
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
	rc = write_atomic(path, txt, strlen(txt));
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
	if (pathf(dir, sizeof(dir), "%s/images", st->root) ||
	    (d = opendir(dir)) == NULL)
		return -MTS_ERR_IO;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 ||
		    pathf(path, sizeof(path), "%s/%s", dir, de->d_name))
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
referenced(struct mts_image_info *all, size_t n, const char *digest,
    int layer)
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
	static const char *const sub[2] = {"blobs/sha256", "layers"};
	struct mts_image_info *all;
	char dir[PATHMAX], dg[MTS_DIGEST_LEN + 8], path[PATHMAX];
	struct dirent *de;
	size_t n, i;
	int k;
	DIR *d;

	if (mts_store_list(st, &all, &n))
		return;
	for (k = 0; k < 2; k++) {
		if (pathf(dir, sizeof(dir), "%s/%s", st->root, sub[k]) ||
		    (d = opendir(dir)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			if (strlen(de->d_name) != 64)
				continue;
			snprintf(dg, sizeof(dg), "sha256:%.64s", de->d_name);
			if (referenced(all, n, dg, k) ||
			    pathf(path, sizeof(path), "%s/%s", dir, de->d_name))
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
	static const char *const sub[] = {"blobs/sha256", "layers", "images",
	    "tmp"};
	struct mts_image_store *st;
	char path[PATHMAX];
	size_t i;

	*out = NULL;
	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
		if (pathf(path, sizeof(path), "%s/%s", root, sub[i]) ||
		    mkdir_p(path, 0700)) {
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
	if (pathf(sg->dir, sizeof(sg->dir), "%s/tmp/stage.XXXXXX", st->root) ||
	    mkdtemp(sg->dir) == NULL) {
		snprintf(err, errlen, "staging dir: %s", strerror(errno));
		free(sg);
		return -MTS_ERR_IO;
	}
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

static int
staged_has(const struct mts_stage *sg, const char *digest, int layer)
{
	size_t i;

	for (i = 0; i < sg->n; i++)
		if (sg->items[i].layer == layer &&
		    strcmp(sg->items[i].digest, digest) == 0)
			return 1;
	return 0;
}

static void
staged_add(struct mts_stage *sg, const char *digest, int layer)
{
	sg->items = xreallocarray(sg->items, sg->n + 1, sizeof(*sg->items));
	snprintf(sg->items[sg->n].digest, sizeof(sg->items[sg->n].digest),
	    "%s", digest);
	sg->items[sg->n].layer = layer;
	sg->n++;
}

int
mts_stage_blob_path(struct mts_stage *sg, const char *digest, char *out,
    size_t outlen)
{
	if (mts_digest_valid(digest))
		return -MTS_ERR_INVAL;
	if (staged_has(sg, digest, 0))
		return pathf(out, outlen, "%s/blob-%s", sg->dir, hexof(digest));
	return pathf(out, outlen, "%s/blobs/sha256/%s", sg->st->root,
	    hexof(digest));
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
	if (hash_file(file, got, &gotsize)) {
		snprintf(err, errlen, "blob %s: cannot read", digest);
		return -MTS_ERR_IO;
	}
	if (strcmp(got, digest) != 0 || (size >= 0 && gotsize != size)) {
		snprintf(err, errlen,
		    "blob %s: digest mismatch (content hashes to %s, %lld "
		    "bytes)",
		    digest, got, (long long)gotsize);
		return -MTS_ERR_INVAL;
	}
	if (staged_has(sg, digest, 0))
		return unlink(file) < 0 ? -MTS_ERR_IO : 0;
	if (pathf(dst, sizeof(dst), "%s/blob-%s", sg->dir, hexof(digest)) ||
	    rename(file, dst) < 0) {
		snprintf(err, errlen, "blob %s: %s", digest, strerror(errno));
		return -MTS_ERR_IO;
	}
	staged_add(sg, digest, 0);
	return 0;
}

/* Copies a blob from an image layout into the stage, verifying it. */
static int
stage_copy_blob(struct mts_stage *sg, const char *src, const char *digest,
    int64_t size, char *err, size_t errlen)
{
	char tmp[PATHMAX];
	char got[MTS_DIGEST_LEN + 1];
	int64_t gotsize;
	int rc;

	if (staged_has(sg, digest, 0))
		return 0;
	if (pathf(tmp, sizeof(tmp), "%s/incoming", sg->dir))
		return -MTS_ERR_TOOBIG;
	unlink(tmp);
	if ((rc = copy_hash(src, tmp, got, &gotsize)) != 0) {
		snprintf(err, errlen, "blob %s: missing from the image (%s)",
		    digest, src);
		return rc == -MTS_ERR_NOTFOUND ? -MTS_ERR_INVAL : rc;
	}
	return mts_stage_add_blob(sg, tmp, digest, size, err, errlen);
}

int
mts_stage_read_blob(struct mts_stage *sg, const char *digest, char **buf,
    size_t *len, char *err, size_t errlen)
{
	char path[PATHMAX];
	int rc;

	if ((rc = mts_stage_blob_path(sg, digest, path, sizeof(path))) != 0 ||
	    (rc = read_small(path, buf, len)) != 0)
		snprintf(err, errlen, "blob %s: %s", digest,
		    rc == -MTS_ERR_TOOBIG ? "too large" : "missing");
	return rc;
}

/* Unpacks a staged layer file into the stage, checking its diff id. */
static int
stage_unpack(struct mts_stage *sg, const char *file, const char *want,
    char *err, size_t errlen)
{
	char got[MTS_DIGEST_LEN + 1], dir[PATHMAX], msg[512], stored[PATHMAX];
	int rc;

	if ((rc = diff_id(file, got, msg, sizeof(msg))) != 0) {
		snprintf(err, errlen, "layer %s: %s", want, msg);
		return rc;
	}
	if (strcmp(got, want) != 0) {
		snprintf(err, errlen,
		    "layer %s: uncompressed content hashes to %s", want, got);
		return -MTS_ERR_INVAL;
	}
	if (staged_has(sg, want, 1))
		return 0;
	if (pathf(stored, sizeof(stored), "%s/layers/%s", sg->st->root,
		hexof(want)) == 0 &&
	    access(stored, F_OK) == 0) {
		staged_add(sg, want, 1);
		return 0;
	}
	if (pathf(dir, sizeof(dir), "%s/layer-%s", sg->dir, hexof(want)) ||
	    mkdir(dir, 0755) < 0)
		return -MTS_ERR_IO;
	if ((rc = extract(file, dir, 1, msg, sizeof(msg))) != 0) {
		snprintf(err, errlen, "layer %s: %s", want, msg);
		return rc;
	}
	staged_add(sg, want, 1);
	return 0;
}

/* Moves everything staged into the store (already-present items are kept)
 * and writes the record last. */
static int
stage_commit(struct mts_stage *sg, struct mts_image_info *in, char *err,
    size_t errlen)
{
	char src[PATHMAX], dst[PATHMAX];
	size_t i;
	int rc;

	for (i = 0; i < sg->n; i++) {
		const char *h = hexof(sg->items[i].digest);
		int lay = sg->items[i].layer;
		if (pathf(src, sizeof(src), "%s/%s-%s", sg->dir,
			lay ? "layer" : "blob", h) ||
		    pathf(dst, sizeof(dst), "%s/%s/%s", sg->st->root,
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
static int
load_config(struct mts_stage *sg, const char *digest,
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

static int64_t
staged_size(struct mts_stage *sg)
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

static void
info_blobs(struct mts_stage *sg, struct mts_image_info *in)
{
	size_t i;

	in->blobs = xcalloc(sg->n + 1, sizeof(char *));
	for (i = 0; i < sg->n; i++)
		if (!sg->items[i].layer)
			in->blobs[in->nblobs++] = xstrdup(sg->items[i].digest);
}

int
mts_stage_commit_oci(struct mts_stage *sg, const char *name,
    const char *manifest_digest, const struct mts_oci_manifest *m, char *err,
    size_t errlen)
{
	struct mts_image_info in;
	char path[PATHMAX];
	size_t i;
	int rc;

	memset(&in, 0, sizeof(in));
	if ((rc = load_config(sg, m->config.digest, &in.cfg, err, errlen)))
		goto out;
	rc = -MTS_ERR_INVAL;
	if (in.cfg.ndiff != m->nlayers) {
		snprintf(err, errlen,
		    "config lists %zu layers, the manifest %zu", in.cfg.ndiff,
		    m->nlayers);
		goto out;
	}
	for (i = 0; i < m->nlayers; i++) {
		if ((rc = mts_stage_blob_path(sg, m->layers[i].digest, path,
			 sizeof(path))) != 0 ||
		    (rc = stage_unpack(sg, path, in.cfg.diff_ids[i], err,
			 errlen)) != 0)
			goto out;
	}
	in.name = xstrdup(name);
	snprintf(in.id, sizeof(in.id), "%s", m->config.digest);
	snprintf(in.manifest, sizeof(in.manifest), "%s", manifest_digest);
	in.layers = xcalloc(m->nlayers + 1, sizeof(char *));
	for (i = 0; i < m->nlayers; i++)
		in.layers[i] = xstrdup(in.cfg.diff_ids[i]);
	in.nlayers = m->nlayers;
	info_blobs(sg, &in);
	in.size = staged_size(sg);
	in.created_ms = (uint64_t)time(NULL) * 1000;
	rc = stage_commit(sg, &in, err, errlen);
out:
	mts_image_info_free(&in);
	return rc;
}

/* --- import ----------------------------------------------------------- */

static int
layout_blob(const char *dir, const char *digest, char *out, size_t outlen)
{
	return pathf(out, outlen, "%s/blobs/sha256/%s", dir, hexof(digest));
}

/* Resolves an index (possibly nested) to one manifest for linux/amd64. */
static int
import_oci(struct mts_stage *sg, const char *dir, const char *name,
    char *name_out, size_t name_outlen, char *err, size_t errlen)
{
	struct mts_oci_index idx;
	struct mts_oci_manifest man;
	enum mts_blob_kind kind;
	char path[PATHMAX], digest[MTS_DIGEST_LEN + 1], msg[400], *buf = NULL;
	size_t len, i;
	int rc, k, depth;

	memset(&idx, 0, sizeof(idx));
	memset(&man, 0, sizeof(man));
	if (pathf(path, sizeof(path), "%s/index.json", dir) ||
	    (rc = read_small(path, &buf, &len)) != 0) {
		snprintf(err, errlen, "index.json: missing or too large");
		return -MTS_ERR_INVAL;
	}
	if ((rc = mts_oci_parse_index(buf, len, &idx, msg, sizeof(msg))) != 0) {
		snprintf(err, errlen, "index.json: %s", msg);
		goto out;
	}
	if ((k = mts_oci_pick(&idx, "linux", "amd64")) < 0) {
		snprintf(err, errlen, "index.json: no linux/amd64 manifest");
		rc = -MTS_ERR_NOTFOUND;
		goto out;
	}
	if (name == NULL)
		name = idx.m[k].image_name;
	if (name == NULL && idx.m[k].ref_name != NULL &&
	    strchr(idx.m[k].ref_name, ':') == NULL) {
		snprintf(name_out, name_outlen, "%s:%s",
		    strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir,
		    idx.m[k].ref_name);
		name = name_out;
	}
	if (name == NULL)
		name = idx.m[k].ref_name;
	if (name == NULL) {
		snprintf(err, errlen, "image has no name; give one");
		rc = -MTS_ERR_INVAL;
		goto out;
	}
	snprintf(name_out, name_outlen, "%s", name);
	snprintf(digest, sizeof(digest), "%s", idx.m[k].digest);
	for (depth = 0;; depth++) {
		int64_t size = -1;
		free(buf);
		buf = NULL;
		if (depth > 4) {
			snprintf(err, errlen, "indexes nested too deep");
			rc = -MTS_ERR_INVAL;
			goto out;
		}
		for (i = 0; i < idx.n; i++)
			if (strcmp(idx.m[i].digest, digest) == 0)
				size = idx.m[i].size;
		if ((rc = layout_blob(dir, digest, path, sizeof(path))) ||
		    (rc = stage_copy_blob(sg, path, digest, size, err,
			 errlen)) ||
		    (rc = mts_stage_read_blob(sg, digest, &buf, &len, err,
			 errlen)))
			goto out;
		if ((rc = mts_oci_blob_kind(buf, len, &kind, msg,
			 sizeof(msg)))) {
			snprintf(err, errlen, "manifest %s: %s", digest, msg);
			goto out;
		}
		if (kind == MTS_BLOB_MANIFEST)
			break;
		mts_oci_index_free(&idx);
		if ((rc = mts_oci_parse_index(buf, len, &idx, msg,
			 sizeof(msg))) ||
		    (rc = k = mts_oci_pick(&idx, "linux", "amd64")) < 0) {
			snprintf(err, errlen, "index %s: %s", digest,
			    rc == -MTS_ERR_NOTFOUND ? "no linux/amd64 manifest"
						    : msg);
			goto out;
		}
		snprintf(digest, sizeof(digest), "%s", idx.m[k].digest);
	}
	if ((rc = mts_oci_parse_manifest(buf, len, &man, msg, sizeof(msg)))) {
		snprintf(err, errlen, "manifest %s: %s", digest, msg);
		goto out;
	}
	if ((rc = layout_blob(dir, man.config.digest, path, sizeof(path))) ||
	    (rc = stage_copy_blob(sg, path, man.config.digest, man.config.size,
		 err, errlen)))
		goto out;
	for (i = 0; i < man.nlayers; i++)
		if ((rc = layout_blob(dir, man.layers[i].digest, path,
			 sizeof(path))) ||
		    (rc = stage_copy_blob(sg, path, man.layers[i].digest,
			 man.layers[i].size, err, errlen)))
			goto out;
	rc = mts_stage_commit_oci(sg, name_out, digest, &man, err, errlen);
out:
	free(buf);
	mts_oci_index_free(&idx);
	mts_oci_manifest_free(&man);
	return rc;
}

/* A file named inside a docker-save archive, checked to stay inside it. */
static int
docker_member(const char *dir, const char *rel, char *out, size_t outlen,
    char *err, size_t errlen)
{
	char clean[PATHMAX];

	if (mts_archive_path_clean(rel, clean, sizeof(clean)) ||
	    clean[0] == '\0') {
		snprintf(err, errlen, "manifest.json: unsafe path \"%s\"", rel);
		return -MTS_ERR_INVAL;
	}
	return pathf(out, outlen, "%s/%s", dir, clean);
}

static int
import_docker(struct mts_stage *sg, const char *dir, const char *name,
    char *name_out, size_t name_outlen, char *err, size_t errlen)
{
	struct mts_docker_manifest dm;
	struct mts_image_info in;
	char path[PATHMAX], dg[MTS_DIGEST_LEN + 1], *buf = NULL;
	int64_t size;
	size_t len, i;
	int rc;

	memset(&in, 0, sizeof(in));
	memset(&dm, 0, sizeof(dm));
	if (pathf(path, sizeof(path), "%s/manifest.json", dir) ||
	    read_small(path, &buf, &len)) {
		snprintf(err, errlen, "manifest.json: missing");
		return -MTS_ERR_INVAL;
	}
	if ((rc = mts_docker_parse_manifest(buf, len, &dm, err, errlen)))
		goto out;
	name = name ? name : dm.tags && dm.tags[0] ? dm.tags[0] : NULL;
	if (name == NULL) {
		snprintf(err, errlen, "image has no RepoTags; give a name");
		rc = -MTS_ERR_INVAL;
		goto out;
	}
	snprintf(name_out, name_outlen, "%s", name);
	if ((rc = docker_member(dir, dm.config, path, sizeof(path), err,
		 errlen)))
		goto out;
	if (hash_file(path, dg, &size)) {
		snprintf(err, errlen, "config %s: missing from the archive",
		    dm.config);
		rc = -MTS_ERR_INVAL;
		goto out;
	}
	if ((rc = stage_copy_blob(sg, path, dg, size, err, errlen)) ||
	    (rc = load_config(sg, dg, &in.cfg, err, errlen)))
		goto out;
	rc = -MTS_ERR_INVAL;
	if (in.cfg.ndiff != dm.nlayers) {
		snprintf(err, errlen, "config lists %zu layers, manifest.json %zu",
		    in.cfg.ndiff, dm.nlayers);
		goto out;
	}
	for (i = 0; i < dm.nlayers; i++) {
		char ldg[MTS_DIGEST_LEN + 1], sp[PATHMAX];
		if ((rc = docker_member(dir, dm.layers[i], path, sizeof(path),
			 err, errlen)))
			goto out;
		if (hash_file(path, ldg, &size)) {
			snprintf(err, errlen, "layer %s: missing from the archive",
			    dm.layers[i]);
			rc = -MTS_ERR_INVAL;
			goto out;
		}
		if ((rc = stage_copy_blob(sg, path, ldg, size, err, errlen)) ||
		    (rc = mts_stage_blob_path(sg, ldg, sp, sizeof(sp))) ||
		    (rc = stage_unpack(sg, sp, in.cfg.diff_ids[i], err, errlen)))
			goto out;
	}
	in.name = xstrdup(name_out);
	snprintf(in.id, sizeof(in.id), "%s", dg);
	in.layers = xcalloc(dm.nlayers + 1, sizeof(char *));
	for (i = 0; i < dm.nlayers; i++)
		in.layers[i] = xstrdup(in.cfg.diff_ids[i]);
	in.nlayers = dm.nlayers;
	info_blobs(sg, &in);
	in.size = staged_size(sg);
	in.created_ms = (uint64_t)time(NULL) * 1000;
	rc = stage_commit(sg, &in, err, errlen);
out:
	free(buf);
	mts_docker_manifest_free(&dm);
	mts_image_info_free(&in);
	return rc;
}

int
mts_store_import(struct mts_image_store *st, const char *path,
    const char *name, char *name_out, size_t name_outlen, char *err,
    size_t errlen)
{
	struct mts_stage *sg = NULL;
	char src[PATHMAX], probe[PATHMAX], msg[512];
	struct stat sb;
	int rc;

	if (stat(path, &sb) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -MTS_ERR_NOTFOUND;
	}
	if ((rc = mts_stage_new(st, &sg, err, errlen)) != 0)
		return rc;
	if (S_ISDIR(sb.st_mode))
		snprintf(src, sizeof(src), "%s", path);
	else {
		if (pathf(src, sizeof(src), "%s/src", sg->dir) ||
		    mkdir(src, 0700) < 0) {
			rc = -MTS_ERR_IO;
			goto out;
		}
		if ((rc = extract(path, src, 0, msg, sizeof(msg))) != 0) {
			snprintf(err, errlen, "%s: %s", path, msg);
			goto out;
		}
	}
	if (pathf(probe, sizeof(probe), "%s/index.json", src) == 0 &&
	    access(probe, F_OK) == 0)
		rc = import_oci(sg, src, name, name_out, name_outlen, msg,
		    sizeof(msg));
	else if (pathf(probe, sizeof(probe), "%s/manifest.json", src) == 0 &&
		 access(probe, F_OK) == 0)
		rc = import_docker(sg, src, name, name_out, name_outlen, msg,
		    sizeof(msg));
	else {
		snprintf(msg, sizeof(msg), "neither an OCI layout (index.json) "
					   "nor a docker-save archive "
					   "(manifest.json)");
		rc = -MTS_ERR_INVAL;
	}
	if (rc)
		snprintf(err, errlen, "%s: %s", path, msg);
out:
	mts_stage_free(sg);
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

/* Applies one entry of a layer onto the flattened root (copy mode). */
static int
copy_one(int sfd, int dfd, const char *name)
{
	struct stat sb, db;
	char link[PATHMAX];
	struct timespec ts[2];
	ssize_t n;
	int s = -1, d = -1, rc = -MTS_ERR_IO;

	if (fstatat(sfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return -MTS_ERR_IO;
	if (S_ISCHR(sb.st_mode) && sb.st_rdev == makedev(0, 0)) {
		char path[PATHMAX];
		snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, name);
		if (fstatat(dfd, name, &db, AT_SYMLINK_NOFOLLOW) == 0)
			return S_ISDIR(db.st_mode) ? mts_rmtree(path)
						   : (unlinkat(dfd, name, 0) ? -MTS_ERR_IO : 0);
		return 0;
	}
	if (fstatat(dfd, name, &db, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !(S_ISDIR(sb.st_mode) && S_ISDIR(db.st_mode))) {
		char path[PATHMAX];
		snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, name);
		mts_rmtree(path);
	}
	if (S_ISDIR(sb.st_mode)) {
		char v[2];
		if (mkdirat(dfd, name, sb.st_mode & 07777) < 0 && errno != EEXIST)
			return -MTS_ERR_IO;
		if ((s = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0 ||
		    (d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0)
			goto out;
		if (fgetxattr(s, OPAQUE_XATTR, v, sizeof(v)) == 1 && v[0] == 'y') {
			char path[PATHMAX];
			snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd,
			    name);
			close(d);
			mts_rmtree(path);
			mkdirat(dfd, name, sb.st_mode & 07777);
			d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (d < 0)
				goto out;
		}
		rc = copy_tree(s, d);
		fchownat(dfd, name, sb.st_uid, sb.st_gid, AT_SYMLINK_NOFOLLOW);
		fchmodat(dfd, name, sb.st_mode & 07777, 0);
		goto out;
	}
	if (S_ISLNK(sb.st_mode)) {
		if ((n = readlinkat(sfd, name, link, sizeof(link) - 1)) < 0)
			return -MTS_ERR_IO;
		link[n] = '\0';
		if (symlinkat(link, dfd, name) < 0)
			return -MTS_ERR_IO;
		fchownat(dfd, name, sb.st_uid, sb.st_gid, AT_SYMLINK_NOFOLLOW);
		return 0;
	}
	if (!S_ISREG(sb.st_mode)) {
		if (mknodat(dfd, name, sb.st_mode, sb.st_rdev) < 0)
			return -MTS_ERR_IO;
		fchownat(dfd, name, sb.st_uid, sb.st_gid, AT_SYMLINK_NOFOLLOW);
		return 0;
	}
	if ((s = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (d = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		O_CLOEXEC, sb.st_mode & 07777)) < 0)
		goto out;
	while ((n = copy_file_range(s, NULL, d, NULL, 1 << 20, 0)) > 0)
		;
	if (n < 0)
		goto out;
	if (fchown(d, sb.st_uid, sb.st_gid) < 0 ||
	    fchmod(d, sb.st_mode & 07777) < 0)
		goto out;
	ts[0] = sb.st_atim;
	ts[1] = sb.st_mtim;
	futimens(d, ts);
	rc = 0;
out:
	if (s >= 0)
		close(s);
	if (d >= 0)
		close(d);
	return rc;
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
		if (pathf(path, sizeof(path), "%s/layers/%s", st->root,
			hexof(in->layers[i])) ||
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

	if (pathf(up, sizeof(up), "%s/upper", dir) ||
	    pathf(wk, sizeof(wk), "%s/work", dir) ||
	    (mkdir(up, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(wk, 0700) < 0 && errno != EEXIST))
		return -MTS_ERR_IO;
	o = 0;
	n = snprintf(opts, sizeof(opts), "lowerdir=");
	o = (size_t)n;
	for (i = in->nlayers; i-- > 0;) {
		n = snprintf(opts + o, sizeof(opts) - o, "%s%s/layers/%s",
		    i + 1 < in->nlayers ? ":" : "", st->root,
		    hexof(in->layers[i]));
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

	if (pathf(rootfs, sizeof(rootfs), "%s/rootfs", dir) ||
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

	if (pathf(rootfs, sizeof(rootfs), "%s/rootfs", dir))
		return -MTS_ERR_TOOBIG;
	if (umount2(rootfs, MNT_DETACH) < 0 && errno != EINVAL &&
	    errno != ENOENT)
		return -MTS_ERR_IO;
	return 0;
}
