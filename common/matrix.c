/*
 * matrix.c: expand a job's matrix into its cells, the cartesian product of
 * the axes in the order they are written (first axis slowest), like nested
 * loops. The cell count is capped before anything is allocated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "job.h"
#include "jx.h"
#include "caps.h"
#include "matrix.h"
#include "recipe.h"

int
matrix_count(const json_t *matrix, size_t *countp, struct bf_diag *d)
{
	const char *k;
	json_t *arr;
	size_t count = 1, n;

	if (matrix != NULL && !json_is_object(matrix)) {
		bf_diag_set(d, "matrix", "expected an object, got %s", jx_type_name(matrix));
		return BF_ERR_INVALID;
	}
	json_object_foreach((json_t *)matrix, k, arr) {
		if (!json_is_array(arr)) {
			bf_diag_set(d, "matrix", "axis %s is %s, not an array", k,
			    jx_type_name(arr));
			return BF_ERR_INVALID;
		}
		n = json_array_size(arr);
		/* divide before multiplying: the product never exceeds the cap */
		if (n != 0 && count > BF_MAX_CELLS / n) {
			bf_diag_set(d, "matrix", "expands to more than %d cells", BF_MAX_CELLS);
			return BF_ERR_TOOBIG;
		}
		count *= n;
	}
	*countp = count;
	return 0;
}

void
matrix_free(struct matrix_cell *cells, size_t ncells)
{
	size_t i;

	if (cells == NULL)
		return;
	for (i = 0; i < ncells; i++) {
		json_decref(cells[i].axes);
		json_decref(cells[i].values);
		json_decref(cells[i].knobs);
		free(cells[i].kernel);
		free(cells[i].cmdline);
		free(cells[i].label);
	}
	free(cells);
}

#define MATRIX_LABEL_VALUE	60	/* bytes of one value shown in a label */

/*
 * A value as shown in a cell label: control bytes escaped (\n, \t, \xHH)
 * and cut at MATRIX_LABEL_VALUE bytes on a UTF-8 boundary, so that labels
 * stay one printable line of bounded length. The exact values are in the
 * cell's axes.
 */
static int
label_append(struct buf *label, const json_t *v)
{
	struct buf raw;
	size_t i, n;
	unsigned char ch;
	int r;

	buf_init(&raw, 0);
	if ((r = recipe_append_value(&raw, v)) != 0)
		goto out;
	n = raw.len;
	if (n > MATRIX_LABEL_VALUE) {
		n = MATRIX_LABEL_VALUE;
		while (n > 0 && ((unsigned char)raw.data[n] & 0xc0) == 0x80)
			n--;
	}
	for (i = 0; i < n && r == 0; i++) {
		ch = (unsigned char)raw.data[i];
		if (ch == '\n')
			r = buf_puts(label, "\\n");
		else if (ch == '\t')
			r = buf_puts(label, "\\t");
		else if (ch < 0x20 || ch == 0x7f)
			r = buf_printf(label, "\\x%02x", ch);
		else
			r = buf_append(label, &raw.data[i], 1);
	}
	if (r == 0 && n < raw.len)
		r = buf_puts(label, "...");
out:
	buf_free(&raw);
	return r;
}

/* Fill cell idx: its axis values, all values, and its label. */
/* The cell's boot request: the job's kernel/cmdline unless an axis sets them,
 * and boot.cmdline_base in front of the cmdline. */
static int
matrix_boot(struct matrix_cell *c, const struct job_spec *job)
{
	const char *kernel = job->kernel, *cmdline = job->cmdline;
	json_t *v;
	int n;

	if ((v = json_object_get(c->axes, "kernel")) != NULL && json_is_string(v) &&
	    json_object_get(c->values, "kernel") == NULL)
		kernel = json_string_value(v);
	if ((v = json_object_get(c->axes, "cmdline")) != NULL && json_is_string(v) &&
	    json_object_get(c->values, "cmdline") == NULL)
		cmdline = json_string_value(v);
	if (kernel != NULL && (c->kernel = strdup(kernel)) == NULL)
		return BF_ERR_ALLOC;
	if (job->cmdline_base != NULL || cmdline != NULL) {
		n = asprintf(&c->cmdline, "%s%s%s", job->cmdline_base ? job->cmdline_base : "",
		    job->cmdline_base && cmdline && *cmdline ? " " : "", cmdline ? cmdline : "");
		if (n < 0) {
			c->cmdline = NULL;
			return BF_ERR_ALLOC;
		}
	}
	return 0;
}

static int
matrix_fill(struct matrix_cell *c, size_t idx, const struct job_spec *job, const json_t *base,
    const struct recipe *rc)
{
	const json_t *matrix = job->matrix, *knobs = job->knobs;
	const char *keys[BF_MAX_AXES];
	json_t *arrs[BF_MAX_AXES], *arr, *v;
	size_t pick[BF_MAX_AXES], naxes = 0, rem = idx, i, n;
	struct buf label;
	const char *k;
	int r;

	buf_init(&label, 0);
	c->index = idx;
	json_object_foreach((json_t *)matrix, k, arr) {
		if (naxes == BF_MAX_AXES) {
			r = BF_ERR_TOOBIG;
			goto out;
		}
		keys[naxes] = k;
		arrs[naxes++] = arr;
	}
	/* mixed radix, the last axis the least significant digit */
	for (i = naxes; i-- > 0;) {
		n = json_array_size(arrs[i]);
		pick[i] = rem % n;
		rem /= n;
	}
	if ((c->axes = json_object()) == NULL || (c->values = json_copy((json_t *)base)) == NULL ||
	    (c->knobs = json_copy((json_t *)knobs)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < naxes; i++) {
		v = json_array_get(arrs[i], pick[i]);
		/* an axis that is no parameter of the recipe is a knob or a
		 * boot axis (kernel, cmdline: see matrix_boot) */
		if (json_object_set(c->axes, keys[i], v) != 0 ||
		    (recipe_param(rc, keys[i]) != NULL ?
		    json_object_set(c->values, keys[i], v) :
		    job_is_boot_axis(keys[i]) ? 0 : json_object_set(c->knobs, keys[i], v)) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = buf_printf(&label, "%s%s=", i ? " " : "", keys[i])) != 0 ||
		    (r = label_append(&label, v)) != 0)
			goto out;
	}
	if ((r = job_knob_defaults(job, rc, c->axes, c->knobs, c->values)) != 0)
		goto out;
	if (naxes == 0 && (r = buf_puts(&label, "default")) != 0)
		goto out;
	if ((c->label = buf_steal(&label)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	buf_free(&label);
	return r;
}

int
matrix_expand(const struct job_spec *job, const struct recipe *rc,
    struct matrix_cell **cellsp, size_t *ncellsp, struct bf_diag *d)
{
	struct matrix_cell *cells = NULL;
	json_t *base = NULL;
	size_t n = 0, i;
	int r;

	if ((r = matrix_count(job->matrix, &n, d)) != 0)
		goto out;
	if (n == 0) {
		bf_diag_set(d, "matrix", "has an axis without values");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = job_base_values(job, rc, &base, d)) != 0)
		goto out;
	if ((cells = calloc(n, sizeof(*cells))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((r = matrix_fill(&cells[i], i, job, base, rc)) != 0 ||
		    (r = matrix_boot(&cells[i], job)) != 0)
			goto out;
	*cellsp = cells;
	*ncellsp = n;
	cells = NULL;
	r = 0;
out:
	matrix_free(cells, n);
	json_decref(base);
	return r;
}

const char *
matrix_axis_str(const json_t *v, char *buf, size_t bufsz)
{
	if (json_is_string(v))
		snprintf(buf, bufsz, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, bufsz, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, bufsz, "%.17g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, bufsz, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, bufsz, "?");
	return buf;
}

/* Cells a and b agree on every axis but skip. */
static int
same_but(const json_t *a, const json_t *b, const char *skip)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)a, k, v) {
		if (strcmp(k, skip) == 0)
			continue;
		if (!json_equal(v, json_object_get(b, k)))
			return 0;
	}
	return 1;
}

/* Cell c has value on axis. */
static int
has_value(const json_t *c, const char *axis, const char *value)
{
	char vbuf[128];

	return strcmp(matrix_axis_str(json_object_get(json_object_get(c, "axes"), axis), vbuf,
	    sizeof(vbuf)), value) == 0;
}

int
matrix_baselines(const json_t *matrix, const json_t *cells, const char *baseline,
    const char *what, int *baseline_of, struct bf_diag *d)
{
	char axis[BF_MAX_NAME + 1];
	const char *colon, *value;
	const json_t *ci, *cj;
	size_t i, j, found = 0;

	for (i = 0; i < json_array_size(cells); i++)
		baseline_of[i] = -1;
	if (baseline == NULL || (colon = strchr(baseline, ':')) == NULL || colon == baseline ||
	    (size_t)(colon - baseline) > BF_MAX_NAME) {
		bf_diag_set(d, "baseline", "\"%.60s\" is not AXIS:VALUE", baseline ? baseline : "");
		return BF_ERR_INVALID;
	}
	memcpy(axis, baseline, (size_t)(colon - baseline));
	axis[colon - baseline] = '\0';
	value = colon + 1;
	if (json_object_get(matrix, axis) == NULL) {
		bf_diag_set(d, "baseline", "\"%s\" is not an axis of %s's matrix", axis, what);
		return BF_ERR_INVALID;
	}
	json_array_foreach(cells, i, ci)
		if (has_value(ci, axis, value))
			found = 1;
	if (!found) {
		bf_diag_set(d, "baseline", "axis %s has no value \"%.60s\" in %s", axis, value, what);
		return BF_ERR_INVALID;
	}
	json_array_foreach(cells, i, ci) {
		if (has_value(ci, axis, value))
			continue;
		json_array_foreach(cells, j, cj)
			if (has_value(cj, axis, value) && same_but(json_object_get(ci, "axes"),
			    json_object_get(cj, "axes"), axis)) {
				baseline_of[i] = (int)j;
				break;
			}
	}
	return 0;
}
