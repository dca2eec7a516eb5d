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

char *
vip_nft(const struct disc *d, const uint32_t *local, size_t nlocal)
{
	struct mts_buf rules, empty, out;
	char ip[16], line[160];
	size_t i;

	mts_buf_init(&rules);
	mts_buf_init(&empty);
	mts_buf_init(&out);
	dnat_rules(d, &rules, &empty);
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
		for (i = 0; i < nlocal; i++) {
			netd_ip_str(ip, sizeof(ip), local[i]);
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
	mts_buf_put(&out, "", 1);
	mts_buf_free(&rules);
	mts_buf_free(&empty);
	return (char *)out.data;
}
