/*
 * pagefault.c: page-fault latency in the style of lmbench lat_pagefault:
 * map a region, touch one byte per page, divide the time by the faults.
 * "file" maps a file it creates MAP_SHARED (page-cache faults, where
 * fault-around amortises the cost, as in lat_pagefault); "anon" maps
 * private anonymous memory (where the THP mode matters).
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

int
pagefault_main(int argc, char **argv)
{
	char path[] = "/tmp/bf-pagefault-XXXXXX";
	int64_t mb = 0, file = 1;
	struct rusage r0, r1;
	size_t len, off;
	volatile char sink = 0;
	char *m;
	double t0, dt;
	long faults;
	int fd = -1, i, r;

	/* --mode is a word; take it out before the numeric options */
	for (i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--mode") == 0) {
			if (strcmp(argv[i + 1], "file") == 0)
				file = 1;
			else if (strcmp(argv[i + 1], "anon") == 0)
				file = 0;
			else {
				fprintf(stderr, "benchfleet-agent: work pagefault: --mode \"%.32s\" "
				    "is not one of file, anon\n", argv[i + 1]);
				return WL_EXIT_USAGE;
			}
			memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(*argv));
			argc -= 2;
			break;
		}
	{
		struct wl_opt o[] = { { "--mb", 1, PAGEFAULT_MAX_MB, &mb, 1 } };

		if ((r = wl_parse("pagefault", argc, argv, o, 1)) != 0)
			return r;
	}
	len = (size_t)mb << 20;
	if (file) {
		if ((fd = mkstemp(path)) < 0 || unlink(path) != 0 || ftruncate(fd, (off_t)len) != 0) {
			perror("benchfleet-agent: pagefault file");
			return 1;
		}
		/* write it once so the faults below are page-cache hits, not I/O */
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			perror("benchfleet-agent: mmap");
			return 1;
		}
		memset(m, 1, len);
		munmap(m, len);
		m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	} else
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		perror("benchfleet-agent: mmap");
		return 1;
	}
	getrusage(RUSAGE_SELF, &r0);
	t0 = wl_now();
	for (off = 0; off < len; off += WL_PAGE) {
		if (file)
			sink += m[off];
		else
			m[off] = 1;
	}
	dt = wl_now() - t0;
	getrusage(RUSAGE_SELF, &r1);
	(void)sink;
	munmap(m, len);
	if (fd >= 0)
		close(fd);
	faults = r1.ru_minflt - r0.ru_minflt + r1.ru_majflt - r0.ru_majflt;
	/* lat_pagefault divides by pages touched; faults is printed beside it */
	printf("pagefault_us: %.4f\n", dt * 1e6 / (double)(len / WL_PAGE));
	printf("faults: %ld\n", faults);
	printf("us_per_fault: %.4f\n", faults > 0 ? dt * 1e6 / (double)faults : 0.0);
	return 0;
}
