/*
 * coord_test_store_jobs.c: the jobs list (store_jobs_list) on a real
 * SQLite file, or with BF_TEST_PG_URL (unit.coord_test_store_jobs@pg) a
 * real PostgreSQL: the per-state run counters that schema step 13's
 * triggers keep equal COUNT(*) GROUP BY state after every kind of state
 * change (claim, finish, boot-failed, retry, lost, adaptive extra boot,
 * cancel, lease reclaim by another coordinator, a restart's recovery);
 * keyset paging; each filter, with LIKE's wildcards in the search text
 * taken literally; and filters out of range refused. The reproductions
 * list (store_repro_list): newest first, keyset pages, each with its job's
 * recipe, state and run counts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "db.h"
#include "store.h"
#include "store_fixture.h"
#include "t.h"

#define MAXJ	32

/* Every job's counters equal what the runs table says, read over a
 * connection of its own, behind the store's back. */
static void
check_counts(struct store *s, const char *name, const char *when)
{
	static const struct store_job_filter all = { .limit = BF_MAX_JOBS_PAGE };
	int64_t want[MAXJ + 1][STORE_RUN_NSTATES];
	struct store_job *js = NULL;
	struct db_stmt *st = NULL;
	struct db *db = NULL;
	size_t n = 0, i;
	int64_t next, id;
	int k, bad = 0;

	memset(want, 0, sizeof(want));
	T_EQ_INT(db_open(target(name), &db, NULL), 0);
	if (db == NULL)
		return;
	T_EQ_INT(db_prepare(db, "SELECT job_id, state, COUNT(*) FROM runs GROUP BY job_id, state",
	    &st), 0);
	while (st != NULL && db_step(st) == 1) {
		const char *state = (const char *)db_col_text(st, 1);

		id = db_col_int64(st, 0);
		for (k = 0; k < STORE_RUN_NSTATES; k++)
			if (strcmp(state, store_run_states[k]) == 0)
				break;
		T_CHECK(id > 0 && id <= MAXJ && k < STORE_RUN_NSTATES);
		if (id > 0 && id <= MAXJ && k < STORE_RUN_NSTATES)
			want[id][k] = db_col_int64(st, 2);
	}
	db_finalize(st);
	db_close(db);
	T_EQ_INT(store_jobs_list(s, &all, &js, &n, &next), 0);
	for (i = 0; i < n; i++)
		for (k = 0; k < STORE_RUN_NSTATES; k++)
			if (js[i].id <= MAXJ && js[i].runs[k] != want[js[i].id][k]) {
				fprintf(stderr, "%s: job %lld %s: counter %lld, runs %lld\n", when,
				    (long long)js[i].id, store_run_states[k],
				    (long long)js[i].runs[k], (long long)want[js[i].id][k]);
				bad = 1;
			}
	T_EQ_INT(bad, 0);
	store_jobs_free(js, n);
}

static struct store_claim *
claim(struct store *s, const char *machine, int lease_s)
{
	struct store_claim *c = NULL;

	/* d3 is of its own class: only a job naming it reaches it */
	T_EQ_INT(store_run_claim(s, machine, strcmp(machine, "d3") == 0 ? "other" : "demo",
	    lease_s, &c), 0);
	T_CHECK(c != NULL);
	return c;
}

/* Claim on machine and end the run as state (via finish). */
static void
claim_finish(struct store *s, const char *machine, const char *state)
{
	struct store_claim *c = claim(s, machine, 60);

	if (c != NULL)
		T_EQ_INT(store_run_finish(s, c->run_id, state, 1, "test"), 0);
	store_claim_free(c);
}

static void
test_counters(void)
{
	struct store *s = open_fresh("counts.db"), *b = NULL;
	struct store_claim *c = NULL;
	struct store_job *j = NULL;
	int64_t ja, jb;
	size_t n = 0;
	int requeued = -1;

	if (s == NULL)
		return;
	T_EQ_INT(store_set_node(s, "a"), 0);
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	T_EQ_INT(add_machine(s, "d2", "demo"), 0);
	T_EQ_INT(add_machine(s, "d3", "other"), 0);
	ja = add_job(s, "demo", NULL, 2, 3);		/* 6 runs */
	jb = add_job(s, NULL, "[\"d3\"]", 1, 3);	/* 3 runs, d3 only */
	check_counts(s, "counts.db", "insert");
	T_EQ_INT(store_job_get(s, ja, &j), 0);
	if (j != NULL) {
		T_EQ_INT(j->runs[STORE_RUN_QUEUED], 6);
		T_EQ_INT(j->has_started, 0);
		T_EQ_INT(j->has_finished, 0);
		T_CHECK(j->spec != NULL);
	}
	store_job_free(j);
	j = NULL;

	claim_finish(s, "d1", "done");
	check_counts(s, "counts.db", "done");
	T_EQ_INT(store_job_get(s, ja, &j), 0);
	if (j != NULL) {
		T_EQ_INT(j->has_started, 1);
		T_CHECK(j->started_at > 1.0e9);
		T_EQ_INT(j->runs[STORE_RUN_DONE], 1);
		T_EQ_INT(j->runs[STORE_RUN_QUEUED], 5);
	}
	store_job_free(j);
	j = NULL;
	claim_finish(s, "d1", "failed");
	claim_finish(s, "d1", "boot-failed");
	check_counts(s, "counts.db", "failed, boot-failed");

	/* a lost link: requeued once, then lost */
	c = claim(s, "d2", 60);
	if (c != NULL)
		T_EQ_INT(store_run_retry(s, c->run_id, "link down", 3, &requeued), 0);
	T_EQ_INT(requeued, 1);
	check_counts(s, "counts.db", "retry");
	store_claim_free(c);
	c = claim(s, "d2", 60);
	if (c != NULL)
		T_EQ_INT(store_run_retry(s, c->run_id, "link down", 1, &requeued), 0);
	T_EQ_INT(requeued, 0);
	check_counts(s, "counts.db", "lost");
	store_claim_free(c);

	/* the adaptive extra boot: a run ends and one more is queued */
	c = claim(s, "d1", 60);
	if (c != NULL)
		T_EQ_INT(store_run_finish_more(s, c->run_id, "done", 0, NULL, 1), 0);
	check_counts(s, "counts.db", "add a boot");
	store_claim_free(c);

	/* cancel while a run is running: queued ones are cancelled at once,
	 * the running one when a restart recovers it */
	c = claim(s, "d3", 60);
	if (c != NULL)
		T_EQ_INT(c->job_id, jb);
	T_EQ_INT(store_job_cancel(s, jb), 0);
	check_counts(s, "counts.db", "cancel");
	store_claim_free(c);
	c = claim(s, "d1", 60);		/* job a's, left running by the "crash" */
	store_claim_free(c);
	c = NULL;
	store_close(s);
	s = NULL;
	T_EQ_INT(store_open(target("counts.db"), &s, NULL), 0);
	if (s == NULL)
		return;
	T_EQ_INT(store_set_node(s, "a"), 0);
	T_EQ_INT(store_recover(s, &n), 0);
	T_EQ_INT(n, 1);
	check_counts(s, "counts.db", "restart");
	T_EQ_INT(store_job_get(s, jb, &j), 0);
	if (j != NULL) {
		T_EQ_INT(j->runs[STORE_RUN_CANCELLED], 3);
		T_EQ_STR(j->state, "cancelled");
		T_EQ_INT(j->has_finished, 1);
	}
	store_job_free(j);
	j = NULL;

	/* another coordinator takes over a run whose lease lapsed */
	T_EQ_INT(store_open(target("counts.db"), &b, NULL), 0);
	if (b != NULL)
		T_EQ_INT(store_set_node(b, "b"), 0);
	c = claim(s, "d1", 1);
	check_counts(s, "counts.db", "claimed");
	sleep(2);
	n = 0;
	if (b != NULL)
		T_EQ_INT(store_reclaim(b, &n), 0);
	T_EQ_INT(n, 1);
	check_counts(s, "counts.db", "reclaim");
	store_claim_free(c);

	/* and the rest run to the end */
	while ((c = NULL, store_run_claim(s, "d2", "demo", 60, &c)) == 0 && c != NULL) {
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
		store_claim_free(c);
	}
	check_counts(s, "counts.db", "end");
	T_EQ_INT(store_job_get(s, ja, &j), 0);
	if (j != NULL) {
		T_EQ_STR(j->state, "failed");
		T_EQ_INT(j->runs[STORE_RUN_QUEUED] + j->runs[STORE_RUN_RUNNING], 0);
		T_EQ_INT(j->runs[STORE_RUN_LOST], 1);
		T_EQ_INT(j->runs[STORE_RUN_BOOT_FAILED], 1);
		T_EQ_INT(j->runs[STORE_RUN_FAILED], 1);
		T_EQ_INT(j->runs[STORE_RUN_DONE], 4);	/* 6 planned + 1 added - 3 */
	}
	store_job_free(j);
	store_close(b);
	store_close(s);
}

/* ids of f's page into ids (a space-separated list). */
static size_t
page(struct store *s, const struct store_job_filter *f, char *ids, size_t idsz,
    int64_t *next)
{
	struct store_job *js = NULL;
	size_t n = 0, i, used = 0;

	ids[0] = '\0';
	T_EQ_INT(store_jobs_list(s, f, &js, &n, next), 0);
	for (i = 0; i < n && used < idsz; i++)
		used += (size_t)snprintf(ids + used, idsz - used, "%s%lld", i ? " " : "",
		    (long long)js[i].id);
	store_jobs_free(js, n);
	return n;
}

static int64_t
named_job(struct store *s, const char *recipe, const char *name, const char *names)
{
	struct store_run_new rn = { .label = "", .axes_json = "{}", .values_json = "{}",
	    .iterations = 1, .timeout_s = 60 };
	int64_t id = 0;

	T_EQ_INT(store_job_create(s, recipe, name, "{}", names == NULL ? "demo" : NULL, names,
	    &rn, 1, &id), 0);
	return id;
}

static void
test_filters(void)
{
	struct store *s = open_fresh("filter.db");
	struct store_job_filter f;
	struct store_claim *c = NULL;
	struct store_job *js = NULL;
	int64_t id[8], next = -1;
	char ids[256], want[256], q[BF_MAX_JOBS_Q + 2];
	size_t n = 0;

	if (s == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	T_EQ_INT(add_machine(s, "d9", "demo"), 0);
	id[0] = named_job(s, "btree", "Alpha run", NULL);
	id[1] = named_job(s, "redis", "100%_x!y", NULL);
	id[2] = named_job(s, "redis", "100ab_xzy", NULL);
	id[3] = named_job(s, "btree", NULL, "[\"d9\"]");
	id[4] = named_job(s, "cpu-loop", "beta", NULL);
	id[5] = named_job(s, "cpu-loop", "gamma", NULL);
	id[6] = named_job(s, "cpu-loop", "delta", NULL);
	/* d9 runs job 3's run; job 0's runs on d1 and fails */
	c = claim(s, "d9", 60);
	if (c != NULL)
		T_EQ_INT(c->job_id, id[0]);
	if (c != NULL)
		T_EQ_INT(store_run_finish(s, c->run_id, "failed", 1, NULL), 0);
	store_claim_free(c);
	c = claim(s, "d9", 60);
	if (c != NULL)
		T_EQ_INT(c->job_id, id[1]);
	store_claim_free(c);

	/* keyset pages of 3: every job once, newest first */
	memset(&f, 0, sizeof(f));
	f.limit = 3;
	T_EQ_INT(page(s, &f, ids, sizeof(ids), &next), 3);
	snprintf(want, sizeof(want), "%lld %lld %lld", (long long)id[6], (long long)id[5],
	    (long long)id[4]);
	T_EQ_STR(ids, want);
	T_EQ_INT(next, id[4]);
	f.before = next;
	T_EQ_INT(page(s, &f, ids, sizeof(ids), &next), 3);
	T_EQ_INT(next, id[1]);
	f.before = next;
	T_EQ_INT(page(s, &f, ids, sizeof(ids), &next), 1);
	T_EQ_INT(next, 0);
	snprintf(want, sizeof(want), "%lld", (long long)id[0]);
	T_EQ_STR(ids, want);
	/* a page that ends exactly at the oldest job says there is no more */
	f.before = id[3];
	T_EQ_INT(page(s, &f, ids, sizeof(ids), &next), 3);
	T_EQ_INT(next, 0);

	static const struct {
		unsigned int states;
		const char *recipe, *machine, *q;
		int published;
		int want[8];		/* indexes into id, -1 ends */
	} cases[] = {
		{ .recipe = "redis", .want = { 2, 1, -1 } },
		{ .recipe = "nosuch", .want = { -1 } },
		{ .machine = "d9", .want = { 1, 0, -1 } },
		{ .machine = "d1", .want = { -1 } },
		{ .states = 1u << 3, .want = { 0, -1 } },		/* failed */
		{ .states = 1u << 1 | 1u << 3, .want = { 1, 0, -1 } },	/* running, failed */
		{ .states = 1u << 0, .recipe = "cpu-loop", .want = { 6, 5, 4, -1 } },
		/* wildcards are literal, and the search ignores ASCII case */
		{ .q = "0%_x!", .want = { 1, -1 } },
		{ .q = "%", .want = { 1, -1 } },
		{ .q = "_", .want = { 2, 1, -1 } },
		{ .q = "ALPHA", .want = { 0, -1 } },
		{ .q = "ta", .want = { 6, 4, -1 } },
		{ .q = "redi", .recipe = "redis", .machine = "d9", .want = { 1, -1 } },
		{ .q = "nothing like it", .want = { -1 } },
		{ .published = 1, .want = { 5, -1 } },
		{ .published = 1, .q = "beta", .want = { -1 } },
	};
	size_t k, i;

	T_EQ_INT(store_job_publish(s, id[5]), 0);
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t used = 0;

		memset(&f, 0, sizeof(f));
		f.states = cases[k].states;
		f.recipe = cases[k].recipe;
		f.machine = cases[k].machine;
		f.q = cases[k].q;
		f.published = cases[k].published;
		want[0] = '\0';
		for (i = 0; cases[k].want[i] >= 0; i++)
			used += (size_t)snprintf(want + used, sizeof(want) - used, "%s%lld",
			    i ? " " : "", (long long)id[cases[k].want[i]]);
		page(s, &f, ids, sizeof(ids), &next);
		if (strcmp(ids, want) != 0)
			fprintf(stderr, "filter case %zu\n", k);
		T_EQ_STR(ids, want);
	}
	/* the id's text matches too */
	memset(&f, 0, sizeof(f));
	snprintf(q, sizeof(q), "%lld", (long long)id[3]);
	f.q = q;
	T_EQ_INT(store_jobs_list(s, &f, &js, &n, &next), 0);
	T_CHECK(n >= 1 && js != NULL && js[n - 1].id == id[3]);
	store_jobs_free(js, n);

	/* out of range: refused, nothing returned */
	memset(&f, 0, sizeof(f));
	f.limit = BF_MAX_JOBS_PAGE + 1;
	T_EQ_INT(store_jobs_list(s, &f, &js, &n, &next), BF_ERR_INVALID);
	T_CHECK(js == NULL && n == 0);
	f.limit = 0;
	f.states = 1u << STORE_JOB_NSTATES;
	T_EQ_INT(store_jobs_list(s, &f, &js, &n, &next), BF_ERR_INVALID);
	f.states = 0;
	f.before = -1;
	T_EQ_INT(store_jobs_list(s, &f, &js, &n, &next), BF_ERR_INVALID);
	f.before = 0;
	memset(q, 'a', sizeof(q) - 1);
	q[sizeof(q) - 1] = '\0';
	f.q = q;
	T_EQ_INT(store_jobs_list(s, &f, &js, &n, &next), BF_ERR_INVALID);
	T_EQ_INT(store_jobs_list(s, NULL, &js, &n, &next), BF_ERR_INVALID);
	T_EQ_INT(store_job_get(s, 9999, &js), BF_ERR_NOTFOUND);
	T_CHECK(js == NULL);
	store_close(s);
}

/* Five reproductions of three jobs, listed two at a time. */
static void
test_repro_list(void)
{
	static const int job_of[] = { 0, 1, 1, 2, 0 };
	struct store_repro_row *rows = NULL;
	struct store *s = open_fresh("repro.db");
	int64_t jobs[3], ids[5], before = 0;
	size_t n = 0, i, seen = 0;
	int more = 0, pages = 0;
	char info[64];

	if (s == NULL)
		return;
	for (i = 0; i < 3; i++)
		jobs[i] = add_job(s, "c", NULL, i + 1, 2);
	T_EQ_INT(store_job_cancel(s, jobs[2]), 0);
	for (i = 0; i < 5; i++) {
		snprintf(info, sizeof(info), "{\"mode\": \"%s\"}", i == 3 ? "compare" : "rerun");
		T_EQ_INT(store_repro_add(s, jobs[job_of[i]], "{}", "ab12", i == 1 ? "https://lab/x" :
		    NULL, 2.5, info, &ids[i]), 0);
	}
	/* pages of two: 5 4 | 3 2 | 1, each below the last one's id */
	do {
		T_EQ_INT(store_repro_list(s, before, 2, &rows, &n, &more), 0);
		for (i = 0; i < n; i++, seen++) {
			size_t k = 4 - seen;

			T_EQ_INT(rows[i].id, ids[k]);
			T_EQ_INT(rows[i].job_id, jobs[job_of[k]]);
			T_EQ_INT(rows[i].runs_total, (job_of[k] + 1) * 2);
			T_EQ_STR(rows[i].recipe, "demo");
			T_EQ_STR(rows[i].job_state, job_of[k] == 2 ? "cancelled" : "queued");
			T_CHECK((rows[i].source != NULL) == (k == 1));
			T_CHECK(strstr(rows[i].info, k == 3 ? "compare" : "rerun") != NULL);
			T_NEAR(rows[i].delta_pct, 2.5, 0);
		}
		if (n > 0)
			before = rows[n - 1].id;
		store_repro_rows_free(rows, n);
		rows = NULL;
		pages++;
	} while (more && pages < 10);
	T_EQ_INT(pages, 3);
	T_EQ_INT(seen, 5);
	/* one page of all; none below the oldest; a bad cursor refused */
	T_EQ_INT(store_repro_list(s, 0, 0, &rows, &n, &more), 0);
	T_EQ_INT(n, 5);
	T_EQ_INT(more, 0);
	store_repro_rows_free(rows, n);
	T_EQ_INT(store_repro_list(s, ids[0], 10, &rows, &n, &more), 0);
	T_EQ_INT(n, 0);
	T_EQ_INT(more, 0);
	store_repro_rows_free(rows, n);
	T_EQ_INT(store_repro_list(s, -1, 10, &rows, &n, &more), BF_ERR_INVALID);
	store_close(s);
}

int
main(void)
{
	static const char *const dbs[] = { "counts.db", "filter.db", "repro.db" };

	if (fix_where_init(&where, "store-jobs") != 0)
		return 1;
	test_counters();
	test_filters();
	test_repro_list();
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
