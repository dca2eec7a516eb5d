/* rendezvous.h: the owner of a service by rendezvous hashing (DESIGN.md section 7) — the node with the highest BLAKE2b(service name || node id) among the candidates; shared by reconciled and mtsctl so both name the same owner. */
#ifndef MTS_RENDEZVOUS_H
#define MTS_RENDEZVOUS_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

/* The weight of node for service: the first 8 bytes of
 * BLAKE2b-256(service || node id), big endian. */
uint64_t mts_rendezvous_weight(const char *service,
    const uint8_t node[MTS_NODE_ID_LEN]);
/* The index in nodes[] (n node ids) of the owner of service: the highest
 * weight, ties to the lower id. -1 when n is 0. The caller passes only
 * the nodes it sees alive and not draining. */
long mts_rendezvous_owner(const char *service,
    const uint8_t (*nodes)[MTS_NODE_ID_LEN], size_t n);
/* The same choice from weights already computed (weights[i] of nodes[i]),
 * for a caller that keeps them: they never change. */
long mts_rendezvous_pick(const uint64_t *weights,
    const uint8_t (*nodes)[MTS_NODE_ID_LEN], size_t n);

#endif
