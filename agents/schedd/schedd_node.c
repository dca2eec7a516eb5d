/* schedd_node.c: mts-schedd's fields of n/<self> — hostname, platform, capacity, availability and its version — kept current with common/nodeinfo.c's compare-and-set update, the availability restored from it at start, and the drain/pause/activate request answered once n/<self> says so. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "agent.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "schedd.h"
#include "xmalloc.h"

#define NODEINFO_RETRY_MS 1000

void
schedd_node_platform(struct schedd *s)
{
	struct utsname u;
	size_t i;

	memset(&u, 0, sizeof(u));
	if (uname(&u) < 0)
		log_warn("uname");
	snprintf(s->hostname, sizeof(s->hostname), "%s",
	    s->agent->node && *s->agent->node ? s->agent->node : u.nodename);
	snprintf(s->os, sizeof(s->os), "%s", u.sysname);
	for (i = 0; s->os[i]; i++)
		s->os[i] = (char)tolower((unsigned char)s->os[i]);
	snprintf(s->arch, sizeof(s->arch), "%s", u.machine);
}

/* Takes the availability into the ledger. */
static void
apply_avail(struct schedd *s)
{
	s->ledger.draining = s->avail == MTS_AVAIL_DRAIN;
	s->ledger.paused = s->avail == MTS_AVAIL_PAUSE;
}

int
schedd_node_restore(struct schedd *s, struct mts_ipc_client *c)
{
	struct mts_nodeinfo ni;
	char err[256];
	int rc = mts_nodeinfo_get(c, s->self, &ni, err, sizeof(err));

	if (rc < 0 && rc != -MTS_ERR_INVAL) {
		log_warnx("statestore: reading n/%s: %s", s->self, err);
		return -1;
	}
	if (rc == -MTS_ERR_INVAL)
		log_warnx("%s: taken as a new record", err);
	else if (rc == 1) {
		s->avail = ni.availability;
		s->avail_at_ms = ni.availability_at_ms;
	}
	apply_avail(s);
	return 0;
}

/* The edit of every n/<self> write: schedd's fields as they are now;
 * netd's (overlay_subnet) and other agents' versions stay as read. */
static int
edit(struct mts_nodeinfo *ni, void *arg)
{
	struct schedd *s = arg;
	int changed = 0;

#define SET_STR(f, v) \
	do { \
		if (strcmp(ni->f, (v)) != 0) { \
			snprintf(ni->f, sizeof(ni->f), "%s", (v)); \
			changed = 1; \
		} \
	} while (0)
#define SET_NUM(f, v) \
	do { \
		if (ni->f != (v)) { \
			ni->f = (v); \
			changed = 1; \
		} \
	} while (0)
	SET_STR(hostname, s->hostname);
	SET_STR(os, s->os);
	SET_STR(arch, s->arch);
	SET_NUM(cpu_millis, s->cfg.capacity.cpu_millis);
	SET_NUM(memory, s->cfg.capacity.memory);
	SET_NUM(availability, s->avail);
	SET_NUM(availability_at_ms, s->avail_at_ms);
#undef SET_STR
#undef SET_NUM
	changed |= mts_nodeinfo_set_version(ni, "schedd", MTS_VERSION);
	return changed;
}

static void
background_done(void *arg, int rc, const struct mts_nodeinfo *now,
    const char *err)
{
	struct schedd *s = arg;

	s->nodeinfo_busy = 0;
	if (rc == -MTS_ERR_CANCELED)
		return;
	if (rc < 0) {
		log_warnx("writing n/%s: %s", s->self, err);
		mts_timer_arm(s->loop, &s->nodeinfo_timer,
		    mts_now() + NODEINFO_RETRY_MS);
		return;
	}
	if (s->nodeinfo_dirty)
		schedd_node_changed(s);
}

void
schedd_on_nodeinfo(void *arg, mts_time_t now)
{
	(void)now;
	schedd_node_changed(arg);
}

/* One write at a time; a change during it makes another. */
void
schedd_node_changed(struct schedd *s)
{
	if (s->nodeinfo_busy) {
		s->nodeinfo_dirty = 1;
		return;
	}
	s->nodeinfo_dirty = 0;
	if (mts_nodeinfo_update(s->store, s->self, edit, s, background_done,
	        s) == 0)
		s->nodeinfo_busy = 1;
}

struct avail_call {
	struct schedd *s;
	struct mts_ipc_call *call;
	enum mts_availability want, was;
};

static void
avail_done(void *arg, int rc, const struct mts_nodeinfo *now, const char *err)
{
	struct avail_call *a = arg;
	Mts__Schedd__Reply rep = MTS__SCHEDD__REPLY__INIT;
	Mts__Schedd__AvailabilityRep ar = MTS__SCHEDD__AVAILABILITY_REP__INIT;

	if (rc < 0) {
		mts_ipc_reply_error(a->call, MTS_ERR_IO, "writing n/%s: %s",
		    a->s->self, err);
	} else {
		ar.availability = (char *)mts_availability_str(
		    now ? now->availability : a->want);
		ar.previous = (char *)mts_availability_str(a->was);
		rep.body_case = MTS__SCHEDD__REPLY__BODY_AVAILABILITY;
		rep.availability = &ar;
		mts_ipc_reply(a->call, &rep.base);
	}
	free(a);
}

void
schedd_set_availability(struct schedd *s, enum mts_availability want,
    struct mts_ipc_call *call)
{
	struct avail_call *a = xcalloc(1, sizeof(*a));

	a->s = s;
	a->call = call;
	a->want = want;
	a->was = s->avail;
	if (s->avail != want) {
		log_info("availability %s (was %s)", mts_availability_str(want),
		    mts_availability_str(s->avail));
		s->avail = want;
		s->avail_at_ms = mts_wall_ms();
	}
	apply_avail(s);
	schedd_changed(s);
	if (mts_nodeinfo_update(s->store, s->self, edit, s, avail_done, a) <
	    0) {
		mts_ipc_reply_error(call, MTS_ERR_IO, "%s",
		    "statestore client closing");
		free(a);
	}
}
