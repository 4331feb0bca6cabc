/*
 * sched-int.h: the scheduler's state, shared by sched.c (the manager and
 * the worker state machine) and sched-sink.c (where a step's streamed
 * results go). Not for the rest of the coordinator: sched.h is the API.
 *
 * Locks: s->mu guards what says "under s->mu" and the condition s->cv;
 * a worker_ctx belongs to its worker thread alone.
 */
#ifndef BF_SCHED_INT_H
#define BF_SCHED_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "runner.h"
#include "sched.h"
#include "store.h"
#include "transport.h"

/* checksrc: prefix sched_ */

#define SCHED_RECONCILE_S	5	/* the manager re-reads the machine list at least this often */

struct worker {
	struct sched *s;
	char *name;
	pthread_t th;
	int started;
	int stop;		/* under s->mu */
	int exited;		/* under s->mu */
	int64_t current_run;	/* under s->mu; 0 when idle */
	atomic_int lease_lost;	/* the store gave current_run to another coordinator */
	int probe_wanted;	/* under s->mu: fingerprint again when idle */
	struct worker *next;
};

struct sched {
	struct sched_config cfg;
	char *known_hosts, *agent_remote;
	struct runner_agent agents[2];
	char *agent_paths[2];
	size_t nagents;
	char *native_arch;
	struct store *st;
	transport_connect_fn connect;	/* cfg.connect, or the SSH backend */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t gen;		/* bumped by every kick */
	int stopping;
	pthread_t manager;
	int manager_started;
	struct worker *workers;
};

enum worker_state {
	WS_REFRESH,
	WS_CONNECT,
	WS_FINGERPRINT,
	WS_CLAIM,
	WS_RUN,
	WS_WAIT,
	WS_EXIT,
};

enum worker_timer_id {
	WT_CONNECT,
	WT_HEALTH,
	WT_FINGERPRINT,
	WT_COUNT,
};

struct worker_timer {
	const char *name;
	time_t last;		/* when it last fired */
};

struct worker_ctx {
	struct worker *w;
	struct sched *s;
	struct store_machine *m;	/* this pass's row */
	struct store_claim *c;		/* the claim in hand (CLAIM -> RUN) */
	struct transport *tr;		/* NULL: no link */
	struct runner_env env;
	int agent_ok;			/* the agent on the link is ours */
	int fails;			/* connection failures in a row */
	int boot_fails;			/* boot failures in a row */
	int store_warned;		/* a streamed write failed (said once per run) */
	uint64_t gen;
	time_t now;
	uint32_t seed;			/* retry_delay()'s jitter */
	time_t sleep_until;		/* WAIT: back-off of a link-less worker, or 0 */
	struct worker_timer timer[WT_COUNT];
};
/* Say a store write that failed on stderr, once per run (sched-sink.c). */
void sched_store_check(struct worker_ctx *x, int r, int64_t run_id, const char *what);
/* The worker's sink: the step's results into the store as they arrive. */
extern const struct runner_sink_ops sched_sink_ops;

#endif
