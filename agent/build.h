/*
 * build.h: `benchfleet-agent build`, a kernel build's commands on a
 * builder (build.c; the plan is common/kbuild.h's, sent as JSON on stdin).
 */
#ifndef BF_AGENT_BUILD_H
#define BF_AGENT_BUILD_H

#include <time.h>

#include "ajson.h"

/* Read the document from stdin and run it; the exit status: 0 done, 1 a
 * command failed (said in a build_failed line), 2 a malformed document. */
int build_main(void);
/* The same for a parsed document. */
int build_run(const struct ajson *doc);
/* argv run to its end or the deadline, its output as log lines (for
 * build-tree.c): 0 exit 0, > 0 its status, -1 killed at the deadline. */
int build_cmd(char **argv, time_t deadline);

#endif
