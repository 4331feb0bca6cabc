/*
 * coord_fixture.h: what the runner and scheduler unit tests share: a store
 * in a temporary directory, the repository's recipes, and jobs submitted
 * as POST /jobs would (parse, validate, plan_job's runs).
 * Header-only: each coord_test_*.c is one program.
 */
#ifndef BF_COORD_FIXTURE_H
#define BF_COORD_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "job.h"
#include "plan.h"
#include "recipes.h"
#include "store.h"

/* The agent's sha256 the fake machine reports: runner_ensure_agent trusts it. */
#define FIX_AGENT_SHA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static inline int
fix_submit(struct store *st, const struct recipes *rs, const char *text, int64_t *idp)
{
	struct job_spec *job = NULL;
	const struct recipe *rec;
	struct plan *p = NULL;
	struct store_run_new *runs = NULL;
	char **values = NULL, **axes = NULL, **knobs = NULL, *spec = NULL;
	json_t *specj = NULL;
	size_t i, ncells = 0;
	struct bf_diag d;
	int r = BF_ERR_ALLOC;

	bf_diag_clear(&d);
	if ((r = job_parse(text, strlen(text), &job, &d)) != 0 ||
	    (rec = recipes_get(rs, job->recipe)) == NULL ||
	    (r = job_validate(job, rec, NULL, &d)) != 0 ||
	    (r = plan_job(job, rec, &p, &d)) != 0) {
		fprintf(stderr, "fix_submit: %s\n", d.msg);
		if (r == 0)
			r = BF_ERR_NOTFOUND;
		goto out;
	}
	r = BF_ERR_ALLOC;
	ncells = p->ncells;
	if ((runs = calloc(p->nruns, sizeof(*runs))) == NULL ||
	    (values = calloc(ncells, sizeof(*values))) == NULL ||
	    (axes = calloc(ncells, sizeof(*axes))) == NULL ||
	    (knobs = calloc(ncells, sizeof(*knobs))) == NULL)
		goto out;
	for (i = 0; i < ncells; i++)
		if ((values[i] = json_dumps(p->cells[i].values, JSON_COMPACT)) == NULL ||
		    (axes[i] = json_dumps(p->cells[i].axes, JSON_COMPACT)) == NULL ||
		    (json_object_size(p->cells[i].knobs) > 0 && (knobs[i] =
		    json_dumps(p->cells[i].knobs, JSON_COMPACT | JSON_SORT_KEYS)) == NULL))
			goto out;
	for (i = 0; i < p->nruns; i++) {
		const struct plan_run *pr = &p->runs[i];
		const struct matrix_cell *c = &p->cells[pr->cell];
		struct store_run_new *rn = &runs[i];

		rn->cell_index = c->index;
		rn->label = c->label;
		rn->axes_json = axes[pr->cell];
		rn->values_json = values[pr->cell];
		rn->knobs_json = knobs[pr->cell];
		rn->kernel = c->kernel;
		rn->cmdline = c->cmdline;
		rn->boot = pr->boot;
		rn->run_order = pr->order;
		rn->iterations = pr->iterations;
		rn->warmup = pr->warmup;
		rn->timeout_s = pr->timeout_s;
	}
	if ((specj = json_pack("{s:O,s:O}", "job", job->json, "recipe", rec->json)) == NULL ||
	    (spec = json_dumps(specj, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
		goto out;
	r = store_job_create(st, job->recipe, job->name, spec, job->machine_class, NULL, runs,
	    p->nruns, idp);
out:
	for (i = 0; i < ncells; i++) {
		free(values ? values[i] : NULL);
		free(axes ? axes[i] : NULL);
		free(knobs ? knobs[i] : NULL);
	}
	free(values);
	free(axes);
	free(knobs);
	free(runs);
	free(spec);
	json_decref(specj);
	plan_free(p);
	job_free(job);
	return r;
}

/* A machine of class "fake"; boot: its boot configuration or NULL. */
static inline int
fix_machine(struct store *st, const char *name, const char *boot)
{
	struct store_machine m;
	int r;

	memset(&m, 0, sizeof(m));
	m.name = (char *)name;
	m.host = (char *)"127.0.0.1";
	m.port = 22;
	m.user = (char *)"root";
	m.key_path = (char *)"/nonexistent/key";
	m.klass = (char *)"fake";
	if ((r = store_machine_add(st, &m, NULL)) != 0 || boot == NULL)
		return r;
	return store_machine_set_boot(st, name, boot);
}

/* The runs of a job as the API serves them ({"runs":[...]}), or NULL. */
static inline json_t *
fix_runs(struct store *st, int64_t job_id)
{
	json_t *j = NULL;

	return store_job_runs_json(st, job_id, &j) == 0 ? j : NULL;
}

/* Runs of the job in state (NULL: all), and their samples into *nsamples. */
static inline int
fix_count(struct store *st, int64_t job_id, const char *state, size_t *nsamples)
{
	json_t *j = fix_runs(st, job_id), *run;
	size_t i;
	int n = 0;

	if (nsamples != NULL)
		*nsamples = 0;
	json_array_foreach(json_object_get(j, "runs"), i, run) {
		if (state != NULL &&
		    strcmp(json_string_value(json_object_get(run, "state")), state) != 0)
			continue;
		n++;
		if (nsamples != NULL)
			*nsamples += json_array_size(json_object_get(run, "samples"));
	}
	json_decref(j);
	return n;
}

#endif
