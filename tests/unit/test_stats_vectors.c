/*
 * test_stats_vectors.c: common/stats.c and the JSON report against the
 * scipy/mpmath reference values in tests/stats/vectors.json (made by
 * tests/stats/gen_vectors.py; found through $BF_SRC, which ctest sets).
 * Every value must agree to 1e-9 relative, or 1e-9 of the quantity's scale
 * when it is near 0 (a CI bound of data around 0, a t near 0). Undefined
 * values (JSON null) must be NAN here and null in the report. Prints the
 * worst relative error of each quantity; BF_VECTORS=path overrides the file.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "report.h"
#include "stats.h"
#include "t.h"

#define TOL		1e-9

enum { Q_MEAN, Q_SD, Q_COV, Q_CI, Q_T, Q_DF, Q_P, Q_PCT, Q_PCTCI, Q_U, Q_MWP, NQ };
static const char *const q_name[NQ] = {
	"mean", "sd", "cov", "ci", "welch t", "welch df", "welch p", "pct",
	"pct ci", "mw u", "mw p"
};
static double worst[NQ];
static const char *worst_case[NQ];
static const char *cur_case;

/* got vs the JSON reference exp (a number or null) of quantity q. */
static void
check(const char *what, double got, const json_t *exp, int q, double scale)
{
	double e, err, rel;

	t_checks++;
	if (exp == NULL || json_is_null(exp)) {
		if (!isnan(got)) {
			t_fails++;
			fprintf(stderr, "%s: %s = %.17g, expected undefined (NAN)\n", cur_case,
			    what, got);
		}
		return;
	}
	if (!json_is_number(exp)) {
		t_fails++;
		fprintf(stderr, "%s: %s: the reference is not a number\n", cur_case, what);
		return;
	}
	e = json_number_value(exp);
	err = fabs(got - e);
	rel = e != 0 ? err / fabs(e) : err;
	if (!(err <= TOL * fmax(fabs(e), scale))) {
		t_fails++;
		fprintf(stderr, "%s: %s = %.17g, expected %.17g (rel err %.3g)\n", cur_case,
		    what, got, e, rel);
	}
	/* Values near 0 (against their scale) do not count toward the worst. */
	if (fabs(e) >= 1e-3 * scale && rel > worst[q]) {
		worst[q] = rel;
		worst_case[q] = cur_case;
	}
}

static double *
doubles(const json_t *arr, size_t *n)
{
	double *v;
	size_t i;

	*n = json_array_size(arr);
	if ((v = calloc(*n + 1, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < *n; i++)
		v[i] = json_number_value(json_array_get(arr, i));
	return v;
}

static double
max_abs(const double *v, size_t n)
{
	double m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (fabs(v[i]) > m)
			m = fabs(v[i]);
	return m;
}

static void
check_summary(const char *side, const struct stats_summary *s, const json_t *exp,
    double scale)
{
	char what[32];

	T_EQ_INT(s->n, json_integer_value(json_object_get(exp, "n")));
	snprintf(what, sizeof(what), "%s.mean", side);
	check(what, s->mean, json_object_get(exp, "mean"), Q_MEAN, scale);
	snprintf(what, sizeof(what), "%s.sd", side);
	check(what, s->sd, json_object_get(exp, "sd"), Q_SD, scale * 1e-6);
	snprintf(what, sizeof(what), "%s.cov", side);
	check(what, s->cov, json_object_get(exp, "cov"), Q_COV, 1e-6);
	snprintf(what, sizeof(what), "%s.ci_lo", side);
	check(what, s->ci_lo, json_object_get(exp, "ci_lo"), Q_CI, scale);
	snprintf(what, sizeof(what), "%s.ci_hi", side);
	check(what, s->ci_hi, json_object_get(exp, "ci_hi"), Q_CI, scale);
}

/* A JSON number of the report, or NAN for null/absent. */
static double
jd(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* -v of a JSON number (a new reference), null for null or absent. */
static json_t *
neg(const json_t *v)
{
	return json_is_number(v) ? json_real(-json_number_value(v)) : json_null();
}

/* The report's JSON carries the same numbers (what "benchfleet compare"
 * prints and a reviewer checks against scipy). */
static void
check_report(const json_t *c, const double *a, size_t na, const double *b, size_t nb,
    double sca, double scb)
{
	static const struct report_metric m[] = { { .name = "x" } };
	static const struct report_cell cells[] = { { "A" }, { "B" } };
	static const int bl[] = { -1, 0 };
	struct report_series s[2] = { { a, NULL, na }, { b, NULL, nb } };
	struct report_input in = {
		.nmetrics = 1, .metrics = m, .ncells = 2, .cells = cells, .series = s,
		.baseline_of = bl,
	};
	struct bf_diag d;
	struct buf out;
	json_t *j, *rows, *ra, *rb, *cmp;
	const json_t *sa = json_object_get(c, "sa"), *sb = json_object_get(c, "sb");

	buf_init(&out, 0);
	T_EQ_INT(report_render(&in, "json", &out, &d), 0);
	j = json_loads(out.data ? out.data : "", 0, NULL);
	T_CHECK(j != NULL);
	rows = json_object_get(json_array_get(json_object_get(j, "metrics"), 0), "rows");
	ra = json_array_get(rows, 0);
	rb = json_array_get(rows, 1);
	cmp = json_object_get(rb, "compare");
	T_CHECK(ra != NULL && rb != NULL && json_is_object(cmp));
	if (ra == NULL || rb == NULL || !json_is_object(cmp))
		goto out;
	check("report A.mean", jd(ra, "mean"), json_object_get(sa, "mean"), Q_MEAN, sca);
	check("report A.sd", jd(ra, "sd"), json_object_get(sa, "sd"), Q_SD, sca * 1e-6);
	check("report A.cov", jd(ra, "cov_pct"), json_object_get(sa, "cov"), Q_COV, 1e-6);
	check("report A.ci_lo", jd(ra, "ci_lo"), json_object_get(sa, "ci_lo"), Q_CI, sca);
	check("report A.ci_hi", jd(ra, "ci_hi"), json_object_get(sa, "ci_hi"), Q_CI, sca);
	check("report B.mean", jd(rb, "mean"), json_object_get(sb, "mean"), Q_MEAN, scb);
	check("report B.ci_lo", jd(rb, "ci_lo"), json_object_get(sb, "ci_lo"), Q_CI, scb);
	check("report B.ci_hi", jd(rb, "ci_hi"), json_object_get(sb, "ci_hi"), Q_CI, scb);
	/* The report's % change is (B-A)/|A| (issue 17: its sign reads as B
	 * against A), the vectors' (B-A)/A: with a negative A, negated and the
	 * CI's ends swapped. */
	if (jd(sa, "mean") < 0) {
		json_t *np = neg(json_object_get(c, "pct")), *nl = neg(json_object_get(c, "pct_hi"));
		json_t *nh = neg(json_object_get(c, "pct_lo"));

		check("report pct", jd(cmp, "pct_change"), np, Q_PCT, 1e-6);
		check("report pct_lo", jd(cmp, "pct_ci_lo"), nl, Q_PCTCI, 1e-6);
		check("report pct_hi", jd(cmp, "pct_ci_hi"), nh, Q_PCTCI, 1e-6);
		json_decref(np);
		json_decref(nl);
		json_decref(nh);
	} else {
		check("report pct", jd(cmp, "pct_change"), json_object_get(c, "pct"), Q_PCT, 1e-6);
		check("report pct_lo", jd(cmp, "pct_ci_lo"), json_object_get(c, "pct_lo"),
		    Q_PCTCI, 1e-6);
		check("report pct_hi", jd(cmp, "pct_ci_hi"), json_object_get(c, "pct_hi"),
		    Q_PCTCI, 1e-6);
	}
	check("report welch_t", jd(cmp, "welch_t"), json_object_get(c, "welch_t"), Q_T, 1);
	check("report welch_df", jd(cmp, "welch_df"), json_object_get(c, "welch_df"),
	    Q_DF, 1);
	check("report welch_p", jd(cmp, "welch_p"), json_object_get(c, "welch_p"),
	    Q_P, 1e-300);
	check("report mw_u", jd(cmp, "mw_u"), json_object_get(c, "mw_u"), Q_U, 1);
	check("report mw_p", jd(cmp, "mw_p"), json_object_get(c, "mw_p"), Q_MWP, 1e-300);
	T_EQ_INT(json_is_true(json_object_get(cmp, "significant")),
	    json_is_true(json_object_get(c, "significant")));
	T_EQ_INT(json_is_true(json_object_get(cmp, "pct_ci_unbounded")),
	    json_is_true(json_object_get(c, "pct_unbounded")));
	T_EQ_STR(json_string_value(json_object_get(cmp, "mw_method")),
	    json_string_value(json_object_get(c, "mw_method")));
out:
	json_decref(j);
	buf_free(&out);
}

static void
run_case(const json_t *c)
{
	struct stats_summary sa, sb;
	struct stats_compare cmp;
	struct stats_mw mw;
	double *a, *b, sca, scb;
	size_t na, nb;
	const char *method;

	cur_case = json_string_value(json_object_get(c, "name"));
	a = doubles(json_object_get(c, "a"), &na);
	b = doubles(json_object_get(c, "b"), &nb);
	T_CHECK(a != NULL && b != NULL);
	if (a == NULL || b == NULL)
		goto out;
	sca = max_abs(a, na);
	scb = max_abs(b, nb);
	T_EQ_INT(stats_summarize(a, na, &sa), 0);
	T_EQ_INT(stats_summarize(b, nb, &sb), 0);
	check_summary("A", &sa, json_object_get(c, "sa"), sca);
	check_summary("B", &sb, json_object_get(c, "sb"), scb);
	T_EQ_INT(stats_compare(&sa, &sb, &cmp), 0);
	check("welch t", cmp.welch.t, json_object_get(c, "welch_t"), Q_T, 1);
	check("welch df", cmp.welch.nu, json_object_get(c, "welch_df"), Q_DF, 1);
	check("welch p", cmp.welch.p, json_object_get(c, "welch_p"), Q_P, 1e-300);
	check("pct", cmp.pct.pct, json_object_get(c, "pct"), Q_PCT, 1e-6);
	check("pct lo", cmp.pct.lo, json_object_get(c, "pct_lo"), Q_PCTCI, 1e-6);
	check("pct hi", cmp.pct.hi, json_object_get(c, "pct_hi"), Q_PCTCI, 1e-6);
	T_EQ_INT(cmp.pct.unbounded, json_is_true(json_object_get(c, "pct_unbounded")));
	T_EQ_INT(cmp.significant, json_is_true(json_object_get(c, "significant")));
	/* U of B, as scipy.stats.mannwhitneyu(B, A). */
	T_EQ_INT(stats_mannwhitney(b, nb, a, na, STATS_MW_AUTO, &mw), 0);
	check("mw u", mw.u, json_object_get(c, "mw_u"), Q_U, 1);
	check("mw p", mw.p, json_object_get(c, "mw_p"), Q_MWP, 1e-300);
	method = json_string_value(json_object_get(c, "mw_method"));
	T_EQ_STR(mw.exact ? "exact" : "asymptotic", method);
	check_report(c, a, na, b, nb, sca, scb);
out:
	free(a);
	free(b);
}

int
main(void)
{
	const char *src = getenv("BF_SRC"), *path = getenv("BF_VECTORS");
	char def[4096];
	json_error_t err;
	json_t *doc, *cases;
	size_t i;
	int q;

	if (path == NULL) {
		snprintf(def, sizeof(def), "%s/tests/stats/vectors.json", src ? src : ".");
		path = def;
	}
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (doc == NULL) {
		fprintf(stderr, "%s:%d: %s (set BF_SRC to the source tree)\n", path,
		    err.line, err.text);
		return 1;
	}
	cases = json_object_get(doc, "cases");
	T_CHECK(json_array_size(cases) >= 30);
	for (i = 0; i < json_array_size(cases); i++)
		run_case(json_array_get(cases, i));
	fprintf(stderr, "%zu cases from %s (scipy %s)\n", json_array_size(cases), path,
	    json_string_value(json_object_get(doc, "scipy")));
	for (q = 0; q < NQ; q++)
		fprintf(stderr, "  worst relative error %-9s %.3g%s%s\n", q_name[q], worst[q],
		    worst_case[q] ? "  in " : "", worst_case[q] ? worst_case[q] : "");
	json_decref(doc);
	return t_done();
}
