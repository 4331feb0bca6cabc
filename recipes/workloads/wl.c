/*
 * wl.c: what the built-in workloads share: range-checked options, time,
 * and memory mapped in the THP mode asked for.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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

int
wl_word(const char *work, int *argc, char **argv, const char *name,
    const char *const *words, int *idx)
{
	char list[256];
	int i, k;

	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], name) != 0)
			continue;
		if (i + 1 >= *argc) {
			fprintf(stderr, "benchfleet-agent: work %s: %s needs a value\n", work, name);
			return WL_EXIT_USAGE;
		}
		list[0] = '\0';
		for (k = 0; words[k] != NULL; k++) {
			if (strcmp(argv[i + 1], words[k]) == 0)
				break;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			    k ? ", " : "", words[k]);
		}
		if (words[k] == NULL) {
			fprintf(stderr, "benchfleet-agent: work %s: %s \"%.32s\" is not one of "
			    "%s\n", work, name, argv[i + 1], list);
			return WL_EXIT_USAGE;
		}
		*idx = k;
		memmove(&argv[i], &argv[i + 2], (size_t)(*argc - i - 1) * sizeof(*argv));
		*argc -= 2;
		i--;	/* a repeated option: the last one wins */
	}
	return 0;
}

int
wl_thp_opt(const char *work, int *argc, char **argv, int *thp)
{
	static const char *const modes[] = { "none", "madvise", "nohugepage", NULL };

	return wl_word(work, argc, argv, "--thp", modes, thp);
}

int
wl_advise(const char *work, void *p, size_t len, int thp)
{
	int adv;

	if (thp == WL_THP_NONE)
		return 0;
	adv = thp == WL_THP_MADVISE ? MADV_HUGEPAGE : MADV_NOHUGEPAGE;
	if (madvise(p, len, adv) != 0) {
		/* EINVAL: a kernel without THP; the run would measure the
		 * wrong thing, so it fails */
		fprintf(stderr, "benchfleet-agent: work %s: madvise(%s): %s\n", work,
		    thp == WL_THP_MADVISE ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", strerror(errno));
		return 1;
	}
	return 0;
}

void *
wl_map(const char *work, size_t len, int thp, int extra)
{
	size_t pad = thp == WL_THP_MADVISE ? WL_HUGE : 0, head;
	char *m;

	if (len > SIZE_MAX - pad) {
		fprintf(stderr, "benchfleet-agent: work %s: %zu bytes is too much\n", work, len);
		return NULL;
	}
	m = mmap(NULL, len + pad, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra,
	    -1, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "benchfleet-agent: work %s: mmap %zu bytes: %s\n", work, len,
		    strerror(errno));
		return NULL;
	}
	if (pad != 0) {
		/* a 2 MiB-aligned start: otherwise the first and last huge page
		 * of the range cannot be backed, and a small one not at all */
		head = (WL_HUGE - ((uintptr_t)m & (WL_HUGE - 1))) & (WL_HUGE - 1);
		if (head != 0)
			munmap(m, head);
		if (pad - head != 0)
			munmap(m + head + len, pad - head);
		m += head;
	}
	if (wl_advise(work, m, len, thp) != 0) {
		munmap(m, len);
		return NULL;
	}
	return m;
}

long
wl_anon_huge_kb(void)
{
	char line[256];
	int64_t kb = -1, v;
	size_t n;
	FILE *f;

	if ((f = fopen("/proc/self/smaps_rollup", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "AnonHugePages:", 14) != 0)
			continue;
		/* "AnonHugePages:     20480 kB" */
		for (n = 14; line[n] == ' ' || line[n] == '\t'; n++)
			;
		line[n + strcspn(line + n, " \t\n")] = '\0';
		if (parse_i64(line + n, 0, INT64_MAX, &v) == 0)
			kb = v;
		break;
	}
	fclose(f);
	return (long)kb;
}
