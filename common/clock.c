/*
 * clock.c: the one place that reads a clock (clock.h).
 */
#include "clock.h"

static struct timespec
clock_read(clockid_t clk)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC and CLOCK_REALTIME cannot fail on Linux */
	(void)clock_gettime(clk, &ts);
	return ts;
}

double
bf_mono(void)
{
	struct timespec ts = clock_read(CLOCK_MONOTONIC);

	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t
bf_mono_s(void)
{
	return (int64_t)clock_read(CLOCK_MONOTONIC).tv_sec;
}

int64_t
bf_mono_ms(void)
{
	struct timespec ts = clock_read(CLOCK_MONOTONIC);

	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
bf_mono_ns(void)
{
	struct timespec ts = clock_read(CLOCK_MONOTONIC);

	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double
bf_wall(void)
{
	struct timespec ts = clock_read(CLOCK_REALTIME);

	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
bf_abstime(clockid_t clk, int64_t ms, struct timespec *ts)
{
	*ts = clock_read(clk);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}
