/*
 * profdiff.h: where two profiles differ. From two folded texts (fold.h),
 * each symbol's self share (samples in which it is the innermost frame)
 * and inclusive share (samples with it anywhere on the stack, once per
 * stack however deep it recurses), in percent of that profile's samples;
 * rows ordered by the larger of the two changes, in percentage points.
 * The first frame of a stack is the process name (comm), not a symbol.
 */
#ifndef BF_PROFDIFF_H
#define BF_PROFDIFF_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "buf.h"
#include "err.h"

struct profdiff_row {
	char *symbol;			/* owned, printable (fold_clean) */
	double self_a, self_b;		/* % of A's, B's samples */
	double incl_a, incl_b;
};

struct profdiff {
	struct profdiff_row *rows;	/* every symbol of either, in order */
	size_t n;
	uint64_t samples_a, samples_b;
	size_t bad_a, bad_b;		/* lines that were not "STACK COUNT" */
};

/* BF_ERR_INVALID (d names "a" or "b") when a profile has no sample,
 * BF_ERR_TOOBIG past BF_MAX_ARTIFACT_FOLDED. *out freed with profdiff_free. */
int profdiff_compute(const char *a, size_t alen, const char *b, size_t blen,
    struct profdiff **out, struct bf_diag *d);
/* One profile's symbols, heaviest self share first (then inclusive, then
 * name); the B fields stay 0. Errors as profdiff_compute's, d naming "a". */
int profdiff_one(const char *a, size_t alen, struct profdiff **out, struct bf_diag *d);
/* Of profdiff_one: the top rows (0: all), self and inclusive shares. */
int profdiff_render_top(const struct profdiff *p, size_t top, const char *label, struct buf *out);
/* The top rows (0: all) as JSON: one (of profdiff_one) {samples, symbols,
 * skipped_lines, rows: [{symbol, self_pct, incl_pct}]}, else {samples_a,
 * samples_b, ..., rows: [{symbol, self_a_pct, self_b_pct, self_change_pp,
 * incl_...}]}. A new reference; NULL when memory ran out. */
json_t *profdiff_json(const struct profdiff *p, size_t top, int one);
/* The top rows (0: all) as a table; labels name the two profiles. */
int profdiff_render_text(const struct profdiff *p, size_t top, const char *label_a,
    const char *label_b, struct buf *out);
void profdiff_free(struct profdiff *p);		/* accepts NULL */

#endif
