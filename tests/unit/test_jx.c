/* test_jx.c: the jansson accessor layer: loads, getters, names, messages. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "jx.h"
#include "caps.h"
#include "t.h"

/* The message must start with want (which names the field). */
static void
expect_msg(const char *what, const struct bf_diag *d, const char *want)
{
	t_checks++;
	if (strncmp(d->msg, want, strlen(want)) != 0) {
		t_fails++;
		fprintf(stderr, "%s: message \"%s\", expected it to start with \"%s\"\n", what,
		    d->msg, want);
	}
}

static const struct {
	const char *text;
	int r;
	const char *msg;
} load_cases[] = {
	{"{}", 0, ""},
	{"[1, 2]", 0, ""},
	{"{\"a\": {\"b\": [true, null, 1.5, \"x\"]}}", 0, ""},
	{"42", BF_ERR_PARSE, "malformed JSON at line 1"},
	{"\"str\"", BF_ERR_PARSE, "malformed JSON at line 1"},
	{"", BF_ERR_PARSE, "malformed JSON at line 1, column 0 (byte 0)"},
	{"{", BF_ERR_PARSE, "malformed JSON at line 1, column 1 (byte 1): "},
	{"{\"a\": 1", BF_ERR_PARSE, "malformed JSON at line 1"},
	{"{\"a\" 1}", BF_ERR_PARSE, "malformed JSON at line 1, column 6 (byte 6): "},
	{"{\"a\": 1}\n x", BF_ERR_PARSE, "malformed JSON at line 2"},
	{"{\"a\": 1, \"a\": 2}", BF_ERR_PARSE, "malformed JSON at line 1"},
	{"{\"a\": 1e309}", BF_ERR_PARSE, "malformed JSON"},
	{"{\"a\": 99999999999999999999999}", BF_ERR_PARSE, "malformed JSON"},
	{"{\"a\": NaN}", BF_ERR_PARSE, "malformed JSON"},
	{"{\"a\": \"\\ud800\"}", BF_ERR_PARSE, "malformed JSON"},
	{"{\"a\": \"\xff\"}", BF_ERR_PARSE, "malformed JSON"},
	{"{'a': 1}", BF_ERR_PARSE, "malformed JSON"},
	{"{\"a\": 1,}", BF_ERR_PARSE, "malformed JSON"},
};

static void
test_loads(void)
{
	struct bf_diag d;
	struct buf b;
	json_t *j;
	size_t i;
	int k;

	for (i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
		j = NULL;
		bf_diag_clear(&d);
		T_EQ_INT(jx_loads(load_cases[i].text, strlen(load_cases[i].text), 1000, &j, &d),
		    load_cases[i].r);
		expect_msg(load_cases[i].text, &d, load_cases[i].msg);
		T_CHECK((j != NULL) == (load_cases[i].r == 0));
		json_decref(j);
	}
	/* duplicate keys are named in jansson's text */
	j = NULL;
	T_EQ_INT(jx_loads("{\"a\": 1, \"a\": 2}", 16, 100, &j, &d), BF_ERR_PARSE);
	T_CONTAINS(d.msg, "duplicate");
	/* a counted span: bytes past len are not looked at */
	T_EQ_INT(jx_loads("{}garbage", 2, 100, &j, &d), 0);
	json_decref(j);
	/* over the cap before any parsing */
	T_EQ_INT(jx_loads("{}   ", 5, 4, &j, &d), BF_ERR_TOOBIG);
	T_CONTAINS(d.msg, "5 bytes");
	T_EQ_INT(jx_loads("{}", 2, 2, &j, &d), 0);
	json_decref(j);
	/* NUL via \u0000 is let through here, refused by the string getters */
	T_EQ_INT(jx_loads("{\"s\": \"a\\u0000b\"}", 17, 100, &j, &d), 0);
	json_decref(j);

	/* depth: BF_MAX_JSON_DEPTH levels parse, one more does not */
	for (k = BF_MAX_JSON_DEPTH; k <= BF_MAX_JSON_DEPTH + 1; k++) {
		int n;

		buf_init(&b, 0);
		for (n = 0; n < k; n++)
			T_OK(buf_puts(&b, "["));
		for (n = 0; n < k; n++)
			T_OK(buf_puts(&b, "]"));
		j = NULL;
		bf_diag_clear(&d);
		T_EQ_INT(jx_loads(b.data, b.len, b.len, &j, &d),
		    k <= BF_MAX_JSON_DEPTH ? 0 : BF_ERR_INVALID);
		if (k > BF_MAX_JSON_DEPTH)
			T_EQ_STR(d.msg, "JSON nested deeper than 32 levels");
		json_decref(j);
		buf_free(&b);
	}
	/* objects count as well as arrays */
	buf_init(&b, 0);
	for (k = 0; k < 40; k++)
		T_OK(buf_puts(&b, "{\"a\":"));
	T_OK(buf_puts(&b, "1"));
	for (k = 0; k < 40; k++)
		T_OK(buf_puts(&b, "}"));
	T_EQ_INT(jx_loads(b.data, b.len, b.len, &j, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "JSON nested deeper than 32 levels");
	buf_free(&b);
	/* far past jansson's own limit: same error, no stack overflow */
	buf_init(&b, 0);
	for (k = 0; k < 100000; k++)
		T_OK(buf_puts(&b, "["));
	T_EQ_INT(jx_loads(b.data, b.len, b.len, &j, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "JSON nested deeper than 32 levels");
	buf_free(&b);
}

static json_t *
doc(const char *text)
{
	json_error_t e;

	return json_loads(text, JSON_ALLOW_NUL, &e);
}

static void
test_getters(void)
{
	json_t *o = doc("{\"s\": \"abc\", \"e\": \"\", \"n\": \"a\\u0000b\", \"i\": 0, \"r\": 1.5,"
	    " \"big\": 9223372036854775807, \"b\": true, \"o\": {}, \"a\": [1, 2, 3],"
	    " \"h\": \"; touch /tmp/pwned\", \"z\": null, \"hugereal\": 1e300}");
	struct bf_diag d;
	const char *s;
	int64_t i;
	double x;
	json_t *v;
	int b;

	T_CHECK(o != NULL);
	/* strings */
	T_EQ_INT(jx_str(o, "s", JX_REQUIRED, 10, &s, "", &d), 0);
	T_EQ_STR(s, "abc");
	T_EQ_INT(jx_str(o, "s", JX_REQUIRED, 2, &s, "top", &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "top.s: is 3 bytes long; at most 2 allowed");
	T_EQ_STR(d.field, "top.s");
	T_EQ_INT(jx_str(o, "e", JX_REQUIRED, 10, &s, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "e: must not be empty");
	T_EQ_INT(jx_str(o, "n", JX_REQUIRED, 10, &s, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "n: contains a NUL byte");
	T_EQ_INT(jx_str(o, "i", JX_REQUIRED, 10, &s, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "i: expected a string, got an integer");
	T_EQ_INT(jx_str(o, "z", JX_OPTIONAL, 10, &s, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "z: expected a string, got null");
	T_EQ_INT(jx_str(o, "h", JX_REQUIRED, 100, &s, "", &d), 0);
	T_EQ_STR(s, "; touch /tmp/pwned");
	s = "untouched";
	T_EQ_INT(jx_str(o, "missing", JX_OPTIONAL, 10, &s, "", &d), 0);
	T_EQ_STR(s, "untouched");
	T_EQ_INT(jx_str(o, "missing", JX_REQUIRED, 10, &s, "a.b", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "a.b.missing: is required");
	T_EQ_STR(d.field, "a.b.missing");
	/* a non-object parent is refused, not crashed on */
	T_EQ_INT(jx_str(json_object_get(o, "a"), "x", JX_REQUIRED, 10, &s, "a", &d),
	    BF_ERR_INVALID);
	T_EQ_STR(d.msg, "a: expected an object, got an array");

	/* integers */
	T_EQ_INT(jx_int(o, "i", JX_REQUIRED, 0, 10, &i, "", &d), 0);
	T_EQ_INT(i, 0);
	T_EQ_INT(jx_int(o, "i", JX_REQUIRED, 1, 10000, &i, "repetitions", &d), BF_ERR_RANGE);
	T_EQ_STR(d.msg, "repetitions.i: 0 is out of range 1..10000");
	T_EQ_INT(jx_int(o, "r", JX_REQUIRED, 0, 10, &i, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "r: expected an integer, got 1.5");
	T_EQ_INT(jx_int(o, "hugereal", JX_REQUIRED, 0, 10, &i, "", &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "hugereal: expected an integer, got 1.0000000000000001e300");
	T_EQ_INT(jx_int(o, "big", JX_REQUIRED, 0, 10, &i, "", &d), BF_ERR_RANGE);
	T_EQ_STR(d.msg, "big: 9223372036854775807 is out of range 0..10");
	T_EQ_INT(jx_int(o, "big", JX_REQUIRED, INT64_MIN, INT64_MAX, &i, "", &d), 0);
	T_EQ_INT(i, INT64_MAX);
	T_EQ_INT(jx_int(o, "s", JX_REQUIRED, 0, 10, &i, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "s: expected an integer, got a string");
	T_EQ_INT(jx_int(o, "b", JX_REQUIRED, 0, 10, &i, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "b: expected an integer, got a boolean");
	i = 77;
	T_EQ_INT(jx_int(o, "missing", JX_OPTIONAL, 0, 10, &i, "", &d), 0);
	T_EQ_INT(i, 77);

	/* numbers */
	T_EQ_INT(jx_num(o, "r", JX_REQUIRED, 0, 10, &x, "", &d), 0);
	T_NEAR(x, 1.5, 0);
	T_EQ_INT(jx_num(o, "i", JX_REQUIRED, -1, 1, &x, "", &d), 0);
	T_NEAR(x, 0, 0);
	T_EQ_INT(jx_num(o, "r", JX_REQUIRED, 2, 3, &x, "", &d), BF_ERR_RANGE);
	T_EQ_STR(d.msg, "r: 1.5 is out of range 2..3");
	T_EQ_INT(jx_num(o, "s", JX_REQUIRED, 0, 1, &x, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "s: expected a number, got a string");
	/* jansson refuses to build a non-finite real; the parser refuses 1e309 */
	T_CHECK(json_real(INFINITY) == NULL);

	/* bool, object, array */
	T_EQ_INT(jx_bool(o, "b", JX_REQUIRED, &b, "", &d), 0);
	T_EQ_INT(b, 1);
	T_EQ_INT(jx_bool(o, "i", JX_REQUIRED, &b, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "i: expected true or false, got an integer");
	T_EQ_INT(jx_obj(o, "o", JX_REQUIRED, &v, "", &d), 0);
	T_CHECK(json_is_object(v));
	T_EQ_INT(jx_obj(o, "a", JX_REQUIRED, &v, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "a: expected an object, got an array");
	T_EQ_INT(jx_arr(o, "a", JX_REQUIRED, 1, 3, &v, "", &d), 0);
	T_EQ_INT(json_array_size(v), 3);
	T_EQ_INT(jx_arr(o, "a", JX_REQUIRED, 1, 2, &v, "", &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "a: has 3 elements; at most 2 allowed");
	T_EQ_INT(jx_arr(o, "a", JX_REQUIRED, 4, 9, &v, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "a: has 3 elements; at least 4 needed");
	T_EQ_INT(jx_arr(o, "o", JX_REQUIRED, 0, 9, &v, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "o: expected an array, got an object");

	/* the value-level forms */
	T_EQ_INT(jx_as_int(json_object_get(o, "r"), 0, 9, &i, "x[2]", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "x[2]: expected an integer, got 1.5");
	T_EQ_INT(jx_as_str(json_object_get(o, "n"), 9, &s, "x[0]", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "x[0]: contains a NUL byte");
	json_decref(o);
}

static void
test_only_keys(void)
{
	static const char *const allowed[] = {"boots", "iterations", "warmup", NULL};
	json_t *o = doc("{\"boots\": 1, \"iteratons\": 3}");
	json_t *ok = doc("{\"boots\": 1, \"warmup\": 3}");
	struct bf_diag d;

	T_EQ_INT(jx_only_keys(o, allowed, "repetitions", &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "repetitions.iteratons: unknown key; expected one of boots, "
	    "iterations, warmup");
	T_EQ_STR(d.field, "repetitions.iteratons");
	T_EQ_INT(jx_only_keys(o, allowed, "", &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "iteratons");
	T_EQ_INT(jx_only_keys(ok, allowed, "", &d), 0);
	json_decref(o);
	json_decref(ok);
}

static const struct {
	const char *s;
	int r;
} name_cases[] = {
	{"ok", 0}, {"a.b-c_d", 0}, {"0abc", 0}, {"Z", 0},
	{"", BF_ERR_INVALID}, {"-x", BF_ERR_INVALID}, {".x", BF_ERR_INVALID},
	{"_x", BF_ERR_INVALID}, {"a b", BF_ERR_INVALID}, {"a/b", BF_ERR_INVALID},
	{"; touch /tmp/pwned", BF_ERR_INVALID}, {"$(id)", BF_ERR_INVALID},
	{"a\nb", BF_ERR_INVALID}, {"caf\xc3\xa9", BF_ERR_INVALID}, {"..", BF_ERR_INVALID},
};

static void
test_names(void)
{
	struct bf_diag d;
	char n64[65], n65[66];
	size_t i;

	for (i = 0; i < sizeof(name_cases) / sizeof(name_cases[0]); i++) {
		bf_diag_clear(&d);
		T_EQ_INT(jx_check_name(name_cases[i].s, "machines.names[3]", &d), name_cases[i].r);
		if (name_cases[i].r != 0)
			expect_msg(name_cases[i].s, &d, "machines.names[3]: \"");
	}
	T_EQ_INT(jx_check_name("a\nb", "x", &d), BF_ERR_INVALID);
	/* the hostile byte shows escaped, never raw, in the message */
	T_CONTAINS(d.msg, "x: \"a\\nb\" is not a valid name");
	T_CHECK(strchr(d.msg, '\n') == NULL);
	memset(n64, 'a', 64);
	n64[64] = '\0';
	memset(n65, 'a', 65);
	n65[65] = '\0';
	T_EQ_INT(jx_check_name(n64, "x", &d), 0);
	T_EQ_INT(jx_check_name(n65, "x", &d), BF_ERR_INVALID);
	T_EQ_INT(jx_check_name(NULL, "x", &d), BF_ERR_INVALID);
}

static void
test_repr_path(void)
{
	char buf[80], small[8], p[BF_DIAG_FIELD];
	json_t *v;
	char longs[200];

	v = json_string("alwayz");
	T_EQ_STR(jx_repr(v, buf, sizeof(buf)), "\"alwayz\"");
	json_decref(v);
	v = json_stringn("a\nb\0c", 5);
	T_EQ_STR(jx_repr(v, buf, sizeof(buf)), "\"a\\nb\\u0000c\"");
	json_decref(v);
	memset(longs, 'x', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = '\0';
	v = json_string(longs);
	jx_repr(v, buf, sizeof(buf));
	T_EQ_INT(strlen(buf), 60);
	T_CHECK(strcmp(buf + 57, "...") == 0);
	jx_repr(v, small, sizeof(small));
	T_EQ_INT(strlen(small), 7);
	json_decref(v);
	v = json_integer(42);
	T_EQ_STR(jx_repr(v, buf, sizeof(buf)), "42");
	json_decref(v);
	T_EQ_STR(jx_repr(NULL, buf, sizeof(buf)), "(nothing)");

	T_EQ_STR(jx_path(p, sizeof(p), "", "a"), "a");
	T_EQ_STR(jx_path(p, sizeof(p), "a", "b"), "a.b");
	T_EQ_STR(jx_path(p, sizeof(p), NULL, "b"), "b");
	T_EQ_STR(jx_path_idx(p, sizeof(p), "matrix.thp", 2), "matrix.thp[2]");
	/* an over-long path is cut, not overrun */
	jx_path(p, sizeof(p), longs, "k");
	T_EQ_INT(strlen(p), sizeof(p) - 1);
}

static void
test_err(void)
{
	const char *seen[32];
	struct bf_diag d;
	int c, i, uniq = 1;

	for (c = 0; c > BF_ERR_LAST; c--) {
		seen[-c] = bf_err_str(c);
		T_CHECK(seen[-c] != NULL && strcmp(seen[-c], "unknown error") != 0);
		for (i = 0; i < -c; i++)
			if (strcmp(seen[i], seen[-c]) == 0)
				uniq = 0;
	}
	T_CHECK(uniq);
	T_EQ_STR(bf_err_str(BF_ERR_LAST), "unknown error");
	T_EQ_STR(bf_err_str(-1000), "unknown error");
	T_EQ_STR(bf_err_str(1), "unknown error");
	T_EQ_STR(bf_err_str(BF_ERR_TOOBIG), "input too large");
	bf_diag_set(&d, "a.b", "x %d", 1);
	T_EQ_STR(d.msg, "a.b: x 1");
	T_EQ_STR(d.field, "a.b");
	bf_diag_set(&d, NULL, "plain");
	T_EQ_STR(d.msg, "plain");
	T_EQ_STR(d.field, "");
	bf_diag_set(&d, "", "plain");
	T_EQ_STR(d.msg, "plain");
	bf_diag_set(NULL, "x", "ignored");
	bf_diag_clear(NULL);
	bf_diag_clear(&d);
	T_EQ_STR(d.msg, "");
}

/* A document's values and containers are counted before jansson builds
 * them: [{},{},...] of 1 MiB would be ~80 MB of tree. */
static char *
t_repeat(const char *open, const char *unit, size_t n, const char *close, size_t *lenp)
{
	size_t ul = strlen(unit), ol = strlen(open), cl = strlen(close), i, off = 0;
	char *b = malloc(ol + cl + n * (ul + 1) + 1);

	memcpy(b, open, ol);
	off = ol;
	for (i = 0; i < n; i++) {
		if (i != 0)
			b[off++] = ',';
		memcpy(b + off, unit, ul);
		off += ul;
	}
	memcpy(b + off, close, cl);
	off += cl;
	b[off] = '\0';
	*lenp = off;
	return b;
}

static void
test_caps(void)
{
	static const struct {
		const char *open, *unit, *close;
		size_t n;
		int want;
		const char *msg;
	} cases[] = {
		{ "[", "{}", "]", BF_MAX_JSON_CONTAINERS - 1, 0, NULL },
		{ "[", "{}", "]", BF_MAX_JSON_CONTAINERS, BF_ERR_TOOBIG, "objects and arrays" },
		{ "[", "[]", "]", 300000, BF_ERR_TOOBIG, "objects and arrays" },
		{ "[", "1", "]", BF_MAX_JSON_NODES - 1, 0, NULL },
		{ "[", "1", "]", BF_MAX_JSON_NODES, BF_ERR_TOOBIG, "values" },
		{ "[", "\"\"", "]", 200000, BF_ERR_TOOBIG, "values" },
		{ "[", "null", "]", 200000, BF_ERR_TOOBIG, "values" },
		/* brackets and quotes inside strings are not counted */
		{ "[", "\"[{[{\\\"[{\"", "]", 50000, 0, NULL },
		/* keys count as values */
		{ "{\"a\":{", "\"k\":1", "}}", 70000, BF_ERR_TOOBIG, "values" },
	};
	struct jx_caps small = { 10, 2 };
	struct bf_diag d;
	json_t *v = NULL;
	size_t i, len;
	char *b;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* distinct keys, or duplicates would fail first */
		if (strcmp(cases[i].unit, "\"k\":1") == 0) {
			size_t j, off;

			b = malloc(cases[i].n * 16 + 16);
			off = (size_t)sprintf(b, "{\"a\":{");
			for (j = 0; j < cases[i].n; j++)
				off += (size_t)sprintf(b + off, "%s\"k%zu\":1", j ? "," : "", j);
			off += (size_t)sprintf(b + off, "}}");
			len = off;
		} else {
			b = t_repeat(cases[i].open, cases[i].unit, cases[i].n, cases[i].close, &len);
		}
		bf_diag_clear(&d);
		v = NULL;
		r = jx_loads(b, len, BF_MAX_API_BODY, &v, &d);
		T_EQ_INT(r, cases[i].want);
		if (cases[i].msg != NULL)
			T_CONTAINS(d.msg, cases[i].msg);
		T_CHECK((r == 0) == (v != NULL));
		json_decref(v);
		free(b);
	}
	/* a larger max scales the caps: 2 MiB of [{},...] parses at max 4 MiB */
	b = t_repeat("[", "{}", BF_MAX_JSON_CONTAINERS + 10, "]", &len);
	v = NULL;
	T_EQ_INT(jx_loads(b, len, BF_MAX_API_BODY, &v, &d), BF_ERR_TOOBIG);
	T_EQ_INT(jx_loads(b, len, 4 * (size_t)BF_MAX_API_BODY, &v, &d), 0);
	json_decref(v);
	free(b);
	/* explicit caps */
	v = NULL;
	T_EQ_INT(jx_loads_capped("[1,2,3]", 7, 100, &small, &v, &d), 0);
	json_decref(v);
	v = NULL;
	T_EQ_INT(jx_loads_capped("[[1],[2]]", 9, 100, &small, &v, &d), BF_ERR_TOOBIG);
	T_EQ_INT(jx_loads_capped("[1,2,3,4,5,6,7,8,9,10,11]", 25, 100, &small, &v, &d),
	    BF_ERR_TOOBIG);
	T_CHECK(v == NULL);
	/* the gate admits max holders and then blocks; enter/leave balance */
	jx_gate_enter(&jx_parse_gate);
	T_EQ_INT(jx_parse_gate.busy, 1);
	jx_gate_leave(&jx_parse_gate);
	T_EQ_INT(jx_parse_gate.busy, 0);
	T_EQ_INT(jx_parse_gate.max, BF_MAX_JSON_PARSES);
}

int
main(void)
{
	test_loads();
	test_caps();
	test_getters();
	test_only_keys();
	test_names();
	test_repr_path();
	test_err();
	return t_done();
}
