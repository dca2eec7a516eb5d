/* test_inroot.c: unit tests of common/inroot.c — a hostile tree (symlinks to host files, escapes through "..", loops, a FIFO, a device, a huge file) read through openat2 and through the fallback walk, which must give the same answers. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "inroot.h"

static char top[64], root[96];
static int rootfd = -1, have_dev;

static void
put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void
lnk(const char *target, const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

/* top/secret is outside the root: nothing below may reach it. */
static int
setup(void **state)
{
	char path[256];

	snprintf(top, sizeof(top), "/tmp/mts-inroot.XXXXXX");
	if (mkdtemp(top) == NULL)
		return -1;
	snprintf(root, sizeof(root), "%s/root", top);
	mkdir(root, 0755);
	put("secret", "host-secret\n");
	put("root/passwd", "root:x:0:0:root:/root:/bin/sh\n");
	snprintf(path, sizeof(path), "%s/etc", root);
	mkdir(path, 0755);
	put("root/etc/passwd", "image-passwd\n");
	put("root/etc/shadow", "image-shadow\n");
	snprintf(path, sizeof(path), "%s/etc/fifo", root);
	mkfifo(path, 0644);
	snprintf(path, sizeof(path), "%s/etc/null", root);
	have_dev = mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0;
	lnk("/etc/shadow", "etc/abs");                 /* the image's shadow */
	lnk("../../../../../../etc/shadow", "etc/up"); /* the same */
	lnk("../../secret", "etc/esc");                /* top/secret: no */
	lnk("/proc/self/root/etc/hostname", "etc/magic");
	lnk("loop2", "etc/loop1");
	lnk("loop1", "etc/loop2");
	lnk("/etc", "etcdir");
	lnk("fifo", "etc/tofifo");
	lnk("shadow", "etc/rel");
	return (rootfd = open(root, O_RDONLY | O_DIRECTORY)) < 0 ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

struct case_ {
	const char *path;
	enum mts_inroot_how how;
	int rc;           /* 0: read, else the -errno */
	const char *text; /* what was read */
};

static const struct case_ cases[] = {
	{ "etc/passwd", MTS_INROOT_CHROOT, 0, "image-passwd\n" },
	{ "/etc/passwd", MTS_INROOT_CHROOT, 0, "image-passwd\n" },
	{ "etc/abs", MTS_INROOT_CHROOT, 0, "image-shadow\n" },
	{ "etc/up", MTS_INROOT_CHROOT, 0, "image-shadow\n" },
	{ "etc/rel", MTS_INROOT_CHROOT, 0, "image-shadow\n" },
	{ "etcdir/passwd", MTS_INROOT_CHROOT, 0, "image-passwd\n" },
	{ "../../../secret", MTS_INROOT_CHROOT, -ENOENT, NULL },
	{ "../passwd", MTS_INROOT_CHROOT, 0,
	    "root:x:0:0:root:/root:/bin/sh\n" },
	{ "etc/esc", MTS_INROOT_CHROOT, -ENOENT, NULL },
	{ "etc/magic", MTS_INROOT_CHROOT, -ENOENT, NULL },
	{ "etc/loop1", MTS_INROOT_CHROOT, -ELOOP, NULL },
	{ "etc/fifo", MTS_INROOT_CHROOT, -EINVAL, NULL },
	{ "etc/tofifo", MTS_INROOT_CHROOT, -EINVAL, NULL },
	{ "etc", MTS_INROOT_CHROOT, -EINVAL, NULL },
	{ "etc/passwd/x", MTS_INROOT_CHROOT, -ENOTDIR, NULL },
	{ "", MTS_INROOT_CHROOT, -ENOENT, NULL },
	{ "etc/passwd", MTS_INROOT_NOLINKS, 0, "image-passwd\n" },
	{ "etc/./passwd", MTS_INROOT_NOLINKS, 0, "image-passwd\n" },
	{ "etc/../passwd", MTS_INROOT_NOLINKS, 0,
	    "root:x:0:0:root:/root:/bin/sh\n" },
	{ "etc/abs", MTS_INROOT_NOLINKS, -ELOOP, NULL },
	{ "etc/rel", MTS_INROOT_NOLINKS, -ELOOP, NULL },
	{ "etcdir/passwd", MTS_INROOT_NOLINKS, -ELOOP, NULL },
	{ "../secret", MTS_INROOT_NOLINKS, -EXDEV, NULL },
	{ "/etc/passwd", MTS_INROOT_NOLINKS, -EXDEV, NULL },
	{ "etc/fifo", MTS_INROOT_NOLINKS, -EINVAL, NULL },
};

/* Reads what the walk resolves, by the same checks mts_inroot_open makes
 * after resolving. */
static int
walk_read(const char *path, enum mts_inroot_how how, char *out, size_t outlen)
{
	char proc[64];
	struct stat sb;
	ssize_t n;
	int pfd = mts_inroot_walk(rootfd, path, how), fd;

	if (pfd < 0)
		return pfd;
	assert_int_equal(fstat(pfd, &sb), 0);
	if (!S_ISREG(sb.st_mode)) {
		close(pfd);
		return -EINVAL;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	assert_true((fd = open(proc, O_RDONLY)) >= 0);
	n = read(fd, out, outlen - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	close(pfd);
	return 0;
}

static void
test_cases(void **state)
{
	char walked[256], *buf;
	size_t i, len;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct case_ *c = &cases[i];
		rc = mts_inroot_read(rootfd, c->path, c->how, 4096, &buf, &len);
		if (rc != c->rc)
			fail_msg("case %zu %s: openat2 gave %d (%s), want %d",
			    i, c->path, rc, mts_inroot_strerror(rc), c->rc);
		if (c->text != NULL)
			assert_string_equal(buf, c->text);
		free(buf);
		rc = walk_read(c->path, c->how, walked, sizeof(walked));
		if (rc != c->rc)
			fail_msg("case %zu %s: the walk gave %d (%s), want %d",
			    i, c->path, rc, mts_inroot_strerror(rc), c->rc);
		if (c->text != NULL)
			assert_string_equal(walked, c->text);
	}
}

/* A FIFO nobody writes is refused at once (it used to hang the shim). */
static void
test_fifo_does_not_block(void **state)
{
	struct timespec a, b;
	char *buf;
	size_t len;

	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(mts_inroot_read(rootfd, "etc/fifo", MTS_INROOT_CHROOT,
	                     4096, &buf, &len),
	    -EINVAL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(b.tv_sec - a.tv_sec < 2);
	assert_null(buf);
}

static void
test_device_refused(void **state)
{
	char *buf;
	size_t len;

	if (!have_dev)
		skip();
	assert_int_equal(mts_inroot_read(rootfd, "etc/null", MTS_INROOT_CHROOT,
	                     4096, &buf, &len),
	    -EINVAL);
}

static void
test_size_bound(void **state)
{
	char *buf;
	size_t len;

	assert_int_equal(mts_inroot_read(rootfd, "etc/passwd",
	                     MTS_INROOT_CHROOT, 13, &buf, &len),
	    0);
	assert_int_equal(len, 13);
	free(buf);
	assert_int_equal(mts_inroot_read(rootfd, "etc/passwd",
	                     MTS_INROOT_CHROOT, 12, &buf, &len),
	    -EFBIG);
	assert_null(buf);
	assert_int_equal(mts_inroot_open(rootfd, "etc/loop1",
	                     MTS_INROOT_CHROOT),
	    -ELOOP);
	assert_string_equal(mts_inroot_strerror(-EINVAL), "not a regular file");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_fifo_does_not_block),
		cmocka_unit_test(test_device_refused),
		cmocka_unit_test(test_size_bound),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
