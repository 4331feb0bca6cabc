/*
 * table.c: aligned plain-text tables (see table.h). Every cell passes
 * through table_sanitize, so nothing a lab machine printed can reach the
 * user's terminal as an escape sequence.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "table.h"

#define TABLE_GAP	2	/* spaces between columns */
#define TABLE_ELLIPSIS	"..."
#define TABLE_ELLIPSIS_LEN	(sizeof(TABLE_ELLIPSIS) - 1)

/*
 * Length in bytes of the well-formed, printable UTF-8 sequence at s, or 0
 * when the byte at s must be replaced. Rejects overlongs, surrogates,
 * code points past U+10FFFF and the C1 controls (U+0080..U+009F, which
 * some terminals obey as CSI and friends).
 */
static size_t
table_seq(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0x80)
		return (s[0] < 0x20 || s[0] == 0x7f) ? 0 : 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		/* A NUL terminator fails this test too, so we never run past it. */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0xa0) || (n == 3 && cp < 0x800) ||
	    (n == 3 && cp >= 0xd800 && cp <= 0xdfff) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

size_t
table_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t w = 0;

	if (s == NULL)
		return 0;
	for (; *p != '\0'; p++)
		if ((*p & 0xc0) != 0x80)
			w++;
	return w;
}

char *
table_sanitize(const char *s, size_t max)
{
	const unsigned char *p;
	char *out = NULL, *o;
	size_t n, len, w = 0, keep, total;

	if (s == NULL)
		s = "";
	len = strlen(s);
	/* Output is never longer than the input, plus the ellipsis. */
	if (len > SIZE_MAX - sizeof(TABLE_ELLIPSIS))
		return NULL;
	if ((out = malloc(len + sizeof(TABLE_ELLIPSIS))) == NULL)
		return NULL;

	/* Count code points after replacement to know whether to cut. */
	total = 0;
	for (p = (const unsigned char *)s; *p != '\0'; p += n, total++)
		if ((n = table_seq(p)) == 0)
			n = 1;
	keep = total;
	if (max > 0 && total > max)
		keep = max > TABLE_ELLIPSIS_LEN ? max - TABLE_ELLIPSIS_LEN : max;

	o = out;
	for (p = (const unsigned char *)s; *p != '\0' && w < keep; p += n, w++) {
		if ((n = table_seq(p)) == 0) {
			n = 1;
			*o++ = (*p == '\t' || *p == '\n' || *p == '\r') ? ' ' : '?';
		} else {
			memcpy(o, p, n);
			o += n;
		}
	}
	if (keep < total && max > TABLE_ELLIPSIS_LEN) {
		memcpy(o, TABLE_ELLIPSIS, TABLE_ELLIPSIS_LEN);
		o += TABLE_ELLIPSIS_LEN;
	}
	*o = '\0';
	return out;
}

int
table_init(struct table *t, const struct table_col *cols, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	if (cols == NULL || ncols == 0)
		return BF_ERR_INVALID;
	t->cols = cols;
	t->ncols = ncols;
	return 0;
}

int
table_add_row(struct table *t, const char *const *cells)
{
	char **row = NULL, **grown;
	size_t i, ncap;
	int r;

	if (t->nrows == t->cap) {
		ncap = t->cap == 0 ? 16 : t->cap * 2;
		if (ncap > SIZE_MAX / sizeof(char *) / t->ncols) {
			r = BF_ERR_TOOBIG;
			goto out;
		}
		if ((grown = realloc(t->cells, ncap * t->ncols * sizeof(char *))) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		t->cells = grown;
		t->cap = ncap;
	}
	if ((row = calloc(t->ncols, sizeof(char *))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < t->ncols; i++) {
		row[i] = table_sanitize(cells[i] != NULL ? cells[i] : "-", t->cols[i].max);
		if (row[i] == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	memcpy(t->cells + t->nrows * t->ncols, row, t->ncols * sizeof(char *));
	t->nrows++;
	free(row);
	row = NULL;
	r = 0;
out:
	if (row != NULL) {
		for (i = 0; i < t->ncols; i++)
			free(row[i]);
		free(row);
	}
	return r;
}

static int
table_pad(struct buf *out, size_t n)
{
	static const char spaces[] = "                                ";
	size_t k;
	int r = 0;

	while (n > 0 && r == 0) {
		k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;
		r = buf_append(out, spaces, k);
		n -= k;
	}
	return r;
}

/* One line: cells[0..ncols), padded to widths, with no trailing spaces
 * (an empty last cell would otherwise leave the padding before it). */
static int
table_line(const struct table *t, const size_t *widths, const char *const *cells,
    struct buf *out)
{
	size_t i, w, start = out->len;
	int r;

	for (i = 0; i < t->ncols; i++) {
		w = table_width(cells[i]);
		if (i > 0 && (r = table_pad(out, TABLE_GAP)) != 0)
			return r;
		if (t->cols[i].align == TABLE_RIGHT && (r = table_pad(out, widths[i] - w)) != 0)
			return r;
		if ((r = buf_puts(out, cells[i])) != 0)
			return r;
		if (t->cols[i].align != TABLE_RIGHT && i + 1 < t->ncols &&
		    (r = table_pad(out, widths[i] - w)) != 0)
			return r;
	}
	while (out->len > start && out->data[out->len - 1] == ' ')
		out->data[--out->len] = '\0';
	return buf_append(out, "\n", 1);
}

int
table_render(const struct table *t, struct buf *out)
{
	size_t *widths = NULL, i, j, w;
	const char **heads = NULL;
	char **heads_owned = NULL;
	int r;

	if ((widths = calloc(t->ncols, sizeof(*widths))) == NULL ||
	    (heads = calloc(t->ncols, sizeof(*heads))) == NULL ||
	    (heads_owned = calloc(t->ncols, sizeof(*heads_owned))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < t->ncols; i++) {
		if ((heads_owned[i] = table_sanitize(t->cols[i].head, 0)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		heads[i] = heads_owned[i];
		widths[i] = table_width(heads[i]);
	}
	for (j = 0; j < t->nrows; j++)
		for (i = 0; i < t->ncols; i++)
			if ((w = table_width(t->cells[j * t->ncols + i])) > widths[i])
				widths[i] = w;
	if ((r = table_line(t, widths, heads, out)) != 0)
		goto out;
	for (j = 0; j < t->nrows; j++)
		if ((r = table_line(t, widths, (const char *const *)t->cells + j * t->ncols,
		    out)) != 0)
			goto out;
	r = 0;
out:
	if (heads_owned != NULL)
		for (i = 0; i < t->ncols; i++)
			free(heads_owned[i]);
	free(heads_owned);
	free(heads);
	free(widths);
	return r;
}

int
table_print(const struct table *t, FILE *f)
{
	struct buf b;
	int r;

	buf_init(&b, 0);
	if ((r = table_render(t, &b)) != 0)
		goto out;
	if (b.len > 0 && fwrite(b.data, 1, b.len, f) != b.len) {
		r = BF_ERR_IO;
		goto out;
	}
	r = 0;
out:
	buf_free(&b);
	return r;
}

void
table_free(struct table *t)
{
	size_t i;

	if (t == NULL)
		return;
	if (t->cells != NULL)
		for (i = 0; i < t->nrows * t->ncols; i++)
			free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}
