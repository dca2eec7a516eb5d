/* ratelimit.h: a pure limiter for repeated log lines — the first line per key (a peer's address and the kind of error) in each interval is logged, the rest are counted and summed up once the interval is over; fed `now`, no clock, no I/O. */
#ifndef MTS_RATELIMIT_H
#define MTS_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "mtstime.h"

#define MTS_RL_KEY_MAX 96
/* The key that counts the events of keys that found no free slot. */
#define MTS_RL_OTHER "other"

struct mts_rl_slot {
	char key[MTS_RL_KEY_MAX];
	mts_time_t since; /* when the logged line of this interval came */
	uint64_t quiet;   /* events counted in silence since */
	int used;
};

/*
 * A fixed table of keys: a key holds its slot from its logged line until
 * mts_rl_expire reports it (or finds it quiet) after the interval. When
 * every slot is held, new keys share the MTS_RL_OTHER slot, so a flood of
 * distinct keys still yields at most nslots + 1 lines and as many
 * summaries per interval.
 */
struct mts_ratelimit {
	struct mts_rl_slot *slot;
	size_t nslots;
	mts_time_t interval;
	struct mts_rl_slot other;
};

/* What mts_rl_expire reports about one key whose interval is over. */
struct mts_rl_summary {
	char key[MTS_RL_KEY_MAX];
	uint64_t count;  /* events not logged */
	mts_time_t span; /* from the logged line to now */
};

void mts_rl_init(struct mts_ratelimit *, size_t nslots, mts_time_t interval);
void mts_rl_free(struct mts_ratelimit *);
/* One event for key (truncated to MTS_RL_KEY_MAX - 1 bytes): 1 when it
 * is to be logged, 0 when it was counted in silence. */
int mts_rl_hit(struct mts_ratelimit *, const char *key, mts_time_t now);
/* Releases the keys whose interval is over. Returns 1 and fills *s for
 * the next of them that has events counted in silence, 0 once none is
 * left; call it until 0 now and then (every second) and log each one. */
int mts_rl_expire(struct mts_ratelimit *, mts_time_t now,
    struct mts_rl_summary *s);

#endif
