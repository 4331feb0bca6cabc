/*
 * profdiff.c: self and inclusive shares of every symbol of two profiles,
 * and the symbols whose shares moved most; or of one profile, its
 * heaviest symbols.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "fold.h"
#include "profdiff.h"

/* Counts of one profile: a = self samples, b = inclusive, stamp = the last
 * line that counted it inclusively (so a recursion counts once). */
static int
profdiff_count(const char *t, size_t len, struct fold_map *m, uint64_t *samples, size_t *bad,
    const char *which, struct bf_diag *d)
{
	size_t i, e, sl, f, j, line = 0;
	uint64_t cnt;
	struct fold_ent *en;
	int r;

	if (len > BF_MAX_ARTIFACT_FOLDED) {
		bf_diag_set(d, which, "%zu bytes of folded stacks; at most %d", len,
		    BF_MAX_ARTIFACT_FOLDED);
		return BF_ERR_TOOBIG;
	}
	for (i = 0; i < len; i = e + 1) {
		for (e = i; e < len && t[e] != '\n'; e++)
			;
		if (e == i)
			continue;
		if (fold_parse_line(t + i, e - i, &sl, &cnt) != 0 || *samples + cnt < *samples) {
			(*bad)++;
			continue;
		}
		*samples += cnt;
		line++;
		/* frame 0 is the comm */
		for (f = i; f < i + sl && t[f] != ';'; f++)
			;
		while (f < i + sl) {
			f++;
			for (j = f; j < i + sl && t[j] != ';'; j++)
				;
			if ((r = fold_map_add(m, t + f, j - f, j == i + sl ? cnt : 0, 0)) != 0)
				return r;
			en = fold_map_get(m, t + f, j - f);
			if (en->stamp != line) {
				en->stamp = line;
				en->b += cnt;
			}
			f = j;
		}
	}
	if (*samples == 0) {
		bf_diag_set(d, which, "no stack with a sample");
		return BF_ERR_INVALID;
	}
	return 0;
}

static double
profdiff_move(const struct profdiff_row *r)
{
	double s = fabs(r->self_b - r->self_a), i = fabs(r->incl_b - r->incl_a);

	return s > i ? s : i;
}

static int
profdiff_row_cmp(const void *x, const void *y)
{
	const struct profdiff_row *a = x, *b = y;
	double ma = profdiff_move(a), mb = profdiff_move(b);

	if (ma != mb)
		return ma > mb ? -1 : 1;
	return strcmp(a->symbol, b->symbol);
}

static int
profdiff_put(struct profdiff *p, const struct fold_map *ma, const struct fold_map *mb,
    const struct fold_ent *e)
{
	const struct fold_ent *ea = fold_map_get(ma, e->key, e->len);
	const struct fold_ent *eb = fold_map_get(mb, e->key, e->len);
	struct profdiff_row *row = &p->rows[p->n];
	struct buf s;
	int r;

	buf_init(&s, BF_MAX_FOLD_SYMBOL + 1);
	if ((r = fold_clean(&s, e->key, e->len, BF_MAX_FOLD_SYMBOL, 0)) != 0 ||
	    (row->symbol = buf_steal(&s)) == NULL) {
		buf_free(&s);
		return r != 0 ? r : BF_ERR_ALLOC;
	}
	row->self_a = ea != NULL ? 100.0 * (double)ea->a / (double)p->samples_a : 0;
	row->incl_a = ea != NULL ? 100.0 * (double)ea->b / (double)p->samples_a : 0;
	row->self_b = eb != NULL ? 100.0 * (double)eb->a / (double)p->samples_b : 0;
	row->incl_b = eb != NULL ? 100.0 * (double)eb->b / (double)p->samples_b : 0;
	p->n++;
	return 0;
}

/* One profile: heaviest self share first, then inclusive, then name. */
static int
profdiff_top_cmp(const void *x, const void *y)
{
	const struct profdiff_row *a = x, *b = y;

	if (a->self_a != b->self_a)
		return a->self_a > b->self_a ? -1 : 1;
	if (a->incl_a != b->incl_a)
		return a->incl_a > b->incl_a ? -1 : 1;
	return strcmp(a->symbol, b->symbol);
}

/* Both profiles' rows, or A's alone when b is NULL (B's shares stay 0). */
static int
profdiff_build(const char *a, size_t alen, const char *b, size_t blen,
    struct profdiff **out, struct bf_diag *d)
{
	struct fold_map ma, mb;
	struct profdiff *p = NULL;
	size_t i;
	int r;

	fold_map_init(&ma, BF_MAX_ARTIFACT_FOLDED);
	fold_map_init(&mb, BF_MAX_ARTIFACT_FOLDED);
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = profdiff_count(a, alen, &ma, &p->samples_a, &p->bad_a, "a", d)) != 0 ||
	    (b != NULL && (r = profdiff_count(b, blen, &mb, &p->samples_b, &p->bad_b, "b",
	    d)) != 0))
		goto out;
	if ((p->rows = calloc(ma.n + mb.n + 1, sizeof(*p->rows))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < ma.cap; i++)
		if (ma.ent[i].key != NULL && (r = profdiff_put(p, &ma, &mb, &ma.ent[i])) != 0)
			goto out;
	for (i = 0; i < mb.cap; i++)
		if (mb.ent[i].key != NULL && fold_map_get(&ma, mb.ent[i].key,
		    mb.ent[i].len) == NULL && (r = profdiff_put(p, &ma, &mb, &mb.ent[i])) != 0)
			goto out;
	qsort(p->rows, p->n, sizeof(*p->rows), b != NULL ? profdiff_row_cmp : profdiff_top_cmp);
	*out = p;
	p = NULL;
	r = 0;
out:
	fold_map_free(&ma);
	fold_map_free(&mb);
	profdiff_free(p);
	return r;
}

int
profdiff_compute(const char *a, size_t alen, const char *b, size_t blen,
    struct profdiff **out, struct bf_diag *d)
{
	*out = NULL;
	if (b == NULL)
		b = "";
	return profdiff_build(a, alen, b, blen, out, d);
}

int
profdiff_one(const char *a, size_t alen, struct profdiff **out, struct bf_diag *d)
{
	*out = NULL;
	return profdiff_build(a, alen, NULL, 0, out, d);
}

int
profdiff_render_top(const struct profdiff *p, size_t top, const char *label, struct buf *out)
{
	size_t i, n = top > 0 && top < p->n ? top : p->n;
	int r;

	if ((r = buf_printf(out, "%s: %llu samples, %zu symbols\n"
	    "shares in %% of the samples: self (innermost frame), inclusive (on the stack)\n\n"
	    "%7s %7s  %s\n", label, (unsigned long long)p->samples_a, p->n, "self",
	    "incl", "symbol")) != 0)
		return r;
	for (i = 0; i < n; i++)
		if ((r = buf_printf(out, "%7.2f %7.2f  %s\n", p->rows[i].self_a, p->rows[i].incl_a,
		    p->rows[i].symbol)) != 0)
			return r;
	if (n < p->n && (r = buf_printf(out, "(%zu more symbols; --top N shows more)\n",
	    p->n - n)) != 0)
		return r;
	if (p->bad_a > 0 && (r = buf_printf(out, "skipped %zu lines that are not "
	    "\"STACK COUNT\"\n", p->bad_a)) != 0)
		return r;
	return 0;
}

json_t *
profdiff_json(const struct profdiff *p, size_t top, int one)
{
	size_t i, n = top > 0 && top < p->n ? top : p->n;
	json_t *rows, *row;

	if ((rows = json_array()) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		const struct profdiff_row *w = &p->rows[i];

		row = one ? json_pack("{s:s,s:f,s:f}", "symbol", w->symbol, "self_pct", w->self_a,
		    "incl_pct", w->incl_a) : json_pack("{s:s,s:f,s:f,s:f,s:f,s:f,s:f}", "symbol",
		    w->symbol, "self_a_pct", w->self_a, "self_b_pct", w->self_b, "self_change_pp",
		    w->self_b - w->self_a, "incl_a_pct", w->incl_a, "incl_b_pct", w->incl_b,
		    "incl_change_pp", w->incl_b - w->incl_a);
		if (row == NULL || json_array_append_new(rows, row) != 0) {
			json_decref(rows);
			return NULL;
		}
	}
	return one ? json_pack("{s:I,s:I,s:I,s:o}", "samples", (json_int_t)p->samples_a,
	    "symbols", (json_int_t)p->n, "skipped_lines", (json_int_t)p->bad_a, "rows", rows) :
	    json_pack("{s:I,s:I,s:I,s:I,s:I,s:o}", "samples_a", (json_int_t)p->samples_a,
	    "samples_b", (json_int_t)p->samples_b, "symbols", (json_int_t)p->n,
	    "skipped_lines_a", (json_int_t)p->bad_a, "skipped_lines_b", (json_int_t)p->bad_b,
	    "rows", rows);	/* "o" takes rows, or drops it when packing fails */
}

int
profdiff_render_text(const struct profdiff *p, size_t top, const char *label_a,
    const char *label_b, struct buf *out)
{
	size_t i, n = top > 0 && top < p->n ? top : p->n;
	int r;

	if ((r = buf_printf(out, "A: %s, %llu samples\nB: %s, %llu samples\n"
	    "shares in %% of each profile's samples; change in percentage points\n\n"
	    "%7s %7s %8s  %7s %7s %8s  %s\n", label_a, (unsigned long long)p->samples_a,
	    label_b, (unsigned long long)p->samples_b, "self A", "self B", "change",
	    "incl A", "incl B", "change", "symbol")) != 0)
		return r;
	for (i = 0; i < n; i++) {
		const struct profdiff_row *w = &p->rows[i];

		if ((r = buf_printf(out, "%7.2f %7.2f %+8.2f  %7.2f %7.2f %+8.2f  %s\n",
		    w->self_a, w->self_b, w->self_b - w->self_a, w->incl_a, w->incl_b,
		    w->incl_b - w->incl_a, w->symbol)) != 0)
			return r;
	}
	if (n < p->n && (r = buf_printf(out, "(%zu more symbols; --top N shows more)\n",
	    p->n - n)) != 0)
		return r;
	if ((p->bad_a > 0 || p->bad_b > 0) && (r = buf_printf(out, "skipped lines that are "
	    "not \"STACK COUNT\": A %zu, B %zu\n", p->bad_a, p->bad_b)) != 0)
		return r;
	return 0;
}

void
profdiff_free(struct profdiff *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++)
		free(p->rows[i].symbol);
	free(p->rows);
	free(p);
}
