/*
 * bundle-snap.c: the environment snapshots of a bundle (version 2): one
 * entry per distinct snapshot, named by the sha256 of its canonical JSON,
 * which a receiver recomputes (docs/bundle.md, docs/evidence.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "bundle-int.h"
#include "jx.h"
#include "sha256.h"
#include "store.h"

/*
 * "snapshots": {sha256: snapshot} for every snapshot a run of the bundle
 * names, read from the store; each is checked against its name, so a
 * damaged row is refused here rather than exported.
 */
int
bundle_export_snapshots(struct store *st, const json_t *runs, json_t *doc, struct bf_diag *d)
{
	json_t *snaps = json_object(), *v;
	const json_t *run;
	const char *sha;
	char *text = NULL, hex[65];
	size_t i;
	int r;

	if (snaps == NULL || json_object_set_new(doc, "snapshots", snaps) != 0)
		return BF_ERR_ALLOC;
	json_array_foreach(runs, i, run) {
		if ((sha = json_string_value(json_object_get(run, "snapshot_sha256"))) == NULL ||
		    json_object_get(snaps, sha) != NULL)
			continue;
		if ((r = store_snapshot_get(st, sha, &text)) != 0) {
			bf_diag_set(d, "snapshots", "snapshot %.64s of run %lld: %s", sha,
			    (long long)json_integer_value(json_object_get(run, "id")),
			    bf_err_str(r));
			return r;
		}
		v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		free(text);
		if (v == NULL || !json_is_object(v) || bundle_sha256(v, hex) != 0 ||
		    strcmp(hex, sha) != 0) {
			json_decref(v);
			bf_diag_set(d, "snapshots", "snapshot %.64s: the stored text does not "
			    "hash to its name", sha);
			return BF_ERR_INVALID;
		}
		if (json_object_set_new(snaps, sha, v) != 0)
			return BF_ERR_ALLOC;
	}
	return 0;
}

/*
 * "snapshots" (version 2): at most BUNDLE_MAX_SNAPSHOTS, each named by the
 * sha256 of its canonical JSON (recomputed here), a flat object of at most
 * BF_MAX_SNAPSHOT_FILES keys whose values are strings or null, as the
 * agent prints them (docs/evidence.md). That every one is named by a run
 * is checked after the runs.
 */
int
bundle_check_snapshots(const json_t *snaps, struct bf_diag *d)
{
	const char *sha, *k;
	json_t *v, *x;
	char p[128], hex[65];
	int r;

	if (json_object_size(snaps) > BUNDLE_MAX_SNAPSHOTS) {
		bf_diag_set(d, "snapshots", "more than %zu", BUNDLE_MAX_SNAPSHOTS);
		return BF_ERR_TOOBIG;
	}
	json_object_foreach((json_t *)snaps, sha, v) {
		snprintf(p, sizeof(p), "snapshots.%.64s", sha);
		if (!sha256_is_hex(sha)) {
			bf_diag_set(d, "snapshots", "a key is not 64 lowercase hex "
			    "digits (a sha256)");
			return BF_ERR_INVALID;
		}
		if (!json_is_object(v)) {
			bf_diag_set(d, p, "expected an object, got %s", jx_type_name(v));
			return BF_ERR_INVALID;
		}
		if (json_object_size(v) > BF_MAX_SNAPSHOT_FILES) {
			bf_diag_set(d, p, "more than %d keys", BF_MAX_SNAPSHOT_FILES);
			return BF_ERR_TOOBIG;
		}
		json_object_foreach(v, k, x)
			if (!json_is_string(x) && !json_is_null(x)) {
				bf_diag_set(d, p, "key \"%.64s\": expected a string or null, "
				    "got %s", k, jx_type_name(x));
				return BF_ERR_INVALID;
			}
		if ((r = bundle_sha256(v, hex)) != 0)
			return r;
		if (strcmp(hex, sha) != 0) {
			bf_diag_set(d, p, "does not match its name");
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

/* Every snapshot is named by some run: nothing rides along unexplained.
 * The names go into a set first, so a hostile bundle of many runs and
 * many snapshots costs linear time. */
int
bundle_check_snapshots_named(const json_t *snaps, const json_t *runs, struct bf_diag *d)
{
	json_t *named = json_object(), *v;
	const json_t *run;
	const char *sha;
	size_t i;
	int r = 0;

	if (named == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(runs, i, run)
		if ((sha = json_string_value(json_object_get(run, "snapshot_sha256"))) != NULL &&
		    json_object_set_new(named, sha, json_true()) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	json_object_foreach((json_t *)snaps, sha, v)
		if (json_object_get(named, sha) == NULL) {
			bf_diag_set(d, "snapshots", "%.64s: no run names it", sha);
			r = BF_ERR_INVALID;
			goto out;
		}
out:
	json_decref(named);
	return r;
}
