/*
 * bstat.c: the statistics of bench/run, through libbenchfleet's stats.h so
 * the benchmarks use the same code as the reports.
 *
 *   bstat sum FILE            n mean sd cov% median p95 p99 min max
 *   bstat cmp FILE_A FILE_B   B vs baseline A: covA% covB% cov_ratio
 *                             meanA meanB diff% ci_lo% ci_hi% p
 *   bstat covci FILE_A FILE_B the 95% interval of cov_ratio: lo hi, the
 *                             2.5th and 97.5th percentiles of 2000
 *                             bootstrap resamples of each side (a fixed
 *                             seed: the same files give the same answer)
 *
 * FILEs hold one number per line; blank lines are skipped.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int
load(const char *path, double **vp, size_t *np)
{
	FILE *f;
	char line[256], *end;
	double *v = NULL, *nv, x;
	size_t n = 0, cap = 0;

	if ((f = fopen(path, "r")) == NULL) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] == '\n' || line[0] == '\0')
			continue;
		x = strtod(line, &end);
		if (end == line || !isfinite(x)) {
			fprintf(stderr, "%s: not a number: %s", path, line);
			fclose(f);
			free(v);
			return -1;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL) {
				fclose(f);
				free(v);
				return -1;
			}
			v = nv;
		}
		v[n++] = x;
	}
	fclose(f);
	*vp = v;
	*np = n;
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of a sorted array. */
static double
quant(const double *v, size_t n, double q)
{
	size_t k;

	if (n == 0)
		return NAN;
	k = (size_t)ceil(q * (double)n);
	if (k < 1)
		k = 1;
	return v[k - 1];
}

/* xorshift64*: the resampling's numbers, seeded, so covci repeats */
static uint64_t
rnd(uint64_t *st)
{
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return *st * 2685821657736338717ULL;
}

/* CoV in percent of n draws from v[0..n) with replacement, into tmp. */
static double
cov_resampled(const double *v, size_t n, double *tmp, uint64_t *st)
{
	struct stats_summary s;
	size_t i;

	for (i = 0; i < n; i++)
		tmp[i] = v[rnd(st) % n];
	return stats_summarize(tmp, n, &s) == 0 ? s.cov : NAN;
}

#define COVCI_B	2000
static int
covci(const double *va, size_t na, const double *vb, size_t nb)
{
	double *ra = NULL, *ta = NULL, *tb = NULL, ca, cb;
	uint64_t st = 0x9e3779b97f4a7c15ULL;
	size_t i, k = 0;
	int r = 1;

	if (na < 2 || nb < 2 || (ra = malloc(COVCI_B * sizeof(*ra))) == NULL ||
	    (ta = malloc(na * sizeof(*ta))) == NULL || (tb = malloc(nb * sizeof(*tb))) == NULL)
		goto out;
	for (i = 0; i < COVCI_B; i++) {
		ca = cov_resampled(va, na, ta, &st);
		cb = cov_resampled(vb, nb, tb, &st);
		if (isfinite(ca) && isfinite(cb) && ca > 0)
			ra[k++] = cb / ca;
	}
	if (k == 0)
		goto out;
	qsort(ra, k, sizeof(*ra), cmp_double);
	printf("%.4f %.4f\n", quant(ra, k, 0.025), quant(ra, k, 0.975));
	r = 0;
out:
	free(ra);
	free(ta);
	free(tb);
	return r;
}

int
main(int argc, char **argv)
{
	struct stats_summary a, b;
	struct stats_compare c;
	double *va = NULL, *vb = NULL;
	size_t na = 0, nb = 0;

	if (argc == 3 && strcmp(argv[1], "sum") == 0) {
		if (load(argv[2], &va, &na) != 0 || stats_summarize(va, na, &a) != 0)
			return 1;
		qsort(va, na, sizeof(*va), cmp_double);
		printf("%zu %.9g %.9g %.4f %.9g %.9g %.9g %.9g %.9g\n", a.n, a.mean, a.sd,
		    a.cov, a.median, quant(va, na, 0.95), quant(va, na, 0.99), a.min, a.max);
		free(va);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "cmp") == 0) {
		if (load(argv[2], &va, &na) != 0 || load(argv[3], &vb, &nb) != 0 ||
		    stats_summarize(va, na, &a) != 0 || stats_summarize(vb, nb, &b) != 0 ||
		    stats_compare(&a, &b, &c) != 0)
			return 1;
		printf("%.4f %.4f %.4f %.9g %.9g %.4f %.4f %.4f %.4g\n", a.cov, b.cov,
		    b.cov / a.cov, a.mean, b.mean, c.pct.pct, c.pct.lo, c.pct.hi, c.welch.p);
		free(va);
		free(vb);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "covci") == 0) {
		int r;

		if (load(argv[2], &va, &na) != 0 || load(argv[3], &vb, &nb) != 0)
			return 1;
		r = covci(va, na, vb, nb);
		free(va);
		free(vb);
		return r;
	}
	fprintf(stderr, "usage: bstat sum FILE | bstat cmp FILE_A FILE_B | "
	    "bstat covci FILE_A FILE_B\n");
	return 2;
}
