/*
 * gups.c: HPCC RandomAccess-style updates, after the HPC Challenge
 * specification: a table of 2^log2 64-bit words, t[i] = i, and U updates
 * t[a & mask] ^= a with a from the specification's random stream, the
 * polynomial sequence a_{k+1} = a_k * x mod (x^64 + x^2 + x + 1) over
 * GF(2), a_0 = 1 (a shift left, xor 7 when the top bit falls off). T
 * threads each take a run of U/T consecutive elements of that one stream,
 * started at its own offset (gups_starts: a_n = x^n, by squaring), as
 * HPCC's processes do.
 *
 * --mode whole: every thread updates the whole table, unsynchronised; a
 *     lost update is allowed, as in the specification, up to 1% of the
 *     table (checked afterwards);
 * --mode disjoint: thread t owns slice t of the table (size / T words) and
 *     folds its indices into it: no update is lost.
 * The check replays the same updates (xor undoes itself) and counts the
 * words that are not back at t[i] = i: 0 for one thread or disjoint, at
 * most 1% of the table for whole. Untimed.
 *
 * Reported as giga-updates per second by the standard definition, GUPS =
 * U / t / 1e9, aggregated over the threads (some papers, and our notes,
 * use 2·U/t/1e9, counting the read and the write: multiply ours by 2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "wl.h"

#define GUPS_POLY		0x7ULL
#define GUPS_MAX_THREADS	1024

/* a * b mod (x^64 + x^2 + x + 1), carry-less. */
static uint64_t
gups_mulmod(uint64_t a, uint64_t b)
{
	uint64_t r = 0;
	int i;

	for (i = 63; i >= 0; i--) {
		r = (r << 1) ^ ((int64_t)r < 0 ? GUPS_POLY : 0);
		if ((b >> i) & 1)
			r ^= a;
	}
	return r;
}

/* Element n of the stream, a_n = x^n (a_0 = 1). */
static uint64_t
gups_starts(uint64_t n)
{
	uint64_t r = 1, base = 2;

	for (; n != 0; n >>= 1) {
		if (n & 1)
			r = gups_mulmod(r, base);
		base = gups_mulmod(base, base);
	}
	return r;
}

static inline uint64_t
gups_next(uint64_t a)
{
	return (a << 1) ^ ((int64_t)a < 0 ? GUPS_POLY : 0);
}

struct gups_job {
	uint64_t *t;
	uint64_t first, count;	/* stream elements first+1 .. first+count */
	uint64_t lo, mask;	/* the slice: t[lo + (a & mask)] */
};

static void *
gups_worker(void *arg)
{
	const struct gups_job *j = arg;
	uint64_t *t = j->t, a = gups_starts(j->first), n, lo = j->lo, mask = j->mask;

	for (n = 0; n < j->count; n++) {
		a = gups_next(a);
		t[lo + (a & mask)] ^= a;
	}
	return NULL;
}

/* Run the jobs on threads; 0, or 1 after a message. */
static int
gups_pass(struct gups_job *jobs, pthread_t *tid, int64_t threads)
{
	int64_t i, started;
	int r = 0;

	for (started = 0; started < threads; started++)
		if (pthread_create(&tid[started], NULL, gups_worker, &jobs[started]) != 0) {
			fprintf(stderr, "benchfleet-agent: gups: pthread_create failed\n");
			r = 1;
			break;
		}
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	return r;
}

int
gups_main(int argc, char **argv)
{
	static const char *const modes[] = { "whole", "disjoint", NULL };
	int64_t lg = 0, updates = 0, threads = 1, t;
	struct wl_opt o[] = {
		{ "--log2", 10, 36, &lg, 1 },
		{ "--updates", 1, (int64_t)1 << 40, &updates, 1 },
		{ "--threads", 1, GUPS_MAX_THREADS, &threads, 0 },
	};
	struct gups_job *jobs = NULL;
	pthread_t *tid = NULL;
	uint64_t *tab = MAP_FAILED, errors = 0, slice, sum = 0;
	size_t n = 0, k;
	double t0, dt;
	int r, thp = WL_THP_NONE, mode = 0;

	if ((r = wl_thp_opt("gups", &argc, argv, &thp)) != 0 ||
	    (r = wl_word("gups", &argc, argv, "--mode", modes, &mode)) != 0 ||
	    (r = wl_parse("gups", argc, argv, o, 3)) != 0)
		return r;
	n = (size_t)1 << lg;
	if (mode == 1 && (threads & (threads - 1)) != 0) {
		fprintf(stderr, "benchfleet-agent: work gups: --mode disjoint needs --threads a "
		    "power of two (the table splits into equal power-of-two slices), not %lld\n",
		    (long long)threads);
		return WL_EXIT_USAGE;
	}
	if (mode == 1 && (size_t)threads > n) {
		fprintf(stderr, "benchfleet-agent: work gups: --threads %lld is more than the "
		    "table's %zu words\n", (long long)threads, n);
		return WL_EXIT_USAGE;
	}
	r = 1;
	if ((tab = wl_map("gups", n * sizeof(*tab), thp, 0)) == NULL) {
		tab = MAP_FAILED;
		goto out;
	}
	jobs = calloc((size_t)threads, sizeof(*jobs));
	tid = calloc((size_t)threads, sizeof(*tid));
	if (jobs == NULL || tid == NULL) {
		fprintf(stderr, "benchfleet-agent: gups: out of memory\n");
		goto out;
	}
	for (k = 0; k < n; k++)
		tab[k] = k;
	slice = mode == 1 ? n / (uint64_t)threads : n;
	for (t = 0; t < threads; t++) {
		uint64_t per = (uint64_t)(updates / threads), extra = (uint64_t)(updates % threads);

		jobs[t].t = tab;
		jobs[t].first = per * (uint64_t)t + ((uint64_t)t < extra ? (uint64_t)t : extra);
		jobs[t].count = per + ((uint64_t)t < extra);
		jobs[t].lo = mode == 1 ? slice * (uint64_t)t : 0;
		jobs[t].mask = slice - 1;
	}
	t0 = wl_now();
	if (gups_pass(jobs, tid, threads) != 0)
		goto out;
	dt = wl_now() - t0;
	/* every update xors its value into some word: the xor of the table is
	 * that of the stream, wherever the indices went, unless one was lost */
	for (k = 0; k < n; k++)
		sum ^= tab[k];
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	/* the replay undoes every update that was not lost */
	if (gups_pass(jobs, tid, threads) != 0)
		goto out;
	for (k = 0; k < n; k++)
		errors += tab[k] != k;
	if (dt <= 0)
		dt = 1e-9;
	printf("gups: %.6f\n", (double)updates / dt / 1e9);
	printf("seconds: %.6f\n", dt);
	printf("threads: %lld\n", (long long)threads);
	printf("errors: %llu\n", (unsigned long long)errors);
	printf("table_xor: %016llx\n", (unsigned long long)sum);
	if ((threads == 1 || mode == 1) ? errors != 0 : errors * 100 > n) {
		fprintf(stderr, "benchfleet-agent: gups: %llu of %zu words wrong after the "
		    "replay (allowed: %s)\n", (unsigned long long)errors, n,
		    threads == 1 || mode == 1 ? "none" : "1%");
		goto out;
	}
	r = 0;
out:
	if (tab != MAP_FAILED)
		munmap(tab, n * sizeof(*tab));
	free(jobs);
	free(tid);
	return r;
}
