/*
 * stats-adj.c: the statistics a report adds on top of a comparison: the
 * % change CI of strictly positive quantities from the ratio of means on
 * the log scale (never below -100%), Holm-Bonferroni adjustment of a family
 * of p-values, and the bootstrap CI of a median (deterministic seed).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "stats.h"

int
stats_pct_log(const struct stats_summary *a, const struct stats_summary *b, double level,
    struct stats_pct *out)
{
	double ln, va, vb, se, nu, t, lo, hi;
	int r;

	if (a == NULL || b == NULL || out == NULL || !(level > 0 && level < 1))
		return BF_ERR_INVALID;
	if (a->n == 0 || b->n == 0 || !(a->mean > 0) || !(b->mean > 0))
		return BF_ERR_INVALID;
	out->pct = 100 * ((b->mean - a->mean) / a->mean);
	out->lo = out->hi = NAN;
	out->unbounded = 0;
	if (a->n < 2 || b->n < 2 || !isfinite(a->sd) || !isfinite(b->sd))
		return 0;
	/* log1p of the exact relative difference: a 1e-12 change keeps its
	 * digits; sd/mean first, so sds near 1e+-160 do not overflow */
	ln = log1p((b->mean - a->mean) / a->mean);
	va = (a->sd / a->mean) * (a->sd / a->mean) / (double)a->n;
	vb = (b->sd / b->mean) * (b->sd / b->mean) / (double)b->n;
	se = sqrt(va + vb);
	if (se == 0) {
		lo = hi = ln;
	} else {
		nu = (va + vb) * (va + vb) / (va * va / (double)(a->n - 1) +
		    vb * vb / (double)(b->n - 1));
		if ((r = stats_t_quantile(0.5 + level / 2, nu, &t)) != 0)
			return r;
		lo = ln - t * se;
		hi = ln + t * se;
	}
	out->lo = 100 * expm1(lo);
	out->hi = 100 * expm1(hi);
	return 0;
}

/* Index sort of p-values, ascending; ties keep their order. */
struct holm_item {
	double p;
	size_t i;
};

static int
cmp_holm(const void *x, const void *y)
{
	const struct holm_item *a = x, *b = y;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

int
stats_holm(const double *p, size_t n, double *adj)
{
	struct holm_item *it;
	double run = 0, v;
	size_t k;

	if ((n > 0 && (p == NULL || adj == NULL)) || n > STATS_MAX_SAMPLES)
		return n > STATS_MAX_SAMPLES ? BF_ERR_TOOBIG : BF_ERR_INVALID;
	for (k = 0; k < n; k++)
		if (!(p[k] >= 0 && p[k] <= 1))
			return BF_ERR_INVALID;
	if (n == 0)
		return 0;
	if ((it = malloc(n * sizeof(*it))) == NULL)
		return BF_ERR_ALLOC;
	for (k = 0; k < n; k++) {
		it[k].p = p[k];
		it[k].i = k;
	}
	qsort(it, n, sizeof(*it), cmp_holm);
	/* adjusted p_(k) = max over j <= k of min(1, (n - j) p_(j)): monotone */
	for (k = 0; k < n; k++) {
		v = (double)(n - k) * it[k].p;
		if (v > 1)
			v = 1;
		if (v > run)
			run = v;
		adj[it[k].i] = run;
	}
	free(it);
	return 0;
}

/* splitmix64: a small, seedable generator; the same seed, the same CI. */
static uint64_t
boot_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int
cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Median of a resample of sorted v[0..n): n indices drawn, counted in
 * cnt[0..n) (no sort: O(n) a resample), the middle order statistics read
 * off the counts. */
static double
boot_median(const double *v, size_t n, unsigned *cnt, uint64_t *seed)
{
	size_t i, k = (n - 1) / 2, acc = 0, lo = 0;
	int have_lo = 0;

	memset(cnt, 0, n * sizeof(*cnt));
	for (i = 0; i < n; i++)
		cnt[boot_next(seed) % n]++;
	for (i = 0; i < n; i++) {
		acc += cnt[i];
		if (!have_lo && acc > k) {
			lo = i;
			have_lo = 1;
		}
		if (acc > n / 2)
			break;
	}
	return n % 2 ? v[lo] : (v[lo] + v[i]) / 2;
}

/* The percentile interval of q[0..nq) (sorted here), linear between order
 * statistics (numpy's default). */
static void
pct_interval(double *q, size_t nq, double level, double *lo, double *hi)
{
	double pos[2] = { (1 - level) / 2, (1 + level) / 2 }, *out[2] = { lo, hi }, h;
	size_t k, f;

	qsort(q, nq, sizeof(*q), cmp_dbl);
	for (k = 0; k < 2; k++) {
		h = pos[k] * (double)(nq - 1);
		f = (size_t)floor(h);
		*out[k] = f + 1 < nq ? q[f] + (h - (double)f) * (q[f + 1] - q[f]) : q[f];
	}
}

int
stats_boot_median(const double *a, size_t na, const double *b, size_t nb, size_t nboot,
    uint64_t seed, double level, struct stats_boot *out)
{
	double *sa = NULL, *sb = NULL, *qa = NULL, *qp = NULL, ma, mb;
	unsigned *w = NULL;
	size_t i, nw = na > nb ? na : nb;
	int r = 0, unb = 0;

	if (out == NULL || a == NULL || na == 0 || nboot < 2 || !(level > 0 && level < 1) ||
	    (nb > 0 && b == NULL))
		return BF_ERR_INVALID;
	if (na > STATS_MAX_SAMPLES || nb > STATS_MAX_SAMPLES || nboot > STATS_MAX_SAMPLES)
		return BF_ERR_TOOBIG;
	out->lo = out->hi = out->pct_lo = out->pct_hi = NAN;
	out->pct_unbounded = 0;
	if ((w = malloc(nw * sizeof(*w))) == NULL || (qa = malloc(nboot * sizeof(*qa))) == NULL ||
	    (qp = malloc(nboot * sizeof(*qp))) == NULL ||
	    (sa = malloc(na * sizeof(*sa))) == NULL ||
	    (sb = malloc((nb > 0 ? nb : 1) * sizeof(*sb))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	memcpy(sa, a, na * sizeof(*sa));
	qsort(sa, na, sizeof(*sa), cmp_dbl);
	if (nb > 0) {
		memcpy(sb, b, nb * sizeof(*sb));
		qsort(sb, nb, sizeof(*sb), cmp_dbl);
	}
	for (i = 0; i < nboot; i++) {
		ma = boot_median(sa, na, w, &seed);
		qa[i] = ma;
		if (nb == 0)
			continue;
		mb = boot_median(sb, nb, w, &seed);
		if (ma == 0)
			unb = 1;
		else
			qp[i] = 100 * ((mb - ma) / fabs(ma));
	}
	if (na >= 2)
		pct_interval(qa, nboot, level, &out->lo, &out->hi);
	if (nb > 0 && unb)
		out->pct_unbounded = 1;
	else if (nb > 0 && na >= 2 && nb >= 2)
		pct_interval(qp, nboot, level, &out->pct_lo, &out->pct_hi);
out:
	free(w);
	free(sa);
	free(sb);
	free(qa);
	free(qp);
	return r;
}
