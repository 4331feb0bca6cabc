/*
 * store-kbuild.c: kernel builds and their artifacts (schema step 14,
 * issue 18). The row of a build key is the lock that keeps a key from
 * being built twice, across coordinators sharing a PostgreSQL store: the
 * INSERT ... ON CONFLICT DO NOTHING decides who builds, and a lapsed
 * lease lets another take over. The artifacts' bytes are files
 * (kstore.c); the rows say which exist and which builds name them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "err.h"
#include "sha256.h"
#include "store.h"
#include "store-int.h"

#define KB_MAX_SPEC	(64 * 1024)	/* a spec's JSON in the row */
#define KB_MAX_ERROR	STORE_KB_MAX_ERROR
#define KB_MAX_RELEASE	STORE_KB_MAX_RELEASE

static const char *const kb_kinds[] = { "image", "modules", "config", "sysmap", "log", NULL };

static int
kb_key_ok(const char *key)
{
	return key != NULL && sha256_is_hex(key);
}

struct kb_take {
	const char *key, *spec, *machine;
	int lease_s;
	int take;
};

static int
kb_take_tx(struct store *s, void *arg)
{
	struct kb_take *a = arg;
	struct db_stmt *st = NULL;
	const char *state;
	int64_t now = store_now_s();
	int r, n = 0;

	if ((r = store_q_exec(s, Q_KB_INSERT, &n, "tttt" "Id", a->key, a->spec, s->node,
	    a->machine, now + a->lease_s, store_now())) != 0)
		return r;
	if (n == 1) {
		a->take = STORE_KBUILD_MINE;
		return 0;
	}
	if ((r = store_q_exec(s, Q_KB_STEAL, &n, "ttt" "II", a->key, s->node, a->machine,
	    now + a->lease_s, now)) != 0)
		return r;
	if (n == 1) {
		a->take = STORE_KBUILD_MINE;
		return 0;
	}
	if ((r = store_q(s, Q_KB_STATE, &st, "t", a->key)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 0)
		return BF_ERR_DB;	/* the insert saw a row that is gone */
	state = db_col_text(st, 0);
	if (state != NULL && strcmp(state, "done") == 0)
		a->take = STORE_KBUILD_DONE;
	else if (state != NULL && strcmp(state, "failed") == 0)
		a->take = STORE_KBUILD_FAILED;
	else
		a->take = STORE_KBUILD_BUSY;
	return 0;
}

int
store_kbuild_take(struct store *s, const char *key, const char *spec_json,
    const char *machine, int lease_s, int *take)
{
	struct kb_take a = { key, spec_json, machine, lease_s, STORE_KBUILD_BUSY };
	int r;

	if (s == NULL || !kb_key_ok(key) || lease_s <= 0 ||
	    store_check_str(spec_json, "spec", KB_MAX_SPEC, 1, NULL) != 0 ||
	    store_check_str(machine, "machine", BF_MAX_NAME, 0, NULL) != 0)
		return BF_ERR_INVALID;
	if ((r = store_tx(s, kb_take_tx, &a)) == 0)
		*take = a.take;
	return r;
}

int
store_kbuild_renew(struct store *s, const char *key, int lease_s)
{
	int r, n = 0;

	if (s == NULL || !kb_key_ok(key) || lease_s <= 0)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_exec(s, Q_KB_RENEW, &n, "ttI", key, s->node, store_now_s() + lease_s);
	store_unlock(s);
	return r != 0 ? r : n == 1 ? 0 : BF_ERR_STATE;
}

/* NULL, or a hash the store has an artifact row for. */
static int
kb_known(struct store *s, const char *sha)
{
	struct db_stmt *st = NULL;
	int r;

	if (sha == NULL)
		return 0;
	if (!sha256_is_hex(sha))
		return BF_ERR_INVALID;
	if ((r = store_q(s, Q_KA_GET, &st, "t", sha)) != 0 || (r = store_q_step(s, st)) < 0)
		return r;
	db_reset(st);
	return r == 1 ? 0 : BF_ERR_INVALID;
}

struct kb_finish {
	const char *key;
	const struct store_kbuild_out *o;
};

static int
kb_finish_tx(struct store *s, void *arg)
{
	struct kb_finish *a = arg;
	const struct store_kbuild_out *o = a->o;
	const char *const hashes[] = { o->config_sha256, o->image_sha256, o->modules_sha256,
	    o->sysmap_sha256, o->log_sha256 };
	size_t i;
	int r, n = 0;

	for (i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
		if ((r = kb_known(s, hashes[i])) != 0)
			return r;
	if ((r = store_q_exec(s, Q_KB_FINISH, &n, "ttttttttttd", a->key, s->node,
	    o->error != NULL ? "failed" : "done", o->release, o->config_sha256, o->image_sha256,
	    o->modules_sha256, o->sysmap_sha256, o->log_sha256, o->error, store_now())) != 0)
		return r;
	return n == 1 ? 0 : BF_ERR_STATE;
}

int
store_kbuild_finish(struct store *s, const char *key, const struct store_kbuild_out *o)
{
	struct kb_finish a = { key, o };

	if (s == NULL || o == NULL || !kb_key_ok(key) ||
	    store_check_str(o->release, "release", KB_MAX_RELEASE, o->error == NULL, NULL) != 0 ||
	    store_check_str(o->error, "error", KB_MAX_ERROR, 0, NULL) != 0 ||
	    (o->error == NULL && (o->image_sha256 == NULL || o->config_sha256 == NULL)))
		return BF_ERR_INVALID;
	return store_tx(s, kb_finish_tx, &a);
}

/* Text column i of st into dst[0..n), "" for NULL; BF_ERR_DB when
 * it does not fit (the store wrote none that long). */
static int
kb_col(struct db_stmt *st, int i, char *dst, size_t n)
{
	const char *v = db_col_text(st, i);
	size_t len = v != NULL ? strlen(v) : 0;

	if (len >= n)
		return BF_ERR_DB;
	memcpy(dst, v != NULL ? v : "", len);
	dst[len] = '\0';
	return 0;
}

/* Q_KB_GET's text columns, by position, into struct store_kbuild. */
static const struct {
	int col;
	size_t off, size;
} kb_text[] = {
#define KB_F(c, f) { c, offsetof(struct store_kbuild, f), sizeof(((struct store_kbuild *)0)->f) }
	KB_F(0, key), KB_F(1, state), KB_F(2, machine), KB_F(3, release),
	KB_F(4, config_sha256), KB_F(5, image_sha256), KB_F(6, modules_sha256),
	KB_F(7, sysmap_sha256), KB_F(8, log_sha256), KB_F(9, error),
#undef KB_F
};

/* The row of query id bound to arg into *out. */
static int
kb_get(struct store *s, enum store_q id, const char *arg, struct store_kbuild *out)
{
	struct db_stmt *st = NULL;
	size_t i;
	int r;

	store_lock(s);
	if ((r = store_q(s, id, &st, "t", arg)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	r = 0;
	for (i = 0; i < sizeof(kb_text) / sizeof(kb_text[0]) && r == 0; i++)
		r = kb_col(st, kb_text[i].col, (char *)out + kb_text[i].off, kb_text[i].size);
	out->created_at = db_col_int64(st, 10);
	out->finished_at = db_col_int64(st, 11);
	out->last_used = db_col_int64(st, 12);
out:
	store_unlock(s);
	if (r != 0)
		memset(out, 0, sizeof(*out));
	return r;
}

int
store_kbuild_get(struct store *s, const char *key, struct store_kbuild *out)
{
	memset(out, 0, sizeof(*out));
	if (s == NULL || !kb_key_ok(key))
		return BF_ERR_INVALID;
	return kb_get(s, Q_KB_GET, key, out);
}

int
store_kbuild_by_release(struct store *s, const char *release, struct store_kbuild *out)
{
	memset(out, 0, sizeof(*out));
	if (s == NULL || store_check_str(release, "release", KB_MAX_RELEASE, 1, NULL) != 0)
		return BF_ERR_INVALID;
	return kb_get(s, Q_KB_BY_RELEASE, release, out);
}

int
store_kbuild_touch(struct store *s, const char *key)
{
	int r, n = 0;

	if (s == NULL || !kb_key_ok(key))
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_exec(s, Q_KB_TOUCH, &n, "td", key, store_now());
	store_unlock(s);
	return r != 0 ? r : n == 1 ? 0 : BF_ERR_NOTFOUND;
}

int
store_kartifact_add(struct store *s, const char *sha256, const char *kind, int64_t size)
{
	size_t i;
	int r;

	for (i = 0; kind != NULL && kb_kinds[i] != NULL; i++)
		if (strcmp(kind, kb_kinds[i]) == 0)
			break;
	if (s == NULL || sha256 == NULL || !sha256_is_hex(sha256) || kind == NULL ||
	    kb_kinds[i] == NULL || size < 0)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_exec(s, Q_KA_ADD, NULL, "ttId", sha256, kind, size, store_now());
	store_unlock(s);
	return r;
}

int
store_kartifact_get(struct store *s, const char *sha256, char kind[8], int64_t *size)
{
	struct db_stmt *st = NULL;
	const char *k;
	int r;

	if (s == NULL || sha256 == NULL || !sha256_is_hex(sha256))
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q(s, Q_KA_GET, &st, "t", sha256)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	k = db_col_text(st, 0);
	snprintf(kind, 8, "%s", k != NULL ? k : "");
	*size = db_col_int64(st, 1);
	r = *size >= 0 ? 0 : BF_ERR_DB;
out:
	store_unlock(s);
	return r;
}

struct kb_prune {
	int64_t max;
	char (*v)[65];
	size_t n, cap;
};

/* Forget the artifacts no build names; their hashes into a->v. */
static int
kb_drop_orphans(struct store *s, struct kb_prune *a)
{
	struct db_stmt *st = NULL;
	char (*nv)[65], sha[65];
	const char *h;
	int r;

	for (;;) {
		if ((r = store_q(s, Q_KA_ORPHANS, &st, "")) != 0 || (r = store_q_step(s, st)) < 0)
			return r;
		if (r == 0)
			return 0;
		h = db_col_text(st, 0);
		if (h == NULL || !sha256_is_hex(h))
			return BF_ERR_DB;
		snprintf(sha, sizeof(sha), "%s", h);
		db_reset(st);
		if (a->n == a->cap) {
			a->cap = a->cap ? a->cap * 2 : 16;
			if ((nv = realloc(a->v, a->cap * sizeof(*a->v))) == NULL)
				return BF_ERR_ALLOC;
			a->v = nv;
		}
		memcpy(a->v[a->n++], sha, sizeof(sha));
		if ((r = store_q_exec(s, Q_KA_DEL, NULL, "t", sha)) != 0)
			return r;
	}
}

static int
kb_prune_tx(struct store *s, void *arg)
{
	struct kb_prune *a = arg;
	struct db_stmt *st = NULL;
	char key[65];
	const char *k;
	int64_t total;
	int r;

	a->n = 0;		/* a PostgreSQL retry starts over */
	if ((r = kb_drop_orphans(s, a)) != 0)
		return r;
	for (;;) {
		if ((r = store_q(s, Q_KA_TOTAL, &st, "")) != 0 || (r = store_q_step(s, st)) < 0)
			return r;
		total = r == 1 ? db_col_int64(st, 0) : 0;
		db_reset(st);
		if (total <= a->max)
			return 0;
		if ((r = store_q(s, Q_KB_OLDEST, &st, "")) != 0 || (r = store_q_step(s, st)) < 0)
			return r;
		if (r == 0)
			return 0;	/* only builds in progress hold the rest */
		if ((k = db_col_text(st, 0)) == NULL || !sha256_is_hex(k))
			return BF_ERR_DB;
		snprintf(key, sizeof(key), "%s", k);
		db_reset(st);
		if ((r = store_q_exec(s, Q_KB_DEL, NULL, "t", key)) != 0 ||
		    (r = kb_drop_orphans(s, a)) != 0)
			return r;
	}
}

int
store_kbuild_prune(struct store *s, int64_t max_bytes, char (**victims)[65], size_t *n)
{
	struct kb_prune a = { max_bytes, NULL, 0, 0 };
	int r;

	*victims = NULL;
	*n = 0;
	if (s == NULL || max_bytes < 0)
		return BF_ERR_INVALID;
	if ((r = store_tx(s, kb_prune_tx, &a)) != 0 || a.n == 0) {
		free(a.v);
		return r;
	}
	*victims = a.v;
	*n = a.n;
	return 0;
}

int
store_artifact_get(struct store *s, const char *sha256, void **data, size_t *n)
{
	struct db_stmt *st = NULL;
	const void *b;
	size_t len;
	int r;

	*data = NULL;
	*n = 0;
	if (s == NULL || sha256 == NULL || !sha256_is_hex(sha256))
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q(s, Q_ART_GET, &st, "t", sha256)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	len = db_col_bytes(st, 0);
	b = db_col_blob(st, 0);
	if ((int64_t)len != db_col_int64(st, 1) || (len > 0 && b == NULL)) {
		r = BF_ERR_DB;
		goto out;
	}
	if ((*data = malloc(len + 1)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (len > 0)
		memcpy(*data, b, len);
	*n = len;
	r = 0;
out:
	store_unlock(s);
	return r;
}
