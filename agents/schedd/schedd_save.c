/* schedd_save.c: the ledger on disk — a snapshot, $MTS_STATEDIR/ledger (a SavedLedger), and the journal after it, ledger.journal, to which each loop turn appends the ledger's changes and syncs them once before the replies that depend on them are sent; read back at start (snapshot, then the journal up to a torn tail) before the t/<self>/ scan and compacted into a new snapshot then and whenever the journal has grown past a few times its size, so a restart neither loses a committed reservation nor forgets a granted lease, and a call costs one small append. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "journal_core.h"
#include "log.h"
#include "mtstime.h"
#include "schedd.h"
#include "xmalloc.h"

#define SAVE_VERSION 1
#define SAVE_MAX (64u << 20) /* a file larger than this is refused */

static void
copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* Monotonic deadlines become Unix ms on disk and back. */
static uint64_t
to_wall(mts_time_t t, mts_time_t now, uint64_t wall)
{
	int64_t d = t - now;

	return d <= 0 ? wall : wall + (uint64_t)d;
}

static mts_time_t
from_wall(uint64_t at, mts_time_t now, uint64_t wall)
{
	return at <= wall ? now : now + (mts_time_t)(at - wall);
}

/* The ledger packed; the buffer is the caller's. */
static uint8_t *
pack_ledger(const struct mts_ledger *l, uint64_t gen, size_t *len)
{
	Mts__Schedd__SavedLedger sl = MTS__SCHEDD__SAVED_LEDGER__INIT;
	Mts__Schedd__SavedLease *ls = xcalloc(l->nleases + 1, sizeof(*ls));
	Mts__Schedd__SavedLease **lp = xcalloc(l->nleases + 1, sizeof(*lp));
	Mts__Schedd__Task *ts = xcalloc(l->ntasks + 1, sizeof(*ts));
	Mts__Schedd__Task **tp = xcalloc(l->ntasks + 1, sizeof(*tp));
	mts_time_t now = mts_now();
	uint64_t wall = mts_wall_ms();
	uint8_t *buf;
	size_t i;

	for (i = 0; i < l->nleases; i++) {
		const struct mts_lease *x = &l->leases[i];

		mts__schedd__saved_lease__init(&ls[i]);
		ls[i].id = (char *)x->id;
		ls[i].owner = (char *)x->owner;
		ls[i].service = (char *)x->service;
		ls[i].task = (char *)x->task;
		ls[i].cpu_millis = x->res.cpu_millis;
		ls[i].memory = x->res.memory;
		ls[i].max_per_node = x->max_per_node;
		ls[i].state = (char *)mts_lease_state_str(x->state);
		ls[i].expires_at_ms = to_wall(x->expires, now, wall);
		lp[i] = &ls[i];
	}
	for (i = 0; i < l->ntasks; i++) {
		mts__schedd__task__init(&ts[i]);
		ts[i].id = (char *)l->tasks[i].id;
		ts[i].service = (char *)l->tasks[i].service;
		ts[i].cpu_millis = l->tasks[i].res.cpu_millis;
		ts[i].memory = l->tasks[i].res.memory;
		tp[i] = &ts[i];
	}
	sl.version = SAVE_VERSION;
	sl.journal_gen = gen;
	sl.leases = lp;
	sl.n_leases = l->nleases;
	sl.tasks = tp;
	sl.n_tasks = l->ntasks;
	*len = mts__schedd__saved_ledger__get_packed_size(&sl);
	buf = xmalloc(*len + 1);
	mts__schedd__saved_ledger__pack(&sl, buf);
	free(tp);
	free(ts);
	free(lp);
	free(ls);
	return buf;
}

static void
restore(struct schedd *s, const Mts__Schedd__SavedLedger *sl)
{
	mts_time_t now = mts_now();
	uint64_t wall = mts_wall_ms();
	struct mts_res res;
	size_t i;

	for (i = 0; i < sl->n_leases; i++) {
		const Mts__Schedd__SavedLease *x = sl->leases[i];
		struct mts_lease l;

		memset(&l, 0, sizeof(l));
		copy_str(l.id, sizeof(l.id), x->id);
		copy_str(l.owner, sizeof(l.owner), x->owner);
		copy_str(l.service, sizeof(l.service), x->service);
		copy_str(l.task, sizeof(l.task), x->task);
		l.res.cpu_millis = x->cpu_millis;
		l.res.memory = x->memory;
		l.max_per_node = x->max_per_node;
		l.state = mts_lease_state_parse(x->state);
		l.expires = from_wall(x->expires_at_ms, now, wall);
		if (l.id[0] != '\0')
			(void)mts_ledger_lease_restore(&s->ledger, &l);
	}
	for (i = 0; i < sl->n_tasks; i++) {
		const Mts__Schedd__Task *t = sl->tasks[i];

		if (t->id == NULL || *t->id == '\0' ||
		    strlen(t->id) >= MTS_TASK_ID_MAX)
			continue;
		res.cpu_millis = t->cpu_millis;
		res.memory = t->memory;
		mts_ledger_task_add(&s->ledger, t->id, t->service, res);
	}
}

/* Reads fd to the end (at most SAVE_MAX); the buffer is the caller's. */
static uint8_t *
read_all(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	uint8_t *buf = xmalloc(cap);
	ssize_t r;

	for (;;) {
		if (n == cap) {
			if (cap >= SAVE_MAX) {
				free(buf);
				errno = EFBIG;
				return NULL;
			}
			cap *= 2;
			buf = xreallocarray(buf, cap, 1);
		}
		if ((r = read(fd, buf + n, cap - n)) < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return buf;
}

/* path's bytes: 1 with *buf (the caller's), 0 when there is no such
 * file, -1 (logged) when it cannot be read. */
static int
read_file(const char *path, uint8_t **buf, size_t *len)
{
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s", path);
		return -1;
	}
	*buf = read_all(fd, len);
	close(fd);
	if (*buf == NULL) {
		log_warn("reading %s", path);
		return -1;
	}
	return 1;
}

static int
load_snapshot(struct schedd *s)
{
	Mts__Schedd__SavedLedger *sl;
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	if ((rc = read_file(s->save_path, &buf, &len)) <= 0)
		return rc;
	sl = mts__schedd__saved_ledger__unpack(NULL, len, buf);
	if (sl == NULL || sl->version != SAVE_VERSION) {
		/* refusing to start would keep the node out of scheduling
		 * for good; the t/ scan still counts every task that runs */
		log_warnx("%s: not a saved ledger (version %u): ignored",
		    s->save_path, sl ? sl->version : 0);
	} else {
		restore(s, sl);
		s->gen = sl->journal_gen;
		log_info("%s: %zu leases, %zu tasks restored", s->save_path,
		    sl->n_leases, sl->n_tasks);
	}
	if (sl)
		mts__schedd__saved_ledger__free_unpacked(sl, NULL);
	free(buf);
	return 0;
}

/* The journal after the snapshot: replayed up to its first bad record
 * (a crash in the middle of an append), which is dropped with what
 * follows it — the ledger is then as it was when the last reply that
 * depended on a change was sent. */
static int
load_journal(struct schedd *s)
{
	struct mts_journal_replay rp;
	uint8_t *buf = NULL;
	size_t len = 0;
	uint64_t gen;
	int rc;

	if ((rc = read_file(s->journal_path, &buf, &len)) <= 0)
		return rc;
	if (mts_journal_head_parse(buf, len, &gen) < 0) {
		log_warnx("%s: no journal header: ignored", s->journal_path);
	} else if (gen != s->gen) {
		/* a compaction stopped after its snapshot: it holds all */
		log_info("%s: generation %llu, the snapshot's is %llu: "
		         "already in the snapshot",
		    s->journal_path, (unsigned long long)gen,
		    (unsigned long long)s->gen);
	} else {
		mts_journal_replay(&s->ledger, buf + MTS_JOURNAL_HEAD,
		    len - MTS_JOURNAL_HEAD, mts_now(), mts_wall_ms(), &rp);
		log_info("%s: %zu changes replayed", s->journal_path,
		    rp.records);
		if (rp.dropped > 0)
			log_warnx("%s: a torn or corrupt record at byte %zu: "
			          "its %zu bytes to the end dropped",
			    s->journal_path, MTS_JOURNAL_HEAD + rp.good_len,
			    rp.dropped);
		if (rp.full)
			log_warnx("%s: the ledger is full: changes lost",
			    s->journal_path);
	}
	free(buf);
	return 0;
}

/* A new snapshot of the whole ledger, then a new journal naming it; a
 * crash between the two leaves a journal of the older generation, which
 * the next start knows is in the snapshot already. 0, or -1 (logged, and
 * the next flush tries again). */
static int
compact(struct schedd *s)
{
	struct mts_buf head;
	uint64_t gen = s->gen + 1;
	uint8_t *buf;
	size_t len;
	int fd, rc = -1;

	mts_buf_init(&head);
	mts_buf_reset(&s->jbuf); /* the snapshot holds these changes */
	s->jbroken = 1;
	buf = pack_ledger(&s->ledger, gen, &len);
	if (mts_write_atomic(s->save_path, buf, len, 0600, 1) < 0) {
		log_warn("writing %s", s->save_path);
		goto out;
	}
	mts_journal_head(&head, gen);
	if (mts_write_atomic(s->journal_path, head.data, head.len, 0600, 1) <
	    0) {
		log_warn("writing %s", s->journal_path);
		goto out;
	}
	if ((fd = open(s->journal_path,
	         O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		log_warn("%s", s->journal_path);
		goto out;
	}
	if (s->jfd >= 0)
		close(s->jfd);
	s->jfd = fd;
	s->gen = gen;
	s->snap_len = len;
	s->jbytes = head.len;
	s->jrecords = 0;
	s->jbroken = 0;
	log_info("ledger compacted: %zu bytes, generation %llu", len,
	    (unsigned long long)gen);
	rc = 0;
out:
	free(buf);
	mts_buf_free(&head);
	return rc;
}

int
schedd_save_load(struct schedd *s)
{
	if (s->agent->statedir == NULL || *s->agent->statedir == '\0') {
		log_warnx("no state directory (MTS_STATEDIR): leases are not "
		          "kept across restarts");
		return 0;
	}
	s->save_path = xasprintf("%s/ledger", s->agent->statedir);
	s->journal_path = xasprintf("%s/ledger.journal", s->agent->statedir);
	if (load_snapshot(s) < 0 || load_journal(s) < 0)
		return -1;
	/* leases whose ttl ran out while schedd was down end now */
	(void)mts_ledger_expire(&s->ledger, mts_now());
	(void)compact(s);
	s->ledger.record = 1;
	return 0;
}

static int
write_all(int fd, const uint8_t *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* This turn's changes on disk, synced when a reply waits for them. */
static int
flush(struct schedd *s)
{
	const struct mts_ledger_change *ch;
	mts_time_t now = mts_now();
	uint64_t wall = mts_wall_ms();
	size_t i, n;

	ch = mts_ledger_changes_take(&s->ledger, &n);
	for (i = 0; i < n; i++)
		mts_journal_encode(&s->jbuf, &ch[i], now, wall);
	if (s->save_path == NULL || (s->jbuf.len == 0 && s->nheld == 0))
		return 0;
	if (s->jbroken ||
	    mts_journal_compact_due(s->jbytes + s->jbuf.len, s->jrecords + n,
	        s->snap_len))
		return compact(s);
	if (write_all(s->jfd, s->jbuf.data, s->jbuf.len) < 0) {
		log_warn("appending to %s", s->journal_path);
		s->jbroken = 1;
		return -1;
	}
	s->jbytes += s->jbuf.len;
	s->jrecords += n;
	mts_buf_reset(&s->jbuf);
	if (s->nheld > 0 && fdatasync(s->jfd) < 0) {
		log_warn("syncing %s", s->journal_path);
		s->jbroken = 1;
		return -1;
	}
	return 0;
}

void
schedd_save_turn(void *arg, mts_time_t now)
{
	struct schedd *s = arg;
	size_t i, n;
	int rc;

	(void)now;
	rc = flush(s);
	/* a reply may be held again while these are sent: take them all
	 * first */
	n = s->nheld;
	s->nheld = 0;
	for (i = 0; i < n; i++)
		schedd_reply_held(&s->held[i], rc);
}

void
schedd_save_hold(struct schedd *s, struct mts_ipc_call *call,
    enum schedd_held_kind kind, const char *lease, uint64_t expires_in_ms)
{
	struct schedd_held h;

	memset(&h, 0, sizeof(h));
	h.call = call;
	h.kind = kind;
	h.expires_in_ms = expires_in_ms;
	copy_str(h.lease, sizeof(h.lease), lease);
	if (s->save_path == NULL) {
		schedd_reply_held(&h, 0);
		return;
	}
	if (s->nheld == s->capheld) {
		s->capheld = s->capheld ? 2 * s->capheld : 16;
		s->held = xreallocarray(s->held, s->capheld, sizeof(*s->held));
	}
	s->held[s->nheld++] = h;
}

void
schedd_save_free(struct schedd *s)
{
	size_t i;

	for (i = 0; i < s->nheld; i++)
		mts_ipc_call_drop(s->held[i].call);
	free(s->held);
	if (s->jfd >= 0)
		close(s->jfd);
	mts_buf_free(&s->jbuf);
	free(s->save_path);
	free(s->journal_path);
}
