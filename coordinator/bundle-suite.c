/*
 * bundle-suite.c: the bundle of a suite job (version 3, docs/bundle.md).
 * Instead of one "recipe" it holds "recipes": one entry per workload of the
 * suite, in the suite's order, each with its recipe as run and that
 * recipe's canonical sha256; every run names its workload. A receiver
 * checks the entries against the bundle's own job document (parsed as any
 * job is), so a bundle cannot pair a workload with another recipe than the
 * one its job names, repeat a workload, or carry more entries than a suite
 * may have.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "bundle-int.h"
#include "job.h"
#include "jx.h"
#include "sha256.h"

int
bundle_export_recipes(const json_t *job, const json_t *recipes, json_t *doc,
    struct bf_diag *d)
{
	struct job_spec *js = NULL;
	json_t *arr = NULL, *rec;
	char hex[65];
	size_t i;
	int r;

	if ((r = job_from_json((json_t *)job, &js, d)) != 0 || !job_is_suite(js) ||
	    !json_is_array(recipes) || json_array_size(recipes) != js->nsuite) {
		bf_diag_set(d, "spec", "the stored suite job does not parse, or its recipes "
		    "are not one per entry");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((arr = json_array()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < js->nsuite; i++) {
		rec = json_array_get(recipes, i);
		if (!json_is_object(rec)) {
			bf_diag_set(d, "spec", "the stored recipe of suite[%zu] is not an object", i);
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((r = bundle_sha256(rec, hex)) != 0)
			goto out;
		if (json_array_append_new(arr, json_pack("{s:s,s:O,s:s}", "workload",
		    js->suite[i].label, "recipe", rec, "recipe_sha256", hex)) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	if (json_object_set(doc, "recipes", arr) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	json_decref(arr);
	job_free(js);
	return r;
}

/* Entry i of "recipes": its keys, workload and hash, and that it is the
 * suite's entry i (the same label, a recipe of the name the entry gives). */
static int
bundle_check_entry(const json_t *e, const struct job_spec *js, size_t i, struct bf_diag *d)
{
	static const char *const keys[] = { "workload", "recipe", "recipe_sha256", NULL };
	const char *w, *h, *name;
	char p[48], fp[96];
	json_t *rec, *hv;
	char hex[65];
	int r;

	jx_path_idx(p, sizeof(p), "recipes", i);
	if (!json_is_object(e)) {
		bf_diag_set(d, p, "expected an object, got %s", jx_type_name(e));
		return BF_ERR_INVALID;
	}
	if ((r = jx_only_keys(e, keys, p, d)) != 0 ||
	    (r = jx_str(e, "workload", JX_REQUIRED, BF_MAX_NAME, &w, p, d)) != 0 ||
	    (r = jx_check_name(w, jx_path(fp, sizeof(fp), p, "workload"), d)) != 0 ||
	    (r = jx_obj(e, "recipe", JX_REQUIRED, &rec, p, d)) != 0 ||
	    (r = jx_str(e, "recipe_sha256", JX_REQUIRED, 64, &h, p, d)) != 0)
		return r;
	hv = json_object_get(e, "recipe_sha256");
	jx_path(fp, sizeof(fp), p, "recipe_sha256");
	if (!sha256_is_hex(json_string_value(hv))) {
		bf_diag_set(d, fp, "expected 64 lowercase hex digits (a sha256)");
		return BF_ERR_INVALID;
	}
	if (i >= js->nsuite) {
		bf_diag_set(d, p, "the bundle's job is a suite of %zu workloads", js->nsuite);
		return BF_ERR_INVALID;
	}
	if (strcmp(w, js->suite[i].label) != 0) {
		bf_diag_set(d, jx_path(fp, sizeof(fp), p, "workload"), "\"%s\" is not suite[%zu] "
		    "of the bundle's job, \"%s\"", w, i, js->suite[i].label);
		return BF_ERR_INVALID;
	}
	name = json_string_value(json_object_get(rec, "name"));
	if (name == NULL || strcmp(name, js->suite[i].job->recipe) != 0) {
		bf_diag_set(d, jx_path(fp, sizeof(fp), p, "recipe"), "is not the recipe \"%s\" "
		    "that suite[%zu] of the bundle's job names", js->suite[i].job->recipe, i);
		return BF_ERR_INVALID;
	}
	if ((r = bundle_sha256(rec, hex)) != 0)
		return r;
	if (strcmp(hex, h) != 0) {
		/* as for every hash: the value the content gives is not printed */
		bf_diag_set(d, jx_path(fp, sizeof(fp), p, "recipe_sha256"), "does not match "
		    "the content");
		return BF_ERR_INVALID;
	}
	return 0;
}

int
bundle_check_recipes(const json_t *doc, struct bf_diag *d)
{
	struct job_spec *js = NULL;
	struct bf_diag jd;
	const char *w;
	json_t *arr, *e;
	size_t i, j;
	int r;

	if ((r = jx_arr(doc, "recipes", JX_REQUIRED, 1, BF_MAX_SUITE, &arr, "", d)) != 0)
		goto out;
	/* the job as any job is read: its suite gives the workloads */
	bf_diag_clear(&jd);
	if ((r = job_from_json(json_object_get(doc, "job"), &js, &jd)) != 0 ||
	    !job_is_suite(js)) {
		bf_diag_set(d, "job", "a version 3 bundle holds a suite job: %s",
		    r != 0 ? jd.msg : "this job has no \"suite\"");
		r = BF_ERR_INVALID;
		goto out;
	}
	json_array_foreach(arr, i, e) {
		/* duplicates first: they say more than "not suite[i]" would */
		w = json_string_value(json_object_get(e, "workload"));
		for (j = 0; w != NULL && j < i; j++)
			if (json_is_string(json_object_get(json_array_get(arr, j), "workload")) &&
			    strcmp(json_string_value(json_object_get(json_array_get(arr, j),
			    "workload")), w) == 0) {
				char p[48];

				bf_diag_set(d, jx_path_idx(p, sizeof(p), "recipes", i), "workload "
				    "\"%.64s\" is recipes[%zu]'s already", w, j);
				r = BF_ERR_INVALID;
				goto out;
			}
		if ((r = bundle_check_entry(e, js, i, d)) != 0)
			goto out;
	}
	if (json_array_size(arr) != js->nsuite) {
		bf_diag_set(d, "recipes", "%zu entries for a suite of %zu workloads",
		    json_array_size(arr), js->nsuite);
		r = BF_ERR_INVALID;
		goto out;
	}
	r = 0;
out:
	job_free(js);
	return r;
}

int
bundle_check_run_workload(const json_t *doc, const json_t *run, const char *path,
    struct bf_diag *d)
{
	const char *w, *ax;
	json_t *e;
	char p[160];
	size_t i;
	int r;

	if ((r = jx_str(run, "workload", JX_REQUIRED, BF_MAX_NAME, &w, path, d)) != 0)
		return r;
	jx_path(p, sizeof(p), path, "workload");
	ax = json_string_value(json_object_get(json_object_get(run, "axes"), "workload"));
	if (ax == NULL || strcmp(ax, w) != 0) {
		bf_diag_set(d, p, "is not the run's axis workload");
		return BF_ERR_INVALID;
	}
	json_array_foreach(json_object_get(doc, "recipes"), i, e)
		if (strcmp(json_string_value(json_object_get(e, "workload")), w) == 0)
			return 0;
	bf_diag_set(d, p, "\"%.64s\" is no workload of the bundle's recipes", w);
	return BF_ERR_INVALID;
}
