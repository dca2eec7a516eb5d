/* spec.c: a merged Compose tree into mts's stack spec — one table row per service key (run, warned, or an error), typed conversions with FILE:LINE:COLUMN errors, Swarm's defaults. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose_int.h"
#include "xmalloc.h"

typedef int (*key_fn)(struct conv *, const struct cnode *);

enum key_kind {
	K_RUN,  /* mts runs it */
	K_WARN, /* mts does not run it: one warning line, then ignored */
};

struct key_rule {
	const char *key;
	enum key_kind kind;
	key_fn fn;
	const char *why; /* K_WARN: what the user should know */
};

int
compose_err(char *err, size_t errlen, const struct cnode *at, const char *fmt,
    ...)
{
	va_list ap;
	int off;

	off =
	    snprintf(err, errlen, "%s:%d:%d: ", at && at->file ? at->file : "-",
	        at ? at->line : 0, at ? at->col : 0);
	if (off < 0 || (size_t)off >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + off, errlen - off, fmt, ap);
	va_end(ap);
	return -1;
}

char *
xmemdup_str(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
cv_warn(struct conv *c, const struct cnode *at, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int off;

	off = snprintf(line, sizeof(line), "%s:%d:%d: ", at->file, at->line,
	    at->col);
	va_start(ap, fmt);
	vsnprintf(line + off, sizeof(line) - off, fmt, ap);
	va_end(ap);
	mts_strv_push(&c->st->warnings, line);
}

/* --- containers ------------------------------------------------------------------- */

void
mts_strv_push(struct mts_strv *v, const char *s)
{
	v->v = xreallocarray(v->v, v->n + 1, sizeof(*v->v));
	v->v[v->n++] = xstrdup(s);
}

void
mts_strv_clear(struct mts_strv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	v->v = NULL;
	v->n = 0;
}

void
mts_kvlist_set(struct mts_kvlist *l, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].key, key) == 0) {
			free(l->v[i].value);
			l->v[i].value = value ? xstrdup(value) : NULL;
			return;
		}
	}
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n].key = xstrdup(key);
	l->v[l->n++].value = value ? xstrdup(value) : NULL;
}

const struct mts_kv *
mts_kvlist_get(const struct mts_kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].key, key) == 0)
			return &l->v[i];
	return NULL;
}

void
mts_kvlist_clear(struct mts_kvlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* --- typed values ---------------------------------------------------------------- */

int
cv_want(struct conv *c, const struct cnode *n, enum cnode_kind kind,
    const char *what)
{
	if (n->kind == kind && !(kind == CN_SCALAR && cnode_is_null(n)))
		return 0;
	return CERR(c, n, "%s: expected %s, not %s", what,
	    kind == CN_MAP       ? "a mapping"
	        : kind == CN_SEQ ? "a list"
	                         : "a value",
	    cnode_kind_name(n));
}

int
cv_str(struct conv *c, const struct cnode *n, const char *what, char **out)
{
	if (cv_want(c, n, CN_SCALAR, what) < 0)
		return -1;
	if (strlen(n->str) != n->len)
		return CERR(c, n, "%s: contains a NUL byte", what);
	free(*out);
	*out = xstrdup(n->str);
	return 0;
}

int
cv_word(struct conv *c, const struct cnode *n, const char *what, char *out,
    size_t outlen, const char *const *allowed)
{
	size_t i;

	if (cv_want(c, n, CN_SCALAR, what) < 0)
		return -1;
	for (i = 0; allowed[i]; i++) {
		if (strcmp(n->str, allowed[i]) == 0) {
			snprintf(out, outlen, "%s", n->str);
			return 0;
		}
	}
	{
		char list[256] = "";

		for (i = 0; allowed[i]; i++)
			snprintf(list + strlen(list),
			    sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			    allowed[i]);
		return CERR(c, n, "%s: \"%s\" is not one of %s", what, n->str,
		    list);
	}
}

int
cv_bool(struct conv *c, const struct cnode *n, const char *what, int *out)
{
	static const char *const t[] = { "true", "True", "TRUE", NULL };
	static const char *const f[] = { "false", "False", "FALSE", NULL };
	size_t i;

	if (cv_want(c, n, CN_SCALAR, what) < 0)
		return -1;
	for (i = 0; t[i]; i++) {
		if (strcmp(n->str, t[i]) == 0)
			return *out = 1, 0;
		if (strcmp(n->str, f[i]) == 0)
			return *out = 0, 0;
	}
	return CERR(c, n, "%s: expected true or false, not \"%s\"", what,
	    n->str);
}

int
cv_u64(struct conv *c, const struct cnode *n, const char *what, uint64_t max,
    uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (cv_want(c, n, CN_SCALAR, what) < 0)
		return -1;
	if (!isdigit((unsigned char)n->str[0]))
		return CERR(c, n, "%s: expected a whole number, not \"%s\"",
		    what, n->str);
	errno = 0;
	v = strtoull(n->str, &end, 10);
	if (*end != '\0' || errno != 0 || v > max)
		return CERR(c, n,
		    "%s: \"%s\" is not a whole number from 0 to "
		    "%llu",
		    what, n->str, (unsigned long long)max);
	*out = v;
	return 0;
}

int
cv_u32(struct conv *c, const struct cnode *n, const char *what, uint32_t *out)
{
	uint64_t v;

	if (cv_u64(c, n, what, UINT32_MAX, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int
cv_duration(struct conv *c, const struct cnode *n, const char *what,
    int64_t *ms)
{
	if (cv_want(c, n, CN_SCALAR, what) < 0)
		return -1;
	if (mts_compose_duration(n->str, ms) < 0)
		return CERR(c, n,
		    "%s: \"%s\" is not a duration (e.g. 30s, "
		    "1m30s, 500ms)",
		    what, n->str);
	return 0;
}

int
cv_bytes(struct conv *c, const struct cnode *n, const char *what, uint64_t *out)
{
	if (cv_want(c, n, CN_SCALAR, what) < 0)
		return -1;
	if (mts_compose_bytes(n->str, out) < 0)
		return CERR(c, n,
		    "%s: \"%s\" is not a size (e.g. 512m, 1g, "
		    "100k or bytes)",
		    what, n->str);
	return 0;
}

/* A string or a list of strings; a string is split as a shell would
 * split words only for command/entrypoint (split = 1). */
int
cv_strv(struct conv *c, const struct cnode *n, const char *what,
    struct mts_strv *out, int split)
{
	size_t i;

	mts_strv_clear(out);
	if (cnode_is_null(n))
		return 0;
	if (n->kind == CN_SCALAR) {
		if (!split) {
			mts_strv_push(out, n->str);
			return 0;
		}
		return compose_shell_split(n->str, out) < 0
		    ? CERR(c, n, "%s: unbalanced quotes in \"%s\"", what,
		          n->str)
		    : 0;
	}
	if (cv_want(c, n, CN_SEQ, what) < 0)
		return -1;
	for (i = 0; i < n->n; i++) {
		if (cv_want(c, n->kids[i], CN_SCALAR, what) < 0)
			return -1;
		mts_strv_push(out, n->kids[i]->str);
	}
	return 0;
}

/* A list of KEY=VALUE or a map into kv; map values may be numbers or
 * booleans (kept as written) or null (no value). */
int
cv_kv(struct conv *c, const struct cnode *n, const char *what,
    struct mts_kvlist *out)
{
	struct cnode *m;
	size_t i;

	if (cnode_is_null(n))
		return 0;
	if ((m = compose_kv_map(n, c->err, c->errlen)) == NULL)
		return -1;
	for (i = 0; i < m->n; i++) {
		const struct cnode *v = m->kids[2 * i + 1];

		if (v->kind != CN_SCALAR) {
			CERR(c, v, "%s: %s: expected a value, not %s", what,
			    m->kids[2 * i]->str, cnode_kind_name(v));
			cnode_free(m);
			return -1;
		}
		mts_kvlist_set(out, m->kids[2 * i]->str,
		    cnode_is_null(v) ? NULL : v->str);
	}
	cnode_free(m);
	return 0;
}

/* --- service keys ---------------------------------------------------------------- */

#define SVC_STR(field, key) \
	static int k_##field(struct conv *c, const struct cnode *n) \
	{ \
		return cv_str(c, n, key, &c->svc->field); \
	}

SVC_STR(image, "image")
SVC_STR(hostname, "hostname")
SVC_STR(user, "user")
SVC_STR(working_dir, "working_dir")
SVC_STR(stop_signal, "stop_signal")

static int
k_command(struct conv *c, const struct cnode *n)
{
	c->svc->has_command = 1;
	return cv_strv(c, n, "command", &c->svc->command, 1);
}

static int
k_entrypoint(struct conv *c, const struct cnode *n)
{
	c->svc->has_entrypoint = 1;
	return cv_strv(c, n, "entrypoint", &c->svc->entrypoint, 1);
}

static int
k_environment(struct conv *c, const struct cnode *n)
{
	return cv_kv(c, n, "environment", &c->svc->environment);
}

static int
k_env_file(struct conv *c, const struct cnode *n)
{
	size_t i;

	if (n->kind == CN_SEQ) {
		for (i = 0; i < n->n; i++) {
			const struct cnode *p = n->kids[i];

			if (p->kind == CN_MAP)
				p = cnode_get(p, "path");
			if (p == NULL ||
			    cv_want(c, p, CN_SCALAR, "env_file") < 0)
				return p ? -1
				         : CERR(c, n->kids[i],
				               "env_file: "
				               "an entry needs a path");
			mts_strv_push(&c->svc->env_file, p->str);
		}
		return 0;
	}
	return cv_strv(c, n, "env_file", &c->svc->env_file, 0);
}

static int
k_labels(struct conv *c, const struct cnode *n)
{
	return cv_kv(c, n, "labels", &c->svc->labels);
}

static int
k_read_only(struct conv *c, const struct cnode *n)
{
	return cv_bool(c, n, "read_only", &c->svc->read_only);
}

static int
k_init(struct conv *c, const struct cnode *n)
{
	return cv_bool(c, n, "init", &c->svc->init);
}

static int
k_stop_grace(struct conv *c, const struct cnode *n)
{
	return cv_duration(c, n, "stop_grace_period", &c->svc->stop_grace_ms);
}

static int
k_healthcheck(struct conv *c, const struct cnode *n)
{
	struct mts_health *h = &c->svc->health;
	const struct cnode *v;
	uint32_t r;

	if (cv_want(c, n, CN_MAP, "healthcheck") < 0)
		return -1;
	h->set = 1;
	if ((v = cnode_get(n, "disable")) &&
	    cv_bool(c, v, "healthcheck.disable", &h->disable) < 0)
		return -1;
	if ((v = cnode_get(n, "test"))) {
		if (cv_strv(c, v, "healthcheck.test", &h->test, 0) < 0)
			return -1;
		if (v->kind == CN_SCALAR) { /* a string is CMD-SHELL */
			mts_strv_clear(&h->test);
			mts_strv_push(&h->test, "CMD-SHELL");
			mts_strv_push(&h->test, v->str);
		} else if (h->test.n == 0 ||
		    (strcmp(h->test.v[0], "CMD") &&
		        strcmp(h->test.v[0], "CMD-SHELL") &&
		        strcmp(h->test.v[0], "NONE")))
			return CERR(c, v,
			    "healthcheck.test: a list starts with "
			    "CMD, CMD-SHELL or NONE");
		if (h->test.n && strcmp(h->test.v[0], "NONE") == 0)
			h->disable = 1;
	}
	if (((v = cnode_get(n, "interval")) &&
	        cv_duration(c, v, "healthcheck.interval", &h->interval_ms) <
	            0) ||
	    ((v = cnode_get(n, "timeout")) &&
	        cv_duration(c, v, "healthcheck.timeout", &h->timeout_ms) < 0) ||
	    ((v = cnode_get(n, "start_period")) &&
	        cv_duration(c, v, "healthcheck.start_period",
	            &h->start_period_ms) < 0) ||
	    ((v = cnode_get(n, "start_interval")) &&
	        cv_duration(c, v, "healthcheck.start_interval",
	            &h->start_interval_ms) < 0))
		return -1;
	if ((v = cnode_get(n, "retries"))) {
		if (cv_u32(c, v, "healthcheck.retries", &r) < 0)
			return -1;
		h->retries = r > INT32_MAX ? INT32_MAX : (int32_t)r;
	}
	return 0;
}

static int
add_port(struct conv *c, const struct mts_port *p)
{
	struct mts_service *s = c->svc;

	s->ports = xreallocarray(s->ports, s->nports + 1, sizeof(*s->ports));
	s->ports[s->nports++] = *p;
	return 0;
}

static int
port_number(struct conv *c, const struct cnode *at, const char *s, uint32_t *lo,
    uint32_t *hi)
{
	char *end;
	unsigned long a, b;

	a = strtoul(s, &end, 10);
	b = a;
	if (*end == '-')
		b = strtoul(end + 1, &end, 10);
	if (end == s || *end != '\0' || a == 0 || a > 65535 || b < a ||
	    b > 65535)
		return CERR(c, at,
		    "ports: \"%s\" is not a port (1-65535) or "
		    "a range",
		    s);
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return 0;
}

/* Short syntax: [[IP:]PUBLISHED:]TARGET[/PROTOCOL], ranges as A-B. */
static int
port_short(struct conv *c, const struct cnode *n)
{
	char *s = xstrdup(n->str), *proto, *parts[3], *ip = NULL;
	uint32_t tlo, thi, plo = 0, phi = 0, i;
	size_t np = 0;
	struct mts_port p;
	int rc = -1;
	char *tok, *save = NULL;

	if ((proto = strchr(s, '/')))
		*proto++ = '\0';
	if (s[0] == '[') { /* [::1]:80:80 */
		char *close = strchr(s, ']');

		if (close == NULL || close[1] != ':')
			goto bad;
		*close = '\0';
		ip = s + 1;
		tok = close + 2;
	} else
		tok = s;
	for (tok = strtok_r(tok, ":", &save); tok && np < 3;
	     tok = strtok_r(NULL, ":", &save))
		parts[np++] = tok;
	if (np == 0 || tok != NULL)
		goto bad;
	if (np == 3 && ip == NULL)
		ip = parts[0];
	if (ip && np == 2 && s[0] != '[')
		goto bad;
	if (port_number(c, n, parts[np - 1], &tlo, &thi) < 0)
		goto out;
	if (np >= 2 && *parts[np - 2] &&
	    port_number(c, n, parts[np - 2], &plo, &phi) < 0)
		goto out;
	if (plo && phi - plo != thi - tlo) {
		CERR(c, n,
		    "ports: \"%s\": the published and target ranges "
		    "differ in size",
		    n->str);
		goto out;
	}
	if (proto && strcmp(proto, "tcp") && strcmp(proto, "udp") &&
	    strcmp(proto, "sctp")) {
		CERR(c, n, "ports: \"%s\": protocol is tcp, udp or sctp",
		    n->str);
		goto out;
	}
	for (i = 0; i <= thi - tlo; i++) {
		memset(&p, 0, sizeof(p));
		p.host_ip = ip && *ip ? xstrdup(ip) : NULL;
		p.target = tlo + i;
		p.published = plo ? plo + i : 0;
		snprintf(p.protocol, sizeof(p.protocol), "%s",
		    proto ? proto : "tcp");
		p.mode = MTS_PORT_INGRESS;
		add_port(c, &p);
	}
	rc = 0;
	goto out;
bad:
	CERR(c, n, "ports: \"%s\" is not [[IP:]PUBLISHED:]TARGET[/PROTOCOL]",
	    n->str);
out:
	free(s);
	return rc;
}

static int
port_long(struct conv *c, const struct cnode *n)
{
	static const char *const protos[] = { "tcp", "udp", "sctp", NULL };
	static const char *const modes[] = { "ingress", "host", NULL };
	const struct cnode *v;
	struct mts_port p;
	char mode[16] = "ingress";
	uint32_t hi;

	memset(&p, 0, sizeof(p));
	snprintf(p.protocol, sizeof(p.protocol), "tcp");
	if ((v = cnode_get(n, "target")) == NULL)
		return CERR(c, n, "ports: the long syntax needs target");
	if (cv_want(c, v, CN_SCALAR, "ports.target") < 0 ||
	    port_number(c, v, v->str, &p.target, &hi) < 0)
		return -1;
	if ((v = cnode_get(n, "published")) && !cnode_is_null(v) &&
	    (cv_want(c, v, CN_SCALAR, "ports.published") < 0 ||
	        port_number(c, v, v->str, &p.published, &hi) < 0))
		return -1;
	if ((v = cnode_get(n, "protocol")) &&
	    cv_word(c, v, "ports.protocol", p.protocol, sizeof(p.protocol),
	        protos) < 0)
		return -1;
	if ((v = cnode_get(n, "mode")) &&
	    cv_word(c, v, "ports.mode", mode, sizeof(mode), modes) < 0)
		return -1;
	if ((v = cnode_get(n, "host_ip")) &&
	    cv_str(c, v, "ports.host_ip", &p.host_ip) < 0)
		return -1;
	p.mode = strcmp(mode, "host") == 0 ? MTS_PORT_HOST : MTS_PORT_INGRESS;
	return add_port(c, &p);
}

static int
k_ports(struct conv *c, const struct cnode *n)
{
	size_t i;

	if (cv_want(c, n, CN_SEQ, "ports") < 0)
		return -1;
	for (i = 0; i < n->n; i++) {
		const struct cnode *it = n->kids[i];

		if (it->kind == CN_MAP
		        ? port_long(c, it) < 0
		        : cv_want(c, it, CN_SCALAR, "ports") < 0 ||
		            port_short(c, it) < 0)
			return -1;
	}
	return 0;
}

static struct mts_mount *
new_mount(struct mts_service *s)
{
	s->mounts =
	    xreallocarray(s->mounts, s->nmounts + 1, sizeof(*s->mounts));
	memset(&s->mounts[s->nmounts], 0, sizeof(s->mounts[0]));
	return &s->mounts[s->nmounts++];
}

static int
is_path(const char *s)
{
	return s[0] == '/' || s[0] == '.' || s[0] == '~';
}

/* Short syntax: [SOURCE:]TARGET[:MODE], MODE a comma list (ro, rw, ...). */
static int
volume_short(struct conv *c, const struct cnode *n)
{
	char *s = xstrdup(n->str), *f[3], *save = NULL, *tok, *opt, *o2;
	struct mts_mount *m;
	size_t nf = 0;
	int ro = 0, rc = -1;

	for (tok = strtok_r(s, ":", &save); tok && nf < 3;
	     tok = strtok_r(NULL, ":", &save))
		f[nf++] = tok;
	if (nf == 0 || tok != NULL || f[nf == 1 ? 0 : 1][0] != '/') {
		CERR(c, n,
		    "volumes: \"%s\" is not [SOURCE:]TARGET[:MODE] "
		    "with an absolute TARGET",
		    n->str);
		goto out;
	}
	if (nf == 3) {
		for (opt = strtok_r(f[2], ",", &o2); opt;
		     opt = strtok_r(NULL, ",", &o2)) {
			if (strcmp(opt, "ro") == 0)
				ro = 1;
			else if (strcmp(opt, "rw") && strcmp(opt, "z") &&
			    strcmp(opt, "Z") && strcmp(opt, "nocopy") &&
			    strcmp(opt, "cached") && strcmp(opt, "delegated") &&
			    strcmp(opt, "consistent")) {
				CERR(c, n,
				    "volumes: \"%s\": unknown mode "
				    "\"%s\"",
				    n->str, opt);
				goto out;
			}
		}
	}
	m = new_mount(c->svc);
	m->read_only = ro;
	m->target = xstrdup(f[nf == 1 ? 0 : 1]);
	if (nf == 1)
		m->type = MTS_MOUNT_VOLUME; /* anonymous */
	else {
		m->source = xstrdup(f[0]);
		m->type = is_path(f[0]) ? MTS_MOUNT_BIND : MTS_MOUNT_VOLUME;
		if (m->type == MTS_MOUNT_VOLUME &&
		    !compose_has_volume(c->st, m->source)) {
			CERR(c, n,
			    "volumes: \"%s\": volume \"%s\" is not "
			    "declared under the top-level volumes (a host path "
			    "starts with /, . or ~)",
			    n->str, m->source);
			goto out;
		}
	}
	rc = 0;
out:
	free(s);
	return rc;
}

static int
volume_long(struct conv *c, const struct cnode *n)
{
	static const char *const types[] = { "volume", "bind", "tmpfs", NULL };
	char type[16] = "volume";
	const struct cnode *v, *o;
	struct mts_mount m;

	memset(&m, 0, sizeof(m));
	if ((v = cnode_get(n, "type")) &&
	    cv_word(c, v, "volumes.type", type, sizeof(type), types) < 0)
		return -1;
	m.type = type[0] == 'b' ? MTS_MOUNT_BIND
	    : type[0] == 't'    ? MTS_MOUNT_TMPFS
	                        : MTS_MOUNT_VOLUME;
	if ((v = cnode_get(n, "target")) == NULL)
		return CERR(c, n, "volumes: the long syntax needs target");
	if (cv_str(c, v, "volumes.target", &m.target) < 0)
		goto bad;
	if (m.target[0] != '/') {
		CERR(c, v, "volumes.target: \"%s\" is not an absolute path",
		    m.target);
		goto bad;
	}
	if ((v = cnode_get(n, "source")) && !cnode_is_null(v) &&
	    cv_str(c, v, "volumes.source", &m.source) < 0)
		goto bad;
	if (m.type == MTS_MOUNT_VOLUME && m.source &&
	    !compose_has_volume(c->st, m.source)) {
		CERR(c, n,
		    "volumes: volume \"%s\" is not declared under the "
		    "top-level volumes",
		    m.source);
		goto bad;
	}
	if (m.type == MTS_MOUNT_BIND && m.source == NULL) {
		CERR(c, n, "volumes: a bind mount needs source");
		goto bad;
	}
	if ((v = cnode_get(n, "read_only")) &&
	    cv_bool(c, v, "volumes.read_only", &m.read_only) < 0)
		goto bad;
	if ((o = cnode_get(n, "tmpfs")) && o->kind == CN_MAP) {
		uint64_t mode;

		if ((v = cnode_get(o, "size")) &&
		    cv_bytes(c, v, "volumes.tmpfs.size", &m.tmpfs_size) < 0)
			goto bad;
		if ((v = cnode_get(o, "mode"))) {
			if (cv_u64(c, v, "volumes.tmpfs.mode", 07777, &mode) <
			    0)
				goto bad;
			m.tmpfs_mode = (uint32_t)mode;
		}
	}
	if ((o = cnode_get(n, "volume")) && o->kind == CN_MAP &&
	    (v = cnode_get(o, "nocopy")) &&
	    cv_bool(c, v, "volumes.volume.nocopy", &m.nocopy) < 0)
		goto bad;
	*new_mount(c->svc) = m;
	return 0;
bad:
	free(m.target);
	free(m.source);
	return -1;
}

static int
k_volumes(struct conv *c, const struct cnode *n)
{
	size_t i;

	if (cv_want(c, n, CN_SEQ, "volumes") < 0)
		return -1;
	for (i = 0; i < n->n; i++) {
		const struct cnode *it = n->kids[i];

		if (it->kind == CN_MAP
		        ? volume_long(c, it) < 0
		        : cv_want(c, it, CN_SCALAR, "volumes") < 0 ||
		            volume_short(c, it) < 0)
			return -1;
	}
	return 0;
}

/* tmpfs: a path or a list of paths, each "PATH[:size=N,mode=M]". */
static int
k_tmpfs(struct conv *c, const struct cnode *n)
{
	struct mts_strv paths = { NULL, 0 };
	size_t i;
	int rc = -1;

	if (cv_strv(c, n, "tmpfs", &paths, 0) < 0)
		return -1;
	for (i = 0; i < paths.n; i++) {
		struct mts_mount *m;
		char *opts = strchr(paths.v[i], ':');

		if (opts)
			*opts++ = '\0';
		if (paths.v[i][0] != '/') {
			CERR(c, n, "tmpfs: \"%s\" is not an absolute path",
			    paths.v[i]);
			goto out;
		}
		m = new_mount(c->svc);
		m->type = MTS_MOUNT_TMPFS;
		m->target = xstrdup(paths.v[i]);
		if (opts && strncmp(opts, "size=", 5) == 0 &&
		    mts_compose_bytes(opts + 5, &m->tmpfs_size) < 0) {
			CERR(c, n, "tmpfs: bad size in \"%s\"", opts);
			goto out;
		}
	}
	rc = 0;
out:
	mts_strv_clear(&paths);
	return rc;
}

static int
ulimit_value(struct conv *c, const struct cnode *v, const char *what,
    int64_t *out)
{
	uint64_t u;

	if (v->kind == CN_SCALAR && strcmp(v->str, "-1") == 0) {
		*out = -1;
		return 0;
	}
	if (cv_u64(c, v, what, INT64_MAX, &u) < 0)
		return -1;
	*out = (int64_t)u;
	return 0;
}

static int
k_ulimits(struct conv *c, const struct cnode *n)
{
	struct mts_service *s = c->svc;
	size_t i;

	if (cv_want(c, n, CN_MAP, "ulimits") < 0)
		return -1;
	for (i = 0; i < n->n; i++) {
		const struct cnode *v = n->kids[2 * i + 1], *x;
		struct mts_ulimit u = { .name = n->kids[2 * i]->str };

		if (v->kind == CN_MAP) {
			if ((x = cnode_get(v, "soft")) == NULL ||
			    ulimit_value(c, x, "ulimits.soft", &u.soft) < 0 ||
			    (x = cnode_get(v, "hard")) == NULL ||
			    ulimit_value(c, x, "ulimits.hard", &u.hard) < 0)
				return x ? -1
				         : CERR(c, v,
				               "ulimits.%s: needs "
				               "soft and hard",
				               u.name);
		} else if (ulimit_value(c, v, "ulimits", &u.soft) < 0)
			return -1;
		else
			u.hard = u.soft;
		s->ulimits = xreallocarray(s->ulimits, s->nulimits + 1,
		    sizeof(*s->ulimits));
		u.name = xstrdup(u.name);
		s->ulimits[s->nulimits++] = u;
	}
	return 0;
}

#define SVC_LIST(field, key) \
	static int k_##field(struct conv *c, const struct cnode *n) \
	{ \
		return cv_strv(c, n, key, &c->svc->field, 0); \
	}

SVC_LIST(cap_add, "cap_add")
SVC_LIST(cap_drop, "cap_drop")
SVC_LIST(dns, "dns")

static int
k_extra_hosts(struct conv *c, const struct cnode *n)
{
	size_t i;

	if (n->kind == CN_MAP) { /* host: ip */
		for (i = 0; i < n->n; i++) {
			char *line;

			if (cv_want(c, n->kids[2 * i + 1], CN_SCALAR,
			        "extra_hosts") < 0)
				return -1;
			line = xasprintf("%s:%s", n->kids[2 * i]->str,
			    n->kids[2 * i + 1]->str);
			mts_strv_push(&c->svc->extra_hosts, line);
			free(line);
		}
		return 0;
	}
	if (cv_strv(c, n, "extra_hosts", &c->svc->extra_hosts, 0) < 0)
		return -1;
	for (i = 0; i < c->svc->extra_hosts.n; i++) {
		char *h = c->svc->extra_hosts.v[i], *eq = strchr(h, '=');

		if (eq)
			*eq = ':'; /* host=ip is the newer spelling */
		if (strchr(h, ':') == NULL)
			return CERR(c, n,
			    "extra_hosts: \"%s\" is not "
			    "HOST:IP",
			    h);
	}
	return 0;
}

static int
k_sysctls(struct conv *c, const struct cnode *n)
{
	return cv_kv(c, n, "sysctls", &c->svc->sysctls);
}

static int
k_logging(struct conv *c, const struct cnode *n)
{
	const struct cnode *v, *o;

	if (cv_want(c, n, CN_MAP, "logging") < 0)
		return -1;
	if ((v = cnode_get(n, "driver")) &&
	    cv_str(c, v, "logging.driver", &c->svc->log_driver) < 0)
		return -1;
	if (c->svc->log_driver && strcmp(c->svc->log_driver, "json-file") &&
	    strcmp(c->svc->log_driver, "local"))
		cv_warn(c, v,
		    "service \"%s\": logging.driver \"%s\" is not "
		    "supported; mts keeps logs in files (mtsctl logs)",
		    c->svc->name, c->svc->log_driver);
	if ((o = cnode_get(n, "options")) == NULL || cnode_is_null(o))
		return 0;
	if (cv_want(c, o, CN_MAP, "logging.options") < 0)
		return -1;
	if ((v = cnode_get(o, "max-size")) &&
	    cv_bytes(c, v, "logging.options.max-size", &c->svc->log_max_size) <
	        0)
		return -1;
	if ((v = cnode_get(o, "max-file")) &&
	    cv_u32(c, v, "logging.options.max-file", &c->svc->log_max_file) < 0)
		return -1;
	return 0;
}

/* networks and depends_on: a list of names, or a map of name: options. */
static int
check_named(struct conv *c, const struct cnode *n, const char *what)
{
	size_t i;

	if (n->kind != CN_SEQ)
		return cv_want(c, n, CN_MAP, what);
	for (i = 0; i < n->n; i++)
		if (cv_want(c, n->kids[i], CN_SCALAR, what) < 0)
			return -1;
	return 0;
}

/* Entry i of such a key: its name, and its options (NULL when it has
 * none); -1 when the options are not a mapping. */
static int
named_entry(struct conv *c, const struct cnode *n, size_t i, const char *what,
    const struct cnode **name, const struct cnode **opt)
{
	*name = n->kind == CN_SEQ ? n->kids[i] : n->kids[2 * i];
	*opt = n->kind == CN_MAP ? n->kids[2 * i + 1] : NULL;
	if (*opt != NULL && cnode_is_null(*opt))
		*opt = NULL;
	return *opt ? cv_want(c, *opt, CN_MAP, what) : 0;
}

static int
k_networks(struct conv *c, const struct cnode *n)
{
	struct mts_service *s = c->svc;
	size_t i, k;

	if (check_named(c, n, "networks") < 0)
		return -1;
	for (i = 0; i < n->n; i++) {
		const struct cnode *name, *opt, *v;
		struct mts_svc_network *sn;

		if (named_entry(c, n, i, "networks", &name, &opt) < 0)
			return -1;

		s->networks = xreallocarray(s->networks, s->nnetworks + 1,
		    sizeof(*s->networks));
		sn = &s->networks[s->nnetworks++];
		memset(sn, 0, sizeof(*sn));
		sn->name = xstrdup(name->str);
		if (!compose_has_network(c->st, sn->name))
			return CERR(c, name,
			    "service \"%s\": network \"%s\" "
			    "is not declared under the top-level networks",
			    s->name, sn->name);
		if (opt == NULL)
			continue;
		if ((v = cnode_get(opt, "aliases")) &&
		    cv_strv(c, v, "networks.aliases", &sn->aliases, 0) < 0)
			return -1;
		if ((v = cnode_get(opt, "ipv4_address")) &&
		    cv_str(c, v, "networks.ipv4_address", &sn->ipv4_address) <
		        0)
			return -1;
		for (k = 0; k < opt->n; k++) {
			const char *ok = opt->kids[2 * k]->str;

			if (strcmp(ok, "aliases") && strcmp(ok, "ipv4_address"))
				cv_warn(c, opt->kids[2 * k],
				    "service \"%s\": "
				    "networks.%s.%s is not supported (ignored)",
				    s->name, name->str, ok);
		}
	}
	return 0;
}

static int
k_depends_on(struct conv *c, const struct cnode *n)
{
	static const char *const conds[] = { "service_started",
		"service_healthy", "service_completed_successfully", NULL };
	struct mts_service *s = c->svc;
	size_t i;

	if (check_named(c, n, "depends_on") < 0)
		return -1;
	for (i = 0; i < n->n; i++) {
		const struct cnode *name, *opt, *v;
		struct mts_depend *d;

		if (named_entry(c, n, i, "depends_on", &name, &opt) < 0)
			return -1;

		s->depends = xreallocarray(s->depends, s->ndepends + 1,
		    sizeof(*s->depends));
		d = &s->depends[s->ndepends++];
		memset(d, 0, sizeof(*d));
		d->service = xstrdup(name->str);
		d->required = 1;
		if (cnode_get(c->svc_tree, d->service) == NULL)
			return CERR(c, name,
			    "service \"%s\" depends on "
			    "\"%s\", which is not a service of this stack",
			    s->name, d->service);
		snprintf(d->condition, sizeof(d->condition), "service_started");
		if (opt == NULL)
			continue;
		if ((v = cnode_get(opt, "condition")) &&
		    cv_word(c, v, "depends_on.condition", d->condition,
		        sizeof(d->condition), conds) < 0)
			return -1;
		if ((v = cnode_get(opt, "required")) &&
		    cv_bool(c, v, "depends_on.required", &d->required) < 0)
			return -1;
		if ((v = cnode_get(opt, "restart")) &&
		    cv_bool(c, v, "depends_on.restart", &d->restart) < 0)
			return -1;
	}
	return 0;
}

static int
k_deploy(struct conv *c, const struct cnode *n)
{
	return compose_deploy(c, n);
}

static int
k_xmts(struct conv *c, const struct cnode *n)
{
	return compose_xmts(c, n);
}

static int
k_build(struct conv *c, const struct cnode *n)
{
	return 0; /* judged after every key: an error without image */
}

static const struct key_rule service_keys[] = {
	{ "image", K_RUN, k_image, NULL },
	{ "command", K_RUN, k_command, NULL },
	{ "entrypoint", K_RUN, k_entrypoint, NULL },
	{ "environment", K_RUN, k_environment, NULL },
	{ "env_file", K_RUN, k_env_file, NULL },
	{ "labels", K_RUN, k_labels, NULL },
	{ "hostname", K_RUN, k_hostname, NULL },
	{ "user", K_RUN, k_user, NULL },
	{ "working_dir", K_RUN, k_working_dir, NULL },
	{ "read_only", K_RUN, k_read_only, NULL },
	{ "init", K_RUN, k_init, NULL },
	{ "stop_grace_period", K_RUN, k_stop_grace, NULL },
	{ "stop_signal", K_RUN, k_stop_signal, NULL },
	{ "healthcheck", K_RUN, k_healthcheck, NULL },
	{ "ports", K_RUN, k_ports, NULL },
	{ "volumes", K_RUN, k_volumes, NULL },
	{ "tmpfs", K_RUN, k_tmpfs, NULL },
	{ "ulimits", K_RUN, k_ulimits, NULL },
	{ "cap_add", K_RUN, k_cap_add, NULL },
	{ "cap_drop", K_RUN, k_cap_drop, NULL },
	{ "sysctls", K_RUN, k_sysctls, NULL },
	{ "extra_hosts", K_RUN, k_extra_hosts, NULL },
	{ "dns", K_RUN, k_dns, NULL },
	{ "logging", K_RUN, k_logging, NULL },
	{ "networks", K_RUN, k_networks, NULL },
	{ "depends_on", K_RUN, k_depends_on, NULL },
	{ "deploy", K_RUN, k_deploy, NULL },
	{ "x-mts", K_RUN, k_xmts, NULL },
	{ "build", K_WARN, k_build,
	    "mts does not build images; build and "
	    "push it, then deploy the image" },
	{ "privileged", K_WARN, NULL, "privileged containers are not run" },
	{ "devices", K_WARN, NULL, "host devices are not passed in" },
	{ "network_mode", K_WARN, NULL, "tasks join the stack's networks" },
	{ "pid", K_WARN, NULL, "tasks have their own pid namespace" },
	{ "ipc", K_WARN, NULL, "tasks have their own ipc namespace" },
	{ "uts", K_WARN, NULL, "tasks have their own uts namespace" },
	{ "userns_mode", K_WARN, NULL, "not supported" },
	{ "security_opt", K_WARN, NULL,
	    "mts applies its own seccomp "
	    "profile and no_new_privs" },
	{ "cgroup_parent", K_WARN, NULL,
	    "mts places tasks in its own cgroups" },
	{ "cgroup", K_WARN, NULL, "not supported" },
	{ "links", K_WARN, NULL,
	    "services find each other by name on "
	    "their networks" },
	{ "external_links", K_WARN, NULL, "use an external network" },
	{ "container_name", K_WARN, NULL, "task names are chosen by mts" },
	{ "restart", K_WARN, NULL,
	    "use deploy.restart_policy (as Swarm "
	    "does)" },
	{ "expose", K_WARN, NULL,
	    "every port is reachable on the task's "
	    "networks already" },
	{ "secrets", K_WARN, NULL,
	    "secrets are not supported yet: the "
	    "service runs without them" },
	{ "configs", K_WARN, NULL,
	    "configs are not supported yet: the "
	    "service runs without them" },
	{ "profiles", K_WARN, NULL, "every service is deployed" },
	{ "pull_policy", K_WARN, NULL, "nodes pull an image they lack" },
	{ "platform", K_WARN, NULL, "not supported" },
	{ "runtime", K_WARN, NULL, "the node's OCI runtime is used" },
	{ "scale", K_WARN, NULL, "use deploy.replicas" },
	{ "mem_limit", K_WARN, NULL, "use deploy.resources.limits.memory" },
	{ "memswap_limit", K_WARN, NULL, "not supported" },
	{ "mem_reservation", K_WARN, NULL,
	    "use deploy.resources.reservations.memory" },
	{ "cpus", K_WARN, NULL, "use deploy.resources.limits.cpus" },
	{ "cpu_shares", K_WARN, NULL, "not supported" },
	{ "cpu_quota", K_WARN, NULL, "use deploy.resources.limits.cpus" },
	{ "cpu_period", K_WARN, NULL, "not supported" },
	{ "cpuset", K_WARN, NULL, "not supported" },
	{ "pids_limit", K_WARN, NULL, "use deploy.resources.limits.pids" },
	{ "oom_kill_disable", K_WARN, NULL, "not supported" },
	{ "oom_score_adj", K_WARN, NULL, "not supported" },
	{ "shm_size", K_WARN, NULL, "not supported" },
	{ "storage_opt", K_WARN, NULL, "not supported" },
	{ "stdin_open", K_WARN, NULL, "use mtsctl exec -i" },
	{ "tty", K_WARN, NULL, "use mtsctl exec -t" },
	{ "isolation", K_WARN, NULL, "not supported" },
	{ "domainname", K_WARN, NULL, "not supported" },
	{ "mac_address", K_WARN, NULL, "not supported" },
	{ "dns_search", K_WARN, NULL, "not supported" },
	{ "dns_opt", K_WARN, NULL, "not supported" },
	{ "group_add", K_WARN, NULL, "not supported" },
	{ "volumes_from", K_WARN, NULL, "not supported" },
	{ "device_cgroup_rules", K_WARN, NULL, "not supported" },
	{ "credential_spec", K_WARN, NULL, "not supported" },
	{ "blkio_config", K_WARN, NULL, "not supported" },
	{ "annotations", K_WARN, NULL, "not supported" },
	{ "extends", K_WARN, NULL,
	    "not supported (docker stack deploy does "
	    "not take it either)" },
	{ "develop", K_WARN, NULL, "not supported" },
	{ "attach", K_WARN, NULL, "not supported" },
};

static const struct key_rule *
find_rule(const struct key_rule *t, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(t[i].key, key) == 0)
			return &t[i];
	return NULL;
}

static void
service_defaults(struct mts_service *s)
{
	s->stop_grace_ms = -1;
	s->health.retries = -1;
	s->replicas = 1;
	snprintf(s->endpoint_mode, sizeof(s->endpoint_mode), "vip");
	snprintf(s->restart.condition, sizeof(s->restart.condition), "any");
	s->restart.delay_ms = 5000;
	s->update.parallelism = 1;
	snprintf(s->update.failure_action, sizeof(s->update.failure_action),
	    "pause");
	snprintf(s->update.order, sizeof(s->update.order), "stop-first");
	s->update.monitor_ms = 5000;
	s->rollback = s->update;
	snprintf(s->placement.strategy, sizeof(s->placement.strategy),
	    "spread");
}

static int
valid_name(const char *s)
{
	size_t i;

	if (!isalnum((unsigned char)s[0]))
		return 0;
	for (i = 0; s[i]; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return 0;
	return i <= 63;
}

static int
convert_service(struct conv *c, const struct cnode *name,
    const struct cnode *body)
{
	const size_t nrules = sizeof(service_keys) / sizeof(service_keys[0]);
	const struct key_rule *r;
	size_t i;

	if (!valid_name(name->str))
		return CERR(c, name,
		    "service name \"%s\": letters, digits, "
		    "-, _ and . (starting with a letter or digit, at most "
		    "63)",
		    name->str);
	if (cnode_is_null(body))
		return CERR(c, name,
		    "service \"%s\" is empty: it needs at "
		    "least an image",
		    name->str);
	if (cv_want(c, body, CN_MAP, "service") < 0)
		return -1;
	c->svc->name = xstrdup(name->str);
	service_defaults(c->svc);
	for (i = 0; i < body->n; i++) {
		const struct cnode *k = body->kids[2 * i];
		const struct cnode *v = body->kids[2 * i + 1];

		if (strncmp(k->str, "x-", 2) == 0 && strcmp(k->str, "x-mts"))
			continue;
		r = find_rule(service_keys, nrules, k->str);
		if (r == NULL) {
			cv_warn(c, k,
			    "service \"%s\": unknown key \"%s\" "
			    "(ignored)",
			    c->svc->name, k->str);
			continue;
		}
		if (r->kind == K_WARN)
			cv_warn(c, k,
			    "service \"%s\": %s is not supported by "
			    "mts: %s (ignored)",
			    c->svc->name, k->str, r->why);
		if (r->fn && (r->kind == K_RUN || r->fn == k_build) &&
		    r->fn(c, v) < 0)
			return -1;
	}
	if (c->svc->image == NULL)
		return CERR(c, name,
		    cnode_get(body, "build")
		        ? "service \"%s\" has build but no image: mts does not "
		          "build images; build and push one, then give its name "
		          "in image"
		        : "service \"%s\" has no image",
		    name->str);
	return 0;
}

/* --- top level ------------------------------------------------------------------- */

static int
convert_services(struct conv *c, const struct cnode *svcs)
{
	struct mts_stack *st = c->st;
	size_t i;

	if (svcs == NULL || cnode_is_null(svcs))
		return 0;
	if (cv_want(c, svcs, CN_MAP, "services") < 0)
		return -1;
	c->svc_tree = svcs;
	st->services = xcalloc(svcs->n ? svcs->n : 1, sizeof(*st->services));
	for (i = 0; i < svcs->n; i++) {
		c->svc = &st->services[st->nservices++];
		if (convert_service(c, svcs->kids[2 * i],
		        svcs->kids[2 * i + 1]) < 0)
			return -1;
	}
	return 0;
}

static const char *const top_keys[] = { "version", "name", "services",
	"networks", "volumes", NULL };
static const char *const top_warned[] = { "secrets", "configs", "include",
	NULL };

int
compose_to_stack(const struct cnode *root, struct mts_stack *st, char *err,
    size_t errlen)
{
	struct conv c = { .st = st, .err = err, .errlen = errlen };
	size_t i, j;

	for (i = 0; i < root->n; i++) {
		const struct cnode *k = root->kids[2 * i];
		int known = strncmp(k->str, "x-", 2) == 0;

		for (j = 0; top_keys[j] && !known; j++)
			known = strcmp(k->str, top_keys[j]) == 0;
		for (j = 0; top_warned[j] && !known; j++) {
			if (strcmp(k->str, top_warned[j]) == 0) {
				cv_warn(&c, k,
				    "top-level %s is not supported by "
				    "mts (ignored)",
				    k->str);
				known = 1;
			}
		}
		if (!known)
			cv_warn(&c, k, "unknown top-level key \"%s\" (ignored)",
			    k->str);
	}
	if (compose_top_networks(&c, cnode_get(root, "networks")) < 0 ||
	    compose_top_volumes(&c, cnode_get(root, "volumes")) < 0 ||
	    convert_services(&c, cnode_get(root, "services")) < 0 ||
	    (c.svc_tree && compose_check_refs(&c) < 0))
		return -1;
	return 0;
}
