/*
 * agent_test_workdir.c: the step's "packages" and "files" (step-files.c),
 * the private workdir (workdir.c: files written, results read without
 * following links, everything removed, a planted symbolic link never
 * followed) and the package checks (package.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "metric.h"
#include "package.h"
#include "step.h"
#include "t.h"
#include "workdir.h"

#define OKV "\"run\":7,\"iterations\":1,\"timeout_s\":60,\"argv\":[\"hpcc\"]"
#define FM ",\"metrics\":[{\"name\":\"g\",\"source\":\"file\",\"file\":\"out.txt\",\"regex\":\"g=([0-9.,]+)\"}]"

static const struct {
	const char *doc;
	const char *msg;	/* NULL: accepted */
} cases[] = {
	{ "{" OKV ",\"packages\":[{\"debian\":\"hpcc\",\"binary\":\"hpcc\"}],"
	  "\"files\":[{\"name\":\"in.txt\",\"text\":\"a\\nb\\n\"}]" FM "}", NULL },
	{ "{" OKV ",\"files\":[]" FM "}", NULL },
	{ "{" OKV ",\"packages\":[]}", "packages: expected an array of 1 to 8" },
	{ "{" OKV ",\"packages\":{\"debian\":\"x\"}}", "packages: expected an array" },
	{ "{" OKV ",\"packages\":[{\"debian\":\"hpcc\"}]}", "packages[0]: binary: missing" },
	{ "{" OKV ",\"packages\":[{\"debian\":\"hpcc\",\"binary\":\"/bin/sh\"}]}",
	  "packages[0]: binary: \"/bin/sh\" is not a plain name" },
	{ "{" OKV ",\"packages\":[{\"debian\":\"hpcc\",\"binary\":\"x\",\"v\":1}]}",
	  "packages[0]: unknown field \"v\"" },
	{ "{" OKV ",\"files\":[{\"name\":\"../x\",\"text\":\"\"}]}",
	  "files[0]: name: \"../x\" is not a plain name" },
	{ "{" OKV ",\"files\":[{\"name\":\"..\",\"text\":\"\"}]}", "files[0]: name: \"..\"" },
	{ "{" OKV ",\"files\":[{\"name\":\"a\",\"text\":\"\"},{\"name\":\"a\",\"text\":\"\"}]}",
	  "files[1]: \"a\" is files[0] too" },
	{ "{" OKV ",\"files\":[{\"name\":\"a\",\"text\":1}]}", "files[0]: text: expected a string" },
	{ "{" OKV ",\"files\":[{\"name\":\"a\"}]}", "files[0]: text: expected a string" },
	{ "{" OKV ",\"files\":[],\"cwd\":\"/tmp\"}", "files: a step with files runs in its own" },
	{ "{" OKV FM "}", "metrics[0].file: source file needs a workdir" },
	{ "{" OKV ",\"files\":[],\"metrics\":[{\"name\":\"g\",\"source\":\"file\",\"regex\":\"(1)\"}]}",
	  "metrics[0].file: missing" },
	{ "{" OKV ",\"metrics\":[{\"name\":\"g\",\"source\":\"stdout\",\"file\":\"x\",\"regex\":\"(1)\"}]}",
	  "metrics[0].file: only for source file" },
	{ "{" OKV ",\"files\":[],\"metrics\":[{\"name\":\"g\",\"source\":\"file\",\"file\":\"a/b\","
	  "\"regex\":\"(1)\"}]}", "metrics[0].file: \"a/b\" is not a file name" },
};

static void
test_parse(void)
{
	struct step *st;
	struct bf_diag d;
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		st = NULL;
		r = step_parse(cases[i].doc, strlen(cases[i].doc), &st, &d);
		if (cases[i].msg == NULL) {
			T_EQ_INT(r, 0);
			if (r != 0)
				fprintf(stderr, "case %zu: %s\n", i, d.msg);
		} else {
			T_CHECK(r != 0 && st == NULL);
			T_CONTAINS(d.msg, cases[i].msg);
		}
		step_free(st);
	}
}

/* A file of the workdir, for the test. */
static void
put(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX + 128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	T_CHECK((f = fopen(p, "w")) != NULL);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static void
test_workdir(void)
{
	static const char doc[] = "{" OKV ",\"files\":[{\"name\":\"in.txt\",\"text\":\"N 500\\n\"},"
	    "{\"name\":\"empty\",\"text\":\"\"}]" FM "}";
	char base[] = "/tmp/bf-wd-test.XXXXXX", p[PATH_MAX + 64], outside[PATH_MAX], wd[PATH_MAX];
	struct step *st = NULL;
	struct bf_diag d;
	struct stat sb;
	struct buf b;
	double v;

	T_CHECK(mkdtemp(base) != NULL);
	T_EQ_INT(step_parse(doc, strlen(doc), &st, &d), 0);
	if (st == NULL)
		return;
	T_EQ_INT(workdir_make(st, base, &d), 0);
	T_CHECK(st->cwd != NULL && strncmp(st->cwd, base, strlen(base)) == 0);
	if (st->cwd == NULL)
		goto out;
	snprintf(wd, sizeof(wd), "%s", st->cwd);
	T_CHECK(stat(wd, &sb) == 0 && S_ISDIR(sb.st_mode) && (sb.st_mode & 0777) == 0700);
	buf_init(&b, 1024);
	T_EQ_INT(workdir_read(st, "in.txt", &b), 0);
	T_CHECK(b.len == 6 && memcmp(b.data, "N 500\n", 6) == 0);
	buf_reset(&b);
	T_EQ_INT(workdir_read(st, "empty", &b), 0);
	T_EQ_INT(b.len, 0);
	/* the program's result, read and parsed by the step's metric rule */
	put(wd, "out.txt", "x\ng=1,234.5\n");
	buf_reset(&b);
	T_EQ_INT(workdir_read(st, "out.txt", &b), 0);
	T_EQ_INT(metric_extract(&st->metrics[0], b.data, b.len, &v), 0);
	T_CHECK(v == 1234.5);
	/* removed before the next iteration: a stale result is never read */
	workdir_unlink(st, "out.txt");
	buf_reset(&b);
	T_EQ_INT(workdir_read(st, "out.txt", &b), BF_ERR_NOTFOUND);
	/* a result that is a link out of the workdir is not followed */
	snprintf(outside, sizeof(outside), "%s/outside", base);
	put(base, "outside", "g=9\n");
	snprintf(p, sizeof(p), "%s/out.txt", wd);
	T_EQ_INT(symlink(outside, p), 0);
	T_EQ_INT(workdir_read(st, "out.txt", &b), BF_ERR_INVALID);
	/* nor when removing: a link to a directory, and nested directories */
	snprintf(p, sizeof(p), "%s/linkdir", wd);
	T_EQ_INT(symlink(base, p), 0);
	snprintf(p, sizeof(p), "%s/clients", wd);
	T_EQ_INT(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/clients/client1", wd);
	T_EQ_INT(mkdir(p, 0755), 0);
	put(p, "f1", "x");
	put(p, "f2", "y");
	buf_free(&b);
	T_EQ_INT(workdir_remove(st), 0);
	T_CHECK(stat(wd, &sb) != 0 && errno == ENOENT);
	T_CHECK(stat(outside, &sb) == 0);
	/* a second removal finds nothing to do */
	T_EQ_INT(workdir_remove(st), 0);
out:
	step_free(st);
	unlink(outside);
	T_EQ_INT(rmdir(base), 0);
}

/* No files field: no workdir, cwd untouched. */
static void
test_none(void)
{
	static const char doc[] = "{" OKV "}";
	struct step *st = NULL;
	struct bf_diag d;

	T_EQ_INT(step_parse(doc, strlen(doc), &st, &d), 0);
	if (st == NULL)
		return;
	T_EQ_INT(workdir_make(st, "/nonexistent", &d), 0);
	T_CHECK(st->cwd == NULL);
	T_EQ_INT(workdir_remove(st), 0);
	step_free(st);
	/* a base that is not there: refused, naming the field */
	T_EQ_INT(step_parse("{" OKV ",\"files\":[]}", strlen("{" OKV ",\"files\":[]}"), &st, &d), 0);
	if (st == NULL)
		return;
	T_EQ_INT(workdir_make(st, "/nonexistent/dir", &d), BF_ERR_SYS);
	T_EQ_STR(d.field, "files");
	T_CONTAINS(d.msg, "cannot make a workdir in /nonexistent/dir");
	step_free(st);
}

static void
test_packages(void)
{
	char dir[] = "/tmp/bf-pkg-test.XXXXXX", p[PATH_MAX], found[PATH_MAX], path[2 * PATH_MAX];
	char doc[512];
	struct step *st = NULL;
	struct bf_diag d;
	const char *old = getenv("PATH");
	char *saved = old != NULL ? strdup(old) : NULL;

	T_CHECK(mkdtemp(dir) != NULL);
	put(dir, "tool", "#!/bin/sh\n");
	put(dir, "plain", "data\n");
	snprintf(p, sizeof(p), "%s/tool", dir);
	T_EQ_INT(chmod(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub", dir);
	T_EQ_INT(mkdir(p, 0755), 0);
	/* PATH order, relative entries skipped, not executable or a directory: not found */
	snprintf(path, sizeof(path), "sub:/nonexistent::%s", dir);
	T_EQ_INT(package_which("tool", path, found, sizeof(found)), 0);
	snprintf(p, sizeof(p), "%s/tool", dir);
	T_EQ_STR(found, p);
	T_EQ_INT(package_which("plain", path, found, sizeof(found)), BF_ERR_NOTFOUND);
	T_EQ_INT(package_which("sub", path, found, sizeof(found)), BF_ERR_NOTFOUND);
	T_EQ_INT(package_which("../tool", path, found, sizeof(found)), BF_ERR_NOTFOUND);
	T_EQ_INT(package_which("sh", NULL, found, sizeof(found)), 0);

	setenv("PATH", path, 1);
	snprintf(doc, sizeof(doc), "{" OKV ",\"packages\":[{\"debian\":\"t\",\"binary\":\"tool\"},"
	    "{\"debian\":\"dbench\",\"binary\":\"tbench_nope\"}]}");
	T_EQ_INT(step_parse(doc, strlen(doc), &st, &d), 0);
	if (st != NULL) {
		T_EQ_INT(package_check(st, &d), BF_ERR_NOTFOUND);
		T_EQ_STR(d.field, "packages[1].binary");
		T_CONTAINS(d.msg, "\"tbench_nope\" is not on PATH (sub:/nonexistent::");
		T_CONTAINS(d.msg, "install the Debian package dbench");
		st->npackages = 1;
		T_EQ_INT(package_check(st, &d), 0);
		st->npackages = 2;
		step_free(st);
	}
	/* an absolute argv[0]: a program the lab installs, checked up front */
	snprintf(doc, sizeof(doc), "{\"run\":1,\"iterations\":1,\"timeout_s\":9,"
	    "\"argv\":[\"%s/plain\"]}", dir);
	st = NULL;
	T_EQ_INT(step_parse(doc, strlen(doc), &st, &d), 0);
	if (st != NULL) {
		T_EQ_INT(package_check(st, &d), BF_ERR_NOTFOUND);
		T_EQ_STR(d.field, "argv[0]");
		T_CONTAINS(d.msg, "plain\" is not an executable file on this machine");
		free(st->argv[0]);
		st->argv[0] = strdup("/opt/no/XSBench");
		T_EQ_INT(package_check(st, &d), BF_ERR_NOTFOUND);
		T_CONTAINS(d.msg, "\"/opt/no/XSBench\" is not an executable file on this machine "
		    "(No such file or directory)");
		free(st->argv[0]);
		snprintf(p, sizeof(p), "%s/tool", dir);
		st->argv[0] = strdup(p);
		T_EQ_INT(package_check(st, &d), 0);
		step_free(st);
	}
	if (saved != NULL)
		setenv("PATH", saved, 1);
	free(saved);
	snprintf(p, sizeof(p), "%s/tool", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/plain", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sub", dir);
	rmdir(p);
	T_EQ_INT(rmdir(dir), 0);
}

int
main(void)
{
	test_parse();
	test_workdir();
	test_none();
	test_packages();
	return t_done();
}
