/*
 * cmd-machine.c: the machine subcommands: machines (list), machines add,
 * machines rm, machines show.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "err.h"
#include "jx.h"
#include "caps.h"
#include "parse.h"
#include "table.h"

#define MACHINE_DEFAULT_PORT	22
#define MACHINE_MAX_ITEMS	1000000
#define MACHINE_MAX_PATH	PATH_MAX

static const struct table_col machine_cols[] = {
	{ .head = "NAME", .max = 24, .align = TABLE_LEFT },
	{ .head = "CLASS", .max = 16, .align = TABLE_LEFT },
	{ .head = "STATE", .max = 12, .align = TABLE_LEFT },
	{ .head = "ADDRESS", .max = 48, .align = TABLE_LEFT },
	{ .head = "HOSTNAME", .max = 24, .align = TABLE_LEFT },
	{ .head = "KERNEL", .max = 32, .align = TABLE_LEFT },
	{ .head = "LAST-SEEN", .max = 24, .align = TABLE_LEFT },
	{ .head = "LAST-ERROR", .max = 50, .align = TABLE_LEFT },
};
#define MACHINE_NCOLS	(sizeof(machine_cols) / sizeof(machine_cols[0]))

/* "host:port", bracketing an IPv6 host. */
static const char *
machine_addr_cell(const json_t *m, char *buf, size_t bufsz)
{
	const json_t *hv = json_object_get(m, "host");
	const char *host;
	char pb[32];

	if (!json_is_string(hv))
		return "-";
	host = json_string_value(hv);
	snprintf(buf, bufsz, strchr(host, ':') != NULL ? "[%s]:%s" : "%s:%s", host,
	    cli_cell(m, "port", pb, sizeof(pb)));
	return buf;
}

static int
machine_list(struct cli *c, const struct cmd_args *a)
{
	struct http_resp resp;
	struct table t;
	struct bf_diag d;
	json_t *doc = NULL, *list, *m;
	char b[MACHINE_NCOLS][300];
	const char *row[MACHINE_NCOLS];
	size_t i;
	int r;

	http_resp_init(&resp);
	table_init(&t, machine_cols, MACHINE_NCOLS);
	if ((r = cli_call_json(c, "GET", "/machines", NULL, 0, &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	if (jx_arr(doc, "machines", JX_REQUIRED, 0, MACHINE_MAX_ITEMS, &list, "", &d) != 0) {
		cli_err("malformed answer from %s: %s", resp.url, d.msg);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	json_array_foreach(list, i, m) {
		row[0] = cli_cell(m, "name", b[0], sizeof(b[0]));
		row[1] = cli_cell(m, "class", b[1], sizeof(b[1]));
		row[2] = cli_cell(m, "state", b[2], sizeof(b[2]));
		row[3] = machine_addr_cell(m, b[3], sizeof(b[3]));
		row[4] = cli_cell(m, "hostname", b[4], sizeof(b[4]));
		row[5] = cli_cell(m, "kernel", b[5], sizeof(b[5]));
		row[6] = cli_time(m, "last_seen", b[6], sizeof(b[6]));
		/* a boot config that cannot boot (an older release's inline
		 * command) says so until the machine is registered again */
		row[7] = json_is_string(json_object_get(m, "last_error")) ||
		    !json_is_string(json_object_get(m, "boot_error")) ?
		    cli_cell(m, "last_error", b[7], sizeof(b[7])) :
		    cli_cell(m, "boot_error", b[7], sizeof(b[7]));
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

/*
 * Split "host[:port]", "[v6addr][:port]" into host and port (22 when
 * absent). A bare IPv6 address is refused: its last group would pass for
 * a port.
 */
static int
machine_parse_addr(const char *s, char *host, size_t hostsz, int64_t *port,
    struct bf_diag *d)
{
	const char *h, *p = NULL, *end;
	size_t hlen, i;

	*port = MACHINE_DEFAULT_PORT;
	if (s[0] == '[') {
		h = s + 1;
		if ((end = strchr(h, ']')) == NULL) {
			bf_diag_set(d, NULL, "\"%s\": no ']' after an IPv6 address", s);
			return BF_ERR_PARSE;
		}
		hlen = (size_t)(end - h);
		if (end[1] == ':')
			p = end + 2;
		else if (end[1] != '\0') {
			bf_diag_set(d, NULL, "\"%s\": expected ':PORT' after ']'", s);
			return BF_ERR_PARSE;
		}
	} else {
		h = s;
		if ((end = strchr(s, ':')) != NULL && strchr(end + 1, ':') != NULL) {
			bf_diag_set(d, NULL, "\"%s\": write an IPv6 address as [ADDRESS]:PORT", s);
			return BF_ERR_PARSE;
		}
		hlen = end != NULL ? (size_t)(end - s) : strlen(s);
		if (end != NULL)
			p = end + 1;
	}
	if (hlen == 0 || hlen > BF_MAX_HOST || hlen >= hostsz) {
		bf_diag_set(d, NULL, "\"%s\": the host must be 1 to %d bytes", s, BF_MAX_HOST);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < hlen; i++) {
		unsigned char ch = (unsigned char)h[i];

		if (ch <= ' ' || ch == 0x7f || ch == '/' || ch == '@' || ch == '[' || ch == ']') {
			bf_diag_set(d, NULL, "\"%s\": the host holds a character not allowed "
			    "in a host name or address", s);
			return BF_ERR_INVALID;
		}
	}
	if (p != NULL && parse_i64(p, 1, 65535, port) != 0) {
		bf_diag_set(d, NULL, "\"%s\": the port must be a number from 1 to 65535", s);
		return BF_ERR_RANGE;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	return 0;
}

static int
machine_add(struct cli *c, const struct cmd_args *a)
{
	const struct cmd_entry *e = &cmd_machines_add_entry;
	const char *name = a->argv[0], *user = a->opt[0], *key = a->opt[1], *class = a->opt[2];
	char host[BF_MAX_HOST + 1], keypath[MACHINE_MAX_PATH], cwd[MACHINE_MAX_PATH];
	struct http_resp resp;
	struct bf_diag d;
	json_t *body = NULL, *doc = NULL;
	char *text = NULL;
	int64_t port;
	int n, r;

	http_resp_init(&resp);
	if (jx_check_name(name, "NAME", &d) != 0) {
		r = cmd_usage_error(e, "%s", d.msg);
		goto out;
	}
	if (machine_parse_addr(a->argv[1], host, sizeof(host), &port, &d) != 0) {
		r = cmd_usage_error(e, "HOST:PORT %s", d.msg);
		goto out;
	}
	if (user == NULL || *user == '\0' || key == NULL || *key == '\0') {
		r = cmd_usage_error(e, "--user and --key are required");
		goto out;
	}
	if (class != NULL && jx_check_name(class, "--class", &d) != 0) {
		r = cmd_usage_error(e, "%s", d.msg);
		goto out;
	}
	/* The coordinator reads the key; a relative path means ours. */
	if (key[0] == '/')
		n = snprintf(keypath, sizeof(keypath), "%s", key);
	else if (getcwd(cwd, sizeof(cwd)) == NULL) {
		cli_err("--key: cannot make \"%s\" absolute: %s", key, strerror(errno));
		r = CLI_EXIT_FAIL;
		goto out;
	} else
		n = snprintf(keypath, sizeof(keypath), "%s/%s", cwd, key);
	if (n < 0 || (size_t)n >= sizeof(keypath)) {
		r = cmd_usage_error(e, "--key: path too long");
		goto out;
	}
	if ((body = json_pack("{s:s, s:s, s:I, s:s, s:s}", "name", name, "host", host,
	    "port", (json_int_t)port, "user", user, "key", keypath)) == NULL ||
	    (class != NULL && json_object_set_new(body, "class", json_string(class)) != 0) ||
	    (text = json_dumps(body, JSON_COMPACT)) == NULL) {
		/* json_pack also fails on a string that is not UTF-8. */
		cli_err("cannot encode the machine (are --user and --key valid UTF-8?)");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if ((r = cli_call_json(c, "POST", "/machines", text, strlen(text), &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json)
		cli_print_body(&resp);
	else
		printf("added machine %s\n", name);
	r = CLI_EXIT_OK;
out:
	free(text);
	json_decref(body);
	json_decref(doc);
	http_resp_free(&resp);
	return r;
}

/* GET or DELETE /machines/NAME. */
static int
machine_one(struct cli *c, const char *method, const char *name)
{
	struct http_resp resp;
	json_t *doc = NULL;
	char *esc = NULL, path[512];
	int r;

	http_resp_init(&resp);
	if ((esc = http_escape(&c->http, name)) == NULL) {
		cli_err("out of memory");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if ((size_t)snprintf(path, sizeof(path), "/machines/%s", esc) >= sizeof(path)) {
		r = cmd_usage_error(NULL, "machine name too long");
		goto out;
	}
	if (strcmp(method, "DELETE") == 0) {
		if ((r = cli_call(c, method, path, NULL, 0, &resp)) != 0) {
			r = cli_exit(r);
			goto out;
		}
		if (c->json)
			cli_print_body(&resp);
		else
			cli_print_line(stdout, "removed machine ", name);
		r = CLI_EXIT_OK;
		goto out;
	}
	if ((r = cli_call_json(c, method, path, NULL, 0, &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json)
		cli_print_body(&resp);
	else
		cli_print_fields(doc, NULL);
	r = CLI_EXIT_OK;
out:
	free(esc);
	json_decref(doc);
	http_resp_free(&resp);
	return r;
}

/* POST /machines/NAME/ACTION (clear, probe): say what was done. */
static int
machine_post(struct cli *c, const char *name, const char *action, const char *said)
{
	struct http_resp resp;
	char *esc = NULL, path[512];
	int r;

	http_resp_init(&resp);
	if ((esc = http_escape(&c->http, name)) == NULL) {
		cli_err("out of memory");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if ((size_t)snprintf(path, sizeof(path), "/machines/%s/%s", esc, action) >=
	    sizeof(path)) {
		r = cmd_usage_error(NULL, "machine name too long");
		goto out;
	}
	if ((r = cli_call(c, "POST", path, NULL, 0, &resp)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json)
		cli_print_body(&resp);
	else {
		printf("%s ", said);
		cli_print_line(stdout, "", name);
	}
	r = CLI_EXIT_OK;
out:
	free(esc);
	http_resp_free(&resp);
	return r;
}

static int
machine_clear(struct cli *c, const struct cmd_args *a)
{
	return machine_post(c, a->argv[0], "clear", "cleared: runs may go to machine");
}

static int
machine_probe(struct cli *c, const struct cmd_args *a)
{
	return machine_post(c, a->argv[0], "probe", "probe asked of machine");
}

static int
machine_rm(struct cli *c, const struct cmd_args *a)
{
	return machine_one(c, "DELETE", a->argv[0]);
}

static int
machine_show(struct cli *c, const struct cmd_args *a)
{
	return machine_one(c, "GET", a->argv[0]);
}

static const struct cmd_opt machine_add_opts[] = {
	{ .name = "user", .has_arg = 1, .shortc = 'u' },
	{ .name = "key", .has_arg = 1, .shortc = 'k' },
	{ .name = "class", .has_arg = 1, .shortc = 'c' },
	{ .name = NULL }
};

const struct cmd_entry cmd_machines_entry = {
	"machines", NULL, "", "list the machines of the fleet",
	NULL, NULL, 0, 0, machine_list
};

const struct cmd_entry cmd_machines_add_entry = {
	"machines", "add", "NAME HOST[:PORT] --user U --key K [--class C]",
	"add a machine reached over SSH",
	"HOST may be a name, an IPv4 address or [an IPv6 address]; PORT defaults\n"
	"to 22. K is the private key the coordinator uses; a relative path is made\n"
	"absolute against the current directory.\n",
	machine_add_opts, 2, 2, machine_add
};

const struct cmd_entry cmd_machines_rm_entry = {
	"machines", "rm", "NAME", "remove a machine",
	NULL, NULL, 1, 1, machine_rm
};

const struct cmd_entry cmd_machines_show_entry = {
	"machines", "show", "NAME", "show one machine",
	NULL, NULL, 1, 1, machine_show
};

const struct cmd_entry cmd_machines_clear_entry = {
	"machines", "clear", "NAME", "let a quarantined machine take runs again",
	"A machine is quarantined after --boot-failures failed boots in a row.\n"
	"Clear it once its boot configuration or kernel is fixed.\n",
	NULL, 1, 1, machine_clear
};

const struct cmd_entry cmd_machines_probe_entry = {
	"machines", "probe", "NAME", "fingerprint a machine again, or reconnect an offline one now",
	NULL, NULL, 1, 1, machine_probe
};
