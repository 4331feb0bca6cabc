/*
 * http.c: the front of the CLI's HTTP client (see http.h): the base URL,
 * the token, the choice of a backend by scheme (cli/http-int.h), and what
 * every backend shares: the URL of a request, the lines of a stream and
 * their result, URL escaping.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "http-int.h"

/* By scheme; the first one also serves a base URL written without one. */
static const struct http_backend *const http_backends[] = {
	&http_plain_backend,
	&http_curl_backend,
};

#define HTTP_NBACKENDS	(sizeof(http_backends) / sizeof(http_backends[0]))

/* The scheme of url ("http" of "http://..."), or 0 when it has none. */
static size_t
http_scheme_len(const char *url)
{
	size_t i;

	for (i = 0; (url[i] >= 'a' && url[i] <= 'z') || (url[i] >= 'A' && url[i] <= 'Z') ||
	    (i > 0 && ((url[i] >= '0' && url[i] <= '9') || url[i] == '+' || url[i] == '-' ||
	    url[i] == '.')); i++)
		;
	return i > 0 && strncmp(url + i, "://", 3) == 0 ? i : 0;
}

int
http_init(struct http *h, const char *base, const char *token, long timeout_ms,
    long connect_ms)
{
	char why[sizeof(h->errbuf)];
	size_t len, plen = strlen(HTTP_API_PREFIX), slen, i;
	int r;

	memset(h, 0, sizeof(*h));
	h->timeout_ms = timeout_ms;
	h->connect_ms = connect_ms;
	if (base == NULL || *base == '\0')
		base = HTTP_DEFAULT_URL;
	if (strpbrk(base, "\r\n \t") != NULL) {
		snprintf(h->errbuf, sizeof(h->errbuf), "the URL holds a space or line break");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (token != NULL && *token != '\0' && strpbrk(token, "\r\n") != NULL) {
		snprintf(h->errbuf, sizeof(h->errbuf), "the token holds a line break");
		r = BF_ERR_INVALID;
		goto out;
	}
	/* curl took "host:port" for http://host:port; so do we. */
	len = strlen(base) + sizeof("http://");
	if ((h->base = malloc(len)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	snprintf(h->base, len, "%s%s", http_scheme_len(base) == 0 ? "http://" : "", base);
	slen = http_scheme_len(h->base);
	len = strlen(h->base);
	while (len > slen + 3 && h->base[len - 1] == '/')
		h->base[--len] = '\0';
	/* Users paste the API root as often as the server's address. */
	if (len >= slen + 3 + plen && strcmp(h->base + len - plen, HTTP_API_PREFIX) == 0)
		h->base[len - plen] = '\0';
	for (i = 0; i < HTTP_NBACKENDS; i++)
		if (slen == strlen(http_backends[i]->scheme) &&
		    strncasecmp(h->base, http_backends[i]->scheme, slen) == 0)
			break;
	if (i == HTTP_NBACKENDS) {
		snprintf(h->errbuf, sizeof(h->errbuf), "the URL \"%.*s\" is neither http:// "
		    "nor https://", 100, h->base);
		r = BF_ERR_INVALID;
		goto out;
	}
	h->be = http_backends[i];
	if (token != NULL && *token != '\0') {
		len = strlen("Authorization: Bearer ") + strlen(token) + 1;
		if ((h->auth = malloc(len)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		snprintf(h->auth, len, "Authorization: Bearer %s", token);
	}
	r = h->be->open(h, h->base + slen + 3);
out:
	if (r != 0) {
		memcpy(why, h->errbuf, sizeof(why));
		http_free(h);
		memcpy(h->errbuf, why, sizeof(why));
	}
	return r;
}

void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	if (h->be != NULL)
		h->be->close(h);
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

/* Reset resp and h->errbuf for a new request and build resp->url. */
static int
http_begin(struct http *h, const char *path, struct http_resp *resp)
{
	int n;

	buf_reset(&resp->body);
	resp->status = 0;
	h->errbuf[0] = '\0';
	n = snprintf(resp->url, sizeof(resp->url), "%s%s%s", h->base != NULL ? h->base : "",
	    HTTP_API_PREFIX, path);
	if (n < 0 || (size_t)n >= sizeof(resp->url)) {
		snprintf(h->errbuf, sizeof(h->errbuf), "URL too long");
		return BF_ERR_TOOBIG;
	}
	if (h->be == NULL) {
		snprintf(h->errbuf, sizeof(h->errbuf), "the HTTP client is not set up");
		return BF_ERR_INVALID;
	}
	return 0;
}

int
http_request(struct http *h, const char *method, const char *path,
    const char *body, size_t bodylen, struct http_resp *resp)
{
	int r;

	if ((r = http_begin(h, path, resp)) != 0)
		return r;
	return h->be->request(h, method, path, body, bodylen, resp);
}

int
http_stream_feed(struct http_stream_ctx *x, const char *p, size_t len)
{
	const char *nl;
	size_t n;
	int r;

	while ((nl = memchr(p, '\n', len)) != NULL) {
		if (buf_append(&x->line, p, (size_t)(nl - p)) != 0) {
			x->toolong = 1;
			return -1;
		}
		len -= (size_t)(nl - p) + 1;
		p = nl + 1;
		if (x->stop != NULL && *x->stop) {
			x->cancelled = 1;
			return -1;
		}
		n = x->line.len;
		if (n > 0 && x->line.data[n - 1] == '\r')
			n--;
		r = x->cb(x->arg, x->line.data != NULL ? x->line.data : "", n);
		buf_reset(&x->line);
		if (r != 0) {
			x->ended = 1;
			return -1;
		}
	}
	if (len > 0 && buf_append(&x->line, p, len) != 0) {
		x->toolong = 1;
		return -1;
	}
	return 0;
}

int
http_stream_result(struct http *h, struct http_stream_ctx *x, int r)
{
	x->resp->status = x->status;
	if (x->ended)
		return 0;
	if (x->cancelled)
		return BF_ERR_CANCELLED;
	if (x->toolong) {
		snprintf(h->errbuf, sizeof(h->errbuf), "a streamed line longer than %d bytes",
		    HTTP_MAX_STREAM_LINE);
		return BF_ERR_PROTO;
	}
	if (x->status != 0 && x->status != 200)
		return BF_ERR_PROTO;
	if (r == BF_ERR_TIMEOUT || r == BF_ERR_ALLOC || r == BF_ERR_SYS ||
	    r == BF_ERR_INVALID)
		return r;
	if (h->errbuf[0] == '\0')
		snprintf(h->errbuf, sizeof(h->errbuf), "the stream ended");
	return BF_ERR_LOST;
}

int
http_stream(struct http *h, const char *path, long max_ms,
    int (*line)(void *arg, const char *text, size_t len), void *arg,
    const volatile sig_atomic_t *stop, struct http_resp *resp)
{
	struct http_stream_ctx x;
	int r;

	memset(&x, 0, sizeof(x));
	x.resp = resp;
	x.cb = line;
	x.arg = arg;
	x.stop = stop;
	buf_init(&x.line, HTTP_MAX_STREAM_LINE);
	if ((r = http_begin(h, path, resp)) != 0)
		goto out;
	r = http_stream_result(h, &x, h->be->stream(h, path, max_ms, &x));
out:
	buf_free(&x.line);
	return r;
}

int
http_header(struct http *h, const char *name, char *out, size_t outsz)
{
	if (outsz > 0)
		out[0] = '\0';
	if (h->be == NULL || outsz == 0)
		return BF_ERR_NOTFOUND;
	return h->be->header(h, name, out, outsz);
}

char *
http_escape(struct http *h, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), i;
	unsigned char c;
	char *e, *o;

	(void)h;
	if (n > (SIZE_MAX - 1) / 3 || (e = malloc(n * 3 + 1)) == NULL)
		return NULL;
	for (o = e, i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~')
			*o++ = (char)c;
		else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return e;
}
