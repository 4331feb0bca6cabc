/*
 * clock.h: the one clock helper. Everything that measures an interval reads
 * CLOCK_MONOTONIC through bf_mono*(); bf_wall() is the time of day, for
 * timestamps stored or shown; bf_abstime() makes the absolute deadline a
 * pthread_cond_timedwait() on that clock wants. tools/checksrc refuses
 * clock_gettime() anywhere else in the product.
 */
#ifndef BF_CLOCK_H
#define BF_CLOCK_H

#include <stdint.h>
#include <time.h>

double bf_mono(void);			/* seconds, CLOCK_MONOTONIC */
int64_t bf_mono_s(void);		/* whole seconds, CLOCK_MONOTONIC */
int64_t bf_mono_ms(void);		/* milliseconds, CLOCK_MONOTONIC */
int64_t bf_mono_ns(void);		/* nanoseconds, CLOCK_MONOTONIC */
double bf_wall(void);			/* seconds since the epoch, CLOCK_REALTIME */
/* *ts = now on clk (CLOCK_REALTIME or CLOCK_MONOTONIC) + ms, normalised. */
void bf_abstime(clockid_t clk, int64_t ms, struct timespec *ts);

#endif
