/*
 * report.h: mail-ready comparison tables of a job's results, in text
 * (aligned, <= ~100 columns, no tabs), GitHub markdown, CSV (RFC 4180) or
 * JSON. All statistics come from stats.h.
 *
 * For each metric, one row per cell: n, mean, CoV%, the 95% CI of the mean
 * and, when the cell has a baseline, the % change (B-A)/|A|*100, its 95% CI
 * by Fieller's method (or, for a positive metric, from the log ratio), the
 * Welch p and a significance mark ('*': Welch p < 0.05, the CI of the %
 * change excludes 0, both sides have min_n samples and the cell has no
 * fewer boots than its baseline; the word from B's mean against A's and the
 * direction). docs/report.md, "Honest numbers", has the digits rules,
 * --stat median|min and Holm. When a cell has samples
 * from more than one boot, its mean, CI, % change and test use the per-boot
 * means as the samples (Kalibera & Jones: iterations within a boot are not
 * independent), and a second table gives boots, iterations per boot, the
 * between-boot and within-boot sd, and m* when a cost ratio is given.
 * (A cell from one boot compared with a several-boot baseline uses its
 * iterations as the samples: the only variance it has, and an
 * underestimate when boots differ; run every cell on several boots.)
 * Statistics that are undefined are said so, never printed as 0 or NaN: a
 * cell with one sample shows "n=1, no CI"; a baseline mean of 0 gives an
 * "undefined" % change with an "unbounded" CI; two zero-variance cells
 * have "no var" for Welch p; "-" marks the rest (legend). CSV leaves them
 * empty and JSON null, with a "note" saying why. JSON and CSV also carry
 * Mann-Whitney U and p, on the same samples as Welch's test.
 *
 * The legend ends every format but CSV (one row per cell and metric, no
 * other lines): % Change: (B-A)/|A|*100, the marks, the sample counts
 * (boots x iterations, from the series), the caller's context lines and
 * then its warnings ("Warning: ..."; JSON also lists them as "warnings").
 *
 * A metric with no_direction (a counter shown as evidence beside the
 * results: vmstat.thp_fault_alloc) has no better or worse: its heading
 * says so, a significant change is marked "*" alone, CSV leaves
 * higher_better empty and JSON has "higher_better": null; every metric's
 * JSON says "direction": "higher", "lower" or "none".
 *
 * The statistics are computed once into a struct report_model
 * (report_compute); each format only renders that model (report-text.c,
 * report-md.c, report-csv.c, report-json.c), so a caller wanting several
 * formats computes once. report_render() does both for one format.
 */
#ifndef BF_REPORT_H
#define BF_REPORT_H

#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "stats.h"

struct report_metric {
	const char *name;	/* "rps"; required */
	const char *unit;	/* "ops/s", or NULL */
	int higher_better;	/* non-zero: higher is better; 0: lower is better */
	int no_direction;	/* non-zero: neither (a counter); higher_better ignored */
	/* non-zero: a strictly positive quantity (a time, a rate, a count): a
	 * CI of its mean below 0 is clipped at 0 (said so), and the CI of the
	 * % change comes from the ratio of means on the log scale, never below
	 * -100% (stats_pct_log). A cell with a sample <= 0 falls back to the
	 * t CI and Fieller, with a note. */
	int positive;
};

/* What summarises a cell (report_input.stat). */
enum report_stat {
	REPORT_STAT_MEAN = 0,	/* mean, t CI, Fieller / log-ratio, Welch */
	REPORT_STAT_MEDIAN,	/* median, percentile bootstrap CIs, Mann-Whitney p */
	REPORT_STAT_MIN		/* the best sample: no interval, no test, no mark */
};
/* Adjustment for many comparisons (report_input.adjust). */
enum report_adjust {
	REPORT_ADJUST_NONE = 0,
	REPORT_ADJUST_HOLM	/* Holm-Bonferroni across the report's comparisons */
};
#define REPORT_MIN_N		3	/* default min_n: fewer samples a side, no mark */
#define REPORT_BOOT_RESAMPLES	2000	/* bootstrap resamples of the median */
#define REPORT_BOOT_SEED	17u	/* their seed: the same data, the same CI */

/* One cell's samples of one metric. boot[i] is the boot id of v[i] (any
 * ints); boot may be NULL, meaning all samples come from one boot. */
struct report_series {
	const double *v;
	const int *boot;
	size_t n;
};

struct report_cell {
	const char *label;	/* "thp=never threads=32"; NULL prints as "" */
};

struct report_input {
	const char *title;		/* "job 7: redis on zen4-2s", or NULL */
	size_t nmetrics;		/* <= BF_MAX_METRICS */
	const struct report_metric *metrics;
	size_t ncells;			/* <= BF_MAX_CELLS */
	const struct report_cell *cells;
	const struct report_series *series;	/* [cell * nmetrics + metric] */
	/* Per cell: index of its baseline cell, or -1 (it is a baseline, or no
	 * baseline was chosen). Never the cell itself. NULL: no baselines. */
	const int *baseline_of;
	const char *baseline_desc;	/* "thp:never", or NULL */
	/* c_boot / c_iter, the cost of a boot over that of an iteration, for
	 * m* (optimal iterations per boot); 0 leaves m* out. */
	double boot_cost_ratio;
	/* Lines for the legend, NULL-terminated, or NULL: where the samples
	 * come from, e.g. "machines: class zen4-2s (bfdemo1, bfdemo2)" and
	 * "kernels: 6.1.0-28-cloud-amd64". At most REPORT_MAX_CONTEXT lines of
	 * at most BF_MAX_STR bytes; user text (escaped like labels). JSON
	 * carries them as "context": [...]. */
	const char *const *context;
	/* Warnings for the legend, NULL-terminated, or NULL: what the evidence
	 * says against the numbers ("cell thp=always: THP enabled=always but no
	 * huge page was faulted in ..."). At most REPORT_MAX_WARNINGS lines of
	 * at most BF_MAX_STR bytes; user text. The legend prints each after the
	 * context as "Warning: LINE"; JSON also carries them as "warnings". */
	const char *const *warnings;
	/* Fewest independent samples (eff.n: boot means when a cell has
	 * several boots) a side of a comparison needs for a mark; 0 means
	 * REPORT_MIN_N. Below it the mark column says "low n". */
	size_t min_n;
	enum report_stat stat;		/* REPORT_STAT_MEAN by default */
	enum report_adjust adjust;	/* REPORT_ADJUST_NONE by default */
};

#define REPORT_MAX_CONTEXT	32
#define REPORT_MAX_WARNINGS	32
/* The legend's lines: % Change, the fixed items, the sample counts, context,
 * warnings. */
#define REPORT_MAX_LEGEND	(16 + REPORT_MAX_CONTEXT + REPORT_MAX_WARNINGS)

/*
 * The model: everything the four formats show, computed once by
 * report_compute() from an input, then rendered by report_model_render()
 * in as many formats as wanted. Read-only for the caller.
 */

/* One cell of the input. */
struct report_model_cell {
	const char *label;	/* the input's label; "" for NULL (user text, raw) */
	int baseline;		/* index of its baseline cell, or -1 */
};

/* One cell for one metric: what its rows in every format show. */
struct report_row {
	struct stats_summary all;	/* every sample */
	struct stats_summary eff;	/* what mean, CI and tests use: all, or the boot means */
	int multi;			/* samples from more than one boot */
	struct stats_twolevel tl;	/* valid when multi */
	int has_mstar;
	size_t mstar;			/* m*, optimal iterations per boot, when has_mstar */
	int is_base;			/* some cell compares against this one */
	int has_cmp;			/* this cell has a baseline */
	struct stats_summary beff;	/* the baseline's eff, when has_cmp */
	struct stats_compare cmp;	/* against the baseline, when has_cmp */
	int has_mw;			/* Mann-Whitney of eff vs beff's samples */
	struct stats_mw mw;		/* u: U of this cell (scipy's mannwhitneyu(B, A)) */
	/* Static strings, never NULL where not said: */
	const char *mark;		/* "* better", "* worse", "*" (no_direction) or "" */
	const char *note;		/* why the row's numbers are missing, or NULL */
	const char *cmp_note;		/* why the comparison's are, or NULL (or no has_cmp) */
	/* Added by issue 17 (the mark's honesty). cmp.significant is the
	 * mark's verdict: besides stats_compare's test it needs n >= min_n on
	 * both sides, no fewer boots than the baseline, and with adjust the
	 * adjusted p < 0.05. cmp.pct is (B-A)/|A|*100: its sign reads as B's
	 * mean against A's, whatever A's sign. */
	int low_n;			/* has_cmp, a side's eff.n < min_n: no mark */
	int fewer_boots;		/* has_cmp, multi baseline, fewer boots here: no mark */
	int has_padj;			/* p_adj is the Holm-adjusted Welch (or MW) p */
	double p_adj;
	int ci_clipped;			/* positive metric: eff.ci_lo was < 0, now 0 */
	int log_ratio;			/* cmp.pct's CI is stats_pct_log's */
	int nonpos;			/* positive metric but a sample <= 0 here or in the base */
	int boots_equal;		/* multi: the boot means coincide, iterations vary */
	double cov_between, cov_within;	/* multi: 100 sd / |mean| of boot means, pooled within */
	double stat_value;		/* the row's summary (mean, median or min) */
	double stat_lo, stat_hi;	/* its 95% CI (NAN: none) */
	double p;			/* the p the mark uses (Welch, or MW for median) */
	double beff_stat;		/* the baseline's stat_value, when has_cmp */
	int shape_bxi;			/* some cell of the metric has several boots: the
					 * n column is "boots x iter" ("3x5", "1x5") */
};

/* One metric: its rows and what its tables share. */
struct report_model_metric {
	const struct report_metric *metric;	/* the input's */
	struct report_row *rows;	/* [ncells] */
	int any_cmp;			/* some cell has a baseline: the comparison columns */
	size_t nmulti;			/* cells with samples from several boots */
	int decimals;			/* of the mean and CI, shared by the metric's rows */
};

struct report_model {
	/* Borrowed: the input and everything it points to must outlive the
	 * model (labels, metric names, title and context are read when
	 * rendering). */
	const struct report_input *in;
	size_t ncells, nmetrics;
	struct report_model_cell *cells;	/* [ncells] */
	struct report_model_metric *metrics;	/* [nmetrics] */
	int uniform_n;			/* every cell has the same n of every metric */
	/* The legend, in order (warnings on the samples included); NUL-
	 * terminated user text as given (renderers escape it). */
	char *legend[REPORT_MAX_LEGEND];
	size_t nlegend;
	size_t nadjusted;		/* comparisons in the Holm family (adjust) */
};

/* "mean" | "median" | "min" (NULL: mean), "none" | "holm" (NULL: none):
 * 0, or BF_ERR_INVALID for anything else. For ?stat=, ?adjust=, --stat and
 * --adjust. */
int report_stat_parse(const char *s, enum report_stat *out);
int report_adjust_parse(const char *s, enum report_adjust *out);
#define REPORT_MAX_MIN_N	1000	/* the largest min_n accepted */

/*
 * Validate in and compute its model. *out is the caller's, freed with
 * report_model_free(); it borrows in (see above). BF_ERR_INVALID (with d
 * naming the field) for a bad baseline index or a non-finite sample;
 * BF_ERR_TOOBIG past the caps (cells, metrics, samples, context or warning
 * lines); BF_ERR_ALLOC. The model holds one row per cell and metric: at most
 * BF_MAX_CELLS x BF_MAX_METRICS.
 */
int report_compute(const struct report_input *in, struct report_model **out,
    struct bf_diag *d);
void report_model_free(struct report_model *m);		/* accepts NULL */

/*
 * Append the model's report to out in format "text", "markdown", "csv" or
 * "json". BF_ERR_INVALID for an unknown format; BF_ERR_TOOBIG past out's
 * max. On error out may hold a partial report; the caller owns out.
 */
int report_model_render(const struct report_model *m, const char *format,
    struct buf *out, struct bf_diag *d);

/*
 * report_compute(), report_model_render() and report_model_free() in one:
 * append the report to out in format "text", "markdown", "csv" or "json".
 * BF_ERR_INVALID (with d naming the field) for an unknown format, a bad
 * baseline index or a non-finite sample; BF_ERR_TOOBIG past the caps
 * (cells, metrics, samples, context or warning lines) or out's max. On error out may
 * hold a partial report; the caller owns out.
 */
int report_render(const struct report_input *in, const char *format,
    struct buf *out, struct bf_diag *d);

#endif
