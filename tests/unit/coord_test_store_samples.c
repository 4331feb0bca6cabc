/*
 * coord_test_store_samples.c: the typed sample reader reports use
 * (store_job_samples, store-samples.c) against SQLite or, with
 * BF_TEST_PG_URL (tests/lib/with-pg), PostgreSQL. Its series must hold
 * exactly what api_view_job_cells_get lists, in the same order (the
 * statistics, bootstrap included, read them in that order): only done
 * runs, every cell, metrics ascending, values by boot, iteration, run. A
 * bundle's cells (store_samples_from_cells) and a suite's selection
 * (store_samples_select) read the same. Also store_generation, the
 * token behind the polling GETs' ETag, and the read-only connections the
 * GETs read through (store-read.c).
 */
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <jansson.h>

#include "api-view.h"
#include "err.h"
#include "caps.h"
#include "coord_fixture.h"
#include "clock.h"
#include "db.h"
#include "store.h"
#include "store-int.h"
#include "t.h"

#define NCELL 3
#define NBOOT 3

static struct fix_where where;

static int64_t
add_job(struct store *s)
{
	struct store_run_new rn[NCELL * NBOOT];
	static const char *const axes[NCELL] = { "{\"w\": \"a\"}", "{\"w\": \"b\"}",
	    "{\"w\": \"a\"}" };
	static const char *const labels[NCELL] = { "w=a", "w=b", "w=a 2" };
	int64_t id = -1;
	int i;

	memset(rn, 0, sizeof(rn));
	for (i = 0; i < NCELL * NBOOT; i++) {
		rn[i].cell_index = (size_t)(i % NCELL);
		rn[i].boot = i / NCELL;
		rn[i].label = labels[i % NCELL];
		rn[i].axes_json = axes[i % NCELL];
		rn[i].values_json = axes[i % NCELL];
		rn[i].run_order = i;
		rn[i].iterations = 4;
		rn[i].timeout_s = 60;
	}
	T_EQ_INT(store_job_create(s, "demo", NULL, "{}", "demo", NULL, rn, NCELL * NBOOT, &id),
	    0);
	return id;
}

/*
 * Claim every run: cell 2's runs all fail (its cell has no samples), one
 * run of cell 0 fails too; the others write three metrics (in an order
 * that is not the store's) for 4 iterations with values that differ.
 */
static void
run_all(struct store *s)
{
	struct store_sample sm[3] = { { "zeta", 0, "s" }, { "alpha", 0, NULL },
	    { "mid", 0, "KiB" } };
	struct store_machine m;
	struct store_claim *c = NULL;
	int it, n = 0, fail;

	memset(&m, 0, sizeof(m));
	m.name = "d1";
	m.host = "127.0.0.1";
	m.port = 2222;
	m.klass = "demo";
	T_EQ_INT(store_machine_add(s, &m, NULL), 0);
	while (store_run_claim(s, "d1", "demo", 60, &c) == 0 && c != NULL && n++ < 64) {
		fail = c->cell_index == 2 || (c->cell_index == 0 && c->boot == 1);
		for (it = 3; it >= 0; it--) {		/* stored out of order */
			sm[0].value = 1e-3 * (double)c->run_id + it;
			sm[1].value = -(double)(c->boot * 10 + it) / 3.0;
			sm[2].value = (double)c->cell_index * 1e12 + it;
			T_EQ_INT(store_samples_add(s, c->run_id, c->boot, it, sm, 3), 0);
		}
		T_EQ_INT(store_run_finish(s, c->run_id, fail ? "failed" : "done", 0, NULL), 0);
		store_claim_free(c);
		c = NULL;
	}
	store_claim_free(c);
	T_EQ_INT(n, NCELL * NBOOT);
}

/* ts's series are exactly json's cells' samples, in order; 0 if not. */
static int
same_as_json(const struct store_samples *ts, const json_t *cells)
{
	const json_t *cj, *sj, *smp;
	const struct store_series *se;
	const char *unit;
	size_t i, j, k = 0, at = 0, total = 0, ntotal = 0;

	if (ts->ncells != json_array_size(cells))
		return 0;
	json_array_foreach(cells, i, cj) {
		sj = json_object_get(cj, "samples");
		ntotal += json_array_size(sj);
		se = NULL;
		k = 0;
		at = 0;
		json_array_foreach(sj, j, smp) {
			if (se == NULL || at == se->n) {
				if (k == ts->cell[i].nseries)
					return 0;
				se = &ts->cell[i].series[k++];
				at = 0;
				unit = json_string_value(json_object_get(smp, "unit"));
				if ((unit == NULL) != (se->unit == NULL) ||
				    (unit != NULL && strcmp(unit, se->unit) != 0))
					return 0;
			}
			if (strcmp(se->metric, json_string_value(json_object_get(smp,
			    "metric"))) != 0 || se->v[at] != json_number_value(json_object_get(
			    smp, "value")) || se->boot[at] != json_integer_value(
			    json_object_get(smp, "boot")))
				return 0;
			at++;
			total++;
		}
		if (k != ts->cell[i].nseries || (se != NULL && at != se->n))
			return 0;
	}
	return total == ntotal;
}

static int
keep_a(const json_t *cell, void *arg)
{
	const char *w = json_string_value(json_object_get(json_object_get(cell, "axes"), "w"));

	return w != NULL && strcmp(w, arg) == 0;
}

static void
test_reader(void)
{
	struct store *s = NULL;
	struct store_samples *ts = NULL, *tj = NULL, *sel = NULL;
	const struct store_series *se;
	json_t *j = NULL;
	int64_t job;

	if ((s = fix_open_fresh(&where, "samples.db")) == NULL) {
		T_CHECK(0);
		return;
	}
	job = add_job(s);
	run_all(s);
	T_EQ_INT(api_view_samples_get(s, job, &ts), 0);
	T_EQ_INT(api_view_job_cells_get(s, job, &j), 0);
	if (ts == NULL || j == NULL)
		goto out;
	T_EQ_INT(json_integer_value(json_object_get(ts->doc, "job")), job);
	T_EQ_STR(json_string_value(json_object_get(ts->doc, "recipe")), "demo");
	T_EQ_INT(ts->ncells, NCELL);
	T_CHECK(same_as_json(ts, json_object_get(j, "cells")));
	/* the cells' own fields, without samples */
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(ts->doc,
	    "cells"), 1), "label")), "w=b");
	T_CHECK(json_object_get(json_array_get(json_object_get(ts->doc, "cells"), 0),
	    "samples") == NULL);
	/* cell 0: two done boots (0 and 2) of 4 iterations, metrics ascending */
	T_EQ_INT(ts->cell[0].nseries, 3);
	T_EQ_STR(ts->cell[0].series[0].metric, "alpha");
	T_CHECK(ts->cell[0].series[0].unit == NULL);
	T_EQ_STR(ts->cell[0].series[2].metric, "zeta");
	T_EQ_STR(ts->cell[0].series[2].unit, "s");
	se = store_cell_series(&ts->cell[0], "mid");
	T_CHECK(se != NULL);
	if (se != NULL) {
		T_EQ_INT(se->n, 8);
		T_EQ_INT(se->boot[0], 0);
		T_EQ_INT(se->boot[4], 2);
		T_NEAR(se->v[3], 3, 0);		/* iteration order within a boot */
	}
	T_CHECK(store_cell_series(&ts->cell[0], "nope") == NULL);
	T_EQ_INT(ts->cell[1].nseries, 3);
	T_EQ_INT(ts->cell[1].series[1].n, 12);
	T_EQ_INT(ts->cell[2].nseries, 0);		/* no done run: listed, empty */
	/* one copy of each name across cells */
	T_CHECK(ts->cell[0].series[1].metric == ts->cell[1].series[1].metric);

	/* a bundle's cells read the same */
	T_EQ_INT(store_samples_from_cells(json_object_get(j, "cells"), &tj), 0);
	if (tj != NULL)
		T_CHECK(same_as_json(tj, json_object_get(j, "cells")));

	/* a suite's selection shares the series */
	T_EQ_INT(store_samples_select(ts, keep_a, "a", &sel), 0);
	if (sel != NULL) {
		T_EQ_INT(sel->ncells, 2);
		T_EQ_INT(json_array_size(json_object_get(sel->doc, "cells")), 2);
		T_CHECK(sel->cell[0].series == ts->cell[0].series);
		T_EQ_INT(sel->cell[1].nseries, 0);
		T_EQ_INT(json_integer_value(json_object_get(sel->doc, "job")), job);
	}
	store_samples_free(sel);
	sel = NULL;
	T_EQ_INT(store_samples_select(ts, keep_a, "none", &sel), 0);
	if (sel != NULL)
		T_EQ_INT(sel->ncells, 0);

	store_samples_free(tj);
	/* two runs of a cell on one boot (the rows then come run by run, not
	 * in (boot, iteration, run) order): the series are put in it */
	{
		struct db *db = NULL;

		store_samples_free(ts);
		ts = NULL;
		json_decref(j);
		j = NULL;
		T_EQ_INT(db_open(fix_target(&where, "samples.db"), &db, NULL), 0);
		T_EQ_INT(db_exec_script(db, "UPDATE samples SET boot = 0 WHERE run_id IN"
		    " (SELECT id FROM runs WHERE cell_index = 1)"), 0);
		db_close(db);
		T_EQ_INT(api_view_samples_get(s, job, &ts), 0);
		T_EQ_INT(api_view_job_cells_get(s, job, &j), 0);
		if (ts != NULL && j != NULL) {
			T_CHECK(same_as_json(ts, json_object_get(j, "cells")));
			T_EQ_INT(ts->cell[1].series[0].n, 12);
			T_EQ_INT(ts->cell[1].series[0].boot[11], 0);
		}
	}
	T_EQ_INT(store_job_samples(s, 99999, &tj), BF_ERR_NOTFOUND);
	T_CHECK(tj == NULL);
	T_EQ_INT(store_job_samples(NULL, job, &tj), BF_ERR_INVALID);
out:
	store_samples_free(sel);
	store_samples_free(tj);
	store_samples_free(ts);
	store_samples_free(NULL);
	json_decref(j);
	store_close(s);
}

/* A bundle's samples in no particular order: grouped by metric in the
 * order each first appears, values in bundle order; no metric, skipped. */
static void
test_from_cells_hostile(void)
{
	struct store_samples *ts = NULL;
	json_t *cells = json_loads("[{\"label\":\"x\",\"samples\":["
	    "{\"metric\":\"b\",\"value\":1,\"boot\":0},{\"metric\":\"a\",\"value\":2,\"boot\":1},"
	    "{\"value\":9},{\"metric\":7,\"value\":9},"
	    "{\"metric\":\"b\",\"value\":3,\"boot\":1,\"unit\":\"s\"}]},"
	    "{\"label\":\"y\",\"samples\":\"nope\"},{\"label\":\"z\"}]", 0, NULL);

	T_CHECK(cells != NULL);
	T_EQ_INT(store_samples_from_cells(cells, &ts), 0);
	if (ts != NULL) {
		T_EQ_INT(ts->ncells, 3);
		T_EQ_INT(ts->cell[0].nseries, 2);
		T_EQ_STR(ts->cell[0].series[0].metric, "b");
		T_EQ_INT(ts->cell[0].series[0].n, 2);
		T_NEAR(ts->cell[0].series[0].v[1], 3, 0);
		T_EQ_INT(ts->cell[0].series[0].boot[1], 1);
		T_CHECK(ts->cell[0].series[0].unit == NULL);	/* its first sample's */
		T_EQ_INT(ts->cell[1].nseries, 0);
		T_EQ_INT(ts->cell[2].nseries, 0);
	}
	store_samples_free(ts);
	json_decref(cells);
}

/* How many jobs the jobs list shows; (size_t)-1 on an error. */
static size_t
njobs(struct store *s)
{
	struct store_job_filter f;
	struct store_job *a = NULL;
	size_t n = 0;
	int64_t next;

	memset(&f, 0, sizeof(f));
	if (store_jobs_list(s, &f, &a, &n, &next) != 0)
		return (size_t)-1;
	store_jobs_free(a, n);
	return n;
}

/* The ETag token: reads keep it, a write here, a write by another
 * connection (another process's, as the monitor's) and a new opening move
 * it; a buffer too small is an error, not a cut token. */
static void
test_generation(void)
{
	struct store *s = NULL, *o = NULL;
	char g0[STORE_GENERATION_MAX], g1[STORE_GENERATION_MAX], g2[STORE_GENERATION_MAX];
	char tiny[8];

	if ((s = fix_open_fresh(&where, "gen.db")) == NULL) {
		T_CHECK(0);
		return;
	}
	T_EQ_INT(store_generation(s, g0, sizeof(g0)), 0);
	T_CHECK(g0[0] != '\0');
	T_EQ_INT(njobs(s), 0);
	T_EQ_INT(store_generation(s, g1, sizeof(g1)), 0);
	T_EQ_STR(g1, g0);
	add_job(s);
	T_EQ_INT(store_generation(s, g1, sizeof(g1)), 0);
	T_CHECK(strcmp(g1, g0) != 0);
	T_EQ_INT(store_open(fix_target(&where, "gen.db"), &o, NULL), 0);
	if (o != NULL) {
		T_EQ_INT(store_generation(o, g2, sizeof(g2)), 0);
		T_CHECK(strcmp(g2, g1) != 0);		/* another opening */
		add_job(o);
	}
	T_EQ_INT(store_generation(s, g2, sizeof(g2)), 0);
	T_CHECK(strcmp(g2, g1) != 0);			/* the other's commit */
	T_EQ_INT(store_generation(s, g1, sizeof(g1)), 0);
	T_EQ_STR(g1, g2);
	T_EQ_INT(store_generation(s, tiny, sizeof(tiny)), BF_ERR_TOOBIG);
	T_EQ_STR(tiny, "");
	T_EQ_INT(store_generation(NULL, g1, sizeof(g1)), BF_ERR_INVALID);
	store_close(o);
	store_close(s);
}

/* A write transaction that holds the store's lock for a while. */
struct slow_tx {
	atomic_int inside;
	int64_t job;
};

static int
slow_tx_fn(struct store *s, void *arg)
{
	struct slow_tx *t = arg;

	(void)s;
	atomic_store(&t->inside, 1);
	usleep(400 * 1000);
	return 0;
}

static void *
slow_tx_main(void *arg)
{
	struct store *s = ((void **)arg)[0];

	store_tx(s, slow_tx_fn, ((void **)arg)[1]);
	return NULL;
}

/*
 * With readers, a GET's read does not wait for the writer's lock (SQLite),
 * and sees every commit made before it through the store's own
 * connection. On PostgreSQL store_readers_open is a no-op and the reads
 * go on the one connection, as before.
 */
static void
test_readers(void)
{
	struct store *s = NULL;
	struct slow_tx t = { .inside = 0 };
	void *targ[2];
	pthread_t th;
	int64_t job;
	double t0, took;

	if ((s = fix_open_fresh(&where, "readers.db")) == NULL) {
		T_CHECK(0);
		return;
	}
	T_EQ_INT(store_readers_open(s, 3, NULL), 0);
	T_EQ_INT(s->nrd, where.pg_url != NULL ? 0 : 3);
	T_EQ_INT(store_readers_open(s, 3, NULL), 0);		/* once only */
	T_EQ_INT(s->nrd, where.pg_url != NULL ? 0 : 3);
	job = add_job(s);
	/* read-your-writes across connections */
	T_EQ_INT(njobs(s), 1);
	{
		struct store_job *sj = NULL;

		T_EQ_INT(store_job_get(s, job, &sj), 0);
		T_CHECK(sj != NULL && sj->id == job);
		store_job_free(sj);
	}
	if (where.pg_url == NULL) {
		struct store *r = store_rlock(s);

		/* a reader is a connection of its own, and refuses writes */
		T_CHECK(r != s);
		T_CHECK(db_exec_script(r->db, "DELETE FROM jobs") != 0);
		store_unlock(r);
		targ[0] = s;
		targ[1] = &t;
		T_EQ_INT(pthread_create(&th, NULL, slow_tx_main, targ), 0);
		while (!atomic_load(&t.inside))
			usleep(1000);
		t0 = bf_mono();
		T_EQ_INT(njobs(s), 1);
		took = bf_mono() - t0;
		T_CHECK(took < 0.3);		/* the writer holds its lock 0.4 s */
		pthread_join(th, NULL);
	}
	T_EQ_INT(njobs(s), 1);	/* nothing deleted */
	/* commits of another process (as the monitor's) move the generation
	 * every time, also with readers open beside the store's connection:
	 * opening one once dropped the process's locks on the file (close(2)
	 * in the mode check), and the generation stuck after the first */
	for (int k = 0; k < 3; k++) {
		char g0[STORE_GENERATION_MAX], g1[STORE_GENERATION_MAX];
		pid_t pid;
		int st = -1;

		T_EQ_INT(store_generation(s, g0, sizeof(g0)), 0);
		/* SQLite: the sqlite3 shell, whose close (it thinks itself the
		 * last connection when this process's locks are gone) checkpoints
		 * and unlinks the WAL under the store's feet */
		if ((pid = fork()) == 0 && where.pg_url == NULL) {
			execlp("sqlite3", "sqlite3", fix_target(&where, "readers.db"),
			    "INSERT INTO jobs (recipe, spec, created_at) VALUES ('demo', '{}', 0)",
			    (char *)NULL);
			_exit(3);
		} else if (pid == 0) {
			struct store *o = NULL;

			if (store_open(fix_target(&where, "readers.db"), &o, NULL) != 0)
				_exit(2);
			add_job(o);
			store_close(o);
			_exit(0);
		}
		T_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0);
		T_EQ_INT(store_generation(s, g1, sizeof(g1)), 0);
		T_CHECK(strcmp(g0, g1) != 0);
		T_EQ_INT(njobs(s), 2 + k);
	}
	store_close(s);
}

/* Schema step 15's samples table, put back behind the store's back. */
#define UNDO_STEP16 \
	"CREATE TABLE samples_old (" \
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE," \
	" boot INTEGER NOT NULL, iteration INTEGER NOT NULL, metric TEXT NOT NULL," \
	" value REAL NOT NULL, unit TEXT, UNIQUE (run_id, boot, iteration, metric));" \
	"INSERT INTO samples_old SELECT run_id, boot, iteration, metric, value, unit" \
	" FROM samples;" \
	"DROP TABLE samples;" \
	"ALTER TABLE samples_old RENAME TO samples;" \
	"PRAGMA user_version = 15;"

/* 1 when SQLite's samples table is WITHOUT ROWID, 0 when not, -1 unknown. */
static int
samples_without_rowid(const char *name)
{
	struct db *db = NULL;
	struct db_stmt *st = NULL;
	int wr = -1;

	if (db_open(fix_target(&where, name), &db, NULL) == 0 &&
	    db_prepare(db, "SELECT wr FROM pragma_table_list WHERE name = 'samples'", &st) == 0 &&
	    db_step(st) == 1)
		wr = db_col_int(st, 0);
	db_finalize(st);
	db_close(db);
	return wr;
}

/*
 * Step 16 (samples clustered on their key, SQLite) on a store of step 15:
 * every sample is there after, read the same, and the key still refuses
 * a second sample of one (run, boot, iteration, metric).
 */
static void
test_migrate_step16(void)
{
	struct store *s = NULL;
	struct db *db = NULL;
	json_t *before = NULL, *after = NULL;
	int64_t job;
	int pg = where.pg_url != NULL;

	if ((s = fix_open_fresh(&where, "step16.db")) == NULL) {
		T_CHECK(0);
		return;
	}
	job = add_job(s);
	run_all(s);
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	s = NULL;
	if (!pg)
		T_EQ_INT(samples_without_rowid("step16.db"), 1);
	T_EQ_INT(db_open(fix_target(&where, "step16.db"), &db, NULL), 0);
	if (db != NULL)
		T_EQ_INT(db_exec_script(db, pg ? FIX_UNDO_STEP17 "UPDATE bf_schema SET version = 15" :
		    FIX_UNDO_STEP17 UNDO_STEP16), 0);
	db_close(db);
	if (!pg)
		T_EQ_INT(samples_without_rowid("step16.db"), 0);

	T_EQ_INT(store_open(fix_target(&where, "step16.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	if (!pg)
		T_EQ_INT(samples_without_rowid("step16.db"), 1);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	T_CHECK(before != NULL && after != NULL && json_equal(before, after));
	/* a sample twice under one key is still refused */
	db = NULL;
	T_EQ_INT(db_open(fix_target(&where, "step16.db"), &db, NULL), 0);
	if (db != NULL)
		T_CHECK(db_exec_script(db, "INSERT INTO samples (run_id, boot, iteration, metric,"
		    " value, unit) SELECT run_id, boot, iteration, metric, value + 1, unit"
		    " FROM samples WHERE run_id = (SELECT MIN(run_id) FROM samples)") != 0);
	db_close(db);
out:
	json_decref(before);
	json_decref(after);
	store_close(s);
}

/* One thread's token (store_generation on that thread's reader). */
struct gen_thread {
	struct store *s;
	char g[STORE_GENERATION_MAX];
	int r;
};

static void *
gen_thread_fn(void *arg)
{
	struct gen_thread *t = arg;

	t->r = store_generation(t->s, t->g, sizeof(t->g));
	return NULL;
}

/* The token of the calling thread (a) and of a new thread (b). */
static void
gen_both(struct store *s, char *a, struct gen_thread *b)
{
	pthread_t th;

	T_EQ_INT(store_generation(s, a, STORE_GENERATION_MAX), 0);
	b->s = s;
	b->r = -1;
	T_EQ_INT(pthread_create(&th, NULL, gen_thread_fn, b), 0);
	pthread_join(th, NULL);
	T_EQ_INT(b->r, 0);
}

/* Tokens until two threads (on two readers) agree twice in a row: every
 * reader has looked since the last commit. 1 when they settled. */
static int
gen_settle(struct store *s, char *a, struct gen_thread *b)
{
	char prev[STORE_GENERATION_MAX] = "";
	int i;

	for (i = 0; i < 8; i++) {
		gen_both(s, a, b);
		if (strcmp(a, b->g) == 0 && strcmp(a, prev) == 0)
			return 1;
		snprintf(prev, sizeof(prev), "%s", a);
	}
	return 0;
}

/*
 * With readers open (SQLite), the token is the same whichever thread (and
 * so whichever reader) asks: without writes every thread gives the same
 * token, again and again, reads or not; after a commit (this connection's
 * or another's) no thread's next token is the one taken before it.
 */
static void
test_generation_readers(void)
{
	struct store *s = NULL, *o = NULL;
	struct gen_thread b0, b1;
	char a0[STORE_GENERATION_MAX], a1[STORE_GENERATION_MAX];

	if (where.pg_url != NULL)
		return;		/* PostgreSQL has no readers: test_generation */
	if ((s = fix_open_fresh(&where, "genrd.db")) == NULL) {
		T_CHECK(0);
		return;
	}
	T_EQ_INT(store_readers_open(s, 2, NULL), 0);
	T_CHECK(gen_settle(s, a0, &b0));
	T_EQ_INT(njobs(s), 0);
	T_EQ_INT(store_generation(s, a1, sizeof(a1)), 0);
	T_EQ_STR(a1, a0);				/* a read: the same */
	add_job(s);					/* this connection's commit */
	gen_both(s, a1, &b1);
	T_CHECK(strcmp(a1, a0) != 0);
	T_CHECK(strcmp(b1.g, a0) != 0);
	T_CHECK(gen_settle(s, a0, &b0));
	T_EQ_INT(store_open(fix_target(&where, "genrd.db"), &o, NULL), 0);
	if (o != NULL)
		add_job(o);				/* another connection's */
	gen_both(s, a1, &b1);
	T_CHECK(strcmp(a1, a0) != 0);
	T_CHECK(strcmp(b1.g, a0) != 0);
	T_CHECK(gen_settle(s, a1, &b1));
	T_CHECK(strcmp(a1, a0) != 0);
	store_close(o);
	store_close(s);
}

int
main(void)
{
	if (fix_where_init(&where, "store-samples") != 0)
		return 1;
	test_reader();
	test_from_cells_hostile();
	test_generation();
	test_generation_readers();
	test_readers();
	test_migrate_step16();
	fix_remove(&where, "step16.db");
	fix_remove(&where, "samples.db");
	fix_remove(&where, "gen.db");
	fix_remove(&where, "genrd.db");
	fix_remove(&where, "readers.db");
	rmdir(where.dir);
	return t_done();
}
