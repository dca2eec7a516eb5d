/* inroot.h: opening regular files inside a directory tree that someone else controls (an image's root file system, an image layout) without ever leaving it. */
#ifndef MTS_INROOT_H
#define MTS_INROOT_H

#include <stddef.h>

/* How a path below the root is resolved. */
enum mts_inroot_how {
	/* As if the root were "/": symlinks (absolute ones too) and ".."
	 * are resolved inside it and can never leave it; /proc-style magic
	 * links are refused (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	 * what runc's securejoin does for a container's files). */
	MTS_INROOT_CHROOT,
	/* No symlink anywhere on the path, nothing above the root: ".." that
	 * would climb out, an absolute path or any symlink is refused
	 * (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). */
	MTS_INROOT_NOLINKS,
};

/*
 * Opens path (relative to rootfd, a directory) for reading, only if it is a
 * regular file. Nothing is opened for reading before its type is known
 * (the path is resolved with O_PATH, checked with fstat, then reopened), so
 * a FIFO cannot block the caller and a device node is never opened.
 * Returns the descriptor (O_RDONLY | O_CLOEXEC, the caller closes it) or
 * -errno: -ENOENT missing, -ELOOP a refused symlink or too many of them,
 * -EXDEV a path leaving the root, -EINVAL not a regular file. Uses openat2
 * where the kernel has it, otherwise an equivalent walk from rootfd, one
 * component at a time, that never lets the kernel follow a symlink.
 */
int mts_inroot_open(int rootfd, const char *path, enum mts_inroot_how how);

/* Reads the regular file path below rootfd into a NUL-terminated buffer
 * (*buf, the caller frees it; *len without the NUL). A file over max bytes
 * is refused with -EFBIG, whatever its size grows to while it is read.
 * Other errors as mts_inroot_open. */
int mts_inroot_read(int rootfd, const char *path, enum mts_inroot_how how,
    size_t max, char **buf, size_t *len);

/* What an error of the two functions above means, for messages ("not a
 * regular file", "a symbolic link leaving ..."). */
const char *mts_inroot_strerror(int rc);

/* The resolution used where the kernel has no openat2 (exported so that
 * tests hold it to openat2's answers): an O_PATH descriptor or -errno. */
int mts_inroot_walk(int rootfd, const char *path, enum mts_inroot_how how);

#endif
