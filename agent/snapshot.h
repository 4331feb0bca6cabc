/*
 * snapshot.h: the software and settings a step ran under, captured by the
 * agent at the start of every step (so after every boot) as one canonical
 * JSON object: keys in strcmp order, every value a string, or null when
 * its file could not be read. The machine's fingerprint (probe.c) stays the
 * hardware identity; this is what a reboot, a sysctl or an upgrade changes.
 * Keys (docs/evidence.md): transparent_hugepage/..., hugetlb/..., vm.*,
 * kernel.*, cpu.*, cpufreq.*, cpuidle.*, numa.*, dmi.*, cgroup.*, os.*,
 * sw.*, bin.<argv0>.{path,package,sha256}, pkg.<debian package> (the
 * installed version of each package the step declares).
 */
#ifndef BF_AGENT_SNAPSHOT_H
#define BF_AGENT_SNAPSHOT_H

#include <stddef.h>

#include "buf.h"

/*
 * Files of the snapshot opened ahead (snapshot_prepare) and read with
 * pread at offset 0 when the snapshot is built: only under /sys and /proc,
 * which make a file's text anew on every such read (a file elsewhere may
 * be replaced by a rename, and a held fd would read the old one).
 */
struct snapshot_hfile {
	char *path;		/* root + path, as snapshot.c opens it */
	int fd;
};
struct snapshot_held {
	struct snapshot_hfile *f;	/* sorted by path after snapshot_prepare */
	size_t n;
};

struct snapshot_opts {
	/* Prefix of /sys, /proc, /etc and /boot: "" on a machine, a mktemp
	 * tree in the unit tests. Binaries and the address-space probe are
	 * always the running machine's. */
	const char *root;
	/* argv[0]s the step executes (deduplicated here), NULL-terminated, at
	 * most BF_MAX_SNAPSHOT_BINS used; NULL for none. "@agent" is the agent. */
	const char *const *bins;
	const char *cwd;	/* base of a relative argv[0] with a '/'; NULL: ours */
	/* Debian packages the step declares (NULL-terminated, may repeat;
	 * NULL for none): "pkg.NAME" is each one's installed version. */
	const char *const *pkgs;
	/*
	 * Runs argv (argv[0] absolute, never a shell) for at most
	 * BF_SNAPSHOT_CMD_S and appends its stdout to out; returns 0 only when
	 * it exited 0. Used for rpm -qf (dpkg's files are read directly) and
	 * cc --version. NULL: neither.
	 */
	int (*run)(void *arg, char *const *argv, struct buf *out);
	void *arg;
	/* The dpkg owner cache file (dpkgcache.h) for the database under
	 * root, or NULL: every step then scans dpkg's .list files. */
	const char *dpkg_cache;
	/* The compiler sw.cc asks (`CC --version`; NULL: /usr/bin/cc), and
	 * the file its answer is kept in (cmdcache.h), or NULL: every step
	 * runs it. */
	const char *cc;
	const char *cc_cache;
	/* Files snapshot_prepare opened, read through their fds; NULL: every
	 * file is opened by path. */
	const struct snapshot_held *held;
};

/*
 * Open every /sys and /proc file snapshot_build would read under o->root
 * (at most SNAPSHOT_MAX_HELD), reading no value and hashing nothing: the
 * agent does it while it waits for its step. h is zeroed first; the
 * caller frees it with snapshot_held_free (which accepts a zeroed h).
 */
void snapshot_prepare(const struct snapshot_opts *o, struct snapshot_held *h);
void snapshot_held_free(struct snapshot_held *h);

/*
 * Append the snapshot object to out (give it a cap of at least
 * BF_MAX_SNAPSHOT + 64). Unreadable files are null values, never an error;
 * keys beyond BF_MAX_SNAPSHOT bytes or BF_MAX_SNAPSHOT_FILES reads are
 * dropped and counted in "~dropped" (which sorts last). BF_ERR_ALLOC or
 * BF_ERR_TOOBIG only when out cannot take it.
 */
int snapshot_build(const struct snapshot_opts *o, struct buf *out);
/* Print {"type":"snapshot","sha256":HEX,"snapshot":{...}}, HEX being the
 * sha256 of the object's text exactly as printed. */
int snapshot_emit(const struct snapshot_opts *o);

/*
 * A sysfs value as stored: for a choice file ("always [madvise] never")
 * with choice set, the bracketed word; otherwise the text with each run of
 * whitespace made one space, trimmed. out always NUL-terminated.
 */
void snapshot_value(const char *text, size_t len, int choice, char *out, size_t outsz);
/* "0-3:performance,4:powersave" from n (index, value) pairs sorted by
 * index, of total looked at; just the value when all total agree; "" when
 * n is 0. */
int snapshot_summary(const long long *idx, char *const *val, size_t n, size_t total,
    struct buf *out);

#endif
