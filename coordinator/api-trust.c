/*
 * api-trust.c: what this coordinator trusts, over the API (docs/bundle.md,
 * docs/api.md): its own lab identity (GET /lab, public), the keyring of
 * trusted labs (/labs), recipes installed by an admin (POST /recipes), and
 * the audit log of all of it (GET /audit). Every change is an admin's and
 * lands in the audit log in the same transaction.
 *
 * The lab key itself never enters this file: signing goes through
 * api_config.lab_sign (api-repro.c), and here only the public half is seen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "buf.h"
#include "jx.h"
#include "labkey.h"
#include "parse.h"
#include "recipe.h"
#include "recipes.h"
#include "repro.h"
#include "store.h"

/* GET /lab answers are small: a larger one from a peer is refused. */
#define API_MAX_LAB_DOC	(16 * 1024)

const char *
api_actor(const struct api_req *rq, char *buf, size_t bufsz)
{
	if (rq->who.token_id == 0)
		snprintf(buf, bufsz, "local");
	else
		snprintf(buf, bufsz, "token:%lld", (long long)rq->who.token_id);
	return buf;
}

/* GET /lab: public, so that a peer can learn the key it is to trust. */
void
api_lab_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	char pub[LABKEY_PUB_B64_LEN + 1], fp[LABKEY_FP_LEN + 1];

	(void)rq;
	if (!a->cfg.has_lab_key) {
		api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "this coordinator has no lab key");
		return;
	}
	labkey_b64(a->cfg.lab_pub, LABKEY_PUB_LEN, pub);
	labkey_fingerprint(a->cfg.lab_pub, fp);
	api_json(rs, MHD_HTTP_OK, json_pack("{s:s,s:s,s:s,s:s}", "name", store_node(a->st),
	    "alg", "ed25519", "public_key", pub, "fingerprint", fp));
}

void
api_labs_list(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_lab *labs = NULL;
	json_t *j;
	size_t n = 0;
	int r;

	(void)rq;
	if ((r = store_labs_list(a->st, &labs, &n)) != 0) {
		api_store_error(rs, r, "labs");
		return;
	}
	if ((j = api_view_labs(labs, n)) == NULL)
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "labs: out of memory");
	else
		api_json(rs, MHD_HTTP_OK, j);
	store_labs_free(labs, n);
}

/* The public key of a peer's GET /lab answer at url. */
static int
labs_fetch_key(const char *url, char *pub, size_t pubsz, struct bf_diag *d)
{
	struct buf b;
	json_t *doc = NULL;
	const char *k;
	int r;

	buf_init(&b, API_MAX_LAB_DOC);
	if ((r = repro_fetch(url, API_MAX_LAB_DOC, &b, d)) != 0)
		goto out;
	if ((r = jx_loads(b.data != NULL ? b.data : "", b.len, API_MAX_LAB_DOC, &doc, d)) != 0 ||
	    (r = jx_str(doc, "public_key", JX_REQUIRED, LABKEY_PUB_B64_LEN, &k, "url", d)) != 0) {
		r = BF_ERR_PROTO;
		goto out;
	}
	snprintf(pub, pubsz, "%s", k);
	r = 0;
out:
	json_decref(doc);
	buf_free(&b);
	return r;
}

/* POST /labs {"name", "public_key" | "url", "fingerprint"?} (admin). */
void
api_labs_trust(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	static const char *const keys[] = { "name", "public_key", "url", "fingerprint", NULL };
	struct store_audit au;
	struct bf_diag d;
	json_t *body = NULL;
	const char *name, *key = NULL, *url = NULL, *pin = NULL;
	char pub64[LABKEY_PUB_B64_LEN + 1], fp[LABKEY_FP_LEN + 1], actor[64], detail[160];
	unsigned char pub[LABKEY_PUB_LEN];
	int r;

	bf_diag_clear(&d);
	if ((r = jx_loads(rq->body.data != NULL ? rq->body.data : "", rq->body.len,
	    BF_MAX_API_BODY, &body, &d)) != 0 ||
	    (r = jx_only_keys(body, keys, "", &d)) != 0 ||
	    (r = jx_str(body, "name", JX_REQUIRED, BF_MAX_NAME, &name, "", &d)) != 0 ||
	    (r = jx_check_name(name, "name", &d)) != 0 ||
	    (r = jx_str(body, "public_key", JX_OPTIONAL, LABKEY_PUB_B64_LEN, &key, "", &d)) != 0 ||
	    (r = jx_str(body, "url", JX_OPTIONAL, REPRO_MAX_URL, &url, "", &d)) != 0 ||
	    (r = jx_str(body, "fingerprint", JX_OPTIONAL, LABKEY_FP_LEN, &pin, "", &d)) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s", d.msg);
		goto out;
	}
	if ((key == NULL) == (url == NULL)) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "public_key", "public_key: give the lab's "
		    "public key or the url of its GET /api/v1/lab, one of the two");
		goto out;
	}
	if (url != NULL) {
		if ((r = labs_fetch_key(url, pub64, sizeof(pub64), &d)) != 0) {
			api_error(rs, r == BF_ERR_STATE ? MHD_HTTP_SERVICE_UNAVAILABLE :
			    MHD_HTTP_BAD_GATEWAY, "url", "%s", d.msg);
			goto out;
		}
		key = pub64;
	}
	if (labkey_unb64(key, pub, LABKEY_PUB_LEN) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "public_key", "public_key: expected the base64 "
		    "of a 32-byte ed25519 public key%s", url != NULL ? " (from the url)" : "");
		goto out;
	}
	labkey_b64(pub, LABKEY_PUB_LEN, pub64);
	labkey_fingerprint(pub, fp);
	if (pin != NULL && strcmp(pin, fp) != 0) {
		api_error(rs, MHD_HTTP_CONFLICT, "fingerprint", "fingerprint: the key is %s, not "
		    "the %s you expected; nothing trusted", fp, pin);
		goto out;
	}
	snprintf(detail, sizeof(detail), "%s", fp);
	au = (struct store_audit){ api_actor(rq, actor, sizeof(actor)), "lab.trust", name,
	    detail };
	if ((r = store_lab_trust(a->st, name, pub64, fp, url, &au)) != 0) {
		if (r == BF_ERR_EXISTS)
			api_error(rs, MHD_HTTP_CONFLICT, "name", "lab %s, or the key %s, is in the "
			    "keyring already (untrust it first)", name, fp);
		else
			api_store_error(rs, r, "labs");
		goto out;
	}
	api_json(rs, MHD_HTTP_CREATED, json_pack("{s:s,s:s,s:s,s:s?}", "name", name,
	    "public_key", pub64, "fingerprint", fp, "source", url));
out:
	json_decref(body);
}

/* DELETE /labs/{name} (admin). */
void
api_labs_untrust(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_audit au;
	char actor[64];
	int r;

	au = (struct store_audit){ api_actor(rq, actor, sizeof(actor)), "lab.untrust",
	    rq->name, NULL };
	if ((r = store_lab_untrust(a->st, rq->name, &au)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "no trusted lab named %s", rq->name);
		else
			api_store_error(rs, r, "labs");
		return;
	}
	api_json(rs, MHD_HTTP_OK, json_pack("{s:s,s:b}", "name", rq->name, "trusted", 0));
}

/* GET /recipes: ?imported=1 lists the recipes admins imported; the rest is
 * api_recipes_list's. */
void
api_recipes_list_all(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const char *imp = api_query(rq, "imported");
	struct store_recipe_imp *recs = NULL;
	int64_t v = 0;
	json_t *j;
	size_t n = 0;
	int r;

	if (imp == NULL) {
		api_recipes_list(a, rq, rs);
		return;
	}
	if (parse_i64(imp, 0, 1, &v) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "imported", "imported: \"%.32s\" is not 0 or 1",
		    imp);
		return;
	}
	if (v == 0) {
		api_recipes_list(a, rq, rs);
		return;
	}
	if ((r = store_recipes_imported_list(a->st, &recs, &n)) != 0) {
		api_store_error(rs, r, "recipes");
		return;
	}
	if ((j = api_view_recipes_imported(recs, n)) == NULL)
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "recipes: out of memory");
	else
		api_json(rs, MHD_HTTP_OK, j);
	store_recipes_imported_free(recs, n);
}

/*
 * POST /recipes (admin): install a recipe from elsewhere, the recipe
 * document as the body. It must load (recipe_from_json); it is stored as
 * its canonical JSON under its canonical sha256, which is what a bundle's
 * recipe_sha256 and a job's recipe are checked against.
 */
void
api_recipes_import(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_audit au;
	struct recipe *rec = NULL;
	struct bf_diag d;
	json_t *doc = NULL;
	char hex[65], actor[64], *text = NULL;
	int r;

	bf_diag_clear(&d);
	if ((r = jx_loads(rq->body.data != NULL ? rq->body.data : "", rq->body.len,
	    BF_MAX_API_BODY, &doc, &d)) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s", d.msg);
		goto out;
	}
	if ((r = recipe_from_json(doc, &rec, &d)) != 0) {
		api_error(rs, MHD_HTTP_UNPROCESSABLE_CONTENT, d.field, "the recipe does not load: "
		    "%s", d.msg);
		goto out;
	}
	if ((r = recipes_sha256(doc, hex)) != 0 ||
	    (text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		goto out;
	}
	if (recipes_by_sha(a->rs, hex) != NULL) {
		api_json(rs, MHD_HTTP_OK, json_pack("{s:s,s:s,s:s}", "name", rec->name, "sha256",
		    hex, "installed", "directory"));
		goto out;
	}
	au = (struct store_audit){ api_actor(rq, actor, sizeof(actor)), "recipe.import",
	    rec->name, hex };
	r = store_recipe_import(a->st, rec->name, hex, text, &au);
	if (r != 0 && r != BF_ERR_EXISTS) {
		api_store_error(rs, r, "recipes");
		goto out;
	}
	api_json(rs, r == 0 ? MHD_HTTP_CREATED : MHD_HTTP_OK, json_pack("{s:s,s:s,s:s}", "name",
	    rec->name, "sha256", hex, "installed", r == 0 ? "imported" : "imported before"));
out:
	free(text);
	recipe_free(rec);
	json_decref(doc);
}

/* GET /audit?limit=N (admin). */
void
api_audit_list(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const char *lim = api_query(rq, "limit");
	struct store_audit_row *rows = NULL;
	int64_t limit = 100;
	json_t *j;
	size_t n = 0;
	int r;

	if (lim != NULL && parse_i64(lim, 1, 1000, &limit) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "limit", "limit: \"%.32s\" is not in 1..1000",
		    lim);
		return;
	}
	if ((r = store_audit_list(a->st, (size_t)limit, &rows, &n)) != 0) {
		api_store_error(rs, r, "audit");
		return;
	}
	if ((j = api_view_audit(rows, n)) == NULL)
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "audit: out of memory");
	else
		api_json(rs, MHD_HTTP_OK, j);
	store_audit_rows_free(rows, n);
}
