/*
 * events.c: the event hub behind GET /api/v1/events. Publishers (runner,
 * scheduler, API handlers) append to a ring of BF_EVENTS_RING serialized
 * events under one mutex; subscribers copy out what lies after their last id
 * and sleep on a condition variable in between. Events are serialized once,
 * at publish time, so a slow subscriber costs a copy, never a JSON dump.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "caps.h"
#include "clock.h"
#include "db.h"
#include "api-view.h"
#include "events.h"

#define EVENTS_RATE_SLOTS	64	/* runs whose log rate is tracked at once */

struct events_ent {
	uint64_t id;
	char type[16];
	char *data;
};

struct events_rate {
	int64_t run_id;		/* 0 = free slot */
	int64_t second;		/* CLOCK_MONOTONIC second of the window */
	int count;		/* published in that second */
	int64_t dropped;	/* not published since the last one */
	int64_t used;		/* for reuse of the least recent slot */
};

struct events {
	struct store *st;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* new event, wake-up, or closing */
	pthread_cond_t gone;		/* a waiter left (for events_free) */
	struct events_ent ring[BF_EVENTS_RING];
	uint64_t base;			/* the first id this hub gives */
	uint64_t next;			/* the next id to give */
	int waiters;
	int closing;
	struct events_rate rate[EVENTS_RATE_SLOTS];
	int64_t rate_tick;
	/* a shared store: events of the other coordinators arrive here */
	struct db_listener *listener;
	pthread_t relay;
	int relay_started;
	atomic_int relay_stop;
	/* privsep's monitor: every event goes to the API child instead of a ring */
	events_fwd_fn fwd;
	void *fwd_arg;
};

static uint64_t events_publish_from(struct events *ev, const char *type, json_t *data,
    int local);
static uint64_t events_ring_put(struct events *ev, const char *type, char *text);
static void run_pub(struct events *ev, int64_t run_id, int local);
static void job_pub(struct events *ev, int64_t job_id, int local);

/*
 * What the relay heard in one wait: the runs and jobs the store's notify
 * triggers named (store-schema.c, step 18), each once, read and published
 * after the wait (runs first, then their jobs' counts).
 */
#define RELAY_BATCH	64

struct relay_batch {
	struct events *ev;
	int64_t runs[RELAY_BATCH], jobs[RELAY_BATCH];
	size_t nruns, njobs;
};

static void
relay_flush(struct relay_batch *b)
{
	size_t i;

	for (i = 0; i < b->nruns; i++)
		run_pub(b->ev, b->runs[i], 0);
	for (i = 0; i < b->njobs; i++)
		job_pub(b->ev, b->jobs[i], 0);
	b->nruns = b->njobs = 0;
}

/* Add id to a[*n] once; a full batch is published first. */
static void
relay_add(struct relay_batch *b, int64_t *a, size_t *n, int64_t id)
{
	size_t i;

	if (id <= 0)
		return;
	for (i = 0; i < *n; i++)
		if (a[i] == id)
			return;
	if (*n == RELAY_BATCH)
		relay_flush(b);
	a[(*n)++] = id;
}

/*
 * A notification from the store. Another coordinator's event (t: the
 * event's type, d: its data) is published here as well. A trigger's
 * reference (run_ref, job_ref: a row whose change committed) is read from
 * the store and published as the run and job events its writer publishes
 * itself after its commit. The writer's own notes are skipped: its hub has
 * them (a note whose writer set no node is everyone's).
 */
static void
relay_one(const char *payload, void *arg)
{
	struct relay_batch *b = arg;
	struct events *ev = b->ev;
	const char *node, *type;
	json_t *o, *d;

	if ((o = json_loads(payload, 0, NULL)) == NULL)
		return;
	node = json_string_value(json_object_get(o, "n"));
	type = json_string_value(json_object_get(o, "t"));
	d = json_object_get(o, "d");
	if (type == NULL || !json_is_object(d) ||
	    (node != NULL && strcmp(node, store_node(ev->st)) == 0))
		goto out;
	if (strcmp(type, "run_ref") == 0) {
		relay_add(b, b->runs, &b->nruns, json_integer_value(json_object_get(d, "id")));
		relay_add(b, b->jobs, &b->njobs, json_integer_value(json_object_get(d, "job_id")));
	} else if (strcmp(type, "job_ref") == 0) {
		relay_add(b, b->jobs, &b->njobs, json_integer_value(json_object_get(d, "id")));
	} else if (node != NULL) {
		events_publish_from(ev, type, json_incref(d), 0);
	}
out:
	json_decref(o);
}

static void *
relay_main(void *arg)
{
	struct relay_batch b = { .ev = arg };

	while (!atomic_load(&b.ev->relay_stop)) {
		db_listen_wait(b.ev->listener, 500, relay_one, &b);
		relay_flush(&b);
	}
	return NULL;
}

int
events_new(struct store *st, struct events **out)
{
	return events_new_forward(st, NULL, NULL, out);
}

int
events_new_forward(struct store *st, events_fwd_fn fwd, void *fwd_arg, struct events **out)
{
	struct events *ev = NULL;
	pthread_condattr_t ca;
	int r = BF_ERR_SYS, have_ca = 0, have_mu = 0, have_cv = 0;

	*out = NULL;
	if ((ev = calloc(1, sizeof(*ev))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	ev->st = st;
	ev->fwd = fwd;
	ev->fwd_arg = fwd_arg;
	/* Ids from unix time << 20: a client holding an id of an earlier
	 * daemon is below this one's ids, so it gets "reset", not silence. */
	ev->base = ((uint64_t)time(NULL) << 20) + 1;
	ev->next = ev->base;
	if (pthread_condattr_init(&ca) != 0)
		goto out;
	have_ca = 1;
	if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_mutex_init(&ev->mu, NULL) != 0)
		goto out;
	have_mu = 1;
	if (pthread_cond_init(&ev->cv, &ca) != 0)
		goto out;
	have_cv = 1;
	if (pthread_cond_init(&ev->gone, NULL) != 0)
		goto out;
	/* The monitor needs no relay: its events' readers are in the API
	 * child, which has its own. */
	if (store_is_shared(st) && fwd == NULL) {
		if ((r = db_listen_open(store_target(st), "benchfleet", &ev->listener, NULL)) != 0)
			goto out;
		if (pthread_create(&ev->relay, NULL, relay_main, ev) != 0) {
			r = BF_ERR_SYS;
			goto out;
		}
		ev->relay_started = 1;
	}
	*out = ev;
	ev = NULL;
	r = 0;
out:
	if (ev != NULL)
		db_listen_close(ev->listener);
	if (ev != NULL && have_cv)
		pthread_cond_destroy(&ev->cv);
	if (ev != NULL && have_mu)
		pthread_mutex_destroy(&ev->mu);
	if (have_ca)
		pthread_condattr_destroy(&ca);
	free(ev);
	return r;
}

void
events_free(struct events *ev)
{
	size_t i;

	if (ev == NULL)
		return;
	if (ev->relay_started) {
		atomic_store(&ev->relay_stop, 1);
		pthread_join(ev->relay, NULL);
	}
	db_listen_close(ev->listener);
	pthread_mutex_lock(&ev->mu);
	ev->closing = 1;
	pthread_cond_broadcast(&ev->cv);
	while (ev->waiters > 0)
		pthread_cond_wait(&ev->gone, &ev->mu);
	pthread_mutex_unlock(&ev->mu);
	for (i = 0; i < BF_EVENTS_RING; i++)
		free(ev->ring[i].data);
	pthread_cond_destroy(&ev->gone);
	pthread_cond_destroy(&ev->cv);
	pthread_mutex_destroy(&ev->mu);
	free(ev);
}

static int
type_ok(const char *type)
{
	size_t n = 0;

	if (type == NULL)
		return 0;
	for (; type[n] != '\0'; n++)
		if (!((type[n] >= 'a' && type[n] <= 'z') || type[n] == '_'))
			return 0;
	return n > 0 && n < sizeof(((struct events_ent *)0)->type);
}

uint64_t
events_publish(struct events *ev, const char *type, json_t *data)
{
	return events_publish_from(ev, type, data, 1);
}

static uint64_t
events_publish_from(struct events *ev, const char *type, json_t *data, int local)
{
	char *text = NULL, *note = NULL;
	uint64_t id = 0;
	json_t *env;

	if (ev == NULL || data == NULL || !type_ok(type))
		goto out;
	/* JSON_COMPACT escapes every newline: one SSE data: line. */
	if ((text = json_dumps(data, JSON_COMPACT)) == NULL)
		goto out;
	/* Tell the other coordinators of a shared store (NOTIFY); an event
	 * too large for a notification stays local. Run and job events need
	 * no note: the store's triggers sent one in the commit they follow
	 * (relay_one). */
	if (local && store_is_shared(ev->st) && strcmp(type, "run") != 0 &&
	    strcmp(type, "job") != 0 &&
	    (env = json_pack("{s:s, s:s, s:O}", "n", store_node(ev->st), "t", type, "d",
	    data)) != NULL) {
		if ((note = json_dumps(env, JSON_COMPACT)) != NULL && strlen(note) < 7900)
			store_notify(ev->st, note);
		free(note);
		json_decref(env);
	}
	if (ev->fwd != NULL) {
		/* Both processes share the node name, so the child's relay
		 * drops the NOTIFY above: this is its only copy. */
		ev->fwd(ev->fwd_arg, type, text);
		id = 1;
		goto out;
	}
	id = events_ring_put(ev, type, text);
	text = NULL;
out:
	free(text);
	json_decref(data);
	return id;
}

/* Append text (stolen) to the ring and wake the subscribers. */
static uint64_t
events_ring_put(struct events *ev, const char *type, char *text)
{
	struct events_ent *e;
	uint64_t id;

	pthread_mutex_lock(&ev->mu);
	id = ev->next++;
	e = &ev->ring[id % BF_EVENTS_RING];
	free(e->data);
	e->id = id;
	snprintf(e->type, sizeof(e->type), "%s", type);
	e->data = text;
	pthread_cond_broadcast(&ev->cv);
	pthread_mutex_unlock(&ev->mu);
	return id;
}

uint64_t
events_inject(struct events *ev, const char *type, const char *json, size_t len)
{
	char *text;
	size_t i;

	if (ev == NULL || !type_ok(type) || json == NULL || len < 2 || json[0] != '{')
		return 0;
	/* one SSE data: line */
	for (i = 0; i < len; i++)
		if ((unsigned char)json[i] < 0x20)
			return 0;
	if ((text = strndup(json, len)) == NULL)
		return 0;
	return events_ring_put(ev, type, text);
}

/* Copy the listed keys of src (null when absent) into a new object. */
static json_t *
pick(const json_t *src, const char *const *keys)
{
	json_t *o, *v;

	if ((o = json_object()) == NULL)
		return NULL;
	for (; *keys != NULL; keys++) {
		v = json_object_get(src, *keys);
		if (json_object_set_new(o, *keys, v ? json_incref(v) : json_null()) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

void
events_machine(struct events *ev, const char *name)
{
	static const char *const keys[] = { "name", "class", "state", "hostname", "kernel",
	    "last_error", "last_seen", NULL };
	struct store_machine *m = NULL;
	json_t *full = NULL;

	if (ev == NULL || ev->st == NULL || name == NULL ||
	    store_machine_get(ev->st, name, &m) != 0)
		goto out;
	if ((full = api_view_machine(m)) == NULL)
		goto out;
	events_publish(ev, "machine", pick(full, keys));
out:
	json_decref(full);
	store_machine_free(m);
}

void
events_run(struct events *ev, int64_t run_id)
{
	run_pub(ev, run_id, 1);
}

/* The run as the store has it now; local: published by its writer (0:
 * relayed from a trigger's note). */
static void
run_pub(struct events *ev, int64_t run_id, int local)
{
	static const char *const keys[] = { "id", "job_id", "cell_index", "label", "boot",
	    "state", "machine", "hostname", "error", "started_at", "finished_at", NULL };
	json_t *full = NULL;

	if (ev == NULL || ev->st == NULL || api_view_run_get(ev->st, run_id, &full) != 0)
		goto out;
	events_publish_from(ev, "run", pick(full, keys), local);
out:
	json_decref(full);
}

/*
 * Seconds left: the queued runs at the mean duration of the finished ones,
 * plus what the running ones still have by that mean, shared among the
 * machines running the job now. null before any run has finished.
 */
static json_t *
job_eta(struct events *ev, int64_t job_id, const char *state)
{
	json_t *runs = NULL, *r, *eta = NULL;
	const char *st, *mach, *machines[64];
	double sum = 0, started, finished, rem = 0, now = bf_wall();
	size_t i, j, n = 0, queued = 0, nmach = 0;

	if (state != NULL && strcmp(state, "queued") != 0 && strcmp(state, "running") != 0)
		return json_integer(0);
	if (api_view_job_runs_get(ev->st, job_id, 1, &runs) != 0)
		return json_null();
	json_array_foreach(json_object_get(runs, "runs"), i, r) {
		st = json_string_value(json_object_get(r, "state"));
		if (st != NULL && strcmp(st, "done") == 0 &&
		    json_is_number(json_object_get(r, "started_at")) &&
		    json_is_number(json_object_get(r, "finished_at"))) {
			started = json_number_value(json_object_get(r, "started_at"));
			finished = json_number_value(json_object_get(r, "finished_at"));
			if (finished >= started) {
				sum += finished - started;
				n++;
			}
		}
	}
	if (n == 0) {
		eta = json_null();
		goto out;
	}
	json_array_foreach(json_object_get(runs, "runs"), i, r) {
		st = json_string_value(json_object_get(r, "state"));
		if (st == NULL)
			continue;
		if (strcmp(st, "queued") == 0) {
			queued++;
		} else if (strcmp(st, "running") == 0) {
			started = json_number_value(json_object_get(r, "started_at"));
			if (sum / (double)n > now - started)
				rem += sum / (double)n - (now - started);
			mach = json_string_value(json_object_get(r, "machine"));
			for (j = 0; mach != NULL && j < nmach; j++)
				if (strcmp(machines[j], mach) == 0)
					break;
			if (mach != NULL && j == nmach && nmach < sizeof(machines) /
			    sizeof(machines[0]))
				machines[nmach++] = mach;
		}
	}
	rem += (double)queued * (sum / (double)n);
	eta = json_integer((json_int_t)(rem / (double)(nmach ? nmach : 1) + 0.5));
out:
	json_decref(runs);
	return eta;
}

/*
 * Job events are read from the store and then published, by any worker and
 * handler thread. Two runs of a job ending at once would otherwise race:
 * the later read (8/8 done) could be published first, and the earlier one
 * (7/8, one running) after it, leaving every page on the stale count. One
 * mutex around read and publish keeps the events in the order of the
 * reads. Lock order: this, then the store lock, then the hub's mu.
 */
static pthread_mutex_t events_job_mu = PTHREAD_MUTEX_INITIALIZER;

void
events_job(struct events *ev, int64_t job_id)
{
	job_pub(ev, job_id, 1);
}

static void
job_pub(struct events *ev, int64_t job_id, int local)
{
	static const char *const keys[] = { "id", "recipe", "name", "state", "runs_total",
	    "runs_done", "runs_failed", "runs_running", "runs_queued", NULL };
	json_t *full = NULL, *o = NULL;
	int locked = 0;

	if (ev == NULL || ev->st == NULL)
		goto out;
	pthread_mutex_lock(&events_job_mu);
	locked = 1;
	if (api_view_job_get(ev->st, job_id, &full) != 0)
		goto out;
	if ((o = pick(full, keys)) == NULL ||
	    json_object_set_new(o, "eta_s", job_eta(ev, job_id,
	    json_string_value(json_object_get(full, "state")))) != 0)
		goto out;
	events_publish_from(ev, "job", o, local);
	o = NULL;
out:
	if (locked)
		pthread_mutex_unlock(&events_job_mu);
	json_decref(o);
	json_decref(full);
}

/* At most max bytes of s as valid UTF-8, each bad byte replaced by U+FFFD
 * (jansson refuses invalid UTF-8 and a log line is whatever a workload
 * printed). Caller frees; NULL on ENOMEM. */
static char *
utf8_clean(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, o = 0, k, len;
	unsigned int cp;
	char *out;

	if (n > max)
		n = max;
	if ((out = malloc(n * 3 + 1)) == NULL)
		return NULL;
	while (i < n) {
		len = p[i] < 0x80 ? 1 : (p[i] & 0xe0) == 0xc0 ? 2 : (p[i] & 0xf0) == 0xe0 ? 3 :
		    (p[i] & 0xf8) == 0xf0 ? 4 : 0;
		if (len == 0 || n - i < len)
			goto bad;
		cp = len == 1 ? p[i] : len == 2 ? p[i] & 0x1fu : len == 3 ? p[i] & 0x0fu :
		    p[i] & 0x07u;
		for (k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				goto bad;
			cp = (cp << 6) | (p[i + k] & 0x3fu);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0)
			goto bad;
		memcpy(out + o, p + i, len);
		o += len;
		i += len;
		continue;
bad:
		memcpy(out + o, "\xef\xbf\xbd", 3);
		o += 3;
		i++;
	}
	out[o] = '\0';
	return out;
}

/* Whether one more log event of run may go out now; *dropped gets the
 * count of those held back since the last one that did. */
static int
log_admit(struct events *ev, int64_t run_id, int64_t *dropped)
{
	struct events_rate *r = NULL, *victim = &ev->rate[0];
	int64_t now = bf_mono_s();
	size_t i;
	int ok;

	pthread_mutex_lock(&ev->mu);
	for (i = 0; i < EVENTS_RATE_SLOTS; i++) {
		if (ev->rate[i].run_id == run_id) {
			r = &ev->rate[i];
			break;
		}
		if (ev->rate[i].used < victim->used)
			victim = &ev->rate[i];
	}
	if (r == NULL) {
		r = victim;
		memset(r, 0, sizeof(*r));
		r->run_id = run_id;
		r->second = now;
	}
	r->used = ++ev->rate_tick;
	if (r->second != now) {
		r->second = now;
		r->count = 0;
	}
	ok = r->count < BF_EVENTS_LOG_RATE;
	if (ok) {
		r->count++;
		*dropped = r->dropped;
		r->dropped = 0;
	} else {
		r->dropped++;
	}
	pthread_mutex_unlock(&ev->mu);
	return ok;
}

void
events_run_job_machine(struct events *ev, int64_t run_id, int64_t job_id, const char *machine)
{
	events_run(ev, run_id);
	events_job(ev, job_id);
	events_machine(ev, machine);
}

void
events_log(struct events *ev, int64_t run_id, const char *stream, const char *line)
{
	char *clean = NULL;
	int64_t dropped = 0;
	json_t *o;

	if (ev == NULL || stream == NULL || line == NULL || !log_admit(ev, run_id, &dropped))
		return;
	if ((clean = utf8_clean(line, BF_MAX_LOG_LINE)) == NULL)
		return;
	/* "at" as GET /runs/{id}/log has it: a page shows the same time for
	 * a line it saw live and one it read from the store */
	o = json_pack("{s:I,s:s,s:s,s:f}", "run", (json_int_t)run_id, "stream", stream, "line",
	    clean, "at", bf_wall());
	if (o != NULL && dropped > 0 &&
	    json_object_set_new(o, "dropped", json_integer((json_int_t)dropped)) != 0) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL)
		events_publish(ev, "log", o);
	free(clean);
}

uint64_t
events_last_id(struct events *ev)
{
	uint64_t id;

	if (ev == NULL)
		return 0;
	pthread_mutex_lock(&ev->mu);
	id = ev->next - 1;
	pthread_mutex_unlock(&ev->mu);
	return id;
}

void
events_recs_clear(struct events_rec *r, size_t n)
{
	size_t i;

	for (i = 0; r != NULL && i < n; i++) {
		free(r[i].data);
		r[i].data = NULL;
	}
}

int
events_wait(struct events *ev, uint64_t after, int timeout_ms, const atomic_int *cancel,
    struct events_rec *out, size_t max)
{
	struct timespec dl;
	uint64_t oldest, id;
	size_t n = 0;
	int r = 0;

	if (ev == NULL)
		return 0;
	bf_abstime(CLOCK_MONOTONIC, timeout_ms, &dl);
	pthread_mutex_lock(&ev->mu);
	ev->waiters++;
	for (;;) {
		oldest = ev->next - ev->base > BF_EVENTS_RING ? ev->next - BF_EVENTS_RING :
		    ev->base;
		if (after + 1 < oldest || after >= ev->next) {
			r = BF_ERR_NOTFOUND;
			break;
		}
		if (after + 1 < ev->next || ev->closing ||
		    (cancel != NULL && atomic_load(cancel)))
			break;
		if (pthread_cond_timedwait(&ev->cv, &ev->mu, &dl) != 0)
			break;
	}
	for (id = after + 1; r == 0 && !ev->closing && id < ev->next && n < max; id++) {
		struct events_ent *e = &ev->ring[id % BF_EVENTS_RING];

		if ((out[n].data = strdup(e->data)) == NULL)
			break;
		out[n].id = e->id;
		memcpy(out[n].type, e->type, sizeof(out[n].type));
		n++;
	}
	if (--ev->waiters == 0 && ev->closing)
		pthread_cond_broadcast(&ev->gone);
	pthread_mutex_unlock(&ev->mu);
	return r != 0 ? r : (int)n;
}

void
events_wake(struct events *ev)
{
	if (ev == NULL)
		return;
	pthread_mutex_lock(&ev->mu);
	pthread_cond_broadcast(&ev->cv);
	pthread_mutex_unlock(&ev->mu);
}
