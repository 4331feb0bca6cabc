/*
 * flame.c: folded stacks drawn as an SVG flame graph. The lines are sorted
 * in frame order (fold_stack_cmp_str), so a frame's stacks are contiguous:
 * one pass keeps only the path from the root to the current frame, and a
 * frame is drawn when it leaves the path, its width then final. Memory is
 * the sorted line index plus one path, whatever the profile.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "flame.h"
#include "fold.h"

#define FLAME_PAD	10	/* px around the graph */
#define FLAME_TOP	40	/* px: title and subtitle */
#define FLAME_CHAR_PX	6.6	/* width of a character at font-size 11, monospace */
#define FLAME_MAX_DEPTH	(BF_MAX_FOLD_FRAMES + 2)	/* comm, [truncated], frames */

struct flame_line {
	const char *s;
	size_t len;		/* of the stack */
	uint64_t count;
};

struct flame_node {
	const char *name;
	size_t len;
	uint64_t x, total;	/* in samples */
};

struct flame_ctx {
	struct buf *out;
	uint64_t samples;
	size_t depth_max;
	double scale;		/* px per sample */
	size_t narrow;		/* frames too narrow to draw */
	struct flame_node path[FLAME_MAX_DEPTH + 1];
	size_t npath;
};

int
flame_put_esc(struct buf *out, const char *s, size_t len, size_t max)
{
	struct buf c;
	size_t i;
	int r = 0;

	buf_init(&c, max + 1);
	if ((r = fold_clean(&c, s, len, max, 0)) != 0)
		goto out;
	for (i = 0; i < c.len && r == 0; i++) {
		switch (c.data[i]) {
		case '&': r = buf_puts(out, "&amp;"); break;
		case '<': r = buf_puts(out, "&lt;"); break;
		case '>': r = buf_puts(out, "&gt;"); break;
		case '"': r = buf_puts(out, "&quot;"); break;
		case '\'': r = buf_puts(out, "&#39;"); break;
		default: r = buf_append(out, &c.data[i], 1); break;
		}
	}
out:
	buf_free(&c);
	return r;
}

static int
flame_line_cmp(const void *a, const void *b)
{
	const struct flame_line *x = a, *y = b;

	return fold_stack_cmp_str(x->s, x->len, y->s, y->len);
}

/* A warm colour from the name, so a frame keeps its colour between graphs. */
static void
flame_colour(const char *s, size_t n, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	*r = 205 + (int)(h % 50);
	*g = 80 + (int)((h >> 8) % 130);
	*b = 40 + (int)((h >> 16) % 40);
}

/* Bytes of s[0..n) that fit in chars characters, cut at a UTF-8 boundary. */
static size_t
flame_fit(const char *s, size_t n, size_t chars)
{
	size_t i = 0, c = 0;

	while (i < n && c < chars) {
		i++;
		while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		c++;
	}
	return i;
}

/* One frame: its rectangle, its tooltip and, when it fits, its label. */
static int
flame_draw(struct flame_ctx *c, const struct flame_node *nd, size_t depth)
{
	double x = FLAME_PAD + (double)nd->x * c->scale, w = (double)nd->total * c->scale;
	double y = FLAME_TOP + (double)(c->depth_max - depth) * FLAME_ROW;
	size_t fit, chars;
	int r, cr, cg, cb;

	if (w < FLAME_MIN_PX) {
		c->narrow++;
		return 0;
	}
	flame_colour(nd->name, nd->len, &cr, &cg, &cb);
	if ((r = buf_puts(c->out, "<g><title>")) != 0 ||
	    (r = flame_put_esc(c->out, nd->name, nd->len, BF_MAX_FOLD_SYMBOL)) != 0 ||
	    (r = buf_printf(c->out, " (%llu samples, %.2f%%)</title><rect x=\"%.2f\" "
	    "y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>",
	    (unsigned long long)nd->total, 100.0 * (double)nd->total / (double)c->samples, x, y,
	    w, FLAME_ROW - 1, cr, cg, cb)) != 0)
		return r;
	chars = w > 6 ? (size_t)((w - 6) / FLAME_CHAR_PX) : 0;
	if (chars >= 3) {
		fit = flame_fit(nd->name, nd->len, chars);
		if (fit < nd->len)
			fit = flame_fit(nd->name, nd->len, chars - 2);
		if ((r = buf_printf(c->out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3,
		    y + FLAME_ROW - 4)) != 0 ||
		    (r = flame_put_esc(c->out, nd->name, fit, BF_MAX_FOLD_SYMBOL)) != 0 ||
		    (r = buf_puts(c->out, fit < nd->len ? "..</text>" : "</text>")) != 0)
			return r;
	}
	return buf_puts(c->out, "</g>\n");
}

/* Frames deeper than keep leave the path: drawn now, their width final. */
static int
flame_pop(struct flame_ctx *c, size_t keep)
{
	int r;

	while (c->npath > keep) {
		c->npath--;
		if ((r = flame_draw(c, &c->path[c->npath], c->npath)) != 0)
			return r;
	}
	return 0;
}

static int
flame_add(struct flame_ctx *c, const struct flame_line *ln, uint64_t x)
{
	size_t d = 1, i = 0, j;
	int r;

	c->path[0].total += ln->count;
	while (i <= ln->len && d <= FLAME_MAX_DEPTH) {
		for (j = i; j < ln->len && ln->s[j] != ';'; j++)
			;
		if (d < c->npath && (c->path[d].len != j - i ||
		    memcmp(c->path[d].name, ln->s + i, j - i) != 0) &&
		    (r = flame_pop(c, d)) != 0)
			return r;
		if (d >= c->npath) {
			c->path[d].name = ln->s + i;
			c->path[d].len = j - i;
			c->path[d].x = x;
			c->path[d].total = 0;
			c->npath = d + 1;
		}
		c->path[d].total += ln->count;
		d++;
		i = j + 1;
	}
	return flame_pop(c, d);
}

int
flame_svg(const char *folded, size_t len, const char *title, struct buf *out,
    struct bf_diag *d)
{
	struct flame_line *ln = NULL;
	struct flame_ctx *c = NULL;
	size_t n = 0, cap = 0, bad = 0, i, e, sl, depth;
	uint64_t cnt, x = 0;
	double h;
	int r;

	if (len > BF_MAX_ARTIFACT_FOLDED) {
		bf_diag_set(d, "folded", "%zu bytes; at most %d", len, BF_MAX_ARTIFACT_FOLDED);
		return BF_ERR_TOOBIG;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return BF_ERR_ALLOC;
	c->out = out;
	for (i = 0; i < len; i = e + 1) {
		for (e = i; e < len && folded[e] != '\n'; e++)
			;
		if (e == i)
			continue;
		if (fold_parse_line(folded + i, e - i, &sl, &cnt) != 0 ||
		    c->samples + cnt < c->samples) {
			bad++;
			continue;
		}
		if (n == cap) {
			struct flame_line *nl;

			cap = cap ? cap * 2 : 256;
			if ((nl = realloc(ln, cap * sizeof(*ln))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			ln = nl;
		}
		ln[n].s = folded + i;
		ln[n].len = sl;
		ln[n].count = cnt;
		for (depth = 1, sl = 0; sl < ln[n].len; sl++)
			depth += ln[n].s[sl] == ';';
		if (depth > c->depth_max)
			c->depth_max = depth > FLAME_MAX_DEPTH ? FLAME_MAX_DEPTH : depth;
		c->samples += cnt;
		n++;
	}
	if (c->samples == 0) {
		bf_diag_set(d, "folded", "no stack with a sample (%zu lines not \"STACK COUNT\")",
		    bad);
		r = BF_ERR_INVALID;
		goto out;
	}
	qsort(ln, n, sizeof(*ln), flame_line_cmp);
	c->scale = (double)(FLAME_WIDTH - 2 * FLAME_PAD) / (double)c->samples;
	h = FLAME_TOP + (double)(c->depth_max + 1) * FLAME_ROW + FLAME_PAD;
	if ((r = buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
	    "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"monospace\" "
	    "font-size=\"11\">\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" "
	    "fill=\"#fdfaf3\"/>\n<text x=\"%d\" y=\"18\" font-size=\"14\">", FLAME_WIDTH, h,
	    FLAME_WIDTH, h, FLAME_WIDTH, h, FLAME_PAD)) != 0 ||
	    (r = flame_put_esc(out, title != NULL ? title : "flame graph",
	    title != NULL ? strlen(title) : 11, 512)) != 0 ||
	    (r = buf_printf(out, "</text>\n<text x=\"%d\" y=\"32\">%llu samples",
	    FLAME_PAD, (unsigned long long)c->samples)) != 0 ||
	    (bad > 0 && (r = buf_printf(out, "; %zu lines skipped", bad)) != 0) ||
	    (r = buf_puts(out, "</text>\n")) != 0)
		goto out;
	c->path[0].name = "all";
	c->path[0].len = 3;
	c->npath = 1;
	for (i = 0; i < n; i++) {
		if ((r = flame_add(c, &ln[i], x)) != 0)
			goto out;
		x += ln[i].count;
	}
	if ((r = flame_pop(c, 0)) != 0 ||
	    (c->narrow > 0 && (r = buf_printf(out, "<text x=\"%d\" y=\"%.0f\">%zu frames "
	    "narrower than %.1f px not drawn</text>\n", FLAME_PAD, h - 2, c->narrow,
	    FLAME_MIN_PX)) != 0) ||
	    (r = buf_puts(out, "</svg>\n")) != 0)
		goto out;
	r = 0;
out:
	free(ln);
	free(c);
	return r;
}
