/*
 * jx.c: the accessor layer over jansson. Every value taken from untrusted
 * JSON passes a type and range check here, and every failure names the
 * field by its path, so that callers never touch json_*_value() unchecked.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jx.h"
#include "caps.h"

/* Our cap is far below jansson's own (JSON_PARSER_MAX_DEPTH), so this
 * recursion is bounded by what jansson already accepted. */
static int
jx_depth_ok(const json_t *v, int depth)
{
	const char *k;
	json_t *e;
	size_t i;

	if (!json_is_object(v) && !json_is_array(v))
		return 1;
	if (depth > BF_MAX_JSON_DEPTH)
		return 0;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, e)
			if (!jx_depth_ok(e, depth + 1))
				return 0;
	} else {
		json_array_foreach(v, i, e)
			if (!jx_depth_ok(e, depth + 1))
				return 0;
	}
	return 1;
}

struct jx_gate jx_parse_gate = JX_GATE_INIT(BF_MAX_JSON_PARSES);

void
jx_gate_enter(struct jx_gate *g)
{
	pthread_mutex_lock(&g->mu);
	while (g->busy >= g->max)
		pthread_cond_wait(&g->cv, &g->mu);
	g->busy++;
	pthread_mutex_unlock(&g->mu);
}

void
jx_gate_leave(struct jx_gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->busy--;
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

/*
 * Count what jansson would allocate for text, without building anything:
 * every '{' and '[' is a container, every string (keys too) and every run
 * of bare characters (numbers, true, false, null) a value. Malformed text
 * only counts high, never low, so the counts bound any tree jansson can
 * build from it. Nesting past BF_MAX_JSON_DEPTH is BF_ERR_INVALID, more
 * than the caps BF_ERR_TOOBIG; the scan stops at the first of them.
 */
static int
jx_prescan(const char *text, size_t len, const struct jx_caps *caps, size_t *nodesp,
    size_t *contp)
{
	size_t i, nodes = 0, cont = 0, depth = 0;
	int in_str = 0, in_bare = 0;
	unsigned char c;

	for (i = 0; i < len; i++) {
		c = (unsigned char)text[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"' || c == '{' || c == '[') {
			in_bare = 0;
			in_str = c == '"';
			nodes++;
			if (c != '"') {
				cont++;
				if (++depth > BF_MAX_JSON_DEPTH)
					return BF_ERR_INVALID;
			}
		} else if (c == '}' || c == ']') {
			in_bare = 0;
			depth -= depth > 0;
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' ||
		    c == ':') {
			in_bare = 0;
		} else if (!in_bare) {
			in_bare = 1;
			nodes++;
		}
		if (nodes > caps->max_nodes || cont > caps->max_containers)
			break;
	}
	*nodesp = nodes;
	*contp = cont;
	return nodes > caps->max_nodes || cont > caps->max_containers ? BF_ERR_TOOBIG : 0;
}

/* The caps of a document of up to max bytes: the API body's per started
 * MiB, so that large documents (bundles, reports) are not refused for
 * their size alone. */
static void
jx_caps_for(size_t max, struct jx_caps *caps)
{
	size_t mib = max / BF_MAX_API_BODY + (max % BF_MAX_API_BODY != 0);

	if (mib == 0)
		mib = 1;
	caps->max_nodes = (size_t)BF_MAX_JSON_NODES * mib;
	caps->max_containers = (size_t)BF_MAX_JSON_CONTAINERS * mib;
}

int
jx_loads_capped(const char *text, size_t len, size_t max, const struct jx_caps *caps,
    json_t **out, struct bf_diag *d)
{
	json_error_t err;
	json_t *doc = NULL;
	size_t nodes, cont;
	int r;

	if (len > max) {
		bf_diag_set(d, NULL, "JSON document of %zu bytes is over the limit of %zu bytes",
		    len, max);
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if ((r = jx_prescan(text, len, caps, &nodes, &cont)) != 0) {
		if (r == BF_ERR_INVALID)
			bf_diag_set(d, NULL, "JSON nested deeper than %d levels",
			    BF_MAX_JSON_DEPTH);
		else if (cont > caps->max_containers)
			bf_diag_set(d, NULL, "JSON document has more than %zu objects and arrays",
			    caps->max_containers);
		else
			bf_diag_set(d, NULL, "JSON document has more than %zu values",
			    caps->max_nodes);
		goto out;
	}
	/* NULs are let through so that jx_str can refuse them naming the field */
	jx_gate_enter(&jx_parse_gate);
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
	jx_gate_leave(&jx_parse_gate);
	if (doc == NULL) {
		if (json_error_code(&err) == json_error_stack_overflow) {
			bf_diag_set(d, NULL, "JSON nested deeper than %d levels", BF_MAX_JSON_DEPTH);
			r = BF_ERR_INVALID;
		} else {
			bf_diag_set(d, NULL, "malformed JSON at line %d, column %d (byte %d): %s",
			    err.line, err.column, err.position, err.text);
			r = BF_ERR_PARSE;
		}
		goto out;
	}
	if (!json_is_object(doc) && !json_is_array(doc)) {
		bf_diag_set(d, NULL, "JSON document must be an object or an array, not %s",
		    jx_type_name(doc));
		r = BF_ERR_PARSE;
		goto out;
	}
	if (!jx_depth_ok(doc, 1)) {
		bf_diag_set(d, NULL, "JSON nested deeper than %d levels", BF_MAX_JSON_DEPTH);
		r = BF_ERR_INVALID;
		goto out;
	}
	*out = doc;
	doc = NULL;
	r = 0;
out:
	json_decref(doc);
	return r;
}

int
jx_loads(const char *text, size_t len, size_t max, json_t **out, struct bf_diag *d)
{
	struct jx_caps caps;

	jx_caps_for(max, &caps);
	return jx_loads_capped(text, len, max, &caps, out, d);
}

const char *
jx_path(char *buf, size_t bufsz, const char *parent, const char *key)
{
	if (parent == NULL || parent[0] == '\0')
		snprintf(buf, bufsz, "%s", key);
	else
		snprintf(buf, bufsz, "%s.%s", parent, key);
	return buf;
}

const char *
jx_path_idx(char *buf, size_t bufsz, const char *parent, size_t idx)
{
	snprintf(buf, bufsz, "%s[%zu]", parent != NULL ? parent : "", idx);
	return buf;
}

const char *
jx_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:	return "an object";
	case JSON_ARRAY:	return "an array";
	case JSON_STRING:	return "a string";
	case JSON_INTEGER:	return "an integer";
	case JSON_REAL:		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:	return "a boolean";
	case JSON_NULL:		return "null";
	}
	return "an unknown value";
}

const char *
jx_repr(const json_t *v, char *buf, size_t bufsz)
{
	char *s;
	size_t n;

	if (bufsz == 0)
		return buf;
	/* ASCII-only output keeps newlines, NULs and controls escaped in messages */
	s = v != NULL ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	if (s == NULL) {
		snprintf(buf, bufsz, "%s", v == NULL ? "(nothing)" : "(value)");
		return buf;
	}
	n = strlen(s);
	if (n > 60 && bufsz > 64)
		snprintf(buf, bufsz, "%.57s...", s);
	else
		snprintf(buf, bufsz, "%s", s);
	free(s);
	return buf;
}

int
jx_only_keys(const json_t *obj, const char *const *allowed, const char *path,
    struct bf_diag *d)
{
	char p[BF_DIAG_FIELD], list[BF_DIAG_MSG];
	const char *k;
	json_t *v;
	size_t i, off;

	json_object_foreach((json_t *)obj, k, v) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(k, allowed[i]) == 0)
				break;
		if (allowed[i] != NULL)
			continue;
		list[0] = '\0';
		for (i = 0, off = 0; allowed[i] != NULL && off < sizeof(list); i++) {
			int n = snprintf(list + off, sizeof(list) - off, "%s%s",
			    i ? ", " : "", allowed[i]);
			if (n < 0)
				break;
			off += (size_t)n;
		}
		bf_diag_set(d, jx_path(p, sizeof(p), path, k), "unknown key; expected one of %s",
		    list);
		return BF_ERR_INVALID;
	}
	return 0;
}

/* Look key up: *v is NULL when absent, which is an error only if required. */
static int
jx_get(const json_t *obj, const char *key, int required, json_t **v, const char *path,
    struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];

	*v = NULL;
	if (!json_is_object(obj)) {
		bf_diag_set(d, path, "expected an object, got %s", jx_type_name(obj));
		return BF_ERR_INVALID;
	}
	*v = json_object_get(obj, key);
	if (*v == NULL && required) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, key), "is required");
		return BF_ERR_INVALID;
	}
	return 0;
}

int
jx_as_str(const json_t *v, size_t maxlen, const char **out, const char *path,
    struct bf_diag *d)
{
	size_t n;

	if (!json_is_string(v)) {
		bf_diag_set(d, path, "expected a string, got %s", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	n = json_string_length(v);
	if (n != strlen(json_string_value(v))) {
		bf_diag_set(d, path, "contains a NUL byte");
		return BF_ERR_INVALID;
	}
	if (n == 0) {
		bf_diag_set(d, path, "must not be empty");
		return BF_ERR_INVALID;
	}
	if (n > maxlen) {
		bf_diag_set(d, path, "is %zu bytes long; at most %zu allowed", n, maxlen);
		return BF_ERR_TOOBIG;
	}
	*out = json_string_value(v);
	return 0;
}

int
jx_as_int(const json_t *v, int64_t min, int64_t max, int64_t *out, const char *path,
    struct bf_diag *d)
{
	int64_t x;

	if (!json_is_integer(v)) {
		char rep[80];

		if (json_is_real(v))
			bf_diag_set(d, path, "expected an integer, got %s",
			    jx_repr(v, rep, sizeof(rep)));
		else
			bf_diag_set(d, path, "expected an integer, got %s", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	x = (int64_t)json_integer_value(v);
	if (x < min || x > max) {
		bf_diag_set(d, path, "%" PRId64 " is out of range %" PRId64 "..%" PRId64,
		    x, min, max);
		return BF_ERR_RANGE;
	}
	*out = x;
	return 0;
}

int
jx_as_num(const json_t *v, double min, double max, double *out, const char *path,
    struct bf_diag *d)
{
	double x;

	if (!json_is_number(v)) {
		bf_diag_set(d, path, "expected a number, got %s", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	x = json_number_value(v);
	if (!isfinite(x)) {
		bf_diag_set(d, path, "is not a finite number");
		return BF_ERR_RANGE;
	}
	if (x < min || x > max) {
		bf_diag_set(d, path, "%.17g is out of range %.17g..%.17g", x, min, max);
		return BF_ERR_RANGE;
	}
	*out = x;
	return 0;
}

int
jx_str(const json_t *obj, const char *key, int required, size_t maxlen,
    const char **out, const char *path, struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	json_t *v;
	int r;

	if ((r = jx_get(obj, key, required, &v, path, d)) != 0 || v == NULL)
		return r;
	return jx_as_str(v, maxlen, out, jx_path(p, sizeof(p), path, key), d);
}

int
jx_int(const json_t *obj, const char *key, int required, int64_t min, int64_t max,
    int64_t *out, const char *path, struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	json_t *v;
	int r;

	if ((r = jx_get(obj, key, required, &v, path, d)) != 0 || v == NULL)
		return r;
	return jx_as_int(v, min, max, out, jx_path(p, sizeof(p), path, key), d);
}

int
jx_num(const json_t *obj, const char *key, int required, double min, double max,
    double *out, const char *path, struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	json_t *v;
	int r;

	if ((r = jx_get(obj, key, required, &v, path, d)) != 0 || v == NULL)
		return r;
	return jx_as_num(v, min, max, out, jx_path(p, sizeof(p), path, key), d);
}

int
jx_bool(const json_t *obj, const char *key, int required, int *out,
    const char *path, struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	json_t *v;
	int r;

	if ((r = jx_get(obj, key, required, &v, path, d)) != 0 || v == NULL)
		return r;
	if (!json_is_boolean(v)) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, key), "expected true or false, got %s",
		    jx_type_name(v));
		return BF_ERR_INVALID;
	}
	*out = json_is_true(v);
	return 0;
}

int
jx_obj(const json_t *obj, const char *key, int required, json_t **out,
    const char *path, struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	json_t *v;
	int r;

	if ((r = jx_get(obj, key, required, &v, path, d)) != 0 || v == NULL)
		return r;
	if (!json_is_object(v)) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, key), "expected an object, got %s",
		    jx_type_name(v));
		return BF_ERR_INVALID;
	}
	*out = v;
	return 0;
}

int
jx_arr(const json_t *obj, const char *key, int required, size_t minlen, size_t maxlen,
    json_t **out, const char *path, struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	json_t *v;
	size_t n;
	int r;

	if ((r = jx_get(obj, key, required, &v, path, d)) != 0 || v == NULL)
		return r;
	jx_path(p, sizeof(p), path, key);
	if (!json_is_array(v)) {
		bf_diag_set(d, p, "expected an array, got %s", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	n = json_array_size(v);
	if (n < minlen) {
		bf_diag_set(d, p, "has %zu elements; at least %zu needed", n, minlen);
		return BF_ERR_INVALID;
	}
	if (n > maxlen) {
		bf_diag_set(d, p, "has %zu elements; at most %zu allowed", n, maxlen);
		return BF_ERR_TOOBIG;
	}
	*out = v;
	return 0;
}

int
jx_check_name(const char *s, const char *path, struct bf_diag *d)
{
	size_t i, n = s != NULL ? strlen(s) : 0;
	json_t *js = NULL;
	char rep[80];
	int r;

	for (i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			break;
	}
	if (n >= 1 && n <= BF_MAX_NAME && i == n) {
		r = 0;
		goto out;
	}
	/* quote through JSON so that hostile bytes stay escaped in the message */
	js = json_stringn(s != NULL ? s : "", n);
	bf_diag_set(d, path, "%s is not a valid name (1..%d of A-Z a-z 0-9 _ . -, "
	    "starting with a letter or digit)", jx_repr(js, rep, sizeof(rep)), BF_MAX_NAME);
	r = BF_ERR_INVALID;
out:
	json_decref(js);
	return r;
}
