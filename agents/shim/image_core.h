/* image_core.h: pure image logic — OCI/Docker manifest, index and config parsing, digests, references, archive path and whiteout rules. */
#ifndef MTS_SHIM_IMAGE_CORE_H
#define MTS_SHIM_IMAGE_CORE_H

#include <stddef.h>
#include <stdint.h>

#define MTS_DIGEST_LEN 71             /* "sha256:" + 64 hex digits */
#define MTS_IMAGE_MAX_JSON (4u << 20) /* largest manifest/index/config read */
#define MTS_IMAGE_MAX_LAYERS 128

/* A content descriptor (OCI image spec "descriptor"). */
struct mts_desc {
	char *media_type;                /* may be NULL */
	char digest[MTS_DIGEST_LEN + 1]; /* "sha256:<hex>" */
	int64_t size;                    /* -1 when absent */
	char *os, *arch, *variant;       /* platform, may be NULL */
	char *ref_name;                  /* org.opencontainers.image.ref.name */
	char *image_name;                /* io.containerd.image.name */
};

/* An index (OCI index.json / image index / Docker manifest list). */
struct mts_oci_index {
	struct mts_desc *m;
	size_t n;
};

struct mts_oci_manifest {
	struct mts_desc config;
	struct mts_desc *layers;
	size_t nlayers;
};

/* The parts of an image config a task needs. String arrays are
 * NULL-terminated (NULL when absent). */
struct mts_image_config {
	char **env, **entrypoint, **cmd;
	char *cwd, *user, *os, *arch;
	char **diff_ids; /* each a "sha256:<hex>" */
	size_t ndiff;
};

/* One entry of a `docker save` manifest.json. */
struct mts_docker_manifest {
	char *config;  /* file name inside the archive */
	char **layers; /* file names, NULL-terminated */
	size_t nlayers;
	char **tags; /* RepoTags, NULL-terminated (may be empty) */
};

/* A parsed image reference: [registry/]repository[:tag][@digest]. */
struct mts_ref {
	char registry[256]; /* "registry-1.docker.io" when absent */
	char repo[256];     /* "library/busybox" style for Docker Hub */
	char tag[128];      /* "latest" when neither tag nor digest */
	char digest[MTS_DIGEST_LEN + 1]; /* "" when absent */
};

enum mts_blob_kind {
	MTS_BLOB_MANIFEST,
	MTS_BLOB_INDEX,
};

/* Every parser takes the bytes and their length (not NUL-terminated), fills
 * *out (freed with the matching *_free, also after failure) and on error
 * returns -MTS_ERR_INVAL with a message naming the field in err. */
int mts_oci_parse_index(const char *json, size_t len, struct mts_oci_index *out,
    char *err, size_t errlen);
void mts_oci_index_free(struct mts_oci_index *);
int mts_oci_parse_manifest(const char *json, size_t len,
    struct mts_oci_manifest *out, char *err, size_t errlen);
void mts_oci_manifest_free(struct mts_oci_manifest *);
int mts_oci_parse_config(const char *json, size_t len,
    struct mts_image_config *out, char *err, size_t errlen);
void mts_image_config_free(struct mts_image_config *);
int mts_docker_parse_manifest(const char *json, size_t len,
    struct mts_docker_manifest *out, char *err, size_t errlen);
void mts_docker_manifest_free(struct mts_docker_manifest *);
/* Whether a fetched manifest blob is an index/list or a single manifest
 * (by mediaType, else by the presence of "manifests"). */
int mts_oci_blob_kind(const char *json, size_t len, enum mts_blob_kind *kind,
    char *err, size_t errlen);

/* The manifest for os/arch in an index: its position, or -MTS_ERR_NOTFOUND.
 * An entry without a platform matches when it is the only one. */
int mts_oci_pick(const struct mts_oci_index *, const char *os,
    const char *arch);

/* 0 when s is "sha256:" followed by exactly 64 lowercase hex digits. */
int mts_digest_valid(const char *s);
/* Formats a raw 32-byte SHA-256 as "sha256:<hex>" into out (>= 72 bytes). */
void mts_digest_format(char *out, const uint8_t sha[32]);

int mts_ref_parse(const char *s, struct mts_ref *out);

/* Cleans an archive entry path into a relative path without "." parts or
 * trailing slashes ("" for the root itself). Refuses (-MTS_ERR_INVAL)
 * absolute paths, ".." components, empty or over-long paths and NULs. */
int mts_archive_path_clean(const char *in, char *out, size_t outlen);

enum mts_whiteout {
	MTS_WH_NONE,
	MTS_WH_FILE,   /* dir/.wh.name: delete dir/name from lower layers */
	MTS_WH_OPAQUE, /* dir/.wh..wh..opq: hide everything below dir */
};

/* Classifies a cleaned path. For MTS_WH_FILE target is the hidden path,
 * for MTS_WH_OPAQUE the directory ("" for the root). -MTS_ERR_INVAL for
 * malformed whiteouts (".wh." alone, other ".wh..wh." names). */
int mts_whiteout_classify(const char *clean, enum mts_whiteout *kind,
    char *target, size_t targetlen);

/* Turns an image name into a file-name-safe key (hex of the name). */
void mts_image_key(const char *name, char *out, size_t outlen);

#endif
