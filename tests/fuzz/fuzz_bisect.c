/*
 * fuzz_bisect.c: a bisection request as POST /bisections checks it
 * (bisect_spec_check against the repo's recipes, fixed git roots), the
 * step job made from a spec that passed (bisect_step_job, then parsed as
 * a job again), the revision check on the raw bytes, and the verdict on
 * samples read from the input as doubles (bisect_classify, never a
 * crash, NaN and infinities included).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "job.h"
#include "recipes.h"

#ifndef BF_FUZZ_RECIPES
#define BF_FUZZ_RECIPES "recipes"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct recipes *rs;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("BF_FUZZ_RECIPES") ? getenv("BF_FUZZ_RECIPES") : BF_FUZZ_RECIPES;
	struct bf_diag d;

	(void)argc;
	(void)argv;
	if (recipes_load_dir(dir, &rs, &d) != 0) {
		fprintf(stderr, "fuzz_bisect: %s: %s\n", dir, d.msg);
		abort();
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bf_diag_list *l;
	struct bf_diag d;
	struct job_spec *job = NULL;
	struct bisect_samples s[3];
	struct bisect_class c;
	json_error_t je;
	json_t *body, *spec = NULL, *jdoc;
	double v[3][16];
	int boot[3][16];
	char *text;
	size_t i, k, n;

	if (size > 65536 || (text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	(void)bisect_check_rev(text, "good", &d);
	if ((body = json_loadb(text, size, 0, &je)) != NULL &&
	    (l = calloc(1, sizeof(*l))) != NULL) {
		if (bisect_spec_check(body, rs, "/srv:/var/tmp", NULL, &spec, &d, l) == 0) {
			if (l->total != 0)
				abort();	/* accepted with errors listed */
			jdoc = bisect_step_job(spec, 1, 2, 3, "0123456789abcdef0123456789abcdef01234567",
			    "89abcdef0123456789abcdef0123456789abcdef",
			    "fedcba9876543210fedcba9876543210fedcba98");
			if (jdoc == NULL || job_from_json(jdoc, &job, &d) != 0)
				abort();	/* a checked spec makes a job that parses */
			job_free(job);
			json_decref(jdoc);
		} else if (spec != NULL) {
			abort();
		}
		json_decref(spec);
		free(l);
	}
	json_decref(body);
	/* samples: the input as up to 3 x 16 doubles */
	n = size / sizeof(double);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 16 && k * 16 + i < n; i++) {
			memcpy(&v[k][i], data + (k * 16 + i) * sizeof(double), sizeof(double));
			boot[k][i] = (int)(i % 3);
		}
		s[k] = (struct bisect_samples){ v[k], boot[k], i };
	}
	(void)bisect_classify(&s[0], &s[1], &s[2], size & 1, 2.0, (int)(size & 2), &c);
	free(text);
	return 0;
}
