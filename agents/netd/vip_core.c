/* vip_core.c: mts-netd's pure VIP rules — the nftables declarations that balance a service's VIP over its healthy tasks (numgen random DNAT), reject a VIP with none, and masquerade the hairpin of a task that reaches itself through its VIP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "netd_core.h"
#include "vip_core.h"
#include "xmalloc.h"

#define TASKS_MAX 1024 /* per VIP */

static void
put(struct mts_buf *b, const char *s)
{
	mts_buf_put(b, s, strlen(s));
}

/* "ip daddr VIP dnat ip to numgen random mod N map { 0 : a, 1 : b }" */
static void
dnat_rule(struct mts_buf *b, uint32_t vip, const uint32_t *a, size_t n)
{
	char ip[16], line[128];
	size_t i;

	netd_ip_str(ip, sizeof(ip), vip);
	snprintf(line, sizeof(line),
	    "\t\tip daddr %s dnat ip to numgen random mod %zu map { ", ip, n);
	put(b, line);
	for (i = 0; i < n; i++) {
		netd_ip_str(ip, sizeof(ip), a[i]);
		snprintf(line, sizeof(line), "%s%zu : %s", i ? ", " : "", i,
		    ip);
		put(b, line);
	}
	put(b, " }\n");
}

/* The DNAT rules of every VIP with a task up; the VIPs without one are
 * added to `empty` (text of a set, may stay ""). */
static void
dnat_rules(const struct disc *d, struct mts_buf *b, struct mts_buf *empty)
{
	uint32_t *a = xcalloc(TASKS_MAX, sizeof(*a));
	char ip[16];
	size_t i, n;

	for (i = 0; i < d->ns; i++) {
		const struct disc_svc *s = &d->s[i];

		if (s->dnsrr || s->vip == 0)
			continue;
		n = disc_svc_addrs(d, s, a, TASKS_MAX);
		if (n > TASKS_MAX)
			n = TASKS_MAX;
		if (n > 0) {
			dnat_rule(b, s->vip, a, n);
			continue;
		}
		netd_ip_str(ip, sizeof(ip), s->vip);
		if (empty->len > 0)
			put(empty, ", ");
		put(empty, ip);
	}
	free(a);
}

/* The tasks of s a port goes to: up, and on this node for host mode. */
static size_t
port_tasks(const struct disc *d, const struct disc_svc *s, int host,
    const uint8_t self[MTS_NODE_ID_LEN], uint32_t *a, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < d->nt && n < max; i++)
		if (d->t[i].up && strcmp(d->t[i].service, s->name) == 0 &&
		    (!host || memcmp(d->t[i].node, self, MTS_NODE_ID_LEN) == 0))
			a[n++] = d->t[i].addr;
	return n;
}

/* One published port: its DNAT (prerouting) and what the isolation
 * lets through to its tasks (allow). */
static void
port_rules(const struct disc_port *p, const uint32_t *a, size_t n,
    struct mts_buf *pre, struct mts_buf *allow)
{
	const char *proto = p->udp ? "udp" : "tcp";
	char ip[16], line[96];
	size_t i;

	snprintf(line, sizeof(line),
	    "\t\tfib daddr type local %s dport %u dnat ip to numgen random "
	    "mod %zu map { ",
	    proto, p->published, n);
	put(pre, line);
	put(allow, "\t\tip daddr { ");
	for (i = 0; i < n; i++) {
		netd_ip_str(ip, sizeof(ip), a[i]);
		snprintf(line, sizeof(line), "%s%zu : %s . %u", i ? ", " : "",
		    i, ip, p->target);
		put(pre, line);
		snprintf(line, sizeof(line), "%s%s", i ? ", " : "", ip);
		put(allow, line);
	}
	put(pre, " }\n");
	snprintf(line, sizeof(line), " } %s dport %u accept\n", proto,
	    p->target);
	put(allow, line);
}

/* Every published port with a task to go to, of the service that holds
 * it (disc_port.lost_to); how many. */
static size_t
ports(const struct disc *d, const struct vip_node *nd, struct mts_buf *pre,
    struct mts_buf *allow)
{
	uint32_t *a = xcalloc(TASKS_MAX, sizeof(*a));
	size_t i, j, n, count = 0;

	for (i = 0; i < d->ns; i++)
		for (j = 0; j < d->s[i].nports; j++) {
			const struct disc_port *p = &d->s[i].ports[j];

			if (p->lost_to >= 0)
				continue; /* an older service holds it */
			n = port_tasks(d, &d->s[i], p->host, nd->self, a,
			    TASKS_MAX);
			if (n == 0)
				continue;
			port_rules(p, a, n, pre, allow);
			count++;
		}
	free(a);
	return count;
}

/* The SNAT of ingress connections from outside the cluster that go on
 * to another node. */
static void
ingress_snat(const struct vip_node *nd, struct mts_buf *out)
{
	char gw[16], net[16], line[160];
	unsigned plen = 0;
	uint32_t m;

	if (nd->gateway == 0)
		return;
	for (m = nd->cidr_mask; m & 0x80000000u; m <<= 1)
		plen++;
	netd_ip_str(gw, sizeof(gw), nd->gateway);
	netd_ip_str(net, sizeof(net), nd->cidr_base);
	snprintf(line, sizeof(line),
	    "\t\toifname \"%s\" ct status dnat ip saddr != %s/%u snat ip to "
	    "%s\n",
	    nd->wg_if, net, plen, gw);
	put(out, line);
}

char *
vip_nft(const struct disc *d, const struct vip_node *nd)
{
	struct mts_buf rules, empty, out, pre, allow;
	char ip[16], line[160];
	size_t i, nports;

	mts_buf_init(&rules);
	mts_buf_init(&empty);
	mts_buf_init(&out);
	mts_buf_init(&pre);
	mts_buf_init(&allow);
	dnat_rules(d, &rules, &empty);
	nports = ports(d, nd, &pre, &allow);
	if (rules.len > 0) {
		put(&out,
		    "\tchain vip_prerouting {\n\t\ttype nat hook "
		    "prerouting priority -100; policy accept;\n");
		mts_buf_put(&out, rules.data, rules.len);
		put(&out,
		    "\t}\n\tchain vip_output {\n\t\ttype nat hook output "
		    "priority -100; policy accept;\n");
		mts_buf_put(&out, rules.data, rules.len);
		put(&out,
		    "\t}\n\tchain vip_postrouting {\n\t\ttype nat hook "
		    "postrouting priority 100; policy accept;\n");
		for (i = 0; i < nd->nlocal; i++) {
			netd_ip_str(ip, sizeof(ip), nd->local[i]);
			snprintf(line, sizeof(line),
			    "\t\tct status dnat ip saddr %s ip daddr %s "
			    "masquerade\n",
			    ip, ip);
			put(&out, line);
		}
		put(&out, "\t}\n");
	}
	if (empty.len > 0) {
		put(&out,
		    "\tchain vip_none {\n\t\ttype filter hook forward "
		    "priority -10; policy accept;\n\t\tip daddr { ");
		mts_buf_put(&out, empty.data, empty.len);
		put(&out, " } reject with icmpx type port-unreachable\n\t}\n");
	}
	if (nports > 0) {
		put(&out,
		    "\tchain pub_prerouting {\n\t\ttype nat hook "
		    "prerouting priority -100; policy accept;\n");
		mts_buf_put(&out, pre.data, pre.len);
		put(&out,
		    "\t}\n\tchain pub_postrouting {\n\t\ttype nat "
		    "hook postrouting priority 100; policy accept;\n");
		ingress_snat(nd, &out);
		put(&out, "\t}\n\tchain allow {\n");
		mts_buf_put(&out, allow.data, allow.len);
		put(&out, "\t}\n");
	}
	mts_buf_put(&out, "", 1);
	mts_buf_free(&rules);
	mts_buf_free(&empty);
	mts_buf_free(&pre);
	mts_buf_free(&allow);
	return (char *)out.data;
}
