/* netd_core.c: mts-netd's pure decisions — addressing in the cluster CIDR, the /24 claim and its collision rule, task host numbers and their persisted form, the WireGuard peer set and the UAPI lines that change it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mtserr.h"
#include "netd_core.h"
#include "xmalloc.h"

/* --- addresses --------------------------------------------------------------- */

int
netd_ip_parse(const char *text, uint32_t *out)
{
	unsigned a, b, c, d;
	char tail;

	if (sscanf(text, "%3u.%3u.%3u.%3u%c", &a, &b, &c, &d, &tail) != 4 ||
	    a > 255 || b > 255 || c > 255 || d > 255)
		return -MTS_ERR_INVAL;
	*out = a << 24 | b << 16 | c << 8 | d;
	return 0;
}

void
netd_ip_str(char *out, size_t outlen, uint32_t addr)
{
	snprintf(out, outlen, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 255,
	    (addr >> 8) & 255, addr & 255);
}

int
netd_cidr_parse(const char *text, struct netd_cidr *out)
{
	char ip[32];
	const char *slash = strchr(text, '/');
	char *end;
	unsigned long plen;
	uint32_t base, mask;

	if (slash == NULL || (size_t)(slash - text) >= sizeof(ip))
		return -MTS_ERR_INVAL;
	memcpy(ip, text, slash - text);
	ip[slash - text] = '\0';
	plen = strtoul(slash + 1, &end, 10);
	if (slash[1] == '\0' || *end != '\0' || plen < 8 || plen > 23 ||
	    netd_ip_parse(ip, &base) < 0)
		return -MTS_ERR_INVAL;
	mask = ~0u << (32 - plen);
	if ((base & ~mask) != 0)
		return -MTS_ERR_INVAL;
	out->base = base;
	out->plen = (unsigned)plen;
	return 0;
}

uint32_t
netd_subnet_count(const struct netd_cidr *c)
{
	return (1u << (24 - c->plen)) - 1;
}

uint32_t
netd_subnet_net(const struct netd_cidr *c, uint32_t idx)
{
	return c->base + (idx << 8);
}

int32_t
netd_subnet_index(const struct netd_cidr *c, uint32_t net)
{
	uint32_t mask = ~0u << (32 - c->plen);

	if ((net & mask) != c->base || (net & 255) != 0)
		return -1;
	return (int32_t)((net - c->base) >> 8);
}

/* --- the /24 claim ----------------------------------------------------------- */

uint32_t
netd_candidate(const uint8_t node[MTS_NODE_ID_LEN], uint32_t k, uint32_t n)
{
	uint8_t in[MTS_NODE_ID_LEN + 4], h[MTS_HASH_LEN];

	memcpy(in, node, MTS_NODE_ID_LEN);
	in[MTS_NODE_ID_LEN] = k >> 24;
	in[MTS_NODE_ID_LEN + 1] = k >> 16;
	in[MTS_NODE_ID_LEN + 2] = k >> 8;
	in[MTS_NODE_ID_LEN + 3] = k;
	mts_blake2b256(h, in, sizeof(in));
	return ((uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 |
	           (uint32_t)h[2] << 8 | h[3]) %
	    n;
}

/* Whether another node claims idx; with lower set, only one whose id is
 * lower than self's counts. */
static int
claimed(const uint8_t self[MTS_NODE_ID_LEN], int32_t idx,
    const struct netd_claim *o, size_t n, int lower)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (o[i].subnet != idx ||
		    memcmp(o[i].node, self, MTS_NODE_ID_LEN) == 0)
			continue;
		if (!lower || memcmp(o[i].node, self, MTS_NODE_ID_LEN) < 0)
			return 1;
	}
	return 0;
}

int32_t
netd_subnet_choose(const uint8_t self[MTS_NODE_ID_LEN], int32_t current,
    const struct netd_claim *others, size_t nothers, uint32_t n)
{
	uint32_t k, idx;

	if (n == 0)
		return -1;
	if (current >= 0 && (uint32_t)current < n &&
	    !claimed(self, current, others, nothers, 1))
		return current;
	/* the hashed candidates first, then every /24 in order, so a full
	 * space is found full */
	for (k = 0; k < 4 * n; k++) {
		idx = netd_candidate(self, k, n);
		if (!claimed(self, (int32_t)idx, others, nothers, 0))
			return (int32_t)idx;
	}
	for (idx = 0; idx < n; idx++)
		if (!claimed(self, (int32_t)idx, others, nothers, 0))
			return (int32_t)idx;
	return -1;
}

/* --- attachments --------------------------------------------------------------- */

void
netd_att_init(struct netd_attachments *s)
{
	memset(s, 0, sizeof(*s));
}

void
netd_att_free(struct netd_attachments *s)
{
	if (s == NULL)
		return;
	free(s->a);
	memset(s, 0, sizeof(*s));
}

const struct netd_attach *
netd_att_find(const struct netd_attachments *s, const char *task)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->a[i].task, task) == 0)
			return &s->a[i];
	return NULL;
}

static int
host_used(const struct netd_attachments *s, unsigned host)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->a[i].host == host)
			return 1;
	return 0;
}

/* Valid task ids: 1..NETD_TASK_MAX-1 bytes of [A-Za-z0-9_.-], but not
 * "." or "..": the id names the task's namespace file in netd's ns
 * directory, where those two are the directory and its parent. */
static int
task_ok(const char *task)
{
	size_t i, n = strlen(task);

	if (n == 0 || n >= NETD_TASK_MAX || strcmp(task, ".") == 0 ||
	    strcmp(task, "..") == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		           "0123456789_.-",
		        task[i]) == NULL)
			return 0;
	return 1;
}

static struct netd_attach *
att_push(struct netd_attachments *s, const char *task, unsigned host)
{
	struct netd_attach *a;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->a = xreallocarray(s->a, s->cap, sizeof(*s->a));
	}
	a = &s->a[s->n++];
	memset(a, 0, sizeof(*a));
	snprintf(a->task, sizeof(a->task), "%s", task);
	a->host = (uint8_t)host;
	return a;
}

const struct netd_attach *
netd_att_add(struct netd_attachments *s, const char *task, int *created)
{
	const struct netd_attach *a;
	unsigned host;

	*created = 0;
	if (!task_ok(task))
		return NULL;
	if ((a = netd_att_find(s, task)) != NULL)
		return a;
	for (host = NETD_HOST_FIRST; host <= NETD_HOST_LAST; host++)
		if (!host_used(s, host)) {
			*created = 1;
			return att_push(s, task, host);
		}
	return NULL;
}

int
netd_att_restore(struct netd_attachments *s, const char *task, unsigned host)
{
	if (!task_ok(task) || host < NETD_HOST_FIRST || host > NETD_HOST_LAST)
		return -MTS_ERR_INVAL;
	if (netd_att_find(s, task) != NULL || host_used(s, host))
		return -MTS_ERR_CONFLICT;
	att_push(s, task, host);
	return 0;
}

int
netd_att_set_nets(struct netd_attachments *s, const char *task,
    const char *nets)
{
	struct netd_attach *a = (struct netd_attach *)netd_att_find(s, task);

	if (a == NULL)
		return -MTS_ERR_NOTFOUND;
	if (strcmp(a->nets, nets) == 0)
		return 0;
	snprintf(a->nets, sizeof(a->nets), "%s", nets);
	return 1;
}

int
netd_att_remove(struct netd_attachments *s, const char *task)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->a[i].task, task) == 0) {
			s->a[i] = s->a[--s->n];
			return 1;
		}
	return 0;
}

char *
netd_att_format(const struct netd_attachments *s)
{
	struct mts_buf b;
	char line[NETD_TASK_MAX + NETD_NETS_TEXT + 8];
	unsigned host;
	size_t i;

	mts_buf_init(&b);
	for (host = NETD_HOST_FIRST; host <= NETD_HOST_LAST; host++)
		for (i = 0; i < s->n; i++)
			if (s->a[i].host == host) {
				snprintf(line, sizeof(line), "%s %u%s%s\n",
				    s->a[i].task, host,
				    s->a[i].nets[0] ? " " : "", s->a[i].nets);
				mts_buf_put(&b, line, strlen(line));
			}
	mts_buf_put_u8(&b, 0);
	return (char *)b.data;
}

int
netd_att_parse(struct netd_attachments *s, const char *text)
{
	char task[NETD_TASK_MAX + 1], nets[NETD_NETS_TEXT + 1], tail;
	const char *p = text, *nl;
	unsigned host;
	char line[NETD_TASK_MAX + NETD_NETS_TEXT + 16];
	int k;

	s->n = 0;
	for (; *p != '\0'; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL ||
		    (size_t)(nl - p) >= sizeof(line))
			goto bad;
		memcpy(line, p, nl - p);
		line[nl - p] = '\0';
		nets[0] = '\0';
		k = sscanf(line, "%128s %3u %1024s%c", task, &host, nets,
		    &tail);
		if ((k != 2 && k != 3) || netd_att_restore(s, task, host) < 0 ||
		    !netd_nets_valid(nets) ||
		    netd_att_set_nets(s, task, nets) < 0)
			goto bad;
	}
	return 0;
bad:
	s->n = 0;
	return -MTS_ERR_INVAL;
}

/* --- peers ------------------------------------------------------------------------- */

void
netd_peers_init(struct netd_peers *p)
{
	memset(p, 0, sizeof(*p));
}

void
netd_peers_free(struct netd_peers *p)
{
	if (p == NULL)
		return;
	free(p->p);
	memset(p, 0, sizeof(*p));
}

static void
peers_push(struct netd_peers *p, const struct netd_peer *x)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->p = xreallocarray(p->p, p->cap, sizeof(*p->p));
	}
	p->p[p->n++] = *x;
}

static int
peer_cmp(const void *a, const void *b)
{
	return memcmp(((const struct netd_peer *)a)->key,
	    ((const struct netd_peer *)b)->key, NETD_KEY_LEN);
}

/* Whether a node with a lower id than nodes[i] claims its /24. */
static int
contested(const struct netd_node *nodes, size_t n, size_t i)
{
	size_t j;

	for (j = 0; j < n; j++)
		if (j != i && nodes[j].subnet == nodes[i].subnet &&
		    memcmp(nodes[j].node, nodes[i].node, MTS_NODE_ID_LEN) < 0)
			return 1;
	return 0;
}

void
netd_peers_want(struct netd_peers *out, const uint8_t self[MTS_NODE_ID_LEN],
    const struct netd_node *nodes, size_t n, const struct netd_cidr *cidr,
    unsigned port)
{
	struct netd_peer p;
	size_t i;

	out->n = 0;
	for (i = 0; i < n; i++) {
		const struct netd_node *x = &nodes[i];

		if (memcmp(x->node, self, MTS_NODE_ID_LEN) == 0 || !x->alive ||
		    !x->has_key || x->host[0] == '\0' || x->subnet < 0 ||
		    (uint32_t)x->subnet >= netd_subnet_count(cidr) ||
		    contested(nodes, n, i))
			continue;
		memset(&p, 0, sizeof(p));
		memcpy(p.node, x->node, MTS_NODE_ID_LEN);
		memcpy(p.key, x->key, NETD_KEY_LEN);
		if (strchr(x->host, ':') != NULL) /* IPv6 literal */
			snprintf(p.endpoint, sizeof(p.endpoint), "[%s]:%u",
			    x->host, port);
		else
			snprintf(p.endpoint, sizeof(p.endpoint), "%s:%u",
			    x->host, port);
		p.net = netd_subnet_net(cidr, (uint32_t)x->subnet);
		peers_push(out, &p);
	}
	if (out->n > 1)
		qsort(out->p, out->n, sizeof(*out->p), peer_cmp);
}

static void
put_str(struct mts_buf *b, const char *s)
{
	mts_buf_put(b, s, strlen(s));
}

static void
put_key(struct mts_buf *b, const uint8_t key[NETD_KEY_LEN])
{
	char hex[2 * NETD_KEY_LEN + 1];

	mts_hex(hex, key, NETD_KEY_LEN);
	put_str(b, "public_key=");
	put_str(b, hex);
	put_str(b, "\n");
}

static void
put_peer(struct mts_buf *b, const struct netd_peer *p)
{
	char ip[16];

	netd_ip_str(ip, sizeof(ip), p->net);
	put_key(b, p->key);
	put_str(b, "endpoint=");
	put_str(b, p->endpoint);
	put_str(b, "\nreplace_allowed_ips=true\nallowed_ip=");
	put_str(b, ip);
	put_str(b, "/24\n");
}

static int
peer_same(const struct netd_peer *a, const struct netd_peer *b)
{
	return a->net == b->net && strcmp(a->endpoint, b->endpoint) == 0;
}

char *
netd_peers_diff(const struct netd_peers *have, const struct netd_peers *want)
{
	struct mts_buf b;
	size_t i = 0, j = 0;
	int c;

	mts_buf_init(&b);
	while (i < have->n || j < want->n) {
		c = i == have->n   ? 1
		    : j == want->n ? -1
		                   : peer_cmp(&have->p[i], &want->p[j]);
		if (c < 0) {
			put_key(&b, have->p[i++].key);
			put_str(&b, "remove=true\n");
		} else if (c > 0) {
			put_peer(&b, &want->p[j++]);
		} else {
			if (!peer_same(&have->p[i], &want->p[j]))
				put_peer(&b, &want->p[j]);
			i++;
			j++;
		}
	}
	mts_buf_put_u8(&b, 0);
	return (char *)b.data;
}

void
netd_peers_copy(struct netd_peers *dst, const struct netd_peers *src)
{
	dst->n = 0;
	for (size_t i = 0; i < src->n; i++)
		peers_push(dst, &src->p[i]);
}

/* --- UAPI answers ------------------------------------------------------------------ */

void
netd_uapi_peers(struct netd_peers *out, const char *get)
{
	const char *p = get;
	struct netd_peer x;

	out->n = 0;
	while ((p = strstr(p, "public_key=")) != NULL) {
		p += strlen("public_key=");
		memset(&x, 0, sizeof(x));
		if (strlen(p) >= 2 * NETD_KEY_LEN &&
		    (p[2 * NETD_KEY_LEN] == '\n' ||
		        p[2 * NETD_KEY_LEN] == '\0') &&
		    mts_unhex(x.key, sizeof(x.key), p, 2 * NETD_KEY_LEN) == 0)
			peers_push(out, &x);
	}
	if (out->n > 1)
		qsort(out->p, out->n, sizeof(*out->p), peer_cmp);
}

/* The value of "name=" on a line of [p, end), 0 when absent. */
static uint64_t
uapi_u64(const char *p, const char *end, const char *name)
{
	size_t nl = strlen(name);
	const char *line;

	for (line = p; line < end; line = strchr(line, '\n') + 1) {
		if ((size_t)(end - line) > nl && strncmp(line, name, nl) == 0)
			return strtoull(line + nl, NULL, 10);
		if (strchr(line, '\n') == NULL)
			break;
	}
	return 0;
}

void
netd_uapi_stat(const char *get, const uint8_t key[NETD_KEY_LEN],
    struct netd_wg_stat *st)
{
	char hex[2 * NETD_KEY_LEN + 1], pat[2 * NETD_KEY_LEN + 16];
	const char *p, *end;

	memset(st, 0, sizeof(*st));
	mts_hex(hex, key, NETD_KEY_LEN);
	snprintf(pat, sizeof(pat), "public_key=%s\n", hex);
	if (get == NULL || (p = strstr(get, pat)) == NULL)
		return;
	p += strlen(pat);
	if ((end = strstr(p, "public_key=")) == NULL)
		end = p + strlen(p);
	st->handshake_sec = uapi_u64(p, end, "last_handshake_time_sec=");
	st->rx = uapi_u64(p, end, "rx_bytes=");
	st->tx = uapi_u64(p, end, "tx_bytes=");
}
