/* fuzz_netd_dns.c: libFuzzer target for every DNS message mts-netd's server parses — a task's query over UDP and TCP (answered from a fixed service directory — names, tasks' names, PTR of the cluster CIDR's addresses, NODATA for other types — or forwarded) and an upstream resolver's reply to a forwarded query — checking that what it sends back parses and fits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "agents/netd/disc_core.h"
#include "agents/netd/dns_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASKER 0x0ad20102u

static struct disc dir;

static void
add(const char *stack, const char *name, int dnsrr, uint32_t addr, int n)
{
	struct disc_svc *s = disc_add_svc(&dir);
	int i;

	snprintf(s->name, sizeof(s->name), "%s_%s", stack, name);
	snprintf(s->stack, sizeof(s->stack), "%s", stack);
	snprintf(s->short_name, sizeof(s->short_name), "%s", name);
	s->dnsrr = dnsrr;
	for (i = 0; i < n; i++) {
		struct disc_task *t = disc_add_task(&dir);

		snprintf(t->task, sizeof(t->task), "%s.%d", name, i);
		snprintf(t->service, sizeof(t->service), "%s", s->name);
		t->addr = addr + (uint32_t)i;
		t->up = i != 1;
	}
}

static void
setup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	disc_init(&dir);
	dir.cidr_base = 0x0ad20000u; /* 10.210.0.0/16: its reverse names */
	dir.cidr_mask = 0xffff0000u;
	add("s", "a", 0, ASKER, 2);
	add("s", "b", 1, 0x0ad20202u, 3);
	add("s", "big", 1, 0x0ad20300u, 120);
	add("t", "c", 0, 0x0ad20402u, 1);
	disc_finish(&dir, 0x0ad2ff00u);
}

/* What the server sends must be a DNS message ldns reads back, with the
 * asker's id, and fit a UDP reply. */
static void
check_reply(const uint8_t *w, size_t len, int tcp)
{
	ldns_pkt *p = NULL;

	if (ldns_wire2pkt(&p, w, len) != LDNS_STATUS_OK || !ldns_pkt_qr(p))
		abort();
	if (!tcp && len > DNS_UDP_MAX)
		abort();
	ldns_pkt_free(p);
}

static void
one_query(const uint8_t *data, size_t size, int tcp)
{
	struct dns_out o;
	uint8_t *back = NULL;
	size_t blen;

	dns_query(&dir, ASKER, data, size, tcp, 1, 0xbeef, &o);
	if (o.verdict == DNS_ANSWER) {
		check_reply(o.wire, o.len, tcp);
	} else if (o.verdict == DNS_FORWARD) {
		ldns_pkt *p = NULL;

		if (ldns_wire2pkt(&p, o.wire, o.len) != LDNS_STATUS_OK ||
		    ldns_pkt_id(p) != 0xbeef || ldns_pkt_qr(p))
			abort();
		ldns_pkt_free(p);
		if (dns_error_reply(o.wire, o.len, o.client_id,
		        LDNS_RCODE_SERVFAIL, &back, &blen) != 0)
			abort();
		check_reply(back, blen, 1);
		free(back);
	} else if (o.wire != NULL) {
		abort();
	}
	dns_out_free(&o);
}

/* The input as a query name of type `type` (well-formed queries reach
 * the lookups: names, tasks' names, the CIDR's reverse names). */
static void
as_name(const uint8_t *data, size_t size, ldns_rr_type type)
{
	char name[300];
	ldns_pkt *q = NULL;
	uint8_t *w = NULL;
	size_t len;

	if (size >= sizeof(name))
		size = sizeof(name) - 1;
	memcpy(name, data, size);
	name[size] = '\0';
	if (ldns_pkt_query_new_frm_str(&q, name, type, LDNS_RR_CLASS_IN,
	        LDNS_RD) != LDNS_STATUS_OK) {
		ldns_pkt_free(q);
		return;
	}
	if (ldns_pkt2wire(&w, q, &len) == LDNS_STATUS_OK)
		one_query(w, len, 0);
	free(w);
	ldns_pkt_free(q);
}

/* The first bytes as a reverse name of the directory's /24s
 * ("<b0>.<b1 mod 8>.210.10.in-addr.arpa") of the type b2 picks, so that
 * the PTR answers (tasks up and down, VIPs, gateways) are reached from
 * an empty corpus. */
static void
as_reverse(const uint8_t *data, size_t size)
{
	static const ldns_rr_type types[] = { LDNS_RR_TYPE_PTR, LDNS_RR_TYPE_A,
		LDNS_RR_TYPE_AAAA, LDNS_RR_TYPE_ANY };
	char name[64];
	ldns_pkt *q = NULL;
	uint8_t *w = NULL;
	size_t len;

	if (size < 3)
		return;
	snprintf(name, sizeof(name), "%u.%u.210.10.in-addr.arpa", data[0],
	    data[1] % 8 == 7 ? 255 : data[1] % 8);
	if (ldns_pkt_query_new_frm_str(&q, name, types[data[2] % 4],
	        LDNS_RR_CLASS_IN, LDNS_RD) == LDNS_STATUS_OK &&
	    ldns_pkt2wire(&w, q, &len) == LDNS_STATUS_OK) {
		one_query(w, len, 0);
		one_query(w, len, 1);
	}
	free(w);
	ldns_pkt_free(q);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *back = NULL;
	size_t blen;

	setup();
	if (size > 1 << 16)
		return 0;
	one_query(data, size, 0);
	one_query(data, size, 1);
	if (dns_upstream(data, size, "example.org", LDNS_RR_TYPE_A, 7, &back,
	        &blen) == 0) {
		check_reply(back, blen, 1);
		free(back);
	}
	as_name(data, size, LDNS_RR_TYPE_A);
	as_name(data, size, LDNS_RR_TYPE_PTR);
	as_name(data, size, LDNS_RR_TYPE_AAAA);
	as_reverse(data, size);
	return 0;
}
