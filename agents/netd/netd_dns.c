/* netd_dns.c: mts-netd's DNS server — a UDP socket on the bridge's address (port [netd] dns_port; TCP beside it: netd_dns_tcp.c), each query handed to dns_core with the service directory, names not ours forwarded to the host's resolvers over a second socket with a deadline (SERVFAIL when it passes), all on the loop, nothing blocking. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ldns/ldns.h>
#include <sodium.h>

#include "dns_core.h"
#include "log.h"
#include "mtstime.h"
#include "netd.h"
#include "xmalloc.h"

#define DNS_PENDING_MAX 256 /* forwarded queries waiting for an answer */
#define DNS_FORWARD_MS 2000 /* then SERVFAIL */
#define DNS_UPSTREAM_MAX 3  /* as resolv.conf's MAXNS */
#define DNS_MSG_MAX 65535
#define RESOLV_CONF "/etc/resolv.conf"

struct pending {
	int used;
	uint16_t fwd_id, client_id, qtype;
	struct sockaddr_in client;
	char qname[DNS_QNAME_MAX];
	mts_time_t deadline;
	uint8_t *query; /* as forwarded, for the SERVFAIL */
	size_t qlen;
};

struct netd_dns {
	struct netd *n;
	int fd, up_fd;
	struct mts_watch *w, *up_w;
	int32_t bound; /* the /24 whose gateway fd is bound to; -1: none */
	struct sockaddr_in upstream[DNS_UPSTREAM_MAX];
	size_t nupstream, next_up;
	struct netd_dns_tcp *tcp;
	struct pending pend[DNS_PENDING_MAX];
	struct mts_timer timer;
	uint8_t buf[DNS_MSG_MAX];
	uint64_t queries, answered, forwarded, failed;
};

/* "a.b.c.d" or "a.b.c.d:port" into a UDP address; 0 or -1. */
static int
parse_upstream(const char *text, struct sockaddr_in *sa)
{
	char host[32];
	const char *colon = strchr(text, ':');
	long port = 53;
	char *end;

	if (strlen(text) >= sizeof(host))
		return -1;
	snprintf(host, sizeof(host), "%.*s",
	    colon ? (int)(colon - text) : (int)strlen(text), text);
	if (colon != NULL) {
		port = strtol(colon + 1, &end, 10);
		if (*end != '\0' || port < 1 || port > 65535)
			return -1;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

/* [netd] dns_upstream, or the IPv4 nameservers of /etc/resolv.conf
 * (IPv6 ones are skipped: the forwarding socket is IPv4). */
static void
load_upstream(struct netd_dns *d, const char *conf)
{
	char line[256], word[64], *list, *tok, *save = NULL;
	FILE *f;

	if (conf != NULL && conf[0] != '\0') {
		list = xstrdup(conf);
		for (tok = strtok_r(list, ", ", &save);
		     tok != NULL && d->nupstream < DNS_UPSTREAM_MAX;
		     tok = strtok_r(NULL, ", ", &save))
			if (parse_upstream(tok, &d->upstream[d->nupstream]) ==
			    0)
				d->nupstream++;
			else
				log_warnx("[netd] dns_upstream: '%s' is not "
				          "an IPv4 address[:port]: ignored",
				    tok);
		free(list);
		return;
	}
	if ((f = fopen(RESOLV_CONF, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL &&
	    d->nupstream < DNS_UPSTREAM_MAX)
		if (sscanf(line, "nameserver %63s", word) == 1 &&
		    strchr(word, ':') == NULL &&
		    parse_upstream(word, &d->upstream[d->nupstream]) == 0)
			d->nupstream++;
	fclose(f);
}

static void
send_to(int fd, const uint8_t *w, size_t len, const struct sockaddr_in *to)
{
	if (sendto(fd, w, len, 0, (const struct sockaddr *)to, sizeof(*to)) <
	        0 &&
	    errno != EAGAIN)
		log_debug("dns: sendto: %s", strerror(errno));
}

/* --- forwarding -------------------------------------------------------------- */

static void
pending_free(struct pending *p)
{
	free(p->query);
	memset(p, 0, sizeof(*p));
}

static void
arm(struct netd_dns *d)
{
	mts_time_t first = 0;
	size_t i;

	for (i = 0; i < DNS_PENDING_MAX; i++)
		if (d->pend[i].used &&
		    (first == 0 || d->pend[i].deadline < first))
			first = d->pend[i].deadline;
	if (first != 0)
		mts_timer_arm(d->n->loop, &d->timer, first);
	else
		mts_timer_disarm(d->n->loop, &d->timer);
}

static void
fail(struct netd_dns *d, struct pending *p)
{
	uint8_t *w = NULL;
	size_t len;

	if (dns_error_reply(p->query, p->qlen, p->client_id,
	        LDNS_RCODE_SERVFAIL, &w, &len) == 0)
		send_to(d->fd, w, len, &p->client);
	free(w);
	d->failed++;
	pending_free(p);
}

static void
on_timer(void *arg, mts_time_t now)
{
	struct netd_dns *d = arg;
	size_t i;

	for (i = 0; i < DNS_PENDING_MAX; i++)
		if (d->pend[i].used && d->pend[i].deadline <= now)
			fail(d, &d->pend[i]);
	arm(d);
}

static struct pending *
pending_new(struct netd_dns *d, uint16_t *id)
{
	size_t i, j;

	for (i = 0; i < DNS_PENDING_MAX; i++)
		if (!d->pend[i].used)
			break;
	if (i == DNS_PENDING_MAX || d->nupstream == 0 || d->up_fd < 0)
		return NULL;
	/* an id nobody waits with: 16 random bits, so that an off-path
	 * sender has to guess it (and the upstream port) */
	for (;;) {
		randombytes_buf(id, sizeof(*id));
		for (j = 0; j < DNS_PENDING_MAX; j++)
			if (d->pend[j].used && d->pend[j].fwd_id == *id)
				break;
		if (j == DNS_PENDING_MAX)
			return &d->pend[i];
	}
}

static void
forward(struct netd_dns *d, struct dns_out *o, const struct sockaddr_in *from,
    uint16_t id, struct pending *p, mts_time_t now)
{
	p->used = 1;
	p->fwd_id = id;
	p->client_id = o->client_id;
	p->qtype = o->qtype;
	p->client = *from;
	snprintf(p->qname, sizeof(p->qname), "%s", o->qname);
	p->deadline = now + DNS_FORWARD_MS;
	p->query = o->wire;
	p->qlen = o->len;
	o->wire = NULL;
	send_to(d->up_fd, p->query, p->qlen, &d->upstream[d->next_up]);
	d->next_up = (d->next_up + 1) % d->nupstream;
	d->forwarded++;
	arm(d);
}

/* An upstream reply: to the asker whose question it answers. */
static void
on_upstream(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct netd_dns *d = arg;
	struct sockaddr_in from;
	socklen_t flen;
	uint8_t *w;
	size_t i, len;
	ssize_t got;
	uint16_t id;

	for (;;) {
		flen = sizeof(from);
		got = recvfrom(fd, d->buf, sizeof(d->buf), MSG_DONTWAIT,
		    (struct sockaddr *)&from, &flen);
		if (got < 0)
			return;
		if (dns_reply_id(d->buf, (size_t)got, &id) < 0)
			continue;
		for (i = 0; i < DNS_PENDING_MAX; i++) {
			struct pending *p = &d->pend[i];

			if (!p->used || p->fwd_id != id)
				continue;
			w = NULL;
			if (dns_upstream(d->buf, (size_t)got, p->qname,
			        p->qtype, p->client_id, &w, &len) == 0) {
				send_to(d->fd, w, len, &p->client);
				free(w);
				pending_free(p);
			}
			break;
		}
	}
}

/* --- queries ------------------------------------------------------------------- */

static void
one_query(struct netd_dns *d, const struct sockaddr_in *from, size_t len,
    mts_time_t now)
{
	struct dns_out o;
	struct pending *p;
	uint16_t id = 0;
	const struct disc *dir = netd_disc_get(d->n);
	struct disc empty;

	disc_init(&empty);
	p = pending_new(d, &id);
	d->queries++;
	dns_query(dir ? dir : &empty, ntohl(from->sin_addr.s_addr), d->buf, len,
	    0, p != NULL, id, &o);
	if (o.verdict == DNS_ANSWER) {
		send_to(d->fd, o.wire, o.len, from);
		d->answered++;
	} else if (o.verdict == DNS_FORWARD) {
		forward(d, &o, from, id, p, now);
	}
	dns_out_free(&o);
}

static void
on_query(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct netd_dns *d = arg;
	struct sockaddr_in from;
	socklen_t flen;
	ssize_t got;
	int k;

	/* a bounded batch per turn: a flood cannot starve the loop */
	for (k = 0; k < 64; k++) {
		flen = sizeof(from);
		got = recvfrom(fd, d->buf, sizeof(d->buf), MSG_DONTWAIT,
		    (struct sockaddr *)&from, &flen);
		if (got < 0)
			return;
		if (flen != sizeof(from) || from.sin_family != AF_INET)
			continue;
		one_query(d, &from, (size_t)got, now);
	}
}

/* --- the sockets ----------------------------------------------------------------- */

static int
udp_socket(void)
{
	return socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

static void
server_close(struct netd_dns *d)
{
	mts_watch_free(d->w);
	d->w = NULL;
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	d->bound = -1;
	netd_dns_tcp_close(d->tcp);
	d->tcp = NULL;
}

/* The server's socket on the bridge's address (.1 of the node's /24),
 * again whenever the /24 changed. IP_FREEBIND: the address may come a
 * moment later. */
static void
server_bind(struct netd_dns *d)
{
	struct netd *n = d->n;
	struct sockaddr_in sa;
	char ip[16];
	int one = 1;

	if (n->applied < 0 || n->applied == d->bound)
		return;
	server_close(d);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)n->cfg.dns_port);
	sa.sin_addr.s_addr =
	    htonl(netd_subnet_net(&n->cfg.cidr, (uint32_t)n->applied) | 1);
	inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
	if ((d->fd = udp_socket()) < 0 ||
	    setsockopt(d->fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)) < 0 ||
	    bind(d->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		log_warn("dns: udp %s:%u", ip, n->cfg.dns_port);
		server_close(d);
		return;
	}
	if ((d->w = mts_loop_watch(n->loop, d->fd, MTS_LOOP_IN, "dns", on_query,
	         d)) == NULL) {
		server_close(d);
		return;
	}
	d->bound = n->applied;
	d->tcp = netd_dns_tcp_open(n, &sa);
	log_info("dns on %s:%u (udp%s), %zu upstream resolvers", ip,
	    n->cfg.dns_port, d->tcp ? ", tcp" : "", d->nupstream);
}

int
netd_dns_open(struct netd *n)
{
	struct netd_dns *d = xcalloc(1, sizeof(*d));

	d->n = n;
	d->fd = d->up_fd = -1;
	d->bound = -1;
	n->dns = d;
	mts_timer_init(&d->timer, "dns forwarding", on_timer, d);
	if (n->cfg.dns_port == 0)
		return 0; /* no DNS server on this node */
	load_upstream(d, n->cfg.dns_upstream);
	if (d->nupstream > 0 &&
	    ((d->up_fd = udp_socket()) < 0 ||
	        (d->up_w = mts_loop_watch(n->loop, d->up_fd, MTS_LOOP_IN,
	             "dns upstream", on_upstream, d)) == NULL)) {
		log_warn("dns: the forwarding socket");
		return -1;
	}
	server_bind(d);
	return 0;
}

void
netd_dns_tick(struct netd *n)
{
	if (n->dns != NULL && n->cfg.dns_port != 0) {
		server_bind(n->dns);
		netd_dns_tcp_tick(n->dns->tcp, mts_now());
	}
}

void
netd_dns_close(struct netd *n)
{
	struct netd_dns *d = n->dns;
	size_t i;

	if (d == NULL)
		return;
	mts_timer_disarm(n->loop, &d->timer);
	server_close(d);
	mts_watch_free(d->up_w);
	if (d->up_fd >= 0)
		close(d->up_fd);
	for (i = 0; i < DNS_PENDING_MAX; i++)
		pending_free(&d->pend[i]);
	free(d);
	n->dns = NULL;
}
