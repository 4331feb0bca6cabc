/*
 * http.h: the CLI's one door to the coordinator, over libcurl. A request
 * is a method, a path under <base>/api/v1 and an optional JSON body; the
 * answer is the status and the body, read into a buffer capped at
 * BF_MAX_API_RESPONSE. Redirects are not followed, so the bearer token
 * never goes to a host the user did not name.
 */
#ifndef BF_CLI_HTTP_H
#define BF_CLI_HTTP_H

#include <signal.h>
#include <stddef.h>

#include "buf.h"
#include "caps.h"

#define HTTP_DEFAULT_URL	"http://127.0.0.1:8080"
#define HTTP_API_PREFIX		"/api/v1"

struct http {
	void *curl;		/* CURL * */
	void *headers;		/* struct curl_slist * */
	char *base;		/* "http://host:port", no trailing slash */
	char *auth;		/* "Authorization: Bearer ..."; wiped on free */
	long timeout_ms;	/* whole request; 0 = none */
	long connect_ms;
	char errbuf[256];	/* curl's last error text */
};

struct http_resp {
	long status;		/* HTTP status, 0 when no answer came */
	struct buf body;	/* NUL-terminated */
	char url[1024];		/* the URL asked, for messages */
};

/*
 * Set up h. base is the coordinator's URL (NULL: HTTP_DEFAULT_URL); a
 * trailing "/" or "/api/v1" is dropped. token may be NULL; one holding
 * CR or LF is BF_ERR_INVALID. timeout_ms and connect_ms 0 mean none.
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
 * timed out, BF_ERR_TOOBIG past BF_MAX_API_RESPONSE.
 */
int http_request(struct http *h, const char *method, const char *path,
    const char *body, size_t bodylen, struct http_resp *resp);

/*
 * The value of response header name of h's last request into out (cut to
 * outsz - 1 bytes): 0, or BF_ERR_NOTFOUND when it had none (or this
 * libcurl cannot say: before 7.84).
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

/* URL-escape s for a path segment or a query value. Caller free()s;
 * NULL on ENOMEM. */
char *http_escape(struct http *h, const char *s);

#endif
