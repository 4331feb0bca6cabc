/*
 * test_kbuild.c: the build plan of a kernel spec (kbuild.h). Each command
 * is checked argv element by argv element (hostile-looking values stay
 * one element, after "--" or an option that takes them); then the prep
 * phase's git commands are run for real, with execvp, on a small git
 * repository made here: the clone, the checkout of a tag, a patch applied
 * to the index, and the tree id, which must be the tree of the same
 * change committed by hand. A patch that does not apply and a ref that
 * does not exist fail their command. The config helpers and the error
 * line are table driven.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "kbuild.h"
#include "kspec.h"
#include "t.h"

static char *
argv_text(char **argv)
{
	static char buf[4096];
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; argv[i] != NULL && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s[%s]", i ? " " : "",
		    argv[i]);
	return buf;
}

static void
test_plan(void)
{
	char *frags[] = { "CONFIG_X86_5LEVEL=n", "CONFIG_CMDLINE=\"console=ttyS0\"" };
	char *patches[] = { "series/0001-a.patch", "/srv/git/p/0002.patch" };
	struct kspec k = { "a", "/srv/git/linux", "v6.1", KSPEC_CONFIG_FILE, "/srv/git/x.config",
	    frags, 2, patches, 2, "-bf4l" };
	static const char tree[] = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
	static const char sha[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct kbuild_plan *p = NULL;
	struct bf_diag d;
	json_t *doc = NULL;
	char dir[600];
	size_t i;

	/* the kept tree: sha256("/srv/git/linux") = 6789a880b4a5210a... */
	T_EQ_INT(kbuild_tree_dir("/var/tmp/bf/kb", k.git, "x86_64", dir, sizeof(dir), &d), 0);
	T_EQ_STR(dir, "/var/tmp/bf/kb/t-6789a880b4a5210a-x86_64");
	T_EQ_INT(kbuild_tree_dir("/var/tmp/bf/kb", "srv/git", "x86_64", dir, sizeof(dir), &d),
	    BF_ERR_INVALID);
	T_EQ_INT(kbuild_tree_dir("/var/tmp/bf/kb", k.git, "x86_64", dir, 20, &d), BF_ERR_TOOBIG);
	T_EQ_INT(kbuild_prep(&k, "/var/tmp/bf/kb", "x86_64", &p, &d), 0);
	if (p == NULL)
		return;
#define W "/var/tmp/bf/kb/t-6789a880b4a5210a-x86_64"
	T_EQ_STR(p->dir, W);
	T_EQ_STR(p->repo, "/srv/git/linux");
	T_EQ_INT(p->n, 14);
	T_EQ_STR(argv_text(p->cmd[0].argv), "[git] [-c] [core.hooksPath=/dev/null] [clone] "
	    "[--quiet] [--shared] [--no-checkout] [--] [/srv/git/linux] [" W "/src]");
	T_EQ_STR(p->cmd[0].unless_exists, W "/src/.git");
	T_EQ_STR(argv_text(p->cmd[1].argv), "[git] [-C] [" W "/src] [-c] "
	    "[core.hooksPath=/dev/null] [fetch] [--quiet] [--force] [--prune] [--update-head-ok] "
	    "[origin] [+refs/heads/*:refs/heads/*] [+refs/heads/*:refs/remotes/origin/*] "
	    "[+refs/tags/*:refs/tags/*]");
	T_EQ_STR(argv_text(p->cmd[2].argv), "[git] [-C] [/srv/git/linux] [rev-parse] [--quiet] "
	    "[--verify] [v6.1^{commit}]");
	T_EQ_STR(argv_text(p->cmd[3].argv), "[git] [-C] [" W "/src] [-c] "
	    "[advice.detachedHead=false] [checkout] [--quiet] [--force] [--detach] [v6.1] [--]");
	T_EQ_STR(argv_text(p->cmd[4].argv), "[git] [-C] [" W "/src] [clean] [-ffdxq]");
	T_EQ_STR(p->cmd[5].what, "patch");
	T_EQ_INT(p->cmd[5].index, 0);
	T_EQ_STR(argv_text(p->cmd[5].argv), "[git] [-C] [" W "/src] [apply] [--index] "
	    "[--] [/srv/git/linux/series/0001-a.patch]");
	T_EQ_STR(argv_text(p->cmd[6].argv), "[git] [-C] [" W "/src] [apply] [--index] "
	    "[--] [/srv/git/p/0002.patch]");
	T_EQ_STR(p->cmd[7].what, "tree");
	T_EQ_INT(p->cmd[7].capture, 1);
	T_EQ_STR(argv_text(p->cmd[8].argv), "[mkdir] [-p] [--] [" W "/out]");
	T_EQ_STR(argv_text(p->cmd[9].argv), "[rm] [-f] [--] [" W "/out/bf-fragment.config]");
	T_EQ_STR(argv_text(p->cmd[10].argv), "[cp] [--] [/srv/git/x.config] [" W "/out/.config]");
	T_EQ_STR(argv_text(p->cmd[11].argv), "[make] [-s] [-C] [" W "/src] "
	    "[O=" W "/out] [ARCH=x86] [olddefconfig]");
	T_EQ_STR(argv_text(p->cmd[12].argv), "[" W "/src/scripts/kconfig/merge_config.sh] "
	    "[-m] [-O] [" W "/out] [" W "/out/.config] [" W "/out/bf-fragment.config]");
	T_EQ_STR(p->cmd[13].argv[6], "olddefconfig");
	T_EQ_STR(p->fragment, "CONFIG_X86_5LEVEL=n\nCONFIG_CMDLINE=\"console=ttyS0\"\n");
	T_EQ_STR(p->fragment_path, W "/out/bf-fragment.config");
	/* a broken kept tree shows in clone, fetch, checkout, clean and
	 * write-tree; a wrong ref or patch is the spec's fault: no reset */
	for (i = 0; i < p->n; i++) {
		T_CHECK(p->cmd[i].capture == (strcmp(p->cmd[i].what, "tree") == 0));
		T_CHECK(p->cmd[i].prep == 1);
		T_CHECK(p->cmd[i].reuse == (i == 0 || i == 1 || i == 3 || i == 4 || i == 7));
		T_CHECK((p->cmd[i].unless_exists != NULL) == (i == 0));
	}
	T_EQ_INT(kbuild_plan_doc(p, 60, 1024, &doc), 0);
	T_EQ_STR(json_string_value(json_object_get(json_object_get(doc, "persist"), "dir")), W);
	T_EQ_STR(json_string_value(json_object_get(json_object_get(doc, "persist"), "repo")),
	    "/srv/git/linux");
	T_CHECK(json_object_get(doc, "expect") == NULL);	/* a prep expects nothing */
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(doc, "cmds"),
	    0), "unless_exists")), W "/src/.git");
	T_CHECK(json_is_true(json_object_get(json_array_get(json_object_get(doc, "cmds"), 3),
	    "reuse")));
	T_CHECK(json_is_false(json_object_get(json_array_get(json_object_get(doc, "cmds"), 2),
	    "reuse")));
	json_decref(doc);
	doc = NULL;
	kbuild_plan_free(p);
#undef W

	/* tinyconfig, no patches or fragments: no cp, no merge */
	k.config = KSPEC_CONFIG_TINYCONFIG;
	k.config_path = NULL;
	k.nfragments = k.npatches = 0;
	k.git = "/w/linux";
#define W "/w/t-3fb04ae034a23c27-aarch64"
	T_EQ_INT(kbuild_prep(&k, "/w", "aarch64", &p, &d), 0);
	if (p != NULL) {
		T_EQ_INT(p->n, 9);
		T_EQ_STR(argv_text(p->cmd[8].argv), "[make] [-s] [-C] [" W "/src] [O=" W "/out] "
		    "[ARCH=arm64] [tinyconfig]");
		T_CHECK(p->fragment == NULL);
	}
#undef W
	kbuild_plan_free(p);
	p = NULL;
	T_EQ_INT(kbuild_prep(&k, "w", "x86_64", &p, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "builddir");
	T_EQ_INT(kbuild_prep(&k, "/w/../etc", "x86_64", &p, &d), BF_ERR_INVALID);
	T_EQ_INT(kbuild_prep(&k, "/", "x86_64", &p, &d), BF_ERR_INVALID);
	T_EQ_INT(kbuild_prep(&k, "/w", "riscv64", &p, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "arch: \"riscv64\" is not an arch");
	T_CHECK(p == NULL);

	/* the build phase: the prep's commands (skipped when the tree is as
	 * expected), then make in the kept tree */
#define W "/w/t-3fb04ae034a23c27-x86_64"
	T_EQ_INT(kbuild_build(&k, "/w", "x86_64", 2, "-bf4l-bf0123abcd", 1, tree, sha, &p, &d),
	    0);
	if (p != NULL) {
		T_EQ_INT(p->n, 14);
		T_EQ_STR(p->cmd[0].what, "clone");
		T_CHECK(p->cmd[8].prep == 1 && p->cmd[9].prep == 0);
		T_EQ_STR(argv_text(p->cmd[9].argv), "[make] [-C] [" W "/src] [O=" W "/out] "
		    "[ARCH=x86] [-j2] [LOCALVERSION=-bf4l-bf0123abcd] "
		    "[KBUILD_BUILD_USER=benchfleet] [KBUILD_BUILD_HOST=benchfleet]");
		T_EQ_STR(p->cmd[10].what, "release");
		T_EQ_INT(p->cmd[10].capture, 1);
		/* no module of an earlier build in this one's tarball */
		T_EQ_STR(argv_text(p->cmd[11].argv), "[rm] [-rf] [--] [" W "/staging] "
		    "[" W "/modules.tar.gz]");
		T_EQ_STR(argv_text(p->cmd[12].argv), "[make] [-s] [-C] [" W "/src] [O=" W "/out] "
		    "[ARCH=x86] [LOCALVERSION=-bf4l-bf0123abcd] [INSTALL_MOD_PATH=" W "/staging] "
		    "[modules_install]");
		T_EQ_STR(argv_text(p->cmd[13].argv), "[tar] [-C] [" W "/staging] [-czf] "
		    "[" W "/modules.tar.gz] [lib]");
		T_EQ_STR(p->image, W "/out/arch/x86/boot/bzImage");
		T_EQ_STR(p->config, W "/out/.config");
		T_EQ_STR(p->sysmap, W "/out/System.map");
		T_EQ_STR(p->modules, W "/modules.tar.gz");
		T_EQ_INT(kbuild_plan_doc(p, 60, 1024, &doc), 0);
		{
			json_t *e = json_object_get(doc, "expect");

			T_EQ_STR(json_string_value(json_object_get(e, "value")), tree);
			T_EQ_STR(json_string_value(json_object_get(e, "sha256")), sha);
			T_EQ_STR(json_string_value(json_object_get(e, "file")), W "/out/.config");
			T_EQ_STR(json_string_value(json_array_get(json_object_get(e, "argv"), 3)),
			    "write-tree");
		}
		json_decref(doc);
	}
#undef W
	kbuild_plan_free(p);
	p = NULL;
	T_EQ_INT(kbuild_build(&k, "/w", "aarch64", 1, "", 0, tree, sha, &p, &d), 0);
	if (p != NULL) {
		T_EQ_INT(p->n, 11);
		T_EQ_STR(p->image, "/w/t-3fb04ae034a23c27-aarch64/out/arch/arm64/boot/Image");
		T_CHECK(p->modules == NULL);
	}
	kbuild_plan_free(p);
	p = NULL;
	T_EQ_INT(kbuild_build(&k, "/w", "x86_64", 0, "", 0, tree, sha, &p, &d), BF_ERR_INVALID);
	T_EQ_INT(kbuild_build(&k, "/w", "x86_64", 2, "-x$(id)", 0, tree, sha, &p, &d),
	    BF_ERR_INVALID);
	T_EQ_INT(kbuild_build(&k, "/w", "x86_64", 2, "x", 0, tree, sha, &p, &d), BF_ERR_INVALID);
	T_EQ_INT(kbuild_build(&k, "/w", "x86_64", 2, "", 0, "HEAD", sha, &p, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "tree");
	T_EQ_INT(kbuild_build(&k, "/w", "x86_64", 2, "", 0, tree, "x", &p, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "config");
	T_EQ_INT(kbuild_build(&k, "/w", "x86_64", 2, "", 0, NULL, sha, &p, &d), BF_ERR_INVALID);
	T_CHECK(p == NULL);
	kbuild_plan_free(NULL);
}

/* Run argv (stdout into out when given); the exit status, or -1. */
static int
run(char **argv, char *out, size_t outsz)
{
	int pfd[2], st = -1;
	ssize_t n;
	size_t off = 0;
	pid_t pid;

	if (pipe(pfd) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		int dn = open("/dev/null", O_WRONLY);

		dup2(pfd[1], 1);
		dup2(dn, 2);
		close(pfd[0]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while (out != NULL && off + 1 < outsz && (n = read(pfd[0], out + off, outsz - off - 1)) > 0)
		off += (size_t)n;
	if (out != NULL) {
		out[off] = '\0';
		while (off > 0 && out[off - 1] == '\n')
			out[--off] = '\0';
	}
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
sh(const char *dir, const char *cmd)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "cd '%s' && (%s) >/dev/null 2>&1", dir, cmd);
	return system(buf);
}

/* A line of file dir/name into out ("" when none). */
static void
read_line(const char *dir, const char *name, char *out, size_t outsz)
{
	char path[400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out[0] = '\0';
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(out, (int)outsz, f) == NULL)
			out[0] = '\0';
		fclose(f);
	}
	out[strcspn(out, "\n")] = '\0';
}

/* The plan's git commands (clone .. tree) run for real in its kept tree,
 * the clone skipped when its unless_exists is there; *tree the tree id.
 * The index of the first command that failed, or -1. */
static int
run_git(const struct kbuild_plan *p, char *tree, size_t treesz)
{
	char got[128];
	size_t i;

	tree[0] = '\0';
	for (i = 0; i < p->n && strcmp(p->cmd[i].what, "mkdir") != 0; i++) {
		if (p->cmd[i].unless_exists != NULL && access(p->cmd[i].unless_exists, F_OK) == 0)
			continue;
		got[0] = '\0';
		/* read even when not captured: rev-parse prints, a closed pipe kills it */
		if (run(p->cmd[i].argv, got, sizeof(got)) != 0)
			return (int)i;
		if (p->cmd[i].capture)
			snprintf(tree, treesz, "%s", got);
	}
	return -1;
}

/* The prep phase's git commands against a real repository, in a kept
 * tree: the patched tree id, again the same after a second prep there
 * (the patch undone by the checkout, applied again), a file the move
 * does not touch keeps its mtime, a tag made in the source after the
 * clone is found (the fetch), a ref that does not exist fails. */
static void
test_git(void)
{
	char tmpl[] = "/tmp/bf-kbuild.XXXXXX", repo[256], wd[256], want[128], want2[128];
	char got[128], w[600], path[700];
	char *patches[] = { "series/0001-x.patch" };
	struct kspec k = { "a", repo, "v1", KSPEC_CONFIG_TINYCONFIG, NULL, NULL, 0, patches, 1,
	    "" };
	struct kbuild_plan *p = NULL;
	struct bf_diag d;
	struct timespec mt = { 0, 0 };
	struct stat sb;
	char *dir;

	if ((dir = mkdtemp(tmpl)) == NULL) {
		T_CHECK(0);
		return;
	}
	snprintf(repo, sizeof(repo), "%s/linux", dir);
	snprintf(wd, sizeof(wd), "%s/wd", dir);
	T_EQ_INT(sh(dir, "git init -q linux && cd linux && git config user.email t@t && "
	    "git config user.name t && printf 'int x;\\n' >mm.c && printf 'int o;\\n' >other.c && "
	    "git add mm.c other.c && git commit -qm one && git tag v1 && mkdir series && "
	    "printf 'int x;\\nint y;\\n' >mm.c && git diff >series/0001-x.patch && "
	    "git commit -qam two && git rev-parse 'HEAD^{tree}' >../want && "
	    "git checkout -q v1 -- mm.c && git commit -qam three"), 0);
	read_line(dir, "want", want, sizeof(want));
	T_EQ_INT(kbuild_prep(&k, wd, "x86_64", &p, &d), 0);
	if (p == NULL)
		goto out;
	snprintf(w, sizeof(w), "%s", p->dir);
	T_EQ_INT(run_git(p, got, sizeof(got)), -1);
	T_EQ_INT(strlen(got), 40);
	T_EQ_STR(got, want);		/* the patched tree, as committed by hand */
	/* the clone borrowed the objects: an alternates file, no pack copied */
	snprintf(path, sizeof(path), "%s/src/.git/objects/info/alternates", w);
	T_CHECK(access(path, F_OK) == 0);
	/* the same patch again does not apply on the patched tree ... */
	T_CHECK(run(p->cmd[5].argv, NULL, 0) != 0);
	T_EQ_STR(p->cmd[5].what, "patch");
	/* ... but a second prep in the kept tree undoes it first; a file the
	 * commit does not change is not written again (make keeps its object) */
	snprintf(path, sizeof(path), "%s/src/other.c", w);
	T_CHECK(stat(path, &sb) == 0);
	mt = sb.st_mtim;
	T_EQ_INT(sh(w, "echo junk >src/new.c && echo junk >>src/mm.c"), 0);
	T_EQ_INT(run_git(p, got, sizeof(got)), -1);
	T_EQ_STR(got, want);
	T_CHECK(stat(path, &sb) == 0 && sb.st_mtim.tv_sec == mt.tv_sec &&
	    sb.st_mtim.tv_nsec == mt.tv_nsec);
	snprintf(path, sizeof(path), "%s/src/new.c", w);
	T_CHECK(access(path, F_OK) != 0);	/* git clean */
	snprintf(path, sizeof(path), "%s/src/mm.c", w);	/* "int x;\nint y;\n", no junk */
	T_CHECK(stat(path, &sb) == 0 && sb.st_size == 14);
	kbuild_plan_free(p);
	p = NULL;

	/* a tag the source got after the clone: fetched, checked out */
	T_EQ_INT(sh(repo, "printf 'int z;\\n' >other.c && git commit -qam four && git tag v2 && "
	    "git rev-parse 'HEAD^{tree}' >../want2"), 0);
	read_line(dir, "want2", want2, sizeof(want2));
	k.commit = "v2";
	k.npatches = 0;
	T_EQ_INT(kbuild_prep(&k, wd, "x86_64", &p, &d), 0);
	if (p != NULL) {
		T_EQ_STR(p->dir, w);		/* the same kept tree */
		T_EQ_INT(run_git(p, got, sizeof(got)), -1);
		T_EQ_STR(got, want2);
	}
	kbuild_plan_free(p);
	p = NULL;

	/* a ref that does not exist fails at "commit", which is no reason
	 * to throw the kept tree away */
	k.commit = "v9";
	T_EQ_INT(kbuild_prep(&k, wd, "x86_64", &p, &d), 0);
	if (p != NULL) {
		T_EQ_INT(run_git(p, got, sizeof(got)), 2);
		T_EQ_STR(p->cmd[2].what, "commit");
		T_EQ_INT(p->cmd[2].reuse, 0);
	}
out:
	kbuild_plan_free(p);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
}

static void
test_config(void)
{
	static const char cfg[] = "#\n# comment\nCONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14) "
	    "12.2.0\"\nCONFIG_MODULES=y\nCONFIG_KVM=m\n# CONFIG_X86_5LEVEL is not set\n"
	    "CONFIG_MODULES_X=y\nCONFIG_NR_CPUS=64";
	char cc[128];

	T_EQ_INT(kbuild_config_tristate(cfg, sizeof(cfg) - 1, "MODULES"), 'y');
	T_EQ_INT(kbuild_config_tristate(cfg, sizeof(cfg) - 1, "KVM"), 'm');
	T_EQ_INT(kbuild_config_tristate(cfg, sizeof(cfg) - 1, "X86_5LEVEL"), 0);
	T_EQ_INT(kbuild_config_tristate(cfg, sizeof(cfg) - 1, "NR_CPUS"), 0);
	T_EQ_INT(kbuild_config_tristate(cfg, sizeof(cfg) - 1, "MODULE"), 0);
	T_EQ_INT(kbuild_config_tristate("CONFIG_A=y", 9, "A"), 0);	/* cut before the y */
	kbuild_config_cc(cfg, sizeof(cfg) - 1, cc, sizeof(cc));
	T_EQ_STR(cc, "gcc (Debian 12.2.0-14) 12.2.0");
	kbuild_config_cc("CONFIG_CC_VERSION_TEXT=\"x", 25, cc, sizeof(cc));
	T_EQ_STR(cc, "");
	kbuild_config_cc("", 0, cc, sizeof(cc));
	T_EQ_STR(cc, "");
}

static void
test_error_line(void)
{
	static const struct {
		const char *log;
		const char *want;
	} cases[] = {
		{"  CC      mm/memory.o\nmm/memory.c:42:1: error: expected ';' before '}' token\n"
		    "make[3]: *** [scripts/Makefile.build:250: mm/memory.o] Error 1\n",
		    "mm/memory.c:42:1: error: expected ';' before '}' token"},
		{"  LD      vmlinux\nmake[1]: *** [Makefile:1250: vmlinux] Error 1\nmake: *** "
		    "[Makefile:234: __sub-make] Error 2", "make: *** [Makefile:234: __sub-make] Error 2"},
		{"all fine\n", ""},
		{"", ""},
		{"a: error: first\nb: error: second\n", "a: error: first"},
	};
	char out[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kbuild_error_line(cases[i].log, strlen(cases[i].log), out, sizeof(out));
		T_EQ_STR(out, cases[i].want);
	}
	kbuild_error_line("x.c:1:1: error: long", 21, out, 8);
	T_EQ_STR(out, "x.c:1:1");
	T_EQ_STR(kbuild_arch("x86_64"), "x86");
	T_EQ_STR(kbuild_arch("aarch64"), "arm64");
	T_CHECK(kbuild_arch("i686") == NULL && kbuild_arch(NULL) == NULL);
}

static void
test_key(void)
{
	static const char cfg[] = "CONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14) 12.2.0\"\n"
	    "CONFIG_MODULES=y\n";
	static const char tree[] = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
	struct kspec k = { "a", "/g", "v1", KSPEC_CONFIG_DEFCONFIG, NULL, NULL, 0, NULL, 0, "-x" };
	char key[65], key2[65], lv[64], want[65];
	struct bf_diag d;

	T_EQ_INT(kbuild_key(&k, tree, cfg, sizeof(cfg) - 1, "x86_64", key, lv, sizeof(lv), &d), 0);
	kspec_build_key(tree, cfg, sizeof(cfg) - 1, "gcc (Debian 12.2.0-14) 12.2.0", "x86_64",
	    "-x", want);
	T_EQ_STR(key, want);
	T_CHECK(strncmp(lv, "-x-bf", 5) == 0 && strncmp(lv + 5, key, 8) == 0 && strlen(lv) == 13);
	T_EQ_INT(kbuild_key(&k, tree, cfg, sizeof(cfg) - 1, "aarch64", key2, lv, sizeof(lv), &d),
	    0);
	T_CHECK(strcmp(key, key2) != 0);
	T_EQ_INT(kbuild_key(&k, "HEAD", cfg, sizeof(cfg) - 1, "x86_64", key, lv, sizeof(lv), &d),
	    BF_ERR_INVALID);
	T_EQ_INT(kbuild_key(&k, "4B825DC642CB6EB9A060E54BF8D69288FBEE4904", cfg, sizeof(cfg) - 1,
	    "x86_64", key, lv, sizeof(lv), &d), BF_ERR_INVALID);
	T_EQ_INT(kbuild_key(&k, tree, "CONFIG_A=y\n", 11, "x86_64", key, lv, sizeof(lv), &d),
	    BF_ERR_INVALID);
	T_CONTAINS(d.msg, "CONFIG_CC_VERSION_TEXT");
	T_EQ_INT(kbuild_key(&k, tree, cfg, sizeof(cfg) - 1, "mips", key, lv, sizeof(lv), &d),
	    BF_ERR_INVALID);
}

/* The agent's document: commands in order, the fragment written before
 * the merge, a build's artifacts. */
static void
test_doc(void)
{
	char *frags[] = { "CONFIG_A=y" };
	struct kspec k = { "a", "/g", "v1", KSPEC_CONFIG_DEFCONFIG, NULL, frags, 1, NULL, 0, "" };
	struct kbuild_plan *p = NULL;
	struct bf_diag d;
	json_t *doc = NULL, *c;

	T_EQ_INT(kbuild_prep(&k, "/w", "x86_64", &p, &d), 0);
	if (p == NULL)
		return;
	T_EQ_INT(kbuild_plan_doc(p, 600, 1 << 20, &doc), 0);
	T_EQ_INT(json_integer_value(json_object_get(doc, "timeout_s")), 600);
	T_EQ_INT(json_array_size(json_object_get(doc, "cmds")), p->n);
	T_EQ_INT(json_array_size(json_object_get(doc, "artifacts")), 0);
	c = json_array_get(json_object_get(doc, "cmds"), 9);
	T_EQ_STR(json_string_value(json_object_get(c, "what")), "fragments");
	T_EQ_STR(json_string_value(json_object_get(json_object_get(c, "write"), "text")),
	    "CONFIG_A=y\n");
	T_EQ_STR(json_string_value(json_object_get(json_object_get(c, "write"), "path")),
	    "/w/t-acafaa512feb5308-x86_64/out/bf-fragment.config");
	c = json_array_get(json_object_get(doc, "cmds"), 5);
	T_CHECK(json_is_true(json_object_get(c, "capture")));
	T_EQ_STR(json_string_value(json_array_get(json_object_get(c, "argv"), 3)), "write-tree");
	json_decref(doc);
	kbuild_plan_free(p);
	p = NULL;
	T_EQ_INT(kbuild_build(&k, "/w", "x86_64", 2, "-bf01234567", 1,
	    "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef", &p, &d), 0);
	if (p == NULL)
		return;
	T_EQ_INT(kbuild_plan_doc(p, 600, 1 << 20, &doc), 0);
	c = json_object_get(doc, "artifacts");
	T_EQ_INT(json_array_size(c), 4);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(c, 0), "path")),
	    "/w/t-acafaa512feb5308-x86_64/out/arch/x86/boot/bzImage");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(c, 3), "name")), "modules");
	json_decref(doc);
	kbuild_plan_free(p);
}

int
main(void)
{
	test_key();
	test_doc();
	test_plan();
	test_git();
	test_config();
	test_error_line();
	return t_done();
}
