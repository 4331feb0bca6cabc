/*
 * report-md.c: the report as GitHub markdown: a bold heading and a table
 * per metric, a boots x iterations table where cells have several boots,
 * and the legend as a list. User text is escaped so that it can neither
 * start markup nor break a column.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "report.h"
#include "report-int.h"

/* Backslash-escape what GitHub would treat as inline markup or as a column
 * break (nothing we print starts a line, so block markup like '#', '-' or
 * '+' cannot trigger); control characters become spaces. */
static int
md_escape(struct buf *out, const char *s)
{
	char *t, *p;
	int r = 0;

	if ((t = report_clean(s, 1, NULL)) == NULL)
		return BF_ERR_ALLOC;
	for (p = t; *p && r == 0; p++) {
		if (strchr("\\`*_<>|~", *p) != NULL)
			r = buf_printf(out, "\\%c", *p);
		else
			r = buf_append(out, p, 1);
	}
	free(t);
	return r;
}

static int
md_row(struct buf *out, const char *label, char (*f)[REPORT_FIELD], size_t ncol)
{
	size_t c;
	int r;

	if ((r = buf_puts(out, "| ")) != 0 || (r = md_escape(out, label)) != 0)
		return r;
	for (c = 1; c < ncol; c++)
		if ((r = buf_puts(out, " | ")) != 0 || (r = md_escape(out, f[c])) != 0)
			return r;
	return buf_puts(out, " |\n");
}

static int
md_head(struct buf *out, const char *const *head, const int *right, size_t ncol)
{
	size_t c;
	int r;

	for (c = 0; c < ncol; c++)
		if ((r = buf_printf(out, "| %s ", head[c])) != 0)
			return r;
	if ((r = buf_puts(out, "|\n")) != 0)
		return r;
	for (c = 0; c < ncol; c++)
		if ((r = buf_puts(out, right[c] ? "| ---: " : "| --- ")) != 0)
			return r;
	return buf_puts(out, "|\n");
}

static int
md_heading(struct buf *out, const struct report_metric *mt)
{
	const char *unit = mt->unit != NULL && *mt->unit ? mt->unit : NULL;
	int r;

	if ((r = buf_puts(out, "**")) != 0 || (r = md_escape(out, mt->name)) != 0)
		return r;
	if (unit != NULL && ((r = buf_puts(out, " (")) != 0 ||
	    (r = md_escape(out, unit)) != 0 || (r = buf_puts(out, ")")) != 0))
		return r;
	return buf_printf(out, " - %s**\n", report_direction_words(mt));
}

/* One metric: its table, then its boots x iterations table if any. */
static int
md_metric(const struct report_model *m, const struct report_model_metric *mm,
    struct buf *out)
{
	char f[NCOL][REPORT_FIELD];
	size_t c, nc = mm->any_cmp ? NCOL : C_PCT;
	int r, anym = m->in->boot_cost_ratio > 0;
	size_t bc = anym ? NBCOL : NBCOL - 1;

	if ((r = md_heading(out, mm->metric)) != 0 || (r = buf_puts(out, "\n")) != 0 ||
	    (r = md_head(out, report_col_head, report_col_right, nc)) != 0)
		return r;
	for (c = 0; c < m->ncells; c++) {
		report_row_fields(&mm->rows[c], mm->decimals, f);
		if ((r = md_row(out, m->cells[c].label, f, nc)) != 0)
			return r;
	}
	if ((r = buf_puts(out, "\n")) != 0)
		return r;
	if (mm->nmulti == 0)
		return 0;
	if ((r = md_head(out, report_bcol_head, report_bcol_right, bc)) != 0)
		return r;
	for (c = 0; c < m->ncells; c++) {
		if (!mm->rows[c].multi)
			continue;
		report_boot_fields(&mm->rows[c], anym, f);
		if ((r = md_row(out, m->cells[c].label, f, bc)) != 0)
			return r;
	}
	return buf_puts(out, "\n");
}

int
report_render_markdown(const struct report_model *m, struct buf *out)
{
	const struct report_input *in = m->in;
	size_t i;
	int r;

	if (in->title != NULL && ((r = buf_puts(out, "### ")) != 0 ||
	    (r = md_escape(out, in->title)) != 0 || (r = buf_puts(out, "\n\n")) != 0))
		return r;
	if (in->baseline_desc != NULL && ((r = buf_puts(out, "baseline: ")) != 0 ||
	    (r = md_escape(out, in->baseline_desc)) != 0 || (r = buf_puts(out, "\n\n")) != 0))
		return r;
	for (i = 0; i < m->nmetrics; i++)
		if ((r = md_metric(m, &m->metrics[i], out)) != 0)
			return r;
	for (i = 0; i < m->nlegend; i++)
		if ((r = buf_puts(out, "- ")) != 0 || (r = md_escape(out, m->legend[i])) != 0 ||
		    (r = buf_puts(out, "\n")) != 0)
			return r;
	return 0;
}

/* For the side-by-side layout (report-pivot.c): the same escaping,
 * heading and legend items. */
int
report_md_escape(struct buf *out, const char *s)
{
	return md_escape(out, s);
}

int
report_md_heading(struct buf *out, const struct report_metric *mt)
{
	return md_heading(out, mt);
}

int
report_md_line(struct buf *out, const char *s)
{
	int r;

	if ((r = buf_puts(out, "- ")) != 0 || (r = md_escape(out, s)) != 0)
		return r;
	return buf_puts(out, "\n");
}
