/* seccomp_policy.c: policy files parsed with line numbers, compiled to BPF with libseccomp (architecture checked, default kill, debug trap). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <seccomp.h>

#include "mtserr.h"
#include "seccomp_policy.h"
#include "xmalloc.h"

#define MAX_POLICY (256 << 10)
#define MAX_CONDS 6

struct rule {
	int nr;
	int line;
	int err; /* "=> errno E": fail with E instead of the mode's action */
	unsigned ncond;
	struct scmp_arg_cmp cond[MAX_CONDS];
};

struct mts_seccomp_policy {
	char *file;
	int default_allow;
	struct rule *r;
	size_t n;
};

struct konst {
	const char *name;
	uint64_t v;
};

static const struct konst konsts[] = {
	{ "AF_UNIX", AF_UNIX },
	{ "AF_LOCAL", AF_LOCAL },
	{ "AF_INET", AF_INET },
	{ "AF_INET6", AF_INET6 },
	{ "AF_NETLINK", AF_NETLINK },
	{ "AF_PACKET", AF_PACKET },
	{ "PROT_READ", PROT_READ },
	{ "PROT_WRITE", PROT_WRITE },
	{ "PROT_EXEC", PROT_EXEC },
	{ "O_RDONLY", O_RDONLY },
	{ "O_WRONLY", O_WRONLY },
	{ "O_RDWR", O_RDWR },
	{ "O_CREAT", O_CREAT },
	{ "SOCK_STREAM", SOCK_STREAM },
	{ "SOCK_DGRAM", SOCK_DGRAM },
	{ NULL, 0 },
};

static const struct konst errnos[] = {
	{ "ENOSYS", ENOSYS },
	{ "EPERM", EPERM },
	{ "EACCES", EACCES },
	{ "EINVAL", EINVAL },
	{ "EAFNOSUPPORT", EAFNOSUPPORT },
	{ NULL, 0 },
};

static const struct {
	const char *op;
	enum scmp_compare cmp;
} ops[] = {
	{ "==", SCMP_CMP_EQ },
	{ "!=", SCMP_CMP_NE },
	{ "<=", SCMP_CMP_LE },
	{ ">=", SCMP_CMP_GE },
	{ "<", SCMP_CMP_LT },
	{ ">", SCMP_CMP_GT },
};

static int
parse_value(const char *s, uint64_t *v)
{
	const struct konst *k;
	char *end;

	for (k = konsts; k->name != NULL; k++)
		if (strcmp(k->name, s) == 0) {
			*v = k->v;
			return 0;
		}
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno != 0 || end == s || *end != '\0') ? -1 : 0;
}

static int
parse_arg(const char *s)
{
	if (strncmp(s, "arg", 3) != 0 || s[3] < '0' || s[3] > '5' ||
	    s[4] != '\0')
		return -1;
	return s[3] - '0';
}

/* Parses the condition starting at tok[*i]; advances *i past it. */
static int
parse_cond(char **tok, size_t ntok, size_t *i, struct scmp_arg_cmp *c,
    const char **why)
{
	uint64_t mask, v;
	size_t k;
	int a;

	*why = "expected argN OP VALUE";
	if (*i + 3 > ntok || (a = parse_arg(tok[*i])) < 0)
		return -1;
	c->arg = a;
	if (strcmp(tok[*i + 1], "&") == 0) {
		*why = "expected argN & MASK == VALUE";
		if (*i + 5 > ntok || parse_value(tok[*i + 2], &mask) < 0 ||
		    strcmp(tok[*i + 3], "==") != 0 ||
		    parse_value(tok[*i + 4], &v) < 0)
			return -1;
		c->op = SCMP_CMP_MASKED_EQ;
		c->datum_a = mask;
		c->datum_b = v;
		*i += 5;
		return 0;
	}
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (strcmp(tok[*i + 1], ops[k].op) == 0)
			break;
	if (k == sizeof(ops) / sizeof(ops[0])) {
		*why = "unknown operator (== != < <= > >= &)";
		return -1;
	}
	if (parse_value(tok[*i + 2], &v) < 0) {
		*why = "bad value (a number or a known constant)";
		return -1;
	}
	c->op = ops[k].cmp;
	c->datum_a = v;
	c->datum_b = 0;
	*i += 3;
	return 0;
}

/* "errno NAME" of a "=> errno NAME" action. */
static int
parse_errno(const char *kw, const char *v, int *out)
{
	const struct konst *k;
	char *end;
	long n;

	if (strcmp(kw, "errno") != 0)
		return -1;
	for (k = errnos; k->name != NULL; k++)
		if (strcmp(k->name, v) == 0) {
			*out = (int)k->v;
			return 0;
		}
	n = strtol(v, &end, 10);
	if (*end != '\0' || end == v || n <= 0 || n > 4095)
		return -1;
	*out = (int)n;
	return 0;
}

/* Splits a line in place into whitespace-separated tokens (at most max). */
static size_t
split(char *line, char **tok, size_t max)
{
	size_t n = 0;
	char *save, *t;

	for (t = strtok_r(line, " \t\r", &save); t != NULL && n < max;
	     t = strtok_r(NULL, " \t\r", &save))
		tok[n++] = t;
	return n;
}

static int
parse_line(struct mts_seccomp_policy *p, char *line, int lineno, char *err,
    size_t errlen)
{
	char *tok[4 + MAX_CONDS * 5], *hash = strchr(line, '#');
	size_t ntok, i = 1, k;
	const char *why;
	struct rule r;
	int nr;

	if (hash != NULL)
		*hash = '\0';
	ntok = split(line, tok, sizeof(tok) / sizeof(tok[0]));
	if (ntok == 0)
		return 0;
	if (strcmp(tok[0], "default") == 0) {
		if (ntok != 2 ||
		    (strcmp(tok[1], "kill") != 0 &&
		        strcmp(tok[1], "allow") != 0)) {
			snprintf(err, errlen,
			    "%s:%d: expected 'default kill' "
			    "or 'default allow'",
			    p->file, lineno);
			return -MTS_ERR_INVAL;
		}
		p->default_allow = strcmp(tok[1], "allow") == 0;
		return 0;
	}
	nr = seccomp_syscall_resolve_name(tok[0]);
	if (nr == __NR_SCMP_ERROR) {
		snprintf(err, errlen, "%s:%d: unknown syscall '%s'", p->file,
		    lineno, tok[0]);
		return -MTS_ERR_INVAL;
	}
	memset(&r, 0, sizeof(r));
	r.nr = nr;
	r.line = lineno;
	r.err = -1;
	for (k = 1; k < ntok && strcmp(tok[k], "=>") != 0; k++)
		;
	if (k < ntok) {
		if (k + 3 != ntok ||
		    parse_errno(tok[ntok - 2], tok[ntok - 1], &r.err) < 0) {
			snprintf(err, errlen,
			    "%s:%d: %s: expected '=> errno "
			    "NAME' (ENOSYS EPERM EACCES EINVAL EAFNOSUPPORT or "
			    "a number)",
			    p->file, lineno, tok[0]);
			return -MTS_ERR_INVAL;
		}
		ntok -= 3;
	}
	while (i < ntok) {
		if (r.ncond == MAX_CONDS ||
		    parse_cond(tok, ntok, &i, &r.cond[r.ncond], &why) < 0) {
			snprintf(err, errlen, "%s:%d: %s: %s", p->file, lineno,
			    tok[0],
			    r.ncond == MAX_CONDS ? "too many conditions" : why);
			return -MTS_ERR_INVAL;
		}
		for (k = 0; k < r.ncond; k++)
			if (r.cond[k].arg == r.cond[r.ncond].arg) {
				snprintf(err, errlen,
				    "%s:%d: %s: arg%u tested "
				    "twice in one rule (write two lines for "
				    "\"either\")",
				    p->file, lineno, tok[0], r.cond[k].arg);
				return -MTS_ERR_INVAL;
			}
		r.ncond++;
	}
	p->r = xreallocarray(p->r, p->n + 1, sizeof(*p->r));
	p->r[p->n++] = r;
	return 0;
}

int
mts_seccomp_parse(const char *text, const char *file,
    struct mts_seccomp_policy **out, char *err, size_t errlen)
{
	struct mts_seccomp_policy *p = xcalloc(1, sizeof(*p));
	const char *s = text, *nl;
	int lineno = 1, rc = 0;
	char *line;

	p->file = xstrdup(file ? file : "<policy>");
	for (; *s != '\0' && rc == 0; lineno++) {
		nl = strchr(s, '\n');
		line = nl ? xasprintf("%.*s", (int)(nl - s), s) : xstrdup(s);
		rc = parse_line(p, line, lineno, err, errlen);
		free(line);
		if (nl == NULL)
			break;
		s = nl + 1;
	}
	if (rc < 0) {
		mts_seccomp_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int
mts_seccomp_load(const char *path, struct mts_seccomp_policy **out, char *err,
    size_t errlen)
{
	char *text = xmalloc(MAX_POLICY + 1);
	size_t len = 0;
	ssize_t r;
	int fd, rc = -MTS_ERR_IO;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(text);
		return rc;
	}
	while ((r = read(fd, text + len, MAX_POLICY + 1 - len)) > 0)
		len += r;
	close(fd);
	if (r < 0 || len > MAX_POLICY || memchr(text, '\0', len) != NULL) {
		snprintf(err, errlen, "%s: %s", path,
		    r < 0 ? strerror(errno)
		          : "not a policy (too large or binary)");
		goto out;
	}
	text[len] = '\0';
	rc = mts_seccomp_parse(text, path, out, err, errlen);
out:
	free(text);
	return rc;
}

void
mts_seccomp_free(struct mts_seccomp_policy *p)
{
	if (p == NULL)
		return;
	free(p->file);
	free(p->r);
	free(p);
}

size_t
mts_seccomp_nrules(const struct mts_seccomp_policy *p)
{
	return p->n;
}

/* What the SIGSYS reporting handler of common/agent.c calls. */
static const char *const debug_syscalls[] = { "rt_sigreturn", "rt_sigaction",
	"rt_sigprocmask", "write", "getpid", "gettid", "tgkill", NULL };

int
mts_seccomp_export(const struct mts_seccomp_policy *p, int debug, int fd,
    char *err, size_t errlen)
{
	uint32_t deny = debug ? SCMP_ACT_TRAP : SCMP_ACT_KILL_PROCESS;
	uint32_t def = p->default_allow ? SCMP_ACT_ALLOW : deny;
	uint32_t act = p->default_allow ? deny : SCMP_ACT_ALLOW;
	scmp_filter_ctx ctx;
	size_t i;
	int r = 0;

	if ((ctx = seccomp_init(def)) == NULL) {
		snprintf(err, errlen, "%s: seccomp_init failed", p->file);
		return -MTS_ERR_IO;
	}
	/* Another architecture's syscall numbers mean something else. */
	seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	for (i = 0; i < p->n && r == 0; i++) {
		r = seccomp_rule_add_array(ctx,
		    p->r[i].err >= 0 ? SCMP_ACT_ERRNO(p->r[i].err) : act,
		    p->r[i].nr, p->r[i].ncond, p->r[i].cond);
		if (r < 0)
			snprintf(err, errlen,
			    "%s:%d: rule rejected by "
			    "libseccomp: %s",
			    p->file, p->r[i].line, strerror(-r));
	}
	for (i = 0; debug && !p->default_allow && debug_syscalls[i] && r == 0;
	     i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW,
		    seccomp_syscall_resolve_name(debug_syscalls[i]), 0);
	if (r == 0 && (r = seccomp_export_bpf(ctx, fd)) < 0)
		snprintf(err, errlen, "%s: exporting the filter: %s", p->file,
		    strerror(-r));
	seccomp_release(ctx);
	return r < 0 ? -MTS_ERR_INVAL : 0;
}

void
mts_seccomp_syscall_name(uint32_t arch, int nr, char *out, size_t outlen)
{
	char *name = seccomp_syscall_resolve_num_arch(arch, nr);

	if (name != NULL)
		snprintf(out, outlen, "%s", name);
	else
		snprintf(out, outlen, "nr %d", nr);
	free(name);
}
