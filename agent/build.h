/*
 * build.h: `benchfleet-agent build`, a kernel build's commands on a
 * builder (build.c; the plan is common/kbuild.h's, sent as JSON on stdin).
 */
#ifndef BF_AGENT_BUILD_H
#define BF_AGENT_BUILD_H

#include "ajson.h"

/* Read the document from stdin and run it; the exit status: 0 done, 1 a
 * command failed (said in a build_failed line), 2 a malformed document. */
int build_main(void);
/* The same for a parsed document. */
int build_run(const struct ajson *doc);

#endif
