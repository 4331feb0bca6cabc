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
	{ "thp_enabled", "never", 0, NULL },
	{ "thp_enabled", "madvise", 0, NULL },
	{ "thp_enabled", "always", 0, NULL },
	{ "thp_enabled", "alwayz", BF_ERR_INVALID,
	  "knobs.thp_enabled: \"alwayz\" is not one of never, madvise, always" },
	{ "thp_enabled", "always\n", BF_ERR_INVALID, "\"always\\x0a\" is not one of" },
	{ "thp_enabled", "", BF_ERR_INVALID, "\"\" is not one of" },
	{ "thp_enabled", "[always]", BF_ERR_INVALID, "is not one of" },
	{ "thp_defrag", "defer+madvise", 0, NULL },
	{ "thp_defrag", "defer madvise", BF_ERR_INVALID, "is not one of" },
	{ "thp_shmem_enabled", "within_size", 0, NULL },
	{ "khugepaged_pages_to_scan", "4096", 0, NULL },
	{ "khugepaged_pages_to_scan", "0", BF_ERR_INVALID, "is not an integer in 1..4194304" },
	{ "khugepaged_pages_to_scan", "12 ", BF_ERR_INVALID, "is not an integer" },
	{ "khugepaged_defrag", "1", 0, NULL },
	{ "khugepaged_defrag", "2", BF_ERR_INVALID, "0..1" },
	{ "mthp_64kB", "always", 0, NULL },
	{ "mthp_16kB", "inherit", 0, NULL },
	{ "mthp_2048kB", "never", 0, NULL },
	{ "mthp_64kB", "sometimes", BF_ERR_INVALID, "never, madvise, inherit, always" },
	{ "mthp_64KB", "always", BF_ERR_NOTFOUND, "is not a knob" },
	{ "mthp_kB", "always", BF_ERR_NOTFOUND, "is not a knob" },
	{ "mthp_064kB", "always", BF_ERR_NOTFOUND, "is not a knob" },
	{ "mthp_-64kB", "always", BF_ERR_NOTFOUND, "is not a knob" },
	{ "mthp_../../../etc/passwdkB", "always", BF_ERR_NOTFOUND, "is not a knob" },
	{ "mthp_99999999999999999999kB", "always", BF_ERR_NOTFOUND, "is not a knob" },
	{ "randomize_va_space", "0", 0, NULL },
	{ "randomize_va_space", "2", 0, NULL },
	{ "randomize_va_space", "3", BF_ERR_INVALID, "0..2" },
	{ "randomize_va_space", "-0", 0, NULL },
	{ "randomize_va_space", "0x1", BF_ERR_INVALID, "not an integer" },
	{ "governor", "performance", 0, NULL },
	{ "governor", "../../../../etc/shadow", BF_ERR_INVALID, "is not one of performance" },
	{ "governor", "performance,powersave", BF_ERR_INVALID, "is not one of" },
	{ "boost", "1", 0, NULL },
	{ "boost", "yes", BF_ERR_INVALID, "0..1" },
	{ "drop_caches", "3", 0, NULL },
	{ "drop_caches", "0", BF_ERR_INVALID, "1..3" },
	{ "thp", "always", BF_ERR_NOTFOUND, "\"thp\" is not a knob" },
	{ "../thp_enabled", "always", BF_ERR_NOTFOUND, "is not a knob" },
	{ "thp_enabled\n", "always", BF_ERR_NOTFOUND, "\"thp_enabled\\x0a\" is not a knob" },
};

struct bcase {
	const char *text;
	int r;
	const char *want;
};

static const struct bcase bcases[] = {
	{ "always [madvise] never", 0, "madvise" },
	{ "[always] madvise never\n", 0, "always" },
	{ "always defer defer+madvise [madvise] never", 0, "madvise" },
	{ "always within_size advise [never] deny force", 0, "never" },
	{ "always inherit madvise [never]\n", 0, "never" },
	{ "always madvise never", BF_ERR_PARSE, NULL },
	{ "[always] [never]", BF_ERR_PARSE, NULL },
	{ "[]", BF_ERR_PARSE, NULL },
	{ "[al ways]", BF_ERR_PARSE, NULL },
	{ "[always", BF_ERR_PARSE, NULL },
	{ "always]", BF_ERR_PARSE, NULL },
	{ "]always[", BF_ERR_PARSE, NULL },
	{ "", BF_ERR_PARSE, NULL },
	{ "[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]",
	  BF_ERR_PARSE, NULL },
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
