/*
 * fuzz_agent_lines.c: what the coordinator does with the agent's JSON
 * lines: split the output into lines under BF_MAX_AGENT_LINE, decode each
 * with agentline_decode (the runner's own decoder), clean every string as
 * the store does (store_text_clean), and finally render the samples
 * collected from iteration lines with report_render in one of the
 * formats, as GET /jobs/{id}/report would.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentline.h"
#include "buf.h"
#include "caps.h"
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
iteration(struct fz_acc *acc, const struct agentline_iteration *it)
{
	/* Not what the runner does: the index spreads samples over cells and
	 * boots, so the report sees several of each. */
	size_t cell = (size_t)it->index % FZ_CELLS, m, k, *n;
	int boot = (int)(it->index / FZ_CELLS) % 8, set;
	double x = 0;

	if (it->warmup || it->timeout || it->signal != 0 || it->exit != 0 || it->nmissing > 0)
		return;
	for (m = 0; m < FZ_METRICS; m++) {
		set = 0;
		if (m == 0) {
			set = it->builtin_set[AGENTLINE_WALL_S];
			x = it->builtin[AGENTLINE_WALL_S];
		} else
			for (k = 0; k < it->nmetrics && !set; k++)
				if (strcmp(it->metrics[k].name, metric_names[m]) == 0 &&
				    it->metrics[k].set) {
					set = 1;
					x = it->metrics[k].value;
				}
		n = &acc->n[cell][m];
		if (!set || *n >= FZ_SAMPLES)
			continue;
		acc->v[cell][m][*n] = x;
		acc->boot[cell][m][*n] = boot;
		(*n)++;
	}
}

static void
line(struct fz_acc *acc, const char *p, size_t len)
{
	struct agentline_event ev;
	struct bf_diag d;

	if (agentline_decode(p, len, &ev, &d) != 0) {
		/* the runner logs the refusal with the start of the line */
		clean(d.msg, BF_MAX_LOG_LINE);
		agentline_event_clear(&ev);
		return;
	}
	switch (ev.type) {
	case AGENTLINE_HELLO:
		clean(ev.u.hello.hostname, BF_MAX_HOST);
		clean(ev.u.hello.kernel, BF_MAX_NAME * 4);
		clean(ev.u.hello.arch, BF_MAX_NAME);
		clean(ev.u.hello.boot_id, BF_MAX_NAME);
		clean(ev.u.hello.cmdline, BF_MAX_STR);
		break;
	case AGENTLINE_LOG:
		clean(ev.u.log.line, BF_MAX_LOG_LINE);
		break;
	case AGENTLINE_KNOBS:
		clean(ev.u.knobs.text, BF_MAX_API_BODY);
		break;
	case AGENTLINE_ITERATION:
		iteration(acc, &ev.u.iteration);
		break;
	case AGENTLINE_ERROR:
		clean(ev.u.error.msg, BF_MAX_LOG_LINE);
		break;
	case AGENTLINE_DONE:
	case AGENTLINE_NONE:
		break;
	}
	agentline_event_clear(&ev);
}

static void
render(struct fz_acc *acc, unsigned seed)
{
	static const char *const formats[] = { "text", "markdown", "csv", "json" };
	static const struct report_metric metrics[FZ_METRICS] = {
		{ .name = "wall_s", .unit = "s" }, { .name = "ops", .unit = "ops/s", .higher_better = 1 },
		{ .name = "faults" },
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
