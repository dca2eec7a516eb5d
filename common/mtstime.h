/* mtstime.h: the one monotonic time type passed into cores, and the clock readers mains use. */
#ifndef MTS_TIME_H
#define MTS_TIME_H

#include <stdint.h>

typedef int64_t mts_time_t; /* milliseconds, CLOCK_MONOTONIC */

#define MTS_TIME_NEVER INT64_MAX

mts_time_t mts_now(void);
/* Wall-clock Unix milliseconds: only for HLCs and for display. */
uint64_t mts_wall_ms(void);
/* Monotonic microseconds, for latency measurements. */
int64_t mts_now_us(void);

#endif
