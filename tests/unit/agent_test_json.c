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
	{ "{}", 0, 0, NULL },
	{ " [ ] ", 0, 0, NULL },
	{ "{\"a\":[1,-2.5e3,true,false,null,\"x\"],\"b\":{}}", 0, 0, NULL },
	{ "\"\\u00e9\\ud83d\\ude00\\n\\/\"", 0, 0, NULL },
	{ "0", 0, 0, NULL },
	{ "-0.0e+0", 0, 0, NULL },
	{ "\"h\xc3\xa9llo \xf0\x9f\x98\x80\"", 0, 0, NULL },
	/* truncated */
	{ "", 0, BF_ERR_PARSE, "input ends" },
	{ "{", 0, BF_ERR_PARSE, NULL },
	{ "{\"a\"", 0, BF_ERR_PARSE, "':' expected" },
	{ "{\"a\":", 0, BF_ERR_PARSE, NULL },
	{ "[1,", 0, BF_ERR_PARSE, NULL },
	{ "[1", 0, BF_ERR_PARSE, "unterminated array" },
	{ "\"abc", 0, BF_ERR_PARSE, "unterminated string" },
	{ "\"\\u12", 0, BF_ERR_PARSE, "truncated \\u" },
	{ "\"\\", 0, BF_ERR_PARSE, "truncated escape" },
	{ "tru", 0, BF_ERR_PARSE, "literal" },
	{ "-", 0, BF_ERR_PARSE, "invalid number" },
	{ "1.", 0, BF_ERR_PARSE, "after '.'" },
	{ "1e", 0, BF_ERR_PARSE, "exponent" },
	/* bad syntax */
	{ "[1,]", 0, BF_ERR_PARSE, NULL },
	{ "{\"a\":1,}", 0, BF_ERR_PARSE, "string key expected" },
	{ "{a:1}", 0, BF_ERR_PARSE, "string key expected" },
	{ "01", 0, BF_ERR_PARSE, "trailing" },
	{ "+1", 0, BF_ERR_PARSE, "unexpected character" },
	{ ".5", 0, BF_ERR_PARSE, NULL },
	{ "NaN", 0, BF_ERR_PARSE, NULL },
	{ "Infinity", 0, BF_ERR_PARSE, NULL },
	{ "1e999", 0, BF_ERR_RANGE, "out of range" },
	{ "'a'", 0, BF_ERR_PARSE, NULL },
	/* trailing garbage */
	{ "{} x", 0, BF_ERR_PARSE, "trailing" },
	{ "{}{}", 0, BF_ERR_PARSE, "trailing" },
	{ "[] \x00", 4, BF_ERR_PARSE, "trailing" },
	/* bad escapes */
	{ "\"\\x41\"", 0, BF_ERR_PARSE, "invalid escape" },
	{ "\"\\U0041\"", 0, BF_ERR_PARSE, "invalid escape" },
	{ "\"\\u00g1\"", 0, BF_ERR_PARSE, "hex digit" },
	{ "\"\\'\"", 0, BF_ERR_PARSE, "invalid escape" },
	/* lone surrogates */
	{ "\"\\ud800\"", 0, BF_ERR_PARSE, "lone high surrogate" },
	{ "\"\\ud800x\"", 0, BF_ERR_PARSE, "lone high surrogate" },
	{ "\"\\udc00\"", 0, BF_ERR_PARSE, "lone low surrogate" },
	{ "\"\\ud800\\u0041\"", 0, BF_ERR_PARSE, "not followed by low" },
	{ "\"\\ud800\\ud800\"", 0, BF_ERR_PARSE, "not followed by low" },
	/* NUL, control characters, bad UTF-8 */
	{ "\"a\\u0000b\"", 0, BF_ERR_PARSE, "NUL" },
	{ "\"a\x00" "b\"", 4, BF_ERR_PARSE, "NUL byte" },
	{ "\"a\nb\"", 0, BF_ERR_PARSE, "control character" },
	{ "\"\xff\"", 0, BF_ERR_PARSE, "UTF-8" },
	{ "\"\xc0\xaf\"", 0, BF_ERR_PARSE, "UTF-8" },		/* overlong '/' */
	{ "\"\xed\xa0\x80\"", 0, BF_ERR_PARSE, "UTF-8" },	/* encoded surrogate */
	{ "\"\xf4\x90\x80\x80\"", 0, BF_ERR_PARSE, "UTF-8" },	/* > U+10FFFF */
	{ "\"\xe2\x82\"", 0, BF_ERR_PARSE, "UTF-8" },		/* truncated sequence */
	/* duplicate keys */
	{ "{\"a\":1,\"a\":2}", 0, BF_ERR_PARSE, "duplicate key" },
	{ "{\"a\":1,\"b\":{\"c\":1,\"c\":1}}", 0, BF_ERR_PARSE, "duplicate key" },
	{ "{\"\\u0061\":1,\"a\":2}", 0, BF_ERR_PARSE, "duplicate key" },
	{ "{\"a\":1,\"b\":{\"a\":1}}", 0, 0, NULL },
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
	{ "plain", 5, "\"plain\"" },
	{ "q\"b\\s/", 6, "\"q\\\"b\\\\s/\"" },
	{ "\n\t\r\x01\x1f\x7f", 6, "\"\\n\\t\\r\\u0001\\u001f\\u007f\"" },
	{ "a\0b", 3, "\"a\\ufffdb\"" },
	{ "\xff\xfe", 2, "\"\\ufffd\\ufffd\"" },
	{ "\xc3\xa9", 2, "\"\xc3\xa9\"" },
	{ "\xc3", 1, "\"\\ufffd\"" },				/* cut sequence */
	{ "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"" },	/* surrogate */
	{ "\xf0\x9f\x98\x80!", 5, "\"\xf0\x9f\x98\x80!\"" },
	{ "", 0, "\"\"" },
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
