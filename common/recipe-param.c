/*
 * recipe-param.c: a recipe's parameters: the types (int, number, string
 * with pattern, enum, bool, path), the keys each may carry, presets and
 * defaults (and defaults that follow a knob, "from_knob"), and the check of
 * a value against its parameter, including the
 * refusal of a value that would read as an option where it leads an argv
 * element.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jx.h"
#include "caps.h"
#include "knob.h"
#include "parse.h"
#include "path.h"
#include "recipe.h"
#include "recipe-int.h"

/* One row per parameter type: its name and the keys it may carry. */
struct recipe_ptype_row {
	const char *name;
	enum recipe_ptype type;
	const char *const keys[10];
};

static const struct recipe_ptype_row recipe_ptypes[] = {
	{ .name = "int", .type = RECIPE_P_INT,
	  .keys = { "type", "min", "max", "default", "description", "option", "from_knob", NULL } },
	{ .name = "number", .type = RECIPE_P_NUM,
	  .keys = { "type", "min", "max", "default", "description", "option", "from_knob", NULL } },
	{ .name = "string", .type = RECIPE_P_STR,
	  .keys = { "type", "max_len", "pattern", "option", "default", "description", "from_knob", NULL } },
	{ .name = "enum", .type = RECIPE_P_ENUM,
	  .keys = { "type", "values", "default", "description", "from_knob", NULL } },
	{ .name = "bool", .type = RECIPE_P_BOOL, .keys = { "type", "default", "description", "from_knob", NULL } },
	{ .name = "path", .type = RECIPE_P_PATH,
	  .keys = { "type", "root", "default", "description", "from_knob", NULL } },
};
#define RECIPE_NPTYPES	(sizeof(recipe_ptypes) / sizeof(recipe_ptypes[0]))

void
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
	free(p->from_knob);
	json_decref(p->from_map);
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

	if (!json_is_string(v)) {
		bf_diag_set(d, path, "expected a string (an absolute path), got %s",
		    jx_type_name(v));
		return BF_ERR_INVALID;
	}
	if (path_check_normal(json_string_value(v), json_string_length(v), &why) != 0) {
		bf_diag_set(d, path, "%s %s (a path must be absolute and normal: no \"..\", "
		    "\".\", \"//\" or trailing \"/\")", jx_repr(v, rep, sizeof(rep)), why);
		return BF_ERR_INVALID;
	}
	if (p->root != NULL)
		root = p->root;
	if (root != NULL && !path_is_under(json_string_value(v), root)) {
		bf_diag_set(d, path, "%s is not under %s", jx_repr(v, rep, sizeof(rep)), root);
		return BF_ERR_INVALID;
	}
	return 0;
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
			return r;
		return recipe_check_lead(p, v, iv < 0, path, d);
	case RECIPE_P_NUM:
		if ((r = jx_as_num(v, p->nmin, p->nmax, &dv, path, d)) != 0)
			return r;
		/* -0.0 renders as "0" (recipe_append_value) */
		return recipe_check_lead(p, v, dv < 0, path, d);
	case RECIPE_P_BOOL:
		if (!json_is_boolean(v)) {
			bf_diag_set(d, path, "expected true or false, got %s", jx_type_name(v));
			return BF_ERR_INVALID;
		}
		break;
	case RECIPE_P_PATH:
		return recipe_check_path(p, v, root, path, d);
	case RECIPE_P_STR:
		if (!json_is_string(v)) {
			bf_diag_set(d, path, "expected a string, got %s", jx_type_name(v));
			return BF_ERR_INVALID;
		}
		n = json_string_length(v);
		s = json_string_value(v);
		if (n != strlen(s)) {
			bf_diag_set(d, path, "contains a NUL byte");
			return BF_ERR_INVALID;
		}
		if (n > p->max_len) {
			bf_diag_set(d, path, "is %zu bytes long; at most %zu allowed", n, p->max_len);
			return BF_ERR_TOOBIG;
		}
		/* rm_so/rm_eo: the anchors are in the compiled text, and this
		 * says the same thing again should they ever be lost */
		if (p->re_ok && (regexec(&p->re, s, 1, &m, 0) != 0 || m.rm_so != 0 ||
		    (size_t)m.rm_eo != n)) {
			bf_diag_set(d, path, "%s does not match the pattern ^(%s)$",
			    jx_repr(v, rep, sizeof(rep)), p->pattern);
			return BF_ERR_INVALID;
		}
		/* empty is fine inside an element ("--opt={x}"), but an empty
		 * argument of its own means "here" to many programs */
		if (n == 0 && p->whole && !p->re_ok) {
			bf_diag_set(d, path, "is empty, and it would be a whole argument (%s); "
			    "the recipe gives no pattern that allows it", p->lead_at);
			return BF_ERR_INVALID;
		}
		if ((r = recipe_check_lead(p, v, s[0] == '-', path, d)) != 0)
			return r;
		break;
	case RECIPE_P_ENUM:
		if (!json_is_string(v)) {
			bf_diag_set(d, path, "expected a string, got %s", jx_type_name(v));
			return BF_ERR_INVALID;
		}
		/* strcmp stops at a NUL, so only a NUL-free value may match */
		s = json_string_value(v);
		for (i = 0; strlen(s) == json_string_length(v) && i < p->nvalues; i++)
			if (strcmp(s, p->values[i]) == 0)
				return 0;
		list[0] = '\0';
		for (i = 0; i < p->nvalues; i++)
			recipe_join(list, sizeof(list), p->values[i], i);
		bf_diag_set(d, path, "%s is not one of %s", jx_repr(v, rep, sizeof(rep)), list);
		return BF_ERR_INVALID;
	}
	return 0;
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
		return r;
	jx_path(vp, sizeof(vp), path, "values");
	if ((p->values = calloc(json_array_size(arr), sizeof(*p->values))) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(arr, i, v) {
		jx_path_idx(ep, sizeof(ep), vp, i);
		if ((r = jx_as_str(v, BF_MAX_STR, &s, ep, d)) != 0)
			return r;
		for (j = 0; j < p->nvalues; j++)
			if (strcmp(p->values[j], s) == 0) {
				bf_diag_set(d, ep, "%s repeats %s[%zu]", jx_repr(v, rep, sizeof(rep)),
				    vp, j);
				return BF_ERR_INVALID;
			}
		if ((p->values[p->nvalues] = strdup(s)) == NULL)
			return BF_ERR_ALLOC;
		p->nvalues++;
	}
	return 0;
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

/* A knob value as the text knob_check takes: a NUL-free string or an
 * integer; -1 for anything else. */
static int
recipe_knob_text(const json_t *v, char *out, size_t outsz)
{
	if (json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v) &&
	    json_string_length(v) < outsz) {
		snprintf(out, outsz, "%s", json_string_value(v));
		return 0;
	}
	if (json_is_integer(v)) {
		snprintf(out, outsz, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return 0;
	}
	return -1;
}

const json_t *
recipe_param_from_knob(const struct recipe_param *p, const json_t *knobs)
{
	char text[KNOB_MAX_VALUE];
	const json_t *kv, *v;

	if (p->from_knob == NULL || !json_is_object(knobs) ||
	    (kv = json_object_get(knobs, p->from_knob)) == NULL)
		return NULL;
	if (recipe_knob_text(kv, text, sizeof(text)) == 0 &&
	    (v = json_object_get(p->from_map, text)) != NULL)
		return v;
	return json_object_get(p->from_map, "*");
}

/* "from_knob": {"knob": K, "map": {value: param value, "*": ...}}. */
static int
recipe_parse_from_knob(struct recipe_param *p, const json_t *spec, const char *path,
    struct bf_diag *d)
{
	static const char *const keys[] = { "knob", "map", NULL };
	char fp[BF_DIAG_FIELD], mp[BF_DIAG_FIELD], kp[BF_DIAG_FIELD], why[KNOB_MAX_WHY];
	const char *knob, *k;
	json_t *fk = NULL, *map = NULL, *v;
	int r;

	if ((r = jx_obj(spec, "from_knob", JX_OPTIONAL, &fk, path, d)) != 0 || fk == NULL)
		return r;
	jx_path(fp, sizeof(fp), path, "from_knob");
	if ((r = jx_only_keys(fk, keys, fp, d)) != 0 ||
	    (r = jx_str(fk, "knob", JX_REQUIRED, BF_MAX_NAME, &knob, fp, d)) != 0 ||
	    (r = jx_obj(fk, "map", JX_REQUIRED, &map, fp, d)) != 0)
		return r;
	if (knob_find(knob) == NULL) {
		bf_diag_set(d, jx_path(kp, sizeof(kp), fp, "knob"), "\"%.64s\" is not a knob",
		    knob);
		return BF_ERR_INVALID;
	}
	jx_path(mp, sizeof(mp), fp, "map");
	if (json_object_size(map) == 0 || json_object_size(map) > BF_MAX_AXIS_VALUES) {
		bf_diag_set(d, mp, "has %zu keys; 1..%d allowed", json_object_size(map),
		    BF_MAX_AXIS_VALUES);
		return BF_ERR_INVALID;
	}
	json_object_foreach(map, k, v) {
		jx_path(kp, sizeof(kp), mp, k);
		if (strcmp(k, "*") != 0 && knob_check(knob, k, why, sizeof(why)) != 0) {
			bf_diag_set(d, kp, "%s", why);
			return BF_ERR_INVALID;
		}
		if ((r = recipe_check_value(p, v, NULL, kp, d)) != 0)
			return r;
	}
	if ((p->from_knob = strdup(knob)) == NULL)
		return BF_ERR_ALLOC;
	p->from_map = json_incref(map);
	return 0;
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
		return r;
	if ((p->name = strdup(name)) == NULL)
		return BF_ERR_ALLOC;
	if (!json_is_object(spec)) {
		bf_diag_set(d, path, "expected an object, got %s", jx_type_name(spec));
		return BF_ERR_INVALID;
	}
	if ((r = jx_str(spec, "type", JX_REQUIRED, BF_MAX_NAME, &type, path, d)) != 0)
		return r;
	for (i = 0; i < RECIPE_NPTYPES; i++)
		if (strcmp(type, recipe_ptypes[i].name) == 0)
			break;
	if (i == RECIPE_NPTYPES) {
		list[0] = '\0';
		for (i = 0; i < RECIPE_NPTYPES; i++)
			recipe_join(list, sizeof(list), recipe_ptypes[i].name, i);
		bf_diag_set(d, jx_path(tp, sizeof(tp), path, "type"), "%s is not one of %s",
		    jx_repr(json_object_get(spec, "type"), rep, sizeof(rep)), list);
		return BF_ERR_INVALID;
	}
	p->type = recipe_ptypes[i].type;
	if ((r = jx_only_keys(spec, recipe_ptypes[i].keys, path, d)) != 0)
		return r;
	if ((r = recipe_dup_opt(spec, "description", RECIPE_DESC_MAX, NULL, &p->description,
	    path, d)) != 0)
		return r;
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
			return r;
		if (p->imin > p->imax) {
			bf_diag_set(d, path, "min %" PRId64 " is above max %" PRId64, p->imin,
			    p->imax);
			return BF_ERR_INVALID;
		}
		break;
	case RECIPE_P_NUM:
		if ((r = jx_num(spec, "min", JX_OPTIONAL, -DBL_MAX, DBL_MAX, &p->nmin,
		    path, d)) != 0 ||
		    (r = jx_num(spec, "max", JX_OPTIONAL, -DBL_MAX, DBL_MAX, &p->nmax,
		    path, d)) != 0)
			return r;
		if (p->nmin > p->nmax) {
			bf_diag_set(d, path, "min %.17g is above max %.17g", p->nmin, p->nmax);
			return BF_ERR_INVALID;
		}
		break;
	case RECIPE_P_STR:
		ml = BF_MAX_STR;
		if ((r = jx_int(spec, "max_len", JX_OPTIONAL, 1, BF_MAX_STR, &ml, path, d)) != 0)
			return r;
		p->max_len = (size_t)ml;
		if ((r = recipe_parse_pattern(p, spec, path, d)) != 0)
			return r;
		break;
	case RECIPE_P_PATH:
		p->max_len = PATH_CHECK_MAX;
		if ((r = jx_str(spec, "root", JX_OPTIONAL, PATH_CHECK_MAX, &root, path, d)) != 0)
			return r;
		if (root != NULL && path_check_normal(root, strlen(root), &why) != 0) {
			bf_diag_set(d, jx_path(tp, sizeof(tp), path, "root"), "\"%.200s\" %s",
			    root, why);
			return BF_ERR_INVALID;
		}
		if (root != NULL && (p->root = strdup(root)) == NULL)
			return BF_ERR_ALLOC;
		break;
	case RECIPE_P_ENUM:
		if ((r = recipe_parse_enum_values(p, spec, path, d)) != 0)
			return r;
		break;
	case RECIPE_P_BOOL:
		break;
	}
	if ((r = jx_bool(spec, "option", JX_OPTIONAL, &p->option, path, d)) != 0)
		return r;
	/* a default makes every cell renderable without the job naming it */
	def = json_object_get(spec, "default");
	if (def == NULL) {
		bf_diag_set(d, jx_path(tp, sizeof(tp), path, "default"), "is required");
		return BF_ERR_INVALID;
	}
	if ((r = recipe_check_value(p, def, NULL, jx_path(tp, sizeof(tp), path, "default"),
	    d)) != 0)
		return r;
	p->def = json_incref(def);
	return recipe_parse_from_knob(p, spec, path, d);
}

int
recipe_parse_params(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char pp[BF_DIAG_FIELD];
	const char *k;
	json_t *params = NULL, *v;
	size_t n;
	int r;

	if ((r = jx_obj(doc, "params", JX_OPTIONAL, &params, "", d)) != 0)
		return r;
	if (params == NULL)
		return 0;
	n = json_object_size(params);
	if (n > BF_MAX_PARAMS) {
		bf_diag_set(d, "params", "has %zu parameters; at most %d allowed", n,
		    BF_MAX_PARAMS);
		return BF_ERR_TOOBIG;
	}
	if (n != 0 && (rc->params = calloc(n, sizeof(*rc->params))) == NULL)
		return BF_ERR_ALLOC;
	json_object_foreach(params, k, v) {
		/* counted first so that recipe_free() releases a half-built one */
		rc->nparams++;
		if ((r = recipe_parse_param(&rc->params[rc->nparams - 1], k, v,
		    jx_path(pp, sizeof(pp), "params", k), d)) != 0)
			return r;
	}
	return 0;
}

int
recipe_parse_presets(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char pp[BF_DIAG_FIELD], vp[BF_DIAG_FIELD], names[BF_DIAG_MSG];
	const struct recipe_param *p;
	const char *pk, *k;
	json_t *presets = NULL, *preset, *v;
	int r;

	if ((r = jx_obj(doc, "presets", JX_OPTIONAL, &presets, "", d)) != 0)
		return r;
	if (presets == NULL) {
		if ((rc->presets = json_object()) == NULL)
			return BF_ERR_ALLOC;
		return 0;
	}
	json_object_foreach(presets, pk, preset) {
		jx_path(pp, sizeof(pp), "presets", pk);
		if ((r = jx_check_name(pk, pp, d)) != 0)
			return r;
		if (!json_is_object(preset)) {
			bf_diag_set(d, pp, "expected an object, got %s", jx_type_name(preset));
			return BF_ERR_INVALID;
		}
		json_object_foreach(preset, k, v) {
			jx_path(vp, sizeof(vp), pp, k);
			if ((p = recipe_param(rc, k)) == NULL) {
				bf_diag_set(d, vp, "names no parameter; parameters are %s",
				    recipe_param_names(rc, names, sizeof(names)));
				return BF_ERR_INVALID;
			}
			if ((r = recipe_check_value(p, v, NULL, vp, d)) != 0)
				return r;
		}
	}
	rc->presets = json_incref(presets);
	return 0;
}

/* Defaults again, now that the templates say which parameters lead. */
int
recipe_check_defaults(struct recipe *rc, struct bf_diag *d)
{
	char pp[BF_DIAG_FIELD], tp[BF_DIAG_FIELD], fp[BF_DIAG_FIELD], mp[BF_DIAG_FIELD];
	const char *k;
	json_t *v;
	size_t i;
	int r;

	for (i = 0; i < rc->nparams; i++) {
		jx_path(pp, sizeof(pp), "params", rc->params[i].name);
		if ((r = recipe_check_value(&rc->params[i], rc->params[i].def, NULL,
		    jx_path(tp, sizeof(tp), pp, "default"), d)) != 0)
			return r;
		/* a mapped value is a default too: it may not lead with "-" */
		jx_path(fp, sizeof(fp), pp, "from_knob");
		jx_path(mp, sizeof(mp), fp, "map");
		if (rc->params[i].from_map != NULL)
			json_object_foreach(rc->params[i].from_map, k, v)
				if ((r = recipe_check_value(&rc->params[i], v, NULL,
				    jx_path(tp, sizeof(tp), mp, k), d)) != 0)
					return r;
	}
	return 0;
}

const char *
recipe_ptype_name(enum recipe_ptype t)
{
	size_t i;

	for (i = 0; i < RECIPE_NPTYPES; i++)
		if (recipe_ptypes[i].type == t)
			return recipe_ptypes[i].name;
	return "unknown";
}
