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
	{ "{" OKV ",\"argv\":[\"/bin/true\"]}", 1, NULL },
	{ "{" OKV ",\"argv\":[\"@agent\",\"work\",\"echo\",\"; touch /tmp/x\",\"$(id)\"],"
	  "\"warmup\":100,\"env\":{\"LC_ALL\":\"C\",\"_X1\":\"\"},\"cwd\":\"/tmp\","
	  "\"metrics\":[{\"name\":\"ops\",\"source\":\"stdout\",\"regex\":\"([0-9.,]+) ops/s\"},"
	  "{\"name\":\"lat.p99\",\"source\":\"stderr\",\"regex\":\"p99=([0-9]+)\"}]}", 1, NULL },
	/* not an object, unknown fields, missing fields */
	{ "[]", 0, "step: array where an object is expected" },
	{ "{" OKV ",\"argv\":[\"x\"],\"timeout\":5}", 0, "step: unknown field \"timeout\"" },
	{ "{\"iterations\":3,\"timeout_s\":60,\"argv\":[\"x\"]}", 0, "run: missing" },
	{ "{\"run\":1,\"iterations\":3,\"timeout_s\":60}", 0, "argv: missing" },
	{ "{\"run\":1,\"argv\":[\"x\"],\"timeout_s\":60}", 0, "iterations: missing" },
	{ "{\"run\":1,\"argv\":[\"x\"],\"iterations\":1}", 0, "timeout_s: missing" },
	{ "{" OKV ",\"argv\":[\"x\"]", 0, "step: byte" },
	{ "{" OKV ",\"argv\":[\"x\"]} {}", 0, "trailing" },
	/* run */
	{ "{\"run\":-1,\"iterations\":1,\"timeout_s\":1,\"argv\":[\"x\"]}", 0, "run: -1 is out of range" },
	{ "{\"run\":\"7\",\"iterations\":1,\"timeout_s\":1,\"argv\":[\"x\"]}", 0, "run: string where a number" },
	{ "{\"run\":1.5,\"iterations\":1,\"timeout_s\":1,\"argv\":[\"x\"]}", 0, "run: 1.5 is not an integer" },
	{ "{\"run\":99999999999999999999,\"iterations\":1,\"timeout_s\":1,\"argv\":[\"x\"]}", 0, "run:" },
	/* argv */
	{ "{" OKV ",\"argv\":[]}", 0, "argv: 0 elements, expected 1..256" },
	{ "{" OKV ",\"argv\":\"/bin/sh -c id\"}", 0, "argv: string where an array" },
	{ "{" OKV ",\"argv\":[\"x\",3]}", 0, "argv[1]: number where a string" },
	{ "{" OKV ",\"argv\":[\"x\",null]}", 0, "argv[1]: null where a string" },
	{ "{" OKV ",\"argv\":[\"x\",[\"y\"]]}", 0, "argv[1]: array where a string" },
	{ "{" OKV ",\"argv\":[\"\"]}", 0, "argv[0]: empty program name" },
	{ "{" OKV ",\"argv\":[\"a\\u0000b\"]}", 0, "NUL" },
	/* iterations, warmup, timeout_s */
	{ "{\"run\":1,\"iterations\":0,\"timeout_s\":1,\"argv\":[\"x\"]}", 0, "iterations: 0 is out of range 1..10000" },
	{ "{\"run\":1,\"iterations\":10001,\"timeout_s\":1,\"argv\":[\"x\"]}", 0, "iterations: 10001" },
	{ "{\"run\":1,\"iterations\":true,\"timeout_s\":1,\"argv\":[\"x\"]}", 0, "iterations: boolean" },
	{ "{\"run\":1,\"iterations\":1e3,\"timeout_s\":1,\"argv\":[\"x\"]}", 0, "iterations: 1000 is not an integer" },
	{ "{" OKV ",\"argv\":[\"x\"],\"warmup\":101}", 0, "warmup: 101 is out of range 0..100" },
	{ "{" OKV ",\"argv\":[\"x\"],\"warmup\":-1}", 0, "warmup: -1" },
	{ "{\"run\":1,\"iterations\":1,\"timeout_s\":0,\"argv\":[\"x\"]}", 0, "timeout_s: 0 is out of range 1..86400" },
	{ "{\"run\":1,\"iterations\":1,\"timeout_s\":86401,\"argv\":[\"x\"]}", 0, "timeout_s: 86401" },
	/* env */
	{ "{" OKV ",\"argv\":[\"x\"],\"env\":[]}", 0, "env: array where an object" },
	{ "{" OKV ",\"argv\":[\"x\"],\"env\":{\"A=B\":\"c\"}}", 0, "env: \"A=B\" is not a valid variable name" },
	{ "{" OKV ",\"argv\":[\"x\"],\"env\":{\"1A\":\"c\"}}", 0, "env: \"1A\"" },
	{ "{" OKV ",\"argv\":[\"x\"],\"env\":{\"\":\"c\"}}", 0, "env: \"\"" },
	{ "{" OKV ",\"argv\":[\"x\"],\"env\":{\"A B\":\"c\"}}", 0, "not a valid variable name" },
	{ "{" OKV ",\"argv\":[\"x\"],\"env\":{\"$(id)\":\"c\"}}", 0, "not a valid variable name" },
	{ "{" OKV ",\"argv\":[\"x\"],\"env\":{\"LD_PRELOAD\":5}}", 0, "env.LD_PRELOAD: number where a string" },
	{ "{" OKV ",\"argv\":[\"x\"],\"env\":{\"A\":\"1\",\"A\":\"2\"}}", 0, "duplicate key" },
	/* cwd */
	{ "{" OKV ",\"argv\":[\"x\"],\"cwd\":\"tmp\"}", 0, "cwd: \"tmp\" is not an absolute path" },
	{ "{" OKV ",\"argv\":[\"x\"],\"cwd\":\"\"}", 0, "cwd:" },
	{ "{" OKV ",\"argv\":[\"x\"],\"cwd\":7}", 0, "cwd: number where a string" },
	/* metrics */
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":{}}", 0, "metrics: object where an array" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[1]}", 0, "metrics[0]: number where an object" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\"}]}", 0, "metrics[0].regex: missing" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"file\",\"regex\":\"(1)\"}]}", 0,
	  "metrics[0].source: \"file\" is not one of stdout, stderr" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"([0-9]\"}]}", 0,
	  "metrics[0].regex: does not compile" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"[0-9]+\"}]}", 0,
	  "metrics[0].regex: has no capture group" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a b\",\"source\":\"stdout\",\"regex\":\"(1)\"}]}", 0,
	  "metrics[0].name: \"a b\" is not a metric name" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"(1)\"},"
	  "{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"(2)\"}]}", 0, "metrics[1].name: \"a\" appears twice" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"a\",\"source\":\"stdout\",\"regex\":\"(1)\",\"unit\":\"s\"}]}", 0,
	  "metrics[0]: unknown field \"unit\"" },
	/* knobs */
	{ "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"thp_enabled\":\"madvise\",\"randomize_va_space\":0,"
	  "\"mthp_64kB\":\"always\",\"drop_caches\":3}}", 1, NULL },
	{ "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"thp_enabled\":\"alwayz\"}}", 0,
	  "knobs.thp_enabled: \"alwayz\" is not one of never, madvise, always" },
	{ "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"thp_enabled\":\"always\\n\"}}", 0,
	  "is not one of" },
	{ "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"thp_enabled\":true}}", 0,
	  "knobs.thp_enabled: boolean where a string or an integer is expected" },
	{ "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"../../etc/passwd\":\"x\"}}", 0, "is not a knob" },
	{ "{" OKV ",\"argv\":[\"x\"],\"knobs\":{\"randomize_va_space\":1.5}}", 0,
	  "knobs.randomize_va_space: number where" },
	{ "{" OKV ",\"argv\":[\"x\"],\"knobs\":[]}", 0, "knobs: array where an object" },
	/* bind, aslr, drop_caches */
	{ "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"cpus\":\"0-3,8\",\"membind\":0,\"cpunodebind\":\"0\"},"
	  "\"aslr\":false,\"drop_caches\":true}", 1, NULL },
	{ "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"cpus\":\"0-3;id\"}}", 0, "bind.cpus: " },
	{ "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"cpus\":\"\"}}", 0, "bind.cpus: empty list" },
	{ "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"cpus\":-1}}", 0, "bind.cpus: number where a list" },
	{ "{" OKV ",\"argv\":[\"x\"],\"bind\":{\"numa\":0}}", 0, "bind: unknown field \"numa\"" },
	{ "{" OKV ",\"argv\":[\"x\"],\"aslr\":0}", 0, "aslr: number where a boolean" },
	{ "{" OKV ",\"argv\":[\"x\"],\"drop_caches\":\"yes\"}", 0, "drop_caches: string where" },
	/* setup, pre_iteration, services */
	{ "{" OKV ",\"argv\":[\"x\"],\"setup\":[[\"tar\",\"xf\",\"a\"],[\"make\",\"tinyconfig\"]],"
	  "\"pre_iteration\":[[\"make\",\"clean\"]],\"services\":[{\"argv\":[\"redis-server\"],"
	  "\"ready\":{\"tcp\":\"127.0.0.1:6379\",\"timeout_s\":10}},{\"argv\":[\"m\"],"
	  "\"ready\":{\"tcp\":\"[::1]:11211\"}}]}", 1, NULL },
	{ "{" OKV ",\"argv\":[\"x\"],\"setup\":[\"make\"]}", 0, "setup[0]: string where an array" },
	{ "{" OKV ",\"argv\":[\"x\"],\"setup\":[[]]}", 0, "setup[0]: 0 elements" },
	{ "{" OKV ",\"argv\":[\"x\"],\"pre_iteration\":[[\"\"]]}", 0,
	  "pre_iteration[0][0]: empty program name" },
	{ "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"]}]}", 0,
	  "services[0].ready: missing" },
	{ "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"localhost\"}}]}",
	  0, "services[0].ready.tcp: \"localhost\" is not ADDRESS:PORT" },
	{ "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"1.2.3.4:0\"}}]}",
	  0, "is not ADDRESS:PORT" },
	{ "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"1.2.3.4:70000\"}}]}",
	  0, "is not ADDRESS:PORT" },
	{ "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"1.2.3.4:1\","
	  "\"timeout_s\":0}}]}", 0, "services[0].ready.timeout_s: 0 is out of range" },
	{ "{" OKV ",\"argv\":[\"x\"],\"services\":[{\"argv\":[\"r\"],\"ready\":{\"tcp\":\"1.2.3.4:1\"},"
	  "\"shell\":true}]}", 0, "services[0]: unknown field \"shell\"" },
	/* csv and json metric rules */
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"rps\",\"source\":\"stdout\","
	  "\"csv\":{\"row_match\":\"GET\",\"column\":\"rps\"}},{\"name\":\"j\",\"source\":\"stdout\","
	  "\"json\":\"a.b.0\"}]}", 1, NULL },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"rps\",\"source\":\"stdout\","
	  "\"csv\":{\"row_match\":\"GET\"}}]}", 0, "metrics[0].csv.column: missing" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"rps\",\"source\":\"stdout\","
	  "\"csv\":{\"row_match\":\"GET\",\"column\":\"rps\"},\"regex\":\"(x)\"}]}", 0,
	  "needs exactly one of regex, csv, json" },
	{ "{" OKV ",\"argv\":[\"x\"],\"metrics\":[{\"name\":\"j\",\"source\":\"stdout\","
	  "\"json\":\"a..b\"}]}", 0, "is not a path like a.b.c" },
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
