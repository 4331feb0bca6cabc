/*
 * api-repro.c: reproductions of another lab's bundle here, over the API
 * (docs/bundle.md); a job's bundle, publishing and the published list are
 * in api-fed.c. Everything in a posted or fetched bundle is
 * checked (bundle_check) and its fingerprints matched before anything is
 * written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "bundle.h"
#include "events.h"
#include "fetch.h"
#include "job.h"
#include "jx.h"
#include "labkey.h"
#include "plan.h"
#include "parse.h"
#include "recipe.h"
#include "recipes.h"
#include "repro.h"
#include "sched.h"
#include "store.h"

/* --- POST /reproductions --- */

struct repro_req {
	json_t *body;		/* the request document */
	json_t *bundle;		/* verified bundle (borrowed from body, or owned fetch) */
	json_t *fetched;	/* owned when fetched */
	const char *url;
	const char *klass;	/* machines.class filter, or NULL */
	double delta_pct;
	json_t *params;		/* overrides, or NULL (borrowed) */
	json_t *knobs;
	json_t *kernels;	/* {"NAME": {"git": PATH}}: the trees here, or NULL */
	int override;		/* an admin reruns an unsigned or untrusted bundle */
	int64_t compare_job;	/* compare-only against this job here, or 0 */
	const char *baseline;	/* effects: AXIS:VALUE or "none", or NULL (the default) */
	double effect_delta_pct;	/* effects' margin, or 0: delta_pct */
};

/*
 * Fetch, pre-scan and parse the bundle at url, holding a fetch slot
 * throughout so that at most BF_MAX_FETCHES bodies and trees exist at
 * once. Busy: BF_ERR_STATE. Every other failure (refused, network, peer,
 * too big, too many nodes, not a valid bundle) gives the caller one text;
 * its reason goes to the log, since it would tell the caller what answers
 * at an address the coordinator can reach and the caller cannot.
 */
static int
repro_fetch_bundle(const char *url, json_t **out, struct bf_diag *d)
{
	struct bf_diag why;
	struct buf b;
	size_t n;
	int r, slot = 0;

	*out = NULL;
	buf_init(&b, BF_MAX_URL_BUNDLE);
	bf_diag_clear(&why);
	if ((r = fetch_slot_take()) != 0) {
		bf_diag_set(d, "url", "busy: %d bundle fetches are under way; try again",
		    BF_MAX_FETCHES);
		goto out;
	}
	slot = 1;
	if ((r = fetch_url(url, BF_MAX_URL_BUNDLE, &b, &why)) != 0)
		goto out;	/* fetch_url logged why */
	if ((n = fetch_json_nodes(b.data, b.len, BF_MAX_URL_BUNDLE_NODES)) >
	    BF_MAX_URL_BUNDLE_NODES) {
		bf_diag_set(&why, NULL, "more than %d JSON values", BF_MAX_URL_BUNDLE_NODES);
		r = BF_ERR_TOOBIG;
	} else {
		r = bundle_parse(b.data != NULL ? b.data : "", b.len, BF_MAX_URL_BUNDLE, out,
		    &why);
	}
	if (r != 0) {
		char m[BF_DIAG_MSG + 32];

		snprintf(m, sizeof(m), "not a usable bundle: %s", why.msg[0] ? why.msg :
		    bf_err_str(r));
		fetch_log_failure(url, m);
	}
out:
	if (r != 0 && r != BF_ERR_STATE)
		bf_diag_set(d, "url", "the bundle could not be fetched (the coordinator's log "
		    "says why; POST the bundle itself for a detailed answer)");
	if (slot)
		fetch_slot_give();
	buf_free(&b);
	return r;
}

static int
repro_read_request(struct api *a, struct api_req *rq, struct repro_req *q, unsigned int *status,
    struct bf_diag *d)
{
	static const char *const keys[] = { "url", "bundle", "delta_pct", "machines", "params",
	    "knobs", "override", "compare_job", "baseline", "effect_delta_pct", "kernels", NULL };
	static const char *const mkeys[] = { "class", NULL };
	json_t *m = NULL;
	int r;

	(void)a;
	*status = MHD_HTTP_BAD_REQUEST;
	q->delta_pct = REPRO_DEFAULT_DELTA_PCT;
	if (rq->body.len == 0) {
		bf_diag_set(d, NULL, "request body: a bundle, or {\"url\": ...}, is required");
		return BF_ERR_INVALID;
	}
	if ((r = jx_loads(rq->body.data, rq->body.len, BF_MAX_API_BODY, &q->body, d)) != 0)
		return r;
	if (!json_is_object(q->body)) {
		bf_diag_set(d, NULL, "request body: expected an object");
		return BF_ERR_INVALID;
	}
	if (json_object_get(q->body, "format") != NULL) {
		/* The body is the bundle itself. */
		if ((r = bundle_check(q->body, d)) != 0)
			return r;
		q->bundle = q->body;
		return 0;
	}
	if ((r = jx_only_keys(q->body, keys, "", d)) != 0 ||
	    (r = jx_str(q->body, "url", JX_OPTIONAL, REPRO_MAX_URL, &q->url, "", d)) != 0 ||
	    (r = jx_num(q->body, "delta_pct", JX_OPTIONAL, 0.001, 100, &q->delta_pct, "",
	    d)) != 0 ||
	    (r = jx_obj(q->body, "machines", JX_OPTIONAL, &m, "", d)) != 0 ||
	    (r = jx_obj(q->body, "params", JX_OPTIONAL, &q->params, "", d)) != 0 ||
	    (r = jx_obj(q->body, "knobs", JX_OPTIONAL, &q->knobs, "", d)) != 0 ||
	    (r = jx_obj(q->body, "kernels", JX_OPTIONAL, &q->kernels, "", d)) != 0 ||
	    (r = jx_bool(q->body, "override", JX_OPTIONAL, &q->override, "", d)) != 0 ||
	    (r = jx_int(q->body, "compare_job", JX_OPTIONAL, 1, INT64_MAX, &q->compare_job, "",
	    d)) != 0 ||
	    (r = jx_str(q->body, "baseline", JX_OPTIONAL, REPRO_MAX_BASELINE, &q->baseline, "",
	    d)) != 0 ||
	    (r = jx_num(q->body, "effect_delta_pct", JX_OPTIONAL, 0.001, 100,
	    &q->effect_delta_pct, "", d)) != 0)
		return r;
	if (m != NULL && ((r = jx_only_keys(m, mkeys, "machines", d)) != 0 ||
	    (r = jx_str(m, "class", JX_REQUIRED, BF_MAX_NAME, &q->klass, "machines", d)) != 0))
		return r;
	if (q->url == NULL) {
		if ((r = jx_obj(q->body, "bundle", JX_REQUIRED, &q->bundle, "", d)) != 0 ||
		    (r = bundle_check(q->bundle, d)) != 0)
			return r;
		return 0;
	}
	if (json_object_get(q->body, "bundle") != NULL) {
		bf_diag_set(d, "bundle", "give a bundle or a url, not both");
		return BF_ERR_INVALID;
	}
	if ((r = repro_fetch_bundle(q->url, &q->fetched, d)) != 0) {
		*status = r == BF_ERR_STATE ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_BAD_GATEWAY;
		return r == BF_ERR_STATE ? r : BF_ERR_IO;
	}
	q->bundle = q->fetched;
	return 0;
}

/*
 * Match every machine of the bundle against the fingerprints here. On a
 * miss, *missp gets {"bundle_machine", "nearest", "differs": [...]}.
 * *matchesp: [{"bundle_machine","here":[names],"reported":[non-identity diffs]}].
 */
static int
repro_match(struct api *a, const struct repro_req *q, json_t **matchesp, json_t **missp,
    json_t **namesp, struct bf_diag *d)
{
	struct store_machine *ms = NULL;
	json_t *matches = json_array(), *names = json_array(), *fps = NULL, *bm, *want;
	json_t *ident = NULL, *other = NULL, *here = NULL, *best = NULL, *rep = NULL;
	size_t n = 0, i, j, bestn;
	const char *bname, *bestname;
	int r;

	*matchesp = *missp = *namesp = NULL;
	if (matches == NULL || names == NULL || (fps = json_array()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = store_machine_list(a->st, &ms, &n)) != 0)
		goto out;
	for (i = 0; i < n; i++)
		if (json_array_append_new(fps, ms[i].fingerprint != NULL ?
		    json_loads(ms[i].fingerprint, 0, NULL) : json_null()) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	json_array_foreach(json_object_get(q->bundle, "machines"), i, bm) {
		bname = json_string_value(json_object_get(bm, "name"));
		want = json_object_get(bm, "fingerprint");
		if (!json_is_object(want)) {
			bf_diag_set(d, "machines", "bundle machine %s has no fingerprint: it cannot "
			    "be matched", bname);
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((here = json_array()) == NULL || (rep = json_array()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		bestn = SIZE_MAX;
		bestname = NULL;
		for (j = 0; j < n; j++) {
			if (q->klass != NULL && strcmp(ms[j].klass, q->klass) != 0)
				continue;
			if ((r = repro_fp_compare(want, json_array_get(fps, j), &ident,
			    &other)) != 0)
				goto out;
			if (json_array_size(ident) == 0) {
				if (json_array_append_new(here, json_string(ms[j].name)) != 0) {
					r = BF_ERR_ALLOC;
					goto out;
				}
				if (json_array_size(rep) == 0)
					json_array_extend(rep, other);
			} else if (json_array_size(ident) < bestn) {
				bestn = json_array_size(ident);
				bestname = ms[j].name;
				json_decref(best);
				best = json_incref(ident);
			}
			json_decref(ident);
			json_decref(other);
			ident = other = NULL;
		}
		if (json_array_size(here) == 0) {
			*missp = json_pack("{s:s,s:s?,s:O}", "bundle_machine", bname, "nearest",
			    bestname, "differs", best != NULL ? best : json_null());
			r = *missp != NULL ? BF_ERR_NOTFOUND : BF_ERR_ALLOC;
			goto out;
		}
		json_array_foreach(here, j, want) {
			size_t k;
			json_t *x;
			int seen = 0;

			json_array_foreach(names, k, x)
				if (json_equal(x, want))
					seen = 1;
			if (!seen && json_array_append(names, want) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		}
		if (json_array_append_new(matches, json_pack("{s:s,s:O,s:O}", "bundle_machine",
		    bname, "here", here, "reported", rep)) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		json_decref(here);
		json_decref(rep);
		here = rep = NULL;
	}
	if (json_array_size(names) == 0) {
		bf_diag_set(d, "machines", "the bundle names no machine: nothing to match");
		r = BF_ERR_INVALID;
		goto out;
	}
	*matchesp = matches;
	*namesp = names;
	matches = names = NULL;
	r = 0;
out:
	store_machines_free(ms, n);
	json_decref(matches);
	json_decref(names);
	json_decref(fps);
	json_decref(ident);
	json_decref(other);
	json_decref(here);
	json_decref(rep);
	json_decref(best);
	return r;
}

/*
 * Who signed the bundle, as this coordinator sees it: {"state": "signed"
 * (by a key in the keyring, or this lab's own) | "untrusted" (a valid
 * signature by a key not in the keyring) | "unsigned", "lab": the keyring's
 * name or null, "claimed_lab": the name the signer gave itself, or null,
 * "fingerprint", "text": "signed by lab X (key SHA256:...)" | "unsigned" |
 * "untrusted key SHA256:..."}. bundle_check verified the signature.
 */
static int
repro_trust(struct api *a, const json_t *bundle, json_t **out, struct bf_diag *d)
{
	struct bundle_sig sig;
	char pub64[LABKEY_PUB_B64_LEN + 1], name[BF_MAX_NAME + 1], text[256];
	const char *state, *lab = NULL;
	int r;

	*out = NULL;
	if ((r = bundle_signature(bundle, &sig, d)) != 0)
		return r;
	if (!sig.present) {
		state = "unsigned";
		snprintf(text, sizeof(text), "unsigned");
	} else if (a->cfg.has_lab_key && memcmp(sig.pub, a->cfg.lab_pub, LABKEY_PUB_LEN) == 0) {
		state = "signed";
		lab = store_node(a->st);
		snprintf(text, sizeof(text), "signed by lab %s (this lab; key %s)", lab,
		    sig.fingerprint);
	} else {
		labkey_b64(sig.pub, LABKEY_PUB_LEN, pub64);
		r = store_lab_by_key(a->st, pub64, name, sizeof(name));
		if (r != 0 && r != BF_ERR_NOTFOUND)
			return r;
		if (r == 0) {
			state = "signed";
			lab = name;
			snprintf(text, sizeof(text), "signed by lab %s (key %s)", lab,
			    sig.fingerprint);
		} else {
			state = "untrusted";
			snprintf(text, sizeof(text), "untrusted key %s (claims to be lab %s)",
			    sig.fingerprint, sig.lab);
		}
	}
	*out = json_pack("{s:s,s:s?,s:s?,s:s?,s:s}", "state", state, "lab", lab,
	    "claimed_lab", sig.present ? sig.lab : NULL, "fingerprint",
	    sig.present ? sig.fingerprint : NULL, "text", text);
	return *out != NULL ? 0 : BF_ERR_ALLOC;
}

static void
repro_match_error(struct api_resp *rs, int r, json_t *miss, const struct bf_diag *d)
{
	char msg[512];

	if (miss != NULL) {
		snprintf(msg, sizeof(msg), "no machine here matches bundle machine %s%s%s",
		    json_string_value(json_object_get(miss, "bundle_machine")),
		    json_is_string(json_object_get(miss, "nearest")) ? "; nearest: " : "",
		    json_is_string(json_object_get(miss, "nearest")) ?
		    json_string_value(json_object_get(miss, "nearest")) : "");
		api_json(rs, MHD_HTTP_CONFLICT, json_pack("{s:s,s:O}", "error", msg, "detail",
		    miss));
	} else if (r == BF_ERR_INVALID) {
		api_error(rs, MHD_HTTP_UNPROCESSABLE_CONTENT, d->field, "%s", d->msg);
	} else {
		api_store_error(rs, r, "machines");
	}
}

void
api_repro_create(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct repro_req q = { 0 };
	struct store_audit au;
	struct bf_diag d;
	struct recipe *recs[BF_MAX_SUITE] = { NULL };
	size_t nrecs = 0, i;
	json_t *matches = NULL, *miss = NULL, *names = NULL, *info = NULL, *notes = NULL;
	json_t *trust = NULL, *cj = NULL;
	char *text = NULL, hex[65], actor[64], subject[48], detail[256];
	const char *tstate;
	unsigned int status;
	int64_t job_id, id;
	int r, compare;

	bf_diag_clear(&d);
	if ((r = repro_read_request(a, rq, &q, &status, &d)) != 0) {
		api_error(rs, r == BF_ERR_TOOBIG ? MHD_HTTP_CONTENT_TOO_LARGE : status, d.field,
		    "%s", d.msg[0] ? d.msg : bf_err_str(r));
		goto out;
	}
	if ((r = repro_trust(a, q.bundle, &trust, &d)) != 0) {
		if (r == BF_ERR_DB)
			api_store_error(rs, r, "labs");
		else
			api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s", d.msg[0] ? d.msg :
			    bf_err_str(r));
		goto out;
	}
	tstate = json_string_value(json_object_get(trust, "state"));
	api_actor(rq, actor, sizeof(actor));
	if ((notes = json_array()) == NULL)
		goto oom;
	compare = q.compare_job != 0;
	if (compare) {
		/* Compare-only: the bundle's samples against a job that ran
		 * here; nothing is scheduled, so neither trust nor the recipe
		 * is needed (they are reported). */
		if (q.override) {
			api_error(rs, MHD_HTTP_BAD_REQUEST, "override", "override: a compare-only "
			    "reproduction runs nothing; there is nothing to override");
			goto out;
		}
		if ((r = api_view_job_get(a->st, q.compare_job, &cj)) != 0) {
			api_store_error(rs, r, "compare_job");
			goto out;
		}
		snprintf(detail, sizeof(detail), "job %lld", (long long)q.compare_job);
		if (q.baseline != NULL && repro_effects_check(json_object_get(json_object_get(
		    cj, "spec"), "job"), q.baseline, detail, &d) != 0) {
			api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s", d.msg);
			goto out;
		}
		r = repro_match(a, &q, &matches, &miss, &names, &d);
		if (r == BF_ERR_DB) {
			api_store_error(rs, r, "machines");
			goto out;
		}
		if (r != 0) {
			char note[600];

			snprintf(note, sizeof(note), "no machine here matches every bundle machine "
			    "(%.200s): the environment diff leaves machines out", miss != NULL ?
			    json_string_value(json_object_get(miss, "bundle_machine")) : d.msg);
			json_decref(matches);
			if ((matches = json_array()) == NULL ||
			    json_array_append_new(notes, json_string(note)) != 0)
				goto oom;
		}
		job_id = q.compare_job;
	} else {
		if (q.override && rq->who.role != AUTH_ADMIN) {
			api_error(rs, MHD_HTTP_FORBIDDEN, "override", "override: rerunning a bundle "
			    "without a trusted signature needs the admin role");
			goto out;
		}
		if (q.baseline != NULL && repro_effects_check(json_object_get(q.bundle, "job"),
		    q.baseline, "the bundle's job", &d) != 0) {
			api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s", d.msg);
			goto out;
		}
		/* Recipes are code: only an installed one runs, whoever signed. */
		if (api_repro_recipes(a, q.bundle, recs, &nrecs, rs) != 0)
			goto out;
		if (strcmp(tstate, "signed") != 0 && !q.override) {
			char msg[512];

			snprintf(msg, sizeof(msg), "the bundle is %s: a rerun needs a bundle signed "
			    "by a trusted lab (benchfleet labs trust), or an admin's \"override\": "
			    "true; give \"compare_job\" to compare it with a job here instead; "
			    "nothing was scheduled", json_string_value(json_object_get(trust, "text")));
			api_json(rs, MHD_HTTP_CONFLICT, json_pack("{s:s,s:{s:s,s:O}}", "error", msg,
			    "detail", "field", "signature", "trust", trust));
			goto out;
		}
		if ((r = repro_match(a, &q, &matches, &miss, &names, &d)) != 0) {
			repro_match_error(rs, r, miss, &d);
			goto out;
		}
		if ((r = api_repro_job_create(a, rq, q.bundle, q.params, q.knobs, q.kernels,
		    (const struct recipe *const *)recs, nrecs, names, &job_id, &d)) != 0) {
			api_error(rs, r == BF_ERR_ALLOC || r == BF_ERR_DB ?
			    MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_UNPROCESSABLE_CONTENT, d.field,
			    "the bundle's job cannot run here: %s", d.msg);
			goto out;
		}
	}
	if ((info = json_pack("{s:O,s:O,s:O,s:o,s:o,s:o,s:s,s:O,s:b,s:s?}", "matches", matches,
	    "notes", notes, "origin", json_object_get(q.bundle, "origin"), "params",
	    q.params ? json_incref(q.params) : json_null(), "knobs",
	    q.knobs ? json_incref(q.knobs) : json_null(), "kernels",
	    q.kernels ? json_incref(q.kernels) : json_null(), "mode", compare ? "compare" : "rerun",
	    "trust", trust, "override", !compare && q.override && strcmp(tstate, "signed") != 0,
	    "override_by", !compare && q.override && strcmp(tstate, "signed") != 0 ? actor :
	    NULL)) == NULL)
		goto oom;
	/* the effects' defaults for GET (its query overrides them) */
	if ((q.baseline != NULL && json_object_set_new(info, "baseline",
	    json_string(q.baseline)) != 0) || (q.effect_delta_pct > 0 &&
	    json_object_set_new(info, "effect_delta_pct", json_real(q.effect_delta_pct)) != 0))
		goto oom;
	if ((text = json_dumps(q.bundle, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
		goto oom;
	snprintf(hex, sizeof(hex), "%s", json_string_value(json_object_get(q.bundle, "sha256")));
	{
		char *it = json_dumps(info, JSON_COMPACT);

		if (it == NULL)
			goto oom;
		r = store_repro_add(a->st, job_id, text, hex, q.url, q.delta_pct, it, &id);
		free(it);
	}
	if (r != 0) {
		/* The job stays (it is an ordinary job); say which. */
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "recording the reproduction "
		    "of job %lld: %s", (long long)job_id, bf_err_str(r));
		goto out;
	}
	if (json_is_true(json_object_get(info, "override"))) {
		snprintf(subject, sizeof(subject), "reproduction %lld", (long long)id);
		snprintf(detail, sizeof(detail), "rerun as job %lld of bundle sha256 %.64s, %s",
		    (long long)job_id, hex, json_string_value(json_object_get(trust, "text")));
		au = (struct store_audit){ actor, "reproduction.override", subject, detail };
		if ((r = store_audit_add(a->st, &au)) != 0) {
			/* Nothing may run unrecorded: the rerun is cancelled, and if
			 * even that fails the answer names the job to cancel. */
			if (store_job_cancel(a->st, job_id) == 0)
				api_store_error(rs, r, "the audit log (the rerun was cancelled)");
			else {
				snprintf(detail, sizeof(detail), "the audit log (and cancelling "
				    "the rerun, job %lld, failed too: cancel it)", (long long)job_id);
				api_store_error(rs, r, detail);
			}
			goto out;
		}
	}
	if (!compare) {
		api_kick(a);
		events_job(a->ev, job_id);
	}
	api_json(rs, MHD_HTTP_CREATED, json_pack("{s:I,s:I,s:s,s:O,s:O,s:f,s:O,s:O,s:O,s:s?}",
	    "id", (json_int_t)id, "job_id", (json_int_t)job_id, "mode", compare ? "compare" :
	    "rerun", "matches", matches, "notes", notes, "delta_pct", q.delta_pct, "trust", trust,
	    "signature", json_object_get(trust, "text"), "override",
	    json_object_get(info, "override"), "baseline", q.baseline));
	goto out;
oom:
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
out:
	free(text);
	json_decref(info);
	json_decref(notes);
	json_decref(matches);
	json_decref(miss);
	json_decref(names);
	json_decref(trust);
	json_decref(cj);
	json_decref(q.fetched);
	json_decref(q.body);
	for (i = 0; i < nrecs; i++)
		recipe_free(recs[i]);
}

/* --- GET /reproductions/{id} --- */

/* {sha256: snapshot} of every snapshot a local run names (repro-env.c);
 * one the store cannot give is left out (its cell is then not compared). */
static int
here_snapshots(struct api *a, const json_t *runs, json_t **out)
{
	json_t *o = json_object(), *v;
	const json_t *run;
	const char *sha;
	char *text;
	size_t i;

	*out = NULL;
	if (o == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(runs, i, run) {
		if ((sha = json_string_value(json_object_get(run, "snapshot_sha256"))) == NULL ||
		    json_object_get(o, sha) != NULL || store_snapshot_get(a->st, sha, &text) != 0)
			continue;
		v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		free(text);
		if (json_is_object(v) && json_object_set_new(o, sha, v) != 0) {
			json_decref(o);
			return BF_ERR_ALLOC;
		}
		if (!json_is_object(v))
			json_decref(v);
	}
	*out = o;
	return 0;
}

/* The fingerprint of machine name as the first of runs found it, parsed;
 * NULL when none names one. */
static json_t *
run_time_fp(struct api *a, const json_t *runs, const char *name)
{
	json_t *fp = NULL;
	char *text = NULL;

	if (bundle_run_fingerprint(a->st, runs, name, &text) == 0 && text != NULL)
		fp = json_loads(text, 0, NULL);
	free(text);
	if (fp != NULL && !json_is_object(fp)) {
		json_decref(fp);
		fp = NULL;
	}
	return fp;
}

/* {name: fingerprint} of the matched machines here: as the rerun's runs
 * found them, else (never probed at run time) as they are now. */
static int
here_fingerprints(struct api *a, const json_t *info, const json_t *runs, json_t **out)
{
	struct store_machine *m = NULL;
	const json_t *match, *name;
	json_t *o = json_object(), *fp;
	size_t i, j;
	int r;

	if (o == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(json_object_get(info, "matches"), i, match)
		json_array_foreach(json_object_get(match, "here"), j, name) {
			if (!json_is_string(name) || json_object_get(o, json_string_value(name)))
				continue;
			if ((fp = run_time_fp(a, runs, json_string_value(name))) != NULL) {
				if (json_object_set_new(o, json_string_value(name), fp) != 0) {
					r = BF_ERR_ALLOC;
					goto out;
				}
				continue;
			}
			if ((r = store_machine_get(a->st, json_string_value(name), &m)) != 0) {
				if (r == BF_ERR_NOTFOUND)
					continue;
				goto out;
			}
			fp = m->fingerprint != NULL ? json_loads(m->fingerprint, 0, NULL) : NULL;
			json_object_set_new(o, m->name, fp != NULL ? fp : json_null());
			store_machine_free(m);
			m = NULL;
		}
	*out = o;
	o = NULL;
	r = 0;
out:
	store_machine_free(m);
	json_decref(o);
	return r;
}

/* One line per kernel of the bundle (bundle_kernels_compare's array). */
static int
repro_kernels_text(const json_t *kernels, struct buf *b)
{
	const json_t *k, *bu, *he;
	size_t i;
	int r = 0;

	json_array_foreach(kernels, i, k) {
		bu = json_object_get(k, "bundle");
		he = json_object_get(k, "here");
		if (i == 0 && (r = buf_puts(b, "\nkernels built\n")) != 0)
			break;
		if (!json_is_object(he))
			r = buf_printf(b, "  %s: the bundle's build %.12s (config %.12s); not booted "
			    "here\n", json_string_value(json_object_get(k, "name")),
			    json_string_value(json_object_get(bu, "key")),
			    json_string_value(json_object_get(bu, "config_sha256")));
		else
			r = buf_printf(b, "  %s: the bundle's build %.12s (config %.12s), here %.12s "
			    "(config %.12s): %s, %s\n", json_string_value(json_object_get(k, "name")),
			    json_string_value(json_object_get(bu, "key")),
			    json_string_value(json_object_get(bu, "config_sha256")),
			    json_string_value(json_object_get(he, "key")),
			    json_string_value(json_object_get(he, "config_sha256")),
			    json_is_true(json_object_get(k, "same_build")) ? "the same build" :
			    "another build (tree, compiler or arch differ)",
			    json_is_true(json_object_get(k, "same_config")) ? "the same .config" :
			    "the .config differs");
		if (r != 0)
			break;
	}
	return r;
}

void
api_repro_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_repro *x = NULL;
	struct bf_diag d;
	json_t *bundle = NULL, *info = NULL, *job = NULL, *samples = NULL, *runs = NULL;
	json_t *fps = NULL, *rep = NULL, *snaps = NULL, *kcmp = NULL;
	const char *fmt = api_query(rq, "format"), *state, *mode, *sigtext;
	const char *base = api_query(rq, "baseline"), *edq = api_query(rq, "effect_delta_pct");
	double edelta = 0;
	char what[32];
	struct buf b;
	size_t moved = 0;
	int r, ended;

	bf_diag_clear(&d);
	buf_init(&b, BF_MAX_API_RESPONSE);
	if (fmt != NULL && strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "format", "format: \"%.32s\" is not one of "
		    "text, json", fmt);
		goto out;
	}
	if (edq != NULL && (parse_double(edq, &edelta) != 0 || !(edelta >= 0.001) ||
	    edelta > 100)) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "effect_delta_pct", "effect_delta_pct: "
		    "\"%.32s\" is not a number in 0.001..100", edq);
		goto out;
	}
	if (base != NULL && strlen(base) > REPRO_MAX_BASELINE) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "baseline", "baseline: longer than %d bytes",
		    REPRO_MAX_BASELINE);
		goto out;
	}
	if ((r = store_repro_get(a->st, rq->id, &x)) != 0) {
		api_store_error(rs, r, "reproduction");
		goto out;
	}
	/* Written by us after bundle_check. */
	if ((bundle = json_loads(x->bundle, 0, NULL)) == NULL ||
	    (info = json_loads(x->info, 0, NULL)) == NULL) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "reproduction %lld: its "
		    "stored bundle is damaged", (long long)rq->id);
		goto out;
	}
	if ((r = api_view_job_get(a->st, x->job_id, &job)) != 0) {
		api_store_error(rs, r, "the reproduction's job");
		goto out;
	}
	/* The effects' options: the query's, else those the POST gave. */
	if (base == NULL)
		base = json_string_value(json_object_get(info, "baseline"));
	if (edq == NULL)
		edelta = json_is_number(json_object_get(info, "effect_delta_pct")) ?
		    json_number_value(json_object_get(info, "effect_delta_pct")) : x->delta_pct;
	snprintf(what, sizeof(what), "job %lld", (long long)x->job_id);
	if (base != NULL && repro_effects_check(json_object_get(json_object_get(job, "spec"),
	    "job"), base, what, &d) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s", d.msg);
		goto out;
	}
	state = json_string_value(json_object_get(job, "state"));
	ended = state != NULL && strcmp(state, "queued") != 0 && strcmp(state, "running") != 0;
	if (!ended) {
		rep = json_pack("{s:I,s:s,s:I,s:s,s:O,s:O,s:s,s:O,s:O}", "id", (json_int_t)x->id,
		    "state", "running", "job_id", (json_int_t)x->job_id, "job_state", state ?
		    state : "?", "runs_done", json_object_get(job, "runs_done"), "runs_total",
		    json_object_get(job, "runs_total"), "bundle_sha256", x->bundle_sha256,
		    "matches", json_object_get(info, "matches"), "notes",
		    json_object_get(info, "notes"));
	} else {
		if ((r = api_view_job_cells_get(a->st, x->job_id, &samples)) != 0 ||
		    (r = api_view_job_runs_get(a->st, x->job_id, 0, &runs)) != 0 ||
		    (r = here_fingerprints(a, info, json_object_get(runs, "runs"), &fps)) != 0 ||
		    (r = here_snapshots(a, json_object_get(runs, "runs"), &snaps)) != 0) {
			api_store_error(rs, r, "the reproduction's job");
			goto out;
		}
		if ((r = repro_align_cells(bundle, json_object_get(runs, "runs"), &moved)) != 0) {
			api_store_error(rs, r, "the reproduction's cells");
			goto out;
		}
		if ((r = repro_report_json(bundle, samples, json_object_get(runs, "runs"),
		    json_object_get(json_object_get(job, "spec"), "job"), fps, snaps, info,
		    x->delta_pct, &rep, &d)) != 0 ||
		    (r = repro_effects_json(bundle, samples, json_object_get(json_object_get(job,
		    "spec"), "job"), base, edelta, rep, &d)) != 0) {
			api_error(rs, r == BF_ERR_INVALID && strcmp(d.field, "baseline") == 0 ?
			    MHD_HTTP_BAD_REQUEST : MHD_HTTP_INTERNAL_SERVER_ERROR,
			    d.field[0] ? d.field : NULL, "%s", d.msg[0] ? d.msg : bf_err_str(r));
			goto out;
		}
		if ((r = bundle_kernels_compare(a->st, bundle, json_object_get(runs, "runs"),
		    &kcmp)) != 0) {
			api_store_error(rs, r, "the reproduction's kernel builds");
			goto out;
		}
		if ((kcmp != NULL && json_object_set_new(rep, "kernels", kcmp) != 0) ||
		    json_object_set_new(rep, "id", json_integer(x->id)) != 0 ||
		    json_object_set_new(rep, "state", json_string("done")) != 0 ||
		    json_object_set_new(rep, "job_id", json_integer(x->job_id)) != 0 ||
		    json_object_set_new(rep, "job_state", json_string(state)) != 0 ||
		    json_object_set_new(rep, "bundle_sha256", json_string(x->bundle_sha256)) != 0 ||
		    json_object_set(rep, "origin", json_object_get(bundle, "origin")) != 0 ||
		    json_object_set(rep, "matches", json_object_get(info, "matches")) != 0 ||
		    json_object_set(rep, "notes", json_object_get(info, "notes")) != 0 ||
		    json_object_set_new(rep, "source", x->source ? json_string(x->source) :
		    json_null()) != 0) {
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
			goto out;
		}
	}
	if (rep == NULL) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		goto out;
	}
	/* Older rows (before schema step 7) have no trust: they were reruns
	 * of bundles nobody could sign. */
	mode = json_is_string(json_object_get(info, "mode")) ?
	    json_string_value(json_object_get(info, "mode")) : "rerun";
	sigtext = json_is_string(json_object_get(json_object_get(info, "trust"), "text")) ?
	    json_string_value(json_object_get(json_object_get(info, "trust"), "text")) :
	    "unsigned";
	if (json_object_set_new(rep, "mode", json_string(mode)) != 0 ||
	    json_object_set_new(rep, "signature", json_string(sigtext)) != 0 ||
	    json_object_set(rep, "trust", json_object_get(info, "trust") ?
	    json_object_get(info, "trust") : json_null()) != 0 ||
	    json_object_set(rep, "override", json_object_get(info, "override") ?
	    json_object_get(info, "override") : json_false()) != 0 ||
	    json_object_set(rep, "override_by", json_object_get(info, "override_by") ?
	    json_object_get(info, "override_by") : json_null()) != 0) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		goto out;
	}
	if (fmt == NULL || strcmp(fmt, "json") == 0) {
		api_json(rs, MHD_HTTP_OK, rep);
		rep = NULL;
		goto out;
	}
	if (!ended)
		r = buf_printf(&b, "reproduction %lld: running (job %lld, %lld of %lld runs "
		    "done)\nbundle %s\n", (long long)x->id, (long long)x->job_id,
		    (long long)json_integer_value(json_object_get(job, "runs_done")),
		    (long long)json_integer_value(json_object_get(job, "runs_total")), sigtext);
	else if ((r = buf_printf(&b, "reproduction %lld of job %lld (%s), %s job %lld (%s)\n"
	    "bundle sha256 %s\nbundle %s%s%s\n\n", (long long)x->id,
	    (long long)json_integer_value(json_object_get(json_object_get(bundle, "origin"),
	    "job_id")), x->source ? x->source : "posted",
	    strcmp(mode, "compare") == 0 ? "compared (no rerun) with" : "rerun here as",
	    (long long)x->job_id, state, x->bundle_sha256, sigtext,
	    json_is_true(json_object_get(info, "override")) ? "; rerun on the override of " :
	    "", json_is_true(json_object_get(info, "override")) ?
	    json_string_value(json_object_get(info, "override_by")) : "")) == 0)
		r = repro_report_text(rep, &b);
	if (r == 0)
		r = repro_kernels_text(json_object_get(rep, "kernels"), &b);
	if (r != 0) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "report: %s", bf_err_str(r));
		goto out;
	}
	rs->status = MHD_HTTP_OK;
	rs->text_len = b.len;
	rs->text = buf_steal(&b);
out:
	buf_free(&b);
	json_decref(rep);
	json_decref(snaps);
	json_decref(fps);
	json_decref(runs);
	json_decref(samples);
	json_decref(job);
	json_decref(info);
	json_decref(bundle);
	store_repro_free(x);
}
