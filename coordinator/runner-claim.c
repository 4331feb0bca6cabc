/*
 * runner-claim.c: a claimed run, loaded and checked against its job's plan
 * before anything of it reaches a machine (runner.h). The job and recipe
 * are parsed once from the claim's stored spec, validated and planned
 * again, and the run's cell, boot, order, iterations, warmup and timeout
 * must be what that plan says: a row is only as trustworthy as whatever
 * wrote the store.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "job.h"
#include "jx.h"
#include "matrix.h"
#include "plan.h"
#include "recipe.h"
#include "runner.h"

static int
str_eq_null(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

void
runner_claim_free(struct runner_claim *rc)
{
	if (rc == NULL)
		return;
	if (rc->suite != NULL) {
		job_free(rc->suite);	/* rc->job and rc->recipe are its entry's */
		for (size_t i = 0; i < rc->nrecs; i++)
			recipe_free(rc->recs[i]);
		free(rc->recs);
	} else {
		job_free(rc->job);
		recipe_free(rc->recipe);
	}
	json_decref(rc->values);
	json_decref(rc->knobs);
	json_decref(rc->spec);
	free(rc);
}

/* Cell m of the plan holds the claim's values, knobs, kernel and cmdline. */
static int
cell_holds(const struct runner_claim *rc, const struct matrix_cell *m)
{
	const struct store_claim *c = rc->c;

	return json_equal(m->values, rc->values) &&
	    (json_object_size(m->knobs) == 0 ? rc->knobs == NULL ||
	    json_object_size(rc->knobs) == 0 :
	    rc->knobs != NULL && json_equal(m->knobs, rc->knobs)) &&
	    str_eq_null(m->kernel, c->kernel) && str_eq_null(m->cmdline, c->cmdline);
}

/* The claim's cell of the plan: its cell_index, holding its values, knobs,
 * kernel and cmdline; else, for a number in range, any cell that holds
 * them (a store written before specs kept their key order has its matrix
 * axes sorted, so its cells expand in another order than they were
 * numbered). A run that no cell of the validated plan holds, or whose
 * number is no cell's, is refused. */
static int
runner_claim_cell(const struct runner_claim *rc, const struct plan *p, size_t *cellp,
    struct bf_diag *d)
{
	const struct store_claim *c = rc->c;
	size_t i;

	if (c->cell_index >= 0 && (uint64_t)c->cell_index < p->ncells) {
		if (cell_holds(rc, &p->cells[c->cell_index])) {
			*cellp = (size_t)c->cell_index;
			return 0;
		}
		for (i = 0; i < p->ncells; i++)
			if (cell_holds(rc, &p->cells[i])) {
				*cellp = i;
				return 0;
			}
	}
	bf_diag_set(d, NULL, "run %lld: its values, knobs or boot are not a cell of job "
	    "%lld as submitted (cell %lld); refusing to run what the API did not validate",
	    (long long)c->run_id, (long long)c->job_id, (long long)c->cell_index);
	return BF_ERR_INVALID;
}

/*
 * A suite's run: its workload names its entry, whose recipe must be the
 * run's; the whole suite is validated and planned again, and the run's
 * cell must be a cell of that entry holding its values, knobs and boot.
 * rc->job and rc->recipe become the entry's.
 */
static int
runner_claim_suite(struct runner_claim *rc, json_t *jobdoc, const char *workdir_root,
    struct plan **pp, size_t *cellp, struct bf_diag *d)
{
	const struct store_claim *c = rc->c;
	json_t *ra = json_object_get(rc->spec, "recipes"), *rdoc;
	struct plan *p;
	size_t i;
	int e, ret;

	if ((ret = job_from_json(jobdoc, &rc->suite, d)) != 0)
		return ret;
	if (!job_is_suite(rc->suite) || !json_is_array(ra) ||
	    json_array_size(ra) != rc->suite->nsuite) {
		bf_diag_set(d, "spec", "run %lld: job %lld has %zu recipes for %zu workloads",
		    (long long)c->run_id, (long long)c->job_id, json_array_size(ra),
		    rc->suite->nsuite);
		return BF_ERR_INVALID;
	}
	if ((rc->recs = calloc(rc->suite->nsuite, sizeof(*rc->recs))) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(ra, i, rdoc) {
		if ((ret = recipe_from_json(rdoc, &rc->recs[i], d)) != 0)
			return ret;
		rc->nrecs++;
		if (strcmp(rc->recs[i]->name, rc->suite->suite[i].job->recipe) != 0) {
			bf_diag_set(d, "spec", "run %lld: suite[%zu] names recipe \"%s\" but "
			    "its stored recipe is \"%s\"", (long long)c->run_id, i,
			    rc->suite->suite[i].job->recipe, rc->recs[i]->name);
			return BF_ERR_INVALID;
		}
	}
	if ((e = job_suite_find(rc->suite, c->workload)) < 0 ||
	    strcmp(c->recipe, rc->recs[e]->name) != 0) {
		bf_diag_set(d, "recipe", "run %lld: workload \"%s\" with recipe \"%s\" is no "
		    "entry of the suite of job %lld", (long long)c->run_id,
		    c->workload ? c->workload : "(none)", c->recipe, (long long)c->job_id);
		return BF_ERR_INVALID;
	}
	rc->job = rc->suite->suite[e].job;
	rc->recipe = rc->recs[e];
	rc->recipe_json = json_array_get(ra, (size_t)e);
	if ((ret = job_validate_suite(rc->suite, (const struct recipe *const *)rc->recs,
	    workdir_root, d)) != 0 ||
	    (ret = plan_suite(rc->suite, (const struct recipe *const *)rc->recs, pp, d)) != 0 ||
	    (ret = jx_loads(c->values_json, strlen(c->values_json), BF_MAX_API_BODY,
	    &rc->values, d)) != 0 ||
	    (c->knobs_json != NULL && (ret = jx_loads(c->knobs_json, strlen(c->knobs_json),
	    BF_MAX_API_BODY, &rc->knobs, d)) != 0))
		return ret;
	p = *pp;
	/* a suite's cells were never renumbered: the cell is its number's */
	if (c->cell_index < 0 || (uint64_t)c->cell_index >= p->ncells ||
	    p->cell_entry[c->cell_index] != (size_t)e ||
	    !cell_holds(rc, &p->cells[c->cell_index])) {
		bf_diag_set(d, NULL, "run %lld: its values, knobs or boot are not cell %lld of "
		    "workload %s of job %lld as submitted; refusing to run what the API did not "
		    "validate", (long long)c->run_id, (long long)c->cell_index, c->workload,
		    (long long)c->job_id);
		return BF_ERR_INVALID;
	}
	*cellp = (size_t)c->cell_index;
	return 0;
}

int
runner_claim_load(const struct store_claim *c, const char *workdir_root,
    struct runner_claim **out, struct bf_diag *d)
{
	struct runner_claim *rc = NULL;
	struct plan *p = NULL;
	json_t *jobdoc, *rdoc;
	size_t cell = 0;
	int ret;

	*out = NULL;
	if ((rc = calloc(1, sizeof(*rc))) == NULL) {
		ret = BF_ERR_ALLOC;
		goto out;
	}
	rc->c = c;
	/* the one parse of the job's stored spec for the whole run */
	if ((ret = jx_loads(c->spec_json, strlen(c->spec_json), BF_MAX_API_BODY * 2, &rc->spec,
	    d)) != 0 ||
	    (ret = jx_obj(rc->spec, "job", JX_REQUIRED, &jobdoc, "spec", d)) != 0)
		goto out;
	if (json_object_get(rc->spec, "recipes") != NULL || c->workload != NULL) {
		if ((ret = runner_claim_suite(rc, jobdoc, workdir_root, &p, &cell, d)) != 0)
			goto out;
		goto planned;
	}
	if ((ret = jx_obj(rc->spec, "recipe", JX_REQUIRED, &rdoc, "spec", d)) != 0 ||
	    (ret = recipe_from_json(rdoc, &rc->recipe, d)) != 0 ||
	    (ret = job_from_json(jobdoc, &rc->job, d)) != 0)
		goto out;
	rc->recipe_json = rdoc;
	if (strcmp(rc->job->recipe, rc->recipe->name) != 0 ||
	    strcmp(c->recipe, rc->recipe->name) != 0) {
		bf_diag_set(d, "recipe", "run %lld: recipe \"%s\" of the run, \"%s\" of its job "
		    "and \"%s\" stored with it differ", (long long)c->run_id, c->recipe,
		    rc->job->recipe, rc->recipe->name);
		ret = BF_ERR_INVALID;
		goto out;
	}
	if ((ret = job_validate(rc->job, rc->recipe, workdir_root, d)) != 0 ||
	    (ret = plan_job(rc->job, rc->recipe, &p, d)) != 0 ||
	    (ret = jx_loads(c->values_json, strlen(c->values_json), BF_MAX_API_BODY,
	    &rc->values, d)) != 0 ||
	    (c->knobs_json != NULL && (ret = jx_loads(c->knobs_json, strlen(c->knobs_json),
	    BF_MAX_API_BODY, &rc->knobs, d)) != 0))
		goto out;
	if ((ret = runner_claim_cell(rc, p, &cell, d)) != 0)
		goto out;
planned:
	/* boots past the job's are those adaptive repetitions added */
	if ((ret = plan_run_of(rc->job, rc->recipe, cell, c->boot, &rc->run)) != 0) {
		bf_diag_set(d, NULL, "run %lld: boot %d is not a boot of job %lld",
		    (long long)c->run_id, c->boot, (long long)c->job_id);
		goto out;
	}
	/* a cell found by what it holds (runner_claim_cell) ranks where its
	 * number put it when the run was planned */
	if (cell != (size_t)c->cell_index) {
		struct plan_run at;

		if (plan_run_of(rc->job, rc->recipe, (size_t)c->cell_index, c->boot, &at) == 0)
			rc->run.order = at.order;
	}
	/* the run's columns are what runs; they must be its plan */
	if (c->run_order != rc->run.order || c->iterations != rc->run.iterations ||
	    c->warmup != rc->run.warmup || c->timeout_s != rc->run.timeout_s) {
		bf_diag_set(d, NULL, "run %lld: order %lld, iterations %d, warmup %d and "
		    "timeout_s %d stored with it are not its plan (%lld, %d, %d, %d); refusing "
		    "to run what the API did not plan", (long long)c->run_id,
		    (long long)c->run_order, c->iterations, c->warmup, c->timeout_s,
		    (long long)rc->run.order, rc->run.iterations, rc->run.warmup,
		    rc->run.timeout_s);
		ret = BF_ERR_INVALID;
		goto out;
	}
	*out = rc;
	rc = NULL;
	ret = 0;
out:
	plan_free(p);
	runner_claim_free(rc);
	return ret;
}

