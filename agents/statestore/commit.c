/* commit.c: group commit on the loop — the current record as the rounds see it, handing the open round to the commit thread, applying, publishing and answering a synced round. */

#include "committer.h"
#include "ipc.h"
#include "log.h"
#include "mst_core.h"
#include "mtserr.h"
#include "record.h"
#include "round.h"
#include "statestore.h"
#include "store.h"

#define ROUND_MAX 512 /* requests gathered when a sync ends */

int
ss_current(struct statestore *ss, const uint8_t *key, size_t klen,
    struct mts_record *rec, uint8_t **buf)
{
	struct pending *p = round_find(ss->open, key, klen);
	size_t vlen;
	char err[256];
	int r;

	*buf = NULL;
	if (p == NULL && committer_busy(ss->committer))
		p = round_find(ss->syncing, key, klen);
	if (p != NULL)
		return mts_record_decode(p->enc, p->elen, rec) == 0
		    ? 1
		    : -MTS_ERR_IO;
	r = mts_store_get(ss->db, MTS_CF_RECORDS, key, klen, buf, &vlen, err,
	    sizeof(err));
	if (r == -MTS_ERR_NOTFOUND)
		return 0;
	if (r < 0) {
		log_warnx("read %.*s: %s", (int)klen, key, err);
		return r;
	}
	if (mts_record_decode(*buf, vlen, rec) < 0) {
		log_warnx("stored record of %.*s is corrupt", (int)klen, key);
		return -MTS_ERR_IO;
	}
	return 1;
}

void
ss_round_submit(struct statestore *ss)
{
	struct round *t;
	uint8_t hlcbuf[8];

	if (ss->open->n == 0 || committer_busy(ss->committer))
		return;
	mts_put_u64be(hlcbuf, ss->hlc.last);
	mts_store_batch_put(ss->open->batch, MTS_CF_META, SS_META_HLC,
	    sizeof(SS_META_HLC) - 1, hlcbuf, sizeof(hlcbuf));
	t = ss->syncing;
	ss->syncing = ss->open;
	ss->open = t;
	committer_submit(ss->committer, ss->syncing->batch);
}

static void
fail_round(struct round *r, const char *err)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->pend[i].call != NULL)
			mts_ipc_reply_error(r->pend[i].call, MTS_ERR_IO,
			    "write failed: %s", err);
	round_reset(r);
}

/* The synced round r into the MST, the live count and the change feed. */
static void
apply_round(struct statestore *ss, struct round *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		struct pending *p = &r->pend[i];

		mts_mst_put(ss->mst, p->key, p->klen, p->rh);
		/* The key's newest write of the round decides its liveness. */
		if (round_is_newest(r, p))
			ss->live += !p->tombstone - p->was_live;
		ss_publish(ss, p);
	}
}

void
ss_round_finish(struct statestore *ss)
{
	struct round *r = ss->syncing;
	char err[256];
	size_t i;
	int rc;

	if (!committer_done(ss->committer, &rc, err, sizeof(err)))
		return;
	if (rc < 0) {
		log_warnx("commit of %zu writes failed: %s", r->n, err);
		fail_round(r, err);
		/* the open round was decided on top of the failed one */
		fail_round(ss->open, err);
		return;
	}
	ss->syncing = ss->spare;
	if (!ss->stop)
		mts_ipc_server_drain(ss->srv, ROUND_MAX);
	ss_round_submit(ss);
	apply_round(ss, r);
	for (i = 0; i < r->n; i++)
		if (r->pend[i].call != NULL)
			ss_reply_write(&r->pend[i]);
	ss->commits++;
	ss->writes += r->n;
	round_reset(r);
	ss->spare = r;
}
