/* netd_nft_core.c: mts-netd's pure network membership — network names and their comma-joined lists, and the isolation part of the nftables table (which task addresses may reach this node's tasks: those that share a network with them). */
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
