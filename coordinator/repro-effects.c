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

/* Whether vals (an axis's values) holds value, written as in ?baseline=. */
static int
axis_has(const json_t *vals, const char *value)
{
	char vbuf[128];
	const json_t *v;
	size_t i;

	json_array_foreach(vals, i, v)
		if (strcmp(matrix_axis_str(v, vbuf, sizeof(vbuf)), value) == 0)
			return 1;
	return 0;
}

/* Entry i's label in a suite's job document: its "label", else its recipe. */
static const char *
entry_label(const json_t *e)
{
	const char *l = json_string_value(json_object_get(e, "label"));

	return l != NULL ? l : json_string_value(json_object_get(e, "recipe"));
}

/* Entry e's axis named axis: the job's matrix's, else the entry's own. */
static const json_t *
entry_axis(const json_t *job, const json_t *e, const char *axis)
{
	const json_t *v = json_object_get(json_object_get(job, "matrix"), axis);

	return v != NULL ? v : json_object_get(json_object_get(e, "matrix"), axis);
}

int
repro_effects_check(const json_t *job, const char *baseline, const char *what,
    struct bf_diag *d)
{
	char axis[BF_MAX_NAME + 1];
	const char *value;
	const json_t *suite = json_object_get(job, "suite"), *e, *vals;
	size_t i, naxis = 0;
	int r;

	if (baseline != NULL && strcmp(baseline, "none") == 0)
		return 0;
	if ((r = baseline_split(baseline, axis, &value, d)) != 0)
		return r;
	if (!json_is_array(suite)) {
		if (!json_is_array(vals = json_object_get(json_object_get(job, "matrix"), axis))) {
			bf_diag_set(d, "baseline", "\"%s\" is not an axis of %s's matrix", axis,
			    what);
			return BF_ERR_INVALID;
		}
		if (axis_has(vals, value))
			return 0;
		bf_diag_set(d, "baseline", "axis %s has no value \"%.60s\" in %s", axis, value,
		    what);
		return BF_ERR_INVALID;
	}
	/* a suite: an axis of the job's matrix or of some workload's */
	json_array_foreach(suite, i, e) {
		if (!json_is_array(vals = entry_axis(job, e, axis)))
			continue;
		naxis++;
		if (axis_has(vals, value))
			return 0;
	}
	if (naxis == 0)
		bf_diag_set(d, "baseline", "\"%s\" is not an axis of %s's matrix nor of any "
		    "workload's", axis, what);
	else
		bf_diag_set(d, "baseline", "axis %s has no value \"%.60s\" in %s", axis, value,
		    what);
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

/* Whether any metric of the bundle's cells with the axes of cells is the
 * workload's (not a counter). */
static int
any_workload_metric(const json_t *bundle, const json_t *orig, const json_t *cells)
{
	char k[32];
	const char *metric;
	const json_t *c, *m;
	int64_t bc;
	size_t i;

	json_array_foreach(cells, i, c) {
		if ((bc = bundle_cell(bundle, json_object_get(c, "axes"))) < 0)
			continue;
		snprintf(k, sizeof(k), "%lld", (long long)bc);
		json_object_foreach((json_t *)json_object_get(orig, k), metric, m)
			if (!repro_is_counter(metric))
				return 1;
	}
	return 0;
}

struct fx_ctx {
	const json_t *bundle;
	const json_t *orig, *here;	/* repro_series */
	const char *workload;		/* a suite's workload whose cells these are, or NULL */
	int skip_counters;
	double delta_pct;
	json_t *rows, *notes;
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
		if ((x->workload != NULL && json_object_set_new(row, "workload",
		    json_string(x->workload)) != 0) || json_array_append_new(x->rows, row) != 0) {
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

static int
add_note(struct fx_ctx *x, const char *note)
{
	return json_array_append_new(x->notes, json_string(note)) == 0 ? 0 : BF_ERR_ALLOC;
}

/* The rows of every cell of cells (here_samples' cells, or one workload's)
 * that differs from a baseline cell on baseline's axis alone. */
static int
effects_cells(struct fx_ctx *x, const json_t *matrix, const json_t *cells,
    const char *baseline, const char *what, struct bf_diag *d)
{
	const json_t *c, *b;
	char note[256];
	int *base_of;
	int64_t bc, bb;
	size_t i, nc = json_array_size(cells);
	int r;

	if ((base_of = calloc(nc + 1, sizeof(*base_of))) == NULL)
		return BF_ERR_ALLOC;
	if ((r = matrix_baselines(matrix, cells, baseline, what, base_of, d)) != 0)
		goto out;
	x->skip_counters = any_workload_metric(x->bundle, x->orig, cells);
	for (i = 0; i < nc; i++) {
		if (base_of[i] < 0)
			continue;
		c = json_array_get(cells, i);
		b = json_array_get(cells, (size_t)base_of[i]);
		bc = bundle_cell(x->bundle, json_object_get(c, "axes"));
		bb = bundle_cell(x->bundle, json_object_get(b, "axes"));
		if (bc < 0 || bb < 0) {
			/* a compared job of another matrix, or a bundle cell
			 * without runs */
			snprintf(note, sizeof(note), "effects: the bundle has no cell with the axes "
			    "of cell %lld or of its baseline cell %lld",
			    (long long)json_integer_value(json_object_get(c, "cell_index")),
			    (long long)json_integer_value(json_object_get(b, "cell_index")));
			if ((r = add_note(x, note)) != 0)
				goto out;
			continue;
		}
		if ((r = cell_rows(x, c, b, bc, bb)) != 0)
			goto out;
	}
out:
	free(base_of);
	return r;
}

static json_t *
counts_json(const size_t c[3])
{
	return json_pack("{s:I,s:I,s:I}", "reproduced", (json_int_t)c[REPRO_REPRODUCED],
	    "differs", (json_int_t)c[REPRO_DIFFERS], "inconclusive",
	    (json_int_t)c[REPRO_INCONCLUSIVE]);
}

/* o's members reproduced, differs, inconclusive from c. */
static int
set_counts(json_t *o, const size_t c[3])
{
	json_t *t = counts_json(c);
	int r = t != NULL && json_object_update(o, t) == 0 ? 0 : BF_ERR_ALLOC;

	json_decref(t);
	return r;
}

/* cells whose axis "workload" is label (borrowed into a new array), and
 * the workload's matrix: the job's axes, then the entry's own. */
static int
workload_cut(const json_t *job, const json_t *e, const json_t *cells, const char *label,
    json_t **sub, json_t **matrix)
{
	const json_t *c, *jm = json_object_get(job, "matrix"), *em = json_object_get(e, "matrix");
	const char *w;
	size_t i;

	*sub = json_array();
	*matrix = json_is_object(jm) ? json_deep_copy(jm) : json_object();
	if (*sub == NULL || *matrix == NULL ||
	    (json_is_object(em) && json_object_update(*matrix, (json_t *)em) != 0))
		return BF_ERR_ALLOC;
	json_array_foreach(cells, i, c) {
		w = json_string_value(json_object_get(json_object_get(c, "axes"), "workload"));
		if (w != NULL && label != NULL && strcmp(w, label) == 0 &&
		    json_array_append(*sub, (json_t *)c) != 0)
			return BF_ERR_ALLOC;
	}
	return 0;
}

/*
 * A suite's effects, workload by workload: each workload's cells against
 * the baseline (given, else the first value of the first axis of the job's
 * matrix, else of the workload's own), as a job of its own would compare
 * them. A workload without the baseline's axis, or without a matrix, is a
 * note; so is one whose cells cannot be paired (d's text). fx gets
 * "workloads": [{"workload", "baseline", "reproduced", "differs",
 * "inconclusive"}]; *any is the number of workloads compared.
 */
static int
effects_suite(struct fx_ctx *x, const json_t *job, const json_t *cells, const char *baseline,
    json_t *fx, size_t *any, struct bf_diag *d)
{
	const json_t *e;
	json_t *sub = NULL, *m = NULL, *w = json_object_get(fx, "workloads"), *wo;
	char dflt[BF_MAX_NAME + 160], axis[BF_MAX_NAME + 1], what[BF_MAX_NAME + 16];
	char note[BF_MAX_NAME + 640];
	const char *label, *b;
	size_t i, k, before[3];
	int r = 0;

	*any = 0;
	json_array_foreach(json_object_get(job, "suite"), i, e) {
		json_decref(sub);
		json_decref(m);
		label = entry_label(e);
		if (label == NULL)
			continue;	/* validated when stored: not reached */
		if ((r = workload_cut(job, e, cells, label, &sub, &m)) != 0)
			goto out;
		b = baseline;
		if (b == NULL && default_baseline(m, dflt, sizeof(dflt)))
			b = dflt;
		note[0] = '\0';
		if (b == NULL)
			snprintf(note, sizeof(note), "effects: workload %s has no matrix: no cell to "
			    "compare with a baseline cell", label);
		else {
			snprintf(axis, sizeof(axis), "%.*s", (int)strcspn(b, ":"), b);
			if (json_object_get(m, axis) == NULL)
				snprintf(note, sizeof(note), "effects: workload %s has no axis %s",
				    label, axis);
		}
		wo = json_pack("{s:s,s:s?}", "workload", label, "baseline", note[0] ? NULL : b);
		if (wo == NULL || json_array_append_new(w, wo) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if (note[0] == '\0') {
			memcpy(before, x->counts, sizeof(before));
			x->workload = label;
			snprintf(what, sizeof(what), "workload %s", label);
			r = effects_cells(x, m, sub, b, what, d);
			if (r == BF_ERR_INVALID) {
				/* e.g. its cells lack the value: said, not fatal */
				snprintf(note, sizeof(note), "effects: workload %s: %s", label, d->msg);
				bf_diag_clear(d);
				r = 0;
			} else if (r != 0)
				goto out;
			else
				(*any)++;
			for (k = 0; k < 3; k++)
				before[k] = x->counts[k] - before[k];
			if ((r = set_counts(wo, before)) != 0)
				goto out;
		}
		if (note[0] != '\0' && (r = add_note(x, note)) != 0)
			goto out;
	}
out:
	json_decref(sub);
	json_decref(m);
	return r;
}

int
repro_effects_json(const json_t *bundle, const json_t *here_samples, const json_t *here_job,
    const char *baseline, double delta_pct, json_t *rep, struct bf_diag *d)
{
	const json_t *matrix = json_object_get(here_job, "matrix"), *cells;
	json_t *orig = NULL, *here = NULL, *fx = NULL;
	int suite = json_is_array(json_object_get(here_job, "suite"));
	struct fx_ctx x;
	char dflt[BF_MAX_NAME + 160];
	const char *given = baseline;
	size_t nw = 0;
	int r;

	memset(&x, 0, sizeof(x));
	if (baseline == NULL && default_baseline(matrix, dflt, sizeof(dflt)))
		baseline = dflt;
	if ((!suite && baseline == NULL) || (baseline != NULL && strcmp(baseline, "none") == 0))
		return json_object_set_new(rep, "effects", json_null()) == 0 ? 0 : BF_ERR_ALLOC;
	if (given != NULL && (r = repro_effects_check(here_job, given,
	    "the reproduction's job", d)) != 0)
		return r;
	cells = json_object_get(here_samples, "cells");
	if ((orig = json_object()) == NULL || (here = json_object()) == NULL ||
	    (fx = json_pack("{s:s?,s:f,s:[],s:[]}", "baseline", baseline, "delta_pct",
	    delta_pct, "rows", "notes")) == NULL ||
	    (suite && json_object_set_new(fx, "workloads", json_array()) != 0)) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = repro_series(bundle, here_samples, orig, here)) != 0)
		goto out;
	x.bundle = bundle;
	x.orig = orig;
	x.here = here;
	x.delta_pct = delta_pct;
	x.rows = json_object_get(fx, "rows");
	x.notes = json_object_get(fx, "notes");
	if (suite) {
		if ((r = effects_suite(&x, here_job, cells, given, fx, &nw, d)) != 0)
			goto out;
		if (nw == 0 && given == NULL) {
			/* no workload has a matrix: as a job without one */
			r = json_object_set_new(rep, "effects", json_null()) == 0 ? 0 :
			    BF_ERR_ALLOC;
			goto out;
		}
	} else if ((r = effects_cells(&x, matrix, cells, baseline, "the reproduction's job",
	    d)) != 0)
		goto out;
	if (json_object_set_new(fx, "summary", counts_json(x.counts)) != 0 ||
	    json_object_set(rep, "effects", fx) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	if (r == BF_ERR_ALLOC)
		bf_diag_set(d, NULL, "out of memory");
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

#define FX_LABEL_MIN	28	/* the cell column's width, at least */
#define FX_LABEL_MAX	64	/* and at most (longer labels are cut) */

/* One row of the effects table, its cell column lw wide. */
static int
row_text(const json_t *row, int lw, struct buf *out)
{
	char fb[64], fh[64], fd[32], fr[64];
	const json_t *ci = json_object_get(row, "ci90");
	const char *label = json_string_value(json_object_get(row, "label"));
	int r;

	fmt_effect(fb, sizeof(fb), json_object_get(row, "bundle"));
	fmt_effect(fh, sizeof(fh), json_object_get(row, "here"));
	if (json_is_number(json_object_get(row, "difference_pp")))
		snprintf(fd, sizeof(fd), "%+.2f pp",
		    json_number_value(json_object_get(row, "difference_pp")));
	else
		snprintf(fd, sizeof(fd), "-");
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
	if ((r = buf_printf(out, "%-*.*s %-14.14s %-26s %-26s %-10s %-26s %s\n", lw, lw,
	    label != NULL ? label : "", json_string_value(json_object_get(row, "metric")), fb,
	    fh, fd, fr, json_string_value(json_object_get(row, "verdict")))) != 0)
		return r;
	if (json_is_string(json_object_get(row, "why")))
		return buf_printf(out, "    %s\n", json_string_value(json_object_get(row, "why")));
	return 0;
}

static int
counts_text(const json_t *sum, const char *lead, struct buf *out)
{
	return buf_printf(out, "%s%lld reproduced, %lld differ, %lld inconclusive", lead,
	    (long long)json_integer_value(json_object_get(sum, "reproduced")),
	    (long long)json_integer_value(json_object_get(sum, "differs")),
	    (long long)json_integer_value(json_object_get(sum, "inconclusive")));
}

int
repro_effects_text(const json_t *rep, struct buf *out)
{
	const json_t *fx = json_object_get(rep, "effects"), *rows, *row, *wls, *wl, *note;
	const char *label, *w;
	size_t i, k, n;
	int r, lw = FX_LABEL_MIN;

	if (!json_is_object(fx))
		return 0;
	rows = json_object_get(fx, "rows");
	wls = json_object_get(fx, "workloads");
	json_array_foreach(rows, i, row)
		if ((label = json_string_value(json_object_get(row, "label"))) != NULL &&
		    strlen(label) > (size_t)lw)
			lw = strlen(label) > FX_LABEL_MAX ? FX_LABEL_MAX : (int)strlen(label);
	if (json_is_array(wls))
		r = buf_puts(out, "\nEffects per workload (% change of each cell vs its baseline "
		    "cell; bundle's lab vs here):\n");
	else
		r = buf_printf(out, "\nEffects vs baseline %s (%% change of each cell vs its "
		    "baseline cell; bundle's lab vs here):\n",
		    json_string_value(json_object_get(fx, "baseline")));
	if (r != 0 || (r = buf_printf(out, "%-*s %-14s %-26s %-26s %-10s %-26s %s\n", lw,
	    "cell", "metric", "bundle's lab (95% CI)", "here (95% CI)", "diff",
	    "ratio (90% CI)", "verdict")) != 0)
		return r;
	if (json_is_array(wls)) {
		/* a suite: each workload's rows under its baseline, then its count */
		json_array_foreach(wls, k, wl) {
			w = json_string_value(json_object_get(wl, "workload"));
			if (!json_is_string(json_object_get(wl, "baseline"))) {
				if ((r = buf_printf(out, "workload %s: not compared (see the notes)\n",
				    w)) != 0)
					return r;
				continue;
			}
			if ((r = buf_printf(out, "workload %s, baseline %s:\n", w,
			    json_string_value(json_object_get(wl, "baseline")))) != 0)
				return r;
			n = 0;
			json_array_foreach(rows, i, row)
				if (strcmp(json_string_value(json_object_get(row, "workload")) ?
				    json_string_value(json_object_get(row, "workload")) : "", w) == 0) {
					if ((r = row_text(row, lw, out)) != 0)
						return r;
					n++;
				}
			if (n == 0 && (r = buf_puts(out, "  (no cell differs from a baseline cell "
			    "on that axis alone)\n")) != 0)
				return r;
			if ((r = counts_text(wl, "  ", out)) != 0 || (r = buf_puts(out, "\n")) != 0)
				return r;
		}
	} else {
		if (json_array_size(rows) == 0 && (r = buf_puts(out, "  (no cell differs from a "
		    "baseline cell on that axis alone)\n")) != 0)
			return r;
		json_array_foreach(rows, i, row)
			if ((r = row_text(row, lw, out)) != 0)
				return r;
	}
	json_array_foreach(json_object_get(fx, "notes"), i, note)
		if ((r = buf_printf(out, "  note: %s\n", json_string_value(note))) != 0)
			return r;
	if ((r = counts_text(json_object_get(fx, "summary"), json_is_array(wls) ?
	    "the suite: " : "", out)) != 0)
		return r;
	return buf_printf(out, " (effect delta +-%g%%: the ratio of the two effects, 90%% CI "
	    "inside 1 +- delta, TOST at 95%%)\n",
	    json_number_value(json_object_get(fx, "delta_pct")));
}
