/* fuzz_schedd_journal.c: libFuzzer target for mts-schedd's journal decoder and replay (agents/schedd/journal_core.c): any bytes replay onto a ledger without a crash, every record taken was canonical, and the replay stops exactly at the first record it did not take. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agents/schedd/journal_core.h"
#include "agents/schedd/ledger_core.h"
#include "buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A decoded record encodes back to exactly its bytes. */
static void
check_canonical(const uint8_t *rec, size_t len, const struct mts_jrec *r)
{
	struct mts_ledger_change c = r->ch;
	struct mts_buf b;

	if (r->expires_at_ms > INT64_MAX)
		return; /* not a deadline the encoder can be given */
	c.lease.expires = (mts_time_t)r->expires_at_ms;
	mts_buf_init(&b);
	mts_journal_encode(&b, &c, 0, 0);
	if (b.len != len || memcmp(b.data, rec, len) != 0)
		abort();
	mts_buf_free(&b);
}

/* Frames the payloads of in (each a length byte, then that many bytes)
 * with their right lengths and CRCs, so the payload decoder is reached
 * past the CRC check. */
static void
frame_payloads(const uint8_t *in, size_t len, struct mts_buf *out)
{
	while (len > 0) {
		size_t n = in[0] < len - 1 ? in[0] : len - 1;

		mts_buf_put_u32be(out, (uint32_t)n);
		mts_buf_put_u32be(out, mts_crc32c(in + 1, n));
		mts_buf_put(out, in + 1, n);
		in += n + 1;
		len -= n + 1;
	}
}

static void check_journal(const uint8_t *data, size_t size);

/* The first byte picks the raw bytes or framed payloads. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mts_buf b;

	if (size == 0 || (data[0] & 1) == 0) {
		check_journal(data + (size > 0), size - (size > 0));
		return 0;
	}
	mts_buf_init(&b);
	frame_payloads(data + 1, size - 1, &b);
	check_journal(b.data ? b.data : (const uint8_t *)"", b.len);
	mts_buf_free(&b);
	return 0;
}

static void
check_journal(const uint8_t *data, size_t size)
{
	struct mts_journal_replay rp;
	struct mts_ledger l;
	struct mts_digest d;
	struct mts_jrec r;
	size_t off = 0, prev = 0, n = 0;
	uint64_t gen;
	int rc;

	(void)mts_journal_head_parse(data, size, &gen);
	while ((rc = mts_journal_decode(data, size, &off, &r)) == 1) {
		if (off <= prev || off > size)
			abort();
		check_canonical(data + prev, off - prev, &r);
		prev = off;
		n++;
	}
	if (rc == 0 && off != size)
		abort();
	/* a small ledger, so that max_entries is reached too */
	mts_ledger_init(&l, (struct mts_res){ 4000, 1u << 30 }, 64);
	mts_journal_replay(&l, data, size, 1000, 1700000000000ull, &rp);
	if (rp.records != n || rp.good_len != prev ||
	    rp.good_len + rp.dropped != size || l.nleases > 64)
		abort();
	mts_ledger_expire(&l, 1000000);
	mts_ledger_digest(&l, &d);
	mts_ledger_free(&l);
}
