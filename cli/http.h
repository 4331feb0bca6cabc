/*
 * http.h: the CLI's one door to the coordinator. A request is a method, a
 * path under <base>/api/v1 and an optional JSON body; the answer is the
 * status and the body, read into a buffer capped at BF_MAX_API_RESPONSE.
 * Redirects are not followed, so the bearer token never goes to a host
 * the user did not name. Two backends sit behind it (cli/http-int.h): an
 * http:// base is served by our own HTTP/1.1 client (cli/http-plain.c),
 * an https:// one by libcurl, loaded with dlopen on first use
 * (cli/http-curl.c): the CLI links no TLS stack, so it starts fast.
 */
#ifndef BF_CLI_HTTP_H
#define BF_CLI_HTTP_H

#include <signal.h>
#include <stddef.h>

#include "buf.h"
#include "caps.h"

#define HTTP_DEFAULT_URL	"http://127.0.0.1:8080"
#define HTTP_API_PREFIX		"/api/v1"

struct http_backend;

struct http {
	const struct http_backend *be;	/* chosen by base's scheme */
	void *conn;		/* the backend's state; http_free frees it */
	char *base;		/* "http://host:port", no trailing slash */
	char *auth;		/* "Authorization: Bearer ..."; wiped on free */
	long timeout_ms;	/* whole request; 0 = none */
	long connect_ms;
	char errbuf[256];	/* the last error's text (CURL_ERROR_SIZE) */
};

struct http_resp {
	long status;		/* HTTP status, 0 when no answer came */
	struct buf body;	/* NUL-terminated */
	char url[1024];		/* the URL asked, for messages */
};

/*
 * Set up h; no connection is made yet. base is the coordinator's URL
 * (NULL: HTTP_DEFAULT_URL): http://HOST[:PORT][/PATH] (HOST a name, an
 * IPv4 address or [IPv6]; without a scheme, http:// is meant) or
 * https://...; a trailing "/" or "/api/v1" is dropped. token may be NULL;
 * one holding CR or LF is BF_ERR_INVALID, and so is a URL holding white
 * space, with another scheme, or malformed: h->errbuf then says why, and h
 * holds nothing to free. timeout_ms and connect_ms 0 mean none.
 */
int http_init(struct http *h, const char *base, const char *token, long timeout_ms,
    long connect_ms);
void http_free(struct http *h);		/* accepts NULL; wipes the token */

void http_resp_init(struct http_resp *resp);
void http_resp_free(struct http_resp *resp);	/* accepts NULL */

/*
 * method is "GET", "POST" or "DELETE"; path starts with "/" and is
 * appended to <base>/api/v1 (it must already be escaped). body may be
 * NULL. Returns 0 when an answer came, whatever its status (see
 * resp->status); BF_ERR_LOST when the coordinator could not be reached
 * or the transfer broke (h->errbuf says why), BF_ERR_TIMEOUT when it
 * timed out, BF_ERR_TOOBIG past BF_MAX_API_RESPONSE (resp->body's cap;
 * over http://, also a head past BF_MAX_HTTP_RESP_HEAD or a line of it past
 * BF_MAX_HTTP_RESP_LINE), BF_ERR_PROTO when the answer broke HTTP (which
 * Transfer-Encodings, lengths and lines are refused: cli/http-parse.c;
 * h->errbuf names it), BF_ERR_INVALID for a malformed
 * URL, BF_ERR_SYS when https:// needs libcurl.so.4 and it cannot be
 * loaded. One connection serves the requests of a run (keep-alive).
 */
int http_request(struct http *h, const char *method, const char *path,
    const char *body, size_t bodylen, struct http_resp *resp);

/*
 * The value of response header name of h's last request into out (cut to
 * outsz - 1 bytes; name is matched ignoring case, the last of several
 * wins): 0, or BF_ERR_NOTFOUND when it had none (or, over https://, the
 * libcurl loaded cannot say: before 7.84).
 */
int http_header(struct http *h, const char *name, char *out, size_t outsz);

/*
 * A streamed GET (Server-Sent Events): each line of the answer, without
 * its "\n" (a "\r" before it is dropped too), goes to line(arg, text, len)
 * as it arrives; a line longer than HTTP_MAX_STREAM_LINE ends the stream
 * BF_ERR_PROTO. line returns non-zero to end the stream: then 0 is
 * returned. Otherwise: BF_ERR_TIMEOUT after max_ms (0: none),
 * BF_ERR_CANCELLED when *stop became non-zero (checked about once a
 * second, and between lines), BF_ERR_LOST when the stream ended or broke,
 * BF_ERR_PROTO when the status was not 200 (resp->body then holds the
 * answer, capped like any other, and resp->status its status).
 */
#define HTTP_MAX_STREAM_LINE	(256 * 1024)
int http_stream(struct http *h, const char *path, long max_ms,
    int (*line)(void *arg, const char *text, size_t len), void *arg,
    const volatile sig_atomic_t *stop, struct http_resp *resp);

/* URL-escape s for a path segment or a query value: every byte but
 * RFC 3986's unreserved ones (ALPHA DIGIT - . _ ~) as %XX, as
 * curl_easy_escape does. h may be NULL. Caller free()s; NULL on ENOMEM. */
char *http_escape(struct http *h, const char *s);

#endif
