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

#include "ajson.h"
#include "counters.h"
#include "knob.h"
#include "parse.h"
#include "path.h"
#include "caps.h"
#include "step.h"
#include "step-schema.h"

struct step_field {
	const char *name;
	int required;
	int (*fn)(const struct ajson *v, struct step *st, struct bf_diag *d);
};

static int
step_want(const struct ajson *v, enum ajson_type t, const char *field, struct bf_diag *d)
{
	if (v->type == t)
		return 0;
	bf_diag_set(d, field, "%s where %s %s is expected", ajson_type_name(v->type),
	    t == AJSON_ARR || t == AJSON_OBJ ? "an" : "a", ajson_type_name(t));
	return BF_ERR_INVALID;
}

static int
step_int(const struct ajson *v, const char *field, int64_t min, int64_t max,
    int64_t *out, struct bf_diag *d)
{
	int r;

	if ((r = step_want(v, AJSON_NUM, field, d)) != 0)
		return r;
	if (!v->is_int) {
		bf_diag_set(d, field, "%g is not an integer", v->num);
		return BF_ERR_INVALID;
	}
	if (v->i < min || v->i > max) {
		bf_diag_set(d, field, "%lld is out of range %lld..%lld", (long long)v->i,
		    (long long)min, (long long)max);
		return BF_ERR_RANGE;
	}
	*out = v->i;
	return 0;
}

/* A string no longer than max; dup'd into *out. */
static int
step_str(const struct ajson *v, const char *field, size_t max, char **out,
    struct bf_diag *d)
{
	int r;

	if ((r = step_want(v, AJSON_STR, field, d)) != 0)
		return r;
	if (v->len > max) {
		bf_diag_set(d, field, "string of %zu bytes is longer than %zu", v->len, max);
		return BF_ERR_TOOBIG;
	}
	if ((*out = strdup(v->str)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/* The integer fields: each a step_int of its range into its member. */
#define STEP_INT_FIELD(fn, field, lo, hi, member)				\
static int									\
fn(const struct ajson *v, struct step *st, struct bf_diag *d)			\
{										\
	return step_int(v, field, lo, hi, &st->member, d);			\
}
STEP_INT_FIELD(step_f_run, STEP_FIELD_RUN, 0, INT64_MAX, run)
STEP_INT_FIELD(step_f_iterations, STEP_FIELD_ITERATIONS, 1, STEP_MAX_ITERATIONS, iterations)
STEP_INT_FIELD(step_f_warmup, STEP_FIELD_WARMUP, 0, STEP_MAX_WARMUP, warmup)
STEP_INT_FIELD(step_f_gap, STEP_FIELD_GAP_MS, 0, STEP_MAX_GAP_MS, gap_ms)
STEP_INT_FIELD(step_f_timeout, STEP_FIELD_TIMEOUT_S, 1, STEP_MAX_TIMEOUT_S, timeout_s)

/* An argv array: 1..BF_MAX_ARGV strings, the first non-empty. */
static int
step_cmd(const struct ajson *v, const char *field, struct step_cmd *c, struct bf_diag *d)
{
	char ef[64];
	size_t i;
	int r;

	if ((r = step_want(v, AJSON_ARR, field, d)) != 0)
		return r;
	if (v->n < 1 || v->n > BF_MAX_ARGV) {
		bf_diag_set(d, field, "%zu elements, expected 1..%d", v->n, BF_MAX_ARGV);
		return BF_ERR_RANGE;
	}
	if ((c->argv = calloc(v->n + 1, sizeof(*c->argv))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < v->n; i++) {
		snprintf(ef, sizeof(ef), "%s[%zu]", field, i);
		if ((r = step_str(v->items[i], ef, BF_MAX_ARG, &c->argv[i], d)) != 0)
			return r;
		c->argc++;
	}
	if (c->argv[0][0] == '\0') {
		snprintf(ef, sizeof(ef), "%s[0]", field);
		bf_diag_set(d, ef, "empty program name");
		return BF_ERR_INVALID;
	}
	return 0;
}

static void
step_cmd_clear(struct step_cmd *c)
{
	size_t i;

	for (i = 0; c->argv != NULL && i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
}

static int
step_f_argv(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	struct step_cmd c = { NULL, 0 };
	int r;

	r = step_cmd(v, STEP_FIELD_ARGV, &c, d);
	st->argv = c.argv;
	st->argc = c.argc;
	return r;
}

/* A list of commands ("setup", "pre_iteration"). */
static int
step_cmds(const struct ajson *v, const char *field, struct step_cmd **cp, size_t *np,
    struct bf_diag *d)
{
	char ef[48];
	size_t i;
	int r;

	if ((r = step_want(v, AJSON_ARR, field, d)) != 0)
		return r;
	if (v->n > STEP_MAX_CMDS) {
		bf_diag_set(d, field, "%zu commands, at most %d allowed", v->n, STEP_MAX_CMDS);
		return BF_ERR_RANGE;
	}
	if ((*cp = calloc(v->n + 1, sizeof(**cp))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < v->n; i++) {
		snprintf(ef, sizeof(ef), "%s[%zu]", field, i);
		(*np)++;
		if ((r = step_cmd(v->items[i], ef, &(*cp)[i], d)) != 0)
			return r;
	}
	return 0;
}

static int
step_f_setup(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	return step_cmds(v, STEP_FIELD_SETUP, &st->setup, &st->nsetup, d);
}

static int
step_f_pre(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	return step_cmds(v, STEP_FIELD_PRE, &st->pre, &st->npre, d);
}

/* Refuse members of obj outside the NULL-terminated allowed list. */
static int
step_only(const struct ajson *obj, const char *const *allowed, const char *field,
    struct bf_diag *d)
{
	size_t i, k;

	for (i = 0; i < obj->n; i++) {
		for (k = 0; allowed[k] != NULL; k++)
			if (strcmp(obj->items[i]->key, allowed[k]) == 0)
				break;
		if (allowed[k] == NULL) {
			bf_diag_set(d, field, "unknown field \"%.64s\"", obj->items[i]->key);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

/* "127.0.0.1:6379" or "[::1]:6379": a numeric address and a port. */
static int
step_hostport(const char *s, const char *field, struct step_service *sv, struct bf_diag *d)
{
	const char *colon, *h = s, *he;
	int64_t port;
	int r;

	if (s[0] == '[') {
		h = s + 1;
		if ((he = strchr(h, ']')) == NULL || he[1] != ':') {
			r = BF_ERR_INVALID;
			goto bad;
		}
		colon = he + 1;
	} else {
		if ((colon = strrchr(s, ':')) == NULL) {
			r = BF_ERR_INVALID;
			goto bad;
		}
		he = colon;
	}
	if (he == h || parse_i64(colon + 1, 1, 65535, &port) != 0) {
		r = BF_ERR_INVALID;
		goto bad;
	}
	if ((sv->host = strndup(h, (size_t)(he - h))) == NULL)
		return BF_ERR_ALLOC;
	sv->port = (int)port;
	return 0;
bad:
	bf_diag_set(d, field, "\"%.64s\" is not ADDRESS:PORT (a numeric address, port "
	    "1..65535)", s);
	return r;
}

static int
step_service(const struct ajson *v, const char *field, struct step_service *sv,
    struct bf_diag *d)
{
	static const char *const keys[] = { STEP_SERVICE_ARGV, STEP_SERVICE_READY, NULL };
	static const char *const rkeys[] = { STEP_SERVICE_TCP, STEP_SERVICE_TIMEOUT_S, NULL };
	const struct ajson *a, *ready, *tcp, *t;
	char ef[64];
	int r;

	sv->timeout_s = STEP_DEFAULT_READY_S;
	if ((r = step_want(v, AJSON_OBJ, field, d)) != 0 || (r = step_only(v, keys, field, d)) != 0)
		return r;
	snprintf(ef, sizeof(ef), "%s.argv", field);
	if ((a = ajson_get(v, STEP_SERVICE_ARGV)) == NULL) {
		bf_diag_set(d, ef, "missing");
		return BF_ERR_INVALID;
	}
	if ((r = step_cmd(a, ef, &sv->cmd, d)) != 0)
		return r;
	snprintf(ef, sizeof(ef), "%s.ready", field);
	if ((ready = ajson_get(v, STEP_SERVICE_READY)) == NULL) {
		bf_diag_set(d, ef, "missing (a service must say when it is ready)");
		return BF_ERR_INVALID;
	}
	if ((r = step_want(ready, AJSON_OBJ, ef, d)) != 0 ||
	    (r = step_only(ready, rkeys, ef, d)) != 0)
		return r;
	snprintf(ef, sizeof(ef), "%s.ready.tcp", field);
	if ((tcp = ajson_get(ready, STEP_SERVICE_TCP)) == NULL) {
		bf_diag_set(d, ef, "missing");
		return BF_ERR_INVALID;
	}
	if ((r = step_want(tcp, AJSON_STR, ef, d)) != 0 ||
	    (r = step_hostport(tcp->str, ef, sv, d)) != 0)
		return r;
	snprintf(ef, sizeof(ef), "%s.ready.timeout_s", field);
	if ((t = ajson_get(ready, STEP_SERVICE_TIMEOUT_S)) != NULL &&
	    (r = step_int(t, ef, 1, STEP_MAX_READY_S, &sv->timeout_s, d)) != 0)
		return r;
	return 0;
}

static int
step_f_services(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	char ef[32];
	size_t i;
	int r;

	if ((r = step_want(v, AJSON_ARR, STEP_FIELD_SERVICES, d)) != 0)
		return r;
	if (v->n > STEP_MAX_SERVICES) {
		bf_diag_set(d, "services", "%zu services, at most %d allowed", v->n,
		    STEP_MAX_SERVICES);
		return BF_ERR_RANGE;
	}
	if ((st->services = calloc(v->n + 1, sizeof(*st->services))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < v->n; i++) {
		snprintf(ef, sizeof(ef), "services[%zu]", i);
		st->nservices++;
		if ((r = step_service(v->items[i], ef, &st->services[i], d)) != 0)
			return r;
	}
	return 0;
}

static int
step_f_knobs(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	char ef[BF_MAX_NAME + 16], why[KNOB_MAX_WHY], num[32];
	const struct ajson *e;
	const char *val;
	size_t i;
	int r;

	if ((r = step_want(v, AJSON_OBJ, STEP_FIELD_KNOBS, d)) != 0)
		return r;
	if (v->n > STEP_MAX_KNOBS) {
		bf_diag_set(d, "knobs", "%zu knobs, at most %d allowed", v->n, STEP_MAX_KNOBS);
		return BF_ERR_RANGE;
	}
	if ((st->knobs = calloc(v->n + 1, sizeof(*st->knobs))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < v->n; i++) {
		e = v->items[i];
		snprintf(ef, sizeof(ef), "knobs.%.64s", e->key);
		if (e->type == AJSON_NUM && e->is_int) {
			snprintf(num, sizeof(num), "%lld", (long long)e->i);
			val = num;
		} else if (e->type == AJSON_STR)
			val = e->str;
		else {
			bf_diag_set(d, ef, "%s where a string or an integer is expected",
			    ajson_type_name(e->type));
			return BF_ERR_INVALID;
		}
		if ((r = knob_validate(e->key, val, why, sizeof(why))) != 0) {
			bf_diag_set(d, NULL, "%s", why);
			if (d != NULL)
				snprintf(d->field, sizeof(d->field), "%s", ef);
			return r;
		}
		st->nknobs++;
		if ((st->knobs[i].name = strdup(e->key)) == NULL ||
		    (st->knobs[i].value = strdup(val)) == NULL) {
			return BF_ERR_ALLOC;
		}
		/* drop_caches and compact_memory are actions before each iteration */
		if (strcmp(e->key, "drop_caches") == 0)
			st->drop_caches = (int)(val[0] - '0');
		if (strcmp(e->key, "compact_memory") == 0)
			st->compact_memory = 1;
	}
	return 0;
}

/* "knobs_optional": names of the step's knobs (parsed before this field)
 * that a machine may lack: they read back absent instead of failing. */
static int
step_f_knobs_optional(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	char ef[BF_MAX_NAME + 32];
	const struct ajson *e;
	size_t i, k;
	int r;

	if ((r = step_want(v, AJSON_ARR, STEP_FIELD_KNOBS_OPTIONAL, d)) != 0)
		return r;
	for (i = 0; i < v->n; i++) {
		e = v->items[i];
		snprintf(ef, sizeof(ef), "%s[%zu]", STEP_FIELD_KNOBS_OPTIONAL, i);
		if (e->type != AJSON_STR) {
			bf_diag_set(d, ef, "%s where a knob name is expected",
			    ajson_type_name(e->type));
			return BF_ERR_INVALID;
		}
		for (k = 0; k < st->nknobs; k++)
			if (strcmp(st->knobs[k].name, e->str) == 0)
				break;
		if (k == st->nknobs) {
			bf_diag_set(d, ef, "\"%.64s\" is not one of the step's knobs", e->str);
			return BF_ERR_INVALID;
		}
		st->knobs[k].optional = 1;
	}
	return 0;
}

/* A list field of bind: a string "0-3,8" or a single integer. */
static int
step_bind_list(const struct ajson *b, const char *key, unsigned long *mask, size_t nbits,
    int *set, struct bf_diag *d)
{
	const struct ajson *v;
	char ef[32], why[128], num[32];
	const char *s;
	int r;

	if ((v = ajson_get(b, key)) == NULL)
		return 0;
	snprintf(ef, sizeof(ef), "bind.%s", key);
	if (v->type == AJSON_NUM && v->is_int && v->i >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)v->i);
		s = num;
	} else if (v->type == AJSON_STR)
		s = v->str;
	else {
		bf_diag_set(d, ef, "%s where a list like \"0-3,8\" is expected",
		    ajson_type_name(v->type));
		return BF_ERR_INVALID;
	}
	if ((r = bind_parse_list(s, mask, nbits, why, sizeof(why))) != 0) {
		bf_diag_set(d, ef, "%s", why);
		return r;
	}
	*set = 1;
	return 0;
}

static int
step_f_bind(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	static const char *const keys[] = { STEP_BIND_CPUS, STEP_BIND_MEMBIND, STEP_BIND_CPUNODEBIND,
	    NULL };
	int r;

	if ((r = step_want(v, AJSON_OBJ, STEP_FIELD_BIND, d)) != 0 ||
	    (r = step_only(v, keys, STEP_FIELD_BIND, d)) != 0 ||
	    (r = step_bind_list(v, STEP_BIND_CPUS, st->bind.cpus, BIND_MAX_CPUS, &st->bind.cpus_set,
	    d)) != 0 ||
	    (r = step_bind_list(v, STEP_BIND_MEMBIND, st->bind.mem, BIND_MAX_NODES, &st->bind.mem_set,
	    d)) != 0 ||
	    (r = step_bind_list(v, STEP_BIND_CPUNODEBIND, st->bind.nodes, BIND_MAX_NODES,
	    &st->bind.nodes_set, d)) != 0)
		return r;
	return 0;
}

static int
step_f_aslr(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	int r;

	if ((r = step_want(v, AJSON_BOOL, STEP_FIELD_ASLR, d)) != 0)
		return r;
	st->bind.aslr_off = !v->boolean;
	return 0;
}

static int
step_f_drop_caches(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	int r;

	if ((r = step_want(v, AJSON_BOOL, STEP_FIELD_DROP_CACHES, d)) != 0)
		return r;
	if (v->boolean && st->drop_caches == 0)
		st->drop_caches = 3;
	return 0;
}

/* "profile": {"perf": "record", "freq": 999}: one more iteration, unmeasured,
 * under perf record (agent/profile.c). */
static int
step_f_profile(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	const struct ajson *e;
	size_t i;
	int r;

	if ((r = step_want(v, AJSON_OBJ, STEP_FIELD_PROFILE, d)) != 0)
		return r;
	st->profile_freq = BF_PROFILE_DEFAULT_FREQ;
	for (i = 0; i < v->n; i++) {
		e = v->items[i];
		if (strcmp(e->key, STEP_PROFILE_PERF) == 0) {
			if (e->type != AJSON_STR || strcmp(e->str, STEP_PROFILE_RECORD) != 0) {
				bf_diag_set(d, "profile.perf", "expected \"record\"");
				return BF_ERR_INVALID;
			}
			st->profile = 1;
		} else if (strcmp(e->key, STEP_PROFILE_FREQ) == 0) {
			if (e->type != AJSON_NUM || !e->is_int || e->i < 1 ||
			    e->i > BF_MAX_PROFILE_FREQ) {
				bf_diag_set(d, "profile.freq", "expected an integer in 1..%d",
				    BF_MAX_PROFILE_FREQ);
				return BF_ERR_RANGE;
			}
			st->profile_freq = (int)e->i;
		} else {
			bf_diag_set(d, "profile", "unknown field \"%.64s\"", e->key);
			return BF_ERR_INVALID;
		}
	}
	if (!st->profile) {
		bf_diag_set(d, "profile.perf", "missing");
		return BF_ERR_INVALID;
	}
	return 0;
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
step_f_env(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	char field[BF_MAX_NAME + 16];
	size_t i;
	int r;

	if ((r = step_want(v, AJSON_OBJ, STEP_FIELD_ENV, d)) != 0)
		return r;
	if (v->n > STEP_MAX_ENV) {
		bf_diag_set(d, "env", "%zu entries, at most %d allowed", v->n, STEP_MAX_ENV);
		return BF_ERR_RANGE;
	}
	if ((st->env_name = calloc(v->n + 1, sizeof(char *))) == NULL ||
	    (st->env_value = calloc(v->n + 1, sizeof(char *))) == NULL) {
		return BF_ERR_ALLOC;
	}
	for (i = 0; i < v->n; i++) {
		const struct ajson *e = v->items[i];

		if (!step_env_name_ok(e->key)) {
			bf_diag_set(d, "env", "\"%.64s\" is not a valid variable name "
			    "([A-Za-z_][A-Za-z0-9_]*, at most %d bytes)", e->key, BF_MAX_NAME);
			return BF_ERR_INVALID;
		}
		snprintf(field, sizeof(field), "env.%s", e->key);
		if ((st->env_name[i] = strdup(e->key)) == NULL)
			return BF_ERR_ALLOC;
		st->nenv++;
		if ((r = step_str(e, field, BF_MAX_ARG, &st->env_value[i], d)) != 0)
			return r;
	}
	return 0;
}

static int
step_f_cwd(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	int r;

	if ((r = step_str(v, STEP_FIELD_CWD, STEP_MAX_PATH, &st->cwd, d)) != 0)
		return r;
	if (st->cwd[0] != '/') {
		bf_diag_set(d, "cwd", "\"%.64s\" is not an absolute path", st->cwd);
		return BF_ERR_INVALID;
	}
	return 0;
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

/* The csv rule: {"row_match": "GET", "column": "rps"}. */
static int
step_metric_csv(const struct ajson *v, const char *field, struct step_metric *m,
    struct bf_diag *d)
{
	static const char *const keys[] = { STEP_METRIC_CSV_ROW, STEP_METRIC_CSV_COLUMN, NULL };
	const struct ajson *rm, *col;
	char ef[80];
	int r;

	if ((r = step_want(v, AJSON_OBJ, field, d)) != 0 || (r = step_only(v, keys, field, d)) != 0)
		return r;
	rm = ajson_get(v, STEP_METRIC_CSV_ROW);
	col = ajson_get(v, STEP_METRIC_CSV_COLUMN);
	if (rm == NULL || col == NULL) {
		snprintf(ef, sizeof(ef), "%s.%s", field, rm == NULL ? "row_match" : "column");
		bf_diag_set(d, ef, "missing");
		return BF_ERR_INVALID;
	}
	snprintf(ef, sizeof(ef), "%s.row_match", field);
	if ((r = step_str(rm, ef, BF_MAX_REGEX, &m->row_match, d)) != 0)
		return r;
	snprintf(ef, sizeof(ef), "%s.column", field);
	if ((r = step_str(col, ef, BF_MAX_REGEX, &m->column, d)) != 0)
		return r;
	if (m->column[0] == '\0') {
		bf_diag_set(d, ef, "empty column name");
		return BF_ERR_INVALID;
	}
	return 0;
}

static int
step_metric(const struct ajson *v, size_t idx, struct step *st, struct bf_diag *d)
{
	static const char *const keys[] = { STEP_METRIC_NAME, STEP_METRIC_SOURCE, STEP_METRIC_REGEX,
	    STEP_METRIC_CSV, STEP_METRIC_JSON, STEP_METRIC_FILE, NULL };
	struct step_metric *m = &st->metrics[idx];
	const struct ajson *name, *src, *rx, *csv, *jp, *file;
	char field[48], err[128];
	const char *why = NULL;
	size_t i;
	int r, rc;

	snprintf(field, sizeof(field), "metrics[%zu]", idx);
	if ((r = step_want(v, AJSON_OBJ, field, d)) != 0)
		return r;
	for (i = 0; i < v->n; i++) {
		for (rc = 0; keys[rc] != NULL; rc++)
			if (strcmp(v->items[i]->key, keys[rc]) == 0)
				break;
		if (keys[rc] == NULL) {
			bf_diag_set(d, field, "unknown field \"%.64s\" (expected name, source, "
			    "file, and one of regex, csv, json)", v->items[i]->key);
			return BF_ERR_INVALID;
		}
	}
	name = ajson_get(v, STEP_METRIC_NAME);
	src = ajson_get(v, STEP_METRIC_SOURCE);
	rx = ajson_get(v, STEP_METRIC_REGEX);
	csv = ajson_get(v, STEP_METRIC_CSV);
	jp = ajson_get(v, STEP_METRIC_JSON);
	file = ajson_get(v, STEP_METRIC_FILE);
	if (name == NULL || src == NULL) {
		snprintf(field, sizeof(field), "metrics[%zu].%s", idx,
		    name == NULL ? STEP_METRIC_NAME : STEP_METRIC_SOURCE);
		bf_diag_set(d, field, "missing");
		return BF_ERR_INVALID;
	}
	if (rx == NULL && csv == NULL && jp == NULL) {
		snprintf(field, sizeof(field), "metrics[%zu].regex", idx);
		bf_diag_set(d, field, "missing (a metric needs one of regex, csv, json)");
		return BF_ERR_INVALID;
	}
	if ((rx != NULL) + (csv != NULL) + (jp != NULL) != 1) {
		bf_diag_set(d, field, "needs exactly one of regex, csv, json");
		return BF_ERR_INVALID;
	}
	snprintf(field, sizeof(field), "metrics[%zu].name", idx);
	if ((r = step_str(name, field, BF_MAX_NAME, &m->name, d)) != 0)
		return r;
	if (!step_metric_name_ok(m->name)) {
		bf_diag_set(d, field, "\"%s\" is not a metric name ([A-Za-z0-9_.-]+)", m->name);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < idx; i++)
		if (strcmp(st->metrics[i].name, m->name) == 0) {
			bf_diag_set(d, field, "\"%s\" appears twice", m->name);
			return BF_ERR_EXISTS;
		}
	snprintf(field, sizeof(field), "metrics[%zu].source", idx);
	if ((r = step_want(src, AJSON_STR, field, d)) != 0)
		return r;
	if (strcmp(src->str, STEP_SOURCE_STDOUT) == 0)
		m->source = STEP_STDOUT;
	else if (strcmp(src->str, STEP_SOURCE_STDERR) == 0)
		m->source = STEP_STDERR;
	else if (strcmp(src->str, STEP_SOURCE_FILE) == 0)
		m->source = STEP_FILE;
	else {
		bf_diag_set(d, field, "\"%.64s\" is not one of stdout, stderr, file", src->str);
		return BF_ERR_INVALID;
	}
	snprintf(field, sizeof(field), "metrics[%zu].file", idx);
	if ((file != NULL) != (m->source == STEP_FILE)) {
		bf_diag_set(d, field, file != NULL ? "only for source file" :
		    "missing (source file names a file of the workdir)");
		return BF_ERR_INVALID;
	}
	if (file != NULL) {
		if ((r = step_str(file, field, STEP_MAX_FILE_NAME, &m->file, d)) != 0)
			return r;
		if (!step_name_ok(m->file, STEP_MAX_FILE_NAME, 0)) {
			bf_diag_set(d, field, "\"%.64s\" is not a file name", m->file);
			return BF_ERR_INVALID;
		}
	}
	if (csv != NULL) {
		m->rule = STEP_RULE_CSV;
		snprintf(field, sizeof(field), "metrics[%zu].csv", idx);
		return step_metric_csv(csv, field, m, d);
	}
	if (jp != NULL) {
		m->rule = STEP_RULE_JSON;
		snprintf(field, sizeof(field), "metrics[%zu].json", idx);
		if ((r = step_str(jp, field, BF_MAX_REGEX, &m->path, d)) != 0)
			return r;
		if (m->path[0] == '\0' || m->path[0] == '.' ||
		    m->path[strlen(m->path) - 1] == '.' || strstr(m->path, "..") != NULL) {
			bf_diag_set(d, field, "\"%.64s\" is not a path like a.b.c", m->path);
			return BF_ERR_INVALID;
		}
		return 0;
	}
	m->rule = STEP_RULE_REGEX;
	snprintf(field, sizeof(field), "metrics[%zu].regex", idx);
	if ((r = step_str(rx, field, BF_MAX_REGEX, &m->regex, d)) != 0)
		return r;
	if (parse_regex_check(m->regex, &why) != 0) {
		bf_diag_set(d, field, "%s", why);
		return BF_ERR_INVALID;
	}
	if ((rc = regcomp(&m->re, m->regex, REG_EXTENDED)) != 0) {
		regerror(rc, &m->re, err, sizeof(err));
		bf_diag_set(d, field, "does not compile: %s", err);
		return BF_ERR_INVALID;
	}
	m->re_ok = 1;
	if (m->re.re_nsub < 1) {
		bf_diag_set(d, field, "has no capture group for the number");
		return BF_ERR_INVALID;
	}
	return 0;
}

static int
step_f_metrics(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	size_t i;
	int r;

	if ((r = step_want(v, AJSON_ARR, STEP_FIELD_METRICS, d)) != 0)
		return r;
	if (v->n > STEP_MAX_METRICS) {
		bf_diag_set(d, "metrics", "%zu entries, at most %d allowed", v->n, STEP_MAX_METRICS);
		return BF_ERR_RANGE;
	}
	if ((st->metrics = calloc(v->n + 1, sizeof(*st->metrics))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < v->n; i++) {
		/* counted first so step_free releases a half-built entry */
		st->nmetrics++;
		if ((r = step_metric(v->items[i], i, st, d)) != 0)
			return r;
	}
	return 0;
}

/*
 * "paths": [{"name": "workdir", "path": "/var/tmp/benchfleet/k", "root":
 * "/var/tmp/benchfleet"}]: the coordinator checked each path parameter at
 * submit; it is checked again here, on the machine, before anything runs:
 * normal, under its root, and no symbolic link below the root (path.h).
 */
static int
step_f_paths(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	static const char *const keys[] = { STEP_PATH_NAME, STEP_PATH_PATH, STEP_PATH_ROOT, NULL };
	const struct ajson *e, *name, *p, *root;
	const char *why = NULL;
	char ef[32], fs[BF_DIAG_MSG - 64];
	size_t i;
	int r;

	(void)st;
	if ((r = step_want(v, AJSON_ARR, STEP_FIELD_PATHS, d)) != 0)
		return r;
	if (v->n > STEP_MAX_PATHS) {
		bf_diag_set(d, "paths", "%zu entries, at most %d allowed", v->n, STEP_MAX_PATHS);
		return BF_ERR_RANGE;
	}
	for (i = 0; i < v->n; i++) {
		e = v->items[i];
		snprintf(ef, sizeof(ef), "paths[%zu]", i);
		if ((r = step_want(e, AJSON_OBJ, ef, d)) != 0 || (r = step_only(e, keys, ef, d)) != 0)
			return r;
		name = ajson_get(e, STEP_PATH_NAME);
		p = ajson_get(e, STEP_PATH_PATH);
		root = ajson_get(e, STEP_PATH_ROOT);
		if (name == NULL || p == NULL || root == NULL) {
			bf_diag_set(d, ef, "needs name, path and root");
			return BF_ERR_INVALID;
		}
		if ((r = step_want(name, AJSON_STR, ef, d)) != 0 ||
		    (r = step_want(p, AJSON_STR, ef, d)) != 0 ||
		    (r = step_want(root, AJSON_STR, ef, d)) != 0)
			return r;
		if (path_check_normal(root->str, root->len, &why) != 0) {
			bf_diag_set(d, ef, "root \"%.200s\" %s", root->str, why);
			return BF_ERR_INVALID;
		}
		if (path_check_normal(p->str, p->len, &why) != 0) {
			bf_diag_set(d, ef, "%.64s: \"%.200s\" %s", name->str, p->str, why);
			return BF_ERR_INVALID;
		}
		if (!path_is_under(p->str, root->str)) {
			bf_diag_set(d, ef, "%.64s: \"%.200s\" is not under %.200s", name->str,
			    p->str, root->str);
			return BF_ERR_INVALID;
		}
		if ((r = path_check_fs(root->str, p->str, fs, sizeof(fs))) != 0) {
			bf_diag_set(d, ef, "%.64s: %s", name->str, fs);
			return r;
		}
	}
	return 0;
}

/* "pmu": {"walk_active": "r0108"}: raw events counted beside the default set. */
static int
step_f_pmu(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	uint64_t cfg;
	size_t i;
	int r;

	if ((r = step_want(v, AJSON_OBJ, STEP_FIELD_PMU, d)) != 0)
		return r;
	if (v->n > BF_MAX_STEP_PMU) {
		bf_diag_set(d, "pmu", "%zu events, at most %d allowed", v->n, BF_MAX_STEP_PMU);
		return BF_ERR_RANGE;
	}
	if ((st->pmu_name = calloc(v->n + 1, sizeof(char *))) == NULL ||
	    (st->pmu_spec = calloc(v->n + 1, sizeof(char *))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < v->n; i++) {
		const struct ajson *e = v->items[i];

		if (!step_metric_name_ok(e->key) || e->type != AJSON_STR ||
		    counters_raw_config(e->str, &cfg) != 0) {
			bf_diag_set(d, "pmu", "\"%.64s\": expected a name of [A-Za-z0-9_.-] and a "
			    "raw event \"r\" + 1..16 hex digits (\"r0108\")", e->key);
			return BF_ERR_INVALID;
		}
		if ((st->pmu_name[i] = strdup(e->key)) == NULL ||
		    (st->pmu_spec[i] = strdup(e->str)) == NULL) {
			free(st->pmu_name[i]);
			st->pmu_name[i] = NULL;
			return BF_ERR_ALLOC;
		}
		st->npmu++;
	}
	return 0;
}

static const struct step_field step_fields[] = {
	{ .name = STEP_FIELD_RUN,	.required = 1,	.fn = step_f_run },
	{ .name = STEP_FIELD_ARGV,	.required = 1,	.fn = step_f_argv },
	{ .name = STEP_FIELD_ITERATIONS, .required = 1,	.fn = step_f_iterations },
	{ .name = STEP_FIELD_WARMUP,	.required = 0,	.fn = step_f_warmup },
	{ .name = STEP_FIELD_GAP_MS,	.required = 0,	.fn = step_f_gap },
	{ .name = STEP_FIELD_TIMEOUT_S,	.required = 1,	.fn = step_f_timeout },
	{ .name = STEP_FIELD_ENV,	.required = 0,	.fn = step_f_env },
	{ .name = STEP_FIELD_CWD,	.required = 0,	.fn = step_f_cwd },
	{ .name = STEP_FIELD_METRICS,	.required = 0,	.fn = step_f_metrics },
	{ .name = STEP_FIELD_KNOBS,	.required = 0,	.fn = step_f_knobs },
	/* after knobs: it names them */
	{ .name = STEP_FIELD_KNOBS_OPTIONAL, .required = 0, .fn = step_f_knobs_optional },
	{ .name = STEP_FIELD_BIND,	.required = 0,	.fn = step_f_bind },
	{ .name = STEP_FIELD_ASLR,	.required = 0,	.fn = step_f_aslr },
	{ .name = STEP_FIELD_DROP_CACHES, .required = 0, .fn = step_f_drop_caches },
	{ .name = STEP_FIELD_SETUP,	.required = 0,	.fn = step_f_setup },
	{ .name = STEP_FIELD_PRE,	.required = 0,	.fn = step_f_pre },
	{ .name = STEP_FIELD_SERVICES,	.required = 0,	.fn = step_f_services },
	{ .name = STEP_FIELD_PATHS,	.required = 0,	.fn = step_f_paths },
	{ .name = STEP_FIELD_PMU,	.required = 0,	.fn = step_f_pmu },
	{ .name = STEP_FIELD_PROFILE,	.required = 0,	.fn = step_f_profile },
	{ .name = STEP_FIELD_PACKAGES,	.required = 0,	.fn = step_f_packages },
	{ .name = STEP_FIELD_FILES,	.required = 0,	.fn = step_f_files },
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
	for (i = 0; i < st->nknobs; i++) {
		free(st->knobs[i].name);
		free(st->knobs[i].value);
	}
	free(st->knobs);
	for (i = 0; i < st->nsetup; i++)
		step_cmd_clear(&st->setup[i]);
	free(st->setup);
	for (i = 0; i < st->npre; i++)
		step_cmd_clear(&st->pre[i]);
	free(st->pre);
	for (i = 0; i < st->nservices; i++) {
		step_cmd_clear(&st->services[i].cmd);
		free(st->services[i].host);
	}
	free(st->services);
	for (i = 0; i < st->nenv; i++) {
		free(st->env_name[i]);
		free(st->env_value[i]);
	}
	free(st->env_name);
	free(st->env_value);
	for (i = 0; i < st->npmu; i++) {
		free(st->pmu_name[i]);
		free(st->pmu_spec[i]);
	}
	free(st->pmu_name);
	free(st->pmu_spec);
	free(st->cwd);
	for (i = 0; i < st->nmetrics; i++) {
		free(st->metrics[i].name);
		free(st->metrics[i].regex);
		free(st->metrics[i].row_match);
		free(st->metrics[i].column);
		free(st->metrics[i].path);
		free(st->metrics[i].file);
		if (st->metrics[i].re_ok)
			regfree(&st->metrics[i].re);
	}
	free(st->metrics);
	step_files_free(st);
	free(st);
}

int
step_parse(const char *text, size_t len, struct step **out, struct bf_diag *d)
{
	struct ajson *doc = NULL;
	struct step *st = NULL;
	struct bf_diag jd;
	const struct ajson *v;
	size_t i, k;
	int r;

	bf_diag_clear(d);
	if ((r = ajson_parse(text, len, &doc, &jd)) != 0) {
		bf_diag_set(d, "step", "%s", jd.msg);
		goto out;
	}
	if (doc->type != AJSON_OBJ) {
		r = step_want(doc, AJSON_OBJ, "step", d);
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
		if ((v = ajson_get(doc, step_fields[k].name)) == NULL) {
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
	if ((r = step_files_check(st, d)) != 0)
		goto out;
	*out = st;
	st = NULL;
	r = 0;
out:
	if (r == BF_ERR_ALLOC)
		bf_diag_set(d, "step", "out of memory");
	step_free(st);
	ajson_free(doc);
	return r;
}
