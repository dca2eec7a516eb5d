/* disc_core.c: mts-netd's pure service directory — services and task addresses from the replicated records, checked and sorted, VIPs and contested published ports given out deterministically (the older service first), and the lookups the DNS server and the VIPs make. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disc_core.h"
#include "portclaim.h"
#include "xmalloc.h"

#define VIP_RANGE (DISC_VIP_LAST - DISC_VIP_FIRST + 1)
#define VIP_TRIES 8 /* hashed candidates before the first free one */

void
disc_init(struct disc *d)
{
	memset(d, 0, sizeof(*d));
}

void
disc_free(struct disc *d)
{
	if (d == NULL)
		return;
	free(d->s);
	free(d->t);
	memset(d, 0, sizeof(*d));
}

struct disc_svc *
disc_add_svc(struct disc *d)
{
	if (d->ns == d->caps) {
		d->caps = d->caps ? 2 * d->caps : 16;
		d->s = xreallocarray(d->s, d->caps, sizeof(*d->s));
	}
	memset(&d->s[d->ns], 0, sizeof(d->s[0]));
	return &d->s[d->ns++];
}

struct disc_task *
disc_add_task(struct disc *d)
{
	if (d->nt == d->capt) {
		d->capt = d->capt ? 2 * d->capt : 16;
		d->t = xreallocarray(d->t, d->capt, sizeof(*d->t));
	}
	memset(&d->t[d->nt], 0, sizeof(d->t[0]));
	return &d->t[d->nt++];
}

/* A DNS label as Compose names are: letters, digits, '-' and '_', not
 * starting with '-', no dots (a dot would split it into two labels). */
static int
label_ok(const char *s)
{
	size_t i, n = strnlen(s, DISC_LABEL_MAX);

	if (n == 0 || n >= DISC_LABEL_MAX || s[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	return 1;
}

static int
svc_cmp(const void *a, const void *b)
{
	return strcmp(((const struct disc_svc *)a)->name,
	    ((const struct disc_svc *)b)->name);
}

static int
task_cmp(const void *a, const void *b)
{
	const struct disc_task *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->task, y->task);
}

unsigned
disc_vip_candidate(const char *name, unsigned k)
{
	uint8_t h[MTS_HASH_LEN];
	mts_hash_ctx c;
	uint8_t kb[4] = { k >> 24, k >> 16, k >> 8, k };

	mts_hash_init(&c);
	mts_hash_update(&c, name, strlen(name));
	mts_hash_update(&c, kb, sizeof(kb));
	mts_hash_final(&c, h);
	return DISC_VIP_FIRST +
	    (((uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 |
	         (uint32_t)h[2] << 8 | h[3]) %
	        VIP_RANGE);
}

/* A service in age order: creation HLC, then name. */
struct age {
	uint64_t created;
	const char *name;
	size_t i;
};

static int
age_cmp(const void *a, const void *b)
{
	const struct age *x = a, *y = b;

	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The VIP host number of s: its first hashed candidate nobody holds,
 * else the lowest free one; 0 when the VIP /24 is full. */
static unsigned
vip_pick(const struct disc_svc *s, const uint8_t *used)
{
	unsigned k, h;

	for (k = 0; k < VIP_TRIES; k++)
		if (!used[h = disc_vip_candidate(s->name, k)])
			return h;
	for (h = DISC_VIP_FIRST; h <= DISC_VIP_LAST; h++)
		if (!used[h])
			return h;
	return 0;
}

/*
 * VIPs oldest service first: each takes the first of its VIP_TRIES
 * hashed candidates that no older service holds, else the lowest free
 * host number. The same services give the same VIPs on every node, and
 * what a service gets depends only on the services older than it: one
 * created later never moves it.
 */
static void
give_vips(struct disc *d, uint32_t vip_net)
{
	uint8_t used[DISC_VIP_LAST + 1];
	struct age *order;
	unsigned h;
	size_t i;

	memset(used, 0, sizeof(used));
	for (i = 0; i < d->ns; i++)
		d->s[i].vip = 0;
	if (vip_net == 0 || d->ns == 0)
		return;
	order = xcalloc(d->ns, sizeof(*order));
	for (i = 0; i < d->ns; i++)
		order[i] = (struct age){ d->s[i].created, d->s[i].name, i };
	qsort(order, d->ns, sizeof(*order), age_cmp);
	for (i = 0; i < d->ns; i++) {
		struct disc_svc *s = &d->s[order[i].i];

		if (s->dnsrr || (h = vip_pick(s, used)) == 0)
			continue;
		used[h] = 1;
		s->vip = vip_net | h;
	}
	free(order);
}

/* Every published port to the service created first that claims it. */
static void
give_ports(struct disc *d)
{
	struct mts_port_claim *c;
	size_t *holder, *owner, n = 0, i, j;

	for (i = 0; i < d->ns; i++)
		n += d->s[i].nports;
	if (n == 0)
		return;
	c = xcalloc(n, sizeof(*c));
	holder = xcalloc(n, sizeof(*holder));
	owner = xcalloc(n, sizeof(*owner));
	for (i = n = 0; i < d->ns; i++)
		for (j = 0; j < d->s[i].nports; j++, n++) {
			c[n] = (struct mts_port_claim){ d->s[i].name,
				d->s[i].created, d->s[i].ports[j].published,
				d->s[i].ports[j].udp };
			owner[n] = i;
		}
	mts_port_holders(c, n, holder);
	for (i = n = 0; i < d->ns; i++)
		for (j = 0; j < d->s[i].nports; j++, n++)
			d->s[i].ports[j].lost_to = mts_port_lost(c, holder, n)
			    ? (int)owner[holder[n]]
			    : -1;
	free(c);
	free(holder);
	free(owner);
}

static int
svc_ok(const struct disc_svc *s)
{
	size_t i;

	if (!label_ok(s->stack) || !label_ok(s->short_name) ||
	    s->nnets > DISC_NET_MAX || s->nports > DISC_PORT_MAX ||
	    s->name[0] == '\0' || memchr(s->name, '\0', DISC_NAME_MAX) == NULL)
		return 0;
	for (i = 0; i < s->nnets; i++)
		if (memchr(s->nets[i], '\0', DISC_NAME_MAX) == NULL ||
		    s->nets[i][0] == '\0')
			return 0;
	for (i = 0; i < s->nports; i++)
		if (s->ports[i].published == 0 || s->ports[i].target == 0)
			return 0;
	return 1;
}

void
disc_finish(struct disc *d, uint32_t vip_net)
{
	size_t i, k;

	for (i = k = 0; i < d->ns; i++)
		if (svc_ok(&d->s[i]))
			d->s[k++] = d->s[i];
	d->ns = k;
	if (d->ns > 1) /* (qsort and bsearch take no NULL, even for 0) */
		qsort(d->s, d->ns, sizeof(*d->s), svc_cmp);
	for (i = k = 0; i < d->ns; i++)
		if (k == 0 || strcmp(d->s[k - 1].name, d->s[i].name) != 0)
			d->s[k++] = d->s[i];
	d->ns = k;
	for (i = k = 0; i < d->nt; i++) {
		d->t[i].task[DISC_TASK_MAX - 1] = '\0';
		d->t[i].service[DISC_NAME_MAX - 1] = '\0';
		if (d->t[i].addr != 0)
			d->t[k++] = d->t[i];
	}
	d->nt = k;
	if (d->nt > 1)
		qsort(d->t, d->nt, sizeof(*d->t), task_cmp);
	for (i = k = 0; i < d->nt; i++)
		if (k == 0 || d->t[k - 1].addr != d->t[i].addr)
			d->t[k++] = d->t[i];
	d->nt = k;
	give_vips(d, vip_net);
	give_ports(d);
}

const struct disc_task *
disc_task_by_addr(const struct disc *d, uint32_t addr)
{
	size_t lo = 0, hi = d->nt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->t[mid].addr == addr)
			return &d->t[mid];
		if (d->t[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct disc_svc *
disc_svc_by_name(const struct disc *d, const char *name)
{
	struct disc_svc key;

	if (strlen(name) >= sizeof(key.name) || d->ns == 0)
		return NULL;
	snprintf(key.name, sizeof(key.name), "%s", name);
	return bsearch(&key, d->s, d->ns, sizeof(*d->s), svc_cmp);
}

const struct disc_svc *
disc_svc_by_vip(const struct disc *d, uint32_t addr)
{
	size_t i;

	for (i = 0; addr != 0 && i < d->ns; i++)
		if (d->s[i].vip == addr)
			return &d->s[i];
	return NULL;
}

const struct disc_task *
disc_task_by_id(const struct disc *d, const char *task)
{
	size_t i;

	for (i = 0; i < d->nt; i++)
		if (strcasecmp(d->t[i].task, task) == 0)
			return &d->t[i];
	return NULL;
}

const struct disc_svc *
disc_asker(const struct disc *d, uint32_t addr)
{
	const struct disc_task *t = disc_task_by_addr(d, addr);

	if (t == NULL || t->service[0] == '\0')
		return NULL;
	return disc_svc_by_name(d, t->service);
}

size_t
disc_svc_nnets(const struct disc_svc *s)
{
	return s->nnets ? s->nnets : 1;
}

void
disc_svc_net(const struct disc_svc *s, size_t i, char *out, size_t outlen)
{
	if (s->nnets == 0)
		snprintf(out, outlen, "%s_default", s->stack);
	else
		snprintf(out, outlen, "%s", s->nets[i]);
}

int
disc_visible(const struct disc_svc *from, const struct disc_svc *to)
{
	char a[DISC_NAME_MAX + 16], b[DISC_NAME_MAX + 16];
	size_t i, j;

	for (i = 0; i < disc_svc_nnets(from); i++) {
		disc_svc_net(from, i, a, sizeof(a));
		for (j = 0; j < disc_svc_nnets(to); j++) {
			disc_svc_net(to, j, b, sizeof(b));
			if (strcmp(a, b) == 0)
				return 1;
		}
	}
	return 0;
}

const struct disc_svc *
disc_svc_find(const struct disc *d, const char *stack, const char *short_name)
{
	size_t i;

	for (i = 0; i < d->ns; i++)
		if (strcasecmp(d->s[i].stack, stack) == 0 &&
		    strcasecmp(d->s[i].short_name, short_name) == 0)
			return &d->s[i];
	return NULL;
}

size_t
disc_svc_addrs(const struct disc *d, const struct disc_svc *s, uint32_t *out,
    size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < d->nt; i++) {
		if (!d->t[i].up || strcmp(d->t[i].service, s->name) != 0)
			continue;
		if (n < max)
			out[n] = d->t[i].addr;
		n++;
	}
	return n;
}
