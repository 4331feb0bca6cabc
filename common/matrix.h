/*
 * matrix.h: expansion of a job's matrix into cells, the cartesian product
 * of its axes. Axes vary like nested loops in the order they are written:
 * the first axis slowest, the last fastest. A job without a matrix has one
 * cell.
 */
#ifndef BF_MATRIX_H
#define BF_MATRIX_H

#include <stddef.h>
#include <jansson.h>

#include "err.h"
#include "job.h"
#include "recipe.h"

struct matrix_cell {
	size_t index;		/* 0..ncells-1 */
	json_t *axes;		/* object axis -> value of this cell (owned) */
	json_t *values;		/* every parameter's value for this cell (owned) */
	json_t *knobs;		/* job knobs merged with this cell's knob axes (owned) */
	char *kernel;		/* release to boot (job or axis), or NULL: any */
	char *cmdline;		/* boot.cmdline_base + cmdline (job or axis), or NULL */
	char *label;		/* "loops=1000 mode=a", or "default" with no axes */
};

/* Number of cells, or BF_ERR_TOOBIG over BF_MAX_CELLS (checked without
 * overflow). */
int matrix_count(const json_t *matrix, size_t *countp, struct bf_diag *d);
/* The job must have passed job_validate(). Free with matrix_free(). */
int matrix_expand(const struct job_spec *job, const struct recipe *r,
    struct matrix_cell **cellsp, size_t *ncellsp, struct bf_diag *d);
void matrix_free(struct matrix_cell *cells, size_t ncells);

/* An axis value as a user writes it after "AXIS:" in a baseline
 * (?baseline=thp:never, threads:32, huge:true); "?" for other types. */
const char *matrix_axis_str(const json_t *v, char *buf, size_t bufsz);
/*
 * The baseline cell of each cell for baseline "AXIS:VALUE" (a report's
 * ?baseline=): baseline_of[i] = the index of the cell that has VALUE on
 * AXIS and agrees with cell i on every other axis, or -1 (cell i has VALUE
 * itself, or no cell matches). cells: [{"axes": {...}}, ...] in index
 * order; baseline_of has room for json_array_size(cells) ints. matrix: the
 * job's. BF_ERR_INVALID with d naming "baseline" (what: "job 7", for the
 * text) when baseline is not AXIS:VALUE, AXIS is no axis of matrix, or no
 * cell has VALUE on it.
 */
int matrix_baselines(const json_t *matrix, const json_t *cells, const char *baseline,
    const char *what, int *baseline_of, struct bf_diag *d);

#endif
