/*
 * api-report-pivot.c: the side-by-side report layout (common/report-pivot.h)
 * on the API. ?columns=AXIS on GET /api/v1/jobs/{id}/report, with its
 * default (the kernel or cmdline axis when the job has one), and
 * GET /api/v1/report?jobs=12,14,r3: cells with equal axis values compared
 * across jobs of one recipe, where "rN" stands for the samples the bundle
 * of reproduction N brought from the other lab, so that their lab against
 * ours is one table.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "caps.h"
#include "matrix.h"
#include "parse.h"
#include "recipe.h"
#include "report.h"
#include "report-pivot.h"

#define MULTI_MAX_JOBS	REPORT_PIVOT_MAX_COLS

/* The axes that make the side-by-side layout the default, in order. */
static const char *const default_axes[] = { "kernel", "cmdline" };

/* Cells of cellsj that have axis, and the distinct values it takes (up to 2). */
static size_t
axis_values(const json_t *cellsj, const char *axis, size_t *ncells)
{
	char a[128], b[128];
	const json_t *c, *v;
	size_t i, nv = 0;

	*ncells = 0;
	json_array_foreach(cellsj, i, c) {
		if ((v = json_object_get(json_object_get(c, "axes"), axis)) == NULL)
			continue;
		(*ncells)++;
		matrix_axis_str(v, nv == 0 ? a : b, sizeof(a));
		if (nv == 0 || (nv == 1 && strcmp(a, b) != 0))
			nv++;
	}
	return nv;
}

int
api_report_columns(const json_t *cellsj, const char *colq, const char *base, char *axis,
    size_t axsz, struct bf_diag *d)
{
	size_t i, nc, nv;
	const char *colon = base != NULL ? strchr(base, ':') : NULL;

	axis[0] = '\0';
	if (colq != NULL && strcmp(colq, "none") == 0)
		return 0;
	if (colq != NULL) {
		if (*colq == '\0' || strlen(colq) >= axsz || strlen(colq) > BF_MAX_NAME) {
			bf_diag_set(d, "columns", "\"%.40s\" is not an axis name or none", colq);
			return BF_ERR_INVALID;
		}
		nv = axis_values(cellsj, colq, &nc);
		if (nc == 0 || nc != json_array_size(cellsj)) {
			bf_diag_set(d, "columns", "\"%.40s\" is not an axis of every cell of the "
			    "job (or none)", colq);
			return BF_ERR_INVALID;
		}
		if (nv < 2) {
			bf_diag_set(d, "columns", "axis %s has one value: nothing to put side by "
			    "side", colq);
			return BF_ERR_INVALID;
		}
		if (colon != NULL && ((size_t)(colon - base) != strlen(colq) ||
		    strncmp(base, colq, strlen(colq)) != 0)) {
			bf_diag_set(d, "baseline", "\"%.60s\" is not on the columns axis %s "
			    "(with columns, the baseline is a value of that axis)", base, colq);
			return BF_ERR_INVALID;
		}
		snprintf(axis, axsz, "%s", colq);
		return 0;
	}
	for (i = 0; i < sizeof(default_axes) / sizeof(default_axes[0]); i++) {
		nv = axis_values(cellsj, default_axes[i], &nc);
		if (nv < 2 || nc != json_array_size(cellsj))
			continue;
		/* a baseline on another axis keeps the layout it always had */
		if (colon != NULL && ((size_t)(colon - base) != strlen(default_axes[i]) ||
		    strncmp(base, default_axes[i], strlen(default_axes[i])) != 0))
			return 0;
		snprintf(axis, axsz, "%s", default_axes[i]);
		return 0;
	}
	/* a suite (cells with a workload axis) compared on another axis is
	 * side by side on it, so that it ends with its summary */
	if (colon != NULL && (size_t)(colon - base) < axsz && json_array_size(cellsj) > 0 &&
	    axis_values(cellsj, "workload", &nc) > 0 && nc == json_array_size(cellsj)) {
		snprintf(axis, axsz, "%.*s", (int)(colon - base), base);
		nv = axis_values(cellsj, axis, &nc);
		if (strcmp(axis, "workload") == 0 || nv < 2 || nc != json_array_size(cellsj))
			axis[0] = '\0';
	}
	return 0;
}

int
api_report_pivot(const json_t *cellsj, const char *axis, const char *base, int summary,
    struct report_pivot **out, struct bf_diag *d)
{
	size_t n = json_array_size(cellsj), i;
	char **colv = NULL, **rowv = NULL, vb[256];
	const char *k, *ref = NULL;
	const json_t *c, *v;
	struct buf row;
	int r;

	*out = NULL;
	buf_init(&row, BF_MAX_STR);
	if ((colv = calloc(n + 1, sizeof(*colv))) == NULL ||
	    (rowv = calloc(n + 1, sizeof(*rowv))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(cellsj, i, c) {
		buf_reset(&row);
		json_object_foreach((json_t *)json_object_get(c, "axes"), k, v) {
			if (strcmp(k, axis) == 0)
				continue;
			if ((r = buf_printf(&row, "%s%s=%s", row.len ? " " : "", k,
			    matrix_axis_str(v, vb, sizeof(vb)))) != 0)
				goto out;
		}
		v = json_object_get(json_object_get(c, "axes"), axis);
		if ((colv[i] = strdup(v != NULL ? matrix_axis_str(v, vb, sizeof(vb)) : "")) ==
		    NULL || (rowv[i] = strdup(row.len ? row.data : "")) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	if (base != NULL && strchr(base, ':') != NULL)
		ref = strchr(base, ':') + 1;
	if ((r = report_pivot_build(axis, (const char *const *)colv, (const char *const *)rowv,
	    n, ref, out, d)) != 0)
		goto out;
	(*out)->summary = summary;
	/* a job whose cells run several recipes' workloads sums them up */
	json_array_foreach(cellsj, i, c)
		if (strcmp(axis, "workload") != 0 &&
		    json_object_get(json_object_get(c, "axes"), "workload") != NULL)
			(*out)->summary = 1;
	r = 0;
out:
	for (i = 0; colv != NULL && i < n; i++)
		free(colv[i]);
	for (i = 0; rowv != NULL && i < n; i++)
		free(rowv[i]);
	free(colv);
	free(rowv);
	buf_free(&row);
	return r;
}

/* ---- GET /api/v1/report?jobs= ---- */

/* One source of a multi-job report: a job here, or a reproduction's bundle. */
struct msrc {
	char name[48];		/* "job 12", "repro 3" */
	json_t *recipe;		/* the recipe document (borrowed from doc or jobj) */
	json_t *doc;		/* job doc or the parsed bundle */
	json_t *cells;		/* [{"label","axes",...}]: ts's */
	struct store_samples *ts;	/* the samples, per cell of cells */
	char ctx[BF_MAX_STR];
};

static void
msrc_free(struct msrc *s)
{
	json_decref(s->doc);
	json_decref(s->cells);
	store_samples_free(s->ts);
}

/* The cells of a bundle, as api_view_job_cells_get gives a job's. */
static int
bundle_cells(const json_t *bundle, json_t **out)
{
	json_t *cells = json_array(), *byidx = json_object(), *c, *run, *s, *arr;
	char key[32], rk[32];
	json_t *runcell = json_object();
	size_t i;
	int r = BF_ERR_ALLOC;

	if (cells == NULL || byidx == NULL || runcell == NULL)
		goto out;
	json_array_foreach(json_object_get(bundle, "runs"), i, run) {
		snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(json_object_get(run, "cell_index")));
		snprintf(rk, sizeof(rk), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(json_object_get(run, "id")));
		if (json_object_set_new(runcell, rk, json_string(key)) != 0)
			goto out;
		if (json_object_get(byidx, key) != NULL)
			continue;
		if ((c = json_pack("{s:O?, s:O?, s:[]}", "label", json_object_get(run, "label"),
		    "axes", json_object_get(run, "axes"), "samples")) == NULL ||
		    json_array_append_new(cells, c) != 0 || json_object_set(byidx, key, c) != 0)
			goto out;
	}
	json_array_foreach(json_object_get(bundle, "samples"), i, s) {
		snprintf(rk, sizeof(rk), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(json_object_get(s, "run")));
		c = json_object_get(byidx, json_string_value(json_object_get(runcell, rk)) ?
		    json_string_value(json_object_get(runcell, rk)) : "");
		if (c == NULL || (arr = json_object_get(c, "samples")) == NULL)
			continue;
		if (json_array_append(arr, s) != 0)
			goto out;
	}
	*out = cells;
	cells = NULL;
	r = 0;
out:
	json_decref(cells);
	json_decref(byidx);
	json_decref(runcell);
	return r;
}

/* Load source word ("12" or "r3"); on error the response is set. */
static int
msrc_load(struct api *a, const char *w, struct msrc *s, struct api_resp *rs)
{
	struct store_repro *x = NULL;
	json_t *bcells = NULL, *sig;
	char labname[BF_MAX_NAME + 32];
	struct bf_diag d;
	int64_t id;
	int r, repro = w[0] == 'r';

	memset(s, 0, sizeof(*s));
	if (parse_i64(w + repro, 1, INT64_MAX, &id) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "jobs", "jobs: \"%.40s\" is not a job id or "
		    "rN (a reproduction's bundle)", w);
		return BF_ERR_INVALID;
	}
	if (!repro) {
		snprintf(s->name, sizeof(s->name), "job %" PRId64, id);
		if ((r = api_view_job_get(a->st, id, &s->doc)) != 0 ||
		    (r = api_view_samples_get(a->st, id, &s->ts)) != 0) {
			api_store_error(rs, r, s->name);
			return r;
		}
		s->recipe = json_object_get(json_object_get(s->doc, "spec"), "recipe");
		s->cells = json_incref(json_object_get(s->ts->doc, "cells"));
		snprintf(s->ctx, sizeof(s->ctx), "%.*s: this lab's samples",
		    (int)sizeof(s->name), s->name);
		return 0;
	}
	snprintf(s->name, sizeof(s->name), "repro %" PRId64, id);
	if ((r = store_repro_get(a->st, id, &x)) != 0) {
		api_store_error(rs, r, s->name);
		return r;
	}
	bf_diag_clear(&d);
	r = (s->doc = json_loads(x->bundle, 0, NULL)) == NULL ? BF_ERR_INVALID :
	    bundle_cells(s->doc, &bcells);
	if (r == 0 && (r = store_samples_from_cells(bcells, &s->ts)) == 0)
		s->cells = json_incref(json_object_get(s->ts->doc, "cells"));
	json_decref(bcells);
	if (r != 0) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "%s: stored bundle does not "
		    "load", s->name);
		store_repro_free(x);
		return BF_ERR_INVALID;
	}
	s->recipe = json_object_get(s->doc, "recipe");
	/* the lab as this keyring names it (it verified the signature); the
	 * bundle's own word for itself otherwise */
	sig = json_object_get(s->doc, "signature");
	if (json_string_value(json_object_get(sig, "public_key")) == NULL ||
	    store_lab_by_key(a->st, json_string_value(json_object_get(sig, "public_key")),
	    labname, sizeof(labname)) != 0)
		snprintf(labname, sizeof(labname), "%s (its own name)",
		    json_string_value(json_object_get(sig, "lab")) ?
		    json_string_value(json_object_get(sig, "lab")) : "?");
	snprintf(s->ctx, sizeof(s->ctx), "%.*s: the samples of lab %s (their job %"
	    JSON_INTEGER_FORMAT "), from the bundle it was reproduced from (here: job %"
	    PRId64 ")", (int)sizeof(s->name), s->name, labname,
	    json_integer_value(json_object_get(json_object_get(s->doc, "origin"), "job_id")),
	    x->job_id);
	store_repro_free(x);
	return 0;
}

void
api_report_multi(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const char *jobsq = api_query(rq, "jobs"), *fmt, *colq;
	const char *ctx[MULTI_MAX_JOBS + 2];
	struct api_report_opts ro;
	struct buf cline;
	struct msrc src[MULTI_MAX_JOBS];
	struct recipe *rec = NULL, *rk = NULL;
	struct report_pivot *pv = NULL;
	struct report_model *model = NULL;
	struct api_report_data rd;
	struct store_samples allts;
	json_t *all = NULL, *c, *cc, *axes;
	char words[MULTI_MAX_JOBS * 24], *w, *save = NULL, title[256], bdesc[64];
	size_t ns = 0, i, j;
	struct bf_diag d;
	struct buf out;
	int r;

	memset(&rd, 0, sizeof(rd));
	memset(&allts, 0, sizeof(allts));
	buf_init(&out, 16 * 1024 * 1024);
	buf_init(&cline, BF_MAX_STR);
	bf_diag_clear(&d);
	if (api_report_opts_parse(rq, &ro, rs) != 0)
		goto out;
	fmt = ro.fmt;
	colq = ro.colq;
	if (ro.base != NULL) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "baseline", "baseline: a report across jobs "
		    "compares with the first job (list it first)");
		goto out;
	}
	if (colq != NULL && strcmp(colq, "job") != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "columns", "columns: \"%.40s\": a report "
		    "across jobs has the jobs as its columns (columns=job)", colq);
		goto out;
	}
	if (jobsq == NULL || strlen(jobsq) >= sizeof(words)) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "jobs", "jobs: 2 to %d comma-separated job "
		    "ids (or rN, a reproduction's bundle) are required", MULTI_MAX_JOBS);
		goto out;
	}
	snprintf(words, sizeof(words), "%s", jobsq);
	for (w = strtok_r(words, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
		if (ns == MULTI_MAX_JOBS) {
			api_error(rs, MHD_HTTP_BAD_REQUEST, "jobs", "jobs: at most %d", MULTI_MAX_JOBS);
			goto out;
		}
		if (msrc_load(a, w, &src[ns], rs) != 0)
			goto out;
		ns++;
		for (i = 0; i + 1 < ns; i++)
			if (strcmp(src[i].name, src[ns - 1].name) == 0) {
				api_error(rs, MHD_HTTP_BAD_REQUEST, "jobs", "jobs: %s is named twice",
				    src[i].name);
				goto out;
			}
	}
	if (ns < 2) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "jobs", "jobs: 2 to %d comma-separated job "
		    "ids (or rN, a reproduction's bundle) are required", MULTI_MAX_JOBS);
		goto out;
	}
	for (i = 0; i < ns; i++) {
		recipe_free(rk);
		rk = NULL;
		if (src[i].recipe == NULL) {
			/* a suite (its job, or its version 3 bundle) has a recipe per
			 * workload: its own report has a section for each */
			api_error(rs, MHD_HTTP_BAD_REQUEST, "jobs", "jobs: %s is a suite of "
			    "several recipes; only runs of one recipe compare here (the suite's "
			    "own report has a section per workload)", src[i].name);
			goto out;
		}
		if (recipe_from_json(src[i].recipe, &rk, &d) != 0) {
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "%s: stored recipe "
			    "does not load: %s", src[i].name, d.msg);
			goto out;
		}
		if (rec == NULL) {
			rec = rk;
			rk = NULL;
		} else if (strcmp(rec->name, rk->name) != 0) {
			api_error(rs, MHD_HTTP_BAD_REQUEST, "jobs", "jobs: %s ran recipe %s, %s "
			    "ran %s: only runs of one recipe compare", src[0].name, rec->name,
			    src[i].name, rk->name);
			goto out;
		}
	}
	/* one cells array, the source as the "job" axis; its samples the
	 * sources' series, borrowed */
	for (i = 0; i < ns; i++)
		allts.ncells += src[i].ts->ncells;
	if ((all = json_array()) == NULL ||
	    (allts.cell = calloc(allts.ncells + 1, sizeof(*allts.cell))) == NULL)
		goto oom;
	allts.ncells = 0;
	for (i = 0; i < ns; i++) {
		for (j = 0; j < src[i].ts->ncells; j++)
			allts.cell[allts.ncells++] = src[i].ts->cell[j];
		json_array_foreach(src[i].cells, j, c) {
			char lab[BF_MAX_STR];

			snprintf(lab, sizeof(lab), "%s: %s", src[i].name,
			    json_string_value(json_object_get(c, "label")) ?
			    json_string_value(json_object_get(c, "label")) : "");
			/* "job" last: it is the columns, whatever the cells' axes say */
			if ((axes = json_object()) == NULL ||
			    (json_object_get(c, "axes") != NULL &&
			    json_object_update(axes, json_object_get(c, "axes")) != 0) ||
			    json_object_set_new(axes, "job", json_string(src[i].name)) != 0 ||
			    (cc = json_pack("{s:s, s:o}", "label", lab, "axes", axes)) == NULL ||
			    json_array_append_new(all, cc) != 0)
				goto oom;
		}
		ctx[i] = src[i].ctx;
	}
	if ((r = api_report_pivot(all, "job", NULL, 1, &pv, &d)) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "jobs", "jobs: %s", d.msg);
		goto out;
	}
	if ((r = api_report_data(all, &allts, rec, ro.cmode, &rd)) != 0 ||
	    api_report_counters_line(rd.nmore, rd.nzero, &cline) != 0)
		goto oom;
	ctx[ns] = cline.len > 0 ? cline.data : NULL;
	ctx[ns + 1] = NULL;
	report_pivot_baselines(pv, rd.baseline_of, rd.in.ncells);
	snprintf(title, sizeof(title), "%s across %s", rec->name, jobsq);
	snprintf(bdesc, sizeof(bdesc), "job:%s", pv->cols[0]);
	rd.in.title = title;
	rd.in.baseline_desc = bdesc;
	rd.in.context = ctx;
	rd.in.min_n = ro.min_n;
	rd.in.stat = ro.stat;
	rd.in.adjust = ro.adjust;
	if ((r = report_compute(&rd.in, &model, &d)) != 0 ||
	    (r = report_pivot_render(model, pv, fmt, &out, &d)) != 0) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "report: %s", d.msg[0] ?
		    d.msg : bf_err_str(r));
		goto out;
	}
	api_report_respond(rs, fmt, &out);
	goto out;
oom:
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
out:
	for (i = 0; i < ns; i++)
		msrc_free(&src[i]);
	report_model_free(model);
	report_pivot_free(pv);
	api_report_data_free(&rd);
	free(allts.cell);
	recipe_free(rec);
	recipe_free(rk);
	json_decref(all);
	buf_free(&out);
	buf_free(&cline);
}

/* ---- the samples of a cells array ---- */

int
api_report_data(const json_t *cellsj, const struct store_samples *ts,
    const struct recipe *rec, enum evidence_counters cmode, struct api_report_data *rd)
{
	return api_report_data_of(cellsj, ts, &rec, 1, cmode, rd);
}

int
api_report_data_of(const json_t *cellsj, const struct store_samples *ts,
    const struct recipe *const *recs, size_t nrecs, enum evidence_counters cmode,
    struct api_report_data *rd)
{
	static const double no_v[1];
	static const int no_boot[1];
	const struct store_series *se;
	const json_t *cj;
	size_t nc = ts->ncells, nm, nrec = 0, i, j, k, idx, e;

	memset(rd, 0, sizeof(*rd));
	if ((rd->mets = calloc(BF_MAX_METRICS + 1, sizeof(*rd->mets))) == NULL)
		return BF_ERR_ALLOC;
	/* every recipe's metrics once by name, the first recipe's word on
	 * direction (a suite's workloads that share a metric share a summary
	 * geometric mean) */
	for (e = 0; e < nrecs; e++)
		for (k = 0; k < recs[e]->nmetrics && nrec < BF_MAX_METRICS; k++) {
			for (j = 0; j < nrec && strcmp(rd->mets[j].name, recs[e]->metrics[k].name);
			    j++)
				;
			if (j < nrec)
				continue;
			rd->mets[nrec].name = recs[e]->metrics[k].name;
			rd->mets[nrec].unit = recs[e]->metrics[k].unit;
			rd->mets[nrec].higher_better = recs[e]->metrics[k].higher_better;
			rd->mets[nrec].positive = recs[e]->metrics[k].positive;
			nrec++;
		}
	if (api_report_counters(ts, cmode, rd->mets, nrec, &nm, &rd->nmore, &rd->nzero) != 0)
		return BF_ERR_ALLOC;
	rd->nc = nc;
	rd->nm = nm;
	if ((rd->cells = calloc(nc + 1, sizeof(*rd->cells))) == NULL ||
	    (rd->series = calloc(nc * nm + 1, sizeof(*rd->series))) == NULL ||
	    (rd->baseline_of = calloc(nc + 1, sizeof(*rd->baseline_of))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < nc; i++) {
		cj = json_array_get(cellsj, i);
		rd->cells[i].label = json_string_value(json_object_get(cj, "label"));
		if (rd->cells[i].label == NULL)
			rd->cells[i].label = "?";
		rd->baseline_of[i] = -1;
		/* ts's arrays themselves: nothing is copied */
		for (k = 0; k < nm; k++) {
			idx = i * nm + k;
			se = store_cell_series(&ts->cell[i], rd->mets[k].name);
			rd->series[idx] = se != NULL && se->n > 0 ? (struct report_series){
			    .v = se->v, .boot = se->boot, .n = se->n } :
			    (struct report_series){ .v = no_v, .boot = no_boot, .n = 0 };
		}
	}
	rd->in = (struct report_input){ .nmetrics = nm, .metrics = rd->mets, .ncells = nc,
	    .cells = rd->cells, .series = rd->series, .baseline_of = rd->baseline_of };
	return 0;
}

void
api_report_data_free(struct api_report_data *rd)
{
	free(rd->series);
	free(rd->cells);
	free(rd->mets);
	free(rd->baseline_of);
	memset(rd, 0, sizeof(*rd));
}

void
api_report_respond(struct api_resp *rs, const char *fmt, struct buf *out)
{
	rs->status = MHD_HTTP_OK;
	rs->text_len = out->len;
	rs->ctype = strcmp(fmt, "json") == 0 ? "application/json" :
	    strcmp(fmt, "csv") == 0 ? "text/csv; charset=utf-8" :
	    strcmp(fmt, "markdown") == 0 ? "text/markdown; charset=utf-8" :
	    "text/plain; charset=utf-8";
	if ((rs->text = buf_steal(out)) == NULL)
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
}
