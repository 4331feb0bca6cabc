/*
 * test_matrix.c: matrix expansion order (first axis slowest), labels,
 * resolved values, the cell cap without overflow, and that a hostile axis
 * value reaches the rendered argv as one literal element.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "err.h"
#include "job.h"
#include "path.h"
#include "matrix.h"
#include "recipe.h"
#include "t.h"

static const char recipe_text[] =
    "{\"name\": \"cpu-loop\","
    " \"params\": {\"loops\": {\"type\": \"int\", \"min\": 1, \"max\": 1000000000,"
    " \"default\": 1000000},"
    " \"ratio\": {\"type\": \"number\", \"min\": 0, \"max\": 1, \"default\": 0.5},"
    " \"mode\": {\"type\": \"enum\", \"values\": [\"a\", \"b\"], \"default\": \"a\"},"
    " \"msg\": {\"type\": \"string\", \"max_len\": 256, \"default\": \"hi\","
    " \"pattern\": \".*\"},"
    " \"flag\": {\"type\": \"bool\", \"default\": false}},"
    " \"presets\": {\"test\": {\"loops\": 1000}},"
    " \"command\": [\"@agent\", \"work\", \"echo\", \"{msg}\", \"--loops={loops}\"]}";

static json_t *
load(const char *text)
{
	json_error_t e;

	return json_loads(text, 0, &e);
}

static void
test_count(void)
{
	static const struct {
		const char *m;
		int r;
		size_t n;
	} cc[] = {
		{"{}", 0, 1},
		{"{\"a\": [1, 2], \"b\": [1, 2, 3]}", 0, 6},
		{"{\"a\": [1], \"b\": [1], \"c\": [1]}", 0, 1},
		{"{\"a\": [], \"b\": [1, 2]}", 0, 0},
		{"{\"a\": 5}", BF_ERR_INVALID, 0},
		{"[]", BF_ERR_INVALID, 0},
	};
	struct bf_diag d;
	struct buf b;
	json_t *m;
	size_t i, n;
	int k, naxes;

	for (i = 0; i < sizeof(cc) / sizeof(cc[0]); i++) {
		m = load(cc[i].m);
		n = 12345;
		T_EQ_INT(matrix_count(m, &n, &d), cc[i].r);
		if (cc[i].r == 0)
			T_EQ_INT(n, cc[i].n);
		else
			T_EQ_INT(n, 12345);
		json_decref(m);
	}
	T_EQ_INT(matrix_count(NULL, &n, &d), 0);
	T_EQ_INT(n, 1);
	m = load("{\"m\": {\"a\": 5}}");
	T_EQ_INT(matrix_count(json_object_get(m, "m"), &n, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "matrix: axis a is an integer, not an array");
	json_decref(m);

	/* 64 x 64 = 4096 is exactly the cap; one more axis of 2 is over it; 16
	 * axes of 64 (2^96) would wrap a 64-bit product and must not */
	for (naxes = 1; naxes <= BF_MAX_AXES; naxes++) {
		buf_init(&b, 0);
		T_OK(buf_puts(&b, "{"));
		for (i = 0; i < (size_t)naxes; i++) {
			T_OK(buf_printf(&b, "%s\"a%zu\": [", i ? ", " : "", i));
			for (k = 0; k < BF_MAX_AXIS_VALUES; k++)
				T_OK(buf_printf(&b, "%s%d", k ? "," : "", k));
			T_OK(buf_puts(&b, "]"));
		}
		T_OK(buf_puts(&b, "}"));
		m = load(b.data);
		n = 0;
		bf_diag_clear(&d);
		T_EQ_INT(matrix_count(m, &n, &d), naxes <= 2 ? 0 : BF_ERR_TOOBIG);
		if (naxes <= 2)
			T_EQ_INT(n, naxes == 1 ? 64 : 4096);
		else
			T_EQ_STR(d.msg, "matrix: expands to more than 4096 cells");
		json_decref(m);
		buf_free(&b);
	}
	m = load("{\"a\": [1, 2], \"b\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,"
	    " 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37,"
	    " 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58,"
	    " 59, 60, 61, 62, 63, 64], \"c\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,"
	    " 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33]}");
	T_EQ_INT(matrix_count(m, &n, &d), BF_ERR_TOOBIG);
	json_decref(m);
}

/* Parse and validate a job against r; NULL on failure (reported). */
static struct job_spec *
job(const char *text, const struct recipe *r)
{
	struct job_spec *j = NULL;
	struct bf_diag d;

	if (job_parse(text, strlen(text), &j, &d) != 0 ||
	    job_validate(j, r, PATH_DEFAULT_ROOT, &d) != 0) {
		fprintf(stderr, "job %s: %s\n", text, d.msg);
		t_fails++;
		job_free(j);
		return NULL;
	}
	return j;
}

static void
test_expand(const struct recipe *r)
{
	static const char *const labels[] = {
		"mode=a loops=1", "mode=a loops=2", "mode=a loops=3",
		"mode=b loops=1", "mode=b loops=2", "mode=b loops=3",
	};
	static const char *const labels2[] = {
		"loops=1 mode=a", "loops=1 mode=b", "loops=2 mode=a", "loops=2 mode=b",
	};
	struct matrix_cell *cells = NULL;
	struct job_spec *j;
	struct bf_diag d;
	size_t n = 0, i;

	j = job("{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"},"
	    " \"preset\": \"test\", \"params\": {\"msg\": \"m\"},"
	    " \"matrix\": {\"mode\": [\"a\", \"b\"], \"loops\": [1, 2, 3]}}", r);
	if (j == NULL)
		return;
	T_EQ_INT(matrix_expand(j, r, &cells, &n, &d), 0);
	T_EQ_INT(n, 6);
	for (i = 0; cells != NULL && i < n; i++) {
		T_EQ_INT(cells[i].index, i);
		T_EQ_STR(cells[i].label, labels[i]);
		T_EQ_INT(json_object_size(cells[i].axes), 2);
		T_EQ_INT(json_object_size(cells[i].values), 5);
		/* the cell's axes override the preset's loops */
		T_EQ_INT(json_integer_value(json_object_get(cells[i].values, "loops")), i % 3 + 1);
		T_EQ_STR(json_string_value(json_object_get(cells[i].values, "mode")),
		    i < 3 ? "a" : "b");
		T_EQ_STR(json_string_value(json_object_get(cells[i].values, "msg")), "m");
		T_CHECK(json_is_false(json_object_get(cells[i].values, "flag")));
		T_CHECK(json_object_get(cells[i].axes, "msg") == NULL);
	}
	matrix_free(cells, n);
	job_free(j);

	/* the written order decides: loops first is now the slow axis */
	j = job("{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"},"
	    " \"matrix\": {\"loops\": [1, 2], \"mode\": [\"a\", \"b\"]}}", r);
	if (j == NULL)
		return;
	cells = NULL;
	T_EQ_INT(matrix_expand(j, r, &cells, &n, &d), 0);
	T_EQ_INT(n, 4);
	for (i = 0; cells != NULL && i < n; i++)
		T_EQ_STR(cells[i].label, labels2[i]);
	matrix_free(cells, n);
	job_free(j);

	/* no matrix: one cell, "default", the resolved values */
	j = job("{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"}}", r);
	if (j == NULL)
		return;
	cells = NULL;
	T_EQ_INT(matrix_expand(j, r, &cells, &n, &d), 0);
	T_EQ_INT(n, 1);
	if (cells != NULL) {
		T_EQ_STR(cells[0].label, "default");
		T_EQ_INT(cells[0].index, 0);
		T_EQ_INT(json_object_size(cells[0].axes), 0);
		T_EQ_INT(json_integer_value(json_object_get(cells[0].values, "loops")), 1000000);
	}
	matrix_free(cells, n);
	job_free(j);

	/* numbers and bools in labels */
	j = job("{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"},"
	    " \"matrix\": {\"ratio\": [0.25, 1, 1.0e-1], \"flag\": [true, false]}}", r);
	if (j == NULL)
		return;
	cells = NULL;
	T_EQ_INT(matrix_expand(j, r, &cells, &n, &d), 0);
	T_EQ_INT(n, 6);
	if (cells != NULL && n == 6) {
		T_EQ_STR(cells[0].label, "ratio=0.25 flag=true");
		T_EQ_STR(cells[1].label, "ratio=0.25 flag=false");
		T_EQ_STR(cells[2].label, "ratio=1 flag=true");
		T_EQ_STR(cells[5].label, "ratio=0.10000000000000001 flag=false");
	}
	matrix_free(cells, n);
	job_free(j);
	matrix_free(NULL, 0);
	matrix_free(NULL, 5);
}

/* A hostile axis value: unquoted in the label, one literal argv element. */
static void
test_hostile(const struct recipe *r)
{
	static const char *const vals[] = {
		"; touch /tmp/pwned", "$(id)", "a\nb", "x y", "'", "",
	};
	struct matrix_cell *cells = NULL;
	struct job_spec *j;
	struct bf_diag d;
	char **argv = NULL, want[64];
	size_t n = 0, argc = 0, i;

	j = job("{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"},"
	    " \"matrix\": {\"msg\": [\"; touch /tmp/pwned\", \"$(id)\", \"a\\nb\", \"x y\","
	    " \"'\", \"\"]}}", r);
	if (j == NULL)
		return;
	T_EQ_INT(matrix_expand(j, r, &cells, &n, &d), 0);
	T_EQ_INT(n, 6);
	for (i = 0; cells != NULL && i < n; i++) {
		/* labels are one line: the newline shows escaped; argv keeps it */
		snprintf(want, sizeof(want), "msg=%s", strcmp(vals[i], "a\nb") == 0 ? "a\\nb" :
		    vals[i]);
		T_EQ_STR(cells[i].label, want);
		T_EQ_INT(recipe_render_argv(r, cells[i].values, &argv, &argc, &d), 0);
		T_EQ_INT(argc, 5);
		if (argv != NULL) {
			T_EQ_STR(argv[2], "echo");
			T_EQ_STR(argv[3], vals[i]);
			T_EQ_STR(argv[4], "--loops=1000000");
			T_CHECK(argv[5] == NULL);
		}
		recipe_argv_free(argv);
		argv = NULL;
	}
	matrix_free(cells, n);
	job_free(j);
}

/* Labels stay one bounded printable line, cut on a UTF-8 boundary. */
static void
test_labels(const struct recipe *r)
{
	struct matrix_cell *cells = NULL;
	struct job_spec *j;
	struct bf_diag d;
	size_t n = 0;

	/* 59 'a' then a 2-byte character straddling the 60-byte cut */
	j = job("{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"},"
	    " \"matrix\": {\"msg\": [\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u00e9tail\","
	    " \"tab\\there\\u0001\"]}}", r);
	if (j == NULL)
		return;
	T_EQ_INT(matrix_expand(j, r, &cells, &n, &d), 0);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_EQ_STR(cells[0].label,
		    "msg=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...");
		T_EQ_STR(cells[1].label, "msg=tab\\there\\x01");
		/* the value itself is untouched */
		T_EQ_INT(json_string_length(json_object_get(cells[0].axes, "msg")), 65);
	}
	matrix_free(cells, n);
	job_free(j);
}

/* Knob axes go to the cell's knobs, merged over the job's knobs, and never
 * into the parameter values; the label shows them like any axis. */
static void
test_knobs(const struct recipe *r)
{
	struct matrix_cell *cells = NULL;
	struct job_spec *j;
	struct bf_diag d;
	size_t n = 0;

	j = job("{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"},"
	    " \"knobs\": {\"randomize_va_space\": 0, \"thp_defrag\": \"madvise\"},"
	    " \"matrix\": {\"thp_enabled\": [\"never\", \"always\"], \"loops\": [1, 2]}}", r);
	T_CHECK(j != NULL);
	if (j == NULL)
		return;
	T_EQ_INT(matrix_expand(j, r, &cells, &n, &d), 0);
	T_EQ_INT(n, 4);
	if (cells != NULL && n == 4) {
		T_EQ_STR(cells[0].label, "thp_enabled=never loops=1");
		T_EQ_STR(cells[3].label, "thp_enabled=always loops=2");
		T_EQ_STR(json_string_value(json_object_get(cells[0].knobs, "thp_enabled")), "never");
		T_EQ_STR(json_string_value(json_object_get(cells[2].knobs, "thp_enabled")), "always");
		T_EQ_INT(json_integer_value(json_object_get(cells[2].knobs, "randomize_va_space")), 0);
		T_EQ_STR(json_string_value(json_object_get(cells[1].knobs, "thp_defrag")), "madvise");
		T_EQ_INT(json_object_size(cells[1].knobs), 3);
		T_CHECK(json_object_get(cells[0].values, "thp_enabled") == NULL);
		T_EQ_INT(json_integer_value(json_object_get(cells[1].values, "loops")), 2);
		T_EQ_INT(json_object_size(cells[0].axes), 2);
	}
	matrix_free(cells, n);
	job_free(j);
	/* no knobs at all: an empty object, never NULL */
	j = job("{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"}}", r);
	cells = NULL;
	if (j != NULL && matrix_expand(j, r, &cells, &n, &d) == 0 && n == 1)
		T_CHECK(json_is_object(cells[0].knobs) && json_object_size(cells[0].knobs) == 0);
	else
		T_CHECK(0);
	matrix_free(cells, n);
	job_free(j);
}

/* The baseline cell of each cell (a report's ?baseline=AXIS:VALUE): the
 * cell with VALUE on AXIS that agrees on every other axis. */
static void
test_baselines(void)
{
	json_t *m = json_loads("{\"thp\":[\"never\",\"always\"],\"n\":[1,2]}", 0, NULL);
	json_t *cells = json_loads("[{\"axes\":{\"thp\":\"never\",\"n\":1}},"
	    "{\"axes\":{\"thp\":\"never\",\"n\":2}},{\"axes\":{\"thp\":\"always\",\"n\":1}},"
	    "{\"axes\":{\"thp\":\"always\",\"n\":2}},{\"axes\":{\"thp\":\"always\",\"n\":3}}]",
	    0, NULL);
	json_t *v = json_true();
	int b[5];
	char buf[32];
	struct bf_diag d;

	T_EQ_INT(matrix_baselines(m, cells, "thp:never", "job 1", b, &d), 0);
	T_EQ_INT(b[0], -1);
	T_EQ_INT(b[1], -1);
	T_EQ_INT(b[2], 0);
	T_EQ_INT(b[3], 1);
	T_EQ_INT(b[4], -1);	/* n=3 has no never twin */
	T_EQ_INT(matrix_baselines(m, cells, "n:2", "job 1", b, &d), 0);
	T_EQ_INT(b[0], 1);
	T_EQ_INT(b[2], 3);
	T_EQ_INT(b[4], 3);
	T_EQ_INT(matrix_baselines(m, cells, "thp", "job 1", b, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "baseline");
	T_EQ_INT(b[2], -1);
	T_EQ_INT(matrix_baselines(m, cells, ":never", "job 1", b, &d), BF_ERR_INVALID);
	T_EQ_INT(matrix_baselines(m, cells, NULL, "job 1", b, &d), BF_ERR_INVALID);
	T_EQ_INT(matrix_baselines(m, cells, "mem:1", "job 7", b, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "\"mem\" is not an axis of job 7's matrix");
	T_EQ_INT(matrix_baselines(m, cells, "thp:sometimes", "job 7", b, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "axis thp has no value \"sometimes\" in job 7");
	T_EQ_STR(matrix_axis_str(v, buf, sizeof(buf)), "true");
	json_decref(v);
	v = json_real(0.5);
	T_EQ_STR(matrix_axis_str(v, buf, sizeof(buf)), "0.5");
	json_decref(v);
	json_decref(m);
	json_decref(cells);
}

/* A default that follows a knob: per cell, from the job's knobs and its
 * knob axes; explicit params, presets and axes win. */
static void
test_from_knob(void)
{
	static const char text[] = "{\"name\": \"fk\", \"command\": [\"@agent\", \"work\", "
	    "\"touch\", \"--thp\", \"{thp}\", \"--mb\", \"{mb}\"], \"metrics\": [{\"name\": "
	    "\"wall_s\", \"unit\": \"s\", \"better\": \"lower\", \"source\": \"wall_s\"}], "
	    "\"params\": {\"mb\": {\"type\": \"int\", \"default\": 1}, \"thp\": "
	    "{\"type\": \"enum\", \"values\": [\"none\", \"madvise\", \"nohugepage\"], "
	    "\"default\": \"none\", \"from_knob\": {\"knob\": \"thp_enabled\", \"map\": "
	    "{\"madvise\": \"madvise\", \"never\": \"nohugepage\"}}}}, "
	    "\"presets\": {\"pin\": {\"thp\": \"none\"}, \"small\": {\"mb\": 2}}}";
	struct matrix_cell *cells = NULL;
	struct recipe *r = NULL;
	struct job_spec *j;
	struct bf_diag d;
	size_t n = 0;

	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), 0);
	if (r == NULL)
		return;
#define FK_VAL(i) json_string_value(json_object_get(cells[i].values, "thp"))
	j = job("{\"recipe\": \"fk\", \"machines\": {\"class\": \"demo\"}, \"preset\": "
	    "\"small\", \"matrix\": {\"thp_enabled\": [\"madvise\", \"never\", \"always\"]}}", r);
	if (j != NULL && matrix_expand(j, r, &cells, &n, &d) == 0 && n == 3) {
		T_EQ_STR(FK_VAL(0), "madvise");
		T_EQ_STR(FK_VAL(1), "nohugepage");
		T_EQ_STR(FK_VAL(2), "none");	/* no key, no "*": the default */
		T_EQ_INT(json_integer_value(json_object_get(cells[0].values, "mb")), 2);
		T_CHECK(json_object_get(cells[0].axes, "thp") == NULL);
	} else
		T_CHECK(0);
	matrix_free(cells, n);
	job_free(j);
	cells = NULL;
	/* the job's own knobs count too */
	j = job("{\"recipe\": \"fk\", \"machines\": {\"class\": \"demo\"}, \"knobs\": "
	    "{\"thp_enabled\": \"madvise\"}}", r);
	T_CHECK(j != NULL && matrix_expand(j, r, &cells, &n, &d) == 0 && n == 1 &&
	    strcmp(FK_VAL(0), "madvise") == 0);
	matrix_free(cells, n);
	job_free(j);
	cells = NULL;
	/* explicit wins: params, the preset, an axis */
	j = job("{\"recipe\": \"fk\", \"machines\": {\"class\": \"demo\"}, \"params\": "
	    "{\"thp\": \"none\"}, \"knobs\": {\"thp_enabled\": \"madvise\"}}", r);
	T_CHECK(j != NULL && matrix_expand(j, r, &cells, &n, &d) == 0 && n == 1 &&
	    strcmp(FK_VAL(0), "none") == 0);
	matrix_free(cells, n);
	job_free(j);
	cells = NULL;
	j = job("{\"recipe\": \"fk\", \"machines\": {\"class\": \"demo\"}, \"preset\": "
	    "\"pin\", \"knobs\": {\"thp_enabled\": \"madvise\"}}", r);
	T_CHECK(j != NULL && matrix_expand(j, r, &cells, &n, &d) == 0 && n == 1 &&
	    strcmp(FK_VAL(0), "none") == 0);
	matrix_free(cells, n);
	job_free(j);
	cells = NULL;
	j = job("{\"recipe\": \"fk\", \"machines\": {\"class\": \"demo\"}, \"matrix\": "
	    "{\"thp\": [\"none\", \"nohugepage\"]}, \"knobs\": {\"thp_enabled\": \"madvise\"}}", r);
	if (j != NULL && matrix_expand(j, r, &cells, &n, &d) == 0 && n == 2) {
		T_EQ_STR(FK_VAL(0), "none");
		T_EQ_STR(FK_VAL(1), "nohugepage");
	} else
		T_CHECK(0);
	matrix_free(cells, n);
	job_free(j);
#undef FK_VAL
	recipe_free(r);
}

int
main(void)
{
	struct recipe *r = NULL;
	struct bf_diag d;

	test_count();
	T_EQ_INT(recipe_parse(recipe_text, strlen(recipe_text), &r, &d), 0);
	if (r == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		return t_done() | 1;
	}
	test_expand(r);
	test_hostile(r);
	test_labels(r);
	test_knobs(r);
	test_baselines();
	test_from_knob();
	recipe_free(r);
	return t_done();
}
