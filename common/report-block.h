/*
 * report-block.h: the pooled comparison of a machines.spread "block" job
 * (job.h): every cell ran on every machine, so machine is a blocking
 * factor. For a cell B against its baseline A, each machine m gives one
 * ratio of means B_m / A_m; the pooled ratio is their geometric mean, its
 * 95% CI Student t over the M log ratios (M - 1 dof), and p the two-sided
 * one-sample t-test of the mean log ratio against 0: a paired comparison
 * over machines (the randomised complete block analysis of the per-machine
 * means on the log scale), so that a machine faster at everything moves
 * A and B alike and cancels. Machine-to-machine differences in the effect
 * are its error term: the CI says how far the effect carries over
 * machines, not how well one machine measured it.
 */
#ifndef BF_REPORT_BLOCK_H
#define BF_REPORT_BLOCK_H

#include <stddef.h>

#define REPORT_BLOCK_MAX	64	/* machines of one pooled comparison */

struct report_block_res {
	size_t n;		/* machines with both means */
	double ratio;		/* geometric mean of B_m / A_m; NAN when not pooled */
	double lo, hi;		/* its 95% CI; NAN when n < 2 */
	double pct, pct_lo, pct_hi;	/* the same as % change: 100 * (x - 1) */
	double p;		/* paired t-test over machines; NAN when n < 2 */
	int sig;		/* p < 0.05 and n >= min_n */
	const char *mark;	/* "better", "worse", "low n", or "" */
	const char *note;	/* why it is not pooled, or NULL */
};

/*
 * Pool a[m], b[m] (the baseline's and the cell's mean on machine m, m <
 * n <= REPORT_BLOCK_MAX; a NAN mean is a machine without that cell, left
 * out). Not pooled (note set, ratio NAN) when a mean is <= 0 (no log
 * ratio) or no machine has both. The mark: "better"/"worse" by the
 * direction (higher_better; none when no_direction) when sig; "low n"
 * when fewer than min_n machines (min_n 0: REPORT_MIN_N) would allow a
 * mark. BF_ERR_INVALID for bad arguments.
 */
int report_block_pool(const double *a, const double *b, size_t n, int higher_better,
    int no_direction, size_t min_n, struct report_block_res *out);

/* Decimals for a % change and its CI: at least 2, and enough for two
 * significant digits of the CI's half-width. */
int report_block_decimals(const struct report_block_res *r);

#endif
