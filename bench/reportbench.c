/*
 * reportbench: the cost of a job's report in all four formats (text,
 * markdown, csv, json), done two ways on one generated job:
 *
 *   per-format  report_render() four times: the statistics are computed
 *               again for each format (what every renderer did before the
 *               model, and what four separate API requests still do)
 *   one-model   report_compute() once, report_model_render() four times
 *
 * Cells compare against cell 0; each series has BOOTS boots of ITERS
 * iterations (pseudo-random, fixed seed). Prints one line:
 *
 *   cells=64 metrics=4 boots=3 iters=10 rounds=50 per_format_ms=... one_model_ms=...
 *   compute_ms=... render4_ms=... ratio=3.21 bytes=...
 *
 * ratio = per_format / one_model (> 1: the model pays off); compute_ms and
 * render4_ms split one_model. Each figure is the median round. Exits
 * non-zero if the two ways ever produce different bytes.
 *
 *   reportbench [CELLS [METRICS [BOOTS [ITERS [ROUNDS]]]]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "caps.h"
#include "err.h"
#include "report.h"

static const char *const fmts[] = { "text", "markdown", "csv", "json" };

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* Uniform in [0, 1). */
static double
unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static long
arg(int argc, char **argv, int i, long dflt, long lo, long hi)
{
	char *end;
	long v;

	if (argc <= i)
		return dflt;
	v = strtol(argv[i], &end, 10);
	if (*end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "reportbench: argument %d: %s is not in %ld..%ld\n", i, argv[i],
		    lo, hi);
		exit(2);
	}
	return v;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	size_t ncells = (size_t)arg(argc, argv, 1, 64, 1, BF_MAX_CELLS);
	size_t nmetrics = (size_t)arg(argc, argv, 2, 4, 1, BF_MAX_METRICS);
	size_t boots = (size_t)arg(argc, argv, 3, 3, 1, BF_MAX_BOOTS);
	size_t iters = (size_t)arg(argc, argv, 4, 10, 1, BF_MAX_ITERATIONS);
	size_t rounds = (size_t)arg(argc, argv, 5, 50, 1, 100000);
	size_t n = boots * iters, c, m, i, k, f, bytes = 0;
	struct report_metric *metrics;
	struct report_cell *cells;
	struct report_series *series;
	struct report_model *model;
	struct report_input in;
	struct bf_diag d;
	struct buf a, b;
	double *v, *t_per, *t_one, *t_comp, *t_rend, t0, t1, t2;
	char (*names)[32], (*labels)[48];
	int *boot, *base, rc = 0;

	metrics = calloc(nmetrics, sizeof(*metrics));
	names = calloc(nmetrics, sizeof(*names));
	cells = calloc(ncells, sizeof(*cells));
	labels = calloc(ncells, sizeof(*labels));
	base = calloc(ncells, sizeof(*base));
	series = calloc(ncells * nmetrics, sizeof(*series));
	v = calloc(ncells * nmetrics * n, sizeof(*v));
	boot = calloc(n, sizeof(*boot));
	t_per = calloc(rounds, sizeof(double));
	t_one = calloc(rounds, sizeof(double));
	t_comp = calloc(rounds, sizeof(double));
	t_rend = calloc(rounds, sizeof(double));
	if (!metrics || !names || !cells || !labels || !base || !series || !v || !boot ||
	    !t_per || !t_one || !t_comp || !t_rend) {
		fprintf(stderr, "reportbench: out of memory\n");
		return 1;
	}
	for (m = 0; m < nmetrics; m++) {
		snprintf(names[m], sizeof(names[m]), "metric%zu", m);
		metrics[m].name = names[m];
		metrics[m].unit = "ops/s";
		metrics[m].higher_better = (int)(m % 2);
	}
	for (i = 0; i < n; i++)
		boot[i] = (int)(i / iters);
	for (c = 0; c < ncells; c++) {
		snprintf(labels[c], sizeof(labels[c]), "thp=%s threads=%zu",
		    c % 3 == 0 ? "never" : c % 3 == 1 ? "madvise" : "always", 1 + c / 3);
		cells[c].label = labels[c];
		base[c] = c == 0 ? -1 : 0;
		for (m = 0; m < nmetrics; m++) {
			struct report_series *s = &series[c * nmetrics + m];
			double *p = &v[(c * nmetrics + m) * n], level = 1000 * (1 + 0.01 * (double)c);

			for (k = 0; k < boots; k++) {
				double shift = level * 0.02 * (unif() - 0.5);

				for (i = 0; i < iters; i++)
					p[k * iters + i] = level + shift + level * 0.01 * (unif() - 0.5);
			}
			s->v = p;
			s->boot = boot;
			s->n = n;
		}
	}
	memset(&in, 0, sizeof(in));
	in.title = "reportbench";
	in.nmetrics = nmetrics;
	in.metrics = metrics;
	in.ncells = ncells;
	in.cells = cells;
	in.series = series;
	in.baseline_of = base;
	in.baseline_desc = "thp:never threads:1";
	in.boot_cost_ratio = 20;

	for (k = 0; k < rounds && rc == 0; k++) {
		buf_init(&a, 0);
		buf_init(&b, 0);
		t0 = now_ms();
		for (f = 0; f < 4 && rc == 0; f++)
			if (report_render(&in, fmts[f], &a, &d) != 0)
				rc = 1;
		t1 = now_ms();
		t_per[k] = t1 - t0;
		model = NULL;
		t0 = now_ms();
		if (rc == 0 && report_compute(&in, &model, &d) != 0)
			rc = 1;
		t1 = now_ms();
		for (f = 0; f < 4 && rc == 0; f++)
			if (report_model_render(model, fmts[f], &b, &d) != 0)
				rc = 1;
		report_model_free(model);
		t2 = now_ms();
		t_comp[k] = t1 - t0;
		t_rend[k] = t2 - t1;
		t_one[k] = t2 - t0;
		if (rc != 0) {
			fprintf(stderr, "reportbench: %s\n", d.msg);
		} else if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
			fprintf(stderr, "reportbench: the two ways rendered different bytes\n");
			rc = 1;
		}
		bytes = a.len;
		buf_free(&a);
		buf_free(&b);
	}
	if (rc == 0) {
		double per = median(t_per, rounds), one = median(t_one, rounds);

		printf("cells=%zu metrics=%zu boots=%zu iters=%zu rounds=%zu per_format_ms=%.3f "
		    "one_model_ms=%.3f compute_ms=%.3f render4_ms=%.3f ratio=%.2f bytes=%zu\n",
		    ncells, nmetrics, boots, iters, rounds, per, one, median(t_comp, rounds),
		    median(t_rend, rounds), one > 0 ? per / one : 0, bytes);
	}
	free(metrics);
	free(names);
	free(cells);
	free(labels);
	free(base);
	free(series);
	free(v);
	free(boot);
	free(t_per);
	free(t_one);
	free(t_comp);
	free(t_rend);
	return rc;
}
