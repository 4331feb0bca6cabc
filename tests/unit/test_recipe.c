/*
 * test_recipe.c: recipe parsing and validation (table driven: one key of a
 * good recipe replaced by a bad value per row), caps, malformed documents,
 * argv rendering with hostile values, recipe files, the step parts a
 * recipe gives and its expectations. Parameter types and values: test_recipe_param.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "jx.h"
#include "caps.h"
#include "recipe.h"
#include "path.h"
#include "t.h"
#include "recipe_fixture.h"

static const struct {
	const char *key;
	const char *val;	/* NULL: remove the key */
	int r;
	const char *msg;
} cases[] = {
	{"name", NULL, BF_ERR_INVALID, "name: is required"},
	{"name", "\"\"", BF_ERR_INVALID, "name: must not be empty"},
	{"name", "\"a b\"", BF_ERR_INVALID, "name: \"a b\" is not a valid name"},
	{"name", "\"; touch /tmp/pwned\"", BF_ERR_INVALID, "name: \"; touch /tmp/pwned\" is not"},
	{"name", "5", BF_ERR_INVALID, "name: expected a string, got an integer"},
	{"name", "\"a\\u0000b\"", BF_ERR_INVALID, "name: contains a NUL byte"},
	{"comand", "[]", BF_ERR_INVALID, "comand: unknown key; expected one of name, description,"
	    " params, presets, command, timeout_s, metrics"},
	{"description", "7", BF_ERR_INVALID, "description: expected a string, got an integer"},
	{"command", NULL, BF_ERR_INVALID, "command: is required"},
	{"command", "[]", BF_ERR_INVALID, "command: has 0 elements; at least 1 needed"},
	{"command", "\"echo\"", BF_ERR_INVALID, "command: expected an array, got a string"},
	{"command", "[\"echo\", \"{lopps}\"]", BF_ERR_INVALID,
	    "command[1]: slot {lopps} names no parameter; parameters are " NAMES},
	{"command", "[\"echo\", \"a\", \"b\", \"--x={lopps}\"]", BF_ERR_INVALID,
	    "command[3]: slot {lopps} names no parameter; parameters are " NAMES},
	{"command", "[\"echo\", \"{}\"]", BF_ERR_INVALID, "command[1]: slot {} names no parameter"},
	{"command", "[\"echo\", \"{loops\"]", BF_ERR_INVALID, "command[1]: unmatched \"{\" at byte 0"},
	{"command", "[\"echo\", \"x{{y{\"]", BF_ERR_INVALID, "command[1]: unmatched \"{\" at byte 4"},
	{"command", "[\"echo\", \"{lo{ops}\"]", BF_ERR_INVALID, "command[1]: unmatched \"{\""},
	{"command", "[\"echo\", \"x}\"]", BF_ERR_INVALID, "command[1]: unmatched \"}\" at byte 1"},
	{"command", "[\"echo\", \"@agent\"]", BF_ERR_INVALID,
	    "command[1]: \"@agent\" is allowed only as command[0]"},
	{"command", "[\"\", \"x\"]", BF_ERR_INVALID, "command[0]: must not be empty"},
	{"command", "[\"echo\", 5]", BF_ERR_INVALID, "command[1]: expected a string, got an integer"},
	{"command", "[\"echo\", \"a\\u0000b\"]", BF_ERR_INVALID, "command[1]: contains a NUL byte"},
	{"command", "[\"echo\", [\"x\"]]", BF_ERR_INVALID,
	    "command[1]: expected a string, got an array"},
	{"timeout_s", "0", BF_ERR_RANGE, "timeout_s: 0 is out of range 1..86400"},
	{"timeout_s", "86401", BF_ERR_RANGE, "timeout_s: 86401 is out of range 1..86400"},
	{"timeout_s", "1.5", BF_ERR_INVALID, "timeout_s: expected an integer, got 1.5"},
	{"timeout_s", "\"600\"", BF_ERR_INVALID, "timeout_s: expected an integer, got a string"},
	{"timeout_s", "-9223372036854775808", BF_ERR_RANGE, "timeout_s: -9223372036854775808 is"},
	{"params", "[]", BF_ERR_INVALID, "params: expected an object, got an array"},
	{"params", "{\"loops\": 5}", BF_ERR_INVALID, "params.loops: expected an object, got an integer"},
	{"params", "{\"loops\": {\"default\": 1}}", BF_ERR_INVALID, "params.loops.type: is required"},
	{"params", "{\"loops\": {\"type\": \"integer\", \"default\": 1}}", BF_ERR_INVALID,
	    "params.loops.type: \"integer\" is not one of int, number, string, enum, bool"},
	{"params", "{\"loops\": {\"type\": \"int\", \"min\": 1, \"max\": 1000000000, \"default\": 0}}",
	    BF_ERR_RANGE, "params.loops.default: 0 is out of range 1..1000000000"},
	{"params", "{\"loops\": {\"type\": \"int\"}}", BF_ERR_INVALID, "params.loops.default: is required"},
	{"params", "{\"loops\": {\"type\": \"int\", \"default\": 1.5}}", BF_ERR_INVALID,
	    "params.loops.default: expected an integer, got 1.5"},
	{"params", "{\"loops\": {\"type\": \"int\", \"default\": \"1\"}}", BF_ERR_INVALID,
	    "params.loops.default: expected an integer, got a string"},
	{"params", "{\"loops\": {\"type\": \"int\", \"min\": 5, \"max\": 3, \"default\": 4}}",
	    BF_ERR_INVALID, "params.loops: min 5 is above max 3"},
	{"params", "{\"loops\": {\"type\": \"int\", \"min\": 1.5, \"default\": 4}}",
	    BF_ERR_INVALID, "params.loops.min: expected an integer, got 1.5"},
	{"params", "{\"loops\": {\"type\": \"int\", \"values\": [1], \"default\": 4}}", BF_ERR_INVALID,
	    "params.loops.values: unknown key; expected one of type, min, max, default, description"},
	{"params", "{\"r\": {\"type\": \"number\", \"max\": 1, \"default\": 1e308}}", BF_ERR_RANGE,
	    "params.r.default: 1e+308 is out of range"},
	{"params", "{\"r\": {\"type\": \"number\", \"default\": true}}", BF_ERR_INVALID,
	    "params.r.default: expected a number, got a boolean"},
	{"params", "{\"r\": {\"type\": \"number\", \"min\": 2, \"max\": 1, \"default\": 1}}",
	    BF_ERR_INVALID, "params.r: min 2 is above max 1"},
	{"params", "{\"mode\": {\"type\": \"enum\", \"values\": [\"a\", \"b\"], \"default\": \"c\"}}",
	    BF_ERR_INVALID, "params.mode.default: \"c\" is not one of a, b"},
	{"params", "{\"mode\": {\"type\": \"enum\", \"values\": [\"a\", \"a\"], \"default\": \"a\"}}",
	    BF_ERR_INVALID, "params.mode.values[1]: \"a\" repeats params.mode.values[0]"},
	{"params", "{\"mode\": {\"type\": \"enum\", \"values\": [], \"default\": \"a\"}}",
	    BF_ERR_INVALID, "params.mode.values: has 0 elements; at least 1 needed"},
	{"params", "{\"mode\": {\"type\": \"enum\", \"default\": \"a\"}}",
	    BF_ERR_INVALID, "params.mode.values: is required"},
	{"params", "{\"mode\": {\"type\": \"enum\", \"values\": [\"a\", 1], \"default\": \"a\"}}",
	    BF_ERR_INVALID, "params.mode.values[1]: expected a string, got an integer"},
	{"params", "{\"mode\": {\"type\": \"enum\", \"values\": [\"a\"], \"default\": 1}}",
	    BF_ERR_INVALID, "params.mode.default: expected a string, got an integer"},
	{"params", "{\"flag\": {\"type\": \"bool\", \"default\": \"true\"}}", BF_ERR_INVALID,
	    "params.flag.default: expected true or false, got a string"},
	{"params", "{\"msg\": {\"type\": \"string\", \"max_len\": 2, \"default\": \"abc\"}}",
	    BF_ERR_TOOBIG, "params.msg.default: is 3 bytes long; at most 2 allowed"},
	{"params", "{\"msg\": {\"type\": \"string\", \"default\": \"a\\u0000b\"}}",
	    BF_ERR_INVALID, "params.msg.default: contains a NUL byte"},
	{"params", "{\"msg\": {\"type\": \"string\", \"max_len\": 0, \"default\": \"\"}}",
	    BF_ERR_RANGE, "params.msg.max_len: 0 is out of range 1..4096"},
	{"params", "{\"bad name\": {\"type\": \"bool\", \"default\": true}}", BF_ERR_INVALID,
	    "params.bad name: \"bad name\" is not a valid name"},
	{"params", "{\"$(id)\": {\"type\": \"bool\", \"default\": true}}", BF_ERR_INVALID,
	    "params.$(id): \"$(id)\" is not a valid name"},
	{"presets", "{\"test\": {\"loops\": 0}}", BF_ERR_RANGE,
	    "presets.test.loops: 0 is out of range 1..1000000000"},
	{"presets", "{\"test\": {\"lopps\": 1}}", BF_ERR_INVALID,
	    "presets.test.lopps: names no parameter; parameters are " NAMES},
	{"presets", "{\"test\": {\"mode\": \"x\"}}", BF_ERR_INVALID,
	    "presets.test.mode: \"x\" is not one of a, b"},
	{"presets", "{\"test\": 5}", BF_ERR_INVALID, "presets.test: expected an object, got an integer"},
	{"presets", "{\"a b\": {}}", BF_ERR_INVALID, "presets.a b: \"a b\" is not a valid name"},
	{"metrics", "[]", BF_ERR_INVALID, "metrics: has 0 elements; at least 1 needed"},
	{"metrics", "{}", BF_ERR_INVALID, "metrics: expected an array, got an object"},
	{"metrics", "[5]", BF_ERR_INVALID, "metrics[0]: expected an object, got an integer"},
	{"metrics", "[{\"name\": \"wall_s\", \"better\": \"lower\", \"source\": \"wall_s\"},"
	    " {\"name\": \"wall_s\", \"better\": \"lower\", \"source\": \"user_s\"}]",
	    BF_ERR_INVALID, "metrics[1].name: \"wall_s\" is used by metrics[0] too"},
	{"metrics", "[{\"name\": \"w s\", \"better\": \"lower\", \"source\": \"wall_s\"}]",
	    BF_ERR_INVALID, "metrics[0].name: \"w s\" is not a valid name"},
	{"metrics", "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"stdin\"}]",
	    BF_ERR_INVALID, "metrics[0].source: \"stdin\" is not one of wall_s, user_s, sys_s, "
	    "maxrss_kb, stdout, stderr"},
	{"metrics", "[{\"name\": \"w\", \"better\": \"up\", \"source\": \"wall_s\"}]",
	    BF_ERR_INVALID, "metrics[0].better: \"up\" is not one of higher, lower"},
	{"metrics", "[{\"name\": \"w\", \"source\": \"wall_s\"}]",
	    BF_ERR_INVALID, "metrics[0].better: is required"},
	{"metrics", "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"stdout\"}]",
	    BF_ERR_INVALID, "metrics[0].regex: is required"},
	{"metrics", "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"stdout\","
	    " \"regex\": \"[0-9]+ ops\"}]", BF_ERR_INVALID, "metrics[0].regex: needs a capture group"},
	{"metrics", "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"stderr\","
	    " \"regex\": \"([0-9]+\"}]", BF_ERR_INVALID, "metrics[0].regex: does not compile: "},
	{"metrics", "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"wall_s\","
	    " \"regex\": \"(x)\"}]", BF_ERR_INVALID,
	    "metrics[0].regex: only for source stdout, stderr or file"},
	{"metrics", "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"wall_s\","
	    " \"unit\": 5}]", BF_ERR_INVALID, "metrics[0].unit: expected a string, got an integer"},
	{"metrics", "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"wall_s\","
	    " \"regx\": \"(x)\"}]", BF_ERR_INVALID, "metrics[0].regx: unknown key; expected one of"},
	/* expectations (issue 16) */
	{"expect", "{}", BF_ERR_INVALID, "expect: expected an array, got an object"},
	{"expect", "[]", BF_ERR_INVALID, "expect: has 0 elements; at least 1 needed"},
	{"expect", "[5]", BF_ERR_INVALID, "expect[0]: expected an object, got an integer"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0, \"why\": 1}]", BF_ERR_INVALID,
	    "expect[0].why: unknown key; expected one of when, metric, gt, ge, lt, le, eq"},
	{"expect", "[{\"gt\": 0}]", BF_ERR_INVALID, "expect[0].metric: is required"},
	{"expect", "[{\"metric\": \"a b\", \"gt\": 0}]", BF_ERR_INVALID,
	    "expect[0].metric: \"a b\" is not a valid name"},
	{"expect", "[{\"metric\": 7, \"gt\": 0}]", BF_ERR_INVALID,
	    "expect[0].metric: expected a string, got an integer"},
	{"expect", "[{\"metric\": \"thp_fault_alloc\", \"gt\": 0}]", BF_ERR_INVALID,
	    "expect[0].metric: \"thp_fault_alloc\" is no metric of the recipe, agent measure"},
	{"expect", "[{\"metric\": \"ops\"}]", BF_ERR_INVALID,
	    "expect[0]: needs exactly one of gt, ge, lt, le, eq; has 0"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0, \"lt\": 9}]", BF_ERR_INVALID,
	    "expect[0]: needs exactly one of gt, ge, lt, le, eq; has 2"},
	{"expect", "[{\"metric\": \"ops\", \"ge\": \"0\"}]", BF_ERR_INVALID,
	    "expect[0].ge: expected a number, got a string"},
	{"expect", "[{\"metric\": \"ops\", \"eq\": null}]", BF_ERR_INVALID,
	    "expect[0].eq: expected a number, got null"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0}, {\"metric\": \"ops\", \"gt\": 0,"
	    " \"when\": []}]", BF_ERR_INVALID, "expect[1].when: expected an object, got an array"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0, \"when\": {\"threads\": 2}}]",
	    BF_ERR_INVALID, "expect[0].when.threads: names neither a parameter of the recipe nor "
	    "a knob"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0, \"when\": {\"a b\": 2}}]",
	    BF_ERR_INVALID, "expect[0].when.a b: \"a b\" is not a valid name"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0, \"when\": {\"thp_enabled\": \"alwayz\"}}]",
	    BF_ERR_INVALID, "expect[0].when.thp_enabled: \"alwayz\" is not one of never, madvise, "
	    "always"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0, \"when\": {\"thp_enabled\": true}}]",
	    BF_ERR_INVALID, "expect[0].when.thp_enabled: expected a knob value (a string or an "
	    "integer), got a boolean"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0, \"when\": {\"mode\": \"x\"}}]",
	    BF_ERR_INVALID, "expect[0].when.mode: \"x\" is not one of a, b"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0, \"when\": {\"loops\": 0}}]",
	    BF_ERR_RANGE, "expect[0].when.loops: 0 is out of range 1..1000000000"},
	{"expect", "[{\"metric\": \"ops\", \"gt\": 0, \"when\": {\"mthp_3kB\": \"sometimes\"}}]",
	    BF_ERR_INVALID, "expect[0].when.mthp_3kB: \"sometimes\" is not one of"},
};

/* The base recipe with key replaced by val (or removed), as text. */
static char *
mutate(const char *key, const char *val)
{
	json_error_t e;
	json_t *doc = json_loads(base, 0, &e), *v;
	char *s;

	if (val == NULL) {
		json_object_del(doc, key);
	} else {
		v = json_loads(val, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
		if (v == NULL)
			fprintf(stderr, "bad test value %s: %s\n", val, e.text);
		json_object_set_new(doc, key, v);
	}
	s = json_dumps(doc, 0);
	json_decref(doc);
	return s;
}

static void
test_cases(void)
{
	struct recipe *r;
	struct bf_diag d;
	char *text;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		text = mutate(cases[i].key, cases[i].val);
		r = NULL;
		bf_diag_clear(&d);
		T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), cases[i].r);
		expect_msg(cases[i].val ? cases[i].val : cases[i].key, &d, cases[i].msg);
		T_CHECK(r == NULL);
		recipe_free(r);
		free(text);
	}
}

/* Documents generated at the caps: one past each is refused. */
static void
test_caps(void)
{
	struct recipe *r = NULL;
	struct bf_diag d;
	struct buf b;
	char *text;
	int i;

	buf_init(&b, 0);
	T_OK(buf_puts(&b, "[\"echo\""));
	for (i = 1; i < BF_MAX_ARGV; i++)
		T_OK(buf_puts(&b, ", \"x\""));
	T_OK(buf_puts(&b, "]"));
	text = mutate("command", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), 0);
	T_CHECK(r != NULL && r->ncommand == BF_MAX_ARGV);
	recipe_free(r);
	r = NULL;
	free(text);
	b.len--;
	T_OK(buf_puts(&b, ", \"x\"]"));
	text = mutate("command", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "command: has 257 elements; at most 256 allowed");
	free(text);

	buf_reset(&b);
	T_OK(buf_puts(&b, "{"));
	for (i = 0; i <= BF_MAX_PARAMS; i++)
		T_OK(buf_printf(&b, "%s\"p%d\": {\"type\": \"bool\", \"default\": true}", i ? "," : "", i));
	T_OK(buf_puts(&b, "}"));
	text = mutate("params", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "params: has 65 parameters; at most 64 allowed");
	free(text);

	buf_reset(&b);
	T_OK(buf_puts(&b, "["));
	for (i = 0; i <= BF_MAX_METRICS; i++)
		T_OK(buf_printf(&b, "%s{\"name\": \"m%d\", \"better\": \"lower\", \"source\": \"wall_s\"}",
		    i ? "," : "", i));
	T_OK(buf_puts(&b, "]"));
	text = mutate("metrics", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "metrics: has 33 elements; at most 32 allowed");
	free(text);

	/* a regex one byte over its cap */
	buf_reset(&b);
	T_OK(buf_puts(&b, "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"stdout\", \"regex\": \"("));
	for (i = 0; i < BF_MAX_REGEX - 1; i++)
		T_OK(buf_puts(&b, "x"));
	T_OK(buf_puts(&b, ")\"}]"));
	text = mutate("metrics", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "metrics[0].regex: is 513 bytes long; at most 512 allowed");
	free(text);

	/* an element over BF_MAX_ARG in the template itself */
	buf_reset(&b);
	T_OK(buf_puts(&b, "[\"echo\", \""));
	for (i = 0; i <= BF_MAX_ARG; i++)
		T_OK(buf_puts(&b, "y"));
	T_OK(buf_puts(&b, "\"]"));
	text = mutate("command", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "command[1]: is 8193 bytes long; at most 8192 allowed");
	free(text);
	buf_free(&b);
}

static void
test_malformed(void)
{
	struct recipe *r = NULL;
	struct bf_diag d;
	struct buf b;
	const char *text;
	size_t n;
	int i;

	/* every truncation of a good recipe fails cleanly, never half-loads */
	for (n = 0; n < sizeof(base) - 1; n += 7) {
		int rr = recipe_parse(base, n, &r, &d);

		t_checks++;
		if (rr != BF_ERR_PARSE) {
			t_fails++;
			fprintf(stderr, "truncated at %zu: %d (%s)\n", n, rr, d.msg);
		}
	}
	T_CHECK(r == NULL);
	text = "{\"name\": \"a\", \"name\": \"b\", \"command\": [\"x\"]}";
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_PARSE);
	T_CONTAINS(d.msg, "duplicate");
	T_EQ_INT(recipe_parse("[]", 2, &r, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "recipe: expected an object, got an array");
	T_EQ_INT(recipe_from_json(NULL, &r, &d), BF_ERR_INVALID);
	buf_init(&b, 0);
	T_OK(buf_puts(&b, "{\"name\": \"x\", \"description\": "));
	for (i = 0; i < 40; i++)
		T_OK(buf_puts(&b, "["));
	for (i = 0; i < 40; i++)
		T_OK(buf_puts(&b, "]"));
	T_OK(buf_puts(&b, "}"));
	T_EQ_INT(recipe_parse(b.data, b.len, &r, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "JSON nested deeper than 32 levels");
	buf_reset(&b);
	T_OK(buf_puts(&b, "{\"name\": \"x\", \"description\": \""));
	for (i = 0; i < BF_MAX_RECIPE_FILE; i += 8)
		T_OK(buf_puts(&b, "xxxxxxxx"));
	T_OK(buf_puts(&b, "\"}"));
	T_EQ_INT(recipe_parse(b.data, b.len, &r, &d), BF_ERR_TOOBIG);
	buf_free(&b);
}

static void
test_good(void)
{
	struct recipe *r = NULL, *r2 = NULL;
	struct bf_diag d;
	json_t *j;
	char names[256], *mtext;
	const char *text;

	T_EQ_INT(recipe_parse(base, strlen(base), &r, &d), 0);
	if (r == NULL)
		return;
	T_EQ_STR(r->name, "cpu-loop");
	T_EQ_STR(r->description, "a loop");
	T_EQ_INT(r->nparams, 5);
	T_EQ_STR(recipe_param_names(r, names, sizeof(names)), NAMES);
	T_CHECK(recipe_param(r, "loops") != NULL && recipe_param(r, "loops")->type == RECIPE_P_INT);
	T_EQ_INT(recipe_param(r, "loops")->imin, 1);
	T_EQ_INT(recipe_param(r, "loops")->imax, 1000000000);
	T_EQ_INT(json_integer_value(recipe_param(r, "loops")->def), 1000000);
	T_EQ_INT(recipe_param(r, "mode")->nvalues, 2);
	T_EQ_STR(recipe_param(r, "mode")->values[1], "b");
	T_EQ_INT(recipe_param(r, "msg")->max_len, 256);
	T_CHECK(recipe_param(r, "nope") == NULL);
	T_EQ_INT(r->ncommand, 5);
	T_EQ_STR(r->command[0], "@agent");
	T_EQ_INT(r->timeout_s, 60);
	T_EQ_INT(r->nmetrics, 2);
	T_EQ_STR(r->metrics[1].name, "ops");
	T_EQ_INT(r->metrics[1].higher_better, 1);
	T_EQ_STR(r->metrics[1].regex, "([0-9.]+) ops/s");
	T_CHECK(r->metrics[0].regex == NULL);
	T_CHECK(json_object_get(r->presets, "test") != NULL);

	/* to_json and back gives the same recipe */
	j = recipe_to_json(r);
	T_CHECK(j != NULL);
	T_EQ_INT(recipe_from_json(j, &r2, &d), 0);
	if (r2 != NULL) {
		T_EQ_INT(r2->nparams, 5);
		T_EQ_INT(r2->nmetrics, 2);
		T_EQ_INT(r2->timeout_s, 60);
		T_EQ_INT(recipe_param(r2, "loops")->imax, 1000000000);
		T_CHECK(json_equal(recipe_param(r2, "ratio")->def, recipe_param(r, "ratio")->def));
	}
	recipe_free(r2);
	json_decref(j);
	recipe_free(r);
	recipe_free(NULL);

	/* defaults: no metrics gives wall_s; no timeout gives 600; no params */
	r = NULL;
	text = "{\"name\": \"x\", \"command\": [\"true\"]}";
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), 0);
	if (r != NULL) {
		T_EQ_INT(r->timeout_s, 600);
		T_EQ_INT(r->nmetrics, 1);
		T_EQ_STR(r->metrics[0].name, "wall_s");
		T_EQ_STR(r->metrics[0].unit, "s");
		T_EQ_STR(r->metrics[0].source, "wall_s");
		T_EQ_INT(r->metrics[0].higher_better, 0);
		T_EQ_INT(r->nparams, 0);
		T_EQ_STR(recipe_param_names(r, names, sizeof(names)), "(none)");
		T_EQ_INT(json_object_size(r->presets), 0);
	}
	recipe_free(r);
	mtext = mutate("command", "[\"echo\", \"{nope}\"]");
	T_EQ_INT(recipe_parse(mtext, strlen(mtext), &r, &d), BF_ERR_INVALID);
	free(mtext);
	text = "{\"name\": \"x\", \"command\": [\"{p}\"]}";
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "command[0]: slot {p} names no parameter; parameters are (none)");
}

static const char render_recipe[] =
    "{\"name\": \"echo\", \"params\": " PARAMS ","
    " \"command\": [\"@agent\", \"work\", \"echo\", \"{msg}\", \"--loops={loops}\","
    " \"{{loops}}\", \"{ratio}\", \"{flag}\", \"{mode}{mode}\", \"a}}b{{c\", \"\"]}";

static void
test_render(void)
{
	static const char *const hostile[] = {
		"; touch /tmp/pwned", "$(id)", "`id`", "a\nb", "x y  z", "'\"\\", "*", "a -rf /",
	};
	struct recipe *r = NULL;
	struct bf_diag d;
	json_t *vals;
	char **argv = NULL, big[4097];
	const char *text;
	size_t argc = 0, i;

	T_EQ_INT(recipe_parse(render_recipe, strlen(render_recipe), &r, &d), 0);
	if (r == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		return;
	}
	vals = json_pack("{s:i, s:f, s:s, s:s, s:b}", "loops", 1000, "ratio", 0.25, "mode", "b",
	    "msg", "hi", "flag", 1);
	T_EQ_INT(recipe_render_argv(r, vals, &argv, &argc, &d), 0);
	T_EQ_INT(argc, 11);
	if (argv != NULL) {
		T_EQ_STR(argv[0], "@agent");
		T_EQ_STR(argv[3], "hi");
		T_EQ_STR(argv[4], "--loops=1000");
		T_EQ_STR(argv[5], "{loops}");
		T_EQ_STR(argv[6], "0.25");
		T_EQ_STR(argv[7], "true");
		T_EQ_STR(argv[8], "bb");
		T_EQ_STR(argv[9], "a}b{c");
		T_EQ_STR(argv[10], "");
		T_CHECK(argv[11] == NULL);
	}
	recipe_argv_free(argv);
	argv = NULL;

	/* an integral real renders as an integer */
	json_object_set_new(vals, "ratio", json_real(1.0));
	T_EQ_INT(recipe_render_argv(r, vals, &argv, &argc, &d), 0);
	if (argv != NULL)
		T_EQ_STR(argv[6], "1");
	recipe_argv_free(argv);
	argv = NULL;

	/* each hostile value is one argv element, byte for byte */
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		json_object_set_new(vals, "msg", json_string(hostile[i]));
		T_EQ_INT(recipe_render_argv(r, vals, &argv, &argc, &d), 0);
		T_EQ_INT(argc, 11);
		if (argv != NULL) {
			T_EQ_STR(argv[3], hostile[i]);
			T_EQ_STR(argv[4], "--loops=1000");
			T_CHECK(argv[11] == NULL);
		}
		recipe_argv_free(argv);
		argv = NULL;
	}

	/* {msg} is a whole element: neither an option nor empty gets there */
	json_object_set_new(vals, "msg", json_string("-rf /"));
	T_EQ_INT(recipe_render_argv(r, vals, &argv, &argc, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "values.msg: \"-rf /\" begins with \"-\"");
	T_CHECK(argv == NULL);
	json_object_set_new(vals, "msg", json_string(""));
	T_EQ_INT(recipe_render_argv(r, vals, &argv, &argc, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "values.msg: is empty");
	T_CHECK(argv == NULL);
	json_object_set_new(vals, "msg", json_string("ok"));

	/* a value that fails its check is refused at render too */
	json_object_set_new(vals, "loops", json_string("; touch /tmp/pwned"));
	T_EQ_INT(recipe_render_argv(r, vals, &argv, &argc, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "values.loops: expected an integer, got a string");
	T_CHECK(argv == NULL);
	json_object_set_new(vals, "loops", json_integer(5));
	json_object_set_new(vals, "msg", json_stringn("a\0b", 3));
	T_EQ_INT(recipe_render_argv(r, vals, &argv, &argc, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "values.msg: contains a NUL byte");
	json_object_set_new(vals, "msg", json_string("ok"));
	json_object_del(vals, "loops");
	T_EQ_INT(recipe_render_argv(r, vals, &argv, &argc, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "command[4]: no value for parameter loops");
	T_EQ_INT(recipe_render_argv(r, NULL, &argv, &argc, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "command[3]: no value for parameter msg");
	json_decref(vals);
	recipe_free(r);

	/* a rendered element over BF_MAX_ARG: 3 x 4096 bytes in one element */
	r = NULL;
	text = "{\"name\": \"big\", \"params\": {\"m\": {\"type\": \"string\", "
	    "\"default\": \"x\"}}, \"command\": [\"echo\", \"{m}{m}\", \"{m}{m}{m}\"]}";
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), 0);
	if (r == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		return;
	}
	memset(big, 'z', 4096);
	big[4096] = '\0';
	vals = json_pack("{s:s}", "m", big);
	T_EQ_INT(recipe_render_argv(r, vals, &argv, &argc, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "command[2]: rendered element is over 8192 bytes");
	T_EQ_STR(d.field, "command[2]");
	T_CHECK(argv == NULL);
	json_decref(vals);
	recipe_free(r);
	recipe_argv_free(NULL);
}

static void
test_file(void)
{
	char path[] = "/tmp/bf-recipe-XXXXXX";
	struct recipe *r = NULL;
	struct bf_diag d;
	FILE *f;
	int fd, i;

	fd = mkstemp(path);
	T_CHECK(fd != -1);
	f = fdopen(fd, "w");
	if (f == NULL)
		return;
	fputs(base, f);
	fclose(f);
	T_EQ_INT(recipe_load_file(path, &r, &d), 0);
	T_CHECK(r != NULL && strcmp(r->name, "cpu-loop") == 0);
	recipe_free(r);
	r = NULL;

	f = fopen(path, "w");
	fputs("{\"name\": \"x\", \"command\": [\"{y}\"]}", f);
	fclose(f);
	T_EQ_INT(recipe_load_file(path, &r, &d), BF_ERR_INVALID);
	T_CHECK(strncmp(d.msg, path, strlen(path)) == 0);
	T_CONTAINS(d.msg, ": command[0]: slot {y} names no parameter");
	T_EQ_STR(d.field, "command[0]");

	/* one byte over the file cap, though valid JSON */
	f = fopen(path, "w");
	fputs("{\"name\": \"x\", \"command\": [\"true\"]}", f);
	for (i = 0; i < BF_MAX_RECIPE_FILE; i += 4)
		fputs("    ", f);
	fclose(f);
	T_EQ_INT(recipe_load_file(path, &r, &d), BF_ERR_TOOBIG);
	T_CONTAINS(d.msg, "recipe file is over 262144 bytes");
	unlink(path);
	T_EQ_INT(recipe_load_file(path, &r, &d), BF_ERR_NOTFOUND);
	T_EQ_INT(recipe_load_file("/", &r, &d), BF_ERR_IO);
	T_CHECK(r == NULL);
}

/* setup, pre_iteration, services and the csv/json metric rules: loaded,
 * refused when malformed, and rendered into the agent's step format. */
static const char svc_text[] =
    "{\"name\": \"redis\", \"params\": {\"port\": {\"type\": \"int\", \"min\": 1024, "
    "\"max\": 65535, \"default\": 16379}, \"dir\": {\"type\": \"string\", \"default\": \"/tmp/x\"}},"
    " \"setup\": [[\"mkdir\", \"-p\", \"{dir}\"]], \"pre_iteration\": [[\"rm\", \"-f\", \"{dir}/a\"]],"
    " \"services\": [{\"argv\": [\"redis-server\", \"--port\", \"{port}\", \"--save\", \"\"],"
    " \"ready\": {\"tcp\": \"127.0.0.1:{port}\", \"timeout_s\": 5}}],"
    " \"command\": [\"redis-benchmark\", \"-p\", \"{port}\", \"--csv\"],"
    " \"metrics\": [{\"name\": \"get_rps\", \"unit\": \"ops/s\", \"better\": \"higher\","
    " \"source\": \"stdout\", \"csv\": {\"row_match\": \"GET\", \"column\": \"rps\"}},"
    " {\"name\": \"j\", \"better\": \"lower\", \"source\": \"stdout\", \"json\": \"a.b\"},"
    " {\"name\": \"wall_s\", \"better\": \"lower\", \"source\": \"wall_s\"}]}";

static void
test_step_parts(void)
{
	static const struct {
		const char *from, *to, *msg;
	} bad[] = {
		{ "\"setup\": [[", "\"setup\": [[{}, ", "setup[0][0]: expected a string" },
		{ "\"setup\": [[\"mkdir\"", "\"setup\": [[\"{nope}\"", "setup[0][0]: slot {nope}" },
		{ "\"pre_iteration\": [[", "\"pre_iteration\": [\"x\", [", "pre_iteration[0]: expected an array" },
		{ "\"tcp\": \"127.0.0.1:{port}\"", "\"tcp\": \"127.0.0.1:{prt}\"",
		  "services[0].ready.tcp: slot {prt}" },
		{ ", \"timeout_s\": 5}", ", \"timeout_s\": 0}", "services[0].ready.timeout_s: 0 is out of range" },
		{ "\"ready\": {", "\"ready\": {\"udp\": 1, ", "services[0].ready.udp: unknown key" },
		{ "\"csv\": {\"row_match\": \"GET\", ", "\"csv\": {", "metrics[0].csv.row_match: is required" },
		{ "\"json\": \"a.b\"", "\"json\": \"a..b\"", "metrics[1].json: \"a..b\" is not a path" },
		{ "\"json\": \"a.b\"", "\"json\": \"a.b\", \"regex\": \"(x)\"", "metrics[1]: give one of" },
		{ "\"source\": \"wall_s\"}", "\"source\": \"wall_s\", \"json\": \"a\"}",
		  "metrics[2].regex: only for source stdout, stderr or file" },
	};
	struct recipe *r = NULL;
	struct bf_diag d;
	json_t *vals, *step;
	char *txt, *dump;
	size_t i;

	T_EQ_INT(recipe_parse(svc_text, strlen(svc_text), &r, &d), 0);
	if (r == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		return;
	}
	T_EQ_INT(r->nsetup, 1);
	T_EQ_INT(r->npre, 1);
	T_EQ_INT(r->nservices, 1);
	T_EQ_STR(r->metrics[0].csv_column, "rps");
	T_CHECK(recipe_metric_from_output(&r->metrics[1]));
	T_CHECK(!recipe_metric_from_output(&r->metrics[2]));
	vals = json_pack("{s:i,s:s}", "port", 20000, "dir", "/tmp/a b;$(id)");
	step = json_object();
	T_EQ_INT(recipe_step_json(r, vals, PATH_DEFAULT_ROOT, step, &d), 0);
	dump = json_dumps(step, JSON_COMPACT | JSON_SORT_KEYS);
	T_EQ_STR(dump, "{\"metrics\":[{\"csv\":{\"column\":\"rps\",\"row_match\":\"GET\"},"
	    "\"name\":\"get_rps\",\"source\":\"stdout\"},{\"json\":\"a.b\",\"name\":\"j\","
	    "\"source\":\"stdout\"}],\"pre_iteration\":[[\"rm\",\"-f\",\"/tmp/a b;$(id)/a\"]],"
	    "\"services\":[{\"argv\":[\"redis-server\",\"--port\",\"20000\",\"--save\",\"\"],"
	    "\"ready\":{\"tcp\":\"127.0.0.1:20000\",\"timeout_s\":5}}],"
	    "\"setup\":[[\"mkdir\",\"-p\",\"/tmp/a b;$(id)\"]]}");
	free(dump);
	json_decref(step);
	json_decref(vals);
	recipe_free(r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *at = strstr(svc_text, bad[i].from);
		size_t n;

		T_CHECK(at != NULL);
		if (at == NULL)
			continue;
		n = strlen(svc_text) + strlen(bad[i].to) + 1;
		txt = malloc(n);
		snprintf(txt, n, "%.*s%s%s", (int)(at - svc_text), svc_text, bad[i].to,
		    at + strlen(bad[i].from));
		r = NULL;
		T_CHECK(recipe_parse(txt, strlen(txt), &r, &d) != 0);
		T_CONTAINS(d.msg, bad[i].msg);
		recipe_free(r);
		free(txt);
	}
}

/* A good "expect": every comparison, a "when" of a knob and a parameter,
 * kept in the recipe's JSON as written; the caps on entries and keys. */
static void
test_expect(void)
{
	static const char ex[] = "[{\"when\": {\"thp_enabled\": \"always\", \"mode\": \"b\","
	    " \"randomize_va_space\": 0}, \"metric\": \"vmstat.thp_fault_alloc\", \"gt\": 0},"
	    " {\"metric\": \"ops\", \"ge\": 1.5}, {\"metric\": \"wall_s\", \"lt\": 10},"
	    " {\"metric\": \"maxrss_kb\", \"le\": 1e6},"
	    " {\"metric\": \"hugepages-64kB.anon_fault_fallback\", \"eq\": 0,"
	    " \"when\": {\"mthp_64kB\": \"always\"}}]";
	static const struct {
		enum recipe_expect_op op;
		double value, mean;
		int holds;
	} cmp[] = {
		{ RECIPE_EXPECT_GT, 0, 0, 0 }, { RECIPE_EXPECT_GT, 0, 1e-9, 1 },
		{ RECIPE_EXPECT_GE, 1.5, 1.5, 1 }, { RECIPE_EXPECT_GE, 1.5, 1.4, 0 },
		{ RECIPE_EXPECT_LT, 10, 10, 0 }, { RECIPE_EXPECT_LT, 10, -3, 1 },
		{ RECIPE_EXPECT_LE, 10, 10, 1 }, { RECIPE_EXPECT_LE, 10, 10.5, 0 },
		{ RECIPE_EXPECT_EQ, 0, 0, 1 }, { RECIPE_EXPECT_EQ, 0, 1, 0 },
		{ RECIPE_EXPECT_GT, 0, NAN, 0 }, { RECIPE_EXPECT_LE, 0, NAN, 0 },
	};
	struct recipe_expect e;
	struct recipe *r = NULL;
	struct bf_diag d;
	struct buf b;
	json_t *j, *want;
	char *text;
	size_t i;

	text = mutate("expect", ex);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), 0);
	free(text);
	T_CHECK(r != NULL && r->nexpect == 5);
	if (r != NULL && r->nexpect == 5) {
		T_EQ_STR(r->expect[0].metric, "vmstat.thp_fault_alloc");
		T_EQ_INT(r->expect[0].op, RECIPE_EXPECT_GT);
		T_EQ_INT(json_object_size(r->expect[0].when), 3);
		T_EQ_INT(r->expect[1].op, RECIPE_EXPECT_GE);
		T_NEAR(r->expect[1].value, 1.5, 0);
		T_EQ_INT(json_object_size(r->expect[1].when), 0);	/* {} when absent */
		T_EQ_INT(r->expect[2].op, RECIPE_EXPECT_LT);
		T_EQ_INT(r->expect[3].op, RECIPE_EXPECT_LE);
		T_NEAR(r->expect[3].value, 1e6, 0);
		T_EQ_INT(r->expect[4].op, RECIPE_EXPECT_EQ);
		j = recipe_to_json(r);
		want = json_loads(ex, 0, NULL);
		T_CHECK(json_equal(json_object_get(j, "expect"), want));
		json_decref(j);
		json_decref(want);
	}
	recipe_free(r);
	T_EQ_STR(recipe_expect_op_str(RECIPE_EXPECT_GT), ">");
	T_EQ_STR(recipe_expect_op_str(RECIPE_EXPECT_LE), "<=");
	T_EQ_STR(recipe_expect_op_str(RECIPE_EXPECT_EQ), "==");
	memset(&e, 0, sizeof(e));
	for (i = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++) {
		e.op = cmp[i].op;
		e.value = cmp[i].value;
		T_EQ_INT(recipe_expect_holds(&e, cmp[i].mean), cmp[i].holds);
	}
	/* a recipe without "expect" has none, and its JSON says nothing */
	r = NULL;
	T_EQ_INT(recipe_parse(base, strlen(base), &r, &d), 0);
	T_CHECK(r != NULL && r->nexpect == 0);
	j = r != NULL ? recipe_to_json(r) : NULL;
	T_CHECK(j != NULL && json_object_get(j, "expect") == NULL);
	json_decref(j);
	recipe_free(r);
	/* caps: BF_MAX_EXPECT entries, BF_MAX_EXPECT_WHEN keys of "when" */
	buf_init(&b, 0);
	T_OK(buf_puts(&b, "["));
	for (i = 0; i < BF_MAX_EXPECT; i++)
		T_OK(buf_printf(&b, "%s{\"metric\": \"ops\", \"gt\": %zu}", i ? "," : "", i));
	T_OK(buf_puts(&b, "]"));
	text = mutate("expect", b.data);
	r = NULL;
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), 0);
	recipe_free(r);
	free(text);
	b.data[b.len - 1] = ',';
	T_OK(buf_puts(&b, "{\"metric\": \"ops\", \"gt\": 0}]"));
	text = mutate("expect", b.data);
	r = NULL;
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	expect_msg("expect past the cap", &d, "expect: has 33 elements; at most 32 allowed");
	T_CHECK(r == NULL);
	free(text);
	buf_reset(&b);
	T_OK(buf_puts(&b, "[{\"metric\": \"ops\", \"gt\": 0, \"when\": {"));
	for (i = 0; i <= BF_MAX_EXPECT_WHEN; i++)
		T_OK(buf_printf(&b, "%s\"mthp_%zukB\": \"always\"", i ? "," : "", (size_t)4 << i));
	T_OK(buf_puts(&b, "}}]"));
	text = mutate("expect", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	expect_msg("when past the cap", &d, "expect[0].when: has 17 keys; at most 16");
	T_CHECK(r == NULL);
	free(text);
	buf_free(&b);
}

int
main(void)
{
	test_cases();
	test_caps();
	test_malformed();
	test_good();
	test_render();
	test_file();
	test_step_parts();
	test_expect();
	return t_done();
}
