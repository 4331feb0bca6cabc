/*
 * report-int.h: what the report's files share and nobody else sees. The
 * model (report.c) is computed once; the renderers (report-text.c,
 * report-md.c, report-csv.c, report-json.c) only read it, through the
 * field formatting of report-fmt.c where text and markdown print the same
 * words and digits.
 */
#ifndef BF_REPORT_INT_H
#define BF_REPORT_INT_H

#include <stddef.h>
#include <jansson.h>

#include "buf.h"
#include "report.h"
#include "stats.h"

#define REPORT_FIELD		64	/* one formatted table field */
#define REPORT_DEC_NONE		(-400)	/* decimals of a row without a mean */
#define REPORT_SIG_DIGITS	(-1000)	/* a "decimals" that asks for the row's own */

/* Why a comparison lacks a number: the words the tables print. */
#define W_NOCI		"n=1, no CI"
#define W_UNDEF		"undefined"
#define W_UNBOUNDED	"unbounded"
#define W_NOVAR		"no var"
#define W_NOSAMPLES	"no samples"
#define W_LOWN		"low n"
#define W_FEWERBOOTS	"fewer boots"
#define REPORT_HEAD_BXI	"boots x iter"	/* the n column's head when a cell has boots */
#define W_BOOTSEQ	"boot means equal; iterations vary (CoV %.3g%%)"

/* The columns of a metric's table, and of its boots x iterations table. */
enum { C_LABEL, C_N, C_MEAN, C_COV, C_CI, C_PCT, C_PCTCI, C_P, C_SIG, NCOL };
enum { B_LABEL, B_BOOTS, B_ITERS, B_SDB, B_SDW, B_COVB, B_COVW, B_DOF, B_MSTAR, NBCOL };
extern const char *const report_col_head[NCOL];
extern const int report_col_right[NCOL];	/* numbers right-aligned, text left */
extern const char *const report_bcol_head[NBCOL];
extern const int report_bcol_right[NBCOL];

/* Decimals for one row: the mean shows >= 4 significant digits and the
 * CI half-width 2. */
int report_row_decimals(const struct stats_summary *s);
/* Decimals of a row's % change and its CI: 2, or as many as keep 2
 * significant digits of the CI's half-width. */
int report_pct_decimals(const struct report_row *s);
/* The text fields of one row, label excluded (f[C_LABEL] is ""), with dec
 * decimals (or REPORT_SIG_DIGITS). */
void report_row_fields(const struct report_row *s, int dec, char f[NCOL][REPORT_FIELD]);
/* The boots x iterations fields of a row with multi set; m* only if with_mstar. */
void report_boot_fields(const struct report_row *s, int with_mstar,
    char f[NBCOL][REPORT_FIELD]);
/* What a metric's heading says after " - ": "Higher is better", "Lower is
 * better" or, with no_direction, "no better or worse" (static). */
const char *report_direction_words(const struct report_metric *mt);
/* The head of column col of metric mm's table (static): "boots x iter"
 * for n when a cell has boots, the stat's name for the mean, "MW p" for
 * the median's test, "(Holm)" when adjusting. */
const char *report_head(const struct report_model *m, const struct report_model_metric *mm,
    int col);
/* "mean", "median" or "min" (static). */
const char *report_stat_name(enum report_stat st);
/* Its JSON "direction": "higher", "lower" or "none" (static). */
const char *report_direction_name(const struct report_metric *mt);
/* A copy of s (the caller frees it; NULL on ENOMEM) with invalid UTF-8
 * bytes as '?' and, if ctl, control characters as spaces; *width (may be
 * NULL) gets its code points. */
char *report_clean(const char *s, int ctl, size_t *width);
/* JSON values for the json renderers (report-json.c, report-pivot-data.c):
 * a string (cleaned when not UTF-8), a number (null when not finite), and
 * a set that steals v and fails with BF_ERR_ALLOC on a NULL v. */
json_t *report_json_str(const char *s);
json_t *report_json_num(double x);
int report_json_set(json_t *o, const char *k, json_t *v);

/* The renderers: append m in their format to out. BF_ERR_TOOBIG past out's
 * max, BF_ERR_ALLOC. */
int report_render_text(const struct report_model *m, struct buf *out);
int report_render_markdown(const struct report_model *m, struct buf *out);
int report_render_csv(const struct report_model *m, struct buf *out);
int report_render_json(const struct report_model *m, struct buf *out);

/* Hooks for the side-by-side layout (report-pivot.c): report-text.c's
 * legend wrapping, report-md.c's escaping, metric heading and list item. */
int report_text_wrap(struct buf *out, const char *s, size_t width, const char *indent);
int report_md_escape(struct buf *out, const char *s);
int report_md_heading(struct buf *out, const struct report_metric *mt);
int report_md_line(struct buf *out, const char *s);

#endif
