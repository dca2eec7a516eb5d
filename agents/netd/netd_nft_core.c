/* netd_nft_core.c: mts-netd's pure network membership — network names and their comma-joined lists, and the isolation part of the nftables table (which task addresses may reach this node's tasks: those that share a network with them), and the element changes that turn one table into the next without rebuilding it. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "mtserr.h"
#include "netd_core.h"
#include "xmalloc.h"

int
netd_net_ok(const char *name)
{
	size_t i, n = name ? strlen(name) : 0;

	if (n == 0 || n >= NETD_NET_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		           "0123456789_.-",
		        name[i]) == NULL)
			return 0;
	return 1;
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
netd_nets_join(char *const *names, size_t n, char *out, size_t outlen)
{
	char **v;
	size_t i, len = 0;
	int rc = -MTS_ERR_INVAL;

	out[0] = '\0';
	if (n > NETD_NETS_MAX)
		return -MTS_ERR_INVAL;
	v = xcalloc(n + 1, sizeof(*v));
	for (i = 0; i < n; i++) {
		if (!netd_net_ok(names[i]))
			goto out;
		v[i] = names[i];
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), str_cmp);
	for (i = 0; i < n; i++) {
		if (i > 0 && strcmp(v[i], v[i - 1]) == 0)
			continue;
		if (len + strlen(v[i]) + 2 > outlen)
			goto out;
		len += (size_t)snprintf(out + len, outlen - len, "%s%s",
		    len ? "," : "", v[i]);
	}
	rc = 0;
out:
	if (rc < 0)
		out[0] = '\0';
	free(v);
	return rc;
}

int
netd_nets_valid(const char *nets)
{
	char name[NETD_NET_MAX];
	const char *p = nets;
	size_t k, count = 0;

	if (*p == '\0')
		return 1;
	for (;;) {
		k = strcspn(p, ",");
		if (k == 0 || k >= sizeof(name) || ++count > NETD_NETS_MAX)
			return 0;
		memcpy(name, p, k);
		name[k] = '\0';
		if (!netd_net_ok(name))
			return 0;
		if (p[k] == '\0')
			return 1;
		p += k + 1;
	}
}

int
netd_nets_has(const char *nets, const char *name)
{
	size_t k, n = strlen(name);
	const char *p = nets;

	while (p != NULL && *p != '\0') {
		k = strcspn(p, ",");
		if (k == n && strncmp(p, name, n) == 0)
			return 1;
		p = p[k] ? p + k + 1 : NULL;
	}
	return 0;
}

/* --- the isolation part ------------------------------------------------------- */

static void __attribute__((format(printf, 2, 3)))
bprintf(struct mts_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fatalx("out of memory");
	va_end(ap);
	mts_buf_put(b, s, strlen(s));
	free(s);
}

/* One network with a task on this node, and its addresses. */
struct iso_net {
	char name[NETD_NET_MAX];
	uint32_t *addr;
	size_t n, cap;
};

struct iso {
	struct iso_net *net;
	size_t n, cap;
};

static struct iso_net *
iso_find(struct iso *s, const char *name, int add)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->net[i].name, name) == 0)
			return &s->net[i];
	if (!add)
		return NULL;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->net = xreallocarray(s->net, s->cap, sizeof(*s->net));
	}
	memset(&s->net[s->n], 0, sizeof(s->net[s->n]));
	snprintf(s->net[s->n].name, sizeof(s->net[s->n].name), "%s", name);
	return &s->net[s->n++];
}

static void
addr_push(struct iso_net *x, uint32_t a)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 8;
		x->addr = xreallocarray(x->addr, x->cap, sizeof(*x->addr));
	}
	x->addr[x->n++] = a;
}

/* Calls fn for each name of the comma-joined list. */
static void
nets_each(const char *nets, void (*fn)(void *, const char *), void *arg)
{
	char name[NETD_NET_MAX];
	const char *p = nets;
	size_t k;

	while (p != NULL && *p != '\0') {
		k = strcspn(p, ",");
		if (k > 0 && k < sizeof(name)) {
			memcpy(name, p, k);
			name[k] = '\0';
			fn(arg, name);
		}
		p = p[k] ? p + k + 1 : NULL;
	}
}

struct iso_add {
	struct iso *s;
	uint32_t addr;
	int create;
};

static void
iso_add_one(void *arg, const char *name)
{
	struct iso_add *a = arg;
	struct iso_net *x = iso_find(a->s, name, a->create);

	if (x != NULL && !a->create)
		addr_push(x, a->addr);
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int
net_cmp(const void *a, const void *b)
{
	return strcmp(((const struct iso_net *)a)->name,
	    ((const struct iso_net *)b)->name);
}

/* "set NAME { type ipv4_addr; elements = { ... } }", the addresses sorted
 * and without duplicates. */
static void
emit_set(struct mts_buf *b, const char *set, const char *comment,
    uint32_t *addr, size_t n)
{
	char ip[16];
	size_t i, k = 0;

	if (n > 1)
		qsort(addr, n, sizeof(*addr), u32_cmp);
	bprintf(b, "\tset %s {\n\t\ttype ipv4_addr\n", set);
	if (comment != NULL)
		bprintf(b, "\t\tcomment \"%s\"\n", comment);
	for (i = 0; i < n; i++) {
		if (i > 0 && addr[i] == addr[i - 1])
			continue;
		netd_ip_str(ip, sizeof(ip), addr[i]);
		bprintf(b, "%s%s", k++ ? ", " : "\t\telements = { ", ip);
	}
	bprintf(b, "%s\t}\n", k ? " }\n" : "");
}

char *
netd_nft_isolation(const struct netd_member *m, size_t n, const char *bridge)
{
	struct iso s = { 0 };
	struct iso_net known = { 0 };
	struct mts_buf b;
	char set[32];
	size_t i;

	/* the networks with a task here, then every member's addresses */
	for (i = 0; i < n; i++) {
		struct iso_add a = { &s, m[i].addr, 1 };

		if (m[i].local && m[i].nets)
			nets_each(m[i].nets, iso_add_one, &a);
	}
	if (s.n > 1) /* qsort takes no NULL, even for 0 */
		qsort(s.net, s.n, sizeof(*s.net), net_cmp);
	for (i = 0; i < n; i++) {
		struct iso_add a = { &s, m[i].addr, 0 };

		if (m[i].nets == NULL || m[i].nets[0] == '\0')
			continue;
		nets_each(m[i].nets, iso_add_one, &a);
		addr_push(&known, m[i].addr);
	}
	mts_buf_init(&b);
	for (i = 0; i < s.n; i++) {
		snprintf(set, sizeof(set), "net%zu", i);
		emit_set(&b, set, s.net[i].name, s.net[i].addr, s.net[i].n);
	}
	emit_set(&b, "known", "on some network", known.addr, known.n);
	bprintf(&b,
	    "\tchain forward {\n"
	    "\t\ttype filter hook forward priority filter; policy accept;\n"
	    "\t\toifname \"%s\" ct state established,related accept\n"
	    "\t\toifname \"%s\" jump isolate\n"
	    "\t}\n"
	    "\tchain allow {\n\t}\n"
	    "\tchain isolate {\n",
	    bridge, bridge);
	for (i = 0; i < s.n; i++)
		bprintf(&b,
		    "\t\tip saddr @net%zu ip daddr @net%zu accept "
		    "comment \"%s\"\n",
		    i, i, s.net[i].name);
	bprintf(&b,
	    "\t\tip saddr != @known ip daddr != @known accept "
	    "comment \"on no network\"\n"
	    "\t\tjump allow\n"
	    "\t\tcounter drop\n"
	    "\t}\n");
	mts_buf_put_u8(&b, 0);
	for (i = 0; i < s.n; i++)
		free(s.net[i].addr);
	free(s.net);
	free(known.addr);
	return (char *)b.data;
}

/* --- from one table to the next ----------------------------------------------- */

/* A cursor over a text's lines. */
struct lines {
	const char *p;
};

/* The next line (without its newline) in *line and *len; 0 at the end. */
static int
line_next(struct lines *l, const char **line, size_t *len)
{
	const char *nl;

	if (*l->p == '\0')
		return 0;
	*line = l->p;
	nl = strchr(l->p, '\n');
	*len = nl ? (size_t)(nl - l->p) : strlen(l->p);
	l->p = nl ? nl + 1 : l->p + *len;
	return 1;
}

static int
starts(const char *line, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(line, prefix, n) == 0;
}

#define ELEMENTS "\t\telements = { "

/* The addresses of an elements line (host order, ascending as emit_set
 * writes them) appended to *v; -1 when it is not such a line. */
static int
elements_parse(const char *line, size_t len, uint32_t **v, size_t *n,
    size_t *cap)
{
	const char *p = line + strlen(ELEMENTS), *end = line + len;
	char ip[16];
	struct in_addr a;
	size_t k;

	if (len < strlen(ELEMENTS) + 2 || memcmp(end - 2, " }", 2) != 0)
		return -1;
	end -= 2;
	while (p < end) {
		for (k = 0; p + k < end && p[k] != ','; k++)
			;
		if (k == 0 || k >= sizeof(ip))
			return -1;
		memcpy(ip, p, k);
		ip[k] = '\0';
		if (inet_pton(AF_INET, ip, &a) != 1)
			return -1;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 16;
			*v = xreallocarray(*v, *cap, sizeof(**v));
		}
		(*v)[*n] = ntohl(a.s_addr);
		if (*n > 0 && (*v)[*n] <= (*v)[*n - 1])
			return -1;
		(*n)++;
		p += k;
		if (p < end && (p + 2 > end || memcmp(p, ", ", 2) != 0))
			return -1;
		if (p < end)
			p += 2;
	}
	return 0;
}

/* One set's block after its "\tset NAME {" line: the lines other than its
 * elements (up to and including "\t}") must match between a and b, its
 * elements go to av/bv. 0, or -1 when the blocks differ otherwise. */
struct set_elems {
	uint32_t *v;
	size_t n, cap;
};

static int
set_block(struct lines *a, struct lines *b, struct set_elems *ae,
    struct set_elems *be, int *addrs)
{
	const char *la, *lb;
	size_t na, nb;
	int ga, gb;

	*addrs = 0;
	for (;;) {
		ga = line_next(a, &la, &na);
		if (ga && starts(la, na, ELEMENTS)) {
			if (elements_parse(la, na, &ae->v, &ae->n, &ae->cap) <
			    0)
				return -1;
			ga = line_next(a, &la, &na);
		}
		gb = line_next(b, &lb, &nb);
		if (gb && starts(lb, nb, ELEMENTS)) {
			if (elements_parse(lb, nb, &be->v, &be->n, &be->cap) <
			    0)
				return -1;
			gb = line_next(b, &lb, &nb);
		}
		if (!ga || !gb || na != nb || memcmp(la, lb, na) != 0)
			return -1;
		if (na == strlen("\t\ttype ipv4_addr") &&
		    starts(la, na, "\t\ttype ipv4_addr"))
			*addrs = 1;
		if (na == 2 && memcmp(la, "\t}", 2) == 0)
			return 0;
	}
}

/* "VERB element TABLE SET { a, b }" for the addresses of x not in y
 * (both ascending). */
static void
elements_emit(struct mts_buf *out, const char *verb, const char *table,
    const char *set, size_t setlen, const struct set_elems *x,
    const struct set_elems *y)
{
	size_t i, j = 0, k = 0;
	char ip[16];

	for (i = 0; i < x->n; i++) {
		while (j < y->n && y->v[j] < x->v[i])
			j++;
		if (j < y->n && y->v[j] == x->v[i])
			continue;
		if (k++ == 0)
			bprintf(out, "%s element %s %.*s { ", verb, table,
			    (int)setlen, set);
		netd_ip_str(ip, sizeof(ip), x->v[i]);
		bprintf(out, "%s%s", k > 1 ? ", " : "", ip);
	}
	if (k > 0)
		bprintf(out, " }\n");
}

char *
netd_nft_delta(const char *from, const char *to, const char *table)
{
	struct lines a = { from }, b = { to };
	struct set_elems ae = { 0 }, be = { 0 };
	struct mts_buf out;
	const char *la, *lb, *name;
	size_t na, nb, nlen;
	int ga, gb, addrs, ok = 0;

	mts_buf_init(&out);
	for (;;) {
		ga = line_next(&a, &la, &na);
		gb = line_next(&b, &lb, &nb);
		if (!ga || !gb) {
			ok = !ga && !gb;
			break;
		}
		if (na != nb || memcmp(la, lb, na) != 0)
			break;
		if (!starts(la, na, "\tset ") || la[na - 1] != '{')
			continue;
		/* "\tset NAME {" */
		name = la + 5;
		nlen = na - 5 - 2;
		ae.n = be.n = 0;
		if (set_block(&a, &b, &ae, &be, &addrs) < 0 ||
		    (!addrs && (ae.n || be.n)))
			break;
		elements_emit(&out, "delete", table, name, nlen, &ae, &be);
		elements_emit(&out, "add", table, name, nlen, &be, &ae);
	}
	free(ae.v);
	free(be.v);
	if (!ok) {
		mts_buf_free(&out);
		return NULL;
	}
	mts_buf_put_u8(&out, 0);
	return (char *)out.data;
}
