/*
 * repro.c: the statistics, matching and reporting behind a reproduction
 * (repro.h). Pure functions over JSON and sample arrays, except
 * repro_fetch, a slot of fetch.c's hardened client (no SSRF: fetch.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jx.h"
#include "bundle.h"
#include "fetch.h"
#include "repro.h"

#ifndef BF_VERSION
#define BF_VERSION "0"
#endif

static const char *const verdict_names[] = {
	[REPRO_REPRODUCED] = "reproduced",
	[REPRO_DIFFERS] = "differs",
	[REPRO_INCONCLUSIVE] = "inconclusive",
};

const char *
repro_verdict_name(enum repro_verdict_kind k)
{
	return k <= REPRO_INCONCLUSIVE ? verdict_names[k] : "?";
}

int
repro_side_summary(const double *v, const int *boot, size_t n, struct stats_summary *out,
    int *bm)
{
	double *means = NULL;
	size_t k = 0, i;
	int r;

	*bm = 0;
	if (boot != NULL && n > 0) {
		for (i = 1; i < n && boot[i] == boot[0]; i++)
			;
		if (i < n) {
			if ((means = calloc(n, sizeof(*means))) == NULL)
				return BF_ERR_ALLOC;
			if ((r = stats_boot_means(v, boot, n, means, &k)) != 0)
				goto out;
			*bm = 1;
			r = stats_summarize(means, k, out);
			goto out;
		}
	}
	r = stats_summarize(v, n, out);
out:
	free(means);
	return r;
}

/* Samples per side so that the 90% CI half-width of the % change, with the
 * observed variances, falls below h percent: the smallest n with
 * t_{0.95, 2n-2} sqrt((va + vb) / n) / |mean_a| * 100 < h. 0: not found. */
static size_t
n_for_halfwidth(const struct stats_summary *a, const struct stats_summary *b, double h)
{
	double t, w, s2;
	size_t n;

	if (!(h > 0) || a->mean == 0)
		return 0;
	/* relative to mean_a, so that sds near 1e160 do not overflow */
	s2 = (a->sd / a->mean) * (a->sd / a->mean) + (b->sd / a->mean) * (b->sd / a->mean);
	if (!isfinite(s2))
		return 0;
	for (n = 2; n <= STATS_MAX_SAMPLES; n = n < 64 ? n + 1 : n + n / 8) {
		if (stats_t_quantile(0.95, (double)(2 * n - 2), &t) != 0)
			return 0;
		w = t * sqrt(s2 / (double)n) * 100.0;
		if (w < h)
			return n;
	}
	return 0;
}

int
repro_verdict(const double *a, const int *aboot, size_t na, const double *b,
    const int *bboot, size_t nb, double delta_pct, struct repro_verdict *out)
{
	struct stats_welch w;
	struct stats_pct p90, p95;
	double nu, d = delta_pct;
	int bma, bmb, r;

	if (out == NULL || !(delta_pct > 0) || !isfinite(delta_pct))
		return BF_ERR_INVALID;
	memset(out, 0, sizeof(*out));
	out->kind = REPRO_INCONCLUSIVE;
	out->pct = out->lo95 = out->hi95 = out->lo90 = out->hi90 = NAN;
	if ((r = repro_side_summary(a, aboot, na, &out->a, &bma)) != 0 ||
	    (r = repro_side_summary(b, bboot, nb, &out->b, &bmb)) != 0)
		return r;
	out->boot_means = bma || bmb;
	if (out->a.n < 2 || out->b.n < 2) {
		out->why = "fewer than 2 samples on a side";
		if (out->a.n >= 1 && out->b.n >= 1 && out->a.mean != 0)
			out->pct = 100.0 * (out->b.mean - out->a.mean) / out->a.mean;
		return 0;
	}
	if ((r = stats_welch(&out->a, &out->b, &w)) != 0)
		return r;
	nu = isfinite(w.nu) ? w.nu : (double)(out->a.n + out->b.n - 2);
	if ((r = stats_fieller(&out->a, &out->b, nu, 0.90, &p90)) != 0 ||
	    (r = stats_fieller(&out->a, &out->b, nu, 0.95, &p95)) != 0)
		return r;
	out->pct = p95.pct;
	out->lo95 = p95.lo;
	out->hi95 = p95.hi;
	out->lo90 = p90.lo;
	out->hi90 = p90.hi;
	if (!isfinite(out->pct)) {
		out->why = "the original mean is 0: no % change";
		return 0;
	}
	if (!p90.unbounded && isfinite(p90.lo) && isfinite(p90.hi) && p90.lo >= -d &&
	    p90.hi <= d) {
		out->kind = REPRO_REPRODUCED;
		return 0;
	}
	if (!p95.unbounded && isfinite(p95.lo) && isfinite(p95.hi) &&
	    (p95.lo > d || p95.hi < -d)) {
		out->kind = REPRO_DIFFERS;
		return 0;
	}
	if (fabs(out->pct) >= d) {
		out->why = "cannot be shown equivalent at this delta";
		out->n_needed = 0;
		return 0;
	}
	out->why = "the CI is too wide";
	out->n_needed = n_for_halfwidth(&out->a, &out->b, d - fabs(out->pct));
	return 0;
}

/* --- fingerprints and diffs --- */

static const char *const fp_identity[] = { "cpu_model", "cpu_vendor", "cpu_family",
    "cpu_model_number", "cpu_stepping", "sockets", "cores", "threads", NULL };
/* Compared, reported, never refused. */
static const char *const fp_skip[] = { "type", "identity", NULL };

static int
in_list(const char *k, const char *const *l)
{
	size_t i;

	for (i = 0; l != NULL && l[i] != NULL; i++)
		if (strcmp(k, l[i]) == 0)
			return 1;
	return 0;
}

static int
diff_add(json_t *arr, const char *field, const json_t *a, const json_t *b)
{
	json_t *e = json_pack("{s:s,s:O,s:O}", "field", field, "bundle",
	    a != NULL ? (json_t *)a : json_null(), "here", b != NULL ? (json_t *)b : json_null());

	if (e == NULL || json_array_append_new(arr, e) != 0)
		return BF_ERR_ALLOC;
	return 0;
}

int
repro_fp_compare(const json_t *want, const json_t *here, json_t **identp, json_t **otherp)
{
	json_t *ident = json_array(), *other = json_array(), *a, *b, *na = NULL, *nb = NULL;
	double ma, mb;
	size_t i;
	int r;

	*identp = *otherp = NULL;
	if (ident == NULL || other == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (!json_is_object(here)) {
		if ((r = diff_add(ident, "fingerprint", json_null(), json_null())) != 0)
			goto out;
		goto done;
	}
	for (i = 0; fp_identity[i] != NULL; i++) {
		a = json_object_get(want, fp_identity[i]);
		b = json_object_get(here, fp_identity[i]);
		if (!json_equal(a ? a : json_null(), b ? b : json_null()) &&
		    (r = diff_add(ident, fp_identity[i], a, b)) != 0)
			goto out;
	}
	na = json_integer((json_int_t)json_array_size(json_object_get(want, "numa_nodes")));
	nb = json_integer((json_int_t)json_array_size(json_object_get(here, "numa_nodes")));
	if (na == NULL || nb == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (!json_equal(na, nb) && (r = diff_add(ident, "numa_nodes (count)", na, nb)) != 0)
		goto out;
	a = json_object_get(want, "mem_total_kb");
	b = json_object_get(here, "mem_total_kb");
	ma = json_is_number(a) ? json_number_value(a) : -1;
	mb = json_is_number(b) ? json_number_value(b) : -1;
	if ((ma <= 0 || mb <= 0 || fabs(mb - ma) > REPRO_MEM_TOLERANCE * ma) &&
	    (r = diff_add(ident, "mem_total_kb (within 5%)", a, b)) != 0)
		goto out;
	{
		static const char *const skip_ident[] = { "type", "identity", "cpu_model",
		    "cpu_vendor", "cpu_family", "cpu_model_number", "cpu_stepping", "sockets",
		    "cores", "threads", NULL };

		if ((r = repro_diff(want, here, "", skip_ident, other)) != 0)
			goto out;
	}
done:
	*identp = ident;
	*otherp = other;
	ident = other = NULL;
	r = 0;
out:
	json_decref(ident);
	json_decref(other);
	json_decref(na);
	json_decref(nb);
	return r;
}

static int
flatten_into(const json_t *v, const char *path, json_t *flat, int depth)
{
	char p[512];
	const char *k;
	json_t *x;
	size_t i;
	int r;

	if (depth > BF_MAX_JSON_DEPTH || json_object_size(flat) > 100000)
		return 0;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x) {
			jx_path(p, sizeof(p), path, k);
			if ((r = flatten_into(x, p, flat, depth + 1)) != 0)
				return r;
		}
		return 0;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, x) {
			jx_path_idx(p, sizeof(p), path, i);
			if ((r = flatten_into(x, p, flat, depth + 1)) != 0)
				return r;
		}
		return 0;
	}
	return json_object_set(flat, path, (json_t *)v) == 0 ? 0 : BF_ERR_ALLOC;
}

json_t *
repro_flatten(const json_t *v)
{
	json_t *flat = json_object();

	if (flat != NULL && v != NULL && flatten_into(v, "", flat, 0) != 0) {
		json_decref(flat);
		flat = NULL;
	}
	return flat;
}

/* The first segment of a flat path ("numa_nodes[0].mem_kb" -> "numa_nodes"). */
static int
top_skipped(const char *path, const char *const *skip)
{
	char top[BF_MAX_NAME + 1];
	size_t n = strcspn(path, ".[");

	if (n > BF_MAX_NAME)
		return 0;
	memcpy(top, path, n);
	top[n] = '\0';
	return in_list(top, skip);
}

int
repro_diff(const json_t *a, const json_t *b, const char *prefix, const char *const *skip,
    json_t *diff)
{
	json_t *fa = repro_flatten(a), *fb = repro_flatten(b), *x, *y;
	const char *k;
	char f[600];
	int r = 0;

	if (fa == NULL || fb == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_object_foreach(fa, k, x) {
		if (top_skipped(k, skip))
			continue;
		y = json_object_get(fb, k);
		if (y != NULL && json_equal(x, y))
			continue;
		snprintf(f, sizeof(f), "%s%s", prefix, k);
		if ((r = diff_add(diff, f, x, y)) != 0)
			goto out;
	}
	json_object_foreach(fb, k, y) {
		if (top_skipped(k, skip) || json_object_get(fa, k) != NULL)
			continue;
		snprintf(f, sizeof(f), "%s%s", prefix, k);
		if ((r = diff_add(diff, f, NULL, y)) != 0)
			goto out;
	}
out:
	json_decref(fa);
	json_decref(fb);
	return r;
}

/* --- the report --- */

static int
series_add(json_t *cells, int64_t cell, const char *metric, const json_t *unit, double v,
    int64_t boot)
{
	char key[32];
	json_t *c, *m;

	snprintf(key, sizeof(key), "%lld", (long long)cell);
	if ((c = json_object_get(cells, key)) == NULL) {
		if ((c = json_object()) == NULL || json_object_set_new(cells, key, c) != 0)
			return BF_ERR_ALLOC;
	}
	if ((m = json_object_get(c, metric)) == NULL) {
		if ((m = json_pack("{s:[],s:[],s:O}", "v", "b", "unit",
		    unit != NULL ? (json_t *)unit : json_null())) == NULL ||
		    json_object_set_new(c, metric, m) != 0)
			return BF_ERR_ALLOC;
	}
	if (json_array_append_new(json_object_get(m, "v"), json_real(v)) != 0 ||
	    json_array_append_new(json_object_get(m, "b"), json_integer(boot)) != 0)
		return BF_ERR_ALLOC;
	return 0;
}

int
repro_series_arrays(const json_t *m, double **vp, int **bp, size_t *np)
{
	const json_t *va = json_object_get(m, "v"), *ba = json_object_get(m, "b");
	size_t n = json_array_size(va), i;

	*vp = NULL;
	*bp = NULL;
	*np = 0;
	if (n == 0)
		return 0;
	if ((*vp = calloc(n, sizeof(double))) == NULL || (*bp = calloc(n, sizeof(int))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < n; i++) {
		(*vp)[i] = json_number_value(json_array_get(va, i));
		(*bp)[i] = (int)json_integer_value(json_array_get(ba, i));
	}
	*np = n;
	return 0;
}

static json_t *
num_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *
side_json(const struct stats_summary *s)
{
	return json_pack("{s:I,s:o,s:o,s:o,s:o,s:o}", "n", (json_int_t)s->n, "mean",
	    num_or_null(s->mean), "ci_lo", num_or_null(s->ci_lo), "ci_hi",
	    num_or_null(s->ci_hi), "min", num_or_null(s->n > 0 ? s->min : NAN), "max",
	    num_or_null(s->n > 0 ? s->max : NAN));
}

static int
verdict_json(const struct repro_verdict *v, double delta, json_t **out)
{
	char detail[256];
	json_t *o;

	detail[0] = '\0';
	if (v->kind == REPRO_DIFFERS)
		snprintf(detail, sizeof(detail), "differs by %+.2f%% (95%% CI %+.2f%% .. "
		    "%+.2f%%), beyond +-%g%%", v->pct, v->lo95, v->hi95, delta);
	else if (v->kind == REPRO_REPRODUCED)
		snprintf(detail, sizeof(detail), "equivalent within +-%g%% (90%% CI %+.2f%% .. "
		    "%+.2f%%)", delta, v->lo90, v->hi90);
	else if (v->n_needed > 0)
		snprintf(detail, sizeof(detail), "%s: about %zu %s per side needed (%zu more)",
		    v->why, v->n_needed, v->boot_means ? "boots" : "samples",
		    v->n_needed > v->a.n ? v->n_needed - v->a.n : 0);
	else
		snprintf(detail, sizeof(detail), "%s", v->why ? v->why : "");
	o = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:s,s:s,s:b}",
	    "original", side_json(&v->a), "reproduced", side_json(&v->b),
	    "delta_pct", num_or_null(v->pct), "delta_lo", num_or_null(v->lo95),
	    "delta_hi", num_or_null(v->hi95), "ci90_lo", num_or_null(v->lo90),
	    "ci90_hi", num_or_null(v->hi90), "verdict", repro_verdict_name(v->kind),
	    "detail", detail, "boot_means", v->boot_means);
	if (o != NULL && v->kind == REPRO_INCONCLUSIVE &&
	    json_object_set_new(o, "n_needed", v->n_needed > 0 ?
	    json_integer((json_int_t)v->n_needed) : json_null()) != 0) {
		json_decref(o);
		o = NULL;
	}
	*out = o;
	return o != NULL ? 0 : BF_ERR_ALLOC;
}

/* The knob read-back in force ("after") of the first run of each cell. */
static const json_t *
cell_knobs(const json_t *runs, int64_t cell)
{
	const json_t *run, *k;
	size_t i;

	json_array_foreach(runs, i, run) {
		if (json_integer_value(json_object_get(run, "cell_index")) != cell)
			continue;
		k = json_object_get(run, "knobs");
		if (json_is_object(k) && json_object_get(k, "after") != NULL)
			return json_object_get(k, "after");
	}
	return NULL;
}

/* Of the machines here that match a bundle machine, the first that ran a
 * run of the rerun (the one its numbers come from), else the first. */
static const char *
ran_here(const json_t *names, const json_t *here_runs)
{
	const json_t *n, *run;
	size_t i, j;

	json_array_foreach(names, i, n)
		json_array_foreach(here_runs, j, run)
			if (json_is_string(n) && json_equal(n, json_object_get(run, "machine")))
				return json_string_value(n);
	return json_string_value(json_array_get(names, 0));
}

static int
env_diff(const json_t *bundle, const json_t *here_runs, const json_t *here_job,
    const json_t *here_machines, const json_t *info, json_t *diff)
{
	static const char *const job_skip[] = { "machines", NULL };
	const json_t *match, *bm, *hm, *bk, *hk, *run;
	json_t *ver = json_string(BF_VERSION), *part = NULL;
	char prefix[300];
	const char *bn, *hn;
	size_t i, j;
	int64_t cell, last = -1;
	int r;

	if (ver == NULL)
		return BF_ERR_ALLOC;
	if (!json_equal(json_object_get(bundle, "benchfleet_version"), ver) &&
	    (r = diff_add(diff, "benchfleet_version", json_object_get(bundle,
	    "benchfleet_version"), ver)) != 0)
		goto out;
	json_array_foreach(json_object_get(info, "matches"), i, match) {
		bn = json_string_value(json_object_get(match, "bundle_machine"));
		hn = ran_here(json_object_get(match, "here"), here_runs);
		if (bn == NULL || hn == NULL || (bm = bundle_machine(bundle, bn)) == NULL)
			continue;
		hm = json_object_get(here_machines, hn);
		snprintf(prefix, sizeof(prefix), "machine %s vs %s: ", bn, hn);
		if ((part = json_array()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = repro_diff(json_object_get(bm, "fingerprint"), hm, "", fp_skip,
		    part)) != 0)
			goto out;
		json_array_foreach(part, j, run) {
			char f[600];

			snprintf(f, sizeof(f), "%s%s", prefix, json_string_value(json_object_get(run,
			    "field")));
			if ((r = diff_add(diff, f, json_object_get(run, "bundle"),
			    json_object_get(run, "here"))) != 0)
				goto out;
		}
		json_decref(part);
		part = NULL;
	}
	if ((r = repro_diff(json_object_get(bundle, "job"), here_job, "job.", job_skip,
	    diff)) != 0)
		goto out;
	json_array_foreach(json_object_get(bundle, "runs"), i, run) {
		cell = json_integer_value(json_object_get(run, "cell_index"));
		if (cell == last)
			continue;
		last = cell;
		bk = cell_knobs(json_object_get(bundle, "runs"), cell);
		hk = cell_knobs(here_runs, cell);
		if (bk == NULL && hk == NULL)
			continue;
		snprintf(prefix, sizeof(prefix), "cell %lld knobs (read back).", (long long)cell);
		if ((r = repro_diff(bk, hk, prefix, NULL, diff)) != 0)
			goto out;
	}
	r = 0;
out:
	json_decref(part);
	json_decref(ver);
	return r;
}

int
repro_series(const json_t *bundle, const json_t *here_samples, json_t *orig, json_t *here)
{
	json_t *runcell = json_object();
	const json_t *s, *run, *hc;
	char key[32];
	size_t i, j;
	int r;

	if (runcell == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(json_object_get(bundle, "runs"), i, run) {
		snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(run,
		    "id")));
		if (json_object_set(runcell, key, json_object_get(run, "cell_index")) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	json_array_foreach(json_object_get(bundle, "samples"), i, s) {
		snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(s,
		    "run")));
		if ((r = series_add(orig, json_integer_value(json_object_get(runcell, key)),
		    json_string_value(json_object_get(s, "metric")), json_object_get(s, "unit"),
		    json_number_value(json_object_get(s, "value")),
		    json_integer_value(json_object_get(s, "boot")))) != 0)
			goto out;
	}
	json_array_foreach(json_object_get(here_samples, "cells"), i, hc)
		json_array_foreach(json_object_get(hc, "samples"), j, s)
			if ((r = series_add(here, json_integer_value(json_object_get(hc,
			    "cell_index")), json_string_value(json_object_get(s, "metric")),
			    json_object_get(s, "unit"), json_number_value(json_object_get(s, "value")),
			    json_integer_value(json_object_get(s, "boot")))) != 0)
				goto out;
	r = 0;
out:
	json_decref(runcell);
	return r;
}

/* The one cell of runs whose axes equal axes, or -1 (none, or several). */
static int64_t
cell_by_axes(const json_t *runs, const json_t *axes)
{
	const json_t *run;
	int64_t found = -1, c;
	size_t i;

	json_array_foreach(runs, i, run) {
		if (!json_equal(json_object_get(run, "axes"), (json_t *)axes))
			continue;
		c = json_integer_value(json_object_get(run, "cell_index"));
		if (found >= 0 && c != found)
			return -1;
		found = c;
	}
	return found;
}

int
repro_align_cells(json_t *bundle, const json_t *here_runs, size_t *moved)
{
	json_t *run;
	int64_t c;
	size_t i;

	*moved = 0;
	if (!json_is_object(json_object_get(json_array_get(here_runs, 0), "axes")))
		return 0;
	json_array_foreach(json_object_get(bundle, "runs"), i, run) {
		if (!json_is_object(json_object_get(run, "axes")) ||
		    (c = cell_by_axes(here_runs, json_object_get(run, "axes"))) < 0 ||
		    c == json_integer_value(json_object_get(run, "cell_index")))
			continue;
		if (json_object_set_new(run, "cell_index", json_integer(c)) != 0)
			return BF_ERR_ALLOC;
		(*moved)++;
	}
	return 0;
}

int
repro_report_json(const json_t *bundle, const json_t *here_samples, const json_t *here_runs,
    const json_t *here_job, const json_t *here_machines, const json_t *here_snaps,
    const json_t *info, double delta_pct, json_t **out, struct bf_diag *d)
{
	json_t *orig = NULL, *here = NULL, *rep = NULL, *cells, *c, *mo, *e;
	json_t *vj, *metrics, *hc, *diff;
	const json_t *mh;
	const char *metric;
	double *av = NULL, *bv = NULL;
	int *ab = NULL, *bb = NULL;
	size_t i, na, nb, counts[3] = { 0, 0, 0 };
	struct repro_verdict v;
	char key[32];
	int r;

	*out = NULL;
	if ((orig = json_object()) == NULL || (here = json_object()) == NULL ||
	    (rep = json_pack("{s:[],s:[],s:f}", "cells", "environment_diff", "delta_pct",
	    delta_pct)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = repro_series(bundle, here_samples, orig, here)) != 0)
		goto out;
	cells = json_object_get(rep, "cells");
	json_array_foreach(json_object_get(here_samples, "cells"), i, hc) {
		snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(hc,
		    "cell_index")));
		if ((c = json_pack("{s:O,s:O,s:[]}", "cell_index", json_object_get(hc,
		    "cell_index"), "label", json_object_get(hc, "label") ?
		    json_object_get(hc, "label") : json_null(), "metrics")) == NULL ||
		    json_array_append_new(cells, c) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		metrics = json_object_get(c, "metrics");
		mo = json_object_get(orig, key);
		json_object_foreach(mo, metric, e) {
			mh = json_object_get(json_object_get(here, key), metric);
			free(av);
			free(ab);
			free(bv);
			free(bb);
			av = bv = NULL;
			ab = bb = NULL;
			if ((r = repro_series_arrays(e, &av, &ab, &na)) != 0 ||
			    (r = repro_series_arrays(mh, &bv, &bb, &nb)) != 0 ||
			    (r = repro_verdict(av, ab, na, bv, bb, nb, delta_pct, &v)) != 0 ||
			    (r = verdict_json(&v, delta_pct, &vj)) != 0)
				goto out;
			/* the verdicts of the workload's metrics; counters
			 * explain them (repro-env.c) */
			if (!repro_is_counter(metric))
				counts[v.kind]++;
			if (json_object_set_new(vj, "metric", json_string(metric)) != 0 ||
			    json_object_set(vj, "unit", json_object_get(e, "unit")) != 0 ||
			    json_array_append_new(metrics, vj) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		}
	}
	if (json_object_set_new(rep, "summary", json_pack("{s:I,s:I,s:I}", "reproduced",
	    (json_int_t)counts[0], "differs", (json_int_t)counts[1], "inconclusive",
	    (json_int_t)counts[2])) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	diff = json_object_get(rep, "environment_diff");
	if ((r = env_diff(bundle, here_runs, here_job, here_machines, info, diff)) != 0 ||
	    (r = repro_env_snapshots(bundle, here_runs, here_snaps, rep, d)) != 0)
		goto out;
	*out = rep;
	rep = NULL;
	r = 0;
out:
	if (r != 0 && r != BF_ERR_ALLOC)
		bf_diag_set(d, NULL, "reproduction report: %s", bf_err_str(r));
	free(av);
	free(ab);
	free(bv);
	free(bb);
	json_decref(orig);
	json_decref(here);
	json_decref(rep);
	return r;
}

static void
fmt_side(char *f, size_t n, const json_t *side)
{
	const json_t *m = json_object_get(side, "mean"), *lo = json_object_get(side, "ci_lo"),
	    *hi = json_object_get(side, "ci_hi");

	if (!json_is_number(m))
		snprintf(f, n, "-");
	else if (!json_is_number(lo) || !json_is_number(hi))
		snprintf(f, n, "%.6g (n=%lld, no CI)", json_number_value(m),
		    (long long)json_integer_value(json_object_get(side, "n")));
	else
		snprintf(f, n, "%.6g +- %.3g", json_number_value(m),
		    (json_number_value(hi) - json_number_value(lo)) / 2);
}

int
repro_report_text(const json_t *rep, struct buf *out)
{
	const json_t *c, *m, *e, *sum = json_object_get(rep, "summary");
	char fo[64], fr[64], fd[64], rb[128], hb[128];
	size_t i, j;
	int r;

	if ((r = buf_printf(out, "%-28s %-14s %-24s %-24s %-28s %s\n", "cell", "metric",
	    "original (95% CI)", "reproduced (95% CI)", "delta % (95% CI)", "verdict")) != 0)
		return r;
	json_array_foreach(json_object_get(rep, "cells"), i, c) {
		json_array_foreach(json_object_get(c, "metrics"), j, m) {
			/* counters: in their own section (repro_env_text) */
			if (json_is_true(json_object_get(m, "counter")))
				continue;
			fmt_side(fo, sizeof(fo), json_object_get(m, "original"));
			fmt_side(fr, sizeof(fr), json_object_get(m, "reproduced"));
			if (!json_is_number(json_object_get(m, "delta_pct")))
				snprintf(fd, sizeof(fd), "-");
			else if (!json_is_number(json_object_get(m, "delta_lo")))
				snprintf(fd, sizeof(fd), "%+.2f%% (no CI)",
				    json_number_value(json_object_get(m, "delta_pct")));
			else
				snprintf(fd, sizeof(fd), "%+.2f%% [%+.2f, %+.2f]",
				    json_number_value(json_object_get(m, "delta_pct")),
				    json_number_value(json_object_get(m, "delta_lo")),
				    json_number_value(json_object_get(m, "delta_hi")));
			if ((r = buf_printf(out, "%-28.28s %-14.14s %-24s %-24s %-28s %s\n",
			    json_string_value(json_object_get(c, "label")) ?
			    json_string_value(json_object_get(c, "label")) : "",
			    json_string_value(json_object_get(m, "metric")), fo, fr, fd,
			    json_string_value(json_object_get(m, "verdict")))) != 0)
				return r;
			if (json_string_length(json_object_get(m, "detail")) > 0 &&
			    (r = buf_printf(out, "    %s\n",
			    json_string_value(json_object_get(m, "detail")))) != 0)
				return r;
			if ((r = repro_explain_text(m, out)) != 0)
				return r;
		}
	}
	if ((r = buf_printf(out, "\n%lld reproduced, %lld differ, %lld inconclusive "
	    "(delta +-%g%%; reproduced: 90%% CI of the ratio inside 1 +- delta, TOST at 95%%)\n",
	    (long long)json_integer_value(json_object_get(sum, "reproduced")),
	    (long long)json_integer_value(json_object_get(sum, "differs")),
	    (long long)json_integer_value(json_object_get(sum, "inconclusive")),
	    json_number_value(json_object_get(rep, "delta_pct")))) != 0)
		return r;
	if ((r = repro_effects_text(rep, out)) != 0)
		return r;
	if ((r = buf_puts(out, "\nEnvironment diff (bundle's lab vs here):\n")) != 0)
		return r;
	if (json_array_size(json_object_get(rep, "environment_diff")) == 0 &&
	    (r = buf_puts(out, "  (none)\n")) != 0)
		return r;
	json_array_foreach(json_object_get(rep, "environment_diff"), i, e) {
		jx_repr(json_object_get(e, "bundle"), rb, sizeof(rb));
		jx_repr(json_object_get(e, "here"), hb, sizeof(hb));
		if ((r = buf_printf(out, "  %s: %s (bundle) vs %s (here)\n",
		    json_string_value(json_object_get(e, "field")), rb, hb)) != 0)
			return r;
	}
	if ((r = repro_env_text(rep, out)) != 0)
		return r;
	for (i = 0; i < json_array_size(json_object_get(rep, "notes")); i++)
		if ((r = buf_printf(out, "%snote: %s\n", i == 0 ? "\n" : "",
		    json_string_value(json_array_get(json_object_get(rep, "notes"), i)))) != 0)
			return r;
	return 0;
}

/* --- fetching --- */

int
repro_fetch(const char *url, size_t max, struct buf *out, struct bf_diag *d)
{
	int r;

	if ((r = fetch_slot_take()) != 0) {
		bf_diag_set(d, "url", "busy: other fetches are under way; try again");
		return r;
	}
	r = fetch_url(url, max, out, d);
	fetch_slot_give();
	return r;
}
