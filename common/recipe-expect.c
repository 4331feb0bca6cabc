/*
 * recipe-expect.c: a recipe's "expect" (recipe.h): what must hold of a
 * cell's mean for its numbers to mean what the recipe says ("with THP
 * always, huge pages were faulted in"). Parsed strictly at load like the
 * rest of the recipe; the job report evaluates them (evidence.h).
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "evidence.h"
#include "jx.h"
#include "knob.h"
#include "recipe.h"
#include "recipe-int.h"

static const char *const recipe_expect_keys[] = {
	"when", "metric", "gt", "ge", "lt", "le", "eq", NULL
};

/* One comparison: its key in the document and its symbol. */
static const struct {
	const char *key, *sym;
	enum recipe_expect_op op;
} recipe_expect_ops[] = {
	{ .key = "gt", .sym = ">", .op = RECIPE_EXPECT_GT },
	{ .key = "ge", .sym = ">=", .op = RECIPE_EXPECT_GE },
	{ .key = "lt", .sym = "<", .op = RECIPE_EXPECT_LT },
	{ .key = "le", .sym = "<=", .op = RECIPE_EXPECT_LE },
	{ .key = "eq", .sym = "==", .op = RECIPE_EXPECT_EQ },
};
#define RECIPE_NOPS	(sizeof(recipe_expect_ops) / sizeof(recipe_expect_ops[0]))

/* What the agent measures for every iteration (recipe.h, metric sources). */
static const char *const recipe_expect_agent[] = {
	"wall_s", "user_s", "sys_s", "maxrss_kb", NULL
};

const char *
recipe_expect_op_str(enum recipe_expect_op op)
{
	size_t i;

	for (i = 0; i < RECIPE_NOPS; i++)
		if (recipe_expect_ops[i].op == op)
			return recipe_expect_ops[i].sym;
	return "?";
}

int
recipe_expect_holds(const struct recipe_expect *e, double mean)
{
	switch (e->op) {
	case RECIPE_EXPECT_GT:
		return mean > e->value;
	case RECIPE_EXPECT_GE:
		return mean >= e->value;
	case RECIPE_EXPECT_LT:
		return mean < e->value;
	case RECIPE_EXPECT_LE:
		return mean <= e->value;
	case RECIPE_EXPECT_EQ:
		return mean == e->value;
	}
	return 0;
}

void
recipe_expect_clear(struct recipe_expect *e)
{
	json_decref(e->when);
	free(e->metric);
}

/* A metric the recipe has, the agent measures, or a counter. */
static int
expect_metric_known(const struct recipe *rc, const char *m)
{
	size_t i;

	for (i = 0; i < rc->nmetrics; i++)
		if (strcmp(rc->metrics[i].name, m) == 0)
			return 1;
	for (i = 0; recipe_expect_agent[i] != NULL; i++)
		if (strcmp(recipe_expect_agent[i], m) == 0)
			return 1;
	return evidence_is_counter(m);
}

/* "when" of one entry: every key a parameter or a knob, with a value it
 * may take. path is "expect[i]". */
static int
expect_when(const struct recipe *rc, const json_t *w, const char *path, struct bf_diag *d)
{
	const struct recipe_param *p;
	char wp[BF_DIAG_FIELD], kp[BF_DIAG_FIELD], text[KNOB_MAX_VALUE], why[KNOB_MAX_WHY];
	const char *k;
	json_t *v;
	int r;

	if (json_object_size(w) > BF_MAX_EXPECT_WHEN) {
		bf_diag_set(d, jx_path(wp, sizeof(wp), path, "when"), "has %zu keys; at most %d",
		    json_object_size(w), BF_MAX_EXPECT_WHEN);
		return BF_ERR_TOOBIG;
	}
	jx_path(wp, sizeof(wp), path, "when");
	json_object_foreach((json_t *)w, k, v) {
		jx_path(kp, sizeof(kp), wp, k);
		if ((r = jx_check_name(k, kp, d)) != 0)
			return r;
		if ((p = recipe_param(rc, k)) != NULL) {
			if ((r = recipe_check_value(p, v, NULL, kp, d)) != 0)
				return r;
			continue;
		}
		if (knob_find(k) == NULL) {
			bf_diag_set(d, kp, "names neither a parameter of the recipe nor a knob");
			return BF_ERR_INVALID;
		}
		if (json_is_string(v) && strlen(json_string_value(v)) < sizeof(text))
			snprintf(text, sizeof(text), "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
		else {
			bf_diag_set(d, kp, "expected a knob value (a string or an integer), got %s",
			    jx_type_name(v));
			return BF_ERR_INVALID;
		}
		if ((r = knob_check(k, text, why, sizeof(why))) != 0) {
			bf_diag_set(d, kp, "%s", why);
			return r;
		}
	}
	return 0;
}

static int
expect_one(struct recipe *rc, struct recipe_expect *e, const json_t *spec, const char *path,
    struct bf_diag *d)
{
	char mp[BF_DIAG_FIELD];
	const char *m = NULL, *opkey = NULL;
	json_t *w = NULL;
	size_t i, nops = 0;
	int r;

	if (!json_is_object(spec)) {
		bf_diag_set(d, path, "expected an object, got %s", jx_type_name(spec));
		return BF_ERR_INVALID;
	}
	if ((r = jx_only_keys(spec, recipe_expect_keys, path, d)) != 0 ||
	    (r = jx_str(spec, "metric", JX_REQUIRED, BF_MAX_NAME, &m, path, d)) != 0 ||
	    (r = jx_check_name(m, jx_path(mp, sizeof(mp), path, "metric"), d)) != 0)
		return r;
	if (!expect_metric_known(rc, m)) {
		bf_diag_set(d, mp, "\"%s\" is no metric of the recipe, agent measure (wall_s, "
		    "user_s, sys_s, maxrss_kb) or counter (vmstat., hugepages-, cgroup., smaps., "
		    "pmu.)", m);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < RECIPE_NOPS; i++) {
		if (json_object_get(spec, recipe_expect_ops[i].key) == NULL)
			continue;
		nops++;
		opkey = recipe_expect_ops[i].key;
		e->op = recipe_expect_ops[i].op;
	}
	if (nops != 1) {
		bf_diag_set(d, path, "needs exactly one of gt, ge, lt, le, eq; has %zu", nops);
		return BF_ERR_INVALID;
	}
	if ((r = jx_num(spec, opkey, JX_REQUIRED, -DBL_MAX, DBL_MAX, &e->value, path, d)) != 0)
		return r;
	if ((r = jx_obj(spec, "when", JX_OPTIONAL, &w, path, d)) != 0 ||
	    (w != NULL && (r = expect_when(rc, w, path, d)) != 0))
		return r;
	if ((e->metric = strdup(m)) == NULL ||
	    (e->when = w != NULL ? json_incref(w) : json_object()) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

int
recipe_parse_expect(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char path[BF_DIAG_FIELD];
	json_t *arr = NULL, *v;
	size_t i;
	int r;

	if ((r = jx_arr(doc, "expect", JX_OPTIONAL, 1, BF_MAX_EXPECT, &arr, "", d)) != 0)
		return r;
	if (arr == NULL)
		return 0;
	if ((rc->expect = calloc(json_array_size(arr), sizeof(*rc->expect))) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(arr, i, v) {
		jx_path_idx(path, sizeof(path), "expect", i);
		r = expect_one(rc, &rc->expect[i], v, path, d);
		/* counted even on failure: recipe_free clears what it holds */
		rc->nexpect++;
		if (r != 0)
			return r;
	}
	return 0;
}
