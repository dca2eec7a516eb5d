/* image_stage.h: private to the image store files — the store and staging structures and the helpers image_store.c shares with the import and pull code. */
#ifndef MTS_SHIM_IMAGE_STAGE_H
#define MTS_SHIM_IMAGE_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "image_store.h"

#define PATHMAX 4096
#define OPAQUE_XATTR "trusted.overlay.opaque"

struct mts_image_store {
	char *root;
};

struct staged {
	char digest[MTS_DIGEST_LEN + 1];
	int layer; /* 1: an unpacked layer dir, 0: a blob file */
};

/* Blobs are staged as DIR/blob-<hex>, unpacked layers as DIR/layer-<hex>. */
struct mts_stage {
	struct mts_image_store *st;
	char dir[PATHMAX];
	char incoming[PATHMAX + 16]; /* DIR/incoming: a file being copied in */
	struct staged *items;
	size_t n;
};

/* The hex part of "sha256:<hex>". */
const char *mts_img_hex(const char *digest);
/* snprintf into out; -MTS_ERR_TOOBIG when it does not fit. */
int mts_img_path(char *out, size_t outlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reads a file of at most MTS_IMAGE_MAX_JSON bytes (NUL-terminated copy in
 * *buf, which the caller frees). */
int mts_img_read_small(const char *path, char **buf, size_t *len);
/* SHA-256 of a file as "sha256:<hex>", and its size. */
int mts_img_hash_file(const char *path, char *digest, int64_t *size);
/* Copies the rest of in (not closed) to dst (created), hashing on the way. */
int mts_img_copy_hash(int in, const char *dst, char *digest, int64_t *size);
int mts_img_staged_has(const struct mts_stage *, const char *digest, int layer);
void mts_img_staged_add(struct mts_stage *, const char *digest, int layer);
/* Moves the staged items into the store and writes the record last. */
int mts_img_stage_commit(struct mts_stage *, struct mts_image_info *, char *err,
    size_t errlen);
/* Parses the staged config blob into cfg. */
int mts_img_load_config(struct mts_stage *, const char *digest,
    struct mts_image_config *cfg, char *err, size_t errlen);
int64_t mts_img_staged_size(struct mts_stage *);
/* Fills in->blobs with every staged blob digest. */
void mts_img_info_blobs(struct mts_stage *, struct mts_image_info *);

#endif
