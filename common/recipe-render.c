/*
 * recipe-render.c: templates into argv: the {param} slots of a command
 * rendered from one set of checked values (never through a shell), and
 * the parts of the agent's step that come from the recipe (setup,
 * pre_iteration, services, metrics, paths), named as common/step-schema.h
 * says.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "jx.h"
#include "caps.h"
#include "recipe.h"
#include "recipe-int.h"
#include "step-schema.h"

int
recipe_append_value(struct buf *b, const json_t *v)
{
	double x;
	int r;

	switch (json_typeof(v)) {
	case JSON_STRING:
		r = buf_append(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		r = buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		x = json_real_value(v);
		/* 2.0 renders as "2": a program parsing an int argument must accept it */
		if (isfinite(x) && x == trunc(x) && fabs(x) < 9e15)
			r = buf_printf(b, "%lld", (long long)x);
		else
			r = buf_printf(b, "%.17g", x);
		break;
	case JSON_TRUE:
		r = buf_puts(b, "true");
		break;
	case JSON_FALSE:
		r = buf_puts(b, "false");
		break;
	default:
		r = BF_ERR_INVALID;
		break;
	}
	return r;
}

static int
recipe_emit(struct buf *out, const char *s, size_t n, const char *path, struct bf_diag *d)
{
	int r;

	if ((r = buf_append(out, s, n)) == BF_ERR_TOOBIG)
		bf_diag_set(d, path, "rendered element is over %d bytes", BF_MAX_ARG);
	return r;
}

/*
 * Walk one argv template. With values == NULL only the syntax and the slot
 * names are checked (at load); otherwise each slot's value is appended to
 * out. Values go in as bytes of one element: nothing here is a shell.
 */
int
recipe_scan(const struct recipe *rc, const char *tmpl, const json_t *values, struct buf *out,
    const char *path, struct bf_diag *d)
{
	char names[BF_DIAG_MSG], name[BF_MAX_NAME + 1], vpath[BF_DIAG_FIELD];
	const struct recipe_param *p;
	const char *s = tmpl, *e;
	json_t *v;
	size_t n;
	int r = 0;

	while (*s != '\0') {
		if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
			if (out != NULL && (r = recipe_emit(out, s, 1, path, d)) != 0)
				return r;
			s += 2;
			continue;
		}
		if (s[0] == '}') {
			bf_diag_set(d, path, "unmatched \"}\" at byte %zu (write \"}}\" for a "
			    "literal brace)", (size_t)(s - tmpl));
			return BF_ERR_INVALID;
		}
		if (s[0] != '{') {
			for (e = s; *e != '\0' && *e != '{' && *e != '}'; e++)
				;
			if (out != NULL && (r = recipe_emit(out, s, (size_t)(e - s), path, d)) != 0)
				return r;
			s = e;
			continue;
		}
		for (e = s + 1; *e != '\0' && *e != '}' && *e != '{'; e++)
			;
		if (*e != '}') {
			bf_diag_set(d, path, "unmatched \"{\" at byte %zu (write \"{{\" for a "
			    "literal brace)", (size_t)(s - tmpl));
			return BF_ERR_INVALID;
		}
		n = (size_t)(e - s - 1);
		if (n == 0 || n > BF_MAX_NAME) {
			bf_diag_set(d, path, "slot {%.*s} names no parameter; parameters are %s",
			    (int)(n > BF_MAX_NAME ? BF_MAX_NAME : n), s + 1,
			    recipe_param_names(rc, names, sizeof(names)));
			return BF_ERR_INVALID;
		}
		memcpy(name, s + 1, n);
		name[n] = '\0';
		if ((p = recipe_param(rc, name)) == NULL) {
			bf_diag_set(d, path, "slot {%s} names no parameter; parameters are %s",
			    name, recipe_param_names(rc, names, sizeof(names)));
			return BF_ERR_INVALID;
		}
		if (out != NULL) {
			jx_path(vpath, sizeof(vpath), "values", name);
			if ((v = json_object_get(values, name)) == NULL) {
				bf_diag_set(d, path, "no value for parameter %s", name);
				return BF_ERR_INVALID;
			}
			if ((r = recipe_check_value(p, v, NULL, vpath, d)) != 0)
				return r;
			if ((r = recipe_append_value(out, v)) != 0) {
				if (r == BF_ERR_TOOBIG)
					bf_diag_set(d, path, "rendered element is over %d bytes",
					    BF_MAX_ARG);
				return r;
			}
		}
		s = e + 1;
	}
	return 0;
}

/*
 * Mark the parameters whose value begins the element tmpl (named ep in
 * messages): "{p}", "{p}.txt", or any slot with only slots before it, since
 * those before may be empty. recipe_scan() has checked the syntax.
 */
void
recipe_mark_leads(struct recipe *rc, const char *tmpl, const char *ep)
{
	struct recipe_param *p;
	const char *s = tmpl, *e;
	size_t i, n;

	while (s[0] == '{' && s[1] != '{') {
		for (e = s + 1; *e != '\0' && *e != '}'; e++)
			;
		if (*e != '}')
			return;
		n = (size_t)(e - s - 1);
		for (p = NULL, i = 0; p == NULL && i < rc->nparams; i++)
			if (strlen(rc->params[i].name) == n &&
			    strncmp(rc->params[i].name, s + 1, n) == 0)
				p = &rc->params[i];
		if (p == NULL)
			return;
		if (s == tmpl && e[1] == '\0')
			p->whole = 1;
		/* a diagnostic field path: a truncated one still names the place */
		if (!p->leads && snprintf(p->lead_at, sizeof(p->lead_at), "%s", ep) < 0)
			p->lead_at[0] = '\0';
		p->leads = 1;
		s = e + 1;
	}
}

/* Render template tmpl[0..n) (named path in messages) into a new argv. */
static int
recipe_render_tmpl(const struct recipe *rc, char *const *tmpl, size_t n, const char *path,
    const json_t *values, char ***argvp, size_t *argcp, struct bf_diag *d)
{
	char ep[BF_DIAG_FIELD];
	char **argv = NULL;
	struct buf b;
	size_t i;
	int r;

	buf_init(&b, BF_MAX_ARG);
	if ((argv = calloc(n + 1, sizeof(*argv))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++) {
		jx_path_idx(ep, sizeof(ep), path, i);
		buf_reset(&b);
		if ((r = recipe_scan(rc, tmpl[i], values, &b, ep, d)) != 0)
			goto out;
		if ((argv[i] = buf_steal(&b)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	*argvp = argv;
	*argcp = n;
	argv = NULL;
	r = 0;
out:
	buf_free(&b);
	recipe_argv_free(argv);
	return r;
}

int
recipe_render_argv(const struct recipe *rc, const json_t *values, char ***argvp,
    size_t *argcp, struct bf_diag *d)
{
	return recipe_render_tmpl(rc, rc->command, rc->ncommand, "command", values, argvp, argcp,
	    d);
}

/* A rendered argv as a JSON array of strings; new reference or NULL. */
static json_t *
recipe_argv_json(char **argv)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && argv[i] != NULL; i++)
		if (json_array_append_new(a, json_string(argv[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static int
recipe_cmds_json(const struct recipe *rc, const struct recipe_cmd *cmds, size_t n,
    const char *key, const json_t *values, json_t *step, struct bf_diag *d)
{
	char path[BF_DIAG_FIELD];
	json_t *arr = NULL, *a;
	char **argv = NULL;
	size_t i, argc;
	int r;

	if (n == 0)
		return 0;
	if ((arr = json_array()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++) {
		jx_path_idx(path, sizeof(path), key, i);
		if ((r = recipe_render_tmpl(rc, cmds[i].argv, cmds[i].argc, path, values, &argv,
		    &argc, d)) != 0)
			goto out;
		a = recipe_argv_json(argv);
		recipe_argv_free(argv);
		argv = NULL;
		if (a == NULL || json_array_append_new(arr, a) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	if (json_object_set_new(step, key, arr) != 0) {
		arr = NULL;
		r = BF_ERR_ALLOC;
		goto out;
	}
	arr = NULL;
	r = 0;
out:
	json_decref(arr);
	return r;
}

/* "paths": each path parameter with the root the agent holds it to. */
static int
recipe_paths_json(const struct recipe *rc, const json_t *values, const char *root,
    json_t *step, struct bf_diag *d)
{
	char path[BF_DIAG_FIELD];
	const struct recipe_param *p;
	json_t *paths = NULL, *v, *o;
	size_t i;
	int r;

	if ((paths = json_array()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < rc->nparams; i++) {
		p = &rc->params[i];
		if (p->type != RECIPE_P_PATH)
			continue;
		jx_path(path, sizeof(path), "params", p->name);
		if ((v = json_object_get(values, p->name)) == NULL) {
			bf_diag_set(d, path, "no value for parameter %s", p->name);
			r = BF_ERR_INVALID;
			goto out;
		}
		if (p->root == NULL && root == NULL) {
			bf_diag_set(d, path, "no root to keep the path under");
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((r = recipe_check_value(p, v, root, path, d)) != 0)
			goto out;
		o = json_pack("{s:s,s:O,s:s}", STEP_PATH_NAME, p->name, STEP_PATH_PATH, v,
		    STEP_PATH_ROOT, p->root != NULL ? p->root : root);
		if (o == NULL || json_array_append_new(paths, o) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	if (json_array_size(paths) > 0 && json_object_set(step, STEP_FIELD_PATHS, paths) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	json_decref(paths);
	return r;
}

int
recipe_step_json(const struct recipe *rc, const json_t *values, const char *root,
    json_t *step, struct bf_diag *d)
{
	char path[BF_DIAG_FIELD];
	json_t *svcs = NULL, *metrics = NULL, *o, *a;
	char **argv = NULL;
	struct buf b;
	size_t i, argc;
	int r;

	buf_init(&b, BF_MAX_ARG);
	if ((r = recipe_paths_json(rc, values, root, step, d)) != 0 ||
	    (r = recipe_files_step_json(rc, values, step, d)) != 0 ||
	    (r = recipe_cmds_json(rc, rc->setup, rc->nsetup, STEP_FIELD_SETUP, values, step, d)) != 0 ||
	    (r = recipe_cmds_json(rc, rc->pre, rc->npre, STEP_FIELD_PRE, values, step, d)) != 0)
		goto out;
	if (rc->nservices > 0) {
		if ((svcs = json_array()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		for (i = 0; i < rc->nservices; i++) {
			const struct recipe_service *s = &rc->services[i];

			jx_path_idx(path, sizeof(path), STEP_FIELD_SERVICES, i);
			if ((r = recipe_render_tmpl(rc, s->cmd.argv, s->cmd.argc, path, values,
			    &argv, &argc, d)) != 0)
				goto out;
			buf_reset(&b);
			if ((r = recipe_scan(rc, s->ready_tcp, values, &b, path, d)) != 0)
				goto out;
			a = recipe_argv_json(argv);
			recipe_argv_free(argv);
			argv = NULL;
			o = json_pack("{s:o,s:{s:s,s:I}}", STEP_SERVICE_ARGV, a, STEP_SERVICE_READY,
			    STEP_SERVICE_TCP, b.data != NULL ? b.data : "", STEP_SERVICE_TIMEOUT_S,
			    (json_int_t)s->ready_timeout_s);
			if (a == NULL || o == NULL || json_array_append_new(svcs, o) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		}
		if (json_object_set(step, STEP_FIELD_SERVICES, svcs) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	if ((metrics = json_array()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < rc->nmetrics; i++) {
		const struct recipe_metric *m = &rc->metrics[i];

		if (m->regex != NULL)
			o = json_pack("{s:s,s:s,s:s}", STEP_METRIC_NAME, m->name,
			    STEP_METRIC_SOURCE, m->source, STEP_METRIC_REGEX, m->regex);
		else if (m->csv_row != NULL)
			o = json_pack("{s:s,s:s,s:{s:s,s:s}}", STEP_METRIC_NAME, m->name,
			    STEP_METRIC_SOURCE, m->source, STEP_METRIC_CSV, STEP_METRIC_CSV_ROW,
			    m->csv_row, STEP_METRIC_CSV_COLUMN, m->csv_column);
		else if (m->json_path != NULL)
			o = json_pack("{s:s,s:s,s:s}", STEP_METRIC_NAME, m->name,
			    STEP_METRIC_SOURCE, m->source, STEP_METRIC_JSON, m->json_path);
		else
			continue;	/* measured by the agent for every iteration */
		if (o != NULL && m->file != NULL &&
		    json_object_set_new(o, STEP_METRIC_FILE, json_string(m->file)) != 0) {
			json_decref(o);
			o = NULL;
		}
		if (o == NULL || json_array_append_new(metrics, o) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	if (json_object_set(step, STEP_FIELD_METRICS, metrics) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	recipe_argv_free(argv);
	json_decref(svcs);
	json_decref(metrics);
	buf_free(&b);
	return r;
}

void
recipe_argv_free(char **argv)
{
	size_t i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}
