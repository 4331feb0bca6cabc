/*
 * api-events.c: GET /api/v1/events, the event hub as Server-Sent Events.
 * Each event goes out as "id: N\nevent: TYPE\ndata: JSON\n\n"; a client
 * resumes with Last-Event-ID (what EventSource sends on reconnect) or
 * ?after=N. When the events after that id have left the ring, or the id is
 * an earlier daemon's, the stream starts with an event "reset" whose id is
 * the newest: the client reloads its state over the REST API and goes on.
 * A comment line every BF_SSE_HEARTBEAT_S keeps proxies from timing out
 * and finds dead clients (the write fails).
 *
 * Threading: libmicrohttpd runs a pool of threads (api.c), so the content
 * reader never blocks: with nothing to send it suspends its connection and
 * parks it; one waker thread sleeps on the hub and resumes every parked
 * stream when an event arrives, and those whose heartbeat is due once a
 * second. (A reader blocking in events_wait() held a pool thread per
 * stream: with 50 streams open GET /api/v1/jobs got no answer at all.)
 * A stream checks for news and parks under sse_mu, and the waker takes
 * the newest id and resumes under it too, so an event published in
 * between is never slept through.
 * api_stop() sets a->stopping and stops the waker, which resumes them all,
 * before stopping MHD.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api-int.h"
#include "clock.h"
#include "events.h"
#include "parse.h"

#define BF_SSE_HEARTBEAT_S	15
#define BF_SSE_BATCH		64		/* events copied per wait */
#define BF_SSE_BLOCK		(16 * 1024)	/* MHD's buffer for the stream */

struct sse {
	struct api *a;
	struct MHD_Connection *conn;
	struct sse *next, *prev;	/* in a->sse_parked while parked */
	int parked;
	uint64_t last;		/* id of the last event sent */
	int reset;		/* send "reset" next */
	char *pend;		/* formatted, not yet handed to MHD */
	size_t plen, poff;
	time_t last_write;	/* CLOCK_MONOTONIC seconds */
};

static int
sse_append(struct buf *b, uint64_t id, const char *type, const char *data)
{
	char head[96];
	int n;

	n = snprintf(head, sizeof(head), "id: %llu\nevent: %s\ndata: ", (unsigned long long)id,
	    type);
	if (n < 0 || (size_t)n >= sizeof(head) || buf_append(b, head, (size_t)n) != 0 ||
	    buf_append(b, data, strlen(data)) != 0 || buf_append(b, "\n\n", 2) != 0)
		return BF_ERR_ALLOC;
	return 0;
}

/* Fill s->pend with the next thing to send without waiting: 1, 0 when
 * there is nothing yet, or -1 to end the stream. */
static int
sse_next(struct sse *s)
{
	struct events_rec recs[BF_SSE_BATCH];
	struct buf b;
	char data[96];
	int n, i, r = -1;

	buf_init(&b, BF_SSE_BATCH * (BF_MAX_LOG_LINE * 6 + 256) + 1024);
	for (;;) {
		if (atomic_load(&s->a->stopping))
			goto out;
		if (s->reset) {
			s->reset = 0;
			s->last = events_last_id(s->a->ev);
			snprintf(data, sizeof(data), "{\"reason\":\"resume point gone\","
			    "\"last_id\":%llu}", (unsigned long long)s->last);
			if (sse_append(&b, s->last, "reset", data) != 0)
				goto out;
			break;
		}
		n = events_wait(s->a->ev, s->last, 0, &s->a->stopping, recs, BF_SSE_BATCH);
		if (n == BF_ERR_NOTFOUND) {
			s->reset = 1;
			continue;
		}
		for (i = 0; i < n; i++) {
			if (sse_append(&b, recs[i].id, recs[i].type, recs[i].data) != 0) {
				events_recs_clear(recs, (size_t)n);
				goto out;
			}
			s->last = recs[i].id;
		}
		events_recs_clear(recs, n > 0 ? (size_t)n : 0);
		if (n > 0)
			break;
		if ((time_t)bf_mono_s() >= s->last_write + BF_SSE_HEARTBEAT_S) {
			if (buf_append(&b, ": heartbeat\n\n", 13) != 0)
				goto out;
			break;
		}
		r = 0;		/* nothing yet */
		goto out;
	}
	free(s->pend);
	s->plen = b.len;
	s->poff = 0;
	s->pend = buf_steal(&b);
	if (s->pend == NULL)
		goto out;
	s->last_write = (time_t)bf_mono_s();
	r = 1;
out:
	buf_free(&b);
	return r;
}

/* Unlink s from the parked list; sse_mu held. */
static void
sse_unpark(struct sse *s)
{
	struct api *a = s->a;

	if (!s->parked)
		return;
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		a->sse_parked = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	s->next = s->prev = NULL;
	s->parked = 0;
}

/*
 * Nothing to send: suspend the connection unless an event came after the
 * check (or the daemon stops), then MHD calls again. Returns 0 for the
 * content reader either way: MHD asks again when resumed.
 */
static ssize_t
sse_park(struct sse *s)
{
	struct api *a = s->a;

	pthread_mutex_lock(&a->sse_mu);
	if (!atomic_load(&a->stopping) && events_last_id(a->ev) <= s->last && !s->reset) {
		s->next = a->sse_parked;
		s->prev = NULL;
		if (a->sse_parked != NULL)
			a->sse_parked->prev = s;
		a->sse_parked = s;
		s->parked = 1;
		MHD_suspend_connection(s->conn);
	}
	pthread_mutex_unlock(&a->sse_mu);
	return 0;
}

static ssize_t
sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct sse *s = cls;
	size_t n;
	int r;

	(void)pos;
	if (s->poff >= s->plen) {
		if ((r = sse_next(s)) < 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (r == 0)
			return sse_park(s);
	}
	n = s->plen - s->poff < max ? s->plen - s->poff : max;
	memcpy(out, s->pend + s->poff, n);
	s->poff += n;
	return (ssize_t)n;
}

/* Resume the parked streams: all, or those whose heartbeat is due. */
static void
sse_resume(struct api *a, int all)
{
	struct sse *s, *next;
	time_t now = (time_t)bf_mono_s();

	pthread_mutex_lock(&a->sse_mu);
	for (s = a->sse_parked; s != NULL; s = next) {
		next = s->next;
		if (!all && now < s->last_write + BF_SSE_HEARTBEAT_S)
			continue;
		sse_unpark(s);
		MHD_resume_connection(s->conn);
	}
	pthread_mutex_unlock(&a->sse_mu);
}

static void *
sse_waker(void *arg)
{
	struct api *a = arg;
	uint64_t seen = events_last_id(a->ev), now;

	while (!atomic_load(&a->stopping)) {
		(void)events_wait(a->ev, seen, 1000, &a->stopping, NULL, 0);
		now = events_last_id(a->ev);
		sse_resume(a, now != seen);
		seen = now;
	}
	sse_resume(a, 1);	/* each sees stopping and ends */
	return NULL;
}

int
api_events_start(struct api *a)
{
	if (pthread_mutex_init(&a->sse_mu, NULL) != 0)
		return BF_ERR_SYS;
	if (a->ev == NULL)
		return 0;
	if (pthread_create(&a->sse_waker, NULL, sse_waker, a) != 0)
		return BF_ERR_SYS;
	a->sse_waker_started = 1;
	return 0;
}

void
api_events_stop(struct api *a)
{
	if (a->sse_waker_started) {
		events_wake(a->ev);
		pthread_join(a->sse_waker, NULL);
		a->sse_waker_started = 0;
	}
}

static void
sse_free(void *cls)
{
	struct sse *s = cls;

	if (s == NULL)
		return;
	/* MHD frees no suspended connection (api_stop resumes them all
	 * first) and the waker unparks before it resumes: never parked here,
	 * and no sse_mu under libmicrohttpd's own locks */
	if (s->parked) {
		pthread_mutex_lock(&s->a->sse_mu);
		sse_unpark(s);
		pthread_mutex_unlock(&s->a->sse_mu);
	}
	atomic_fetch_sub(&s->a->sse_clients, 1);
	free(s->pend);
	free(s);
}

/* Last-Event-ID wins over ?after (a reconnecting EventSource keeps the URL
 * it was opened with). */
static int
resume_from(struct api_req *rq, struct api_resp *rs, int *given, uint64_t *after)
{
	const char *h = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Last-Event-ID");
	const char *q = api_query(rq, "after");
	const char *v = h != NULL && *h != '\0' ? h : q;
	int64_t id;

	*given = 0;
	if (v == NULL || *v == '\0')
		return 0;
	if (parse_i64(v, 0, INT64_MAX, &id) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, h != NULL && *h != '\0' ? "Last-Event-ID" :
		    "after", "%s: \"%.40s\" is not an event id", h != NULL && *h != '\0' ?
		    "Last-Event-ID" : "after", v);
		return BF_ERR_INVALID;
	}
	*given = 1;
	*after = (uint64_t)id;
	return 0;
}

void
api_events(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct sse *s = NULL;
	struct MHD_Response *resp;
	uint64_t after = 0;
	int given;

	if (a->ev == NULL) {
		api_error(rs, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "events are not enabled");
		return;
	}
	if (resume_from(rq, rs, &given, &after) != 0)
		return;
	if (atomic_fetch_add(&a->sse_clients, 1) >= BF_MAX_SSE_CLIENTS) {
		atomic_fetch_sub(&a->sse_clients, 1);
		api_error(rs, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "too many event streams open "
		    "(at most %d)", BF_MAX_SSE_CLIENTS);
		return;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		atomic_fetch_sub(&a->sse_clients, 1);
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		return;
	}
	s->a = a;
	s->conn = rq->conn;
	s->last_write = (time_t)bf_mono_s();
	s->last = given ? after : events_last_id(a->ev);
	/* The id of the start point goes out at once: a client that drops
	 * before its first event still resumes from here, not from "now". */
	if (asprintf(&s->pend, ": benchfleet events\nretry: 1000\nid: %llu\n\n",
	    (unsigned long long)s->last) < 0) {
		s->pend = NULL;
		sse_free(s);
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		return;
	}
	s->plen = strlen(s->pend);
	/* Checked now, so that a bad id gets "reset" before anything else. */
	if (given && (after > events_last_id(a->ev) ||
	    events_wait(a->ev, after, 0, NULL, NULL, 0) == BF_ERR_NOTFOUND))
		s->reset = 1;
	if ((resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, BF_SSE_BLOCK, sse_read,
	    s, sse_free)) == NULL) {
		sse_free(s);
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		return;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	rs->status = MHD_HTTP_OK;
	rs->raw = resp;
}
