/*
 * hello.h: the first output line, saying which machine and boot this is,
 * so the coordinator can verify a reboot really happened (boot_id) and that
 * the kernel and cmdline it asked for are the ones running.
 */
#ifndef BF_AGENT_HELLO_H
#define BF_AGENT_HELLO_H

#include "buf.h"

/* Append the hello object (no newline) to b. */
int hello_build(struct buf *b);
/* Build and write the hello line. */
int hello_emit(void);

#endif
