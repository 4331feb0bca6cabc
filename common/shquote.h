/*
 * shquote.h: the one audited way to put a value into a POSIX shell word.
 * Commands normally run as argv arrays; use this only when a remote shell
 * is unavoidable (an SSH exec request is a shell command line).
 */
#ifndef BF_SHQUOTE_H
#define BF_SHQUOTE_H

#include "buf.h"

/* Append s to out as one single-quoted shell word: it's -> 'it'\''s'.
 * Newlines and every other byte are safe inside single quotes. */
int shquote(struct buf *out, const char *s);

#endif
