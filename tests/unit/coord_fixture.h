/*
 * coord_fixture.h: what the coordinator's unit tests share: where their
 * stores live (files in a temporary directory, or with BF_TEST_PG_URL a
 * PostgreSQL database each), the repository's recipes, and jobs submitted
 * as POST /jobs would (parse, validate, plan_job's runs).
 * Header-only: each coord_test_*.c is one program.
 */
#ifndef BF_COORD_FIXTURE_H
#define BF_COORD_FIXTURE_H

/* The store's schema version after every step: bump with each new step. */
#define FIX_SCHEMA_LATEST	18

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api-view.h"
#include "db.h"
#include "job.h"
#include "plan.h"
#include "recipes.h"
#include "store.h"

/*
 * Where a test's stores live: files under dir, or, when the test runs under
 * tests/lib/with-pg (unit.NAME@pg), a database of their own each on the
 * server of BF_TEST_PG_URL, made from that URL's database.
 */
struct fix_where {
	const char *pg_url;		/* NULL: SQLite files */
	char dir[256];
};

/* Read BF_TEST_PG_URL and make the temporary directory (tag names it). */
static inline int
fix_where_init(struct fix_where *w, const char *tag)
{
	const char *base = getenv("TMPDIR");

	w->pg_url = getenv("BF_TEST_PG_URL");
	if (w->pg_url != NULL && (*w->pg_url == '\0' || strrchr(w->pg_url, '/') == NULL)) {
		fprintf(stderr, "BF_TEST_PG_URL must be a postgresql:// URL with a database\n");
		return -1;
	}
	snprintf(w->dir, sizeof(w->dir), "%s/bf-%s-XXXXXX", base != NULL ? base : "/tmp", tag);
	if (mkdtemp(w->dir) == NULL) {
		perror("mkdtemp");
		return -1;
	}
	return 0;
}

/* The statement sql on pg_url's own database (CREATE/DROP DATABASE). */
static inline int
fix_pg_admin(const struct fix_where *w, const char *sql)
{
	struct db *db = NULL;
	int r;

	if ((r = db_open(w->pg_url, &db, NULL)) == 0)
		r = db_exec_script(db, sql);
	if (r != 0)
		fprintf(stderr, "%s: %s\n", sql, db_last_error());
	db_close(db);
	return r;
}

/* The target of the store called name: the file dir/name, or the database
 * bft_NAME ('.' and '-' as '_') next to pg_url's. Static: copy it. */
static inline const char *
fix_target(const struct fix_where *w, const char *name)
{
	static char p[700];
	const char *slash;
	size_t n, i;

	if (w->pg_url == NULL) {
		snprintf(p, sizeof(p), "%s/%s", w->dir, name);
		return p;
	}
	slash = strrchr(w->pg_url, '/');
	n = (size_t)snprintf(p, sizeof(p), "%.*sbft_%s", (int)(slash - w->pg_url) + 1,
	    w->pg_url, name);
	for (i = n - strlen(name); i < n && i < sizeof(p); i++)
		if (p[i] == '.' || p[i] == '-')
			p[i] = '_';
	return p;
}

/* Remove the store called name: its files, or its database. */
static inline void
fix_remove(const struct fix_where *w, const char *name)
{
	char p[800];

	if (w->pg_url != NULL) {
		snprintf(p, sizeof(p), "DROP DATABASE IF EXISTS %s WITH (FORCE)",
		    strrchr(fix_target(w, name), '/') + 1);
		(void)fix_pg_admin(w, p);
		return;
	}
	snprintf(p, sizeof(p), "%s", fix_target(w, name));
	unlink(p);
	snprintf(p, sizeof(p), "%s-wal", fix_target(w, name));
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", fix_target(w, name));
	unlink(p);
}

/* Make room for a new store called name (an empty database on PostgreSQL);
 * returns fix_target(w, name), or NULL. */
static inline const char *
fix_fresh(const struct fix_where *w, const char *name)
{
	char p[800];

	fix_remove(w, name);
	if (w->pg_url != NULL) {
		snprintf(p, sizeof(p), "CREATE DATABASE %s", strrchr(fix_target(w, name), '/') + 1);
		if (fix_pg_admin(w, p) != 0)
			return NULL;
	}
	return fix_target(w, name);
}

/* A new store called name, opened; NULL (and why on stderr) on failure. */
static inline struct store *
fix_open_fresh(const struct fix_where *w, const char *name)
{
	struct store *s = NULL;
	const char *t;
	struct bf_diag d;

	bf_diag_clear(&d);
	if ((t = fix_fresh(w, name)) == NULL)
		return NULL;
	if (store_open(t, &s, &d) != 0) {
		fprintf(stderr, "store_open %s: %s\n", name, d.msg);
		return NULL;
	}
	return s;
}

/* Undo schema step 14 (kernel builds, machine roles; issue 18). */
/* Undo schema step 17 (bisections; issue 18). Steps 16 (samples WITHOUT
 * ROWID on SQLite) and 18 (PostgreSQL's notify triggers) need no undo:
 * each runs again on its own result. */
#define FIX_UNDO_STEP17 "DROP TABLE bisection_steps; DROP TABLE bisections; "
/* Undo schema step 17, 15 (machines.spread), then 14 (kernel builds). */
#define FIX_UNDO_STEP15 FIX_UNDO_STEP17 "ALTER TABLE jobs DROP COLUMN spread; ALTER TABLE jobs DROP COLUMN" \
	" pinned_machine; ALTER TABLE runs DROP COLUMN req_machine; "
#define FIX_UNDO_STEP14 FIX_UNDO_STEP15 "DROP TABLE kernel_builds; DROP TABLE kernel_artifacts;" \
	" ALTER TABLE machines DROP COLUMN roles; "

/* Undo schema step 14, then 13 (the jobs' run counters and their triggers), whose
 * triggers each engine drops in its own words: run it before any of the
 * FIX_UNDO_STEP* below. */
#define FIX_UNDO_STEP13_COLS \
	" ALTER TABLE jobs DROP COLUMN started_at; ALTER TABLE jobs DROP COLUMN n_queued;" \
	" ALTER TABLE jobs DROP COLUMN n_running; ALTER TABLE jobs DROP COLUMN n_done;" \
	" ALTER TABLE jobs DROP COLUMN n_failed; ALTER TABLE jobs DROP COLUMN n_lost;" \
	" ALTER TABLE jobs DROP COLUMN n_boot_failed; ALTER TABLE jobs DROP COLUMN n_cancelled;"
/* Undo steps 14 and 13. */
static inline const char *
fix_undo_step13(int pg)
{
	return pg ? FIX_UNDO_STEP14 "DROP FUNCTION bf_runs_count() CASCADE;" FIX_UNDO_STEP13_COLS :
	    FIX_UNDO_STEP14 "DROP TRIGGER runs_count_ins; DROP TRIGGER runs_count_del;"
	    " DROP TRIGGER runs_count_upd;" FIX_UNDO_STEP13_COLS;
}

/* Undo schema step 12 (suites), 11 (artifacts), 10 (run-time
 * fingerprints), then 9 (snapshots), behind the store's back: the first
 * part of making a store of any older schema from a new one, after
 * fix_undo_step13. */
#define FIX_UNDO_STEP12 "ALTER TABLE runs DROP COLUMN recipe; ALTER TABLE runs DROP COLUMN workload;"
#define FIX_UNDO_STEP11 FIX_UNDO_STEP12 " DROP TABLE run_artifacts; DROP TABLE artifacts;"
#define FIX_UNDO_STEP10 FIX_UNDO_STEP11 " ALTER TABLE runs DROP COLUMN fingerprint_doc_sha256;" \
	" DROP TABLE fingerprints;"
#define FIX_UNDO_STEP9 FIX_UNDO_STEP10 \
	" ALTER TABLE runs DROP COLUMN snapshot_sha256; DROP TABLE snapshots;"

/* The agent's sha256 the fake machine reports: runner_ensure_agent trusts it. */
#define FIX_AGENT_SHA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static inline int
fix_submit(struct store *st, const struct recipes *rs, const char *text, int64_t *idp)
{
	struct job_spec *job = NULL;
	const struct recipe *rec, *recs[BF_MAX_SUITE];
	struct plan *p = NULL;
	struct bf_diag d;
	size_t i;
	int r;

	bf_diag_clear(&d);
	if ((r = job_parse(text, strlen(text), &job, &d)) == 0 && job_is_suite(job)) {
		/* a suite: each entry's recipe, planned as POST /jobs does */
		for (i = 0; i < job->nsuite; i++)
			if ((recs[i] = recipes_get(rs, job->suite[i].job->recipe)) == NULL)
				r = BF_ERR_NOTFOUND;
		if (r != 0 || (r = job_validate_suite(job, recs, NULL, &d)) != 0 ||
		    (r = plan_suite(job, recs, &p, &d)) != 0)
			fprintf(stderr, "fix_submit: %s\n", d.msg);
		else
			r = store_job_create_suite(st, job, recs, p, job->machine_class, NULL, 0,
			    idp);
		goto out;
	}
	if (r != 0 ||
	    (rec = recipes_get(rs, job->recipe)) == NULL ||
	    (r = job_validate(job, rec, NULL, &d)) != 0 ||
	    (r = plan_job(job, rec, &p, &d)) != 0) {
		fprintf(stderr, "fix_submit: %s\n", d.msg);
		if (r == 0)
			r = BF_ERR_NOTFOUND;
		goto out;
	}
	r = store_job_create_plan(st, job, rec, p, job->machine_class, NULL, 0, idp);
out:
	plan_free(p);
	job_free(job);
	return r;
}

/* A machine of class "fake"; boot: its boot configuration or NULL. */
static inline int
fix_machine(struct store *st, const char *name, const char *boot)
{
	struct store_machine m;
	int r;

	memset(&m, 0, sizeof(m));
	m.name = (char *)name;
	m.host = (char *)"127.0.0.1";
	m.port = 22;
	m.user = (char *)"root";
	m.key_path = (char *)"/nonexistent/key";
	m.klass = (char *)"fake";
	if ((r = store_machine_add(st, &m, NULL)) != 0 || boot == NULL)
		return r;
	return store_machine_set_boot(st, name, boot);
}

/* The runs of a job as the API serves them ({"runs":[...]}), or NULL. */
static inline json_t *
fix_runs(struct store *st, int64_t job_id)
{
	json_t *j = NULL;

	return api_view_job_runs_get(st, job_id, 1, &j) == 0 ? j : NULL;
}

/* Runs of the job in state (NULL: all), and their samples into *nsamples. */
static inline int
fix_count(struct store *st, int64_t job_id, const char *state, size_t *nsamples)
{
	json_t *j = fix_runs(st, job_id), *run;
	size_t i;
	int n = 0;

	if (nsamples != NULL)
		*nsamples = 0;
	json_array_foreach(json_object_get(j, "runs"), i, run) {
		if (state != NULL &&
		    strcmp(json_string_value(json_object_get(run, "state")), state) != 0)
			continue;
		n++;
		if (nsamples != NULL)
			*nsamples += json_array_size(json_object_get(run, "samples"));
	}
	json_decref(j);
	return n;
}

#endif
