/*
 * evidence.c: the report's evidence lines (evidence.h): the line list,
 * which counters become report rows, the THP checks of each cell against
 * its snapshot, and the recipe's expectations. Drift is evidence-drift.c.
 * Snapshots are untrusted: every value is type-checked before use.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "evidence.h"
#include "jx.h"
#include "parse.h"

/* ---- lines ---- */

int
evidence_lines_add(struct evidence_lines *w, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	if (w->n >= EVIDENCE_MAX_LINES) {
		w->more++;
		return 0;
	}
	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return BF_ERR_ALLOC;
	if ((size_t)r > BF_MAX_STR)
		s[BF_MAX_STR] = '\0';
	w->line[w->n++] = s;
	return 0;
}

int
evidence_lines_vector(const struct evidence_lines *w, const char **vec, size_t nvec,
    char **extra)
{
	size_t i, k = 0;

	*extra = NULL;
	for (i = 0; i < w->n && k + 2 < nvec; i++)
		vec[k++] = w->line[i];
	if (w->more + (w->n - i) > 0 && k + 1 < nvec) {
		if (asprintf(extra, "%zu more warnings not shown", w->more + (w->n - i)) < 0) {
			*extra = NULL;
			return BF_ERR_ALLOC;
		}
		vec[k++] = *extra;
	}
	if (k < nvec)
		vec[k] = NULL;
	return 0;
}

void
evidence_lines_free(struct evidence_lines *w)
{
	size_t i;

	if (w == NULL)
		return;
	for (i = 0; i < w->n; i++)
		free(w->line[i]);
	w->n = 0;
	w->more = 0;
}

int
evidence_put_value(struct buf *out, const char *v)
{
	size_t i, n;
	int bare = 1, r = 0;

	if (v == NULL)
		return buf_puts(out, "(unreadable)");
	n = strlen(v);
	for (i = 0; i < n; i++)
		if (v[i] <= ' ' || v[i] > '~' || v[i] == '"' || v[i] == '\\')
			bare = 0;
	if (n == 0 || v[0] == '(')
		bare = 0;
	if (bare && n <= EVIDENCE_MAX_VALUE)
		return buf_puts(out, v);
	if (!bare)
		r = buf_puts(out, "\"");
	for (i = 0; r == 0 && i < n && i < EVIDENCE_MAX_VALUE; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
			r = buf_printf(out, "\\x%02x", c);
		else
			r = buf_append(out, &v[i], 1);
	}
	if (r == 0 && n > EVIDENCE_MAX_VALUE)
		r = buf_puts(out, "...");
	if (r == 0 && !bare)
		r = buf_puts(out, "\"");
	return r;
}

/* ---- counters ---- */

static const char *const evidence_counter_prefix[] = {
	"vmstat.", "hugepages-", "cgroup.", "smaps.", "pmu.", NULL
};

int
evidence_is_counter(const char *metric)
{
	size_t i;

	for (i = 0; metric != NULL && evidence_counter_prefix[i] != NULL; i++)
		if (strncmp(metric, evidence_counter_prefix[i],
		    strlen(evidence_counter_prefix[i])) == 0)
			return 1;
	return 0;
}

/*
 * "hugepages-64kB.anon_fault_alloc" -> 64 and the part after the dot; 0 when
 * metric is not hugepages-<N>kB.<stat> with N a decimal without sign or
 * leading zero.
 */
static int
mthp_split(const char *metric, int64_t *kb, const char **stat)
{
	const char *p, *dot;

	if (strncmp(metric, "hugepages-", 10) != 0)
		return 0;
	p = metric + 10;
	if ((dot = strchr(p, '.')) == NULL || dot - p < 3 || strncmp(dot - 2, "kB", 2) != 0 ||
	    *p < '1' || *p > '9' ||
	    parse_i64_n(p, (size_t)(dot - 2 - p), 1, INT64_MAX / 1024, kb) != 0)
		return 0;
	*stat = dot + 1;
	return 1;
}

/* Display rank of a counter: 0, 1 the vmstat THP pair, 2 an mTHP pair, 3
 * the rest; *kb and *sub order within rank 2. */
static int
counter_rank(const char *metric, int64_t *kb, int *sub)
{
	const char *stat;

	*kb = 0;
	*sub = 0;
	if (strcmp(metric, "vmstat.thp_fault_alloc") == 0)
		return 0;
	if (strcmp(metric, "vmstat.thp_fault_fallback") == 0)
		return 1;
	if (mthp_split(metric, kb, &stat)) {
		if (strcmp(stat, "anon_fault_alloc") == 0)
			return 2;
		if (strcmp(stat, "anon_fault_fallback") == 0) {
			*sub = 1;
			return 2;
		}
	}
	return 3;
}

int
evidence_is_thp_counter(const char *metric)
{
	int64_t kb;
	int sub;

	return metric != NULL && counter_rank(metric, &kb, &sub) < 3;
}

int
evidence_counters_mode(const char *s, enum evidence_counters *out)
{
	if (s == NULL || strcmp(s, "thp") == 0)
		*out = EVIDENCE_COUNTERS_THP;
	else if (strcmp(s, "none") == 0)
		*out = EVIDENCE_COUNTERS_NONE;
	else if (strcmp(s, "all") == 0)
		*out = EVIDENCE_COUNTERS_ALL;
	else
		return BF_ERR_INVALID;
	return 0;
}

struct counter_key {
	const char *name;
	size_t idx;
	int rank, sub;
	int64_t kb;
};

static int
counter_key_cmp(const void *a, const void *b)
{
	const struct counter_key *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->kb != y->kb)
		return x->kb < y->kb ? -1 : 1;
	if (x->sub != y->sub)
		return x->sub < y->sub ? -1 : 1;
	return strcmp(x->name, y->name);
}

int
evidence_counters_pick(const char *const *names, size_t n, enum evidence_counters mode,
    size_t room, size_t *idx, size_t *npicked, size_t *nmore)
{
	struct counter_key *k;
	size_t i, m = 0;

	*npicked = 0;
	*nmore = 0;
	if (mode == EVIDENCE_COUNTERS_NONE || n == 0)
		return 0;
	if ((k = calloc(n, sizeof(*k))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < n; i++) {
		if (names[i] == NULL || !evidence_is_counter(names[i]))
			continue;
		k[m].name = names[i];
		k[m].idx = i;
		k[m].rank = counter_rank(names[i], &k[m].kb, &k[m].sub);
		if (mode == EVIDENCE_COUNTERS_THP && k[m].rank == 3)
			continue;
		m++;
	}
	qsort(k, m, sizeof(*k), counter_key_cmp);
	for (i = 0; i < m; i++) {
		if (*npicked < room)
			idx[(*npicked)++] = k[i].idx;
		else
			(*nmore)++;
	}
	free(k);
	return 0;
}

/* ---- THP checks ---- */

const struct evidence_mean *
evidence_cell_mean(const struct evidence_cell *c, const char *name)
{
	size_t i;

	for (i = 0; c->means != NULL && i < c->nmeans; i++)
		if (c->means[i].name != NULL && c->means[i].n > 0 &&
		    strcmp(c->means[i].name, name) == 0)
			return &c->means[i];
	return NULL;
}

static const char *
cell_label(const struct evidence_cell *c)
{
	return c->label != NULL ? c->label : "";
}

/*
 * One page size of cell c: what says the kernel had it on (enabled, the
 * snapshot's value or NULL) against its alloc and fallback counters. what
 * is "THP" or "64kB mTHP", page "huge page" or "64kB folio".
 */
static int
thp_size(const struct evidence_cell *c, const char *what, const char *page,
    const char *enabled, const char *alloc, const char *fallback, struct evidence_lines *w)
{
	const struct evidence_mean *ma = evidence_cell_mean(c, alloc);
	const struct evidence_mean *mf = evidence_cell_mean(c, fallback);
	double a = ma != NULL ? ma->mean : 0, f = mf != NULL ? mf->mean : 0;
	int r = 0;

	if (enabled != NULL && strcmp(enabled, "always") == 0 && !(a > 0)) {
		if (ma == NULL)
			r = evidence_lines_add(w, "cell %s: %s enabled=always but no %s was "
			    "faulted in (no %s samples): the workload did not get %s",
			    cell_label(c), what, page, alloc, what);
		else
			r = evidence_lines_add(w, "cell %s: %s enabled=always but no %s was "
			    "faulted in (%s %.4g): the workload did not get %s", cell_label(c),
			    what, page, alloc, a, what);
	}
	if (r == 0 && a >= 0 && f > 0 && 100 * f / (a + f) > EVIDENCE_FALLBACK_PCT)
		r = evidence_lines_add(w, "cell %s: %.1f%% of %s faults fell back to smaller "
		    "pages (%s %.4g, %s %.4g per iteration)", cell_label(c), 100 * f / (a + f),
		    what, fallback, f, alloc, a);
	return r;
}

/* "transparent_hugepage/hugepages-64kB/enabled" -> 64, else 0. */
static int64_t
mthp_key_kb(const char *key)
{
	static const char pre[] = "transparent_hugepage/hugepages-", post[] = "kB/enabled";
	size_t n = strlen(key), lp = sizeof(pre) - 1, ls = sizeof(post) - 1;
	int64_t kb;

	if (n <= lp + ls || strncmp(key, pre, lp) != 0 || strcmp(key + n - ls, post) != 0 ||
	    key[lp] < '1' || key[lp] > '9' ||
	    parse_i64_n(key + lp, n - lp - ls, 1, INT64_MAX / 1024, &kb) != 0)
		return 0;
	return kb;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Add kb to the set sizes[0..*n) (at most EVIDENCE_MAX_MTHP). */
static void
size_add(int64_t *sizes, size_t *n, int64_t kb)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (sizes[i] == kb)
			return;
	if (*n < EVIDENCE_MAX_MTHP)
		sizes[(*n)++] = kb;
}

/* The string value of key in snapshot s, NULL when absent or unreadable;
 * a value of another type is noted once and reads as NULL. */
static int
snap_str(const struct evidence_cell *c, const char *key, const char **out,
    struct evidence_lines *w)
{
	const json_t *v = json_object_get(c->snapshot, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		*out = json_string_value(v);
		return 0;
	}
	return evidence_lines_add(w, "cell %s: %s in its snapshot is %s, not a string: not "
	    "checked", cell_label(c), key, jx_type_name(v));
}

static int
thp_cell(const struct evidence_cell *c, struct evidence_lines *w)
{
	int64_t sizes[EVIDENCE_MAX_MTHP], kb;
	char key[128], alloc[96], fb[96], what[48], page[48];
	const char *k, *en, *stat;
	const json_t *v;
	size_t i, ns = 0;
	int r;

	if (!json_is_object(c->snapshot))
		return evidence_lines_add(w, "cell %s: its snapshot is %s, not an object: THP "
		    "checks skipped", cell_label(c), jx_type_name(c->snapshot));
	if ((r = snap_str(c, "transparent_hugepage/enabled", &en, w)) != 0 ||
	    (r = thp_size(c, "THP", "huge page", en, "vmstat.thp_fault_alloc",
	    "vmstat.thp_fault_fallback", w)) != 0)
		return r;
	json_object_foreach((json_t *)c->snapshot, k, v)
		if ((kb = mthp_key_kb(k)) > 0)
			size_add(sizes, &ns, kb);
	for (i = 0; i < c->nmeans; i++)
		if (c->means[i].name != NULL && mthp_split(c->means[i].name, &kb, &stat) &&
		    (strcmp(stat, "anon_fault_alloc") == 0 ||
		    strcmp(stat, "anon_fault_fallback") == 0))
			size_add(sizes, &ns, kb);
	qsort(sizes, ns, sizeof(*sizes), cmp_i64);
	for (i = 0; i < ns; i++) {
		snprintf(key, sizeof(key), "transparent_hugepage/hugepages-%lldkB/enabled",
		    (long long)sizes[i]);
		snprintf(alloc, sizeof(alloc), "hugepages-%lldkB.anon_fault_alloc",
		    (long long)sizes[i]);
		snprintf(fb, sizeof(fb), "hugepages-%lldkB.anon_fault_fallback",
		    (long long)sizes[i]);
		snprintf(what, sizeof(what), "%lldkB mTHP", (long long)sizes[i]);
		snprintf(page, sizeof(page), "%lldkB folio", (long long)sizes[i]);
		if ((r = snap_str(c, key, &en, w)) != 0 ||
		    (r = thp_size(c, what, page, en, alloc, fb, w)) != 0)
			return r;
	}
	return 0;
}

int
evidence_thp(const struct evidence_cell *cells, size_t n, struct evidence_lines *w)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		if (cells[i].snapshot == NULL || cells[i].nmeans == 0)
			continue;
		if ((r = thp_cell(&cells[i], w)) != 0)
			return r;
	}
	return 0;
}

/* ---- the recipe's expectations ---- */

/* Does the cell's value of every key of when have the same text? A value
 * without one (an object, null) never matches. BF_ERR_ALLOC only. */
static int
expect_match(const json_t *when, const json_t *values, int *match)
{
	struct buf a, b;
	const char *k;
	json_t *v, *cv;
	int ra, rb, r = 0;

	*match = 1;
	buf_init(&a, BF_MAX_STR * 2);
	buf_init(&b, BF_MAX_STR * 2);
	json_object_foreach((json_t *)when, k, v) {
		if ((cv = json_object_get(values, k)) == NULL) {
			*match = 0;
			break;
		}
		buf_reset(&a);
		buf_reset(&b);
		ra = recipe_append_value(&a, v);
		rb = recipe_append_value(&b, cv);
		if (ra == BF_ERR_ALLOC || rb == BF_ERR_ALLOC) {
			r = BF_ERR_ALLOC;
			break;
		}
		if (ra != 0 || rb != 0 || a.len != b.len || (a.len > 0 &&
		    memcmp(a.data, b.data, a.len) != 0)) {
			*match = 0;
			break;
		}
	}
	buf_free(&a);
	buf_free(&b);
	return r;
}

int
evidence_expect(const struct recipe *rc, const struct evidence_cell *cells, size_t n,
    struct evidence_lines *w)
{
	const struct recipe_expect *e;
	const struct evidence_mean *m;
	size_t c, i;
	int r, match;

	for (c = 0; rc != NULL && c < n; c++) {
		if (cells[c].nmeans == 0)
			continue;
		for (i = 0; i < rc->nexpect; i++) {
			e = &rc->expect[i];
			if ((r = expect_match(e->when, cells[c].values, &match)) != 0)
				return r;
			if (!match)
				continue;
			if ((m = evidence_cell_mean(&cells[c], e->metric)) == NULL)
				r = evidence_lines_add(w, "cell %s: expectation %s %s %.15g failed: "
				    "no samples of %s", cell_label(&cells[c]), e->metric,
				    recipe_expect_op_str(e->op), e->value, e->metric);
			else if (!recipe_expect_holds(e, m->mean))
				r = evidence_lines_add(w, "cell %s: expectation %s %s %.15g failed: "
				    "mean %.6g", cell_label(&cells[c]), e->metric,
				    recipe_expect_op_str(e->op), e->value, m->mean);
			if (r != 0)
				return r;
		}
	}
	return 0;
}
