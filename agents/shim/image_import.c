/* image_import.c: imports into the image store — OCI layouts and archives, docker-save archives — and unpacks layers with libarchive (path checks, whiteouts as overlayfs reads them, diff ids); runs in mts-shim-image. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <sodium.h>

#include "image_stage.h"
#include "image_store.h"
#include "inroot.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

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
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - target),
		    target);
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

	if (name == NULL ||
	    mts_archive_path_clean(name, clean, sizeof(clean))) {
		snprintf(err, errlen, "unsafe path in archive: \"%s\"",
		    name ? name : "(none)");
		return -MTS_ERR_INVAL;
	}
	*kind = MTS_WH_NONE;
	if (whiteouts &&
	    mts_whiteout_classify(clean, kind, target, targetlen)) {
		snprintf(err, errlen, "malformed whiteout \"%s\"", name);
		return -MTS_ERR_INVAL;
	}
	if (mts_img_path(full, sizeof(full), "%s/%s", dest, clean))
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
		if (mts_img_path(full, sizeof(full), "%s/%s", dest, clean))
			return -MTS_ERR_TOOBIG;
		archive_entry_set_hardlink(e, full);
	}
	return 0;
}

/* Extracts the tar (any compression libarchive knows) read from srcfd (not
 * closed) into dest.
 * whiteouts: convert .wh. entries for overlayfs (layers) or refuse nothing
 * special (plain archives). Every path is checked before anything is
 * written; symlinks are never followed. */
static int
extract(int srcfd, const char *dest, int whiteouts, char *err, size_t errlen)
{
	struct archive *in = archive_read_new(),
	               *out = archive_write_disk_new();
	struct archive_entry *e;
	char target[PATHMAX], name[PATHMAX];
	enum mts_whiteout kind;
	int r, rootfd = -1, rc = -MTS_ERR_INVAL, n = 0;

	archive_read_support_filter_all(in);
	archive_read_support_format_tar(in);
	/* No ARCHIVE_EXTRACT_UNLINK: with it libarchive would replace a
	 * symlink in the way by a directory; without it, an entry below a
	 * symlink is refused, which is what a layer doing that deserves. */
	archive_write_disk_set_options(out,
	    ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_PERM |
	        ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
	        ARCHIVE_EXTRACT_SECURE_NODOTDOT);
	if ((rootfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: %s", dest, strerror(errno));
		rc = -MTS_ERR_IO;
		goto out;
	}
	if (archive_read_open_fd(in, srcfd, 65536) != ARCHIVE_OK) {
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
				snprintf(err, errlen, "whiteout %.400s: %s",
				    target, strerror(errno));
				goto out;
			}
			continue;
		}
		if (archive_write_header(out, e) < ARCHIVE_OK ||
		    copy_entry_data(in, out) < ARCHIVE_OK ||
		    archive_write_finish_entry(out) < ARCHIVE_OK) {
			snprintf(err, errlen, "entry \"%.300s\": %s", name,
			    archive_error_string(out)
			        ? archive_error_string(out)
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

/*
 * Copies the file rel of an image directory (a layout or an unpacked
 * archive: content someone else made) to the stage's incoming file,
 * hashing it into digest. It is opened below dirfd with no symlink
 * anywhere on the way and nothing outside the directory, and only if it
 * is a regular file (a FIFO or a device is refused, never opened for
 * reading): a blob linked to /etc/shadow was hashed, a FIFO blocked the
 * helper. The error names the file.
 */
static int
stage_copy_member(struct mts_stage *sg, int dirfd, const char *rel,
    char *digest, char *err, size_t errlen)
{
	int64_t size;
	int fd, rc;

	unlink(sg->incoming);
	if ((fd = mts_inroot_open(dirfd, rel, MTS_INROOT_NOLINKS)) < 0) {
		if (fd == -ENOENT)
			snprintf(err, errlen, "%s: missing from the image",
			    rel);
		else
			snprintf(err, errlen, "%s: %s", rel,
			    mts_inroot_strerror(fd));
		return -MTS_ERR_INVAL;
	}
	rc = mts_img_copy_hash(fd, sg->incoming, digest, &size);
	close(fd);
	if (rc != 0)
		snprintf(err, errlen, "%s: cannot copy it into the store", rel);
	return rc;
}

/* Reads a JSON file of an image directory, with the checks of
 * stage_copy_member (and MTS_IMAGE_MAX_JSON). */
static int
read_member(int dirfd, const char *rel, char **buf, size_t *len, char *err,
    size_t errlen)
{
	int rc = mts_inroot_read(dirfd, rel, MTS_INROOT_NOLINKS,
	    MTS_IMAGE_MAX_JSON, buf, len);

	if (rc == 0)
		return 0;
	snprintf(err, errlen, "%s: %s", rel, mts_inroot_strerror(rc));
	return rc == -EFBIG ? -MTS_ERR_TOOBIG : -MTS_ERR_INVAL;
}

/* Copies a blob from an image layout into the stage, verifying it. */
static int
stage_copy_blob(struct mts_stage *sg, int dirfd, const char *rel,
    const char *digest, int64_t size, char *err, size_t errlen)
{
	char got[MTS_DIGEST_LEN + 1];
	int rc;

	if (mts_img_staged_has(sg, digest, 0))
		return 0;
	if ((rc = stage_copy_member(sg, dirfd, rel, got, err, errlen)) != 0)
		return rc;
	return mts_stage_add_blob(sg, sg->incoming, digest, size, err, errlen);
}

/* Unpacks a staged layer file into the stage, checking its diff id. */
static int
stage_unpack(struct mts_stage *sg, const char *file, const char *want,
    char *err, size_t errlen)
{
	char got[MTS_DIGEST_LEN + 1], dir[PATHMAX], msg[512], stored[PATHMAX];
	int rc, fd;

	if ((rc = diff_id(file, got, msg, sizeof(msg))) != 0) {
		snprintf(err, errlen, "layer %s: %s", want, msg);
		return rc;
	}
	if (strcmp(got, want) != 0) {
		snprintf(err, errlen,
		    "layer %s: uncompressed content hashes to %s", want, got);
		return -MTS_ERR_INVAL;
	}
	if (mts_img_staged_has(sg, want, 1))
		return 0;
	if (mts_img_path(stored, sizeof(stored), "%s/layers/%s", sg->st->root,
	        mts_img_hex(want)) == 0 &&
	    access(stored, F_OK) == 0) {
		mts_img_staged_add(sg, want, 1);
		return 0;
	}
	if (mts_img_path(dir, sizeof(dir), "%s/layer-%s", sg->dir,
	        mts_img_hex(want)) ||
	    mkdir(dir, 0755) < 0)
		return -MTS_ERR_IO;
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return -MTS_ERR_IO;
	rc = extract(fd, dir, 1, msg, sizeof(msg));
	close(fd);
	if (rc != 0) {
		snprintf(err, errlen, "layer %s: %s", want, msg);
		return rc;
	}
	mts_img_staged_add(sg, want, 1);
	return 0;
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
	if ((rc = mts_img_load_config(sg, m->config.digest, &in.cfg, err,
	         errlen)))
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
	mts_img_info_blobs(sg, &in);
	in.size = mts_img_staged_size(sg);
	in.created_ms = (uint64_t)time(NULL) * 1000;
	rc = mts_img_stage_commit(sg, &in, err, errlen);
out:
	mts_image_info_free(&in);
	return rc;
}

/* Where a layout keeps a blob, relative to the layout. */
static int
layout_blob(const char *digest, char *out, size_t outlen)
{
	return mts_img_path(out, outlen, "blobs/sha256/%s",
	    mts_img_hex(digest));
}

/* The name of an imported image: the caller's, else the index entry's
 * io.containerd.image.name, else DIR:TAG for a bare ref.name tag, else the
 * ref.name itself. */
static int
oci_name(const struct mts_desc *d, const char *dir, const char *name, char *out,
    size_t outlen, char *err, size_t errlen)
{
	const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;

	if (name == NULL)
		name = d->image_name;
	if (name == NULL && d->ref_name != NULL &&
	    strchr(d->ref_name, ':') == NULL) {
		snprintf(out, outlen, "%s:%s", base, d->ref_name);
		return 0;
	}
	if (name == NULL)
		name = d->ref_name;
	if (name == NULL) {
		snprintf(err, errlen, "image has no name; give one");
		return -MTS_ERR_INVAL;
	}
	snprintf(out, outlen, "%s", name);
	return 0;
}

/* Follows idx->m[k] (through nested indexes, picking linux/amd64) to a
 * manifest, staging every blob on the way from the layout at dirfd. On 0,
 * *buf (the caller frees it) holds the manifest and digest its digest; idx
 * may be replaced. */
static int
oci_follow(struct mts_stage *sg, int dirfd, struct mts_oci_index *idx, int k,
    char *digest, char **buf, size_t *len, char *err, size_t errlen)
{
	char rel[PATHMAX], msg[400];
	enum mts_blob_kind kind;
	int64_t size;
	int rc, depth;

	for (depth = 0; depth < 4; depth++) {
		snprintf(digest, MTS_DIGEST_LEN + 1, "%s", idx->m[k].digest);
		size = idx->m[k].size;
		free(*buf);
		*buf = NULL;
		if ((rc = layout_blob(digest, rel, sizeof(rel))) ||
		    (rc = stage_copy_blob(sg, dirfd, rel, digest, size, err,
		         errlen)) ||
		    (rc = mts_stage_read_blob(sg, digest, buf, len, err,
		         errlen)))
			return rc;
		if ((rc = mts_oci_blob_kind(*buf, *len, &kind, msg,
		         sizeof(msg))) != 0) {
			snprintf(err, errlen, "manifest %s: %s", digest, msg);
			return rc;
		}
		if (kind == MTS_BLOB_MANIFEST)
			return 0;
		mts_oci_index_free(idx);
		if ((rc = mts_oci_parse_index(*buf, *len, idx, msg,
		         sizeof(msg))) != 0) {
			snprintf(err, errlen, "index %s: %s", digest, msg);
			return rc;
		}
		if ((k = mts_oci_pick(idx, "linux", "amd64")) < 0) {
			snprintf(err, errlen,
			    "index %s: no linux/amd64 manifest", digest);
			return -MTS_ERR_NOTFOUND;
		}
	}
	snprintf(err, errlen, "indexes nested too deep");
	return -MTS_ERR_INVAL;
}

/* Stages the config and layer blobs a manifest names. */
static int
oci_stage_blobs(struct mts_stage *sg, int dirfd,
    const struct mts_oci_manifest *man, char *err, size_t errlen)
{
	char rel[PATHMAX];
	size_t i;
	int rc;

	if ((rc = layout_blob(man->config.digest, rel, sizeof(rel))) ||
	    (rc = stage_copy_blob(sg, dirfd, rel, man->config.digest,
	         man->config.size, err, errlen)))
		return rc;
	for (i = 0; i < man->nlayers; i++)
		if ((rc = layout_blob(man->layers[i].digest, rel,
		         sizeof(rel))) ||
		    (rc = stage_copy_blob(sg, dirfd, rel, man->layers[i].digest,
		         man->layers[i].size, err, errlen)))
			return rc;
	return 0;
}

/* An image directory: its descriptor (every file is opened below it) and
 * its path (for the default name). */
struct imgdir {
	int fd;
	const char *path;
};

/* Imports an OCI image layout directory (its linux/amd64 image). */
static int
import_oci(struct mts_stage *sg, const struct imgdir *d, const char *name,
    char *name_out, size_t name_outlen, char *err, size_t errlen)
{
	struct mts_oci_index idx;
	struct mts_oci_manifest man;
	char digest[MTS_DIGEST_LEN + 1], msg[400], *buf = NULL;
	size_t len;
	int rc, k;

	memset(&idx, 0, sizeof(idx));
	memset(&man, 0, sizeof(man));
	if ((rc = read_member(d->fd, "index.json", &buf, &len, err, errlen)) !=
	    0)
		return rc;
	if ((rc = mts_oci_parse_index(buf, len, &idx, msg, sizeof(msg))) != 0) {
		snprintf(err, errlen, "index.json: %s", msg);
		goto out;
	}
	if ((k = mts_oci_pick(&idx, "linux", "amd64")) < 0) {
		snprintf(err, errlen, "index.json: no linux/amd64 manifest");
		rc = -MTS_ERR_NOTFOUND;
		goto out;
	}
	if ((rc = oci_name(&idx.m[k], d->path, name, name_out, name_outlen, err,
	         errlen)) != 0 ||
	    (rc = oci_follow(sg, d->fd, &idx, k, digest, &buf, &len, err,
	         errlen)) != 0)
		goto out;
	if ((rc = mts_oci_parse_manifest(buf, len, &man, msg, sizeof(msg)))) {
		snprintf(err, errlen, "manifest %s: %s", digest, msg);
		goto out;
	}
	if ((rc = oci_stage_blobs(sg, d->fd, &man, err, errlen)) == 0)
		rc = mts_stage_commit_oci(sg, name_out, digest, &man, err,
		    errlen);
out:
	free(buf);
	mts_oci_index_free(&idx);
	mts_oci_manifest_free(&man);
	return rc;
}

/* A file named inside a docker-save archive: its path relative to the
 * archive, checked to stay inside it. */
static int
docker_member(const char *rel, char *out, size_t outlen, char *err,
    size_t errlen)
{
	if (mts_archive_path_clean(rel, out, outlen) || out[0] == '\0') {
		snprintf(err, errlen, "manifest.json: unsafe path \"%s\"", rel);
		return -MTS_ERR_INVAL;
	}
	return 0;
}

/* Stages a file of a docker-save archive (the config or a layer) under the
 * digest it hashes to. */
static int
docker_stage(struct mts_stage *sg, int dirfd, const char *name, char *digest,
    char *err, size_t errlen)
{
	char rel[PATHMAX];
	int rc;

	if ((rc = docker_member(name, rel, sizeof(rel), err, errlen)) ||
	    (rc = stage_copy_member(sg, dirfd, rel, digest, err, errlen)))
		return rc;
	return mts_stage_add_blob(sg, sg->incoming, digest, -1, err, errlen);
}

static int
import_docker(struct mts_stage *sg, const struct imgdir *d, const char *name,
    char *name_out, size_t name_outlen, char *err, size_t errlen)
{
	struct mts_docker_manifest dm;
	struct mts_image_info in;
	char dg[MTS_DIGEST_LEN + 1], *buf = NULL;
	char(*ldg)[MTS_DIGEST_LEN + 1] = NULL;
	size_t len, i;
	int rc;

	memset(&in, 0, sizeof(in));
	memset(&dm, 0, sizeof(dm));
	if ((rc = read_member(d->fd, "manifest.json", &buf, &len, err,
	         errlen)) != 0)
		return rc;
	if ((rc = mts_docker_parse_manifest(buf, len, &dm, err, errlen)))
		goto out;
	name = name ? name : dm.tags && dm.tags[0] ? dm.tags[0] : NULL;
	if (name == NULL) {
		snprintf(err, errlen, "image has no RepoTags; give a name");
		rc = -MTS_ERR_INVAL;
		goto out;
	}
	snprintf(name_out, name_outlen, "%s", name);
	if ((rc = docker_stage(sg, d->fd, dm.config, dg, err, errlen)) ||
	    (rc = mts_img_load_config(sg, dg, &in.cfg, err, errlen)))
		goto out;
	rc = -MTS_ERR_INVAL;
	if (in.cfg.ndiff != dm.nlayers) {
		snprintf(err, errlen,
		    "config lists %zu layers, manifest.json %zu", in.cfg.ndiff,
		    dm.nlayers);
		goto out;
	}
	ldg = xcalloc(dm.nlayers + 1, sizeof(*ldg));
	for (i = 0; i < dm.nlayers; i++) {
		char sp[PATHMAX];
		if ((rc = docker_stage(sg, d->fd, dm.layers[i], ldg[i], err,
		         errlen)) ||
		    (rc = mts_stage_blob_path(sg, ldg[i], sp, sizeof(sp))) ||
		    (rc = stage_unpack(sg, sp, in.cfg.diff_ids[i], err,
		         errlen)))
			goto out;
	}
	/* An OCI manifest of the config and layers, so the image can be
	 * fetched by other nodes like any other (image_peer.c). */
	if ((rc = mts_stage_make_manifest(sg, dg, ldg, dm.nlayers, in.manifest,
	         err, errlen)) != 0)
		goto out;
	in.name = xstrdup(name_out);
	snprintf(in.id, sizeof(in.id), "%s", dg);
	in.layers = xcalloc(dm.nlayers + 1, sizeof(char *));
	for (i = 0; i < dm.nlayers; i++)
		in.layers[i] = xstrdup(in.cfg.diff_ids[i]);
	in.nlayers = dm.nlayers;
	mts_img_info_blobs(sg, &in);
	in.size = mts_img_staged_size(sg);
	in.created_ms = (uint64_t)time(NULL) * 1000;
	rc = mts_img_stage_commit(sg, &in, err, errlen);
out:
	free(buf);
	free(ldg);
	mts_docker_manifest_free(&dm);
	mts_image_info_free(&in);
	return rc;
}

/* Whether the directory at dirfd has an entry name (of any kind: reading
 * it applies the checks). */
static int
has_entry(int dirfd, const char *name)
{
	struct stat sb;

	return fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Imports the image directory d: an OCI layout or a docker-save tree. */
static int
import_dir(struct mts_stage *sg, const struct imgdir *d, const char *name,
    char *name_out, size_t name_outlen, char *err, size_t errlen)
{
	if (has_entry(d->fd, "index.json"))
		return import_oci(sg, d, name, name_out, name_outlen, err,
		    errlen);
	if (has_entry(d->fd, "manifest.json"))
		return import_docker(sg, d, name, name_out, name_outlen, err,
		    errlen);
	snprintf(err, errlen,
	    "neither an OCI layout (index.json) nor a "
	    "docker-save archive (manifest.json)");
	return -MTS_ERR_INVAL;
}

/* Unpacks the archive read from fd into the stage's src directory and
 * opens that as d. */
static int
unpack_archive(struct mts_stage *sg, int fd, struct imgdir *d, char *src,
    size_t srclen, char *err, size_t errlen)
{
	int rc;

	if (mts_img_path(src, srclen, "%s/src", sg->dir) ||
	    mkdir(src, 0700) < 0)
		return -MTS_ERR_IO;
	if ((rc = extract(fd, src, 0, err, errlen)) != 0)
		return rc;
	d->path = src;
	if ((d->fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -MTS_ERR_IO;
	return 0;
}

int
mts_store_import(struct mts_image_store *st, const char *path, const char *name,
    char *name_out, size_t name_outlen, char *err, size_t errlen)
{
	struct mts_stage *sg = NULL;
	struct imgdir d = { .fd = -1, .path = path };
	char src[PATHMAX], msg[512];
	struct stat sb;
	int fd, rc;

	/* The path itself is the caller's choice (links followed), but it is
	 * opened before its type is known only with O_NONBLOCK, and must be a
	 * directory or a regular file. */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) <
	    0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -MTS_ERR_NOTFOUND;
	}
	if (fstat(fd, &sb) < 0 ||
	    !(S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode))) {
		snprintf(err, errlen,
		    "%s: neither a directory nor a regular "
		    "file",
		    path);
		close(fd);
		return -MTS_ERR_INVAL;
	}
	if ((rc = mts_stage_new(st, &sg, err, errlen)) != 0) {
		close(fd);
		return rc;
	}
	if (S_ISDIR(sb.st_mode)) {
		d.fd = fd;
		fd = -1;
	} else if ((rc = unpack_archive(sg, fd, &d, src, sizeof(src), msg,
	                sizeof(msg))) != 0)
		goto out;
	rc = import_dir(sg, &d, name, name_out, name_outlen, msg, sizeof(msg));
out:
	if (rc)
		snprintf(err, errlen, "%s: %s", path, msg);
	if (fd >= 0)
		close(fd);
	if (d.fd >= 0)
		close(d.fd);
	mts_stage_free(sg);
	return rc;
}
