/*
 * sched-sink.c: the worker's runner_sink. What a step streams (log lines,
 * samples, the hello, knobs, snapshot, artifacts, machine state) goes to
 * the store as it arrives, on the worker's own thread; a failed write is
 * said once per run. One exception: the hello is held until the next line,
 * and when that is the snapshot (as in every step) both are one commit.
 * Nothing depends on the hello before then, and a coordinator that dies
 * holding it leaves a run that is retried whole, hello included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "sched-int.h"

/* BF_ERR_STATE is no failure: the run was taken over by another
 * coordinator or has ended. */
void
sched_store_check(struct worker_ctx *x, int r, int64_t run_id, const char *what)
{
	if (r == 0 || r == BF_ERR_STATE || x->store_warned)
		return;
	x->store_warned = 1;
	fprintf(stderr, "benchfleetd: %s, run %lld: %s: %s (%s)\n", x->w->name,
	    (long long)run_id, what, bf_err_str(r), store_last_error());
}

/* --- the sink: what a step streams goes to the store as it arrives --- */

static void
hello_drop(struct worker_ctx *x)
{
	size_t i;

	for (i = 0; i < sizeof(x->hello) / sizeof(x->hello[0]); i++) {
		free(x->hello[i]);
		x->hello[i] = NULL;
	}
	x->hello_run = 0;
}

/* The held hello's own write, with the snapshot text when not NULL (then
 * its result is the snapshot's: see store_run_hello_snapshot). */
static int
hello_write(struct worker_ctx *x, const char *snapshot, char sha[65])
{
	int64_t run_id = x->hello_run;
	int r, sn_err = 0;

	r = store_run_hello_snapshot(x->s->st, run_id, x->w->name, x->hello[0], x->hello[1],
	    x->hello[2], x->hello[3], x->hello[4], snapshot, sha, &sn_err);
	hello_drop(x);
	sched_store_check(x, r, run_id, snapshot != NULL ? "storing the agent's hello and "
	    "snapshot" : "storing the agent's hello");
	events_run(x->s->cfg.ev, run_id);
	events_machine(x->s->cfg.ev, x->w->name);
	return sn_err ? r : 0;
}

void
sched_sink_flush(struct worker_ctx *x)
{
	if (x->hello_run != 0)
		(void)hello_write(x, NULL, NULL);
}

static void
wsink_log(void *arg, int64_t run_id, const char *stream, const char *line)
{
	struct worker_ctx *x = arg;

	sched_sink_flush(x);
	sched_store_check(x, store_run_log_add(x->s->st, run_id, stream, line), run_id,
	    "storing a log line");
}

static int
wsink_samples(void *arg, const struct store_claim *c, int iteration,
    const struct store_sample *s, size_t n, char *why, size_t whysz)
{
	struct worker_ctx *x = arg;
	int r;

	sched_sink_flush(x);
	if ((r = store_samples_add(x->s->st, c->run_id, c->boot, iteration, s, n)) != 0)
		snprintf(why, whysz, "%s", r == BF_ERR_STATE ?
		    "the run is no longer this coordinator's" : store_last_error());
	return r;
}

static void
wsink_hello(void *arg, int64_t run_id, const char *hostname, const char *kernel,
    const char *arch, const char *boot_id, const char *cmdline)
{
	struct worker_ctx *x = arg;
	const char *v[5] = { hostname, kernel, arch, boot_id, cmdline };
	size_t i;

	sched_sink_flush(x);
	x->hello_run = run_id;
	for (i = 0; i < 5; i++)
		if (v[i] != NULL && (x->hello[i] = strdup(v[i])) == NULL) {
			/* no room to hold it: written now, as it came */
			hello_drop(x);
			sched_store_check(x, store_run_hello(x->s->st, run_id, x->w->name,
			    hostname, kernel, arch, boot_id, cmdline), run_id,
			    "storing the agent's hello");
			events_run(x->s->cfg.ev, run_id);
			events_machine(x->s->cfg.ev, x->w->name);
			return;
		}
}

static void
wsink_knobs(void *arg, int64_t run_id, const char *json_text)
{
	struct worker_ctx *x = arg;

	sched_sink_flush(x);
	sched_store_check(x, store_run_set_knobs(x->s->st, run_id, json_text), run_id,
	    "storing the knobs");
}

static int
wsink_snapshot(void *arg, int64_t run_id, const char *json_text, char *why, size_t whysz)
{
	struct worker_ctx *x = arg;
	char sha[65];
	int r;

	if (x->hello_run == run_id)
		r = hello_write(x, json_text, sha);
	else {
		sched_sink_flush(x);
		r = store_run_set_snapshot(x->s->st, run_id, json_text, sha);
	}
	if (r != 0)
		snprintf(why, whysz, "the environment snapshot: %s", r == BF_ERR_STATE ?
		    "the run is no longer this coordinator's" : store_last_error());
	return r;
}

static int
wsink_artifact(void *arg, int64_t run_id, const char *name, const char *event, const void *p,
    size_t n, char *why, size_t whysz)
{
	struct worker_ctx *x = arg;
	char sha[65];
	int r;

	sched_sink_flush(x);
	if ((r = store_run_add_artifact(x->s->st, run_id, name, event, p, n, sha)) != 0)
		snprintf(why, whysz, "the profile's %s: %s", name, r == BF_ERR_STATE ?
		    "the run is no longer this coordinator's" : store_last_error());
	return r;
}

static void
wsink_machine(void *arg, const char *state, const char *kernel, const char *error, int seen)
{
	struct worker_ctx *x = arg;

	sched_sink_flush(x);
	sched_store_check(x, store_machine_update(x->s->st, x->w->name, state, NULL, kernel,
	    NULL, error, seen), x->c != NULL ? x->c->run_id : 0, "updating the machine");
}

static void
wsink_boot_key(void *arg, const char *key)
{
	struct worker_ctx *x = arg;

	sched_sink_flush(x);
	sched_store_check(x, store_machine_set_boot_key(x->s->st, x->w->name, key),
	    x->c != NULL ? x->c->run_id : 0, "storing the boot key");
}

static int
wsink_fingerprint(void *arg, const char *json_text, const char *sha256)
{
	struct worker_ctx *x = arg;

	sched_sink_flush(x);
	return store_machine_set_fingerprint(x->s->st, x->w->name, json_text, sha256);
}

const struct runner_sink_ops sched_sink_ops = {
	.log = wsink_log,
	.samples = wsink_samples,
	.hello = wsink_hello,
	.knobs = wsink_knobs,
	.snapshot = wsink_snapshot,
	.machine = wsink_machine,
	.boot_key = wsink_boot_key,
	.fingerprint = wsink_fingerprint,
	.artifact = wsink_artifact,
};
