/*
 * runner.c: one run, start to finish, on an already connected machine.
 * It reads the claim and talks to the machine through a transport; it never
 * writes the store: streamed results go to env->sink, the end of the run is
 * returned in a struct run_outcome for the scheduler to apply.
 *
 * Nothing from the recipe or the job reaches the remote shell: the SSH
 * command line is the fixed "<agent> step" (the path shell-quoted), and the
 * step, argv included, travels as JSON on the agent's stdin.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentline.h"
#include "artifact.h"
#include "boot.h"
#include "buf.h"
#include "fingerprint.h"
#include "job.h"
#include "caps.h"
#include "plan.h"
#include "recipe.h"
#include "recipes.h"
#include "runner.h"
#include "shquote.h"

struct ingest {
	const struct runner_env *env;
	const struct store_claim *c;
	const struct recipe *r;
	int warmup;
	int hello_seen, done_seen, done_ok, iterations_seen;
	int metric_missing;
	int line_refused;		/* an iteration, hello or done line was refused */
	int samples_stored, snapshot_seen;
	/* the last iteration line: its counters line follows it, and is
	 * stored only when the iteration's own samples were */
	int64_t last_index;
	int last_measured;
	int64_t final_index;		/* the last measured one, when only the end
					 * follows it (no profile); else -1 */
	int counters_stored;
	int counters_noted;		/* its unsupported/notes are logged once */
	struct artifact_rx art;		/* the profile's artifact arriving */
	int artifacts_stored;
	int store_err;			/* storing a sample failed: BF_ERR_* */
	char store_msg[256];
	char first_error[512];
};

static void
sink_log(const struct runner_env *env, int64_t run_id, const char *stream, const char *line)
{
	env->sink.ops->log(env->sink.arg, run_id, stream, line);
}

/* Say how the run ends; the message is the run's error ("" for none). */
static void __attribute__((format(printf, 5, 6)))
outcome_set(struct run_outcome *o, enum run_action action, const char *state, int status,
    const char *fmt, ...)
{
	va_list ap;

	o->action = action;
	o->state = state;
	o->exit_status = status;
	va_start(ap, fmt);
	vsnprintf(o->message, sizeof(o->message), fmt, ap);
	va_end(ap);
}

/*
 * Defence in depth: the API only creates jobs with installed recipes, but
 * a job row holds its recipe as JSON, and a row is only as trustworthy as
 * whatever wrote the store. A claim whose recipe is not installed here
 * (the recipe directory loaded at start, or imported by an admin) is
 * failed with the reason and never reaches a machine. 0: it may run.
 */
static int
runner_recipe_installed(const struct runner_env *env, const struct runner_claim *rc,
    struct run_outcome *o)
{
	const struct store_claim *c = rc->c;
	char msg[256];
	int r;

	r = recipes_installed(env->recipes, env->st, rc->recipe_json);
	if (r == 1)
		return 0;
	if (r == 0) {
		snprintf(msg, sizeof(msg), "refused: recipe %.64s, as this job holds it, is not "
		    "installed here; only the recipe directory and recipes an admin imported "
		    "(benchfleet recipes import) run", c->recipe ? c->recipe : "?");
		r = BF_ERR_INVALID;
	} else
		snprintf(msg, sizeof(msg), "refused: checking the recipe: %s", bf_err_str(r));
	sink_log(env, c->run_id, "coord", msg);
	outcome_set(o, RUN_FINISH, "failed", -1, "%s", msg);
	return r;
}

/* The agent built for the machine's architecture, by `uname -m`. */
static const struct runner_agent *
runner_agent_for(const struct runner_env *env, struct transport *tr, struct bf_diag *d,
    int *rp)
{
	struct buf out;
	char arch[64], have[256];
	size_t i, n, used = 0;
	int status = -1;

	buf_init(&out, 256);
	*rp = transport_capture(tr, "uname -m", &out, NULL, 15000, &status, d);
	if (*rp != 0)
		goto fail;
	n = out.len;
	while (n > 0 && (out.data[n - 1] == '\n' || out.data[n - 1] == '\r' ||
	    out.data[n - 1] == ' '))
		n--;
	snprintf(arch, sizeof(arch), "%.*s", (int)(n < sizeof(arch) ? n : sizeof(arch) - 1),
	    out.data ? out.data : "");
	buf_free(&out);
	for (i = 0; i < env->nagents; i++)
		if (strcmp(env->agents[i].arch, arch) == 0)
			return &env->agents[i];
	have[0] = '\0';
	for (i = 0; i < env->nagents && used < sizeof(have); i++) {
		int k = snprintf(have + used, sizeof(have) - used, "%s%s", i ? ", " : "",
		    env->agents[i].arch);
		if (k > 0)
			used += (size_t)k;
	}
	bf_diag_set(d, NULL, "%s: no agent for its architecture \"%.40s\" (have: %s; see "
	    "--agent-aarch64)", env->machine, arch, have);
	*rp = BF_ERR_INVALID;
	return NULL;
fail:
	buf_free(&out);
	return NULL;
}

/*
 * The agent's command word. A lab user other than root runs it through
 * sudo -n, by its absolute path, as deploy/provision-machine's sudoers line
 * allows (sudo matches the path it is given, so ~ is spelled "$HOME").
 */
int
runner_agent_cmd(const struct runner_env *env, struct buf *cmd)
{
	int r;

	if (!env->sudo)
		return shquote(cmd, env->agent_remote);
	if ((r = buf_puts(cmd, "sudo -n ")) != 0)
		return r;
	if (env->agent_remote[0] != '/' && (r = buf_puts(cmd, "\"$HOME\"/")) != 0)
		return r;
	return shquote(cmd, env->agent_remote);
}

/* The step's arguments, the same for a step started ahead and one started
 * afresh (ssh_pre_take matches them): an agent waits for its step at most
 * BF_AGENT_STEP_WAIT_S. */
#define RUNNER_STEP_ARGS	" step --wait " BF_STR(BF_AGENT_STEP_WAIT_S)

void
runner_prestart(const struct runner_env *env, struct transport *tr, int agent_ok)
{
	struct bf_diag d;
	struct buf cmd;

	/* only an installed, current agent: ensure_agent would upload first */
	if (!agent_ok || !transport_alive(tr))
		return;
	bf_diag_clear(&d);
	buf_init(&cmd, 8192);
	/* a failure here is the next exec's to find and report */
	if (runner_agent_cmd(env, &cmd) == 0 && buf_puts(&cmd, RUNNER_STEP_ARGS) == 0)
		(void)transport_prestart(tr, cmd.data, env->link_timeout_ms, &d);
	buf_free(&cmd);
}

int
runner_ensure_agent(const struct runner_env *env, struct transport *tr, int *agent_ok,
    struct bf_diag *d)
{
	const struct runner_agent *ag = NULL;
	struct buf cmd, out;
	int ret, status = -1, pass;

	buf_init(&cmd, 8192);
	buf_init(&out, 8192);
	if (*agent_ok) {
		ret = 0;
		goto out;
	}
	if ((ag = runner_agent_for(env, tr, d, &ret)) == NULL)
		goto out;
	if ((ret = buf_puts(&cmd, "sha256sum -- ")) != 0 ||
	    (ret = shquote(&cmd, env->agent_remote)) != 0 ||
	    (ret = buf_puts(&cmd, " 2>/dev/null")) != 0)
		goto out;
	for (pass = 0; pass < 2; pass++) {
		buf_reset(&out);
		if ((ret = transport_capture(tr, cmd.data, &out, NULL, 30000, &status, d)) != 0)
			goto out;
		if (status == 0 && out.len >= 64 && strncmp(out.data, ag->sha256, 64) == 0) {
			*agent_ok = 1;
			ret = 0;
			goto out;
		}
		if (pass == 1)
			break;
		if ((ret = transport_upload(tr, ag->path, env->agent_remote, 0755, 60000, d)) != 0)
			goto out;
	}
	bf_diag_set(d, NULL, "agent on %s: sha256 after upload does not match %s",
	    env->machine, ag->sha256);
	ret = BF_ERR_PROTO;
out:
	buf_free(&cmd);
	buf_free(&out);
	return ret;
}

/* Keep the first failure of a step: it is the one worth reporting. */
/* Is m's stored fingerprint of another kernel than the one it last
 * reported (a boot whose probe was lost)? 0 when either is unknown. */
static int
fingerprint_stale(const struct store_machine *m)
{
	json_t *fp;
	const char *k;
	int stale;

	if (m->fingerprint == NULL || m->kernel == NULL ||
	    (fp = json_loads(m->fingerprint, 0, NULL)) == NULL)
		return 0;
	k = json_string_value(json_object_get(fp, "kernel"));
	stale = k != NULL && strcmp(k, m->kernel) != 0;
	json_decref(fp);
	return stale;
}

/*
 * The fingerprint of the boot the machine is now in, before the run's
 * step. A probe right after a boot can meet a machine still settling, so
 * a failure is tried once more two seconds later; a second failure is said
 * on the run's coord log (the machine's fingerprint stays the older one).
 */
static int
runner_boot_probe(const struct runner_env *env, struct transport *tr, int *agent_ok,
    const struct store_claim *c)
{
	char msg[BF_DIAG_MSG + 128];
	struct bf_diag d;
	int r, tries;

	for (tries = 0; tries < 2; tries++) {
		if (tries > 0)
			nanosleep(&(struct timespec){ 2, 0 }, NULL);
		bf_diag_clear(&d);
		if ((r = runner_probe(env, tr, agent_ok, &d)) == 0)
			return 0;
		if (r == BF_ERR_LOST || r == BF_ERR_TIMEOUT)
			break;		/* the caller decides about the link */
	}
	snprintf(msg, sizeof(msg), "boot %d: the fingerprint after the boot failed (%s); the "
	    "machine's is still the previous boot's", c->boot, d.msg[0] ? d.msg : bf_err_str(r));
	sink_log(env, c->run_id, "coord", msg);
	return r;
}

/*
 * The link dropped right after a boot that was verified (a freshly booted
 * guest's sshd can refuse or reset its first sessions). Reconnect through
 * the boot method without asking for a fresh boot: the machine is found on
 * the kernel and command line just verified, and nothing is rebooted. A
 * machine now in another boot than the one verified has rebooted by
 * itself: that boot is not ours, and the run is tried again.
 */
static void
runner_boot_relink(const struct runner_env *env, struct transport *tr, int *agent_ok,
    const struct boot_machine *bm, const struct store_claim *c, const char *kernel,
    const char *cmdline, struct boot_hooks *hooks, const char *booted_id, const char *group,
    struct run_outcome *o)
{
	struct boot_result res;
	struct bf_diag d;
	char msg[BF_DIAG_MSG + 160], key[600];
	int r;

	bf_diag_clear(&d);
	memset(&res, 0, sizeof(res));
	snprintf(msg, sizeof(msg), "boot %d: the link dropped after the boot was verified; "
	    "reconnecting", c->boot);
	sink_log(env, c->run_id, "coord", msg);
	hooks->fresh = 0;
	r = transport_boot(tr, bm, kernel, cmdline, hooks, &res, &d);
	*agent_ok = 0;
	if (r != 0) {
		env->sink.ops->boot_key(env->sink.arg, NULL);
		outcome_set(o, RUN_RETRY, NULL, -1, "attempt %d lost on %s after its boot: %s",
		    c->attempt, env->machine, d.msg[0] ? d.msg : bf_err_str(r));
		o->link_lost = !transport_alive(tr);
		return;
	}
	if (!res.rebooted && strcmp(res.boot_id, booted_id) != 0) {
		env->sink.ops->boot_key(env->sink.arg, NULL);
		outcome_set(o, RUN_RETRY, NULL, -1, "attempt %d: %s rebooted by itself after "
		    "boot %d was verified (boot_id %s, now %s)", c->attempt, env->machine,
		    c->boot, booted_id, res.boot_id);
		return;
	}
	if (res.rebooted) {
		/* it had fallen out of the boot and was booted again: that boot
		 * was verified by the method, and it is the run's now */
		snprintf(key, sizeof(key), "%s@%s", group, res.boot_id);
		env->sink.ops->boot_key(env->sink.arg, key);
	}
	if (runner_boot_probe(env, tr, agent_ok, c) == BF_ERR_LOST) {
		outcome_set(o, RUN_RETRY, NULL, -1, "attempt %d lost on %s after its boot, twice",
		    c->attempt, env->machine);
		o->link_lost = 1;
	}
}

static void
boot_log(void *arg, const char *line)
{
	const struct runner_env *env = ((const void *const *)arg)[0];
	const struct store_claim *c = ((const void *const *)arg)[1];

	sink_log(env, c->run_id, "coord", line);
	events_log(env->ev, c->run_id, "coord", line);
}

void
runner_boot(const struct runner_env *env, const struct store_machine *m,
    struct transport *tr, int *agent_ok, const struct runner_claim *rc, const char *group,
    struct run_outcome *o)
{
	const struct store_claim *c = rc->c;
	const struct job_spec *job = rc->job;
	const char *kernel = rc->built != NULL ? rc->built->release : c->kernel;
	struct boot_machine *bm = NULL;
	struct boot_result res;
	struct boot_hooks hooks;
	json_t *rj = NULL;
	struct buf out, cmdline;
	struct bf_diag d;
	char key[600], msg[BF_DIAG_MSG + 128], *rtext = NULL;
	const void *hookarg[2] = { env, c };
	int r, status = -1, multi, wants;
	size_t n;

	bf_diag_clear(&d);
	buf_init(&out, 256);
	buf_init(&cmdline, 8192);
	memset(&res, 0, sizeof(res));
	memset(o, 0, sizeof(*o));
	/* before a reboot for it: a run that will be refused needs none */
	if (runner_recipe_installed(env, rc, o) != 0)
		goto out;
	multi = job->boots > 1 || job->target_ci_pct > 0;
	wants = c->kernel != NULL || (c->cmdline != NULL && *c->cmdline != '\0');
	if (!wants && !multi)
		goto out;
	if (m->boot == NULL) {
		if (wants) {
			outcome_set(o, RUN_FINISH, "boot-failed", -1, "machine %s has no boot "
			    "configuration; this run needs kernel %s with cmdline \"%s\"",
			    m->name, kernel ? kernel : "(any)",
			    c->cmdline ? c->cmdline : "");
			goto out;
		}
		snprintf(msg, sizeof(msg), "boot %d: machine %s has no boot configuration; "
		    "repetition without a reboot", c->boot, m->name);
		sink_log(env, c->run_id, "coord", msg);
		goto out;
	}
	/* The boot this run needs; the machine's boot_id tells whether it is
	 * still the one we booted (a power cycle by hand makes a new one). */
	if ((r = transport_capture(tr, "cat /proc/sys/kernel/random/boot_id", &out, NULL,
	    10000, &status, &d)) != 0)
		goto lost;
	n = out.len;
	while (n > 0 && (out.data[n - 1] == '\n' || out.data[n - 1] == '\r'))
		n--;
	snprintf(key, sizeof(key), "%s@%.*s", group, (int)(n > 64 ? 64 : n),
	    out.data ? out.data : "");
	if (m->boot_key != NULL && strcmp(m->boot_key, key) == 0) {
		/* in the boot already (an earlier attempt booted it): its
		 * fingerprint must still be of the kernel it runs, or a probe
		 * lost with that attempt is taken now */
		if (fingerprint_stale(m))
			(void)runner_boot_probe(env, tr, agent_ok, c);
		goto out;
	}
	if (boot_config_loads(m->boot, strlen(m->boot), &bm, &d) != 0) {
		outcome_set(o, RUN_FINISH, "boot-failed", -1, "machine %s: boot configuration: %s",
		    m->name, d.msg);
		goto out;
	}
	/* a built kernel without an initrd of its own boots the machine's
	 * built_initrd, if its boot config names one */
	if (rc->built != NULL && boot_machine_add_kernel(bm, rc->built->release,
	    rc->built->image, rc->built->initrd != NULL ? rc->built->initrd :
	    bm->built_initrd) != 0) {
		outcome_set(o, RUN_FINISH, "boot-failed", -1, "machine %s: cannot boot the built "
		    "kernel %s (its boot configuration names that release already, or it is "
		    "invalid)", m->name, rc->built->release);
		goto out;
	}
	/* With kexec and a command, benchfleet.boot=JOB.BOOT (an unknown module
	 * parameter: the kernel ignores it) leaves in /proc/cmdline which boot
	 * of which job the machine is in. grub-reboot cannot add parameters to
	 * a one-shot entry; there hooks.fresh alone makes the boot a new one. */
	if (strcmp(boot_method_name(bm), "kexec") == 0 ||
	    strcmp(boot_method_name(bm), "command") == 0)
		r = buf_printf(&cmdline, "%s%sbenchfleet.boot=%lld.%d",
		    c->cmdline ? c->cmdline : "", c->cmdline && *c->cmdline ? " " : "",
		    (long long)c->job_id, c->boot);
	else
		r = buf_puts(&cmdline, c->cmdline ? c->cmdline : "");
	if (r != 0) {
		outcome_set(o, RUN_FINISH, "failed", -1, "command line too long");
		goto out;
	}
	env->sink.ops->machine(env->sink.arg, "booting", NULL, NULL, 0);
	events_machine(env->ev, m->name);
	snprintf(msg, sizeof(msg), "boot %d: %s into %s with \"%s\"", c->boot,
	    boot_method_name(bm), kernel ? kernel : "the running kernel",
	    cmdline.data ? cmdline.data : "");
	sink_log(env, c->run_id, "coord", msg);
	memset(&hooks, 0, sizeof(hooks));
	hooks.log = boot_log;
	hooks.arg = hookarg;
	hooks.fresh = 1;	/* the boot key differs: this boot must be a new one */
	r = transport_boot(tr, bm, kernel, cmdline.data ? cmdline.data : "", &hooks, &res,
	    &d);
	*agent_ok = 0;		/* a new boot may have a new root file system */
	if ((rj = boot_result_json(&res)) != NULL &&
	    (rtext = json_dumps(rj, JSON_COMPACT)) != NULL)
		sink_log(env, c->run_id, "coord", rtext);
	if (r == 0) {
		snprintf(key, sizeof(key), "%s@%s", group, res.boot_id);
		env->sink.ops->boot_key(env->sink.arg, key);
		env->sink.ops->machine(env->sink.arg, "running", res.kernel, "", 1);
		events_machine(env->ev, m->name);
		/* Another kernel or command line: the fingerprint's la57, page
		 * size, config hash and cmdline were the old boot's. Probe again
		 * before the step, so that the machine and this run (its hello
		 * records the fingerprint in force) say what runs now. */
		r = runner_boot_probe(env, tr, agent_ok, c);
		if (r == BF_ERR_LOST || r == BF_ERR_TIMEOUT || !transport_alive(tr))
			runner_boot_relink(env, tr, agent_ok, bm, c, kernel,
			    cmdline.data ? cmdline.data : "", &hooks, res.boot_id, group, o);
		goto out;
	}
	env->sink.ops->boot_key(env->sink.arg, NULL);
	if (r == BF_ERR_TIMEOUT || r == BF_ERR_STATE) {
		/* gone: it went down and did not come back even after the power
		 * cycle; a reboot command that failed left it as it was. Gone,
		 * it is offline, and that is not held against its boots. */
		int gone = (res.rebooted || res.power_cycled) && !res.recovered;

		outcome_set(o, gone ? RUN_FINISH : RUN_QUARANTINE, "boot-failed", -1,
		    "boot-failed: %s", res.reason[0] ? res.reason : d.msg);
		o->machine_state = gone ? "offline" : "idle";
		o->machine_error = o->message;
		o->link_lost = gone || !transport_alive(tr);
		goto out;
	}
	if (r == BF_ERR_NOTFOUND || r == BF_ERR_INVALID) {
		outcome_set(o, RUN_FINISH, "boot-failed", -1, "cannot boot on %s: %s", m->name,
		    d.msg);
		o->machine_state = "idle";
		goto out;
	}
lost:
	outcome_set(o, RUN_RETRY, NULL, -1, "attempt %d lost on %s before the step: %s",
	    c->attempt, m->name, d.msg[0] ? d.msg : bf_err_str(r));
	o->link_lost = 1;
out:
	free(rtext);
	json_decref(rj);
	buf_free(&out);
	buf_free(&cmdline);
	boot_machine_free(bm);
}

int
runner_probe(const struct runner_env *env, struct transport *tr, int *agent_ok,
    struct bf_diag *d)
{
	struct buf cmd, out;
	char *text = NULL, *nl, sha[65];
	int r, status = -1;

	buf_init(&cmd, 8192);
	buf_init(&out, BF_MAX_AGENT_LINE);
	if ((r = runner_ensure_agent(env, tr, agent_ok, d)) != 0)
		goto out;
	if ((r = runner_agent_cmd(env, &cmd)) != 0 || (r = buf_puts(&cmd, " probe")) != 0)
		goto out;
	if ((r = transport_capture(tr, cmd.data, &out, NULL, 30000, &status, d)) != 0)
		goto out;
	if (status != 0 || out.len == 0) {
		bf_diag_set(d, NULL, "%s: agent probe exited with status %d", env->machine, status);
		r = BF_ERR_PROTO;
		goto out;
	}
	if ((nl = memchr(out.data, '\n', out.len)) != NULL)
		*nl = '\0';
	if ((r = fingerprint_decode(out.data, strlen(out.data), &text, sha, d)) != 0)
		goto out;
	r = env->sink.ops->fingerprint(env->sink.arg, text, sha);
	events_machine(env->ev, env->machine);
out:
	free(text);
	buf_free(&cmd);
	buf_free(&out);
	return r;
}

static void __attribute__((format(printf, 2, 3)))
note_error(struct ingest *g, const char *fmt, ...)
{
	va_list ap;

	if (g->first_error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(g->first_error, sizeof(g->first_error), fmt, ap);
	va_end(ap);
}

/* A store error stops the step, as for samples: the first one is kept. */
static void
ingest_store_err(struct ingest *g, int r, const char *why)
{
	if (r == 0 || g->store_err != 0)
		return;
	g->store_err = r;
	snprintf(g->store_msg, sizeof(g->store_msg), "%s", why);
}

/* What an iteration line means for the run: failures noted, samples of a
 * measured iteration handed to the sink. */
static int
ingest_iteration(struct ingest *g, const struct agentline_iteration *it)
{
	struct store_sample s[AGENTLINE_NBUILTIN + BF_MAX_METRICS];
	char why[256];
	size_t n = 0, i, k;
	int r;

	g->last_index = it->index;
	g->last_measured = 0;
	/* the profiled iteration is no measurement: not counted, not stored,
	 * and how it ended does not fail the run */
	if (it->profile) {
		if (it->exit != 0 || it->signal != 0 || it->timeout)
			sink_log(g->env, g->c->run_id, "coord", "profile: the profiled iteration "
			    "did not end well; its profile may be partial");
		return 0;
	}
	g->iterations_seen++;
	if (it->timeout)
		note_error(g, "iteration %lld timed out", (long long)it->index);
	else if (it->signal != 0)
		note_error(g, "iteration %lld killed by signal %lld", (long long)it->index,
		    (long long)it->signal);
	else if (it->exit != 0)
		note_error(g, "iteration %lld: workload exited with status %lld",
		    (long long)it->index, (long long)it->exit);
	if (it->warmup || it->index < g->warmup)
		return 0;
	if (it->timeout || it->signal != 0 || it->exit != 0)
		return 0;	/* a failed iteration measures nothing */
	/* A metric the recipe's rule did not find fails the run: a silently
	 * missing number would bias every mean computed from the rest. The
	 * workload's output is in the run log. */
	if (it->nmissing > 0) {
		g->metric_missing = 1;
		note_error(g, "iteration %lld: metric %s not found in the workload's output "
		    "(the output is in the run log)", (long long)it->index, it->missing_first);
		return 0;
	}
	for (i = 0; i < AGENTLINE_NBUILTIN; i++) {
		if (!it->builtin_set[i])
			continue;
		s[n].metric = agentline_builtins[i].name;
		s[n].unit = agentline_builtins[i].unit;
		s[n].value = it->builtin[i];
		n++;
	}
	for (i = 0; i < g->r->nmetrics; i++) {
		const struct recipe_metric *m = &g->r->metrics[i];

		if (!recipe_metric_from_output(m))
			continue;
		for (k = 0; k < it->nmetrics; k++)
			if (strcmp(it->metrics[k].name, m->name) == 0)
				break;
		if (k == it->nmetrics || !it->metrics[k].set)
			continue;
		s[n].metric = m->name;
		s[n].unit = m->unit;
		s[n].value = it->metrics[k].value;
		n++;
	}
	/* A sample the store did not take stops the step: the attempt is then
	 * retried whole (or taken over once its lease lapses), never finished
	 * with a hole in it. */
	why[0] = '\0';
	r = g->env->sink.ops->samples(g->env->sink.arg, g->c, (int)(it->index - g->warmup), s, n,
	    it->index == g->final_index, why, sizeof(why));
	ingest_store_err(g, r, why);
	if (r == 0) {
		g->samples_stored += (int)n;
		g->last_measured = 1;
	}
	return r;
}

static int
ingest_snapshot(struct ingest *g, const struct agentline_snapshot *sn)
{
	char why[256];
	int r;

	why[0] = '\0';
	if ((r = g->env->sink.ops->snapshot(g->env->sink.arg, g->c->run_id, sn->text, why,
	    sizeof(why))) != 0)
		ingest_store_err(g, r, why);
	else
		g->snapshot_seen = 1;
	return r;
}

/* What a counter is counted in, from its name (docs/evidence.md). */
static const char *
counter_unit(const char *name)
{
	size_t n = strlen(name);

	if (n > 3 && strcmp(name + n - 3, "_kb") == 0)
		return "KiB";
	if (strcmp(name, "cgroup.memory.peak") == 0)
		return "B";
	return "count";
}

/* A name the iteration's own samples use: a counter never shadows one. */
static int
counter_taken(const struct ingest *g, const char *name)
{
	size_t i;

	for (i = 0; i < AGENTLINE_NBUILTIN; i++)
		if (strcmp(agentline_builtins[i].name, name) == 0)
			return 1;
	for (i = 0; i < g->r->nmetrics; i++)
		if (strcmp(g->r->metrics[i].name, name) == 0)
			return 1;
	return 0;
}

/* The first counters line of the run: what could not be counted, and why,
 * goes to the run log once (a hardware event on TCG is "unsupported",
 * never a 0), with what was left out here. */
static void
counters_note(struct ingest *g, const struct agentline_counters *c, size_t skipped,
    const char *first_skipped)
{
	struct buf b;
	const char *k;
	json_t *v;
	size_t i, n = 0;
	int r = 0;

	if (g->counters_noted)
		return;
	g->counters_noted = 1;
	buf_init(&b, BF_MAX_LOG_LINE);
	json_object_foreach((json_t *)c->unsupported, k, v) {
		if (r == 0)
			r = buf_printf(&b, "%s%s (%s)", n++ ? "; " : "counters not measured: ", k,
			    json_string_value(v));
	}
	if (n > 0) {
		sink_log(g->env, g->c->run_id, "coord", r == 0 ? b.data : "counters not measured: "
		    "(too many to list; see the agent's counters lines)");
	}
	for (i = 0; c->notes != NULL && i < json_array_size(c->notes); i++) {
		buf_reset(&b);
		if (buf_printf(&b, "counters: %s", json_string_value(json_array_get(c->notes,
		    i))) == 0)
			sink_log(g->env, g->c->run_id, "coord", b.data);
	}
	if (skipped > 0) {
		buf_reset(&b);
		if (buf_printf(&b, "counters: %zu not stored (a name longer than %d bytes, or one "
		    "of the recipe's own metrics), first %s", skipped, BF_MAX_NAME,
		    first_skipped) == 0)
			sink_log(g->env, g->c->run_id, "coord", b.data);
	}
	buf_free(&b);
}

/* The counters of the iteration just ingested: samples of that iteration,
 * named as the agent names them (vmstat.thp_fault_alloc, pmu.cycles, ...). */
static int
ingest_counters(struct ingest *g, const struct agentline_counters *c)
{
	struct store_sample *sm;
	const char *k, *first_skipped = "";
	char why[256];
	json_t *v;
	size_t n = 0, skipped = 0;
	int r = 0;

	if (c->iteration != g->last_index || !g->last_measured) {
		/* warmup, a failed iteration, or a line out of order */
		counters_note(g, c, 0, "");
		return 0;
	}
	if ((sm = calloc(json_object_size(c->metrics) + 1, sizeof(*sm))) == NULL) {
		ingest_store_err(g, BF_ERR_ALLOC, "out of memory");
		return BF_ERR_ALLOC;
	}
	json_object_foreach((json_t *)c->metrics, k, v) {
		if (strlen(k) > BF_MAX_NAME || counter_taken(g, k)) {
			if (skipped++ == 0)
				first_skipped = k;
			continue;
		}
		sm[n].metric = k;
		sm[n].unit = counter_unit(k);
		sm[n].value = json_number_value(v);
		n++;
	}
	counters_note(g, c, skipped, first_skipped);
	why[0] = '\0';
	if (n > 0 && (r = g->env->sink.ops->samples(g->env->sink.arg, g->c,
	    (int)(c->iteration - g->warmup), sm, n, c->iteration == g->final_index, why,
	    sizeof(why))) != 0)
		ingest_store_err(g, r, why);
	if (r == 0)
		g->counters_stored += (int)n;
	free(sm);
	return r;
}

/* An artifact complete and checked goes to the store; one dropped or
 * refused is said in the run log, and the run stands. */
static int
ingest_artifact(struct ingest *g, const struct agentline_artifact_end *e)
{
	char why[512], msg[600];
	int r;

	if (artifact_rx_end(&g->art, e, why, sizeof(why)) != 0) {
		snprintf(msg, sizeof(msg), "profile: %s", why);
		sink_log(g->env, g->c->run_id, "coord", msg);
		return 0;
	}
	why[0] = '\0';
	if ((r = g->env->sink.ops->artifact(g->env->sink.arg, g->c->run_id, e->name, e->event,
	    g->art.data.data, g->art.data.len, why, sizeof(why))) != 0)
		ingest_store_err(g, r, why);
	else
		g->artifacts_stored++;
	return r;
}

/*
 * A line the decoder refused is logged. One that claimed to be an
 * iteration, a hello or the done line also fails the run: the agent we
 * upload never writes one, so what arrived is not what ran, and a run
 * with a hole in it is not finished as done.
 */
static void
on_refused(struct ingest *g, const struct agentline_event *ev, const struct bf_diag *d,
    const char *line, size_t len)
{
	char tmp[BF_MAX_LOG_LINE + 1];

	snprintf(tmp, sizeof(tmp), "refused agent line (%s): %.*s", d->msg,
	    (int)(len > 200 ? 200 : len), line);
	sink_log(g->env, g->c->run_id, "coord", tmp);
	if (ev->claimed == AGENTLINE_ITERATION || ev->claimed == AGENTLINE_HELLO ||
	    ev->claimed == AGENTLINE_DONE) {
		g->line_refused = 1;
		note_error(g, "the agent sent a %s line the coordinator refuses: %s",
		    agentline_type_name(ev->claimed), d->msg);
	}
}

static int
on_line(void *arg, int stream, const char *line, size_t len, int truncated)
{
	struct ingest *g = arg;
	struct agentline_event ev;
	struct bf_diag d;
	char tmp[BF_MAX_LOG_LINE + 1];
	const char *st;
	int ret = 0;

	memset(&ev, 0, sizeof(ev));
	if (stream == SSH_STDERR) {
		snprintf(tmp, sizeof(tmp), "%.*s", (int)(len > BF_MAX_LOG_LINE ?
		    BF_MAX_LOG_LINE : len), line);
		sink_log(g->env, g->c->run_id, "agent", tmp);
		events_log(g->env->ev, g->c->run_id, "agent", tmp);
		goto out;
	}
	if (truncated) {
		bf_diag_set(&d, NULL, "longer than %d bytes", BF_MAX_AGENT_LINE);
		on_refused(g, &ev, &d, line, len);
		goto out;
	}
	if (agentline_decode(line, len, &ev, &d) != 0) {
		on_refused(g, &ev, &d, line, len);
		goto out;
	}
	switch (ev.type) {
	case AGENTLINE_HELLO:
		g->hello_seen = 1;
		g->env->sink.ops->hello(g->env->sink.arg, g->c->run_id, ev.u.hello.hostname,
		    ev.u.hello.kernel, ev.u.hello.arch, ev.u.hello.boot_id, ev.u.hello.cmdline);
		/* the run and the machine: the sink's, with the hello stored (one
		 * store read and render each, not two) */
		events_job(g->env->ev, g->c->job_id);
		break;
	case AGENTLINE_LOG:
		/* a count of dropped lines, and empty lines, are not logged */
		if (ev.u.log.line == NULL || ev.u.log.line[0] == '\0')
			break;
		st = ev.u.log.is_stderr ? "stderr" : "stdout";
		sink_log(g->env, g->c->run_id, st, ev.u.log.line);
		events_log(g->env->ev, g->c->run_id, st, ev.u.log.line);
		break;
	case AGENTLINE_KNOBS:
		/* the state in force for this run: stored with it */
		g->env->sink.ops->knobs(g->env->sink.arg, g->c->run_id, ev.u.knobs.text);
		break;
	case AGENTLINE_ITERATION:
		ret = ingest_iteration(g, &ev.u.iteration);
		break;
	case AGENTLINE_ERROR:
		if (ev.u.error.msg == NULL || ev.u.error.msg[0] == '\0')
			break;
		note_error(g, "agent: %s", ev.u.error.msg);
		sink_log(g->env, g->c->run_id, "agent", ev.u.error.msg);
		break;
	case AGENTLINE_DONE:
		g->done_seen = 1;
		g->done_ok = ev.u.done.ok;
		break;
	case AGENTLINE_SNAPSHOT:
		ret = ingest_snapshot(g, &ev.u.snapshot);
		break;
	case AGENTLINE_COUNTERS:
		ret = ingest_counters(g, &ev.u.counters);
		break;
	case AGENTLINE_ARTIFACT:
		artifact_rx_chunk(&g->art, &ev.u.artifact);
		break;
	case AGENTLINE_ARTIFACT_END:
		ret = ingest_artifact(g, &ev.u.artifact_end);
		break;
	case AGENTLINE_NONE:
		break;
	}
out:
	agentline_event_clear(&ev);
	return ret;
}

void
runner_execute(const struct runner_env *env, struct transport *tr, int *agent_ok,
    const struct runner_claim *rc, struct run_outcome *o)
{
	const struct store_claim *c = rc->c;
	const struct plan_run *run = &rc->run;
	struct plan_step_in in;
	struct ingest g;
	struct bf_diag d;
	json_t *step = NULL;
	char *stepbuf = NULL;
	struct buf cmd;
	int ret, status = -1;
	long total_ms;

	memset(&g, 0, sizeof(g));
	memset(o, 0, sizeof(*o));
	bf_diag_clear(&d);
	buf_init(&cmd, 8192);
	/* Running: said at the agent's hello, once the step is on its way (the
	 * step need not wait for three store reads); before an upload, now. */
	if (!*agent_ok)
		events_run_job_machine(env->ev, c->run_id, c->job_id, env->machine);
	if (runner_recipe_installed(env, rc, o) != 0)
		goto out;
	memset(&in, 0, sizeof(in));
	in.run_id = c->run_id;
	in.run = run;
	in.job = rc->job;
	in.recipe = rc->recipe;
	in.values = rc->values;
	in.knobs = rc->knobs;
	in.workdir_root = env->workdir_root;
	if (plan_step(&in, &step, &d) != 0) {
		outcome_set(o, RUN_FINISH, "failed", -1, "%s", d.msg);
		goto out;
	}
	if ((ret = runner_ensure_agent(env, tr, agent_ok, &d)) != 0) {
		int lost = ret == BF_ERR_LOST || ret == BF_ERR_TIMEOUT;

		outcome_set(o, lost ? RUN_RETRY : RUN_FINISH, lost ? NULL : "failed", -1,
		    "attempt %d on %s: installing the agent: %s", c->attempt, env->machine,
		    d.msg);
		o->link_lost = lost;
		goto out;
	}
	if ((stepbuf = json_dumps(step, JSON_COMPACT)) == NULL) {
		outcome_set(o, RUN_FINISH, "failed", -1, "out of memory");
		goto out;
	}
	if ((ret = runner_agent_cmd(env, &cmd)) != 0 ||
	    (ret = buf_puts(&cmd, RUNNER_STEP_ARGS)) != 0) {
		outcome_set(o, RUN_FINISH, "failed", -1, "%s", bf_err_str(ret));
		goto out;
	}
	g.env = env;
	g.c = c;
	g.r = rc->recipe;
	g.warmup = run->warmup;
	g.last_index = -1;
	g.final_index = rc->job->profile_perf ? -1 : (int64_t)run->warmup + run->iterations - 1;
	artifact_rx_init(&g.art);
	/* The agent is silent while a workload runs, but SSH keepalive replies
	 * count as traffic: the idle limit detects a dead link, not a quiet
	 * workload. The total bounds every iteration plus slack. */
	total_ms = (long)(((int64_t)run->iterations + run->warmup + rc->job->profile_perf) *
	    run->timeout_s + 120) * 1000L + ((long)run->iterations + run->warmup) *
	    rc->job->gap_ms;
	ret = transport_exec(tr, cmd.data, stepbuf, strlen(stepbuf), on_line, &g,
	    env->link_timeout_ms, total_ms > 0x7fffffff ? 0 : (int)total_ms, &status, &d);
	o->hello_seen = g.hello_seen;
	o->done_seen = g.done_seen;
	o->iterations_seen = g.iterations_seen;
	o->samples_stored = g.samples_stored;
	o->snapshot_seen = g.snapshot_seen;
	o->counters_stored = g.counters_stored;
	o->artifacts_stored = g.artifacts_stored;
	o->link_lost = ret == BF_ERR_LOST || ret == BF_ERR_TIMEOUT;
	if (g.store_err != 0) {
		/* A store outage is not the run's fault, so it uses up no
		 * attempt. If the store is still away this fails too, and the
		 * lease lapses: store_reclaim requeues the run all the same. */
		outcome_set(o, RUN_REQUEUE, NULL, -1, "attempt %d on %s: storing a result "
		    "failed: %s", c->attempt, env->machine, g.store_msg);
		goto out;
	}
	if (o->link_lost) {
		outcome_set(o, RUN_RETRY, NULL, -1, "attempt %d lost on %s: %s", c->attempt,
		    env->machine, d.msg);
		goto out;
	}
	if (ret != 0) {
		outcome_set(o, RUN_FINISH, "failed", status, "running the agent: %s",
		    d.msg[0] ? d.msg : bf_err_str(ret));
		goto out;
	}
	if (status == 0 && g.done_seen && g.done_ok && !g.metric_missing && !g.line_refused) {
		outcome_set(o, RUN_FINISH, "done", 0, "%s", "");
		o->adaptive = runner_adaptive_prepare(rc, &o->ad);
	} else {
		if (g.first_error[0] == '\0')
			snprintf(g.first_error, sizeof(g.first_error), "%s",
			    !g.hello_seen ? "the agent did not start (no hello line)" :
			    !g.done_seen ? "the agent ended without a done line" :
			    "the step failed");
		outcome_set(o, RUN_FINISH, "failed", status, "%s (agent exit status %d)",
		    g.first_error, status);
	}
out:
	artifact_rx_free(&g.art);
	buf_free(&cmd);
	free(stepbuf);
	json_decref(step);
}
