/* schedd_store.c: mts-schedd's side of the statestore — t/<self>/ task records read into the ledger (once, blocking, before serving; then every few seconds on the loop) and the d/<self> digest written asynchronously, on change, at most every 500 ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mtserr.h"
#include "schedd.h"
#include "shim.pb-c.h"
#include "xmalloc.h"

#define SCAN_PAGE 500

/* --- task records ----------------------------------------------------------- */

/* A task holds its resources until its record is gone or says it ended
 * for good (the shim's states: created running stopping restarting
 * exited failed; a task with a restart policy goes through restarting). */
int
schedd_state_holds(const char *state)
{
	return state == NULL ||
	    (strcmp(state, "exited") != 0 && strcmp(state, "failed") != 0);
}

void
schedd_task_record(struct schedd *s, const char *key, size_t klen,
    const Mts__Record *rec)
{
	size_t plen = 2 + MTS_NODE_HEX_LEN + 1; /* "t/<self>/" */
	char id[MTS_TASK_ID_MAX];
	Mts__Shim__TaskStatus *t;
	struct mts_res res = { 0, 0 };

	if (klen <= plen || klen - plen >= sizeof(id) || rec == NULL)
		return;
	memcpy(id, key + plen, klen - plen);
	id[klen - plen] = '\0';
	if (rec->tombstone) {
		mts_ledger_task_remove(&s->ledger, id);
		return;
	}
	t = mts__shim__task_status__unpack(NULL, rec->value.len,
	    rec->value.data);
	if (t == NULL) {
		log_warnx("t/%s/%s: not a task record", s->self, id);
		return;
	}
	if (!schedd_state_holds(t->state)) {
		mts_ledger_task_remove(&s->ledger, id);
	} else {
		/* what reconciled's lease reserved, else the limits */
		if (t->reserved_cpu_millis || t->reserved_memory) {
			res.cpu_millis = t->reserved_cpu_millis;
			res.memory = t->reserved_memory;
		} else if (t->spec != NULL) {
			res.cpu_millis = t->spec->cpu_millis;
			res.memory = t->spec->memory_limit;
		}
		mts_ledger_task_add(&s->ledger, id,
		    t->spec && t->spec->service ? t->spec->service : "", res);
	}
	mts__shim__task_status__free_unpacked(t, NULL);
}

static void
scan_req(struct schedd *s, Mts__Statestore__Request *req,
    Mts__Statestore__ScanReq *sc, char *prefix, size_t plen)
{
	snprintf(prefix, plen, "t/%s/", s->self);
	sc->prefix.data = (uint8_t *)prefix;
	sc->prefix.len = strlen(prefix);
	sc->start_after.data = (uint8_t *)s->scan_after;
	sc->start_after.len = strlen(s->scan_after);
	sc->limit = SCAN_PAGE;
	sc->include_tombstones = 1;
	req->body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
	req->scan = sc;
}

/* Applies one page; returns 1 when another follows. */
static int
scan_page(struct schedd *s, const Mts__Statestore__ScanRep *r)
{
	size_t i;

	for (i = 0; i < r->n_items; i++) {
		const Mts__KeyRecord *kr = r->items[i];

		schedd_task_record(s, (const char *)kr->key.data, kr->key.len,
		    kr->record);
		if (kr->key.len < sizeof(s->scan_after)) {
			memcpy(s->scan_after, kr->key.data, kr->key.len);
			s->scan_after[kr->key.len] = '\0';
		}
	}
	return r->more && r->n_items > 0;
}

int
schedd_scan_blocking(struct schedd *s, const char *path, int timeout_ms)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sc = MTS__STATESTORE__SCAN_REQ__INIT;
	Mts__Statestore__Reply *rep;
	struct mts_ipc_client *c;
	char prefix[64], err[256];
	int more = 1, rc = 0;

	if ((c = mts_ipc_client_open(path, timeout_ms, err, sizeof(err))) ==
	    NULL) {
		log_warnx("statestore: %s", err);
		return -1;
	}
	s->scan_after[0] = '\0';
	while (more && rc == 0) {
		rep = NULL;
		scan_req(s, &req, &sc, prefix, sizeof(prefix));
		rc = mts_ipc_client_call(c, &req.base,
		    &mts__statestore__reply__descriptor,
		    (ProtobufCMessage **)&rep, err, sizeof(err));
		if (rc < 0) {
			log_warnx("statestore scan of t/%s/: %s", s->self, err);
			break;
		}
		more = rep->scan ? scan_page(s, rep->scan) : 0;
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
	mts_ipc_client_close(c);
	return rc < 0 ? -1 : 0;
}

static void scan_next(struct schedd *);

static void
scan_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct schedd *s = arg;
	const Mts__Statestore__Reply *rep = (const Mts__Statestore__Reply *)m;

	s->scan_busy = 0;
	if (rc == -MTS_ERR_CANCELED)
		return;
	if (rc < 0 || rep->scan == NULL) {
		log_warnx("statestore scan of t/%s/: %s", s->self,
		    rc < 0 ? err : "no scan in the reply");
		return;
	}
	if (scan_page(s, rep->scan))
		scan_next(s);
	schedd_changed(s);
}

static void
scan_next(struct schedd *s)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sc = MTS__STATESTORE__SCAN_REQ__INIT;
	char prefix[64];

	scan_req(s, &req, &sc, prefix, sizeof(prefix));
	if (mts_ipc_async_call(s->store, &req.base,
	        &mts__statestore__reply__descriptor, 0, scan_done, s) != NULL)
		s->scan_busy = 1;
}

/* The periodic rescan: tasks that ended or whose record went free what
 * they held; tasks that appeared are counted. */
void
schedd_on_scan(void *arg, mts_time_t now)
{
	struct schedd *s = arg;

	if (!s->scan_busy) {
		s->scan_after[0] = '\0';
		scan_next(s);
	}
	mts_timer_arm(s->loop, &s->scan_timer, now + SCHEDD_SCAN_MS);
}

/* --- the digest ------------------------------------------------------------------ */

void
schedd_digest_fill(const struct schedd *s, Mts__Schedd__Digest *d)
{
	struct mts_digest g;

	mts_ledger_digest(&s->ledger, &g);
	d->cpu_millis = g.capacity.cpu_millis;
	d->memory = g.capacity.memory;
	d->free_cpu_millis = g.free.cpu_millis;
	d->free_memory = g.free.memory;
	d->tasks = g.tasks;
	d->leases = g.leases;
	d->draining = s->ledger.draining || s->ledger.paused;
	d->updated_at_ms = mts_wall_ms();
}

static void
digest_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct schedd *s = arg;

	s->digest_busy = 0;
	if (rc == -MTS_ERR_CANCELED)
		return;
	if (rc < 0) {
		log_warnx("writing d/%s: %s", s->self, err);
		s->have_written = 0; /* try again */
	}
	schedd_changed(s);
}

static int
digest_same(const struct mts_digest *a, const struct mts_digest *b)
{
	return a->capacity.cpu_millis == b->capacity.cpu_millis &&
	    a->capacity.memory == b->capacity.memory &&
	    a->free.cpu_millis == b->free.cpu_millis &&
	    a->free.memory == b->free.memory && a->tasks == b->tasks &&
	    a->leases == b->leases;
}

/* Writes d/<self> if it changed; called by the digest timer. */
void
schedd_on_digest(void *arg, mts_time_t now)
{
	struct schedd *s = arg;
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Schedd__Digest d = MTS__SCHEDD__DIGEST__INIT;
	struct mts_digest cur;
	char key[64];
	uint8_t *buf;
	size_t len;

	mts_ledger_digest(&s->ledger, &cur);
	if (s->digest_busy ||
	    (s->have_written && digest_same(&cur, &s->written) &&
	        s->written_avail == (int)s->avail))
		return;
	schedd_digest_fill(s, &d);
	len = mts__schedd__digest__get_packed_size(&d);
	buf = xmalloc(len + 1);
	mts__schedd__digest__pack(&d, buf);
	snprintf(key, sizeof(key), "d/%s", s->self);
	put.key.data = (uint8_t *)key;
	put.key.len = strlen(key);
	put.value.data = buf;
	put.value.len = len;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	if (mts_ipc_async_call(s->store, &req.base,
	        &mts__statestore__reply__descriptor, 0, digest_done,
	        s) != NULL) {
		s->digest_busy = 1;
		s->written = cur;
		s->written_avail = (int)s->avail;
		s->have_written = 1;
		s->digest_last = now;
	}
	free(buf);
}
