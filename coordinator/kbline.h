/*
 * kbline.h: one line of `benchfleet-agent build`'s output (agent/build.c,
 * docs/agent-protocol.md "Kernel build"), decoded into a typed event for
 * the build dispatch (kdispatch.c). Pure: no I/O, no store. Log, error
 * and done lines are the step's (agentline.h decodes them); build_value,
 * build_failed and the build's artifacts (image, config, sysmap, modules,
 * each up to KBLINE_MAX_ARTIFACT bytes) are the build's own. Fails closed
 * as agentline does: a line with an unknown type or field, a wrong type
 * or a value out of range is refused whole, d naming the field. The
 * fuzzer tests/fuzz/fuzz_kbuild_lines.c runs the same decoder.
 */
#ifndef BF_KBLINE_H
#define BF_KBLINE_H

#include <stddef.h>
#include <stdint.h>

#include "agentline.h"
#include "err.h"

#define KBLINE_MAX_ARTIFACT	((int64_t)256 << 20)	/* one build artifact */
#define KBLINE_MAX_WHAT		32			/* a command's "what" */
#define KBLINE_MAX_VALUE	255			/* a captured value */

enum kbline_type {
	KBLINE_NONE = 0,	/* refused */
	KBLINE_LOG,		/* u.log */
	KBLINE_ERROR,		/* u.error */
	KBLINE_DONE,		/* u.done */
	KBLINE_VALUE,		/* u.value: a captured command's first line */
	KBLINE_FAILED,		/* u.failed: the command that ended the build */
	KBLINE_ARTIFACT,	/* u.artifact, .max KBLINE_MAX_ARTIFACT */
	KBLINE_ARTIFACT_END	/* u.artifact_end */
};

struct kbline_value {
	const char *what;	/* "tree", "release" */
	const char *value;
};

struct kbline_failed {
	const char *what;
	int64_t index;		/* a patch's index, else -1 */
	int64_t status;		/* its exit status; -1 with timeout */
	int timeout;		/* "status": "timeout" */
	const char *why;	/* "status" as another string (a write that failed) */
};

struct kbline {
	enum kbline_type type;
	union {
		struct agentline_log log;
		struct agentline_error error;
		struct agentline_done done;
		struct kbline_value value;
		struct kbline_failed failed;
		struct agentline_artifact artifact;
		struct agentline_artifact_end artifact_end;
	} u;
	struct agentline_event ev;	/* owns log/error/done's strings */
	json_t *doc;			/* owns the others' */
};

/* Decode line[0..len). 0, or BF_ERR_* with d naming the field; either way
 * the caller calls kbline_clear(). */
int kbline_decode(const char *line, size_t len, struct kbline *l, struct bf_diag *d);
void kbline_clear(struct kbline *l);	/* accepts a zeroed one */

#endif
