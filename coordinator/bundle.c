/*
 * bundle.c: export and verification of result bundles (bundle.h). The
 * export is built from the store's own JSON (job, runs, machines); the
 * check walks every field through jx.h before recomputing the hashes, so
 * that a hostile document is refused by name and never half-trusted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-view.h"
#include "bundle.h"
#include "fingerprint.h"
#include "jx.h"
#include "sha256.h"
#include "bundle-int.h"
#include "store.h"

#ifndef BF_VERSION
#define BF_VERSION "0"
#endif

int
bundle_sha256(const json_t *v, char hex[65])
{
	char *text;

	if (v == NULL)
		return BF_ERR_INVALID;
	if ((text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)) == NULL)
		return BF_ERR_ALLOC;
	sha256_hex(text, strlen(text), hex);
	free(text);
	return 0;
}

int
bundle_content_sha256(const json_t *doc, char hex[65])
{
	json_t *c;
	int r;

	if (!json_is_object(doc))
		return BF_ERR_INVALID;
	/* A shallow copy: dropping the key there leaves doc as it is. */
	if ((c = json_copy((json_t *)doc)) == NULL)
		return BF_ERR_ALLOC;
	json_object_del(c, "sha256");
	json_object_del(c, "signature");
	r = bundle_sha256(c, hex);
	json_decref(c);
	return r;
}

int
bundle_signed_message(const json_t *doc, unsigned char **msgp, size_t *lenp)
{
	static const char ctx[] = BUNDLE_SIG_CONTEXT;
	json_t *c = NULL;
	char *text = NULL;
	unsigned char *m;
	size_t n;
	int r;

	*msgp = NULL;
	if (!json_is_object(doc))
		return BF_ERR_INVALID;
	if ((c = json_copy((json_t *)doc)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_object_del(c, "signature");
	if ((text = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	n = strlen(text);
	if ((m = malloc(sizeof(ctx) - 1 + n)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	memcpy(m, ctx, sizeof(ctx) - 1);
	memcpy(m + sizeof(ctx) - 1, text, n);
	*msgp = m;
	*lenp = sizeof(ctx) - 1 + n;
	r = 0;
out:
	free(text);
	json_decref(c);
	return r;
}

int
bundle_sign(json_t *doc, const char *lab, const unsigned char pub[LABKEY_PUB_LEN],
    bundle_signer sign, void *arg)
{
	unsigned char *msg = NULL, sig[LABKEY_SIG_LEN];
	char pub64[LABKEY_PUB_B64_LEN + 1], sig64[LABKEY_SIG_B64_LEN + 1];
	size_t len = 0;
	int r;

	if (sign == NULL || lab == NULL)
		return BF_ERR_INVALID;
	if ((r = bundle_signed_message(doc, &msg, &len)) != 0)
		goto out;
	if ((r = sign(arg, msg, len, sig)) != 0)
		goto out;
	labkey_b64(pub, LABKEY_PUB_LEN, pub64);
	labkey_b64(sig, LABKEY_SIG_LEN, sig64);
	if (json_object_set_new(doc, "signature", json_pack("{s:s,s:s,s:s,s:s}", "alg",
	    BUNDLE_SIG_ALG, "lab", lab, "public_key", pub64, "sig", sig64)) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	free(msg);
	return r;
}

int
bundle_sign_check(struct store *st, const unsigned char *msg, size_t len, struct bf_diag *d)
{
	static const char ctx[] = BUNDLE_SIG_CONTEXT;
	const size_t clen = sizeof(ctx) - 1;
	json_t *doc = NULL, *mine = NULL, *id;
	unsigned char *want = NULL;
	size_t wlen = 0;
	int r;

	if (len <= clen || memcmp(msg, ctx, clen) != 0) {
		bf_diag_set(d, "sign", "not a bundle's signed message (no %.30s context)", ctx);
		r = BF_ERR_AUTH;
		goto out;
	}
	if (jx_loads((const char *)msg + clen, len - clen, len - clen, &doc, d) != 0 ||
	    (id = json_object_get(json_object_get(doc, "origin"), "job_id")) == NULL ||
	    !json_is_integer(id) || json_integer_value(id) < 1) {
		bf_diag_set(d, "sign", "not a bundle naming its job (origin.job_id)");
		r = BF_ERR_AUTH;
		goto out;
	}
	if ((r = bundle_export(st, json_integer_value(id), &mine, d)) != 0) {
		if (r == BF_ERR_NOTFOUND || r == BF_ERR_INVALID) {
			bf_diag_set(d, "sign", "origin.job_id %lld: no such job to export",
			    (long long)json_integer_value(id));
			r = BF_ERR_AUTH;
		}
		goto out;
	}
	if ((r = bundle_signed_message(mine, &want, &wlen)) != 0)
		goto out;
	if (wlen != len || memcmp(want, msg, len) != 0) {
		bf_diag_set(d, "sign", "the bundle of job %lld is not what this store exports "
		    "for it (%zu bytes asked, %zu exported)", (long long)json_integer_value(id),
		    len, wlen);
		r = BF_ERR_AUTH;
		goto out;
	}
	r = 0;
out:
	free(want);
	json_decref(mine);
	json_decref(doc);
	return r;
}

int
bundle_signature(const json_t *doc, struct bundle_sig *out, struct bf_diag *d)
{
	static const char *const keys[] = { "alg", "lab", "public_key", "sig", NULL };
	struct bundle_sig bs;
	unsigned char *msg = NULL, sig[LABKEY_SIG_LEN];
	const char *alg, *lab, *pub, *sg;
	json_t *so;
	size_t len = 0;
	int r;

	memset(&bs, 0, sizeof(bs));
	if ((so = json_object_get(doc, "signature")) == NULL) {
		r = 0;
		goto done;
	}
	if ((r = jx_obj(doc, "signature", JX_REQUIRED, &so, "", d)) != 0 ||
	    (r = jx_only_keys(so, keys, "signature", d)) != 0 ||
	    (r = jx_str(so, "alg", JX_REQUIRED, 16, &alg, "signature", d)) != 0 ||
	    (r = jx_str(so, "lab", JX_REQUIRED, BF_MAX_NAME, &lab, "signature", d)) != 0 ||
	    (r = jx_check_name(lab, "signature.lab", d)) != 0 ||
	    (r = jx_str(so, "public_key", JX_REQUIRED, LABKEY_PUB_B64_LEN, &pub, "signature",
	    d)) != 0 ||
	    (r = jx_str(so, "sig", JX_REQUIRED, LABKEY_SIG_B64_LEN, &sg, "signature", d)) != 0)
		goto out;
	if (strcmp(alg, BUNDLE_SIG_ALG) != 0) {
		bf_diag_set(d, "signature.alg", "\"%.16s\" is not \"%s\"", alg,
		    BUNDLE_SIG_ALG);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (labkey_unb64(pub, bs.pub, LABKEY_PUB_LEN) != 0) {
		bf_diag_set(d, "signature.public_key", "expected the "
		    "base64 of 32 bytes");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (labkey_unb64(sg, sig, LABKEY_SIG_LEN) != 0) {
		bf_diag_set(d, "signature.sig", "expected the base64 of 64 bytes");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = bundle_signed_message(doc, &msg, &len)) != 0)
		goto out;
	labkey_fingerprint(bs.pub, bs.fingerprint);
	if ((r = labkey_verify(bs.pub, msg, len, sig)) != 0) {
		if (r == BF_ERR_AUTH) {
			bf_diag_set(d, "signature", "does not verify under the key it "
			    "names (%s): the bundle was changed after it was signed, or the "
			    "signature is forged", bs.fingerprint);
			r = BF_ERR_INVALID;
		}
		goto out;
	}
	bs.present = 1;
	snprintf(bs.lab, sizeof(bs.lab), "%s", lab);
	r = 0;
done:
	if (out != NULL)
		*out = bs;
out:
	free(msg);
	return r;
}

static int
set_new(json_t *o, const char *k, json_t *v)
{
	if (v == NULL || json_object_set_new(o, k, v) != 0)
		return BF_ERR_ALLOC;
	return 0;
}

static int
set_hash(json_t *o, const char *k, const json_t *v)
{
	char hex[65];
	int r;

	if ((r = bundle_sha256(v, hex)) != 0)
		return r;
	return set_new(o, k, json_string(hex));
}

/* A copy of fp[key] or null. */
static json_t *
fp_get(const json_t *fp, const char *key)
{
	json_t *v = fp != NULL ? json_object_get(fp, key) : NULL;

	return v != NULL ? json_deep_copy(v) : json_null();
}

int
bundle_run_fingerprint(struct store *st, const json_t *runs, const char *name, char **text)
{
	const char *sha;
	json_t *run;
	size_t i;

	*text = NULL;
	json_array_foreach(runs, i, run) {
		if (!json_is_string(json_object_get(run, "machine")) ||
		    strcmp(json_string_value(json_object_get(run, "machine")), name) != 0 ||
		    (sha = json_string_value(json_object_get(run, "fingerprint_doc_sha256"))) == NULL)
			continue;
		return store_fingerprint_get(st, sha, text);
	}
	return 0;
}

/* One machine entry from the store (a deleted machine keeps its name
 * only): its fingerprint as the job's first run on it found it, else (a
 * job from before schema step 10) as it is now. */
static int
machine_entry(struct store *st, const json_t *runs, const char *name, json_t **out)
{
	struct store_machine *m = NULL;
	json_t *e = NULL, *fp = NULL;
	char *then = NULL;
	int r;

	if ((e = json_object()) == NULL)
		return BF_ERR_ALLOC;
	if ((r = bundle_run_fingerprint(st, runs, name, &then)) != 0)
		goto out;
	r = store_machine_get(st, name, &m);
	if (r != 0 && r != BF_ERR_NOTFOUND)
		goto out;
	if (then != NULL)
		fp = json_loads(then, 0, NULL);
	else if (m != NULL && m->fingerprint != NULL)
		fp = json_loads(m->fingerprint, 0, NULL);
	if (fp != NULL && !json_is_object(fp)) {
		json_decref(fp);
		fp = NULL;
	}
	if ((r = set_new(e, "name", json_string(name))) != 0 ||
	    (r = set_new(e, "class", m != NULL ? json_string(m->klass) : json_null())) != 0 ||
	    (r = set_new(e, "fingerprint", fp != NULL ? json_incref(fp) : json_null())) != 0 ||
	    (r = fp != NULL ? set_hash(e, "fingerprint_sha256", fp) :
	    set_new(e, "fingerprint_sha256", json_null())) != 0 ||
	    (r = set_new(e, "kernel", fp_get(fp, "kernel"))) != 0 ||
	    (r = set_new(e, "kernel_config_sha256", fp_get(fp, "kernel_config_sha256"))) != 0 ||
	    (r = set_new(e, "cmdline", fp_get(fp, "cmdline"))) != 0 ||
	    (r = set_new(e, "distro", fp_get(fp, "distro"))) != 0 ||
	    (r = set_new(e, "compiler", fp_get(fp, "kernel_compiler"))) != 0)
		goto out;
	*out = e;
	e = NULL;
	r = 0;
out:
	store_machine_free(m);
	free(then);
	json_decref(fp);
	json_decref(e);
	return r;
}

static json_t *
copy_or_null(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return v != NULL ? json_deep_copy(v) : json_null();
}

int
bundle_export(struct store *st, int64_t job_id, json_t **out, struct bf_diag *d)
{
	json_t *jobj = NULL, *runsj = NULL, *doc = NULL, *machines, *runs, *samples, *names;
	json_t *spec, *job, *recipe, *run, *s, *e = NULL, *v;
	const char *name, *state;
	size_t i, k;
	int r, suite;

	*out = NULL;
	if ((r = api_view_job_get(st, job_id, &jobj)) != 0 ||
	    (r = api_view_job_runs_get(st, job_id, 1, &runsj)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			bf_diag_set(d, NULL, "job %lld not found", (long long)job_id);
		goto out;
	}
	spec = json_object_get(jobj, "spec");
	job = json_object_get(spec, "job");
	recipe = json_object_get(spec, "recipe");
	suite = json_object_get(spec, "recipes") != NULL;
	if (!json_is_object(job) || (!suite && !json_is_object(recipe))) {
		bf_diag_set(d, "spec", "job %lld: its stored spec lacks the job or recipe",
		    (long long)job_id);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((doc = json_object()) == NULL || (names = json_object()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = set_new(doc, "x-names", names)) != 0 ||
	    (r = set_new(doc, "format", json_string(BUNDLE_FORMAT))) != 0 ||
	    (r = set_new(doc, "version", json_integer(suite ? BUNDLE_VERSION :
	    BUNDLE_VERSION_SINGLE))) != 0 ||
	    (r = set_new(doc, "benchfleet_version", json_string(BF_VERSION))) != 0 ||
	    (r = set_new(doc, "origin", json_pack("{s:I,s:O,s:O,s:O}", "job_id",
	    (json_int_t)job_id, "state", json_object_get(jobj, "state"), "created_at",
	    json_object_get(jobj, "created_at"), "finished_at",
	    json_object_get(jobj, "finished_at")))) != 0 ||
	    (r = set_new(doc, "job", json_deep_copy(job))) != 0 ||
	    (r = set_hash(doc, "job_sha256", job)) != 0 ||
	    (suite && (r = bundle_export_recipes(job, json_object_get(spec, "recipes"), doc,
	    d)) != 0) ||
	    (!suite && (r = set_new(doc, "recipe", json_deep_copy(recipe))) != 0) ||
	    (!suite && (r = set_hash(doc, "recipe_sha256", recipe)) != 0) ||
	    (r = set_new(doc, "machines", json_array())) != 0 ||
	    (r = set_new(doc, "runs", json_array())) != 0 ||
	    (r = set_new(doc, "samples", json_array())) != 0)
		goto out;
	machines = json_object_get(doc, "machines");
	runs = json_object_get(doc, "runs");
	samples = json_object_get(doc, "samples");
	json_array_foreach(json_object_get(runsj, "runs"), i, run) {
		if ((e = json_object()) == NULL || json_array_append_new(runs, e) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = set_new(e, "id", copy_or_null(run, "id"))) != 0 ||
		    (r = set_new(e, "cell_index", copy_or_null(run, "cell_index"))) != 0 ||
		    (r = set_new(e, "label", copy_or_null(run, "label"))) != 0 ||
		    (r = set_new(e, "axes", copy_or_null(run, "axes"))) != 0 ||
		    (r = set_new(e, "boot", copy_or_null(run, "boot"))) != 0 ||
		    (r = set_new(e, "state", copy_or_null(run, "state"))) != 0 ||
		    (r = set_new(e, "machine", copy_or_null(run, "machine"))) != 0 ||
		    (r = set_new(e, "kernel", copy_or_null(run, "kernel"))) != 0 ||
		    (r = set_new(e, "boot_id", copy_or_null(run, "boot_id"))) != 0 ||
		    (r = set_new(e, "knobs", copy_or_null(run, "knobs"))) != 0 ||
		    (r = set_new(e, "snapshot_sha256", copy_or_null(run, "snapshot_sha256"))) != 0 ||
		    (suite && (r = set_new(e, "workload", copy_or_null(json_object_get(run,
		    "axes"), "workload"))) != 0))
			goto out;
		if (json_is_string(json_object_get(run, "machine")))
			json_object_set(names, json_string_value(json_object_get(run, "machine")),
			    json_true());
		state = json_string_value(json_object_get(run, "state"));
		if (state == NULL || strcmp(state, "done") != 0)
			continue;
		json_array_foreach(json_object_get(run, "samples"), k, s) {
			if ((v = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O}", "run",
			    json_object_get(run, "id"), "boot", json_object_get(s, "boot"),
			    "iteration", json_object_get(s, "iteration"), "metric",
			    json_object_get(s, "metric"), "value", json_object_get(s, "value"),
			    "unit", json_object_get(s, "unit") ? json_object_get(s, "unit") :
			    json_null())) == NULL || json_array_append_new(samples, v) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		}
	}
	if ((r = bundle_export_snapshots(st, runs, doc, d)) != 0 ||
	    (r = bundle_export_kernels(st, job, json_object_get(runsj, "runs"), doc, d)) != 0)
		goto out;
	json_object_foreach(names, name, v) {
		if ((r = machine_entry(st, json_object_get(runsj, "runs"), name, &e)) != 0)
			goto out;
		if (json_array_append_new(machines, e) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	json_object_del(doc, "x-names");
	{
		char hex[65];

		if ((r = bundle_content_sha256(doc, hex)) != 0 ||
		    (r = set_new(doc, "sha256", json_string(hex))) != 0)
			goto out;
	}
	*out = doc;
	doc = NULL;
	r = 0;
out:
	json_decref(doc);
	json_decref(jobj);
	json_decref(runsj);
	return r;
}

/* --- checking --- */

/* obj[key]: a string of at most max bytes, or null (*out = NULL) when nullable. */
static int
str_or_null(const json_t *obj, const char *key, size_t max, int nullable, const char **out,
    const char *path, struct bf_diag *d)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (v != NULL && json_is_null(v) && nullable)
		return 0;
	return jx_str(obj, key, JX_REQUIRED, max, out, path, d);
}

/* obj[key]: absent, null, or a finite number. */
static int
num_or_null(const json_t *obj, const char *key, const char *path, struct bf_diag *d)
{
	json_t *v = json_object_get(obj, key);
	double x;

	if (v == NULL || json_is_null(v))
		return 0;
	return jx_num(obj, key, JX_REQUIRED, -1e300, 1e300, &x, path, d);
}

static int
hash_field(const json_t *obj, const char *key, int nullable, const char **out,
    const char *path, struct bf_diag *d)
{
	char p[128];
	int r;

	if ((r = str_or_null(obj, key, 64, nullable, out, path, d)) != 0)
		return r;
	if (*out != NULL && !sha256_is_hex(*out)) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, key), "expected 64 lowercase hex "
		    "digits (a sha256)");
		return BF_ERR_INVALID;
	}
	return 0;
}

static int
hash_matches(const json_t *v, const char *claimed, const char *field, struct bf_diag *d)
{
	char hex[65];
	int r;

	if ((r = bundle_sha256(v, hex)) != 0)
		return r;
	if (strcmp(hex, claimed) != 0) {
		/* The value the content hashes to is not printed: these are
		 * checksums, and a helpful error would only help a forger. */
		bf_diag_set(d, field, "does not match the content");
		return BF_ERR_INVALID;
	}
	return 0;
}

static int
check_machine(const json_t *m, const char *path, struct bf_diag *d)
{
	static const char *const keys[] = { "name", "class", "fingerprint",
	    "fingerprint_sha256", "kernel", "kernel_config_sha256", "cmdline", "distro",
	    "compiler", NULL };
	const char *s, *fph;
	json_t *fp;
	char p[160];
	int r;

	if (!json_is_object(m)) {
		bf_diag_set(d, path, "expected an object, got %s", jx_type_name(m));
		return BF_ERR_INVALID;
	}
	if ((r = jx_only_keys(m, keys, path, d)) != 0 ||
	    (r = jx_str(m, "name", JX_REQUIRED, BF_MAX_NAME, &s, path, d)) != 0 ||
	    (r = jx_check_name(s, jx_path(p, sizeof(p), path, "name"), d)) != 0 ||
	    (r = str_or_null(m, "class", BF_MAX_NAME, 1, &s, path, d)) != 0 ||
	    (r = hash_field(m, "fingerprint_sha256", 1, &fph, path, d)) != 0 ||
	    (r = str_or_null(m, "kernel", BF_MAX_STR, 1, &s, path, d)) != 0 ||
	    (r = hash_field(m, "kernel_config_sha256", 1, &s, path, d)) != 0 ||
	    (r = str_or_null(m, "cmdline", BF_MAX_STR, 1, &s, path, d)) != 0 ||
	    (r = str_or_null(m, "distro", BF_MAX_STR, 1, &s, path, d)) != 0 ||
	    (r = str_or_null(m, "compiler", BF_MAX_STR, 1, &s, path, d)) != 0)
		return r;
	fp = json_object_get(m, "fingerprint");
	jx_path(p, sizeof(p), path, "fingerprint");
	if (fp == NULL || json_is_null(fp)) {
		if (fph != NULL) {
			bf_diag_set(d, p, "null, but fingerprint_sha256 is set");
			return BF_ERR_INVALID;
		}
		return 0;
	}
	if (!json_is_object(fp)) {
		bf_diag_set(d, p, "expected an object or null, got %s", jx_type_name(fp));
		return BF_ERR_INVALID;
	}
	if ((r = fingerprint_check(fp, p, d)) != 0)
		return r;
	jx_path(p, sizeof(p), path, "fingerprint_sha256");
	if (fph == NULL) {
		bf_diag_set(d, p, "is required with a fingerprint");
		return BF_ERR_INVALID;
	}
	return hash_matches(fp, fph, p, d);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int
check_run(const json_t *doc, const json_t *run, int64_t version, const json_t *snaps,
    const char *path, int64_t *idp, struct bf_diag *d)
{
	static const char *const keys_v1[] = { "id", "cell_index", "label", "axes", "boot",
	    "state", "machine", "kernel", "boot_id", "knobs", NULL };
	static const char *const keys[] = { "id", "cell_index", "label", "axes", "boot",
	    "state", "machine", "kernel", "boot_id", "knobs", "snapshot_sha256", NULL };
	static const char *const keys_v3[] = { "id", "cell_index", "label", "axes", "boot",
	    "state", "machine", "kernel", "boot_id", "knobs", "snapshot_sha256", "workload",
	    NULL };
	const char *s;
	json_t *v;
	int64_t n;
	char p[160];
	int r;

	if (!json_is_object(run)) {
		bf_diag_set(d, path, "expected an object, got %s", jx_type_name(run));
		return BF_ERR_INVALID;
	}
	s = NULL;
	if ((r = jx_only_keys(run, version < 2 ? keys_v1 : version < 3 ? keys : keys_v3, path,
	    d)) != 0 ||
	    (version >= 2 && (r = hash_field(run, "snapshot_sha256", 1, &s, path, d)) != 0))
		return r;
	if (s != NULL && json_object_get(snaps, s) == NULL) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, "snapshot_sha256"), "names no "
		    "snapshot of the bundle");
		return BF_ERR_INVALID;
	}
	if ((r = jx_int(run, "id", JX_REQUIRED, 1, INT64_MAX, idp, path, d)) != 0 ||
	    (r = jx_int(run, "cell_index", JX_REQUIRED, 0, BF_MAX_CELLS - 1, &n, path, d)) != 0 ||
	    (r = jx_str(run, "label", JX_OPTIONAL, BF_MAX_STR, &s, path, d)) != 0 ||
	    (r = jx_obj(run, "axes", JX_REQUIRED, &v, path, d)) != 0 ||
	    (r = jx_int(run, "boot", JX_REQUIRED, 0, 100000, &n, path, d)) != 0 ||
	    (r = jx_str(run, "state", JX_REQUIRED, 32, &s, path, d)) != 0 ||
	    (r = str_or_null(run, "machine", BF_MAX_NAME, 1, &s, path, d)) != 0 ||
	    (r = str_or_null(run, "kernel", 256, 1, &s, path, d)) != 0 ||
	    (r = str_or_null(run, "boot_id", 64, 1, &s, path, d)) != 0)
		return r;
	if (json_object_size(v) > BF_MAX_AXES) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, "axes"), "more than %d axes",
		    BF_MAX_AXES);
		return BF_ERR_TOOBIG;
	}
	if (version >= 3 && (r = bundle_check_run_workload(doc, run, path, d)) != 0)
		return r;
	v = json_object_get(run, "knobs");
	if (v != NULL && !json_is_null(v) && !json_is_object(v)) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, "knobs"), "expected an object or "
		    "null, got %s", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	return 0;
}

static int
check_sample(const json_t *smp, const char *path, const int64_t *ids, size_t nids,
    struct bf_diag *d)
{
	static const char *const keys[] = { "run", "boot", "iteration", "metric", "value",
	    "unit", NULL };
	const char *s;
	int64_t run, n;
	double x;
	char p[160];
	int r;

	if (!json_is_object(smp)) {
		bf_diag_set(d, path, "expected an object, got %s", jx_type_name(smp));
		return BF_ERR_INVALID;
	}
	if ((r = jx_only_keys(smp, keys, path, d)) != 0 ||
	    (r = jx_int(smp, "run", JX_REQUIRED, 1, INT64_MAX, &run, path, d)) != 0 ||
	    (r = jx_int(smp, "boot", JX_REQUIRED, 0, 100000, &n, path, d)) != 0 ||
	    (r = jx_int(smp, "iteration", JX_REQUIRED, 0, BF_MAX_ITERATIONS, &n, path, d)) != 0 ||
	    (r = jx_str(smp, "metric", JX_REQUIRED, BF_MAX_NAME, &s, path, d)) != 0 ||
	    (r = jx_num(smp, "value", JX_REQUIRED, -1e300, 1e300, &x, path, d)) != 0 ||
	    (r = str_or_null(smp, "unit", BF_MAX_NAME, 1, &s, path, d)) != 0)
		return r;
	if (bsearch(&run, ids, nids, sizeof(*ids), cmp_i64) == NULL) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, "run"), "%lld is not a run of "
		    "the bundle", (long long)run);
		return BF_ERR_INVALID;
	}
	return 0;
}

int
bundle_check(const json_t *doc, struct bf_diag *d)
{
	static const char *const origin_keys[] = { "job_id", "state", "created_at",
	    "finished_at", NULL };
	static const char *const keys[] = { "format", "version", "benchfleet_version",
	    "origin", "job", "job_sha256", "recipe", "recipe_sha256", "machines", "runs",
	    "samples", "sha256", "signature", NULL };
	static const char *const keys_v2[] = { "format", "version", "benchfleet_version",
	    "origin", "job", "job_sha256", "recipe", "recipe_sha256", "machines", "runs",
	    "snapshots", "samples", "kernel_builds", "sha256", "signature", NULL };
	static const char *const keys_v3[] = { "format", "version", "benchfleet_version",
	    "origin", "job", "job_sha256", "recipes", "machines", "runs", "snapshots",
	    "samples", "kernel_builds", "sha256", "signature", NULL };
	const char *s, *jh, *rh = NULL, *th;
	json_t *a, *v, *job, *recipe = NULL, *origin, *snaps = NULL;
	int64_t n, version, *ids = NULL;
	size_t i, nids;
	char p[64], hex[65];
	int r;

	if (!json_is_object(doc)) {
		bf_diag_set(d, NULL, "a bundle is a JSON object, got %s", jx_type_name(doc));
		return BF_ERR_INVALID;
	}
	if ((r = jx_str(doc, "format", JX_REQUIRED, 64, &s, "", d)) != 0)
		goto out;
	if (strcmp(s, BUNDLE_FORMAT) != 0) {
		bf_diag_set(d, "format", "\"%.64s\" is not \"%s\"", s, BUNDLE_FORMAT);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = jx_int(doc, "version", JX_REQUIRED, BUNDLE_MIN_VERSION, BUNDLE_VERSION,
	    &version, "", d)) != 0 ||
	    (r = jx_only_keys(doc, version < 2 ? keys : version < 3 ? keys_v2 : keys_v3, "",
	    d)) != 0 ||
	    (version >= 2 && (r = jx_obj(doc, "snapshots", JX_REQUIRED, &snaps, "", d)) != 0) ||
	    (snaps != NULL && (r = bundle_check_snapshots(snaps, d)) != 0) ||
	    (r = jx_str(doc, "benchfleet_version", JX_REQUIRED, 64, &s, "", d)) != 0 ||
	    (r = jx_obj(doc, "origin", JX_REQUIRED, &origin, "", d)) != 0 ||
	    (r = jx_only_keys(origin, origin_keys, "origin", d)) != 0 ||
	    (r = jx_int(origin, "job_id", JX_REQUIRED, 1, INT64_MAX, &n, "origin", d)) != 0 ||
	    (r = num_or_null(origin, "created_at", "origin", d)) != 0 ||
	    (r = num_or_null(origin, "finished_at", "origin", d)) != 0 ||
	    (r = jx_str(origin, "state", JX_REQUIRED, 32, &s, "origin", d)) != 0 ||
	    (r = jx_obj(doc, "job", JX_REQUIRED, &job, "", d)) != 0 ||
	    (r = hash_field(doc, "job_sha256", 0, &jh, "", d)) != 0 ||
	    (version < 3 && (r = jx_obj(doc, "recipe", JX_REQUIRED, &recipe, "", d)) != 0) ||
	    (version < 3 && (r = hash_field(doc, "recipe_sha256", 0, &rh, "", d)) != 0) ||
	    (r = hash_field(doc, "sha256", 0, &th, "", d)) != 0)
		goto out;
	/* the job's hash before its entries are read against it */
	if ((r = hash_matches(job, jh, "job_sha256", d)) != 0 ||
	    (version >= 3 && (r = bundle_check_recipes(doc, d)) != 0) ||
	    (r = bundle_check_kernels(doc, d)) != 0)
		goto out;
	if ((r = jx_arr(doc, "machines", JX_REQUIRED, 0, BUNDLE_MAX_MACHINES, &a, "", d)) != 0)
		goto out;
	json_array_foreach(a, i, v)
		if ((r = check_machine(v, jx_path_idx(p, sizeof(p), "machines", i), d)) != 0)
			goto out;
	if ((r = jx_arr(doc, "runs", JX_REQUIRED, 0, BUNDLE_MAX_RUNS, &a, "", d)) != 0)
		goto out;
	nids = json_array_size(a);
	if ((ids = calloc(nids ? nids : 1, sizeof(*ids))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(a, i, v)
		if ((r = check_run(doc, v, version, snaps, jx_path_idx(p, sizeof(p), "runs", i),
		    &ids[i], d)) != 0)
			goto out;
	if (snaps != NULL && (r = bundle_check_snapshots_named(snaps, a, d)) != 0)
		goto out;
	qsort(ids, nids, sizeof(*ids), cmp_i64);
	for (i = 1; i < nids; i++)
		if (ids[i] == ids[i - 1]) {
			bf_diag_set(d, "runs", "run id %lld appears twice", (long long)ids[i]);
			r = BF_ERR_INVALID;
			goto out;
		}
	if ((r = jx_arr(doc, "samples", JX_REQUIRED, 0, BUNDLE_MAX_SAMPLES, &a, "", d)) != 0)
		goto out;
	json_array_foreach(a, i, v)
		if ((r = check_sample(v, jx_path_idx(p, sizeof(p), "samples", i), ids, nids,
		    d)) != 0)
			goto out;
	if ((version < 3 && (r = hash_matches(recipe, rh, "recipe_sha256", d)) != 0) ||
	    (r = bundle_content_sha256(doc, hex)) != 0)
		goto out;
	if (strcmp(hex, th) != 0) {
		bf_diag_set(d, "sha256", "does not match the bundle's content");
		r = BF_ERR_INVALID;
		goto out;
	}
	r = bundle_signature(doc, NULL, d);
out:
	free(ids);
	return r;
}

int
bundle_parse(const char *text, size_t len, size_t max, json_t **out, struct bf_diag *d)
{
	json_t *doc = NULL;
	int r;

	*out = NULL;
	if (len > max) {
		bf_diag_set(d, NULL, "a bundle is at most %zu bytes; this one has %zu", max, len);
		return BF_ERR_TOOBIG;
	}
	if ((r = jx_loads(text, len, max, &doc, d)) != 0)
		goto out;
	if ((r = bundle_check(doc, d)) != 0)
		goto out;
	*out = doc;
	doc = NULL;
	r = 0;
out:
	json_decref(doc);
	return r;
}

const json_t *
bundle_machine(const json_t *doc, const char *name)
{
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(doc, "machines"), i, m)
		if (json_is_string(json_object_get(m, "name")) &&
		    strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
			return m;
	return NULL;
}
