/*
 * sched.h: the scheduler. One worker thread per registered machine claims
 * runs from the store (a machine runs one run at a time), executes them over
 * SSH through the agent, and ingests the agent's JSON lines into the store.
 * A manager thread keeps the set of workers equal to the set of machines.
 * The store is the only shared state: the scheduler may be killed at any
 * moment and store_recover() at the next start re-queues what was running.
 */
#ifndef BF_SCHED_H
#define BF_SCHED_H

#include "err.h"
#include "events.h"
#include "recipes.h"
#include "store.h"
#include "kstore.h"
#include "transport.h"

struct sched_config {
	const char *known_hosts;	/* pinned host keys */
	const char *agent_local;	/* benchfleet-agent for this host's architecture */
	const char *agent_aarch64;	/* the aarch64 build, or NULL */
	const char *agent_remote;	/* where it lives on a machine, relative to ~ */
	int lease_s;			/* run lease, renewed while running */
	int connect_timeout_ms;
	int probe_interval_s;		/* health probe of an idle machine; retry of an offline one */
	int probe_failures;		/* consecutive failed probes that make a machine offline */
	int max_attempts;		/* a run lost with its machine is tried this many times */
	int link_timeout_ms;		/* SSH silence (keepalives count) taken as a dead link */
	int boot_failures;		/* boot failures in a row that quarantine a machine */
	struct events *ev;		/* state changes are published here; may be NULL */
	const struct recipes *recipes;	/* installed recipes (runner_env.recipes) */
	const char *workdir_root;	/* --workdir-root, sent with path parameters (borrowed) */
	/* How workers reach machines: NULL is SSH (transport_ssh_connect);
	 * the unit tests put the fake transport here. */
	transport_connect_fn connect;
	void *connect_arg;
	/* Kernels built for runs (kdispatch.h): their artifact directory
	 * (NULL: a run needing one fails saying so) and the builders' work
	 * directory (NULL: KDISPATCH_DIR). */
	struct kstore *ks;
	const char *kbuild_dir;
	/* Is host:port's SSH port answering (0 yes)? How dormant offline
	 * machines are tried (sched-dormant.c): NULL is a TCP connect with
	 * the SSH transport; with a connect above and no reach, offline
	 * machines keep their worker threads. Called with connect_arg. */
	int (*reach)(void *arg, const char *host, int port);
	/* 1: no bisection driver (bisect.h): unit tests that drive it
	 * themselves, or that want no thread reading bisections */
	int no_bisect;
};

/* What the scheduler holds: worker threads, offline machines without one,
 * TCP tries of those and workers started from them since the start. */
struct sched_stats {
	size_t workers, dormant;
	size_t ready;			/* idle workers waiting for the manager's claim */
	uint64_t probed, woken;
	uint64_t batch_claims;		/* claims the manager made for idle workers */
	uint64_t reconciles;		/* reads of the machine list */
	uint64_t prober_passes;		/* the prober's looks at the offline list */
};

struct sched;

int sched_start(const struct sched_config *cfg, struct store *st, struct sched **out,
    struct bf_diag *d);
/* New work (a job, a run, a bisection step): the manager claims for the
 * idle machines now. */
void sched_kick(struct sched *s);
/* The machine list changed (added, edited, cleared, deleted): the manager
 * reads it again (at most every SCHED_RECONCILE_MIN_MS) and the workers
 * look at their rows. A kick about work does not read the list: a lab of
 * 10,000 machines would pay for it on every job. */
void sched_kick_machines(struct sched *s);
/* Fingerprint the machine again at its next idle moment. BF_ERR_NOTFOUND
 * when no worker serves that name. */
int sched_probe(struct sched *s, const char *name);
/*
 * Stop and join every thread. Workers still inside a step after a 3 s grace
 * are abandoned: the call returns their number, the scheduler is left
 * allocated, and the caller must not close the store but exit the process.
 * Their runs stay running in the store and store_recover() re-queues them
 * at the next start, exactly as after a kill -9. Accepts NULL.
 */
int sched_stop(struct sched *s);
void sched_stats(struct sched *s, struct sched_stats *out);

#endif
