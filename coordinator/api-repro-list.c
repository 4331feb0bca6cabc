/*
 * api-repro-list.c: GET /api/v1/reproductions, every reproduction a page
 * at a time, newest first, with keyset paging as GET /jobs has
 * (?limit=1..1000, default 100; ?before=ID, a page's next_before). A row
 * is what a list shows: who posted which bundle (origin, trust, mode) and
 * how far its job is; the verdicts are GET /reproductions/{id}'s, which
 * computes them, so a list of many costs no statistics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "caps.h"
#include "parse.h"
#include "store.h"

#define API_REPRO_PAGE	100	/* rows when ?limit is not given */

/* One row as JSON; what the stored info does not hold (older rows) is null. */
static json_t *
api_repro_row(const struct store_repro_row *x)
{
	json_t *info = json_loads(x->info != NULL ? x->info : "{}", 0, NULL), *o;
	const char *mode = json_string_value(json_object_get(info, "mode"));

	o = json_pack("{s:I,s:I,s:I,s:s?,s:s?,s:f,s:s?,s:s?,s:I,s:I,s:I,s:s?,s:O?,s:O?,s:b}",
	    "id", (json_int_t)x->id, "job_id", (json_int_t)x->job_id,
	    "created_at", (json_int_t)x->created_at, "bundle_sha256", x->bundle_sha256,
	    "source", x->source, "delta_pct", x->delta_pct, "recipe", x->recipe,
	    "job_state", x->job_state, "runs_total", (json_int_t)x->runs_total,
	    "runs_done", (json_int_t)x->runs_done, "runs_failed", (json_int_t)x->runs_failed,
	    "mode", mode, "origin", json_object_get(info, "origin"),
	    "trust", json_object_get(info, "trust"),
	    "override", json_is_true(json_object_get(info, "override")));
	json_decref(info);
	return o;
}

void
api_repro_list(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const char *lim = api_query(rq, "limit"), *bef = api_query(rq, "before");
	struct store_repro_row *rows = NULL;
	json_t *arr = NULL, *o;
	int64_t limit = API_REPRO_PAGE, before = 0;
	size_t i, n = 0;
	int more = 0, r;

	if (lim != NULL && parse_i64(lim, 1, BF_MAX_JOBS_PAGE, &limit) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "limit", "limit: \"%.40s\" is not in 1..%d",
		    lim, BF_MAX_JOBS_PAGE);
		goto out;
	}
	if (bef != NULL && parse_i64(bef, 1, INT64_MAX, &before) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "before", "before: \"%.40s\" is not a "
		    "reproduction id (a positive integer: a page's next_before)", bef);
		goto out;
	}
	if ((r = store_repro_list(a->st, before, (size_t)limit, &rows, &n, &more)) != 0) {
		api_store_error(rs, r, "reproductions");
		goto out;
	}
	if ((arr = json_array()) == NULL)
		goto oom;
	for (i = 0; i < n; i++)
		if ((o = api_repro_row(&rows[i])) == NULL || json_array_append_new(arr, o) != 0)
			goto oom;
	api_json(rs, MHD_HTTP_OK, json_pack("{s:o,s:o}", "reproductions", arr, "next_before",
	    more && n > 0 ? json_integer(rows[n - 1].id) : json_null()));
	arr = NULL;
	goto out;
oom:
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
out:
	json_decref(arr);
	store_repro_rows_free(rows, n);
}
