/*
 * kdispatch.c: a claim's kernel built on a builder, once per build key
 * (kdispatch.h). Install and verify are in kdispatch-install.c.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "artifact.h"
#include "buf.h"
#include "events.h"
#include "kbline.h"
#include "kbuild.h"
#include "kdispatch.h"
#include "kdispatch-int.h"
#include "parse.h"
#include "sha256.h"
#include "shquote.h"
#include "store.h"

/*
 * Which key a job's spec came to: the prep (a clone and a config, minutes)
 * is run once per job and spec in this process, not once per run. Lost
 * with the process, which then preps again: the key is the same.
 */
#define KD_CACHE	64
static struct {
	int64_t job_id;
	char name[BF_MAX_NAME + 1];
	char key[KSPEC_KEY_HEX + 1];
} kd_cache[KD_CACHE];
static size_t kd_cache_next;
static pthread_mutex_t kd_cache_mu = PTHREAD_MUTEX_INITIALIZER;

static int
kd_cache_get(int64_t job_id, const char *name, char key[KSPEC_KEY_HEX + 1])
{
	size_t i;
	int found = 0;

	pthread_mutex_lock(&kd_cache_mu);
	for (i = 0; i < KD_CACHE && !found; i++)
		if (kd_cache[i].job_id == job_id && strcmp(kd_cache[i].name, name) == 0) {
			memcpy(key, kd_cache[i].key, KSPEC_KEY_HEX + 1);
			found = 1;
		}
	pthread_mutex_unlock(&kd_cache_mu);
	return found;
}

static void
kd_cache_put(int64_t job_id, const char *name, const char *key)
{
	pthread_mutex_lock(&kd_cache_mu);
	kd_cache[kd_cache_next].job_id = job_id;
	snprintf(kd_cache[kd_cache_next].name, sizeof(kd_cache[0].name), "%s", name);
	snprintf(kd_cache[kd_cache_next].key, sizeof(kd_cache[0].key), "%s", key);
	kd_cache_next = (kd_cache_next + 1) % KD_CACHE;
	pthread_mutex_unlock(&kd_cache_mu);
}

void
kdispatch_log(const struct kdispatch_env *env, int64_t run_id, const char *stream,
    const char *fmt, ...)
{
	char line[BF_MAX_LOG_LINE + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	env->renv->sink.ops->log(env->renv->sink.arg, run_id, stream, line);
	events_log(env->renv->ev, run_id, stream, line);
}

void
kdispatch_set(struct run_outcome *o, enum run_action action, const char *state, const char *fmt, ...)
{
	va_list ap;

	o->action = action;
	o->state = state;
	o->exit_status = -1;
	va_start(ap, fmt);
	vsnprintf(o->message, sizeof(o->message), fmt, ap);
	va_end(ap);
}

const struct kspec *
kdispatch_spec(const struct runner_claim *rc)
{
	const struct job_spec *job = rc->suite != NULL ? rc->suite : rc->job;

	if (rc->c->kernel == NULL || job == NULL)
		return NULL;
	return kspec_find(job->kernels, rc->c->kernel);
}

/* A command's whole stdout, trimmed of its newline; 0 only for status 0. */
int
kdispatch_capture(struct transport *tr, const char *cmd, char *out, size_t outsz, int timeout_ms,
    struct bf_diag *d)
{
	struct buf b;
	size_t n;
	int r, status = -1;

	buf_init(&b, 64 * 1024);
	if ((r = transport_capture(tr, cmd, &b, NULL, timeout_ms, &status, d)) != 0)
		goto out;
	if (status != 0) {
		bf_diag_set(d, NULL, "`%.80s` exited with status %d", cmd, status);
		r = BF_ERR_IO;
		goto out;
	}
	n = b.len;
	while (n > 0 && (b.data[n - 1] == '\n' || b.data[n - 1] == '\r'))
		n--;
	snprintf(out, outsz, "%.*s", (int)n, b.data != NULL ? b.data : "");
out:
	buf_free(&b);
	return r;
}

/* What one `agent build` sent back. */
struct kd_rx {
	const struct kdispatch_env *env;
	int64_t run_id;
	const char *key;		/* building: renew its lease */
	time_t renewed;
	struct artifact_rx art;
	struct buf log;			/* the whole log, capped: an artifact */
	unsigned long log_cut;		/* lines past the cap */
	char tree[KBLINE_MAX_VALUE + 1], release[KBLINE_MAX_VALUE + 1];
	char failed[300];		/* the command that failed, "" when none */
	char error[BF_MAX_LOG_LINE + 1];	/* an error line of the agent */
	int done, done_ok, refused;
	void *config;			/* prep: the .config's bytes */
	size_t config_len;
	/* build: artifacts stored (sha256), "" when not */
	char sha[4][65];
};

static const char *const kd_art_names[4] = { "image", "config", "sysmap", "modules" };

static void
kd_rx_logline(struct kd_rx *x, const char *line)
{
	if (x->log.len + strlen(line) + 1 > KDISPATCH_MAX_LOG) {
		x->log_cut++;
		return;
	}
	if (buf_puts(&x->log, line) != 0 || buf_puts(&x->log, "\n") != 0)
		x->log_cut++;
}

/* An artifact complete and checked: the .config of a prep kept, a build's
 * into the artifact directory and the store. */
static void
kd_rx_artifact(struct kd_rx *x, const struct agentline_artifact_end *e)
{
	char why[512], sha[65];
	size_t i;
	int r;

	if (artifact_rx_end(&x->art, e, why, sizeof(why)) != 0) {
		kdispatch_log(x->env, x->run_id, "coord", "build artifact refused: %s", why);
		return;
	}
	if (x->key == NULL) {
		if (strcmp(e->name, "config") == 0 && x->config == NULL &&
		    (x->config = malloc(x->art.data.len + 1)) != NULL) {
			memcpy(x->config, x->art.data.data, x->art.data.len);
			((char *)x->config)[x->art.data.len] = '\0';
			x->config_len = x->art.data.len;
		}
		return;
	}
	for (i = 0; i < 4 && strcmp(kd_art_names[i], e->name) != 0; i++)
		;
	if (i == 4)
		return;
	if ((r = kstore_put(x->env->ks, x->art.data.data, x->art.data.len, sha)) != 0 ||
	    (r = store_kartifact_add(x->env->renv->st, sha, e->name,
	    (int64_t)x->art.data.len)) != 0) {
		kdispatch_log(x->env, x->run_id, "coord", "build artifact %s not stored: %s", e->name,
		    bf_err_str(r));
		return;
	}
	memcpy(x->sha[i], sha, sizeof(sha));
}

static int
kd_on_line(void *arg, int stream, const char *line, size_t len, int truncated)
{
	struct kd_rx *x = arg;
	struct kbline l;
	struct bf_diag d;
	time_t now;

	(void)stream;
	if (truncated || kbline_decode(line, len, &l, &d) != 0) {
		if (x->refused++ < 20)
			kdispatch_log(x->env, x->run_id, "coord", "refused build line (%s): %.200s",
			    truncated ? "too long" : d.msg, line);
		kbline_clear(&l);
		return 0;
	}
	switch (l.type) {
	case KBLINE_LOG:
		if (l.u.log.line != NULL && l.u.log.line[0] != '\0') {
			kdispatch_log(x->env, x->run_id, l.u.log.is_stderr ? "stderr" : "stdout", "%s",
			    l.u.log.line);
			kd_rx_logline(x, l.u.log.line);
		} else if (l.u.log.dropped > 0) {
			kdispatch_log(x->env, x->run_id, "coord", "the agent dropped %lld build lines",
			    (long long)l.u.log.dropped);
		}
		break;
	case KBLINE_ERROR:
		snprintf(x->error, sizeof(x->error), "%s", l.u.error.msg ? l.u.error.msg : "");
		kdispatch_log(x->env, x->run_id, "agent", "%s", x->error);
		break;
	case KBLINE_DONE:
		x->done = 1;
		x->done_ok = l.u.done.ok;
		break;
	case KBLINE_VALUE:
		/* a bisection's good/bad are no build's values */
		if (strcmp(l.u.value.what, "tree") == 0 || strcmp(l.u.value.what, "release") == 0)
			snprintf(strcmp(l.u.value.what, "tree") == 0 ? x->tree : x->release,
			    sizeof(x->tree), "%s", l.u.value.value);
		break;
	case KBLINE_FAILED:
		if (l.u.failed.why != NULL)
			snprintf(x->failed, sizeof(x->failed), "%s: %s", l.u.failed.what,
			    l.u.failed.timeout ? "timed out" : l.u.failed.why);
		else
			snprintf(x->failed, sizeof(x->failed), "%s: exit status %lld",
			    l.u.failed.what, (long long)l.u.failed.status);
		break;
	case KBLINE_ARTIFACT:
		artifact_rx_chunk(&x->art, &l.u.artifact);
		break;
	case KBLINE_ARTIFACT_END:
		kd_rx_artifact(x, &l.u.artifact_end);
		break;
	case KBLINE_NONE:
		break;
	}
	kbline_clear(&l);
	/* the key's lease lives while the build talks */
	now = time(NULL);
	if (x->key != NULL && now - x->renewed >= x->env->renv->lease_s / 3) {
		x->renewed = now;
		(void)store_kbuild_renew(x->env->renv->st, x->key, x->env->renv->lease_s);
	}
	return 0;
}

static void
kd_rx_init(struct kd_rx *x, const struct kdispatch_env *env, int64_t run_id, const char *key)
{
	memset(x, 0, sizeof(*x));
	x->env = env;
	x->run_id = run_id;
	x->key = key;
	x->renewed = time(NULL);
	artifact_rx_init(&x->art);
	buf_init(&x->log, KDISPATCH_MAX_LOG + 64);
}

static void
kd_rx_free(struct kd_rx *x)
{
	artifact_rx_free(&x->art);
	buf_free(&x->log);
	free(x->config);
}

/* Send a plan to the builder's agent; what came back into x. */
static int
kd_run_plan(const struct kdispatch_env *env, const struct runner_env *benv,
    struct transport *btr, const struct kbuild_plan *p, int prep, struct kd_rx *x,
    struct bf_diag *d)
{
	json_t *doc = NULL, *arts;
	char *text = NULL, cfg[BOOT_MAX_PATH + 16];
	struct buf cmd;
	int r, status = -1, timeout_s = env->timeout_s > 0 ? env->timeout_s : KDISPATCH_TIMEOUT_S;

	buf_init(&cmd, 8192);
	if ((r = kbuild_plan_doc(p, timeout_s, KBLINE_MAX_ARTIFACT, &doc)) != 0)
		goto out;
	/* the prep's .config comes back too: the build key is made of it */
	snprintf(cfg, sizeof(cfg), "%s/out/.config", p->dir);
	arts = json_object_get(doc, "artifacts");
	if (prep && json_array_size(arts) == 0 && json_array_append_new(arts,
	    json_pack("{s:s,s:s}", "name", "config", "path", cfg)) != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((text = json_dumps(doc, JSON_COMPACT)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = runner_agent_cmd(benv, &cmd)) != 0 || (r = buf_puts(&cmd, " build")) != 0)
		goto out;
	r = transport_exec(btr, cmd.data, text, strlen(text), kd_on_line, x,
	    benv->link_timeout_ms, (timeout_s + 120) * 1000, &status, d);
	if (r == 0 && status != 0 && x->failed[0] == '\0')
		snprintf(x->failed, sizeof(x->failed), "agent build: exit status %d%s%.200s",
		    status, x->error[0] ? ": " : "", x->error);
out:
	free(text);
	json_decref(doc);
	buf_free(&cmd);
	return r;
}

/* The builder: the target itself when it has the role, else the first
 * machine by name that has it and is not offline or quarantined. */
static int
kd_builder(const struct kdispatch_env *env, const struct store_machine *m,
    struct store_machine **list, size_t *n, const struct store_machine **b)
{
	size_t i;
	int r;

	*b = NULL;
	if (m->roles != NULL && strstr(m->roles, "build") != NULL) {
		*b = m;
		return 0;
	}
	if ((r = store_machine_list(env->renv->st, list, n)) != 0)
		return r;
	for (i = 0; i < *n && *b == NULL; i++)
		if ((*list)[i].roles != NULL && strstr((*list)[i].roles, "build") != NULL &&
		    strcmp((*list)[i].state, "offline") != 0 &&
		    strcmp((*list)[i].state, "quarantined") != 0)
			*b = &(*list)[i];
	return 0;
}

/* The row of a key done or failed into k / o. */
static void
kd_from_row(const struct kdispatch_env *env, const struct runner_claim *rc, const char *key,
    struct kdispatch_kernel *k, struct run_outcome *o)
{
	struct store_kbuild row;
	const char *name = rc->c->kernel;
	int r;

	if ((r = store_kbuild_get(env->renv->st, key, &row)) != 0) {
		kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: reading build %.12s: %s", name, key,
		    bf_err_str(r));
		return;
	}
	if (strcmp(row.state, "done") != 0 && strcmp(row.state, "failed") != 0) {
		kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: build %.12s is being built", name,
		    key);
		return;
	}
	if (strcmp(row.state, "failed") == 0) {
		kdispatch_set(o, RUN_FINISH, "failed", "kernel %s (build key %.12s): the build failed: "
		    "%s", name, key, row.error[0] != '\0' ? row.error : "(no error line)");
		return;
	}
	snprintf(k->key, sizeof(k->key), "%s", key);
	snprintf(k->release, sizeof(k->release), "%s", row.release);
	snprintf(k->image_sha256, sizeof(k->image_sha256), "%s", row.image_sha256);
	snprintf(k->config_sha256, sizeof(k->config_sha256), "%s", row.config_sha256);
	snprintf(k->modules_sha256, sizeof(k->modules_sha256), "%s", row.modules_sha256);
	if (boot_check_release(k->release, NULL) != 0 || !sha256_is_hex(k->image_sha256) ||
	    !sha256_is_hex(k->config_sha256)) {
		kdispatch_set(o, RUN_FINISH, "failed", "kernel %s: build %.12s is done but lacks a "
		    "release, image or config", name, key);
		return;
	}
	o->action = RUN_PROCEED;
}

/* What a prep came to. */
struct kd_prepped {
	char key[KSPEC_KEY_HEX + 1];
	char lv[KSPEC_MAX_LOCALVERSION + 16];
	char tree[KBLINE_MAX_VALUE + 1];
	char config_sha256[65];
	int modules, jobs;
};

/* The build of key on the builder, its row set done or failed. */
static void
kd_build(const struct kdispatch_env *env, const struct runner_env *benv,
    struct transport *btr, const struct runner_claim *rc, const struct kspec *ks,
    const char *builddir, const char *arch, const struct kd_prepped *pp,
    struct kdispatch_kernel *k, struct run_outcome *o)
{
	struct kbuild_plan *p = NULL;
	struct store_kbuild_out out;
	struct kd_rx x;
	struct bf_diag d;
	char err[BF_MAX_LOG_LINE + 1], logsha[65];
	int r;

	bf_diag_clear(&d);
	kd_rx_init(&x, env, rc->c->run_id, pp->key);
	memset(&out, 0, sizeof(out));
	if ((r = kbuild_build(ks, builddir, arch, pp->jobs, pp->lv, pp->modules, pp->tree,
	    pp->config_sha256, &p, &d)) != 0) {
		snprintf(err, sizeof(err), "%s", d.msg);
		goto failed;
	}
	kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: building key %.12s on %s (make -j%d, "
	    "LOCALVERSION=%s) in its kept tree %s", rc->c->kernel, pp->key, benv->machine, pp->jobs,
	    pp->lv, p->dir);
	if ((r = kd_run_plan(env, benv, btr, p, 0, &x, &d)) != 0) {
		/* the builder went away: the key's lease lapses, another takes it */
		kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: builder %s lost during the build: %s",
		    rc->c->kernel, benv->machine, d.msg[0] ? d.msg : bf_err_str(r));
		goto out;
	}
	if (x.failed[0] != '\0' || !x.done_ok) {
		kbuild_error_line(x.log.data != NULL ? x.log.data : "", x.log.len, err,
		    sizeof(err));
		if (err[0] == '\0')
			snprintf(err, sizeof(err), "%s", x.failed[0] ? x.failed :
			    "the agent did not say done");
		goto failed;
	}
	/* the release carries the key's tag, or two builds could share files */
	if (strlen(x.release) < strlen(pp->lv) ||
	    strcmp(x.release + strlen(x.release) - strlen(pp->lv), pp->lv) != 0) {
		snprintf(err, sizeof(err), "the build's release \"%.64s\" does not end in its "
		    "LOCALVERSION %s", x.release, pp->lv);
		goto failed;
	}
	if (boot_check_release(x.release, NULL) != 0 || x.sha[0][0] == '\0' ||
	    x.sha[1][0] == '\0' || (pp->modules && x.sha[3][0] == '\0')) {
		snprintf(err, sizeof(err), "the build ended without %s",
		    boot_check_release(x.release, NULL) != 0 ? "a valid release" :
		    x.sha[0][0] == '\0' ? "its image" : x.sha[1][0] == '\0' ? "its .config" :
		    "its modules");
		goto failed;
	}
	out.release = x.release;
	out.image_sha256 = x.sha[0];
	out.config_sha256 = x.sha[1];
	out.sysmap_sha256 = x.sha[2][0] ? x.sha[2] : NULL;
	out.modules_sha256 = x.sha[3][0] ? x.sha[3] : NULL;
	goto finish;
failed:
	out.error = err;
	kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: build %.12s failed: %s", rc->c->kernel,
	    pp->key, err);
finish:
	if (x.log_cut > 0) {
		char note[64];

		snprintf(note, sizeof(note), "[%lu lines past the log's cap]\n", x.log_cut);
		x.log.len = x.log.len > KDISPATCH_MAX_LOG ? KDISPATCH_MAX_LOG : x.log.len;
		if (buf_puts(&x.log, note) != 0)
			x.log.len = KDISPATCH_MAX_LOG;
	}
	if (kstore_put(env->ks, x.log.data != NULL ? x.log.data : "", x.log.len, logsha) == 0 &&
	    store_kartifact_add(env->renv->st, logsha, "log", (int64_t)x.log.len) == 0)
		out.log_sha256 = logsha;
	if ((r = store_kbuild_finish(env->renv->st, pp->key, &out)) != 0) {
		kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: recording build %.12s: %s (its lease "
		    "lapsed?)", rc->c->kernel, pp->key, bf_err_str(r));
		goto out;
	}
	kd_from_row(env, rc, pp->key, k, o);
	k->built_here = 1;
out:
	kd_rx_free(&x);
	kbuild_plan_free(p);
}

/* Prep on the builder: the tree id and .config, so the key. */
static int
kd_prep(const struct kdispatch_env *env, const struct runner_env *benv,
    struct transport *btr, const struct runner_claim *rc, const struct kspec *ks,
    const char *builddir, const char *arch, struct kd_prepped *pp, struct run_outcome *o)
{
	struct kbuild_plan *p = NULL;
	struct kd_rx x;
	struct bf_diag d;
	char err[BF_MAX_LOG_LINE + 1];
	int r;

	bf_diag_clear(&d);
	kd_rx_init(&x, env, rc->c->run_id, NULL);
	if ((r = kbuild_prep(ks, builddir, arch, &p, &d)) != 0) {
		kdispatch_set(o, RUN_FINISH, "failed", "kernel %s: %s", ks->name, d.msg);
		goto out;
	}
	kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: preparing %s at %s on %s in its kept "
	    "tree %s", ks->name, ks->git, ks->commit, benv->machine, p->dir);
	if ((r = kd_run_plan(env, benv, btr, p, 1, &x, &d)) != 0) {
		kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: builder %s lost during the prep: %s",
		    ks->name, benv->machine, d.msg[0] ? d.msg : bf_err_str(r));
		goto out;
	}
	if (x.failed[0] != '\0' || !x.done_ok || x.config == NULL) {
		kbuild_error_line(x.log.data != NULL ? x.log.data : "", x.log.len, err,
		    sizeof(err));
		kdispatch_set(o, RUN_FINISH, "failed", "kernel %s: the prep failed (%s)%s%s", ks->name,
		    x.failed[0] ? x.failed : x.config == NULL ? "no .config came back" :
		    "the agent did not say done", err[0] ? ": " : "", err);
		r = BF_ERR_IO;
		goto out;
	}
	if ((r = kbuild_key(ks, x.tree, x.config, x.config_len, arch, pp->key, pp->lv,
	    sizeof(pp->lv), &d)) != 0) {
		kdispatch_set(o, RUN_FINISH, "failed", "kernel %s: %s", ks->name, d.msg);
		goto out;
	}
	pp->modules = kbuild_config_tristate(x.config, x.config_len, "MODULES") == 'y';
	snprintf(pp->tree, sizeof(pp->tree), "%s", x.tree);
	sha256_hex(x.config, x.config_len, pp->config_sha256);
	kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: tree %.12s, .config %zu bytes -> build "
	    "key %s", ks->name, x.tree, x.config_len, pp->key);
out:
	kd_rx_free(&x);
	kbuild_plan_free(p);
	return r;
}

/* The spec's JSON as the job holds it (the build row's "spec"). */
static char *
kd_spec_json(const struct runner_claim *rc, const char *name)
{
	const json_t *job = json_object_get(rc->spec, "job");
	const json_t *v = json_object_get(json_object_get(job, "kernels"), name);

	return v != NULL ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
}

/* Take the key: done/failed answered from its row, building elsewhere
 * waited for; 1 when it is ours to build. */
static int
kd_take(const struct kdispatch_env *env, const struct runner_claim *rc, const char *key,
    const char *builder, struct kdispatch_kernel *k, struct run_outcome *o)
{
	char *spec = kd_spec_json(rc, rc->c->kernel);
	time_t until = time(NULL) + env->busy_wait_s;
	int r, take = -1, said = 0;

	for (;;) {
		if ((r = store_kbuild_take(env->renv->st, key, spec ? spec : "{}", builder,
		    env->renv->lease_s, &take)) != 0) {
			kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: taking build %.12s: %s",
			    rc->c->kernel, key, bf_err_str(r));
			break;
		}
		if (take == STORE_KBUILD_MINE) {
			r = 1;
			break;
		}
		if (take == STORE_KBUILD_DONE) {
			(void)store_kbuild_touch(env->renv->st, key);
			kd_from_row(env, rc, key, k, o);
			if (o->action == RUN_PROCEED)
				kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: build key %.12s is "
				    "built already (release %s): reused, nothing built",
				    rc->c->kernel, key, k->release);
			break;
		}
		if (take == STORE_KBUILD_FAILED) {
			kd_from_row(env, rc, key, k, o);
			break;
		}
		if (!said++)
			kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: build key %.12s is being "
			    "built elsewhere; waiting", rc->c->kernel, key);
		if (time(NULL) >= until || (env->cancel != NULL && atomic_load(env->cancel))) {
			kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: build key %.12s is still being "
			    "built elsewhere; queued again", rc->c->kernel, key);
			break;
		}
		nanosleep(&(struct timespec){ KDISPATCH_BUSY_POLL_S, 0 }, NULL);
	}
	free(spec);
	return r == 1;
}

void
kdispatch_resolve(const struct kdispatch_env *env, const struct store_machine *m,
    struct transport *tr, int *agent_ok, const struct runner_claim *rc,
    struct kdispatch_kernel *k, struct run_outcome *o)
{
	const struct kspec *ks = kdispatch_spec(rc);
	const struct store_machine *b = NULL;
	struct store_machine *list = NULL;
	struct transport *btr = NULL, *own = NULL;
	struct runner_env benv;
	struct ssh_target t;
	struct bf_diag d;
	struct buf cmd;
	char key[KSPEC_KEY_HEX + 1], barch[64], tarch[64], nproc[32];
	const char *builddir = env->builddir != NULL ? env->builddir : KDISPATCH_DIR;
	struct kd_prepped pp;
	size_t n = 0;
	int64_t nj;
	int r, bok = 0, *bokp = &bok;

	memset(o, 0, sizeof(*o));
	memset(k, 0, sizeof(*k));
	bf_diag_clear(&d);
	buf_init(&cmd, 8192);
	if (ks == NULL) {
		o->action = RUN_PROCEED;
		goto out;
	}
	/* the same job's spec was prepped already: its row may answer */
	if (kd_cache_get(rc->c->job_id, ks->name, key)) {
		kd_from_row(env, rc, key, k, o);
		if (o->action == RUN_PROCEED || o->action == RUN_FINISH) {
			if (o->action == RUN_PROCEED)
				kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: build key %.12s "
				    "(release %s), as for this job's earlier runs", ks->name, key,
				    k->release);
			goto out;
		}
		memset(o, 0, sizeof(*o));
	}
	if ((r = kd_builder(env, m, &list, &n, &b)) != 0 || b == NULL) {
		if (r != 0)
			kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: listing machines: %s", ks->name,
			    bf_err_str(r));
		else
			kdispatch_set(o, RUN_FINISH, "failed", "kernel %s: no machine of the fleet has "
			    "the role build (nor has %s)", ks->name, m->name);
		goto out;
	}
	benv = *env->renv;
	benv.machine = b->name;
	benv.sudo = b->user != NULL && strcmp(b->user, "root") != 0;
	if (b == m) {
		btr = tr;
		bokp = agent_ok;
	} else {
		memset(&t, 0, sizeof(t));
		t.host = b->host;
		t.port = b->port;
		t.user = b->user;
		t.key_path = b->key_path;
		t.known_hosts = env->known_hosts;
		t.connect_timeout_ms = env->connect_timeout_ms;
		if ((r = env->connect(env->connect_arg, &t, &own, &d)) != 0) {
			kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: builder %s: %s", ks->name, b->name,
			    d.msg[0] ? d.msg : bf_err_str(r));
			goto out;
		}
		btr = own;
	}
	if ((r = runner_ensure_agent(&benv, btr, bokp, &d)) != 0 ||
	    (r = kdispatch_capture(btr, "uname -m", barch, sizeof(barch), 10000, &d)) != 0 ||
	    (r = kdispatch_capture(tr, "uname -m", tarch, sizeof(tarch), 10000, &d)) != 0 ||
	    (r = kdispatch_capture(btr, "nproc", nproc, sizeof(nproc), 10000, &d)) != 0) {
		kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: builder %s: %s", ks->name, b->name,
		    d.msg[0] ? d.msg : bf_err_str(r));
		goto out;
	}
	if (strcmp(barch, tarch) != 0 || kbuild_arch(barch) == NULL) {
		kdispatch_set(o, RUN_FINISH, "failed", "kernel %s: builder %s is %.32s, %s is %.32s: "
		    "benchfleet builds for the builder's own arch (x86_64, aarch64) only",
		    ks->name, b->name, barch, m->name, tarch);
		goto out;
	}
	/* a builder's nproc that is not a sane number builds with one job */
	memset(&pp, 0, sizeof(pp));
	pp.jobs = parse_i64(nproc, 1, KBUILD_MAX_JOBS, &nj) == 0 ? (int)nj : 1;
	/* the kept trees' directory; the agent keeps one tree per repository */
	if ((r = buf_puts(&cmd, "mkdir -p -- ")) != 0 || (r = shquote(&cmd, builddir)) != 0 ||
	    (r = kdispatch_capture(btr, cmd.data, nproc, sizeof(nproc), 60000, &d)) != 0) {
		kdispatch_set(o, RUN_REQUEUE, NULL, "kernel %s: builder %s: %s", ks->name, b->name,
		    d.msg[0] ? d.msg : bf_err_str(r));
		goto out;
	}
	if (kd_prep(env, &benv, btr, rc, ks, builddir, barch, &pp, o) == 0) {
		kd_cache_put(rc->c->job_id, ks->name, pp.key);
		if (kd_take(env, rc, pp.key, b->name, k, o))
			kd_build(env, &benv, btr, rc, ks, builddir, barch, &pp, k, o);
	}
out:
	if (o->action == RUN_PROCEED && ks != NULL)
		kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: release %s, build key %s, config "
		    "sha256 %s", ks->name, k->release, k->key, k->config_sha256);
	transport_close(own);
	store_machines_free(list, n);
	buf_free(&cmd);
}
