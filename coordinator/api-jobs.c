/*
 * api-jobs.c: jobs and runs; a job's report is api-report.c. A job is
 * validated completely (structure, recipe, axis values, machines) before
 * anything is written; then the job and all its runs go into the store in
 * one transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "boot.h"
#include "events.h"
#include "job.h"
#include "jx.h"
#include "kspec.h"
#include "matrix.h"
#include "parse.h"
#include "plan.h"
#include "recipe.h"

/* v for a message: at most 40 bytes, anything but printable ASCII as '?'
 * (the value may be any bytes, and the error is JSON). */
static const char *
jobs_show(const char *v, char *buf, size_t n)
{
	size_t i;

	for (i = 0; v[i] != '\0' && i + 1 < n && i < 40; i++)
		buf[i] = v[i] >= 0x20 && v[i] < 0x7f && v[i] != '"' ? v[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* One parameter of GET /jobs into f; on a bad value BF_ERR_INVALID, d naming it. */
typedef int (*jobs_param_fn)(const char *name, const char *v, struct store_job_filter *f,
    struct bf_diag *d);

static int
jobs_p_limit(const char *name, const char *v, struct store_job_filter *f,
    struct bf_diag *d)
{
	char b[48];
	int64_t n;

	if (parse_i64(v, 1, BF_MAX_JOBS_PAGE, &n) != 0) {
		bf_diag_set(d, name, "\"%s\" is not in 1..%d", jobs_show(v, b, sizeof(b)),
		    BF_MAX_JOBS_PAGE);
		return BF_ERR_INVALID;
	}
	f->limit = (size_t)n;
	return 0;
}

static int
jobs_p_before(const char *name, const char *v, struct store_job_filter *f,
    struct bf_diag *d)
{
	char b[48];

	if (parse_i64(v, 1, INT64_MAX, &f->before) != 0) {
		bf_diag_set(d, name, "\"%s\" is not a job id (a positive integer: a page's "
		    "next_before)", jobs_show(v, b, sizeof(b)));
		return BF_ERR_INVALID;
	}
	return 0;
}

/* A comma list of job states. */
static int
jobs_p_state(const char *name, const char *v, struct store_job_filter *f,
    struct bf_diag *d)
{
	const char *p = v, *e;
	char b[48];
	size_t len, k;

	f->states = 0;
	for (;;) {
		e = strchr(p, ',');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		for (k = 0; k < STORE_JOB_NSTATES; k++)
			if (strlen(store_job_states[k]) == len &&
			    strncmp(store_job_states[k], p, len) == 0)
				break;
		if (k == STORE_JOB_NSTATES) {
			snprintf(b, sizeof(b), "%.*s", (int)(len < 40 ? len : 40), p);
			bf_diag_set(d, name, "\"%s\" is not one of queued, running, done, failed, "
			    "cancelled (a comma list)", jobs_show(b, b, sizeof(b)));
			return BF_ERR_INVALID;
		}
		f->states |= 1u << k;
		if (e == NULL)
			return 0;
		p = e + 1;
	}
}

/* recipe and machine: a name as names are everywhere (jx_check_name). */
static int
jobs_p_name(const char *name, const char *v, struct store_job_filter *f,
    struct bf_diag *d)
{
	char b[48];

	if (jx_check_name(v, name, NULL) != 0) {
		bf_diag_set(d, name, "\"%s\" is not a name (1..%d of A-Z a-z 0-9 _ . -, starting "
		    "with a letter or digit)", jobs_show(v, b, sizeof(b)), BF_MAX_NAME);
		return BF_ERR_INVALID;
	}
	if (strcmp(name, "recipe") == 0)
		f->recipe = v;
	else
		f->machine = v;
	return 0;
}

/* q: text to look for; bounded, and no control bytes (it is echoed in
 * the dashboard's search box). LIKE's wildcards are the store's to escape. */
static int
jobs_p_q(const char *name, const char *v, struct store_job_filter *f, struct bf_diag *d)
{
	size_t i, n = strlen(v);
	json_t *t;

	if (n > BF_MAX_JOBS_Q) {
		bf_diag_set(d, name, "%zu bytes; at most %d", n,
		    BF_MAX_JOBS_Q);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) {
			bf_diag_set(d, name, "control byte 0x%02x at offset %zu",
			    (unsigned char)v[i], i);
			return BF_ERR_INVALID;
		}
	if ((t = json_string(v)) == NULL) {
		/* json_string refuses invalid UTF-8 (or is out of memory) */
		bf_diag_set(d, name, "not valid UTF-8");
		return BF_ERR_INVALID;
	}
	json_decref(t);
	f->q = n > 0 ? v : NULL;
	return 0;
}

static int
jobs_p_published(const char *name, const char *v, struct store_job_filter *f,
    struct bf_diag *d)
{
	char b[48];
	int64_t p;

	if (parse_i64(v, 0, 1, &p) != 0) {
		bf_diag_set(d, name, "\"%s\" is not 0 or 1", jobs_show(v, b, sizeof(b)));
		return BF_ERR_INVALID;
	}
	f->published = (int)p;
	return 0;
}

static const struct {
	const char *name;
	jobs_param_fn parse;
} jobs_params[] = {
	{ .name = "limit", .parse = jobs_p_limit },
	{ .name = "before", .parse = jobs_p_before },
	{ .name = "state", .parse = jobs_p_state },
	{ .name = "recipe", .parse = jobs_p_name },
	{ .name = "machine", .parse = jobs_p_name },
	{ .name = "q", .parse = jobs_p_q },
	{ .name = "published", .parse = jobs_p_published },
};

int
api_jobs_param(const char *name, const char *v, struct store_job_filter *f,
    struct bf_diag *d)
{
	size_t i;

	for (i = 0; i < sizeof(jobs_params) / sizeof(jobs_params[0]); i++)
		if (strcmp(jobs_params[i].name, name) == 0)
			return jobs_params[i].parse(name, v, f, d);
	bf_diag_set(d, name, "not a parameter of GET /jobs");
	return BF_ERR_NOTFOUND;
}

/*
 * GET /jobs: newest first, filtered and paged (docs/api.md);
 * ?published=1 is the federation's list of published jobs, with the same
 * filters. {"jobs":[...], "next_before": id or null}.
 */
void
api_jobs_list(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_job_filter f = { .limit = 100 };
	struct store_job *jobs = NULL;
	struct bf_diag d;
	json_t *o = NULL, *arr, *v;
	int64_t next = 0;
	const char *val;
	size_t n = 0, i;
	int r;

	for (i = 0; i < sizeof(jobs_params) / sizeof(jobs_params[0]); i++)
		if ((val = api_query(rq, jobs_params[i].name)) != NULL &&
		    jobs_params[i].parse(jobs_params[i].name, val, &f, &d) != 0) {
			api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s", d.msg);
			goto out;
		}
	if ((r = store_jobs_list(a->st, &f, &jobs, &n, &next)) != 0) {
		api_store_error(rs, r, "jobs");
		goto out;
	}
	if ((o = json_pack("{s:[], s:o}", "jobs", "next_before", next > 0 ?
	    json_integer(next) : json_null())) == NULL)
		goto nomem;
	arr = json_object_get(o, "jobs");
	for (i = 0; i < n; i++)
		if ((v = api_view_job(&jobs[i])) == NULL || json_array_append_new(arr, v) != 0)
			goto nomem;
	api_json(rs, MHD_HTTP_OK, o);
	o = NULL;
	goto out;
nomem:
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "jobs: out of memory");
out:
	json_decref(o);
	store_jobs_free(jobs, n);
}

/* Every machine the job names must exist; a class must have a member. */
int
api_jobs_check_machines(struct api *a, const struct job_spec *job, struct bf_diag *d)
{
	struct store_machine *ms = NULL, *m = NULL;
	char classes[512], path[64];
	size_t n = 0, i, used = 0;
	int r, found = 0;

	if (job->machine_class != NULL) {
		if ((r = store_machine_list(a->st, &ms, &n)) != 0)
			return r;
		classes[0] = '\0';
		for (i = 0; i < n; i++) {
			if (strcmp(ms[i].klass, job->machine_class) == 0)
				found = 1;
			if (used < sizeof(classes) && strstr(classes, ms[i].klass) == NULL) {
				int k = snprintf(classes + used, sizeof(classes) - used, "%s%s",
				    used ? ", " : "", ms[i].klass);
				if (k > 0)
					used += (size_t)k;
			}
		}
		store_machines_free(ms, n);
		if (!found) {
			bf_diag_set(d, "machines.class", "no machine of class \"%s\" is registered"
			    "; classes here: %s", job->machine_class, n ? classes : "(none)");
			return BF_ERR_NOTFOUND;
		}
		return 0;
	}
	for (i = 0; i < job->nmachine_names; i++) {
		if ((r = store_machine_get(a->st, job->machine_names[i], &m)) != 0) {
			jx_path_idx(path, sizeof(path), "machines.names", i);
			bf_diag_set(d, path, "unknown machine \"%s\"", job->machine_names[i]);
			return r == BF_ERR_NOTFOUND ? BF_ERR_NOTFOUND : r;
		}
		store_machine_free(m);
		m = NULL;
	}
	return 0;
}

/*
 * Cells that ask for a kernel or command line can only run on machines that
 * can boot: every machine the job may land on needs a boot configuration
 * that has each requested kernel.
 */
int
api_jobs_check_boot(struct api *a, const struct job_spec *job, const struct matrix_cell *cells,
    size_t ncells, struct bf_diag *d)
{
	struct store_machine *ms = NULL;
	struct boot_machine *bm = NULL;
	struct bf_diag bd;
	size_t n = 0, i, k, j;
	int r = 0, wants = 0, sel;

	for (i = 0; i < ncells; i++)
		wants |= cells[i].kernel != NULL || (cells[i].cmdline && *cells[i].cmdline);
	if (!wants)
		return 0;
	if ((r = store_machine_list(a->st, &ms, &n)) != 0)
		return r;
	for (i = 0; i < n && r == 0; i++) {
		if (job->machine_class != NULL)
			sel = strcmp(ms[i].klass, job->machine_class) == 0;
		else
			for (sel = 0, j = 0; j < job->nmachine_names && !sel; j++)
				sel = strcmp(ms[i].name, job->machine_names[j]) == 0;
		if (!sel)
			continue;
		bf_diag_clear(&bd);
		if (ms[i].boot == NULL ||
		    boot_config_loads(ms[i].boot, strlen(ms[i].boot), &bm, &bd) != 0) {
			bf_diag_set(d, "machines", "machine %s cannot reboot (%s), and this job asks "
			    "for a kernel or command line", ms[i].name,
			    bd.msg[0] ? bd.msg : "no boot configuration");
			r = BF_ERR_INVALID;
			break;
		}
		for (k = 0; k < ncells && r == 0; k++)
			/* a spec's kernel is built and added to the map at its boot */
			if (cells[k].kernel != NULL && boot_kernel_find(bm, cells[k].kernel) == NULL &&
			    kspec_find(job->kernels, cells[k].kernel) == NULL) {
				bf_diag_set(d, "kernel", "machine %s has no kernel \"%s\" in its boot "
				    "configuration", ms[i].name, cells[k].kernel);
				r = BF_ERR_INVALID;
			}
		boot_machine_free(bm);
		bm = NULL;
	}
	store_machines_free(ms, n);
	return r;
}

/*
 * spread "block": one run set per machine the job selects (its names, or
 * every registered member of its class, by name), so that every cell runs
 * on every machine. A machine that is offline keeps its set queued.
 */
int
api_plan_machines(struct api *a, const struct job_spec *job, struct plan *p, struct bf_diag *d)
{
	struct store_machine *ms = NULL;
	const char **names = NULL;
	size_t n = 0, i, k = 0;
	int r;

	if (job->spread != JOB_SPREAD_BLOCK)
		return 0;
	if (job->machine_class == NULL)
		return plan_block(p, (const char *const *)job->machine_names,
		    job->nmachine_names, d);
	if ((r = store_machine_list(a->st, &ms, &n)) != 0)
		return r;
	if ((names = calloc(n + 1, sizeof(*names))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (strcmp(ms[i].klass, job->machine_class) == 0)
			names[k++] = ms[i].name;
	r = k > 0 ? plan_block(p, names, k, d) : BF_ERR_INVALID;
	if (k == 0)
		bf_diag_set(d, "machines.class", "no machine of class \"%s\"",
		    job->machine_class);
out:
	free(names);
	store_machines_free(ms, n);
	return r;
}

int
api_plan_store(struct api *a, struct api_req *rq, const struct job_spec *job,
    const struct recipe *rec, const struct plan *p, const char *names_json, int64_t *idp,
    struct bf_diag *d)
{
	int r;

	if ((r = store_job_create_plan(a->st, job, rec, p, p->machine_class, names_json,
	    auth_job_owner(&rq->who), idp)) != 0)
		bf_diag_set(d, NULL, r == BF_ERR_ALLOC ? "out of memory" : "job: %s",
		    bf_err_str(r));
	return r;
}

/* Equal strings, NULL equal only to NULL. */
static int
jobs_streq(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

/* The fresh boots a plan asks for: one per distinct (boot repetition,
 * kernel, cmdline), the runs store_boot_group() lets share a boot. */
static size_t
jobs_plan_boots(const struct plan *p)
{
	const struct matrix_cell *a, *b;
	size_t i, j, n = 0;

	for (i = 0; i < p->nruns; i++) {
		a = &p->cells[p->runs[i].cell];
		for (j = 0; j < i; j++) {
			b = &p->cells[p->runs[j].cell];
			if (p->runs[j].boot == p->runs[i].boot &&
			    jobs_streq(a->kernel, b->kernel) && jobs_streq(a->cmdline, b->cmdline))
				break;
		}
		if (j == i)
			n++;
	}
	return n;
}

/*
 * A refused job: "error" and detail.field the first error (the shape every
 * 4xx has), detail.errors every field error found ({field, error}, at most
 * BF_DIAG_LIST_MAX; detail.errors_total when more were found), so a form
 * shows each at its field. l NULL or empty: d is the one error.
 */
void
api_jobs_refuse(struct api_resp *rs, unsigned int status, const struct bf_diag *d,
    const struct bf_diag_list *l)
{
	const struct bf_diag *items = l != NULL && l->n > 0 ? l->item : d, *first = items;
	json_t *errs = json_array(), *detail = json_object(), *e;
	size_t i, n = l != NULL && l->n > 0 ? l->n : 1;

	if (errs == NULL || detail == NULL)
		goto oom;
	for (i = 0; i < n; i++)
		if ((e = json_pack("{s:s?,s:s}", "field", items[i].field[0] != '\0' ?
		    items[i].field : NULL, "error", items[i].msg)) == NULL ||
		    json_array_append_new(errs, e) != 0)
			goto oom;
	if ((first->field[0] != '\0' &&
	    json_object_set_new(detail, "field", json_string(first->field)) != 0) ||
	    json_object_set_new(detail, "errors", errs) != 0)
		goto oom;
	errs = NULL;
	if (l != NULL && l->total > l->n && json_object_set_new(detail, "errors_total",
	    json_integer((json_int_t)l->total)) != 0)
		goto oom;
	api_json(rs, status, json_pack("{s:s,s:o}", "error", first->msg, "detail", detail));
	return;
oom:
	json_decref(errs);
	json_decref(detail);
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
}

/* ?dry_run=1: what the job would be, from the real planner, nothing stored. */
static json_t *
jobs_dry_run(const struct plan *p)
{
	json_int_t iters = 0;
	size_t i;

	for (i = 0; i < p->nruns; i++)
		iters += p->runs[i].iterations + p->runs[i].warmup;
	return json_pack("{s:b,s:I,s:I,s:I,s:I}", "dry_run", 1, "cells", (json_int_t)p->ncells,
	    "runs", (json_int_t)p->nruns, "boots", (json_int_t)jobs_plan_boots(p),
	    "iterations", iters);
}

void
api_jobs_create(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct bf_diag d;
	struct bf_diag_list *errs = NULL;
	struct job_spec *job = NULL;
	const struct recipe *rec = NULL, *recs[BF_MAX_SUITE];
	struct plan *p = NULL;
	char *names = NULL, known[1024], ep[48];
	json_t *namesj = NULL;
	size_t i;
	const char *dry = api_query(rq, "dry_run");
	uint64_t ev0;
	int64_t id;
	int r;

	bf_diag_clear(&d);
	if (dry != NULL && strcmp(dry, "0") != 0 && strcmp(dry, "1") != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "dry_run", "dry_run: \"%.32s\" is not 0 or 1",
		    dry);
		goto out;
	}
	if (rq->body.len == 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, NULL, "request body: a job (a JSON object) "
		    "is required");
		goto out;
	}
	/* every field error of the body at once (a form shows each at its
	 * field): parsing goes on past one, and a single-recipe job parsed as
	 * far as it could is still checked against its recipe */
	if ((errs = calloc(1, sizeof(*errs))) == NULL)
		goto oom;
	/* with the defaults of a new submission written into its spec */
	if ((r = job_parse_submit(rq->body.data, rq->body.len, &job, &d, errs)) != 0 &&
	    (r != BF_ERR_INVALID || job == NULL)) {
		api_jobs_refuse(rs, r == BF_ERR_TOOBIG ? MHD_HTTP_CONTENT_TOO_LARGE :
		    MHD_HTTP_BAD_REQUEST, &d, errs);
		goto out;
	}
	for (i = 0; r == 0 && i < job->nsuite; i++)
		if ((recs[i] = recipes_get(a->rs, job->suite[i].job->recipe)) == NULL) {
			snprintf(ep, sizeof(ep), "suite[%zu].recipe", i);
			bf_diag_set(&d, ep, "unknown recipe \"%s\"; known recipes: %s",
			    job->suite[i].job->recipe, recipes_names(a->rs, known, sizeof(known)));
			bf_diag_list_add(errs, &d);
		}
	if (!job_is_suite(job) && job->recipe != NULL &&
	    (rec = recipes_get(a->rs, job->recipe)) == NULL) {
		bf_diag_set(&d, "recipe", "unknown recipe \"%s\"; known recipes: %s",
		    job->recipe, recipes_names(a->rs, known, sizeof(known)));
		bf_diag_list_add(errs, &d);
	}
	if (rec != NULL)
		r = job_validate_all(job, rec, a->cfg.workdir_root, &d, errs);
	else if (job_is_suite(job) && r == 0 && errs->total == 0)
		r = job_validate_suite_all(job, recs, a->cfg.workdir_root, &d, errs);
	if (r != 0 || errs->total > 0) {
		api_jobs_refuse(rs, r == BF_ERR_TOOBIG ? MHD_HTTP_CONTENT_TOO_LARGE :
		    MHD_HTTP_BAD_REQUEST, &d, r == BF_ERR_TOOBIG ? NULL : errs);
		goto out;
	}
	if ((r = kspec_check_roots(job->kernels, a->cfg.kernel_git_roots, &d)) != 0) {
		api_jobs_refuse(rs, MHD_HTTP_BAD_REQUEST, &d, NULL);
		goto out;
	}
	if ((r = api_jobs_check_machines(a, job, &d)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_jobs_refuse(rs, MHD_HTTP_BAD_REQUEST, &d, NULL);
		else
			api_store_error(rs, r, "machines");
		goto out;
	}
	if ((r = job_is_suite(job) ? plan_suite(job, recs, &p, &d) :
	    plan_job(job, rec, &p, &d)) != 0) {
		if (r == BF_ERR_ALLOC)
			goto oom;
		api_jobs_refuse(rs, MHD_HTTP_BAD_REQUEST, &d, NULL);
		goto out;
	}
	if ((r = api_plan_machines(a, job, p, &d)) != 0) {
		if (r == BF_ERR_ALLOC)
			goto oom;
		if (r == BF_ERR_INVALID)
			api_jobs_refuse(rs, MHD_HTTP_BAD_REQUEST, &d, NULL);
		else
			api_store_error(rs, r, "machines");
		goto out;
	}
	if ((r = api_jobs_check_boot(a, job, p->cells, p->ncells, &d)) != 0) {
		if (r == BF_ERR_INVALID)
			api_jobs_refuse(rs, MHD_HTTP_BAD_REQUEST, &d, NULL);
		else
			api_store_error(rs, r, "machines");
		goto out;
	}
	if (dry != NULL && strcmp(dry, "1") == 0) {
		api_json(rs, MHD_HTTP_OK, jobs_dry_run(p));
		goto out;
	}
	if (job->machine_class == NULL) {
		if ((namesj = json_array()) == NULL)
			goto oom;
		for (i = 0; i < job->nmachine_names; i++)
			if (json_array_append_new(namesj, json_string(job->machine_names[i])) != 0)
				goto oom;
		if ((names = json_dumps(namesj, JSON_COMPACT)) == NULL)
			goto oom;
	}
	/* The newest event before the job exists: a client that follows
	 * /events?after=ev from the answer (submit --wait) misses none of it. */
	ev0 = a->ev != NULL ? events_last_id(a->ev) : 0;
	if ((r = job_is_suite(job) ? store_job_create_suite(a->st, job, recs, p,
	    p->machine_class, names, auth_job_owner(&rq->who), &id) :
	    api_plan_store(a, rq, job, rec, p, names, &id, &d)) != 0) {
		if (r == BF_ERR_ALLOC)
			goto oom;
		api_store_error(rs, r, "job");
		goto out;
	}
	api_kick(a);
	events_job(a->ev, id);
	api_json(rs, MHD_HTTP_CREATED, json_pack("{s:I,s:I}", "id", (json_int_t)id, "runs",
	    (json_int_t)p->nruns));
	rs->event_id = ev0;
	rs->has_event_id = a->ev != NULL;
	goto out;
oom:
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
out:
	free(errs);
	free(names);
	json_decref(namesj);
	plan_free(p);
	job_free(job);
}

void
api_jobs_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	json_t *j = NULL;
	uint64_t ev = 0;
	int r;

	/* The newest event before the read: a client that follows
	 * /events?after=ev from here misses no change of this job. */
	if (a->ev != NULL)
		ev = events_last_id(a->ev);
	if ((r = api_view_job_get(a->st, rq->id, &j)) != 0) {
		api_store_error(rs, r, "job");
		return;
	}
	api_json(rs, MHD_HTTP_OK, j);
	rs->event_id = ev;
	rs->has_event_id = a->ev != NULL;
}

void
api_jobs_cancel(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	int r;

	if ((r = auth_may_cancel(a->st, &rq->who, rq->id)) != 0) {
		if (r == BF_ERR_AUTH)
			api_error(rs, MHD_HTTP_FORBIDDEN, NULL, "job %lld was submitted with another "
			    "token: only that token or an admin may cancel it", (long long)rq->id);
		else
			api_store_error(rs, r, "job");
		return;
	}
	if ((r = store_job_cancel(a->st, rq->id)) != 0) {
		if (r == BF_ERR_STATE)
			api_error(rs, MHD_HTTP_CONFLICT, NULL, "job %lld has already ended",
			    (long long)rq->id);
		else
			api_store_error(rs, r, "job");
		return;
	}
	api_kick(a);
	events_job(a->ev, rq->id);
	api_json(rs, MHD_HTTP_OK, json_pack("{s:I,s:s}", "id", (json_int_t)rq->id, "state",
	    "cancelled"));
}

void
api_jobs_runs(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	json_t *j = NULL;
	int r;

	if ((r = api_view_job_runs_get(a->st, rq->id, 1, &j)) != 0) {
		api_store_error(rs, r, "job");
		return;
	}
	api_json(rs, MHD_HTTP_OK, j);
}

void
api_runs_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	json_t *j = NULL;
	int r;

	if ((r = api_view_run_get(a->st, rq->id, &j)) != 0) {
		api_store_error(rs, r, "run");
		return;
	}
	api_json(rs, MHD_HTTP_OK, j);
}

void
api_runs_log(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const char *after = api_query(rq, "after"), *lim = api_query(rq, "limit");
	int64_t after_seq = 0, limit = 1000;
	json_t *j = NULL;
	int r;

	if (after != NULL && parse_i64(after, 0, INT64_MAX, &after_seq) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "after", "after: \"%s\" is not a sequence "
		    "number", after);
		return;
	}
	if (lim != NULL && parse_i64(lim, 1, 10000, &limit) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "limit", "limit: \"%s\" is not in 1..10000",
		    lim);
		return;
	}
	if ((r = api_view_run_log_get(a->st, rq->id, after_seq, (size_t)limit, &j)) != 0) {
		api_store_error(rs, r, "run");
		return;
	}
	api_json(rs, MHD_HTTP_OK, j);
}
