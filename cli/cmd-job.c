/*
 * cmd-job.c: the job subcommands: submit, status, runs, wait, watch and
 * cancel. wait and watch share one loop, which follows the job on the
 * event stream; watch draws a progress bar when stderr is a terminal.
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

static int job_follow(struct cli *c, int64_t id, double timeout, int bar, int64_t after);
static int job_timeout(const struct cmd_entry *e, const char *opt, double *timeout);

/* submit FILE [--wait [--timeout S]]: with --wait, one process submits and
 * follows the job on /events from the event before it was made (the 201's
 * X-Benchfleet-Event-Id), as `ssh host cmd` runs and waits; it exits as
 * wait does. */
static int
job_submit(struct cli *c, const struct cmd_args *a)
{
	const char *file = a->argv[0];
	struct http_resp resp;
	struct bf_diag d;
	struct buf b;
	json_t *job = NULL, *doc = NULL;
	char evid[32];
	double timeout = 0;
	int64_t id, after = -1;
	int r;

	buf_init(&b, BF_MAX_API_BODY);
	http_resp_init(&resp);
	if (a->opt[1] != NULL && a->opt[0] == NULL) {
		r = cmd_usage_error(&cmd_submit_entry, "--timeout: only with --wait");
		goto out;
	}
	if ((r = job_timeout(&cmd_submit_entry, a->opt[1], &timeout)) != 0)
		goto out;
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
	if (a->opt[0] != NULL) {
		/* the id is out before the wait: a script can still cancel it */
		fflush(stdout);
		if (http_header(&c->http, "X-Benchfleet-Event-Id", evid, sizeof(evid)) != 0 ||
		    parse_i64(evid, 0, INT64_MAX, &after) != 0)
			after = -1;
		r = job_follow(c, id, timeout, 0, after);
	}
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

/* status's list options, in job_status_opts' order from 0, and the GET
 * /jobs parameter each becomes; the coordinator checks the values. */
static const char *const job_list_params[] = {
	"limit", "before", "state", "recipe", "machine", "q",
};

static int
job_list(struct cli *c, const struct cmd_args *a)
{
	struct http_resp resp;
	struct table t;
	struct bf_diag d;
	struct buf path;
	json_t *doc = NULL, *jobs, *j, *next;
	char b[JOB_NCOLS][128], *esc, sep = '?';
	const char *row[JOB_NCOLS];
	int64_t n;
	size_t i;
	int r;

	http_resp_init(&resp);
	table_init(&t, job_cols, JOB_NCOLS);
	buf_init(&path, 4096);
	if (a->opt[0] != NULL && parse_i64(a->opt[0], 1, INT32_MAX, &n) != 0) {
		r = cmd_usage_error(&cmd_status_entry, "--limit: \"%s\" is not a positive "
		    "integer", a->opt[0]);
		goto out;
	}
	if (buf_puts(&path, "/jobs") != 0) {
		r = CLI_EXIT_FAIL;
		goto out;
	}
	for (i = 0; i < sizeof(job_list_params) / sizeof(job_list_params[0]); i++) {
		if (a->opt[i] == NULL)
			continue;
		if ((esc = http_escape(&c->http, a->opt[i])) == NULL ||
		    buf_printf(&path, "%c%s=%s", sep, job_list_params[i], esc) != 0) {
			free(esc);
			cli_err("--%s: too long", i == 5 ? "search" : job_list_params[i]);
			r = CLI_EXIT_FAIL;
			goto out;
		}
		free(esc);
		sep = '&';
	}
	if ((r = cli_call_json(c, "GET", path.data, NULL, 0, &resp, &doc)) != 0) {
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
	if (json_is_integer(next = json_object_get(doc, "next_before")))
		fprintf(stderr, "older jobs: benchfleet status --before %" JSON_INTEGER_FORMAT
		    " (and the same filters)\n", json_integer_value(next));
out:
	table_free(&t);
	buf_free(&path);
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
	"id", "recipe", "name", "state", "machine_class", "machine_names", "spread",
	"pinned_machine", "created_at", "finished_at", NULL
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
		r = job_list(c, a);
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

/* What wait and watch know of the job, and what they last said. */
struct job_view {
	int64_t id;
	int bar, drawn;
	char state[64];
	int64_t done, total, failed, running;
	char last[64];
	int64_t ldone, ltotal, lfailed;
};

/*
 * Take the job's state and counts from doc (GET /jobs/ID or a "job"
 * event's data: the same keys) and say them; 1 when the state is final
 * (*exit then says how wait exits), 0 when not, BF_ERR_PROTO when doc is
 * malformed.
 */
static int
job_view_take(struct job_view *v, json_t *doc, const char *url, int *exit)
{
	struct bf_diag d;
	const char *state;
	char *st;
	size_t i;

	v->done = v->total = v->failed = v->running = 0;
	if (jx_str(doc, "state", JX_REQUIRED, 63, &state, "", &d) != 0 ||
	    jx_int(doc, "runs_done", JX_OPTIONAL, 0, INT64_MAX, &v->done, "", &d) != 0 ||
	    jx_int(doc, "runs_total", JX_OPTIONAL, 0, INT64_MAX, &v->total, "", &d) != 0 ||
	    jx_int(doc, "runs_failed", JX_OPTIONAL, 0, INT64_MAX, &v->failed, "", &d) != 0 ||
	    jx_int(doc, "runs_running", JX_OPTIONAL, 0, INT64_MAX, &v->running, "", &d) != 0) {
		if (v->drawn)
			fputc('\n', stderr);
		v->drawn = 0;
		cli_err("malformed answer from %s: %s", url, d.msg);
		return BF_ERR_PROTO;
	}
	snprintf(v->state, sizeof(v->state), "%s", state);
	if (v->bar) {
		job_draw_bar(v->id, v->state, v->done, v->total, v->failed, v->running);
		v->drawn = 1;
	} else if (strcmp(v->state, v->last) != 0 || v->done != v->ldone ||
	    v->total != v->ltotal || v->failed != v->lfailed) {
		st = table_sanitize(v->state, 16);
		fprintf(stderr, "job %" PRId64 ": %s, %" PRId64 "/%" PRId64 " runs done, %"
		    PRId64 " failed\n", v->id, st != NULL ? st : "?", v->done, v->total,
		    v->failed);
		free(st);
	}
	snprintf(v->last, sizeof(v->last), "%s", v->state);
	v->ldone = v->done;
	v->ltotal = v->total;
	v->lfailed = v->failed;
	for (i = 0; job_finals[i].state != NULL; i++)
		if (strcmp(job_finals[i].state, v->state) == 0) {
			*exit = job_finals[i].exit;
			return 1;
		}
	return 0;
}

/* Following /events: the event being read and what it led to. */
struct job_follow {
	struct job_view *v;
	const char *url;
	char type[32];
	struct buf data;
	int final, exit;	/* the job ended: wait exits with exit */
	int resync;		/* GET the job again ("reset", or a bad event) */
	int err;		/* a malformed job document */
};

/* One SSE line; non-zero ends the stream. */
static int
job_follow_line(void *arg, const char *text, size_t len)
{
	struct job_follow *f = arg;
	struct bf_diag d;
	json_t *doc;
	int64_t jid;
	int r;

	if (len >= 6 && memcmp(text, "event:", 6) == 0) {
		text += 6, len -= 6;
		while (len > 0 && *text == ' ')
			text++, len--;
		snprintf(f->type, sizeof(f->type), "%.*s", (int)(len < 31 ? len : 31), text);
		return 0;
	}
	if (len >= 5 && memcmp(text, "data:", 5) == 0) {
		text += 5, len -= 5;
		if (len > 0 && *text == ' ')
			text++, len--;
		if (buf_append(&f->data, text, len) != 0) {
			f->resync = 1;
			return 1;
		}
		return 0;
	}
	if (len != 0)
		return 0;	/* id:, retry:, a comment */
	/* the blank line: the event is complete */
	r = 0;
	if (strcmp(f->type, "reset") == 0) {
		f->resync = 1;
		r = 1;
	} else if (strcmp(f->type, "job") == 0 && f->data.len > 0) {
		doc = json_loadb(f->data.data, f->data.len, 0, NULL);
		if (doc == NULL || !json_is_object(doc)) {
			f->resync = 1;
			r = 1;
		} else if (jx_int(doc, "id", JX_REQUIRED, 1, INT64_MAX, &jid, "", &d) == 0 &&
		    jid == f->v->id) {
			r = job_view_take(f->v, doc, f->url, &f->exit);
			if (r < 0)
				f->err = r;
			f->final = r == 1;
			r = r != 0;
		}
		json_decref(doc);
	}
	f->type[0] = '\0';
	buf_reset(&f->data);
	return r;
}

/*
 * Wait for the job to end; bar draws watch's progress bar. The job is
 * read once, then followed on /api/v1/events from the event the read
 * answered with (X-Benchfleet-Event-Id): a "job" event of this job says
 * its new state, so no poll is needed. The job is read again on a
 * "reset", when the stream breaks, and at least every JOB_RESYNC_S (a
 * coordinator whose event hub missed a change is still caught). A
 * coordinator without events (no header, or /events refused) is polled
 * every JOB_POLL_S.
 */
#define JOB_RESYNC_S	10.0
static int
job_follow(struct cli *c, int64_t id, double timeout, int bar, int64_t after)
{
	struct http_resp resp;
	struct sigaction sa, old;
	struct job_view v;
	struct job_follow f;
	json_t *doc = NULL;
	char path[64], evpath[96], evid[32];
	double start, left;
	int r, fin, use_events = 1, ex = CLI_EXIT_FAIL;

	memset(&v, 0, sizeof(v));
	memset(&f, 0, sizeof(f));
	v.ldone = v.ltotal = v.lfailed = -1;
	v.id = id;
	buf_init(&f.data, HTTP_MAX_STREAM_LINE);
	http_resp_init(&resp);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = job_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	v.bar = bar && isatty(STDERR_FILENO);
	snprintf(path, sizeof(path), "/jobs/%" PRId64, v.id);
	start = bf_mono();
	for (;;) {
		/* a caller that knows the event before the job (submit --wait)
		 * starts on the stream; every later turn reads the job first */
		if (after < 0) {
			json_decref(doc);
			doc = NULL;
			if ((r = cli_call_json(c, "GET", path, NULL, 0, &resp, &doc)) != 0) {
				r = cli_exit(r);
				goto out;
			}
			if ((fin = job_view_take(&v, doc, resp.url, &ex)) < 0) {
				r = CLI_EXIT_FAIL;
				goto out;
			}
			if (fin) {
				r = ex;
				goto out;
			}
			if (use_events && (http_header(&c->http, "X-Benchfleet-Event-Id", evid,
			    sizeof(evid)) != 0 || parse_i64(evid, 0, INT64_MAX, &after) != 0))
				use_events = 0;
		}
		left = timeout > 0 ? timeout - (bf_mono() - start) : JOB_RESYNC_S;
		if (left <= 0)
			goto timedout;
		if (use_events) {
			snprintf(evpath, sizeof(evpath), "/events?after=%" PRId64, after);
			f.v = &v;
			f.url = resp.url[0] != '\0' ? resp.url : path;
			f.final = f.resync = f.err = 0;
			f.type[0] = '\0';
			buf_reset(&f.data);
			r = http_stream(&c->http, evpath, (long)((left < JOB_RESYNC_S ? left :
			    JOB_RESYNC_S) * 1000) + 1, job_follow_line, &f, &job_interrupted,
			    &resp);
			if (f.err != 0) {
				r = CLI_EXIT_FAIL;
				goto out;
			}
			if (f.final) {
				r = f.exit;
				goto out;
			}
			if (r == BF_ERR_PROTO && !f.resync)
				use_events = 0;	/* no event stream here: poll */
			else if (r == BF_ERR_LOST)
				job_sleep(JOB_POLL_S);	/* not in a tight loop */
		} else
			job_sleep(left < JOB_POLL_S ? left : JOB_POLL_S);
		after = -1;
		if (job_interrupted) {
			r = 128 + SIGINT;
			goto out;
		}
		if (timeout > 0 && timeout - (bf_mono() - start) <= 0)
			goto timedout;
	}
timedout:
	if (v.drawn)
		fputc('\n', stderr);
	v.drawn = 0;
	cli_err("job %" PRId64 " is still %s after %g s", v.id, v.last, timeout);
	r = CLI_EXIT_TIMEOUT;
out:
	if (v.drawn)
		fputc('\n', stderr);
	sigaction(SIGINT, &old, NULL);
	json_decref(doc);
	buf_free(&f.data);
	http_resp_free(&resp);
	return r;
}

/* --timeout S of wait, watch and submit --wait: 0 (none) or S > 0 */
static int
job_timeout(const struct cmd_entry *e, const char *opt, double *timeout)
{
	*timeout = 0;
	if (opt != NULL && (parse_double(opt, timeout) != 0 || *timeout <= 0))
		return cmd_usage_error(e, "--timeout: \"%s\" is not a positive number of "
		    "seconds", opt);
	return 0;
}

static int
job_poll(struct cli *c, const struct cmd_entry *e, const struct cmd_args *a, int bar)
{
	double timeout;
	int64_t id;
	int r;

	if ((r = cli_parse_id(e, "job id", a->argv[0], &id)) != 0 ||
	    (r = job_timeout(e, a->opt[0], &timeout)) != 0)
		return r;
	return job_follow(c, id, timeout, bar, -1);
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

static const struct cmd_opt job_submit_opts[] = {
	{ .name = "wait", .has_arg = 0, .shortc = 'w' },
	{ .name = "timeout", .has_arg = 1, .shortc = 't' },
	{ .name = NULL }
};

const struct cmd_entry cmd_submit_entry = {
	"submit", NULL, "FILE|- [--wait [--timeout S]]", "submit a job (JSON) and print its id",
	"The job is parsed here first, so malformed JSON is reported with its line\n"
	"and column before anything is sent. With --wait, it then waits for the\n"
	"job in the same process and exits as wait does (0 done, 1 failed or\n"
	"cancelled, 4 when S seconds passed first).\n",
	job_submit_opts, 1, 1, job_submit
};

static const struct cmd_opt job_status_opts[] = {
	{ .name = "limit", .has_arg = 1, .shortc = 'n' },
	{ .name = "before", .has_arg = 1 },
	{ .name = "state", .has_arg = 1 },
	{ .name = "recipe", .has_arg = 1 },
	{ .name = "machine", .has_arg = 1 },
	{ .name = "search", .has_arg = 1 },
	{ .name = NULL }
};

const struct cmd_entry cmd_status_entry = {
	"status", NULL, "[ID] [--limit N] [--before ID] [--state S,...] [--recipe R] "
	"[--machine M] [--search TEXT]", "list jobs, or show one job and its runs",
	"Without ID, the newest jobs (the coordinator's default number, or N),\n"
	"older than job --before ID, in the given states, of a recipe, with a\n"
	"run on a machine, or with TEXT in the id, name or recipe. A page that\n"
	"has older jobs says which --before shows them.\n",
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
