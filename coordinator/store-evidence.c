/*
 * store-evidence.c: what each run was measured in (issue 16). The agent's
 * environment snapshot of a step is stored once per distinct text, named
 * by the sha256 the store computes over exactly the text it keeps, and
 * each run names its own; a row is never changed, so an old run's
 * environment cannot move when the machine does. A run's artifacts (its
 * profile) are stored the same way, as bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

#include "caps.h"
#include "err.h"
#include "sha256.h"
#include "store.h"
#include "store-int.h"

struct snapshot_arg {
	int64_t run_id;
	const char *text;
	const char *sha256;
};

int
store_snapshot_locked(struct store *s, int64_t run_id, const char *text, const char *sha256)
{
	int r, n = 0;

	/* only the coordinator running it says where a run ran */
	if ((r = store_run_held(s, run_id)) != 0 ||
	    (r = store_q_exec(s, Q_SN_ADD, NULL, "ttI", sha256, text, store_now_s())) != 0 ||
	    (r = store_q_exec(s, Q_R_SNAPSHOT, &n, "It", run_id, sha256)) != 0)
		return r;
	return n == 1 ? 0 : BF_ERR_NOTFOUND;
}

static int
snapshot_tx(struct store *s, void *arg)
{
	const struct snapshot_arg *a = arg;

	return store_snapshot_locked(s, a->run_id, a->text, a->sha256);
}

int
store_run_set_snapshot(struct store *s, int64_t run_id, const char *json_text,
    char sha256[65])
{
	struct snapshot_arg a = { .run_id = run_id, .text = json_text, .sha256 = sha256 };
	size_t n;

	if (s == NULL || json_text == NULL || sha256 == NULL)
		return BF_ERR_INVALID;
	n = strlen(json_text);
	if (n == 0 || n > BF_MAX_AGENT_LINE)
		return BF_ERR_TOOBIG;
	sha256_hex(json_text, n, sha256);
	return store_tx(s, snapshot_tx, &a);
}

int
store_run_fp_locked(struct store *s, int64_t run_id)
{
	struct db_stmt *st = NULL;
	char *text = NULL, sha[65];
	int r;

	if ((r = store_q(s, Q_FP_OF_RUN, &st, "I", run_id)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {		/* never probed: nothing to name */
		r = 0;
		goto out;
	}
	if ((r = store_col_dup(st, 0, &text)) != 0)
		goto out;
	db_reset(st);
	st = NULL;
	sha256_hex(text, strlen(text), sha);
	if ((r = store_q_exec(s, Q_FP_ADD, NULL, "ttI", sha, text, store_now_s())) == 0)
		r = store_q_exec(s, Q_R_FP, NULL, "It", run_id, sha);
out:
	if (st != NULL)
		db_reset(st);
	free(text);
	return r;
}

/* One content-addressed document of table q (snapshots, fingerprints). */
static int
doc_get(struct store *s, enum store_q q, const char *sha256, char **json_text)
{
	struct db_stmt *st = NULL;
	int r;

	*json_text = NULL;
	if (s == NULL || sha256 == NULL || !sha256_is_hex(sha256))
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q(s, q, &st, "t", sha256)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	r = store_col_dup(st, 0, json_text);
out:
	if (st != NULL)
		db_reset(st);
	store_unlock(s);
	return r;
}

int
store_snapshot_get(struct store *s, const char *sha256, char **json_text)
{
	return doc_get(s, Q_SN_GET, sha256, json_text);
}

int
store_fingerprint_get(struct store *s, const char *sha256, char **json_text)
{
	return doc_get(s, Q_FP_GET, sha256, json_text);
}

struct artifact_arg {
	int64_t run_id;
	const char *name;
	const char *event;
	const void *p;
	size_t n;
	const char *sha256;
};

static int
artifact_tx(struct store *s, void *arg)
{
	const struct artifact_arg *a = arg;
	int r;

	if ((r = store_run_held(s, a->run_id)) != 0 ||
	    (r = store_q_exec(s, Q_ART_ADD, NULL, "tbId", a->sha256, a->p, a->n, (int64_t)a->n,
	    store_now())) != 0 ||
	    (r = store_q_exec(s, Q_RA_DEL, NULL, "It", a->run_id, a->name)) != 0)
		return r;
	return store_q_exec(s, Q_RA_ADD, NULL, "Ittt", a->run_id, a->name, a->sha256, a->event);
}

/* A perf event's name as the store keeps it: short, [a-z-], never empty. */
static int
artifact_event_ok(const char *e)
{
	size_t n = strspn(e, "abcdefghijklmnopqrstuvwxyz-");

	return n > 0 && n < STORE_MAX_EVENT && e[n] == '\0';
}

int
store_run_add_artifact(struct store *s, int64_t run_id, const char *name, const char *event,
    const void *p, size_t n, char sha256[65])
{
	struct artifact_arg a = { .run_id = run_id, .name = name, .event = event, .p = p, .n = n,
		.sha256 = sha256 };

	if (s == NULL || name == NULL || name[0] == '\0' || strlen(name) > BF_MAX_NAME ||
	    (p == NULL && n > 0) || sha256 == NULL || (event != NULL && !artifact_event_ok(event)))
		return BF_ERR_INVALID;
	if (n > BF_MAX_ARTIFACT_PERF)
		return BF_ERR_TOOBIG;
	if (p == NULL)
		a.p = "";
	sha256_hex(a.p, n, sha256);
	return store_tx(s, artifact_tx, &a);
}

int
store_run_artifact(struct store *s, int64_t run_id, const char *name, void **data,
    size_t *n, char sha256[65], char event[STORE_MAX_EVENT])
{
	struct db_stmt *st = NULL;
	const void *b;
	const char *h, *ev;
	size_t len;
	int r;

	*data = NULL;
	*n = 0;
	event[0] = '\0';
	if (s == NULL || name == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q(s, Q_RA_GET, &st, "It", run_id, name)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	len = db_col_bytes(st, 0);
	b = db_col_blob(st, 0);
	h = db_col_text(st, 2);
	ev = db_col_text(st, 3);
	/* what the row says it holds, or nothing: a short blob is not the artifact */
	if ((int64_t)len != db_col_int64(st, 1) || h == NULL || !sha256_is_hex(h) ||
	    (len > 0 && b == NULL) || (ev != NULL && !artifact_event_ok(ev))) {
		r = BF_ERR_DB;
		goto out;
	}
	if ((*data = malloc(len + 1)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (len > 0)
		memcpy(*data, b, len);
	((char *)*data)[len] = '\0';
	*n = len;
	snprintf(sha256, 65, "%s", h);
	if (ev != NULL)
		snprintf(event, STORE_MAX_EVENT, "%s", ev);
	r = 0;
out:
	if (st != NULL)
		db_reset(st);
	store_unlock(s);
	return r;
}
