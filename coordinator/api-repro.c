/*
 * api-repro.c: federation and reproduction over the API (docs/bundle.md):
 * a job's bundle, publishing, the published list, and reproductions of
 * another lab's bundle here. Everything in a posted or fetched bundle is
 * checked (bundle_check) and its fingerprints matched before anything is
 * written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "bundle.h"
#include "events.h"
#include "job.h"
#include "jx.h"
#include "matrix.h"
#include "parse.h"
#include "recipe.h"
#include "recipes.h"
#include "repro.h"
#include "sched.h"
#include "store.h"

/* A request from another coordinator (repro_fetch sends this header): it
 * is served published jobs only, whatever the transport's credentials. */
#define API_PEER_HEADER	"X-Benchfleet-Peer"

void
api_jobs_bundle(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct bf_diag d;
	json_t *b = NULL;
	int r, pub = 0;

	bf_diag_clear(&d);
	if ((r = store_job_published(a->st, rq->id, &pub)) != 0) {
		api_store_error(rs, r, "job");
		return;
	}
	/* Unpublished jobs are not served to other labs: only an admin here
	 * (with auth off, any local caller) sees them, and never a peer. */
	if (!pub && (rq->who.role != AUTH_ADMIN ||
	    MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, API_PEER_HEADER) != NULL)) {
		api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "job %lld: not published",
		    (long long)rq->id);
		return;
	}
	if ((r = bundle_export(a->st, rq->id, &b, &d)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_store_error(rs, r, "job");
		else
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, d.field, "bundle: %s",
			    d.msg[0] ? d.msg : bf_err_str(r));
		return;
	}
	api_json(rs, MHD_HTTP_OK, b);
}

void
api_jobs_publish(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	int r;

	if ((r = store_job_publish(a->st, rq->id)) != 0) {
		api_store_error(rs, r, "job");
		return;
	}
	events_job(a->ev, rq->id);
	api_json(rs, MHD_HTTP_OK, json_pack("{s:I,s:b}", "id", (json_int_t)rq->id,
	    "published", 1));
}

/* GET /jobs: ?published=1 lists the published jobs (federation); the rest
 * is api_jobs_list's. */
void
api_jobs_list_fed(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const char *pub = api_query(rq, "published"), *lim = api_query(rq, "limit");
	int64_t p = 0, limit = 100;
	json_t *j = NULL;
	int r;

	if (pub == NULL) {
		api_jobs_list(a, rq, rs);
		return;
	}
	if (parse_i64(pub, 0, 1, &p) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "published", "published: \"%.32s\" is not 0 "
		    "or 1", pub);
		return;
	}
	if (p == 0) {
		api_jobs_list(a, rq, rs);
		return;
	}
	if (lim != NULL && parse_i64(lim, 1, 1000, &limit) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "limit", "limit: \"%.32s\" is not in 1..1000",
		    lim);
		return;
	}
	if ((r = store_jobs_published_json(a->st, (size_t)limit, &j)) != 0) {
		api_store_error(rs, r, "jobs");
		return;
	}
	api_json(rs, MHD_HTTP_OK, j);
}

/* --- POST /reproductions --- */

struct repro_req {
	json_t *body;		/* the request document */
	json_t *bundle;		/* verified bundle (borrowed from body, or owned fetch) */
	json_t *fetched;	/* owned when fetched */
	const char *url;
	const char *klass;	/* machines.class filter, or NULL */
	double delta_pct;
	json_t *params;		/* overrides, or NULL (borrowed) */
	json_t *knobs;
};

static int
repro_read_request(struct api *a, struct api_req *rq, struct repro_req *q, unsigned int *status,
    struct bf_diag *d)
{
	static const char *const keys[] = { "url", "bundle", "delta_pct", "machines", "params",
	    "knobs", NULL };
	static const char *const mkeys[] = { "class", NULL };
	json_t *m = NULL;
	struct buf b;
	int r;

	(void)a;
	buf_init(&b, BF_MAX_BUNDLE);
	*status = MHD_HTTP_BAD_REQUEST;
	q->delta_pct = REPRO_DEFAULT_DELTA_PCT;
	if (rq->body.len == 0) {
		bf_diag_set(d, NULL, "request body: a bundle, or {\"url\": ...}, is required");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = jx_loads(rq->body.data, rq->body.len, BF_MAX_API_BODY, &q->body, d)) != 0)
		goto out;
	if (!json_is_object(q->body)) {
		bf_diag_set(d, NULL, "request body: expected an object");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (json_object_get(q->body, "format") != NULL) {
		/* The body is the bundle itself. */
		if ((r = bundle_check(q->body, d)) != 0)
			goto out;
		q->bundle = q->body;
		r = 0;
		goto out;
	}
	if ((r = jx_only_keys(q->body, keys, "", d)) != 0 ||
	    (r = jx_str(q->body, "url", JX_OPTIONAL, REPRO_MAX_URL, &q->url, "", d)) != 0 ||
	    (r = jx_num(q->body, "delta_pct", JX_OPTIONAL, 0.001, 100, &q->delta_pct, "",
	    d)) != 0 ||
	    (r = jx_obj(q->body, "machines", JX_OPTIONAL, &m, "", d)) != 0 ||
	    (r = jx_obj(q->body, "params", JX_OPTIONAL, &q->params, "", d)) != 0 ||
	    (r = jx_obj(q->body, "knobs", JX_OPTIONAL, &q->knobs, "", d)) != 0)
		goto out;
	if (m != NULL && ((r = jx_only_keys(m, mkeys, "machines", d)) != 0 ||
	    (r = jx_str(m, "class", JX_REQUIRED, BF_MAX_NAME, &q->klass, "machines", d)) != 0))
		goto out;
	if (q->url == NULL) {
		if ((r = jx_obj(q->body, "bundle", JX_REQUIRED, &q->bundle, "", d)) != 0 ||
		    (r = bundle_check(q->bundle, d)) != 0)
			goto out;
		r = 0;
		goto out;
	}
	if (json_object_get(q->body, "bundle") != NULL) {
		bf_diag_set(d, "bundle", "bundle: give a bundle or a url, not both");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = repro_fetch(q->url, BF_MAX_BUNDLE, &b, d)) != 0) {
		*status = r == BF_ERR_TOOBIG ? MHD_HTTP_CONTENT_TOO_LARGE :
		    r == BF_ERR_INVALID ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_BAD_GATEWAY;
		goto out;
	}
	if ((r = bundle_parse(b.data != NULL ? b.data : "", b.len, BF_MAX_BUNDLE, &q->fetched,
	    d)) != 0) {
		*status = r == BF_ERR_TOOBIG ? MHD_HTTP_CONTENT_TOO_LARGE : MHD_HTTP_BAD_REQUEST;
		goto out;
	}
	q->bundle = q->fetched;
	r = 0;
out:
	buf_free(&b);
	return r;
}

/*
 * Match every machine of the bundle against the fingerprints here. On a
 * miss, *missp gets {"bundle_machine", "nearest", "differs": [...]}.
 * *matchesp: [{"bundle_machine","here":[names],"reported":[non-identity diffs]}].
 */
static int
repro_match(struct api *a, const struct repro_req *q, json_t **matchesp, json_t **missp,
    json_t **namesp, struct bf_diag *d)
{
	struct store_machine *ms = NULL;
	json_t *matches = json_array(), *names = json_array(), *fps = NULL, *bm, *want;
	json_t *ident = NULL, *other = NULL, *here = NULL, *best = NULL, *rep = NULL;
	size_t n = 0, i, j, bestn;
	const char *bname, *bestname;
	int r;

	*matchesp = *missp = *namesp = NULL;
	if (matches == NULL || names == NULL || (fps = json_array()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = store_machine_list(a->st, &ms, &n)) != 0)
		goto out;
	for (i = 0; i < n; i++)
		if (json_array_append_new(fps, ms[i].fingerprint != NULL ?
		    json_loads(ms[i].fingerprint, 0, NULL) : json_null()) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	json_array_foreach(json_object_get(q->bundle, "machines"), i, bm) {
		bname = json_string_value(json_object_get(bm, "name"));
		want = json_object_get(bm, "fingerprint");
		if (!json_is_object(want)) {
			bf_diag_set(d, "machines", "bundle machine %s has no fingerprint: it cannot "
			    "be matched", bname);
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((here = json_array()) == NULL || (rep = json_array()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		bestn = SIZE_MAX;
		bestname = NULL;
		for (j = 0; j < n; j++) {
			if (q->klass != NULL && strcmp(ms[j].klass, q->klass) != 0)
				continue;
			if ((r = repro_fp_compare(want, json_array_get(fps, j), &ident,
			    &other)) != 0)
				goto out;
			if (json_array_size(ident) == 0) {
				if (json_array_append_new(here, json_string(ms[j].name)) != 0) {
					r = BF_ERR_ALLOC;
					goto out;
				}
				if (json_array_size(rep) == 0)
					json_array_extend(rep, other);
			} else if (json_array_size(ident) < bestn) {
				bestn = json_array_size(ident);
				bestname = ms[j].name;
				json_decref(best);
				best = json_incref(ident);
			}
			json_decref(ident);
			json_decref(other);
			ident = other = NULL;
		}
		if (json_array_size(here) == 0) {
			*missp = json_pack("{s:s,s:s?,s:O}", "bundle_machine", bname, "nearest",
			    bestname, "differs", best != NULL ? best : json_null());
			r = *missp != NULL ? BF_ERR_NOTFOUND : BF_ERR_ALLOC;
			goto out;
		}
		json_array_foreach(here, j, want) {
			size_t k;
			json_t *x;
			int seen = 0;

			json_array_foreach(names, k, x)
				if (json_equal(x, want))
					seen = 1;
			if (!seen && json_array_append(names, want) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		}
		if (json_array_append_new(matches, json_pack("{s:s,s:O,s:O}", "bundle_machine",
		    bname, "here", here, "reported", rep)) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		json_decref(here);
		json_decref(rep);
		here = rep = NULL;
	}
	if (json_array_size(names) == 0) {
		bf_diag_set(d, "machines", "the bundle names no machine: nothing to match");
		r = BF_ERR_INVALID;
		goto out;
	}
	*matchesp = matches;
	*namesp = names;
	matches = names = NULL;
	r = 0;
out:
	store_machines_free(ms, n);
	json_decref(matches);
	json_decref(names);
	json_decref(fps);
	json_decref(ident);
	json_decref(other);
	json_decref(here);
	json_decref(rep);
	json_decref(best);
	return r;
}

/* The bundle's job with the machines here and the overrides: validated
 * against the bundle's recipe, expanded, and stored with all its runs. */
static int
repro_job_create(struct api *a, struct api_req *rq, const struct repro_req *q,
    const struct recipe *rec, json_t *names, int64_t *idp, struct bf_diag *d)
{
	struct job_spec *job = NULL;
	struct matrix_cell *cells = NULL;
	struct store_run_new *runs = NULL;
	char **axes = NULL, **values = NULL, **knobs = NULL, *spec = NULL, *namestxt = NULL;
	json_t *doc = NULL, *specj = NULL, *o;
	size_t ncells = 0, nruns, i, b;
	int r;

	if ((doc = json_deep_copy(json_object_get(q->bundle, "job"))) == NULL ||
	    json_object_set_new(doc, "machines", json_pack("{s:O}", "names", names)) != 0)
		goto oom;
	if (q->params != NULL) {
		if ((o = json_object_get(doc, "params")) == NULL) {
			if (json_object_set_new(doc, "params", json_object()) != 0)
				goto oom;
			o = json_object_get(doc, "params");
		}
		if (!json_is_object(o) || json_object_update(o, q->params) != 0)
			goto oom;
	}
	if (q->knobs != NULL) {
		if ((o = json_object_get(doc, "knobs")) == NULL) {
			if (json_object_set_new(doc, "knobs", json_object()) != 0)
				goto oom;
			o = json_object_get(doc, "knobs");
		}
		if (!json_is_object(o) || json_object_update(o, q->knobs) != 0)
			goto oom;
	}
	if ((r = job_from_json(doc, &job, d)) != 0 || (r = job_validate(job, rec, d)) != 0 ||
	    (r = matrix_expand(job, rec, &cells, &ncells, d)) != 0)
		goto out;
	if ((size_t)job->boots > BF_MAX_CELLS / (ncells ? ncells : 1)) {
		bf_diag_set(d, "repetitions.boots", "repetitions.boots: %d boots x %zu cells is "
		    "more than %d runs", job->boots, ncells, BF_MAX_CELLS);
		r = BF_ERR_INVALID;
		goto out;
	}
	nruns = ncells * (size_t)job->boots;
	if ((runs = calloc(nruns, sizeof(*runs))) == NULL ||
	    (axes = calloc(ncells, sizeof(*axes))) == NULL ||
	    (values = calloc(ncells, sizeof(*values))) == NULL ||
	    (knobs = calloc(ncells, sizeof(*knobs))) == NULL)
		goto oom;
	for (i = 0; i < ncells; i++) {
		if ((axes[i] = json_dumps(cells[i].axes, JSON_COMPACT)) == NULL ||
		    (values[i] = json_dumps(cells[i].values, JSON_COMPACT)) == NULL)
			goto oom;
		if (json_object_size(cells[i].knobs) > 0 &&
		    (knobs[i] = json_dumps(cells[i].knobs, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
			goto oom;
	}
	/* Boot-major, as api_jobs_create orders them. */
	for (b = 0; b < (size_t)job->boots; b++) {
		for (i = 0; i < ncells; i++) {
			struct store_run_new *rn = &runs[b * ncells + i];

			rn->cell_index = cells[i].index;
			rn->label = cells[i].label;
			rn->axes_json = axes[i];
			rn->values_json = values[i];
			rn->knobs_json = knobs[i];
			rn->kernel = cells[i].kernel;
			rn->cmdline = cells[i].cmdline;
			rn->boot = (int)b;
		}
	}
	if ((specj = json_pack("{s:O,s:O}", "job", job->json, "recipe", rec->json)) == NULL ||
	    (spec = json_dumps(specj, JSON_COMPACT | JSON_SORT_KEYS)) == NULL ||
	    (namestxt = json_dumps(names, JSON_COMPACT)) == NULL)
		goto oom;
	if ((r = store_job_create_owned(a->st, job->recipe, job->name, spec, NULL, namestxt,
	    runs, nruns, auth_job_owner(&rq->who), idp)) != 0) {
		bf_diag_set(d, NULL, "job: %s", bf_err_str(r));
		goto out;
	}
	r = 0;
	goto out;
oom:
	r = BF_ERR_ALLOC;
	bf_diag_set(d, NULL, "out of memory");
out:
	for (i = 0; axes != NULL && i < ncells; i++)
		free(axes[i]);
	for (i = 0; values != NULL && i < ncells; i++)
		free(values[i]);
	for (i = 0; knobs != NULL && i < ncells; i++)
		free(knobs[i]);
	free(axes);
	free(values);
	free(knobs);
	free(runs);
	free(spec);
	free(namestxt);
	json_decref(specj);
	json_decref(doc);
	matrix_free(cells, ncells);
	job_free(job);
	return r;
}

void
api_repro_create(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct repro_req q = { 0 };
	struct bf_diag d;
	struct recipe *rec = NULL;
	const struct recipe *local;
	json_t *matches = NULL, *miss = NULL, *names = NULL, *info = NULL, *notes = NULL;
	char *text = NULL, hex[65], lhex[65];
	unsigned int status;
	int64_t job_id, id;
	int r;

	bf_diag_clear(&d);
	if ((r = repro_read_request(a, rq, &q, &status, &d)) != 0) {
		api_error(rs, r == BF_ERR_TOOBIG ? MHD_HTTP_CONTENT_TOO_LARGE : status, d.field,
		    "%s", d.msg[0] ? d.msg : bf_err_str(r));
		goto out;
	}
	if ((r = recipe_from_json(json_object_get(q.bundle, "recipe"), &rec, &d)) != 0) {
		api_error(rs, MHD_HTTP_UNPROCESSABLE_CONTENT, "recipe", "the bundle's recipe does "
		    "not load here: %s", d.msg);
		goto out;
	}
	if ((notes = json_array()) == NULL)
		goto oom;
	if ((local = recipes_get(a->rs, rec->name)) != NULL &&
	    (bundle_sha256(local->json, lhex) != 0 ||
	    strcmp(lhex, json_string_value(json_object_get(q.bundle, "recipe_sha256"))) != 0)) {
		char note[256];

		snprintf(note, sizeof(note), "the local recipe %s differs from the bundle's "
		    "(sha256 %.12s... here vs %.12s...); the bundle's was used", rec->name, lhex,
		    json_string_value(json_object_get(q.bundle, "recipe_sha256")));
		if (json_array_append_new(notes, json_string(note)) != 0)
			goto oom;
	}
	if ((r = repro_match(a, &q, &matches, &miss, &names, &d)) != 0) {
		if (miss != NULL) {
			char msg[512];

			snprintf(msg, sizeof(msg), "no machine here matches bundle machine %s%s%s",
			    json_string_value(json_object_get(miss, "bundle_machine")),
			    json_is_string(json_object_get(miss, "nearest")) ? "; nearest: " : "",
			    json_is_string(json_object_get(miss, "nearest")) ?
			    json_string_value(json_object_get(miss, "nearest")) : "");
			api_json(rs, MHD_HTTP_CONFLICT, json_pack("{s:s,s:O}", "error", msg,
			    "detail", miss));
		} else if (r == BF_ERR_INVALID) {
			api_error(rs, MHD_HTTP_UNPROCESSABLE_CONTENT, d.field, "%s", d.msg);
		} else {
			api_store_error(rs, r, "machines");
		}
		goto out;
	}
	if ((r = repro_job_create(a, rq, &q, rec, names, &job_id, &d)) != 0) {
		api_error(rs, r == BF_ERR_ALLOC || r == BF_ERR_DB ?
		    MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_UNPROCESSABLE_CONTENT, d.field,
		    "the bundle's job cannot run here: %s", d.msg);
		goto out;
	}
	if ((info = json_pack("{s:O,s:O,s:O,s:o,s:o}", "matches", matches, "notes", notes,
	    "origin", json_object_get(q.bundle, "origin"), "params",
	    q.params ? json_incref(q.params) : json_null(), "knobs",
	    q.knobs ? json_incref(q.knobs) : json_null())) == NULL)
		goto oom;
	if ((text = json_dumps(q.bundle, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
		goto oom;
	snprintf(hex, sizeof(hex), "%s", json_string_value(json_object_get(q.bundle, "sha256")));
	{
		char *it = json_dumps(info, JSON_COMPACT);

		if (it == NULL)
			goto oom;
		r = store_repro_add(a->st, job_id, text, hex, q.url, q.delta_pct, it, &id);
		free(it);
	}
	if (r != 0) {
		/* The job stays (it is an ordinary job); say which. */
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "recording the reproduction "
		    "of job %lld: %s", (long long)job_id, bf_err_str(r));
		goto out;
	}
	api_kick(a);
	events_job(a->ev, job_id);
	api_json(rs, MHD_HTTP_CREATED, json_pack("{s:I,s:I,s:O,s:O,s:f}", "id", (json_int_t)id,
	    "job_id", (json_int_t)job_id, "matches", matches, "notes", notes, "delta_pct",
	    q.delta_pct));
	goto out;
oom:
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
out:
	free(text);
	json_decref(info);
	json_decref(notes);
	json_decref(matches);
	json_decref(miss);
	json_decref(names);
	json_decref(q.fetched);
	json_decref(q.body);
	recipe_free(rec);
}

/* --- GET /reproductions/{id} --- */

static int
here_fingerprints(struct api *a, const json_t *info, json_t **out)
{
	struct store_machine *m = NULL;
	const json_t *match, *name;
	json_t *o = json_object(), *fp;
	size_t i, j;
	int r;

	if (o == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(json_object_get(info, "matches"), i, match)
		json_array_foreach(json_object_get(match, "here"), j, name) {
			if (!json_is_string(name) || json_object_get(o, json_string_value(name)))
				continue;
			if ((r = store_machine_get(a->st, json_string_value(name), &m)) != 0) {
				if (r == BF_ERR_NOTFOUND)
					continue;
				goto out;
			}
			fp = m->fingerprint != NULL ? json_loads(m->fingerprint, 0, NULL) : NULL;
			json_object_set_new(o, m->name, fp != NULL ? fp : json_null());
			store_machine_free(m);
			m = NULL;
		}
	*out = o;
	o = NULL;
	r = 0;
out:
	store_machine_free(m);
	json_decref(o);
	return r;
}

void
api_repro_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_repro *x = NULL;
	struct bf_diag d;
	json_t *bundle = NULL, *info = NULL, *job = NULL, *samples = NULL, *runs = NULL;
	json_t *fps = NULL, *rep = NULL;
	const char *fmt = api_query(rq, "format"), *state;
	struct buf b;
	int r, ended;

	bf_diag_clear(&d);
	buf_init(&b, BF_MAX_API_RESPONSE);
	if (fmt != NULL && strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "format", "format: \"%.32s\" is not one of "
		    "text, json", fmt);
		goto out;
	}
	if ((r = store_repro_get(a->st, rq->id, &x)) != 0) {
		api_store_error(rs, r, "reproduction");
		goto out;
	}
	/* Written by us after bundle_check. */
	if ((bundle = json_loads(x->bundle, 0, NULL)) == NULL ||
	    (info = json_loads(x->info, 0, NULL)) == NULL) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "reproduction %lld: its "
		    "stored bundle is damaged", (long long)rq->id);
		goto out;
	}
	if ((r = store_job_get_json(a->st, x->job_id, &job)) != 0) {
		api_store_error(rs, r, "the reproduction's job");
		goto out;
	}
	state = json_string_value(json_object_get(job, "state"));
	ended = state != NULL && strcmp(state, "queued") != 0 && strcmp(state, "running") != 0;
	if (!ended) {
		rep = json_pack("{s:I,s:s,s:I,s:s,s:O,s:O,s:s,s:O,s:O}", "id", (json_int_t)x->id,
		    "state", "running", "job_id", (json_int_t)x->job_id, "job_state", state ?
		    state : "?", "runs_done", json_object_get(job, "runs_done"), "runs_total",
		    json_object_get(job, "runs_total"), "bundle_sha256", x->bundle_sha256,
		    "matches", json_object_get(info, "matches"), "notes",
		    json_object_get(info, "notes"));
	} else {
		if ((r = store_job_samples_json(a->st, x->job_id, &samples)) != 0 ||
		    (r = store_job_runs_json(a->st, x->job_id, &runs)) != 0 ||
		    (r = here_fingerprints(a, info, &fps)) != 0) {
			api_store_error(rs, r, "the reproduction's job");
			goto out;
		}
		if ((r = repro_report_json(bundle, samples, json_object_get(runs, "runs"),
		    json_object_get(json_object_get(job, "spec"), "job"), fps, info, x->delta_pct,
		    &rep, &d)) != 0) {
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "%s",
			    d.msg[0] ? d.msg : bf_err_str(r));
			goto out;
		}
		if (json_object_set_new(rep, "id", json_integer(x->id)) != 0 ||
		    json_object_set_new(rep, "state", json_string("done")) != 0 ||
		    json_object_set_new(rep, "job_id", json_integer(x->job_id)) != 0 ||
		    json_object_set_new(rep, "job_state", json_string(state)) != 0 ||
		    json_object_set_new(rep, "bundle_sha256", json_string(x->bundle_sha256)) != 0 ||
		    json_object_set(rep, "origin", json_object_get(bundle, "origin")) != 0 ||
		    json_object_set(rep, "matches", json_object_get(info, "matches")) != 0 ||
		    json_object_set(rep, "notes", json_object_get(info, "notes")) != 0 ||
		    json_object_set_new(rep, "source", x->source ? json_string(x->source) :
		    json_null()) != 0) {
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
			goto out;
		}
	}
	if (rep == NULL) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		goto out;
	}
	if (fmt == NULL || strcmp(fmt, "json") == 0) {
		api_json(rs, MHD_HTTP_OK, rep);
		rep = NULL;
		goto out;
	}
	if (!ended)
		r = buf_printf(&b, "reproduction %lld: running (job %lld, %lld of %lld runs "
		    "done)\n", (long long)x->id, (long long)x->job_id,
		    (long long)json_integer_value(json_object_get(job, "runs_done")),
		    (long long)json_integer_value(json_object_get(job, "runs_total")));
	else if ((r = buf_printf(&b, "reproduction %lld of job %lld (%s), rerun here as job "
	    "%lld (%s)\nbundle sha256 %s\n\n", (long long)x->id,
	    (long long)json_integer_value(json_object_get(json_object_get(bundle, "origin"),
	    "job_id")), x->source ? x->source : "posted", (long long)x->job_id, state,
	    x->bundle_sha256)) == 0)
		r = repro_report_text(rep, &b);
	if (r != 0) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "report: %s", bf_err_str(r));
		goto out;
	}
	rs->status = MHD_HTTP_OK;
	rs->text_len = b.len;
	rs->text = buf_steal(&b);
out:
	buf_free(&b);
	json_decref(rep);
	json_decref(fps);
	json_decref(runs);
	json_decref(samples);
	json_decref(job);
	json_decref(info);
	json_decref(bundle);
	store_repro_free(x);
}
