/*
 * coord_test_store_bisect.c: bisections in the store (schema step 17,
 * store-bisect.c) on SQLite or (BF_TEST_PG_URL, @pg) PostgreSQL. A store
 * of step 16 migrates with every sample intact; a step's row and its job
 * are one transaction: the same step twice makes no second job, a
 * cancelled bisection makes none; a verdict lands only on a pending row,
 * and only while the bisection runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api-view.h"
#include "job.h"
#include "plan.h"
#include "recipes.h"
#include "store_fixture.h"

static struct recipes *rs;

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* Step 17 on a store of step 16: the samples byte-identical; bisections work. */
static void
test_migrate(void)
{
	struct store_sample sm[1] = { { "wall_s", 0.125, "s" } };
	struct store_claim *c = NULL;
	struct store_bisect *b = NULL;
	struct store *s;
	json_t *before = NULL, *after = NULL;
	char *bt = NULL, *at = NULL;
	int64_t job, id = 0;

	if ((s = open_fresh("bis17.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	job = add_job(s, "demo", NULL, 2, 1);
	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
	if (c != NULL) {
		T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 1), 0);
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	}
	store_claim_free(c);
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	s = NULL;
	exec_on("bis17.db", FIX_UNDO_STEP17);
	force_version("bis17.db", 16);
	T_EQ_INT(store_open(target("bis17.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	bt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	at = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
	T_CHECK(bt != NULL && at != NULL && strstr(at, "0.125") != NULL);
	if (bt != NULL && at != NULL)
		T_EQ_STR(at, bt);
	T_EQ_INT(store_bisect_add(s, "{\"good\":\"v1\"}", &id), 0);
	T_EQ_INT(store_bisect_get(s, id, &b), 0);
	if (b != NULL) {
		T_EQ_STR(b->state, "running");
		T_CHECK(b->commits == NULL);
		T_EQ_STR(b->spec, "{\"good\":\"v1\"}");
	}
out:
	store_bisect_free(b);
	free(bt);
	free(at);
	json_decref(before);
	json_decref(after);
	store_close(s);
}

/* A planned job of recipe cpu-loop on machine class demo. */
static int
plan_demo(struct job_spec **job, const struct recipe **rec, struct plan **p)
{
	static const char text[] = "{\"recipe\":\"cpu-loop\",\"preset\":\"test\","
	    "\"machines\":{\"class\":\"demo\"},\"repetitions\":{\"boots\":2,\"iterations\":1}}";
	struct bf_diag d;

	*job = NULL;
	*p = NULL;
	if (job_parse(text, strlen(text), job, &d) != 0 ||
	    (*rec = recipes_get(rs, "cpu-loop")) == NULL || plan_job(*job, *rec, p, &d) != 0)
		return -1;
	return 0;
}

static size_t
jobs_count(struct store *s)
{
	struct store_job *j = NULL;
	size_t n = 0;
	int64_t id;

	for (id = 1; id < 100; id++) {
		if (store_job_get(s, id, &j) == 0)
			n++;
		store_job_free(j);
		j = NULL;
	}
	return n;
}

static void
test_steps(void)
{
	struct store_bisect_upd u = { .state = "running", .commits = "{\"list\":[]}", .lo = -1,
	    .hi = 3, .machine_s = 12.5 };
	struct store_bisect_step *st = NULL;
	struct store_bisect *b = NULL, *list = NULL;
	struct job_spec *job = NULL;
	const struct recipe *rec = NULL;
	struct plan *p = NULL;
	struct store *s;
	int64_t id = 0, id2 = 0, jid = 0, jid2 = 0, *run = NULL;
	size_t n = 0;

	if ((s = open_fresh("bisteps.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	T_EQ_INT(plan_demo(&job, &rec, &p), 0);
	if (p == NULL)
		goto out;
	T_EQ_INT(store_bisect_add(s, "{}", &id), 0);
	T_EQ_INT(store_bisect_add(s, "{}", &id2), 0);
	T_EQ_INT(store_bisect_step_job(s, id, 0, 0, 1, SHA_A, job, rec, p, "demo", NULL, &jid),
	    0);
	T_CHECK(jid > 0);
	T_EQ_INT(jobs_count(s), 1);
	/* the same step again (a driver restarted, or another coordinator):
	 * refused whole, no second job */
	T_EQ_INT(store_bisect_step_job(s, id, 0, 0, 1, SHA_A, job, rec, p, "demo", NULL, &jid2),
	    BF_ERR_EXISTS);
	T_EQ_INT(jobs_count(s), 1);
	/* not a sha: nothing */
	T_EQ_INT(store_bisect_step_job(s, id, 1, 0, 1, "v1.0", job, rec, p, "demo", NULL, &jid2),
	    BF_ERR_INVALID);
	T_EQ_INT(store_bisect_steps(s, id, &st, &n), 0);
	T_EQ_INT(n, 1);
	if (n == 1) {
		T_EQ_STR(st[0].verdict, "pending");
		T_EQ_STR(st[0].sha, SHA_A);
		T_EQ_INT(st[0].job_id, jid);
		T_EQ_INT(st[0].idx, 1);
	}
	store_bisect_steps_free(st, n);
	st = NULL;
	/* a verdict on the pending row with the row's new values, once */
	T_EQ_INT(store_bisect_advance(s, id, 0, 0, "bad", "{\"n\":1}", &u), 0);
	T_EQ_INT(store_bisect_advance(s, id, 0, 0, "good", NULL, &u), BF_ERR_STATE);
	T_EQ_INT(store_bisect_advance(s, id, 0, 0, "maybe", NULL, &u), BF_ERR_INVALID);
	T_EQ_INT(store_bisect_steps(s, id, &st, &n), 0);
	if (n == 1) {
		T_EQ_STR(st[0].verdict, "bad");
		T_EQ_STR(st[0].stats, "{\"n\":1}");
	}
	store_bisect_steps_free(st, n);
	st = NULL;
	T_EQ_INT(store_bisect_get(s, id, &b), 0);
	if (b != NULL) {
		T_EQ_INT(b->hi, 3);
		T_EQ_INT(b->lo, -1);
		T_CHECK(b->machine_s == 12.5);
		T_EQ_STR(b->commits, "{\"list\":[]}");
		T_CHECK(b->finished_at == 0);
	}
	store_bisect_free(b);
	b = NULL;
	T_EQ_INT(store_bisect_running(s, &run, &n), 0);
	T_EQ_INT(n, 2);
	free(run);
	run = NULL;
	/* cancelled: no step's job can be made for it, no verdict lands */
	T_EQ_INT(store_bisect_cancel(s, id2, "by a test"), 0);
	T_EQ_INT(store_bisect_cancel(s, id2, "again"), BF_ERR_STATE);
	T_EQ_INT(store_bisect_cancel(s, 999, "none"), BF_ERR_NOTFOUND);
	T_EQ_INT(store_bisect_step_job(s, id2, 0, 0, 0, SHA_B, job, rec, p, "demo", NULL,
	    &jid2), BF_ERR_STATE);
	T_EQ_INT(jobs_count(s), 1);
	T_EQ_INT(store_bisect_advance(s, id2, -1, 0, NULL, NULL, &u), BF_ERR_STATE);
	T_EQ_INT(store_bisect_get(s, id2, &b), 0);
	if (b != NULL) {
		T_EQ_STR(b->state, "cancelled");
		T_EQ_STR(b->message, "by a test");
		T_CHECK(b->finished_at > 0);
	}
	/* done with its first bad commit */
	u.state = "done";
	u.first_bad = SHA_A;
	u.message = "mm: the slow path";
	T_EQ_INT(store_bisect_advance(s, id, -1, 0, NULL, NULL, &u), 0);
	T_EQ_INT(store_bisect_running(s, &run, &n), 0);
	T_EQ_INT(n, 0);
	T_EQ_INT(store_bisect_list(s, 10, &list, &n), 0);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_EQ_INT(list[0].id, id2);	/* newest first */
		T_EQ_STR(list[1].state, "done");
		T_EQ_STR(list[1].first_bad, SHA_A);
		T_EQ_STR(list[1].message, "mm: the slow path");
	}
	/* a first_bad that is not a sha, an unknown state: refused */
	u.first_bad = "HEAD";
	T_EQ_INT(store_bisect_advance(s, id, -1, 0, NULL, NULL, &u), BF_ERR_INVALID);
	u.first_bad = NULL;
	u.state = "paused";
	T_EQ_INT(store_bisect_advance(s, id, -1, 0, NULL, NULL, &u), BF_ERR_INVALID);
out:
	free(run);
	store_bisects_free(list, n);
	store_bisect_free(b);
	plan_free(p);
	job_free(job);
	store_close(s);
}

int
main(void)
{
	static const char *const dbs[] = { "bis17.db", "bisteps.db" };
	const char *src = getenv("BF_SRC");
	char path[4096];
	struct bf_diag d;

	if (fix_where_init(&where, "store-bisect") != 0)
		return 1;
	snprintf(path, sizeof(path), "%s/recipes", src != NULL ? src : ".");
	bf_diag_clear(&d);
	if (recipes_load_dir(path, &rs, &d) != 0) {
		fprintf(stderr, "recipes: %s\n", d.msg);
		return 1;
	}
	test_migrate();
	test_steps();
	recipes_free(rs);
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
