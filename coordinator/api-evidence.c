/*
 * api-evidence.c: what a run was measured in (issue 16, docs/evidence.md).
 * A run names its environment snapshot by sha256 ("snapshot_sha256" in
 * GET /runs/{id}); GET /snapshots/{sha256} serves the snapshot itself.
 * Snapshots are content-addressed and never change, so the answer may be
 * cached forever.
 */
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
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
