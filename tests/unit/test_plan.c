/*
 * test_plan.c: the plan of a job (runs, their claim order, iterations,
 * warm-up, timeout) and the agent step of a run, table-driven, with
 * hostile numbers (out of range, negative, huge), a hostile parameter
 * value, and the claim-rank arithmetic the store relies on.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "err.h"
#include "job.h"
#include "plan.h"
#include "recipe.h"
#include "t.h"

static const char recipe_text[] =
    "{\"name\": \"cpu-loop\", \"timeout_s\": 30,"
    " \"params\": {\"loops\": {\"type\": \"int\", \"min\": 1, \"max\": 1000000000,"
    " \"default\": 1000000},"
    " \"mode\": {\"type\": \"enum\", \"values\": [\"a\", \"b\"], \"default\": \"a\"},"
    " \"msg\": {\"type\": \"string\", \"max_len\": 256, \"default\": \"hi\","
    " \"pattern\": \".*\"}},"
    " \"command\": [\"@agent\", \"work\", \"echo\", \"{msg}\", \"--loops={loops}\"]}";

static struct recipe *rec;

static struct job_spec *
job_of(const char *text)
{
	struct job_spec *job = NULL;
	struct bf_diag d;

	bf_diag_clear(&d);
	if (job_parse(text, strlen(text), &job, &d) != 0 ||
	    job_validate(job, rec, NULL, &d) != 0) {
		fprintf(stderr, "job %s: %s\n", text, d.msg);
		job_free(job);
		return NULL;
	}
	return job;
}

/* The rank arithmetic, and that it refuses what no run can have. */
static void
test_run_order(void)
{
	static const struct {
		enum plan_order order;
		size_t cell;
		int boot;
		int64_t want;
	} cases[] = {
		{ .order = PLAN_INTERLEAVED, .cell = 0, .boot = 0, .want = 0 },
		{ .order = PLAN_INTERLEAVED, .cell = 3, .boot = 0, .want = 3 },
		{ .order = PLAN_INTERLEAVED, .cell = 0, .boot = 1, .want = 4096 },
		{ .order = PLAN_INTERLEAVED, .cell = 4095, .boot = 99, .want = 99 * 4096 + 4095 },
		{ .order = PLAN_SEQUENTIAL, .cell = 0, .boot = 1, .want = 4096 },
		{ .order = PLAN_SEQUENTIAL, .cell = 1, .boot = 0, .want = 128 * 4096 },
		{ .order = PLAN_SEQUENTIAL, .cell = 4095, .boot = 99,
		    .want = 4095LL * 128 * 4096 + 99 * 4096 },
		/* hostile: no such cell or boot */
		{ .order = PLAN_INTERLEAVED, .cell = BF_MAX_CELLS, .boot = 0, .want = -1 },
		{ .order = PLAN_SEQUENTIAL, .cell = SIZE_MAX, .boot = 0, .want = -1 },
		{ .order = PLAN_INTERLEAVED, .cell = 0, .boot = -1, .want = -1 },
		{ .order = PLAN_SEQUENTIAL, .cell = 0, .boot = BF_MAX_BOOTS, .want = -1 },
		{ .order = PLAN_INTERLEAVED, .cell = 0, .boot = INT_MAX, .want = -1 },
		{ .order = PLAN_SEQUENTIAL, .cell = 0, .boot = INT_MIN, .want = -1 },
	};
	size_t i;
	int b, o;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		T_EQ_INT(plan_run_order(cases[i].order, cases[i].cell, cases[i].boot),
		    cases[i].want);
	/* the store's rule: one boot later is BOOT_STEP more, in either order;
	 * the migration writes these literals */
	T_EQ_INT(PLAN_ORDER_BOOT_STEP, 4096);
	T_EQ_INT(PLAN_ORDER_CELL_STEP, 524288);
	for (o = PLAN_INTERLEAVED; o <= PLAN_SEQUENTIAL; o++)
		for (b = 0; b + 1 < BF_MAX_BOOTS; b += 7) {
			T_EQ_INT(plan_run_order((enum plan_order)o, 17, b + 1) -
			    plan_run_order((enum plan_order)o, 17, b), PLAN_ORDER_BOOT_STEP);
			/* the largest rank still fits the INTEGER columns of both engines */
			T_CHECK(plan_run_order((enum plan_order)o, BF_MAX_CELLS - 1,
			    BF_MAX_BOOTS - 1) < INT32_MAX);
		}
}

/* Which cell and boot the claim takes k-th, from the plan's ranks. */
static void
claim_sequence(const struct plan *p, char *out, size_t outsz)
{
	size_t i, j, used = 0;
	int64_t last = -1;

	out[0] = '\0';
	for (i = 0; i < p->nruns; i++) {
		const struct plan_run *next = NULL;

		for (j = 0; j < p->nruns; j++)
			if (p->runs[j].order > last && (next == NULL ||
			    p->runs[j].order < next->order))
				next = &p->runs[j];
		if (next == NULL)
			break;
		last = next->order;
		used += (size_t)snprintf(out + used, outsz - used, "%sc%zub%d", i ? " " : "",
		    next->cell, next->boot);
		if (used >= outsz)
			break;
	}
}

static void
test_plan_job(void)
{
	static const struct {
		const char *job;
		size_t ncells, nruns;
		int iterations, warmup;
		enum plan_order order;
		const char *claims;	/* the claim order, or NULL: not checked */
	} cases[] = {
		{ .job = "{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"demo\"}}",
		    .ncells = 1, .nruns = 1, .iterations = 5, .warmup = 0,
		    .order = PLAN_INTERLEAVED, .claims = "c0b0" },
		{ .job = "{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"demo\"},"
		    "\"matrix\":{\"mode\":[\"a\",\"b\"]},\"repetitions\":{\"boots\":2,"
		    "\"iterations\":3,\"warmup\":1}}",
		    .ncells = 2, .nruns = 4, .iterations = 3, .warmup = 1,
		    .order = PLAN_INTERLEAVED, .claims = "c0b0 c1b0 c0b1 c1b1" },
		{ .job = "{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"demo\"},"
		    "\"matrix\":{\"mode\":[\"a\",\"b\"]},\"repetitions\":{\"boots\":2},"
		    "\"order\":\"interleaved\"}",
		    .ncells = 2, .nruns = 4, .iterations = 5, .warmup = 0,
		    .order = PLAN_INTERLEAVED, .claims = "c0b0 c1b0 c0b1 c1b1" },
		{ .job = "{\"recipe\":\"cpu-loop\",\"machines\":{\"names\":[\"h1\"]},"
		    "\"matrix\":{\"mode\":[\"a\",\"b\"]},\"repetitions\":{\"boots\":3,"
		    "\"warmup\":100},\"order\":\"sequential\"}",
		    .ncells = 2, .nruns = 6, .iterations = 5, .warmup = BF_MAX_WARMUP,
		    .order = PLAN_SEQUENTIAL, .claims = "c0b0 c0b1 c0b2 c1b0 c1b1 c1b2" },
		{ .job = "{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"demo\"},"
		    "\"matrix\":{\"loops\":[1,2,3]},\"repetitions\":{\"target_ci_pct\":1,"
		    "\"min_boots\":2,\"max_boots\":5,\"iterations\":7}}",
		    .ncells = 3, .nruns = 6, .iterations = 7, .warmup = 0,
		    .order = PLAN_INTERLEAVED, .claims = "c0b0 c1b0 c2b0 c0b1 c1b1 c2b1" },
	};
	struct job_spec *job;
	struct plan *p;
	struct bf_diag d;
	char seq[256];
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if ((job = job_of(cases[i].job)) == NULL) {
			T_CHECK(!"job parses");
			continue;
		}
		p = NULL;
		bf_diag_clear(&d);
		T_EQ_INT(plan_job(job, rec, &p, &d), 0);
		if (p == NULL) {
			job_free(job);
			continue;
		}
		T_EQ_INT(p->ncells, cases[i].ncells);
		T_EQ_INT(p->nruns, cases[i].nruns);
		T_EQ_INT(p->order, cases[i].order);
		T_CHECK(p->machine_class == job->machine_class);
		T_EQ_INT(p->nmachine_names, job->nmachine_names);
		for (k = 0; k < p->nruns; k++) {
			T_EQ_INT(p->runs[k].iterations, cases[i].iterations);
			T_EQ_INT(p->runs[k].warmup, cases[i].warmup);
			T_EQ_INT(p->runs[k].timeout_s, 30);
			/* listed boot-major, as rows were always stored */
			T_EQ_INT(p->runs[k].cell, k % p->ncells);
			T_EQ_INT(p->runs[k].boot, (int)(k / p->ncells));
			T_EQ_INT(p->runs[k].order, plan_run_order(p->order, p->runs[k].cell,
			    p->runs[k].boot));
		}
		claim_sequence(p, seq, sizeof(seq));
		if (cases[i].claims != NULL)
			T_EQ_STR(seq, cases[i].claims);
		plan_free(p);
		job_free(job);
	}
	plan_free(NULL);
}

/* Numbers no job_parse would let through, put into the struct by hand
 * (a job_spec is also built from stored JSON): plan_job refuses them. */
static void
test_plan_hostile(void)
{
	static const struct {
		int iterations, warmup, boots;
		int64_t timeout_s;
		const char *field;
	} cases[] = {
		{ .iterations = 0, .warmup = 0, .boots = 1, .timeout_s = 30, .field = "repetitions" },
		{ .iterations = BF_MAX_ITERATIONS + 1, .warmup = 0, .boots = 1, .timeout_s = 30,
		    .field = "repetitions" },
		{ .iterations = 5, .warmup = -1, .boots = 1, .timeout_s = 30, .field = "repetitions" },
		{ .iterations = 5, .warmup = BF_MAX_WARMUP + 1, .boots = 1, .timeout_s = 30,
		    .field = "repetitions" },
		{ .iterations = 5, .warmup = 0, .boots = 1, .timeout_s = 0, .field = "repetitions" },
		{ .iterations = 5, .warmup = 0, .boots = 1, .timeout_s = INT64_MAX,
		    .field = "repetitions" },
		{ .iterations = 5, .warmup = 0, .boots = 0, .timeout_s = 30,
		    .field = "repetitions.boots" },
		{ .iterations = 5, .warmup = 0, .boots = -3, .timeout_s = 30,
		    .field = "repetitions.boots" },
		{ .iterations = 5, .warmup = 0, .boots = BF_MAX_BOOTS + 1, .timeout_s = 30,
		    .field = "repetitions.boots" },
		{ .iterations = 5, .warmup = 0, .boots = INT_MAX, .timeout_s = 30,
		    .field = "repetitions.boots" },
	};
	struct job_spec *job;
	struct plan *p;
	struct bf_diag d;
	int64_t tmo = rec->timeout_s;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if ((job = job_of("{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"x\"}}")) ==
		    NULL)
			continue;
		job->iterations = cases[i].iterations;
		job->warmup = cases[i].warmup;
		job->boots = cases[i].boots;
		rec->timeout_s = cases[i].timeout_s;
		p = (struct plan *)&d;	/* set to NULL on failure */
		bf_diag_clear(&d);
		T_EQ_INT(plan_job(job, rec, &p, &d), BF_ERR_INVALID);
		T_CHECK(p == NULL);
		T_EQ_STR(d.field, cases[i].field);
		rec->timeout_s = tmo;
		job_free(job);
	}

	/* 64 x 64 cells is the cap; a second boot is one run too many */
	{
		struct buf b;
		int k;

		buf_init(&b, 1 << 16);
		T_EQ_INT(buf_puts(&b, "{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"x\"},"
		    "\"repetitions\":{\"boots\":2},\"matrix\":{\"loops\":["), 0);
		for (k = 1; k <= 64; k++)
			T_EQ_INT(buf_printf(&b, "%s%d", k > 1 ? "," : "", k), 0);
		T_EQ_INT(buf_puts(&b, "],\"msg\":["), 0);
		for (k = 1; k <= 64; k++)
			T_EQ_INT(buf_printf(&b, "%s\"m%d\"", k > 1 ? "," : "", k), 0);
		T_EQ_INT(buf_puts(&b, "]}}"), 0);
		if ((job = job_of(b.data)) != NULL) {
			p = NULL;
			bf_diag_clear(&d);
			T_EQ_INT(plan_job(job, rec, &p, &d), BF_ERR_INVALID);
			T_CHECK(p == NULL);
			T_EQ_STR(d.field, "repetitions.boots");
			T_CONTAINS(d.msg, "2 boots x 4096 cells");
			job->boots = 1;
			T_EQ_INT(plan_job(job, rec, &p, &d), 0);
			T_EQ_INT(p != NULL ? p->nruns : 0, BF_MAX_CELLS);
			plan_free(p);
			job_free(job);
		}
		buf_free(&b);
	}
}

/* plan_run_of for boots past the planned ones (adaptive), and hostile. */
static void
test_run_of(void)
{
	struct job_spec *job = job_of("{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"x\"},"
	    "\"repetitions\":{\"target_ci_pct\":1,\"min_boots\":2,\"max_boots\":100,"
	    "\"iterations\":4,\"warmup\":2}}");
	struct plan_run pr;

	if (job == NULL)
		return;
	T_EQ_INT(plan_run_of(job, rec, 0, 99, &pr), 0);
	T_EQ_INT(pr.boot, 99);
	T_EQ_INT(pr.order, 99 * PLAN_ORDER_BOOT_STEP);
	T_EQ_INT(pr.iterations, 4);
	T_EQ_INT(pr.warmup, 2);
	T_EQ_INT(pr.timeout_s, 30);
	T_EQ_INT(plan_run_of(job, rec, 0, 100, &pr), BF_ERR_INVALID);
	T_EQ_INT(plan_run_of(job, rec, 0, -1, &pr), BF_ERR_INVALID);
	T_EQ_INT(plan_run_of(job, rec, BF_MAX_CELLS, 0, &pr), BF_ERR_INVALID);
	job->max_boots = 3;
	T_EQ_INT(plan_run_of(job, rec, 0, 2, &pr), 0);
	T_EQ_INT(plan_run_of(job, rec, 0, 3, &pr), BF_ERR_INVALID);
	job_free(job);
	/* a job of fixed boots has only those */
	if ((job = job_of("{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"x\"},"
	    "\"repetitions\":{\"boots\":2}}")) == NULL)
		return;
	T_EQ_INT(plan_run_of(job, rec, 0, 1, &pr), 0);
	T_EQ_INT(plan_run_of(job, rec, 0, 2, &pr), BF_ERR_INVALID);
	job_free(job);
}

static void
test_step(void)
{
	static const struct {
		int iterations, warmup, timeout_s;
		int ok;
	} cases[] = {
		{ .iterations = 3, .warmup = 1, .timeout_s = 30, .ok = 1 },
		{ .iterations = 1, .warmup = 0, .timeout_s = 1, .ok = 1 },
		{ .iterations = BF_MAX_ITERATIONS, .warmup = BF_MAX_WARMUP,
		    .timeout_s = BF_MAX_TIMEOUT_S, .ok = 1 },
		{ .iterations = 0, .warmup = 0, .timeout_s = 30, .ok = 0 },
		{ .iterations = -1, .warmup = 0, .timeout_s = 30, .ok = 0 },
		{ .iterations = BF_MAX_ITERATIONS + 1, .warmup = 0, .timeout_s = 30, .ok = 0 },
		{ .iterations = INT_MAX, .warmup = 0, .timeout_s = 30, .ok = 0 },
		{ .iterations = 3, .warmup = -1, .timeout_s = 30, .ok = 0 },
		{ .iterations = 3, .warmup = BF_MAX_WARMUP + 1, .timeout_s = 30, .ok = 0 },
		{ .iterations = 3, .warmup = INT_MIN, .timeout_s = 30, .ok = 0 },
		{ .iterations = 3, .warmup = 0, .timeout_s = 0, .ok = 0 },
		{ .iterations = 3, .warmup = 0, .timeout_s = BF_MAX_TIMEOUT_S + 1, .ok = 0 },
		{ .iterations = 3, .warmup = 0, .timeout_s = -86400, .ok = 0 },
	};
	struct job_spec *job = job_of("{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"x\"},"
	    "\"bind\":{\"cpus\":\"0-1\"},\"aslr\":false,\"drop_caches\":true,"
	    "\"repetitions\":{\"gap_ms\":250},"
	    "\"profile\":{\"perf\":\"record\",\"freq\":4321}}");
	struct job_spec *plain = job_of("{\"recipe\":\"cpu-loop\","
	    "\"machines\":{\"class\":\"x\"}}");
	json_t *values = json_pack("{s:i,s:s,s:s}", "loops", 7, "mode", "a", "msg",
	    "$(rm -rf /); `id` 'x'");
	json_t *knobs = json_pack("{s:s}", "thp_enabled", "never");
	json_t *empty = json_object(), *notobj = json_string("thp"), *step, *argv;
	struct plan_run run;
	struct plan_step_in in;
	struct bf_diag d;
	size_t i;

	if (job == NULL || plain == NULL || values == NULL || knobs == NULL)
		goto out;
	memset(&in, 0, sizeof(in));
	in.run_id = 42;
	in.run = &run;
	in.job = job;
	in.recipe = rec;
	in.values = values;
	in.knobs = knobs;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&run, 0, sizeof(run));
		run.iterations = cases[i].iterations;
		run.warmup = cases[i].warmup;
		run.timeout_s = cases[i].timeout_s;
		step = NULL;
		bf_diag_clear(&d);
		T_EQ_INT(plan_step(&in, &step, &d), cases[i].ok ? 0 : BF_ERR_INVALID);
		T_CHECK((step != NULL) == cases[i].ok);
		if (!cases[i].ok) {
			T_CONTAINS(d.msg, "run 42");
			continue;
		}
		T_EQ_INT(json_integer_value(json_object_get(step, "run")), 42);
		T_EQ_INT(json_integer_value(json_object_get(step, "iterations")),
		    cases[i].iterations);
		T_EQ_INT(json_integer_value(json_object_get(step, "warmup")), cases[i].warmup);
		T_EQ_INT(json_integer_value(json_object_get(step, "timeout_s")),
		    cases[i].timeout_s);
		T_EQ_STR(json_string_value(json_object_get(json_object_get(step, "env"),
		    "LC_ALL")), "C");
		/* the hostile value is one literal argv element */
		argv = json_object_get(step, "argv");
		T_EQ_INT(json_array_size(argv), 5);
		T_EQ_STR(json_string_value(json_array_get(argv, 3)), "$(rm -rf /); `id` 'x'");
		T_EQ_STR(json_string_value(json_array_get(argv, 4)), "--loops=7");
		T_EQ_STR(json_string_value(json_object_get(json_object_get(step, "knobs"),
		    "thp_enabled")), "never");
		T_EQ_STR(json_string_value(json_object_get(json_object_get(step, "bind"),
		    "cpus")), "0-1");
		T_CHECK(json_is_false(json_object_get(step, "aslr")));
		T_CHECK(json_is_true(json_object_get(step, "drop_caches")));
		T_EQ_INT(json_integer_value(json_object_get(step, "gap_ms")), 250);
		T_EQ_STR(json_string_value(json_object_get(json_object_get(step, "profile"),
		    "perf")), "record");
		T_EQ_INT(json_integer_value(json_object_get(json_object_get(step, "profile"),
		    "freq")), 4321);
		json_decref(step);
	}

	/* knobs_optional goes to the step for the cell's knobs only */
	{
		struct job_spec *oj = job_of("{\"recipe\":\"cpu-loop\",\"machines\":"
		    "{\"class\":\"x\"},\"knobs\":{\"mthp_16kB\":\"always\"},\"matrix\":"
		    "{\"mthp_64kB\":[\"never\"]},\"knobs_optional\":[\"mthp_64kB\",\"mthp_16kB\"]}");
		json_t *ck = json_pack("{s:s}", "mthp_16kB", "always"), *opt;

		run.iterations = 2;
		run.warmup = 0;
		run.timeout_s = 5;
		in.job = oj;
		in.knobs = ck;
		step = NULL;
		T_CHECK(oj != NULL && ck != NULL);
		if (oj != NULL && ck != NULL)
			T_EQ_INT(plan_step(&in, &step, &d), 0);
		opt = json_object_get(step, "knobs_optional");
		T_EQ_INT(json_array_size(opt), 1);
		T_EQ_STR(json_string_value(json_array_get(opt, 0)), "mthp_16kB");
		json_decref(step);
		json_decref(ck);
		job_free(oj);
		in.knobs = knobs;
	}

	/* no knobs, {} knobs and a plain job: none of the machine-state keys */
	run.iterations = 2;
	run.warmup = 0;
	run.timeout_s = 5;
	in.job = plain;
	in.knobs = empty;
	T_EQ_INT(plan_step(&in, &step, &d), 0);
	T_CHECK(step != NULL && json_object_get(step, "knobs") == NULL &&
	    json_object_get(step, "bind") == NULL && json_object_get(step, "aslr") == NULL &&
	    json_object_get(step, "drop_caches") == NULL &&
	    json_object_get(step, "gap_ms") == NULL &&
	    json_object_get(step, "knobs_optional") == NULL &&
	    json_object_get(step, "profile") == NULL);
	json_decref(step);
	in.knobs = NULL;
	T_EQ_INT(plan_step(&in, &step, &d), 0);
	T_CHECK(step != NULL && json_object_get(step, "knobs") == NULL);
	json_decref(step);
	/* knobs that are not an object, and values that do not render */
	in.knobs = notobj;
	T_EQ_INT(plan_step(&in, &step, &d), BF_ERR_INVALID);
	T_CHECK(step == NULL);
	T_EQ_STR(d.field, "knobs");
	in.knobs = NULL;
	in.values = empty;
	bf_diag_clear(&d);
	T_EQ_INT(plan_step(&in, &step, &d), BF_ERR_INVALID);
	T_CHECK(step == NULL);
	T_CHECK(d.msg[0] != '\0');
out:
	json_decref(values);
	json_decref(knobs);
	json_decref(empty);
	json_decref(notobj);
	job_free(job);
	job_free(plain);
}

int
main(void)
{
	struct bf_diag d;

	bf_diag_clear(&d);
	T_EQ_INT(recipe_parse(recipe_text, strlen(recipe_text), &rec, &d), 0);
	if (rec == NULL) {
		fprintf(stderr, "recipe: %s\n", d.msg);
		return t_done();
	}
	test_run_order();
	test_plan_job();
	test_plan_hostile();
	test_run_of();
	test_step();
	recipe_free(rec);
	return t_done();
}
