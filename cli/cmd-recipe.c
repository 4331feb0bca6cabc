/*
 * cmd-recipe.c: "recipes [NAME]": the recipes the coordinator knows, as
 * a table, or one recipe's parameters, presets and metrics; "recipes
 * import FILE": install a recipe from elsewhere (admin), the explicit act
 * that lets another lab's recipe run here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "cli.h"
#include "err.h"
#include "jx.h"
#include "table.h"

#define RECIPE_MAX_ITEMS	100000

/* The names in v: an object's keys, or an array's strings or .name members,
 * joined with ", " into buf. */
static const char *
recipe_names(const json_t *v, char *buf, size_t bufsz)
{
	const char *key, *s;
	json_t *x;
	size_t i, len = 0;
	int n;

	buf[0] = '\0';
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, x) {
			n = snprintf(buf + len, bufsz - len, "%s%s", len > 0 ? ", " : "", key);
			if (n < 0 || (size_t)n >= bufsz - len)
				break;
			len += (size_t)n;
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) {
			s = json_is_string(x) ? json_string_value(x) :
			    json_string_value(json_object_get(x, "name"));
			if (s == NULL)
				s = "?";
			n = snprintf(buf + len, bufsz - len, "%s%s", len > 0 ? ", " : "", s);
			if (n < 0 || (size_t)n >= bufsz - len)
				break;
			len += (size_t)n;
		}
	}
	return len > 0 ? buf : "-";
}

static const struct table_col recipe_cols[] = {
	{ .head = "NAME", .max = 24, .align = TABLE_LEFT },
	{ .head = "PARAMS", .max = 40, .align = TABLE_LEFT },
	{ .head = "PRESETS", .max = 20, .align = TABLE_LEFT },
	{ .head = "METRICS", .max = 40, .align = TABLE_LEFT },
	{ .head = "DESCRIPTION", .max = 60, .align = TABLE_LEFT },
};
#define RECIPE_NCOLS	(sizeof(recipe_cols) / sizeof(recipe_cols[0]))

/* "  key  value" lines for the members of an object, or the elements of
 * an array, each value as compact JSON. */
static void
recipe_print_section(const char *title, const json_t *v)
{
	const char *key;
	char buf[1024], *k;
	json_t *x, *wrap;
	size_t i;

	if (!json_is_object(v) && !json_is_array(v))
		return;
	printf("%s:\n", title);
	if ((wrap = json_object()) == NULL)
		return;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, x) {
			json_object_set(wrap, "v", x);
			k = table_sanitize(key, 40);
			printf("  %-20s ", k != NULL ? k : "?");
			free(k);
			cli_print_line(stdout, NULL, cli_cell(wrap, "v", buf, sizeof(buf)));
		}
	} else {
		json_array_foreach(v, i, x) {
			json_object_set(wrap, "v", x);
			cli_print_line(stdout, "  ", cli_cell(wrap, "v", buf, sizeof(buf)));
		}
	}
	json_decref(wrap);
}

static int
recipe_exec(struct cli *c, const struct cmd_args *a)
{
	static const char *const fields[] = { "name", "description", NULL };
	const char *name = a->argc > 0 ? a->argv[0] : NULL;
	struct http_resp resp;
	struct table t;
	struct bf_diag d;
	json_t *doc = NULL, *list, *rc, *found = NULL;
	char b[RECIPE_NCOLS][512], *dump = NULL;
	const char *row[RECIPE_NCOLS];
	size_t i;
	int r;

	http_resp_init(&resp);
	table_init(&t, recipe_cols, RECIPE_NCOLS);
	if ((r = cli_call_json(c, "GET", "/recipes", NULL, 0, &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json && name == NULL) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	if (jx_arr(doc, "recipes", JX_REQUIRED, 0, RECIPE_MAX_ITEMS, &list, "", &d) != 0) {
		cli_err("malformed answer from %s: %s", resp.url, d.msg);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	json_array_foreach(list, i, rc) {
		if (name != NULL) {
			if (json_is_string(json_object_get(rc, "name")) &&
			    strcmp(json_string_value(json_object_get(rc, "name")), name) == 0)
				found = rc;
			continue;
		}
		row[0] = cli_cell(rc, "name", b[0], sizeof(b[0]));
		row[1] = recipe_names(json_object_get(rc, "params"), b[1], sizeof(b[1]));
		row[2] = recipe_names(json_object_get(rc, "presets"), b[2], sizeof(b[2]));
		row[3] = recipe_names(json_object_get(rc, "metrics"), b[3], sizeof(b[3]));
		row[4] = cli_cell(rc, "description", b[4], sizeof(b[4]));
		if ((r = table_add_row(&t, row)) != 0) {
			cli_err("%s", bf_err_str(r));
			r = CLI_EXIT_FAIL;
			goto out;
		}
	}
	if (name == NULL) {
		r = table_print(&t, stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	if (found == NULL) {
		dump = table_sanitize(name, 80);
		cli_err("no recipe named \"%s\"", dump != NULL ? dump : "?");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if (c->json) {
		if ((dump = json_dumps(found, JSON_INDENT(2))) != NULL)
			puts(dump);
		r = dump != NULL ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	cli_print_fields(found, fields);
	recipe_print_section("params", json_object_get(found, "params"));
	recipe_print_section("presets", json_object_get(found, "presets"));
	recipe_print_section("metrics", json_object_get(found, "metrics"));
	r = CLI_EXIT_OK;
out:
	free(dump);
	table_free(&t);
	json_decref(doc);
	http_resp_free(&resp);
	return r;
}

const struct cmd_entry cmd_recipes_entry = {
	"recipes", NULL, "[NAME]", "list recipes, or show one",
	NULL, NULL, 0, 1, recipe_exec
};

static int
recipe_import_exec(struct cli *c, const struct cmd_args *a)
{
	const char *path = a->argv[0];
	struct http_resp resp;
	struct bf_diag d;
	struct buf file;
	json_t *doc = NULL, *ans = NULL;
	char chunk[65536], b[3][256], line[900];
	size_t n;
	FILE *f;
	int r;

	http_resp_init(&resp);
	buf_init(&file, BF_MAX_API_BODY);
	bf_diag_clear(&d);
	if ((f = fopen(path, "rb")) == NULL) {
		cli_err("%s: cannot open", path);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	r = 0;
	while (r == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		r = buf_append(&file, chunk, n);
	if (r == 0 && ferror(f))
		r = BF_ERR_IO;
	fclose(f);
	if (r != 0) {
		cli_err("%s: %s", path, r == BF_ERR_IO ? "read error" : "larger than the API's "
		    "body limit");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	/* Checked here too, so that a typo is named before the network. */
	if (jx_loads(file.data != NULL ? file.data : "", file.len, BF_MAX_API_BODY, &doc,
	    &d) != 0) {
		cli_err("%s: %s", path, d.msg);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if ((r = cli_call_json(c, "POST", "/recipes", file.data, file.len, &resp, &ans)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	snprintf(line, sizeof(line), "recipe %s (sha256 %s): %s",
	    cli_cell(ans, "name", b[0], sizeof(b[0])), cli_cell(ans, "sha256", b[1], sizeof(b[1])),
	    cli_cell(ans, "installed", b[2], sizeof(b[2])));
	cli_print_line(stdout, NULL, line);
	r = CLI_EXIT_OK;
out:
	json_decref(doc);
	json_decref(ans);
	buf_free(&file);
	http_resp_free(&resp);
	return r;
}

const struct cmd_entry cmd_recipes_import_entry = {
	"recipes", "import", "FILE", "install a recipe from elsewhere so it may run (admin)",
	"Recipes are code: a reproduction reruns only a recipe installed here (the\n"
	"recipe directory, or imported with this command) whose canonical sha256 is\n"
	"the bundle's. The import is recorded in the audit log.\n",
	NULL, 1, 1, recipe_import_exec
};
