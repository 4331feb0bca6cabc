/*
 * recipe.c: parse and validate recipe documents: the document's keys, the
 * commands (setup, pre_iteration, services, the measured command) and the
 * metrics, then the public description of a loaded recipe. Everything in a
 * recipe is untrusted; every value is checked once, here and in
 * recipe-param.c, so that the rest of benchfleet can rely on the struct
 * recipe it gets. Rendering is in recipe-render.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "jx.h"
#include "caps.h"
#include "parse.h"
#include "path.h"
#include "recipe.h"
#include "recipe-int.h"
#include "step-schema.h"

static const char *const recipe_keys[] = {
	"name", "description", "params", "presets", "command", "timeout_s", "metrics",
	"setup", "pre_iteration", "services", "expect", NULL
};
static const char *const recipe_metric_keys[] = {
	"name", "unit", "better", "source", "regex", "csv", "json", NULL
};
static const char *const recipe_csv_keys[] = { "row_match", "column", NULL };
static const char *const recipe_service_keys[] = { "argv", "ready", NULL };
static const char *const recipe_ready_keys[] = { "tcp", "timeout_s", NULL };

/* Where a metric comes from: measured by the agent, or read from output. */
struct recipe_source_row {
	const char *name;
	int needs_regex;	/* a rule (regex, csv or json) is required */
};

static const struct recipe_source_row recipe_sources[] = {
	{ .name = "wall_s", .needs_regex = 0 },
	{ .name = "user_s", .needs_regex = 0 },
	{ .name = "sys_s", .needs_regex = 0 },
	{ .name = "maxrss_kb", .needs_regex = 0 },
	{ .name = "stdout", .needs_regex = 1 },
	{ .name = "stderr", .needs_regex = 1 },
};
#define RECIPE_NSOURCES	(sizeof(recipe_sources) / sizeof(recipe_sources[0]))

static void
recipe_metric_clear(struct recipe_metric *m)
{
	free(m->name);
	free(m->unit);
	free(m->source);
	free(m->regex);
	free(m->csv_row);
	free(m->csv_column);
	free(m->json_path);
}

static void
recipe_cmd_clear(struct recipe_cmd *c)
{
	size_t i;

	for (i = 0; c->argv != NULL && i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
}

void
recipe_free(struct recipe *r)
{
	size_t i;

	if (r == NULL)
		return;
	free(r->name);
	free(r->description);
	for (i = 0; i < r->nparams; i++)
		recipe_param_clear(&r->params[i]);
	free(r->params);
	json_decref(r->presets);
	for (i = 0; i < r->ncommand; i++)
		free(r->command[i]);
	free(r->command);
	for (i = 0; i < r->nmetrics; i++)
		recipe_metric_clear(&r->metrics[i]);
	free(r->metrics);
	for (i = 0; i < r->nsetup; i++)
		recipe_cmd_clear(&r->setup[i]);
	free(r->setup);
	for (i = 0; i < r->npre; i++)
		recipe_cmd_clear(&r->pre[i]);
	free(r->pre);
	for (i = 0; i < r->nservices; i++) {
		recipe_cmd_clear(&r->services[i].cmd);
		free(r->services[i].ready_tcp);
	}
	free(r->services);
	for (i = 0; i < r->nexpect; i++)
		recipe_expect_clear(&r->expect[i]);
	free(r->expect);
	json_decref(r->json);
	free(r);
}

/* strlen-bounded join; output is cut (never overrun) when bufsz is small. */
void
recipe_join(char *buf, size_t bufsz, const char *s, size_t i)
{
	size_t off = strlen(buf);

	if (off < bufsz)
		snprintf(buf + off, bufsz - off, "%s%s", i ? ", " : "", s);
}

/* A malloc'd copy of an optional string field, "" or NULL when absent. */
int
recipe_dup_opt(const json_t *obj, const char *key, size_t maxlen, const char *dflt, char **out,
    const char *path, struct bf_diag *d)
{
	const char *s = dflt;
	int r;

	if ((r = jx_str(obj, key, JX_OPTIONAL, maxlen, &s, path, d)) != 0)
		return r;
	*out = NULL;
	if (s != NULL && (*out = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/* An argv template: 1..BF_MAX_ARGV strings with {param} slots checked. */
static int
recipe_parse_argv(struct recipe *rc, const json_t *arr, const char *path, struct recipe_cmd *c,
    struct bf_diag *d)
{
	char ep[BF_DIAG_FIELD];
	json_t *v;
	size_t i, n;
	int r;

	if (!json_is_array(arr) || json_array_size(arr) < 1 || json_array_size(arr) > BF_MAX_ARGV) {
		bf_diag_set(d, path, "expected an array of 1..%d strings, got %s", BF_MAX_ARGV,
		    jx_type_name(arr));
		return BF_ERR_INVALID;
	}
	if ((c->argv = calloc(json_array_size(arr) + 1, sizeof(*c->argv))) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(arr, i, v) {
		jx_path_idx(ep, sizeof(ep), path, i);
		if (!json_is_string(v)) {
			bf_diag_set(d, ep, "expected a string, got %s", jx_type_name(v));
			return BF_ERR_INVALID;
		}
		n = json_string_length(v);
		if (n != strlen(json_string_value(v))) {
			bf_diag_set(d, ep, "contains a NUL byte");
			return BF_ERR_INVALID;
		}
		if (n > BF_MAX_ARG) {
			bf_diag_set(d, ep, "is %zu bytes long; at most %d allowed", n, BF_MAX_ARG);
			return BF_ERR_TOOBIG;
		}
		if (i == 0 && n == 0) {
			bf_diag_set(d, ep, "must not be empty");
			return BF_ERR_INVALID;
		}
		if (i > 0 && strcmp(json_string_value(v), "@agent") == 0) {
			bf_diag_set(d, ep, "\"@agent\" is allowed only as %s[0]", path);
			return BF_ERR_INVALID;
		}
		if ((r = recipe_scan(rc, json_string_value(v), NULL, NULL, ep, d)) != 0)
			return r;
		recipe_mark_leads(rc, json_string_value(v), ep);
		if ((c->argv[i] = strdup(json_string_value(v))) == NULL)
			return BF_ERR_ALLOC;
		c->argc++;
	}
	return 0;
}

static int
recipe_parse_command(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	struct recipe_cmd c = { NULL, 0 };
	json_t *arr;
	int r;

	if ((r = jx_arr(doc, "command", JX_REQUIRED, 1, BF_MAX_ARGV, &arr, "", d)) != 0)
		return r;
	r = recipe_parse_argv(rc, arr, "command", &c, d);
	rc->command = c.argv;
	rc->ncommand = c.argc;
	return r;
}

/* "setup" / "pre_iteration": lists of argv templates, run untimed. */
static int
recipe_parse_cmds(struct recipe *rc, const json_t *doc, const char *key, struct recipe_cmd **cp,
    size_t *np, struct bf_diag *d)
{
	char ep[BF_DIAG_FIELD];
	json_t *arr = NULL, *v;
	size_t i;
	int r;

	if ((r = jx_arr(doc, key, JX_OPTIONAL, 0, STEP_MAX_CMDS, &arr, "", d)) != 0 ||
	    arr == NULL)
		return r;
	if ((*cp = calloc(json_array_size(arr) + 1, sizeof(**cp))) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(arr, i, v) {
		jx_path_idx(ep, sizeof(ep), key, i);
		(*np)++;
		if ((r = recipe_parse_argv(rc, v, ep, &(*cp)[i], d)) != 0)
			return r;
	}
	return 0;
}

static int
recipe_parse_services(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char sp[BF_DIAG_FIELD], fp[BF_DIAG_FIELD], tp[BF_DIAG_FIELD];
	json_t *arr = NULL, *v, *argv, *ready;
	const char *tcp;
	size_t i;
	int r;

	if ((r = jx_arr(doc, "services", JX_OPTIONAL, 0, STEP_MAX_SERVICES, &arr, "", d)) != 0 ||
	    arr == NULL)
		return r;
	if ((rc->services = calloc(json_array_size(arr) + 1, sizeof(*rc->services))) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(arr, i, v) {
		struct recipe_service *s = &rc->services[i];

		jx_path_idx(sp, sizeof(sp), "services", i);
		rc->nservices++;
		s->ready_timeout_s = STEP_DEFAULT_READY_S;
		if (!json_is_object(v)) {
			bf_diag_set(d, sp, "expected an object, got %s", jx_type_name(v));
			return BF_ERR_INVALID;
		}
		if ((r = jx_only_keys(v, recipe_service_keys, sp, d)) != 0 ||
		    (r = jx_arr(v, "argv", JX_REQUIRED, 1, BF_MAX_ARGV, &argv, sp, d)) != 0 ||
		    (r = recipe_parse_argv(rc, argv, jx_path(fp, sizeof(fp), sp, "argv"), &s->cmd,
		    d)) != 0 ||
		    (r = jx_obj(v, "ready", JX_REQUIRED, &ready, sp, d)) != 0)
			return r;
		jx_path(fp, sizeof(fp), sp, "ready");
		if ((r = jx_only_keys(ready, recipe_ready_keys, fp, d)) != 0 ||
		    (r = jx_str(ready, "tcp", JX_REQUIRED, BF_MAX_NAME * 2, &tcp, fp, d)) != 0 ||
		    (r = jx_int(ready, "timeout_s", JX_OPTIONAL, 1, STEP_MAX_READY_S, &s->ready_timeout_s, fp,
		    d)) != 0)
			return r;
		jx_path(tp, sizeof(tp), fp, "tcp");
		if ((r = recipe_scan(rc, tcp, NULL, NULL, tp, d)) != 0)
			return r;
		if ((s->ready_tcp = strdup(tcp)) == NULL)
			return BF_ERR_ALLOC;
	}
	return 0;
}

static int
recipe_parse_metric(struct recipe *rc, struct recipe_metric *m, const json_t *spec,
    const char *path, struct bf_diag *d)
{
	char fp[BF_DIAG_FIELD], rep[80], list[BF_DIAG_MSG], ebuf[128];
	const char *why = NULL;
	const char *s;
	regex_t re;
	size_t i;
	int r, rr;

	if (!json_is_object(spec)) {
		bf_diag_set(d, path, "expected an object, got %s", jx_type_name(spec));
		return BF_ERR_INVALID;
	}
	if ((r = jx_only_keys(spec, recipe_metric_keys, path, d)) != 0)
		return r;
	if ((r = jx_str(spec, "name", JX_REQUIRED, BF_MAX_NAME, &s, path, d)) != 0 ||
	    (r = jx_check_name(s, jx_path(fp, sizeof(fp), path, "name"), d)) != 0)
		return r;
	for (i = 0; i < rc->nmetrics; i++)
		if (strcmp(rc->metrics[i].name, s) == 0) {
			bf_diag_set(d, fp, "\"%s\" is used by metrics[%zu] too", s, i);
			return BF_ERR_INVALID;
		}
	if ((m->name = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	if ((r = recipe_dup_opt(spec, "unit", RECIPE_UNIT_MAX, "", &m->unit, path, d)) != 0)
		return r;
	/* no default: a silently wrong direction would invert every comparison */
	if ((r = jx_str(spec, "better", JX_REQUIRED, BF_MAX_NAME, &s, path, d)) != 0)
		return r;
	if (strcmp(s, "higher") != 0 && strcmp(s, "lower") != 0) {
		bf_diag_set(d, jx_path(fp, sizeof(fp), path, "better"),
		    "%s is not one of higher, lower",
		    jx_repr(json_object_get(spec, "better"), rep, sizeof(rep)));
		return BF_ERR_INVALID;
	}
	m->higher_better = strcmp(s, "higher") == 0;
	if ((r = jx_str(spec, "source", JX_REQUIRED, BF_MAX_NAME, &s, path, d)) != 0)
		return r;
	for (i = 0; i < RECIPE_NSOURCES; i++)
		if (strcmp(s, recipe_sources[i].name) == 0)
			break;
	if (i == RECIPE_NSOURCES) {
		list[0] = '\0';
		for (i = 0; i < RECIPE_NSOURCES; i++)
			recipe_join(list, sizeof(list), recipe_sources[i].name, i);
		bf_diag_set(d, jx_path(fp, sizeof(fp), path, "source"), "%s is not one of %s",
		    jx_repr(json_object_get(spec, "source"), rep, sizeof(rep)), list);
		return BF_ERR_INVALID;
	}
	if ((m->source = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	jx_path(fp, sizeof(fp), path, "regex");
	if (!recipe_sources[i].needs_regex) {
		if (json_object_get(spec, "regex") != NULL || json_object_get(spec, "csv") != NULL ||
		    json_object_get(spec, "json") != NULL) {
			bf_diag_set(d, fp, "only for source stdout or stderr");
			return BF_ERR_INVALID;
		}
		return 0;
	}
	if ((json_object_get(spec, "regex") != NULL) + (json_object_get(spec, "csv") != NULL) +
	    (json_object_get(spec, "json") != NULL) > 1) {
		bf_diag_set(d, path, "give one of regex, csv, json");
		return BF_ERR_INVALID;
	}
	if (json_object_get(spec, "csv") != NULL) {
		json_t *csv;

		jx_path(fp, sizeof(fp), path, "csv");
		if ((r = jx_obj(spec, "csv", JX_REQUIRED, &csv, path, d)) != 0 ||
		    (r = jx_only_keys(csv, recipe_csv_keys, fp, d)) != 0 ||
		    (r = jx_str(csv, "row_match", JX_REQUIRED, BF_MAX_REGEX, &s, fp, d)) != 0)
			return r;
		if ((m->csv_row = strdup(s)) == NULL)
			return BF_ERR_ALLOC;
		if ((r = jx_str(csv, "column", JX_REQUIRED, BF_MAX_REGEX, &s, fp, d)) != 0)
			return r;
		if ((m->csv_column = strdup(s)) == NULL)
			return BF_ERR_ALLOC;
		return 0;
	}
	if (json_object_get(spec, "json") != NULL) {
		if ((r = jx_str(spec, "json", JX_REQUIRED, BF_MAX_REGEX, &s, path, d)) != 0)
			return r;
		if (s[0] == '.' || s[strlen(s) - 1] == '.' || strstr(s, "..") != NULL) {
			bf_diag_set(d, jx_path(fp, sizeof(fp), path, "json"),
			    "\"%.64s\" is not a path like a.b.c", s);
			return BF_ERR_INVALID;
		}
		if ((m->json_path = strdup(s)) == NULL)
			return BF_ERR_ALLOC;
		return 0;
	}
	if ((r = jx_str(spec, "regex", JX_REQUIRED, BF_MAX_REGEX, &s, path, d)) != 0)
		return r;
	if (parse_regex_check(s, &why) != 0) {
		bf_diag_set(d, fp, "%s", why);
		return BF_ERR_INVALID;
	}
	if ((rr = regcomp(&re, s, REG_EXTENDED)) != 0) {
		regerror(rr, &re, ebuf, sizeof(ebuf));
		bf_diag_set(d, fp, "does not compile: %s", ebuf);
		return BF_ERR_INVALID;
	}
	i = re.re_nsub;
	regfree(&re);
	if (i < 1) {
		bf_diag_set(d, fp, "needs a capture group (...) holding the number");
		return BF_ERR_INVALID;
	}
	if ((m->regex = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

static int
recipe_parse_metrics(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char mp[BF_DIAG_FIELD];
	json_t *arr = NULL, *v;
	size_t i;
	int r;

	if ((r = jx_arr(doc, "metrics", JX_OPTIONAL, 1, BF_MAX_METRICS, &arr, "", d)) != 0)
		return r;
	if (arr == NULL) {
		/* every iteration is timed, so wall time is always there to compare */
		if ((rc->metrics = calloc(1, sizeof(*rc->metrics))) == NULL)
			return BF_ERR_ALLOC;
		rc->nmetrics = 1;
		rc->metrics[0].name = strdup("wall_s");
		rc->metrics[0].unit = strdup("s");
		rc->metrics[0].source = strdup("wall_s");
		rc->metrics[0].higher_better = 0;
		if (rc->metrics[0].name == NULL || rc->metrics[0].unit == NULL ||
		    rc->metrics[0].source == NULL) {
			return BF_ERR_ALLOC;
		}
		return 0;
	}
	if ((rc->metrics = calloc(json_array_size(arr), sizeof(*rc->metrics))) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(arr, i, v) {
		jx_path_idx(mp, sizeof(mp), "metrics", i);
		r = recipe_parse_metric(rc, &rc->metrics[i], v, mp, d);
		/* counted after the duplicate check, which looks at metrics[0..n) */
		rc->nmetrics++;
		if (r != 0)
			return r;
	}
	return 0;
}

int
recipe_from_json(json_t *doc, struct recipe **out, struct bf_diag *d)
{
	struct recipe *rc = NULL;
	const char *s;
	int r;

	bf_diag_clear(d);
	if (!json_is_object(doc)) {
		bf_diag_set(d, "recipe", "expected an object, got %s",
		    doc != NULL ? jx_type_name(doc) : "nothing");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((rc = calloc(1, sizeof(*rc))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	rc->json = json_incref(doc);
	rc->timeout_s = STEP_DEFAULT_TIMEOUT_S;
	if ((r = jx_only_keys(doc, recipe_keys, "", d)) != 0)
		goto out;
	if ((r = jx_str(doc, "name", JX_REQUIRED, BF_MAX_NAME, &s, "", d)) != 0 ||
	    (r = jx_check_name(s, "name", d)) != 0)
		goto out;
	if ((rc->name = strdup(s)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = recipe_dup_opt(doc, "description", RECIPE_DESC_MAX, NULL, &rc->description,
	    "", d)) != 0)
		goto out;
	/* the templates before the presets and defaults are checked: they
	 * say which parameters begin an argv element */
	if ((r = recipe_parse_params(rc, doc, d)) != 0 ||
	    (r = recipe_parse_command(rc, doc, d)) != 0 ||
	    (r = recipe_parse_cmds(rc, doc, "setup", &rc->setup, &rc->nsetup, d)) != 0 ||
	    (r = recipe_parse_cmds(rc, doc, "pre_iteration", &rc->pre, &rc->npre, d)) != 0 ||
	    (r = recipe_parse_services(rc, doc, d)) != 0 ||
	    (r = recipe_check_defaults(rc, d)) != 0 ||
	    (r = recipe_parse_presets(rc, doc, d)) != 0 ||
	    (r = jx_int(doc, "timeout_s", JX_OPTIONAL, 1, STEP_MAX_TIMEOUT_S, &rc->timeout_s, "", d)) != 0 ||
	    (r = recipe_parse_metrics(rc, doc, d)) != 0 ||
	    (r = recipe_parse_expect(rc, doc, d)) != 0)
		goto out;
	*out = rc;
	rc = NULL;
	r = 0;
out:
	recipe_free(rc);
	return r;
}

int
recipe_parse(const char *text, size_t len, struct recipe **out, struct bf_diag *d)
{
	json_t *doc = NULL;
	int r;

	if ((r = jx_loads(text, len, BF_MAX_RECIPE_FILE, &doc, d)) != 0)
		goto out;
	r = recipe_from_json(doc, out, d);
out:
	json_decref(doc);
	return r;
}

int
recipe_load_file(const char *path, struct recipe **out, struct bf_diag *d)
{
	struct bf_diag sub;
	struct buf b;
	char chunk[8192];
	ssize_t n;
	int fd = -1, r;

	buf_init(&b, BF_MAX_RECIPE_FILE);
	bf_diag_clear(&sub);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		bf_diag_set(d, NULL, "%s: %s", path, strerror(errno));
		r = errno == ENOENT ? BF_ERR_NOTFOUND : BF_ERR_IO;
		goto out;
	}
	/* read to the cap, never trusting a size reported for the file */
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			bf_diag_set(d, NULL, "%s: %s", path, strerror(errno));
			r = BF_ERR_IO;
			goto out;
		}
		if (n == 0)
			break;
		if ((r = buf_append(&b, chunk, (size_t)n)) != 0) {
			if (r == BF_ERR_TOOBIG)
				bf_diag_set(d, NULL, "%s: recipe file is over %d bytes", path,
				    BF_MAX_RECIPE_FILE);
			goto out;
		}
	}
	if ((r = recipe_parse(b.data != NULL ? b.data : "", b.len, out, &sub)) != 0) {
		/* the message gains the file name; field stays the JSON path */
		bf_diag_set(d, NULL, "%s: %s", path, sub.msg);
		if (d != NULL)
			memcpy(d->field, sub.field, sizeof(d->field));
		goto out;
	}
	r = 0;
out:
	if (fd != -1)
		close(fd);
	buf_free(&b);
	return r;
}

int
recipe_metric_from_output(const struct recipe_metric *m)
{
	return m->regex != NULL || m->csv_row != NULL || m->json_path != NULL;
}

/* json_object_set_new that remembers the first failure in *okp. */
static void
recipe_set(json_t *o, const char *k, json_t *v, int *okp)
{
	if (v == NULL || json_object_set_new(o, k, v) != 0)
		*okp = 0;
}

json_t *
recipe_to_json(const struct recipe *rc)
{
	json_t *o = NULL, *params = NULL, *cmd = NULL, *metrics = NULL, *p, *vals, *m, *res = NULL;
	size_t i, j;
	int ok = 1;

	if ((o = json_object()) == NULL || (params = json_object()) == NULL ||
	    (cmd = json_array()) == NULL || (metrics = json_array()) == NULL)
		goto out;
	recipe_set(o, "name", json_string(rc->name), &ok);
	if (rc->description != NULL)
		recipe_set(o, "description", json_string(rc->description), &ok);
	for (i = 0; i < rc->nparams; i++) {
		const struct recipe_param *rp = &rc->params[i];

		if ((p = json_object()) == NULL) {
			ok = 0;
			break;
		}
		recipe_set(params, rp->name, p, &ok);
		recipe_set(p, "type", json_string(recipe_ptype_name(rp->type)), &ok);
		switch (rp->type) {
		case RECIPE_P_INT:
			/* the unbounded ends are left out rather than shown as INT64_MIN */
			if (rp->imin != INT64_MIN)
				recipe_set(p, "min", json_integer(rp->imin), &ok);
			if (rp->imax != INT64_MAX)
				recipe_set(p, "max", json_integer(rp->imax), &ok);
			break;
		case RECIPE_P_NUM:
			if (rp->nmin != -DBL_MAX)
				recipe_set(p, "min", json_real(rp->nmin), &ok);
			if (rp->nmax != DBL_MAX)
				recipe_set(p, "max", json_real(rp->nmax), &ok);
			break;
		case RECIPE_P_STR:
			recipe_set(p, "max_len", json_integer((json_int_t)rp->max_len), &ok);
			if (rp->pattern != NULL)
				recipe_set(p, "pattern", json_string(rp->pattern), &ok);
			break;
		case RECIPE_P_PATH:
			if (rp->root != NULL)
				recipe_set(p, "root", json_string(rp->root), &ok);
			break;
		case RECIPE_P_ENUM:
			if ((vals = json_array()) == NULL) {
				ok = 0;
				break;
			}
			recipe_set(p, "values", vals, &ok);
			for (j = 0; j < rp->nvalues; j++)
				if (json_array_append_new(vals, json_string(rp->values[j])) != 0)
					ok = 0;
			break;
		case RECIPE_P_BOOL:
			break;
		}
		if (rp->option)
			recipe_set(p, "option", json_true(), &ok);
		recipe_set(p, "default", json_incref(rp->def), &ok);
		if (rp->description != NULL)
			recipe_set(p, "description", json_string(rp->description), &ok);
		/* part of what the recipe means: a cell's values depend on it */
		if (rp->from_knob != NULL)
			recipe_set(p, "from_knob", json_pack("{s:s,s:O}", "knob", rp->from_knob,
			    "map", rp->from_map), &ok);
	}
	recipe_set(o, "params", params, &ok);
	params = NULL;
	recipe_set(o, "presets", json_deep_copy(rc->presets), &ok);
	for (i = 0; i < rc->ncommand; i++)
		if (json_array_append_new(cmd, json_string(rc->command[i])) != 0)
			ok = 0;
	recipe_set(o, "command", cmd, &ok);
	cmd = NULL;
	recipe_set(o, "timeout_s", json_integer(rc->timeout_s), &ok);
	for (i = 0; i < rc->nmetrics; i++) {
		const struct recipe_metric *rm = &rc->metrics[i];

		if ((m = json_object()) == NULL || json_array_append_new(metrics, m) != 0) {
			ok = 0;
			break;
		}
		recipe_set(m, "name", json_string(rm->name), &ok);
		recipe_set(m, "unit", json_string(rm->unit), &ok);
		recipe_set(m, "better", json_string(rm->higher_better ? "higher" : "lower"), &ok);
		recipe_set(m, "source", json_string(rm->source), &ok);
		if (rm->regex != NULL)
			recipe_set(m, "regex", json_string(rm->regex), &ok);
		if (rm->csv_row != NULL)
			recipe_set(m, "csv", json_pack("{s:s,s:s}", "row_match", rm->csv_row,
			    "column", rm->csv_column), &ok);
		if (rm->json_path != NULL)
			recipe_set(m, "json", json_string(rm->json_path), &ok);
	}
	/* setup, pre_iteration and services as written (templates) */
	if (rc->nsetup > 0)
		recipe_set(o, "setup", json_deep_copy(json_object_get(rc->json, "setup")), &ok);
	if (rc->npre > 0)
		recipe_set(o, "pre_iteration", json_deep_copy(json_object_get(rc->json,
		    "pre_iteration")), &ok);
	if (rc->nservices > 0)
		recipe_set(o, "services", json_deep_copy(json_object_get(rc->json, "services")),
		    &ok);
	recipe_set(o, "metrics", metrics, &ok);
	metrics = NULL;
	if (rc->nexpect > 0)
		recipe_set(o, "expect", json_deep_copy(json_object_get(rc->json, "expect")), &ok);
	if (!ok)
		goto out;
	res = o;
	o = NULL;
out:
	json_decref(o);
	json_decref(params);
	json_decref(cmd);
	json_decref(metrics);
	return res;
}
