/*
 * runner.h: execute one claimed run on one machine: load the claim (its
 * job's spec parsed once, checked and planned), build the step from the
 * run's plan (plan_step), make sure the agent on the machine is ours
 * (sha256), exec it over a transport, and hand what it produced to the
 * scheduler.
 *
 * The runner never writes the store. What arrives while a step runs
 * (samples, log lines, the agent's hello) goes through a sink the scheduler
 * provides, as it arrives, so a killed coordinator loses no streamed sample;
 * how the run ends is returned as a struct run_outcome, which the scheduler
 * applies in one place (sched.c: worker_apply).
 */
#ifndef BF_RUNNER_H
#define BF_RUNNER_H

#include <jansson.h>

#include "err.h"
#include "events.h"
#include "job.h"
#include "plan.h"
#include "recipe.h"
#include "recipes.h"
#include "store.h"
#include "transport.h"

/*
 * Where a run's streamed results go (sched.c writes them to the store).
 * Every callback is on the worker's thread. samples returns 0 or the
 * store's error, with why (NUL-terminated, whysz > 0) saying it for a person.
 * final: these are the run's last measured iteration's (its own line or its
 * counters), after which only the step's end comes; the sink may then hold
 * them (copied) to write with the run's finish, and a write that fails later
 * is the finish's to handle (sched-sink.c).
 */
struct runner_sink_ops {
	void (*log)(void *arg, int64_t run_id, const char *stream, const char *line);
	int (*samples)(void *arg, const struct store_claim *c, int iteration,
	    const struct store_sample *s, size_t n, int final, char *why, size_t whysz);
	/* the agent's hello: where the run is measured. The sink publishes
	 * the run's and the machine's events once the hello is in the store
	 * (the runner publishes the job's, whose counts the claim moved) */
	void (*hello)(void *arg, int64_t run_id, const char *hostname, const char *kernel,
	    const char *arch, const char *boot_id, const char *cmdline);
	void (*knobs)(void *arg, int64_t run_id, const char *json_text);
	/* the step's environment (the agent's snapshot object, canonical JSON
	 * text): 0 or the store's error, with why, as samples */
	int (*snapshot)(void *arg, int64_t run_id, const char *json_text, char *why,
	    size_t whysz);
	/* the machine's row: state and error NULL leave them; seen stamps it */
	void (*machine)(void *arg, const char *state, const char *kernel, const char *error,
	    int seen);
	void (*boot_key)(void *arg, const char *key);	/* NULL: unknown */
	int (*fingerprint)(void *arg, const char *json_text, const char *sha256);
	/* a profile's artifact, complete and checked (artifact.h), and the
	 * perf event it was sampled on (NULL: not said): 0 or the store's
	 * error, with why, as samples */
	int (*artifact)(void *arg, int64_t run_id, const char *name, const char *event,
	    const void *p, size_t n, char *why, size_t whysz);
};

struct runner_sink {
	const struct runner_sink_ops *ops;
	void *arg;
};

/* What the scheduler does with the run once the runner is through. */
enum run_action {
	RUN_PROCEED = 0,	/* runner_boot only: the machine is ready, execute */
	RUN_FINISH,		/* end the run in .state */
	RUN_RETRY,		/* the link was lost: queued again while attempts remain */
	RUN_REQUEUE,		/* not the run's fault (a store outage): queued again
				 * without using up an attempt */
	RUN_QUARANTINE,		/* the boot failed: finish boot-failed, and count it
				 * towards the machine's quarantine */
};

/* The adaptive add-a-boot question, answered inside the finishing
 * transaction of the store (store_run_finish_adaptive). */
struct runner_adaptive {
	double target_ci_pct;
	int max_boots;
	char metric[128];
	char note[256];		/* the decision, for the run log; "" if none */
};

struct run_outcome {
	enum run_action action;
	const char *state;		/* RUN_FINISH: done | failed | boot-failed (static) */
	int exit_status;
	char message[BF_DIAG_MSG + 128];	/* the run's error; "" for none */
	int link_lost;			/* the machine is gone: drop the link */
	const char *machine_state;	/* the machine's state after it (NULL: leave) */
	const char *machine_error;	/* its last_error (NULL: leave); points into message
					 * or is static */
	int adaptive;			/* decide add-a-boot while finishing done */
	struct runner_adaptive ad;
	/* what ingest produced */
	int hello_seen, done_seen, iterations_seen, samples_stored;
	int snapshot_seen, counters_stored;	/* counters: samples of counters lines */
	int artifacts_stored;			/* of the profiled iteration */
};

/* One agent binary per machine architecture (uname -m). */
struct runner_agent {
	const char *arch;		/* "x86_64", "aarch64" */
	const char *path;		/* on this host */
	char sha256[65];
};

struct runner_env {
	struct store *st;		/* read only, by recipes_installed() */
	struct runner_sink sink;
	const char *machine;
	const struct runner_agent *agents;
	size_t nagents;
	const char *agent_remote;
	int lease_s;
	int max_attempts;		/* a lost run is retried until this many */
	int link_timeout_ms;		/* silence (keepalives count) = dead link */
	int sudo;			/* the lab user is not root: agent via sudo -n */
	struct events *ev;		/* may be NULL */
	/* The recipe directory: with the store's imported recipes, what may
	 * run (runner_execute refuses anything else). NULL: imported only. */
	const struct recipes *recipes;
	const char *workdir_root;	/* path parameters must stay under it */
};

/*
 * A claim as the run uses it: the job's stored spec parsed once, its job
 * and recipe typed, the run's cell values and knobs, and the run's plan
 * (iterations, warm-up, timeout, claim rank: plan.h).
 */
struct runner_claim {
	const struct store_claim *c;	/* borrowed: must outlive this */
	json_t *spec;			/* {"job": ..., "recipe": ...}, or a suite's
					 * {"job": ..., "recipes": [...]} */
	const json_t *recipe_json;	/* inside spec: what recipes_installed checks */
	struct job_spec *job;		/* the job; a suite's: the run's entry's (in suite) */
	struct recipe *recipe;		/* the job's recipe, as run; a suite's: in recs */
	struct job_spec *suite;		/* a suite job (owned), or NULL */
	struct recipe **recs;		/* a suite's recipes by entry (owned), or NULL */
	size_t nrecs;
	json_t *values;			/* every parameter's value */
	json_t *knobs;			/* requested knobs, or NULL */
	struct plan_run run;
	/* The kernel built for this run (kdispatch.h), installed on the
	 * machine, booted in place of the claim's kernel name; NULL: the
	 * claim's kernel is an installed one. Set by the scheduler. */
	const struct boot_kernel *built;
};

/*
 * Before a claim runs: the run row may have been written by anything that
 * can write the store (privsep's API child included), so parse its job and
 * recipe (once, for the whole run) with the validators of POST /jobs, plan
 * it, and require the run's values, knobs, kernel and cmdline to be one of
 * its cells and its boot one of its boots. BF_ERR_INVALID (d says why) when
 * they are not. *out freed with runner_claim_free().
 */
int runner_claim_load(const struct store_claim *c, const char *workdir_root,
    struct runner_claim **out, struct bf_diag *d);
void runner_claim_free(struct runner_claim *rc);	/* accepts NULL */

/* The agent's command on the machine (shquote()d; with sudo -n when
 * env->sudo), into cmd, for a subcommand to be appended. */
int runner_agent_cmd(const struct runner_env *env, struct buf *cmd);

/* Upload the agent when the machine's copy differs from ours. *agent_ok
 * caches the answer for the life of the link. */
int runner_ensure_agent(const struct runner_env *env, struct transport *tr, int *agent_ok,
    struct bf_diag *d);

/*
 * Put the machine into the boot the claim needs: its kernel, its command
 * line, and a fresh boot per boot repetition (repetitions.boots). A
 * machine without a boot configuration runs requests for no particular
 * kernel or cmdline as they are (and says so in the run log). group is
 * store_boot_group(c). The result is in *o: RUN_PROCEED (the step may run
 * on tr), RUN_QUARANTINE (the boot failed; link_lost when the machine did
 * not come back), RUN_FINISH boot-failed or failed (the run cannot run on
 * this machine at all), RUN_RETRY (the link went before the step).
 */
void runner_boot(const struct runner_env *env, const struct store_machine *m,
    struct transport *tr, int *agent_ok, const struct runner_claim *rc, const char *group,
    struct run_outcome *o);

/*
 * Fingerprint the machine with `<agent> probe` (between runs only) and hand
 * it with its hash to the sink. BF_ERR_LOST / BF_ERR_TIMEOUT when the link
 * went bad.
 */
int runner_probe(const struct runner_env *env, struct transport *tr, int *agent_ok,
    struct bf_diag *d);

/* Start the agent's next `step` ahead on tr (transport_prestart), so the
 * next runner_execute finds it waiting with its hello printed; nothing
 * unless agent_ok and the link is up. The scheduler calls it once after a
 * run, when its claim found no other run waiting. */
void runner_prestart(const struct runner_env *env, struct transport *tr, int agent_ok);

/*
 * Execute the claim; samples and logs go to the sink as they arrive, the
 * end of the run into *o (RUN_FINISH done or failed, RUN_RETRY when the
 * link went bad, which also sets link_lost, RUN_REQUEUE when the sink did
 * not take a sample).
 */
void runner_execute(const struct runner_env *env, struct transport *tr, int *agent_ok,
    const struct runner_claim *rc, struct run_outcome *o);

/* The add-a-boot question for a successful run about to finish: 1 and *ad
 * filled when the job is adaptive (runner-adaptive.c). */
int runner_adaptive_prepare(const struct runner_claim *rc, struct runner_adaptive *ad);

/*
 * The add-a-boot decision (store_cell_decide_fn): one more boot when every
 * planned boot of the cell has measured, fewer than max_boots are planned,
 * and the 95% CI of the mean over the boot means is wider than
 * target_ci_pct of the mean. arg is a struct runner_adaptive; its note says
 * why a boot was added. Pure: no store, no I/O.
 */
int runner_adaptive_decide(void *arg, const double *v, const int *boot, size_t n,
    int planned);

#endif
