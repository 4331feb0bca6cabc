/*
 * api.c: the HTTP server. Requests are matched against one route table;
 * bodies are collected under BF_MAX_API_BODY (over it: 413 without reading
 * the rest); every error is JSON {"error", "detail"}. Static files of the
 * dashboard are served from web/ at /.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api-int.h"
#include "jx.h"
#include "parse.h"

struct api_route {
	const char *method;
	const char *pattern;	/* segments; {id} an integer, {name} a name */
	api_handler fn;
};

static const struct api_route api_routes[] = {
	{ "GET",    "/api/v1/healthz",			api_health },
	{ "GET",    "/healthz",				api_health },
	{ "GET",    "/api/v1/metrics",			api_metrics },
	{ "GET",    "/metrics",				api_metrics },
	{ "GET",    "/api/v1/jobs",			api_jobs_list },
	{ "POST",   "/api/v1/jobs",			api_jobs_create },
	{ "GET",    "/api/v1/jobs/{id}",		api_jobs_get },
	{ "POST",   "/api/v1/jobs/{id}/cancel",		api_jobs_cancel },
	{ "GET",    "/api/v1/jobs/{id}/runs",		api_jobs_runs },
	{ "GET",    "/api/v1/jobs/{id}/report",		api_jobs_report },
	{ "GET",    "/api/v1/runs/{id}",		api_runs_get },
	{ "GET",    "/api/v1/runs/{id}/log",		api_runs_log },
	{ "GET",    "/api/v1/machines",			api_machines_list },
	{ "POST",   "/api/v1/machines",			api_machines_create },
	{ "GET",    "/api/v1/machines/{name}",		api_machines_get },
	{ "DELETE", "/api/v1/machines/{name}",		api_machines_delete },
	{ "GET",    "/api/v1/recipes",			api_recipes_list },
	{ "GET",    "/api/v1/recipes/{name}",		api_recipes_get },
};
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
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
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

/* Static files of the dashboard. Only [A-Za-z0-9._-/] paths without "..",
 * no dot files, and only known types are served. */
static enum MHD_Result
api_web(struct api *a, struct MHD_Connection *conn, const char *path)
{
	struct MHD_Response *resp;
	struct api_resp rs = { 0 };
	const char *rel = path + 1, *ctype = NULL, *c;
	char full[4096];
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
	if (ctype == NULL ||
	    (size_t)snprintf(full, sizeof(full), "%s/%s", a->web_dir, rel) >= sizeof(full))
		goto notfound;
	if ((fd = open(full, O_RDONLY | O_CLOEXEC)) == -1)
		goto notfound;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		goto notfound;
	}
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

static void
api_dispatch(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	size_t i;
	int path_known = 0;

	for (i = 0; i < API_NROUTES; i++) {
		if (!route_match(api_routes[i].pattern, rq->path, rq))
			continue;
		path_known = 1;
		if (strcmp(api_routes[i].method, rq->method) == 0) {
			api_routes[i].fn(a, rq, rs);
			if (rs->json == NULL && rs->text == NULL && rs->status == 0)
				api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL,
				    "internal error: empty response");
			return;
		}
	}
	if (path_known)
		api_error(rs, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "method %s not allowed on %s",
		    rq->method, rq->path);
	else
		api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "no such resource: %s", rq->path);
}

static enum MHD_Result
api_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
    const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct api *a = cls;
	struct api_req *rq = *con_cls;
	struct api_resp rs = { 0 };
	const char *cl;
	int64_t n;
	enum MHD_Result ret;

	if (rq == NULL) {
		if ((rq = calloc(1, sizeof(*rq))) == NULL)
			return MHD_NO;
		buf_init(&rq->body, BF_MAX_API_BODY);
		rq->conn = conn;
		*con_cls = rq;
		cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		    MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl != NULL && (parse_i64(cl, 0, INT64_MAX, &n) != 0 ||
		    n > BF_MAX_API_BODY)) {
			/* Answer before reading: MHD closes the connection. */
			rq->too_big = 1;
			goto respond;
		}
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		/* A chunked body has no length up front. Past the cap, the rest is
		 * read and dropped (libmicrohttpd 0.9.75 cannot answer mid-upload);
		 * memory stays bounded and the connection timeout bounds time. */
		if (!rq->too_big && buf_append(&rq->body, upload_data, *upload_data_size) != 0) {
			rq->too_big = 1;
			buf_free(&rq->body);
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
 respond:
	rq->method = method;
	rq->path = url;
	if (rq->too_big)
		api_error(&rs, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
		    "request body is larger than %d bytes", BF_MAX_API_BODY);
	else if (strncmp(url, "/api/", 5) != 0 && strcmp(url, "/healthz") != 0 &&
	    strcmp(url, "/metrics") != 0 && strcmp(method, "GET") == 0)
		return api_web(a, conn, url);
	else
		api_dispatch(a, rq, &rs);
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

	if (rq == NULL)
		return;
	buf_free(&rq->body);
	free(rq);
	*con_cls = NULL;
}

int
api_start(const struct api_config *cfg, struct store *st, const struct recipes *rs,
    struct sched *sc, struct api **out, struct bf_diag *d)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	const union MHD_DaemonInfo *info;
	struct api *a = NULL;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
	    MHD_USE_ERROR_LOG;
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
	a->cfg = *cfg;
	a->st = st;
	a->rs = rs;
	a->sc = sc;
	if (cfg->web_dir != NULL && (a->web_dir = strdup(cfg->web_dir)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	a->mhd = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, api_access, a,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(cfg->threads > 0 ? cfg->threads : 4),
	    MHD_OPTION_NOTIFY_COMPLETED, api_completed, a,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)60,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)1000,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
	    MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
	    MHD_OPTION_END);
	if (a->mhd == NULL) {
		bf_diag_set(d, "listen", "cannot listen on %s:%d: %s", cfg->addr, cfg->port,
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
	if (a->mhd != NULL)
		MHD_stop_daemon(a->mhd);
	free(a->web_dir);
	free(a);
}
