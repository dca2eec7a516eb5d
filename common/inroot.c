/* inroot.c: opening regular files inside a directory tree someone else controls (an image's root file system, an image layout) — openat2 confined to the tree, or an equivalent walk one component at a time, then a type check before anything is read. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "inroot.h"
#include "xmalloc.h"

#define LINKS_MAX 40  /* as the kernel's MAXSYMLINKS */
#define DEPTH_MAX 128 /* directories deep */
#define RACE_TRIES 8  /* openat2 -EAGAIN: a rename raced the lookup */

/* -ENOSYS once: the kernel has no openat2, walk from then on. */
static int no_openat2;

static int
neg_errno(void)
{
	return errno ? -errno : -EIO;
}

static int
resolve_openat2(int rootfd, const char *path, enum mts_inroot_how how)
{
	struct open_how oh = { .flags = O_PATH | O_CLOEXEC };
	int fd = -1, i;

	oh.resolve = how == MTS_INROOT_CHROOT
	    ? RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
	    : RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	for (i = 0; i < RACE_TRIES; i++) {
		fd = (int)syscall(SYS_openat2, rootfd, path, &oh, sizeof(oh));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd >= 0 ? fd : neg_errno();
}

/* The directories walked so far, the root at the bottom. */
struct walk {
	int fd[DEPTH_MAX];
	size_t depth; /* fd[depth - 1] is the current directory */
};

static void
walk_pop(struct walk *w, size_t keep)
{
	while (w->depth > keep)
		close(w->fd[--w->depth]);
}

/* Replaces the path still to walk (rest, inside buf) by target + "/" +
 * rest: how a symlink met on the way continues. */
static int
walk_splice(char *buf, size_t buflen, const char *target, const char *rest)
{
	char tmp[PATH_MAX];
	int n = snprintf(tmp, sizeof(tmp), "%s%s%s", target, *rest ? "/" : "",
	    rest);

	if (n < 0 || (size_t)n >= sizeof(tmp) || (size_t)n >= buflen)
		return -ENAMETOOLONG;
	memcpy(buf, tmp, (size_t)n + 1);
	return 0;
}

/* One component c of the path in directory w's top: its O_PATH
 * descriptor in *out, never following it. */
static int
walk_step(struct walk *w, const char *c, int *out, struct stat *sb)
{
	int fd =
	    openat(w->fd[w->depth - 1], c, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return neg_errno();
	if (fstat(fd, sb) < 0) {
		close(fd);
		return neg_errno();
	}
	*out = fd;
	return 0;
}

/* The walk openat2 does, done by hand for kernels without it (before
 * 5.6): every component is opened O_PATH | O_NOFOLLOW below the previous
 * one, a symlink's text is spliced into the path still to walk (from the
 * root again when it is absolute), and ".." stops at the root (CHROOT) or
 * is refused there (NOLINKS). The kernel never follows a link, so a magic
 * link is only ever read as text. Returns an O_PATH descriptor or -errno. */
int
mts_inroot_walk(int rootfd, const char *path, enum mts_inroot_how how)
{
	struct walk w = { .depth = 0 };
	char buf[PATH_MAX], link[PATH_MAX], *p = buf, *c;
	struct stat sb;
	int links = 0, fd = -1, rc, last;
	ssize_t n;

	if (path[0] == '\0')
		return -ENOENT;
	if (how == MTS_INROOT_NOLINKS && path[0] == '/')
		return -EXDEV;
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	if ((w.fd[0] = fcntl(rootfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return neg_errno();
	w.depth = 1;
	for (;;) {
		while (*p == '/')
			p++;
		if (*p == '\0') { /* the path named a directory */
			rc = (fd = openat(w.fd[w.depth - 1], ".",
			          O_PATH | O_CLOEXEC)) < 0
			    ? neg_errno()
			    : fd;
			break;
		}
		c = p;
		p += strcspn(p, "/");
		if (*p == '/')
			*p++ = '\0';
		last = p[strspn(p, "/")] == '\0';
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			if (w.depth == 1 && how == MTS_INROOT_NOLINKS) {
				rc = -EXDEV;
				break;
			}
			walk_pop(&w, w.depth > 1 ? w.depth - 1 : 1);
			continue;
		}
		if ((rc = walk_step(&w, c, &fd, &sb)) != 0)
			break;
		if (S_ISLNK(sb.st_mode)) {
			n = readlinkat(fd, "", link, sizeof(link) - 1);
			close(fd);
			fd = -1;
			if (how == MTS_INROOT_NOLINKS || ++links > LINKS_MAX) {
				rc = -ELOOP;
				break;
			}
			if (n <= 0) {
				rc = n < 0 ? neg_errno() : -ENOENT;
				break;
			}
			link[n] = '\0';
			if ((rc = walk_splice(buf, sizeof(buf), link, p)) != 0)
				break;
			p = buf;
			if (link[0] == '/')
				walk_pop(&w, 1);
			continue;
		}
		if (last) {
			rc = fd;
			break;
		}
		if (!S_ISDIR(sb.st_mode) || w.depth == DEPTH_MAX) {
			close(fd);
			rc = S_ISDIR(sb.st_mode) ? -ENAMETOOLONG : -ENOTDIR;
			break;
		}
		w.fd[w.depth++] = fd;
		fd = -1;
	}
	walk_pop(&w, 0);
	return rc;
}

/* An O_PATH descriptor of path below rootfd, or -errno. */
static int
resolve(int rootfd, const char *path, enum mts_inroot_how how)
{
	int fd;

	if (path[0] == '\0')
		return -ENOENT; /* openat2 would open the root itself */
	if (!no_openat2) {
		fd = resolve_openat2(rootfd, path, how);
		if (fd != -ENOSYS)
			return fd;
		no_openat2 = 1;
	}
	return mts_inroot_walk(rootfd, path, how);
}

int
mts_inroot_open(int rootfd, const char *path, enum mts_inroot_how how)
{
	char proc[64];
	struct stat sb, sb2;
	int pfd, fd, rc;

	if ((pfd = resolve(rootfd, path, how)) < 0)
		return pfd;
	if (fstat(pfd, &sb) < 0) {
		rc = neg_errno();
		goto out;
	}
	rc = -EINVAL;
	if (!S_ISREG(sb.st_mode))
		goto out;
	/* The very inode just checked, opened for reading through the
	 * descriptor's /proc entry (O_NONBLOCK all the same). */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	if ((fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) <
	    0) {
		rc = neg_errno();
		goto out;
	}
	if (fstat(fd, &sb2) < 0 || sb2.st_ino != sb.st_ino ||
	    sb2.st_dev != sb.st_dev || !S_ISREG(sb2.st_mode)) {
		close(fd);
		goto out;
	}
	rc = fd;
out:
	close(pfd);
	return rc;
}

int
mts_inroot_read(int rootfd, const char *path, enum mts_inroot_how how,
    size_t max, char **buf, size_t *len)
{
	size_t got = 0;
	ssize_t n;
	int fd, rc = 0;

	*buf = NULL;
	*len = 0;
	if ((fd = mts_inroot_open(rootfd, path, how)) < 0)
		return fd;
	*buf = xmalloc(max + 2);
	/* One byte more than allowed tells a file over max from one of max. */
	while (got <= max && (n = read(fd, *buf + got, max + 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = neg_errno();
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (rc == 0 && got > max)
		rc = -EFBIG;
	if (rc != 0) {
		free(*buf);
		*buf = NULL;
		return rc;
	}
	(*buf)[got] = '\0';
	*len = got;
	return 0;
}

static const struct {
	int rc;
	const char *what;
} why[] = {
	{ -ENOENT, "missing" },
	{ -EINVAL, "not a regular file" },
	{ -ELOOP, "a symbolic link where none is allowed (or too many links)" },
	{ -EXDEV, "the path leaves its directory" },
	{ -EFBIG, "too large" },
	{ -ENOTDIR, "a path component is not a directory" },
};

const char *
mts_inroot_strerror(int rc)
{
	size_t i;

	for (i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		if (why[i].rc == rc)
			return why[i].what;
	return strerror(-rc);
}
