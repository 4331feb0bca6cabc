/* test_parse.c: range-checked integer and double parsing, table driven. */
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "parse.h"
#include "t.h"

static const struct {
	const char *s;
	int64_t min, max;
	int r;
	int64_t v;
} i64_cases[] = {
	{"0", 0, 10, 0, 0},
	{"10", 0, 10, 0, 10},
	{"11", 0, 10, BF_ERR_RANGE, 0},
	{"-1", 0, 10, BF_ERR_RANGE, 0},
	{"-5", -10, 10, 0, -5},
	{"007", 0, 10, 0, 7},
	{"9223372036854775807", INT64_MIN, INT64_MAX, 0, INT64_MAX},
	{"-9223372036854775808", INT64_MIN, INT64_MAX, 0, INT64_MIN},
	{"9223372036854775808", INT64_MIN, INT64_MAX, BF_ERR_RANGE, 0},
	{"-9223372036854775809", INT64_MIN, INT64_MAX, BF_ERR_RANGE, 0},
	{"99999999999999999999999999999999", INT64_MIN, INT64_MAX, BF_ERR_RANGE, 0},
	{"99999999999999999999999x", INT64_MIN, INT64_MAX, BF_ERR_PARSE, 0},
	{"", 0, 10, BF_ERR_PARSE, 0},
	{"-", 0, 10, BF_ERR_PARSE, 0},
	{"+", 0, 10, BF_ERR_PARSE, 0},
	{" 1", 0, 10, BF_ERR_PARSE, 0},
	{"1 ", 0, 10, BF_ERR_PARSE, 0},
	{"1\n", 0, 10, BF_ERR_PARSE, 0},
	{"0x10", 0, 100, BF_ERR_PARSE, 0},
	{"1.0", 0, 10, BF_ERR_PARSE, 0},
	{"1e3", 0, 10000, BF_ERR_PARSE, 0},
	{"; touch /tmp/pwned", 0, 10, BF_ERR_PARSE, 0},
	{"$(id)", 0, 10, BF_ERR_PARSE, 0},
};

static const struct {
	const char *s;
	int r;
	double v;
} dbl_cases[] = {
	{"0", 0, 0},
	{"1.5", 0, 1.5},
	{"-2.25e2", 0, -225},
	{".5", 0, 0.5},
	{"5.", 0, 5},
	{"1e308", 0, 1e308},
	{"1e309", BF_ERR_RANGE, 0},
	{"-1e309", BF_ERR_RANGE, 0},
	{"1e-400", 0, 0},
	{"inf", BF_ERR_PARSE, 0},
	{"nan", BF_ERR_PARSE, 0},
	{"infinity", BF_ERR_PARSE, 0},
	{"0x1p3", BF_ERR_PARSE, 0},
	{"", BF_ERR_PARSE, 0},
	{".", BF_ERR_PARSE, 0},
	{"1e", BF_ERR_PARSE, 0},
	{"1e+", BF_ERR_PARSE, 0},
	{" 1", BF_ERR_PARSE, 0},
	{"1 ", BF_ERR_PARSE, 0},
	{"1,5", BF_ERR_PARSE, 0},
	{"$(id)", BF_ERR_PARSE, 0},
};

/* Regexes that would make regcomp expand without limit are refused. */
static void
test_regex_check(void)
{
	static const struct {
		const char *re;
		int r;
	} cases[] = {
		{ "([0-9.]+) ops/s", 0 },
		{ "TPS: ([0-9]+)", 0 },
		{ "a{2,3}b{4}([0-9]+)", 0 },
		{ "x{1000}", 0 },
		{ "x{1001}", BF_ERR_INVALID },
		{ "(a{255}){255}", BF_ERR_INVALID },	/* found by the fuzzer */
		{ "((a{10}){10}){11}", BF_ERR_INVALID },
		{ "a{5,}", BF_ERR_INVALID },
		{ "a{99999999999}", BF_ERR_INVALID },
		{ "[{]5000[}]", 0 },			/* braces in a bracket expression */
		{ "\\{5000\\}", 0 },			/* escaped braces are literal */
		{ "{", 0 },				/* regcomp's to judge */
		{ "p99=([0-9]+++++++++++++++++++++)", BF_ERR_INVALID },	/* the fuzzer's */
		{ "a**", BF_ERR_INVALID },
		{ "a+?", BF_ERR_INVALID },
		{ "a{2}{3}", BF_ERR_INVALID },
		{ "(a+)b+c*d?", 0 },
		{ "", 0 },
	};
	const char *why;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = NULL;
		T_EQ_INT(parse_regex_check(cases[i].re, &why), cases[i].r);
		T_CHECK((cases[i].r != 0) == (why != NULL));
	}
}

int
main(void)
{
	size_t i;
	int64_t v;
	double dv;
	char longnum[1000];

	for (i = 0; i < sizeof(i64_cases) / sizeof(i64_cases[0]); i++) {
		v = 12345;
		T_EQ_INT(parse_i64(i64_cases[i].s, i64_cases[i].min, i64_cases[i].max, &v),
		    i64_cases[i].r);
		if (i64_cases[i].r == 0)
			T_EQ_INT(v, i64_cases[i].v);
		else
			T_EQ_INT(v, 12345);	/* untouched on failure */
	}
	for (i = 0; i < sizeof(dbl_cases) / sizeof(dbl_cases[0]); i++) {
		dv = 42;
		T_EQ_INT(parse_double(dbl_cases[i].s, &dv), dbl_cases[i].r);
		if (dbl_cases[i].r == 0)
			T_NEAR(dv, dbl_cases[i].v, 1e-9 * fabs(dbl_cases[i].v));
		else
			T_NEAR(dv, 42, 0);
	}
	/* counted spans stop where told, NUL or not */
	T_EQ_INT(parse_i64_n("12345", 3, 0, 1000, &v), 0);
	T_EQ_INT(v, 123);
	T_EQ_INT(parse_i64_n("1\0002", 3, 0, 1000, &v), BF_ERR_PARSE);
	T_EQ_INT(parse_i64_n("", 0, 0, 1000, &v), BF_ERR_PARSE);
	T_EQ_INT(parse_double_n("2.5xyz", 3, &dv), 0);
	T_NEAR(dv, 2.5, 0);
	T_EQ_INT(parse_double_n("1\0002", 3, &dv), BF_ERR_PARSE);
	T_EQ_INT(parse_i64(NULL, 0, 1, &v), BF_ERR_PARSE);
	T_EQ_INT(parse_double(NULL, &dv), BF_ERR_PARSE);
	/* an absurdly long number is refused before strtod sees it */
	memset(longnum, '1', sizeof(longnum) - 1);
	longnum[sizeof(longnum) - 1] = '\0';
	T_EQ_INT(parse_double(longnum, &dv), BF_ERR_TOOBIG);
	T_EQ_INT(parse_i64(longnum, INT64_MIN, INT64_MAX, &v), BF_ERR_RANGE);
	test_regex_check();
	return t_done();
}
