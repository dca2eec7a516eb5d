/* fuzz_netd_core.c: libFuzzer target for what mts-netd reads from outside its own code — the persisted attachment list, WireGuard's UAPI answers, the cluster CIDR of the config and the subnet of an n/ record. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agents/netd/netd_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A list that parses formats to text that parses to the same list. */
static void
check_attachments(const char *text)
{
	struct netd_attachments a, b;
	char *out, *again;
	size_t i;

	netd_att_init(&a);
	netd_att_init(&b);
	if (netd_att_parse(&a, text) == 0) {
		out = netd_att_format(&a);
		if (netd_att_parse(&b, out) != 0 || b.n != a.n)
			abort();
		for (i = 0; i < a.n; i++)
			if (netd_att_find(&b, a.a[i].task) == NULL ||
			    netd_att_find(&b, a.a[i].task)->host !=
			        a.a[i].host ||
			    a.a[i].host < NETD_HOST_FIRST ||
			    a.a[i].host > NETD_HOST_LAST)
				abort();
		again = netd_att_format(&b);
		if (strcmp(out, again) != 0)
			abort();
		free(again);
		free(out);
	} else if (a.n != 0) {
		abort();
	}
	netd_att_free(&a);
	netd_att_free(&b);
}

static void
check_uapi(const char *text)
{
	struct netd_peers p;
	struct netd_wg_stat st;
	size_t i;

	netd_peers_init(&p);
	netd_uapi_peers(&p, text);
	for (i = 0; i < p.n; i++)
		netd_uapi_stat(text, p.p[i].key, &st);
	for (i = 1; i < p.n; i++)
		if (memcmp(p.p[i - 1].key, p.p[i].key, NETD_KEY_LEN) > 0)
			abort();
	netd_peers_free(&p);
}

static void
check_cidr(const char *text)
{
	struct netd_cidr c;
	uint32_t ip, n;

	if (netd_cidr_parse(text, &c) == 0) {
		if (c.plen < 8 || c.plen > 23 ||
		    (c.base & ~(~0u << (32 - c.plen))) != 0)
			abort();
		n = netd_subnet_count(&c);
		if (n == 0 ||
		    netd_subnet_index(&c, netd_subnet_net(&c, n - 1)) !=
		        (int32_t)(n - 1))
			abort();
	}
	if (netd_ip_parse(text, &ip) == 0) {
		char out[16];

		netd_ip_str(out, sizeof(out), ip);
		if (netd_ip_parse(out, &n) != 0 || n != ip)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > 1 << 16)
		return 0;
	s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	check_attachments(s);
	check_uapi(s);
	check_cidr(s);
	free(s);
	return 0;
}
