/*
 * api-report-mach.c: machines in a job's report (machines.spread, job.h).
 *   any:   the legend says which comparisons have their cells on different
 *          machines, naming them: such a change measures the machines too;
 *   pin:   the legend names the one machine every run ran on;
 *   block: the cells are split by machine (an axis "machine", so each
 *          machine's cell is compared with its baseline on that machine:
 *          the per-machine table), and after it the pooled comparison
 *          with machine as a blocking factor (common/report-block.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"
#include "report-block.h"

#define MACH_CMP_NAMED	4	/* comparisons the "different machines" line names */

static int
run_done(const json_t *run)
{
	const char *st = json_string_value(json_object_get(run, "state"));

	return st != NULL && strcmp(st, "done") == 0;
}

const char *
api_report_spread(const json_t *jobj)
{
	const char *sp = json_string_value(json_object_get(jobj, "spread"));

	return sp != NULL ? sp : "any";
}

/* The done runs' machines of the cell whose cell_index is ci, "a, b"
 * (sorted as they come; at most BF_MAX_STR / 4 bytes). */
static int
cell_machines(const json_t *runs, json_int_t ci, struct buf *b)
{
	const json_t *run;
	const char *m, *p;
	size_t i, n;
	int r;

	buf_reset(b);
	json_array_foreach(json_object_get(runs, "runs"), i, run) {
		if (!run_done(run) || json_integer_value(json_object_get(run, "cell_index")) != ci ||
		    (m = json_string_value(json_object_get(run, "machine"))) == NULL)
			continue;
		n = strlen(m);
		for (p = b->data; p != NULL && (p = strstr(p, m)) != NULL; p += n)
			if ((p == b->data || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
				break;
		if (p != NULL)
			continue;
		if ((r = buf_printf(b, "%s%s", b->len ? ", " : "", m)) != 0)
			return r == BF_ERR_ALLOC ? r : 0;	/* full: what fits */
	}
	return 0;
}

int
api_report_cmp_machines(const json_t *cellsj, const json_t *runs, const int *baseline_of,
    size_t nc, struct buf *line)
{
	struct buf mi, mb, list;
	const json_t *ci, *cb;
	const char *li, *lb;
	size_t i, named = 0, more = 0;
	int r = 0;

	buf_init(&mi, BF_MAX_STR / 4);
	buf_init(&mb, BF_MAX_STR / 4);
	buf_init(&list, BF_MAX_STR - 256);
	for (i = 0; i < nc && runs != NULL; i++) {
		if (baseline_of[i] < 0 || (size_t)baseline_of[i] >= nc)
			continue;
		ci = json_array_get(cellsj, i);
		cb = json_array_get(cellsj, (size_t)baseline_of[i]);
		if ((r = cell_machines(runs, json_integer_value(json_object_get(ci, "cell_index")),
		    &mi)) != 0 || (r = cell_machines(runs, json_integer_value(json_object_get(cb,
		    "cell_index")), &mb)) != 0)
			goto out;
		if (mi.len == 0 || mb.len == 0 || strcmp(mi.data, mb.data) == 0)
			continue;
		if (named == MACH_CMP_NAMED) {
			more++;
			continue;
		}
		li = json_string_value(json_object_get(ci, "label"));
		lb = json_string_value(json_object_get(cb, "label"));
		if ((r = buf_printf(&list, "%s%s on %s vs %s on %s", named ? "; " : "",
		    li && *li ? li : "(all)", mi.data, lb && *lb ? lb : "(all)", mb.data)) != 0) {
			if (r == BF_ERR_ALLOC)
				goto out;
			more++;		/* the line is full: counted */
			r = 0;
			continue;
		}
		named++;
	}
	if (named > 0 && (r = buf_printf(line, "different machines: %s%s%.0zu%s: these "
	    "changes include the machines' own difference (machines.spread pin or block "
	    "keeps a comparison on one machine)", list.data, more ? "; and " : "", more,
	    more ? " more" : "")) != 0)
		goto out;
out:
	buf_free(&mi);
	buf_free(&mb);
	buf_free(&list);
	return r;
}

int
api_report_pin_line(const json_t *jobj, struct buf *line)
{
	const char *pm = json_string_value(json_object_get(jobj, "pinned_machine"));

	if (strcmp(api_report_spread(jobj), "pin") != 0)
		return 0;
	return buf_printf(line, "spread pin: every run of the job on one machine, %s",
	    pm != NULL ? pm : "(none claimed yet)");
}

/* ---- block ---- */

/* The machine a done run of runs with id ran on, or NULL. */
static const char *
run_machine(const json_t *byid, json_int_t id)
{
	char k[32];

	snprintf(k, sizeof(k), "%" JSON_INTEGER_FORMAT, id);
	return json_string_value(json_object_get(byid, k));
}

/* Is cell_index ci one of the cells of only (NULL: every one)? */
static int
cell_wanted(const json_t *only, const json_t *ci)
{
	const json_t *c;
	size_t i;

	if (only == NULL)
		return 1;
	json_array_foreach(only, i, c)
		if (json_equal(json_object_get(c, "cell_index"), (json_t *)ci))
			return 1;
	return 0;
}

int
api_report_block_split(const json_t *samp, const json_t *runs, const json_t *only,
    json_t **out)
{
	json_t *o = NULL, *cells, *byid = NULL, *split = NULL, *c, *nc, *axes, *arr;
	const json_t *cell, *run, *s;
	const char *m, *label;
	char k[32], lab[BF_MAX_STR];
	size_t i, j;
	int r = BF_ERR_ALLOC;

	*out = NULL;
	if ((byid = json_object()) == NULL || (o = json_copy((json_t *)samp)) == NULL ||
	    (cells = json_array()) == NULL)
		goto out;
	if (json_object_set_new(o, "cells", cells) != 0)
		goto out;
	json_array_foreach(json_object_get(runs, "runs"), i, run) {
		if (!run_done(run) || json_string_value(json_object_get(run, "machine")) == NULL)
			continue;
		snprintf(k, sizeof(k), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(json_object_get(run, "id")));
		if (json_object_set(byid, k, json_object_get(run, "machine")) != 0)
			goto out;
	}
	json_array_foreach(json_object_get(samp, "cells"), i, cell) {
		if (!cell_wanted(only, json_object_get(cell, "cell_index")))
			continue;
		/* machine -> its new cell, in the order machines first appear */
		json_decref(split);
		if ((split = json_object()) == NULL)
			goto out;
		json_array_foreach(json_object_get(cell, "samples"), j, s) {
			if ((m = run_machine(byid, json_integer_value(json_object_get(s, "run")))) ==
			    NULL)
				continue;
			if ((c = json_object_get(split, m)) == NULL) {
				label = json_string_value(json_object_get(cell, "label"));
				snprintf(lab, sizeof(lab), "%s%smachine=%s", label ? label : "",
				    label && *label ? " " : "", m);
				if ((axes = json_copy(json_object_get(cell, "axes"))) == NULL)
					axes = json_object();
				if (axes == NULL || json_object_set_new(axes, "machine",
				    json_string(m)) != 0 || (nc = json_pack("{s:O?,s:s,s:o,s:[]}",
				    "cell_index", json_object_get(cell, "cell_index"), "label", lab,
				    "axes", axes, "samples")) == NULL)
					goto out;
				if (json_array_append_new(cells, nc) != 0 ||
				    json_object_set(split, m, nc) != 0)
					goto out;
				c = nc;
			}
			if ((arr = json_object_get(c, "samples")) == NULL ||
			    json_array_append(arr, (json_t *)s) != 0)
				goto out;
		}
	}
	*out = o;
	o = NULL;
	r = 0;
out:
	json_decref(split);
	json_decref(byid);
	json_decref(o);
	return r;
}

int
api_report_block_ts(struct api *a, int64_t id, const struct store_samples *ts,
    const json_t *runs, struct store_samples **out)
{
	json_t *samp = NULL, *split = NULL;
	int r;

	*out = NULL;
	/* the typed samples keep no run per sample: the machine comes from
	 * the store's sample rows, which name their run */
	if ((r = api_view_job_cells_get(a->st, id, &samp)) != 0 ||
	    (r = api_report_block_split(samp, runs, json_object_get(ts->doc, "cells"),
	    &split)) != 0)
		goto out;
	r = store_samples_from_cells(json_object_get(split, "cells"), out);
out:
	json_decref(samp);
	json_decref(split);
	return r;
}

/* The plain mean of series se; NAN when empty. */
static double
series_mean(const struct report_series *se)
{
	double s = 0;
	size_t i;

	if (se->n == 0)
		return NAN;
	for (i = 0; i < se->n; i++)
		s += se->v[i];
	return s / (double)se->n;
}

/* The cell's value on axis, as text (NULL when absent). */
static const char *
axis_of(const json_t *cellsj, size_t i, const char *axis)
{
	return json_string_value(json_object_get(json_object_get(json_array_get(cellsj, i),
	    "axes"), axis));
}

/* Its label without " machine=M" (the pooled row names the cell). */
static void
base_label(const json_t *cellsj, size_t i, char *out, size_t outsz)
{
	const char *l = json_string_value(json_object_get(json_array_get(cellsj, i), "label"));
	const char *p;

	snprintf(out, outsz, "%s", l != NULL ? l : "?");
	if ((p = strstr(out, "machine=")) != NULL) {
		out[p - out] = '\0';
		while (p > out && out[strlen(out) - 1] == ' ')
			out[strlen(out) - 1] = '\0';
	}
	if (*out == '\0')
		snprintf(out, outsz, "(all)");
}

/* s on lines of at most width columns, broken at spaces, later lines
 * indented by two. */
static int
wrap(struct buf *out, const char *s, size_t width)
{
	size_t col = 0, w;
	const char *e;
	int r;

	while (*s != '\0') {
		while (*s == ' ')
			s++;
		e = strchr(s, ' ');
		w = e != NULL ? (size_t)(e - s) : strlen(s);
		if (w == 0)
			break;
		if (col > 0 && col + 1 + w > width) {
			if ((r = buf_puts(out, "\n  ")) != 0)
				return r;
			col = 2;
		} else if (col > 0) {
			if ((r = buf_puts(out, " ")) != 0)
				return r;
			col++;
		}
		if ((r = buf_printf(out, "%.*s", (int)w, s)) != 0)
			return r;
		col += w;
		s += w;
	}
	return buf_puts(out, "\n");
}

struct pooled_row {
	size_t metric, cell, base;	/* split cells of the first machine */
	struct report_block_res res;
};

static int
pooled_cmp(const void *x, const void *y)
{
	const struct pooled_row *p = x, *q = y;

	if (p->cell != q->cell)
		return p->cell < q->cell ? -1 : 1;
	return (p->metric > q->metric) - (p->metric < q->metric);
}

static const char pooled_legend[] =
    "Pooled (machines.spread block): machine is a blocking factor. Per machine, the "
    "ratio of the cell's mean to its baseline's mean on that machine; % change = "
    "100*(geometric mean of the ratios - 1); 95% CI: Student t over the log ratios "
    "(machines - 1 dof); p: paired t-test of the log ratios over machines. The CI "
    "and p say how the change carries over machines (their differences in the "
    "change are the error), not how precisely one machine measured it. No mark "
    "with fewer machines than min_n (\"low n\"); the per-machine table above has "
    "each machine's own test.";

int
api_report_block_pooled(const json_t *cellsj, const struct report_input *in,
    const char *fmt, struct buf *out)
{
	const char **ms = NULL;
	struct pooled_row *rows = NULL;
	long long *key = NULL;
	long *rep = NULL;
	int *mi = NULL;
	size_t *pair = NULL, npair = 0;
	double *av = NULL, *bv = NULL;
	char lc[BF_MAX_STR], lb[BF_MAX_STR], pct[160], pv[64], ps[32];
	const char *m;
	size_t nc = in->ncells, nm = in->nmetrics, nmach = 0, nrows = 0, i, j, k, x, y;
	json_t *doc = NULL, *jrows = NULL, *jm = NULL;
	int md = strcmp(fmt, "markdown") == 0, js = strcmp(fmt, "json") == 0, r = BF_ERR_ALLOC;
	int dec, pd;

	if (strcmp(fmt, "csv") == 0)
		return 0;	/* one table per file: the per-machine rows */
	if ((ms = calloc(REPORT_BLOCK_MAX + 1, sizeof(*ms))) == NULL ||
	    (rows = calloc(nc * (nm ? nm : 1) + 1, sizeof(*rows))) == NULL ||
	    (key = calloc(nc + 1, sizeof(*key))) == NULL ||
	    (mi = calloc(nc + 1, sizeof(*mi))) == NULL ||
	    (rep = calloc(nc + 1, sizeof(*rep))) == NULL ||
	    (pair = calloc(nc + 1, sizeof(*pair))) == NULL ||
	    (av = calloc(nc * REPORT_BLOCK_MAX + 1, sizeof(*av))) == NULL ||
	    (bv = calloc(nc * REPORT_BLOCK_MAX + 1, sizeof(*bv))) == NULL)
		goto out;
	for (i = 0; i < nc; i++) {
		if ((m = axis_of(cellsj, i, "machine")) == NULL)
			continue;
		for (j = 0; j < nmach && strcmp(ms[j], m) != 0; j++)
			;
		if (j == nmach && nmach < REPORT_BLOCK_MAX)
			ms[nmach++] = m;
	}
	/* one pooled row per (cell, baseline) pair and metric, the pair named
	 * by the job's own cell indexes (every machine's split cell of a cell
	 * keeps its cell_index); the pair's first split cell stands for it.
	 * Integer keys: a cell's pair is found in O(pairs), not by labels. */
	for (x = 0; x < nc; x++) {
		const json_t *cx = json_object_get(json_array_get(cellsj, x), "cell_index");

		key[x] = json_is_integer(cx) ? (long long)json_integer_value(cx) : -1 - (long long)x;
		mi[x] = -1;
		if ((m = axis_of(cellsj, x, "machine")) != NULL)
			for (j = 0; j < nmach; j++)
				if (strcmp(ms[j], m) == 0)
					mi[x] = (int)j;
	}
	for (x = 0; x < nc; x++) {
		int bx = in->baseline_of[x];

		rep[x] = -1;
		if (bx < 0 || (size_t)bx >= nc || mi[x] < 0)
			continue;
		for (j = 0; j < npair; j++)
			if (key[pair[j]] == key[x] &&
			    key[in->baseline_of[pair[j]]] == key[bx])
				break;
		if (j == npair)
			pair[npair++] = x;
		rep[x] = (long)j;
	}
	for (k = 0; k < nm; k++) {
		for (j = 0; j < npair * nmach; j++)
			av[j] = bv[j] = NAN;
		for (x = 0; x < nc; x++) {
			if (rep[x] < 0)
				continue;
			y = (size_t)in->baseline_of[x];
			bv[(size_t)rep[x] * nmach + (size_t)mi[x]] =
			    series_mean(&in->series[x * nm + k]);
			av[(size_t)rep[x] * nmach + (size_t)mi[x]] =
			    series_mean(&in->series[y * nm + k]);
		}
		for (j = 0; j < npair; j++) {
			rows[nrows] = (struct pooled_row){ .metric = k, .cell = pair[j],
			    .base = (size_t)in->baseline_of[pair[j]] };
			if ((r = report_block_pool(&av[j * nmach], &bv[j * nmach], nmach,
			    in->metrics[k].higher_better, in->metrics[k].no_direction, in->min_n,
			    &rows[nrows].res)) != 0)
				goto out;
			nrows++;
		}
	}
	/* by pair, then metric, as a reader scans the table */
	qsort(rows, nrows, sizeof(*rows), pooled_cmp);
	if (js) {
		if ((doc = json_pack("{s:s,s:[],s:[],s:s}", "method", "blocked: geometric mean "
		    "over machines of the per-machine ratio of means, Student t over the log "
		    "ratios, paired t-test", "machines", "rows", "legend", pooled_legend)) == NULL)
			goto out;
		jm = json_object_get(doc, "machines");
		jrows = json_object_get(doc, "rows");
		for (j = 0; j < nmach; j++)
			if (json_array_append_new(jm, json_string(ms[j])) != 0)
				goto out;
	} else {
		if (buf_printf(out, "\n%sPooled over %zu machines (", md ? "## " : "", nmach) != 0)
			goto out;
		for (j = 0; j < nmach; j++)
			if (buf_printf(out, "%s%s", j ? ", " : "", ms[j]) != 0)
				goto out;
		if (buf_printf(out, "), machine a blocking factor\n\n") != 0 ||
		    buf_printf(out, md ? "| metric | cell | vs | machines | %% change | 95%% CI | "
		    "p | sig |\n| --- | --- | --- | ---: | ---: | --- | ---: | --- |\n" :
		    "%-14s %-20s %-20s %8s %9s  %-22s %-8s %s\n", "metric", "cell", "vs",
		    "machines", "% change", "95% CI", "p", "sig") != 0)
			goto out;
	}
	for (i = 0; i < nrows; i++) {
		const struct report_block_res *res = &rows[i].res;
		const char *mn = in->metrics[rows[i].metric].name;

		base_label(cellsj, rows[i].cell, lc, sizeof(lc));
		base_label(cellsj, rows[i].base, lb, sizeof(lb));
		if (js) {
			json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:o,s:o,s:o,s:o,s:o,s:s,s:s?}",
			    "metric", mn, "cell", lc, "vs", lb, "machines", (json_int_t)res->n,
			    "ratio", isfinite(res->ratio) ? json_real(res->ratio) : json_null(),
			    "pct_change", isfinite(res->pct) ? json_real(res->pct) : json_null(),
			    "pct_ci_lo", isfinite(res->pct_lo) ? json_real(res->pct_lo) : json_null(),
			    "pct_ci_hi", isfinite(res->pct_hi) ? json_real(res->pct_hi) : json_null(),
			    "p", isfinite(res->p) ? json_real(res->p) : json_null(),
			    "mark", res->mark, "note", res->note);

			if (o == NULL || json_array_append_new(jrows, o) != 0)
				goto out;
			continue;
		}
		dec = report_block_decimals(res);
		if (isfinite(res->pct_lo))
			snprintf(pct, sizeof(pct), "[%+.*f, %+.*f]", dec, res->pct_lo, dec,
			    res->pct_hi);
		else
			snprintf(pct, sizeof(pct), "%s", res->note ? res->note : "-");
		if (isfinite(res->pct))
			snprintf(pv, sizeof(pv), "%+.*f", dec, res->pct);
		else
			snprintf(pv, sizeof(pv), "-");
		/* p: enough digits to show its side of 0.05 */
		if (!isfinite(res->p))
			snprintf(ps, sizeof(ps), "-");
		else
			for (pd = 2; pd < 12; pd++) {
				snprintf(ps, sizeof(ps), "%.*g", pd, res->p);
				if ((strtod(ps, NULL) < 0.05) == (res->p < 0.05))
					break;
			}
		if (md ? buf_printf(out, "| %s | %s | %s | %zu | %s | %s | %s | %s%s |\n",
		    mn, lc, lb, res->n, pv, pct, ps, res->sig && *res->mark ? "\\* " : "",
		    res->mark) :
		    buf_printf(out, "%-14s %-20s %-20s %8zu %9s  %-22s %-8s %s%s\n", mn, lc, lb,
		    res->n, pv, pct, ps, res->sig && *res->mark ? "* " : "", res->mark) != 0)
			goto out;
	}
	if (js) {
		json_t *top = NULL;
		char *text = NULL;

		/* the report's JSON document gets "pooled" */
		if ((top = json_loadb(out->data ? out->data : "", out->len, 0, NULL)) == NULL ||
		    json_object_set(top, "pooled", doc) != 0 ||
		    (text = json_dumps(top, JSON_INDENT(2))) == NULL) {
			json_decref(top);
			r = top == NULL ? BF_ERR_INVALID : BF_ERR_ALLOC;
			goto out;
		}
		json_decref(top);
		buf_reset(out);
		r = buf_puts(out, text) != 0 || buf_puts(out, "\n") != 0 ? BF_ERR_ALLOC : 0;
		free(text);
		goto out;
	}
	if (buf_puts(out, "\n") != 0 || (md ? buf_printf(out, "- %s\n", pooled_legend) :
	    wrap(out, pooled_legend, 80)) != 0)
		goto out;
	r = 0;
out:
	json_decref(doc);
	free(rows);
	free(key);
	free(mi);
	free(rep);
	free(pair);
	free(av);
	free(bv);
	free((void *)ms);
	return r;
}
