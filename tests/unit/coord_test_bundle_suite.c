/*
 * coord_test_bundle_suite.c: a suite job's bundle (version 3, bundle.h,
 * bundle-suite.c). Export from a real store holding a suite planned as
 * POST /jobs plans it: every entry's recipe with its canonical hash, each
 * run naming its workload, the samples of every workload. Then the
 * hostile cases, each refused naming the field: an entry's recipe changed
 * (its hash), a workload twice, more entries than a suite may have, fewer
 * than the job's, entries out of order, a recipe the entry does not name,
 * a run of no workload, a version 3 bundle whose job is no suite, and a
 * version 3 bundle of the single-recipe shape. A version 2 bundle still
 * reads, and a single-recipe job still exports version 2.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bundle.h"
#include "bundle_fixture.h"
#include "caps.h"
#include "err.h"
#include "job.h"
#include "plan.h"
#include "recipe.h"
#include "store.h"
#include "t.h"

static char dbpath[256];

static const char loop_text[] =
    "{\"name\": \"cpu-loop\", \"timeout_s\": 30,"
    " \"params\": {\"loops\": {\"type\": \"int\", \"min\": 1, \"max\": 1000000000,"
    " \"default\": 1000000}},"
    " \"command\": [\"@agent\", \"work\", \"cpu-loop\", \"--loops={loops}\"]}";
static const char touch_text[] =
    "{\"name\": \"page-touch\", \"timeout_s\": 60,"
    " \"params\": {\"mb\": {\"type\": \"int\", \"min\": 1, \"max\": 1024, \"default\": 8}},"
    " \"command\": [\"@agent\", \"work\", \"touch\", \"--mb\", \"{mb}\"]}";
static const char suite_text[] =
    "{\"suite\": [{\"recipe\": \"cpu-loop\"},"
    " {\"recipe\": \"page-touch\", \"matrix\": {\"mb\": [8, 16]}},"
    " {\"recipe\": \"page-touch\", \"label\": \"touch-madv\","
    "  \"knobs\": {\"thp_enabled\": \"madvise\"}}],"
    " \"machines\": {\"class\": \"lab\"}, \"repetitions\": {\"boots\": 2}}";

/* A store with machine h1 and the suite above run to the end: 4 cells x 2
 * boots, two samples of one metric per run. */
static struct store *
make_store(int64_t *jobid)
{
	struct store *s = NULL;
	struct store_machine m;
	struct store_claim *c = NULL;
	struct store_sample smp;
	struct recipe *loop = NULL, *touch = NULL;
	const struct recipe *recs[BF_MAX_SUITE];
	struct job_spec *job = NULL;
	struct plan *p = NULL;
	struct bf_diag d;
	size_t i;
	int k;

	snprintf(dbpath, sizeof(dbpath), "/tmp/bf-bundle-suite.%d.db", (int)getpid());
	unlink(dbpath);
	bf_diag_clear(&d);
	T_EQ_INT(store_open(dbpath, &s, &d), 0);
	T_EQ_INT(recipe_parse(loop_text, strlen(loop_text), &loop, &d), 0);
	T_EQ_INT(recipe_parse(touch_text, strlen(touch_text), &touch, &d), 0);
	T_EQ_INT(job_parse(suite_text, strlen(suite_text), &job, &d), 0);
	if (s == NULL || loop == NULL || touch == NULL || job == NULL)
		goto fail;
	recs[0] = loop;
	recs[1] = touch;
	recs[2] = touch;
	T_EQ_INT(job_validate_suite(job, recs, NULL, &d), 0);
	T_EQ_INT(plan_suite(job, recs, &p, &d), 0);
	if (p == NULL)
		goto fail;
	memset(&m, 0, sizeof(m));
	m.name = "h1";
	m.host = "127.0.0.1";
	m.port = 2222;
	m.user = "bench";
	m.klass = "lab";
	T_EQ_INT(store_machine_add(s, &m, NULL), 0);
	T_EQ_INT(store_job_create_suite(s, job, recs, p, "lab", NULL, 0, jobid), 0);
	T_EQ_INT(p->nruns, 8);
	for (i = 0; i < p->nruns; i++) {
		T_EQ_INT(store_run_claim(s, "h1", "lab", 60, &c), 0);
		if (c == NULL)
			break;
		T_EQ_INT(store_run_set_info(s, c->run_id, "h1", "6.1.0-test", "boot-a"), 0);
		for (k = 0; k < 2; k++) {
			smp.metric = "wall_s";
			smp.value = 1.0 + (double)c->run_id / 100 + k * 0.01;
			smp.unit = "s";
			T_EQ_INT(store_samples_add(s, c->run_id, c->boot, k, &smp, 1), 0);
		}
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
		store_claim_free(c);
		c = NULL;
	}
	plan_free(p);
	job_free(job);
	recipe_free(loop);
	recipe_free(touch);
	return s;
fail:
	plan_free(p);
	job_free(job);
	recipe_free(loop);
	recipe_free(touch);
	store_close(s);
	return NULL;
}

/* c must be refused with d.field == field and msg containing msg. */
static void
refused(json_t *c, const char *field, const char *msg)
{
	struct bf_diag d;

	rehash(c);
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	T_EQ_STR(d.field, field);
	T_CONTAINS(d.msg, msg);
	json_decref(c);
}

/* The job's hash recomputed after it was edited (a forger would). */
static void
rehash_job(json_t *c)
{
	char hex[65];

	if (bundle_sha256(json_object_get(c, "job"), hex) == 0)
		json_object_set_new(c, "job_sha256", json_string(hex));
}

static void
test_hostile(const json_t *b)
{
	json_t *c, *arr, *e;
	size_t i;

	/* an entry's recipe edited: its own hash names it */
	c = reparse(b);
	e = json_object_get(json_array_get(json_object_get(c, "recipes"), 1), "recipe");
	json_object_set_new(e, "command", json_pack("[s,s]", "sh", "-c"));
	refused(c, "recipes[1].recipe_sha256", "does not match the content");
	/* a workload twice */
	c = reparse(b);
	arr = json_object_get(c, "recipes");
	json_array_set(arr, 2, json_array_get(arr, 1));
	refused(c, "recipes[2]", "workload \"page-touch\" is recipes[1]'s already");
	/* more entries than a suite may have */
	c = reparse(b);
	arr = json_object_get(c, "recipes");
	for (i = 0; i < BF_MAX_SUITE; i++) {
		e = json_deep_copy(json_array_get(arr, 0));
		json_object_set_new(e, "workload", json_sprintf("w%zu", i));
		json_array_append_new(arr, e);
	}
	refused(c, "recipes", "");
	/* fewer than the job's entries */
	c = reparse(b);
	json_array_remove(json_object_get(c, "recipes"), 2);
	refused(c, "recipes", "2 entries for a suite of 3 workloads");
	/* out of the job's order */
	c = reparse(b);
	arr = json_object_get(c, "recipes");
	e = json_incref(json_array_get(arr, 0));
	json_array_remove(arr, 0);
	json_array_append_new(arr, e);
	refused(c, "recipes[0].workload", "is not suite[0] of the bundle's job");
	/* a recipe the entry does not name, its hash made to fit */
	c = reparse(b);
	e = json_array_get(json_object_get(c, "recipes"), 0);
	json_object_set(e, "recipe", json_object_get(json_array_get(json_object_get(c,
	    "recipes"), 1), "recipe"));
	{
		char hex[65];

		bundle_sha256(json_object_get(e, "recipe"), hex);
		json_object_set_new(e, "recipe_sha256", json_string(hex));
	}
	refused(c, "recipes[0].recipe", "is not the recipe \"cpu-loop\"");
	/* an entry with a key it may not have, or no hash */
	c = reparse(b);
	json_object_set_new(json_array_get(json_object_get(c, "recipes"), 0), "setup",
	    json_string("rm -rf /"));
	refused(c, "recipes[0].setup", "");
	c = reparse(b);
	json_object_del(json_array_get(json_object_get(c, "recipes"), 0), "recipe_sha256");
	refused(c, "recipes[0].recipe_sha256", "");
	/* a run of no workload of the bundle, or not its axis */
	c = reparse(b);
	e = json_array_get(json_object_get(c, "runs"), 0);
	json_object_set_new(json_object_get(e, "axes"), "workload", json_string("nosuch"));
	json_object_set_new(e, "workload", json_string("nosuch"));
	refused(c, "runs[0].workload", "\"nosuch\" is no workload of the bundle's recipes");
	c = reparse(b);
	json_object_set_new(json_array_get(json_object_get(c, "runs"), 0), "workload",
	    json_string("touch-madv"));
	refused(c, "runs[0].workload", "is not the run's axis workload");
	c = reparse(b);
	json_object_del(json_array_get(json_object_get(c, "runs"), 0), "workload");
	refused(c, "runs[0].workload", "");
	/* the job no suite, its hash made to fit */
	c = reparse(b);
	json_object_del(json_object_get(c, "job"), "suite");
	json_object_set_new(json_object_get(c, "job"), "recipe", json_string("cpu-loop"));
	rehash_job(c);
	refused(c, "job", "a version 3 bundle holds a suite job");
	/* the job edited, hash not fixed: job_sha256 before anything reads it */
	c = reparse(b);
	json_array_remove(json_object_get(json_object_get(c, "job"), "suite"), 2);
	refused(c, "job_sha256", "does not match");
	/* version 3 in the single-recipe shape, and "recipes" in version 2 */
	c = reparse(b);
	json_object_set_new(c, "recipe", json_object());
	refused(c, "recipe", "");
	c = reparse(b);
	json_object_set_new(c, "version", json_integer(2));
	refused(c, "recipes", "");
	c = reparse(b);
	json_object_set_new(c, "version", json_integer(4));
	refused(c, "version", "");
}

static void
test_suite_bundle(void)
{
	struct store *s;
	struct bf_diag d;
	json_t *b = NULL, *b2 = NULL, *e, *run, *x;
	const char *w;
	char *t1, *t2, *text;
	size_t i, perw[3] = { 0 };
	int64_t job = 0;

	if ((s = make_store(&job)) == NULL)
		return;
	bf_diag_clear(&d);
	T_EQ_INT(bundle_export(s, job, &b, &d), 0);
	if (b == NULL) {
		fprintf(stderr, "export: %s: %s\n", d.field, d.msg);
		goto out;
	}
	T_EQ_INT(json_integer_value(json_object_get(b, "version")), 3);
	T_CHECK(json_object_get(b, "recipe") == NULL);
	T_CHECK(json_object_get(b, "recipe_sha256") == NULL);
	T_EQ_INT(json_array_size(json_object_get(b, "recipes")), 3);
	json_array_foreach(json_object_get(b, "recipes"), i, e) {
		static const char *const want[][2] = { { "cpu-loop", "cpu-loop" },
		    { "page-touch", "page-touch" }, { "touch-madv", "page-touch" } };
		char hex[65];

		T_EQ_STR(json_string_value(json_object_get(e, "workload")), want[i][0]);
		T_EQ_STR(json_string_value(json_object_get(json_object_get(e, "recipe"),
		    "name")), want[i][1]);
		T_EQ_INT(bundle_sha256(json_object_get(e, "recipe"), hex), 0);
		T_EQ_STR(json_string_value(json_object_get(e, "recipe_sha256")), hex);
	}
	/* the same recipe under two workloads has the same hash */
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(b, "recipes"),
	    1), "recipe_sha256")), json_string_value(json_object_get(json_array_get(
	    json_object_get(b, "recipes"), 2), "recipe_sha256")));
	T_EQ_INT(json_array_size(json_object_get(b, "runs")), 8);
	T_EQ_INT(json_array_size(json_object_get(b, "samples")), 16);
	json_array_foreach(json_object_get(b, "runs"), i, run) {
		w = json_string_value(json_object_get(run, "workload"));
		T_CHECK(w != NULL);
		if (w == NULL)
			continue;
		T_EQ_STR(json_string_value(json_object_get(json_object_get(run, "axes"),
		    "workload")), w);
		perw[strcmp(w, "cpu-loop") == 0 ? 0 : strcmp(w, "page-touch") == 0 ? 1 : 2]++;
	}
	/* cpu-loop 1 cell, page-touch 2, touch-madv 1; two boots each */
	T_EQ_INT(perw[0], 2);
	T_EQ_INT(perw[1], 4);
	T_EQ_INT(perw[2], 2);
	T_EQ_INT(bundle_check(b, &d), 0);
	/* byte for byte the same on a second export */
	T_EQ_INT(bundle_export(s, job, &b2, &d), 0);
	t1 = json_dumps(b, JSON_COMPACT);
	t2 = b2 != NULL ? json_dumps(b2, JSON_COMPACT) : NULL;
	T_CHECK(t1 != NULL && t2 != NULL && strcmp(t1, t2) == 0);
	free(t1);
	free(t2);
	/* through text and back */
	text = json_dumps(b, JSON_INDENT(1));
	x = NULL;
	T_EQ_INT(bundle_parse(text, strlen(text), BF_MAX_BUNDLE, &x, &d), 0);
	json_decref(x);
	free(text);
	test_hostile(b);
out:
	json_decref(b);
	json_decref(b2);
	store_close(s);
	unlink(dbpath);
}

/* A single-recipe job keeps exporting version 2, its old shape. */
static void
test_single_stays_v2(void)
{
	struct store *s = NULL;
	struct store_run_new rn;
	struct bf_diag d;
	json_t *b = NULL;
	int64_t job = 0;

	snprintf(dbpath, sizeof(dbpath), "/tmp/bf-bundle-suite1.%d.db", (int)getpid());
	unlink(dbpath);
	bf_diag_clear(&d);
	T_EQ_INT(store_open(dbpath, &s, &d), 0);
	if (s == NULL)
		return;
	memset(&rn, 0, sizeof(rn));
	rn.label = "loops=1";
	rn.axes_json = "{\"loops\":1}";
	rn.values_json = "{\"loops\":1}";
	rn.iterations = 1;
	rn.timeout_s = 60;
	T_EQ_INT(store_job_create(s, "demo", "t", "{\"job\":{\"recipe\":\"demo\","
	    "\"machines\":{\"class\":\"lab\"}},\"recipe\":{\"name\":\"demo\",\"command\":"
	    "[\"true\"]}}", "lab", NULL, &rn, 1, &job), 0);
	T_EQ_INT(bundle_export(s, job, &b, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(b, "version")), 2);
	T_CHECK(json_object_get(b, "recipes") == NULL);
	T_CHECK(json_object_get(json_array_get(json_object_get(b, "runs"), 0), "workload") ==
	    NULL);
	T_EQ_INT(bundle_check(b, &d), 0);
	json_decref(b);
	store_close(s);
	unlink(dbpath);
}

int
main(void)
{
	test_suite_bundle();
	test_single_stays_v2();
	return t_done();
}
