/*
 * api-artifacts.c: GET /api/v1/artifacts/{sha256} (viewer): the bytes of
 * an artifact by the hash of those bytes. A kernel build's artifacts
 * (image, modules, config, System.map, log; issue 18) are files of the
 * artifact directory (kstore.h), streamed from their descriptor; a run's
 * profile artifacts are rows of the store. The name is 64 lowercase hex
 * digits or a 400: it never becomes a path of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "api-int.h"
#include "kstore.h"
#include "sha256.h"
#include "store.h"

/* A file of the artifact directory as a response that reads its fd. */
static int
api_artifact_file(struct api *a, const char *sha, const char *kind, struct api_resp *rs)
{
	struct MHD_Response *resp;
	char disp[96];
	int64_t size;
	int r, fd = -1;

	if ((r = kstore_open_blob(a->cfg.artifacts, sha, &fd, &size)) != 0)
		return r;
	if ((resp = MHD_create_response_from_fd((uint64_t)size, fd)) == NULL) {
		close(fd);
		return BF_ERR_ALLOC;
	}
	/* the file's name says what it is: config-1a2b3c4d, image-... */
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s-%.8s\"", kind, sha);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Content-Disposition", disp);
	MHD_add_response_header(resp, "X-Benchfleet-Artifact-Sha256", sha);
	MHD_add_response_header(resp, "X-Benchfleet-Artifact-Kind", kind);
	rs->status = MHD_HTTP_OK;
	rs->raw = resp;
	return 0;
}

void
api_artifacts_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	char kind[8];
	void *data = NULL;
	int64_t size;
	size_t n;
	int r;

	if (!sha256_is_hex(rq->name)) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "sha256", "sha256: \"%.64s\" is not 64 "
		    "lowercase hex digits", rq->name);
		return;
	}
	if ((r = store_kartifact_get(a->st, rq->name, kind, &size)) == 0) {
		if (a->cfg.artifacts == NULL)
			api_error(rs, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "artifact %s: this "
			    "coordinator has no artifact directory open", rq->name);
		else if ((r = api_artifact_file(a, rq->name, kind, rs)) == BF_ERR_NOTFOUND)
			api_error(rs, MHD_HTTP_GONE, NULL, "artifact %s: the store names it but "
			    "its file is gone (pruned by retention?)", rq->name);
		else if (r != 0)
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "artifact %s: %s",
			    rq->name, bf_err_str(r));
		return;
	}
	if (r != BF_ERR_NOTFOUND) {
		api_store_error(rs, r, "artifact");
		return;
	}
	if ((r = store_artifact_get(a->st, rq->name, &data, &n)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_error(rs, MHD_HTTP_NOT_FOUND, "sha256", "sha256: no artifact %s",
			    rq->name);
		else
			api_store_error(rs, r, "artifact");
		return;
	}
	rs->status = MHD_HTTP_OK;
	rs->text = data;
	rs->text_len = n;
	rs->ctype = "application/octet-stream";
	rs->disposition = "attachment";
	snprintf(rs->artifact_sha256, sizeof(rs->artifact_sha256), "%s", rq->name);
}
