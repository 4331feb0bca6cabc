/*
 * fuzz_agent_lines.c: what the coordinator does with the agent's JSON
 * lines (runner.c's on_line and ingest_iteration are static, so their
 * steps are repeated here over the same library calls): split the output
 * into lines under BF_MAX_AGENT_LINE, jx_loads each, read the fields of
 * hello/log/iteration/error/done with the same accessors and caps, clean
 * every string as the store does (store_text_clean), and finally render
 * the samples collected from iteration lines with report_render in one of
 * the formats, as GET /jobs/{id}/report would.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "jx.h"
#include "report.h"
#include "store-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CELLS	4
#define FZ_METRICS	3
#define FZ_SAMPLES	64

struct fz_acc {
	double v[FZ_CELLS][FZ_METRICS][FZ_SAMPLES];
	int boot[FZ_CELLS][FZ_METRICS][FZ_SAMPLES];
	size_t n[FZ_CELLS][FZ_METRICS];
};

static const char *const metric_names[FZ_METRICS] = { "wall_s", "ops", "faults" };

static void
clean(const char *s, size_t max)
{
	char *c;

	if (s != NULL && (c = store_text_clean(s, strlen(s), max, NULL)) != NULL)
		free(c);
}

static void
iteration(struct fz_acc *acc, json_t *o)
{
	int64_t it = 0, ex = 0, sig = 0, cell = 0, boot = 0;
	int warm = 0, tmo = 0;
	json_t *metrics, *v;
	size_t m, *n;

	if (jx_int(o, "iteration", JX_REQUIRED, 0, BF_MAX_ITERATIONS + 100, &it, "iteration",
	    NULL) != 0)
		return;
	jx_bool(o, "warmup", JX_OPTIONAL, &warm, "", NULL);
	jx_bool(o, "timeout", JX_OPTIONAL, &tmo, "", NULL);
	jx_int(o, "exit", JX_OPTIONAL, -1, 255, &ex, "", NULL);
	jx_int(o, "signal", JX_OPTIONAL, 0, 128, &sig, "", NULL);
	/* Not agent fields: they spread samples over cells and boots. */
	jx_int(o, "cell", JX_OPTIONAL, 0, FZ_CELLS - 1, &cell, "", NULL);
	jx_int(o, "boot", JX_OPTIONAL, 0, 1000, &boot, "", NULL);
	if (warm || tmo || sig != 0 || ex != 0)
		return;
	metrics = json_object_get(o, "metrics");
	for (m = 0; m < FZ_METRICS; m++) {
		v = json_object_get(m == 0 ? o : metrics, metric_names[m]);
		if (v == NULL || !json_is_number(v) || !isfinite(json_number_value(v)))
			continue;
		n = &acc->n[cell][m];
		if (*n >= FZ_SAMPLES)
			continue;
		acc->v[cell][m][*n] = json_number_value(v);
		acc->boot[cell][m][*n] = (int)boot;
		(*n)++;
	}
}

static void
line(struct fz_acc *acc, const char *p, size_t len)
{
	const char *type = NULL, *s = NULL, *k = NULL, *a = NULL, *bid = NULL, *st = NULL;
	json_t *o = NULL;
	int ok = 0;

	if (jx_loads(p, len, BF_MAX_AGENT_LINE, &o, NULL) != 0 || !json_is_object(o) ||
	    jx_str(o, "type", JX_REQUIRED, 32, &type, "", NULL) != 0)
		goto out;
	if (strcmp(type, "hello") == 0) {
		jx_str(o, "hostname", JX_OPTIONAL, BF_MAX_HOST, &s, "", NULL);
		jx_str(o, "kernel", JX_OPTIONAL, 256, &k, "", NULL);
		jx_str(o, "arch", JX_OPTIONAL, 64, &a, "", NULL);
		jx_str(o, "boot_id", JX_OPTIONAL, 64, &bid, "", NULL);
		clean(s, BF_MAX_HOST);
		clean(k, BF_MAX_NAME * 4);
		clean(a, BF_MAX_NAME);
		clean(bid, BF_MAX_NAME);
	} else if (strcmp(type, "log") == 0) {
		if (jx_str(o, "line", JX_OPTIONAL, BF_MAX_LOG_LINE * 8, &s, "", NULL) == 0) {
			jx_str(o, "stream", JX_OPTIONAL, 16, &st, "", NULL);
			clean(s, BF_MAX_LOG_LINE);
		}
	} else if (strcmp(type, "iteration") == 0) {
		iteration(acc, o);
	} else if (strcmp(type, "error") == 0) {
		if (jx_str(o, "msg", JX_OPTIONAL, BF_MAX_LOG_LINE, &s, "", NULL) == 0)
			clean(s, BF_MAX_LOG_LINE);
	} else if (strcmp(type, "done") == 0) {
		jx_bool(o, "ok", JX_OPTIONAL, &ok, "", NULL);
	}
out:
	json_decref(o);
}

static void
render(struct fz_acc *acc, unsigned seed)
{
	static const char *const formats[] = { "text", "markdown", "csv", "json" };
	static const struct report_metric metrics[FZ_METRICS] = {
		{ "wall_s", "s", 0 }, { "ops", "ops/s", 1 }, { "faults", NULL, 0 },
	};
	struct report_series series[FZ_CELLS * FZ_METRICS];
	struct report_cell cells[FZ_CELLS] = {
		{ "thp=never" }, { "thp=always" }, { NULL }, { "x=\"q\",y" },
	};
	int baseline_of[FZ_CELLS] = { -1, 0, 0, 1 };
	struct report_input in;
	struct bf_diag d;
	struct buf out;
	size_t c, m;
	unsigned f;

	for (c = 0; c < FZ_CELLS; c++)
		for (m = 0; m < FZ_METRICS; m++) {
			series[c * FZ_METRICS + m].v = acc->v[c][m];
			series[c * FZ_METRICS + m].boot = (seed & 1) ? NULL : acc->boot[c][m];
			series[c * FZ_METRICS + m].n = acc->n[c][m];
		}
	memset(&in, 0, sizeof(in));
	in.title = "fuzz";
	in.nmetrics = FZ_METRICS;
	in.metrics = metrics;
	in.ncells = FZ_CELLS;
	in.cells = cells;
	in.series = series;
	in.baseline_of = (seed & 2) ? NULL : baseline_of;
	in.baseline_desc = "thp:never";
	in.boot_cost_ratio = (seed & 4) ? 50.0 : 0.0;
	/* One format per input (bits 3-4 of the first byte): a render costs
	 * about as much as all the parsing before it. */
	f = (seed >> 3) & 3;
	buf_init(&out, 4 << 20);
	(void)report_render(&in, formats[f], &out, &d);
	buf_free(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_acc acc;
	const char *p = (const char *)data, *end = p + size, *nl;

	memset(&acc, 0, sizeof(acc));
	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		/* A line over the cap is cut and logged, never parsed. */
		if ((size_t)(nl - p) <= BF_MAX_AGENT_LINE)
			line(&acc, p, (size_t)(nl - p));
		p = nl + 1;
	}
	render(&acc, size > 0 ? data[0] : 0);
	return 0;
}
