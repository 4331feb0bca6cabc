/*
 * fuzz_report.c: report_render on fuzzed tables: metric and cell counts,
 * labels and metric names of arbitrary bytes, baselines (valid, -1, self,
 * out of range), per-sample boot ids, raw doubles (NaN, infinities,
 * denormals, huge values) and every format. Input layout is read with a
 * small cursor; running out of bytes gives zeros. The same report is then
 * rendered from one report_compute() model, which must give the same
 * result and bytes, and again from that model in every other format.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "report.h"
#include "report-pivot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FR_METRICS	4
#define FR_CELLS	8
#define FR_SAMPLES	16
#define FR_LABEL	48

struct cur {
	const uint8_t *p;
	size_t n;
};

static uint8_t
u8(struct cur *c)
{
	uint8_t v = 0;

	if (c->n > 0) {
		v = *c->p++;
		c->n--;
	}
	return v;
}

static double
f64(struct cur *c)
{
	uint8_t b[8] = { 0 };
	double v;
	size_t i;

	/* Mostly tame numbers (1 byte), sometimes raw bits (8 bytes). */
	if ((u8(c) & 7) != 0)
		return (double)u8(c) / 4.0 + 1.0;
	for (i = 0; i < 8; i++)
		b[i] = u8(c);
	memcpy(&v, b, sizeof(v));
	return v;
}

static void
str(struct cur *c, char *out, size_t outsz)
{
	size_t n = u8(c) % outsz, i;

	for (i = 0; i < n; i++)
		out[i] = (char)u8(c);
	out[n] = '\0';	/* an embedded NUL just makes it shorter */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = { "text", "markdown", "csv", "json", "xml" };
	struct cur c = { data, size };
	struct report_metric metrics[FR_METRICS];
	struct report_cell cells[FR_CELLS];
	struct report_series series[FR_CELLS * FR_METRICS];
	static double v[FR_CELLS * FR_METRICS][FR_SAMPLES];
	static int boot[FR_CELLS * FR_METRICS][FR_SAMPLES];
	char mname[FR_METRICS][FR_LABEL], munit[FR_METRICS][FR_LABEL], label[FR_CELLS][FR_LABEL];
	char title[FR_LABEL];
	const char *warn[2] = { NULL, NULL };
	int baseline_of[FR_CELLS];
	struct report_input in;
	struct bf_diag d;
	struct report_model *model = NULL;
	static const char *const colnames[] = { "a", "b", "c" };
	const char *colv[FR_CELLS], *rowv[FR_CELLS];
	struct report_pivot *pv = NULL;
	struct buf out, again;
	size_t nm, nc, i, k;
	int r1, r2;
	uint8_t flags;

	nm = 1 + u8(&c) % FR_METRICS;
	nc = 1 + u8(&c) % FR_CELLS;
	flags = u8(&c);
	str(&c, title, sizeof(title));
	for (i = 0; i < nm; i++) {
		str(&c, mname[i], sizeof(mname[i]));
		str(&c, munit[i], sizeof(munit[i]));
		metrics[i].name = mname[i];
		metrics[i].unit = (flags & 8) ? NULL : munit[i];
		k = u8(&c);
		metrics[i].higher_better = k & 1;
		metrics[i].no_direction = (k & 6) == 6;	/* a counter, now and then */
	}
	for (i = 0; i < nc; i++) {
		str(&c, label[i], sizeof(label[i]));
		cells[i].label = (u8(&c) & 15) == 0 ? NULL : label[i];
		baseline_of[i] = (int)(u8(&c) % (nc + 2)) - 1;	/* -1 .. nc */
	}
	for (i = 0; i < nc * nm; i++) {
		series[i].n = u8(&c) % (FR_SAMPLES + 1);
		series[i].v = v[i];
		series[i].boot = (flags & 16) ? NULL : boot[i];
		for (k = 0; k < series[i].n; k++) {
			v[i][k] = f64(&c);
			boot[i][k] = u8(&c) % 4;
		}
	}
	memset(&in, 0, sizeof(in));
	in.title = (flags & 32) ? NULL : title;
	in.nmetrics = nm;
	in.metrics = metrics;
	in.ncells = nc;
	in.cells = cells;
	in.series = series;
	in.baseline_of = (flags & 64) ? NULL : baseline_of;
	in.baseline_desc = (flags & 128) ? NULL : "axis:value";
	in.boot_cost_ratio = (flags & 1) ? (double)u8(&c) : 0.0;
	warn[0] = title;
	in.warnings = (flags & 8) ? warn : NULL;
	buf_init(&out, (flags & 4) ? 512 : 4 << 20);	/* a small cap: the TOOBIG path */
	r1 = report_render(&in, formats[(flags >> 1) % 5], &out, &d);
	/* One model, every format: a successful render must match byte for byte. */
	if (report_compute(&in, &model, &d) == 0) {
		for (i = 0; i < 5; i++) {
			buf_init(&again, (flags & 4) ? 512 : 4 << 20);
			r2 = report_model_render(model, formats[i], &again, &d);
			if (i == (size_t)(flags >> 1) % 5 && (r1 != r2 || (r1 == 0 &&
			    (out.len != again.len || memcmp(out.data, again.data, out.len) != 0)))) {
				fprintf(stderr, "fuzz_report: %s: report_render %d, model %d\n",
				    formats[i], r1, r2);
				abort();
			}
			buf_free(&again);
		}
		report_model_free(model);
		model = NULL;
	}
	/* The side-by-side layout of the same cells: columns from a fuzzed byte,
	 * rows from the labels, baselines from the pivot. */
	for (i = 0; i < nc; i++) {
		colv[i] = colnames[u8(&c) % 3];
		rowv[i] = cells[i].label;
	}
	if (report_pivot_build("axis", colv, rowv, nc, (flags & 2) ? NULL : colnames[1], &pv,
	    &d) == 0) {
		report_pivot_baselines(pv, baseline_of, nc);
		pv->summary = (flags & 1) != 0;
		in.baseline_of = baseline_of;
		if (report_compute(&in, &model, &d) == 0) {
			for (i = 0; i < 5; i++) {
				buf_init(&again, (flags & 4) ? 512 : 4 << 20);
				r2 = report_pivot_render(model, pv, formats[i], &again, &d);
				if (r2 != 0 && r2 != BF_ERR_TOOBIG && !(i == 4 && r2 == BF_ERR_INVALID))
					abort();
				buf_free(&again);
			}
		}
		report_model_free(model);
		report_pivot_free(pv);
	}
	buf_free(&out);
	return 0;
}
