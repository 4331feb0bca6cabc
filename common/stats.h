/*
 * stats.h: the statistics behind every benchfleet comparison. Pure C (libc
 * and libm): summaries (Welford), the regularised incomplete beta, Student t
 * CDF and quantiles, Welch's t-test, the percent change with a Fieller CI,
 * Mann-Whitney U, and the two-level (boots x iterations) analysis of
 * Kalibera & Jones. Checked against scipy in tests/unit/test_stats.c and,
 * on the vectors of tests/stats/vectors.json, tests/unit/test_stats_vectors.c.
 *
 * Conventions. Functions return 0 or a negative BF_ERR_* code:
 * BF_ERR_INVALID for malformed input (NULL pointers, NaN or infinite
 * samples, parameters outside their domain), BF_ERR_TOOBIG for more samples
 * than STATS_MAX_SAMPLES, BF_ERR_ALLOC, and BF_ERR_RANGE when a continued
 * fraction fails to converge. A statistic that is merely undefined for the
 * data (the sd of one sample, a test with zero variance) is not an error:
 * its field is NAN, which reports print as words that say why ("n=1, no
 * CI", "no var", "unbounded"; report.h).
 */
#ifndef BF_STATS_H
#define BF_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "caps.h"

/* Most samples one call accepts: every iteration of every boot of a cell. */
#define STATS_MAX_SAMPLES	((size_t)BF_MAX_ITERATIONS * BF_MAX_BOOTS)

/* One sample set. Fields that need more samples than n are NAN. */
struct stats_summary {
	size_t n;
	double mean;		/* n >= 1 */
	double var;		/* sample variance (n-1 denominator); n >= 2; +inf when
				 * sd > ~1.3e154: computations use sd */
	double sd;		/* sample standard deviation, computed scaled (finite
				 * for any finite samples) */
	double cov;		/* CoV in percent: 100 * sd / |mean|; NAN if mean == 0 */
	double min, max, median;	/* n >= 1 */
	double ci_lo, ci_hi;	/* 95% CI of the mean, Student t with n-1 dof; n >= 2 */
};

/* Summarise v[0..n) (n == 0 is allowed: everything NAN). */
int stats_summarize(const double *v, size_t n, struct stats_summary *out);

/* Regularised incomplete beta I_x(a, b); a, b > 0 finite, 0 <= x <= 1. */
int stats_incbeta(double a, double b, double x, double *out);

/* Student t CDF P(T <= t) with nu > 0 dof (non-integer allowed; nu = +inf
 * gives the normal). t may be infinite. */
int stats_t_cdf(double t, double nu, double *out);
/* Two-sided tail P(|T| >= |t|) = I_{nu/(nu+t^2)}(nu/2, 1/2). */
int stats_t_p2(double t, double nu, double *out);
/* t quantile: the t with P(T <= t) = p, 0 < p < 1, by bisection on the CDF
 * (accurate to about 1e-13 relative, also for nu <= 3; for nu > 1e6 an
 * asymptotic expansion in 1/nu replaces the incomplete beta). */
int stats_t_quantile(double p, double nu, double *out);

/* Standard normal CDF and upper tail (via erfc; z may be infinite). */
double stats_norm_cdf(double z);
double stats_norm_sf(double z);
/* Standard normal quantile, 0 < p < 1, by bisection. */
int stats_norm_quantile(double p, double *out);

/* Welch's unequal-variance t-test of B against baseline A. */
struct stats_welch {
	double t;	/* (mean_B - mean_A) / sqrt(vA + vB), v = s^2/n */
	double nu;	/* Welch-Satterthwaite dof, not floored */
	double p;	/* two-sided */
};
/* Both need n >= 2; if vA + vB == 0 all fields are NAN. */
int stats_welch(const struct stats_summary *a, const struct stats_summary *b,
    struct stats_welch *out);

/* Percent change of B vs baseline A, 100 (mean_B - mean_A) / mean_A. */
struct stats_pct {
	double pct;		/* NAN if mean_A == 0 or either n == 0 */
	double lo, hi;		/* the CI in percent; NAN when unbounded or n < 2 */
	int unbounded;		/* 1: g >= 1, mean_A not distinguishable from 0 */
};
/*
 * Fieller's CI of the ratio mean_B/mean_A at the given level (0.95 for a
 * 95% CI, 0.90 for TOST), independent samples, with t = t_{(1+level)/2, nu}.
 * g = t^2 vA / mean_A^2; g >= 1 means the interval is unbounded. Pass the
 * Welch nu (stats_welch). If vA = vB = 0 the CI collapses to the point.
 */
int stats_fieller(const struct stats_summary *a, const struct stats_summary *b,
    double nu, double level, struct stats_pct *out);

/* Everything a report row needs about B vs baseline A. */
struct stats_compare {
	struct stats_welch welch;
	struct stats_pct pct;	/* 95% Fieller CI with the Welch nu */
	int significant;	/* welch.p < 0.05 and pct CI bounded and excluding 0 */
};
int stats_compare(const struct stats_summary *a, const struct stats_summary *b,
    struct stats_compare *out);

/*
 * Effects and their difference on the log scale (docs/bundle.md, Effects).
 * An effect is a ratio of means r = mean_1 / mean_0, a cell over its
 * baseline cell; two sides (labs) A and B each have one, and r_B / r_A is
 * their difference. By the delta method var(ln |mean|) = s^2 / (n mean^2)
 * per group; a side's effect has the Welch-Satterthwaite dof of its two
 * groups, the difference that of all four. g[0], g[1]: A's baseline and
 * cell; g[2], g[3]: B's. scale[k] (NULL: all 0): group k's samples were
 * multiplied by 2^-scale[k] before they were summarised, exactly, so that
 * squares of means near DBL_MAX or DBL_MIN neither overflow nor underflow;
 * the logs come out as for the unscaled samples.
 */
enum stats_effect_undef {
	STATS_EFFECT_OK = 0,
	STATS_EFFECT_EMPTY,	/* a group has no samples */
	STATS_EFFECT_ZERO,	/* a mean is 0: no log */
	STATS_EFFECT_SIGN_A,	/* A's two means are of opposite sign: r_A < 0, no log */
	STATS_EFFECT_SIGN_B	/* B's likewise */
};
struct stats_effect {
	enum stats_effect_undef undefined;	/* OK, or why every field is NAN */
	double ln_a, ln_b;	/* ln r_A, ln r_B */
	double se_a, se_b;	/* their se; NAN when a group of the side has n < 2 */
	double nu_a, nu_b;	/* their dof (n_0 + n_1 - 2 when both variances are 0) */
	double ln_d;		/* ln (r_B / r_A) = ln_b - ln_a */
	double se_d, nu_d;	/* its se and dof; NAN when any group has n < 2 */
};
int stats_effect_diff(const struct stats_summary g[4], const int *scale,
    struct stats_effect *out);
/* The CI of exp(ln) at level (0 < level < 1): exp(ln -+ t se), t with nu
 * dof; se == 0 gives the point; a NAN se or nu gives NAN. */
int stats_log_ci(double ln, double se, double nu, double level, double *lo, double *hi);

/*
 * The % change of strictly positive B vs A (both means > 0, n >= 1) with
 * its CI from the ratio of means on the log scale: ln(mean_B/mean_A) with
 * the delta-method se sqrt(s_A^2/(n_A mean_A^2) + s_B^2/(n_B mean_B^2)) and
 * the Welch-Satterthwaite dof of those two terms, back-transformed, so the
 * CI is never below -100%. pct is 100 (mean_B - mean_A)/mean_A; lo, hi are
 * NAN when either n < 2; never unbounded. BF_ERR_INVALID for a mean <= 0.
 */
int stats_pct_log(const struct stats_summary *a, const struct stats_summary *b,
    double level, struct stats_pct *out);

/*
 * Holm-Bonferroni: adj[i] is the adjusted p of p[i] among the n p-values
 * (each in [0, 1]; BF_ERR_INVALID otherwise): with p sorted ascending,
 * max over j <= k of min(1, (n - j) p_(j)), 0-based. Reject at level alpha
 * where adj < alpha; this controls the family-wise error rate.
 */
int stats_holm(const double *p, size_t n, double *adj);

/*
 * Percentile bootstrap of the median: nboot resamples (with replacement)
 * of a, and, if nb > 0, of b, drawn from a splitmix64 stream seeded with
 * seed (the same data and seed give the same CI). lo, hi: the level CI of
 * a's median (NAN for na < 2); pct_lo, pct_hi: that of 100 (med_b* -
 * med_a*)/|med_a*| (NAN unless both n >= 2; pct_unbounded when some
 * resampled median of a is 0). O(n log n + nboot n).
 */
struct stats_boot {
	double lo, hi;
	double pct_lo, pct_hi;
	int pct_unbounded;
};
int stats_boot_median(const double *a, size_t na, const double *b, size_t nb,
    size_t nboot, uint64_t seed, double level, struct stats_boot *out);

/* Mann-Whitney U: how the p-value is computed. */
enum stats_mw_method {
	/* exact if there are no ties and both n <= 10, or (as scipy's
	 * method="auto") the smaller n <= 8 and the larger <= 200; else
	 * asymptotic (scipy's "auto" is exact past 200 too, and asymptotic
	 * at 9 or 10 a side, where the notes ask for the exact p) */
	STATS_MW_AUTO = 0,
	STATS_MW_EXACT,		/* exact; BF_ERR_INVALID with ties or na, nb > 50 */
	STATS_MW_ASYMPTOTIC	/* normal, tie and continuity corrected */
};
struct stats_mw {
	double u;	/* U of sample a: R_a - na(na+1)/2, mid-ranks (scipy's statistic) */
	double p;	/* two-sided; 1 if every value is tied (no evidence), as scipy */
	int exact;	/* 1 if p came from the exact distribution */
};
/* Both samples need n >= 1. */
int stats_mannwhitney(const double *a, size_t na, const double *b, size_t nb,
    enum stats_mw_method method, struct stats_mw *out);

/*
 * Two levels (Kalibera & Jones, ISMM 2013): samples v[i] tagged with their
 * boot boot[i] (any int ids; order does not matter). Unequal iterations per
 * boot are handled so that each formula stays unbiased:
 *   - S_w^2 pools the within-boot sums of squares over N - k dof
 *     (boots with one iteration add nothing);
 *   - S_b^2 is the sample variance of the k boot means, each boot weighted
 *     equally (the boot means are the independent samples);
 *   - m in sigma_boot^2 = max(0, S_b^2 - S_w^2/m) is the harmonic mean of
 *     the iterations per boot, since E[S_b^2] = sigma_b^2 + sigma_w^2 mean(1/m_i).
 * With equal m these are exactly the balanced formulas of the notes.
 */
struct stats_twolevel {
	size_t n;		/* samples */
	size_t nboots;		/* k, distinct boot ids */
	size_t m_min, m_max;	/* iterations per boot */
	double m_h;		/* harmonic mean of iterations per boot */
	double sw2;		/* within-boot variance; NAN if no boot has 2 iterations */
	double sb2;		/* variance of boot means; NAN if k < 2 */
	double sigma_boot2;	/* max(0, sb2 - sw2/m_h); NAN if either is NAN */
	/* Summary of the k boot means: bm.mean is the grand mean, bm.var = sb2,
	 * bm.ci_lo/hi its 95% CI with k - 1 dof. Feed bm to stats_compare. */
	struct stats_summary bm;
};
int stats_twolevel(const double *v, const int *boot, size_t n,
    struct stats_twolevel *out);

/* The mean of each boot, in ascending boot id order: means[0..*k), where
 * means has room for n values (k <= n); the samples a two-level cell's
 * tests use (Mann-Whitney in reports). */
int stats_boot_means(const double *v, const int *boot, size_t n, double *means,
    size_t *k);

/*
 * Optimal iterations per boot m* = ceil(sqrt(cost_ratio * sw2 / sigma_boot2)),
 * cost_ratio = c_boot / c_iter > 0. sigma_boot2 == 0 (no detectable
 * between-boot variation: more boots buy nothing) gives BF_MAX_ITERATIONS;
 * the result is clamped to [1, BF_MAX_ITERATIONS].
 */
int stats_optimal_iters(double cost_ratio, double sw2, double sigma_boot2,
    size_t *out);

#endif
