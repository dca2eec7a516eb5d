/* image_store.h: the shim's content-addressed image store — import, pull, list, remove, and per-task root file systems. */
#ifndef MTS_SHIM_IMAGE_STORE_H
#define MTS_SHIM_IMAGE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "image_core.h"

struct mts_image_store;

/* A stored image, as its record on disk says. Strings and arrays owned by
 * the struct (mts_image_info_free). */
struct mts_image_info {
	char *name;                        /* "busybox:latest" */
	char id[MTS_DIGEST_LEN + 1];       /* config digest */
	char manifest[MTS_DIGEST_LEN + 1]; /* "" for docker-save imports
					    * made before manifests were kept */
	char **layers;                     /* diff ids, bottom first */
	size_t nlayers;
	char **blobs; /* every blob digest the image holds */
	size_t nblobs;
	int64_t size; /* bytes of blobs */
	uint64_t created_ms;
	struct mts_image_config cfg;
};

enum mts_rootfs_mode {
	MTS_ROOTFS_AUTO, /* overlayfs, copy when the mount is refused */
	MTS_ROOTFS_OVERLAY,
	MTS_ROOTFS_COPY,
};

/* Opens (creating) the store under root; removes leftovers of interrupted
 * imports and blobs/layers no image references. */
int mts_store_open(const char *root, struct mts_image_store **out, char *err,
    size_t errlen);
void mts_store_close(struct mts_image_store *);

/* Imports an OCI image layout directory, an OCI layout archive or a `docker
 * save` archive (tar, optionally compressed). name overrides the name found
 * in the image (NULL keeps it). On success the stored name is copied into
 * name_out. Nothing is stored on failure. */
int mts_store_import(struct mts_image_store *, const char *path,
    const char *name, char *name_out, size_t name_outlen, char *err,
    size_t errlen);

/* What a pull may cost ([shim] pull_* keys). */
struct mts_pull_limits {
	int64_t low_speed;   /* bytes/s: a transfer slower than this ... */
	int64_t low_time_ms; /* ... for this long fails */
	int64_t deadline_ms; /* the whole pull, every request included */
	int64_t max_blob;    /* largest blob size a manifest may declare */
};

/* Pulls ref from an OCI distribution registry (image_pull.c). insecure
 * allows plain HTTP. A blob is refused before it is fetched when its
 * declared size is over lim->max_blob or the store's free space, and while
 * it is fetched as soon as more bytes come than it declared. */
int mts_store_pull(struct mts_image_store *, const char *ref, int insecure,
    const struct mts_pull_limits *lim, char *name_out, size_t name_outlen,
    char *err, size_t errlen);

/* What a fetch from other nodes may cost and where it asks (image_peer.c). */
struct mts_peer_opts {
	const char *rundir; /* the node's: statestore and gossipd sockets */
	const char *self;   /* this node's id (32 hex digits) */
	int64_t rate;       /* bytes/s received, at most (0: unlimited) */
	int64_t chunk_timeout_ms; /* one relayed chunk */
	int64_t deadline_ms;      /* the whole fetch */
	int64_t max_blob;         /* largest layer accepted */
};

/* Fetches name from the peers that hold it (their i/<node> records),
 * every blob verified by digest; the stored name goes to name_out.
 * -MTS_ERR_NOTFOUND when no alive peer holds it. */
int mts_store_fetch_peers(struct mts_image_store *, const char *name,
    const struct mts_peer_opts *, char *name_out, size_t name_outlen, char *err,
    size_t errlen);

/* Reads up to max bytes at off of a blob that a stored image references
 * (into *buf, malloc'd, the caller frees), and its whole size.
 * -MTS_ERR_NOTFOUND for any other digest. */
int mts_store_read_blob(struct mts_image_store *, const char *digest,
    uint64_t off, size_t max, uint8_t **buf, size_t *len, uint64_t *size);

/* Loads the record of name (also accepts an id prefix "sha256:..." of at
 * least 12 hex digits). -MTS_ERR_NOTFOUND when absent. */
int mts_store_get(struct mts_image_store *, const char *name,
    struct mts_image_info *out);
void mts_image_info_free(struct mts_image_info *);

/* Every stored image; *out is an array of n infos (free each, then it). */
int mts_store_list(struct mts_image_store *, struct mts_image_info **out,
    size_t *n);

/* Removes an image record and every blob and layer no other image uses. */
int mts_store_remove(struct mts_image_store *, const char *name, char *err,
    size_t errlen);

/* Builds dir/rootfs for a task from the image's layers: an overlay mount
 * (upper and work under dir) or a copy. *used tells which was made. */
int mts_store_make_rootfs(struct mts_image_store *,
    const struct mts_image_info *, const char *dir, enum mts_rootfs_mode mode,
    enum mts_rootfs_mode *used, char *err, size_t errlen);
/* Unmounts dir/rootfs if mounted; the caller then removes dir. */
int mts_store_release_rootfs(const char *dir);

/* Removes a directory tree without crossing mount points or following
 * symlinks. */
int mts_rmtree(const char *path);

/* Shared by import and pull (image_store.c): a staging area under the
 * store where blobs and layers are verified before they are committed. */
struct mts_stage;
int mts_stage_new(struct mts_image_store *, struct mts_stage **out, char *err,
    size_t errlen);
void mts_stage_free(struct mts_stage *); /* removes what was not committed */
/* A path inside the stage for a new blob file being downloaded. */
const char *mts_stage_dir(const struct mts_stage *);
/* Moves file (inside the stage) into the stage's blob set after checking it
 * hashes to digest (and has size, when size >= 0). */
int mts_stage_add_blob(struct mts_stage *, const char *file, const char *digest,
    int64_t size, char *err, size_t errlen);
/* Path of a staged or stored blob, for reading. */
int mts_stage_blob_path(struct mts_stage *, const char *digest, char *out,
    size_t outlen);
/* Reads a staged blob fully (at most MTS_IMAGE_MAX_JSON bytes). */
int mts_stage_read_blob(struct mts_stage *, const char *digest, char **buf,
    size_t *len, char *err, size_t errlen);
/* Writes and stages an OCI image manifest naming the staged config and
 * layer blobs (their sizes from the stage), for images imported without
 * one (docker-save); its digest goes to digest_out. */
int mts_stage_make_manifest(struct mts_stage *, const char *config,
    const char (*layers)[MTS_DIGEST_LEN + 1], size_t nlayers, char *digest_out,
    char *err, size_t errlen);
/* Verifies config + layers of an OCI manifest already staged as blobs,
 * unpacks the layers and commits everything under name. */
int mts_stage_commit_oci(struct mts_stage *, const char *name,
    const char *manifest_digest, const struct mts_oci_manifest *, char *err,
    size_t errlen);

#endif
