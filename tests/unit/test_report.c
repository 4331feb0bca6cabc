/*
 * test_report.c: render small inputs in every format and check the parts a
 * reader relies on: the % change (computed by hand here), the '*' mark, the
 * legend (sample counts, context lines), CSV quoting and JSON validity of
 * hostile labels, the wording of undefined numbers ("n=1, no CI", "no var",
 * "undefined"/"unbounded"), a 2x3 job, the 100-column limit with long
 * labels, counters (no better or worse) and the caller's warnings.
 * BF_REPORT_PRINT=1 prints the renderings.
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
#include "report_fixture.h"

static const struct report_cell cells[] = {
	{ .label = "thp=never" },
	{ .label = "thp=always, \"fast\"" },
};

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
	T_CONTAINS(s, "time (s) - Lower is better");
	T_CONTAINS(s, "rps (ops/s) - Higher is better");
	T_CONTAINS(s, "382.20");
	T_CONTAINS(s, "388.80");
	T_CONTAINS(s, "baseline");
	T_CONTAINS(s, "\n% Change: (B-A)/|A|*100");
	T_CONTAINS(s, "Fieller");
	T_CONTAINS(s, "\nMarks: \"* better\" or \"* worse\"");
	T_CONTAINS(s, "excludes 0");
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
	T_CONTAINS(s, "**time (s) - Lower is better**");
	T_CONTAINS(s, "\n- % Change: (B-A)/\\|A\\|\\*100");
	T_CONTAINS(s, "only when Welch p \\< 0.05 and the 95% CI of the % change excludes 0.");
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
	T_CONTAINS(s, ",1.7268445839874");
	T_CONTAINS(s, ",mw_u,mw_p,note\r\n");
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
	static const struct report_metric m1[] = { { .name = "lat" } };
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
			T_CONTAINS(s, "n=1, no CI");
			T_CONTAINS(s, "no samples");
			T_CONTAINS(s, "unbounded");
			T_CHECK(strstr(s, "nan") == NULL && strstr(s, "NaN") == NULL);
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
	/* One row per cell, each field under its heading. */
	T_CONTAINS(s, "\nsingle   1     5.00000        -  n=1, no CI\n");
	T_CONTAINS(s, "\nempty    0  no samples\n");
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
	static const struct report_metric hm[] = {
		{ .name = "bad\nname|x", .unit = "u*s", .higher_better = 1 },
	};
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
	T_CONTAINS(s, "\nbad name|x (u*s) - Higher is better\n");
	free(s);
	s = render(&in, "markdown", 0);
	T_CONTAINS(s, "**bad name\\|x (u\\*s) - Higher is better**");
	free(s);
}

/* Count of needle in hay. */
static size_t
count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	const char *p;

	for (p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* The line of s that starts with prefix (a copy, or NULL). */
static char *
line_of(const char *s, const char *prefix)
{
	const char *p = s, *e;
	char *l;

	while (p != NULL && *p) {
		if (strncmp(p, prefix, strlen(prefix)) == 0) {
			e = strchr(p, '\n');
			if (e == NULL)
				e = p + strlen(p);
			if ((l = malloc((size_t)(e - p) + 1)) == NULL)
				return NULL;
			memcpy(l, p, (size_t)(e - p));
			l[e - p] = '\0';
			return l;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return NULL;
}

/*
 * A 2x3 job (thp: never, always x threads: 1, 32, 256), baseline
 * thp:never, 3 boots x 5 iterations a cell: the columns, one row per cell,
 * the legend with its sample counts and the caller's context lines.
 */
static void
test_2x3(void)
{
	static const struct report_metric m[] = { { .name = "time", .unit = "s" } };
	static const struct report_cell c6[] = {
		{ "thp=never threads=1" }, { "thp=never threads=32" },
		{ "thp=never threads=256" }, { "thp=always threads=1" },
		{ "thp=always threads=32" }, { "thp=always threads=256" },
	};
	static const int bl[] = { -1, -1, -1, 0, 1, 2 };
	static const char *const ctx[] = {
		"machines: class zen4-2s (bfdemo1, bfdemo2)",
		"kernels: 6.1.0-28-cloud-amd64", NULL
	};
	/* No n column: every cell has 15 samples, which the legend says. */
	static const char *const heads[] = {
		"cell", "mean", "CoV%", "95% CI", "% change", "95% CI of change",
		"Welch p", "sig"
	};
	double v[6][15];
	int boot[15];
	struct report_series s6[6];
	struct report_input in = {
		.title = "job 9: btree", .nmetrics = 1, .metrics = m, .ncells = 6,
		.cells = c6, .series = s6, .baseline_of = bl, .baseline_desc = "thp:never",
		.context = ctx,
	};
	char *s, *head, *p;
	size_t c, i;
	json_t *j, *arr, *rows;

	for (c = 0; c < 6; c++) {
		for (i = 0; i < 15; i++) {
			boot[i] = (int)(i / 5);
			/* thp=always is 2% slower at 256 threads only */
			v[c][i] = 100.0 * (double)(c % 3 + 1) * (c == 5 ? 1.02 : 1.0) +
			    0.3 * (double)boot[i] + 0.05 * (double)(i % 5);
		}
		s6[c] = (struct report_series){ v[c], boot, 15 };
	}
	s = render(&in, "text", 0);
	check_mail_shape(s);
	head = line_of(s, "cell ");
	T_CHECK(head != NULL);
	for (i = 0; head != NULL && i < sizeof(heads) / sizeof(heads[0]); i++)
		T_CONTAINS(head, heads[i]);
	T_CHECK(head != NULL && strstr(head, " n ") == NULL);
	free(head);
	T_CONTAINS(s, "\ntime (s) - Lower is better\n");
	for (c = 0; c < 6; c++) {
		char *l = line_of(s, c6[c].label);

		T_CHECK(l != NULL);
		if (l != NULL && c < 3)
			T_CONTAINS(l, "baseline");
		if (l != NULL && c >= 3)
			T_CHECK(strchr(l, '[') != NULL && strstr(l, "baseline") == NULL);
		free(l);
	}
	p = line_of(s, "thp=always threads=256");
	T_CHECK(p != NULL);
	if (p != NULL) {
		T_CONTAINS(p, "+2.00");
		T_CONTAINS(p, "* worse");
	}
	free(p);
	T_EQ_INT(count_of(s, "* worse"), 2);	/* the row and the legend */
	T_CONTAINS(s, "\n% Change: (B-A)/|A|*100");
	T_CONTAINS(s, "\nMarks: \"* better\" or \"* worse\"");
	T_CONTAINS(s, "\nSamples: n per cell = boots x iterations = 3 x 5 = 15.\n");
	T_CONTAINS(s, "\nSeveral boots per cell: mean, CI and tests use the boot");
	T_CONTAINS(s, "\nmachines: class zen4-2s (bfdemo1, bfdemo2)\n");
	T_CONTAINS(s, "\nkernels: 6.1.0-28-cloud-amd64\n");
	T_CONTAINS(s, "boots x iterations:\n");
	free(s);
	s = render(&in, "markdown", 0);
	T_CONTAINS(s, "| cell | boots x iter | mean | CoV% | 95% CI | % change | 95% CI of change | "
	    "Welch p | sig |");
	T_CONTAINS(s, "\n- machines: class zen4-2s (bfdemo1, bfdemo2)\n");
	T_CONTAINS(s, "\n- kernels: 6.1.0-28-cloud-amd64\n");
	T_CONTAINS(s, "\n- Samples: n per cell = boots x iterations = 3 x 5 = 15.\n");
	free(s);
	s = render(&in, "json", 0);
	j = json_loads(s, 0, NULL);
	T_CHECK(j != NULL);
	arr = json_object_get(j, "context");
	T_EQ_INT(json_array_size(arr), 2);
	T_EQ_STR(json_string_value(json_array_get(arr, 1)), "kernels: 6.1.0-28-cloud-amd64");
	rows = json_object_get(json_array_get(json_object_get(j, "metrics"), 0), "rows");
	T_EQ_INT(json_array_size(rows), 6);
	/* Two levels: the tests use the 3 boot means (MW 3 vs 3: p >= 0.1). */
	T_EQ_INT(json_integer_value(json_object_get(json_array_get(rows, 5), "ci_n")), 3);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(rows, 5), "ci_basis")),
	    "boot means");
	T_NEAR(json_real_value(json_object_get(json_object_get(json_array_get(rows, 5),
	    "compare"), "mw_p")), 0.1, 1e-12);
	T_NEAR(json_real_value(json_object_get(json_object_get(json_array_get(rows, 5),
	    "compare"), "mw_u")), 9, 0);
	json_decref(j);
	free(s);
	/* CSV: one row per cell and metric, no legend lines. */
	s = render(&in, "csv", 0);
	T_EQ_INT(count_of(s, "\r\n"), 7);
	T_CHECK(strstr(s, "machines") == NULL);
	free(s);
}

/* How undefined numbers are said: n=1, zero variance, a baseline mean of 0. */
static void
test_wording(void)
{
	static const double one[] = { 0.4294 }, a4[] = { 0.4068, 0.4071, 0.4065, 0.4070 };
	static const double five[] = { 5, 5, 5 }, six[] = { 6, 6, 6 };
	static const double z[] = { -1, 1, -0.5, 0.5 }, b4[] = { 2, 2.1, 1.9, 2.05 };
	static const struct report_metric m[] = { { .name = "lat", .unit = "us" } };
	static const struct report_cell c6[] = {
		{ "a" }, { "one" }, { "five" }, { "six" }, { "zero" }, { "vs-zero" },
	};
	static const struct report_series s6[] = {
		{ a4, NULL, 4 }, { one, NULL, 1 }, { five, NULL, 3 }, { six, NULL, 3 },
		{ z, NULL, 4 }, { b4, NULL, 4 },
	};
	static const int bl[] = { -1, 0, -1, 2, -1, 4 };
	struct report_input in = {
		.nmetrics = 1, .metrics = m, .ncells = 6, .cells = c6, .series = s6,
		.baseline_of = bl,
	};
	json_t *j, *rows, *r1, *cmp;
	char *s, *l;
	int f;

	for (f = 0; f < 2; f++) {
		s = render(&in, f ? "markdown" : "text", 0);
		T_CHECK(strstr(s, "nan") == NULL && strstr(s, "NaN") == NULL &&
		    strstr(s, "n/a") == NULL);
		if (f == 0) {
			check_mail_shape(s);
			/* n=1: the CI says so; the % change vs a is still a number. */
			l = line_of(s, "one ");
			T_CHECK(l != NULL);
			if (l != NULL) {
				T_EQ_INT(count_of(l, "n=1, no CI"), 2);
				T_CONTAINS(l, "+5.54");	/* 0.4294 / 0.40685 */
				T_CHECK(strstr(l, " 0.00 ") == NULL);
			}
			free(l);
			l = line_of(s, "six ");
			T_CHECK(l != NULL);
			if (l != NULL) {
				T_CONTAINS(l, "0.00");	/* CoV of a constant: 0, truly */
				T_CONTAINS(l, "[6.00000, 6.00000]");
				T_CONTAINS(l, "+20.00");
				T_CONTAINS(l, "no var");
			}
			free(l);
			l = line_of(s, "vs-zero ");
			T_CHECK(l != NULL);
			if (l != NULL) {
				T_CONTAINS(l, "undefined");
				T_CONTAINS(l, "unbounded");
			}
			free(l);
			l = line_of(s, "zero ");
			T_CHECK(l != NULL);
			if (l != NULL)
				T_CONTAINS(l, "  -  ");	/* a mean of 0 has no CoV */
			free(l);
		} else {
			T_CONTAINS(s, "| one | 1 | 0.42940 | - | n=1, no CI | +5.54 | n=1, no CI | - |");
			T_CONTAINS(s, "| undefined | unbounded |");
		}
		free(s);
	}
	s = render(&in, "json", 0);
	j = json_loads(s, 0, NULL);
	T_CHECK(j != NULL);
	rows = json_object_get(json_array_get(json_object_get(j, "metrics"), 0), "rows");
	r1 = json_array_get(rows, 1);
	T_CHECK(json_is_null(json_object_get(r1, "sd")));
	T_CHECK(json_is_null(json_object_get(r1, "ci_lo")));
	T_CHECK(json_is_null(json_object_get(r1, "cov_pct")));
	T_EQ_STR(json_string_value(json_object_get(r1, "note")), "n=1, no CI");
	cmp = json_object_get(r1, "compare");
	T_CHECK(json_is_null(json_object_get(cmp, "pct_ci_lo")));
	T_CHECK(json_is_null(json_object_get(cmp, "welch_p")));
	T_EQ_STR(json_string_value(json_object_get(cmp, "note")), "n=1, no CI, no test");
	T_NEAR(json_real_value(json_object_get(cmp, "pct_change")),
	    100 * (0.4294 / 0.40685 - 1), 1e-9);
	cmp = json_object_get(json_array_get(rows, 3), "compare");
	T_EQ_STR(json_string_value(json_object_get(cmp, "note")),
	    "zero variance in both cells: no Welch test");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(rows, 2), "note")),
	    "zero variance: the CI has zero width");
	cmp = json_object_get(json_array_get(rows, 5), "compare");
	T_CHECK(json_is_null(json_object_get(cmp, "pct_change")));
	T_CHECK(json_is_true(json_object_get(cmp, "pct_ci_unbounded")));
	T_CONTAINS(json_string_value(json_object_get(cmp, "note")), "baseline mean is 0");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(rows, 4), "note")),
	    "mean is 0: no CoV");
	json_decref(j);
	free(s);
	s = render(&in, "csv", 0);
	T_CONTAINS(s, ",\"n=1, no CI, no test\"\r\n");
	free(s);
}

/* Long labels and numbers of very different sizes stay within 100 columns. */
static void
test_width(void)
{
	static const double big[] = { 1234567890.5, 1234567990.25, 1234567790.75 };
	static const double tiny[] = { 0.0012345, 0.0012355, 0.0012349 };
	static const double huge_cov[] = { -1e-3, 1e-3, 2e-6 };
	static const struct report_metric m[] = {
		{ .name = "x", .unit = "ns", .higher_better = 1 },
	};
	static const char *const ctx[] = {
		"machines: class zen4-2s (bfdemo1, bfdemo2, bfdemo3, bfdemo4, bfdemo5, "
		"bfdemo6, bfdemo7, bfdemo8, bfdemo9, bfdemo10, bfdemo11, bfdemo12)",
		"kernels: 6.1.0-28-cloud-amd64-with-a-local-version-string-that-goes-on-"
		"and-on-without-any-space-in-it-at-all-for-over-a-hundred-columns-long",
		"a\nhostile\x01line", NULL
	};
	struct report_cell c4[] = {
		{ "thp=never" },
		{ "cmdline=\"no5lvl mitigations=off transparent_hugepage=always "
		  "numa_balancing=disable\" thp=always threads=256 numa=1 governor="
		  "performance kernel=6.10.0-rc7-next-20240712 sysctl.vm.swappiness=10" },
		{ "x=0123456789012345678901234567890123456789012345678901234567890123456789"
		  "0123456789012345678901234567890123456789" },
		{ "near-zero" },
	};
	struct report_series s4[] = {
		{ big, NULL, 3 }, { tiny, NULL, 3 }, { big, NULL, 3 }, { huge_cov, NULL, 3 },
	};
	static const int bl[] = { -1, 0, 0, 1 };
	struct report_input in = {
		.nmetrics = 1, .metrics = m, .ncells = 4, .cells = c4, .series = s4,
		.baseline_of = bl, .context = ctx,
	};
	char *s;

	s = render(&in, "text", 0);
	/* tiny vs big: -99.9999999999% with a CI 1e-13 wide. Its row keeps the
	 * digits that tell its ends apart and is wider than 100 columns for it
	 * (issue 17: a wide row never drops digits); every other line fits. */
	check_mail_shape(strstr(s, "\n% Change") != NULL ? strstr(s, "\n% Change") : s);
	T_CHECK(strchr(s, '\t') == NULL);
	T_CONTAINS(s, "\n  threads=256 numa=1 governor=performance");	/* labels wrap */
	T_CONTAINS(s, "[-99.999999999900069, -99.999999999899870]");
	T_CONTAINS(s, "[0.0012337, 0.0012362]");
	T_CONTAINS(s, "a hostile line");
	T_CONTAINS(s, "sysctl.vm.swappiness=10");
	free(s);
	s = render(&in, "json", 0);
	T_CONTAINS(s, "\"a\\nhostile\\u0001line\"");
	free(s);
	/* Too many context lines. */
	{
		const char *many[REPORT_MAX_CONTEXT + 2];
		size_t i;

		for (i = 0; i < REPORT_MAX_CONTEXT + 1; i++)
			many[i] = "x";
		many[i] = NULL;
		in.context = many;
		free(render(&in, "text", BF_ERR_TOOBIG));
	}
}

/* The part of s from the line that starts with head up to the next blank
 * line (a metric's table in text), copied; "" when head is not there. */
static char *
section(const char *s, const char *head)
{
	const char *p = strstr(s, head), *e;

	if (p == NULL)
		return strdup("");
	e = strstr(p, "\n\n");
	return strndup(p, e != NULL ? (size_t)(e - p) : strlen(p));
}

/*
 * Counters beside a recipe metric: no better or worse in every format, a
 * significant change marked "*" alone, the legend saying so, and a
 * counter only one cell has shown as "no samples" in the other.
 */
static void
test_counters(void)
{
	static const double a_pf[] = { 1000, 1010, 990, 1005, 995 };
	static const double b_pf[] = { 500, 505, 495, 502, 498 };
	static const double b_m[] = { 12, 14, 13, 12, 13 };
	static const struct report_metric m[] = {
		{ .name = "time", .unit = "s" },
		{ .name = "vmstat.pgfault", .unit = "count", .higher_better = 1,
		  .no_direction = 1 },
		{ .name = "hugepages-64kB.anon_fault_alloc", .unit = "count", .no_direction = 1 },
	};
	static const struct report_series s3[] = {
		{ a_time, NULL, 5 }, { a_pf, NULL, 5 }, { NULL, NULL, 0 },
		{ b_time, NULL, 5 }, { b_pf, NULL, 5 }, { b_m, NULL, 5 },
	};
	struct report_input in = input;
	char *s, *sec;
	json_t *j, *mo, *row;
	int i;

	in.nmetrics = 3;
	in.metrics = m;
	in.series = s3;
	s = render(&in, "text", 0);
	T_CONTAINS(s, "\ntime (s) - Lower is better\n");
	T_CONTAINS(s, "\nvmstat.pgfault (count) - no better or worse\n");
	T_CONTAINS(s, "\nhugepages-64kB.anon_fault_alloc (count) - no better or worse\n");
	sec = section(s, "vmstat.pgfault (count)");
	T_CONTAINS(sec, "-50.00");		/* (500 - 1000) / 1000 */
	T_CHECK(sec[0] != '\0' && sec[strlen(sec) - 1] == '*');	/* the last row's mark */
	/* below the heading, neither word */
	T_CHECK(strchr(sec, '\n') != NULL && strstr(strchr(sec, '\n'), "better") == NULL &&
	    strstr(strchr(sec, '\n'), "worse") == NULL);
	free(sec);
	/* the other cell has no samples of the mTHP counter */
	sec = section(s, "hugepages-64kB.anon_fault_alloc");
	T_CONTAINS(sec, "\nthp=never           0  no samples");
	T_CONTAINS(sec, "baseline");
	free(sec);
	T_CONTAINS(s, "\nCounters (\"no better or worse\"): what the kernel did");
	T_CONTAINS(s, "* worse");		/* the recipe's metric keeps its words */
	check_mail_shape(s);
	free(s);
	s = render(&in, "markdown", 0);
	T_CONTAINS(s, "**vmstat.pgfault (count) - no better or worse**");
	T_CONTAINS(s, " | \\* |\n");
	T_CONTAINS(s, "\n- Counters (\"no better or worse\")");
	free(s);
	s = render(&in, "csv", 0);
	T_CONTAINS(s, "\r\nvmstat.pgfault,count,,thp=never,,5,1000,");
	T_CONTAINS(s, "\r\ntime,s,0,thp=never,");
	T_CONTAINS(s, "\r\nhugepages-64kB.anon_fault_alloc,count,,thp=never,,0,,");
	free(s);
	s = render(&in, "json", 0);
	j = json_loads(s, 0, NULL);
	T_CHECK(j != NULL);
	for (i = 0; i < 3; i++) {
		mo = json_array_get(json_object_get(j, "metrics"), (size_t)i);
		T_EQ_STR(json_string_value(json_object_get(mo, "direction")),
		    i == 0 ? "lower" : "none");
		T_CHECK(i == 0 ? json_is_false(json_object_get(mo, "higher_better")) :
		    json_is_null(json_object_get(mo, "higher_better")));
	}
	row = json_array_get(json_object_get(json_array_get(json_object_get(j, "metrics"), 1),
	    "rows"), 1);
	T_EQ_STR(json_string_value(json_object_get(json_object_get(row, "compare"), "mark")),
	    "*");
	row = json_array_get(json_object_get(json_array_get(json_object_get(j, "metrics"), 2),
	    "rows"), 0);
	T_EQ_INT(json_integer_value(json_object_get(row, "n")), 0);
	T_EQ_STR(json_string_value(json_object_get(row, "note")), "no samples");
	json_decref(j);
	free(s);
	/* Without a counter, no counter legend: the reports before stay as they were. */
	s = render(&input, "text", 0);
	T_CHECK(strstr(s, "Counters") == NULL);
	T_CHECK(strstr(s, "no better or worse") == NULL);
	free(s);
}

/* The caller's warnings: last in the legend, a "warnings" array in JSON,
 * nothing in CSV (no other lines), capped like the context. */
static void
test_warnings(void)
{
	static const char *const ctx[] = { "machines: bfit1", NULL };
	static const char *const warn[] = {
		"cell thp=always: THP enabled=always but no huge page was faulted in",
		"a\nforged\rline|*x*", NULL
	};
	struct report_input in = input;
	const char *many[REPORT_MAX_WARNINGS + 2];
	char *s, *big;
	json_t *j, *w, *leg;
	size_t i;

	in.context = ctx;
	in.warnings = warn;
	s = render(&in, "text", 0);
	T_CONTAINS(s, "\nmachines: bfit1\nWarning: cell thp=always: THP enabled=always but no");
	T_CONTAINS(s, "\nWarning: a forged line|*x*\n");	/* one line, no forged one */
	T_CHECK(strstr(s, "\nforged") == NULL);
	check_mail_shape(s);
	free(s);
	s = render(&in, "markdown", 0);
	T_CONTAINS(s, "\n- Warning: cell thp=always: THP enabled=always");
	T_CONTAINS(s, "\n- Warning: a forged line\\|\\*x\\*\n");
	free(s);
	s = render(&in, "csv", 0);
	T_CHECK(strstr(s, "Warning") == NULL && strstr(s, "forged") == NULL);
	free(s);
	s = render(&in, "json", 0);
	j = json_loads(s, 0, NULL);
	w = json_object_get(j, "warnings");
	T_EQ_INT(json_array_size(w), 2);
	T_EQ_STR(json_string_value(json_array_get(w, 1)), "a\nforged\rline|*x*");
	leg = json_object_get(j, "legend");
	T_EQ_STR(json_string_value(json_array_get(leg, json_array_size(leg) - 2)),
	    "Warning: cell thp=always: THP enabled=always but no huge page was faulted in");
	json_decref(j);
	free(s);
	/* none: an empty array, not a missing key */
	s = render(&input, "json", 0);
	j = json_loads(s, 0, NULL);
	T_CHECK(json_is_array(json_object_get(j, "warnings")));
	T_EQ_INT(json_array_size(json_object_get(j, "warnings")), 0);
	json_decref(j);
	free(s);
	/* caps: lines, and bytes per line */
	for (i = 0; i < REPORT_MAX_WARNINGS + 1; i++)
		many[i] = "x";
	many[i] = NULL;
	in.warnings = many;
	free(render(&in, "text", BF_ERR_TOOBIG));
	many[REPORT_MAX_WARNINGS] = NULL;
	free(render(&in, "text", 0));
	big = malloc(BF_MAX_STR + 2);
	T_CHECK(big != NULL);
	if (big != NULL) {
		memset(big, 'w', BF_MAX_STR + 1);
		big[BF_MAX_STR + 1] = '\0';
		many[0] = big;
		free(render(&in, "json", BF_ERR_TOOBIG));
		free(big);
	}
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
	test_2x3();
	test_wording();
	test_width();
	test_counters();
	test_warnings();
	return t_done();
}
