/*
 * report.c: render comparison tables (text, markdown, csv, json) from a
 * job's samples. The numbers come from stats.c; this file decides what is
 * shown, how it is rounded, and how user-supplied labels are escaped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "caps.h"
#include "report.h"
#include "stats.h"

#define TEXT_WIDTH	100	/* wider rows put the label on a line of its own */
#define FIELD		64	/* one formatted table field */
#define MAX_DECIMALS	10

/* Everything shown about one cell for one metric. */
struct rstat {
	struct stats_summary all;	/* every sample */
	struct stats_summary eff;	/* what the CI and tests use: all, or boot means */
	int multi;			/* samples from more than one boot */
	struct stats_twolevel tl;	/* valid when multi */
	int has_mstar;
	size_t mstar;
	int is_base;			/* some cell compares against this one */
	int has_cmp;			/* this cell has a baseline */
	struct stats_compare cmp;
};

enum { C_LABEL, C_N, C_MEAN, C_COV, C_CI, C_PCT, C_PCTCI, C_P, C_SIG, NCOL };
static const char *const col_head[NCOL] = {
	"cell", "n", "mean", "CoV%", "95% CI", "% change", "95% CI of change",
	"Welch p", "sig"
};
/* Numbers right-aligned, text left-aligned. */
static const int col_right[NCOL] = { 0, 1, 1, 1, 0, 1, 0, 1, 0 };

enum { B_LABEL, B_BOOTS, B_ITERS, B_SDB, B_SDW, B_MSTAR, NBCOL };
static const char *const bcol_head[NBCOL] = {
	"cell", "boots", "iter/boot", "sd between", "sd within", "m*"
};
static const int bcol_right[NBCOL] = { 0, 1, 1, 1, 1, 1 };

struct fmt_entry {
	const char *name;
	int (*render)(const struct report_input *, struct rstat *, struct buf *,
	    struct bf_diag *);
};

static const char *
str_or_empty(const char *s)
{
	return s ? s : "";
}

static const char *
cell_label(const struct report_input *in, size_t c)
{
	return in->cells ? str_or_empty(in->cells[c].label) : "";
}

static const struct report_series *
series_of(const struct report_input *in, size_t c, size_t m)
{
	return &in->series[c * in->nmetrics + m];
}

static int
validate(const struct report_input *in, struct bf_diag *d)
{
	const struct report_series *s;
	size_t c, m, i;
	int r, b;

	if (in->nmetrics > BF_MAX_METRICS || in->ncells > BF_MAX_CELLS) {
		bf_diag_set(d, "report", "%zu metrics x %zu cells is over the caps %d x %d",
		    in->nmetrics, in->ncells, BF_MAX_METRICS, BF_MAX_CELLS);
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if ((in->nmetrics > 0 && in->metrics == NULL) ||
	    (in->ncells > 0 && in->cells == NULL) ||
	    (in->nmetrics > 0 && in->ncells > 0 && in->series == NULL)) {
		bf_diag_set(d, "report", "metrics, cells and series are required");
		r = BF_ERR_INVALID;
		goto out;
	}
	for (m = 0; m < in->nmetrics; m++) {
		if (in->metrics[m].name == NULL) {
			bf_diag_set(d, "metrics", "metric %zu has no name", m);
			r = BF_ERR_INVALID;
			goto out;
		}
	}
	for (c = 0; c < in->ncells; c++) {
		if (in->baseline_of != NULL) {
			b = in->baseline_of[c];
			if (b < -1 || b == (int)c || (b >= 0 && (size_t)b >= in->ncells)) {
				bf_diag_set(d, "baseline_of", "cell %zu (\"%s\"): baseline %d is "
				    "not -1 or another cell in 0..%zu", c, cell_label(in, c), b,
				    in->ncells - 1);
				r = BF_ERR_INVALID;
				goto out;
			}
		}
		for (m = 0; m < in->nmetrics; m++) {
			s = series_of(in, c, m);
			if (s->n > STATS_MAX_SAMPLES) {
				bf_diag_set(d, "series", "cell \"%s\", metric %s: %zu samples, "
				    "at most %zu", cell_label(in, c), in->metrics[m].name, s->n,
				    STATS_MAX_SAMPLES);
				r = BF_ERR_TOOBIG;
				goto out;
			}
			if (s->n > 0 && s->v == NULL) {
				bf_diag_set(d, "series", "cell \"%s\", metric %s: no values",
				    cell_label(in, c), in->metrics[m].name);
				r = BF_ERR_INVALID;
				goto out;
			}
			for (i = 0; i < s->n; i++) {
				if (!isfinite(s->v[i])) {
					bf_diag_set(d, "series", "cell \"%s\", metric %s, sample %zu: "
					    "%g is not a finite number", cell_label(in, c),
					    in->metrics[m].name, i, s->v[i]);
					r = BF_ERR_INVALID;
					goto out;
				}
			}
		}
	}
	r = 0;
out:
	return r;
}

static int
distinct_boots(const struct report_series *s)
{
	size_t i;

	if (s->boot == NULL)
		return 0;
	for (i = 1; i < s->n; i++)
		if (s->boot[i] != s->boot[0])
			return 1;
	return 0;
}

/* Fill st[0..ncells) for metric m. */
static int
compute(const struct report_input *in, size_t m, struct rstat *st)
{
	const struct report_series *s;
	size_t c;
	int r, b;

	memset(st, 0, in->ncells * sizeof(*st));
	for (c = 0; c < in->ncells; c++) {
		s = series_of(in, c, m);
		if ((r = stats_summarize(s->v, s->n, &st[c].all)) != 0)
			goto out;
		st[c].eff = st[c].all;
		if (distinct_boots(s)) {
			if ((r = stats_twolevel(s->v, s->boot, s->n, &st[c].tl)) != 0)
				goto out;
			st[c].multi = 1;
			st[c].eff = st[c].tl.bm;
			if (in->boot_cost_ratio > 0 && isfinite(in->boot_cost_ratio) &&
			    isfinite(st[c].tl.sw2) && isfinite(st[c].tl.sigma_boot2) &&
			    stats_optimal_iters(in->boot_cost_ratio, st[c].tl.sw2,
			    st[c].tl.sigma_boot2, &st[c].mstar) == 0)
				st[c].has_mstar = 1;
		}
	}
	for (c = 0; c < in->ncells && in->baseline_of != NULL; c++) {
		if ((b = in->baseline_of[c]) < 0)
			continue;
		st[b].is_base = 1;
		st[c].has_cmp = 1;
		if ((r = stats_compare(&st[b].eff, &st[c].eff, &st[c].cmp)) != 0)
			goto out;
	}
	r = 0;
out:
	return r;
}

/* Decimals for one row: the mean shows >= 4 significant digits and the
 * CI half-width 2 (so 13720556 stays an integer and 0.4068 keeps 4). */
static int
row_decimals(const struct stats_summary *s)
{
	double x = fabs(s->mean), h = (s->ci_hi - s->ci_lo) / 2;
	int dec = 0, k;

	if (isfinite(x) && x > 0) {
		k = 3 - (int)floor(log10(x));
		if (k > dec)
			dec = k;
		if (isfinite(h) && h > 0 && (k = 1 - (int)floor(log10(h))) > dec)
			dec = k;
	}
	return dec > MAX_DECIMALS ? MAX_DECIMALS : dec;
}

/* A spread shows 3 significant digits. */
static int
sd_decimals(double x)
{
	int k;

	if (!isfinite(x) || x <= 0)
		return 0;
	k = 2 - (int)floor(log10(x));
	return k < 0 ? 0 : k > MAX_DECIMALS ? MAX_DECIMALS : k;
}

/* At most 1 + 15 + 1 + MAX_DECIMALS characters. */
#define NUM_FIELD	30
static void
fmt_numn(char *f, size_t size, double x, int dec)
{
	if (!isfinite(x))
		snprintf(f, size, "n/a");
	else if (x != 0 && (fabs(x) >= 1e15 || fabs(x) < 1e-6))
		snprintf(f, size, "%.4g", x);
	else
		snprintf(f, size, "%.*f", dec, x);
}

static void
fmt_num(char *f, double x, int dec)
{
	fmt_numn(f, FIELD, x, dec);
}

static void
fmt_p(char *f, double p)
{
	if (isnan(p))
		snprintf(f, FIELD, "n/a");
	else if (p < 0.0001)
		snprintf(f, FIELD, "<0.0001");
	else
		snprintf(f, FIELD, "%.4f", p);
}

static const char *
sig_word(const struct report_metric *mt, const struct rstat *s)
{
	if (!s->has_cmp || !s->cmp.significant)
		return "";
	if ((s->cmp.pct.pct > 0) == (mt->higher_better != 0))
		return "* better";
	return "* worse";
}

/* The text fields of one row (label excluded). */
/* Whether any cell of the metric is compared with a baseline: if none is,
 * the comparison columns are left out. */
static int
any_cmp(const struct report_input *in, const struct rstat *st)
{
	size_t c;

	for (c = 0; c < in->ncells; c++)
		if (st[c].has_cmp)
			return 1;
	return 0;
}

/* One setting per metric keeps a column's decimals aligned. */
static int
metric_decimals(const struct report_input *in, const struct rstat *st)
{
	size_t c;
	int dec = 0, k;

	for (c = 0; c < in->ncells; c++)
		if ((k = row_decimals(&st[c].eff)) > dec)
			dec = k;
	return dec;
}

static void
row_fields(const struct report_metric *mt, const struct rstat *s, int dec,
    char f[NCOL][FIELD])
{
	char lo[NUM_FIELD], hi[NUM_FIELD];
	const struct stats_pct *p = &s->cmp.pct;

	f[C_LABEL][0] = '\0';
	snprintf(f[C_N], FIELD, "%zu", s->all.n);
	fmt_num(f[C_MEAN], s->eff.mean, dec);
	if (isnan(s->eff.cov))
		snprintf(f[C_COV], FIELD, "n/a");
	else
		snprintf(f[C_COV], FIELD, "%.2f", s->eff.cov);
	if (isnan(s->eff.ci_lo)) {
		snprintf(f[C_CI], FIELD, "n/a");
	} else {
		fmt_numn(lo, sizeof(lo), s->eff.ci_lo, dec);
		fmt_numn(hi, sizeof(hi), s->eff.ci_hi, dec);
		snprintf(f[C_CI], FIELD, "[%s, %s]", lo, hi);
	}
	f[C_PCT][0] = f[C_PCTCI][0] = f[C_P][0] = '\0';
	snprintf(f[C_SIG], FIELD, "%s", sig_word(mt, s));
	if (!s->has_cmp) {
		if (s->is_base)
			snprintf(f[C_PCT], FIELD, "baseline");
		return;
	}
	if (isnan(p->pct))
		snprintf(f[C_PCT], FIELD, "n/a");
	else
		snprintf(f[C_PCT], FIELD, "%+.2f", p->pct);
	if (p->unbounded)
		snprintf(f[C_PCTCI], FIELD, "unbounded");
	else if (isnan(p->lo))
		snprintf(f[C_PCTCI], FIELD, "n/a");
	else
		snprintf(f[C_PCTCI], FIELD, "[%+.2f, %+.2f]", p->lo, p->hi);
	fmt_p(f[C_P], s->cmp.welch.p);
}

static void
boot_fields(const struct rstat *s, int with_mstar, char f[NBCOL][FIELD])
{
	double sdb = sqrt(s->tl.sigma_boot2), sdw = sqrt(s->tl.sw2);

	f[B_LABEL][0] = '\0';
	snprintf(f[B_BOOTS], FIELD, "%zu", s->tl.nboots);
	if (s->tl.m_min == s->tl.m_max)
		snprintf(f[B_ITERS], FIELD, "%zu", s->tl.m_min);
	else
		snprintf(f[B_ITERS], FIELD, "%zu-%zu", s->tl.m_min, s->tl.m_max);
	fmt_num(f[B_SDB], sdb, sd_decimals(sdb));
	fmt_num(f[B_SDW], sdw, sd_decimals(sdw));
	if (!with_mstar)
		f[B_MSTAR][0] = '\0';
	else if (s->has_mstar)
		snprintf(f[B_MSTAR], FIELD, "%zu", s->mstar);
	else
		snprintf(f[B_MSTAR], FIELD, "n/a");
}

static const char *const legend[] = {
	"n: samples; CoV% = 100*sd/mean; 95% CI of the mean by Student t.",
	"% change = (B-A)/A*100 of a cell B vs its baseline cell A.",
	"95% CI of change by Fieller's method; \"unbounded\" when the baseline",
	"  mean is not distinguishable from 0.",
	"Welch p: two-sided Welch t-test (Welch-Satterthwaite dof).",
	"'*' significant only when Welch p < 0.05 and the CI of the % change",
	"  excludes 0; better/worse per the metric's lower/higher is better.",
	"With several boots, mean, CI and tests use the per-boot means",
	"  (Kalibera & Jones); m* = optimal iterations per boot.",
	"n/a: not enough samples (n < 2) or no variance.",
};

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one. */
static size_t
utf8_seq(const unsigned char *s)
{
	size_t n, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* A copy of s with invalid UTF-8 bytes as '?' and, if ctl, control
 * characters as spaces; *width (may be NULL) gets its code points. */
static char *
clean(const char *s, int ctl, size_t *width)
{
	size_t i = 0, k, n = strlen(s), w = 0;
	char *t;

	if ((t = malloc(n + 1)) == NULL)
		return NULL;
	while (i < n) {
		unsigned char ch = (unsigned char)s[i];

		if ((k = utf8_seq((const unsigned char *)s + i)) == 0) {
			t[i++] = '?';
		} else if (k == 1) {
			t[i++] = ctl && (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
		} else {
			memcpy(t + i, s + i, k);
			i += k;
		}
		w++;
	}
	t[n] = '\0';
	if (width != NULL)
		*width = w;
	return t;
}

/* Text: a copy of s fit for one table line (control characters become
 * spaces), and its display width in UTF-8 code points. */
static char *
text_clean(const char *s, size_t *width)
{
	return clean(s, 1, width);
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
			goto out;
	if ((r = buf_puts(out, s)) != 0)
		goto out;
	for (i = sw; !right && i < width; i++)
		if ((r = buf_puts(out, " ")) != 0)
			goto out;
	r = last ? 0 : buf_puts(out, "  ");
out:
	return r;
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
 * One aligned table. fields[row * ncol + col]; labels[row] with their
 * widths. If a row would pass TEXT_WIDTH the labels go on their own lines
 * and the numbers below them, indented.
 */
static int
text_table(struct buf *out, size_t nrows, size_t ncol, const char *const *head,
    const int *right, char (*fields)[FIELD], char **labels, const size_t *lw)
{
	size_t w[NCOL], i, c, total = 0, fw;
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
			goto out;
	if ((r = end_line(out)) != 0)
		goto out;
	for (i = 0; i < nrows; i++) {
		if (split) {
			if ((r = buf_puts(out, labels[i])) != 0 || (r = end_line(out)) != 0)
				goto out;
		}
		for (c = 0; c < ncol; c++) {
			const char *s = c == 0 ? (split ? "" : labels[i]) : fields[i * ncol + c];
			size_t sw = c == 0 ? (split ? 0 : lw[i]) : strlen(s);

			if ((r = pad(out, s, sw, w[c], right[c], c + 1 == ncol)) != 0)
				goto out;
		}
		if ((r = end_line(out)) != 0)
			goto out;
	}
	r = 0;
out:
	return r;
}

static int md_escape(struct buf *, const char *);

/* User text (a title, a metric name) on one line: cleaned for text,
 * escaped for markdown. */
static int
user_text(struct buf *out, const char *s, int markdown)
{
	char *t;
	size_t w;
	int r;

	if (markdown) {
		r = md_escape(out, s);
		goto out;
	}
	if ((t = text_clean(s, &w)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = buf_puts(out, t);
	free(t);
out:
	return r;
}

static int
metric_heading(struct buf *out, const struct report_metric *mt, int markdown)
{
	const char *unit = mt->unit != NULL && *mt->unit ? mt->unit : NULL;
	int r;

	if ((r = buf_puts(out, markdown ? "**" : "")) != 0 ||
	    (r = user_text(out, mt->name, markdown)) != 0)
		goto out;
	if (unit != NULL && ((r = buf_puts(out, " (")) != 0 ||
	    (r = user_text(out, unit, markdown)) != 0 || (r = buf_puts(out, ")")) != 0))
		goto out;
	r = buf_printf(out, " - %s is better%s\n", mt->higher_better ? "higher" : "lower",
	    markdown ? "**" : "");
out:
	return r;
}

static int
render_text(const struct report_input *in, struct rstat *st, struct buf *out,
    struct bf_diag *d)
{
	char (*f)[FIELD] = NULL, **labels = NULL;
	size_t *lw = NULL, m, c, i, nb, bc;
	int r, dec, anym;

	(void)d;
	f = calloc(in->ncells * NCOL + 1, sizeof(*f));
	labels = calloc(in->ncells + 1, sizeof(*labels));
	lw = calloc(in->ncells + 1, sizeof(*lw));
	if (f == NULL || labels == NULL || lw == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (in->title != NULL && ((r = user_text(out, in->title, 0)) != 0 ||
	    (r = buf_puts(out, "\n")) != 0))
		goto out;
	if (in->baseline_desc != NULL && ((r = buf_puts(out, "baseline: ")) != 0 ||
	    (r = user_text(out, in->baseline_desc, 0)) != 0 ||
	    (r = buf_puts(out, "\n")) != 0))
		goto out;
	for (m = 0; m < in->nmetrics; m++) {
		if ((r = compute(in, m, st)) != 0)
			goto out;
		dec = metric_decimals(in, st);
		if ((r = buf_puts(out, "\n")) != 0 ||
		    (r = metric_heading(out, &in->metrics[m], 0)) != 0)
			goto out;
		for (c = 0; c < in->ncells; c++) {
			free(labels[c]);
			if ((labels[c] = text_clean(cell_label(in, c), &lw[c])) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			row_fields(&in->metrics[m], &st[c], dec, &f[c * NCOL]);
		}
		if ((r = text_table(out, in->ncells, any_cmp(in, st) ? NCOL : C_PCT,
		    col_head, col_right, f, labels, lw)) != 0)
			goto out;
		/* Boots table: only the cells that have several boots. */
		for (c = 0, nb = 0; c < in->ncells; c++)
			nb += st[c].multi;
		if (nb == 0)
			continue;
		anym = in->boot_cost_ratio > 0;
		if ((r = buf_puts(out, "boots x iterations:\n")) != 0)
			goto out;
		for (c = 0, i = 0; c < in->ncells; c++) {
			char *tl;
			size_t tw;

			if (!st[c].multi)
				continue;
			boot_fields(&st[c], anym, &f[i * NCOL]);
			tl = labels[i];
			tw = lw[i];
			labels[i] = labels[c];
			lw[i] = lw[c];
			labels[c] = tl;
			lw[c] = tw;
			i++;
		}
		/* The rows were compacted into f with stride NCOL; repack to bc. */
		bc = anym ? NBCOL : NBCOL - 1;
		for (i = 0; i < nb; i++)
			memmove(&f[i * bc], &f[i * NCOL], bc * sizeof(*f));
		if ((r = text_table(out, nb, bc, bcol_head, bcol_right, f, labels,
		    lw)) != 0)
			goto out;
	}
	if ((r = buf_puts(out, "\n")) != 0)
		goto out;
	for (i = 0; i < sizeof(legend) / sizeof(legend[0]); i++)
		if ((r = buf_printf(out, "%s\n", legend[i])) != 0)
			goto out;
	r = 0;
out:
	for (c = 0; labels != NULL && c < in->ncells; c++)
		free(labels[c]);
	free(labels);
	free(lw);
	free(f);
	return r;
}

/* Markdown: backslash-escape what GitHub would treat as inline markup or
 * as a column break (nothing we print starts a line, so block markup like
 * '#', '-' or '+' cannot trigger); control characters become spaces. */
static int
md_escape(struct buf *out, const char *s)
{
	char *t, *p;
	int r = 0;

	if ((t = clean(s, 1, NULL)) == NULL)
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
md_row(struct buf *out, const char *label, char (*f)[FIELD], size_t ncol)
{
	size_t c;
	int r;

	if ((r = buf_puts(out, "| ")) != 0 || (r = md_escape(out, label)) != 0)
		goto out;
	for (c = 1; c < ncol; c++)
		if ((r = buf_puts(out, " | ")) != 0 || (r = md_escape(out, f[c])) != 0)
			goto out;
	r = buf_puts(out, " |\n");
out:
	return r;
}

static int
md_head(struct buf *out, const char *const *head, const int *right, size_t ncol)
{
	size_t c;
	int r;

	for (c = 0; c < ncol; c++)
		if ((r = buf_printf(out, "| %s ", head[c])) != 0)
			goto out;
	if ((r = buf_puts(out, "|\n")) != 0)
		goto out;
	for (c = 0; c < ncol; c++)
		if ((r = buf_puts(out, right[c] ? "| ---: " : "| --- ")) != 0)
			goto out;
	r = buf_puts(out, "|\n");
out:
	return r;
}

static int
render_markdown(const struct report_input *in, struct rstat *st, struct buf *out,
    struct bf_diag *d)
{
	char f[NCOL][FIELD];
	size_t m, c, i, nb, nc;
	int r, dec, anym = in->boot_cost_ratio > 0;

	(void)d;
	if (in->title != NULL) {
		if ((r = buf_puts(out, "### ")) != 0 || (r = md_escape(out, in->title)) != 0 ||
		    (r = buf_puts(out, "\n\n")) != 0)
			goto out;
	}
	if (in->baseline_desc != NULL) {
		if ((r = buf_puts(out, "baseline: ")) != 0 ||
		    (r = md_escape(out, in->baseline_desc)) != 0 ||
		    (r = buf_puts(out, "\n\n")) != 0)
			goto out;
	}
	for (m = 0; m < in->nmetrics; m++) {
		if ((r = compute(in, m, st)) != 0)
			goto out;
		dec = metric_decimals(in, st);
		nc = any_cmp(in, st) ? NCOL : C_PCT;
		if ((r = metric_heading(out, &in->metrics[m], 1)) != 0 ||
		    (r = buf_puts(out, "\n")) != 0 ||
		    (r = md_head(out, col_head, col_right, nc)) != 0)
			goto out;
		for (c = 0, nb = 0; c < in->ncells; c++) {
			row_fields(&in->metrics[m], &st[c], dec, f);
			if ((r = md_row(out, cell_label(in, c), f, nc)) != 0)
				goto out;
			nb += st[c].multi;
		}
		if ((r = buf_puts(out, "\n")) != 0)
			goto out;
		if (nb == 0)
			continue;
		if ((r = md_head(out, bcol_head, bcol_right, anym ? NBCOL : NBCOL - 1)) != 0)
			goto out;
		for (c = 0; c < in->ncells; c++) {
			if (!st[c].multi)
				continue;
			boot_fields(&st[c], anym, f);
			if ((r = md_row(out, cell_label(in, c), f, anym ? NBCOL : NBCOL - 1)) != 0)
				goto out;
		}
		if ((r = buf_puts(out, "\n")) != 0)
			goto out;
	}
	for (i = 0; i < sizeof(legend) / sizeof(legend[0]); i++) {
		/* Continuation lines ("  ...") join the previous bullet. */
		if (legend[i][0] == ' ')
			r = md_escape(out, legend[i] + 1);
		else if ((r = buf_printf(out, "%s- ", i ? "\n" : "")) == 0)
			r = md_escape(out, legend[i]);
		if (r != 0)
			goto out;
	}
	r = buf_puts(out, "\n");
out:
	return r;
}

/* RFC 4180: quote a field that holds a comma, quote, CR or LF; double quotes. */
static int
csv_field(struct buf *out, const char *s, int first)
{
	int r;

	if (!first && (r = buf_puts(out, ",")) != 0)
		goto out;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		r = buf_puts(out, s);
		goto out;
	}
	if ((r = buf_puts(out, "\"")) != 0)
		goto out;
	for (; *s; s++)
		if ((r = buf_append(out, s, 1)) != 0 ||
		    (*s == '"' && (r = buf_append(out, s, 1)) != 0))
			goto out;
	r = buf_puts(out, "\"");
out:
	return r;
}

static int
csv_num(struct buf *out, double x)
{
	return isfinite(x) ? buf_printf(out, ",%.15g", x) : buf_puts(out, ",");
}

static const char *const csv_head =
    "metric,unit,higher_better,cell,baseline_cell,n,mean,sd,cov_pct,ci_lo,ci_hi,"
    "pct_change,pct_ci_lo,pct_ci_hi,pct_ci_unbounded,welch_t,welch_df,welch_p,"
    "significant,boots,sd_between,sd_within,m_opt\r\n";

static int
render_csv(const struct report_input *in, struct rstat *st, struct buf *out,
    struct bf_diag *d)
{
	const struct report_metric *mt;
	const struct rstat *s;
	size_t m, c;
	int r;

	(void)d;
	if ((r = buf_puts(out, csv_head)) != 0)
		goto out;
	for (m = 0; m < in->nmetrics; m++) {
		mt = &in->metrics[m];
		if ((r = compute(in, m, st)) != 0)
			goto out;
		for (c = 0; c < in->ncells; c++) {
			s = &st[c];
			if ((r = csv_field(out, mt->name, 1)) != 0 ||
			    (r = csv_field(out, str_or_empty(mt->unit), 0)) != 0 ||
			    (r = buf_printf(out, ",%d", mt->higher_better != 0)) != 0 ||
			    (r = csv_field(out, cell_label(in, c), 0)) != 0 ||
			    (r = csv_field(out, s->has_cmp ?
			    cell_label(in, (size_t)in->baseline_of[c]) : "", 0)) != 0 ||
			    (r = buf_printf(out, ",%zu", s->all.n)) != 0 ||
			    (r = csv_num(out, s->eff.mean)) != 0 ||
			    (r = csv_num(out, s->eff.sd)) != 0 ||
			    (r = csv_num(out, s->eff.cov)) != 0 ||
			    (r = csv_num(out, s->eff.ci_lo)) != 0 ||
			    (r = csv_num(out, s->eff.ci_hi)) != 0)
				goto out;
			if (s->has_cmp) {
				if ((r = csv_num(out, s->cmp.pct.pct)) != 0 ||
				    (r = csv_num(out, s->cmp.pct.lo)) != 0 ||
				    (r = csv_num(out, s->cmp.pct.hi)) != 0 ||
				    (r = buf_printf(out, ",%d", s->cmp.pct.unbounded)) != 0 ||
				    (r = csv_num(out, s->cmp.welch.t)) != 0 ||
				    (r = csv_num(out, s->cmp.welch.nu)) != 0 ||
				    (r = csv_num(out, s->cmp.welch.p)) != 0 ||
				    (r = buf_printf(out, ",%d", s->cmp.significant)) != 0)
					goto out;
			} else if ((r = buf_puts(out, ",,,,,,,,")) != 0) {
				goto out;
			}
			if (s->multi) {
				if ((r = buf_printf(out, ",%zu", s->tl.nboots)) != 0 ||
				    (r = csv_num(out, sqrt(s->tl.sigma_boot2))) != 0 ||
				    (r = csv_num(out, sqrt(s->tl.sw2))) != 0)
					goto out;
				r = s->has_mstar ? buf_printf(out, ",%zu", s->mstar) :
				    buf_puts(out, ",");
			} else {
				r = buf_puts(out, s->all.n > 0 ? ",1,,," : ",,,,");
			}
			if (r != 0 || (r = buf_puts(out, "\r\n")) != 0)
				goto out;
		}
	}
	r = 0;
out:
	return r;
}

/* A JSON string from user text; bytes that are not valid UTF-8 become '?'
 * (jansson refuses them, and a report must not fail on a label). */
static json_t *
jstr(const char *s)
{
	json_t *j;
	char *t;

	if ((j = json_string(s)) != NULL)
		return j;
	if ((t = clean(s, 0, NULL)) == NULL)
		return NULL;
	j = json_string(t);
	free(t);
	return j;
}

static json_t *
jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* Steals v; fails on a NULL v (an allocation that failed). */
static int
jset(json_t *o, const char *k, json_t *v)
{
	return v != NULL && json_object_set_new(o, k, v) == 0 ? 0 : BF_ERR_ALLOC;
}

static int
json_row(const struct report_input *in, size_t c, const struct rstat *s, json_t *row)
{
	json_t *cmp = NULL, *boots = NULL;
	int r;

	if ((r = jset(row, "cell", jstr(cell_label(in, c)))) != 0 ||
	    (r = jset(row, "baseline_cell", s->has_cmp ?
	    jstr(cell_label(in, (size_t)in->baseline_of[c])) : json_null())) != 0 ||
	    (r = jset(row, "is_baseline", json_boolean(s->is_base))) != 0 ||
	    (r = jset(row, "n", json_integer((json_int_t)s->all.n))) != 0 ||
	    (r = jset(row, "mean", jnum(s->eff.mean))) != 0 ||
	    (r = jset(row, "sd", jnum(s->eff.sd))) != 0 ||
	    (r = jset(row, "cov_pct", jnum(s->eff.cov))) != 0 ||
	    (r = jset(row, "ci_lo", jnum(s->eff.ci_lo))) != 0 ||
	    (r = jset(row, "ci_hi", jnum(s->eff.ci_hi))) != 0 ||
	    (r = jset(row, "min", jnum(s->all.min))) != 0 ||
	    (r = jset(row, "max", jnum(s->all.max))) != 0 ||
	    (r = jset(row, "median", jnum(s->all.median))) != 0)
		goto out;
	if (s->has_cmp) {
		if ((cmp = json_object()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = jset(cmp, "pct_change", jnum(s->cmp.pct.pct))) != 0 ||
		    (r = jset(cmp, "pct_ci_lo", jnum(s->cmp.pct.lo))) != 0 ||
		    (r = jset(cmp, "pct_ci_hi", jnum(s->cmp.pct.hi))) != 0 ||
		    (r = jset(cmp, "pct_ci_unbounded", json_boolean(s->cmp.pct.unbounded))) != 0 ||
		    (r = jset(cmp, "welch_t", jnum(s->cmp.welch.t))) != 0 ||
		    (r = jset(cmp, "welch_df", jnum(s->cmp.welch.nu))) != 0 ||
		    (r = jset(cmp, "welch_p", jnum(s->cmp.welch.p))) != 0 ||
		    (r = jset(cmp, "significant", json_boolean(s->cmp.significant))) != 0)
			goto out;
	}
	if (s->multi) {
		if ((boots = json_object()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = jset(boots, "boots", json_integer((json_int_t)s->tl.nboots))) != 0 ||
		    (r = jset(boots, "iterations_min", json_integer((json_int_t)s->tl.m_min))) != 0 ||
		    (r = jset(boots, "iterations_max", json_integer((json_int_t)s->tl.m_max))) != 0 ||
		    (r = jset(boots, "sd_between", jnum(sqrt(s->tl.sigma_boot2)))) != 0 ||
		    (r = jset(boots, "sd_within", jnum(sqrt(s->tl.sw2)))) != 0 ||
		    (r = jset(boots, "m_opt", s->has_mstar ?
		    json_integer((json_int_t)s->mstar) : json_null())) != 0)
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

static int
render_json(const struct report_input *in, struct rstat *st, struct buf *out,
    struct bf_diag *d)
{
	json_t *root = NULL, *metrics, *mo, *rows, *row, *leg;
	const struct report_metric *mt;
	char *text = NULL;
	size_t m, c, i;
	int r;

	(void)d;
	if ((root = json_object()) == NULL || (metrics = json_array()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = jset(root, "title", in->title ? jstr(in->title) : json_null())) != 0 ||
	    (r = jset(root, "baseline", in->baseline_desc ?
	    jstr(in->baseline_desc) : json_null())) != 0 ||
	    (r = jset(root, "metrics", metrics)) != 0)
		goto out;
	for (m = 0; m < in->nmetrics; m++) {
		mt = &in->metrics[m];
		if ((r = compute(in, m, st)) != 0)
			goto out;
		if ((mo = json_object()) == NULL || json_array_append_new(metrics, mo) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = jset(mo, "name", jstr(mt->name))) != 0 ||
		    (r = jset(mo, "unit", mt->unit ? jstr(mt->unit) : json_null())) != 0 ||
		    (r = jset(mo, "higher_better", json_boolean(mt->higher_better))) != 0 ||
		    (r = jset(mo, "rows", rows = json_array())) != 0)
			goto out;
		for (c = 0; c < in->ncells; c++) {
			if ((row = json_object()) == NULL || json_array_append_new(rows, row) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			if ((r = json_row(in, c, &st[c], row)) != 0)
				goto out;
		}
	}
	if ((r = jset(root, "legend", leg = json_array())) != 0)
		goto out;
	for (i = 0; i < sizeof(legend) / sizeof(legend[0]); i++)
		if (json_array_append_new(leg, json_string(legend[i])) != 0) {
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

static const struct fmt_entry formats[] = {
	{ "text", render_text },
	{ "markdown", render_markdown },
	{ "csv", render_csv },
	{ "json", render_json },
};

int
report_render(const struct report_input *in, const char *format, struct buf *out,
    struct bf_diag *d)
{
	const struct fmt_entry *fe = NULL;
	struct rstat *st = NULL;
	size_t i;
	int r;

	if (in == NULL || out == NULL) {
		bf_diag_set(d, "report", "no input or no output buffer");
		r = BF_ERR_INVALID;
		goto out;
	}
	for (i = 0; format != NULL && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(format, formats[i].name) == 0)
			fe = &formats[i];
	if (fe == NULL) {
		bf_diag_set(d, "format", "\"%s\" is not one of text, markdown, csv, json",
		    format ? format : "(null)");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = validate(in, d)) != 0)
		goto out;
	if ((st = calloc(in->ncells + 1, sizeof(*st))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = fe->render(in, st, out, d)) != 0) {
		if (r == BF_ERR_TOOBIG)
			bf_diag_set(d, "report", "the report is over the output cap");
		goto out;
	}
	r = 0;
out:
	free(st);
	return r;
}
