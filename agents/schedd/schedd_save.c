/* schedd_save.c: the ledger on disk — $MTS_STATEDIR/ledger (a SavedLedger) rewritten atomically and synced before a granted prepare or a commit is answered, and read back at start before the t/<self>/ scan, so a restart neither loses a committed reservation nor forgets a granted lease. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"
#include "mtstime.h"
#include "schedd.h"
#include "xmalloc.h"

#define SAVE_VERSION 1
#define SAVE_MAX (64u << 20) /* a ledger file larger than this is refused */

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
pack_ledger(const struct mts_ledger *l, size_t *len)
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

int
schedd_save(struct schedd *s)
{
	uint8_t *buf;
	size_t len;
	int rc;

	if (s->save_path == NULL)
		return 0;
	buf = pack_ledger(&s->ledger, &len);
	if (s->saved != NULL && s->saved_len == len &&
	    memcmp(s->saved, buf, len) == 0) {
		free(buf);
		return 0; /* what the file holds already */
	}
	if ((rc = mts_write_atomic(s->save_path, buf, len, 0600, 1)) < 0) {
		log_warn("writing %s", s->save_path);
		free(buf);
		return -1;
	}
	free(s->saved);
	s->saved = buf;
	s->saved_len = len;
	return 0;
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
	/* leases whose ttl ran out while schedd was down end now */
	(void)mts_ledger_expire(&s->ledger, now);
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

int
schedd_save_load(struct schedd *s)
{
	Mts__Schedd__SavedLedger *sl;
	uint8_t *buf;
	size_t len;
	int fd;

	if (s->agent->statedir == NULL || *s->agent->statedir == '\0') {
		log_warnx("no state directory (MTS_STATEDIR): leases are not "
		          "kept across restarts");
		return 0;
	}
	s->save_path = xasprintf("%s/ledger", s->agent->statedir);
	if ((fd = open(s->save_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s", s->save_path);
		return -1;
	}
	buf = read_all(fd, &len);
	close(fd);
	if (buf == NULL) {
		log_warn("reading %s", s->save_path);
		return -1;
	}
	sl = mts__schedd__saved_ledger__unpack(NULL, len, buf);
	if (sl == NULL || sl->version != SAVE_VERSION) {
		/* refusing to start would keep the node out of scheduling
		 * for good; the t/ scan still counts every task that runs */
		log_warnx("%s: not a saved ledger (version %u): ignored",
		    s->save_path, sl ? sl->version : 0);
	} else {
		restore(s, sl);
		log_info("%s: %zu leases, %zu tasks restored", s->save_path,
		    sl->n_leases, sl->n_tasks);
	}
	if (sl)
		mts__schedd__saved_ledger__free_unpacked(sl, NULL);
	s->saved = buf;
	s->saved_len = len;
	return 0;
}
