/*
 * cmd-labs.c: the keyring of trusted labs (labs, labs trust, labs untrust)
 * and the audit log (audit). A lab's key comes from a file (the JSON of
 * its GET /api/v1/lab, or the base64 public key as the first word) or from
 * a URL the coordinator fetches; either way the fingerprint is printed so
 * that it can be checked with the other lab by another channel.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "cli.h"
#include "err.h"
#include "jx.h"
#include "table.h"

#define LABS_MAX_KEYFILE	(16 * 1024)
#define LABS_MAX_ITEMS		100000
#define LABS_PUB_B64_LEN	44

/* The public key text of a key file into out: "public_key" of a JSON
 * object, else the file's first whitespace-separated word. */
static int
labs_read_keyfile(const char *path, char *out, size_t outsz)
{
	char buf[LABS_MAX_KEYFILE + 1];
	json_t *doc = NULL;
	size_t n, i = 0, j;
	FILE *f;
	int r;

	if ((f = fopen(path, "rb")) == NULL) {
		cli_err("%s: cannot open", path);
		return BF_ERR_IO;
	}
	n = fread(buf, 1, sizeof(buf), f);
	r = ferror(f) ? BF_ERR_IO : 0;
	fclose(f);
	if (r != 0 || n == 0 || n > LABS_MAX_KEYFILE) {
		cli_err("%s: %s", path, r != 0 ? "read error" : n == 0 ? "is empty" :
		    "larger than 16 KiB");
		return BF_ERR_INVALID;
	}
	buf[n] = '\0';
	if ((doc = json_loads(buf, 0, NULL)) != NULL && json_is_object(doc)) {
		const char *k = json_string_value(json_object_get(doc, "public_key"));

		if (k == NULL || strlen(k) > LABS_PUB_B64_LEN) {
			cli_err("%s: a JSON file without a \"public_key\" string", path);
			json_decref(doc);
			return BF_ERR_INVALID;
		}
		snprintf(out, outsz, "%s", k);
		json_decref(doc);
		return 0;
	}
	json_decref(doc);
	while (i < n && isspace((unsigned char)buf[i]))
		i++;
	for (j = i; j < n && !isspace((unsigned char)buf[j]); j++)
		;
	if (j == i || j - i > LABS_PUB_B64_LEN) {
		cli_err("%s: expected a base64 ed25519 public key, or the JSON of a GET /api/v1/lab",
		    path);
		return BF_ERR_INVALID;
	}
	snprintf(out, outsz, "%.*s", (int)(j - i), buf + i);
	return 0;
}

static int
labs_trust(struct cli *c, const struct cmd_args *a)
{
	const char *name = a->argv[0], *src = a->argv[1];
	struct http_resp resp;
	json_t *req = NULL, *ans = NULL;
	char key[LABS_PUB_B64_LEN + 1], *body = NULL, b[3][256];
	int r;

	http_resp_init(&resp);
	if ((req = json_pack("{s:s}", "name", name)) == NULL)
		goto oom;
	if (strncmp(src, "http://", 7) == 0 || strncmp(src, "https://", 8) == 0) {
		if (json_object_set_new(req, "url", json_string(src)) != 0)
			goto oom;
	} else {
		if (labs_read_keyfile(src, key, sizeof(key)) != 0) {
			r = CLI_EXIT_FAIL;
			goto out;
		}
		if (json_object_set_new(req, "public_key", json_string(key)) != 0)
			goto oom;
	}
	if (a->opt[0] != NULL && json_object_set_new(req, "fingerprint",
	    json_string(a->opt[0])) != 0)
		goto oom;
	if ((body = json_dumps(req, JSON_COMPACT)) == NULL)
		goto oom;
	if ((r = cli_call_json(c, "POST", "/labs", body, strlen(body), &resp, &ans)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json)
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	else {
		char line[900];

		snprintf(line, sizeof(line), "trusted lab %s: key %s (%s)",
		    cli_cell(ans, "name", b[0], sizeof(b[0])),
		    cli_cell(ans, "fingerprint", b[1], sizeof(b[1])),
		    cli_cell(ans, "public_key", b[2], sizeof(b[2])));
		cli_print_line(stdout, NULL, line);
		r = CLI_EXIT_OK;
	}
	goto out;
oom:
	cli_err("out of memory");
	r = CLI_EXIT_FAIL;
out:
	free(body);
	json_decref(req);
	json_decref(ans);
	http_resp_free(&resp);
	return r;
}

static int
labs_untrust(struct cli *c, const struct cmd_args *a)
{
	struct http_resp resp;
	char path[128];
	int r;

	http_resp_init(&resp);
	if (jx_check_name(a->argv[0], "NAME", NULL) != 0) {
		r = cmd_usage_error(&cmd_labs_untrust_entry, "NAME: not a lab name");
		goto out;
	}
	snprintf(path, sizeof(path), "/labs/%s", a->argv[0]);
	if ((r = cli_call(c, "DELETE", path, NULL, 0, &resp)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json)
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	else {
		cli_print_line(stdout, "untrusted lab ", a->argv[0]);
		r = CLI_EXIT_OK;
	}
out:
	http_resp_free(&resp);
	return r;
}

/* A list answer {key: [...]} as a table of the given columns (by key). */
static int
labs_table(struct cli *c, const char *path, const char *key, const struct table_col *cols,
    const char *const *fields, size_t ncols)
{
	struct http_resp resp;
	struct table t;
	struct bf_diag d;
	json_t *doc = NULL, *list, *e;
	char b[8][512];
	const char *row[8];
	size_t i, k;
	int r;

	http_resp_init(&resp);
	table_init(&t, cols, ncols);
	if ((r = cli_call_json(c, "GET", path, NULL, 0, &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	bf_diag_clear(&d);
	if (jx_arr(doc, key, JX_REQUIRED, 0, LABS_MAX_ITEMS, &list, "", &d) != 0) {
		cli_err("malformed answer from %s: %s", resp.url, d.msg);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	json_array_foreach(list, i, e) {
		for (k = 0; k < ncols && k < 8; k++)
			row[k] = strcmp(fields[k], "at") == 0 || strcmp(fields[k], "created_at") == 0 ?
			    cli_time(e, fields[k], b[k], sizeof(b[k])) :
			    cli_cell(e, fields[k], b[k], sizeof(b[k]));
		if ((r = table_add_row(&t, row)) != 0) {
			cli_err("%s", bf_err_str(r));
			r = CLI_EXIT_FAIL;
			goto out;
		}
	}
	r = table_print(&t, stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
out:
	table_free(&t);
	json_decref(doc);
	http_resp_free(&resp);
	return r;
}

static const struct table_col labs_cols[] = {
	{ .head = "NAME", .max = 24, .align = TABLE_LEFT },
	{ .head = "FINGERPRINT", .max = 52, .align = TABLE_LEFT },
	{ .head = "SOURCE", .max = 40, .align = TABLE_LEFT },
	{ .head = "BY", .max = 12, .align = TABLE_LEFT },
	{ .head = "SINCE", .max = 20, .align = TABLE_LEFT },
};
static const char *const labs_fields[] = { "name", "fingerprint", "source", "actor",
    "created_at" };

static int
labs_list(struct cli *c, const struct cmd_args *a)
{
	(void)a;
	return labs_table(c, "/labs", "labs", labs_cols, labs_fields,
	    sizeof(labs_cols) / sizeof(labs_cols[0]));
}

static const struct table_col audit_cols[] = {
	{ .head = "ID", .max = 8, .align = TABLE_RIGHT },
	{ .head = "AT", .max = 20, .align = TABLE_LEFT },
	{ .head = "ACTOR", .max = 12, .align = TABLE_LEFT },
	{ .head = "ACTION", .max = 22, .align = TABLE_LEFT },
	{ .head = "SUBJECT", .max = 24, .align = TABLE_LEFT },
	{ .head = "DETAIL", .max = 80, .align = TABLE_LEFT },
};
static const char *const audit_fields[] = { "id", "at", "actor", "action", "subject",
    "detail" };

static int
audit_list(struct cli *c, const struct cmd_args *a)
{
	char path[64];
	long n = 100;

	if (a->opt[0] != NULL) {
		char *end;

		n = strtol(a->opt[0], &end, 10);
		if (*a->opt[0] == '\0' || *end != '\0' || n < 1 || n > 1000)
			return cmd_usage_error(&cmd_audit_entry, "--limit: \"%s\" is not in "
			    "1..1000", a->opt[0]);
	}
	snprintf(path, sizeof(path), "/audit?limit=%ld", n);
	return labs_table(c, path, "audit", audit_cols, audit_fields,
	    sizeof(audit_cols) / sizeof(audit_cols[0]));
}

static const struct cmd_opt labs_trust_opts[] = {
	{ .name = "fingerprint", .has_arg = 1, .shortc = 'f' },
	{ .name = NULL }
};

static const struct cmd_opt audit_opts[] = {
	{ .name = "limit", .has_arg = 1, .shortc = 'n' },
	{ .name = NULL }
};

const struct cmd_entry cmd_labs_entry = {
	"labs", NULL, "", "list the trusted labs (the keyring)",
	NULL, NULL, 0, 0, labs_list
};

const struct cmd_entry cmd_labs_trust_entry = {
	"labs", "trust", "NAME KEYFILE|URL [--fingerprint SHA256:...]",
	"trust a lab's signing key (admin)",
	"KEYFILE is the JSON of the lab's GET /api/v1/lab (curl URL/api/v1/lab > lab.json)\n"
	"or its base64 public key; a URL (https://other-lab/api/v1/lab) is fetched by the\n"
	"coordinator. Check the printed fingerprint with the other lab, or give it with\n"
	"--fingerprint so that any other key is refused. Bundles signed by a trusted lab\n"
	"may be rerun here (with an installed recipe); others are compared only.\n",
	labs_trust_opts, 2, 2, labs_trust
};

const struct cmd_entry cmd_labs_untrust_entry = {
	"labs", "untrust", "NAME", "remove a lab from the keyring (admin)",
	NULL, NULL, 1, 1, labs_untrust
};

const struct cmd_entry cmd_audit_entry = {
	"audit", NULL, "[--limit N]",
	"the audit log: imports, trust, publishing, overrides (admin)",
	NULL, audit_opts, 0, 0, audit_list
};
