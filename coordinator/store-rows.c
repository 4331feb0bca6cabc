/*
 * store-rows.c: runs, their samples and a job's cells read back as typed
 * rows (store.h: store_job_runs, store_run_get, store_job_cells). The API,
 * the event stream and bundles show them through api-view.c; the store
 * writes no JSON for them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

#include "err.h"
#include "store.h"
#include "store-int.h"

/* A run's text columns in RUN_COLS (store.c), by position; json: JSON text
 * we wrote, kept byte for byte for the view to parse. */
static const struct {
	int col;
	size_t off;
	int json;
} run_text[] = {
	{ .col = 3, .off = offsetof(struct store_run, label) },
	{ .col = 4, .off = offsetof(struct store_run, axes), .json = 1 },
	{ .col = 5, .off = offsetof(struct store_run, values), .json = 1 },
	{ .col = 8, .off = offsetof(struct store_run, state) },
	{ .col = 9, .off = offsetof(struct store_run, machine) },
	{ .col = 10, .off = offsetof(struct store_run, hostname) },
	{ .col = 11, .off = offsetof(struct store_run, kernel) },
	{ .col = 12, .off = offsetof(struct store_run, boot_id) },
	{ .col = 16, .off = offsetof(struct store_run, error) },
	{ .col = 17, .off = offsetof(struct store_run, knobs_requested), .json = 1 },
	{ .col = 18, .off = offsetof(struct store_run, knobs), .json = 1 },
	{ .col = 19, .off = offsetof(struct store_run, req_kernel) },
	{ .col = 20, .off = offsetof(struct store_run, req_cmdline) },
	{ .col = 21, .off = offsetof(struct store_run, cmdline) },
	{ .col = 22, .off = offsetof(struct store_run, snapshot_sha256) },
	{ .col = 23, .off = offsetof(struct store_run, fingerprint_doc_sha256) },
	{ .col = 24, .off = offsetof(struct store_run, req_machine) },
};
#define RUN_NTEXT	(sizeof(run_text) / sizeof(run_text[0]))

static char **
run_field(struct store_run *ru, size_t k)
{
	return (char **)(void *)((char *)ru + run_text[k].off);
}

static void
run_clear(struct store_run *ru)
{
	size_t k;

	for (k = 0; k < RUN_NTEXT; k++)
		free(*run_field(ru, k));
}

/* The row st stands on (RUN_COLS) into ru. */
static int
run_fill(struct db_stmt *st, struct store_run *ru)
{
	size_t k;
	int r;

	memset(ru, 0, sizeof(*ru));
	ru->id = db_col_int64(st, 0);
	ru->job_id = db_col_int64(st, 1);
	ru->cell_index = db_col_int64(st, 2);
	ru->boot = db_col_int64(st, 6);
	ru->attempt = db_col_int64(st, 7);
	if ((ru->has_started = db_col_type(st, 13) != DB_NULL))
		ru->started_at = db_col_double(st, 13);
	if ((ru->has_finished = db_col_type(st, 14) != DB_NULL))
		ru->finished_at = db_col_double(st, 14);
	if ((ru->has_exit = db_col_type(st, 15) != DB_NULL))
		ru->exit_status = db_col_int64(st, 15);
	for (k = 0; k < RUN_NTEXT; k++) {
		if (run_text[k].json)
			r = store_col_dup(st, run_text[k].col, run_field(ru, k));
		else
			r = store_col_text(st, run_text[k].col, run_field(ru, k));
		if (r != 0)
			return r;
	}
	return 0;
}

static void
pool_free(struct store_sample_row *p, size_t n)
{
	size_t i;

	for (i = 0; p != NULL && i < n; i++) {
		free(p[i].metric);
		free(p[i].unit);
	}
	free(p);
}

/* Column positions of one sample query: -1 for a column it has not. */
struct sample_cols {
	int run, cell, boot, iteration, metric, value, unit;
};
static const struct sample_cols cols_by_run = {
	.run = -1, .cell = -1, .boot = 0, .iteration = 1, .metric = 2, .value = 3, .unit = 4,
};
static const struct sample_cols cols_by_job = {
	.run = 0, .cell = -1, .boot = 1, .iteration = 2, .metric = 3, .value = 4, .unit = 5,
};
static const struct sample_cols cols_cells = {
	.run = 6, .cell = 0, .boot = 3, .iteration = 4, .metric = 1, .value = 5, .unit = 2,
};

/* Step st to its end, appending each row to *pool (*n of *cap used). No
 * cap of its own: a job's samples are bounded when they are written. */
static int
pool_read(struct store *s, struct db_stmt *st, const struct sample_cols *c,
    struct store_sample_row **pool, size_t *n, size_t *cap)
{
	struct store_sample_row *p, *np;
	int r;

	while ((r = store_q_step(s, st)) == 1) {
		if (*n == *cap) {
			size_t nc = *cap == 0 ? 64 : *cap * 2;

			if (nc > SIZE_MAX / sizeof(*np) ||
			    (np = realloc(*pool, nc * sizeof(*np))) == NULL)
				return BF_ERR_ALLOC;
			*pool = np;
			*cap = nc;
		}
		p = &(*pool)[*n];
		memset(p, 0, sizeof(*p));
		(*n)++;
		p->run = c->run >= 0 ? db_col_int64(st, c->run) : 0;
		p->cell_index = c->cell >= 0 ? db_col_int64(st, c->cell) : 0;
		p->boot = db_col_int64(st, c->boot);
		p->iteration = db_col_int64(st, c->iteration);
		p->value = db_col_double(st, c->value);
		if ((r = store_col_text(st, c->metric, &p->metric)) != 0 ||
		    (r = store_col_text(st, c->unit, &p->unit)) != 0)
			return r;
		if (p->metric == NULL)		/* NOT NULL in the schema */
			return BF_ERR_DB;
	}
	return r < 0 ? r : 0;
}

void
store_runs_free(struct store_runs *rs)
{
	size_t i;

	if (rs == NULL)
		return;
	for (i = 0; i < rs->n; i++)
		run_clear(&rs->run[i]);
	free(rs->run);
	pool_free(rs->pool, rs->npool);
	free(rs);
}

static int
by_id(const void *a, const void *b)
{
	const struct store_run *x = *(const struct store_run *const *)a;
	const struct store_run *y = *(const struct store_run *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Point each run at its slice of the pool (sorted by run id). */
static int
runs_attach(struct store_runs *rs)
{
	struct store_run **idx = NULL, key, *kp = &key, **hit;
	size_t i, j;

	if (rs->n == 0 || rs->npool == 0)
		return 0;
	if ((idx = calloc(rs->n, sizeof(*idx))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < rs->n; i++)
		idx[i] = &rs->run[i];
	qsort(idx, rs->n, sizeof(*idx), by_id);
	for (i = 0; i < rs->npool; i = j) {
		for (j = i + 1; j < rs->npool && rs->pool[j].run == rs->pool[i].run; j++)
			;
		key.id = rs->pool[i].run;
		if ((hit = bsearch(&kp, idx, rs->n, sizeof(*idx), by_id)) != NULL) {
			(*hit)->samples = &rs->pool[i];
			(*hit)->nsamples = j - i;
		}
	}
	free(idx);
	return 0;
}

/* Whether job_id exists (1), not (0), or an error. */
static int
job_head(struct store *s, int64_t job_id, char **recipe)
{
	struct db_stmt *st;
	int r;

	if ((r = store_q(s, Q_J_HEAD, &st, "I", job_id)) != 0 || (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 1 && recipe != NULL && store_col_text(st, 1, recipe) != 0)
		r = BF_ERR_ALLOC;
	db_reset(st);
	return r;
}

int
store_job_runs(struct store *s, int64_t job_id, int with_samples, struct store_runs **out)
{
	struct store_runs *rs = NULL;
	struct store_run *nr;
	struct db_stmt *st;
	size_t cap = 0, pcap = 0;
	int r;

	*out = NULL;
	if (s == NULL)
		return BF_ERR_INVALID;
	s = store_rlock(s);
	if ((rs = calloc(1, sizeof(*rs))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = job_head(s, job_id, NULL)) <= 0) {
		r = r == 0 ? BF_ERR_NOTFOUND : r;
		goto out;
	}
	if ((r = store_q(s, Q_R_BY_JOB, &st, "I", job_id)) != 0)
		goto out;
	while ((r = store_q_step(s, st)) == 1) {
		if (rs->n == cap) {
			size_t nc = cap == 0 ? 16 : cap * 2;

			if (nc > SIZE_MAX / sizeof(*nr) ||
			    (nr = realloc(rs->run, nc * sizeof(*nr))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			rs->run = nr;
			cap = nc;
		}
		r = run_fill(st, &rs->run[rs->n]);
		rs->n++;			/* run_clear frees a partial fill */
		if (r != 0)
			goto out;
	}
	if (r < 0)
		goto out;
	if (with_samples && ((r = store_q(s, Q_S_BY_JOB, &st, "I", job_id)) != 0 ||
	    (r = pool_read(s, st, &cols_by_job, &rs->pool, &rs->npool, &pcap)) != 0 ||
	    (r = runs_attach(rs)) != 0))
		goto out;
	*out = rs;
	rs = NULL;
	r = 0;
out:
	store_unlock(s);
	store_runs_free(rs);
	return r;
}

int
store_run_get(struct store *s, int64_t run_id, struct store_runs **out)
{
	struct store_runs *rs = NULL;
	struct db_stmt *st;
	size_t pcap = 0;
	int r;

	*out = NULL;
	if (s == NULL)
		return BF_ERR_INVALID;
	if ((rs = calloc(1, sizeof(*rs))) == NULL ||
	    (rs->run = calloc(1, sizeof(*rs->run))) == NULL) {
		store_runs_free(rs);
		return BF_ERR_ALLOC;
	}
	store_lock(s);
	if ((r = store_q(s, Q_R_GET, &st, "I", run_id)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	r = run_fill(st, &rs->run[0]);
	rs->n = 1;
	db_reset(st);
	if (r != 0)
		goto out;
	if ((r = store_q(s, Q_S_BY_RUN, &st, "I", run_id)) != 0 ||
	    (r = pool_read(s, st, &cols_by_run, &rs->pool, &rs->npool, &pcap)) != 0)
		goto out;
	rs->run[0].samples = rs->pool;
	rs->run[0].nsamples = rs->npool;
	*out = rs;
	rs = NULL;
	r = 0;
out:
	store_unlock(s);
	store_runs_free(rs);
	return r;
}

void
store_cells_free(struct store_cells *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->cell[i].label);
		free(c->cell[i].axes);
	}
	free(c->cell);
	free(c->recipe);
	pool_free(c->pool, c->npool);
	free(c);
}

/*
 * Only samples of runs that ended done are reported: a failed or lost run's
 * values may come from a broken boot or a half-run iteration, and mixing
 * them in would skew the statistics without anyone noticing.
 */
int
store_job_cells(struct store *s, int64_t job_id, struct store_cells **out)
{
	struct store_cells *c = NULL;
	struct store_cell_row *nc, *cell;
	struct db_stmt *st;
	size_t cap = 0, pcap = 0, i, k;
	int r;

	*out = NULL;
	if (s == NULL)
		return BF_ERR_INVALID;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return BF_ERR_ALLOC;
	c->job = job_id;
	store_lock(s);
	if ((r = job_head(s, job_id, &c->recipe)) <= 0) {
		r = r == 0 ? BF_ERR_NOTFOUND : r;
		goto out;
	}
	if ((r = store_q(s, Q_J_CELLS, &st, "I", job_id)) != 0)
		goto out;
	while ((r = store_q_step(s, st)) == 1) {
		if (c->n == cap) {
			size_t ncap = cap == 0 ? 16 : cap * 2;

			if (ncap > SIZE_MAX / sizeof(*nc) ||
			    (nc = realloc(c->cell, ncap * sizeof(*nc))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			c->cell = nc;
			cap = ncap;
		}
		cell = &c->cell[c->n++];
		memset(cell, 0, sizeof(*cell));
		cell->cell_index = db_col_int64(st, 1);
		if ((r = store_col_text(st, 2, &cell->label)) != 0 ||
		    (r = store_col_dup(st, 3, &cell->axes)) != 0)
			goto out;
	}
	if (r < 0)
		goto out;
	if ((r = store_q(s, Q_J_CELL_SAMPLES, &st, "I", job_id)) != 0 ||
	    (r = pool_read(s, st, &cols_cells, &c->pool, &c->npool, &pcap)) != 0)
		goto out;
	/* both in cell_index order: one walk hands each cell its slice */
	for (i = 0, k = 0; i < c->npool; i++) {
		while (k < c->n && c->cell[k].cell_index < c->pool[i].cell_index)
			k++;
		if (k == c->n)
			break;
		if (c->cell[k].cell_index != c->pool[i].cell_index)
			continue;
		if (c->cell[k].nsamples++ == 0)
			c->cell[k].samples = &c->pool[i];
	}
	*out = c;
	c = NULL;
	r = 0;
out:
	store_unlock(s);
	store_cells_free(c);
	return r;
}
