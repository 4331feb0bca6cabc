/*
 * fuzz_job.c: job_parse + job_validate against fixed recipes (the repo's
 * recipes/*.json, loaded once), then what POST /jobs does with a valid
 * job: base values, matrix expansion and the argv of every cell. The
 * input's "recipe" field picks the recipe; unknown names use the first.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "path.h"
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_spec *job = NULL;
	struct matrix_cell *cells = NULL;
	const struct recipe *r = recipes[0];
	struct bf_diag d;
	json_t *base = NULL;
	char **argv = NULL;
	size_t i, ncells = 0, argc = 0;

	if (job_parse((const char *)data, size, &job, &d) != 0)
		return 0;
	for (i = 0; i < nrecipes; i++)
		if (job->recipe != NULL && strcmp(job->recipe, names[i]) == 0)
			r = recipes[i];
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
