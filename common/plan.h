/*
 * plan.h: what a job runs, decided in one place and typed. plan_job() turns
 * a validated job and its recipe into cells and runs; the job handler
 * (POST /jobs) and the reproduction handler store exactly these runs, one
 * row each, with their plan in columns (runs.run_order, iterations, warmup,
 * timeout_s). plan_step() is the one builder of the agent's step for a run.
 *
 * Claim order. The runs of one job are claimed by ascending run_order:
 *   "interleaved" (the default): boot-major, every cell once per boot
 *       (boot 0 of cells 0..n-1, then boot 1 of each, ...), so drift of a
 *       machine over the job's time spreads over every cell alike;
 *   "sequential": cell-major, every boot of cell 0, then of cell 1, ...
 * Jobs without "order" have always been claimed boot-major; job.h says so.
 * Before run_order, the claim applies only what keeps boots together (the
 * boot the machine is in first, boots no other machine has started next)
 * and the oldest job first (coordinator/store.h, store_run_claim).
 *
 * run_order = plan_run_order(order, cell, boot); one boot later of the
 * same cell is always PLAN_ORDER_BOOT_STEP more, whatever the order, which
 * is how the store ranks a boot that adaptive repetitions add to a cell.
 * The steps are stored in rows: never change them.
 */
#ifndef BF_PLAN_H
#define BF_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "caps.h"
#include "err.h"
#include "job.h"
#include "matrix.h"
#include "recipe.h"

enum plan_order {
	PLAN_INTERLEAVED = 0,	/* boot-major, the default */
	PLAN_SEQUENTIAL,	/* cell-major */
};

#define PLAN_ORDER_BOOT_STEP	4096		/* > every cell index */
#define PLAN_ORDER_CELL_STEP	(128 * 4096)	/* > every boot index * BOOT_STEP */
_Static_assert(BF_MAX_CELLS <= PLAN_ORDER_BOOT_STEP, "cells fit between two boots");
_Static_assert(BF_MAX_BOOTS * PLAN_ORDER_BOOT_STEP <= PLAN_ORDER_CELL_STEP,
    "boots fit between two cells");

/* One run of a job: what runs.* holds besides the cell's values. */
struct plan_run {
	size_t cell;		/* index into plan.cells (== its matrix index) */
	int boot;		/* boot repetition, 0.. */
	int64_t order;		/* claim rank within the job: plan_run_order() */
	int iterations;		/* measured iterations, 1..BF_MAX_ITERATIONS */
	int warmup;		/* unmeasured ones before them, 0..BF_MAX_WARMUP */
	int timeout_s;		/* per iteration, 1..BF_MAX_TIMEOUT_S */
	size_t machine;		/* index into plan.machines, when it has any */
};

struct plan {
	enum plan_order order;
	struct matrix_cell *cells;	/* owned (matrix.h) */
	size_t ncells;
	struct plan_run *runs;		/* owned; boot-major (claims go by .order) */
	size_t nruns;			/* ncells * job->boots */
	/* a suite (plan_suite): cell i is of entry cell_entry[i]; entry e's
	 * cells are entry_base[e] .. entry_base[e + 1] - 1. NULL otherwise. */
	size_t *cell_entry;
	size_t *entry_base;		/* nentries + 1 of them */
	size_t nentries;
	/* the machine selector, borrowed from the job: a class or names */
	const char *machine_class;
	char *const *machine_names;
	size_t nmachine_names;
	/* machines.spread "block" (plan_block): the machines, owned; each run
	 * is for machines[run.machine] only. NULL and 0 otherwise. */
	char **machines;
	size_t nmachines;
};

/*
 * The plan of a job that passed job_validate() against r: cells (the
 * matrix expanded) and their runs, boots x cells of them. BF_ERR_INVALID naming "repetitions.boots" when there would be
 * more than BF_MAX_CELLS runs. Runs are listed boot-major (boot 0 of every
 * cell first), the order rows have always been stored in. *out freed with
 * plan_free(); it borrows from job, which must outlive it.
 */
int plan_job(const struct job_spec *job, const struct recipe *r, struct plan **out,
    struct bf_diag *d);
void plan_free(struct plan *p);			/* accepts NULL */
/*
 * The plan of a suite job that passed job_validate_suite() against recs
 * (one recipe per entry): each entry's cells as its own job's, numbered on
 * across the entries (entry 0's first), each with the axis "workload" =
 * the entry's label first and a label "workload=LABEL ..."; runs boot-major
 * like plan_job's, each ranked plan_run_of(entry's job, its recipe, global
 * cell, boot). At most BF_MAX_CELLS cells and runs in all.
 */
int plan_suite(const struct job_spec *job, const struct recipe *const *recs,
    struct plan **out, struct bf_diag *d);

/*
 * machines.spread "block": p's runs, one set per machine of names (n >= 1,
 * each copied), set m for names[m] only, each run keeping its cell, boot
 * and rank (a machine claims only its own set, so ranks need not differ
 * across sets). BF_ERR_INVALID naming "machines.spread" when the sets make
 * more than BF_MAX_CELLS runs; p is unchanged on error.
 */
int plan_block(struct plan *p, const char *const *names, size_t n, struct bf_diag *d);

/* The job's claim order ("order", default interleaved). */
enum plan_order plan_order_of(const struct job_spec *job);
/* The claim rank of boot of cell; -1 when cell or boot is out of range. */
int64_t plan_run_order(enum plan_order order, size_t cell, int boot);
/* The run of that cell and boot as plan_job plans it; boot may go up to
 * max_boots - 1 of an adaptive job (adaptive repetitions add boots).
 * BF_ERR_INVALID when either is out of range for the job. */
int plan_run_of(const struct job_spec *job, const struct recipe *r, size_t cell, int boot,
    struct plan_run *out);

/*
 * What the agent's step is made of: one run, its cell's values and knobs,
 * and the job's machine state (bind, aslr, drop_caches). The run's
 * iterations, warmup and timeout are checked against their caps here, so
 * a value from anywhere (a store row) never reaches the agent unchecked.
 */
struct plan_step_in {
	int64_t run_id;
	const struct plan_run *run;
	const struct job_spec *job;
	const struct recipe *recipe;
	const json_t *values;		/* every parameter's value */
	const json_t *knobs;		/* requested knobs, or NULL / {} for none */
	const char *workdir_root;	/* path parameters must stay under it */
};

/*
 * The step document (docs/agent-protocol.md). BF_ERR_INVALID (d says why)
 * when a value does not render, a path is not under workdir_root or the
 * run's numbers are out of range. *stepp is a new reference.
 */
int plan_step(const struct plan_step_in *in, json_t **stepp, struct bf_diag *d);

#endif
