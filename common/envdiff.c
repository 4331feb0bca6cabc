/*
 * envdiff.c: which environment settings differ between snapshots, grouped
 * for a person (envdiff.h). The snapshots are untrusted (they come from
 * the agent through the store): every value is type-checked, nothing is
 * preallocated from a count they claim, and text output escapes them.
 * Output values are the input's own json_t, shared by reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "envdiff.h"
#include "jx.h"

/* Display order. */
enum {
	ENVDIFF_G_KERNEL,
	ENVDIFF_G_THP,
	ENVDIFF_G_HUGETLB,
	ENVDIFF_G_VM,
	ENVDIFF_G_CPU,
	ENVDIFF_G_NUMA,
	ENVDIFF_G_FIRMWARE,
	ENVDIFF_G_SOFTWARE,
	ENVDIFF_G_OTHER,
	ENVDIFF_NGROUPS
};

static const char *const envdiff_group_names[ENVDIFF_NGROUPS] = {
	[ENVDIFF_G_KERNEL] = "kernel",
	[ENVDIFF_G_THP] = "THP/mTHP",
	[ENVDIFF_G_HUGETLB] = "hugetlb",
	[ENVDIFF_G_VM] = "vm sysctls",
	[ENVDIFF_G_CPU] = "CPU/power",
	[ENVDIFF_G_NUMA] = "NUMA",
	[ENVDIFF_G_FIRMWARE] = "firmware",
	[ENVDIFF_G_SOFTWARE] = "software",
	[ENVDIFF_G_OTHER] = "other",
};

/*
 * Key -> group. A prefix entry matches every key starting with it, an exact
 * one only that key; the longest match wins. The kernel.* keys are exact:
 * kernel.numa_balancing and the like are sysctls, and a kernel.* key the
 * agent learns later must land in "other" until someone files it here, not
 * pass as the kernel's identity.
 */
struct envdiff_rule {
	const char *prefix;
	int exact;
	int group;
};

static const struct envdiff_rule envdiff_rules[] = {
	{ .prefix = "kernel.release", .exact = 1, .group = ENVDIFF_G_KERNEL },
	{ .prefix = "kernel.version", .exact = 1, .group = ENVDIFF_G_KERNEL },
	{ .prefix = "kernel.cmdline", .exact = 1, .group = ENVDIFF_G_KERNEL },
	{ .prefix = "kernel.config_sha256", .exact = 1, .group = ENVDIFF_G_KERNEL },
	{ .prefix = "kernel.config_source", .exact = 1, .group = ENVDIFF_G_KERNEL },
	{ .prefix = "kernel.page_size", .exact = 1, .group = ENVDIFF_G_KERNEL },
	{ .prefix = "kernel.compiler", .exact = 1, .group = ENVDIFF_G_KERNEL },
	{ .prefix = "kernel.va_above_48bit", .exact = 1, .group = ENVDIFF_G_KERNEL },
	{ .prefix = "transparent_hugepage/", .exact = 0, .group = ENVDIFF_G_THP },
	{ .prefix = "hugetlb/", .exact = 0, .group = ENVDIFF_G_HUGETLB },
	{ .prefix = "vm.", .exact = 0, .group = ENVDIFF_G_VM },
	{ .prefix = "kernel.numa_balancing", .exact = 1, .group = ENVDIFF_G_VM },
	{ .prefix = "kernel.randomize_va_space", .exact = 1, .group = ENVDIFF_G_VM },
	{ .prefix = "kernel.sched_autogroup_enabled", .exact = 1, .group = ENVDIFF_G_VM },
	{ .prefix = "kernel.perf_event_paranoid", .exact = 1, .group = ENVDIFF_G_VM },
	{ .prefix = "cpu.", .exact = 0, .group = ENVDIFF_G_CPU },
	{ .prefix = "cpufreq.", .exact = 0, .group = ENVDIFF_G_CPU },
	{ .prefix = "cpuidle.", .exact = 0, .group = ENVDIFF_G_CPU },
	{ .prefix = "numa.", .exact = 0, .group = ENVDIFF_G_NUMA },
	{ .prefix = "dmi.", .exact = 0, .group = ENVDIFF_G_FIRMWARE },
	{ .prefix = "os.", .exact = 0, .group = ENVDIFF_G_SOFTWARE },
	{ .prefix = "sw.", .exact = 0, .group = ENVDIFF_G_SOFTWARE },
	{ .prefix = "bin.", .exact = 0, .group = ENVDIFF_G_SOFTWARE },
	{ .prefix = "pkg.", .exact = 0, .group = ENVDIFF_G_SOFTWARE },
	{ .prefix = "cgroup.", .exact = 0, .group = ENVDIFF_G_SOFTWARE },
};

/* Different on every boot by design: a diff of them says nothing. */
static const char *const envdiff_ignore[] = { "kernel.boot_id", NULL };

static int
envdiff_group_idx(const char *key)
{
	size_t i, n, best = 0;
	int g = ENVDIFF_G_OTHER;

	for (i = 0; i < sizeof(envdiff_rules) / sizeof(envdiff_rules[0]); i++) {
		const struct envdiff_rule *e = &envdiff_rules[i];

		n = strlen(e->prefix);
		if (n <= best || strncmp(key, e->prefix, n) != 0 || (e->exact && key[n] != '\0'))
			continue;
		best = n;
		g = e->group;
	}
	return g;
}

const char *
envdiff_group(const char *key)
{
	return envdiff_group_names[envdiff_group_idx(key)];
}

int
envdiff_ignored(const char *key)
{
	size_t i;

	for (i = 0; envdiff_ignore[i] != NULL; i++)
		if (strcmp(key, envdiff_ignore[i]) == 0)
			return 1;
	return 0;
}

/* s[0..len) with control bytes, DEL and bytes past ASCII as \xNN, cut to
 * fit out (with "..."): for messages only. */
static void
envdiff_esc(char *out, size_t outsz, const char *s, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 8 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (i < len && o + 3 < outsz) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* Each value of snapshot s is a string or null; who names s in d. */
static int
envdiff_check(const json_t *s, const char *who, struct bf_diag *d)
{
	char k[BF_DIAG_FIELD], field[2 * BF_DIAG_FIELD + 2];
	const char *key;
	json_t *v;

	if (!json_is_object(s)) {
		bf_diag_set(d, who, "%s; expected a snapshot object",
		    s != NULL ? jx_type_name(s) : "missing");
		return BF_ERR_INVALID;
	}
	json_object_foreach((json_t *)s, key, v) {
		if (json_is_string(v) || json_is_null(v))
			continue;
		envdiff_esc(k, sizeof(k), key, strlen(key));
		snprintf(field, sizeof(field), "%s.%s", who, k);
		bf_diag_set(d, field, "%s; expected a string or null", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	return 0;
}

/* Order of values: absent (NULL), then null, then strings by their bytes. */
static int
envdiff_vcmp(const json_t *x, const json_t *y)
{
	size_t lx, ly;
	int c;

	if (x == NULL || y == NULL)
		return (x != NULL) - (y != NULL);
	if (json_is_null(x) || json_is_null(y))
		return !json_is_null(x) - !json_is_null(y);
	lx = json_string_length(x);
	ly = json_string_length(y);
	if ((c = memcmp(json_string_value(x), json_string_value(y), lx < ly ? lx : ly)) != 0)
		return c;
	return (lx > ly) - (lx < ly);
}

static int
envdiff_vcmp_q(const void *p, const void *q)
{
	return envdiff_vcmp(*(const json_t *const *)p, *(const json_t *const *)q);
}

/* One differing (or drifting) key; the pointers borrow from the inputs. */
struct envdiff_ent {
	const char *key;
	int group;
	const json_t *a, *b;
};

static int
envdiff_ent_cmp(const void *p, const void *q)
{
	const struct envdiff_ent *x = p, *y = q;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Add o[k] = v, v a new reference or NULL (out of memory); steals v. */
static int
envdiff_set(json_t *o, const char *k, json_t *v)
{
	return json_object_set_new(o, k, v) == 0 ? 0 : BF_ERR_ALLOC;
}

static int
envdiff_push(json_t *arr, json_t *v)
{
	return json_array_append_new(arr, v) == 0 ? 0 : BF_ERR_ALLOC;
}

/* A JSON string of s; text that is not UTF-8 (a label from elsewhere) is
 * stored escaped rather than refused. NULL only when out of memory. */
static json_t *
envdiff_jstr(const char *s)
{
	char esc[4 * BF_MAX_ENVDIFF_TEXT + 8];
	json_t *j;

	if ((j = json_string(s)) != NULL)
		return j;
	envdiff_esc(esc, sizeof(esc), s, strlen(s));
	return json_string(esc);
}

/* o[name] = v's value (shared), or null; absent: o[flag] = true too. */
static int
envdiff_set_val(json_t *o, const char *name, const char *flag, const json_t *v)
{
	int r;

	if ((r = envdiff_set(o, name, v != NULL ? json_incref((json_t *)v) : json_null())) != 0)
		return r;
	return v == NULL ? envdiff_set(o, flag, json_true()) : 0;
}

/* Append the key entry of a pair diff to keys. */
static int
envdiff_pair_key(json_t *keys, const struct envdiff_ent *e)
{
	json_t *k;

	if (envdiff_push(keys, k = json_object()) != 0 ||
	    envdiff_set(k, "key", envdiff_jstr(e->key)) != 0 ||
	    envdiff_set_val(k, "a", "a_absent", e->a) != 0 ||
	    envdiff_set_val(k, "b", "b_absent", e->b) != 0)
		return BF_ERR_ALLOC;
	return 0;
}

/* The pair diff of ents[0..n), sorted. */
static int
envdiff_pair_build(const struct envdiff_ent *ents, size_t n, json_t **out)
{
	json_t *root = NULL, *groups, *g = NULL, *keys = NULL;
	size_t i, ing = 0;
	int r = BF_ERR_ALLOC, cur = -1;

	if ((root = json_object()) == NULL || (groups = json_array()) == NULL ||
	    envdiff_set(root, "groups", groups) != 0 ||
	    envdiff_set(root, "n", json_integer((json_int_t)n)) != 0 ||
	    envdiff_set(root, "more", json_integer((json_int_t)(n > BF_MAX_ENVDIFF_KEYS ?
	    n - BF_MAX_ENVDIFF_KEYS : 0))) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (ents[i].group != cur) {
			if (g != NULL && envdiff_set(g, "n", json_integer((json_int_t)ing)) != 0)
				goto out;
			cur = ents[i].group;
			ing = 0;
			if ((g = json_object()) == NULL || envdiff_push(groups, g) != 0 ||
			    envdiff_set(g, "group", json_string(envdiff_group_names[cur])) != 0 ||
			    (keys = json_array()) == NULL || envdiff_set(g, "keys", keys) != 0)
				goto out;
		}
		ing++;
		if (i < BF_MAX_ENVDIFF_KEYS && envdiff_pair_key(keys, &ents[i]) != 0)
			goto out;
	}
	if (g != NULL && envdiff_set(g, "n", json_integer((json_int_t)ing)) != 0)
		goto out;
	*out = root;
	root = NULL;
	r = 0;
out:
	json_decref(root);
	return r;
}

int
envdiff_pair(const json_t *a, const json_t *b, json_t **out, struct bf_diag *d)
{
	struct envdiff_ent *ents = NULL;
	const char *key;
	json_t *v, *w;
	size_t n = 0, na, nb;
	int r;

	if ((r = envdiff_check(a, "a", d)) != 0 || (r = envdiff_check(b, "b", d)) != 0)
		goto out;
	na = json_object_size(a);
	nb = json_object_size(b);
	if ((ents = calloc(na + nb + 1, sizeof(*ents))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_object_foreach((json_t *)a, key, v) {
		w = json_object_get(b, key);
		if (envdiff_ignored(key) || envdiff_vcmp(v, w) == 0)
			continue;
		ents[n++] = (struct envdiff_ent){ .key = key, .group = envdiff_group_idx(key),
		    .a = v, .b = w };
	}
	json_object_foreach((json_t *)b, key, w) {
		if (envdiff_ignored(key) || json_object_get(a, key) != NULL)
			continue;
		ents[n++] = (struct envdiff_ent){ .key = key, .group = envdiff_group_idx(key),
		    .a = NULL, .b = w };
	}
	qsort(ents, n, sizeof(*ents), envdiff_ent_cmp);
	r = envdiff_pair_build(ents, n, out);
out:
	free(ents);
	return r;
}

/* One listed value of a drifting key. */
struct envdiff_seen {
	const json_t *v;	/* NULL: absent */
	size_t count, first;
};

/* Append the drift entry of key over the snapshots in snaps (NULLs
 * skipped) to keys; spill has room for one pointer per snapshot. */
static int
envdiff_drift_key(json_t *keys, const struct envdiff_ent *ke, const json_t *const *snaps,
    const char *const *labels, size_t n, const json_t **spill)
{
	struct envdiff_seen seen[BF_MAX_ENVDIFF_VALUES];
	json_t *k, *vals, *e;
	const json_t *v;
	size_t i, j, ns = 0, nspill = 0, distinct = 0;

	for (i = 0; i < n; i++) {
		if (snaps[i] == NULL)
			continue;
		v = json_object_get(snaps[i], ke->key);
		for (j = 0; j < ns && envdiff_vcmp(seen[j].v, v) != 0; j++)
			;
		if (j < ns)
			seen[j].count++;
		else if (ns < BF_MAX_ENVDIFF_VALUES)
			seen[ns++] = (struct envdiff_seen){ .v = v, .count = 1, .first = i };
		else
			spill[nspill++] = v;
	}
	/* the values past the cap are counted, distinct ones once */
	qsort(spill, nspill, sizeof(*spill), envdiff_vcmp_q);
	for (i = 0; i < nspill; i++)
		if (i == 0 || envdiff_vcmp(spill[i - 1], spill[i]) != 0)
			distinct++;
	if (envdiff_push(keys, k = json_object()) != 0 ||
	    envdiff_set(k, "key", envdiff_jstr(ke->key)) != 0 ||
	    envdiff_set(k, "group", json_string(envdiff_group_names[ke->group])) != 0 ||
	    envdiff_set(k, "values", vals = json_array()) != 0 ||
	    envdiff_set(k, "more_values", json_integer((json_int_t)distinct)) != 0 ||
	    envdiff_set(k, "more_runs", json_integer((json_int_t)nspill)) != 0)
		return BF_ERR_ALLOC;
	for (j = 0; j < ns; j++) {
		const char *l = labels != NULL ? labels[seen[j].first] : NULL;

		if (envdiff_push(vals, e = json_object()) != 0 ||
		    envdiff_set_val(e, "value", "absent", seen[j].v) != 0 ||
		    envdiff_set(e, "count", json_integer((json_int_t)seen[j].count)) != 0 ||
		    envdiff_set(e, "first", l != NULL ? envdiff_jstr(l) : json_null()) != 0 ||
		    envdiff_set(e, "first_index", json_integer((json_int_t)seen[j].first)) != 0)
			return BF_ERR_ALLOC;
	}
	return 0;
}

/* Does key have one value (or be absent) in all snapshots? */
static int
envdiff_same(const char *key, const json_t *const *snaps, size_t n)
{
	const json_t *v0 = NULL;
	size_t i;
	int have = 0;

	for (i = 0; i < n; i++) {
		if (snaps[i] == NULL)
			continue;
		if (!have) {
			v0 = json_object_get(snaps[i], key);
			have = 1;
		} else if (envdiff_vcmp(v0, json_object_get(snaps[i], key)) != 0) {
			return 0;
		}
	}
	return 1;
}

int
envdiff_drift(const json_t *const *snaps, const char *const *labels, size_t n,
    json_t **out, struct bf_diag *d)
{
	struct envdiff_ent *ents = NULL;
	const json_t **spill = NULL;
	json_t *uni = NULL, *root = NULL, *keys, *v;
	char who[BF_DIAG_FIELD];
	const char *key;
	size_t i, m = 0, nu, ne = 0;
	int r;

	for (i = 0; i < n; i++) {
		if (snaps[i] == NULL)
			continue;
		m++;
		if (labels != NULL && labels[i] != NULL)
			envdiff_esc(who, sizeof(who), labels[i], strlen(labels[i]));
		else
			snprintf(who, sizeof(who), "snapshots[%zu]", i);
		if ((r = envdiff_check(snaps[i], who, d)) != 0)
			goto out;
	}
	r = BF_ERR_ALLOC;
	/* every key of any snapshot, once (a jansson object as the set) */
	if ((uni = json_object()) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (snaps[i] == NULL)
			continue;
		json_object_foreach((json_t *)snaps[i], key, v) {
			if (!envdiff_ignored(key) && json_object_get(uni, key) == NULL &&
			    json_object_set_new_nocheck(uni, key, json_null()) != 0)
				goto out;
		}
	}
	nu = json_object_size(uni);
	if ((ents = calloc(nu + 1, sizeof(*ents))) == NULL ||
	    (spill = calloc(m + 1, sizeof(*spill))) == NULL)
		goto out;
	json_object_foreach(uni, key, v) {
		if (!envdiff_same(key, snaps, n))
			ents[ne++] = (struct envdiff_ent){ .key = key,
			    .group = envdiff_group_idx(key) };
	}
	qsort(ents, ne, sizeof(*ents), envdiff_ent_cmp);
	if ((root = json_object()) == NULL || (keys = json_array()) == NULL ||
	    envdiff_set(root, "keys", keys) != 0 ||
	    envdiff_set(root, "n", json_integer((json_int_t)ne)) != 0 ||
	    envdiff_set(root, "runs", json_integer((json_int_t)m)) != 0 ||
	    envdiff_set(root, "more", json_integer((json_int_t)(ne > BF_MAX_ENVDIFF_KEYS ?
	    ne - BF_MAX_ENVDIFF_KEYS : 0))) != 0)
		goto out;
	for (i = 0; i < ne && i < BF_MAX_ENVDIFF_KEYS; i++)
		if (envdiff_drift_key(keys, &ents[i], snaps, labels, n, spill) != 0)
			goto out;
	*out = root;
	root = NULL;
	r = 0;
out:
	json_decref(root);
	json_decref(uni);
	free(ents);
	free(spill);
	return r;
}
