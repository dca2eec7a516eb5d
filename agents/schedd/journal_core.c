/* journal_core.c: the ledger's journal records — framing with a length and a CRC-32C so a record torn by a crash is told from a good one, a canonical payload per change, the replay onto a ledger and the compaction rule. */
#include <string.h>

#include "journal_core.h"
#include "mtserr.h"

/* Castagnoli, reflected, bit by bit: records are small and rare enough
 * that a table buys nothing. */
uint32_t
mts_crc32c(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t crc = 0xffffffffu;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

void
mts_journal_head(struct mts_buf *b, uint64_t gen)
{
	mts_buf_put(b, MTS_JOURNAL_MAGIC, 8);
	mts_buf_put_u64be(b, gen);
}

int
mts_journal_head_parse(const uint8_t *buf, size_t len, uint64_t *gen)
{
	struct mts_rd rd;

	if (len < MTS_JOURNAL_HEAD || memcmp(buf, MTS_JOURNAL_MAGIC, 8) != 0)
		return -MTS_ERR_INVAL;
	mts_rd_init(&rd, buf + 8, 8);
	return mts_rd_u64be(&rd, gen);
}

static int
is_lease_kind(enum mts_ledger_change_kind k)
{
	return k == LCH_GRANT || k == LCH_COMMIT || k == LCH_ABORT ||
	    k == LCH_EXPIRE;
}

/* --- encoding -------------------------------------------------------------------- */

static void
put_str(struct mts_buf *b, const char *s, size_t max)
{
	size_t n = strnlen(s, max - 1);

	mts_buf_put_u16be(b, (uint16_t)n);
	mts_buf_put(b, s, n);
}

static void
put_res(struct mts_buf *b, struct mts_res r)
{
	mts_buf_put_u32be(b, r.cpu_millis);
	mts_buf_put_u64be(b, r.memory);
}

static void
put_payload(struct mts_buf *b, const struct mts_ledger_change *c,
    mts_time_t now, uint64_t wall)
{
	const struct mts_lease *l = &c->lease;
	const struct mts_ledger_task *t = &c->task;

	mts_buf_put_u8(b, (uint8_t)c->kind);
	if (!is_lease_kind(c->kind)) {
		put_str(b, t->id, sizeof(t->id));
		put_str(b, t->service, sizeof(t->service));
		put_res(b, t->res);
		return;
	}
	put_str(b, l->id, sizeof(l->id));
	put_str(b, l->owner, sizeof(l->owner));
	put_str(b, l->service, sizeof(l->service));
	put_str(b, l->task, sizeof(l->task));
	put_res(b, l->res);
	mts_buf_put_u32be(b, l->max_per_node);
	mts_buf_put_u64be(b,
	    l->expires <= now ? wall : wall + (uint64_t)(l->expires - now));
}

void
mts_journal_encode(struct mts_buf *b, const struct mts_ledger_change *c,
    mts_time_t now, uint64_t wall)
{
	size_t start = b->len, plen;

	mts_buf_put_u32be(b, 0); /* length and CRC, filled in below */
	mts_buf_put_u32be(b, 0);
	put_payload(b, c, now, wall);
	plen = b->len - start - MTS_JOURNAL_FRAME;
	mts_put_u32be(b->data + start, (uint32_t)plen);
	mts_put_u32be(b->data + start + 4,
	    mts_crc32c(b->data + start + MTS_JOURNAL_FRAME, plen));
}

/* --- decoding -------------------------------------------------------------------- */

/* A string of fewer than max bytes with no NUL in it, terminated. */
static int
get_str(struct mts_rd *rd, char *out, size_t max)
{
	const uint8_t *p;
	uint16_t n;

	if (mts_rd_u16be(rd, &n) < 0 || n >= max ||
	    mts_rd_bytes(rd, &p, n) < 0 || memchr(p, '\0', n) != NULL)
		return -MTS_ERR_INVAL;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

static int
get_res(struct mts_rd *rd, struct mts_res *r)
{
	if (mts_rd_u32be(rd, &r->cpu_millis) < 0 ||
	    mts_rd_u64be(rd, &r->memory) < 0)
		return -MTS_ERR_INVAL;
	return 0;
}

static int
get_lease(struct mts_rd *rd, struct mts_jrec *out)
{
	struct mts_lease *l = &out->ch.lease;

	if (get_str(rd, l->id, sizeof(l->id)) < 0 || l->id[0] == '\0' ||
	    get_str(rd, l->owner, sizeof(l->owner)) < 0 ||
	    get_str(rd, l->service, sizeof(l->service)) < 0 ||
	    get_str(rd, l->task, sizeof(l->task)) < 0 ||
	    get_res(rd, &l->res) < 0 ||
	    mts_rd_u32be(rd, &l->max_per_node) < 0 ||
	    mts_rd_u64be(rd, &out->expires_at_ms) < 0)
		return -MTS_ERR_INVAL;
	/* a commit names its task; the other kinds leave it as it was */
	if (out->ch.kind == LCH_COMMIT && l->task[0] == '\0')
		return -MTS_ERR_INVAL;
	return 0;
}

static int
get_task(struct mts_rd *rd, struct mts_jrec *out)
{
	struct mts_ledger_task *t = &out->ch.task;

	if (get_str(rd, t->id, sizeof(t->id)) < 0 || t->id[0] == '\0' ||
	    get_str(rd, t->service, sizeof(t->service)) < 0 ||
	    get_res(rd, &t->res) < 0)
		return -MTS_ERR_INVAL;
	return 0;
}

static int
get_payload(const uint8_t *p, size_t len, struct mts_jrec *out)
{
	struct mts_rd rd;
	uint8_t kind;

	memset(out, 0, sizeof(*out));
	mts_rd_init(&rd, p, len);
	if (mts_rd_u8(&rd, &kind) < 0 || kind >= LCH_NKINDS)
		return -MTS_ERR_INVAL;
	out->ch.kind = (enum mts_ledger_change_kind)kind;
	if ((is_lease_kind(out->ch.kind) ? get_lease(&rd, out)
	                                 : get_task(&rd, out)) < 0)
		return -MTS_ERR_INVAL;
	return rd.left == 0 ? 0 : -MTS_ERR_INVAL; /* no trailing bytes */
}

int
mts_journal_decode(const uint8_t *buf, size_t len, size_t *off,
    struct mts_jrec *out)
{
	struct mts_rd rd;
	uint32_t plen, crc;
	const uint8_t *p;

	if (*off >= len)
		return 0;
	mts_rd_init(&rd, buf + *off, len - *off);
	if (mts_rd_u32be(&rd, &plen) < 0 || mts_rd_u32be(&rd, &crc) < 0 ||
	    plen == 0 || plen > MTS_JOURNAL_REC_MAX ||
	    mts_rd_bytes(&rd, &p, plen) < 0 || mts_crc32c(p, plen) != crc ||
	    get_payload(p, plen, out) < 0)
		return -MTS_ERR_INVAL;
	*off += MTS_JOURNAL_FRAME + plen;
	return 1;
}

/* --- replay ---------------------------------------------------------------------- */

int
mts_journal_apply(struct mts_ledger *l, const struct mts_jrec *r,
    mts_time_t now, uint64_t wall)
{
	struct mts_lease lease;
	const struct mts_ledger_task *t = &r->ch.task;

	switch (r->ch.kind) {
	case LCH_TASK_ADD:
		mts_ledger_task_add(l, t->id, t->service, t->res);
		return 0;
	case LCH_TASK_DEL:
		(void)mts_ledger_task_remove(l, t->id);
		return 0;
	default:
		break;
	}
	lease = r->ch.lease;
	lease.expires = r->expires_at_ms <= wall
	    ? now
	    : now + (mts_time_t)(r->expires_at_ms - wall);
	lease.state = r->ch.kind == LCH_GRANT ? LEASE_PREPARED
	    : r->ch.kind == LCH_COMMIT        ? LEASE_COMMITTED
	                                      : LEASE_ENDED;
	if (r->ch.kind == LCH_COMMIT)
		mts_ledger_task_add(l, lease.task, lease.service, lease.res);
	return mts_ledger_lease_put(l, &lease) == LEDGER_OK ? 0 : -1;
}

void
mts_journal_replay(struct mts_ledger *l, const uint8_t *buf, size_t len,
    mts_time_t now, uint64_t wall, struct mts_journal_replay *out)
{
	struct mts_jrec r;
	size_t off = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	while ((rc = mts_journal_decode(buf, len, &off, &r)) == 1) {
		if (mts_journal_apply(l, &r, now, wall) < 0)
			out->full = 1;
		out->records++;
	}
	out->good_len = off;
	out->dropped = len - off;
}

int
mts_journal_compact_due(size_t jbytes, size_t jrecords, size_t snapbytes)
{
	if (jrecords >= MTS_JOURNAL_MAX_RECORDS)
		return 1;
	return jbytes >= MTS_JOURNAL_MIN_BYTES &&
	    jbytes / MTS_JOURNAL_SNAP_FACTOR >= snapbytes;
}
