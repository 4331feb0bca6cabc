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
 *               with "spread": "any"           optional: where the cells run. any
 *                                              (default): each run on any machine
 *                                              that is free; "pin": every run on
 *                                              one machine, the one that claims the
 *                                              job's first run (jobs.pinned_machine);
 *                                              "block": every run on every machine
 *                                              (plan_block: a run set per machine),
 *                                              machine a blocking factor in the
 *                                              report; not with adaptive repetitions
 *   "matrix": {"loops": [1000, 2000]},         optional; axes are recipe params,
 *                                              1..BF_MAX_AXIS_VALUES values each,
 *                                              no value twice on one axis
 *   "params": {"msg": "x"},                    optional fixed parameter values
 *   "repetitions": {"iterations": 3,           1..BF_MAX_ITERATIONS, default 5
 *                   "warmup": 1,               0..BF_MAX_WARMUP, default 0
 *                   "gap_ms": 100,             0..BF_MAX_GAP_MS: a pause before each
 *                                              iteration but the first (a fault-bound
 *                                              workload a few ms after the last one
 *                                              ran ~4% faster here); absent: 0, but a
 *                                              submission without it is given
 *                                              JOB_SUBMIT_GAP_MS (job_submit_defaults)
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
 *   "knobs_optional": ["mthp_16kB"],           optional; knobs of the job (fixed or
 *                                              an axis) a machine may lack: recorded
 *                                              "absent" there, not a failed run
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
 *   "kernels": {"5lvl": {"git": "/srv/linux.git", optional; kernels to build (kspec.h),
 *               "commit": "v6.10", ...}}       each named by "kernel" or a value
 *                                              of matrix.kernel; the other values
 *                                              are installed releases
 * }
 *
 * A matrix axis may name a knob instead of a parameter ("thp_enabled":
 * ["never", "always"]); its values are checked with knob_check(). A name
 * that is both a recipe parameter and a knob is refused. The axes "kernel"
 * and "cmdline" are boot configuration (job_is_boot_axis), never recipe
 * parameters.
 *
 * A suite (several workloads on the same boots; job-suite.c):
 *   "suite": [{"recipe": "btree", "preset": "paper", "params": {...}},
 *             {"recipe": "xsbench", "matrix": {"thp_enabled": ["never"]}},
 *             {"recipe": "redis", "label": "redis-mad", "knobs": {...}}]
 * 1..BF_MAX_SUITE entries, each with only recipe (required), label (a
 * name, default the recipe's; no two entries share one), preset, params,
 * knobs (over the job's) and matrix (crossed with the job's; no boot axis
 * and no axis of the job's matrix). A suite job has no recipe, preset or
 * params of its own, and no adaptive repetitions; everything else
 * (machines, repetitions, order, bind, kernel, boot, ...) is the job's and
 * every entry shares it. job->recipe is JOB_SUITE_RECIPE; each entry is a
 * single-recipe job of its own (suite[i].job), whose cells carry the axis
 * "workload" = its label in the suite's plan (plan_suite, plan.h).
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

struct job_spec;
struct kspec_set;

#define BF_MAX_SUITE		16	/* workloads of one suite job */
#define JOB_SUITE_RECIPE	"suite"	/* jobs.recipe of a suite job */

struct job_suite_entry {
	char *label;			/* the entry's "label", or its recipe's name */
	struct job_spec *job;		/* the entry as a single-recipe job (owned) */
};

/* machines.spread (the names job_spread_name gives are the JSON's). */
enum job_spread {
	JOB_SPREAD_ANY = 0,
	JOB_SPREAD_PIN,
	JOB_SPREAD_BLOCK,
};
const char *job_spread_name(enum job_spread sp);

struct job_spec {
	char *recipe;			/* JOB_SUITE_RECIPE for a suite */
	struct job_suite_entry *suite;	/* a suite's entries, or NULL */
	size_t nsuite;
	char *name;			/* may be NULL */
	char *preset;			/* may be NULL */
	char *machine_class;		/* exactly one of class / names */
	char **machine_names;
	size_t nmachine_names;
	enum job_spread spread;		/* machines.spread */
	json_t *matrix;			/* object axis -> array (owned; {} when absent) */
	json_t *params;			/* object (owned; {} when absent) */
	int iterations;
	int warmup;
	int gap_ms;			/* pause before each iteration but the first */
	int boots;			/* boots to start with (min_boots when adaptive) */
	double target_ci_pct;		/* > 0: adaptive repetitions */
	int min_boots, max_boots;
	char *target_metric;		/* NULL: the recipe's first metric */
	char *kernel;			/* kernel release to boot, or NULL (an axis may set it) */
	char *cmdline;			/* command-line parameters, or NULL (an axis may set it) */
	char *cmdline_base;		/* boot.cmdline_base: added to every boot, or NULL */
	int interleaved;		/* order: "interleaved" (the default) or not */
	json_t *knobs;			/* object knob -> value (owned; {} when absent) */
	json_t *knobs_optional;		/* array of knob names (owned) or NULL */
	json_t *bind;			/* object (owned) or NULL */
	int aslr;			/* -1 absent, 0 off, 1 on */
	int drop_caches;		/* 0/1 */
	int profile_perf;		/* 1: "profile": {"perf": "record"} */
	int profile_freq;		/* Hz, when profile_perf */
	struct kspec_set *kernels;	/* "kernels" (kspec.h; owned) or NULL */
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
/*
 * The same, going on past a field error (BF_ERR_INVALID, RANGE, PARSE) to
 * the next field, each into l (err.h): for a person fixing a whole form.
 * job_parse_all / job_from_json_all return 0 and *out when l gained
 * nothing; BF_ERR_INVALID, d the first error of l and *out the job as far
 * as it parsed when it did (free it with job_free; it is fit only for
 * job_validate_all, and only when its recipe is set and it is no suite);
 * any other error at once, *out untouched. job_validate_all: 0, or
 * BF_ERR_INVALID with d the first of l, or another error at once.
 */
int job_parse_all(const char *text, size_t len, struct job_spec **out, struct bf_diag *d,
    struct bf_diag_list *l);
/* job_parse_all with fill(doc) run on the document before it is parsed
 * (NULL: none); fill returns 0 or BF_ERR_ALLOC. */
int job_parse_with(const char *text, size_t len, int (*fill)(json_t *doc),
    struct job_spec **out, struct bf_diag *d, struct bf_diag_list *l);
int job_from_json_all(json_t *doc, struct job_spec **out, struct bf_diag *d,
    struct bf_diag_list *l);
/*
 * A new submission (POST /api/v1/jobs): job_submit_defaults() writes into
 * doc what a job submitted now gets when it does not say, so that the
 * stored spec and its bundle say it too: "repetitions.gap_ms"
 * JOB_SUBMIT_GAP_MS (a stored spec or a bundle without it meant 0, and
 * job_from_json() still reads it so). 0 or BF_ERR_ALLOC; a doc that is no
 * object, or whose repetitions is none, is left for the parse to refuse.
 * job_parse_submit(): jx_loads, the defaults, job_from_json_all.
 */
#define JOB_SUBMIT_GAP_MS	5
int job_submit_defaults(json_t *doc);
int job_parse_submit(const char *text, size_t len, struct job_spec **out, struct bf_diag *d,
    struct bf_diag_list *l);
int job_validate_all(const struct job_spec *job, const struct recipe *r,
    const char *workdir_root, struct bf_diag *d, struct bf_diag_list *l);
void job_free(struct job_spec *job);

/* A suite job (nsuite > 0). */
int job_is_suite(const struct job_spec *job);
/* job_validate() of each entry against recs[i] (nsuite of them), errors
 * named "suite[i].<field>". */
int job_validate_suite(const struct job_spec *job, const struct recipe *const *recs,
    const char *workdir_root, struct bf_diag *d);
/* The same, every entry's field errors into l (job_validate_all, each
 * named suite[i].<field>). */
int job_validate_suite_all(const struct job_spec *job, const struct recipe *const *recs,
    const char *workdir_root, struct bf_diag *d, struct bf_diag_list *l);
/* The entry labelled label, or -1. */
int job_suite_find(const struct job_spec *job, const char *label);
/* d's field and message, put under prefix ("suite[1]" + "params.x"). */
void job_diag_prefix(struct bf_diag *d, const char *prefix);
/* For job.c: parse doc's "suite" into job; frees job's entries. */
int job_suite_parse(struct job_spec *job, json_t *doc, struct bf_diag *d);
void job_suite_free(struct job_spec *job);
/* For job.c: 1 when an entry of doc's "suite" sets knob name (knobs or matrix). */
int job_suite_sets_knob(const json_t *doc, const char *name);

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

/* For job-*.c: value v of knob name passes knob_check (path names v). */
int job_check_knob(const char *name, const json_t *v, const char *path, struct bf_diag *d);
/* For job-*.c: collecting into l (non-NULL), a field error r goes into l
 * and 0 is returned; otherwise r. */
int job_note(int r, const struct bf_diag *d, struct bf_diag_list *l);
/* For job-*.c: r, or when l gained errors past before, BF_ERR_INVALID and
 * d the first of l. */
int job_notes_end(int r, struct bf_diag *d, const struct bf_diag_list *l, size_t before);

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
