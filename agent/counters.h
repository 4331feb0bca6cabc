/*
 * counters.h: what the memory system did inside one timed iteration, as
 * evidence next to the number: /proc/vmstat and per-size mTHP stat deltas,
 * AnonHugePages of the step's services, cgroup v2 memory.peak/memory.stat,
 * and PMU counters opened with perf_event_open(2) on the workload (no perf
 * binary), inherited by its children and enabled only from its exec on.
 * Printed as one {"type":"counters"} line per iteration (docs/evidence.md).
 */
#ifndef BF_AGENT_COUNTERS_H
#define BF_AGENT_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "caps.h"

#define COUNTERS_MAX_NAME	96	/* "hugepages-2048kB.anon_fault_fallback_charge" */

struct counters_kv {
	char name[COUNTERS_MAX_NAME];
	int64_t v;
};

/* A list of named values with a hard cap; fields past it are counted. */
struct counters_list {
	struct counters_kv *kv;
	size_t n, max;
	size_t dropped;
};

struct counters_pmu {
	char name[BF_MAX_NAME + 1];	/* "cycles", or the step's name of a raw event */
	uint32_t type;
	uint64_t config;
	int fd;			/* -1 when not open */
	int err;		/* errno of perf_event_open, 0 once opened */
	int user_only;		/* opened with exclude_kernel after EACCES */
	int have;		/* read after the window */
	uint64_t value, enabled, running;
};

#define COUNTERS_MAX_PROCS	65536	/* /proc entries read for a service's group */
#define COUNTERS_MAX_HELD	256	/* mTHP stat files kept open for the step */

/* One hugepages-<N>kB/stats/<field> file: found once per step, then read
 * again with pread at offset 0 (sysfs shows it anew), no path walk. */
struct counters_file {
	char name[COUNTERS_MAX_NAME];	/* "hugepages-64kB.anon_fault_alloc" */
	char path[160];			/* under root, for one not held open */
	int fd;				/* -1: read by path each time */
};

struct counters {
	const char *root;	/* "" on a machine, a fake tree in tests */
	struct counters_list vm0, vm1;		/* /proc/vmstat before, after */
	struct counters_list th0, th1;		/* hugepages-NkB/stats/ files before, after */
	struct counters_file *th_files;	/* sorted by name; found at the first read */
	size_t nth_files, th_skipped;	/* th_skipped: past BF_MAX_MTHP_STATS */
	int th_found;
	int vm_fd;			/* /proc/vmstat, open for the step; -1 */
	int hold_fd;		/* counters_prepare's dummy event on the agent; -1 */
	struct counters_list cg0, cg1;		/* memory.stat before, after */
	int cg_state;		/* 0 unknown, 1 v2 found, -1 absent */
	char cg_why[96];	/* why absent */
	char cg_dir[512];	/* the step's cgroup directory, under root */
	int peak_fd;		/* memory.peak, reset per fd when the kernel can */
	int peak_reset;
	int64_t peak;		/* bytes, -1 unknown */
	struct counters_pmu pmu[BF_MAX_PMU_EVENTS];
	size_t npmu;
	long minflt, majflt;	/* the workload's rusage (wait4), when have_ru */
	int have_ru;
	pid_t svc[16];		/* services whose AnonHugePages is read after */
	int64_t svc_ahp[16];	/* kB, -1 unreadable */
	size_t nsvc;
};

/* Set up with the default PMU set (cycles, instructions, dTLB-load-misses,
 * iTLB-load-misses, context-switches, cpu-migrations). */
void counters_init(struct counters *c, const char *root);
/* Add a software event by name ("page-faults"): BF_ERR_NOTFOUND for one
 * not in counters.c's table, BF_ERR_TOOBIG past BF_MAX_PMU_EVENTS. Not in
 * the default set because it slows what it counts. */
int counters_add_named(struct counters *c, const char *name);
/* The workload's fault counts from its wait4 rusage (its own and its
 * reaped children's), printed as rusage.minflt/majflt; counters_before
 * forgets them. */
void counters_rusage(struct counters *c, long minflt, long majflt);
/* Add a raw event "r0108" under name; BF_ERR_INVALID for a bad spec,
 * BF_ERR_TOOBIG past BF_MAX_PMU_EVENTS. */
int counters_add_raw(struct counters *c, const char *name, const char *spec);
/* "r" and 1..16 hex digits into *config. */
int counters_raw_config(const char *spec, uint64_t *config);
/*
 * Find and open what counters_before reads (the ~160 mTHP stat files,
 * /proc/vmstat, the cgroup directory) without reading a value: the agent
 * does it while it waits for its step, so that the step does not pay the
 * opens. Optional: counters_before does it when it was not done.
 * It also holds a software dummy event on the agent until counters_free:
 * the kernel's first per-task event after a second without one enables
 * perf's scheduler hooks (a static key: text patching and an RCU grace
 * period, 14 ms on a 2-CPU VM), which the workload's events then find on.
 */
void counters_prepare(struct counters *c);
/* Before the window: vmstat, mTHP stats, memory.stat, memory.peak reset. */
void counters_before(struct counters *c);
/*
 * Open every event on pid, which must not have exec'd yet (it waits in
 * exec.c): on_exec set, counting starts at its exec(2); otherwise at
 * counters_enable(). A failed open is kept as its errno, never fatal.
 */
void counters_attach(struct counters *c, pid_t pid, int on_exec);
void counters_enable(struct counters *c);
void counters_disable(struct counters *c);
/* After the window: read and close the events, the after values, and the
 * AnonHugePages of the services in pids[0..n) (at most 16), each summed
 * over its process group (its instances, for work serve). */
void counters_after(struct counters *c, const pid_t *pids, size_t n);
/* The process group field of /proc/PID/stat text, or -1. */
int64_t counters_pgrp(const char *text, size_t len);
/* The counters line of iteration it into b (no newline). */
int counters_line(const struct counters *c, int64_t it, struct buf *b);
int counters_emit(const struct counters *c, int64_t it);
/* Close what is open, free the lists; c can be counters_init'ed again. */
void counters_free(struct counters *c);

/* "name value" lines (/proc/vmstat, memory.stat, and one file per value
 * for mTHP stats) into l; a malformed line is skipped. */
void counters_parse(const char *text, size_t len, const char *prefix, struct counters_list *l);
/* The value of name in l, or -1 with *found 0. */
int64_t counters_get(const struct counters_list *l, const char *name, int *found);
/* AnonHugePages in kB from smaps_rollup text, or -1. */
int64_t counters_anon_huge_kb(const char *text, size_t len);

#endif
