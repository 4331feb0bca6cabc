/*
 * coord_test_sched_finish.c: a run's last iteration's samples, the log
 * lines after them and its finish are one commit. In the store
 * (store_run_finish_with): a finish the store refuses (a trigger here, as
 * a real refusal would) writes none of them, the earlier iterations' stay;
 * samples or lines the store refuses fail it before any write; the
 * add-a-boot question sees them. In the scheduler: the last iteration's
 * samples (its line's and its counters', the counters' note between them)
 * commit only with the finish; a finish refused with them requeues the run
 * without using up its attempts, says why in the run's log, and once the
 * store takes it again the run is done with each sample and the note once;
 * more lines than are held are all stored, in their order. SQLite, and
 * with BF_TEST_PG_URL PostgreSQL (unit.coord_test_sched_finish@pg).
 */
#include <math.h>

#include "runner.h"
#include "sched_fixture.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * sql on a connection of its own, tried for up to 20 s: the scheduler's
 * requeue loop keeps the store's write lock busy, and under valgrind one
 * busy timeout is not enough (-10 seen in valgrind_units).
 */
static int
exec_retry(const char *sql)
{
	struct db *db = NULL;
	int r = -1, k;

	for (k = 0; k < 100 && r != 0; k++) {
		if (k > 0)
			nanosleep(&(struct timespec){ 0, 200000000L }, NULL);
		if ((r = db_open(dbpath, &db, NULL)) == 0)
			r = db_exec_script(db, sql);
		db_close(db);
		db = NULL;
	}
	if (r != 0)
		fprintf(stderr, "%s: %s\n", sql, db_last_error());
	return r;
}

/* A trigger that refuses every run's move to done, on or off. */
static int
refuse_done(int on)
{
	static const char *sqlite_on = "CREATE TRIGGER bf_test_refuse BEFORE UPDATE OF state "
	    "ON runs WHEN NEW.state = 'done' BEGIN SELECT RAISE(ABORT, 'test: the finish is "
	    "refused'); END";
	static const char *pg_on = "CREATE OR REPLACE FUNCTION bf_test_refuse() RETURNS "
	    "trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'test: the finish is "
	    "refused'; END $$; CREATE TRIGGER bf_test_refuse BEFORE UPDATE OF state ON runs "
	    "FOR EACH ROW WHEN (NEW.state = 'done') EXECUTE FUNCTION bf_test_refuse()";
	return exec_retry(on ? (pg_url != NULL ? pg_on : sqlite_on) :
	    pg_url != NULL ? "DROP TRIGGER bf_test_refuse ON runs" :
	    "DROP TRIGGER bf_test_refuse");
}

/*
 * Every sample insert that commits leaves a row in bf_test_seen: one made
 * in a transaction that is rolled back leaves none.
 */
static int
watch_samples(void)
{
	static const char *sqlite_sql = "CREATE TABLE bf_test_seen (iteration INTEGER, "
	    "metric TEXT); CREATE TRIGGER bf_test_watch AFTER INSERT ON samples BEGIN "
	    "INSERT INTO bf_test_seen VALUES (NEW.iteration, NEW.metric); END";
	static const char *pg_sql = "CREATE TABLE bf_test_seen (iteration INTEGER, "
	    "metric TEXT); CREATE FUNCTION bf_test_watch() RETURNS trigger LANGUAGE plpgsql "
	    "AS $$ BEGIN INSERT INTO bf_test_seen VALUES (NEW.iteration, NEW.metric); "
	    "RETURN NEW; END $$; CREATE TRIGGER bf_test_watch AFTER INSERT ON samples "
	    "FOR EACH ROW EXECUTE FUNCTION bf_test_watch()";
	struct db *db = NULL;
	int r;

	if ((r = db_open(dbpath, &db, NULL)) == 0)
		r = db_exec_script(db, pg_url != NULL ? pg_sql : sqlite_sql);
	if (r != 0)
		fprintf(stderr, "watch_samples: %s\n", db_last_error());
	db_close(db);
	return r;
}

/* Rows of bf_test_seen of iteration it: committed sample inserts. */
static int
seen_count(int it)
{
	struct db *db = NULL;
	struct db_stmt *st = NULL;
	int n = -1;

	if (db_open(dbpath, &db, NULL) == 0 &&
	    db_prepare(db, "SELECT COUNT(*) FROM bf_test_seen WHERE iteration = ?1", &st) == 0 &&
	    db_bind_int64(st, 1, it) == 0 && db_step(st) == 1)
		n = (int)db_col_int64(st, 0);
	db_finalize(st);
	db_close(db);
	return n;
}

struct seen {
	size_t n;
	int calls;
};

static int
decide_seen(void *arg, const double *v, const int *boot, size_t n, int planned)
{
	struct seen *s = arg;

	(void)v;
	(void)boot;
	(void)planned;
	s->calls++;
	s->n = n;
	return 0;
}

static void
test_store(void)
{
	struct store *st = fresh_store(NULL);
	struct store_claim *c = NULL;
	struct store_sample s0 = { "wall_s", 1.0, "s" };
	struct store_sample s1[2] = { { "wall_s", 2.0, "s" }, { "vmstat.x", 5, "count" } };
	struct store_sample bad = { "wall_s", NAN, "s" };
	struct store_batch b[STORE_FINISH_BATCHES + 1];
	struct store_logline l[STORE_FINISH_LOGS + 1];
	struct store_log_line *lines = NULL;
	struct seen seen = { 0, 0 };
	int64_t job = 0;
	size_t ns = 0, i, nlines = 0;
	int r;

	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2}}", &job), 0);
	T_EQ_INT(store_run_claim(st, "fake1", "fake", 30, &c), 0);
	T_CHECK(c != NULL);
	if (c == NULL) {
		store_close(st);
		return;
	}
	T_EQ_INT(store_samples_add(st, c->run_id, c->boot, 0, &s0, 1), 0);
	for (i = 0; i < NELEM(b); i++)
		b[i] = (struct store_batch){ .boot = c->boot, .iteration = 1, .samples = s1,
		    .n = 2 };
	for (i = 0; i < NELEM(l); i++)
		l[i] = (struct store_logline){ .stream = "coord", .line = i == 0 ?
		    "counters: a note" : "counters: \xff" "another" };
	T_EQ_INT(store_run_log_add(st, c->run_id, "stdout", "before"), 0);
	/* refused by the store: neither the samples, nor the lines, nor the end */
	T_EQ_INT(refuse_done(1), 0);
	r = store_run_finish_with(st, c->run_id, &(struct store_held){ b, 1, l, 2 }, "done",
	    0, NULL, NULL, NULL, NULL);
	T_CHECK(r != 0 && r != BF_ERR_STATE);
	T_EQ_INT(fix_count(st, job, "running", &ns), 1);
	T_EQ_INT(ns, 1);
	T_EQ_INT(store_run_log(st, c->run_id, 0, 0, &lines, &nlines), 0);
	T_EQ_INT(nlines, 1);
	store_log_lines_free(lines, nlines);
	T_EQ_INT(refuse_done(0), 0);
	/* refused before any write */
	T_EQ_INT(store_run_finish_with(st, c->run_id, &(struct store_held){ b, NELEM(b), NULL,
	    0 }, "done", 0, NULL, NULL, NULL, NULL), BF_ERR_INVALID);
	T_EQ_INT(store_run_finish_with(st, c->run_id, &(struct store_held){ b, 1, l, NELEM(l) },
	    "done", 0, NULL, NULL, NULL, NULL), BF_ERR_INVALID);
	l[1].stream = "stdin";
	T_EQ_INT(store_run_finish_with(st, c->run_id, &(struct store_held){ b, 1, l, 2 },
	    "done", 0, NULL, NULL, NULL, NULL), BF_ERR_INVALID);
	l[1].stream = "coord";
	T_EQ_INT(store_run_finish_with(st, c->run_id, &(struct store_held){ b, 1, NULL, 1 },
	    "done", 0, NULL, NULL, NULL, NULL), BF_ERR_INVALID);
	b[1].samples = &bad;
	b[1].n = 1;
	T_EQ_INT(store_run_finish_with(st, c->run_id, &(struct store_held){ b, 2, NULL, 0 },
	    "done", 0, NULL, NULL, NULL, NULL), BF_ERR_RANGE);
	T_EQ_INT(store_run_finish_with(st, c->run_id, &(struct store_held){ NULL, 1, NULL, 0 },
	    "done", 0, NULL, NULL, NULL, NULL), BF_ERR_INVALID);
	T_EQ_INT(fix_count(st, job, "running", &ns), 1);
	T_EQ_INT(ns, 1);
	/* taken: the decision sees the held samples with the others, and the
	 * lines follow the run's earlier one, cleaned as store_run_log_add
	 * cleans them */
	T_EQ_INT(store_run_finish_with(st, c->run_id, &(struct store_held){ b, 1, l, 2 }, "done",
	    0, NULL, "wall_s", decide_seen, &seen), 0);
	T_EQ_INT(seen.calls, 1);
	T_EQ_INT(seen.n, 2);
	T_EQ_INT(fix_count(st, job, "done", &ns), 1);
	T_EQ_INT(ns, 3);
	T_EQ_INT(store_run_log(st, c->run_id, 0, 0, &lines, &nlines), 0);
	T_EQ_INT(nlines, 3);
	if (nlines == 3) {
		T_EQ_STR(lines[0].line, "before");
		T_EQ_STR(lines[1].line, "counters: a note");
		T_EQ_STR(lines[1].stream, "coord");
		/* not UTF-8: replaced, as store_run_log_add replaces it */
		T_EQ_STR(lines[2].line, "counters: \xef\xbf\xbd" "another");
	}
	store_log_lines_free(lines, nlines);
	/* finished: a second finish is refused, and adds nothing */
	T_EQ_INT(store_run_finish_with(st, c->run_id, &(struct store_held){ b, 1, l, 1 }, "done",
	    0, NULL, NULL, NULL, NULL), BF_ERR_STATE);
	T_EQ_INT(fix_count(st, job, "done", &ns), 1);
	T_EQ_INT(ns, 3);
	T_EQ_INT(store_run_log(st, c->run_id, 0, 0, &lines, &nlines), 0);
	T_EQ_INT(nlines, 3);
	store_log_lines_free(lines, nlines);
	store_claim_free(c);
	store_close(st);
}

/* An integer field of the job's first run ("id", "attempt"). */
static int64_t
run0_int(struct store *st, int64_t job, const char *key)
{
	json_t *j = fix_runs(st, job);
	int64_t a;

	a = json_integer_value(json_object_get(json_array_get(json_object_get(j, "runs"), 0),
	    key));
	json_decref(j);
	return a;
}

/*
 * long: iteration 0 ends more than SINK_HOLD_MS after the hello, so its
 * sample is written as it comes; otherwise it is a short iteration, held
 * with the last one for the finish.
 */
static void
test_sched(int long_first)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = " step", .out = HELLO ITER(0, 0.5) ITER(1, 0.6)
		  "{\"type\":\"counters\",\"iteration\":1,\"metrics\":{\"vmstat.x\":7},"
		  "\"notes\":[\"pmu.cycles: multiplexed\"]}\n" DONE_OK,
		  .pause_before = long_first ? 1 : 0, .pause_ms = 1100 },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct store_log_line *lines = NULL;
	struct sched *s;
	json_t *j, *smp;
	int64_t job = 0, run, attempt = 0;
	size_t nlines = 0, i, ns = 0;
	int said = 0, notes = 0, k;
	char buf[32];

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2}}", &job), 0);
	T_EQ_INT(refuse_done(1), 0);
	T_EQ_INT(watch_samples(), 0);
	s = start(st, &fs, 30);
	/* max_attempts is 3: a fourth attempt is one no refusal used up */
	for (k = 0; k < 300 && (attempt = run0_int(st, job, "attempt")) < 4; k++)
		nanosleep(&(struct timespec){ 0, 20000000L }, NULL);
	T_CHECK(attempt >= 4);
	/* long: every attempt committed iteration 0's sample on its own;
	 * short: it went with the refused finishes too. Iteration 1's (its
	 * line's, then the counters' after the notes' log line) went only
	 * with the refused finishes: none of them committed */
	if (long_first)
		T_CHECK(seen_count(0) >= 3);
	else
		T_EQ_INT(seen_count(0), 0);
	T_EQ_INT(seen_count(1), 0);
	T_EQ_INT(refuse_done(0), 0);
	T_EQ_STR(wait_job(st, job, 20, buf, sizeof(buf)), "done");
	T_EQ_INT(sched_stop(s), 0);
	T_CHECK(rules[3].used >= 4);
	T_EQ_INT(fix_count(st, job, "done", &ns), 1);
	T_EQ_INT(ns, 3);	/* wall_s of both iterations, the last one's counter */
	T_EQ_INT(seen_count(1), 2);	/* with the finish that was taken */
	if (!long_first)
		T_EQ_INT(seen_count(0), 1);	/* so was the short one's */
	j = fix_runs(st, job);
	run = json_integer_value(json_object_get(json_array_get(json_object_get(j, "runs"), 0),
	    "id"));
	json_array_foreach(json_object_get(json_array_get(json_object_get(j, "runs"), 0),
	    "samples"), i, smp)
		if (strcmp(json_string_value(json_object_get(smp, "metric")), "vmstat.x") == 0)
			T_EQ_INT(json_integer_value(json_object_get(smp, "iteration")), 1);
	json_decref(j);
	T_EQ_INT(store_run_log(st, run, 0, 0, &lines, &nlines), 0);
	for (i = 0; i < nlines; i++) {
		said |= strstr(lines[i].line, "storing a result failed") != NULL &&
		    strstr(lines[i].line, "the finish is refused") != NULL;
		/* the note came after the last iteration's line: it went with
		 * each refused finish, and is there once, from the one taken */
		notes += strcmp(lines[i].line, "counters: pmu.cycles: multiplexed") == 0;
	}
	T_CHECK(said);
	T_EQ_INT(notes, 1);
	store_log_lines_free(lines, nlines);
	T_EQ_INT(fs.unmatched, 0);
	store_close(st);
}

/*
 * More log lines after the last iteration than the sink holds
 * (STORE_FINISH_LOGS): every one is stored, once and in its order, and
 * the run is done with its samples.
 */
#define NLOG (STORE_FINISH_LOGS + 3)
#define LOGL(i) "{\"type\":\"log\",\"stream\":\"stdout\",\"line\":\"after " #i "\"}\n"
static void
test_logs(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = " step", .out = HELLO ITER(0, 0.5) LOGL(0) LOGL(1) LOGL(2) LOGL(3)
		  LOGL(4) LOGL(5) LOGL(6) LOGL(7) LOGL(8) LOGL(9) LOGL(10) DONE_OK },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct store_log_line *lines = NULL;
	struct sched *s;
	int64_t job = 0, run;
	size_t nlines = 0, i, k = 0, ns = 0;
	char buf[32], want[32];

	T_CHECK(NLOG == 11);	/* the lines of the step above */
	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1}}", &job), 0);
	s = start(st, &fs, 30);
	T_EQ_STR(wait_job(st, job, 20, buf, sizeof(buf)), "done");
	T_EQ_INT(sched_stop(s), 0);
	T_EQ_INT(fix_count(st, job, "done", &ns), 1);
	T_EQ_INT(ns, 1);
	run = run0_int(st, job, "id");
	T_EQ_INT(store_run_log(st, run, 0, 0, &lines, &nlines), 0);
	for (i = 0; i < nlines; i++) {
		if (strncmp(lines[i].line, "after ", 6) != 0)
			continue;
		snprintf(want, sizeof(want), "after %zu", k++);
		T_EQ_STR(lines[i].line, want);
	}
	T_EQ_INT(k, NLOG);
	store_log_lines_free(lines, nlines);
	T_EQ_INT(fs.unmatched, 0);
	store_close(st);
}

/*
 * A held write that fails once its call has returned 0: the last
 * iteration's samples held, a knobs line (a call that cannot fail) writes
 * them and the store refuses them, and the agent then says done. The run
 * must not finish done without them: it is requeued (its attempts not
 * used up) and, once the store takes samples again, done with all of them.
 */
static void
test_late(void)
{
	static const char *sqlite_on = "CREATE TRIGGER bf_test_refuse_s BEFORE INSERT ON "
	    "samples WHEN NEW.iteration = 1 BEGIN SELECT RAISE(ABORT, 'test: the sample is "
	    "refused'); END";
	static const char *pg_on = "CREATE OR REPLACE FUNCTION bf_test_refuse_s() RETURNS "
	    "trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.iteration = 1 THEN RAISE EXCEPTION "
	    "'test: the sample is refused'; END IF; RETURN NEW; END $$; CREATE TRIGGER "
	    "bf_test_refuse_s BEFORE INSERT ON samples FOR EACH ROW EXECUTE FUNCTION "
	    "bf_test_refuse_s()";
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = " step", .out = HELLO ITER(0, 0.5) ITER(1, 0.6)
		  "{\"type\":\"knobs\",\"after\":{\"thp\":\"always\"}}\n" DONE_OK },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct store_log_line *lines = NULL;
	struct sched *s;
	int64_t job = 0, attempt = 0, run;
	size_t nlines = 0, i, ns = 0;
	int said = 0, k;
	char buf[32];

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2}}", &job), 0);
	T_EQ_INT(exec_retry(pg_url != NULL ? pg_on : sqlite_on), 0);
	s = start(st, &fs, 30);
	for (k = 0; k < 300 && (attempt = run0_int(st, job, "attempt")) < 4; k++)
		nanosleep(&(struct timespec){ 0, 20000000L }, NULL);
	T_CHECK(attempt >= 4);
	T_EQ_INT(fix_count(st, job, "done", NULL), 0);	/* never done without them */
	T_EQ_INT(exec_retry(pg_url != NULL ? "DROP TRIGGER bf_test_refuse_s ON samples" :
	    "DROP TRIGGER bf_test_refuse_s"), 0);
	T_EQ_STR(wait_job(st, job, 20, buf, sizeof(buf)), "done");
	T_EQ_INT(sched_stop(s), 0);
	T_EQ_INT(fix_count(st, job, "done", &ns), 1);
	T_EQ_INT(ns, 2);
	run = run0_int(st, job, "id");
	T_EQ_INT(store_run_log(st, run, 0, 0, &lines, &nlines), 0);
	for (i = 0; i < nlines; i++)
		said |= strstr(lines[i].line, "storing a result failed") != NULL &&
		    strstr(lines[i].line, "the sample is refused") != NULL;
	T_CHECK(said);
	store_log_lines_free(lines, nlines);
	T_EQ_INT(fs.unmatched, 0);
	store_close(st);
}

int
main(void)
{
	if (sched_fixture_setup() != 0)
		return 1;
	test_store();
	test_sched(1);
	test_sched(0);
	test_late();
	test_logs();
	sched_fixture_done();
	return t_done();
}
