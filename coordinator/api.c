/*
 * api.c: the HTTP server. Once a request's headers are in, and before any
 * byte of its body is read, it passes the guards (api-guard.c: framing,
 * Host, Origin, Content-Type), is matched against one route table and its
 * token checked; only then is the body collected under BF_MAX_API_BODY
 * (over it: 413 without reading the rest) and the handler called. Every
 * error is JSON {"error", "detail"}. Static files of the dashboard are
 * served from web/ at /.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api-int.h"
#include "events.h"
#include "jx.h"
#include "parse.h"

struct api_route {
	const char *method;
	const char *pattern;	/* segments; {id} an integer, {name} a name */
	api_handler fn;
	int need;		/* enum auth_role; API_PUBLIC: no token */
	int etag;		/* 1: ETag from store_generation, If-None-Match -> 304 */
	int slow;		/* 1: may wait (network, SSH, millions of rows): api-slow.c */
};

/* Needs no token: a load balancer's health check. Anything unset (0) needs
 * admin, so a route added without a role fails closed. */
#define API_PUBLIC	(-1)
#define V		AUTH_VIEWER
#define S		AUTH_SUBMITTER
#define A		AUTH_ADMIN

static const struct api_route api_routes[] = {
	{ .method = "GET", .pattern = "/api/v1/healthz", .fn = api_health, .need = API_PUBLIC },
	{ .method = "GET", .pattern = "/healthz", .fn = api_health, .need = API_PUBLIC },
	{ .method = "GET", .pattern = "/api/v1/metrics", .fn = api_metrics, .need = V },
	{ .method = "GET", .pattern = "/metrics", .fn = api_metrics, .need = V },
	{ .method = "GET", .pattern = "/api/v1/jobs", .fn = api_jobs_list, .need = V,
	    .etag = 1 },
	{ .method = "POST", .pattern = "/api/v1/jobs", .fn = api_jobs_create, .need = S },
	{ .method = "GET", .pattern = "/api/v1/jobs/{id}", .fn = api_jobs_get, .need = V,
	    .etag = 1 },
	{ .method = "POST", .pattern = "/api/v1/jobs/{id}/cancel", .fn = api_jobs_cancel, .need = S },
	{ .method = "GET", .pattern = "/api/v1/jobs/{id}/runs", .fn = api_jobs_runs, .need = V,
	    .etag = 1 },
	{ .method = "GET", .pattern = "/api/v1/jobs/{id}/report", .fn = api_jobs_report, .need = V,
	    .slow = 1 },
	{ .method = "GET", .pattern = "/api/v1/report", .fn = api_report_multi, .need = V,
	    .slow = 1 },
	{ .method = "GET", .pattern = "/api/v1/runs/{id}", .fn = api_runs_get, .need = V },
	{ .method = "GET", .pattern = "/api/v1/runs/{id}/log", .fn = api_runs_log, .need = V },
	{ .method = "GET", .pattern = "/api/v1/runs/{id}/profile", .fn = api_runs_profile, .need = V },
	{ .method = "GET", .pattern = "/api/v1/snapshots/{name}", .fn = api_snapshots_get, .need = V },
	{ .method = "GET", .pattern = "/api/v1/artifacts/{name}", .fn = api_artifacts_get, .need = V },
	{ .method = "GET", .pattern = "/api/v1/machines", .fn = api_machines_list, .need = V,
	    .etag = 1 },
	{ .method = "POST", .pattern = "/api/v1/machines", .fn = api_machines_create, .need = A },
	{ .method = "GET", .pattern = "/api/v1/machines/{name}", .fn = api_machines_get, .need = V },
	{ .method = "DELETE", .pattern = "/api/v1/machines/{name}", .fn = api_machines_delete, .need = A },
	{ .method = "POST", .pattern = "/api/v1/machines/{name}/probe", .fn = api_machines_probe, .need = A,
	    .slow = 1 },
	{ .method = "POST", .pattern = "/api/v1/machines/{name}/clear", .fn = api_machines_clear, .need = A },
	{ .method = "GET", .pattern = "/api/v1/recipes", .fn = api_recipes_list_all, .need = V },
	{ .method = "POST", .pattern = "/api/v1/recipes", .fn = api_recipes_import, .need = A },
	{ .method = "GET", .pattern = "/api/v1/recipes/{name}", .fn = api_recipes_get, .need = V },
	{ .method = "GET", .pattern = "/api/v1/events", .fn = api_events, .need = V },
	{ .method = "GET", .pattern = "/api/v1/jobs/{id}/bundle", .fn = api_jobs_bundle, .need = V },
	{ .method = "POST", .pattern = "/api/v1/jobs/{id}/publish", .fn = api_jobs_publish, .need = A },
	{ .method = "POST", .pattern = "/api/v1/reproductions", .fn = api_repro_create, .need = S,
	    .slow = 1 },
	{ .method = "GET", .pattern = "/api/v1/reproductions", .fn = api_repro_list, .need = V },
	{ .method = "GET", .pattern = "/api/v1/reproductions/{id}", .fn = api_repro_get, .need = V },
	{ .method = "POST", .pattern = "/api/v1/bisections", .fn = api_bisect_create, .need = S },
	{ .method = "GET", .pattern = "/api/v1/bisections", .fn = api_bisect_list, .need = V },
	{ .method = "GET", .pattern = "/api/v1/bisections/{id}", .fn = api_bisect_get, .need = V },
	{ .method = "POST", .pattern = "/api/v1/bisections/{id}/cancel", .fn = api_bisect_cancel,
	    .need = S },
	{ .method = "GET", .pattern = "/api/v1/lab", .fn = api_lab_get, .need = API_PUBLIC },
	{ .method = "GET", .pattern = "/api/v1/labs", .fn = api_labs_list, .need = V },
	{ .method = "POST", .pattern = "/api/v1/labs", .fn = api_labs_trust, .need = A },
	{ .method = "DELETE", .pattern = "/api/v1/labs/{name}", .fn = api_labs_untrust, .need = A },
	{ .method = "GET", .pattern = "/api/v1/audit", .fn = api_audit_list, .need = A },
};
#undef V
#undef S
#undef A
#define API_NROUTES (sizeof(api_routes) / sizeof(api_routes[0]))

void
api_json(struct api_resp *rs, unsigned int status, json_t *j)
{
	json_decref(rs->json);
	rs->status = status;
	rs->json = j;
}

void
api_error(struct api_resp *rs, unsigned int status, const char *field, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api_json(rs, status, json_pack("{s:s,s:o}", "error", msg, "detail",
	    field != NULL && *field != '\0' ? json_pack("{s:s}", "field", field) : json_null()));
}

void
api_store_error(struct api_resp *rs, int r, const char *what)
{
	switch (r) {
	case BF_ERR_NOTFOUND:
		api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "%s not found", what);
		break;
	case BF_ERR_EXISTS:
		api_error(rs, MHD_HTTP_CONFLICT, NULL, "%s already exists", what);
		break;
	case BF_ERR_STATE:
		api_error(rs, MHD_HTTP_CONFLICT, NULL, "%s: not allowed in its current state",
		    what);
		break;
	case BF_ERR_DB:
		/* the store is away (a PostgreSQL restart, a network cut):
		 * nothing was written; the client may try again */
		api_error(rs, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "%s: the store failed: %s",
		    what, store_last_error());
		break;
	default:
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "%s: %s", what,
		    bf_err_str(r));
		break;
	}
}

const char *
api_query(struct api_req *rq, const char *key)
{
	return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key);
}

/* Match path against pattern, filling the captures of rq. */
static int
route_match(const char *pattern, const char *path, struct api_req *rq)
{
	const char *p = pattern, *s = path, *pe, *se;
	size_t plen, slen;
	int64_t id;

	for (;;) {
		if (*p == '\0' || *s == '\0')
			return *p == '\0' && *s == '\0';
		if (*p != '/' || *s != '/')
			return 0;
		p++;
		s++;
		pe = strchr(p, '/');
		se = strchr(s, '/');
		plen = pe ? (size_t)(pe - p) : strlen(p);
		slen = se ? (size_t)(se - s) : strlen(s);
		if (plen == 4 && strncmp(p, "{id}", 4) == 0) {
			if (parse_i64_n(s, slen, 1, INT64_MAX, &id) != 0)
				return 0;
			rq->id = id;
		} else if (plen == 6 && strncmp(p, "{name}", 6) == 0) {
			if (slen == 0 || slen > BF_MAX_NAME)
				return 0;
			memcpy(rq->name, s, slen);
			rq->name[slen] = '\0';
			if (jx_check_name(rq->name, "", NULL) != 0)
				return 0;
		} else if (plen != slen || strncmp(p, s, plen) != 0) {
			return 0;
		}
		p += plen;
		s += slen;
	}
}

static enum MHD_Result
api_send(struct MHD_Connection *conn, struct api_resp *rs)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char *body;
	size_t len;
	const char *ctype;

	if (rs->raw != NULL) {
		ret = MHD_queue_response(conn, rs->status ? rs->status : 500, rs->raw);
		MHD_destroy_response(rs->raw);
		rs->raw = NULL;
		return ret;
	}
	if (rs->json != NULL) {
		if ((body = json_dumps(rs->json, JSON_COMPACT)) == NULL)
			return MHD_NO;
		len = strlen(body);
		ctype = "application/json";
	} else {
		body = rs->text;
		rs->text = NULL;
		len = rs->text_len;
		ctype = rs->ctype ? rs->ctype : "text/plain; charset=utf-8";
		if (body == NULL && (body = strdup("")) == NULL)
			return MHD_NO;
	}
	if ((resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE)) ==
	    NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	/* a tagged answer may be kept, if asked about again (304) first */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, rs->etag[0] != '\0' ?
	    "private, no-cache" : "no-store");
	if (rs->etag[0] != '\0')
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, rs->etag);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (rs->json == NULL && rs->csp != NULL)
		MHD_add_response_header(resp, "Content-Security-Policy", rs->csp);
	if (rs->json == NULL && rs->disposition != NULL)
		MHD_add_response_header(resp, "Content-Disposition", rs->disposition);
	if (rs->json == NULL && rs->perf_event[0] != '\0')
		MHD_add_response_header(resp, "X-Benchfleet-Perf-Event", rs->perf_event);
	if (rs->json == NULL && rs->artifact_sha256[0] != '\0')
		MHD_add_response_header(resp, "X-Benchfleet-Artifact-Sha256", rs->artifact_sha256);
	if (rs->has_event_id) {
		char idbuf[24];

		snprintf(idbuf, sizeof(idbuf), "%llu", (unsigned long long)rs->event_id);
		MHD_add_response_header(resp, "X-Benchfleet-Event-Id", idbuf);
	}
	if (rs->status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		    "Bearer realm=\"benchfleet\"");
	/* Every 503 is a busy slot or a worker not up yet: say when to retry. */
	if (rs->status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER,
		    BF_STR(BF_HTTP_RETRY_AFTER_S));
	ret = MHD_queue_response(conn, rs->status ? rs->status : 500, resp);
	MHD_destroy_response(resp);
	return ret;
}

static const struct {
	const char *ext;
	const char *ctype;
} web_types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".png", "image/png" },
	{ ".json", "application/json" },
	{ ".ico", "image/x-icon" },
};

/*
 * Open rel under the web root, component by component with O_NOFOLLOW, so
 * that no symlink anywhere below the root is followed (the root itself may
 * be one). Only a regular file is returned (fstat after open: no
 * directory, device or FIFO; O_NONBLOCK so that a FIFO cannot hang us).
 * -1 when there is none.
 */
static int
api_web_open(const char *root, const char *rel, struct stat *sb)
{
	char comp[256];
	const char *p = rel, *slash;
	size_t len;
	int dfd, fd;

	if ((dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	for (;;) {
		slash = strchr(p, '/');
		len = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (len == 0 || len >= sizeof(comp)) {
			close(dfd);
			return -1;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		fd = openat(dfd, comp, (slash != NULL ? O_DIRECTORY : O_NONBLOCK) | O_RDONLY |
		    O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
		if (fd == -1)
			return -1;
		if (slash == NULL)
			break;
		dfd = fd;
		p = slash + 1;
	}
	if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Static files of the dashboard. Only [A-Za-z0-9._-/] paths without "..",
 * no dot files, only known types, and only regular files reached without a
 * symlink (api_web_open) are served. */
static enum MHD_Result
api_web(struct api *a, struct MHD_Connection *conn, const char *path)
{
	struct MHD_Response *resp;
	struct api_resp rs = { 0 };
	const char *rel = path + 1, *ctype = NULL, *c;
	struct stat sb;
	enum MHD_Result ret;
	size_t i, n;
	int fd;

	if (*rel == '\0')
		rel = "index.html";
	for (c = rel; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-' ||
		    *c == '/'))
			goto notfound;
	if (strstr(rel, "..") != NULL || strstr(rel, "/.") != NULL || rel[0] == '.' ||
	    a->web_dir == NULL)
		goto notfound;
	n = strlen(rel);
	for (i = 0; i < sizeof(web_types) / sizeof(web_types[0]); i++) {
		size_t el = strlen(web_types[i].ext);

		if (n > el && strcmp(rel + n - el, web_types[i].ext) == 0)
			ctype = web_types[i].ctype;
	}
	if (ctype == NULL || (fd = api_web_open(a->web_dir, rel, &sb)) == -1)
		goto notfound;
	if ((resp = MHD_create_response_from_fd((uint64_t)sb.st_size, fd)) == NULL) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Content-Security-Policy",
	    "default-src 'self'; style-src 'self'; img-src 'self' data:");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
notfound:
	api_error(&rs, MHD_HTTP_NOT_FOUND, NULL, "no such page: %s", path);
	ret = api_send(conn, &rs);
	json_decref(rs.json);
	return ret;
}

/*
 * With auth not latched on: 1 when the store holds no token. Counting them
 * took the store's lock and a query on every request; a count of none is
 * kept with the store generation taken before it, and holds while the
 * generation does (a token created since, by `benchfleetd token create` in
 * another process included, is a commit that moves it). Fails closed, with
 * rs filled, when the store cannot say; but a store that was only away for
 * a moment does not latch auth on: auth turns on for good once a token
 * exists (tokens are revoked, never deleted).
 */
static int
api_no_tokens(struct api *a, struct api_resp *rs)
{
	char gen[STORE_GENERATION_MAX];
	int64_t ntok = 0;
	int r, same;

	if (store_generation(a->st, gen, sizeof(gen)) != 0)
		gen[0] = '\0';
	pthread_mutex_lock(&a->notok_mu);
	same = gen[0] != '\0' && strcmp(gen, a->notok_gen) == 0;
	pthread_mutex_unlock(&a->notok_mu);
	if (same)
		return 1;
	if ((r = store_token_count(a->st, &ntok)) != 0) {
		api_store_error(rs, r, "checking for API tokens");
		return 0;
	}
	if (ntok != 0)
		return 0;
	pthread_mutex_lock(&a->notok_mu);
	snprintf(a->notok_gen, sizeof(a->notok_gen), "%s", gen);
	pthread_mutex_unlock(&a->notok_mu);
	return 1;
}

/*
 * The caller's token against the route's role: 1 to go on, 0 with rs
 * filled (401 without a valid token, 403 for too small a role). With auth
 * off, every caller is an anonymous admin (token_id 0). The token itself
 * is never logged or echoed.
 */
static int
api_authorize(struct api *a, const struct api_route *rt, struct api_req *rq,
    struct api_resp *rs)
{
	enum auth_role need = rt->need >= AUTH_VIEWER && rt->need <= AUTH_ADMIN ?
	    (enum auth_role)rt->need : AUTH_ADMIN;
	int r;

	rq->who.token_id = 0;
	rq->who.role = AUTH_ADMIN;
	if (rt->need == API_PUBLIC)
		return 1;
	if (!atomic_load(&a->auth_on) && !a->cfg.auth_required) {
		if (api_no_tokens(a, rs))
			return 1;
		if (rs->status != 0)
			return 0;
	}
	atomic_store(&a->auth_on, 1);
	r = auth_check(a->st, MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_AUTHORIZATION), &rq->who);
	if (r == BF_ERR_AUTH) {
		api_error(rs, MHD_HTTP_UNAUTHORIZED, NULL, "a valid bearer token is required "
		    "(Authorization: Bearer TOKEN; see benchfleetd token create)");
		return 0;
	}
	if (r != 0) {
		api_store_error(rs, r, "checking the token");
		return 0;
	}
	if (!auth_role_allows(rq->who.role, need)) {
		api_error(rs, MHD_HTTP_FORBIDDEN, NULL, "%s %s needs the %s role; this token "
		    "has %s", rq->method, rt->pattern, auth_role_name(need),
		    auth_role_name(rq->who.role));
		return 0;
	}
	return 1;
}

/* The route of rq (its index, captures filled), or -1 with rs filled. */
static int
api_route_find(struct api_req *rq, struct api_resp *rs)
{
	size_t i;
	int path_known = 0;

	for (i = 0; i < API_NROUTES; i++) {
		if (!route_match(api_routes[i].pattern, rq->path, rq))
			continue;
		path_known = 1;
		if (strcmp(api_routes[i].method, rq->method) == 0)
			return (int)i;
	}
	if (path_known)
		api_error(rs, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "method %s not allowed on %s",
		    rq->method, rq->path);
	else
		api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "no such resource: %s", rq->path);
	return -1;
}

/*
 * If-None-Match (hdr, untrusted) names etag: "*", or one of its
 * comma-separated entity tags, weak ("W/") or not, equals it byte for byte.
 * Anything malformed matches nothing, so the full answer goes out.
 */
static int
api_etag_match(const char *hdr, const char *etag)
{
	size_t n = strlen(etag), len;
	const char *p = hdr, *q;

	if (p == NULL || n == 0)
		return 0;
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return 1;
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		if (*p != '"' || (q = strchr(p + 1, '"')) == NULL)
			return 0;
		len = (size_t)(q - p) + 1;
		if (len == n && memcmp(p, etag, n) == 0)
			return 1;
		p = q + 1;
	}
	return 0;
}

/*
 * The polling GETs (the dashboard's jobs list, job, runs, machines): the
 * token is taken before the handler reads, so a write between the two only
 * makes the body newer than its tag, never older; a client's tag that
 * still equals the store's then names the data as it is (304, no body).
 */
static int
api_etag(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	char gen[STORE_GENERATION_MAX];

	if (!api_routes[rq->route].etag || store_generation(a->st, gen, sizeof(gen)) != 0)
		return 0;
	snprintf(rs->etag, sizeof(rs->etag), "\"%s\"", gen);
	if (!api_etag_match(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_IF_NONE_MATCH), rs->etag))
		return 0;
	rs->status = MHD_HTTP_NOT_MODIFIED;
	return 1;
}

void
api_dispatch(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	if (api_etag(a, rq, rs) || api_cache_get(a->cache, rq, rs))
		return;
	api_routes[rq->route].fn(a, rq, rs);
	if (rs->status != MHD_HTTP_OK)
		rs->etag[0] = '\0';
	/* a tagged JSON answer: dumped here (as api_send would) and kept */
	if (rs->etag[0] != '\0' && rs->json != NULL && !rs->has_event_id &&
	    (rs->text = json_dumps(rs->json, JSON_COMPACT)) != NULL) {
		rs->text_len = strlen(rs->text);
		rs->ctype = "application/json";
		json_decref(rs->json);
		rs->json = NULL;
		api_cache_put(a->cache, rq, rs);
	}
	if (rs->json == NULL && rs->text == NULL && rs->raw == NULL && rs->status == 0)
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL,
		    "internal error: empty response");
}

static int
api_is_static(const char *url, const char *method)
{
	return strncmp(url, "/api/", 5) != 0 && strcmp(url, "/healthz") != 0 &&
	    strcmp(url, "/metrics") != 0 && strcmp(method, "GET") == 0;
}

/*
 * The first call, with the headers and no body: everything that can refuse
 * the request is decided here, so that nothing of a refused body is read
 * (MHD closes the connection after an answer given before the body).
 * 1 when the body may come, 0 with rs filled.
 */
static int
api_admit(struct api *a, struct MHD_Connection *conn, struct api_req *rq,
    const char *version, struct api_resp *rs)
{
	const char *cl;
	int64_t n;

	if (!api_guard_framing(conn, rs) || !api_guard_host(a, conn, version, rs) ||
	    !api_guard_origin(a, conn, rs) || (rq->route = api_route_find(rq, rs)) < 0 ||
	    !api_guard_ctype(conn, rq->method, rs) ||
	    !api_authorize(a, &api_routes[rq->route], rq, rs))
		return 0;
	cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && (parse_i64(cl, 0, INT64_MAX, &n) != 0 || n > BF_MAX_API_BODY)) {
		api_error(rs, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
		    "request body is larger than %d bytes", BF_MAX_API_BODY);
		return 0;
	}
	return 1;
}

/* Keep n more bytes of rq's body, within BF_MAX_API_BODY for the request
 * and BF_MAX_API_BODIES for all of them. */
static void
api_body_append(struct api *a, struct api_req *rq, const char *data, size_t n)
{
	if (rq->too_big || rq->busy)
		return;
	if (atomic_fetch_add(&a->body_bytes, n) + n > BF_MAX_API_BODIES) {
		atomic_fetch_sub(&a->body_bytes, n);
		rq->busy = 1;
	} else {
		rq->counted += n;
		if (buf_append(&rq->body, data, n) == 0)
			return;
		rq->too_big = 1;
	}
	buf_free(&rq->body);
	atomic_fetch_sub(&a->body_bytes, rq->counted);
	rq->counted = 0;
}

static enum MHD_Result
api_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
    const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct api *a = cls;
	struct api_req *rq = *con_cls;
	struct api_resp rs = { 0 };
	enum MHD_Result ret;

	if (rq == NULL) {
		if ((rq = calloc(1, sizeof(*rq))) == NULL)
			return MHD_NO;
		buf_init(&rq->body, BF_MAX_API_BODY);
		rq->conn = conn;
		rq->method = method;
		rq->path = url;
		rq->route = -1;
		*con_cls = rq;
		if (api_is_static(url, method)) {
			rq->answered = 1;
			api_conn_set_state(a, conn, API_CONN_ANSWER);
			if (!api_guard_framing(conn, &rs) || !api_guard_host(a, conn, version, &rs))
				goto respond;
			return api_web(a, conn, url);
		}
		if (!api_admit(a, conn, rq, version, &rs)) {
			rq->answered = 1;
			goto respond;
		}
		api_conn_set_state(a, conn, API_CONN_BODY);
		return MHD_YES;
	}
	if (rq->answered) {
		/* a slow handler's answer, on the call after its resume */
		if (api_slow_take(rq, &rs))
			goto respond;
		/* MHD may still hand us body bytes before it closes */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		/* A chunked body has no length up front. Past the cap, the rest is
		 * read and dropped (libmicrohttpd 0.9.75 cannot answer mid-upload);
		 * memory stays bounded and BF_HTTP_BODY_DEADLINE_S bounds time. */
		api_body_append(a, rq, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	rq->answered = 1;
	api_conn_set_state(a, conn, API_CONN_ANSWER);
	if (rq->too_big)
		api_error(&rs, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
		    "request body is larger than %d bytes", BF_MAX_API_BODY);
	else if (rq->busy)
		api_error(&rs, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "too many request bodies "
		    "in flight (%d bytes); try again", BF_MAX_API_BODIES);
	else if (api_routes[rq->route].slow && api_slow_start(a, rq, &rs))
		return MHD_YES;		/* answered after api_slow_main resumes it */
	else if (rs.status == 0)
		api_dispatch(a, rq, &rs);
respond:
	ret = api_send(conn, &rs);
	json_decref(rs.json);
	free(rs.text);
	return ret;
}

static void
api_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct api_req *rq = *con_cls;

	struct api *a = cls;

	/* keep-alive: the next request's headers have their deadline anew */
	api_conn_set_state(a, conn, API_CONN_HEADERS);
	if (rq == NULL)
		return;
	buf_free(&rq->body);
	atomic_fetch_sub(&a->body_bytes, rq->counted);
	api_slow_free(rq);
	free(rq);
	*con_cls = NULL;
}

#define API_MAX_PEM	(64 * 1024)
int
api_read_pem(const char *path, const char *what, char **out, size_t *lenp,
    struct bf_diag *d)
{
	char *p = NULL;
	size_t n = 0;
	ssize_t k;
	int fd = -1, r;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		bf_diag_set(d, what, "%s: %s", path, strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	if ((p = malloc(API_MAX_PEM + 1)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	while ((k = read(fd, p + n, API_MAX_PEM + 1 - n)) > 0 && n + (size_t)k <= API_MAX_PEM)
		n += (size_t)k;
	if (k < 0 || k > 0 || n == 0) {
		bf_diag_set(d, what, "%s: %s", path, k < 0 ? strerror(errno) :
		    n == 0 ? "is empty" : "is larger than 64 KiB");
		r = k < 0 ? BF_ERR_IO : BF_ERR_INVALID;
		goto out;
	}
	p[n] = '\0';
	*out = p;
	*lenp = n;
	p = NULL;
	r = 0;
out:
	if (p != NULL) {
		explicit_bzero(p, API_MAX_PEM + 1);
		free(p);
	}
	if (fd != -1)
		close(fd);
	return r;
}

/* Descriptors for BF_MAX_CONNECTIONS connections, the tarpit of evicted
 * ones (api-conn.c) and the rest of the daemon: systemd's soft limit is
 * 1024. Nothing here uses select(). */
static void
api_raise_nofile(void)
{
	const rlim_t want = BF_MAX_CONNECTIONS + BF_MAX_CONN_TARPIT + 2048;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static void
api_direct_kick(void *arg, int machines)
{
	if (machines)
		sched_kick_machines(arg);
	else
		sched_kick(arg);
}

static int
api_direct_probe(void *arg, const char *name)
{
	return sched_probe(arg, name);
}

static int
api_direct_key(void *arg, const char *path)
{
	(void)arg;
	return access(path, R_OK) == 0 ? 0 : BF_ERR_NOTFOUND;
}

void
api_kick(struct api *a)
{
	a->cfg.ctl.kick(a->cfg.ctl.arg, 0);
}

void
api_kick_machines(struct api *a)
{
	a->cfg.ctl.kick(a->cfg.ctl.arg, 1);
}

int
api_probe(struct api *a, const char *name)
{
	return a->cfg.ctl.probe(a->cfg.ctl.arg, name);
}

int
api_key_readable(struct api *a, const char *path)
{
	return a->cfg.ctl.key_readable(a->cfg.ctl.arg, path);
}

/*
 * A pool of threads over poll(), as many as CPUs (at least API_MIN_POOL),
 * not a thread per connection: 64 keep-alive clients of GET /api/v1/jobs
 * were 64 threads taking turns on 2 cores and on the store lock. Measured
 * (RelWithDebInfo, wrk -t2 -c64 -d3s, 1 job, shared 2-core box): a thread
 * per connection 23.0k req/s, p99 57 ms; a pool of 2 25.0-26.7k, p99
 * 10.4-10.7 ms; a pool of 4 25.7-26.5k, p99 17-21 ms. A pool thread never
 * waits for an event: a stream with nothing to send is suspended and
 * parked off the pool (api-events.c). A route that may wait (a fetch from
 * another lab, a probe over SSH, a report of millions of samples) is
 * marked slow and runs on a thread of its own (api-slow.c), so that it
 * never holds its pool thread's other connections.
 * The connection limit (split among the pool's threads by libmicrohttpd)
 * bounds descriptors, and api-conn.c keeps slow clients from holding them:
 * 2,000 trickling connections from one address cost 16 slots
 * (BF_MAX_CONN_SLOW_PER_IP). poll(), not epoll: the eviction of
 * api-conn.c points MHD's descriptor number at a dead socket (dup3), which
 * an epoll set, keyed by the file behind the number, does not follow
 * (libmicrohttpd aborts: "Failed to remove FD from epoll set"); poll()
 * takes the numbers afresh on every call. Not select(): descriptors past
 * FD_SETSIZE stay usable.
 */
#define API_MIN_POOL	2
#define API_MAX_POOL	64

int
api_start(const struct api_config *cfg, struct store *st, const struct recipes *rs,
    struct sched *sc, struct events *ev, struct api **out, struct bf_diag *d)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	const union MHD_DaemonInfo *info;
	struct MHD_OptionItem tls[4] = { { MHD_OPTION_END, 0, NULL } };
	struct api *a = NULL;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
	    MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int r;

	*out = NULL;
	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, cfg->addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)cfg->port);
	} else if (inet_pton(AF_INET6, cfg->addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)cfg->port);
		flags |= MHD_USE_IPv6;
	} else {
		bf_diag_set(d, "listen", "\"%s\" is not a numeric IPv4 or IPv6 address",
		    cfg->addr);
		return BF_ERR_INVALID;
	}
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return BF_ERR_ALLOC;
	if (pthread_mutex_init(&a->notok_mu, NULL) != 0) {
		free(a);
		return BF_ERR_SYS;
	}
	a->cfg = *cfg;
	a->st = st;
	a->rs = rs;
	a->sc = sc;
	a->ev = ev;
	if (a->cfg.ctl.kick == NULL)
		a->cfg.ctl = (struct api_ctl){ api_direct_kick, api_direct_probe,
		    api_direct_key, sc };
	if (cfg->web_dir != NULL && (a->web_dir = strdup(cfg->web_dir)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = api_guard_hosts_parse(cfg->allow_hosts, &a->allow_hosts, &a->nallow_hosts,
	    d)) != 0)
		goto out;
	snprintf(a->listen_host, sizeof(a->listen_host), "%s%s%s",
	    ss.ss_family == AF_INET6 ? "[" : "", cfg->addr, ss.ss_family == AF_INET6 ? "]" : "");
	a->listen_any = (ss.ss_family == AF_INET && sin->sin_addr.s_addr == htonl(INADDR_ANY)) ||
	    (ss.ss_family == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr));
	a->listen_loopback = (ss.ss_family == AF_INET &&
	    (ntohl(sin->sin_addr.s_addr) >> 24) == 127) ||
	    (ss.ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr));
	a->tls = cfg->tls_cert != NULL;
	api_raise_nofile();
	if ((r = api_conns_new(&a->conns)) != 0) {
		bf_diag_set(d, "listen", "cannot start the connection reaper");
		goto out;
	}
	if ((cfg->tls_cert != NULL) != (cfg->tls_key != NULL)) {
		bf_diag_set(d, "tls", "--tls-cert and --tls-key go together");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (cfg->tls_cert != NULL) {
		size_t clen;

		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			bf_diag_set(d, "tls", "this libmicrohttpd was built without TLS (GnuTLS)");
			r = BF_ERR_INVALID;
			goto out;
		}
		if (cfg->tls_cert_pem != NULL && cfg->tls_key_pem != NULL) {
			if ((a->tls_cert_pem = strdup(cfg->tls_cert_pem)) == NULL ||
			    (a->tls_key_pem = strdup(cfg->tls_key_pem)) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			a->tls_key_len = strlen(a->tls_key_pem);
		} else if ((r = api_read_pem(cfg->tls_cert, "tls-cert", &a->tls_cert_pem, &clen,
		    d)) != 0 ||
		    (r = api_read_pem(cfg->tls_key, "tls-key", &a->tls_key_pem, &a->tls_key_len,
		    d)) != 0)
			goto out;
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, a->tls_cert_pem };
		tls[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, a->tls_key_pem };
		/* TLS 1.2 and 1.3 only. */
		tls[2] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
		    (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2" };
		tls[3] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	}
	if ((r = api_cache_new(&a->cache)) != 0)
		goto out;
	if ((r = api_events_start(a)) != 0) {
		bf_diag_set(d, "events", "cannot start the event streams' waker");
		goto out;
	}
	if ((r = api_slow_init(a)) != 0)
		goto out;
	a->mhd = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, api_access, a,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_NOTIFY_COMPLETED, api_completed, a,
	    MHD_OPTION_NOTIFY_CONNECTION, api_conn_notify, a,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)60,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)BF_MAX_CONNECTIONS,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)BF_MAX_CONN_PER_IP,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
	    MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(ncpu < API_MIN_POOL ? API_MIN_POOL :
	    ncpu > API_MAX_POOL ? API_MAX_POOL : ncpu),
	    MHD_OPTION_ARRAY, tls,
	    MHD_OPTION_END);
	if (a->mhd == NULL) {
		bf_diag_set(d, "listen", "cannot listen on %s:%d%s: %s", cfg->addr, cfg->port,
		    cfg->tls_cert != NULL ? " with TLS (check the certificate and key)" : "",
		    strerror(errno));
		r = BF_ERR_SYS;
		goto out;
	}
	info = MHD_get_daemon_info(a->mhd, MHD_DAEMON_INFO_BIND_PORT);
	a->port = info != NULL ? info->port : cfg->port;
	*out = a;
	a = NULL;
	r = 0;
out:
	api_stop(a);
	return r;
}

int
api_port(const struct api *a)
{
	return a->port;
}

void
api_stop(struct api *a)
{
	if (a == NULL)
		return;
	/* No stream may stay suspended when MHD stops: the waker resumes them
	 * all, and each sees stopping and ends. */
	atomic_store(&a->stopping, 1);
	api_events_stop(a);
	api_slow_drain(a);		/* nothing suspended when MHD stops */
	if (a->mhd != NULL)
		MHD_stop_daemon(a->mhd);
	api_slow_fini(a);
	api_conns_free(a->conns);
	api_cache_free(a->cache);
	pthread_mutex_destroy(&a->notok_mu);
	free(a->allow_hosts);
	free(a->web_dir);
	free(a->tls_cert_pem);
	if (a->tls_key_pem != NULL) {
		explicit_bzero(a->tls_key_pem, a->tls_key_len);
		free(a->tls_key_pem);
	}
	free(a);
}
