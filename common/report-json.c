/*
 * report-json.c: the report as one JSON document: per metric its rows,
 * each with its comparison and its boots (null when there is none), the
 * legend, the context lines and the warnings. An undefined number is
 * null, with a "note" saying why; user text that is not valid UTF-8 gets
 * '?' bytes.
 */
#include <math.h>
#include <stdlib.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "report.h"
#include "report-int.h"

/* A JSON string from user text; bytes that are not valid UTF-8 become '?'
 * (jansson refuses them, and a report must not fail on a label). */
/* A string as JSON; text that is not UTF-8 is cleaned first. */
json_t *
report_json_str(const char *s)
{
	json_t *j;
	char *t;

	if ((j = json_string(s)) != NULL)
		return j;
	if ((t = report_clean(s, 0, NULL)) == NULL)
		return NULL;
	j = json_string(t);
	free(t);
	return j;
}

/* A number as JSON; NaN and infinities are null. */
json_t *
report_json_num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* Steals v; fails on a NULL v (an allocation that failed). */
int
report_json_set(json_t *o, const char *k, json_t *v)
{
	return v != NULL && json_object_set_new(o, k, v) == 0 ? 0 : BF_ERR_ALLOC;
}

#define jstr report_json_str
#define jnum report_json_num
#define jset report_json_set

/* The comparison of row s with its baseline (has_cmp). */
static int
json_compare(const struct report_row *s, json_t *cmp)
{
	int r;

	if ((r = jset(cmp, "pct_change", jnum(s->cmp.pct.pct))) != 0 ||
	    (r = jset(cmp, "pct_ci_lo", jnum(s->cmp.pct.lo))) != 0 ||
	    (r = jset(cmp, "pct_ci_hi", jnum(s->cmp.pct.hi))) != 0 ||
	    (r = jset(cmp, "pct_ci_unbounded", json_boolean(s->cmp.pct.unbounded))) != 0 ||
	    (r = jset(cmp, "welch_t", jnum(s->cmp.welch.t))) != 0 ||
	    (r = jset(cmp, "welch_df", jnum(s->cmp.welch.nu))) != 0 ||
	    (r = jset(cmp, "welch_p", jnum(s->cmp.welch.p))) != 0 ||
	    (r = jset(cmp, "significant", json_boolean(s->cmp.significant))) != 0 ||
	    (r = jset(cmp, "mark", json_string(s->mark))) != 0 ||
	    (r = jset(cmp, "mw_u", s->has_mw ? jnum(s->mw.u) : json_null())) != 0 ||
	    (r = jset(cmp, "mw_u_baseline", s->has_mw ? jnum((double)s->beff.n *
	    (double)s->eff.n - s->mw.u) : json_null())) != 0 ||
	    (r = jset(cmp, "mw_p", s->has_mw ? jnum(s->mw.p) : json_null())) != 0 ||
	    (r = jset(cmp, "mw_method", s->has_mw ? json_string(s->mw.exact ?
	    "exact" : "asymptotic") : json_null())) != 0 ||
	    (r = jset(cmp, "pct_ci_method", json_string(s->log_ratio ? "log ratio" :
	    "fieller"))) != 0 ||
	    (r = jset(cmp, "p", jnum(s->p))) != 0 ||
	    (r = jset(cmp, "p_holm", s->has_padj ? jnum(s->p_adj) : json_null())) != 0 ||
	    (r = jset(cmp, "low_n", json_boolean(s->low_n))) != 0 ||
	    (r = jset(cmp, "fewer_boots", json_boolean(s->fewer_boots))) != 0)
		return r;
	return jset(cmp, "note", s->cmp_note ? json_string(s->cmp_note) : json_null());
}

/* The boots x iterations of row s (multi). */
static int
json_boots(const struct report_row *s, json_t *boots)
{
	int r;

	if ((r = jset(boots, "boots", json_integer((json_int_t)s->tl.nboots))) != 0 ||
	    (r = jset(boots, "iterations_min", json_integer((json_int_t)s->tl.m_min))) != 0 ||
	    (r = jset(boots, "iterations_max", json_integer((json_int_t)s->tl.m_max))) != 0 ||
	    (r = jset(boots, "sd_between", jnum(sqrt(s->tl.sigma_boot2)))) != 0 ||
	    (r = jset(boots, "sd_within", jnum(sqrt(s->tl.sw2)))) != 0 ||
	    (r = jset(boots, "cov_between_pct", jnum(s->cov_between))) != 0 ||
	    (r = jset(boots, "cov_within_pct", jnum(s->cov_within))) != 0 ||
	    (r = jset(boots, "ci_df", json_integer((json_int_t)s->tl.nboots - 1))) != 0 ||
	    (r = jset(boots, "boot_means_equal", json_boolean(s->boots_equal))) != 0)
		return r;
	return jset(boots, "m_opt", s->has_mstar ? json_integer((json_int_t)s->mstar) :
	    json_null());
}

static int
json_row(const struct report_model *m, size_t c, const struct report_row *s, json_t *row)
{
	json_t *cmp = NULL, *boots = NULL;
	int r;

	if ((r = jset(row, "cell", jstr(m->cells[c].label))) != 0 ||
	    (r = jset(row, "baseline_cell", s->has_cmp ?
	    jstr(m->cells[m->cells[c].baseline].label) : json_null())) != 0 ||
	    (r = jset(row, "is_baseline", json_boolean(s->is_base))) != 0 ||
	    (r = jset(row, "n", json_integer((json_int_t)s->all.n))) != 0 ||
	    (r = jset(row, "mean", jnum(s->eff.mean))) != 0 ||
	    (r = jset(row, "sd", jnum(s->eff.sd))) != 0 ||
	    (r = jset(row, "cov_pct", jnum(s->eff.cov))) != 0 ||
	    (r = jset(row, "ci_lo", jnum(m->in->stat == REPORT_STAT_MEAN ? s->stat_lo :
	    s->eff.ci_lo))) != 0 ||
	    (r = jset(row, "ci_hi", jnum(m->in->stat == REPORT_STAT_MEAN ? s->stat_hi :
	    s->eff.ci_hi))) != 0 ||
	    (r = jset(row, "ci_clipped", json_boolean(s->ci_clipped))) != 0 ||
	    (r = jset(row, "stat", json_string(report_stat_name(m->in->stat)))) != 0 ||
	    (r = jset(row, "value", jnum(s->stat_value))) != 0 ||
	    (r = jset(row, "value_ci_lo", jnum(s->stat_lo))) != 0 ||
	    (r = jset(row, "value_ci_hi", jnum(s->stat_hi))) != 0 ||
	    (r = jset(row, "min", jnum(s->all.min))) != 0 ||
	    (r = jset(row, "max", jnum(s->all.max))) != 0 ||
	    (r = jset(row, "median", jnum(s->all.median))) != 0 ||
	    (r = jset(row, "ci_n", json_integer((json_int_t)s->eff.n))) != 0 ||
	    (r = jset(row, "ci_basis", json_string(s->multi ? "boot means" :
	    "samples"))) != 0 ||
	    (r = jset(row, "note", s->note ? json_string(s->note) : json_null())) != 0)
		goto out;
	if (s->has_cmp) {
		if ((cmp = json_object()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = json_compare(s, cmp)) != 0)
			goto out;
	}
	if (s->multi) {
		if ((boots = json_object()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = json_boots(s, boots)) != 0)
			goto out;
	}
	r = jset(row, "compare", cmp ? cmp : json_null());
	cmp = NULL;
	if (r != 0)
		goto out;
	r = jset(row, "boots", boots ? boots : json_null());
	boots = NULL;
out:
	json_decref(cmp);
	json_decref(boots);
	return r;
}

int
report_render_json(const struct report_model *m, struct buf *out)
{
	const struct report_input *in = m->in;
	const struct report_model_metric *mm;
	json_t *root = NULL, *metrics, *mo, *rows, *row, *leg, *ctx, *warn;
	char *text = NULL;
	size_t i, c;
	int r;

	if ((root = json_object()) == NULL || (metrics = json_array()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = jset(root, "title", in->title ? jstr(in->title) : json_null())) != 0 ||
	    (r = jset(root, "baseline", in->baseline_desc ?
	    jstr(in->baseline_desc) : json_null())) != 0 ||
	    (r = jset(root, "metrics", metrics)) != 0)
		goto out;
	for (i = 0; i < m->nmetrics; i++) {
		mm = &m->metrics[i];
		if ((mo = json_object()) == NULL || json_array_append_new(metrics, mo) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = jset(mo, "name", jstr(mm->metric->name))) != 0 ||
		    (r = jset(mo, "unit", mm->metric->unit ? jstr(mm->metric->unit) :
		    json_null())) != 0 ||
		    (r = jset(mo, "higher_better", mm->metric->no_direction ? json_null() :
		    json_boolean(mm->metric->higher_better))) != 0 ||
		    (r = jset(mo, "direction",
		    json_string(report_direction_name(mm->metric)))) != 0 ||
		    (r = jset(mo, "rows", rows = json_array())) != 0)
			goto out;
		for (c = 0; c < m->ncells; c++) {
			if ((row = json_object()) == NULL || json_array_append_new(rows, row) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			if ((r = json_row(m, c, &mm->rows[c], row)) != 0)
				goto out;
		}
	}
	if ((r = jset(root, "legend", leg = json_array())) != 0 ||
	    (r = jset(root, "context", ctx = json_array())) != 0 ||
	    (r = jset(root, "warnings", warn = json_array())) != 0)
		goto out;
	for (i = 0; i < m->nlegend; i++)
		if (json_array_append_new(leg, jstr(m->legend[i])) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	for (i = 0; in->context != NULL && in->context[i] != NULL; i++)
		if (json_array_append_new(ctx, jstr(in->context[i])) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	for (i = 0; in->warnings != NULL && in->warnings[i] != NULL; i++)
		if (json_array_append_new(warn, jstr(in->warnings[i])) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	if ((text = json_dumps(root, JSON_INDENT(2))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = buf_puts(out, text)) != 0 || (r = buf_puts(out, "\n")) != 0)
		goto out;
	r = 0;
out:
	free(text);
	json_decref(root);
	return r;
}
