/*
 * coord_test_repro_effects.c: the comparison of effects (repro-effects.c,
 * stats_effect_diff). Hand-checked vectors: every expected number below
 * was computed from the definition by tests/stats/effects_check.py
 * (Python's statistics module for means and variances, mpmath at 40
 * digits for logs, exps and the t quantile), independently of stats.c.
 * One case reproduces while the absolute means differ by 10%, one is the
 * seed's -9.2% vs -15% (differs), one is noisy (inconclusive); then
 * negative, zero and mixed-sign means, n=1, empty groups, zero variance,
 * boot means, magnitudes near DBL_MAX and DBL_MIN, bad input; then the
 * report's "effects" section: pairing by the baseline axis, the default
 * baseline, "none", a bad baseline naming the field, counters left out,
 * the bundle's cells found by their axes, and the text table; then a
 * suite's effects, workload by workload.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "repro.h"
#include "t.h"

#define ARRLEN(a) (sizeof(a) / sizeof((a)[0]))
#define T_REL(x, ref, tol) T_NEAR((x), (ref), (tol) * fmax(1.0, fabs((double)(ref))))

static const double A0[] = { 100.0, 101.0, 99.0, 100.5, 99.5 };
static const double A1[] = { 90.8, 91.2, 90.6, 91.0, 90.4 };
static const double B0[] = { 110.0, 111.0, 109.0, 110.5, 109.5 };
static const double B1_same[] = { 99.9, 100.3, 99.7, 100.1, 99.5 };
static const double B1_seed[] = { 93.5, 93.9, 93.3, 93.7, 93.1 };
static const double N0[] = { 100.0, 110.0, 90.0 }, N1[] = { 95.0, 104.0, 86.0 };
static const double N2[] = { 100.0, 112.0, 91.0 }, N3[] = { 94.0, 107.0, 84.0 };
static const double M0[] = { -100.0, -101.0, -99.0 }, M1[] = { -90.0, -91.0, -89.5 };

struct vec {
	const char *name;
	const double *v[4];
	size_t n[4];
	enum repro_verdict_kind kind;
	/* effects_check.py */
	double pct_a, lo_a, hi_a, pct_b, lo_b, hi_b, ratio, nu, lo90, hi90, lo95, hi95;
};

static const struct vec vecs[] = {
	{ .name = "reproduces", .v = { A0, A1, B0, B1_same }, .n = { 5, 5, 5, 5 },
	  .kind = REPRO_REPRODUCED,
	  .pct_a = -9.2000000000000028, .lo_a = -10.073577152548872, .hi_a = -8.3179366092878528,
	  .pct_b = -9.1818181818181767, .lo_b = -9.9764825946542276, .hi_b = -8.3801390294204102,
	  .ratio = 1.0002002402883461, .nu = 10.893473369872779,
	  .lo90 = 0.99085729022427032, .hi90 = 1.0096312865058852,
	  .lo95 = 0.98875848537961874, .hi95 = 1.0117743973532392 },
	{ .name = "differs (the seed)", .v = { A0, A1, B0, B1_seed }, .n = { 5, 5, 5, 5 },
	  .kind = REPRO_DIFFERS,
	  .pct_a = -9.2000000000000028, .lo_a = -10.073577152548872, .hi_a = -8.3179366092878528,
	  .pct_b = -15.0, .lo_b = -15.7454393184982, .hi_b = -14.247965432852131,
	  .ratio = 0.93612334801762117, .nu = 11.07200868804003,
	  .lo90 = 0.92734679662449846, .hi90 = 0.94498296203050653,
	  .lo95 = 0.92538057629865385, .hi95 = 0.94699083290559346 },
	{ .name = "inconclusive (noisy)", .v = { N0, N1, N2, N3 }, .n = { 3, 3, 3, 3 },
	  .kind = REPRO_INCONCLUSIVE,
	  .pct_a = -5.0, .lo_a = -23.841867481464235, .hi_a = 18.503430973749891,
	  .pct_b = -5.9405940594059406, .lo_b = -27.3937854308161, .hi_b = 21.851440656877975,
	  .ratio = 0.9900990099009901, .nu = 7.7056477893368471,
	  .lo90 = 0.78836538664166317, .hi90 = 1.2434539440941948,
	  .lo95 = 0.74603860197289091, .hi95 = 1.3140017779435792 },
	/* the same samples on both sides, all negative: ratio 1, but three
	 * samples leave the 90% CI (hi 1.0202) just past 1 + 2% */
	{ .name = "negative means", .v = { M0, M1, M0, M1 }, .n = { 3, 3, 3, 3 },
	  .kind = REPRO_INCONCLUSIVE,
	  .pct_a = -9.8333333333333286, .lo_a = -11.727721440511073, .hi_a = -7.8982902622282856,
	  .pct_b = -9.8333333333333286, .lo_b = -11.727721440511073, .hi_b = -7.8982902622282856,
	  .ratio = 1.0, .nu = 7.789271468596578,
	  .lo90 = 0.98022996948710519, .hi90 = 1.0201687676650401,
	  .lo95 = 0.97551276072918838, .hi95 = 1.0251019158914001 },
};

static int
run(const double *const v[4], const size_t n[4], double scale_a, double scale_b,
    double delta, struct repro_effect *fx)
{
	struct repro_group g[4];
	double *w[4];
	size_t i, k;
	int r;

	for (i = 0; i < 4; i++) {
		w[i] = calloc(n[i] + 1, sizeof(double));
		for (k = 0; k < n[i]; k++)
			w[i][k] = v[i][k] * (i < 2 ? scale_a : scale_b);
		g[i] = (struct repro_group){ .v = w[i], .boot = NULL, .n = n[i] };
	}
	r = repro_effect_verdict(g, delta, fx);
	for (i = 0; i < 4; i++)
		free(w[i]);
	return r;
}

static void
check_vec(const struct vec *c, const struct repro_effect *fx, double tol)
{
	T_EQ_STR(repro_verdict_name(fx->kind), repro_verdict_name(c->kind));
	T_REL(fx->pct_bundle, c->pct_a, tol);
	T_REL(fx->lo_bundle, c->lo_a, tol);
	T_REL(fx->hi_bundle, c->hi_a, tol);
	T_REL(fx->pct_here, c->pct_b, tol);
	T_REL(fx->lo_here, c->lo_b, tol);
	T_REL(fx->hi_here, c->hi_b, tol);
	T_REL(fx->ratio, c->ratio, tol);
	T_REL(fx->nu, c->nu, tol);
	T_REL(fx->lo90, c->lo90, tol);
	T_REL(fx->hi90, c->hi90, tol);
	T_REL(fx->lo95, c->lo95, tol);
	T_REL(fx->hi95, c->hi95, tol);
}

static void
test_vectors(void)
{
	struct repro_effect fx;
	struct repro_verdict abs;
	size_t i;

	for (i = 0; i < ARRLEN(vecs); i++) {
		fprintf(stderr, "vector: %s\n", vecs[i].name);
		T_EQ_INT(run(vecs[i].v, vecs[i].n, 1, 1, 2, &fx), 0);
		check_vec(&vecs[i], &fx, 1e-10);
		T_CHECK(fx.kind == REPRO_INCONCLUSIVE ? fx.why != NULL : fx.why == NULL);
		T_EQ_INT(fx.n[0], vecs[i].n[0]);
		T_EQ_INT(fx.boot_means, 0);
	}
	/* The point of effects: the absolute baselines differ by +10%, the
	 * effect reproduces. */
	T_EQ_INT(repro_verdict(A0, NULL, 5, B0, NULL, 5, 2, &abs), 0);
	T_EQ_STR(repro_verdict_name(abs.kind), "differs");
	/* The noisy case's point is inside the margin: the CI is too wide. */
	T_EQ_INT(run(vecs[2].v, vecs[2].n, 1, 1, 2, &fx), 0);
	T_CONTAINS(fx.why, "too wide");
	/* At delta 0.5% the reproduced case cannot be shown equivalent, and
	 * the seed's 6.4% gap is outside 2% but not outside 7%. */
	T_EQ_INT(run(vecs[0].v, vecs[0].n, 1, 1, 0.5, &fx), 0);
	T_EQ_STR(repro_verdict_name(fx.kind), "inconclusive");
	T_EQ_INT(run(vecs[3].v, vecs[3].n, 1, 1, 3, &fx), 0);
	T_EQ_STR(repro_verdict_name(fx.kind), "reproduced");
	T_EQ_INT(run(vecs[1].v, vecs[1].n, 1, 1, 7, &fx), 0);
	T_EQ_STR(repro_verdict_name(fx.kind), "inconclusive");
	T_CONTAINS(fx.why, "straddles");
}

/* No overflow: x 1e300 squares to inf, x 1e-300 to 0; the logs do not. */
static void
test_magnitudes(void)
{
	static const double scales[][2] = { { 1e300, 1e300 }, { 1e-300, 1e-300 },
	    { 1e300, 1e-300 }, { DBL_MAX / 200, 1 }, { 1e-310, 1e-310 } };
	struct repro_effect fx;
	size_t i, k;

	for (i = 0; i < ARRLEN(scales); i++)
		for (k = 0; k < 2; k++) {
			fprintf(stderr, "scale %g/%g: %s\n", scales[i][0], scales[i][1],
			    vecs[k].name);
			T_EQ_INT(run(vecs[k].v, vecs[k].n, scales[i][0], scales[i][1], 2, &fx), 0);
			/* subnormal inputs keep fewer digits */
			check_vec(&vecs[k], &fx, scales[i][0] < 1e-305 ? 1e-6 : 1e-9);
		}
}

static void
test_undefined(void)
{
	static const double z0[] = { -1.0, 1.0 }, p[] = { 10.0, 11.0, 12.0 };
	static const double neg[] = { -5.0, -6.0, -7.0 }, one[] = { 100.0 };
	static const double zero[] = { 0.0, 0.0, 0.0 };
	struct repro_effect fx;
	const double *v[4];
	size_t n[4];

	/* a mean of 0 (a zero baseline; a mean 0 of nonzero samples) */
	v[0] = z0; v[1] = p; v[2] = p; v[3] = p;
	n[0] = 2; n[1] = n[2] = n[3] = 3;
	T_EQ_INT(run(v, n, 1, 1, 2, &fx), 0);
	T_EQ_STR(repro_verdict_name(fx.kind), "inconclusive");
	T_CONTAINS(fx.why, "a mean is 0");
	T_CHECK(isnan(fx.ratio) && isnan(fx.pct_bundle) && isnan(fx.lo90));
	v[0] = p; v[3] = zero;
	n[0] = 3;
	T_EQ_INT(run(v, n, 1, 1, 2, &fx), 0);
	T_CONTAINS(fx.why, "a mean is 0");
	/* opposite signs on one side: the ratio is negative, no log */
	v[1] = neg; v[3] = p;
	T_EQ_INT(run(v, n, 1, 1, 2, &fx), 0);
	T_EQ_STR(repro_verdict_name(fx.kind), "inconclusive");
	T_CONTAINS(fx.why, "bundle's means are of opposite sign");
	v[1] = p; v[2] = neg;
	T_EQ_INT(run(v, n, 1, 1, 2, &fx), 0);
	T_CONTAINS(fx.why, "means here are of opposite sign");
	/* n=1: the effects are points, no CI, no verdict */
	v[0] = one; v[1] = A1; v[2] = B0; v[3] = B1_same;
	n[0] = 1; n[1] = n[2] = n[3] = 5;
	T_EQ_INT(run(v, n, 1, 1, 2, &fx), 0);
	T_EQ_STR(repro_verdict_name(fx.kind), "inconclusive");
	T_CONTAINS(fx.why, "fewer than 2 samples");
	T_REL(fx.pct_bundle, -9.2, 1e-12);
	T_CHECK(isnan(fx.lo_bundle) && isnan(fx.lo90) && isfinite(fx.lo_here));
	T_CHECK(isfinite(fx.ratio));
	/* an empty group: the metric missing on one side */
	n[0] = 0;
	T_EQ_INT(run(v, n, 1, 1, 2, &fx), 0);
	T_CONTAINS(fx.why, "no samples");
	T_CHECK(isnan(fx.ratio));
}

/* Deterministic counts (page faults): zero variance, the CI is the point. */
static void
test_zero_variance(void)
{
	static const double f0[] = { 8192, 8192, 8192 }, f1[] = { 8200, 8200, 8200 };
	static const double h0[] = { 12288, 12288, 12288 }, h1[] = { 12300, 12300, 12300 };
	static const double h2[] = { 13000, 13000, 13000 };
	const double *v[4] = { f0, f1, h0, h1 };
	const size_t n[4] = { 3, 3, 3, 3 };
	struct repro_effect fx;

	T_EQ_INT(run(v, n, 1, 1, 2, &fx), 0);
	T_EQ_STR(repro_verdict_name(fx.kind), "reproduced");
	T_NEAR(fx.lo90, fx.ratio, 1e-15);
	T_NEAR(fx.hi95, fx.ratio, 1e-15);
	T_REL(fx.ratio, (12300.0 / 12288) / (8200.0 / 8192), 1e-14);
	T_REL(fx.nu, 8, 0);
	v[3] = h2;
	T_EQ_INT(run(v, n, 1, 1, 2, &fx), 0);
	T_EQ_STR(repro_verdict_name(fx.kind), "differs");
}

/* Several boots: their means are the samples, as the verdicts use them. */
static void
test_boot_means(void)
{
	static const double a0[] = { 99, 101, 100.5, 101.5, 98.5, 99.5, 99.2, 100.8, 99.8, 100.2 };
	static const int bt[] = { 1, 1, 2, 2, 3, 3, 4, 4, 5, 5 };
	static const double a0m[] = { 100.0, 101.0, 99.0, 100.0, 100.0 };
	struct repro_group g[4] = {
		{ .v = a0, .boot = bt, .n = 10 }, { .v = A1, .n = 5 }, { .v = B0, .n = 5 },
		{ .v = B1_same, .n = 5 }
	}, h[4];
	struct repro_effect fx, fm;

	T_EQ_INT(repro_effect_verdict(g, 2, &fx), 0);
	T_EQ_INT(fx.n[0], 5);
	T_EQ_INT(fx.boot_means, 1);
	memcpy(h, g, sizeof(h));
	h[0] = (struct repro_group){ .v = a0m, .n = 5 };
	T_EQ_INT(repro_effect_verdict(h, 2, &fm), 0);
	T_REL(fx.ratio, fm.ratio, 1e-14);
	T_REL(fx.lo90, fm.lo90, 1e-14);
	T_REL(fx.nu, fm.nu, 1e-12);
	T_EQ_INT(fm.boot_means, 0);
}

static void
test_bad_input(void)
{
	static const double bad[] = { 1.0, NAN, 2.0 };
	struct repro_group g[4] = { { .v = A0, .n = 5 }, { .v = A1, .n = 5 },
	    { .v = B0, .n = 5 }, { .v = B1_same, .n = 5 } };
	struct repro_effect fx;
	struct stats_summary s[4];
	struct stats_effect e;

	T_EQ_INT(repro_effect_verdict(g, 0, &fx), BF_ERR_INVALID);
	T_EQ_INT(repro_effect_verdict(g, NAN, &fx), BF_ERR_INVALID);
	T_EQ_INT(repro_effect_verdict(g, INFINITY, &fx), BF_ERR_INVALID);
	T_EQ_INT(repro_effect_verdict(NULL, 2, &fx), BF_ERR_INVALID);
	T_EQ_INT(repro_effect_verdict(g, 2, NULL), BF_ERR_INVALID);
	g[2] = (struct repro_group){ .v = bad, .n = 3 };
	T_EQ_INT(repro_effect_verdict(g, 2, &fx), BF_ERR_INVALID);
	g[2] = (struct repro_group){ .v = NULL, .n = 3 };
	T_EQ_INT(repro_effect_verdict(g, 2, &fx), BF_ERR_INVALID);
	memset(s, 0, sizeof(s));
	s[0].n = 2;
	s[0].mean = INFINITY;
	T_EQ_INT(stats_effect_diff(s, NULL, &e), BF_ERR_INVALID);
	T_EQ_INT(stats_effect_diff(NULL, NULL, &e), BF_ERR_INVALID);
	T_EQ_INT(stats_log_ci(0, 0.1, 5, 1.0, &e.ln_a, &e.ln_b), BF_ERR_INVALID);
}

/* --- the report's section --- */

static json_t *
j(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);

	if (v == NULL)
		fprintf(stderr, "test JSON: %s at %d\n", e.text, e.position);
	return v;
}

/* A bundle and a local job of matrix {"passes": [1, 2], "thp": [...]}: the
 * bundle's cells in another order than here's (found by their axes). */
static json_t *
mk_bundle(int with_counter)
{
	json_t *b = j("{\"runs\":["
	    "{\"id\":1,\"cell_index\":0,\"label\":\"passes=2\",\"axes\":{\"passes\":2}},"
	    "{\"id\":2,\"cell_index\":1,\"label\":\"passes=1\",\"axes\":{\"passes\":1}}],"
	    "\"samples\":[]}");
	json_t *s = json_object_get(b, "samples");
	size_t i;

	for (i = 0; i < 5; i++) {
		json_array_append_new(s, json_pack("{s:i,s:s,s:f,s:i,s:s}", "run", 2, "metric",
		    "wall_s", "value", A0[i], "boot", 0, "unit", "s"));
		json_array_append_new(s, json_pack("{s:i,s:s,s:f,s:i,s:s}", "run", 1, "metric",
		    "wall_s", "value", A1[i], "boot", 0, "unit", "s"));
		if (with_counter)
			json_array_append_new(s, json_pack("{s:i,s:s,s:f,s:i}", "run", 1, "metric",
			    "vmstat.pgfault", "value", 100.0 + (double)i, "boot", 0));
	}
	return b;
}

static json_t *
mk_here(const double *b1)
{
	json_t *h = j("{\"cells\":["
	    "{\"cell_index\":0,\"label\":\"passes=1\",\"axes\":{\"passes\":1},\"samples\":[]},"
	    "{\"cell_index\":1,\"label\":\"passes=2\",\"axes\":{\"passes\":2},\"samples\":[]}]}");
	json_t *c0 = json_object_get(json_array_get(json_object_get(h, "cells"), 0), "samples");
	json_t *c1 = json_object_get(json_array_get(json_object_get(h, "cells"), 1), "samples");
	size_t i;

	for (i = 0; i < 5; i++) {
		json_array_append_new(c0, json_pack("{s:s,s:f,s:i,s:s}", "metric", "wall_s",
		    "value", B0[i], "boot", 0, "unit", "s"));
		json_array_append_new(c1, json_pack("{s:s,s:f,s:i,s:s}", "metric", "wall_s",
		    "value", b1[i], "boot", 0, "unit", "s"));
	}
	return h;
}

static void
test_report(void)
{
	json_t *bundle = mk_bundle(1), *here = mk_here(B1_same), *job, *rep, *fx, *row;
	struct bf_diag d;
	struct buf b;

	job = j("{\"matrix\":{\"passes\":[1,2]}}");
	rep = json_object();
	bf_diag_clear(&d);
	/* the default baseline: the first value of the first axis */
	T_EQ_INT(repro_effects_json(bundle, here, job, NULL, 2, rep, &d), 0);
	fx = json_object_get(rep, "effects");
	T_EQ_STR(json_string_value(json_object_get(fx, "baseline")), "passes:1");
	T_REL(json_number_value(json_object_get(fx, "delta_pct")), 2, 0);
	/* one row: passes=2 vs passes=1, wall_s; the counter is left out */
	T_EQ_INT(json_array_size(json_object_get(fx, "rows")), 1);
	row = json_array_get(json_object_get(fx, "rows"), 0);
	T_EQ_INT(json_integer_value(json_object_get(row, "cell")), 1);
	T_EQ_INT(json_integer_value(json_object_get(row, "baseline_cell")), 0);
	T_EQ_STR(json_string_value(json_object_get(row, "label")), "passes=2");
	T_EQ_STR(json_string_value(json_object_get(row, "metric")), "wall_s");
	T_EQ_STR(json_string_value(json_object_get(row, "verdict")), "reproduced");
	T_CHECK(json_is_null(json_object_get(row, "why")));
	T_REL(json_number_value(json_object_get(json_object_get(row, "bundle"), "pct")),
	    vecs[0].pct_a, 1e-10);
	T_REL(json_number_value(json_array_get(json_object_get(json_object_get(row, "here"),
	    "ci"), 1)), vecs[0].hi_b, 1e-10);
	T_REL(json_number_value(json_object_get(row, "ratio")), vecs[0].ratio, 1e-10);
	T_REL(json_number_value(json_array_get(json_object_get(row, "ci90"), 0)), vecs[0].lo90,
	    1e-10);
	T_REL(json_number_value(json_array_get(json_object_get(row, "ci95"), 1)), vecs[0].hi95,
	    1e-10);
	T_REL(json_number_value(json_object_get(row, "difference_pp")),
	    vecs[0].pct_b - vecs[0].pct_a, 1e-10);
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(fx, "summary"),
	    "reproduced")), 1);
	/* the text: a table after the per-cell one */
	buf_init(&b, 1 << 20);
	T_EQ_INT(repro_effects_text(rep, &b), 0);
	T_CONTAINS(b.data, "Effects vs baseline passes:1");
	T_CONTAINS(b.data, "-9.20% [-10.07, -8.32]");
	T_CONTAINS(b.data, "-9.18% [-9.98, -8.38]");
	T_CONTAINS(b.data, "+0.02 pp");
	T_CONTAINS(b.data, "1.0002 [0.9909, 1.0096]");
	T_CONTAINS(b.data, "1 reproduced, 0 differ, 0 inconclusive");
	buf_free(&b);

	/* a second axis value as the baseline, and effect_delta_pct */
	T_EQ_INT(repro_effects_json(bundle, here, job, "passes:2", 0.5, rep, &d), 0);
	fx = json_object_get(rep, "effects");
	row = json_array_get(json_object_get(fx, "rows"), 0);
	T_EQ_INT(json_integer_value(json_object_get(row, "cell")), 0);
	T_EQ_INT(json_integer_value(json_object_get(row, "baseline_cell")), 1);
	T_REL(json_number_value(json_object_get(row, "ratio")), 1 / vecs[0].ratio, 1e-10);
	T_EQ_STR(json_string_value(json_object_get(row, "verdict")), "inconclusive");
	T_CHECK(json_is_string(json_object_get(row, "why")));

	/* off */
	T_EQ_INT(repro_effects_json(bundle, here, job, "none", 2, rep, &d), 0);
	T_CHECK(json_is_null(json_object_get(rep, "effects")));
	buf_init(&b, 1 << 20);
	T_EQ_INT(repro_effects_text(rep, &b), 0);
	T_EQ_INT(b.len, 0);
	buf_free(&b);

	/* bad baselines name the field */
	T_EQ_INT(repro_effects_json(bundle, here, job, "passes", 2, rep, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "baseline");
	T_CONTAINS(d.msg, "not AXIS:VALUE");
	T_EQ_INT(repro_effects_json(bundle, here, job, "thp:never", 2, rep, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "baseline");
	T_CONTAINS(d.msg, "\"thp\" is not an axis");
	T_EQ_INT(repro_effects_json(bundle, here, job, "passes:3", 2, rep, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "axis passes has no value \"3\"");
	T_EQ_INT(repro_effects_json(bundle, here, job, ":1", 2, rep, &d), BF_ERR_INVALID);
	T_EQ_INT(repro_effects_check(job, "none", "job 1", &d), 0);
	T_EQ_INT(repro_effects_check(job, "passes:2", "job 1", &d), 0);
	T_EQ_INT(repro_effects_check(job, NULL, "job 1", &d),
	    BF_ERR_INVALID);

	/* a job without a matrix: no effects */
	json_decref(job);
	job = j("{\"params\":{}}");
	T_EQ_INT(repro_effects_json(bundle, here, job, NULL, 2, rep, &d), 0);
	T_CHECK(json_is_null(json_object_get(rep, "effects")));
	json_decref(job);
	json_decref(rep);
	json_decref(here);
	json_decref(bundle);

	/* the seed's case through the report: differs */
	bundle = mk_bundle(0);
	here = mk_here(B1_seed);
	job = j("{\"matrix\":{\"passes\":[1,2]}}");
	rep = json_object();
	T_EQ_INT(repro_effects_json(bundle, here, job, NULL, 2, rep, &d), 0);
	row = json_array_get(json_object_get(json_object_get(rep, "effects"), "rows"), 0);
	T_EQ_STR(json_string_value(json_object_get(row, "verdict")), "differs");
	T_REL(json_number_value(json_object_get(json_object_get(row, "here"), "pct")), -15,
	    1e-10);
	json_decref(rep);
	json_decref(here);
	json_decref(bundle);
	json_decref(job);
}

/* Counters are compared when they are all the bundle has; a cell whose
 * axes the bundle lacks is a note. */
static void
test_report_counters_and_missing(void)
{
	json_t *bundle = j("{\"runs\":["
	    "{\"id\":1,\"cell_index\":0,\"axes\":{\"thp\":\"never\"}},"
	    "{\"id\":2,\"cell_index\":1,\"axes\":{\"thp\":\"always\"}}],\"samples\":["
	    "{\"run\":1,\"metric\":\"vmstat.thp_fault_alloc\",\"value\":1,\"boot\":0},"
	    "{\"run\":1,\"metric\":\"vmstat.thp_fault_alloc\",\"value\":1,\"boot\":0},"
	    "{\"run\":2,\"metric\":\"vmstat.thp_fault_alloc\",\"value\":16,\"boot\":0},"
	    "{\"run\":2,\"metric\":\"vmstat.thp_fault_alloc\",\"value\":16,\"boot\":0}]}");
	json_t *here = j("{\"cells\":["
	    "{\"cell_index\":0,\"label\":\"thp=never\",\"axes\":{\"thp\":\"never\"},\"samples\":["
	    "{\"metric\":\"vmstat.thp_fault_alloc\",\"value\":2,\"boot\":0},"
	    "{\"metric\":\"vmstat.thp_fault_alloc\",\"value\":2,\"boot\":0}]},"
	    "{\"cell_index\":1,\"label\":\"thp=always\",\"axes\":{\"thp\":\"always\"},\"samples\":["
	    "{\"metric\":\"vmstat.thp_fault_alloc\",\"value\":32,\"boot\":0},"
	    "{\"metric\":\"vmstat.thp_fault_alloc\",\"value\":32,\"boot\":0}]},"
	    "{\"cell_index\":2,\"label\":\"thp=madvise\",\"axes\":{\"thp\":\"madvise\"},"
	    "\"samples\":[]}]}");
	json_t *job = j("{\"matrix\":{\"thp\":[\"never\",\"always\",\"madvise\"]}}");
	json_t *rep = json_object(), *fx, *row;
	struct bf_diag d;

	bf_diag_clear(&d);
	T_EQ_INT(repro_effects_json(bundle, here, job, "thp:never", 2, rep, &d), 0);
	fx = json_object_get(rep, "effects");
	T_EQ_INT(json_array_size(json_object_get(fx, "rows")), 1);
	row = json_array_get(json_object_get(fx, "rows"), 0);
	T_EQ_STR(json_string_value(json_object_get(row, "metric")), "vmstat.thp_fault_alloc");
	T_EQ_STR(json_string_value(json_object_get(row, "verdict")), "reproduced");
	T_REL(json_number_value(json_object_get(json_object_get(row, "bundle"), "pct")), 1500,
	    1e-12);
	T_EQ_INT(json_array_size(json_object_get(fx, "notes")), 1);
	T_CONTAINS(json_string_value(json_array_get(json_object_get(fx, "notes"), 0)),
	    "no cell with the axes of cell 2");
	json_decref(rep);
	json_decref(here);
	json_decref(bundle);
	json_decref(job);
}

/* --- a suite: effects workload by workload --- */

/* A suite cell: workload w, kernel k, mb (0: none); the bundle's run id
 * and here's cell index are idx, in another order on each side. */
struct scell {
	const char *w, *k;
	int mb;
	const double *bv, *hv;	/* the bundle's samples, here's (5 each) */
	const char *metric;
};

static json_t *
s_axes(const struct scell *c)
{
	json_t *a = json_pack("{s:s,s:s}", "workload", c->w, "kernel", c->k);

	if (c->mb)
		json_object_set_new(a, "mb", json_integer(c->mb));
	return a;
}

static void
s_label(const struct scell *c, char *buf, size_t n)
{
	if (c->mb)
		snprintf(buf, n, "workload=%s kernel=%s mb=%d", c->w, c->k, c->mb);
	else
		snprintf(buf, n, "workload=%s kernel=%s", c->w, c->k);
}

/* the bundle's runs in reverse order of here's cells */
static void
mk_suite(const struct scell *cs, size_t n, json_t **bundle, json_t **here)
{
	json_t *runs = json_array(), *samples = json_array(), *cells = json_array(), *hs;
	char label[128];
	size_t i, k;

	for (i = 0; i < n; i++) {
		s_label(&cs[i], label, sizeof(label));
		json_array_append_new(runs, json_pack("{s:I,s:I,s:s,s:o,s:s}", "id",
		    (json_int_t)(100 + i), "cell_index", (json_int_t)(n - 1 - i), "label", label,
		    "axes", s_axes(&cs[i]), "workload", cs[i].w));
		hs = json_array();
		for (k = 0; k < 5; k++) {
			json_array_append_new(samples, json_pack("{s:I,s:s,s:f,s:i}", "run",
			    (json_int_t)(100 + i), "metric", cs[i].metric, "value", cs[i].bv[k],
			    "boot", 0));
			json_array_append_new(hs, json_pack("{s:s,s:f,s:i}", "metric",
			    cs[i].metric, "value", cs[i].hv[k], "boot", 0));
			/* a counter beside page-touch's own metric: left out */
			if (strcmp(cs[i].w, "page-touch") == 0)
				json_array_append_new(samples, json_pack("{s:I,s:s,s:f,s:i}", "run",
				    (json_int_t)(100 + i), "metric", "vmstat.pgfault", "value",
				    1000.0 + (double)(k + i), "boot", 0));
		}
		json_array_append_new(cells, json_pack("{s:I,s:s,s:o,s:o}", "cell_index",
		    (json_int_t)i, "label", label, "axes", s_axes(&cs[i]), "samples", hs));
	}
	*bundle = json_pack("{s:o,s:o}", "runs", runs, "samples", samples);
	*here = json_pack("{s:o}", "cells", cells);
}

/* rows of fx for workload w (and metric, when not NULL) */
static size_t
s_rows(const json_t *fx, const char *w, const char *metric, const char *verdict)
{
	const json_t *row;
	size_t i, n = 0;

	json_array_foreach(json_object_get(fx, "rows"), i, row)
		if (strcmp(json_string_value(json_object_get(row, "workload")), w) == 0 &&
		    (metric == NULL || strcmp(json_string_value(json_object_get(row, "metric")),
		    metric) == 0) && (verdict == NULL ||
		    strcmp(json_string_value(json_object_get(row, "verdict")), verdict) == 0))
			n++;
	return n;
}

static const json_t *
s_workload(const json_t *fx, const char *w)
{
	const json_t *o;
	size_t i;

	json_array_foreach(json_object_get(fx, "workloads"), i, o)
		if (strcmp(json_string_value(json_object_get(o, "workload")), w) == 0)
			return o;
	return NULL;
}

/*
 * Three workloads over kernels 4lvl/5lvl: page-touch (its own axis mb)
 * reproduces the kernel's effect, cpu-loop is the seed's -9.2% vs -15%
 * (differs), hello has only a counter (compared, as it is all that
 * workload has, while page-touch's counter is left out).
 */
static void
test_suite(void)
{
	static const struct scell cs[] = {
		{ "page-touch", "4lvl", 8, A0, B0, "wall_s" },
		{ "page-touch", "5lvl", 8, A1, B1_same, "wall_s" },
		{ "page-touch", "4lvl", 16, A0, B0, "wall_s" },
		{ "page-touch", "5lvl", 16, A1, B1_same, "wall_s" },
		{ "cpu-loop", "4lvl", 0, A0, B0, "loops_per_s" },
		{ "cpu-loop", "5lvl", 0, A1, B1_seed, "loops_per_s" },
		{ "hello", "4lvl", 0, A0, B0, "vmstat.pgfault" },
		{ "hello", "5lvl", 0, A1, B1_same, "vmstat.pgfault" },
	};
	json_t *bundle, *here, *job, *rep = json_object(), *fx, *row;
	const json_t *w;
	struct bf_diag d;
	struct buf b;
	size_t i;

	bf_diag_clear(&d);
	mk_suite(cs, ARRLEN(cs), &bundle, &here);
	job = j("{\"matrix\":{\"kernel\":[\"4lvl\",\"5lvl\"]},\"suite\":["
	    "{\"recipe\":\"page-touch\",\"matrix\":{\"mb\":[8,16]}},{\"recipe\":\"cpu-loop\"},"
	    "{\"recipe\":\"echo\",\"label\":\"hello\"}]}");
	/* the default: the job's first axis, for every workload */
	T_EQ_INT(repro_effects_json(bundle, here, job, NULL, 2, rep, &d), 0);
	fx = json_object_get(rep, "effects");
	T_CHECK(json_is_object(fx));
	T_EQ_STR(json_string_value(json_object_get(fx, "baseline")), "kernel:4lvl");
	T_EQ_INT(json_array_size(json_object_get(fx, "rows")), 4);
	T_EQ_INT(s_rows(fx, "page-touch", "wall_s", "reproduced"), 2);
	T_EQ_INT(s_rows(fx, "page-touch", "vmstat.pgfault", NULL), 0);
	T_EQ_INT(s_rows(fx, "cpu-loop", "loops_per_s", "differs"), 1);
	T_EQ_INT(s_rows(fx, "hello", "vmstat.pgfault", "reproduced"), 1);
	/* each row pairs 5lvl with 4lvl of the same workload and mb, and
	 * carries the effect of the vectors */
	json_array_foreach(json_object_get(fx, "rows"), i, row) {
		T_CONTAINS(json_string_value(json_object_get(row, "label")), "kernel=5lvl");
		T_CONTAINS(json_string_value(json_object_get(row, "baseline_label")), "kernel=4lvl");
		T_EQ_INT(json_integer_value(json_object_get(row, "baseline_cell")),
		    json_integer_value(json_object_get(row, "cell")) - 1);
		T_REL(json_number_value(json_object_get(json_object_get(row, "bundle"), "pct")),
		    vecs[0].pct_a, 1e-10);
	}
	row = json_array_get(json_object_get(fx, "rows"), 2);
	T_EQ_STR(json_string_value(json_object_get(row, "workload")), "cpu-loop");
	T_REL(json_number_value(json_object_get(row, "ratio")), vecs[1].ratio, 1e-10);
	T_REL(json_number_value(json_object_get(json_object_get(row, "here"), "pct")), -15, 1e-10);
	T_EQ_INT(json_array_size(json_object_get(fx, "workloads")), 3);
	w = s_workload(fx, "page-touch");
	T_EQ_STR(json_string_value(json_object_get(w, "baseline")), "kernel:4lvl");
	T_EQ_INT(json_integer_value(json_object_get(w, "reproduced")), 2);
	T_EQ_INT(json_integer_value(json_object_get(w, "differs")), 0);
	w = s_workload(fx, "cpu-loop");
	T_EQ_INT(json_integer_value(json_object_get(w, "differs")), 1);
	T_EQ_INT(json_integer_value(json_object_get(w, "reproduced")), 0);
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(fx, "summary"),
	    "reproduced")), 3);
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(fx, "summary"),
	    "differs")), 1);
	T_EQ_INT(json_array_size(json_object_get(fx, "notes")), 0);
	buf_init(&b, 1 << 20);
	T_EQ_INT(repro_effects_text(rep, &b), 0);
	T_CONTAINS(b.data, "Effects per workload");
	T_CONTAINS(b.data, "workload page-touch, baseline kernel:4lvl:\n"
	    "workload=page-touch kernel=5lvl mb=8  wall_s");
	T_CONTAINS(b.data, "workload cpu-loop, baseline kernel:4lvl:\n"
	    "workload=cpu-loop kernel=5lvl         loops_per_s    -9.20% [-10.07, -8.32]     "
	    "-15.00% [-15.75, -14.25]");
	T_CONTAINS(b.data, "  0 reproduced, 1 differ, 0 inconclusive\n");
	T_CONTAINS(b.data, "the suite: 3 reproduced, 1 differ, 0 inconclusive (effect delta");
	buf_free(&b);

	/* a workload's own axis: the others are notes, not compared */
	T_EQ_INT(repro_effects_json(bundle, here, job, "mb:8", 2, rep, &d), 0);
	fx = json_object_get(rep, "effects");
	T_EQ_INT(json_array_size(json_object_get(fx, "rows")), 2);
	T_EQ_INT(s_rows(fx, "page-touch", "wall_s", NULL), 2);
	json_array_foreach(json_object_get(fx, "rows"), i, row)
		T_CONTAINS(json_string_value(json_object_get(row, "label")), "mb=16");
	T_CHECK(json_is_null(json_object_get(s_workload(fx, "cpu-loop"), "baseline")));
	T_EQ_INT(json_array_size(json_object_get(fx, "notes")), 2);
	T_CONTAINS(json_string_value(json_array_get(json_object_get(fx, "notes"), 0)),
	    "workload cpu-loop has no axis mb");
	buf_init(&b, 1 << 20);
	T_EQ_INT(repro_effects_text(rep, &b), 0);
	T_CONTAINS(b.data, "workload hello: not compared (see the notes)");
	buf_free(&b);

	/* bad baselines, said by field, before anything */
	T_EQ_INT(repro_effects_json(bundle, here, job, "nosuch:1", 2, rep, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "baseline");
	T_CONTAINS(d.msg, "nor of any workload's");
	T_EQ_INT(repro_effects_json(bundle, here, job, "kernel:6lvl", 2, rep, &d),
	    BF_ERR_INVALID);
	T_CONTAINS(d.msg, "axis kernel has no value \"6lvl\"");
	T_EQ_INT(repro_effects_json(bundle, here, job, "mb:32", 2, rep, &d), BF_ERR_INVALID);
	T_EQ_INT(repro_effects_check(job, "mb:16", "job 1", &d), 0);
	T_EQ_INT(repro_effects_check(job, "workload", "job 1", &d), BF_ERR_INVALID);
	T_EQ_INT(repro_effects_json(bundle, here, job, "none", 2, rep, &d), 0);
	T_CHECK(json_is_null(json_object_get(rep, "effects")));
	json_decref(job);

	/* no matrix of the job's: each workload's own first axis, if any */
	job = j("{\"suite\":[{\"recipe\":\"page-touch\",\"matrix\":{\"mb\":[8,16]}},"
	    "{\"recipe\":\"cpu-loop\"},{\"recipe\":\"echo\",\"label\":\"hello\"}]}");
	T_EQ_INT(repro_effects_json(bundle, here, job, NULL, 2, rep, &d), 0);
	fx = json_object_get(rep, "effects");
	T_CHECK(json_is_null(json_object_get(fx, "baseline")));
	T_EQ_STR(json_string_value(json_object_get(s_workload(fx, "page-touch"), "baseline")),
	    "mb:8");
	T_CONTAINS(json_string_value(json_array_get(json_object_get(fx, "notes"), 0)),
	    "workload cpu-loop has no matrix");
	json_decref(job);
	/* no matrix anywhere: as a job without one */
	job = j("{\"suite\":[{\"recipe\":\"cpu-loop\"},{\"recipe\":\"echo\"}]}");
	T_EQ_INT(repro_effects_json(bundle, here, job, NULL, 2, rep, &d), 0);
	T_CHECK(json_is_null(json_object_get(rep, "effects")));
	json_decref(job);
	json_decref(rep);
	json_decref(here);
	json_decref(bundle);
}

int
main(void)
{
	test_vectors();
	test_magnitudes();
	test_undefined();
	test_zero_variance();
	test_boot_means();
	test_bad_input();
	test_report();
	test_report_counters_and_missing();
	test_suite();
	return t_done();
}
