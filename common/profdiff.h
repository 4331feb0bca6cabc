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
/* The top rows (0: all) as a table; labels name the two profiles. */
int profdiff_render_text(const struct profdiff *p, size_t top, const char *label_a,
    const char *label_b, struct buf *out);
void profdiff_free(struct profdiff *p);		/* accepts NULL */

#endif
