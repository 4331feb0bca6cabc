/*
 * workdir.h: the step's private working directory, made when the step has
 * "files" (hpcc reads hpccinf.txt from its cwd): a fresh directory under
 * /var/tmp (disk, not tmpfs: fio measures the page cache of a real file
 * system there), mode 0700, holding the files; it becomes the cwd of every
 * command and service, and is removed with all in it after the step.
 */
#ifndef BF_AGENT_WORKDIR_H
#define BF_AGENT_WORKDIR_H

#include "buf.h"
#include "err.h"
#include "step.h"

#define WORKDIR_BASE	"/var/tmp"
#define WORKDIR_DEPTH	16	/* levels a workload's own subdirectories may nest */

/* Make the workdir below base (WORKDIR_BASE; a test's own directory),
 * write st->files and set st->cwd to it. Nothing to do unless the step
 * has "files" (which may be []). */
int workdir_make(struct step *st, const char *base, struct bf_diag *d);
/* Remove the workdir (st->cwd) and all below it, never following a
 * symbolic link; 0 when the step has none. */
int workdir_remove(struct step *st);
/* Read file name of the workdir into b (at most b's cap); a symbolic link
 * or anything but a regular file is BF_ERR_INVALID, no file BF_ERR_NOTFOUND. */
int workdir_read(const struct step *st, const char *name, struct buf *b);
/* Remove file name before an iteration, so a stale result is never read. */
void workdir_unlink(const struct step *st, const char *name);

#endif
