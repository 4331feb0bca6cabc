/*
 * hint.c: our HINT-style hierarchical integration, from Gustafson and
 * Snell's description (HINT: a new way to measure computer performance,
 * 1995): bound the area under (1-x)/(1+x) on [0,1] using only that it
 * decreases, on an integer grid of side 2^30 (the INT variant). Each
 * interval's lower bound is its width times f at its right end rounded
 * down, its upper bound the width times f at its left end rounded up; the
 * interval with the largest difference is split in two (a max-heap of
 * intervals), so memory grows with the subintervals. Quality is 1 / (upper
 * - lower) in unit-square terms, QUIPS = quality / seconds to reach it.
 * One trial per working-set size (4 KiB doubling to --max-kb), the best
 * of the repeats within --trial-ms: the QUIPS curve shows the cache and
 * memory regimes. Our mean_quips is the plain mean of the curve's samples,
 * not HINT's Net QUIPS.
 */
#include <stdio.h>
#include <string.h>

#include "wl.h"
#include "wlx.h"

struct hint_rec {
	uint32_t xl, xr;
	uint64_t fl, fr;		/* ceil f(xl), floor f(xr) */
	uint64_t err;			/* (xr - xl) * (fl - fr) */
};

_Static_assert(sizeof(struct hint_rec) == HINT_REC_BYTES, "hint record size");

static uint64_t
hint_f(uint64_t x, int up)
{
	uint64_t num = HINT_SCALE * (HINT_SCALE - x), den = HINT_SCALE + x;

	return up ? (num + den - 1) / den : num / den;
}

static void
hint_set(struct hint_rec *r, uint32_t xl, uint32_t xr, uint64_t fl, uint64_t fr)
{
	r->xl = xl;
	r->xr = xr;
	r->fl = fl;
	r->fr = fr;
	r->err = (uint64_t)(xr - xl) * (fl - fr);
}

static void
hint_down(struct hint_rec *h, int64_t n, int64_t i)
{
	struct hint_rec x = h[i];
	int64_t c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && h[c + 1].err > h[c].err)
			c++;
		if (h[c].err <= x.err)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void
hint_up(struct hint_rec *h, int64_t i)
{
	struct hint_rec x = h[i];
	int64_t p;

	while (i > 0 && h[p = (i - 1) / 2].err < x.err) {
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

int64_t
hint_run(void *buf, int64_t n, uint64_t *lo, uint64_t *hi)
{
	struct hint_rec *h = buf, top;
	uint64_t fml, fmu;
	uint32_t mid;
	int64_t k = 1;

	hint_set(&h[0], 0, (uint32_t)HINT_SCALE, hint_f(0, 1), hint_f(HINT_SCALE, 0));
	*lo = (uint64_t)HINT_SCALE * h[0].fr;
	*hi = (uint64_t)HINT_SCALE * h[0].fl;
	while (k < n && h[0].xr - h[0].xl >= 2 && h[0].err > 0) {
		top = h[0];
		mid = top.xl + (top.xr - top.xl) / 2;
		fml = hint_f(mid, 0);
		fmu = hint_f(mid, 1);
		*lo -= (uint64_t)(top.xr - top.xl) * top.fr;
		*hi -= (uint64_t)(top.xr - top.xl) * top.fl;
		*lo += (uint64_t)(mid - top.xl) * fml + (uint64_t)(top.xr - mid) * top.fr;
		*hi += (uint64_t)(mid - top.xl) * top.fl + (uint64_t)(top.xr - mid) * fmu;
		hint_set(&h[0], top.xl, mid, top.fl, fml);
		hint_down(h, k, 0);
		hint_set(&h[k], mid, top.xr, fmu, top.fr);
		hint_up(h, k);
		k++;
	}
	return k;
}

int
hint_main(int argc, char **argv)
{
	int64_t max_kb = 0, trial_ms = 100, kb, n, made, reps;
	struct wl_opt o[] = {
		{ "--max-kb", 4, (int64_t)1 << 30, &max_kb, 1 },
		{ "--trial-ms", 1, 600000, &trial_ms, 0 },
	};
	double t0, t, best, spent, q, quips, peak = 0, qsum = 0;
	uint64_t lo, hi;
	size_t bytes;
	void *buf;
	int thp, r, ns = 0;

	if ((r = wlx_thp_arg("hint", &argc, argv, &thp)) != 0 ||
	    (r = wl_parse("hint", argc, argv, o, 2)) != 0)
		return r;
	if ((r = wlx_cap("hint", (double)max_kb * 1024)) != 0)
		return r;
	bytes = (size_t)max_kb << 10;
	if ((buf = wlx_alloc(bytes, thp)) == NULL) {
		fprintf(stderr, "benchfleet-agent: hint: out of memory\n");
		return 1;
	}
	memset(buf, 0, bytes);	/* fault it in: the trials time the work only */
	for (kb = 4; kb <= max_kb; kb *= 2) {
		n = (kb << 10) / HINT_REC_BYTES;
		best = 0;
		spent = 0;
		made = 0;
		for (reps = 0; reps < 2 || spent * 1000 < (double)trial_ms; reps++) {
			t0 = wl_now();
			made = hint_run(buf, n, &lo, &hi);
			t = wl_now() - t0;
			spent += t;
			best = reps == 0 || t < best ? t : best;
		}
		if (hi <= lo || best <= 0) {
			fprintf(stderr, "benchfleet-agent: hint: no quality at %lld KiB\n",
			    (long long)kb);
			wlx_free(buf, bytes);
			return 1;
		}
		q = (double)HINT_SCALE * (double)HINT_SCALE / (double)(hi - lo);
		quips = q / best;
		if (kb >= 1024 && kb % 1024 == 0)
			printf("quips_%lldMiB: %.6g\n", (long long)(kb >> 10), quips);
		else
			printf("quips_%lldKiB: %.6g\n", (long long)kb, quips);
		printf("  subintervals %lld quality %.6g seconds %.6g\n", (long long)made, q, best);
		peak = quips > peak ? quips : peak;
		qsum += quips;
		ns++;
	}
	printf("peak_quips: %.6g\nmean_quips: %.6g\n", peak, qsum / ns);
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	wlx_free(buf, bytes);
	return 0;
}
