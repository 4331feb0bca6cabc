/*
 * evidence-drift.c: did the environment stay the same within a job
 * (evidence.h)? envdiff_drift over the snapshots of the job's done runs,
 * with the keys the job's own axes set on purpose compared only within a
 * cell, written as legend lines. Which snapshot key a knob writes comes
 * from the knob table (knob.h), so a new knob needs no entry here; only a
 * side effect of the kernel's does (drift_side).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "envdiff.h"
#include "evidence.h"
#include "knob.h"

#define DRIFT_LABEL	160	/* "cell LABEL run ID", the label cut to fit */

/* Snapshot key of a knob file path (docs/evidence.md), or NULL. */
static const struct {
	const char *path, *key;
} drift_paths[] = {
	{ .path = "/sys/kernel/mm/transparent_hugepage/", .key = "transparent_hugepage/" },
	{ .path = "/proc/sys/kernel/", .key = "kernel." },
	{ .path = "/proc/sys/vm/", .key = "vm." },
};

/*
 * Keys a knob changes besides its own files: the kernel's side effects.
 * Turning THP on for any size starts khugepaged, which raises
 * vm.min_free_kbytes (mm/khugepaged.c, set_recommended_min_free_kbytes),
 * and turning it off recomputes it: a THP-mode axis moves it by design.
 */
static const struct {
	const char *knob;	/* the table entry's name (a family's prefix) */
	const char *key;
} drift_side[] = {
	{ .knob = "thp_enabled", .key = "vm.min_free_kbytes" },
	{ .knob = "mthp_", .key = "vm.min_free_kbytes" },
};

/* key is path's snapshot key: the file under a known root, same tail. */
static int
path_is_key(const char *path, size_t plen, const char *key)
{
	size_t i, lp, lk;

	for (i = 0; i < sizeof(drift_paths) / sizeof(drift_paths[0]); i++) {
		lp = strlen(drift_paths[i].path);
		lk = strlen(drift_paths[i].key);
		if (plen > lp && strncmp(path, drift_paths[i].path, lp) == 0 &&
		    strncmp(key, drift_paths[i].key, lk) == 0 &&
		    strlen(key + lk) == plen - lp && strncmp(key + lk, path + lp, plen - lp) == 0)
			return 1;
	}
	return 0;
}

int
evidence_key_set_by(const char *key, const char *name)
{
	const struct knob *k;
	char path[KNOB_MAX_PATH];
	const char *hp;
	long long node;
	size_t n;

	if (key == NULL || name == NULL)
		return 0;
	if (strcmp(name, "kernel") == 0)
		return strcmp(envdiff_group(key), "kernel") == 0;
	if (strcmp(name, "cmdline") == 0)
		return strcmp(key, "kernel.cmdline") == 0;
	if ((k = knob_find(name)) == NULL)
		return 0;
	for (n = 0; n < sizeof(drift_side) / sizeof(drift_side[0]); n++)
		if (strcmp(k->name, drift_side[n].knob) == 0 && strcmp(key, drift_side[n].key) == 0)
			return 1;
	switch (k->kind) {
	case KNOB_ACTION:
		return 0;
	case KNOB_GOVERNOR:
		return strcmp(key, "cpufreq.scaling_governor") == 0;
	case KNOB_BOOST:
		return strcmp(key, "cpufreq.boost") == 0 ||
		    strcmp(key, "cpufreq.intel_pstate.no_turbo") == 0;
	case KNOB_SMT:
		return strncmp(key, "cpu.smt.", 8) == 0;
	case KNOB_CPUIDLE:
		n = strlen(key);
		return strncmp(key, "cpuidle.state", 13) == 0 && n > 8 &&
		    strcmp(key + n - 8, ".disable") == 0;
	case KNOB_BRACKET:
	case KNOB_INT:
		break;
	}
	if (knob_path(name, path, sizeof(path), &node) != 0)
		return 0;
	/*
	 * A pool of one size moves every pool of that size: the global count is
	 * the sum of the nodes', and a global request is spread over the nodes.
	 * hugetlb/[nodeM/]hugepages-<N>kB/nr_hugepages.
	 */
	if (k->pool) {
		if ((hp = strstr(path, "/hugepages-")) == NULL || strncmp(key, "hugetlb/", 8) != 0)
			return 0;
		n = strlen(key);
		return n >= strlen(hp) && strcmp(key + n - strlen(hp), hp) == 0;
	}
	return path_is_key(path, strlen(path), key);
}

/* Does some axis set key? */
static int
axis_key(const char *key, const char *const *axes, size_t naxes)
{
	size_t i;

	for (i = 0; i < naxes; i++)
		if (evidence_key_set_by(key, axes[i]))
			return 1;
	return 0;
}

/* One drifting key as "KEY (V1 in N runs from LABEL, V2 in 1 run from ...)". */
static int
put_key(struct buf *b, const json_t *k)
{
	const json_t *vals = json_object_get(k, "values"), *v, *val;
	json_int_t cnt;
	size_t i;
	int r;

	if ((r = evidence_put_value(b, json_string_value(json_object_get(k, "key")))) != 0 ||
	    (r = buf_puts(b, " (")) != 0)
		return r;
	json_array_foreach(vals, i, v) {
		val = json_object_get(v, "value");
		cnt = json_integer_value(json_object_get(v, "count"));
		if (i > 0 && (r = buf_puts(b, ", ")) != 0)
			return r;
		if (json_is_string(val))
			r = evidence_put_value(b, json_string_value(val));
		else
			r = buf_puts(b, json_is_true(json_object_get(v, "absent")) ? "(absent)" :
			    "(unreadable)");
		if (r != 0 || (r = buf_printf(b, " in %lld run%s", (long long)cnt,
		    cnt == 1 ? "" : "s")) != 0)
			return r;
		if (json_is_string(json_object_get(v, "first")) &&
		    (r = buf_printf(b, " from %s", json_string_value(json_object_get(v,
		    "first")))) != 0)
			return r;
	}
	cnt = json_integer_value(json_object_get(k, "more_values"));
	if (cnt > 0 && (r = buf_printf(b, ", and %lld more values", (long long)cnt)) != 0)
		return r;
	return buf_puts(b, ")");
}

/* The line for drift dr after head, when some key drifted. */
static int
drift_line(const json_t *dr, const char *head, struct evidence_lines *w)
{
	const json_t *keys = json_object_get(dr, "keys"), *k;
	json_int_t n = json_integer_value(json_object_get(dr, "n"));
	struct buf b;
	size_t i, shown = 0;
	int r = 0;

	if (n <= 0)
		return 0;
	/* room for the words around: a line is at most BF_MAX_STR */
	buf_init(&b, BF_MAX_STR - 256);
	json_array_foreach(keys, i, k) {
		size_t len = b.len;

		if (shown == EVIDENCE_DRIFT_KEYS)
			break;
		if ((shown > 0 && (r = buf_puts(&b, "; ")) != 0) || (r = put_key(&b, k)) != 0) {
			if (r != BF_ERR_TOOBIG)
				goto out;
			/* a key that does not fit is counted with the rest */
			b.len = len;
			if (b.data != NULL)
				b.data[len] = '\0';
			r = 0;
			break;
		}
		shown++;
	}
	if ((json_int_t)shown < n)
		r = evidence_lines_add(w, "%s%s and %lld more", head, b.data ? b.data : "",
		    (long long)(n - (json_int_t)shown));
	else
		r = evidence_lines_add(w, "%s%s", head, b.data ? b.data : "");
out:
	buf_free(&b);
	return r;
}

/* A new object with the keys of snap that some axis sets (keep) or that
 * none does (!keep); values shared. */
static json_t *
snap_filter(const json_t *snap, const char *const *axes, size_t naxes, int keep)
{
	json_t *o = json_object(), *v;
	const char *k;

	if (o == NULL)
		return NULL;
	json_object_foreach((json_t *)snap, k, v) {
		if (axis_key(k, axes, naxes) != keep)
			continue;
		if (json_object_set(o, k, v) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

struct drift_ord {
	size_t cell, i;
};

static int
drift_ord_cmp(const void *a, const void *b)
{
	const struct drift_ord *x = a, *y = b;

	if (x->cell != y->cell)
		return x->cell < y->cell ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* envdiff_drift over sv/lv[0..m), its line (if any) after head. */
static int
drift_of(const json_t **sv, const char **lv, size_t m, const char *head,
    struct evidence_lines *w)
{
	struct bf_diag d;
	json_t *dr = NULL;
	int r;

	if (m < 2)
		return 0;
	bf_diag_clear(&d);
	if ((r = envdiff_drift(sv, lv, m, &dr, &d)) != 0)
		return r == BF_ERR_ALLOC ? r : evidence_lines_add(w, "%snot compared: %s", head,
		    d.msg);
	r = drift_line(dr, head, w);
	json_decref(dr);
	return r;
}

int
evidence_drift(const struct evidence_run *runs, size_t n, const char *const *axes,
    size_t naxes, struct evidence_lines *w)
{
	char (*lb)[DRIFT_LABEL] = NULL, head[DRIFT_LABEL + 64];
	const json_t **sv = NULL, **cv = NULL;
	json_t **own = NULL, *one = NULL;
	const char **lv = NULL, **clv = NULL;
	struct drift_ord *ord = NULL;
	struct bf_diag d;
	size_t i, j, m = 0, nown = 0;
	int r = 0;

	if (n == 0)
		return 0;
	if ((lb = calloc(n, sizeof(*lb))) == NULL || (sv = calloc(n, sizeof(*sv))) == NULL ||
	    (lv = calloc(n, sizeof(*lv))) == NULL || (own = calloc(2 * n, sizeof(*own))) == NULL ||
	    (ord = calloc(n, sizeof(*ord))) == NULL || (cv = calloc(n, sizeof(*cv))) == NULL ||
	    (clv = calloc(n, sizeof(*clv))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (runs[i].snapshot == NULL)
			continue;
		snprintf(lb[i], sizeof(lb[i]), "cell %.100s run %lld",
		    runs[i].cell_label != NULL ? runs[i].cell_label : "", (long long)runs[i].id);
		/* one snapshot alone: envdiff checks its shape */
		bf_diag_clear(&d);
		if ((r = envdiff_drift(&runs[i].snapshot, NULL, 1, &one, &d)) != 0) {
			if (r == BF_ERR_ALLOC ||
			    (r = evidence_lines_add(w, "run %lld (cell %s): its snapshot is left "
			    "out of the drift check: %s", (long long)runs[i].id,
			    runs[i].cell_label != NULL ? runs[i].cell_label : "", d.msg)) != 0)
				goto out;
			continue;
		}
		json_decref(one);
		one = NULL;
		if (naxes > 0) {
			if ((own[nown] = snap_filter(runs[i].snapshot, axes, naxes, 0)) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			sv[m] = own[nown++];
		} else {
			sv[m] = runs[i].snapshot;
		}
		lv[m] = lb[i];
		ord[m].cell = runs[i].cell;
		ord[m].i = i;
		m++;
	}
	if ((r = drift_of(sv, lv, m, "environment changed within the job: ", w)) != 0 ||
	    naxes == 0)
		goto out;
	/* the keys the axes set: per cell */
	qsort(ord, m, sizeof(*ord), drift_ord_cmp);
	for (i = 0; i < m; i = j) {
		size_t k = 0;

		for (j = i; j < m && ord[j].cell == ord[i].cell; j++) {
			json_t *f = snap_filter(runs[ord[j].i].snapshot, axes, naxes, 1);

			if (f == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			own[nown++] = f;
			cv[k] = f;
			clv[k++] = lb[ord[j].i];
		}
		snprintf(head, sizeof(head), "cell %.100s: environment changed within the cell: ",
		    runs[ord[i].i].cell_label != NULL ? runs[ord[i].i].cell_label : "");
		if ((r = drift_of(cv, clv, k, head, w)) != 0)
			goto out;
	}
out:
	for (i = 0; own != NULL && i < nown; i++)
		json_decref(own[i]);
	json_decref(one);
	free(own);
	free(lb);
	free(sv);
	free(lv);
	free(cv);
	free(clv);
	free(ord);
	return r;
}
