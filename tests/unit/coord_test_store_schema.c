/*
 * coord_test_store_schema.c: opening and migrating a store, on SQLite or
 * (BF_TEST_PG_URL, unit.coord_test_store_schema@pg) PostgreSQL: a fresh
 * store, a reopen that migrates nothing, a store from a newer benchfleetd
 * refused and left alone, files that are not stores, both engines at the
 * same columns, and a store made by schema 6 opening with every sample
 * intact. Step 8 has its own: coord_test_store_plan.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "db.h"
#include "store.h"
#include "store_fixture.h"
#include "t.h"

/* Set the schema version of the store called name behind its back. */
static void
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

static int
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

static void
test_open(void)
{
	struct store *s = NULL;
	struct bf_diag d;
	FILE *f;
	int v;

	s = open_fresh("open.db");
	T_CHECK(s != NULL);
	v = store_schema_version(s);
	T_EQ_INT(v, 8);		/* bump with each new migration step */
	T_EQ_INT(add_machine(s, "m1", "demo"), 0);
	T_EQ_INT(store_is_shared(s), where.pg_url != NULL);
	store_close(s);

	/* Reopening migrates nothing and keeps the data. */
	s = NULL;
	T_EQ_INT(store_open(target("open.db"), &s, NULL), 0);
	T_EQ_INT(store_schema_version(s), v);
	T_EQ_INT(add_machine(s, "m1", "demo"), BF_ERR_EXISTS);
	store_close(s);
	store_close(NULL);

	/* A store from a newer benchfleetd is refused, and left alone. */
	force_version("open.db", 999);
	s = NULL;
	bf_diag_clear(&d);
	T_EQ_INT(store_open(target("open.db"), &s, &d), BF_ERR_DB);
	T_CHECK(s == NULL);
	T_CONTAINS(d.msg, "999");
	T_CONTAINS(d.msg, "newer");
	T_EQ_INT(read_version("open.db"), 999);

	if (where.pg_url != NULL) {
		/* A server that is not there, and a password kept out of the message. */
		s = NULL;
		bf_diag_clear(&d);
		T_CHECK(store_open("postgresql://bf:sekrit@127.0.0.1:1/none", &s, &d) != 0);
		T_CHECK(s == NULL);
		T_CONTAINS(d.msg, "cannot connect");
		T_CHECK(strstr(d.msg, "sekrit") == NULL);
		/* A database that does not exist. */
		bf_diag_clear(&d);
		T_CHECK(store_open(fix_target(&where, "no_such_db"), &s, &d) != 0);
		T_CONTAINS(d.msg, "no_such_db");
		return;
	}

	/* Not a database at all. */
	rm_db("junk.db");
	if ((f = fopen(tpath("junk.db"), "w")) != NULL) {
		fputs("this is not an SQLite file, just some text that is long enough\n", f);
		fclose(f);
	}
	s = NULL;
	bf_diag_clear(&d);
	T_CHECK(store_open(tpath("junk.db"), &s, &d) != 0);
	T_CHECK(s == NULL);
	T_CONTAINS(d.msg, "junk.db");

	/* A directory that does not exist. */
	s = NULL;
	T_CHECK(store_open("/nonexistent-dir/x/y.db", &s, &d) != 0);
	T_CHECK(s == NULL);
	T_CHECK(store_open("", &s, &d) != 0);
}

static void
columns_of(const char *tgt, int pg, const char *table, char *out, size_t outsz)
{
	struct db *db = NULL;
	struct db_stmt *st = NULL;
	char sql[300];

	out[0] = '\0';
	if (pg)
		snprintf(sql, sizeof(sql), "SELECT column_name FROM information_schema.columns"
		    " WHERE table_name = '%s' AND table_schema = current_schema()"
		    " ORDER BY ordinal_position", table);
	else
		snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s') ORDER BY cid",
		    table);
	if (db_open(tgt, &db, NULL) != 0 || db_prepare(db, sql, &st) != 0) {
		T_CHECK(0);
		goto out;
	}
	while (db_step(st) == 1) {
		strncat(out, db_col_text(st, 0), outsz - strlen(out) - 2);
		strncat(out, ",", outsz - strlen(out) - 1);
	}
out:
	db_finalize(st);
	db_close(db);
}

/* Both engines end at the same tables and columns after every step. */
static void
test_same_schema(void)
{
	static const char *const tables[] = { "machines", "jobs", "runs", "samples", "run_logs",
	    "tokens", "reproductions", "recipes_imported", "labs", "audit" };
	struct store *s = NULL;
	char a[2048], b[2048];
	size_t i;

	unlink(tpath("same.db"));
	T_EQ_INT(store_open(tpath("same.db"), &s, NULL), 0);
	store_close(s);
	s = open_fresh("same.db");
	store_close(s);
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		columns_of(tpath("same.db"), 0, tables[i], a, sizeof(a));
		columns_of(target("same.db"), 1, tables[i], b, sizeof(b));
		T_CHECK(a[0] != '\0');
		T_EQ_STR(a, b);
	}
}

/* Undo schema steps 8 and 7 behind the store's back: what a store made by
 * a benchfleetd of schema 6 (before trust) holds, steps 1..6 being the
 * same. Step 8 (plan columns) has a test of its own:
 * coord_test_store_plan.c. */
static void
make_v6(const char *name)
{
	struct db *db = NULL;

	T_EQ_INT(db_open(target(name), &db, NULL), 0);
	if (db != NULL)
		T_EQ_INT(db_exec_script(db, "DROP INDEX runs_claim;"
		    "ALTER TABLE runs DROP COLUMN run_order; ALTER TABLE runs DROP COLUMN iterations;"
		    "ALTER TABLE runs DROP COLUMN warmup; ALTER TABLE runs DROP COLUMN timeout_s;"
		    "CREATE INDEX runs_claim ON runs(job_id, boot, cell_index, id)"
		    " WHERE state = 'queued';"
		    "DROP TABLE audit; DROP TABLE labs;"
		    "DROP INDEX recipes_imported_name; DROP TABLE recipes_imported"), 0);
	db_close(db);
	force_version(name, 6);
}

/* A store of schema 6 with samples opens with this version: step 7 adds
 * the trust tables, and every sample, run and job is as it was. Then the
 * trust tables themselves: imports, the keyring, the audit log. */
static void
test_migrate_trust(void)
{
	struct store_sample sm[2] = { { "ops", 1234.5, "ops/s" }, { "wall", 2.25, "s" } };
	struct store_audit au = { "token:7", "recipe.import", "demo", "abc" };
	struct store_claim *c = NULL;
	struct store *s;
	json_t *before = NULL, *after = NULL, *j = NULL;
	char *before_txt = NULL, *after_txt = NULL, *text = NULL, name[64];
	static const char sha[] = "d841d96aaf9242ae30f1434e140194e4f42e4c8c6b40507be77d50874572fb73";
	int64_t job;
	int it;

	if ((s = open_fresh("migrate.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	job = add_job(s, "demo", NULL, 1, 1);
	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
	if (c == NULL) {
		store_close(s);
		return;
	}
	for (it = 0; it < 3; it++)
		T_EQ_INT(store_samples_add(s, c->run_id, 0, it, sm, 2), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	store_claim_free(c);
	T_EQ_INT(store_job_samples_json(s, job, &before), 0);
	store_close(s);
	make_v6("migrate.db");
	T_EQ_INT(read_version("migrate.db"), 6);

	s = NULL;
	T_EQ_INT(store_open(target("migrate.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), 8);
	T_EQ_INT(store_job_samples_json(s, job, &after), 0);
	before_txt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	after_txt = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
	T_CHECK(before_txt != NULL && after_txt != NULL);
	T_EQ_STR(after_txt, before_txt);
	T_CONTAINS(after_txt, "1234.5");
	T_EQ_INT(json_array_size(json_object_get(json_array_get(json_object_get(after, "cells"),
	    0), "samples")), 6);

	/* imported recipes: one per hash, audited with it */
	T_EQ_INT(store_recipe_import(s, "demo", sha, "{\"name\":\"demo\"}", &au), 0);
	T_EQ_INT(store_recipe_import(s, "demo", sha, "{\"name\":\"demo\"}", &au), BF_ERR_EXISTS);
	T_EQ_INT(store_recipe_imported(s, sha, &text), 0);
	T_EQ_STR(text, "{\"name\":\"demo\"}");
	free(text);
	text = NULL;
	T_EQ_INT(store_recipe_imported(s, "00", &text), BF_ERR_NOTFOUND);
	T_EQ_INT(store_recipe_imported_by_name(s, "demo", &text), 0);
	free(text);
	text = NULL;
	T_EQ_INT(store_recipe_imported_by_name(s, "nope", &text), BF_ERR_NOTFOUND);
	T_EQ_INT(store_recipes_imported_json(s, &j), 0);
	T_EQ_INT(json_array_size(json_object_get(j, "recipes")), 1);
	json_decref(j);
	j = NULL;

	/* the keyring: a name and a key once each */
	au.action = "lab.trust";
	au.subject = "lab-a";
	T_EQ_INT(store_lab_trust(s, "lab-a", "KEY-A", "SHA256:a", NULL, &au), 0);
	T_EQ_INT(store_lab_trust(s, "lab-a", "KEY-B", "SHA256:b", NULL, &au), BF_ERR_EXISTS);
	T_EQ_INT(store_lab_trust(s, "lab-b", "KEY-A", "SHA256:a", NULL, &au), BF_ERR_EXISTS);
	T_EQ_INT(store_lab_by_key(s, "KEY-A", name, sizeof(name)), 0);
	T_EQ_STR(name, "lab-a");
	T_EQ_INT(store_lab_by_key(s, "KEY-B", name, sizeof(name)), BF_ERR_NOTFOUND);
	T_EQ_INT(store_labs_json(s, &j), 0);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(j, "labs"), 0),
	    "fingerprint")), "SHA256:a");
	json_decref(j);
	j = NULL;
	au.action = "lab.untrust";
	T_EQ_INT(store_lab_untrust(s, "lab-a", &au), 0);
	T_EQ_INT(store_lab_untrust(s, "lab-a", &au), BF_ERR_NOTFOUND);
	T_EQ_INT(store_lab_by_key(s, "KEY-A", name, sizeof(name)), BF_ERR_NOTFOUND);

	/* the audit log: every change that happened, none that did not,
	 * newest first */
	au.action = "job.publish";
	au.subject = "job 1";
	au.detail = NULL;
	T_EQ_INT(store_audit_add(s, &au), 0);
	au.actor = NULL;
	T_EQ_INT(store_audit_add(s, &au), BF_ERR_INVALID);
	T_EQ_INT(store_audit_json(s, 0, &j), 0);
	T_EQ_INT(json_array_size(json_object_get(j, "audit")), 4);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(j, "audit"), 0),
	    "action")), "job.publish");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(j, "audit"), 3),
	    "action")), "recipe.import");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(j, "audit"), 3),
	    "actor")), "token:7");
	json_decref(j);
out:
	free(before_txt);
	free(after_txt);
	json_decref(before);
	json_decref(after);
	store_close(s);
}

int
main(void)
{
	static const char *const dbs[] = { "open.db", "junk.db", "same.db", "migrate.db" };

	if (fix_where_init(&where, "store-schema") != 0)
		return 1;
	test_open();
	test_migrate_trust();
	if (where.pg_url != NULL)
		test_same_schema();
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
