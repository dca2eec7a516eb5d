/* rendezvous.c: rendezvous (highest random weight) hashing of services to owner nodes. */
#include <string.h>

#include "rendezvous.h"

uint64_t
mts_rendezvous_weight(const char *service, const uint8_t node[MTS_NODE_ID_LEN])
{
	uint8_t h[MTS_HASH_LEN];
	mts_hash_ctx c;
	uint64_t w = 0;
	int i;

	mts_hash_init(&c);
	mts_hash_update(&c, service, strlen(service));
	mts_hash_update(&c, node, MTS_NODE_ID_LEN);
	mts_hash_final(&c, h);
	for (i = 0; i < 8; i++)
		w = (w << 8) | h[i];
	return w;
}

/* Whether node (weight w) wins over the owner so far: higher weight,
 * ties to the lower id. */
static int
beats(uint64_t w, const uint8_t *node, long owner, uint64_t best,
    const uint8_t *cur)
{
	return owner < 0 || w > best ||
	    (w == best && memcmp(node, cur, MTS_NODE_ID_LEN) < 0);
}

long
mts_rendezvous_owner(const char *service,
    const uint8_t (*nodes)[MTS_NODE_ID_LEN], size_t n)
{
	uint64_t best = 0, w;
	long owner = -1;
	size_t i;

	for (i = 0; i < n; i++) {
		w = mts_rendezvous_weight(service, nodes[i]);
		if (beats(w, nodes[i], owner, best,
		        owner < 0 ? NULL : nodes[owner])) {
			best = w;
			owner = (long)i;
		}
	}
	return owner;
}

long
mts_rendezvous_pick(const uint64_t *weights,
    const uint8_t (*nodes)[MTS_NODE_ID_LEN], size_t n)
{
	uint64_t best = 0;
	long owner = -1;
	size_t i;

	for (i = 0; i < n; i++)
		if (beats(weights[i], nodes[i], owner, best,
		        owner < 0 ? NULL : nodes[owner])) {
			best = weights[i];
			owner = (long)i;
		}
	return owner;
}
