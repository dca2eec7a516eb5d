/* vip_core.h: mts-netd's pure VIP rules — from the service directory, the nftables declarations that send a connection to a service's VIP to one of its healthy tasks (DNAT at random among them, in prerouting for the tasks and in output for the node), with the hairpin masquerade a task reaching itself through its own VIP needs; and the published ports (ingress on every node, host mode where a task runs). */
#ifndef VIP_CORE_H
#define VIP_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "disc_core.h"

/* This node, as the rules need it. */
struct vip_node {
	const uint32_t *local; /* the addresses of this node's tasks */
	size_t nlocal;
	uint8_t self[MTS_NODE_ID_LEN];
	uint32_t gateway;              /* the bridge's address; 0: none yet */
	uint32_t cidr_base, cidr_mask; /* the cluster CIDR */
	const char *wg_if;             /* mts0 */
};

/*
 * The declarations (for the inside of table inet mts) for every VIP
 * service of d: a map from VIP to nothing but a chain per service that
 * picks one of its tasks that are up; a VIP whose service has no task up
 * is rejected (ICMP port unreachable) rather than left to time out.
 * A task's connection to its own VIP that lands on itself is masqueraded
 * (to the bridge's address), else its reply would never leave it.
 *
 * Published ports: a connection to one of the node's own addresses on an
 * ingress port goes to one of the service's tasks that are up, on any
 * node; one that goes on to another node is SNAT'ed to this node's
 * gateway (its reply must come back through this node, and WireGuard
 * takes from a peer only that peer's addresses); one that lands on a
 * task here keeps its source. A host-mode port goes only to this node's
 * tasks, with its source kept, and is not opened where none runs. The
 * tasks' target ports are let through the isolation (chain allow).
 * A malloc'd string (caller frees); "" when there is nothing.
 */
char *vip_nft(const struct disc *d, const struct vip_node *node);

#endif
