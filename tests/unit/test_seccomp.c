/* test_seccomp.c: seccomp policy parsing (errors with file and line) and the compiled filter's real effect in a child process. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "seccomp_policy.h"

static const struct {
	const char *text;
	const char *err; /* expected substring, NULL: parses */
} cases[] = {
	{ "read\nwrite\n", NULL },
	{ "# comment only\n\n   \n", NULL },
	{ "read # trailing comment\n", NULL },
	{ "socket arg0 == AF_UNIX\n", NULL },
	{ "mmap arg2 & PROT_EXEC == 0\n", NULL },
	{ "default allow\nptrace\n", NULL },
	{ "clone3 => errno ENOSYS\n", NULL },
	{ "socket arg0 == AF_INET => errno 97\n", NULL },
	{ "clone3 => errno EWHAT\n", "p.policy:1: clone3: expected '=> errno" },
	{ "clone3 => kill\n", "p.policy:1: clone3: expected '=> errno" },
	{ "ioctl arg1 == 1 arg1 == 2\n",
	    "p.policy:1: ioctl: arg1 tested twice" },
	{ "read\nbogus_call\n", "p.policy:2: unknown syscall 'bogus_call'" },
	{ "socket arg9 == 1\n", "p.policy:1: socket: expected argN OP VALUE" },
	{ "socket arg0 ~ 1\n", "p.policy:1: socket: unknown operator" },
	{ "socket arg0 == AF_NOPE\n", "p.policy:1: socket: bad value" },
	{ "default maybe\n", "p.policy:1: expected 'default kill'" },
	{ "read\n\n\nmmap arg2 &\n", "p.policy:4: mmap: expected argN" },
};

static void
test_parse_table(void **state)
{
	struct mts_seccomp_policy *p;
	char err[256];
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		p = NULL;
		r = mts_seccomp_parse(cases[i].text, "p.policy", &p, err,
		    sizeof(err));
		if (cases[i].err == NULL) {
			if (r != 0)
				fail_msg("case %zu: %s", i, err);
			assert_non_null(p);
		} else {
			assert_true(r < 0);
			assert_null(p);
			if (strstr(err, cases[i].err) == NULL)
				fail_msg("case %zu: got '%s', want '%s'", i,
				    err, cases[i].err);
		}
		mts_seccomp_free(p);
	}
}

/* Compiles text, installs it in a child that then calls socket(family);
 * returns the child's wait status. */
static int
run_child(const char *text, int debug, int family)
{
	struct mts_seccomp_policy *p;
	struct sock_fprog prog;
	char err[256], buf[65536];
	int fd, status;
	ssize_t len;
	pid_t pid;

	assert_int_equal(mts_seccomp_parse(text, "t", &p, err, sizeof(err)), 0);
	fd = memfd_create("t", 0);
	assert_true(fd >= 0);
	assert_int_equal(mts_seccomp_export(p, debug, fd, err, sizeof(err)), 0);
	mts_seccomp_free(p);
	len = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	assert_true(len > 0 && len % sizeof(struct sock_filter) == 0);
	prog.len = len / sizeof(struct sock_filter);
	prog.filter = (struct sock_filter *)buf;
	pid = fork();
	if (pid == 0) {
		signal(SIGSYS, SIG_DFL); /* not cmocka's handler */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			syscall(SYS_exit_group, 3);
		/* Raw syscalls: sanitizer interceptors make calls of their own. */
		fd = (int)syscall(SYS_socket, family, SOCK_STREAM, 0);
		syscall(SYS_exit_group, fd >= 0 ? 0 : 4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static const char base[] = "exit_group\nexit\nrt_sigreturn\n"
                           "socket arg0 == AF_UNIX\n";

static void
test_filter_allows_and_kills(void **state)
{
	int st;

	st = run_child(base, 0, AF_UNIX);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = run_child(base, 0, AF_INET);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	/* Debug mode traps: with no handler the child dies of SIGSYS too. */
	st = run_child(base, 1, AF_INET);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
}

static void
test_default_allow(void **state)
{
	int st;

	st = run_child("default allow\nsocket arg0 == AF_INET\n", 0, AF_UNIX);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = run_child("default allow\nsocket arg0 == AF_INET\n", 0, AF_INET);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
}

static void
test_errno_action(void **state)
{
	int st;

	/* socket(AF_INET) fails with EAFNOSUPPORT: the child exits 4. */
	st = run_child("exit_group\nsocket arg0 == AF_UNIX\n"
	               "socket arg0 == AF_INET => errno EAFNOSUPPORT\n",
	    0, AF_INET);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 4);
}

/* Installs the compiled policy file in a child which then makes one call:
 * 0 socket(AF_UNIX), 1 socket(AF_INET), 2 socket(AF_INET6), 3 execve,
 * 4 a fork (clone without CLONE_THREAD), 5 ptrace, 6 prctl(PR_SET_NAME)
 * as every nng thread does when it starts, 7 prctl(PR_GET_DUMPABLE).
 * Returns the status. */
static int
run_policy_file(const char *path, int what)
{
	static char *const argv[] = { "x", NULL };
	struct mts_seccomp_policy *p;
	struct sock_fprog prog;
	char err[256], buf[65536];
	ssize_t len;
	int fd, status;
	pid_t pid;

	if (mts_seccomp_load(path, &p, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	fd = memfd_create("t", 0);
	assert_int_equal(mts_seccomp_export(p, 0, fd, err, sizeof(err)), 0);
	mts_seccomp_free(p);
	len = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	prog.len = len / sizeof(struct sock_filter);
	prog.filter = (struct sock_filter *)buf;
	pid = fork();
	if (pid == 0) {
		signal(SIGSYS, SIG_DFL);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			syscall(SYS_exit_group, 3);
		if (what == 0)
			syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
		else if (what == 1)
			syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
		else if (what == 2)
			syscall(SYS_socket, AF_INET6, SOCK_DGRAM, 0);
		else if (what == 3)
			syscall(SYS_execve, "/nonexistent/x", argv, NULL);
		else if (what == 4)
			syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
		else if (what == 5)
			syscall(SYS_ptrace, 0, 0, NULL, NULL);
		else if (what == 6)
			syscall(SYS_prctl, PR_SET_NAME, "nng:task", 0, 0, 0);
		else
			syscall(SYS_prctl, PR_GET_DUMPABLE, 0, 0, 0, 0);
		syscall(SYS_exit_group, 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

/* The statestore's policy: Unix sockets yes; network, exec, new processes
 * and ptrace no. Run from the repository's top directory (make test). */
static void
test_statestore_policy_strict(void **state)
{
	const char *path = "config/seccomp/statestore.policy";
	int st, what;

	if (access(path, R_OK) < 0)
		skip();
	st = run_policy_file(path, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (what = 1; what <= 5; what++) {
		st = run_policy_file(path, what);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
			fail_msg("call %d was not killed (status %#x)", what,
			    st);
	}
}

/* schedd's policy: Unix sockets only, like the statestore's; network,
 * exec, new processes and ptrace killed. */
static void
test_schedd_policy_strict(void **state)
{
	const char *path = "config/seccomp/schedd.policy";
	int st, what;

	if (access(path, R_OK) < 0)
		skip();
	st = run_policy_file(path, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = run_policy_file(path, 6);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (what = 1; what <= 5; what++) {
		st = run_policy_file(path, what);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
			fail_msg("call %d was not killed (status %#x)", what,
			    st);
	}
}

/* gossipd's policy: TCP and Unix sockets, a thread naming itself (nng's
 * threads do it when they first run, possibly after the filter is on);
 * any other prctl, exec and new processes are killed. */
static void
test_gossipd_policy(void **state)
{
	const char *path = "config/seccomp/gossipd.policy";
	static const int allowed[] = { 0, 1, 6 }, killed[] = { 3, 4, 5, 7 };
	size_t i;
	int st;

	if (access(path, R_OK) < 0)
		skip();
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		st = run_policy_file(path, allowed[i]);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail_msg("call %d was refused (status %#x)", allowed[i],
			    st);
	}
	for (i = 0; i < sizeof(killed) / sizeof(killed[0]); i++) {
		st = run_policy_file(path, killed[i]);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
			fail_msg("call %d was not killed (status %#x)",
			    killed[i], st);
	}
}

static void
test_syscall_name(void **state)
{
#ifdef __x86_64__
	char name[64];

	mts_seccomp_syscall_name(AUDIT_ARCH_X86_64, 101, name, sizeof(name));
	assert_string_equal(name, "ptrace");
	mts_seccomp_syscall_name(AUDIT_ARCH_X86_64, 99999, name, sizeof(name));
	assert_string_equal(name, "nr 99999");
#else
	skip();
#endif
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_filter_allows_and_kills),
		cmocka_unit_test(test_default_allow),
		cmocka_unit_test(test_gossipd_policy),
		cmocka_unit_test(test_errno_action),
		cmocka_unit_test(test_statestore_policy_strict),
		cmocka_unit_test(test_schedd_policy_strict),
		cmocka_unit_test(test_syscall_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
