/*
 * build-tree.h: the persistent tree of `benchfleet-agent build` (build.c):
 * one source checkout and one object directory per (repository, arch)
 * on a builder, reused by the next build so that make recompiles only
 * what changed. The document's "persist" object names it:
 *
 *   "persist": {"dir": "/var/tmp/benchfleet-kbuild/t-<h16>-x86_64",
 *               "repo": "/srv/linux.git"}
 *
 * dir is a normal absolute path whose last name starts "t-"; beside it
 * dir.lock is flocked for the whole invocation (two coordinators may
 * share a builder), dir/.bf-building is the stamp of a build under way
 * (left behind by one that was killed: the next starts from a clean
 * tree), dir/repo holds repo's path. Siblings t-* whose repo file names a
 * path that is gone are removed (when their lock is free).
 */
#ifndef BF_AGENT_BUILD_TREE_H
#define BF_AGENT_BUILD_TREE_H

#include <limits.h>
#include <time.h>

#include "ajson.h"

#define BUILD_TREE_STAMP	".bf-building"
#define BUILD_TREE_PREFIX	"t-"
#define BUILD_TREE_MAX_PRUNE	64	/* siblings looked at per build */

struct build_tree {
	int lock_fd;			/* -1 when not locked */
	int stamped;			/* 1: our stamp is there (ours to remove) */
	char dir[PATH_MAX / 2];
	char stamp[PATH_MAX / 2 + 16];
};

/* Lock the tree of persist (waiting up to deadline, saying so), prune
 * gone repositories' trees, reset the tree when an earlier build left its
 * stamp, then make dir and the stamp. BF_ERR_INVALID for a malformed
 * persist, BF_ERR_TIMEOUT, BF_ERR_SYS; why says which. t is set first, so
 * build_tree_end() is always safe after it. */
int build_tree_begin(struct build_tree *t, const struct ajson *persist, time_t deadline,
    char *why, size_t whysz);
/* Remove everything of the tree (rm -rf, never through a symlink) and
 * make dir and its stamp again; reason goes to the build log. */
int build_tree_reset(struct build_tree *t, const char *reason, time_t deadline, char *why,
    size_t whysz);
/* Remove the stamp unless keep (a command was killed: the tree may be
 * half-written), then unlock. NULL or an unset t is fine. */
void build_tree_end(struct build_tree *t, int keep);

/* A log line of the agent's own (stream "stderr") in the build's output. */
void build_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
