/* delta_core.h: delta-push duplicate suppression — a bounded set of (key, hlc, origin) fingerprints with FIFO eviction. */
#ifndef MTS_DELTA_CORE_H
#define MTS_DELTA_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

struct mts_seen;

/* A set remembering the last cap distinct updates. */
struct mts_seen *mts_seen_new(size_t cap);
void mts_seen_free(struct mts_seen *);
/* Records (key, hlc, origin); 1 if it was new (forward it), 0 if seen. */
int mts_seen_add(struct mts_seen *, const uint8_t *key, size_t klen,
    uint64_t hlc, const uint8_t origin[MTS_NODE_ID_LEN]);
size_t mts_seen_count(const struct mts_seen *);

#endif
