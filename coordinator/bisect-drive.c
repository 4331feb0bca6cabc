/*
 * bisect-drive.c: the bisection driver (bisect.h). One thread in the
 * scheduler's process (it holds the SSH keys; the API never blocks on it)
 * runs bisect_tick when kicked and every BISECT_POLL_MS: for each running
 * bisection it reads everything from the store and does the next thing:
 *
 *   no commit list   resolve good and bad on a builder and list good..bad
 *                    (benchfleet-agent build: git as argv arrays, no shell)
 *   a pending step   wait for its job; when it is over, pool the step's
 *                    rounds and classify mid (bisect_classify)
 *   "more"           the same step's next round: a new job
 *   otherwise        the next commit (bisect_next): a step row and its job
 *                    in one transaction, or the end (first bad, or why not)
 *
 * Every write is guarded in the store (a step row's key, a verdict only
 * on a pending row, the row only while running), so a driver killed at
 * any moment, or two coordinators on one store, never make a step twice.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bisect.h"
#include "buf.h"
#include "caps.h"
#include "clock.h"
#include "events.h"
#include "job.h"
#include "jx.h"
#include "kbline.h"
#include "plan.h"
#include "recipes.h"
#include "runner.h"
#include "store.h"
#include "transport.h"

#define BISECT_POLL_MS		2000
#define BISECT_RESOLVE_S	600	/* the builder's git commands, all of them */
#define BISECT_MSG		512

/* One bisection as the store has it, parsed. */
struct bisect_state {
	struct store_bisect *row;
	json_t *spec, *commits;		/* commits: {"good","bad","list":[[sha,subject]]} */
	json_t *list;			/* borrowed from commits */
	size_t n;
	struct store_bisect_step *steps;
	size_t nsteps;
	unsigned char *skipped;		/* n */
	int64_t lo, hi;
};

static void
state_clear(struct bisect_state *s)
{
	store_bisect_free(s->row);
	json_decref(s->spec);
	json_decref(s->commits);
	store_bisect_steps_free(s->steps, s->nsteps);
	free(s->skipped);
	memset(s, 0, sizeof(*s));
}

static const char *
list_sha(const struct bisect_state *s, int64_t i)
{
	return json_string_value(json_array_get(json_array_get(s->list, (size_t)i), 0));
}

static void
drive_event(const struct bisect_env *env, int64_t id)
{
	bisect_event(env->ev, env->st, id);
}

/* The row's new values, keeping what u does not say from s. */
static int
drive_advance(const struct bisect_env *env, struct bisect_state *s, int64_t step,
    int64_t round, const char *verdict, const char *stats, const char *state,
    const char *first_bad, const char *message, double machine_s)
{
	struct store_bisect_upd u = { .state = state, .commits = s->row->commits, .lo = s->lo,
	    .hi = s->hi, .first_bad = first_bad, .message = message, .machine_s = machine_s };
	int r;

	r = store_bisect_advance(env->st, s->row->id, step, round, verdict, stats, &u);
	if (r == 0)
		drive_event(env, s->row->id);
	return r;
}

static int
drive_fail(const struct bisect_env *env, struct bisect_state *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int
drive_fail(const struct bisect_env *env, struct bisect_state *s, const char *fmt, ...)
{
	char msg[BISECT_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return drive_advance(env, s, -1, 0, NULL, NULL, "failed", NULL, msg,
	    s->row->machine_s);
}

/* --- resolving good..bad on a builder --- */

struct rx {
	char good[41], bad[41];
	json_t *list;
	char failed[256], last_err[256];
	int bad_line, done, done_ok, over;
};

static int
is_sha(const char *p, size_t n)
{
	size_t i;

	if (n != 40)
		return 0;
	for (i = 0; i < 40; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return 0;
	return 1;
}

/* A commit's subject is any bytes its author wrote: at most
 * BISECT_MAX_SUBJECT, cut on a character boundary, as a JSON string;
 * invalid UTF-8 turns every byte outside printable ASCII into '?'. */
static json_t *
subject_json(const char *p)
{
	char buf[BISECT_MAX_SUBJECT + 1];
	size_t n = strlen(p), i;
	json_t *j;

	if (n > BISECT_MAX_SUBJECT) {
		n = BISECT_MAX_SUBJECT;
		while (n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
	}
	if ((j = json_stringn(p, n)) != NULL)
		return j;
	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)p[i] >= 0x20 && (unsigned char)p[i] < 0x7f ? p[i] : '?';
	return json_stringn(buf, n);
}

/* "bf-commit SHA SUBJECT" from git log's stdout; any other line but
 * rev-parse's bare sha makes the list unusable */
static void
rx_commit(struct rx *x, const char *line)
{
	static const char tag[] = "bf-commit ";
	const char *p = line + sizeof(tag) - 1, *subj;
	json_t *e;

	/* rev-parse's own line, sent as a log line besides its build_value */
	if (is_sha(line, strlen(line)))
		return;
	if (strncmp(line, tag, sizeof(tag) - 1) != 0 || strlen(p) < 40 || !is_sha(p, 40) ||
	    (p[40] != ' ' && p[40] != '\0')) {
		x->bad_line++;
		return;
	}
	if (json_array_size(x->list) >= BF_MAX_BISECT_COMMITS) {
		x->over = 1;
		return;
	}
	subj = p[40] ? p + 41 : "";
	if ((e = json_pack("[s#,o]", p, (size_t)40, subject_json(subj))) == NULL ||
	    json_array_append_new(x->list, e) != 0)
		x->bad_line++;
}

static int
rx_line(void *arg, int stream, const char *line, size_t len, int truncated)
{
	struct rx *x = arg;
	struct kbline l;
	struct bf_diag d;

	(void)stream;
	memset(&l, 0, sizeof(l));
	if (truncated || kbline_decode(line, len, &l, &d) != 0) {
		x->bad_line++;
		kbline_clear(&l);
		return 0;
	}
	switch (l.type) {
	case KBLINE_LOG:
		if (l.u.log.line == NULL)
			break;
		if (l.u.log.is_stderr)
			snprintf(x->last_err, sizeof(x->last_err), "%s", l.u.log.line);
		else
			rx_commit(x, l.u.log.line);
		break;
	case KBLINE_VALUE:
		if (!is_sha(l.u.value.value, strlen(l.u.value.value)))
			x->bad_line++;
		else if (strcmp(l.u.value.what, "good") == 0)
			snprintf(x->good, sizeof(x->good), "%s", l.u.value.value);
		else if (strcmp(l.u.value.what, "bad") == 0)
			snprintf(x->bad, sizeof(x->bad), "%s", l.u.value.value);
		break;
	case KBLINE_FAILED:
		snprintf(x->failed, sizeof(x->failed), "%s", l.u.failed.what);
		break;
	case KBLINE_ERROR:
		snprintf(x->last_err, sizeof(x->last_err), "%s", l.u.error.msg ? l.u.error.msg :
		    "");
		break;
	case KBLINE_DONE:
		x->done = 1;
		x->done_ok = l.u.done.ok;
		break;
	default:
		x->bad_line++;
	}
	kbline_clear(&l);
	return 0;
}

/* One command of the build document: what, argv (NULL-terminated), capture. */
static json_t *
resolve_cmd(const char *what, int capture, const char *const *argv)
{
	json_t *c, *a;

	if ((c = json_pack("{s:s,s:[]}", "what", what, "argv")) == NULL)
		return NULL;
	a = json_object_get(c, "argv");
	for (; *argv != NULL; argv++)
		if (json_array_append_new(a, json_string(*argv)) != 0)
			goto fail;
	if (capture && json_object_set_new(c, "capture", json_true()) != 0)
		goto fail;
	return c;
fail:
	json_decref(c);
	return NULL;
}

json_t *
bisect_resolve_doc(const char *git, const char *good, const char *bad)
{
	char g[BF_MAX_BISECT_REV + 16], b[BF_MAX_BISECT_REV + 16];
	char range[2 * BF_MAX_BISECT_REV + 8];
	const char *const av_good[] = { "git", "-C", git, "rev-parse", "--verify",
	    "--end-of-options", g, NULL };
	const char *const av_bad[] = { "git", "-C", git, "rev-parse", "--verify",
	    "--end-of-options", b, NULL };
	const char *const av_anc[] = { "git", "-C", git, "merge-base", "--is-ancestor", "--",
	    good, bad, NULL };
	const char *const av_list[] = { "git", "-C", git, "log", "--first-parent", "--reverse",
	    "--format=bf-commit %H %s", range, "--", NULL };
	json_t *doc, *cmds;

	snprintf(g, sizeof(g), "%s^{commit}", good);
	snprintf(b, sizeof(b), "%s^{commit}", bad);
	snprintf(range, sizeof(range), "%s..%s", good, bad);
	if ((doc = json_pack("{s:[],s:i}", "cmds", "timeout_s", BISECT_RESOLVE_S)) == NULL)
		return NULL;
	cmds = json_object_get(doc, "cmds");
	if (json_array_append_new(cmds, resolve_cmd("good", 1, av_good)) != 0 ||
	    json_array_append_new(cmds, resolve_cmd("bad", 1, av_bad)) != 0 ||
	    json_array_append_new(cmds, resolve_cmd("ancestor", 0, av_anc)) != 0 ||
	    json_array_append_new(cmds, resolve_cmd("list", 0, av_list)) != 0) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* The first machine by name with the role build that is not offline. */
static int
drive_builder(const struct bisect_env *env, struct store_machine **list, size_t *n,
    const struct store_machine **b)
{
	size_t i;
	int r;

	*b = NULL;
	if ((r = store_machine_list(env->st, list, n)) != 0)
		return r;
	for (i = 0; i < *n && *b == NULL; i++)
		if ((*list)[i].roles != NULL && strstr((*list)[i].roles, "build") != NULL &&
		    strcmp((*list)[i].state, "offline") != 0 &&
		    strcmp((*list)[i].state, "quarantined") != 0)
			*b = &(*list)[i];
	return 0;
}

/*
 * Resolve s's revisions: 0 with s's row advanced (the list, or failed),
 * or still running with a message saying what it waits for (the builder
 * is away: tried again at the next tick); BF_ERR_* when the store failed.
 */
static int
drive_resolve(const struct bisect_env *env, struct bisect_state *s)
{
	const char *git = json_string_value(json_object_get(s->spec, "git"));
	const char *good = json_string_value(json_object_get(s->spec, "good"));
	const char *bad = json_string_value(json_object_get(s->spec, "bad"));
	const struct store_machine *b = NULL;
	struct store_machine *list = NULL;
	struct transport *tr = NULL;
	struct runner_env renv;
	struct ssh_target t;
	struct bf_diag d;
	struct buf cmd;
	struct rx x;
	json_t *doc = NULL, *commits = NULL;
	char *text = NULL, *ctext = NULL, msg[BISECT_MSG];
	size_t n = 0, nm = 0;
	int r, status = -1, ok = 0;

	memset(&x, 0, sizeof(x));
	bf_diag_clear(&d);
	buf_init(&cmd, 8192);
	msg[0] = '\0';
	if (git == NULL || good == NULL || bad == NULL) {
		r = drive_fail(env, s, "the stored spec has no git, good or bad");
		goto out;
	}
	if ((r = drive_builder(env, &list, &nm, &b)) != 0 || b == NULL) {
		snprintf(msg, sizeof(msg), "waiting for a builder: %s", r != 0 ? bf_err_str(r) :
		    "no machine with the role build is up");
		r = r != 0 ? r : BF_ERR_NOTFOUND;
		goto wait;
	}
	memset(&t, 0, sizeof(t));
	t.host = b->host;
	t.port = b->port;
	t.user = b->user;
	t.key_path = b->key_path;
	t.known_hosts = env->known_hosts;
	t.connect_timeout_ms = env->connect_timeout_ms;
	memset(&renv, 0, sizeof(renv));
	renv.st = env->st;
	renv.machine = b->name;
	renv.agents = env->agents;
	renv.nagents = env->nagents;
	renv.agent_remote = env->agent_remote;
	renv.link_timeout_ms = env->link_timeout_ms;
	renv.sudo = b->user != NULL && strcmp(b->user, "root") != 0;
	renv.recipes = env->rs;
	renv.workdir_root = env->workdir_root;
	if ((r = env->connect(env->connect_arg, &t, &tr, &d)) != 0 ||
	    (r = runner_ensure_agent(&renv, tr, &ok, &d)) != 0) {
		snprintf(msg, sizeof(msg), "waiting for builder %.64s: %.400s", b->name,
		    d.msg[0] ? d.msg : bf_err_str(r));
		goto wait;
	}
	if ((doc = bisect_resolve_doc(git, good, bad)) == NULL ||
	    (text = json_dumps(doc, JSON_COMPACT)) == NULL || (x.list = json_array()) == NULL ||
	    (r = runner_agent_cmd(&renv, &cmd)) != 0 || (r = buf_puts(&cmd, " build")) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = transport_exec(tr, cmd.data, text, strlen(text), rx_line, &x, env->link_timeout_ms,
	    (BISECT_RESOLVE_S + 60) * 1000, &status, &d);
	if (r != 0) {
		snprintf(msg, sizeof(msg), "waiting for builder %.64s: %.400s", b->name,
		    d.msg[0] ? d.msg : bf_err_str(r));
		goto wait;
	}
	/* the builder answered: what it said is final */
	if (strcmp(x.failed, "good") == 0 || strcmp(x.failed, "bad") == 0) {
		r = drive_fail(env, s, "%s: \"%.128s\" is not a commit in %.256s on %s%s%.200s",
		    x.failed, strcmp(x.failed, "good") == 0 ? good : bad, git, b->name,
		    x.last_err[0] ? ": " : "", x.last_err);
		goto out;
	}
	if (x.failed[0] != '\0') {
		r = drive_fail(env, s, "%s", strcmp(x.failed, "ancestor") == 0 ?
		    "good is not an ancestor of bad (git merge-base --is-ancestor)" :
		    "git log good..bad failed on the builder");
		goto out;
	}
	if (status != 0 || !x.done || !x.done_ok || x.bad_line > 0 || x.good[0] == '\0' ||
	    x.bad[0] == '\0') {
		r = drive_fail(env, s, "builder %s: the commit list is unusable (exit %d, %d "
		    "refused lines%s%.200s)", b->name, status, x.bad_line,
		    x.last_err[0] ? ": " : "", x.last_err);
		goto out;
	}
	if (x.over) {
		r = drive_fail(env, s, "good..bad has more than %d commits: narrow it",
		    BF_MAX_BISECT_COMMITS);
		goto out;
	}
	n = json_array_size(x.list);
	if (n == 0 || strcmp(json_string_value(json_array_get(json_array_get(x.list, n - 1),
	    0)), x.bad) != 0) {
		r = drive_fail(env, s, n == 0 ? "good and bad are the same commit" :
		    "bad is not on the first-parent line from good");
		goto out;
	}
	if ((commits = json_pack("{s:s,s:s,s:O}", "good", x.good, "bad", x.bad, "list",
	    x.list)) == NULL || (ctext = json_dumps(commits, JSON_COMPACT)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	free(s->row->commits);
	s->row->commits = ctext;
	ctext = NULL;
	s->lo = -1;
	s->hi = (int64_t)n - 1;
	snprintf(msg, sizeof(msg), "%zu commits in good..bad (%.12s..%.12s), resolved on %s", n,
	    x.good, x.bad, b->name);
	r = drive_advance(env, s, -1, 0, NULL, NULL, "running", NULL, msg, 0);
	goto out;
wait:
	/* nothing final: say why, try again at the next tick */
	if (s->row->message == NULL || strcmp(s->row->message, msg) != 0)
		(void)drive_advance(env, s, -1, 0, NULL, NULL, "running", NULL, msg,
		    s->row->machine_s);
	r = 0;
out:
	transport_close(tr);
	store_machines_free(list, nm);
	json_decref(x.list);
	json_decref(doc);
	json_decref(commits);
	free(text);
	free(ctext);
	buf_free(&cmd);
	return r;
}

/* --- the steps --- */

/* s from the store: row, spec, commits, steps, lo/hi from the verdicts. */
static int
state_load(const struct bisect_env *env, int64_t id, struct bisect_state *s)
{
	json_error_t je;
	const char *v;
	size_t i;
	int r;

	memset(s, 0, sizeof(*s));
	if ((r = store_bisect_get(env->st, id, &s->row)) != 0)
		return r;
	if ((s->spec = json_loads(s->row->spec, 0, &je)) == NULL)
		return BF_ERR_PARSE;
	if (s->row->commits == NULL)
		return 0;
	if ((s->commits = json_loads(s->row->commits, 0, &je)) == NULL ||
	    !json_is_array(s->list = json_object_get(s->commits, "list")) ||
	    (s->n = json_array_size(s->list)) == 0 || s->n > BF_MAX_BISECT_COMMITS)
		return BF_ERR_PARSE;
	for (i = 0; i < s->n; i++)
		if ((v = list_sha(s, (int64_t)i)) == NULL || !is_sha(v, strlen(v)))
			return BF_ERR_PARSE;
	if ((s->skipped = calloc(s->n, 1)) == NULL)
		return BF_ERR_ALLOC;
	if ((r = store_bisect_steps(env->st, id, &s->steps, &s->nsteps)) != 0)
		return r;
	s->lo = -1;
	s->hi = (int64_t)s->n - 1;
	for (i = 0; i < s->nsteps; i++) {
		const struct store_bisect_step *e = &s->steps[i];

		if (e->idx < 0 || (size_t)e->idx >= s->n)
			return BF_ERR_PARSE;
		if (strcmp(e->verdict, "good") == 0 && e->idx > s->lo)
			s->lo = e->idx;
		else if (strcmp(e->verdict, "bad") == 0 && e->idx < s->hi)
			s->hi = e->idx;
		else if (strcmp(e->verdict, "skip") == 0)
			s->skipped[e->idx] = 1;
	}
	return 0;
}

/* The machine time of s's jobs: the sum of their runs' wall times. */
static double
state_machine_s(const struct bisect_env *env, const struct bisect_state *s)
{
	struct store_runs *rs = NULL;
	double t = 0;
	size_t i, j;

	for (i = 0; i < s->nsteps; i++) {
		if (s->steps[i].job_id <= 0 ||
		    store_job_runs(env->st, s->steps[i].job_id, 0, &rs) != 0)
			continue;
		for (j = 0; j < rs->n; j++)
			if (rs->run[j].has_started && rs->run[j].has_finished &&
			    rs->run[j].finished_at > rs->run[j].started_at)
				t += rs->run[j].finished_at - rs->run[j].started_at;
		store_runs_free(rs);
		rs = NULL;
	}
	return t;
}

/* The job of (step, round) on commit idx, with its step row. */
static int
drive_make_job(const struct bisect_env *env, struct bisect_state *s, int64_t step,
    int64_t round, int64_t idx)
{
	const char *good = json_string_value(json_object_get(s->commits, "good"));
	const char *bad = json_string_value(json_object_get(s->commits, "bad"));
	const json_t *names = json_object_get(json_object_get(s->spec, "machines"), "names");
	const struct recipe *rec = NULL;
	struct job_spec *job = NULL;
	struct plan *p = NULL;
	struct bf_diag d;
	json_t *doc;
	char *ntext = NULL;
	int64_t jid = 0;
	int r;

	bf_diag_clear(&d);
	if ((doc = bisect_step_job(s->spec, s->row->id, step, round, good, bad,
	    list_sha(s, idx))) == NULL)
		return BF_ERR_ALLOC;
	/* the checks of POST: a recipe may have changed since the request */
	if ((r = job_from_json(doc, &job, &d)) != 0 ||
	    (rec = recipes_get(env->rs, job->recipe)) == NULL ||
	    (r = job_validate(job, rec, env->workdir_root, &d)) != 0 ||
	    (r = plan_job(job, rec, &p, &d)) != 0) {
		if (r == BF_ERR_ALLOC)
			goto out;
		r = drive_fail(env, s, "step %lld: its job is refused: %s%s%s", (long long)step,
		    d.field[0] ? d.field : "", d.field[0] ? ": " : "",
		    d.msg[0] ? d.msg : "the recipe is no longer installed");
		goto out;
	}
	if (names != NULL && (ntext = json_dumps(names, JSON_COMPACT)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = store_bisect_step_job(env->st, s->row->id, step, round, idx, list_sha(s, idx), job,
	    rec, p, p->machine_class, ntext, &jid);
	if (r == BF_ERR_EXISTS || r == BF_ERR_STATE) {
		r = 0;		/* another driver made it, or it was cancelled */
		goto out;
	}
	if (r != 0)
		goto out;
	events_job(env->ev, jid);
	if (env->kick != NULL)
		env->kick(env->kick_arg);
	drive_event(env, s->row->id);
out:
	free(ntext);
	plan_free(p);
	job_free(job);
	json_decref(doc);
	return r;
}

/* The samples of one kernel of one step, grown run by run. */
struct kside {
	double *v;
	int *boot;
	size_t n, cap;
};

static int
kside_add(struct kside *k, double v, int boot)
{
	if (k->n == k->cap) {
		size_t nc = k->cap ? k->cap * 2 : 64;
		double *nv;
		int *nb;

		if (nc > STATS_MAX_SAMPLES)
			return BF_ERR_TOOBIG;
		if ((nv = realloc(k->v, nc * sizeof(*nv))) == NULL)
			return BF_ERR_ALLOC;
		k->v = nv;
		if ((nb = realloc(k->boot, nc * sizeof(*nb))) == NULL)
			return BF_ERR_ALLOC;
		k->boot = nb;
		k->cap = nc;
	}
	k->v[k->n] = v;
	k->boot[k->n++] = boot;
	return 0;
}

static const char *const kside_names[3] = { "good", "bad", "mid" };

/*
 * The samples of the step whose rows are [first, last], per kernel: mid's
 * from the step's own rounds; good's and bad's from every row so far, the
 * earlier steps' too, since every step boots the same two kernels (built
 * from the same commits by the same spec). A reference measured again at
 * each step only narrows: with 2 boots a side Welch has about 1 degree of
 * freedom, so a step of its own often cannot bound even a -97% change and
 * costs another round of 3 kernels. Boot ids are distinct per row.
 * why[k * whysz] gets the first error of kernel k's runs that did not end
 * done; *ref_steps the steps whose good or bad boots were pooled.
 */
static int
step_samples(const struct bisect_env *env, const struct bisect_state *s, size_t first,
    size_t last, const char *metric, struct kside k[3], char *why, size_t whysz,
    int64_t *ref_steps)
{
	struct store_runs *rs = NULL;
	const struct store_run *run;
	size_t i, j, q, n0[2];
	int64_t counted = 0;
	int r = 0, side;

	for (side = 0; side < 3; side++)
		why[side * whysz] = '\0';
	*ref_steps = 0;
	for (i = 0; i <= last && r == 0; i++) {
		n0[0] = k[0].n;
		n0[1] = k[1].n;
		if ((r = store_job_runs(env->st, s->steps[i].job_id, 1, &rs)) != 0)
			break;
		for (j = 0; j < rs->n && r == 0; j++) {
			run = &rs->run[j];
			for (side = 0; side < 3; side++)
				if (run->req_kernel != NULL &&
				    strcmp(run->req_kernel, kside_names[side]) == 0)
					break;
			if (side == 3 || (side == 2 && i < first))
				continue;
			if (strcmp(run->state, "done") != 0) {
				/* the first failure of each kernel */
				if (why[side * whysz] == '\0')
					snprintf(why + side * whysz, whysz, "%s run %lld %s: %.200s",
					    kside_names[side], (long long)run->id, run->state,
					    run->error != NULL ? run->error : "no error recorded");
				continue;
			}
			for (q = 0; q < run->nsamples && r == 0; q++)
				if (strcmp(run->samples[q].metric, metric) == 0)
					r = kside_add(&k[side], run->samples[q].value,
					    (int)(i * BF_MAX_BOOTS + run->boot));
		}
		store_runs_free(rs);
		rs = NULL;
		/* rows are in step order: count each step once */
		if ((k[0].n > n0[0] || k[1].n > n0[1]) && (*ref_steps == 0 ||
		    s->steps[i].step != counted)) {
			counted = s->steps[i].step;
			(*ref_steps)++;
		}
	}
	return r;
}

/* The last step's job is over: its verdict, and what follows from it. */
static int
drive_classify(const struct bisect_env *env, struct bisect_state *s, size_t last)
{
	const struct store_bisect_step *e = &s->steps[last];
	const char *metric = json_string_value(json_object_get(s->spec, "metric"));
	const char *dir = json_string_value(json_object_get(s->spec, "direction"));
	struct bisect_samples g, b, m;
	struct bisect_class c;
	struct kside k[3];
	json_t *stats = NULL;
	char *stext = NULL, why[3][300];
	size_t first = last;
	int64_t max_rounds = json_integer_value(json_object_get(s->spec, "max_rounds"));
	int64_t ref_steps = 0;
	double thr = json_number_value(json_object_get(s->spec, "threshold_pct"));
	int r, i;

	memset(k, 0, sizeof(k));
	while (first > 0 && s->steps[first - 1].step == e->step)
		first--;
	if (metric == NULL || dir == NULL) {
		r = drive_fail(env, s, "the stored spec has no metric or direction");
		goto out;
	}
	if ((r = step_samples(env, s, first, last, metric, k, why[0], sizeof(why[0]),
	    &ref_steps)) != 0)
		goto out;
	g = (struct bisect_samples){ k[0].v, k[0].boot, k[0].n };
	b = (struct bisect_samples){ k[1].v, k[1].boot, k[1].n };
	m = (struct bisect_samples){ k[2].v, k[2].boot, k[2].n };
	if ((r = bisect_classify(&g, &b, &m, strcmp(dir, "higher_is_better") == 0, thr,
	    e->round + 1 >= max_rounds, &c)) != 0)
		goto out;
	/* good or bad did not build or boot: no round can fix that */
	if (g.n == 0 || b.n == 0) {
		i = g.n == 0 ? 0 : 1;
		r = drive_fail(env, s, "step %lld: the %s kernel has no samples: %.300s",
		    (long long)e->step, kside_names[i], why[i][0] ? why[i] : "its runs recorded none");
		goto out;
	}
	if (c.verdict == BISECT_SKIP && m.n == 0 && why[2][0] != '\0')
		snprintf(c.why, sizeof(c.why), "%.250s", why[2]);	/* did not build or boot */
	if ((stats = bisect_class_json(&c)) == NULL ||
	    json_object_set_new(stats, "job", json_integer((json_int_t)e->job_id)) != 0 ||
	    json_object_set_new(stats, "rounds", json_integer((json_int_t)(last - first + 1))) !=
	    0 || json_object_set_new(stats, "reference_steps", json_integer((json_int_t)ref_steps))
	    != 0 || (stext = json_dumps(stats, JSON_COMPACT)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (c.verdict == BISECT_GOOD && e->idx > s->lo)
		s->lo = e->idx;
	else if (c.verdict == BISECT_BAD && e->idx < s->hi)
		s->hi = e->idx;
	if (c.verdict == BISECT_NODIFF)
		r = drive_advance(env, s, e->step, e->round, "skip", stext, "failed", NULL, c.why,
		    state_machine_s(env, s));
	else
		r = drive_advance(env, s, e->step, e->round, bisect_verdict_name(c.verdict),
		    stext, "running", NULL, s->row->message, state_machine_s(env, s));
	if (r == 0 && c.verdict != BISECT_NODIFF) {
		snprintf(s->steps[last].verdict, sizeof(s->steps[last].verdict), "%s",
		    bisect_verdict_name(c.verdict));
		if (c.verdict == BISECT_SKIP)
			s->skipped[e->idx] = 1;
	}
out:
	for (i = 0; i < 3; i++) {
		free(k[i].v);
		free(k[i].boot);
	}
	json_decref(stats);
	free(stext);
	return r;
}

/* Nothing pending: the next round, the next step, or the end. */
static int
drive_next(const struct bisect_env *env, struct bisect_state *s)
{
	const struct store_bisect_step *e = s->nsteps ? &s->steps[s->nsteps - 1] : NULL;
	int64_t max_steps = json_integer_value(json_object_get(s->spec, "max_steps"));
	int64_t step = e != NULL ? e->step + 1 : 0, idx;
	const json_t *fb;
	char msg[BISECT_MSG];

	if (e != NULL && strcmp(e->verdict, "more") == 0)
		return drive_make_job(env, s, e->step, e->round + 1, e->idx);
	idx = bisect_next(s->lo, s->hi, s->skipped, s->n);
	if (idx == BISECT_NEXT_DONE) {
		fb = json_array_get(s->list, (size_t)s->hi);
		snprintf(msg, sizeof(msg), "%s", json_string_value(json_array_get(fb, 1)) ?
		    json_string_value(json_array_get(fb, 1)) : "");
		return drive_advance(env, s, -1, 0, NULL, NULL, "done", list_sha(s, s->hi),
		    msg, state_machine_s(env, s));
	}
	if (idx == BISECT_NEXT_SKIPPED)
		return drive_fail(env, s, "only skipped commits are left: the first bad commit is "
		    "one of %lld commits after %.12s up to %.12s", (long long)(s->hi - s->lo),
		    s->lo >= 0 ? list_sha(s, s->lo) : json_string_value(json_object_get(s->commits,
		    "good")), list_sha(s, s->hi));
	if (step >= max_steps)
		return drive_fail(env, s, "max_steps (%lld) reached: the first bad commit is one "
		    "of %lld commits up to %.12s", (long long)max_steps,
		    (long long)(s->hi - s->lo), list_sha(s, s->hi));
	return drive_make_job(env, s, step, 0, idx);
}

static int
drive_one(const struct bisect_env *env, int64_t id)
{
	struct bisect_state s;
	struct store_job *j = NULL;
	const struct store_bisect_step *e;
	int r, pass, resolved;

	/* a second pass when this one resolved the commits: step 0 at once */
	for (pass = 0; pass < 2; pass++) {
		if ((r = state_load(env, id, &s)) != 0) {
			if (r == BF_ERR_PARSE && s.row != NULL)
				r = drive_fail(env, &s, "the stored bisection is unreadable");
			goto out;
		}
		if (strcmp(s.row->state, "running") != 0 || s.row->commits != NULL)
			break;
		r = drive_resolve(env, &s);
		resolved = s.row->commits != NULL;
		state_clear(&s);
		if (r != 0 || !resolved)
			return r;	/* failed, or waiting for the builder */
	}
	if (pass == 2 || strcmp(s.row->state, "running") != 0 || s.row->commits == NULL)
		goto out;
	e = s.nsteps ? &s.steps[s.nsteps - 1] : NULL;
	if (e != NULL && strcmp(e->verdict, "pending") == 0) {
		if ((r = store_job_get(env->st, e->job_id, &j)) != 0)
			goto out;
		if (strcmp(j->state, "cancelled") == 0) {
			r = drive_fail(env, &s, "step %lld's job %lld was cancelled",
			    (long long)e->step, (long long)e->job_id);
			goto out;
		}
		if (strcmp(j->state, "done") != 0 && strcmp(j->state, "failed") != 0)
			goto out;	/* still measuring */
		if ((r = drive_classify(env, &s, s.nsteps - 1)) != 0)
			goto out;
		if (strcmp(s.steps[s.nsteps - 1].verdict, "pending") == 0)
			goto out;	/* the bisection ended (failed) */
	}
	r = drive_next(env, &s);
out:
	store_job_free(j);
	state_clear(&s);
	return r;
}

int
bisect_tick(const struct bisect_env *env)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	int r, first = 0;

	if ((r = store_bisect_running(env->st, &ids, &n)) != 0)
		return r;
	/* one bisection's trouble is its own: the others go on */
	for (i = 0; i < n; i++)
		if ((r = drive_one(env, ids[i])) != 0 && first == 0)
			first = r;
	free(ids);
	return first;
}

/* --- the thread --- */

struct bisect_driver {
	struct bisect_env env;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, kicked;
};

static void *
driver_main(void *arg)
{
	struct bisect_driver *b = arg;
	struct timespec ts;
	int stop;

	for (;;) {
		(void)bisect_tick(&b->env);
		pthread_mutex_lock(&b->mu);
		if (!b->stop && !b->kicked) {
			bf_abstime(CLOCK_REALTIME, BISECT_POLL_MS, &ts);
			(void)pthread_cond_timedwait(&b->cv, &b->mu, &ts);
		}
		b->kicked = 0;
		stop = b->stop;
		pthread_mutex_unlock(&b->mu);
		if (stop)
			break;
	}
	return NULL;
}

int
bisect_driver_start(const struct bisect_env *env, struct bisect_driver **out)
{
	struct bisect_driver *b;

	*out = NULL;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return BF_ERR_ALLOC;
	b->env = *env;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	if (pthread_create(&b->th, NULL, driver_main, b) != 0) {
		pthread_mutex_destroy(&b->mu);
		pthread_cond_destroy(&b->cv);
		free(b);
		return BF_ERR_SYS;
	}
	*out = b;
	return 0;
}

void
bisect_driver_kick(struct bisect_driver *b)
{
	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->kicked = 1;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

void
bisect_driver_stop(struct bisect_driver *b)
{
	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = 1;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->th, NULL);
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b);
}
