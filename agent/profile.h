/*
 * profile.h: the profiled iteration of a step ("profile": {"perf":
 * "record"}; docs/evidence.md). After the measured iterations the workload
 * runs once more under `perf record -g`, never counted as a measurement;
 * its perf.data and folded stacks are sent as artifact lines. perf is the
 * machine's own (linux-perf), run by an argv the agent builds: nothing of
 * the step reaches a shell.
 */
#ifndef BF_AGENT_PROFILE_H
#define BF_AGENT_PROFILE_H

#include <limits.h>
#include <stdint.h>

#include "err.h"
#include "exec.h"
#include "step.h"

struct profile {
	char perf[PATH_MAX];	/* perf, found in PATH */
	char self[PATH_MAX];	/* the agent's binary: what "@agent" runs */
	char dir[PATH_MAX];	/* the temporary directory, "" when none */
	const char *event;	/* "cycles", else "cpu-clock" */
	int cycles_errno;	/* why cycles could not be used */
};

/* Before anything of the step runs: find perf, or d says
 * "profile: perf not found (install linux-perf)". */
int profile_find(struct profile *p, struct bf_diag *d);
/* Run the workload under perf record as iteration it (its log lines go
 * out as for any iteration); res as exec_run fills it. */
int profile_record(struct profile *p, const struct step *st, int64_t it,
    struct exec_result *res, struct bf_diag *d);
/* The artifact lines: "folded" (perf script, folded here), then
 * "perf.data". One over its cap is dropped and said so; a failing perf
 * script drops the folded one. Only a dead stdout is an error. */
int profile_emit(struct profile *p, const struct step *st);
/* Remove the temporary directory and what perf left in it. */
void profile_cleanup(struct profile *p);

#endif
