/* dns_core.c: mts-netd's pure DNS decisions — queries parsed and replies built with ldns; names resolved against the service directory for the asking task's networks; the rest forwarded upstream or refused; upstream replies matched to the question forwarded. */
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
};

struct dns_name {
	enum dns_kind kind;
	const struct disc_svc *svc;
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

/*
 * The name's meaning for the asker: in the zone ("x.mts"), <svc>.<stack>,
 * tasks.<svc>.<stack>, and (the search domain "mts") <svc> and
 * tasks.<svc> of the asker's stack; outside it, <svc> and tasks.<svc> of
 * the asker's stack, or nothing of ours.
 */
static struct dns_name
resolve(const struct disc *d, const struct disc_svc *asker, const char *qname)
{
	struct dns_name r = { Q_OTHER, NULL };
	char buf[DNS_QNAME_MAX], *lab[DNS_LABELS_MAX];
	const char *stack = asker ? asker->stack : "";
	size_t n;
	int zone, tasks;

	snprintf(buf, sizeof(buf), "%s", qname);
	n = labels(buf, lab, DNS_LABELS_MAX);
	if (n == 0 || n > DNS_LABELS_MAX)
		return r;
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

	if (nm.kind == Q_SERVICE && !nm.svc->dnsrr) {
		if (nm.svc->vip == 0)
			return 0;
		a[0] = nm.svc->vip;
		return 1;
	}
	n = disc_svc_addrs(d, nm.svc, a, max);
	return n < max ? n : max;
}

/* Our own answer: NXDOMAIN for a name of the zone nobody may see, else
 * the A records (none for another type), as many as fit, TC if not all
 * did. */
static void
answer_local(const struct disc *d, const ldns_pkt *q, struct dns_name nm,
    size_t max, struct dns_out *o)
{
	const ldns_rr *qr = ldns_rr_list_rr(ldns_pkt_question(q), 0);
	uint32_t addrs[ADDRS_MAX];
	size_t n = 0, i, fit;
	ldns_pkt *p;
	int a = ldns_rr_get_type(qr) == LDNS_RR_TYPE_A ||
	    ldns_rr_get_type(qr) == LDNS_RR_TYPE_ANY;

	if (nm.kind == Q_NONE) {
		answer_err(q, ldns_pkt_id(q), ldns_pkt_rd(q), LDNS_PACKET_QUERY,
		    LDNS_RCODE_NXDOMAIN, o);
		return;
	}
	if (a)
		n = name_addrs(d, nm, addrs, ADDRS_MAX);
	for (fit = n;; fit = fit * max / o->len) {
		p = reply_new(q, ldns_pkt_id(q), ldns_pkt_rd(q),
		    LDNS_PACKET_QUERY, LDNS_RCODE_NOERROR);
		ldns_pkt_set_aa(p, true);
		ldns_pkt_set_tc(p, fit < n);
		if (ldns_pkt_edns(q))
			ldns_pkt_set_edns_udp_size(p, DNS_UDP_MAX);
		for (i = 0; i < fit; i++)
			ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER,
			    a_record(ldns_rr_owner(qr), addrs[i]));
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
