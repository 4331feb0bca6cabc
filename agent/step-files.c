/*
 * step-files.c: the step's "packages" (Debian packages whose binaries the
 * step runs: checked on PATH before anything runs, versions recorded in
 * the snapshot) and "files" (written into a private workdir, workdir.c).
 * Names are checked here again, whatever the coordinator checked: a file
 * name is one path component that cannot climb out of the workdir.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ajson.h"
#include "err.h"
#include "step.h"

int
step_name_ok(const char *s, size_t max, int plus)
{
	size_t i, n = strlen(s);

	if (n < 1 || n > max || s[0] == '.' || s[0] == '-' || s[0] == '+')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.' || s[i] == '-' ||
		    (plus && s[i] == '+')))
			return 0;
	return 1;
}

/* Member key of object e as a string checked by step_name_ok, dup'd. */
static int
step_files_name(const struct ajson *e, const char *key, const char *ef, size_t max, int plus,
    char **out, struct bf_diag *d)
{
	const struct ajson *v = ajson_get(e, key);

	if (v == NULL || v->type != AJSON_STR) {
		bf_diag_set(d, ef, "%s: %s", key, v == NULL ? "missing" : "not a string");
		return BF_ERR_INVALID;
	}
	if (!step_name_ok(v->str, max, plus)) {
		bf_diag_set(d, ef, "%s: \"%.64s\" is not a plain name", key, v->str);
		return BF_ERR_INVALID;
	}
	if ((*out = strdup(v->str)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/* e has exactly the keys a and b. */
static int
step_files_keys(const struct ajson *e, const char *a, const char *b, const char *ef,
    struct bf_diag *d)
{
	size_t i;

	if (e->type != AJSON_OBJ) {
		bf_diag_set(d, ef, "%s where an object is expected", ajson_type_name(e->type));
		return BF_ERR_INVALID;
	}
	for (i = 0; i < e->n; i++)
		if (strcmp(e->items[i]->key, a) != 0 && strcmp(e->items[i]->key, b) != 0) {
			bf_diag_set(d, ef, "unknown field \"%.64s\" (expected %s, %s)",
			    e->items[i]->key, a, b);
			return BF_ERR_INVALID;
		}
	return 0;
}

int
step_f_packages(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	char ef[32];
	size_t i;
	int r;

	if (v->type != AJSON_ARR || v->n < 1 || v->n > STEP_MAX_PACKAGES) {
		bf_diag_set(d, STEP_FIELD_PACKAGES, "expected an array of 1 to %d packages",
		    STEP_MAX_PACKAGES);
		return BF_ERR_INVALID;
	}
	if ((st->packages = calloc(v->n, sizeof(*st->packages))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < v->n; i++) {
		snprintf(ef, sizeof(ef), "packages[%zu]", i);
		st->npackages++;
		if ((r = step_files_keys(v->items[i], STEP_PACKAGE_DEBIAN, STEP_PACKAGE_BINARY, ef,
		    d)) != 0 ||
		    (r = step_files_name(v->items[i], STEP_PACKAGE_DEBIAN, ef, STEP_MAX_PKG_NAME, 1,
		    &st->packages[i].debian, d)) != 0 ||
		    (r = step_files_name(v->items[i], STEP_PACKAGE_BINARY, ef, STEP_MAX_PKG_NAME, 1,
		    &st->packages[i].binary, d)) != 0)
			return r;
	}
	return 0;
}

int
step_f_files(const struct ajson *v, struct step *st, struct bf_diag *d)
{
	const struct ajson *t;
	char ef[32];
	size_t i, j;
	int r;

	if (v->type != AJSON_ARR || v->n > STEP_MAX_FILES) {
		bf_diag_set(d, STEP_FIELD_FILES, "expected an array of at most %d files",
		    STEP_MAX_FILES);
		return BF_ERR_INVALID;
	}
	st->workdir = 1;
	if ((st->files = calloc(v->n + 1, sizeof(*st->files))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < v->n; i++) {
		snprintf(ef, sizeof(ef), "files[%zu]", i);
		st->nfiles++;
		if ((r = step_files_keys(v->items[i], STEP_FILE_NAME, STEP_FILE_TEXT, ef, d)) != 0 ||
		    (r = step_files_name(v->items[i], STEP_FILE_NAME, ef, STEP_MAX_FILE_NAME, 0,
		    &st->files[i].name, d)) != 0)
			return r;
		for (j = 0; j < i; j++)
			if (strcmp(st->files[j].name, st->files[i].name) == 0) {
				bf_diag_set(d, ef, "\"%s\" is files[%zu] too", st->files[i].name, j);
				return BF_ERR_INVALID;
			}
		t = ajson_get(v->items[i], STEP_FILE_TEXT);
		if (t == NULL || t->type != AJSON_STR || t->len > STEP_MAX_FILE_TEXT) {
			bf_diag_set(d, ef, "text: expected a string of at most %d bytes",
			    STEP_MAX_FILE_TEXT);
			return BF_ERR_INVALID;
		}
		if ((st->files[i].text = strdup(t->str)) == NULL)
			return BF_ERR_ALLOC;
		st->files[i].len = t->len;
	}
	return 0;
}

int
step_files_check(const struct step *st, struct bf_diag *d)
{
	char ef[48];
	size_t i;

	if (st->workdir && st->cwd != NULL) {
		bf_diag_set(d, STEP_FIELD_FILES, "a step with files runs in its own workdir; "
		    "it cannot have a cwd too");
		return BF_ERR_INVALID;
	}
	for (i = 0; i < st->nmetrics; i++)
		if (st->metrics[i].source == STEP_FILE && !st->workdir) {
			snprintf(ef, sizeof(ef), "metrics[%zu].file", i);
			bf_diag_set(d, ef, "source file needs a workdir: the step has no files");
			return BF_ERR_INVALID;
		}
	return 0;
}

void
step_files_free(struct step *st)
{
	size_t i;

	for (i = 0; i < st->npackages; i++) {
		free(st->packages[i].debian);
		free(st->packages[i].binary);
	}
	free(st->packages);
	for (i = 0; i < st->nfiles; i++) {
		free(st->files[i].name);
		free(st->files[i].text);
	}
	free(st->files);
}
