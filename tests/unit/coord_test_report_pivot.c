/*
 * coord_test_report_pivot.c: how the API picks a report's layout
 * (api_report_columns) and lays a job's cells out (api_report_pivot): the
 * kernel or cmdline axis by default, columns=none and a baseline on another
 * axis keep the rows, a suite (workload axis) goes side by side on its
 * baseline's axis and gets its summary; bad columns are 400s naming the
 * field; the rows are the other axes in matrix order.
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "api-int.h"
#include "err.h"
#include "report-pivot.h"
#include "t.h"

static json_t *
cells(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (j == NULL)
		fprintf(stderr, "bad fixture: %s\n", e.text);
	return j;
}

static const char *
pick(const json_t *c, const char *colq, const char *base, int expect, struct bf_diag *d)
{
	static char axis[BF_MAX_NAME + 1];

	bf_diag_clear(d);
	T_EQ_INT(api_report_columns(c, colq, base, axis, sizeof(axis), d), expect);
	return axis;
}

static void
test_columns(void)
{
	json_t *k = cells("[{\"axes\": {\"kernel\": \"6.1\", \"thp\": \"never\"}},"
	    "{\"axes\": {\"kernel\": \"6.1\", \"thp\": \"always\"}},"
	    "{\"axes\": {\"kernel\": \"6.12\", \"thp\": \"never\"}},"
	    "{\"axes\": {\"kernel\": \"6.12\", \"thp\": \"always\"}}]");
	json_t *cl = cells("[{\"axes\": {\"cmdline\": \"\"}}, {\"axes\": {\"cmdline\": \"no5lvl\"}}]");
	json_t *one = cells("[{\"axes\": {\"kernel\": \"6.1\", \"mb\": 8}},"
	    "{\"axes\": {\"kernel\": \"6.1\", \"mb\": 16}}]");
	json_t *suite = cells("[{\"axes\": {\"workload\": \"btree\", \"thp\": \"never\"}},"
	    "{\"axes\": {\"workload\": \"btree\", \"thp\": \"always\"}},"
	    "{\"axes\": {\"workload\": \"redis\", \"thp\": \"never\"}},"
	    "{\"axes\": {\"workload\": \"redis\", \"thp\": \"always\"}}]");
	struct bf_diag d;

	T_EQ_STR(pick(k, NULL, NULL, 0, &d), "kernel");
	T_EQ_STR(pick(k, NULL, "kernel:6.12", 0, &d), "kernel");
	T_EQ_STR(pick(k, NULL, "thp:never", 0, &d), "");	/* the rows it always had */
	T_EQ_STR(pick(k, "none", NULL, 0, &d), "");
	T_EQ_STR(pick(k, "thp", NULL, 0, &d), "thp");
	T_EQ_STR(pick(k, "thp", "thp:always", 0, &d), "thp");
	pick(k, "thp", "kernel:6.1", BF_ERR_INVALID, &d);
	T_EQ_STR(d.field, "baseline");
	pick(k, "nope", NULL, BF_ERR_INVALID, &d);
	T_EQ_STR(d.field, "columns");
	T_CONTAINS(d.msg, "not an axis");
	pick(k, "", NULL, BF_ERR_INVALID, &d);
	T_EQ_STR(d.field, "columns");
	T_EQ_STR(pick(cl, NULL, NULL, 0, &d), "cmdline");
	/* one kernel: nothing to put side by side, so the rows by default */
	T_EQ_STR(pick(one, NULL, NULL, 0, &d), "");
	pick(one, "kernel", NULL, BF_ERR_INVALID, &d);
	T_CONTAINS(d.msg, "one value");
	T_EQ_STR(pick(suite, NULL, NULL, 0, &d), "");
	T_EQ_STR(pick(suite, NULL, "thp:never", 0, &d), "thp");
	T_EQ_STR(pick(suite, NULL, "workload:btree", 0, &d), "");
	json_decref(k);
	json_decref(cl);
	json_decref(one);
	json_decref(suite);
}

static void
test_pivot(void)
{
	json_t *k = cells("[{\"axes\": {\"threads\": 32, \"kernel\": \"6.1\", \"thp\": \"never\"}},"
	    "{\"axes\": {\"threads\": 32, \"kernel\": \"6.12\", \"thp\": \"never\"}},"
	    "{\"axes\": {\"threads\": 32, \"kernel\": \"6.1\", \"thp\": \"always\"}},"
	    "{\"axes\": {\"threads\": 32, \"kernel\": \"6.12\", \"thp\": \"always\"}}]");
	json_t *suite = cells("[{\"axes\": {\"workload\": \"btree\", \"thp\": \"never\"}},"
	    "{\"axes\": {\"workload\": \"btree\", \"thp\": \"always\"}}]");
	struct report_pivot *p = NULL;
	struct bf_diag d;
	int base[4];

	T_EQ_INT(api_report_pivot(k, "kernel", NULL, 0, &p, &d), 0);
	T_EQ_INT(p->ncols, 2);
	T_EQ_STR(p->cols[0], "6.1");
	T_EQ_INT(p->nrows, 2);
	/* the other axes, in matrix order */
	T_EQ_STR(p->rows[0], "threads=32 thp=never");
	T_EQ_STR(p->rows[1], "threads=32 thp=always");
	T_EQ_INT(p->summary, 0);
	report_pivot_baselines(p, base, 4);
	T_EQ_INT(base[1], 0);
	T_EQ_INT(base[3], 2);
	T_EQ_INT(base[0], -1);
	report_pivot_free(p);
	T_EQ_INT(api_report_pivot(k, "kernel", "kernel:6.12", 0, &p, &d), 0);
	T_EQ_STR(p->cols[0], "6.12");
	report_pivot_free(p);
	T_EQ_INT(api_report_pivot(k, "kernel", "kernel:7.0", 0, &p, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "columns");
	T_CHECK(p == NULL);
	T_EQ_INT(api_report_pivot(suite, "thp", "thp:never", 0, &p, &d), 0);
	T_EQ_INT(p->summary, 1);	/* a suite sums up */
	T_EQ_STR(p->rows[0], "workload=btree");
	report_pivot_free(p);
	json_decref(k);
	json_decref(suite);
}

/* spread "any": comparisons across machines are named; the same set of
 * machines on both sides, or a cell not yet run, says nothing. */
static void
test_cmp_machines(void)
{
	json_t *c = cells("[{\"cell_index\": 0, \"label\": \"loops=1\"},"
	    "{\"cell_index\": 1, \"label\": \"loops=2\"},"
	    "{\"cell_index\": 2, \"label\": \"loops=3\"},"
	    "{\"cell_index\": 3, \"label\": \"loops=4\"}]");
	json_t *runs = cells("{\"runs\": ["
	    "{\"cell_index\": 0, \"state\": \"done\", \"machine\": \"h1\"},"
	    "{\"cell_index\": 1, \"state\": \"done\", \"machine\": \"h2\"},"
	    "{\"cell_index\": 2, \"state\": \"done\", \"machine\": \"h1\"},"
	    "{\"cell_index\": 3, \"state\": \"failed\", \"machine\": \"h2\"}]}");
	int base[4] = { -1, 0, 0, 0 };
	struct buf b;

	buf_init(&b, BF_MAX_STR);
	T_EQ_INT(api_report_cmp_machines(c, runs, base, 4, &b), 0);
	T_EQ_STR(b.data, "different machines: loops=2 on h2 vs loops=1 on h1: these changes "
	    "include the machines' own difference (machines.spread pin or block keeps a "
	    "comparison on one machine)");
	buf_reset(&b);
	base[1] = -1;
	T_EQ_INT(api_report_cmp_machines(c, runs, base, 4, &b), 0);
	T_CHECK(b.len == 0);	/* loops=3 ran where its baseline did */
	buf_free(&b);
	json_decref(c);
	json_decref(runs);
}

/* spread "block": cells split by machine, each compared on its machine,
 * then pooled: the numbers against the samples worked by hand. */
static void
test_block(void)
{
	json_t *samp = cells("{\"cells\": ["
	    "{\"cell_index\": 0, \"label\": \"loops=1\", \"axes\": {\"loops\": \"1\"},"
	    " \"samples\": [{\"metric\": \"wall_s\", \"value\": 10, \"boot\": 0, \"run\": 1},"
	    " {\"metric\": \"wall_s\", \"value\": 12, \"boot\": 0, \"run\": 1},"
	    " {\"metric\": \"wall_s\", \"value\": 20, \"boot\": 0, \"run\": 2}]},"
	    "{\"cell_index\": 1, \"label\": \"loops=2\", \"axes\": {\"loops\": \"2\"},"
	    " \"samples\": [{\"metric\": \"wall_s\", \"value\": 22, \"boot\": 0, \"run\": 3},"
	    " {\"metric\": \"wall_s\", \"value\": 30, \"boot\": 0, \"run\": 4}]}]}");
	json_t *runs = cells("{\"runs\": ["
	    "{\"id\": 1, \"cell_index\": 0, \"state\": \"done\", \"machine\": \"h1\"},"
	    "{\"id\": 2, \"cell_index\": 0, \"state\": \"done\", \"machine\": \"h2\"},"
	    "{\"id\": 3, \"cell_index\": 1, \"state\": \"done\", \"machine\": \"h1\"},"
	    "{\"id\": 4, \"cell_index\": 1, \"state\": \"done\", \"machine\": \"h2\"}]}");
	json_t *split = NULL, *sc, *doc;
	struct report_metric met = { .name = "wall_s", .unit = "s", .positive = 1 };
	struct report_cell rc[4];
	struct report_series se[4];
	double v[4][3];
	int base[4], b[4][3] = { { 0 } };
	struct report_input in;
	struct buf out;
	const json_t *row;
	size_t i, j;
	double want;

	buf_init(&out, 1 << 20);
	/* a suite's section: only its own cells */
	doc = cells("[{\"cell_index\": 1}]");
	T_EQ_INT(api_report_block_split(samp, runs, doc, &split), 0);
	T_EQ_INT(json_array_size(json_object_get(split, "cells")), 2);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(split,
	    "cells"), 0), "label")), "loops=2 machine=h1");
	json_decref(doc);
	json_decref(split);
	split = NULL;
	T_EQ_INT(api_report_block_split(samp, runs, NULL, &split), 0);
	sc = json_object_get(split, "cells");
	T_EQ_INT(json_array_size(sc), 4);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(sc, 1), "label")),
	    "loops=1 machine=h2");
	T_EQ_STR(json_string_value(json_object_get(json_object_get(json_array_get(sc, 2),
	    "axes"), "machine")), "h1");
	T_EQ_INT(json_array_size(json_object_get(json_array_get(sc, 0), "samples")), 2);
	/* the pooled rows over the split cells, each compared on its machine */
	memset(&in, 0, sizeof(in));
	for (i = 0; i < 4; i++) {
		const json_t *ss = json_object_get(json_array_get(sc, i), "samples");

		rc[i].label = json_string_value(json_object_get(json_array_get(sc, i), "label"));
		se[i] = (struct report_series){ .v = v[i], .boot = b[i],
		    .n = json_array_size(ss) };
		for (j = 0; j < se[i].n; j++)
			v[i][j] = json_number_value(json_object_get(json_array_get(ss, j), "value"));
		base[i] = i >= 2 ? (int)i - 2 : -1;	/* loops=2 on h against loops=1 on h */
	}
	in = (struct report_input){ .nmetrics = 1, .metrics = &met, .ncells = 4, .cells = rc,
	    .series = se, .baseline_of = base };
	T_EQ_INT(buf_puts(&out, "{}"), 0);
	T_EQ_INT(api_report_block_pooled(sc, &in, "json", &out), 0);
	doc = json_loadb(out.data, out.len, 0, NULL);
	row = json_array_get(json_object_get(json_object_get(doc, "pooled"), "rows"), 0);
	/* h1: 22 / 11 = 2; h2: 30 / 20 = 1.5; geometric mean sqrt(3) */
	want = sqrt(3.0);
	T_NEAR(json_number_value(json_object_get(row, "ratio")), want, 1e-12);
	T_NEAR(json_number_value(json_object_get(row, "pct_change")), 100 * (want - 1), 1e-10);
	T_EQ_INT(json_integer_value(json_object_get(row, "machines")), 2);
	T_EQ_STR(json_string_value(json_object_get(row, "cell")), "loops=2");
	T_EQ_STR(json_string_value(json_object_get(row, "vs")), "loops=1");
	T_EQ_STR(json_string_value(json_object_get(row, "mark")), "low n");
	/* 1 dof: CI exp(m -+ tan(0.475 pi) * |ln 2 - ln 1.5| / 2) */
	want = exp((log(2) + log(1.5)) / 2 - tan(0.475 * M_PI) * (log(2) - log(1.5)) / 2);
	T_NEAR(json_number_value(json_object_get(row, "pct_ci_lo")), 100 * (want - 1), 1e-7);
	T_EQ_INT(json_array_size(json_object_get(json_object_get(doc, "pooled"), "machines")),
	    2);
	json_decref(doc);
	/* text: the table and the method */
	buf_reset(&out);
	T_EQ_INT(api_report_block_pooled(sc, &in, "text", &out), 0);
	T_CONTAINS(out.data, "Pooled over 2 machines (h1, h2), machine a blocking factor");
	T_CONTAINS(out.data, "+73.21");
	T_CONTAINS(out.data, "low n");
	T_CONTAINS(out.data, "paired t-test of the log ratios over machines");
	/* csv: one table per file, nothing added */
	buf_reset(&out);
	T_EQ_INT(api_report_block_pooled(sc, &in, "csv", &out), 0);
	T_CHECK(out.len == 0);
	buf_free(&out);
	json_decref(split);
	json_decref(samp);
	json_decref(runs);
}

int
main(void)
{
	test_columns();
	test_pivot();
	test_cmp_machines();
	test_block();
	return t_done();
}
