/*
 * stats.c: summaries, Student t, Welch, Fieller, Mann-Whitney and the
 * two-level boots x iterations analysis. See stats.h for the conventions
 * (NAN for undefined statistics, BF_ERR_INVALID for malformed input).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "stats.h"

#define CF_EPS		1e-15
#define CF_TINY		1e-300
#define CF_MAXIT	1000000
/*
 * Beyond this many dof the continued fraction needs O(sqrt(nu)) steps near
 * the centre and loses precision (1e-12 at nu = 1e6); the expansion
 * F(t) = Phi(t) - phi(t) (t^3 + t) / (4 nu) + O(nu^-2) is good to ~1e-13.
 */
#define T_NU_ASYM	1e6
/* AUTO is exact without ties when both n <= 10 (the notes) or, as scipy's
 * "auto", the smaller n <= 8, the larger then up to MW_EXACT_SCIPY_MAX
 * (the DP runs over the smaller sample: O(n1^2 n2^2) time, 16 n1 n2^2
 * bytes, 5 MB and 6 ms at 8 x 200); EXACT itself stops at 50 a side. */
#define MW_EXACT_AUTO	10
#define MW_EXACT_SCIPY	8
#define MW_EXACT_MAX	50
#define MW_EXACT_SCIPY_MAX	200

static int
all_finite(const double *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return 0;
	return 1;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
stats_summarize(const double *v, size_t n, struct stats_summary *out)
{
	struct stats_summary s;
	double *sorted = NULL, mean = 0, m2 = 0, d, t, x, scale;
	size_t i;
	int r;

	s.n = n;
	s.mean = s.var = s.sd = s.cov = s.min = s.max = s.median = NAN;
	s.ci_lo = s.ci_hi = NAN;
	if (out == NULL || (v == NULL && n > 0)) {
		r = BF_ERR_INVALID;
		goto out;
	}
	if (n > STATS_MAX_SAMPLES) {
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if (!all_finite(v, n)) {
		r = BF_ERR_INVALID;
		goto out;
	}
	if (n == 0) {
		*out = s;
		r = 0;
		goto out;
	}
	if ((sorted = malloc(n * sizeof(*sorted))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	/* Scaled by the largest magnitude, so that squares neither overflow
	 * (an sd of 5e158 has a variance past DBL_MAX) nor underflow (values
	 * of 1e-160 would square into subnormals): every x / scale is in
	 * [-1, 1]. A power of two keeps the scaling exact. */
	for (i = 0, scale = 0; i < n; i++) {
		sorted[i] = v[i];
		if (fabs(v[i]) > scale)
			scale = fabs(v[i]);
	}
	scale = scale > 0 ? exp2(fmin(ceil(log2(scale)), 1023)) : 1;
	/* Welford: no catastrophic cancellation for large, tightly spread values. */
	for (i = 0; i < n; i++) {
		x = v[i] / scale;
		d = x - mean;
		mean += d / (double)(i + 1);
		m2 += d * (x - mean);
	}
	mean *= scale;
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	s.mean = mean;
	s.min = sorted[0];
	s.max = sorted[n - 1];
	s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	if (n >= 2) {
		s.sd = sqrt(m2 / (double)(n - 1)) * scale;
		s.var = s.sd * s.sd;	/* +inf past ~1.3e154: use sd */
		if (mean != 0)
			s.cov = 100 * s.sd / fabs(mean);
		if ((r = stats_t_quantile(0.975, (double)(n - 1), &t)) != 0)
			goto out;
		d = t * s.sd / sqrt((double)n);
		s.ci_lo = mean - d;
		s.ci_hi = mean + d;
	}
	*out = s;
	r = 0;
out:
	free(sorted);
	return r;
}

/* Modified Lentz evaluation of the continued fraction for I_x(a,b)
 * (Numerical Recipes 6.4). NAN if it does not converge. */
static double
betacf(double a, double b, double x)
{
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d, h, aa, del;
	int m, m2;

	d = 1 - qab * x / qap;
	if (fabs(d) < CF_TINY)
		d = CF_TINY;
	d = 1 / d;
	h = d;
	for (m = 1; m <= CF_MAXIT; m++) {
		m2 = 2 * m;
		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < CF_TINY)
			d = CF_TINY;
		c = 1 + aa / c;
		if (fabs(c) < CF_TINY)
			c = CF_TINY;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < CF_TINY)
			d = CF_TINY;
		c = 1 + aa / c;
		if (fabs(c) < CF_TINY)
			c = CF_TINY;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < CF_EPS)
			return h;
	}
	return NAN;
}

/* Stirling remainder lgamma(x) - ((x - 1/2) log x - x + log(2 pi)/2),
 * good to ~1e-16 for x >= LBETA_BIG. */
#define LBETA_BIG	20
static double
stirling_corr(double x)
{
	double x2 = 1 / (x * x);

	return (1.0 / 12 - x2 * (1.0 / 360 - x2 * (1.0 / 1260 - x2 / 1680))) / x;
}

/*
 * log B(a, b). lgamma(a + b) - lgamma(a) - lgamma(b) loses ~|lgamma(a)| *
 * 1e-16 when a is large (1e-10 at a = 1e5), so for large arguments the big
 * Stirling terms are cancelled analytically with log1p.
 */
static double
lbeta(double a, double b)
{
	double big = a > b ? a : b, small = a > b ? b : a, s = big + small;

	if (small >= LBETA_BIG)
		return -(big - 0.5) * log1p(small / big) - small * log1p(big / small) -
		    0.5 * log(small) + 0.5 * log(2 * M_PI) + stirling_corr(big) +
		    stirling_corr(small) - stirling_corr(s);
	if (big >= LBETA_BIG)
		return lgamma(small) - (big - 0.5) * log1p(small / big) -
		    small * log(s) + small + stirling_corr(big) - stirling_corr(s);
	return lgamma(a) + lgamma(b) - lgamma(s);
}

/*
 * I_x(a,b) given x, y = 1 - x and their logs lx, ly, so that callers that
 * know them more precisely than log(x) of a rounded x keep that precision:
 * for the t tail with large nu, a * log(x) would amplify the rounding of
 * x = nu/(nu+t^2) by nu/2.
 */
static double
ibeta_log(double a, double b, double x, double y, double lx, double ly)
{
	double lbt;

	if (x <= 0)
		return 0;
	if (y <= 0)
		return 1;
	lbt = a * lx + b * ly - lbeta(a, b);
	/* Symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges fast. */
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * betacf(a, b, x) / a;
	return 1 - exp(lbt) * betacf(b, a, y) / b;
}

static double
ibeta(double a, double b, double x, double y)
{
	if (x <= 0 || y <= 0)
		return ibeta_log(a, b, x, y, 0, 0);
	return ibeta_log(a, b, x, y, log(x), log(y));
}

int
stats_incbeta(double a, double b, double x, double *out)
{
	double v;

	if (out == NULL || !isfinite(a) || !isfinite(b) || !(a > 0) || !(b > 0) ||
	    !(x >= 0 && x <= 1))
		return BF_ERR_INVALID;
	v = ibeta(a, b, x, 1 - x);
	if (isnan(v))
		return BF_ERR_RANGE;
	/* 1 - (tiny) can round a hair past the ends. */
	*out = v < 0 ? 0 : v > 1 ? 1 : v;
	return 0;
}

/* P(|T| >= |t|); NAN if the fraction failed. */
static double
t_p2(double t, double nu)
{
	double q, a = fabs(t);

	if (isinf(nu))
		return erfc(a / M_SQRT2);
	if (nu > T_NU_ASYM) {
		q = erfc(a / M_SQRT2);
		/* phi(t) underflows long before t^3 overflows. */
		if (a < 100)
			q += 2 * exp(-a * a / 2) / sqrt(2 * M_PI) * (a * a * a + a) / (4 * nu);
		return q;
	}
	/* q = t^2/nu; x = 1/(1+q), y = q/(1+q), with logs by log1p. */
	q = (t / sqrt(nu)) * (t / sqrt(nu));
	if (q == 0)
		return 1;
	if (!(q < 1e300)) {
		/* x = 1/(1+q) underflows, but for tiny nu the tail x^(nu/2) does
		 * not: work in logs, x -> 0 where the fraction is 1. */
		q = 2 * (log(a) - 0.5 * log(nu));
		return exp(-q * nu / 2 - lbeta(nu / 2, 0.5)) / (nu / 2);
	}
	return ibeta_log(nu / 2, 0.5, 1 / (1 + q), q / (1 + q), -log1p(q),
	    log(q) - log1p(q));
}

static int
t_args_ok(double t, double nu)
{
	return !isnan(t) && !isnan(nu) && nu > 0;
}

int
stats_t_p2(double t, double nu, double *out)
{
	double p;

	if (out == NULL || !t_args_ok(t, nu))
		return BF_ERR_INVALID;
	if (isnan(p = t_p2(t, nu)))
		return BF_ERR_RANGE;
	*out = p > 1 ? 1 : p;
	return 0;
}

int
stats_t_cdf(double t, double nu, double *out)
{
	double p;

	if (out == NULL || !t_args_ok(t, nu))
		return BF_ERR_INVALID;
	if (isnan(p = t_p2(t, nu)))
		return BF_ERR_RANGE;
	p = p > 1 ? 0.5 : p / 2;
	*out = t > 0 ? 1 - p : p;
	return 0;
}

/*
 * Bisection for the t >= 0 with upper tail tail(t) = q, 0 < q < 1/2. The
 * tail is compared directly (not 1 - tail), so no precision is lost for
 * p near 1. Bisection, not a series: the series expansions are poor for
 * nu <= 3, and ~60 steps are cheap. Returns NAN if the tail failed or the
 * quantile is out of range (nu = 0.01, p = 1 - 1e-7).
 */
static double
tail_inverse(double q, double nu, int normal)
{
	double lo = 0, hi = 1, mid, p;
	int i;

	for (;;) {
		p = normal ? stats_norm_sf(hi) : t_p2(hi, nu) / 2;
		if (isnan(p))
			return NAN;
		if (p < q)
			break;
		if (hi > 1e300)
			return NAN;	/* the quantile is beyond any double */
		lo = hi;
		hi *= 2;
	}
	for (i = 0; i < 2200; i++) {
		mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		p = normal ? stats_norm_sf(mid) : t_p2(mid, nu) / 2;
		if (isnan(p))
			return NAN;
		if (p > q)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

static int
quantile(double p, double nu, int normal, double *out)
{
	double q, t;

	if (out == NULL || !(p > 0 && p < 1) || (!normal && !(nu > 0)))
		return BF_ERR_INVALID;
	if (p == 0.5) {
		*out = 0;
		return 0;
	}
	q = p > 0.5 ? 1 - p : p;	/* exact for p in [0.5, 1] */
	if (isnan(t = tail_inverse(q, nu, normal)))
		return BF_ERR_RANGE;
	*out = p > 0.5 ? t : -t;
	return 0;
}

int
stats_t_quantile(double p, double nu, double *out)
{
	return quantile(p, nu, isinf(nu), out);
}

double
stats_norm_cdf(double z)
{
	return erfc(-z / M_SQRT2) / 2;
}

double
stats_norm_sf(double z)
{
	return erfc(z / M_SQRT2) / 2;
}

int
stats_norm_quantile(double p, double *out)
{
	return quantile(p, 0, 1, out);
}

static int
summary_ok(const struct stats_summary *s)
{
	return s != NULL && !isnan(s->mean) && s->n >= 2 && isfinite(s->sd) &&
	    s->sd >= 0;
}

int
stats_welch(const struct stats_summary *a, const struct stats_summary *b,
    struct stats_welch *out)
{
	struct stats_welch w = { NAN, NAN, NAN };
	double va, vb, se2, c, diff;
	int r;

	if (out == NULL || a == NULL || b == NULL)
		return BF_ERR_INVALID;
	if (!summary_ok(a) || !summary_ok(b)) {
		*out = w;
		return 0;
	}
	/* In units of c, the larger sd: the variances of sds near 1e160 (or
	 * 1e-160) would overflow (underflow); t and nu do not depend on c. */
	c = a->sd > b->sd ? a->sd : b->sd;
	if (c > 0) {
		va = (a->sd / c) * (a->sd / c) / (double)a->n;
		vb = (b->sd / c) * (b->sd / c) / (double)b->n;
		se2 = va + vb;
		diff = b->mean - a->mean;
		diff = isfinite(diff) ? diff / c : b->mean / c - a->mean / c;
		w.t = diff / sqrt(se2);
		w.nu = se2 * se2 / (va * va / (double)(a->n - 1) +
		    vb * vb / (double)(b->n - 1));
		if ((r = stats_t_p2(w.t, w.nu, &w.p)) != 0)
			return r;
	}
	*out = w;
	return 0;
}

int
stats_fieller(const struct stats_summary *a, const struct stats_summary *b,
    double nu, double level, struct stats_pct *out)
{
	struct stats_pct p = { NAN, NAN, NAN, 0 };
	double ya, rho, dr, va, vb, t = 0, g, h;
	int r;

	if (out == NULL || a == NULL || b == NULL || !(level > 0 && level < 1))
		return BF_ERR_INVALID;
	if (a->n == 0 || b->n == 0 || isnan(a->mean) || isnan(b->mean) ||
	    a->mean == 0) {
		p.unbounded = a->n > 0 && a->mean == 0;
		*out = p;
		return 0;
	}
	ya = a->mean;
	rho = b->mean / ya;
	/* (mB - mA)/mA, not rho - 1: the subtraction is exact when the means are
	 * close (Sterbenz), so a 1e-8 % change keeps its digits. */
	dr = (b->mean - ya) / ya;
	p.pct = 100 * dr;
	if (!summary_ok(a) || !summary_ok(b)) {
		*out = p;
		return 0;
	}
	/* Relative to ya: va and vb are the squared standard errors over ya^2,
	 * so sds near 1e160 (or 1e-160) neither overflow nor underflow. */
	va = (a->sd / ya) * (a->sd / ya) / (double)a->n;
	vb = (b->sd / ya) * (b->sd / ya) / (double)b->n;
	if (a->sd > 0 || b->sd > 0) {
		if (isnan(nu) || !(nu > 0))
			return BF_ERR_INVALID;
		if ((r = stats_t_quantile((1 + level) / 2, nu, &t)) != 0)
			return r;
	}
	g = t * t * va;
	if (!(g < 1)) {
		p.unbounded = 1;
		*out = p;
		return 0;
	}
	h = fabs(t) * sqrt(vb * (1 - g) + rho * rho * va);
	/* (rho -/+ h)/(1 - g) - 1, rearranged around dr for the same reason. */
	p.lo = 100 * ((dr + g) - h) / (1 - g);
	p.hi = 100 * ((dr + g) + h) / (1 - g);
	*out = p;
	return 0;
}

int
stats_compare(const struct stats_summary *a, const struct stats_summary *b,
    struct stats_compare *out)
{
	struct stats_compare c;
	int r;

	memset(&c, 0, sizeof(c));
	if (out == NULL)
		return BF_ERR_INVALID;
	if ((r = stats_welch(a, b, &c.welch)) != 0)
		return r;
	if ((r = stats_fieller(a, b, c.welch.nu, 0.95, &c.pct)) != 0) {
		/* nu is NAN when the Welch test is undefined: CI n/a, not an error. */
		if (r != BF_ERR_INVALID || a == NULL || b == NULL)
			return r;
		if ((r = stats_fieller(a, b, 1, 0.95, &c.pct)) != 0)
			return r;
		c.pct.lo = c.pct.hi = NAN;
		c.pct.unbounded = 0;
	}
	c.significant = c.welch.p < 0.05 && !c.pct.unbounded &&
	    (c.pct.lo > 0 || c.pct.hi < 0);
	*out = c;
	return 0;
}

/* ln |m1 / m0| for scaled means: log1p of the exact difference when the
 * scales agree, so that a 1e-9 effect keeps its digits. */
static double
ln_ratio(double m0, int e0, double m1, int e1)
{
	if (e0 == e1)
		return log1p((fabs(m1) - fabs(m0)) / fabs(m0));
	return log(fabs(m1) / fabs(m0)) + (double)(e1 - e0) * M_LN2;
}

/* Delta-method variance of ln |mean| and its share of the dof sum. */
static void
ln_var(const struct stats_summary *s, double *v, double *v2)
{
	*v = s->var / ((double)s->n * s->mean * s->mean);
	*v2 = *v * *v / (double)(s->n - 1);
}

/* Welch-Satterthwaite over groups g[0..k), or sum(n) - k when every
 * variance is 0 (the CI is then the point whatever the dof). */
static void
ws_dof(const struct stats_summary *g, size_t k, double *se, double *nu)
{
	double v, v2, sv = 0, sv2 = 0, nn = 0;
	size_t i;

	for (i = 0; i < k; i++) {
		ln_var(&g[i], &v, &v2);
		sv += v;
		sv2 += v2;
		nn += (double)g[i].n;
	}
	*se = sqrt(sv);
	*nu = sv2 > 0 ? sv * sv / sv2 : nn - (double)k;
}

int
stats_effect_diff(const struct stats_summary g[4], const int *scale,
    struct stats_effect *out)
{
	struct stats_effect e = { STATS_EFFECT_OK, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN };
	int sc[4] = { 0, 0, 0, 0 }, ok_a, ok_b;
	size_t i;

	if (g == NULL || out == NULL)
		return BF_ERR_INVALID;
	for (i = 0; i < 4; i++) {
		if (scale != NULL)
			sc[i] = scale[i];
		if (g[i].n > 0 && !isfinite(g[i].mean))
			return BF_ERR_INVALID;
	}
	*out = e;
	for (i = 0; i < 4; i++)
		if (g[i].n == 0) {
			out->undefined = STATS_EFFECT_EMPTY;
			return 0;
		}
	for (i = 0; i < 4; i++)
		if (g[i].mean == 0) {
			out->undefined = STATS_EFFECT_ZERO;
			return 0;
		}
	if ((g[0].mean < 0) != (g[1].mean < 0)) {
		out->undefined = STATS_EFFECT_SIGN_A;
		return 0;
	}
	if ((g[2].mean < 0) != (g[3].mean < 0)) {
		out->undefined = STATS_EFFECT_SIGN_B;
		return 0;
	}
	e.ln_a = ln_ratio(g[0].mean, sc[0], g[1].mean, sc[1]);
	e.ln_b = ln_ratio(g[2].mean, sc[2], g[3].mean, sc[3]);
	e.ln_d = e.ln_b - e.ln_a;
	ok_a = summary_ok(&g[0]) && summary_ok(&g[1]);
	ok_b = summary_ok(&g[2]) && summary_ok(&g[3]);
	if (ok_a)
		ws_dof(&g[0], 2, &e.se_a, &e.nu_a);
	if (ok_b)
		ws_dof(&g[2], 2, &e.se_b, &e.nu_b);
	if (ok_a && ok_b)
		ws_dof(g, 4, &e.se_d, &e.nu_d);
	*out = e;
	return 0;
}

int
stats_log_ci(double ln, double se, double nu, double level, double *lo, double *hi)
{
	double t;
	int r;

	if (lo == NULL || hi == NULL || !(level > 0 && level < 1))
		return BF_ERR_INVALID;
	*lo = *hi = NAN;
	if (isnan(ln) || isnan(se) || isnan(nu) || se < 0)
		return 0;
	if (se == 0) {
		*lo = *hi = exp(ln);
		return 0;
	}
	if (!(nu > 0))
		return 0;
	if ((r = stats_t_quantile((1 + level) / 2, nu, &t)) != 0)
		return r;
	*lo = exp(ln - t * se);
	*hi = exp(ln + t * se);
	return 0;
}

struct mw_item {
	double v;
	int from_a;
};

static int
cmp_mw(const void *x, const void *y)
{
	return cmp_double(&((const struct mw_item *)x)->v,
	    &((const struct mw_item *)y)->v);
}

/*
 * P(U >= u) under H0 for sizes n1, n2 without ties. The count of
 * arrangements f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u) only adds, so
 * doubles stay accurate far past 2^53 (relative error ~1e-15).
 */
static int
mw_exact_sf(size_t n1, size_t n2, double u, double *out)
{
	double *prev = NULL, *cur = NULL, *tmp, total = 0, tail = 0;
	size_t len = n1 * n2 + 1, i, j, k, ustart;
	int r;

	prev = calloc((n2 + 1) * len, sizeof(*prev));
	cur = calloc((n2 + 1) * len, sizeof(*cur));
	if (prev == NULL || cur == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	/* i = 0: one arrangement with U = 0 for every j. */
	for (j = 0; j <= n2; j++)
		prev[j * len] = 1;
	for (i = 1; i <= n1; i++) {
		memset(cur, 0, (n2 + 1) * len * sizeof(*cur));
		cur[0] = 1;	/* j = 0 */
		for (j = 1; j <= n2; j++)
			for (k = 0; k <= i * j; k++)
				cur[j * len + k] = (k >= j ? prev[j * len + k - j] : 0) +
				    cur[(j - 1) * len + k];
		tmp = prev;
		prev = cur;
		cur = tmp;
	}
	ustart = u <= 0 ? 0 : (size_t)ceil(u);
	for (k = 0; k < len; k++) {
		total += prev[n2 * len + k];
		if (k >= ustart)
			tail += prev[n2 * len + k];
	}
	*out = tail / total;
	r = 0;
out:
	free(prev);
	free(cur);
	return r;
}

int
stats_mannwhitney(const double *a, size_t na, const double *b, size_t nb,
    enum stats_mw_method method, struct stats_mw *out)
{
	struct stats_mw m = { NAN, NAN, 0 };
	struct mw_item *it = NULL;
	size_t n, i, j, t;
	double ra = 0, rank, ties = 0, u1, u2, umax, mu, s, z, p = NAN;
	int r, tied = 0;

	if (out == NULL || a == NULL || b == NULL || na == 0 || nb == 0 ||
	    (method != STATS_MW_AUTO && method != STATS_MW_EXACT &&
	    method != STATS_MW_ASYMPTOTIC)) {
		r = BF_ERR_INVALID;
		goto out;
	}
	if (na > STATS_MAX_SAMPLES || nb > STATS_MAX_SAMPLES) {
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if (!all_finite(a, na) || !all_finite(b, nb)) {
		r = BF_ERR_INVALID;
		goto out;
	}
	n = na + nb;
	if ((it = malloc(n * sizeof(*it))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < na; i++)
		it[i] = (struct mw_item){ a[i], 1 };
	for (i = 0; i < nb; i++)
		it[na + i] = (struct mw_item){ b[i], 0 };
	qsort(it, n, sizeof(*it), cmp_mw);
	/* Mid-ranks: a run of t ties at 1-based ranks i+1..i+t gets i + (t+1)/2. */
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && it[j].v == it[i].v; j++)
			;
		t = j - i;
		rank = (double)i + ((double)t + 1) / 2;
		if (t > 1) {
			tied = 1;
			ties += (double)t * t * t - (double)t;
		}
		for (t = i; t < j; t++)
			if (it[t].from_a)
				ra += rank;
	}
	u1 = ra - (double)na * ((double)na + 1) / 2;
	u2 = (double)na * nb - u1;
	umax = u1 > u2 ? u1 : u2;
	m.u = u1;
	if (method == STATS_MW_EXACT && (tied || na > MW_EXACT_MAX || nb > MW_EXACT_MAX)) {
		r = BF_ERR_INVALID;
		goto out;
	}
	if (method == STATS_MW_EXACT || (method == STATS_MW_AUTO && !tied &&
	    ((na <= MW_EXACT_AUTO && nb <= MW_EXACT_AUTO) ||
	    (na <= MW_EXACT_SCIPY && nb <= MW_EXACT_SCIPY_MAX) ||
	    (nb <= MW_EXACT_SCIPY && na <= MW_EXACT_SCIPY_MAX)))) {
		/* U's null distribution is the same for (n1, n2) and (n2, n1):
		 * the DP goes over the smaller one */
		if ((r = mw_exact_sf(na < nb ? na : nb, na < nb ? nb : na, umax, &p)) != 0)
			goto out;
		m.exact = 1;
		m.p = 2 * p;
	} else {
		mu = (double)na * nb / 2;
		s = (double)na * nb / 12 * (((double)n + 1) -
		    ties / ((double)n * ((double)n - 1)));
		/* All values tied: no evidence of a shift; p = 1 as scipy gives. */
		m.p = 1;
		if (s > 0) {
			z = (umax - mu - 0.5) / sqrt(s);
			m.p = 2 * stats_norm_sf(z);
		}
	}
	if (m.p > 1)
		m.p = 1;
	*out = m;
	r = 0;
out:
	free(it);
	return r;
}

struct tl_item {
	int boot;
	double v;
};

static int
cmp_tl(const void *x, const void *y)
{
	const struct tl_item *p = x, *q = y;

	return (p->boot > q->boot) - (p->boot < q->boot);
}

int
stats_twolevel(const double *v, const int *boot, size_t n,
    struct stats_twolevel *out)
{
	struct stats_twolevel tl;
	struct tl_item *it = NULL;
	double *means = NULL, mean, d, ssw = 0, inv_m = 0;
	size_t i, j, k, mi, dfw = 0;
	int r;

	memset(&tl, 0, sizeof(tl));
	if (out == NULL || v == NULL || boot == NULL || n == 0) {
		r = BF_ERR_INVALID;
		goto out;
	}
	if (n > STATS_MAX_SAMPLES) {
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if (!all_finite(v, n)) {
		r = BF_ERR_INVALID;
		goto out;
	}
	it = malloc(n * sizeof(*it));
	means = malloc(n * sizeof(*means));
	if (it == NULL || means == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++)
		it[i] = (struct tl_item){ boot[i], v[i] };
	qsort(it, n, sizeof(*it), cmp_tl);
	tl.n = n;
	tl.m_min = SIZE_MAX;
	for (i = 0, k = 0; i < n; i = j, k++) {
		for (j = i, mean = 0; j < n && it[j].boot == it[i].boot; j++) {
			d = it[j].v - mean;
			mean += d / (double)(j - i + 1);
			ssw += d * (it[j].v - mean);
		}
		mi = j - i;
		means[k] = mean;
		dfw += mi - 1;
		inv_m += 1 / (double)mi;
		if (mi < tl.m_min)
			tl.m_min = mi;
		if (mi > tl.m_max)
			tl.m_max = mi;
	}
	tl.nboots = k;
	tl.m_h = (double)k / inv_m;
	tl.sw2 = dfw > 0 ? ssw / (double)dfw : NAN;
	if ((r = stats_summarize(means, k, &tl.bm)) != 0)
		goto out;
	tl.sb2 = tl.bm.var;
	tl.sigma_boot2 = tl.sb2 - tl.sw2 / tl.m_h;
	if (tl.sigma_boot2 < 0)
		tl.sigma_boot2 = 0;
	*out = tl;
	r = 0;
out:
	free(it);
	free(means);
	return r;
}

int
stats_boot_means(const double *v, const int *boot, size_t n, double *means,
    size_t *kp)
{
	struct tl_item *it = NULL;
	double mean;
	size_t i, j, k;
	int r;

	if (v == NULL || boot == NULL || means == NULL || kp == NULL || n == 0) {
		r = BF_ERR_INVALID;
		goto out;
	}
	if (n > STATS_MAX_SAMPLES) {
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if (!all_finite(v, n)) {
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((it = malloc(n * sizeof(*it))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++)
		it[i] = (struct tl_item){ boot[i], v[i] };
	qsort(it, n, sizeof(*it), cmp_tl);
	/* The same order and recurrence as stats_twolevel, so the means agree. */
	for (i = 0, k = 0; i < n; i = j, k++) {
		for (j = i, mean = 0; j < n && it[j].boot == it[i].boot; j++)
			mean += (it[j].v - mean) / (double)(j - i + 1);
		means[k] = mean;
	}
	*kp = k;
	r = 0;
out:
	free(it);
	return r;
}

int
stats_optimal_iters(double cost_ratio, double sw2, double sigma_boot2,
    size_t *out)
{
	double m;

	if (out == NULL || !isfinite(cost_ratio) || !(cost_ratio > 0) ||
	    !isfinite(sw2) || !(sw2 >= 0) || !isfinite(sigma_boot2) ||
	    !(sigma_boot2 >= 0))
		return BF_ERR_INVALID;
	if (sigma_boot2 == 0)
		m = BF_MAX_ITERATIONS;
	else
		m = ceil(sqrt(cost_ratio * sw2 / sigma_boot2));
	if (!(m >= 1))
		m = 1;
	if (m > BF_MAX_ITERATIONS)
		m = BF_MAX_ITERATIONS;
	*out = (size_t)m;
	return 0;
}
