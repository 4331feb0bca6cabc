/*
 * bundle-kernels.c: the kernels a bundle's job built (issue 18,
 * docs/bundle.md "kernel_builds"): for each kernel of the job's "kernels"
 * that a run booted, its build key, release and the sha256 of each
 * artifact, so that another lab can rebuild the identical kernel from the
 * job's spec and compare, or fetch the artifacts themselves from
 * GET /api/v1/artifacts/{sha256} and check them by name.
 */
#include <string.h>

#include <jansson.h>

#include "boot.h"
#include "bundle.h"
#include "bundle-int.h"
#include "jx.h"
#include "kspec.h"
#include "sha256.h"
#include "store.h"

/* s as a JSON string, or null when empty. */
static json_t *
str_or_null(const char *s)
{
	return s[0] != '\0' ? json_string(s) : json_null();
}

/* The entry of build b for kernel name. NULL on ENOMEM. */
static json_t *
kernel_entry(const char *name, const struct store_kbuild *b)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o}", "name", name, "release",
	    b->release, "key", b->key, "config_sha256", b->config_sha256, "image_sha256",
	    b->image_sha256, "modules_sha256", str_or_null(b->modules_sha256),
	    "sysmap_sha256", str_or_null(b->sysmap_sha256), "log_sha256",
	    str_or_null(b->log_sha256));
}

int
bundle_export_kernels(struct store *st, const json_t *job, const json_t *runs, json_t *doc,
    struct bf_diag *d)
{
	const json_t *kernels = json_object_get(job, "kernels"), *run;
	json_t *out, *seen = NULL, *e;
	struct store_kbuild b;
	const char *name, *rel;
	size_t i;
	int r;

	if (!json_is_object(kernels))
		return 0;	/* nothing built: the bundle has no such key */
	if ((out = json_array()) == NULL || json_object_set_new(doc, "kernel_builds", out) != 0 ||
	    (seen = json_object()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(runs, i, run) {
		name = json_string_value(json_object_get(run, "req_kernel"));
		rel = json_string_value(json_object_get(run, "kernel"));
		if (name == NULL || rel == NULL || json_object_get(kernels, name) == NULL ||
		    json_object_get(seen, rel) != NULL)
			continue;
		if ((r = store_kbuild_by_release(st, rel, &b)) == BF_ERR_NOTFOUND ||
		    r == BF_ERR_INVALID)
			continue;	/* the run failed before its kernel booted */
		if (r != 0) {
			bf_diag_set(d, "kernel_builds", "reading the build of %s: %s", rel,
			    bf_err_str(r));
			goto out;
		}
		if ((e = kernel_entry(name, &b)) == NULL || json_array_append_new(out, e) != 0 ||
		    json_object_set_new(seen, rel, json_true()) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	r = 0;
out:
	json_decref(seen);
	return r;
}

/* obj[key]: 64 lowercase hex, or null when nullable. */
static int
kb_hash(const json_t *obj, const char *key, int nullable, const char *path, struct bf_diag *d)
{
	const json_t *v = json_object_get(obj, key);
	char q[96];

	if (nullable && json_is_null(v))
		return 0;
	if (!json_is_string(v) || !sha256_is_hex(json_string_value(v))) {
		bf_diag_set(d, jx_path(q, sizeof(q), path, key), "not a sha256 (64 "
		    "lowercase hex)%s", nullable ? " or null" : "");
		return BF_ERR_INVALID;
	}
	return 0;
}

int
bundle_check_kernels(const json_t *doc, struct bf_diag *d)
{
	static const char *const keys[] = { "name", "release", "key", "config_sha256",
	    "image_sha256", "modules_sha256", "sysmap_sha256", "log_sha256", NULL };
	const json_t *kernels = json_object_get(json_object_get(doc, "job"), "kernels");
	json_t *a, *e;
	const char *name, *rel;
	char p[64], q[96];
	size_t i;
	int r;

	if (json_object_get(doc, "kernel_builds") == NULL)
		return 0;
	if ((r = jx_arr(doc, "kernel_builds", 1, 0, BUNDLE_MAX_KERNEL_BUILDS, &a, "", d)) != 0)
		return r;
	json_array_foreach(a, i, e) {
		jx_path_idx(p, sizeof(p), "kernel_builds", i);
		if (!json_is_object(e)) {
			bf_diag_set(d, p, "an entry is an object");
			return BF_ERR_INVALID;
		}
		if ((r = jx_only_keys(e, keys, p, d)) != 0 ||
		    (r = jx_str(e, "name", 1, BF_MAX_NAME, &name, p, d)) != 0 ||
		    (r = jx_str(e, "release", 1, STORE_KB_MAX_RELEASE, &rel, p, d)) != 0 ||
		    (r = kb_hash(e, "key", 0, p, d)) != 0 ||
		    (r = kb_hash(e, "config_sha256", 0, p, d)) != 0 ||
		    (r = kb_hash(e, "image_sha256", 0, p, d)) != 0 ||
		    (r = kb_hash(e, "modules_sha256", 1, p, d)) != 0 ||
		    (r = kb_hash(e, "sysmap_sha256", 1, p, d)) != 0 ||
		    (r = kb_hash(e, "log_sha256", 1, p, d)) != 0)
			return r;
		if (json_object_get(kernels, name) == NULL) {
			bf_diag_set(d, jx_path(q, sizeof(q), p, "name"), "\"%s\" is not a "
			    "kernel of the bundle's job", name);
			return BF_ERR_INVALID;
		}
		if (boot_check_release(rel, NULL) != 0) {
			bf_diag_set(d, jx_path(q, sizeof(q), p, "release"), "not a kernel "
			    "release");
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

/* {"key", "release", "config_sha256"} of entry e (a bundle's or ours). */
static json_t *
kb_brief(const char *key, const char *release, const char *config)
{
	return json_pack("{s:s,s:s,s:s}", "key", key, "release", release, "config_sha256",
	    config);
}

int
bundle_kernels_compare(struct store *st, const json_t *bundle, const json_t *runs,
    json_t **out)
{
	const json_t *e, *run;
	json_t *arr, *v, *here;
	struct store_kbuild b;
	const char *name, *key, *cfg, *rk, *rel;
	size_t i, j;
	int r, found;

	*out = NULL;
	if (json_object_get(bundle, "kernel_builds") == NULL)
		return 0;
	if ((arr = json_array()) == NULL)
		return BF_ERR_ALLOC;
	/* bundle_check checked every entry's fields */
	json_array_foreach(json_object_get(bundle, "kernel_builds"), i, e) {
		name = json_string_value(json_object_get(e, "name"));
		key = json_string_value(json_object_get(e, "key"));
		cfg = json_string_value(json_object_get(e, "config_sha256"));
		found = 0;
		here = NULL;
		json_array_foreach(runs, j, run) {
			rk = json_string_value(json_object_get(run, "req_kernel"));
			rel = json_string_value(json_object_get(run, "kernel"));
			if (rk == NULL || rel == NULL || strcmp(rk, name) != 0)
				continue;
			if ((r = store_kbuild_by_release(st, rel, &b)) == BF_ERR_NOTFOUND ||
			    r == BF_ERR_INVALID)
				continue;
			if (r != 0)
				goto fail;
			found = 1;
			break;
		}
		if (found && (here = kb_brief(b.key, b.release, b.config_sha256)) == NULL) {
			r = BF_ERR_ALLOC;
			goto fail;
		}
		v = json_pack("{s:s,s:o,s:o,s:o,s:o}", "name", name, "bundle", kb_brief(key,
		    json_string_value(json_object_get(e, "release")), cfg), "here",
		    here != NULL ? here : json_null(), "same_build", found ?
		    json_boolean(strcmp(b.key, key) == 0) : json_null(), "same_config", found ?
		    json_boolean(strcmp(b.config_sha256, cfg) == 0) : json_null());
		if (v == NULL || json_array_append_new(arr, v) != 0) {
			r = BF_ERR_ALLOC;
			goto fail;
		}
	}
	*out = arr;
	return 0;
fail:
	json_decref(arr);
	return r;
}
