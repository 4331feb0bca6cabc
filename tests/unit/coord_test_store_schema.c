/*
 * coord_test_store_schema.c: opening and migrating a store, on SQLite or
 * (BF_TEST_PG_URL, unit.coord_test_store_schema@pg) PostgreSQL: a fresh
 * store, a reopen that migrates nothing, a store from a newer benchfleetd
 * refused and left alone, files that are not stores, both engines at the
 * same columns, and a store made by schema 6 opening with every sample
 * intact. Steps 9, 10, 11, 12 and 13 (snapshots, fingerprints,
 * artifacts, suites, the jobs' run counters) each
 * migrate a store of the step before. Step 18 (PostgreSQL's notify
 * triggers) has its own: coord_test_store_notify.c. Step 8 has its own: coord_test_store_plan.c;
 * step 14 (kernel builds) coord_test_store_kbuild.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "db.h"
#include "sha256.h"
#include "store.h"
#include "store_fixture.h"
#include "t.h"

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
	T_EQ_INT(v, FIX_SCHEMA_LATEST);
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

/* Undo schema steps 9, 8 and 7 behind the store's back: what a store made
 * by a benchfleetd of schema 6 (before trust) holds, steps 1..6 being the
 * same. Step 8 (plan columns) has a test of its own:
 * coord_test_store_plan.c; step 9, test_migrate_snapshots below. */
static void
make_v6(const char *name)
{
	struct db *db = NULL;

	T_EQ_INT(db_open(target(name), &db, NULL), 0);
	if (db != NULL)
		T_EQ_INT(db_exec_script(db, fix_undo_step13(where.pg_url != NULL)), 0);
	if (db != NULL)
		T_EQ_INT(db_exec_script(db, FIX_UNDO_STEP9 "DROP INDEX runs_claim;"
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
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	make_v6("migrate.db");
	T_EQ_INT(read_version("migrate.db"), 6);

	s = NULL;
	T_EQ_INT(store_open(target("migrate.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
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
	{
		struct store_recipe_imp *ri = NULL;
		size_t n = 0;

		T_EQ_INT(store_recipes_imported_list(s, &ri, &n), 0);
		T_EQ_INT(n, 1);
		if (n == 1) {
			T_EQ_STR(ri[0].name, "demo");
			T_EQ_STR(ri[0].actor, "token:7");
		}
		j = api_view_recipes_imported(ri, n);
		T_EQ_INT(json_array_size(json_object_get(j, "recipes")), 1);
		store_recipes_imported_free(ri, n);
		json_decref(j);
		j = NULL;
	}

	/* the keyring: a name and a key once each */
	au.action = "lab.trust";
	au.subject = "lab-a";
	T_EQ_INT(store_lab_trust(s, "lab-a", "KEY-A", "SHA256:a", NULL, &au), 0);
	T_EQ_INT(store_lab_trust(s, "lab-a", "KEY-B", "SHA256:b", NULL, &au), BF_ERR_EXISTS);
	T_EQ_INT(store_lab_trust(s, "lab-b", "KEY-A", "SHA256:a", NULL, &au), BF_ERR_EXISTS);
	T_EQ_INT(store_lab_by_key(s, "KEY-A", name, sizeof(name)), 0);
	T_EQ_STR(name, "lab-a");
	T_EQ_INT(store_lab_by_key(s, "KEY-B", name, sizeof(name)), BF_ERR_NOTFOUND);
	{
		struct store_lab *labs = NULL;
		size_t n = 0;

		T_EQ_INT(store_labs_list(s, &labs, &n), 0);
		T_EQ_INT(n, 1);
		j = api_view_labs(labs, n);
		T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(j,
		    "labs"), 0), "fingerprint")), "SHA256:a");
		T_CHECK(json_is_null(json_object_get(json_array_get(json_object_get(j, "labs"), 0),
		    "source")));
		store_labs_free(labs, n);
		json_decref(j);
		j = NULL;
	}
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
	{
		struct store_audit_row *rows = NULL;
		size_t n = 0;

		T_EQ_INT(store_audit_list(s, 2, &rows, &n), 0);
		T_EQ_INT(n, 2);		/* the limit holds */
		store_audit_rows_free(rows, n);
		T_EQ_INT(store_audit_list(s, 0, &rows, &n), 0);
		j = api_view_audit(rows, n);
		store_audit_rows_free(rows, n);
	}
	T_EQ_INT(json_array_size(json_object_get(j, "audit")), 4);
	T_CHECK(json_is_real(json_object_get(json_array_get(json_object_get(j, "audit"), 0),
	    "at")));
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

/* The snapshot text a run names, or NULL (the caller frees). */
static char *
run_snapshot(struct store *s, int64_t run_id)
{
	char buf[80], *text = NULL;
	const char *sha = run_str(s, run_id, "snapshot_sha256", buf, sizeof(buf));

	if (strcmp(sha, "(null)") == 0 || store_snapshot_get(s, sha, &text) != 0)
		return NULL;
	return text;
}

/*
 * Step 9: a store of schema 8 with samples opens with every sample as it
 * was and its runs naming no snapshot. Then the snapshots: stored once per
 * distinct text and named by the sha256 of exactly that text, set only by
 * the coordinator running the run, gone from a run that is retried, and
 * never changed by a later run with another environment.
 */
static void
test_migrate_snapshots(void)
{
	static const char env_a[] = "{\"transparent_hugepage/enabled\":\"madvise\"}";
	static const char env_b[] = "{\"transparent_hugepage/enabled\":\"always\"}";
	struct store_sample sm[1] = { { "ops", 99.5, "ops/s" } };
	struct store_claim *c = NULL, *c2 = NULL;
	struct store *s;
	json_t *before = NULL, *after = NULL;
	char *bt = NULL, *at = NULL, *text = NULL, sha[65], sha2[65], hex[65], buf[80];
	int64_t job, first;
	size_t n;
	int r, snerr;

	if ((s = open_fresh("snap.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "s1", "demo"), 0);
	job = add_job(s, "demo", NULL, 1, 3);
	T_EQ_INT(store_run_claim(s, "s1", "demo", 60, &c), 0);
	if (c == NULL) {
		store_close(s);
		return;
	}
	first = c->run_id;
	T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 1), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	exec_on("snap.db", fix_undo_step13(where.pg_url != NULL));
	exec_on("snap.db", FIX_UNDO_STEP9);
	force_version("snap.db", 8);

	s = NULL;
	T_EQ_INT(store_open(target("snap.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	bt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	at = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
	T_CHECK(bt != NULL && at != NULL && strstr(at, "99.5") != NULL);
	T_EQ_STR(at, bt);
	T_EQ_STR(run_str(s, first, "snapshot_sha256", buf, sizeof(buf)), "(null)");

	/* a finished run is no longer anyone's to describe */
	T_EQ_INT(store_run_set_snapshot(s, first, env_a, sha), BF_ERR_STATE);
	T_EQ_INT(store_run_set_snapshot(s, 999999, env_a, sha), BF_ERR_NOTFOUND);
	T_EQ_INT(store_run_set_snapshot(s, first, "", sha), BF_ERR_TOOBIG);
	/* with the hello, one commit: all or nothing; the hello is not kept */
	snprintf(hex, sizeof(hex), "%s", run_str(s, first, "hostname", buf, sizeof(buf)));
	snerr = -1;
	T_EQ_INT(store_run_hello_snapshot(s, first, "s1", "host-late", "9.9", "x86_64", "b9",
	    NULL, env_a, sha, &snerr), BF_ERR_STATE);
	T_EQ_INT(snerr, 1);
	T_EQ_STR(run_str(s, first, "hostname", buf, sizeof(buf)), hex);
	T_EQ_INT(store_run_hello_snapshot(s, first, "s1", "h", NULL, NULL, NULL, NULL, "", sha,
	    &snerr), BF_ERR_TOOBIG);
	T_EQ_INT(snerr, 1);

	/* the next run: named by the hash of its text, readable back as is */
	T_EQ_INT(store_run_claim(s, "s1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	snerr = -1;
	T_EQ_INT(store_run_hello_snapshot(s, c->run_id, "s1", "host-hs", "6.12.0", "x86_64",
	    "boot-hs", "ro quiet", env_a, sha, &snerr), 0);
	T_EQ_INT(snerr, 0);
	T_EQ_STR(run_str(s, c->run_id, "hostname", buf, sizeof(buf)), "host-hs");
	T_EQ_STR(run_str(s, c->run_id, "kernel", buf, sizeof(buf)), "6.12.0");
	sha256_hex(env_a, strlen(env_a), hex);
	T_EQ_STR(sha, hex);
	T_EQ_STR(run_str(s, c->run_id, "snapshot_sha256", buf, sizeof(buf)), hex);
	text = run_snapshot(s, c->run_id);
	T_EQ_STR(text, env_a);
	free(text);
	text = NULL;
	/* a lost link: the retry starts without the broken attempt's snapshot */
	T_EQ_INT(store_run_retry(s, c->run_id, "link lost", 3, &r), 0);
	T_EQ_STR(run_str(s, c->run_id, "snapshot_sha256", buf, sizeof(buf)), "(null)");
	store_claim_free(c);
	c = NULL;
	/* two runs in one environment share a row; another gets its own, and
	 * the first row is still what it was */
	T_EQ_INT(store_run_claim(s, "s1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	T_EQ_INT(store_run_set_snapshot(s, c->run_id, env_a, sha2), 0);
	T_EQ_STR(sha2, sha);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	T_EQ_INT(store_run_claim(s, "s1", "demo", 60, &c2), 0);
	if (c2 == NULL)
		goto out;
	/* a machine deleted meanwhile: the hello's NOTFOUND, the rest kept */
	snerr = -1;
	T_EQ_INT(store_run_hello_snapshot(s, c2->run_id, "gone", "host-2", "6.12.0", NULL, NULL,
	    NULL, env_b, sha2, &snerr), BF_ERR_NOTFOUND);
	T_EQ_INT(snerr, 0);
	T_EQ_STR(run_str(s, c2->run_id, "hostname", buf, sizeof(buf)), "host-2");
	T_CHECK(strcmp(sha2, sha) != 0);
	text = run_snapshot(s, c->run_id);
	T_EQ_STR(text, env_a);
	free(text);
	text = run_snapshot(s, c2->run_id);
	T_EQ_STR(text, env_b);
	free(text);
	text = NULL;
	n = 0;
	T_EQ_INT(count_rows("snap.db", "snapshots", &n), 0);
	T_EQ_INT(n, 2);
	/* names that are not hashes are refused before any SQL */
	T_EQ_INT(store_snapshot_get(s, "' OR 1=1 --", &text), BF_ERR_INVALID);
	T_EQ_INT(store_snapshot_get(s, "ABCDEF", &text), BF_ERR_INVALID);
	memset(hex, '0', 64);
	T_EQ_INT(store_snapshot_get(s, hex, &text), BF_ERR_NOTFOUND);
	T_CHECK(text == NULL);
out:
	store_claim_free(c);
	store_claim_free(c2);
	free(bt);
	free(at);
	json_decref(before);
	json_decref(after);
	store_close(s);
}

/* The fingerprint document a run names, or NULL (the caller frees). */
static char *
run_fp(struct store *s, int64_t run_id)
{
	char buf[80], *text = NULL;
	const char *sha = run_str(s, run_id, "fingerprint_doc_sha256", buf, sizeof(buf));

	if (strcmp(sha, "(null)") == 0 || store_fingerprint_get(s, sha, &text) != 0)
		return NULL;
	return text;
}

/*
 * Step 10: a store of schema 9 with samples opens with every sample as it
 * was and its runs naming no fingerprint. Then: a run names the machine's
 * fingerprint as it was when the agent's hello named the run's host (the
 * sha256 of exactly that text); a re-probe afterwards changes the machine,
 * never the run; the next run names the new one; two runs under one
 * fingerprint share a row; a retried run starts without one; a machine
 * never probed leaves the run's NULL.
 */
static void
test_migrate_fingerprints(void)
{
	static const char fp_a[] = "{\"cpu_model\":\"EPYC 9654\",\"thp_enabled\":\"madvise\"}";
	static const char fp_b[] = "{\"cpu_model\":\"EPYC 9654\",\"thp_enabled\":\"always\"}";
	struct store_sample sm[1] = { { "ops", 77.25, "ops/s" } };
	struct store_claim *c = NULL;
	struct store *s;
	json_t *before = NULL, *after = NULL;
	char *bt = NULL, *at = NULL, *text = NULL, hex[65], buf[80];
	int64_t job, first, second;
	size_t n;
	int r;

	if ((s = open_fresh("fp.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "f1", "demo"), 0);
	job = add_job(s, "demo", NULL, 1, 5);
	T_EQ_INT(store_run_claim(s, "f1", "demo", 60, &c), 0);
	if (c == NULL) {
		store_close(s);
		return;
	}
	first = c->run_id;
	T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 1), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	exec_on("fp.db", fix_undo_step13(where.pg_url != NULL));
	exec_on("fp.db", FIX_UNDO_STEP10);
	force_version("fp.db", 9);

	s = NULL;
	T_EQ_INT(store_open(target("fp.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	bt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	at = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
	T_CHECK(bt != NULL && at != NULL && strstr(at, "77.25") != NULL);
	T_EQ_STR(at, bt);
	T_EQ_STR(run_str(s, first, "fingerprint_doc_sha256", buf, sizeof(buf)), "(null)");

	/* never probed: the run names nothing, and that is no error */
	T_EQ_INT(store_run_claim(s, "f1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	T_EQ_INT(store_run_set_info(s, c->run_id, "f1", "6.1.0", "b-1"), 0);
	T_EQ_STR(run_str(s, c->run_id, "fingerprint_doc_sha256", buf, sizeof(buf)), "(null)");
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	store_claim_free(c);
	c = NULL;

	/* probed: the run names the sha256 of exactly the text */
	T_EQ_INT(store_machine_set_fingerprint(s, "f1", fp_a, "id-a"), 0);
	T_EQ_INT(store_run_claim(s, "f1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	second = c->run_id;
	T_EQ_INT(store_run_set_info(s, second, "f1", "6.1.0", "b-1"), 0);
	sha256_hex(fp_a, strlen(fp_a), hex);
	T_EQ_STR(run_str(s, second, "fingerprint_doc_sha256", buf, sizeof(buf)), hex);
	/* a lost link: the retry starts without it, and names it again */
	T_EQ_INT(store_run_retry(s, second, "link lost", 3, &r), 0);
	T_EQ_STR(run_str(s, second, "fingerprint_doc_sha256", buf, sizeof(buf)), "(null)");
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(store_run_claim(s, "f1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	T_EQ_INT(c->run_id, second);
	T_EQ_INT(store_run_set_info(s, second, "f1", "6.1.0", "b-1"), 0);
	T_EQ_INT(store_run_finish(s, second, "done", 0, NULL), 0);
	store_claim_free(c);
	c = NULL;
	/* a re-probe after the run changes the machine, not the run */
	T_EQ_INT(store_machine_set_fingerprint(s, "f1", fp_b, "id-a"), 0);
	text = run_fp(s, second);
	T_EQ_STR(text, fp_a);
	free(text);
	T_EQ_INT(store_run_claim(s, "f1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	T_EQ_INT(store_run_set_info(s, c->run_id, NULL, NULL, NULL), 0);
	text = run_fp(s, c->run_id);
	T_EQ_STR(text, fp_b);
	free(text);
	text = NULL;
	n = 0;
	T_EQ_INT(count_rows("fp.db", "fingerprints", &n), 0);
	T_EQ_INT(n, 2);
	/* an unknown run is still an error; names that are not hashes never
	 * reach SQL */
	T_EQ_INT(store_run_set_info(s, 999999, "f1", NULL, NULL), BF_ERR_NOTFOUND);
	T_EQ_INT(store_fingerprint_get(s, "' OR 1=1 --", &text), BF_ERR_INVALID);
	memset(hex, '0', 64);
	T_EQ_INT(store_fingerprint_get(s, hex, &text), BF_ERR_NOTFOUND);
	T_CHECK(text == NULL);
out:
	store_claim_free(c);
	free(bt);
	free(at);
	json_decref(before);
	json_decref(after);
	store_close(s);
}

/*
 * Step 11: a store of schema 10 with samples opens with every sample as it
 * was. Then a run's artifacts: the bytes come back exactly (NUL bytes and
 * all) under the sha256 the store computed; two runs with the same bytes
 * share one row; a run retried or requeued by recovery names none of its
 * earlier attempt's (the bytes rows stay); a run another coordinator
 * holds, or none, cannot name one; a run without one is BF_ERR_NOTFOUND.
 */
static void
test_migrate_artifacts(void)
{
	static const char pd[] = "PERFILE2\0\0\x01\xff binary";
	static const char folded[] = "work;main;basic_cpu 61\n";
	struct store_sample sm[1] = { { "ops", 12.5, "ops/s" } };
	struct store_claim *c = NULL;
	struct store *s;
	json_t *before = NULL, *after = NULL;
	char *bt = NULL, *at = NULL, hex[65], want[65], ev[STORE_MAX_EVENT];
	void *data = NULL;
	int64_t job, first;
	size_t n = 0;
	int r;

	if ((s = open_fresh("art.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "a1", "demo"), 0);
	job = add_job(s, "demo", NULL, 1, 3);
	T_EQ_INT(store_run_claim(s, "a1", "demo", 60, &c), 0);
	if (c == NULL) {
		store_close(s);
		return;
	}
	first = c->run_id;
	T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 1), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	exec_on("art.db", fix_undo_step13(where.pg_url != NULL));
	exec_on("art.db", FIX_UNDO_STEP11);
	force_version("art.db", 10);

	s = NULL;
	T_EQ_INT(store_open(target("art.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	bt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	at = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
	T_CHECK(bt != NULL && at != NULL && strstr(at, "12.5") != NULL);
	T_EQ_STR(at, bt);
	T_EQ_INT(store_run_artifact(s, first, "folded", &data, &n, hex, ev), BF_ERR_NOTFOUND);
	T_CHECK(data == NULL);
	/* a finished run is no one's: it cannot name an artifact */
	T_CHECK(store_run_add_artifact(s, first, "folded", NULL, folded, strlen(folded), hex) != 0);

	T_EQ_INT(store_run_claim(s, "a1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	T_EQ_INT(store_run_add_artifact(s, c->run_id, "perf.data", "cpu-clock", pd, sizeof(pd) - 1,
	    hex), 0);
	sha256_hex(pd, sizeof(pd) - 1, want);
	T_EQ_STR(hex, want);
	T_EQ_INT(store_run_add_artifact(s, c->run_id, "folded", "cycles", folded, strlen(folded),
	    hex), 0);
	T_EQ_INT(store_run_artifact(s, c->run_id, "perf.data", &data, &n, hex, ev), 0);
	T_CHECK(data != NULL && n == sizeof(pd) - 1 && memcmp(data, pd, n) == 0);
	T_EQ_STR(hex, want);
	T_EQ_STR(ev, "cpu-clock");
	free(data);
	data = NULL;
	T_EQ_INT(store_run_artifact(s, c->run_id, "folded", &data, &n, hex, ev), 0);
	T_EQ_STR(ev, "cycles");
	/* an event that is not a short [a-z-] name never reaches a row */
	T_EQ_INT(store_run_add_artifact(s, c->run_id, "folded", "cycles'; --", folded,
	    strlen(folded), hex), BF_ERR_INVALID);
	T_EQ_INT(store_run_add_artifact(s, c->run_id, "folded", "", folded, strlen(folded), hex),
	    BF_ERR_INVALID);
	free(data);
	data = NULL;
	/* a retried run names nothing of its earlier attempt; the bytes stay */
	T_EQ_INT(store_run_retry(s, c->run_id, "link lost", 3, &r), 0);
	T_EQ_INT(r, 1);
	T_EQ_INT(store_run_artifact(s, c->run_id, "perf.data", &data, &n, hex, ev), BF_ERR_NOTFOUND);
	T_EQ_INT(store_run_artifact(s, c->run_id, "folded", &data, &n, hex, ev), BF_ERR_NOTFOUND);
	T_CHECK(data == NULL);
	n = 0;
	T_EQ_INT(count_rows("art.db", "run_artifacts", &n), 0);
	T_EQ_INT(n, 0);
	n = 0;
	T_EQ_INT(count_rows("art.db", "artifacts", &n), 0);
	T_EQ_INT(n, 2);
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(store_run_claim(s, "a1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	T_EQ_INT(store_run_add_artifact(s, c->run_id, "folded", NULL, "x;y 2\n", 6, hex), 0);
	T_EQ_INT(store_run_artifact(s, c->run_id, "folded", &data, &n, hex, ev), 0);
	T_CHECK(data != NULL && n == 6 && memcmp(data, "x;y 2\n", 6) == 0);
	T_EQ_STR(ev, "");
	free(data);
	data = NULL;
	/* a run requeued by recovery likewise: its partial profile goes with
	 * its partial samples, and the same bytes from another run are one row */
	T_EQ_INT(store_run_add_artifact(s, c->run_id, "perf.data", NULL, pd, sizeof(pd) - 1, hex),
	    0);
	T_EQ_INT(store_recover(s, &n), 0);
	T_EQ_INT(n, 1);
	T_EQ_INT(store_run_artifact(s, c->run_id, "folded", &data, &n, hex, ev), BF_ERR_NOTFOUND);
	T_EQ_INT(store_run_artifact(s, c->run_id, "perf.data", &data, &n, hex, ev), BF_ERR_NOTFOUND);
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(store_run_claim(s, "a1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	T_EQ_INT(store_run_add_artifact(s, c->run_id, "perf.data", NULL, pd, sizeof(pd) - 1, hex),
	    0);
	n = 0;
	T_EQ_INT(count_rows("art.db", "artifacts", &n), 0);
	T_EQ_INT(n, 3);
	n = 0;
	T_EQ_INT(count_rows("art.db", "run_artifacts", &n), 0);
	T_EQ_INT(n, 1);
	T_EQ_INT(store_run_add_artifact(s, c->run_id, "", NULL, pd, 1, hex), BF_ERR_INVALID);
out:
	store_claim_free(c);
	free(data);
	free(bt);
	free(at);
	json_decref(before);
	json_decref(after);
	store_close(s);
}

/*
 * Step 12 (suites): a store of schema 11 with a finished job and a queued
 * run opens with every sample as it was; the old run is claimed as it
 * always was (its job's recipe, no workload); a suite's runs written
 * after the step come back from the claim with their own recipe and
 * workload, and the claim keeps a boot's runs of both workloads together.
 */
static void
test_migrate_suites(void)
{
	struct store_sample sm[1] = { { "wall_s", 3.25, "s" } };
	struct store_run_new rn[4];
	struct store_claim *c = NULL;
	struct store *s;
	json_t *before = NULL, *after = NULL;
	char *bt = NULL, *at = NULL, seen[64];
	int64_t job, suite = 0;
	size_t i;

	if ((s = open_fresh("suite.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "w1", "demo"), 0);
	job = add_job(s, "demo", NULL, 1, 2);
	T_EQ_INT(store_run_claim(s, "w1", "demo", 60, &c), 0);
	if (c == NULL) {
		store_close(s);
		return;
	}
	T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 1), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	exec_on("suite.db", fix_undo_step13(where.pg_url != NULL));
	exec_on("suite.db", FIX_UNDO_STEP12);
	force_version("suite.db", 11);
	T_EQ_INT(read_version("suite.db"), 11);

	s = NULL;
	T_EQ_INT(store_open(target("suite.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	bt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	at = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
	T_CHECK(bt != NULL && at != NULL && strstr(at, "3.25") != NULL);
	T_EQ_STR(at, bt);
	/* the old job's queued run: its job's recipe, no workload */
	T_EQ_INT(store_run_claim(s, "w1", "demo", 60, &c), 0);
	if (c == NULL)
		goto out;
	T_EQ_STR(c->recipe, "demo");
	T_CHECK(c->workload == NULL);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	store_claim_free(c);
	c = NULL;

	/* a suite of two workloads, one boot each of two boot groups */
	memset(rn, 0, sizeof(rn));
	for (i = 0; i < 4; i++) {
		rn[i].cell_index = i % 2;
		rn[i].label = i % 2 ? "workload=tree" : "workload=loop";
		rn[i].axes_json = i % 2 ? "{\"workload\":\"tree\"}" : "{\"workload\":\"loop\"}";
		rn[i].values_json = "{}";
		rn[i].boot = (int)(i / 2);
		rn[i].run_order = plan_run_order(PLAN_INTERLEAVED, i % 2, (int)(i / 2));
		rn[i].iterations = 1;
		rn[i].timeout_s = 60;
		rn[i].recipe = i % 2 ? "btree" : "cpu-loop";
		rn[i].workload = i % 2 ? "tree" : "loop";
	}
	T_EQ_INT(store_job_create(s, "suite", NULL, "{\"job\": {}, \"recipes\": []}", "demo",
	    NULL, rn, 4, &suite), 0);
	seen[0] = '\0';
	for (i = 0; i < 4; i++) {
		char group[128];

		T_EQ_INT(store_run_claim_boot(s, "w1", "demo", i ? group : NULL, 60, &c), 0);
		if (c == NULL)
			goto out;
		T_EQ_INT(c->job_id, suite);
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%s/%s/%d",
		    i ? " " : "", c->workload ? c->workload : "-", c->recipe, c->boot);
		store_boot_group(c, group, sizeof(group));
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
		store_claim_free(c);
		c = NULL;
	}
	T_EQ_STR(seen, "loop/cpu-loop/0 tree/btree/0 loop/cpu-loop/1 tree/btree/1");
	/* a workload or recipe that is not a name never reaches a row */
	rn[0].workload = "a'b";
	T_EQ_INT(store_job_create(s, "suite", NULL, "{}", "demo", NULL, rn, 1, &suite),
	    BF_ERR_INVALID);
out:
	store_claim_free(c);
	free(bt);
	free(at);
	json_decref(before);
	json_decref(after);
	store_close(s);
}

/*
 * Step 13 (the jobs' run counters): a store of schema 12 with runs done
 * (with samples), failed and queued, and a cancelled job, opens with
 * every sample as it was and each job's counters backfilled to what its
 * runs say; the triggers then keep them as runs change.
 */
static void
test_migrate_counters(void)
{
	struct store_sample sm[1] = { { "ops", 1234.5, "ops/s" } };
	struct store_claim *c = NULL;
	struct store_job *j = NULL;
	struct store *s;
	json_t *before = NULL, *after = NULL;
	char *bt = NULL, *at = NULL;
	int64_t job, gone;

	if ((s = open_fresh("count.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "c1", "demo"), 0);
	job = add_job(s, "demo", NULL, 2, 2);
	gone = add_job(s, "demo", NULL, 1, 2);
	T_EQ_INT(store_job_cancel(s, gone), 0);
	T_EQ_INT(store_run_claim(s, "c1", "demo", 60, &c), 0);
	if (c != NULL) {
		T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 1), 0);
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	}
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(store_run_claim(s, "c1", "demo", 60, &c), 0);
	if (c != NULL)
		T_EQ_INT(store_run_finish(s, c->run_id, "failed", 1, NULL), 0);
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	exec_on("count.db", fix_undo_step13(where.pg_url != NULL));
	force_version("count.db", 12);

	s = NULL;
	T_EQ_INT(store_open(target("count.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	bt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	at = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
	T_CHECK(bt != NULL && at != NULL && strstr(at, "1234.5") != NULL);
	T_EQ_STR(at, bt);
	T_EQ_INT(store_job_get(s, job, &j), 0);
	if (j != NULL) {
		T_EQ_INT(j->runs[STORE_RUN_DONE], 1);
		T_EQ_INT(j->runs[STORE_RUN_FAILED], 1);
		T_EQ_INT(j->runs[STORE_RUN_QUEUED], 2);
		T_EQ_INT(j->runs[STORE_RUN_RUNNING], 0);
		T_EQ_INT(j->has_started, 1);	/* from its runs' earliest start */
	}
	store_job_free(j);
	j = NULL;
	T_EQ_INT(store_job_get(s, gone, &j), 0);
	if (j != NULL) {
		T_EQ_INT(j->runs[STORE_RUN_CANCELLED], 2);
		T_EQ_INT(j->runs[STORE_RUN_QUEUED], 0);
		T_EQ_INT(j->has_started, 0);
	}
	store_job_free(j);
	j = NULL;
	/* the triggers run from here on */
	T_EQ_INT(store_run_claim(s, "c1", "demo", 60, &c), 0);
	if (c != NULL)
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	T_EQ_INT(store_job_get(s, job, &j), 0);
	if (j != NULL) {
		T_EQ_INT(j->runs[STORE_RUN_DONE], 2);
		T_EQ_INT(j->runs[STORE_RUN_QUEUED], 1);
	}
out:
	store_job_free(j);
	store_claim_free(c);
	free(bt);
	free(at);
	json_decref(before);
	json_decref(after);
	store_close(s);
}

int
main(void)
{
	static const char *const dbs[] = { "open.db", "junk.db", "same.db", "migrate.db",
	    "snap.db", "fp.db", "art.db", "suite.db", "count.db" };

	if (fix_where_init(&where, "store-schema") != 0)
		return 1;
	test_open();
	test_migrate_trust();
	test_migrate_snapshots();
	test_migrate_fingerprints();
	test_migrate_artifacts();
	test_migrate_suites();
	test_migrate_counters();
	if (where.pg_url != NULL)
		test_same_schema();
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
