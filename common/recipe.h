/*
 * recipe.h: the recipe model. A recipe names its typed parameters, presets,
 * the measured command as an argv template with {param} slots, and metrics.
 *
 * Recipe document (JSON):
 * {
 *   "name": "cpu-loop",                         required, jx_check_name
 *   "description": "...",                       optional
 *   "params": {                                 optional, <= BF_MAX_PARAMS
 *     "loops": {"type": "int", "min": 1, "max": 1000000000, "default": 1000000,
 *               "description": "..."},
 *     "ratio": {"type": "number", "min": 0, "max": 1, "default": 0.5},
 *     "mode":  {"type": "enum", "values": ["a", "b"], "default": "a"},
 *     "msg":   {"type": "string", "max_len": 256, "default": "hi",
 *               "pattern": "[a-z ]*"},
 *     "dir":   {"type": "path", "default": "/var/tmp/benchfleet/x"},
 *     "src":   {"type": "path", "root": "/usr/src", "default": "/usr/src/a.tar"},
 *     "flag":  {"type": "bool", "default": false}
 *   },                                          every param needs a default
 *   "presets": {"test": {"loops": 1000}, "paper": {"loops": 100000000}},
 *   "command": ["@agent", "work", "cpu", "--loops", "{loops}"],
 *   "timeout_s": 600,                           optional, per iteration
 *   "metrics": [
 *     {"name": "wall_s", "unit": "s", "better": "lower", "source": "wall_s"},
 *     {"name": "ops", "unit": "ops/s", "better": "higher", "source": "stdout",
 *      "regex": "([0-9.]+) ops/s"}
 *   ]
 * }
 *
 * Parameter types and what a value must be:
 *   int, number: within min..max. enum: one of values. bool: true or false.
 *   string: at most max_len bytes (default BF_MAX_STR), no NUL; with
 *     "pattern", the WHOLE value matches the POSIX extended regex (it is
 *     compiled as ^(pattern)$, and an unbalanced ")" in it is refused).
 *   path: a normal absolute path (path.h: no "..", ".", "//", trailing "/",
 *     NUL or control bytes) strictly below a root: the recipe's "root", or
 *     else the daemon's --workdir-root (default /var/tmp/benchfleet). The
 *     coordinator checks at submit; the agent checks again before the step
 *     runs and refuses a symbolic link anywhere below the root.
 * A value that begins an argv element (the element is "{p}", or starts with
 * "{p}", or with slots only before it) must not begin with "-": the program
 * would read it as an option (make "--eval=...", tar "--to-command=...").
 * A string, int or number parameter may declare "option": true to allow it.
 * A string that fills a whole element may not be empty unless its pattern
 * matches "". A value inside a larger element ("-j{jobs}", "--size={mb}")
 * cannot become an option by itself.
 *
 * A default that follows a knob: any parameter may carry
 *   "from_knob": {"knob": "thp_enabled", "map": {"madvise": "madvise", "*": "none"}}
 * In a cell whose knobs (the job's "knobs" and its knob axes) set that knob,
 * the parameter takes map[the knob's value as text], else map["*"]; a cell
 * that does not set the knob, or whose value no key matches, keeps the
 * default. An explicit value wins: the job's "params", its preset, or an
 * axis of the parameter. The value lands in the cell's values like any
 * other (stored with the run, rendered into argv). At load: "knob" names a
 * knob of the table (knob.h), every key but "*" passes knob_check, every
 * value passes recipe_check_value, at most BF_MAX_AXIS_VALUES keys.
 *
 * Slots: "{name}" anywhere inside an argv element is replaced by the value of
 * parameter name; "{{" and "}}" are literal braces. Each element stays one
 * argv element whatever the value contains: values never meet a shell.
 * A slot naming an unknown parameter is an error at recipe load.
 * "@agent" as the whole first element means the agent binary itself (its
 * built-in workloads, "work ...").
 *
 * Metric sources: wall_s, user_s, sys_s, maxrss_kb (measured by the agent for
 * every iteration) or stdout/stderr with exactly one rule:
 *   "regex": a POSIX extended regex with one capture group holding a number
 *            (commas are stripped before parsing);
 *   "csv": {"row_match": "GET", "column": "rps"}: the first CSV row whose
 *            first field contains row_match, the column named in the header;
 *   "json": "a.b.0.c": a dotted path into one JSON document (array indexes
 *            as numbers).
 *
 * Optional step parts, each a template like "command" (agent-protocol.md):
 *   "setup": [["mkdir", "-p", "{dir}"], ...]          once, untimed, <= 32
 *   "pre_iteration": [["make", "-C", "{dir}", "clean"]] before each iteration
 *   "services": [{"argv": ["redis-server", "--port", "{port}"],
 *                 "ready": {"tcp": "127.0.0.1:{port}", "timeout_s": 10}}]  <= 8
 *
 * Expectations (issue 16), checked by the job report (evidence.h), never by
 * the run: what must hold of a cell's mean per iteration for its numbers to
 * mean what the recipe says; a cell where one fails gets a legend warning.
 *   "expect": [{"when": {"thp_enabled": "always"},    optional; every key a
 *               "metric": "vmstat.thp_fault_alloc",  parameter or a knob of
 *               "gt": 0}]                            the cell, all must match
 * At most BF_MAX_EXPECT entries. "when" (<= BF_MAX_EXPECT_WHEN keys): a
 * parameter's value passes recipe_check_value, a knob's knob_check. "metric":
 * a metric of the recipe, an agent measure (wall_s, user_s, sys_s,
 * maxrss_kb) or a counter (vmstat., hugepages-, cgroup., smaps., pmu.).
 * Exactly one of "gt", "ge", "lt", "le", "eq" with a finite number. Unknown
 * keys are refused, naming the field.
 */
#ifndef BF_RECIPE_H
#define BF_RECIPE_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "buf.h"
#include "err.h"

enum recipe_ptype {
	RECIPE_P_INT, RECIPE_P_NUM, RECIPE_P_STR, RECIPE_P_ENUM, RECIPE_P_BOOL, RECIPE_P_PATH
};

struct recipe_param {
	char *name;
	enum recipe_ptype type;
	int64_t imin, imax;		/* int */
	double nmin, nmax;		/* number */
	size_t max_len;			/* string; default BF_MAX_STR */
	char *pattern;			/* string: as written, or NULL */
	regex_t re;			/* string: ^(pattern)$ compiled when re_ok */
	int re_ok;
	int option;			/* "option": true: may begin an element with '-' */
	int leads;			/* begins some argv element (set at load) */
	int whole;			/* is some argv element all by itself */
	char lead_at[48];		/* the first such element, for messages */
	char *root;			/* path: the recipe's root, or NULL (the daemon's) */
	char **values;			/* enum */
	size_t nvalues;
	json_t *def;			/* owned reference */
	char *description;
	char *from_knob;		/* "from_knob".knob, or NULL */
	json_t *from_map;		/* "from_knob".map (owned), or NULL */
};

struct recipe_metric {
	char *name;
	char *unit;
	int higher_better;		/* 1 "higher", 0 "lower" */
	char *source;			/* wall_s|user_s|sys_s|maxrss_kb|stdout|stderr */
	char *regex;			/* stdout/stderr: one of regex, csv_*, json_path */
	char *csv_row, *csv_column;	/* csv rule */
	char *json_path;		/* json rule */
};

struct recipe_cmd {
	char **argv;			/* templates, NULL-terminated */
	size_t argc;
};

struct recipe_service {
	struct recipe_cmd cmd;
	char *ready_tcp;		/* template "127.0.0.1:{port}" */
	int64_t ready_timeout_s;	/* default 10 */
};

enum recipe_expect_op {
	RECIPE_EXPECT_GT, RECIPE_EXPECT_GE, RECIPE_EXPECT_LT, RECIPE_EXPECT_LE, RECIPE_EXPECT_EQ
};

struct recipe_expect {
	json_t *when;			/* object name -> value (owned; {} when absent) */
	char *metric;
	enum recipe_expect_op op;
	double value;
};

struct recipe {
	char *name;
	char *description;
	struct recipe_param *params;
	size_t nparams;
	json_t *presets;		/* object: preset -> object of param values; validated */
	char **command;			/* argv template, ncommand elements */
	size_t ncommand;
	int64_t timeout_s;		/* default 600 */
	struct recipe_metric *metrics;
	size_t nmetrics;
	struct recipe_cmd *setup;	/* untimed, once per step */
	size_t nsetup;
	struct recipe_cmd *pre;		/* untimed, before each iteration */
	size_t npre;
	struct recipe_service *services;
	size_t nservices;
	struct recipe_expect *expect;	/* "expect", in order */
	size_t nexpect;
	json_t *json;			/* the document as loaded (owned) */
};

/* Parse and validate a recipe document. *out freed with recipe_free(). */
int recipe_parse(const char *text, size_t len, struct recipe **out, struct bf_diag *d);
/* Same from a parsed document (takes its own reference). */
int recipe_from_json(json_t *doc, struct recipe **out, struct bf_diag *d);
/* Load one file (capped at BF_MAX_RECIPE_FILE). */
int recipe_load_file(const char *path, struct recipe **out, struct bf_diag *d);
void recipe_free(struct recipe *r);

/* NULL when there is no such parameter. */
const struct recipe_param *recipe_param(const struct recipe *r, const char *name);
/* The value p takes in a cell with these knobs (see "from_knob" above): a
 * borrowed value from the recipe, or NULL when the default stays. */
const json_t *recipe_param_from_knob(const struct recipe_param *p, const json_t *knobs);
/* Comma-separated parameter names into buf, for messages. */
const char *recipe_param_names(const struct recipe *r, char *buf, size_t bufsz);

/*
 * Check v against parameter p: type, range, enum membership, string length,
 * no NUL bytes, pattern, a leading '-' (see above), path form and
 * confinement. root is the daemon's --workdir-root for path parameters
 * without a root of their own; NULL checks only their form (at recipe load,
 * where no daemon is known). path names v in messages:
 * 'matrix.mode[2]: "x" is not one of a, b'.
 */
int recipe_check_value(const struct recipe_param *p, const json_t *v, const char *root,
    const char *path, struct bf_diag *d);

/*
 * Render the command for one set of values (object name -> value; every
 * parameter present). *argvp is a NULL-terminated array of *argcp strings;
 * free it with recipe_argv_free(). Numbers render as integers when integral
 * ("%.17g" otherwise), bools as "true"/"false".
 */
int recipe_render_argv(const struct recipe *r, const json_t *values, char ***argvp,
    size_t *argcp, struct bf_diag *d);
void recipe_argv_free(char **argv);

/*
 * Add to a step object what the recipe says beyond "argv": "setup",
 * "pre_iteration" and "services" (rendered, only when the recipe has them),
 * "metrics" (every stdout/stderr metric with its regex, csv or json rule)
 * and "paths" (each path parameter's value with the root it must stay
 * under, checked here against root, the daemon's --workdir-root), in the
 * agent's step format (docs/agent-protocol.md).
 */
int recipe_step_json(const struct recipe *r, const json_t *values, const char *root,
    json_t *step, struct bf_diag *d);
/* Is m extracted from the workload's output (regex, csv or json), rather
 * than measured by the agent (wall_s, ...)? */
int recipe_metric_from_output(const struct recipe_metric *m);

/*
 * Append a parameter value as it appears in an argv element or a cell label:
 * strings as is, integral numbers as integers, bools as "true"/"false".
 * BF_ERR_INVALID for objects, arrays and null.
 */
int recipe_append_value(struct buf *b, const json_t *v);

/* ">", ">=", "<", "<=", "==" */
const char *recipe_expect_op_str(enum recipe_expect_op op);
/* Does mean satisfy e's comparison? (NaN never does.) */
int recipe_expect_holds(const struct recipe_expect *e, double mean);

/* Public JSON description (name, description, params, presets, metrics,
 * command, and expect as written). New reference. */
json_t *recipe_to_json(const struct recipe *r);

#endif
