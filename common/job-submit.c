/*
 * job-submit.c: what a job submitted now gets when it does not say (job.h).
 *
 * A default that changes between versions must not change the meaning of
 * a spec already stored or already in another lab's bundle: those are read
 * with job_from_json(), where an absent field keeps the meaning it had when
 * it was written. So a submission default is written into the document
 * itself, before it is parsed and stored: the stored spec, the report and
 * the bundle then say the value, and a rerun elsewhere uses it.
 */
#include <stdlib.h>

#include "err.h"
#include "job.h"

int
job_submit_defaults(json_t *doc)
{
	json_t *reps;

	/* not an object: job_from_json_all names the error, not this */
	if (!json_is_object(doc))
		return 0;
	if ((reps = json_object_get(doc, "repetitions")) == NULL) {
		if ((reps = json_object()) == NULL)
			return BF_ERR_ALLOC;
		if (json_object_set_new(doc, "repetitions", reps) != 0)
			return BF_ERR_ALLOC;
	}
	if (!json_is_object(reps) || json_object_get(reps, "gap_ms") != NULL)
		return 0;
	return json_object_set_new(reps, "gap_ms", json_integer(JOB_SUBMIT_GAP_MS)) != 0 ?
	    BF_ERR_ALLOC : 0;
}

int
job_parse_submit(const char *text, size_t len, struct job_spec **out, struct bf_diag *d,
    struct bf_diag_list *l)
{
	return job_parse_with(text, len, job_submit_defaults, out, d, l);
}
