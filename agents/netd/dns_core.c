/* dns_core.c: mts-netd's pure DNS decisions — queries parsed and replies built with ldns; names (and the cluster CIDR's reverse names) resolved against the service directory for the asking task's networks; the rest forwarded upstream or refused; upstream replies matched to the question forwarded. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "dns_core.h"

#define ADDRS_MAX 256      /* A records in one answer, before truncation */
#define DNS_LABELS_MAX 128 /* a name has at most 127 labels */

/* What a name means here. */
enum dns_kind {
	Q_OTHER,   /* not ours: forward */
	Q_NONE,    /* ours (the zone), but nothing the asker may see */
	Q_SERVICE, /* the service: its VIP, or its tasks with dnsrr */
	Q_TASKS,   /* tasks.<service>: its tasks' addresses */
	Q_TASK,    /* <task>.mts: that task's address */
	Q_PTR,     /* d.c.b.a.in-addr.arpa of a VIP or a task: its name */
};

struct dns_name {
	enum dns_kind kind;
	const struct disc_svc *svc;
	uint32_t addr;           /* Q_TASK */
	char ptr[DNS_QNAME_MAX]; /* Q_PTR: the name, with its final dot */
};

void
dns_out_free(struct dns_out *o)
{
	if (o == NULL)
		return;
	free(o->wire);
	o->wire = NULL;
	o->len = 0;
}

/* The name's text in lower case, without its final dot. */
static void
qname_text(const ldns_rdf *name, char *out, size_t outlen)
{
	char *s = ldns_rdf2str(name);
	size_t i, n;

	out[0] = '\0';
	if (s == NULL)
		return;
	n = strlen(s);
	if (n > 0 && s[n - 1] == '.')
		s[--n] = '\0';
	for (i = 0; s[i] != '\0'; i++)
		s[i] = (char)tolower((unsigned char)s[i]);
	if (n < outlen)
		snprintf(out, outlen, "%s", s);
	free(s);
}

/* Splits "a.b.c" into at most max labels (pointers into buf); how many
 * there are (more than max: max + 1). */
static size_t
labels(char *buf, char **lab, size_t max)
{
	size_t n = 0;
	char *p = buf, *dot;

	if (*p == '\0')
		return 0;
	for (;;) {
		if (n == max)
			return max + 1;
		lab[n++] = p;
		if ((dot = strchr(p, '.')) == NULL)
			return n;
		*dot = '\0';
		p = dot + 1;
	}
}

/* Service `name` of `stack`, if the asker may see it. */
static const struct disc_svc *
visible(const struct disc *d, const struct disc_svc *asker, const char *stack,
    const char *name)
{
	const struct disc_svc *s;

	if (asker == NULL || (s = disc_svc_find(d, stack, name)) == NULL ||
	    !disc_visible(asker, s))
		return NULL;
	return s;
}

/* A label of a reverse name: 0 to 255 in decimal; -1 otherwise. */
static int
octet(const char *s)
{
	int v = 0;
	size_t i, n = strlen(s);

	if (n == 0 || n > 3)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v > 255 ? -1 : v;
}

/* The address of a name "d.c.b.a.in-addr.arpa" (labels lab[0..n-1]);
 * -1 when it is not one. */
static int
reverse_addr(char **lab, size_t n, uint32_t *addr)
{
	int o[4];
	size_t i;

	if (n != 6 || strcmp(lab[4], "in-addr") != 0 ||
	    strcmp(lab[5], "arpa") != 0)
		return -1;
	for (i = 0; i < 4; i++)
		if ((o[i] = octet(lab[i])) < 0)
			return -1;
	*addr = (uint32_t)o[3] << 24 | (uint32_t)o[2] << 16 |
	    (uint32_t)o[1] << 8 | (uint32_t)o[0];
	return 0;
}

/*
 * A reverse name of the cluster CIDR is ours: the name of the VIP's
 * service (<svc>.<stack>.mts) or of the task that holds the address
 * (<task>.mts), when the asker may see that service (and the task is
 * up); NXDOMAIN otherwise. Other addresses are not ours.
 */
static struct dns_name
resolve_reverse(const struct disc *d, const struct disc_svc *asker,
    uint32_t addr)
{
	struct dns_name r = { Q_OTHER, NULL, 0, "" };
	const struct disc_task *t;
	const struct disc_svc *s;

	if (d->cidr_mask == 0 || (addr & d->cidr_mask) != d->cidr_base)
		return r;
	r.kind = Q_NONE;
	if (asker == NULL)
		return r;
	if ((s = disc_svc_by_vip(d, addr)) != NULL && disc_visible(asker, s)) {
		snprintf(r.ptr, sizeof(r.ptr), "%s.%s." DNS_ZONE ".",
		    s->short_name, s->stack);
		r.kind = Q_PTR;
	} else if ((t = disc_task_by_addr(d, addr)) != NULL && t->up &&
	    (s = disc_svc_by_name(d, t->service)) != NULL &&
	    disc_visible(asker, s) &&
	    strlen(t->task) + sizeof("." DNS_ZONE ".") <= sizeof(r.ptr)) {
		snprintf(r.ptr, sizeof(r.ptr), "%s." DNS_ZONE ".", t->task);
		r.kind = Q_PTR;
	}
	return r;
}

/* <task>.mts (the name a task's PTR gives; `task` is the name without
 * the zone): the task's address, when it is up and the asker may see its
 * service. */
static void
resolve_task(const struct disc *d, const struct disc_svc *asker,
    const char *task, struct dns_name *r)
{
	const struct disc_task *t = disc_task_by_id(d, task);
	const struct disc_svc *s;

	if (asker == NULL || t == NULL || !t->up ||
	    (s = disc_svc_by_name(d, t->service)) == NULL ||
	    !disc_visible(asker, s))
		return;
	r->kind = Q_TASK;
	r->addr = t->addr;
}

/*
 * The name's meaning for the asker: in the zone ("x.mts"), <svc>.<stack>,
 * tasks.<svc>.<stack>, and (the search domain "mts") <svc> and
 * tasks.<svc> of the asker's stack; outside it, <svc> and tasks.<svc> of
 * the asker's stack, or nothing of ours.
 */
static struct dns_name
resolve(const struct disc *d, const struct disc_svc *asker, const char *qname)
{
	struct dns_name r = { Q_OTHER, NULL, 0, "" };
	char buf[DNS_QNAME_MAX], *lab[DNS_LABELS_MAX];
	const char *stack = asker ? asker->stack : "";
	size_t n;
	uint32_t addr;
	int zone, tasks;

	snprintf(buf, sizeof(buf), "%s", qname);
	n = labels(buf, lab, DNS_LABELS_MAX);
	if (n == 0 || n > DNS_LABELS_MAX)
		return r;
	if (reverse_addr(lab, n, &addr) == 0)
		return resolve_reverse(d, asker, addr);
	zone = strcmp(lab[n - 1], DNS_ZONE) == 0;
	n -= zone;
	tasks = n >= 2 && strcmp(lab[0], "tasks") == 0;
	if (zone)
		r.kind = Q_NONE;
	if (n == (size_t)tasks + 1)
		r.svc = visible(d, asker, stack, lab[tasks]);
	else if (zone && n == (size_t)tasks + 2)
		r.svc = visible(d, asker, lab[tasks + 1], lab[tasks]);
	if (r.svc != NULL)
		r.kind = tasks ? Q_TASKS : Q_SERVICE;
	else if (zone && n >= 1 && strlen(qname) > strlen("." DNS_ZONE)) {
		snprintf(buf, sizeof(buf), "%.*s",
		    (int)(strlen(qname) - strlen("." DNS_ZONE)), qname);
		resolve_task(d, asker, buf, &r);
	}
	return r;
}

static ldns_rr *
a_record(const ldns_rdf *owner, uint32_t addr)
{
	uint8_t b[4] = { addr >> 24, addr >> 16, addr >> 8, addr };
	ldns_rr *rr = ldns_rr_new();

	ldns_rr_set_owner(rr, ldns_rdf_clone(owner));
	ldns_rr_set_type(rr, LDNS_RR_TYPE_A);
	ldns_rr_set_class(rr, LDNS_RR_CLASS_IN);
	ldns_rr_set_ttl(rr, DNS_TTL);
	ldns_rr_push_rdf(rr, ldns_rdf_new_frm_data(LDNS_RDF_TYPE_A, 4, b));
	return rr;
}

static ldns_rr *
ptr_record(const ldns_rdf *owner, const char *name)
{
	ldns_rr *rr = ldns_rr_new();
	ldns_rdf *target = ldns_dname_new_frm_str(name);

	ldns_rr_set_owner(rr, ldns_rdf_clone(owner));
	ldns_rr_set_type(rr, LDNS_RR_TYPE_PTR);
	ldns_rr_set_class(rr, LDNS_RR_CLASS_IN);
	ldns_rr_set_ttl(rr, DNS_TTL);
	if (target != NULL)
		ldns_rr_push_rdf(rr, target);
	return rr;
}

/* A reply's header and question, from the query (q may be NULL: the
 * header only). */
static ldns_pkt *
reply_new(const ldns_pkt *q, uint16_t id, int rd, int opcode, int rcode)
{
	ldns_pkt *p = ldns_pkt_new();

	ldns_pkt_set_id(p, id);
	ldns_pkt_set_qr(p, true);
	ldns_pkt_set_rd(p, rd);
	ldns_pkt_set_ra(p, true);
	ldns_pkt_set_opcode(p, opcode);
	ldns_pkt_set_rcode(p, rcode);
	if (q != NULL && ldns_rr_list_rr_count(ldns_pkt_question(q)) == 1)
		ldns_pkt_push_rr(p, LDNS_SECTION_QUESTION,
		    ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(q), 0)));
	return p;
}

static int
encode(ldns_pkt *p, struct dns_out *o)
{
	uint8_t *w = NULL;
	size_t len = 0;

	if (ldns_pkt2wire(&w, p, &len) != LDNS_STATUS_OK) {
		free(w);
		return -1;
	}
	free(o->wire);
	o->wire = w;
	o->len = len;
	return 0;
}

static void
answer_err(const ldns_pkt *q, uint16_t id, int rd, int opcode, int rcode,
    struct dns_out *o)
{
	ldns_pkt *p = reply_new(q, id, rd, opcode, rcode);

	if (encode(p, o) == 0) {
		o->verdict = DNS_ANSWER;
		o->rcode = rcode;
	}
	ldns_pkt_free(p);
}

/* The addresses a name answers with. */
static size_t
name_addrs(const struct disc *d, struct dns_name nm, uint32_t *a, size_t max)
{
	size_t n;

	if (nm.kind == Q_TASK) {
		a[0] = nm.addr;
		return 1;
	}
	if (nm.kind == Q_SERVICE && !nm.svc->dnsrr) {
		if (nm.svc->vip == 0)
			return 0;
		a[0] = nm.svc->vip;
		return 1;
	}
	n = disc_svc_addrs(d, nm.svc, a, max);
	return n < max ? n : max;
}

/*
 * Our own answer: NXDOMAIN for a name of ours nobody may see; else the
 * records the name has of the type asked (A for a service, its tasks or
 * a task; PTR for a reverse name; ANY: those), as many as fit, TC if not
 * all did. A name we know asked for another type (AAAA: the overlay is
 * IPv4) is NOERROR with no record and no SOA (NODATA), so that a
 * resolver asking A and AAAA keeps the A.
 */
static void
answer_local(const struct disc *d, const ldns_pkt *q, struct dns_name nm,
    size_t max, struct dns_out *o)
{
	const ldns_rr *qr = ldns_rr_list_rr(ldns_pkt_question(q), 0);
	uint32_t addrs[ADDRS_MAX];
	size_t n = 0, i, fit;
	ldns_pkt *p;
	ldns_rr_type type = ldns_rr_get_type(qr);
	int ptr = nm.kind == Q_PTR;
	int want = type == LDNS_RR_TYPE_ANY ||
	    type == (ptr ? LDNS_RR_TYPE_PTR : LDNS_RR_TYPE_A);

	if (nm.kind == Q_NONE) {
		answer_err(q, ldns_pkt_id(q), ldns_pkt_rd(q), LDNS_PACKET_QUERY,
		    LDNS_RCODE_NXDOMAIN, o);
		return;
	}
	if (want)
		n = ptr ? 1 : name_addrs(d, nm, addrs, ADDRS_MAX);
	for (fit = n;; fit = fit * max / o->len) {
		p = reply_new(q, ldns_pkt_id(q), ldns_pkt_rd(q),
		    LDNS_PACKET_QUERY, LDNS_RCODE_NOERROR);
		ldns_pkt_set_aa(p, true);
		ldns_pkt_set_tc(p, fit < n);
		if (ldns_pkt_edns(q))
			ldns_pkt_set_edns_udp_size(p, DNS_UDP_MAX);
		for (i = 0; i < fit; i++)
			ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER,
			    ptr ? ptr_record(ldns_rr_owner(qr), nm.ptr)
			        : a_record(ldns_rr_owner(qr), addrs[i]));
		if (encode(p, o) < 0) {
			ldns_pkt_free(p);
			return;
		}
		ldns_pkt_free(p);
		if (o->len <= max || fit == 0)
			break;
	}
	o->verdict = DNS_ANSWER;
	o->rcode = LDNS_RCODE_NOERROR;
	o->nanswers = fit;
}

/* The largest reply the asker takes over UDP. */
static size_t
udp_max(const ldns_pkt *q)
{
	size_t m = ldns_pkt_edns(q) ? ldns_pkt_edns_udp_size(q) : DNS_UDP_MIN;

	if (m < DNS_UDP_MIN)
		m = DNS_UDP_MIN;
	return m > DNS_UDP_MAX ? DNS_UDP_MAX : m;
}

static void
forward(ldns_pkt *q, uint16_t fwd_id, struct dns_out *o)
{
	o->client_id = ldns_pkt_id(q);
	ldns_pkt_set_id(q, fwd_id);
	if (encode(q, o) == 0)
		o->verdict = DNS_FORWARD;
}

/* A query ldns could not read: FORMERR when its header says it is a
 * query, else nothing. */
static void
malformed(const uint8_t *buf, size_t len, struct dns_out *o)
{
	if (len < LDNS_HEADER_SIZE || LDNS_QR_WIRE(buf))
		return;
	answer_err(NULL, LDNS_ID_WIRE(buf), LDNS_RD_WIRE(buf) != 0,
	    LDNS_OPCODE_WIRE(buf), LDNS_RCODE_FORMERR, o);
}

void
dns_query(const struct disc *d, uint32_t src, const uint8_t *buf, size_t len,
    int tcp, int fwd, uint16_t fwd_id, struct dns_out *o)
{
	ldns_pkt *q = NULL;
	const ldns_rr *qr;
	struct dns_name nm;

	memset(o, 0, sizeof(*o));
	o->verdict = DNS_DROP;
	if (ldns_wire2pkt(&q, buf, len) != LDNS_STATUS_OK || q == NULL) {
		malformed(buf, len, o);
		goto out;
	}
	if (ldns_pkt_qr(q))
		goto out;
	if (ldns_pkt_get_opcode(q) != LDNS_PACKET_QUERY) {
		answer_err(NULL, ldns_pkt_id(q), ldns_pkt_rd(q),
		    ldns_pkt_get_opcode(q), LDNS_RCODE_NOTIMPL, o);
		goto out;
	}
	if (ldns_rr_list_rr_count(ldns_pkt_question(q)) != 1) {
		answer_err(NULL, ldns_pkt_id(q), ldns_pkt_rd(q),
		    LDNS_PACKET_QUERY, LDNS_RCODE_FORMERR, o);
		goto out;
	}
	qr = ldns_rr_list_rr(ldns_pkt_question(q), 0);
	qname_text(ldns_rr_owner(qr), o->qname, sizeof(o->qname));
	o->qtype = (uint16_t)ldns_rr_get_type(qr);
	nm.kind = Q_OTHER;
	if (o->qname[0] != '\0' && ldns_rr_get_class(qr) == LDNS_RR_CLASS_IN)
		nm = resolve(d, disc_asker(d, src), o->qname);
	if (nm.kind != Q_OTHER)
		answer_local(d, q, nm, tcp ? 65535 : udp_max(q), o);
	else if (fwd)
		forward(q, fwd_id, o);
	else
		answer_err(q, ldns_pkt_id(q), ldns_pkt_rd(q), LDNS_PACKET_QUERY,
		    LDNS_RCODE_REFUSED, o);
out:
	ldns_pkt_free(q);
}

int
dns_reply_id(const uint8_t *buf, size_t len, uint16_t *id)
{
	*id = 0;
	if (len < LDNS_HEADER_SIZE || !LDNS_QR_WIRE(buf))
		return -1;
	*id = LDNS_ID_WIRE(buf);
	return 0;
}

int
dns_upstream(const uint8_t *buf, size_t len, const char *qname, uint16_t qtype,
    uint16_t client_id, uint8_t **out, size_t *outlen)
{
	struct dns_out o;
	ldns_pkt *p = NULL;
	const ldns_rr *qr;
	char name[DNS_QNAME_MAX];
	int rc = -1;

	memset(&o, 0, sizeof(o));
	if (ldns_wire2pkt(&p, buf, len) != LDNS_STATUS_OK || p == NULL ||
	    !ldns_pkt_qr(p) || ldns_rr_list_rr_count(ldns_pkt_question(p)) != 1)
		goto out;
	qr = ldns_rr_list_rr(ldns_pkt_question(p), 0);
	qname_text(ldns_rr_owner(qr), name, sizeof(name));
	if (ldns_rr_get_type(qr) != qtype || strcmp(name, qname) != 0)
		goto out;
	ldns_pkt_set_id(p, client_id);
	if (encode(p, &o) < 0)
		goto out;
	*out = o.wire;
	*outlen = o.len;
	rc = 0;
out:
	ldns_pkt_free(p);
	return rc;
}

int
dns_error_reply(const uint8_t *query, size_t len, uint16_t client_id, int rcode,
    uint8_t **out, size_t *outlen)
{
	struct dns_out o;
	ldns_pkt *q = NULL;

	memset(&o, 0, sizeof(o));
	if (ldns_wire2pkt(&q, query, len) != LDNS_STATUS_OK || q == NULL) {
		ldns_pkt_free(q);
		return -1;
	}
	answer_err(q, client_id, ldns_pkt_rd(q), ldns_pkt_get_opcode(q), rcode,
	    &o);
	ldns_pkt_free(q);
	if (o.verdict != DNS_ANSWER)
		return -1;
	*out = o.wire;
	*outlen = o.len;
	return 0;
}
