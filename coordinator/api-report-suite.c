/*
 * api-report-suite.c: the report of a suite job (job.h), one document with
 * a section per workload. Each section is the report of one entry as if
 * it were a job of its own: its cells and runs (those whose axis
 * "workload" is its label), its recipe's metrics, its matrix for
 * ?baseline=, its own evidence; every cell keeps "workload" among its
 * axes, so a summary across jobs can pair cells by workload.
 *   text, markdown: a heading, then each section as its report reads;
 *   csv: one table, the header once (every row's cell names its workload);
 *   json: {"job", "suite": [labels], "workloads": [{"workload", "recipe",
 *          "report": the section's report document}], "summary": as a
 *          side-by-side report's, or null}.
 * Text and markdown end with the suite's summary across workloads
 * (suite_summary), when the report has a columns axis.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "job.h"
#include "jx.h"
#include "recipe.h"
#include "report-pivot.h"

/* o with member key's array cut to the items whose axes.workload is label:
 * a new object sharing everything else. */
static json_t *
suite_cut(const json_t *o, const char *key, const char *label)
{
	json_t *c = json_copy((json_t *)o), *arr = json_array(), *it;
	const char *w;
	size_t i;

	if (c == NULL || arr == NULL)
		goto fail;
	json_array_foreach(json_object_get(o, key), i, it) {
		w = json_string_value(json_object_get(json_object_get(it, "axes"), "workload"));
		if (w != NULL && strcmp(w, label) == 0 && json_array_append(arr, it) != 0)
			goto fail;
	}
	if (json_object_set_new(c, key, arr) != 0) {
		arr = NULL;
		goto fail;
	}
	return c;
fail:
	json_decref(c);
	json_decref(arr);
	return NULL;
}

/* The cell's axes.workload is label (arg). */
static int
suite_keep(const json_t *cell, void *arg)
{
	const char *w = json_string_value(json_object_get(json_object_get(cell, "axes"),
	    "workload"));

	return w != NULL && strcmp(w, arg) == 0;
}

/* The baseline's axis (before ':') is an axis of matrix. */
static int
suite_has_axis(const json_t *matrix, const char *base)
{
	char axis[BF_MAX_NAME + 1];
	size_t n = strcspn(base, ":");

	if (n == 0 || n > BF_MAX_NAME)
		return 1;	/* malformed: let matrix_baselines say so */
	memcpy(axis, base, n);
	axis[n] = '\0';
	return json_object_get(matrix, axis) != NULL;
}

/*
 * The suite's closing summary (text, markdown; json: the "summary" member
 * into *sumj): every workload's cells in one model over the union of the
 * recipes' metrics, laid out on the sections' columns axis, so that the
 * summary table (workload, metric, A, B, % change, CI, mark) and the
 * geometric means of B/A per metric are report-pivot.c's, as in a report
 * across jobs; a workload's line for a metric of another's recipe (no
 * samples on either side) is left out. Nothing when the report has no columns axis (no A and B).
 */
static int
suite_summary(const json_t *jobj, const struct store_samples *ts, const json_t *recipes,
    const struct api_report_opts *ro, struct buf *out, json_t **sumj, struct bf_diag *d)
{
	const json_t *cellsj = json_object_get(ts->doc, "cells");
	const char *fmt = ro->fmt;
	struct recipe *recs[BF_MAX_SUITE];
	struct report_pivot *pv = NULL;
	struct report_model *model = NULL;
	struct api_report_data rd;
	char axis[BF_MAX_NAME + 1], title[BF_MAX_NAME + 64], bdesc[BF_MAX_NAME + 160];
	const json_t *rj;
	struct buf jb;
	json_t *doc = NULL;
	size_t n = 0, i;
	int r;

	memset(&rd, 0, sizeof(rd));
	buf_init(&jb, 16 * 1024 * 1024);
	*sumj = NULL;
	if (strcmp(fmt, "csv") == 0 ||
	    api_report_columns(cellsj, ro->colq, ro->base, axis, sizeof(axis), d) != 0 ||
	    axis[0] == '\0' || strcmp(axis, "workload") == 0) {
		r = 0;		/* the sections said what was wrong, if anything */
		goto out;
	}
	json_array_foreach(recipes, i, rj) {
		if (n == BF_MAX_SUITE)
			break;
		if ((r = recipe_from_json((json_t *)rj, &recs[n], d)) != 0)
			goto out;
		n++;
	}
	if ((r = api_report_pivot(cellsj, axis, ro->base, 1, &pv, d)) != 0 ||
	    (r = api_report_data_of(cellsj, ts, (const struct recipe *const *)recs, n,
	    EVIDENCE_COUNTERS_NONE, &rd)) != 0)
		goto out;
	report_pivot_baselines(pv, rd.baseline_of, rd.in.ncells);
	pv->summary = 1;
	pv->summary_only = 1;
	pv->summary_own = 1;	/* each workload's own metrics, as the seed's table */
	snprintf(title, sizeof(title), "job %" JSON_INTEGER_FORMAT ": the suite's summary",
	    json_integer_value(json_object_get(jobj, "id")));
	snprintf(bdesc, sizeof(bdesc), "%s:%.150s", axis, pv->cols[0]);
	rd.in.title = title;
	rd.in.baseline_desc = bdesc;
	rd.in.min_n = ro->min_n;
	rd.in.stat = ro->stat;
	rd.in.adjust = ro->adjust;
	if ((r = report_compute(&rd.in, &model, d)) != 0)
		goto out;
	if (strcmp(fmt, "json") == 0) {
		if ((r = report_pivot_render(model, pv, "json", &jb, d)) != 0)
			goto out;
		if ((doc = json_loadb(jb.data ? jb.data : "", jb.len, 0, NULL)) == NULL) {
			r = BF_ERR_INVALID;
			goto out;
		}
		*sumj = json_incref(json_object_get(doc, "summary"));
		r = 0;
		goto out;
	}
	r = buf_puts(out, "\n");
	if (r == 0)
		r = report_pivot_render(model, pv, fmt, out, d);
out:
	for (i = 0; i < n; i++)
		recipe_free(recs[i]);
	json_decref(doc);
	buf_free(&jb);
	report_model_free(model);
	report_pivot_free(pv);
	api_report_data_free(&rd);
	return r;
}

/* Append section sec (format fmt, index e) to out. */
static int
suite_append(struct buf *out, const char *fmt, size_t e, const struct buf *sec,
    json_t *sections, const char *label, const char *recipe)
{
	const char *p = sec->data != NULL ? sec->data : "";
	json_t *doc;

	if (strcmp(fmt, "json") == 0) {
		if ((doc = json_loadb(p, sec->len, 0, NULL)) == NULL)
			return BF_ERR_INVALID;
		return json_array_append_new(sections, json_pack("{s:s,s:s,s:o}", "workload",
		    label, "recipe", recipe, "report", doc)) != 0 ? BF_ERR_ALLOC : 0;
	}
	if (strcmp(fmt, "csv") == 0) {
		/* one table: the header of the first section only */
		if (e > 0 && strstr(p, "\r\n") != NULL)
			p = strstr(p, "\r\n") + 2;
		return buf_puts(out, p);
	}
	return buf_printf(out, "%s%s", e > 0 ? "\n" : "", p);
}

int
api_report_suite(struct api *a, int64_t id, const json_t *jobj,
    const struct store_samples *ts, const json_t *runs, const struct api_report_opts *ro, struct buf *out,
    struct api_resp *rs)
{
	const char *fmt = ro->fmt, *base = ro->base;
	struct api_report_opts eo = *ro;
	const json_t *spec = json_object_get(jobj, "spec");
	const json_t *recipes = json_object_get(spec, "recipes");
	struct job_spec *job = NULL;
	json_t *ejob = NULL, *eruns = NULL, *especs = NULL, *sections = NULL;
	json_t *sumj = NULL;
	struct store_samples *esamp = NULL;
	struct bf_diag d;
	struct buf sec, names;
	const char *label, *rname;
	char what[2 * BF_MAX_NAME + 8];
	char *text = NULL;
	size_t e;
	int r, ret = -1, used = 0;

	buf_init(&sec, 16 * 1024 * 1024);
	buf_init(&names, BF_MAX_STR);
	bf_diag_clear(&d);
	if (job_from_json(json_object_get(spec, "job"), &job, &d) != 0 || !job_is_suite(job) ||
	    json_array_size(recipes) != job->nsuite) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "job %lld: stored suite does "
		    "not load: %s", (long long)id, d.msg[0] ? d.msg : "its recipes do not match");
		goto out;
	}
	if ((sections = json_array()) == NULL)
		goto oom;
	for (e = 0; e < job->nsuite; e++)
		if (buf_printf(&names, "%s%s", e ? ", " : "", job->suite[e].label) != 0)
			goto oom;
	if (strcmp(fmt, "text") == 0 || strcmp(fmt, "markdown") == 0) {
		if (buf_printf(out, "%sjob %lld: suite of %zu workloads (%s)%s%s\n\n",
		    strcmp(fmt, "markdown") == 0 ? "# " : "", (long long)id, job->nsuite,
		    names.data, json_string_value(json_object_get(jobj, "name")) ? " - " : "",
		    json_string_value(json_object_get(jobj, "name")) ?
		    json_string_value(json_object_get(jobj, "name")) : "") != 0)
			goto oom;
	}
	for (e = 0; e < job->nsuite; e++) {
		const struct job_spec *ej = job->suite[e].job;

		label = job->suite[e].label;
		rname = json_string_value(json_object_get(json_array_get(recipes, e), "name"));
		if (rname == NULL)
			rname = ej->recipe;
		/* the entry as a job of its own, as api_report_one reads a job */
		if ((especs = json_pack("{s:O,s:O}", "job", ej->json, "recipe",
		    json_array_get(recipes, e))) == NULL ||
		    (ejob = json_copy((json_t *)jobj)) == NULL ||
		    json_object_set(ejob, "spec", especs) != 0 ||
		    store_samples_select(ts, suite_keep, (void *)label, &esamp) != 0 ||
		    (runs != NULL && (eruns = suite_cut(runs, "runs", label)) == NULL))
			goto oom;
		snprintf(what, sizeof(what), "%s (%s)", label, rname);
		buf_reset(&sec);
		/* ?baseline= applies to the workloads that have its axis */
		eo.base = base != NULL && suite_has_axis(ej->matrix, base) ? base : NULL;
		if ((r = api_report_one(a, id, ejob, esamp, eruns, &eo, what, &sec, rs)) != 0)
			goto out;
		used += base != NULL && suite_has_axis(ej->matrix, base);
		if ((r = suite_append(out, fmt, e, &sec, sections, label, rname)) != 0)
			goto oom;
		json_decref(especs);
		json_decref(ejob);
		store_samples_free(esamp);
		json_decref(eruns);
		especs = ejob = eruns = NULL;
		esamp = NULL;
	}
	if (base != NULL && used == 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "baseline", "baseline: \"%.64s\": no workload "
		    "of job %lld has that axis", base, (long long)id);
		goto out;
	}
	bf_diag_clear(&d);
	if ((r = suite_summary(jobj, ts, recipes, ro, out, &sumj, &d)) != 0) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "report: the suite's "
		    "summary: %s", d.msg[0] ? d.msg : bf_err_str(r));
		goto out;
	}
	if (strcmp(fmt, "json") == 0) {
		json_t *doc = json_pack("{s:I,s:[],s:O,s:O?}", "job", (json_int_t)id, "suite",
		    "workloads", sections, "summary", sumj);

		for (e = 0; doc != NULL && e < job->nsuite; e++)
			if (json_array_append_new(json_object_get(doc, "suite"),
			    json_string(job->suite[e].label)) != 0)
				break;
		text = doc != NULL ? json_dumps(doc, JSON_INDENT(2)) : NULL;
		json_decref(doc);
		if (text == NULL || buf_puts(out, text) != 0 || buf_puts(out, "\n") != 0)
			goto oom;
	}
	ret = 0;
	goto out;
oom:
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
out:
	free(text);
	json_decref(especs);
	json_decref(ejob);
	store_samples_free(esamp);
	json_decref(eruns);
	json_decref(sections);
	json_decref(sumj);
	buf_free(&sec);
	buf_free(&names);
	job_free(job);
	return ret;
}
