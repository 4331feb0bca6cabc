/*
 * fuzz_jobs_query.c: GET /jobs's query parameters (api_jobs_param), each
 * of them given the input as its value. What it accepts must be in range
 * (a page within the cap, a state mask of real states, a name, a search
 * text within its cap); what it refuses must name the parameter, and the
 * message must be valid UTF-8, since it becomes the JSON error body.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "jx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "limit", "before", "state", "recipe", "machine",
	    "q", "published" };
	struct store_job_filter f;
	struct bf_diag d;
	json_t *msg;
	char *v;
	size_t i;
	int r, known;

	if (size > 4 * BF_MAX_JOBS_Q || (v = malloc(size + 1)) == NULL)
		return 0;
	memcpy(v, data, size);
	v[size] = '\0';		/* a query value is a C string: MHD stops at a NUL */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		memset(&f, 0, sizeof(f));
		bf_diag_clear(&d);
		r = api_jobs_param(names[i], v, &f, &d);
		if (r != 0) {
			if (r != BF_ERR_INVALID || strcmp(d.field, names[i]) != 0 ||
			    (msg = json_string(d.msg)) == NULL)
				abort();
			json_decref(msg);
			continue;
		}
		if (f.limit > BF_MAX_JOBS_PAGE || f.before < 0 ||
		    f.states >= 1u << STORE_JOB_NSTATES ||
		    (f.q != NULL && strlen(f.q) > BF_MAX_JOBS_Q) ||
		    (f.recipe != NULL && jx_check_name(f.recipe, "", NULL) != 0) ||
		    (f.machine != NULL && jx_check_name(f.machine, "", NULL) != 0) ||
		    (f.published != 0 && f.published != 1))
			abort();
		if (strcmp(names[i], "state") == 0 && f.states == 0)
			abort();	/* an accepted list names at least one state */
	}
	/* only a real parameter name is taken */
	memset(&f, 0, sizeof(f));
	r = api_jobs_param(v, "1", &f, &d);
	for (known = 0, i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		known |= strcmp(v, names[i]) == 0;
	if ((r == BF_ERR_NOTFOUND) == known)
		abort();
	free(v);
	return 0;
}
