/*
 * recipe.c: parse and validate recipe documents, check parameter values,
 * and render the measured command into an argv array. Everything in a
 * recipe is untrusted; every value is checked here once so that the rest
 * of benchfleet can rely on the struct recipe it gets.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
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
#include "step-schema.h"

static const char *const recipe_keys[] = {
	"name", "description", "params", "presets", "command", "timeout_s", "metrics",
	"setup", "pre_iteration", "services", NULL
};
static const char *const recipe_metric_keys[] = {
	"name", "unit", "better", "source", "regex", "csv", "json", NULL
};
static const char *const recipe_csv_keys[] = { "row_match", "column", NULL };
static const char *const recipe_service_keys[] = { "argv", "ready", NULL };
static const char *const recipe_ready_keys[] = { "tcp", "timeout_s", NULL };

/* One row per parameter type: its name and the keys it may carry. */
static const struct {
	const char *name;
	enum recipe_ptype type;
	const char *const keys[8];
} recipe_ptypes[] = {
	{"int", RECIPE_P_INT, {"type", "min", "max", "default", "description", "option", NULL}},
	{"number", RECIPE_P_NUM, {"type", "min", "max", "default", "description", "option",
	    NULL}},
	{"string", RECIPE_P_STR, {"type", "max_len", "pattern", "option", "default",
	    "description", NULL}},
	{"enum", RECIPE_P_ENUM, {"type", "values", "default", "description", NULL}},
	{"bool", RECIPE_P_BOOL, {"type", "default", "description", NULL}},
	{"path", RECIPE_P_PATH, {"type", "root", "default", "description", NULL}},
};
#define RECIPE_NPTYPES	(sizeof(recipe_ptypes) / sizeof(recipe_ptypes[0]))

static const struct {
	const char *name;
	int needs_regex;
} recipe_sources[] = {
	{"wall_s", 0}, {"user_s", 0}, {"sys_s", 0}, {"maxrss_kb", 0},
	{"stdout", 1}, {"stderr", 1},
};
#define RECIPE_NSOURCES	(sizeof(recipe_sources) / sizeof(recipe_sources[0]))

#define RECIPE_DESC_MAX	BF_MAX_STR
#define RECIPE_UNIT_MAX	BF_MAX_NAME

static void
recipe_param_clear(struct recipe_param *p)
{
	size_t i;

	free(p->name);
	for (i = 0; i < p->nvalues; i++)
		free(p->values[i]);
	free(p->values);
	json_decref(p->def);
	free(p->description);
	free(p->pattern);
	if (p->re_ok)
		regfree(&p->re);
	free(p->root);
}

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
	json_decref(r->json);
	free(r);
}

const struct recipe_param *
recipe_param(const struct recipe *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nparams; i++)
		if (strcmp(r->params[i].name, name) == 0)
			return &r->params[i];
	return NULL;
}

/* strlen-bounded join; output is cut (never overrun) when bufsz is small. */
static void
recipe_join(char *buf, size_t bufsz, const char *s, size_t i)
{
	size_t off = strlen(buf);

	if (off < bufsz)
		snprintf(buf + off, bufsz - off, "%s%s", i ? ", " : "", s);
}

const char *
recipe_param_names(const struct recipe *r, char *buf, size_t bufsz)
{
	size_t i;

	if (bufsz == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < r->nparams; i++)
		recipe_join(buf, bufsz, r->params[i].name, i);
	if (r->nparams == 0)
		snprintf(buf, bufsz, "(none)");
	return buf;
}

/* A value rendered at the start of an element must not look like an option. */
static int
recipe_check_lead(const struct recipe_param *p, const json_t *v, int neg, const char *path,
    struct bf_diag *d)
{
	char rep[80];

	if (!p->leads || p->option || !neg)
		return 0;
	bf_diag_set(d, path, "%s begins with \"-\", so the program would read it as an option "
	    "(it begins %s); the recipe does not declare \"option\": true for %s",
	    jx_repr(v, rep, sizeof(rep)), p->lead_at, p->name);
	return BF_ERR_INVALID;
}

static int
recipe_check_path(const struct recipe_param *p, const json_t *v, const char *root,
    const char *path, struct bf_diag *d)
{
	char rep[80];
	const char *why;
	int r;

	if (!json_is_string(v)) {
		bf_diag_set(d, path, "expected a string (an absolute path), got %s",
		    jx_type_name(v));
		r = BF_ERR_INVALID;
		goto out;
	}
	if (path_check_normal(json_string_value(v), json_string_length(v), &why) != 0) {
		bf_diag_set(d, path, "%s %s (a path must be absolute and normal: no \"..\", "
		    "\".\", \"//\" or trailing \"/\")", jx_repr(v, rep, sizeof(rep)), why);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (p->root != NULL)
		root = p->root;
	if (root != NULL && !path_is_under(json_string_value(v), root)) {
		bf_diag_set(d, path, "%s is not under %s", jx_repr(v, rep, sizeof(rep)), root);
		r = BF_ERR_INVALID;
		goto out;
	}
	r = 0;
out:
	return r;
}

int
recipe_check_value(const struct recipe_param *p, const json_t *v, const char *root,
    const char *path, struct bf_diag *d)
{
	char rep[80], list[BF_DIAG_MSG];
	regmatch_t m;
	const char *s;
	int64_t iv;
	double dv;
	size_t i, n;
	int r;

	switch (p->type) {
	case RECIPE_P_INT:
		if ((r = jx_as_int(v, p->imin, p->imax, &iv, path, d)) != 0)
			goto out;
		r = recipe_check_lead(p, v, iv < 0, path, d);
		goto out;
	case RECIPE_P_NUM:
		if ((r = jx_as_num(v, p->nmin, p->nmax, &dv, path, d)) != 0)
			goto out;
		/* -0.0 renders as "0" (recipe_append_value) */
		r = recipe_check_lead(p, v, dv < 0, path, d);
		goto out;
	case RECIPE_P_BOOL:
		if (!json_is_boolean(v)) {
			bf_diag_set(d, path, "expected true or false, got %s", jx_type_name(v));
			r = BF_ERR_INVALID;
			goto out;
		}
		break;
	case RECIPE_P_PATH:
		r = recipe_check_path(p, v, root, path, d);
		goto out;
	case RECIPE_P_STR:
		if (!json_is_string(v)) {
			bf_diag_set(d, path, "expected a string, got %s", jx_type_name(v));
			r = BF_ERR_INVALID;
			goto out;
		}
		n = json_string_length(v);
		s = json_string_value(v);
		if (n != strlen(s)) {
			bf_diag_set(d, path, "contains a NUL byte");
			r = BF_ERR_INVALID;
			goto out;
		}
		if (n > p->max_len) {
			bf_diag_set(d, path, "is %zu bytes long; at most %zu allowed", n, p->max_len);
			r = BF_ERR_TOOBIG;
			goto out;
		}
		/* rm_so/rm_eo: the anchors are in the compiled text, and this
		 * says the same thing again should they ever be lost */
		if (p->re_ok && (regexec(&p->re, s, 1, &m, 0) != 0 || m.rm_so != 0 ||
		    (size_t)m.rm_eo != n)) {
			bf_diag_set(d, path, "%s does not match the pattern ^(%s)$",
			    jx_repr(v, rep, sizeof(rep)), p->pattern);
			r = BF_ERR_INVALID;
			goto out;
		}
		/* empty is fine inside an element ("--opt={x}"), but an empty
		 * argument of its own means "here" to many programs */
		if (n == 0 && p->whole && !p->re_ok) {
			bf_diag_set(d, path, "is empty, and it would be a whole argument (%s); "
			    "the recipe gives no pattern that allows it", p->lead_at);
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((r = recipe_check_lead(p, v, s[0] == '-', path, d)) != 0)
			goto out;
		break;
	case RECIPE_P_ENUM:
		if (!json_is_string(v)) {
			bf_diag_set(d, path, "expected a string, got %s", jx_type_name(v));
			r = BF_ERR_INVALID;
			goto out;
		}
		/* strcmp stops at a NUL, so only a NUL-free value may match */
		s = json_string_value(v);
		for (i = 0; strlen(s) == json_string_length(v) && i < p->nvalues; i++)
			if (strcmp(s, p->values[i]) == 0) {
				r = 0;
				goto out;
			}
		list[0] = '\0';
		for (i = 0; i < p->nvalues; i++)
			recipe_join(list, sizeof(list), p->values[i], i);
		bf_diag_set(d, path, "%s is not one of %s", jx_repr(v, rep, sizeof(rep)), list);
		r = BF_ERR_INVALID;
		goto out;
	}
	r = 0;
out:
	return r;
}

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
static int
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
				goto out;
			s += 2;
			continue;
		}
		if (s[0] == '}') {
			bf_diag_set(d, path, "unmatched \"}\" at byte %zu (write \"}}\" for a "
			    "literal brace)", (size_t)(s - tmpl));
			r = BF_ERR_INVALID;
			goto out;
		}
		if (s[0] != '{') {
			for (e = s; *e != '\0' && *e != '{' && *e != '}'; e++)
				;
			if (out != NULL && (r = recipe_emit(out, s, (size_t)(e - s), path, d)) != 0)
				goto out;
			s = e;
			continue;
		}
		for (e = s + 1; *e != '\0' && *e != '}' && *e != '{'; e++)
			;
		if (*e != '}') {
			bf_diag_set(d, path, "unmatched \"{\" at byte %zu (write \"{{\" for a "
			    "literal brace)", (size_t)(s - tmpl));
			r = BF_ERR_INVALID;
			goto out;
		}
		n = (size_t)(e - s - 1);
		if (n == 0 || n > BF_MAX_NAME) {
			bf_diag_set(d, path, "slot {%.*s} names no parameter; parameters are %s",
			    (int)(n > BF_MAX_NAME ? BF_MAX_NAME : n), s + 1,
			    recipe_param_names(rc, names, sizeof(names)));
			r = BF_ERR_INVALID;
			goto out;
		}
		memcpy(name, s + 1, n);
		name[n] = '\0';
		if ((p = recipe_param(rc, name)) == NULL) {
			bf_diag_set(d, path, "slot {%s} names no parameter; parameters are %s",
			    name, recipe_param_names(rc, names, sizeof(names)));
			r = BF_ERR_INVALID;
			goto out;
		}
		if (out != NULL) {
			jx_path(vpath, sizeof(vpath), "values", name);
			if ((v = json_object_get(values, name)) == NULL) {
				bf_diag_set(d, path, "no value for parameter %s", name);
				r = BF_ERR_INVALID;
				goto out;
			}
			if ((r = recipe_check_value(p, v, NULL, vpath, d)) != 0)
				goto out;
			if ((r = recipe_append_value(out, v)) != 0) {
				if (r == BF_ERR_TOOBIG)
					bf_diag_set(d, path, "rendered element is over %d bytes",
					    BF_MAX_ARG);
				goto out;
			}
		}
		s = e + 1;
	}
	r = 0;
out:
	return r;
}

/* A malloc'd copy of an optional string field, "" or NULL when absent. */
static int
recipe_dup_opt(const json_t *obj, const char *key, size_t maxlen, const char *dflt, char **out,
    const char *path, struct bf_diag *d)
{
	const char *s = dflt;
	int r;

	if ((r = jx_str(obj, key, JX_OPTIONAL, maxlen, &s, path, d)) != 0)
		goto out;
	*out = NULL;
	if (s != NULL && (*out = strdup(s)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	return r;
}

static int
recipe_parse_enum_values(struct recipe_param *p, const json_t *spec, const char *path,
    struct bf_diag *d)
{
	char vp[BF_DIAG_FIELD], ep[BF_DIAG_FIELD], rep[80];
	const char *s;
	json_t *arr, *v;
	size_t i, j;
	int r;

	if ((r = jx_arr(spec, "values", JX_REQUIRED, 1, BF_MAX_AXIS_VALUES, &arr, path, d)) != 0)
		goto out;
	jx_path(vp, sizeof(vp), path, "values");
	if ((p->values = calloc(json_array_size(arr), sizeof(*p->values))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(arr, i, v) {
		jx_path_idx(ep, sizeof(ep), vp, i);
		if ((r = jx_as_str(v, BF_MAX_STR, &s, ep, d)) != 0)
			goto out;
		for (j = 0; j < p->nvalues; j++)
			if (strcmp(p->values[j], s) == 0) {
				bf_diag_set(d, ep, "%s repeats %s[%zu]", jx_repr(v, rep, sizeof(rep)),
				    vp, j);
				r = BF_ERR_INVALID;
				goto out;
			}
		if ((p->values[p->nvalues] = strdup(s)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		p->nvalues++;
	}
	r = 0;
out:
	return r;
}

/*
 * The pattern is compiled as ^(pattern)$; a ")" that closes nothing in the
 * pattern would close the wrapper's "(" instead ("a)|b" gives ^(a)|b)$,
 * which no longer anchors). Outside bracket expressions, unescaped.
 */
static int
recipe_pattern_balanced(const char *s)
{
	int depth = 0;

	for (; *s != '\0'; s++) {
		if (*s == '\\' && s[1] != '\0') {
			s++;
			continue;
		}
		if (*s == '[') {
			s++;
			if (*s == '^')
				s++;
			if (*s == ']')
				s++;
			/* [:alpha:], [=a=], [.a.] may hold a ']' of their own */
			while (*s != '\0' && *s != ']') {
				if (s[0] == '[' && (s[1] == ':' || s[1] == '=' || s[1] == '.')) {
					char c = s[1];

					for (s += 2; *s != '\0' && !(s[0] == c && s[1] == ']'); s++)
						;
					if (*s == '\0')
						return 0;
					s++;
				}
				s++;
			}
			if (*s == '\0')
				return 0;
			continue;
		}
		if (*s == '(')
			depth++;
		else if (*s == ')' && --depth < 0)
			return 0;
	}
	return depth == 0;
}

static int
recipe_parse_pattern(struct recipe_param *p, const json_t *spec, const char *path,
    struct bf_diag *d)
{
	char fp[BF_DIAG_FIELD], ebuf[128];
	const char *s = NULL, *why = NULL;
	struct buf b;
	int r, rr;

	buf_init(&b, BF_MAX_REGEX + 8);
	jx_path(fp, sizeof(fp), path, "pattern");
	if ((r = jx_str(spec, "pattern", JX_OPTIONAL, BF_MAX_REGEX, &s, path, d)) != 0 ||
	    s == NULL)
		goto out;
	if (s[0] == '\0') {
		bf_diag_set(d, fp, "is empty");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (parse_regex_check(s, &why) != 0) {
		bf_diag_set(d, fp, "%s", why);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (!recipe_pattern_balanced(s)) {
		bf_diag_set(d, fp, "has unbalanced parentheses or an unclosed bracket expression");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = buf_printf(&b, "^(%s)$", s)) != 0)
		goto out;
	if ((rr = regcomp(&p->re, b.data, REG_EXTENDED)) != 0) {
		regerror(rr, &p->re, ebuf, sizeof(ebuf));
		bf_diag_set(d, fp, "does not compile: %s", ebuf);
		r = BF_ERR_INVALID;
		goto out;
	}
	p->re_ok = 1;
	if ((p->pattern = strdup(s)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	buf_free(&b);
	return r;
}

static int
recipe_parse_param(struct recipe_param *p, const char *name, const json_t *spec,
    const char *path, struct bf_diag *d)
{
	char tp[BF_DIAG_FIELD], rep[80], list[BF_DIAG_MSG];
	const char *type, *root = NULL, *why = NULL;
	json_t *def;
	int64_t ml;
	size_t i;
	int r;

	if ((r = jx_check_name(name, path, d)) != 0)
		goto out;
	if ((p->name = strdup(name)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (!json_is_object(spec)) {
		bf_diag_set(d, path, "expected an object, got %s", jx_type_name(spec));
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = jx_str(spec, "type", JX_REQUIRED, BF_MAX_NAME, &type, path, d)) != 0)
		goto out;
	for (i = 0; i < RECIPE_NPTYPES; i++)
		if (strcmp(type, recipe_ptypes[i].name) == 0)
			break;
	if (i == RECIPE_NPTYPES) {
		list[0] = '\0';
		for (i = 0; i < RECIPE_NPTYPES; i++)
			recipe_join(list, sizeof(list), recipe_ptypes[i].name, i);
		bf_diag_set(d, jx_path(tp, sizeof(tp), path, "type"), "%s is not one of %s",
		    jx_repr(json_object_get(spec, "type"), rep, sizeof(rep)), list);
		r = BF_ERR_INVALID;
		goto out;
	}
	p->type = recipe_ptypes[i].type;
	if ((r = jx_only_keys(spec, recipe_ptypes[i].keys, path, d)) != 0)
		goto out;
	if ((r = recipe_dup_opt(spec, "description", RECIPE_DESC_MAX, NULL, &p->description,
	    path, d)) != 0)
		goto out;
	p->imin = INT64_MIN;
	p->imax = INT64_MAX;
	p->nmin = -DBL_MAX;
	p->nmax = DBL_MAX;
	p->max_len = BF_MAX_STR;
	switch (p->type) {
	case RECIPE_P_INT:
		if ((r = jx_int(spec, "min", JX_OPTIONAL, INT64_MIN, INT64_MAX, &p->imin,
		    path, d)) != 0 ||
		    (r = jx_int(spec, "max", JX_OPTIONAL, INT64_MIN, INT64_MAX, &p->imax,
		    path, d)) != 0)
			goto out;
		if (p->imin > p->imax) {
			bf_diag_set(d, path, "min %" PRId64 " is above max %" PRId64, p->imin,
			    p->imax);
			r = BF_ERR_INVALID;
			goto out;
		}
		break;
	case RECIPE_P_NUM:
		if ((r = jx_num(spec, "min", JX_OPTIONAL, -DBL_MAX, DBL_MAX, &p->nmin,
		    path, d)) != 0 ||
		    (r = jx_num(spec, "max", JX_OPTIONAL, -DBL_MAX, DBL_MAX, &p->nmax,
		    path, d)) != 0)
			goto out;
		if (p->nmin > p->nmax) {
			bf_diag_set(d, path, "min %.17g is above max %.17g", p->nmin, p->nmax);
			r = BF_ERR_INVALID;
			goto out;
		}
		break;
	case RECIPE_P_STR:
		ml = BF_MAX_STR;
		if ((r = jx_int(spec, "max_len", JX_OPTIONAL, 1, BF_MAX_STR, &ml, path, d)) != 0)
			goto out;
		p->max_len = (size_t)ml;
		if ((r = recipe_parse_pattern(p, spec, path, d)) != 0)
			goto out;
		break;
	case RECIPE_P_PATH:
		p->max_len = PATH_CHECK_MAX;
		if ((r = jx_str(spec, "root", JX_OPTIONAL, PATH_CHECK_MAX, &root, path, d)) != 0)
			goto out;
		if (root != NULL && path_check_normal(root, strlen(root), &why) != 0) {
			bf_diag_set(d, jx_path(tp, sizeof(tp), path, "root"), "\"%.200s\" %s",
			    root, why);
			r = BF_ERR_INVALID;
			goto out;
		}
		if (root != NULL && (p->root = strdup(root)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		break;
	case RECIPE_P_ENUM:
		if ((r = recipe_parse_enum_values(p, spec, path, d)) != 0)
			goto out;
		break;
	case RECIPE_P_BOOL:
		break;
	}
	if ((r = jx_bool(spec, "option", JX_OPTIONAL, &p->option, path, d)) != 0)
		goto out;
	/* a default makes every cell renderable without the job naming it */
	def = json_object_get(spec, "default");
	if (def == NULL) {
		bf_diag_set(d, jx_path(tp, sizeof(tp), path, "default"), "is required");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = recipe_check_value(p, def, NULL, jx_path(tp, sizeof(tp), path, "default"),
	    d)) != 0)
		goto out;
	p->def = json_incref(def);
	r = 0;
out:
	return r;
}

static int
recipe_parse_params(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char pp[BF_DIAG_FIELD];
	const char *k;
	json_t *params = NULL, *v;
	size_t n;
	int r;

	if ((r = jx_obj(doc, "params", JX_OPTIONAL, &params, "", d)) != 0)
		goto out;
	if (params == NULL) {
		r = 0;
		goto out;
	}
	n = json_object_size(params);
	if (n > BF_MAX_PARAMS) {
		bf_diag_set(d, "params", "has %zu parameters; at most %d allowed", n,
		    BF_MAX_PARAMS);
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if (n != 0 && (rc->params = calloc(n, sizeof(*rc->params))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_object_foreach(params, k, v) {
		/* counted first so that recipe_free() releases a half-built one */
		rc->nparams++;
		if ((r = recipe_parse_param(&rc->params[rc->nparams - 1], k, v,
		    jx_path(pp, sizeof(pp), "params", k), d)) != 0)
			goto out;
	}
	r = 0;
out:
	return r;
}

static int
recipe_parse_presets(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char pp[BF_DIAG_FIELD], vp[BF_DIAG_FIELD], names[BF_DIAG_MSG];
	const struct recipe_param *p;
	const char *pk, *k;
	json_t *presets = NULL, *preset, *v;
	int r;

	if ((r = jx_obj(doc, "presets", JX_OPTIONAL, &presets, "", d)) != 0)
		goto out;
	if (presets == NULL) {
		if ((rc->presets = json_object()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		r = 0;
		goto out;
	}
	json_object_foreach(presets, pk, preset) {
		jx_path(pp, sizeof(pp), "presets", pk);
		if ((r = jx_check_name(pk, pp, d)) != 0)
			goto out;
		if (!json_is_object(preset)) {
			bf_diag_set(d, pp, "expected an object, got %s", jx_type_name(preset));
			r = BF_ERR_INVALID;
			goto out;
		}
		json_object_foreach(preset, k, v) {
			jx_path(vp, sizeof(vp), pp, k);
			if ((p = recipe_param(rc, k)) == NULL) {
				bf_diag_set(d, vp, "names no parameter; parameters are %s",
				    recipe_param_names(rc, names, sizeof(names)));
				r = BF_ERR_INVALID;
				goto out;
			}
			if ((r = recipe_check_value(p, v, NULL, vp, d)) != 0)
				goto out;
		}
	}
	rc->presets = json_incref(presets);
	r = 0;
out:
	return r;
}

/*
 * Mark the parameters whose value begins the element tmpl (named ep in
 * messages): "{p}", "{p}.txt", or any slot with only slots before it, since
 * those before may be empty. recipe_scan() has checked the syntax.
 */
static void
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

/* Defaults again, now that the templates say which parameters lead. */
static int
recipe_check_defaults(struct recipe *rc, struct bf_diag *d)
{
	char pp[BF_DIAG_FIELD], tp[BF_DIAG_FIELD];
	size_t i;
	int r;

	for (i = 0; i < rc->nparams; i++) {
		jx_path(pp, sizeof(pp), "params", rc->params[i].name);
		if ((r = recipe_check_value(&rc->params[i], rc->params[i].def, NULL,
		    jx_path(tp, sizeof(tp), pp, "default"), d)) != 0)
			return r;
	}
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
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((c->argv = calloc(json_array_size(arr) + 1, sizeof(*c->argv))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(arr, i, v) {
		jx_path_idx(ep, sizeof(ep), path, i);
		if (!json_is_string(v)) {
			bf_diag_set(d, ep, "expected a string, got %s", jx_type_name(v));
			r = BF_ERR_INVALID;
			goto out;
		}
		n = json_string_length(v);
		if (n != strlen(json_string_value(v))) {
			bf_diag_set(d, ep, "contains a NUL byte");
			r = BF_ERR_INVALID;
			goto out;
		}
		if (n > BF_MAX_ARG) {
			bf_diag_set(d, ep, "is %zu bytes long; at most %d allowed", n, BF_MAX_ARG);
			r = BF_ERR_TOOBIG;
			goto out;
		}
		if (i == 0 && n == 0) {
			bf_diag_set(d, ep, "must not be empty");
			r = BF_ERR_INVALID;
			goto out;
		}
		if (i > 0 && strcmp(json_string_value(v), "@agent") == 0) {
			bf_diag_set(d, ep, "\"@agent\" is allowed only as %s[0]", path);
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((r = recipe_scan(rc, json_string_value(v), NULL, NULL, ep, d)) != 0)
			goto out;
		recipe_mark_leads(rc, json_string_value(v), ep);
		if ((c->argv[i] = strdup(json_string_value(v))) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		c->argc++;
	}
	r = 0;
out:
	return r;
}

static int
recipe_parse_command(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	struct recipe_cmd c = { NULL, 0 };
	json_t *arr;
	int r;

	if ((r = jx_arr(doc, "command", JX_REQUIRED, 1, BF_MAX_ARGV, &arr, "", d)) != 0)
		goto out;
	r = recipe_parse_argv(rc, arr, "command", &c, d);
	rc->command = c.argv;
	rc->ncommand = c.argc;
out:
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
		goto out;
	if ((*cp = calloc(json_array_size(arr) + 1, sizeof(**cp))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(arr, i, v) {
		jx_path_idx(ep, sizeof(ep), key, i);
		(*np)++;
		if ((r = recipe_parse_argv(rc, v, ep, &(*cp)[i], d)) != 0)
			goto out;
	}
	r = 0;
out:
	return r;
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
		goto out;
	if ((rc->services = calloc(json_array_size(arr) + 1, sizeof(*rc->services))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(arr, i, v) {
		struct recipe_service *s = &rc->services[i];

		jx_path_idx(sp, sizeof(sp), "services", i);
		rc->nservices++;
		s->ready_timeout_s = STEP_DEFAULT_READY_S;
		if (!json_is_object(v)) {
			bf_diag_set(d, sp, "expected an object, got %s", jx_type_name(v));
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((r = jx_only_keys(v, recipe_service_keys, sp, d)) != 0 ||
		    (r = jx_arr(v, "argv", JX_REQUIRED, 1, BF_MAX_ARGV, &argv, sp, d)) != 0 ||
		    (r = recipe_parse_argv(rc, argv, jx_path(fp, sizeof(fp), sp, "argv"), &s->cmd,
		    d)) != 0 ||
		    (r = jx_obj(v, "ready", JX_REQUIRED, &ready, sp, d)) != 0)
			goto out;
		jx_path(fp, sizeof(fp), sp, "ready");
		if ((r = jx_only_keys(ready, recipe_ready_keys, fp, d)) != 0 ||
		    (r = jx_str(ready, "tcp", JX_REQUIRED, BF_MAX_NAME * 2, &tcp, fp, d)) != 0 ||
		    (r = jx_int(ready, "timeout_s", JX_OPTIONAL, 1, STEP_MAX_READY_S, &s->ready_timeout_s, fp,
		    d)) != 0)
			goto out;
		jx_path(tp, sizeof(tp), fp, "tcp");
		if ((r = recipe_scan(rc, tcp, NULL, NULL, tp, d)) != 0)
			goto out;
		if ((s->ready_tcp = strdup(tcp)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	r = 0;
out:
	return r;
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
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = jx_only_keys(spec, recipe_metric_keys, path, d)) != 0)
		goto out;
	if ((r = jx_str(spec, "name", JX_REQUIRED, BF_MAX_NAME, &s, path, d)) != 0 ||
	    (r = jx_check_name(s, jx_path(fp, sizeof(fp), path, "name"), d)) != 0)
		goto out;
	for (i = 0; i < rc->nmetrics; i++)
		if (strcmp(rc->metrics[i].name, s) == 0) {
			bf_diag_set(d, fp, "\"%s\" is used by metrics[%zu] too", s, i);
			r = BF_ERR_INVALID;
			goto out;
		}
	if ((m->name = strdup(s)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = recipe_dup_opt(spec, "unit", RECIPE_UNIT_MAX, "", &m->unit, path, d)) != 0)
		goto out;
	/* no default: a silently wrong direction would invert every comparison */
	if ((r = jx_str(spec, "better", JX_REQUIRED, BF_MAX_NAME, &s, path, d)) != 0)
		goto out;
	if (strcmp(s, "higher") != 0 && strcmp(s, "lower") != 0) {
		bf_diag_set(d, jx_path(fp, sizeof(fp), path, "better"),
		    "%s is not one of higher, lower",
		    jx_repr(json_object_get(spec, "better"), rep, sizeof(rep)));
		r = BF_ERR_INVALID;
		goto out;
	}
	m->higher_better = strcmp(s, "higher") == 0;
	if ((r = jx_str(spec, "source", JX_REQUIRED, BF_MAX_NAME, &s, path, d)) != 0)
		goto out;
	for (i = 0; i < RECIPE_NSOURCES; i++)
		if (strcmp(s, recipe_sources[i].name) == 0)
			break;
	if (i == RECIPE_NSOURCES) {
		list[0] = '\0';
		for (i = 0; i < RECIPE_NSOURCES; i++)
			recipe_join(list, sizeof(list), recipe_sources[i].name, i);
		bf_diag_set(d, jx_path(fp, sizeof(fp), path, "source"), "%s is not one of %s",
		    jx_repr(json_object_get(spec, "source"), rep, sizeof(rep)), list);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((m->source = strdup(s)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	jx_path(fp, sizeof(fp), path, "regex");
	if (!recipe_sources[i].needs_regex) {
		if (json_object_get(spec, "regex") != NULL || json_object_get(spec, "csv") != NULL ||
		    json_object_get(spec, "json") != NULL) {
			bf_diag_set(d, fp, "only for source stdout or stderr");
			r = BF_ERR_INVALID;
			goto out;
		}
		r = 0;
		goto out;
	}
	if ((json_object_get(spec, "regex") != NULL) + (json_object_get(spec, "csv") != NULL) +
	    (json_object_get(spec, "json") != NULL) > 1) {
		bf_diag_set(d, path, "give one of regex, csv, json");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (json_object_get(spec, "csv") != NULL) {
		json_t *csv;

		jx_path(fp, sizeof(fp), path, "csv");
		if ((r = jx_obj(spec, "csv", JX_REQUIRED, &csv, path, d)) != 0 ||
		    (r = jx_only_keys(csv, recipe_csv_keys, fp, d)) != 0 ||
		    (r = jx_str(csv, "row_match", JX_REQUIRED, BF_MAX_REGEX, &s, fp, d)) != 0)
			goto out;
		if ((m->csv_row = strdup(s)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = jx_str(csv, "column", JX_REQUIRED, BF_MAX_REGEX, &s, fp, d)) != 0)
			goto out;
		if ((m->csv_column = strdup(s)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		r = 0;
		goto out;
	}
	if (json_object_get(spec, "json") != NULL) {
		if ((r = jx_str(spec, "json", JX_REQUIRED, BF_MAX_REGEX, &s, path, d)) != 0)
			goto out;
		if (s[0] == '.' || s[strlen(s) - 1] == '.' || strstr(s, "..") != NULL) {
			bf_diag_set(d, jx_path(fp, sizeof(fp), path, "json"),
			    "\"%.64s\" is not a path like a.b.c", s);
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((m->json_path = strdup(s)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		r = 0;
		goto out;
	}
	if ((r = jx_str(spec, "regex", JX_REQUIRED, BF_MAX_REGEX, &s, path, d)) != 0)
		goto out;
	if (parse_regex_check(s, &why) != 0) {
		bf_diag_set(d, fp, "%s", why);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((rr = regcomp(&re, s, REG_EXTENDED)) != 0) {
		regerror(rr, &re, ebuf, sizeof(ebuf));
		bf_diag_set(d, fp, "does not compile: %s", ebuf);
		r = BF_ERR_INVALID;
		goto out;
	}
	i = re.re_nsub;
	regfree(&re);
	if (i < 1) {
		bf_diag_set(d, fp, "needs a capture group (...) holding the number");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((m->regex = strdup(s)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	return r;
}

static int
recipe_parse_metrics(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char mp[BF_DIAG_FIELD];
	json_t *arr = NULL, *v;
	size_t i;
	int r;

	if ((r = jx_arr(doc, "metrics", JX_OPTIONAL, 1, BF_MAX_METRICS, &arr, "", d)) != 0)
		goto out;
	if (arr == NULL) {
		/* every iteration is timed, so wall time is always there to compare */
		if ((rc->metrics = calloc(1, sizeof(*rc->metrics))) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		rc->nmetrics = 1;
		rc->metrics[0].name = strdup("wall_s");
		rc->metrics[0].unit = strdup("s");
		rc->metrics[0].source = strdup("wall_s");
		rc->metrics[0].higher_better = 0;
		if (rc->metrics[0].name == NULL || rc->metrics[0].unit == NULL ||
		    rc->metrics[0].source == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		r = 0;
		goto out;
	}
	if ((rc->metrics = calloc(json_array_size(arr), sizeof(*rc->metrics))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_array_foreach(arr, i, v) {
		jx_path_idx(mp, sizeof(mp), "metrics", i);
		r = recipe_parse_metric(rc, &rc->metrics[i], v, mp, d);
		/* counted after the duplicate check, which looks at metrics[0..n) */
		rc->nmetrics++;
		if (r != 0)
			goto out;
	}
	r = 0;
out:
	return r;
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
	    (r = recipe_parse_metrics(rc, doc, d)) != 0)
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

int
recipe_metric_from_output(const struct recipe_metric *m)
{
	return m->regex != NULL || m->csv_row != NULL || m->json_path != NULL;
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

static const char *
recipe_ptype_name(enum recipe_ptype t)
{
	size_t i;

	for (i = 0; i < RECIPE_NPTYPES; i++)
		if (recipe_ptypes[i].type == t)
			return recipe_ptypes[i].name;
	return "unknown";
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
