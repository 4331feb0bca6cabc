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

#endif
