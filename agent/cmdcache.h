/*
 * cmdcache.h: a command's one-line answer about a binary (`cc --version`),
 * remembered between steps. Running the compiler is a fork and an exec,
 * about 1.2 ms of every step, and its answer can only change when the
 * binary does: the answer is kept in one small file per command, valid
 * while the binary's resolved path (so a switched /usr/bin/cc alternative
 * is a miss), device, inode, size, mtime and ctime are unchanged (an
 * upgrade writes a new inode, and no one can set a ctime back). Any other
 * state of the file (missing, foreign, truncated, hostile) is a miss.
 */
#ifndef BF_AGENT_CMDCACHE_H
#define BF_AGENT_CMDCACHE_H

#include <stddef.h>

#define CMDCACHE_CC_NAME	"cc-version.cache"	/* beside the agent binary */
#define CMDCACHE_MAX_KEY	4400	/* tag, a PATH_MAX path, the stat fields */
#define CMDCACHE_MAX_VALUE	4096	/* = BF_MAX_SNAPSHOT_VALUE */

/* The identity of binary bin (resolved) into key; BF_ERR_NOTFOUND when it
 * cannot be resolved or its path holds a newline. Take it before running
 * the command, so an answer never outlives the binary it came from. */
int cmdcache_key(const char *bin, char *key, size_t ksz);
/* The answer stored in file under key: 0 and val set, or BF_ERR_NOTFOUND
 * (a miss: no file, another key, a damaged file, val too small). */
int cmdcache_get(const char *file, const char *key, char *val, size_t vsz);
/* Store val (one line, no NUL, at most CMDCACHE_MAX_VALUE bytes) under key;
 * the file is written whole (temporary file and rename). Best effort. */
void cmdcache_put(const char *file, const char *key, const char *val);

#endif
