/*
 * coord_test_events.c: the event hub: publish and wait, resume by id, ring
 * overflow, ids of another daemon, log rate limiting and cleaning,
 * publishers and subscribers on many threads, cancel and free waking
 * waiters, and the machine/run/job events read from a real store. Under
 * unit.coord_test_events@pg also two coordinators of one PostgreSQL store:
 * a change committed by one reaches the other's hub through the store's
 * notify triggers, a change written behind both reaches both, and no
 * event arrives twice.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "caps.h"
#include "coord_fixture.h"
#include "err.h"
#include "events.h"
#include "store.h"
#include "t.h"

static struct fix_where where;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static json_t *
obj(int i)
{
	return json_pack("{s:i}", "i", i);
}

static void
test_null(void)
{
	struct events_rec r[2];

	events_free(NULL);
	T_EQ_INT(events_publish(NULL, "job", obj(1)), 0);	/* data still freed (ASan) */
	events_machine(NULL, "x");
	events_run(NULL, 1);
	events_job(NULL, 1);
	events_log(NULL, 1, "stdout", "x");
	events_wake(NULL);
	T_EQ_INT(events_last_id(NULL), 0);
	T_EQ_INT(events_wait(NULL, 0, 1000, NULL, r, 2), 0);
	events_recs_clear(NULL, 3);
}

static void
test_publish_wait(void)
{
	struct events *ev = NULL;
	struct events_rec r[8];
	uint64_t first, id1, id2, id3;
	double t0;
	int n;

	T_EQ_INT(events_new(NULL, &ev), 0);
	first = events_last_id(ev);
	T_CHECK(first > (uint64_t)time(NULL) << 19);	/* ids from unix time << 20 */
	/* Nothing yet: a wait times out after about its timeout. */
	t0 = now_s();
	T_EQ_INT(events_wait(ev, first, 150, NULL, r, 8), 0);
	T_CHECK(now_s() - t0 >= 0.14 && now_s() - t0 < 2);
	/* Bad types and NULL data publish nothing. */
	T_EQ_INT(events_publish(ev, "", obj(0)), 0);
	T_EQ_INT(events_publish(ev, "Has Space", obj(0)), 0);
	T_EQ_INT(events_publish(ev, "waytoolongtypename", obj(0)), 0);
	T_EQ_INT(events_publish(ev, NULL, obj(0)), 0);
	T_EQ_INT(events_publish(ev, "job", NULL), 0);
	T_EQ_INT(events_last_id(ev), first);

	id1 = events_publish(ev, "job", obj(1));
	id2 = events_publish(ev, "run", json_pack("{s:s}", "line", "a\nb\r\nc"));
	id3 = events_publish(ev, "log", obj(3));
	T_EQ_INT(id1, first + 1);
	T_EQ_INT(id2, id1 + 1);
	T_EQ_INT(id3, id2 + 1);
	T_EQ_INT(events_last_id(ev), id3);
	n = events_wait(ev, first, 1000, NULL, r, 8);
	T_EQ_INT(n, 3);
	if (n == 3) {
		T_EQ_INT(r[0].id, id1);
		T_EQ_STR(r[0].type, "job");
		T_EQ_STR(r[0].data, "{\"i\":1}");
		T_EQ_STR(r[1].type, "run");
		/* one line: newlines escaped */
		T_EQ_STR(r[1].data, "{\"line\":\"a\\nb\\r\\nc\"}");
		T_EQ_STR(r[2].type, "log");
	}
	events_recs_clear(r, n > 0 ? (size_t)n : 0);
	/* Resume from the middle; max bounds the copy. */
	n = events_wait(ev, id1, 0, NULL, r, 8);
	T_EQ_INT(n, 2);
	T_EQ_INT(r[0].id, id2);
	events_recs_clear(r, 2);
	n = events_wait(ev, first, 0, NULL, r, 1);
	T_EQ_INT(n, 1);
	T_EQ_INT(r[0].id, id1);
	events_recs_clear(r, 1);
	/* Up to date: no wait beyond the timeout, nothing copied. */
	T_EQ_INT(events_wait(ev, id3, 0, NULL, r, 8), 0);
	/* An id from the future (another daemon's), or from before the
	 * hub's first: cannot resume. */
	T_EQ_INT(events_wait(ev, id3 + 1, 0, NULL, r, 8), BF_ERR_NOTFOUND);
	T_EQ_INT(events_wait(ev, 5, 0, NULL, r, 8), BF_ERR_NOTFOUND);
	T_EQ_INT(events_wait(ev, first - 1, 0, NULL, r, 8), BF_ERR_NOTFOUND);
	T_EQ_INT(events_wait(ev, first, 0, NULL, NULL, 0), 0);	/* check only */
	events_free(ev);
}

static void
test_ring(void)
{
	struct events *ev = NULL;
	struct events_rec r[4];
	uint64_t first, last = 0;
	int i, n;

	T_EQ_INT(events_new(NULL, &ev), 0);
	first = events_last_id(ev);
	for (i = 0; i < BF_EVENTS_RING + 10; i++)
		last = events_publish(ev, "job", obj(i));
	T_EQ_INT(last, first + BF_EVENTS_RING + 10);
	/* The first 10 events are gone: resuming before them is refused. */
	T_EQ_INT(events_wait(ev, first, 0, NULL, r, 4), BF_ERR_NOTFOUND);
	T_EQ_INT(events_wait(ev, first + 9, 0, NULL, r, 4), BF_ERR_NOTFOUND);
	/* The oldest kept event is first + 11; resuming right before it works. */
	n = events_wait(ev, first + 10, 0, NULL, r, 4);
	T_EQ_INT(n, 4);
	T_EQ_INT(r[0].id, first + 11);
	T_EQ_STR(r[0].data, "{\"i\":10}");
	events_recs_clear(r, n > 0 ? (size_t)n : 0);
	n = events_wait(ev, last - 1, 0, NULL, r, 4);
	T_EQ_INT(n, 1);
	T_EQ_INT(r[0].id, last);
	events_recs_clear(r, 1);
	events_free(ev);
}

/* Wait for the start of a CLOCK_MONOTONIC second, so that a burst falls
 * into one rate window. */
static void
second_start(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec = 1000000000L - ts.tv_nsec + 1000000L;
	ts.tv_sec = 0;
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	nanosleep(&ts, NULL);
}

static void
test_log(void)
{
	struct events *ev = NULL;
	struct events_rec r[64];
	json_t *j;
	char big[BF_MAX_LOG_LINE + 100];
	uint64_t first;
	int i, n, other = 0;

	T_EQ_INT(events_new(NULL, &ev), 0);
	first = events_last_id(ev);
	second_start();
	for (i = 0; i < 50; i++)
		events_log(ev, 7, "stdout", "line");
	events_log(ev, 8, "stderr", "another run has its own budget");
	n = events_wait(ev, first, 0, NULL, r, 64);
	T_EQ_INT(n, BF_EVENTS_LOG_RATE + 1);
	for (i = 0; i < n; i++)
		if (strstr(r[i].data, "\"run\":8") != NULL)
			other++;
	T_EQ_INT(other, 1);
	T_CHECK(n > 0 && strstr(r[0].data, "dropped") == NULL);
	events_recs_clear(r, n > 0 ? (size_t)n : 0);
	/* In the next second the next line carries the count of the dropped. */
	first = events_last_id(ev);
	sleep(1);
	events_log(ev, 7, "stdout", "after");
	n = events_wait(ev, first, 0, NULL, r, 64);
	T_EQ_INT(n, 1);
	if (n == 1) {
		j = json_loads(r[0].data, 0, NULL);
		T_EQ_INT(json_integer_value(json_object_get(j, "run")), 7);
		T_EQ_STR(json_string_value(json_object_get(j, "stream")), "stdout");
		T_EQ_STR(json_string_value(json_object_get(j, "line")), "after");
		/* when the coordinator saw it, as the stored line's "at" */
		T_CHECK(json_is_real(json_object_get(j, "at")));
		T_NEAR(json_real_value(json_object_get(j, "at")), (double)time(NULL), 5);
		T_EQ_INT(json_integer_value(json_object_get(j, "dropped")), 50 - BF_EVENTS_LOG_RATE);
		json_decref(j);
	}
	events_recs_clear(r, n > 0 ? (size_t)n : 0);
	/* Invalid UTF-8 becomes U+FFFD; an over-long line is cut; markup is
	 * data like any other. */
	first = events_last_id(ev);
	events_log(ev, 9, "stdout", "bad \xff\xfe utf8 \xc3\x28 <img src=x onerror=alert(1)>");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	events_log(ev, 9, "stdout", big);
	events_log(ev, 9, NULL, "no stream");
	events_log(ev, 9, "stdout", NULL);
	n = events_wait(ev, first, 0, NULL, r, 64);
	T_EQ_INT(n, 2);
	if (n == 2) {
		j = json_loads(r[0].data, 0, NULL);
		T_CHECK(j != NULL);
		T_EQ_STR(json_string_value(json_object_get(j, "line")),
		    "bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd( <img src=x onerror=alert(1)>");
		json_decref(j);
		j = json_loads(r[1].data, 0, NULL);
		T_EQ_INT(json_string_length(json_object_get(j, "line")), BF_MAX_LOG_LINE);
		json_decref(j);
	}
	events_recs_clear(r, n > 0 ? (size_t)n : 0);
	/* Many runs: more than the rate table holds, none starves. */
	first = events_last_id(ev);
	for (i = 0; i < 200; i++)
		events_log(ev, 1000 + i, "stdout", "x");
	T_EQ_INT(events_last_id(ev) - first, 200);
	events_free(ev);
}

#define NPUB	4
#define NPER	1000
#define NSUB	3

struct th {
	struct events *ev;
	uint64_t from;
	int got;
	int gaps;
	atomic_int *cancel;
	double took;
};

static void *
publisher(void *p)
{
	struct th *t = p;
	int i;

	for (i = 0; i < NPER; i++)
		events_publish(t->ev, "run", obj(i));
	return NULL;
}

static void *
subscriber(void *p)
{
	struct th *t = p;
	struct events_rec r[16];
	uint64_t last = t->from;
	int n, i;

	while (t->got < NPUB * NPER) {
		n = events_wait(t->ev, last, 2000, NULL, r, 16);
		if (n <= 0) {
			t->gaps = -1000000;	/* timed out or lost the ring */
			break;
		}
		for (i = 0; i < n; i++) {
			if (r[i].id != last + 1)
				t->gaps++;
			last = r[i].id;
		}
		t->got += n;
		events_recs_clear(r, (size_t)n);
	}
	return NULL;
}

static void *
sleeper(void *p)
{
	struct th *t = p;
	struct events_rec r[1];
	double t0 = now_s();

	t->got = events_wait(t->ev, t->from, 20000, t->cancel, r, 1);
	t->took = now_s() - t0;
	return NULL;
}

static void
test_threads(void)
{
	struct events *ev = NULL;
	pthread_t pt[NPUB], st[NSUB], sl;
	struct th pubs[NPUB], subs[NSUB], s1;
	atomic_int cancel = 0;
	int i;

	T_EQ_INT(events_new(NULL, &ev), 0);
	for (i = 0; i < NSUB; i++) {
		memset(&subs[i], 0, sizeof(subs[i]));
		subs[i].ev = ev;
		subs[i].from = events_last_id(ev);
		pthread_create(&st[i], NULL, subscriber, &subs[i]);
	}
	for (i = 0; i < NPUB; i++) {
		memset(&pubs[i], 0, sizeof(pubs[i]));
		pubs[i].ev = ev;
		pthread_create(&pt[i], NULL, publisher, &pubs[i]);
	}
	for (i = 0; i < NPUB; i++)
		pthread_join(pt[i], NULL);
	for (i = 0; i < NSUB; i++) {
		pthread_join(st[i], NULL);
		T_EQ_INT(subs[i].got, NPUB * NPER);	/* every event, */
		T_EQ_INT(subs[i].gaps, 0);		/* in id order, none skipped */
	}
	/* A cancelled waiter returns at once when woken. */
	memset(&s1, 0, sizeof(s1));
	s1.ev = ev;
	s1.from = events_last_id(ev);
	s1.cancel = &cancel;
	pthread_create(&sl, NULL, sleeper, &s1);
	usleep(100000);
	atomic_store(&cancel, 1);
	events_wake(ev);
	pthread_join(sl, NULL);
	T_EQ_INT(s1.got, 0);
	T_CHECK(s1.took < 2);
	/* Already cancelled: no wait at all. */
	pthread_create(&sl, NULL, sleeper, &s1);
	pthread_join(sl, NULL);
	T_CHECK(s1.took < 0.5);
	/* events_free wakes a waiter and waits for it to leave. */
	s1.cancel = NULL;
	pthread_create(&sl, NULL, sleeper, &s1);
	usleep(100000);
	events_free(ev);
	pthread_join(sl, NULL);
	T_EQ_INT(s1.got, 0);
	T_CHECK(s1.took < 2);
}

static int
has_keys(json_t *o, const char *const *keys)
{
	size_t n = 0;

	for (; keys[n] != NULL; n++)
		if (json_object_get(o, keys[n]) == NULL)
			return 0;
	return json_object_size(o) == n;
}

/* Machine mname of class demo and a job of 3 runs on it, the first labelled
 * label (the others x=1); the job's id, 0 on failure. */
static int64_t
demo_job(struct store *st, char *mname, const char *label)
{
	struct store_machine m;
	struct store_run_new rn[3];
	int64_t jid = 0;
	int i;

	memset(&m, 0, sizeof(m));
	m.name = mname;
	m.host = "127.0.0.1";
	m.port = 22;
	m.klass = "demo";
	T_EQ_INT(store_machine_add(st, &m, NULL), 0);
	memset(rn, 0, sizeof(rn));
	for (i = 0; i < 3; i++) {
		rn[i].cell_index = (size_t)i;
		rn[i].label = i == 0 ? label : "x=1";
		rn[i].axes_json = "{}";
		rn[i].values_json = "{}";
		rn[i].run_order = i;
		rn[i].iterations = 5;
		rn[i].timeout_s = 600;
	}
	T_EQ_INT(store_job_create(st, "demo", "j", "{}", "demo", NULL, rn, 3, &jid), 0);
	return jid;
}

/* The shapes of events.h, read from a real store. */
static void
test_store_events(void)
{
	static const char *const mkeys[] = { "name", "class", "state", "hostname", "kernel",
	    "last_error", "last_seen", NULL };
	static const char *const rkeys[] = { "id", "job_id", "cell_index", "label", "boot",
	    "state", "machine", "hostname", "error", "started_at", "finished_at", NULL };
	static const char *const jkeys[] = { "id", "recipe", "name", "state", "runs_total",
	    "runs_done", "runs_failed", "runs_running", "runs_queued", "eta_s", NULL };
	char dir[] = "/tmp/bf-events-XXXXXX", path[128];
	struct store *st = NULL;
	struct events *ev = NULL;
	struct store_claim *c = NULL;
	struct events_rec r[8];
	struct bf_diag d;
	json_t *j;
	uint64_t first;
	int64_t jid = 0;
	int n;

	if (mkdtemp(dir) == NULL) {
		T_CHECK(0);
		return;
	}
	snprintf(path, sizeof(path), "%s/ev.db", dir);
	bf_diag_clear(&d);
	T_EQ_INT(store_open(path, &st, &d), 0);
	T_EQ_INT(events_new(st, &ev), 0);
	jid = demo_job(st, "m1", "<img src=x onerror=alert(1)>");
	first = events_last_id(ev);
	events_machine(ev, "m1");
	events_machine(ev, "nosuch");		/* nothing */
	events_job(ev, jid);
	events_job(ev, 999);			/* nothing */
	events_run(ev, 999);			/* nothing */
	n = events_wait(ev, first, 0, NULL, r, 8);
	T_EQ_INT(n, 2);
	if (n == 2) {
		j = json_loads(r[0].data, 0, NULL);
		T_EQ_STR(r[0].type, "machine");
		T_CHECK(has_keys(j, mkeys));
		T_EQ_STR(json_string_value(json_object_get(j, "state")), "idle");
		json_decref(j);
		j = json_loads(r[1].data, 0, NULL);
		T_EQ_STR(r[1].type, "job");
		T_CHECK(has_keys(j, jkeys));
		T_CHECK(json_is_null(json_object_get(j, "eta_s")));	/* nothing finished */
		T_EQ_INT(json_integer_value(json_object_get(j, "runs_total")), 3);
		json_decref(j);
	}
	events_recs_clear(r, n > 0 ? (size_t)n : 0);
	/* One run done: the ETA is the two left at its duration on one machine. */
	T_EQ_INT(store_run_claim(st, "m1", "demo", 60, &c), 0);
	T_CHECK(c != NULL);
	if (c != NULL) {
		usleep(300000);
		T_EQ_INT(store_run_finish(st, c->run_id, "done", 0, NULL), 0);
		first = events_last_id(ev);
		events_run(ev, c->run_id);
		events_job(ev, jid);
		n = events_wait(ev, first, 0, NULL, r, 8);
		T_EQ_INT(n, 2);
		if (n == 2) {
			j = json_loads(r[0].data, 0, NULL);
			T_CHECK(has_keys(j, rkeys));
			T_EQ_STR(json_string_value(json_object_get(j, "state")), "done");
			T_CHECK(json_number_value(json_object_get(j, "finished_at")) -
			    json_number_value(json_object_get(j, "started_at")) >= 0.25);
			T_EQ_STR(json_string_value(json_object_get(j, "label")),
			    "<img src=x onerror=alert(1)>");
			json_decref(j);
			j = json_loads(r[1].data, 0, NULL);
			T_CHECK(json_is_integer(json_object_get(j, "eta_s")));
			T_CHECK(json_integer_value(json_object_get(j, "eta_s")) <= 2);
			T_EQ_INT(json_integer_value(json_object_get(j, "runs_done")), 1);
			json_decref(j);
		}
		events_recs_clear(r, n > 0 ? (size_t)n : 0);
	}
	store_claim_free(c);
	/* An ended job has nothing left. */
	T_EQ_INT(store_job_cancel(st, jid), 0);
	first = events_last_id(ev);
	events_job(ev, jid);
	n = events_wait(ev, first, 0, NULL, r, 8);
	T_EQ_INT(n, 1);
	if (n == 1) {
		j = json_loads(r[0].data, 0, NULL);
		T_EQ_INT(json_integer_value(json_object_get(j, "eta_s")), 0);
		T_EQ_STR(json_string_value(json_object_get(j, "state")), "cancelled");
		json_decref(j);
	}
	events_recs_clear(r, n > 0 ? (size_t)n : 0);
	events_free(ev);
	store_close(st);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		T_CHECK(0);
}

/*
 * Events of ev after *after until one of type for id (field "id", or
 * "name" when id is 0) with want in field key (NULL: any) arrives, or
 * timeout_ms pass. Counts every event of that type and id into *n (when
 * given) and returns 1 when the wanted one came. *after moves on.
 */
static int
wait_for(struct events *ev, uint64_t *after, const char *type, int64_t id, const char *key,
    const char *want, int timeout_ms, int *n)
{
	struct events_rec r[16];
	double end = now_s() + timeout_ms / 1000.0;
	int got = 0, k, i;
	json_t *j;

	while (!got && now_s() < end) {
		k = events_wait(ev, *after, 100, NULL, r, 16);
		for (i = 0; i < k && !got; i++) {
			*after = r[i].id;
			if (strcmp(r[i].type, type) != 0 || (j = json_loads(r[i].data, 0, NULL)) == NULL)
				continue;
			if (json_integer_value(json_object_get(j, "id")) == id) {
				if (n != NULL)
					(*n)++;
				if (key == NULL || (json_string_value(json_object_get(j, key)) != NULL &&
				    strcmp(json_string_value(json_object_get(j, key)), want) == 0))
					got = 1;
			}
			json_decref(j);
		}
		events_recs_clear(r, k > 0 ? (size_t)k : 0);
	}
	return got;
}

/* Every event of ev after *after for timeout_ms: how many of type for id. */
static int
count_for(struct events *ev, uint64_t *after, const char *type, int64_t id, int timeout_ms)
{
	int n = 0;

	(void)wait_for(ev, after, type, id, "no such key", "", timeout_ms, &n);
	return n;
}

static void
test_store_notify(void)
{
	struct store *a = NULL, *b = NULL;
	struct events *eva = NULL, *evb = NULL;
	struct store_claim *c = NULL;
	struct db *raw = NULL;
	uint64_t aa, ab;
	int64_t jid = 0, rid = 0;
	char sql[160];
	const char *t;

	if (where.pg_url == NULL)
		return;		/* one coordinator per SQLite file: nobody to tell */
	if ((t = fix_fresh(&where, "notify")) == NULL) {
		T_CHECK(0);
		return;
	}
	T_EQ_INT(store_open(t, &a, NULL), 0);
	T_EQ_INT(store_open(t, &b, NULL), 0);
	if (a == NULL || b == NULL)
		goto out;
	T_EQ_INT(store_set_node(a, "coord-a"), 0);
	T_EQ_INT(store_set_node(b, "coord-b"), 0);
	T_EQ_INT(events_new(a, &eva), 0);
	T_EQ_INT(events_new(b, &evb), 0);
	if (eva == NULL || evb == NULL)
		goto out;
	usleep(200000);		/* both relays LISTEN */
	aa = events_last_id(eva);
	ab = events_last_id(evb);
	/* A writes and publishes nothing itself (as a coordinator killed
	 * right after its commits): B hears of each from the store. */
	jid = demo_job(a, "n1", "x=1");
	T_CHECK(wait_for(evb, &ab, "job", jid, "state", "queued", 5000, NULL));
	T_EQ_INT(store_run_claim(a, "n1", "demo", 60, &c), 0);
	T_CHECK(c != NULL);
	if (c == NULL)
		goto out;
	rid = c->run_id;
	T_CHECK(wait_for(evb, &ab, "run", rid, "state", "running", 5000, NULL));
	T_EQ_INT(store_run_finish(a, rid, "done", 0, NULL), 0);
	T_CHECK(wait_for(evb, &ab, "run", rid, "state", "done", 5000, NULL));
	/* the job's counts follow the run's note */
	T_CHECK(wait_for(evb, &ab, "job", jid, NULL, NULL, 5000, NULL));
	/* A's own hub skips its own notes: nothing of run rid there */
	T_EQ_INT(count_for(eva, &aa, "run", rid, 700), 0);

	/* A publishes as a live writer does: its hub has the event once, and
	 * B has no second copy (no NOTIFY of its own beside the trigger's). */
	ab = events_last_id(evb);
	aa = events_last_id(eva);
	events_run(eva, rid);
	T_EQ_INT(count_for(eva, &aa, "run", rid, 100), 1);
	T_EQ_INT(count_for(evb, &ab, "run", rid, 700), 0);

	/* Written behind both (no benchfleet.node: everyone's note). */
	T_EQ_INT(db_open(t, &raw, NULL), 0);
	snprintf(sql, sizeof(sql), "UPDATE runs SET error = 'written by hand' WHERE id = %lld",
	    (long long)rid);
	T_EQ_INT(raw != NULL ? db_exec_script(raw, sql) : -1, 0);
	T_CHECK(wait_for(eva, &aa, "run", rid, "error", "written by hand", 5000, NULL));
	T_CHECK(wait_for(evb, &ab, "run", rid, "error", "written by hand", 5000, NULL));
	/* a column no event shows: no note */
	snprintf(sql, sizeof(sql), "UPDATE runs SET kernel = 'k' WHERE id = %lld", (long long)rid);
	T_EQ_INT(raw != NULL ? db_exec_script(raw, sql) : -1, 0);
	T_EQ_INT(count_for(evb, &ab, "run", rid, 700), 0);

	/* Forged notes on the channel (anyone who may NOTIFY): an id that is
	 * not an integer, a row that does not exist, a type nobody publishes
	 * as a reference, and a note that is not JSON publish nothing. */
	ab = events_last_id(evb);
	T_EQ_INT(raw != NULL ? db_notify(raw, "benchfleet",
	    "{\"t\":\"run_ref\",\"d\":{\"id\":\"1; DROP TABLE runs\",\"job_id\":-5}}") : -1, 0);
	T_EQ_INT(raw != NULL ? db_notify(raw, "benchfleet",
	    "{\"t\":\"run_ref\",\"d\":{\"id\":999999,\"job_id\":999999}}") : -1, 0);
	T_EQ_INT(raw != NULL ? db_notify(raw, "benchfleet", "{\"t\":\"job_ref\",\"d\":[1]}") : -1, 0);
	T_EQ_INT(raw != NULL ? db_notify(raw, "benchfleet", "not json") : -1, 0);
	{
		struct events_rec r[4];
		int k = events_wait(evb, ab, 700, NULL, r, 4);

		T_EQ_INT(k, 0);
		events_recs_clear(r, k > 0 ? (size_t)k : 0);
	}

	/* A cancel: one job note, none per queued run */
	T_EQ_INT(store_job_cancel(a, jid), 0);
	T_CHECK(wait_for(evb, &ab, "job", jid, "state", "cancelled", 5000, NULL));
	T_EQ_INT(count_for(evb, &ab, "run", rid + 1, 500) + count_for(evb, &ab, "run", rid + 2, 200), 0);
out:
	db_close(raw);
	store_claim_free(c);
	events_free(eva);
	events_free(evb);
	store_close(a);
	store_close(b);
	fix_remove(&where, "notify");
}

int
main(void)
{
	if (fix_where_init(&where, "events") != 0)
		return 1;
	test_null();
	test_publish_wait();
	test_ring();
	test_log();
	test_threads();
	test_store_events();
	test_store_notify();
	if (rmdir(where.dir) != 0)
		T_CHECK(0);
	return t_done();
}
