/*
 * job.h: the job model. A job is declarative: which recipe, on which
 * machines, over which matrix, how many repetitions.
 *
 * {
 *   "recipe": "cpu-loop",                      required
 *   "name": "my experiment",                   optional, <= 200 bytes
 *   "preset": "test",                          optional; must exist in the recipe
 *   "machines": {"class": "demo"}              required: a class, or
 *             | {"names": ["h1", "h2"]},       a list of machine names (<= 1024)
 *   "matrix": {"loops": [1000, 2000]},         optional; axes are recipe params,
 *                                              1..BF_MAX_AXIS_VALUES values each,
 *                                              no value twice on one axis
 *   "params": {"msg": "x"},                    optional fixed parameter values
 *   "repetitions": {"iterations": 3,           1..BF_MAX_ITERATIONS, default 5
 *                   "warmup": 1,               0..BF_MAX_WARMUP, default 0
 *                   "boots": 1},               1..BF_MAX_BOOTS, default 1
 *     or adaptive:  {"target_ci_pct": 1.0,     95% CI half-width as % of the mean (0.001..1000)
 *                    "min_boots": 2,           2..BF_MAX_BOOTS, default 2
 *                    "max_boots": 10,          >= min_boots, default 10
 *                    "target_metric": "rps",   default the recipe's first metric
 *                    "iterations": 5}          boots are added to a cell while its CI
 *                                              (over boot means) is wider than the target
 *   "order": "interleaved" | "sequential"      default "interleaved": runs are
 *                                              claimed boot-major (every cell once
 *                                              per boot); "sequential": cell-major,
 *                                              a cell's boots one after the other
 *                                              (plan.h)
 *   "knobs": {"thp_enabled": "madvise",        optional; every name and value
 *             "randomize_va_space": 0},        passes knob_check() (knob.h)
 *   "bind": {"cpus": "0-3", "membind": "0",    optional; lists like "0-3,8"
 *            "cpunodebind": "0"},
 *   "aslr": false,                             optional; false: the workload
 *                                              runs with ADDR_NO_RANDOMIZE
 *   "drop_caches": true                        optional; before each iteration
 *   "profile": {"perf": "record",              optional; one extra, unmeasured
 *               "freq": 999}                   iteration per run under perf record -g
 *                                              at freq Hz (1..BF_MAX_PROFILE_FREQ)
 *   "kernel": "6.12.95+deb12-cloud-amd64",     optional; the release to boot (a matrix
 *                                              axis "kernel" may vary it instead)
 *   "cmdline": "no5lvl",                       optional; parameters to boot with (axis
 *                                              "cmdline": ["", "no5lvl"] varies them)
 *   "boot": {"cmdline_base": "nokaslr"}        optional; added to every boot
 * }
 *
 * A matrix axis may name a knob instead of a parameter ("thp_enabled":
 * ["never", "always"]); its values are checked with knob_check(). A name
 * that is both a recipe parameter and a knob is refused. The reserved keys
 * "kernel", "boot" and "cmdline" are refused for now.
 *
 * Unknown keys are refused, naming the key. A parameter may be an axis or a
 * fixed value, not both. Values of a cell are resolved as:
 * recipe defaults <- a "from_knob" default following the cell's knobs
 * (recipe.h) <- preset <- params <- the cell's axis values.
 */
#ifndef BF_JOB_H
#define BF_JOB_H

#include <stddef.h>
#include <jansson.h>

#include "err.h"
#include "recipe.h"

struct job_spec {
	char *recipe;
	char *name;			/* may be NULL */
	char *preset;			/* may be NULL */
	char *machine_class;		/* exactly one of class / names */
	char **machine_names;
	size_t nmachine_names;
	json_t *matrix;			/* object axis -> array (owned; {} when absent) */
	json_t *params;			/* object (owned; {} when absent) */
	int iterations;
	int warmup;
	int boots;			/* boots to start with (min_boots when adaptive) */
	double target_ci_pct;		/* > 0: adaptive repetitions */
	int min_boots, max_boots;
	char *target_metric;		/* NULL: the recipe's first metric */
	char *kernel;			/* kernel release to boot, or NULL (an axis may set it) */
	char *cmdline;			/* command-line parameters, or NULL (an axis may set it) */
	char *cmdline_base;		/* boot.cmdline_base: added to every boot, or NULL */
	int interleaved;		/* order: "interleaved" (the default) or not */
	json_t *knobs;			/* object knob -> value (owned; {} when absent) */
	json_t *bind;			/* object (owned) or NULL */
	int aslr;			/* -1 absent, 0 off, 1 on */
	int drop_caches;		/* 0/1 */
	int profile_perf;		/* 1: "profile": {"perf": "record"} */
	int profile_freq;		/* Hz, when profile_perf */
	json_t *json;			/* the document (owned) */
};

/* Structure and types only; needs no recipe. *out freed with job_free(). */
int job_parse(const char *text, size_t len, struct job_spec **out, struct bf_diag *d);
int job_from_json(json_t *doc, struct job_spec **out, struct bf_diag *d);
/* Check against the recipe: preset exists, axes and params are parameters
 * of it, every value passes recipe_check_value(), cell count <= BF_MAX_CELLS.
 * workdir_root is the daemon's --workdir-root: every path parameter's value
 * (given, or from the preset or default) must be under it, unless the
 * recipe gives the parameter a root of its own. NULL checks path form only. */
int job_validate(const struct job_spec *job, const struct recipe *r, const char *workdir_root,
    struct bf_diag *d);
void job_free(struct job_spec *job);

#define JOB_MAX_RELEASE		64	/* a kernel release as uname -r prints it */
#define JOB_MAX_CMDLINE		2048	/* requested command-line parameters */
/* "kernel" and "cmdline": matrix axes that are boot configuration. */
int job_is_boot_axis(const char *k);
/* A kernel release: 1..JOB_MAX_RELEASE of [A-Za-z0-9._+~-], alphanumeric first. */
int job_check_kernel(const char *s, const char *path, struct bf_diag *d);
/* Command-line parameters: params separated by spaces, each of A-Z a-z 0-9
 * and JOB_CMDLINE_CHARS (no shell syntax: no $ ( ) ` ; & | < > quotes,
 * backslash, glob or newline), at most JOB_MAX_CMDLINE bytes ("" is fine). */
#define JOB_CMDLINE_CHARS	"._,:=+/@%~!-"
int job_check_cmdline(const char *s, const char *path, struct bf_diag *d);

/* A knob value (string or integer) as the text knob_check() takes;
 * BF_ERR_INVALID for other types. */
int job_knob_text(const json_t *v, char *out, size_t outsz);

/* The resolved fixed values (defaults <- preset <- params), a new object. */
int job_base_values(const struct job_spec *job, const struct recipe *r, json_t **out,
    struct bf_diag *d);
/* Into values (a cell's, from job_base_values plus its axes): each "from_knob"
 * parameter the job does not set itself (params, preset, axes) takes the
 * value its knob's value in knobs maps to. 0 or BF_ERR_ALLOC. */
int job_knob_defaults(const struct job_spec *job, const struct recipe *r,
    const json_t *axes, const json_t *knobs, json_t *values);

#endif
