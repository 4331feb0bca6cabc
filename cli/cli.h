/*
 * cli.h: what the files of benchfleet, the command-line client, share:
 * the global state, the command table's entry type, exit statuses, and
 * helpers that call the API and format its answers. The CLI talks to the
 * coordinator only over HTTP; no coordinator header is included here.
 */
#ifndef BF_CLI_H
#define BF_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "http.h"

/* Exit statuses: part of the CLI's contract with scripts. */
#define CLI_EXIT_OK		0
#define CLI_EXIT_FAIL		1	/* an HTTP error, a local error, a failed job */
#define CLI_EXIT_USAGE		2
#define CLI_EXIT_UNREACHABLE	3	/* the coordinator did not answer */
#define CLI_EXIT_TIMEOUT	4	/* wait/watch ran out of time */

#define CMD_MAX_OPTS	8
#define CMD_MAX_ARGS	8

struct cli {
	struct http http;
	int json;		/* --json: print the API's JSON as it came */
};

/* An option of a subcommand: "--name VALUE" (has_arg) or "--name". */
struct cmd_opt {
	const char *name;
	int has_arg;
	int shortc;		/* a one-letter alias, or 0 */
};

/* A subcommand's parsed command line. */
struct cmd_args {
	const char *opt[CMD_MAX_OPTS];	/* by index into entry->opts; NULL if absent */
	const char *argv[CMD_MAX_ARGS];	/* positional arguments */
	int argc;
};

/*
 * One subcommand. name and sub ("machines", "add") select it; an entry
 * with sub NULL takes the bare name. exec returns a CLI_EXIT_* status.
 */
struct cmd_entry {
	const char *name;
	const char *sub;
	const char *usage;	/* arguments, after "benchfleet NAME [SUB] " */
	const char *summary;	/* one line for "benchfleet help" */
	const char *help;	/* the rest of "benchfleet CMD --help", or NULL */
	const struct cmd_opt *opts;	/* terminated by a NULL name, or NULL */
	int minargs, maxargs;
	int (*exec)(struct cli *, const struct cmd_args *);
};

extern const struct cmd_entry cmd_submit_entry, cmd_status_entry, cmd_runs_entry,
    cmd_wait_entry, cmd_watch_entry, cmd_cancel_entry;
extern const struct cmd_entry cmd_machines_entry, cmd_machines_add_entry,
    cmd_machines_rm_entry, cmd_machines_show_entry,
    cmd_machines_clear_entry, cmd_machines_probe_entry;
extern const struct cmd_entry cmd_recipes_entry, cmd_recipes_import_entry;
extern const struct cmd_entry cmd_labs_entry, cmd_labs_trust_entry, cmd_labs_untrust_entry,
    cmd_audit_entry;
extern const struct cmd_entry cmd_report_entry, cmd_log_entry, cmd_export_entry;
extern const struct cmd_entry cmd_compare_entry;
extern const struct cmd_entry cmd_reproduce_entry, cmd_publish_entry;
extern const struct cmd_entry cmd_profile_entry, cmd_profile_diff_entry;

/* cmd.c: the table, lookup, parsing of a subcommand's line, usage. */
const struct cmd_entry *cmd_find(int argc, char **argv, int *used);
/* Parse argv (argv[0] is the first word after the command name) into a.
 * Returns 0, CLI_EXIT_USAGE after printing why, or -1 when --help was
 * asked for and printed. */
int cmd_parse(const struct cmd_entry *e, int argc, char **argv, struct cmd_args *a);
void cmd_usage_all(FILE *f);
void cmd_usage(const struct cmd_entry *e, FILE *f);
/* Print "benchfleet: <fmt>" and the entry's usage line; CLI_EXIT_USAGE. */
int cmd_usage_error(const struct cmd_entry *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* cli.c: calling the API. */

/* Print "benchfleet: <fmt>\n" to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Make a request. On success (a 2xx answer) returns 0 with resp filled.
 * Otherwise prints why to stderr (the server's "error" and "detail", or
 * the URL that could not be reached) and returns a BF_ERR_* code:
 * BF_ERR_LOST or BF_ERR_TIMEOUT when no answer came.
 */
int cli_call(struct cli *c, const char *method, const char *path, const char *body,
    size_t bodylen, struct http_resp *resp);
/* cli_call, then parse the answer as a JSON object; *out is a new
 * reference. A malformed answer is reported and BF_ERR_PROTO. */
int cli_call_json(struct cli *c, const char *method, const char *path, const char *body,
    size_t bodylen, struct http_resp *resp, json_t **out);
/* The exit status for a BF_ERR_* code from cli_call. */
int cli_exit(int r);
/* Write the body to stdout as it came, with a final newline. */
int cli_print_body(const struct http_resp *resp);

/* Parse an id (1..INT64_MAX); prints a usage error naming what on failure. */
int cli_parse_id(const struct cmd_entry *e, const char *what, const char *s, int64_t *out);

/* Display text of obj[key] for a table cell: "-" when absent or null;
 * strings as they are, numbers in decimal, others as compact JSON. The
 * result points into obj or into buf. */
const char *cli_cell(const json_t *obj, const char *key, char *buf, size_t bufsz);
/* A time: an integer or real is taken as seconds since the epoch (or
 * milliseconds when past year 5000) and shown in UTC; a string as it is. */
const char *cli_time(const json_t *obj, const char *key, char *buf, size_t bufsz);
/* Write "  key: value" lines for the scalar members of obj to stdout,
 * sanitised; objects and arrays as compact JSON. keys (NULL-terminated)
 * picks and orders them; NULL prints all. */
void cli_print_fields(const json_t *obj, const char *const *keys);
/* Sanitise s for the terminal and write it with a newline to f. */
void cli_print_line(FILE *f, const char *prefix, const char *s);

#endif
