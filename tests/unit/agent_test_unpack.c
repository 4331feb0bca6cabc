/*
 * agent_test_unpack.c: `benchfleet-agent work unpack` never deletes what it
 * did not create (issue 14: workdir=/etc with a missing tarball removed
 * /etc), and the step's "paths" are checked on the machine: under the
 * root, no symbolic link below it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "step.h"
#include "t.h"

static const char *agent;
static char tmpdir[] = "/tmp/bf-unpack-test.XXXXXX";
static char out[8192];		/* stdout and stderr of the last run */

/* Run the agent's work unpack --tar tar --dir dir; its exit status. */
static int
unpack(const char *tar, const char *dir)
{
	char of[512];
	int fd, status;
	ssize_t n;
	pid_t pid;

	snprintf(of, sizeof(of), "%s/out", tmpdir);
	if ((pid = fork()) == 0) {
		if ((fd = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(agent, agent, "work", "unpack", "--tar", tar, "--dir", dir, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	out[0] = '\0';
	if ((fd = open(of, O_RDONLY)) >= 0) {
		n = read(fd, out, sizeof(out) - 1);
		out[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	T_CHECK(f != NULL);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static int
exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}

static char *
p(const char *rel)
{
	static char bufs[8][512];
	static int k;

	k = (k + 1) % 8;
	snprintf(bufs[k], sizeof(bufs[k]), "%s/%s", tmpdir, rel);
	return bufs[k];
}

/* tar -cJf DIR/t.tar.xz of DIR/src/f */
static void
mktar(void)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "tar -cJf '%s/t.tar.xz' -C '%s/src' f", tmpdir, tmpdir);
	T_EQ_INT(system(cmd), 0);
}

static void
test_unpack(void)
{
	/* a source tree: src/f, packed as t.tar.xz */
	T_EQ_INT(mkdir(p("src"), 0755), 0);
	put(p("src/f"), "payload\n");
	mktar();

	/* the case: a directory we did not make, the tarball missing */
	T_EQ_INT(mkdir(p("etc"), 0755), 0);
	put(p("etc/passwd"), "root:x:0:0\n");
	T_CHECK(unpack(p("missing.tar.xz"), p("etc")) != 0);
	T_CHECK(exists(p("etc/passwd")));
	T_CONTAINS(out, "missing.tar.xz");
	T_CONTAINS(out, "nothing was touched");
	T_CHECK(!exists(p("etc.part")));

	/* ... and with a good tarball: still not ours, still not removed */
	T_CHECK(unpack(p("t.tar.xz"), p("etc")) != 0);
	T_CHECK(exists(p("etc/passwd")));
	T_CONTAINS(out, "was not made by work unpack (no .benchfleet-workdir stamp in it); "
	    "refusing to remove it");
	T_CHECK(!exists(p("etc/f")));

	/* a tarball that is a directory: refused before anything */
	T_CHECK(unpack(p("src"), p("etc")) != 0);
	T_CONTAINS(out, "is not a regular file (nothing was touched)");
	T_CHECK(exists(p("etc/passwd")));

	/* DIR.part is held to the same rule */
	T_EQ_INT(mkdir(p("w.part"), 0755), 0);
	put(p("w.part/keep"), "x");
	T_CHECK(unpack(p("t.tar.xz"), p("w")) != 0);
	T_CHECK(exists(p("w.part/keep")));
	T_CONTAINS(out, "w.part exists and was not made by work unpack");

	/* a symlink as the workdir: neither it nor its target is touched */
	T_EQ_INT(symlink(p("etc"), p("link")), 0);
	T_CHECK(unpack(p("t.tar.xz"), p("link")) != 0);
	T_CONTAINS(out, "is a symbolic link; refusing to touch it");
	T_CHECK(exists(p("link")) && exists(p("etc/passwd")));

	/* a file as the workdir */
	put(p("file"), "x");
	T_CHECK(unpack(p("t.tar.xz"), p("file")) != 0);
	T_CONTAINS(out, "exists and is not a directory");
	T_CHECK(exists(p("file")));

	/* fresh, then cached */
	T_EQ_INT(unpack(p("t.tar.xz"), p("kb/tree")), 0);
	T_CONTAINS(out, "unpacked: fresh");
	T_CHECK(exists(p("kb/tree/f")));
	T_CHECK(exists(p("kb/tree/.benchfleet-workdir")));
	T_CHECK(exists(p("kb/tree/.bf-unpacked")));
	T_CHECK(!exists(p("kb/tree.part")));
	T_EQ_INT(unpack(p("missing.tar.xz"), p("kb/tree")), 0);
	T_CONTAINS(out, "unpacked: cached");

	/* ours but half done (no .bf-unpacked): removed and redone, and a
	 * symlink inside is removed, never followed */
	T_EQ_INT(unlink(p("kb/tree/.bf-unpacked")), 0);
	T_EQ_INT(mkdir(p("kb/tree/sub"), 0755), 0);
	T_EQ_INT(symlink(p("etc"), p("kb/tree/sub/evil")), 0);
	put(p("kb/tree/junk"), "x");
	T_EQ_INT(unpack(p("t.tar.xz"), p("kb/tree")), 0);
	T_CONTAINS(out, "unpacked: fresh");
	T_CHECK(!exists(p("kb/tree/junk")) && !exists(p("kb/tree/sub")));
	T_CHECK(exists(p("etc/passwd")));
	T_CHECK(exists(p("kb/tree/f")));

	/* a stamp someone else wrote with other text does not count */
	T_EQ_INT(unlink(p("kb/tree/.bf-unpacked")), 0);
	put(p("kb/tree/.benchfleet-workdir"), "please delete me\n");
	T_CHECK(unpack(p("t.tar.xz"), p("kb/tree")) != 0);
	T_CHECK(exists(p("kb/tree/f")));

	/* an empty directory is nothing to lose */
	T_EQ_INT(mkdir(p("empty"), 0755), 0);
	T_EQ_INT(unpack(p("t.tar.xz"), p("empty")), 0);
	T_CHECK(exists(p("empty/f")));

	/*
	 * Paths that are not normal never get that far. Every path here is
	 * inside our scratch directory, never a system one: run against an
	 * agent without these checks (the old one ran rm -rf on its --dir),
	 * this test must only ever destroy its own decoys.
	 */
	T_EQ_INT(unpack(p("t.tar.xz"), "relative/dir"), 2);
	T_CONTAINS(out, "is not an absolute path");
	T_EQ_INT(unpack(p("t.tar.xz"), p("src/../etc")), 2);
	T_CONTAINS(out, "has a \".\" or \"..\" component");
	T_EQ_INT(unpack(p("t.tar.xz"), p("etc/")), 2);
	T_CONTAINS(out, "ends in \"/\"");
	T_EQ_INT(unpack(p("t.tar.xz"), p("etc//x")), 2);
	T_CHECK(exists(p("etc/passwd")));
}

/* step_parse of a minimal step with the given "paths" value. */
static int
paths_step(const char *paths, struct bf_diag *d)
{
	char text[2048];
	struct step *st = NULL;
	int r;

	snprintf(text, sizeof(text), "{\"run\": 1, \"argv\": [\"true\"], \"iterations\": 1,"
	    " \"timeout_s\": 5, \"paths\": %s}", paths);
	r = step_parse(text, strlen(text), &st, d);
	step_free(st);
	return r;
}

static void
test_step_paths(void)
{
	char js[1024];
	struct bf_diag d;

	T_EQ_INT(mkdir(p("root"), 0755), 0);
	T_EQ_INT(mkdir(p("root/a"), 0755), 0);
	T_EQ_INT(mkdir(p("outside"), 0755), 0);
	T_EQ_INT(symlink(p("outside"), p("root/ln")), 0);
	/* fine: existing, and not yet existing below */
	snprintf(js, sizeof(js), "[{\"name\": \"w\", \"path\": \"%s\", \"root\": \"%s\"},"
	    " {\"name\": \"v\", \"path\": \"%s\", \"root\": \"%s\"}]", p("root/a"), p("root"),
	    p("root/a/new/deeper"), p("root"));
	T_EQ_INT(paths_step(js, &d), 0);
	/* a symlink below the root, as the path or on the way */
	snprintf(js, sizeof(js), "[{\"name\": \"workdir\", \"path\": \"%s\", \"root\": \"%s\"}]",
	    p("root/ln/x"), p("root"));
	T_EQ_INT(paths_step(js, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "paths[0]: workdir: ");
	T_CONTAINS(d.msg, "root/ln is a symbolic link");
	snprintf(js, sizeof(js), "[{\"name\": \"workdir\", \"path\": \"%s\", \"root\": \"%s\"}]",
	    p("root/ln"), p("root"));
	T_EQ_INT(paths_step(js, &d), BF_ERR_INVALID);
	/* outside the root, or not normal */
	snprintf(js, sizeof(js), "[{\"name\": \"workdir\", \"path\": \"/etc\", \"root\": \"%s\"}]",
	    p("root"));
	T_EQ_INT(paths_step(js, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "workdir: \"/etc\" is not under");
	snprintf(js, sizeof(js), "[{\"name\": \"workdir\", \"path\": \"%s/../../etc\", \"root\":"
	    " \"%s\"}]", p("root"), p("root"));
	T_EQ_INT(paths_step(js, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "has a \".\" or \"..\" component");
	/* a root anyone may write is no root */
	T_EQ_INT(chmod(p("root"), 0777), 0);
	snprintf(js, sizeof(js), "[{\"name\": \"w\", \"path\": \"%s\", \"root\": \"%s\"}]",
	    p("root/a"), p("root"));
	T_EQ_INT(paths_step(js, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "writable by no one else");
	T_EQ_INT(chmod(p("root"), 0755), 0);
	/* a root that is a symlink */
	T_EQ_INT(symlink(p("root"), p("rootln")), 0);
	snprintf(js, sizeof(js), "[{\"name\": \"w\", \"path\": \"%s/a\", \"root\": \"%s\"}]",
	    p("rootln"), p("rootln"));
	T_EQ_INT(paths_step(js, &d), BF_ERR_INVALID);
	/* malformed entries */
	T_EQ_INT(paths_step("[{\"name\": \"w\", \"path\": \"/a/b\"}]", &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "paths[0]: needs name, path and root");
	T_EQ_INT(paths_step("[{\"name\": \"w\", \"path\": \"/a/b\", \"root\": \"/a\", \"x\": 1}]",
	    &d), BF_ERR_INVALID);
	T_EQ_INT(paths_step("{}", &d), BF_ERR_INVALID);
}

int
main(void)
{
	char cmd[600];

	agent = getenv("BF_AGENT");
	if (agent == NULL) {
		fprintf(stderr, "BF_AGENT must name the built benchfleet-agent\n");
		return 1;
	}
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	/* mkdtemp's 0700 would do; 0755 is what a real root looks like */
	chmod(tmpdir, 0755);
	test_unpack();
	test_step_paths();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return t_done();
}
