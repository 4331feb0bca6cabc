/*
 * cmd-repro.c: federation from the command line: reproduce (post a bundle
 * file, or ask the coordinator to fetch a bundle URL, and optionally wait
 * for the verdicts) and publish (let other labs fetch a job's bundle).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "caps.h"
#include "cli.h"
#include "err.h"
#include "jx.h"
#include "parse.h"

#define REPRO_POLL_S	2

/* The whole of path into b (at most BF_MAX_BUNDLE bytes). */
static int
read_file(const char *path, struct buf *b)
{
	char chunk[65536];
	size_t n;
	FILE *f;
	int r = 0;

	if ((f = fopen(path, "rb")) == NULL) {
		cli_err("%s: cannot open", path);
		return BF_ERR_IO;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if ((r = buf_append(b, chunk, n)) != 0) {
			cli_err("%s: larger than %d bytes", path, BF_MAX_BUNDLE);
			break;
		}
	if (r == 0 && ferror(f)) {
		cli_err("%s: read error", path);
		r = BF_ERR_IO;
	}
	fclose(f);
	return r;
}

static int
repro_exec(struct cli *c, const struct cmd_args *a)
{
	const struct cmd_entry *e = &cmd_reproduce_entry;
	const char *src = a->argv[0];
	struct http_resp resp;
	struct bf_diag d;
	struct buf file;
	json_t *req = NULL, *bundle = NULL, *ans = NULL, *st = NULL;
	char *body = NULL, path[96];
	double delta = -1;
	int64_t id;
	int r;

	http_resp_init(&resp);
	buf_init(&file, BF_MAX_BUNDLE);
	bf_diag_clear(&d);
	if (a->opt[0] != NULL && (parse_double(a->opt[0], &delta) != 0 || !(delta > 0) ||
	    delta > 100)) {
		r = cmd_usage_error(e, "--delta: \"%s\" is not a percentage in (0, 100]",
		    a->opt[0]);
		goto out;
	}
	if ((req = json_object()) == NULL)
		goto oom;
	if (strncmp(src, "http://", 7) == 0 || strncmp(src, "https://", 8) == 0) {
		if (json_object_set_new(req, "url", json_string(src)) != 0)
			goto oom;
	} else {
		if (read_file(src, &file) != 0) {
			r = CLI_EXIT_FAIL;
			goto out;
		}
		if (jx_loads(file.data != NULL ? file.data : "", file.len, BF_MAX_BUNDLE, &bundle,
		    &d) != 0) {
			cli_err("%s: %s", src, d.msg);
			r = CLI_EXIT_FAIL;
			goto out;
		}
		if (json_object_set(req, "bundle", bundle) != 0)
			goto oom;
	}
	if (delta > 0 && json_object_set_new(req, "delta_pct", json_real(delta)) != 0)
		goto oom;
	if (a->opt[2] != NULL && json_object_set_new(req, "override", json_true()) != 0)
		goto oom;
	if (a->opt[3] != NULL) {
		int64_t cj;

		if ((r = cli_parse_id(e, "--compare", a->opt[3], &cj)) != 0)
			goto out;
		if (json_object_set_new(req, "compare_job", json_integer(cj)) != 0)
			goto oom;
	}
	if ((body = json_dumps(req, JSON_COMPACT)) == NULL)
		goto oom;
	if (strlen(body) > BF_MAX_API_BODY) {
		cli_err("%s: a bundle over %d bytes cannot be posted; publish it and give its "
		    "URL instead", src, BF_MAX_API_BODY);
		r = CLI_EXIT_FAIL;
		goto out;
	}
	if ((r = cli_call_json(c, "POST", "/reproductions", body, strlen(body), &resp,
	    &ans)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	id = json_integer_value(json_object_get(ans, "id"));
	if (a->opt[1] == NULL) {
		if (c->json)
			r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		else {
			printf("%" PRId64 "\n", id);
			r = CLI_EXIT_OK;
		}
		goto out;
	}
	fprintf(stderr, "reproduction %" PRId64 " (job %" PRId64 "): waiting\n", id,
	    (int64_t)json_integer_value(json_object_get(ans, "job_id")));
	snprintf(path, sizeof(path), "/reproductions/%" PRId64, id);
	for (;;) {
		http_resp_free(&resp);
		http_resp_init(&resp);
		json_decref(st);
		st = NULL;
		if ((r = cli_call_json(c, "GET", path, NULL, 0, &resp, &st)) != 0) {
			r = cli_exit(r);
			goto out;
		}
		if (json_is_string(json_object_get(st, "state")) &&
		    strcmp(json_string_value(json_object_get(st, "state")), "running") != 0)
			break;
		{
			struct timespec ts = { REPRO_POLL_S, 0 };

			nanosleep(&ts, NULL);
		}
	}
	if (c->json) {
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		goto out;
	}
	snprintf(path, sizeof(path), "/reproductions/%" PRId64 "?format=text", id);
	http_resp_free(&resp);
	http_resp_init(&resp);
	if ((r = cli_call(c, "GET", path, NULL, 0, &resp)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	goto out;
oom:
	cli_err("out of memory");
	r = CLI_EXIT_FAIL;
out:
	free(body);
	json_decref(req);
	json_decref(bundle);
	json_decref(ans);
	json_decref(st);
	buf_free(&file);
	http_resp_free(&resp);
	return r;
}

static int
publish_exec(struct cli *c, const struct cmd_args *a)
{
	struct http_resp resp;
	char path[64];
	int64_t id;
	int r;

	http_resp_init(&resp);
	if ((r = cli_parse_id(&cmd_publish_entry, "job id", a->argv[0], &id)) != 0)
		goto out;
	snprintf(path, sizeof(path), "/jobs/%" PRId64 "/publish", id);
	if ((r = cli_call(c, "POST", path, "", 0, &resp)) != 0) {
		r = cli_exit(r);
		goto out;
	}
	if (c->json)
		r = cli_print_body(&resp) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	else {
		printf("job %" PRId64 " published\n", id);
		r = CLI_EXIT_OK;
	}
out:
	http_resp_free(&resp);
	return r;
}

static const struct cmd_opt repro_opts[] = {
	{ .name = "delta", .has_arg = 1, .shortc = 'd' },
	{ .name = "wait", .has_arg = 0, .shortc = 'w' },
	{ .name = "override", .has_arg = 0, .shortc = 0 },
	{ .name = "compare", .has_arg = 1, .shortc = 'c' },
	{ .name = NULL }
};

const struct cmd_entry cmd_reproduce_entry = {
	"reproduce", NULL, "FILE|URL [--delta PCT] [--wait] [--compare JOB | --override]",
	"rerun another lab's result bundle here and compare",
	"FILE is a bundle (benchfleet export ID > bundle.json); a URL\n"
	"(http://other-lab:8080/api/v1/jobs/ID/bundle) is fetched by the coordinator.\n"
	"Machines here must match the bundle's fingerprints, the bundle's recipe must\n"
	"be installed here (same canonical sha256), and the bundle must be signed by a\n"
	"trusted lab (benchfleet labs trust), or an admin gives --override (audited).\n"
	"--compare JOB compares the bundle with a job that ran here and runs nothing\n"
	"(any bundle). --delta is the equivalence margin in percent (default 2).\n"
	"Prints the reproduction id; with --wait, waits for the rerun and prints the\n"
	"report with the verdicts.\n",
	repro_opts, 1, 1, repro_exec
};

const struct cmd_entry cmd_publish_entry = {
	"publish", NULL, "ID",
	"let other labs fetch a job's bundle (admin)",
	NULL, NULL, 1, 1, publish_exec
};
