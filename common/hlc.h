/* hlc.h: hybrid logical clock, 48 bits of Unix milliseconds and a 16-bit counter. */
#ifndef MTS_HLC_H
#define MTS_HLC_H

#include <stdint.h>

#define MTS_HLC_LOGICAL_BITS 16
#define MTS_HLC_LOGICAL_MASK 0xffffu
/* How far ahead of the local wall clock a peer's HLC may be: more is a
 * broken clock (or a forged record), refused rather than observed, since
 * observing it would carry every later local write to that time. */
#define MTS_HLC_MAX_AHEAD_MS (60ull * 60 * 1000)

struct mts_hlc {
	uint64_t last; /* highest HLC issued or seen */
};

static inline uint64_t
mts_hlc_ms(uint64_t h)
{
	return h >> MTS_HLC_LOGICAL_BITS;
}

static inline uint64_t
mts_hlc_make(uint64_t ms, uint16_t logical)
{
	return ms << MTS_HLC_LOGICAL_BITS | logical;
}

/* Issues a new HLC strictly greater than every one issued or seen; wall_ms is
 * the current Unix time in ms, passed in so the clock stays testable. At the
 * top of the range it stays there rather than wrap to 0. */
uint64_t mts_hlc_now(struct mts_hlc *, uint64_t wall_ms);
/* Advances past an HLC received from elsewhere. */
void mts_hlc_observe(struct mts_hlc *, uint64_t remote);

#endif
