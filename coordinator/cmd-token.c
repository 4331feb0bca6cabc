/*
 * cmd-token.c: "benchfleetd token create|list|revoke", run against the store
 * file directly (the daemon may be running: SQLite in WAL mode takes both).
 * A new token is printed once, on stdout alone, so that scripts can take it
 * with $(...); it cannot be shown again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api-view.h"
#include "auth.h"
#include "parse.h"
#include "store.h"

struct cmd_token_args {
	const char *store;
	const char *role;
	const char *name;
	int json;
	int npos;
	const char *pos[2];
};

struct cmd_token {
	const char *name;
	const char *usage;
	int (*fn)(struct store *st, const struct cmd_token_args *a);
	int npos;	/* positional arguments */
};

static int cmd_token_create(struct store *st, const struct cmd_token_args *a);
static int cmd_token_list(struct store *st, const struct cmd_token_args *a);
static int cmd_token_revoke(struct store *st, const struct cmd_token_args *a);

static const struct cmd_token cmd_token_table[] = {
	{ .name = "create", .usage = "create --role viewer|submitter|admin [--name NAME]",
	  .fn = cmd_token_create, .npos = 0 },
	{ .name = "list", .usage = "list [--json]", .fn = cmd_token_list, .npos = 0 },
	{ .name = "revoke", .usage = "revoke ID", .fn = cmd_token_revoke, .npos = 1 },
};
#define CMD_TOKEN_N (sizeof(cmd_token_table) / sizeof(cmd_token_table[0]))

static void
cmd_token_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage:\n");
	for (i = 0; i < CMD_TOKEN_N; i++)
		fprintf(f, "  benchfleetd token %s [--store FILE]\n", cmd_token_table[i].usage);
	fprintf(f, "The store defaults to var/benchfleet.db. A token is shown once, when "
	    "created.\n");
}

static int
cmd_token_create(struct store *st, const struct cmd_token_args *a)
{
	char tok[AUTH_TOKEN_MAX];
	enum auth_role role;
	struct bf_diag d;
	int64_t id = 0;
	int r;

	bf_diag_clear(&d);
	if (a->role == NULL) {
		fprintf(stderr, "benchfleetd token create: --role is required (viewer, "
		    "submitter or admin)\n");
		return 2;
	}
	if (auth_role_parse(a->role, &role, &d) != 0) {
		fprintf(stderr, "benchfleetd token create: %s\n", d.msg);
		return 2;
	}
	if ((r = auth_token_create(st, a->name, role, tok, sizeof(tok), &id, &d)) != 0) {
		fprintf(stderr, "benchfleetd token create: %s\n",
		    d.msg[0] != '\0' ? d.msg : bf_err_str(r));
		return 1;
	}
	printf("%s\n", tok);
	fflush(stdout);
	explicit_bzero(tok, sizeof(tok));
	fprintf(stderr, "benchfleetd: token %lld (%s%s%s%s) created; it is shown only this "
	    "once\n", (long long)id, auth_role_name(role), a->name ? ", \"" : "",
	    a->name ? a->name : "", a->name ? "\"" : "");
	return 0;
}

static void
fmt_time(const json_t *v, char *buf, size_t bufsz)
{
	struct tm tm;
	time_t t;

	if (!json_is_integer(v)) {
		snprintf(buf, bufsz, "-");
		return;
	}
	t = (time_t)json_integer_value(v);
	if (gmtime_r(&t, &tm) == NULL || strftime(buf, bufsz, "%Y-%m-%d %H:%M:%SZ", &tm) == 0)
		snprintf(buf, bufsz, "%lld", (long long)t);
}

static int
cmd_token_list(struct store *st, const struct cmd_token_args *a)
{
	char created[32], used[32], revoked[32];
	struct store_token_row *rows = NULL;
	json_t *j = NULL, *arr, *t;
	size_t i, nrows = 0;
	int r;

	if ((r = store_tokens_list(st, &rows, &nrows)) != 0) {
		fprintf(stderr, "benchfleetd token list: %s\n", bf_err_str(r));
		return 1;
	}
	j = api_view_tokens(rows, nrows);
	store_tokens_free(rows, nrows);
	if (j == NULL) {
		fprintf(stderr, "benchfleetd token list: %s\n", bf_err_str(BF_ERR_ALLOC));
		return 1;
	}
	if (a->json) {
		json_dumpf(j, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(j);
		return 0;
	}
	arr = json_object_get(j, "tokens");
	printf("%-6s %-24s %-10s %-21s %-21s %s\n", "ID", "NAME", "ROLE", "CREATED",
	    "LAST USED", "REVOKED");
	json_array_foreach(arr, i, t) {
		const json_t *n = json_object_get(t, "name");

		fmt_time(json_object_get(t, "created_at"), created, sizeof(created));
		fmt_time(json_object_get(t, "last_used"), used, sizeof(used));
		fmt_time(json_object_get(t, "revoked_at"), revoked, sizeof(revoked));
		printf("%-6lld %-24s %-10s %-21s %-21s %s\n",
		    (long long)json_integer_value(json_object_get(t, "id")),
		    json_is_string(n) ? json_string_value(n) : "-",
		    json_string_value(json_object_get(t, "role")), created, used, revoked);
	}
	json_decref(j);
	return 0;
}

static int
cmd_token_revoke(struct store *st, const struct cmd_token_args *a)
{
	int64_t id;
	int r;

	if (parse_i64(a->pos[0], 1, INT64_MAX, &id) != 0) {
		fprintf(stderr, "benchfleetd token revoke: \"%s\" is not a token id (see "
		    "benchfleetd token list)\n", a->pos[0]);
		return 2;
	}
	if ((r = store_token_revoke(st, id)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			fprintf(stderr, "benchfleetd token revoke: no token %lld\n", (long long)id);
		else if (r == BF_ERR_STATE)
			fprintf(stderr, "benchfleetd token revoke: token %lld is already revoked\n",
			    (long long)id);
		else
			fprintf(stderr, "benchfleetd token revoke: %s\n", bf_err_str(r));
		return 1;
	}
	fprintf(stderr, "benchfleetd: token %lld revoked\n", (long long)id);
	return 0;
}

int
cmd_token_main(int argc, char **argv)
{
	struct cmd_token_args a;
	const struct cmd_token *c = NULL;
	struct store *st = NULL;
	struct bf_diag d;
	size_t k;
	int i, ret;

	memset(&a, 0, sizeof(a));
	a.store = "var/benchfleet.db";
	bf_diag_clear(&d);
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		cmd_token_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (k = 0; k < CMD_TOKEN_N; k++)
		if (strcmp(argv[1], cmd_token_table[k].name) == 0)
			c = &cmd_token_table[k];
	if (c == NULL) {
		fprintf(stderr, "benchfleetd token: unknown command \"%s\"\n", argv[1]);
		cmd_token_usage(stderr);
		return 2;
	}
	for (i = 2; i < argc; i++) {
		const char **slot = NULL;

		if (strcmp(argv[i], "--store") == 0)
			slot = &a.store;
		else if (strcmp(argv[i], "--role") == 0)
			slot = &a.role;
		else if (strcmp(argv[i], "--name") == 0)
			slot = &a.name;
		else if (strcmp(argv[i], "--json") == 0) {
			a.json = 1;
			continue;
		} else if (argv[i][0] != '-' && a.npos < 2) {
			a.pos[a.npos++] = argv[i];
			continue;
		} else {
			fprintf(stderr, "benchfleetd token %s: unexpected \"%s\"\n", c->name,
			    argv[i]);
			cmd_token_usage(stderr);
			return 2;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "benchfleetd token %s: %s needs a value\n", c->name,
			    argv[i]);
			return 2;
		}
		*slot = argv[++i];
	}
	if (a.npos != c->npos) {
		fprintf(stderr, "usage: benchfleetd token %s [--store FILE]\n", c->usage);
		return 2;
	}
	if (store_open(a.store, &st, &d) != 0) {
		fprintf(stderr, "benchfleetd token: %s\n", d.msg);
		return 1;
	}
	ret = c->fn(st, &a);
	store_close(st);
	return ret;
}
