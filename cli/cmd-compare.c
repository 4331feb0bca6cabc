/*
 * cmd-compare.c: "benchfleet compare A B", the report for numbers people
 * already have. Each file holds numbers separated by whitespace (one a
 * line, or several), '#' starting a comment to the end of its line; "-"
 * reads standard input. B is compared with A as its baseline, through the
 * same report_render as a job's report, so its JSON is also how the
 * statistics can be checked against scipy on any vector. No coordinator
 * is involved.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "cli.h"
#include "err.h"
#include "parse.h"
#include "report.h"
#include "stats.h"

#define COMPARE_MAX_FILE	(64 * 1024 * 1024)	/* one input file */
#define COMPARE_MAX_TOKEN	64			/* one number as written */

static const char *const compare_formats[] = { "text", "markdown", "csv", "json", NULL };

/* The whole of path ("-": stdin) into b, at most COMPARE_MAX_FILE bytes. */
static int
compare_slurp(const char *path, struct buf *b)
{
	FILE *f;
	char chunk[65536];
	size_t n;
	int r;

	if (strcmp(path, "-") == 0)
		f = stdin;
	else if ((f = fopen(path, "r")) == NULL) {
		cli_err("%s: %s", path, strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if ((r = buf_append(b, chunk, n)) != 0) {
			cli_err("%s: %s", path, r == BF_ERR_TOOBIG ?
			    "larger than 64 MiB" : "out of memory");
			goto out;
		}
	}
	if (ferror(f)) {
		cli_err("%s: %s", path, strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	r = 0;
out:
	if (f != NULL && f != stdin)
		fclose(f);
	return r;
}

/*
 * Parse the numbers of text (from path, for messages) into *vp / *np
 * (caller frees *vp). Anything that is not a finite decimal number is an
 * error naming the file, the line and the token.
 */
static int
compare_parse(const char *path, const char *text, size_t len, double **vp, size_t *np)
{
	double *v = NULL, *nv, x;
	size_t n = 0, cap = 0, i = 0, start, line = 1;
	int r;

	while (i < len) {
		if (text[i] == '\n') {
			line++;
			i++;
			continue;
		}
		if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' ||
		    text[i] == '\f' || text[i] == '\v') {
			i++;
			continue;
		}
		if (text[i] == '#') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		for (start = i; i < len && text[i] != ' ' && text[i] != '\t' &&
		    text[i] != '\r' && text[i] != '\n' && text[i] != '\f' &&
		    text[i] != '\v' && text[i] != '#'; i++)
			;
		if (i - start > COMPARE_MAX_TOKEN ||
		    (r = parse_double_n(text + start, i - start, &x)) != 0) {
			/* The token as %.*s, cut, with control bytes as '?'. */
			char tok[COMPARE_MAX_TOKEN + 1];
			size_t k, tl = i - start > COMPARE_MAX_TOKEN ? COMPARE_MAX_TOKEN :
			    i - start;

			for (k = 0; k < tl; k++)
				tok[k] = (unsigned char)text[start + k] < 0x20 ||
				    (unsigned char)text[start + k] >= 0x7f ? '?' : text[start + k];
			tok[tl] = '\0';
			cli_err("%s:%zu: \"%s%s\" is not a finite number", path, line, tok,
			    i - start > COMPARE_MAX_TOKEN ? "..." : "");
			r = BF_ERR_PARSE;
			goto out;
		}
		if (n >= STATS_MAX_SAMPLES) {
			cli_err("%s:%zu: more than %zu numbers", path, line, STATS_MAX_SAMPLES);
			r = BF_ERR_TOOBIG;
			goto out;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL) {
				cli_err("out of memory");
				r = BF_ERR_ALLOC;
				goto out;
			}
			v = nv;
		}
		v[n++] = x;
	}
	if (n == 0) {
		cli_err("%s: no numbers (one per line or whitespace-separated, '#' comments)",
		    path);
		r = BF_ERR_PARSE;
		goto out;
	}
	*vp = v;
	*np = n;
	v = NULL;
	r = 0;
out:
	free(v);
	return r;
}

static int
compare_read(const char *path, double **vp, size_t *np)
{
	struct buf b;
	int r;

	buf_init(&b, COMPARE_MAX_FILE);
	if ((r = compare_slurp(path, &b)) == 0)
		r = compare_parse(path, b.data ? b.data : "", b.len, vp, np);
	buf_free(&b);
	return r;
}

static int
compare_exec(struct cli *c, const struct cmd_args *a)
{
	const struct cmd_entry *e = &cmd_compare_entry;
	const char *format = a->opt[0] != NULL ? a->opt[0] : c->json ? "json" : "text";
	struct report_metric metric = { .name = "value" };
	struct report_cell cells[2];
	struct report_series series[2];
	static const int baseline_of[2] = { -1, 0 };
	struct report_input in;
	const char *context[3] = { NULL, NULL, NULL };
	char ctx_a[BF_MAX_STR / 2], ctx_b[BF_MAX_STR / 2];
	double *va = NULL, *vb = NULL;
	size_t na = 0, nb = 0, i;
	struct bf_diag d;
	struct buf out;
	int r;

	buf_init(&out, 0);
	bf_diag_clear(&d);
	for (i = 0; compare_formats[i] != NULL; i++)
		if (strcmp(compare_formats[i], format) == 0)
			break;
	if (compare_formats[i] == NULL) {
		r = cmd_usage_error(e, "--format: \"%s\" is not one of text, markdown, csv, json",
		    format);
		goto out;
	}
	if (a->opt[1] != NULL && (*a->opt[1] == '\0' || strlen(a->opt[1]) > BF_MAX_NAME)) {
		r = cmd_usage_error(e, "--name: 1 to %d bytes", BF_MAX_NAME);
		goto out;
	}
	if (a->opt[2] != NULL && strlen(a->opt[2]) > BF_MAX_NAME) {
		r = cmd_usage_error(e, "--unit: at most %d bytes", BF_MAX_NAME);
		goto out;
	}
	if (strcmp(a->argv[0], "-") == 0 && strcmp(a->argv[1], "-") == 0) {
		r = cmd_usage_error(e, "only one of A and B can be \"-\" (standard input)");
		goto out;
	}
	if (compare_read(a->argv[0], &va, &na) != 0 ||
	    compare_read(a->argv[1], &vb, &nb) != 0) {
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if (a->opt[1] != NULL)
		metric.name = a->opt[1];
	metric.unit = a->opt[2];
	metric.higher_better = a->opt[3] != NULL;
	cells[0].label = a->argv[0];
	cells[1].label = a->argv[1];
	series[0] = (struct report_series){ va, NULL, na };
	series[1] = (struct report_series){ vb, NULL, nb };
	snprintf(ctx_a, sizeof(ctx_a), "A (baseline): %.1000s, %zu values", a->argv[0], na);
	snprintf(ctx_b, sizeof(ctx_b), "B: %.1000s, %zu values", a->argv[1], nb);
	context[0] = ctx_a;
	context[1] = ctx_b;
	memset(&in, 0, sizeof(in));
	in.nmetrics = 1;
	in.metrics = &metric;
	in.ncells = 2;
	in.cells = cells;
	in.series = series;
	in.baseline_of = baseline_of;
	in.context = context;
	if ((r = report_render(&in, format, &out, &d)) != 0) {
		cli_err("report: %s", d.msg[0] ? d.msg : bf_err_str(r));
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if (fwrite(out.data, 1, out.len, stdout) != out.len) {
		cli_err("writing to standard output failed");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	r = CLI_EXIT_OK;
out:
	free(va);
	free(vb);
	buf_free(&out);
	return r;
}

static const struct cmd_opt compare_opts[] = {
	{ .name = "format", .has_arg = 1, .shortc = 'f' },
	{ .name = "name", .has_arg = 1, .shortc = 'n' },
	{ .name = "unit", .has_arg = 1, .shortc = 'u' },
	{ .name = "higher", .has_arg = 0, .shortc = 0 },
	{ .name = NULL }
};

const struct cmd_entry cmd_compare_entry = {
	"compare", NULL,
	"A B [--format text|markdown|csv|json] [--name METRIC] [--unit U] [--higher]",
	"compare two files of numbers locally (B vs baseline A)",
	"Reads one number per line, or whitespace-separated; '#' starts a comment;\n"
	"\"-\" is standard input. NaN, inf and anything else that is not a finite\n"
	"number is refused, naming the file and line. Prints the report of B against\n"
	"A as baseline, as \"benchfleet report\" does: mean, CoV, 95% CI, % change\n"
	"with its Fieller CI, Welch's test and, in csv and json, Mann-Whitney.\n"
	"--name and --unit label the metric (default \"value\"); --higher says higher\n"
	"is better (default: lower is better). No coordinator is needed.\n",
	compare_opts, 2, 2, compare_exec
};
