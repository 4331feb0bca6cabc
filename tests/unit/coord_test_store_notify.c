/*
 * coord_test_store_notify.c: schema step 18, PostgreSQL's notify triggers
 * (store-schema.c), on SQLite or (unit.coord_test_store_notify@pg)
 * PostgreSQL: made on a fresh store, made again on a store of step 17 with
 * its runs and samples intact, and a step that runs again on its own
 * result. What the notes carry and who hears them: coord_test_events.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "db.h"
#include "store.h"
#include "store_fixture.h"
#include "t.h"

/* Triggers of the store called name whose name starts with prefix. */
static int
count_triggers(const char *name, const char *prefix)
{
	struct db *db = NULL;
	struct db_stmt *st = NULL;
	int n = -1;

	T_EQ_INT(db_open(target(name), &db, NULL), 0);
	if (db != NULL && db_prepare(db, where.pg_url != NULL ?
	    "SELECT COUNT(*) FROM pg_trigger WHERE NOT tgisinternal AND starts_with(tgname, ?1)" :
	    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, length(?1)) = ?1",
	    &st) == 0 && db_bind_text(st, 1, prefix) == 0 && db_step(st) == 1)
		n = db_col_int(st, 0);
	db_finalize(st);
	db_close(db);
	return n;
}

/* notify.db's notify triggers: runs_notify, jobs_notify_ins and _upd. */
static int
notify_triggers(void)
{
	return count_triggers("notify.db", "runs_notify") + count_triggers("notify.db", "jobs_notify");
}

/* Step 18: PostgreSQL's notify triggers on a store of step 17, its runs
 * and samples as they were; on SQLite only the version moves. */
static void
test_migrate_notify(void)
{
	struct store_sample sm[1] = { { "ops", 77.25, "ops/s" } };
	struct store *s;
	json_t *before = NULL, *after = NULL;
	int64_t job;

	if ((s = open_fresh("notify.db")) == NULL)
		return;
	T_EQ_INT(notify_triggers(), where.pg_url != NULL ? 3 : 0);
	T_EQ_INT(add_machine(s, "n1", "demo"), 0);
	job = add_job(s, "demo", NULL, 2, 1);
	done_run_with(s, "n1", "demo", sm);
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	if (where.pg_url != NULL)
		exec_on("notify.db", "DROP FUNCTION bf_notify_run() CASCADE;"
		    " DROP FUNCTION bf_notify_job() CASCADE;");
	force_version("notify.db", 17);
	T_EQ_INT(notify_triggers(), 0);

	s = NULL;
	T_EQ_INT(store_open(target("notify.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(notify_triggers(), where.pg_url != NULL ? 3 : 0);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	check_same_json(before, after, "77.25");
	/* and the store goes on: the other run */
	done_run_with(s, "n1", "demo", sm);
	store_close(s);
	/* A store set back once more migrates again (the step runs on its own
	 * result: OR REPLACE). */
	force_version("notify.db", 17);
	s = NULL;
	T_EQ_INT(store_open(target("notify.db"), &s, NULL), 0);
	T_EQ_INT(s != NULL ? store_schema_version(s) : -1, FIX_SCHEMA_LATEST);
	T_EQ_INT(notify_triggers(), where.pg_url != NULL ? 3 : 0);
out:
	json_decref(before);
	json_decref(after);
	store_close(s);
}

int
main(void)
{
	static const char *const dbs[] = { "notify.db" };

	if (fix_where_init(&where, "store-notify") != 0)
		return 1;
	test_migrate_notify();
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
