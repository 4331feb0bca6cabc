/*
 * test_kspec.c: a job's "kernels" (kspec.h), table driven: the good
 * forms, hostile refs, fragments, paths and localversions, the caps, the
 * coordinator's git roots, and the build key's inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "job.h"
#include "kspec.h"
#include "t.h"

static void
expect_msg(const char *what, const struct bf_diag *d, const char *want)
{
	t_checks++;
	if (strstr(d->msg, want) == NULL) {
		t_fails++;
		fprintf(stderr, "%s: message \"%s\", expected it to contain \"%s\"\n", what,
		    d->msg, want);
	}
}

#define J(kernels, rest) "{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"}," \
	" \"kernels\": {" kernels "}" rest "}"
#define K(name, body) "\"" name "\": {\"git\": \"/srv/git/linux\", \"commit\": \"v6.1\"" \
	body "}"
#define AX(v) ", \"matrix\": {\"kernel\": [" v "]}"
#define ONE(body) J(K("a", body), AX("\"a\""))

static const struct {
	const char *text;
	int r;
	const char *msg;
} cases[] = {
	{ONE(""), 0, ""},
	{J(K("a", ""), ", \"kernel\": \"a\""), 0, ""},
	{J(K("a", "") ", " K("b", ", \"config\": \"tinyconfig\""), AX("\"a\", \"b\", \"6.1.0-9-amd64\"")),
	    0, ""},
	{ONE(", \"config\": \"/srv/git/cfg/x86.config\", \"fragments\": [\"CONFIG_X86_5LEVEL=n\","
	    " \"CONFIG_NR_CPUS=64\", \"CONFIG_CMDLINE=\\\"console=ttyS0\\\"\", \"CONFIG_A=0x1f\","
	    " \"CONFIG_B=-3\", \"CONFIG_KVM=m\"], \"patches\": [\"series/0001-x.patch\","
	    " \"/srv/git/p/0002.patch\"], \"localversion\": \"-bf4l\""), 0, ""},
	{J("\"a\": {\"git\": \"/srv/git/linux\", \"commit\": \"0123456789abcdef0123456789abcdef"
	    "01234567\"}", AX("\"a\"")), 0, ""},
	/* structure */
	{J("", AX("\"a\"")), BF_ERR_INVALID, "kernels: has 0 kernels; 1 to 16 allowed"},
	{"{\"recipe\": \"cpu-loop\", \"machines\": {\"class\": \"demo\"}, \"kernels\": []}",
	    BF_ERR_INVALID, "kernels: expected an object"},
	{J("\"a\": 5", AX("\"a\"")), BF_ERR_INVALID, "kernels.a: expected an object, got an "
	    "integer"},
	{J(K("a", ""), ""), BF_ERR_INVALID, "kernels.a: is named by neither \"kernel\" nor"},
	{J(K("a", ""), AX("\"b\"")), BF_ERR_INVALID, "kernels.a: is named by neither"},
	{J(K("$(id)", ""), AX("\"a\"")), BF_ERR_INVALID, "kernels.$(id): \"$(id)\" is not a valid "
	    "name"},
	{ONE(", \"make\": \"-j99\""), BF_ERR_INVALID, "kernels.a.make: unknown key"},
	{J("\"a\": {\"commit\": \"v6.1\"}", AX("\"a\"")), BF_ERR_INVALID, "kernels.a.git: is "
	    "required"},
	{J("\"a\": {\"git\": \"/srv/git/linux\"}", AX("\"a\"")), BF_ERR_INVALID,
	    "kernels.a.commit: is required"},
	/* git paths */
	{J("\"a\": {\"git\": \"srv/linux\", \"commit\": \"v6.1\"}", AX("\"a\"")), BF_ERR_INVALID,
	    "kernels.a.git: \"srv/linux\" is not an absolute path"},
	{J("\"a\": {\"git\": \"/srv/git/../../etc\", \"commit\": \"v6.1\"}", AX("\"a\"")),
	    BF_ERR_INVALID, "kernels.a.git: \"/srv/git/../../etc\""},
	{J("\"a\": {\"git\": \"/srv/git//linux\", \"commit\": \"v6.1\"}", AX("\"a\"")),
	    BF_ERR_INVALID, "kernels.a.git:"},
	/* hostile refs */
	{J("\"a\": {\"git\": \"/srv/git/linux\", \"commit\": \"--upload-pack=touch /tmp/x\"}",
	    AX("\"a\"")), BF_ERR_INVALID, "kernels.a.commit: \"--upload-pack=touch /tmp/x\" must "
	    "start with a letter or digit"},
	{J("\"a\": {\"git\": \"/srv/git/linux\", \"commit\": \"v6.1;reboot\"}", AX("\"a\"")),
	    BF_ERR_INVALID, "kernels.a.commit: \"v6.1;reboot\" has byte 0x3b at 4"},
	{J("\"a\": {\"git\": \"/srv/git/linux\", \"commit\": \"v6.1..v6.2\"}", AX("\"a\"")),
	    BF_ERR_INVALID, "kernels.a.commit: \"v6.1..v6.2\" is not a valid ref name"},
	/* fragments */
	{ONE(", \"fragments\": [\"CONFIG_X=y; reboot\"]"), BF_ERR_INVALID,
	    "kernels.a.fragments[0]: \"CONFIG_X=y; reboot\" is not a config line"},
	{ONE(", \"fragments\": [\"CONFIG_X=y\", \"config_x=y\"]"), BF_ERR_INVALID,
	    "kernels.a.fragments[1]: \"config_x=y\" is not a config line"},
	{ONE(", \"fragments\": [\"CONFIG_=y\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [\"CONFIG_X\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [\"CONFIG_X=yes\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [\"CONFIG_X=\\\"a\\\"b\\\"\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [\"CONFIG_X=\\\"a\\nb\\\"\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [\"CONFIG_X=\\\"a\\\\\\\"\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [\"CONFIG_X=12a\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [\"CONFIG_X=0x\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [\"CONFIG_X=\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [\"CONFIG_X=y\\nCONFIG_Y=y\"]"), BF_ERR_INVALID, "fragments[0]"},
	{ONE(", \"fragments\": [7]"), BF_ERR_INVALID, "kernels.a.fragments[0]: expected a string"},
	{ONE(", \"fragments\": \"CONFIG_X=y\""), BF_ERR_INVALID, "kernels.a.fragments: expected "
	    "an array"},
	/* config */
	{ONE(", \"config\": \"allyesconfig\""), BF_ERR_INVALID, "kernels.a.config: "
	    "\"allyesconfig\" is not one of defconfig, tinyconfig"},
	{ONE(", \"config\": \"-f /etc/passwd\""), BF_ERR_INVALID, "kernels.a.config:"},
	{ONE(", \"config\": \"/srv/git/../x\""), BF_ERR_INVALID, "kernels.a.config:"},
	/* patches */
	{ONE(", \"patches\": [\"../../etc/shadow\"]"), BF_ERR_INVALID,
	    "kernels.a.patches[0]: \"../../etc/shadow\" is not a patch path"},
	{ONE(", \"patches\": [\"a/../../b\"]"), BF_ERR_INVALID, "kernels.a.patches[0]"},
	{ONE(", \"patches\": [\"--exec=id\"]"), BF_ERR_INVALID, "kernels.a.patches[0]"},
	{ONE(", \"patches\": [\"a/-b\"]"), BF_ERR_INVALID, "kernels.a.patches[0]"},
	{ONE(", \"patches\": [\"a b\"]"), BF_ERR_INVALID, "kernels.a.patches[0]"},
	{ONE(", \"patches\": [\"a;b\"]"), BF_ERR_INVALID, "kernels.a.patches[0]"},
	{ONE(", \"patches\": [\"a/\"]"), BF_ERR_INVALID, "kernels.a.patches[0]"},
	{ONE(", \"patches\": [\"./a\"]"), BF_ERR_INVALID, "kernels.a.patches[0]"},
	{ONE(", \"patches\": [\"/srv/./a\"]"), BF_ERR_INVALID, "kernels.a.patches[0]"},
	{ONE(", \"patches\": [\"\"]"), BF_ERR_INVALID, "kernels.a.patches[0]"},
	/* localversion */
	{ONE(", \"localversion\": \"bf\""), BF_ERR_INVALID, "kernels.a.localversion: \"bf\" is "
	    "not a localversion"},
	{ONE(", \"localversion\": \"-\""), BF_ERR_INVALID, "kernels.a.localversion"},
	{ONE(", \"localversion\": \"-A\""), BF_ERR_INVALID, "kernels.a.localversion"},
	{ONE(", \"localversion\": \"-a/b\""), BF_ERR_INVALID, "kernels.a.localversion"},
	{ONE(", \"localversion\": \"-a$(id)\""), BF_ERR_INVALID, "kernels.a.localversion"},
	{ONE(", \"localversion\": \"-0123456789012345678901234567890123\""), BF_ERR_TOOBIG,
	    "kernels.a.localversion: is 35 bytes long; at most 32 allowed"},
};

/* Refs: the hostile ones the ref check alone must refuse. */
static const struct {
	const char *ref;
	int ok;
} refs[] = {
	{"v6.10", 1}, {"master", 1}, {"origin/linux-6.1.y", 1},
	{"0123456789abcdef0123456789abcdef01234567", 1}, {"v6.10-rc1", 1},
	{"-v6.10", 0}, {"--upload-pack=x", 0}, {"v6..10", 0}, {"a/../b", 0}, {"a//b", 0},
	{"a/.b", 0}, {"a.lock", 0}, {"a.lock/b", 0}, {"a/", 0}, {"a.", 0}, {"", 0},
	{"v6.10^", 0}, {"HEAD~1", 0}, {"a@{1}", 0}, {"a:b", 0}, {"a b", 0}, {"$(id)", 0},
	{"a;id", 0}, {"a`id`", 0}, {"a|b", 0}, {"a\nb", 0}, {"a*", 0}, {"a[b]", 0}, {"a\\b", 0},
	{".hidden", 0}, {"/abs", 0},
};

static void
test_cases(void)
{
	struct job_spec *job;
	struct bf_diag d;
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		job = NULL;
		r = job_parse(cases[i].text, strlen(cases[i].text), &job, &d);
		T_EQ_INT(r, cases[i].r);
		if (r != cases[i].r)
			fprintf(stderr, "case %zu: %s\n", i, d.msg);
		if (cases[i].r != 0)
			expect_msg(cases[i].text, &d, cases[i].msg);
		job_free(job);
	}
	for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		r = kspec_check_ref(refs[i].ref, "commit", &d);
		T_EQ_INT(r, refs[i].ok ? 0 : BF_ERR_INVALID);
		if ((r == 0) != refs[i].ok)
			fprintf(stderr, "ref \"%s\": %d\n", refs[i].ref, r);
	}
}

static void
test_parsed(void)
{
	static const char text[] = ONE(", \"config\": \"/srv/git/x.config\", \"fragments\": "
	    "[\"CONFIG_A=y\", \"CONFIG_B=n\"], \"patches\": [\"s/1.patch\"], \"localversion\": "
	    "\"-bf4l\"");
	const struct kspec *k;
	struct job_spec *job = NULL;
	struct bf_diag d;

	T_EQ_INT(job_parse(text, strlen(text), &job, &d), 0);
	if (job == NULL)
		return;
	T_CHECK(job->kernels != NULL && job->kernels->n == 1);
	k = kspec_find(job->kernels, "a");
	T_CHECK(k != NULL);
	T_CHECK(kspec_find(job->kernels, "b") == NULL);
	T_CHECK(kspec_find(NULL, "a") == NULL);
	if (k != NULL) {
		T_EQ_STR(k->git, "/srv/git/linux");
		T_EQ_STR(k->commit, "v6.1");
		T_EQ_INT(k->config, KSPEC_CONFIG_FILE);
		T_EQ_STR(k->config_path, "/srv/git/x.config");
		T_EQ_INT(k->nfragments, 2);
		T_EQ_STR(k->fragments[1], "CONFIG_B=n");
		T_EQ_INT(k->npatches, 1);
		T_EQ_STR(k->patches[0], "s/1.patch");
		T_EQ_STR(k->localversion, "-bf4l");
	}
	/* roots: the git path, the config file and absolute patches */
	T_EQ_INT(kspec_check_roots(job->kernels, "/srv/git", &d), 0);
	T_EQ_INT(kspec_check_roots(job->kernels, "/opt:/srv/git", &d), 0);
	T_EQ_INT(kspec_check_roots(job->kernels, "/srv/gi", &d), BF_ERR_INVALID);
	expect_msg("root /srv/gi", &d, "kernels.a.git: \"/srv/git/linux\" is not under a git root");
	T_EQ_INT(kspec_check_roots(job->kernels, NULL, &d), BF_ERR_INVALID);
	expect_msg("no roots", &d, "(--kernel-git-roots: none)");
	T_EQ_INT(kspec_check_roots(job->kernels, "/srv/git/linux", &d), BF_ERR_INVALID);
	expect_msg("the repo is the root", &d, "kernels.a.git");
	T_EQ_INT(kspec_check_roots(job->kernels, "/srv/git/linux/..:/x", &d), BF_ERR_INVALID);
	T_EQ_INT(kspec_check_roots(NULL, NULL, &d), 0);
	job_free(job);

	job = NULL;
	T_EQ_INT(job_parse(ONE(", \"config\": \"/etc/shadow\""),
	    strlen(ONE(", \"config\": \"/etc/shadow\"")), &job, &d), 0);
	T_EQ_INT(kspec_check_roots(job ? job->kernels : NULL, "/srv/git", &d), BF_ERR_INVALID);
	expect_msg("config outside", &d, "kernels.a.config: \"/etc/shadow\" is not under");
	job_free(job);
	job = NULL;
	T_EQ_INT(job_parse(ONE(", \"patches\": [\"a.patch\", \"/etc/p\"]"),
	    strlen(ONE(", \"patches\": [\"a.patch\", \"/etc/p\"]")), &job, &d), 0);
	T_EQ_INT(kspec_check_roots(job ? job->kernels : NULL, "/srv/git", &d), BF_ERR_INVALID);
	expect_msg("patch outside", &d, "kernels.a.patches[1]: \"/etc/p\" is not under");
	job_free(job);

	T_EQ_INT(kspec_check_root_list("/srv/git:/opt/k", &d), 0);
	T_EQ_INT(kspec_check_root_list("", &d), 0);
	T_EQ_INT(kspec_check_root_list("srv", &d), BF_ERR_INVALID);
	T_EQ_INT(kspec_check_root_list("/srv:/", &d), BF_ERR_INVALID);
	expect_msg("root /", &d, "root 2 is \"/\"");
	T_EQ_INT(kspec_check_root_list("/srv/../etc", &d), BF_ERR_INVALID);
	T_EQ_INT(kspec_check_root_list("/a:/b:/c:/d:/e:/f:/g:/h:/i:/j:/k:/l:/m:/n:/o:/p:/q", &d),
	    BF_ERR_INVALID);
}

/* Caps: kernels, fragments, patches; one over each is refused. */
static void
test_caps(void)
{
	struct job_spec *job;
	struct bf_diag d;
	char *buf;
	size_t i, n, cap = 64 * 1024;
	int over;

	if ((buf = malloc(cap)) == NULL)
		abort();
	for (over = 0; over < 2; over++) {
		n = (size_t)snprintf(buf, cap, "{\"recipe\": \"x\", \"machines\": {\"class\": "
		    "\"d\"}, \"matrix\": {\"kernel\": [");
		for (i = 0; i < KSPEC_MAX_KERNELS + (size_t)over; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s\"k%zu\"", i ? ", " : "", i);
		n += (size_t)snprintf(buf + n, cap - n, "]}, \"kernels\": {");
		for (i = 0; i < KSPEC_MAX_KERNELS + (size_t)over; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s\"k%zu\": {\"git\": \"/g/l\", "
			    "\"commit\": \"v1\"}", i ? ", " : "", i);
		n += (size_t)snprintf(buf + n, cap - n, "}}");
		job = NULL;
		T_EQ_INT(job_parse(buf, n, &job, &d), over ? BF_ERR_INVALID : 0);
		if (over)
			expect_msg("17 kernels", &d, "kernels: has 17 kernels; 1 to 16 allowed");
		job_free(job);

		n = (size_t)snprintf(buf, cap, "{\"recipe\": \"x\", \"machines\": {\"class\": "
		    "\"d\"}, \"kernel\": \"a\", \"kernels\": {\"a\": {\"git\": \"/g/l\", "
		    "\"commit\": \"v1\", \"fragments\": [");
		for (i = 0; i < KSPEC_MAX_FRAGMENTS + (size_t)over; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s\"CONFIG_A%zu=y\"", i ? ", " : "",
			    i);
		n += (size_t)snprintf(buf + n, cap - n, "], \"patches\": [");
		for (i = 0; i < KSPEC_MAX_PATCHES; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s\"p%zu.patch\"", i ? ", " : "", i);
		n += (size_t)snprintf(buf + n, cap - n, "]}}}");
		job = NULL;
		T_EQ_INT(job_parse(buf, n, &job, &d), over ? BF_ERR_TOOBIG : 0);
		if (over)
			expect_msg("65 fragments", &d, "kernels.a.fragments:");
		else
			T_CHECK(job != NULL && job->kernels->k[0].nfragments == KSPEC_MAX_FRAGMENTS &&
			    job->kernels->k[0].npatches == KSPEC_MAX_PATCHES);
		job_free(job);
	}
	n = (size_t)snprintf(buf, cap, "{\"recipe\": \"x\", \"machines\": {\"class\": "
	    "\"d\"}, \"kernel\": \"a\", \"kernels\": {\"a\": {\"git\": \"/g/l\", "
	    "\"commit\": \"v1\", \"patches\": [");
	for (i = 0; i <= KSPEC_MAX_PATCHES; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s\"p%zu.patch\"", i ? ", " : "", i);
	n += (size_t)snprintf(buf + n, cap - n, "]}}}");
	job = NULL;
	T_EQ_INT(job_parse(buf, n, &job, &d), BF_ERR_TOOBIG);
	expect_msg("33 patches", &d, "kernels.a.patches:");
	job_free(job);
	/* one fragment over its byte cap */
	n = (size_t)snprintf(buf, cap, "CONFIG_A=\"");
	memset(buf + n, 'x', KSPEC_MAX_FRAGMENT);
	n += KSPEC_MAX_FRAGMENT;
	snprintf(buf + n, cap - n, "\"");
	T_EQ_INT(kspec_check_fragment(buf, "f", &d), BF_ERR_INVALID);
	expect_msg("long fragment", &d, "a config line is at most 256 bytes");
	free(buf);
}

/* The key changes with each input, and length prefixes keep inputs apart. */
static void
test_key(void)
{
	char k0[KSPEC_KEY_HEX + 1], k1[KSPEC_KEY_HEX + 1], lv[64];

	kspec_build_key("abc", "CONFIG_A=y\n", 11, "gcc 12.2.0", "x86_64", "", k0);
	T_EQ_INT(strlen(k0), KSPEC_KEY_HEX);
	kspec_build_key("abc", "CONFIG_A=y\n", 11, "gcc 12.2.0", "x86_64", "", k1);
	T_EQ_STR(k0, k1);
	kspec_build_key("abd", "CONFIG_A=y\n", 11, "gcc 12.2.0", "x86_64", "", k1);
	T_CHECK(strcmp(k0, k1) != 0);
	kspec_build_key("abc", "CONFIG_A=n\n", 11, "gcc 12.2.0", "x86_64", "", k1);
	T_CHECK(strcmp(k0, k1) != 0);
	kspec_build_key("abc", "CONFIG_A=y\n", 11, "gcc 12.2.1", "x86_64", "", k1);
	T_CHECK(strcmp(k0, k1) != 0);
	kspec_build_key("abc", "CONFIG_A=y\n", 11, "gcc 12.2.0", "arm64", "", k1);
	T_CHECK(strcmp(k0, k1) != 0);
	kspec_build_key("abc", "CONFIG_A=y\n", 11, "gcc 12.2.0", "x86_64", "-x", k1);
	T_CHECK(strcmp(k0, k1) != 0);
	/* "ab" + "cCONFIG..." must not equal "abc" + "CONFIG..." */
	kspec_build_key("ab", "cCONFIG_A=y\n", 12, "gcc 12.2.0", "x86_64", "", k1);
	T_CHECK(strcmp(k0, k1) != 0);
	kspec_make_localversion("-bf4l", k0, lv, sizeof(lv));
	T_CHECK(strncmp(lv, "-bf4l-bf", 8) == 0 && strlen(lv) == 8 + KSPEC_KEY_TAG &&
	    strncmp(lv + 8, k0, KSPEC_KEY_TAG) == 0);
	kspec_make_localversion("", k0, lv, sizeof(lv));
	T_CHECK(strncmp(lv, "-bf", 3) == 0 && strlen(lv) == 3 + KSPEC_KEY_TAG);
}

int
main(void)
{
	test_cases();
	test_parsed();
	test_caps();
	test_key();
	return t_done();
}
