/*
 * test_knob.c: the knob table: validation (hostile values included), the
 * sysfs bracket parser, and apply/read-back against a fake sysfs tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "knob.h"
#include "t.h"

struct vcase {
	const char *name, *value;
	int r;
	const char *msg;	/* substring of the message when refused */
};

static const struct vcase vcases[] = {
	{ .name = "thp_enabled", .value = "never", .r = 0, .msg = NULL },
	{ .name = "thp_enabled", .value = "madvise", .r = 0, .msg = NULL },
	{ .name = "thp_enabled", .value = "always", .r = 0, .msg = NULL },
	{ .name = "thp_enabled", .value = "alwayz", .r = BF_ERR_INVALID,
	  .msg = "knobs.thp_enabled: \"alwayz\" is not one of never, madvise, always" },
	{ .name = "thp_enabled", .value = "always\n", .r = BF_ERR_INVALID,
	  .msg = "\"always\\x0a\" is not one of" },
	{ .name = "thp_enabled", .value = "", .r = BF_ERR_INVALID,
	  .msg = "\"\" is not one of" },
	{ .name = "thp_enabled", .value = "[always]", .r = BF_ERR_INVALID,
	  .msg = "is not one of" },
	{ .name = "thp_defrag", .value = "defer+madvise", .r = 0, .msg = NULL },
	{ .name = "thp_defrag", .value = "defer madvise", .r = BF_ERR_INVALID,
	  .msg = "is not one of" },
	{ .name = "thp_shmem_enabled", .value = "within_size", .r = 0, .msg = NULL },
	{ .name = "khugepaged_pages_to_scan", .value = "4096", .r = 0, .msg = NULL },
	{ .name = "khugepaged_pages_to_scan", .value = "0", .r = BF_ERR_INVALID,
	  .msg = "is not an integer in 1..4194304" },
	{ .name = "khugepaged_pages_to_scan", .value = "12 ", .r = BF_ERR_INVALID,
	  .msg = "is not an integer" },
	{ .name = "khugepaged_defrag", .value = "1", .r = 0, .msg = NULL },
	{ .name = "khugepaged_defrag", .value = "2", .r = BF_ERR_INVALID, .msg = "0..1" },
	{ .name = "mthp_64kB", .value = "always", .r = 0, .msg = NULL },
	{ .name = "mthp_16kB", .value = "inherit", .r = 0, .msg = NULL },
	{ .name = "mthp_2048kB", .value = "never", .r = 0, .msg = NULL },
	{ .name = "mthp_64kB", .value = "sometimes", .r = BF_ERR_INVALID,
	  .msg = "never, madvise, inherit, always" },
	{ .name = "mthp_64KB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "mthp_kB", .value = "always", .r = BF_ERR_NOTFOUND, .msg = "is not a knob" },
	{ .name = "mthp_064kB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "mthp_-64kB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "mthp_../../../etc/passwdkB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "mthp_99999999999999999999kB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "randomize_va_space", .value = "0", .r = 0, .msg = NULL },
	{ .name = "randomize_va_space", .value = "2", .r = 0, .msg = NULL },
	{ .name = "randomize_va_space", .value = "3", .r = BF_ERR_INVALID, .msg = "0..2" },
	{ .name = "randomize_va_space", .value = "-0", .r = 0, .msg = NULL },
	{ .name = "randomize_va_space", .value = "0x1", .r = BF_ERR_INVALID,
	  .msg = "not an integer" },
	{ .name = "governor", .value = "performance", .r = 0, .msg = NULL },
	{ .name = "governor", .value = "../../../../etc/shadow", .r = BF_ERR_INVALID,
	  .msg = "is not one of performance" },
	{ .name = "governor", .value = "performance,powersave", .r = BF_ERR_INVALID,
	  .msg = "is not one of" },
	{ .name = "boost", .value = "1", .r = 0, .msg = NULL },
	{ .name = "boost", .value = "yes", .r = BF_ERR_INVALID, .msg = "0..1" },
	{ .name = "drop_caches", .value = "3", .r = 0, .msg = NULL },
	{ .name = "drop_caches", .value = "0", .r = BF_ERR_INVALID, .msg = "1..3" },
	{ .name = "thp", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "\"thp\" is not a knob" },
	{ .name = "../thp_enabled", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "thp_enabled\n", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "\"thp_enabled\\x0a\" is not a knob" },
};

struct bcase {
	const char *text;
	int r;
	const char *want;
};

static const struct bcase bcases[] = {
	{ .text = "always [madvise] never", .r = 0, .want = "madvise" },
	{ .text = "[always] madvise never\n", .r = 0, .want = "always" },
	{ .text = "always defer defer+madvise [madvise] never", .r = 0, .want = "madvise" },
	{ .text = "always within_size advise [never] deny force", .r = 0, .want = "never" },
	{ .text = "always inherit madvise [never]\n", .r = 0, .want = "never" },
	{ .text = "always madvise never", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[always] [never]", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[]", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[al ways]", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[always", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "always]", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "]always[", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]",
	  .r = BF_ERR_PARSE, .want = NULL },
};

static void
test_validate(void)
{
	char err[KNOB_MAX_WHY];
	size_t i;
	int r;

	for (i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		err[0] = '\0';
		r = knob_validate(vcases[i].name, vcases[i].value, err, sizeof(err));
		if (r != vcases[i].r)
			fprintf(stderr, "case %zu (%s=%s): %s\n", i, vcases[i].name,
			    vcases[i].value, err);
		T_EQ_INT(r, vcases[i].r);
		if (vcases[i].msg != NULL)
			T_CONTAINS(err, vcases[i].msg);
	}
}

static void
test_long_value(void)
{
	char big[10000], err[KNOB_MAX_WHY];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	T_EQ_INT(knob_validate("thp_enabled", big, err, sizeof(err)), BF_ERR_INVALID);
	T_CHECK(strlen(err) < 200);
	T_CONTAINS(err, "...");
	T_EQ_INT(knob_validate(big, "always", err, sizeof(err)), BF_ERR_NOTFOUND);
	T_EQ_INT(knob_validate("khugepaged_pages_to_scan", big + 9000, err, sizeof(err)),
	    BF_ERR_INVALID);
}

static void
test_bracket(void)
{
	char out[64];
	size_t i;
	int r;

	for (i = 0; i < sizeof(bcases) / sizeof(bcases[0]); i++) {
		out[0] = '\0';
		r = knob_bracket(bcases[i].text, strlen(bcases[i].text), out, sizeof(out));
		T_EQ_INT(r, bcases[i].r);
		if (bcases[i].want != NULL)
			T_EQ_STR(out, bcases[i].want);
	}
	/* counted input: the bracket past len is not seen */
	T_EQ_INT(knob_bracket("[never] x", 3, out, sizeof(out)), BF_ERR_PARSE);
	/* a word exactly filling the buffer leaves no room for the NUL */
	T_EQ_INT(knob_bracket("[abcd]", 6, out, 4), BF_ERR_PARSE);
	T_EQ_INT(knob_bracket("[abc]", 5, out, 4), 0);
}

static void
put(const char *root, const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = dir + strlen(root) + 1; (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	if ((f = fopen(path, "w")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static void
test_fake_sysfs(void)
{
	char root[] = "/tmp/bf-knob-XXXXXX", out[256], why[KNOB_MAX_WHY];
	char cmd[600];

	if (mkdtemp(root) == NULL) {
		T_CHECK(0);
		return;
	}
	T_EQ_INT(knob_set_root(root), 0);
	put(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	put(root, "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled",
	    "always inherit madvise [never]\n");
	put(root, "/sys/kernel/mm/transparent_hugepage/hugepages-16kB/enabled",
	    "always inherit madvise [never]\n");
	put(root, "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled",
	    "always [inherit] madvise never\n");
	put(root, "/proc/sys/kernel/randomize_va_space", "2\n");
	put(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
	put(root, "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
	put(root, "/sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");

	T_EQ_INT(knob_read("thp_enabled", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "madvise");
	T_EQ_INT(knob_read("mthp_2048kB", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "inherit");
	T_EQ_INT(knob_mthp_sizes(out, sizeof(out)), 0);
	T_EQ_STR(out, "16kB, 64kB, 2048kB");
	T_EQ_INT(knob_read("mthp_32kB", out, sizeof(out), why, sizeof(why)), BF_ERR_NOTFOUND);
	T_CONTAINS(why, "no such mTHP size 32kB on this machine; available: 16kB, 64kB, 2048kB");
	T_EQ_INT(knob_write("mthp_32kB", "always", why, sizeof(why)), BF_ERR_NOTFOUND);
	T_EQ_INT(knob_read("randomize_va_space", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "2");
	T_CHECK(knob_same("randomize_va_space", "02", "2"));
	T_CHECK(!knob_same("thp_enabled", "always", "madvise"));
	/* cpus disagree: both are named */
	T_EQ_INT(knob_read("governor", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "0:powersave,1:performance");
	/* no_turbo 1 means boost off */
	T_EQ_INT(knob_read("boost", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "0");
	T_EQ_INT(knob_write("boost", "1", why, sizeof(why)), 0);
	T_EQ_INT(knob_read("boost", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "1");
	/* a plain file takes the word; a real sysfs would then show it bracketed */
	T_EQ_INT(knob_write("governor", "performance", why, sizeof(why)), 0);
	T_EQ_INT(knob_read("governor", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "performance");
	T_EQ_INT(knob_write("thp_enabled", "bogus", why, sizeof(why)), BF_ERR_INVALID);
	T_EQ_INT(knob_read("drop_caches", out, sizeof(out), why, sizeof(why)), BF_ERR_INVALID);
	/* the THP file without brackets is refused, not misread */
	put(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always\n");
	T_EQ_INT(knob_read("thp_enabled", out, sizeof(out), why, sizeof(why)), BF_ERR_PARSE);
	T_CONTAINS(why, "no [selected] value");
	T_EQ_INT(knob_read("thp_defrag", out, sizeof(out), why, sizeof(why)), BF_ERR_NOTFOUND);
	T_EQ_INT(knob_read("boost", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_INT(knob_set_root(""), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	T_EQ_INT(system(cmd), 0);
}

static void
test_table(void)
{
	const struct knob *t;
	size_t n, i;

	t = knob_table(&n);
	T_CHECK(n >= 10);
	for (i = 0; i < n; i++)
		T_CHECK(t[i].name != NULL && t[i].path != NULL && t[i].help != NULL);
	T_CHECK(knob_find("mthp_64kB") != NULL && knob_find("mthp_64kB")->family);
	T_CHECK(knob_find("governor") != NULL);
	T_CHECK(knob_find("mthp_") == NULL);
}

int
main(void)
{
	test_validate();
	test_long_value();
	test_bracket();
	test_fake_sysfs();
	test_table();
	return t_done();
}
