/*
 * store-repro.c: the store's side of federation and reproduction: the
 * published flag of a job (only published jobs' bundles are served to
 * other labs) and the reproductions table (repro.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "store-int.h"

int
store_job_publish(struct store *s, int64_t id)
{
	int r, changes = 0;

	if (s == NULL || id <= 0)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q_exec(s, Q_J_PUBLISH, &changes, "I", id)) != 0)
		goto out;
	r = changes == 1 ? 0 : BF_ERR_NOTFOUND;
out:
	store_unlock(s);
	return r;
}

int
store_job_published(struct store *s, int64_t id, int *pubp)
{
	struct db_stmt *st;
	int r;

	if (s == NULL || pubp == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q(s, Q_J_PUBLISHED, &st, "I", id)) != 0)
		goto out;
	if ((r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	*pubp = db_col_int64(st, 0) != 0;
	r = 0;
out:
	store_unlock(s);
	return r;
}

int
store_repro_add(struct store *s, int64_t job_id, const char *bundle, const char *sha256,
    const char *source, double delta_pct, const char *info_json, int64_t *idp)
{
	int r;

	if (s == NULL || bundle == NULL || sha256 == NULL || info_json == NULL || idp == NULL ||
	    job_id <= 0 || strlen(bundle) > BF_MAX_BUNDLE)
		return BF_ERR_INVALID;
	if ((r = store_check_str(source, "source", 2048, 0, NULL)) != 0)
		return r;
	store_lock(s);
	if ((r = store_q_id(s, Q_X_ADD, idp, "Ittt" "dt" "I", job_id, bundle, sha256,
	    source, delta_pct, info_json, store_now_s())) != 0)
		goto out;
	r = 0;
out:
	store_unlock(s);
	return r;
}

void
store_repro_free(struct store_repro *x)
{
	if (x == NULL)
		return;
	free(x->bundle);
	free(x->bundle_sha256);
	free(x->source);
	free(x->info);
	free(x);
}

int
store_repro_get(struct store *s, int64_t id, struct store_repro **out)
{
	struct store_repro *x = NULL;
	struct db_stmt *st;
	int r;

	*out = NULL;
	if (s == NULL)
		return BF_ERR_INVALID;
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return BF_ERR_ALLOC;
	store_lock(s);
	if ((r = store_q(s, Q_X_GET, &st, "I", id)) != 0)
		goto out;
	if ((r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	x->id = id;
	x->job_id = db_col_int64(st, 0);
	if ((r = store_col_dup(st, 1, &x->bundle)) != 0 ||
	    (r = store_col_dup(st, 2, &x->bundle_sha256)) != 0 ||
	    (r = store_col_dup(st, 3, &x->source)) != 0 ||
	    (r = store_col_dup(st, 5, &x->info)) != 0)
		goto out;
	x->delta_pct = db_col_double(st, 4);
	x->created_at = db_col_int64(st, 6);
	*out = x;
	x = NULL;
	r = 0;
out:
	store_unlock(s);
	store_repro_free(x);
	return r;
}

static int
repro_row_fill(struct db_stmt *st, struct store_repro_row *e)
{
	int r;

	e->id = db_col_int64(st, 0);
	e->job_id = db_col_int64(st, 1);
	e->delta_pct = db_col_double(st, 4);
	e->created_at = db_col_int64(st, 6);
	e->runs_total = db_col_int64(st, 9);
	e->runs_done = db_col_int64(st, 10);
	e->runs_failed = db_col_int64(st, 11);
	if ((r = store_col_dup(st, 2, &e->bundle_sha256)) != 0 ||
	    (r = store_col_dup(st, 3, &e->source)) != 0 ||
	    (r = store_col_dup(st, 5, &e->info)) != 0 ||
	    (r = store_col_dup(st, 7, &e->recipe)) != 0 ||
	    (r = store_col_dup(st, 8, &e->job_state)) != 0)
		return r;
	return 0;
}

static void
repro_row_clear(struct store_repro_row *e)
{
	free(e->bundle_sha256);
	free(e->source);
	free(e->info);
	free(e->recipe);
	free(e->job_state);
	memset(e, 0, sizeof(*e));
}

void
store_repro_rows_free(struct store_repro_row *a, size_t n)
{
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		repro_row_clear(&a[i]);
	free(a);
}

int
store_repro_list(struct store *s, int64_t before, size_t limit,
    struct store_repro_row **out, size_t *nout, int *more)
{
	struct store_repro_row *a = NULL;
	struct db_stmt *st;
	size_t n = 0;
	int r;

	*out = NULL;
	*nout = 0;
	*more = 0;
	if (s == NULL || before < 0)
		return BF_ERR_INVALID;
	if (limit == 0 || limit > STORE_MAX_PAGE)
		limit = STORE_MAX_PAGE;
	/* one row more than the page says whether there is a next page */
	if ((a = calloc(limit + 1, sizeof(*a))) == NULL)
		return BF_ERR_ALLOC;
	s = store_rlock(s);	/* a reader: no transaction needed */
	if ((r = store_q(s, Q_X_LIST, &st, "II", before, (int64_t)limit + 1)) != 0)
		goto out;
	while (n <= limit && (r = store_q_step(s, st)) == 1)
		if ((r = repro_row_fill(st, &a[n++])) != 0)
			goto out;
	if (r < 0)
		goto out;
	if (n > limit) {
		*more = 1;
		repro_row_clear(&a[limit]);
		n = limit;
	}
	*out = a;
	*nout = n;
	a = NULL;
	r = 0;
out:
	store_unlock(s);
	store_repro_rows_free(a, n);
	return r;
}

/* --- trust (schema step 7) --- */

static int
audit_exec(struct store *s, const struct store_audit *au)
{
	if (au == NULL || au->actor == NULL || au->action == NULL)
		return BF_ERR_INVALID;
	return store_q_exec(s, Q_AUDIT_ADD, NULL, "dtttt", store_now(), au->actor, au->action,
	    au->subject, au->detail);
}

static int
audit_check(const struct store_audit *au)
{
	int r;

	if (au == NULL || au->actor == NULL || au->action == NULL)
		return BF_ERR_INVALID;
	if ((r = store_check_str(au->actor, "actor", 256, 1, NULL)) != 0 ||
	    (r = store_check_str(au->action, "action", 64, 1, NULL)) != 0 ||
	    (r = store_check_str(au->subject, "subject", 1024, 0, NULL)) != 0 ||
	    (r = store_check_str(au->detail, "detail", 8192, 0, NULL)) != 0)
		return r;
	return 0;
}

int
store_audit_add(struct store *s, const struct store_audit *au)
{
	int r;

	if (s == NULL || (r = audit_check(au)) != 0)
		return s == NULL ? BF_ERR_INVALID : r;
	store_lock(s);
	r = audit_exec(s, au);
	store_unlock(s);
	return r;
}

static int
audit_row_fill(struct db_stmt *st, void *elem)
{
	struct store_audit_row *e = elem;
	int r;

	e->id = db_col_int64(st, 0);
	e->at = db_col_double(st, 1);
	if ((r = store_col_dup(st, 2, &e->actor)) != 0 ||
	    (r = store_col_dup(st, 3, &e->action)) != 0 ||
	    (r = store_col_dup(st, 4, &e->subject)) != 0 ||
	    (r = store_col_dup(st, 5, &e->detail)) != 0)
		return r;
	return 0;
}

static void
audit_row_clear(void *elem)
{
	struct store_audit_row *e = elem;

	free(e->actor);
	free(e->action);
	free(e->subject);
	free(e->detail);
}

int
store_audit_list(struct store *s, size_t limit, struct store_audit_row **out, size_t *nout)
{
	return store_page(s, Q_AUDIT_LIST, limit, sizeof(**out), audit_row_fill,
	    audit_row_clear, (void **)out, nout);
}

void
store_audit_rows_free(struct store_audit_row *a, size_t n)
{
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		audit_row_clear(&a[i]);
	free(a);
}

struct audited_arg {
	const struct store_audit *au;
	int none_is;
	enum store_q id;
	const char *fmt;
	va_list *ap;			/* consumed only through copies: fn may run twice */
};

static int
audited_tx(struct store *s, void *arg)
{
	struct audited_arg *a = arg;
	va_list ap;
	int r, changes = 0;

	va_copy(ap, *a->ap);
	r = store_q_vexec(s, a->id, &changes, a->fmt, ap);
	va_end(ap);
	if (r != 0)
		return r;
	if (changes == 0)
		return a->none_is;
	return audit_exec(s, a->au);
}

/* One write of id (bound by fmt) with its audit entry, in one transaction;
 * none_is (BF_ERR_EXISTS or BF_ERR_NOTFOUND) when it changed
 * nothing, and then nothing is audited. */
static int
write_audited(struct store *s, const struct store_audit *au, int none_is, enum store_q id,
    const char *fmt, ...)
{
	struct audited_arg a = { .au = au, .none_is = none_is, .id = id, .fmt = fmt };
	va_list ap;
	int r;

	va_start(ap, fmt);
	a.ap = &ap;
	r = store_tx(s, audited_tx, &a);
	va_end(ap);
	return r;
}

int
store_recipe_import(struct store *s, const char *name, const char *sha256,
    const char *json_text, const struct store_audit *au)
{
	int r;

	if (s == NULL || name == NULL || sha256 == NULL || json_text == NULL)
		return BF_ERR_INVALID;
	if ((r = audit_check(au)) != 0 ||
	    (r = store_check_str(name, "name", BF_MAX_NAME, 1, NULL)) != 0 ||
	    (r = store_check_str(sha256, "sha256", 64, 1, NULL)) != 0 ||
	    (r = store_check_str(json_text, "recipe", BF_MAX_API_BODY, 1, NULL)) != 0)
		return r;
	return write_audited(s, au, BF_ERR_EXISTS, Q_RI_ADD, "tttt" "I", sha256, name, json_text,
	    au->actor, store_now_s());
}

/* The text column 0 of the first row of id bound with one text. */
static int
get_text(struct store *s, enum store_q id, const char *key, char **outp)
{
	struct db_stmt *st;
	int r;

	*outp = NULL;
	if (s == NULL || key == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q(s, id, &st, "t", key)) != 0)
		goto out;
	if ((r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	if ((r = store_col_dup(st, 0, outp)) != 0)
		goto out;
	r = *outp != NULL ? 0 : BF_ERR_NOTFOUND;
out:
	store_unlock(s);
	return r;
}

int
store_recipe_imported(struct store *s, const char *sha256, char **jsonp)
{
	return get_text(s, Q_RI_GET, sha256, jsonp);
}

int
store_recipe_imported_by_name(struct store *s, const char *name, char **jsonp)
{
	return get_text(s, Q_RI_BY_NAME, name, jsonp);
}

static int
recipe_imp_fill(struct db_stmt *st, void *elem)
{
	struct store_recipe_imp *e = elem;
	int r;

	e->created_at = db_col_int64(st, 3);
	if ((r = store_col_dup(st, 0, &e->name)) != 0 ||
	    (r = store_col_dup(st, 1, &e->sha256)) != 0 ||
	    (r = store_col_dup(st, 2, &e->actor)) != 0)
		return r;
	return 0;
}

static void
recipe_imp_clear(void *elem)
{
	struct store_recipe_imp *e = elem;

	free(e->name);
	free(e->sha256);
	free(e->actor);
}

int
store_recipes_imported_list(struct store *s, struct store_recipe_imp **out, size_t *nout)
{
	return store_page(s, Q_RI_LIST, 0, sizeof(**out), recipe_imp_fill, recipe_imp_clear,
	    (void **)out, nout);
}

void
store_recipes_imported_free(struct store_recipe_imp *a, size_t n)
{
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		recipe_imp_clear(&a[i]);
	free(a);
}

int
store_lab_trust(struct store *s, const char *name, const char *public_key,
    const char *fingerprint, const char *source, const struct store_audit *au)
{
	int r;

	if (s == NULL || name == NULL || public_key == NULL || fingerprint == NULL)
		return BF_ERR_INVALID;
	if ((r = audit_check(au)) != 0 ||
	    (r = store_check_str(name, "name", BF_MAX_NAME, 1, NULL)) != 0 ||
	    (r = store_check_str(public_key, "public_key", 64, 1, NULL)) != 0 ||
	    (r = store_check_str(fingerprint, "fingerprint", 64, 1, NULL)) != 0 ||
	    (r = store_check_str(source, "source", 2048, 0, NULL)) != 0)
		return r;
	return write_audited(s, au, BF_ERR_EXISTS, Q_LAB_ADD, "ttttt" "I", name, public_key,
	    fingerprint, source, au->actor, store_now_s());
}

int
store_lab_untrust(struct store *s, const char *name, const struct store_audit *au)
{
	int r;

	if (s == NULL || name == NULL)
		return BF_ERR_INVALID;
	if ((r = audit_check(au)) != 0)
		return r;
	return write_audited(s, au, BF_ERR_NOTFOUND, Q_LAB_DEL, "t", name);
}

int
store_lab_by_key(struct store *s, const char *public_key, char *name, size_t namesz)
{
	char *n = NULL;
	int r;

	if ((r = get_text(s, Q_LAB_BY_KEY, public_key, &n)) != 0)
		return r;
	snprintf(name, namesz, "%s", n);
	free(n);
	return 0;
}

static int
lab_fill(struct db_stmt *st, void *elem)
{
	struct store_lab *e = elem;
	int r;

	e->created_at = db_col_int64(st, 5);
	if ((r = store_col_dup(st, 0, &e->name)) != 0 ||
	    (r = store_col_dup(st, 1, &e->public_key)) != 0 ||
	    (r = store_col_dup(st, 2, &e->fingerprint)) != 0 ||
	    (r = store_col_dup(st, 3, &e->source)) != 0 ||
	    (r = store_col_dup(st, 4, &e->actor)) != 0)
		return r;
	return 0;
}

static void
lab_clear(void *elem)
{
	struct store_lab *e = elem;

	free(e->name);
	free(e->public_key);
	free(e->fingerprint);
	free(e->source);
	free(e->actor);
}

int
store_labs_list(struct store *s, struct store_lab **out, size_t *nout)
{
	return store_page(s, Q_LAB_LIST, 0, sizeof(**out), lab_fill, lab_clear, (void **)out,
	    nout);
}

void
store_labs_free(struct store_lab *a, size_t n)
{
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		lab_clear(&a[i]);
	free(a);
}
