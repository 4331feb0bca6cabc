/*
 * runner.h: execute one claimed run on one machine: build the step from the
 * job's recipe and the run's parameter values, make sure the agent on the
 * machine is ours (sha256), exec it over SSH, and ingest its JSON lines into
 * the store as they arrive.
 */
#ifndef BF_RUNNER_H
#define BF_RUNNER_H

#include <jansson.h>

#include "err.h"
#include "events.h"
#include "recipe.h"
#include "recipes.h"
#include "ssh.h"
#include "store.h"

/* One agent binary per machine architecture (uname -m). */
struct runner_agent {
	const char *arch;		/* "x86_64", "aarch64" */
	const char *path;		/* on this host */
	char sha256[65];
};

struct runner_env {
	struct store *st;
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
 * Build the agent step (a JSON document) for a claim. BF_ERR_INVALID when the
 * job's stored recipe or values no longer render, or a path parameter is not
 * under workdir_root (d says why).
 * *stepp is a new reference; *rp (rp may be NULL) the job's recipe as run,
 * freed by the caller with recipe_free().
 */
int runner_build_step(const struct store_claim *c, const char *workdir_root, json_t **stepp,
    struct recipe **rp, struct bf_diag *d);

/*
 * Before a claim runs: the run row may have been written by anything that
 * can write the store (privsep's API child included), so parse its job and
 * recipe again with the validators of POST /jobs, expand the matrix, and
 * require the run's values, knobs, kernel and cmdline to be one of its
 * cells. BF_ERR_INVALID (d says why) when they are not.
 */
int runner_check_claim(const struct store_claim *c, const char *workdir_root,
    struct bf_diag *d);

/* Upload the agent when the machine's copy differs from ours. *agent_ok
 * caches the answer for the life of the connection. */
int runner_ensure_agent(const struct runner_env *env, struct ssh_conn *conn, int *agent_ok,
    struct bf_diag *d);

/*
 * Put the machine into the boot the claim needs: its kernel, its command
 * line, and a fresh boot per boot repetition (repetitions.boots). A
 * machine without a boot configuration runs requests for no particular
 * kernel or cmdline as they are (and says so in the run log).
 * 0: the step may run on *connp. BF_ERR_STATE: the boot failed and the run
 * was finished boot-failed (counts towards quarantine). BF_ERR_INVALID: the
 * run cannot run on this machine at all and was finished boot-failed.
 * BF_ERR_LOST / BF_ERR_TIMEOUT: the machine is gone (the run was retried).
 */
int runner_boot(const struct runner_env *env, const struct store_machine *m,
    const struct ssh_target *t, struct ssh_conn **connp, int *agent_ok,
    const struct store_claim *c);

/*
 * Fingerprint the machine with `<agent> probe` (between runs only) and store
 * it with its hash. BF_ERR_LOST / BF_ERR_TIMEOUT when the link went bad.
 */
int runner_probe(const struct runner_env *env, struct ssh_conn *conn, int *agent_ok,
    struct bf_diag *d);

/*
 * Execute the claim and finish the run in the store (done, failed or lost).
 * Returns BF_ERR_LOST / BF_ERR_TIMEOUT when the connection went bad (the
 * caller drops it), 0 otherwise, whatever the run's own outcome.
 */
int runner_execute(const struct runner_env *env, struct ssh_conn *conn, int *agent_ok,
    const struct store_claim *c);

#endif
