/*
 * agent_test_parsers.c: the metric rules of the shipped recipes for real
 * programs, applied by the agent's own extraction (step_parse, then
 * metric_extract) to output in each program's documented shape. The
 * upstream programs a lab installs itself (XSBench, Graph500, GAPBS,
 * memtier_benchmark, lmbench) cannot run here, so these lines, written
 * after their documentation, are their test; the Debian programs' lines
 * are what they printed on Debian 12 (debian_programs.sh runs them for
 * real). A line in another shape must give no number, never a wrong one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ajson.h"
#include "err.h"
#include "metric.h"
#include "step.h"
#include "t.h"

struct parse_case {
	const char *recipe, *metric, *text;
	double want;		/* 0: no number (BF_ERR_NOTFOUND, BF_ERR_PARSE) */
};

static const struct parse_case cases[] = {
	/* XSBench: thousands separators in Lookups/s */
	{ .recipe = "xsbench-upstream", .metric = "lookups_per_s", .text =
	  "================================================================================\n"
	  "                                     RESULTS\n"
	  "================================================================================\n"
	  "Threads:     128\nRuntime:     13.712 seconds\nLookups:     17,000,000\n"
	  "Lookups/s:   1,239,772\nVerification checksum: 74966788162 (Valid)\n", .want = 1239772 },
	{ .recipe = "xsbench-upstream", .metric = "runtime_s", .text = "Threads:     2\nRuntime:     0.542 seconds\n"
	  "Lookups/s:   1,211,226\n", .want = 0.542 },
	{ .recipe = "xsbench-upstream", .metric = "lookups_per_s", .text = "Lookups/s: N/A\n", .want = 0 },
	/* Graph500 3.0 (bfs then sssp) and 2.x (no kernel prefix) */
	{ .recipe = "graph500-upstream", .metric = "harmonic_mean_teps", .text =
	  "SCALE:                          26\nedgefactor:                     16\n"
	  "NBFS:                           64\ngraph_generation:               12.3\n"
	  "construction_time:              4.56\nbfs  min_time:                  0.198\n"
	  "bfs  mean_time:                 0.215\nbfs  harmonic_mean_TEPS:     7.60421e+09\n"
	  "bfs  harmonic_stddev_TEPS:   1.1e+06\nsssp harmonic_mean_TEPS:     2.1e+08\n", .want = 7.60421e9 },
	{ .recipe = "graph500-upstream", .metric = "mean_time_s", .text = "bfs  min_time:                  0.198\n"
	  "bfs  mean_time:                 0.215\n", .want = 0.215 },
	{ .recipe = "graph500-upstream", .metric = "harmonic_mean_teps", .text = "min_time: 1.2e-01\nmean_time: 1.5e-01\n"
	  "harmonic_mean_TEPS: 1.23456e+08\nharmonic_stddev_TEPS: 2e+05\n", .want = 1.23456e8 },
	{ .recipe = "graph500-upstream", .metric = "harmonic_mean_teps", .text = "harmonic_mean_TEPS: !\n", .want = 0 },
	/* GAPBS pr */
	{ .recipe = "gapbs-pr", .metric = "average_time_s", .text = "Generate Time:       0.01234\nBuild Time:          0.00567\n"
	  "Graph has 1024 nodes and 16384 directed edges for degree: 16\n"
	  "Trial Time:          0.00123\nTrial Time:          0.00145\n"
	  "Average Time:        0.00134\n", .want = 0.00134 },
	{ .recipe = "gapbs-pr", .metric = "average_time_s", .text = "Trial Time:          0.00123\n", .want = 0 },
	/* memtier_benchmark: the Totals line of ALL STATS */
	{ .recipe = "memtier", .metric = "ops_per_s", .text =
	  "ALL STATS\n==========================================================================\n"
	  "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency"
	  "     p99 Latency   p99.9 Latency       KB/sec \n"
	  "--------------------------------------------------------------------------\n"
	  "Sets        11363.98          ---          ---         0.81700         0.76700"
	  "         2.46300         5.15100       875.10 \n"
	  "Gets       113637.70     113637.70         0.00         0.80941         0.75900"
	  "         2.43100         5.08700      4426.76 \n"
	  "Waits           0.00          ---          ---             ---             ---"
	  "             ---             ---          --- \n"
	  "Totals     125001.68     113637.70         0.00         0.81010         0.75900"
	  "         2.43100         5.08700      5301.86 \n", .want = 125001.68 },
	{ .recipe = "memtier", .metric = "avg_latency_ms", .text =
	  "Totals     125001.68     113637.70         0.00         0.81010         0.75900"
	  "         2.43100         5.08700      5301.86 \n", .want = 0.8101 },
	{ .recipe = "memtier", .metric = "ops_per_s", .text = "Gets       113637.70     113637.70         0.00\n", .want = 0 },
	/* lmbench, on stderr */
	{ .recipe = "lmbench-lat-pagefault", .metric = "pagefault_us", .text = "Pagefaults on lat_pagefault.dat: 0.1524 microseconds\n", .want = 0.1524 },
	{ .recipe = "lmbench-lat-pagefault", .metric = "pagefault_us", .text = "Pagefaults on /tmp/f: microseconds\n", .want = 0 },
	{ .recipe = "lmbench-lat-ctx", .metric = "ctx_us", .text = "\n\"size=0k ovr=1.05\n2 3.21\n", .want = 3.21 },
	{ .recipe = "lmbench-lat-ctx", .metric = "ctx_us", .text = "\n\"size=64k ovr=7.10\n16 12.40\n", .want = 12.40 },
	{ .recipe = "lmbench-lat-ctx", .metric = "ctx_us", .text = "2 3.21\n", .want = 0 },
	{ .recipe = "lmbench-lat-syscall", .metric = "syscall_us", .text = "Simple syscall: 0.0442 microseconds\n", .want = 0.0442 },
	{ .recipe = "lmbench-lat-syscall", .metric = "syscall_us", .text = "Simple open/close: 1.2057 microseconds\n", .want = 1.2057 },
	{ .recipe = "lmbench-lat-syscall", .metric = "syscall_us", .text = "Simple syscall: fast\n", .want = 0 },
	/* Debian 12's programs, as they printed it */
	{ .recipe = "dbench", .metric = "throughput_mbs", .text = "   2  cleanup   2 sec\n\n Operation      Count    AvgLat    MaxLat\n"
	  " Flush            473     4.826    93.749\n\nThroughput 149.622 MB/sec  2 clients  "
	  "2 procs  max_latency=93.763 ms\n", .want = 149.622 },
	{ .recipe = "dbench", .metric = "max_latency_ms", .text = "Throughput 149.622 MB/sec  2 clients  2 procs  "
	  "max_latency=93.763 ms\n", .want = 93.763 },
	{ .recipe = "tbench", .metric = "throughput_mbs", .text = "Throughput 132.567 MB/sec  2 clients  2 procs  "
	  "max_latency=34.446 ms\n", .want = 132.567 },
	{ .recipe = "tbench", .metric = "max_latency_ms", .text = "Throughput 132.567 MB/sec  2 clients  2 procs  "
	  "max_latency=34.446 ms\n", .want = 34.446 },
	{ .recipe = "sysbench-memory", .metric = "ops_per_s", .text = "Total operations: 2048 ( 6060.01 per second)\n\n"
	  "2048.00 MiB transferred (6060.01 MiB/sec)\n", .want = 6060.01 },
	{ .recipe = "sysbench-memory", .metric = "mib_per_s", .text = "2048.00 MiB transferred (6060.01 MiB/sec)\n", .want = 6060.01 },
	{ .recipe = "hackbench", .metric = "time_s", .text = "Running in process mode with 2 groups using 40 file descriptors "
	  "each (== 80 tasks)\nEach sender will pass 200 messages of 100 bytes\nTime: 1.335\n", .want = 1.335 },
	{ .recipe = "ab", .metric = "requests_per_s", .text = "Complete requests:      2000\nFailed requests:        0\n"
	  "Requests per second:    61.79 [#/sec] (mean)\nTime per request:       64.734 [ms] (mean)\n"
	  "Time per request:       16.184 [ms] (mean, across all concurrent requests)\n", .want = 61.79 },
	{ .recipe = "ab", .metric = "time_per_request_ms", .text = "Time per request:       64.734 [ms] (mean)\n"
	  "Time per request:       16.184 [ms] (mean, across all concurrent requests)\n", .want = 64.734 },
	{ .recipe = "ab", .metric = "failed_requests", .text = "Failed requests:        3\n   (Connect: 0, Receive: 0, "
	  "Length: 3, Exceptions: 0)\n", .want = 3 },
	{ .recipe = "stress-ng", .metric = "bogo_ops_per_s", .text = "metrics:\n    - stressor: vm\n      bogo-ops: 19615\n"
	  "      bogo-ops-per-second-usr-sys-time: 69471.499508\n"
	  "      bogo-ops-per-second-real-time: 19402.764683\n", .want = 19402.764683 },
	{ .recipe = "stress-ng", .metric = "bogo_ops", .text = "    - stressor: vm\n      bogo-ops: 19615\n", .want = 19615 },
	{ .recipe = "hpcc", .metric = "gups", .text = "HPL_Tflops=0.00134417\nStarRandomAccess_GUPs=0.0363007\n"
	  "SingleRandomAccess_GUPs=0.0432927\nStarSTREAM_Triad=46.8901\n", .want = 0.0432927 },
	{ .recipe = "hpcc", .metric = "star_gups", .text = "StarRandomAccess_GUPs=0.0363007\nSingleRandomAccess_GUPs=0.04\n", .want = 0.0363007 },
	{ .recipe = "hpcc", .metric = "stream_copy_gbs", .text = "StarSTREAM_Copy=142.0\nSingleSTREAM_Copy=142.025\n", .want = 142.025 },
	{ .recipe = "hpcc", .metric = "stream_triad_gbs", .text = "StarSTREAM_Triad=46.8901\nSingleSTREAM_Triad=46.8901\n", .want = 46.8901 },
	{ .recipe = "hpcc", .metric = "hpl_tflops", .text = "HPL_Tflops=1.34417e-03\n", .want = 1.34417e-3 },
	{ .recipe = "fio-pagecache", .metric = "read_kib_per_s", .text = "{\"fio version\": \"fio-3.33\", \"jobs\": [{\"jobname\": "
	  "\"pagecache\", \"read\": {\"io_bytes\": 67108864, \"bw\": 102721, \"iops\": "
	  "25680.25}}]}\n", .want = 102721 },
	{ .recipe = "fio-pagecache", .metric = "read_iops", .text = "{\"jobs\": [{\"read\": {\"bw\": 102721, \"iops\": "
	  "25680.25}}]}\n", .want = 25680.25 },
	{ .recipe = "fio-pagecache", .metric = "read_iops", .text = "fio: pid=1, err=2/file:filesetup.c\n", .want = 0 },
};

/* The recipe file's metrics that come from output, as a step the agent
 * parses: {"name","source" and its rule}. */
static struct step *
load(const char *recipe)
{
	static const char *const keys[] = { "name", "source", "regex", "json", "file", NULL };
	const char *src = getenv("BF_SRC");
	const struct ajson *ms, *m, *v;
	struct ajson *doc = NULL;
	struct step *st = NULL;
	struct bf_diag d;
	struct buf text, step;
	char path[512], chunk[4096];
	size_t i, k, n, nm = 0;
	FILE *f;

	buf_init(&text, BF_MAX_STEP);
	buf_init(&step, BF_MAX_STEP);
	snprintf(path, sizeof(path), "%s/recipes/%s.json", src != NULL ? src : ".", recipe);
	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "%s: cannot open\n", path);
		goto out;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(&text, chunk, n) != 0)
			break;
	fclose(f);
	if (ajson_parse(text.data, text.len, &doc, &d) != 0 ||
	    (ms = ajson_get(doc, "metrics")) == NULL) {
		fprintf(stderr, "%s: %s\n", path, d.msg);
		goto out;
	}
	if (buf_puts(&step, "{\"run\":1,\"iterations\":1,\"timeout_s\":1,\"argv\":[\"x\"],"
	    "\"files\":[],\"metrics\":[") != 0)
		goto out;
	for (i = 0; i < ms->n; i++) {
		m = ms->items[i];
		v = ajson_get(m, "source");
		if (v == NULL || (strcmp(v->str, "stdout") != 0 && strcmp(v->str, "stderr") != 0 &&
		    strcmp(v->str, "file") != 0))
			continue;
		if (buf_puts(&step, nm++ ? ",{" : "{") != 0)
			goto out;
		for (k = 0, n = 0; keys[k] != NULL; k++) {
			if ((v = ajson_get(m, keys[k])) == NULL)
				continue;
			if (buf_puts(&step, n++ ? ",\"" : "\"") != 0 ||
			    buf_puts(&step, keys[k]) != 0 || buf_puts(&step, "\":") != 0 ||
			    ajson_put_str(&step, v->str, v->len) != 0)
				goto out;
		}
		if (buf_puts(&step, "}") != 0)
			goto out;
	}
	if (buf_puts(&step, "]}") != 0)
		goto out;
	if (step_parse(step.data, step.len, &st, &d) != 0) {
		fprintf(stderr, "%s: step: %s\n", recipe, d.msg);
		st = NULL;
	}
out:
	ajson_free(doc);
	buf_free(&text);
	buf_free(&step);
	return st;
}

static void
test_cases(void)
{
	struct step *st;
	double v;
	size_t i, k;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		st = load(cases[i].recipe);
		T_CHECK(st != NULL);
		if (st == NULL)
			continue;
		for (k = 0; k < st->nmetrics && strcmp(st->metrics[k].name, cases[i].metric) != 0; k++)
			;
		T_CHECK(k < st->nmetrics);
		if (k == st->nmetrics) {
			fprintf(stderr, "%s: no metric %s\n", cases[i].recipe, cases[i].metric);
			step_free(st);
			continue;
		}
		v = -1;
		r = metric_extract(&st->metrics[k], cases[i].text, strlen(cases[i].text), &v);
		if (cases[i].want == 0) {
			/* not found, or (fio's JSON rule) not a document: no number */
			T_CHECK(r == BF_ERR_NOTFOUND || r == BF_ERR_PARSE);
		} else {
			T_EQ_INT(r, 0);
			T_NEAR(v, cases[i].want, cases[i].want * 1e-9);
		}
		if ((cases[i].want == 0) != (r != 0))
			fprintf(stderr, "case %zu (%s.%s): r=%d v=%g\n", i, cases[i].recipe,
			    cases[i].metric, r, v);
		step_free(st);
	}
}

/* Every metric of a recipe for a real program has a case above. */
static void
test_covered(void)
{
	static const char *const recipes[] = {
		"xsbench-upstream", "graph500-upstream", "gapbs-pr", "memtier",
		"lmbench-lat-pagefault", "lmbench-lat-ctx", "lmbench-lat-syscall", "dbench",
		"tbench", "sysbench-memory", "hackbench", "ab", "stress-ng", "hpcc",
		"fio-pagecache",
	};
	struct step *st;
	size_t i, k, c;

	for (i = 0; i < sizeof(recipes) / sizeof(recipes[0]); i++) {
		if ((st = load(recipes[i])) == NULL) {
			T_CHECK(0);
			continue;
		}
		T_CHECK(st->nmetrics > 0);
		for (k = 0; k < st->nmetrics; k++) {
			for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
				if (strcmp(cases[c].recipe, recipes[i]) == 0 &&
				    strcmp(cases[c].metric, st->metrics[k].name) == 0 && cases[c].want != 0)
					break;
			if (c == sizeof(cases) / sizeof(cases[0])) {
				fprintf(stderr, "%s.%s: no parser case\n", recipes[i], st->metrics[k].name);
				T_CHECK(0);
			}
		}
		step_free(st);
	}
}

int
main(void)
{
	test_cases();
	test_covered();
	return t_done();
}
