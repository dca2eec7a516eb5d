/* dns_core.h: mts-netd's pure DNS decisions — a query from a task's address is parsed with ldns and answered from the service directory (short names in the task's stack, <service>.<stack>.mts, tasks.<service>, <task>.mts, PTR of the cluster CIDR's VIPs and task addresses; only services sharing a network with the asker; NODATA for a type a known name has not), forwarded upstream, or refused as malformed; upstream replies are checked against what was forwarded. */
#ifndef DNS_CORE_H
#define DNS_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "disc_core.h"

#define DNS_ZONE "mts"
#define DNS_UDP_MIN 512   /* what a query without EDNS may get */
#define DNS_UDP_MAX 1232  /* what we answer at most over UDP with EDNS */
#define DNS_QNAME_MAX 256 /* the text of a name, escaped, with its dot */
#define DNS_TTL 0         /* answers follow the tasks: nobody caches them */

enum dns_verdict {
	DNS_DROP,    /* nothing to send (not a query, or too short to answer) */
	DNS_ANSWER,  /* send wire back to the asker */
	DNS_FORWARD, /* send wire upstream; it carries fwd_id */
};

struct dns_out {
	enum dns_verdict verdict;
	uint8_t *wire; /* malloc'd (caller frees), NULL with DNS_DROP */
	size_t len;
	int rcode;          /* DNS_ANSWER: the reply's rcode */
	size_t nanswers;    /* DNS_ANSWER: its A (or PTR) records */
	uint16_t client_id; /* DNS_FORWARD: the asker's id, to put back */
	uint16_t qtype;     /* the question, to match the upstream reply */
	char qname[DNS_QNAME_MAX]; /* lower case, "" when not parsed */
};

/*
 * One query of `len` bytes from address src (host order) over UDP (tcp
 * 0) or TCP (1). Malformed ones (ldns refuses them, or not exactly one
 * question) get FORMERR when the header can be read, are dropped
 * otherwise; other opcodes get NOTIMP; replies are dropped. A name of
 * the zone, a service name the asker may see or a reverse name of the
 * directory's cluster CIDR is answered (AA; NODATA for a type the name
 * has not); any other name is forwarded with id fwd_id when forward is
 * set, else REFUSED.
 */
void dns_query(const struct disc *, uint32_t src, const uint8_t *buf,
    size_t len, int tcp, int forward, uint16_t fwd_id, struct dns_out *out);

/* The id of an upstream reply (0 and -1 when it is no reply). */
int dns_reply_id(const uint8_t *buf, size_t len, uint16_t *id);
/*
 * An upstream reply to the query forwarded as (qname, qtype): parsed,
 * checked to answer that question, given back the asker's id and built
 * again into *out (malloc'd). 0, or -1 when it is malformed or answers
 * another question (then it is dropped and the asker waits on).
 */
int dns_upstream(const uint8_t *buf, size_t len, const char *qname,
    uint16_t qtype, uint16_t client_id, uint8_t **out, size_t *outlen);
/* A reply with rcode (SERVFAIL when upstream did not answer) to a query
 * that dns_query forwarded, with the asker's id; 0 or -1. */
int dns_error_reply(const uint8_t *query, size_t len, uint16_t client_id,
    int rcode, uint8_t **out, size_t *outlen);

void dns_out_free(struct dns_out *);

#endif
