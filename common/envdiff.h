/*
 * envdiff.h: differences between environment snapshots (issue 16), as a
 * pure library: no store, no network. A snapshot is the flat object the
 * agent prints (docs/evidence.md): every value a string, or null when the
 * agent could not read it. envdiff_pair compares two (a reproduction
 * against its original), envdiff_drift the runs of one job (a setting that
 * changed mid-job, a pooled machine class), envdiff_render_text prints
 * either for a person.
 *
 * Keys are grouped by a prefix table (envdiff.c), in a fixed display order:
 * kernel, THP/mTHP, hugetlb, vm sysctls, CPU/power, NUMA, firmware,
 * software, other. A key no entry matches is "other". kernel.boot_id is
 * ignored everywhere: it differs on every boot by design.
 *
 * Representation of a value in every output: "a", "b" or "value" is the
 * string, or null. null alone means the snapshot has the key but could not
 * read it ("unreadable"); null with "a_absent" / "b_absent" / "absent"
 * set to true means the snapshot does not have the key at all. Those
 * flags are only present when true.
 *
 * Caps (common/caps.h): BF_MAX_ENVDIFF_KEYS keys listed per diff,
 * BF_MAX_ENVDIFF_VALUES distinct values listed per drifting key,
 * BF_MAX_ENVDIFF_TEXT bytes of one value printed. Whatever is past a cap
 * is counted in the output ("more", "more_values", "more_runs", "+N
 * bytes"), never dropped silently.
 */
#ifndef BF_ENVDIFF_H
#define BF_ENVDIFF_H

#include <stddef.h>
#include <jansson.h>

#include "buf.h"
#include "err.h"

/* The display group of a snapshot key: a static string, never NULL
 * ("THP/mTHP"; "other" when no prefix of the table matches). */
const char *envdiff_group(const char *key);

/* Non-zero when key is left out of every diff (kernel.boot_id). */
int envdiff_ignored(const char *key);

/*
 * The keys whose value differs between snapshots a and b. *out (set only
 * on success; the caller json_decref()s it) is
 *   {"n": 3, "more": 0, "groups": [
 *     {"group": "THP/mTHP", "n": 2, "keys": [
 *       {"key": "transparent_hugepage/defrag", "a": "madvise", "b": "always"},
 *       {"key": "transparent_hugepage/hugepages-64kB/enabled",
 *        "a": null, "a_absent": true, "b": "never"}]}, ...]}
 * n counts every differing key; groups (only those with a difference) in
 * display order, keys in strcmp order. Past BF_MAX_ENVDIFF_KEYS keys in
 * that order, the rest are counted: in "more", and in each group's "n"
 * against the length of its "keys". A key is different when it is in one
 * snapshot only (null on the other side, with *_absent), or its values
 * differ (string vs string, string vs null). a and b must be objects whose
 * values are strings or null: else BF_ERR_INVALID, d naming the key
 * ('b.vm.swappiness: an integer; expected a string or null').
 */
int envdiff_pair(const json_t *a, const json_t *b, json_t **out, struct bf_diag *d);

/*
 * The keys whose value is not the same in all n snapshots (one per run of a
 * job; labels[i] names run i, e.g. its cell and run id, and labels or any
 * labels[i] may be NULL). A NULL snaps[i] is a run without a snapshot and
 * is skipped. *out (set only on success; the caller json_decref()s it) is
 *   {"n": 1, "runs": 5, "more": 0, "keys": [
 *     {"key": "vm.zone_reclaim_mode", "group": "vm sysctls",
 *      "values": [{"value": "0", "count": 3, "first": "cell a run 1", "first_index": 0},
 *                 {"value": "1", "count": 2, "first": "cell b run 4", "first_index": 3}],
 *      "more_values": 0, "more_runs": 0}]}
 * runs is the number of snapshots compared; keys in display order then
 * strcmp order, at most BF_MAX_ENVDIFF_KEYS (the rest counted in "more");
 * values in first-seen order, at most BF_MAX_ENVDIFF_VALUES (the other
 * distinct values counted in "more_values", their runs in "more_runs").
 * "first" is the label of the first run with the value (null without one),
 * "first_index" its index in snaps. A key missing from some snapshots drifts
 * too: its value there is {"value": null, "absent": true, ...}. Validation
 * as envdiff_pair, d naming the run by its label (or "snapshots[i]").
 */
int envdiff_drift(const json_t *const *snaps, const char *const *labels, size_t n,
    json_t **out, struct bf_diag *d);

/*
 * Append a diff of envdiff_pair or envdiff_drift to out as lines for a
 * person, two spaces in:
 *   "  THP/mTHP: transparent_hugepage/defrag: madvise -> always"
 *   "  vm sysctls: vm.zone_reclaim_mode: 0 (3 runs), 1 (2 runs, first cell x)"
 * or "  (none)" when nothing differs. An absent key prints as (absent), an
 * unreadable one as (unreadable). A value (and a key) prints bare when it is
 * a non-empty run of printable ASCII with no space, quote or backslash not
 * starting with '(', else in double quotes with every byte outside
 * 0x20..0x7e, '"' and '\\' as \xNN: no value can end a line or pass for
 * another. Labels print with the same \xNN escapes, unquoted. BF_ERR_INVALID
 * when diff is not shaped as those functions make it; buf errors as they
 * are (BF_ERR_TOOBIG past out's cap). On error out is left as it was.
 */
int envdiff_render_text(const json_t *diff, struct buf *out);

#endif
