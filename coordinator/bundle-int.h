/*
 * bundle-int.h: between bundle.c and bundle-snap.c (the environment
 * snapshots a version-2 bundle carries, docs/bundle.md). Not for other
 * modules.
 */
#ifndef BF_BUNDLE_INT_H
#define BF_BUNDLE_INT_H

#include <jansson.h>

#include "err.h"

struct store;

/*
 * Set doc's "snapshots" to {sha256: snapshot} for every snapshot that a run
 * of runs (the bundle's run entries) names, read from the store and checked
 * against its name. BF_ERR_INVALID (a damaged row), the store's error, or
 * BF_ERR_ALLOC, with d saying it.
 */
int bundle_export_snapshots(struct store *st, const json_t *runs, json_t *doc,
    struct bf_diag *d);
/* The shape and hash of every entry of a received "snapshots" object. */
int bundle_check_snapshots(const json_t *snaps, struct bf_diag *d);
/* Every entry of snaps is named by some run of runs. */
int bundle_check_snapshots_named(const json_t *snaps, const json_t *runs,
    struct bf_diag *d);

/* bundle-suite.c: a suite's bundle (version 3). */
/* Set doc's "recipes" to [{"workload", "recipe", "recipe_sha256"}], one per
 * entry of job (a suite's stored document) with recipes[i] its recipe as
 * stored. BF_ERR_INVALID (d says it) when they do not pair up. */
int bundle_export_recipes(const json_t *job, const json_t *recipes, json_t *doc,
    struct bf_diag *d);
/* A received "recipes": 1..BF_MAX_SUITE entries, entry i the workload and
 * recipe of suite[i] of the bundle's job (parsed as a job), no workload
 * twice, each recipe_sha256 recomputed. */
int bundle_check_recipes(const json_t *doc, struct bf_diag *d);
/* A version 3 run's "workload": its axis workload, a workload of doc's recipes. */
int bundle_check_run_workload(const json_t *doc, const json_t *run, const char *path,
    struct bf_diag *d);

/* bundle-kernels.c: the kernels a job built (issue 18). */
/* Set doc's "kernel_builds" to [{"name", "release", "key", "*_sha256"}], one
 * per kernel of job's "kernels" that a run of runs (the store's view, with
 * req_kernel) booted; no key at all when the job builds none. */
int bundle_export_kernels(struct store *st, const json_t *job, const json_t *runs, json_t *doc,
    struct bf_diag *d);
/* A received "kernel_builds" (optional): each entry's keys, hashes, a
 * release, and a name that is a kernel of the bundle's job. */
int bundle_check_kernels(const json_t *doc, struct bf_diag *d);

#endif
