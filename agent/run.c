/*
 * run.c: the step driver. The step is read and validated in full before
 * anything runs; an unusable step is an "error" line, "done" with ok false
 * and exit status 2, so the coordinator never has to guess.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "emit.h"
#include "err.h"
#include "exec.h"
#include "hello.h"
#include "json.h"
#include "caps.h"
#include "metric.h"
#include "run.h"
#include "step.h"

/* Read all of stdin, refusing more than BF_MAX_STEP bytes. */
static int
run_read_stdin(struct buf *b)
{
	char chunk[16 * 1024];
	ssize_t n;
	int r;

	for (;;) {
		n = read(STDIN_FILENO, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = BF_ERR_IO;
			goto out;
		}
		if (n == 0)
			break;
		if ((r = buf_append(b, chunk, (size_t)n)) != 0)
			goto out;
	}
	r = 0;
out:
	return r;
}

static int
run_iteration_line(const struct step *st, int64_t it, int warmup,
    const struct exec_result *res)
{
	struct buf b, missing;
	char msg[128];
	double v;
	size_t i, nfound = 0, nmissing = 0;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	buf_init(&missing, EMIT_MAX_LINE);
	if ((r = buf_printf(&b, "{\"type\":\"iteration\",\"iteration\":%lld,\"warmup\":%s,"
	    "\"exit\":%d,\"signal\":%d,\"timeout\":%s,\"wall_s\":", (long long)it,
	    warmup ? "true" : "false", res->exit_code, res->signal,
	    res->timeout ? "true" : "false")) != 0 ||
	    (r = json_put_num(&b, res->wall_s)) != 0 ||
	    (r = buf_puts(&b, ",\"user_s\":")) != 0 ||
	    (r = json_put_num(&b, res->user_s)) != 0 ||
	    (r = buf_puts(&b, ",\"sys_s\":")) != 0 ||
	    (r = json_put_num(&b, res->sys_s)) != 0 ||
	    (r = buf_printf(&b, ",\"maxrss_kb\":%ld,\"metrics\":{", res->maxrss_kb)) != 0)
		goto out;
	for (i = 0; i < st->nmetrics; i++) {
		const struct step_metric *m = &st->metrics[i];
		const struct buf *src = m->source == STEP_STDOUT ? &res->out : &res->err;

		if (res->exec_errno == 0 &&
		    metric_extract(m, src->data != NULL ? src->data : "", src->len, &v) == 0) {
			if ((r = buf_puts(&b, nfound++ ? "," : "")) != 0 ||
			    (r = json_put_str(&b, m->name, strlen(m->name))) != 0 ||
			    (r = buf_puts(&b, ":")) != 0 ||
			    (r = json_put_num(&b, v)) != 0)
				goto out;
		} else if ((r = buf_puts(&missing, nmissing++ ? "," : "")) != 0 ||
		    (r = json_put_str(&missing, m->name, strlen(m->name))) != 0)
			goto out;
	}
	if ((r = buf_puts(&b, "},\"missing\":[")) != 0 ||
	    (missing.len > 0 && (r = buf_append(&b, missing.data, missing.len)) != 0) ||
	    (r = buf_puts(&b, "]")) != 0)
		goto out;
	if (res->exec_errno != 0) {
		snprintf(msg, sizeof(msg), "%s: %s", res->exec_what, strerror(res->exec_errno));
		if ((r = buf_puts(&b, ",\"error\":")) != 0 ||
		    (r = json_put_str(&b, msg, strlen(msg))) != 0)
			goto out;
	}
	if ((r = buf_puts(&b, "}")) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	buf_free(&missing);
	return r;
}

/* env entries are set in the agent itself, so execvp's PATH search sees a
 * PATH given by the step, as `env PATH=... cmd` would. */
static int
run_setenv(const struct step *st, struct bf_diag *d)
{
	size_t i;

	for (i = 0; i < st->nenv; i++)
		if (setenv(st->env_name[i], st->env_value[i], 1) != 0) {
			bf_diag_set(d, "env", "%s: %s", st->env_name[i], strerror(errno));
			return BF_ERR_SYS;
		}
	return 0;
}

int
run_step(void)
{
	struct step *st = NULL;
	struct exec_result res;
	struct bf_diag d;
	struct buf in;
	int64_t it, total, measured = 0;
	int r, ok = 1, status = RUN_EXIT_ERROR;

	buf_init(&in, BF_MAX_STEP);
	exec_result_init(&res);
	bf_diag_clear(&d);
	if ((r = exec_signals_init()) != 0) {
		bf_diag_set(&d, NULL, "agent: cannot install signal handlers");
		goto out;
	}
	if ((r = hello_emit()) != 0)
		goto out;
	if ((r = run_read_stdin(&in)) != 0) {
		if (r == BF_ERR_TOOBIG)
			bf_diag_set(&d, "step", "larger than %d bytes", BF_MAX_STEP);
		else
			bf_diag_set(&d, "step", "cannot read stdin: %s", bf_err_str(r));
		goto out;
	}
	if ((r = step_parse(in.data != NULL ? in.data : "", in.len, &st, &d)) != 0)
		goto out;
	if ((r = run_setenv(st, &d)) != 0)
		goto out;
	total = st->warmup + st->iterations;
	for (it = 0; it < total; it++) {
		int warm = it < st->warmup;

		exec_result_free(&res);
		exec_result_init(&res);
		if ((r = exec_run(st, it, &res)) != 0) {
			bf_diag_set(&d, NULL, "agent: iteration %lld: %s", (long long)it,
			    bf_err_str(r));
			goto out;
		}
		if ((r = run_iteration_line(st, it, warm, &res)) != 0)
			goto out;
		if (res.exec_errno != 0) {
			/* every further iteration would fail the same way */
			bf_diag_set(&d, "argv[0]", "\"%.200s\": %s: %s", st->argv[0],
			    res.exec_what, strerror(res.exec_errno));
			r = BF_ERR_INVALID;
			goto out;
		}
		if (!warm) {
			measured++;
			if (res.exit_code != 0 || res.signal != 0 || res.timeout)
				ok = 0;
		}
	}
	status = ok ? RUN_EXIT_OK : RUN_EXIT_FAILED;
	r = 0;
out:
	if (r != 0) {
		if (d.msg[0] == '\0')
			bf_diag_set(&d, NULL, "agent: %s", bf_err_str(r));
		/* stdout may be what failed; the lines are best effort then */
		(void)emit_error(d.msg);
		ok = 0;
		status = RUN_EXIT_ERROR;
	}
	(void)emit_done(ok, measured);
	exec_result_free(&res);
	step_free(st);
	buf_free(&in);
	return status;
}
