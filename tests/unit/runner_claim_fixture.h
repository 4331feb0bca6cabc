/*
 * runner_claim_fixture.h: what coord_test_runner.c and
 * coord_test_runner_evidence.c share besides the recording sink
 * (runner_fixture.h): a store with machine fake1 to claim runs from
 * (runner_fixture_setup), a claim executed or booted as the scheduler
 * would, and the check that the runner left the store alone. Static: one
 * test program includes it.
 */
#ifndef BF_RUNNER_CLAIM_FIXTURE_H
#define BF_RUNNER_CLAIM_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coord_fixture.h"
#include "runner.h"
#include "runner_fixture.h"
#include "transport-fake.h"
#include "t.h"

static struct store *st;
static struct recipes *rs;
static char tmpdir[256];
static const struct runner_agent agents[] = {
	{ .arch = "x86_64", .path = "/nonexistent/agent", .sha256 = FIX_AGENT_SHA },
};

#define HELLO "{\"type\":\"hello\",\"hostname\":\"fake1\",\"kernel\":\"6.1\"," \
	"\"arch\":\"x86_64\",\"boot_id\":\"b-1\"}\n"
#define ITER(i, w) "{\"type\":\"iteration\",\"iteration\":" #i ",\"wall_s\":" #w "}\n"
#define DONE_OK "{\"type\":\"done\",\"ok\":true}\n"

static inline void
env_init(struct runner_env *env, struct rec_sink *rec)
{
	memset(env, 0, sizeof(*env));
	env->st = st;
	env->sink.ops = &rec_ops;
	env->sink.arg = rec;
	env->machine = "fake1";
	env->agents = agents;
	env->nagents = NELEM(agents);
	env->agent_remote = ".benchfleet/agent";
	env->lease_s = 30;
	env->max_attempts = 3;
	env->link_timeout_ms = 5000;
	env->recipes = rs;
}

/* Submit a job, claim its first run for fake1. */
static inline struct store_claim *
claim(const char *jobtext, int64_t *jobp)
{
	struct store_claim *c = NULL;
	int64_t id = 0;

	T_EQ_INT(fix_submit(st, rs, jobtext, &id), 0);
	T_EQ_INT(store_run_claim(st, "fake1", "fake", 30, &c), 0);
	T_CHECK(c != NULL);
	if (jobp != NULL)
		*jobp = id;
	return c;
}

/* The claim loaded as the scheduler loads it, then executed or booted. */
static inline void
execute(const struct runner_env *env, struct transport *tr, int *agent_ok,
    const struct store_claim *c, struct run_outcome *o)
{
	struct runner_claim *rc = NULL;
	struct bf_diag d;

	bf_diag_clear(&d);
	T_EQ_INT(runner_claim_load(c, NULL, &rc, &d), 0);
	memset(o, 0, sizeof(*o));
	if (rc != NULL)
		runner_execute(env, tr, agent_ok, rc, o);
	runner_claim_free(rc);
}

static inline void
boot(const struct runner_env *env, const struct store_machine *m, struct transport *tr,
    int *agent_ok, const struct store_claim *c, const char *group, struct run_outcome *o)
{
	struct runner_claim *rc = NULL;
	struct bf_diag d;

	bf_diag_clear(&d);
	T_EQ_INT(runner_claim_load(c, NULL, &rc, &d), 0);
	memset(o, 0, sizeof(*o));
	if (rc != NULL)
		runner_boot(env, m, tr, agent_ok, rc, group, o);
	runner_claim_free(rc);
}

/* The runner left the store alone: the claimed run is still running. */
static inline void
check_untouched(const struct store_claim *c)
{
	json_t *j = NULL;

	T_EQ_INT(api_view_run_get(st, c->run_id, &j), 0);
	T_EQ_STR(json_string_value(json_object_get(j, "state")), "running");
	T_EQ_INT(json_array_size(json_object_get(j, "samples")), 0);
	json_decref(j);
	/* free the machine for the next claim */
	T_EQ_INT(store_run_finish(st, c->run_id, "failed", -1, "test"), 0);
}

/* The store (with machine fake1) and recipes the tests claim from: 0, or
 * 1 (the test's exit status). */
static inline int
runner_fixture_setup(void)
{
	char path[512];
	const char *src = getenv("BF_SRC");
	struct bf_diag d;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bf-runner-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/store.db", tmpdir);
	bf_diag_clear(&d);
	if (store_open(path, &st, &d) != 0) {
		fprintf(stderr, "store_open: %s\n", d.msg);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/recipes", src != NULL ? src : ".");
	if (recipes_load_dir(path, &rs, &d) != 0) {
		fprintf(stderr, "recipes: %s\n", d.msg);
		return 1;
	}
	T_EQ_INT(fix_machine(st, "fake1", NULL), 0);
	return 0;
}

/* Everything setup made, gone; the test's exit status. */
static inline int
runner_fixture_done(void)
{
	char path[512];

	store_close(st);
	recipes_free(rs);
	snprintf(path, sizeof(path), "rm -rf -- '%s'", tmpdir);
	if (strncmp(tmpdir, "/tmp/bf-runner-", 15) == 0 && system(path) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return t_done();
}

#endif
