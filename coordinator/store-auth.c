/*
 * store-auth.c: the tokens table (schema step 2) and job ownership reads.
 *
 * These statements are prepared per call and finalized before the store
 * lock is released, rather than kept in the statement cache of
 * store-int.h: a token check is a single indexed row, and keeping them
 * out of the shared tables leaves store.c's query list to the jobs and
 * runs code.
 */
#include <string.h>

#include "db.h"

#include "auth.h"
#include "caps.h"
#include "store-int.h"

/* Prepare sql on s (locked by the caller). */
static int
sa_prep(struct store *s, const char *sql, struct db_stmt **stp)
{
	store_assert_locked(s);
	return db_prepare(s->db, sql, stp);
}

/* One step: 1 row, 0 done, BF_ERR_* failure. */
static int
sa_step(struct store *s, struct db_stmt *st)
{
	store_assert_locked(s);
	return db_step(st);
}

int
store_token_add(struct store *s, const char *name, enum auth_role role,
    const uint8_t salt[AUTH_SALT_LEN], const uint8_t hash[AUTH_HASH_LEN], int64_t *idp,
    struct bf_diag *d)
{
	struct db_stmt *st = NULL;
	int r;

	if (s == NULL || role < AUTH_VIEWER || role > AUTH_ADMIN)
		return BF_ERR_INVALID;
	if ((r = store_check_str(name, "name", BF_MAX_NAME, 0, d)) != 0)
		return r;
	store_lock(s);
	if ((r = sa_prep(s, "INSERT INTO tokens (name, role, salt, hash, created_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id", &st)) != 0)
		goto out;
	if (db_bind_text(st, 1, name) != 0 ||
	    db_bind_text(st, 2, auth_role_name(role)) != 0 ||
	    db_bind_blob(st, 3, salt, AUTH_SALT_LEN) != 0 ||
	    db_bind_blob(st, 4, hash, AUTH_HASH_LEN) != 0 ||
	    db_bind_int64(st, 5, store_now_s()) != 0) {
		r = BF_ERR_DB;
		goto out;
	}
	if ((r = sa_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_DB;
		goto out;
	}
	*idp = db_col_int64(st, 0);
	r = 0;
out:
	if (r != 0)
		bf_diag_set(d, NULL, "store: %s", store_last_error());
	db_finalize(st);
	store_unlock(s);
	return r;
}

int
store_token_get(struct store *s, int64_t id, struct store_token *out)
{
	struct db_stmt *st = NULL;
	const char *role;
	int r;

	memset(out, 0, sizeof(*out));
	if (s == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = sa_prep(s, "SELECT role, salt, hash, last_used, revoked_at IS NOT NULL"
	    " FROM tokens WHERE id = ?1", &st)) != 0)
		goto out;
	if (db_bind_int64(st, 1, id) != 0) {
		r = BF_ERR_DB;
		goto out;
	}
	if ((r = sa_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	/* The CHECKs of step 2 fix the sizes; a damaged row denies access. */
	if (db_col_bytes(st, 1) != AUTH_SALT_LEN ||
	    db_col_bytes(st, 2) != AUTH_HASH_LEN ||
	    (role = (const char *)db_col_text(st, 0)) == NULL ||
	    auth_role_parse(role, &out->role, NULL) != 0) {
		r = BF_ERR_DB;
		goto out;
	}
	memcpy(out->salt, db_col_blob(st, 1), AUTH_SALT_LEN);
	memcpy(out->hash, db_col_blob(st, 2), AUTH_HASH_LEN);
	out->last_used = db_col_int64(st, 3);
	out->revoked = db_col_int(st, 4);
	out->id = id;
	r = 0;
out:
	db_finalize(st);
	store_unlock(s);
	return r;
}

int
store_token_touch(struct store *s, int64_t id, int64_t min_age_s)
{
	struct db_stmt *st = NULL;
	int64_t now = store_now_s();
	int r;

	if (s == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = sa_prep(s, "UPDATE tokens SET last_used = ?2 WHERE id = ?1"
	    " AND (last_used IS NULL OR last_used < ?3)", &st)) != 0)
		goto out;
	if (db_bind_int64(st, 1, id) != 0 ||
	    db_bind_int64(st, 2, now) != 0 ||
	    db_bind_int64(st, 3, now - min_age_s) != 0) {
		r = BF_ERR_DB;
		goto out;
	}
	if ((r = sa_step(s, st)) < 0)
		goto out;
	r = 0;
out:
	db_finalize(st);
	store_unlock(s);
	return r;
}

int
store_token_revoke(struct store *s, int64_t id)
{
	struct db_stmt *st = NULL;
	int r;

	if (s == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = sa_prep(s, "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1"
	    " AND revoked_at IS NULL", &st)) != 0)
		goto out;
	if (db_bind_int64(st, 1, id) != 0 ||
	    db_bind_int64(st, 2, store_now_s()) != 0) {
		r = BF_ERR_DB;
		goto out;
	}
	if ((r = sa_step(s, st)) < 0)
		goto out;
	if (db_changes(s->db) == 1) {
		r = 0;
		goto out;
	}
	db_finalize(st);
	if ((r = sa_prep(s, "SELECT 1 FROM tokens WHERE id = ?1", &st)) != 0)
		goto out;
	if (db_bind_int64(st, 1, id) != 0) {
		r = BF_ERR_DB;
		goto out;
	}
	if ((r = sa_step(s, st)) < 0)
		goto out;
	r = r == 1 ? BF_ERR_STATE : BF_ERR_NOTFOUND;
out:
	db_finalize(st);
	store_unlock(s);
	return r;
}

int
store_token_count(struct store *s, int64_t *np)
{
	struct db_stmt *st = NULL;
	int r;

	*np = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = sa_prep(s, "SELECT COUNT(*) FROM tokens", &st)) != 0 ||
	    (r = sa_step(s, st)) < 0)
		goto out;
	*np = r == 1 ? db_col_int64(st, 0) : 0;
	r = 0;
out:
	db_finalize(st);
	store_unlock(s);
	return r;
}

static void
token_row_clear(struct store_token_row *t)
{
	free(t->name);
	free(t->role);
}

void
store_tokens_free(struct store_token_row *a, size_t n)
{
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		token_row_clear(&a[i]);
	free(a);
}

int
store_tokens_list(struct store *s, struct store_token_row **out, size_t *nout)
{
	struct store_token_row *a = NULL, *t;
	struct db_stmt *st = NULL;
	size_t n = 0, cap = 0;
	int r;

	*out = NULL;
	*nout = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	/* Never salt or hash. */
	if ((r = sa_prep(s, "SELECT id, name, role, created_at, last_used, revoked_at"
	    " FROM tokens ORDER BY id", &st)) != 0)
		goto out;
	while ((r = sa_step(s, st)) == 1) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;

			if ((t = realloc(a, ncap * sizeof(*a))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			a = t;
			cap = ncap;
		}
		t = &a[n++];
		memset(t, 0, sizeof(*t));
		t->id = db_col_int64(st, 0);
		t->created_at = db_col_int64(st, 3);
		if ((t->has_last_used = db_col_type(st, 4) != DB_NULL))
			t->last_used = db_col_int64(st, 4);
		if ((t->has_revoked = db_col_type(st, 5) != DB_NULL))
			t->revoked_at = db_col_int64(st, 5);
		if ((r = store_col_dup(st, 1, &t->name)) != 0 ||
		    (r = store_col_dup(st, 2, &t->role)) != 0)
			goto out;
	}
	if (r < 0)
		goto out;
	*out = a;
	*nout = n;
	a = NULL;
	r = 0;
out:
	db_finalize(st);
	store_unlock(s);
	store_tokens_free(a, n);
	return r;
}

int
store_job_owner(struct store *s, int64_t job_id, int64_t *ownerp)
{
	struct db_stmt *st = NULL;
	int r;

	*ownerp = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = sa_prep(s, "SELECT owner_token FROM jobs WHERE id = ?1", &st)) != 0)
		goto out;
	if (db_bind_int64(st, 1, job_id) != 0) {
		r = BF_ERR_DB;
		goto out;
	}
	if ((r = sa_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	*ownerp = db_col_int64(st, 0);	/* NULL reads as 0 */
	r = 0;
out:
	db_finalize(st);
	store_unlock(s);
	return r;
}
