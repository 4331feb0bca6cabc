/*
 * test_cli_http.c: the CLI's HTTP client (cli/http.c, cli/http-plain.c)
 * against a real loopback TCP server: a thread of this test that reads
 * each request and plays a scripted answer, whole or a byte at a time.
 * Framing, keep-alive and its one resend, the caps, timeouts, refused and
 * hanging connects, streamed events and their stop flag, the token, the
 * base URL's checks and escaping; https:// once, through the dlopen'd
 * libcurl. The CLI's HTTP sources are compiled in (tests/CMakeLists.txt).
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "t.h"
#include "../../cli/http-int.h"
#include "clock.h"
#include "err.h"

#define SRV_STEPS	12
#define SRV_REQ		8192
#define SRV_WAIT_MS	5000	/* the server gives up on a silent client */

struct srv_step {
	const char *answer;	/* sent after a request was read; NULL: close unanswered */
	size_t len;		/* of answer; 0: strlen */
	int bytewise;		/* one send, and a pause, per byte */
	int close;		/* close the connection after the answer */
	int delay_ms;		/* before the answer */
	const char *late;	/* sent late_ms after the answer: bytes nobody asked for */
	int late_ms;
};

struct srv {
	int lfd, port;
	pthread_t th;
	struct srv_step step[SRV_STEPS];
	int nsteps;
	int accepts, requests;		/* read them after srv_stop */
	char req[SRV_STEPS][SRV_REQ];	/* each request, head and body, as read */
};

static int
srv_wait(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, ms) > 0;
}

/* One request (head, and the body its Content-Length says) into out:
 * 0, or -1 when the client closed (or went silent) first. */
static int
srv_read(int fd, char *out, size_t outsz)
{
	size_t len = 0, need = 0;
	char *e, *cl;
	ssize_t n;

	out[0] = '\0';
	for (;;) {
		if (need == 0 && (e = strstr(out, "\r\n\r\n")) != NULL) {
			need = (size_t)(e + 4 - out);
			if ((cl = strcasestr(out, "\r\nContent-Length: ")) != NULL && cl < e)
				need += strtoul(cl + 18, NULL, 10);
		}
		if (need != 0 && len >= need)
			return 0;
		if (len + 1 >= outsz || !srv_wait(fd, SRV_WAIT_MS))
			return -1;
		if ((n = recv(fd, out + len, outsz - 1 - len, 0)) <= 0)
			return -1;
		len += (size_t)n;
		out[len] = '\0';
	}
}

static void
srv_send(int fd, const struct srv_step *st)
{
	size_t len = st->len != 0 ? st->len : strlen(st->answer), off = 0;
	ssize_t n;

	while (off < len) {
		n = send(fd, st->answer + off, st->bytewise ? 1 : len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;		/* the client is gone */
		off += (size_t)n;
		if (st->bytewise)
			usleep(200);
	}
}

static void *
srv_main(void *arg)
{
	struct srv *s = arg;
	const struct srv_step *st;
	int fd = -1, i, one = 1;

	for (i = 0; i < s->nsteps; i++) {
		st = &s->step[i];
		if (fd == -1) {
			if (!srv_wait(s->lfd, SRV_WAIT_MS) ||
			    (fd = accept(s->lfd, NULL, NULL)) == -1)
				break;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			s->accepts++;
		}
		if (srv_read(fd, s->req[i], SRV_REQ) != 0) {
			/* The client dropped this connection: the step waits for the next. */
			close(fd);
			fd = -1;
			i--;
			continue;
		}
		s->requests++;
		if (st->delay_ms > 0)
			usleep((useconds_t)st->delay_ms * 1000);
		if (st->answer == NULL) {
			close(fd);
			fd = -1;
			continue;
		}
		srv_send(fd, st);
		if (st->late != NULL) {
			usleep((useconds_t)st->late_ms * 1000);
			send(fd, st->late, strlen(st->late), MSG_NOSIGNAL);
		}
		if (st->close) {
			close(fd);
			fd = -1;
		}
	}
	/* Let the client close first (http_free): ours would race its next
	 * request, and a test that means that closes by its script. */
	if (fd != -1) {
		srv_wait(fd, SRV_WAIT_MS);
		close(fd);
	}
	return NULL;
}

static struct srv *
srv_new(void)
{
	struct srv *s = calloc(1, sizeof(*s));

	if (s == NULL)
		abort();
	s->lfd = -1;
	return s;
}

static void
srv_add(struct srv *s, struct srv_step st)
{
	if (s->nsteps == SRV_STEPS)
		abort();
	s->step[s->nsteps++] = st;
}

/* Listen on the loopback of family and start the thread: 0, or -1. */
static int
srv_start(struct srv *s, int family)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		sin6->sin6_addr = in6addr_loopback;
	if ((s->lfd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(s->lfd, (struct sockaddr *)&ss, family == AF_INET ? sizeof(*sin) :
	    sizeof(*sin6)) != 0 || listen(s->lfd, 8) != 0 ||
	    getsockname(s->lfd, (struct sockaddr *)&ss, &sl) != 0)
		return -1;
	s->port = ntohs(family == AF_INET ? sin->sin_port : sin6->sin6_port);
	return pthread_create(&s->th, NULL, srv_main, s) == 0 ? 0 : -1;
}

static void
srv_stop(struct srv *s)
{
	pthread_join(s->th, NULL);
	close(s->lfd);
}

/* A client of s; connect_ms 2 s. */
static int
client(struct http *h, const struct srv *s, const char *token, long timeout_ms)
{
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s->port);
	return http_init(h, url, token, timeout_ms, 2000);
}

/* A port nothing listens on, a moment ago. */
static int
closed_port(void)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) != 0)
		abort();
	port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

#define OK	"HTTP/1.1 200 OK\r\n"
#define OK0	OK "Content-Length: 0\r\n\r\n"

static void
test_basic(void)
{
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;
	char v[8], want[128];

	srv_add(s, (struct srv_step){ .answer = OK "Content-Length: 5\r\n"
	    "X-Benchfleet-Event-Id: 42\r\n\r\nhello" });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	http_resp_init(&resp);
	T_EQ_INT(http_request(&h, "GET", "/jobs?state=done", NULL, 0, &resp), 0);
	T_EQ_INT(resp.status, 200);
	T_EQ_STR(resp.body.data, "hello");
	snprintf(want, sizeof(want), "http://127.0.0.1:%d/api/v1/jobs?state=done", s->port);
	T_EQ_STR(resp.url, want);
	T_EQ_INT(http_header(&h, "x-benchfleet-event-id", v, sizeof(v)), 0);
	T_EQ_STR(v, "42");
	T_EQ_INT(http_header(&h, "X-Nope", v, sizeof(v)), BF_ERR_NOTFOUND);
	T_EQ_INT(http_header(&h, "x-benchfleet-event-id", v, 2), 0);
	T_EQ_STR(v, "4");
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 1);
	T_CHECK(strncmp(s->req[0], "GET /api/v1/jobs?state=done HTTP/1.1\r\n", 38) == 0);
	snprintf(want, sizeof(want), "\r\nHost: 127.0.0.1:%d\r\n", s->port);
	T_CONTAINS(s->req[0], want);
	T_CONTAINS(s->req[0], "\r\nUser-Agent: benchfleet/" BF_VERSION "\r\n");
	T_CONTAINS(s->req[0], "\r\nAccept: application/json\r\n");
	T_CONTAINS(s->req[0], "\r\nContent-Type: application/json\r\n");
	T_CHECK(strstr(s->req[0], "Authorization") == NULL);
	T_CHECK(strstr(s->req[0], "Content-Length") == NULL);
	http_resp_free(&resp);
	free(s);
}

/* The token, bodies and their lengths; three requests, one connection. */
static void
test_post_token(void)
{
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;
	size_t n;

	srv_add(s, (struct srv_step){ .answer = OK0 });
	srv_add(s, (struct srv_step){ .answer = OK0 });
	srv_add(s, (struct srv_step){ .answer = OK "Content-Length: 2\r\n\r\n{}" });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, "sekrit", 5000));
	http_resp_init(&resp);
	T_EQ_INT(http_request(&h, "POST", "/jobs", "{\"a\":1}", 7, &resp), 0);
	T_EQ_INT(http_request(&h, "POST", "/jobs/3/cancel", NULL, 0, &resp), 0);
	T_EQ_INT(http_request(&h, "DELETE", "/machines/m%201", NULL, 0, &resp), 0);
	T_EQ_INT(resp.status, 200);
	T_EQ_STR(resp.body.data, "{}");
	http_free(&h);
	T_CHECK(h.auth == NULL);
	srv_stop(s);
	T_EQ_INT(s->accepts, 1);
	T_EQ_INT(s->requests, 3);
	T_CHECK(strncmp(s->req[0], "POST /api/v1/jobs HTTP/1.1\r\n", 28) == 0);
	T_CONTAINS(s->req[0], "\r\nAuthorization: Bearer sekrit\r\n");
	T_CONTAINS(s->req[0], "\r\nContent-Length: 7\r\n");
	n = strlen(s->req[0]);
	T_CHECK(n > 11 && strcmp(s->req[0] + n - 11, "\r\n\r\n{\"a\":1}") == 0);
	T_CONTAINS(s->req[1], "\r\nContent-Length: 0\r\n");
	T_CHECK(strncmp(s->req[2], "DELETE /api/v1/machines/m%201 HTTP/1.1\r\n", 40) == 0);
	T_CHECK(strstr(s->req[2], "Content-Length") == NULL);
	T_CONTAINS(s->req[2], "\r\nAuthorization: Bearer sekrit\r\n");
	http_resp_free(&resp);
	free(s);
}

static void
test_token_refused(void)
{
	struct http h;

	T_EQ_INT(http_init(&h, "http://127.0.0.1:1", "a\nb", 1000, 1000), BF_ERR_INVALID);
	T_CONTAINS(h.errbuf, "line break");
	T_CHECK(h.base == NULL && h.auth == NULL && h.conn == NULL);
	T_EQ_INT(http_init(&h, "http://127.0.0.1:1", "a\rb", 1000, 1000), BF_ERR_INVALID);
	T_EQ_INT(http_init(&h, "http://127.0.0.1:1", "", 1000, 1000), 0);
	T_CHECK(h.auth == NULL);		/* an empty token is none */
	http_free(&h);
	http_free(NULL);
}

/* A chunked answer a byte per segment; then one kept connection for two. */
static void
test_chunked_keepalive(void)
{
	static const char chunked[] = OK "Transfer-Encoding: chunked\r\nX-Id: c\r\n\r\n"
	    "5\r\nhello\r\n1;x=y\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n";
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;

	srv_add(s, (struct srv_step){ .answer = chunked, .bytewise = 1 });
	srv_add(s, (struct srv_step){ .answer = chunked });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	http_resp_init(&resp);
	T_EQ_INT(http_request(&h, "GET", "/a", NULL, 0, &resp), 0);
	T_EQ_STR(resp.body.data, "hello 0123456789");
	T_EQ_INT(http_request(&h, "GET", "/b", NULL, 0, &resp), 0);
	T_EQ_STR(resp.body.data, "hello 0123456789");
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 1);
	T_EQ_INT(s->requests, 2);
	http_resp_free(&resp);
	free(s);
}

/*
 * The server closes a kept connection: while it is idle (seen before
 * use), and with our request on the way (sent once more, on a new
 * connection, only once, and only when no byte of an answer came).
 */
static void
test_reconnect(void)
{
	struct srv *s;
	struct http h;
	struct http_resp resp;

	http_resp_init(&resp);
	/* Closed while idle. */
	s = srv_new();
	srv_add(s, (struct srv_step){ .answer = OK0, .close = 1 });
	srv_add(s, (struct srv_step){ .answer = OK "Content-Length: 1\r\n\r\n2" });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	T_EQ_INT(http_request(&h, "GET", "/1", NULL, 0, &resp), 0);
	usleep(50000);
	T_EQ_INT(http_request(&h, "GET", "/2", NULL, 0, &resp), 0);
	T_EQ_STR(resp.body.data, "2");
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 2);
	T_EQ_INT(s->requests, 2);
	free(s);

	/* Closed with the request read: sent again, body and all. */
	s = srv_new();
	srv_add(s, (struct srv_step){ .answer = OK0 });
	srv_add(s, (struct srv_step){ .answer = NULL });
	srv_add(s, (struct srv_step){ .answer = OK "Content-Length: 1\r\n\r\n3" });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	T_EQ_INT(http_request(&h, "GET", "/1", NULL, 0, &resp), 0);
	T_EQ_INT(http_request(&h, "POST", "/2", "{\"x\":2}", 7, &resp), 0);
	T_EQ_STR(resp.body.data, "3");
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 2);
	T_EQ_INT(s->requests, 3);
	T_EQ_STR(s->req[1], s->req[2]);
	T_CONTAINS(s->req[2], "{\"x\":2}");
	free(s);

	/* ... but once only. */
	s = srv_new();
	srv_add(s, (struct srv_step){ .answer = OK0 });
	srv_add(s, (struct srv_step){ .answer = NULL });
	srv_add(s, (struct srv_step){ .answer = NULL });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	T_EQ_INT(http_request(&h, "GET", "/1", NULL, 0, &resp), 0);
	T_EQ_INT(http_request(&h, "GET", "/2", NULL, 0, &resp), BF_ERR_LOST);
	T_CONTAINS(h.errbuf, "closed before an answer came");
	T_EQ_INT(resp.status, 0);
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 2);
	T_EQ_INT(s->requests, 3);
	free(s);

	/* Not after a byte of the answer came. */
	s = srv_new();
	srv_add(s, (struct srv_step){ .answer = OK0 });
	srv_add(s, (struct srv_step){ .answer = OK "Content-Le", .close = 1 });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	T_EQ_INT(http_request(&h, "GET", "/1", NULL, 0, &resp), 0);
	T_EQ_INT(http_request(&h, "GET", "/2", NULL, 0, &resp), BF_ERR_LOST);
	T_CONTAINS(h.errbuf, "before the answer was complete");
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 1);
	T_EQ_INT(s->requests, 2);
	free(s);

	/* Nor on a new connection. */
	s = srv_new();
	srv_add(s, (struct srv_step){ .answer = NULL });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 3000));
	T_EQ_INT(http_request(&h, "GET", "/1", NULL, 0, &resp), BF_ERR_LOST);
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 1);
	free(s);
	http_resp_free(&resp);
}

/*
 * Bytes after an answer on a kept connection, in its read or later while
 * it is idle: the connection is dropped, not read for the next answer.
 */
static void
test_stale_bytes(void)
{
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;

	srv_add(s, (struct srv_step){ .answer = OK "Content-Length: 1\r\n\r\n1",
	    .late = OK "Content-Length: 5\r\n\r\nstale", .late_ms = 30 });
	srv_add(s, (struct srv_step){ .answer = OK "Content-Length: 1\r\n\r\n2"
	    OK "Content-Length: 5\r\n\r\nstale" });
	srv_add(s, (struct srv_step){ .answer = OK "Content-Length: 5\r\n\r\nfresh" });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	http_resp_init(&resp);
	T_EQ_INT(http_request(&h, "GET", "/1", NULL, 0, &resp), 0);
	T_EQ_STR(resp.body.data, "1");
	usleep(100000);
	T_EQ_INT(http_request(&h, "GET", "/2", NULL, 0, &resp), 0);
	T_EQ_STR(resp.body.data, "2");
	T_EQ_INT(http_request(&h, "GET", "/3", NULL, 0, &resp), 0);
	T_EQ_STR(resp.body.data, "fresh");
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 3);
	T_EQ_INT(s->requests, 3);
	http_resp_free(&resp);
	free(s);
}

/* Answers that break HTTP, or a cap: each on a connection of its own. */
static void
test_bad_answers(void)
{
	static const struct {
		const char *answer;
		int r;
		const char *err;
	} cases[] = {
		{ .answer = OK "Content-Length: 10\r\n\r\nhello", .r = BF_ERR_LOST,
		  .err = "before the answer was complete" },
		{ .answer = OK "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", .r = BF_ERR_LOST,
		  .err = "before the answer was complete" },
		{ .answer = "HTTP/2 200 OK\r\n\r\n", .r = BF_ERR_PROTO, .err = "status line" },
		{ .answer = "HTTP/1.1 20 OK\r\n\r\n", .r = BF_ERR_PROTO, .err = "status line" },
		{ .answer = OK "Content-Length: -1\r\n\r\n", .r = BF_ERR_PROTO,
		  .err = "not a number" },
		{ .answer = OK "Content-Length: 184467440737095516160\r\n\r\n",
		  .r = BF_ERR_PROTO, .err = "too large" },
		{ .answer = OK "Content-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
		  .r = BF_ERR_PROTO, .err = "conflicting" },
		{ .answer = OK "Transfer-Encoding: chunked\r\n\r\nzz\r\n", .r = BF_ERR_PROTO,
		  .err = "chunk size" },
		{ .answer = OK "Transfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\n",
		  .r = BF_ERR_PROTO, .err = "too large" },
		{ .answer = OK "Transfer-Encoding: gzip\r\n\r\n", .r = BF_ERR_PROTO,
		  .err = "Transfer-Encoding \"gzip\" is not supported" },
		{ .answer = "HTTP/1.1 101 Switching Protocols\r\n\r\n", .r = BF_ERR_PROTO,
		  .err = "interim" },
		{ .answer = OK "X-Id: a\r\n b\r\n\r\n", .r = BF_ERR_PROTO, .err = "obs-fold" },
	};
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		srv_add(s, (struct srv_step){ .answer = cases[i].answer, .close = 1 });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	http_resp_init(&resp);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_EQ_INT(http_request(&h, "GET", "/x", NULL, 0, &resp), cases[i].r);
		if (strstr(h.errbuf, cases[i].err) == NULL)
			fprintf(stderr, "bad answer %zu\n", i);
		T_CONTAINS(h.errbuf, cases[i].err);
	}
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, (int)(sizeof(cases) / sizeof(cases[0])));
	http_resp_free(&resp);
	free(s);
}

/* Over the body's cap (said, chunked, close-delimited) and the head's. */
static void
test_caps(void)
{
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;
	struct buf big, chunked, closed, head;
	char said[128];
	int i;

	buf_init(&chunked, 0);
	buf_init(&closed, 0);
	buf_init(&head, 0);
	buf_init(&big, 0);
	snprintf(said, sizeof(said), OK "Content-Length: %d\r\n\r\n", BF_MAX_API_RESPONSE + 1);
	T_OK(buf_puts(&chunked, OK "Transfer-Encoding: chunked\r\n\r\n"));
	for (i = 0; i < 3; i++)
		T_OK(buf_printf(&chunked, "190\r\n%0400d\r\n", i));
	T_OK(buf_puts(&chunked, "0\r\n\r\n"));
	T_OK(buf_printf(&closed, "HTTP/1.0 200 OK\r\n\r\n%01001d", 7));
	T_OK(buf_puts(&head, OK));
	for (i = 0; head.len <= BF_MAX_HTTP_RESP_HEAD; i++)
		T_OK(buf_printf(&head, "X-Pad-%d: %0200d\r\n", i, 0));
	T_OK(buf_puts(&head, "Content-Length: 0\r\n\r\n"));
	T_OK(buf_printf(&big, OK "Content-Length: %d\r\n\r\n%0999d", 999, 0));
	srv_add(s, (struct srv_step){ .answer = said, .close = 1 });
	srv_add(s, (struct srv_step){ .answer = chunked.data, .close = 1 });
	srv_add(s, (struct srv_step){ .answer = closed.data, .close = 1 });
	srv_add(s, (struct srv_step){ .answer = head.data, .close = 1 });
	srv_add(s, (struct srv_step){ .answer = big.data });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	http_resp_init(&resp);
	T_EQ_INT(http_request(&h, "GET", "/said", NULL, 0, &resp), BF_ERR_TOOBIG);
	T_CONTAINS(h.errbuf, "response larger than 67108864 bytes");
	/* The cap is resp->body's: a small one spares sending 64 MiB. */
	resp.body.max = 1000;
	T_EQ_INT(http_request(&h, "GET", "/chunked", NULL, 0, &resp), BF_ERR_TOOBIG);
	T_CONTAINS(h.errbuf, "response larger than 1000 bytes");
	T_EQ_INT(http_request(&h, "GET", "/closed", NULL, 0, &resp), BF_ERR_TOOBIG);
	T_EQ_INT(http_request(&h, "GET", "/head", NULL, 0, &resp), BF_ERR_TOOBIG);
	T_CONTAINS(h.errbuf, "head is larger than");
	T_EQ_INT(resp.status, 0);
	T_EQ_INT(http_request(&h, "GET", "/999", NULL, 0, &resp), 0);	/* under it */
	T_EQ_INT(resp.body.len, 999);
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 5);
	http_resp_free(&resp);
	buf_free(&chunked);
	buf_free(&closed);
	buf_free(&head);
	buf_free(&big);
	free(s);
}

/* 100 Continue skipped; a redirect is an answer, never followed. */
static void
test_interim_redirect(void)
{
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;
	char loc[64];

	srv_add(s, (struct srv_step){ .answer = "HTTP/1.1 100 Continue\r\n\r\n"
	    OK "Content-Length: 2\r\n\r\nok" });
	srv_add(s, (struct srv_step){ .answer = "HTTP/1.1 302 Found\r\n"
	    "Location: http://127.0.0.1:1/api/v1/x\r\nContent-Length: 3\r\n\r\nbye" });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, "tok", 5000));
	http_resp_init(&resp);
	T_EQ_INT(http_request(&h, "GET", "/c", NULL, 0, &resp), 0);
	T_EQ_INT(resp.status, 200);
	T_EQ_STR(resp.body.data, "ok");
	T_EQ_INT(http_request(&h, "GET", "/r", NULL, 0, &resp), 0);
	T_EQ_INT(resp.status, 302);
	T_EQ_STR(resp.body.data, "bye");
	T_EQ_INT(http_header(&h, "location", loc, sizeof(loc)), 0);
	T_EQ_STR(loc, "http://127.0.0.1:1/api/v1/x");
	http_free(&h);
	srv_stop(s);
	T_EQ_INT(s->accepts, 1);
	T_EQ_INT(s->requests, 2);
	http_resp_free(&resp);
	free(s);
}

static void
test_timeouts(void)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;
	char url[64];
	int64_t t0;
	int lfd, filler;

	http_resp_init(&resp);
	/* The whole request. */
	srv_add(s, (struct srv_step){ .answer = OK0, .delay_ms = 700 });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 200));
	t0 = bf_mono_ms();
	T_EQ_INT(http_request(&h, "GET", "/slow", NULL, 0, &resp), BF_ERR_TIMEOUT);
	T_CHECK(bf_mono_ms() - t0 >= 190 && bf_mono_ms() - t0 < 650);
	T_CONTAINS(h.errbuf, "timed out after");
	http_free(&h);
	srv_stop(s);
	free(s);

	/* Refused. */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", closed_port());
	T_OK(http_init(&h, url, NULL, 5000, 1000));
	T_EQ_INT(http_request(&h, "GET", "/x", NULL, 0, &resp), BF_ERR_LOST);
	T_CONTAINS(h.errbuf, "Connection refused");
	T_EQ_INT(resp.status, 0);
	http_free(&h);

	/* connect_ms: a listener whose backlog is full drops our SYN. */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	T_OK(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)));
	T_OK(listen(lfd, 0));
	T_OK(getsockname(lfd, (struct sockaddr *)&sin, &sl));
	filler = socket(AF_INET, SOCK_STREAM, 0);
	T_OK(connect(filler, (struct sockaddr *)&sin, sizeof(sin)));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sin.sin_port));
	T_OK(http_init(&h, url, NULL, 5000, 250));
	t0 = bf_mono_ms();
	T_EQ_INT(http_request(&h, "GET", "/x", NULL, 0, &resp), BF_ERR_TIMEOUT);
	T_CHECK(bf_mono_ms() - t0 >= 240 && bf_mono_ms() - t0 < 2000);
	T_CONTAINS(h.errbuf, "connecting to 127.0.0.1");
	http_free(&h);
	close(filler);
	close(lfd);
	http_resp_free(&resp);
}

/* What a stream's callback saw. */
struct lines {
	char line[8][64];
	int n;
	int end_at;		/* return 1 on this line (1-based); 0: never */
	int stop_at;		/* set *stop on this line */
	volatile sig_atomic_t *stop;
};

static int
lines_cb(void *arg, const char *text, size_t len)
{
	struct lines *l = arg;

	if (l->n < 8)
		snprintf(l->line[l->n], sizeof(l->line[0]), "%.*s", (int)len, text);
	l->n++;
	if (l->stop_at == l->n)
		*l->stop = 1;
	return l->end_at == l->n;
}

struct stopper {
	volatile sig_atomic_t *stop;
	int ms;
};

static void *
stopper_main(void *arg)
{
	struct stopper *st = arg;

	usleep((useconds_t)st->ms * 1000);
	*st->stop = 1;
	return NULL;
}

#define SSE_HEAD	OK "Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

static void
test_stream(void)
{
	/* "id: 1\ndata: {}\r\n\r\nevent:x\n", lines cut across chunks */
	static const char sse[] = SSE_HEAD "3\r\nid:\r\n7\r\n 1\ndata\r\n"
	    "a\r\n: {}\r\n\r\nev\r\n5\r\nent:x\r\n1\r\n\n\r\n0\r\n\r\n";
	volatile sig_atomic_t stop = 0;
	struct stopper st = { .stop = &stop, .ms = 300 };
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;
	struct lines l;
	struct buf longline;
	pthread_t th;
	int64_t t0;
	int pass;

	buf_init(&longline, 0);
	T_OK(buf_puts(&longline, "HTTP/1.0 200 OK\r\n\r\n"));
	while (longline.len < HTTP_MAX_STREAM_LINE + 4096)
		T_OK(buf_puts(&longline, "0123456789abcdef"));
	srv_add(s, (struct srv_step){ .answer = sse });
	srv_add(s, (struct srv_step){ .answer = sse, .bytewise = 1 });
	srv_add(s, (struct srv_step){ .answer = "HTTP/1.0 200 OK\r\n\r\nl1\nl2\r\npartial",
	    .bytewise = 1, .close = 1 });
	srv_add(s, (struct srv_step){ .answer = longline.data, .close = 1 });
	srv_add(s, (struct srv_step){ .answer = SSE_HEAD "6\r\na\nb\nc\n\r\n" });
	srv_add(s, (struct srv_step){ .answer = SSE_HEAD "4\r\na\nb\n\r\n" });
	srv_add(s, (struct srv_step){ .answer = SSE_HEAD "2\r\na\n\r\n" });
	srv_add(s, (struct srv_step){ .answer = SSE_HEAD });
	srv_add(s, (struct srv_step){ .answer = "HTTP/1.1 404 Not Found\r\n"
	    "Content-Length: 13\r\n\r\n{\"error\":\"x\"}" });
	T_OK(srv_start(s, AF_INET));
	T_OK(client(&h, s, NULL, 5000));
	http_resp_init(&resp);

	/* Whole, then a byte at a time: the same lines, then the end. */
	for (pass = 0; pass < 2; pass++) {
		memset(&l, 0, sizeof(l));
		T_EQ_INT(http_stream(&h, "/events?after=1", 5000, lines_cb, &l, &stop, &resp),
		    BF_ERR_LOST);
		T_CONTAINS(h.errbuf, "the stream ended");
		T_EQ_INT(resp.status, 200);
		T_EQ_INT(l.n, 4);
		T_EQ_STR(l.line[0], "id: 1");
		T_EQ_STR(l.line[1], "data: {}");
		T_EQ_STR(l.line[2], "");
		T_EQ_STR(l.line[3], "event:x");
	}
	/* Delimited by the close; the unended line is dropped. */
	memset(&l, 0, sizeof(l));
	T_EQ_INT(http_stream(&h, "/events", 5000, lines_cb, &l, &stop, &resp), BF_ERR_LOST);
	T_EQ_INT(l.n, 2);
	T_EQ_STR(l.line[0], "l1");
	T_EQ_STR(l.line[1], "l2");
	/* A line over HTTP_MAX_STREAM_LINE. */
	memset(&l, 0, sizeof(l));
	T_EQ_INT(http_stream(&h, "/events", 5000, lines_cb, &l, &stop, &resp), BF_ERR_PROTO);
	T_CONTAINS(h.errbuf, "a streamed line longer than");
	T_EQ_INT(l.n, 0);
	/* The callback ends it. */
	memset(&l, 0, sizeof(l));
	l.end_at = 2;
	T_EQ_INT(http_stream(&h, "/events", 5000, lines_cb, &l, &stop, &resp), 0);
	T_EQ_INT(l.n, 2);
	/* *stop, between two lines of one read. */
	memset(&l, 0, sizeof(l));
	l.stop_at = 1;
	l.stop = &stop;
	T_EQ_INT(http_stream(&h, "/events", 5000, lines_cb, &l, &stop, &resp),
	    BF_ERR_CANCELLED);
	T_EQ_INT(l.n, 1);
	stop = 0;
	/* *stop, while the stream is silent: read within a second. */
	memset(&l, 0, sizeof(l));
	T_OK(pthread_create(&th, NULL, stopper_main, &st));
	t0 = bf_mono_ms();
	T_EQ_INT(http_stream(&h, "/events", 0, lines_cb, &l, &stop, &resp), BF_ERR_CANCELLED);
	T_CHECK(bf_mono_ms() - t0 >= 290 && bf_mono_ms() - t0 < 1800);
	T_EQ_INT(l.n, 1);
	pthread_join(th, NULL);
	stop = 0;
	/* max_ms. */
	memset(&l, 0, sizeof(l));
	t0 = bf_mono_ms();
	T_EQ_INT(http_stream(&h, "/events", 300, lines_cb, &l, &stop, &resp), BF_ERR_TIMEOUT);
	T_CHECK(bf_mono_ms() - t0 >= 290 && bf_mono_ms() - t0 < 1800);
	/* Not 200: the answer's body, BF_ERR_PROTO. */
	memset(&l, 0, sizeof(l));
	T_EQ_INT(http_stream(&h, "/events", 5000, lines_cb, &l, &stop, &resp), BF_ERR_PROTO);
	T_EQ_INT(resp.status, 404);
	T_EQ_STR(resp.body.data, "{\"error\":\"x\"}");
	T_EQ_INT(l.n, 0);
	http_free(&h);
	srv_stop(s);
	/* The two ended streams kept their connection; the rest did not. */
	T_EQ_INT(s->accepts, 7);
	T_EQ_INT(s->requests, 9);
	http_resp_free(&resp);
	buf_free(&longline);
	free(s);
}

static void
test_escape(void)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{ .in = "", .out = "" },
		{ .in = "AZaz09-._~", .out = "AZaz09-._~" },
		{ .in = "thp:never", .out = "thp%3Anever" },
		{ .in = "a b+c", .out = "a%20b%2Bc" },
		{ .in = "/?#[]@!$&'()*,;=%", .out = "%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2C%3B%3D%25" },
		{ .in = "\x01\x7f\xff", .out = "%01%7F%FF" },
		{ .in = "caf\xc3\xa9", .out = "caf%C3%A9" },
		{ .in = "\r\n", .out = "%0D%0A" },
	};
	char *e;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		e = http_escape(NULL, v[i].in);
		T_EQ_STR(e, v[i].out);
		free(e);
	}
}

/* Base URLs: what http_init keeps, and what it refuses (and why). */
static void
test_urls(void)
{
	static const struct {
		const char *base;
		int r;
		const char *out;	/* h.base, or a part of h.errbuf */
	} v[] = {
		{ .base = NULL, .r = 0, .out = "http://127.0.0.1:8080" },
		{ .base = "http://h:1/", .r = 0, .out = "http://h:1" },
		{ .base = "http://h:1/api/v1", .r = 0, .out = "http://h:1" },
		{ .base = "http://h:1/api/v1//", .r = 0, .out = "http://h:1" },
		{ .base = "127.0.0.1:8080", .r = 0, .out = "http://127.0.0.1:8080" },
		{ .base = "localhost", .r = 0, .out = "http://localhost" },
		{ .base = "HTTP://H_1.example-x.org", .r = 0, .out = "HTTP://H_1.example-x.org" },
		{ .base = "http://[::1]:8080", .r = 0, .out = "http://[::1]:8080" },
		{ .base = "http://h/bf/", .r = 0, .out = "http://h/bf" },
		{ .base = "https://h:1/", .r = 0, .out = "https://h:1" },
		{ .base = "ftp://h", .r = BF_ERR_INVALID, .out = "neither http:// nor https://" },
		{ .base = "file:///etc/passwd", .r = BF_ERR_INVALID, .out = "neither" },
		{ .base = "http://", .r = BF_ERR_INVALID, .out = "no host" },
		{ .base = "http://:80", .r = BF_ERR_INVALID, .out = "no host" },
		{ .base = "http://::1:80", .r = BF_ERR_INVALID, .out = "no host" },
		{ .base = "http://[::1", .r = BF_ERR_INVALID, .out = "no ']'" },
		{ .base = "http://[::g]", .r = BF_ERR_INVALID, .out = "IPv6" },
		{ .base = "http://[::1]x", .r = BF_ERR_INVALID, .out = "port" },
		{ .base = "http://h:0", .r = BF_ERR_INVALID, .out = "port" },
		{ .base = "http://h:65536", .r = BF_ERR_INVALID, .out = "port" },
		{ .base = "http://h:8x", .r = BF_ERR_INVALID, .out = "port" },
		{ .base = "http://h:", .r = BF_ERR_INVALID, .out = "port" },
		{ .base = "http://h:+80", .r = BF_ERR_INVALID, .out = "port" },
		{ .base = "http://h:000080", .r = BF_ERR_INVALID, .out = "port" },
		{ .base = "http://u:p@h", .r = BF_ERR_INVALID, .out = "user@" },
		{ .base = "http://h?x=1", .r = BF_ERR_INVALID, .out = "query" },
		{ .base = "http://h/#f", .r = BF_ERR_INVALID, .out = "fragment" },
		{ .base = "http://h%41", .r = BF_ERR_INVALID, .out = "host name" },
		{ .base = "http://h\x01", .r = BF_ERR_INVALID, .out = "printable" },
		{ .base = "http://caf\xc3\xa9", .r = BF_ERR_INVALID, .out = "printable" },
		{ .base = "http://a b", .r = BF_ERR_INVALID, .out = "space" },
		{ .base = "http://a\n", .r = BF_ERR_INVALID, .out = "line break" },
	};
	struct http h;
	size_t i;
	int r;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		r = http_init(&h, v[i].base, NULL, 1000, 1000);
		if (r != v[i].r)
			fprintf(stderr, "base \"%s\": %d (%s)\n", v[i].base, r, h.errbuf);
		T_EQ_INT(r, v[i].r);
		if (r == 0)
			T_EQ_STR(h.base, v[i].out);
		else {
			T_CONTAINS(h.errbuf, v[i].out);
			T_CHECK(h.base == NULL && h.conn == NULL);
		}
		http_free(&h);
	}
}

/* A path under the base URL, a host name, IPv6. */
static void
test_hosts(void)
{
	struct srv *s = srv_new();
	struct http h;
	struct http_resp resp;
	char url[64], want[64];

	http_resp_init(&resp);
	srv_add(s, (struct srv_step){ .answer = OK0 });
	T_OK(srv_start(s, AF_INET));
	snprintf(url, sizeof(url), "http://localhost:%d/bf/api/v1/", s->port);
	T_OK(http_init(&h, url, NULL, 5000, 2000));
	T_EQ_INT(http_request(&h, "GET", "/jobs", NULL, 0, &resp), 0);
	http_free(&h);
	srv_stop(s);
	T_CHECK(strncmp(s->req[0], "GET /bf/api/v1/jobs HTTP/1.1\r\n", 30) == 0);
	snprintf(want, sizeof(want), "\r\nHost: localhost:%d\r\n", s->port);
	T_CONTAINS(s->req[0], want);
	free(s);

	s = srv_new();
	srv_add(s, (struct srv_step){ .answer = OK0 });
	if (srv_start(s, AF_INET6) != 0) {
		fprintf(stderr, "SKIP: no IPv6 loopback here\n");
		if (s->lfd != -1)
			close(s->lfd);
	} else {
		snprintf(url, sizeof(url), "http://[::1]:%d", s->port);
		T_OK(http_init(&h, url, NULL, 5000, 2000));
		T_EQ_INT(http_request(&h, "GET", "/jobs", NULL, 0, &resp), 0);
		T_EQ_INT(resp.status, 200);
		http_free(&h);
		srv_stop(s);
		snprintf(want, sizeof(want), "\r\nHost: [::1]:%d\r\n", s->port);
		T_CONTAINS(s->req[0], want);
	}
	free(s);
	http_resp_free(&resp);
}

/* https:// goes to the libcurl this test loads at run time. */
static void
test_https(void)
{
	volatile sig_atomic_t stop = 0;
	struct http h;
	struct http_resp resp;
	struct lines l;
	char url[64], v[8];

	memset(&l, 0, sizeof(l));
	http_resp_init(&resp);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", closed_port());
	T_OK(http_init(&h, url, "tok", 5000, 1000));
	T_EQ_INT(http_header(&h, "x", v, sizeof(v)), BF_ERR_NOTFOUND);
	T_EQ_INT(http_request(&h, "GET", "/jobs", NULL, 0, &resp), BF_ERR_LOST);
	T_CHECK(h.errbuf[0] != '\0');
	T_CHECK(strstr(h.errbuf, "libcurl.so.4") == NULL);
	fprintf(stderr, "https:// refused: %s\n", h.errbuf);
	T_EQ_INT(http_stream(&h, "/events", 1000, lines_cb, &l, &stop, &resp), BF_ERR_LOST);
	T_EQ_INT(http_header(&h, "x", v, sizeof(v)), BF_ERR_NOTFOUND);
	http_free(&h);
	http_resp_free(&resp);
}

int
main(void)
{
	/* SIGPIPE is left fatal: the client must never raise it (MSG_NOSIGNAL). */
	test_basic();
	test_post_token();
	test_token_refused();
	test_chunked_keepalive();
	test_reconnect();
	test_stale_bytes();
	test_bad_answers();
	test_caps();
	test_interim_redirect();
	test_timeouts();
	test_stream();
	test_escape();
	test_urls();
	test_hosts();
	test_https();
	return t_done();
}
