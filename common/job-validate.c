/*
 * job-validate.c: a parsed job against its recipe (job.h). Each check of
 * one field goes on to the next field when the caller collects errors
 * (job_validate_all), so a form shows every field at fault at once; a
 * caller that does not (the runner, bundles) gets the first as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "job.h"
#include "jx.h"
#include "knob.h"
#include "matrix.h"
#include "recipe.h"

/* Preset names, comma-separated, for the message about a missing one. */
static const char *
job_preset_names(const struct recipe *r, char *buf, size_t bufsz)
{
	const char *k;
	json_t *v;
	size_t off = 0;
	int n;

	buf[0] = '\0';
	json_object_foreach(r->presets, k, v) {
		if (off >= bufsz)
			break;
		n = snprintf(buf + off, bufsz - off, "%s%s", off ? ", " : "", k);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		snprintf(buf, bufsz, "(none)");
	return buf;
}

/*
 * A path parameter the job leaves to its preset or the recipe's default
 * must be under the root too: the recipe was checked without one.
 */
static int
job_check_path_defaults(const struct job_spec *job, const struct recipe *rc,
    const char *root, struct bf_diag *d, struct bf_diag_list *l)
{
	char ap[BF_DIAG_FIELD];
	struct bf_diag sub;
	const struct recipe_param *p;
	const json_t *preset = NULL, *v;
	size_t i;
	int r;

	if (job->preset != NULL)
		preset = json_object_get(rc->presets, job->preset);
	for (i = 0; i < rc->nparams; i++) {
		p = &rc->params[i];
		if (p->type != RECIPE_P_PATH || json_object_get(job->matrix, p->name) != NULL ||
		    json_object_get(job->params, p->name) != NULL)
			continue;
		v = preset != NULL ? json_object_get(preset, p->name) : NULL;
		jx_path(ap, sizeof(ap), "params", p->name);
		bf_diag_clear(&sub);
		if ((r = recipe_check_value(p, v != NULL ? v : p->def, root, ap, &sub)) != 0) {
			bf_diag_set(d, ap, "%s (the %s%s of recipe %s; give params.%s)",
			    sub.msg + (strncmp(sub.msg, ap, strlen(ap)) == 0 ? strlen(ap) + 2 : 0),
			    v != NULL ? "value in preset " : "default", v != NULL ? job->preset : "",
			    rc->name, p->name);
			if ((r = job_note(r, d, l)) != 0)
				return r;
		}
	}
	return 0;
}

/* One matrix axis k (path ap) of values arr against the recipe. */
static int
job_check_axis(const struct job_spec *job, const struct recipe *rc, const char *k,
    const json_t *arr, const char *ap, const char *workdir_root, struct bf_diag *d,
    struct bf_diag_list *l)
{
	char ep[BF_DIAG_FIELD], names[BF_DIAG_MSG];
	const struct recipe_param *p = recipe_param(rc, k);
	const json_t *v;
	size_t i;
	int r;

	if (p != NULL && knob_find(k) != NULL) {
		bf_diag_set(d, ap, "is both a parameter of recipe %s and a knob; rename "
		    "the parameter", rc->name);
		return job_note(BF_ERR_INVALID, d, l);
	}
	if (p == NULL && !job_is_boot_axis(k) && knob_find(k) == NULL) {
		bf_diag_set(d, ap, "names no parameter or knob; parameters are %s",
		    recipe_param_names(rc, names, sizeof(names)));
		return job_note(BF_ERR_INVALID, d, l);
	}
	if (p == NULL && job_is_boot_axis(k) && json_object_get(job->json, k) != NULL) {
		bf_diag_set(d, ap, "is both an axis and a fixed \"%s\" of the job", k);
		return job_note(BF_ERR_INVALID, d, l);
	}
	for (i = 0; i < json_array_size(arr); i++) {
		v = json_array_get(arr, i);
		jx_path_idx(ep, sizeof(ep), ap, i);
		if (p != NULL)
			r = recipe_check_value(p, v, workdir_root, ep, d);
		else if (!job_is_boot_axis(k))
			r = job_check_knob(k, v, ep, d);
		else if (!json_is_string(v)) {
			bf_diag_set(d, ep, "expected a string, got %s", jx_type_name(v));
			r = BF_ERR_INVALID;
		} else
			r = strcmp(k, "kernel") == 0 ? job_check_kernel(json_string_value(v), ep, d) :
			    job_check_cmdline(json_string_value(v), ep, d);
		if ((r = job_note(r, d, l)) != 0)
			return r;
	}
	return 0;
}

int
job_validate(const struct job_spec *job, const struct recipe *rc, const char *workdir_root,
    struct bf_diag *d)
{
	return job_validate_all(job, rc, workdir_root, d, NULL);
}

int
job_validate_all(const struct job_spec *job, const struct recipe *rc,
    const char *workdir_root, struct bf_diag *d, struct bf_diag_list *l)
{
	char ap[BF_DIAG_FIELD], names[BF_DIAG_MSG];
	const struct recipe_param *p;
	const char *k;
	json_t *arr, *v;
	size_t i, n, before = l != NULL ? l->total : 0;
	int r;

	bf_diag_clear(d);
	if (job_is_suite(job)) {
		bf_diag_set(d, "suite", "a suite is validated entry by entry "
		    "(job_validate_suite)");
		return BF_ERR_INVALID;
	}
	if (strcmp(job->recipe, rc->name) != 0) {
		bf_diag_set(d, "recipe", "job names \"%s\" but the recipe is \"%s\"", job->recipe,
		    rc->name);
		return BF_ERR_INVALID;
	}
	if (job->target_metric != NULL) {
		for (i = 0; i < rc->nmetrics; i++)
			if (strcmp(rc->metrics[i].name, job->target_metric) == 0)
				break;
		if (i == rc->nmetrics) {
			bf_diag_set(d, "repetitions.target_metric", "\"%s\" is not a metric of "
			    "recipe %s", job->target_metric, rc->name);
			if ((r = job_note(BF_ERR_INVALID, d, l)) != 0)
				return r;
		}
	}
	if (job->preset != NULL && json_object_get(rc->presets, job->preset) == NULL) {
		bf_diag_set(d, "preset", "\"%s\" is not one of %s", job->preset,
		    job_preset_names(rc, names, sizeof(names)));
		if ((r = job_note(BF_ERR_INVALID, d, l)) != 0)
			return r;
	}
	json_object_foreach(job->matrix, k, arr) {
		jx_path(ap, sizeof(ap), "matrix", k);
		if ((r = job_check_axis(job, rc, k, arr, ap, workdir_root, d, l)) != 0)
			return r;
	}
	json_object_foreach(job->params, k, v) {
		jx_path(ap, sizeof(ap), "params", k);
		if ((p = recipe_param(rc, k)) == NULL) {
			bf_diag_set(d, ap, "names no parameter; parameters are %s",
			    recipe_param_names(rc, names, sizeof(names)));
			r = BF_ERR_INVALID;
		} else
			r = recipe_check_value(p, v, workdir_root, ap, d);
		if ((r = job_note(r, d, l)) != 0)
			return r;
	}
	if ((r = job_check_path_defaults(job, rc, workdir_root, d, l)) != 0)
		return r;
	json_object_foreach(job->knobs, k, v) {
		if (recipe_param(rc, k) != NULL) {
			bf_diag_set(d, jx_path(ap, sizeof(ap), "knobs", k), "is both a parameter "
			    "of recipe %s and a knob; rename the parameter", rc->name);
			if ((r = job_note(BF_ERR_INVALID, d, l)) != 0)
				return r;
		}
	}
	if ((r = matrix_count(job->matrix, &n, d)) != 0)
		return r;
	return job_notes_end(0, d, l, before);
}
