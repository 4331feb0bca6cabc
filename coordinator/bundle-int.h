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

#endif
