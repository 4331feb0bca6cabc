/*
 * coord_test_store_spread.c: machines.spread (job.h) in the store and the
 * claim, on SQLite or (BF_TEST_PG_URL, unit.coord_test_store_spread@pg)
 * PostgreSQL. The job option refuses bad values naming machines.spread;
 * schema step 15 (r17's step, numbered 16 in its brief) migrates a store
 * of step 14 with every sample intact and its jobs "any"; "pin" runs
 * every run of a job on the machine that claimed its first, recorded in
 * the job row, while another job still goes to any machine; "block"
 * plans one run set per machine and each machine claims only its own.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api-view.h"
#include "job.h"
#include "recipes.h"
#include "store_fixture.h"

static struct recipes *rs;

/* Bad spreads are refused naming the field; block refuses adaptive. */
static void
test_parse(void)
{
	static const struct {
		const char *machines, *reps, *msg;
	} bad[] = {
		{ "{\"class\":\"demo\",\"spread\":\"bogus\"}", "{}", "is not one of any, pin, block" },
		{ "{\"class\":\"demo\",\"spread\":\"\"}", "{}", "must not be empty" },
		{ "{\"class\":\"demo\",\"spread\":\"PIN\"}", "{}", "is not one of any, pin, block" },
		{ "{\"class\":\"demo\",\"spread\":7}", "{}", "" },
		{ "{\"class\":\"demo\",\"spread\":null}", "{}", "" },
		{ "{\"class\":\"demo\",\"spread\":[\"pin\"]}", "{}", "" },
		{ "{\"class\":\"demo\",\"spread\":\"block\"}", "{\"target_ci_pct\":1}",
		    "does not combine with adaptive" },
	};
	static const struct {
		const char *spread;
		enum job_spread want;
	} good[] = {
		{ "", JOB_SPREAD_ANY }, { ",\"spread\":\"any\"", JOB_SPREAD_ANY },
		{ ",\"spread\":\"pin\"", JOB_SPREAD_PIN }, { ",\"spread\":\"block\"", JOB_SPREAD_BLOCK },
	};
	struct job_spec *job = NULL;
	struct bf_diag d;
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"recipe\":\"cpu-loop\",\"machines\":%s,"
		    "\"repetitions\":%s}", bad[i].machines, bad[i].reps);
		bf_diag_clear(&d);
		T_EQ_INT(job_parse(text, strlen(text), &job, &d), BF_ERR_INVALID);
		T_EQ_STR(d.field, "machines.spread");
		T_CONTAINS(d.msg, bad[i].msg);
		job_free(job);
		job = NULL;
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":"
		    "\"demo\"%s}}", good[i].spread);
		T_EQ_INT(job_parse(text, strlen(text), &job, &d), 0);
		T_EQ_INT(job != NULL ? (int)job->spread : -1, (int)good[i].want);
		job_free(job);
		job = NULL;
	}
	T_EQ_STR(job_spread_name(JOB_SPREAD_BLOCK), "block");
	T_EQ_STR(job_spread_name((enum job_spread)9), "any");
}

/* Submit text as POST /jobs stores it; block: a run set per name. */
static int64_t
submit(struct store *s, const char *text, const char *const *block, size_t nblock)
{
	struct job_spec *job = NULL;
	const struct recipe *rec;
	struct plan *p = NULL;
	struct bf_diag d;
	int64_t id = -1;

	bf_diag_clear(&d);
	T_EQ_INT(job_parse(text, strlen(text), &job, &d), 0);
	if (job == NULL || (rec = recipes_get(rs, job->recipe)) == NULL) {
		T_CHECK(0);
		goto out;
	}
	T_EQ_INT(job_validate(job, rec, NULL, &d), 0);
	T_EQ_INT(plan_job(job, rec, &p, &d), 0);
	if (p == NULL)
		goto out;
	if (block != NULL)
		T_EQ_INT(plan_block(p, block, nblock, &d), 0);
	T_EQ_INT(store_job_create_plan(s, job, rec, p, job->machine_class, NULL, 0, &id), 0);
out:
	plan_free(p);
	job_free(job);
	return id;
}

/* Claim one run on machine and finish it done with one sample; its job
 * id, or 0 when nothing was there for the machine. */
static int64_t
claim_one(struct store *s, const char *machine, int64_t *run)
{
	struct store_sample sm[1] = { { "wall_s", 1.5, "s" } };
	struct store_claim *c = NULL;
	int64_t job = 0;

	T_EQ_INT(store_run_claim(s, machine, "demo", 60, &c), 0);
	if (c == NULL)
		return 0;
	job = c->job_id;
	if (run != NULL)
		*run = c->run_id;
	sm[0].value = 1.0 + (double)c->run_id / 64;
	T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 1), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	store_claim_free(c);
	return job;
}

static const char *
job_str(struct store *s, int64_t id, const char *key, char *buf, size_t bufsz)
{
	json_t *j = NULL;
	const char *v;

	buf[0] = '\0';
	T_EQ_INT(api_view_job_get(s, id, &j), 0);
	v = json_string_value(json_object_get(j, key));
	snprintf(buf, bufsz, "%s", v != NULL ? v : json_is_null(json_object_get(j, key)) ?
	    "(null)" : "(absent)");
	json_decref(j);
	return buf;
}

/* Step 15 on a store of step 14: samples byte-identical, jobs "any". */
static void
test_migrate(void)
{
	struct store *s;
	json_t *before = NULL, *after = NULL;
	char *bt = NULL, *at = NULL, b[64];
	int64_t job;

	if ((s = open_fresh("spread.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	job = add_job(s, "demo", NULL, 2, 1);
	T_EQ_INT(claim_one(s, "d1", NULL), job);
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	s = NULL;
	exec_on("spread.db", FIX_UNDO_STEP15);
	force_version("spread.db", 14);
	T_EQ_INT(store_open(target("spread.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	bt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	at = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
	T_CHECK(bt != NULL && at != NULL && strstr(at, "wall_s") != NULL);
	if (bt != NULL && at != NULL)
		T_EQ_STR(at, bt);
	T_EQ_STR(job_str(s, job, "spread", b, sizeof(b)), "any");
	T_EQ_STR(job_str(s, job, "pinned_machine", b, sizeof(b)), "(null)");
	/* the old job's other run is claimed as it always was */
	T_EQ_INT(claim_one(s, "d1", NULL), job);
out:
	free(bt);
	free(at);
	json_decref(before);
	json_decref(after);
	store_close(s);
}

static void
test_pin(void)
{
	struct store *s;
	char b[64];
	int64_t pin, any, run;
	int i;

	if ((s = open_fresh("pin.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	T_EQ_INT(add_machine(s, "d2", "demo"), 0);
	pin = submit(s, "{\"recipe\":\"cpu-loop\",\"preset\":\"test\",\"machines\":"
	    "{\"class\":\"demo\",\"spread\":\"pin\"},\"matrix\":{\"loops\":[1000,2000]},"
	    "\"repetitions\":{\"boots\":2,\"iterations\":1}}", NULL, 0);
	T_EQ_STR(job_str(s, pin, "spread", b, sizeof(b)), "pin");
	T_EQ_STR(job_str(s, pin, "pinned_machine", b, sizeof(b)), "(null)");
	/* d2 claims first: the job is d2's from now on */
	T_EQ_INT(claim_one(s, "d2", NULL), pin);
	T_EQ_STR(job_str(s, pin, "pinned_machine", b, sizeof(b)), "d2");
	T_EQ_INT(claim_one(s, "d1", NULL), 0);
	/* a later "any" job is not held up by the pinned one */
	any = submit(s, "{\"recipe\":\"cpu-loop\",\"preset\":\"test\",\"machines\":"
	    "{\"class\":\"demo\"},\"repetitions\":{\"iterations\":1}}", NULL, 0);
	T_EQ_INT(claim_one(s, "d1", NULL), any);
	for (i = 0; i < 3; i++) {
		T_EQ_INT(claim_one(s, "d1", NULL), 0);
		T_EQ_INT(claim_one(s, "d2", &run), pin);
	}
	T_EQ_INT(claim_one(s, "d2", NULL), 0);
	{
		json_t *runs = NULL, *r;
		size_t k, on_d2 = 0;

		T_EQ_INT(api_view_job_runs_get(s, pin, 1, &runs), 0);
		json_array_foreach(json_object_get(runs, "runs"), k, r)
			on_d2 += json_string_value(json_object_get(r, "machine")) != NULL &&
			    strcmp(json_string_value(json_object_get(r, "machine")), "d2") == 0;
		T_EQ_INT(on_d2, 4);
		json_decref(runs);
	}
	T_EQ_STR(job_str(s, pin, "state", b, sizeof(b)), "done");
	store_close(s);
}

static void
test_block(void)
{
	static const char *const names[] = { "d1", "d2" };
	struct store *s;
	json_t *runs = NULL, *r;
	char b[64], seen[256];
	int64_t blk;
	size_t k, mine = 0;
	int i;

	if ((s = open_fresh("block.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	T_EQ_INT(add_machine(s, "d2", "demo"), 0);
	blk = submit(s, "{\"recipe\":\"cpu-loop\",\"preset\":\"test\",\"machines\":"
	    "{\"class\":\"demo\",\"spread\":\"block\"},\"matrix\":{\"loops\":[1000,2000]},"
	    "\"repetitions\":{\"boots\":2,\"iterations\":1}}", names, 2);
	T_EQ_STR(job_str(s, blk, "spread", b, sizeof(b)), "block");
	T_EQ_INT(api_view_job_runs_get(s, blk, 1, &runs), 0);
	T_EQ_INT(json_array_size(json_object_get(runs, "runs")), 8);
	json_decref(runs);
	runs = NULL;
	/* d1 drains its own set and nothing of d2's */
	for (i = 0; i < 4; i++)
		T_EQ_INT(claim_one(s, "d1", NULL), blk);
	T_EQ_INT(claim_one(s, "d1", NULL), 0);
	for (i = 0; i < 4; i++)
		T_EQ_INT(claim_one(s, "d2", NULL), blk);
	T_EQ_INT(claim_one(s, "d2", NULL), 0);
	T_EQ_INT(api_view_job_runs_get(s, blk, 1, &runs), 0);
	seen[0] = '\0';
	json_array_foreach(json_object_get(runs, "runs"), k, r) {
		const char *m = json_string_value(json_object_get(r, "machine"));
		const char *q = json_string_value(json_object_get(r, "req_machine"));

		mine += m != NULL && q != NULL && strcmp(m, q) == 0;
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%s/c%lld",
		    k ? " " : "", q ? q : "-",
		    (long long)json_integer_value(json_object_get(r, "cell_index")));
	}
	T_EQ_INT(mine, 8);	/* every run ran on the machine it was for */
	/* every cell, both boots, on each machine (runs by cell, boot) */
	T_EQ_STR(seen, "d1/c0 d2/c0 d1/c0 d2/c0 d1/c1 d2/c1 d1/c1 d2/c1");
	T_EQ_STR(job_str(s, blk, "state", b, sizeof(b)), "done");
	json_decref(runs);
	store_close(s);
}

/* plan_block's own rules: every run once per machine, caps, no twice. */
static void
test_plan_block(void)
{
	static const char *const names[] = { "a", "b", "c" };
	struct plan *p = calloc(1, sizeof(*p));
	struct bf_diag d;
	size_t i;

	if (p == NULL)
		return;
	p->nruns = 2;
	p->runs = calloc(2, sizeof(*p->runs));
	if (p->runs == NULL)
		goto out;
	p->runs[0].cell = 0;
	p->runs[1].cell = 1;
	p->runs[1].order = 7;
	T_EQ_INT(plan_block(p, names, 3, &d), 0);
	T_EQ_INT(p->nruns, 6);
	T_EQ_INT(p->nmachines, 3);
	for (i = 0; i < p->nruns; i++) {
		T_EQ_INT(p->runs[i].machine, i / 2);
		T_EQ_INT(p->runs[i].cell, i % 2);
		T_EQ_INT(p->runs[i].order, i % 2 ? 7 : 0);
	}
	T_EQ_STR(p->machines[2], "c");
	T_EQ_INT(plan_block(p, names, 3, &d), BF_ERR_INVALID);	/* once only */
	plan_free(p);
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return;
	p->nruns = BF_MAX_CELLS / 2 + 1;
	p->runs = calloc(p->nruns, sizeof(*p->runs));
	bf_diag_clear(&d);
	T_EQ_INT(plan_block(p, names, 2, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "machines.spread");
	T_EQ_INT(p->nruns, BF_MAX_CELLS / 2 + 1);	/* unchanged */
	T_CHECK(p->machines == NULL);
out:
	plan_free(p);
}

int
main(void)
{
	static const char *const dbs[] = { "spread.db", "pin.db", "block.db" };
	const char *src = getenv("BF_SRC");
	char path[4096];
	struct bf_diag d;

	if (fix_where_init(&where, "store-spread") != 0)
		return 1;
	snprintf(path, sizeof(path), "%s/recipes", src != NULL ? src : ".");
	bf_diag_clear(&d);
	if (recipes_load_dir(path, &rs, &d) != 0) {
		fprintf(stderr, "recipes: %s\n", d.msg);
		return 1;
	}
	test_parse();
	test_plan_block();
	test_migrate();
	test_pin();
	test_block();
	recipes_free(rs);
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
