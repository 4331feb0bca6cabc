/*
 * pagefault.c: page-fault latency, three ways.
 *   file: map a file it creates MAP_SHARED (page-cache faults, where
 *       fault-around amortises the cost), read one byte per page in
 *       order, once; time / pages.
 *   anon: the same over private anonymous memory, one write per page
 *       (where the THP mode matters).
 *   lmbench: lmbench's published lat_pagefault method (the paper and the
 *       manual page; not its code): the file in the page cache, each pass
 *       maps it afresh, reads one byte per page in a random permutation of
 *       the pages and unmaps it; the cost of a map and unmap with no touch
 *       is measured the same number of times and subtracted; the result is
 *       per page. Random order defeats the sequential locality the file
 *       mode enjoys, so it reads higher per page than file mode.
 * Each prints pagefault_us (per page touched), faults and us_per_fault.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "wl.h"

#define PAGEFAULT_MAX_MB	((int64_t)1 << 16)
#define PAGEFAULT_MAX_PASSES	1000

enum pagefault_mode { PF_FILE = 0, PF_ANON, PF_LMBENCH };

static long
pagefault_faults(const struct rusage *a, const struct rusage *b)
{
	return b->ru_minflt - a->ru_minflt + b->ru_majflt - a->ru_majflt;
}

/* A page-cache file of len bytes, written once so the faults below are
 * page-cache hits, not I/O; unlinked. fd, or -1 after a message. */
static int
pagefault_file(size_t len)
{
	char path[] = "/tmp/bf-pagefault-XXXXXX";
	char *m;
	int fd;

	if ((fd = mkstemp(path)) < 0 || unlink(path) != 0 || ftruncate(fd, (off_t)len) != 0) {
		perror("benchfleet-agent: pagefault file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("benchfleet-agent: mmap");
		close(fd);
		return -1;
	}
	memset(m, 1, len);
	munmap(m, len);
	return fd;
}

/* The lmbench method over fd; 0, or 1 after a message. */
static int
pagefault_lmbench(int fd, size_t len, int64_t passes, int thp)
{
	size_t pages = len / WL_PAGE, i, j, *perm, tmp;
	struct rusage r0, r1;
	uint64_t s = 0x1a7f;
	double touch = 0, bare = 0, t0;
	volatile char sink = 0;
	long faults;
	int64_t p;
	char *m;

	if ((perm = malloc(pages * sizeof(*perm))) == NULL) {
		fprintf(stderr, "benchfleet-agent: pagefault: out of memory\n");
		return 1;
	}
	for (i = 0; i < pages; i++)
		perm[i] = i;
	for (i = pages - 1; i > 0; i--) {	/* Fisher-Yates */
		j = (size_t)(wl_rand(&s) % (i + 1));
		tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
	getrusage(RUSAGE_SELF, &r0);
	for (p = 0; p < passes; p++) {
		t0 = wl_now();
		m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED || wl_advise("pagefault", m, len, thp) != 0) {
			perror("benchfleet-agent: mmap");
			free(perm);
			return 1;
		}
		for (i = 0; i < pages; i++)
			sink += m[perm[i] * WL_PAGE];
		munmap(m, len);
		touch += wl_now() - t0;
	}
	getrusage(RUSAGE_SELF, &r1);
	for (p = 0; p < passes; p++) {
		t0 = wl_now();
		m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED || wl_advise("pagefault", m, len, thp) != 0) {
			perror("benchfleet-agent: mmap");
			free(perm);
			return 1;
		}
		munmap(m, len);
		bare += wl_now() - t0;
	}
	(void)sink;
	free(perm);
	faults = pagefault_faults(&r0, &r1);
	/* raw: what a timer around map-touch-unmap says, before the map cost goes */
	printf("raw_us: %.4f\n", touch * 1e6 / ((double)pages * (double)passes));
	touch -= bare;
	if (touch < 0)
		touch = 0;
	printf("pagefault_us: %.4f\n", touch * 1e6 / ((double)pages * (double)passes));
	printf("mmap_us: %.4f\n", bare * 1e6 / (double)passes);
	printf("faults: %ld\n", faults);
	printf("us_per_fault: %.4f\n", faults > 0 ? touch * 1e6 / (double)faults : 0.0);
	return 0;
}

int
pagefault_main(int argc, char **argv)
{
	static const char *const modes[] = { "file", "anon", "lmbench", NULL };
	int64_t mb = 0, passes = 1;
	struct rusage r0, r1;
	size_t len, off;
	volatile char sink = 0;
	char *m;
	double t0, dt;
	long faults;
	int fd = -1, r, mode = PF_FILE, thp = WL_THP_NONE;

	if ((r = wl_word("pagefault", &argc, argv, "--mode", modes, &mode)) != 0 ||
	    (r = wl_thp_opt("pagefault", &argc, argv, &thp)) != 0)
		return r;
	{
		struct wl_opt o[] = {
			{ "--mb", 1, PAGEFAULT_MAX_MB, &mb, 1 },
			{ "--passes", 1, PAGEFAULT_MAX_PASSES, &passes, 0 },
		};

		if ((r = wl_parse("pagefault", argc, argv, o, 2)) != 0)
			return r;
	}
	if (mode != PF_LMBENCH && passes != 1) {
		fprintf(stderr, "benchfleet-agent: work pagefault: --passes is for --mode lmbench "
		    "(file and anon fault each page once)\n");
		return WL_EXIT_USAGE;
	}
	len = (size_t)mb << 20;
	if (mode != PF_ANON && (fd = pagefault_file(len)) < 0)
		return 1;
	if (mode == PF_LMBENCH) {
		r = pagefault_lmbench(fd, len, passes, thp);
		close(fd);
		return r;
	}
	if (mode == PF_FILE) {
		m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			perror("benchfleet-agent: mmap");
			close(fd);
			return 1;
		}
		if (wl_advise("pagefault", m, len, thp) != 0) {
			munmap(m, len);
			close(fd);
			return 1;
		}
	} else if ((m = wl_map("pagefault", len, thp, 0)) == NULL)
		return 1;
	getrusage(RUSAGE_SELF, &r0);
	t0 = wl_now();
	for (off = 0; off < len; off += WL_PAGE) {
		if (mode == PF_FILE)
			sink += m[off];
		else
			m[off] = 1;
	}
	dt = wl_now() - t0;
	getrusage(RUSAGE_SELF, &r1);
	(void)sink;
	if (mode == PF_ANON)
		printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	munmap(m, len);
	if (fd >= 0)
		close(fd);
	faults = pagefault_faults(&r0, &r1);
	/* lat_pagefault divides by pages touched; faults is printed beside it */
	printf("pagefault_us: %.4f\n", dt * 1e6 / (double)(len / WL_PAGE));
	printf("faults: %ld\n", faults);
	printf("us_per_fault: %.4f\n", faults > 0 ? dt * 1e6 / (double)faults : 0.0);
	return 0;
}
