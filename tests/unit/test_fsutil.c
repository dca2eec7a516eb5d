/* test_fsutil.c: unit tests of common/fsutil.c — mkdir -p, the atomic file write, string vectors — on a scratch directory. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fsutil.h"
#include "xmalloc.h"

static char dir[64];

static int
setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/mts-fsutil.XXXXXX");
	umask(022);
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static mode_t
mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

static char *
slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void
test_mkdir_p(void **state)
{
	char *p = xasprintf("%s/a/b//c", dir), *q;

	assert_int_equal(mts_mkdir_p(p, 0700, 0751), 0);
	assert_int_equal(mode_of(p), 0700);
	q = xasprintf("%s/a", dir);
	assert_int_equal(mode_of(q), 0751);
	free(q);
	q = xasprintf("%s/a/b", dir);
	assert_int_equal(mode_of(q), 0751);
	/* Existing directories are fine and keep their modes. */
	assert_int_equal(mts_mkdir_p(p, 0755, 0755), 0);
	assert_int_equal(mode_of(p), 0700);
	free(q);
	/* A file in the way is an error, not a success. */
	q = xasprintf("%s/file", dir);
	assert_int_equal(mts_write_atomic(q, "x", 1, 0600, 0), 0);
	assert_int_equal(mts_mkdir_p(q, 0700, 0700), -ENOTDIR);
	free(q);
	q = xasprintf("%s/file/sub", dir);
	assert_int_equal(mts_mkdir_p(q, 0700, 0700), -ENOTDIR);
	assert_int_equal(errno, ENOTDIR);
	free(q);
	free(p);
}

static void
test_mkdir_p_too_long(void **state)
{
	char *p = xmalloc(PATH_MAX + 10);

	memset(p, 'a', PATH_MAX + 9);
	p[0] = '/';
	p[PATH_MAX + 9] = '\0';
	assert_int_equal(mts_mkdir_p(p, 0700, 0700), -ENAMETOOLONG);
	assert_int_equal(mts_write_atomic(p, "", 0, 0600, 1), -ENAMETOOLONG);
	free(p);
}

static void
test_write_atomic(void **state)
{
	char *p = xasprintf("%s/f", dir), *tmp = xasprintf("%s/f.tmp", dir);

	assert_int_equal(mts_write_atomic(p, "one\n", 4, 0640, 1), 0);
	assert_string_equal(slurp(p), "one\n");
	assert_int_equal(mode_of(p), 0640);
	assert_int_equal(access(tmp, F_OK), -1);
	/* Replaces the content whole; an empty write is a write. */
	assert_int_equal(mts_write_atomic(p, "second\n", 7, 0640, 0), 0);
	assert_string_equal(slurp(p), "second\n");
	assert_int_equal(mts_write_atomic(p, "", 0, 0640, 1), 0);
	assert_string_equal(slurp(p), "");
	assert_int_equal(access(tmp, F_OK), -1);
	free(p);
	free(tmp);
}

static void
test_write_atomic_failures(void **state)
{
	char *p = xasprintf("%s/keep", dir),
	     *tmp = xasprintf("%s/keep.tmp", dir);
	char *d = xasprintf("%s/adir", dir), *nodir = xasprintf("%s/no/f", dir);
	char *victim = xasprintf("%s/victim", dir);

	assert_int_equal(mts_write_atomic(victim, "victim", 6, 0600, 1), 0);
	/* A symlink planted at the tmp name is replaced, not followed. */
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(mts_write_atomic(p, "new", 3, 0600, 1), 0);
	assert_string_equal(slurp(p), "new");
	assert_string_equal(slurp(victim), "victim");
	assert_int_equal(mode_of(p), 0600);
	assert_int_equal(access(tmp, F_OK), -1);
	free(victim);
	/* Renaming over a directory fails: the tmp file goes, nothing else
	 * changes. */
	assert_int_equal(mts_mkdir_p(d, 0700, 0700), 0);
	assert_int_equal(mts_write_atomic(d, "x", 1, 0600, 1), -EISDIR);
	assert_int_equal(mode_of(d), 0700);
	free(tmp);
	tmp = xasprintf("%s.tmp", d);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(mts_write_atomic(nodir, "x", 1, 0600, 1), -ENOENT);
	assert_int_equal(errno, ENOENT);
	free(p);
	free(tmp);
	free(d);
	free(nodir);
}

static void
test_strv_free(void **state)
{
	char **v = xcalloc(3, sizeof(char *));

	mts_strv_free(NULL);
	v[0] = xstrdup("a");
	v[1] = xstrdup("b");
	mts_strv_free(v); /* the sanitizer build would report a leak */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mkdir_p),
		cmocka_unit_test(test_mkdir_p_too_long),
		cmocka_unit_test(test_write_atomic),
		cmocka_unit_test(test_write_atomic_failures),
		cmocka_unit_test(test_strv_free),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
