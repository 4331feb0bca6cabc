/*
 * http-plain.c: the http:// backend (see http-int.h): HTTP/1.1 over one
 * TCP socket, kept open between the requests of a run. What an answer
 * says is read by the pure parser of http-parse.c; this file moves bytes
 * under two clocks: connect_ms for the connection, and the request's
 * whole deadline (timeout_ms; a stream's max_ms) for everything.
 *
 * A kept connection the server closed meanwhile is found before it is
 * used (it polls readable); one it closes while our request is on the
 * way shows as an end before any byte of an answer, and only then is the
 * request sent once more, on a new connection (as curl does).
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "resolve.h"
#include "http-int.h"
#include "parse.h"

#ifndef BF_VERSION
#define BF_VERSION "0"
#endif

#define PLAIN_HOST_MAX	256		/* a host name, or an address */
#define PLAIN_PATH_MAX	1024		/* the base URL's path (resp->url holds 1024) */
#define PLAIN_READ	16384		/* bytes read at once */
#define PLAIN_SLICE_MS	1000		/* a stream's stop flag is read this often */
#define PLAIN_AGAIN	1		/* no byte of an answer came: may resend */

struct http_plain {
	char host[PLAIN_HOST_MAX];	/* to resolve: a name or an address, no [] */
	char port[8];
	char hosthdr[PLAIN_HOST_MAX + 8]; /* the Host header: as the URL wrote it */
	char prefix[PLAIN_PATH_MAX];	/* the base URL's path: "" or "/x" */
	int numeric;		/* host was an [IPv6] address */
	int fd;			/* the kept connection; -1 when none */
	struct buf hdrs;	/* the last answer's headers, for http_header */
};

/* One request in flight. */
struct http_plain_xfer {
	struct http *h;
	struct http_plain *st;
	struct http_stream_ctx *x;	/* a stream, or NULL */
	struct http_resp *resp;
	int64_t start;			/* bf_mono_ms() */
	int64_t deadline;		/* bf_mono_ms(); 0: none */
};

static void __attribute__((format(printf, 2, 3)))
http_plain_err(struct http *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->errbuf, sizeof(h->errbuf), fmt, ap);
	va_end(ap);
}

static int
http_plain_invalid(struct http *h, const char *why)
{
	snprintf(h->errbuf, sizeof(h->errbuf), "the URL \"%.*s\" is malformed: %s", 100,
	    h->base, why);
	return BF_ERR_INVALID;
}

/* HOST[:PORT][/PATH], HOST a name, an IPv4 address or [IPv6]. */
static int
http_plain_open(struct http *h, const char *rest)
{
	struct http_plain *st;
	const char *end, *hs, *he, *p;
	size_t i;
	int64_t port;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return BF_ERR_ALLOC;
	st->fd = -1;
	buf_init(&st->hdrs, BF_MAX_HTTP_RESP_HEAD);
	h->conn = st;
	for (i = 0; rest[i] != '\0'; i++)
		if ((unsigned char)rest[i] <= 0x20 || (unsigned char)rest[i] >= 0x7f)
			return http_plain_invalid(h, "a byte that is not printable ASCII");
	end = rest + strcspn(rest, "/?#");
	if (strpbrk(rest, "?#") != NULL)
		return http_plain_invalid(h, "a query or a fragment");
	if (memchr(rest, '@', (size_t)(end - rest)) != NULL)
		return http_plain_invalid(h, "user@ is not supported (use --token)");
	if (rest[0] == '[') {
		hs = rest + 1;
		if ((he = memchr(hs, ']', (size_t)(end - hs))) == NULL)
			return http_plain_invalid(h, "no ']' after the IPv6 address");
		for (p = hs; p < he; p++)
			if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
			    (*p >= 'A' && *p <= 'F') || *p == ':' || *p == '.'))
				return http_plain_invalid(h, "not an IPv6 address in []");
		p = he + 1;
		st->numeric = 1;
	} else {
		hs = rest;
		for (he = hs; he < end && *he != ':'; he++)
			if (!((*he >= 'a' && *he <= 'z') || (*he >= 'A' && *he <= 'Z') ||
			    (*he >= '0' && *he <= '9') || *he == '-' || *he == '.' || *he == '_'))
				return http_plain_invalid(h, "a host name holds letters, digits, "
				    "'-', '.' and '_' (an IPv6 address goes in [])");
		p = he;
	}
	if (he == hs || (size_t)(he - hs) >= sizeof(st->host))
		return http_plain_invalid(h, he == hs ? "no host" : "the host is too long");
	memcpy(st->host, hs, (size_t)(he - hs));
	snprintf(st->port, sizeof(st->port), "80");
	if (p < end) {
		if (*p != ':' || end - p - 1 < 1 || end - p - 1 > 5 || p[1] < '0' || p[1] > '9' ||
		    parse_i64_n(p + 1, (size_t)(end - p - 1), 1, 65535, &port) != 0)
			return http_plain_invalid(h, "the port is not a number from 1 to 65535");
		snprintf(st->port, sizeof(st->port), "%d", (int)port);
	}
	if ((size_t)(end - rest) >= sizeof(st->hosthdr) || strlen(end) >= sizeof(st->prefix))
		return http_plain_invalid(h, "too long");
	memcpy(st->hosthdr, rest, (size_t)(end - rest));
	memcpy(st->prefix, end, strlen(end));
	return 0;
}

/* Close the kept connection, if any. */
static void
http_plain_drop(struct http_plain *st)
{
	if (st->fd != -1)
		close(st->fd);
	st->fd = -1;
}

/* May the kept connection carry a request? Not when it polls readable:
 * the server closed it, reset it, or sent bytes nobody asked for. */
static int
http_plain_alive(const struct http_plain *st)
{
	struct pollfd pfd = { .fd = st->fd, .events = POLLIN };

	return st->fd != -1 && poll(&pfd, 1, 0) == 0;
}

static void
http_plain_timedout(struct http_plain_xfer *t, const char *what)
{
	http_plain_err(t->h, "%s %s port %s: timed out after %lld ms", what, t->st->host,
	    t->st->port, (long long)(bf_mono_ms() - t->start));
}

/*
 * Wait till fd polls for events, or deadline (0: none) passes:
 * BF_ERR_TIMEOUT. A stream's stop flag is read every PLAIN_SLICE_MS, and
 * at once when a signal broke the poll: BF_ERR_CANCELLED.
 */
static int
http_plain_wait(struct http_plain_xfer *t, int fd, short events, int64_t deadline)
{
	struct pollfd pfd;
	int64_t left;
	int ms, pr;

	for (;;) {
		if (t->x != NULL && t->x->stop != NULL && *t->x->stop) {
			t->x->cancelled = 1;
			return BF_ERR_CANCELLED;
		}
		ms = -1;
		if (deadline != 0) {
			if ((left = deadline - bf_mono_ms()) <= 0)
				return BF_ERR_TIMEOUT;
			ms = left > INT_MAX ? INT_MAX : (int)left;
		}
		if (t->x != NULL && t->x->stop != NULL && (ms < 0 || ms > PLAIN_SLICE_MS))
			ms = PLAIN_SLICE_MS;
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		if ((pr = poll(&pfd, 1, ms)) > 0)
			return 0;
		if (pr < 0 && errno != EINTR) {
			http_plain_err(t->h, "poll: %s", strerror(errno));
			return BF_ERR_LOST;
		}
	}
}

/* A new connection to the URL's host, within connect_ms and the deadline:
 * each address getaddrinfo gives is tried in turn. */
static int
http_plain_connect(struct http_plain_xfer *t)
{
	struct http_plain *st = t->st;
	struct addrinfo hints, *res = NULL, *ai;
	int64_t cdl = t->deadline, left;
	socklen_t elen;
	int fd = -1, err = ECONNREFUSED, gai, one = 1, r, sys = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (st->numeric ? AI_NUMERICHOST : 0);
	if (t->h->connect_ms > 0 && (cdl == 0 || t->start + t->h->connect_ms < cdl))
		cdl = t->start + t->h->connect_ms;
	/* A name's lookup counts against the connect clock (resolve.h): a
	 * nameserver that never answers would hold us resolv.conf's 10 s or
	 * more. With no clock at all, getaddrinfo waits as long as it likes. */
	if (cdl == 0) {
		gai = getaddrinfo(st->host, st->port, &hints, &res);
		sys = errno;
		r = gai == 0 ? 0 : BF_ERR_NOTFOUND;
	} else {
		left = cdl - bf_mono_ms();
		r = bf_resolve(st->host, st->port, &hints, (int)(left > 1 ? left : 1), &res, &gai);
	}
	if (r == BF_ERR_TIMEOUT) {
		http_plain_err(t->h, "cannot resolve host %s: no answer within %lld ms",
		    st->host, (long long)(bf_mono_ms() - t->start));
		goto out;
	} else if (r != 0) {
		http_plain_err(t->h, "cannot resolve host %s: %s", st->host,
		    r != BF_ERR_NOTFOUND ? bf_err_str(r) :
		    gai != EAI_SYSTEM ? gai_strerror(gai) :
		    sys != 0 ? strerror(sys) : "a system error");
		r = BF_ERR_LOST;
		goto out;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (fd == -1) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			if ((r = http_plain_wait(t, fd, POLLOUT, cdl)) != 0) {
				if (r == BF_ERR_TIMEOUT)
					http_plain_timedout(t, "connecting to");
				goto out;
			}
			elen = sizeof(err);
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err == 0)
				break;
			if (err == 0)
				err = errno;
		} else
			err = errno;
		close(fd);
		fd = -1;
	}
	if (fd == -1) {
		http_plain_err(t->h, "cannot connect to %s port %s: %s", st->host, st->port,
		    strerror(err));
		r = BF_ERR_LOST;
		goto out;
	}
	/* The head and the body go in one sendmsg, but a small answer to a
	 * kept connection must not wait on Nagle either. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	st->fd = fd;
	fd = -1;
	r = 0;
out:
	if (fd != -1)
		close(fd);
	if (res != NULL)
		freeaddrinfo(res);
	return r;
}

#define PLAIN_HEAD_FMT	"%s %s%s%s HTTP/1.1\r\n" \
	"Host: %s\r\n" \
	"User-Agent: benchfleet/" BF_VERSION "\r\n" \
	"Accept: application/json\r\n" \
	"Content-Type: application/json\r\n" \
	"%s%s%s\r\n"

/*
 * The request's head into *headp (malloc'd once at its size, since it
 * holds the token: the caller wipes it, and no realloc leaves a copy).
 */
static int
http_plain_head(struct http_plain_xfer *t, const char *method, const char *path,
    int withlen, size_t bodylen, char **headp, size_t *lenp)
{
	struct http *h = t->h;
	char clen[64] = "";
	const char *p;
	char *head;
	int n;

	*headp = NULL;
	for (p = method; *p >= 'A' && *p <= 'Z'; p++)
		;
	if (p == method || *p != '\0') {
		http_plain_err(h, "\"%.*s\" is not an HTTP method", 20, method);
		return BF_ERR_INVALID;
	}
	for (p = path; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == '#')
			break;
	if (path[0] != '/' || *p != '\0') {
		http_plain_err(h, "malformed URL");
		return BF_ERR_INVALID;
	}
	if (withlen)
		snprintf(clen, sizeof(clen), "Content-Length: %zu\r\n", bodylen);
	n = snprintf(NULL, 0, PLAIN_HEAD_FMT, method, t->st->prefix, HTTP_API_PREFIX, path,
	    t->st->hosthdr, h->auth != NULL ? h->auth : "", h->auth != NULL ? "\r\n" : "",
	    clen);
	if (n < 0 || (head = malloc((size_t)n + 1)) == NULL)
		return BF_ERR_ALLOC;
	snprintf(head, (size_t)n + 1, PLAIN_HEAD_FMT, method, t->st->prefix, HTTP_API_PREFIX,
	    path, t->st->hosthdr, h->auth != NULL ? h->auth : "", h->auth != NULL ? "\r\n" : "",
	    clen);
	*headp = head;
	*lenp = (size_t)n;
	return 0;
}

/* Head and body, in one sendmsg when they fit. PLAIN_AGAIN when the
 * connection broke (it may have been closed by the server meanwhile). */
static int
http_plain_send(struct http_plain_xfer *t, const char *head, size_t headlen,
    const char *body, size_t bodylen)
{
	struct iovec iov[2];
	struct msghdr msg;
	ssize_t n;
	size_t k;
	int r;

	iov[0].iov_base = (void *)(uintptr_t)head;
	iov[0].iov_len = headlen;
	iov[1].iov_base = (void *)(uintptr_t)body;
	iov[1].iov_len = body != NULL ? bodylen : 0;
	while (iov[0].iov_len + iov[1].iov_len > 0) {
		memset(&msg, 0, sizeof(msg));
		k = iov[0].iov_len > 0 ? 0 : 1;
		msg.msg_iov = iov + k;
		msg.msg_iovlen = 2 - k;
		if ((n = sendmsg(t->st->fd, &msg, MSG_NOSIGNAL)) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if ((r = http_plain_wait(t, t->st->fd, POLLOUT, t->deadline)) != 0) {
					if (r == BF_ERR_TIMEOUT)
						http_plain_timedout(t, "sending to");
					return r;
				}
				continue;
			}
			http_plain_err(t->h, "sending to %s port %s: %s", t->st->host,
			    t->st->port, strerror(errno));
			return PLAIN_AGAIN;
		}
		for (; k < 2 && n > 0; k++) {
			size_t m = (size_t)n < iov[k].iov_len ? (size_t)n : iov[k].iov_len;

			iov[k].iov_base = (char *)iov[k].iov_base + m;
			iov[k].iov_len -= m;
			n -= (ssize_t)m;
		}
	}
	return 0;
}

/* The final answer's head is in: its status and headers. */
static int
http_plain_headin(struct http_plain_xfer *t, struct http_parser *p)
{
	struct buf tmp;
	size_t cap = t->resp->body.max;

	t->resp->status = p->status;
	if (t->x != NULL)
		t->x->status = p->status;
	tmp = t->st->hdrs;
	t->st->hdrs = p->hdrs;
	p->hdrs = tmp;
	buf_reset(&p->hdrs);
	/* Refused before its bytes come: the length said is over the cap. */
	if (t->x == NULL && p->have_len && cap != 0 && p->len > cap) {
		http_plain_err(t->h, "response larger than %zu bytes", cap);
		return BF_ERR_TOOBIG;
	}
	return 0;
}

/* Bytes of the body: into resp->body, or a 200 stream's lines. 1 when a
 * stream must end here (http_stream_ctx says why). */
static int
http_plain_bodyin(struct http_plain_xfer *t, const char *b, size_t n)
{
	int r;

	if (t->x != NULL && t->x->status == 200)
		return http_stream_feed(t->x, b, n) != 0 ? 1 : 0;
	if ((r = buf_append(&t->resp->body, b, n)) != 0) {
		if (t->x != NULL)
			return 1;	/* an error's body: what fit is enough */
		if (r == BF_ERR_TOOBIG)
			http_plain_err(t->h, "response larger than %zu bytes",
			    t->resp->body.max);
		return r;
	}
	return 0;
}

/* Read and parse the answer. PLAIN_AGAIN when the connection ended or
 * broke before any byte of it came. */
static int
http_plain_recv(struct http_plain_xfer *t, int nobody)
{
	struct http_plain *st = t->st;
	struct http_parser p;
	char in[PLAIN_READ];
	const char *b;
	size_t got = 0, off, used, bl;
	ssize_t n;
	int ev, r, keep = 0;

	http_parse_init(&p, nobody);
	for (;;) {
		if ((r = http_plain_wait(t, st->fd, POLLIN, t->deadline)) != 0) {
			if (r == BF_ERR_TIMEOUT)
				http_plain_timedout(t, got == 0 ? "waiting for an answer from" :
				    "reading the answer from");
			goto out;
		}
		if ((n = recv(st->fd, in, sizeof(in), 0)) < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			http_plain_err(t->h, "receiving from %s port %s: %s", st->host, st->port,
			    strerror(errno));
			r = got == 0 ? PLAIN_AGAIN : BF_ERR_LOST;
			goto out;
		}
		if (n == 0) {
			if ((r = http_parse_eof(&p)) < 0) {
				http_plain_err(t->h, "%s", p.err);
				if (got == 0)
					r = PLAIN_AGAIN;
			} else
				r = 0;
			goto out;
		}
		got += (size_t)n;
		for (off = 0;; off += used) {
			ev = http_parse(&p, in + off, (size_t)n - off, &used, &b, &bl);
			if (ev < 0) {
				http_plain_err(t->h, "%s", p.err);
				r = ev;
				goto out;
			}
			if (ev == HTTP_PARSE_MORE)
				break;
			if (ev == HTTP_PARSE_HEAD && (r = http_plain_headin(t, &p)) != 0)
				goto out;
			if (ev == HTTP_PARSE_BODY && (r = http_plain_bodyin(t, b, bl)) != 0) {
				if (r > 0)
					r = 0;	/* a stream ended early */
				goto out;
			}
			if (ev == HTTP_PARSE_DONE) {
				/* Bytes after the answer: nothing we can trust. */
				keep = p.keepalive && off + used == (size_t)n;
				r = 0;
				goto out;
			}
		}
	}
out:
	if (!keep)
		http_plain_drop(st);
	http_parse_free(&p);
	return r;
}

/*
 * One request and its answer: on the kept connection when there is one,
 * sent once more on a new connection when that one ended before any byte
 * of the answer came (the server closed it while it was idle).
 */
static int
http_plain_exchange(struct http *h, const char *method, const char *path,
    const char *body, size_t bodylen, long limit_ms, struct http_stream_ctx *x,
    struct http_resp *resp)
{
	struct http_plain_xfer t;
	char *head = NULL;
	size_t headlen = 0;
	int reused, attempt, r;

	memset(&t, 0, sizeof(t));
	t.h = h;
	t.st = h->conn;
	t.x = x;
	t.resp = resp;
	t.start = bf_mono_ms();
	t.deadline = limit_ms > 0 ? t.start + limit_ms : 0;
	buf_reset(&t.st->hdrs);
	if ((r = http_plain_head(&t, method, path, body != NULL || strcmp(method, "POST") == 0,
	    bodylen, &head, &headlen)) != 0)
		goto out;
	for (attempt = 0;; attempt++) {
		if (!(reused = http_plain_alive(t.st))) {
			http_plain_drop(t.st);
			if ((r = http_plain_connect(&t)) != 0)
				goto out;
		}
		if ((r = http_plain_send(&t, head, headlen, body, bodylen)) == 0)
			r = http_plain_recv(&t, strcmp(method, "HEAD") == 0);
		if (r == PLAIN_AGAIN && reused && attempt == 0) {
			http_plain_drop(t.st);
			h->errbuf[0] = '\0';
			continue;
		}
		break;
	}
	if (r == PLAIN_AGAIN)
		r = BF_ERR_LOST;
out:
	if (r != 0)
		http_plain_drop(t.st);
	if (head != NULL) {
		explicit_bzero(head, headlen);
		free(head);
	}
	return r;
}

static int
http_plain_request(struct http *h, const char *method, const char *path,
    const char *body, size_t bodylen, struct http_resp *resp)
{
	return http_plain_exchange(h, method, path, body, bodylen, h->timeout_ms, NULL, resp);
}

static int
http_plain_stream(struct http *h, const char *path, long max_ms, struct http_stream_ctx *x)
{
	return http_plain_exchange(h, "GET", path, NULL, 0, max_ms, x, x->resp);
}

static int
http_plain_header(struct http *h, const char *name, char *out, size_t outsz)
{
	struct http_plain *st = h->conn;

	return http_parse_header(&st->hdrs, name, out, outsz);
}

static void
http_plain_close(struct http *h)
{
	struct http_plain *st = h->conn;

	if (st == NULL)
		return;
	http_plain_drop(st);
	buf_free(&st->hdrs);
	free(st);
	h->conn = NULL;
}

const struct http_backend http_plain_backend = {
	.scheme = "http",
	.open = http_plain_open,
	.request = http_plain_request,
	.stream = http_plain_stream,
	.header = http_plain_header,
	.close = http_plain_close,
};
