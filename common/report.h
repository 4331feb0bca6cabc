/*
 * report.h: mail-ready comparison tables of a job's results, in text
 * (aligned, <= ~100 columns, no tabs), GitHub markdown, CSV (RFC 4180) or
 * JSON. All statistics come from stats.h.
 *
 * For each metric, one row per cell: n, mean, CoV%, the 95% CI of the mean
 * and, when the cell has a baseline, the % change (B-A)/A*100, its 95% CI by
 * Fieller's method, the Welch p and a significance mark ('*': Welch
 * p < 0.05 and the CI of the % change excludes 0). When a cell has samples
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
 * other lines): % Change: (B-A)/A*100, the marks, the sample counts
 * (boots x iterations, from the series), and the caller's context lines.
 */
#ifndef BF_REPORT_H
#define BF_REPORT_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

struct report_metric {
	const char *name;	/* "rps"; required */
	const char *unit;	/* "ops/s", or NULL */
	int higher_better;	/* non-zero: higher is better; 0: lower is better */
};

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
};

#define REPORT_MAX_CONTEXT	32

/*
 * Append the report to out in format "text", "markdown", "csv" or "json".
 * BF_ERR_INVALID (with d naming the field) for an unknown format, a bad
 * baseline index or a non-finite sample; BF_ERR_TOOBIG past the caps
 * (cells, metrics, samples, context lines) or out's max. On error out may hold a partial report; the caller owns out.
 */
int report_render(const struct report_input *in, const char *format,
    struct buf *out, struct bf_diag *d);

#endif
