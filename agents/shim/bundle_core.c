/* bundle_core.c: builds an OCI config.json (jansson) — namespaces, Docker's default capabilities, a default seccomp profile, limits — from a resolved task spec; no I/O. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bundle_core.h"
#include "image_core.h"
#include "mtserr.h"
#include "xmalloc.h"

const char *const mts_default_caps[] = { "CAP_CHOWN", "CAP_DAC_OVERRIDE",
	"CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID",
	"CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE", NULL };

/* The syscalls Docker's default profile leaves out for an unprivileged
 * container (kernel modules, kexec, bpf, tracing other processes, clocks,
 * mounts, namespaces, keyrings, ...). They fail with EPERM; everything
 * else is allowed. */
static const char *const seccomp_denied[] = { "acct", "add_key", "bpf",
	"clock_adjtime", "clock_settime", "create_module", "delete_module",
	"finit_module", "fsconfig", "fsmount", "fsopen", "fspick",
	"get_kernel_syms", "get_mempolicy", "init_module", "ioperm", "iopl",
	"kcmp", "kexec_file_load", "kexec_load", "keyctl", "lookup_dcookie",
	"mbind", "mount", "mount_setattr", "move_mount", "move_pages",
	"name_to_handle_at", "nfsservctl", "open_by_handle_at", "open_tree",
	"perf_event_open", "pivot_root", "process_vm_readv",
	"process_vm_writev", "ptrace", "query_module", "quotactl",
	"quotactl_fd", "reboot", "request_key", "set_mempolicy", "setns",
	"settimeofday", "stime", "swapoff", "swapon", "syslog", "sysfs",
	"_sysctl", "umount", "umount2", "unshare", "uselib", "userfaultfd",
	"ustat", "vm86", "vm86old", NULL };

static const char *const masked_paths[] = { "/proc/acpi", "/proc/asound",
	"/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
	"/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
	NULL };
static const char *const readonly_paths[] = { "/proc/bus", "/proc/fs",
	"/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL };

static json_t *
strv(const char *const *v)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *
mount_obj(const char *dst, const char *type, const char *src,
    const char *const *opts)
{
	return json_pack("{s:s, s:s, s:s, s:o}", "destination", dst, "type",
	    type, "source", src, "options", strv(opts));
}

static json_t *
default_mounts(void)
{
	static const char *const proc[] = { "nosuid", "noexec", "nodev", NULL };
	static const char *const dev[] = { "nosuid", "strictatime", "mode=755",
		"size=65536k", NULL };
	static const char *const pts[] = { "nosuid", "noexec", "newinstance",
		"ptmxmode=0666", "mode=0620", "gid=5", NULL };
	static const char *const shm[] = { "nosuid", "noexec", "nodev",
		"mode=1777", "size=65536k", NULL };
	static const char *const mq[] = { "nosuid", "noexec", "nodev", NULL };
	static const char *const sys[] = { "nosuid", "noexec", "nodev", "ro",
		NULL };
	static const char *const cg[] = { "nosuid", "noexec", "nodev",
		"relatime", "ro", NULL };
	json_t *a = json_array();

	json_array_append_new(a, mount_obj("/proc", "proc", "proc", proc));
	json_array_append_new(a, mount_obj("/dev", "tmpfs", "tmpfs", dev));
	json_array_append_new(a,
	    mount_obj("/dev/pts", "devpts", "devpts", pts));
	json_array_append_new(a, mount_obj("/dev/shm", "tmpfs", "shm", shm));
	json_array_append_new(a,
	    mount_obj("/dev/mqueue", "mqueue", "mqueue", mq));
	json_array_append_new(a, mount_obj("/sys", "sysfs", "sysfs", sys));
	json_array_append_new(a,
	    mount_obj("/sys/fs/cgroup", "cgroup", "cgroup", cg));
	return a;
}

static json_t *
user_mounts(const struct mts_bundle_spec *s, json_t *a)
{
	static const char *const bind_opts[] = { "rbind", "rprivate", NULL };
	size_t i;

	for (i = 0; i < s->nmounts; i++) {
		const struct mts_bundle_mount *m = &s->mounts[i];
		const char *type = m->type && *m->type ? m->type : "bind";
		json_t *o = mount_obj(m->destination, type,
		    m->source ? m->source : type,
		    m->options ? m->options
		               : (!strcmp(type, "bind") ? bind_opts : NULL));
		if (!strcmp(type, "bind") && m->options != NULL)
			json_array_append_new(json_object_get(o, "options"),
			    json_string("rbind"));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
namespaces(const struct mts_bundle_spec *s)
{
	json_t *a = json_array();

	json_array_append_new(a, json_pack("{s:s}", "type", "pid"));
	json_array_append_new(a, json_pack("{s:s}", "type", "ipc"));
	json_array_append_new(a, json_pack("{s:s}", "type", "uts"));
	json_array_append_new(a, json_pack("{s:s}", "type", "mount"));
	if (s->netns != NULL && *s->netns != '\0')
		json_array_append_new(a,
		    json_pack("{s:s, s:s}", "type", "network", "path",
		        s->netns));
	else
		json_array_append_new(a, json_pack("{s:s}", "type", "network"));
	return a;
}

static json_t *
seccomp_profile(void)
{
	return json_pack("{s:s, s:[s,s,s], s:[{s:o, s:s, s:i}]}",
	    "defaultAction", "SCMP_ACT_ALLOW", "architectures",
	    "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "syscalls",
	    "names", strv(seccomp_denied), "action", "SCMP_ACT_ERRNO",
	    "errnoRet", 1);
}

static json_t *
resources(const struct mts_bundle_spec *s)
{
	json_t *r = json_pack("{s:[{s:b, s:s}]}", "devices", "allow", 0,
	    "access", "rwm");

	if (s->memory_limit > 0)
		json_object_set_new(r, "memory",
		    json_pack("{s:I}", "limit", (json_int_t)s->memory_limit));
	if (s->cpu_millis > 0)
		json_object_set_new(r, "cpu",
		    json_pack("{s:I, s:I}", "quota",
		        (json_int_t)s->cpu_millis * 100, "period",
		        (json_int_t)100000));
	if (s->pids_limit > 0)
		json_object_set_new(r, "pids",
		    json_pack("{s:I}", "limit", (json_int_t)s->pids_limit));
	return r;
}

static json_t *
process(const struct mts_bundle_spec *s)
{
	json_int_t nofile = (json_int_t)(s->nofile ? s->nofile : 1048576);
	json_t *caps = strv(mts_default_caps);

	return json_pack("{s:b, s:{s:I, s:I}, s:o, s:o, s:s, "
	                 "s:{s:o, s:o, s:o, s:[], s:[]}, "
	                 "s:[{s:s, s:I, s:I}], s:b}",
	    "terminal", 0, "user", "uid", (json_int_t)s->uid, "gid",
	    (json_int_t)s->gid, "args", strv(s->args), "env", strv(s->env),
	    "cwd", s->cwd && *s->cwd ? s->cwd : "/", "capabilities", "bounding",
	    json_deep_copy(caps), "effective", json_deep_copy(caps),
	    "permitted", caps, "inheritable", "ambient", "rlimits", "type",
	    "RLIMIT_NOFILE", "hard", nofile, "soft", nofile, "noNewPrivileges",
	    1);
}

char *
mts_bundle_config(const struct mts_bundle_spec *s, char *err, size_t errlen)
{
	json_t *root, *linux_;
	char *out;

	if (s->args == NULL || s->args[0] == NULL || *s->args[0] == '\0') {
		snprintf(err, errlen, "no command to run (image has none)");
		return NULL;
	}
	if (s->cgroups_path == NULL || s->cgroups_path[0] != '/') {
		snprintf(err, errlen, "cgroups path must be absolute");
		return NULL;
	}
	/* config.json's numbers are signed 64-bit (jansson): a larger value
	 * would come out negative. No kernel allows more than INT_MAX open
	 * files (fs.nr_open). */
	if (s->nofile > INT32_MAX) {
		snprintf(err, errlen,
		    "nofile %" PRIu64 ": out of range (at "
		    "most %d)",
		    s->nofile, INT32_MAX);
		return NULL;
	}
	if (s->memory_limit > INT64_MAX) {
		snprintf(err, errlen,
		    "memory limit %" PRIu64 ": out of range "
		    "(at most %" PRId64 " bytes)",
		    s->memory_limit, INT64_MAX);
		return NULL;
	}
	linux_ = json_pack("{s:o, s:s, s:o, s:o, s:o}", "namespaces",
	    namespaces(s), "cgroupsPath", s->cgroups_path, "resources",
	    resources(s), "maskedPaths", strv(masked_paths), "readonlyPaths",
	    strv(readonly_paths));
	if (s->seccomp)
		json_object_set_new(linux_, "seccomp", seccomp_profile());
	root = json_pack("{s:s, s:o, s:{s:s, s:b}, s:o, s:o}", "ociVersion",
	    "1.0.2", "process", process(s), "root", "path", "rootfs",
	    "readonly", s->read_only ? 1 : 0, "mounts",
	    user_mounts(s, default_mounts()), "linux", linux_);
	if (root == NULL) {
		snprintf(err, errlen, "cannot build config.json");
		return NULL;
	}
	if (s->hostname != NULL && *s->hostname != '\0')
		json_object_set_new(root, "hostname", json_string(s->hostname));
	out = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return out;
}

uint32_t
mts_task_pids_limit(uint32_t requested, uint32_t node_default)
{
	if (requested == 0)
		return node_default;
	return requested == MTS_PIDS_UNLIMITED ? 0 : requested;
}

static size_t
vlen(char *const *v)
{
	size_t n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return n;
}

const char **
mts_task_argv(char *const *img_ep, char *const *img_cmd, char *const *ep,
    size_t nep, char *const *cmd, size_t ncmd)
{
	char *const *e = nep ? ep : img_ep;
	char *const *c = ncmd ? cmd : (nep ? NULL : img_cmd);
	size_t ne = nep ? nep : vlen(img_ep);
	size_t nc = ncmd ? ncmd : (nep ? 0 : vlen(img_cmd)), i;
	const char **out;

	if (ne + nc == 0)
		return NULL;
	out = xcalloc(ne + nc + 1, sizeof(char *));
	for (i = 0; i < ne; i++)
		out[i] = e[i];
	for (i = 0; i < nc; i++)
		out[ne + i] = c[i];
	return out;
}

static size_t
keylen(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq ? (size_t)(eq - kv) : strlen(kv);
}

const char **
mts_task_env(char *const *img_env, char *const *env, size_t nenv)
{
	size_t ni = vlen(img_env), n = 0, i, k;
	const char **out = xcalloc(ni + nenv + 1, sizeof(char *));

	for (i = 0; i < ni; i++)
		out[n++] = img_env[i];
	for (i = 0; i < nenv; i++) {
		for (k = 0; k < n; k++)
			if (keylen(out[k]) == keylen(env[i]) &&
			    !strncmp(out[k], env[i], keylen(env[i])))
				break;
		out[k] = env[i];
		if (k == n)
			n++;
	}
	out[n] = NULL;
	return out;
}

static int
parse_id(const char *s, size_t n, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 10)
		return -MTS_ERR_INVAL;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -MTS_ERR_INVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > 0xfffffffeu)
		return -MTS_ERR_INVAL;
	*out = (uint32_t)v;
	return 0;
}

/* Looks name up in passwd/group-format text: field 3 is the id, field 4
 * (passwd only) the primary group. */
static int
db_lookup(const char *text, const char *name, size_t nlen, uint32_t *id,
    uint32_t *gid)
{
	const char *line = text, *f[5], *eol;
	size_t k;

	while (text != NULL && *line != '\0') {
		eol = strchr(line, '\n');
		if (eol == NULL)
			eol = line + strlen(line);
		f[0] = line;
		for (k = 1; k < 5; k++) {
			const char *c =
			    memchr(f[k - 1], ':', (size_t)(eol - f[k - 1]));
			f[k] = c ? c + 1 : eol;
		}
		if ((size_t)(f[1] - f[0] - 1) == nlen &&
		    !strncmp(f[0], name, nlen) &&
		    parse_id(f[2], (size_t)(f[3] - f[2] - 1), id) == 0 &&
		    (gid == NULL ||
		        parse_id(f[3], (size_t)(f[4] - f[3] - 1), gid) == 0))
			return 0;
		line = *eol ? eol + 1 : eol;
	}
	return -MTS_ERR_NOTFOUND;
}

/* The primary group of the passwd entry with this uid, 0 if none. */
static uint32_t
uid_primary_gid(const char *text, uint32_t uid)
{
	const char *line = text, *eol, *f2, *f3, *f4;
	uint32_t id, gid;

	while (text != NULL && *line != '\0') {
		eol = strchr(line, '\n');
		if (eol == NULL)
			eol = line + strlen(line);
		f2 = memchr(line, ':', (size_t)(eol - line));
		f2 = f2 ? memchr(f2 + 1, ':', (size_t)(eol - f2 - 1)) : NULL;
		f3 = f2 ? memchr(f2 + 1, ':', (size_t)(eol - f2 - 1)) : NULL;
		f4 = f3 ? memchr(f3 + 1, ':', (size_t)(eol - f3 - 1)) : NULL;
		if (f4 != NULL &&
		    parse_id(f2 + 1, (size_t)(f3 - f2 - 1), &id) == 0 &&
		    id == uid &&
		    parse_id(f3 + 1, (size_t)(f4 - f3 - 1), &gid) == 0)
			return gid;
		line = *eol ? eol + 1 : eol;
	}
	return 0;
}

int
mts_user_resolve(const char *user, const char *passwd, const char *group,
    uint32_t *uid, uint32_t *gid)
{
	const char *colon;
	size_t ulen;
	uint32_t pgid = 0;

	*uid = *gid = 0;
	if (user == NULL || *user == '\0')
		return 0;
	colon = strchr(user, ':');
	ulen = colon ? (size_t)(colon - user) : strlen(user);
	if (parse_id(user, ulen, uid) != 0) {
		if (db_lookup(passwd, user, ulen, uid, &pgid))
			return -MTS_ERR_NOTFOUND;
		*gid = pgid;
	} else if (colon == NULL)
		*gid = uid_primary_gid(passwd, *uid);
	if (colon == NULL)
		return 0;
	if (parse_id(colon + 1, strlen(colon + 1), gid) == 0)
		return 0;
	return db_lookup(group, colon + 1, strlen(colon + 1), gid, NULL);
}

static const char *
or_default(const char *v, const char *dflt)
{
	return v != NULL && *v != '\0' ? v : dflt;
}

/* The bundle's mounts from the task's, with each option list turned into
 * the NULL-terminated one the bundle wants: one flat array (*opts, the
 * caller frees it and the returned array) with a NULL after each mount's
 * options. NULL with err filled for a relative destination. */
static struct mts_bundle_mount *
task_mounts(const struct mts_task_spec *t, const char ***opts, char *err,
    size_t errlen)
{
	struct mts_bundle_mount *m = xcalloc(t->nmounts + 1, sizeof(*m));
	size_t i, k, n = 0;

	for (i = 0; i < t->nmounts; i++)
		n += t->mounts[i].noptions + 1;
	*opts = xcalloc(n + 1, sizeof(**opts));
	for (i = 0, n = 0; i < t->nmounts; i++) {
		const struct mts_task_mount *tm = &t->mounts[i];
		if (tm->destination == NULL || tm->destination[0] != '/') {
			snprintf(err, errlen,
			    "mount %zu: destination must be "
			    "absolute",
			    i);
			free(m);
			free(*opts);
			*opts = NULL;
			return NULL;
		}
		m[i].source = tm->source;
		m[i].destination = tm->destination;
		m[i].type = tm->type;
		m[i].options = tm->noptions ? *opts + n : NULL;
		for (k = 0; k < tm->noptions; k++)
			(*opts)[n++] = tm->options[k];
		(*opts)[n++] = NULL;
	}
	return m;
}

char *
mts_bundle_for_task(const struct mts_task_spec *t,
    const struct mts_image_config *img, const struct mts_bundle_host *h,
    char *err, size_t errlen)
{
	struct mts_bundle_spec b;
	struct mts_bundle_mount *mounts = NULL;
	const char **argv, **env, **opts = NULL;
	const char *user = or_default(t->user, img->user);
	char *cg = NULL, *json = NULL;

	memset(&b, 0, sizeof(b));
	argv = mts_task_argv(img->entrypoint, img->cmd, t->entrypoint,
	    t->nentrypoint, t->command, t->ncommand);
	env = mts_task_env(img->env, t->env, t->nenv);
	if (mts_user_resolve(user, h->passwd, h->group, &b.uid, &b.gid)) {
		snprintf(err, errlen, "user \"%s\" not found in the image",
		    user);
		goto out;
	}
	if ((mounts = task_mounts(t, &opts, err, errlen)) == NULL)
		goto out;
	cg = xasprintf("%s/%s", h->cgroup_parent, t->id);
	b.args = argv;
	b.env = env;
	b.cwd = or_default(t->cwd, img->cwd);
	b.hostname = or_default(t->hostname, t->id);
	b.mounts = mounts;
	b.nmounts = t->nmounts;
	b.netns = t->netns;
	b.read_only = t->read_only;
	b.memory_limit = t->memory_limit;
	b.cpu_millis = t->cpu_millis;
	b.pids_limit = mts_task_pids_limit(t->pids_limit, h->default_pids);
	/* The host may cap below 1048576. */
	b.nofile = t->nofile ? t->nofile : h->nofile_max;
	b.cgroups_path = cg;
	b.seccomp = h->seccomp;
	json = mts_bundle_config(&b, err, errlen);
out:
	free(cg);
	free(argv);
	free(env);
	free(mounts);
	free(opts);
	return json;
}

/* --- resolv.conf -------------------------------------------------------------- */

static int
ipv4_ok(const char *s)
{
	unsigned a, b, c, d;
	char tail;

	return sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 &&
	    a < 256 && b < 256 && c < 256 && d < 256 &&
	    strspn(s, "0123456789.") == strlen(s);
}

static int
domain_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 254 && s[0] != '.' && s[0] != '-' &&
	    strspn(s,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789-_.") == n;
}

char *
mts_resolv_conf(char *const *servers, size_t nservers, char *const *search,
    size_t nsearch, char *err, size_t errlen)
{
	size_t i, len = 0, at;
	char *out;

	if (nservers == 0 || nservers > 3 || nsearch > 6) {
		snprintf(err, errlen,
		    "dns: 1 to 3 nameservers, at most 6 "
		    "search domains");
		return NULL;
	}
	for (i = 0; i < nservers; i++) {
		if (!ipv4_ok(servers[i])) {
			snprintf(err, errlen,
			    "dns: '%s' is not an IPv4 "
			    "address",
			    servers[i]);
			return NULL;
		}
		len += strlen("nameserver \n") + strlen(servers[i]);
	}
	for (i = 0; i < nsearch; i++) {
		if (!domain_ok(search[i])) {
			snprintf(err, errlen,
			    "dns_search: '%s' is not a "
			    "domain",
			    search[i]);
			return NULL;
		}
		len += strlen(search[i]) + 1;
	}
	len += sizeof("search \n");
	out = xmalloc(len);
	at = 0;
	for (i = 0; i < nservers; i++)
		at += (size_t)snprintf(out + at, len - at, "nameserver %s\n",
		    servers[i]);
	if (nsearch > 0) {
		at += (size_t)snprintf(out + at, len - at, "search");
		for (i = 0; i < nsearch; i++)
			at += (size_t)snprintf(out + at, len - at, " %s",
			    search[i]);
		snprintf(out + at, len - at, "\n");
	}
	return out;
}
