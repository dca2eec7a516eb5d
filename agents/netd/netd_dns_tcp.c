/* netd_dns_tcp.c: mts-netd's DNS over TCP on the bridge's address — what a resolver asks again after a truncated UDP answer: one length-prefixed query per connection, answered from the directory (names of the cluster; others REFUSED, they are UDP's to forward), at most DNS_TCP_MAX connections, each closed after DNS_TCP_IDLE_MS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "dns_core.h"
#include "log.h"
#include "mtstime.h"
#include "netd.h"
#include "xmalloc.h"

#define DNS_TCP_MAX 16
#define DNS_TCP_IDLE_MS 5000
#define DNS_TCP_MSG (2 + 65535)

struct tcp_conn {
	struct netd_dns_tcp *t;
	int fd;
	struct mts_watch *w;
	uint32_t src;
	size_t have;
	mts_time_t deadline;
	uint8_t *buf; /* DNS_TCP_MSG bytes */
};

struct netd_dns_tcp {
	struct netd *n;
	int fd;
	struct mts_watch *w;
	struct tcp_conn c[DNS_TCP_MAX];
};

static void
conn_close(struct tcp_conn *c)
{
	mts_watch_free(c->w);
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->w = NULL;
	c->fd = -1;
	c->buf = NULL;
	c->have = 0;
}

/* The whole answer, or the connection goes (a resolver reads it at once;
 * one that does not is not waited for). */
static void
answer(struct tcp_conn *c, size_t len)
{
	const struct disc *dir = netd_disc_get(c->t->n);
	struct dns_out o;
	struct disc empty;
	uint8_t *w;

	disc_init(&empty);
	dns_query(dir ? dir : &empty, c->src, c->buf + 2, len, 1, 0, 0, &o);
	if (o.verdict == DNS_ANSWER && o.len <= 65535) {
		w = xmalloc(o.len + 2);
		w[0] = (uint8_t)(o.len >> 8);
		w[1] = (uint8_t)o.len;
		memcpy(w + 2, o.wire, o.len);
		if (send(c->fd, w, o.len + 2, MSG_DONTWAIT | MSG_NOSIGNAL) !=
		    (ssize_t)(o.len + 2))
			log_debug("dns: tcp answer not sent whole");
		free(w);
	}
	dns_out_free(&o);
}

static void
on_conn(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct tcp_conn *c = arg;
	ssize_t got;
	size_t len;

	got = recv(fd, c->buf + c->have, DNS_TCP_MSG - c->have, MSG_DONTWAIT);
	if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c);
		return;
	}
	if (got < 0)
		return;
	c->have += (size_t)got;
	if (c->have < 2)
		return;
	len = (size_t)c->buf[0] << 8 | c->buf[1];
	if (c->have < 2 + len)
		return;
	answer(c, len);
	conn_close(c); /* one query per connection */
}

static void
on_accept(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct netd_dns_tcp *t = arg;
	struct sockaddr_in from;
	socklen_t flen = sizeof(from);
	struct tcp_conn *c = NULL;
	size_t i;
	int cfd;

	if ((cfd = accept4(fd, (struct sockaddr *)&from, &flen,
	         SOCK_NONBLOCK | SOCK_CLOEXEC)) < 0)
		return;
	for (i = 0; i < DNS_TCP_MAX && c == NULL; i++)
		if (t->c[i].fd < 0)
			c = &t->c[i];
	if (c == NULL || flen != sizeof(from)) {
		close(cfd); /* full: the resolver tries again */
		return;
	}
	c->t = t;
	c->fd = cfd;
	c->src = ntohl(from.sin_addr.s_addr);
	c->deadline = now + DNS_TCP_IDLE_MS;
	c->buf = xmalloc(DNS_TCP_MSG);
	c->have = 0;
	if ((c->w = mts_loop_watch(t->n->loop, cfd, MTS_LOOP_IN, "dns tcp",
	         on_conn, c)) == NULL)
		conn_close(c);
}

void
netd_dns_tcp_close(struct netd_dns_tcp *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < DNS_TCP_MAX; i++)
		conn_close(&t->c[i]);
	mts_watch_free(t->w);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
}

/* Closes the connections past their deadline (called every 250 ms). */
void
netd_dns_tcp_tick(struct netd_dns_tcp *t, mts_time_t now)
{
	size_t i;

	for (i = 0; t != NULL && i < DNS_TCP_MAX; i++)
		if (t->c[i].fd >= 0 && t->c[i].deadline <= now)
			conn_close(&t->c[i]);
}

struct netd_dns_tcp *
netd_dns_tcp_open(struct netd *n, const struct sockaddr_in *sa)
{
	struct netd_dns_tcp *t = xcalloc(1, sizeof(*t));
	char ip[16];
	size_t i;
	int one = 1;

	t->n = n;
	for (i = 0; i < DNS_TCP_MAX; i++)
		t->c[i].fd = -1;
	inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
	if ((t->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	         0)) < 0 ||
	    setsockopt(t->fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)) < 0 ||
	    setsockopt(t->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) <
	        0 ||
	    bind(t->fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 ||
	    listen(t->fd, DNS_TCP_MAX) < 0 ||
	    (t->w = mts_loop_watch(n->loop, t->fd, MTS_LOOP_IN, "dns tcp",
	         on_accept, t)) == NULL) {
		log_warn("dns: tcp %s:%u", ip, ntohs(sa->sin_port));
		netd_dns_tcp_close(t);
		return NULL;
	}
	return t;
}
