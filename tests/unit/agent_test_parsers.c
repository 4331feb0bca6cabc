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
	{ "xsbench-upstream", "lookups_per_s",
	  "================================================================================\n"
	  "                                     RESULTS\n"
	  "================================================================================\n"
	  "Threads:     128\nRuntime:     13.712 seconds\nLookups:     17,000,000\n"
	  "Lookups/s:   1,239,772\nVerification checksum: 74966788162 (Valid)\n", 1239772 },
	{ "xsbench-upstream", "runtime_s", "Threads:     2\nRuntime:     0.542 seconds\n"
	  "Lookups/s:   1,211,226\n", 0.542 },
	{ "xsbench-upstream", "lookups_per_s", "Lookups/s: N/A\n", 0 },
	/* Graph500 3.0 (bfs then sssp) and 2.x (no kernel prefix) */
	{ "graph500-upstream", "harmonic_mean_teps",
	  "SCALE:                          26\nedgefactor:                     16\n"
	  "NBFS:                           64\ngraph_generation:               12.3\n"
	  "construction_time:              4.56\nbfs  min_time:                  0.198\n"
	  "bfs  mean_time:                 0.215\nbfs  harmonic_mean_TEPS:     7.60421e+09\n"
	  "bfs  harmonic_stddev_TEPS:   1.1e+06\nsssp harmonic_mean_TEPS:     2.1e+08\n",
	  7.60421e9 },
	{ "graph500-upstream", "mean_time_s", "bfs  min_time:                  0.198\n"
	  "bfs  mean_time:                 0.215\n", 0.215 },
	{ "graph500-upstream", "harmonic_mean_teps", "min_time: 1.2e-01\nmean_time: 1.5e-01\n"
	  "harmonic_mean_TEPS: 1.23456e+08\nharmonic_stddev_TEPS: 2e+05\n", 1.23456e8 },
	{ "graph500-upstream", "harmonic_mean_teps", "harmonic_mean_TEPS: !\n", 0 },
	/* GAPBS pr */
	{ "gapbs-pr", "average_time_s", "Generate Time:       0.01234\nBuild Time:          0.00567\n"
	  "Graph has 1024 nodes and 16384 directed edges for degree: 16\n"
	  "Trial Time:          0.00123\nTrial Time:          0.00145\n"
	  "Average Time:        0.00134\n", 0.00134 },
	{ "gapbs-pr", "average_time_s", "Trial Time:          0.00123\n", 0 },
	/* memtier_benchmark: the Totals line of ALL STATS */
	{ "memtier", "ops_per_s",
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
	  "         2.43100         5.08700      5301.86 \n", 125001.68 },
	{ "memtier", "avg_latency_ms",
	  "Totals     125001.68     113637.70         0.00         0.81010         0.75900"
	  "         2.43100         5.08700      5301.86 \n", 0.8101 },
	{ "memtier", "ops_per_s", "Gets       113637.70     113637.70         0.00\n", 0 },
	/* lmbench, on stderr */
	{ "lmbench-lat-pagefault", "pagefault_us", "Pagefaults on lat_pagefault.dat: 0.1524 microseconds\n",
	  0.1524 },
	{ "lmbench-lat-pagefault", "pagefault_us", "Pagefaults on /tmp/f: microseconds\n", 0 },
	{ "lmbench-lat-ctx", "ctx_us", "\n\"size=0k ovr=1.05\n2 3.21\n", 3.21 },
	{ "lmbench-lat-ctx", "ctx_us", "\n\"size=64k ovr=7.10\n16 12.40\n", 12.40 },
	{ "lmbench-lat-ctx", "ctx_us", "2 3.21\n", 0 },
	{ "lmbench-lat-syscall", "syscall_us", "Simple syscall: 0.0442 microseconds\n", 0.0442 },
	{ "lmbench-lat-syscall", "syscall_us", "Simple open/close: 1.2057 microseconds\n", 1.2057 },
	{ "lmbench-lat-syscall", "syscall_us", "Simple syscall: fast\n", 0 },
	/* Debian 12's programs, as they printed it */
	{ "dbench", "throughput_mbs", "   2  cleanup   2 sec\n\n Operation      Count    AvgLat    MaxLat\n"
	  " Flush            473     4.826    93.749\n\nThroughput 149.622 MB/sec  2 clients  "
	  "2 procs  max_latency=93.763 ms\n", 149.622 },
	{ "dbench", "max_latency_ms", "Throughput 149.622 MB/sec  2 clients  2 procs  "
	  "max_latency=93.763 ms\n", 93.763 },
	{ "tbench", "throughput_mbs", "Throughput 132.567 MB/sec  2 clients  2 procs  "
	  "max_latency=34.446 ms\n", 132.567 },
	{ "tbench", "max_latency_ms", "Throughput 132.567 MB/sec  2 clients  2 procs  "
	  "max_latency=34.446 ms\n", 34.446 },
	{ "sysbench-memory", "ops_per_s", "Total operations: 2048 ( 6060.01 per second)\n\n"
	  "2048.00 MiB transferred (6060.01 MiB/sec)\n", 6060.01 },
	{ "sysbench-memory", "mib_per_s", "2048.00 MiB transferred (6060.01 MiB/sec)\n", 6060.01 },
	{ "hackbench", "time_s", "Running in process mode with 2 groups using 40 file descriptors "
	  "each (== 80 tasks)\nEach sender will pass 200 messages of 100 bytes\nTime: 1.335\n", 1.335 },
	{ "ab", "requests_per_s", "Complete requests:      2000\nFailed requests:        0\n"
	  "Requests per second:    61.79 [#/sec] (mean)\nTime per request:       64.734 [ms] (mean)\n"
	  "Time per request:       16.184 [ms] (mean, across all concurrent requests)\n", 61.79 },
	{ "ab", "time_per_request_ms", "Time per request:       64.734 [ms] (mean)\n"
	  "Time per request:       16.184 [ms] (mean, across all concurrent requests)\n", 64.734 },
	{ "ab", "failed_requests", "Failed requests:        3\n   (Connect: 0, Receive: 0, "
	  "Length: 3, Exceptions: 0)\n", 3 },
	{ "stress-ng", "bogo_ops_per_s", "metrics:\n    - stressor: vm\n      bogo-ops: 19615\n"
	  "      bogo-ops-per-second-usr-sys-time: 69471.499508\n"
	  "      bogo-ops-per-second-real-time: 19402.764683\n", 19402.764683 },
	{ "stress-ng", "bogo_ops", "    - stressor: vm\n      bogo-ops: 19615\n", 19615 },
	{ "hpcc", "gups", "HPL_Tflops=0.00134417\nStarRandomAccess_GUPs=0.0363007\n"
	  "SingleRandomAccess_GUPs=0.0432927\nStarSTREAM_Triad=46.8901\n", 0.0432927 },
	{ "hpcc", "star_gups", "StarRandomAccess_GUPs=0.0363007\nSingleRandomAccess_GUPs=0.04\n",
	  0.0363007 },
	{ "hpcc", "stream_copy_gbs", "StarSTREAM_Copy=142.0\nSingleSTREAM_Copy=142.025\n", 142.025 },
	{ "hpcc", "stream_triad_gbs", "StarSTREAM_Triad=46.8901\nSingleSTREAM_Triad=46.8901\n", 46.8901 },
	{ "hpcc", "hpl_tflops", "HPL_Tflops=1.34417e-03\n", 1.34417e-3 },
	{ "fio-pagecache", "read_kib_per_s", "{\"fio version\": \"fio-3.33\", \"jobs\": [{\"jobname\": "
	  "\"pagecache\", \"read\": {\"io_bytes\": 67108864, \"bw\": 102721, \"iops\": "
	  "25680.25}}]}\n", 102721 },
	{ "fio-pagecache", "read_iops", "{\"jobs\": [{\"read\": {\"bw\": 102721, \"iops\": "
	  "25680.25}}]}\n", 25680.25 },
	{ "fio-pagecache", "read_iops", "fio: pid=1, err=2/file:filesetup.c\n", 0 },
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
