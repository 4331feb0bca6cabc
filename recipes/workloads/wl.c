/*
 * wl.c: what the built-in workloads share: range-checked options and time.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "parse.h"
#include "wl.h"

double
wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t
wl_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int
wl_parse(const char *work, int argc, char **argv, const struct wl_opt *opts, int nopts)
{
	int i = 1, k, seen[32] = { 0 };

	while (i < argc) {
		for (k = 0; k < nopts; k++)
			if (strcmp(argv[i], opts[k].name) == 0)
				break;
		if (k == nopts) {
			fprintf(stderr, "benchfleet-agent: work %s: unknown argument \"%.64s\"\n",
			    work, argv[i]);
			return WL_EXIT_USAGE;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "benchfleet-agent: work %s: %s needs a value\n", work,
			    opts[k].name);
			return WL_EXIT_USAGE;
		}
		if (parse_i64(argv[i + 1], opts[k].min, opts[k].max, opts[k].val) != 0) {
			fprintf(stderr, "benchfleet-agent: work %s: %s \"%.64s\": expected an "
			    "integer in %lld..%lld\n", work, opts[k].name, argv[i + 1],
			    (long long)opts[k].min, (long long)opts[k].max);
			return WL_EXIT_USAGE;
		}
		if (k < 32)
			seen[k] = 1;
		i += 2;
	}
	for (k = 0; k < nopts && k < 32; k++)
		if (opts[k].required && !seen[k]) {
			fprintf(stderr, "benchfleet-agent: work %s needs %s N\n", work, opts[k].name);
			return WL_EXIT_USAGE;
		}
	return 0;
}
