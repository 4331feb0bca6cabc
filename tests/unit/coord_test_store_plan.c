/*
 * coord_test_store_plan.c: schema step 8, the runs' plan columns
 * (run_order, iterations, warmup, timeout_s), against SQLite or, with
 * BF_TEST_PG_URL (tests/lib/with-pg), PostgreSQL. A store made by schema 7
 * migrates with every sample byte-identical and the columns filled from
 * each job's spec exactly as the API fills them at submit; the claim then
 * follows run_order (sequential cell-major, interleaved boot-major), and an
 * adaptive extra boot is ranked one boot later in either order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "caps.h"
#include "coord_fixture.h"
#include "db.h"
#include "plan.h"
#include "store.h"
#include "t.h"

static struct fix_where where;

static const char *
target(const char *name)
{
	return fix_target(&where, name);
}

/* The statement sql on the store called name, behind the store's back. */
static void
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

/* Undo schema steps 9 and 8: what a store made by a benchfleetd of
 * schema 7 holds. */
static void
make_v7(const char *name)
{
	exec_on(name, fix_undo_step13(where.pg_url != NULL));
	exec_on(name, FIX_UNDO_STEP9 "DROP INDEX runs_claim;"
	    "ALTER TABLE runs DROP COLUMN run_order; ALTER TABLE runs DROP COLUMN iterations;"
	    "ALTER TABLE runs DROP COLUMN warmup; ALTER TABLE runs DROP COLUMN timeout_s;"
	    "CREATE INDEX runs_claim ON runs(job_id, boot, cell_index, id) WHERE state = 'queued'");
	exec_on(name, where.pg_url != NULL ? "UPDATE bf_schema SET version = 7" :
	    "PRAGMA user_version = 7");
}

/* Every run's plan columns, "id:order:iterations:warmup:timeout_s ...". */
static void
plan_columns(const char *name, char *out, size_t outsz)
{
	struct db *db = NULL;
	struct db_stmt *st = NULL;
	size_t used = 0;

	out[0] = '\0';
	T_EQ_INT(db_open(target(name), &db, NULL), 0);
	if (db == NULL || db_prepare(db, "SELECT id, run_order, iterations, warmup, timeout_s"
	    " FROM runs ORDER BY id", &st) != 0) {
		T_CHECK(0);
		goto out;
	}
	while (db_step(st) == 1 && used < outsz)
		used += (size_t)snprintf(out + used, outsz - used, "%lld:%lld:%d:%d:%d ",
		    (long long)db_col_int64(st, 0), (long long)db_col_int64(st, 1),
		    db_col_int(st, 2), db_col_int(st, 3), db_col_int(st, 4));
out:
	db_finalize(st);
	db_close(db);
}

/* A job of 2 cells x 2 boots, stored boot-major as the API stores them, with
 * the plan the API gives it: order, iterations, warmup, timeout_s. */
static int64_t
add_job(struct store *s, const char *spec, enum plan_order order, int iterations, int warmup,
    int timeout_s)
{
	struct store_run_new rn[4];
	static const char *const axes[2] = { "{\"loops\": 10}", "{\"loops\": 20}" };
	static const char *const labels[2] = { "loops=10", "loops=20" };
	int64_t id = -1;
	int i;

	memset(rn, 0, sizeof(rn));
	for (i = 0; i < 4; i++) {
		rn[i].cell_index = (size_t)(i % 2);
		rn[i].boot = i / 2;
		rn[i].label = labels[i % 2];
		rn[i].axes_json = axes[i % 2];
		rn[i].values_json = axes[i % 2];
		rn[i].run_order = plan_run_order(order, rn[i].cell_index, rn[i].boot);
		rn[i].iterations = iterations;
		rn[i].warmup = warmup;
		rn[i].timeout_s = timeout_s;
	}
	T_EQ_INT(store_job_create(s, "demo", NULL, spec, "demo", NULL, rn, 4, &id), 0);
	return id;
}

static int
add_machine(struct store *s, const char *name)
{
	struct store_machine m;

	memset(&m, 0, sizeof(m));
	m.name = (char *)name;
	m.host = "127.0.0.1";
	m.port = 2222;
	m.klass = "demo";
	return store_machine_add(s, &m, NULL);
}

/* Claim, and finish done with samples, every run of the store on d1 (one
 * job at a time, oldest first); the cells and boots in claim order. */
static void
claim_all(struct store *s, int with_samples, char *out, size_t outsz)
{
	struct store_sample sm[2] = { { "ops", 1234.5, "ops/s" }, { "wall", 0.1, "s" } };
	struct store_claim *c = NULL;
	size_t used = 0;
	int it, n = 0;

	out[0] = '\0';
	while (store_run_claim(s, "d1", "demo", 60, &c) == 0 && c != NULL && n++ < 64) {
		if (used < outsz)
			used += (size_t)snprintf(out + used, outsz - used, "%sj%lldc%lldb%d",
			    used ? " " : "", (long long)c->job_id, (long long)c->cell_index,
			    c->boot);
		for (it = 0; with_samples && it < 2; it++) {
			sm[0].value = 1000.0 + (double)c->run_id + it / 8.0;
			T_EQ_INT(store_samples_add(s, c->run_id, c->boot, it, sm, 2), 0);
		}
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
		store_claim_free(c);
		c = NULL;
	}
	store_claim_free(c);
}

static char *
samples_text(struct store *s, int64_t job)
{
	json_t *j = NULL;
	char *t = NULL;

	T_EQ_INT(api_view_job_cells_get(s, job, &j), 0);
	if (j != NULL)
		t = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	T_CHECK(t != NULL);
	return t;
}

static void
test_migrate_plan(void)
{
	/* sequential with numbers; no job at all (defaults); interleaved said
	 * so; and numbers no API wrote (not integers: the defaults) */
	static const char seq[] = "{\"job\":{\"order\":\"sequential\",\"repetitions\":"
	    "{\"iterations\":3,\"warmup\":2,\"boots\":2}},\"recipe\":{\"timeout_s\":42}}";
	static const char bare[] = "{\"recipe\": \"demo\"}";
	static const char inter[] = "{\"job\":{\"order\":\"interleaved\",\"repetitions\":"
	    "{\"boots\":2,\"iterations\":7}},\"recipe\":{\"timeout_s\":600}}";
	static const char odd[] = "{\"job\":{\"repetitions\":{\"iterations\":\"9\","
	    "\"warmup\":-1}},\"recipe\":{\"timeout_s\":3.0}}";
	struct store *s;
	struct store_claim *c = NULL;
	char before[1024], after[1024], order[512], *sb[2] = { NULL, NULL }, *sa;
	int64_t jseq, jbare, jinter, jodd, k;
	int i;

	if ((s = fix_open_fresh(&where, "plan.db")) == NULL) {
		T_CHECK(0);
		return;
	}
	T_EQ_INT(add_machine(s, "d1"), 0);
	/* the two measured jobs first: their samples are what must survive */
	jseq = add_job(s, seq, PLAN_SEQUENTIAL, 3, 2, 42);
	jbare = add_job(s, bare, PLAN_INTERLEAVED, 5, 0, 600);
	claim_all(s, 1, order, sizeof(order));
	T_EQ_STR(order, "j1c0b0 j1c0b1 j1c1b0 j1c1b1 j2c0b0 j2c1b0 j2c0b1 j2c1b1");
	sb[0] = samples_text(s, jseq);
	sb[1] = samples_text(s, jbare);
	jinter = add_job(s, inter, PLAN_INTERLEAVED, 7, 0, 600);
	jodd = add_job(s, odd, PLAN_INTERLEAVED, 5, 0, 600);
	T_CHECK(jseq > 0 && jbare > jseq && jinter > jbare && jodd > jinter);
	store_close(s);
	plan_columns("plan.db", before, sizeof(before));

	make_v7("plan.db");
	s = NULL;
	T_EQ_INT(store_open(target("plan.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	/* the samples byte for byte, and the columns as the API wrote them */
	sa = samples_text(s, jseq);
	T_EQ_STR(sa, sb[0]);
	T_CONTAINS(sa, "\"value\":1001.125");
	free(sa);
	sa = samples_text(s, jbare);
	T_EQ_STR(sa, sb[1]);
	free(sa);
	plan_columns("plan.db", after, sizeof(after));
	T_EQ_STR(after, before);
	T_CONTAINS(after, ":3:2:42 ");			/* sequential's numbers */
	T_CONTAINS(after, ":524288:3:2:42 ");		/* cell 1, boot 0, cell-major */

	/* the migrated queue claims by run_order: interleaved boot-major */
	claim_all(s, 0, order, sizeof(order));
	T_EQ_STR(order, "j3c0b0 j3c1b0 j3c0b1 j3c1b1 j4c0b0 j4c1b0 j4c0b1 j4c1b1");

	/* an adaptive extra boot: one boot later, in either order */
	for (k = 0; k < 2; k++) {
		int64_t job = k == 0 ? jseq : jbare;
		enum plan_order o = k == 0 ? PLAN_SEQUENTIAL : PLAN_INTERLEAVED;
		char sql[200];

		snprintf(sql, sizeof(sql), "UPDATE runs SET state = 'queued' WHERE job_id = %lld"
		    " AND cell_index = 1 AND boot = 1", (long long)job);
		exec_on("plan.db", sql);
		snprintf(sql, sizeof(sql), "UPDATE jobs SET state = 'running' WHERE id = %lld",
		    (long long)job);
		exec_on("plan.db", sql);
		T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
		T_CHECK(c != NULL && c->job_id == job && c->cell_index == 1 && c->boot == 1);
		if (c == NULL)
			break;
		T_EQ_INT(store_run_finish_more(s, c->run_id, "done", 0, NULL, 1), 0);
		store_claim_free(c);
		c = NULL;
		T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
		T_CHECK(c != NULL && c->job_id == job && c->cell_index == 1 && c->boot == 2);
		if (c != NULL) {
			T_EQ_INT(c->run_order, plan_run_order(o, 1, 2));
			T_EQ_INT(c->iterations, k == 0 ? 3 : 5);
			T_EQ_INT(c->warmup, k == 0 ? 2 : 0);
			T_EQ_INT(c->timeout_s, k == 0 ? 42 : 600);
			T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
		}
		store_claim_free(c);
		c = NULL;
	}
	for (i = 0; i < 2; i++)
		T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
	T_CHECK(c == NULL);		/* nothing else was queued */
out:
	store_claim_free(c);
	free(sb[0]);
	free(sb[1]);
	store_close(s);
}

int
main(void)
{
	if (fix_where_init(&where, "store-plan") != 0)
		return 1;
	test_migrate_plan();
	fix_remove(&where, "plan.db");
	rmdir(where.dir);
	return t_done();
}
