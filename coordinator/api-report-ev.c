/*
 * api-report-ev.c: the job report's evidence (issue 16): what the legend
 * says about the numbers beyond the statistics. From the job's done runs,
 * their snapshots and samples it builds the inputs of common/evidence.h
 * (per cell: a snapshot, the mean of every metric and counter, the cell's
 * knob/axis/parameter values) and collects the warnings: THP that did not
 * happen, settings that drifted within the job, recipe expectations that
 * failed; and the context line of each cell pooled over several machines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "evidence.h"
#include "job.h"
#include "recipe.h"

/* Distinct metric names of one cell whose means are kept. */
#define REPORT_EV_MAX_MEANS	2048
/* Cells named in "runs on" context lines; the rest are counted. */
#define REPORT_EV_POOLED_CELLS	8
#define REPORT_EV_POOLED_MACHINES	16	/* ... and machines named per cell */

static int
run_done(const json_t *run)
{
	const char *st = json_string_value(json_object_get(run, "state"));

	return st != NULL && strcmp(st, "done") == 0;
}

/* The index in samp's cells of the run's cell_index, or -1. */
static long
cell_of(const json_t *cellsj, const json_t *run)
{
	json_int_t ci = json_integer_value(json_object_get(run, "cell_index"));
	size_t i, nc = json_array_size(cellsj);

	if (ci >= 0 && (size_t)ci < nc && json_integer_value(json_object_get(
	    json_array_get(cellsj, (size_t)ci), "cell_index")) == ci)
		return (long)ci;
	for (i = 0; i < nc; i++)
		if (json_integer_value(json_object_get(json_array_get(cellsj, i),
		    "cell_index")) == ci)
			return (long)i;
	return -1;
}

/*
 * The snapshots the job's done runs name, {sha256: parsed}, at most
 * BF_MAX_REPORT_SNAPSHOTS distinct; *past counts the runs whose snapshot
 * was not loaded for the cap. A snapshot that is not JSON is kept as the
 * string "unparsable" so the checks say so.
 */
static int
load_snapshots(struct api *a, const json_t *runs, json_t **out, size_t *past)
{
	json_t *o, *v, *run;
	const char *sha;
	char *text;
	size_t i, n = 0;

	*past = 0;
	if ((o = json_object()) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(json_object_get(runs, "runs"), i, run) {
		if (!run_done(run) ||
		    (sha = json_string_value(json_object_get(run, "snapshot_sha256"))) == NULL ||
		    json_object_get(o, sha) != NULL)
			continue;
		if (n >= BF_MAX_REPORT_SNAPSHOTS) {
			(*past)++;
			continue;
		}
		if (store_snapshot_get(a->st, sha, &text) != 0)
			continue;
		v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		free(text);
		if (v == NULL)
			v = json_string("unparsable");
		if (v == NULL || json_object_set_new(o, sha, v) != 0) {
			json_decref(o);
			return BF_ERR_ALLOC;
		}
		n++;
	}
	*out = o;
	return 0;
}

/* The mean of every metric in the cell's samples, into *meansp (the
 * caller frees it; names borrowed from c), at most REPORT_EV_MAX_MEANS
 * metrics, in the order of the cell's series. */
static int
cell_means(const struct store_cell *c, struct evidence_mean **meansp, size_t *np)
{
	struct evidence_mean *m = NULL;
	const struct store_series *se;
	size_t k, j, n;

	*meansp = NULL;
	*np = 0;
	n = c->nseries < REPORT_EV_MAX_MEANS ? c->nseries : REPORT_EV_MAX_MEANS;
	if ((m = calloc(n + 1, sizeof(*m))) == NULL)
		return BF_ERR_ALLOC;
	for (k = 0; k < n; k++) {
		se = &c->series[k];
		m[k].name = se->metric;
		/* the sum first, in sample order, then divided */
		for (j = 0; j < se->n; j++)
			m[k].mean += se->v[j];
		m[k].n = se->n;
		m[k].mean /= (double)m[k].n;
	}
	*meansp = m;
	*np = n;
	return 0;
}

/* "cell LABEL: runs on m1, m2" for cells whose done runs were on more than
 * one machine (at most REPORT_EV_POOLED_MACHINES named, then "and more"). */
static int
pooled_cells(const json_t *cellsj, const json_t *runs, struct evidence_lines *ctx)
{
	const char *(*seen)[REPORT_EV_POOLED_MACHINES] = NULL, *mach, *label;
	const json_t *run;
	size_t i, k, named = 0, more = 0, nc = json_array_size(cellsj), *nm = NULL;
	unsigned char *extra = NULL;
	struct buf b;
	long c;
	int r = 0;

	buf_init(&b, BF_MAX_STR - 256);
	if ((seen = calloc(nc + 1, sizeof(*seen))) == NULL ||
	    (nm = calloc(nc + 1, sizeof(*nm))) == NULL ||
	    (extra = calloc(nc + 1, sizeof(*extra))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(json_object_get(runs, "runs"), i, run) {
		if (!run_done(run) ||
		    (mach = json_string_value(json_object_get(run, "machine"))) == NULL ||
		    (c = cell_of(cellsj, run)) < 0)
			continue;
		for (k = 0; k < nm[c] && strcmp(seen[c][k], mach) != 0; k++)
			;
		if (k < nm[c])
			continue;
		if (nm[c] == REPORT_EV_POOLED_MACHINES)
			extra[c] = 1;
		else
			seen[c][nm[c]++] = mach;
	}
	for (i = 0; i < nc; i++) {
		if (nm[i] < 2)
			continue;
		if (named == REPORT_EV_POOLED_CELLS) {
			more++;
			continue;
		}
		named++;
		buf_reset(&b);
		for (k = 0; k < nm[i]; k++)
			if ((r = buf_printf(&b, "%s%s", k ? ", " : "", seen[i][k])) != 0)
				break;
		if (r == BF_ERR_ALLOC)
			goto out;
		label = json_string_value(json_object_get(json_array_get(cellsj, i), "label"));
		if ((r = evidence_lines_add(ctx, "cell %s: runs on %s%s", label ? label : "?",
		    b.data ? b.data : "", extra[i] || r != 0 ? ", and more" : "")) != 0)
			goto out;
	}
	if (more > 0)
		r = evidence_lines_add(ctx, "and %zu more cells ran on several machines", more);
out:
	free(seen);
	free(nm);
	free(extra);
	buf_free(&b);
	return r;
}

/* The values a cell was run with: the job's fixed parameters (defaults <-
 * preset <- params), its knobs, then the cell's axes, and the defaults that
 * follow its knobs (job_knob_defaults); a new object. */
static json_t *
cell_values(const json_t *base, const struct job_spec *job, const struct recipe *rec,
    const json_t *cj)
{
	json_t *v = base != NULL ? json_deep_copy(base) : json_object(), *knobs = NULL;
	const json_t *axes = json_object_get(cj, "axes");
	const char *k;
	json_t *x;

	if (v == NULL || (job != NULL && json_object_update(v, job->knobs) != 0) ||
	    (json_is_object(axes) && json_object_update(v, (json_t *)axes) != 0))
		goto fail;
	if (job != NULL && rec != NULL) {
		/* the cell's knobs: the job's, then its knob axes */
		if ((knobs = json_deep_copy(job->knobs)) == NULL)
			goto fail;
		if (json_is_object(axes))
			json_object_foreach((json_t *)axes, k, x)
				if (recipe_param(rec, k) == NULL && !job_is_boot_axis(k) &&
				    json_object_set(knobs, k, x) != 0)
					goto fail;
		if (job_knob_defaults(job, rec, axes, knobs, v) != 0)
			goto fail;
	}
	json_decref(knobs);
	return v;
fail:
	json_decref(knobs);
	json_decref(v);
	return NULL;
}

int
api_report_evidence(struct api *a, const json_t *jobj, const struct store_samples *ts,
    const json_t *runs,
    const struct recipe *rec, struct evidence_lines *warn, struct evidence_lines *ctx)
{
	const json_t *cellsj = json_object_get(ts->doc, "cells"), *run, *snap;
	json_t *snaps = NULL, *base = NULL, **vals = NULL, *ax;
	struct evidence_mean **means = NULL;
	struct evidence_cell *ec = NULL;
	struct evidence_run *er = NULL;
	struct job_spec *job = NULL;
	const char **axes = NULL, *sha, *k;
	size_t i, nc = json_array_size(cellsj), nr, m = 0, naxes = 0, past = 0;
	struct bf_diag d;
	long c;
	int r;

	bf_diag_clear(&d);
	nr = json_array_size(json_object_get(runs, "runs"));
	if ((r = load_snapshots(a, runs, &snaps, &past)) != 0)
		goto out;
	if ((ec = calloc(nc + 1, sizeof(*ec))) == NULL ||
	    (means = calloc(nc + 1, sizeof(*means))) == NULL ||
	    (vals = calloc(nc + 1, sizeof(*vals))) == NULL ||
	    (er = calloc(nr + 1, sizeof(*er))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	/* a stored spec that no longer loads still has its samples checked */
	if (job_from_json(json_object_get(json_object_get(jobj, "spec"), "job"), &job, &d) == 0 &&
	    job_base_values(job, rec, &base, &d) != 0)
		base = NULL;
	for (i = 0; i < nc; i++) {
		const json_t *cj = json_array_get(cellsj, i);

		ec[i].label = json_string_value(json_object_get(cj, "label"));
		if ((r = cell_means(&ts->cell[i], &means[i], &ec[i].nmeans)) != 0)
			goto out;
		ec[i].means = means[i];
		if ((vals[i] = cell_values(base, job, rec, cj)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		ec[i].values = vals[i];
	}
	json_array_foreach(json_object_get(runs, "runs"), i, run) {
		if (!run_done(run) || (c = cell_of(cellsj, run)) < 0)
			continue;
		sha = json_string_value(json_object_get(run, "snapshot_sha256"));
		snap = sha != NULL ? json_object_get(snaps, sha) : NULL;
		/* the cell's environment: its first run's (drift says if others differ) */
		if (ec[c].snapshot == NULL)
			ec[c].snapshot = snap;
		er[m].id = json_integer_value(json_object_get(run, "id"));
		er[m].cell = (size_t)c;
		er[m].cell_label = ec[c].label;
		er[m].snapshot = snap;
		m++;
	}
	if (job != NULL && (naxes = json_object_size(job->matrix)) > 0) {
		if ((axes = calloc(naxes, sizeof(*axes))) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		naxes = 0;
		json_object_foreach(job->matrix, k, ax)
			axes[naxes++] = k;
	}
	if ((r = evidence_thp(ec, nc, warn)) != 0 ||
	    (r = evidence_expect(rec, ec, nc, warn)) != 0 ||
	    (r = evidence_drift(er, m, axes, naxes, warn)) != 0)
		goto out;
	if (past > 0 && (r = evidence_lines_add(warn, "%zu runs' snapshots were not checked: "
	    "past the cap of %d distinct snapshots a report loads", past,
	    BF_MAX_REPORT_SNAPSHOTS)) != 0)
		goto out;
	r = pooled_cells(cellsj, runs, ctx);
out:
	for (i = 0; i < nc && means != NULL; i++)
		free(means[i]);
	for (i = 0; i < nc && vals != NULL; i++)
		json_decref(vals[i]);
	free(means);
	free(vals);
	free(ec);
	free(er);
	free(axes);
	json_decref(base);
	json_decref(snaps);
	job_free(job);
	return r;
}
