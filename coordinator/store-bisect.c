/*
 * store-bisect.c: the store's side of a bisection (bisect.h, schema step
 * 17). The store is the single source of truth: a step's row and the job
 * that measures it are written in one transaction, and a verdict with the
 * bisection's new interval in another, so a coordinator killed at any
 * moment resumes from what is here and never makes a step's job twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "store-int.h"

static const char *const bisect_states[] = { "running", "done", "failed", "cancelled" };
static const char *const step_verdicts[] = { "pending", "good", "bad", "skip", "more" };

static int
word_in(const char *w, const char *const *set, size_t n)
{
	size_t i;

	for (i = 0; w != NULL && i < n; i++)
		if (strcmp(w, set[i]) == 0)
			return 1;
	return 0;
}

int
store_bisect_add(struct store *s, const char *spec_json, int64_t *idp)
{
	int r;

	if (s == NULL || idp == NULL || spec_json == NULL ||
	    strlen(spec_json) > BF_MAX_API_BODY)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_id(s, Q_BI_ADD, idp, "td", spec_json, store_now());
	store_unlock(s);
	return r;
}

static void
bisect_clear(struct store_bisect *b)
{
	free(b->spec);
	free(b->state);
	free(b->commits);
	free(b->first_bad);
	free(b->message);
	memset(b, 0, sizeof(*b));
}

void
store_bisect_free(struct store_bisect *b)
{
	if (b == NULL)
		return;
	bisect_clear(b);
	free(b);
}

void
store_bisects_free(struct store_bisect *a, size_t n)
{
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		bisect_clear(&a[i]);
	free(a);
}

/* Q_BI_GET's and Q_BI_LIST's columns into b. */
static int
bisect_fill(struct db_stmt *st, struct store_bisect *b)
{
	int r;

	b->id = db_col_int64(st, 0);
	b->lo = db_col_int64(st, 4);
	b->hi = db_col_int64(st, 5);
	b->machine_s = db_col_double(st, 8);
	b->created_at = db_col_double(st, 9);
	b->updated_at = db_col_double(st, 10);
	b->finished_at = db_col_double(st, 11);
	if ((r = store_col_dup(st, 1, &b->spec)) != 0 ||
	    (r = store_col_dup(st, 2, &b->state)) != 0 ||
	    (r = store_col_dup(st, 3, &b->commits)) != 0 ||
	    (r = store_col_dup(st, 6, &b->first_bad)) != 0 ||
	    (r = store_col_text(st, 7, &b->message)) != 0)
		return r;
	return b->spec != NULL && b->state != NULL ? 0 : BF_ERR_DB;
}

int
store_bisect_get(struct store *s, int64_t id, struct store_bisect **out)
{
	struct store_bisect *b = NULL;
	struct db_stmt *st;
	int r;

	*out = NULL;
	if (s == NULL || id <= 0)
		return id <= 0 ? BF_ERR_NOTFOUND : BF_ERR_INVALID;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return BF_ERR_ALLOC;
	s = store_rlock(s);
	if ((r = store_q(s, Q_BI_GET, &st, "I", id)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	if ((r = bisect_fill(st, b)) != 0)
		goto out;
	*out = b;
	b = NULL;
	r = 0;
out:
	store_unlock(s);
	store_bisect_free(b);
	return r;
}

int
store_bisect_list(struct store *s, size_t limit, struct store_bisect **out, size_t *n)
{
	struct store_bisect *a = NULL;
	struct db_stmt *st;
	size_t k = 0;
	int r;

	*out = NULL;
	*n = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	if (limit == 0 || limit > STORE_MAX_PAGE)
		limit = STORE_MAX_PAGE;
	if ((a = calloc(limit, sizeof(*a))) == NULL)
		return BF_ERR_ALLOC;
	s = store_rlock(s);
	if ((r = store_q(s, Q_BI_LIST, &st, "I", (int64_t)limit)) != 0)
		goto out;
	while (k < limit && (r = store_q_step(s, st)) == 1)
		if ((r = bisect_fill(st, &a[k++])) != 0)
			goto out;
	if (r < 0)
		goto out;
	*out = a;
	*n = k;
	a = NULL;
	r = 0;
out:
	store_unlock(s);
	store_bisects_free(a, k);
	return r;
}

int
store_bisect_running(struct store *s, int64_t **out, size_t *n)
{
	struct db_stmt *st;
	int64_t *ids = NULL;
	size_t k = 0;
	int r;

	*out = NULL;
	*n = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	if ((ids = calloc(STORE_MAX_PAGE, sizeof(*ids))) == NULL)
		return BF_ERR_ALLOC;
	s = store_rlock(s);
	if ((r = store_q(s, Q_BI_RUNNING, &st, "")) != 0)
		goto out;
	while (k < STORE_MAX_PAGE && (r = store_q_step(s, st)) == 1)
		ids[k++] = db_col_int64(st, 0);
	if (r < 0)
		goto out;
	*out = ids;
	*n = k;
	ids = NULL;
	r = 0;
out:
	store_unlock(s);
	free(ids);
	return r;
}

void
store_bisect_steps_free(struct store_bisect_step *a, size_t n)
{
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		free(a[i].stats);
	free(a);
}

int
store_bisect_steps(struct store *s, int64_t id, struct store_bisect_step **out, size_t *n)
{
	struct store_bisect_step *a = NULL, *e;
	struct db_stmt *st;
	const char *t;
	size_t k = 0, cap = 0;
	int r;

	*out = NULL;
	*n = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	s = store_rlock(s);
	if ((r = store_q(s, Q_BS_LIST, &st, "I", id)) != 0)
		goto out;
	while ((r = store_q_step(s, st)) == 1) {
		if (k == cap) {
			struct store_bisect_step *na;

			/* max_steps x max_rounds bounds it; STORE_MAX_PAGE is the cap here */
			if (cap >= STORE_MAX_PAGE) {
				r = BF_ERR_TOOBIG;
				goto out;
			}
			cap = cap ? cap * 2 : 16;
			if ((na = realloc(a, cap * sizeof(*a))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			a = na;
		}
		e = &a[k++];
		memset(e, 0, sizeof(*e));
		e->step = db_col_int64(st, 0);
		e->round = db_col_int64(st, 1);
		e->idx = db_col_int64(st, 2);
		e->job_id = db_col_int64(st, 4);
		t = db_col_text(st, 3);
		snprintf(e->sha, sizeof(e->sha), "%s", t != NULL ? t : "");
		t = db_col_text(st, 5);
		snprintf(e->verdict, sizeof(e->verdict), "%s", t != NULL ? t : "");
		if ((r = store_col_dup(st, 6, &e->stats)) != 0)
			goto out;
	}
	if (r < 0)
		goto out;
	*out = a;
	*n = k;
	a = NULL;
	r = 0;
out:
	store_unlock(s);
	store_bisect_steps_free(a, k);
	return r;
}

struct step_job_arg {
	int64_t id, step, round, idx;
	const char *sha;
};

/* Inside the job's transaction: the step's row naming it. */
static int
step_job_also(struct store *s, int64_t job_id, void *arg)
{
	struct step_job_arg *a = arg;
	struct db_stmt *st;
	int r;

	/* the bisection must still run: a cancel in between makes no job */
	if ((r = store_q(s, Q_BI_GET, &st, "I", a->id)) != 0 || (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 0)
		return BF_ERR_NOTFOUND;
	if (db_col_text(st, 2) == NULL || strcmp(db_col_text(st, 2), "running") != 0)
		return BF_ERR_STATE;
	return store_q_exec(s, Q_BS_ADD, NULL, "IIIItI", a->id, a->step, a->round, a->idx,
	    a->sha, job_id);
}

static int
sha_ok(const char *sha)
{
	size_t i;

	if (sha == NULL || strlen(sha) != 40)
		return 0;
	for (i = 0; i < 40; i++)
		if (!((sha[i] >= '0' && sha[i] <= '9') || (sha[i] >= 'a' && sha[i] <= 'f')))
			return 0;
	return 1;
}

int
store_bisect_step_job(struct store *s, int64_t id, int64_t step, int64_t round, int64_t idx,
    const char *sha, const struct job_spec *job, const struct recipe *rec,
    const struct plan *p, const char *machine_class, const char *machine_names_json,
    int64_t *job_idp)
{
	struct step_job_arg a = { .id = id, .step = step, .round = round, .idx = idx,
	    .sha = sha };
	struct store_job_also also = { step_job_also, &a };

	if (s == NULL || id <= 0 || step < 0 || round < 0 || idx < 0 || !sha_ok(sha))
		return BF_ERR_INVALID;
	return store_job_create_plan_also(s, job, rec, p, machine_class, machine_names_json,
	    0, &also, job_idp);
}

struct advance_arg {
	int64_t id, step, round;
	const char *verdict, *stats;
	const struct store_bisect_upd *u;
};

static int
advance_tx(struct store *s, void *arg)
{
	struct advance_arg *a = arg;
	const struct store_bisect_upd *u = a->u;
	int r, changes = 0;

	if (a->step >= 0) {
		if ((r = store_q_exec(s, Q_BS_SET, &changes, "IIItt", a->id, a->step, a->round,
		    a->verdict, a->stats)) != 0)
			return r;
		if (changes != 1)
			return BF_ERR_STATE;
	}
	if ((r = store_q_exec(s, Q_BI_SET, &changes, "ItIIttdtd", a->id, u->commits, u->lo,
	    u->hi, u->first_bad, u->message, u->machine_s, u->state, store_now())) != 0)
		return r;
	return changes == 1 ? 0 : BF_ERR_STATE;
}

int
store_bisect_advance(struct store *s, int64_t id, int64_t step, int64_t round,
    const char *verdict, const char *stats_json, const struct store_bisect_upd *u)
{
	struct advance_arg a = { .id = id, .step = step, .round = round, .verdict = verdict,
	    .stats = stats_json, .u = u };
	int r;

	if (s == NULL || u == NULL || !word_in(u->state, bisect_states, 3) ||
	    (step >= 0 && (!word_in(verdict, step_verdicts + 1, 4))) ||
	    (u->commits != NULL && strlen(u->commits) > (size_t)BF_MAX_BISECT_COMMITS * 44) ||
	    (stats_json != NULL && strlen(stats_json) > BF_MAX_API_BODY))
		return BF_ERR_INVALID;
	if ((r = store_check_str(u->message, "message", BF_MAX_LOG_LINE, 0, NULL)) != 0 ||
	    (u->first_bad != NULL && !sha_ok(u->first_bad)))
		return BF_ERR_INVALID;
	return store_tx(s, advance_tx, &a);
}

int
store_bisect_cancel(struct store *s, int64_t id, const char *message)
{
	struct store_bisect *b = NULL;
	int r, changes = 0;

	if (s == NULL || store_check_str(message, "message", BF_MAX_LOG_LINE, 0, NULL) != 0)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_exec(s, Q_BI_CANCEL, &changes, "Itd", id, message, store_now());
	store_unlock(s);
	if (r != 0 || changes == 1)
		return r;
	/* not running: gone, or over already */
	r = store_bisect_get(s, id, &b);
	store_bisect_free(b);
	return r == 0 ? BF_ERR_STATE : r;
}
