/*
 * test_recipe.c: recipe parsing and validation (table driven: one key of a
 * good recipe replaced by a bad value per row), value checks, and argv
 * rendering with hostile values.
 */
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

#define PARAMS \
	"{\"loops\": {\"type\": \"int\", \"min\": 1, \"max\": 1000000000, \"default\": 1000000}," \
	" \"ratio\": {\"type\": \"number\", \"min\": 0, \"max\": 1, \"default\": 0.5}," \
	" \"mode\": {\"type\": \"enum\", \"values\": [\"a\", \"b\"], \"default\": \"a\"}," \
	" \"msg\": {\"type\": \"string\", \"max_len\": 256, \"default\": \"hi\"}," \
	" \"flag\": {\"type\": \"bool\", \"default\": false}}"
#define NAMES "loops, ratio, mode, msg, flag"

static const char base[] =
    "{\"name\": \"cpu-loop\", \"description\": \"a loop\","
    " \"params\": " PARAMS ","
    " \"presets\": {\"test\": {\"loops\": 1000}, \"paper\": {\"loops\": 100000000}},"
    " \"command\": [\"@agent\", \"work\", \"cpu\", \"--loops\", \"{loops}\"],"
    " \"timeout_s\": 60,"
    " \"metrics\": [{\"name\": \"wall_s\", \"unit\": \"s\", \"better\": \"lower\","
    " \"source\": \"wall_s\"}, {\"name\": \"ops\", \"unit\": \"ops/s\", \"better\": \"higher\","
    " \"source\": \"stdout\", \"regex\": \"([0-9.]+) ops/s\"}]}";

static void
expect_msg(const char *what, const struct bf_diag *d, const char *want)
{
	t_checks++;
	if (strncmp(d->msg, want, strlen(want)) != 0) {
		t_fails++;
		fprintf(stderr, "%s: message \"%s\", expected it to start with \"%s\"\n", what,
		    d->msg, want);
	}
}

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
	    "metrics[0].regex: only for source stdout or stderr"},
	{"metrics", "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"wall_s\","
	    " \"unit\": 5}]", BF_ERR_INVALID, "metrics[0].unit: expected a string, got an integer"},
	{"metrics", "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"wall_s\","
	    " \"regx\": \"(x)\"}]", BF_ERR_INVALID, "metrics[0].regx: unknown key; expected one of"},
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
	buf_puts(&b, "[\"echo\"");
	for (i = 1; i < BF_MAX_ARGV; i++)
		buf_puts(&b, ", \"x\"");
	buf_puts(&b, "]");
	text = mutate("command", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), 0);
	T_CHECK(r != NULL && r->ncommand == BF_MAX_ARGV);
	recipe_free(r);
	r = NULL;
	free(text);
	b.len--;
	buf_puts(&b, ", \"x\"]");
	text = mutate("command", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "command: has 257 elements; at most 256 allowed");
	free(text);

	buf_reset(&b);
	buf_puts(&b, "{");
	for (i = 0; i <= BF_MAX_PARAMS; i++)
		buf_printf(&b, "%s\"p%d\": {\"type\": \"bool\", \"default\": true}", i ? "," : "", i);
	buf_puts(&b, "}");
	text = mutate("params", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "params: has 65 parameters; at most 64 allowed");
	free(text);

	buf_reset(&b);
	buf_puts(&b, "[");
	for (i = 0; i <= BF_MAX_METRICS; i++)
		buf_printf(&b, "%s{\"name\": \"m%d\", \"better\": \"lower\", \"source\": \"wall_s\"}",
		    i ? "," : "", i);
	buf_puts(&b, "]");
	text = mutate("metrics", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "metrics: has 33 elements; at most 32 allowed");
	free(text);

	/* a regex one byte over its cap */
	buf_reset(&b);
	buf_puts(&b, "[{\"name\": \"w\", \"better\": \"lower\", \"source\": \"stdout\", \"regex\": \"(");
	for (i = 0; i < BF_MAX_REGEX - 1; i++)
		buf_puts(&b, "x");
	buf_puts(&b, ")\"}]");
	text = mutate("metrics", b.data);
	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "metrics[0].regex: is 513 bytes long; at most 512 allowed");
	free(text);

	/* an element over BF_MAX_ARG in the template itself */
	buf_reset(&b);
	buf_puts(&b, "[\"echo\", \"");
	for (i = 0; i <= BF_MAX_ARG; i++)
		buf_puts(&b, "y");
	buf_puts(&b, "\"]");
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
	buf_puts(&b, "{\"name\": \"x\", \"description\": ");
	for (i = 0; i < 40; i++)
		buf_puts(&b, "[");
	for (i = 0; i < 40; i++)
		buf_puts(&b, "]");
	buf_puts(&b, "}");
	T_EQ_INT(recipe_parse(b.data, b.len, &r, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "JSON nested deeper than 32 levels");
	buf_reset(&b);
	buf_puts(&b, "{\"name\": \"x\", \"description\": \"");
	for (i = 0; i < BF_MAX_RECIPE_FILE; i += 8)
		buf_puts(&b, "xxxxxxxx");
	buf_puts(&b, "\"}");
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

static void
test_check_value(void)
{
	static const struct {
		const char *param;
		const char *val;
		int r;
		const char *msg;
	} vc[] = {
		{"loops", "5", 0, ""},
		{"loops", "1.5", BF_ERR_INVALID, "matrix.x[2]: expected an integer, got 1.5"},
		{"loops", "\"5\"", BF_ERR_INVALID, "matrix.x[2]: expected an integer, got a string"},
		{"loops", "0", BF_ERR_RANGE, "matrix.x[2]: 0 is out of range 1..1000000000"},
		{"loops", "1000000001", BF_ERR_RANGE, "matrix.x[2]: 1000000001 is out of range"},
		{"loops", "true", BF_ERR_INVALID, "matrix.x[2]: expected an integer, got a boolean"},
		{"loops", "null", BF_ERR_INVALID, "matrix.x[2]: expected an integer, got null"},
		{"loops", "\"; touch /tmp/pwned\"", BF_ERR_INVALID, "matrix.x[2]: expected an integer"},
		{"ratio", "1", 0, ""},
		{"ratio", "0.25", 0, ""},
		{"ratio", "2", BF_ERR_RANGE, "matrix.x[2]: 2 is out of range 0..1"},
		{"ratio", "-0.5", BF_ERR_RANGE, "matrix.x[2]: -0.5 is out of range 0..1"},
		{"ratio", "\"0.5\"", BF_ERR_INVALID, "matrix.x[2]: expected a number, got a string"},
		{"mode", "\"a\"", 0, ""},
		{"mode", "\"x\"", BF_ERR_INVALID, "matrix.x[2]: \"x\" is not one of a, b"},
		{"mode", "\"\"", BF_ERR_INVALID, "matrix.x[2]: \"\" is not one of a, b"},
		{"mode", "\"a\\u0000\"", BF_ERR_INVALID, "matrix.x[2]: \"a\\u0000\" is not one of a, b"},
		{"mode", "\"a\\n\"", BF_ERR_INVALID, "matrix.x[2]: \"a\\n\" is not one of a, b"},
		{"mode", "1", BF_ERR_INVALID, "matrix.x[2]: expected a string, got an integer"},
		{"mode", "[\"a\"]", BF_ERR_INVALID, "matrix.x[2]: expected a string, got an array"},
		{"flag", "true", 0, ""},
		{"flag", "1", BF_ERR_INVALID, "matrix.x[2]: expected true or false, got an integer"},
		{"flag", "\"true\"", BF_ERR_INVALID, "matrix.x[2]: expected true or false, got a string"},
		{"msg", "\"\"", 0, ""},
		{"msg", "\"; touch /tmp/pwned\"", 0, ""},
		{"msg", "\"$(id)\"", 0, ""},
		{"msg", "\"a\\nb\"", 0, ""},
		{"msg", "\"a\\u0000b\"", BF_ERR_INVALID, "matrix.x[2]: contains a NUL byte"},
		{"msg", "5", BF_ERR_INVALID, "matrix.x[2]: expected a string, got an integer"},
		{"msg", "{}", BF_ERR_INVALID, "matrix.x[2]: expected a string, got an object"},
	};
	struct recipe *r = NULL;
	struct bf_diag d;
	json_error_t e;
	char longs[258];
	json_t *v;
	size_t i;

	T_EQ_INT(recipe_parse(base, strlen(base), &r, &d), 0);
	if (r == NULL)
		return;
	for (i = 0; i < sizeof(vc) / sizeof(vc[0]); i++) {
		v = json_loads(vc[i].val, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
		T_CHECK(v != NULL);
		bf_diag_clear(&d);
		T_EQ_INT(recipe_check_value(recipe_param(r, vc[i].param), v, NULL, "matrix.x[2]",
		    &d),
		    vc[i].r);
		expect_msg(vc[i].val, &d, vc[i].msg);
		json_decref(v);
	}
	memset(longs, 'q', 257);
	longs[257] = '\0';
	v = json_string(longs);
	T_EQ_INT(recipe_check_value(recipe_param(r, "msg"), v, NULL, "params.msg", &d),
	    BF_ERR_TOOBIG);
	T_EQ_STR(d.msg, "params.msg: is 257 bytes long; at most 256 allowed");
	json_decref(v);
	longs[256] = '\0';
	v = json_string(longs);
	T_EQ_INT(recipe_check_value(recipe_param(r, "msg"), v, NULL, "params.msg", &d), 0);
	json_decref(v);
	recipe_free(r);
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
		  "metrics[2].regex: only for source stdout or stderr" },
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

/* Parse text as a recipe; NULL (with the reason printed) when it fails. */
static struct recipe *
parse_ok(const char *text)
{
	struct recipe *r = NULL;
	struct bf_diag d;

	if (recipe_parse(text, strlen(text), &r, &d) != 0) {
		fprintf(stderr, "recipe %s: %s\n", text, d.msg);
		t_checks++;
		t_fails++;
		return NULL;
	}
	return r;
}

/* text must not load; its message must contain want. */
static void
parse_bad(const char *text, const char *want)
{
	struct recipe *r = NULL;
	struct bf_diag d;

	bf_diag_clear(&d);
	T_CHECK(recipe_parse(text, strlen(text), &r, &d) != 0);
	T_CONTAINS(d.msg, want);
	recipe_free(r);
}

/* Check value (JSON text) against param name of r; returns the code, d set. */
static int
check(const struct recipe *r, const char *name, const char *val, const char *root,
    struct bf_diag *d)
{
	json_error_t e;
	json_t *v;
	int rc;

	if ((v = json_loads(val, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e)) == NULL) {
		fprintf(stderr, "bad test value %s\n", val);
		return 99;
	}
	bf_diag_clear(d);
	rc = recipe_check_value(recipe_param(r, name), v, root, "params.x", d);
	json_decref(v);
	return rc;
}

/* "pattern": the whole value must match; the anchors cannot be escaped. */
static void
test_pattern(void)
{
	static const struct {
		const char *val;
		int r;
	} vals[] = {
		{"\"abc\"", 0},
		{"\"abc;rm\"", BF_ERR_INVALID},		/* a prefix matches: not enough */
		{"\"rm;abc\"", BF_ERR_INVALID},		/* a suffix matches: not enough */
		{"\"ABC\"", BF_ERR_INVALID},
		{"\"\"", BF_ERR_INVALID},
		{"\"a\\nb\"", BF_ERR_INVALID},
	};
	static const struct {
		const char *pattern;
		const char *msg;
	} bad[] = {
		{"a)|(b", "params.t.pattern: has unbalanced parentheses"},
		{"a)|b", "params.t.pattern: has unbalanced parentheses"},
		{"(a", "params.t.pattern: has unbalanced parentheses"},
		{"[a-z", "params.t.pattern: has unbalanced parentheses"},
		{"", "params.t.pattern: must not be empty"},
		{"a++", "params.t.pattern: stacked repetition operators"},
		{"(a{100}){100}", "params.t.pattern: its {m,n} repetitions multiply past 1000"},
		{"a{1", "params.t.pattern: does not compile"},
	};
	char text[512];
	struct recipe *r;
	struct bf_diag d;
	size_t i;

	r = parse_ok("{\"name\": \"p\", \"params\": {\"t\": {\"type\": \"string\","
	    " \"pattern\": \"[a-z]+\", \"default\": \"abc\"}}, \"command\": [\"make\", \"{t}\"]}");
	if (r == NULL)
		return;
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		T_EQ_INT(check(r, "t", vals[i].val, NULL, &d), vals[i].r);
		if (vals[i].r != 0)
			T_CONTAINS(d.msg, "does not match the pattern ^([a-z]+)$");
	}
	T_EQ_INT(check(r, "t", "\"abc;rm\"", NULL, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "params.x: \"abc;rm\" does not match the pattern ^([a-z]+)$");
	recipe_free(r);
	/* a default outside its own pattern is a recipe error */
	parse_bad("{\"name\": \"p\", \"params\": {\"t\": {\"type\": \"string\","
	    " \"pattern\": \"[a-z]+\", \"default\": \"A\"}}, \"command\": [\"x\"]}",
	    "params.t.default: \"A\" does not match the pattern");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"name\": \"p\", \"params\": {\"t\": {\"type\":"
		    " \"string\", \"pattern\": \"%s\", \"default\": \"a\"}}, \"command\": [\"x\"]}",
		    bad[i].pattern);
		r = NULL;
		T_CHECK(recipe_parse(text, strlen(text), &r, &d) != 0);
		T_CONTAINS(d.msg, bad[i].msg);
		recipe_free(r);
	}
	/* brackets and classes may hold parentheses and brackets of their own */
	r = parse_ok("{\"name\": \"p\", \"params\": {\"t\": {\"type\": \"string\","
	    " \"pattern\": \"[]()[:alpha:]]+|x\\\\)\", \"default\": \"a(b)]\"}},"
	    " \"command\": [\"x\", \"{t}\"]}");
	if (r != NULL) {
		T_EQ_INT(check(r, "t", "\"x)\"", NULL, &d), 0);
		T_EQ_INT(check(r, "t", "\"ab)(\"", NULL, &d), 0);
		T_EQ_INT(check(r, "t", "\"ab x)\"", NULL, &d), BF_ERR_INVALID);
	}
	recipe_free(r);
	/* the alternation stays inside the anchors: ^(a|b)$, not ^a|b$ */
	r = parse_ok("{\"name\": \"p\", \"params\": {\"t\": {\"type\": \"string\","
	    " \"pattern\": \"a|b\", \"default\": \"a\"}}, \"command\": [\"x\", \"{t}\"]}");
	if (r != NULL) {
		T_EQ_INT(check(r, "t", "\"b\"", NULL, &d), 0);
		T_EQ_INT(check(r, "t", "\"a; rm -rf /\"", NULL, &d), BF_ERR_INVALID);
		T_EQ_INT(check(r, "t", "\"rm -rf /; b\"", NULL, &d), BF_ERR_INVALID);
	}
	recipe_free(r);
}

/* A value that begins an argv element must not begin with '-'. */
static void
test_leading_dash(void)
{
	static const char text[] =
	    "{\"name\": \"l\", \"params\": {"
	    " \"target\": {\"type\": \"string\", \"default\": \"all\"},"
	    " \"opt\": {\"type\": \"string\", \"default\": \"-O2\", \"option\": true},"
	    " \"inner\": {\"type\": \"string\", \"default\": \"x\"},"
	    " \"a\": {\"type\": \"string\", \"default\": \"\", \"pattern\": \"[a-z-]*\"},"
	    " \"b\": {\"type\": \"string\", \"default\": \"b\"},"
	    " \"n\": {\"type\": \"int\", \"min\": -10, \"max\": 10, \"default\": 1},"
	    " \"m\": {\"type\": \"int\", \"min\": -10, \"max\": 10, \"default\": 1},"
	    " \"f\": {\"type\": \"number\", \"min\": -1, \"max\": 1, \"default\": 0.5},"
	    " \"jobs\": {\"type\": \"int\", \"min\": -5, \"max\": 64, \"default\": 2},"
	    " \"mode\": {\"type\": \"enum\", \"values\": [\"-x\", \"y\"], \"default\": \"-x\"},"
	    " \"file\": {\"type\": \"string\", \"default\": \"f\"}},"
	    " \"command\": [\"make\", \"-j{jobs}\", \"--size={inner}\", \"{opt}\", \"{target}\","
	    " \"{a}{b}\", \"{n}\", \"--m\", \"{m}x\", \"{f}\", \"{mode}\"],"
	    " \"setup\": [[\"touch\", \"{file}.o\"]]}";
	struct recipe *r;
	struct bf_diag d;

	if ((r = parse_ok(text)) == NULL)
		return;
	/* the exploit of issue 14: make --eval=$(shell CMD) */
	T_EQ_INT(check(r, "target", "\"--eval=$(shell touch /tmp/x)\"", NULL, &d),
	    BF_ERR_INVALID);
	T_EQ_STR(d.msg, "params.x: \"--eval=$(shell touch /tmp/x)\" begins with \"-\", so the "
	    "program would read it as an option (it begins command[4]); the recipe does not "
	    "declare \"option\": true for target");
	T_EQ_INT(check(r, "target", "\"-\"", NULL, &d), BF_ERR_INVALID);
	T_EQ_INT(check(r, "target", "\"a-b\"", NULL, &d), 0);
	/* "option": true allows it */
	T_EQ_INT(check(r, "opt", "\"--eval=x\"", NULL, &d), 0);
	/* inside a larger element a value cannot become an option */
	T_EQ_INT(check(r, "inner", "\"-rf\"", NULL, &d), 0);
	T_EQ_INT(check(r, "jobs", "-5", NULL, &d), 0);
	/* slots only before it: {a} may be empty, so {b} begins the element */
	T_EQ_INT(check(r, "a", "\"-x\"", NULL, &d), BF_ERR_INVALID);
	T_EQ_INT(check(r, "b", "\"-x\"", NULL, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "(it begins command[5])");
	/* a whole element may not be empty without a pattern that says so */
	T_EQ_INT(check(r, "target", "\"\"", NULL, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "params.x: is empty, and it would be a whole argument (command[4])");
	T_EQ_INT(check(r, "a", "\"\"", NULL, &d), 0);		/* its pattern allows "" */
	T_EQ_INT(check(r, "inner", "\"\"", NULL, &d), 0);	/* inside an element */
	/* numbers render with their sign */
	T_EQ_INT(check(r, "n", "-3", NULL, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "params.x: -3 begins with \"-\"");
	T_EQ_INT(check(r, "n", "3", NULL, &d), 0);
	T_EQ_INT(check(r, "m", "-3", NULL, &d), BF_ERR_INVALID);	/* "{m}x": still first */
	T_EQ_INT(check(r, "f", "-0.5", NULL, &d), BF_ERR_INVALID);
	T_EQ_INT(check(r, "f", "0.5", NULL, &d), 0);
	/* enum values are the recipe's own words */
	T_EQ_INT(check(r, "mode", "\"-x\"", NULL, &d), 0);
	/* setup commands count as much as the command */
	T_EQ_INT(check(r, "file", "\"--x\"", NULL, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "(it begins setup[0][1])");
	recipe_free(r);
	/* a default or preset that would be an option is a recipe error */
	parse_bad("{\"name\": \"l\", \"params\": {\"t\": {\"type\": \"string\","
	    " \"default\": \"-x\"}}, \"command\": [\"make\", \"{t}\"]}",
	    "params.t.default: \"-x\" begins with \"-\"");
	parse_bad("{\"name\": \"l\", \"params\": {\"t\": {\"type\": \"string\","
	    " \"default\": \"x\"}}, \"presets\": {\"test\": {\"t\": \"-x\"}},"
	    " \"command\": [\"make\", \"{t}\"]}", "presets.test.t: \"-x\" begins with \"-\"");
	parse_bad("{\"name\": \"l\", \"params\": {\"t\": {\"type\": \"string\","
	    " \"default\": \"x\", \"option\": 1}}, \"command\": [\"make\", \"{t}\"]}",
	    "params.t.option:");
	parse_bad("{\"name\": \"l\", \"params\": {\"t\": {\"type\": \"enum\", \"values\":"
	    " [\"a\"], \"default\": \"a\", \"option\": true}}, \"command\": [\"make\", \"{t}\"]}",
	    "params.t.option: unknown key");
}

/* The path type: normal, absolute, strictly below the root. */
static void
test_path_type(void)
{
	static const struct {
		const char *val;
		int r;
		const char *msg;
	} vals[] = {
		{"\"/var/tmp/benchfleet/k\"", 0, NULL},
		{"\"/var/tmp/benchfleet/k/linux-6.1.x\"", 0, NULL},
		{"\"/etc\"", BF_ERR_INVALID,
		 "params.x: \"/etc\" is not under /var/tmp/benchfleet"},
		{"\"/var/tmp/benchfleet/../etc\"", BF_ERR_INVALID,
		 "params.x: \"/var/tmp/benchfleet/../etc\" has a \".\" or \"..\" component"},
		{"\"/var/tmp/benchfleet/k/..\"", BF_ERR_INVALID, "has a \".\" or \"..\" component"},
		{"\"/var/tmp/benchfleet/./k\"", BF_ERR_INVALID, "has a \".\" or \"..\" component"},
		{"\"/var/tmp/benchfleetX\"", BF_ERR_INVALID, "is not under /var/tmp/benchfleet"},
		{"\"/var/tmp/benchfleetX/k\"", BF_ERR_INVALID, "is not under /var/tmp/benchfleet"},
		{"\"/var/tmp/benchfleet\"", BF_ERR_INVALID, "is not under /var/tmp/benchfleet"},
		{"\"var/tmp/benchfleet/k\"", BF_ERR_INVALID, "is not an absolute path"},
		{"\"k\"", BF_ERR_INVALID, "is not an absolute path"},
		{"\"\"", BF_ERR_INVALID, "is not an absolute path"},
		{"\"/var/tmp/benchfleet/k/\"", BF_ERR_INVALID, "ends in \"/\""},
		{"\"/var/tmp/benchfleet//k\"", BF_ERR_INVALID, "has an empty component (\"//\")"},
		{"\"//var/tmp/benchfleet/k\"", BF_ERR_INVALID, "has an empty component (\"//\")"},
		{"\"/var/tmp/benchfleet/a\\u0000b\"", BF_ERR_INVALID, "contains a NUL byte"},
		{"\"/var/tmp/benchfleet/a\\nb\"", BF_ERR_INVALID, "contains a control character"},
		{"\"/var/tmp/benchfleet/a\\u007fb\"", BF_ERR_INVALID, "contains a control character"},
		{"5", BF_ERR_INVALID, "expected a string (an absolute path), got an integer"},
	};
	struct recipe *r;
	struct bf_diag d;
	char longp[PATH_CHECK_MAX + 8];
	size_t i;

	r = parse_ok("{\"name\": \"p\", \"params\": {\"dir\": {\"type\": \"path\","
	    " \"default\": \"/var/tmp/benchfleet/k\"}, \"src\": {\"type\": \"path\", \"root\":"
	    " \"/usr/src\", \"default\": \"/usr/src/linux.tar.xz\"}},"
	    " \"command\": [\"tar\", \"-C\", \"{dir}\", \"-xf\", \"{src}\"]}");
	if (r == NULL)
		return;
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		T_EQ_INT(check(r, "dir", vals[i].val, PATH_DEFAULT_ROOT, &d), vals[i].r);
		if (vals[i].msg != NULL)
			T_CONTAINS(d.msg, vals[i].msg);
	}
	/* without a daemon's root (at load) only the form is checked */
	T_EQ_INT(check(r, "dir", "\"/etc\"", NULL, &d), 0);
	T_EQ_INT(check(r, "dir", "\"/etc/../x\"", NULL, &d), BF_ERR_INVALID);
	/* another root */
	T_EQ_INT(check(r, "dir", "\"/srv/bench/k\"", "/srv/bench", &d), 0);
	T_EQ_INT(check(r, "dir", "\"/var/tmp/benchfleet/k\"", "/srv/bench", &d), BF_ERR_INVALID);
	/* a root of the recipe's own wins over the daemon's */
	T_EQ_INT(check(r, "src", "\"/usr/src/linux-6.2.tar.xz\"", PATH_DEFAULT_ROOT, &d), 0);
	T_EQ_INT(check(r, "src", "\"/etc/shadow\"", PATH_DEFAULT_ROOT, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "params.x: \"/etc/shadow\" is not under /usr/src");
	T_EQ_INT(check(r, "src", "\"/var/tmp/benchfleet/x.tar\"", PATH_DEFAULT_ROOT, &d),
	    BF_ERR_INVALID);
	memset(longp, 'a', sizeof(longp) - 1);
	memcpy(longp, "\"/var/tmp/benchfleet/", 21);
	longp[sizeof(longp) - 2] = '"';
	longp[sizeof(longp) - 1] = '\0';
	T_EQ_INT(check(r, "dir", longp, PATH_DEFAULT_ROOT, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "is longer than 4095 bytes");
	recipe_free(r);
	/* the recipe's root must be normal too */
	parse_bad("{\"name\": \"p\", \"params\": {\"s\": {\"type\": \"path\", \"root\":"
	    " \"/usr/src/\", \"default\": \"/usr/src/a\"}}, \"command\": [\"x\"]}",
	    "params.s.root: \"/usr/src/\" ends in \"/\"");
	parse_bad("{\"name\": \"p\", \"params\": {\"s\": {\"type\": \"path\", \"root\":"
	    " \"/usr/src\", \"default\": \"/etc/a\"}}, \"command\": [\"x\"]}",
	    "params.s.default: \"/etc/a\" is not under /usr/src");
	parse_bad("{\"name\": \"p\", \"params\": {\"s\": {\"type\": \"path\","
	    " \"default\": \"a/b\"}}, \"command\": [\"x\"]}",
	    "params.s.default: \"a/b\" is not an absolute path");
	/* path.h directly: the prefix test is by component */
	T_CHECK(path_is_under("/a/b", "/a"));
	T_CHECK(!path_is_under("/ab", "/a"));
	T_CHECK(!path_is_under("/a", "/a"));
	T_CHECK(path_is_under("/a", "/"));
	T_CHECK(!path_is_under("/", "/"));
}

/* The step carries each path with its root, checked once more. */
static void
test_step_paths(void)
{
	struct recipe *r;
	struct bf_diag d;
	json_t *vals, *step, *paths;

	r = parse_ok("{\"name\": \"p\", \"params\": {\"dir\": {\"type\": \"path\","
	    " \"default\": \"/var/tmp/benchfleet/k\"}, \"src\": {\"type\": \"path\", \"root\":"
	    " \"/usr/src\", \"default\": \"/usr/src/l.tar\"}},"
	    " \"command\": [\"tar\", \"-C\", \"{dir}\", \"-xf\", \"{src}\"]}");
	if (r == NULL)
		return;
	vals = json_pack("{s:s,s:s}", "dir", "/var/tmp/benchfleet/k", "src", "/usr/src/l.tar");
	step = json_object();
	T_EQ_INT(recipe_step_json(r, vals, PATH_DEFAULT_ROOT, step, &d), 0);
	paths = json_object_get(step, "paths");
	T_EQ_INT(json_array_size(paths), 2);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(paths, 0), "name")), "dir");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(paths, 0), "path")),
	    "/var/tmp/benchfleet/k");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(paths, 0), "root")),
	    PATH_DEFAULT_ROOT);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(paths, 1), "root")),
	    "/usr/src");
	json_decref(step);
	/* the daemon's root changed since submit: the run fails, naming it */
	step = json_object();
	T_EQ_INT(recipe_step_json(r, vals, "/srv/bench", step, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "params.dir: \"/var/tmp/benchfleet/k\" is not under /srv/bench");
	json_decref(step);
	step = json_object();
	T_EQ_INT(recipe_step_json(r, vals, NULL, step, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "params.dir: no root to keep the path under");
	json_decref(step);
	json_decref(vals);
	recipe_free(r);
}

/*
 * Every shipped recipe loads (the daemon refuses to start on a broken one),
 * has test and paper presets, and was reviewed as an attacker would: every
 * string parameter has a pattern, and no value can begin an argv element
 * with '-' unless the recipe says "option" (only echo, whose workload has
 * no options, does).
 */
static void
test_shipped(void)
{
	static const char *const names[] = {
		"lat-pagefault", "dtlb-touch", "zero-page-thrash", "btree", "gups", "ebizzy",
		"redis", "memcached", "kernel-build", "cpu-loop", "echo", "page-touch",
	};
	const char *src = getenv("BF_SRC");
	const struct recipe_param *p;
	struct recipe *r;
	struct bf_diag d;
	char path[512];
	size_t i, j, nfiles = 0;
	FILE *ls;

	if (src == NULL)
		return;
	/* the list above is every recipe there is */
	snprintf(path, sizeof(path), "ls '%s'/recipes/*.json | wc -l", src);
	if ((ls = popen(path, "r")) != NULL) {
		if (fscanf(ls, "%zu", &nfiles) != 1)
			nfiles = 0;
		pclose(ls);
	}
	T_EQ_INT(nfiles, sizeof(names) / sizeof(names[0]));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/recipes/%s.json", src, names[i]);
		r = NULL;
		if (recipe_load_file(path, &r, &d) != 0)
			fprintf(stderr, "%s\n", d.msg);
		T_CHECK(r != NULL);
		T_CHECK(r == NULL || json_object_get(r->presets, "test") != NULL);
		/* echo measures nothing: it has no paper setting */
		T_CHECK(r == NULL || strcmp(names[i], "echo") == 0 ||
		    json_object_get(r->presets, "paper") != NULL);
		for (j = 0; r != NULL && j < r->nparams; j++) {
			p = &r->params[j];
			if (p->type == RECIPE_P_STR && !p->re_ok) {
				fprintf(stderr, "%s: string parameter %s has no pattern\n", names[i],
				    p->name);
				T_CHECK(0);
			}
			if (p->option && strcmp(names[i], "echo") != 0) {
				fprintf(stderr, "%s: %s may be an option\n", names[i], p->name);
				T_CHECK(0);
			}
			if (p->type == RECIPE_P_INT && p->leads && p->imin < 0) {
				fprintf(stderr, "%s: %s may be negative at the start of %s\n",
				    names[i], p->name, p->lead_at);
				T_CHECK(0);
			}
		}
		recipe_free(r);
	}
	/* kernel-build: the parameters of issue 14 */
	snprintf(path, sizeof(path), "%s/recipes/kernel-build.json", src);
	r = NULL;
	T_EQ_INT(recipe_load_file(path, &r, &d), 0);
	if (r == NULL)
		return;
	T_CHECK((p = recipe_param(r, "workdir")) != NULL && p->type == RECIPE_P_PATH &&
	    p->root == NULL);
	T_CHECK((p = recipe_param(r, "tarball")) != NULL && p->type == RECIPE_P_PATH &&
	    p->root != NULL && strcmp(p->root, "/usr/src") == 0);
	T_EQ_INT(check(r, "target", "\"--eval=$(shell touch /tmp/m)\"", PATH_DEFAULT_ROOT, &d),
	    BF_ERR_INVALID);
	T_EQ_INT(check(r, "target", "\"CC=/tmp/evil\"", PATH_DEFAULT_ROOT, &d), BF_ERR_INVALID);
	T_EQ_INT(check(r, "target", "\"mm/\"", PATH_DEFAULT_ROOT, &d), 0);
	T_EQ_INT(check(r, "target", "\"arch/x86/boot/bzImage\"", PATH_DEFAULT_ROOT, &d), 0);
	/* kbuild's "%/" would run the Makefile of a directory outside the tree */
	T_EQ_INT(check(r, "target", "\"mm/../../../../tmp/evil/\"", PATH_DEFAULT_ROOT, &d),
	    BF_ERR_INVALID);
	T_EQ_INT(check(r, "target", "\"../x.o\"", PATH_DEFAULT_ROOT, &d), BF_ERR_INVALID);
	T_EQ_INT(check(r, "target", "\"mm/./x.o\"", PATH_DEFAULT_ROOT, &d), BF_ERR_INVALID);
	T_EQ_INT(check(r, "target", "\"mm//x.o\"", PATH_DEFAULT_ROOT, &d), BF_ERR_INVALID);
	T_EQ_INT(check(r, "target", "\"mm/memory.o\"", PATH_DEFAULT_ROOT, &d), 0);
	T_EQ_INT(check(r, "target", "\"arch/x86/boot/compressed/vmlinux.bin.gz\"",
	    PATH_DEFAULT_ROOT, &d), 0);
	T_EQ_INT(check(r, "workdir", "\"/etc\"", PATH_DEFAULT_ROOT, &d), BF_ERR_INVALID);
	T_EQ_INT(check(r, "tarball", "\"/etc/shadow\"", PATH_DEFAULT_ROOT, &d), BF_ERR_INVALID);
	T_EQ_INT(check(r, "tarball", "\"-\"", PATH_DEFAULT_ROOT, &d), BF_ERR_INVALID);
	recipe_free(r);
}

int
main(void)
{
	test_cases();
	test_caps();
	test_malformed();
	test_good();
	test_check_value();
	test_render();
	test_file();
	test_step_parts();
	test_pattern();
	test_leading_dash();
	test_path_type();
	test_step_paths();
	test_shipped();
	return t_done();
}
