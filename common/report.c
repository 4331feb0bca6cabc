/*
 * report.c: the report model. report_compute() validates the input and
 * computes, once, everything the four formats show: per metric and cell the
 * summaries, the two-level analysis, the % change with its CI, Welch and
 * Mann-Whitney, the significance mark, the notes on what is undefined, and
 * the legend with its warnings on the samples. The numbers come from
 * stats.c; the renderers (report-text.c, report-md.c, report-csv.c,
 * report-json.c) only read the model.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "caps.h"
#include "report.h"
#include "report-int.h"
#include "stats.h"

/* One format: its name and its renderer. */
struct report_format {
	const char *name;
	int (*render)(const struct report_model *, struct buf *);
};

static const struct report_format report_formats[] = {
	{ .name = "text", .render = report_render_text },
	{ .name = "markdown", .render = report_render_markdown },
	{ .name = "csv", .render = report_render_csv },
	{ .name = "json", .render = report_render_json },
};
#define REPORT_NFORMATS	(sizeof(report_formats) / sizeof(report_formats[0]))

static const char *
cell_label(const struct report_input *in, size_t c)
{
	return in->cells != NULL && in->cells[c].label != NULL ? in->cells[c].label : "";
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
	int b;

	if (in->nmetrics > BF_MAX_METRICS || in->ncells > BF_MAX_CELLS) {
		bf_diag_set(d, "report", "%zu metrics x %zu cells is over the caps %d x %d",
		    in->nmetrics, in->ncells, BF_MAX_METRICS, BF_MAX_CELLS);
		return BF_ERR_TOOBIG;
	}
	if ((in->nmetrics > 0 && in->metrics == NULL) ||
	    (in->ncells > 0 && in->cells == NULL) ||
	    (in->nmetrics > 0 && in->ncells > 0 && in->series == NULL)) {
		bf_diag_set(d, "report", "metrics, cells and series are required");
		return BF_ERR_INVALID;
	}
	for (i = 0; in->context != NULL && in->context[i] != NULL; i++) {
		if (i >= REPORT_MAX_CONTEXT || strlen(in->context[i]) > BF_MAX_STR) {
			bf_diag_set(d, "context", "line %zu: at most %d lines of %d bytes", i,
			    REPORT_MAX_CONTEXT, BF_MAX_STR);
			return BF_ERR_TOOBIG;
		}
	}
	for (i = 0; in->warnings != NULL && in->warnings[i] != NULL; i++) {
		if (i >= REPORT_MAX_WARNINGS || strlen(in->warnings[i]) > BF_MAX_STR) {
			bf_diag_set(d, "warnings", "line %zu: at most %d lines of %d bytes", i,
			    REPORT_MAX_WARNINGS, BF_MAX_STR);
			return BF_ERR_TOOBIG;
		}
	}
	for (m = 0; m < in->nmetrics; m++) {
		if (in->metrics[m].name == NULL) {
			bf_diag_set(d, "metrics", "metric %zu has no name", m);
			return BF_ERR_INVALID;
		}
	}
	for (c = 0; c < in->ncells; c++) {
		if (in->baseline_of != NULL) {
			b = in->baseline_of[c];
			if (b < -1 || b == (int)c || (b >= 0 && (size_t)b >= in->ncells)) {
				bf_diag_set(d, "baseline_of", "cell %zu (\"%s\"): baseline %d is "
				    "not -1 or another cell in 0..%zu", c, cell_label(in, c), b,
				    in->ncells - 1);
				return BF_ERR_INVALID;
			}
		}
		for (m = 0; m < in->nmetrics; m++) {
			s = series_of(in, c, m);
			if (s->n > STATS_MAX_SAMPLES) {
				bf_diag_set(d, "series", "cell \"%s\", metric %s: %zu samples, "
				    "at most %zu", cell_label(in, c), in->metrics[m].name, s->n,
				    STATS_MAX_SAMPLES);
				return BF_ERR_TOOBIG;
			}
			if (s->n > 0 && s->v == NULL) {
				bf_diag_set(d, "series", "cell \"%s\", metric %s: no values",
				    cell_label(in, c), in->metrics[m].name);
				return BF_ERR_INVALID;
			}
			for (i = 0; i < s->n; i++) {
				if (!isfinite(s->v[i])) {
					bf_diag_set(d, "series", "cell \"%s\", metric %s, sample %zu: "
					    "%g is not a finite number", cell_label(in, c),
					    in->metrics[m].name, i, s->v[i]);
					return BF_ERR_INVALID;
				}
			}
		}
	}
	return 0;
}

/* ---- statistics ---- */

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

/* The samples behind a cell's eff: its values, or its boot means (then
 * *tofree owns them). */
static int
eff_samples(const struct report_series *s, int multi, const double **v, size_t *n,
    double **tofree)
{
	int r;

	*tofree = NULL;
	*v = s->v;
	*n = s->n;
	if (!multi)
		return 0;
	if ((*tofree = malloc(s->n * sizeof(**tofree))) == NULL)
		return BF_ERR_ALLOC;
	if ((r = stats_boot_means(s->v, s->boot, s->n, *tofree, n)) != 0)
		return r;
	*v = *tofree;
	return 0;
}

/* Resamples for n samples: REPORT_BOOT_RESAMPLES, fewer past 2500 samples
 * (at least 200) so that a report stays quick (a resample costs O(n)). */
static size_t
boot_resamples(size_t n)
{
	size_t k = n > 0 ? (size_t)5e6 / n : REPORT_BOOT_RESAMPLES;

	return k > REPORT_BOOT_RESAMPLES ? REPORT_BOOT_RESAMPLES : k < 200 ? 200 : k;
}

/* The bootstrap of medians: with c == b, the CI of cell c's median
 * (stat_lo, stat_hi); else the CI of the % change of c against b. */
static int
median_boot(const struct report_input *in, size_t m, size_t b, size_t c,
    struct report_row *st)
{
	struct stats_boot bs;
	const double *va, *vb;
	double *fa = NULL, *fb = NULL;
	size_t na, nb;
	int r;

	if ((r = eff_samples(series_of(in, b, m), st[b].multi, &va, &na, &fa)) != 0 ||
	    (r = eff_samples(series_of(in, c, m), st[c].multi, &vb, &nb, &fb)) != 0)
		goto out;
	if (na == 0 || nb == 0) {
		r = 0;
		goto out;
	}
	if ((r = stats_boot_median(va, na, b == c ? NULL : vb, b == c ? 0 : nb,
	    boot_resamples(na > nb ? na : nb), REPORT_BOOT_SEED, 0.95, &bs)) != 0)
		goto out;
	if (b == c) {
		st[c].stat_lo = bs.lo;
		st[c].stat_hi = bs.hi;
	} else {
		st[c].cmp.pct.lo = bs.pct_lo;
		st[c].cmp.pct.hi = bs.pct_hi;
	}
out:
	free(fa);
	free(fb);
	return r;
}

/* Mann-Whitney of cell c against its baseline b, on the samples Welch uses. */
static int
compute_mw(const struct report_input *in, size_t m, size_t c, size_t b,
    struct report_row *st)
{
	const double *va, *vb;
	double *fa = NULL, *fb = NULL;
	size_t na, nb;
	int r;

	if ((r = eff_samples(series_of(in, b, m), st[b].multi, &va, &na, &fa)) != 0 ||
	    (r = eff_samples(series_of(in, c, m), st[c].multi, &vb, &nb, &fb)) != 0)
		goto out;
	if (na > 0 && nb > 0) {
		if ((r = stats_mannwhitney(vb, nb, va, na, STATS_MW_AUTO, &st[c].mw)) != 0)
			goto out;
		st[c].has_mw = 1;
	}
	r = 0;
out:
	free(fa);
	free(fb);
	return r;
}

static const char *
sig_word(const struct report_metric *mt, const struct report_row *s)
{
	if (!s->has_cmp)
		return "";
	if (s->low_n)
		return W_LOWN;
	if (s->fewer_boots)
		return W_FEWERBOOTS;
	if (!s->cmp.significant)
		return "";
	if (mt->no_direction)
		return "*";
	/* From the means and the direction, never from the sign of a ratio:
	 * -49.84 -> -52.35, lower is better, is better. */
	if ((s->stat_value > s->beff_stat) == (mt->higher_better != 0))
		return "* better";
	return "* worse";
}

/* Boots of a row's samples: 0 without samples. */
static size_t
row_boots(const struct report_row *s)
{
	return s->multi ? s->tl.nboots : s->all.n > 0;
}

/* What a row summarises with: its stat, its CI, clipped at 0 for a
 * positive metric. */
static void
row_stat(const struct report_metric *mt, const struct report_input *in,
    struct report_row *s)
{
	s->stat_value = in->stat == REPORT_STAT_MIN ? s->eff.min :
	    in->stat == REPORT_STAT_MEDIAN ? s->eff.median : s->eff.mean;
	s->stat_lo = s->stat_hi = NAN;
	if (in->stat == REPORT_STAT_MEAN) {
		s->stat_lo = s->eff.ci_lo;
		s->stat_hi = s->eff.ci_hi;
	}
	s->nonpos = mt->positive && s->all.n > 0 && !(s->all.min > 0);
	if (mt->positive && !s->nonpos && s->stat_lo < 0) {
		s->stat_lo = 0;
		s->ci_clipped = 1;
	}
	if (s->multi) {
		s->cov_between = s->eff.cov;
		s->cov_within = s->eff.mean != 0 ? 100 * sqrt(s->tl.sw2) / fabs(s->eff.mean) : NAN;
		s->boots_equal = s->eff.n >= 2 && s->eff.sd == 0 && s->tl.sw2 > 0;
	} else {
		s->cov_between = s->cov_within = NAN;
	}
}

/* The comparison of row c against its baseline row b, after stats_compare:
 * the log-ratio CI for a positive metric, (B-A)/|A|, the flags that keep a
 * mark off. */
static int
row_compare(const struct report_metric *mt, const struct report_input *in,
    const struct report_row *b, struct report_row *s)
{
	struct stats_pct lp;
	size_t min_n = in->min_n > 0 ? in->min_n : REPORT_MIN_N;
	double t;
	int r;

	s->beff_stat = b->stat_value;
	s->low_n = s->eff.n < min_n || b->eff.n < min_n;
	s->fewer_boots = row_boots(s) < row_boots(b);
	s->nonpos = s->nonpos || b->nonpos;
	s->p = s->cmp.welch.p;
	if (in->stat != REPORT_STAT_MEAN) {
		/* the median's CI is the bootstrap's (compute_metric), min has none */
		s->p = in->stat == REPORT_STAT_MEDIAN && s->has_mw ? s->mw.p : NAN;
		s->cmp.pct.pct = b->stat_value != 0 && s->eff.n > 0 && b->eff.n > 0 ?
		    100 * ((s->stat_value - b->stat_value) / fabs(b->stat_value)) : NAN;
		s->cmp.pct.unbounded = b->eff.n > 0 && b->stat_value == 0;
		if (in->stat == REPORT_STAT_MIN)
			s->cmp.pct.lo = s->cmp.pct.hi = NAN;
		s->cmp.significant = s->p < 0.05 && !s->cmp.pct.unbounded &&
		    (s->cmp.pct.lo > 0 || s->cmp.pct.hi < 0) && !s->low_n && !s->fewer_boots;
		return 0;
	}
	if (mt->positive && !s->nonpos && s->eff.n > 0 && b->eff.n > 0) {
		if ((r = stats_pct_log(&b->eff, &s->eff, 0.95, &lp)) != 0)
			return r;
		s->cmp.pct = lp;
		s->log_ratio = 1;
	}
	if (b->eff.mean < 0) {
		s->cmp.pct.pct = -s->cmp.pct.pct;
		t = s->cmp.pct.lo;
		s->cmp.pct.lo = -s->cmp.pct.hi;
		s->cmp.pct.hi = -t;
	}
	s->cmp.significant = s->p < 0.05 && !s->cmp.pct.unbounded &&
	    (s->cmp.pct.lo > 0 || s->cmp.pct.hi < 0) && !s->low_n && !s->fewer_boots;
	return 0;
}

/* Why a row's numbers are missing, for the notes of JSON and CSV (NULL:
 * nothing). */
static const char *
row_note(const struct report_row *s)
{
	if (s->all.n == 0)
		return W_NOSAMPLES;
	if (s->eff.n < 2)
		return W_NOCI;
	if (s->eff.mean == 0)
		return "mean is 0: no CoV";
	if (s->eff.sd == 0)
		return "zero variance: the CI has zero width";
	return NULL;
}

static const char *
cmp_note(const struct report_row *s)
{
	size_t na = s->beff.n, nb = s->eff.n;

	if (na == 0 || nb == 0)
		return na == 0 ? "the baseline has no samples" : W_NOSAMPLES;
	if (s->beff.mean == 0)
		return "baseline mean is 0: % change undefined, CI unbounded";
	if (s->cmp.pct.unbounded)
		return "baseline mean not distinguishable from 0 (Fieller g >= 1): "
		    "CI unbounded";
	if (na < 2 && nb < 2)
		return "n=1 in both cells, no CI, no test";
	if (na < 2)
		return "baseline n=1, no CI, no test";
	if (nb < 2)
		return "n=1, no CI, no test";
	if (isnan(s->cmp.welch.p))
		return "zero variance in both cells: no Welch test";
	return NULL;
}

/* Fill mm->rows[0..ncells) for metric m, and what its tables share. */
static int
compute_metric(const struct report_input *in, size_t m, struct report_model_metric *mm)
{
	struct report_row *st = mm->rows;
	const struct report_series *s;
	size_t c;
	int r, b, k;

	mm->metric = &in->metrics[m];
	for (c = 0; c < in->ncells; c++) {
		s = series_of(in, c, m);
		if ((r = stats_summarize(s->v, s->n, &st[c].all)) != 0)
			return r;
		st[c].eff = st[c].all;
		if (distinct_boots(s)) {
			if ((r = stats_twolevel(s->v, s->boot, s->n, &st[c].tl)) != 0)
				return r;
			st[c].multi = 1;
			mm->nmulti++;
			st[c].eff = st[c].tl.bm;
			if (in->boot_cost_ratio > 0 && isfinite(in->boot_cost_ratio) &&
			    isfinite(st[c].tl.sw2) && isfinite(st[c].tl.sigma_boot2) &&
			    stats_optimal_iters(in->boot_cost_ratio, st[c].tl.sw2,
			    st[c].tl.sigma_boot2, &st[c].mstar) == 0)
				st[c].has_mstar = 1;
		}
	}
	for (c = 0; c < in->ncells; c++) {
		row_stat(mm->metric, in, &st[c]);
		st[c].shape_bxi = mm->nmulti > 0;
		if (in->stat == REPORT_STAT_MEDIAN && st[c].eff.n >= 2 &&
		    (r = median_boot(in, m, c, c, st)) != 0)
			return r;
	}
	for (c = 0; c < in->ncells && in->baseline_of != NULL; c++) {
		if ((b = in->baseline_of[c]) < 0)
			continue;
		st[b].is_base = 1;
		st[c].has_cmp = 1;
		mm->any_cmp = 1;
		st[c].beff = st[b].eff;
		if ((r = stats_compare(&st[b].eff, &st[c].eff, &st[c].cmp)) != 0 ||
		    (r = compute_mw(in, m, c, (size_t)b, st)) != 0 ||
		    (in->stat == REPORT_STAT_MEDIAN &&
		    (r = median_boot(in, m, (size_t)b, c, st)) != 0) ||
		    (r = row_compare(mm->metric, in, &st[b], &st[c])) != 0)
			return r;
	}
	/* One setting per metric keeps a column's decimals aligned. */
	mm->decimals = REPORT_DEC_NONE;
	for (c = 0; c < in->ncells; c++) {
		st[c].note = row_note(&st[c]);
		st[c].cmp_note = st[c].has_cmp ? cmp_note(&st[c]) : NULL;
		if ((k = report_row_decimals(&st[c].eff)) > mm->decimals)
			mm->decimals = k;
	}
	return 0;
}

/* Holm across every comparison that could be marked (a direction, n and
 * boots enough, a p), then every row's mark. */
static int
adjust_and_mark(struct report_model *m)
{
	struct report_row *s, **rows = NULL;
	double *p = NULL, *adj = NULL;
	size_t i, c, n = 0, cap = m->ncells * m->nmetrics + 1;
	int r = 0;

	if (m->in->adjust == REPORT_ADJUST_HOLM) {
		if ((rows = calloc(cap, sizeof(*rows))) == NULL ||
		    (p = calloc(cap, sizeof(*p))) == NULL ||
		    (adj = calloc(cap, sizeof(*adj))) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		for (i = 0; i < m->nmetrics; i++) {
			for (c = 0; c < m->ncells; c++) {
				s = &m->metrics[i].rows[c];
				if (!s->has_cmp || s->low_n || s->fewer_boots || isnan(s->p) ||
				    m->metrics[i].metric->no_direction)
					continue;
				rows[n] = s;
				p[n++] = s->p;
			}
		}
		if ((r = stats_holm(p, n, adj)) != 0)
			goto out;
		for (i = 0; i < n; i++) {
			rows[i]->has_padj = 1;
			rows[i]->p_adj = adj[i];
			rows[i]->cmp.significant = rows[i]->cmp.significant && adj[i] < 0.05;
		}
		m->nadjusted = n;
	}
	for (i = 0; i < m->nmetrics; i++)
		for (c = 0; c < m->ncells; c++)
			m->metrics[i].rows[c].mark = sig_word(m->metrics[i].metric,
			    &m->metrics[i].rows[c]);
out:
	free(rows);
	free(p);
	free(adj);
	return r;
}

/* Whether every cell has the same number of samples of every metric. */
static int
uniform_n(const struct report_input *in)
{
	size_t c, m;

	for (c = 0; c < in->ncells; c++)
		for (m = 0; m < in->nmetrics; m++)
			if (series_of(in, c, m)->n != in->series[0].n)
				return 0;
	return in->ncells > 0 && in->nmetrics > 0;
}

/* ---- the legend ---- */

/* The legend's fixed items, after "% Change" and before the sample counts. */
static const char *const legend_fixed[] = {
	"CoV%: 100*sd/mean. 95% CI: of the mean, Student t with n-1 dof.",
	"\"" W_NOCI "\": one sample has no spread: no CI and no test.",
	"95% CI of change: Fieller's method, with t at the Welch dof.",
	"\"" W_UNBOUNDED "\": the baseline mean is 0 or too close to 0 to bound "
	    "(g >= 1).",
	"\"" W_UNDEF "\": a baseline mean of 0 has no % change.",
	"Welch p: two-sided Welch t-test, Welch-Satterthwaite dof (not floored).",
	"\"" W_NOVAR "\": both cells have zero variance: no test.",
	"Marks: \"* better\" or \"* worse\" (B's mean against A's, by Lower/Higher "
	    "is better) only when Welch p < 0.05 and the 95% CI of the % change "
	    "excludes 0. No mark: not significant, or not testable.",
	"Digits: the mean and its CI keep 2 significant digits of the CI's "
	    "half-width, the % change those of its CI's; p shows which side of 0.05 "
	    "it is on.",
	"\"-\": not defined for the cell.",
};

/* What the boots x iterations columns say. */
#define LEGEND_TWOLEVEL "boots x iter: boots x iterations per boot; the CI over the " \
	"boot means has boots - 1 dof (CI dof); CoV%% between: of the boot means, " \
	"CoV%% within: pooled within-boot sd over the mean."

/* After the fixed items when some metric has no direction. */
static const char *const legend_counter =
    "Counters (\"no better or worse\"): what the kernel did during the iterations, "
    "evidence beside the results; \"*\" alone marks a significant change (the same test), "
    "which is neither better nor worse.";

static int
legend_add(struct report_model *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int
legend_add(struct report_model *m, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	if (m->nlegend >= REPORT_MAX_LEGEND)
		return BF_ERR_TOOBIG;
	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return BF_ERR_ALLOC;
	m->legend[m->nlegend++] = s;
	return 0;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Boots of a series and the fewest and most iterations in one boot. */
static int
series_shape(const struct report_series *s, size_t *boots, size_t *imin, size_t *imax)
{
	int *ids;
	size_t i, j;

	*boots = 1;
	*imin = *imax = s->n;
	if (s->boot == NULL || s->n < 2)
		return 0;
	if ((ids = malloc(s->n * sizeof(*ids))) == NULL)
		return BF_ERR_ALLOC;
	memcpy(ids, s->boot, s->n * sizeof(*ids));
	qsort(ids, s->n, sizeof(*ids), cmp_int);
	*boots = 0;
	*imin = SIZE_MAX;
	*imax = 0;
	for (i = 0; i < s->n; i = j) {
		for (j = i; j < s->n && ids[j] == ids[i]; j++)
			;
		(*boots)++;
		if (j - i < *imin)
			*imin = j - i;
		if (j - i > *imax)
			*imax = j - i;
	}
	free(ids);
	return 0;
}

/* "3" or "2-5" */
static void
fmt_range(char *f, size_t size, size_t lo, size_t hi)
{
	if (lo == hi)
		snprintf(f, size, "%zu", lo);
	else
		snprintf(f, size, "%zu-%zu", lo, hi);
}

/* The sample counts over every cell and metric that has samples, and the
 * warning that goes with their shape. */
static int
legend_samples(const struct report_input *in, struct report_model *lg)
{
	const struct report_series *s;
	size_t c, m, b, i0, i1, bmin = SIZE_MAX, bmax = 0, imin = SIZE_MAX, imax = 0;
	size_t nmin = SIZE_MAX, nmax = 0;
	char rb[48], ri[48], rn[48];
	int r;

	for (c = 0; c < in->ncells; c++) {
		for (m = 0; m < in->nmetrics; m++) {
			s = series_of(in, c, m);
			if (s->n == 0)
				continue;
			if ((r = series_shape(s, &b, &i0, &i1)) != 0)
				return r;
			bmin = b < bmin ? b : bmin;
			bmax = b > bmax ? b : bmax;
			imin = i0 < imin ? i0 : imin;
			imax = i1 > imax ? i1 : imax;
			nmin = s->n < nmin ? s->n : nmin;
			nmax = s->n > nmax ? s->n : nmax;
		}
	}
	if (bmax == 0)
		return legend_add(lg, "Samples: none.");
	fmt_range(rb, sizeof(rb), bmin, bmax);
	fmt_range(ri, sizeof(ri), imin, imax);
	fmt_range(rn, sizeof(rn), nmin, nmax);
	if (nmin == nmax && bmin == bmax && imin == imax)
		r = legend_add(lg, "Samples: n per cell = boots x iterations = %s x %s = %s.",
		    rb, ri, rn);
	else
		r = legend_add(lg, "Samples: n per cell = boots x iterations = %s x %s "
		    "(n = %s, by cell).", rb, ri, rn);
	if (r != 0)
		return r;
	if (bmax == 1)
		return legend_add(lg, "One boot per cell: its iterations are the samples, so "
		    "the CI leaves out boot-to-boot variation (page layout); run several boots.");
	if (bmin > 1)
		return legend_add(lg, "Several boots per cell: mean, CI and tests use the boot "
		    "means, the independent samples (Kalibera & Jones); m* = optimal "
		    "iterations per boot. " LEGEND_TWOLEVEL);
	return legend_add(lg, "Cells with several boots use their boot means for mean, CI "
	    "and tests (Kalibera & Jones); cells with one boot use the iterations, "
	    "which leaves out boot-to-boot variation. " LEGEND_TWOLEVEL);
}

/* What kept marks off, and how positive metrics were treated, as far as
 * the report has them. */
static int
legend_marks(const struct report_input *in, struct report_model *m)
{
	const struct report_row *s;
	size_t i, c, min_n = in->min_n > 0 ? in->min_n : REPORT_MIN_N;
	int fewer = 0, clip = 0, lr = 0, nonpos = 0, beq = 0, r;

	for (i = 0; i < m->nmetrics; i++) {
		for (c = 0; c < m->ncells; c++) {
			s = &m->metrics[i].rows[c];
			fewer |= s->fewer_boots;
			clip |= s->ci_clipped;
			lr |= s->log_ratio;
			nonpos |= s->nonpos;
			beq |= s->boots_equal;
		}
	}
	if ((r = legend_add(m, "\"" W_LOWN "\": fewer than %zu independent samples (boot "
	    "means when a cell has several boots) on a side: no mark (--min-n).", min_n)) != 0)
		return r;
	if (fewer && (r = legend_add(m, "\"" W_FEWERBOOTS "\": the cell has fewer boots "
	    "than its baseline: its CI leaves out boot-to-boot variation the baseline's "
	    "includes, so it is not marked.")) != 0)
		return r;
	if (clip && (r = legend_add(m, "\"[lo, hi]c\": a positive metric's t CI of the "
	    "mean went below 0 and is clipped at 0.")) != 0)
		return r;
	if (lr && (r = legend_add(m, "\"[lo, hi]l\": a positive metric's CI of change "
	    "from the ratio of means on the log scale (delta method, Welch dof), never "
	    "below -100%%; others use Fieller.")) != 0)
		return r;
	if (nonpos && (r = legend_add(m, "A positive metric with a sample <= 0 in a cell "
	    "or its baseline uses the t CI and Fieller there.")) != 0)
		return r;
	if (beq && (r = legend_add(m, "\"boot means equal\": every boot has the same "
	    "mean, so the CI over boot means has zero width and there is no test; the "
	    "iterations within boots vary by the CoV shown.")) != 0)
		return r;
	if (in->stat == REPORT_STAT_MEDIAN && (r = legend_add(m, "--stat median: the "
	    "median of each cell (of its boot means with several boots); its 95%% CI and "
	    "that of the %% change of medians, (B-A)/|A|, are percentile bootstraps of %d "
	    "resamples (fewer past 2500 samples), splitmix64 seed %u, the same for "
	    "every run of the report; MW p: two-sided Mann-Whitney; a mark needs MW p < "
	    "0.05 and the CI of change excluding 0.", REPORT_BOOT_RESAMPLES,
	    REPORT_BOOT_SEED)) != 0)
		return r;
	if (in->stat == REPORT_STAT_MIN && (r = legend_add(m, "--stat min: the smallest "
	    "sample of each cell (boot mean with several boots) and its %% change; a "
	    "minimum has no interval or test the report can state, so none is shown "
	    "and nothing is marked.")) != 0)
		return r;
	if (in->adjust == REPORT_ADJUST_HOLM && (r = legend_add(m, "p (Holm): "
	    "the p and, in parentheses, its Holm-Bonferroni adjustment over the %zu "
	    "comparisons of the report that could be marked (counters left out); marks "
	    "use the adjusted p; the CIs are not adjusted.", m->nadjusted)) != 0)
		return r;
	return 0;
}

static int
legend_build(const struct report_input *in, struct report_model *m)
{
	size_t i;
	int r;

	if (in->baseline_desc != NULL)
		r = legend_add(m, "%% Change: (B-A)/|A|*100, B a cell, A its baseline cell "
		    "(%s).", in->baseline_desc);
	else
		r = legend_add(m, "%% Change: (B-A)/|A|*100, B a cell, A its baseline cell.");
	if (r != 0)
		return r;
	for (i = 0; i < sizeof(legend_fixed) / sizeof(legend_fixed[0]); i++)
		if ((r = legend_add(m, "%s", legend_fixed[i])) != 0)
			return r;
	for (i = 0; i < in->nmetrics; i++)
		if (in->metrics[i].no_direction)
			break;
	if (i < in->nmetrics && (r = legend_add(m, "%s", legend_counter)) != 0)
		return r;
	if ((r = legend_marks(in, m)) != 0 || (r = legend_samples(in, m)) != 0)
		return r;
	for (i = 0; in->context != NULL && in->context[i] != NULL; i++)
		if ((r = legend_add(m, "%s", in->context[i])) != 0)
			return r;
	for (i = 0; in->warnings != NULL && in->warnings[i] != NULL; i++)
		if ((r = legend_add(m, "Warning: %s", in->warnings[i])) != 0)
			return r;
	return 0;
}

/* ---- the model ---- */

void
report_model_free(struct report_model *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nlegend; i++)
		free(m->legend[i]);
	if (m->metrics != NULL)
		free(m->metrics[0].rows);	/* one block for every metric's rows */
	free(m->metrics);
	free(m->cells);
	free(m);
}

int
report_compute(const struct report_input *in, struct report_model **out,
    struct bf_diag *d)
{
	struct report_model *m = NULL;
	struct report_row *rows;
	size_t c, k;
	int r;

	if (out != NULL)
		*out = NULL;
	if (in == NULL || out == NULL) {
		bf_diag_set(d, "report", "no input or no model to fill");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = validate(in, d)) != 0)
		goto out;
	/* +1: calloc(0) may return NULL; the caps bound the products. */
	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->cells = calloc(in->ncells + 1, sizeof(*m->cells))) == NULL ||
	    (m->metrics = calloc(in->nmetrics + 1, sizeof(*m->metrics))) == NULL ||
	    (rows = calloc(in->nmetrics * in->ncells + 1, sizeof(*rows))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	m->in = in;
	m->ncells = in->ncells;
	m->nmetrics = in->nmetrics;
	m->metrics[0].rows = rows;
	for (c = 0; c < in->ncells; c++) {
		m->cells[c].label = cell_label(in, c);
		m->cells[c].baseline = in->baseline_of != NULL ? in->baseline_of[c] : -1;
	}
	for (k = 0; k < in->nmetrics; k++) {
		m->metrics[k].rows = rows + k * in->ncells;
		if ((r = compute_metric(in, k, &m->metrics[k])) != 0) {
			/* finite samples whose spread overflows, say */
			if (r != BF_ERR_ALLOC)
				bf_diag_set(d, "series", "metric %s: the statistics failed: %s",
				    in->metrics[k].name, bf_err_str(r));
			goto out;
		}
	}
	if ((r = adjust_and_mark(m)) != 0)
		goto out;
	m->uniform_n = uniform_n(in);
	if ((r = legend_build(in, m)) != 0)
		goto out;
	*out = m;
	m = NULL;
	r = 0;
out:
	report_model_free(m);
	return r;
}

int
report_model_render(const struct report_model *m, const char *format, struct buf *out,
    struct bf_diag *d)
{
	const struct report_format *fe = NULL;
	size_t i;
	int r;

	if (m == NULL || out == NULL) {
		bf_diag_set(d, "report", "no model or no output buffer");
		return BF_ERR_INVALID;
	}
	for (i = 0; format != NULL && i < REPORT_NFORMATS; i++)
		if (strcmp(format, report_formats[i].name) == 0)
			fe = &report_formats[i];
	if (fe == NULL) {
		bf_diag_set(d, "format", "\"%s\" is not one of text, markdown, csv, json",
		    format ? format : "(null)");
		return BF_ERR_INVALID;
	}
	if ((r = fe->render(m, out)) == BF_ERR_TOOBIG)
		bf_diag_set(d, "report", "the report is over the output cap");
	return r;
}

int
report_render(const struct report_input *in, const char *format, struct buf *out,
    struct bf_diag *d)
{
	struct report_model *m = NULL;
	size_t i;
	int r, known = 0;

	if (in == NULL || out == NULL) {
		bf_diag_set(d, "report", "no input or no output buffer");
		r = BF_ERR_INVALID;
		goto out;
	}
	/* The format first, as before the model: a bad one costs no compute. */
	for (i = 0; format != NULL && i < REPORT_NFORMATS; i++)
		if (strcmp(format, report_formats[i].name) == 0)
			known = 1;
	if (!known) {
		bf_diag_set(d, "format", "\"%s\" is not one of text, markdown, csv, json",
		    format ? format : "(null)");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = report_compute(in, &m, d)) != 0 ||
	    (r = report_model_render(m, format, out, d)) != 0)
		goto out;
	r = 0;
out:
	report_model_free(m);
	return r;
}
