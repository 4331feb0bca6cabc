/*
 * api-view.c: the JSON shapes of the store's typed rows (api-view.h).
 */
#include <stdlib.h>

#include "api-view.h"

/* Text we wrote after validation; a damaged value shows as null rather
 * than failing the whole list. */
static json_t *
view_json_text(const char *text)
{
	json_t *v;

	if (text == NULL || (v = json_loads(text, 0, NULL)) == NULL)
		return json_null();
	return v;
}

static json_t *
view_time(int has, double t)
{
	return has ? json_real(t) : json_null();
}

json_t *
api_view_job(const struct store_job *j)
{
	const int64_t *n = j->runs;
	int64_t total = 0;
	json_t *o;
	int i;

	for (i = 0; i < STORE_RUN_NSTATES; i++)
		total += n[i];
	o = json_pack("{s:I, s:s, s:o, s:s, s:I, s:o, s:o, s:o, s:o,"
	    " s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "id", (json_int_t)j->id, "recipe", j->recipe,
	    "name", j->name != NULL ? json_string(j->name) : json_null(),
	    "state", j->state, "created_at", (json_int_t)j->created_at,
	    "finished_at", view_time(j->has_finished, j->finished_at),
	    "started_at", view_time(j->has_started, j->started_at),
	    "machine_class", j->machine_class != NULL ? json_string(j->machine_class) :
	    json_null(),
	    "machine_names", view_json_text(j->machine_names),
	    "runs_total", (json_int_t)total, "runs_done", (json_int_t)n[STORE_RUN_DONE],
	    "runs_failed", (json_int_t)(n[STORE_RUN_FAILED] + n[STORE_RUN_LOST] +
	    n[STORE_RUN_BOOT_FAILED]),
	    "runs_running", (json_int_t)n[STORE_RUN_RUNNING],
	    "runs_queued", (json_int_t)n[STORE_RUN_QUEUED],
	    "runs_cancelled", (json_int_t)n[STORE_RUN_CANCELLED],
	    "runs_lost", (json_int_t)n[STORE_RUN_LOST],
	    "runs_boot_failed", (json_int_t)n[STORE_RUN_BOOT_FAILED]);
	if (o != NULL && j->spec != NULL &&
	    json_object_set_new(o, "spec", view_json_text(j->spec)) != 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

int
api_view_job_get(struct store *st, int64_t id, json_t **out)
{
	struct store_job *j = NULL;
	int r;

	*out = NULL;
	if ((r = store_job_get(st, id, &j)) != 0)
		goto out;
	if ((*out = api_view_job(j)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	store_job_free(j);
	return r;
}
