/*
 * recipe-files.c: the parts of a recipe about what it runs rather than how:
 * "package", the Debian packages whose binaries it runs (the agent checks
 * each binary before anything runs and records the package's version), and
 * "files", the files written into the step's private working directory
 * (hpcc reads hpccinf.txt from its cwd; "workdir": true alone gives the
 * directory without files). File lines are templates like argv
 * elements; a rendered line may not hold a newline or a control byte, so a
 * parameter value can never add a line the recipe did not write.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "jx.h"
#include "recipe.h"
#include "recipe-int.h"
#include "step-schema.h"

static const char *const recipe_package_keys[] = { "debian", "binary", NULL };

/* Debian policy: lower case alphanumerics, + - . ; two or more; starts
 * with an alphanumeric. */
static int
recipe_debian_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n < 2 || n > STEP_MAX_PKG_NAME || !((s[0] >= 'a' && s[0] <= 'z') ||
	    (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '+' || s[i] == '-' || s[i] == '.'))
			return 0;
	return 1;
}

/* A file name in one directory: [A-Za-z0-9_][A-Za-z0-9_.+-]*, so never
 * ".", "..", a hidden file, an option, nor anything with a '/'. */
int
recipe_file_name_ok(const char *s, int plus)
{
	size_t i, n = strlen(s);

	if (n < 1 || n > STEP_MAX_FILE_NAME || s[0] == '.' || s[0] == '-' || s[0] == '+')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.' || s[i] == '-' ||
		    (plus && s[i] == '+')))
			return 0;
	return 1;
}

/* Is name argv[0] of the command, a setup or pre_iteration command or a
 * service? */
static int
recipe_runs(const struct recipe *rc, const char *name)
{
	size_t i;

	if (rc->ncommand > 0 && strcmp(rc->command[0], name) == 0)
		return 1;
	for (i = 0; i < rc->nsetup; i++)
		if (strcmp(rc->setup[i].argv[0], name) == 0)
			return 1;
	for (i = 0; i < rc->npre; i++)
		if (strcmp(rc->pre[i].argv[0], name) == 0)
			return 1;
	for (i = 0; i < rc->nservices; i++)
		if (strcmp(rc->services[i].cmd.argv[0], name) == 0)
			return 1;
	return 0;
}

static int
recipe_parse_package(struct recipe *rc, const json_t *v, const char *pp, struct bf_diag *d)
{
	struct recipe_package *pk = &rc->packages[rc->npackages];
	char fp[BF_DIAG_FIELD];
	const char *deb, *bin;
	int r;

	if (!json_is_object(v)) {
		bf_diag_set(d, pp, "expected an object {\"debian\": ..., \"binary\": ...}, got %s",
		    jx_type_name(v));
		return BF_ERR_INVALID;
	}
	if ((r = jx_only_keys(v, recipe_package_keys, pp, d)) != 0 ||
	    (r = jx_str(v, "debian", JX_REQUIRED, STEP_MAX_PKG_NAME, &deb, pp, d)) != 0 ||
	    (r = jx_str(v, "binary", JX_REQUIRED, STEP_MAX_PKG_NAME, &bin, pp, d)) != 0)
		return r;
	if (!recipe_debian_name_ok(deb)) {
		bf_diag_set(d, jx_path(fp, sizeof(fp), pp, "debian"), "\"%.64s\" is not a Debian "
		    "package name ([a-z0-9][a-z0-9+.-]+)", deb);
		return BF_ERR_INVALID;
	}
	if (!recipe_file_name_ok(bin, 1)) {
		bf_diag_set(d, jx_path(fp, sizeof(fp), pp, "binary"), "\"%.64s\" is not a command "
		    "name (no '/', [A-Za-z0-9_][A-Za-z0-9_.+-]*)", bin);
		return BF_ERR_INVALID;
	}
	if (!recipe_runs(rc, bin)) {
		bf_diag_set(d, jx_path(fp, sizeof(fp), pp, "binary"), "\"%.64s\" is not argv[0] of "
		    "the command, a setup or pre_iteration command or a service", bin);
		return BF_ERR_INVALID;
	}
	rc->npackages++;
	if ((pk->debian = strdup(deb)) == NULL || (pk->binary = strdup(bin)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/* "package": one object or an array of them; after the commands. */
int
recipe_parse_packages(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char pp[BF_DIAG_FIELD];
	json_t *v = json_object_get(doc, "package"), *e;
	size_t i, n;
	int r;

	if (v == NULL)
		return 0;
	n = json_is_array(v) ? json_array_size(v) : 1;
	if (n < 1 || n > STEP_MAX_PACKAGES) {
		bf_diag_set(d, "package", "%zu packages; 1 to %d allowed", n, STEP_MAX_PACKAGES);
		return BF_ERR_INVALID;
	}
	if ((rc->packages = calloc(n, sizeof(*rc->packages))) == NULL)
		return BF_ERR_ALLOC;
	if (!json_is_array(v))
		return recipe_parse_package(rc, v, "package", d);
	json_array_foreach(v, i, e) {
		jx_path_idx(pp, sizeof(pp), "package", i);
		if ((r = recipe_parse_package(rc, e, pp, d)) != 0)
			return r;
	}
	return 0;
}

/* "files": {"name": ["line template", ...]}; after the params. */
int
recipe_parse_files(struct recipe *rc, const json_t *doc, struct bf_diag *d)
{
	char fp[BF_DIAG_FIELD], lp[BF_DIAG_FIELD];
	struct recipe_file *f;
	const char *name;
	json_t *obj = NULL, *lines, *l;
	size_t i;
	int r;

	if ((r = jx_bool(doc, "workdir", JX_OPTIONAL, &rc->workdir, "", d)) != 0)
		return r;
	if (json_object_get(doc, "workdir") != NULL && !rc->workdir) {
		bf_diag_set(d, "workdir", "only true is meaningful (leave it out otherwise)");
		return BF_ERR_INVALID;
	}
	if ((r = jx_obj(doc, "files", JX_OPTIONAL, &obj, "", d)) != 0 || obj == NULL)
		return r;
	rc->workdir = 1;
	if (json_object_size(obj) < 1 || json_object_size(obj) > STEP_MAX_FILES) {
		bf_diag_set(d, "files", "%zu files; 1 to %d allowed", json_object_size(obj),
		    STEP_MAX_FILES);
		return BF_ERR_INVALID;
	}
	if ((rc->files = calloc(json_object_size(obj), sizeof(*rc->files))) == NULL)
		return BF_ERR_ALLOC;
	json_object_foreach(obj, name, lines) {
		jx_path(fp, sizeof(fp), "files", name);
		if (!recipe_file_name_ok(name, 0)) {
			bf_diag_set(d, "files", "\"%.64s\" is not a file name ([A-Za-z0-9_]"
			    "[A-Za-z0-9_.-]*, at most %d bytes)", name, STEP_MAX_FILE_NAME);
			return BF_ERR_INVALID;
		}
		if (!json_is_array(lines) || json_array_size(lines) > STEP_MAX_FILE_LINES) {
			bf_diag_set(d, fp, "expected an array of at most %d line templates",
			    STEP_MAX_FILE_LINES);
			return BF_ERR_INVALID;
		}
		f = &rc->files[rc->nfiles++];
		if ((f->name = strdup(name)) == NULL ||
		    (f->lines = calloc(json_array_size(lines) + 1, sizeof(*f->lines))) == NULL)
			return BF_ERR_ALLOC;
		json_array_foreach(lines, i, l) {
			jx_path_idx(lp, sizeof(lp), fp, i);
			if (!json_is_string(l) || json_string_length(l) > BF_MAX_ARG ||
			    strlen(json_string_value(l)) != json_string_length(l)) {
				bf_diag_set(d, lp, "expected a string of at most %d bytes without NUL",
				    BF_MAX_ARG);
				return BF_ERR_INVALID;
			}
			if ((r = recipe_scan(rc, json_string_value(l), NULL, NULL, lp, d)) != 0)
				return r;
			if ((f->lines[i] = strdup(json_string_value(l))) == NULL)
				return BF_ERR_ALLOC;
			f->nlines++;
		}
	}
	return 0;
}

const struct recipe_file *
recipe_file(const struct recipe *rc, const char *name)
{
	size_t i;

	for (i = 0; i < rc->nfiles; i++)
		if (strcmp(rc->files[i].name, name) == 0)
			return &rc->files[i];
	return NULL;
}

void
recipe_files_clear(struct recipe *rc)
{
	size_t i, j;

	for (i = 0; i < rc->npackages; i++) {
		free(rc->packages[i].debian);
		free(rc->packages[i].binary);
	}
	free(rc->packages);
	for (i = 0; i < rc->nfiles; i++) {
		for (j = 0; j < rc->files[i].nlines; j++)
			free(rc->files[i].lines[j]);
		free(rc->files[i].lines);
		free(rc->files[i].name);
	}
	free(rc->files);
	rc->packages = NULL;
	rc->files = NULL;
	rc->npackages = rc->nfiles = 0;
}

/* Render file f for values into b: each line, then "\n". */
int
recipe_render_file(const struct recipe *rc, const struct recipe_file *f, const json_t *values,
    struct buf *b, struct bf_diag *d)
{
	char fp[BF_DIAG_FIELD], lp[BF_DIAG_FIELD];
	size_t i, j, start;
	int r;

	jx_path(fp, sizeof(fp), "files", f->name);
	for (i = 0; i < f->nlines; i++) {
		jx_path_idx(lp, sizeof(lp), fp, i);
		start = b->len;
		if ((r = recipe_scan(rc, f->lines[i], values, b, lp, d)) != 0)
			return r;
		for (j = start; j < b->len; j++)
			if ((unsigned char)b->data[j] < 0x20 && b->data[j] != '\t') {
				bf_diag_set(d, lp, "a value puts control byte 0x%02x in the line",
				    (unsigned char)b->data[j]);
				return BF_ERR_INVALID;
			}
		if ((r = buf_puts(b, "\n")) != 0) {
			bf_diag_set(d, fp, "longer than %d bytes", STEP_MAX_FILE_TEXT);
			return r == BF_ERR_TOOBIG ? BF_ERR_INVALID : r;
		}
	}
	return 0;
}

/* "packages" and "files" of the step (only when the recipe has them). */
int
recipe_files_step_json(const struct recipe *rc, const json_t *values, json_t *step,
    struct bf_diag *d)
{
	json_t *arr = NULL, *o;
	struct buf b;
	size_t i;
	int r;

	buf_init(&b, STEP_MAX_FILE_TEXT);
	if (rc->npackages > 0) {
		if ((arr = json_array()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		for (i = 0; i < rc->npackages; i++) {
			o = json_pack("{s:s,s:s}", STEP_PACKAGE_DEBIAN, rc->packages[i].debian,
			    STEP_PACKAGE_BINARY, rc->packages[i].binary);
			if (o == NULL || json_array_append_new(arr, o) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		}
		r = json_object_set_new(step, STEP_FIELD_PACKAGES, arr);
		arr = NULL;
		if (r != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	if (rc->workdir) {
		if ((arr = json_array()) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		for (i = 0; i < rc->nfiles; i++) {
			buf_reset(&b);
			if ((r = recipe_render_file(rc, &rc->files[i], values, &b, d)) != 0)
				goto out;
			o = json_pack("{s:s,s:s%}", STEP_FILE_NAME, rc->files[i].name,
			    STEP_FILE_TEXT, b.data != NULL ? b.data : "", b.len);
			if (o == NULL || json_array_append_new(arr, o) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		}
		r = json_object_set_new(step, STEP_FIELD_FILES, arr);
		arr = NULL;
		if (r != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	r = 0;
out:
	json_decref(arr);
	buf_free(&b);
	return r;
}

/* "package" (always an array) and "files" as written, for recipe_to_json. */
int
recipe_files_to_json(const struct recipe *rc, json_t *o)
{
	json_t *arr, *e;
	size_t i;

	if (rc->npackages > 0) {
		if ((arr = json_array()) == NULL || json_object_set_new(o, "package", arr) != 0)
			return BF_ERR_ALLOC;
		for (i = 0; i < rc->npackages; i++) {
			e = json_pack("{s:s,s:s}", "debian", rc->packages[i].debian, "binary",
			    rc->packages[i].binary);
			if (e == NULL || json_array_append_new(arr, e) != 0)
				return BF_ERR_ALLOC;
		}
	}
	if (rc->nfiles > 0 && json_object_set_new(o, "files",
	    json_deep_copy(json_object_get(rc->json, "files"))) != 0)
		return BF_ERR_ALLOC;
	if (rc->workdir && json_object_set_new(o, "workdir", json_true()) != 0)
		return BF_ERR_ALLOC;
	return 0;
}
