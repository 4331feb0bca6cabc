/*
 * test_report_honest.c: the report's numbers are honest in every sign and
 * scale (issue 17): the mark from B's mean against A's and the direction,
 * (B-A)/|A|, digits that keep the CI's width (1e12 +- 1, 1e-9), p that
 * shows its side of 0.05, no mark below min_n, positive metrics (clipped
 * CI, log-ratio CI of change), two levels (fewer boots, equal boot means),
 * --stat median/min and Holm. Properties: swapping A and B inverts the
 * change and keeps the mark's meaning; scaling every sample by 10^k changes
 * no mark and no CI's relative width.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "recipe.h"
#include "report.h"
#include "stats.h"
#include "t.h"

static const struct report_cell cells2[] = { { .label = "A" }, { .label = "B" } };
static const int bl2[] = { -1, 0 };

/* A two-cell input (B against A) of one metric. */
static struct report_input
two(const struct report_metric *mt, struct report_series *s, const double *a, size_t na,
    const double *b, size_t nb)
{
	struct report_input in;

	memset(&in, 0, sizeof(in));
	s[0] = (struct report_series){ a, NULL, na };
	s[1] = (struct report_series){ b, NULL, nb };
	in.nmetrics = 1;
	in.metrics = mt;
	in.ncells = 2;
	in.cells = cells2;
	in.series = s;
	in.baseline_of = bl2;
	return in;
}

static struct report_model *
model(const struct report_input *in)
{
	struct report_model *m = NULL;
	struct bf_diag d;

	bf_diag_clear(&d);
	T_EQ_INT(report_compute(in, &m, &d), 0);
	if (m == NULL)
		fprintf(stderr, "report_compute: %s\n", d.msg);
	return m;
}

static char *
render(const struct report_input *in, const char *fmt)
{
	struct bf_diag d;
	struct buf b;
	char *s;

	buf_init(&b, 0);
	bf_diag_clear(&d);
	T_EQ_INT(report_render(in, fmt, &b, &d), 0);
	s = buf_steal(&b);
	buf_free(&b);
	if (getenv("BF_REPORT_PRINT") != NULL)
		printf("---- %s ----\n%s", fmt, s != NULL ? s : "");
	return s != NULL ? s : strdup("");
}

/* The line of s that starts with prefix, copied ("" when none). */
static char *
line_of(const char *s, const char *prefix)
{
	const char *p = s, *e;
	size_t n = strlen(prefix);

	for (; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, prefix, n) == 0) {
			e = strchr(p, '\n');
			return strndup(p, e != NULL ? (size_t)(e - p) : strlen(p));
		}
	return strdup("");
}

/* The seed's negative-baseline case: lower is better, -49.84 -> -52.35 is
 * better, and the change reads -5.04%, not +5.04% * worse. */
static void
test_inverted_sign(void)
{
	static const double a[] = { -49.80, -49.90, -49.75, -49.95, -49.80 };
	static const double b[] = { -52.30, -52.40, -52.35, -52.30, -52.40 };
	struct report_metric lower = { .name = "score", .higher_better = 0 };
	struct report_metric higher = { .name = "score", .higher_better = 1 };
	struct report_series s[2];
	struct report_input in = two(&lower, s, a, 5, b, 5);
	struct report_model *m = model(&in);
	const struct report_row *r;
	char *t, *l;

	if (m == NULL)
		return;
	r = &m->metrics[0].rows[1];
	/* (-52.35 - -49.84) / 49.84 */
	T_NEAR(r->cmp.pct.pct, 100 * (-52.35 + 49.84) / 49.84, 1e-9);
	T_NEAR(r->p, 3.2745225333687454e-10, 1e-19);	/* scipy ttest_ind(b, a, equal_var=False) */
	T_CHECK(r->cmp.pct.lo < r->cmp.pct.hi && r->cmp.pct.hi < 0);
	T_CHECK(r->cmp.significant);
	T_EQ_STR(r->mark, "* better");
	report_model_free(m);
	t = render(&in, "text");
	l = line_of(t, "B ");
	T_CONTAINS(l, "-5.04");
	T_CONTAINS(l, "* better");
	T_CHECK(strstr(l, "+5.04") == NULL);
	free(l);
	free(t);
	in.metrics = &higher;
	if ((m = model(&in)) != NULL) {
		T_EQ_STR(m->metrics[0].rows[1].mark, "* worse");
		report_model_free(m);
	}
}

/* 1e12 +- 1: the mean and CI keep the digits that tell the CI's ends apart,
 * and the change keeps two significant digits of its CI. */
static void
test_digits_1e12(void)
{
	static const double a[] = { 1e12 - 1, 1e12, 1e12 + 1, 1e12 - 0.5, 1e12 + 0.5 };
	static const double b[] = { 1e12 + 9, 1e12 + 10, 1e12 + 11, 1e12 + 9.5, 1e12 + 10.5 };
	struct report_metric mt = { .name = "bytes", .higher_better = 1 };
	struct report_series s[2];
	struct report_input in = two(&mt, s, a, 5, b, 5);
	/* wider than 100 columns without labels: labels on their own lines */
	char *t = render(&in, "text"), *la = line_of(t, "  1000000000000"),
	    *lb = line_of(t, "  1000000000010");
	char *md;

	T_CHECK(strstr(t, "1e+12") == NULL);
	T_CONTAINS(la, "1000000000000.00");
	T_CONTAINS(la, "[999999999999.02, 1000000000000.98]");
	/* +1e-9 %: a significant change must not print as +0.00 */
	T_CHECK(strstr(lb, "+0.00 ") == NULL);
	T_CONTAINS(lb, "+1.00e-09  [+8.8e-10, +1.12e-09]");
	T_CONTAINS(lb, "* better");
	free(la);
	free(lb);
	free(t);
	md = render(&in, "markdown");
	T_CONTAINS(md, "| 1000000000000.00 |");
	T_CONTAINS(md, "| +1.00e-09 |");
	free(md);
	/* CSV and JSON: full precision, the sample mean as it reads back */
	md = render(&in, "csv");
	T_CONTAINS(md, ",1000000000010,");
	free(md);
}

/* 1e-9 data with a 1e-12 spread: e-notation with the digits the CI needs. */
static void
test_digits_1e_9(void)
{
	double a[5], b[5];
	struct report_metric mt = { .name = "t", .unit = "s", .higher_better = 0 };
	struct report_series s[2];
	struct report_input in;
	char *t, *la, *lb;
	size_t i;

	for (i = 0; i < 5; i++) {
		a[i] = 1e-9 + 1e-12 * (double)i;
		b[i] = 1.01e-9 + 1e-12 * (double)i;
	}
	in = two(&mt, s, a, 5, b, 5);
	t = render(&in, "text");
	la = line_of(t, "A ");
	lb = line_of(t, "B ");
	T_CONTAINS(la, "1.0020e-09");
	T_CONTAINS(la, "[1.0000e-09, 1.0040e-09]");
	T_CHECK(strstr(t, "0.0000 ") == NULL);
	T_CONTAINS(lb, "+1.00  [+0.77, +1.23]");	/* 1.012/1.002 - 1 */
	T_CONTAINS(lb, "* worse");
	free(la);
	free(lb);
	free(t);
}

/* Welch p of B = A + d against A. */
static double
welch_p(const double *a, double d)
{
	struct stats_summary sa, sb;
	struct stats_compare c;
	double b[6];
	size_t i;

	for (i = 0; i < 6; i++)
		b[i] = a[i] + d;
	T_OK(stats_summarize(a, 6, &sa));
	T_OK(stats_summarize(b, 6, &sb));
	T_OK(stats_compare(&sa, &sb, &c));
	return c.welch.p;
}

/* p = 0.04996 prints 0.04996 and is marked; 0.05004 prints 0.05004, not. */
static void
test_p_near_005(void)
{
	static const double a[] = { 10.0, 10.3, 9.8, 10.1, 9.9, 10.4 };
	static const double want[] = { 0.04996, 0.05004 };
	static const char *const shown[] = { "0.04996", "0.05004" };
	struct report_metric mt = { .name = "x", .higher_better = 1 };
	struct report_series s[2];
	struct report_input in;
	double lo, hi, mid, b[6];
	char *t, *l;
	size_t k, i, it;

	for (k = 0; k < 2; k++) {
		/* p falls as d grows: bisect d to p = want[k] within 1e-7 */
		lo = 0;
		hi = 2;
		for (it = 0; it < 200; it++) {
			mid = (lo + hi) / 2;
			if (welch_p(a, mid) > want[k])
				lo = mid;
			else
				hi = mid;
		}
		T_NEAR(welch_p(a, lo), want[k], 1e-7);
		for (i = 0; i < 6; i++)
			b[i] = a[i] + lo;
		in = two(&mt, s, a, 6, b, 6);
		t = render(&in, "text");
		l = line_of(t, "B ");
		T_CONTAINS(l, shown[k]);
		T_CHECK(strstr(l, "0.0500 ") == NULL);
		if (k == 0)
			T_CONTAINS(l, "* better");
		else
			T_CHECK(strstr(l, "* better") == NULL);
		free(l);
		free(t);
	}
}

/* n = 2 a side: "low n", never a mark; --min-n 2 allows it. */
static void
test_low_n(void)
{
	static const double a[] = { 10.0, 10.1 }, b[] = { 20.0, 20.1 };
	static const double a3[] = { 10.0, 10.1, 10.05 }, b3[] = { 20.0, 20.1, 20.05 };
	struct report_metric mt = { .name = "x", .higher_better = 1 };
	struct report_series s[2];
	struct report_input in = two(&mt, s, a, 2, b, 2);
	struct report_model *m;
	char *t, *l;

	if ((m = model(&in)) != NULL) {
		T_CHECK(m->metrics[0].rows[1].low_n);
		T_CHECK(!m->metrics[0].rows[1].cmp.significant);
		T_EQ_STR(m->metrics[0].rows[1].mark, "low n");
		report_model_free(m);
	}
	t = render(&in, "text");
	l = line_of(t, "B ");
	T_CONTAINS(l, "low n");
	T_CHECK(strstr(t, "* better") == NULL || strstr(t, "* better") > strstr(t, "\n\n%"));
	T_CONTAINS(t, "\"low n\": fewer than 3 independent samples");
	free(l);
	free(t);
	in.min_n = 2;
	if ((m = model(&in)) != NULL) {
		T_EQ_STR(m->metrics[0].rows[1].mark, "* better");
		report_model_free(m);
	}
	in = two(&mt, s, a3, 3, b3, 3);
	if ((m = model(&in)) != NULL) {
		T_EQ_STR(m->metrics[0].rows[1].mark, "* better");
		report_model_free(m);
	}
	in.min_n = 4;
	if ((m = model(&in)) != NULL) {
		T_EQ_STR(m->metrics[0].rows[1].mark, "low n");
		report_model_free(m);
	}
}

/* A tiny deterministic generator for the property tests. */
static double
lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) / 9007199254740992.0;
}

/* Swapping A and B: the change's sign inverts, and the mark's meaning is
 * kept: B better than A iff A worse than B. Negative means included. */
static void
test_prop_swap(void)
{
	struct report_metric mt[2] = { { .name = "x", .higher_better = 1 },
		{ .name = "y", .higher_better = 0 } };
	struct report_series s[2];
	struct report_input in;
	struct report_model *m1, *m2;
	double a[8], b[8], base, shift;
	uint64_t seed = 17;
	size_t k, i, d, marked = 0;

	for (k = 0; k < 200; k++) {
		base = (lcg(&seed) - 0.5) * 200;
		shift = (lcg(&seed) - 0.5) * 0.2 * fabs(base);
		for (i = 0; i < 8; i++) {
			a[i] = base + (lcg(&seed) - 0.5) * 0.05 * fabs(base);
			b[i] = base + shift + (lcg(&seed) - 0.5) * 0.05 * fabs(base);
		}
		d = k % 2;
		in = two(&mt[d], s, a, 8, b, 8);
		m1 = model(&in);
		in = two(&mt[d], s, b, 8, a, 8);
		m2 = model(&in);
		if (m1 != NULL && m2 != NULL) {
			const struct report_row *r1 = &m1->metrics[0].rows[1];
			const struct report_row *r2 = &m2->metrics[0].rows[1];

			T_CHECK((r1->cmp.pct.pct > 0) == (r2->cmp.pct.pct < 0));
			T_CHECK((r1->cmp.pct.pct > 0) == (r1->stat_value > r1->beff_stat));
			T_EQ_INT(r1->cmp.significant, r2->cmp.significant);
			if (strcmp(r1->mark, "* better") == 0)
				T_EQ_STR(r2->mark, "* worse");
			else if (strcmp(r1->mark, "* worse") == 0)
				T_EQ_STR(r2->mark, "* better");
			else
				T_EQ_STR(r2->mark, "");
			marked += r1->cmp.significant;
		}
		report_model_free(m1);
		report_model_free(m2);
	}
	T_CHECK(marked > 20 && marked < 190);	/* both kinds of case were tested */
}

/* Scaling every sample by 10^k, k in -150..150: no mark changes, no CI's
 * relative width, no % change; positive metrics (log ratio) too. */
static void
test_prop_scale(void)
{
	static const double a0[] = { 3.1, 3.3, 2.9, 3.0, 3.2, 3.15 };
	static const double b0[] = { 3.4, 3.5, 3.3, 3.6, 3.45, 3.5 };
	static const double c0[] = { 3.12, 3.28, 2.95, 3.05, 3.2, 3.1 };
	struct report_metric mt = { .name = "x", .higher_better = 0 };
	static const struct report_cell c3[] = { { .label = "A" }, { .label = "B" }, { .label = "C" } };
	static const int bl3[] = { -1, 0, 0 };
	struct report_series s[3];
	struct report_input in;
	struct report_model *m, *ref = NULL;
	double a[6], b[6], c[6], f;
	int k, pos;
	size_t i, j;

	for (pos = 0; pos < 2; pos++) {
		mt.positive = pos;
		for (k = -150; k <= 150; k += 15) {
			f = pow(10, k);
			for (i = 0; i < 6; i++) {
				a[i] = a0[i] * f;
				b[i] = b0[i] * f;
				c[i] = c0[i] * f;
			}
			memset(&in, 0, sizeof(in));
			s[0] = (struct report_series){ a, NULL, 6 };
			s[1] = (struct report_series){ b, NULL, 6 };
			s[2] = (struct report_series){ c, NULL, 6 };
			in.nmetrics = 1;
			in.metrics = &mt;
			in.ncells = 3;
			in.cells = c3;
			in.series = s;
			in.baseline_of = bl3;
			if ((m = model(&in)) == NULL)
				continue;
			if (k == -150) {
				ref = m;
				T_EQ_STR(m->metrics[0].rows[1].mark, "* worse");
				T_EQ_STR(m->metrics[0].rows[2].mark, "");
				T_EQ_INT(m->metrics[0].rows[1].log_ratio, pos);
				continue;
			}
			for (j = 0; j < 3 && ref != NULL; j++) {
				const struct report_row *r = &m->metrics[0].rows[j];
				const struct report_row *q = &ref->metrics[0].rows[j];

				T_EQ_STR(r->mark, q->mark);
				T_NEAR((r->stat_hi - r->stat_lo) / r->stat_value,
				    (q->stat_hi - q->stat_lo) / q->stat_value, 1e-9);
				T_NEAR(r->eff.cov, q->eff.cov, 1e-9);
				if (j > 0) {
					T_NEAR(r->cmp.pct.pct, q->cmp.pct.pct, 1e-9);
					T_NEAR(r->cmp.pct.lo, q->cmp.pct.lo, 1e-9);
					T_NEAR(r->cmp.pct.hi, q->cmp.pct.hi, 1e-9);
					T_NEAR(r->p, q->p, 1e-12);
				}
			}
			report_model_free(m);
		}
		report_model_free(ref);
		ref = NULL;
	}
}

/* 1e+-150 in the text: finite, and the same marks and changes as at 1. */
static void
test_extreme_text(void)
{
	static const double a0[] = { 1.0, 1.2, 0.9, 1.1, 1.05 };
	static const double b0[] = { 1.5, 1.4, 1.6, 1.55, 1.45 };
	struct report_metric mt = { .name = "x", .higher_better = 1 };
	struct report_series s[2];
	struct report_input in;
	double a[5], b[5];
	static const double f[] = { 1e150, 1e-150 };
	char *t, *l;
	size_t i, k;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < 5; i++) {
			a[i] = a0[i] * f[k];
			b[i] = b0[i] * f[k];
		}
		in = two(&mt, s, a, 5, b, 5);
		t = render(&in, "text");
		l = line_of(t, "B ");
		T_CONTAINS(l, "+42.86");	/* 1.5 / 1.05 - 1 */
		T_CONTAINS(l, "* better");
		T_CHECK(strstr(t, "inf") == NULL && strstr(t, "nan") == NULL);
		T_CHECK(strstr(l, "no var") == NULL);
		T_CONTAINS(l, k == 0 ? "e+150" : "e-150");
		free(l);
		free(t);
	}
}

/* Positive metrics: a t CI below 0 is clipped (said so); the CI of change
 * comes from the log ratio and stays above -100%. */
static void
test_positive(void)
{
	static const double a[] = { 5, 95, 40, 10 }, b[] = { 1, 2, 1.5, 1.2 };
	struct report_metric mt = { .name = "t", .unit = "s", .higher_better = 0,
		.positive = 1 };
	struct report_metric raw = { .name = "t", .unit = "s", .higher_better = 0 };
	struct report_series s[2];
	struct report_input in = two(&mt, s, a, 4, b, 4);
	struct report_model *m;
	const struct report_row *r;
	double ln, va, vb, se, nu, tq;
	struct stats_summary sa, sb;
	char *t;

	if ((m = model(&in)) == NULL)
		return;
	T_CHECK(m->metrics[0].rows[0].ci_clipped);
	T_NEAR(m->metrics[0].rows[0].stat_lo, 0, 0);
	r = &m->metrics[0].rows[1];
	T_CHECK(r->log_ratio);
	T_CHECK(r->cmp.pct.lo > -100 && r->cmp.pct.hi > r->cmp.pct.lo);
	/* the delta-method log ratio, computed here from the summaries */
	T_OK(stats_summarize(a, 4, &sa));
	T_OK(stats_summarize(b, 4, &sb));
	ln = log(sb.mean / sa.mean);
	va = sa.var / (4 * sa.mean * sa.mean);
	vb = sb.var / (4 * sb.mean * sb.mean);
	se = sqrt(va + vb);
	nu = (va + vb) * (va + vb) / (va * va / 3 + vb * vb / 3);
	T_OK(stats_t_quantile(0.975, nu, &tq));
	T_NEAR(r->cmp.pct.lo, 100 * (exp(ln - tq * se) - 1), 1e-9);
	T_NEAR(r->cmp.pct.hi, 100 * (exp(ln + tq * se) - 1), 1e-9);
	/* and as scipy 1.10 gives them (t.ppf(0.975, nu), ttest_ind(equal_var=False)) */
	T_NEAR(r->cmp.pct.lo, -99.2994725397903, 1e-9);
	T_NEAR(r->cmp.pct.hi, -79.38696079711504, 1e-9);
	T_NEAR(r->p, 0.17921281351541485, 1e-12);
	T_NEAR(m->metrics[0].rows[0].eff.ci_hi, 103.26841820030306, 1e-9);
	report_model_free(m);
	t = render(&in, "text");
	T_CONTAINS(t, "[0.000, 103.268]c");
	T_CONTAINS(t, "]c");
	T_CONTAINS(t, "]l");
	T_CONTAINS(t, "is clipped\n  at 0.");
	T_CONTAINS(t, "log scale");
	free(t);
	/* without "positive": Fieller goes below -100%, the CI below 0 */
	in.metrics = &raw;
	if ((m = model(&in)) != NULL) {
		T_CHECK(m->metrics[0].rows[0].stat_lo < 0);
		T_CHECK(!m->metrics[0].rows[1].log_ratio);
		report_model_free(m);
	}
	/* a sample <= 0 in a positive metric: the plain t CI and Fieller */
	{
		static const double z[] = { 0, 1, 2, 3 };

		in = two(&mt, s, z, 4, b, 4);
		if ((m = model(&in)) != NULL) {
			T_CHECK(m->metrics[0].rows[1].nonpos);
			T_CHECK(!m->metrics[0].rows[1].log_ratio);
			report_model_free(m);
		}
	}
}

/* Two levels: a one-boot cell against a three-boot baseline is flagged,
 * not marked; equal boot means say so instead of a zero-width CI. */
static void
test_two_levels(void)
{
	static const double a[] = { 100, 101, 102, 110, 111, 112, 120, 121, 122 };
	static const int ab[] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 };
	static const double b[] = { 200, 201, 202, 200.5, 201.5, 199 };
	static const double e[] = { 10, 11, 12, 12, 11, 10, 11, 10, 12 };
	struct report_metric mt = { .name = "x", .higher_better = 1 };
	struct report_series s[2] = { { a, ab, 9 }, { b, NULL, 6 } };
	struct report_input in;
	struct report_model *m;
	char *t, *l;

	memset(&in, 0, sizeof(in));
	in.nmetrics = 1;
	in.metrics = &mt;
	in.ncells = 2;
	in.cells = cells2;
	in.series = s;
	in.baseline_of = bl2;
	if ((m = model(&in)) != NULL) {
		T_CHECK(m->metrics[0].rows[1].fewer_boots);
		T_EQ_STR(m->metrics[0].rows[1].mark, "fewer boots");
		T_CHECK(!m->metrics[0].rows[1].cmp.significant);
		report_model_free(m);
	}
	t = render(&in, "text");
	T_CONTAINS(t, "boots x iter");
	T_CONTAINS(t, "3x3");
	T_CONTAINS(t, "1x6");
	T_CONTAINS(t, "CoV% between");
	T_CONTAINS(t, "CoV% within");
	T_CONTAINS(t, "CI dof");
	T_CONTAINS(t, "\"fewer boots\": the cell has fewer boots");
	free(t);
	/* every boot's mean is 11 */
	s[0] = (struct report_series){ e, ab, 9 };
	s[1] = (struct report_series){ e, ab, 9 };
	if ((m = model(&in)) != NULL) {
		T_CHECK(m->metrics[0].rows[0].boots_equal);
		T_NEAR(m->metrics[0].rows[0].cov_within, 100 * 1 / 11.0, 1e-12);
		report_model_free(m);
	}
	t = render(&in, "text");
	l = line_of(t, "  11.00");	/* too wide for labels: they go above */
	T_CONTAINS(l, "boot means equal; iterations vary (CoV 9.09%)");
	T_CHECK(strstr(t, "no var") == NULL || strstr(t, "no var") > strstr(t, "\n\n%"));
	free(l);
	free(t);
}

/* Holm: stats_holm against hand-computed values; in a report, the
 * adjusted p is shown and marks use it. */
static void
test_holm(void)
{
	static const double p[] = { 0.01, 0.04, 0.03, 0.005 };
	/* sorted 0.005 0.01 0.03 0.04 -> 4x, 3x, 2x, 1x, running max */
	static const double want[] = { 0.03, 0.06, 0.06, 0.02 };
	static const double bad[] = { 0.5, 1.5 };
	double adj[4];
	size_t i;

	T_EQ_INT(stats_holm(p, 4, adj), 0);
	for (i = 0; i < 4; i++)
		T_NEAR(adj[i], want[i], 1e-15);
	T_EQ_INT(stats_holm(bad, 2, adj), BF_ERR_INVALID);
	T_EQ_INT(stats_holm(NULL, 0, NULL), 0);
	{
		static const double a[] = { 10.0, 10.3, 9.8, 10.1, 9.9, 10.4 };
		static const struct report_cell c4[] = { { .label = "A" }, { .label = "B" }, { .label = "C" },
			{ .label = "D" } };
		static const int bl4[] = { -1, 0, 0, 0 };
		struct report_metric mt = { .name = "x", .higher_better = 1 };
		double b[6], c[6], d[6];
		struct report_series s[4];
		struct report_input in;
		struct report_model *m, *m0;
		char *t;

		for (i = 0; i < 6; i++) {
			b[i] = a[i] + 0.5;	/* p ~ 0.01 */
			c[i] = a[i] + 0.35;	/* p ~ 0.04 */
			d[i] = a[i] + 0.02;
		}
		memset(&in, 0, sizeof(in));
		s[0] = (struct report_series){ a, NULL, 6 };
		s[1] = (struct report_series){ b, NULL, 6 };
		s[2] = (struct report_series){ c, NULL, 6 };
		s[3] = (struct report_series){ d, NULL, 6 };
		in.nmetrics = 1;
		in.metrics = &mt;
		in.ncells = 4;
		in.cells = c4;
		in.series = s;
		in.baseline_of = bl4;
		m0 = model(&in);
		in.adjust = REPORT_ADJUST_HOLM;
		m = model(&in);
		if (m != NULL && m0 != NULL) {
			double raw[3], ha[3];

			for (i = 0; i < 3; i++)
				raw[i] = m0->metrics[0].rows[i + 1].p;
			T_OK(stats_holm(raw, 3, ha));
			for (i = 0; i < 3; i++) {
				T_CHECK(m->metrics[0].rows[i + 1].has_padj);
				T_NEAR(m->metrics[0].rows[i + 1].p_adj, ha[i], 1e-15);
				T_EQ_INT(m->metrics[0].rows[i + 1].cmp.significant,
				    m0->metrics[0].rows[i + 1].cmp.significant && ha[i] < 0.05);
			}
			T_EQ_INT(m->nadjusted, 3);
			/* the one between 0.025 and 0.05 loses its mark */
			T_CHECK(raw[1] < 0.05 && ha[1] >= 0.05);
			T_EQ_STR(m0->metrics[0].rows[2].mark, "* better");
			T_EQ_STR(m->metrics[0].rows[2].mark, "");
		}
		report_model_free(m);
		report_model_free(m0);
		t = render(&in, "text");
		T_CONTAINS(t, "Welch p (Holm)");
		T_CONTAINS(t, "Holm-Bonferroni adjustment over the 3\n  comparisons");
		free(t);
		t = render(&in, "json");
		T_CONTAINS(t, "\"p_holm\": ");
		free(t);
	}
}

/* --stat median: a bootstrap CI, the same on every run; min: none. */
static void
test_stat(void)
{
	static const double a[] = { 10, 11, 12, 13, 14, 15, 16, 50 };
	static const double b[] = { 20, 21, 22, 23, 24, 25, 26, 90 };
	struct report_metric mt = { .name = "x", .higher_better = 0 };
	struct report_series s[2];
	struct report_input in = two(&mt, s, a, 8, b, 8);
	struct report_model *m;
	char *t1, *t2;

	in.stat = REPORT_STAT_MEDIAN;
	if ((m = model(&in)) != NULL) {
		const struct report_row *r = &m->metrics[0].rows[0];

		T_NEAR(r->stat_value, 13.5, 0);
		T_CHECK(r->stat_lo >= 10 && r->stat_lo <= 13.5 && r->stat_hi >= 13.5 &&
		    r->stat_hi <= 50);
		r = &m->metrics[0].rows[1];
		T_NEAR(r->cmp.pct.pct, 100 * (23.5 - 13.5) / 13.5, 1e-12);
		T_CHECK(r->cmp.pct.lo < r->cmp.pct.pct && r->cmp.pct.pct < r->cmp.pct.hi);
		T_NEAR(r->p, r->mw.p, 0);
		T_NEAR(r->p, 0.006993006993006993, 1e-15);	/* scipy mannwhitneyu(b, a) */
		T_EQ_STR(r->mark, "* worse");
		report_model_free(m);
	}
	t1 = render(&in, "text");
	t2 = render(&in, "text");
	T_EQ_STR(t1, t2);
	T_CONTAINS(t1, "median");
	T_CONTAINS(t1, "MW p");
	T_CONTAINS(t1, "seed 17");
	free(t1);
	free(t2);
	in.stat = REPORT_STAT_MIN;
	if ((m = model(&in)) != NULL) {
		const struct report_row *r = &m->metrics[0].rows[1];

		T_NEAR(r->stat_value, 20, 0);
		T_CHECK(isnan(r->stat_lo) && isnan(r->cmp.pct.lo) && isnan(r->p));
		T_NEAR(r->cmp.pct.pct, 100, 1e-12);
		T_EQ_STR(r->mark, "");
		report_model_free(m);
	}
	t1 = render(&in, "text");
	T_CONTAINS(t1, "--stat min: the smallest sample");
	free(t1);
}

/* stats_boot_median: the same seed the same CI, constant data a point,
 * an interval within the data; bad input refused. */
static void
test_boot_median(void)
{
	static const double c[] = { 7, 7, 7, 7, 7 }, a[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	static const double two[] = { 1, 2 };
	struct stats_boot b1, b2, b3;

	T_EQ_INT(stats_boot_median(c, 5, NULL, 0, 500, 1, 0.95, &b1), 0);
	T_NEAR(b1.lo, 7, 0);
	T_NEAR(b1.hi, 7, 0);
	T_EQ_INT(stats_boot_median(a, 10, c, 5, 2000, 17, 0.95, &b1), 0);
	T_EQ_INT(stats_boot_median(a, 10, c, 5, 2000, 17, 0.95, &b2), 0);
	T_EQ_INT(stats_boot_median(a, 10, c, 5, 2000, 18, 0.95, &b3), 0);
	T_CHECK(b1.lo == b2.lo && b1.hi == b2.hi && b1.pct_lo == b2.pct_lo &&
	    b1.pct_hi == b2.pct_hi && b1.pct_unbounded == b2.pct_unbounded);
	/* another seed: the medians of 1..10 are few values, so the same CI */
	T_CHECK(b3.lo >= 1 && b3.hi <= 10);
	T_CHECK(b1.lo >= 1 && b1.lo < 5.5 && b1.hi > 5.5 && b1.hi <= 10);
	/* 7 against medians of 1..10 resampled: 100 (7 - m)/m, m in [1, 10] */
	T_CHECK(b1.pct_lo >= -30 && b1.pct_hi <= 600 && b1.pct_lo < 27.3 && b1.pct_hi > 27.3);
	T_EQ_INT(stats_boot_median(two, 2, NULL, 0, 1000, 3, 0.95, &b1), 0);
	T_CHECK(b1.lo >= 1 && b1.hi <= 2 && b1.lo < b1.hi);
	T_EQ_INT(stats_boot_median(NULL, 3, NULL, 0, 100, 1, 0.95, &b1), BF_ERR_INVALID);
	T_EQ_INT(stats_boot_median(a, 10, NULL, 0, 1, 1, 0.95, &b1), BF_ERR_INVALID);
	T_EQ_INT(stats_boot_median(a, 10, NULL, 0, 100, 1, 1.0, &b1), BF_ERR_INVALID);
}

/* The recipe's "positive": a bool, defaulted by source and unit. */
static void
test_recipe_positive(void)
{
	static const char *const good =
	    "{\"name\": \"r\", \"command\": [\"/bin/true\"], \"metrics\": ["
	    "{\"name\": \"wall_s\", \"unit\": \"s\", \"better\": \"lower\", \"source\": \"wall_s\"},"
	    "{\"name\": \"ops\", \"unit\": \"ops/s\", \"better\": \"higher\", \"source\": \"stdout\","
	    " \"regex\": \"([0-9.]+)\"},"
	    "{\"name\": \"score\", \"better\": \"higher\", \"source\": \"stdout\","
	    " \"regex\": \"s=([0-9.-]+)\"},"
	    "{\"name\": \"n\", \"better\": \"higher\", \"source\": \"stdout\","
	    " \"regex\": \"n=([0-9]+)\", \"positive\": true},"
	    "{\"name\": \"w\", \"unit\": \"s\", \"better\": \"lower\", \"source\": \"wall_s\","
	    " \"positive\": false}]}";
	static const char *const bad =
	    "{\"name\": \"r\", \"command\": [\"/bin/true\"], \"metrics\": ["
	    "{\"name\": \"wall_s\", \"better\": \"lower\", \"source\": \"wall_s\","
	    " \"positive\": \"yes\"}]}";
	struct recipe *rc = NULL;
	struct bf_diag d;

	bf_diag_clear(&d);
	T_EQ_INT(recipe_parse(good, strlen(good), &rc, &d), 0);
	if (rc != NULL) {
		T_EQ_INT(rc->nmetrics, 5);
		T_EQ_INT(rc->metrics[0].positive, 1);
		T_EQ_INT(rc->metrics[1].positive, 1);
		T_EQ_INT(rc->metrics[2].positive, 0);
		T_EQ_INT(rc->metrics[3].positive, 1);
		T_EQ_INT(rc->metrics[4].positive, 0);
		recipe_free(rc);
		rc = NULL;
	} else {
		fprintf(stderr, "recipe_parse: %s\n", d.msg);
	}
	bf_diag_clear(&d);
	T_EQ_INT(recipe_parse(bad, strlen(bad), &rc, &d), BF_ERR_INVALID);
	T_CHECK(rc == NULL);
	T_CONTAINS(d.field, "positive");
	recipe_free(rc);
}

int
main(void)
{
	test_inverted_sign();
	test_digits_1e12();
	test_digits_1e_9();
	test_p_near_005();
	test_low_n();
	test_prop_swap();
	test_prop_scale();
	test_extreme_text();
	test_positive();
	test_two_levels();
	test_holm();
	test_stat();
	test_boot_median();
	test_recipe_positive();
	return t_done();
}
