/*
 * store-repro.c: the store's side of federation and reproduction: the
 * published flag of a job (only published jobs' bundles are served to
 * other labs) and the reproductions table (repro.h).
 */
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
store_jobs_published_json(struct store *s, size_t limit, json_t **out)
{
	return store_page_json(s, Q_J_LIST_PUB, "jobs", limit, out);
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
