/*
 * api-bisect.c: /api/v1/bisections (bisect.h, docs/api.md "Bisections").
 * Thin handlers: the request is checked here (every field error at once,
 * as POST /jobs), stored as a running bisection, and the scheduler's
 * process drives it (bisect-drive.c); nothing here waits on a machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "bisect.h"
#include "events.h"
#include "job.h"
#include "jx.h"
#include "parse.h"
#include "plan.h"
#include "recipes.h"
#include "store.h"

#define BISECT_ZERO_SHA "0000000000000000000000000000000000000000"

/* The step job's machines and boots as POST /jobs checks them (the spec
 * passed bisect_spec_check: its job parses and plans). */
static int
bisect_check_fleet(struct api *a, const json_t *spec, struct bf_diag *d)
{
	const struct recipe *rec;
	struct job_spec *job = NULL;
	struct plan *p = NULL;
	json_t *doc;
	int r;

	if ((doc = bisect_step_job(spec, 0, 0, 0, BISECT_ZERO_SHA, BISECT_ZERO_SHA,
	    BISECT_ZERO_SHA)) == NULL)
		return BF_ERR_ALLOC;
	if ((r = job_from_json(doc, &job, d)) != 0)
		goto out;
	if ((rec = recipes_get(a->rs, job->recipe)) == NULL) {
		bf_diag_set(d, "recipe", "unknown recipe \"%.64s\"", job->recipe);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = plan_job(job, rec, &p, d)) != 0 ||
	    (r = api_jobs_check_machines(a, job, d)) != 0 ||
	    (r = api_jobs_check_boot(a, job, p->cells, p->ncells, d)) != 0)
		goto out;
out:
	plan_free(p);
	job_free(job);
	json_decref(doc);
	return r;
}

void
api_bisect_create(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct bf_diag_list *errs = NULL;
	struct bf_diag d;
	json_t *body = NULL, *spec = NULL;
	char *text = NULL;
	int64_t id;
	int r;

	bf_diag_clear(&d);
	if (rq->body.len == 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, NULL, "request body: a bisection (a JSON "
		    "object) is required");
		goto out;
	}
	if ((r = jx_loads(rq->body.data, rq->body.len, BF_MAX_API_BODY, &body, &d)) != 0) {
		api_error(rs, r == BF_ERR_TOOBIG ? MHD_HTTP_CONTENT_TOO_LARGE :
		    MHD_HTTP_BAD_REQUEST, d.field[0] ? d.field : NULL, "%s", d.msg);
		goto out;
	}
	if ((errs = calloc(1, sizeof(*errs))) == NULL)
		goto oom;
	if ((r = bisect_spec_check(body, a->rs, a->cfg.kernel_git_roots, a->cfg.workdir_root,
	    &spec, &d, errs)) != 0) {
		if (r == BF_ERR_ALLOC)
			goto oom;
		api_jobs_refuse(rs, MHD_HTTP_BAD_REQUEST, &d, errs);
		goto out;
	}
	bf_diag_clear(&d);
	if ((r = bisect_check_fleet(a, spec, &d)) != 0) {
		if (r == BF_ERR_ALLOC)
			goto oom;
		if (r == BF_ERR_NOTFOUND || r == BF_ERR_INVALID)
			api_jobs_refuse(rs, MHD_HTTP_BAD_REQUEST, &d, NULL);
		else
			api_store_error(rs, r, "machines");
		goto out;
	}
	if ((text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
		goto oom;
	if ((r = store_bisect_add(a->st, text, &id)) != 0) {
		api_store_error(rs, r, "bisection");
		goto out;
	}
	api_kick(a);
	bisect_event(a->ev, a->st, id);
	api_json(rs, MHD_HTTP_CREATED, json_pack("{s:I,s:s}", "id", (json_int_t)id, "state",
	    "running"));
	goto out;
oom:
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
out:
	free(text);
	free(errs);
	json_decref(spec);
	json_decref(body);
}

void
api_bisect_list(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const char *lim = api_query(rq, "limit");
	int64_t n = 100;
	json_t *arr;
	int r;

	if (lim != NULL && parse_i64(lim, 1, 1000, &n) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "limit", "limit: \"%.32s\" is not an integer "
		    "in 1..1000", lim);
		return;
	}
	if ((arr = bisect_view_list(a->st, (size_t)n, &r)) == NULL) {
		api_store_error(rs, r, "bisections");
		return;
	}
	api_json(rs, MHD_HTTP_OK, json_pack("{s:o}", "bisections", arr));
}

void
api_bisect_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	json_t *j;
	int r;

	if ((j = bisect_view(a->st, rq->id, 1, &r)) == NULL) {
		api_store_error(rs, r, "bisection");
		return;
	}
	api_json(rs, MHD_HTTP_OK, j);
}

void
api_bisect_cancel(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_bisect_step *steps = NULL;
	size_t n = 0, i;
	int r;

	if ((r = store_bisect_cancel(a->st, rq->id, "cancelled by a user")) != 0) {
		if (r == BF_ERR_STATE)
			api_error(rs, MHD_HTTP_CONFLICT, NULL, "bisection %lld is not running",
			    (long long)rq->id);
		else
			api_store_error(rs, r, "bisection");
		return;
	}
	/* the measuring job of a pending step has no one to read it now */
	if (store_bisect_steps(a->st, rq->id, &steps, &n) == 0)
		for (i = 0; i < n; i++)
			if (strcmp(steps[i].verdict, "pending") == 0 &&
			    store_job_cancel(a->st, steps[i].job_id) == 0)
				events_job(a->ev, steps[i].job_id);
	store_bisect_steps_free(steps, n);
	api_kick(a);
	bisect_event(a->ev, a->st, rq->id);
	api_json(rs, MHD_HTTP_OK, json_pack("{s:I,s:s}", "id", (json_int_t)rq->id, "state",
	    "cancelled"));
}
