/*
 * agent_test_dpkgcache.c: the dpkg owner cache on a fake /var/lib/dpkg in
 * a mktemp directory: hit, miss, replace, "no owner", invalidation when
 * dpkg's database changes, the entry cap, hostile cache files (garbage,
 * bad lines, a symbolic link, oversized), refused paths, and the snapshot
 * answering the same with the cache as without, from the cache when warm.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "caps.h"
#include "dpkgcache.h"
#include "err.h"
#include "snapshot.h"
#include "t.h"
#include "agent_fixture.h"

static char root[64] = "/tmp/bf-dpkgcache-XXXXXX";
static char cache[PATH_MAX];

#define mk(path, text) fix_mk(root, (path), (text))

/* get's answer as a string: the package, "(none)" or "(miss)". */
static char ver[DPKGCACHE_MAX_VER];

static const char *
get(const char *path)
{
	static char pkg[DPKGCACHE_MAX_PKG];

	if (dpkgcache_get(cache, root, path, pkg, sizeof(pkg), ver, sizeof(ver)) != 0)
		return "(miss)";
	return pkg[0] != '\0' ? pkg : "(none)";
}

/* Replace the cache file with text (the key line of the current database
 * first when with_key). */
static void
plant(int with_key, const char *text)
{
	char key[1024] = "";
	FILE *f;

	if (with_key) {
		/* the key as the cache writes it: take it from a fresh file */
		unlink(cache);
		dpkgcache_put(cache, root, "/k", "", "");
		if ((f = fopen(cache, "r")) != NULL) {
			if (fgets(key, sizeof(key), f) == NULL)
				key[0] = '\0';
			fclose(f);
		}
		T_CHECK(strncmp(key, "benchfleet-dpkg-owner 2 ", 24) == 0);
	}
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
test_basic(void)
{
	char big[DPKGCACHE_MAX_FILE + 100];
	size_t i;

	T_EQ_STR(get("/usr/bin/true"), "(miss)");	/* no file yet */
	dpkgcache_put(cache, root, "/usr/bin/true", "coreutils", "");
	dpkgcache_put(cache, root, "/opt/x/bin/tool", "", "");
	dpkgcache_put(cache, root, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc6:amd64",
	    "2.36-9+deb12u1");
	T_EQ_STR(get("/usr/bin/true"), "coreutils");
	T_EQ_STR(get("/opt/x/bin/tool"), "(none)");
	T_EQ_STR(get("/usr/lib/x86_64-linux-gnu/libc.so.6"), "libc6:amd64");
	T_EQ_STR(ver, "2.36-9+deb12u1");
	T_EQ_STR(get("/usr/bin/tru"), "(miss)");	/* a prefix is not a match */
	T_EQ_STR(get("/usr/bin/truex"), "(miss)");
	/* replaced, not doubled */
	dpkgcache_put(cache, root, "/usr/bin/true", "coreutils-from-uutils", "");
	T_EQ_STR(get("/usr/bin/true"), "coreutils-from-uutils");
	T_EQ_STR(get("/opt/x/bin/tool"), "(none)");

	/* what is never stored: relative, tab, newline; a hostile package */
	dpkgcache_put(cache, root, "usr/bin/rel", "x", "");
	dpkgcache_put(cache, root, "/usr/bin/a\tb", "x", "");
	dpkgcache_put(cache, root, "/usr/bin/a\nb", "x", "");
	dpkgcache_put(cache, root, "/usr/bin/evil", "x\n/usr/bin/true\tpwned", "");
	dpkgcache_put(cache, root, "/usr/bin/evil2", "Upper Case", "");
	dpkgcache_put(cache, root, "/usr/bin/evil3", "x", "1.0\n/usr/bin/true\tpwned\t1");
	dpkgcache_put(cache, root, "/usr/bin/evil4", "x", "1 0");
	T_EQ_STR(get("usr/bin/rel"), "(miss)");
	T_EQ_STR(get("/usr/bin/a\tb"), "(miss)");
	T_EQ_STR(get("/usr/bin/evil"), "(miss)");
	T_EQ_STR(get("/usr/bin/evil2"), "(miss)");
	T_EQ_STR(get("/usr/bin/evil3"), "(miss)");
	T_EQ_STR(get("/usr/bin/evil4"), "(miss)");
	T_EQ_STR(get("/usr/bin/true"), "coreutils-from-uutils");

	/* dpkg's database changed (an install rewrote status): all stale */
	mk("/var/lib/dpkg/status", "Package: coreutils\nVersion: 9.2\n\n");
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	T_EQ_STR(get("/opt/x/bin/tool"), "(miss)");
	dpkgcache_put(cache, root, "/usr/bin/true", "coreutils", "");
	T_EQ_STR(get("/usr/bin/true"), "coreutils");
	T_EQ_STR(get("/opt/x/bin/tool"), "(miss)");	/* restarted, not kept */
	/* a .list added or removed changes info/'s mtime: stale too */
	sleep(1);	/* coarse-timestamp file systems */
	mk("/var/lib/dpkg/info/new.list", "/.\n/usr/bin/new\n");
	T_EQ_STR(get("/usr/bin/true"), "(miss)");

	/* the entry cap: the file restarts rather than grows */
	for (i = 0; i < DPKGCACHE_MAX_ENTRIES; i++) {
		char p[64];

		snprintf(p, sizeof(p), "/usr/bin/p%zu", i);
		dpkgcache_put(cache, root, p, "pkg", "");
	}
	T_EQ_STR(get("/usr/bin/p0"), "pkg");
	T_EQ_STR(get("/usr/bin/p255"), "pkg");
	dpkgcache_put(cache, root, "/usr/bin/one-more", "pkg2", "");
	T_EQ_STR(get("/usr/bin/one-more"), "pkg2");
	T_EQ_STR(get("/usr/bin/p0"), "(miss)");

	/* hostile or damaged files are a miss, never a wrong answer */
	plant(0, "garbage\n");
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	plant(1, "/usr/bin/true\tcoreutils\t9.1-1\n");
	T_EQ_STR(get("/usr/bin/true"), "coreutils");	/* the planted key is right */
	T_EQ_STR(ver, "9.1-1");
	plant(1, "/usr/bin/true\tcoreutils\n");	/* version 1's line: no version */
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	plant(1, "/usr/bin/true\tcoreutils\t9.1 1\n");
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	plant(1, "/usr/bin/true\tcoreutils\t9.1-1\tmore\n");
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	plant(1, "/usr/bin/true\tcoreutils\t9.1-1\nno tab here\n");
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	plant(1, "/usr/bin/true\tcore utils\t9.1-1\n");
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	plant(1, "/usr/bin/true\tcoreutils\t9.1-1");	/* truncated: no newline */
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	plant(1, "relative\tcoreutils\t9.1-1\n");
	T_EQ_STR(get("relative"), "(miss)");
	/* a planted file naming a path twice: a put replaces both lines
	 * (found by fuzz_dpkgcache: the second survived and the first won) */
	plant(1, "/usr/bin/true\told\t1\n/opt/t\t\t\n/usr/bin/true\tolder\t2\n");
	dpkgcache_put(cache, root, "/usr/bin/true", "coreutils", "9.1-1");
	T_EQ_STR(get("/usr/bin/true"), "coreutils");
	T_EQ_STR(ver, "9.1-1");
	T_EQ_STR(get("/opt/t"), "(none)");
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 3] = '\t';
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	plant(1, big);					/* over DPKGCACHE_MAX_FILE */
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	/* and a miss is repaired by the next put */
	dpkgcache_put(cache, root, "/usr/bin/true", "coreutils", "");
	T_EQ_STR(get("/usr/bin/true"), "coreutils");
}

/* A symbolic link in the cache's place is neither read nor written through. */
static void
test_symlink(void)
{
	char target[PATH_MAX + 16];
	struct stat sb;

	snprintf(target, sizeof(target), "%s/target", root);
	plant(1, "/usr/bin/true\tcoreutils\t9.1-1\n");
	T_EQ_INT(rename(cache, target), 0);
	T_EQ_INT(symlink(target, cache), 0);
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	dpkgcache_put(cache, root, "/usr/bin/sh", "dash", "");
	/* the put replaced the link by a file; the target is untouched */
	T_EQ_INT(lstat(cache, &sb), 0);
	T_CHECK(S_ISREG(sb.st_mode));
	T_EQ_INT(stat(target, &sb), 0);
	T_EQ_STR(get("/usr/bin/sh"), "dash");
	T_EQ_STR(get("/usr/bin/true"), "(miss)");
	T_CHECK(dpkgcache_get(NULL, root, "/usr/bin/sh", target, sizeof(target), ver,
	    sizeof(ver)) ==
	    BF_ERR_NOTFOUND);
	dpkgcache_put(NULL, root, "/usr/bin/sh", "dash", "");	/* no file: nothing */
}

/* The snapshot says the same with and without the cache, cold and warm;
 * warm, the answer comes from the cache (a .list edited behind dpkg's back
 * is not read again). */
static void
test_snapshot(void)
{
	const char *bins[] = { "/bin/sh", NULL };
	struct snapshot_opts o = { .root = root, .bins = bins };
	struct buf plain, cold, warm, stale;
	char real[PATH_MAX], lp[PATH_MAX + 64], want[PATH_MAX + 64];
	const char *b;

	T_CHECK(realpath("/bin/sh", real) != NULL);
	b = strrchr(real, '/') + 1;
	/* the owner of /bin/sh is found only by the full scan: its .list is
	 * not named after it */
	snprintf(want, sizeof(want), "/.\n/usr\n%s\n", real);
	mk("/var/lib/dpkg/info/shellpkg.list", want);
	mk("/var/lib/dpkg/status", "Package: shellpkg\nStatus: install ok installed\n"
	    "Version: 3.1\n\n");
	snprintf(lp, sizeof(lp), "%s/var/lib/dpkg/info/%s.list", root, b);
	unlink(lp);
	unlink(cache);
	buf_init(&plain, BF_MAX_SNAPSHOT + 64);
	buf_init(&cold, BF_MAX_SNAPSHOT + 64);
	buf_init(&warm, BF_MAX_SNAPSHOT + 64);
	buf_init(&stale, BF_MAX_SNAPSHOT + 64);
	T_EQ_INT(snapshot_build(&o, &plain), 0);
	snprintf(want, sizeof(want), "\"bin./bin/sh.package\":\"shellpkg 3.1\"");
	T_CHECK(plain.data != NULL && strstr(plain.data, want) != NULL);
	o.dpkg_cache = cache;
	T_EQ_INT(snapshot_build(&o, &cold), 0);
	T_EQ_STR(get(real), "shellpkg");
	T_EQ_STR(ver, "3.1");
	T_EQ_INT(snapshot_build(&o, &warm), 0);
	T_CHECK(plain.len == cold.len && cold.len == warm.len &&
	    memcmp(plain.data, cold.data, cold.len) == 0 &&
	    memcmp(cold.data, warm.data, warm.len) == 0);
	/* the .list emptied in place (same directory, same status): the warm
	 * answer is the cache's, so the scan was skipped */
	mk("/var/lib/dpkg/info/shellpkg.list", "/.\n");
	T_EQ_INT(snapshot_build(&o, &stale), 0);
	T_CHECK(strstr(stale.data, want) != NULL);
	buf_free(&plain);
	buf_free(&cold);
	buf_free(&warm);
	buf_free(&stale);
}

int
main(void)
{
	char cmd[128];

	if (mkdtemp(root) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	mk("/var/lib/dpkg/info/coreutils.list", "/.\n/usr/bin/true\n");
	mk("/var/lib/dpkg/status", "Package: coreutils\nVersion: 9.1\n\n");
	snprintf(cache, sizeof(cache), "%s/%s", root, DPKGCACHE_NAME);
	test_basic();
	test_symlink();
	test_snapshot();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (strncmp(root, "/tmp/bf-dpkgcache-", 18) == 0 && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return t_done();
}
