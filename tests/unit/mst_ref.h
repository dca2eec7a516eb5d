/* mst_ref.h: a from-scratch reference MST to check the incremental one. */
#ifndef MTS_TEST_MST_REF_H
#define MTS_TEST_MST_REF_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

struct mst_ref_item {
	const uint8_t *key; /* borrowed */
	size_t klen;
	uint8_t rh[MTS_HASH_LEN];
};

/* Sorts items by key (memcmp order, shorter prefix first). */
void mst_ref_sort(struct mst_ref_item *items, size_t n);
/* Root hash and page count of the MST of items (sorted, distinct keys),
 * computed directly from the definition in DESIGN.md section 5. */
void mst_ref_root(const struct mst_ref_item *items, size_t n,
    uint8_t root[MTS_HASH_LEN], size_t *pages);

#endif
