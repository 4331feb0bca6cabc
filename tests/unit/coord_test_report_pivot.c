/*
 * coord_test_report_pivot.c: how the API picks a report's layout
 * (api_report_columns) and lays a job's cells out (api_report_pivot): the
 * kernel or cmdline axis by default, columns=none and a baseline on another
 * axis keep the rows, a suite (workload axis) goes side by side on its
 * baseline's axis and gets its summary; bad columns are 400s naming the
 * field; the rows are the other axes in matrix order.
 */
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

int
main(void)
{
	test_columns();
	test_pivot();
	return t_done();
}
