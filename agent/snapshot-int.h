/*
 * snapshot-int.h: what snapshot.c and snapshot-bins.c share: the set of
 * (key, value) pairs a snapshot is collected into. Not for other modules.
 */
#ifndef BF_AGENT_SNAPSHOT_INT_H
#define BF_AGENT_SNAPSHOT_INT_H

#include <stddef.h>

#include "caps.h"
#include "snapshot.h"

#define SNAPSHOT_MAX_PATH	4096
#define SNAPSHOT_MAX_KEY	256
#define SNAPSHOT_MAX_CPUS	8192	/* cpuN and policyN directories looked at */
#define SNAPSHOT_MAX_IDLE	16	/* cpuidle states per cpu */
#define SNAPSHOT_MAX_CPUINFO	(1024 * 1024)	/* a 512-thread cpuinfo fits */
#define SNAPSHOT_MAX_LIST	(64 * 1024 * 1024)	/* a dpkg .list or status file */
#define SNAPSHOT_MAX_HELD	512	/* files snapshot_prepare keeps open */

struct snapshot_ent {
	char *key;
	char *val;		/* NULL: absent */
};

struct snapshot_set {
	const struct snapshot_opts *o;
	struct snapshot_ent *e;
	size_t n, cap;
	size_t reads;		/* files opened, against BF_MAX_SNAPSHOT_FILES */
	size_t dropped;
	struct snapshot_held *prep;	/* snapshot_prepare's: open, register, read nothing */
	char val[BF_MAX_SNAPSHOT_VALUE + 1];
};

/* Add a pair; both are copied. val NULL records the key as absent. */
int snapshot_add(struct snapshot_set *s, const char *key, const char *val);
/* "pkg.NAME" for each package the step declares. */
int snapshot_pkgs(struct snapshot_set *s);
/* "bin.<argv0>.{path,sha256,package}" for each binary, and "sw.cc". */
int snapshot_bins(struct snapshot_set *s);

#endif
