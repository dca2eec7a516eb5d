/* agent.c: the start-up every agent shares — arguments, environment, config, the seccomp filter from init, readiness. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "agent.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

#define MAX_FILTER (4096 * sizeof(struct sock_filter)) /* BPF_MAXINSNS */

static int sigsys_fd = -1;

static int
env_fd(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long fd;

	if (v == NULL || *v == '\0')
		return -1;
	fd = strtol(v, &end, 10);
	if (*end != '\0' || fd < 3 || fd > 1023 || fcntl(fd, F_GETFD) < 0) {
		fprintf(stderr, "%s=%s: not an open file descriptor\n", name,
		    v);
		exit(MTS_EXIT_USAGE);
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return (int)fd;
}

static const char *
env_str(const char *name, const char *def)
{
	const char *v = getenv(name);

	return (v != NULL && *v != '\0') ? v : def;
}

static void
read_env(struct mts_agent *a)
{
	a->node = env_str("MTS_NODE", NULL);
	a->node_id = env_str("MTS_NODE_ID", NULL);
	a->rundir = env_str("MTS_RUNDIR", NULL);
	a->statedir = env_str("MTS_STATEDIR", NULL);
	a->notify_fd = env_fd("MTS_NOTIFY_FD");
	a->seccomp_fd = env_fd("MTS_SECCOMP_FD");
	a->seccomp_debug = env_str("MTS_SECCOMP_DEBUG", "0")[0] == '1';
}

static void
usage(const char *prog, const char *extra)
{
	fprintf(stderr, "usage: %s [-dn] [-c CONFIG]%s%s\n", prog,
	    extra && *extra ? " [agent options: -" : "",
	    extra && *extra ? "see docs]" : "");
}

static void
parse_args(struct mts_agent *a, int argc, char **argv, const char *extra,
    mts_agent_opt_fn fn, void *arg, int *print)
{
	char opts[64];
	int c;

	snprintf(opts, sizeof(opts), "+c:ndh%s", extra ? extra : "");
	while ((c = getopt(argc, argv, opts)) != -1) {
		switch (c) {
		case 'c':
			a->config = optarg;
			break;
		case 'n':
			*print = 1;
			break;
		case 'd':
			a->debug = 1;
			break;
		case 'h':
			usage(argv[0], extra);
			exit(MTS_EXIT_OK);
		default:
			if (c != '?' && fn != NULL && fn(arg, c, optarg) == 0)
				break;
			usage(argv[0], extra);
			exit(MTS_EXIT_USAGE);
		}
	}
	a->argc = argc - optind;
	a->argv = argv + optind;
}

void
mts_agent_init(struct mts_agent *a, const char *default_name, int argc,
    char **argv, const char *extra, mts_agent_opt_fn fn, void *arg)
{
	char err[512];
	int print = 0;

	memset(a, 0, sizeof(*a));
	a->name = env_str("MTS_AGENT", default_name);
	a->config = env_str("MTS_CONFIG", MTS_DEFAULT_CONFIG);
	a->debug = getenv("MTS_DEBUG") && strcmp(getenv("MTS_DEBUG"), "1") == 0;
	parse_args(a, argc, argv, extra, fn, arg, &print);
	log_init(a->name, a->debug ? MTS_LOG_DEBUG : MTS_LOG_INFO);
	if (mts_cfg_load_agent(a->config, mts_conf_schema(), a->name, &a->cfg,
	        err, sizeof(err)) < 0) {
		log_warnx("%s", err);
		exit(MTS_EXIT_USAGE);
	}
	if (print) {
		mts_cfg_print(a->cfg, stdout);
		exit(MTS_EXIT_OK);
	}
	if (mts_cfg_bool(a->cfg, "node", "debug"))
		log_setlevel(MTS_LOG_DEBUG);
	read_env(a);
	if (a->node == NULL)
		a->node = mts_cfg_str(a->cfg, "node", "name");
	if (a->rundir == NULL)
		a->rundir = mts_cfg_str(a->cfg, "node", "rundir");
	if (a->statedir == NULL)
		a->statedir = mts_cfg_str(a->cfg, "node", "statedir");
}

void
mts_agent_env(struct mts_agent *a, const char *default_name)
{
	memset(a, 0, sizeof(*a));
	a->name = env_str("MTS_AGENT", default_name);
	a->config = env_str("MTS_CONFIG", MTS_DEFAULT_CONFIG);
	read_env(a);
}

/* Formats an unsigned number into p (async-signal-safe); returns the end. */
static char *
put_uint(char *p, unsigned long v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v > 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/* Debug mode: a denied syscall traps here. Reports "SIGSYS NR ARCH" to init
 * (which resolves the name) and to stderr, then dies of SIGSYS as the
 * non-debug filter would have killed it. */
static void
on_sigsys(int sig, siginfo_t *si, void *uc)
{
	char line[80], *p = line;
	static const char tag[] = "SIGSYS ";

	memcpy(p, tag, sizeof(tag) - 1);
	p = put_uint(p + sizeof(tag) - 1, (unsigned long)si->si_syscall);
	*p++ = ' ';
	p = put_uint(p, (unsigned long)si->si_arch);
	*p++ = '\n';
	if (sigsys_fd >= 0)
		(void)!write(sigsys_fd, line, p - line);
	(void)!write(STDERR_FILENO, "seccomp: denied syscall: ", 25);
	(void)!write(STDERR_FILENO, line + 7, p - line - 7);
	signal(SIGSYS, SIG_DFL);
	raise(SIGSYS);
}

/* Reads the whole filter from fd (at most MAX_FILTER bytes). */
static ssize_t
read_filter(int fd, struct sock_filter **out)
{
	uint8_t *buf = xmalloc(MAX_FILTER + 1);
	size_t len = 0;
	ssize_t r;

	while ((r = pread(fd, buf + len, MAX_FILTER + 1 - len, len)) > 0)
		len += r;
	if (r < 0 || len == 0 || len > MAX_FILTER ||
	    len % sizeof(struct sock_filter) != 0) {
		free(buf);
		return -1;
	}
	*out = (struct sock_filter *)buf;
	return (ssize_t)len;
}

int
mts_agent_sandbox(struct mts_agent *a)
{
	struct sock_filter *f = NULL;
	struct sock_fprog prog;
	struct sigaction sa;
	ssize_t len;
	int rc = -MTS_ERR_IO;

	if (a->seccomp_fd < 0)
		return 0;
	if ((len = read_filter(a->seccomp_fd, &f)) < 0) {
		log_warnx("MTS_SECCOMP_FD: not a seccomp filter program");
		goto out;
	}
	if (a->seccomp_debug) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_sigsys;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigsys_fd = a->notify_fd;
		if (sigaction(SIGSYS, &sa, NULL) < 0) {
			log_warn("sigaction SIGSYS");
			goto out;
		}
	}
	prog.len = len / sizeof(struct sock_filter);
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		log_warn("no_new_privs");
		goto out;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	        SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
		log_warn("installing the seccomp filter");
		goto out;
	}
	log_debug("seccomp filter installed (%u instructions%s)", prog.len,
	    a->seccomp_debug ? ", debug mode" : "");
	rc = 0;
out:
	free(f);
	close(a->seccomp_fd);
	a->seccomp_fd = -1;
	return rc;
}

void
mts_agent_ready(struct mts_agent *a)
{
	static const char msg[] = "READY\n";

	if (a->notify_fd < 0)
		return;
	if (write(a->notify_fd, msg, sizeof(msg) - 1) != sizeof(msg) - 1)
		log_warn("telling init we are ready");
}

void
mts_agent_status(struct mts_agent *a, const char *fmt, ...)
{
	char line[8 + MTS_AGENT_STATUS_MAX + 2];
	va_list ap;
	size_t i, n;

	if (a->notify_fd < 0)
		return;
	memcpy(line, "STATUS ", 7);
	va_start(ap, fmt);
	vsnprintf(line + 7, MTS_AGENT_STATUS_MAX + 1, fmt, ap);
	va_end(ap);
	n = strlen(line);
	for (i = 7; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	if (write(a->notify_fd, line, n) != (ssize_t)n)
		log_warn("telling init our status");
}

int
mts_agent_node_key(uint8_t key[32])
{
	const char *v = getenv("MTS_NODE_KEY_FD");
	char *end;
	ssize_t r;
	long fd;

	if (v == NULL || *v == '\0')
		return -MTS_ERR_NOTFOUND;
	fd = strtol(v, &end, 10);
	if (*end != '\0' || fd < 3 || fd > 1023)
		return -MTS_ERR_IO;
	r = pread((int)fd, key, 32, 0);
	close((int)fd);
	unsetenv("MTS_NODE_KEY_FD");
	return r == 32 ? 0 : -MTS_ERR_IO;
}

void
mts_agent_free(struct mts_agent *a)
{
	if (a == NULL)
		return;
	mts_cfg_free(a->cfg);
	a->cfg = NULL;
	if (a->notify_fd >= 0)
		close(a->notify_fd);
	a->notify_fd = -1;
}
