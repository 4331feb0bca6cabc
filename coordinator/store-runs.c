/*
 * store-runs.c: runs in the store (the claim is in store-claim.c): lease, samples,
 * log lines and end of a run, and recovery after a crash (the runs read
 * back as rows are in store-rows.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

#include "err.h"
#include "caps.h"
#include "sha256.h"
#include "store.h"
#include "store-int.h"

/* NOTFOUND when the run does not exist, else STATE (it is not running). */
static int
run_why_not(struct store *s, int64_t run_id)
{
	struct db_stmt *st;
	int r;

	if ((r = store_q(s, Q_R_HEAD, &st, "I", run_id)) != 0 || (r = store_q_step(s, st)) < 0)
		return r;
	db_reset(st);
	return r == 0 ? BF_ERR_NOTFOUND : BF_ERR_STATE;
}

int
store_run_held(struct store *s, int64_t run_id)
{
	struct db_stmt *st;
	const char *state, *owner;
	int r;

	if ((r = store_q(s, Q_R_HEAD, &st, "I", run_id)) != 0 || (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 0)
		r = BF_ERR_NOTFOUND;
	else {
		state = db_col_text(st, 2);
		owner = db_col_text(st, 3);
		r = state != NULL && strcmp(state, "running") == 0 && owner != NULL &&
		    strcmp(owner, s->node) == 0 ? 0 : BF_ERR_STATE;
	}
	db_reset(st);
	return r;
}

int
store_run_renew(struct store *s, int64_t run_id, int lease_s)
{
	int r, n;

	if (s == NULL || lease_s <= 0)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q_exec(s, Q_R_RENEW, &n, "II" "t", run_id, store_now_s() + lease_s,
	    s->node)) != 0)
		goto out;
	if (n != 1) {
		r = run_why_not(s, run_id);
		goto out;
	}
	r = store_q_exec(s, Q_M_LEASE_RENEW, NULL, "It" "I", run_id, s->node,
	    store_now_s() + lease_s);
out:
	store_unlock(s);
	return r;
}

struct samples_arg {
	int64_t run_id;
	int boot, iteration;
	const struct store_sample *samples;
	size_t n;
};

static int
samples_tx(struct store *s, void *arg)
{
	const struct samples_arg *a = arg;
	const struct store_sample *sa;
	size_t i;
	int r;

	if ((r = store_run_held(s, a->run_id)) != 0)
		return r;
	for (i = 0; i < a->n; i++) {
		sa = &a->samples[i];
		if ((r = store_q_exec(s, Q_S_ADD, NULL, "IIIt" "d" "t", a->run_id,
		    (int64_t)a->boot, (int64_t)a->iteration, sa->metric, sa->value, sa->unit)) != 0)
			return r;	/* a missing run fails the foreign key: NOTFOUND */
	}
	return 0;
}

/* What store_samples_add refuses before any transaction: 0 or the error. */
static int
samples_check(int boot, int iteration, const struct store_sample *samples, size_t n)
{
	size_t i;

	if (samples == NULL && n != 0)
		return BF_ERR_INVALID;
	/* Warmup shifts the agent's iteration numbers, hence the slack. */
	if (boot < 0 || boot >= BF_MAX_BOOTS || iteration < 0 ||
	    iteration > 2 * BF_MAX_ITERATIONS)
		return BF_ERR_RANGE;
	for (i = 0; i < n; i++) {
		if (store_check_str(samples[i].metric, "metric", BF_MAX_NAME, 1, NULL) != 0 ||
		    store_check_str(samples[i].unit, "unit", BF_MAX_NAME, 0, NULL) != 0)
			return BF_ERR_INVALID;
		/* SQLite would store NaN as NULL, and JSON has neither. */
		if (!isfinite(samples[i].value))
			return BF_ERR_RANGE;
	}
	return 0;
}

int
store_samples_add(struct store *s, int64_t run_id, int boot, int iteration,
    const struct store_sample *samples, size_t n)
{
	struct samples_arg a = { .run_id = run_id, .boot = boot, .iteration = iteration,
	    .samples = samples, .n = n };
	int r;

	if (s == NULL)
		return BF_ERR_INVALID;
	if ((r = samples_check(boot, iteration, samples, n)) != 0 || n == 0)
		return r;
	return store_tx(s, samples_tx, &a);
}

static int
stream_ok(const char *stream)
{
	static const char *const streams[] = { "stdout", "stderr", "agent", "coord" };
	size_t i;

	for (i = 0; i < sizeof(streams) / sizeof(streams[0]); i++)
		if (strcmp(stream, streams[i]) == 0)
			return 1;
	return 0;
}

/* seq is MAX(seq) + 1 inside the INSERT itself, so it is gapless per run
 * even without a transaction around it. */
int
store_run_log_add(struct store *s, int64_t run_id, const char *stream, const char *line)
{
	char *clean = NULL;
	int r;

	if (s == NULL || stream == NULL || line == NULL || !stream_ok(stream))
		return BF_ERR_INVALID;
	if ((clean = store_text_clean(line, strlen(line), BF_MAX_LOG_LINE, NULL)) == NULL)
		return BF_ERR_ALLOC;
	store_lock(s);
	r = store_q_exec(s, Q_L_ADD, NULL, "Itt" "d", run_id, stream, clean, store_now());
	store_unlock(s);
	free(clean);
	return r;
}

struct info_arg {
	int64_t run_id;
	const char *h, *k, *b;
	/* store_run_hello: also these, in the same transaction */
	const char *cmdline, *machine, *arch;
	int machine_missing;
	/* store_run_hello_snapshot: and the snapshot (text NULL: none) */
	const char *sn_text, *sn_sha256;
};

static int
info_tx(struct store *s, void *arg)
{
	struct info_arg *a = arg;
	int r, n = 0;

	if ((r = store_q_exec(s, Q_R_INFO, &n, "Ittt" "t", a->run_id, a->h, a->k, a->b,
	    (const char *)NULL)) != 0)
		return r;
	if (n == 0)
		return BF_ERR_NOTFOUND;
	/* the machine as the coordinator knows it when the run starts */
	if ((r = store_run_fp_locked(s, a->run_id)) != 0)
		return r;
	if (a->cmdline != NULL &&
	    (r = store_q_exec(s, Q_R_CMDLINE, NULL, "It", a->run_id, a->cmdline)) != 0)
		return r;
	if (a->machine == NULL)
		return 0;
	n = 0;
	if ((r = store_q_exec(s, Q_M_UPDATE, &n, "tttttt" "II", a->machine, (const char *)NULL,
	    a->h, a->k, a->arch, (const char *)NULL, (int64_t)1, store_now_s())) != 0)
		return r;
	/* a machine deleted meanwhile does not undo the run's own facts */
	a->machine_missing = n == 0;
	if (a->sn_text != NULL)
		return store_snapshot_locked(s, a->run_id, a->sn_text, a->sn_sha256);
	return 0;
}

int
store_run_set_info(struct store *s, int64_t run_id, const char *hostname,
    const char *kernel, const char *boot_id)
{
	char *h = NULL, *k = NULL, *b = NULL;
	struct info_arg a;
	int r;

	if (s == NULL)
		return BF_ERR_INVALID;
	if ((hostname != NULL &&
	    (h = store_text_clean(hostname, strlen(hostname), BF_MAX_HOST, NULL)) == NULL) ||
	    (kernel != NULL &&
	    (k = store_text_clean(kernel, strlen(kernel), BF_MAX_NAME * 4, NULL)) == NULL) ||
	    (boot_id != NULL &&
	    (b = store_text_clean(boot_id, strlen(boot_id), BF_MAX_NAME, NULL)) == NULL)) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	a = (struct info_arg){ .run_id = run_id, .h = h, .k = k, .b = b };
	r = store_tx(s, info_tx, &a);
out:
	free(h);
	free(k);
	free(b);
	return r;
}

int
store_run_hello(struct store *s, int64_t run_id, const char *machine, const char *hostname,
    const char *kernel, const char *arch, const char *boot_id, const char *cmdline)
{
	return store_run_hello_snapshot(s, run_id, machine, hostname, kernel, arch, boot_id,
	    cmdline, NULL, NULL, NULL);
}

int
store_run_hello_snapshot(struct store *s, int64_t run_id, const char *machine,
    const char *hostname, const char *kernel, const char *arch, const char *boot_id,
    const char *cmdline, const char *json_text, char sha256[65], int *snapshot_err)
{
	char *h = NULL, *k = NULL, *b = NULL, *a = NULL, *c = NULL;
	struct info_arg ia;
	size_t sn = 0;
	int r;

	if (s == NULL || machine == NULL || (json_text != NULL && sha256 == NULL))
		return BF_ERR_INVALID;
	if (snapshot_err != NULL)
		*snapshot_err = 0;
	if (json_text != NULL) {
		sn = strlen(json_text);
		if (sn == 0 || sn > BF_MAX_AGENT_LINE) {
			if (snapshot_err != NULL)
				*snapshot_err = 1;
			return BF_ERR_TOOBIG;
		}
		sha256_hex(json_text, sn, sha256);
	}
	/* what the agent says is untrusted: cleaned and cut as each setter does */
	if ((hostname != NULL &&
	    (h = store_text_clean(hostname, strlen(hostname), BF_MAX_HOST, NULL)) == NULL) ||
	    (kernel != NULL &&
	    (k = store_text_clean(kernel, strlen(kernel), BF_MAX_NAME * 4, NULL)) == NULL) ||
	    (boot_id != NULL &&
	    (b = store_text_clean(boot_id, strlen(boot_id), BF_MAX_NAME, NULL)) == NULL) ||
	    (arch != NULL && (a = store_text_clean(arch, strlen(arch), BF_MAX_NAME, NULL)) == NULL) ||
	    (cmdline != NULL &&
	    (c = store_text_clean(cmdline, strlen(cmdline), BF_MAX_STR, NULL)) == NULL)) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	ia = (struct info_arg){ .run_id = run_id, .h = h, .k = k, .b = b, .cmdline = c,
		.machine = machine, .arch = a, .sn_text = json_text, .sn_sha256 = sha256 };
	if ((r = store_tx(s, info_tx, &ia)) == 0 && ia.machine_missing)
		r = BF_ERR_NOTFOUND;
	else if (r != 0 && snapshot_err != NULL)
		*snapshot_err = json_text != NULL;	/* not stored: nothing was */
out:
	free(h);
	free(k);
	free(b);
	free(a);
	free(c);
	return r;
}

int
store_run_finish(struct store *s, int64_t run_id, const char *state, int exit_status,
    const char *error)
{
	return store_run_finish_more(s, run_id, state, exit_status, error, 0);
}

/* store_cell_samples with the store lock held by the caller. */
static int
cell_samples_locked(struct store *s, int64_t run_id, const char *metric, double **vp,
    int **bootp, size_t *np, int *nbootsp)
{
	struct db_stmt *st;
	int64_t job_id, cell;
	double *v = NULL, *nv;
	int *b = NULL, *nb;
	size_t n = 0, cap = 0;
	int r;

	store_assert_locked(s);
	*vp = NULL;
	*bootp = NULL;
	*np = 0;
	*nbootsp = 0;
	if ((r = store_q(s, Q_R_GET, &st, "I", run_id)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	job_id = db_col_int64(st, 1);
	cell = db_col_int64(st, 2);
	db_reset(st);
	if ((r = store_q(s, Q_R_CELL_SAMPLES, &st, "IItI", job_id, cell, metric, run_id)) != 0)
		goto out;
	while ((r = store_q_step(s, st)) == 1) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if (cap > (size_t)BF_MAX_BOOTS * BF_MAX_ITERATIONS ||
			    (nv = realloc(v, cap * sizeof(*v))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			v = nv;
			if ((nb = realloc(b, cap * sizeof(*b))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			b = nb;
		}
		b[n] = db_col_int(st, 0);
		v[n] = db_col_double(st, 1);
		n++;
	}
	if (r < 0)
		goto out;
	if ((r = store_q(s, Q_R_CELL_BOOTS, &st, "II", job_id, cell)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		goto out;
	*nbootsp = r == 1 ? db_col_int(st, 0) : 0;
	*vp = v;
	*bootp = b;
	*np = n;
	v = NULL;
	b = NULL;
	r = 0;
out:
	free(v);
	free(b);
	return r;
}

int
store_cell_samples(struct store *s, int64_t run_id, const char *metric, double **vp,
    int **bootp, size_t *np, int *nbootsp)
{
	int r;

	*vp = NULL;
	*bootp = NULL;
	*np = 0;
	*nbootsp = 0;
	if (s == NULL || metric == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	r = cell_samples_locked(s, run_id, metric, vp, bootp, np, nbootsp);
	store_unlock(s);
	return r;
}

int
store_run_finish_more(struct store *s, int64_t run_id, const char *state, int exit_status,
    const char *error, int add_boot)
{
	return store_run_finish_adaptive(s, run_id, state, exit_status, error,
	    add_boot ? "" : NULL, NULL, NULL);
}

/* A store_held's lines cleaned and cut as store_run_log_add does, before
 * any transaction (held_prepare); lline[i] freed by held_clean_free. */
struct held_clean {
	char *lline[STORE_FINISH_LOGS];
	size_t nl;
};

static void
held_clean_free(struct held_clean *hc)
{
	size_t i;

	for (i = 0; i < hc->nl; i++)
		free(hc->lline[i]);
	hc->nl = 0;
}

/* What store_samples_add and store_run_log_add refuse in h, before any
 * write; then its lines cleaned into hc (held_clean_free frees them). */
static int
held_prepare(const struct store_held *h, struct held_clean *hc)
{
	size_t i;
	int r;

	hc->nl = 0;
	if (h->nb > STORE_FINISH_BATCHES || (h->b == NULL && h->nb != 0) ||
	    h->nl > STORE_FINISH_LOGS || (h->l == NULL && h->nl != 0))
		return BF_ERR_INVALID;
	for (i = 0; i < h->nb; i++)
		if ((r = samples_check(h->b[i].boot, h->b[i].iteration, h->b[i].samples,
		    h->b[i].n)) != 0)
			return r;
	for (i = 0; i < h->nl; i++)
		if (h->l[i].stream == NULL || h->l[i].line == NULL || !stream_ok(h->l[i].stream))
			return BF_ERR_INVALID;
	for (; hc->nl < h->nl; hc->nl++)
		if ((hc->lline[hc->nl] = store_text_clean(h->l[hc->nl].line,
		    strlen(h->l[hc->nl].line), BF_MAX_LOG_LINE, NULL)) == NULL) {
			held_clean_free(hc);
			return BF_ERR_ALLOC;
		}
	return 0;
}

/* h's samples, then its lines (cleaned in hc), in the caller's transaction. */
static int
held_part(struct store *s, int64_t run_id, const struct store_held *h,
    const struct held_clean *hc, double now)
{
	size_t i;
	int r;

	for (i = 0; i < h->nb; i++) {
		struct samples_arg sa = { .run_id = run_id, .boot = h->b[i].boot,
		    .iteration = h->b[i].iteration, .samples = h->b[i].samples, .n = h->b[i].n };

		if ((r = samples_tx(s, &sa)) != 0)
			return r;
	}
	for (i = 0; i < hc->nl; i++)
		if ((r = store_q_exec(s, Q_L_ADD, NULL, "Itt" "d", run_id, h->l[i].stream,
		    hc->lline[i], now)) != 0)
			return r;
	return 0;
}

struct finish_arg {
	int64_t run_id;
	const struct store_held *h;	/* written first */
	const struct held_clean *hc;
	const char *state;
	int exit_status;
	const char *err;
	const char *metric;
	store_cell_decide_fn decide;
	void *decide_arg;
	double now;
	/* what one attempt reads, freed by the next and by the caller */
	double *cv;
	int *cb;
	char *machine;
};

static void
finish_arg_clear(struct finish_arg *a)
{
	free(a->cv);
	free(a->cb);
	free(a->machine);
	a->cv = NULL;
	a->cb = NULL;
	a->machine = NULL;
}

static int
finish_tx(struct store *s, void *arg)
{
	struct finish_arg *a = arg;
	struct db_stmt *st;
	int64_t job_id;
	size_t cn = 0;
	int r, n, planned = 0, add_boot = 0;

	finish_arg_clear(a);
	if ((r = held_part(s, a->run_id, a->h, a->hc, a->now)) != 0)
		return r;
	if ((r = store_q(s, Q_R_HEAD, &st, "I", a->run_id)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 0)
		return BF_ERR_NOTFOUND;
	job_id = db_col_int64(st, 0);
	if ((r = store_col_dup(st, 1, &a->machine)) != 0)
		return r;
	db_reset(st);
	/* one run of a job ends at a time, so the last one settles it, and the
	 * add-a-boot question below sees every other boot that ended before */
	if ((r = store_q_exec(s, Q_J_LOCK, NULL, "I", job_id)) != 0)
		return r;
	if (a->metric != NULL && a->decide == NULL)
		add_boot = 1;
	else if (a->metric != NULL) {
		if ((r = cell_samples_locked(s, a->run_id, a->metric, &a->cv, &a->cb, &cn,
		    &planned)) != 0)
			return r;
		add_boot = a->decide(a->decide_arg, a->cv, a->cb, cn, planned) > 0;
	}
	if ((r = store_q_exec(s, Q_R_FINISH, &n, "It" "I" "t" "d" "t", a->run_id, a->state,
	    (int64_t)a->exit_status, a->err, a->now, s->node)) != 0)
		return r;
	if (n == 0)
		return BF_ERR_STATE;	/* not running: already ended, or never claimed */
	/* before the settle below, so the job cannot end in between */
	if (add_boot && (r = store_q_exec(s, Q_R_CLONE_BOOT, NULL, "I", a->run_id)) != 0)
		return r;
	if ((a->machine != NULL &&
	    (r = store_q_exec(s, Q_M_IDLE, NULL, "t", a->machine)) != 0) ||
	    (r = store_q_exec(s, Q_J_SETTLE, NULL, "Id", job_id, a->now)) != 0)
		return r;
	return 0;
}

int
store_run_finish_adaptive(struct store *s, int64_t run_id, const char *state,
    int exit_status, const char *error, const char *metric, store_cell_decide_fn decide,
    void *arg)
{
	return store_run_finish_with(s, run_id, NULL, state, exit_status, error, metric,
	    decide, arg);
}

int
store_run_finish_with(struct store *s, int64_t run_id, const struct store_held *h,
    const char *state, int exit_status, const char *error, const char *metric,
    store_cell_decide_fn decide, void *arg)
{
	static const struct store_held none;
	struct finish_arg a = { .run_id = run_id, .state = state, .exit_status = exit_status,
	    .metric = metric, .decide = decide, .decide_arg = arg, .now = store_now() };
	struct held_clean hc;
	char *err = NULL;
	int r;

	if (h == NULL)
		h = &none;
	if (s == NULL || state == NULL || (strcmp(state, "done") != 0 &&
	    strcmp(state, "failed") != 0 && strcmp(state, "lost") != 0 &&
	    strcmp(state, "boot-failed") != 0))
		return BF_ERR_INVALID;
	if ((r = held_prepare(h, &hc)) != 0)
		return r;
	if (error != NULL && (err = store_text_clean(error, strlen(error), BF_MAX_STR, NULL)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	a.h = h;
	a.hc = &hc;
	a.err = err;
	r = store_tx(s, finish_tx, &a);
	finish_arg_clear(&a);
out:
	held_clean_free(&hc);
	free(err);
	return r;
}

struct held_arg {
	int64_t run_id;
	const struct store_held *h;
	const struct held_clean *hc;
	double now;
};

static int
held_tx(struct store *s, void *arg)
{
	const struct held_arg *a = arg;

	return held_part(s, a->run_id, a->h, a->hc, a->now);
}

int
store_held_add(struct store *s, int64_t run_id, const struct store_held *h)
{
	struct held_arg a = { .run_id = run_id, .h = h, .now = store_now() };
	struct held_clean hc;
	int r;

	if (s == NULL || h == NULL)
		return BF_ERR_INVALID;
	if ((r = held_prepare(h, &hc)) != 0)
		return r;
	a.hc = &hc;
	if (h->nb > 0 || h->nl > 0)
		r = store_tx(s, held_tx, &a);
	held_clean_free(&hc);
	return r;
}

struct retry_arg {
	int64_t run_id;
	const char *why;
	int max_attempts;
	double now;
	int again;			/* out: requeued */
	char *machine;			/* freed by the next attempt and the caller */
};

static int
retry_tx(struct store *s, void *arg)
{
	struct retry_arg *a = arg;
	struct db_stmt *st;
	int64_t job_id;
	int r, n = 0;

	free(a->machine);
	a->machine = NULL;
	a->again = 0;
	if ((r = store_q(s, Q_R_HEAD, &st, "I", a->run_id)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 0)
		return BF_ERR_NOTFOUND;
	job_id = db_col_int64(st, 0);
	if ((r = store_col_dup(st, 1, &a->machine)) != 0)
		return r;
	db_reset(st);
	if ((r = store_q_exec(s, Q_J_LOCK, NULL, "I", job_id)) != 0)
		return r;
	if ((r = store_q_exec(s, Q_R_RETRY, &n, "It" "I" "t", a->run_id, a->why,
	    (int64_t)a->max_attempts, s->node)) != 0)
		return r;
	if ((a->again = n == 1)) {
		if ((r = store_q_exec(s, Q_R_DROP_SAMPLES, NULL, "I", a->run_id)) != 0 ||
		    (r = store_q_exec(s, Q_R_DROP_ARTIFACTS, NULL, "I", a->run_id)) != 0 ||
		    (r = store_q_exec(s, Q_L_ADD, NULL, "Itt" "d", a->run_id, "coord", a->why,
		    a->now)) != 0)
			return r;
	} else {
		/* out of attempts (or not running: then FINISH changes nothing) */
		if ((r = store_q_exec(s, Q_R_FINISH, &n, "It" "I" "t" "d" "t", a->run_id, "lost",
		    (int64_t)-1, a->why, a->now, s->node)) != 0)
			return r;
		if (n == 0)
			return BF_ERR_STATE;
		if ((r = store_q_exec(s, Q_J_SETTLE, NULL, "Id", job_id, a->now)) != 0)
			return r;
	}
	if (a->machine != NULL && (r = store_q_exec(s, Q_M_IDLE, NULL, "t", a->machine)) != 0)
		return r;
	return 0;
}

int
store_run_retry(struct store *s, int64_t run_id, const char *reason, int max_attempts,
    int *requeued)
{
	struct retry_arg a = { .run_id = run_id, .max_attempts = max_attempts,
	    .now = store_now() };
	char *why;
	int r;

	if (requeued != NULL)
		*requeued = 0;
	if (s == NULL || reason == NULL || max_attempts < 1)
		return BF_ERR_INVALID;
	if ((why = store_text_clean(reason, strlen(reason), BF_MAX_STR, NULL)) == NULL)
		return BF_ERR_ALLOC;
	a.why = why;
	r = store_tx(s, retry_tx, &a);
	if (r == 0 && requeued != NULL)
		*requeued = a.again;
	free(a.machine);
	free(why);
	return r;
}

/*
 * Runs of a job cancelled while they ran are not requeued but cancelled:
 * a queued run of a cancelled job would never be claimed, and the job
 * would never get its finished_at.
 */
struct rec_arg {
	int all, mine;
	const char *note;
	double now;
	int64_t nows;
	int n;				/* out: runs requeued */
};

static int
rec_tx(struct store *s, void *arg)
{
	struct rec_arg *a = arg;
	int r;

	a->n = 0;
#define REC_ARGS (int64_t)a->all, (int64_t)a->mine, s->node, a->nows
	if ((r = store_q_exec(s, Q_REC_SAMPLES, NULL, "IItI", REC_ARGS)) != 0 ||
	    (r = store_q_exec(s, Q_REC_ARTIFACTS, NULL, "IItI", REC_ARGS)) != 0 ||
	    (r = store_q_exec(s, Q_REC_LOG, NULL, "IItI" "t" "d", REC_ARGS, a->note,
	    a->now)) != 0 ||
	    (r = store_q_exec(s, Q_REC_CANCEL, NULL, "IItI" "d", REC_ARGS, a->now)) != 0 ||
	    (r = store_q_exec(s, Q_REC_MACHINES, NULL, "IItI", REC_ARGS)) != 0 ||
	    (r = store_q_exec(s, Q_REC_REQUEUE, &a->n, "IItI", REC_ARGS)) != 0 ||
	    (r = store_q_exec(s, Q_REC_JOBS, NULL, "d", a->now)) != 0)
		return r;
#undef REC_ARGS
	if ((a->all || a->mine) &&
	    ((r = store_q_exec(s, Q_M_IDLE_ALL, NULL, "It", (int64_t)a->all, s->node)) != 0 ||
	    (r = store_q_exec(s, Q_M_RELEASE, NULL, "t", s->node)) != 0))
		return r;
	return 0;
}

/* The REC_SET runs of store.c, in one transaction: all (all), this
 * coordinator's previous life (mine), and always lapsed leases of others. */
static int
store_rec(struct store *s, int all, int mine, const char *note, size_t *nrequeued)
{
	struct rec_arg a = { .all = all, .mine = mine, .note = note, .now = store_now(),
	    .nows = store_now_s() };
	int r;

	if (nrequeued != NULL)
		*nrequeued = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	if ((r = store_tx(s, rec_tx, &a)) != 0)
		return r;
	if (nrequeued != NULL)
		*nrequeued = (size_t)a.n;
	return 0;
}

/*
 * Runs of a job cancelled while they ran are not requeued but cancelled:
 * a queued run of a cancelled job would never be claimed, and the job
 * would never get its finished_at.
 */
int
store_recover(struct store *s, size_t *nrequeued)
{
	if (s == NULL)
		return BF_ERR_INVALID;
	return store_rec(s, !s->pg, 1, "coordinator restarted during this run; "
	    "its partial samples were dropped", nrequeued);
}

int
store_reclaim(struct store *s, size_t *nrequeued)
{
	return store_rec(s, 0, 0, "the lease of the coordinator running this attempt lapsed "
	    "(it died or lost the store); its partial samples were dropped", nrequeued);
}

int
store_machine_lease(struct store *s, const char *name, int lease_s, int *held)
{
	int64_t now = store_now_s();
	int r, n = 0;

	*held = 0;
	if (s == NULL || name == NULL || lease_s <= 0)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q_exec(s, Q_M_LEASE, &n, "tt" "II", name, s->node, now + lease_s,
	    now)) == 0 && n == 0) {
		struct db_stmt *st;

		/* not ours: does it exist at all? */
		if ((r = store_q(s, Q_M_GET, &st, "t", name)) == 0 &&
		    (r = store_q_step(s, st)) >= 0)
			r = r == 1 ? 0 : BF_ERR_NOTFOUND;
	}
	store_unlock(s);
	if (r == 0)
		*held = n == 1;
	return r;
}

int
store_release(struct store *s)
{
	int r;

	if (s == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_exec(s, Q_M_RELEASE, NULL, "t", s->node);
	store_unlock(s);
	return r;
}

int
store_notify(struct store *s, const char *payload)
{
	int r;

	if (s == NULL || payload == NULL || strlen(payload) >= 8000)
		return BF_ERR_INVALID;
	if (!s->pg)
		return 0;
	store_lock(s);
	r = db_notify(s->db, "benchfleet", payload);
	store_unlock(s);
	return r;
}

void
store_log_lines_free(struct store_log_line *a, size_t n)
{
	size_t i;

	for (i = 0; a != NULL && i < n; i++) {
		free(a[i].stream);
		free(a[i].line);
	}
	free(a);
}

int
store_run_log(struct store *s, int64_t run_id, int64_t after_seq, size_t limit,
    struct store_log_line **out, size_t *nout)
{
	struct store_log_line *a = NULL, *l;
	struct db_stmt *st;
	size_t n = 0;
	int r;

	*out = NULL;
	*nout = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	if (limit == 0 || limit > STORE_MAX_PAGE)
		limit = STORE_MAX_PAGE;
	if ((a = calloc(limit, sizeof(*a))) == NULL)
		return BF_ERR_ALLOC;
	store_lock(s);
	if ((r = store_q(s, Q_R_HEAD, &st, "I", run_id)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	db_reset(st);
	if ((r = store_q(s, Q_L_GET, &st, "III", run_id, after_seq, (int64_t)limit)) != 0)
		goto out;
	while (n < limit && (r = store_q_step(s, st)) == 1) {
		l = &a[n++];
		l->seq = db_col_int64(st, 0);
		l->at = db_col_double(st, 3);
		if ((r = store_col_dup(st, 1, &l->stream)) != 0 ||
		    (r = store_col_dup(st, 2, &l->line)) != 0)
			goto out;
	}
	if (r < 0)
		goto out;
	*out = a;
	*nout = n;
	a = NULL;
	r = 0;
out:
	store_unlock(s);
	store_log_lines_free(a, n);
	return r;
}

int
store_run_set_cmdline(struct store *s, int64_t run_id, const char *cmdline)
{
	char *c;
	int r;

	if (s == NULL || cmdline == NULL)
		return BF_ERR_INVALID;
	if ((c = store_text_clean(cmdline, strlen(cmdline), BF_MAX_STR, NULL)) == NULL)
		return BF_ERR_ALLOC;
	store_lock(s);
	r = store_q_exec(s, Q_R_CMDLINE, NULL, "It", run_id, c);
	store_unlock(s);
	free(c);
	return r;
}


int
store_run_set_knobs(struct store *s, int64_t run_id, const char *json_text)
{
	int r;

	if (s == NULL || json_text == NULL || strlen(json_text) > BF_MAX_API_BODY)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_exec(s, Q_R_KNOBS, NULL, "It", run_id, json_text);
	store_unlock(s);
	return r;
}
