/*
 * cmd-report.c: the subcommands that print what the coordinator renders:
 * report (text, markdown, csv or json), log (a run's output lines) and
 * export (a job's result bundle).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "jx.h"
#include "parse.h"
#include "report.h"
#include "table.h"

#define REPORT_LOG_PAGE	10000	/* the most lines benchfleetd gives per request */

static const char *const report_formats[] = { "text", "markdown", "csv", "json", NULL };

static int
report_exec(struct cli *c, const struct cmd_args *a)
{
	const struct cmd_entry *e = &cmd_report_entry;
	const char *format = a->opt[1] != NULL ? a->opt[1] : "text", *colon;
	struct http_resp resp;
	struct buf path;
	char *esc = NULL;
	enum report_stat st;
	enum report_adjust adj;
	int64_t id, min_n = 0;
	size_t i;
	int r;

	http_resp_init(&resp);
	buf_init(&path, 4096);
	if ((r = cli_parse_id(e, "job id", a->argv[0], &id)) != 0)
		goto out;
	for (i = 0; report_formats[i] != NULL; i++)
		if (strcmp(report_formats[i], format) == 0)
			break;
	if (report_formats[i] == NULL) {
		r = cmd_usage_error(e, "--format: \"%s\" is not one of text, markdown, csv, json",
		    format);
		goto out;
	}
	if (a->opt[0] != NULL && ((colon = strchr(a->opt[0], ':')) == NULL ||
	    colon == a->opt[0] || colon[1] == '\0')) {
		r = cmd_usage_error(e, "--baseline: \"%s\" is not AXIS:VALUE", a->opt[0]);
		goto out;
	}
	if (a->opt[2] != NULL && parse_i64(a->opt[2], 1, REPORT_MAX_MIN_N, &min_n) != 0) {
		r = cmd_usage_error(e, "--min-n: \"%s\" is not an integer in 1..%d", a->opt[2],
		    REPORT_MAX_MIN_N);
		goto out;
	}
	if (report_stat_parse(a->opt[3], &st) != 0) {
		r = cmd_usage_error(e, "--stat: \"%s\" is not one of mean, median, min",
		    a->opt[3]);
		goto out;
	}
	if (report_adjust_parse(a->opt[4], &adj) != 0) {
		r = cmd_usage_error(e, "--adjust: \"%s\" is not one of none, holm", a->opt[4]);
		goto out;
	}
	if ((esc = http_escape(&c->http, format)) == NULL ||
	    buf_printf(&path, "/jobs/%" PRId64 "/report?format=%s", id, esc) != 0)
		goto toobig;
	/* checked above: plain words and digits, nothing to escape */
	if ((a->opt[2] != NULL && buf_printf(&path, "&min_n=%" PRId64, min_n) != 0) ||
	    (a->opt[3] != NULL && buf_printf(&path, "&stat=%s", a->opt[3]) != 0) ||
	    (a->opt[4] != NULL && buf_printf(&path, "&adjust=%s", a->opt[4]) != 0))
		goto toobig;
	if (a->opt[0] != NULL) {
		free(esc);
		if ((esc = http_escape(&c->http, a->opt[0])) == NULL ||
		    buf_printf(&path, "&baseline=%s", esc) != 0)
			goto toobig;
	}
	if ((r = cli_call(c, "GET", path.data, NULL, 0, &resp)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	goto out;
toobig:
	r = cmd_usage_error(e, "--baseline too long");
out:
	free(esc);
	buf_free(&path);
	http_resp_free(&resp);
	return r;
}

/*
 * Print a run's log. The API pages it (?after=SEQ&limit=N), so ask for
 * pages until one comes back short. With --json the pages are joined into
 * one {"run", "lines"} document.
 */
static int
report_log(struct cli *c, const struct cmd_args *a)
{
	struct http_resp resp;
	struct bf_diag d;
	json_t *doc = NULL, *lines, *l, *all = NULL, *res = NULL;
	const char *stream, *line;
	char path[96], prefix[48], *st, *dump = NULL;
	int64_t id, after = 0, seq;
	size_t i, n;
	int r;

	http_resp_init(&resp);
	if ((r = cli_parse_id(&cmd_log_entry, "run id", a->argv[0], &id)) != 0)
		goto out;
	if (c->json && (all = json_array()) == NULL) {
		cli_err("out of memory");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	for (;;) {
		snprintf(path, sizeof(path), "/runs/%" PRId64 "/log?after=%" PRId64 "&limit=%d",
		    id, after, REPORT_LOG_PAGE);
		json_decref(doc);
		doc = NULL;
		if ((r = cli_call_json(c, "GET", path, NULL, 0, &resp, &doc)) != 0) {
			r = cli_exit(r);
			goto out;
		}
		if (jx_arr(doc, "lines", JX_REQUIRED, 0, REPORT_LOG_PAGE, &lines, "", &d) != 0) {
			cli_err("malformed answer from %s: %s", resp.url, d.msg);
			r = CLI_EXIT_FAIL;
			goto out;
		}
		n = json_array_size(lines);
		json_array_foreach(lines, i, l) {
			seq = 0;
			if (jx_int(l, "seq", JX_REQUIRED, after + 1, INT64_MAX, &seq, "lines[]",
			    &d) != 0) {
				/* A seq that does not grow would page forever. */
				cli_err("malformed answer from %s: %s", resp.url, d.msg);
				r = CLI_EXIT_FAIL;
				goto out;
			}
			after = seq;
			if (all != NULL) {
				json_array_append(all, l);
				continue;
			}
			stream = json_string_value(json_object_get(l, "stream"));
			line = json_string_value(json_object_get(l, "line"));
			st = table_sanitize(stream != NULL ? stream : "?", 16);
			snprintf(prefix, sizeof(prefix), "[%s] ", st != NULL ? st : "?");
			free(st);
			cli_print_line(stdout, prefix, line != NULL ? line : "");
		}
		if (n < REPORT_LOG_PAGE)
			break;
	}
	if (all != NULL) {
		if ((res = json_pack("{s:I,s:O}", "run", (json_int_t)id, "lines", all)) == NULL ||
		    (dump = json_dumps(res, JSON_COMPACT)) == NULL) {
			cli_err("out of memory");
			r = CLI_EXIT_FAIL;
			goto out;
		}
		puts(dump);
	}
	r = CLI_EXIT_OK;
out:
	free(dump);
	json_decref(res);
	json_decref(all);
	json_decref(doc);
	http_resp_free(&resp);
	return r;
}

static int
report_export(struct cli *c, const struct cmd_args *a)
{
	struct http_resp resp;
	char path[64];
	int64_t id;
	int r;

	http_resp_init(&resp);
	if ((r = cli_parse_id(&cmd_export_entry, "job id", a->argv[0], &id)) != 0)
		goto out;
	snprintf(path, sizeof(path), "/jobs/%" PRId64 "/bundle", id);
	if ((r = cli_call(c, "GET", path, NULL, 0, &resp)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
out:
	http_resp_free(&resp);
	return r;
}

static const struct cmd_opt report_opts[] = {
	{ .name = "baseline", .has_arg = 1, .shortc = 'b' },
	{ .name = "format", .has_arg = 1, .shortc = 'f' },
	{ .name = "min-n", .has_arg = 1 },
	{ .name = "stat", .has_arg = 1 },
	{ .name = "adjust", .has_arg = 1 },
	{ .name = NULL }
};

const struct cmd_entry cmd_report_entry = {
	"report", NULL, "ID [--baseline AXIS:VALUE] [--format text|markdown|csv|json] "
	"[--min-n N] [--stat mean|median|min] [--adjust none|holm]",
	"print a job's report",
	"The coordinator renders the report; it is printed as it comes. With\n"
	"--baseline, other cells are compared against the cells where AXIS is VALUE.\n"
	"--min-n N: no mark when a side has fewer than N independent samples\n"
	"(default 3). --stat: what summarises a cell (median: bootstrap CIs;\n"
	"min: no interval). --adjust holm: Holm-Bonferroni across the report.\n",
	report_opts, 1, 1, report_exec
};

const struct cmd_entry cmd_log_entry = {
	"log", NULL, "RUN_ID", "print a run's log lines",
	NULL, NULL, 1, 1, report_log
};

const struct cmd_entry cmd_export_entry = {
	"export", NULL, "ID", "print a job's result bundle (JSON)",
	NULL, NULL, 1, 1, report_export
};
