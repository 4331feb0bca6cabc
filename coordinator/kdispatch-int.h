/*
 * kdispatch-int.h: what kdispatch.c and kdispatch-install.c share.
 */
#ifndef BF_KDISPATCH_INT_H
#define BF_KDISPATCH_INT_H

#include "kdispatch.h"

/* A line in the run log (and its live view). */
void kdispatch_log(const struct kdispatch_env *env, int64_t run_id, const char *stream,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* How the run goes on: o's action, state, message; exit status -1. */
void kdispatch_set(struct run_outcome *o, enum run_action action, const char *state,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* cmd's stdout without its trailing newline into out; BF_ERR_IO (d says
 * which status) unless it exits 0. */
int kdispatch_capture(struct transport *tr, const char *cmd, char *out, size_t outsz,
    int timeout_ms, struct bf_diag *d);

#endif
