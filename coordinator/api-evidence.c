/*
 * api-evidence.c: what a run was measured in (issue 16, docs/evidence.md).
 * A run names its environment snapshot by sha256 ("snapshot_sha256" in
 * GET /runs/{id}); GET /snapshots/{sha256} serves the snapshot itself.
 * Snapshots are content-addressed and never change, so the answer may be
 * cached forever. GET /runs/{id}/profile serves a profiled run's artifacts:
 * the folded stacks, a flame graph drawn from them (common/flame.c) and
 * perf.data as perf wrote it; the perf event they were sampled on (cycles,
 * or cpu-clock where the machine has no PMU) in X-Benchfleet-Perf-Event, and
 * the sha256 of the stored artifact in X-Benchfleet-Artifact-Sha256.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "flame.h"
#include "sha256.h"

void
api_snapshots_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	json_error_t je;
	json_t *j;
	char *text = NULL;
	int r;

	if (!sha256_is_hex(rq->name)) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "sha256", "sha256: \"%.64s\" is not 64 "
		    "lowercase hex digits", rq->name);
		return;
	}
	if ((r = store_snapshot_get(a->st, rq->name, &text)) != 0) {
		api_store_error(rs, r, "snapshot");
		return;
	}
	/* the store keeps the text it hashed; it is served parsed, inside
	 * an object that names it, so a client checks the hash itself */
	if ((j = json_loads(text, JSON_REJECT_DUPLICATES, &je)) == NULL ||
	    !json_is_object(j)) {
		json_decref(j);
		free(text);
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "snapshot %s: the stored "
		    "text is not a JSON object", rq->name);
		return;
	}
	free(text);
	api_json(rs, MHD_HTTP_OK, json_pack("{s:s,s:o}", "sha256", rq->name, "snapshot", j));
}

/* The formats of a run's profile: which artifact, and how it is served. */
static const struct {
	const char *format;
	const char *artifact;
	const char *ctype;
} api_profile_formats[] = {
	{ .format = "folded", .artifact = "folded", .ctype = "text/plain; charset=utf-8" },
	{ .format = "svg", .artifact = "folded", .ctype = "image/svg+xml" },
	{ .format = "perf.data", .artifact = "perf.data", .ctype = "application/octet-stream" },
};

void
api_runs_profile(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const char *fmt = api_query(rq, "format");
	struct bf_diag d;
	struct buf svg;
	char sha[65], title[96];
	void *data = NULL;
	size_t n = 0, i, nf = sizeof(api_profile_formats) / sizeof(api_profile_formats[0]);
	int r;

	if (fmt == NULL)
		fmt = "folded";
	for (i = 0; i < nf && strcmp(api_profile_formats[i].format, fmt) != 0; i++)
		;
	if (i == nf) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "format", "format: \"%.32s\" is not one of "
		    "folded, svg, perf.data", fmt);
		return;
	}
	if ((r = store_run_artifact(a->st, rq->id, api_profile_formats[i].artifact, &data, &n,
	    sha, rs->perf_event)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "run %lld has no profile %s (the job "
			    "needs \"profile\": {\"perf\": \"record\"}; a dropped one is in the run "
			    "log)", (long long)rq->id, api_profile_formats[i].artifact);
		else
			api_store_error(rs, r, "profile");
		return;
	}
	rs->status = MHD_HTTP_OK;
	rs->ctype = api_profile_formats[i].ctype;
	/* the stored artifact served, or (svg) drawn from: the store hashed it */
	snprintf(rs->artifact_sha256, sizeof(rs->artifact_sha256), "%s", sha);
	/* drawn from names a binary chose: nothing served here may run */
	rs->csp = "default-src 'none'; script-src 'none'";
	if (strcmp(fmt, "svg") == 0) {
		buf_init(&svg, BF_MAX_API_RESPONSE);
		snprintf(title, sizeof(title), "run %lld (%s; folded sha256 %.12s)",
		    (long long)rq->id, rs->perf_event[0] ? rs->perf_event : "event not said", sha);
		if ((r = flame_svg(data, n, title, &svg, &d)) != 0) {
			buf_free(&svg);
			free(data);
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "run %lld: the profile "
			    "cannot be drawn: %s", (long long)rq->id, r == BF_ERR_INVALID ? d.msg :
			    bf_err_str(r));
			return;
		}
		free(data);
		n = svg.len;
		if ((data = buf_steal(&svg)) == NULL) {
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
			return;
		}
	} else if (strcmp(fmt, "perf.data") == 0) {
		rs->disposition = "attachment; filename=\"perf.data\"";
	}
	rs->text = data;
	rs->text_len = n;
}
