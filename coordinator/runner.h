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
#include "ssh.h"
#include "store.h"

struct runner_env {
	struct store *st;
	const char *machine;
	const char *agent_local;
	const char *agent_sha256;	/* hex of agent_local */
	const char *agent_remote;
	int lease_s;
	int max_attempts;		/* a lost run is retried until this many */
	int link_timeout_ms;		/* silence (keepalives count) = dead link */
	struct events *ev;		/* may be NULL */
};

/*
 * Build the agent step (a JSON document) for a claim. BF_ERR_INVALID when the
 * job's stored recipe or values no longer render (d says why).
 * *stepp is a new reference.
 */
int runner_build_step(const struct store_claim *c, json_t **stepp, struct bf_diag *d);

/* Upload the agent when the machine's copy differs from ours. *agent_ok
 * caches the answer for the life of the connection. */
int runner_ensure_agent(const struct runner_env *env, struct ssh_conn *conn, int *agent_ok,
    struct bf_diag *d);

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
