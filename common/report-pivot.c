/*
 * report-pivot.c: the side-by-side layout (report-pivot.h): building the
 * pivot from the cells' axis values, the summary lines and their
 * geometric means, and the text and markdown renderers. CSV and JSON are
 * report-pivot-data.c. The numbers and their digits are the model's and
 * report-fmt.c's (report_row_fields), so a cell prints the same in both
 * layouts.
 */
#include <sys/types.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "report.h"
#include "report-int.h"
#include "report-pivot.h"
#include "report-pivot-int.h"
#include "stats.h"


#define LEGEND_WIDTH	78
/* Columns of a metric's pivot table: the label, 3 per value, 3 per change. */
#define PIVOT_MAXCOL	(1 + 3 * REPORT_PIVOT_MAX_COLS + 3 * REPORT_PIVOT_MAX_COLS)

const char report_pivot_gm_legend[] =
    "Geometric mean of B/A: over the summary's rows of one metric, exp of the mean "
    "log ratio of the means; its 95% CI is Student t over the log ratios (n-1 dof). "
    "Rows whose mean is not positive have no log ratio and are left out.";

void
report_pivot_free(struct report_pivot *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; p->cols != NULL && i < p->ncols; i++)
		free(p->cols[i]);
	for (i = 0; p->rows != NULL && i < p->nrows; i++)
		free(p->rows[i]);
	free(p->cols);
	free(p->rows);
	free(p->cell_at);
	free(p->axis);
	free(p);
}

static ssize_t
find(char **v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return (ssize_t)i;
	return -1;
}

int
report_pivot_build(const char *axis, const char *const *colv, const char *const *rowv,
    size_t ncells, const char *ref, struct report_pivot **out, struct bf_diag *d)
{
	struct report_pivot *p = NULL;
	const char *rv;
	ssize_t ci, ri;
	size_t c, i;
	char *t;
	int r;

	*out = NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->axis = strdup(axis != NULL ? axis : "")) == NULL ||
	    (p->cols = calloc(REPORT_PIVOT_MAX_COLS, sizeof(*p->cols))) == NULL ||
	    (p->rows = calloc(ncells + 1, sizeof(*p->rows))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (ref != NULL) {
		if ((p->cols[0] = strdup(ref)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		p->ncols = 1;
	}
	for (c = 0; c < ncells; c++) {
		if (colv[c] == NULL) {
			bf_diag_set(d, "columns", "cell %zu has no value of axis %s", c, p->axis);
			r = BF_ERR_INVALID;
			goto out;
		}
		rv = rowv != NULL && rowv[c] != NULL ? rowv[c] : "";
		if (find(p->cols, p->ncols, colv[c]) < 0) {
			if (p->ncols == REPORT_PIVOT_MAX_COLS) {
				bf_diag_set(d, "columns", "axis %s has more than %d values: too "
				    "many column groups", p->axis, REPORT_PIVOT_MAX_COLS);
				r = BF_ERR_TOOBIG;
				goto out;
			}
			if ((p->cols[p->ncols] = strdup(colv[c])) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			p->ncols++;
		}
		if (find(p->rows, p->nrows, rv) < 0) {
			if ((t = strdup(rv)) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			p->rows[p->nrows++] = t;
		}
	}
	if (ref != NULL && p->ncols > 0) {
		for (c = 0; c < ncells && strcmp(colv[c], ref) != 0; c++)
			;
		if (c == ncells) {
			bf_diag_set(d, "columns", "axis %s has no value \"%.60s\"", p->axis, ref);
			r = BF_ERR_INVALID;
			goto out;
		}
	}
	if (p->ncols < 2) {
		bf_diag_set(d, "columns", "axis %s has %zu value%s: nothing to put side by side",
		    p->axis, p->ncols, p->ncols == 1 ? "" : "s");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((p->cell_at = calloc(p->nrows * p->ncols, sizeof(*p->cell_at))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < p->nrows * p->ncols; i++)
		p->cell_at[i] = -1;
	for (c = 0; c < ncells; c++) {
		ci = find(p->cols, p->ncols, colv[c]);
		ri = find(p->rows, p->nrows, rowv != NULL && rowv[c] != NULL ? rowv[c] : "");
		i = (size_t)ri * p->ncols + (size_t)ci;
		if (p->cell_at[i] >= 0) {
			bf_diag_set(d, "columns", "cells %d and %zu are both %s=%s on row \"%.60s\"",
			    p->cell_at[i], c, p->axis, colv[c], p->rows[ri]);
			r = BF_ERR_INVALID;
			goto out;
		}
		p->cell_at[i] = (int)c;
	}
	*out = p;
	p = NULL;
	r = 0;
out:
	report_pivot_free(p);
	return r;
}

void
report_pivot_baselines(const struct report_pivot *p, int *baseline_of, size_t ncells)
{
	size_t r, c;
	int cell;

	for (c = 0; c < ncells; c++)
		baseline_of[c] = -1;
	for (r = 0; r < p->nrows; r++)
		for (c = 1; c < p->ncols; c++)
			if ((cell = p->cell_at[r * p->ncols + c]) >= 0 && (size_t)cell < ncells)
				baseline_of[cell] = p->cell_at[r * p->ncols];
}

const struct report_row *
report_pivot_row(const struct report_model *m, const struct report_pivot *p, size_t k,
    size_t r, size_t c)
{
	int cell = p->cell_at[r * p->ncols + c];

	return cell < 0 ? NULL : &m->metrics[k].rows[cell];
}

/* ---- the summary ---- */

void
report_pivot_sum_free(struct report_pivot_sum *s)
{
	if (s == NULL)
		return;
	free(s->lines);
	free(s->gms);
	memset(s, 0, sizeof(*s));
}

int
report_pivot_summary(const struct report_model *m, const struct report_pivot *p,
    struct report_pivot_sum *s)
{
	const struct report_row *a, *b;
	struct report_pivot_gm *g;
	struct stats_summary ls;
	double *lr = NULL, q;
	size_t k, r, c, nl = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if ((s->lines = calloc(m->nmetrics * p->nrows * p->ncols + 1, sizeof(*s->lines))) ==
	    NULL || (s->gms = calloc(m->nmetrics * p->ncols + 1, sizeof(*s->gms))) == NULL ||
	    (lr = calloc(p->nrows + 1, sizeof(*lr))) == NULL) {
		rc = BF_ERR_ALLOC;
		goto out;
	}
	for (k = 0; k < m->nmetrics; k++) {
		/* a counter is evidence, not a result to sum up */
		if (m->metrics[k].metric->no_direction)
			continue;
		for (c = 1; c < p->ncols; c++) {
			g = &s->gms[s->ngms++];
			g->metric = k;
			g->col = c;
			nl = 0;
			for (r = 0; r < p->nrows; r++) {
				a = report_pivot_row(m, p, k, r, 0);
				b = report_pivot_row(m, p, k, r, c);
				if (a == NULL || b == NULL || !b->has_cmp ||
				    (p->summary_own && a->eff.n == 0 && b->eff.n == 0))
					continue;
				s->lines[s->nlines++] = (struct report_pivot_line){
					.row = r, .metric = k, .col = c, .a = a, .b = b };
				/* a ratio past a double's range (a denormal mean
				 * under a huge one) is left out like a zero mean */
				q = a->eff.n > 0 && b->eff.n > 0 && a->eff.mean > 0 &&
				    b->eff.mean > 0 ? log(b->eff.mean / a->eff.mean) : NAN;
				if (isfinite(q))
					lr[nl++] = q;
				else
					g->nskip++;
			}
			g->n = nl;
			g->gm = g->lo = g->hi = NAN;
			/* no geometric mean for this column: said as such, not an error
			 * of the whole summary */
			if (nl == 0 || stats_summarize(lr, nl, &ls) != 0)
				continue;
			g->gm = exp(ls.mean);
			if (nl >= 2 && isfinite(ls.ci_lo) && isfinite(ls.ci_hi)) {
				g->lo = exp(ls.ci_lo);
				g->hi = exp(ls.ci_hi);
			}
		}
	}
out:
	free(lr);
	if (rc != 0)
		report_pivot_sum_free(s);
	return rc;
}

/* ---- text ---- */

/* s padded to width, then the separator: sep spaces (none after the last). */
static int
pad(struct buf *out, const char *s, size_t sw, size_t width, int right, size_t sep)
{
	size_t i;
	int r;

	for (i = sw; right && i < width; i++)
		if ((r = buf_puts(out, " ")) != 0)
			return r;
	if ((r = buf_puts(out, s)) != 0)
		return r;
	for (i = sw; !right && i < width; i++)
		if ((r = buf_puts(out, " ")) != 0)
			return r;
	return buf_printf(out, "%.*s", (int)sep, "  ");
}

static int
end_line(struct buf *out)
{
	while (out->len > 0 && out->data[out->len - 1] == ' ')
		out->data[--out->len] = '\0';
	return buf_puts(out, "\n");
}

/* Code points of valid UTF-8 s. */
static size_t
u8width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/*
 * One table of a pivot: cells[row * ncol + col] (cleaned, col 0 the
 * label), head[col], and above it group[col] (NULL: the group goes on), a
 * group's name spanning its columns.
 */
struct ptable {
	size_t ncol, nrows;
	char **cells;
	const char **head;
	char **group;
	int *right;
	int tight;		/* columns of one group 1 space apart, groups 2 */
};

/* The spaces after column c of t: none after the last; 1 inside a group
 * of a tight table (so that two values fit 100 columns), else 2. */
static size_t
ptable_sep(const struct ptable *t, size_t c)
{
	if (c + 1 >= t->ncol)
		return 0;
	return t->tight && c > 0 && t->group[c + 1] == NULL ? 1 : 2;
}

/* Column c's heading in text: under its "B vs A" group in a tight table
 * the change's CI needs no longer name than "95% CI" (markdown and csv,
 * whose headings stand alone, keep the full one). */
static const char *
ptable_head(const struct ptable *t, size_t c)
{
	return t->tight && t->head[c] == report_col_head[C_PCTCI] ? "95% CI" : t->head[c];
}

static int
ptable_print(struct buf *out, const struct ptable *t)
{
	size_t w[PIVOT_MAXCOL + 4] = { 0 }, c, i, e, span, gw, x;
	int r;

	for (c = 0; c < t->ncol; c++) {
		w[c] = u8width(ptable_head(t, c));
		for (i = 0; i < t->nrows; i++)
			if ((x = u8width(t->cells[i * t->ncol + c])) > w[c])
				w[c] = x;
	}
	/* a group name wider than its columns widens its last column */
	for (c = 0; c < t->ncol; c = e) {
		for (e = c + 1; e < t->ncol && t->group[e] == NULL; e++)
			;
		if (t->group[c] == NULL)
			continue;
		for (span = 0, i = c; i < e; i++)
			span += w[i] + (i + 1 < e ? ptable_sep(t, i) : 0);
		if ((gw = u8width(t->group[c])) > span)
			w[e - 1] += gw - span;
	}
	for (c = 0; c < t->ncol; c = e) {
		for (e = c + 1; e < t->ncol && t->group[e] == NULL; e++)
			;
		for (span = 0, i = c; i < e; i++)
			span += w[i] + (i + 1 < e ? ptable_sep(t, i) : 0);
		if ((r = pad(out, t->group[c] != NULL ? t->group[c] : "", t->group[c] != NULL ?
		    u8width(t->group[c]) : 0, span, 0, ptable_sep(t, e - 1))) != 0)
			return r;
	}
	if ((r = end_line(out)) != 0)
		return r;
	for (c = 0; c < t->ncol; c++)
		if ((r = pad(out, ptable_head(t, c), u8width(ptable_head(t, c)), w[c], t->right[c],
		    ptable_sep(t, c))) != 0)
			return r;
	if ((r = end_line(out)) != 0)
		return r;
	for (i = 0; i < t->nrows; i++) {
		for (c = 0; c < t->ncol; c++) {
			const char *s = t->cells[i * t->ncol + c];

			if ((r = pad(out, s, u8width(s), w[c], t->right[c], ptable_sep(t, c))) != 0)
				return r;
		}
		if ((r = end_line(out)) != 0)
			return r;
	}
	return 0;
}

static void
ptable_free(struct ptable *t)
{
	size_t i;

	for (i = 0; t->cells != NULL && i < t->ncol * t->nrows; i++)
		free(t->cells[i]);
	for (i = 0; t->group != NULL && i < t->ncol; i++)
		free(t->group[i]);
	free(t->cells);
	free(t->group);
	free(t->head);
	free(t->right);
	memset(t, 0, sizeof(*t));
}

static int
ptable_alloc(struct ptable *t, size_t ncol, size_t nrows)
{
	memset(t, 0, sizeof(*t));
	t->ncol = ncol;
	t->nrows = nrows;
	if ((t->cells = calloc(ncol * nrows + 1, sizeof(*t->cells))) == NULL ||
	    (t->group = calloc(ncol, sizeof(*t->group))) == NULL ||
	    (t->head = calloc(ncol, sizeof(*t->head))) == NULL ||
	    (t->right = calloc(ncol, sizeof(*t->right))) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/* Cell i of t gets a cleaned copy of s ("-" for ""). */
static int
ptable_set(struct ptable *t, size_t i, const char *s, int dash)
{
	free(t->cells[i]);
	t->cells[i] = report_clean(dash && *s == '\0' ? "-" : s, 1, NULL);
	return t->cells[i] == NULL ? BF_ERR_ALLOC : 0;
}

static int
ptable_group(struct ptable *t, size_t c, const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, "%s%s%s", a, b != NULL ? " vs " : "", b != NULL ? b : "") < 0)
		return BF_ERR_ALLOC;
	t->group[c] = report_clean(s, 1, NULL);
	free(s);
	return t->group[c] == NULL ? BF_ERR_ALLOC : 0;
}

/* The label a row prints: its other axes, or "(all)" when there are none. */
static const char *
row_label(const struct report_pivot *p, size_t r)
{
	return *p->rows[r] ? p->rows[r] : "(all)";
}

/* The table of metric k: fields by report_row_fields. */
static int
metric_table(const struct report_model *m, const struct report_pivot *p, size_t k,
    struct ptable *t)
{
	const struct report_model_metric *mm = &m->metrics[k];
	static const int vsel[3] = { C_MEAN, C_COV, C_CI }, csel[3] = { C_PCT, C_PCTCI, C_SIG };
	char f[NCOL][REPORT_FIELD];
	const struct report_row *row;
	size_t ncol = 1 + 3 * p->ncols + 3 * (p->ncols - 1), r, c, j, x;
	int rc;

	if ((rc = ptable_alloc(t, ncol, p->nrows)) != 0)
		return rc;
	t->tight = 1;
	t->head[0] = report_col_head[C_LABEL];
	for (c = 0; c < p->ncols; c++)
		for (j = 0; j < 3; j++) {
			x = 1 + 3 * c + j;
			t->head[x] = report_col_head[vsel[j]];
			t->right[x] = report_col_right[vsel[j]];
			if (j == 0 && (rc = ptable_group(t, x, p->cols[c], NULL)) != 0)
				return rc;
		}
	for (c = 1; c < p->ncols; c++)
		for (j = 0; j < 3; j++) {
			x = 1 + 3 * p->ncols + 3 * (c - 1) + j;
			t->head[x] = report_col_head[csel[j]];
			t->right[x] = report_col_right[csel[j]];
			if (j == 0 && (rc = ptable_group(t, x, p->cols[c], p->cols[0])) != 0)
				return rc;
		}
	for (r = 0; r < p->nrows; r++) {
		if ((rc = ptable_set(t, r * ncol, row_label(p, r), 0)) != 0)
			return rc;
		for (c = 0; c < p->ncols; c++) {
			row = report_pivot_row(m, p, k, r, c);
			if (row != NULL)
				report_row_fields(row, mm->decimals, f);
			for (j = 0; j < 3; j++)
				if ((rc = ptable_set(t, r * ncol + 1 + 3 * c + j, row != NULL ?
				    f[vsel[j]] : "", 1)) != 0)
					return rc;
			if (c == 0)
				continue;
			for (j = 0; j < 3; j++) {
				x = r * ncol + 1 + 3 * p->ncols + 3 * (c - 1) + j;
				/* an empty mark is no mark; other empties are undefined */
				if ((rc = ptable_set(t, x, row != NULL && row->has_cmp ?
				    f[csel[j]] : "", csel[j] != C_SIG)) != 0)
					return rc;
			}
		}
	}
	return 0;
}

/* The summary table: workload, metric, [B is], A, B, % change, CI, sig. */
static const char *const sum_head[] = {
	"workload", "metric", "B is", "A", "B", "% change", "95% CI of change", "sig"
};
static const int sum_right[] = { 0, 0, 0, 1, 1, 1, 0, 0 };
#define SUM_NCOL	(sizeof(sum_head) / sizeof(sum_head[0]))

static int
summary_table(const struct report_model *m, const struct report_pivot *p,
    const struct report_pivot_sum *s, struct ptable *t)
{
	char fa[NCOL][REPORT_FIELD], fb[NCOL][REPORT_FIELD];
	const struct report_pivot_line *l;
	const char *v[SUM_NCOL];
	size_t i, j, x, ncol = p->ncols > 2 ? SUM_NCOL : SUM_NCOL - 1;
	int rc, dec;

	if ((rc = ptable_alloc(t, ncol, s->nlines)) != 0)
		return rc;
	for (j = 0, x = 0; j < SUM_NCOL; j++) {
		if (j == 2 && p->ncols <= 2)
			continue;
		t->head[x] = sum_head[j];
		t->right[x++] = sum_right[j];
	}
	for (i = 0; i < s->nlines; i++) {
		l = &s->lines[i];
		dec = m->metrics[l->metric].decimals;
		report_row_fields(l->a, dec, fa);
		report_row_fields(l->b, dec, fb);
		v[0] = row_label(p, l->row);
		v[1] = m->metrics[l->metric].metric->name;
		v[2] = p->cols[l->col];
		v[3] = fa[C_MEAN];
		v[4] = fb[C_MEAN];
		v[5] = fb[C_PCT];
		v[6] = fb[C_PCTCI];
		v[7] = fb[C_SIG];
		for (j = 0, x = 0; j < SUM_NCOL; j++) {
			if (j == 2 && p->ncols <= 2)
				continue;
			if ((rc = ptable_set(t, i * ncol + x++, v[j], j != 7)) != 0)
				return rc;
		}
	}
	return 0;
}

/* "Geometric mean of B/A, wall_s, B = job 14: 0.9874 [0.9712, 1.0039],
 * -1.26% [-2.88%, +0.39%], 3 rows" into out. */
static int
gm_line(const struct report_model *m, const struct report_pivot *p,
    const struct report_pivot_gm *g, struct buf *out)
{
	const char *name = m->metrics[g->metric].metric->name;
	int r;

	if ((r = buf_printf(out, "Geometric mean of B/A, %s, B = %s: ", name,
	    p->cols[g->col])) != 0)
		return r;
	if (isnan(g->gm))
		r = buf_puts(out, "none (no row with positive means)");
	else if (isnan(g->lo))
		r = buf_printf(out, "%.4f, %+.2f%%, no CI", g->gm, 100 * (g->gm - 1));
	else
		r = buf_printf(out, "%.4f [%.4f, %.4f], %+.2f%% [%+.2f%%, %+.2f%%]", g->gm,
		    g->lo, g->hi, 100 * (g->gm - 1), 100 * (g->lo - 1), 100 * (g->hi - 1));
	if (r != 0)
		return r;
	if ((r = buf_printf(out, ", %zu row%s", g->n, g->n == 1 ? "" : "s")) != 0)
		return r;
	if (g->nskip > 0 && (r = buf_printf(out, " (%zu left out)", g->nskip)) != 0)
		return r;
	return 0;
}

/* The pivot's own legend lines, before the model's. */
static int
pivot_legend(const struct report_pivot *p, size_t i, struct buf *line)
{
	if (i == 0)
		return buf_printf(line, "Columns: the values of %s side by side; %% change and "
		    "its CI of each against %s, the row's cell in the first column.", p->axis,
		    p->cols[0]);
	return buf_puts(line, report_pivot_gm_legend);
}

/* The legend, cleaned, wrapped (text) or as a list (markdown, md set). */
static int
legend_out(const struct report_model *m, const struct report_pivot *p, struct buf *out,
    int md)
{
	struct buf line;
	size_t i, nown = p->summary ? 2 : 1;
	char *t;
	int r = 0;

	buf_init(&line, BF_MAX_STR * 2);
	for (i = 0; i < nown + m->nlegend && r == 0; i++) {
		buf_reset(&line);
		if (i < nown)
			r = pivot_legend(p, i, &line);
		else
			r = buf_puts(&line, m->legend[i - nown]);
		if (r != 0)
			break;
		if ((t = report_clean(line.data, 1, NULL)) == NULL) {
			r = BF_ERR_ALLOC;
			break;
		}
		if (md)
			r = report_md_line(out, t);
		else
			r = report_text_wrap(out, t, LEGEND_WIDTH, "  ");
		free(t);
	}
	buf_free(&line);
	return r;
}

static int
heading(struct buf *out, const struct report_metric *mt, int md)
{
	char *n = report_clean(mt->name, 1, NULL), *u = NULL;
	int r;

	if (n == NULL || (mt->unit != NULL && (u = report_clean(mt->unit, 1, NULL)) == NULL)) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (md)
		r = report_md_heading(out, mt);
	else
		r = buf_printf(out, "%s%s%s%s - %s\n", n, u != NULL && *u ? " (" : "",
		    u != NULL && *u ? u : "", u != NULL && *u ? ")" : "",
		    report_direction_words(mt));
out:
	free(n);
	free(u);
	return r;
}

/* A markdown table from t: the group names join the column heads. */
static int
ptable_md(struct buf *out, const struct ptable *t)
{
	const char *g = NULL;
	size_t c, i;
	int r;

	for (c = 0; c < t->ncol; c++) {
		if (t->group[c] != NULL)
			g = t->group[c];
		if ((r = buf_puts(out, "| ")) != 0 ||
		    (c > 0 && g != NULL && ((r = report_md_escape(out, g)) != 0 ||
		    (r = buf_puts(out, " ")) != 0)) ||
		    (r = report_md_escape(out, t->head[c])) != 0 || (r = buf_puts(out, " ")) != 0)
			return r;
	}
	if ((r = buf_puts(out, "|\n")) != 0)
		return r;
	for (c = 0; c < t->ncol; c++)
		if ((r = buf_puts(out, t->right[c] ? "| ---: " : "| --- ")) != 0)
			return r;
	if ((r = buf_puts(out, "|\n")) != 0)
		return r;
	for (i = 0; i < t->nrows; i++) {
		for (c = 0; c < t->ncol; c++)
			if ((r = buf_puts(out, "| ")) != 0 ||
			    (r = report_md_escape(out, t->cells[i * t->ncol + c])) != 0 ||
			    (r = buf_puts(out, " ")) != 0)
				return r;
		if ((r = buf_puts(out, "|\n")) != 0)
			return r;
	}
	return 0;
}

/* Text (md == 0) or markdown (md == 1). */
static int
render_tables(const struct report_model *m, const struct report_pivot *p, struct buf *out,
    int md)
{
	const struct report_input *in = m->in;
	struct report_pivot_sum s;
	struct ptable t;
	struct buf gl;
	char *tt;
	size_t k, i;
	int r;

	memset(&s, 0, sizeof(s));
	memset(&t, 0, sizeof(t));
	buf_init(&gl, BF_MAX_STR * 2);
	if (in->title != NULL) {
		if ((tt = report_clean(in->title, 1, NULL)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		r = md ? buf_puts(out, "### ") : 0;
		if (r == 0)
			r = md ? report_md_escape(out, tt) : buf_puts(out, tt);
		free(tt);
		if (r != 0 || (r = buf_puts(out, md ? "\n\n" : "\n")) != 0)
			goto out;
	}
	for (k = 0; k < m->nmetrics && !p->summary_only; k++) {
		if ((r = buf_puts(out, md ? "" : "\n")) != 0 ||
		    (r = heading(out, m->metrics[k].metric, md)) != 0 ||
		    (md && (r = buf_puts(out, "\n")) != 0) ||
		    (r = metric_table(m, p, k, &t)) != 0 ||
		    (r = md ? ptable_md(out, &t) : ptable_print(out, &t)) != 0 ||
		    (md && (r = buf_puts(out, "\n")) != 0))
			goto out;
		ptable_free(&t);
	}
	if (p->summary) {
		if ((r = report_pivot_summary(m, p, &s)) != 0 ||
		    (r = buf_printf(out, md ? "**Summary: A = " : "\nSummary: A = ")) != 0 ||
		    (r = md ? report_md_escape(out, p->cols[0]) : buf_puts(out, p->cols[0])) != 0 ||
		    (r = buf_puts(out, md ? ", B against it**\n\n" : ", B against it\n")) != 0 ||
		    (r = summary_table(m, p, &s, &t)) != 0 ||
		    (r = md ? ptable_md(out, &t) : ptable_print(out, &t)) != 0 ||
		    (r = buf_puts(out, "\n")) != 0)
			goto out;
		for (i = 0; i < s.ngms; i++) {
			buf_reset(&gl);
			if ((r = gm_line(m, p, &s.gms[i], &gl)) != 0 ||
			    (r = (md ? report_md_line(out, gl.data) :
			    report_text_wrap(out, gl.data, LEGEND_WIDTH, "  "))) != 0)
				goto out;
		}
	}
	if (p->summary_only) {
		buf_reset(&gl);
		r = buf_puts(&gl, report_pivot_gm_legend);
		if (r == 0 && !md)
			r = buf_puts(out, "\n");
		if (r == 0)
			r = md ? report_md_line(out, gl.data) : report_text_wrap(out, gl.data,
			    LEGEND_WIDTH, "  ");
		goto out;
	}
	if ((!md && (r = buf_puts(out, "\n")) != 0) || (r = legend_out(m, p, out, md)) != 0)
		goto out;
	r = 0;
out:
	buf_free(&gl);
	ptable_free(&t);
	report_pivot_sum_free(&s);
	return r;
}

int
report_pivot_render(const struct report_model *m, const struct report_pivot *p,
    const char *format, struct buf *out, struct bf_diag *d)
{
	size_t i;
	int r;

	if (m == NULL || p == NULL || out == NULL) {
		bf_diag_set(d, "report", "no model, pivot or output buffer");
		return BF_ERR_INVALID;
	}
	for (i = 0; i < p->nrows * p->ncols; i++) {
		if (p->cell_at[i] >= 0 && (size_t)p->cell_at[i] >= m->ncells) {
			bf_diag_set(d, "columns", "the pivot names cell %d of %zu", p->cell_at[i],
			    m->ncells);
			return BF_ERR_INVALID;
		}
	}
	if (format != NULL && strcmp(format, "text") == 0)
		r = render_tables(m, p, out, 0);
	else if (format != NULL && strcmp(format, "markdown") == 0)
		r = render_tables(m, p, out, 1);
	else if (format != NULL && strcmp(format, "csv") == 0)
		r = report_pivot_csv(m, p, out);
	else if (format != NULL && strcmp(format, "json") == 0)
		r = report_pivot_json(m, p, out);
	else {
		bf_diag_set(d, "format", "\"%s\" is not one of text, markdown, csv, json",
		    format ? format : "(null)");
		return BF_ERR_INVALID;
	}
	if (r == BF_ERR_TOOBIG)
		bf_diag_set(d, "report", "the report is over the output cap");
	return r;
}
