/*
 * agent_test_cmdcache.c: the cached `cc --version` answer. Keyed on the
 * compiler's identity: a new answer when the compiler is rewritten in
 * place, replaced by a rename, given back its old mtime, or when the
 * /usr/bin/cc-like link points elsewhere; hostile or damaged cache files
 * are a miss; and the snapshot runs the compiler once, then answers from
 * the cache until the compiler changes (a real script, really run).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "caps.h"
#include "cmdcache.h"
#include "err.h"
#include "snapshot.h"
#include "t.h"
#include "agent_fixture.h"

static char root[64] = "/tmp/bf-cmdcache-XXXXXX";
static char cache[PATH_MAX];
static int runs;

#define mk(path, text) fix_mk(root, (path), (text))

/* root + rel as an absolute path (two static buffers, used in turn). */
static const char *
at(const char *rel)
{
	static char p[2][PATH_MAX];
	static int k;

	k = !k;
	snprintf(p[k], sizeof(p[k]), "%s%s", root, rel);
	return p[k];
}

/* get's answer for bin's current key, or "(miss)". */
static const char *
get(const char *bin)
{
	static char val[CMDCACHE_MAX_VALUE + 1];
	char key[CMDCACHE_MAX_KEY];

	if (cmdcache_key(bin, key, sizeof(key)) != 0 ||
	    cmdcache_get(cache, key, val, sizeof(val)) != 0)
		return "(miss)";
	return val;
}

static void
put(const char *bin, const char *val)
{
	char key[CMDCACHE_MAX_KEY];

	T_EQ_INT(cmdcache_key(bin, key, sizeof(key)), 0);
	cmdcache_put(cache, key, val);
}

/* The cache file replaced by the current key of bin and then text. */
static void
plant(const char *bin, const char *text)
{
	char key[CMDCACHE_MAX_KEY] = "";
	FILE *f;

	if (bin != NULL)
		T_EQ_INT(cmdcache_key(bin, key, sizeof(key)), 0);
	unlink(cache);
	if ((f = fopen(cache, "w")) == NULL) {
		t_fails++;
		return;
	}
	fputs(key, f);
	fputs(text, f);
	fclose(f);
}

static void
test_key(void)
{
	char cc[PATH_MAX], big[CMDCACHE_MAX_VALUE + 64];
	struct timespec ts[2];
	struct stat sb;

	mk("/bin/gcc-1", "compiler one\n");
	mk("/bin/gcc-2", "compiler two\n");
	snprintf(cc, sizeof(cc), "%s", at("/bin/cc"));
	T_EQ_INT(symlink("gcc-1", cc), 0);
	T_EQ_STR(get(cc), "(miss)");			/* no file yet */
	put(cc, "cc (One) 1.0");
	T_EQ_STR(get(cc), "cc (One) 1.0");
	T_EQ_STR(get(at("/bin/gcc-1")), "cc (One) 1.0");	/* the resolved binary */

	/* the alternative switched: another binary, a miss */
	T_EQ_INT(unlink(cc), 0);
	T_EQ_INT(symlink("gcc-2", cc), 0);
	T_EQ_STR(get(cc), "(miss)");
	put(cc, "cc (Two) 2.0");
	T_EQ_STR(get(cc), "cc (Two) 2.0");

	/* rewritten in place, same size, its mtime set back: ctime moved */
	T_EQ_INT(stat(at("/bin/gcc-2"), &sb), 0);
	sleep(1);	/* coarse-timestamp file systems */
	mk("/bin/gcc-2", "compiler TWO\n");
	ts[0] = sb.st_atim;
	ts[1] = sb.st_mtim;
	T_EQ_INT(utimensat(AT_FDCWD, at("/bin/gcc-2"), ts, 0), 0);
	T_EQ_STR(get(cc), "(miss)");
	put(cc, "cc (Two) 2.1");
	T_EQ_STR(get(cc), "cc (Two) 2.1");
	/* replaced by a rename (as dpkg installs): another inode */
	mk("/bin/gcc-2.new", "compiler TWO\n");
	T_EQ_INT(rename(at("/bin/gcc-2.new"), at("/bin/gcc-2")), 0);
	T_EQ_STR(get(cc), "(miss)");
	put(cc, "cc (Two) 2.2");
	/* not a regular file, or gone: never keyed */
	T_EQ_STR(get(at("/bin")), "(miss)");
	T_EQ_STR(get(at("/bin/none")), "(miss)");

	/* what is never stored: two lines, or over the cap */
	put(cc, "cc (Two) 2.2\nsecond line");
	T_EQ_STR(get(cc), "cc (Two) 2.2");
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put(cc, big);
	T_EQ_STR(get(cc), "cc (Two) 2.2");

	/* hostile or damaged files are a miss, never a wrong answer */
	plant(NULL, "garbage\n");
	T_EQ_STR(get(cc), "(miss)");
	plant(cc, "planted\n");
	T_EQ_STR(get(cc), "planted");			/* the planted key is right */
	plant(cc, "planted");				/* truncated: no newline */
	T_EQ_STR(get(cc), "(miss)");
	plant(cc, "one\ntwo\n");
	T_EQ_STR(get(cc), "(miss)");
	plant(cc, "");
	T_EQ_STR(get(cc), "(miss)");
	big[sizeof(big) - 2] = '\n';
	plant(cc, big);					/* over the cap */
	T_EQ_STR(get(cc), "(miss)");
	/* a symbolic link in the cache's place is neither read nor followed */
	plant(cc, "via link\n");
	T_EQ_INT(rename(cache, at("/target")), 0);
	T_EQ_INT(symlink(at("/target"), cache), 0);
	T_EQ_STR(get(cc), "(miss)");
	put(cc, "cc (Two) 2.2");
	T_EQ_INT(lstat(cache, &sb), 0);
	T_CHECK(S_ISREG(sb.st_mode));
	T_EQ_STR(get(cc), "cc (Two) 2.2");
	/* no file named: nothing read, nothing written */
	T_CHECK(cmdcache_get(NULL, "k\n", big, sizeof(big)) == BF_ERR_NOTFOUND);
	cmdcache_put(NULL, "k\n", "v");
	unlink(cache);
}

/* snapshot_opts.run: really runs argv (a script), counting the runs. */
static int
real_run(void *arg, char *const *argv, struct buf *out)
{
	char chunk[4096];
	int p[2], st = -1;
	ssize_t n;
	pid_t pid;

	(void)arg;
	runs++;
	if (pipe(p) != 0 || (pid = fork()) < 0)
		return BF_ERR_SYS;
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], chunk, sizeof(chunk))) > 0)
		if (buf_append(out, chunk, (size_t)n) != 0)
			break;
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : BF_ERR_STATE;
}

/* The value of "sw.cc" in a snapshot, or "(absent)". */
static const char *
sw_cc(const struct buf *b)
{
	static char v[256];
	const char *p = b->data != NULL ? strstr(b->data, "\"sw.cc\":") : NULL;
	const char *e;

	if (p == NULL)
		return "(absent)";
	p += 8;
	if (strncmp(p, "null", 4) == 0)
		return "null";
	if (*p++ != '"' || (e = strchr(p, '"')) == NULL)
		return "(bad)";
	snprintf(v, sizeof(v), "%.*s", (int)(e - p), p);
	return v;
}

static void
snap(struct snapshot_opts *o, struct buf *b)
{
	buf_reset(b);
	T_EQ_INT(snapshot_build(o, b), 0);
}

static void
test_snapshot(void)
{
	struct snapshot_opts o = { .root = root, .run = real_run };
	struct buf plain, cold, warm;
	char cc[PATH_MAX];

	snprintf(cc, sizeof(cc), "%s", at("/usr/bin/fakecc"));
	mk("/usr/bin/fakecc", "#!/bin/sh\necho 'fakecc (Test) 1.0'\necho 'Copyright'\n");
	T_EQ_INT(chmod(cc, 0755), 0);
	o.cc = cc;
	buf_init(&plain, BF_MAX_SNAPSHOT + 64);
	buf_init(&cold, BF_MAX_SNAPSHOT + 64);
	buf_init(&warm, BF_MAX_SNAPSHOT + 64);
	/* without a cache: run every time */
	snap(&o, &plain);
	snap(&o, &plain);
	T_EQ_INT(runs, 2);
	T_EQ_STR(sw_cc(&plain), "fakecc (Test) 1.0");
	/* with one: run once, then the same bytes from the cache */
	o.cc_cache = cache;
	snap(&o, &cold);
	T_EQ_INT(runs, 3);
	snap(&o, &warm);
	snap(&o, &warm);
	T_EQ_INT(runs, 3);
	T_CHECK(plain.len == cold.len && cold.len == warm.len &&
	    memcmp(plain.data, warm.data, warm.len) == 0);
	/* the compiler upgraded: asked again, the new answer kept */
	mk("/usr/bin/fakecc.new", "#!/bin/sh\necho 'fakecc (Test) 2.0'\n");
	T_EQ_INT(chmod(at("/usr/bin/fakecc.new"), 0755), 0);
	T_EQ_INT(rename(at("/usr/bin/fakecc.new"), cc), 0);
	snap(&o, &warm);
	T_EQ_INT(runs, 4);
	T_EQ_STR(sw_cc(&warm), "fakecc (Test) 2.0");
	snap(&o, &warm);
	T_EQ_INT(runs, 4);
	T_EQ_STR(sw_cc(&warm), "fakecc (Test) 2.0");
	/* a compiler that fails is not cached: null, and asked every time */
	mk("/usr/bin/fakecc.new", "#!/bin/sh\nexit 1\n");
	T_EQ_INT(chmod(at("/usr/bin/fakecc.new"), 0755), 0);
	T_EQ_INT(rename(at("/usr/bin/fakecc.new"), cc), 0);
	snap(&o, &warm);
	snap(&o, &warm);
	T_EQ_INT(runs, 6);
	T_EQ_STR(sw_cc(&warm), "null");
	buf_free(&plain);
	buf_free(&cold);
	buf_free(&warm);
}

int
main(void)
{
	char cmd[128];

	if (mkdtemp(root) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(cache, sizeof(cache), "%s/%s", root, CMDCACHE_CC_NAME);
	test_key();
	test_snapshot();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (strncmp(root, "/tmp/bf-cmdcache-", 17) == 0 && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return t_done();
}
