/* mtstime.c: clock readers; only agent mains call these, cores get time as an argument. */
#include <time.h>

#include "mtstime.h"

mts_time_t
mts_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (mts_time_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
mts_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

uint64_t
mts_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
