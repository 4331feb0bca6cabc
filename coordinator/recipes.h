/*
 * recipes.h: the coordinator's catalogue of recipes, loaded once at start-up
 * from a directory of *.json files (subdirectories are not recipes; the
 * experiments in recipes/experiments/ are jobs). Read-only afterwards, so
 * it needs no lock.
 */
#ifndef BF_RECIPES_H
#define BF_RECIPES_H

#include <stddef.h>
#include <jansson.h>

#include "err.h"
#include "recipe.h"

struct recipes;
struct store;

/* Every file must load: a broken recipe stops the daemon with its name and
 * the field at fault, rather than vanishing from the catalogue. */
int recipes_load_dir(const char *dir, struct recipes **out, struct bf_diag *d);
void recipes_free(struct recipes *rs);
/* Borrowed; NULL when unknown. */
const struct recipe *recipes_get(const struct recipes *rs, const char *name);
size_t recipes_count(const struct recipes *rs);
/* Comma-separated names, for messages. */
const char *recipes_names(const struct recipes *rs, char *buf, size_t bufsz);
/* {"recipes":[recipe_to_json()...]} New reference. */
json_t *recipes_list_json(const struct recipes *rs);

/*
 * Installed recipes: those of the directory loaded at start and those an
 * admin imported into the store (benchfleet recipes import), each known by
 * the sha256 of its canonical JSON (bundle_sha256). Only installed recipes
 * run, whatever a job row or a bundle carries.
 */
/* The canonical sha256 of a recipe document. */
int recipes_sha256(const json_t *doc, char hex[65]);
/* The directory's recipe of that hash, or NULL (borrowed). */
const struct recipe *recipes_by_sha(const struct recipes *rs, const char *hex);
/* 1 when the recipe document doc is installed (rs or imported into st),
 * 0 when not, BF_ERR_* when the store failed. st may be NULL. */
int recipes_installed(const struct recipes *rs, struct store *st, const json_t *doc);
/*
 * The installed recipe of hash hex, loaded: *out freed with recipe_free().
 * BF_ERR_NOTFOUND when none is.
 */
int recipes_lookup_sha(const struct recipes *rs, struct store *st, const char *hex,
    struct recipe **out, struct bf_diag *d);
/* The document of the installed recipe called name (the directory's, else
 * the newest imported), a new reference; BF_ERR_NOTFOUND. */
int recipes_lookup_name(const struct recipes *rs, struct store *st, const char *name,
    json_t **out);

#endif
