/* test_netd_dns.c: unit tests of mts-netd's service directory and DNS core (agents/netd/disc_core.c, dns_core.c) — which names a task may resolve (its stack's short names, <service>.<stack>.mts, tasks.<service>, only over a shared network), VIP or task addresses, healthy tasks only, PTR records of the cluster CIDR's task addresses and VIPs, NODATA (AAAA) for names we know, forwarding and its reply check, and malformed queries (truncated, compression loops, huge counts) answered FORMERR or dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ldns/ldns.h>

#include "agents/netd/disc_core.h"
#include "agents/netd/dns_core.h"
#include "agents/netd/netd_core.h"
#include "agents/netd/vip_core.h"
#include "portclaim.h"

#define VIPNET 0x0ad2ff00u /* 10.210.255.0 */
#define FRONT1 0x0ad20102u /* 10.210.1.2 */
#define API1 0x0ad20103u
#define API2 0x0ad20202u
#define APIDOWN 0x0ad20203u
#define DB1 0x0ad20302u
#define OTHER1 0x0ad20304u /* stack "other" */
#define SHARED1 0x0ad20305u
#define NOSVC 0x0ad20306u

static void
svc(struct disc *d, const char *stack, const char *name, int dnsrr,
    const char *net1, const char *net2)
{
	struct disc_svc *s = disc_add_svc(d);

	snprintf(s->name, sizeof(s->name), "%s_%s", stack, name);
	snprintf(s->stack, sizeof(s->stack), "%s", stack);
	snprintf(s->short_name, sizeof(s->short_name), "%s", name);
	s->dnsrr = dnsrr;
	if (net1 != NULL)
		snprintf(s->nets[s->nnets++], DISC_NAME_MAX, "%s", net1);
	if (net2 != NULL)
		snprintf(s->nets[s->nnets++], DISC_NAME_MAX, "%s", net2);
}

static void
task(struct disc *d, const char *id, const char *service, uint32_t addr, int up)
{
	struct disc_task *t = disc_add_task(d);

	snprintf(t->task, sizeof(t->task), "%s", id);
	snprintf(t->service, sizeof(t->service), "%s", service);
	t->addr = addr;
	t->up = up;
}

/* shop: front, api (dnsrr: no, two tasks up, one down), db (dnsrr);
 * other: web (its own default network) and pub on the external "ext"
 * network that shop_api joins too. */
static void
fixture(struct disc *d)
{
	disc_init(d);
	d->cidr_base = 0x0ad20000u; /* 10.210.0.0/16 */
	d->cidr_mask = 0xffff0000u;
	svc(d, "shop", "front", 0, NULL, NULL);
	svc(d, "shop", "api", 0, "shop_default", "ext");
	svc(d, "shop", "db", 1, NULL, NULL);
	svc(d, "other", "web", 0, NULL, NULL);
	svc(d, "other", "pub", 0, "ext", NULL);
	svc(d, "bad", "has.dot", 0, NULL, NULL);
	svc(d, "shop", "idle", 0, NULL, NULL); /* no task */
	task(d, "f1", "shop_front", FRONT1, 1);
	task(d, "a1", "shop_api", API1, 1);
	task(d, "a2", "shop_api", API2, 1);
	task(d, "a3", "shop_api", APIDOWN, 0);
	task(d, "d1", "shop_db", DB1, 1);
	task(d, "o1", "other_web", OTHER1, 1);
	task(d, "p1", "other_pub", SHARED1, 1);
	task(d, "x1", "", NOSVC, 1);
	task(d, "none", "shop_db", 0, 1); /* no attachment: dropped */
	disc_finish(d, VIPNET);
}

static uint8_t *
query(const char *name, ldns_rr_type type, uint16_t id, size_t *len)
{
	ldns_pkt *q = NULL;
	uint8_t *w = NULL;

	assert_int_equal(ldns_pkt_query_new_frm_str(&q, name, type,
	                     LDNS_RR_CLASS_IN, LDNS_RD),
	    LDNS_STATUS_OK);
	ldns_pkt_set_id(q, id);
	assert_int_equal(ldns_pkt2wire(&w, q, len), LDNS_STATUS_OK);
	ldns_pkt_free(q);
	return w;
}

/* The reply's A records, in order, into a (host order); the rcode. */
static int
answers(const struct dns_out *o, uint16_t id, uint32_t *a, size_t *n)
{
	ldns_pkt *p = NULL;
	size_t i;
	int rc;

	assert_int_equal(o->verdict, DNS_ANSWER);
	assert_int_equal(ldns_wire2pkt(&p, o->wire, o->len), LDNS_STATUS_OK);
	assert_int_equal(ldns_pkt_id(p), id);
	assert_true(ldns_pkt_qr(p));
	*n = ldns_rr_list_rr_count(ldns_pkt_answer(p));
	for (i = 0; i < *n; i++) {
		const ldns_rdf *r =
		    ldns_rr_rdf(ldns_rr_list_rr(ldns_pkt_answer(p), i), 0);
		const uint8_t *b = ldns_rdf_data(r);

		a[i] = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
		    (uint32_t)b[2] << 8 | b[3];
	}
	rc = ldns_pkt_get_rcode(p);
	ldns_pkt_free(p);
	return rc;
}

struct name_case {
	uint32_t from;
	const char *name;
	int verdict; /* DNS_ANSWER or DNS_FORWARD */
	int rcode;
	const char *want; /* "vip:shop_api", "tasks:shop_api", "" */
};

static const struct name_case names[] = {
	{ FRONT1, "api", DNS_ANSWER, 0, "vip:shop_api" },
	{ FRONT1, "API.", DNS_ANSWER, 0, "vip:shop_api" },
	{ FRONT1, "api.shop.mts", DNS_ANSWER, 0, "vip:shop_api" },
	{ FRONT1, "api.mts", DNS_ANSWER, 0, "vip:shop_api" },
	{ FRONT1, "tasks.api", DNS_ANSWER, 0, "tasks:shop_api" },
	{ FRONT1, "tasks.api.shop.mts", DNS_ANSWER, 0, "tasks:shop_api" },
	{ FRONT1, "db", DNS_ANSWER, 0, "tasks:shop_db" },
	{ FRONT1, "front", DNS_ANSWER, 0, "vip:shop_front" },
	/* another stack's service on no shared network */
	{ FRONT1, "web.other.mts", DNS_ANSWER, 3, "" },
	{ FRONT1, "web", DNS_FORWARD, 0, "" },
	{ FRONT1, "pub.other.mts", DNS_ANSWER, 3, "" },
	/* over the external network: api sees pub, pub sees api, not db */
	{ API1, "pub.other.mts", DNS_ANSWER, 0, "vip:other_pub" },
	{ SHARED1, "api.shop.mts", DNS_ANSWER, 0, "vip:shop_api" },
	{ SHARED1, "db.shop.mts", DNS_ANSWER, 3, "" },
	{ OTHER1, "api.shop.mts", DNS_ANSWER, 3, "" },
	{ OTHER1, "web", DNS_ANSWER, 0, "vip:other_web" },
	/* a task of no service, an unknown address: nothing of ours */
	{ NOSVC, "api.shop.mts", DNS_ANSWER, 3, "" },
	{ 0x01020304, "api.shop.mts", DNS_ANSWER, 3, "" },
	{ 0x01020304, "api", DNS_FORWARD, 0, "" },
	{ FRONT1, "nothere.shop.mts", DNS_ANSWER, 3, "" },
	{ FRONT1, "mts", DNS_ANSWER, 3, "" },
	{ FRONT1, "a.b.c.d.mts", DNS_ANSWER, 3, "" },
	{ FRONT1, "example.org", DNS_FORWARD, 0, "" },
	{ FRONT1, "tasks", DNS_FORWARD, 0, "" },
	{ FRONT1, "has.dot.bad.mts", DNS_ANSWER, 3, "" },
};

static size_t
want_addrs(const struct disc *d, const char *want, uint32_t *a)
{
	const struct disc_svc *s;

	if (want[0] == '\0')
		return 0;
	s = disc_svc_by_name(d, strchr(want, ':') + 1);
	assert_non_null(s);
	if (strncmp(want, "vip:", 4) == 0) {
		a[0] = s->vip;
		return 1;
	}
	return disc_svc_addrs(d, s, a, 16);
}

static void
test_names(void **state)
{
	struct disc d;
	size_t i, j, len, n, wn;
	uint32_t got[16], want[16];

	fixture(&d);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct name_case *c = &names[i];
		uint8_t *q = query(c->name, LDNS_RR_TYPE_A, 4242, &len);
		struct dns_out o;

		dns_query(&d, c->from, q, len, 0, 1, 777, &o);
		print_message("%s from %08x: verdict %d rcode %d\n", c->name,
		    c->from, o.verdict, o.rcode);
		assert_int_equal(o.verdict, c->verdict);
		if (c->verdict == DNS_FORWARD) {
			ldns_pkt *p = NULL;

			assert_int_equal(o.client_id, 4242);
			assert_int_equal(ldns_wire2pkt(&p, o.wire, o.len),
			    LDNS_STATUS_OK);
			assert_int_equal(ldns_pkt_id(p), 777);
			ldns_pkt_free(p);
		} else {
			assert_int_equal(answers(&o, 4242, got, &n), c->rcode);
			wn = want_addrs(&d, c->want, want);
			assert_int_equal(n, wn);
			for (j = 0; j < n; j++)
				assert_int_equal(got[j], want[j]);
		}
		dns_out_free(&o);
		free(q);
	}
	disc_free(&d);
}

/* Only tasks that are up; none for a type other than A; REFUSED instead
 * of forwarding when there is nowhere to forward. */
static void
test_tasks_and_types(void **state)
{
	struct disc d;
	const struct disc_svc *api;
	uint32_t a[16], got[16];
	size_t len, n;
	uint8_t *q;
	struct dns_out o;

	fixture(&d);
	api = disc_svc_by_name(&d, "shop_api");
	assert_non_null(api);
	assert_int_equal(disc_svc_addrs(&d, api, a, 16), 2);
	assert_int_equal(a[0], API1);
	assert_int_equal(a[1], API2);
	assert_null(disc_svc_by_name(&d, "bad_has.dot"));
	assert_int_equal(disc_task_by_addr(&d, APIDOWN)->up, 0);

	q = query("api.shop.mts", LDNS_RR_TYPE_AAAA, 9, &len);
	dns_query(&d, FRONT1, q, len, 0, 1, 1, &o);
	assert_int_equal(answers(&o, 9, got, &n), LDNS_RCODE_NOERROR);
	assert_int_equal(n, 0);
	dns_out_free(&o);
	free(q);

	q = query("example.org", LDNS_RR_TYPE_A, 10, &len);
	dns_query(&d, FRONT1, q, len, 0, 0, 1, &o);
	assert_int_equal(answers(&o, 10, got, &n), LDNS_RCODE_REFUSED);
	dns_out_free(&o);
	free(q);
	disc_free(&d);
}

/* VIPs: inside the VIP /24, distinct, the same whatever the order the
 * services came in, none for dnsrr; 300 services fill the 253 VIPs and
 * the rest have none. */
static void
test_vips(void **state)
{
	struct disc a, b;
	uint8_t used[256];
	size_t i;

	fixture(&a);
	disc_init(&b);
	for (i = a.ns; i-- > 0;)
		*disc_add_svc(&b) = a.s[i];
	disc_finish(&b, VIPNET);
	for (i = 0; i < a.ns; i++) {
		assert_string_equal(a.s[i].name, b.s[i].name);
		assert_int_equal(a.s[i].vip, b.s[i].vip);
		if (a.s[i].dnsrr)
			assert_int_equal(a.s[i].vip, 0);
		else
			assert_int_equal(a.s[i].vip & 0xffffff00u, VIPNET);
	}
	disc_free(&a);
	disc_free(&b);

	disc_init(&a);
	for (i = 0; i < 300; i++) {
		char name[16];

		snprintf(name, sizeof(name), "s%zu", i);
		svc(&a, "st", name, 0, NULL, NULL);
	}
	disc_finish(&a, VIPNET);
	memset(used, 0, sizeof(used));
	size_t with = 0;
	for (i = 0; i < a.ns; i++) {
		unsigned h = a.s[i].vip & 0xff;

		if (a.s[i].vip == 0)
			continue;
		with++;
		assert_true(h >= DISC_VIP_FIRST && h <= DISC_VIP_LAST);
		assert_int_equal(used[h], 0);
		used[h] = 1;
	}
	assert_int_equal(with, DISC_VIP_LAST - DISC_VIP_FIRST + 1);
	disc_free(&a);
}

/* A reply large enough to pass 512 bytes is cut to what fits, with TC;
 * over TCP it is whole. */
static void
test_truncation(void **state)
{
	struct disc d;
	size_t i, len, n;
	uint32_t got[256];
	uint8_t *q;
	struct dns_out o;
	ldns_pkt *p = NULL;

	disc_init(&d);
	svc(&d, "s", "big", 1, NULL, NULL);
	svc(&d, "s", "asker", 0, NULL, NULL);
	task(&d, "asker", "s_asker", 0x0ad20001, 1);
	for (i = 0; i < 100; i++) {
		char id[16];

		snprintf(id, sizeof(id), "t%zu", i);
		task(&d, id, "s_big", 0x0ad20100 + (uint32_t)i + 2, 1);
	}
	disc_finish(&d, VIPNET);
	q = query("big", LDNS_RR_TYPE_A, 5, &len);
	dns_query(&d, 0x0ad20001, q, len, 0, 1, 1, &o);
	assert_true(o.len <= DNS_UDP_MIN);
	assert_int_equal(answers(&o, 5, got, &n), 0);
	assert_true(n > 10 && n < 100);
	assert_int_equal(ldns_wire2pkt(&p, o.wire, o.len), LDNS_STATUS_OK);
	assert_true(ldns_pkt_tc(p));
	ldns_pkt_free(p);
	dns_out_free(&o);
	dns_query(&d, 0x0ad20001, q, len, 1, 1, 1, &o);
	assert_int_equal(answers(&o, 5, got, &n), 0);
	assert_int_equal(n, 100);
	dns_out_free(&o);
	free(q);
	disc_free(&d);
}

/* Bytes that are not a good query: FORMERR with the id when there is a
 * header that says query, dropped otherwise. */
struct bad_case {
	const char *what;
	uint8_t b[64];
	size_t len;
	int verdict;
	int rcode;
};

static const struct bad_case bads[] = {
	{ "empty", { 0 }, 0, DNS_DROP, 0 },
	{ "short header", { 0x12, 0x34, 0x01 }, 3, DNS_DROP, 0 },
	{ "no question", { 0x12, 0x34, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 12,
	    DNS_ANSWER, LDNS_RCODE_FORMERR },
	{ "question count past the end",
	    { 0x12, 0x34, 0x01, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0,
	        1, 0, 1 },
	    19, DNS_ANSWER, LDNS_RCODE_FORMERR },
	{ "huge answer count",
	    { 0x12, 0x34, 0x01, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1,
	        'a', 0, 0, 1, 0, 1 },
	    19, DNS_ANSWER, LDNS_RCODE_FORMERR },
	{ "truncated name",
	    { 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 5, 'a', 'b' }, 15,
	    DNS_ANSWER, LDNS_RCODE_FORMERR },
	{ "truncated type",
	    { 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0 }, 16,
	    DNS_ANSWER, LDNS_RCODE_FORMERR },
	{ "compression loop",
	    { 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0,
	        1 },
	    18, DNS_ANSWER, LDNS_RCODE_FORMERR },
	{ "two-pointer loop",
	    { 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 0xc0, 16,
	        0xc0, 14, 0, 1, 0, 1 },
	    22, DNS_ANSWER, LDNS_RCODE_FORMERR },
	{ "pointer forward past the end",
	    { 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 60, 0, 1, 0,
	        1 },
	    18, DNS_ANSWER, LDNS_RCODE_FORMERR },
	{ "a reply", { 0x12, 0x34, 0x81, 0x80, 0, 0, 0, 0, 0, 0, 0, 0 }, 12,
	    DNS_DROP, 0 },
	{ "two questions",
	    { 0x12, 0x34, 0x01, 0, 0, 2, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0, 1, 0,
	        1, 1, 'b', 0, 0, 1, 0, 1 },
	    26, DNS_ANSWER, LDNS_RCODE_FORMERR },
	{ "status opcode",
	    { 0x12, 0x34, 0x10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0, 1, 0,
	        1 },
	    19, DNS_ANSWER, LDNS_RCODE_NOTIMPL },
};

static void
test_malformed(void **state)
{
	struct disc d;
	size_t i, n;
	uint32_t got[4];

	fixture(&d);
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct dns_out o;

		dns_query(&d, FRONT1, bads[i].b, bads[i].len, 0, 1, 1, &o);
		print_message("%s: verdict %d\n", bads[i].what, o.verdict);
		assert_int_equal(o.verdict, bads[i].verdict);
		if (o.verdict == DNS_ANSWER)
			assert_int_equal(answers(&o, 0x1234, got, &n),
			    bads[i].rcode);
		dns_out_free(&o);
	}
	disc_free(&d);
}

/* An upstream reply is passed on with the asker's id only when it
 * answers the question forwarded; a timeout gives SERVFAIL. */
static void
test_upstream(void **state)
{
	struct disc d;
	struct dns_out o;
	ldns_pkt *p = NULL;
	uint8_t *q, *r = NULL, *back = NULL;
	size_t len, rlen, blen, n;
	uint16_t id;
	uint32_t got[4];

	fixture(&d);
	q = query("Example.org", LDNS_RR_TYPE_A, 31, &len);
	dns_query(&d, FRONT1, q, len, 0, 1, 4000, &o);
	assert_int_equal(o.verdict, DNS_FORWARD);
	assert_string_equal(o.qname, "example.org");
	assert_int_equal(dns_reply_id(o.wire, o.len, &id), -1); /* a query */

	/* the upstream's answer: the forwarded query turned into a reply */
	assert_int_equal(ldns_wire2pkt(&p, o.wire, o.len), LDNS_STATUS_OK);
	ldns_pkt_set_qr(p, true);
	ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER,
	    ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(p), 0)));
	assert_int_equal(ldns_pkt2wire(&r, p, &rlen), LDNS_STATUS_OK);
	ldns_pkt_free(p);
	assert_int_equal(dns_reply_id(r, rlen, &id), 0);
	assert_int_equal(id, 4000);
	assert_int_equal(dns_upstream(r, rlen, o.qname, o.qtype, o.client_id,
	                     &back, &blen),
	    0);
	p = NULL;
	assert_int_equal(ldns_wire2pkt(&p, back, blen), LDNS_STATUS_OK);
	assert_int_equal(ldns_pkt_id(p), 31);
	ldns_pkt_free(p);
	free(back);
	/* another question, or another type: dropped */
	assert_int_equal(dns_upstream(r, rlen, "example.com", o.qtype, 31,
	                     &back, &blen),
	    -1);
	assert_int_equal(dns_upstream(r, rlen, o.qname, LDNS_RR_TYPE_AAAA, 31,
	                     &back, &blen),
	    -1);
	assert_int_equal(dns_upstream(q, len, o.qname, o.qtype, 31, &back,
	                     &blen),
	    -1); /* not a reply */
	assert_int_equal(dns_error_reply(o.wire, o.len, o.client_id,
	                     LDNS_RCODE_SERVFAIL, &back, &blen),
	    0);
	o.verdict = DNS_ANSWER;
	free(o.wire);
	o.wire = back;
	o.len = blen;
	assert_int_equal(answers(&o, 31, got, &n), LDNS_RCODE_SERVFAIL);
	dns_out_free(&o);
	free(r);
	free(q);
	disc_free(&d);
}

/* The VIP rules: a DNAT per VIP with a task up, over exactly the tasks
 * that are up; none for dnsrr; a VIP with no task rejected; the hairpin
 * masquerade per local task. */
static void
test_vip_rules(void **state)
{
	struct disc d;
	const struct disc_svc *api, *idle, *db;
	uint32_t local[2] = { API1, FRONT1 };
	struct vip_node nd;
	char want[256], ip[16], a1[16], a2[16], *text;

	fixture(&d);
	api = disc_svc_by_name(&d, "shop_api");
	idle = disc_svc_by_name(&d, "shop_idle");
	db = disc_svc_by_name(&d, "shop_db");
	assert_non_null(idle);
	assert_int_equal(db->vip, 0);
	memset(&nd, 0, sizeof(nd));
	nd.local = local;
	nd.nlocal = 2;
	nd.wg_if = "mts0";
	text = vip_nft(&d, &nd);
	netd_ip_str(ip, sizeof(ip), api->vip);
	netd_ip_str(a1, sizeof(a1), API1);
	netd_ip_str(a2, sizeof(a2), API2);
	snprintf(want, sizeof(want),
	    "ip daddr %s dnat ip to numgen random mod 2 map { 0 : %s, 1 : %s }",
	    ip, a1, a2);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "type nat hook prerouting"));
	assert_non_null(strstr(text, "type nat hook output"));
	netd_ip_str(ip, sizeof(ip), idle->vip);
	snprintf(want, sizeof(want), "ip daddr { %s } reject", ip);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want),
	    "ct status dnat ip saddr %s ip daddr %s masquerade", a1, a1);
	assert_non_null(strstr(text, want));
	netd_ip_str(ip, sizeof(ip), APIDOWN);
	assert_null(strstr(text, ip));
	netd_ip_str(ip, sizeof(ip), DB1);
	assert_null(strstr(text, ip)); /* dnsrr: no VIP */
	free(text);
	disc_free(&d);

	disc_init(&d);
	disc_finish(&d, VIPNET);
	memset(&nd, 0, sizeof(nd));
	text = vip_nft(&d, &nd);
	assert_string_equal(text, "");
	free(text);
}

/* Published ports: ingress to every task up (any node), host mode to
 * this node's only, none where no task runs; the SNAT of ingress going
 * on to another node; the isolation lets the target ports through. */
static void
test_port_rules(void **state)
{
	struct disc d;
	struct disc_svc *front, *api, *db;
	struct disc_task *t;
	struct vip_node nd;
	char *text;
	size_t i;

	fixture(&d);
	front = (struct disc_svc *)disc_svc_by_name(&d, "shop_front");
	api = (struct disc_svc *)disc_svc_by_name(&d, "shop_api");
	db = (struct disc_svc *)disc_svc_by_name(&d, "shop_db");
	front->ports[front->nports++] =
	    (struct disc_port){ 8080, 80, 0, 0, -1 };
	api->ports[api->nports++] = (struct disc_port){ 9000, 90, 1, 1, -1 };
	db->ports[db->nports++] = (struct disc_port){ 5432, 5432, 0, 1, -1 };
	memset(&nd, 0, sizeof(nd));
	nd.self[0] = 7;
	nd.gateway = 0x0ad20101;
	nd.cidr_base = 0x0ad20000;
	nd.cidr_mask = 0xffff0000;
	nd.wg_if = "mts0";
	for (i = 0; i < d.nt; i++) {
		t = &d.t[i];
		if (t->addr == API1)
			t->node[0] = 7; /* the only task on this node */
	}
	text = vip_nft(&d, &nd);
	assert_non_null(strstr(text,
	    "fib daddr type local tcp dport 8080 dnat ip to numgen random "
	    "mod 1 map { 0 : 10.210.1.2 . 80 }"));
	assert_non_null(strstr(text,
	    "fib daddr type local udp dport 9000 dnat ip to numgen random "
	    "mod 1 map { 0 : 10.210.1.3 . 90 }"));
	assert_null(strstr(text, "dport 5432")); /* no db task here */
	assert_non_null(strstr(text,
	    "oifname \"mts0\" ct status dnat ip "
	    "saddr != 10.210.0.0/16 snat ip to "
	    "10.210.1.1"));
	assert_non_null(strstr(text,
	    "ip daddr { 10.210.1.2 } tcp dport 80 "
	    "accept"));
	free(text);
	disc_free(&d);
}

/* The holder of a contested port: the claim of the service created
 * first (then the lower name), whatever the order the claims come in;
 * tcp and udp are separate ports; a service claiming a port twice holds
 * both. */
static void
test_port_holders(void **state)
{
	struct mts_port_claim c[] = {
		{ "b_web", 300, 8080, 0 }, /* 0 */
		{ "a_web", 500, 8080, 0 }, /* 1: younger, lower name */
		{ "c_web", 300, 8080, 0 }, /* 2: as old as b_web */
		{ "a_web", 500, 8080, 1 }, /* 3: udp: its own */
		{ "d_dns", 900, 53, 1 },   /* 4 */
		{ "d_dns", 900, 53, 1 },   /* 5: twice */
		{ "e_x", 100, 9000, 0 },   /* 6 */
	};
	const size_t n = sizeof(c) / sizeof(c[0]);
	struct mts_port_claim p[sizeof(c) / sizeof(c[0])];
	size_t h[sizeof(c) / sizeof(c[0])], hp[sizeof(c) / sizeof(c[0])];
	size_t perm[sizeof(c) / sizeof(c[0])], i, j, round;
	unsigned seed = 7;

	mts_port_holders(c, n, h);
	assert_string_equal(c[h[0]].service, "b_web");
	assert_string_equal(c[h[1]].service, "b_web");
	assert_string_equal(c[h[2]].service, "b_web");
	assert_false(mts_port_lost(c, h, 0));
	assert_true(mts_port_lost(c, h, 1));
	assert_true(mts_port_lost(c, h, 2));
	assert_false(mts_port_lost(c, h, 3));
	assert_false(mts_port_lost(c, h, 4));
	assert_false(mts_port_lost(c, h, 5));
	assert_false(mts_port_lost(c, h, 6));
	for (round = 0; round < 200; round++) {
		for (i = 0; i < n; i++)
			perm[i] = i;
		for (i = n - 1; i > 0; i--) {
			seed = seed * 1103515245u + 12345u;
			j = (seed >> 16) % (i + 1);
			size_t t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (i = 0; i < n; i++)
			p[i] = c[perm[i]];
		mts_port_holders(p, n, hp);
		for (i = 0; i < n; i++) {
			assert_string_equal(p[hp[i]].service,
			    c[h[perm[i]]].service);
			assert_int_equal(mts_port_lost(p, hp, i),
			    mts_port_lost(c, h, perm[i]));
		}
	}
	mts_port_holders(c, 0, h); /* nothing to do */
}

/* Two services publish 8080: only the one created first gets the DNAT
 * (although its name sorts later), the other's port is marked lost to it
 * and not opened; on every node alike (two orders of the records). */
static void
test_port_conflict_rules(void **state)
{
	struct disc d[2];
	struct vip_node nd;
	const struct disc_svc *old, *young;
	char *text;
	int k;

	memset(&nd, 0, sizeof(nd));
	nd.wg_if = "mts0";
	for (k = 0; k < 2; k++) {
		struct disc_svc *s;

		disc_init(&d[k]);
		svc(&d[k], k ? "zz" : "aa", "web", 0, NULL, NULL);
		svc(&d[k], k ? "aa" : "zz", "web", 0, NULL, NULL);
		for (size_t i = 0; i < 2; i++) {
			s = &d[k].s[i];
			s->created = strcmp(s->stack, "zz") == 0 ? 1000 : 2000;
			s->ports[s->nports++] =
			    (struct disc_port){ 8080, 80, 0, 0, 0 };
		}
		task(&d[k], "z1", "zz_web", FRONT1, 1);
		task(&d[k], "a1", "aa_web", API1, 1);
		disc_finish(&d[k], VIPNET);
		old = disc_svc_by_name(&d[k], "zz_web");
		young = disc_svc_by_name(&d[k], "aa_web");
		assert_int_equal(old->ports[0].lost_to, -1);
		assert_true(young->ports[0].lost_to >= 0);
		assert_string_equal(d[k].s[young->ports[0].lost_to].name,
		    "zz_web");
		text = vip_nft(&d[k], &nd);
		assert_non_null(strstr(text,
		    "tcp dport 8080 dnat ip to numgen random mod 1 map { 0 : "
		    "10.210.1.2 . 80 }"));
		assert_null(strstr(text, "10.210.1.3 . 80"));
		assert_null(strstr(text, "ip daddr { 10.210.1.3 } tcp dport"));
		free(text);
	}
	/* the holder goes: the other's port is opened */
	disc_free(&d[0]);
	disc_init(&d[0]);
	svc(&d[0], "aa", "web", 0, NULL, NULL);
	d[0].s[0].created = 2000;
	d[0].s[0].ports[d[0].s[0].nports++] =
	    (struct disc_port){ 8080, 80, 0, 0, 0 };
	task(&d[0], "a1", "aa_web", API1, 1);
	disc_finish(&d[0], VIPNET);
	assert_int_equal(d[0].s[0].ports[0].lost_to, -1);
	text = vip_nft(&d[0], &nd);
	assert_non_null(strstr(text, "map { 0 : 10.210.1.3 . 80 }"));
	free(text);
	disc_free(&d[0]);
	disc_free(&d[1]);
}

/* Two names whose first VIP candidate is the same: `later` sorts after
 * `earlier`. */
static void
colliding(char *later, size_t llen, char *earlier, size_t elen)
{
	unsigned want = disc_vip_candidate("zz_web", 0), i;

	snprintf(later, llen, "zz_web");
	for (i = 0;; i++) {
		snprintf(earlier, elen, "a%u_web", i);
		if (disc_vip_candidate(earlier, 0) == want)
			return;
	}
}

/* A service's VIP does not move when a later service wants the same one:
 * the older (created first) keeps it, even when the newer's name sorts
 * first; and in 20 rounds of 120 services given random ages, adding 60
 * newer ones one at a time never changes an existing VIP. */
static void
test_vip_stable(void **state)
{
	char later[32], earlier[32], stack[16];
	struct disc d;
	uint32_t before[200];
	unsigned seed = 11;
	size_t i, j, round, k;

	colliding(later, sizeof(later), earlier, sizeof(earlier));
	disc_init(&d);
	svc(&d, "zz", "web", 0, NULL, NULL);
	d.s[0].created = 1000;
	disc_finish(&d, VIPNET);
	before[0] = d.s[0].vip;
	assert_int_equal(before[0] & 0xff, disc_vip_candidate(later, 0));
	snprintf(stack, sizeof(stack), "%.*s", (int)(strlen(earlier) - 4),
	    earlier);
	svc(&d, stack, "web", 0, NULL, NULL);
	d.s[1].created = 2000;
	disc_finish(&d, VIPNET);
	assert_string_equal(d.s[0].name, earlier); /* sorts first */
	assert_int_equal(disc_svc_by_name(&d, later)->vip, before[0]);
	assert_int_not_equal(disc_svc_by_name(&d, earlier)->vip, before[0]);
	assert_int_not_equal(disc_svc_by_name(&d, earlier)->vip, 0);
	disc_free(&d);

	for (round = 0; round < 20; round++) {
		disc_init(&d);
		for (i = 0; i < 180; i++) {
			char name[16];

			seed = seed * 1103515245u + 12345u;
			snprintf(name, sizeof(name), "s%zu_%u", i,
			    (seed >> 8) % 1000);
			svc(&d, "st", name, 0, NULL, NULL);
			/* the first 120 in any age order, all older than
			 * the 60 added after them */
			d.s[d.ns - 1].created =
			    i < 120 ? 1 + (seed >> 4) % 100000 : 1000000 + i;
		}
		struct disc_svc *all = d.s;
		size_t nall = d.ns;
		struct disc cur;

		for (k = 120; k <= nall; k++) {
			disc_init(&cur);
			for (i = 0; i < k; i++)
				*disc_add_svc(&cur) = all[i];
			disc_finish(&cur, VIPNET);
			for (i = 0; i < k; i++) {
				const struct disc_svc *s =
				    disc_svc_by_name(&cur, all[i].name);

				assert_non_null(s);
				if (k > 120 && i < k - 1)
					assert_int_equal(s->vip, before[i]);
				before[i] = s->vip;
			}
			for (i = 0; i < cur.ns; i++)
				for (j = i + 1; j < cur.ns; j++)
					assert_int_not_equal(cur.s[i].vip,
					    cur.s[j].vip);
			disc_free(&cur);
		}
		disc_free(&d);
	}
}

/* The reply's rcode, its answers' count, and the target of its first
 * PTR record (without the final dot; "" when none) into ptr. Checks the
 * reply is authoritative with nothing in the authority section (no SOA:
 * NODATA is an empty NOERROR). */
static int
ptr_answer(const struct dns_out *o, uint16_t id, char *ptr, size_t len,
    size_t *n)
{
	ldns_pkt *p = NULL;
	int rc;

	ptr[0] = '\0';
	assert_int_equal(o->verdict, DNS_ANSWER);
	assert_int_equal(ldns_wire2pkt(&p, o->wire, o->len), LDNS_STATUS_OK);
	assert_int_equal(ldns_pkt_id(p), id);
	assert_int_equal(ldns_pkt_nscount(p), 0);
	rc = ldns_pkt_get_rcode(p);
	if (rc == LDNS_RCODE_NOERROR)
		assert_true(ldns_pkt_aa(p));
	*n = ldns_rr_list_rr_count(ldns_pkt_answer(p));
	if (*n > 0) {
		const ldns_rr *rr = ldns_rr_list_rr(ldns_pkt_answer(p), 0);

		if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_PTR) {
			char *t = ldns_rdf2str(ldns_rr_rdf(rr, 0));

			snprintf(ptr, len, "%s", t);
			if (strlen(ptr) > 0 && ptr[strlen(ptr) - 1] == '.')
				ptr[strlen(ptr) - 1] = '\0';
			free(t);
		}
	}
	ldns_pkt_free(p);
	return rc;
}

struct ptr_case {
	uint32_t from;
	const char *name;
	ldns_rr_type type;
	int verdict; /* DNS_ANSWER or DNS_FORWARD */
	int rcode;
	size_t n;         /* answers */
	const char *want; /* the PTR's target */
};

/* Reverse names of the cluster CIDR: a VIP's is its service's name, a
 * task's the task's (which resolves back to it), only for an asker that
 * may see the service and a task that is up; other types on a name we
 * know are NODATA (NOERROR, nothing, no SOA), AAAA included; addresses
 * outside the CIDR are forwarded. */
static const struct ptr_case ptrs[] = {
	{ FRONT1, "3.1.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 0, 1,
	    "a1.mts" },
	{ FRONT1, "3.1.210.10.IN-ADDR.ARPA.", LDNS_RR_TYPE_PTR, DNS_ANSWER, 0,
	    1, "a1.mts" },
	{ FRONT1, "3.1.210.10.in-addr.arpa", LDNS_RR_TYPE_ANY, DNS_ANSWER, 0, 1,
	    "a1.mts" },
	{ FRONT1, "3.1.210.10.in-addr.arpa", LDNS_RR_TYPE_A, DNS_ANSWER, 0, 0,
	    "" },
	{ FRONT1, "3.1.210.10.in-addr.arpa", LDNS_RR_TYPE_AAAA, DNS_ANSWER, 0,
	    0, "" },
	{ FRONT1, "2.3.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 0, 1,
	    "d1.mts" },
	{ FRONT1, "2.1.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 0, 1,
	    "f1.mts" }, /* the asker itself */
	/* down, another stack's, no service's, no task's, a gateway */
	{ FRONT1, "3.2.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 3, 0,
	    "" },
	{ FRONT1, "4.3.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 3, 0,
	    "" },
	{ FRONT1, "6.3.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 3, 0,
	    "" },
	{ FRONT1, "9.9.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 3, 0,
	    "" },
	{ FRONT1, "1.1.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 3, 0,
	    "" },
	/* across the external network: api's task seen from pub */
	{ SHARED1, "3.1.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 0,
	    1, "a1.mts" },
	{ SHARED1, "2.3.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 3,
	    0, "" },
	/* an asker of no service sees nothing of ours */
	{ NOSVC, "3.1.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_ANSWER, 3, 0,
	    "" },
	/* outside the cluster CIDR, or not an address: not ours */
	{ FRONT1, "8.8.8.8.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_FORWARD, 0, 0,
	    "" },
	{ FRONT1, "300.1.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_FORWARD, 0,
	    0, "" },
	{ FRONT1, "x.1.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, DNS_FORWARD, 0,
	    0, "" },
	{ FRONT1, "210.10.in-addr.arpa", LDNS_RR_TYPE_SOA, DNS_FORWARD, 0, 0,
	    "" },
	/* the task's name resolves back to it; AAAA of it is NODATA */
	{ FRONT1, "a1.mts", LDNS_RR_TYPE_A, DNS_ANSWER, 0, 1, "" },
	{ FRONT1, "A1.mts", LDNS_RR_TYPE_AAAA, DNS_ANSWER, 0, 0, "" },
	{ FRONT1, "a1.mts", LDNS_RR_TYPE_PTR, DNS_ANSWER, 0, 0, "" },
	{ FRONT1, "a3.mts", LDNS_RR_TYPE_A, DNS_ANSWER, 3, 0, "" }, /* down */
	{ FRONT1, "o1.mts", LDNS_RR_TYPE_A, DNS_ANSWER, 3, 0, "" },
	{ FRONT1, "x1.mts", LDNS_RR_TYPE_A, DNS_ANSWER, 3, 0, "" },
	/* AAAA of every kind of name we know: NODATA, never NXDOMAIN */
	{ FRONT1, "api", LDNS_RR_TYPE_AAAA, DNS_ANSWER, 0, 0, "" },
	{ FRONT1, "api.shop.mts", LDNS_RR_TYPE_AAAA, DNS_ANSWER, 0, 0, "" },
	{ FRONT1, "tasks.api", LDNS_RR_TYPE_AAAA, DNS_ANSWER, 0, 0, "" },
	{ FRONT1, "db", LDNS_RR_TYPE_AAAA, DNS_ANSWER, 0, 0, "" },
	{ FRONT1, "idle.shop.mts", LDNS_RR_TYPE_AAAA, DNS_ANSWER, 0, 0, "" },
	{ FRONT1, "nothere.shop.mts", LDNS_RR_TYPE_AAAA, DNS_ANSWER, 3, 0, "" },
};

static void
test_ptr_and_nodata(void **state)
{
	struct disc d;
	const struct disc_svc *api;
	char want[64], got[DNS_QNAME_MAX];
	size_t i, len, n;
	uint32_t v;
	uint8_t *q;
	struct dns_out o;

	fixture(&d);
	for (i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
		const struct ptr_case *c = &ptrs[i];

		q = query(c->name, c->type, 99, &len);
		dns_query(&d, c->from, q, len, 0, 1, 5, &o);
		print_message("%s type %d from %08x: verdict %d rcode %d\n",
		    c->name, c->type, c->from, o.verdict, o.rcode);
		assert_int_equal(o.verdict, c->verdict);
		if (c->verdict == DNS_ANSWER) {
			assert_int_equal(ptr_answer(&o, 99, got, sizeof(got),
			                     &n),
			    c->rcode);
			assert_int_equal(n, c->n);
			assert_string_equal(got, c->want);
		}
		dns_out_free(&o);
		free(q);
	}
	/* a1.mts's A is a1's address */
	uint32_t a[4];
	q = query("a1.mts", LDNS_RR_TYPE_A, 7, &len);
	dns_query(&d, FRONT1, q, len, 0, 1, 5, &o);
	assert_int_equal(answers(&o, 7, a, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(a[0], API1);
	dns_out_free(&o);
	free(q);
	/* a VIP's reverse name: its service's name, also over TCP */
	api = disc_svc_by_name(&d, "shop_api");
	v = api->vip;
	snprintf(want, sizeof(want), "%u.%u.%u.%u.in-addr.arpa", v & 0xff,
	    (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24);
	q = query(want, LDNS_RR_TYPE_PTR, 8, &len);
	dns_query(&d, FRONT1, q, len, 1, 1, 5, &o);
	assert_int_equal(ptr_answer(&o, 8, got, sizeof(got), &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(got, "api.shop.mts");
	dns_out_free(&o);
	dns_query(&d, OTHER1, q, len, 0, 1, 5, &o); /* not on its network */
	assert_int_equal(ptr_answer(&o, 8, got, sizeof(got), &n), 3);
	dns_out_free(&o);
	free(q);
	/* a directory without the CIDR knows no reverse name */
	d.cidr_mask = 0;
	q = query("3.1.210.10.in-addr.arpa", LDNS_RR_TYPE_PTR, 9, &len);
	dns_query(&d, FRONT1, q, len, 0, 1, 5, &o);
	assert_int_equal(o.verdict, DNS_FORWARD);
	dns_out_free(&o);
	free(q);
	disc_free(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_tasks_and_types),
		cmocka_unit_test(test_vips),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_upstream),
		cmocka_unit_test(test_vip_rules),
		cmocka_unit_test(test_port_rules),
		cmocka_unit_test(test_port_holders),
		cmocka_unit_test(test_port_conflict_rules),
		cmocka_unit_test(test_vip_stable),
		cmocka_unit_test(test_ptr_and_nodata),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
