/* testagent_core.h: the test agent's pure core — an ordered in-memory key/value store of HLC-stamped records and tombstones, and the faults it can be told to commit; no I/O, the wall clock is an argument. */
#ifndef TA_CORE_H
#define TA_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "hlc.h"

/* One stored record; the core owns key and value. */
struct ta_record {
	uint8_t *key;
	size_t klen;
	uint8_t *value; /* never NULL (an empty value is a 1-byte buffer) */
	size_t vlen;
	uint64_t hlc;
	int tomb;
};

struct ta_core {
	struct ta_record *r; /* in key order */
	size_t n;
	struct mts_hlc hlc;
};

/* What a scan asks for: records after `after` (exclusive) that start with
 * `prefix`, at most limit of them (0: TA_SCAN_DEFAULT). */
struct ta_scan {
	const uint8_t *prefix;
	size_t plen;
	const uint8_t *after;
	size_t alen;
	int tombstones;
	size_t limit;
};

#define TA_SCAN_DEFAULT 1000

void ta_core_init(struct ta_core *);
void ta_core_free(struct ta_core *);
/* The record of key, or NULL. */
const struct ta_record *ta_get(const struct ta_core *, const uint8_t *key,
    size_t klen);
/* Stores value under key (tomb: a tombstone, value ignored), stamped with
 * an HLC after every earlier one at wall-clock time wall_ms; returns the
 * stored record (valid until the next write). */
const struct ta_record *ta_put(struct ta_core *, const uint8_t *key,
    size_t klen, const uint8_t *value, size_t vlen, int tomb, uint64_t wall_ms);
/* Fills out (room for q's limit) with the matching records in key order;
 * returns how many, *more set when some were left out. */
size_t ta_scan(const struct ta_core *, const struct ta_scan *q,
    const struct ta_record **out, int *more);
/* A digest of every key and HLC (zero when empty), and the live count. */
void ta_root(const struct ta_core *, uint8_t hash[MTS_HASH_LEN],
    uint64_t *live);

/* -x FAULT: what the agent does wrong, after -w ms. */
enum ta_fault_kind {
	TA_FAULT_NONE,
	TA_FAULT_EXIT,    /* exit:CODE */
	TA_FAULT_ABORT,   /* abort */
	TA_FAULT_SYSCALL, /* a syscall outside any policy (ptrace) */
	TA_FAULT_INET,    /* socket(AF_INET) */
	TA_FAULT_ORPHAN,  /* at start: a grandchild in its own session */
	TA_NFAULTS,
};

struct ta_fault {
	enum ta_fault_kind kind;
	int code; /* TA_FAULT_EXIT */
};

/* 0, or -1 for text that names no fault. */
int ta_fault_parse(const char *text, struct ta_fault *);

#endif
