/*
 * store-samples.c: a job's samples for reports, typed. The rows stream
 * from the store (cell, metric, boot, value; ordered as the statistics
 * read them) straight into one array of values and one of boots per
 * (cell, metric): 12 bytes a sample, no JSON object per sample, so a
 * report of millions of samples holds them in tens of MiB. The cells'
 * own fields (label, axes) stay JSON: there are few of them.
 */
#include <stdlib.h>
#include <string.h>

#include "store-int.h"

/* The set's own copy of s (metric names and units repeat across cells:
 * one copy each). NULL gives NULL in *out. BF_ERR_ALLOC. */
static int
samples_intern(struct store_samples *ss, const char *s, const char **out)
{
	char **nv;
	size_t i;

	*out = NULL;
	if (s == NULL)
		return 0;
	for (i = ss->nstr; i > 0; i--)
		if (strcmp(ss->str[i - 1], s) == 0) {
			*out = ss->str[i - 1];
			return 0;
		}
	if ((nv = realloc(ss->str, (ss->nstr + 1) * sizeof(*nv))) == NULL)
		return BF_ERR_ALLOC;
	ss->str = nv;
	if ((nv[ss->nstr] = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	*out = nv[ss->nstr++];
	return 0;
}

/* A new, empty series for metric (unit) at the end of cell c. */
static int
samples_series_new(struct store_samples *ss, struct store_cell *c, const char *metric,
    const char *unit, struct store_series **out)
{
	struct store_series *ns, *se;
	int r;

	if ((ns = realloc(c->series, (c->nseries + 1) * sizeof(*ns))) == NULL)
		return BF_ERR_ALLOC;
	c->series = ns;
	se = &ns[c->nseries];
	memset(se, 0, sizeof(*se));
	c->nseries++;
	if ((r = samples_intern(ss, metric, &se->metric)) != 0 ||
	    (r = samples_intern(ss, unit, &se->unit)) != 0)
		return r;
	*out = se;
	return 0;
}

/* Append (boot, v) to se; *cap is its room, doubled as it fills. */
static int
samples_push(struct store_series *se, size_t *cap, int boot, double v)
{
	double *nv;
	int *nb;
	size_t nc;

	if (se->n == *cap) {
		nc = *cap ? 2 * *cap : 16;
		if ((nv = realloc(se->v, nc * sizeof(*nv))) == NULL)
			return BF_ERR_ALLOC;
		se->v = nv;
		if ((nb = realloc(se->boot, nc * sizeof(*nb))) == NULL)
			return BF_ERR_ALLOC;
		se->boot = nb;
		*cap = nc;
	}
	se->v[se->n] = v;
	se->boot[se->n] = boot;
	se->n++;
	return 0;
}

/* A finished series gives back its arrays' unused room. */
static void
samples_trim(struct store_series *se, size_t cap)
{
	double *nv;
	int *nb;

	if (se == NULL || se->n == cap || se->n == 0)
		return;
	if ((nv = realloc(se->v, se->n * sizeof(*nv))) != NULL)
		se->v = nv;
	if ((nb = realloc(se->boot, se->n * sizeof(*nb))) != NULL)
		se->boot = nb;
}

static struct store_samples *
samples_alloc(void)
{
	struct store_samples *ss = calloc(1, sizeof(*ss));

	if (ss != NULL)
		ss->owns = 1;
	return ss;
}

void
store_samples_free(struct store_samples *ss)
{
	size_t i, k;

	if (ss == NULL)
		return;
	for (i = 0; ss->owns && ss->cell != NULL && i < ss->ncells; i++) {
		for (k = 0; k < ss->cell[i].nseries; k++) {
			free(ss->cell[i].series[k].v);
			free(ss->cell[i].series[k].boot);
		}
		free(ss->cell[i].series);
		free(ss->cell[i].label);
		free(ss->cell[i].axes);
	}
	if (ss->owns)
		free(ss->recipe);
	for (i = 0; i < ss->nstr; i++)
		free(ss->str[i]);
	free(ss->str);
	free(ss->cell);
	json_decref(ss->doc);
	free(ss);
}

/*
 * A series while its cell is read: its room, and each sample's iteration
 * and run, so that it can be put in (boot, iteration, run) order at the
 * end of the cell if the rows did not come in it.
 */
struct fill_series {
	size_t cap;
	int *iter;
	int64_t *run;
	int unsorted;
};

struct fill_rec {
	int boot, iter;
	int64_t run;
	double v;
};

static int
fill_rec_cmp(const void *pa, const void *pb)
{
	const struct fill_rec *a = pa, *b = pb;

	if (a->boot != b->boot)
		return a->boot < b->boot ? -1 : 1;
	if (a->iter != b->iter)
		return a->iter < b->iter ? -1 : 1;
	return a->run < b->run ? -1 : a->run > b->run;
}

static int
series_name_cmp(const void *pa, const void *pb)
{
	return strcmp(((const struct store_series *)pa)->metric,
	    ((const struct store_series *)pb)->metric);
}

/* Append one sample (and its key) to se / fs, doubling their room. */
static int
fill_push(struct store_series *se, struct fill_series *fs, int boot, int iter, int64_t run,
    double v)
{
	size_t nc;
	void *p;

	if (se->n == fs->cap) {
		nc = fs->cap ? 2 * fs->cap : 16;
		if ((p = realloc(se->v, nc * sizeof(*se->v))) == NULL)
			return BF_ERR_ALLOC;
		se->v = p;
		if ((p = realloc(se->boot, nc * sizeof(*se->boot))) == NULL)
			return BF_ERR_ALLOC;
		se->boot = p;
		if ((p = realloc(fs->iter, nc * sizeof(*fs->iter))) == NULL)
			return BF_ERR_ALLOC;
		fs->iter = p;
		if ((p = realloc(fs->run, nc * sizeof(*fs->run))) == NULL)
			return BF_ERR_ALLOC;
		fs->run = p;
		fs->cap = nc;
	}
	if (se->n > 0 && !fs->unsorted) {
		size_t l = se->n - 1;

		/* keys are unique (the samples' UNIQUE): in order means rising */
		if (se->boot[l] > boot || (se->boot[l] == boot && (fs->iter[l] > iter ||
		    (fs->iter[l] == iter && fs->run[l] >= run))))
			fs->unsorted = 1;
	}
	se->v[se->n] = v;
	se->boot[se->n] = boot;
	fs->iter[se->n] = iter;
	fs->run[se->n] = run;
	se->n++;
	return 0;
}

/* The end of cell c: each series in (boot, iteration, run) order, its
 * room given back, its keys freed; the series by name when byname. */
static int
fill_cell_end(struct store_cell *c, struct fill_series *fs, int byname)
{
	struct fill_rec *rec;
	size_t k, i;
	int r = 0;

	for (k = 0; c != NULL && k < c->nseries; k++) {
		struct store_series *se = &c->series[k];

		if (r == 0 && fs[k].unsorted) {
			if ((rec = malloc(se->n * sizeof(*rec))) == NULL) {
				r = BF_ERR_ALLOC;
			} else {
				for (i = 0; i < se->n; i++)
					rec[i] = (struct fill_rec){ se->boot[i], fs[k].iter[i],
					    fs[k].run[i], se->v[i] };
				qsort(rec, se->n, sizeof(*rec), fill_rec_cmp);
				for (i = 0; i < se->n; i++) {
					se->v[i] = rec[i].v;
					se->boot[i] = rec[i].boot;
				}
				free(rec);
			}
		}
		samples_trim(se, fs[k].cap);
		free(fs[k].iter);
		free(fs[k].run);
		memset(&fs[k], 0, sizeof(fs[k]));
	}
	if (r == 0 && byname && c != NULL && c->nseries > 1)
		qsort(c->series, c->nseries, sizeof(*c->series), series_name_cmp);
	return r;
}

/*
 * Rows of Q_J_SERIES (cell_index, run, metric, unit, boot, iteration,
 * value) into ss's cells, which are in cell_index order.
 * On SQLite the rows come in the indexes' order (cell, boot, run, then
 * the run's samples by boot, iteration, metric): no sort of the whole job
 * in the query, which spilled to temporary files past a million samples.
 * Each series is put in (boot, iteration, run) order at the end of its
 * cell (a no-op unless two runs of a cell share a boot) and the cell's
 * series by name (byname: SQLite's BINARY order is strcmp's). PostgreSQL
 * sorts in the query as before (its collation orders the names).
 */
static int
samples_fill(struct store *s, struct db_stmt *st, struct store_samples *ss, int byname)
{
	struct store_cell *c = NULL;
	struct fill_series *fs = NULL, *nfs;
	struct store_series *se;
	const char *mn;
	int64_t ci, cur = -1;
	size_t at = 0, k = 0, nfs_cap = 0;
	int r;

	while ((r = store_q_step(s, st)) == 1) {
		ci = db_col_int64(st, 0);
		if ((mn = db_col_text(st, 2)) == NULL)
			continue;
		if (ci != cur) {
			if ((r = fill_cell_end(c, fs, byname)) != 0)
				goto out;
			c = NULL;
			/* both in cell_index order: walk forward to its cell */
			while (at < ss->ncells && ss->cell[at].cell_index < ci)
				at++;
			if (at == ss->ncells || ss->cell[at].cell_index != ci)
				continue;	/* no such cell: cannot happen, cells are its runs */
			c = &ss->cell[at];
			cur = ci;
			k = 0;
		}
		if (c == NULL)
			continue;
		/* a run's rows cycle through its metrics: the next is likely */
		if (k >= c->nseries || strcmp(c->series[k].metric, mn) != 0) {
			if (c->nseries > 0 && strcmp(c->series[(k + 1) % c->nseries].metric,
			    mn) == 0)
				k = (k + 1) % c->nseries;
			else
				for (k = 0; k < c->nseries && strcmp(c->series[k].metric, mn) != 0;
				    k++)
					;
		}
		if (k == c->nseries) {
			if (k == nfs_cap) {
				if ((nfs = realloc(fs, (nfs_cap + 16) * sizeof(*nfs))) == NULL) {
					r = BF_ERR_ALLOC;
					goto out;
				}
				fs = nfs;
				memset(fs + nfs_cap, 0, 16 * sizeof(*fs));
				nfs_cap += 16;
			}
			if ((r = samples_series_new(ss, c, mn, db_col_text(st, 3), &se)) != 0)
				goto out;
		}
		if ((r = fill_push(&c->series[k], &fs[k], db_col_int(st, 4), db_col_int(st, 5),
		    db_col_int64(st, 1), db_col_double(st, 6))) != 0)
			goto out;
	}
	if (r == 0)
		r = fill_cell_end(c, fs, byname);
out:
	if (r != 0)
		(void)fill_cell_end(c, fs, 0);	/* frees the keys */
	free(fs);
	return r;
}

/*
 * Only samples of runs that ended done are reported: a failed or lost run's
 * values may come from a broken boot or a half-run iteration, and mixing
 * them in would skew the statistics without anyone noticing.
 */
int
store_job_samples(struct store *s, int64_t job_id, struct store_samples **out)
{
	struct store_samples *ss = NULL;
	struct store_cell *nc, *c;
	struct db_stmt *st;
	size_t cap = 0;
	int r;

	*out = NULL;
	if (s == NULL)
		return BF_ERR_INVALID;
	s = store_rlock(s);
	if ((ss = samples_alloc()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	ss->job = job_id;
	if ((r = store_q(s, Q_J_HEAD, &st, "I", job_id)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	r = store_col_text(st, 1, &ss->recipe);
	db_reset(st);
	if (r != 0)
		goto out;
	if ((r = store_q(s, Q_J_CELLS, &st, "I", job_id)) != 0)
		goto out;
	/* one spare cell at the end, as the report's walks expect */
	while ((r = store_q_step(s, st)) == 1) {
		if (ss->ncells + 1 >= cap) {
			size_t ncap = cap == 0 ? 16 : cap * 2;

			if (ncap > SIZE_MAX / sizeof(*nc) ||
			    (nc = realloc(ss->cell, ncap * sizeof(*nc))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			memset(nc + cap, 0, (ncap - cap) * sizeof(*nc));
			ss->cell = nc;
			cap = ncap;
		}
		c = &ss->cell[ss->ncells++];
		c->cell_index = db_col_int64(st, 1);
		if ((r = store_col_text(st, 2, &c->label)) != 0 ||
		    (r = store_col_dup(st, 3, &c->axes)) != 0)
			goto out;
	}
	if (r < 0)
		goto out;
	if (ss->cell == NULL && (ss->cell = calloc(1, sizeof(*ss->cell))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = store_q(s, Q_J_SERIES, &st, "I", job_id)) != 0 ||
	    (r = samples_fill(s, st, ss, !s->pg)) != 0)
		goto out;
	*out = ss;
	ss = NULL;
	r = 0;
out:
	store_unlock(s);
	store_samples_free(ss);
	return r;
}

int
store_samples_from_cells(const json_t *cells, struct store_samples **out)
{
	struct store_samples *ss = NULL;
	struct store_series *se;
	const json_t *cj, *sj;
	const char *mn;
	size_t i, j, k, *caps = NULL, ncap = 0;
	int r = BF_ERR_ALLOC;

	*out = NULL;
	if ((ss = samples_alloc()) == NULL ||
	    (ss->doc = json_pack("{s:O}", "cells", (json_t *)cells)) == NULL ||
	    (ss->cell = calloc(json_array_size(cells) + 1, sizeof(*ss->cell))) == NULL)
		goto out;
	ss->ncells = json_array_size(cells);
	json_array_foreach(cells, i, cj) {
		struct store_cell *c = &ss->cell[i];

		json_array_foreach(json_object_get(cj, "samples"), j, sj) {
			if ((mn = json_string_value(json_object_get(sj, "metric"))) == NULL)
				continue;
			/* a bundle's samples need not come grouped by metric */
			for (k = 0; k < c->nseries && strcmp(c->series[k].metric, mn) != 0; k++)
				;
			if (k == c->nseries) {
				if (k == ncap) {
					size_t *nc = realloc(caps, (ncap + 16) * sizeof(*nc));

					if (nc == NULL)
						goto out;
					caps = nc;
					ncap += 16;
				}
				caps[k] = 0;
				if ((r = samples_series_new(ss, c, mn, json_string_value(
				    json_object_get(sj, "unit")), &se)) != 0)
					goto out;
				r = BF_ERR_ALLOC;
			}
			se = &c->series[k];
			if (samples_push(se, &caps[k], (int)json_integer_value(json_object_get(sj,
			    "boot")), json_number_value(json_object_get(sj, "value"))) != 0)
				goto out;
		}
	}
	*out = ss;
	ss = NULL;
	r = 0;
out:
	free(caps);
	store_samples_free(ss);
	return r;
}

int
store_samples_select(const struct store_samples *ss, int (*keep)(const json_t *cell,
    void *arg), void *arg, struct store_samples **out)
{
	struct store_samples *v = NULL;
	const json_t *cj;
	json_t *cells;
	size_t i;
	int r = BF_ERR_ALLOC;

	*out = NULL;
	if ((v = calloc(1, sizeof(*v))) == NULL ||
	    (v->doc = json_copy(ss->doc)) == NULL ||
	    (cells = json_array()) == NULL)
		goto out;
	if (json_object_set_new(v->doc, "cells", cells) != 0 ||
	    (v->cell = calloc(ss->ncells + 1, sizeof(*v->cell))) == NULL)
		goto out;
	json_array_foreach(json_object_get(ss->doc, "cells"), i, cj) {
		if (i >= ss->ncells || !keep(cj, arg))
			continue;
		if (json_array_append((json_t *)cells, (json_t *)cj) != 0)
			goto out;
		v->cell[v->ncells++] = ss->cell[i];	/* the series stay ss's */
	}
	*out = v;
	v = NULL;
	r = 0;
out:
	store_samples_free(v);
	return r;
}

const struct store_series *
store_cell_series(const struct store_cell *c, const char *metric)
{
	size_t k;

	for (k = 0; c != NULL && k < c->nseries; k++)
		if (strcmp(c->series[k].metric, metric) == 0)
			return &c->series[k];
	return NULL;
}
