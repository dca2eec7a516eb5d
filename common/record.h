/* record.h: replicated records, the contract every agent shares — canonical encoding, record hash rh, key and value limits, and the CRDT merge rule. */
#ifndef MTS_RECORD_H
#define MTS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "hash.h"

#define MTS_RECORD_VERSION 1
#define MTS_RECORD_MAX_VALUE (1u << 20) /* 1 MiB */
#define MTS_KEY_MAX 1024

/* value points at memory the record does not own (a decode buffer, a
 * request) unless the owner says otherwise. */
struct mts_record {
	uint64_t hlc;
	uint8_t origin[MTS_NODE_ID_LEN];
	bool tombstone;
	const uint8_t *value;
	size_t vlen;
};

/*
 * Canonical encoding, used for storage and for the record hash rh:
 *   u8 version (1) | u64be hlc | origin (16) | u8 flags (bit 0: tombstone)
 *   | value bytes (to the end)
 * Appends to out.
 */
void mts_record_encode(const struct mts_record *, struct mts_buf *out);
/* Decodes an encoding; value then points into buf. 0 or -MTS_ERR_INVAL
 * (short, unknown version, unknown flag bits, tombstone with a value,
 * value over MTS_RECORD_MAX_VALUE). */
int mts_record_decode(const uint8_t *buf, size_t len, struct mts_record *out);
/* rh = BLAKE2b-256 of the canonical encoding. */
void mts_record_hash(const struct mts_record *, uint8_t rh[MTS_HASH_LEN]);
/* The merge order: > 0 if a wins over b, < 0 if b wins, 0 if identical.
 * Larger (hlc, origin) wins; on a tie, the larger rh wins. */
int mts_record_cmp(const struct mts_record *a, const struct mts_record *b);

#endif
