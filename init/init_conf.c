/* init_conf.c: builds mts-init's configuration from mts.conf — paths, users, groups, capabilities, dependencies, seccomp filters — checking everything first. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/capability.h>

#include "init_conf.h"
#include "log.h"
#include "mtserr.h"
#include "privdrop.h"
#include "seccomp_policy.h"
#include "xmalloc.h"

const struct mts_acl_rule mts_init_admin_acl[] = {
	{ MTS_CALLER_ADMIN, MTS_ACL_SELF, NULL },
	{ MTS_CALLER_ADMIN, MTS_ACL_GROUP, "admin_group" },
	{ 0, 0, NULL },
};

struct build {
	const struct mts_cfg *cfg;
	char *dir; /* directory of the config file */
	char *err;
	size_t errlen;
};

static int fail(struct build *b, const char *sec, const char *key,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Reports "FILE:LINE: [sec] key: what"; the line is the key's, or the
 * section header's when the key is missing. */
static int
fail(struct build *b, const char *sec, const char *key, const char *fmt, ...)
{
	char what[512];
	int line = key ? mts_cfg_line(b->cfg, sec, key) : 0;
	va_list ap;

	if (line == 0) {
		FILE *f = fopen(b->cfg->file, "r");
		char buf[512], hdr[128];
		int n = 0;

		snprintf(hdr, sizeof(hdr), "[%s]", sec);
		while (f != NULL && fgets(buf, sizeof(buf), f) != NULL) {
			n++;
			if (strstr(buf, hdr) != NULL) {
				line = n;
				break;
			}
		}
		if (f != NULL)
			fclose(f);
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(b->err, b->errlen, "%s:%d: [%s] %s%s%s", b->cfg->file, line,
	    sec, key ? key : "", key ? ": " : "", what);
	return -MTS_ERR_INVAL;
}

static char *
resolve_path(struct build *b, const char *p)
{
	return p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", b->dir, p);
}

static int
parse_id(const char *s, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return (errno || *end || *v >= (unsigned long)(uid_t)-1) ? -1 : 0;
}

static int
lookup_group(const char *s, gid_t *gid)
{
	struct group *gr;
	unsigned long v;

	if (parse_id(s, &v) == 0) {
		*gid = (gid_t)v;
		return 0;
	}
	if ((gr = getgrnam(s)) == NULL)
		return -1;
	*gid = gr->gr_gid;
	return 0;
}

static int
build_ids(struct build *b, struct init_agent *a, gid_t admin_gid)
{
	const char *sec = a->name, *g = mts_cfg_str(b->cfg, sec, "group");
	char **groups = mts_cfg_list(b->cfg, sec, "groups");
	struct passwd *pw;
	unsigned long v;
	size_t i;
	int rc = 0;

	a->user = xstrdup(mts_cfg_str(b->cfg, sec, "user") ?: "");
	if (*a->user == '\0')
		rc = fail(b, sec, NULL,
		    "no user (agents never run as "
		    "mts-init's user by accident: set user = root if meant)");
	else if (parse_id(a->user, &v) == 0)
		a->uid = (uid_t)v, a->gid = (gid_t)v;
	else if ((pw = getpwnam(a->user)) != NULL)
		a->uid = pw->pw_uid, a->gid = pw->pw_gid;
	else
		rc = fail(b, sec, "user", "no such user '%s'", a->user);
	if (rc == 0 && g != NULL && lookup_group(g, &a->gid) < 0)
		rc = fail(b, sec, "group", "no such group '%s'", g);
	a->groups = xcalloc(1, sizeof(gid_t));
	a->groups[a->ngroups++] = admin_gid;
	for (i = 0; rc == 0 && groups[i] != NULL; i++) {
		a->groups =
		    xreallocarray(a->groups, a->ngroups + 1, sizeof(gid_t));
		if (lookup_group(groups[i], &a->groups[a->ngroups++]) < 0)
			rc = fail(b, sec, "groups", "no such group '%s'",
			    groups[i]);
	}
	mts_cfg_list_free(groups);
	return rc;
}

static int
build_caps(struct build *b, struct init_agent *a)
{
	char **caps = mts_cfg_list(b->cfg, a->name, "capabilities");
	size_t i, len = 0;
	int c, rc = 0;

	a->caps_text = xstrdup("");
	for (i = 0; rc == 0 && caps[i] != NULL; i++) {
		char *t;

		if (strcmp(caps[i], "all") == 0) {
			/* All that init itself may hold: a capability outside
			 * its bounding set (a host that withholds one) cannot
			 * be granted, and asking would fail the drop. */
			for (c = 0; c < 64 && CAP_IS_SUPPORTED(c); c++)
				if (cap_get_bound(c) == 1)
					a->caps |= 1ull << c;
		} else if ((c = mts_cap_from_name(caps[i])) < 0) {
			rc = fail(b, a->name, "capabilities",
			    "unknown capability '%s'", caps[i]);
			break;
		} else {
			a->caps |= 1ull << c;
		}
		t = xasprintf("%s%s%s", a->caps_text, len ? "," : "", caps[i]);
		free(a->caps_text);
		a->caps_text = t;
		len++;
	}
	mts_cfg_list_free(caps);
	return rc;
}

static int
build_filter(struct build *b, struct init_agent *a)
{
	const char *p = mts_cfg_str(b->cfg, a->name, "seccomp");
	struct mts_seccomp_policy *pol = NULL;
	char err[512];
	int rc;

	a->filter_fd = -1;
	a->seccomp_debug = mts_cfg_bool(b->cfg, a->name, "seccomp_debug");
	if (p == NULL || *p == '\0')
		return 0;
	a->seccomp = resolve_path(b, p);
	if (mts_seccomp_load(a->seccomp, &pol, err, sizeof(err)) < 0)
		return fail(b, a->name, "seccomp", "%s", err);
	a->filter_fd =
	    memfd_create("mts-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (a->filter_fd < 0) {
		mts_seccomp_free(pol);
		return fail(b, a->name, "seccomp", "memfd: %s",
		    strerror(errno));
	}
	rc = mts_seccomp_export(pol, a->seccomp_debug, a->filter_fd, err,
	    sizeof(err));
	mts_seccomp_free(pol);
	if (rc < 0)
		return fail(b, a->name, "seccomp", "%s", err);
	(void)fcntl(a->filter_fd, F_ADD_SEALS,
	    F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	return 0;
}

static int
build_exec(struct build *b, struct init_agent *a)
{
	const char *e = mts_cfg_str(b->cfg, a->name, "executable");
	struct stat st;

	if (e == NULL || *e == '\0')
		return fail(b, a->name, NULL, "no executable");
	a->exec = resolve_path(b, e);
	if (stat(a->exec, &st) < 0)
		return fail(b, a->name, "executable", "%s: %s", a->exec,
		    strerror(errno));
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111))
		return fail(b, a->name, "executable",
		    "%s: not an executable file", a->exec);
	a->args = mts_cfg_list(b->cfg, a->name, "args");
	return 0;
}

/* The most open files the kernel lets a process have (fs.nr_open): a larger
 * RLIMIT_NOFILE fails at the agent's start, so it is refused here. */
static uint64_t
nofile_max(void)
{
	unsigned long long v = 1048576; /* the kernel's default */
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");

	if (f != NULL) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 1048576;
		fclose(f);
	}
	return v;
}

static int
build_params(struct build *b, struct init_agent *a)
{
	const char *r = mts_cfg_str(b->cfg, a->name, "restart");
	const char *s = a->name;
	const char *v;

	if (strcmp(r, "always") == 0)
		a->p.restart = SUP_RESTART_ALWAYS;
	else if (strcmp(r, "on-failure") == 0)
		a->p.restart = SUP_RESTART_ON_FAILURE;
	else if (strcmp(r, "never") == 0)
		a->p.restart = SUP_RESTART_NEVER;
	else
		return fail(b, s, "restart",
		    "'%s': expected always, "
		    "on-failure or never",
		    r);
	a->p.backoff_min_ms = mts_cfg_int(b->cfg, s, "restart_delay");
	a->p.backoff_max_ms = mts_cfg_int(b->cfg, s, "restart_max_delay");
	a->p.stable_ms = mts_cfg_int(b->cfg, s, "restart_reset");
	a->p.ready_timeout_ms = mts_cfg_int(b->cfg, s, "ready_timeout");
	a->p.grace_ms = mts_cfg_int(b->cfg, s, "stop_timeout");
	if (a->p.backoff_min_ms <= 0 ||
	    a->p.backoff_max_ms < a->p.backoff_min_ms)
		return fail(b, s, "restart_max_delay",
		    "must be at least restart_delay (> 0)");
	a->nofile = (uint64_t)mts_cfg_int(b->cfg, s, "limit_nofile");
	if (a->nofile < 16 || a->nofile > nofile_max())
		return fail(b, s, "limit_nofile",
		    "%llu is out of range (16 to "
		    "%llu, this kernel's fs.nr_open)",
		    (unsigned long long)a->nofile,
		    (unsigned long long)nofile_max());
	v = mts_cfg_str(b->cfg, s, "chroot");
	a->chroot = (v && *v) ? resolve_path(b, v) : NULL;
	v = mts_cfg_str(b->cfg, s, "log");
	a->log = (v && *v) ? resolve_path(b, v) : NULL;
	a->after = mts_cfg_list(b->cfg, s, "after");
	a->node_key = mts_cfg_bool(b->cfg, s, "node_key");
	return 0;
}

/* The effective section as `-n` prints it; the caller frees it. */
static char *
section_text(const struct mts_cfg *cfg, const char *section)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if ((f = open_memstream(&text, &len)) == NULL)
		fatal("open_memstream");
	mts_cfg_print_section(cfg, section, f);
	if (fclose(f) != 0)
		fatal("open_memstream");
	return text;
}

/* Everything that makes the agent what it is: what init resolved (ids,
 * capabilities, paths, supervision) and the agent's whole effective section,
 * its own keys included (acl_read, rootfs...), as `-n` prints it. Equal
 * means unchanged: a reload restarts the agent otherwise. */
static void
fingerprint(struct build *b, struct init_agent *a)
{
	char *f = xasprintf("%s|%s|%u|%u|%llx|%s|%d|%s|%llu|%s|%d|%lld|%lld|"
	                    "%lld|%lld|%lld|%d",
	         a->name, a->exec, (unsigned)a->uid, (unsigned)a->gid,
	         (unsigned long long)a->caps, a->seccomp ?: "",
	         a->seccomp_debug, a->chroot ?: "",
	         (unsigned long long)a->nofile, a->log ?: "", a->p.restart,
	         (long long)a->p.backoff_min_ms, (long long)a->p.backoff_max_ms,
	         (long long)a->p.stable_ms, (long long)a->p.ready_timeout_ms,
	         (long long)a->p.grace_ms, a->node_key),
	     *t;
	size_t i;

	for (i = 0; a->args[i]; i++) {
		t = xasprintf("%s|a:%s", f, a->args[i]);
		free(f);
		f = t;
	}
	for (i = 0; a->after[i]; i++) {
		t = xasprintf("%s|d:%s", f, a->after[i]);
		free(f);
		f = t;
	}
	for (i = 0; i < a->ngroups; i++) {
		t = xasprintf("%s|g:%u", f, (unsigned)a->groups[i]);
		free(f);
		f = t;
	}
	t = section_text(b->cfg, a->name);
	a->fingerprint = xasprintf("%s|s:%s", f, t);
	free(t);
	free(f);
}

static int
find_agent(const struct init_conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->a[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Depth-first walk: 1 on a path back to `start`. */
static int
reaches(const struct init_conf *c, int from, int start, int depth)
{
	size_t j;
	int k;

	if (depth > (int)c->n)
		return 1;
	for (j = 0; c->a[from].after[j]; j++) {
		k = find_agent(c, c->a[from].after[j]);
		if (k == start || (k >= 0 && reaches(c, k, start, depth + 1)))
			return 1;
	}
	return 0;
}

static int
check_deps(struct build *b, struct init_conf *c)
{
	size_t i, j;

	for (i = 0; i < c->n; i++) {
		for (j = 0; c->a[i].after[j]; j++)
			if (find_agent(c, c->a[i].after[j]) < 0)
				return fail(b, c->a[i].name, "after",
				    "no agent named '%s'", c->a[i].after[j]);
		if (reaches(c, (int)i, (int)i, 0))
			return fail(b, c->a[i].name, "after",
			    "dependency cycle through [%s]", c->a[i].name);
	}
	return 0;
}

static int
build_agent(struct build *b, struct init_conf *c, const char *name)
{
	struct init_agent *a;
	int rc;

	c->a = xreallocarray(c->a, c->n + 1, sizeof(*c->a));
	a = &c->a[c->n++];
	memset(a, 0, sizeof(*a));
	a->name = xstrdup(name);
	a->filter_fd = -1;
	if (strlen(name) >= 48 ||
	    strspn(name,
	        "abcdefghijklmnopqrstuvwxyz"
	        "0123456789-_") != strlen(name))
		return fail(b, name, NULL,
		    "agent names are lowercase letters, "
		    "digits, '-' and '_' (at most 47)");
	if ((rc = build_exec(b, a)) < 0 ||
	    (rc = build_ids(b, a, c->admin_gid)) < 0 ||
	    (rc = build_caps(b, a)) < 0 || (rc = build_params(b, a)) < 0 ||
	    (rc = build_filter(b, a)) < 0)
		return rc;
	fingerprint(b, a);
	return 0;
}

static int
build_node(struct build *b, struct init_conf *c)
{
	const char *g = mts_cfg_str(b->cfg, "init", "admin_group");
	const char *n = mts_cfg_str(b->cfg, "node", "name");
	char host[256] = "localhost";

	(void)gethostname(host, sizeof(host) - 1);
	c->node = xstrdup(n ? n : host);
	c->rundir = xstrdup(mts_cfg_str(b->cfg, "node", "rundir"));
	c->statedir = xstrdup(mts_cfg_str(b->cfg, "node", "statedir"));
	c->debug = mts_cfg_bool(b->cfg, "node", "debug");
	n = mts_cfg_str(b->cfg, "node", "key");
	c->key = (n && *n) ? resolve_path(b, n)
	                   : xasprintf("%s/node.key", c->statedir);
	if (c->rundir[0] != '/' || c->statedir[0] != '/')
		return fail(b, "node",
		    c->rundir[0] != '/' ? "rundir" : "statedir",
		    "must be an absolute path");
	if (lookup_group(g, &c->admin_gid) < 0)
		return fail(b, "init", "admin_group", "no such group '%s'", g);
	return 0;
}

static int
build_admin_acl(struct build *b, struct init_conf *c)
{
	size_t i;
	int rc;

	rc = mts_acl_table_load(&c->admin_acl, mts_init_admin_acl, b->cfg,
	    "init", b->err, b->errlen);
	for (i = 0; rc == 0 && i < c->n; i++)
		mts_acl_table_nogroup(&c->admin_acl, c->a[i].uid);
	return rc;
}

int
mts_init_conf_load(const char *path, struct init_conf **out, char *err,
    size_t errlen)
{
	struct init_conf *c = xcalloc(1, sizeof(*c));
	struct mts_cfg *cfg = NULL;
	struct build b = { .err = err, .errlen = errlen };
	char *tmp;
	size_t i;
	int rc;

	rc = mts_cfg_load(path, mts_conf_schema(), &cfg, err, errlen);
	if (rc < 0)
		goto out;
	b.cfg = cfg;
	tmp = xstrdup(path);
	b.dir = xstrdup(dirname(tmp));
	free(tmp);
	c->file = xstrdup(path);
	if ((rc = build_node(&b, c)) < 0)
		goto out;
	for (i = 0; i < cfg->nsections && rc == 0; i++) {
		const char *s = cfg->sections[i];

		if (strcmp(s, "node") == 0 || strcmp(s, "init") == 0 ||
		    !mts_cfg_bool(cfg, s, "enabled"))
			continue;
		rc = build_agent(&b, c, s);
	}
	if (rc == 0)
		rc = check_deps(&b, c);
	if (rc == 0)
		rc = build_admin_acl(&b, c);
out:
	free(b.dir);
	mts_cfg_free(cfg);
	if (rc < 0) {
		mts_init_conf_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void
mts_init_conf_free(struct init_conf *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		struct init_agent *a = &c->a[i];

		free(a->name);
		free(a->exec);
		mts_cfg_list_free(a->args);
		free(a->user);
		free(a->groups);
		free(a->caps_text);
		free(a->seccomp);
		if (a->filter_fd >= 0)
			close(a->filter_fd);
		mts_cfg_list_free(a->after);
		free(a->chroot);
		free(a->log);
		free(a->fingerprint);
	}
	free(c->a);
	mts_acl_table_free(&c->admin_acl);
	free(c->file);
	free(c->node);
	free(c->rundir);
	free(c->statedir);
	free(c->key);
	free(c);
}
