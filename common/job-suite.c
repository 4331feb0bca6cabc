/*
 * job-suite.c: a suite job, several workloads on the same boots (job.h).
 * Each entry of "suite" becomes a single-recipe job document of its own:
 * the suite job's document without "suite", with the entry's recipe,
 * preset and params, the job's knobs with the entry's over them (less
 * those the entry makes axes of), and the job's matrix followed by the
 * entry's axes. Everything downstream (the
 * validation against a recipe, the matrix, the step) reads that document
 * as it reads any job, so an entry can ask for nothing a job cannot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "err.h"
#include "job.h"
#include "jx.h"

static const char *const job_suite_keys[] = {
	"recipe", "label", "preset", "params", "knobs", "matrix", NULL
};
/* What a suite job may not say at its top level: each entry says it. */
static const char *const job_suite_own[] = { "recipe", "preset", "params", NULL };

int
job_is_suite(const struct job_spec *job)
{
	return job != NULL && job->nsuite > 0;
}

void
job_diag_prefix(struct bf_diag *d, const char *prefix)
{
	/* room for both: what does not fit is cut when copied back */
	char field[2 * BF_DIAG_FIELD + BF_DIAG_MSG], msg[2 * BF_DIAG_MSG + BF_DIAG_FIELD];
	size_t fl;

	if (d == NULL)
		return;
	fl = strlen(d->field);
	if (fl > 0 && strncmp(d->msg, d->field, fl) == 0 && d->msg[fl] == ':')
		snprintf(msg, sizeof(msg), "%s.%s", prefix, d->msg);
	else
		snprintf(msg, sizeof(msg), "%s: %s", prefix, d->msg);
	if (fl > 0)
		snprintf(field, sizeof(field), "%s.%s", prefix, d->field);
	else
		snprintf(field, sizeof(field), "%s", prefix);
	memcpy(d->field, field, sizeof(d->field) - 1);
	d->field[sizeof(d->field) - 1] = '\0';
	memcpy(d->msg, msg, sizeof(d->msg) - 1);
	d->msg[sizeof(d->msg) - 1] = '\0';
}

void
job_suite_free(struct job_spec *job)
{
	size_t i;

	for (i = 0; i < job->nsuite; i++) {
		free(job->suite[i].label);
		job_free(job->suite[i].job);
	}
	free(job->suite);
	job->suite = NULL;
	job->nsuite = 0;
}

/* The entry's matrix: no boot axis (those are the job's), no axis of the
 * job's matrix again. */
static int
job_suite_check_matrix(const json_t *doc, const json_t *m, const char *ep, struct bf_diag *d)
{
	char mp[BF_DIAG_FIELD], ap[BF_DIAG_FIELD];
	const char *k;
	json_t *v;

	if (m == NULL)
		return 0;
	if (!json_is_object(m)) {
		bf_diag_set(d, jx_path(ap, sizeof(ap), ep, "matrix"), "expected an object, got %s",
		    jx_type_name(m));
		return BF_ERR_INVALID;
	}
	json_object_foreach((json_t *)m, k, v) {
		jx_path(ap, sizeof(ap), jx_path(mp, sizeof(mp), ep, "matrix"), k);
		if (job_is_boot_axis(k)) {
			bf_diag_set(d, ap, "is boot configuration, which every entry of a suite "
			    "shares: put it in the job's matrix");
			return BF_ERR_INVALID;
		}
		if (json_object_get(json_object_get(doc, "matrix"), k) != NULL) {
			bf_diag_set(d, ap, "is an axis of the job's matrix already");
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

/* obj[key] = base's members but those named in skip, then over's (any
 * may be NULL); unset when that is empty. */
static int
job_suite_merge(json_t *obj, const char *key, const json_t *base, const json_t *over,
    const json_t *skip)
{
	const char *k;
	json_t *m, *v;

	if ((m = json_object()) == NULL)
		return BF_ERR_ALLOC;
	json_object_foreach((json_t *)base, k, v)
		if (json_object_get(skip, k) == NULL && json_object_set(m, k, v) != 0)
			goto oom;
	if (over != NULL && json_object_update(m, (json_t *)over) != 0)
		goto oom;
	if (json_object_size(m) == 0) {
		json_decref(m);
		json_object_del(obj, key);
		return 0;
	}
	return json_object_set_new(obj, key, m) != 0 ? BF_ERR_ALLOC : 0;
oom:
	json_decref(m);
	return BF_ERR_ALLOC;
}

int
job_suite_sets_knob(const json_t *doc, const char *name)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(doc, "suite"), i, e)
		if (json_is_object(e) &&
		    (json_object_get(json_object_get(e, "knobs"), name) != NULL ||
		    json_object_get(json_object_get(e, "matrix"), name) != NULL))
			return 1;
	return 0;
}

/* sub's knobs_optional less the names none of its cells sets: an optional
 * knob that only another entry sets is nothing this entry must answer for. */
static int
job_suite_optional(json_t *sub)
{
	json_t *opt, *keep, *v;
	const char *n;
	size_t i;

	if ((opt = json_object_get(sub, "knobs_optional")) == NULL || !json_is_array(opt))
		return 0;
	if ((keep = json_array()) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(opt, i, v) {
		n = json_string_value(v);
		if (n != NULL && json_object_get(json_object_get(sub, "knobs"), n) == NULL &&
		    json_object_get(json_object_get(sub, "matrix"), n) == NULL)
			continue;
		if (json_array_append(keep, v) != 0) {
			json_decref(keep);
			return BF_ERR_ALLOC;
		}
	}
	if (json_array_size(keep) == 0) {
		json_decref(keep);
		json_object_del(sub, "knobs_optional");
		return 0;
	}
	return json_object_set_new(sub, "knobs_optional", keep) != 0 ? BF_ERR_ALLOC : 0;
}

/* The single-recipe job document of entry e of doc, a new reference. */
static int
job_suite_doc(const json_t *doc, const json_t *e, json_t **out)
{
	json_t *sub;
	const char *k;
	size_t i;

	if ((sub = json_copy((json_t *)doc)) == NULL)
		return BF_ERR_ALLOC;
	json_object_del(sub, "suite");
	for (i = 0; job_suite_own[i] != NULL; i++) {
		k = job_suite_own[i];
		if (json_object_get(e, k) != NULL ?
		    json_object_set(sub, k, json_object_get(e, k)) != 0 : 0) {
			json_decref(sub);
			return BF_ERR_ALLOC;
		}
	}
	/* a knob the entry varies on an axis gives up the job's fixed value */
	if (job_suite_merge(sub, "knobs", json_object_get(doc, "knobs"),
	    json_object_get(e, "knobs"), json_object_get(e, "matrix")) != 0 ||
	    job_suite_merge(sub, "matrix", json_object_get(doc, "matrix"),
	    json_object_get(e, "matrix"), NULL) != 0 || job_suite_optional(sub) != 0) {
		json_decref(sub);
		return BF_ERR_ALLOC;
	}
	*out = sub;
	return 0;
}

int
job_suite_parse(struct job_spec *job, json_t *doc, struct bf_diag *d)
{
	char ep[BF_DIAG_FIELD], lp[BF_DIAG_FIELD];
	json_t *arr, *e, *sub = NULL;
	const char *label;
	size_t i, j;
	int r;

	for (i = 0; job_suite_own[i] != NULL; i++)
		if (json_object_get(doc, job_suite_own[i]) != NULL) {
			bf_diag_set(d, job_suite_own[i], "a suite job has no %s of its own: each "
			    "entry of suite gives it", job_suite_own[i]);
			return BF_ERR_INVALID;
		}
	if (job->target_ci_pct > 0) {
		bf_diag_set(d, "repetitions.target_ci_pct", "adaptive repetitions add boots per "
		    "cell, and a suite's cells share their boots: give repetitions.boots");
		return BF_ERR_INVALID;
	}
	if ((r = jx_arr(doc, "suite", JX_REQUIRED, 1, BF_MAX_SUITE, &arr, "", d)) != 0)
		return r;
	if ((job->suite = calloc(json_array_size(arr), sizeof(*job->suite))) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(arr, i, e) {
		jx_path_idx(ep, sizeof(ep), "suite", i);
		if (!json_is_object(e)) {
			bf_diag_set(d, ep, "expected an object, got %s", jx_type_name(e));
			return BF_ERR_INVALID;
		}
		label = NULL;
		if ((r = jx_only_keys(e, job_suite_keys, ep, d)) != 0 ||
		    (r = jx_str(e, "label", JX_OPTIONAL, BF_MAX_NAME, &label, ep, d)) != 0 ||
		    (label != NULL && (r = jx_check_name(label, jx_path(lp, sizeof(lp), ep,
		    "label"), d)) != 0) ||
		    (r = job_suite_check_matrix(doc, json_object_get(e, "matrix"), ep, d)) != 0)
			return r;
		if ((r = job_suite_doc(doc, e, &sub)) != 0)
			return r;
		r = job_from_json(sub, &job->suite[i].job, d);
		json_decref(sub);
		if (r != 0) {
			job_diag_prefix(d, ep);
			return r;
		}
		job->nsuite++;
		if (label == NULL)
			label = job->suite[i].job->recipe;
		if ((job->suite[i].label = strdup(label)) == NULL)
			return BF_ERR_ALLOC;
		for (j = 0; j < i; j++)
			if (strcmp(job->suite[j].label, label) == 0) {
				bf_diag_set(d, json_object_get(e, "label") != NULL ? lp : ep,
				    "workload \"%s\" is suite[%zu]'s already; give each entry of one "
				    "recipe a \"label\" of its own", label, j);
				return BF_ERR_INVALID;
			}
	}
	if ((job->recipe = strdup(JOB_SUITE_RECIPE)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

int
job_validate_suite(const struct job_spec *job, const struct recipe *const *recs,
    const char *workdir_root, struct bf_diag *d)
{
	return job_validate_suite_all(job, recs, workdir_root, d, NULL);
}

int
job_validate_suite_all(const struct job_spec *job, const struct recipe *const *recs,
    const char *workdir_root, struct bf_diag *d, struct bf_diag_list *l)
{
	char ep[BF_DIAG_FIELD];
	struct bf_diag_list *sub = NULL;
	struct bf_diag x;
	size_t i, k, before = l != NULL ? l->total : 0;
	int r;

	bf_diag_clear(d);
	if (!job_is_suite(job)) {
		bf_diag_set(d, "suite", "the job is not a suite");
		return BF_ERR_INVALID;
	}
	/* each entry's errors, collected on their own, go into l under suite[i] */
	if (l != NULL && (sub = calloc(1, sizeof(*sub))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < job->nsuite; i++) {
		bf_diag_list_clear(sub);
		jx_path_idx(ep, sizeof(ep), "suite", i);
		r = job_validate_all(job->suite[i].job, recs[i], workdir_root, d, sub);
		if (r != 0 && (sub == NULL || sub->total == 0 || r != BF_ERR_INVALID)) {
			job_diag_prefix(d, ep);
			goto out;
		}
		for (k = 0; sub != NULL && k < sub->n; k++) {
			x = sub->item[k];
			job_diag_prefix(&x, ep);
			bf_diag_list_add(l, &x);
		}
		if (sub != NULL && sub->total > sub->n)
			l->total += sub->total - sub->n;	/* past the entry's cap: counted */
	}
	r = job_notes_end(0, d, l, before);
out:
	free(sub);
	return r;
}

int
job_suite_find(const struct job_spec *job, const char *label)
{
	size_t i;

	for (i = 0; label != NULL && i < job->nsuite; i++)
		if (strcmp(job->suite[i].label, label) == 0)
			return (int)i;
	return -1;
}
