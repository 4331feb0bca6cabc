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

/* Append "&KEY=VALUE" (escaped) to path; -1 when it does not fit. */
static int
report_query(struct cli *c, struct buf *path, const char *key, const char *v)
{
	char *esc;
	int r;

	if (v == NULL)
		return 0;
	if ((esc = http_escape(&c->http, v)) == NULL)
		return -1;
	r = buf_printf(path, "&%s=%s", key, esc) != 0 ? -1 : 0;
	free(esc);
	return r;
}

/*
 * One job: /jobs/ID/report. Several (12 14, or r3 for a reproduction's
 * bundle): /report?jobs=12,14, the jobs as the columns.
 */
static int
report_exec(struct cli *c, const struct cmd_args *a)
{
	const struct cmd_entry *e = &cmd_report_entry;
	const char *format = a->opt[1] != NULL ? a->opt[1] : "text", *colon;
	const char *cols = a->opt[2];
	struct http_resp resp;
	struct buf path;
	enum report_stat st;
	enum report_adjust adj;
	int64_t id, min_n = 0;
	int i, r;

	http_resp_init(&resp);
	buf_init(&path, 4096);
	for (i = 0; i < a->argc; i++) {
		const char *w = a->argv[i];

		/* rN, a reproduction's bundle, only beside other jobs */
		if (a->argc > 1 && w[0] == 'r')
			w++;
		if ((r = cli_parse_id(e, "job id", w, &id)) != 0)
			goto out;
	}
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
	if (a->opt[3] != NULL && parse_i64(a->opt[3], 1, REPORT_MAX_MIN_N, &min_n) != 0) {
		r = cmd_usage_error(e, "--min-n: \"%s\" is not an integer in 1..%d", a->opt[3],
		    REPORT_MAX_MIN_N);
		goto out;
	}
	if (report_stat_parse(a->opt[4], &st) != 0) {
		r = cmd_usage_error(e, "--stat: \"%s\" is not one of mean, median, min",
		    a->opt[4]);
		goto out;
	}
	if (report_adjust_parse(a->opt[5], &adj) != 0) {
		r = cmd_usage_error(e, "--adjust: \"%s\" is not one of none, holm", a->opt[5]);
		goto out;
	}
	if (a->opt[6] != NULL && strcmp(a->opt[6], "none") != 0 &&
	    strcmp(a->opt[6], "thp") != 0 && strcmp(a->opt[6], "all") != 0) {
		r = cmd_usage_error(e, "--counters: \"%s\" is not one of none, thp, all",
		    a->opt[6]);
		goto out;
	}
	if (a->argc > 1 && a->opt[0] != NULL) {
		r = cmd_usage_error(e, "--baseline: a report across jobs compares with the "
		    "first job");
		goto out;
	}
	if (a->argc > 1 && cols != NULL && strcmp(cols, "job") != 0) {
		r = cmd_usage_error(e, "--columns: \"%s\": a report across jobs has the jobs "
		    "as its columns (--columns job)", cols);
		goto out;
	}
	if (a->argc == 1 && cols != NULL && strcmp(cols, "job") == 0) {
		r = cmd_usage_error(e, "--columns job needs two jobs or more");
		goto out;
	}
	/* the ids are checked digits (or r and digits): nothing to escape */
	if (a->argc == 1)
		r = buf_printf(&path, "/jobs/%s/report?format=%s", a->argv[0], format);
	else {
		r = buf_printf(&path, "/report?format=%s&jobs=", format);
		for (i = 0; r == 0 && i < a->argc; i++)
			r = buf_printf(&path, "%s%s", i ? "," : "", a->argv[i]);
	}
	/* --min-n, --stat, --adjust, --counters: checked above, digits and
	 * plain words */
	if (r != 0 ||
	    report_query(c, &path, "baseline", a->opt[0]) != 0 ||
	    report_query(c, &path, "columns", cols) != 0 ||
	    report_query(c, &path, "min_n", a->opt[3]) != 0 ||
	    report_query(c, &path, "stat", a->opt[4]) != 0 ||
	    report_query(c, &path, "adjust", a->opt[5]) != 0 ||
	    report_query(c, &path, "counters", a->opt[6]) != 0) {
		r = cmd_usage_error(e, "--baseline or --columns too long");
		goto out;
	}
	if ((r = cli_call(c, "GET", path.data, NULL, 0, &resp)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
out:
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
	{ .name = "columns", .has_arg = 1, .shortc = 'c' },
	{ .name = "min-n", .has_arg = 1 },
	{ .name = "stat", .has_arg = 1 },
	{ .name = "adjust", .has_arg = 1 },
	{ .name = "counters", .has_arg = 1 },
	{ .name = NULL }
};

const struct cmd_entry cmd_report_entry = {
	"report", NULL, "ID [ID|rN ...] [--baseline AXIS:VALUE] [--columns AXIS|none|job]\n"
	"    [--format text|markdown|csv|json] [--min-n N] [--stat mean|median|min]\n"
	"    [--adjust none|holm] [--counters none|thp|all]",
	"print a job's report, or one across jobs",
	"The coordinator renders the report; it is printed as it comes. With\n"
	"--baseline, other cells are compared against the cells where AXIS is VALUE.\n"
	"--columns AXIS puts that axis's values side by side as column groups (the\n"
	"default for a kernel or cmdline axis; --columns none: one row per cell).\n"
	"With several IDs the jobs are the columns and cells with equal axis values\n"
	"are compared with the first job's; rN is reproduction N's bundle, the other\n"
	"lab's samples. --min-n N: no mark when a side has fewer than N independent\n"
	"samples (default 3). --stat: what summarises a cell (median: bootstrap\n"
	"CIs; min: no interval). --adjust holm: Holm-Bonferroni across the report.\n"
	"--counters: the MM counter rows (vmstat.*, mTHP, ...; default thp). All of\n"
	"these apply to a report across jobs as to one job's.\n",
	report_opts, 1, CMD_MAX_ARGS, report_exec
};

const struct cmd_entry cmd_log_entry = {
	"log", NULL, "RUN_ID", "print a run's log lines",
	NULL, NULL, 1, 1, report_log
};

const struct cmd_entry cmd_export_entry = {
	"export", NULL, "ID", "print a job's result bundle (JSON)",
	NULL, NULL, 1, 1, report_export
};
