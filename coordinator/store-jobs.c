/*
 * store-jobs.c: jobs in the store: creating a job with all its runs,
 * the job views the API serves, cancelling, and the samples of a job
 * grouped by cell for reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

#include "err.h"
#include "caps.h"
#include "store.h"
#include "store-int.h"
#include "job.h"
#include "jx.h"
#include "plan.h"
#include "recipe.h"

/* Is text a JSON document of the given type (at most max bytes)? */
static int
json_text_is(const char *text, json_type type, size_t max)
{
	json_t *v;
	int ok;

	if (text == NULL || strlen(text) > max)
		return 0;
	if ((v = json_loads(text, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return 0;
	ok = json_typeof(v) == type;
	json_decref(v);
	return ok;
}

/*
 * The claim matches names with json_each, so the list must be an array of
 * plain names, or the claim query would fail for every machine. Returns
 * the number of names, -1 if the text is no such list.
 */
static int
names_count(const char *text)
{
	json_t *a, *v;
	size_t i;
	int n = -1;

	if (strlen(text) > BF_MAX_API_BODY)
		return -1;
	if ((a = json_loads(text, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return -1;
	if (!json_is_array(a) || json_array_size(a) > BF_MAX_CELLS)
		goto out;
	json_array_foreach(a, i, v)
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > BF_MAX_NAME)
			goto out;
	n = (int)json_array_size(a);
out:
	json_decref(a);
	return n;
}

/* Like store_check_str, but "" is allowed (a one-cell matrix has no label). */
static int
text_ok(const char *v, size_t max)
{
	return v == NULL || *v == '\0' || store_check_str(v, "", max, 0, NULL) == 0;
}

static int
job_args_ok(const char *recipe, const char *name, const char *spec_json,
    const char *machine_class, const char *machine_names_json,
    const struct store_run_new *runs, size_t nruns)
{
	const struct store_run_new *rn;
	size_t i;
	int nnames = 0;

	if (store_check_str(recipe, "recipe", BF_MAX_NAME, 1, NULL) != 0 ||
	    !text_ok(name, BF_MAX_STR) ||
	    store_check_str(machine_class, "machine_class", BF_MAX_NAME, 0, NULL) != 0 ||
	    !json_text_is(spec_json, JSON_OBJECT, BF_MAX_API_BODY))
		return BF_ERR_INVALID;
	if (machine_names_json != NULL && (nnames = names_count(machine_names_json)) < 0)
		return BF_ERR_INVALID;
	if (machine_class == NULL && nnames == 0)
		return BF_ERR_INVALID;	/* no machine could ever take it */
	if (nruns == 0 || runs == NULL)
		return BF_ERR_INVALID;	/* it could never settle */
	if (nruns > (size_t)BF_MAX_CELLS * BF_MAX_BOOTS)
		return BF_ERR_TOOBIG;
	for (i = 0; i < nruns; i++) {
		rn = &runs[i];
		if (rn->cell_index >= BF_MAX_CELLS || rn->boot < 0 || rn->boot >= BF_MAX_BOOTS ||
		    rn->run_order < 0 || rn->iterations < 1 ||
		    rn->iterations > BF_MAX_ITERATIONS || rn->warmup < 0 ||
		    rn->warmup > BF_MAX_WARMUP || rn->timeout_s < 1 ||
		    rn->timeout_s > BF_MAX_TIMEOUT_S ||
		    !text_ok(rn->label, BF_MAX_STR) ||
		    (rn->recipe != NULL && jx_check_name(rn->recipe, "recipe", NULL) != 0) ||
		    (rn->workload != NULL && jx_check_name(rn->workload, "workload", NULL) != 0) ||
		    (rn->machine != NULL && jx_check_name(rn->machine, "machine", NULL) != 0) ||
		    !json_text_is(rn->axes_json, JSON_OBJECT, BF_MAX_API_BODY) ||
		    !json_text_is(rn->values_json, JSON_OBJECT, BF_MAX_API_BODY))
			return BF_ERR_INVALID;
	}
	return 0;
}

int
store_job_create(struct store *s, const char *recipe, const char *name,
    const char *spec_json, const char *machine_class, const char *machine_names_json,
    const struct store_run_new *runs, size_t nruns, int64_t *idp)
{
	return store_job_create_owned(s, recipe, name, spec_json, machine_class,
	    machine_names_json, runs, nruns, 0, idp);
}

static int job_create(struct store *s, const char *recipe, const char *name,
    const char *spec_json, const char *machine_class, const char *machine_names_json,
    const struct store_run_new *runs, size_t nruns, int64_t owner_token, const char *spread,
    const struct store_job_also *also, int64_t *idp);

/* The planned runs of job (rec, or recs[] of a suite) into the store. */
static int
store_job_create_planned(struct store *s, const struct job_spec *job,
    const struct recipe *rec, const struct recipe *const *recs, const struct plan *p,
    const char *machine_class, const char *machine_names_json, int64_t owner_token,
    const struct store_job_also *also, int64_t *idp)
{
	struct store_run_new *runs = NULL;
	char **axes = NULL, **values = NULL, **knobs = NULL, *spec = NULL;
	json_t *specj = NULL;
	size_t i, n = p->ncells ? p->ncells : 1;
	int r = BF_ERR_ALLOC;

	if ((runs = calloc(p->nruns ? p->nruns : 1, sizeof(*runs))) == NULL ||
	    (axes = calloc(n, sizeof(*axes))) == NULL ||
	    (values = calloc(n, sizeof(*values))) == NULL ||
	    (knobs = calloc(n, sizeof(*knobs))) == NULL)
		goto out;
	for (i = 0; i < p->ncells; i++) {
		const struct matrix_cell *c = &p->cells[i];

		if ((axes[i] = json_dumps(c->axes, JSON_COMPACT)) == NULL ||
		    (values[i] = json_dumps(c->values, JSON_COMPACT)) == NULL)
			goto out;
		if (json_object_size(c->knobs) > 0 &&
		    (knobs[i] = json_dumps(c->knobs, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
			goto out;
	}
	for (i = 0; i < p->nruns; i++) {
		const struct plan_run *pr = &p->runs[i];
		const struct matrix_cell *c = &p->cells[pr->cell];
		struct store_run_new *rn = &runs[i];

		rn->cell_index = c->index;
		rn->label = c->label;
		rn->axes_json = axes[pr->cell];
		rn->values_json = values[pr->cell];
		rn->knobs_json = knobs[pr->cell];
		rn->kernel = c->kernel;
		rn->cmdline = c->cmdline;
		rn->boot = pr->boot;
		rn->run_order = pr->order;
		rn->iterations = pr->iterations;
		rn->warmup = pr->warmup;
		rn->timeout_s = pr->timeout_s;
		rn->machine = p->nmachines > 0 ? p->machines[pr->machine] : NULL;
		if (recs != NULL && p->cell_entry != NULL) {
			size_t e = p->cell_entry[pr->cell];

			rn->recipe = recs[e]->name;
			rn->workload = job->suite[e].label;
		}
	}
	/* Keys in the order submitted: the matrix expands in its axes' order,
	 * and the runner expands this text again to check each run against
	 * its cell (runner_claim_cell). */
	if (recs != NULL) {
		json_t *ra;

		/* a suite: the recipe of each entry, by entry */
		if ((specj = json_pack("{s:O,s:[]}", "job", job->json, "recipes")) == NULL)
			goto out;
		ra = json_object_get(specj, "recipes");
		for (i = 0; i < job->nsuite; i++)
			if (json_array_append(ra, recs[i]->json) != 0)
				goto out;
	} else if ((specj = json_pack("{s:O,s:O}", "job", job->json, "recipe", rec->json)) ==
	    NULL)
		goto out;
	if ((spec = json_dumps(specj, JSON_COMPACT)) == NULL)
		goto out;
	r = job_create(s, job->recipe, job->name, spec, machine_class, machine_names_json,
	    runs, p->nruns, owner_token, job_spread_name(job->spread), also, idp);
out:
	for (i = 0; i < p->ncells; i++) {
		free(axes != NULL ? axes[i] : NULL);
		free(values != NULL ? values[i] : NULL);
		free(knobs != NULL ? knobs[i] : NULL);
	}
	free(axes);
	free(values);
	free(knobs);
	free(runs);
	free(spec);
	json_decref(specj);
	return r;
}

int
store_job_create_plan(struct store *s, const struct job_spec *job, const struct recipe *rec,
    const struct plan *p, const char *machine_class, const char *machine_names_json,
    int64_t owner_token, int64_t *idp)
{
	return store_job_create_planned(s, job, rec, NULL, p, machine_class, machine_names_json,
	    owner_token, NULL, idp);
}

int
store_job_create_plan_also(struct store *s, const struct job_spec *job,
    const struct recipe *rec, const struct plan *p, const char *machine_class,
    const char *machine_names_json, int64_t owner_token, const struct store_job_also *also,
    int64_t *idp)
{
	return store_job_create_planned(s, job, rec, NULL, p, machine_class, machine_names_json,
	    owner_token, also, idp);
}

int
store_job_create_suite(struct store *s, const struct job_spec *job,
    const struct recipe *const *recs, const struct plan *p, const char *machine_class,
    const char *machine_names_json, int64_t owner_token, int64_t *idp)
{
	if (!job_is_suite(job) || p->cell_entry == NULL || p->nentries != job->nsuite)
		return BF_ERR_INVALID;
	return store_job_create_planned(s, job, NULL, recs, p, machine_class,
	    machine_names_json, owner_token, NULL, idp);
}

struct job_create_arg {
	const char *recipe, *name, *spec_json, *machine_class, *machine_names_json, *spread;
	const struct store_run_new *runs;
	size_t nruns;
	int64_t owner_token;
	const struct store_job_also *also;
	int64_t id;			/* out */
};

static int
job_create_tx(struct store *s, void *arg)
{
	struct job_create_arg *a = arg;
	const struct store_run_new *rn;
	size_t i;
	int r;

	if ((r = store_q_id(s, Q_J_ADD, &a->id, "ttttt" "II" "t", a->recipe, a->name,
	    a->spec_json, a->machine_class, a->machine_names_json, store_now_s(), a->owner_token,
	    a->spread)) != 0)
		return r;
	for (i = 0; i < a->nruns; i++) {
		rn = &a->runs[i];
		/* An empty label is stored as "", never NULL: the column is NOT NULL. */
		if ((r = store_q_exec(s, Q_R_ADD, NULL, "II" "ttt" "I" "ttt" "IIII" "ttt", a->id,
		    (int64_t)rn->cell_index, rn->label != NULL ? rn->label : "", rn->axes_json,
		    rn->values_json, (int64_t)rn->boot, rn->knobs_json, rn->kernel,
		    rn->cmdline, rn->run_order, (int64_t)rn->iterations, (int64_t)rn->warmup,
		    (int64_t)rn->timeout_s, rn->recipe, rn->workload, rn->machine)) != 0)
			return r;
	}
	if (a->also != NULL)
		return a->also->fn(s, a->id, a->also->arg);
	return 0;
}

int
store_job_create_owned(struct store *s, const char *recipe, const char *name,
    const char *spec_json, const char *machine_class, const char *machine_names_json,
    const struct store_run_new *runs, size_t nruns, int64_t owner_token, int64_t *idp)
{
	return job_create(s, recipe, name, spec_json, machine_class, machine_names_json, runs,
	    nruns, owner_token, "any", NULL, idp);
}

/* spread: job_spread_name()'s word for the job's machines.spread. */
static int
job_create(struct store *s, const char *recipe, const char *name,
    const char *spec_json, const char *machine_class, const char *machine_names_json,
    const struct store_run_new *runs, size_t nruns, int64_t owner_token, const char *spread,
    const struct store_job_also *also, int64_t *idp)
{
	struct job_create_arg a = { .recipe = recipe, .name = name, .spec_json = spec_json,
	    .machine_class = machine_class, .machine_names_json = machine_names_json,
	    .runs = runs, .nruns = nruns, .owner_token = owner_token, .spread = spread,
	    .also = also };
	int r;

	if (s == NULL || spread == NULL)
		return BF_ERR_INVALID;
	if ((r = job_args_ok(recipe, name, spec_json, machine_class, machine_names_json, runs,
	    nruns)) != 0)
		return r;
	if ((r = store_tx(s, job_create_tx, &a)) != 0)
		return r;
	if (idp != NULL)
		*idp = a.id;
	return 0;
}

const char *const store_run_states[STORE_RUN_NSTATES] = {
	[STORE_RUN_QUEUED] = "queued", [STORE_RUN_RUNNING] = "running",
	[STORE_RUN_DONE] = "done", [STORE_RUN_FAILED] = "failed", [STORE_RUN_LOST] = "lost",
	[STORE_RUN_BOOT_FAILED] = "boot-failed", [STORE_RUN_CANCELLED] = "cancelled",
};

/* In the order of Q_J_LIST's state mask. */
const char *const store_job_states[STORE_JOB_NSTATES] = {
	"queued", "running", "done", "failed", "cancelled",
};

static void
job_clear(struct store_job *j)
{
	free(j->recipe);
	free(j->name);
	free(j->state);
	free(j->machine_class);
	free(j->machine_names);
	free(j->spread);
	free(j->pinned_machine);
	free(j->spec);
	memset(j, 0, sizeof(*j));
}

void
store_job_free(struct store_job *j)
{
	if (j == NULL)
		return;
	job_clear(j);
	free(j);
}

void
store_jobs_free(struct store_job *a, size_t n)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < n; i++)
		job_clear(&a[i]);
	free(a);
}

/* JOB_COLS (store.c): after the run counts, spread and pinned_machine */
#define JOB_COL_SPREAD	(9 + STORE_RUN_NSTATES)

/* One row of JOB_COLS (store.c) into j; the caller clears j on failure. */
static int
job_from_row(struct db_stmt *st, struct store_job *j)
{
	int r, i;

	j->id = db_col_int64(st, 0);
	j->created_at = db_col_int64(st, 4);
	if ((j->has_started = db_col_type(st, 5) != DB_NULL))
		j->started_at = db_col_double(st, 5);
	if ((j->has_finished = db_col_type(st, 6) != DB_NULL))
		j->finished_at = db_col_double(st, 6);
	for (i = 0; i < STORE_RUN_NSTATES; i++)
		j->runs[i] = db_col_int64(st, 9 + i);
	if ((r = store_col_dup(st, 1, &j->recipe)) != 0 ||
	    (r = store_col_dup(st, 2, &j->name)) != 0 ||
	    (r = store_col_dup(st, 3, &j->state)) != 0 ||
	    (r = store_col_dup(st, 7, &j->machine_class)) != 0 ||
	    (r = store_col_dup(st, 8, &j->machine_names)) != 0 ||
	    (r = store_col_dup(st, JOB_COL_SPREAD, &j->spread)) != 0 ||
	    (r = store_col_dup(st, JOB_COL_SPREAD + 1, &j->pinned_machine)) != 0)
		return r;
	if (j->recipe == NULL || j->state == NULL)
		return BF_ERR_DB;	/* NOT NULL columns */
	return 0;
}

int
store_job_get(struct store *s, int64_t id, struct store_job **out)
{
	struct store_job *j = NULL;
	struct db_stmt *st;
	int r;

	*out = NULL;
	if (s == NULL)
		return BF_ERR_INVALID;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return BF_ERR_ALLOC;
	s = store_rlock(s);	/* a reader: no transaction needed */
	if ((r = store_q(s, Q_J_GET, &st, "I", id)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	if ((r = job_from_row(st, j)) != 0 ||
	    (r = store_col_dup(st, JOB_COL_SPREAD + 2, &j->spec)) != 0)
		goto out;
	*out = j;
	j = NULL;
	r = 0;
out:
	store_unlock(s);
	store_job_free(j);
	return r;
}

/* "%" q "%" in lower case with LIKE's wildcards and the escape '!' escaped.
 * Caller frees; NULL on ENOMEM. */
static char *
like_pattern(const char *q)
{
	size_t n = strlen(q), i, k = 0;
	char *p;

	if ((p = malloc(2 * n + 3)) == NULL)
		return NULL;
	p[k++] = '%';
	for (i = 0; i < n; i++) {
		char c = q[i];

		if (c == '%' || c == '_' || c == '!')
			p[k++] = '!';
		p[k++] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
	}
	p[k++] = '%';
	p[k] = '\0';
	return p;
}

int
store_jobs_list(struct store *s, const struct store_job_filter *f,
    struct store_job **out, size_t *nout, int64_t *next_before)
{
	struct store_job *a = NULL;
	struct db_stmt *st;
	char *pat = NULL;
	size_t limit, n = 0;
	int r;

	*out = NULL;
	*nout = 0;
	*next_before = 0;
	if (s == NULL || f == NULL || f->before < 0 || f->limit > BF_MAX_JOBS_PAGE ||
	    f->states >= 1u << STORE_JOB_NSTATES ||
	    (f->q != NULL && strlen(f->q) > BF_MAX_JOBS_Q))
		return BF_ERR_INVALID;
	limit = f->limit == 0 ? BF_MAX_JOBS_PAGE : f->limit;
	if ((a = calloc(limit, sizeof(*a))) == NULL ||
	    (f->q != NULL && f->q[0] != '\0' && (pat = like_pattern(f->q)) == NULL)) {
		free(a);
		return BF_ERR_ALLOC;
	}
	s = store_rlock(s);	/* a reader: no transaction needed */
	/* one row past the page says whether an older page exists */
	if ((r = store_q(s, Q_J_LIST, &st, "II" "ttt" "II", f->before, (int64_t)f->states,
	    f->recipe != NULL ? f->recipe : "", f->machine != NULL ? f->machine : "",
	    pat != NULL ? pat : "", (int64_t)(f->published != 0), (int64_t)limit + 1)) != 0)
		goto out;
	while ((r = store_q_step(s, st)) == 1) {
		if (n == limit) {
			*next_before = a[n - 1].id;
			break;
		}
		if ((r = job_from_row(st, &a[n++])) != 0)
			goto out;
	}
	if (r < 0)
		goto out;
	*out = a;
	*nout = n;
	a = NULL;
	r = 0;
out:
	store_unlock(s);
	store_jobs_free(a, n);
	free(pat);
	return r;
}

struct job_cancel_arg {
	int64_t id;
	double now;
};

static int
job_cancel_tx(struct store *s, void *arg)
{
	const struct job_cancel_arg *a = arg;
	struct db_stmt *st;
	const char *state;
	int r;

	if ((r = store_q(s, Q_J_HEAD, &st, "I", a->id)) != 0 || (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 0)
		return BF_ERR_NOTFOUND;
	state = (const char *)db_col_text(st, 0);
	if (state == NULL || (strcmp(state, "queued") != 0 && strcmp(state, "running") != 0))
		return BF_ERR_STATE;
	db_reset(st);
	/* Running runs go on; the last to finish sets the job's finished_at. */
	if ((r = store_q_exec(s, Q_J_CANCEL_RUNS, NULL, "Id", a->id, a->now)) != 0 ||
	    (r = store_q_exec(s, Q_J_CANCEL, NULL, "I", a->id)) != 0 ||
	    (r = store_q_exec(s, Q_J_SETTLE, NULL, "Id", a->id, a->now)) != 0)
		return r;
	return 0;
}

int
store_job_cancel(struct store *s, int64_t id)
{
	struct job_cancel_arg a = { .id = id, .now = store_now() };

	if (s == NULL)
		return BF_ERR_INVALID;
	return store_tx(s, job_cancel_tx, &a);
}

