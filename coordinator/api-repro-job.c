/*
 * api-repro-job.c: what the rerun of a bundle runs (docs/bundle.md). A
 * bundle's recipe never runs as such: each recipe it names (one, or one per
 * workload of a suite) must be installed here under the same canonical
 * sha256, and the job is the bundle's, planned here as POST /jobs plans a
 * job (plan_suite for a suite) with this lab's matched machines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "job.h"
#include "jx.h"
#include "kspec.h"
#include "path.h"
#include "plan.h"
#include "recipe.h"
#include "recipes.h"
#include "repro.h"
#include "store.h"

/*
 * The installed recipe of canonical sha256 rh for the bundle's recipe brec,
 * the entry field (recipe, recipes[i]) of workload (NULL for one recipe).
 * None: 409 with the field-by-field diff against the local recipe of the
 * same name, or "no local recipe named X", and rs filled.
 */
static int
repro_local_recipe(struct api *a, const json_t *brec, const char *rh, const char *field,
    const char *workload, struct recipe **recp, struct api_resp *rs)
{
	const char *name = json_string_value(json_object_get(brec, "name"));
	json_t *local = NULL, *diff = NULL, *f;
	struct bf_diag d;
	char fields[512], msg[900], who[BF_MAX_NAME + 64];
	size_t i, len = 0;
	int r, n;

	bf_diag_clear(&d);
	*recp = NULL;
	if ((r = recipes_lookup_sha(a->rs, a->st, rh, recp, &d)) == 0)
		return 0;
	if (r != BF_ERR_NOTFOUND) {
		if (r == BF_ERR_DB)
			api_store_error(rs, r, "recipes");
		else
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "the installed recipe "
			    "does not load: %s", d.msg[0] ? d.msg : bf_err_str(r));
		return r;
	}
	if (name == NULL || strlen(name) > BF_MAX_NAME || jx_check_name(name, "", NULL) != 0) {
		api_error(rs, MHD_HTTP_CONFLICT, field, "%s: the bundle's recipe has no valid "
		    "name: it is not installed here, and nothing was scheduled", field);
		return BF_ERR_NOTFOUND;
	}
	/* workload passed bundle_check: a name */
	if (workload != NULL)
		snprintf(who, sizeof(who), "%s (workload %s)", field, workload);
	else
		snprintf(who, sizeof(who), "%s", field);
	r = recipes_lookup_name(a->rs, a->st, name, &local);
	if (r == BF_ERR_NOTFOUND) {
		snprintf(msg, sizeof(msg), "%s: recipe %s: no local recipe named %s; a rerun runs "
		    "installed recipes only (an admin may install it: benchfleet recipes import); "
		    "nothing was scheduled", who, name, name);
		api_json(rs, MHD_HTTP_CONFLICT, json_pack("{s:s,s:{s:s,s:s,s:s?,s:n}}", "error",
		    msg, "detail", "field", field, "recipe", name, "workload", workload,
		    "differs"));
		return BF_ERR_NOTFOUND;
	}
	if (r != 0) {
		api_store_error(rs, r, "recipes");
		return r;
	}
	if ((diff = json_array()) == NULL ||
	    (r = repro_diff(brec, local, "", NULL, diff)) != 0) {
		json_decref(local);
		json_decref(diff);
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		return BF_ERR_ALLOC;
	}
	fields[0] = '\0';
	json_array_foreach(diff, i, f) {
		n = snprintf(fields + len, sizeof(fields) - len, "%s%s", i ? ", " : "",
		    json_string_value(json_object_get(f, "field")));
		if (n < 0 || (size_t)n >= sizeof(fields) - len) {
			fields[len] = '\0';	/* the rest is in detail.differs */
			break;
		}
		len += (size_t)n;
	}
	snprintf(msg, sizeof(msg), "%s: recipe %s: the bundle's recipe is not the one installed "
	    "here (it differs in %s); a rerun runs installed recipes only, and nothing was "
	    "scheduled", who, name, fields[0] ? fields : "key order or types only");
	api_json(rs, MHD_HTTP_CONFLICT, json_pack("{s:s,s:{s:s,s:s,s:s?,s:o}}", "error", msg,
	    "detail", "field", field, "recipe", name, "workload", workload, "differs", diff));
	json_decref(local);
	return BF_ERR_NOTFOUND;
}

int
api_repro_recipes(struct api *a, const json_t *bundle, struct recipe **recs, size_t *nrecs,
    struct api_resp *rs)
{
	const json_t *arr = json_object_get(bundle, "recipes"), *e;
	char field[32];
	size_t i;
	int r;

	*nrecs = 0;
	if (arr == NULL)
		return repro_local_recipe(a, json_object_get(bundle, "recipe"),
		    json_string_value(json_object_get(bundle, "recipe_sha256")), "recipe", NULL,
		    &recs[(*nrecs)++], rs);
	/* bundle_check bounded it to BF_MAX_SUITE entries of this shape */
	json_array_foreach(arr, i, e) {
		if (i >= BF_MAX_SUITE)
			return BF_ERR_INVALID;
		snprintf(field, sizeof(field), "recipes[%zu]", i);
		if ((r = repro_local_recipe(a, json_object_get(e, "recipe"),
		    json_string_value(json_object_get(e, "recipe_sha256")), field,
		    json_string_value(json_object_get(e, "workload")), &recs[(*nrecs)++], rs)) != 0)
			return r;
	}
	return 0;
}

/* o[key] (an object, made when absent) updated with over. */
static int
repro_merge(json_t *doc, const char *key, const json_t *over)
{
	json_t *o;

	if (over == NULL)
		return 0;
	if ((o = json_object_get(doc, key)) == NULL) {
		if (json_object_set_new(doc, key, json_object()) != 0)
			return BF_ERR_ALLOC;
		o = json_object_get(doc, key);
	}
	if (!json_is_object(o) || json_object_update(o, (json_t *)over) != 0)
		return BF_ERR_ALLOC;
	return 0;
}

/*
 * The bundle's kernels built from this lab's trees: each kernel of the
 * job's "kernels" gets the git path given for it in kernels (request's
 * {"NAME": {"git": PATH}}); commit, config, fragments and localversion stay
 * the bundle's, so the build key comes out the same when the tree, the
 * config and the compiler are (the bundle's kernel_builds say which it
 * was). Every kernel needs a tree; patches are the exporting lab's files,
 * which a bundle does not carry. BF_ERR_INVALID with d naming the field.
 */
static int
repro_kernels(json_t *job, const json_t *kernels, struct bf_diag *d)
{
	static const char *const keys[] = { "git", NULL };
	json_t *bk = json_object_get(job, "kernels"), *spec, *e;
	const char *name, *git;
	char p[BF_MAX_NAME + 32];
	int r;

	if (kernels != NULL && !json_is_object(bk)) {
		bf_diag_set(d, "kernels", "the bundle's job builds no kernels");
		return BF_ERR_INVALID;
	}
	json_object_foreach((json_t *)kernels, name, e) {
		snprintf(p, sizeof(p), "kernels.%.*s", BF_MAX_NAME, name);
		if (json_object_get(bk, name) == NULL) {
			bf_diag_set(d, p, "the bundle's job has no kernel of that name");
			return BF_ERR_INVALID;
		}
		if (!json_is_object(e)) {
			bf_diag_set(d, p, "expected {\"git\": PATH}");
			return BF_ERR_INVALID;
		}
		if ((r = jx_only_keys(e, keys, p, d)) != 0 ||
		    (r = jx_str(e, "git", JX_REQUIRED, PATH_CHECK_MAX, &git, p, d)) != 0)
			return r;
	}
	json_object_foreach(bk, name, spec) {
		snprintf(p, sizeof(p), "kernels.%.*s", BF_MAX_NAME, name);
		e = json_object_get(json_object_get(kernels, name), "git");
		if (e == NULL) {
			bf_diag_set(d, p, "the bundle's job builds kernel %s from the other lab's git "
			    "tree; give this lab's: \"kernels\": {\"%s\": {\"git\": PATH}}", name,
			    name);
			return BF_ERR_INVALID;
		}
		if (json_array_size(json_object_get(spec, "patches")) > 0) {
			snprintf(p, sizeof(p), "kernels.%.*s.patches", BF_MAX_NAME, name);
			bf_diag_set(d, p, "the bundle's kernel %s applies patch files of the other "
			    "lab, which a bundle does not carry: rebuild it from a tree with the "
			    "patches committed", name);
			return BF_ERR_INVALID;
		}
		/* the path is checked against this lab's git roots with the job */
		if (!json_is_object(spec) || json_object_set(spec, "git", e) != 0)
			return BF_ERR_INVALID;
	}
	return 0;
}

int
api_repro_job_create(struct api *a, struct api_req *rq, const json_t *bundle,
    const json_t *params, const json_t *knobs, const json_t *kernels,
    const struct recipe *const *recs,
    size_t nrecs, json_t *names, int64_t *idp, struct bf_diag *d)
{
	struct job_spec *job = NULL;
	struct plan *p = NULL;
	char *namestxt = NULL;
	json_t *doc = NULL, *machines, *spread;
	int r, suite = json_object_get(bundle, "recipes") != NULL;

	if (suite && params != NULL) {
		/* a suite has no params of its own: each entry's are its recipe's */
		bf_diag_set(d, "params", "a suite's bundle takes no params override (each "
		    "workload has its own parameters); knobs apply to every workload");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((doc = json_deep_copy(json_object_get(bundle, "job"))) == NULL ||
	    (machines = json_pack("{s:O}", "names", names)) == NULL)
		goto oom;
	/* where the cells ran is part of the design: a pin or block job is
	 * reproduced pinned or blocked (job_from_json checks the value) */
	spread = json_object_get(json_object_get(doc, "machines"), "spread");
	if (spread != NULL && json_object_set(machines, "spread", spread) != 0) {
		json_decref(machines);
		goto oom;
	}
	/* set_new takes machines, also when it fails */
	if (json_object_set_new(doc, "machines", machines) != 0 ||
	    repro_merge(doc, "params", params) != 0 || repro_merge(doc, "knobs", knobs) != 0)
		goto oom;
	/* another lab's git paths mean nothing here: this lab's trees */
	if ((r = repro_kernels(doc, kernels, d)) != 0)
		goto out;
	/* the same plan as POST /jobs makes of it (plan.h) */
	if ((r = job_from_json(doc, &job, d)) != 0 ||
	    (r = kspec_check_roots(job->kernels, a->cfg.kernel_git_roots, d)) != 0)
		goto out;
	if (job_is_suite(job) != suite || (suite ? job->nsuite != nrecs : nrecs != 1)) {
		bf_diag_set(d, "job", "the bundle's job is %s, its recipes %zu",
		    job_is_suite(job) ? "a suite" : "one recipe's", nrecs);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = suite ? job_validate_suite(job, recs, a->cfg.workdir_root, d) :
	    job_validate(job, recs[0], a->cfg.workdir_root, d)) != 0 ||
	    (r = suite ? plan_suite(job, recs, &p, d) : plan_job(job, recs[0], &p, d)) != 0 ||
	    (r = api_plan_machines(a, job, p, d)) != 0)
		goto out;
	if ((namestxt = json_dumps(names, JSON_COMPACT)) == NULL)
		goto oom;
	if (suite) {
		if ((r = store_job_create_suite(a->st, job, recs, p, p->machine_class, namestxt,
		    auth_job_owner(&rq->who), idp)) != 0)
			bf_diag_set(d, NULL, "job: %s", bf_err_str(r));
	} else
		r = api_plan_store(a, rq, job, recs[0], p, namestxt, idp, d);
	goto out;
oom:
	r = BF_ERR_ALLOC;
	bf_diag_set(d, NULL, "out of memory");
out:
	free(namestxt);
	json_decref(doc);
	plan_free(p);
	job_free(job);
	return r;
}
