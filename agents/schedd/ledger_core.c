/* ledger_core.c: the slot ledger — capacity checks against committed tasks plus live leases, and the lease lifecycle as a state × event table whose empty cells are refused. */
#include <stdlib.h>
#include <string.h>

#include "ledger_core.h"
#include "xmalloc.h"

struct lease_req {
	const char *id, *owner, *service, *task;
	struct mts_res res;
	uint32_t max_per_node;
	int64_t ttl_ms;
	mts_time_t now;
};

typedef enum mts_ledger_why (*lease_cell)(struct mts_ledger *,
    struct mts_lease *, const struct lease_req *);

void
mts_ledger_init(struct mts_ledger *l, struct mts_res capacity,
    size_t max_entries)
{
	memset(l, 0, sizeof(*l));
	l->capacity = capacity;
	l->max_entries = max_entries ? max_entries : 100000;
	l->ended_keep_ms = 10 * 60 * 1000;
}

void
mts_ledger_free(struct mts_ledger *l)
{
	free(l->leases);
	free(l->tasks);
	free(l->changes);
	memset(l, 0, sizeof(*l));
}

static void
copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

static struct mts_lease *
find_lease(struct mts_ledger *l, const char *id)
{
	size_t i;

	for (i = 0; i < l->nleases; i++)
		if (strcmp(l->leases[i].id, id) == 0)
			return &l->leases[i];
	return NULL;
}

static struct mts_ledger_task *
find_task(const struct mts_ledger *l, const char *id)
{
	size_t i;

	for (i = 0; i < l->ntasks; i++)
		if (strcmp(l->tasks[i].id, id) == 0)
			return &l->tasks[i];
	return NULL;
}

/* Committed tasks plus prepared leases. */
static struct mts_res
used(const struct mts_ledger *l)
{
	struct mts_res u = { 0, 0 };
	size_t i;

	for (i = 0; i < l->ntasks; i++) {
		u.cpu_millis += l->tasks[i].res.cpu_millis;
		u.memory += l->tasks[i].res.memory;
	}
	for (i = 0; i < l->nleases; i++) {
		if (l->leases[i].state != LEASE_PREPARED)
			continue;
		u.cpu_millis += l->leases[i].res.cpu_millis;
		u.memory += l->leases[i].res.memory;
	}
	return u;
}

uint32_t
mts_ledger_service_count(const struct mts_ledger *l, const char *service)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < l->ntasks; i++)
		n += strcmp(l->tasks[i].service, service) == 0;
	for (i = 0; i < l->nleases; i++)
		n += l->leases[i].state == LEASE_PREPARED &&
		    strcmp(l->leases[i].service, service) == 0;
	return n;
}

static enum mts_ledger_why
fits(const struct mts_ledger *l, const struct lease_req *r)
{
	struct mts_res u = used(l);

	if (l->draining)
		return LEDGER_DRAINING;
	if (l->paused)
		return LEDGER_PAUSED;
#ifdef MTS_INJECT_NOCAP /* the injected bug of tests/sim's mts-sim-nocap */
	(void)u;
#else
	if ((uint64_t)u.cpu_millis + r->res.cpu_millis > l->capacity.cpu_millis)
		return LEDGER_NO_CPU;
	if (r->res.memory > l->capacity.memory ||
	    u.memory > l->capacity.memory - r->res.memory)
		return LEDGER_NO_MEMORY;
#endif
	if (r->max_per_node &&
	    mts_ledger_service_count(l, r->service) >= r->max_per_node)
		return LEDGER_MAX_PER_NODE;
	if (l->nleases + l->ntasks >= l->max_entries)
		return LEDGER_FULL;
	return LEDGER_OK;
}

static int
same_terms(const struct mts_lease *s, const struct lease_req *r)
{
	return strcmp(s->service, r->service) == 0 &&
	    strcmp(s->owner, r->owner) == 0 &&
	    s->res.cpu_millis == r->res.cpu_millis &&
	    s->res.memory == r->res.memory;
}

static void
add_task(struct mts_ledger *l, const char *id, const char *service,
    struct mts_res res)
{
	struct mts_ledger_task *t;

	if (l->ntasks == l->captasks) {
		l->captasks = l->captasks ? 2 * l->captasks : 16;
		l->tasks =
		    xreallocarray(l->tasks, l->captasks, sizeof(*l->tasks));
	}
	t = &l->tasks[l->ntasks++];
	copy_str(t->id, sizeof(t->id), id);
	copy_str(t->service, sizeof(t->service), service);
	t->res = res;
}

/* Appends a change for the journal while the ledger records them. */
static struct mts_ledger_change *
note(struct mts_ledger *l, enum mts_ledger_change_kind kind)
{
	struct mts_ledger_change *c;

	if (!l->record)
		return NULL;
	if (l->nchanges == l->capchanges) {
		l->capchanges = l->capchanges ? 2 * l->capchanges : 16;
		l->changes = xreallocarray(l->changes, l->capchanges,
		    sizeof(*l->changes));
	}
	c = &l->changes[l->nchanges++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	return c;
}

static void
note_lease(struct mts_ledger *l, enum mts_ledger_change_kind kind,
    const struct mts_lease *s)
{
	struct mts_ledger_change *c = note(l, kind);

	if (c != NULL)
		c->lease = *s;
}

static void
note_task(struct mts_ledger *l, enum mts_ledger_change_kind kind,
    const struct mts_ledger_task *t)
{
	struct mts_ledger_change *c = note(l, kind);

	if (c != NULL)
		c->task = *t;
}

/* --- the cells --------------------------------------------------------------------- */

static enum mts_ledger_why
none_prepare(struct mts_ledger *l, struct mts_lease *unused,
    const struct lease_req *r)
{
	enum mts_ledger_why why = fits(l, r);
	struct mts_lease *s;

	if (why != LEDGER_OK)
		return why;
	if (l->nleases == l->capleases) {
		l->capleases = l->capleases ? 2 * l->capleases : 16;
		l->leases =
		    xreallocarray(l->leases, l->capleases, sizeof(*l->leases));
	}
	s = &l->leases[l->nleases++];
	memset(s, 0, sizeof(*s));
	copy_str(s->id, sizeof(s->id), r->id);
	copy_str(s->owner, sizeof(s->owner), r->owner);
	copy_str(s->service, sizeof(s->service), r->service);
	s->res = r->res;
	s->max_per_node = r->max_per_node;
	s->expires = r->now + r->ttl_ms;
	s->state = LEASE_PREPARED;
	return LEDGER_OK;
}

static enum mts_ledger_why
unknown(struct mts_ledger *l, struct mts_lease *s, const struct lease_req *r)
{
	return LEDGER_UNKNOWN;
}

/* A resent prepare answers as the first one did. */
static enum mts_ledger_why
live_prepare(struct mts_ledger *l, struct mts_lease *s,
    const struct lease_req *r)
{
	return same_terms(s, r) ? LEDGER_OK : LEDGER_CONFLICT;
}

static enum mts_ledger_why
prepared_commit(struct mts_ledger *l, struct mts_lease *s,
    const struct lease_req *r)
{
	if (find_task(l, r->task) != NULL)
		return LEDGER_CONFLICT; /* that task id is taken */
	add_task(l, r->task, s->service, s->res);
	copy_str(s->task, sizeof(s->task), r->task);
	s->state = LEASE_COMMITTED;
	s->expires = r->now + l->ended_keep_ms;
	return LEDGER_OK;
}

static enum mts_ledger_why
end_lease(struct mts_ledger *l, struct mts_lease *s, const struct lease_req *r)
{
	s->state = LEASE_ENDED;
	s->expires = r->now + l->ended_keep_ms;
	return LEDGER_OK;
}

static enum mts_ledger_why
committed_commit(struct mts_ledger *l, struct mts_lease *s,
    const struct lease_req *r)
{
	return strcmp(s->task, r->task) == 0 ? LEDGER_OK : LEDGER_CONFLICT;
}

/* The task exists: the owner stops it, it is not aborted away. */
static enum mts_ledger_why
committed_abort(struct mts_ledger *l, struct mts_lease *s,
    const struct lease_req *r)
{
	return LEDGER_CONFLICT;
}

static enum mts_ledger_why
ended(struct mts_ledger *l, struct mts_lease *s, const struct lease_req *r)
{
	return LEDGER_ENDED;
}

static enum mts_ledger_why
ended_abort(struct mts_ledger *l, struct mts_lease *s,
    const struct lease_req *r)
{
	return LEDGER_OK;
}

/* NULL cells cannot happen; lease_step refuses them loudly. */
static const lease_cell cells[LEASE_NSTATES][LEV_NEVENTS] = {
	[LEASE_NONE] = {
		[LEV_PREPARE] = none_prepare,
		[LEV_COMMIT] = unknown,
		[LEV_ABORT] = unknown,
	},
	[LEASE_PREPARED] = {
		[LEV_PREPARE] = live_prepare,
		[LEV_COMMIT] = prepared_commit,
		[LEV_ABORT] = end_lease,
		[LEV_EXPIRE] = end_lease,
	},
	[LEASE_COMMITTED] = {
		[LEV_PREPARE] = live_prepare,
		[LEV_COMMIT] = committed_commit,
		[LEV_ABORT] = committed_abort,
	},
	[LEASE_ENDED] = {
		[LEV_PREPARE] = ended,
		[LEV_COMMIT] = ended,
		[LEV_ABORT] = ended_abort,
	},
};

/* The journal's record of a step that changed a lease's state. */
static const enum mts_ledger_change_kind event_change[LEV_NEVENTS] = {
	[LEV_PREPARE] = LCH_GRANT,
	[LEV_COMMIT] = LCH_COMMIT,
	[LEV_ABORT] = LCH_ABORT,
	[LEV_EXPIRE] = LCH_EXPIRE,
};

static enum mts_ledger_why
lease_step(struct mts_ledger *l, enum mts_lease_event ev,
    const struct lease_req *r)
{
	struct mts_lease *s = find_lease(l, r->id);
	enum mts_lease_state st = s ? s->state : LEASE_NONE;
	lease_cell fn = cells[st][ev];
	enum mts_ledger_why why;

	if (fn == NULL)
		abort(); /* a cell the table says cannot happen */
	why = fn(l, s, r);
	if (why == LEDGER_OK && s == NULL && st == LEASE_NONE)
		s = &l->leases[l->nleases - 1]; /* none_prepare added it */
	if (why == LEDGER_OK && s != NULL && s->state != st)
		note_lease(l, event_change[ev], s);
	return why;
}

enum mts_ledger_why
mts_ledger_prepare(struct mts_ledger *l, const char *lease, const char *owner,
    const char *service, struct mts_res res, uint32_t max_per_node,
    int64_t ttl_ms, mts_time_t now)
{
	struct lease_req r = { .id = lease,
		.owner = owner,
		.service = service,
		.res = res,
		.max_per_node = max_per_node,
		.ttl_ms = ttl_ms,
		.now = now };

	mts_ledger_expire(l, now);
	return lease_step(l, LEV_PREPARE, &r);
}

enum mts_ledger_why
mts_ledger_commit(struct mts_ledger *l, const char *lease, const char *task,
    mts_time_t now)
{
	struct lease_req r = { .id = lease, .task = task, .now = now };

	mts_ledger_expire(l, now);
	return lease_step(l, LEV_COMMIT, &r);
}

enum mts_ledger_why
mts_ledger_abort(struct mts_ledger *l, const char *lease, mts_time_t now)
{
	struct lease_req r = { .id = lease, .now = now };

	mts_ledger_expire(l, now);
	return lease_step(l, LEV_ABORT, &r);
}

size_t
mts_ledger_expire(struct mts_ledger *l, mts_time_t now)
{
	struct lease_req r = { .now = now };
	size_t i = 0, ended_n = 0;

	while (i < l->nleases) {
		struct mts_lease *s = &l->leases[i];

		if (s->expires > now) {
			i++;
			continue;
		}
		if (s->state == LEASE_PREPARED) {
			r.id = s->id;
			lease_step(l, LEV_EXPIRE, &r);
			ended_n++;
			i++;
			continue;
		}
		/* an ended or committed lease past its memory: forget it */
		l->leases[i] = l->leases[--l->nleases];
	}
	return ended_n;
}

mts_time_t
mts_ledger_next_deadline(const struct mts_ledger *l)
{
	mts_time_t d = MTS_TIME_NEVER;
	size_t i;

	for (i = 0; i < l->nleases; i++)
		if (l->leases[i].expires < d)
			d = l->leases[i].expires;
	return d;
}

void
mts_ledger_task_add(struct mts_ledger *l, const char *task, const char *service,
    struct mts_res res)
{
	if (find_task(l, task) != NULL)
		return;
	add_task(l, task, service, res);
	note_task(l, LCH_TASK_ADD, &l->tasks[l->ntasks - 1]);
}

int
mts_ledger_task_remove(struct mts_ledger *l, const char *task)
{
	struct mts_ledger_task *t = find_task(l, task);

	if (t == NULL)
		return -1;
	note_task(l, LCH_TASK_DEL, t);
	*t = l->tasks[--l->ntasks];
	return 0;
}

/* Copies in over s, its strings terminated and its state one a lease can
 * be restored in. */
static void
set_lease(struct mts_lease *s, const struct mts_lease *in)
{
	*s = *in;
	s->id[sizeof(s->id) - 1] = '\0';
	s->owner[sizeof(s->owner) - 1] = '\0';
	s->service[sizeof(s->service) - 1] = '\0';
	s->task[sizeof(s->task) - 1] = '\0';
	if (s->state == LEASE_NONE || s->state >= LEASE_NSTATES)
		s->state = LEASE_ENDED;
}

static enum mts_ledger_why
lease_add(struct mts_ledger *l, const struct mts_lease *in)
{
	if (l->nleases + l->ntasks >= l->max_entries)
		return LEDGER_FULL;
	if (l->nleases == l->capleases) {
		l->capleases = l->capleases ? 2 * l->capleases : 16;
		l->leases =
		    xreallocarray(l->leases, l->capleases, sizeof(*l->leases));
	}
	set_lease(&l->leases[l->nleases++], in);
	return LEDGER_OK;
}

enum mts_ledger_why
mts_ledger_lease_restore(struct mts_ledger *l, const struct mts_lease *in)
{
	if (find_lease(l, in->id) != NULL)
		return LEDGER_OK;
	return lease_add(l, in);
}

enum mts_ledger_why
mts_ledger_lease_put(struct mts_ledger *l, const struct mts_lease *in)
{
	struct mts_lease *s = find_lease(l, in->id);

	if (s == NULL)
		return lease_add(l, in);
	set_lease(s, in);
	return LEDGER_OK;
}

const struct mts_ledger_change *
mts_ledger_changes_take(struct mts_ledger *l, size_t *n)
{
	*n = l->nchanges;
	l->nchanges = 0;
	return l->changes;
}

const char *
mts_ledger_change_str(enum mts_ledger_change_kind k)
{
	static const char *const s[LCH_NKINDS] = {
		[LCH_GRANT] = "grant",
		[LCH_COMMIT] = "commit",
		[LCH_ABORT] = "abort",
		[LCH_EXPIRE] = "expire",
		[LCH_TASK_ADD] = "task-add",
		[LCH_TASK_DEL] = "task-del",
	};

	return (unsigned)k < LCH_NKINDS ? s[k] : "?";
}

void
mts_ledger_digest(const struct mts_ledger *l, struct mts_digest *d)
{
	struct mts_res u = used(l);
	size_t i;

	memset(d, 0, sizeof(*d));
	d->capacity = l->capacity;
	d->free.cpu_millis = u.cpu_millis < l->capacity.cpu_millis
	    ? l->capacity.cpu_millis - u.cpu_millis
	    : 0;
	d->free.memory =
	    u.memory < l->capacity.memory ? l->capacity.memory - u.memory : 0;
	d->tasks = (uint32_t)l->ntasks;
	for (i = 0; i < l->nleases; i++)
		d->leases += l->leases[i].state == LEASE_PREPARED;
}

static const char *const state_names[LEASE_NSTATES] = {
	[LEASE_NONE] = "none",
	[LEASE_PREPARED] = "prepared",
	[LEASE_COMMITTED] = "committed",
	[LEASE_ENDED] = "ended",
};

const char *
mts_lease_state_str(enum mts_lease_state st)
{
	return (unsigned)st < LEASE_NSTATES ? state_names[st] : "?";
}

enum mts_lease_state
mts_lease_state_parse(const char *s)
{
	size_t i;

	for (i = 0; s != NULL && i < LEASE_NSTATES; i++)
		if (strcmp(s, state_names[i]) == 0)
			return (enum mts_lease_state)i;
	return LEASE_NONE;
}

const char *
mts_ledger_why_str(enum mts_ledger_why w)
{
	static const char *const s[] = {
		[LEDGER_OK] = "granted",
		[LEDGER_NO_CPU] = "insufficient cpu",
		[LEDGER_NO_MEMORY] = "insufficient memory",
		[LEDGER_MAX_PER_NODE] = "max_replicas_per_node reached",
		[LEDGER_DRAINING] = "node is draining",
		[LEDGER_UNKNOWN] = "unknown lease",
		[LEDGER_ENDED] = "lease expired or aborted",
		[LEDGER_CONFLICT] = "lease id reused with other terms",
		[LEDGER_FULL] = "ledger full",
		[LEDGER_PAUSED] = "node is paused",
	};

	return (size_t)w < sizeof(s) / sizeof(s[0]) && s[w] ? s[w] : "?";
}
