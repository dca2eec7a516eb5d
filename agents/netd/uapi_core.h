/* uapi_core.h: mts-netd's pure side of WireGuard's UAPI socket — the queue of requests (one in flight, a kind already waiting absorbs a new one), and the answers read from the socket: when one is complete, its errno, the private key taken out of a kept copy. */
#ifndef NETD_UAPI_CORE_H
#define NETD_UAPI_CORE_H

#include <stddef.h>
#include <sys/types.h>

/* What netd asks wireguard-go, one connection each. */
enum netd_uapi_kind {
	NETD_UAPI_START, /* get=1 while mts0 is being configured */
	NETD_UAPI_SETUP, /* set=1: the key and the port */
	NETD_UAPI_PEERS, /* set=1: the peers' difference, built when sent */
	NETD_UAPI_STATS, /* get=1 for status: the counters */
	NETD_UAPI_KINDS
};

#define NETD_UAPI_MAX (1u << 20) /* the longest answer read */

/* Waiting kinds in arrival order, each at most once, and the one in
 * flight (-1: none). A kind pushed again while it waits is the same
 * request (its text is built when it is sent, from the state then); one
 * pushed while it is in flight waits for the next turn, since what it was
 * pushed for may postdate what was sent. */
struct netd_uapiq {
	int inflight;
	int wait[NETD_UAPI_KINDS];
	size_t n;
};

void netd_uapiq_init(struct netd_uapiq *);
/* 1 when kind was queued, 0 when a waiting one absorbed it, -1 for a
 * kind out of range. */
int netd_uapiq_push(struct netd_uapiq *, int kind);
/* The next kind to send, now in flight; -1 when one is in flight already
 * or nothing waits. */
int netd_uapiq_next(struct netd_uapiq *);
/* The request in flight ended (answered, failed or timed out). */
void netd_uapiq_done(struct netd_uapiq *);
/* Whether kind waits or is in flight. */
int netd_uapiq_has(const struct netd_uapiq *, int kind);

/* The length of the complete answer at the start of buf (its lines and
 * the blank line that ends it), 0 while more is to come, -MTS_ERR_TOOBIG
 * when max bytes came without an end, -MTS_ERR_INVAL for a NUL byte. */
ssize_t netd_uapi_complete(const char *buf, size_t len, size_t max);
/* The errno of a complete answer (NUL-terminated): its last line must be
 * errno=N; N (0: done), or -1 when it has none or it is not a number. */
int netd_uapi_errno(const char *rep);
/* Takes the private_key= line out of a NUL-terminated get answer, in
 * place (the bytes moved over are zeroed): what is kept holds no key. */
void netd_uapi_redact(char *get);

#endif
