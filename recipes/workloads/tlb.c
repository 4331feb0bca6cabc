/*
 * tlb.c: TLB-bound loops. dtlb touches one byte in each of N pages, over
 * and over (after a first pass that faults them in, untimed); zeropage
 * reads the same offset of N never-written anonymous pages, which all map
 * the shared zero page (or the huge zero page), thrashing the cache lines
 * of one physical page through N translations. Both take --thp (wl.h):
 * under madvise, zeropage's read faults map the huge zero page where
 * use_zero_page allows it.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "wl.h"

#define TLB_MAX_PAGES	((int64_t)1 << 26)	/* 256 GiB of 4 KiB pages */
#define TLB_MAX_ITERS	((int64_t)1 << 30)

static char *
tlb_map(const char *work, int64_t pages, int thp)
{
	return wl_map(work, (size_t)pages * WL_PAGE, thp, MAP_NORESERVE);
}

int
tlb_dtlb(int argc, char **argv)
{
	int64_t pages = 0, iters = 0, i, p;
	struct wl_opt o[] = {
		{ "--pages", 1, TLB_MAX_PAGES, &pages, 1 },
		{ "--iters", 1, TLB_MAX_ITERS, &iters, 1 },
	};
	volatile char *m;
	double t0, dt;
	int r, thp = WL_THP_NONE;

	if ((r = wl_thp_opt("dtlb", &argc, argv, &thp)) != 0 ||
	    (r = wl_parse("dtlb", argc, argv, o, 2)) != 0)
		return r;
	if ((m = tlb_map("dtlb", pages, thp)) == NULL)
		return 1;
	for (p = 0; p < pages; p++)
		m[p * WL_PAGE] = 1;
	t0 = wl_now();
	for (i = 0; i < iters; i++)
		for (p = 0; p < pages; p++)
			m[p * WL_PAGE]++;
	dt = wl_now() - t0;
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	munmap((void *)m, (size_t)pages * WL_PAGE);
	printf("ns_per_touch: %.4f\n", dt * 1e9 / ((double)pages * (double)iters));
	return 0;
}

int
tlb_zeropage(int argc, char **argv)
{
	int64_t pages = 0, iters = 0, i, p;
	struct wl_opt o[] = {
		{ "--pages", 1, TLB_MAX_PAGES, &pages, 1 },
		{ "--iters", 1, TLB_MAX_ITERS, &iters, 1 },
	};
	volatile char *m;
	unsigned long sum = 0;
	double t0, dt;
	int r, thp = WL_THP_NONE;

	if ((r = wl_thp_opt("zeropage", &argc, argv, &thp)) != 0 ||
	    (r = wl_parse("zeropage", argc, argv, o, 2)) != 0)
		return r;
	if ((m = tlb_map("zeropage", pages, thp)) == NULL)
		return 1;
	for (p = 0; p < pages; p++)	/* read faults: map the zero page, untimed */
		sum += (unsigned char)m[p * WL_PAGE];
	t0 = wl_now();
	for (i = 0; i < iters; i++)
		for (p = 0; p < pages; p++)
			sum += (unsigned char)m[p * WL_PAGE + 64];
	dt = wl_now() - t0;
	munmap((void *)m, (size_t)pages * WL_PAGE);
	if (sum != 0) {
		fprintf(stderr, "benchfleet-agent: zeropage: never-written memory read non-zero\n");
		return 1;
	}
	printf("ns_per_read: %.4f\n", dt * 1e9 / ((double)pages * (double)iters));
	return 0;
}
