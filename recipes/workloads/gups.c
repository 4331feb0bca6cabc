/*
 * gups.c: HPCC RandomAccess-style updates: table of 2^log2 64-bit words,
 * U updates table[r & mask] ^= r with r from a random stream. Reported as
 * giga-updates per second by the standard definition, GUPS = U / t / 1e9
 * (some papers, and our notes, use 2·U/t/1e9, counting the read and the
 * write: multiply ours by 2 to compare with those).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "wl.h"

int
gups_main(int argc, char **argv)
{
	int64_t lg = 0, updates = 0, i;
	struct wl_opt o[] = {
		{ "--log2", 10, 36, &lg, 1 },
		{ "--updates", 1, (int64_t)1 << 40, &updates, 1 },
	};
	uint64_t *t, mask, s = 0x1234567, x;
	size_t n, k;
	double t0, dt;
	int r;

	if ((r = wl_parse("gups", argc, argv, o, 2)) != 0)
		return r;
	n = (size_t)1 << lg;
	mask = n - 1;
	t = mmap(NULL, n * sizeof(*t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		perror("benchfleet-agent: mmap");
		return 1;
	}
	for (k = 0; k < n; k++)
		t[k] = k;
	t0 = wl_now();
	for (i = 0; i < updates; i++) {
		x = wl_rand(&s);
		t[x & mask] ^= x;
	}
	dt = wl_now() - t0;
	munmap(t, n * sizeof(*t));
	printf("gups: %.6f\n", (double)updates / dt / 1e9);
	printf("seconds: %.6f\n", dt);
	return 0;
}
