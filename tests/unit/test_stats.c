/*
 * test_stats.c: table-driven checks of common/stats.c against reference
 * values produced offline with Debian's python3-scipy 1.10.1 (the call that
 * produced each table is in the comment above it). scipy is not needed at
 * run time.
 */
#include <math.h>
#include <stddef.h>

#include "err.h"
#include "stats.h"
#include "t.h"

#define ARRLEN(a) (sizeof(a) / sizeof((a)[0]))
/* Relative-or-absolute tolerance: |x - ref| <= tol * max(1, |ref|). */
#define T_REL(x, ref, tol) T_NEAR((x), (ref), (tol) * fmax(1.0, fabs((double)(ref))))

/*
 * tq(p, nu) below is the accurate t quantile: scipy.optimize.brentq(lambda
 * t: scipy.stats.t.sf(t, nu) - (1 - p), 0, 200, xtol=1e-300, rtol=1e-15).
 */
struct q_case { double p, nu, t; };
/*
 * brentq(lambda t: scipy.stats.t.sf(t, nu) - (1 - p), 0, 200, xtol=1e-300,
 * rtol=1e-15) with scipy.optimize.brentq. Not scipy.stats.t.ppf: in scipy
 * 1.10.1 it (cephes stdtri) is off by up to 3e-9 relative (nu = 30,
 * p = 0.9: 1.3104150225671307), while t.sf is accurate. Cross-checked with
 * mpmath 1.2.1 at 40 digits (findroot on betainc): agreement 7.5e-16.
 */
static const struct q_case q_cases[] = {
	{ .p = 0.9, .nu = 1.0, .t = 3.077683537175254 },
	{ .p = 0.95, .nu = 1.0, .t = 6.313751514675037 },
	{ .p = 0.975, .nu = 1.0, .t = 12.706204736174692 },
	{ .p = 0.995, .nu = 1.0, .t = 63.65674116287153 },
	{ .p = 0.9, .nu = 1.5, .t = 2.196398417565538 },
	{ .p = 0.95, .nu = 1.5, .t = 3.705180820096749 },
	{ .p = 0.975, .nu = 1.5, .t = 6.016663104427928 },
	{ .p = 0.995, .nu = 1.5, .t = 17.820310514462793 },
	{ .p = 0.9, .nu = 2.0, .t = 1.8856180831641265 },
	{ .p = 0.95, .nu = 2.0, .t = 2.919985580353724 },
	{ .p = 0.975, .nu = 2.0, .t = 4.302652729749461 },
	{ .p = 0.995, .nu = 2.0, .t = 9.92484320091829 },
	{ .p = 0.9, .nu = 3.0, .t = 1.6377443536962097 },
	{ .p = 0.95, .nu = 3.0, .t = 2.3533634348018224 },
	{ .p = 0.975, .nu = 3.0, .t = 3.1824463052837078 },
	{ .p = 0.995, .nu = 3.0, .t = 5.840909309733354 },
	{ .p = 0.9, .nu = 4.7, .t = 1.4901550815168019 },
	{ .p = 0.95, .nu = 4.7, .t = 2.043811093013787 },
	{ .p = 0.975, .nu = 4.7, .t = 2.6207260753531703 },
	{ .p = 0.995, .nu = 4.7, .t = 4.167892040119057 },
	{ .p = 0.9, .nu = 10.0, .t = 1.3721836411103359 },
	{ .p = 0.95, .nu = 10.0, .t = 1.812461122811676 },
	{ .p = 0.975, .nu = 10.0, .t = 2.2281388519862735 },
	{ .p = 0.995, .nu = 10.0, .t = 3.1692726726169504 },
	{ .p = 0.9, .nu = 30.0, .t = 1.3104150253913955 },
	{ .p = 0.95, .nu = 30.0, .t = 1.6972608865939574 },
	{ .p = 0.975, .nu = 30.0, .t = 2.0422724563012378 },
	{ .p = 0.995, .nu = 30.0, .t = 2.749995653567225 },
	{ .p = 0.9, .nu = 1000.0, .t = 1.2823987214609245 },
	{ .p = 0.95, .nu = 1000.0, .t = 1.6463788172854645 },
	{ .p = 0.975, .nu = 1000.0, .t = 1.9623390808264083 },
	{ .p = 0.995, .nu = 1000.0, .t = 2.5807546980659506 },
};

struct cdf_case { double t, nu, cdf; };
/* scipy.stats.t.cdf(t, nu) */
static const struct cdf_case cdf_cases[] = {
	{ .t = 0.0, .nu = 1.0, .cdf = 0.5 },
	{ .t = 0.5, .nu = 1.0, .cdf = 0.6475836176504333 },
	{ .t = -2.0, .nu = 1.0, .cdf = 0.1475836176504332 },
	{ .t = 63.65674116287158, .nu = 1.0, .cdf = 0.995 },
	{ .t = 1000000.0, .nu = 1.0, .cdf = 0.9999996816901139 },
	{ .t = 1.3, .nu = 1.5, .cdf = 0.8209853043992096 },
	{ .t = -0.01, .nu = 2.0, .cdf = 0.4964645544791005 },
	{ .t = 3.7, .nu = 3.0, .cdf = 0.9828610102478729 },
	{ .t = -4.2, .nu = 4.7, .cdf = 0.00485456001825764 },
	{ .t = 2.2281388519649385, .nu = 10.0, .cdf = 0.9749999999990957 },
	{ .t = 1e-08, .nu = 10.0, .cdf = 0.5000000038910838 },
	{ .t = -1.0, .nu = 30.0, .cdf = 0.16265430771301492 },
	{ .t = 5.0, .nu = 30.0, .cdf = 0.9999883516572665 },
	{ .t = 1.96, .nu = 1000.0, .cdf = 0.9748634075221256 },
	{ .t = -3.5, .nu = 1000.0, .cdf = 0.00024288717298391596 },
	{ .t = 40.0, .nu = 2.5, .cdf = 0.9999290218285476 },
	{ .t = 0.2, .nu = 0.3, .cdf = 0.544619617595772 },
	{ .t = -7.0, .nu = 0.7, .cdf = 0.07935857194268646 },
	/* Large nu, where stats.c switches to the 1/nu expansion above 1e6. */
	{ .t = 1.96, .nu = 200000.0, .cdf = 0.9750014116286437 },
	{ .t = 1.96, .nu = 2e6, .cdf = 0.9750020355295856 },
	{ .t = -6.0, .nu = 2e6, .cdf = 9.867562631966135e-10 },
	{ .t = 1.96, .nu = 1e8, .cdf = 0.9750021034653359 },
	{ .t = 0.5, .nu = 1e12, .cdf = 0.6914624612739579 },
};

struct beta_case { double a, b, x, i; };
/* scipy.special.betainc(a, b, x) */
static const struct beta_case beta_cases[] = {
	{ .a = 0.5, .b = 0.5, .x = 0.5, .i = 0.5000000000000001 },
	{ .a = 1.0, .b = 1.0, .x = 0.3, .i = 0.3 },
	{ .a = 2.0, .b = 3.0, .x = 0.4, .i = 0.5247999999999999 },
	{ .a = 0.001, .b = 0.001, .x = 0.3, .i = 0.4995769621396764 },
	{ .a = 0.001, .b = 5.0, .x = 1e-05, .i = 0.9906139827379975 },
	{ .a = 5.0, .b = 0.001, .x = 0.99999, .i = 0.009386017262007051 },
	{ .a = 500.0, .b = 500.0, .x = 0.49, .i = 0.26357560835645805 },
	{ .a = 1000.0, .b = 0.5, .x = 0.999, .i = 0.15724727426683946 },
	{ .a = 0.5, .b = 1000.0, .x = 0.0001, .i = 0.34524686910236685 },
	{ .a = 2.0, .b = 3.0, .x = 1e-10, .i = 5.9999999992e-20 },
	{ .a = 2.0, .b = 3.0, .x = 0.9999999999, .i = 0.9999999999999999 },
	{ .a = 5.0, .b = 2.5, .x = 0.999999, .i = 0.9999999999999766 },
	{ .a = 10000.0, .b = 10000.0, .x = 0.5, .i = 0.5000000000004241 },
	{ .a = 10000.0, .b = 10000.0, .x = 0.505, .i = 0.9213529911182899 },
	{ .a = 100000.0, .b = 10.0, .x = 0.9999, .i = 0.45781085964856344 },
	{ .a = 0.1, .b = 0.1, .x = 1e-12, .i = 0.03200450836702791 },
	{ .a = 50.0, .b = 60.0, .x = 0.45, .i = 0.4642352914306064 },
	{ .a = 3.0, .b = 4.0, .x = 0.0, .i = 0.0 },
	{ .a = 3.0, .b = 4.0, .x = 1.0, .i = 1.0 },
	{ .a = 1e-05, .b = 1e-05, .x = 0.5, .i = 0.5000000000000003 },
	{ .a = 200.0, .b = 2.0, .x = 0.995, .i = 0.7339156434523202 },
	/* Here scipy.special.betainc gives 0.8144533339009274, off by 1.9e-8;
	 * the reference is mpmath 1.2.1 (40 digits): 0.5 + quad of the density
	 * over [0.5, 0.5001]. */
	{ .a = 1e7, .b = 1e7, .x = 0.5001, .i = 0.81445331464068418 },
};

/* Sample sets shaped like the seeds' tables (btree seconds, lat_pagefault us, redis ops/s, GUPS). */
static const double btree_4l[] = { 381.5, 382.9, 382.0, 381.8, 382.8 };
static const double btree_5l[] = { 388.1, 392.0, 385.2, 389.9, 388.8 };
static const double pf_4l[] = { 0.4068, 0.4059, 0.4081, 0.4062, 0.4073, 0.4066, 0.407, 0.4058, 0.4077, 0.4064 };
static const double pf_5l[] = { 0.4294, 0.4301, 0.4286, 0.4297, 0.429, 0.4299, 0.4288, 0.4302, 0.4291, 0.4293 };
static const double redis_4l[] = { 141030744, 140512230, 141623001, 140877314, 141210000 };
static const double redis_5l[] = { 139586376, 140250117, 139100540, 139920000 };
static const double gups_a[] = { 1.3265, 1.326, 1.3271 };
static const double gups_b[] = { 1.3252, 1.3249, 1.3256, 1.326, 1.3244, 1.3251 };
static const double const3[] = { 5.0, 5.0, 5.0 };

struct welch_case {
	const double *a; size_t na; const double *b; size_t nb;
	double t, nu, p, pct, lo, hi;
};
/*
 * t, p: scipy.stats.ttest_ind(B, A, equal_var=False); nu: the
 * Welch-Satterthwaite formula on numpy var(ddof=1)/n; pct = 100(mean B /
 * mean A - 1); lo, hi: Fieller with t = tq(0.975, nu).
 */
static const struct welch_case welch_cases[] = {
	{ .a = btree_4l, .na = ARRLEN(btree_4l), .b = btree_5l, .nb = ARRLEN(btree_5l),
	  .t = 5.740215644291153, .nu = 4.4928937487869085, .p = 0.003177121236598412,
	  .pct = 1.7268445839874413, .lo = 0.9260909878644252, .hi = 2.5283572011620015 },
	{ .a = pf_4l, .na = ARRLEN(pf_4l), .b = pf_5l, .nb = ARRLEN(pf_5l),
	  .t = 76.45483578576581, .nu = 16.44225116425748, .p = 2.0278128576956309e-22,
	  .pct = 5.5632036973302545, .lo = 5.4037983461799, .hi = 5.722936110726207 },
	{ .a = redis_4l, .na = ARRLEN(redis_4l), .b = redis_5l, .nb = ARRLEN(redis_5l),
	  .t = -4.361818298773185, .nu = 5.907672564861907, .p = 0.004937729812000466,
	  .pct = -0.9474607001797475, .lo = -1.4781765030206118, .hi = -0.41472248278582313 },
	{ .a = gups_a, .na = ARRLEN(gups_a), .b = gups_b, .nb = ARRLEN(gups_b),
	  .t = -3.4149388838124204, .nu = 4.121357765095087, .p = 0.025672741817795445,
	  .pct = -0.10051261433309255, .lo = -0.18119494179975604, .hi = -0.01974381362439548 },
	{ .a = btree_4l, .na = ARRLEN(btree_4l), .b = const3, .nb = ARRLEN(const3),
	  .t = -1359.3344437150713, .nu = 4.0, .p = 1.7572938841395278e-12,
	  .pct = -98.69178440607011, .lo = -98.69441617969639, .hi = -98.68914200084397 },
};

struct sum_case {
	const double *v; size_t n;
	double mean, sd, cov, lo, hi, median;
};
/* numpy mean, std(ddof=1), 100 sd/mean, mean -+ tq(0.975, n-1) sd/sqrt(n), np.median */
static const struct sum_case sum_cases[] = {
	{ .v = btree_4l, .n = ARRLEN(btree_4l), .mean = 382.2, .sd = 0.6204836822995374,
	  .cov = 0.16234528579265764, .lo = 381.42956775021577, .hi = 382.9704322497842,
	  .median = 382.0 },
	{ .v = pf_5l, .n = ARRLEN(pf_5l), .mean = 0.42941, .sd = 0.0005506561742341853,
	  .cov = 0.12823552647450812, .lo = 0.4290160843029462, .hi = 0.42980391569705384,
	  .median = 0.42935 },
	{ .v = redis_5l, .n = ARRLEN(redis_5l), .mean = 139714258.25, .sd = 490740.33456019283,
	  .cov = 0.3512457072792661, .lo = 138933380.86771262, .hi = 140495135.63228738,
	  .median = 139753188.0 },
};

static const double mw_a3[] = { 1.0, 2.0, 3.0 };
static const double mw_b3[] = { 4.0, 5.0, 6.0 };
static const double mw_a5[] = { 382.2, 381.9, 383.4, 380.8, 382.7 };
static const double mw_b5[] = { 388.8, 383.1, 386.0, 390.2, 381.0 };
static const double mw_a10[] = { 10.1, 10.5, 9.8, 10.3, 10.9, 9.7, 10.0, 10.6, 10.2, 10.4 };
static const double mw_b8[] = { 10.8, 11.2, 10.45, 11.0, 10.65, 11.5, 10.75, 11.1 };
static const double mw_a7[] = { 0.4068, 0.4059, 0.4081, 0.4062, 0.4073, 0.4066, 0.407 };
static const double mw_b9[] = { 0.4294, 0.4301, 0.4286, 0.4297, 0.4071, 0.4299, 0.4288, 0.406, 0.4291 };
static const double mw_t1[] = { 1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0 };
static const double mw_t2[] = { 3.0, 3.0, 4.0, 4.0, 5.0, 5.0, 6.0, 7.0, 7.0, 8.0, 10.0, 11.0, 12.0 };
static const double mw_t3[] = { 5.0, 5.0, 6.0 };
static const double mw_t4[] = { 5.0, 6.0, 6.0, 7.0 };

struct mw_case {
	const double *a; size_t na; const double *b; size_t nb;
	enum stats_mw_method method;
	double u, p;
};
/* scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method=M, use_continuity=True) */
static const struct mw_case mw_cases[] = {
	{ .a = mw_a3, .na = ARRLEN(mw_a3), .b = mw_b3, .nb = ARRLEN(mw_b3),
	  .method = STATS_MW_EXACT, .u = 0.0, .p = 0.1 }, /* method='exact' */
	{ .a = mw_b3, .na = ARRLEN(mw_b3), .b = mw_a3, .nb = ARRLEN(mw_a3),
	  .method = STATS_MW_EXACT, .u = 9.0, .p = 0.1 }, /* method='exact' */
	{ .a = mw_a5, .na = ARRLEN(mw_a5), .b = mw_b5, .nb = ARRLEN(mw_b5),
	  .method = STATS_MW_EXACT, .u = 5.0, .p = 0.15079365079365079 }, /* method='exact' */
	{ .a = mw_a10, .na = ARRLEN(mw_a10), .b = mw_b8, .nb = ARRLEN(mw_b8),
	  .method = STATS_MW_EXACT, .u = 6.0, .p = 0.0013711778417660769 }, /* method='exact' */
	{ .a = mw_a7, .na = ARRLEN(mw_a7), .b = mw_b9, .nb = ARRLEN(mw_b9),
	  .method = STATS_MW_EXACT, .u = 8.0, .p = 0.011538461538461539 }, /* method='exact' */
	{ .a = mw_a3, .na = ARRLEN(mw_a3), .b = mw_b3, .nb = ARRLEN(mw_b3),
	  .method = STATS_MW_ASYMPTOTIC, .u = 0.0, .p = 0.08085559837005224 }, /* method='asymptotic' */
	{ .a = mw_a5, .na = ARRLEN(mw_a5), .b = mw_b5, .nb = ARRLEN(mw_b5),
	  .method = STATS_MW_ASYMPTOTIC, .u = 5.0, .p = 0.14367208180696023 }, /* method='asymptotic' */
	{ .a = mw_a10, .na = ARRLEN(mw_a10), .b = mw_b8, .nb = ARRLEN(mw_b8),
	  .method = STATS_MW_ASYMPTOTIC, .u = 6.0, .p = 0.002915085858374122 }, /* method='asymptotic' */
	{ .a = mw_t1, .na = ARRLEN(mw_t1), .b = mw_t2, .nb = ARRLEN(mw_t2),
	  .method = STATS_MW_ASYMPTOTIC, .u = 45.0, .p = 0.07511084616783008 }, /* method='asymptotic' */
	{ .a = mw_t3, .na = ARRLEN(mw_t3), .b = mw_t4, .nb = ARRLEN(mw_t4),
	  .method = STATS_MW_ASYMPTOTIC, .u = 3.0, .p = 0.3397277758660979 }, /* method='asymptotic' */
};

/* Two levels: values and boot ids; references from numpy by the formulas in
 * stats.h (sw2 pooled, sb2 = var(boot means, ddof=1), m_h harmonic mean),
 * CI with tq(0.975, k-1) * sqrt(sb2/k), m* for c_boot/c_iter = 10. */
static const double tl_bal_v[] = { 10.1, 10.3, 10.2, 10.4, 11.0, 10.9, 11.2, 11.1, 10.5, 10.6, 10.4, 10.7 };
static const int tl_bal_b[] = { 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2 };
static const double tl_unb_v[] = { 5.0, 5.2, 5.9, 6.1, 6.0, 5.4, 5.5, 5.3, 5.6, 5.5, 5.8 };
static const int tl_unb_b[] = { 7, 7, 3, 3, 3, 9, 9, 9, 9, 9, 1 };

struct tl_case {
	const double *v; const int *b; size_t n; size_t k;
	double sw2, sb2, m_h, sig2, mean, lo, hi;
	size_t mstar;
};
static const struct tl_case tl_cases[] = {
	{ .v = tl_bal_v, .b = tl_bal_b, .n = ARRLEN(tl_bal_v), .k = 3,
	  .sw2 = 0.016666666666666625, .sb2 = 0.16333333333333283, .m_h = 4.0,
	  .sig2 = 0.15916666666666618, .mean = 10.616666666666665, .lo = 9.612714363058458,
	  .hi = 11.620618970274872, .mstar = 2 },
	{ .v = tl_unb_v, .b = tl_unb_b, .n = ARRLEN(tl_unb_v), .k = 4,
	  .sw2 = 0.013142857142857114, .sb2 = 0.15640000000000018, .m_h = 1.9672131147540985,
	  .sig2 = 0.1497190476190478, .mean = 5.59, .lo = 4.960711980566017,
	  .hi = 6.219288019433983, .mstar = 1 },
};

static void
test_quantiles(void)
{
	size_t i;
	double t, c;

	for (i = 0; i < ARRLEN(q_cases); i++) {
		T_EQ_INT(stats_t_quantile(q_cases[i].p, q_cases[i].nu, &t), 0);
		T_REL(t, q_cases[i].t, 1e-12);
		/* Symmetry and round trip through the CDF. */
		T_EQ_INT(stats_t_quantile(1 - q_cases[i].p, q_cases[i].nu, &t), 0);
		T_REL(t, -q_cases[i].t, 1e-12);
		T_EQ_INT(stats_t_cdf(q_cases[i].t, q_cases[i].nu, &c), 0);
		T_NEAR(c, q_cases[i].p, 1e-13);
	}
	T_EQ_INT(stats_t_quantile(0.5, 3, &t), 0);
	T_NEAR(t, 0, 0);
	/* scipy.stats.norm.ppf(0.975) = 1.959963984540054 */
	T_EQ_INT(stats_norm_quantile(0.975, &t), 0);
	T_NEAR(t, 1.959963984540054, 1e-13);
	/* scipy.stats.t.isf(0.025, 1e8) = 1.9599640082627667 */
	T_EQ_INT(stats_t_quantile(0.975, 1e8, &t), 0);
	T_NEAR(t, 1.9599640082627667, 1e-12);
	T_EQ_INT(stats_t_quantile(0.975, INFINITY, &t), 0);
	T_NEAR(t, 1.959963984540054, 1e-13);
	/* scipy.stats.norm.cdf(-1.5) = 0.06680720126885807 */
	T_NEAR(stats_norm_cdf(-1.5), 0.06680720126885807, 1e-16);
	/* Tiny nu puts the quantile past any double. */
	T_EQ_INT(stats_t_quantile(1 - 1e-7, 0.01, &t), BF_ERR_RANGE);
	T_EQ_INT(stats_t_quantile(0, 3, &t), BF_ERR_INVALID);
	T_EQ_INT(stats_t_quantile(1, 3, &t), BF_ERR_INVALID);
	T_EQ_INT(stats_t_quantile(NAN, 3, &t), BF_ERR_INVALID);
	T_EQ_INT(stats_t_quantile(0.9, 0, &t), BF_ERR_INVALID);
	T_EQ_INT(stats_t_quantile(0.9, -1, &t), BF_ERR_INVALID);
	T_EQ_INT(stats_t_quantile(0.9, NAN, &t), BF_ERR_INVALID);
	T_EQ_INT(stats_t_quantile(0.9, 3, NULL), BF_ERR_INVALID);
}

static void
test_cdf(void)
{
	size_t i;
	double c;

	for (i = 0; i < ARRLEN(cdf_cases); i++) {
		T_EQ_INT(stats_t_cdf(cdf_cases[i].t, cdf_cases[i].nu, &c), 0);
		T_NEAR(c, cdf_cases[i].cdf, 1e-12);
	}
	T_EQ_INT(stats_t_cdf(INFINITY, 3, &c), 0);
	T_NEAR(c, 1, 0);
	T_EQ_INT(stats_t_cdf(-INFINITY, 3, &c), 0);
	T_NEAR(c, 0, 0);
	T_EQ_INT(stats_t_p2(0, 3, &c), 0);
	T_NEAR(c, 1, 0);
	/* 2 * scipy.stats.t.sf(2.5, 7) = 0.040992218585752874 */
	T_EQ_INT(stats_t_p2(-2.5, 7, &c), 0);
	T_NEAR(c, 0.040992218585752874, 1e-14);
	/* t^2 overflows but the tail of nu = 0.01 is still ~1%: scipy 1.10.1
	 * says 2 * t.sf(1e200, 0.01) = 0.0; mpmath 1.2.1 (40 digits,
	 * betainc(nu/2, 1/2, 0, nu/(nu+t^2), regularized=True)) gives these. */
	T_EQ_INT(stats_t_p2(1e200, 0.01, &c), 0);
	T_NEAR(c, 0.0097052657151174008, 1e-16);
	T_EQ_INT(stats_t_p2(1e140, 0.01, &c), 0);
	T_NEAR(c, 0.038637358733152525, 1e-16);
	T_EQ_INT(stats_t_cdf(NAN, 3, &c), BF_ERR_INVALID);
	T_EQ_INT(stats_t_cdf(1, 0, &c), BF_ERR_INVALID);
	T_EQ_INT(stats_t_p2(1, NAN, &c), BF_ERR_INVALID);
}

static void
test_incbeta(void)
{
	size_t i;
	double v;

	for (i = 0; i < ARRLEN(beta_cases); i++) {
		T_EQ_INT(stats_incbeta(beta_cases[i].a, beta_cases[i].b, beta_cases[i].x, &v), 0);
		T_NEAR(v, beta_cases[i].i, 1e-10);
		/* Tiny values must be right relative to themselves too. */
		if (beta_cases[i].i < 1e-6)
			T_NEAR(v, beta_cases[i].i, 1e-10 * beta_cases[i].i);
	}
	T_EQ_INT(stats_incbeta(0, 1, 0.5, &v), BF_ERR_INVALID);
	T_EQ_INT(stats_incbeta(1, -1, 0.5, &v), BF_ERR_INVALID);
	T_EQ_INT(stats_incbeta(1, 1, 1.5, &v), BF_ERR_INVALID);
	T_EQ_INT(stats_incbeta(1, 1, -0.1, &v), BF_ERR_INVALID);
	T_EQ_INT(stats_incbeta(NAN, 1, 0.5, &v), BF_ERR_INVALID);
	T_EQ_INT(stats_incbeta(1, INFINITY, 0.5, &v), BF_ERR_INVALID);
	T_EQ_INT(stats_incbeta(1, 1, NAN, &v), BF_ERR_INVALID);
	T_EQ_INT(stats_incbeta(1, 1, 0.5, NULL), BF_ERR_INVALID);
}

static void
test_summary(void)
{
	struct stats_summary s;
	static const double one[] = { 42.5 }, bad[] = { 1, NAN, 3 }, inf[] = { 1, INFINITY };
	static const double four[] = { 4, 1, 3, 2 };
	size_t i;

	for (i = 0; i < ARRLEN(sum_cases); i++) {
		T_EQ_INT(stats_summarize(sum_cases[i].v, sum_cases[i].n, &s), 0);
		T_EQ_INT(s.n, sum_cases[i].n);
		T_REL(s.mean, sum_cases[i].mean, 1e-13);
		T_REL(s.sd, sum_cases[i].sd, 1e-10);
		T_REL(s.cov, sum_cases[i].cov, 1e-10);
		T_REL(s.ci_lo, sum_cases[i].lo, 1e-13);
		T_REL(s.ci_hi, sum_cases[i].hi, 1e-13);
		T_REL(s.median, sum_cases[i].median, 1e-15);
	}
	T_EQ_INT(stats_summarize(four, 4, &s), 0);
	T_NEAR(s.median, 2.5, 0);
	T_NEAR(s.min, 1, 0);
	T_NEAR(s.max, 4, 0);
	/* n = 1: mean, no spread. */
	T_EQ_INT(stats_summarize(one, 1, &s), 0);
	T_NEAR(s.mean, 42.5, 0);
	T_NEAR(s.median, 42.5, 0);
	T_CHECK(isnan(s.sd) && isnan(s.cov) && isnan(s.ci_lo) && isnan(s.ci_hi));
	/* n = 0: everything n/a, not an error. */
	T_EQ_INT(stats_summarize(NULL, 0, &s), 0);
	T_EQ_INT(s.n, 0);
	T_CHECK(isnan(s.mean) && isnan(s.median) && isnan(s.min));
	/* Zero variance. */
	T_EQ_INT(stats_summarize(const3, 3, &s), 0);
	T_NEAR(s.sd, 0, 0);
	T_NEAR(s.cov, 0, 0);
	T_NEAR(s.ci_lo, 5, 0);
	T_NEAR(s.ci_hi, 5, 0);
	/* Non-finite input is rejected. */
	T_EQ_INT(stats_summarize(bad, 3, &s), BF_ERR_INVALID);
	T_EQ_INT(stats_summarize(inf, 2, &s), BF_ERR_INVALID);
	T_EQ_INT(stats_summarize(NULL, 2, &s), BF_ERR_INVALID);
	T_EQ_INT(stats_summarize(one, 1, NULL), BF_ERR_INVALID);
	T_EQ_INT(stats_summarize(one, STATS_MAX_SAMPLES + 1, &s), BF_ERR_TOOBIG);
}

static void
test_welch(void)
{
	struct stats_summary a, b;
	struct stats_compare c;
	struct stats_welch w;
	struct stats_pct p;
	static const double one[] = { 3.0 };
	size_t i;

	for (i = 0; i < ARRLEN(welch_cases); i++) {
		const struct welch_case *k = &welch_cases[i];

		T_EQ_INT(stats_summarize(k->a, k->na, &a), 0);
		T_EQ_INT(stats_summarize(k->b, k->nb, &b), 0);
		T_EQ_INT(stats_compare(&a, &b, &c), 0);
		T_REL(c.welch.t, k->t, 1e-10);
		T_REL(c.welch.nu, k->nu, 1e-10);
		T_NEAR(c.welch.p, k->p, 1e-10 * fmax(k->p, 1e-3));
		T_NEAR(c.pct.pct, k->pct, 1e-10);
		T_NEAR(c.pct.lo, k->lo, 1e-10);
		T_NEAR(c.pct.hi, k->hi, 1e-10);
		T_EQ_INT(c.pct.unbounded, 0);
		/* Every reference set differs with p < 0.05 and a CI excluding 0. */
		T_EQ_INT(c.significant, 1);
	}
	/* Identical samples: zero variance on both sides, nothing defined but pct. */
	T_EQ_INT(stats_summarize(const3, 3, &a), 0);
	T_EQ_INT(stats_compare(&a, &a, &c), 0);
	T_CHECK(isnan(c.welch.t) && isnan(c.welch.nu) && isnan(c.welch.p));
	T_NEAR(c.pct.pct, 0, 0);
	T_EQ_INT(c.significant, 0);
	/* Same data both sides with spread: t = 0, p = 1, CI straddles 0. */
	T_EQ_INT(stats_summarize(btree_4l, 5, &a), 0);
	T_EQ_INT(stats_compare(&a, &a, &c), 0);
	T_NEAR(c.welch.t, 0, 0);
	T_NEAR(c.welch.p, 1, 1e-15);
	T_CHECK(c.pct.lo < 0 && c.pct.hi > 0);
	T_EQ_INT(c.significant, 0);
	/* n = 1 against n = 5: pct only. */
	T_EQ_INT(stats_summarize(one, 1, &b), 0);
	T_EQ_INT(stats_compare(&a, &b, &c), 0);
	T_CHECK(isnan(c.welch.p) && isnan(c.pct.lo) && isnan(c.pct.hi));
	T_NEAR(c.pct.pct, 100 * (3.0 / 382.2 - 1), 1e-12);
	T_EQ_INT(c.significant, 0);
	/* n = 0 baseline. */
	T_EQ_INT(stats_summarize(NULL, 0, &b), 0);
	T_EQ_INT(stats_compare(&b, &a, &c), 0);
	T_CHECK(isnan(c.pct.pct) && isnan(c.welch.p));
	T_EQ_INT(c.significant, 0);
	T_EQ_INT(stats_welch(NULL, &a, &w), BF_ERR_INVALID);
	/* Baseline mean indistinguishable from 0: g >= 1, unbounded. */
	{
		static const double za[] = { -1, 1, -0.5, 0.6 }, zb[] = { 2, 2.1, 1.9, 2.05 };

		T_EQ_INT(stats_summarize(za, 4, &a), 0);
		T_EQ_INT(stats_summarize(zb, 4, &b), 0);
		T_EQ_INT(stats_compare(&a, &b, &c), 0);
		T_EQ_INT(c.pct.unbounded, 1);
		T_CHECK(isnan(c.pct.lo) && isnan(c.pct.hi));
		T_EQ_INT(c.significant, 0);
	}
	/* 90% Fieller (for TOST) is narrower than the 95% one. */
	T_EQ_INT(stats_summarize(btree_4l, 5, &a), 0);
	T_EQ_INT(stats_summarize(btree_5l, 5, &b), 0);
	T_EQ_INT(stats_fieller(&a, &b, welch_cases[0].nu, 0.90, &p), 0);
	T_CHECK(p.lo > welch_cases[0].lo && p.hi < welch_cases[0].hi);
	T_EQ_INT(stats_fieller(&a, &b, welch_cases[0].nu, 1.0, &p), BF_ERR_INVALID);
}

static void
test_mannwhitney(void)
{
	struct stats_mw m;
	static const double same[] = { 5, 5, 5 }, bad[] = { 1, NAN };
	size_t i;

	for (i = 0; i < ARRLEN(mw_cases); i++) {
		const struct mw_case *k = &mw_cases[i];

		T_EQ_INT(stats_mannwhitney(k->a, k->na, k->b, k->nb, k->method, &m), 0);
		T_NEAR(m.u, k->u, 1e-12);
		T_NEAR(m.p, k->p, 1e-12);
		T_EQ_INT(m.exact, k->method == STATS_MW_EXACT);
	}
	/* AUTO: exact for small tie-free samples, asymptotic with ties or n > 10. */
	T_EQ_INT(stats_mannwhitney(mw_a5, 5, mw_b5, 5, STATS_MW_AUTO, &m), 0);
	T_EQ_INT(m.exact, 1);
	T_NEAR(m.p, 0.15079365079365079, 1e-12);
	T_EQ_INT(stats_mannwhitney(mw_t3, 3, mw_t4, 4, STATS_MW_AUTO, &m), 0);
	T_EQ_INT(m.exact, 0);
	T_NEAR(m.p, 0.3397277758660979, 1e-12);
	T_EQ_INT(stats_mannwhitney(mw_t1, 12, mw_t2, 13, STATS_MW_AUTO, &m), 0);
	T_EQ_INT(m.exact, 0);
	/* 3 vs 3 can never reach p < 0.1 (notes). */
	T_EQ_INT(stats_mannwhitney(mw_a3, 3, mw_b3, 3, STATS_MW_AUTO, &m), 0);
	T_CHECK(m.p >= 0.1 - 1e-15);
	/* All tied: scipy.stats.mannwhitneyu([5,5,5],[5,5,5]) = (4.5, 1.0). */
	T_EQ_INT(stats_mannwhitney(same, 3, same, 3, STATS_MW_AUTO, &m), 0);
	T_NEAR(m.u, 4.5, 0);
	T_NEAR(m.p, 1, 0);
	/* AUTO follows scipy's "auto" too: exact when the smaller n <= 8 (up to
	 * 200), so 6 vs 40 and 3 vs 51 are exact; 9 vs 11 is not, nor 3 vs 201. */
	{
		static double x[401], y[401];

		for (i = 0; i < 401; i++) {
			x[i] = (double)i * 2;
			y[i] = (double)i * 2 + 1;
		}
		T_EQ_INT(stats_mannwhitney(x, 6, y, 40, STATS_MW_AUTO, &m), 0);
		T_EQ_INT(m.exact, 1);
		T_EQ_INT(stats_mannwhitney(x, 9, y, 9, STATS_MW_AUTO, &m), 0);
		T_EQ_INT(m.exact, 1);
		T_EQ_INT(stats_mannwhitney(x, 9, y, 11, STATS_MW_AUTO, &m), 0);
		T_EQ_INT(m.exact, 0);
		T_EQ_INT(stats_mannwhitney(x, 3, y, 51, STATS_MW_AUTO, &m), 0);
		T_EQ_INT(m.exact, 1);
		/* x[0..3) = 0, 2, 4 below all but y[0..2) of y's: U_x = 0 + 1 + 2;
		 * P(U <= 3) for 3 x 51 counted by hand: partitions of u <= 3 into
		 * at most 3 parts each <= 51: 1 + 1 + 2 + 3 = 7 of C(54, 3) */
		T_NEAR(m.u, 3, 0);
		T_NEAR(m.p, 2.0 * 7 / 24804, 1e-15);
		/* the same the other way round, and from the larger side */
		T_EQ_INT(stats_mannwhitney(y, 51, x, 3, STATS_MW_AUTO, &m), 0);
		T_EQ_INT(m.exact, 1);
		T_NEAR(m.p, 2.0 * 7 / 24804, 1e-15);
		T_EQ_INT(stats_mannwhitney(x, 3, y, 201, STATS_MW_AUTO, &m), 0);
		T_EQ_INT(m.exact, 0);
		T_EQ_INT(stats_mannwhitney(x, 8, y, 200, STATS_MW_AUTO, &m), 0);
		T_EQ_INT(m.exact, 1);
	}
	/* Exact refuses ties; degenerate and hostile input. */
	T_EQ_INT(stats_mannwhitney(mw_t3, 3, mw_t4, 4, STATS_MW_EXACT, &m), BF_ERR_INVALID);
	T_EQ_INT(stats_mannwhitney(mw_a3, 0, mw_b3, 3, STATS_MW_AUTO, &m), BF_ERR_INVALID);
	T_EQ_INT(stats_mannwhitney(bad, 2, mw_b3, 3, STATS_MW_AUTO, &m), BF_ERR_INVALID);
	T_EQ_INT(stats_mannwhitney(mw_a3, 3, mw_b3, 3, (enum stats_mw_method)7, &m), BF_ERR_INVALID);
}

static void
test_twolevel(void)
{
	struct stats_twolevel tl;
	static const double v1[] = { 1, 2, 3 }, bad[] = { 1, INFINITY };
	static const int b1[] = { 4, 4, 4 }, b3[] = { 1, 2, 3 }, b2[] = { 0, 1 };
	size_t i, m;

	for (i = 0; i < ARRLEN(tl_cases); i++) {
		const struct tl_case *k = &tl_cases[i];

		T_EQ_INT(stats_twolevel(k->v, k->b, k->n, &tl), 0);
		T_EQ_INT(tl.nboots, k->k);
		T_EQ_INT(tl.n, k->n);
		T_REL(tl.sw2, k->sw2, 1e-10);
		T_REL(tl.sb2, k->sb2, 1e-10);
		T_REL(tl.m_h, k->m_h, 1e-14);
		T_REL(tl.sigma_boot2, k->sig2, 1e-10);
		T_REL(tl.bm.mean, k->mean, 1e-13);
		T_REL(tl.bm.ci_lo, k->lo, 1e-12);
		T_REL(tl.bm.ci_hi, k->hi, 1e-12);
		T_EQ_INT(stats_optimal_iters(10, tl.sw2, tl.sigma_boot2, &m), 0);
		T_EQ_INT(m, k->mstar);
	}
	T_EQ_INT(stats_twolevel(tl_unb_v, tl_unb_b, ARRLEN(tl_unb_v), &tl), 0);
	T_EQ_INT(tl.m_min, 1);
	T_EQ_INT(tl.m_max, 5);
	/* One boot: no between-boot variance. */
	T_EQ_INT(stats_twolevel(v1, b1, 3, &tl), 0);
	T_EQ_INT(tl.nboots, 1);
	T_REL(tl.sw2, 1, 1e-15);
	T_CHECK(isnan(tl.sb2) && isnan(tl.sigma_boot2) && isnan(tl.bm.ci_lo));
	/* One iteration per boot: no within-boot variance. */
	T_EQ_INT(stats_twolevel(v1, b3, 3, &tl), 0);
	T_EQ_INT(tl.nboots, 3);
	T_CHECK(isnan(tl.sw2) && isnan(tl.sigma_boot2));
	T_REL(tl.sb2, 1, 1e-15);
	/* m*: sigma_boot^2 = 0 (boots add nothing) gives the cap; sw2 = 0 gives 1. */
	T_EQ_INT(stats_optimal_iters(10, 0.5, 0, &m), 0);
	T_EQ_INT(m, BF_MAX_ITERATIONS);
	T_EQ_INT(stats_optimal_iters(10, 0, 0.5, &m), 0);
	T_EQ_INT(m, 1);
	/* ceil(sqrt(100 * 4 / 1)) = 20 */
	T_EQ_INT(stats_optimal_iters(100, 4, 1, &m), 0);
	T_EQ_INT(m, 20);
	T_EQ_INT(stats_optimal_iters(0, 1, 1, &m), BF_ERR_INVALID);
	T_EQ_INT(stats_optimal_iters(1, NAN, 1, &m), BF_ERR_INVALID);
	T_EQ_INT(stats_twolevel(bad, b2, 2, &tl), BF_ERR_INVALID);
	T_EQ_INT(stats_twolevel(v1, NULL, 3, &tl), BF_ERR_INVALID);
	T_EQ_INT(stats_twolevel(v1, b1, 0, &tl), BF_ERR_INVALID);
}

/* Boot means: one per boot id, ascending, equal to stats_twolevel's. */
static void
test_boot_means(void)
{
	static const double v[] = { 10, 20, 11, 21, 12, 30, 22 };
	static const int b[] = { 7, 3, 7, 3, 7, 9, 3 };
	static const double bad[] = { 1, INFINITY };
	double means[7];
	struct stats_twolevel tl;
	struct stats_summary sm;
	size_t k;

	T_EQ_INT(stats_boot_means(v, b, 7, means, &k), 0);
	T_EQ_INT(k, 3);
	T_NEAR(means[0], 21, 1e-15);	/* boot 3 */
	T_NEAR(means[1], 11, 1e-15);	/* boot 7 */
	T_NEAR(means[2], 30, 0);	/* boot 9 */
	T_EQ_INT(stats_twolevel(v, b, 7, &tl), 0);
	T_EQ_INT(stats_summarize(means, k, &sm), 0);
	T_NEAR(sm.mean, tl.bm.mean, 0);
	T_NEAR(sm.var, tl.bm.var, 0);
	T_EQ_INT(stats_boot_means(bad, b, 2, means, &k), BF_ERR_INVALID);
	T_EQ_INT(stats_boot_means(v, NULL, 7, means, &k), BF_ERR_INVALID);
	T_EQ_INT(stats_boot_means(v, b, 0, means, &k), BF_ERR_INVALID);
}

/*
 * Magnitudes at both ends of the double range (issue 17): an sd of 5e158
 * is representable though its variance is not, and 1e-160 squares into
 * subnormals. Scaled by a power of two, every statistic is the same as for
 * the same data near 1 (times the scale where it has units).
 */
static void
test_extreme_scales(void)
{
	static const double base_a[] = { 1.00, 1.05, 0.95, 1.02, 0.98 };
	static const double base_b[] = { 1.10, 1.16, 1.04, 1.12, 1.08 };
	static const double scales[] = { 0x1p530, 0x1p-530, 0x1p1000, 0x1p-1000 };
	double a[5], b[5];
	struct stats_summary s1a, s1b, sa, sb;
	struct stats_compare c1, c;
	size_t i, k;

	T_OK(stats_summarize(base_a, 5, &s1a));
	T_OK(stats_summarize(base_b, 5, &s1b));
	T_OK(stats_compare(&s1a, &s1b, &c1));
	T_CHECK(c1.significant);
	for (k = 0; k < sizeof(scales) / sizeof(scales[0]); k++) {
		for (i = 0; i < 5; i++) {
			a[i] = base_a[i] * scales[k];
			b[i] = base_b[i] * scales[k];
		}
		T_OK(stats_summarize(a, 5, &sa));
		T_OK(stats_summarize(b, 5, &sb));
		T_CHECK(isfinite(sa.sd) && sa.sd > 0);
		T_NEAR(sa.sd / scales[k], s1a.sd, 1e-15);
		T_NEAR(sa.mean / scales[k], s1a.mean, 1e-15);
		T_NEAR(sa.cov, s1a.cov, 1e-12);
		T_CHECK(isfinite(sa.ci_lo) && isfinite(sa.ci_hi));
		T_NEAR(sa.ci_lo / scales[k], s1a.ci_lo, 1e-14);
		T_OK(stats_compare(&sa, &sb, &c));
		T_NEAR(c.welch.t, c1.welch.t, 1e-12);
		T_NEAR(c.welch.nu, c1.welch.nu, 1e-10);
		T_NEAR(c.welch.p, c1.welch.p, 1e-14);
		T_NEAR(c.pct.pct, c1.pct.pct, 1e-11);
		T_NEAR(c.pct.lo, c1.pct.lo, 1e-11);
		T_NEAR(c.pct.hi, c1.pct.hi, 1e-11);
		T_EQ_INT(c.pct.unbounded, 0);
		T_EQ_INT(c.significant, c1.significant);
	}
	/* 1e160 +- 5e158: the case, a finite sd and CoV */
	for (i = 0; i < 5; i++)
		a[i] = 1e160 + (base_a[i] - 1) * 1e160;
	T_OK(stats_summarize(a, 5, &sa));
	T_CHECK(isfinite(sa.sd) && isfinite(sa.cov));
	T_NEAR(sa.cov, s1a.cov, 1e-9);
	/* values of opposite sign near DBL_MAX: the difference of the means
	 * overflows; t is still finite */
	a[0] = -1e308; a[1] = -0.9e308; a[2] = -1.1e308;
	b[0] = 1e308; b[1] = 0.9e308; b[2] = 1.1e308;
	T_OK(stats_summarize(a, 3, &sa));
	T_OK(stats_summarize(b, 3, &sb));
	T_OK(stats_compare(&sa, &sb, &c));
	T_CHECK(isfinite(c.welch.t) && c.welch.t > 0);
	T_CHECK(c.welch.p < 0.001);
}

int
main(void)
{
	test_extreme_scales();
	test_quantiles();
	test_cdf();
	test_incbeta();
	test_summary();
	test_welch();
	test_mannwhitney();
	test_twolevel();
	test_boot_means();
	return t_done();
}
