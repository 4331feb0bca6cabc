/*
 * cmd-profile.c: a profiled run's artifacts ("profile": {"perf":
 * "record"} in the job; docs/evidence.md, Profiles). "benchfleet profile
 * RUN" prints its heaviest symbols, or its folded stacks, or writes its
 * flame graph; "benchfleet profile diff A B" the symbols whose share of
 * the samples moved most from A to B. The shares are computed here from
 * the folded text (common/profdiff.c); the coordinator only serves it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "parse.h"
#include "profdiff.h"

#define PROFILE_TOP_DEFAULT	20
#define PROFILE_EVENT_MAX	16	/* "cpu-clock" and its kin, with the NUL */

/*
 * GET /runs/ID/profile?format=fmt into resp, and the perf event the
 * server says the samples were taken on into ev ("" when it did not say,
 * or said something that is not a short [a-z-] name).
 */
static int
profile_get(struct cli *c, int64_t id, const char *fmt, struct http_resp *resp,
    char ev[PROFILE_EVENT_MAX])
{
	char path[96];
	int r;

	snprintf(path, sizeof(path), "/runs/%" PRId64 "/profile?format=%s", id, fmt);
	if ((r = cli_call(c, "GET", path, NULL, 0, resp)) != 0)
		return r;
	if (http_header(&c->http, "X-Benchfleet-Perf-Event", ev, PROFILE_EVENT_MAX) != 0 ||
	    ev[strspn(ev, "abcdefghijklmnopqrstuvwxyz-")] != '\0')
		ev[0] = '\0';
	return 0;
}

/* --top N: 0 (every symbol) up to INT32_MAX; PROFILE_TOP_DEFAULT if absent. */
static int
profile_top(const struct cmd_entry *e, const char *s, size_t *top)
{
	int64_t n;

	*top = PROFILE_TOP_DEFAULT;
	if (s == NULL)
		return 0;
	if (parse_i64(s, 0, INT32_MAX, &n) != 0)
		return cmd_usage_error(e, "--top: \"%s\" is not an integer from 0 (all) to %d", s,
		    INT32_MAX);
	*top = (size_t)n;
	return 0;
}

/* The bytes of p[0..n) to path ("-": standard output). */
static int
profile_write(const char *path, const void *p, size_t n)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	int r = 0;

	if (f == NULL) {
		cli_err("--svg: %s: %s", path, strerror(errno));
		return BF_ERR_IO;
	}
	if ((n > 0 && fwrite(p, 1, n, f) != n) || fflush(f) != 0)
		r = BF_ERR_IO;
	if (f != stdout && fclose(f) != 0)
		r = BF_ERR_IO;
	if (r != 0)
		cli_err("--svg: writing %s failed", f == stdout ? "standard output" : path);
	return r;
}

/* Print json (taken) compactly with a newline. */
static int
profile_print_json(json_t *j)
{
	int r = j != NULL && json_dumpf(j, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF ?
	    CLI_EXIT_OK : CLI_EXIT_FAIL;

	if (j == NULL)
		cli_err("out of memory");
	json_decref(j);
	return r;
}

/* The failure of profdiff on the profile of run id. */
static int
profile_diff_error(int64_t id, int r, const struct bf_diag *d)
{
	cli_err("run %" PRId64 ": its profile cannot be read: %s", id,
	    r == BF_ERR_INVALID || r == BF_ERR_TOOBIG ? d->msg : bf_err_str(r));
	return CLI_EXIT_FAIL;
}

static int
profile_exec(struct cli *c, const struct cmd_args *a)
{
	const struct cmd_entry *e = &cmd_profile_entry;
	const char *svg = a->opt[1];
	int folded = a->opt[2] != NULL;
	struct http_resp resp;
	struct profdiff *p = NULL;
	struct bf_diag d;
	struct buf out;
	char ev[PROFILE_EVENT_MAX], label[128];
	int64_t id;
	size_t top;
	int r;

	http_resp_init(&resp);
	buf_init(&out, 0);
	bf_diag_clear(&d);
	if ((r = cli_parse_id(e, "run id", a->argv[0], &id)) != 0 ||
	    (r = profile_top(e, a->opt[0], &top)) != 0)
		goto out;
	if (svg != NULL && svg[0] == '\0') {
		r = cmd_usage_error(e, "--svg: needs a file name (\"-\": standard output)");
		goto out;
	}
	if (svg != NULL && strcmp(svg, "-") == 0 && folded) {
		r = cmd_usage_error(e, "--svg - and --folded would both write standard output");
		goto out;
	}
	if (folded && c->json) {
		r = cmd_usage_error(e, "--folded prints the folded text; it has no --json form");
		goto out;
	}
	if (svg != NULL) {
		if ((r = profile_get(c, id, "svg", &resp, ev)) != 0) {
			r = cli_exit(r);
			goto out;
		}
		if (profile_write(svg, resp.body.data, resp.body.len) != 0) {
			r = CLI_EXIT_FAIL;
			goto out;
		}
		if (strcmp(svg, "-") == 0) {
			r = CLI_EXIT_OK;
			goto out;
		}
	}
	if ((r = profile_get(c, id, "folded", &resp, ev)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (folded) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	if ((r = profdiff_one(resp.body.data, resp.body.len, &p, &d)) != 0) {
		r = profile_diff_error(id, r, &d);
		goto out;
	}
	if (c->json) {
		json_t *j = profdiff_json(p, top, 1);

		if (j != NULL && (json_object_set_new(j, "run", json_integer(id)) != 0 ||
		    json_object_set_new(j, "event", ev[0] ? json_string(ev) : json_null()) != 0)) {
			json_decref(j);
			j = NULL;
		}
		r = profile_print_json(j);
		goto out;
	}
	snprintf(label, sizeof(label), "run %" PRId64 " (%s)", id, ev[0] ? ev : "event not said");
	if (profdiff_render_top(p, top, label, &out) != 0 ||
	    fwrite(out.data, 1, out.len, stdout) != out.len) {
		cli_err("writing to standard output failed");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	r = CLI_EXIT_OK;
out:
	profdiff_free(p);
	buf_free(&out);
	http_resp_free(&resp);
	return r;
}

static int
profile_diff_exec(struct cli *c, const struct cmd_args *a)
{
	const struct cmd_entry *e = &cmd_profile_diff_entry;
	struct http_resp ra, rb;
	struct profdiff *p = NULL;
	struct bf_diag d;
	struct buf out;
	char eva[PROFILE_EVENT_MAX], evb[PROFILE_EVENT_MAX], la[128], lb[128];
	int64_t ida, idb;
	size_t top;
	int r;

	http_resp_init(&ra);
	http_resp_init(&rb);
	buf_init(&out, 0);
	bf_diag_clear(&d);
	if ((r = cli_parse_id(e, "RUN_A", a->argv[0], &ida)) != 0 ||
	    (r = cli_parse_id(e, "RUN_B", a->argv[1], &idb)) != 0 ||
	    (r = profile_top(e, a->opt[0], &top)) != 0)
		goto out;
	if ((r = profile_get(c, ida, "folded", &ra, eva)) != 0 ||
	    (r = profile_get(c, idb, "folded", &rb, evb)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if ((r = profdiff_compute(ra.body.data, ra.body.len, rb.body.data, rb.body.len, &p,
	    &d)) != 0) {
		r = profile_diff_error(strcmp(d.field, "b") == 0 ? idb : ida, r, &d);
		goto out;
	}
	/* a timer and a cycle counter weigh stalls differently */
	if (eva[0] != '\0' && evb[0] != '\0' && strcmp(eva, evb) != 0)
		cli_err("note: run %" PRId64 " was sampled on %s, run %" PRId64 " on %s: their "
		    "shares weigh time differently", ida, eva, idb, evb);
	if (c->json) {
		json_t *j = profdiff_json(p, top, 0);

		if (j != NULL && (json_object_set_new(j, "run_a", json_integer(ida)) != 0 ||
		    json_object_set_new(j, "run_b", json_integer(idb)) != 0 ||
		    json_object_set_new(j, "event_a", eva[0] ? json_string(eva) : json_null()) != 0 ||
		    json_object_set_new(j, "event_b", evb[0] ? json_string(evb) : json_null()) != 0)) {
			json_decref(j);
			j = NULL;
		}
		r = profile_print_json(j);
		goto out;
	}
	snprintf(la, sizeof(la), "run %" PRId64 " (%s)", ida, eva[0] ? eva : "event not said");
	snprintf(lb, sizeof(lb), "run %" PRId64 " (%s)", idb, evb[0] ? evb : "event not said");
	if (profdiff_render_text(p, top, la, lb, &out) != 0 ||
	    fwrite(out.data, 1, out.len, stdout) != out.len) {
		cli_err("writing to standard output failed");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	r = CLI_EXIT_OK;
out:
	profdiff_free(p);
	buf_free(&out);
	http_resp_free(&ra);
	http_resp_free(&rb);
	return r;
}

static const struct cmd_opt profile_opts[] = {
	{ .name = "top", .has_arg = 1, .shortc = 'n' },
	{ .name = "svg", .has_arg = 1, .shortc = 0 },
	{ .name = "folded", .has_arg = 0, .shortc = 0 },
	{ .name = NULL }
};

static const struct cmd_opt profile_diff_opts[] = {
	{ .name = "top", .has_arg = 1, .shortc = 'n' },
	{ .name = NULL }
};

const struct cmd_entry cmd_profile_entry = {
	"profile", NULL, "RUN [--top N] [--folded] [--svg FILE]",
	"show a profiled run's heaviest symbols, folded stacks or flame graph",
	"The run's job had \"profile\": {\"perf\": \"record\"}: one extra iteration ran\n"
	"under perf record -g (not a measurement). Prints its symbols by self share\n"
	"of the samples (innermost frame), with the inclusive share (anywhere on the\n"
	"stack), heaviest first, --top N of them (default 20, 0: all), and the perf\n"
	"event sampled on (cycles, or cpu-clock where the machine has no PMU).\n"
	"--folded prints the folded stacks instead (\"comm;outer;...;inner COUNT\",\n"
	"as flamegraph tools read them); --svg FILE writes the coordinator's flame\n"
	"graph to FILE (\"-\": standard output, and nothing else is printed).\n",
	profile_opts, 1, 1, profile_exec
};

const struct cmd_entry cmd_profile_diff_entry = {
	"profile", "diff", "RUN_A RUN_B [--top N]",
	"the symbols whose share of the samples moved most from RUN_A to RUN_B",
	"For each symbol of either profile: its self and inclusive shares, in % of\n"
	"each run's samples, and the change in percentage points; ordered by the\n"
	"larger of the two changes, --top N rows (default 20, 0: all). Runs sampled\n"
	"on different perf events are compared, with a note on standard error.\n",
	profile_diff_opts, 2, 2, profile_diff_exec
};
