/*
 * runner_fixture.h: the recording runner_sink of coord_test_runner*.c and
 * coord_test_kdispatch.c. It counts and keeps what a step streams (log
 * lines, samples, hello, knobs, machine states, boot keys, fingerprints,
 * snapshots, artifacts) and can refuse samples or a snapshot, so a test
 * sees what the runner would have written without a store. Static: one
 * test program includes it.
 */
#ifndef BF_RUNNER_FIXTURE_H
#define BF_RUNNER_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "runner.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct rec_sink {
	int logs, samples_calls, hellos, knobs, machines, boot_keys, fingerprints, snapshots;
	int artifacts;
	char artifact[256];		/* "name:bytes " of every artifact stored */
	size_t samples;
	int refuse_samples;		/* answer BF_ERR_IO from this call on (1-based) */
	int refuse_snapshot;		/* answer BF_ERR_STATE */
	char snapshot[256];		/* the last snapshot text */
	char names[2048];		/* "iteration:metric=unit " of every sample */
	char finals[128];		/* "iteration:n " of every call said final */
	char logs_all[2048];		/* every log line, "|"-separated */
	int iterations[16];
	char last_machine_state[32];
	char boot_key[128];
	char last_log[512];
};

static void
rs_log(void *arg, int64_t run_id, const char *stream, const char *line)
{
	struct rec_sink *r = arg;

	(void)run_id;
	(void)stream;
	r->logs++;
	snprintf(r->last_log, sizeof(r->last_log), "%s", line);
	if (strlen(r->logs_all) + strlen(line) + 2 < sizeof(r->logs_all)) {
		strcat(r->logs_all, line);
		strcat(r->logs_all, "|");
	}
}

static int
rs_samples(void *arg, const struct store_claim *c, int iteration,
    const struct store_sample *s, size_t n, int final, char *why, size_t whysz)
{
	struct rec_sink *r = arg;

	size_t i, used;

	(void)c;
	r->samples_calls++;
	if (final) {
		used = strlen(r->finals);
		snprintf(r->finals + used, sizeof(r->finals) - used, "%d:%zu ", iteration, n);
	}
	if (r->refuse_samples > 0 && r->samples_calls >= r->refuse_samples) {
		snprintf(why, whysz, "the store is away");
		return BF_ERR_IO;
	}
	if (iteration >= 0 && iteration < 16)
		r->iterations[iteration]++;
	r->samples += n;
	for (i = 0; i < n; i++) {
		used = strlen(r->names);
		snprintf(r->names + used, sizeof(r->names) - used, "%d:%s=%s ", iteration,
		    s[i].metric, s[i].unit ? s[i].unit : "");
	}
	return 0;
}

static int
rs_snapshot(void *arg, int64_t run_id, const char *text, char *why, size_t whysz)
{
	struct rec_sink *r = arg;

	(void)run_id;
	r->snapshots++;
	if (r->refuse_snapshot) {
		snprintf(why, whysz, "the run is no longer this coordinator's");
		return BF_ERR_STATE;
	}
	snprintf(r->snapshot, sizeof(r->snapshot), "%s", text);
	return 0;
}

static void
rs_hello(void *arg, int64_t run_id, const char *h, const char *k, const char *a,
    const char *b, const char *cl)
{
	(void)run_id;
	(void)h;
	(void)k;
	(void)a;
	(void)b;
	(void)cl;
	((struct rec_sink *)arg)->hellos++;
}

static void
rs_knobs(void *arg, int64_t run_id, const char *text)
{
	(void)run_id;
	(void)text;
	((struct rec_sink *)arg)->knobs++;
}

static void
rs_machine(void *arg, const char *state, const char *kernel, const char *error, int seen)
{
	struct rec_sink *r = arg;

	(void)kernel;
	(void)error;
	(void)seen;
	r->machines++;
	if (state != NULL)
		snprintf(r->last_machine_state, sizeof(r->last_machine_state), "%s", state);
}

static void
rs_boot_key(void *arg, const char *key)
{
	struct rec_sink *r = arg;

	r->boot_keys++;
	snprintf(r->boot_key, sizeof(r->boot_key), "%s", key ? key : "");
}

static int
rs_fingerprint(void *arg, const char *text, const char *sha)
{
	(void)text;
	(void)sha;
	((struct rec_sink *)arg)->fingerprints++;
	return 0;
}

static int
rs_artifact(void *arg, int64_t run_id, const char *name, const char *event, const void *p,
    size_t n, char *why, size_t whysz)
{
	struct rec_sink *r = arg;
	size_t used = strlen(r->artifact);

	(void)run_id;
	(void)why;
	(void)whysz;
	r->artifacts++;
	snprintf(r->artifact + used, sizeof(r->artifact) - used, "%s@%s:%.*s ", name,
	    event != NULL ? event : "-", (int)(n < 32 ? n : 32), (const char *)p);
	return 0;
}

static const struct runner_sink_ops rec_ops = {
	.log = rs_log,
	.samples = rs_samples,
	.hello = rs_hello,
	.knobs = rs_knobs,
	.snapshot = rs_snapshot,
	.machine = rs_machine,
	.boot_key = rs_boot_key,
	.fingerprint = rs_fingerprint,
	.artifact = rs_artifact,
};

#endif
