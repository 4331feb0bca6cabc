/*
 * bisect-view.c: a bisection as the API and the event stream show it
 * (bisect.h, docs/api.md "Bisections"): the row, the request, the commit
 * interval, the first bad commit with its subject, and the log of steps
 * with each one's numbers. JSON from the store's typed rows; read only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "events.h"
#include "store.h"

static json_t *
time_or_null(double t)
{
	return t > 0 ? json_real(t) : json_null();
}

/* commits' entry i as {"index","commit","subject"}, or null. */
static json_t *
commit_json(const json_t *list, int64_t i)
{
	const json_t *e = i >= 0 ? json_array_get(list, (size_t)i) : NULL;

	if (e == NULL)
		return json_null();
	return json_pack("{s:I,s:O,s:O}", "index", (json_int_t)i, "commit", json_array_get(e, 0),
	    "subject", json_array_get(e, 1));
}

static int
steps_json(struct store *st, const struct store_bisect *b, const json_t *list, json_t *out)
{
	struct store_bisect_step *steps = NULL;
	json_error_t je;
	json_t *arr = NULL, *e;
	size_t n = 0, i;
	int r;

	if ((r = store_bisect_steps(st, b->id, &steps, &n)) != 0)
		return r;
	if ((arr = json_array()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const json_t *c = json_array_get(list, (size_t)steps[i].idx);

		if ((e = json_pack("{s:I,s:I,s:I,s:s,s:O?,s:I,s:s,s:o?}", "step",
		    (json_int_t)steps[i].step, "round", (json_int_t)steps[i].round, "index",
		    (json_int_t)steps[i].idx, "commit", steps[i].sha, "subject",
		    json_array_get(c, 1), "job", (json_int_t)steps[i].job_id, "verdict",
		    steps[i].verdict, "stats", steps[i].stats != NULL ?
		    json_loads(steps[i].stats, 0, &je) : json_null())) == NULL ||
		    json_array_append_new(arr, e) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	r = json_object_set_new(out, "steps", arr) == 0 ? 0 : BF_ERR_ALLOC;
	arr = NULL;
out:
	json_decref(arr);
	store_bisect_steps_free(steps, n);
	return r;
}

/* One row as JSON; with_steps adds the log. */
static json_t *
row_json(struct store *st, const struct store_bisect *b, int with_steps, int *err)
{
	json_error_t je;
	json_t *spec = json_loads(b->spec, 0, &je), *commits = NULL, *j = NULL, *list;
	int64_t fb = -1;
	size_t i;

	*err = BF_ERR_ALLOC;
	if (spec == NULL) {
		*err = BF_ERR_DB;
		return NULL;
	}
	if (b->commits != NULL && (commits = json_loads(b->commits, 0, &je)) == NULL) {
		*err = BF_ERR_DB;
		goto out;
	}
	list = json_object_get(commits, "list");
	for (i = 0; b->first_bad != NULL && i < json_array_size(list); i++)
		if (strcmp(json_string_value(json_array_get(json_array_get(list, i), 0)) ?
		    json_string_value(json_array_get(json_array_get(list, i), 0)) : "",
		    b->first_bad) == 0)
			fb = (int64_t)i;
	j = json_pack("{s:I,s:s,s:s?,s:o,s:o,s:o,s:f,s:O,s:O?,s:O?,s:O?,s:O?,s:O?,s:O?}",
	    "id", (json_int_t)b->id, "state", b->state, "message", b->message,
	    "created_at", time_or_null(b->created_at), "updated_at", time_or_null(b->updated_at),
	    "finished_at", time_or_null(b->finished_at), "machine_s", b->machine_s,
	    "spec", spec, "good", json_object_get(spec, "good"), "bad",
	    json_object_get(spec, "bad"), "recipe", json_object_get(spec, "recipe"), "metric",
	    json_object_get(spec, "metric"), "direction", json_object_get(spec, "direction"),
	    "threshold_pct", json_object_get(spec, "threshold_pct"));
	if (j == NULL)
		goto out;
	if (commits != NULL) {
		if (json_object_set_new(j, "commits", json_integer((json_int_t)json_array_size(list)))
		    != 0 || json_object_set(j, "good_commit", json_object_get(commits, "good")) != 0 ||
		    json_object_set(j, "bad_commit", json_object_get(commits, "bad")) != 0 ||
		    json_object_set_new(j, "interval", json_pack("{s:I,s:I}", "lo",
		    (json_int_t)b->lo, "hi", (json_int_t)b->hi)) != 0)
			goto fail;
	} else if (json_object_set_new(j, "commits", json_null()) != 0 ||
	    json_object_set_new(j, "interval", json_null()) != 0)
		goto fail;
	if (json_object_set_new(j, "first_bad", fb >= 0 ? commit_json(list, fb) :
	    json_null()) != 0)
		goto fail;
	if (with_steps && (*err = steps_json(st, b, list, j)) != 0)
		goto fail;
	*err = 0;
	goto out;
fail:
	json_decref(j);
	j = NULL;
out:
	json_decref(spec);
	json_decref(commits);
	return j;
}

json_t *
bisect_view(struct store *st, int64_t id, int with_steps, int *err)
{
	struct store_bisect *b = NULL;
	json_t *j;

	if ((*err = store_bisect_get(st, id, &b)) != 0)
		return NULL;
	j = row_json(st, b, with_steps, err);
	store_bisect_free(b);
	return j;
}

json_t *
bisect_view_list(struct store *st, size_t limit, int *err)
{
	struct store_bisect *a = NULL;
	json_t *arr = NULL, *e;
	size_t n = 0, i;

	if ((*err = store_bisect_list(st, limit, &a, &n)) != 0)
		return NULL;
	if ((arr = json_array()) == NULL) {
		*err = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((e = row_json(st, &a[i], 0, err)) == NULL ||
		    json_array_append_new(arr, e) != 0) {
			json_decref(arr);
			arr = NULL;
			if (*err == 0)
				*err = BF_ERR_ALLOC;
			goto out;
		}
out:
	store_bisects_free(a, n);
	return arr;
}

void
bisect_event(struct events *ev, struct store *st, int64_t id)
{
	json_t *j;
	int err;

	if (ev == NULL || (j = bisect_view(st, id, 0, &err)) == NULL)
		return;
	/* the spec is in GET /bisections/{id}: an event stays small */
	json_object_del(j, "spec");
	(void)events_publish(ev, "bisection", j);
}
