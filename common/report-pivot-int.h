/*
 * report-pivot-int.h: what report-pivot.c (layout, text, markdown) and
 * report-pivot-data.c (csv, json) share: the fields of one pivot cell and
 * the summary lines with their geometric means.
 */
#ifndef BF_REPORT_PIVOT_INT_H
#define BF_REPORT_PIVOT_INT_H

#include <stddef.h>

#include "buf.h"
#include "report.h"
#include "report-int.h"
#include "report-pivot.h"

/* One line of the summary: row r of metric mt, column col (>= 1) against 0. */
struct report_pivot_line {
	size_t row, metric, col;
	const struct report_row *a, *b;		/* b->has_cmp */
};

/* The geometric mean of B/A over the rows, for one metric and column. */
struct report_pivot_gm {
	size_t metric, col;
	size_t n;		/* rows with a log ratio */
	size_t nskip;		/* rows left out: a mean <= 0, or no samples */
	double gm;		/* NAN when n == 0 */
	double lo, hi;		/* 95% CI; NAN when n < 2 */
};

struct report_pivot_sum {
	struct report_pivot_line *lines;
	size_t nlines;
	struct report_pivot_gm *gms;
	size_t ngms;
};

/* The model's row at pivot row r, column c of metric k, or NULL (no cell). */
const struct report_row *report_pivot_row(const struct report_model *m,
    const struct report_pivot *p, size_t k, size_t r, size_t c);
/* The summary of m laid out by p (p->summary set); freed with
 * report_pivot_sum_free. BF_ERR_ALLOC. */
int report_pivot_summary(const struct report_model *m, const struct report_pivot *p,
    struct report_pivot_sum *s);
void report_pivot_sum_free(struct report_pivot_sum *s);
/* The legend line that explains the summary's geometric mean (static). */
extern const char report_pivot_gm_legend[];

int report_pivot_csv(const struct report_model *m, const struct report_pivot *p,
    struct buf *out);
int report_pivot_json(const struct report_model *m, const struct report_pivot *p,
    struct buf *out);

#endif
