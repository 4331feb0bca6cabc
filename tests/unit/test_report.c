/*
 * test_report.c: render small inputs in every format and check the parts a
 * reader relies on: the % change (computed by hand here), the '*' mark, the
 * legend, CSV quoting and JSON validity of hostile labels, and "n/a" for
 * cells with too few samples. BF_REPORT_PRINT=1 prints the renderings.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "caps.h"
#include "report.h"
#include "t.h"

/* The seeds' btree numbers (seconds, lower is better). */
static const double a_time[] = { 381.5, 382.9, 382.0, 381.8, 382.8 };
static const double b_time[] = { 388.1, 392.0, 385.2, 389.9, 388.8 };
/* ops/s, higher is better, 3 boots x 3 iterations each. */
static const double a_rps[] = { 1000, 1010, 1005, 1100, 1090, 1095, 1050, 1040, 1060 };
static const double b_rps[] = { 1200, 1210, 1190, 1250, 1260, 1240, 1180, 1170, 1185 };
static const int boots9[] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 };

static const struct report_metric metrics[] = {
	{ "time", "s", 0 },
	{ "rps", "ops/s", 1 },
};
static const struct report_cell cells[] = {
	{ "thp=never" },
	{ "thp=always, \"fast\"" },
};
static const struct report_series series[] = {
	{ a_time, NULL, 5 }, { a_rps, boots9, 9 },
	{ b_time, NULL, 5 }, { b_rps, boots9, 9 },
};
static const int baseline_of[] = { -1, 0 };

static const struct report_input input = {
	.title = "job 7: btree on zen4-2s",
	.nmetrics = 2, .metrics = metrics,
	.ncells = 2, .cells = cells,
	.series = series,
	.baseline_of = baseline_of,
	.baseline_desc = "thp:never",
	.boot_cost_ratio = 20,
};

static char *
render(const struct report_input *in, const char *format, int expect)
{
	struct bf_diag d;
	struct buf b;
	char *s;
	int r;

	buf_init(&b, 0);
	bf_diag_clear(&d);
	r = report_render(in, format, &b, &d);
	T_EQ_INT(r, expect);
	if (r != 0 && expect == 0)
		fprintf(stderr, "report_render(%s): %s\n", format, d.msg);
	s = buf_steal(&b);
	buf_free(&b);
	if (getenv("BF_REPORT_PRINT") != NULL && r == 0)
		printf("---- %s ----\n%s", format, s);
	return s;
}

/* Longest line and whether any tab is present. */
static void
check_mail_shape(const char *s)
{
	size_t w = 0, maxw = 0;
	const char *p;

	for (p = s; *p; p++) {
		if (*p == '\n') {
			if (w > maxw)
				maxw = w;
			w = 0;
		} else {
			w++;
		}
	}
	T_CHECK(maxw <= 100);
	T_CHECK(strchr(s, '\t') == NULL);
}

static void
test_text(void)
{
	char *s = render(&input, "text", 0);

	/* (388.8 - 382.2) / 382.2 * 100 = 1.7268... */
	T_CONTAINS(s, "+1.73");
	T_CONTAINS(s, "* worse");	/* slower, p = 0.0032 */
	T_CONTAINS(s, "baseline: thp:never");
	T_CONTAINS(s, "job 7: btree on zen4-2s");
	T_CONTAINS(s, "time (s) - lower is better");
	T_CONTAINS(s, "rps (ops/s) - higher is better");
	T_CONTAINS(s, "382.20");
	T_CONTAINS(s, "388.80");
	T_CONTAINS(s, "baseline");
	T_CONTAINS(s, "(B-A)/A*100");
	T_CONTAINS(s, "Fieller");
	T_CONTAINS(s, "Welch p < 0.05 and the CI of the % change");
	T_CONTAINS(s, "unbounded");
	T_CONTAINS(s, "boots x iterations");
	T_CONTAINS(s, "sd between");
	T_CONTAINS(s, "m*");
	check_mail_shape(s);
	free(s);
}

static void
test_markdown(void)
{
	char *s = render(&input, "markdown", 0);

	T_CONTAINS(s, "| cell | n | mean |");
	T_CONTAINS(s, "| --- | ---: |");
	T_CONTAINS(s, "| +1.73 | [+0.93, +2.53] | 0.0032 | \\* worse |");
	T_CONTAINS(s, "thp=always, \"fast\"");
	T_CONTAINS(s, "**time (s) - lower is better**");
	T_CONTAINS(s, "- % change = (B-A)/A\\*100");
	free(s);
	/* A '|' in a label must not break the table. */
	{
		struct report_cell c2[] = { { "a|b" }, { "c" } };
		struct report_input in = input;

		in.cells = c2;
		s = render(&in, "markdown", 0);
		T_CONTAINS(s, "| a\\|b |");
		free(s);
	}
}

static void
test_csv(void)
{
	char *s = render(&input, "csv", 0), *line2;

	T_CHECK(strncmp(s, "metric,unit,higher_better,cell,baseline_cell,n,mean,", 52) == 0);
	T_CONTAINS(s, "\r\ntime,s,0,thp=never,,5,382.2,");
	/* RFC 4180: quoted, inner quotes doubled. */
	T_CONTAINS(s, "\r\ntime,s,0,\"thp=always, \"\"fast\"\"\",thp=never,5,388.8,");
	T_CONTAINS(s, ",1.72684458398744,");
	/* Header + 2 metrics x 2 cells = 5 lines. */
	{
		size_t n = 0;
		const char *p;

		for (p = s; (p = strstr(p, "\r\n")) != NULL; p += 2)
			n++;
		T_EQ_INT(n, 5);
	}
	line2 = strstr(s, "\r\n");
	T_CHECK(line2 != NULL);
	free(s);
}

static void
test_json(void)
{
	char *s = render(&input, "json", 0);
	json_error_t err;
	json_t *j, *rows, *row, *cmp;

	j = json_loads(s, 0, &err);
	T_CHECK(j != NULL);
	if (j == NULL) {
		fprintf(stderr, "json: %s at %d\n", err.text, err.line);
		free(s);
		return;
	}
	T_EQ_STR(json_string_value(json_object_get(j, "baseline")), "thp:never");
	rows = json_object_get(json_array_get(json_object_get(j, "metrics"), 0), "rows");
	T_EQ_INT(json_array_size(rows), 2);
	row = json_array_get(rows, 1);
	T_EQ_STR(json_string_value(json_object_get(row, "cell")), "thp=always, \"fast\"");
	cmp = json_object_get(row, "compare");
	T_NEAR(json_real_value(json_object_get(cmp, "pct_change")), 660 / 382.2, 1e-12);
	T_CHECK(json_is_true(json_object_get(cmp, "significant")));
	/* The baseline row has no comparison: null, not 0. */
	T_CHECK(json_is_null(json_object_get(json_array_get(rows, 0), "compare")));
	/* The two-level metric carries its boots. */
	rows = json_object_get(json_array_get(json_object_get(j, "metrics"), 1), "rows");
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(json_array_get(rows, 0),
	    "boots"), "boots")), 3);
	json_decref(j);
	free(s);
}

/* Cells with one and with no sample, a zero-mean baseline, hostile labels. */
static void
test_degenerate(void)
{
	static const double one[] = { 5.0 }, zero_mean[] = { -1, 1, -0.5, 0.6 };
	static const double b4[] = { 2, 2.1, 1.9, 2.05 };
	static const struct report_metric m1[] = { { "lat", NULL, 0 } };
	static const struct report_cell c4[] = {
		{ "base" }, { "single" }, { "empty" }, { "zb\n\x01\xff\"\\" }, { "zero" },
	};
	static const struct report_series s4[] = {
		{ a_time, NULL, 5 }, { one, NULL, 1 }, { NULL, NULL, 0 }, { b4, NULL, 4 },
		{ zero_mean, NULL, 4 },
	};
	static const int bl[] = { -1, 0, 0, 4, -1 };
	struct report_input in = {
		.title = NULL, .nmetrics = 1, .metrics = m1, .ncells = 5, .cells = c4,
		.series = s4, .baseline_of = bl, .baseline_desc = NULL,
	};
	static const char *const fmts[] = { "text", "markdown", "csv", "json" };
	size_t i;
	char *s;
	json_t *j;

	for (i = 0; i < 4; i++) {
		s = render(&in, fmts[i], 0);
		T_CHECK(s != NULL && *s != '\0');
		if (i < 2) {
			T_CONTAINS(s, "n/a");
			T_CONTAINS(s, "unbounded");
		}
		if (i == 0)
			check_mail_shape(s);
		if (i == 3) {
			j = json_loads(s, 0, NULL);
			T_CHECK(j != NULL);
			json_decref(j);
			T_CONTAINS(s, "\"mean\": null");
		}
		free(s);
	}
	/* Without baselines at all: no comparison columns. */
	in.baseline_of = NULL;
	s = render(&in, "text", 0);
	T_CONTAINS(s, "n/a");
	T_CHECK(strstr(s, "Welch p  ") == NULL && strstr(s, "| Welch p |") == NULL);
	free(s);
	/* A label too long for one line goes on a line of its own. */
	{
		static const struct report_cell lc[] = {
			{ "base" },
			{ "cmdline=no5lvl thp=always threads=256 numa=1 governor=performance "
			  "kernel=6.10.0-rc7-next" },
		};
		static const int lb[] = { -1, 0 };
		struct report_input li = {
			.nmetrics = 1, .metrics = m1, .ncells = 2, .cells = lc,
			.series = s4, .baseline_of = lb,
		};

		s = render(&li, "text", 0);
		check_mail_shape(s);
		T_CONTAINS(s, "\nbase\n");
		T_CONTAINS(s, "kernel=6.10.0-rc7-next\n");
		free(s);
	}
}

static void
test_errors(void)
{
	static const double nan1[] = { 1, NAN };
	static const struct report_series bad[] = {
		{ a_time, NULL, 5 }, { a_rps, NULL, 9 }, { nan1, NULL, 2 }, { b_rps, NULL, 9 },
	};
	static const int self[] = { 0, -1 }, far[] = { -1, 2 };
	struct report_input in = input;
	struct bf_diag d;
	struct buf b;
	char *s;

	free(render(&input, "xml", BF_ERR_INVALID));
	free(render(&input, NULL, BF_ERR_INVALID));
	in.series = bad;
	free(render(&in, "text", BF_ERR_INVALID));
	in = input;
	in.baseline_of = self;
	free(render(&in, "csv", BF_ERR_INVALID));
	in.baseline_of = far;
	free(render(&in, "json", BF_ERR_INVALID));
	in = input;
	in.ncells = BF_MAX_CELLS + 1;
	free(render(&in, "text", BF_ERR_TOOBIG));
	T_EQ_INT(report_render(NULL, "text", NULL, NULL), BF_ERR_INVALID);
	/* The diagnostic names the value. */
	buf_init(&b, 0);
	in = input;
	in.series = bad;
	T_EQ_INT(report_render(&in, "text", &b, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "sample 1");
	T_CONTAINS(d.msg, "not a finite number");
	buf_free(&b);
	/* Output over the buffer's cap. */
	buf_init(&b, 64);
	T_EQ_INT(report_render(&input, "text", &b, &d), BF_ERR_TOOBIG);
	buf_free(&b);
	s = NULL;
	free(s);
}

/* Metric names, units and titles are user text too. */
static void
test_hostile_names(void)
{
	static const struct report_metric hm[] = { { "bad\nname|x", "u*s", 1 } };
	static const struct report_series hs[] = { { a_time, NULL, 5 } };
	static const struct report_cell hc[] = { { "c" } };
	struct report_input in = {
		.title = "t\r\n# injected", .nmetrics = 1, .metrics = hm, .ncells = 1,
		.cells = hc, .series = hs, .baseline_desc = "x\ny",
	};
	char *s;

	s = render(&in, "text", 0);
	T_CONTAINS(s, "t  # injected\n");
	T_CONTAINS(s, "baseline: x y\n");
	T_CONTAINS(s, "\nbad name|x (u*s) - higher is better\n");
	free(s);
	s = render(&in, "markdown", 0);
	T_CONTAINS(s, "**bad name\\|x (u\\*s) - higher is better**");
	free(s);
}

int
main(void)
{
	test_text();
	test_markdown();
	test_csv();
	test_json();
	test_degenerate();
	test_errors();
	test_hostile_names();
	return t_done();
}
