/*
 * store_fixture.h: what the store's unit programs (coord_test_store.c and
 * coord_test_store_schema.c and the other coord_test_store_*.c) share on top of coord_fixture.h: where their
 * stores live (files, or with BF_TEST_PG_URL a database each), and
 * machines, jobs and states made and read through the store API alone.
 * Header-only: each program includes it once.
 */
#ifndef BF_STORE_FIXTURE_H
#define BF_STORE_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "coord_fixture.h"
#include "api-view.h"
#include "db.h"
#include "err.h"
#include "plan.h"
#include "store.h"
#include "t.h"

static struct fix_where where;

/* A file called name in the test's directory, whatever the engine. */
static inline const char *
tpath(const char *name)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/%s", where.dir, name);
	return p;
}

/* Where the store called name lives: a file, or a database of its own. */
static inline const char *
target(const char *name)
{
	return fix_target(&where, name);
}

/* Nothing left of the store called name (an empty database on PostgreSQL). */
static inline void
rm_db(const char *name)
{
	T_CHECK(fix_fresh(&where, name) != NULL);
}

static inline struct store *
open_fresh(const char *name)
{
	struct store *s = fix_open_fresh(&where, name);

	T_CHECK(s != NULL);
	return s;
}

/* Behind the store's back (for migration tests): set the schema version of
 * the store called name; read it; run sql on it; count a table's rows (a
 * fixed table name, never input). */
/* Set the schema version of the store called name behind its back. */
static inline void
force_version(const char *name, int v)
{
	struct db *db = NULL;
	char sql[80];

	if (where.pg_url != NULL)
		snprintf(sql, sizeof(sql), "UPDATE bf_schema SET version = %d", v);
	else
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
	T_EQ_INT(db_open(target(name), &db, NULL), 0);
	if (db != NULL)
		T_EQ_INT(db_exec_script(db, sql), 0);
	db_close(db);
}

static inline int
read_version(const char *name)
{
	struct db *db = NULL;
	struct db_stmt *st = NULL;
	int v = -1;

	T_EQ_INT(db_open(target(name), &db, NULL), 0);
	if (db != NULL && db_prepare(db, where.pg_url != NULL ? "SELECT version FROM bf_schema" :
	    "PRAGMA user_version", &st) == 0 && db_step(st) == 1)
		v = db_col_int(st, 0);
	db_finalize(st);
	db_close(db);
	return v;
}

/* The statement sql on the store called name, behind the store's back. */
static inline void
exec_on(const char *name, const char *sql)
{
	struct db *db = NULL;

	T_EQ_INT(db_open(target(name), &db, NULL), 0);
	if (db != NULL && db_exec_script(db, sql) != 0) {
		fprintf(stderr, "%s: %s\n", sql, db_last_error());
		T_CHECK(0);
	}
	db_close(db);
}

/* Claim the next run of klass on machine, give it the one sample sm and
 * finish it done. */
static inline void
done_run_with(struct store *s, const char *machine, const char *klass,
    const struct store_sample *sm)
{
	struct store_claim *c = NULL;

	T_EQ_INT(store_run_claim(s, machine, klass, 60, &c), 0);
	T_CHECK(c != NULL);
	if (c != NULL) {
		T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 1), 0);
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	}
	store_claim_free(c);
}

/* before and after the same JSON (keys sorted), after holding needle. */
static inline void
check_same_json(const json_t *before, const json_t *after, const char *needle)
{
	char *bt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	char *at = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);

	T_CHECK(bt != NULL && at != NULL && strstr(at, needle) != NULL);
	if (bt != NULL && at != NULL)
		T_EQ_STR(at, bt);
	free(bt);
	free(at);
}

/* Rows of table in the store called name (a fixed table name, never input). */
static inline int
count_rows(const char *name, const char *table, size_t *n)
{
	struct db *db = NULL;
	struct db_stmt *st = NULL;
	char sql[128];
	int r;

	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", table);
	if ((r = db_open(target(name), &db, NULL)) == 0 && (r = db_prepare(db, sql, &st)) == 0 &&
	    db_step(st) == 1)
		*n = (size_t)db_col_int(st, 0);
	db_finalize(st);
	db_close(db);
	return r;
}

/* Drop the stores called names[0..n), their files (some cases make a file
 * even on PostgreSQL) and the directory. */
static inline void
store_fixture_done(const char *const *names, size_t n)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char p[600];
	size_t i, k;

	for (i = 0; i < n; i++) {
		fix_remove(&where, names[i]);
		for (k = 0; k < sizeof(sfx) / sizeof(sfx[0]); k++) {
			snprintf(p, sizeof(p), "%s%s", tpath(names[i]), sfx[k]);
			unlink(p);
		}
	}
	if (rmdir(where.dir) != 0)
		fprintf(stderr, "rmdir %s: something was left behind\n", where.dir);
}

static inline int
add_machine(struct store *s, const char *name, const char *klass)
{
	struct store_machine m;

	memset(&m, 0, sizeof(m));
	m.name = (char *)name;
	m.host = "127.0.0.1";
	m.port = 2222;
	m.user = "bench";
	m.key_path = "/etc/benchfleet/id_ed25519";
	m.klass = (char *)klass;
	return store_machine_add(s, &m, NULL);
}

/* A job of ncells cells times nboots boots, runs inserted boot-major so
 * that the claim order (boot, then cell) differs from insertion order. */
static inline int64_t
add_job(struct store *s, const char *klass, const char *names, size_t ncells, int nboots)
{
	struct store_run_new *rn;
	char (*labels)[32], (*axes)[64];
	size_t n = ncells * (size_t)nboots, i = 0, c;
	int64_t id = -1;
	int b;

	rn = calloc(n, sizeof(*rn));
	labels = calloc(n, sizeof(*labels));
	axes = calloc(n, sizeof(*axes));
	if (rn == NULL || labels == NULL || axes == NULL)
		goto out;
	for (c = 0; c < ncells; c++)
		for (b = nboots - 1; b >= 0; b--, i++) {
			snprintf(labels[i], sizeof(labels[i]), "loops=%zu", c * 10);
			snprintf(axes[i], sizeof(axes[i]), "{\"loops\": %zu}", c * 10);
			rn[i].cell_index = c;
			rn[i].label = labels[i];
			rn[i].axes_json = axes[i];
			rn[i].values_json = axes[i];
			rn[i].boot = b;
			rn[i].run_order = plan_run_order(PLAN_INTERLEAVED, c, b);
			rn[i].iterations = 5;
			rn[i].timeout_s = 600;
		}
	T_EQ_INT(store_job_create(s, "demo", "a test job", "{\"recipe\": \"demo\"}", klass, names,
	    rn, n, &id), 0);
out:
	free(rn);
	free(labels);
	free(axes);
	return id;
}

/* A string member of a run's JSON, copied into buf. */
static inline const char *
run_str(struct store *s, int64_t run_id, const char *key, char *buf, size_t bufsz)
{
	json_t *o = NULL;
	const char *v;

	buf[0] = '\0';
	if (api_view_run_get(s, run_id, &o) != 0)
		return "(no run)";
	v = json_string_value(json_object_get(o, key));
	snprintf(buf, bufsz, "%s", v != NULL ? v : "(null)");
	json_decref(o);
	return buf;
}

static inline const char *
job_state(struct store *s, int64_t id, char *buf, size_t bufsz)
{
	json_t *o = NULL;
	const char *v;

	buf[0] = '\0';
	if (api_view_job_get(s, id, &o) != 0)
		return "(no job)";
	v = json_string_value(json_object_get(o, "state"));
	snprintf(buf, bufsz, "%s", v != NULL ? v : "(null)");
	json_decref(o);
	return buf;
}

static inline const char *
machine_state(struct store *s, const char *name, char *buf, size_t bufsz)
{
	struct store_machine *m = NULL;

	buf[0] = '\0';
	if (store_machine_get(s, name, &m) != 0)
		return "(no machine)";
	snprintf(buf, bufsz, "%s", m->state);
	store_machine_free(m);
	return buf;
}

#endif
