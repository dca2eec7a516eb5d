/* image_held.h: the value of the replicated i/<node> record (a packed mts.shim.ImageSet) — written by a node's shim, read by nodes looking for an image. */
#ifndef MTS_SHIM_IMAGE_HELD_H
#define MTS_SHIM_IMAGE_HELD_H

#include <stddef.h>
#include <stdint.h>

#include "peer_core.h"

/* Packs held[0..n) into *buf (malloc'd, the caller frees) and *len. */
void mts_held_encode(const struct mts_held *held, size_t n, uint8_t **buf,
    size_t *len);
/* Decodes a record value into *out (n entries, malloc'd, the caller frees;
 * NULL when none). Entries with a malformed name or digest are left out;
 * more than MTS_PEER_MAX_HELD entries, trailing garbage or undecodable
 * bytes are -MTS_ERR_INVAL. */
int mts_held_decode(const uint8_t *buf, size_t len, struct mts_held **out,
    size_t *n);

#endif
