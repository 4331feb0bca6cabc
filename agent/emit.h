/*
 * emit.h: the agent's JSON-lines output on standard output, one object per
 * write(2), so a line is never interleaved or left half-written by stdio.
 */
#ifndef BF_AGENT_EMIT_H
#define BF_AGENT_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "caps.h"

/* A line with its newline, as the coordinator accepts it. A log line is cut
 * to BF_MAX_LOG_LINE bytes and escaping at most sextuples it, so it fits. */
#define EMIT_MAX_LINE	BF_MAX_AGENT_LINE

/* Write b's content plus '\n' to fd 1; b is reset. BF_ERR_IO when stdout is gone. */
int emit_line(struct buf *b);
int emit_log(int64_t iteration, const char *stream, const char *line, size_t len);
int emit_dropped(int64_t iteration, const char *stream, unsigned long n);
int emit_error(const char *msg);
int emit_done(int ok, int64_t iterations);

#endif
