/*
 * coord_test_kdispatch.c: a run whose kernel is one of its job's specs,
 * through the fake transport and a real SQLite store and artifact
 * directory (kdispatch.c, kdispatch-install.c): the prep and the build on
 * the builder (the target, role run,build), the build key taken once, the
 * output in the run log, the artifacts in the directory and the row done;
 * install, boot of the built release and the check after it. A second
 * job with the same spec reuses the build (no build command); a fragment
 * that breaks the build fails the run with the compiler's line, and the
 * next job with it fails the same way without building; a key another
 * coordinator builds is waited for, then the run queued again, and one
 * whose coordinator died (its lease lapsed) is built here; a builder
 * that answers a release without the key's tag, or a wrong config hash
 * after the boot, fails the run. The build's lines are decoded fail-closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "b64.h"
#include "coord_fixture.h"
#include "kbline.h"
#include "kbuild.h"
#include "kdispatch.h"
#include "kstore.h"
#include "runner.h"
#include "runner_fixture.h"
#include "sha256.h"
#include "transport-fake.h"
#include "t.h"

static struct store *st;
static struct recipes *rs;
static struct kstore *ks;
static char tmpdir[256];
static int big_log;		/* the next build prints 9 MB of log lines */
static const struct runner_agent agents[] = {
	{ .arch = "x86_64", .path = "/nonexistent/agent", .sha256 = FIX_AGENT_SHA },
};

#define TREE "597284f8aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define BOOTCFG "{\"method\":\"kexec\",\"kernels\":{\"6.1\":{\"image\":\"/boot/vmlinuz-6.1\"}}," \
	"\"timeout_s\":60,\"built_initrd\":\"/boot/initrd.img-6.1\"}"
#define JOB(frag) "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},\"kernel\":\"kt\"," \
	"\"kernels\":{\"kt\":{\"git\":\"/srv/git/linux\",\"commit\":\"v6.1\",\"config\":" \
	"\"tinyconfig\",\"fragments\":[\"" frag "\"],\"localversion\":\"-bft\"}}}"
#define JOB2(frag) "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},\"kernel\":\"kt\"," \
	"\"repetitions\":{\"boots\":2},\"kernels\":{\"kt\":{\"git\":\"/srv/git/linux\"," \
	"\"commit\":\"v6.1\",\"config\":\"tinyconfig\",\"fragments\":[\"" frag "\"]," \
	"\"localversion\":\"-bft\"}}}"
#define IMAGE "bzImage: the kernel's bytes"

static void
env_init(struct runner_env *env, struct rec_sink *rec)
{
	memset(env, 0, sizeof(*env));
	env->st = st;
	env->sink.ops = &rec_ops;
	env->sink.arg = rec;
	env->machine = "t1";
	env->agents = agents;
	env->nagents = NELEM(agents);
	env->agent_remote = ".benchfleet/agent";
	env->lease_s = 30;
	env->max_attempts = 3;
	env->link_timeout_ms = 5000;
	env->recipes = rs;
}

/* An artifact as the agent sends it: one chunk and its end line. */
static void
art(struct buf *b, const char *name, const char *bytes, const char *sha_override)
{
	char sha[65];

	sha256_hex(bytes, strlen(bytes), sha);
	T_OK(buf_printf(b, "{\"type\":\"artifact\",\"name\":\"%s\",\"seq\":0,\"data\":\"", name));
	T_OK(b64_encode(b, bytes, strlen(bytes)));
	T_OK(buf_printf(b, "\"}\n{\"type\":\"artifact_end\",\"name\":\"%s\",\"bytes\":%zu,"
	    "\"sha256\":\"%s\"}\n", name, strlen(bytes), sha_override ? sha_override : sha));
}

/* The .config a prep of fragment frag leaves. */
static void
config_of(const char *frag, char *out, size_t outsz)
{
	snprintf(out, outsz, "CONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14) 12.2.0\"\n"
	    "CONFIG_64BIT=y\n%s\n", frag);
}

struct scene {
	struct buf prep, build;
	char config[512];
	char key[KSPEC_KEY_HEX + 1], lv[64], release[128];
	char cfgsha[65];
};

/* What the builder answers for the spec of rc with fragment frag: a prep
 * that ends in its .config; a build that works (error NULL) or fails
 * with error as the compiler's line. */
static void
scene_init(struct scene *sc, const struct runner_claim *rc, const char *frag,
    const char *error, const char *bad_release)
{
	struct bf_diag d;

	memset(sc, 0, sizeof(*sc));
	buf_init(&sc->prep, 1 << 20);
	buf_init(&sc->build, 16 << 20);
	config_of(frag, sc->config, sizeof(sc->config));
	sha256_hex(sc->config, strlen(sc->config), sc->cfgsha);
	T_EQ_INT(kbuild_key(kdispatch_spec(rc), TREE, sc->config, strlen(sc->config), "x86_64",
	    sc->key, sc->lv, sizeof(sc->lv), &d), 0);
	snprintf(sc->release, sizeof(sc->release), "6.1.192%s", sc->lv);
	T_OK(buf_printf(&sc->prep, "{\"type\":\"log\",\"iteration\":0,\"stream\":\"stdout\","
	    "\"line\":\"#\\n# configuration written to .config\"}\n"
	    "{\"type\":\"build_value\",\"what\":\"tree\",\"value\":\"" TREE "\"}\n"));
	art(&sc->prep, "config", sc->config, NULL);
	T_OK(buf_puts(&sc->prep, "{\"type\":\"done\",\"ok\":true}\n"));
	T_OK(buf_puts(&sc->build, "{\"type\":\"log\",\"iteration\":0,\"stream\":\"stdout\","
	    "\"line\":\"  CC      mm/memory.o\"}\n"));
	for (int i = 0; big_log && i < 9000; i++)
		T_OK(buf_printf(&sc->build, "{\"type\":\"log\",\"iteration\":0,\"stream\":"
		    "\"stdout\",\"line\":\"%05d %0990d\"}\n", i, 0));
	if (error != NULL) {
		T_OK(buf_printf(&sc->build, "{\"type\":\"log\",\"iteration\":0,\"stream\":"
		    "\"stderr\",\"line\":\"%s\"}\n{\"type\":\"log\",\"iteration\":0,\"stream\":"
		    "\"stderr\",\"line\":\"make: *** [Makefile:1999: .] Error 2\"}\n"
		    "{\"type\":\"build_failed\",\"what\":\"make\",\"index\":-1,\"status\":2}\n"
		    "{\"type\":\"done\",\"ok\":false}\n", error));
		return;
	}
	T_OK(buf_printf(&sc->build, "{\"type\":\"build_value\",\"what\":\"release\","
	    "\"value\":\"%s\"}\n", bad_release != NULL ? bad_release : sc->release));
	art(&sc->build, "image", IMAGE, NULL);
	art(&sc->build, "config", sc->config, NULL);
	T_OK(buf_puts(&sc->build, "{\"type\":\"done\",\"ok\":true}\n"));
}

static void
scene_free(struct scene *sc)
{
	buf_free(&sc->prep);
	buf_free(&sc->build);
}

/* Submit a job, claim its first run for t1, load it as the scheduler does. */
static struct store_claim *
claim(const char *jobtext, struct runner_claim **rcp)
{
	struct store_claim *c = NULL;
	struct bf_diag d;
	int64_t id = 0;

	if (jobtext != NULL)	/* else the next run of the last job */
		T_EQ_INT(fix_submit(st, rs, jobtext, &id), 0);
	T_EQ_INT(store_run_claim(st, "t1", "fake", 30, &c), 0);
	T_CHECK(c != NULL);
	*rcp = NULL;
	if (c != NULL)
		T_EQ_INT(runner_claim_load(c, NULL, rcp, &d), 0);
	return c;
}

static void
kenv_init(struct kdispatch_env *ke, const struct runner_env *env, struct fake_script *fs)
{
	memset(ke, 0, sizeof(*ke));
	ke->renv = env;
	ke->ks = ks;
	ke->connect = fake_connect;
	ke->connect_arg = fs;
	ke->builddir = "/var/tmp/bf-kbuild-test";
	ke->busy_wait_s = 0;
}

struct outcome {
	struct run_outcome o;
	struct kdispatch_kernel k;
	struct rec_sink rec;
	int prep_used, build_used, uploads, boots, installed_skip;
	char boot_kernel[128], boot_image[256], boot_initrd[256], uploaded[1024];
	char key[KSPEC_KEY_HEX + 1];		/* the spec's build key */
};

/*
 * The scheduler's order (sched-kernel.c, sched.c ws_run): resolve, install,
 * boot the built kernel, verify. verify_cfg: the config hash the target
 * reports after its boot (NULL: the built one); installed: the target has
 * the files already.
 */
static void
dispatch(const char *jobtext, const char *frag, const char *error, const char *bad_release,
    const char *verify_cfg, int installed, struct outcome *out)
{
	struct scene sc;
	struct runner_claim *rc = NULL;
	struct store_claim *c = claim(jobtext, &rc);
	struct store_machine *m = NULL;
	struct transport *tr = NULL;
	struct runner_env env;
	struct kdispatch_env ke;
	struct boot_kernel bk;
	struct fake_script fs;
	char have[256], verify[256];
	int agent_ok = 0;

	memset(out, 0, sizeof(*out));
	if (c == NULL || rc == NULL)
		return;
	scene_init(&sc, rc, frag, error, bad_release);
	have[0] = '\0';
	snprintf(out->key, sizeof(out->key), "%s", sc.key);
	if (installed) {
		char isha[65];

		sha256_hex(IMAGE, strlen(IMAGE), isha);
		snprintf(have, sizeof(have), "%s  /boot/vmlinuz-x\n%s  /boot/config-x\n", isha,
		    sc.cfgsha);
	}
	snprintf(verify, sizeof(verify), "%s\n/proc/config.gz\n%s  -\n", sc.release,
	    verify_cfg != NULL ? verify_cfg : sc.cfgsha);
	{
		struct fake_rule rules[] = {
			{ .match = "sha256sum '/boot/vmlinuz", .out = have },
			{ .match = "uname -r; if", .out = verify },
			{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
			{ .match = "uname -m", .out = "x86_64\n" },
			{ .match = "nproc", .out = "2\n" },
			{ .match = "rm -rf", .out = "" },
			{ .match = " build", .uses = 1, .out = sc.prep.data },
			{ .match = " build", .uses = 1, .out = sc.build.data },
			{ .match = "install -m 0644 -- '.benchfleet/k-", .out = "" },
			{ .match = "test -e", .out = "" },
			{ .match = "boot_id", .out = "b-0\n" },
			{ .match = " probe", .out = "{\"type\":\"fingerprint\",\"sha256\":\""
			  "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\","
			  "\"kernel\":\"x\"}\n" },
		};
		static const struct fake_boot boots[] = {
			{ .ret = 0, .rebooted = 1, .boot_id = "b-new" },
		};

		fake_script_init(&fs, rules, NELEM(rules), boots, NELEM(boots));
		env_init(&env, &out->rec);
		kenv_init(&ke, &env, &fs);
		T_EQ_INT(store_machine_get(st, "t1", &m), 0);
		T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
		kdispatch_resolve(&ke, m, tr, &agent_ok, rc, &out->k, &out->o);
		if (out->o.action == RUN_PROCEED)
			kdispatch_install(&ke, m, tr, rc, &out->k, &out->o);
		if (out->o.action == RUN_PROCEED) {
			bk.release = out->k.release;
			bk.image = out->k.image;
			bk.initrd = NULL;
			bk.grub_entry = NULL;
			rc->built = &bk;
			runner_boot(&env, m, tr, &agent_ok, rc, "g", &out->o);
		}
		if (out->o.action == RUN_PROCEED)
			kdispatch_verify(&ke, tr, rc, &out->k, &out->o);
		out->prep_used = rules[6].used;
		out->build_used = rules[7].used;
		out->uploads = fs.uploads;
		out->boots = fs.boots_tried;
		T_EQ_INT(fs.upload_unreadable, 0);
		T_EQ_INT(fs.unmatched, 0);
		snprintf(out->boot_kernel, sizeof(out->boot_kernel), "%s", fs.boot_kernel);
		snprintf(out->boot_image, sizeof(out->boot_image), "%s", fs.boot_image);
		snprintf(out->boot_initrd, sizeof(out->boot_initrd), "%s", fs.boot_initrd);
		snprintf(out->uploaded, sizeof(out->uploaded), "%s", fs.uploaded);
		if (out->o.action == RUN_PROCEED || out->o.action == RUN_FINISH) {
			T_CHECK(strstr(fs.stdin_last, "\"cmds\"") != NULL || out->build_used == 0);
		}
	}
	transport_close(tr);
	store_machine_free(m);
	runner_claim_free(rc);
	T_EQ_INT(store_run_finish(st, c->run_id, "failed", -1, "test"), 0);
	store_claim_free(c);
	scene_free(&sc);
}

static void
test_build_and_reuse(void)
{
	struct outcome a, b;
	struct store_kbuild row;
	void *data = NULL;
	size_t n = 0;

	fprintf(stderr, "kdispatch: a new key is built, installed, booted, verified\n");
	dispatch(JOB("CONFIG_SHMEM=y"), "CONFIG_SHMEM=y", NULL, NULL, NULL, 0, &a);
	T_EQ_INT(a.o.action, RUN_PROCEED);
	T_EQ_STR(a.o.message, "");
	T_EQ_INT(a.prep_used, 1);
	T_EQ_INT(a.build_used, 1);
	T_EQ_INT(a.k.built_here, 1);
	T_CONTAINS(a.k.release, "-bft-bf");
	T_EQ_INT(strncmp(a.k.release + strlen(a.k.release) - 8, a.k.key, 8), 0);
	/* the build's output is in the run log, and how it went */
	T_CONTAINS(a.rec.logs_all, "CC      mm/memory.o");
	T_CONTAINS(a.rec.logs_all, "building key");
	T_CONTAINS(a.rec.logs_all, "verified: running ");
	/* the row is done, its artifacts are in the directory, byte for byte */
	T_EQ_INT(store_kbuild_get(st, a.k.key, &row), 0);
	T_EQ_STR(row.state, "done");
	T_EQ_STR(row.release, a.k.release);
	T_EQ_STR(row.machine, "t1");
	T_CHECK(sha256_is_hex(row.log_sha256));
	T_EQ_INT(kstore_read(ks, row.image_sha256, &data, &n), 0);
	T_EQ_INT(n, strlen(IMAGE));
	T_CHECK(data != NULL && memcmp(data, IMAGE, n) == 0);
	free(data);
	data = NULL;
	T_EQ_INT(kstore_read(ks, row.log_sha256, &data, &n), 0);
	T_CHECK(data != NULL && memmem(data, n, "mm/memory.o", 11) != NULL);
	free(data);
	/* installed under /boot by release, then booted from there */
	T_EQ_INT(a.uploads, 2);
	T_CONTAINS(a.uploaded, ".benchfleet/k-");
	T_EQ_STR(a.boot_kernel, a.k.release);
	T_CONTAINS(a.boot_image, "/boot/vmlinuz-");
	T_CONTAINS(a.boot_image, a.k.release);
	/* no modules, so no initrd of its own: the boot config's built_initrd */
	T_EQ_STR(a.boot_initrd, "/boot/initrd.img-6.1");
	T_EQ_INT(a.boots, 1);

	fprintf(stderr, "kdispatch: the same spec in another job reuses the build\n");
	dispatch(JOB("CONFIG_SHMEM=y"), "CONFIG_SHMEM=y", NULL, NULL, NULL, 1, &b);
	T_EQ_INT(b.o.action, RUN_PROCEED);
	T_EQ_INT(b.prep_used, 1);
	T_EQ_INT(b.build_used, 0);		/* nothing built */
	T_EQ_INT(b.k.built_here, 0);
	T_EQ_STR(b.k.key, a.k.key);
	T_EQ_STR(b.k.release, a.k.release);
	T_CONTAINS(b.rec.logs_all, "reused, nothing built");
	T_CHECK(strstr(b.rec.logs_all, "mm/memory.o") == NULL);
	T_EQ_INT(b.uploads, 0);			/* its files are on the target */
	T_CONTAINS(b.rec.logs_all, "installed on t1 already");
	T_EQ_STR(b.boot_kernel, a.k.release);

	fprintf(stderr, "kdispatch: a job's second run asks the store, no prep\n");
	dispatch(JOB2("CONFIG_TWO=y"), "CONFIG_TWO=y", NULL, NULL, NULL, 0, &a);
	T_EQ_INT(a.o.action, RUN_PROCEED);
	T_EQ_INT(a.build_used, 1);
	dispatch(NULL, "CONFIG_TWO=y", NULL, NULL, NULL, 1, &b);
	T_EQ_INT(b.o.action, RUN_PROCEED);
	T_EQ_INT(b.prep_used, 0);
	T_EQ_INT(b.build_used, 0);
	T_EQ_STR(b.k.key, a.k.key);
	T_CONTAINS(b.rec.logs_all, "as for this job's earlier runs");
}

static void
test_build_fails(void)
{
	struct outcome a, b;
	struct store_kbuild row;

	fprintf(stderr, "kdispatch: a fragment that breaks the build fails the run\n");
	dispatch(JOB("CONFIG_BROKEN=y"), "CONFIG_BROKEN=y",
	    "mm/memory.c:12:5: error: 'bf_broken' undeclared (first use in this function)",
	    NULL, NULL, 0, &a);
	T_EQ_INT(a.o.action, RUN_FINISH);
	T_EQ_STR(a.o.state, "failed");
	T_CONTAINS(a.o.message, "the build failed");
	T_CONTAINS(a.o.message, "error: 'bf_broken' undeclared");
	T_EQ_INT(a.build_used, 1);
	T_EQ_INT(a.uploads, 0);
	T_EQ_INT(a.boots, 0);
	T_EQ_INT(store_kbuild_get(st, a.key, &row), 0);
	T_EQ_STR(row.state, "failed");
	T_CONTAINS(row.error, "error: 'bf_broken' undeclared");
	T_CHECK(sha256_is_hex(row.log_sha256));

	fprintf(stderr, "kdispatch: the failed key fails the next job without a build\n");
	dispatch(JOB("CONFIG_BROKEN=y"), "CONFIG_BROKEN=y", NULL, NULL, NULL, 0, &b);
	T_EQ_INT(b.o.action, RUN_FINISH);
	T_EQ_STR(b.o.state, "failed");
	T_CONTAINS(b.o.message, "error: 'bf_broken' undeclared");
	T_EQ_INT(b.prep_used, 1);
	T_EQ_INT(b.build_used, 0);
}

static void
test_busy_and_hostile(void)
{
	struct store *s2 = NULL;
	struct outcome a;
	struct scene sc;
	struct runner_claim *rc = NULL;
	struct store_claim *c;
	char path[512];
	int take = -1;

	fprintf(stderr, "kdispatch: a key another coordinator builds: queued again\n");
	/* the key of CONFIG_BUSY, taken by another coordinator first */
	c = claim(JOB("CONFIG_BUSY=y"), &rc);
	if (c == NULL || rc == NULL)
		return;
	scene_init(&sc, rc, "CONFIG_BUSY=y", NULL, NULL);
	runner_claim_free(rc);
	T_EQ_INT(store_run_finish(st, c->run_id, "failed", -1, "test"), 0);
	store_claim_free(c);
	snprintf(path, sizeof(path), "%s/store.db", tmpdir);
	T_EQ_INT(store_open(path, &s2, NULL), 0);
	T_EQ_INT(store_set_node(s2, "c2"), 0);
	T_EQ_INT(store_kbuild_take(s2, sc.key, "{}", "b2", 600, &take), 0);
	T_EQ_INT(take, STORE_KBUILD_MINE);
	dispatch(JOB("CONFIG_BUSY=y"), "CONFIG_BUSY=y", NULL, NULL, NULL, 0, &a);
	T_EQ_INT(a.o.action, RUN_REQUEUE);
	T_CONTAINS(a.o.message, "still being built elsewhere");
	T_EQ_INT(a.build_used, 0);
	store_close(s2);
	scene_free(&sc);

	fprintf(stderr, "kdispatch: a build whose coordinator died is taken over\n");
	/* c2 took CONFIG_DEAD's key for 1 s and was killed: its lease lapses */
	c = claim(JOB("CONFIG_DEAD=y"), &rc);
	if (c == NULL || rc == NULL)
		return;
	scene_init(&sc, rc, "CONFIG_DEAD=y", NULL, NULL);
	runner_claim_free(rc);
	T_EQ_INT(store_run_finish(st, c->run_id, "failed", -1, "test"), 0);
	store_claim_free(c);
	T_EQ_INT(store_open(path, &s2, NULL), 0);
	T_EQ_INT(store_set_node(s2, "c2"), 0);
	T_EQ_INT(store_kbuild_take(s2, sc.key, "{}", "b2", 1, &take), 0);
	T_EQ_INT(take, STORE_KBUILD_MINE);
	store_close(s2);
	sleep(2);
	dispatch(JOB("CONFIG_DEAD=y"), "CONFIG_DEAD=y", NULL, NULL, NULL, 0, &a);
	T_EQ_INT(a.o.action, RUN_PROCEED);
	T_EQ_INT(a.build_used, 1);
	T_EQ_INT(a.k.built_here, 1);
	T_EQ_STR(a.k.key, sc.key);
	scene_free(&sc);

	fprintf(stderr, "kdispatch: a build's log artifact is capped\n");
	big_log = 1;
	dispatch(JOB("CONFIG_LOUD=y"), "CONFIG_LOUD=y", NULL, NULL, NULL, 0, &a);
	big_log = 0;
	T_EQ_INT(a.o.action, RUN_PROCEED);
	{
		struct store_kbuild row;
		void *data = NULL;
		size_t n = 0;

		T_EQ_INT(store_kbuild_get(st, a.k.key, &row), 0);
		T_EQ_INT(kstore_read(ks, row.log_sha256, &data, &n), 0);
		T_CHECK(n > (size_t)7 << 20 && n <= KDISPATCH_MAX_LOG + 64);
		T_CHECK(data != NULL && memmem(data, n, "lines past the log's cap]", 25) != NULL);
		T_CHECK(data != NULL && memmem(data, n, "08999 ", 6) == NULL);
		free(data);
	}

	fprintf(stderr, "kdispatch: a release without the key's tag is refused\n");
	dispatch(JOB("CONFIG_TAG=y"), "CONFIG_TAG=y", NULL, "6.1.192-evil", NULL, 0, &a);
	T_EQ_INT(a.o.action, RUN_FINISH);
	T_CONTAINS(a.o.message, "release");
	T_EQ_INT(a.boots, 0);

	fprintf(stderr, "kdispatch: another config running after the boot: boot-failed\n");
	dispatch(JOB("CONFIG_CFG=y"), "CONFIG_CFG=y", NULL, NULL,
	    "1111111111111111111111111111111111111111111111111111111111111111", 0, &a);
	T_EQ_INT(a.o.action, RUN_FINISH);
	T_EQ_STR(a.o.state, "boot-failed");
	T_CONTAINS(a.o.message, "config sha256 1111111111111111");
	T_EQ_INT(a.boots, 1);
}

/* The build's lines: what is refused, naming the field. */
static void
test_lines(void)
{
	static const struct {
		const char *line;
		int ok;
		const char *field;	/* in the message, when refused */
	} cases[] = {
		{ "{\"type\":\"build_value\",\"what\":\"tree\",\"value\":\"abc\"}", 1, NULL },
		{ "{\"type\":\"build_value\",\"what\":\"../x\",\"value\":\"abc\"}", 0, "what" },
		{ "{\"type\":\"build_value\",\"what\":\"tree\",\"value\":\"a\",\"x\":1}", 0, "x" },
		{ "{\"type\":\"build_failed\",\"what\":\"make\",\"index\":-1,\"status\":2}", 1, NULL },
		{ "{\"type\":\"build_failed\",\"what\":\"make\",\"index\":-1,\"status\":\"timeout\"}",
		  1, NULL },
		{ "{\"type\":\"build_failed\",\"what\":\"make\",\"index\":-1,\"status\":300}", 0,
		  "status" },
		{ "{\"type\":\"artifact\",\"name\":\"../../etc/passwd\",\"seq\":0,\"data\":\"\"}", 0,
		  "name" },
		{ "{\"type\":\"artifact\",\"name\":\"folded\",\"seq\":0,\"data\":\"\"}", 0, "name" },
		{ "{\"type\":\"artifact\",\"name\":\"image\",\"seq\":-1,\"data\":\"\"}", 0, "seq" },
		{ "{\"type\":\"artifact_end\",\"name\":\"image\",\"bytes\":3,\"sha256\":\"ZZ\"}", 0,
		  "sha256" },
		{ "{\"type\":\"artifact_end\",\"name\":\"image\",\"bytes\":3}", 0,
		  "artifact_end" },
		{ "{\"type\":\"artifact_end\",\"name\":\"image\",\"bytes\":999999999999,"
		  "\"sha256\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}", 0,
		  "bytes" },
		{ "{\"type\":\"iteration\",\"iteration\":0}", 0, "type" },
		{ "{\"type\":\"log\",\"iteration\":0,\"stream\":\"stdout\",\"line\":\"x\"}", 1, NULL },
		{ "[1]", 0, NULL },
	};
	struct kbline l;
	struct bf_diag d;
	size_t i;
	int r;

	for (i = 0; i < NELEM(cases); i++) {
		r = kbline_decode(cases[i].line, strlen(cases[i].line), &l, &d);
		if (cases[i].ok) {
			T_EQ_INT(r, 0);
			T_CHECK(l.type != KBLINE_NONE);
		} else {
			T_CHECK(r != 0);
			T_EQ_INT(l.type, KBLINE_NONE);
			if (cases[i].field != NULL)
				T_CONTAINS(d.msg[0] ? d.field : "", cases[i].field);
		}
		kbline_clear(&l);
	}
}

int
main(void)
{
	char path[512];
	const char *src = getenv("BF_SRC");
	struct bf_diag d;
	struct store_machine m;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bf-kdispatch-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/store.db", tmpdir);
	bf_diag_clear(&d);
	if (store_open(path, &st, &d) != 0 || store_set_node(st, "c1") != 0) {
		fprintf(stderr, "store_open: %s\n", d.msg);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/art", tmpdir);
	if (kstore_open(path, &ks, &d) != 0) {
		fprintf(stderr, "kstore_open: %s\n", d.msg);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/recipes", src != NULL ? src : ".");
	if (recipes_load_dir(path, &rs, &d) != 0) {
		fprintf(stderr, "recipes: %s\n", d.msg);
		return 1;
	}
	memset(&m, 0, sizeof(m));
	m.name = (char *)"t1";
	m.host = (char *)"127.0.0.1";
	m.port = 22;
	m.user = (char *)"root";
	m.key_path = (char *)"/nonexistent/key";
	m.klass = (char *)"fake";
	m.roles = (char *)"run,build";
	T_EQ_INT(store_machine_add(st, &m, NULL), 0);
	T_EQ_INT(store_machine_set_boot(st, "t1", BOOTCFG), 0);
	test_lines();
	test_build_and_reuse();
	test_build_fails();
	test_busy_and_hostile();
	store_close(st);
	kstore_close(ks);
	recipes_free(rs);
	snprintf(path, sizeof(path), "rm -rf -- '%s'", tmpdir);
	if (strncmp(tmpdir, "/tmp/bf-kdispatch-", 18) == 0 && system(path) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return t_done();
}
