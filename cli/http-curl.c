/*
 * http-curl.c: the https:// backend (see http-int.h): libcurl, loaded with
 * dlopen("libcurl.so.4") on the first https:// request, not linked: the
 * 30-odd libraries it pulls in (TLS, HTTP/2, IDN, LDAP, Kerberos...) cost
 * every run of the CLI ~3 ms of start, and only https:// needs them.
 * curl/curl.h is included for its types and constants only; each function
 * is called through http_curl_fn, filled by dlsym. One easy handle serves
 * every request of a run, so a poll loop keeps its connection.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "err.h"
#include "http-int.h"

#ifndef BF_VERSION
#define BF_VERSION "0"
#endif

#define HTTP_CURL_LIB	"libcurl.so.4"

/* The functions of libcurl we call. */
struct http_curl_api {
	CURLcode (*global_init)(long);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	void (*easy_reset)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	/* 7.84 on; NULL in an older libcurl */
#if LIBCURL_VERSION_NUM >= 0x075400
	CURLHcode (*easy_header)(CURL *, const char *, size_t, unsigned int, int,
	    struct curl_header **);
#else
	void (*easy_header)(void);
#endif
};

struct http_curl_sym {
	const char *name;
	size_t off;		/* in struct http_curl_api */
	int optional;
};

static const struct http_curl_sym http_curl_syms[] = {
	{ .name = "curl_global_init", .off = offsetof(struct http_curl_api, global_init) },
	{ .name = "curl_global_cleanup", .off = offsetof(struct http_curl_api, global_cleanup) },
	{ .name = "curl_easy_init", .off = offsetof(struct http_curl_api, easy_init) },
	{ .name = "curl_easy_cleanup", .off = offsetof(struct http_curl_api, easy_cleanup) },
	{ .name = "curl_easy_reset", .off = offsetof(struct http_curl_api, easy_reset) },
	{ .name = "curl_easy_setopt", .off = offsetof(struct http_curl_api, easy_setopt) },
	{ .name = "curl_easy_perform", .off = offsetof(struct http_curl_api, easy_perform) },
	{ .name = "curl_easy_getinfo", .off = offsetof(struct http_curl_api, easy_getinfo) },
	{ .name = "curl_easy_strerror", .off = offsetof(struct http_curl_api, easy_strerror) },
	{ .name = "curl_slist_append", .off = offsetof(struct http_curl_api, slist_append) },
	{ .name = "curl_slist_free_all", .off = offsetof(struct http_curl_api, slist_free_all) },
	{ .name = "curl_easy_header", .off = offsetof(struct http_curl_api, easy_header),
	    .optional = 1 },
};

_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
    "dlsym's result is stored as a function pointer");

/* Loaded once a process and never unloaded (libcurl's TLS library keeps
 * state of its own). */
static void *http_curl_dl;
static struct http_curl_api http_curl_fn;

/* Per struct http: the easy handle and its header list, made on first use. */
struct http_curl {
	CURL *curl;
	struct curl_slist *headers;
	int global;		/* curl_global_init done for this handle */
};

struct http_sink {
	struct buf *body;
	int toobig;
};

/* dlopen libcurl and find its functions; h->errbuf says why not. */
static int
http_curl_load(struct http *h)
{
	struct http_curl_api fn;
	const char *e;
	void *dl, *sym;
	size_t i;

	if (http_curl_dl != NULL)
		return 0;
	if ((dl = dlopen(HTTP_CURL_LIB, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		e = dlerror();
		snprintf(h->errbuf, sizeof(h->errbuf), "https:// needs %s, which cannot be "
		    "loaded: %s", HTTP_CURL_LIB, e != NULL ? e : "dlopen failed");
		return BF_ERR_SYS;
	}
	memset(&fn, 0, sizeof(fn));
	for (i = 0; i < sizeof(http_curl_syms) / sizeof(http_curl_syms[0]); i++) {
		sym = dlsym(dl, http_curl_syms[i].name);
		if (sym == NULL && !http_curl_syms[i].optional) {
			snprintf(h->errbuf, sizeof(h->errbuf), "%s has no %s: too old a libcurl",
			    HTTP_CURL_LIB, http_curl_syms[i].name);
			dlclose(dl);
			return BF_ERR_SYS;
		}
		memcpy((char *)&fn + http_curl_syms[i].off, &sym, sizeof(sym));
	}
	http_curl_fn = fn;
	http_curl_dl = dl;
	return 0;
}

/* Free a header list, wiping each entry first: one holds the token. */
static void
http_curl_headers_free(struct curl_slist *l)
{
	struct curl_slist *p;

	if (l == NULL)
		return;
	for (p = l; p != NULL; p = p->next)
		if (p->data != NULL)
			explicit_bzero(p->data, strlen(p->data));
	http_curl_fn.slist_free_all(l);
}

/* The easy handle of h, made (and libcurl loaded) on first use. */
static int
http_curl_ready(struct http *h, struct http_curl *hc)
{
	static const char *const fixed[] = {
		"Accept: application/json",
		"Content-Type: application/json",
		"Expect:",	/* no 100-continue round trip before a large body */
	};
	struct curl_slist *l = NULL, *nl;
	size_t i;
	int r;

	if (hc->curl != NULL)
		return 0;
	if ((r = http_curl_load(h)) != 0)
		return r;
	if (!hc->global) {
		if (http_curl_fn.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			snprintf(h->errbuf, sizeof(h->errbuf), "cannot initialise libcurl");
			return BF_ERR_SYS;
		}
		hc->global = 1;
	}
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if ((nl = http_curl_fn.slist_append(l, fixed[i])) == NULL)
			goto nomem;
		l = nl;
	}
	if (h->auth != NULL) {
		if ((nl = http_curl_fn.slist_append(l, h->auth)) == NULL)
			goto nomem;
		l = nl;
	}
	if ((hc->curl = http_curl_fn.easy_init()) == NULL)
		goto nomem;
	hc->headers = l;
	l = NULL;
	r = 0;
	goto out;
nomem:
	r = BF_ERR_ALLOC;
out:
	http_curl_headers_free(l);
	return r;
}

/* What every request sets on the (reset) handle. */
static int
http_curl_setup(struct http *h, CURL *c, const char *url, long timeout_ms)
{
	http_curl_fn.easy_reset(c);
	if (http_curl_fn.easy_setopt(c, CURLOPT_URL, url) != CURLE_OK) {
		snprintf(h->errbuf, sizeof(h->errbuf), "malformed URL");
		return BF_ERR_INVALID;
	}
	http_curl_fn.easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
	http_curl_fn.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	http_curl_fn.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	/* The front sends only https:// here. */
#if LIBCURL_VERSION_NUM >= 0x075500
	http_curl_fn.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
#else
	http_curl_fn.easy_setopt(c, CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTPS);
#endif
	http_curl_fn.easy_setopt(c, CURLOPT_USERAGENT, "benchfleet/" BF_VERSION);
	http_curl_fn.easy_setopt(c, CURLOPT_HTTPHEADER,
	    ((struct http_curl *)h->conn)->headers);
	if (timeout_ms > 0)
		http_curl_fn.easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	if (h->connect_ms > 0)
		http_curl_fn.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);
	return 0;
}

static size_t
http_curl_write(char *p, size_t size, size_t n, void *arg)
{
	struct http_sink *sink = arg;

	/* curl hands size == 1; the guard keeps the product honest anyway. */
	if (size != 0 && n > BF_MAX_API_RESPONSE / size) {
		sink->toobig = 1;
		return 0;
	}
	if (buf_append(sink->body, p, size * n) != 0) {
		sink->toobig = 1;
		return 0;
	}
	return size * n;
}

static int
http_curl_request(struct http *h, const char *method, const char *path,
    const char *body, size_t bodylen, struct http_resp *resp)
{
	struct http_curl *hc = h->conn;
	struct http_sink sink = { &resp->body, 0 };
	CURL *c;
	CURLcode cr;
	int r;

	(void)path;
	if ((r = http_curl_ready(h, hc)) != 0 ||
	    (r = http_curl_setup(h, hc->curl, resp->url, h->timeout_ms)) != 0)
		return r;
	c = hc->curl;
	http_curl_fn.easy_setopt(c, CURLOPT_WRITEFUNCTION, http_curl_write);
	http_curl_fn.easy_setopt(c, CURLOPT_WRITEDATA, &sink);
	http_curl_fn.easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)BF_MAX_API_RESPONSE);
	if (strcmp(method, "GET") == 0)
		http_curl_fn.easy_setopt(c, CURLOPT_HTTPGET, 1L);
	else if (strcmp(method, "POST") == 0) {
		http_curl_fn.easy_setopt(c, CURLOPT_POST, 1L);
		http_curl_fn.easy_setopt(c, CURLOPT_POSTFIELDS, body != NULL ? body : "");
		http_curl_fn.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)(body != NULL ? bodylen : 0));
	} else {
		http_curl_fn.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		if (body != NULL) {
			http_curl_fn.easy_setopt(c, CURLOPT_POSTFIELDS, body);
			http_curl_fn.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
			    (curl_off_t)bodylen);
		}
	}

	cr = http_curl_fn.easy_perform(c);
	if (cr != CURLE_OK) {
		if (h->errbuf[0] == '\0')
			snprintf(h->errbuf, sizeof(h->errbuf), "%s",
			    http_curl_fn.easy_strerror(cr));
		if (sink.toobig || cr == CURLE_FILESIZE_EXCEEDED) {
			snprintf(h->errbuf, sizeof(h->errbuf),
			    "response larger than %d bytes", BF_MAX_API_RESPONSE);
			r = BF_ERR_TOOBIG;
		} else if (cr == CURLE_OPERATION_TIMEDOUT)
			r = BF_ERR_TIMEOUT;
		else if (cr == CURLE_OUT_OF_MEMORY)
			r = BF_ERR_ALLOC;
		else
			r = BF_ERR_LOST;
		return r;
	}
	http_curl_fn.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	return 0;
}

/* A stream's state, as libcurl's callbacks see it. */
struct http_curl_stream {
	CURL *curl;
	struct http_stream_ctx *x;
};

static size_t
http_curl_stream_write(char *p, size_t size, size_t n, void *arg)
{
	struct http_curl_stream *s = arg;
	struct http_stream_ctx *x = s->x;
	struct http_sink sink = { &x->resp->body, 0 };

	if (size != 0 && n > SIZE_MAX / size)
		return 0;
	if (x->status == 0)
		http_curl_fn.easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &x->status);
	if (x->status != 200)
		return http_curl_write(p, size, n, &sink);	/* an error's body */
	if (http_stream_feed(x, p, size * n) != 0)
		return 0;
	return size * n;
}

static int
http_curl_stream_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	struct http_curl_stream *s = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	if (s->x->stop != NULL && *s->x->stop) {
		s->x->cancelled = 1;
		return 1;
	}
	return 0;
}

static int
http_curl_stream(struct http *h, const char *path, long max_ms, struct http_stream_ctx *x)
{
	struct http_curl *hc = h->conn;
	struct http_curl_stream s;
	CURL *c;
	CURLcode cr;
	int r;

	(void)path;
	if ((r = http_curl_ready(h, hc)) != 0 ||
	    (r = http_curl_setup(h, hc->curl, x->resp->url, max_ms)) != 0)
		return r;
	c = hc->curl;
	s.curl = c;
	s.x = x;
	http_curl_fn.easy_setopt(c, CURLOPT_HTTPGET, 1L);
	http_curl_fn.easy_setopt(c, CURLOPT_WRITEFUNCTION, http_curl_stream_write);
	http_curl_fn.easy_setopt(c, CURLOPT_WRITEDATA, &s);
	http_curl_fn.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, http_curl_stream_progress);
	http_curl_fn.easy_setopt(c, CURLOPT_XFERINFODATA, &s);
	http_curl_fn.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	cr = http_curl_fn.easy_perform(c);
	if (x->status == 0)
		http_curl_fn.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x->status);
	if (cr == CURLE_OK)
		return 0;
	if (h->errbuf[0] == '\0')
		snprintf(h->errbuf, sizeof(h->errbuf), "%s", http_curl_fn.easy_strerror(cr));
	return cr == CURLE_OPERATION_TIMEDOUT ? BF_ERR_TIMEOUT : BF_ERR_LOST;
}

static int
http_curl_header(struct http *h, const char *name, char *out, size_t outsz)
{
#if LIBCURL_VERSION_NUM >= 0x075400
	struct http_curl *hc = h->conn;
	struct curl_header *hd = NULL;

	if (hc == NULL || hc->curl == NULL || http_curl_fn.easy_header == NULL ||
	    http_curl_fn.easy_header(hc->curl, name, 0, CURLH_HEADER, -1, &hd) != CURLHE_OK ||
	    hd == NULL)
		return BF_ERR_NOTFOUND;
	snprintf(out, outsz, "%s", hd->value);
	return 0;
#else
	(void)h;
	(void)name;
	(void)out;
	(void)outsz;
	return BF_ERR_NOTFOUND;
#endif
}

/* Nothing is checked here: libcurl parses the URL on first use. */
static int
http_curl_open(struct http *h, const char *rest)
{
	(void)rest;
	if ((h->conn = calloc(1, sizeof(struct http_curl))) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

static void
http_curl_close(struct http *h)
{
	struct http_curl *hc = h->conn;

	if (hc == NULL)
		return;
	if (hc->curl != NULL)
		http_curl_fn.easy_cleanup(hc->curl);
	http_curl_headers_free(hc->headers);
	if (hc->global)
		http_curl_fn.global_cleanup();
	free(hc);
	h->conn = NULL;
}

const struct http_backend http_curl_backend = {
	.scheme = "https",
	.open = http_curl_open,
	.request = http_curl_request,
	.stream = http_curl_stream,
	.header = http_curl_header,
	.close = http_curl_close,
};
