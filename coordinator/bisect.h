/*
 * bisect.h: bisecting a performance regression between two kernel commits
 * with statistics (issue 18; docs/api.md "Bisections").
 *
 * POST /api/v1/bisections takes
 *   {"git": "/srv/linux.git", "good": "v6.9", "bad": "v6.10",
 *    "kernel": {"config": "tinyconfig", "fragments": [...], "patches": [...],
 *               "localversion": "-bfb"},        the spec at every commit (kspec.h)
 *    "recipe": "page-touch", "preset": "test", "params": {...},
 *    "metric": "pages_per_s",                   one of the recipe's metrics
 *    "direction": "higher_is_better" | "lower_is_better"  default: the metric's
 *    "threshold_pct": 2,                        (0, BF_MAX_BISECT_THRESHOLD]
 *    "machines": {"names": ["vm1"]},            as a job's ("block" refused)
 *    "boots_per_round": 2, "max_rounds": 4, "max_steps": 16,
 *    "iterations": 3, "warmup": 0,              each run's
 *    "knobs", "knobs_optional", "bind", "aslr", "drop_caches", "boot": as a job's}
 *
 * The driver (bisect-drive.c, in the scheduler's process) resolves good
 * and bad to commits on a builder and lists good..bad (first parent,
 * oldest first) with `benchfleet-agent build`'s argv commands; then each
 * step is a job measuring kernels good, bad and mid (the midpoint of the
 * open interval, git bisect's skip rule around skipped commits) on
 * boots_per_round interleaved boots. Its verdict pools mid's boots of the
 * step's rounds, and good's and bad's of every step so far
 * (bisect_classify); an inconclusive mid gets another round (a new job)
 * up to max_rounds, then is skipped. The store holds every decision.
 */
#ifndef BF_BISECT_H
#define BF_BISECT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "err.h"
#include "stats.h"

struct recipes;
struct store;
struct events;

#define BISECT_DEFAULT_THRESHOLD	2.0
#define BISECT_DEFAULT_BOOTS		2
#define BISECT_DEFAULT_ROUNDS		4
#define BISECT_DEFAULT_STEPS		16
#define BISECT_DEFAULT_ITERATIONS	3
#define BISECT_MAX_SUBJECT		120	/* bytes of a commit subject kept */

/*
 * Check a POST body (parsed) and make the canonical spec the store keeps:
 * every field checked, every error into l (err.h's list, as a job's), the
 * step job of the bisection (with good and bad as its commits) parsed,
 * validated against its recipe and planned as POST /jobs would, the git
 * path, config and patches under roots (kspec_check_roots). BF_ERR_INVALID
 * with d the first error; BF_ERR_NOTFOUND naming "recipe" for an unknown
 * recipe. *specp: a new object (the caller's).
 */
int bisect_spec_check(const json_t *body, const struct recipes *rs, const char *roots,
    const char *workdir_root, json_t **specp, struct bf_diag *d, struct bf_diag_list *l);
/* A good/bad revision name: 1..BF_MAX_BISECT_REV of [A-Za-z0-9._/~^-],
 * a letter or digit first, no "..", "@{", "//", trailing '/', '.' or
 * ".lock" (so never an option of git nor a range). */
int bisect_check_rev(const char *s, const char *field, struct bf_diag *d);

/*
 * The job of one round of a step: spec's job fields, kernels good, bad
 * and mid at those shas, matrix kernel [good, bad, mid], boots_per_round
 * interleaved boots; name "bisect ID step S round R". New reference.
 */
json_t *bisect_step_job(const json_t *spec, int64_t id, int64_t step, int64_t round,
    const char *good, const char *bad, const char *mid);

/* The samples of one kernel: mid's over a step's rounds, good's and bad's
 * over the steps so far (boot ids distinct across rounds and steps). */
struct bisect_samples {
	const double *v;
	const int *boot;
	size_t n;
};

enum bisect_verdict {
	BISECT_MORE = 0,	/* another round */
	BISECT_GOOD,
	BISECT_BAD,
	BISECT_SKIP,		/* inconclusive at max_rounds, or mid did not run */
	BISECT_NODIFF		/* good and bad do not differ: the bisection fails */
};
const char *bisect_verdict_name(enum bisect_verdict v);

/* B vs A: the % change and its 95% Fieller CI, Welch's p. */
struct bisect_cmp {
	double pct, lo, hi, p;
	int significant;	/* stats_compare's */
};

struct bisect_class {
	enum bisect_verdict verdict;
	struct stats_summary good, bad, mid;	/* boot means when several boots */
	int boot_means;
	struct bisect_cmp bad_vs_good, mid_vs_good, mid_vs_bad;
	char why[256];
};

/*
 * Classify mid (mid may have n 0: it did not run) against good and bad.
 * higher_better: the metric's direction; a regression goes the other way.
 * First good vs bad must differ significantly by >= threshold_pct in the
 * regression direction (else MORE, or NODIFF at the last round or when
 * bad is significantly better). Then mid is BAD when it differs from good
 * significantly in the regression direction and its mean is closer to
 * bad's; GOOD when it differs from bad significantly in the improvement
 * direction and is closer to good's; else MORE, SKIP at the last round.
 */
int bisect_classify(const struct bisect_samples *good, const struct bisect_samples *bad,
    const struct bisect_samples *mid, int higher_better, double threshold_pct,
    int last_round, struct bisect_class *out);
/* out's numbers as the step's stats JSON (new reference). */
json_t *bisect_class_json(const struct bisect_class *c);

/*
 * The next commit to measure in the open interval (lo, hi) of n commits
 * (lo -1: the good commit; hi a known bad index), skipping skipped[i]:
 * git bisect's midpoint, then the nearest unskipped commit around it.
 * Returns its index, BISECT_NEXT_DONE (hi is the first bad: hi == lo + 1)
 * or BISECT_NEXT_SKIPPED (every commit between is skipped).
 */
#define BISECT_NEXT_DONE	(-1)
#define BISECT_NEXT_SKIPPED	(-2)
int64_t bisect_next(int64_t lo, int64_t hi, const unsigned char *skipped, size_t n);

/*
 * The document `benchfleet-agent build` runs on the builder to resolve a
 * bisection (docs/agent-protocol.md): git rev-parse of good and bad
 * (captured as "good", "bad"), merge-base --is-ancestor, and git log
 * --first-parent --reverse of good..bad as "bf-commit SHA SUBJECT" lines;
 * every value one argv element. New reference, NULL on ENOMEM.
 */
json_t *bisect_resolve_doc(const char *git, const char *good, const char *bad);

/* The driver (bisect-drive.c). */
struct transport;
struct ssh_target;
struct runner_agent;
struct bisect_env {
	struct store *st;
	const struct recipes *rs;
	struct events *ev;			/* may be NULL */
	const char *known_hosts;
	int connect_timeout_ms, link_timeout_ms;
	/* how the builder is reached: transport.h's connect */
	int (*connect)(void *arg, const struct ssh_target *t, struct transport **out,
	    struct bf_diag *d);
	void *connect_arg;
	const struct runner_agent *agents;
	size_t nagents;
	const char *agent_remote;
	const char *workdir_root;
	void (*kick)(void *arg);		/* new jobs: wake the workers */
	void *kick_arg;
};
/* One pass over every running bisection: resolve, follow, classify, make
 * the next step's job. Safe to run again at any moment (a restart). */
int bisect_tick(const struct bisect_env *env);
struct bisect_driver;
/* A thread running bisect_tick on bisect_driver_kick and every 2 s. */
int bisect_driver_start(const struct bisect_env *env, struct bisect_driver **out);
void bisect_driver_kick(struct bisect_driver *b);	/* accepts NULL */
void bisect_driver_stop(struct bisect_driver *b);	/* joins; accepts NULL */

/* The GET view of a bisection: its row, spec, steps with numbers, commits
 * counted (not listed) and first_bad {sha, subject}. New reference. */
json_t *bisect_view(struct store *st, int64_t id, int with_steps, int *err);
/* The newest limit rows (<= STORE_MAX_PAGE) as bisect_view without steps. */
json_t *bisect_view_list(struct store *st, size_t limit, int *err);
/* Publish a "bisection" event of id's row (no steps). */
void bisect_event(struct events *ev, struct store *st, int64_t id);

#endif
