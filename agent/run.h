/*
 * run.h: the `step` command: read the step from stdin, run its warmup and
 * measured iterations, and report everything as JSON lines.
 */
#ifndef BF_AGENT_RUN_H
#define BF_AGENT_RUN_H

/* Agent exit statuses (docs/agent-protocol.md). */
#define RUN_EXIT_OK	0
#define RUN_EXIT_FAILED	1
#define RUN_EXIT_ERROR	2

/* Does the whole step; returns the agent's exit status. */
int run_step(int wait_s);

#endif
