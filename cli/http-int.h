/*
 * http-int.h: what the front of the CLI's HTTP client (cli/http.c) and its
 * backends share, in the way of curl's lib/vtls/vtls_int.h: one table of
 * functions per transport. cli/http-plain.c speaks HTTP/1.1 itself over a
 * TCP socket (http://); cli/http-curl.c hands https:// to libcurl, which
 * it loads at run time. The front builds resp->url, resets resp and
 * h->errbuf, and calls the backend; a backend sets h->errbuf on failure.
 *
 * Also here: the response parser of the plain backend (cli/http-parse.c),
 * a pure function over bytes with no I/O, so that it can be fuzzed
 * (tests/fuzz/fuzz_http_resp.c) and table-tested.
 */
#ifndef BF_CLI_HTTP_INT_H
#define BF_CLI_HTTP_INT_H

/* checksrc: prefix http_ */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "http.h"

/* A streamed answer being cut into lines (http_stream). */
struct http_stream_ctx {
	struct http_resp *resp;
	struct buf line;	/* the line in progress, capped */
	int (*cb)(void *, const char *, size_t);
	void *arg;
	const volatile sig_atomic_t *stop;
	long status;		/* 0 until the answer's head came */
	int ended;		/* the callback asked to stop */
	int toolong, cancelled;
};

/*
 * One transport. open runs in http_init, after the front has parsed the
 * scheme: it may refuse a malformed URL (BF_ERR_INVALID, h->errbuf says
 * why) and sets h->conn. request and stream have http_request's and
 * http_stream's contracts, with resp->url already built; stream feeds a
 * 200 answer's body to http_stream_feed and returns 0 when the answer
 * ended, BF_ERR_* when it broke (http_stream_result makes the rest).
 * close frees h->conn (it may be NULL).
 */
struct http_backend {
	const char *scheme;	/* "http", "https" */
	int (*open)(struct http *h, const char *rest);	/* rest: after "://" */
	int (*request)(struct http *h, const char *method, const char *path,
	    const char *body, size_t bodylen, struct http_resp *resp);
	int (*stream)(struct http *h, const char *path, long max_ms,
	    struct http_stream_ctx *x);
	int (*header)(struct http *h, const char *name, char *out, size_t outsz);
	void (*close)(struct http *h);
};

extern const struct http_backend http_plain_backend;	/* http-plain.c */
extern const struct http_backend http_curl_backend;	/* http-curl.c */

/*
 * Bytes of a streamed answer whose status was 200: cut into lines for
 * x->cb, checking x->stop before each. 0 to go on; -1 when the stream must
 * end (x->ended, x->cancelled or x->toolong says why).
 */
int http_stream_feed(struct http_stream_ctx *x, const char *p, size_t len);

/* http_stream's result from x and the transport's r (0: the answer ended). */
int http_stream_result(struct http *h, struct http_stream_ctx *x, int r);

/*
 * The response parser. http_parse eats bytes of one answer and stops at
 * each event: HTTP_PARSE_HEAD when the head of the final answer is in
 * (p->status, p->keepalive, http_parse_header; a "100 Continue" before it
 * is skipped), HTTP_PARSE_BODY with *body and *bodylen pointing into in (the
 * body's bytes, unchunked), HTTP_PARSE_DONE when the answer is complete
 * (bytes after it are not eaten), HTTP_PARSE_MORE when all of in was eaten
 * and more is needed. *used says how much of in was eaten. A broken answer
 * is BF_ERR_PROTO, a head or a line over its cap (BF_MAX_HTTP_RESP_HEAD,
 * BF_MAX_HTTP_RESP_LINE) BF_ERR_TOOBIG, and ENOMEM BF_ERR_ALLOC; p->err
 * says why. Once it failed or was DONE, p stays so.
 */
enum {
	HTTP_PARSE_MORE = 0,
	HTTP_PARSE_HEAD = 1,
	HTTP_PARSE_BODY = 2,
	HTTP_PARSE_DONE = 3
};

struct http_parser {
	int state;
	int nobody;		/* the request was HEAD: no body follows */
	int minor;		/* HTTP/1.<minor> */
	long status;
	int keepalive;		/* the connection may carry another request */
	int have_len, have_te, conn_close, conn_keep;
	uint64_t len;		/* Content-Length */
	uint64_t left;		/* bytes of the body or the chunk to come */
	size_t head;		/* bytes of head seen, against the cap */
	int cr;			/* the last byte was a CR: LF must follow */
	int failed;		/* the error, once one happened */
	struct buf line;	/* the line in progress */
	struct buf hdrs;	/* "name:value\n" per header of the answer */
	char err[160];
};

void http_parse_init(struct http_parser *p, int nobody);
void http_parse_free(struct http_parser *p);		/* accepts NULL */
int http_parse(struct http_parser *p, const char *in, size_t len, size_t *used,
    const char **body, size_t *bodylen);
/* The peer closed: HTTP_PARSE_DONE when that ends the answer (a body
 * delimited by the close, or a DONE one), else BF_ERR_LOST (p->err). */
int http_parse_eof(struct http_parser *p);
/* The value of header name (ignoring case; the last one) of hdrs, a
 * struct http_parser's hdrs, into out cut to outsz - 1 bytes: 0 or
 * BF_ERR_NOTFOUND. */
int http_parse_header(const struct buf *hdrs, const char *name, char *out,
    size_t outsz);

#endif
