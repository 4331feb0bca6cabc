/*
 * agent_test_json.c: the agent's strict JSON parser and its output writer,
 * table-driven over valid, truncated, oversized and hostile documents.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "ajson.h"
#include "caps.h"
#include "t.h"

struct ajson_case {
	const char *text;
	size_t len;		/* 0: strlen(text) */
	int want;		/* 0 or the BF_ERR_* expected */
	const char *msg;	/* substring of the diagnostic, or NULL */
};

static const struct ajson_case cases[] = {
	/* valid */
	{ .text = "{}", .len = 0, .want = 0, .msg = NULL },
	{ .text = " [ ] ", .len = 0, .want = 0, .msg = NULL },
	{ .text = "{\"a\":[1,-2.5e3,true,false,null,\"x\"],\"b\":{}}", .len = 0, .want = 0, .msg = NULL },
	{ .text = "\"\\u00e9\\ud83d\\ude00\\n\\/\"", .len = 0, .want = 0, .msg = NULL },
	{ .text = "0", .len = 0, .want = 0, .msg = NULL },
	{ .text = "-0.0e+0", .len = 0, .want = 0, .msg = NULL },
	{ .text = "\"h\xc3\xa9llo \xf0\x9f\x98\x80\"", .len = 0, .want = 0, .msg = NULL },
	/* truncated */
	{ .text = "", .len = 0, .want = BF_ERR_PARSE, .msg = "input ends" },
	{ .text = "{", .len = 0, .want = BF_ERR_PARSE, .msg = NULL },
	{ .text = "{\"a\"", .len = 0, .want = BF_ERR_PARSE, .msg = "':' expected" },
	{ .text = "{\"a\":", .len = 0, .want = BF_ERR_PARSE, .msg = NULL },
	{ .text = "[1,", .len = 0, .want = BF_ERR_PARSE, .msg = NULL },
	{ .text = "[1", .len = 0, .want = BF_ERR_PARSE, .msg = "unterminated array" },
	{ .text = "\"abc", .len = 0, .want = BF_ERR_PARSE, .msg = "unterminated string" },
	{ .text = "\"\\u12", .len = 0, .want = BF_ERR_PARSE, .msg = "truncated \\u" },
	{ .text = "\"\\", .len = 0, .want = BF_ERR_PARSE, .msg = "truncated escape" },
	{ .text = "tru", .len = 0, .want = BF_ERR_PARSE, .msg = "literal" },
	{ .text = "-", .len = 0, .want = BF_ERR_PARSE, .msg = "invalid number" },
	{ .text = "1.", .len = 0, .want = BF_ERR_PARSE, .msg = "after '.'" },
	{ .text = "1e", .len = 0, .want = BF_ERR_PARSE, .msg = "exponent" },
	/* bad syntax */
	{ .text = "[1,]", .len = 0, .want = BF_ERR_PARSE, .msg = NULL },
	{ .text = "{\"a\":1,}", .len = 0, .want = BF_ERR_PARSE, .msg = "string key expected" },
	{ .text = "{a:1}", .len = 0, .want = BF_ERR_PARSE, .msg = "string key expected" },
	{ .text = "01", .len = 0, .want = BF_ERR_PARSE, .msg = "trailing" },
	{ .text = "+1", .len = 0, .want = BF_ERR_PARSE, .msg = "unexpected character" },
	{ .text = ".5", .len = 0, .want = BF_ERR_PARSE, .msg = NULL },
	{ .text = "NaN", .len = 0, .want = BF_ERR_PARSE, .msg = NULL },
	{ .text = "Infinity", .len = 0, .want = BF_ERR_PARSE, .msg = NULL },
	{ .text = "1e999", .len = 0, .want = BF_ERR_RANGE, .msg = "out of range" },
	{ .text = "'a'", .len = 0, .want = BF_ERR_PARSE, .msg = NULL },
	/* trailing garbage */
	{ .text = "{} x", .len = 0, .want = BF_ERR_PARSE, .msg = "trailing" },
	{ .text = "{}{}", .len = 0, .want = BF_ERR_PARSE, .msg = "trailing" },
	{ .text = "[] \x00", .len = 4, .want = BF_ERR_PARSE, .msg = "trailing" },
	/* bad escapes */
	{ .text = "\"\\x41\"", .len = 0, .want = BF_ERR_PARSE, .msg = "invalid escape" },
	{ .text = "\"\\U0041\"", .len = 0, .want = BF_ERR_PARSE, .msg = "invalid escape" },
	{ .text = "\"\\u00g1\"", .len = 0, .want = BF_ERR_PARSE, .msg = "hex digit" },
	{ .text = "\"\\'\"", .len = 0, .want = BF_ERR_PARSE, .msg = "invalid escape" },
	/* lone surrogates */
	{ .text = "\"\\ud800\"", .len = 0, .want = BF_ERR_PARSE, .msg = "lone high surrogate" },
	{ .text = "\"\\ud800x\"", .len = 0, .want = BF_ERR_PARSE, .msg = "lone high surrogate" },
	{ .text = "\"\\udc00\"", .len = 0, .want = BF_ERR_PARSE, .msg = "lone low surrogate" },
	{ .text = "\"\\ud800\\u0041\"", .len = 0, .want = BF_ERR_PARSE, .msg = "not followed by low" },
	{ .text = "\"\\ud800\\ud800\"", .len = 0, .want = BF_ERR_PARSE, .msg = "not followed by low" },
	/* NUL, control characters, bad UTF-8 */
	{ .text = "\"a\\u0000b\"", .len = 0, .want = BF_ERR_PARSE, .msg = "NUL" },
	{ .text = "\"a\x00" "b\"", .len = 4, .want = BF_ERR_PARSE, .msg = "NUL byte" },
	{ .text = "\"a\nb\"", .len = 0, .want = BF_ERR_PARSE, .msg = "control character" },
	{ .text = "\"\xff\"", .len = 0, .want = BF_ERR_PARSE, .msg = "UTF-8" },
	{ .text = "\"\xc0\xaf\"", .len = 0, .want = BF_ERR_PARSE, .msg = "UTF-8" },		/* overlong '/' */
	{ .text = "\"\xed\xa0\x80\"", .len = 0, .want = BF_ERR_PARSE, .msg = "UTF-8" },	/* encoded surrogate */
	{ .text = "\"\xf4\x90\x80\x80\"", .len = 0, .want = BF_ERR_PARSE, .msg = "UTF-8" },	/* > U+10FFFF */
	{ .text = "\"\xe2\x82\"", .len = 0, .want = BF_ERR_PARSE, .msg = "UTF-8" },		/* truncated sequence */
	/* duplicate keys */
	{ .text = "{\"a\":1,\"a\":2}", .len = 0, .want = BF_ERR_PARSE, .msg = "duplicate key" },
	{ .text = "{\"a\":1,\"b\":{\"c\":1,\"c\":1}}", .len = 0, .want = BF_ERR_PARSE, .msg = "duplicate key" },
	{ .text = "{\"\\u0061\":1,\"a\":2}", .len = 0, .want = BF_ERR_PARSE, .msg = "duplicate key" },
	{ .text = "{\"a\":1,\"b\":{\"a\":1}}", .len = 0, .want = 0, .msg = NULL },
};

static void
test_table(void)
{
	struct bf_diag d;
	struct ajson *j;
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ajson_case *c = &cases[i];
		size_t len = c->len != 0 ? c->len : strlen(c->text);

		j = NULL;
		r = ajson_parse(c->text, len, &j, &d);
		if (r != c->want)
			fprintf(stderr, "case %zu (%s): r=%d msg=%s\n", i, c->text, r, d.msg);
		T_EQ_INT(r, c->want);
		T_CHECK((r == 0) == (j != NULL));
		if (c->msg != NULL)
			T_CONTAINS(d.msg, c->msg);
		ajson_free(j);
	}
}

static void
test_values(void)
{
	const char *doc = "{\"s\":\"\\u00e9\\ud83d\\ude00\\t\",\"i\":-42,\"f\":2.5,"
	    "\"big\":123456789012345678901234,\"e\":1e2,\"a\":[1,2,3],\"t\":true}";
	const struct ajson *v;
	struct ajson *j = NULL;

	T_EQ_INT(ajson_parse(doc, strlen(doc), &j, NULL), 0);
	v = ajson_get(j, "s");
	T_CHECK(v != NULL && v->type == AJSON_STR);
	if (v != NULL) {
		T_EQ_STR(v->str, "\xc3\xa9\xf0\x9f\x98\x80\t");
		T_EQ_INT(v->len, 7);
	}
	v = ajson_get(j, "i");
	T_CHECK(v != NULL && v->is_int && v->i == -42);
	v = ajson_get(j, "f");
	T_CHECK(v != NULL && !v->is_int);
	if (v != NULL)
		T_NEAR(v->num, 2.5, 0);
	v = ajson_get(j, "big");		/* beyond int64: a number, not an integer */
	T_CHECK(v != NULL && v->type == AJSON_NUM && !v->is_int);
	v = ajson_get(j, "e");		/* 1e2 is not written as an integer */
	T_CHECK(v != NULL && !v->is_int);
	v = ajson_get(j, "a");
	T_CHECK(v != NULL && v->type == AJSON_ARR && v->n == 3);
	T_CHECK(ajson_get(j, "nope") == NULL);
	T_CHECK(ajson_get(v, "x") == NULL);	/* not an object */
	ajson_free(j);
	ajson_free(NULL);
}

/* Nesting right at the cap parses; one more level is refused, not recursed into. */
static void
test_depth(void)
{
	char doc[4 * BF_MAX_JSON_DEPTH + 16];
	struct bf_diag d;
	struct ajson *j = NULL;
	int n;

	for (n = 0; n < BF_MAX_JSON_DEPTH; n++)
		doc[n] = '[';
	for (; n < 2 * BF_MAX_JSON_DEPTH; n++)
		doc[n] = ']';
	T_EQ_INT(ajson_parse(doc, (size_t)n, &j, &d), 0);
	ajson_free(j);
	j = NULL;
	for (n = 0; n <= BF_MAX_JSON_DEPTH; n++)
		doc[n] = '[';
	for (; n < 2 * BF_MAX_JSON_DEPTH + 2; n++)
		doc[n] = ']';
	T_EQ_INT(ajson_parse(doc, (size_t)n, &j, &d), BF_ERR_TOOBIG);
	T_CONTAINS(d.msg, "deeply");
	T_CHECK(j == NULL);
}

static void
test_oversized(void)
{
	struct bf_diag d;
	struct ajson *j = NULL;
	char *p;
	size_t n, i;

	/* whole document over BF_MAX_STEP: refused before parsing */
	n = (size_t)BF_MAX_STEP + 1;
	p = malloc(n);
	T_CHECK(p != NULL);
	if (p == NULL)
		return;
	memset(p, ' ', n);
	p[0] = '0';
	T_EQ_INT(ajson_parse(p, n, &j, &d), BF_ERR_TOOBIG);
	/* a string over AJSON_MAX_STRING */
	n = AJSON_MAX_STRING + 3;
	p[0] = '"';
	memset(p + 1, 'a', n - 2);
	p[n - 1] = '"';
	T_EQ_INT(ajson_parse(p, n, &j, &d), BF_ERR_TOOBIG);
	T_CONTAINS(d.msg, "longer than the cap");
	/* exactly at the cap is fine */
	n = AJSON_MAX_STRING + 2;
	p[n - 1] = '"';
	T_EQ_INT(ajson_parse(p, n, &j, &d), 0);
	ajson_free(j);
	j = NULL;
	/* too many members in one array */
	n = 0;
	p[n++] = '[';
	for (i = 0; i <= AJSON_MAX_MEMBERS; i++) {
		p[n++] = '0';
		p[n++] = ',';
	}
	p[n - 1] = ']';
	T_EQ_INT(ajson_parse(p, n, &j, &d), BF_ERR_TOOBIG);
	T_CONTAINS(d.msg, "too many members");
	free(p);
	T_EQ_INT(ajson_parse(NULL, 0, &j, &d), BF_ERR_INVALID);
}

struct put_case {
	const char *in;
	size_t len;
	const char *want;
};

static const struct put_case puts_cases[] = {
	{ .in = "plain", .len = 5, .want = "\"plain\"" },
	{ .in = "q\"b\\s/", .len = 6, .want = "\"q\\\"b\\\\s/\"" },
	{ .in = "\n\t\r\x01\x1f\x7f", .len = 6, .want = "\"\\n\\t\\r\\u0001\\u001f\\u007f\"" },
	{ .in = "a\0b", .len = 3, .want = "\"a\\ufffdb\"" },
	{ .in = "\xff\xfe", .len = 2, .want = "\"\\ufffd\\ufffd\"" },
	{ .in = "\xc3\xa9", .len = 2, .want = "\"\xc3\xa9\"" },
	{ .in = "\xc3", .len = 1, .want = "\"\\ufffd\"" },				/* cut sequence */
	{ .in = "\xed\xa0\x80", .len = 3, .want = "\"\\ufffd\\ufffd\\ufffd\"" },	/* surrogate */
	{ .in = "\xf0\x9f\x98\x80!", .len = 5, .want = "\"\xf0\x9f\x98\x80!\"" },
	{ .in = "", .len = 0, .want = "\"\"" },
};

static void
test_writer(void)
{
	struct buf b;
	struct ajson *j;
	size_t i;
	char all[256];

	buf_init(&b, 0);
	for (i = 0; i < sizeof(puts_cases) / sizeof(puts_cases[0]); i++) {
		buf_reset(&b);
		T_EQ_INT(ajson_put_str(&b, puts_cases[i].in, puts_cases[i].len), 0);
		T_EQ_STR(b.data, puts_cases[i].want);
		/* whatever went in, what comes out parses back */
		j = NULL;
		T_EQ_INT(ajson_parse(b.data, b.len, &j, NULL), 0);
		ajson_free(j);
	}
	/* every byte value: output is always valid JSON */
	for (i = 0; i < sizeof(all); i++)
		all[i] = (char)i;
	buf_reset(&b);
	T_EQ_INT(ajson_put_str(&b, all, sizeof(all)), 0);
	j = NULL;
	T_EQ_INT(ajson_parse(b.data, b.len, &j, NULL), 0);
	ajson_free(j);
	buf_reset(&b);
	T_EQ_INT(ajson_put_num(&b, 0.1), 0);
	T_EQ_STR(b.data, "0.1");
	buf_reset(&b);
	T_EQ_INT(ajson_put_num(&b, 123.0), 0);
	T_EQ_STR(b.data, "123");
	buf_reset(&b);
	T_EQ_INT(ajson_put_num(&b, 1.0 / 3.0), 0);
	T_EQ_STR(b.data, "0.33333333333333331");
	buf_reset(&b);
	T_EQ_INT(ajson_put_num(&b, HUGE_VAL), 0);
	T_EQ_STR(b.data, "null");
	buf_free(&b);
	buf_free(NULL);
}

int
main(void)
{
	test_table();
	test_values();
	test_depth();
	test_oversized();
	test_writer();
	return t_done();
}
