/*
 * test_report_pivot.c: the side-by-side layout (report-pivot.h): building
 * the pivot from axis values (order, reference first, duplicates, too many
 * values), the baselines it gives, that every format shows the model's own
 * numbers in the right column group, the summary and its geometric mean
 * against numbers worked by hand, a suite's summary leaving out metrics of
 * other workloads, errors; and the golden test: the 5-level
 * seed's Btree (Thread:32) table rebuilt from synthetic samples with the
 * seed's means and CoVs, in text with kernel as the columns, compared with
 * tests/unit/golden/seed_5level_btree.txt.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "report.h"
#include "report-pivot.h"
#include "stats.h"
#include "t.h"

static const struct report_metric m_time[] = {
	{ .name = "wall_s", .unit = "s", .higher_better = 0 },
};

/* n samples with mean mu and CoV cov% exactly: mu + sd * z, z standardized. */
static void
synth(double *v, size_t n, double mu, double cov)
{
	double sd = cov / 100 * mu, zs = 0, zz = 0, z;
	size_t i;

	for (i = 0; i < n; i++)
		zs += (double)i;
	for (i = 0; i < n; i++) {
		z = (double)i - zs / (double)n;
		zz += z * z;
	}
	for (i = 0; i < n; i++)
		v[i] = mu + sd * ((double)i - zs / (double)n) / sqrt(zz / (double)(n - 1));
}

/* A pivot, a model and its input for ncells one-metric cells. */
struct fx {
	struct report_input in;
	struct report_cell cells[16];
	struct report_series ser[16];
	double v[16][8];
	int base[16];
	struct report_pivot *p;
	struct report_model *m;
};

static int
fx_make(struct fx *f, size_t nc, const char *const *colv, const char *const *rowv,
    const double *mu, const double *cov, const char *const *labels, int summary)
{
	struct bf_diag d;
	size_t c;
	int r;

	memset(f, 0, sizeof(*f));
	for (c = 0; c < nc; c++) {
		synth(f->v[c], 5, mu[c], cov[c]);
		f->ser[c] = (struct report_series){ .v = f->v[c], .n = 5 };
		f->cells[c].label = labels[c];
	}
	if ((r = report_pivot_build("kernel", colv, rowv, nc, NULL, &f->p, &d)) != 0)
		return r;
	f->p->summary = summary;
	report_pivot_baselines(f->p, f->base, nc);
	f->in = (struct report_input){ .title = "job 1: btree", .nmetrics = 1,
	    .metrics = m_time, .ncells = nc, .cells = f->cells, .series = f->ser,
	    .baseline_of = f->base, .baseline_desc = "kernel:4-level" };
	return report_compute(&f->in, &f->m, &d);
}

static void
fx_free(struct fx *f)
{
	report_model_free(f->m);
	report_pivot_free(f->p);
}

static char *
render(const struct fx *f, const char *fmt)
{
	struct bf_diag d;
	struct buf b;

	buf_init(&b, 1 << 20);
	bf_diag_clear(&d);
	T_EQ_INT(report_pivot_render(f->m, f->p, fmt, &b, &d), 0);
	return buf_steal(&b);
}

/* The seed's table: kernel outer, thp inner, as a matrix expands it. */
static const char *const seed_col[] = {
	"4-level", "4-level", "4-level", "5-level", "5-level", "5-level"
};
static const char *const seed_row[] = {
	"thp=never", "thp=madvise", "thp=always", "thp=never", "thp=madvise", "thp=always"
};
static const char *const seed_lab[] = {
	"kernel=4-level thp=never", "kernel=4-level thp=madvise", "kernel=4-level thp=always",
	"kernel=5-level thp=never", "kernel=5-level thp=madvise", "kernel=5-level thp=always"
};
static const double seed_mu[] = { 382.2, 383.0, 392.8, 388.8, 384.8, 386.4 };
static const double seed_cov[] = { 0.219, 0.261, 1.376, 1.019, 0.809, 2.147 };

static void
test_build(void)
{
	static const char *const col[] = { "b", "a", "b", "a", "c" };
	static const char *const row[] = { "x", "x", "y", "y", NULL };
	static const char *const dup[] = { "a", "a" };
	static const char *const one[] = { "a", "a" };
	static const char *const two_rows[] = { "x", "y" };
	const char *many[REPORT_PIVOT_MAX_COLS + 1], *nul[] = { "a", NULL };
	char names[REPORT_PIVOT_MAX_COLS + 1][8];
	struct report_pivot *p = NULL;
	struct bf_diag d;
	int base[5];
	size_t i;

	T_EQ_INT(report_pivot_build("kernel", col, row, 5, NULL, &p, &d), 0);
	T_EQ_INT(p->ncols, 3);
	T_EQ_STR(p->cols[0], "b");	/* first seen */
	T_EQ_STR(p->cols[1], "a");
	T_EQ_STR(p->cols[2], "c");
	T_EQ_INT(p->nrows, 3);
	T_EQ_STR(p->rows[2], "");	/* NULL row label */
	T_EQ_INT(p->cell_at[0 * 3 + 0], 0);
	T_EQ_INT(p->cell_at[0 * 3 + 1], 1);
	T_EQ_INT(p->cell_at[1 * 3 + 0], 2);
	T_EQ_INT(p->cell_at[2 * 3 + 2], 4);
	T_EQ_INT(p->cell_at[2 * 3 + 0], -1);
	report_pivot_baselines(p, base, 5);
	T_EQ_INT(base[0], -1);
	T_EQ_INT(base[1], 0);
	T_EQ_INT(base[2], -1);
	T_EQ_INT(base[3], 2);
	T_EQ_INT(base[4], -1);	/* its row has no cell in the first column */
	report_pivot_free(p);

	/* ref puts a value first */
	T_EQ_INT(report_pivot_build("kernel", col, row, 5, "a", &p, &d), 0);
	T_EQ_STR(p->cols[0], "a");
	T_EQ_STR(p->cols[1], "b");
	report_pivot_baselines(p, base, 5);
	T_EQ_INT(base[0], 1);
	T_EQ_INT(base[1], -1);
	report_pivot_free(p);
	p = NULL;

	T_EQ_INT(report_pivot_build("kernel", col, row, 5, "zz", &p, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "columns");
	T_CONTAINS(d.msg, "no value \"zz\"");
	T_CHECK(p == NULL);
	T_EQ_INT(report_pivot_build("kernel", dup, NULL, 2, NULL, &p, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "nothing to put side by side");
	T_EQ_INT(report_pivot_build("kernel", one, two_rows, 2, NULL, &p, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "1 value");
	T_EQ_INT(report_pivot_build("kernel", col, (const char *const[]){ "x", "x", "x",
	    "y", "y" }, 5, NULL, &p, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "cells 0 and 2 are both kernel=b");
	T_EQ_INT(report_pivot_build("kernel", nul, NULL, 2, NULL, &p, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "cell 1 has no value of axis kernel");
	for (i = 0; i <= REPORT_PIVOT_MAX_COLS; i++) {
		snprintf(names[i], sizeof(names[i]), "k%zu", i);
		many[i] = names[i];
	}
	T_EQ_INT(report_pivot_build("kernel", many, NULL, REPORT_PIVOT_MAX_COLS + 1, NULL, &p,
	    &d), BF_ERR_TOOBIG);
	T_CONTAINS(d.msg, "more than 16 values");
	T_EQ_INT(report_pivot_build("kernel", many, NULL, REPORT_PIVOT_MAX_COLS, NULL, &p,
	    &d), 0);
	report_pivot_free(p);
	report_pivot_free(NULL);
}

/* JSON carries the model's own numbers in the right place. */
static void
test_json_numbers(void)
{
	struct fx f;
	json_t *doc, *rows, *row, *v, *c;
	char *s;
	size_t r, k;

	T_EQ_INT(fx_make(&f, 6, seed_col, seed_row, seed_mu, seed_cov, seed_lab, 0), 0);
	s = render(&f, "json");
	doc = json_loads(s, 0, NULL);
	T_CHECK(doc != NULL);
	T_EQ_STR(json_string_value(json_object_get(doc, "layout")), "columns");
	T_EQ_STR(json_string_value(json_object_get(doc, "columns")), "kernel");
	T_EQ_STR(json_string_value(json_object_get(doc, "reference")), "4-level");
	T_CHECK(json_is_null(json_object_get(doc, "summary")));
	rows = json_object_get(json_array_get(json_object_get(doc, "metrics"), 0), "rows");
	T_EQ_INT(json_array_size(rows), 3);
	for (r = 0; r < 3; r++) {
		row = json_array_get(rows, r);
		T_EQ_STR(json_string_value(json_object_get(row, "row")), seed_row[r]);
		for (k = 0; k < 2; k++) {
			v = json_array_get(json_object_get(row, "values"), k);
			T_EQ_STR(json_string_value(json_object_get(v, "value")), seed_col[3 * k]);
			T_NEAR(json_real_value(json_object_get(v, "mean")), seed_mu[3 * k + r],
			    1e-9);
			T_NEAR(json_real_value(json_object_get(v, "cov_pct")), seed_cov[3 * k + r],
			    1e-9);
			T_NEAR(json_real_value(json_object_get(v, "ci_lo")),
			    f.m->metrics[0].rows[3 * k + r].eff.ci_lo, 1e-9);
		}
		c = json_array_get(json_object_get(row, "changes"), 0);
		T_EQ_STR(json_string_value(json_object_get(c, "vs")), "4-level");
		/* the seed's % change column: 1.73, 0.47, -1.63 */
		T_NEAR(json_real_value(json_object_get(c, "pct_change")),
		    100 * (seed_mu[3 + r] - seed_mu[r]) / seed_mu[r], 1e-9);
		T_EQ_STR(json_string_value(json_object_get(c, "mark")),
		    f.m->metrics[0].rows[3 + r].mark);
	}
	/* thp=never, +1.73% slower at CoV 1%: significant and worse */
	T_EQ_STR(f.m->metrics[0].rows[3].mark, "* worse");
	json_decref(doc);
	free(s);
	fx_free(&f);
}

/* Every line of a markdown table and of the CSV has the same field count. */
static size_t
count_char(const char *s, const char *end, char ch)
{
	size_t n = 0;

	for (; s < end; s++)
		n += *s == ch;
	return n;
}

static void
test_shapes(void)
{
	struct fx f;
	char *s, *l, *e;
	size_t bars = 0, lines = 0, commas = 0;

	T_EQ_INT(fx_make(&f, 6, seed_col, seed_row, seed_mu, seed_cov, seed_lab, 0), 0);
	s = render(&f, "markdown");
	T_CONTAINS(s, "### job 1: btree");
	T_CONTAINS(s, "**wall\\_s (s) - Lower is better**");
	T_CONTAINS(s, "| cell | 4-level mean | 4-level CoV% | 4-level 95% CI | 5-level mean |");
	T_CONTAINS(s, "| 5-level vs 4-level % change | 5-level vs 4-level 95% CI of change | "
	    "5-level vs 4-level sig |");
	T_CONTAINS(s, "| thp=never | 382.2");
	T_CONTAINS(s, "| +1.73 |");
	T_CONTAINS(s, "\\* worse");
	for (l = s; (e = strchr(l, '\n')) != NULL; l = e + 1) {
		if (*l != '|')
			continue;
		if (bars == 0)
			bars = count_char(l, e, '|');
		T_EQ_INT(count_char(l, e, '|'), bars);
		lines++;
	}
	T_EQ_INT(bars, 1 + 1 + 3 * 2 + 3);
	T_EQ_INT(lines, 2 + 3);
	T_CONTAINS(s, "- Columns: the values of kernel side by side");
	free(s);

	s = render(&f, "csv");
	T_CHECK(strncmp(s, "metric,unit,higher_better,row,4-level n,4-level mean,", 52) == 0);
	T_CONTAINS(s, "5-level pct_change,5-level pct_ci_lo");
	lines = 0;
	for (l = s; (e = strstr(l, "\r\n")) != NULL; l = e + 2) {
		if (lines == 0)
			commas = count_char(l, e, ',');
		T_EQ_INT(count_char(l, e, ','), commas);
		lines++;
	}
	T_EQ_INT(lines, 4);
	T_EQ_INT(commas, 4 + 2 * 5 + 6 - 1);
	T_CONTAINS(s, "\r\nwall_s,s,0,thp=never,5,382.2,");
	free(s);

	s = render(&f, "text");
	T_CONTAINS(s, "wall_s (s) - Lower is better\n");
	T_CONTAINS(s, "4-level");
	T_CONTAINS(s, "5-level vs 4-level");
	T_CHECK(strstr(s, "Summary") == NULL);
	free(s);
	fx_free(&f);
}

/* A row without a cell in some column prints "-" there and no change. */
static void
test_missing(void)
{
	static const char *const col[] = { "a", "a", "b" };
	static const char *const row[] = { "x", "y", "x" };
	static const char *const lab[] = { "k=a x", "k=a y", "k=b x" };
	static const double mu[] = { 10, 20, 11 }, cov[] = { 1, 1, 1 };
	struct fx f;
	char *s;

	T_EQ_INT(fx_make(&f, 3, col, row, mu, cov, lab, 1), 0);
	s = render(&f, "text");
	T_CONTAINS(s, "\ny     20.00 1.00 [19.75, 20.25]      -    - -                      - -\n");
	/* the row without a comparison has no summary line */
	T_CONTAINS(s, "x         wall_s  10.00  11.00    +10.00");
	T_CHECK(strstr(s, "y         wall_s") == NULL);
	free(s);
	s = render(&f, "json");
	T_CONTAINS(s, "\"values\": [\n            {");
	T_CONTAINS(s, "null");
	free(s);
	fx_free(&f);
}

/* Summary lines and the geometric mean of B/A against a hand computation. */
static void
test_summary(void)
{
	static const char *const col[] = { "job 12", "job 12", "job 12", "job 14", "job 14",
	    "job 14" };
	static const char *const row[] = { "btree", "redis", "ebizzy", "btree", "redis",
	    "ebizzy" };
	static const char *const lab[] = { "a", "b", "c", "d", "e", "f" };
	static const double mu[] = { 100, 200, 50, 110, 180, 50 };
	static const double cov[] = { 1, 1, 1, 1, 1, 1 };
	double l[3] = { log(1.1), log(0.9), 0 }, lm, sd, t, half;
	json_t *doc, *g, *ln;
	struct fx f;
	char *s;

	T_EQ_INT(fx_make(&f, 6, col, row, mu, cov, lab, 1), 0);
	s = render(&f, "json");
	doc = json_loads(s, 0, NULL);
	T_CHECK(doc != NULL);
	ln = json_object_get(json_object_get(doc, "summary"), "lines");
	T_EQ_INT(json_array_size(ln), 3);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(ln, 1), "workload")),
	    "redis");
	T_NEAR(json_real_value(json_object_get(json_array_get(ln, 1), "pct_change")), -10,
	    1e-9);
	g = json_array_get(json_object_get(json_object_get(doc, "summary"), "geomeans"), 0);
	lm = (l[0] + l[1] + l[2]) / 3;
	sd = sqrt(((l[0] - lm) * (l[0] - lm) + (l[1] - lm) * (l[1] - lm) +
	    (l[2] - lm) * (l[2] - lm)) / 2);
	T_OK(stats_t_quantile(0.975, 2, &t));
	half = t * sd / sqrt(3);
	T_NEAR(json_real_value(json_object_get(g, "ratio")), exp(lm), 1e-12);
	T_NEAR(json_real_value(json_object_get(g, "ci_lo")), exp(lm - half), 1e-9);
	T_NEAR(json_real_value(json_object_get(g, "ci_hi")), exp(lm + half), 1e-9);
	T_EQ_INT(json_integer_value(json_object_get(g, "n")), 3);
	json_decref(doc);
	free(s);
	s = render(&f, "text");
	T_CONTAINS(s, "Summary: A = job 12, B against it\n");
	T_CONTAINS(s, "workload  metric       A       B  % change  95% CI of change  sig\n");
	T_CONTAINS(s, "redis     wall_s  200.00  180.00    -10.00  [-11.31, -8.68]   * better\n");
	T_CONTAINS(s, "Geometric mean of B/A, wall_s, B = job 14: 0.9967 [");
	T_CONTAINS(s, "3 rows\n");
	T_CONTAINS(s, "Geometric mean of B/A: over the summary's rows");
	free(s);
	s = render(&f, "markdown");
	T_CONTAINS(s, "**Summary: A = job 12, B against it**");
	T_CONTAINS(s, "| workload | metric | A | B | % change |");
	T_CONTAINS(s, "- Geometric mean of B/A, wall\\_s, B = job 14: 0.9967 [");
	free(s);
	fx_free(&f);
}

/* A suite's summary (summary_own): a row's metric with no samples on
 * either side (another workload's recipe's) is no line and no "left out"
 * of the geometric mean; without the flag it is both. */
static void
test_summary_own(void)
{
	static const char *const col[] = { "4lvl", "4lvl", "5lvl", "5lvl" };
	static const char *const row[] = { "workload=btree", "workload=echo", "workload=btree",
	    "workload=echo" };
	static const char *const lab[] = { "a", "b", "c", "d" };
	static const double mu[] = { 100, 10, 110, 10 }, cov[] = { 1, 1, 1, 1 };
	json_t *doc, *g;
	struct bf_diag d;
	struct fx f;
	char *s, *sum;
	int own;

	for (own = 0; own <= 1; own++) {
		T_EQ_INT(fx_make(&f, 4, col, row, mu, cov, lab, 1), 0);
		/* echo has no wall_s in either column */
		report_model_free(f.m);
		f.ser[1].n = f.ser[3].n = 0;
		bf_diag_clear(&d);
		T_EQ_INT(report_compute(&f.in, &f.m, &d), 0);
		f.p->summary_own = own;
		s = render(&f, "json");
		doc = json_loads(s, 0, NULL);
		T_CHECK(doc != NULL);
		T_EQ_INT(json_array_size(json_object_get(json_object_get(doc, "summary"), "lines")),
		    own ? 1 : 2);
		g = json_array_get(json_object_get(json_object_get(doc, "summary"), "geomeans"), 0);
		T_EQ_INT(json_integer_value(json_object_get(g, "n")), 1);
		T_EQ_INT(json_integer_value(json_object_get(g, "left_out")), own ? 0 : 1);
		T_NEAR(json_real_value(json_object_get(g, "ratio")), 1.1, 1e-12);
		json_decref(doc);
		free(s);
		s = render(&f, "text");
		sum = strstr(s, "Summary: A = 4lvl");
		T_CHECK(sum != NULL);
		if (sum != NULL) {
			T_CHECK((strstr(sum, "workload=echo ") == NULL) == own);
			T_CHECK((strstr(sum, "row (1 left") == NULL) == own);
			T_CONTAINS(sum, "workload=btree  wall_s");
		}
		free(s);
		fx_free(&f);
	}
}

static void
test_errors(void)
{
	struct bf_diag d;
	struct fx f;
	struct buf b;
	int keep;

	T_EQ_INT(fx_make(&f, 6, seed_col, seed_row, seed_mu, seed_cov, seed_lab, 1), 0);
	buf_init(&b, 1 << 16);
	T_EQ_INT(report_pivot_render(f.m, f.p, "xml", &b, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "format");
	T_EQ_INT(report_pivot_render(NULL, f.p, "text", &b, &d), BF_ERR_INVALID);
	keep = f.p->cell_at[0];
	f.p->cell_at[0] = 6;
	T_EQ_INT(report_pivot_render(f.m, f.p, "text", &b, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "names cell 6 of 6");
	f.p->cell_at[0] = keep;
	T_EQ_INT(b.len, 0);
	buf_free(&b);
	buf_init(&b, 100);
	T_EQ_INT(report_pivot_render(f.m, f.p, "text", &b, &d), BF_ERR_TOOBIG);
	T_CONTAINS(d.msg, "over the output cap");
	buf_free(&b);
	fx_free(&f);
}

/* The longest line of s, in code points. */
static size_t
max_line(const char *s)
{
	size_t w = 0, best = 0;

	for (; *s; s++) {
		if (*s == '\n') {
			w = 0;
			continue;
		}
		if (((unsigned char)*s & 0xc0) != 0x80 && ++w > best)
			best = w;
	}
	return best;
}

/* The golden test: the seed's Btree (Thread:32) table, side by side. */
static void
test_golden(void)
{
	const char *src = getenv("BF_SRC");
	char path[4096], *s, *want = NULL, *cut;
	struct fx f;
	FILE *fp;
	long n;

	T_CHECK(src != NULL);
	if (src == NULL)
		return;
	T_EQ_INT(fx_make(&f, 6, seed_col, seed_row, seed_mu, seed_cov, seed_lab, 0), 0);
	s = render(&f, "text");
	/* two values side by side fit a 100-column mail, legend included */
	T_CHECK(max_line(s) <= 100);
	T_CHECK(max_line(s) >= 90);	/* the table, not only the legend */
	/* the layout: title, heading and table, up to the legend (whose wording
	 * is the row report's and is tested there) */
	T_CHECK((cut = strstr(s, "\nColumns: ")) != NULL);
	if (cut != NULL)
		cut[1] = '\0';
	snprintf(path, sizeof(path), "%s/tests/unit/golden/seed_5level_btree.txt", src);
	fp = fopen(path, "rb");
	T_CHECK(fp != NULL);
	if (fp != NULL && fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
	    fseek(fp, 0, SEEK_SET) == 0 && (want = calloc(1, (size_t)n + 1)) != NULL)
		T_EQ_INT(fread(want, 1, (size_t)n, fp), n);
	if (fp != NULL)
		fclose(fp);
	T_CHECK(want != NULL);
	if (want != NULL && strcmp(want, s) != 0) {
		fprintf(stderr, "golden %s differs; got:\n%s", path, s);
		T_CHECK(0);
	}
	free(want);
	free(s);
	fx_free(&f);
}

int
main(void)
{
	test_build();
	test_json_numbers();
	test_shapes();
	test_missing();
	test_summary();
	test_summary_own();
	test_errors();
	test_golden();
	return t_done();
}
