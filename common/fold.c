/*
 * fold.c: perf script's call chains folded into "comm;outer;...;inner N"
 * lines (what Brendan Gregg's stackcollapse-perf.pl makes, written here so
 * the static agent needs nothing else), and those lines read back.
 *
 * The input is perf script -F comm,tid,ip,sym,dso: an event is a header
 * line ("comm TID", comm may hold spaces), then one frame per line starting
 * with whitespace ("ADDR SYMBOL (DSO)", innermost first), then a blank
 * line. Anything else is counted as odd and skipped: perf's text is made
 * of names a binary chose.
 */
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "err.h"
#include "fold.h"

#define FOLD_UNKNOWN	"[unknown]"
#define FOLD_TRUNCATED	"[truncated]"
#define FOLD_MAX_COUNT	(1ULL << 53)	/* exact in a double, as JSON readers need */

static uint64_t
fold_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

void
fold_map_init(struct fold_map *m, size_t max_bytes)
{
	memset(m, 0, sizeof(*m));
	m->max_bytes = max_bytes;
}

static struct fold_ent *
fold_map_slot(const struct fold_ent *ent, size_t cap, const char *key, size_t len)
{
	size_t i = (size_t)fold_hash(key, len) & (cap - 1);

	while (ent[i].key != NULL && (ent[i].len != len || memcmp(ent[i].key, key, len) != 0))
		i = (i + 1) & (cap - 1);
	return (struct fold_ent *)&ent[i];
}

static int
fold_map_grow(struct fold_map *m)
{
	struct fold_ent *ne, *s;
	size_t ncap = m->cap ? m->cap * 2 : 64, i;

	if (ncap < m->cap || ncap > SIZE_MAX / sizeof(*ne))
		return BF_ERR_ALLOC;
	if ((ne = calloc(ncap, sizeof(*ne))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < m->cap; i++) {
		if (m->ent[i].key == NULL)
			continue;
		s = fold_map_slot(ne, ncap, m->ent[i].key, m->ent[i].len);
		*s = m->ent[i];
	}
	free(m->ent);
	m->ent = ne;
	m->cap = ncap;
	return 0;
}

struct fold_ent *
fold_map_get(const struct fold_map *m, const char *key, size_t len)
{
	struct fold_ent *e;

	if (m->cap == 0)
		return NULL;
	e = fold_map_slot(m->ent, m->cap, key, len);
	return e->key != NULL ? e : NULL;
}

int
fold_map_add(struct fold_map *m, const char *key, size_t len, uint64_t a, uint64_t b)
{
	struct fold_ent *e;
	int r;

	if ((e = fold_map_get(m, key, len)) == NULL) {
		if (len > m->max_bytes || m->bytes > m->max_bytes - len)
			return BF_ERR_TOOBIG;
		if ((m->n + 1) * 2 > m->cap && (r = fold_map_grow(m)) != 0)
			return r;
		e = fold_map_slot(m->ent, m->cap, key, len);
		if ((e->key = malloc(len + 1)) == NULL)
			return BF_ERR_ALLOC;
		memcpy(e->key, key, len);
		e->key[len] = '\0';
		e->len = len;
		e->a = e->b = e->stamp = 0;
		m->n++;
		m->bytes += len;
	}
	e->a = e->a + a < e->a ? UINT64_MAX : e->a + a;
	e->b = e->b + b < e->b ? UINT64_MAX : e->b + b;
	return 0;
}

void
fold_map_sort(struct fold_map *m, int (*cmp)(const void *, const void *))
{
	size_t i, k = 0;

	for (i = 0; i < m->cap; i++)
		if (m->ent[i].key != NULL)
			m->ent[k++] = m->ent[i];
	for (i = k; i < m->cap; i++)
		m->ent[i].key = NULL;
	if (k > 1)
		qsort(m->ent, k, sizeof(*m->ent), cmp);
}

void
fold_map_free(struct fold_map *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->cap; i++)
		free(m->ent[i].key);
	free(m->ent);
	memset(m, 0, sizeof(*m));
}

int
fold_stack_cmp_str(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i;
	int ca, cb;

	for (i = 0; i < alen && i < blen; i++) {
		/* ';' below every byte: "a;b" "a;b;c" "a;b!" keeps a's subtree together */
		ca = a[i] == ';' ? 0 : (unsigned char)a[i] + 1;
		cb = b[i] == ';' ? 0 : (unsigned char)b[i] + 1;
		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	return alen < blen ? -1 : alen > blen;
}

int
fold_stack_cmp(const void *a, const void *b)
{
	const struct fold_ent *x = a, *y = b;

	return fold_stack_cmp_str(x->key, x->len, y->key, y->len);
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 when it is not one. */
static size_t
fold_utf8_len(const unsigned char *s, size_t n)
{
	size_t k, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < k)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF */
	if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

int
fold_clean(struct buf *out, const char *s, size_t len, size_t max, int no_semicolon)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k, w = 0;
	char c;
	int r;

	while (i < len) {
		k = fold_utf8_len(u + i, len - i);
		if (k > 1) {
			if (w + k > max)
				break;
			if ((r = buf_append(out, s + i, k)) != 0)
				return r;
			i += k;
			w += k;
			continue;
		}
		if (w + 1 > max)
			break;
		c = s[i];
		if (k == 0 || u[i] < 0x20 || u[i] == 0x7f)
			c = '?';
		else if (c == ';' && no_semicolon)
			c = ':';
		if ((r = buf_append(out, &c, 1)) != 0)
			return r;
		i++;
		w++;
	}
	return 0;
}

static int
fold_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static void
fold_event_clear(struct fold *f)
{
	size_t i;

	for (i = 0; i < f->nframes; i++)
		free(f->frames[i]);
	f->nframes = 0;
	free(f->comm);
	f->comm = NULL;
	f->in_event = 0;
}

void
fold_init(struct fold *f, size_t max_out)
{
	memset(f, 0, sizeof(*f));
	/* the keys alone passing the cap already make the text too big */
	fold_map_init(&f->stacks, max_out);
	buf_init(&f->line, BF_MAX_FOLD_LINE);
}

void
fold_free(struct fold *f)
{
	if (f == NULL)
		return;
	fold_event_clear(f);
	free(f->frames);
	f->frames = NULL;
	fold_map_free(&f->stacks);
	buf_free(&f->line);
}

/* A clean copy of s[0..len): "[unknown]" when nothing of it is left. */
static int
fold_dup_clean(const char *s, size_t len, char **out)
{
	struct buf b;
	int r;

	buf_init(&b, BF_MAX_FOLD_SYMBOL + 1);
	if ((r = fold_clean(&b, s, len, BF_MAX_FOLD_SYMBOL, 1)) != 0 ||
	    (b.len == 0 && (r = buf_puts(&b, FOLD_UNKNOWN)) != 0)) {
		buf_free(&b);
		return r;
	}
	*out = buf_steal(&b);
	return *out != NULL ? 0 : BF_ERR_ALLOC;
}

/* The event in progress as one stack: comm, then its frames outermost first. */
static int
fold_flush(struct fold *f)
{
	struct buf key;
	size_t i, n;
	int r = 0;

	if (!f->in_event)
		return 0;
	n = f->nframes;
	if (n > BF_MAX_FOLD_FRAMES) {
		n = BF_MAX_FOLD_FRAMES;	/* the innermost are kept: they have the self time */
		f->truncated++;
	}
	buf_init(&key, (BF_MAX_FOLD_FRAMES + 3) * (BF_MAX_FOLD_SYMBOL + 1));
	r = buf_puts(&key, f->comm != NULL ? f->comm : FOLD_UNKNOWN);
	if (r == 0 && n < f->nframes)
		r = buf_puts(&key, ";" FOLD_TRUNCATED);
	for (i = n; r == 0 && i > 0; i--)
		if ((r = buf_puts(&key, ";")) == 0)
			r = buf_puts(&key, f->frames[i - 1]);
	if (r == 0)
		r = fold_map_add(&f->stacks, key.data, key.len, 1, 0);
	if (r == 0)
		f->samples++;
	buf_free(&key);
	fold_event_clear(f);
	return r;
}

/* "comm TID": comm is what is left when the last word is a number. */
static int
fold_header(struct fold *f, const char *s, size_t len)
{
	size_t end = len, w;

	while (end > 0 && fold_is_space(s[end - 1]))
		end--;
	w = end;
	while (w > 0 && s[w - 1] >= '0' && s[w - 1] <= '9')
		w--;
	if (w < end && w > 0 && fold_is_space(s[w - 1])) {
		end = w;
		while (end > 0 && fold_is_space(s[end - 1]))
			end--;
	}
	w = 0;
	while (w < end && fold_is_space(s[w]))
		w++;
	f->in_event = 1;
	return fold_dup_clean(s + w, end - w, &f->comm);
}

/* "ADDR SYMBOL (DSO)": SYMBOL, or "[dso]" when perf has no name for it. */
static int
fold_frame(struct fold *f, const char *s, size_t len)
{
	size_t i = 0, a, end, so, dso = 0, dsolen = 0, k;
	char **nf, tmp[BF_MAX_FOLD_SYMBOL + 3];

	while (i < len && fold_is_space(s[i]))
		i++;
	a = i;
	while (i < len && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
		i++;
	if (i == a || i == len || !fold_is_space(s[i])) {
		f->odd++;
		return 0;
	}
	while (i < len && fold_is_space(s[i]))
		i++;
	end = len;
	while (end > i && fold_is_space(s[end - 1]))
		end--;
	/* the dso is the last " (...)" of the line */
	if (end > i && s[end - 1] == ')') {
		for (k = end - 1; k > i; k--)
			if (s[k] == '(' && fold_is_space(s[k - 1]))
				break;
		if (k > i || (k == i && s[k] == '(')) {
			dso = k + 1;
			dsolen = end - 1 - dso;
			end = k;
			while (end > i && fold_is_space(s[end - 1]))
				end--;
		}
	}
	so = end;	/* a "+0x1f" offset, when perf was asked for one */
	while (so > i && ((s[so - 1] >= '0' && s[so - 1] <= '9') ||
	    (s[so - 1] >= 'a' && s[so - 1] <= 'f')))
		so--;
	if (so >= i + 3 && so < end && s[so - 1] == 'x' && s[so - 2] == '0' && s[so - 3] == '+')
		end = so - 3;
	if (f->nframes >= BF_MAX_FOLD_FRAMES * 2) {
		f->odd++;	/* deeper than any real chain: the outermost are dropped */
		return 0;
	}
	if ((nf = realloc(f->frames, (f->nframes + 1) * sizeof(*nf))) == NULL)
		return BF_ERR_ALLOC;
	f->frames = nf;
	if ((end == i || (end - i == strlen(FOLD_UNKNOWN) &&
	    memcmp(s + i, FOLD_UNKNOWN, end - i) == 0)) && dsolen > 0 &&
	    !(dsolen == strlen(FOLD_UNKNOWN) && memcmp(s + dso, FOLD_UNKNOWN, dsolen) == 0)) {
		/* no symbol: name the object, by its base name */
		for (k = dso + dsolen; k > dso && s[k - 1] != '/'; k--)
			;
		if (dso + dsolen - k > BF_MAX_FOLD_SYMBOL)
			k = dso + dsolen - BF_MAX_FOLD_SYMBOL;
		tmp[0] = '[';
		memcpy(tmp + 1, s + k, dso + dsolen - k);
		tmp[1 + dso + dsolen - k] = ']';
		return fold_dup_clean(tmp, dso + dsolen - k + 2, &f->frames[f->nframes++]);
	}
	return fold_dup_clean(s + i, end - i, &f->frames[f->nframes++]);
}

int
fold_line(struct fold *f, const char *line, size_t len)
{
	size_t i;
	int r;

	if (f->err != 0)
		return f->err;
	for (i = 0; i < len && fold_is_space(line[i]); i++)
		;
	if (i == len)
		r = fold_flush(f);	/* blank: the event ends */
	else if (i > 0)
		r = f->in_event ? fold_frame(f, line, len) : (f->odd++, 0);
	else if ((r = fold_flush(f)) == 0)
		r = fold_header(f, line, len);
	if (r != 0)
		f->err = r;
	return r;
}

int
fold_feed(struct fold *f, const char *data, size_t len)
{
	const char *nl;
	size_t n, room;
	int r;

	while (len > 0) {
		nl = memchr(data, '\n', len);
		n = nl != NULL ? (size_t)(nl - data) : len;
		room = BF_MAX_FOLD_LINE - f->line.len;
		if (!f->line_over) {
			if (n > room) {
				f->line_over = 1;	/* the rest of this line is not kept */
				f->odd++;
			} else if ((r = buf_append(&f->line, data, n)) != 0) {
				return f->err = r;
			}
		}
		if (nl == NULL)
			return 0;
		r = f->line_over ? 0 : fold_line(f, f->line.data != NULL ? f->line.data : "",
		    f->line.len);
		buf_reset(&f->line);
		f->line_over = 0;
		if (r != 0)
			return r;
		data += n + 1;
		len -= n + 1;
	}
	return 0;
}

int
fold_finish(struct fold *f, struct buf *out)
{
	size_t i, need = 0;
	uint64_t c;
	int r;

	if (f->err == 0 && f->line.len > 0 && !f->line_over)
		(void)fold_line(f, f->line.data, f->line.len);
	buf_reset(&f->line);
	/* the last event has no blank line after it: its failure is as sticky */
	if (f->err == 0 && (r = fold_flush(f)) != 0)
		f->err = r;
	if (f->err != 0)
		return f->err;
	/* the exact size first: a profile that does not fit is dropped whole */
	for (i = 0; i < f->stacks.cap; i++) {
		if (f->stacks.ent[i].key == NULL)
			continue;
		need += f->stacks.ent[i].len + 3;	/* " N\n" */
		for (c = f->stacks.ent[i].a; c >= 10; c /= 10)
			need++;
		if (need > f->stacks.max_bytes)
			return BF_ERR_TOOBIG;
	}
	fold_map_sort(&f->stacks, fold_stack_cmp);
	for (i = 0; i < f->stacks.n; i++)
		if ((r = buf_printf(out, "%s %llu\n", f->stacks.ent[i].key,
		    (unsigned long long)f->stacks.ent[i].a)) != 0)
			return r;
	return 0;
}

int
fold_parse_line(const char *line, size_t len, size_t *stack_len, uint64_t *count)
{
	size_t i = len, digits;
	uint64_t v = 0;

	while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9')
		i--;
	digits = len - i;
	if (digits == 0 || digits > 16 || i < 2 || line[i - 1] != ' ' || line[i] == '0')
		return BF_ERR_PARSE;
	for (; i < len; i++)
		v = v * 10 + (uint64_t)(line[i] - '0');
	if (v > FOLD_MAX_COUNT)
		return BF_ERR_PARSE;
	*stack_len = len - digits - 1;
	*count = v;
	return 0;
}
