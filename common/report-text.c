/*
 * report-text.c: the report as mail text: aligned tables at most
 * TEXT_WIDTH columns wide, no tabs, user text cleaned of control
 * characters and invalid UTF-8, and the legend wrapped as mail is.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "report.h"
#include "report-int.h"

#define TEXT_WIDTH	100	/* wider rows put the label on a line of its own */
#define LEGEND_WIDTH	78	/* legend lines wrap here, as mail text does */

/* A copy of s fit for one table line (control characters become spaces),
 * and its display width in UTF-8 code points. */
static char *
text_clean(const char *s, size_t *width)
{
	return report_clean(s, 1, width);
}

/* One column of a text table: s (display width sw) aligned in width,
 * then the two-space gap unless it is the last column. */
static int
pad(struct buf *out, const char *s, size_t sw, size_t width, int right, int last)
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
	return last ? 0 : buf_puts(out, "  ");
}

/* Trailing spaces removed, then a newline. */
static int
end_line(struct buf *out)
{
	while (out->len > 0 && out->data[out->len - 1] == ' ')
		out->data[--out->len] = '\0';
	return buf_puts(out, "\n");
}

/*
 * s (valid UTF-8 without control characters) on lines of at most width
 * code points, broken at spaces; continuation lines start with indent. A
 * word longer than a line is cut.
 */
static int
wrap_text(struct buf *out, const char *s, size_t width, const char *indent)
{
	size_t avail, i, cps, brk, len;
	int r, first = 1;

	for (;;) {
		if (!first)
			while (*s == ' ')
				s++;
		if (*s == '\0' && !first)
			break;
		avail = width - (first ? 0 : strlen(indent));
		for (i = 0, cps = 0, brk = 0; s[i] != '\0'; i++) {
			if (((unsigned char)s[i] & 0xc0) != 0x80) {
				if (cps == avail)
					break;
				cps++;
			}
			if (s[i] == ' ')
				brk = i;
		}
		len = i;
		if (s[i] != '\0' && s[i] != ' ' && brk > 0)
			len = brk;
		if ((!first && (r = buf_puts(out, indent)) != 0) ||
		    (r = buf_append(out, s, len)) != 0 || (r = end_line(out)) != 0)
			return r;
		s += len;
		first = 0;
		if (*s == '\0')
			break;
	}
	return 0;
}

/* Width of a table's rows without their labels (the split layout). */
static size_t
fields_width(size_t nrows, size_t ncol, const char *const *head,
    char (*fields)[REPORT_FIELD])
{
	size_t c, i, w, fw, total = 0;

	for (c = 1; c < ncol; c++) {
		w = strlen(head[c]);
		for (i = 0; i < nrows; i++)
			if ((fw = strlen(fields[i * ncol + c])) > w)
				w = fw;
		total += 2 + w;
	}
	return total;
}

/*
 * One aligned table. fields[row * ncol + col]; labels[row] with their
 * widths. If a row would pass TEXT_WIDTH the labels go on their own lines
 * and the numbers below them, indented.
 */
static int
text_table(struct buf *out, size_t nrows, size_t ncol, const char *const *head,
    const int *right, char (*fields)[REPORT_FIELD], char *const *labels, const size_t *lw)
{
	size_t w[NCOL] = { 0 }, i, c, total = 0, fw;
	int r, split;

	for (c = 0; c < ncol; c++)
		w[c] = strlen(head[c]);
	for (i = 0; i < nrows; i++) {
		if (lw[i] > w[0])
			w[0] = lw[i];
		for (c = 1; c < ncol; c++)
			if ((fw = strlen(fields[i * ncol + c])) > w[c])
				w[c] = fw;
	}
	for (c = 0; c < ncol; c++)
		total += w[c] + (c + 1 < ncol ? 2 : 0);
	split = total > TEXT_WIDTH;
	if (split)
		w[0] = 0;
	for (c = 0; c < ncol; c++)
		if ((r = pad(out, split && c == 0 ? "" : head[c], split && c == 0 ? 0 :
		    strlen(head[c]), w[c], right[c], c + 1 == ncol)) != 0)
			return r;
	if ((r = end_line(out)) != 0)
		return r;
	for (i = 0; i < nrows; i++) {
		if (split && (r = wrap_text(out, labels[i], TEXT_WIDTH, "  ")) != 0)
			return r;
		for (c = 0; c < ncol; c++) {
			const char *s = c == 0 ? (split ? "" : labels[i]) : fields[i * ncol + c];
			size_t sw = c == 0 ? (split ? 0 : lw[i]) : strlen(s);

			if ((r = pad(out, s, sw, w[c], right[c], c + 1 == ncol)) != 0)
				return r;
		}
		if ((r = end_line(out)) != 0)
			return r;
	}
	return 0;
}

/* User text (a title, a metric name) on one line, cleaned. */
static int
user_text(struct buf *out, const char *s)
{
	char *t;
	size_t w;
	int r;

	if ((t = text_clean(s, &w)) == NULL)
		return BF_ERR_ALLOC;
	r = buf_puts(out, t);
	free(t);
	return r;
}

static int
metric_heading(struct buf *out, const struct report_metric *mt)
{
	const char *unit = mt->unit != NULL && *mt->unit ? mt->unit : NULL;
	int r;

	if ((r = user_text(out, mt->name)) != 0)
		return r;
	if (unit != NULL && ((r = buf_puts(out, " (")) != 0 ||
	    (r = user_text(out, unit)) != 0 || (r = buf_puts(out, ")")) != 0))
		return r;
	return buf_printf(out, " - %s\n", report_direction_words(mt));
}

/* The boots x iterations table of metric mm: only its cells with several
 * boots. f has room for ncells rows of NCOL fields. */
static int
boots_table(const struct report_model *m, const struct report_model_metric *mm,
    char (*f)[REPORT_FIELD], char **labels, const size_t *lw, char **bl, size_t *blw,
    struct buf *out)
{
	size_t c, nb = 0, bc;
	int r, anym = m->in->boot_cost_ratio > 0;

	if ((r = buf_puts(out, "\nboots x iterations:\n")) != 0)
		return r;
	bc = anym ? NBCOL : NBCOL - 1;
	for (c = 0; c < m->ncells; c++) {
		char row[NBCOL][REPORT_FIELD];

		if (!mm->rows[c].multi)
			continue;
		report_boot_fields(&mm->rows[c], anym, row);
		memcpy(&f[nb * bc], row, bc * sizeof(*f));
		bl[nb] = labels[c];
		blw[nb] = lw[c];
		nb++;
	}
	return text_table(out, nb, bc, report_bcol_head, report_bcol_right, f, bl, blw);
}

int
report_render_text(const struct report_model *m, struct buf *out)
{
	const struct report_input *in = m->in;
	const struct report_model_metric *mm;
	char (*f)[REPORT_FIELD] = NULL, **labels = NULL, **bl = NULL, *t;
	char row[NCOL][REPORT_FIELD];
	const char *heads[NCOL];
	size_t *lw = NULL, *blw = NULL, k, c, i, nc, ns, sel[NCOL];
	int r, pass, rights[NCOL];

	f = calloc(m->ncells * NCOL + 1, sizeof(*f));
	labels = calloc(m->ncells + 1, sizeof(*labels));
	bl = calloc(m->ncells + 1, sizeof(*bl));
	lw = calloc(m->ncells + 1, sizeof(*lw));
	blw = calloc(m->ncells + 1, sizeof(*blw));
	if (f == NULL || labels == NULL || bl == NULL || lw == NULL || blw == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (c = 0; c < m->ncells; c++) {
		if ((labels[c] = text_clean(m->cells[c].label, &lw[c])) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	if (in->title != NULL && ((r = user_text(out, in->title)) != 0 ||
	    (r = buf_puts(out, "\n")) != 0))
		goto out;
	if (in->baseline_desc != NULL && ((r = buf_puts(out, "baseline: ")) != 0 ||
	    (r = user_text(out, in->baseline_desc)) != 0 ||
	    (r = buf_puts(out, "\n")) != 0))
		goto out;
	for (i = 0; i < m->nmetrics; i++) {
		mm = &m->metrics[i];
		if ((r = buf_puts(out, "\n")) != 0 || (r = metric_heading(out, mm->metric)) != 0)
			goto out;
		nc = mm->any_cmp ? NCOL : C_PCT;
		/* The n column only when cells differ: the legend gives one n. */
		for (k = 0, ns = 0; k < nc; k++) {
			if (k == C_N && m->uniform_n)
				continue;
			heads[ns] = report_col_head[k];
			rights[ns] = report_col_right[k];
			sel[ns++] = k;
		}
		/* Decimals shared by the metric; if even a row without its label is
		 * too wide, each row's own; then 4 significant digits. */
		for (pass = 0; pass < 3; pass++) {
			for (c = 0; c < m->ncells; c++) {
				report_row_fields(&mm->rows[c], pass == 0 ? mm->decimals :
				    pass == 1 ? report_row_decimals(&mm->rows[c].eff) :
				    REPORT_SIG_DIGITS, row);
				/* Row c goes to stride ns; it never overlaps a later row. */
				for (k = 0; k < ns; k++)
					memcpy(f[c * ns + k], row[sel[k]], REPORT_FIELD);
			}
			if (fields_width(m->ncells, ns, heads, f) <= TEXT_WIDTH)
				break;
		}
		if ((r = text_table(out, m->ncells, ns, heads, rights, f, labels, lw)) != 0)
			goto out;
		if (mm->nmulti > 0 &&
		    (r = boots_table(m, mm, f, labels, lw, bl, blw, out)) != 0)
			goto out;
	}
	if ((r = buf_puts(out, "\n")) != 0)
		goto out;
	for (i = 0; i < m->nlegend; i++) {
		if ((t = text_clean(m->legend[i], NULL)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		r = wrap_text(out, t, LEGEND_WIDTH, "  ");
		free(t);
		if (r != 0)
			goto out;
	}
	r = 0;
out:
	for (c = 0; labels != NULL && c < m->ncells; c++)
		free(labels[c]);
	free(labels);
	free(bl);
	free(lw);
	free(blw);
	free(f);
	return r;
}

/* For the side-by-side layout (report-pivot.c): its legend wraps the same. */
int
report_text_wrap(struct buf *out, const char *s, size_t width, const char *indent)
{
	return wrap_text(out, s, width, indent);
}
