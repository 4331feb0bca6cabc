/*
 * api-fed.c: federation over the API (docs/bundle.md): a job's bundle and
 * publishing it, for this lab's users and for peer coordinators (which see
 * published jobs only; the list of them is GET /jobs?published=1,
 * api_jobs_list). Reproductions of
 * a bundle are in api-repro.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "bundle.h"
#include "jx.h"
#include "labkey.h"
#include "parse.h"
#include "store.h"

/* A request from another coordinator (repro_fetch sends this header): it
 * is served published jobs only, whatever the transport's credentials. */
#define API_PEER_HEADER	"X-Benchfleet-Peer"

void
api_jobs_bundle(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct bf_diag d;
	json_t *b = NULL;
	int r, pub = 0;

	bf_diag_clear(&d);
	if ((r = store_job_published(a->st, rq->id, &pub)) != 0) {
		api_store_error(rs, r, "job");
		return;
	}
	/* Unpublished jobs are not served to other labs: only an admin here
	 * (with auth off, any local caller) sees them, and never a peer. */
	if (!pub && (rq->who.role != AUTH_ADMIN ||
	    MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, API_PEER_HEADER) != NULL)) {
		api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "job %lld: not published",
		    (long long)rq->id);
		return;
	}
	if ((r = bundle_export(a->st, rq->id, &b, &d)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_store_error(rs, r, "job");
		else
			api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, d.field, "bundle: %s",
			    d.msg[0] ? d.msg : bf_err_str(r));
		return;
	}
	/* Signed by this lab: through the callback, never the key itself. */
	if (a->cfg.has_lab_key && a->cfg.lab_sign != NULL &&
	    (r = bundle_sign(b, store_node(a->st), a->cfg.lab_pub, a->cfg.lab_sign,
	    a->cfg.lab_sign_arg)) != 0) {
		json_decref(b);
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "bundle: signing failed: %s",
		    bf_err_str(r));
		return;
	}
	api_json(rs, MHD_HTTP_OK, b);
}

void
api_jobs_publish(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	int r;

	struct store_audit au;
	char actor[64], subject[40];

	if ((r = store_job_publish(a->st, rq->id)) != 0) {
		api_store_error(rs, r, "job");
		return;
	}
	snprintf(subject, sizeof(subject), "job %lld", (long long)rq->id);
	au = (struct store_audit){ api_actor(rq, actor, sizeof(actor)), "job.publish", subject,
	    NULL };
	if ((r = store_audit_add(a->st, &au)) != 0) {
		/* published, but unrecorded: say so rather than hide it */
		api_store_error(rs, r, "job published, but the audit log");
		return;
	}
	events_job(a->ev, rq->id);
	api_json(rs, MHD_HTTP_OK, json_pack("{s:I,s:b}", "id", (json_int_t)rq->id,
	    "published", 1));
}
