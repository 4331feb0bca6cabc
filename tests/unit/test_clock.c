/* test_clock.c: the clock helpers agree with each other and with the
 * clock they name; bf_abstime() normalises across a second boundary. */
#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "t.h"

static int64_t
ts_ms(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

/* The units agree: read in order, each is within a second of the next. */
static void
test_units(void)
{
	int64_t s = bf_mono_s(), ms = bf_mono_ms(), ns = bf_mono_ns();
	double d = bf_mono();

	T_CHECK(s >= 0 && ms >= 0 && ns >= 0);
	T_CHECK(ms / 1000 >= s && ms / 1000 - s <= 1);
	T_CHECK(ns / 1000000 >= ms && ns / 1000000 - ms <= 1000);
	T_CHECK(d >= (double)ns / 1e9 && d - (double)ns / 1e9 < 1.0);
	/* monotonic: never backwards */
	T_CHECK(bf_mono_ns() >= ns);
	T_CHECK(bf_mono_s() >= s);
}

static void
test_wall(void)
{
	struct timespec ts;
	double w;

	clock_gettime(CLOCK_REALTIME, &ts);
	w = bf_wall();
	T_CHECK(w >= (double)ts.tv_sec && w - (double)ts.tv_sec < 2.0);
	T_CHECK(w > 1.6e9);	/* 2020: not CLOCK_MONOTONIC by mistake */
}

/* Deadlines land ms after now on the clock asked for, always normalised. */
static void
test_abstime(void)
{
	static const int64_t ms[] = { 0, 1, 250, 999, 1000, 1001, 1999, 60000, 86400000 };
	static const clockid_t clk[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	struct timespec before, dl, after;
	size_t i, c;

	for (c = 0; c < sizeof(clk) / sizeof(clk[0]); c++) {
		for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
			clock_gettime(clk[c], &before);
			bf_abstime(clk[c], ms[i], &dl);
			clock_gettime(clk[c], &after);
			T_CHECK(dl.tv_nsec >= 0 && dl.tv_nsec < 1000000000L);
			T_CHECK(ts_ms(&dl) >= ts_ms(&before) + ms[i]);
			T_CHECK(ts_ms(&dl) <= ts_ms(&after) + ms[i]);
		}
	}
}

int
main(void)
{
	test_units();
	test_wall();
	test_abstime();
	return t_done();
}
