/*
 * test_report_model.c: the report model that report_compute() builds once
 * and every format renders: its rows (summaries, % change, marks, boots,
 * m*), the notes on undefined numbers, the legend and its warnings; that
 * rendering from one model gives what report_render() gives, in every
 * format, as often as asked; counters (no better or worse) and warnings in
 * the legend; and empty, hostile and over-cap input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "err.h"
#include "report.h"
#include "t.h"
#include "report_fixture.h"

static const char *const fmts[] = { "text", "markdown", "csv", "json" };

static const struct report_cell cells[] = {
	{ .label = "thp=never" },
	{ .label = NULL },
};
static const char *const context[] = { "machines: class zen4-2s (a, b)", "kernels: 6.1", NULL };

static const struct report_input input = {
	.title = "job 7",
	.nmetrics = 2, .metrics = metrics,
	.ncells = 2, .cells = cells,
	.series = series,
	.baseline_of = baseline_of,
	.baseline_desc = "thp:never",
	.boot_cost_ratio = 20,
	.context = context,
};

static struct report_model *
compute(const struct report_input *in, int expect, struct bf_diag *d)
{
	struct report_model *m = (struct report_model *)&m;	/* not left as is */
	int r;

	bf_diag_clear(d);
	r = report_compute(in, &m, d);
	T_EQ_INT(r, expect);
	if (r != 0) {
		T_CHECK(m == NULL);
		if (expect == 0)
			fprintf(stderr, "report_compute: %s\n", d->msg);
	}
	return m;
}

static char *
render_model(const struct report_model *m, const char *fmt)
{
	struct bf_diag d;
	struct buf b;
	char *s;

	buf_init(&b, 0);
	bf_diag_clear(&d);
	T_EQ_INT(report_model_render(m, fmt, &b, &d), 0);
	s = buf_steal(&b);
	buf_free(&b);
	return s;
}

static char *
render_once(const struct report_input *in, const char *fmt)
{
	struct bf_diag d;
	struct buf b;
	char *s;

	buf_init(&b, 0);
	bf_diag_clear(&d);
	T_EQ_INT(report_render(in, fmt, &b, &d), 0);
	s = buf_steal(&b);
	buf_free(&b);
	return s;
}

/* The rows: what every format reads. */
static void
test_rows(void)
{
	struct bf_diag d;
	struct report_model *m = compute(&input, 0, &d);
	const struct report_row *a, *b;

	if (m == NULL)
		return;
	T_EQ_INT(m->ncells, 2);
	T_EQ_INT(m->nmetrics, 2);
	T_EQ_STR(m->cells[0].label, "thp=never");
	T_EQ_STR(m->cells[1].label, "");	/* NULL label */
	T_EQ_INT(m->cells[0].baseline, -1);
	T_EQ_INT(m->cells[1].baseline, 0);
	T_EQ_INT(m->uniform_n, 0);		/* 5 and 9 samples */

	/* time: one boot per cell, B slower than A: "* worse" */
	T_CHECK(m->metrics[0].metric == &metrics[0]);
	T_EQ_INT(m->metrics[0].any_cmp, 1);
	T_EQ_INT(m->metrics[0].nmulti, 0);
	T_EQ_INT(m->metrics[0].decimals, 2);
	a = &m->metrics[0].rows[0];
	b = &m->metrics[0].rows[1];
	T_EQ_INT(a->is_base, 1);
	T_EQ_INT(a->has_cmp, 0);
	T_EQ_STR(a->mark, "");
	T_CHECK(a->note == NULL && a->cmp_note == NULL);
	T_NEAR(a->all.mean, 382.2, 1e-9);
	T_EQ_INT(b->has_cmp, 1);
	T_EQ_INT(b->multi, 0);
	T_NEAR(b->cmp.pct.pct, 660 / 382.2, 1e-12);
	T_NEAR(b->beff.mean, 382.2, 1e-9);
	T_CHECK(b->cmp.significant);
	T_EQ_STR(b->mark, "* worse");
	T_CHECK(b->has_mw);
	T_CHECK(b->cmp_note == NULL);

	/* rps: three boots per cell, so the boot means are the samples */
	T_EQ_INT(m->metrics[1].nmulti, 2);
	a = &m->metrics[1].rows[0];
	b = &m->metrics[1].rows[1];
	T_EQ_INT(a->multi, 1);
	T_EQ_INT(a->tl.nboots, 3);
	T_EQ_INT(a->all.n, 9);
	T_EQ_INT(a->eff.n, 3);
	T_NEAR(a->eff.mean, (1005.0 + 1095.0 + 1050.0) / 3, 1e-9);
	T_EQ_INT(a->has_mstar, 1);
	T_CHECK(a->mstar >= 1 && a->mstar <= BF_MAX_ITERATIONS);
	T_EQ_STR(b->mark, "* better");		/* higher is better, B faster */
	T_EQ_INT(b->mw.exact, 1);		/* 3 vs 3 boot means */
	report_model_free(m);
}

/* The legend: fixed items, sample counts with their warning, context last. */
static void
test_legend(void)
{
	struct bf_diag d;
	struct report_model *m = compute(&input, 0, &d);
	size_t i, samples = 0, warn = 0;

	if (m == NULL)
		return;
	T_CHECK(m->nlegend >= 4 && m->nlegend <= REPORT_MAX_LEGEND);
	T_CONTAINS(m->legend[0], "% Change: (B-A)/|A|*100");
	T_CONTAINS(m->legend[0], "(thp:never)");
	for (i = 0; i < m->nlegend; i++) {
		if (strncmp(m->legend[i], "Samples:", 8) == 0)
			samples = i;
		if (strncmp(m->legend[i], "Cells with several boots", 24) == 0)
			warn = i;
	}
	/* 1 x 5 for time, 3 x 3 for rps: mixed boots */
	T_CONTAINS(m->legend[samples], "boots x iterations = 1-3 x 3-5 (n = 5-9, by cell)");
	T_EQ_INT(warn, samples + 1);
	T_EQ_STR(m->legend[m->nlegend - 2], context[0]);
	T_EQ_STR(m->legend[m->nlegend - 1], context[1]);
	report_model_free(m);
}

/*
 * A counter (no_direction): a significant change is "*", an insignificant
 * one nothing; the legend explains "*" once, and the warnings come last,
 * after the context, with the full legend at its cap.
 */
static void
test_counter_model(void)
{
	static const double flat_a[] = { 10, 11, 9, 10, 10 }, flat_b[] = { 10, 9, 11, 10, 10 };
	static const struct report_metric mc[] = {
		{ .name = "time", .unit = "s" },
		{ .name = "vmstat.thp_fault_alloc", .unit = "count", .no_direction = 1 },
		{ .name = "vmstat.thp_fault_fallback", .unit = "count", .no_direction = 1 },
	};
	/* time of B is worse; alloc moves as much the other way; fallback is flat */
	static const struct report_series sc[] = {
		{ a_time, NULL, 5 }, { b_time, NULL, 5 }, { flat_a, NULL, 5 },
		{ b_time, NULL, 5 }, { a_time, NULL, 5 }, { flat_b, NULL, 5 },
	};
	static const char *const warn[] = { "cell b: w1", "w2", NULL };
	struct report_input in = input;
	struct report_model *m;
	struct bf_diag d;
	size_t i, counters = 0;

	in.nmetrics = 3;
	in.metrics = mc;
	in.series = sc;
	in.warnings = warn;
	if ((m = compute(&in, 0, &d)) == NULL)
		return;
	T_EQ_STR(m->metrics[0].rows[1].mark, "* worse");
	T_CHECK(m->metrics[1].rows[1].cmp.significant);
	T_EQ_STR(m->metrics[1].rows[1].mark, "*");
	T_CHECK(!m->metrics[2].rows[1].cmp.significant);
	T_EQ_STR(m->metrics[2].rows[1].mark, "");
	T_EQ_STR(m->metrics[1].rows[0].mark, "");	/* the baseline */
	for (i = 0; i < m->nlegend; i++)
		counters += strncmp(m->legend[i], "Counters (", 10) == 0;
	T_EQ_INT(counters, 1);
	T_EQ_STR(m->legend[m->nlegend - 4], context[0]);
	T_EQ_STR(m->legend[m->nlegend - 3], context[1]);
	T_EQ_STR(m->legend[m->nlegend - 2], "Warning: cell b: w1");
	T_EQ_STR(m->legend[m->nlegend - 1], "Warning: w2");
	report_model_free(m);
	/* every line the caps allow fits the legend */
	{
		const char *ctx[REPORT_MAX_CONTEXT + 1], *w[REPORT_MAX_WARNINGS + 1];

		for (i = 0; i < REPORT_MAX_CONTEXT; i++)
			ctx[i] = "c";
		ctx[i] = NULL;
		for (i = 0; i < REPORT_MAX_WARNINGS; i++)
			w[i] = "w";
		w[i] = NULL;
		in.context = ctx;
		in.warnings = w;
		if ((m = compute(&in, 0, &d)) == NULL)
			return;
		T_EQ_STR(m->legend[m->nlegend - 1], "Warning: w");
		T_CHECK(m->nlegend <= REPORT_MAX_LEGEND);
		report_model_free(m);
	}
}

/* One model renders as report_render() does, in any order, repeatedly. */
static void
test_one_model_all_formats(void)
{
	struct bf_diag d;
	struct report_model *m = compute(&input, 0, &d);
	char *a, *b, *c;
	size_t i;
	int pass;

	if (m == NULL)
		return;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < 4; i++) {
			size_t k = pass == 0 ? i : 3 - i;

			a = render_model(m, fmts[k]);
			b = render_once(&input, fmts[k]);
			c = render_model(m, fmts[k]);
			T_CHECK(a != NULL && b != NULL && *a != '\0');
			T_CHECK(a != NULL && b != NULL && strcmp(a, b) == 0);
			T_CHECK(a != NULL && c != NULL && strcmp(a, c) == 0);
			free(a);
			free(b);
			free(c);
		}
	}
	report_model_free(m);
}

/* Appending: a second format goes after the first in the same buffer. */
static void
test_append(void)
{
	struct bf_diag d;
	struct report_model *m = compute(&input, 0, &d);
	char *csv = NULL, *json = NULL;
	struct buf b;

	if (m == NULL)
		return;
	csv = render_model(m, "csv");
	json = render_model(m, "json");
	buf_init(&b, 0);
	T_EQ_INT(report_model_render(m, "csv", &b, &d), 0);
	T_EQ_INT(report_model_render(m, "json", &b, &d), 0);
	T_CHECK(csv != NULL && json != NULL && b.len == strlen(csv) + strlen(json));
	T_CHECK(csv != NULL && b.data != NULL && strncmp(b.data, csv, strlen(csv)) == 0);
	T_CHECK(json != NULL && b.data != NULL && strcmp(b.data + strlen(csv), json) == 0);
	buf_free(&b);
	free(csv);
	free(json);
	report_model_free(m);
}

/* Nothing at all, and cells without metrics or metrics without cells. */
static void
test_empty(void)
{
	static const struct report_input none = { .title = NULL };
	static const struct report_cell c1[] = { { .label = "only" } };
	static const struct report_metric m1[] = { { .name = "lat" } };
	struct report_input in;
	struct bf_diag d;
	struct report_model *m;
	size_t i, k;
	char *s;

	for (k = 0; k < 3; k++) {
		in = none;
		if (k == 1) {
			in.ncells = 1;
			in.cells = c1;
		} else if (k == 2) {
			in.nmetrics = 1;
			in.metrics = m1;
		}
		if ((m = compute(&in, 0, &d)) == NULL)
			continue;
		T_EQ_INT(m->uniform_n, 0);
		T_EQ_INT(m->ncells, in.ncells);
		T_EQ_INT(m->nmetrics, in.nmetrics);
		T_EQ_STR(m->legend[m->nlegend - 1], "Samples: none.");
		for (i = 0; i < 4; i++) {
			s = render_model(m, fmts[i]);
			T_CHECK(s != NULL && *s != '\0');
			if (i == 2)	/* the header alone */
				T_CHECK(s != NULL && strchr(s, '\n') == s + strlen(s) - 1);
			free(s);
		}
		report_model_free(m);
	}
	report_model_free(NULL);
}

/* Undefined numbers become notes, never NaN. */
static void
test_notes(void)
{
	static const double one[] = { 5.0 }, zero_mean[] = { -1, 1, -0.5, 0.5 };
	static const double b4[] = { 2, 2.1, 1.9, 2.05 };
	static const struct report_metric m1[] = { { .name = "lat" } };
	static const struct report_cell c6[] = {
		{ .label = "base" }, { .label = "single" }, { .label = "empty" },
		{ .label = "zb" }, { .label = "zero" }, { .label = "vs-empty" },
	};
	static const struct report_series s6[] = {
		{ .v = a_time, .n = 5 }, { .v = one, .n = 1 }, { .v = NULL, .n = 0 },
		{ .v = b4, .n = 4 }, { .v = zero_mean, .n = 4 }, { .v = b4, .n = 4 },
	};
	static const int bl[] = { -1, 0, 0, 4, -1, 2 };
	struct report_input in = {
		.nmetrics = 1, .metrics = m1, .ncells = 6, .cells = c6, .series = s6,
		.baseline_of = bl,
	};
	const struct report_row *r;
	struct report_model *m;
	struct bf_diag d;

	if ((m = compute(&in, 0, &d)) == NULL)
		return;
	r = m->metrics[0].rows;
	T_EQ_STR(r[1].note, "n=1, no CI");
	T_EQ_STR(r[1].cmp_note, "n=1, no CI, no test");
	T_EQ_STR(r[2].note, "no samples");
	T_EQ_STR(r[2].cmp_note, "no samples");
	T_EQ_STR(r[3].cmp_note, "baseline mean is 0: % change undefined, CI unbounded");
	T_CHECK(isnan(r[3].cmp.pct.pct));
	T_EQ_STR(r[3].mark, "");
	T_EQ_STR(r[4].note, "mean is 0: no CoV");
	T_EQ_INT(r[4].is_base, 1);
	T_EQ_STR(r[5].cmp_note, "the baseline has no samples");
	T_EQ_INT(r[2].is_base, 1);		/* an empty cell can be a baseline */
	report_model_free(m);
}

/* Hostile and over-cap input: refused with a message, no model. */
static void
test_hostile(void)
{
	static const double nan1[] = { 1, NAN }, inf1[] = { INFINITY };
	static const double huge[] = { 1.7e308, -1.7e308, 1.0, 1.7e308 };
	static const int hb[] = { 0, 0, 1, 1 };
	static const struct report_metric m1[] = { { .name = "lat" } };
	static const struct report_metric noname[] = { { .name = NULL } };
	static const struct report_cell c1[] = { { .label = "c\n\x01\xff" } };
	static const int self[] = { 0, -1 }, far[] = { -1, 2 }, neg[] = { -2, -1 };
	const char *many[REPORT_MAX_CONTEXT + 2];
	struct report_series s1[] = { { .v = nan1, .n = 2 } };
	struct report_input in = input, one = {
		.nmetrics = 1, .metrics = m1, .ncells = 1, .cells = c1, .series = s1,
	};
	struct report_model *m = NULL;
	struct bf_diag d;
	size_t i;
	char *s;

	T_EQ_INT(report_compute(NULL, &m, &d), BF_ERR_INVALID);
	T_EQ_INT(report_compute(&input, NULL, &d), BF_ERR_INVALID);
	compute(&one, BF_ERR_INVALID, &d);
	T_CONTAINS(d.msg, "sample 1");
	s1[0].v = inf1;
	s1[0].n = 1;
	compute(&one, BF_ERR_INVALID, &d);
	s1[0].v = NULL;
	compute(&one, BF_ERR_INVALID, &d);
	T_CONTAINS(d.msg, "no values");
	s1[0].n = STATS_MAX_SAMPLES + 1;
	compute(&one, BF_ERR_TOOBIG, &d);
	/* finite samples whose mean overflows: refused, naming the metric */
	s1[0].v = huge;
	s1[0].boot = hb;
	s1[0].n = 4;
	compute(&one, BF_ERR_INVALID, &d);
	T_CONTAINS(d.msg, "metric lat");
	/* the same in one boot: shown, the undefined numbers as "-" */
	s1[0].boot = NULL;
	if ((m = compute(&one, 0, &d)) != NULL) {
		s = render_model(m, "text");
		T_CHECK(s != NULL && strstr(s, "nan") == NULL);
		free(s);
		report_model_free(m);
	}
	one.metrics = noname;
	s1[0].v = a_time;
	s1[0].n = 5;
	compute(&one, BF_ERR_INVALID, &d);
	in.baseline_of = self;
	compute(&in, BF_ERR_INVALID, &d);
	T_CONTAINS(d.msg, "baseline 0");
	in.baseline_of = far;
	compute(&in, BF_ERR_INVALID, &d);
	in.baseline_of = neg;
	compute(&in, BF_ERR_INVALID, &d);
	in = input;
	in.ncells = BF_MAX_CELLS + 1;
	compute(&in, BF_ERR_TOOBIG, &d);
	in = input;
	in.nmetrics = BF_MAX_METRICS + 1;
	compute(&in, BF_ERR_TOOBIG, &d);
	in = input;
	in.series = NULL;
	compute(&in, BF_ERR_INVALID, &d);
	in = input;
	for (i = 0; i < REPORT_MAX_CONTEXT + 1; i++)
		many[i] = "line";
	many[i] = NULL;
	in.context = many;
	compute(&in, BF_ERR_TOOBIG, &d);
	many[REPORT_MAX_CONTEXT] = NULL;	/* exactly the cap: fine */
	if ((m = compute(&in, 0, &d)) != NULL) {
		T_EQ_STR(m->legend[m->nlegend - 1], "line");
		T_CHECK(m->nlegend <= REPORT_MAX_LEGEND);
		report_model_free(m);
	}
}

/* Rendering errors: bad format, no model, an output cap. */
static void
test_render_errors(void)
{
	struct bf_diag d;
	struct report_model *m = compute(&input, 0, &d);
	struct buf b;
	size_t i;

	if (m == NULL)
		return;
	buf_init(&b, 0);
	T_EQ_INT(report_model_render(m, "xml", &b, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "\"xml\" is not one of");
	T_EQ_INT(report_model_render(m, NULL, &b, &d), BF_ERR_INVALID);
	T_EQ_INT(report_model_render(NULL, "text", &b, &d), BF_ERR_INVALID);
	T_EQ_INT(report_model_render(m, "text", NULL, &d), BF_ERR_INVALID);
	T_EQ_INT(b.len, 0);
	buf_free(&b);
	for (i = 0; i < 4; i++) {
		buf_init(&b, 64);
		bf_diag_clear(&d);
		T_EQ_INT(report_model_render(m, fmts[i], &b, &d), BF_ERR_TOOBIG);
		T_CONTAINS(d.msg, "over the output cap");
		buf_free(&b);
	}
	report_model_free(m);
}

int
main(void)
{
	test_rows();
	test_legend();
	test_counter_model();
	test_one_model_all_formats();
	test_append();
	test_empty();
	test_notes();
	test_hostile();
	test_render_errors();
	return t_done();
}
