/*
 * repro.h: reproducing another lab's bundle here (docs/bundle.md):
 * fingerprint matching, the verdict per cell and metric, the environment
 * diff, the report, and fetching a bundle by URL.
 */
#ifndef BF_REPRO_H
#define BF_REPRO_H

#include <stddef.h>
#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "stats.h"

struct store;

#define REPRO_DEFAULT_DELTA_PCT	2.0
#define REPRO_MAX_URL		2048
#define REPRO_MAX_BASELINE	(BF_MAX_NAME + 1 + 128)	/* AXIS:VALUE */
#define REPRO_MEM_TOLERANCE	0.05	/* memory matches within 5% */

enum repro_verdict_kind { REPRO_REPRODUCED, REPRO_DIFFERS, REPRO_INCONCLUSIVE };

struct repro_verdict {
	enum repro_verdict_kind kind;
	struct stats_summary a, b;	/* original, reproduced (boot means if boots > 1) */
	int boot_means;			/* 1: samples are boot means */
	double pct, lo95, hi95;		/* % change of b vs a, 95% Fieller CI */
	double lo90, hi90;		/* 90% Fieller CI (the TOST at 95%) */
	/* inconclusive: samples per side needed so the 90% CI half-width is
	 * below delta - |pct|; 0 when |pct| >= delta (cannot be shown
	 * equivalent at this delta) or not estimable. */
	size_t n_needed;
	const char *why;		/* static text: what an inconclusive lacks */
};

/*
 * The verdict on original a vs reproduction b (boot tags may be NULL):
 * reproduced when the 90% CI of the ratio lies inside [1-d, 1+d]
 * (d = delta_pct / 100); differs when the 95% CI of the % change excludes
 * 0 and lies wholly beyond +-delta_pct; else inconclusive.
 */
int repro_verdict(const double *a, const int *aboot, size_t na, const double *b,
    const int *bboot, size_t nb, double delta_pct, struct repro_verdict *out);
const char *repro_verdict_name(enum repro_verdict_kind k);
/* The samples of one side as the verdicts compare them: the boot means
 * when boot names several boots (the independent samples, as report.c
 * uses them; *bm = 1), else v itself (*bm = 0). */
int repro_side_summary(const double *v, const int *boot, size_t n, struct stats_summary *out,
    int *bm);

/*
 * The samples of a reproduction by side: orig (the bundle's) and here (the
 * local job's, here_samples as api_view_job_cells_get gives them), both
 * empty objects the caller owns, get {"CELL_INDEX": {METRIC: {"v": [values],
 * "b": [boots], "unit"}}}. repro_series_arrays copies one metric's out as
 * new arrays the caller frees (NULL and 0 for none).
 */
int repro_series(const json_t *bundle, const json_t *here_samples, json_t *orig, json_t *here);
int repro_series_arrays(const json_t *m, double **vp, int **bp, size_t *np);

/*
 * Compare fingerprint here against the bundle's want on the identity
 * fields (CPU model/vendor/family/model/stepping, sockets, cores, threads,
 * NUMA node count, memory within 5%): *ident gets the
 * identity fields that differ ([{"field","bundle","here"}]), *other the
 * non-identity ones (microcode, kernel config, ...), both new arrays.
 */
int repro_fp_compare(const json_t *want, const json_t *here, json_t **ident, json_t **other);

/*
 * Flat "path -> scalar" view of a JSON value (objects by key, arrays by
 * index), for field-by-field diffs. New reference.
 */
json_t *repro_flatten(const json_t *v);
/* Append to diff ([{"field","bundle","here"}]) every path of the flat views
 * of a and b whose values differ, each named prefix + path. */
int repro_diff(const json_t *a, const json_t *b, const char *prefix, const char *const *skip,
    json_t *diff);

/*
 * Renumber the bundle's runs to the cells here with the same axes: the
 * stored job document has its keys sorted, so a matrix written as
 * {"passes":…,"mb":…} expands here in another order than it did there,
 * and cells paired by index would compare the wrong numbers. A run whose
 * axes match no cell here, or several, keeps its index. *moved counts the
 * runs renumbered. Call once, before the report and effects.
 */
int repro_align_cells(json_t *bundle, const json_t *here_runs, size_t *moved);
/*
 * The report of reproduction (stored row info, bundle doc, local job's
 * samples and runs, local machines' fingerprints, and here_snaps: the
 * snapshots the local runs name, {sha256: snapshot}, or NULL): as JSON
 * (new reference). Then repro_env_snapshots() on it.
 */
int repro_report_json(const json_t *bundle, const json_t *here_samples,
    const json_t *here_runs, const json_t *here_job, const json_t *here_machines,
    const json_t *here_snaps, const json_t *info, double delta_pct, json_t **out,
    struct bf_diag *d);

/* repro-effects.c */
/* One group of samples (a cell's metric on one side); boot may be NULL. */
struct repro_group {
	const double *v;
	const int *boot;
	size_t n;
};

/* The comparison of effects: g[0], g[1] the bundle's baseline cell and
 * cell, g[2], g[3] the same cells here; an effect is r = mean_cell /
 * mean_baseline and "ratio" is r_here / r_bundle. */
struct repro_effect {
	enum repro_verdict_kind kind;
	size_t n[4];			/* samples per group as compared */
	int boot_means;			/* 1: some group's samples are boot means */
	double pct_bundle, lo_bundle, hi_bundle;	/* the bundle's effect, %, 95% CI */
	double pct_here, lo_here, hi_here;		/* here */
	double ratio, lo90, hi90, lo95, hi95;	/* r_here / r_bundle and its CIs */
	double nu;			/* Welch-Satterthwaite dof over the four groups */
	const char *why;		/* static text: what an inconclusive lacks, else NULL */
};

/*
 * The verdict on the difference of effects, on the log scale (stats.h,
 * stats_effect_diff): reproduced when the 90% CI of the ratio lies inside
 * [1-d, 1+d] (d = delta_pct / 100); differs when the 95% CI lies wholly
 * above 1+d or below 1-d; else inconclusive with why. Each group is scaled
 * by a power of 2 before it is summarised, so magnitudes near DBL_MAX or
 * DBL_MIN give the same answer as near 1. BF_ERR_INVALID for a bad
 * delta_pct or a non-finite sample.
 */
int repro_effect_verdict(const struct repro_group g[4], double delta_pct,
    struct repro_effect *out);

/*
 * Validate a baseline against a job document (a job's spec.job, or a
 * bundle's job): "none", or AXIS:VALUE with AXIS an axis of its matrix and
 * VALUE one of its values (written as in ?baseline= of a job report); for a
 * suite, an axis of the job's matrix or of any workload's, with VALUE among
 * the values of one that has it. BF_ERR_INVALID with d naming "baseline";
 * what ("job 7") goes in the text.
 */
int repro_effects_check(const json_t *job, const char *baseline, const char *what,
    struct bf_diag *d);
/*
 * Add to rep (repro_report_json's) "effects": {"baseline", "delta_pct",
 * "rows": [...], "summary", "notes"} comparing, for every cell here that
 * differs from a baseline cell only on the baseline's axis, its effect on
 * the bundle's side and here, per metric (counters only when the bundle has
 * no other metric for those cells). baseline NULL: the first value of the
 * first axis of here_job's matrix; "none", or a job without a matrix:
 * "effects": null. The bundle's cells are found by their axes.
 * A suite (here_job has "suite") is compared workload by workload, each as
 * a job of its own: the baseline (NULL: the first axis of the job's matrix,
 * else of the workload's own; "baseline" is then null unless the job's
 * matrix gave it) applies to the workloads with its axis, the others are
 * notes; every row names its "workload"; "workloads": [{"workload",
 * "baseline" (null: not compared), "reproduced", "differs",
 * "inconclusive"}] and "summary" the suite's totals; null when no workload
 * has a matrix. BF_ERR_INVALID with d naming "baseline" for a bad one.
 */
int repro_effects_json(const json_t *bundle, const json_t *here_samples,
    const json_t *here_job, const char *baseline, double delta_pct, json_t *rep,
    struct bf_diag *d);
/* The text of rep's "effects" (nothing when null), for repro_report_text. */
int repro_effects_text(const json_t *rep, struct buf *out);

/* repro-env.c */
/* Non-zero for a metric the agent counted around the workload
 * (vmstat., hugepages-, cgroup., smaps., pmu.: docs/evidence.md). */
int repro_is_counter(const char *metric);
/*
 * Add to rep (repro_report_json's) "environment_snapshots": {"note": why
 * nothing could be compared or null, "groups": [{"cells", "labels",
 * "bundle_sha256", "here_sha256", "diff": envdiff_pair of the first run of
 * the cell with a snapshot on each side}] (cells with an equal diff share
 * a group), "drift": {"bundle", "here"}: envdiff_drift over each side's
 * runs when some key drifts, else null}; per cell "counters_changed"
 * (["vmstat.thp_fault_alloc: 0 -> 16380", ...]: verdict differs, or 0 on
 * one side only); counter metrics get "counter": true; a workload metric
 * that differs gets "explained_by": {"environment": ["key: a -> b", ...],
 * "counters": [...]} (at most 5 each) when either is non-empty. Snapshots
 * are checked as envdiff does (BF_ERR_INVALID with d naming the key).
 */
int repro_env_snapshots(const json_t *bundle, const json_t *here_runs,
    const json_t *here_snaps, json_t *rep, struct bf_diag *d);
/* The text of those, for repro_report_text. */
int repro_env_text(const json_t *rep, struct buf *out);
int repro_explain_text(const json_t *metric, struct buf *out);
/* The JSON report as a mail-ready text table and the diff. */
int repro_report_text(const json_t *rep, struct buf *out);

/*
 * GET url into out, at most max bytes, through fetch_url (fetch.h: no
 * private or loopback peers unless --peer-allow lists them, https unless
 * --peer-allow-http, no redirects, timeouts; a longer body is cut off as
 * it arrives). Takes one of the BF_MAX_FETCHES slots: BF_ERR_STATE when
 * all are busy. Any other failure is logged to stderr with its reason, and
 * d holds one generic text for all of them (BF_ERR_INVALID refused,
 * BF_ERR_TOOBIG, BF_ERR_TIMEOUT, BF_ERR_PROTO not 200, BF_ERR_IO).
 */
int repro_fetch(const char *url, size_t max, struct buf *out, struct bf_diag *d);

#endif
