/*
 * package.h: the Debian packages a step declares. A recipe installs
 * nothing; the agent refuses the step before anything runs (no knob
 * applied) when a declared binary is not on PATH, naming the package a lab
 * must install. Their versions go in the snapshot (snapshot.h, "pkg.").
 */
#ifndef BF_AGENT_PACKAGE_H
#define BF_AGENT_PACKAGE_H

#include <stddef.h>

#include "err.h"
#include "step.h"

#define PACKAGE_DEFAULT_PATH	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Where execvp would find name on path (NULL: PACKAGE_DEFAULT_PATH): an
 * executable regular file; 0 and found, or BF_ERR_NOTFOUND. */
int package_which(const char *name, const char *path, char *found, size_t fsz);
/* Every st->packages[i].binary on $PATH, else an error naming the package
 * (packages[1].binary: "tbench_srv" is not on PATH (...); install the
 * Debian package dbench); and an absolute argv[0] (an upstream program at
 * a configured path) an executable regular file, else an error naming it. */
int package_check(const struct step *st, struct bf_diag *d);

#endif
