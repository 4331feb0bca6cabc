/*
 * report.c: render comparison tables (text, markdown, csv, json) from a
 * job's samples. The numbers come from stats.c; this file decides what is
 * shown, how it is rounded, and how user-supplied labels are escaped.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
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
#define LEGEND_WIDTH	78	/* legend lines wrap here, as mail text does */
#define FIELD		64	/* one formatted table field */
#define MAX_DECIMALS	10
#define SIG_DIGITS	(-1)	/* a "decimals" that asks for %.4g (narrow rows) */

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
	struct stats_summary beff;	/* the baseline's eff, when has_cmp */
	struct stats_compare cmp;
	int has_mw;			/* Mann-Whitney of eff vs beff's samples */
	struct stats_mw mw;		/* u: U of this cell (scipy's mannwhitneyu(B, A)) */
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
	for (i = 0; in->context != NULL && in->context[i] != NULL; i++) {
		if (i >= REPORT_MAX_CONTEXT || strlen(in->context[i]) > BF_MAX_STR) {
			bf_diag_set(d, "context", "line %zu: at most %d lines of %d bytes", i,
			    REPORT_MAX_CONTEXT, BF_MAX_STR);
			r = BF_ERR_TOOBIG;
			goto out;
		}
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

/* Mann-Whitney of cell c against its baseline b, on the samples Welch uses. */
static int
compute_mw(const struct report_input *in, size_t m, size_t c, size_t b,
    struct rstat *st)
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
		st[c].beff = st[b].eff;
		if ((r = stats_compare(&st[b].eff, &st[c].eff, &st[c].cmp)) != 0 ||
		    (r = compute_mw(in, m, c, (size_t)b, st)) != 0)
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
		snprintf(f, size, "-");
	else if (dec == SIG_DIGITS || (x != 0 && (fabs(x) >= 1e15 || fabs(x) < 1e-6)))
		snprintf(f, size, "%.4g", x);
	else
		snprintf(f, size, "%.*f", dec, x);
}

/* A percentage with 2 decimals ("+1.73"); 3 significant digits past 1e6
 * (a CoV or change that large is a bad baseline, not a precise number). */
static void
fmt_pctn(char *f, size_t size, double x, int sign)
{
	if (fabs(x) >= 1e6)
		snprintf(f, size, sign ? "%+.3g" : "%.3g", x);
	else
		snprintf(f, size, sign ? "%+.2f" : "%.2f", x);
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
		snprintf(f, FIELD, "-");
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

/* Why a comparison lacks a number: the words the tables print. */
#define W_NOCI		"n=1, no CI"
#define W_UNDEF		"undefined"
#define W_UNBOUNDED	"unbounded"
#define W_NOVAR		"no var"
#define W_NOSAMPLES	"no samples"

static void
row_fields(const struct report_metric *mt, const struct rstat *s, int dec,
    char f[NCOL][FIELD])
{
	char lo[NUM_FIELD], hi[NUM_FIELD];
	const struct stats_pct *p = &s->cmp.pct;
	size_t na = s->beff.n, nb = s->eff.n;

	f[C_LABEL][0] = '\0';
	snprintf(f[C_N], FIELD, "%zu", s->all.n);
	f[C_MEAN][0] = f[C_COV][0] = f[C_CI][0] = '\0';
	f[C_PCT][0] = f[C_PCTCI][0] = f[C_P][0] = '\0';
	snprintf(f[C_SIG], FIELD, "%s", sig_word(mt, s));
	if (s->all.n == 0) {
		snprintf(f[C_MEAN], FIELD, W_NOSAMPLES);
	} else {
		fmt_num(f[C_MEAN], s->eff.mean, dec);
		if (isnan(s->eff.cov))
			snprintf(f[C_COV], FIELD, "-");
		else
			fmt_pctn(f[C_COV], FIELD, s->eff.cov, 0);
		if (s->eff.n < 2) {
			snprintf(f[C_CI], FIELD, W_NOCI);
		} else {
			fmt_numn(lo, sizeof(lo), s->eff.ci_lo, dec);
			fmt_numn(hi, sizeof(hi), s->eff.ci_hi, dec);
			snprintf(f[C_CI], FIELD, "[%s, %s]", lo, hi);
		}
	}
	if (!s->has_cmp) {
		if (s->is_base)
			snprintf(f[C_PCT], FIELD, "baseline");
		return;
	}
	if (na == 0 || nb == 0) {
		snprintf(f[C_PCT], FIELD, "-");
		return;
	}
	if (isnan(p->pct))
		snprintf(f[C_PCT], FIELD, s->beff.mean == 0 ? W_UNDEF : "-");
	else
		fmt_pctn(f[C_PCT], FIELD, p->pct, 1);
	if (p->unbounded) {
		snprintf(f[C_PCTCI], FIELD, W_UNBOUNDED);
	} else if (na < 2 || nb < 2) {
		snprintf(f[C_PCTCI], FIELD, W_NOCI);
	} else if (isnan(p->lo)) {
		snprintf(f[C_PCTCI], FIELD, "-");
	} else {
		fmt_pctn(lo, sizeof(lo), p->lo, 1);
		fmt_pctn(hi, sizeof(hi), p->hi, 1);
		snprintf(f[C_PCTCI], FIELD, "[%s, %s]", lo, hi);
	}
	if (na >= 2 && nb >= 2 && isnan(s->cmp.welch.p))
		snprintf(f[C_P], FIELD, W_NOVAR);
	else
		fmt_p(f[C_P], s->cmp.welch.p);
}

/* Why a row's numbers are missing, for JSON's "note" (NULL: nothing). */
static const char *
row_note(const struct rstat *s)
{
	if (s->all.n == 0)
		return W_NOSAMPLES;
	if (s->eff.n < 2)
		return W_NOCI;
	if (s->eff.mean == 0)
		return "mean is 0: no CoV";
	if (s->eff.var == 0)
		return "zero variance: the CI has zero width";
	return NULL;
}

static const char *
cmp_note(const struct rstat *s)
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
	"Marks: \"* better\" or \"* worse\" (by Lower/Higher is better) only when "
	    "Welch p < 0.05 and the 95% CI of the % change excludes 0. No mark: not "
	    "significant, or not testable.",
	"\"-\": not defined for the cell.",
};

#define LEGEND_MAX	(16 + REPORT_MAX_CONTEXT)

struct legend {
	char *item[LEGEND_MAX];
	size_t n;
};

static void
legend_free(struct legend *lg)
{
	size_t i;

	for (i = 0; lg != NULL && i < lg->n; i++)
		free(lg->item[i]);
}

static int
legend_add(struct legend *lg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int
legend_add(struct legend *lg, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	if (lg->n >= LEGEND_MAX)
		return BF_ERR_TOOBIG;
	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return BF_ERR_ALLOC;
	lg->item[lg->n++] = s;
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

/* The sample counts over every cell and metric that has samples. */
static int
legend_samples(const struct report_input *in, struct legend *lg)
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
				goto out;
			bmin = b < bmin ? b : bmin;
			bmax = b > bmax ? b : bmax;
			imin = i0 < imin ? i0 : imin;
			imax = i1 > imax ? i1 : imax;
			nmin = s->n < nmin ? s->n : nmin;
			nmax = s->n > nmax ? s->n : nmax;
		}
	}
	if (bmax == 0) {
		r = legend_add(lg, "Samples: none.");
		goto out;
	}
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
		goto out;
	if (bmax == 1)
		r = legend_add(lg, "One boot per cell: its iterations are the samples, so the "
		    "CI leaves out boot-to-boot variation (page layout); run several boots.");
	else if (bmin > 1)
		r = legend_add(lg, "Several boots per cell: mean, CI and tests use the boot "
		    "means, the independent samples (Kalibera & Jones); m* = optimal "
		    "iterations per boot.");
	else
		r = legend_add(lg, "Cells with several boots use their boot means for mean, CI "
		    "and tests (Kalibera & Jones); cells with one boot use the iterations, "
		    "which leaves out boot-to-boot variation.");
out:
	return r;
}

static int
legend_build(const struct report_input *in, struct legend *lg)
{
	size_t i;
	int r;

	lg->n = 0;
	if (in->baseline_desc != NULL)
		r = legend_add(lg, "%% Change: (B-A)/A*100, B a cell, A its baseline cell "
		    "(%s).", in->baseline_desc);
	else
		r = legend_add(lg, "%% Change: (B-A)/A*100, B a cell, A its baseline cell.");
	if (r != 0)
		goto out;
	for (i = 0; i < sizeof(legend_fixed) / sizeof(legend_fixed[0]); i++)
		if ((r = legend_add(lg, "%s", legend_fixed[i])) != 0)
			goto out;
	if ((r = legend_samples(in, lg)) != 0)
		goto out;
	for (i = 0; in->context != NULL && in->context[i] != NULL; i++)
		if ((r = legend_add(lg, "%s", in->context[i])) != 0)
			goto out;
	r = 0;
out:
	return r;
}

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
			goto out;
		s += len;
		first = 0;
		if (*s == '\0')
			break;
	}
	r = 0;
out:
	return r;
}

/* Width of a table's rows without their labels (the split layout). */
static size_t
fields_width(size_t nrows, size_t ncol, const char *const *head, char (*fields)[FIELD])
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
    const int *right, char (*fields)[FIELD], char **labels, const size_t *lw)
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
			goto out;
	if ((r = end_line(out)) != 0)
		goto out;
	for (i = 0; i < nrows; i++) {
		if (split && (r = wrap_text(out, labels[i], TEXT_WIDTH, "  ")) != 0)
			goto out;
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
	r = buf_printf(out, " - %s is better%s\n", mt->higher_better ? "Higher" : "Lower",
	    markdown ? "**" : "");
out:
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

static int
render_text(const struct report_input *in, struct rstat *st, struct buf *out,
    struct bf_diag *d)
{
	char (*f)[FIELD] = NULL, **labels = NULL, *t, row[NCOL][FIELD];
	const char *heads[NCOL];
	size_t *lw = NULL, m, c, i, nb, bc, nc, k, ns, sel[NCOL];
	struct legend lg = { .n = 0 };
	int r, dec, anym, pass, rights[NCOL], nuni = uniform_n(in);

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
		nc = any_cmp(in, st) ? NCOL : C_PCT;
		for (c = 0; c < in->ncells; c++) {
			free(labels[c]);
			if ((labels[c] = text_clean(cell_label(in, c), &lw[c])) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		}
		/* Decimals shared by the metric; if even a row without its label is
		 * too wide, each row's own; then 4 significant digits. */
		/* The n column only when cells differ: the legend gives one n. */
		for (k = 0, ns = 0; k < nc; k++) {
			if (k == C_N && nuni)
				continue;
			heads[ns] = col_head[k];
			rights[ns] = col_right[k];
			sel[ns++] = k;
		}
		for (pass = 0; pass < 3; pass++) {
			for (c = 0; c < in->ncells; c++) {
				row_fields(&in->metrics[m], &st[c], pass == 0 ? dec : pass == 1 ?
				    row_decimals(&st[c].eff) : SIG_DIGITS, row);
				/* Row c goes to stride ns; it never overlaps a later row. */
				for (k = 0; k < ns; k++)
					memcpy(f[c * ns + k], row[sel[k]], FIELD);
			}
			if (fields_width(in->ncells, ns, heads, f) <= TEXT_WIDTH)
				break;
		}
		if ((r = text_table(out, in->ncells, ns, heads, rights, f, labels, lw)) != 0)
			goto out;
		/* Boots table: only the cells that have several boots. */
		for (c = 0, nb = 0; c < in->ncells; c++)
			nb += st[c].multi;
		if (nb == 0)
			continue;
		anym = in->boot_cost_ratio > 0;
		if ((r = buf_puts(out, "\nboots x iterations:\n")) != 0)
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
	if ((r = buf_puts(out, "\n")) != 0 || (r = legend_build(in, &lg)) != 0)
		goto out;
	for (i = 0; i < lg.n; i++) {
		if ((t = text_clean(lg.item[i], NULL)) == NULL) {
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
	legend_free(&lg);
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
	struct legend lg = { .n = 0 };
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
	if ((r = legend_build(in, &lg)) != 0)
		goto out;
	for (i = 0; i < lg.n; i++)
		if ((r = buf_puts(out, "- ")) != 0 || (r = md_escape(out, lg.item[i])) != 0 ||
		    (r = buf_puts(out, "\n")) != 0)
			goto out;
	r = 0;
out:
	legend_free(&lg);
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
    "significant,boots,sd_between,sd_within,m_opt,mw_u,mw_p,note\r\n";

static int
render_csv(const struct report_input *in, struct rstat *st, struct buf *out,
    struct bf_diag *d)
{
	const struct report_metric *mt;
	const struct rstat *s;
	const char *note;
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
			if (r != 0)
				goto out;
			if (s->has_mw)
				r = buf_printf(out, ",%.15g,%.15g", s->mw.u, s->mw.p);
			else
				r = buf_puts(out, ",,");
			note = s->has_cmp && cmp_note(s) ? cmp_note(s) : row_note(s);
			if (r != 0 || (r = csv_field(out, note ? note : "", 0)) != 0 ||
			    (r = buf_puts(out, "\r\n")) != 0)
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
json_row(const struct report_input *in, const struct report_metric *mt, size_t c,
    const struct rstat *s, json_t *row)
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
	    (r = jset(row, "median", jnum(s->all.median))) != 0 ||
	    (r = jset(row, "ci_n", json_integer((json_int_t)s->eff.n))) != 0 ||
	    (r = jset(row, "ci_basis", json_string(s->multi ? "boot means" :
	    "samples"))) != 0 ||
	    (r = jset(row, "note", row_note(s) ? json_string(row_note(s)) :
	    json_null())) != 0)
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
		    (r = jset(cmp, "significant", json_boolean(s->cmp.significant))) != 0 ||
		    (r = jset(cmp, "mark", json_string(sig_word(mt, s)))) != 0 ||
		    (r = jset(cmp, "mw_u", s->has_mw ? jnum(s->mw.u) : json_null())) != 0 ||
		    (r = jset(cmp, "mw_u_baseline", s->has_mw ? jnum((double)s->beff.n *
		    (double)s->eff.n - s->mw.u) : json_null())) != 0 ||
		    (r = jset(cmp, "mw_p", s->has_mw ? jnum(s->mw.p) : json_null())) != 0 ||
		    (r = jset(cmp, "mw_method", s->has_mw ? json_string(s->mw.exact ?
		    "exact" : "asymptotic") : json_null())) != 0 ||
		    (r = jset(cmp, "note", cmp_note(s) ? json_string(cmp_note(s)) :
		    json_null())) != 0)
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
	json_t *root = NULL, *metrics, *mo, *rows, *row, *leg, *ctx;
	struct legend lg = { .n = 0 };
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
			if ((r = json_row(in, mt, c, &st[c], row)) != 0)
				goto out;
		}
	}
	if ((r = legend_build(in, &lg)) != 0 ||
	    (r = jset(root, "legend", leg = json_array())) != 0 ||
	    (r = jset(root, "context", ctx = json_array())) != 0)
		goto out;
	for (i = 0; i < lg.n; i++)
		if (json_array_append_new(leg, jstr(lg.item[i])) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	for (i = 0; in->context != NULL && in->context[i] != NULL; i++)
		if (json_array_append_new(ctx, jstr(in->context[i])) != 0) {
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
	legend_free(&lg);
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
