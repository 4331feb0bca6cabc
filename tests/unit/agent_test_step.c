/*
 * agent_test_step.c: step validation, with hostile and out-of-range values;
 * every refusal must name the field at fault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "caps.h"
#include "metric.h"
#include "step.h"
#include "t.h"

#define OKV "\"run\":7,\"iterations\":3,\"timeout_s\":60"

struct step_case {
	const char *doc;
	int ok;
	const char *msg;	/* substring of the diagnostic when refused */
};

static const struct step_case cases[] = {
	{ .doc = "{" OKV ",\"argv\":[\"/bin/true\"]}", .ok = 1 },
	{ .doc = "{" OKV ",\"argv\":[\"@agent\",\"work\",\"echo\",\"; touch /tmp/x\",\"$(id)\"],"
	  "\"warmup\":100,\"env\":{\"LC_ALL\":\"C\",\"_X1\":\"\"},\"cwd\":\"/tmp\","
	  "\"metrics\":[{\"name\":\"ops\",\"source\":\"stdout\",\"regex\":\"([0-9.,]+) ops/s\"},"
	  "{\"name\":\"lat.p99\",\"source\":\"stderr\",\"regex\":\"p99=([0-9]+)\"}]}", .ok = 1 },
	/* not an object, unknown fields, missing fields */
	{ .doc = "[]", .msg = "step: array where an object is expected" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"timeout\":5}",
	  .msg = "step: unknown field \"timeout\"" },
	{ .doc = "{\"iterations\":3,\"timeout_s\":60,\"argv\":[\"x\"]}", .msg = "run: missing" },
	{ .doc = "{\"run\":1,\"iterations\":3,\"timeout_s\":60}", .msg = "argv: missing" },
	{ .doc = "{\"run\":1,\"argv\":[\"x\"],\"timeout_s\":60}", .msg = "iterations: missing" },
	{ .doc = "{\"run\":1,\"argv\":[\"x\"],\"iterations\":1}", .msg = "timeout_s: missing" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"]", .msg = "step: byte" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"]} {}", .msg = "trailing" },
	/* run */
	{ .doc = "{\"run\":-1,\"iterations\":1,\"timeout_s\":1,\"argv\":[\"x\"]}",
	  .msg = "run: -1 is out of range" },
	{ .doc = "{\"run\":\"7\",\"iterations\":1,\"timeout_s\":1,\"argv\":[\"x\"]}",
	  .msg = "run: string where a number" },
	{ .doc = "{\"run\":1.5,\"iterations\":1,\"timeout_s\":1,\"argv\":[\"x\"]}",
	  .msg = "run: 1.5 is not an integer" },
	{ .doc = "{\"run\":99999999999999999999,\"iterations\":1,\"timeout_s\":1,\"argv\":[\"x\"]}",
	  .msg = "run:" },
	/* argv */
	{ .doc = "{" OKV ",\"argv\":[]}", .msg = "argv: 0 elements, expected 1..256" },
	{ .doc = "{" OKV ",\"argv\":\"/bin/sh -c id\"}", .msg = "argv: string where an array" },
	{ .doc = "{" OKV ",\"argv\":[\"x\",3]}", .msg = "argv[1]: number where a string" },
	{ .doc = "{" OKV ",\"argv\":[\"x\",null]}", .msg = "argv[1]: null where a string" },
	{ .doc = "{" OKV ",\"argv\":[\"x\",[\"y\"]]}", .msg = "argv[1]: array where a string" },
	{ .doc = "{" OKV ",\"argv\":[\"\"]}", .msg = "argv[0]: empty program name" },
	{ .doc = "{" OKV ",\"argv\":[\"a\\u0000b\"]}", .msg = "NUL" },
	/* iterations, warmup, timeout_s */
	{ .doc = "{\"run\":1,\"iterations\":0,\"timeout_s\":1,\"argv\":[\"x\"]}",
	  .msg = "iterations: 0 is out of range 1..10000" },
	{ .doc = "{\"run\":1,\"iterations\":10001,\"timeout_s\":1,\"argv\":[\"x\"]}",
	  .msg = "iterations: 10001" },
	{ .doc = "{\"run\":1,\"iterations\":true,\"timeout_s\":1,\"argv\":[\"x\"]}",
	  .msg = "iterations: boolean" },
	{ .doc = "{\"run\":1,\"iterations\":1e3,\"timeout_s\":1,\"argv\":[\"x\"]}",
	  .msg = "iterations: 1000 is not an integer" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"warmup\":101}",
	  .msg = "warmup: 101 is out of range 0..100" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"warmup\":-1}", .msg = "warmup: -1" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"gap_ms\":0}", .ok = 1 },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"gap_ms\":60000}", .ok = 1 },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"gap_ms\":60001}",
	  .msg = "gap_ms: 60001 is out of range 0..60000" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"gap_ms\":-1}", .msg = "gap_ms: -1" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"gap_ms\":\"100\"}", .msg = "gap_ms" },
	{ .doc = "{\"run\":1,\"iterations\":1,\"timeout_s\":0,\"argv\":[\"x\"]}",
	  .msg = "timeout_s: 0 is out of range 1..86400" },
	{ .doc = "{\"run\":1,\"iterations\":1,\"timeout_s\":86401,\"argv\":[\"x\"]}",
	  .msg = "timeout_s: 86401" },
	/* env */
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"env\":[]}", .msg = "env: array where an object" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"env\":{\"A=B\":\"c\"}}",
	  .msg = "env: \"A=B\" is not a valid variable name" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"env\":{\"1A\":\"c\"}}", .msg = "env: \"1A\"" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"env\":{\"\":\"c\"}}", .msg = "env: \"\"" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"env\":{\"A B\":\"c\"}}",
	  .msg = "not a valid variable name" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"env\":{\"$(id)\":\"c\"}}",
	  .msg = "not a valid variable name" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"env\":{\"LD_PRELOAD\":5}}",
	  .msg = "env.LD_PRELOAD: number where a string" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"env\":{\"A\":\"1\",\"A\":\"2\"}}",
	  .msg = "duplicate key" },
	/* cwd */
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"cwd\":\"tmp\"}",
	  .msg = "cwd: \"tmp\" is not an absolute path" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"cwd\":\"\"}", .msg = "cwd:" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"cwd\":7}", .msg = "cwd: number where a string" },
	/* pmu (step-schema.h's STEP_FIELD_PMU) */
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"pmu\":[]}", .msg = "pmu: array where an object" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"pmu\":{\"a b\":\"r0108\"}}",
	  .msg = "pmu: \"a b\": expected a name" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"pmu\":{\"walk\":\"cycles;id\"}}",
	  .msg = "pmu: \"walk\": expected a name" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"pmu\":{\"a\":\"r1\",\"b\":\"r2\",\"c\":\"r3\","
	  "\"d\":\"r4\",\"e\":\"r5\",\"f\":\"r6\",\"g\":\"r7\",\"h\":\"r8\",\"i\":\"r9\"}}",
	  .msg = "pmu: 9 events, at most 8 allowed" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"pmus\":{}}", .msg = "unknown field \"pmus\"" },
	/* metrics */
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":{}}",
	  .msg = "metrics: object where an array" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[1]}",
	  .msg = "metrics[0]: number where an object" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\"}]}",
	  .msg = "metrics[0].regex: missing" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"pipe\",\"regex\":\"(1)\"}]}",
	  .msg = "metrics[0].source: \"pipe\" is not one of stdout, stderr, file" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"([0-9]\"}]}",
	  .msg = "metrics[0].regex: does not compile" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"[0-9]+\"}]}",
	  .msg = "metrics[0].regex: has no capture group" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a b\",\"source\":\"stdout\",\"regex\":\"(1)\"}]}",
	  .msg = "metrics[0].name: \"a b\" is not a metric name" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"(1)\"},"
	  "{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"(2)\"}]}",
	  .msg = "metrics[1].name: \"a\" appears twice" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"(1)\",\"unit\":\"s\"}]}",
	  .msg = "metrics[0]: unknown field \"unit\"" },
	/* knobs */
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"thp_enabled\":\"madvise\",\"randomize_va_space\":0,"
	  "\"mthp_64kB\":\"always\",\"drop_caches\":3}}", .ok = 1 },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"thp_enabled\":\"alwayz\"}}",
	  .msg = "knobs.thp_enabled: \"alwayz\" is not one of never, madvise, always" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"thp_enabled\":\"always\\n\"}}",
	  .msg = "is not one of" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"thp_enabled\":true}}",
	  .msg = "knobs.thp_enabled: boolean where a string or an integer is expected" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"../../etc/passwd\":\"x\"}}",
	  .msg = "is not a knob" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"randomize_va_space\":1.5}}",
	  .msg = "knobs.randomize_va_space: number where" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"knobs\":[]}", .msg = "knobs: array where an object" },
	/* bind, aslr, drop_caches */
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"cpus\":\"0-3,8\",\"membind\":0,\"cpunodebind\":\"0\"},"
	  "\"aslr\":false,\"drop_caches\":true}", .ok = 1 },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"cpus\":\"0-3;id\"}}",
	  .msg = "bind.cpus: " },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"cpus\":\"\"}}",
	  .msg = "bind.cpus: empty list" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"cpus\":-1}}",
	  .msg = "bind.cpus: number where a list" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"numa\":0}}",
	  .msg = "bind: unknown field \"numa\"" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"aslr\":0}", .msg = "aslr: number where a boolean" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"drop_caches\":\"yes\"}",
	  .msg = "drop_caches: string where" },
	/* profile */
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"profile\":{\"perf\":\"record\",\"freq\":20000}}",
	  .ok = 1 },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"profile\":{\"perf\":\"record\",\"freq\":20001}}",
	  .msg = "profile.freq: expected an integer in 1..20000" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"profile\":{\"perf\":\"record\",\"freq\":9.5}}",
	  .msg = "profile.freq: expected an integer" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"profile\":{\"perf\":\"record -a\"}}",
	  .msg = "profile.perf: expected \"record\"" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"profile\":{\"freq\":99}}",
	  .msg = "profile.perf: missing" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"profile\":{\"perf\":\"record\",\"args\":[\"-a\"]}}",
	  .msg = "profile: unknown field \"args\"" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"profile\":true}", .msg = "profile: boolean where" },
	/* setup, pre_iteration, services */
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"setup\":[[\"tar\",\"xf\",\"a\"],[\"make\",\"tinyconfig\"]],"
	  "\"pre_iteration\":[[\"make\",\"clean\"]],\"services\":[{\"argv\":[\"redis-server\"],"
	  "\"ready\":{\"tcp\":\"127.0.0.1:6379\",\"timeout_s\":10}},{\"argv\":[\"m\"],"
	  "\"ready\":{\"tcp\":\"[::1]:11211\"}}]}", .ok = 1 },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"setup\":[\"make\"]}",
	  .msg = "setup[0]: string where an array" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"setup\":[[]]}", .msg = "setup[0]: 0 elements" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"pre_iteration\":[[\"\"]]}",
	  .msg = "pre_iteration[0][0]: empty program name" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"]}]}",
	  .msg = "services[0].ready: missing" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"localhost\"}}]}",
	  .msg = "services[0].ready.tcp: \"localhost\" is not ADDRESS:PORT" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"1.2.3.4:0\"}}]}",
	  .msg = "is not ADDRESS:PORT" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"1.2.3.4:70000\"}}]}",
	  .msg = "is not ADDRESS:PORT" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"1.2.3.4:1\","
	  "\"timeout_s\":0}}]}", .msg = "services[0].ready.timeout_s: 0 is out of range" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"1.2.3.4:1\"},"
	  "\"shell\":true}]}", .msg = "services[0]: unknown field \"shell\"" },
	/* csv and json metric rules */
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"rps\",\"source\":\"stdout\","
	  "\"csv\":{\"row_match\":\"GET\",\"column\":\"rps\"}},{\"name\":\"j\",\"source\":\"stdout\","
	  "\"json\":\"a.b.0\"}]}", .ok = 1 },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"rps\",\"source\":\"stdout\","
	  "\"csv\":{\"row_match\":\"GET\"}}]}", .msg = "metrics[0].csv.column: missing" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"rps\",\"source\":\"stdout\","
	  "\"csv\":{\"row_match\":\"GET\",\"column\":\"rps\"},\"regex\":\"(x)\"}]}",
	  .msg = "needs exactly one of regex, csv, json" },
	{ .doc = "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"j\",\"source\":\"stdout\","
	  "\"json\":\"a..b\"}]}", .msg = "is not a path like a.b.c" },
};

static void
test_table(void)
{
	struct bf_diag d;
	struct step *st;
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		st = NULL;
		r = step_parse(cases[i].doc, strlen(cases[i].doc), &st, &d);
		if ((r == 0) != cases[i].ok)
			fprintf(stderr, "case %zu: r=%d msg=%s\n", i, r, d.msg);
		T_EQ_INT(r == 0, cases[i].ok);
		T_CHECK((st != NULL) == (r == 0));
		if (cases[i].msg != NULL)
			T_CONTAINS(d.msg, cases[i].msg);
		step_free(st);
	}
	step_free(NULL);
}

static void
test_fields(void)
{
	struct step *st = NULL;
	struct bf_diag d;

	T_EQ_INT(step_parse(cases[1].doc, strlen(cases[1].doc), &st, &d), 0);
	if (st == NULL)
		return;
	T_EQ_INT(st->run, 7);
	T_EQ_INT(st->iterations, 3);
	T_EQ_INT(st->warmup, 100);
	T_EQ_INT(st->timeout_s, 60);
	T_EQ_INT(st->argc, 5);
	T_EQ_STR(st->argv[0], "@agent");
	T_EQ_STR(st->argv[3], "; touch /tmp/x");
	T_CHECK(st->argv[5] == NULL);
	T_EQ_INT(st->nenv, 2);
	T_EQ_STR(st->env_name[1], "_X1");
	T_EQ_STR(st->env_value[1], "");
	T_EQ_STR(st->cwd, "/tmp");
	T_EQ_INT(st->nmetrics, 2);
	T_EQ_STR(st->metrics[1].name, "lat.p99");
	T_EQ_INT(st->metrics[1].source, STEP_STDERR);
	step_free(st);
}

/* argv at and over BF_MAX_ARGV; one element over BF_MAX_ARG is stopped by
 * the JSON string cap before step.c sees it. */
static void
test_caps(void)
{
	struct step *st = NULL;
	struct bf_diag d;
	char *doc;
	size_t n, i, cap = 64 + (BF_MAX_ARGV + 1) * 4 + BF_MAX_ARG + 16;

	doc = malloc(cap);
	T_CHECK(doc != NULL);
	if (doc == NULL)
		return;
	n = (size_t)snprintf(doc, cap, "{" OKV ",\"argv\":[\"x\"");
	for (i = 1; i < BF_MAX_ARGV; i++)
		n += (size_t)snprintf(doc + n, cap - n, ",\"y\"");
	snprintf(doc + n, cap - n, "]}");
	T_EQ_INT(step_parse(doc, strlen(doc), &st, &d), 0);
	step_free(st);
	st = NULL;
	snprintf(doc + n, cap - n, ",\"z\"]}");
	T_CHECK(step_parse(doc, strlen(doc), &st, &d) != 0);
	T_CONTAINS(d.msg, "argv: 257 elements, expected 1..256");
	n = (size_t)snprintf(doc, cap, "{" OKV ",\"argv\":[\"");
	memset(doc + n, 'a', BF_MAX_ARG + 1);
	n += BF_MAX_ARG + 1;
	snprintf(doc + n, cap - n, "\"]}");
	T_CHECK(step_parse(doc, strlen(doc), &st, &d) != 0);
	T_CONTAINS(d.msg, "step: byte");
	T_CHECK(st == NULL);
	free(doc);
}

/* csv and json rules against fixture output (redis-benchmark --csv). */
static void
test_rules(void)
{
	static const char doc[] = "{" OKV ",\"argv\":[\"x\"],\"metrics\":["
	    "{\"name\":\"get\",\"source\":\"stdout\",\"csv\":{\"row_match\":\"GET\",\"column\":\"rps\"}},"
	    "{\"name\":\"set\",\"source\":\"stdout\",\"csv\":{\"row_match\":\"SET\",\"column\":\"rps\"}},"
	    "{\"name\":\"lat\",\"source\":\"stdout\",\"csv\":{\"row_match\":\"GET\",\"column\":\"p50_latency_ms\"}},"
	    "{\"name\":\"no\",\"source\":\"stdout\",\"csv\":{\"row_match\":\"LPUSH\",\"column\":\"rps\"}},"
	    "{\"name\":\"j\",\"source\":\"stdout\",\"json\":\"a.b.1.c\"},"
	    "{\"name\":\"js\",\"source\":\"stdout\",\"json\":\"s\"},"
	    "{\"name\":\"jbad\",\"source\":\"stdout\",\"json\":\"a.b.9\"}]}";
	static const char csv[] =
	    "progress line\r\n"
	    "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\"\n"
	    "\"SET\",\"123,456.79\",\"0.2\",\"0.1\",\"0.199\"\n"
	    "\"GET\",\"234567.89\",\"0.1\",\"0.05\",\"0.111\"\n";
	static const char js[] = "{\"a\":{\"b\":[{\"c\":1},{\"c\":2.5}]},\"s\":\"42\"}\n";
	struct step *st = NULL;
	struct bf_diag d;
	double v = 0;

	T_EQ_INT(step_parse(doc, strlen(doc), &st, &d), 0);
	if (st == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		return;
	}
	T_EQ_INT(metric_extract(&st->metrics[0], csv, strlen(csv), &v), 0);
	T_NEAR(v, 234567.89, 1e-6);
	/* a quoted field keeps its comma: "123,456.79" is not a number */
	T_CHECK(metric_extract(&st->metrics[1], csv, strlen(csv), &v) != 0);
	T_EQ_INT(metric_extract(&st->metrics[2], csv, strlen(csv), &v), 0);
	T_NEAR(v, 0.111, 1e-9);
	T_EQ_INT(metric_extract(&st->metrics[3], csv, strlen(csv), &v), BF_ERR_NOTFOUND);
	T_EQ_INT(metric_extract(&st->metrics[0], csv, 60, &v), BF_ERR_NOTFOUND);
	T_EQ_INT(metric_extract(&st->metrics[0], "", 0, &v), BF_ERR_NOTFOUND);
	T_EQ_INT(metric_extract(&st->metrics[4], js, strlen(js), &v), 0);
	T_NEAR(v, 2.5, 0);
	T_EQ_INT(metric_extract(&st->metrics[5], js, strlen(js), &v), 0);
	T_NEAR(v, 42, 0);
	T_EQ_INT(metric_extract(&st->metrics[6], js, strlen(js), &v), BF_ERR_NOTFOUND);
	T_CHECK(metric_extract(&st->metrics[4], js, 10, &v) != 0);
	T_CHECK(metric_extract(&st->metrics[4], "{} {}", 5, &v) != 0);
	T_CHECK(metric_extract(&st->metrics[4], csv, strlen(csv), &v) != 0);
	step_free(st);
}

int
main(void)
{
	test_table();
	test_rules();
	test_fields();
	test_caps();
	return t_done();
}
