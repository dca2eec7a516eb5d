/* vip_core.h: mts-netd's pure VIP rules — from the service directory, the nftables declarations that send a connection to a service's VIP to one of its healthy tasks (DNAT at random among them, in prerouting for the tasks and in output for the node), with the hairpin masquerade a task reaching itself through its own VIP needs. */
#ifndef VIP_CORE_H
#define VIP_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "disc_core.h"

/*
 * The declarations (for the inside of table inet mts) for every VIP
 * service of d: a map from VIP to nothing but a chain per service that
 * picks one of its tasks that are up; a VIP whose service has no task up
 * is rejected (ICMP port unreachable) rather than left to time out.
 * local: the addresses of this node's tasks; a task's connection to its
 * own VIP that lands on itself is masqueraded (to the bridge's address),
 * else its reply would never leave it and never be translated back.
 * A malloc'd string (caller frees); "" when there is no VIP.
 */
char *vip_nft(const struct disc *d, const uint32_t *local, size_t nlocal);

#endif
