/*
 * step.c: validation of the step document. Every field is checked for type
 * and range here, so exec.c can trust what it gets; errors name the field.
 * Unknown fields are refused: a misspelt "timeout" must not silently fall
 * back to a default on a lab machine.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "caps.h"
#include "step.h"

#define STEP_MAX_WARMUP		100
#define STEP_MAX_TIMEOUT_S	86400
#define STEP_MAX_ENV		BF_MAX_ARGV
#define STEP_MAX_PATH		BF_MAX_STR	/* cwd; PATH_MAX on Linux */

struct step_field {
	const char *name;
	int required;
	int (*fn)(const struct json *v, struct step *st, struct bf_diag *d);
};

static int
step_want(const struct json *v, enum json_type t, const char *field, struct bf_diag *d)
{
	if (v->type == t)
		return 0;
	bf_diag_set(d, field, "%s where %s %s is expected", json_type_name(v->type),
	    t == JSON_ARR || t == JSON_OBJ ? "an" : "a", json_type_name(t));
	return BF_ERR_INVALID;
}

static int
step_int(const struct json *v, const char *field, int64_t min, int64_t max,
    int64_t *out, struct bf_diag *d)
{
	int r;

	if ((r = step_want(v, JSON_NUM, field, d)) != 0)
		goto out;
	if (!v->is_int) {
		bf_diag_set(d, field, "%g is not an integer", v->num);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (v->i < min || v->i > max) {
		bf_diag_set(d, field, "%lld is out of range %lld..%lld", (long long)v->i,
		    (long long)min, (long long)max);
		r = BF_ERR_RANGE;
		goto out;
	}
	*out = v->i;
	r = 0;
out:
	return r;
}

/* A string no longer than max; dup'd into *out. */
static int
step_str(const struct json *v, const char *field, size_t max, char **out,
    struct bf_diag *d)
{
	int r;

	if ((r = step_want(v, JSON_STR, field, d)) != 0)
		goto out;
	if (v->len > max) {
		bf_diag_set(d, field, "string of %zu bytes is longer than %zu", v->len, max);
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if ((*out = strdup(v->str)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	return r;
}

static int
step_f_run(const struct json *v, struct step *st, struct bf_diag *d)
{
	return step_int(v, "run", 0, INT64_MAX, &st->run, d);
}

static int
step_f_iterations(const struct json *v, struct step *st, struct bf_diag *d)
{
	return step_int(v, "iterations", 1, BF_MAX_ITERATIONS, &st->iterations, d);
}

static int
step_f_warmup(const struct json *v, struct step *st, struct bf_diag *d)
{
	return step_int(v, "warmup", 0, STEP_MAX_WARMUP, &st->warmup, d);
}

static int
step_f_timeout(const struct json *v, struct step *st, struct bf_diag *d)
{
	return step_int(v, "timeout_s", 1, STEP_MAX_TIMEOUT_S, &st->timeout_s, d);
}

static int
step_f_argv(const struct json *v, struct step *st, struct bf_diag *d)
{
	char field[32];
	size_t i;
	int r;

	if ((r = step_want(v, JSON_ARR, "argv", d)) != 0)
		goto out;
	if (v->n < 1 || v->n > BF_MAX_ARGV) {
		bf_diag_set(d, "argv", "%zu elements, expected 1..%d", v->n, BF_MAX_ARGV);
		r = BF_ERR_RANGE;
		goto out;
	}
	if ((st->argv = calloc(v->n + 1, sizeof(*st->argv))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < v->n; i++) {
		snprintf(field, sizeof(field), "argv[%zu]", i);
		if ((r = step_str(v->items[i], field, BF_MAX_ARG, &st->argv[i], d)) != 0)
			goto out;
		st->argc++;
	}
	if (st->argv[0][0] == '\0') {
		bf_diag_set(d, "argv[0]", "empty program name");
		r = BF_ERR_INVALID;
		goto out;
	}
	r = 0;
out:
	return r;
}

/* POSIX portable environment names; anything else could smuggle '=' or NUL. */
static int
step_env_name_ok(const char *s)
{
	size_t i;

	if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return i <= BF_MAX_NAME;
}

static int
step_f_env(const struct json *v, struct step *st, struct bf_diag *d)
{
	char field[BF_MAX_NAME + 16];
	size_t i;
	int r;

	if ((r = step_want(v, JSON_OBJ, "env", d)) != 0)
		goto out;
	if (v->n > STEP_MAX_ENV) {
		bf_diag_set(d, "env", "%zu entries, at most %d allowed", v->n, STEP_MAX_ENV);
		r = BF_ERR_RANGE;
		goto out;
	}
	if ((st->env_name = calloc(v->n + 1, sizeof(char *))) == NULL ||
	    (st->env_value = calloc(v->n + 1, sizeof(char *))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < v->n; i++) {
		const struct json *e = v->items[i];

		if (!step_env_name_ok(e->key)) {
			bf_diag_set(d, "env", "\"%.64s\" is not a valid variable name "
			    "([A-Za-z_][A-Za-z0-9_]*, at most %d bytes)", e->key, BF_MAX_NAME);
			r = BF_ERR_INVALID;
			goto out;
		}
		snprintf(field, sizeof(field), "env.%s", e->key);
		if ((st->env_name[i] = strdup(e->key)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		st->nenv++;
		if ((r = step_str(e, field, BF_MAX_ARG, &st->env_value[i], d)) != 0)
			goto out;
	}
	r = 0;
out:
	return r;
}

static int
step_f_cwd(const struct json *v, struct step *st, struct bf_diag *d)
{
	int r;

	if ((r = step_str(v, "cwd", STEP_MAX_PATH, &st->cwd, d)) != 0)
		goto out;
	if (st->cwd[0] != '/') {
		bf_diag_set(d, "cwd", "\"%.64s\" is not an absolute path", st->cwd);
		r = BF_ERR_INVALID;
		goto out;
	}
	r = 0;
out:
	return r;
}

static int
step_metric_name_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return 0;
	return i >= 1 && i <= BF_MAX_NAME;
}

static int
step_metric(const struct json *v, size_t idx, struct step *st, struct bf_diag *d)
{
	struct step_metric *m = &st->metrics[idx];
	const struct json *name, *src, *rx;
	char field[48], err[128];
	size_t i;
	int r, rc;

	snprintf(field, sizeof(field), "metrics[%zu]", idx);
	if ((r = step_want(v, JSON_OBJ, field, d)) != 0)
		goto out;
	for (i = 0; i < v->n; i++)
		if (strcmp(v->items[i]->key, "name") != 0 &&
		    strcmp(v->items[i]->key, "source") != 0 &&
		    strcmp(v->items[i]->key, "regex") != 0) {
			bf_diag_set(d, field, "unknown field \"%.64s\" (expected name, source, regex)",
			    v->items[i]->key);
			r = BF_ERR_INVALID;
			goto out;
		}
	name = json_get(v, "name");
	src = json_get(v, "source");
	rx = json_get(v, "regex");
	if (name == NULL || src == NULL || rx == NULL) {
		snprintf(field, sizeof(field), "metrics[%zu].%s", idx,
		    name == NULL ? "name" : src == NULL ? "source" : "regex");
		bf_diag_set(d, field, "missing");
		r = BF_ERR_INVALID;
		goto out;
	}
	snprintf(field, sizeof(field), "metrics[%zu].name", idx);
	if ((r = step_str(name, field, BF_MAX_NAME, &m->name, d)) != 0)
		goto out;
	if (!step_metric_name_ok(m->name)) {
		bf_diag_set(d, field, "\"%s\" is not a metric name ([A-Za-z0-9_.-]+)", m->name);
		r = BF_ERR_INVALID;
		goto out;
	}
	for (i = 0; i < idx; i++)
		if (strcmp(st->metrics[i].name, m->name) == 0) {
			bf_diag_set(d, field, "\"%s\" appears twice", m->name);
			r = BF_ERR_EXISTS;
			goto out;
		}
	snprintf(field, sizeof(field), "metrics[%zu].source", idx);
	if ((r = step_want(src, JSON_STR, field, d)) != 0)
		goto out;
	if (strcmp(src->str, "stdout") == 0)
		m->source = STEP_STDOUT;
	else if (strcmp(src->str, "stderr") == 0)
		m->source = STEP_STDERR;
	else {
		bf_diag_set(d, field, "\"%.64s\" is not one of stdout, stderr", src->str);
		r = BF_ERR_INVALID;
		goto out;
	}
	snprintf(field, sizeof(field), "metrics[%zu].regex", idx);
	if ((r = step_str(rx, field, BF_MAX_REGEX, &m->regex, d)) != 0)
		goto out;
	if ((rc = regcomp(&m->re, m->regex, REG_EXTENDED)) != 0) {
		regerror(rc, &m->re, err, sizeof(err));
		bf_diag_set(d, field, "does not compile: %s", err);
		r = BF_ERR_INVALID;
		goto out;
	}
	m->re_ok = 1;
	if (m->re.re_nsub < 1) {
		bf_diag_set(d, field, "has no capture group for the number");
		r = BF_ERR_INVALID;
		goto out;
	}
	r = 0;
out:
	return r;
}

static int
step_f_metrics(const struct json *v, struct step *st, struct bf_diag *d)
{
	size_t i;
	int r;

	if ((r = step_want(v, JSON_ARR, "metrics", d)) != 0)
		goto out;
	if (v->n > BF_MAX_METRICS) {
		bf_diag_set(d, "metrics", "%zu entries, at most %d allowed", v->n, BF_MAX_METRICS);
		r = BF_ERR_RANGE;
		goto out;
	}
	if ((st->metrics = calloc(v->n + 1, sizeof(*st->metrics))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < v->n; i++) {
		/* counted first so step_free releases a half-built entry */
		st->nmetrics++;
		if ((r = step_metric(v->items[i], i, st, d)) != 0)
			goto out;
	}
	r = 0;
out:
	return r;
}

static const struct step_field step_fields[] = {
	{ "run",	1, step_f_run },
	{ "argv",	1, step_f_argv },
	{ "iterations",	1, step_f_iterations },
	{ "warmup",	0, step_f_warmup },
	{ "timeout_s",	1, step_f_timeout },
	{ "env",	0, step_f_env },
	{ "cwd",	0, step_f_cwd },
	{ "metrics",	0, step_f_metrics },
};
#define STEP_NFIELDS (sizeof(step_fields) / sizeof(step_fields[0]))

void
step_free(struct step *st)
{
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; st->argv != NULL && i < st->argc; i++)
		free(st->argv[i]);
	free(st->argv);
	for (i = 0; i < st->nenv; i++) {
		free(st->env_name[i]);
		free(st->env_value[i]);
	}
	free(st->env_name);
	free(st->env_value);
	free(st->cwd);
	for (i = 0; i < st->nmetrics; i++) {
		free(st->metrics[i].name);
		free(st->metrics[i].regex);
		if (st->metrics[i].re_ok)
			regfree(&st->metrics[i].re);
	}
	free(st->metrics);
	free(st);
}

int
step_parse(const char *text, size_t len, struct step **out, struct bf_diag *d)
{
	struct json *doc = NULL;
	struct step *st = NULL;
	struct bf_diag jd;
	const struct json *v;
	size_t i, k;
	int r;

	bf_diag_clear(d);
	if ((r = json_parse(text, len, &doc, &jd)) != 0) {
		bf_diag_set(d, "step", "%s", jd.msg);
		goto out;
	}
	if (doc->type != JSON_OBJ) {
		r = step_want(doc, JSON_OBJ, "step", d);
		goto out;
	}
	for (i = 0; i < doc->n; i++) {
		for (k = 0; k < STEP_NFIELDS; k++)
			if (strcmp(doc->items[i]->key, step_fields[k].name) == 0)
				break;
		if (k == STEP_NFIELDS) {
			bf_diag_set(d, "step", "unknown field \"%.64s\"", doc->items[i]->key);
			r = BF_ERR_INVALID;
			goto out;
		}
	}
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (k = 0; k < STEP_NFIELDS; k++) {
		if ((v = json_get(doc, step_fields[k].name)) == NULL) {
			if (step_fields[k].required) {
				bf_diag_set(d, step_fields[k].name, "missing");
				r = BF_ERR_INVALID;
				goto out;
			}
			continue;
		}
		if ((r = step_fields[k].fn(v, st, d)) != 0)
			goto out;
	}
	*out = st;
	st = NULL;
	r = 0;
out:
	if (r == BF_ERR_ALLOC)
		bf_diag_set(d, "step", "out of memory");
	step_free(st);
	json_free(doc);
	return r;
}
