/*
 * recipes.c: load the recipe catalogue from a directory.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "recipes.h"
#include "store.h"

struct recipes {
	struct recipe **v;
	char (*sha)[65];	/* canonical sha256 of v[i]->json */
	size_t n;
};

static int
cmp_name(const void *a, const void *b)
{
	const struct recipe *const *ra = a, *const *rb = b;

	return strcmp((*ra)->name, (*rb)->name);
}

int
recipes_load_dir(const char *dir, struct recipes **out, struct bf_diag *d)
{
	struct recipes *rs = NULL;
	struct recipe *r = NULL, **nv;
	struct dirent *de;
	DIR *dh = NULL;
	char path[4096];
	size_t i, len;
	int ret;

	*out = NULL;
	if ((rs = calloc(1, sizeof(*rs))) == NULL) {
		ret = BF_ERR_ALLOC;
		goto out;
	}
	if ((dh = opendir(dir)) == NULL) {
		bf_diag_set(d, NULL, "recipes directory %s: %s", dir, strerror(errno));
		ret = BF_ERR_IO;
		goto out;
	}
	while ((de = readdir(dh)) != NULL) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 ||
		    de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    sizeof(path)) {
			bf_diag_set(d, NULL, "recipe path too long: %s/%s", dir, de->d_name);
			ret = BF_ERR_TOOBIG;
			goto out;
		}
		if ((ret = recipe_load_file(path, &r, d)) != 0) {
			char msg[BF_DIAG_MSG];

			snprintf(msg, sizeof(msg), "%s", d ? d->msg : "");
			bf_diag_set(d, NULL, "recipe %s: %s", path, msg);
			goto out;
		}
		for (i = 0; i < rs->n; i++) {
			if (strcmp(rs->v[i]->name, r->name) == 0) {
				bf_diag_set(d, NULL, "recipe %s: name \"%s\" is used twice",
				    path, r->name);
				ret = BF_ERR_EXISTS;
				goto out;
			}
		}
		if ((nv = realloc(rs->v, (rs->n + 1) * sizeof(*nv))) == NULL) {
			ret = BF_ERR_ALLOC;
			goto out;
		}
		rs->v = nv;
		rs->v[rs->n++] = r;
		r = NULL;
	}
	qsort(rs->v, rs->n, sizeof(*rs->v), cmp_name);
	if ((rs->sha = calloc(rs->n ? rs->n : 1, sizeof(*rs->sha))) == NULL) {
		ret = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < rs->n; i++)
		if ((ret = recipes_sha256(rs->v[i]->json, rs->sha[i])) != 0)
			goto out;
	*out = rs;
	rs = NULL;
	ret = 0;
out:
	if (dh != NULL)
		closedir(dh);
	recipe_free(r);
	recipes_free(rs);
	return ret;
}

void
recipes_free(struct recipes *rs)
{
	size_t i;

	if (rs == NULL)
		return;
	for (i = 0; i < rs->n; i++)
		recipe_free(rs->v[i]);
	free(rs->v);
	free(rs->sha);
	free(rs);
}

const struct recipe *
recipes_get(const struct recipes *rs, const char *name)
{
	size_t i;

	for (i = 0; rs != NULL && name != NULL && i < rs->n; i++)
		if (strcmp(rs->v[i]->name, name) == 0)
			return rs->v[i];
	return NULL;
}

size_t
recipes_count(const struct recipes *rs)
{
	return rs == NULL ? 0 : rs->n;
}

const char *
recipes_names(const struct recipes *rs, char *buf, size_t bufsz)
{
	size_t i, used = 0;
	int n;

	if (bufsz == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; rs != NULL && i < rs->n; i++) {
		n = snprintf(buf + used, bufsz - used, "%s%s", i ? ", " : "", rs->v[i]->name);
		if (n < 0 || (size_t)n >= bufsz - used)
			break;
		used += (size_t)n;
	}
	return buf;
}

json_t *
recipes_list_json(const struct recipes *rs)
{
	json_t *arr, *o;
	size_t i;

	if ((arr = json_array()) == NULL)
		return NULL;
	for (i = 0; rs != NULL && i < rs->n; i++) {
		if ((o = recipe_to_json(rs->v[i])) == NULL ||
		    json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return json_pack("{s:o}", "recipes", arr);
}

int
recipes_sha256(const json_t *doc, char hex[65])
{
	return bundle_sha256(doc, hex);
}

const struct recipe *
recipes_by_sha(const struct recipes *rs, const char *hex)
{
	size_t i;

	for (i = 0; rs != NULL && rs->sha != NULL && hex != NULL && i < rs->n; i++)
		if (strcmp(rs->sha[i], hex) == 0)
			return rs->v[i];
	return NULL;
}

int
recipes_installed(const struct recipes *rs, struct store *st, const json_t *doc)
{
	char hex[65], *text = NULL;
	int r;

	if (!json_is_object(doc))
		return 0;
	if ((r = recipes_sha256(doc, hex)) != 0)
		return r;
	if (recipes_by_sha(rs, hex) != NULL)
		return 1;
	if (st == NULL)
		return 0;
	r = store_recipe_imported(st, hex, &text);
	free(text);
	return r == 0 ? 1 : r == BF_ERR_NOTFOUND ? 0 : r;
}

int
recipes_lookup_sha(const struct recipes *rs, struct store *st, const char *hex,
    struct recipe **out, struct bf_diag *d)
{
	const struct recipe *dir;
	json_t *doc = NULL;
	char *text = NULL;
	int r;

	*out = NULL;
	if ((dir = recipes_by_sha(rs, hex)) != NULL) {
		doc = json_deep_copy(dir->json);
	} else {
		if (st == NULL)
			return BF_ERR_NOTFOUND;
		if ((r = store_recipe_imported(st, hex, &text)) != 0)
			goto out;
		/* Written by us after recipe_from_json accepted it. */
		doc = json_loads(text, 0, NULL);
	}
	if (doc == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = recipe_from_json(doc, out, d);
out:
	json_decref(doc);
	free(text);
	return r;
}

int
recipes_lookup_name(const struct recipes *rs, struct store *st, const char *name,
    json_t **out)
{
	const struct recipe *dir;
	char *text = NULL;
	int r;

	*out = NULL;
	if ((dir = recipes_get(rs, name)) != NULL) {
		*out = json_deep_copy(dir->json);
		return *out != NULL ? 0 : BF_ERR_ALLOC;
	}
	if (st == NULL)
		return BF_ERR_NOTFOUND;
	if ((r = store_recipe_imported_by_name(st, name, &text)) != 0)
		return r;
	*out = json_loads(text, 0, NULL);
	free(text);
	return *out != NULL ? 0 : BF_ERR_ALLOC;
}
