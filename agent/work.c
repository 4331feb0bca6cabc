/*
 * work.c: the built-in workloads. Each prints its result in a fixed
 * "name: value" form that recipes extract with a regex like any other
 * program's output.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "err.h"
#include "parse.h"
#include "work.h"

#define WORK_MAX_LOOPS	((int64_t)1 << 40)
#define WORK_MAX_MB	((int64_t)1 << 20)	/* 1 TiB */
#define WORK_MAX_PASSES	1000
#define WORK_PAGE	4096

struct work_cmd {
	const char *name;
	const char *usage;
	int (*fn)(int argc, char **argv);
};

static double
work_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Value of option opt ("--loops") at argv[*i]; the number must be in range. */
static int
work_opt(int argc, char **argv, int *i, const char *opt, int64_t min, int64_t max,
    int64_t *out)
{
	int r;

	if (strcmp(argv[*i], opt) != 0)
		return BF_ERR_NOTFOUND;
	if (*i + 1 >= argc) {
		fprintf(stderr, "benchfleet-agent: %s needs a value\n", opt);
		return BF_ERR_INVALID;
	}
	if ((r = parse_i64(argv[*i + 1], min, max, out)) != 0) {
		fprintf(stderr, "benchfleet-agent: %s \"%.64s\": expected an integer in "
		    "%lld..%lld\n", opt, argv[*i + 1], (long long)min, (long long)max);
		return r;
	}
	*i += 2;
	return 0;
}

static int
work_unknown(const char *arg)
{
	fprintf(stderr, "benchfleet-agent: unknown argument \"%.64s\"\n", arg);
	return WORK_EXIT_USAGE;
}

/* An integer mixing loop (splitmix64 steps): pure ALU, no memory traffic. */
static int
work_cpu(int argc, char **argv)
{
	volatile uint64_t sink;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int64_t loops = -1, n;
	double t0, dt;
	int i = 1, r;

	while (i < argc) {
		if ((r = work_opt(argc, argv, &i, "--loops", 1, WORK_MAX_LOOPS, &loops)) == 0)
			continue;
		return r == BF_ERR_NOTFOUND ? work_unknown(argv[i]) : WORK_EXIT_USAGE;
	}
	if (loops < 0) {
		fprintf(stderr, "benchfleet-agent: work cpu needs --loops N\n");
		return WORK_EXIT_USAGE;
	}
	t0 = work_now();
	for (n = 0; n < loops; n++) {
		x += 0x9e3779b97f4a7c15ULL;
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
		x ^= x >> 31;
	}
	sink = x;
	(void)sink;
	dt = work_now() - t0;
	if (dt <= 0)
		dt = 1e-9;
	printf("loops/s: %.0f\n", (double)loops / dt);
	return 0;
}

/* First-touch page faults: only the first pass faults, later passes time
 * TLB/cache behaviour over already-mapped pages. */
static int
work_touch(int argc, char **argv)
{
	struct rusage r0, r1;
	int64_t mb = -1, passes = 1, p;
	size_t len, off;
	volatile char *mem;
	void *m;
	double t0, dt;
	int i = 1, r;

	while (i < argc) {
		if ((r = work_opt(argc, argv, &i, "--mb", 1, WORK_MAX_MB, &mb)) == 0)
			continue;
		if (r == BF_ERR_NOTFOUND &&
		    (r = work_opt(argc, argv, &i, "--passes", 1, WORK_MAX_PASSES, &passes)) == 0)
			continue;
		return r == BF_ERR_NOTFOUND ? work_unknown(argv[i]) : WORK_EXIT_USAGE;
	}
	if (mb < 0) {
		fprintf(stderr, "benchfleet-agent: work touch needs --mb M\n");
		return WORK_EXIT_USAGE;
	}
	len = (size_t)mb << 20;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		perror("benchfleet-agent: mmap");
		return 1;
	}
	mem = m;
	getrusage(RUSAGE_SELF, &r0);
	t0 = work_now();
	for (p = 0; p < passes; p++)
		for (off = 0; off < len; off += WORK_PAGE)
			mem[off] = (char)p;
	dt = work_now() - t0;
	getrusage(RUSAGE_SELF, &r1);
	munmap(m, len);
	if (dt <= 0)
		dt = 1e-9;
	printf("pages/s: %.0f\n", (double)(len / WORK_PAGE) * (double)passes / dt);
	printf("faults: %ld\n", r1.ru_minflt - r0.ru_minflt);
	return 0;
}

static int
work_echo(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		fputs(argv[i], stdout);
		fputc('\n', stdout);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

static const struct work_cmd work_cmds[] = {
	{ "cpu",	"cpu --loops N",		work_cpu },
	{ "touch",	"touch --mb M [--passes P]",	work_touch },
	{ "echo",	"echo ARG...",			work_echo },
};

int
work_main(int argc, char **argv)
{
	size_t i;

	for (i = 0; argc >= 1 && i < sizeof(work_cmds) / sizeof(work_cmds[0]); i++)
		if (strcmp(argv[0], work_cmds[i].name) == 0)
			return work_cmds[i].fn(argc, argv);
	fprintf(stderr, "benchfleet-agent: unknown workload \"%.64s\"; one of:\n",
	    argc >= 1 ? argv[0] : "");
	for (i = 0; i < sizeof(work_cmds) / sizeof(work_cmds[0]); i++)
		fprintf(stderr, "  work %s\n", work_cmds[i].usage);
	return WORK_EXIT_USAGE;
}
