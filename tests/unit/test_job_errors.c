/*
 * test_job_errors.c: job_parse_all / job_validate_all report every field
 * error of a document at once (what a form shows at each field), one per
 * field, capped at BF_DIAG_LIST_MAX with the total counted; and the
 * first-error callers (job_parse, job_validate) are unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "job.h"
#include "path.h"
#include "recipe.h"
#include "t.h"

static const char recipe_text[] =
    "{\"name\": \"cpu-loop\","
    " \"params\": {\"loops\": {\"type\": \"int\", \"min\": 1, \"max\": 1000000000,"
    " \"default\": 1000000},"
    " \"mode\": {\"type\": \"enum\", \"values\": [\"a\", \"b\"], \"default\": \"a\"}},"
    " \"presets\": {\"test\": {\"loops\": 1000}},"
    " \"command\": [\"@agent\", \"work\", \"cpu\", \"--loops\", \"{loops}\"],"
    " \"metrics\": [{\"name\": \"wall_s\", \"unit\": \"s\", \"better\": \"lower\","
    " \"source\": \"wall_s\"}]}";

#define J(rest) "{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"}" rest "}"

/* Parse and (when the recipe is set) validate text as the API does. */
static int
all_errors(const struct recipe *rc, const char *text, struct bf_diag_list *l,
    struct bf_diag *d)
{
	struct job_spec *job = NULL;
	int r;

	bf_diag_list_clear(l);
	r = job_parse_all(text, strlen(text), &job, d, l);
	if ((r == 0 || r == BF_ERR_INVALID) && job != NULL && job->recipe != NULL &&
	    !job_is_suite(job) && (r = job_validate_all(job, rc, PATH_DEFAULT_ROOT, d, l)) == 0 &&
	    l->total > 0) {
		/* parse's errors stand when the recipe's check adds none */
		*d = l->item[0];
		r = BF_ERR_INVALID;
	}
	job_free(job);
	return r;
}

/* The index of field in l, or -1. */
static int
field_at(const struct bf_diag_list *l, const char *field)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->item[i].field, field) == 0)
			return (int)i;
	return -1;
}

static const struct {
	const char *text;
	size_t n;			/* errors expected */
	const char *fields[6];		/* each of them (an object's keys in any order) */
} several[] = {
	/* one per section: parse (keys, order, repetitions) and recipe (matrix, params) */
	{J(", \"bogus\": 1, \"order\": \"sideways\", \"repetitions\": {\"iterations\": 0},"
	    " \"matrix\": {\"loops\": [5, 0]}, \"params\": {\"mode\": \"c\"}"), 5,
	    {"bogus", "matrix.loops[1]", "repetitions.iterations", "order", "params.mode"}},
	/* within one section: every bad value of an axis, every bad param */
	{J(", \"matrix\": {\"loops\": [0, 5, -1, 2000000000], \"mode\": [\"a\", \"z\"]}"), 4,
	    {"matrix.loops[0]", "matrix.loops[2]", "matrix.loops[3]", "matrix.mode[1]"}},
	{J(", \"params\": {\"nope\": 1, \"loops\": \"x\", \"mode\": [1]}"), 3,
	    {"params.nope", "params.loops", "params.mode"}},
	/* a repeated value and a non-scalar: one error each, said once */
	{J(", \"matrix\": {\"loops\": [5, 5, {}]}"), 2, {"matrix.loops[1]", "matrix.loops[2]"}},
	/* knobs and a preset the recipe lacks */
	{J(", \"preset\": \"nosuch\", \"knobs\": {\"thp_enabled\": \"alwayz\","
	    " \"thp_defrag\": \"x\"}"), 3, {"preset", "knobs.thp_enabled", "knobs.thp_defrag"}},
	/* the recipe itself missing: the rest of the form is still checked */
	{"{\"machines\": {\"class\": \"x y\"}, \"order\": 3}", 3,
	    {"recipe", "machines.class", "order"}},
	/* a good job: nothing */
	{J(", \"matrix\": {\"loops\": [1, 2]}, \"params\": {\"mode\": \"b\"}"), 0, {NULL}},
};

static void
test_several(const struct recipe *rc, struct bf_diag_list *l)
{
	struct bf_diag d;
	size_t i, k;
	int r;

	for (i = 0; i < sizeof(several) / sizeof(several[0]); i++) {
		r = all_errors(rc, several[i].text, l, &d);
		T_EQ_INT(r, several[i].n > 0 ? BF_ERR_INVALID : 0);
		T_EQ_INT(l->n, several[i].n);
		T_EQ_INT(l->total, several[i].n);
		for (k = 0; k < several[i].n; k++) {
			int at = field_at(l, several[i].fields[k]);

			T_CHECK(at >= 0);
			/* each message names its own field first */
			T_CHECK(at >= 0 && strncmp(l->item[at].msg, several[i].fields[k],
			    strlen(several[i].fields[k])) == 0);
		}
		/* d is the first of them, as the one-error shape has always said */
		if (several[i].n > 0)
			T_EQ_STR(d.field, l->item[0].field);
		if (l->n != several[i].n)
			for (k = 0; k < l->n; k++)
				fprintf(stderr, "case %zu: %s\n", i, l->item[k].msg);
	}
}

/* The first-error functions stop at the first, as the runner and bundles need. */
static void
test_first_only(const struct recipe *rc)
{
	const char *t = J(", \"matrix\": {\"loops\": [0, -1]}, \"params\": {\"mode\": \"c\"}");
	const char *p = J(", \"bogus\": 1, \"order\": \"sideways\"");
	struct job_spec *job = NULL;
	struct bf_diag d;

	T_EQ_INT(job_parse(p, strlen(p), &job, &d), BF_ERR_INVALID);
	T_CHECK(job == NULL);
	T_EQ_STR(d.field, "bogus");
	T_EQ_INT(job_parse(t, strlen(t), &job, &d), 0);
	if (job == NULL)
		return;
	T_CHECK(job_validate(job, rc, PATH_DEFAULT_ROOT, &d) != 0);
	T_EQ_STR(d.field, "matrix.loops[0]");
	job_free(job);
}

/* 10,000 unknown keys, and 64 bad values on each of 16 axes: capped, counted. */
static void
test_hostile(const struct recipe *rc, struct bf_diag_list *l)
{
	struct bf_diag d;
	struct buf b;
	size_t i, k;

	buf_init(&b, 4 * 1024 * 1024);
	T_OK(buf_puts(&b, "{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"}"));
	for (i = 0; i < 10000; i++)
		T_OK(buf_printf(&b, ", \"x%zu\": %zu", i, i));
	T_OK(buf_puts(&b, "}"));
	T_EQ_INT(all_errors(rc, b.data, l, &d), BF_ERR_INVALID);
	T_EQ_INT(l->n, BF_DIAG_LIST_MAX);
	T_EQ_INT(l->total, 10000);
	T_EQ_STR(l->item[0].field, "x0");
	T_EQ_STR(l->item[BF_DIAG_LIST_MAX - 1].field, "x31");
	buf_free(&b);

	/* 16 axes (the most a matrix has) naming nothing: one error per axis */
	buf_init(&b, 4 * 1024 * 1024);
	T_OK(buf_puts(&b, "{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"}, "
	    "\"matrix\": {"));
	for (i = 0; i < 16; i++)
		T_OK(buf_printf(&b, "%s\"a%zu\": [1]", i ? ", " : "", i));
	T_OK(buf_puts(&b, "}}"));
	T_EQ_INT(all_errors(rc, b.data, l, &d), BF_ERR_INVALID);
	T_EQ_INT(l->n, 16);
	T_CHECK(field_at(l, "matrix.a15") >= 0);
	buf_free(&b);

	/* one axis, 64 values all out of range: one error per value */
	buf_init(&b, 4 * 1024 * 1024);
	T_OK(buf_puts(&b, "{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"}, "
	    "\"matrix\": {\"loops\": ["));
	for (k = 0; k < 64; k++)
		T_OK(buf_printf(&b, "%s-%zu", k ? ", " : "", k + 1));
	T_OK(buf_puts(&b, "]}}"));
	T_EQ_INT(all_errors(rc, b.data, l, &d), BF_ERR_INVALID);
	T_EQ_INT(l->n, BF_DIAG_LIST_MAX);
	T_EQ_INT(l->total, 64);
	T_EQ_STR(l->item[5].field, "matrix.loops[5]");
	buf_free(&b);

	/* over a cap is still at once, and alone: 413's BF_ERR_TOOBIG */
	buf_init(&b, 4 * 1024 * 1024);
	T_OK(buf_puts(&b, "{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"}, \"bad\": 1, "
	    "\"matrix\": {"));
	for (i = 0; i < 17; i++)
		T_OK(buf_printf(&b, "%s\"a%zu\": [1]", i ? ", " : "", i));
	T_OK(buf_puts(&b, "}}"));
	T_EQ_INT(all_errors(rc, b.data, l, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.field, "matrix");
	buf_free(&b);
}

/* A suite: every entry's errors, each under suite[i]. */
static void
test_suite(const struct recipe *rc, struct bf_diag_list *l)
{
	const char *t = "{\"machines\": {\"class\": \"demo\"}, \"suite\": ["
	    "{\"recipe\": \"cpu-loop\", \"params\": {\"nope\": 1, \"mode\": \"z\"}},"
	    "{\"recipe\": \"cpu-loop\", \"label\": \"b\", \"matrix\": {\"loops\": [0, 5]}}]}";
	const struct recipe *recs[2] = { rc, rc };
	struct job_spec *job = NULL;
	struct bf_diag d;

	bf_diag_list_clear(l);
	T_EQ_INT(job_parse_all(t, strlen(t), &job, &d, l), 0);
	if (job == NULL)
		return;
	T_EQ_INT(job_validate_suite_all(job, recs, PATH_DEFAULT_ROOT, &d, l), BF_ERR_INVALID);
	T_EQ_INT(l->n, 3);
	T_CHECK(field_at(l, "suite[0].params.nope") >= 0);
	T_CHECK(field_at(l, "suite[0].params.mode") >= 0);
	T_CHECK(field_at(l, "suite[1].matrix.loops[0]") >= 0);
	T_CHECK(l->n > 2 && strncmp(l->item[2].msg, "suite[1].matrix.loops[0]: ", 26) == 0);
	T_EQ_STR(d.field, l->item[0].field);
	/* the first-error form stops at the first entry's first */
	T_CHECK(job_validate_suite(job, recs, PATH_DEFAULT_ROOT, &d) != 0);
	T_EQ_STR(d.field, l->item[0].field);
	job_free(job);
}

/* The list itself: one per field, the first said stands, empty messages skipped. */
static void
test_list(struct bf_diag_list *l)
{
	struct bf_diag d;

	bf_diag_list_clear(l);
	bf_diag_set(&d, "a", "first");
	bf_diag_list_add(l, &d);
	bf_diag_set(&d, "a", "second");
	bf_diag_list_add(l, &d);
	bf_diag_clear(&d);
	bf_diag_list_add(l, &d);
	bf_diag_list_add(NULL, &d);
	T_EQ_INT(l->n, 1);
	T_EQ_INT(l->total, 1);
	T_EQ_STR(l->item[0].msg, "a: first");
}

int
main(void)
{
	struct bf_diag_list *l = calloc(1, sizeof(*l));
	struct recipe *rc = NULL;
	struct bf_diag d;

	T_EQ_INT(recipe_parse(recipe_text, strlen(recipe_text), &rc, &d), 0);
	if (rc == NULL || l == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		free(l);
		return 1;
	}
	test_list(l);
	test_several(rc, l);
	test_first_only(rc);
	test_hostile(rc, l);
	test_suite(rc, l);
	recipe_free(rc);
	free(l);
	return t_done();
}
