/* hlc.c: hybrid logical clock; monotonic even if the wall clock steps back. */
#include "hlc.h"

uint64_t
mts_hlc_now(struct mts_hlc *c, uint64_t wall_ms)
{
	uint64_t phys = mts_hlc_make(wall_ms & ((1ull << 48) - 1), 0);

	/* Either the wall clock moved past everything seen (counter restarts),
	 * or we tick the logical counter of the highest HLC seen; a counter
	 * overflow carries into the millisecond part, which stays ordered. */
	if (phys > c->last)
		c->last = phys;
	else if (c->last < UINT64_MAX)
		c->last++;
	return c->last;
}

void
mts_hlc_observe(struct mts_hlc *c, uint64_t remote)
{
	if (remote > c->last)
		c->last = remote;
}
