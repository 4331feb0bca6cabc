/*
 * repro-env.c: why a reproduction differs (issue 16). The environment
 * each cell was measured in, from the snapshots its runs named (the
 * bundle's lab vs here, common/envdiff.h), the drift within each side, and
 * the MM counters inside the timed windows that changed; a metric that
 * differs names both as its likely explanation. Reads the report
 * repro_report_json() built and adds to it (repro.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envdiff.h"
#include "evidence.h"
#include "jx.h"
#include "repro.h"

/* Keys and counters named under one metric that differs. */
#define REPRO_EXPLAIN_MAX	5

/* Samples the agent counted around the workload, not the recipe's metrics:
 * one rule for the report and the reproduction (evidence.h). */
int
repro_is_counter(const char *metric)
{
	return evidence_is_counter(metric);
}

/* The snapshot of the first run of cell (in the order given) that names one
 * found in snaps, or NULL. */
static const json_t *
cell_snapshot(const json_t *runs, const json_t *snaps, json_int_t cell, const char **shap)
{
	const json_t *run, *v;
	const char *sha;
	size_t i;

	*shap = NULL;
	json_array_foreach(runs, i, run) {
		if (json_integer_value(json_object_get(run, "cell_index")) != cell ||
		    (sha = json_string_value(json_object_get(run, "snapshot_sha256"))) == NULL ||
		    (v = json_object_get(snaps, sha)) == NULL)
			continue;
		*shap = sha;
		return v;
	}
	return NULL;
}

/* envdiff_drift over every run of runs with a snapshot in snaps: *out the
 * drift when some key drifts, else NULL. */
static int
side_drift(const json_t *runs, const json_t *snaps, json_t **out, struct bf_diag *d)
{
	const json_t **sv = NULL, *run;
	const char **lv = NULL, *sha;
	char (*lb)[160] = NULL;
	json_t *dr = NULL;
	size_t i, n = 0, nr = json_array_size(runs);
	int r;

	*out = NULL;
	if (nr == 0)
		return 0;
	if ((sv = calloc(nr, sizeof(*sv))) == NULL || (lv = calloc(nr, sizeof(*lv))) == NULL ||
	    (lb = calloc(nr, sizeof(*lb))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(runs, i, run) {
		if ((sha = json_string_value(json_object_get(run, "snapshot_sha256"))) == NULL ||
		    json_object_get(snaps, sha) == NULL)
			continue;
		sv[n] = json_object_get(snaps, sha);
		snprintf(lb[n], sizeof(lb[n]), "cell %.100s run %lld",
		    json_string_value(json_object_get(run, "label")) ?
		    json_string_value(json_object_get(run, "label")) : "?",
		    (long long)json_integer_value(json_object_get(run, "id")));
		lv[n] = lb[n];
		n++;
	}
	if (n < 2) {
		r = 0;
		goto out;
	}
	if ((r = envdiff_drift(sv, lv, n, &dr, d)) != 0)
		goto out;
	if (json_integer_value(json_object_get(dr, "n")) > 0) {
		*out = dr;
		dr = NULL;
	}
out:
	json_decref(dr);
	free(sv);
	free(lv);
	free(lb);
	return r;
}

/* A side of a diff entry as envdiff_render_text prints it: the value,
 * (absent) or (unreadable). */
static void
snap_value(const json_t *k, const char *side, char *buf, size_t n)
{
	const json_t *v = json_object_get(k, side);
	char absent[16];

	snprintf(absent, sizeof(absent), "%s_absent", side);
	if (json_is_string(v))
		snprintf(buf, n, "%s", json_string_value(v));
	else if (json_is_true(json_object_get(k, absent)))
		snprintf(buf, n, "(absent)");
	else
		snprintf(buf, n, "(unreadable)");
}

/* The keys of a pair diff, at most REPRO_EXPLAIN_MAX, as "key: a -> b". */
static int
diff_keys(const json_t *diff, json_t *into)
{
	const json_t *g, *k;
	char a[96], b[96], line[512];
	size_t i, j;

	json_array_foreach(json_object_get(diff, "groups"), i, g)
		json_array_foreach(json_object_get(g, "keys"), j, k) {
			if (json_array_size(into) >= REPRO_EXPLAIN_MAX)
				return 0;
			snap_value(k, "a", a, sizeof(a));
			snap_value(k, "b", b, sizeof(b));
			snprintf(line, sizeof(line), "%.200s: %s -> %s",
			    json_string_value(json_object_get(k, "key")), a, b);
			if (json_array_append_new(into, json_string(line)) != 0)
				return BF_ERR_ALLOC;
		}
	return 0;
}

/* The nonzero side of a zero vs nonzero counter is real: every window
 * counted some, of one sign (one stray major fault in three windows is
 * not), or its 95% CI excludes 0, or, with one sample, it is at least 1.
 * The counters are the machine's: other processes add to a window, so a
 * window of 512 faults beside one of 2,500 has a CI down past 0 while
 * none of them was 0. */
static int
side_nonzero(const json_t *side)
{
	const json_t *lo = json_object_get(side, "ci_lo"), *hi = json_object_get(side, "ci_hi");
	const json_t *mn = json_object_get(side, "min"), *mx = json_object_get(side, "max");
	double m = json_number_value(json_object_get(side, "mean"));

	if (json_is_number(mn) && json_is_number(mx) &&
	    (json_number_value(mn) > 0 || json_number_value(mx) < 0))
		return 1;
	if (json_is_number(lo) && json_is_number(hi))
		return json_number_value(lo) > 0 || json_number_value(hi) < 0;
	return fabs(m) >= 1;
}

/*
 * A counter changed: its verdict says so, or it was 0 on one side and
 * really not on the other (THP faults happened here and not there: no %
 * change exists, and it is the first thing to say). Gauges (vmstat.nr_*)
 * move with everything else on the machine; they explain nothing.
 */
static int
counter_changed(const json_t *m)
{
	const json_t *sa = json_object_get(m, "original"), *sb = json_object_get(m, "reproduced");
	const json_t *a = json_object_get(sa, "mean"), *b = json_object_get(sb, "mean");
	const char *v = json_string_value(json_object_get(m, "verdict")),
	    *name = json_string_value(json_object_get(m, "metric"));

	if (name == NULL || strncmp(name, "vmstat.nr_", 10) == 0)
		return 0;
	if (v != NULL && strcmp(v, "differs") == 0)
		return 1;
	if (!json_is_number(a) || !json_is_number(b))
		return 0;
	if (json_number_value(a) == 0)
		return json_number_value(b) != 0 && side_nonzero(sb);
	if (json_number_value(b) == 0)
		return side_nonzero(sa);
	return 0;
}

/* What a THP reviewer reads first: huge page counters, then TLB and fault
 * counts, then the rest. */
static int
counter_rank(const char *name)
{
	if (strstr(name, "thp") != NULL || strncmp(name, "hugepages-", 10) == 0 ||
	    strstr(name, "AnonHugePages") != NULL)
		return 0;
	if (strstr(name, "TLB") != NULL || strstr(name, "fault") != NULL)
		return 1;
	return 2;
}

static void
fmt_mean(const json_t *side, char *buf, size_t n)
{
	const json_t *m = json_object_get(side, "mean");

	if (json_is_number(m))
		snprintf(buf, n, "%.6g", json_number_value(m));
	else
		snprintf(buf, n, "-");
}

/* Per cell: flag counters, list those that changed (by rank), and name the
 * environment keys and counters under every workload metric that differs. */
static int
explain_cell(json_t *c, const json_t *envdiff)
{
	json_t *changed = json_array(), *env = json_array(), *m, *ex = NULL;
	char line[320], a[48], b[48];
	const char *name;
	size_t i;
	int r = BF_ERR_ALLOC, rank;

	if (changed == NULL || env == NULL)
		goto out;
	if (envdiff != NULL && (r = diff_keys(envdiff, env)) != 0)
		goto out;
	json_array_foreach(json_object_get(c, "metrics"), i, m) {
		name = json_string_value(json_object_get(m, "metric"));
		if (!repro_is_counter(name))
			continue;
		if (json_object_set_new(m, "counter", json_true()) != 0)
			goto out;
	}
	for (rank = 0; rank <= 2; rank++)
		json_array_foreach(json_object_get(c, "metrics"), i, m) {
			name = json_string_value(json_object_get(m, "metric"));
			if (!repro_is_counter(name) || counter_rank(name) != rank ||
			    !counter_changed(m))
				continue;
			fmt_mean(json_object_get(m, "original"), a, sizeof(a));
			fmt_mean(json_object_get(m, "reproduced"), b, sizeof(b));
			snprintf(line, sizeof(line), "%.200s: %s -> %s", name, a, b);
			if (json_array_append_new(changed, json_string(line)) != 0)
				goto out;
		}
	if (json_object_set(c, "counters_changed", changed) != 0)
		goto out;
	json_array_foreach(json_object_get(c, "metrics"), i, m) {
		name = json_string_value(json_object_get(m, "metric"));
		if (repro_is_counter(name) || json_string_value(json_object_get(m, "verdict")) ==
		    NULL || strcmp(json_string_value(json_object_get(m, "verdict")), "differs") != 0 ||
		    (json_array_size(env) == 0 && json_array_size(changed) == 0))
			continue;
		if ((ex = json_pack("{s:O,s:[]}", "environment", env, "counters")) == NULL ||
		    json_object_set_new(m, "explained_by", ex) != 0)
			goto out;
		for (rank = 0; (size_t)rank < json_array_size(changed) &&
		    rank < REPRO_EXPLAIN_MAX; rank++)
			if (json_array_append(json_object_get(ex, "counters"),
			    json_array_get(changed, (size_t)rank)) != 0)
				goto out;
	}
	r = 0;
out:
	json_decref(changed);
	json_decref(env);
	return r;
}

int
repro_env_snapshots(const json_t *bundle, const json_t *here_runs, const json_t *here_snaps,
    json_t *rep, struct bf_diag *d)
{
	const json_t *bsn = json_object_get(bundle, "snapshots"), *brs = json_object_get(bundle,
	    "runs"), *sa, *sb;
	json_t *es = NULL, *groups, *c, *diff = NULL, *dr, *g = NULL;
	const char *ha, *hb, *note = NULL;
	size_t i, j;
	int r;

	if ((es = json_pack("{s:[],s:{s:n,s:n},s:n}", "groups", "drift", "bundle", "here",
	    "note")) == NULL)
		return BF_ERR_ALLOC;
	groups = json_object_get(es, "groups");
	if (json_object_size(bsn) == 0)
		note = "the bundle carries no environment snapshots (bundle version 1, or "
		    "an agent that prints none): only fingerprints and knobs are compared";
	else if (json_object_size(here_snaps) == 0)
		note = "no run here has an environment snapshot: only fingerprints and knobs "
		    "are compared";
	if (note != NULL && json_object_set_new(es, "note", json_string(note)) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(json_object_get(rep, "cells"), i, c) {
		json_int_t cell = json_integer_value(json_object_get(c, "cell_index"));

		json_decref(diff);
		diff = NULL;
		sa = cell_snapshot(brs, bsn, cell, &ha);
		sb = cell_snapshot(here_runs, here_snaps, cell, &hb);
		if (sa != NULL && sb != NULL && (r = envdiff_pair(sa, sb, &diff, d)) != 0)
			goto out;
		if ((r = explain_cell(c, diff)) != 0)
			goto out;
		if (sa == NULL || sb == NULL)
			continue;
		/* cells with the same differences share one group */
		json_array_foreach(groups, j, g)
			if (json_equal(json_object_get(g, "diff"), diff))
				break;
		if (j == json_array_size(groups)) {
			if ((g = json_pack("{s:[],s:[],s:s,s:s,s:O}", "cells", "labels",
			    "bundle_sha256", ha, "here_sha256", hb, "diff", diff)) == NULL ||
			    json_array_append_new(groups, g) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		}
		if (json_array_append(json_object_get(g, "cells"), json_object_get(c,
		    "cell_index")) != 0 || json_array_append(json_object_get(g, "labels"),
		    json_object_get(c, "label")) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	if ((r = side_drift(brs, bsn, &dr, d)) != 0)
		goto out;
	if (dr != NULL && json_object_set_new(json_object_get(es, "drift"), "bundle", dr) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = side_drift(here_runs, here_snaps, &dr, d)) != 0)
		goto out;
	if (dr != NULL && json_object_set_new(json_object_get(es, "drift"), "here", dr) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (json_object_set(rep, "environment_snapshots", es) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	json_decref(diff);
	json_decref(es);
	return r;
}

/* "a, b, c" of a JSON array of strings, cut to fit. */
static void
join_strings(const json_t *arr, char *out, size_t n)
{
	const json_t *v;
	size_t i, len = 0;

	out[0] = '\0';
	json_array_foreach(arr, i, v) {
		int w = snprintf(out + len, n - len, "%s%s", i ? "; " : "",
		    json_string_value(v) ? json_string_value(v) : "?");

		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
}

int
repro_explain_text(const json_t *m, struct buf *out)
{
	const json_t *ex = json_object_get(m, "explained_by");
	char env[1024], cnt[1024];

	if (ex == NULL)
		return 0;
	join_strings(json_object_get(ex, "environment"), env, sizeof(env));
	join_strings(json_object_get(ex, "counters"), cnt, sizeof(cnt));
	return buf_printf(out, "    explained by? environment: %s | counters: %s\n",
	    env[0] ? env : "(no difference)", cnt[0] ? cnt : "(none changed)");
}

int
repro_env_text(const json_t *rep, struct buf *out)
{
	const json_t *es = json_object_get(rep, "environment_snapshots"), *g, *l, *c;
	const char *side;
	char cnt[2048];
	size_t i, j;
	int r;

	if (es == NULL)
		return 0;
	if ((r = buf_puts(out, "\nEnvironment at each run (snapshots, bundle's lab vs here):\n"))
	    != 0)
		return r;
	if (json_is_string(json_object_get(es, "note")) &&
	    (r = buf_printf(out, "  %s\n", json_string_value(json_object_get(es, "note")))) != 0)
		return r;
	json_array_foreach(json_object_get(es, "groups"), i, g) {
		if ((r = buf_puts(out, "  cells")) != 0)
			return r;
		json_array_foreach(json_object_get(g, "labels"), j, l)
			if ((r = buf_printf(out, "%s%.100s", j ? ", " : " ",
			    json_string_value(l) ? json_string_value(l) : "?")) != 0)
				return r;
		if ((r = buf_puts(out, ":\n")) != 0 ||
		    (r = envdiff_render_text(json_object_get(g, "diff"), out)) != 0)
			return r;
	}
	for (i = 0; i < 2; i++) {
		side = i == 0 ? "bundle" : "here";
		if (json_object_get(json_object_get(es, "drift"), side) == NULL ||
		    json_is_null(json_object_get(json_object_get(es, "drift"), side)))
			continue;
		if ((r = buf_printf(out, "  changed between runs %s:\n", i == 0 ?
		    "of the bundle's job" : "here")) != 0 ||
		    (r = envdiff_render_text(json_object_get(json_object_get(es, "drift"), side),
		    out)) != 0)
			return r;
	}
	if ((r = buf_puts(out, "\nMM counters that changed (mean per iteration, bundle -> here):\n"))
	    != 0)
		return r;
	j = 0;
	json_array_foreach(json_object_get(rep, "cells"), i, c) {
		if (json_array_size(json_object_get(c, "counters_changed")) == 0)
			continue;
		join_strings(json_object_get(c, "counters_changed"), cnt, sizeof(cnt));
		if ((r = buf_printf(out, "  %.100s: %s\n", json_string_value(json_object_get(c,
		    "label")) ? json_string_value(json_object_get(c, "label")) : "?", cnt)) != 0)
			return r;
		j++;
	}
	if (j == 0 && (r = buf_puts(out, "  (none)\n")) != 0)
		return r;
	return 0;
}
