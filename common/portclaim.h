/* portclaim.h: who holds a contested published port — the pure rule every node's netd (which opens the port only for the holder) and mtsctl (which shows the conflict) apply to the same replicated service records: of the services publishing one (protocol, port), the one created first (creation HLC, then name) holds it. */
#ifndef MTS_PORTCLAIM_H
#define MTS_PORTCLAIM_H

#include <stddef.h>
#include <stdint.h>

/* One service's claim of one published port. */
struct mts_port_claim {
	const char *service; /* <stack>_<service>; borrowed */
	uint64_t created;    /* the service's creation HLC (mts_svc_created) */
	uint32_t port;       /* published */
	int udp;             /* else tcp */
};

/*
 * For each of the n claims, holder[i] = the index of the claim that holds
 * claim i's (protocol, port): among the claims of that port, the one of
 * the service with the smallest (created, service name); the first such
 * claim when a service claims a port twice. A claim holds its port when
 * c[holder[i]].service is its own service; otherwise it loses it to that
 * one. Independent of the claims' order: every node that holds the same
 * records picks the same holder. holder has n entries (caller's).
 */
void mts_port_holders(const struct mts_port_claim *c, size_t n, size_t *holder);

/* Whether claim i loses its port (to c[holder[i]].service). */
int mts_port_lost(const struct mts_port_claim *c, const size_t *holder,
    size_t i);

#endif
