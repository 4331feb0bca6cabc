/*
 * test_cli_table.c: cli/table.c, the CLI's aligned text tables: width
 * counting, cutting, sanitising hostile cells (escape sequences, C1
 * controls, malformed UTF-8) and the exact layout of a rendered table.
 * table.c is compiled in here: the CLI is an executable, not a library.
 */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "../../cli/table.c"

static const struct {
	const char *in;
	size_t max;
	const char *out;
} sanitize_cases[] = {
	{ "abc", 0, "abc" },
	{ "", 0, "" },
	{ "a\tb\nc\rd", 0, "a b c d" },
	{ "\x1b[31mred", 0, "?[31mred" },		/* CSI by ESC */
	{ "\xc2\x9b" "31m", 0, "??31m" },		/* CSI as a C1 control */
	{ "\x07\x7f", 0, "??" },
	{ "\xff\xfe", 0, "??" },			/* never valid in UTF-8 */
	{ "\xc0\xaf", 0, "??" },			/* overlong '/' */
	{ "\xe0\x80\xaf", 0, "???" },			/* overlong, 3 bytes */
	{ "\xed\xa0\x80", 0, "???" },			/* a surrogate */
	{ "\xf4\x90\x80\x80", 0, "????" },		/* past U+10FFFF */
	{ "ab\xe2\x82", 0, "ab??" },			/* cut short at the end */
	{ "h\xc3\xa9llo", 0, "h\xc3\xa9llo" },		/* héllo kept */
	{ "\xc2\xa0x", 0, "\xc2\xa0x" },		/* U+00A0 is printable */
	{ "\xf0\x9f\x99\x82", 0, "\xf0\x9f\x99\x82" },	/* 4-byte emoji kept */
	{ "abcdefghij", 6, "abc..." },
	{ "abcdef", 6, "abcdef" },
	{ "abcdefg", 3, "abc" },			/* too narrow for "..." */
	{ "abcdefg", 4, "a..." },
	{ "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5, "\xc3\xa9\xc3\xa9..." },
	{ "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 4, "\xe2\x82\xac..." },
	{ "\x1b\x1b\x1b\x1b\x1b\x1b", 5, "??..." },	/* cut after replacing */
};

static const struct {
	const char *in;
	size_t width;
} width_cases[] = {
	{ "", 0 },
	{ "abc", 3 },
	{ "h\xc3\xa9llo", 5 },
	{ "\xe2\x82\xac", 1 },
	{ "\xf0\x9f\x99\x82!", 2 },
};

static void
test_sanitize(void)
{
	size_t i;
	char *s;

	for (i = 0; i < sizeof(sanitize_cases) / sizeof(sanitize_cases[0]); i++) {
		s = table_sanitize(sanitize_cases[i].in, sanitize_cases[i].max);
		T_EQ_STR(s, sanitize_cases[i].out);
		if (sanitize_cases[i].max > 0)
			T_CHECK(table_width(s) <= sanitize_cases[i].max);
		free(s);
	}
	s = table_sanitize(NULL, 0);
	T_EQ_STR(s, "");
	free(s);
}

static void
test_width(void)
{
	size_t i;

	for (i = 0; i < sizeof(width_cases) / sizeof(width_cases[0]); i++)
		T_EQ_INT(table_width(width_cases[i].in), width_cases[i].width);
	T_EQ_INT(table_width(NULL), 0);
}

static const struct table_col cols[] = {
	{ .head = "ID", .max = 0, .align = TABLE_RIGHT },
	{ .head = "NAME", .max = 8, .align = TABLE_LEFT },
	{ .head = "STATE", .max = 0, .align = TABLE_LEFT },
};

static char *
render(struct table *t)
{
	struct buf b;
	char *s;

	buf_init(&b, 0);
	T_EQ_INT(table_render(t, &b), 0);
	s = buf_steal(&b);
	buf_free(&b);
	return s;
}

static void
test_render(void)
{
	const char *r1[] = { "7", "redis", "running" };
	const char *r2[] = { "1234", "a-very-long-name", "done" };
	const char *r3[] = { "9", "h\xc3\xa9", NULL };
	const char *r4[] = { "10", "\x1b[2Jx", "" };
	struct table t;
	char *s;

	T_EQ_INT(table_init(&t, cols, 3), 0);
	s = render(&t);
	T_EQ_STR(s, "ID  NAME  STATE\n");		/* header alone, no trailing space */
	free(s);

	T_EQ_INT(table_add_row(&t, r1), 0);
	T_EQ_INT(table_add_row(&t, r2), 0);
	T_EQ_INT(table_add_row(&t, r3), 0);
	T_EQ_INT(table_add_row(&t, r4), 0);
	s = render(&t);
	T_EQ_STR(s,
	    "  ID  NAME      STATE\n"
	    "   7  redis     running\n"
	    "1234  a-ver...  done\n"
	    "   9  h\xc3\xa9        -\n"	/* é is one column wide */
	    "  10  ?[2Jx\n");			/* an empty last cell leaves no spaces */
	free(s);
	table_free(&t);
	table_free(&t);		/* twice is harmless */
	table_free(NULL);

	T_EQ_INT(table_init(&t, cols, 0), BF_ERR_INVALID);
	table_free(&t);
}

static void
test_right_last(void)
{
	static const struct table_col c2[] = {
		{ "K", 0, TABLE_LEFT },
		{ "N", 0, TABLE_RIGHT },
	};
	const char *r1[] = { "a", "1" };
	const char *r2[] = { "bb", "100" };
	struct table t;
	char *s;

	T_EQ_INT(table_init(&t, c2, 2), 0);
	T_EQ_INT(table_add_row(&t, r1), 0);
	T_EQ_INT(table_add_row(&t, r2), 0);
	s = render(&t);
	T_EQ_STR(s, "K     N\na     1\nbb  100\n");
	free(s);
	table_free(&t);
}

/* Many rows (the array grows) and one huge cell with no column cap. */
static void
test_big(void)
{
	static const struct table_col c1[] = { { "X", 0, TABLE_LEFT } };
	const char *row[1];
	struct table t;
	char *big, *s;
	size_t i;

	T_EQ_INT(table_init(&t, c1, 1), 0);
	row[0] = "y";
	for (i = 0; i < 5000; i++)
		T_EQ_INT(table_add_row(&t, row), 0);
	T_EQ_INT(t.nrows, 5000);
	big = malloc(100001);
	memset(big, 'z', 100000);
	big[100000] = '\0';
	row[0] = big;
	T_EQ_INT(table_add_row(&t, row), 0);
	s = render(&t);
	T_EQ_INT(strlen(s), 2 + 5000 * 2 + 100001);
	free(s);
	free(big);
	table_free(&t);
}

int
main(void)
{
	test_sanitize();
	test_width();
	test_render();
	test_right_last();
	test_big();
	return t_done();
}
