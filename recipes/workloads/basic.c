/*
 * basic.c: the first built-in workloads: an ALU loop, first-touch page
 * faults, echo (argv arrives literally), and addr (where the stack and a
 * fresh mmap land: fixed across runs only when ASLR is off).
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "wl.h"

#define BASIC_MAX_LOOPS	((int64_t)1 << 40)
#define BASIC_MAX_MB	((int64_t)1 << 20)	/* 1 TiB */
#define BASIC_MAX_PASSES	1000

/* An integer mixing loop (splitmix64 steps): pure ALU, no memory traffic. */
int
basic_cpu(int argc, char **argv)
{
	volatile uint64_t sink;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int64_t loops = 0, n;
	struct wl_opt o[] = { { "--loops", 1, BASIC_MAX_LOOPS, &loops, 1 } };
	double t0, dt;
	int r;

	if ((r = wl_parse("cpu", argc, argv, o, 1)) != 0)
		return r;
	t0 = wl_now();
	for (n = 0; n < loops; n++) {
		x += 0x9e3779b97f4a7c15ULL;
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
		x ^= x >> 31;
	}
	sink = x;
	(void)sink;
	dt = wl_now() - t0;
	if (dt <= 0)
		dt = 1e-9;
	printf("loops/s: %.0f\n", (double)loops / dt);
	return 0;
}

/* First-touch page faults: only the first pass faults, later passes time
 * TLB/cache behaviour over already-mapped pages. */
int
basic_touch(int argc, char **argv)
{
	struct rusage r0, r1;
	int64_t mb = 0, passes = 1, p;
	struct wl_opt o[] = {
		{ "--mb", 1, BASIC_MAX_MB, &mb, 1 },
		{ "--passes", 1, BASIC_MAX_PASSES, &passes, 0 },
	};
	size_t len, off;
	volatile char *mem;
	void *m;
	double t0, dt;
	int r, thp = WL_THP_NONE;

	if ((r = wl_thp_opt("touch", &argc, argv, &thp)) != 0 ||
	    (r = wl_parse("touch", argc, argv, o, 2)) != 0)
		return r;
	len = (size_t)mb << 20;
	if ((m = wl_map("touch", len, thp, 0)) == NULL)
		return 1;
	mem = m;
	getrusage(RUSAGE_SELF, &r0);
	t0 = wl_now();
	for (p = 0; p < passes; p++)
		for (off = 0; off < len; off += WL_PAGE)
			mem[off] = (char)p;
	dt = wl_now() - t0;
	getrusage(RUSAGE_SELF, &r1);
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	munmap(m, len);
	if (dt <= 0)
		dt = 1e-9;
	printf("pages/s: %.0f\n", (double)(len / WL_PAGE) * (double)passes / dt);
	printf("faults: %ld\n", r1.ru_minflt - r0.ru_minflt);
	return 0;
}

int
basic_echo(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		fputs(argv[i], stdout);
		fputc('\n', stdout);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

int
basic_addr(int argc, char **argv)
{
	volatile int here = 0;
	void *m;

	if (argc != 1) {
		fprintf(stderr, "benchfleet-agent: work addr takes no arguments\n");
		return WL_EXIT_USAGE;
	}
	m = mmap(NULL, WL_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		perror("benchfleet-agent: mmap");
		return 1;
	}
	printf("stack: %p\nmmap: %p\n", (void *)&here, m);
	munmap(m, WL_PAGE);
	return 0;
}
