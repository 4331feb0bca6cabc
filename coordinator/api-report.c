/*
 * api-report.c: GET /api/v1/jobs/{id}/report, a job's comparison tables
 * (common/report.h) in text, markdown, csv or json: the job's samples per
 * cell and metric, the MM counters ?counters=none|thp|all adds beside them
 * (no better or worse), the baseline cells ?baseline=AXIS:VALUE picks, and
 * the legend's context lines (machines, kernels, adaptive stopping).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "evidence.h"
#include "job.h"
#include "matrix.h"
#include "parse.h"
#include "recipe.h"
#include "report.h"
#include "report-pivot.h"
#include "stats.h"

/*
 * Append v to the comma-separated set in b unless it is there already.
 * Returns BF_ERR_TOOBIG when the set is full (b is left as it was).
 */
static int
set_add(struct buf *b, const char *v)
{
	const char *p;
	size_t n;

	if (v == NULL || *v == '\0')
		return 0;
	n = strlen(v);
	for (p = b->data; p != NULL && (p = strstr(p, v)) != NULL; p += n)
		if ((p == b->data || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return 0;
	return buf_printf(b, "%s%s", b->len ? ", " : "", v);
}

/*
 * The legend's account of where the samples come from: the machines (and
 * their class) and the kernels the done runs (of runs, may be NULL) were
 * measured on. A set too long for its line ends in "and more"; returns
 * BF_ERR_ALLOC only.
 */
static int
report_context(const json_t *runs, const json_t *jobj, struct buf *machines,
    struct buf *kernels)
{
	json_t *r;
	const char *klass = json_string_value(json_object_get(jobj, "machine_class"));
	struct buf names, kset;
	int more_m = 0, more_k = 0, r1, r2, rc = 0;
	size_t i;

	/* each set leaves its line (capped at BF_MAX_STR) room for the words */
	buf_init(&names, BF_MAX_STR - 512);
	buf_init(&kset, BF_MAX_STR - 512);
	json_array_foreach(json_object_get(runs, "runs"), i, r) {
		if (!json_is_string(json_object_get(r, "state")) ||
		    strcmp(json_string_value(json_object_get(r, "state")), "done") != 0)
			continue;
		r1 = more_m ? 0 : set_add(&names, json_string_value(json_object_get(r,
		    "machine")));
		r2 = more_k ? 0 : set_add(&kset, json_string_value(json_object_get(r,
		    "kernel")));
		if (r1 == BF_ERR_ALLOC || r2 == BF_ERR_ALLOC) {
			rc = BF_ERR_ALLOC;
			goto out;
		}
		more_m |= r1 != 0;
		more_k |= r2 != 0;
	}
	if (buf_printf(machines, "machines: %s%s%s(%s%s)", klass ? "class " : "",
	    klass ? klass : "", klass ? " " : "", names.len ? names.data : "none yet",
	    more_m ? ", and more" : "") != 0 ||
	    buf_printf(kernels, "kernels: %s%s", kset.len ? kset.data : "none yet",
	    more_k ? ", and more" : "") != 0)
		rc = BF_ERR_ALLOC;
out:
	buf_free(&names);
	buf_free(&kset);
	return rc;
}

/*
 * For an adaptive job, the legend says what the target was and which cells
 * reached max_boots with their CI still wider than the target.
 */
static int
report_adaptive(const json_t *jobj, const struct report_input *in, struct buf *line)
{
	struct job_spec *job = NULL;
	const char *metric;
	double *means = NULL, half;
	struct stats_summary sm;
	struct buf cells;
	size_t m, i, k, hit = 0, more = 0;
	int rc = 0;

	buf_init(&cells, BF_MAX_STR / 2);
	if (job_from_json(json_object_get(json_object_get(jobj, "spec"), "job"), &job,
	    NULL) != 0 || job->target_ci_pct <= 0)
		goto out;
	metric = job->target_metric;
	for (m = 0; m < in->nmetrics; m++)
		if (metric == NULL || strcmp(in->metrics[m].name, metric) == 0)
			break;
	if (m == in->nmetrics)
		goto out;
	for (i = 0; i < in->ncells; i++) {
		const struct report_series *se = &in->series[i * in->nmetrics + m];

		if (se->n == 0 || (means = calloc(se->n, sizeof(*means))) == NULL)
			continue;
		if (stats_boot_means(se->v, se->boot, se->n, means, &k) == 0 &&
		    (int)k >= job->max_boots && stats_summarize(means, k, &sm) == 0 &&
		    isfinite(sm.ci_hi) && sm.mean != 0) {
			half = 100 * (sm.ci_hi - sm.mean) / fabs(sm.mean);
			/* a list past its cap is counted, not cut mid-name */
			if (half > job->target_ci_pct && (more > 0 ||
			    buf_printf(&cells, "%s%s (+-%.3g%%)", hit ? ", " : "",
			    in->cells[i].label, half) != 0))
				more++;
			else if (half > job->target_ci_pct)
				hit++;
		}
		free(means);
		means = NULL;
	}
	if (buf_printf(line, "adaptive: boots %lld..%lld until the 95%% CI of %s is within "
	    "+-%.3g%% of the mean; at the cap and still wider: %s", (long long)job->min_boots,
	    (long long)job->max_boots, in->metrics[m].name, job->target_ci_pct,
	    hit ? cells.data : "none") != 0 ||
	    (more > 0 && buf_printf(line, " and %zu more", more) != 0))
		rc = BF_ERR_ALLOC;
out:
	job_free(job);
	buf_free(&cells);
	return rc;
}

/* Every sample of metric name, in every cell, is 0. */
static int
all_zero(const struct store_samples *ts, const char *name)
{
	const struct store_series *se;
	size_t i, j;

	for (i = 0; i < ts->ncells; i++)
		if ((se = store_cell_series(&ts->cell[i], name)) != NULL)
			for (j = 0; j < se->n; j++)
				if (se->v[j] != 0)
					return 0;
	return 1;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
api_report_counters(const struct store_samples *ts, enum evidence_counters mode,
    struct report_metric *mets, size_t nrec, size_t *nm, size_t *nmore, size_t *nzero)
{
	const struct store_series *se;
	const char **names = NULL, *mn;
	size_t i, j, n = 0, cap = 0, u = 0, *idx = NULL, npick = 0, k;
	int r = 0;

	*nm = nrec;
	*nmore = 0;
	*nzero = 0;
	if (mode == EVIDENCE_COUNTERS_NONE)
		return 0;
	/* one name per series */
	for (i = 0; i < ts->ncells; i++) {
		for (j = 0; j < ts->cell[i].nseries; j++) {
			mn = ts->cell[i].series[j].metric;
			if (!evidence_is_counter(mn))
				continue;
			if (n == cap) {
				const char **nn;

				cap = cap ? 2 * cap : 64;
				if ((nn = realloc(names, cap * sizeof(*names))) == NULL) {
					r = BF_ERR_ALLOC;
					goto out;
				}
				names = nn;
			}
			names[n++] = mn;
		}
	}
	if (n == 0)
		goto out;
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++)
		if (u == 0 || strcmp(names[i], names[u - 1]) != 0)
			names[u++] = names[i];
	for (i = 0; i < u; i++)
		for (k = 0; k < nrec; k++)
			if (strcmp(names[i], mets[k].name) == 0)
				names[i] = NULL;	/* a recipe metric already */
	/* By default an mTHP size none of whose samples counted anything says
	 * nothing (a kernel has up to 9 sizes, most never enabled): it is
	 * left out and counted; the vmstat pair always shows, since its zero
	 * is what the THP check reads. */
	for (i = 0; i < u && mode == EVIDENCE_COUNTERS_THP; i++)
		if (names[i] != NULL && strncmp(names[i], "hugepages-", 10) == 0 &&
		    all_zero(ts, names[i])) {
			names[i] = NULL;
			(*nzero)++;
		}
	if ((idx = calloc(u, sizeof(*idx))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = evidence_counters_pick(names, u, mode, BF_MAX_METRICS - nrec, idx, &npick,
	    nmore)) != 0)
		goto out;
	for (k = 0; k < npick; k++) {
		struct report_metric *m = &mets[nrec + k];

		m->name = names[idx[k]];
		m->no_direction = 1;
		m->unit = NULL;
		/* the unit of its first sample: "count", "KiB" or "B" */
		for (i = 0; i < ts->ncells; i++)
			if ((se = store_cell_series(&ts->cell[i], m->name)) != NULL) {
				m->unit = se->unit;
				break;
			}
	}
	*nm = nrec + npick;
out:
	free(names);
	free(idx);
	return r;
}

int
api_report_counters_line(size_t nmore, size_t nzero, struct buf *line)
{
	if (nmore > 0 && buf_printf(line, "counters: %zu more not shown (a report has at "
	    "most %d metrics)", nmore, BF_MAX_METRICS) != 0)
		return BF_ERR_ALLOC;
	if (nzero > 0 && buf_printf(line, "%scounters: %zu mTHP counters zero in every "
	    "sample not shown (?counters=all shows them)", nmore > 0 ? "; " : "", nzero) != 0)
		return BF_ERR_ALLOC;
	return 0;
}

/*
 * One report of job id (jobj, ts and runs as the store gives them; a
 * suite's section gets them cut to one workload, api-report-suite.c)
 * rendered in fmt onto out. 0, or an error already answered in rs.
 */
int
api_report_one(struct api *a, int64_t id, const json_t *jobj,
    const struct store_samples *ts, const json_t *runs, const struct api_report_opts *ro, const char *what, struct buf *out,
    struct api_resp *rs)
{
	const char *fmt = ro->fmt, *base = ro->base, *colq = ro->colq;
	enum evidence_counters cmode = ro->cmode;
	static const double no_v[1];
	static const int no_boot[1];
	const struct store_series *se;
	const json_t *cellsj, *cj, *rdoc;
	struct report_pivot *pv = NULL;
	struct report_model *model = NULL;
	char axis[BF_MAX_NAME + 1], bdesc[BF_MAX_NAME + 160];
	struct recipe *rec = NULL;
	struct report_input in;
	struct report_metric *mets = NULL;
	struct report_cell *cells = NULL;
	struct report_series *series = NULL;
	int *baseline_of = NULL;
	char title[256];
	struct bf_diag d;
	struct buf ctx_machines, ctx_kernels;
	const char *ctx[8 + EVIDENCE_MAX_LINES], *wvec[REPORT_MAX_WARNINGS + 1];
	struct evidence_lines ev_warn, ev_ctx;
	char *wextra = NULL;
	struct buf ctx_adaptive, ctx_counters, ctx_pin, ctx_cmp;
	struct store_samples *bts = NULL;
	const struct store_samples *ets = ts;
	size_t nc = 0, nm = 0, i, k, nmore = 0, nzero = 0;
	int r, ret = -1, block = strcmp(api_report_spread(jobj), "block") == 0;

	buf_init(&ctx_machines, BF_MAX_STR);
	buf_init(&ctx_kernels, BF_MAX_STR);
	buf_init(&ctx_adaptive, BF_MAX_STR);
	buf_init(&ctx_counters, BF_MAX_STR);
	buf_init(&ctx_pin, BF_MAX_STR);
	buf_init(&ctx_cmp, BF_MAX_STR);
	bf_diag_clear(&d);
	/* block: each cell once per machine, compared on its machine; the
	 * evidence still goes by the job's own cells (ets) */
	if (block) {
		if ((r = api_report_block_ts(a, id, ts, runs, &bts)) != 0) {
			api_store_error(rs, r, "job");
			goto out;
		}
		ts = bts;
	}
	memset(&in, 0, sizeof(in));
	memset(&ev_warn, 0, sizeof(ev_warn));
	memset(&ev_ctx, 0, sizeof(ev_ctx));
	rdoc = json_object_get(json_object_get(jobj, "spec"), "recipe");
	if (rdoc == NULL || recipe_from_json((json_t *)rdoc, &rec, &d) != 0) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "job %lld: stored recipe "
		    "does not load: %s", (long long)id, d.msg);
		goto out;
	}
	cellsj = json_object_get(ts->doc, "cells");
	nc = ts->ncells;
	if ((mets = calloc(BF_MAX_METRICS, sizeof(*mets))) == NULL)
		goto oom;
	for (k = 0; k < rec->nmetrics && k < BF_MAX_METRICS; k++) {
		mets[k].name = rec->metrics[k].name;
		mets[k].unit = rec->metrics[k].unit;
		mets[k].higher_better = rec->metrics[k].higher_better;
		mets[k].positive = rec->metrics[k].positive;
	}
	if (api_report_counters(ts, cmode, mets, k, &nm, &nmore, &nzero) != 0 ||
	    api_report_counters_line(nmore, nzero, &ctx_counters) != 0)
		goto oom;
	if ((cells = calloc(nc ? nc : 1, sizeof(*cells))) == NULL ||
	    (series = calloc(nc * nm + 1, sizeof(*series))) == NULL ||
	    (baseline_of = calloc(nc ? nc : 1, sizeof(*baseline_of))) == NULL)
		goto oom;
	for (i = 0; i < nc; i++) {
		cj = json_array_get(cellsj, i);
		cells[i].label = json_string_value(json_object_get(cj, "label"));
		if (cells[i].label == NULL)
			cells[i].label = "?";
		baseline_of[i] = -1;
		/* the store's arrays themselves: nothing is copied */
		for (k = 0; k < nm; k++) {
			se = store_cell_series(&ts->cell[i], mets[k].name);
			series[i * nm + k] = se != NULL && se->n > 0 ? (struct report_series){
			    .v = se->v, .boot = se->boot, .n = se->n } :
			    (struct report_series){ .v = no_v, .boot = no_boot, .n = 0 };
		}
	}
	/* the side-by-side layout: its axis's first value (or the baseline's)
	 * is what every other value is compared with */
	if (api_report_columns(cellsj, colq, base, axis, sizeof(axis), &d) != 0 ||
	    (axis[0] != '\0' && api_report_pivot(cellsj, axis, base, 0, &pv, &d) != 0)) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s: %s", d.field, d.msg);
		goto out;
	}
	if (pv != NULL) {
		report_pivot_baselines(pv, baseline_of, nc);
		snprintf(bdesc, sizeof(bdesc), "%s:%.150s", axis, pv->cols[0]);
		base = bdesc;
	} else if (base != NULL) {
		char bwhat[32];

		snprintf(bwhat, sizeof(bwhat), "job %lld", (long long)id);
		if (matrix_baselines(json_object_get(json_object_get(json_object_get(jobj, "spec"),
		    "job"), "matrix"), cellsj, base, bwhat, baseline_of, &d) != 0) {
			api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s", d.msg);
			goto out;
		}
	}
	snprintf(title, sizeof(title), "job %lld: %s%s%s", (long long)id,
	    what != NULL ? what : rec->name,
	    json_string_value(json_object_get(jobj, "name")) ? " - " : "",
	    json_string_value(json_object_get(jobj, "name")) ?
	    json_string_value(json_object_get(jobj, "name")) : "");
	in.title = title;
	in.nmetrics = nm;
	in.metrics = mets;
	in.ncells = nc;
	in.cells = cells;
	in.series = series;
	in.baseline_of = baseline_of;
	in.baseline_desc = base;
	in.min_n = ro->min_n;
	in.stat = ro->stat;
	in.adjust = ro->adjust;
	if (report_context(runs, jobj, &ctx_machines, &ctx_kernels) != 0 ||
	    report_adaptive(jobj, &in, &ctx_adaptive) != 0 ||
	    api_report_evidence(a, jobj, ets, runs, rec, &ev_warn, &ev_ctx) != 0 ||
	    evidence_lines_vector(&ev_warn, wvec, sizeof(wvec) / sizeof(wvec[0]), &wextra) != 0)
		goto oom;
	if (api_report_pin_line(jobj, &ctx_pin) != 0 || (!block &&
	    api_report_cmp_machines(cellsj, runs, baseline_of, nc, &ctx_cmp) != 0))
		goto oom;
	ctx[0] = ctx_machines.data;
	ctx[1] = ctx_kernels.data;
	k = 2;
	if (ctx_pin.len)
		ctx[k++] = ctx_pin.data;
	if (ctx_cmp.len)
		ctx[k++] = ctx_cmp.data;
	if (ctx_adaptive.len)
		ctx[k++] = ctx_adaptive.data;
	if (ctx_counters.len)
		ctx[k++] = ctx_counters.data;
	for (i = 0; i < ev_ctx.n && k + 1 < sizeof(ctx) / sizeof(ctx[0]); i++)
		ctx[k++] = ev_ctx.line[i];
	ctx[k] = NULL;
	in.context = ctx;
	in.warnings = wvec;
	if (pv != NULL && ((r = report_compute(&in, &model, &d)) != 0 ||
	    (r = report_pivot_render(model, pv, fmt, out, &d)) != 0)) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "report: %s", d.msg[0] ?
		    d.msg : bf_err_str(r));
		goto out;
	}
	if (pv == NULL && (r = report_render(&in, fmt, out, &d)) != 0) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "report: %s", d.msg[0] ?
		    d.msg : bf_err_str(r));
		goto out;
	}
	if (block && (r = api_report_block_pooled(cellsj, &in, fmt, out)) != 0) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "report: pooled over "
		    "machines: %s", bf_err_str(r));
		goto out;
	}
	ret = 0;
	goto out;
oom:
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
out:
	free(series);
	free(cells);
	free(mets);
	free(baseline_of);
	report_model_free(model);
	report_pivot_free(pv);
	buf_free(&ctx_machines);
	buf_free(&ctx_kernels);
	buf_free(&ctx_adaptive);
	buf_free(&ctx_counters);
	buf_free(&ctx_pin);
	buf_free(&ctx_cmp);
	store_samples_free(bts);
	evidence_lines_free(&ev_warn);
	evidence_lines_free(&ev_ctx);
	free(wextra);
	recipe_free(rec);
	return ret;
}

int
api_report_opts_parse(struct api_req *rq, struct api_report_opts *ro, struct api_resp *rs)
{
	const char *fmt = api_query(rq, "format"), *cntq = api_query(rq, "counters");
	const char *minq = api_query(rq, "min_n"), *statq = api_query(rq, "stat");
	const char *adjq = api_query(rq, "adjust");
	int64_t min_n = 0;

	memset(ro, 0, sizeof(*ro));
	if (fmt == NULL)
		fmt = "text";
	if (strcmp(fmt, "text") != 0 && strcmp(fmt, "markdown") != 0 &&
	    strcmp(fmt, "csv") != 0 && strcmp(fmt, "json") != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "format", "format: \"%.40s\" is not one of "
		    "text, markdown, csv, json", fmt);
		return -1;
	}
	if (evidence_counters_mode(cntq, &ro->cmode) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "counters", "counters: \"%.40s\" is not one "
		    "of none, thp, all", cntq);
		return -1;
	}
	if (minq != NULL && parse_i64(minq, 1, REPORT_MAX_MIN_N, &min_n) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "min_n", "min_n: \"%.40s\" is not an "
		    "integer in 1..%d", minq, REPORT_MAX_MIN_N);
		return -1;
	}
	if (report_stat_parse(statq, &ro->stat) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "stat", "stat: \"%.40s\" is not one of "
		    "mean, median, min", statq);
		return -1;
	}
	if (report_adjust_parse(adjq, &ro->adjust) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "adjust", "adjust: \"%.40s\" is not one "
		    "of none, holm", adjq);
		return -1;
	}
	ro->fmt = fmt;
	ro->base = api_query(rq, "baseline");
	ro->colq = api_query(rq, "columns");
	ro->min_n = (size_t)min_n;
	return 0;
}

void
api_jobs_report(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const char *fmt;
	struct api_report_opts ro;
	json_t *jobj = NULL, *runs = NULL;
	struct store_samples *ts = NULL;
	struct buf out;
	int r;

	buf_init(&out, 16 * 1024 * 1024);
	if (api_report_opts_parse(rq, &ro, rs) != 0)
		goto out;
	fmt = ro.fmt;
	if ((r = api_view_job_get(a->st, rq->id, &jobj)) != 0 ||
	    (r = api_view_samples_get(a->st, rq->id, &ts)) != 0) {
		api_store_error(rs, r, "job");
		goto out;
	}
	/* a job without runs yet has none; the report says "none yet" */
	if (api_view_job_runs_get(a->st, rq->id, 0, &runs) != 0)
		runs = NULL;
	if (json_object_get(json_object_get(jobj, "spec"), "recipes") != NULL) {
		if (api_report_suite(a, rq->id, jobj, ts, runs, &ro, &out, rs) != 0)
			goto out;
	} else if (api_report_one(a, rq->id, jobj, ts, runs, &ro, NULL, &out, rs) != 0)
		goto out;
	rs->status = MHD_HTTP_OK;
	rs->text_len = out.len;
	rs->ctype = strcmp(fmt, "json") == 0 ? "application/json" :
	    strcmp(fmt, "csv") == 0 ? "text/csv; charset=utf-8" :
	    strcmp(fmt, "markdown") == 0 ? "text/markdown; charset=utf-8" :
	    "text/plain; charset=utf-8";
	if ((rs->text = buf_steal(&out)) == NULL)
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
out:
	buf_free(&out);
	json_decref(runs);
	json_decref(jobj);
	store_samples_free(ts);
}
