/*
 * test_recipe_param.c: a recipe's parameters: values checked against each
 * type (table driven), "pattern" anchoring, values that would begin an
 * argv element with '-', the path type and its root, the paths a step
 * carries, and every shipped recipe reviewed as an attacker would.
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
#include "recipe_fixture.h"

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

/* madvise cells give "madvise", never/always cells "none", no knob the default. */
static int
thp_follows_knob(const struct recipe_param *p)
{
	json_t *k = json_pack("{s:s}", "thp_enabled", "madvise");
	const json_t *v;
	int ok;

	v = recipe_param_from_knob(p, k);
	ok = json_is_string(v) && strcmp(json_string_value(v), "madvise") == 0;
	json_object_set_new(k, "thp_enabled", json_string("never"));
	v = recipe_param_from_knob(p, k);
	ok = ok && json_is_string(v) && strcmp(json_string_value(v), "none") == 0;
	json_object_set_new(k, "thp_enabled", json_string("always"));
	v = recipe_param_from_knob(p, k);
	ok = ok && json_is_string(v) && strcmp(json_string_value(v), "none") == 0;
	ok = ok && recipe_param_from_knob(p, NULL) == NULL && p->def != NULL &&
	    json_is_string(p->def) && strcmp(json_string_value(p->def), "none") == 0;
	json_decref(k);
	return ok;
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
		"xsbench", "graph500", "pagerank", "hashjoin", "hint",
		"hpcc", "dbench", "tbench", "stress-ng", "sysbench-memory", "hackbench", "ab",
		"fio-pagecache", "xsbench-upstream", "graph500-upstream", "gapbs-pr", "memtier",
		"lmbench-lat-pagefault", "lmbench-lat-ctx", "lmbench-lat-syscall", "mitosis-btree",
		"mitosis-hashjoin",
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
			/* every workload with a thp switch follows the cell's knob, so
			 * its thp_enabled=madvise rows mean MADV_HUGEPAGE (issue 20) */
			if (strcmp(p->name, "thp") == 0 && !thp_follows_knob(p)) {
				fprintf(stderr, "%s: thp does not follow thp_enabled\n",
				    names[i]);
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

/* "from_knob": validated at load, resolved by knob value, "*" or nothing. */
static void
test_from_knob(void)
{
#define FK_HEAD "{\"name\": \"fk\", \"command\": [\"@agent\", \"work\", \"touch\", " \
	"\"--thp\", \"{thp}\"], \"metrics\": [{\"name\": \"wall_s\", \"unit\": \"s\", " \
	"\"better\": \"lower\", \"source\": \"wall_s\"}], \"params\": {\"thp\": " \
	"{\"type\": \"enum\", \"values\": [\"none\", \"madvise\", \"-x\"], " \
	"\"default\": \"none\", \"from_knob\": "
	struct recipe *r;
	json_t *k;

	r = parse_ok(FK_HEAD "{\"knob\": \"thp_enabled\", \"map\": {\"madvise\": \"madvise\","
	    " \"*\": \"none\"}}}}}");
	if (r != NULL) {
		const struct recipe_param *p = recipe_param(r, "thp");

		k = json_pack("{s:s}", "thp_enabled", "madvise");
		T_EQ_STR(json_string_value(recipe_param_from_knob(p, k)), "madvise");
		json_object_set_new(k, "thp_enabled", json_string("never"));
		T_EQ_STR(json_string_value(recipe_param_from_knob(p, k)), "none");
		json_object_del(k, "thp_enabled");
		json_object_set_new(k, "randomize_va_space", json_integer(0));
		T_CHECK(recipe_param_from_knob(p, k) == NULL);	/* not set: the default */
		T_CHECK(recipe_param_from_knob(p, NULL) == NULL);
		json_decref(k);
		T_CHECK(recipe_param_from_knob(recipe_param(r, "thp"), NULL) == NULL);
		/* the job spec carries the recipe as recipe_to_json writes it: the
		 * mapping must survive, or a replanned cell differs from the run */
		{
			json_t *j = recipe_to_json(r), *kk = json_pack("{s:s}", "thp_enabled",
			    "madvise");
			struct recipe *r2 = NULL;
			struct bf_diag d2;

			T_CHECK(j != NULL && recipe_from_json(j, &r2, &d2) == 0);
			T_CHECK(r2 != NULL && json_is_string(recipe_param_from_knob(
			    recipe_param(r2, "thp"), kk)) && strcmp(json_string_value(
			    recipe_param_from_knob(recipe_param(r2, "thp"), kk)), "madvise") == 0);
			recipe_free(r2);
			json_decref(j);
			json_decref(kk);
		}
		recipe_free(r);
	}
	/* without "*", an unmapped value keeps the default */
	r = parse_ok(FK_HEAD "{\"knob\": \"thp_enabled\", \"map\": {\"madvise\": \"madvise\"}}}}}");
	if (r != NULL) {
		k = json_pack("{s:s}", "thp_enabled", "always");
		T_CHECK(recipe_param_from_knob(recipe_param(r, "thp"), k) == NULL);
		json_decref(k);
		recipe_free(r);
	}
	parse_bad(FK_HEAD "{\"knob\": \"thp_enabledx\", \"map\": {\"*\": \"none\"}}}}}",
	    "params.thp.from_knob.knob: \"thp_enabledx\" is not a knob");
	parse_bad(FK_HEAD "{\"knob\": \"thp_enabled\", \"map\": {\"alwayz\": \"none\"}}}}}",
	    "params.thp.from_knob.map.alwayz:");
	parse_bad(FK_HEAD "{\"knob\": \"thp_enabled\", \"map\": {\"*\": \"huge\"}}}}}",
	    "params.thp.from_knob.map.*: \"huge\" is not one of none, madvise, -x");
	parse_bad(FK_HEAD "{\"knob\": \"thp_enabled\", \"map\": {}}}}}",
	    "params.thp.from_knob.map: has 0 keys");
	parse_bad(FK_HEAD "{\"knob\": \"thp_enabled\"}}}}", "params.thp.from_knob.map");
	parse_bad(FK_HEAD "{\"knob\": \"thp_enabled\", \"map\": {\"*\": \"none\"}, "
	    "\"when\": 1}}}}", "params.thp.from_knob");
	parse_bad(FK_HEAD "\"thp_enabled\"}}}", "params.thp.from_knob: expected an object");
	/* a mapped value leads an argv element like the default: no "-" */
	parse_bad("{\"name\": \"fk\", \"command\": [\"@agent\", \"work\", \"echo\", \"{s}\"], "
	    "\"metrics\": [{\"name\": \"wall_s\", \"unit\": \"s\", \"better\": \"lower\", "
	    "\"source\": \"wall_s\"}], \"params\": {\"s\": {\"type\": \"string\", "
	    "\"default\": \"a\", \"from_knob\": {\"knob\": \"thp_enabled\", \"map\": "
	    "{\"*\": \"-x\"}}}}}", "params.s.from_knob.map.*: \"-x\" begins with \"-\"");
#undef FK_HEAD
}

int
main(void)
{
	test_check_value();
	test_from_knob();
	test_pattern();
	test_leading_dash();
	test_path_type();
	test_step_paths();
	test_shipped();
	return t_done();
}
