/*
 * fuzz_dpkgcache.c: the agent's dpkg owner cache file (agent/dpkgcache.c),
 * which anyone able to write beside the agent could plant. Input: its first
 * byte chooses whether the file starts with the key of the fake dpkg
 * database (odd) or not; the rest is the file. Then two lookups and a put
 * (which reads the file again to keep its entries) run over it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpkgcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64], cache[128], key[1024];

static void
fz_mk(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	if ((f = fopen(p, "w")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

/* Remove the fake tree at exit (all that is in it is ours). */
static void
fz_cleanup(void)
{
	static const char *const rel[] = { "/dpkg-owner.cache", "/var/lib/dpkg/status",
		"/var/lib/dpkg/info", "/var/lib/dpkg", "/var/lib", "/var", "" };
	char p[256];
	size_t i;

	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", root, rel[i]);
		if (unlink(p) != 0)
			(void)rmdir(p);
	}
}

/* A fake /var/lib/dpkg, and the key line a put writes for it. */
static void
fz_init(void)
{
	char p[256];
	FILE *f;

	snprintf(root, sizeof(root), "/tmp/bf-fz-dpkgcache.%ld", (long)getpid());
	(void)mkdir(root, 0700);
	atexit(fz_cleanup);
	snprintf(p, sizeof(p), "%s/var/lib/dpkg/info", root);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		(void)mkdir(p, 0755);
		*s = '/';
	}
	(void)mkdir(p, 0755);
	fz_mk("/var/lib/dpkg/status", "Package: coreutils\nVersion: 9.1\n\n");
	snprintf(cache, sizeof(cache), "%s/%s", root, DPKGCACHE_NAME);
	dpkgcache_put(cache, root, "/k", "", "");
	if ((f = fopen(cache, "r")) != NULL) {
		if (fgets(key, sizeof(key), f) == NULL)
			key[0] = '\0';
		fclose(f);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char pkg[DPKGCACHE_MAX_PKG], ver[DPKGCACHE_MAX_VER];
	FILE *f;

	if (root[0] == '\0')
		fz_init();
	if (size < 1)
		return 0;
	(void)unlink(cache);
	if ((f = fopen(cache, "w")) == NULL)
		return 0;
	if (data[0] & 1)
		fputs(key, f);
	fwrite(data + 1, 1, size - 1, f);
	fclose(f);
	(void)dpkgcache_get(cache, root, "/usr/bin/true", pkg, sizeof(pkg), ver, sizeof(ver));
	(void)dpkgcache_get(cache, root, "/k", pkg, sizeof(pkg), ver, sizeof(ver));
	dpkgcache_put(cache, root, "/usr/bin/true", "coreutils", "9.1-1");
	/* a put is read back (a file near DPKGCACHE_MAX_FILE may not take it) */
	if (size < DPKGCACHE_MAX_FILE / 2 &&
	    (dpkgcache_get(cache, root, "/usr/bin/true", pkg, sizeof(pkg), ver, sizeof(ver)) != 0 ||
	    strcmp(pkg, "coreutils") != 0 || strcmp(ver, "9.1-1") != 0))
		abort();
	return 0;
}
