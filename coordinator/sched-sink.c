/*
 * sched-sink.c: the worker's runner_sink. What a step streams (log lines,
 * samples, the hello, knobs, snapshot, artifacts, machine state) goes to
 * the store as it arrives, on the worker's own thread; a failed write is
 * said once per run. Two exceptions, each saving a commit per run:
 *  - the hello is held until the next line, and when that is the snapshot
 *    (as in every step) both are one commit;
 *  - the samples of the run's last measured iteration (its line and its
 *    counters') are held, copied, until the step ends, and the run's
 *    finish writes them in its own transaction (worker_apply), with the
 *    log lines that came after them (the counters' note; at most
 *    STORE_FINISH_LOGS, then they are written as they come, the held ones
 *    first), stamped with the finish's time. So are the samples of an
 *    iteration that ends within SINK_HOLD_MS of the one before (or of the
 *    hello): a run of short iterations commits once, not twice an
 *    iteration while its next iteration runs; a long iteration's samples
 *    are written as they come, so the store is never an iteration of
 *    more than SINK_HOLD_MS behind. At most STORE_FINISH_BATCHES batches
 *    and SINK_HOLD_BYTES are held; past that, and when anything else but
 *    a log line comes, what is held is written in one commit.
 * Nothing depends on either before then, and a coordinator that dies
 * holding them leaves a run that is retried whole. A held write refused
 * once its call has returned 0 is "late": the next call that can fail
 * returns it, and the step's outcome becomes what a refusal on arrival
 * makes of it, a requeue (sched_sink_end, worker_apply).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "events.h"
#include "sched-int.h"

/* A batch is held when its iteration ended within SINK_HOLD_MS of the one
 * before; what is held stays under SINK_HOLD_BYTES a worker. */
#define SINK_HOLD_MS	1000
#define SINK_HOLD_BYTES	(64 * 1024)

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
sched_sink_drop(struct worker_ctx *x)
{
	size_t i;

	for (i = 0; i < x->nheld; i++) {
		free(x->held_mem[i]);
		x->held_mem[i] = NULL;
	}
	x->nheld = 0;
	x->held_bytes = 0;
	x->held_run = 0;
	for (i = 0; i < x->nhlog; i++) {
		free((char *)x->hlog[i].stream);
		free((char *)x->hlog[i].line);
	}
	x->nhlog = 0;
}

/* Hold a log line after the held samples: 0, or -1 when it cannot be. */
static int
hlog_add(struct worker_ctx *x, int64_t run_id, const char *stream, const char *line)
{
	char *st, *ln;

	if (x->nheld == 0 || x->held_run != run_id || x->late_r != 0 ||
	    x->nhlog == STORE_FINISH_LOGS)
		return -1;
	if ((st = strdup(stream)) == NULL || (ln = strdup(line)) == NULL) {
		free(st);
		return -1;
	}
	x->hlog[x->nhlog].stream = st;
	x->hlog[x->nhlog].line = ln;
	x->nhlog++;
	return 0;
}

/* The held log lines, written in one commit (and then forgotten). */
static void
hlog_write(struct worker_ctx *x)
{
	size_t i;

	sched_store_check(x, store_held_add(x->s->st, x->held_run, &(struct store_held){
	    .l = x->hlog, .nl = x->nhlog }), x->held_run, "storing log lines");
	for (i = 0; i < x->nhlog; i++) {
		free((char *)x->hlog[i].stream);
		free((char *)x->hlog[i].line);
	}
	x->nhlog = 0;
}

/* Is a batch of iteration (final: the run's last) to be held? Its
 * iteration's first batch decides for the others. */
static int
held_wanted(struct worker_ctx *x, int iteration, int final)
{
	int64_t now;

	if (iteration == x->last_it)
		return x->last_it_hold || final;
	now = bf_mono_ms();
	x->last_it_hold = final || now - x->last_it_ms < SINK_HOLD_MS;
	x->last_it = iteration;
	x->last_it_ms = now;
	return x->last_it_hold;
}

/* A copy of samples s[0..n) held as the next batch of c's run: 0, or -1
 * when it is not to be held or cannot be (full, another run's, no
 * memory). */
static int
held_add(struct worker_ctx *x, const struct store_claim *c, int iteration,
    const struct store_sample *s, size_t n, int final)
{
	struct store_sample *cp;
	size_t i, len = n * sizeof(*cp), ml, ul;
	char *p;

	if (!held_wanted(x, iteration, final))
		return -1;
	/* n is bounded by the agent's line (BF_MAX_AGENT_LINE) it came in */
	if (x->nheld == STORE_FINISH_BATCHES || (x->nheld > 0 && x->held_run != c->run_id))
		return -1;
	for (i = 0; i < n; i++)
		len += strlen(s[i].metric) + 1 + (s[i].unit != NULL ? strlen(s[i].unit) + 1 : 0);
	if (x->held_bytes + len > SINK_HOLD_BYTES || (cp = malloc(len > 0 ? len : 1)) == NULL)
		return -1;
	p = (char *)(cp + n);
	for (i = 0; i < n; i++) {
		cp[i].value = s[i].value;
		ml = strlen(s[i].metric) + 1;
		cp[i].metric = memcpy(p, s[i].metric, ml);
		p += ml;
		cp[i].unit = NULL;
		if (s[i].unit != NULL) {
			ul = strlen(s[i].unit) + 1;
			cp[i].unit = memcpy(p, s[i].unit, ul);
			p += ul;
		}
	}
	x->held_mem[x->nheld] = cp;
	x->held[x->nheld] = (struct store_batch){ .boot = c->boot, .iteration = iteration,
	    .samples = cp, .n = n };
	x->nheld++;
	x->held_bytes += len;
	x->held_run = c->run_id;
	return 0;
}

/* A write that failed after its call returned 0: kept for the outcome. */
static void
late_note(struct worker_ctx *x, int r)
{
	if (r == 0 || x->late_r != 0)
		return;
	x->late_r = r;
	snprintf(x->late_why, sizeof(x->late_why), "%s", r == BF_ERR_STATE ?
	    "the run is no longer this coordinator's" : store_last_error());
}

/* The held samples and the log lines held after them, in one commit. */
static void
held_write(struct worker_ctx *x)
{
	if (x->late_r == 0)
		late_note(x, store_held_add(x->s->st, x->held_run, &(struct store_held){
		    .b = x->held, .nb = x->nheld, .l = x->hlog, .nl = x->nhlog }));
	sched_sink_drop(x);
}

void
sched_sink_flush(struct worker_ctx *x)
{
	if (x->hello_run != 0)
		(void)hello_write(x, NULL, NULL);
	if (x->nheld > 0)
		held_write(x);
}

/* After a flush, in a call that can fail: the late error, if any. */
static int
late_take(struct worker_ctx *x, char *why, size_t whysz)
{
	if (x->late_r != 0)
		snprintf(why, whysz, "%s", x->late_why);
	return x->late_r;
}

void
sched_sink_end(struct worker_ctx *x, const struct store_claim *c, struct run_outcome *o)
{
	if (x->hello_run != 0)
		(void)hello_write(x, NULL, NULL);
	if (o->action != RUN_FINISH && x->nheld > 0)
		held_write(x);
	if (x->late_r != 0)
		sched_sink_drop(x);	/* the requeue drops the run's samples */
	if (x->late_r != 0 && o->action != RUN_REQUEUE) {
		o->action = RUN_REQUEUE;
		o->state = NULL;
		o->exit_status = -1;
		snprintf(o->message, sizeof(o->message), "attempt %d on %s: storing a result "
		    "failed: %s", c->attempt, x->w->name, x->late_why);
	}
	x->late_r = 0;
}

static void
wsink_log(void *arg, int64_t run_id, const char *stream, const char *line)
{
	struct worker_ctx *x = arg;

	/* the held samples stay held: a log line does not depend on them, and
	 * the counters' notes come between the last iteration's two lines;
	 * after them, a line waits for the same commit while there is room */
	if (x->hello_run != 0)
		(void)hello_write(x, NULL, NULL);
	if (hlog_add(x, run_id, stream, line) == 0)
		return;
	if (x->nhlog > 0 && x->held_run == run_id)
		hlog_write(x);	/* full: the held lines first, in order */
	sched_store_check(x, store_run_log_add(x->s->st, run_id, stream, line), run_id,
	    "storing a log line");
}

static int
wsink_samples(void *arg, const struct store_claim *c, int iteration,
    const struct store_sample *s, size_t n, int final, char *why, size_t whysz)
{
	struct worker_ctx *x = arg;
	int r;

	if (x->hello_run != 0)
		(void)hello_write(x, NULL, NULL);
	if (x->late_r == 0 && held_add(x, c, iteration, s, n, final) == 0)
		return 0;
	sched_sink_flush(x);
	if ((r = late_take(x, why, whysz)) != 0)
		return r;
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
	/* the step begins: its first iteration is short if it ends soon */
	x->last_it = -1;
	x->last_it_hold = 0;
	x->last_it_ms = bf_mono_ms();
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

	if (x->hello_run == run_id && x->nheld == 0)
		r = hello_write(x, json_text, sha);
	else {
		sched_sink_flush(x);
		if ((r = late_take(x, why, whysz)) != 0)
			return r;
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
	if ((r = late_take(x, why, whysz)) != 0)
		return r;
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
