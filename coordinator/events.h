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
 *             "hostname","error"}
 *   job      {"id","recipe","name","state","runs_total","runs_done","runs_failed",
 *             "runs_running","runs_queued","eta_s"}   eta_s: null or seconds,
 *             from the mean duration of the job's finished runs and the
 *             number of machines running it
 *   log      {"run","stream","line"}   at most BF_EVENTS_LOG_RATE per run per
 *             second; the excess is counted in the next one as "dropped"
 *
 * Every function is thread-safe and accepts a NULL hub (then does nothing),
 * so callers need no checks.
 */
#ifndef BF_EVENTS_H
#define BF_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "err.h"
#include "store.h"

#define BF_EVENTS_RING		4096	/* events kept for resuming clients */
#define BF_EVENTS_LOG_RATE	20	/* log events per run per second */

struct events;

int events_new(struct store *st, struct events **out);
/* Wakes every waiter; accepts NULL. */
void events_free(struct events *ev);

/* Publish data (stolen) as an event of type; returns its id (0 on error). */
uint64_t events_publish(struct events *ev, const char *type, json_t *data);

/* Read the current state from the store and publish it. */
void events_machine(struct events *ev, const char *name);
void events_run(struct events *ev, int64_t run_id);
void events_job(struct events *ev, int64_t job_id);
void events_log(struct events *ev, int64_t run_id, const char *stream, const char *line);

#endif
