/*
 * events.h: the coordinator's event hub, behind GET /api/v1/events (Server-
 * Sent Events). State changes are published here right after the store has
 * committed them; subscribers read by event id, so a client reconnecting
 * with Last-Event-ID resumes where it left off (as long as the ring still
 * holds that id; otherwise it is told to reload).
 *
 * Event types and their data (JSON objects):
 *   machine  {"name","class","state","hostname","kernel","last_error","last_seen"}
 *   run      {"id","job_id","cell_index","label","boot","state","machine",
 *             "hostname","error","started_at","finished_at"}   (unix seconds
 *             or null)
 *   job      {"id","recipe","name","state","runs_total","runs_done","runs_failed",
 *             "runs_running","runs_queued","eta_s"}   eta_s: null or seconds,
 *             from the mean duration of the job's finished runs and the
 *             number of machines running it
 *   bisection  GET /bisections/{id}'s object without spec and steps
 *             (bisect-view.c), on every change of the bisection
 *   log      {"run","stream","line","at"}   at (unix seconds, fractional)
 *             is when the coordinator saw the line; at most BF_EVENTS_LOG_RATE per run per
 *             second; the excess is counted in the next one as "dropped"
 *
 * Every function is thread-safe and accepts a NULL hub (then does nothing),
 * so callers need no checks.
 */
#ifndef BF_EVENTS_H
#define BF_EVENTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "err.h"
#include "store.h"

#define BF_EVENTS_RING		4096	/* events kept for resuming clients */
#define BF_EVENTS_LOG_RATE	20	/* log events per run per second */

struct events;

int events_new(struct store *st, struct events **out);
/*
 * The hub of privsep's monitor (monitor.h): no ring and no LISTEN relay;
 * every event published is serialized and handed to fwd (which must not
 * block), besides the NOTIFY of a shared store. The API child's hub gets
 * them with events_inject.
 */
typedef void (*events_fwd_fn)(void *arg, const char *type, const char *json);
int events_new_forward(struct store *st, events_fwd_fn fwd, void *fwd_arg,
    struct events **out);
/* Wakes every waiter; accepts NULL. */
void events_free(struct events *ev);

/* Publish data (stolen) as an event of type; returns its id (0 on error). */
uint64_t events_publish(struct events *ev, const char *type, json_t *data);

/* Publish an event another process serialized (the monitor's: a JSON
 * object of len bytes, no control bytes): into this hub only, no NOTIFY.
 * Returns its id, 0 when refused. */
uint64_t events_inject(struct events *ev, const char *type, const char *json, size_t len);

/* Read the current state from the store and publish it. */
void events_machine(struct events *ev, const char *name);
void events_run(struct events *ev, int64_t run_id);
void events_job(struct events *ev, int64_t job_id);
/* A run, its job and its machine: what a run's start changed. */
void events_run_job_machine(struct events *ev, int64_t run_id, int64_t job_id,
    const char *machine);
void events_log(struct events *ev, int64_t run_id, const char *stream, const char *line);

/* --- for subscribers (api-events.c) --- */

/* One event as a subscriber reads it back. */
struct events_rec {
	uint64_t id;
	char type[16];
	char *data;		/* compact JSON on one line; owned, see events_recs_clear */
};

/* The newest event's id: a new subscriber starts after it. Ids only grow,
 * also across restarts of the daemon (they start at unix time << 20). */
uint64_t events_last_id(struct events *ev);
/*
 * Copy up to max events with an id above after into out, oldest first,
 * waiting up to timeout_ms for the first one. Returns how many (0 on
 * timeout, when *cancel (may be NULL) is set, or when the hub is freed),
 * or BF_ERR_NOTFOUND when after cannot be resumed from (the events after
 * it have left the ring, or the id is not one of this daemon's): the
 * subscriber must reload its state and go on from events_last_id().
 * The caller frees the copies with events_recs_clear(out, n). With max 0
 * and timeout 0 it only checks whether after can be resumed from.
 */
int events_wait(struct events *ev, uint64_t after, int timeout_ms, const atomic_int *cancel,
    struct events_rec *out, size_t max);
void events_recs_clear(struct events_rec *r, size_t n);
/* Wake every waiter, so that it sees its cancel flag (set it first). */
void events_wake(struct events *ev);

#endif
