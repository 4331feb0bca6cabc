/*
 * report-pivot.h: the side-by-side layout of a report, as the kernel lists
 * post it (`4-Level | 5-Level | % Change` as columns, THP modes as rows).
 * One axis (a kernel, a command line, a job) gives column groups: mean,
 * CoV% and 95% CI per value, then per value after the first its % change
 * and CI of change against the first value, with the mark; the other axes'
 * values are the rows. It only lays out a struct report_model (report.h):
 * every number is the model's, compared as its baseline_of says, which
 * report_pivot_baselines() fills from the pivot so that each cell is
 * compared with the cell of its row in the first column.
 *
 * With summary set (several jobs, or cells with a "workload" axis) the
 * report ends with a summary table, one line per row, metric and value
 * after the first: workload (the row), metric, A, B, % change, its CI,
 * mark; and per metric and compared value the geometric mean of the
 * ratios B/A over the rows, with its 95% CI (Student t over the log
 * ratios, n-1 dof). Rows whose A or B mean is not positive have no
 * log ratio and are left out of it (said so).
 */
#ifndef BF_REPORT_PIVOT_H
#define BF_REPORT_PIVOT_H

#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "report.h"

#define REPORT_PIVOT_MAX_COLS	16	/* values of the column axis */

struct report_pivot {
	char *axis;		/* "kernel", "job"; shown in the heading */
	size_t ncols, nrows;
	char **cols;		/* [ncols] the axis's values; cols[0] is the reference */
	char **rows;		/* [nrows] the row labels (the other axes); "" for none */
	int *cell_at;		/* [row * ncols + col]: the model's cell, or -1 */
	int summary;		/* end with the summary table and geometric means */
	int summary_only;	/* text, markdown: the title, the summary table, its
				 * geometric means and their legend line only (a
				 * suite's closing summary, api-report-suite.c) */
	int summary_own;	/* the summary leaves out a row's metric with no
				 * samples in A or B: a metric of another
				 * workload's recipe in a suite's summary */
};

/*
 * Lay out ncells cells: colv[c] is cell c's value of the column axis,
 * rowv[c] its row label (what its other axes say; NULL is ""). Columns
 * and rows come in the order they first appear, except that ref (NULL:
 * none) is put first: it is what the other columns are compared with.
 * BF_ERR_INVALID (d naming "columns") for a NULL colv entry, two cells on
 * one row and column, ref not among the values, or a single value;
 * BF_ERR_TOOBIG past REPORT_PIVOT_MAX_COLS values; BF_ERR_ALLOC. *out is
 * the caller's, freed with report_pivot_free().
 */
int report_pivot_build(const char *axis, const char *const *colv,
    const char *const *rowv, size_t ncells, const char *ref,
    struct report_pivot **out, struct bf_diag *d);
void report_pivot_free(struct report_pivot *p);		/* accepts NULL */

/* baseline_of[0..ncells) for report_input: each cell after the first
 * column gets the cell of its row in the first column (-1 if none). */
void report_pivot_baselines(const struct report_pivot *p, int *baseline_of,
    size_t ncells);

/*
 * Append m laid out by p to out in format "text", "markdown", "csv" or
 * "json" (docs/report.md has each shape). BF_ERR_INVALID for an unknown
 * format or a pivot that names a cell m does not have; BF_ERR_TOOBIG past
 * out's max; BF_ERR_ALLOC.
 */
int report_pivot_render(const struct report_model *m, const struct report_pivot *p,
    const char *format, struct buf *out, struct bf_diag *d);

#endif
