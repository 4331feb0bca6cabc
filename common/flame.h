/*
 * flame.h: a static flame graph (SVG) of folded stacks (fold.h), drawn by
 * our own code: one rectangle per frame, its width proportional to its
 * samples, the root ("all") at the bottom. No script, no style sheet, no
 * external reference; every name is XML-escaped text.
 */
#ifndef BF_FLAME_H
#define BF_FLAME_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

#define FLAME_WIDTH	1200	/* px */
#define FLAME_ROW	16	/* px per frame */
#define FLAME_MIN_PX	0.1	/* narrower frames are not drawn (and counted) */

/*
 * Draw folded[0..len) (at most BF_MAX_ARTIFACT_FOLDED bytes) into out,
 * appended; title (may be NULL) is printed above it, escaped. Lines that
 * are not "STACK COUNT" are skipped and counted in the subtitle.
 * BF_ERR_TOOBIG past the cap, BF_ERR_INVALID (d says so) when no line
 * holds a sample.
 */
int flame_svg(const char *folded, size_t len, const char *title, struct buf *out,
    struct bf_diag *d);
/* s[0..len) as XML character data or attribute text: printable UTF-8
 * (fold_clean) with & < > " ' as entities, at most max source bytes. */
int flame_put_esc(struct buf *out, const char *s, size_t len, size_t max);

#endif
