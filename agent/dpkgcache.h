/*
 * dpkgcache.h: which dpkg package owns a binary, and its installed
 * version, remembered between steps.
 * Finding the owner of a file whose .list is not named after it (/bin/true
 * is coreutils') reads every .list under /var/lib/dpkg/info, about 9 MiB
 * and 7 ms on a small Debian host, in every step: most of the agent's fixed
 * cost per run. The answer can only change when dpkg's database does, so
 * it is kept in one small file, valid while /var/lib/dpkg/info and
 * /var/lib/dpkg/status keep their inode, size and mtime; any other state
 * of the file (missing, foreign, truncated, hostile) is a miss.
 */
#ifndef BF_AGENT_DPKGCACHE_H
#define BF_AGENT_DPKGCACHE_H

#include <stddef.h>

#define DPKGCACHE_NAME		"dpkg-owner.cache"	/* beside the agent binary */
#define DPKGCACHE_MAX_FILE	(64 * 1024)
#define DPKGCACHE_MAX_ENTRIES	256
#define DPKGCACHE_MAX_PKG	128
#define DPKGCACHE_MAX_VER	128

/*
 * The owner of path (an absolute path with no tab or newline) recorded in
 * the cache file for the dpkg database under root ("" on a machine): 0 and
 * pkg set ("" when no package owns it) and ver (the owner's version as
 * dpkg's status file gives it, "" for none), or BF_ERR_NOTFOUND on a miss.
 * Reading the version from the 1 MiB status file was ~0.9 ms a step.
 */
int dpkgcache_get(const char *file, const char *root, const char *path, char *pkg,
    size_t psz, char *ver, size_t vsz);
/*
 * Record path's owner (pkg, "" for none) and its version (ver, ""). The file is rewritten whole
 * (temporary file and rename, so a reader never sees half of it) and
 * restarted when its database key changed or it holds
 * DPKGCACHE_MAX_ENTRIES. Best effort: a failure only costs the next step
 * the scan.
 */
void dpkgcache_put(const char *file, const char *root, const char *path, const char *pkg,
    const char *ver);

#endif
