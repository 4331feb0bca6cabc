/*
 * report-pivot-data.c: the side-by-side layout (report-pivot.h) as CSV and
 * JSON. CSV (RFC 4180) has the text table's shape: one line per metric and
 * row, a group of fields per value of the column axis and one per change,
 * numbers at full precision (%.15g), undefined ones empty; it carries no
 * summary (one table per file). JSON carries everything, the summary and
 * its geometric means included, numbers null where undefined.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "report.h"
#include "report-int.h"
#include "report-pivot.h"
#include "report-pivot-int.h"

static int
csv_field(struct buf *out, const char *s, int first)
{
	int r;

	if (!first && (r = buf_puts(out, ",")) != 0)
		return r;
	if (strpbrk(s, ",\"\r\n") == NULL)
		return buf_puts(out, s);
	if ((r = buf_puts(out, "\"")) != 0)
		return r;
	for (; *s; s++)
		if ((r = buf_append(out, s, 1)) != 0 ||
		    (*s == '"' && (r = buf_append(out, s, 1)) != 0))
			return r;
	return buf_puts(out, "\"");
}

static int
csv_num(struct buf *out, double x)
{
	return isfinite(x) ? buf_printf(out, ",%.15g", x) : buf_puts(out, ",");
}

static const char *const csv_val[] = { "n", "mean", "cov_pct", "ci_lo", "ci_hi" };
static const char *const csv_chg[] = {
	"pct_change", "pct_ci_lo", "pct_ci_hi", "welch_p", "significant", "mark"
};
#define NVAL	(sizeof(csv_val) / sizeof(csv_val[0]))
#define NCHG	(sizeof(csv_chg) / sizeof(csv_chg[0]))

/* "VALUE FIELD": the column axis's value names the group. */
static int
csv_head(struct buf *out, const char *v, const char *f)
{
	struct buf h;
	int r;

	buf_init(&h, BF_MAX_STR * 2);
	if ((r = buf_printf(&h, "%s %s", v, f)) == 0)
		r = csv_field(out, h.data, 0);
	buf_free(&h);
	return r;
}

static int
csv_value(struct buf *out, const struct report_row *s)
{
	int r;

	if (s == NULL || s->all.n == 0)
		return buf_printf(out, ",%zu,,,,", (size_t)0);
	if ((r = buf_printf(out, ",%zu", s->all.n)) != 0 || (r = csv_num(out, s->eff.mean)) != 0 ||
	    (r = csv_num(out, s->eff.cov)) != 0)
		return r;
	if (s->eff.n < 2)
		return buf_puts(out, ",,");
	if ((r = csv_num(out, s->eff.ci_lo)) != 0)
		return r;
	return csv_num(out, s->eff.ci_hi);
}

static int
csv_change(struct buf *out, const struct report_row *s)
{
	int r;

	if (s == NULL || !s->has_cmp)
		return buf_puts(out, ",,,,,");
	if ((r = csv_num(out, s->cmp.pct.pct)) != 0 || (r = csv_num(out, s->cmp.pct.lo)) != 0 ||
	    (r = csv_num(out, s->cmp.pct.hi)) != 0 || (r = csv_num(out, s->cmp.welch.p)) != 0 ||
	    (r = buf_printf(out, ",%d", s->cmp.significant != 0)) != 0)
		return r;
	return csv_field(out, s->mark, 0);
}

int
report_pivot_csv(const struct report_model *m, const struct report_pivot *p,
    struct buf *out)
{
	const struct report_metric *mt;
	size_t k, r, c, j;
	int rc;

	if ((rc = buf_puts(out, "metric,unit,higher_better,row")) != 0)
		return rc;
	for (c = 0; c < p->ncols; c++)
		for (j = 0; j < NVAL; j++)
			if ((rc = csv_head(out, p->cols[c], csv_val[j])) != 0)
				return rc;
	for (c = 1; c < p->ncols; c++)
		for (j = 0; j < NCHG; j++)
			if ((rc = csv_head(out, p->cols[c], csv_chg[j])) != 0)
				return rc;
	if ((rc = buf_puts(out, "\r\n")) != 0)
		return rc;
	for (k = 0; k < m->nmetrics; k++) {
		mt = m->metrics[k].metric;
		for (r = 0; r < p->nrows; r++) {
			if ((rc = csv_field(out, mt->name, 1)) != 0 ||
			    (rc = csv_field(out, mt->unit != NULL ? mt->unit : "", 0)) != 0 ||
			    (rc = (mt->no_direction ? buf_puts(out, ",") :
			    buf_printf(out, ",%d", mt->higher_better != 0))) != 0 ||
			    (rc = csv_field(out, p->rows[r], 0)) != 0)
				return rc;
			for (c = 0; c < p->ncols; c++)
				if ((rc = csv_value(out, report_pivot_row(m, p, k, r, c))) != 0)
					return rc;
			for (c = 1; c < p->ncols; c++)
				if ((rc = csv_change(out, report_pivot_row(m, p, k, r, c))) != 0)
					return rc;
			if ((rc = buf_puts(out, "\r\n")) != 0)
				return rc;
		}
	}
	return 0;
}

/* ---- JSON ---- */

#define jstr report_json_str
#define jnum report_json_num
#define jset report_json_set

static int
jpush(json_t *a, json_t *v)
{
	return v != NULL && json_array_append_new(a, v) == 0 ? 0 : BF_ERR_ALLOC;
}

/* {"value", "n", "mean", "sd", "cov_pct", "ci_lo", "ci_hi", "note"}; null
 * when the row has no cell there. */
static json_t *
json_value(const char *v, const struct report_row *s)
{
	json_t *o;

	if (s == NULL)
		return json_null();
	if ((o = json_object()) == NULL)
		return NULL;
	if (jset(o, "value", jstr(v)) != 0 ||
	    jset(o, "n", json_integer((json_int_t)s->all.n)) != 0 ||
	    jset(o, "mean", jnum(s->eff.mean)) != 0 || jset(o, "sd", jnum(s->eff.sd)) != 0 ||
	    jset(o, "cov_pct", jnum(s->eff.cov)) != 0 ||
	    jset(o, "ci_lo", jnum(s->eff.n >= 2 ? s->eff.ci_lo : NAN)) != 0 ||
	    jset(o, "ci_hi", jnum(s->eff.n >= 2 ? s->eff.ci_hi : NAN)) != 0 ||
	    jset(o, "note", s->note != NULL ? json_string(s->note) : json_null()) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* {"value", "vs", "pct_change", "pct_ci_lo", "pct_ci_hi", "welch_p",
 * "significant", "mark", "note"}; null without a comparison. */
static json_t *
json_change(const char *v, const char *vs, const struct report_row *s)
{
	json_t *o;

	if (s == NULL || !s->has_cmp)
		return json_null();
	if ((o = json_object()) == NULL)
		return NULL;
	if (jset(o, "value", jstr(v)) != 0 || jset(o, "vs", jstr(vs)) != 0 ||
	    jset(o, "pct_change", jnum(s->cmp.pct.pct)) != 0 ||
	    jset(o, "pct_ci_lo", jnum(s->cmp.pct.lo)) != 0 ||
	    jset(o, "pct_ci_hi", jnum(s->cmp.pct.hi)) != 0 ||
	    jset(o, "welch_p", jnum(s->cmp.welch.p)) != 0 ||
	    jset(o, "significant", json_boolean(s->cmp.significant)) != 0 ||
	    jset(o, "mark", json_string(s->mark)) != 0 ||
	    jset(o, "note", s->cmp_note != NULL ? json_string(s->cmp_note) : json_null()) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int
json_metric(const struct report_model *m, const struct report_pivot *p, size_t k,
    json_t *arr)
{
	const struct report_metric *mt = m->metrics[k].metric;
	json_t *o, *rows, *ro, *vals, *chg;
	size_t r, c;
	int rc;

	if ((o = json_object()) == NULL || (rc = jpush(arr, o)) != 0)
		return BF_ERR_ALLOC;
	if ((rc = jset(o, "name", jstr(mt->name))) != 0 ||
	    (rc = jset(o, "unit", mt->unit != NULL ? jstr(mt->unit) : json_null())) != 0 ||
	    (rc = jset(o, "direction", json_string(report_direction_name(mt)))) != 0 ||
	    (rc = jset(o, "rows", json_array())) != 0)
		return rc;
	rows = json_object_get(o, "rows");
	for (r = 0; r < p->nrows; r++) {
		if ((ro = json_object()) == NULL || (rc = jpush(rows, ro)) != 0 ||
		    (rc = jset(ro, "row", jstr(p->rows[r]))) != 0 ||
		    (rc = jset(ro, "values", json_array())) != 0 ||
		    (rc = jset(ro, "changes", json_array())) != 0)
			return BF_ERR_ALLOC;
		vals = json_object_get(ro, "values");
		chg = json_object_get(ro, "changes");
		for (c = 0; c < p->ncols; c++)
			if ((rc = jpush(vals, json_value(p->cols[c],
			    report_pivot_row(m, p, k, r, c)))) != 0)
				return rc;
		for (c = 1; c < p->ncols; c++)
			if ((rc = jpush(chg, json_change(p->cols[c], p->cols[0],
			    report_pivot_row(m, p, k, r, c)))) != 0)
				return rc;
	}
	return 0;
}

static int
json_summary(const struct report_model *m, const struct report_pivot *p, json_t *doc)
{
	struct report_pivot_sum s;
	const struct report_pivot_line *l;
	const struct report_pivot_gm *g;
	json_t *sum = NULL, *lines, *gms, *o;
	size_t i;
	int rc;

	if ((rc = report_pivot_summary(m, p, &s)) != 0)
		return rc;
	if ((sum = json_pack("{s:[], s:[]}", "lines", "geomeans")) == NULL) {
		rc = BF_ERR_ALLOC;
		goto out;
	}
	lines = json_object_get(sum, "lines");
	gms = json_object_get(sum, "geomeans");
	for (i = 0; i < s.nlines; i++) {
		l = &s.lines[i];
		if ((o = json_object()) == NULL || (rc = jpush(lines, o)) != 0 ||
		    (rc = jset(o, "workload", jstr(p->rows[l->row]))) != 0 ||
		    (rc = jset(o, "metric", jstr(m->metrics[l->metric].metric->name))) != 0 ||
		    (rc = jset(o, "a", jstr(p->cols[0]))) != 0 ||
		    (rc = jset(o, "b", jstr(p->cols[l->col]))) != 0 ||
		    (rc = jset(o, "mean_a", jnum(l->a->eff.mean))) != 0 ||
		    (rc = jset(o, "mean_b", jnum(l->b->eff.mean))) != 0 ||
		    (rc = jset(o, "pct_change", jnum(l->b->cmp.pct.pct))) != 0 ||
		    (rc = jset(o, "pct_ci_lo", jnum(l->b->cmp.pct.lo))) != 0 ||
		    (rc = jset(o, "pct_ci_hi", jnum(l->b->cmp.pct.hi))) != 0 ||
		    (rc = jset(o, "mark", json_string(l->b->mark))) != 0) {
			rc = BF_ERR_ALLOC;
			goto out;
		}
	}
	for (i = 0; i < s.ngms; i++) {
		g = &s.gms[i];
		if ((o = json_object()) == NULL || (rc = jpush(gms, o)) != 0 ||
		    (rc = jset(o, "metric", jstr(m->metrics[g->metric].metric->name))) != 0 ||
		    (rc = jset(o, "b", jstr(p->cols[g->col]))) != 0 ||
		    (rc = jset(o, "a", jstr(p->cols[0]))) != 0 ||
		    (rc = jset(o, "ratio", jnum(g->gm))) != 0 ||
		    (rc = jset(o, "ci_lo", jnum(g->lo))) != 0 ||
		    (rc = jset(o, "ci_hi", jnum(g->hi))) != 0 ||
		    (rc = jset(o, "n", json_integer((json_int_t)g->n))) != 0 ||
		    (rc = jset(o, "left_out", json_integer((json_int_t)g->nskip))) != 0) {
			rc = BF_ERR_ALLOC;
			goto out;
		}
	}
	rc = jset(doc, "summary", sum);
	sum = NULL;
out:
	json_decref(sum);
	report_pivot_sum_free(&s);
	return rc;
}

static int
json_lines(json_t *doc, const char *key, const char *const *v)
{
	json_t *a;
	size_t i;
	int r;

	if ((a = json_array()) == NULL || (r = jset(doc, key, a)) != 0)
		return BF_ERR_ALLOC;
	for (i = 0; v != NULL && v[i] != NULL; i++) {
		if ((r = jpush(a, jstr(v[i]))) != 0)
			return r;
	}
	return 0;
}

int
report_pivot_json(const struct report_model *m, const struct report_pivot *p,
    struct buf *out)
{
	const struct report_input *in = m->in;
	json_t *doc = NULL, *vals, *mets;
	char *s = NULL;
	size_t i;
	int rc;

	if ((doc = json_object()) == NULL ||
	    (rc = jset(doc, "title", in->title != NULL ? jstr(in->title) : json_null())) != 0 ||
	    (rc = jset(doc, "layout", json_string("columns"))) != 0 ||
	    (rc = jset(doc, "columns", jstr(p->axis))) != 0 ||
	    (rc = jset(doc, "reference", jstr(p->cols[0]))) != 0 ||
	    (rc = jset(doc, "values", json_array())) != 0 ||
	    (rc = jset(doc, "metrics", json_array())) != 0) {
		rc = BF_ERR_ALLOC;
		goto out;
	}
	vals = json_object_get(doc, "values");
	mets = json_object_get(doc, "metrics");
	for (i = 0; i < p->ncols; i++)
		if ((rc = jpush(vals, jstr(p->cols[i]))) != 0)
			goto out;
	for (i = 0; i < m->nmetrics; i++)
		if ((rc = json_metric(m, p, i, mets)) != 0)
			goto out;
	if (p->summary)
		rc = json_summary(m, p, doc);
	else
		rc = jset(doc, "summary", json_null());
	if (rc != 0 ||
	    (rc = jset(doc, "legend", json_array())) != 0 ||
	    (rc = json_lines(doc, "context", in->context)) != 0 ||
	    (rc = json_lines(doc, "warnings", in->warnings)) != 0)
		goto out;
	for (i = 0; i < m->nlegend; i++)
		if ((rc = jpush(json_object_get(doc, "legend"), jstr(m->legend[i]))) != 0)
			goto out;
	if (p->summary && (rc = jpush(json_object_get(doc, "legend"),
	    json_string(report_pivot_gm_legend))) != 0)
		goto out;
	if ((s = json_dumps(doc, JSON_INDENT(2))) == NULL) {
		rc = BF_ERR_ALLOC;
		goto out;
	}
	if ((rc = buf_puts(out, s)) != 0 || (rc = buf_puts(out, "\n")) != 0)
		goto out;
	rc = 0;
out:
	free(s);
	json_decref(doc);
	return rc;
}
