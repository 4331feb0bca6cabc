/*
 * agent_test_build.c: `benchfleet-agent build` (agent/build.c), the real
 * binary fed documents on stdin: the prep commands of a kernel build
 * (git clone --shared, checkout, apply, write-tree) run for real on a
 * small repository, the tree id comes back as a build_value and a file as
 * an artifact whose end line carries the file's sha256; a patch that does
 * not apply ends the build with build_failed naming it; the deadline
 * kills a command; a write never replaces a file nor follows a symlink;
 * an artifact that is a symlink is dropped, said why; malformed documents
 * exit 2 with an error line.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sha256.h"
#include "t.h"

static const char *agent;
static char dir[64];

/* Run `agent build` with doc on stdin; its stdout into out; exit status. */
static int
run_build(const char *doc, char *out, size_t outsz)
{
	int in[2], op[2], st = -1;
	size_t off = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(in) != 0 || pipe(op) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(op[1], 1);
		close(in[1]);
		close(op[0]);
		execl(agent, agent, "build", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(op[1]);
	if (write(in[1], doc, strlen(doc)) != (ssize_t)strlen(doc))
		T_CHECK(0);
	close(in[1]);
	while (off + 1 < outsz && (n = read(op[0], out + off, outsz - off - 1)) > 0)
		off += (size_t)n;
	out[off] = '\0';
	close(op[0]);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
sh(const char *cmd)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "cd '%s' && (%s) >/dev/null 2>&1", dir, cmd);
	return system(buf);
}

static void
slurp(const char *name, char *out, size_t outsz)
{
	char p[128];
	FILE *f;

	out[0] = '\0';
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if ((f = fopen(p, "r")) != NULL) {
		if (fgets(out, (int)outsz, f) == NULL)
			out[0] = '\0';
		fclose(f);
	}
	out[strcspn(out, "\n")] = '\0';
}

static void
test_prep(void)
{
	static char out[256 * 1024];
	char doc[4096], want[64], line[256], file[160], sha[65];

	T_EQ_INT(sh("git init -q linux && cd linux && git config user.email t@t && "
	    "git config user.name t && printf 'int x;\\n' >mm.c && git add mm.c && "
	    "git commit -qm one && git tag v1 && mkdir series && "
	    "printf 'int x;\\nint y;\\n' >mm.c && git diff >series/0001-x.patch && "
	    "git commit -qam two && git rev-parse 'HEAD^{tree}' >../want && "
	    "git checkout -q v1 -- mm.c && git commit -qam three"), 0);
	slurp("want", want, sizeof(want));
	T_EQ_INT(strlen(want), 40);
	snprintf(doc, sizeof(doc), "{\"timeout_s\": 60, \"cmds\": ["
	    "{\"what\": \"clone\", \"argv\": [\"git\", \"-c\", \"core.hooksPath=/dev/null\", \"clone\","
	    " \"--quiet\", \"--shared\", \"--no-checkout\", \"--\", \"%s/linux\", \"%s/w/src\"]},"
	    "{\"what\": \"checkout\", \"argv\": [\"git\", \"-C\", \"%s/w/src\", \"checkout\", \"--quiet\","
	    " \"--detach\", \"v1\", \"--\"]},"
	    "{\"what\": \"patch\", \"index\": 0, \"argv\": [\"git\", \"-C\", \"%s/w/src\", \"apply\","
	    " \"--index\", \"--\", \"%s/linux/series/0001-x.patch\"]},"
	    "{\"what\": \"tree\", \"capture\": true, \"argv\": [\"git\", \"-C\", \"%s/w/src\","
	    " \"write-tree\"]},"
	    "{\"what\": \"mkdir\", \"argv\": [\"mkdir\", \"-p\", \"--\", \"%s/w/out\"],"
	    " \"write\": {\"path\": \"%s/w/frag.config\", \"text\": \"CONFIG_A=y\\n\"}}],"
	    " \"artifacts\": [{\"name\": \"config\", \"path\": \"%s/w/src/mm.c\"}]}",
	    dir, dir, dir, dir, dir, dir, dir, dir, dir);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	snprintf(line, sizeof(line), "{\"type\":\"build_value\",\"what\":\"tree\",\"value\":\"%s\"}",
	    want);
	T_CONTAINS(out, line);
	T_CONTAINS(out, "{\"type\":\"artifact\",\"name\":\"config\",\"seq\":0,\"data\":\"");
	sha256_hex("int x;\nint y;\n", 14, sha);
	snprintf(line, sizeof(line), "{\"type\":\"artifact_end\",\"name\":\"config\",\"bytes\":14,"
	    "\"sha256\":\"%s\"}", sha);
	T_CONTAINS(out, line);
	T_CONTAINS(out, "{\"type\":\"done\",\"ok\":true");
	snprintf(file, sizeof(file), "w/frag.config");
	slurp(file, line, sizeof(line));
	T_EQ_STR(line, "CONFIG_A=y");

	/* again: the clone is there, so "clone" fails and ends the build */
	T_EQ_INT(run_build(doc, out, sizeof(out)), 1);
	T_CONTAINS(out, "{\"type\":\"build_failed\",\"what\":\"clone\",\"index\":-1,\"status\":128}");
	T_CHECK(strstr(out, "\"type\":\"artifact") == NULL);
	T_CONTAINS(out, "{\"type\":\"done\",\"ok\":false");

	/* the patch again on the patched index: it does not apply */
	snprintf(doc, sizeof(doc), "{\"timeout_s\": 60, \"cmds\": [{\"what\": \"patch\", \"index\": 2,"
	    " \"argv\": [\"git\", \"-C\", \"%s/w/src\", \"apply\", \"--index\", \"--\","
	    " \"%s/linux/series/0001-x.patch\"]}, {\"what\": \"never\", \"argv\": [\"touch\","
	    " \"%s/never\"]}]}", dir, dir, dir);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 1);
	T_CONTAINS(out, "\"stream\":\"stderr\",\"line\":\"error: patch failed: mm.c:1\"");
	T_CONTAINS(out, "{\"type\":\"build_failed\",\"what\":\"patch\",\"index\":2,\"status\":1}");
	snprintf(file, sizeof(file), "%s/never", dir);
	T_CHECK(access(file, F_OK) != 0);
}

/* A kept tree's document: clone (once), checkout of ref, tree, config,
 * then "make" (a cp); prep marks the first five, expect is appended
 * as given ("" for none). */
static void
kept_doc(char *doc, size_t sz, const char *ref, const char *expect, int timeout_s)
{
	snprintf(doc, sz, "{\"timeout_s\": %d, \"persist\": {\"dir\": \"%s/kb/t-test\","
	    " \"repo\": \"%s/linux\"}, \"cmds\": ["
	    "{\"what\": \"clone\", \"prep\": true, \"reuse\": true,"
	    " \"unless_exists\": \"%s/kb/t-test/src/.git\", \"argv\": [\"git\", \"clone\","
	    " \"--quiet\", \"--shared\", \"--no-checkout\", \"--\", \"%s/linux\","
	    " \"%s/kb/t-test/src\"]},"
	    "{\"what\": \"ran\", \"prep\": true, \"argv\": [\"touch\", \"%s/kb/t-test/prep-ran\"]},"
	    "{\"what\": \"commit\", \"prep\": true, \"argv\": [\"git\", \"-C\","
	    " \"%s/linux\", \"rev-parse\", \"--quiet\", \"--verify\", \"%s^{commit}\"]},"
	    "{\"what\": \"checkout\", \"prep\": true, \"reuse\": true, \"argv\": [\"git\", \"-C\","
	    " \"%s/kb/t-test/src\", \"checkout\", \"--quiet\", \"--force\", \"--detach\", \"%s\","
	    " \"--\"]},"
	    "{\"what\": \"tree\", \"prep\": true, \"reuse\": true, \"capture\": true,"
	    " \"argv\": [\"git\", \"-C\", \"%s/kb/t-test/src\", \"write-tree\"]},"
	    "{\"what\": \"config\", \"prep\": true, \"argv\": [\"cp\", \"--\","
	    " \"%s/kb/t-test/src/mm.c\", \"%s/kb/t-test/config\"]},"
	    "{\"what\": \"make\", \"argv\": [\"cp\", \"--\", \"%s/kb/t-test/src/mm.c\","
	    " \"%s/kb/t-test/mm.o\"]}]%s%s}", timeout_s, dir, dir, dir, dir, dir, dir, dir, ref,
	    dir, ref, dir, dir, dir, dir, dir, expect[0] ? ", " : "", expect);
}

/* The kept tree: reused (the clone skipped), a stamp left behind or a
 * tree that cannot be reused resets it (said in the log) and the build
 * still ends right; a bad ref does not; expect skips the prep when the
 * tree is as prepped, prepares again when it moved, fails when the prep
 * cannot make it; the lock makes a second build wait (here: time out);
 * a tree whose repository is gone is removed; malformed persist is 2. */
static void
test_persist(void)
{
	static char out[256 * 1024];
	char doc[8192], ex[2048], want[64], l[256], p[256], sha[65], r[256];
	int fd;

	slurp("want", want, sizeof(want));	/* test_prep's patched tree: v1 + y */
	T_EQ_INT(sh("git -C linux rev-parse 'v1^{tree}' >v1tree"), 0);
	slurp("v1tree", want, sizeof(want));
	T_EQ_INT(sh("mkdir -p kb/t-gone kb/t-other && echo /nonexistent/bf-repo >kb/t-gone/repo && "
	    "pwd >kb/t-other/repo"), 0);
	kept_doc(doc, sizeof(doc), "v1", "", 60);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	snprintf(l, sizeof(l), "{\"type\":\"build_value\",\"what\":\"tree\",\"value\":\"%s\"}", want);
	T_CONTAINS(out, l);
	T_CONTAINS(out, "{\"type\":\"done\",\"ok\":true");
	slurp("kb/t-test/repo", r, sizeof(r));
	snprintf(p, sizeof(p), "%s/linux", dir);
	T_EQ_STR(r, p);
	T_CHECK(sh("test -f kb/t-test.lock && test ! -e kb/t-test/.bf-building && "
	    "test -f kb/t-test/mm.o") == 0);
	/* the sibling whose repository is gone was removed; the other stays */
	T_CONTAINS(out, "removing the build tree");
	T_CONTAINS(out, "/kb/t-gone: its repository /nonexistent/bf-repo is gone");
	T_CHECK(sh("test ! -e kb/t-gone && test -d kb/t-other") == 0);

	/* again: the clone is kept (unless_exists), nothing reset */
	T_EQ_INT(sh("touch kb/t-test/marker"), 0);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	T_CHECK(strstr(out, "removing the build tree") == NULL);
	T_CHECK(sh("test -f kb/t-test/marker") == 0);

	/* an earlier build killed midway left its stamp: a clean tree */
	T_EQ_INT(sh("echo 1 >kb/t-test/.bf-building"), 0);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	T_CONTAINS(out, "an earlier build here did not finish");
	T_CONTAINS(out, "building from a clean tree");
	T_CONTAINS(out, l);
	T_CONTAINS(out, "{\"type\":\"done\",\"ok\":true");
	T_CHECK(sh("test ! -e kb/t-test/marker && test ! -e kb/t-test/.bf-building") == 0);

	/* a kept tree git cannot use: checkout fails, the tree is reset, the
	 * build runs again from a fresh clone and ends right */
	T_EQ_INT(sh("touch kb/t-test/marker && rm -f kb/t-test/src/.git/objects/info/alternates"),
	    0);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	T_CONTAINS(out, "checkout failed with status 128 in the kept tree");
	T_CONTAINS(out, "the kept tree cannot be reused: removing the build tree");
	T_CHECK(strstr(out, "build_failed") == NULL);
	T_CONTAINS(out, l);
	T_CONTAINS(out, "{\"type\":\"done\",\"ok\":true");
	T_CHECK(sh("test ! -e kb/t-test/marker && test -f kb/t-test/src/.git/objects/info/"
	    "alternates") == 0);

	/* a ref that is not there is no reason to reset: "commit" is not reuse */
	T_EQ_INT(sh("touch kb/t-test/marker"), 0);
	kept_doc(doc, sizeof(doc), "v9", "", 60);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 1);
	T_CONTAINS(out, "{\"type\":\"build_failed\",\"what\":\"commit\",\"index\":-1,"
	    "\"status\":1}");
	T_CHECK(strstr(out, "clean tree") == NULL);
	T_CHECK(sh("test -f kb/t-test/marker && test ! -e kb/t-test/.bf-building") == 0);

	/* expect: as prepped -> the prep commands are skipped */
	kept_doc(doc, sizeof(doc), "v1", "", 60);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	sha256_hex("int x;\n", 7, sha);
	snprintf(ex, sizeof(ex), "\"expect\": {\"argv\": [\"git\", \"-C\", \"%s/kb/t-test/src\","
	    " \"write-tree\"], \"value\": \"%s\", \"file\": \"%s/kb/t-test/config\","
	    " \"sha256\": \"%s\"}", dir, want, dir, sha);
	kept_doc(doc, sizeof(doc), "v1", ex, 60);
	T_EQ_INT(sh("rm -f kb/t-test/prep-ran kb/t-test/mm.o"), 0);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	T_CONTAINS(out, "the tree and .config are as the prep left them");
	T_CHECK(sh("test ! -e kb/t-test/prep-ran && test -f kb/t-test/mm.o") == 0);
	/* moved by another build since: prepared again, then made */
	T_EQ_INT(sh("git -C kb/t-test/src checkout -q --detach master~1"), 0);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	T_CONTAINS(out, "preparing again: the tree is ");
	T_CHECK(sh("test -f kb/t-test/prep-ran") == 0);
	T_EQ_INT(sh("test \"$(git -C kb/t-test/src rev-parse 'HEAD^{tree}')\" = "
	    "\"$(cat v1tree)\""), 0);
	/* a prep that cannot make the expected tree fails, nothing made */
	T_EQ_INT(sh("rm -f kb/t-test/mm.o"), 0);
	snprintf(ex, sizeof(ex), "\"expect\": {\"argv\": [\"git\", \"-C\", \"%s/kb/t-test/src\","
	    " \"write-tree\"], \"value\": \"%040d\", \"file\": \"%s/kb/t-test/config\","
	    " \"sha256\": \"%s\"}", dir, 0, dir, sha);
	kept_doc(doc, sizeof(doc), "v1", ex, 60);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 1);
	T_CONTAINS(out, "{\"type\":\"build_failed\",\"what\":\"expect\",\"index\":-1,\"status\":"
	    "\"the tree is ");
	T_CHECK(sh("test ! -e kb/t-test/mm.o") == 0);

	/* another build holds the lock: this one waits, here past its deadline */
	snprintf(p, sizeof(p), "%s/kb/t-test.lock", dir);
	if ((fd = open(p, O_RDWR)) >= 0 && flock(fd, LOCK_EX) == 0) {
		/* the holder's stamp: the waiter that gives up leaves it */
		T_EQ_INT(sh("echo holder >kb/t-test/.bf-building"), 0);
		kept_doc(doc, sizeof(doc), "v1", "", 1);
		T_EQ_INT(run_build(doc, out, sizeof(out)), 1);
		T_CONTAINS(out, "{\"type\":\"build_failed\",\"what\":\"tree\",\"index\":-1,"
		    "\"status\":\"timeout\"}");
		T_CHECK(sh("test ! -e kb/t-test/mm.o && grep -q holder kb/t-test/.bf-building") == 0);
		T_EQ_INT(sh("rm -f kb/t-test/.bf-building"), 0);
	} else {
		T_CHECK(0);
	}
	if (fd >= 0)
		close(fd);

	/* an agent killed midway (its link dropped): the make it started runs
	 * on and holds the lock it inherited; the next build waits for it,
	 * then finds the stamp and starts from a clean tree */
	{
		char kd[1024];
		int in[2];
		pid_t pid;
		time_t t0;

		snprintf(kd, sizeof(kd), "{\"timeout_s\": 60, \"persist\": {\"dir\": "
		    "\"%s/kb/t-orph\", \"repo\": \"%s/linux\"}, \"cmds\": [{\"what\": \"make\", "
		    "\"argv\": [\"sleep\", \"3\"]}]}", dir, dir);
		if (pipe(in) == 0 && (pid = fork()) >= 0) {
			if (pid == 0) {
				int dn = open("/dev/null", O_WRONLY);

				dup2(in[0], 0);
				dup2(dn, 1);
				close(in[1]);
				execl(agent, agent, "build", (char *)NULL);
				_exit(127);
			}
			close(in[0]);
			if (write(in[1], kd, strlen(kd)) != (ssize_t)strlen(kd))
				T_CHECK(0);
			close(in[1]);
			usleep(700 * 1000);
			kill(pid, SIGKILL);
			(void)waitpid(pid, NULL, 0);
			t0 = time(NULL);
			snprintf(kd, sizeof(kd), "{\"timeout_s\": 60, \"persist\": {\"dir\": "
			    "\"%s/kb/t-orph\", \"repo\": \"%s/linux\"}, \"cmds\": [{\"argv\": "
			    "[\"true\"]}]}", dir, dir);
			T_EQ_INT(run_build(kd, out, sizeof(out)), 0);
			T_CHECK(time(NULL) - t0 >= 1);
			T_CONTAINS(out, "another build uses the tree");
			T_CONTAINS(out, "an earlier build here did not finish");
		} else {
			T_CHECK(0);
		}
	}

	/* malformed persist: exit 2, nothing made */
	snprintf(doc, sizeof(doc), "{\"timeout_s\": 5, \"persist\": {\"dir\": \"%s/kb/x\", "
	    "\"repo\": \"/r\"}, \"cmds\": [{\"argv\": [\"true\"]}]}", dir);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 2);
	T_CONTAINS(out, "persist needs a dir");
	snprintf(doc, sizeof(doc), "{\"timeout_s\": 5, \"persist\": {\"dir\": \"%s/kb/t-a/../t-b\", "
	    "\"repo\": \"/r\"}, \"cmds\": [{\"argv\": [\"true\"]}]}", dir);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 2);
	T_EQ_INT(run_build("{\"timeout_s\": 5, \"persist\": {\"dir\": \"/t-x\", \"repo\": \"/r\"}, "
	    "\"cmds\": [{\"argv\": [\"true\"]}]}", out, sizeof(out)), 2);
	T_EQ_INT(run_build("{\"timeout_s\": 5, \"persist\": {\"dir\": \"/v/t-x\", \"repo\": \"r\"}, "
	    "\"cmds\": [{\"argv\": [\"true\"]}]}", out, sizeof(out)), 2);
	T_EQ_INT(run_build("{\"timeout_s\": 5, \"persist\": [], \"cmds\": [{\"argv\": [\"true\"]}]}",
	    out, sizeof(out)), 2);
	T_EQ_INT(run_build("{\"timeout_s\": 5, \"cmds\": [{\"argv\": [\"true\"], \"unless_exists\":"
	    " \"a/../b\"}]}", out, sizeof(out)), 2);
	T_CHECK(sh("test ! -e kb/x && test ! -e /t-x") == 0);
}

static void
test_hostile(void)
{
	static char out[64 * 1024];
	char doc[2048], p[160];
	time_t t0;

	/* the deadline kills a command and its children */
	t0 = time(NULL);
	T_EQ_INT(run_build("{\"timeout_s\": 1, \"cmds\": [{\"what\": \"make\", \"argv\": [\"sleep\","
	    " \"30\"]}]}", out, sizeof(out)), 1);
	T_CONTAINS(out, "{\"type\":\"build_failed\",\"what\":\"make\",\"index\":-1,\"status\":"
	    "\"timeout\"}");
	T_CHECK(time(NULL) - t0 < 10);
	/* a write replaces nothing and follows no symlink */
	T_EQ_INT(sh("echo keep >keep && ln -s keep link"), 0);
	snprintf(doc, sizeof(doc), "{\"timeout_s\": 5, \"cmds\": [{\"what\": \"fragments\", "
	    "\"argv\": [\"true\"], \"write\": {\"path\": \"%s/keep\", \"text\": \"x\"}}]}", dir);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 1);
	T_CONTAINS(out, "File exists");
	snprintf(doc, sizeof(doc), "{\"timeout_s\": 5, \"cmds\": [{\"what\": \"fragments\", "
	    "\"argv\": [\"true\"], \"write\": {\"path\": \"%s/link\", \"text\": \"x\"}}]}", dir);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 1);
	snprintf(doc, sizeof(doc), "{\"timeout_s\": 5, \"cmds\": [{\"what\": \"fragments\", "
	    "\"argv\": [\"true\"], \"write\": {\"path\": \"%s/../x\", \"text\": \"x\"}}]}", dir);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 1);
	T_CONTAINS(out, "write: a normal path and a text are required");
	snprintf(p, sizeof(p), "keep");
	{
		char l[32];

		slurp(p, l, sizeof(l));
		T_EQ_STR(l, "keep");
	}
	/* an artifact through a symlink is not sent */
	snprintf(doc, sizeof(doc), "{\"timeout_s\": 5, \"cmds\": [{\"argv\": [\"true\"]}],"
	    " \"artifacts\": [{\"name\": \"image\", \"path\": \"%s/link\"}]}", dir);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	T_CONTAINS(out, "{\"type\":\"artifact_end\",\"name\":\"image\",\"bytes\":0,\"dropped\":");
	T_CHECK(strstr(out, "\"type\":\"artifact\",") == NULL);
	/* over the cap: dropped, said */
	snprintf(doc, sizeof(doc), "{\"timeout_s\": 5, \"cmds\": [{\"argv\": [\"true\"]}],"
	    " \"max_artifact\": 2, \"artifacts\": [{\"name\": \"image\", \"path\": \"%s/keep\"}]}",
	    dir);
	T_EQ_INT(run_build(doc, out, sizeof(out)), 0);
	T_CONTAINS(out, "within the artifact cap");
	/* malformed documents */
	T_EQ_INT(run_build("", out, sizeof(out)), 2);
	T_CONTAINS(out, "\"type\":\"error\"");
	T_EQ_INT(run_build("{\"cmds\": []}", out, sizeof(out)), 2);
	T_EQ_INT(run_build("{\"timeout_s\": 5, \"cmds\": [{\"argv\": [1]}]}", out, sizeof(out)), 2);
	T_EQ_INT(run_build("{\"timeout_s\": 99999999, \"cmds\": [{\"argv\": [\"true\"]}]}", out,
	    sizeof(out)), 2);
	T_EQ_INT(run_build("{\"timeout_s\": 5, \"cmds\": [{\"argv\": [\"true\"]}], \"artifacts\":"
	    " [{\"name\": \"a\", \"path\": \"rel/x\"}]}", out, sizeof(out)), 2);
	/* a command that does not exist */
	T_EQ_INT(run_build("{\"timeout_s\": 5, \"cmds\": [{\"what\": \"x\", \"argv\": "
	    "[\"/nonexistent/bf-cmd\"]}]}", out, sizeof(out)), 1);
	T_CONTAINS(out, "\"status\":127");
}

int
main(void)
{
	char cmd[128];

	if ((agent = getenv("BF_AGENT")) == NULL) {
		fprintf(stderr, "BF_AGENT is not set (run through ctest)\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "/tmp/bf-abuild.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return 1;
	test_prep();
	test_hostile();
	test_persist();
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return t_done();
}
