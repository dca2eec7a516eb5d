/* test_shim_policy.c: config/seccomp/shim.policy parses, is a deny-list, and its compiled filter refuses what it lists (EPERM) while allowing what the shim and runc need. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "seccomp_policy.h"

#ifndef POLICY
#define POLICY "config/seccomp/shim.policy"
#endif

static void
test_parses(void **st)
{
	struct mts_seccomp_policy *p;
	char err[256];

	if (mts_seccomp_load(POLICY, &p, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_true(mts_seccomp_nrules(p) >= 20);
	mts_seccomp_free(p);
}

/* In a child under the filter: exit 0 when kexec_load, ptrace,
 * init_module, kcmp and userfaultfd fail with EPERM while getpid,
 * unshare(0), setns, keyctl and pivot_root reach the kernel. */
static int
child_checks(void)
{
	if (syscall(SYS_kexec_load, 0, 0, 0, 0) != -1 || errno != EPERM)
		return 2;
	if (syscall(SYS_ptrace, 0, 0, 0, 0) != -1 || errno != EPERM)
		return 3;
	if (syscall(SYS_init_module, 0, 0, "") != -1 || errno != EPERM)
		return 4;
	if (syscall(SYS_getpid) <= 0)
		return 5;
	/* The runtime's namespace calls are not denied (unshare(0) is a
	 * no-op that any filter denying unshare would refuse). */
	if (syscall(SYS_unshare, 0) != 0)
		return 6;
	/* What a container could otherwise do to itself is denied too. */
	if (syscall(SYS_kcmp, getpid(), getpid(), 0, 0, 0) != -1 ||
	    errno != EPERM)
		return 7;
	if (syscall(SYS_userfaultfd, 1) != -1 || errno != EPERM)
		return 8;
	/* runc joins namespaces, makes a session keyring and pivots into
	 * the root file system: reaching the kernel (EBADF, EFAULT) shows
	 * the filter let them through. */
	if (syscall(SYS_setns, -1, 0) != -1 || errno != EBADF)
		return 9;
	if (syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3 /* session */, 0) <
	    0)
		return 10;
	if (geteuid() == 0 &&
	    (syscall(SYS_pivot_root, NULL, NULL) != -1 || errno == EPERM))
		return 11;
	return 0;
}

static void
test_filter(void **st)
{
	struct mts_seccomp_policy *p;
	struct sock_fprog prog;
	char err[256], buf[65536];
	ssize_t len;
	int fd, status;
	pid_t pid;

	assert_int_equal(mts_seccomp_load(POLICY, &p, err, sizeof(err)), 0);
	fd = memfd_create("shim", 0);
	assert_true(fd >= 0);
	assert_int_equal(mts_seccomp_export(p, 0, fd, err, sizeof(err)), 0);
	mts_seccomp_free(p);
	len = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	assert_true(len > 0 && len % sizeof(struct sock_filter) == 0);
	prog.len = len / sizeof(struct sock_filter);
	prog.filter = (struct sock_filter *)buf;
	pid = fork();
	if (pid == 0) {
		signal(SIGSYS, SIG_DFL);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			syscall(SYS_exit_group, 1);
		syscall(SYS_exit_group, child_checks());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child status %#x", status);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parses),
		cmocka_unit_test(test_filter),
	};

	if (chdir(TOP) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
