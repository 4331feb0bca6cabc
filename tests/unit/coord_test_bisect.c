/*
 * coord_test_bisect.c: bisections (bisect.h). The verdict on synthetic
 * samples (good, bad, inconclusive -> another round -> skip, good equal
 * to bad fails, bad better than good fails); the next commit around
 * skipped ones; every hostile field of a request refused naming it; and
 * the driver on the real store with the fake transport as the builder:
 * a bisection of 4 commits finds the first bad one, a tick run again at
 * any point (a restarted coordinator) makes no second job, a mid that
 * did not build is skipped with its reason, and only skipped commits
 * left, or good equal to bad, end it failed saying why.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisect.h"
#include "events.h"
#include "recipes.h"
#include "runner.h"
#include "store_fixture.h"
#include "transport-fake.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static struct recipes *rs;

/* --- classification --- */

/* n samples around mean, boots of 3 iterations, spread +-cov% */
static void
synth(double *v, int *boot, size_t n, double mean, double cov)
{
	static const double w[] = { -1.0, 0.5, 1.0, -0.5, 0.0, 0.25, -0.25, 0.75 };
	size_t i;

	for (i = 0; i < n; i++) {
		v[i] = mean * (1.0 + cov / 100.0 * w[i % NELEM(w)]);
		boot[i] = (int)(i / 3);
	}
}

static void
test_classify(void)
{
	static const struct {
		double good, bad, mid;
		size_t nmid;
		int higher, last;
		double thr;
		enum bisect_verdict want;
		const char *why;
	} cases[] = {
		/* pages/s: bad is 50% slower; mid like bad, like good, between */
		{ 200, 100, 101, 12, 1, 0, 2, BISECT_BAD, NULL },
		{ 200, 100, 199, 12, 1, 0, 2, BISECT_GOOD, NULL },
		{ 200, 100, 150, 12, 1, 0, 2, BISECT_MORE, "neither" },
		{ 200, 100, 150, 12, 1, 1, 2, BISECT_SKIP, "last round" },
		/* latency: lower is better, bad is higher */
		{ 10, 20, 19.5, 12, 0, 0, 2, BISECT_BAD, NULL },
		{ 10, 20, 10.2, 12, 0, 0, 2, BISECT_GOOD, NULL },
		/* good == bad: more rounds, then the bisection fails */
		{ 100, 100, 100, 12, 1, 0, 2, BISECT_MORE, "do not differ" },
		{ 100, 100, 100, 12, 1, 1, 2, BISECT_NODIFF, "do not differ" },
		/* a real change below the threshold is no regression to bisect */
		{ 100, 99, 99, 12, 1, 1, 5, BISECT_NODIFF, "threshold 5%" },
		/* bad is better than good: nothing to bisect, at once */
		{ 100, 200, 150, 12, 1, 0, 2, BISECT_NODIFF, "bad is better" },
		/* mid did not run */
		{ 200, 100, 0, 0, 1, 0, 2, BISECT_SKIP, "no samples" },
	};
	double g[12], b[12], m[12];
	int gb[12], bb[12], mb[12];
	struct bisect_samples sg = { g, gb, 12 }, sb = { b, bb, 12 }, sm = { m, mb, 12 };
	struct bisect_class c;
	json_t *j;
	size_t i;

	for (i = 0; i < NELEM(cases); i++) {
		synth(g, gb, 12, cases[i].good, 1.0);
		synth(b, bb, 12, cases[i].bad, 1.0);
		synth(m, mb, 12, cases[i].mid, 1.0);
		sm.n = cases[i].nmid;
		T_EQ_INT(bisect_classify(&sg, &sb, &sm, cases[i].higher, cases[i].thr,
		    cases[i].last, &c), 0);
		if (c.verdict != cases[i].want)
			fprintf(stderr, "case %zu: %s, want %s (%s)\n", i,
			    bisect_verdict_name(c.verdict), bisect_verdict_name(cases[i].want),
			    c.why);
		T_EQ_INT(c.verdict, cases[i].want);
		if (cases[i].why != NULL)
			T_CONTAINS(c.why, cases[i].why);
		T_EQ_INT(c.boot_means, 1);
		T_EQ_INT(c.good.n, 4);		/* 12 samples in 4 boots: 4 boot means */
	}
	/* the numbers a step's log shows */
	synth(g, gb, 12, 200, 1.0);
	synth(b, bb, 12, 100, 1.0);
	synth(m, mb, 12, 100, 1.0);
	sm.n = 12;
	T_EQ_INT(bisect_classify(&sg, &sb, &sm, 1, 2, 0, &c), 0);
	T_CHECK(fabs(c.bad_vs_good.pct + 50) < 0.5);
	T_CHECK(c.bad_vs_good.lo < -49 && c.bad_vs_good.hi > -51 && c.bad_vs_good.hi < -45);
	T_CHECK(c.mid_vs_bad.lo < 0 && c.mid_vs_bad.hi > 0);
	j = bisect_class_json(&c);
	T_CHECK(j != NULL);
	T_EQ_STR(json_string_value(json_object_get(j, "verdict")), "bad");
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(j, "mid"), "n")), 4);
	T_CHECK(json_is_real(json_object_get(json_object_get(j, "bad_vs_good"), "lo95")));
	json_decref(j);
	/* hostile numbers: refused, not classified */
	T_EQ_INT(bisect_classify(&sg, &sb, &sm, 1, 0, 0, &c), BF_ERR_INVALID);
	T_EQ_INT(bisect_classify(&sg, &sb, &sm, 1, NAN, 0, &c), BF_ERR_INVALID);
	g[3] = NAN;
	T_CHECK(bisect_classify(&sg, &sb, &sm, 1, 2, 0, &c) != 0);
}

/* What the builder runs: exact argv arrays, as the agent's build takes them. */
static void
test_resolve_doc(void)
{
	json_t *doc = bisect_resolve_doc("/srv/linux.git", "v6.1", "v6.2~1");
	char *t = doc != NULL ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	T_CHECK(t != NULL);
	if (t != NULL)
		T_EQ_STR(t, "{\"cmds\":["
		    "{\"argv\":[\"git\",\"-C\",\"/srv/linux.git\",\"rev-parse\",\"--verify\","
		    "\"--end-of-options\",\"v6.1^{commit}\"],\"capture\":true,\"what\":\"good\"},"
		    "{\"argv\":[\"git\",\"-C\",\"/srv/linux.git\",\"rev-parse\",\"--verify\","
		    "\"--end-of-options\",\"v6.2~1^{commit}\"],\"capture\":true,\"what\":\"bad\"},"
		    "{\"argv\":[\"git\",\"-C\",\"/srv/linux.git\",\"merge-base\",\"--is-ancestor\","
		    "\"--\",\"v6.1\",\"v6.2~1\"],\"what\":\"ancestor\"},"
		    "{\"argv\":[\"git\",\"-C\",\"/srv/linux.git\",\"log\",\"--first-parent\","
		    "\"--reverse\",\"--format=bf-commit %H %s\",\"v6.1..v6.2~1\",\"--\"],"
		    "\"what\":\"list\"}],\"timeout_s\":600}");
	free(t);
	json_decref(doc);
}

static void
test_next(void)
{
	unsigned char sk[8] = { 0 };

	T_EQ_INT(bisect_next(-1, 3, sk, 4), 1);
	T_EQ_INT(bisect_next(-1, 0, sk, 4), BISECT_NEXT_DONE);
	T_EQ_INT(bisect_next(1, 2, sk, 4), BISECT_NEXT_DONE);
	T_EQ_INT(bisect_next(-1, 7, sk, 8), 3);
	sk[3] = 1;
	T_EQ_INT(bisect_next(-1, 7, sk, 8), 4);
	sk[4] = 1;
	T_EQ_INT(bisect_next(-1, 7, sk, 8), 2);
	sk[1] = 1;
	T_EQ_INT(bisect_next(0, 2, sk, 8), BISECT_NEXT_SKIPPED);
}

/* --- the request --- */

#define BODY_OK "\"git\":\"/srv/linux.git\",\"good\":\"v6.1\",\"bad\":\"v6.1-5-gabc\"," \
	"\"kernel\":{\"config\":\"tinyconfig\",\"fragments\":[\"CONFIG_PRINTK=y\"]}," \
	"\"recipe\":\"cpu-loop\",\"preset\":\"test\",\"metric\":\"loops_per_s\"," \
	"\"machines\":{\"names\":[\"b1\"]}"

static int
check_body(const char *text, json_t **spec, struct bf_diag *d, struct bf_diag_list *l)
{
	json_error_t je;
	json_t *body = json_loads(text, 0, &je);
	int r;

	bf_diag_clear(d);
	memset(l, 0, sizeof(*l));
	*spec = NULL;
	if (body == NULL) {
		fprintf(stderr, "bad test JSON: %s: %s\n", je.text, text);
		return -1;
	}
	r = bisect_spec_check(body, rs, "/srv", NULL, spec, d, l);
	json_decref(body);
	return r;
}

static void
test_request(void)
{
	static const struct {
		const char *extra;	/* appended to BODY_OK */
		const char *field, *msg;
	} bad[] = {
		{ ",\"x\":1", "x", "unknown key" },
		{ ",\"threshold_pct\":0", "threshold_pct", "above 0" },
		{ ",\"threshold_pct\":1e9", "threshold_pct", "" },
		{ ",\"threshold_pct\":\"2\"", "threshold_pct", "" },
		{ ",\"boots_per_round\":0", "boots_per_round", "" },
		{ ",\"max_rounds\":1000", "max_rounds", "" },
		{ ",\"max_steps\":-1", "max_steps", "" },
		{ ",\"direction\":\"up\"", "direction", "higher_is_better" },
		{ ",\"kernel\":{\"config\":\"tinyconfig\",\"cmd\":\"rm\"}", "kernel.cmd",
		    "unknown key" },
		{ ",\"machines\":{\"names\":[\"b1\"],\"spread\":\"block\"}", "machines.spread",
		    "block" },
		{ ",\"knobs\":{\"thp_enabled\":\"alwayz\"}", "knobs.thp_enabled", "alwayz" },
		{ ",\"iterations\":0", "iterations", "" },
	};
	static const struct {
		const char *body, *field, *msg;
	} whole[] = {
		{ "{\"git\":\"/srv/l.git\",\"good\":\"--upload-pack=x\",\"bad\":\"v2\",\"recipe\":"
		    "\"cpu-loop\",\"metric\":\"wall_s\",\"machines\":{\"class\":\"d\"}}", "good",
		    "not an option" },
		{ "{\"git\":\"/srv/l.git\",\"good\":\"v1\",\"bad\":\"a..b\",\"recipe\":"
		    "\"cpu-loop\",\"metric\":\"wall_s\",\"machines\":{\"class\":\"d\"}}", "bad",
		    "not one revision" },
		{ "{\"git\":\"/srv/l.git\",\"good\":\"v1;reboot\",\"bad\":\"v2\",\"recipe\":"
		    "\"cpu-loop\",\"metric\":\"wall_s\",\"machines\":{\"class\":\"d\"}}", "good",
		    "byte 0x3b" },
		{ "{\"git\":\"/srv/l.git\",\"good\":\"v1\",\"bad\":\"v2\",\"recipe\":\"nope\","
		    "\"metric\":\"wall_s\",\"machines\":{\"class\":\"d\"}}", "recipe",
		    "unknown recipe" },
		{ "{\"git\":\"/srv/l.git\",\"good\":\"v1\",\"bad\":\"v2\",\"recipe\":\"cpu-loop\","
		    "\"metric\":\"rps\",\"machines\":{\"class\":\"d\"}}", "metric",
		    "not a metric of recipe cpu-loop (wall_s, loops_per_s)" },
		{ "{\"git\":\"/etc/l.git\",\"good\":\"v1\",\"bad\":\"v2\",\"recipe\":\"cpu-loop\","
		    "\"metric\":\"wall_s\",\"machines\":{\"class\":\"d\"}}", "git", "root" },
		{ "{\"git\":\"/srv/l.git\",\"good\":\"v1\",\"bad\":\"v2\",\"recipe\":\"cpu-loop\","
		    "\"metric\":\"wall_s\",\"machines\":{\"class\":\"d\"},\"kernel\":{\"patches\":"
		    "[\"../../etc/passwd\"]}}", "kernel.patches[0]", "" },
		{ "{\"good\":\"v1\",\"bad\":\"v2\",\"recipe\":\"cpu-loop\",\"metric\":\"wall_s\","
		    "\"machines\":{\"class\":\"d\"}}", "git", "" },
		{ "{\"git\":\"/srv/l.git\",\"good\":\"v1\",\"bad\":\"v2\",\"recipe\":\"cpu-loop\","
		    "\"metric\":\"wall_s\"}", "machines", "" },
		{ "[]", "", "a JSON object" },
	};
	char text[8192], rev[400];
	struct bf_diag_list l;
	struct bf_diag d;
	json_t *spec = NULL;
	size_t i, k;

	/* a good one: defaults filled, the direction the metric's */
	snprintf(text, sizeof(text), "{" BODY_OK "}");
	T_EQ_INT(check_body(text, &spec, &d, &l), 0);
	if (spec != NULL) {
		T_EQ_STR(json_string_value(json_object_get(spec, "direction")), "higher_is_better");
		T_CHECK(json_real_value(json_object_get(spec, "threshold_pct")) == 2.0);
		T_EQ_INT(json_integer_value(json_object_get(spec, "boots_per_round")), 2);
		T_EQ_INT(json_integer_value(json_object_get(spec, "max_rounds")), 4);
		T_EQ_INT(json_integer_value(json_object_get(spec, "max_steps")), 16);
		T_EQ_STR(json_string_value(json_object_get(spec, "good")), "v6.1");
	}
	json_decref(spec);
	snprintf(text, sizeof(text), "{" BODY_OK ",\"metric\":\"wall_s\"}");
	/* a duplicate key: jansson keeps the last; wall_s is lower-is-better */
	T_EQ_INT(check_body(text, &spec, &d, &l), 0);
	if (spec != NULL)
		T_EQ_STR(json_string_value(json_object_get(spec, "direction")), "lower_is_better");
	json_decref(spec);
	for (i = 0; i < NELEM(bad); i++) {
		snprintf(text, sizeof(text), "{" BODY_OK "%s}", bad[i].extra);
		T_EQ_INT(check_body(text, &spec, &d, &l), BF_ERR_INVALID);
		T_CHECK(spec == NULL);
		for (k = 0; k < l.n && strcmp(l.item[k].field, bad[i].field) != 0; k++)
			;
		if (k == l.n)
			fprintf(stderr, "case %zu: no error for %s; first: %s: %s\n", i, bad[i].field,
			    l.n ? l.item[0].field : "-", l.n ? l.item[0].msg : "-");
		T_CHECK(k < l.n);
		if (k < l.n)
			T_CONTAINS(l.item[k].msg, bad[i].msg);
	}
	for (i = 0; i < NELEM(whole); i++) {
		T_EQ_INT(check_body(whole[i].body, &spec, &d, &l), BF_ERR_INVALID);
		T_CHECK(spec == NULL);
		for (k = 0; k < l.n && strcmp(l.item[k].field, whole[i].field) != 0; k++)
			;
		if (l.n == 0) {
			T_EQ_STR(d.field, whole[i].field);
			T_CONTAINS(d.msg, whole[i].msg);
			continue;
		}
		if (k == l.n)
			fprintf(stderr, "whole %zu: no error for %s; first: %s: %s\n", i,
			    whole[i].field, l.item[0].field, l.item[0].msg);
		T_CHECK(k < l.n);
		if (k < l.n)
			T_CONTAINS(l.item[k].msg, whole[i].msg);
	}
	/* every field error at once */
	T_EQ_INT(check_body("{\"git\":\"/srv/l.git\",\"good\":\"-x\",\"bad\":\"a..b\",\"recipe\":"
	    "\"cpu-loop\",\"metric\":\"nope\",\"threshold_pct\":0,\"machines\":{\"class\":\"d\"}}",
	    &spec, &d, &l), BF_ERR_INVALID);
	T_CHECK(l.n >= 4);
	/* a 300-byte revision */
	memset(rev, 'a', 300);
	rev[300] = '\0';
	snprintf(text, sizeof(text), "{\"git\":\"/srv/l.git\",\"good\":\"%s\",\"bad\":\"v2\","
	    "\"recipe\":\"cpu-loop\",\"metric\":\"wall_s\",\"machines\":{\"class\":\"d\"}}", rev);
	T_EQ_INT(check_body(text, &spec, &d, &l), BF_ERR_INVALID);
	T_EQ_STR(l.item[0].field, "good");
	T_CONTAINS(l.item[0].msg, "1 to 128 bytes");
	/* the revision names git accepts that are one revision */
	T_EQ_INT(bisect_check_rev("v6.10~3", "good", &d), 0);
	T_EQ_INT(bisect_check_rev("origin/mm-unstable^", "good", &d), 0);
	T_EQ_INT(bisect_check_rev("HEAD@{1}", "good", &d), BF_ERR_INVALID);
	T_EQ_INT(bisect_check_rev("v1.lock", "good", &d), BF_ERR_INVALID);
	T_EQ_INT(bisect_check_rev("v1 v2", "good", &d), BF_ERR_INVALID);
	T_EQ_INT(bisect_check_rev("", "good", &d), BF_ERR_INVALID);
}

/* --- the driver --- */

#define SHA(c) c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c
#define S0 SHA("0")
#define S1 SHA("1")
#define S2 SHA("2")
#define S3 SHA("3")
#define S4 SHA("4")
#define LOGL(sha, subj) "{\"type\":\"log\",\"iteration\":0,\"stream\":\"stdout\"," \
	"\"line\":\"bf-commit " sha " " subj "\"}\n"

/* as the real agent prints it: a captured command's line is a log line too */
static const char builder_out[] =
	"{\"type\":\"log\",\"iteration\":0,\"stream\":\"stdout\",\"line\":\"" S0 "\"}\n"
	"{\"type\":\"build_value\",\"what\":\"good\",\"value\":\"" S0 "\"}\n"
	"{\"type\":\"log\",\"iteration\":0,\"stream\":\"stdout\",\"line\":\"" S4 "\"}\n"
	"{\"type\":\"build_value\",\"what\":\"bad\",\"value\":\"" S4 "\"}\n"
	LOGL(S1, "docs: a harmless change") LOGL(S2, "mm: a slow path in do_anonymous_page")
	LOGL(S3, "docs: another") LOGL(S4, "docs: the last")
	"{\"type\":\"done\",\"ok\":true}\n";

static const struct runner_agent agents[] = {
	{ .arch = "x86_64", .path = "/nonexistent/agent", .sha256 = FIX_AGENT_SHA },
};

struct world {
	struct store *st;
	struct fake_script fs;
	struct fake_rule rules[3];
	struct bisect_env env;
	int kicks;
};

static void
kick(void *arg)
{
	((struct world *)arg)->kicks++;
}

static int
world_init(struct world *w, const char *db)
{
	struct store_machine m;

	memset(w, 0, sizeof(*w));
	if ((w->st = open_fresh(db)) == NULL)
		return -1;
	memset(&m, 0, sizeof(m));
	m.name = "b1";
	m.host = "127.0.0.1";
	m.port = 22;
	m.user = "root";
	m.key_path = "/k";
	m.klass = "demo";
	m.roles = "run,build";
	if (store_machine_add(w->st, &m, NULL) != 0)
		return -1;
	w->rules[0] = (struct fake_rule){ .match = "sha256sum", .out = FIX_AGENT_SHA "  a\n" };
	w->rules[1] = (struct fake_rule){ .match = " build", .out = builder_out };
	w->rules[2] = (struct fake_rule){ .match = "uname -m", .out = "x86_64\n" };
	fake_script_init(&w->fs, w->rules, 3, NULL, 0);
	w->env.st = w->st;
	w->env.rs = rs;
	w->env.known_hosts = "/dev/null";
	w->env.connect_timeout_ms = 1000;
	w->env.link_timeout_ms = 5000;
	w->env.connect = fake_connect;
	w->env.connect_arg = &w->fs;
	w->env.agents = agents;
	w->env.nagents = 1;
	w->env.agent_remote = ".benchfleet/agent";
	w->env.kick = kick;
	w->env.kick_arg = w;
	return 0;
}

static int64_t
world_bisect(struct world *w, const char *extra)
{
	struct bf_diag_list l;
	struct bf_diag d;
	json_t *spec = NULL;
	char text[4096], *st = NULL;
	int64_t id = 0;

	snprintf(text, sizeof(text), "{" BODY_OK ",\"boots_per_round\":2,\"max_rounds\":2,"
	    "\"iterations\":3%s}", extra);
	if (check_body(text, &spec, &d, &l) != 0 ||
	    (st = json_dumps(spec, JSON_COMPACT)) == NULL ||
	    store_bisect_add(w->st, st, &id) != 0)
		id = 0;
	free(st);
	json_decref(spec);
	return id;
}

/* pages/s of a kernel at a commit: c2 and later are 40% slower; the
 * kernels listed in fail never run (a build that failed) */
static double
speed(const char *sha, size_t k)
{
	double base = strcmp(sha, S2) >= 0 ? 600.0 : 1000.0;

	return base * (1.0 + 0.004 * (double)((k * 7) % 5) - 0.008);
}

/* Run every queued run of job the way a worker would end it. */
static int
world_run_job(struct world *w, int64_t job, const char *mid, const char *fail_mid,
    int equal)
{
	struct store_claim *c = NULL;
	struct store_sample sm[1];
	const char *sha;
	size_t k = 0;
	int it, runs = 0;

	while (store_run_claim(w->st, "b1", "demo", 60, &c) == 0 && c != NULL) {
		if (c->job_id != job) {
			store_claim_free(c);
			return -1;
		}
		sha = strcmp(c->kernel, "good") == 0 ? S0 : strcmp(c->kernel, "bad") == 0 ? S4 :
		    mid;
		if (fail_mid != NULL && strcmp(c->kernel, "mid") == 0) {
			store_run_finish(w->st, c->run_id, "failed", 2, fail_mid);
		} else {
			for (it = 0; it < 3; it++) {
				sm[0] = (struct store_sample){ "loops_per_s", equal ? speed(S0, k) :
				    speed(sha, k), "loops/s" };
				k++;
				store_samples_add(w->st, c->run_id, c->boot, it, sm, 1);
			}
			store_run_finish(w->st, c->run_id, "done", 0, NULL);
		}
		runs++;
		store_claim_free(c);
		c = NULL;
	}
	return runs;
}

static size_t
count_jobs(struct store *s)
{
	struct store_job *j = NULL;
	size_t n = 0;
	int64_t id;

	for (id = 1; id < 200; id++) {
		if (store_job_get(s, id, &j) == 0)
			n++;
		store_job_free(j);
		j = NULL;
	}
	return n;
}

/* The last step row of id: its job and commit. */
static int64_t
last_step(struct world *w, int64_t id, char *sha, char *verdict)
{
	struct store_bisect_step *st = NULL;
	size_t n = 0;
	int64_t job = 0;

	if (store_bisect_steps(w->st, id, &st, &n) == 0 && n > 0) {
		job = st[n - 1].job_id;
		memcpy(sha, st[n - 1].sha, 41);
		snprintf(verdict, 8, "%s", st[n - 1].verdict);
	}
	store_bisect_steps_free(st, n);
	return job;
}

static void
test_drive_finds(void)
{
	struct world w;
	struct store_bisect *b = NULL;
	json_t *v = NULL, *steps;
	char sha[41], verdict[8];
	int64_t id, job;
	int err, i;

	struct events *ev = NULL;
	struct events_rec recs[64];
	uint64_t after = 0;
	int nev, nbis = 0, ndone = 0;

	if (world_init(&w, "drive.db") != 0)
		return;
	T_EQ_INT(events_new(w.st, &ev), 0);
	w.env.ev = ev;
	after = events_last_id(ev);
	T_CHECK((id = world_bisect(&w, "")) > 0);
	/* tick 1: resolved on the builder, step 0's job made at the midpoint */
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(fake_count(&w.fs, &w.fs.execs), 1);
	T_CONTAINS(w.fs.stdin_last, "rev-parse");
	T_EQ_INT(count_jobs(w.st), 1);
	job = last_step(&w, id, sha, verdict);
	T_EQ_STR(sha, S2);
	T_EQ_STR(verdict, "pending");
	T_CHECK(w.kicks == 1);
	/* a restart before the job ends: nothing new, no second resolve */
	for (i = 0; i < 3; i++)
		T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(count_jobs(w.st), 1);
	T_EQ_INT(fake_count(&w.fs, &w.fs.execs), 1);
	/* 3 kernels x 2 boots, boot-major: good, bad and mid alternate */
	T_EQ_INT(world_run_job(&w, job, S2, NULL, 0), 6);
	T_EQ_INT(bisect_tick(&w.env), 0);	/* c2 is bad: step 1 tries c1 */
	T_EQ_INT(count_jobs(w.st), 2);
	job = last_step(&w, id, sha, verdict);
	T_EQ_STR(sha, S1);
	T_EQ_INT(world_run_job(&w, job, S1, NULL, 0), 6);
	T_EQ_INT(bisect_tick(&w.env), 0);	/* c1 good: c2 is the first bad */
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(count_jobs(w.st), 2);
	T_EQ_INT(store_bisect_get(w.st, id, &b), 0);
	if (b != NULL) {
		T_EQ_STR(b->state, "done");
		T_EQ_STR(b->first_bad, S2);
		T_EQ_STR(b->message, "mm: a slow path in do_anonymous_page");
		T_CHECK(b->finished_at > 0);
		T_CHECK(b->machine_s >= 0);
	}
	v = bisect_view(w.st, id, 1, &err);
	T_CHECK(v != NULL);
	steps = json_object_get(v, "steps");
	T_EQ_INT(json_array_size(steps), 2);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(steps, 0), "verdict")), "bad");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(steps, 1), "verdict")), "good");
	T_EQ_STR(json_string_value(json_object_get(json_object_get(v, "first_bad"), "commit")),
	    S2);
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(v, "first_bad"), "index")),
	    1);
	T_EQ_INT(json_integer_value(json_object_get(v, "commits")), 4);
	/* the log has numbers: means, % change vs good and bad with the CI, n */
	{
		json_t *st0 = json_object_get(json_array_get(steps, 0), "stats");
		double pct = json_real_value(json_object_get(json_object_get(st0, "bad_vs_good"),
		    "pct"));
		json_t *st1 = json_object_get(json_array_get(steps, 1), "stats");

		T_CHECK(pct < -39 && pct > -41);
		T_EQ_INT(json_integer_value(json_object_get(json_object_get(st0, "mid"), "n")), 2);
		T_CHECK(json_is_real(json_object_get(json_object_get(st0, "mid_vs_good"),
		    "lo95")));
		T_EQ_INT(json_integer_value(json_object_get(json_object_get(st0, "good"), "n")), 2);
		T_EQ_INT(json_integer_value(json_object_get(st0, "reference_steps")), 1);
		/* step 1 pools good's and bad's boots of step 0 with its own;
		 * mid (c1) is its own */
		T_EQ_INT(json_integer_value(json_object_get(json_object_get(st1, "good"), "n")), 4);
		T_EQ_INT(json_integer_value(json_object_get(json_object_get(st1, "bad"), "n")), 4);
		T_EQ_INT(json_integer_value(json_object_get(json_object_get(st1, "mid"), "n")), 2);
		T_EQ_INT(json_integer_value(json_object_get(st1, "reference_steps")), 2);
		T_EQ_INT(json_integer_value(json_object_get(st1, "rounds")), 1);
	}
	json_decref(v);
	/* the log went out live: a bisection event per change, the last done */
	nev = events_wait(ev, after, 0, NULL, recs, 64);
	T_CHECK(nev > 0);
	for (i = 0; i < nev; i++) {
		if (strcmp(recs[i].type, "bisection") != 0)
			continue;
		nbis++;
		ndone = strstr(recs[i].data, "\"state\":\"done\"") != NULL;
		T_CHECK(strstr(recs[i].data, "\"spec\"") == NULL);
	}
	if (nev > 0)
		events_recs_clear(recs, (size_t)nev);
	T_CHECK(nbis >= 5);	/* resolved, 2 jobs made, 2 verdicts, done */
	T_EQ_INT(ndone, 1);
	store_bisect_free(b);
	events_free(ev);
	store_close(w.st);
}

static void
test_drive_skip(void)
{
	struct world w;
	struct store_bisect *b = NULL;
	json_t *v = NULL, *steps, *st1;
	char sha[41], verdict[8];
	int64_t id, job;
	int err;

	if (world_init(&w, "skip.db") != 0)
		return;
	T_CHECK((id = world_bisect(&w, "")) > 0);
	T_EQ_INT(bisect_tick(&w.env), 0);
	job = last_step(&w, id, sha, verdict);
	T_EQ_STR(sha, S2);
	/* mid does not build: skipped with the reason, its neighbour next */
	T_EQ_INT(world_run_job(&w, job, S2, "kernel mid: build failed: mm/memory.c:42: error",
	    0), 6);
	T_EQ_INT(bisect_tick(&w.env), 0);
	job = last_step(&w, id, sha, verdict);
	T_EQ_STR(sha, S3);
	T_EQ_INT(world_run_job(&w, job, S3, NULL, 0), 6);
	T_EQ_INT(bisect_tick(&w.env), 0);	/* c3 bad; c2 skipped: c1 next */
	job = last_step(&w, id, sha, verdict);
	T_EQ_STR(sha, S1);
	T_EQ_INT(world_run_job(&w, job, S1, NULL, 0), 6);
	T_EQ_INT(bisect_tick(&w.env), 0);	/* c1 good: c2 or c3, c2 skipped */
	T_EQ_INT(store_bisect_get(w.st, id, &b), 0);
	if (b != NULL) {
		T_EQ_STR(b->state, "failed");
		T_CONTAINS(b->message, "only skipped commits are left");
		T_CONTAINS(b->message, "2 commits after 111111111111 up to 333333333333");
		T_CHECK(b->first_bad == NULL);
	}
	v = bisect_view(w.st, id, 1, &err);
	steps = json_object_get(v, "steps");
	T_EQ_INT(json_array_size(steps), 3);
	st1 = json_object_get(json_array_get(steps, 0), "stats");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(steps, 0), "verdict")), "skip");
	T_CONTAINS(json_string_value(json_object_get(st1, "why")), "build failed: mm/memory.c");
	T_EQ_INT(count_jobs(w.st), 3);
	json_decref(v);
	store_bisect_free(b);
	store_close(w.st);
}

static void
test_drive_nodiff(void)
{
	struct world w;
	struct store_bisect *b = NULL;
	char sha[41], verdict[8];
	int64_t id, id2, job;

	if (world_init(&w, "nodiff.db") != 0)
		return;
	T_CHECK((id = world_bisect(&w, "")) > 0);
	T_EQ_INT(bisect_tick(&w.env), 0);
	job = last_step(&w, id, sha, verdict);
	T_EQ_INT(world_run_job(&w, job, S2, NULL, 1), 6);
	/* round 0 inconclusive: round 1, the same commit, a new job */
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(count_jobs(w.st), 2);
	job = last_step(&w, id, sha, verdict);
	T_EQ_STR(sha, S2);
	T_EQ_STR(verdict, "pending");
	T_EQ_INT(world_run_job(&w, job, S2, NULL, 1), 6);
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(store_bisect_get(w.st, id, &b), 0);
	if (b != NULL) {
		T_EQ_STR(b->state, "failed");
		T_CONTAINS(b->message, "good and bad do not differ");
	}
	store_bisect_free(b);
	b = NULL;
	/* cancelled while its job runs: the driver makes nothing more */
	T_CHECK((id2 = world_bisect(&w, "")) > 0);
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(count_jobs(w.st), 3);
	T_EQ_INT(store_bisect_cancel(w.st, id2, "test"), 0);
	job = last_step(&w, id2, sha, verdict);
	T_EQ_INT(world_run_job(&w, job, S2, NULL, 0), 6);
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(count_jobs(w.st), 3);
	store_close(w.st);
}

/* The good kernel does not build: the bisection fails at once, saying so. */
static void
test_drive_good_broken(void)
{
	struct store_claim *c = NULL;
	struct store_sample sm[1] = { { "loops_per_s", 600.0, "loops/s" } };
	struct store_bisect *b = NULL;
	struct world w;
	int64_t id;
	int it;

	if (world_init(&w, "broken.db") != 0)
		return;
	T_CHECK((id = world_bisect(&w, "")) > 0);
	T_EQ_INT(bisect_tick(&w.env), 0);
	while (store_run_claim(w.st, "b1", "demo", 60, &c) == 0 && c != NULL) {
		if (strcmp(c->kernel, "good") == 0) {
			store_run_finish(w.st, c->run_id, "failed", 2, "kernel good: build failed: "
			    "kernel/bounds.c:1:2: error: #error");
		} else {
			for (it = 0; it < 3; it++)
				store_samples_add(w.st, c->run_id, c->boot, it, sm, 1);
			store_run_finish(w.st, c->run_id, "done", 0, NULL);
		}
		store_claim_free(c);
		c = NULL;
	}
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(store_bisect_get(w.st, id, &b), 0);
	if (b != NULL) {
		T_EQ_STR(b->state, "failed");
		T_CONTAINS(b->message, "the good kernel has no samples: good run");
		T_CONTAINS(b->message, "kernel/bounds.c:1:2: error");
	}
	T_EQ_INT(count_jobs(w.st), 1);
	store_bisect_free(b);
	store_close(w.st);
}

/* The builder says good is no commit, or has no role build: said, not stuck. */
static void
test_drive_builder(void)
{
	static const char no_commit[] =
	    "{\"type\":\"log\",\"iteration\":0,\"stream\":\"stderr\",\"line\":\"fatal: "
	    "Needed a single revision\"}\n"
	    "{\"type\":\"build_failed\",\"what\":\"good\",\"index\":-1,\"status\":128}\n"
	    "{\"type\":\"done\",\"ok\":false}\n";
	static const char forged[] =
	    "{\"type\":\"build_value\",\"what\":\"good\",\"value\":\"" S0 "\"}\n"
	    "{\"type\":\"build_value\",\"what\":\"bad\",\"value\":\"" S4 "\"}\n"
	    "{\"type\":\"log\",\"iteration\":0,\"stream\":\"stdout\",\"line\":\"bf-commit "
	    "; rm -rf / x\"}\n" LOGL(S4, "last") "{\"type\":\"done\",\"ok\":true}\n";
	struct world w;
	struct store_bisect *b = NULL;
	int64_t id;

	if (world_init(&w, "builder.db") != 0)
		return;
	w.rules[1].out = no_commit;
	w.rules[1].status = 1;
	T_CHECK((id = world_bisect(&w, "")) > 0);
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(store_bisect_get(w.st, id, &b), 0);
	if (b != NULL) {
		T_EQ_STR(b->state, "failed");
		T_CONTAINS(b->message, "good: \"v6.1\" is not a commit");
		T_CONTAINS(b->message, "Needed a single revision");
	}
	store_bisect_free(b);
	b = NULL;
	/* a line that is not a commit: refused whole, nothing measured */
	w.rules[1].out = forged;
	w.rules[1].status = 0;
	T_CHECK((id = world_bisect(&w, "")) > 0);
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(store_bisect_get(w.st, id, &b), 0);
	if (b != NULL) {
		T_EQ_STR(b->state, "failed");
		T_CONTAINS(b->message, "1 refused lines");
	}
	store_bisect_free(b);
	b = NULL;
	/* the builder is unreachable: running, saying so, tried again */
	w.rules[1].out = builder_out;
	w.fs.connect_fails = 1;
	T_CHECK((id = world_bisect(&w, "")) > 0);
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(store_bisect_get(w.st, id, &b), 0);
	if (b != NULL) {
		T_EQ_STR(b->state, "running");
		T_CONTAINS(b->message, "waiting for builder b1");
	}
	store_bisect_free(b);
	b = NULL;
	T_EQ_INT(bisect_tick(&w.env), 0);
	T_EQ_INT(store_bisect_get(w.st, id, &b), 0);
	if (b != NULL) {
		T_CHECK(b->commits != NULL);
		T_CONTAINS(b->message, "4 commits in good..bad");
	}
	store_bisect_free(b);
	T_EQ_INT(count_jobs(w.st), 1);
	store_close(w.st);
}

int
main(void)
{
	static const char *const dbs[] = { "drive.db", "skip.db", "nodiff.db", "broken.db",
	    "builder.db" };
	const char *src = getenv("BF_SRC");
	char path[4096];
	struct bf_diag d;

	if (fix_where_init(&where, "bisect") != 0)
		return 1;
	snprintf(path, sizeof(path), "%s/recipes", src != NULL ? src : ".");
	bf_diag_clear(&d);
	if (recipes_load_dir(path, &rs, &d) != 0) {
		fprintf(stderr, "recipes: %s\n", d.msg);
		return 1;
	}
	test_classify();
	test_next();
	test_resolve_doc();
	test_request();
	test_drive_finds();
	test_drive_skip();
	test_drive_nodiff();
	test_drive_good_broken();
	test_drive_builder();
	recipes_free(rs);
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
