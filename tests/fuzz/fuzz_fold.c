/*
 * fuzz_fold.c: fold_feed and fold_finish on fuzzed perf script text, as
 * the agent folds a profiled iteration. The input is folded whole and
 * again in two chunks split where its first byte says: both must give
 * the same text and counts (a read boundary cannot change a profile).
 * Accepted output must be what fold.h promises and what the coordinator
 * reads back: lines "STACK COUNT" with no control byte, distinct and in
 * frame order, counts summing to the samples folded, within the cap; and
 * flame.c must draw it with no script in the SVG, profdiff.c count it to
 * the same samples. A small cap must give a fitting text or BF_ERR_TOOBIG.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "flame.h"
#include "fold.h"
#include "profdiff.h"

#define FZ_SMALL_CAP	256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fold s[0..n) fed as [0..cut) and [cut..n) under cap into out. */
static int
fz_fold(const char *s, size_t n, size_t cut, size_t cap, struct buf *out, uint64_t *samples,
    uint64_t *odd)
{
	struct fold f;
	int r;

	fold_init(&f, cap);
	if ((r = fold_feed(&f, s, cut)) == 0 && (r = fold_feed(&f, s + cut, n - cut)) == 0)
		r = fold_finish(&f, out);
	*samples = f.samples;
	*odd = f.odd;
	fold_free(&f);
	return r;
}

/* The promises of fold.h about a folded text of `samples` samples. */
static void
fz_check_folded(const char *t, size_t len, uint64_t samples)
{
	const char *prev = NULL;
	size_t i, e, k, sl, prevlen = 0, semis;
	uint64_t cnt, sum = 0;

	if (len > 0 && t[len - 1] != '\n')
		abort();
	for (i = 0; i < len; i = e + 1) {
		for (e = i; t[e] != '\n'; e++)
			if ((unsigned char)t[e] < 0x20 || t[e] == 0x7f)
				abort();
		if (fold_parse_line(t + i, e - i, &sl, &cnt) != 0 || sl == 0 || sum + cnt < sum)
			abort();
		for (semis = 0, k = i; k < i + sl; k++)
			semis += t[k] == ';';
		if (semis > BF_MAX_FOLD_FRAMES + 1)
			abort();
		sum += cnt;
		if (prev != NULL && fold_stack_cmp_str(prev, prevlen, t + i, sl) >= 0)
			abort();
		prev = t + i;
		prevlen = sl;
	}
	if (sum != samples)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct buf whole, split, small, svg;
	struct profdiff *p = NULL;
	struct bf_diag d;
	uint64_t sw, ow, ss, os, sm, om;
	size_t cut = size > 0 ? data[0] % (size + 1) : 0;
	int rw, rs, rm;

	buf_init(&whole, BF_MAX_ARTIFACT_FOLDED);
	buf_init(&split, BF_MAX_ARTIFACT_FOLDED);
	buf_init(&small, FZ_SMALL_CAP);
	buf_init(&svg, BF_MAX_API_RESPONSE);
	rw = fz_fold(s, size, size, BF_MAX_ARTIFACT_FOLDED, &whole, &sw, &ow);
	rs = fz_fold(s, size, cut, BF_MAX_ARTIFACT_FOLDED, &split, &ss, &os);
	if (rw != rs || sw != ss || ow != os || whole.len != split.len ||
	    (whole.len > 0 && memcmp(whole.data, split.data, whole.len) != 0))
		abort();
	if (rw != 0)
		goto out;	/* only memory or the cap: neither is reachable here */
	fz_check_folded(whole.data, whole.len, sw);
	rm = fz_fold(s, size, cut, FZ_SMALL_CAP, &small, &sm, &om);
	if (rm == 0 && (small.len > FZ_SMALL_CAP || small.len != whole.len ||
	    (small.len > 0 && memcmp(small.data, whole.data, small.len) != 0)))
		abort();
	if (rm != 0 && (rm != BF_ERR_TOOBIG || whole.len <= FZ_SMALL_CAP))
		abort();
	if (sw == 0) {
		if (whole.len != 0)
			abort();
		goto out;
	}
	bf_diag_clear(&d);
	if (flame_svg(whole.data, whole.len, "fuzz", &svg, &d) != 0 || svg.len == 0 ||
	    memmem(svg.data, svg.len, "<script", 7) != NULL ||
	    memmem(svg.data, svg.len, "<svg", 4) == NULL)
		abort();
	if (profdiff_one(whole.data, whole.len, &p, &d) != 0 || p->samples_a != sw ||
	    p->bad_a != 0)
		abort();
out:
	profdiff_free(p);
	buf_free(&whole);
	buf_free(&split);
	buf_free(&small);
	buf_free(&svg);
	return 0;
}
