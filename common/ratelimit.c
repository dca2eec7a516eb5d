/* ratelimit.c: the log-line limiter of ratelimit.h — a fixed table of keys, one logged line per key per interval, silent counts summed up afterwards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ratelimit.h"
#include "xmalloc.h"

void
mts_rl_init(struct mts_ratelimit *rl, size_t nslots, mts_time_t interval)
{
	memset(rl, 0, sizeof(*rl));
	rl->slot = xcalloc(nslots ? nslots : 1, sizeof(*rl->slot));
	rl->nslots = nslots ? nslots : 1;
	rl->interval = interval;
	snprintf(rl->other.key, sizeof(rl->other.key), "%s", MTS_RL_OTHER);
}

void
mts_rl_free(struct mts_ratelimit *rl)
{
	if (rl == NULL)
		return;
	free(rl->slot);
	rl->slot = NULL;
	rl->nslots = 0;
}

static int
over(const struct mts_ratelimit *rl, const struct mts_rl_slot *s,
    mts_time_t now)
{
	return now - s->since >= rl->interval;
}

/* An event on a held slot: a new interval starts only once the last one's
 * silent events were reported (mts_rl_expire), so none goes uncounted. */
static int
hit_slot(struct mts_ratelimit *rl, struct mts_rl_slot *s, mts_time_t now)
{
	if (!s->used || (s->quiet == 0 && over(rl, s, now))) {
		s->used = 1;
		s->since = now;
		s->quiet = 0;
		return 1;
	}
	s->quiet++;
	return 0;
}

int
mts_rl_hit(struct mts_ratelimit *rl, const char *key, mts_time_t now)
{
	struct mts_rl_slot *s, *free_slot = NULL;
	size_t i;

	for (i = 0; i < rl->nslots; i++) {
		s = &rl->slot[i];
		if (s->used && strncmp(s->key, key, sizeof(s->key) - 1) == 0)
			return hit_slot(rl, s, now);
		if (free_slot == NULL &&
		    (!s->used || (s->quiet == 0 && over(rl, s, now))))
			free_slot = s;
	}
	if (free_slot == NULL)
		return hit_slot(rl, &rl->other, now);
	snprintf(free_slot->key, sizeof(free_slot->key), "%s", key);
	free_slot->used = 0;
	return hit_slot(rl, free_slot, now);
}

/* Releases s if its interval is over; 1 (and *out) if it had silent
 * events to report. */
static int
expire_slot(struct mts_ratelimit *rl, struct mts_rl_slot *s, mts_time_t now,
    struct mts_rl_summary *out)
{
	int report;

	if (!s->used || !over(rl, s, now))
		return 0;
	report = s->quiet > 0;
	if (report) {
		memcpy(out->key, s->key, sizeof(out->key));
		out->count = s->quiet;
		out->span = now - s->since;
	}
	s->used = 0;
	s->quiet = 0;
	return report;
}

int
mts_rl_expire(struct mts_ratelimit *rl, mts_time_t now,
    struct mts_rl_summary *s)
{
	size_t i;

	for (i = 0; i < rl->nslots; i++)
		if (expire_slot(rl, &rl->slot[i], now, s))
			return 1;
	return expire_slot(rl, &rl->other, now, s);
}
