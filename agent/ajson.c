/*
 * ajson.c: strict JSON parser into a tree, and the string/number writer for
 * the agent's output lines. The step arrives over SSH from a coordinator we
 * trust only so far: every cap is enforced while parsing, before allocating.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ajson.h"
#include "parse.h"

struct ajson_parser {
	const unsigned char *p;
	size_t len;
	size_t pos;
	struct bf_diag *d;
};

static const char *const ajson_type_names[] = {
	[AJSON_NULL] = "null", [AJSON_BOOL] = "boolean", [AJSON_NUM] = "number",
	[AJSON_STR] = "string", [AJSON_ARR] = "array", [AJSON_OBJ] = "object",
};

const char *
ajson_type_name(enum ajson_type t)
{
	if ((size_t)t >= sizeof(ajson_type_names) / sizeof(ajson_type_names[0]))
		return "unknown";
	return ajson_type_names[t];
}

void
ajson_free(struct ajson *j)
{
	size_t i;

	if (j == NULL)
		return;
	for (i = 0; i < j->n; i++)
		ajson_free(j->items[i]);
	free(j->items);
	free(j->str);
	free(j->key);
	free(j);
}

const struct ajson *
ajson_get(const struct ajson *obj, const char *key)
{
	size_t i;

	if (obj == NULL || obj->type != AJSON_OBJ || key == NULL)
		return NULL;
	for (i = 0; i < obj->n; i++)
		if (strcmp(obj->items[i]->key, key) == 0)
			return obj->items[i];
	return NULL;
}

/*
 * Length of the valid UTF-8 sequence at p (n bytes available), or 0. Rejects
 * overlong forms, UTF-16 surrogates and code points above U+10FFFF, so what
 * we accept and what we print are both well-formed.
 */
static size_t
ajson_utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		if (n < 2 || (p[1] & 0xc0) != 0x80)
			return 0;
		return 2;
	}
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && p[1] < 0xa0)
			return 0;	/* overlong */
		if (c == 0xed && p[1] >= 0xa0)
			return 0;	/* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && p[1] < 0x90)
			return 0;	/* overlong */
		if (c == 0xf4 && p[1] >= 0x90)
			return 0;	/* above U+10FFFF */
		return 4;
	}
	return 0;
}

static int
ajson_fail(struct ajson_parser *jp, int r, const char *what)
{
	bf_diag_set(jp->d, NULL, "byte %zu: %s", jp->pos, what);
	return r;
}

static void
ajson_skip_ws(struct ajson_parser *jp)
{
	while (jp->pos < jp->len) {
		unsigned char c = jp->p[jp->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		jp->pos++;
	}
}

static int
ajson_new(enum ajson_type t, struct ajson **out)
{
	struct ajson *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return BF_ERR_ALLOC;
	j->type = t;
	*out = j;
	return 0;
}

static int
ajson_hex4(struct ajson_parser *jp, unsigned *out)
{
	unsigned v = 0;
	size_t i;

	if (jp->len - jp->pos < 4)
		return ajson_fail(jp, BF_ERR_PARSE, "truncated \\u escape");
	for (i = 0; i < 4; i++) {
		unsigned char c = jp->p[jp->pos + i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return ajson_fail(jp, BF_ERR_PARSE, "bad hex digit in \\u escape");
	}
	jp->pos += 4;
	*out = v;
	return 0;
}

static int
ajson_put_cp(struct buf *b, unsigned cp)
{
	unsigned char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | (cp >> 6));
		u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | (cp >> 12));
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xf0 | (cp >> 18));
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return buf_append(b, u, n);
}

/* A \u escape (after the "\u"), joining a surrogate pair; lone halves fail. */
static int
ajson_unicode(struct ajson_parser *jp, struct buf *b)
{
	unsigned hi, lo;
	int r;

	if ((r = ajson_hex4(jp, &hi)) != 0)
		return r;
	if (hi == 0)
		return ajson_fail(jp, BF_ERR_PARSE, "\\u0000 (NUL) in string");
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return ajson_fail(jp, BF_ERR_PARSE, "lone low surrogate");
	if (hi >= 0xd800 && hi <= 0xdbff) {
		if (jp->len - jp->pos < 2 || jp->p[jp->pos] != '\\' ||
		    jp->p[jp->pos + 1] != 'u')
			return ajson_fail(jp, BF_ERR_PARSE, "lone high surrogate");
		jp->pos += 2;
		if ((r = ajson_hex4(jp, &lo)) != 0)
			return r;
		if (lo < 0xdc00 || lo > 0xdfff)
			return ajson_fail(jp, BF_ERR_PARSE, "high surrogate not followed by low");
		hi = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	}
	return ajson_put_cp(b, hi);
}

/* A string at jp->pos (on the opening quote); *outp is malloc'd. */
static int
ajson_string(struct ajson_parser *jp, char **outp, size_t *lenp)
{
	struct buf b;
	int r;

	buf_init(&b, AJSON_MAX_STRING);
	jp->pos++;
	for (;;) {
		unsigned char c;
		size_t n;

		if (jp->pos >= jp->len) {
			r = ajson_fail(jp, BF_ERR_PARSE, "unterminated string");
			goto out;
		}
		c = jp->p[jp->pos];
		if (c == '"') {
			jp->pos++;
			break;
		}
		if (c < 0x20) {
			r = ajson_fail(jp, BF_ERR_PARSE, c == 0 ? "NUL byte in string" :
			    "unescaped control character in string");
			goto out;
		}
		if (c == '\\') {
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *e;

			jp->pos++;
			if (jp->pos >= jp->len) {
				r = ajson_fail(jp, BF_ERR_PARSE, "truncated escape");
				goto out;
			}
			c = jp->p[jp->pos++];
			if (c == 'u')
				r = ajson_unicode(jp, &b);
			else if (c != '\0' && (e = strchr(from, c)) != NULL)
				r = buf_append(&b, &to[e - from], 1);
			else {
				jp->pos--;
				r = ajson_fail(jp, BF_ERR_PARSE, "invalid escape");
				goto out;
			}
		} else {
			if ((n = ajson_utf8_len(jp->p + jp->pos, jp->len - jp->pos)) == 0) {
				r = ajson_fail(jp, BF_ERR_PARSE, "invalid UTF-8 in string");
				goto out;
			}
			r = buf_append(&b, jp->p + jp->pos, n);
			jp->pos += n;
		}
		if (r == BF_ERR_TOOBIG) {
			r = ajson_fail(jp, r, "string longer than the cap");
			goto out;
		}
		if (r != 0)
			goto out;
	}
	*lenp = b.len;
	if ((*outp = buf_steal(&b)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	buf_free(&b);
	return r;
}

/* RFC 8259 number grammar first; only then the range-checked converters. */
static int
ajson_number(struct ajson_parser *jp, struct ajson *j)
{
	size_t start = jp->pos, i = jp->pos;
	const unsigned char *p = jp->p;
	int frac = 0, r;

	if (i < jp->len && p[i] == '-')
		i++;
	if (i < jp->len && p[i] == '0')
		i++;
	else if (i < jp->len && p[i] >= '1' && p[i] <= '9')
		while (i < jp->len && p[i] >= '0' && p[i] <= '9')
			i++;
	else
		return ajson_fail(jp, BF_ERR_PARSE, "invalid number");
	if (i < jp->len && p[i] == '.') {
		frac = 1;
		if (++i >= jp->len || p[i] < '0' || p[i] > '9') {
			jp->pos = i;
			return ajson_fail(jp, BF_ERR_PARSE, "digit expected after '.'");
		}
		while (i < jp->len && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	if (i < jp->len && (p[i] == 'e' || p[i] == 'E')) {
		frac = 1;
		i++;
		if (i < jp->len && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i >= jp->len || p[i] < '0' || p[i] > '9') {
			jp->pos = i;
			return ajson_fail(jp, BF_ERR_PARSE, "digit expected in exponent");
		}
		while (i < jp->len && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	if ((r = parse_double_n((const char *)p + start, i - start, &j->num)) != 0)
		return ajson_fail(jp, r, "number out of range");
	if (!frac && parse_i64_n((const char *)p + start, i - start, INT64_MIN,
	    INT64_MAX, &j->i) == 0)
		j->is_int = 1;
	jp->pos = i;
	return 0;
}

static int
ajson_literal(struct ajson_parser *jp, const char *word)
{
	size_t n = strlen(word);

	if (jp->len - jp->pos < n || memcmp(jp->p + jp->pos, word, n) != 0)
		return ajson_fail(jp, BF_ERR_PARSE, "invalid literal");
	jp->pos += n;
	return 0;
}

static int
ajson_add(struct ajson_parser *jp, struct ajson *parent, struct ajson *kid)
{
	struct ajson **ni;
	size_t ncap;

	if (parent->n >= AJSON_MAX_MEMBERS)
		return ajson_fail(jp, BF_ERR_TOOBIG, "too many members in array or object");
	if (parent->n == parent->cap) {
		ncap = parent->cap != 0 ? parent->cap * 2 : 8;
		if ((ni = realloc(parent->items, ncap * sizeof(*ni))) == NULL)
			return BF_ERR_ALLOC;
		parent->items = ni;
		parent->cap = ncap;
	}
	parent->items[parent->n++] = kid;
	return 0;
}

static int ajson_value(struct ajson_parser *jp, int depth, struct ajson **out);

static int
ajson_array(struct ajson_parser *jp, int depth, struct ajson *j)
{
	struct ajson *kid = NULL;
	int r;

	jp->pos++;
	ajson_skip_ws(jp);
	if (jp->pos < jp->len && jp->p[jp->pos] == ']') {
		jp->pos++;
		r = 0;
		goto out;
	}
	for (;;) {
		if ((r = ajson_value(jp, depth + 1, &kid)) != 0)
			goto out;
		if ((r = ajson_add(jp, j, kid)) != 0)
			goto out;
		kid = NULL;
		ajson_skip_ws(jp);
		if (jp->pos >= jp->len) {
			r = ajson_fail(jp, BF_ERR_PARSE, "unterminated array");
			goto out;
		}
		if (jp->p[jp->pos] == ']') {
			jp->pos++;
			break;
		}
		if (jp->p[jp->pos] != ',') {
			r = ajson_fail(jp, BF_ERR_PARSE, "',' or ']' expected");
			goto out;
		}
		jp->pos++;
	}
	r = 0;
out:
	ajson_free(kid);
	return r;
}

static int
ajson_object(struct ajson_parser *jp, int depth, struct ajson *j)
{
	struct ajson *kid = NULL;
	char *key = NULL;
	size_t klen, i, kpos;
	int r;

	jp->pos++;
	ajson_skip_ws(jp);
	if (jp->pos < jp->len && jp->p[jp->pos] == '}') {
		jp->pos++;
		r = 0;
		goto out;
	}
	for (;;) {
		ajson_skip_ws(jp);
		if (jp->pos >= jp->len || jp->p[jp->pos] != '"') {
			r = ajson_fail(jp, BF_ERR_PARSE, jp->pos >= jp->len ?
			    "unterminated object" : "string key expected");
			goto out;
		}
		kpos = jp->pos;
		if ((r = ajson_string(jp, &key, &klen)) != 0)
			goto out;
		for (i = 0; i < j->n; i++)
			if (strcmp(j->items[i]->key, key) == 0) {
				jp->pos = kpos;
				r = ajson_fail(jp, BF_ERR_PARSE, "duplicate key");
				goto out;
			}
		ajson_skip_ws(jp);
		if (jp->pos >= jp->len || jp->p[jp->pos] != ':') {
			r = ajson_fail(jp, BF_ERR_PARSE, "':' expected");
			goto out;
		}
		jp->pos++;
		if ((r = ajson_value(jp, depth + 1, &kid)) != 0)
			goto out;
		kid->key = key;
		key = NULL;
		if ((r = ajson_add(jp, j, kid)) != 0)
			goto out;
		kid = NULL;
		ajson_skip_ws(jp);
		if (jp->pos >= jp->len) {
			r = ajson_fail(jp, BF_ERR_PARSE, "unterminated object");
			goto out;
		}
		if (jp->p[jp->pos] == '}') {
			jp->pos++;
			break;
		}
		if (jp->p[jp->pos] != ',') {
			r = ajson_fail(jp, BF_ERR_PARSE, "',' or '}' expected");
			goto out;
		}
		jp->pos++;
	}
	r = 0;
out:
	free(key);
	ajson_free(kid);
	return r;
}

/* depth counts open containers, so recursion is bounded by BF_MAX_JSON_DEPTH. */
static int
ajson_value(struct ajson_parser *jp, int depth, struct ajson **out)
{
	struct ajson *j = NULL;
	unsigned char c;
	int r;

	ajson_skip_ws(jp);
	if (jp->pos >= jp->len) {
		r = ajson_fail(jp, BF_ERR_PARSE, "value expected, input ends");
		goto out;
	}
	c = jp->p[jp->pos];
	switch (c) {
	case '{':
	case '[':
		if (depth >= BF_MAX_JSON_DEPTH) {
			r = ajson_fail(jp, BF_ERR_TOOBIG, "nested too deeply");
			goto out;
		}
		if ((r = ajson_new(c == '{' ? AJSON_OBJ : AJSON_ARR, &j)) != 0)
			goto out;
		r = c == '{' ? ajson_object(jp, depth, j) : ajson_array(jp, depth, j);
		break;
	case '"':
		if ((r = ajson_new(AJSON_STR, &j)) != 0)
			goto out;
		r = ajson_string(jp, &j->str, &j->len);
		break;
	case 't':
	case 'f':
		if ((r = ajson_new(AJSON_BOOL, &j)) != 0)
			goto out;
		j->boolean = c == 't';
		r = ajson_literal(jp, c == 't' ? "true" : "false");
		break;
	case 'n':
		if ((r = ajson_new(AJSON_NULL, &j)) != 0)
			goto out;
		r = ajson_literal(jp, "null");
		break;
	default:
		if (c != '-' && (c < '0' || c > '9')) {
			r = ajson_fail(jp, BF_ERR_PARSE, "unexpected character");
			goto out;
		}
		if ((r = ajson_new(AJSON_NUM, &j)) != 0)
			goto out;
		r = ajson_number(jp, j);
		break;
	}
	if (r != 0)
		goto out;
	*out = j;
	j = NULL;
	r = 0;
out:
	ajson_free(j);
	return r;
}

int
ajson_parse(const char *text, size_t len, struct ajson **out, struct bf_diag *d)
{
	struct ajson_parser jp = { (const unsigned char *)text, len, 0, d };
	struct ajson *j = NULL;
	int r;

	bf_diag_clear(d);
	if (text == NULL || out == NULL) {
		r = BF_ERR_INVALID;
		goto out;
	}
	if (len > BF_MAX_STEP) {
		r = ajson_fail(&jp, BF_ERR_TOOBIG, "document larger than the cap");
		goto out;
	}
	if ((r = ajson_value(&jp, 0, &j)) != 0)
		goto out;
	ajson_skip_ws(&jp);
	if (jp.pos != jp.len) {
		r = ajson_fail(&jp, BF_ERR_PARSE, "trailing data after the value");
		goto out;
	}
	*out = j;
	j = NULL;
	r = 0;
out:
	if (r == BF_ERR_ALLOC)
		bf_diag_set(d, NULL, "out of memory");
	ajson_free(j);
	return r;
}

int
ajson_put_str(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n, run;
	char esc[8];
	int r;

	if ((r = buf_append(b, "\"", 1)) != 0)
		return r;
	while (i < len) {
		unsigned char c = p[i];

		/* copy plain runs in one go; log lines are mostly ASCII */
		for (run = i; run < len && p[run] >= 0x20 && p[run] < 0x7f &&
		    p[run] != '"' && p[run] != '\\'; run++)
			;
		if (run > i) {
			if ((r = buf_append(b, p + i, run - i)) != 0)
				return r;
			i = run;
			continue;
		}
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			r = buf_append(b, esc, 2);
			i++;
		} else if (c == '\n') {
			r = buf_append(b, "\\n", 2);
			i++;
		} else if (c == '\t') {
			r = buf_append(b, "\\t", 2);
			i++;
		} else if (c == '\r') {
			r = buf_append(b, "\\r", 2);
			i++;
		} else if (c == 0) {
			/* jansson (the coordinator) refuses \u0000 by default */
			r = buf_append(b, "\\ufffd", 6);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			r = buf_append(b, esc, 6);
			i++;
		} else if ((n = ajson_utf8_len(p + i, len - i)) == 0) {
			r = buf_append(b, "\\ufffd", 6);
			i++;
		} else {
			r = buf_append(b, p + i, n);
			i += n;
		}
		if (r != 0)
			return r;
	}
	return buf_append(b, "\"", 1);
}

int
ajson_put_num(struct buf *b, double v)
{
	if (!isfinite(v))
		return buf_puts(b, "null");
	char tmp[32];

	/* shortest of %.15g and %.17g that reads back exactly, so 0.1 stays 0.1 */
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	return buf_puts(b, tmp);
}
