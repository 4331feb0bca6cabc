/*
 * envdiff-text.c: envdiff_render_text, a pair or drift diff (envdiff.h) as
 * lines for a person, for reproductions and job reports. The diff may have
 * been read back from the store, so its shape is checked as it is read, and
 * every snapshot value is printed so that it cannot end a line or pass for
 * another value (control bytes as \xNN, quoted when not a plain token).
 */
#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "envdiff.h"

/* Worst case of one escaped value: 4 bytes per input byte, quotes, cut note. */
#define ENVDIFF_TEXT_BUF	(4 * BF_MAX_ENVDIFF_TEXT + 64)

static int
envdiff_esc_byte(unsigned char c)
{
	return c < 0x20 || c >= 0x7f || c == '"' || c == '\\';
}

/* s[0..len) bare when it is a plain token, else quoted; bytes past
 * BF_MAX_ENVDIFF_TEXT are counted, not printed. */
static int
envdiff_put_value(struct buf *out, const char *s, size_t len)
{
	char t[ENVDIFF_TEXT_BUF];
	size_t i, o = 0, n = len > BF_MAX_ENVDIFF_TEXT ? BF_MAX_ENVDIFF_TEXT : len;
	int bare = len > 0 && n == len && s[0] != '(';

	for (i = 0; i < len && bare; i++)
		if (s[i] == ' ' || envdiff_esc_byte((unsigned char)s[i]))
			bare = 0;
	if (bare)
		return buf_append(out, s, len);
	t[o++] = '"';
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (envdiff_esc_byte(c))
			o += (size_t)snprintf(t + o, sizeof(t) - o, "\\x%02x", c);
		else
			t[o++] = (char)c;
	}
	t[o++] = '"';
	if (n < len)
		o += (size_t)snprintf(t + o, sizeof(t) - o, "...(+%zu bytes)", len - n);
	return buf_append(out, t, o);
}

/* A label or group name: control bytes, DEL and non-ASCII as \xNN. */
static int
envdiff_put_label(struct buf *out, const char *s, size_t len)
{
	char t[ENVDIFF_TEXT_BUF];
	size_t i, o = 0, n = len > BF_MAX_ENVDIFF_TEXT ? BF_MAX_ENVDIFF_TEXT : len;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(t + o, sizeof(t) - o, "\\x%02x", c);
		else
			t[o++] = (char)c;
	}
	if (n < len)
		o += (size_t)snprintf(t + o, sizeof(t) - o, "...(+%zu bytes)", len - n);
	return buf_append(out, t, o);
}

/* o[k], a string: *s and *len. */
static int
envdiff_tstr(const json_t *o, const char *k, const char **s, size_t *len)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_string(v))
		return BF_ERR_INVALID;
	*s = json_string_value(v);
	*len = json_string_length(v);
	return 0;
}

/* o[k], an integer >= 0. */
static int
envdiff_tcount(const json_t *o, const char *k, size_t *n)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return BF_ERR_INVALID;
	*n = (size_t)json_integer_value(v);
	return 0;
}

/* o[k] as a value: the string, (unreadable) for null, (absent) when
 * o[flag] is true (and o[k] null). */
static int
envdiff_tval(struct buf *out, const json_t *o, const char *k, const char *flag)
{
	const json_t *v = json_object_get(o, k), *f = json_object_get(o, flag);

	if (f != NULL && !json_is_boolean(f))
		return BF_ERR_INVALID;
	if (json_is_true(f))
		return json_is_null(v) ? buf_puts(out, "(absent)") : BF_ERR_INVALID;
	if (json_is_null(v))
		return buf_puts(out, "(unreadable)");
	if (!json_is_string(v))
		return BF_ERR_INVALID;
	return envdiff_put_value(out, json_string_value(v), json_string_length(v));
}

/* "  group: key: " */
static int
envdiff_head(struct buf *out, const char *g, size_t gl, const json_t *k)
{
	const char *key;
	size_t kl;
	int r;

	if ((r = envdiff_tstr(k, "key", &key, &kl)) != 0 || (r = buf_puts(out, "  ")) != 0 ||
	    (r = envdiff_put_label(out, g, gl)) != 0 || (r = buf_puts(out, ": ")) != 0 ||
	    (r = envdiff_put_value(out, key, kl)) != 0)
		return r;
	return buf_puts(out, ": ");
}

static int
envdiff_text_pair(const json_t *groups, struct buf *out)
{
	const json_t *g, *keys, *k;
	const char *name;
	size_t i, j, n, nl;
	int r;

	json_array_foreach(groups, i, g) {
		keys = json_object_get(g, "keys");
		if ((r = envdiff_tstr(g, "group", &name, &nl)) != 0 ||
		    (r = envdiff_tcount(g, "n", &n)) != 0)
			return r;
		if (!json_is_array(keys) || json_array_size(keys) > n)
			return BF_ERR_INVALID;
		json_array_foreach(keys, j, k) {
			if ((r = envdiff_head(out, name, nl, k)) != 0 ||
			    (r = envdiff_tval(out, k, "a", "a_absent")) != 0 ||
			    (r = buf_puts(out, " -> ")) != 0 ||
			    (r = envdiff_tval(out, k, "b", "b_absent")) != 0 ||
			    (r = buf_puts(out, "\n")) != 0)
				return r;
		}
		if (n > json_array_size(keys) && ((r = buf_puts(out, "  ")) != 0 ||
		    (r = envdiff_put_label(out, name, nl)) != 0 ||
		    (r = buf_printf(out, ": and %zu more\n", n - json_array_size(keys))) != 0))
			return r;
	}
	return json_array_size(groups) == 0 ? buf_puts(out, "  (none)\n") : 0;
}

/* One listed value of a drifting key: "0 (3 runs)", "1 (2 runs, first x)". */
static int
envdiff_text_seen(struct buf *out, const json_t *e, int show_first)
{
	const json_t *first = json_object_get(e, "first");
	const char *l;
	size_t c, idx, ll;
	int r;

	if ((r = envdiff_tcount(e, "count", &c)) != 0 ||
	    (r = envdiff_tcount(e, "first_index", &idx)) != 0 ||
	    (r = envdiff_tval(out, e, "value", "absent")) != 0 ||
	    (r = buf_printf(out, " (%zu run%s", c, c == 1 ? "" : "s")) != 0)
		return r;
	if (show_first && json_is_string(first)) {
		l = json_string_value(first);
		ll = json_string_length(first);
		if ((r = buf_puts(out, ", first ")) != 0 ||
		    (r = envdiff_put_label(out, l, ll)) != 0)
			return r;
	} else if (show_first && json_is_null(first)) {
		if ((r = buf_printf(out, ", first #%zu", idx)) != 0)
			return r;
	} else if (first == NULL || !(json_is_string(first) || json_is_null(first))) {
		return BF_ERR_INVALID;
	}
	return buf_puts(out, ")");
}

static int
envdiff_text_drift(const json_t *diff, const json_t *keys, struct buf *out)
{
	const json_t *k, *vals, *e;
	const char *g;
	size_t i, j, more, mv, mr, gl;
	int r;

	if ((r = envdiff_tcount(diff, "more", &more)) != 0)
		return r;
	json_array_foreach(keys, i, k) {
		vals = json_object_get(k, "values");
		if ((r = envdiff_tstr(k, "group", &g, &gl)) != 0 ||
		    (r = envdiff_tcount(k, "more_values", &mv)) != 0 ||
		    (r = envdiff_tcount(k, "more_runs", &mr)) != 0)
			return r;
		if (!json_is_array(vals))
			return BF_ERR_INVALID;
		if ((r = envdiff_head(out, g, gl, k)) != 0)
			return r;
		json_array_foreach(vals, j, e) {
			if ((j > 0 && (r = buf_puts(out, ", ")) != 0) ||
			    (r = envdiff_text_seen(out, e, j > 0)) != 0)
				return r;
		}
		if (mv > 0 && (r = buf_printf(out, ", and %zu more value%s (%zu run%s)", mv,
		    mv == 1 ? "" : "s", mr, mr == 1 ? "" : "s")) != 0)
			return r;
		if ((r = buf_puts(out, "\n")) != 0)
			return r;
	}
	if (more > 0)
		return buf_printf(out, "  and %zu more key%s\n", more, more == 1 ? "" : "s");
	return json_array_size(keys) == 0 ? buf_puts(out, "  (none)\n") : 0;
}

int
envdiff_render_text(const json_t *diff, struct buf *out)
{
	const json_t *groups = json_object_get(diff, "groups");
	const json_t *keys = json_object_get(diff, "keys");
	size_t start = out->len;
	int r;

	if (json_is_array(groups))
		r = envdiff_text_pair(groups, out);
	else if (json_is_array(keys))
		r = envdiff_text_drift(diff, keys, out);
	else
		r = BF_ERR_INVALID;
	/* all or nothing: a half-printed diff would read as a whole one */
	if (r != 0 && out->data != NULL) {
		out->len = start;
		out->data[start] = '\0';
	}
	return r;
}
