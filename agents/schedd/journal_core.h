/* journal_core.h: the ledger's journal — one framed record (length, CRC-32C, payload) per ledger change, the file's header naming the snapshot it follows, the replay of a journal onto a ledger that drops a torn or corrupt tail, and when to compact; pure (the clocks come in as arguments). */
#ifndef MTS_JOURNAL_CORE_H
#define MTS_JOURNAL_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "ledger_core.h"

#define MTS_JOURNAL_MAGIC "mtsjrnl1"
#define MTS_JOURNAL_HEAD 16 /* the magic, the generation (u64) */
#define MTS_JOURNAL_FRAME 8 /* a record's length (u32) and CRC (u32) */
#define MTS_JOURNAL_REC_MAX 1024
/* compaction: when the journal holds this many records, or more bytes
 * than MTS_JOURNAL_SNAP_FACTOR times the snapshot (and at least
 * MTS_JOURNAL_MIN_BYTES) */
#define MTS_JOURNAL_MAX_RECORDS 20000
#define MTS_JOURNAL_SNAP_FACTOR 4
#define MTS_JOURNAL_MIN_BYTES (256u * 1024)

/* A decoded record: the change, with the lease's deadline as Unix ms
 * (the monotonic clock does not survive a reboot). */
struct mts_jrec {
	struct mts_ledger_change ch;
	uint64_t expires_at_ms;
};

struct mts_journal_replay {
	size_t records;  /* applied */
	size_t good_len; /* bytes up to the end of the last good record */
	size_t dropped;  /* bytes after it: a torn or corrupt tail */
	int full;        /* a record did not fit the ledger (max_entries) */
};

uint32_t mts_crc32c(const void *, size_t);

/* The header of a journal that follows the snapshot of generation gen. */
void mts_journal_head(struct mts_buf *, uint64_t gen);
/* 0 and *gen, or -MTS_ERR_INVAL when buf does not start with a header. */
int mts_journal_head_parse(const uint8_t *buf, size_t len, uint64_t *gen);

/* Appends the framed record of c; the lease's deadline (monotonic, as
 * `now`) is written as Unix ms, `wall` being the Unix ms of `now`. */
void mts_journal_encode(struct mts_buf *, const struct mts_ledger_change *c,
    mts_time_t now, uint64_t wall);
/* Decodes the record at buf + *off: 1 (and *off moves past it), 0 at the
 * end of buf, -MTS_ERR_INVAL for a record cut short, failing its CRC or
 * not one the encoder writes. */
int mts_journal_decode(const uint8_t *buf, size_t len, size_t *off,
    struct mts_jrec *out);
/* Applies one record to l as the change it records left it: 0, or -1
 * when a lease did not fit the ledger's max_entries. */
int mts_journal_apply(struct mts_ledger *l, const struct mts_jrec *r,
    mts_time_t now, uint64_t wall);
/* Applies the records of buf (the journal after its header) in order up
 * to the first bad one; what follows it is counted as dropped. */
void mts_journal_replay(struct mts_ledger *l, const uint8_t *buf, size_t len,
    mts_time_t now, uint64_t wall, struct mts_journal_replay *out);
/* Whether a journal of jbytes and jrecords after a snapshot of snapbytes
 * is due to be compacted. */
int mts_journal_compact_due(size_t jbytes, size_t jrecords, size_t snapbytes);

#endif
