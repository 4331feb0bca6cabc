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
 *                   "warmup": 1,               0..100, default 0
 *                   "boots": 1},               1..BF_MAX_BOOTS, default 1
 *   "order": "sequential" | "interleaved"      default "sequential"
 * }
 *
 * Unknown keys are refused, naming the key. A parameter may be an axis or a
 * fixed value, not both. Values of a cell are resolved as:
 * recipe defaults <- preset <- params <- the cell's axis values.
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
	int boots;
	int interleaved;		/* order == "interleaved" */
	json_t *json;			/* the document (owned) */
};

/* Structure and types only; needs no recipe. *out freed with job_free(). */
int job_parse(const char *text, size_t len, struct job_spec **out, struct bf_diag *d);
int job_from_json(json_t *doc, struct job_spec **out, struct bf_diag *d);
/* Check against the recipe: preset exists, axes and params are parameters
 * of it, every value passes recipe_check_value(), cell count <= BF_MAX_CELLS. */
int job_validate(const struct job_spec *job, const struct recipe *r, struct bf_diag *d);
void job_free(struct job_spec *job);

/* The resolved fixed values (defaults <- preset <- params), a new object. */
int job_base_values(const struct job_spec *job, const struct recipe *r, json_t **out,
    struct bf_diag *d);

#endif
