/*
 * fuzz_recipe.c: recipe_parse on arbitrary bytes; an accepted recipe is
 * described as JSON (recipe_to_json, what GET /recipes/{name} serves) and
 * rendered with no values (every parameter missing must be an error, not
 * a crash), and its step rendered with the defaults (workdir files,
 * packages, file metrics). Rendering with job values is in fuzz_job.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recipe *r = NULL;
	struct bf_diag d;
	json_t *j = NULL, *vals = NULL, *defs = NULL, *step = NULL;
	char **argv = NULL, *text = NULL;
	size_t argc = 0;

	if (recipe_parse((const char *)data, size, &r, &d) != 0)
		return 0;
	if ((j = recipe_to_json(r)) != NULL)
		text = json_dumps(j, JSON_COMPACT);
	if ((vals = json_object()) != NULL)
		(void)recipe_render_argv(r, vals, &argv, &argc, &d);
	if ((defs = json_object()) != NULL && (step = json_object()) != NULL) {
		size_t i;

		for (i = 0; i < r->nparams; i++)
			json_object_set(defs, r->params[i].name, r->params[i].def);
		(void)recipe_step_json(r, defs, "/var/tmp/benchfleet", step, &d);
	}
	json_decref(step);
	json_decref(defs);
	recipe_argv_free(argv);
	json_decref(vals);
	free(text);
	json_decref(j);
	recipe_free(r);
	return 0;
}
