/*
 * api-view.c: the JSON shapes of the store's typed rows (api-view.h).
 */
#include <stdlib.h>
#include <string.h>

#include "api-view.h"
#include "auth.h"
#include "boot.h"

/* Text as a JSON string; null for NULL. Stored text was checked on its way
 * in, but a row is not trusted to be UTF-8: bytes jansson refuses become
 * '?' rather than failing the whole answer. */
static json_t *
view_str(const char *v)
{
	json_t *o;
	char *c;
	size_t i;

	if (v == NULL)
		return json_null();
	if ((o = json_string(v)) != NULL || (c = strdup(v)) == NULL)
		return o;
	for (i = 0; c[i] != '\0'; i++)
		if ((unsigned char)c[i] >= 0x80)
			c[i] = '?';
	o = json_string(c);
	free(c);
	return o;
}

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
	o = json_pack("{s:I, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:o,"
	    " s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "id", (json_int_t)j->id, "recipe", view_str(j->recipe),
	    "name", view_str(j->name),
	    "state", view_str(j->state), "created_at", (json_int_t)j->created_at,
	    "finished_at", view_time(j->has_finished, j->finished_at),
	    "started_at", view_time(j->has_started, j->started_at),
	    "machine_class", view_str(j->machine_class),
	    "machine_names", view_json_text(j->machine_names),
	    "runs_total", (json_int_t)total, "runs_done", (json_int_t)n[STORE_RUN_DONE],
	    "runs_failed", (json_int_t)(n[STORE_RUN_FAILED] + n[STORE_RUN_LOST] +
	    n[STORE_RUN_BOOT_FAILED]),
	    "runs_running", (json_int_t)n[STORE_RUN_RUNNING],
	    "runs_queued", (json_int_t)n[STORE_RUN_QUEUED],
	    "runs_cancelled", (json_int_t)n[STORE_RUN_CANCELLED],
	    "runs_lost", (json_int_t)n[STORE_RUN_LOST],
	    "runs_boot_failed", (json_int_t)n[STORE_RUN_BOOT_FAILED]);
	/* machines.spread (job.h), and a pin job's machine */
	if (o != NULL && (json_object_set_new(o, "spread", view_str(j->spread)) != 0 ||
	    json_object_set_new(o, "pinned_machine", view_str(j->pinned_machine)) != 0)) {
		json_decref(o);
		o = NULL;
	}
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

json_t *
api_view_machine(const struct store_machine *m)
{
	json_t *boot, *o;
	char *berr = NULL;

	if (m == NULL)
		return NULL;
	if ((boot = boot_config_view(m->boot, &berr)) == NULL)
		boot = json_null();
	o = json_pack("{s:o, s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:o,"
	    " s:o, s:o, s:o, s:o}",
	    "name", view_str(m->name),
	    "host", view_str(m->host),
	    "port", m->port,
	    "user", view_str(m->user),
	    "class", view_str(m->klass),
	    "state", view_str(m->state),
	    "hostname", view_str(m->hostname),
	    "kernel", view_str(m->kernel),
	    "arch", view_str(m->arch),
	    "last_error", view_str(m->last_error),
	    "created_at", (json_int_t)m->created_at,
	    "last_seen", m->last_seen != 0 ? json_integer(m->last_seen) : json_null(),
	    "fingerprint", view_json_text(m->fingerprint),
	    "fingerprint_sha256", view_str(m->fingerprint_sha256),
	    "boot", boot,
	    "boot_error", view_str(berr),
	    "boot_key", view_str(m->boot_key),
	    /* NULL: a machine from before schema step 14, which runs */
	    "roles", m->roles == NULL || strcmp(m->roles, "run") == 0 ? json_pack("[s]", "run") :
	    strcmp(m->roles, "build") == 0 ? json_pack("[s]", "build") :
	    json_pack("[s,s]", "run", "build"));
	free(berr);
	return o;
}

/* {key: [one object per row]}: view renders row i of a. */
typedef json_t *(*view_row_fn)(const void *a, size_t i);

static json_t *
view_list(const char *key, const void *a, size_t n, view_row_fn view)
{
	json_t *o, *arr, *v;
	size_t i;

	if ((o = json_pack("{s:[]}", key)) == NULL)
		return NULL;
	arr = json_object_get(o, key);
	for (i = 0; i < n; i++)
		if ((v = view(a, i)) == NULL || json_array_append_new(arr, v) != 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

static json_t *
view_audit_row(const void *a, size_t i)
{
	const struct store_audit_row *e = (const struct store_audit_row *)a + i;

	return json_pack("{s:I, s:f, s:o, s:o, s:o, s:o}", "id", (json_int_t)e->id, "at", e->at,
	    "actor", view_str(e->actor), "action", view_str(e->action),
	    "subject", view_str(e->subject), "detail", view_str(e->detail));
}

json_t *
api_view_audit(const struct store_audit_row *a, size_t n)
{
	return view_list("audit", a, n, view_audit_row);
}

static json_t *
view_recipe_imp(const void *a, size_t i)
{
	const struct store_recipe_imp *e = (const struct store_recipe_imp *)a + i;

	return json_pack("{s:o, s:o, s:o, s:I}", "name", view_str(e->name),
	    "sha256", view_str(e->sha256), "actor", view_str(e->actor),
	    "created_at", (json_int_t)e->created_at);
}

json_t *
api_view_recipes_imported(const struct store_recipe_imp *a, size_t n)
{
	return view_list("recipes", a, n, view_recipe_imp);
}

static json_t *
view_lab(const void *a, size_t i)
{
	const struct store_lab *e = (const struct store_lab *)a + i;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:I}", "name", view_str(e->name),
	    "public_key", view_str(e->public_key), "fingerprint", view_str(e->fingerprint),
	    "source", view_str(e->source), "actor", view_str(e->actor),
	    "created_at", (json_int_t)e->created_at);
}

json_t *
api_view_labs(const struct store_lab *a, size_t n)
{
	return view_list("labs", a, n, view_lab);
}

static json_t *
view_token(const void *a, size_t i)
{
	const struct store_token_row *t = (const struct store_token_row *)a + i;

	return json_pack("{s:I, s:o, s:o, s:I, s:o, s:o}", "id", (json_int_t)t->id,
	    "name", view_str(t->name), "role", view_str(t->role),
	    "created_at", (json_int_t)t->created_at,
	    "last_used", t->has_last_used ? json_integer(t->last_used) : json_null(),
	    "revoked_at", t->has_revoked ? json_integer(t->revoked_at) : json_null());
}

json_t *
api_view_tokens(const struct store_token_row *a, size_t n)
{
	return view_list("tokens", a, n, view_token);
}

static json_t *
view_log_line(const void *a, size_t i)
{
	const struct store_log_line *l = (const struct store_log_line *)a + i;

	return json_pack("{s:I, s:o, s:o, s:f}", "seq", (json_int_t)l->seq,
	    "stream", view_str(l->stream), "line", view_str(l->line), "at", l->at);
}

json_t *
api_view_run_log(int64_t run_id, const struct store_log_line *a, size_t n)
{
	json_t *o = NULL, *l;

	/* "run" first, as the answer always began */
	if ((l = view_list("lines", a, n, view_log_line)) != NULL)
		o = json_pack("{s:I, s:O}", "run", (json_int_t)run_id,
		    "lines", json_object_get(l, "lines"));
	json_decref(l);
	return o;
}

int
api_view_run_log_get(struct store *st, int64_t run_id, int64_t after_seq, size_t limit,
    json_t **out)
{
	struct store_log_line *a = NULL;
	size_t n = 0;
	int r;

	*out = NULL;
	if ((r = store_run_log(st, run_id, after_seq, limit, &a, &n)) != 0)
		goto out;
	if ((*out = api_view_run_log(run_id, a, n)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	store_log_lines_free(a, n);
	return r;
}

/* Values we stored as doubles stay reals ("2.0"), as they always were. */
static json_t *
view_run_sample(const void *a, size_t i)
{
	const struct store_sample_row *e = (const struct store_sample_row *)a + i;

	return json_pack("{s:I, s:I, s:o, s:f, s:o}", "boot", (json_int_t)e->boot,
	    "iteration", (json_int_t)e->iteration, "metric", view_str(e->metric),
	    "value", e->value, "unit", view_str(e->unit));
}

/* key's array out of view_list's {key: [...]}, as a new reference. */
static json_t *
view_array(const char *key, const void *a, size_t n, view_row_fn view)
{
	json_t *l, *arr;

	if ((l = view_list(key, a, n, view)) == NULL)
		return NULL;
	arr = json_incref(json_object_get(l, key));
	json_decref(l);
	return arr;
}

json_t *
api_view_run(const struct store_run *r)
{
	if (r == NULL)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o,"
	    " s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	    "id", (json_int_t)r->id, "job_id", (json_int_t)r->job_id,
	    "cell_index", (json_int_t)r->cell_index, "label", view_str(r->label),
	    "axes", view_json_text(r->axes), "values", view_json_text(r->values),
	    "boot", (json_int_t)r->boot, "attempt", (json_int_t)r->attempt,
	    "state", view_str(r->state), "machine", view_str(r->machine),
	    "hostname", view_str(r->hostname), "kernel", view_str(r->kernel),
	    "boot_id", view_str(r->boot_id),
	    "started_at", view_time(r->has_started, r->started_at),
	    "finished_at", view_time(r->has_finished, r->finished_at),
	    "exit_status", r->has_exit ? json_integer(r->exit_status) : json_null(),
	    "error", view_str(r->error),
	    "knobs_requested", view_json_text(r->knobs_requested),
	    "knobs", view_json_text(r->knobs),
	    "req_kernel", view_str(r->req_kernel), "req_cmdline", view_str(r->req_cmdline),
	    "cmdline", view_str(r->cmdline), "snapshot_sha256", view_str(r->snapshot_sha256),
	    "fingerprint_doc_sha256", view_str(r->fingerprint_doc_sha256),
	    "req_machine", view_str(r->req_machine),
	    "samples", view_array("samples", r->samples, r->nsamples, view_run_sample));
}

static json_t *
view_run_row(const void *a, size_t i)
{
	return api_view_run((const struct store_run *)a + i);
}

json_t *
api_view_runs(const struct store_runs *rs)
{
	return view_list("runs", rs->run, rs->n, view_run_row);
}

int
api_view_job_runs_get(struct store *st, int64_t job_id, int with_samples, json_t **out)
{
	struct store_runs *rs = NULL;
	int r;

	*out = NULL;
	if ((r = store_job_runs(st, job_id, with_samples, &rs)) != 0)
		goto out;
	if ((*out = api_view_runs(rs)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	store_runs_free(rs);
	return r;
}

int
api_view_run_get(struct store *st, int64_t run_id, json_t **out)
{
	struct store_runs *rs = NULL;
	int r;

	*out = NULL;
	if ((r = store_run_get(st, run_id, &rs)) != 0)
		goto out;
	if ((*out = api_view_run(&rs->run[0])) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	store_runs_free(rs);
	return r;
}

static json_t *
view_cell_sample(const void *a, size_t i)
{
	const struct store_sample_row *e = (const struct store_sample_row *)a + i;

	return json_pack("{s:o, s:o, s:I, s:I, s:f, s:I}", "metric", view_str(e->metric),
	    "unit", view_str(e->unit), "boot", (json_int_t)e->boot,
	    "iteration", (json_int_t)e->iteration, "value", e->value, "run", (json_int_t)e->run);
}

static json_t *
view_cell(const void *a, size_t i)
{
	const struct store_cell_row *c = (const struct store_cell_row *)a + i;

	return json_pack("{s:I, s:o, s:o, s:o}", "cell_index", (json_int_t)c->cell_index,
	    "label", view_str(c->label), "axes", view_json_text(c->axes),
	    "samples", view_array("samples", c->samples, c->nsamples, view_cell_sample));
}

json_t *
api_view_cells(const struct store_cells *c)
{
	json_t *o = NULL, *l;

	/* "job" and "recipe" first, as the document always began */
	if ((l = view_list("cells", c->cell, c->n, view_cell)) != NULL)
		o = json_pack("{s:I, s:o, s:O}", "job", (json_int_t)c->job,
		    "recipe", view_str(c->recipe), "cells", json_object_get(l, "cells"));
	json_decref(l);
	return o;
}

int
api_view_job_cells_get(struct store *st, int64_t job_id, json_t **out)
{
	struct store_cells *c = NULL;
	int r;

	*out = NULL;
	if ((r = store_job_cells(st, job_id, &c)) != 0)
		goto out;
	if ((*out = api_view_cells(c)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	store_cells_free(c);
	return r;
}

int
api_view_samples_doc(struct store_samples *ss)
{
	json_t *cells, *c;
	size_t i;

	json_decref(ss->doc);
	if ((ss->doc = json_pack("{s:I, s:o, s:[]}", "job", (json_int_t)ss->job,
	    "recipe", view_str(ss->recipe), "cells")) == NULL)
		return BF_ERR_ALLOC;
	cells = json_object_get(ss->doc, "cells");
	for (i = 0; i < ss->ncells; i++)
		if ((c = json_pack("{s:I, s:o, s:o}", "cell_index",
		    (json_int_t)ss->cell[i].cell_index, "label", view_str(ss->cell[i].label),
		    "axes", view_json_text(ss->cell[i].axes))) == NULL ||
		    json_array_append_new(cells, c) != 0)
			return BF_ERR_ALLOC;
	return 0;
}

int
api_view_samples_get(struct store *st, int64_t job_id, struct store_samples **out)
{
	struct store_samples *ss = NULL;
	int r;

	*out = NULL;
	if ((r = store_job_samples(st, job_id, &ss)) != 0 || (r = api_view_samples_doc(ss)) != 0)
		goto out;
	*out = ss;
	ss = NULL;
out:
	store_samples_free(ss);
	return r;
}
