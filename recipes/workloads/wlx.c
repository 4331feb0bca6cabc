/*
 * wlx.c: what the algorithm workloads (xsbench, graph500, pagerank,
 * hashjoin, hint) share: the word options wl_parse does not take (--thp
 * and enums), allocations advised the way --thp says, and a parallel run
 * over pthreads. The THP advice is the simple one: madvise() on each of our
 * own anonymous mappings, so a thp_enabled=madvise cell faults huge pages
 * into exactly the workload's data.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "parse.h"
#include "wl.h"
#include "wlx.h"

static const char *const wlx_thp_names[] = { "none", "madvise", "nohugepage" };

int
wlx_word(const char *work, int *argc, char **argv, const char *opt,
    const char *const *choices, int nchoices, int *val)
{
	int i, k;

	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], opt) != 0)
			continue;
		if (i + 1 >= *argc) {
			fprintf(stderr, "benchfleet-agent: work %s: %s needs a value\n", work, opt);
			return WL_EXIT_USAGE;
		}
		for (k = 0; k < nchoices; k++)
			if (strcmp(argv[i + 1], choices[k]) == 0)
				break;
		if (k == nchoices) {
			fprintf(stderr, "benchfleet-agent: work %s: %s \"%.64s\": expected one of",
			    work, opt, argv[i + 1]);
			for (k = 0; k < nchoices; k++)
				fprintf(stderr, "%s %s", k ? "," : "", choices[k]);
			fprintf(stderr, "\n");
			return WL_EXIT_USAGE;
		}
		*val = k;
		/* drop the pair so wl_parse sees only its integer options */
		memmove(&argv[i], &argv[i + 2], (size_t)(*argc - i - 2) * sizeof(*argv));
		*argc -= 2;
		i--;
	}
	return 0;
}

int
wlx_num(const char *work, int *argc, char **argv, const char *opt, double min, double max,
    double *val)
{
	int i;

	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], opt) != 0)
			continue;
		if (i + 1 >= *argc || parse_double(argv[i + 1], val) != 0 || !(*val >= min) ||
		    !(*val <= max)) {
			fprintf(stderr, "benchfleet-agent: work %s: %s \"%.64s\": expected a number "
			    "in %g..%g\n", work, opt, i + 1 < *argc ? argv[i + 1] : "", min, max);
			return WL_EXIT_USAGE;
		}
		memmove(&argv[i], &argv[i + 2], (size_t)(*argc - i - 2) * sizeof(*argv));
		*argc -= 2;
		i--;
	}
	return 0;
}

int
wlx_thp_arg(const char *work, int *argc, char **argv, int *thp)
{
	*thp = WLX_THP_NONE;
	return wlx_word(work, argc, argv, "--thp", wlx_thp_names, 3, thp);
}

void *
wlx_alloc(size_t bytes, int thp)
{
	void *p;

	if (bytes == 0)
		bytes = 1;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* advice the kernel refuses (no THP built in) leaves plain pages: the
	 * run's counters, not this call, say what happened */
	if (thp == WLX_THP_MADVISE)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
	else if (thp == WLX_THP_NOHUGEPAGE)
		(void)madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

void
wlx_free(void *p, size_t bytes)
{
	if (p != NULL)
		munmap(p, bytes == 0 ? 1 : bytes);
}

/* A thread that cannot start ends the process: the workloads' workers meet
 * at barriers sized for all of them, so going on with fewer would hang. */
void
wlx_par(int threads, void *(*fn)(void *), void *args, size_t stride)
{
	pthread_t tid[WLX_MAX_THREADS];
	int t;

	if (threads < 1 || threads > WLX_MAX_THREADS) {
		fprintf(stderr, "benchfleet-agent: %d threads: expected 1..%d\n", threads,
		    WLX_MAX_THREADS);
		exit(1);
	}
	for (t = 1; t < threads; t++)
		if (pthread_create(&tid[t], NULL, fn, (char *)args + (size_t)t * stride) != 0) {
			fprintf(stderr, "benchfleet-agent: pthread_create failed\n");
			exit(1);
		}
	fn(args);
	for (t = 1; t < threads; t++)
		pthread_join(tid[t], NULL);
}

int
wlx_cap(const char *work, double bytes)
{
	if (bytes > (double)WLX_MAX_BYTES) {
		fprintf(stderr, "benchfleet-agent: work %s: these sizes need %.1f GiB, more than "
		    "the %lld GiB cap\n", work, bytes / 1073741824.0,
		    (long long)(WLX_MAX_BYTES >> 30));
		return WL_EXIT_USAGE;
	}
	return 0;
}
