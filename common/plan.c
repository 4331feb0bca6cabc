/*
 * plan.c: a job's runs and a run's step, typed (plan.h). The one place
 * that decides the claim order, the iterations, the warm-up and the
 * timeout of every run, and the one builder of the agent's step.
 */
#include <stdlib.h>
#include <string.h>

#include "jx.h"
#include "plan.h"
#include "step-schema.h"

enum plan_order
plan_order_of(const struct job_spec *job)
{
	return job->interleaved ? PLAN_INTERLEAVED : PLAN_SEQUENTIAL;
}

int64_t
plan_run_order(enum plan_order order, size_t cell, int boot)
{
	if (cell >= BF_MAX_CELLS || boot < 0 || boot >= BF_MAX_BOOTS)
		return -1;
	if (order == PLAN_SEQUENTIAL)
		return (int64_t)cell * PLAN_ORDER_CELL_STEP + (int64_t)boot * PLAN_ORDER_BOOT_STEP;
	return (int64_t)boot * PLAN_ORDER_BOOT_STEP + (int64_t)cell;
}

int
plan_run_of(const struct job_spec *job, const struct recipe *r, size_t cell, int boot,
    struct plan_run *out)
{
	int64_t order = plan_run_order(plan_order_of(job), cell, boot);
	int boots = job->target_ci_pct > 0 ? job->max_boots : job->boots;

	memset(out, 0, sizeof(*out));
	if (order < 0 || boot >= boots || job->iterations < 1 || job->iterations > BF_MAX_ITERATIONS ||
	    job->warmup < 0 || job->warmup > BF_MAX_WARMUP || r->timeout_s < 1 ||
	    r->timeout_s > BF_MAX_TIMEOUT_S)
		return BF_ERR_INVALID;
	out->cell = cell;
	out->boot = boot;
	out->order = order;
	out->iterations = job->iterations;
	out->warmup = job->warmup;
	out->timeout_s = (int)r->timeout_s;
	return 0;
}

void
plan_free(struct plan *p)
{
	size_t i;

	if (p == NULL)
		return;
	matrix_free(p->cells, p->ncells);
	free(p->cell_entry);
	free(p->entry_base);
	free(p->runs);
	for (i = 0; p->machines != NULL && i < p->nmachines; i++)
		free(p->machines[i]);
	free(p->machines);
	free(p);
}

int
plan_block(struct plan *p, const char *const *names, size_t n, struct bf_diag *d)
{
	struct plan_run *runs = NULL;
	char **ms = NULL;
	size_t m, i;
	int r;

	if (p == NULL || names == NULL || n == 0 || p->machines != NULL)
		return BF_ERR_INVALID;
	if (p->nruns > BF_MAX_CELLS / n) {
		bf_diag_set(d, "machines.spread", "block: %zu runs on each of %zu machines is "
		    "more than %d runs", p->nruns, n, BF_MAX_CELLS);
		return BF_ERR_INVALID;
	}
	if ((runs = calloc(p->nruns * n + 1, sizeof(*runs))) == NULL ||
	    (ms = calloc(n, sizeof(*ms))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (m = 0; m < n; m++) {
		if ((ms[m] = strdup(names[m])) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		for (i = 0; i < p->nruns; i++) {
			runs[m * p->nruns + i] = p->runs[i];
			runs[m * p->nruns + i].machine = m;
		}
	}
	free(p->runs);
	p->runs = runs;
	p->nruns *= n;
	p->machines = ms;
	p->nmachines = n;
	runs = NULL;
	ms = NULL;
	r = 0;
out:
	for (m = 0; ms != NULL && m < n; m++)
		free(ms[m]);
	free(ms);
	free(runs);
	return r;
}

int
plan_job(const struct job_spec *job, const struct recipe *r, struct plan **out,
    struct bf_diag *d)
{
	struct plan *p = NULL;
	size_t i, b, n = 0;
	int ret;

	*out = NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		ret = BF_ERR_ALLOC;
		goto out;
	}
	p->order = plan_order_of(job);
	p->machine_class = job->machine_class;
	p->machine_names = job->machine_names;
	p->nmachine_names = job->nmachine_names;
	if ((ret = matrix_expand(job, r, &p->cells, &p->ncells, d)) != 0)
		goto out;
	if (job->boots < 1 || job->boots > BF_MAX_BOOTS ||
	    (size_t)job->boots > BF_MAX_CELLS / (p->ncells ? p->ncells : 1)) {
		bf_diag_set(d, "repetitions.boots", "%d boots x %zu cells is "
		    "more than %d runs", job->boots, p->ncells, BF_MAX_CELLS);
		ret = BF_ERR_INVALID;
		goto out;
	}
	p->nruns = p->ncells * (size_t)job->boots;
	if ((p->runs = calloc(p->nruns ? p->nruns : 1, sizeof(*p->runs))) == NULL) {
		ret = BF_ERR_ALLOC;
		goto out;
	}
	/* stored boot-major whatever the order, so run ids are as they always
	 * were; the claim goes by run_order */
	for (b = 0; b < (size_t)job->boots; b++)
		for (i = 0; i < p->ncells; i++)
			if ((ret = plan_run_of(job, r, i, (int)b, &p->runs[n++])) != 0) {
				bf_diag_set(d, "repetitions", "run %zu of cell %zu: iterations %d, "
				    "warmup %d or timeout_s %lld out of range", b, i,
				    job->iterations, job->warmup, (long long)r->timeout_s);
				goto out;
			}
	*out = p;
	p = NULL;
	ret = 0;
out:
	plan_free(p);
	return ret;
}

/*
 * What the job asks of the machine itself: the cell's knobs (applied, read
 * back and restored by the agent), NUMA/CPU binding, ASLR, drop_caches, and
 * the profiled iteration.
 */
static int
plan_step_machine_state(const struct plan_step_in *in, json_t *step)
{
	const struct job_spec *job = in->job;

	const char *name;
	json_t *opt, *v;
	size_t i;

	if (in->knobs != NULL && json_object_size(in->knobs) > 0 &&
	    json_object_set(step, "knobs", (json_t *)in->knobs) != 0)
		return BF_ERR_ALLOC;
	/* knobs_optional names the cell's knobs only: the agent refuses others */
	if (in->knobs != NULL && json_array_size(job->knobs_optional) > 0) {
		if ((opt = json_array()) == NULL ||
		    json_object_set_new(step, STEP_FIELD_KNOBS_OPTIONAL, opt) != 0)
			return BF_ERR_ALLOC;
		json_array_foreach(job->knobs_optional, i, v) {
			name = json_string_value(v);
			if (name != NULL && json_object_get(in->knobs, name) != NULL &&
			    json_array_append(opt, v) != 0)
				return BF_ERR_ALLOC;
		}
	}
	if (json_is_object(job->bind) && json_object_set(step, "bind", job->bind) != 0)
		return BF_ERR_ALLOC;
	if (job->aslr == 0 && json_object_set_new(step, "aslr", json_false()) != 0)
		return BF_ERR_ALLOC;
	if (job->drop_caches == 1 && json_object_set_new(step, "drop_caches", json_true()) != 0)
		return BF_ERR_ALLOC;
	if (job->gap_ms > 0 && json_object_set_new(step, STEP_FIELD_GAP_MS,
	    json_integer(job->gap_ms)) != 0)
		return BF_ERR_ALLOC;
	if (job->profile_perf && json_object_set_new(step, STEP_FIELD_PROFILE,
	    json_pack("{s:s,s:i}", STEP_PROFILE_PERF, STEP_PROFILE_RECORD, STEP_PROFILE_FREQ,
	    job->profile_freq)) != 0)
		return BF_ERR_ALLOC;
	return 0;
}

int
plan_step(const struct plan_step_in *in, json_t **stepp, struct bf_diag *d)
{
	const struct plan_run *run = in->run;
	json_t *step = NULL, *argv = NULL;
	char **av = NULL;
	size_t ac = 0, i;
	int ret;

	*stepp = NULL;
	if (run->iterations < 1 || run->iterations > BF_MAX_ITERATIONS ||
	    run->warmup < 0 || run->warmup > BF_MAX_WARMUP ||
	    run->timeout_s < 1 || run->timeout_s > BF_MAX_TIMEOUT_S) {
		bf_diag_set(d, "repetitions", "run %lld: iterations %d (1..%d), warmup %d "
		    "(0..%d) or timeout_s %d (1..%d) out of range", (long long)in->run_id,
		    run->iterations, BF_MAX_ITERATIONS, run->warmup, BF_MAX_WARMUP,
		    run->timeout_s, BF_MAX_TIMEOUT_S);
		ret = BF_ERR_INVALID;
		goto out;
	}
	if (in->knobs != NULL && !json_is_object(in->knobs)) {
		bf_diag_set(d, "knobs", "run %lld: knobs are %s, not an object",
		    (long long)in->run_id, jx_type_name(in->knobs));
		ret = BF_ERR_INVALID;
		goto out;
	}
	if ((ret = recipe_render_argv(in->recipe, in->values, &av, &ac, d)) != 0)
		goto out;
	ret = BF_ERR_ALLOC;
	if ((argv = json_array()) == NULL)
		goto out;
	for (i = 0; i < ac; i++)
		if (json_array_append_new(argv, json_string(av[i])) != 0)
			goto out;
	step = json_pack("{s:I,s:O,s:I,s:I,s:I,s:{s:s}}", "run", (json_int_t)in->run_id,
	    "argv", argv, "iterations", (json_int_t)run->iterations, "warmup",
	    (json_int_t)run->warmup, "timeout_s", (json_int_t)run->timeout_s, "env", "LC_ALL",
	    "C");
	if (step == NULL)
		goto out;
	/* setup, pre_iteration, services and the output metrics */
	if ((ret = recipe_step_json(in->recipe, in->values, in->workdir_root, step, d)) != 0 ||
	    (ret = plan_step_machine_state(in, step)) != 0)
		goto out;
	*stepp = step;
	step = NULL;
	ret = 0;
out:
	json_decref(step);
	json_decref(argv);
	recipe_argv_free(av);
	return ret;
}
