/*
 * run.c: the step driver. The step is read and validated in full before
 * anything runs; an unusable step is an "error" line, "done" with ok false
 * and exit status 2, so the coordinator never has to guess.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "cmdcache.h"
#include "counters.h"
#include "dpkgcache.h"
#include "emit.h"
#include "err.h"
#include "exec.h"
#include "hello.h"
#include "ajson.h"
#include "knobset.h"
#include "service.h"
#include "caps.h"
#include "metric.h"
#include "package.h"
#include "profile.h"
#include "run.h"
#include "snapshot.h"
#include "step.h"
#include "workdir.h"

/* Wait until stdin has a byte (or its end) for at most wait_s seconds:
 * 0, or BF_ERR_TIMEOUT when none came. */
static int
run_wait_stdin(int wait_s)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	int64_t end = bf_mono_ms() + (int64_t)wait_s * 1000, left;
	int n;

	for (;;) {
		if ((left = end - bf_mono_ms()) <= 0)
			return BF_ERR_TIMEOUT;
		n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return BF_ERR_IO;
	}
}

/* Read all of stdin, refusing more than BF_MAX_STEP bytes; the first byte
 * within wait_s seconds (0: no limit). */
static int
run_read_stdin(struct buf *b, int wait_s)
{
	char chunk[16 * 1024];
	ssize_t n;
	int r;

	if (wait_s > 0 && (r = run_wait_stdin(wait_s)) != 0)
		return r;
	for (;;) {
		n = read(STDIN_FILENO, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return BF_ERR_IO;
		if (n == 0)
			return 0;
		if ((r = buf_append(b, chunk, (size_t)n)) != 0)
			return r;
	}
}

/* snapshot_opts.run: a lookup of the snapshot (rpm -qf, cc --version),
 * captured and untimed; only its exit status 0 counts. */
static int
run_snapshot_cmd(void *arg, char *const *argv, struct buf *out)
{
	const struct step *st = arg;
	struct exec_result res;
	size_t room;
	int r;

	exec_result_init(&res);
	r = exec_run_cmd(st, argv, 0, 0, BF_SNAPSHOT_CMD_S, &res);
	if (r == 0 && (res.exec_errno != 0 || res.exit_code != 0 || res.timeout))
		r = BF_ERR_STATE;
	room = out->max > out->len ? out->max - out->len : 0;
	if (r == 0 && res.out.len > 0)
		r = buf_append(out, res.out.data, res.out.len < room ? res.out.len : room);
	exec_result_free(&res);
	return r;
}

/* The program a built-in wrapper runs (`@agent work serve|fanout ... --
 * PROG ...`, recipes/workloads/multi.c), or NULL: it is the binary that
 * matters, so the snapshot names it beside the agent. */
static const char *
run_wrapped(char *const *argv, size_t argc)
{
	size_t i;

	if (argc < 4 || strcmp(argv[0], "@agent") != 0 || strcmp(argv[1], "work") != 0 ||
	    (strcmp(argv[2], "serve") != 0 && strcmp(argv[2], "fanout") != 0))
		return NULL;
	for (i = 3; i + 1 < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return argv[i + 1];
	return NULL;
}

/* The file name in the directory of the agent's own binary. */
static int
run_cache_path(const char *name, char *out, size_t outsz)
{
	size_t nl = strlen(name) + 1;
	char *slash;
	ssize_t n;

	if (outsz < nl + 2 || (n = readlink("/proc/self/exe", out, outsz - nl - 1)) <= 0 ||
	    (size_t)n >= outsz - nl - 1)
		return BF_ERR_NOTFOUND;
	out[n] = '\0';
	if ((slash = strrchr(out, '/')) == NULL)
		return BF_ERR_NOTFOUND;
	memcpy(slash + 1, name, nl);
	return 0;
}

/* The "snapshot" line: the environment after the knobs, with every binary
 * the step runs (workload, setup, pre_iteration, services). */
static int
run_snapshot(const struct step *st, const struct snapshot_held *held)
{
	const char *bins[2 * STEP_MAX_CMDS + 2 * STEP_MAX_SERVICES + 3], *w;
	const char *pkgs[STEP_MAX_PACKAGES + 1];
	struct snapshot_opts o = { .root = "", .bins = bins, .cwd = st->cwd,
		.pkgs = pkgs, .run = run_snapshot_cmd, .arg = (void *)st, .held = held };
	char cache[4096], cc_cache[4096];
	size_t i, n = 0;

	/* the caches live beside the agent (~/.benchfleet) */
	if (run_cache_path(DPKGCACHE_NAME, cache, sizeof(cache)) == 0)
		o.dpkg_cache = cache;
	if (run_cache_path(CMDCACHE_CC_NAME, cc_cache, sizeof(cc_cache)) == 0)
		o.cc_cache = cc_cache;

	for (i = 0; i < st->npackages; i++)
		pkgs[i] = st->packages[i].debian;
	pkgs[i] = NULL;

	bins[n++] = st->argv[0];
	if ((w = run_wrapped(st->argv, st->argc)) != NULL)
		bins[n++] = w;
	for (i = 0; i < st->nsetup; i++)
		bins[n++] = st->setup[i].argv[0];
	for (i = 0; i < st->npre; i++)
		bins[n++] = st->pre[i].argv[0];
	for (i = 0; i < st->nservices; i++) {
		bins[n++] = st->services[i].cmd.argv[0];
		if ((w = run_wrapped(st->services[i].cmd.argv, st->services[i].cmd.argc)) != NULL)
			bins[n++] = w;
	}
	bins[n] = NULL;
	return snapshot_emit(&o);
}

/* The step's gap before an iteration, whole: nanosleep resumed after a
 * signal (a workload's SIGCHLD is reaped in exec.c). */
static void
run_pause_ms(int64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* exec_set_attach: the counters go on the workload before its exec. */
static void
run_attach(pid_t pid, void *arg)
{
	counters_attach(arg, pid, 1);
}

/* The iteration line; profile: the profiled one, which is no measurement. */
static int
run_iteration_line(const struct step *st, int64_t it, int warmup, int profile,
    const struct exec_result *res)
{
	struct buf b, missing, file;
	char msg[128];
	double v;
	size_t i, nfound = 0, nmissing = 0;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	buf_init(&missing, EMIT_MAX_LINE);
	buf_init(&file, BF_MAX_CAPTURE);
	if ((r = buf_printf(&b, "{\"type\":\"iteration\",\"iteration\":%lld,\"warmup\":%s,%s"
	    "\"exit\":%d,\"signal\":%d,\"timeout\":%s,\"wall_s\":", (long long)it,
	    warmup ? "true" : "false", profile ? "\"profile\":true," : "", res->exit_code,
	    res->signal,
	    res->timeout ? "true" : "false")) != 0 ||
	    (r = ajson_put_num(&b, res->wall_s)) != 0 ||
	    (r = buf_puts(&b, ",\"user_s\":")) != 0 ||
	    (r = ajson_put_num(&b, res->user_s)) != 0 ||
	    (r = buf_puts(&b, ",\"sys_s\":")) != 0 ||
	    (r = ajson_put_num(&b, res->sys_s)) != 0 ||
	    (r = buf_printf(&b, ",\"maxrss_kb\":%ld,\"metrics\":{", res->maxrss_kb)) != 0)
		goto out;
	for (i = 0; i < st->nmetrics; i++) {
		const struct step_metric *m = &st->metrics[i];
		const struct buf *src = m->source == STEP_STDOUT ? &res->out : &res->err;

		if (m->source == STEP_FILE) {
			/* what the program wrote in the workdir; no file, no metric */
			buf_reset(&file);
			if (res->exec_errno != 0 || workdir_read(st, m->file, &file) != 0)
				buf_reset(&file);
			src = &file;
		}
		if (res->exec_errno == 0 &&
		    metric_extract(m, src->data != NULL ? src->data : "", src->len, &v) == 0) {
			if ((r = buf_puts(&b, nfound++ ? "," : "")) != 0 ||
			    (r = ajson_put_str(&b, m->name, strlen(m->name))) != 0 ||
			    (r = buf_puts(&b, ":")) != 0 ||
			    (r = ajson_put_num(&b, v)) != 0)
				goto out;
		} else if ((r = buf_puts(&missing, nmissing++ ? "," : "")) != 0 ||
		    (r = ajson_put_str(&missing, m->name, strlen(m->name))) != 0)
			goto out;
	}
	if ((r = buf_puts(&b, "},\"missing\":[")) != 0 ||
	    (missing.len > 0 && (r = buf_append(&b, missing.data, missing.len)) != 0) ||
	    (r = buf_puts(&b, "]")) != 0)
		goto out;
	if (res->exec_errno != 0) {
		snprintf(msg, sizeof(msg), "%s: %s", res->exec_what, strerror(res->exec_errno));
		if ((r = buf_puts(&b, ",\"error\":")) != 0 ||
		    (r = ajson_put_str(&b, msg, strlen(msg))) != 0)
			goto out;
	}
	if ((r = buf_puts(&b, "}")) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	buf_free(&missing);
	buf_free(&file);
	return r;
}

/* Before an iteration: the files "file" metrics read are removed, so one
 * the program fails to write is missing, never the last iteration's. */
static void
run_unlink_results(const struct step *st)
{
	size_t i;

	for (i = 0; i < st->nmetrics; i++)
		if (st->metrics[i].source == STEP_FILE)
			workdir_unlink(st, st->metrics[i].file);
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

/* From the fatal-signal handler: nothing of the step may persist. */
static void
run_on_fatal(void)
{
	service_kill_signal();
	knobset_restore_signal();
}

/* The last line of a command's stderr (else stdout), for a message. */
static void
run_tail(const struct exec_result *res, char *out, size_t outsz)
{
	const struct buf *b = res->err.len > 0 ? &res->err : &res->out;
	size_t end, start, i, o = 0;

	out[0] = '\0';
	if (b->data == NULL || b->len == 0)
		return;
	end = b->len;
	while (end > 0 && (b->data[end - 1] == '\n' || b->data[end - 1] == '\r'))
		end--;
	start = end;
	while (start > 0 && b->data[start - 1] != '\n')
		start--;
	if (end - start > 200)
		start = end - 200;
	o = (size_t)snprintf(out, outsz, ": ");
	for (i = start; i < end && o + 1 < outsz; i++)
		out[o++] = (unsigned char)b->data[i] < 0x20 ? ' ' : b->data[i];
	out[o] = '\0';
}

/* Run the commands of a list (setup, pre_iteration); the first that fails
 * fails the step. Their output is captured, not forwarded. */
static int
run_cmds(const struct step *st, const struct step_cmd *cmds, size_t n, const char *what,
    int64_t it, struct bf_diag *d)
{
	struct exec_result res;
	char field[48], tail[256];
	size_t i;
	int r = 0;

	for (i = 0; i < n; i++) {
		exec_result_init(&res);
		snprintf(field, sizeof(field), "%s[%zu]", what, i);
		if ((r = exec_run_cmd(st, cmds[i].argv, it, 0, st->timeout_s, &res)) != 0) {
			bf_diag_set(d, field, "agent: %s", bf_err_str(r));
		} else if (res.exec_errno != 0) {
			bf_diag_set(d, field, "\"%.200s\": %s: %s", cmds[i].argv[0],
			    res.exec_what, strerror(res.exec_errno));
			r = BF_ERR_INVALID;
		} else if (res.exit_code != 0 || res.timeout) {
			run_tail(&res, tail, sizeof(tail));
			if (res.timeout)
				bf_diag_set(d, field, "\"%.200s\" timed out after %lld s%s",
				    cmds[i].argv[0], (long long)st->timeout_s, tail);
			else
				bf_diag_set(d, field, "\"%.200s\" exited with status %d%s",
				    cmds[i].argv[0], res.exit_code, tail);
			r = BF_ERR_STATE;
		}
		exec_result_free(&res);
		if (r != 0)
			break;
	}
	return r;
}

/*
 * After the measured iterations: the workload once more under perf record
 * (pre_iteration and drop_caches as before any iteration). Its line says
 * "profile": true; whatever it exits with, the measured run stands.
 */
static int
run_profile(const struct step *st, struct profile *prof, int64_t it, struct bf_diag *d)
{
	struct exec_result res;
	int r;

	exec_result_init(&res);
	if ((r = run_cmds(st, st->pre, st->npre, "pre_iteration", it, d)) != 0)
		goto out;
	if ((r = knobset_actions(st, d)) != 0)
		goto out;
	run_unlink_results(st);
	if ((r = profile_record(prof, st, it, &res, d)) != 0) {
		if (d->msg[0] == '\0')
			bf_diag_set(d, "profile", "agent: %s", bf_err_str(r));
		goto out;
	}
	if ((r = run_iteration_line(st, it, 0, 1, &res)) != 0)
		goto out;
	if (res.exec_errno != 0) {
		fprintf(stderr, "profile: \"%.200s\": %s: %s\n", prof->perf, res.exec_what,
		    strerror(res.exec_errno));
	} else if (res.exit_code != 0) {
		fprintf(stderr, "profile: perf record exited with status %d\n", res.exit_code);
	}
	r = profile_emit(prof, st);
out:
	profile_cleanup(prof);
	exec_result_free(&res);
	return r;
}

int
run_step(int wait_s)
{
	struct step *st = NULL;
	struct exec_result res;
	struct counters ctr;
	struct snapshot_held held;
	struct profile prof;
	struct bf_diag d;
	struct buf in;
	pid_t svc[16];
	int64_t it, total, measured = 0;
	size_t i;
	int r, ok = 1, status = RUN_EXIT_ERROR;

	counters_init(&ctr, "");
	memset(&held, 0, sizeof(held));
	memset(&prof, 0, sizeof(prof));
	buf_init(&in, BF_MAX_STEP);
	exec_result_init(&res);
	bf_diag_clear(&d);
	if ((r = exec_signals_init()) != 0) {
		bf_diag_set(&d, NULL, "agent: cannot install signal handlers");
		goto out;
	}
	if ((r = hello_emit()) != 0)
		goto out;
	/* started ahead (runner_prestart), the agent waits here for its step:
	 * the counters' opens are done now, off the step's clock */
	counters_prepare(&ctr);
	snapshot_prepare(&(struct snapshot_opts){ .root = "" }, &held);
	if ((r = run_read_stdin(&in, wait_s)) != 0) {
		if (r == BF_ERR_TOOBIG)
			bf_diag_set(&d, "step", "larger than %d bytes", BF_MAX_STEP);
		else if (r == BF_ERR_TIMEOUT)
			bf_diag_set(&d, "step", "none came within %d s: not waiting longer", wait_s);
		else
			bf_diag_set(&d, "step", "cannot read stdin: %s", bf_err_str(r));
		goto out;
	}
	if ((r = step_parse(in.data != NULL ? in.data : "", in.len, &st, &d)) != 0)
		goto out;
	if ((r = run_setenv(st, &d)) != 0)
		goto out;
	/* a missing program fails the step before any knob is touched */
	if ((r = package_check(st, &d)) != 0 || (r = workdir_make(st, WORKDIR_BASE, &d)) != 0)
		goto out;
	/* a machine without perf fails this run before anything runs */
	if (st->profile && (r = profile_find(&prof, &d)) != 0)
		goto out;
	exec_set_fatal_hook(run_on_fatal);
	if ((r = bind_resolve(&st->bind, d.msg, sizeof(d.msg))) != 0)
		goto out;
	/* nothing is measured unless every knob reads back as requested */
	if ((r = knobset_apply(st, &d)) != 0)
		goto out;
	if ((r = run_snapshot(st, &held)) != 0)
		goto out;
	for (i = 0; i < st->npmu; i++)
		if ((r = counters_add_raw(&ctr, st->pmu_name[i], st->pmu_spec[i])) != 0) {
			bf_diag_set(&d, "pmu", "%s: %s", st->pmu_name[i], bf_err_str(r));
			goto out;
		}
	exec_set_attach(run_attach, &ctr);
	if ((r = run_cmds(st, st->setup, st->nsetup, "setup", 0, &d)) != 0)
		goto out;
	if ((r = service_start_all(st, &d)) != 0)
		goto out;
	total = st->warmup + st->iterations;
	for (it = 0; it < total; it++) {
		int warm = it < st->warmup;

		if (it > 0 && st->gap_ms > 0)
			run_pause_ms(st->gap_ms);
		exec_result_free(&res);
		exec_result_init(&res);
		if ((r = run_cmds(st, st->pre, st->npre, "pre_iteration", it, &d)) != 0)
			goto out;
		if ((r = knobset_actions(st, &d)) != 0)
			goto out;
		run_unlink_results(st);
		counters_before(&ctr);
		if ((r = exec_run(st, it, &res)) != 0) {
			bf_diag_set(&d, NULL, "agent: iteration %lld: %s", (long long)it,
			    bf_err_str(r));
			goto out;
		}
		counters_after(&ctr, svc, exec_kept_pids(svc, sizeof(svc) / sizeof(svc[0])));
		if (res.exec_errno == 0)
			counters_rusage(&ctr, res.minflt, res.majflt);
		if ((r = run_iteration_line(st, it, warm, 0, &res)) != 0 ||
		    (r = counters_emit(&ctr, it)) != 0)
			goto out;
		if (res.exec_errno != 0) {
			/* every further iteration would fail the same way */
			bf_diag_set(&d, "argv[0]", "\"%.200s\": %s: %s", st->argv[0],
			    res.exec_what, strerror(res.exec_errno));
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((r = service_check(st, &d)) != 0)
			goto out;
		if (!warm) {
			measured++;
			if (res.exit_code != 0 || res.signal != 0 || res.timeout)
				ok = 0;
		}
	}
	if (st->profile && (r = run_profile(st, &prof, total, &d)) != 0)
		goto out;
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
	/* services first: they may hold knob-governed memory */
	service_stop_all();
	bf_diag_clear(&d);
	if (workdir_remove(st) != 0) {
		bf_diag_set(&d, STEP_FIELD_FILES, "cannot remove the workdir %s", st->cwd);
		(void)emit_error(d.msg);
		ok = 0;
		status = RUN_EXIT_ERROR;
		bf_diag_clear(&d);
	}
	if (knobset_restore(&d) != 0) {
		(void)emit_error(d.msg);
		ok = 0;
		status = RUN_EXIT_ERROR;
	}
	(void)emit_done(ok, measured);
	exec_set_attach(NULL, NULL);
	profile_cleanup(&prof);
	counters_free(&ctr);
	snapshot_held_free(&held);
	exec_result_free(&res);
	step_free(st);
	buf_free(&in);
	return status;
}
