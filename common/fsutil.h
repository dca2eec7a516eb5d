/* fsutil.h: small file-system helpers every agent needs — mkdir -p, an atomic file write, freeing a NULL-terminated string vector. */
#ifndef MTS_FSUTIL_H
#define MTS_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

/* mkdir -p: creates path with mode and any missing parent with parents;
 * existing directories are left as they are. 0 or -errno (errno is set
 * too, for log_warn). */
int mts_mkdir_p(const char *path, mode_t mode, mode_t parents);

/* Replaces path with data atomically: written to a new "path.tmp" (mode;
 * whatever had that name is removed first, a symlink is never followed),
 * fsync'ed when sync is set, renamed over path. Readers see the old or the
 * new content, never a part. On failure the tmp file is removed and path is
 * untouched. 0 or -errno (errno is set too). */
int mts_write_atomic(const char *path, const void *data, size_t len,
    mode_t mode, int sync);

/* Frees a NULL-terminated array of malloc'ed strings and the array; NULL
 * is fine. */
void mts_strv_free(char **v);

#endif
