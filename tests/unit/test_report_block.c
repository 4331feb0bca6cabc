/*
 * test_report_block.c: the pooled comparison of a machines.spread "block"
 * job (report-block.h) against values worked out here without the stats
 * module: the t quantiles from the table (4.302652729749464 for 2 dof,
 * tan(0.475 pi) for 1 dof) and the closed-form t tails for 1 and 2 dof
 * (p = 1 - 2/pi atan|t|; p = 1 - |t| / sqrt(2 + t^2)); then the marks by
 * direction, low n, a mean <= 0, a machine without the cell, no spread.
 */
#include <math.h>
#include <string.h>

#include "err.h"
#include "report-block.h"
#include "t.h"

#define T975_2	4.302652729749464	/* Student t, 0.975 quantile, 2 dof */

/* mean and sd of three logs, by the two-pass formula */
static void
hand3(const double *a, const double *b, double *mean, double *sd)
{
	double l[3], s = 0, q = 0;
	int i;

	for (i = 0; i < 3; i++)
		s += l[i] = log(b[i] / a[i]);
	*mean = s / 3;
	for (i = 0; i < 3; i++)
		q += (l[i] - *mean) * (l[i] - *mean);
	*sd = sqrt(q / 2);
}

static void
test_three(void)
{
	/* ratios 1.10, 1.05, 1.12: B is slower on every machine */
	static const double a[] = { 100, 200, 50 }, b[] = { 110, 210, 56 };
	struct report_block_res r;
	double m, sd, se, t;

	hand3(a, b, &m, &sd);
	se = sd / sqrt(3);
	t = m / se;
	T_EQ_INT(report_block_pool(a, b, 3, 0, 0, 0, &r), 0);
	T_EQ_INT(r.n, 3);
	T_NEAR(r.ratio, exp(m), 1e-12);
	T_NEAR(r.ratio, cbrt(1.1 * 1.05 * 1.12), 1e-12);	/* the geometric mean */
	T_NEAR(r.lo, exp(m - T975_2 * se), 1e-10);
	T_NEAR(r.hi, exp(m + T975_2 * se), 1e-10);
	T_NEAR(r.pct, 100 * (exp(m) - 1), 1e-9);
	T_NEAR(r.pct_lo, 100 * (exp(m - T975_2 * se) - 1), 1e-8);
	T_NEAR(r.p, 1 - t / sqrt(2 + t * t), 1e-10);
	T_CHECK(r.p < 0.05 && r.p > 0.04);	/* 0.0467: just significant */
	T_CHECK(r.sig);
	T_EQ_STR(r.mark, "worse");		/* lower is better, B higher */
	T_CHECK(r.note == NULL);
	/* higher is better: the same change is better */
	T_EQ_INT(report_block_pool(a, b, 3, 1, 0, 0, &r), 0);
	T_EQ_STR(r.mark, "better");
	/* swapped: the ratio inverts, the mark's meaning stays */
	T_EQ_INT(report_block_pool(b, a, 3, 0, 0, 0, &r), 0);
	T_NEAR(r.ratio, exp(-m), 1e-12);
	T_EQ_STR(r.mark, "better");
	/* a counter: no mark, numbers all the same */
	T_EQ_INT(report_block_pool(a, b, 3, 0, 1, 0, &r), 0);
	T_EQ_STR(r.mark, "");
	T_NEAR(r.p, 1 - t / sqrt(2 + t * t), 1e-10);
	/* min_n 4: three machines are too few for a mark */
	T_EQ_INT(report_block_pool(a, b, 3, 0, 0, 4, &r), 0);
	T_EQ_STR(r.mark, "low n");
	T_CHECK(!r.sig);
	/* decimals: half-width of the % change CI (about 8.9) needs 2 */
	T_EQ_INT(report_block_pool(a, b, 3, 0, 0, 0, &r), 0);
	T_EQ_INT(report_block_decimals(&r), 2);
}

static void
test_two(void)
{
	/* two machines: 1 dof, t quantile tan(0.475 pi) = 12.706 */
	static const double a[] = { 10, 20 }, b[] = { 12, 22 };
	struct report_block_res r;
	double l0 = log(1.2), l1 = log(1.1), m = (l0 + l1) / 2;
	double sd = fabs(l0 - l1) / sqrt(2), se = sd / sqrt(2), tq = tan(0.475 * M_PI);
	double t = m / se;

	T_EQ_INT(report_block_pool(a, b, 2, 0, 0, 0, &r), 0);
	T_EQ_INT(r.n, 2);
	T_NEAR(r.ratio, sqrt(1.2 * 1.1), 1e-12);
	T_NEAR(r.lo, exp(m - tq * se), 1e-9);
	T_NEAR(r.hi, exp(m + tq * se), 1e-9);
	T_NEAR(r.p, 1 - 2 / M_PI * atan(t), 1e-10);
	T_EQ_STR(r.mark, "low n");	/* 2 < 3 machines */
	T_CHECK(!r.sig);
}

static void
test_edges(void)
{
	static const double a[] = { 10, NAN, 10, 10 }, b[] = { 11, 5, 11, 11 };
	static const double neg[] = { -1, 2 }, pos[] = { 1, 2 };
	double one_a = 4, one_b = 5;
	struct report_block_res r;

	/* a machine without the cell is left out; equal ratios: no spread */
	T_EQ_INT(report_block_pool(a, b, 4, 0, 0, 0, &r), 0);
	T_EQ_INT(r.n, 3);
	T_NEAR(r.ratio, 1.1, 1e-12);
	T_NEAR(r.lo, 1.1, 1e-12);
	T_NEAR(r.hi, 1.1, 1e-12);
	T_NEAR(r.p, 0, 0);
	T_EQ_STR(r.mark, "worse");
	/* a mean <= 0 has no log ratio: not pooled, said so */
	T_EQ_INT(report_block_pool(neg, pos, 2, 0, 0, 0, &r), 0);
	T_CHECK(isnan(r.ratio) && r.note != NULL);
	T_CONTAINS(r.note, "<= 0");
	T_EQ_STR(r.mark, "");
	/* one machine: a ratio, no CI, no test */
	T_EQ_INT(report_block_pool(&one_a, &one_b, 1, 0, 0, 0, &r), 0);
	T_NEAR(r.ratio, 1.25, 1e-12);
	T_CHECK(isnan(r.lo) && isnan(r.p));
	T_EQ_STR(r.mark, "low n");
	/* nothing in common */
	T_EQ_INT(report_block_pool(a + 1, b + 1, 1, 0, 0, 0, &r), 0);
	T_EQ_INT(r.n, 0);
	T_CHECK(r.note != NULL);
	T_EQ_INT(report_block_pool(a, b, REPORT_BLOCK_MAX + 1, 0, 0, 0, &r), BF_ERR_INVALID);
	T_EQ_INT(report_block_pool(NULL, b, 1, 0, 0, 0, &r), BF_ERR_INVALID);
}

/* scaling every mean by 10^k changes no ratio, CI or p */
static void
test_scale(void)
{
	static const double a0[] = { 100, 200, 50 }, b0[] = { 110, 210, 56 };
	struct report_block_res r0, r;
	double a[3], b[3], f;
	int k, i;

	T_EQ_INT(report_block_pool(a0, b0, 3, 0, 0, 0, &r0), 0);
	for (k = -150; k <= 150; k += 50) {
		f = pow(10, k);
		for (i = 0; i < 3; i++) {
			a[i] = a0[i] * f;
			b[i] = b0[i] * f;
		}
		T_EQ_INT(report_block_pool(a, b, 3, 0, 0, 0, &r), 0);
		T_NEAR(r.ratio, r0.ratio, 1e-12);
		T_NEAR(r.p, r0.p, 1e-9);
		T_EQ_STR(r.mark, r0.mark);
	}
}

int
main(void)
{
	test_three();
	test_two();
	test_edges();
	test_scale();
	return t_done();
}
