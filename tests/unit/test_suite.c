/*
 * test_suite.c: suite jobs (job.h, job-suite.c, plan-suite.c): each entry
 * parsed as a job of its own (the job's knobs under its own, the job's
 * matrix crossed with its own), hostile suites refused naming the field,
 * and the plan: every entry's cells once per boot, numbered on across the
 * entries with the axis "workload", claim ranks boot-major so one boot of
 * one configuration holds every workload's runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "err.h"
#include "job.h"
#include "plan.h"
#include "recipe.h"
#include "t.h"

static const char loop_text[] =
    "{\"name\": \"cpu-loop\", \"timeout_s\": 30,"
    " \"params\": {\"loops\": {\"type\": \"int\", \"min\": 1, \"max\": 1000000000,"
    " \"default\": 1000000}},"
    " \"presets\": {\"paper\": {\"loops\": 5000}},"
    " \"command\": [\"@agent\", \"work\", \"cpu-loop\", \"--loops={loops}\"]}";
static const char tree_text[] =
    "{\"name\": \"btree\", \"timeout_s\": 90,"
    " \"params\": {\"threads\": {\"type\": \"int\", \"min\": 1, \"max\": 64, \"default\": 1},"
    " \"keys\": {\"type\": \"int\", \"min\": 1, \"max\": 100000, \"default\": 10}},"
    " \"command\": [\"@agent\", \"work\", \"btree\", \"--threads={threads}\"]}";

static struct recipe *loop, *tree;

#define MACH "\"machines\": {\"class\": \"demo\"}"
#define KERNELS "\"matrix\": {\"kernel\": [\"4lvl\", \"5lvl\"]}"

/* Parse text; 0 and the job, or the error with d. */
static int
parse(const char *text, struct job_spec **job, struct bf_diag *d)
{
	bf_diag_clear(d);
	*job = NULL;
	return job_parse(text, strlen(text), job, d);
}

/* The recipes of job's entries, by name from the two above. */
static int
recipes_of(const struct job_spec *job, const struct recipe **recs)
{
	size_t i;

	for (i = 0; i < job->nsuite; i++) {
		const char *n = job->suite[i].job->recipe;

		recs[i] = strcmp(n, "btree") == 0 ? tree : strcmp(n, "cpu-loop") == 0 ? loop : NULL;
		if (recs[i] == NULL)
			return BF_ERR_NOTFOUND;
	}
	return 0;
}

static void
test_parse(void)
{
	struct job_spec *job = NULL;
	struct bf_diag d;
	const struct job_spec *e;

	T_EQ_INT(parse("{\"suite\": [{\"recipe\": \"btree\", \"params\": {\"threads\": 8}},"
	    " {\"recipe\": \"cpu-loop\", \"preset\": \"paper\","
	    "  \"matrix\": {\"thp_enabled\": [\"never\", \"always\"]}},"
	    " {\"recipe\": \"btree\", \"label\": \"btree-madv\","
	    "  \"knobs\": {\"thp_enabled\": \"madvise\"}}],"
	    " \"knobs\": {\"thp_enabled\": \"never\", \"randomize_va_space\": 0},"
	    " " MACH ", " KERNELS ", \"repetitions\": {\"boots\": 3, \"iterations\": 2}}",
	    &job, &d), 0);
	if (job == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		return;
	}
	T_CHECK(job_is_suite(job));
	T_EQ_STR(job->recipe, JOB_SUITE_RECIPE);
	T_EQ_INT(job->nsuite, 3);
	T_EQ_STR(job->suite[0].label, "btree");
	T_EQ_STR(job->suite[1].label, "cpu-loop");
	T_EQ_STR(job->suite[2].label, "btree-madv");
	T_EQ_INT(job_suite_find(job, "btree-madv"), 2);
	T_EQ_INT(job_suite_find(job, "nope"), -1);
	/* each entry is a job of its own: the job's shared fields, its own rest */
	e = job->suite[0].job;
	T_EQ_STR(e->recipe, "btree");
	T_EQ_INT(e->boots, 3);
	T_EQ_INT(e->iterations, 2);
	T_EQ_INT(json_integer_value(json_object_get(e->params, "threads")), 8);
	T_EQ_INT(json_object_size(e->matrix), 1);
	T_EQ_STR(e->machine_class, "demo");
	T_CHECK(!job_is_suite(e));
	e = job->suite[1].job;
	T_EQ_STR(e->preset, "paper");
	/* the job's axes first, then the entry's */
	T_EQ_INT(json_object_size(e->matrix), 2);
	T_EQ_STR(json_object_iter_key(json_object_iter(e->matrix)), "kernel");
	/* thp_enabled is an axis of entry 1: the job's fixed value gives way */
	T_CHECK(json_object_get(e->knobs, "thp_enabled") == NULL);
	T_CHECK(json_object_get(e->matrix, "thp_enabled") != NULL);
	T_EQ_INT(json_integer_value(json_object_get(e->knobs, "randomize_va_space")), 0);
	e = job->suite[2].job;
	T_EQ_STR(json_string_value(json_object_get(e->knobs, "thp_enabled")), "madvise");
	T_EQ_INT(json_integer_value(json_object_get(e->knobs, "randomize_va_space")), 0);
	job_free(job);
}

static void
test_parse_hostile(void)
{
	static const struct {
		const char *text, *field, *msg;
	} cases[] = {
		{ "{\"suite\": [], " MACH "}", "suite", "" },
		{ "{\"suite\": {}, " MACH "}", "suite", "" },
		{ "{\"suite\": [7], " MACH "}", "suite[0]", "expected an object" },
		{ "{\"suite\": [{}], " MACH "}", "suite[0].recipe", "" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"shell\": \"rm -rf /\"}], " MACH "}",
		  "suite[0].shell", "" },
		{ "{\"suite\": [{\"recipe\": \"btree\"}], \"recipe\": \"btree\", " MACH "}",
		  "recipe", "each entry of suite" },
		{ "{\"suite\": [{\"recipe\": \"btree\"}], \"params\": {\"threads\": 2}, " MACH "}",
		  "params", "each entry of suite" },
		{ "{\"suite\": [{\"recipe\": \"btree\"}, {\"recipe\": \"btree\"}], " MACH "}",
		  "suite[1]", "workload \"btree\" is suite[0]'s already" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"label\": \"x\"},"
		  " {\"recipe\": \"cpu-loop\", \"label\": \"x\"}], " MACH "}",
		  "suite[1].label", "is suite[0]'s already" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"label\": \"a b;c\"}], " MACH "}",
		  "suite[0].label", "" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"matrix\": {\"kernel\": [\"6.1\"]}}], "
		  MACH "}", "suite[0].matrix.kernel", "boot configuration" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"matrix\": {\"cmdline\": [\"\"]}}], "
		  MACH "}", "suite[0].matrix.cmdline", "put it in the job's matrix" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"matrix\": {\"kernel\": [\"6.1\"]}}], "
		  MACH ", " KERNELS "}", "suite[0].matrix.kernel", "" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"matrix\": {\"threads\": [1]}}], "
		  MACH ", \"matrix\": {\"threads\": [2]}}", "suite[0].matrix.threads",
		  "axis of the job's matrix already" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"knobs\": {\"thp_enabled\": \"sometimes\"}}],"
		  " " MACH "}", "suite[0].knobs.thp_enabled", "" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"params\": {\"threads\": [1]}}], " MACH "}",
		  "suite[0].params.threads", "expected a string, number or boolean" },
		{ "{\"suite\": [{\"recipe\": \"btree\"}], " MACH ", \"repetitions\":"
		  " {\"target_ci_pct\": 1}}", "repetitions.target_ci_pct", "share their boots" },
	};
	struct job_spec *job;
	struct bf_diag d;
	char many[4096];
	size_t i, off;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_CHECK(parse(cases[i].text, &job, &d) != 0);
		T_CHECK(job == NULL);
		T_EQ_STR(d.field, cases[i].field);
		T_CONTAINS(d.msg, cases[i].msg);
		job_free(job);
	}
	/* more entries than BF_MAX_SUITE */
	off = (size_t)snprintf(many, sizeof(many), "{" MACH ", \"suite\": [");
	for (i = 0; i <= BF_MAX_SUITE; i++)
		off += (size_t)snprintf(many + off, sizeof(many) - off,
		    "%s{\"recipe\": \"btree\", \"label\": \"b%zu\"}", i ? "," : "", i);
	snprintf(many + off, sizeof(many) - off, "]}");
	T_CHECK(parse(many, &job, &d) != 0);
	T_EQ_STR(d.field, "suite");
	job_free(job);
}

/* Validation against each entry's own recipe names the entry. */
static void
test_validate(void)
{
	static const struct {
		const char *text, *field, *msg;
	} cases[] = {
		{ "{\"suite\": [{\"recipe\": \"cpu-loop\"}, {\"recipe\": \"btree\","
		  " \"params\": {\"threads\": 256}}], " MACH "}", "suite[1].params.threads",
		  "suite[1].params.threads: " },
		{ "{\"suite\": [{\"recipe\": \"cpu-loop\", \"params\": {\"threads\": 2}}], " MACH "}",
		  "suite[0].params.threads", "names no parameter" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"preset\": \"paper\"}], " MACH "}",
		  "suite[0].preset", "is not one of" },
		{ "{\"suite\": [{\"recipe\": \"btree\", \"matrix\": {\"loops\": [1]}}], " MACH "}",
		  "suite[0].matrix.loops", "names no parameter or knob" },
		/* a job-wide axis must suit every entry's recipe */
		{ "{\"suite\": [{\"recipe\": \"btree\"}, {\"recipe\": \"cpu-loop\"}], " MACH ","
		  " \"matrix\": {\"threads\": [1, 2]}}", "suite[1].matrix.threads", "" },
	};
	const struct recipe *recs[BF_MAX_SUITE];
	struct job_spec *job;
	struct bf_diag d;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_EQ_INT(parse(cases[i].text, &job, &d), 0);
		if (job == NULL)
			continue;
		T_EQ_INT(recipes_of(job, recs), 0);
		bf_diag_clear(&d);
		T_CHECK(job_validate_suite(job, recs, NULL, &d) != 0);
		T_EQ_STR(d.field, cases[i].field);
		T_CONTAINS(d.msg, cases[i].msg);
		/* a suite is never validated as one job */
		T_EQ_INT(job_validate(job, recs[0], NULL, &d), BF_ERR_INVALID);
		job_free(job);
	}
}

/*
 * The suite: three workloads over two kernels, three boots. Each
 * boot of each kernel holds a run of every workload's every cell, and the
 * claim ranks keep a boot's runs before the next boot's.
 */
static void
test_plan(void)
{
	const struct recipe *recs[BF_MAX_SUITE];
	struct job_spec *job = NULL;
	struct plan *p = NULL;
	struct bf_diag d;
	size_t i, per[2][3] = { { 0 } }, wl[3] = { 0 };
	int64_t last_of_boot[3] = { -1, -1, -1 }, first_of_boot[3] = { INT64_MAX, INT64_MAX,
	    INT64_MAX };

	T_EQ_INT(parse("{\"suite\": [{\"recipe\": \"btree\", \"params\": {\"threads\": 32}},"
	    " {\"recipe\": \"cpu-loop\", \"matrix\": {\"thp_enabled\": [\"never\"]}},"
	    " {\"recipe\": \"btree\", \"label\": \"btree-madv\","
	    "  \"knobs\": {\"thp_enabled\": \"madvise\"}, \"matrix\": {\"keys\": [10, 20]}}],"
	    " " MACH ", " KERNELS ", \"repetitions\": {\"boots\": 3}}", &job, &d), 0);
	if (job == NULL)
		return;
	T_EQ_INT(recipes_of(job, recs), 0);
	T_EQ_INT(job_validate_suite(job, recs, NULL, &d), 0);
	T_EQ_INT(plan_suite(job, recs, &p, &d), 0);
	if (p == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		job_free(job);
		return;
	}
	/* cells: btree 2 kernels, cpu-loop 2 x 1, btree-madv 2 x 2 */
	T_EQ_INT(p->ncells, 8);
	T_EQ_INT(p->nentries, 3);
	T_EQ_INT(p->entry_base[0], 0);
	T_EQ_INT(p->entry_base[1], 2);
	T_EQ_INT(p->entry_base[2], 4);
	T_EQ_INT(p->entry_base[3], 8);
	T_EQ_INT(p->nruns, 24);
	for (i = 0; i < p->ncells; i++) {
		T_EQ_INT(p->cells[i].index, i);
		T_EQ_STR(json_string_value(json_object_get(p->cells[i].axes, "workload")),
		    job->suite[p->cell_entry[i]].label);
		/* workload is the first axis */
		T_EQ_STR(json_object_iter_key(json_object_iter(p->cells[i].axes)), "workload");
		wl[p->cell_entry[i]]++;
	}
	T_EQ_STR(p->cells[0].label, "workload=btree kernel=4lvl");
	T_EQ_STR(p->cells[3].label, "workload=cpu-loop kernel=5lvl thp_enabled=never");
	T_EQ_STR(p->cells[5].label, "workload=btree-madv kernel=4lvl keys=20");
	T_EQ_INT(json_integer_value(json_object_get(p->cells[0].values, "threads")), 32);
	T_EQ_INT(json_integer_value(json_object_get(p->cells[4].values, "threads")), 1);
	T_EQ_STR(json_string_value(json_object_get(p->cells[4].knobs, "thp_enabled")), "madvise");
	T_EQ_STR(json_string_value(json_object_get(p->cells[2].knobs, "thp_enabled")), "never");
	T_CHECK(json_object_get(p->cells[0].knobs, "thp_enabled") == NULL);
	T_EQ_INT(wl[0], 2);
	T_EQ_INT(wl[1], 2);
	T_EQ_INT(wl[2], 4);
	for (i = 0; i < p->nruns; i++) {
		const struct plan_run *r = &p->runs[i];
		const struct matrix_cell *c = &p->cells[r->cell];
		int k = strcmp(c->kernel, "5lvl") == 0;

		T_CHECK(r->boot >= 0 && r->boot < 3);
		per[k][p->cell_entry[r->cell]]++;
		T_EQ_INT(r->order, plan_run_order(PLAN_INTERLEAVED, r->cell, r->boot));
		T_EQ_INT(r->timeout_s, p->cell_entry[r->cell] == 1 ? 30 : 90);
		if (r->order > last_of_boot[r->boot])
			last_of_boot[r->boot] = r->order;
		if (r->order < first_of_boot[r->boot])
			first_of_boot[r->boot] = r->order;
	}
	/* every boot of every kernel runs every workload: 3 boots of each */
	T_EQ_INT(per[0][0], 3);
	T_EQ_INT(per[1][1], 3);
	T_EQ_INT(per[0][2], 6);
	T_EQ_INT(per[1][2], 6);
	/* boot-major: all of boot b ranks before any of boot b + 1 */
	T_CHECK(last_of_boot[0] < first_of_boot[1] && last_of_boot[1] < first_of_boot[2]);
	plan_free(p);
	job_free(job);
}

/*
 * knobs_optional per entry: a knob only one entry sets may be optional
 * without failing the others, each entry keeps the names its own cells set,
 * and a name no entry sets is still refused.
 */
static void
test_knobs_optional(void)
{
	const struct recipe *recs[BF_MAX_SUITE];
	struct job_spec *job = NULL;
	struct bf_diag d;
	const json_t *opt;

	T_EQ_INT(parse("{\"suite\": [{\"recipe\": \"btree\","
	    " \"knobs\": {\"mthp_16kB\": \"always\"}},"
	    " {\"recipe\": \"cpu-loop\", \"matrix\": {\"mthp_64kB\": [\"never\", \"always\"]}},"
	    " {\"recipe\": \"btree\", \"label\": \"plain\"}],"
	    " \"knobs\": {\"thp_enabled\": \"never\"},"
	    " \"knobs_optional\": [\"mthp_16kB\", \"mthp_64kB\", \"thp_enabled\"], " MACH "}",
	    &job, &d), 0);
	if (job == NULL) {
		fprintf(stderr, "%s: %s\n", d.field, d.msg);
		return;
	}
	T_EQ_INT(recipes_of(job, recs), 0);
	T_EQ_INT(job_validate_suite(job, recs, NULL, &d), 0);
	opt = job->suite[0].job->knobs_optional;
	T_EQ_INT(json_array_size(opt), 2);
	T_EQ_STR(json_string_value(json_array_get(opt, 0)), "mthp_16kB");
	T_EQ_STR(json_string_value(json_array_get(opt, 1)), "thp_enabled");
	opt = job->suite[1].job->knobs_optional;
	T_EQ_INT(json_array_size(opt), 2);
	T_EQ_STR(json_string_value(json_array_get(opt, 0)), "mthp_64kB");
	opt = job->suite[2].job->knobs_optional;
	T_EQ_INT(json_array_size(opt), 1);
	T_EQ_STR(json_string_value(json_array_get(opt, 0)), "thp_enabled");
	job_free(job);
	/* an entry that sets no optional knob at all has none */
	T_EQ_INT(parse("{\"suite\": [{\"recipe\": \"btree\","
	    " \"knobs\": {\"mthp_16kB\": \"always\"}}, {\"recipe\": \"cpu-loop\"}],"
	    " \"knobs_optional\": [\"mthp_16kB\"], " MACH "}", &job, &d), 0);
	T_CHECK(job != NULL && job->suite[1].job->knobs_optional == NULL &&
	    json_array_size(job->suite[0].job->knobs_optional) == 1);
	job_free(job);
	/* a knob no entry and not the job sets: still refused, named */
	T_CHECK(parse("{\"suite\": [{\"recipe\": \"btree\","
	    " \"knobs\": {\"mthp_16kB\": \"always\"}}, {\"recipe\": \"cpu-loop\"}],"
	    " \"knobs_optional\": [\"mthp_16kB\", \"mthp_32kB\"], " MACH "}", &job, &d) != 0);
	T_CHECK(job == NULL);
	T_EQ_STR(d.field, "knobs_optional[1]");
	T_CONTAINS(d.msg, "\"mthp_32kB\" is not a knob of this job");
	job_free(job);
	/* a name that is no knob, even in an entry's matrix as a parameter */
	T_CHECK(parse("{\"suite\": [{\"recipe\": \"btree\", \"matrix\": {\"threads\": [1]}}],"
	    " \"knobs_optional\": [\"threads\"], " MACH "}", &job, &d) != 0);
	T_EQ_STR(d.field, "knobs_optional[0]");
	job_free(job);
}

/* More cells in all than BF_MAX_CELLS: refused naming the entry. */
static void
test_plan_cap(void)
{
	const struct recipe *recs[BF_MAX_SUITE];
	struct job_spec *job = NULL;
	struct plan *p = NULL;
	struct bf_diag d;
	char text[16384], vals[1024];
	size_t i, off = 0;

	for (i = 0; i < 64; i++)
		off += (size_t)snprintf(vals + off, sizeof(vals) - off, "%s%zu", i ? "," : "",
		    i + 1);
	snprintf(text, sizeof(text), "{" MACH ", \"suite\": ["
	    "{\"recipe\": \"btree\", \"matrix\": {\"keys\": [%s], \"threads\": [%s]}},"
	    "{\"recipe\": \"btree\", \"label\": \"b2\", \"matrix\": {\"keys\": [%s],"
	    " \"threads\": [1, 2]}}]}", vals, vals, vals);
	T_EQ_INT(parse(text, &job, &d), 0);
	if (job == NULL)
		return;
	T_EQ_INT(recipes_of(job, recs), 0);
	T_EQ_INT(job_validate_suite(job, recs, NULL, &d), 0);
	T_EQ_INT(plan_suite(job, recs, &p, &d), BF_ERR_INVALID);
	T_CHECK(p == NULL);
	T_EQ_STR(d.field, "suite[1]");
	T_CONTAINS(d.msg, "more than 4096 cells");
	/* a single-recipe job is not a suite to plan_suite */
	job_free(job);
	T_EQ_INT(parse("{\"recipe\": \"btree\", " MACH "}", &job, &d), 0);
	T_EQ_INT(plan_suite(job, recs, &p, &d), BF_ERR_INVALID);
	job_free(job);
}

int
main(void)
{
	struct bf_diag d;

	bf_diag_clear(&d);
	T_EQ_INT(recipe_parse(loop_text, strlen(loop_text), &loop, &d), 0);
	T_EQ_INT(recipe_parse(tree_text, strlen(tree_text), &tree, &d), 0);
	if (loop == NULL || tree == NULL) {
		fprintf(stderr, "recipe: %s\n", d.msg);
		return t_done();
	}
	test_parse();
	test_parse_hostile();
	test_validate();
	test_plan();
	test_plan_cap();
	test_knobs_optional();
	recipe_free(loop);
	recipe_free(tree);
	return t_done();
}
