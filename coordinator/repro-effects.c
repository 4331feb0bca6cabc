/*
 * repro-effects.c: the comparison of effects behind a reproduction
 * (docs/bundle.md, Effects). Two labs rarely agree on absolutes (other
 * boards, other firmware, other noise); what a patch or a setting changes,
 * the % change of a cell against its baseline cell, is what the seed's
 * cross-lab table compares. Per (cell, metric): the bundle's effect, the
 * effect here, and a TOST verdict on their ratio, from the stored samples
 * of both sides only, so a re-read gives the same answer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jx.h"
#include "matrix.h"
#include "repro.h"

/* A group scaled by 2^-e, e from its largest |value|, then summarised as
 * the verdicts summarise a side (boot means when several boots). */
static int
group_summary(const struct repro_group *g, struct stats_summary *s, int *e, int *bm)
{
	double *w = NULL, mx = 0;
	size_t i;
	int r;

	*e = 0;
	*bm = 0;
	for (i = 0; i < g->n; i++) {
		if (!isfinite(g->v[i]))
			return BF_ERR_INVALID;
		if (fabs(g->v[i]) > mx)
			mx = fabs(g->v[i]);
	}
	if (mx > 0)
		(void)frexp(mx, e);
	if (g->n > 0 && (w = calloc(g->n, sizeof(*w))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < g->n; i++)
		w[i] = ldexp(g->v[i], -*e);
	r = repro_side_summary(w, g->boot, g->n, s, bm);
	free(w);
	return r;
}

static const char *const effect_why[] = {
	[STATS_EFFECT_OK] = NULL,
	[STATS_EFFECT_EMPTY] = "no samples in a group",
	[STATS_EFFECT_ZERO] = "a mean is 0: the log of its ratio is undefined",
	[STATS_EFFECT_SIGN_A] = "the bundle's means are of opposite sign: the log of their ratio "
	    "is undefined",
	[STATS_EFFECT_SIGN_B] = "the means here are of opposite sign: the log of their ratio is "
	    "undefined",
};

int
repro_effect_verdict(const struct repro_group g[4], double delta_pct, struct repro_effect *out)
{
	struct stats_summary s[4];
	struct stats_effect fx;
	double d = delta_pct / 100, lo, hi;
	int e[4], bm, i, r;

	if (g == NULL || out == NULL || !(delta_pct > 0) || !isfinite(delta_pct))
		return BF_ERR_INVALID;
	memset(out, 0, sizeof(*out));
	out->kind = REPRO_INCONCLUSIVE;
	out->pct_bundle = out->lo_bundle = out->hi_bundle = NAN;
	out->pct_here = out->lo_here = out->hi_here = NAN;
	out->ratio = out->lo90 = out->hi90 = out->lo95 = out->hi95 = out->nu = NAN;
	for (i = 0; i < 4; i++) {
		if (g[i].v == NULL && g[i].n > 0)
			return BF_ERR_INVALID;
		if ((r = group_summary(&g[i], &s[i], &e[i], &bm)) != 0)
			return r;
		out->n[i] = s[i].n;
		out->boot_means |= bm;
	}
	if ((r = stats_effect_diff(s, e, &fx)) != 0)
		return r;
	if (fx.undefined != STATS_EFFECT_OK) {
		out->why = effect_why[fx.undefined];
		return 0;
	}
	out->pct_bundle = 100 * expm1(fx.ln_a);
	out->pct_here = 100 * expm1(fx.ln_b);
	out->ratio = exp(fx.ln_d);
	out->nu = fx.nu_d;
	if ((r = stats_log_ci(fx.ln_a, fx.se_a, fx.nu_a, 0.95, &lo, &hi)) != 0)
		return r;
	out->lo_bundle = 100 * (lo - 1);
	out->hi_bundle = 100 * (hi - 1);
	if ((r = stats_log_ci(fx.ln_b, fx.se_b, fx.nu_b, 0.95, &lo, &hi)) != 0)
		return r;
	out->lo_here = 100 * (lo - 1);
	out->hi_here = 100 * (hi - 1);
	if ((r = stats_log_ci(fx.ln_d, fx.se_d, fx.nu_d, 0.90, &out->lo90, &out->hi90)) != 0 ||
	    (r = stats_log_ci(fx.ln_d, fx.se_d, fx.nu_d, 0.95, &out->lo95, &out->hi95)) != 0)
		return r;
	if (isnan(fx.se_d)) {
		out->why = "fewer than 2 samples in a group";
		return 0;
	}
	if (isfinite(out->lo90) && isfinite(out->hi90) && out->lo90 >= 1 - d &&
	    out->hi90 <= 1 + d) {
		out->kind = REPRO_REPRODUCED;
		return 0;
	}
	if (isfinite(out->lo95) && isfinite(out->hi95) && (out->lo95 > 1 + d ||
	    out->hi95 < 1 - d)) {
		out->kind = REPRO_DIFFERS;
		return 0;
	}
	if (fabs(out->ratio - 1) >= d)
		out->why = "the CI straddles the margin around a difference outside it: cannot be "
		    "shown equivalent at this delta";
	else
		out->why = "the CI straddles the margin: too wide (more samples narrow it)";
	return 0;
}

/* AXIS:VALUE split into axis (room for BF_MAX_NAME + 1) and *value. */
static int
baseline_split(const char *baseline, char *axis, const char **value, struct bf_diag *d)
{
	const char *colon = baseline != NULL ? strchr(baseline, ':') : NULL;

	if (colon == NULL || colon == baseline || (size_t)(colon - baseline) > BF_MAX_NAME) {
		bf_diag_set(d, "baseline", "\"%.60s\" is not AXIS:VALUE or none", baseline ?
		    baseline : "");
		return BF_ERR_INVALID;
	}
	memcpy(axis, baseline, (size_t)(colon - baseline));
	axis[colon - baseline] = '\0';
	*value = colon + 1;
	return 0;
}

int
repro_effects_check(const json_t *matrix, const char *baseline, const char *what,
    struct bf_diag *d)
{
	char axis[BF_MAX_NAME + 1], vbuf[128];
	const char *value;
	const json_t *vals, *v;
	size_t i;
	int r;

	if (baseline != NULL && strcmp(baseline, "none") == 0)
		return 0;
	if ((r = baseline_split(baseline, axis, &value, d)) != 0)
		return r;
	if (!json_is_array(vals = json_object_get(matrix, axis))) {
		bf_diag_set(d, "baseline", "\"%s\" is not an axis of %s's matrix", axis, what);
		return BF_ERR_INVALID;
	}
	json_array_foreach(vals, i, v)
		if (strcmp(matrix_axis_str(v, vbuf, sizeof(vbuf)), value) == 0)
			return 0;
	bf_diag_set(d, "baseline", "axis %s has no value \"%.60s\" in %s", axis, value, what);
	return BF_ERR_INVALID;
}

/* The bundle's cell index whose runs have these axes, or -1. */
static int64_t
bundle_cell(const json_t *bundle, const json_t *axes)
{
	const json_t *run;
	size_t i;

	json_array_foreach(json_object_get(bundle, "runs"), i, run)
		if (json_is_object(axes) && json_equal(json_object_get(run, "axes"), axes))
			return json_integer_value(json_object_get(run, "cell_index"));
	return -1;
}

static json_t *
num_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *
pair_or_null(double lo, double hi)
{
	return isfinite(lo) && isfinite(hi) ? json_pack("[f,f]", lo, hi) : json_null();
}

/* The side's effect: {"pct", "ci": [lo, hi] | null, "n": [baseline, cell]}. */
static json_t *
side_json(double pct, double lo, double hi, size_t n0, size_t n1)
{
	return json_pack("{s:o,s:o,s:[I,I]}", "pct", num_or_null(pct), "ci",
	    pair_or_null(lo, hi), "n", (json_int_t)n0, (json_int_t)n1);
}

static int
row_json(const struct repro_effect *fx, const json_t *cell, const json_t *base,
    const char *metric, const json_t *unit, json_t **out)
{
	json_t *o;

	o = json_pack("{s:O,s:O,s:O,s:O,s:s,s:O,s:o,s:o,s:o,s:o,s:o,s:s,s:s?,s:b}",
	    "cell", json_object_get(cell, "cell_index"), "label", json_object_get(cell, "label") ?
	    json_object_get(cell, "label") : json_null(), "baseline_cell",
	    json_object_get(base, "cell_index"), "baseline_label", json_object_get(base,
	    "label") ? json_object_get(base, "label") : json_null(), "metric", metric,
	    "unit", unit != NULL ? unit : json_null(),
	    "bundle", side_json(fx->pct_bundle, fx->lo_bundle, fx->hi_bundle, fx->n[0], fx->n[1]),
	    "here", side_json(fx->pct_here, fx->lo_here, fx->hi_here, fx->n[2], fx->n[3]),
	    "ratio", num_or_null(fx->ratio), "ci90", pair_or_null(fx->lo90, fx->hi90),
	    "ci95", pair_or_null(fx->lo95, fx->hi95), "verdict", repro_verdict_name(fx->kind),
	    "why", fx->why, "boot_means", fx->boot_means);
	if (o != NULL && isfinite(fx->pct_bundle) && isfinite(fx->pct_here) &&
	    json_object_set_new(o, "difference_pp", json_real(fx->pct_here -
	    fx->pct_bundle)) != 0) {
		json_decref(o);
		o = NULL;
	}
	*out = o;
	return o != NULL ? 0 : BF_ERR_ALLOC;
}

/* Whether any metric of the bundle is the workload's (not a counter). */
static int
any_workload_metric(const json_t *orig)
{
	const char *ck, *metric;
	const json_t *c, *m;

	json_object_foreach((json_t *)orig, ck, c)
		json_object_foreach((json_t *)c, metric, m)
			if (!repro_is_counter(metric))
				return 1;
	return 0;
}

struct fx_ctx {
	const json_t *orig, *here;	/* repro_series */
	int skip_counters;
	double delta_pct;
	json_t *rows;
	size_t counts[3];
};

/* The rows of here cell c against its baseline cell b (bundle cells bc, bb). */
static int
cell_rows(struct fx_ctx *x, const json_t *c, const json_t *b, int64_t bc, int64_t bb)
{
	char k[4][32];
	const char *metric;
	const json_t *m, *ms[4];
	struct repro_group g[4];
	struct repro_effect fx;
	double *v[4] = { NULL, NULL, NULL, NULL };
	int *bt[4] = { NULL, NULL, NULL, NULL };
	json_t *row;
	size_t i;
	int r = 0;

	snprintf(k[0], sizeof(k[0]), "%lld", (long long)bb);
	snprintf(k[1], sizeof(k[1]), "%lld", (long long)bc);
	snprintf(k[2], sizeof(k[2]), "%lld", (long long)json_integer_value(json_object_get(b,
	    "cell_index")));
	snprintf(k[3], sizeof(k[3]), "%lld", (long long)json_integer_value(json_object_get(c,
	    "cell_index")));
	json_object_foreach(json_object_get(x->orig, k[1]), metric, m) {
		if (x->skip_counters && repro_is_counter(metric))
			continue;
		ms[0] = json_object_get(json_object_get(x->orig, k[0]), metric);
		ms[1] = m;
		ms[2] = json_object_get(json_object_get(x->here, k[2]), metric);
		ms[3] = json_object_get(json_object_get(x->here, k[3]), metric);
		for (i = 0; i < 4; i++) {
			free(v[i]);
			free(bt[i]);
			v[i] = NULL;
			bt[i] = NULL;
			if ((r = repro_series_arrays(ms[i], &v[i], &bt[i], &g[i].n)) != 0)
				goto out;
			g[i].v = v[i];
			g[i].boot = bt[i];
		}
		if ((r = repro_effect_verdict(g, x->delta_pct, &fx)) != 0 ||
		    (r = row_json(&fx, c, b, metric, json_object_get(m, "unit"), &row)) != 0)
			goto out;
		if (json_array_append_new(x->rows, row) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		x->counts[fx.kind]++;
	}
out:
	for (i = 0; i < 4; i++) {
		free(v[i]);
		free(bt[i]);
	}
	return r;
}

/* The default baseline: AXIS:VALUE of the matrix's first axis and value. */
static int
default_baseline(const json_t *matrix, char *buf, size_t bufsz)
{
	const char *axis;
	const json_t *vals;
	char vbuf[128];

	json_object_foreach((json_t *)matrix, axis, vals)
		if (json_array_size(vals) > 0) {
			snprintf(buf, bufsz, "%s:%s", axis, matrix_axis_str(json_array_get(vals, 0),
			    vbuf, sizeof(vbuf)));
			return 1;
		}
	return 0;
}

int
repro_effects_json(const json_t *bundle, const json_t *here_samples, const json_t *here_job,
    const char *baseline, double delta_pct, json_t *rep, struct bf_diag *d)
{
	const json_t *matrix = json_object_get(here_job, "matrix"), *cells, *c, *b;
	json_t *orig = NULL, *here = NULL, *fx = NULL, *notes;
	struct fx_ctx x;
	char dflt[BF_MAX_NAME + 160], note[256];
	int *base_of = NULL;
	int64_t bc, bb;
	size_t i, nc;
	int r;

	memset(&x, 0, sizeof(x));
	if (baseline == NULL && default_baseline(matrix, dflt, sizeof(dflt)))
		baseline = dflt;
	if (baseline == NULL || strcmp(baseline, "none") == 0)
		return json_object_set_new(rep, "effects", json_null()) == 0 ? 0 : BF_ERR_ALLOC;
	if ((r = repro_effects_check(matrix, baseline, "the reproduction's job", d)) != 0)
		return r;
	cells = json_object_get(here_samples, "cells");
	nc = json_array_size(cells);
	if ((base_of = calloc(nc + 1, sizeof(*base_of))) == NULL ||
	    (orig = json_object()) == NULL || (here = json_object()) == NULL ||
	    (fx = json_pack("{s:s,s:f,s:[],s:[]}", "baseline", baseline, "delta_pct",
	    delta_pct, "rows", "notes")) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = matrix_baselines(matrix, cells, baseline, "the reproduction's job", base_of,
	    d)) != 0 || (r = repro_series(bundle, here_samples, orig, here)) != 0)
		goto out;
	x.orig = orig;
	x.here = here;
	x.skip_counters = any_workload_metric(orig);
	x.delta_pct = delta_pct;
	x.rows = json_object_get(fx, "rows");
	notes = json_object_get(fx, "notes");
	for (i = 0; i < nc; i++) {
		if (base_of[i] < 0)
			continue;
		c = json_array_get(cells, i);
		b = json_array_get(cells, (size_t)base_of[i]);
		bc = bundle_cell(bundle, json_object_get(c, "axes"));
		bb = bundle_cell(bundle, json_object_get(b, "axes"));
		if (bc < 0 || bb < 0) {
			/* a compared job of another matrix, or a bundle cell
			 * without runs */
			snprintf(note, sizeof(note), "effects: the bundle has no cell with the axes "
			    "of cell %lld or of its baseline cell %lld",
			    (long long)json_integer_value(json_object_get(c, "cell_index")),
			    (long long)json_integer_value(json_object_get(b, "cell_index")));
			if (json_array_append_new(notes, json_string(note)) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			continue;
		}
		if ((r = cell_rows(&x, c, b, bc, bb)) != 0)
			goto out;
	}
	if (json_object_set_new(fx, "summary", json_pack("{s:I,s:I,s:I}", "reproduced",
	    (json_int_t)x.counts[REPRO_REPRODUCED], "differs",
	    (json_int_t)x.counts[REPRO_DIFFERS], "inconclusive",
	    (json_int_t)x.counts[REPRO_INCONCLUSIVE])) != 0 ||
	    json_object_set(rep, "effects", fx) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	if (r == BF_ERR_ALLOC)
		bf_diag_set(d, NULL, "out of memory");
	free(base_of);
	json_decref(orig);
	json_decref(here);
	json_decref(fx);
	return r;
}

/* "+9.20% [+8.10, +10.31]", "+9.20% (no CI)" or "-". */
static void
fmt_effect(char *f, size_t n, const json_t *side)
{
	const json_t *pct = json_object_get(side, "pct"), *ci = json_object_get(side, "ci");

	if (!json_is_number(pct))
		snprintf(f, n, "-");
	else if (!json_is_array(ci))
		snprintf(f, n, "%+.2f%% (no CI)", json_number_value(pct));
	else
		snprintf(f, n, "%+.2f%% [%+.2f, %+.2f]", json_number_value(pct),
		    json_number_value(json_array_get(ci, 0)),
		    json_number_value(json_array_get(ci, 1)));
}

int
repro_effects_text(const json_t *rep, struct buf *out)
{
	const json_t *fx = json_object_get(rep, "effects"), *row, *sum, *ci, *note;
	char fb[64], fh[64], fd[32], fr[64];
	size_t i;
	int r;

	if (!json_is_object(fx))
		return 0;
	sum = json_object_get(fx, "summary");
	if ((r = buf_printf(out, "\nEffects vs baseline %s (%% change of each cell vs its "
	    "baseline cell; bundle's lab vs here):\n%-28s %-14s %-26s %-26s %-10s %-26s %s\n",
	    json_string_value(json_object_get(fx, "baseline")), "cell", "metric",
	    "bundle's lab (95% CI)", "here (95% CI)", "diff", "ratio (90% CI)",
	    "verdict")) != 0)
		return r;
	if (json_array_size(json_object_get(fx, "rows")) == 0 &&
	    (r = buf_puts(out, "  (no cell differs from a baseline cell on that axis alone)\n")) != 0)
		return r;
	json_array_foreach(json_object_get(fx, "rows"), i, row) {
		fmt_effect(fb, sizeof(fb), json_object_get(row, "bundle"));
		fmt_effect(fh, sizeof(fh), json_object_get(row, "here"));
		if (json_is_number(json_object_get(row, "difference_pp")))
			snprintf(fd, sizeof(fd), "%+.2f pp",
			    json_number_value(json_object_get(row, "difference_pp")));
		else
			snprintf(fd, sizeof(fd), "-");
		ci = json_object_get(row, "ci90");
		if (!json_is_number(json_object_get(row, "ratio")))
			snprintf(fr, sizeof(fr), "-");
		else if (!json_is_array(ci))
			snprintf(fr, sizeof(fr), "%.4f (no CI)",
			    json_number_value(json_object_get(row, "ratio")));
		else
			snprintf(fr, sizeof(fr), "%.4f [%.4f, %.4f]",
			    json_number_value(json_object_get(row, "ratio")),
			    json_number_value(json_array_get(ci, 0)),
			    json_number_value(json_array_get(ci, 1)));
		if ((r = buf_printf(out, "%-28.28s %-14.14s %-26s %-26s %-10s %-26s %s\n",
		    json_string_value(json_object_get(row, "label")) ?
		    json_string_value(json_object_get(row, "label")) : "",
		    json_string_value(json_object_get(row, "metric")), fb, fh, fd, fr,
		    json_string_value(json_object_get(row, "verdict")))) != 0)
			return r;
		if (json_is_string(json_object_get(row, "why")) &&
		    (r = buf_printf(out, "    %s\n",
		    json_string_value(json_object_get(row, "why")))) != 0)
			return r;
	}
	json_array_foreach(json_object_get(fx, "notes"), i, note)
		if ((r = buf_printf(out, "  note: %s\n", json_string_value(note))) != 0)
			return r;
	return buf_printf(out, "%lld reproduced, %lld differ, %lld inconclusive (effect "
	    "delta +-%g%%: the ratio of the two effects, 90%% CI inside 1 +- delta, TOST at 95%%)\n",
	    (long long)json_integer_value(json_object_get(sum, "reproduced")),
	    (long long)json_integer_value(json_object_get(sum, "differs")),
	    (long long)json_integer_value(json_object_get(sum, "inconclusive")),
	    json_number_value(json_object_get(fx, "delta_pct")));
}
