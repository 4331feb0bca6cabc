/*
 * cmd-job.c: the job subcommands: submit, status, runs, wait, watch and
 * cancel. wait and watch share one poll loop; watch draws a progress bar
 * when stderr is a terminal.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "err.h"
#include "jx.h"
#include "caps.h"
#include "clock.h"
#include "parse.h"
#include "table.h"

#define JOB_POLL_S	0.5
#define JOB_BAR_WIDTH	30
#define JOB_MAX_ITEMS	10000000	/* elements of a list we accept */

/* Job states that end a wait, and the exit status each gives. */
static const struct job_final {
	const char *state;
	int exit;
} job_finals[] = {
	{ "done", CLI_EXIT_OK },
	{ "failed", CLI_EXIT_FAIL },
	{ "cancelled", CLI_EXIT_FAIL },
	{ NULL, 0 }
};

static volatile sig_atomic_t job_interrupted;

static void
job_sigint(int sig)
{
	job_interrupted = 1;
}

/* Read a whole file ("-": stdin) of at most BF_MAX_API_BODY bytes. */
static int
job_read(const char *file, struct buf *b)
{
	FILE *f = NULL;
	char chunk[65536];
	size_t n;
	int r;

	if (strcmp(file, "-") == 0)
		f = stdin;
	else if ((f = fopen(file, "r")) == NULL) {
		cli_err("%s: %s", file, strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if ((r = buf_append(b, chunk, n)) != 0) {
			if (r == BF_ERR_TOOBIG)
				cli_err("%s: larger than %d bytes, the cap on a job", file,
				    BF_MAX_API_BODY);
			else
				cli_err("%s: %s", file, bf_err_str(r));
			goto out;
		}
	}
	if (ferror(f)) {
		cli_err("%s: read failed", file);
		r = BF_ERR_IO;
		goto out;
	}
	r = 0;
out:
	if (f != NULL && f != stdin)
		fclose(f);
	return r;
}

static int
job_submit(struct cli *c, const struct cmd_args *a)
{
	const char *file = a->argv[0];
	struct http_resp resp;
	struct bf_diag d;
	struct buf b;
	json_t *job = NULL, *doc = NULL;
	int64_t id;
	int r;

	buf_init(&b, BF_MAX_API_BODY);
	http_resp_init(&resp);
	if ((r = job_read(file, &b)) != 0) {
		r = CLI_EXIT_FAIL;
		goto out;
	}
	/* Parse here first: a typo gets its line and column without a round trip. */
	if (jx_loads(b.data != NULL ? b.data : "", b.len, BF_MAX_API_BODY, &job, &d) != 0) {
		cli_err("%s: %s", strcmp(file, "-") == 0 ? "<stdin>" : file, d.msg);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if (!json_is_object(job)) {
		cli_err("%s: a job is a JSON object", strcmp(file, "-") == 0 ? "<stdin>" : file);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if ((r = cli_call_json(c, "POST", "/jobs", b.data, b.len, &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (jx_int(doc, "id", JX_REQUIRED, 1, INT64_MAX, &id, "", &d) != 0) {
		cli_err("malformed answer from %s: %s", resp.url, d.msg);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	printf("%" PRId64 "\n", id);
	r = CLI_EXIT_OK;
out:
	json_decref(job);
	json_decref(doc);
	http_resp_free(&resp);
	buf_free(&b);
	return r;
}

/* "done/total" of a job object. */
static const char *
job_progress(const json_t *j, char *buf, size_t bufsz)
{
	char d[32], t[32];

	snprintf(buf, bufsz, "%s/%s", cli_cell(j, "runs_done", d, sizeof(d)),
	    cli_cell(j, "runs_total", t, sizeof(t)));
	return buf;
}

static const struct table_col job_cols[] = {
	{ .head = "ID", .max = 0, .align = TABLE_RIGHT },
	{ .head = "STATE", .max = 12, .align = TABLE_LEFT },
	{ .head = "RECIPE", .max = 24, .align = TABLE_LEFT },
	{ .head = "NAME", .max = 32, .align = TABLE_LEFT },
	{ .head = "DONE", .max = 0, .align = TABLE_RIGHT },
	{ .head = "FAILED", .max = 0, .align = TABLE_RIGHT },
	{ .head = "CREATED", .max = 24, .align = TABLE_LEFT },
};
#define JOB_NCOLS	(sizeof(job_cols) / sizeof(job_cols[0]))

static int
job_list(struct cli *c, const char *limit)
{
	struct http_resp resp;
	struct table t;
	struct bf_diag d;
	json_t *doc = NULL, *jobs, *j;
	char b[JOB_NCOLS][128];
	const char *row[JOB_NCOLS];
	char path[64];
	int64_t n;
	size_t i;
	int r;

	http_resp_init(&resp);
	table_init(&t, job_cols, JOB_NCOLS);
	if (limit != NULL && parse_i64(limit, 1, INT32_MAX, &n) != 0) {
		r = cmd_usage_error(&cmd_status_entry, "--limit: \"%s\" is not a positive "
		    "integer", limit);
		goto out;
	}
	if (limit != NULL)
		snprintf(path, sizeof(path), "/jobs?limit=%" PRId64, n);
	else
		snprintf(path, sizeof(path), "/jobs");
	if ((r = cli_call_json(c, "GET", path, NULL, 0, &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	if (jx_arr(doc, "jobs", JX_REQUIRED, 0, JOB_MAX_ITEMS, &jobs, "", &d) != 0) {
		cli_err("malformed answer from %s: %s", resp.url, d.msg);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	json_array_foreach(jobs, i, j) {
		row[0] = cli_cell(j, "id", b[0], sizeof(b[0]));
		row[1] = cli_cell(j, "state", b[1], sizeof(b[1]));
		row[2] = cli_cell(j, "recipe", b[2], sizeof(b[2]));
		row[3] = cli_cell(j, "name", b[3], sizeof(b[3]));
		row[4] = job_progress(j, b[4], sizeof(b[4]));
		row[5] = cli_cell(j, "runs_failed", b[5], sizeof(b[5]));
		row[6] = cli_time(j, "created_at", b[6], sizeof(b[6]));
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

static const struct table_col run_cols[] = {
	{ .head = "ID", .max = 0, .align = TABLE_RIGHT },
	{ .head = "CELL", .max = 40, .align = TABLE_LEFT },
	{ .head = "BOOT", .max = 0, .align = TABLE_RIGHT },
	{ .head = "STATE", .max = 12, .align = TABLE_LEFT },
	{ .head = "MACHINE", .max = 20, .align = TABLE_LEFT },
	{ .head = "HOSTNAME", .max = 24, .align = TABLE_LEFT },
	{ .head = "EXIT", .max = 0, .align = TABLE_RIGHT },
	{ .head = "SAMPLES", .max = 0, .align = TABLE_RIGHT },
	{ .head = "ERROR", .max = 60, .align = TABLE_LEFT },
};
#define RUN_NCOLS	(sizeof(run_cols) / sizeof(run_cols[0]))

/* The runs table of job id; raw JSON with --json. */
static int
job_runs_print(struct cli *c, int64_t id)
{
	struct http_resp resp;
	struct table t;
	struct bf_diag d;
	json_t *doc = NULL, *runs, *run, *samples;
	char path[64], b[RUN_NCOLS][128];
	const char *row[RUN_NCOLS];
	size_t i;
	int r;

	http_resp_init(&resp);
	table_init(&t, run_cols, RUN_NCOLS);
	snprintf(path, sizeof(path), "/jobs/%" PRId64 "/runs", id);
	if ((r = cli_call_json(c, "GET", path, NULL, 0, &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	if (jx_arr(doc, "runs", JX_REQUIRED, 0, JOB_MAX_ITEMS, &runs, "", &d) != 0) {
		cli_err("malformed answer from %s: %s", resp.url, d.msg);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	json_array_foreach(runs, i, run) {
		row[0] = cli_cell(run, "id", b[0], sizeof(b[0]));
		row[1] = cli_cell(run, "label", b[1], sizeof(b[1]));
		row[2] = cli_cell(run, "boot", b[2], sizeof(b[2]));
		row[3] = cli_cell(run, "state", b[3], sizeof(b[3]));
		row[4] = cli_cell(run, "machine", b[4], sizeof(b[4]));
		row[5] = cli_cell(run, "hostname", b[5], sizeof(b[5]));
		row[6] = cli_cell(run, "exit_status", b[6], sizeof(b[6]));
		samples = json_object_get(run, "samples");
		if (json_is_array(samples)) {
			snprintf(b[7], sizeof(b[7]), "%zu", json_array_size(samples));
			row[7] = b[7];
		} else
			row[7] = "-";
		row[8] = cli_cell(run, "error", b[8], sizeof(b[8]));
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

static const char *const job_fields[] = {
	"id", "recipe", "name", "state", "machine_class", "machine_names", "created_at",
	"finished_at", NULL
};

static int
job_status(struct cli *c, const struct cmd_args *a)
{
	struct http_resp resp;
	json_t *doc = NULL;
	char path[64], b[5][32];
	int64_t id;
	int r;

	http_resp_init(&resp);
	if (a->argc == 0) {
		r = job_list(c, a->opt[0]);
		goto out;
	}
	if ((r = cli_parse_id(&cmd_status_entry, "job id", a->argv[0], &id)) != 0)
		goto out;
	snprintf(path, sizeof(path), "/jobs/%" PRId64, id);
	if ((r = cli_call_json(c, "GET", path, NULL, 0, &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	cli_print_fields(doc, job_fields);
	printf("%-14s %s/%s done, %s failed, %s running, %s queued\n\n", "runs:",
	    cli_cell(doc, "runs_done", b[0], sizeof(b[0])),
	    cli_cell(doc, "runs_total", b[1], sizeof(b[1])),
	    cli_cell(doc, "runs_failed", b[2], sizeof(b[2])),
	    cli_cell(doc, "runs_running", b[3], sizeof(b[3])),
	    cli_cell(doc, "runs_queued", b[4], sizeof(b[4])));
	r = job_runs_print(c, id);
out:
	json_decref(doc);
	http_resp_free(&resp);
	return r;
}

static int
job_runs(struct cli *c, const struct cmd_args *a)
{
	int64_t id;
	int r;

	if ((r = cli_parse_id(&cmd_runs_entry, "job id", a->argv[0], &id)) != 0)
		return r;
	return job_runs_print(c, id);
}

static void
job_sleep(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	/* EINTR ends the nap early; the loop checks job_interrupted. */
	nanosleep(&ts, NULL);
}

/* The bar: "[######------] 12/40 runs done, 1 failed, 2 running  running". */
static void
job_draw_bar(int64_t id, const char *state, int64_t done, int64_t total, int64_t failed,
    int64_t running)
{
	char bar[JOB_BAR_WIDTH + 1], *st;
	int64_t fill = 0;
	size_t i;

	if (total > 0)
		fill = (done >= total ? JOB_BAR_WIDTH : done * JOB_BAR_WIDTH / total);
	for (i = 0; i < JOB_BAR_WIDTH; i++)
		bar[i] = (int64_t)i < fill ? '#' : '-';
	bar[JOB_BAR_WIDTH] = '\0';
	st = table_sanitize(state, 16);
	fprintf(stderr, "\r\033[Kjob %" PRId64 " [%s] %" PRId64 "/%" PRId64 " runs done, %"
	    PRId64 " failed, %" PRId64 " running  %s", id, bar, done, total, failed, running,
	    st != NULL ? st : "?");
	fflush(stderr);
	free(st);
}

/* Poll the job until it ends; bar draws watch's progress bar. */
static int
job_poll(struct cli *c, const struct cmd_entry *e, const struct cmd_args *a, int bar)
{
	struct http_resp resp;
	struct sigaction sa, old;
	struct bf_diag d;
	json_t *doc = NULL;
	const char *state;
	char path[64], last[64] = "", *st;
	int64_t id, done, total, failed, running;
	int64_t ldone = -1, ltotal = -1, lfailed = -1;
	double timeout = 0, start, left;
	size_t i;
	int r, drawn = 0;

	http_resp_init(&resp);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = job_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	if ((r = cli_parse_id(e, "job id", a->argv[0], &id)) != 0)
		goto out;
	if (a->opt[0] != NULL && (parse_double(a->opt[0], &timeout) != 0 || timeout <= 0)) {
		r = cmd_usage_error(e, "--timeout: \"%s\" is not a positive number of seconds",
		    a->opt[0]);
		goto out;
	}
	bar = bar && isatty(STDERR_FILENO);
	snprintf(path, sizeof(path), "/jobs/%" PRId64, id);
	start = bf_mono();
	for (;;) {
		json_decref(doc);
		doc = NULL;
		if ((r = cli_call_json(c, "GET", path, NULL, 0, &resp, &doc)) != 0) {
			if (drawn)
				fputc('\n', stderr);
			r = cli_exit(r);
			goto out;
		}
		done = total = failed = running = 0;
		if (jx_str(doc, "state", JX_REQUIRED, 63, &state, "", &d) != 0 ||
		    jx_int(doc, "runs_done", JX_OPTIONAL, 0, INT64_MAX, &done, "", &d) != 0 ||
		    jx_int(doc, "runs_total", JX_OPTIONAL, 0, INT64_MAX, &total, "", &d) != 0 ||
		    jx_int(doc, "runs_failed", JX_OPTIONAL, 0, INT64_MAX, &failed, "", &d) != 0 ||
		    jx_int(doc, "runs_running", JX_OPTIONAL, 0, INT64_MAX, &running, "", &d) != 0) {
			if (drawn)
				fputc('\n', stderr);
			cli_err("malformed answer from %s: %s", resp.url, d.msg);
			r = CLI_EXIT_FAIL;
			goto out;
		}
		if (bar) {
			job_draw_bar(id, state, done, total, failed, running);
			drawn = 1;
		} else if (strcmp(state, last) != 0 || done != ldone || total != ltotal ||
		    failed != lfailed) {
			st = table_sanitize(state, 16);
			fprintf(stderr, "job %" PRId64 ": %s, %" PRId64 "/%" PRId64
			    " runs done, %" PRId64 " failed\n", id, st != NULL ? st : "?", done,
			    total, failed);
			free(st);
		}
		snprintf(last, sizeof(last), "%s", state);
		ldone = done;
		ltotal = total;
		lfailed = failed;
		for (i = 0; job_finals[i].state != NULL; i++)
			if (strcmp(job_finals[i].state, state) == 0)
				break;
		if (job_finals[i].state != NULL) {
			if (drawn)
				fputc('\n', stderr);
			r = job_finals[i].exit;
			goto out;
		}
		left = timeout > 0 ? timeout - (bf_mono() - start) : JOB_POLL_S;
		if (left <= 0) {
			if (drawn)
				fputc('\n', stderr);
			cli_err("job %" PRId64 " is still %s after %g s", id, last, timeout);
			r = CLI_EXIT_TIMEOUT;
			goto out;
		}
		job_sleep(left < JOB_POLL_S ? left : JOB_POLL_S);
		if (job_interrupted) {
			if (drawn)
				fputc('\n', stderr);
			r = 128 + SIGINT;
			goto out;
		}
	}
out:
	sigaction(SIGINT, &old, NULL);
	json_decref(doc);
	http_resp_free(&resp);
	return r;
}

static int
job_wait(struct cli *c, const struct cmd_args *a)
{
	return job_poll(c, &cmd_wait_entry, a, 0);
}

static int
job_watch(struct cli *c, const struct cmd_args *a)
{
	return job_poll(c, &cmd_watch_entry, a, 1);
}

static int
job_cancel(struct cli *c, const struct cmd_args *a)
{
	struct http_resp resp;
	json_t *doc = NULL;
	char path[64], b[64];
	int64_t id;
	int r;

	http_resp_init(&resp);
	if ((r = cli_parse_id(&cmd_cancel_entry, "job id", a->argv[0], &id)) != 0)
		goto out;
	snprintf(path, sizeof(path), "/jobs/%" PRId64 "/cancel", id);
	if ((r = cli_call_json(c, "POST", path, NULL, 0, &resp, &doc)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	printf("job %" PRId64 ": ", id);
	cli_print_line(stdout, NULL, cli_cell(doc, "state", b, sizeof(b)));
	r = CLI_EXIT_OK;
out:
	json_decref(doc);
	http_resp_free(&resp);
	return r;
}

static const struct cmd_opt job_wait_opts[] = {
	{ .name = "timeout", .has_arg = 1, .shortc = 't' },
	{ .name = NULL }
};

const struct cmd_entry cmd_submit_entry = {
	"submit", NULL, "FILE|-", "submit a job (JSON) and print its id",
	"The job is parsed here first, so malformed JSON is reported with its line\n"
	"and column before anything is sent.\n",
	NULL, 1, 1, job_submit
};

static const struct cmd_opt job_status_opts[] = {
	{ .name = "limit", .has_arg = 1, .shortc = 'n' },
	{ .name = NULL }
};

const struct cmd_entry cmd_status_entry = {
	"status", NULL, "[ID] [--limit N]", "list jobs, or show one job and its runs",
	"Without ID, the newest jobs (the coordinator's default number, or N).\n",
	job_status_opts, 0, 1, job_status
};

const struct cmd_entry cmd_runs_entry = {
	"runs", NULL, "ID", "list the runs of a job",
	NULL, NULL, 1, 1, job_runs
};

const struct cmd_entry cmd_wait_entry = {
	"wait", NULL, "ID [--timeout S]", "wait for a job to end",
	"Prints progress to stderr when it changes. Exits 0 when the job is done,\n"
	"1 when it failed or was cancelled, 4 when S seconds passed first.\n",
	job_wait_opts, 1, 1, job_wait
};

const struct cmd_entry cmd_watch_entry = {
	"watch", NULL, "ID [--timeout S]", "wait for a job, drawing a progress bar",
	"Like wait; on a terminal it draws a live progress bar on stderr.\n",
	job_wait_opts, 1, 1, job_watch
};

const struct cmd_entry cmd_cancel_entry = {
	"cancel", NULL, "ID", "cancel a job",
	NULL, NULL, 1, 1, job_cancel
};
