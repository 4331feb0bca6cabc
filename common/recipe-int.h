/*
 * recipe-int.h: what the files of the recipe module share, and no one
 * else: recipe.c (loading and validating a document), recipe-param.c
 * (parameter types and their values), recipe-expect.c (expectations) and
 * recipe-render.c (templates into argv and the agent's step). The public interface is recipe.h.
 */
#ifndef BF_RECIPE_INT_H
#define BF_RECIPE_INT_H

#include <stddef.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "recipe.h"

#define RECIPE_DESC_MAX	BF_MAX_STR
#define RECIPE_UNIT_MAX	BF_MAX_NAME

/* recipe.c */
/* Append s to a ", "-separated list in buf (s is item i); strlen-bounded,
 * cut (never overrun) when bufsz is small. */
void recipe_join(char *buf, size_t bufsz, const char *s, size_t i);
/* A malloc'd copy of an optional string field, dflt (or NULL) when absent;
 * the caller frees *out. */
int recipe_dup_opt(const json_t *obj, const char *key, size_t maxlen, const char *dflt,
    char **out, const char *path, struct bf_diag *d);

/* recipe-param.c */
void recipe_param_clear(struct recipe_param *p);
/* "params" of doc into rc->params; "presets" into rc->presets. */
int recipe_parse_params(struct recipe *rc, const json_t *doc, struct bf_diag *d);
int recipe_parse_presets(struct recipe *rc, const json_t *doc, struct bf_diag *d);
/* Each default checked again once the templates said which params lead. */
int recipe_check_defaults(struct recipe *rc, struct bf_diag *d);
const char *recipe_ptype_name(enum recipe_ptype t);

/* recipe-expect.c */
/* "expect" of doc into rc->expect (after the params and metrics). */
int recipe_parse_expect(struct recipe *rc, const json_t *doc, struct bf_diag *d);
void recipe_expect_clear(struct recipe_expect *e);

/* recipe-files.c */
/* "package" (after the commands) and "files" (after the params). */
int recipe_parse_packages(struct recipe *rc, const json_t *doc, struct bf_diag *d);
int recipe_parse_files(struct recipe *rc, const json_t *doc, struct bf_diag *d);
void recipe_files_clear(struct recipe *rc);
/* A name in one directory (plus: '+' allowed too, as in a command name). */
int recipe_file_name_ok(const char *s, int plus);
/* The step's "packages" and "files". */
int recipe_files_step_json(const struct recipe *rc, const json_t *values, json_t *step,
    struct bf_diag *d);
/* "package" and "files" of recipe_to_json. */
int recipe_files_to_json(const struct recipe *rc, json_t *o);

/* recipe-render.c */
/* Scan template tmpl: with values and out, render it into out; with both
 * NULL (at load), only check its {param} slots against rc. */
int recipe_scan(const struct recipe *rc, const char *tmpl, const json_t *values,
    struct buf *out, const char *path, struct bf_diag *d);
/* Mark the parameters that begin element tmpl (ep names it). */
void recipe_mark_leads(struct recipe *rc, const char *tmpl, const char *ep);

#endif
