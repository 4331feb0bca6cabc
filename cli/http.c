/*
 * http.c: libcurl requests to the coordinator's API (see http.h). One
 * easy handle serves every request of a run, so a poll loop keeps its
 * connection.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "err.h"
#include "http.h"

#ifndef BF_VERSION
#define BF_VERSION "0"
#endif

struct http_sink {
	struct buf *body;
	int toobig;
};

static size_t
http_write(char *p, size_t size, size_t n, void *arg)
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

/* Free a header list, wiping each entry first: one holds the token. */
static void
http_headers_free(struct curl_slist *l)
{
	struct curl_slist *p;

	for (p = l; p != NULL; p = p->next)
		if (p->data != NULL)
			explicit_bzero(p->data, strlen(p->data));
	curl_slist_free_all(l);
}

int
http_init(struct http *h, const char *base, const char *token, long timeout_ms,
    long connect_ms)
{
	struct curl_slist *l = NULL, *nl;
	size_t len, plen = strlen(HTTP_API_PREFIX);
	int r;

	memset(h, 0, sizeof(*h));
	h->timeout_ms = timeout_ms;
	h->connect_ms = connect_ms;
	if (base == NULL || *base == '\0')
		base = HTTP_DEFAULT_URL;
	if (strpbrk(base, "\r\n \t") != NULL) {
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((h->base = strdup(base)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	len = strlen(h->base);
	while (len > 0 && h->base[len - 1] == '/')
		h->base[--len] = '\0';
	/* Users paste the API root as often as the server's address. */
	if (len >= plen && strcmp(h->base + len - plen, HTTP_API_PREFIX) == 0)
		h->base[len - plen] = '\0';

	if (token != NULL && *token != '\0') {
		if (strpbrk(token, "\r\n") != NULL) {
			r = BF_ERR_INVALID;
			goto out;
		}
		len = strlen("Authorization: Bearer ") + strlen(token) + 1;
		if ((h->auth = malloc(len)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		snprintf(h->auth, len, "Authorization: Bearer %s", token);
	}
	if ((nl = curl_slist_append(l, "Accept: application/json")) == NULL)
		goto nomem;
	l = nl;
	if ((nl = curl_slist_append(l, "Content-Type: application/json")) == NULL)
		goto nomem;
	l = nl;
	/* No "Expect: 100-continue" round trip before a large body. */
	if ((nl = curl_slist_append(l, "Expect:")) == NULL)
		goto nomem;
	l = nl;
	if (h->auth != NULL) {
		if ((nl = curl_slist_append(l, h->auth)) == NULL)
			goto nomem;
		l = nl;
	}
	if ((h->curl = curl_easy_init()) == NULL)
		goto nomem;
	h->headers = l;
	l = NULL;
	r = 0;
	goto out;
nomem:
	r = BF_ERR_ALLOC;
out:
	http_headers_free(l);
	return r;
}

void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	if (h->curl != NULL)
		curl_easy_cleanup(h->curl);
	http_headers_free(h->headers);
	if (h->auth != NULL) {
		explicit_bzero(h->auth, strlen(h->auth));
		free(h->auth);
	}
	free(h->base);
	memset(h, 0, sizeof(*h));
}

void
http_resp_init(struct http_resp *resp)
{
	resp->status = 0;
	buf_init(&resp->body, BF_MAX_API_RESPONSE);
	resp->url[0] = '\0';
}

void
http_resp_free(struct http_resp *resp)
{
	if (resp == NULL)
		return;
	buf_free(&resp->body);
}

int
http_request(struct http *h, const char *method, const char *path,
    const char *body, size_t bodylen, struct http_resp *resp)
{
	struct http_sink sink = { &resp->body, 0 };
	CURL *c = h->curl;
	CURLcode cr;
	int n, r;

	buf_reset(&resp->body);
	resp->status = 0;
	h->errbuf[0] = '\0';
	n = snprintf(resp->url, sizeof(resp->url), "%s%s%s", h->base, HTTP_API_PREFIX, path);
	if (n < 0 || (size_t)n >= sizeof(resp->url)) {
		snprintf(h->errbuf, sizeof(h->errbuf), "URL too long");
		return BF_ERR_TOOBIG;
	}

	curl_easy_reset(c);
	if (curl_easy_setopt(c, CURLOPT_URL, resp->url) != CURLE_OK) {
		snprintf(h->errbuf, sizeof(h->errbuf), "malformed URL");
		return BF_ERR_INVALID;
	}
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(c, CURLOPT_USERAGENT, "benchfleet/" BF_VERSION);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, (struct curl_slist *)h->headers);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)BF_MAX_API_RESPONSE);
	if (h->timeout_ms > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->timeout_ms);
	if (h->connect_ms > 0)
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);

	if (strcmp(method, "GET") == 0)
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	else if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body != NULL ? body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)(body != NULL ? bodylen : 0));
	} else {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		if (body != NULL) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)bodylen);
		}
	}

	cr = curl_easy_perform(c);
	if (cr != CURLE_OK) {
		if (h->errbuf[0] == '\0')
			snprintf(h->errbuf, sizeof(h->errbuf), "%s", curl_easy_strerror(cr));
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
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	return 0;
}

struct http_stream_ctx {
	CURL *curl;
	struct http_resp *resp;
	struct buf line;	/* the line in progress, capped */
	int (*cb)(void *, const char *, size_t);
	void *arg;
	const volatile sig_atomic_t *stop;
	long status;		/* 0 until the first bytes */
	int ended;		/* the callback asked to stop */
	int toolong, cancelled;
};

static int
http_stream_line(struct http_stream_ctx *x)
{
	size_t n = x->line.len;
	int r;

	if (n > 0 && x->line.data[n - 1] == '\r')
		n--;
	r = x->cb(x->arg, x->line.data != NULL ? x->line.data : "", n);
	buf_reset(&x->line);
	return r;
}

static size_t
http_stream_write(char *p, size_t size, size_t n, void *arg)
{
	struct http_stream_ctx *x = arg;
	size_t len = size * n, i, start = 0;
	struct http_sink sink = { &x->resp->body, 0 };

	if (size != 0 && n > SIZE_MAX / size)
		return 0;
	if (x->status == 0)
		curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &x->status);
	if (x->status != 200)
		return http_write(p, size, n, &sink);	/* an error's body */
	for (i = 0; i < len; i++) {
		if (p[i] != '\n')
			continue;
		if (buf_append(&x->line, p + start, i - start) != 0) {
			x->toolong = 1;
			return 0;
		}
		start = i + 1;
		if (x->stop != NULL && *x->stop) {
			x->cancelled = 1;
			return 0;
		}
		if (http_stream_line(x) != 0) {
			x->ended = 1;
			return 0;
		}
	}
	if (buf_append(&x->line, p + start, len - start) != 0) {
		x->toolong = 1;
		return 0;
	}
	return len;
}

static int
http_stream_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct http_stream_ctx *x = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	if (x->stop != NULL && *x->stop) {
		x->cancelled = 1;
		return 1;
	}
	return 0;
}

int
http_stream(struct http *h, const char *path, long max_ms,
    int (*line)(void *arg, const char *text, size_t len), void *arg,
    const volatile sig_atomic_t *stop, struct http_resp *resp)
{
	struct http_stream_ctx x;
	CURL *c = h->curl;
	CURLcode cr;
	int n, r;

	memset(&x, 0, sizeof(x));
	x.curl = c;
	x.resp = resp;
	x.cb = line;
	x.arg = arg;
	x.stop = stop;
	buf_init(&x.line, HTTP_MAX_STREAM_LINE);
	buf_reset(&resp->body);
	resp->status = 0;
	h->errbuf[0] = '\0';
	n = snprintf(resp->url, sizeof(resp->url), "%s%s%s", h->base, HTTP_API_PREFIX, path);
	if (n < 0 || (size_t)n >= sizeof(resp->url)) {
		snprintf(h->errbuf, sizeof(h->errbuf), "URL too long");
		r = BF_ERR_TOOBIG;
		goto out;
	}
	curl_easy_reset(c);
	if (curl_easy_setopt(c, CURLOPT_URL, resp->url) != CURLE_OK) {
		snprintf(h->errbuf, sizeof(h->errbuf), "malformed URL");
		r = BF_ERR_INVALID;
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(c, CURLOPT_USERAGENT, "benchfleet/" BF_VERSION);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, (struct curl_slist *)h->headers);
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_stream_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, http_stream_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &x);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	if (max_ms > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, max_ms);
	if (h->connect_ms > 0)
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);
	cr = curl_easy_perform(c);
	if (x.status == 0)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x.status);
	resp->status = x.status;
	if (x.ended)
		r = 0;
	else if (x.cancelled)
		r = BF_ERR_CANCELLED;
	else if (x.toolong) {
		snprintf(h->errbuf, sizeof(h->errbuf), "a streamed line longer than %d bytes",
		    HTTP_MAX_STREAM_LINE);
		r = BF_ERR_PROTO;
	} else if (x.status != 0 && x.status != 200)
		r = BF_ERR_PROTO;
	else if (cr == CURLE_OPERATION_TIMEDOUT)
		r = BF_ERR_TIMEOUT;
	else {
		if (h->errbuf[0] == '\0')
			snprintf(h->errbuf, sizeof(h->errbuf), "%s", cr == CURLE_OK ?
			    "the stream ended" : curl_easy_strerror(cr));
		r = BF_ERR_LOST;
	}
out:
	buf_free(&x.line);
	return r;
}

int
http_header(struct http *h, const char *name, char *out, size_t outsz)
{
#if LIBCURL_VERSION_NUM >= 0x075400
	struct curl_header *hd = NULL;

	if (outsz > 0)
		out[0] = '\0';
	if (h->curl == NULL || outsz == 0 ||
	    curl_easy_header(h->curl, name, 0, CURLH_HEADER, -1, &hd) != CURLHE_OK || hd == NULL)
		return BF_ERR_NOTFOUND;
	snprintf(out, outsz, "%s", hd->value);
	return 0;
#else
	(void)h;
	(void)name;
	if (outsz > 0)
		out[0] = '\0';
	return BF_ERR_NOTFOUND;
#endif
}

char *
http_escape(struct http *h, const char *s)
{
	char *e, *copy;

	if ((e = curl_easy_escape(h->curl, s, 0)) == NULL)
		return NULL;
	copy = strdup(e);
	curl_free(e);
	return copy;
}
