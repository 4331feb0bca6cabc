/*
 * plan-suite.c: the plan of a suite job (plan.h): each entry's matrix
 * expanded as its own job's, the cells numbered one after another across
 * the entries, each with the axis "workload" (the entry's label) first,
 * and every cell once per boot. Since the entries share the job's matrix
 * of boots, the runs of one boot of one boot configuration are those of
 * every entry: one reboot serves them all (store-claim.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jx.h"
#include "plan.h"

/* Cell c of entry label, renumbered g: axes {"workload": label, ...}. */
static int
plan_suite_cell(struct matrix_cell *c, size_t g, const char *label)
{
	json_t *axes;
	char *nl;
	size_t n;
	int has = json_object_size(c->axes) > 0;

	if ((axes = json_pack("{s:s}", "workload", label)) == NULL ||
	    json_object_update(axes, c->axes) != 0) {
		json_decref(axes);
		return BF_ERR_ALLOC;
	}
	n = strlen(label) + strlen(c->label) + 16;
	if ((nl = malloc(n)) == NULL) {
		json_decref(axes);
		return BF_ERR_ALLOC;
	}
	snprintf(nl, n, "workload=%s%s%s", label, has ? " " : "", has ? c->label : "");
	json_decref(c->axes);
	c->axes = axes;
	free(c->label);
	c->label = nl;
	c->index = g;
	return 0;
}

int
plan_suite(const struct job_spec *job, const struct recipe *const *recs, struct plan **out,
    struct bf_diag *d)
{
	char ep[BF_DIAG_FIELD];
	struct plan *p = NULL;
	struct matrix_cell *cells = NULL;
	size_t e, i, b, n = 0, nc = 0, total = 0;
	int ret;

	*out = NULL;
	if (!job_is_suite(job)) {
		bf_diag_set(d, "suite", "the job is not a suite");
		return BF_ERR_INVALID;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->entry_base = calloc(job->nsuite + 1, sizeof(*p->entry_base))) == NULL ||
	    (p->cells = calloc(BF_MAX_CELLS, sizeof(*p->cells))) == NULL ||
	    (p->cell_entry = calloc(BF_MAX_CELLS, sizeof(*p->cell_entry))) == NULL) {
		ret = BF_ERR_ALLOC;
		goto out;
	}
	p->order = plan_order_of(job);
	p->machine_class = job->machine_class;
	p->machine_names = job->machine_names;
	p->nmachine_names = job->nmachine_names;
	p->nentries = job->nsuite;
	for (e = 0; e < job->nsuite; e++) {
		jx_path_idx(ep, sizeof(ep), "suite", e);
		if ((ret = matrix_expand(job->suite[e].job, recs[e], &cells, &nc, d)) != 0) {
			job_diag_prefix(d, ep);
			goto out;
		}
		if (nc > BF_MAX_CELLS - total) {
			bf_diag_set(d, ep, "its %zu cells make the suite more than %d cells",
			    nc, BF_MAX_CELLS);
			ret = BF_ERR_INVALID;
			goto out;
		}
		p->entry_base[e] = total;
		for (i = 0; i < nc; i++) {
			if ((ret = plan_suite_cell(&cells[i], total, job->suite[e].label)) != 0)
				goto out;
			p->cells[total] = cells[i];
			memset(&cells[i], 0, sizeof(cells[i]));
			p->cell_entry[total] = e;
			p->ncells = ++total;
		}
		matrix_free(cells, nc);
		cells = NULL;
	}
	p->entry_base[job->nsuite] = total;
	if (job->boots < 1 || job->boots > BF_MAX_BOOTS ||
	    (size_t)job->boots > BF_MAX_CELLS / (total ? total : 1)) {
		bf_diag_set(d, "repetitions.boots", "%d boots x %zu cells is more than %d runs",
		    job->boots, total, BF_MAX_CELLS);
		ret = BF_ERR_INVALID;
		goto out;
	}
	p->nruns = total * (size_t)job->boots;
	if ((p->runs = calloc(p->nruns ? p->nruns : 1, sizeof(*p->runs))) == NULL) {
		ret = BF_ERR_ALLOC;
		goto out;
	}
	/* boot-major as a single job's: every entry's cells once per boot */
	for (b = 0; b < (size_t)job->boots; b++)
		for (i = 0; i < total; i++) {
			e = p->cell_entry[i];
			if ((ret = plan_run_of(job->suite[e].job, recs[e], i, (int)b,
			    &p->runs[n++])) != 0) {
				bf_diag_set(d, "repetitions", "run %zu of cell %zu (suite[%zu]): "
				    "iterations, warmup or timeout_s out of range", b, i, e);
				goto out;
			}
		}
	*out = p;
	p = NULL;
	ret = 0;
out:
	matrix_free(cells, nc);
	plan_free(p);
	return ret;
}
