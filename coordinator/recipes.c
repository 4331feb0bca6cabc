/*
 * recipes.c: load the recipe catalogue from a directory.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipes.h"

struct recipes {
	struct recipe **v;
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
