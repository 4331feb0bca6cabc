/*
 * fuzz_job.c: job_parse + job_validate against fixed recipes (the repo's
 * recipes/*.json, loaded once), then what POST /jobs does with a valid
 * job: base values, matrix expansion and the argv of every cell. The
 * input's "recipe" field picks the recipe; unknown names use the first.
 * A suite (job.h) is validated entry by entry and planned (plan_suite),
 * each entry's recipe picked by its name the same way. A job's "kernels"
 * (kspec.h) are checked against fixed git roots as POST /jobs does.
 * First, the collecting pass POST /jobs makes (job_parse_all, then
 * job_validate_all of the job as far as it parsed): capped, every entry
 * a message, and its first error the one job_parse stops at.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "kspec.h"
#include "path.h"
#include "plan.h"
#include "matrix.h"
#include "recipe.h"

#ifndef BF_FUZZ_RECIPES
#define BF_FUZZ_RECIPES "recipes"
#endif
#define FUZZ_MAX_RECIPES 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct recipe *recipes[FUZZ_MAX_RECIPES];
static const char *names[FUZZ_MAX_RECIPES];
static size_t nrecipes;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("BF_FUZZ_RECIPES") ? getenv("BF_FUZZ_RECIPES") : BF_FUZZ_RECIPES;
	char path[4096];
	struct dirent *e;
	struct bf_diag d;
	DIR *dp;

	if ((dp = opendir(dir)) == NULL) {
		fprintf(stderr, "fuzz_job: %s: cannot open the recipe directory\n", dir);
		abort();
	}
	while ((e = readdir(dp)) != NULL && nrecipes < FUZZ_MAX_RECIPES) {
		size_t n = strlen(e->d_name);

		if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (recipe_load_file(path, &recipes[nrecipes], &d) != 0) {
			fprintf(stderr, "fuzz_job: %s: %s\n", path, d.msg);
			abort();
		}
		names[nrecipes] = strndup(e->d_name, n - 5);
		nrecipes++;
	}
	closedir(dp);
	if (nrecipes == 0)
		abort();
	return 0;
}

/* The recipe called name, or the first. */
static const struct recipe *
fuzz_recipe(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < nrecipes; i++)
		if (strcmp(name, names[i]) == 0)
			return recipes[i];
	return recipes[0];
}

/* A suite: every entry against its recipe, the plan, each cell's argv. */
static void
fuzz_suite(const struct job_spec *job)
{
	const struct recipe *recs[BF_MAX_SUITE];
	struct plan *p = NULL;
	struct bf_diag d;
	char **argv = NULL;
	size_t i, argc = 0;

	for (i = 0; i < job->nsuite; i++)
		recs[i] = fuzz_recipe(job->suite[i].job->recipe);
	if (job_validate_suite(job, recs, PATH_DEFAULT_ROOT, &d) != 0 ||
	    plan_suite(job, recs, &p, &d) != 0)
		goto out;
	if (p->nruns != p->ncells * (size_t)job->boots)
		abort();
	for (i = 0; i < p->ncells; i++) {
		if (p->cell_entry[i] >= job->nsuite || p->cells[i].index != i)
			abort();
		if (recipe_render_argv(recs[p->cell_entry[i]], p->cells[i].values, &argv, &argc,
		    &d) == 0 && (argc == 0 || argv[argc] != NULL))
			abort();
		recipe_argv_free(argv);
		argv = NULL;
	}
out:
	plan_free(p);
}

/* Every field error at once, as POST /jobs collects them. */
static void
fuzz_all(const uint8_t *data, size_t size)
{
	static struct bf_diag_list l;
	struct job_spec *job = NULL, *one = NULL;
	struct bf_diag d, d1;
	size_t i;
	int r, r1;

	bf_diag_list_clear(&l);
	r = job_parse_all((const char *)data, size, &job, &d, &l);
	r1 = job_parse((const char *)data, size, &one, &d1);
	if (l.n > BF_DIAG_LIST_MAX || l.n > l.total || (r == 0) != (r1 == 0) ||
	    (r == 0 && l.total != 0))
		abort();
	/* the first error collected is the one the first-error parse stops at */
	if (r1 == BF_ERR_INVALID && l.n > 0 && strcmp(l.item[0].field, d1.field) != 0)
		abort();
	for (i = 0; i < l.n; i++)
		if (l.item[i].msg[0] == '\0')
			abort();
	if ((r == 0 || r == BF_ERR_INVALID) && job != NULL && job->recipe != NULL &&
	    !job_is_suite(job))
		(void)job_validate_all(job, fuzz_recipe(job->recipe), PATH_DEFAULT_ROOT, &d, &l);
	if (r == 0 && job_is_suite(job)) {
		const struct recipe *recs[BF_MAX_SUITE];

		for (i = 0; i < job->nsuite; i++)
			recs[i] = fuzz_recipe(job->suite[i].job->recipe);
		(void)job_validate_suite_all(job, recs, PATH_DEFAULT_ROOT, &d, &l);
	}
	if (l.n > BF_DIAG_LIST_MAX || l.n > l.total)
		abort();
	job_free(job);
	job_free(one);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_spec *job = NULL;
	struct matrix_cell *cells = NULL;
	const struct recipe *r;
	struct bf_diag d;
	json_t *base = NULL;
	char **argv = NULL;
	size_t i, ncells = 0, argc = 0;

	fuzz_all(data, size);
	if (job_parse((const char *)data, size, &job, &d) != 0)
		return 0;
	if (job_is_suite(job)) {
		fuzz_suite(job);
		goto out;
	}
	(void)kspec_check_roots(job->kernels, "/srv/git:/opt/k", &d);
	r = fuzz_recipe(job->recipe);
	if (job_validate(job, r, PATH_DEFAULT_ROOT, &d) != 0)
		goto out;
	if (job_base_values(job, r, &base, &d) != 0)
		goto out;
	if (matrix_expand(job, r, &cells, &ncells, &d) != 0)
		goto out;
	for (i = 0; i < ncells; i++) {
		if (recipe_render_argv(r, cells[i].values, &argv, &argc, &d) == 0 &&
		    (argc == 0 || argv[argc] != NULL))
			abort();	/* argv must be NULL-terminated */
		recipe_argv_free(argv);
		argv = NULL;
	}
out:
	matrix_free(cells, ncells);
	json_decref(base);
	job_free(job);
	return 0;
}
