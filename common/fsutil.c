/* fsutil.c: mkdir -p, write-tmp + fsync + rename, and string vectors (one copy for every agent). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

/* -errno from errno, with errno kept for the caller's log_warn. */
static int
neg_errno(int e)
{
	errno = e;
	return -e;
}

static int
mkdir_one(const char *path, mode_t mode)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int
mts_mkdir_p(const char *path, mode_t mode, mode_t parents)
{
	char tmp[PATH_MAX], *p;
	int rc;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return neg_errno(ENAMETOOLONG);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		rc = mkdir_one(tmp, parents);
		*p = '/';
		if (rc < 0)
			return neg_errno(-rc);
	}
	if ((rc = mkdir_one(tmp, mode)) < 0)
		return neg_errno(-rc);
	return 0;
}

/* write(2) until done; 0 or -errno. */
static int
write_all(int fd, const unsigned char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
mts_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
    int sync)
{
	char tmp[PATH_MAX];
	int fd, rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return neg_errno(ENAMETOOLONG);
	/* A tmp file left by a crash, or anything planted under its name, is
	 * replaced, never written through. */
	if (unlink(tmp) < 0 && errno != ENOENT)
		return neg_errno(errno);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    mode);
	if (fd < 0)
		return neg_errno(errno);
	rc = write_all(fd, data, len);
	if (rc == 0 && sync && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		(void)unlink(tmp);
		return neg_errno(-rc);
	}
	return 0;
}

void
mts_strv_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}
