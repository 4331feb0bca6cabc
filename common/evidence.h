/*
 * evidence.h: what a job's report says about its own evidence (issue 16),
 * as pure functions over parsed snapshots and per-cell means: no store, no
 * network. Which MM counters the report shows beside the recipe's metrics
 * (evidence_counters_pick), whether THP really happened where the snapshot
 * says it was on (evidence_thp), whether the environment stayed the same
 * within the job (evidence_drift, evidence-drift.c), and whether the
 * recipe's expectations hold (evidence_expect). Each appends lines for the
 * report's legend ("cell thp_enabled=always: ...") to a struct
 * evidence_lines.
 *
 * Snapshots and labels are untrusted: a snapshot that is not a flat object
 * of strings or null gives a note, never a crash; values printed in a line
 * are quoted when not plain printable ASCII and cut at EVIDENCE_MAX_VALUE
 * bytes.
 */
#ifndef BF_EVIDENCE_H
#define BF_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "recipe.h"

#define EVIDENCE_MAX_LINES	31	/* lines kept; one more says how many were not */
#define EVIDENCE_MAX_VALUE	64	/* bytes of a snapshot value in a line */
#define EVIDENCE_FALLBACK_PCT	10.0	/* fallback share of THP faults that warns */
#define EVIDENCE_DRIFT_KEYS	4	/* keys named in a drift line; the rest counted */
#define EVIDENCE_MAX_MTHP	64	/* mTHP sizes of one snapshot checked */

/* Lines for the legend, at most EVIDENCE_MAX_LINES of at most BF_MAX_STR
 * bytes; those past the cap are counted in more. Zero-initialise; the
 * lines are the struct's, freed by evidence_lines_free(). */
struct evidence_lines {
	char *line[EVIDENCE_MAX_LINES];
	size_t n;
	size_t more;
};

/* Append a line (cut at BF_MAX_STR bytes); past the cap only counted.
 * BF_ERR_ALLOC only. */
int evidence_lines_add(struct evidence_lines *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The lines followed by "N more warnings not shown" when some were cut, in
 * a NULL-terminated array of the struct's strings (at most
 * EVIDENCE_MAX_LINES + 2 entries) for report_input.warnings; *extra gets the
 * count line, which the caller frees. BF_ERR_ALLOC. */
int evidence_lines_vector(const struct evidence_lines *w, const char **vec, size_t nvec,
    char **extra);
void evidence_lines_free(struct evidence_lines *w);	/* accepts NULL */

/* ---- counters shown as report rows ---- */

/* A sample the agent counted around the workload (docs/evidence.md:
 * vmstat., hugepages-, cgroup., smaps., pmu.), not a recipe metric. */
int evidence_is_counter(const char *metric);
/* The THP counters a report shows by default: vmstat.thp_fault_alloc,
 * vmstat.thp_fault_fallback, hugepages-<N>kB.anon_fault_alloc and
 * hugepages-<N>kB.anon_fault_fallback. */
int evidence_is_thp_counter(const char *metric);

enum evidence_counters {
	EVIDENCE_COUNTERS_NONE,
	EVIDENCE_COUNTERS_THP,		/* the default */
	EVIDENCE_COUNTERS_ALL
};

/* "none", "thp", "all" (NULL: thp); BF_ERR_INVALID for anything else. */
int evidence_counters_mode(const char *s, enum evidence_counters *out);

/*
 * Of names[0..n) (distinct sample metric names of a job, in any order),
 * those mode shows, in display order: THP counters first (vmstat alloc,
 * fallback, then per mTHP size ascending, alloc before fallback), then the
 * rest by strcmp. At most room indexes into names go to idx[0..*npicked);
 * *nmore counts those past room. Names that are not counters are never
 * picked. BF_ERR_ALLOC.
 */
int evidence_counters_pick(const char *const *names, size_t n, enum evidence_counters mode,
    size_t room, size_t *idx, size_t *npicked, size_t *nmore);

/* ---- per-cell checks ---- */

/* The mean per iteration of one metric or counter in a cell. */
struct evidence_mean {
	const char *name;
	double mean;
	size_t n;		/* samples; 0: the cell has none */
};

struct evidence_cell {
	const char *label;		/* "thp_enabled=always"; user text, NULL prints "" */
	/* The environment of the cell's runs (one snapshot as stored), or NULL:
	 * none had one. Untrusted. */
	const json_t *snapshot;
	/* Knob, axis and parameter values of the cell (name -> value), or NULL. */
	const json_t *values;
	const struct evidence_mean *means;	/* every metric with samples in the cell */
	size_t nmeans;
};

/* The mean of name in c, or NULL when the cell has no samples of it. */
const struct evidence_mean *evidence_cell_mean(const struct evidence_cell *c,
    const char *name);

/*
 * THP evidence of each cell with a snapshot and samples: enabled=always but
 * a mean vmstat.thp_fault_alloc of 0 (or none recorded); fallbacks over
 * EVIDENCE_FALLBACK_PCT of THP faults; the same per mTHP size
 * (transparent_hugepage/hugepages-<N>kB/enabled = always against
 * hugepages-<N>kB.anon_fault_alloc / anon_fault_fallback). A snapshot that
 * is not an object, or an enabled value that is not a string, gives a note
 * and no check. BF_ERR_ALLOC only.
 */
int evidence_thp(const struct evidence_cell *cells, size_t n, struct evidence_lines *w);

/*
 * The recipe's expectations (recipe.h "expect") against each cell with
 * samples whose values match every "when": the metric's mean must satisfy
 * the comparison; a cell without samples of it fails too ("no samples").
 * Values match by their text (recipe_append_value: "64" matches 64).
 * BF_ERR_ALLOC only.
 */
int evidence_expect(const struct recipe *rc, const struct evidence_cell *cells, size_t n,
    struct evidence_lines *w);

/* ---- drift within a job (evidence-drift.c) ---- */

/* Does setting the job's knob or axis name write snapshot key? thp_enabled
 * writes transparent_hugepage/enabled, mthp_64kB
 * transparent_hugepage/hugepages-64kB/enabled, governor
 * cpufreq.scaling_governor, a "kernel" axis every key of the kernel group,
 * "cmdline" kernel.cmdline. A recipe parameter writes none. */
int evidence_key_set_by(const char *key, const char *name);

/* One done run of a job. */
struct evidence_run {
	int64_t id;
	size_t cell;			/* index into the job's cells */
	const char *cell_label;		/* user text */
	const json_t *snapshot;		/* as stored, or NULL: none; untrusted */
};

/*
 * envdiff_drift over the snapshots of runs (labels "cell LABEL run ID"),
 * except that keys some axis of axes[0..naxes) sets on purpose (a THP-mode
 * axis makes transparent_hugepage/enabled differ by design) are compared
 * only between runs of one cell. One line for the job ("environment changed
 * within the job: KEY (V1 in N runs from cell a run 1, V2 in M runs from
 * ...); KEY2 (...) and N more") and one per cell whose axis-set keys
 * drifted ("cell X: environment changed within the cell: ..."). A snapshot
 * envdiff refuses is left out with a note naming the run. BF_ERR_ALLOC.
 */
int evidence_drift(const struct evidence_run *runs, size_t n, const char *const *axes,
    size_t naxes, struct evidence_lines *w);

/* Append v (a snapshot value: string or NULL) to out for a line: bare when
 * printable ASCII without space, quote or backslash, else quoted with \xNN;
 * cut at EVIDENCE_MAX_VALUE bytes with "...". NULL prints as unreadable. */
int evidence_put_value(struct buf *out, const char *v);

#endif
