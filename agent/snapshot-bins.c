/*
 * snapshot-bins.c: the part of a step's snapshot that names the software it
 * runs: each binary's resolved path, sha256 and owning package (from
 * dpkg's own files, through the owner cache of dpkgcache.h when the caller
 * names one, else rpm -qf), the versions of the packages the step
 * declares, and the compiler (cached by cmdcache.h). Writes nothing but
 * those two caches.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cmdcache.h"
#include "dpkgcache.h"
#include "err.h"
#include "sha256.h"
#include "snapshot-int.h"

/* Run argv through the callback; the first line of its stdout into s->val. */
static int
snapshot_cmd(struct snapshot_set *s, char *const *argv)
{
	struct buf out;
	char *nl;
	int r;

	s->val[0] = '\0';
	if (s->o->run == NULL || access(argv[0], X_OK) != 0)
		return BF_ERR_NOTFOUND;
	buf_init(&out, BF_MAX_SNAPSHOT_VALUE);
	r = s->o->run(s->o->arg, argv, &out);
	if (r == 0 && out.data != NULL) {
		if ((nl = strchr(out.data, '\n')) != NULL)
			*nl = '\0';
		snapshot_value(out.data, strlen(out.data), 0, s->val, sizeof(s->val));
	}
	buf_free(&out);
	return r == 0 && s->val[0] != '\0' ? 0 : BF_ERR_NOTFOUND;
}

/* root+path, whole, into b (capped by b's max); 0 or BF_ERR_IO/TOOBIG. */
static int
snapshot_slurp(const struct snapshot_set *s, const char *path, struct buf *b)
{
	char full[SNAPSHOT_MAX_PATH], chunk[65536];
	ssize_t n;
	int fd, r = 0;

	buf_reset(b);
	if ((size_t)snprintf(full, sizeof(full), "%s%s", s->o->root, path) >= sizeof(full) ||
	    (fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return BF_ERR_IO;
	/* a leading newline: every line is then "\n<line>\n" */
	r = buf_puts(b, "\n");
	while (r == 0) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? BF_ERR_IO : 0;
			break;
		}
		r = buf_append(b, chunk, (size_t)n);
	}
	close(fd);
	return r;
}

/* Does the list text hold one of the lines "\n<p>\n" (p = path, alt)? */
static int
snapshot_listed(const struct buf *b, const char *const *paths)
{
	char needle[SNAPSHOT_MAX_PATH + 3];
	size_t i;

	for (i = 0; paths[i] != NULL; i++) {
		snprintf(needle, sizeof(needle), "\n%s\n", paths[i]);
		if (b->data != NULL && memmem(b->data, b->len, needle, strlen(needle)) != NULL)
			return 1;
	}
	return 0;
}

/*
 * The dpkg package that owns path, read from root/var/lib/dpkg as dpkg -S
 * would (but without its 1-2 s of loading the whole database): the .list
 * named like the file first, then every .list until one names it. Under
 * usrmerge dpkg knows /bin/x where the file is /usr/bin/x: both are tried.
 */
static int
snapshot_dpkg(struct snapshot_set *s, const char *path, char *pkg, size_t psz)
{
	static const char *const merged[] = { "/usr/bin/", "/usr/sbin/", "/usr/lib/", NULL };
	const char *paths[3] = { path, NULL, NULL }, *base = strrchr(path, '/');
	char alt[SNAPSHOT_MAX_PATH], lp[SNAPSHOT_MAX_PATH + 64], dir[SNAPSHOT_MAX_PATH];
	struct dirent *de;
	struct buf b;
	size_t i, nl;
	DIR *d = NULL;
	int r = BF_ERR_NOTFOUND;

	buf_init(&b, SNAPSHOT_MAX_LIST);
	for (i = 0; merged[i] != NULL; i++)
		if (strncmp(path, merged[i], strlen(merged[i])) == 0) {
			snprintf(alt, sizeof(alt), "%s", path + 4);
			paths[1] = alt;
		}
	snprintf(lp, sizeof(lp), "/var/lib/dpkg/info/%s.list", base + 1);
	if (snapshot_slurp(s, lp, &b) == 0 && snapshot_listed(&b, paths)) {
		snprintf(pkg, psz, "%s", base + 1);
		r = 0;
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s/var/lib/dpkg/info", s->o->root);
	if ((d = opendir(dir)) == NULL)
		goto out;
	while ((de = readdir(d)) != NULL) {
		nl = strlen(de->d_name);
		if (nl <= 5 || strcmp(de->d_name + nl - 5, ".list") != 0)
			continue;
		snprintf(lp, sizeof(lp), "/var/lib/dpkg/info/%s", de->d_name);
		if (snapshot_slurp(s, lp, &b) == 0 && snapshot_listed(&b, paths)) {
			snprintf(pkg, psz, "%.*s", (int)(nl - 5), de->d_name);
			r = 0;
			goto out;
		}
	}
out:
	if (d != NULL)
		closedir(d);
	buf_free(&b);
	return r;
}

/* The version of installed package pkg (no ":arch") into ver, "" when
 * dpkg's status file does not say it is installed: what dpkg-query -W
 * -f '${Version}' says, read from the file itself. */
static void
snapshot_dpkg_version(struct snapshot_set *s, const char *pkg, char *ver, size_t vsz)
{
	char want[300];
	const char *st, *end, *v;
	struct buf b;
	size_t vl;

	ver[0] = '\0';
	buf_init(&b, SNAPSHOT_MAX_LIST);
	snprintf(want, sizeof(want), "\nPackage: %s\n", pkg);
	if (snapshot_slurp(s, "/var/lib/dpkg/status", &b) == 0 &&
	    (st = memmem(b.data, b.len, want, strlen(want))) != NULL) {
		if ((end = memmem(st + 1, b.len - (size_t)(st + 1 - b.data), "\n\n", 2)) == NULL)
			end = b.data + b.len;
		if ((v = memmem(st, (size_t)(end - st), "\nVersion: ", 10)) != NULL &&
		    memmem(st, (size_t)(end - st), "\nStatus: install ok installed\n", 30) != NULL) {
			v += 10;
			for (vl = 0; v + vl < end && v[vl] != '\n'; vl++)
				;
			snprintf(ver, vsz, "%.*s", (int)(vl < 200 ? vl : 200), v);
		}
	}
	buf_free(&b);
}

/* "pkg version" of the file into s->val, from dpkg's files or rpm -qf;
 * BF_ERR_NOTFOUND when no package owns it. */
static int
snapshot_package(struct snapshot_set *s, const char *path)
{
	char pkg[256], ver[256], *arch;

	if (dpkgcache_get(s->o->dpkg_cache, s->o->root, path, pkg, sizeof(pkg), ver,
	    sizeof(ver)) != 0) {
		if (snapshot_dpkg(s, path, pkg, sizeof(pkg)) != 0)
			pkg[0] = '\0';
		if ((arch = strchr(pkg, ':')) != NULL)	/* "libc6:amd64" */
			*arch = '\0';
		ver[0] = '\0';
		if (pkg[0] != '\0')
			snapshot_dpkg_version(s, pkg, ver, sizeof(ver));
		dpkgcache_put(s->o->dpkg_cache, s->o->root, path, pkg, ver);
	}
	if (pkg[0] == '\0')
		return snapshot_cmd(s, (char *const[]){ "/usr/bin/rpm", "-qf", "--qf",
		    "%{NAME} %{VERSION}-%{RELEASE}", (char *)path, NULL });
	snprintf(s->val, sizeof(s->val), "%s%s%s", pkg, ver[0] ? " " : "", ver);
	return 0;
}

/* "pkg.NAME": the installed version of each package the step declares
 * (null when dpkg does not have it installed). */
int
snapshot_pkgs(struct snapshot_set *s)
{
	char key[SNAPSHOT_MAX_KEY + 8];
	size_t i;
	int r;

	for (i = 0; s->o->pkgs != NULL && s->o->pkgs[i] != NULL; i++) {
		snapshot_dpkg_version(s, s->o->pkgs[i], s->val, sizeof(s->val));
		snprintf(key, sizeof(key), "pkg.%.*s", SNAPSHOT_MAX_KEY - 8, s->o->pkgs[i]);
		if ((r = snapshot_add(s, key, s->val[0] != '\0' ? s->val : NULL)) != 0)
			return r;
	}
	return 0;
}

/* Where execvp would find argv0, in found; 0 or BF_ERR_NOTFOUND. */
static int
snapshot_which(const struct snapshot_set *s, const char *argv0, char *found, size_t fsz)
{
	const char *dirs, *p, *end;
	struct stat sb;
	ssize_t n;

	if (strcmp(argv0, "@agent") == 0) {
		if ((n = readlink("/proc/self/exe", found, fsz - 1)) <= 0)
			return BF_ERR_NOTFOUND;
		found[n] = '\0';
		return 0;
	}
	if (strchr(argv0, '/') != NULL) {
		if (argv0[0] == '/' || s->o->cwd == NULL)
			snprintf(found, fsz, "%s", argv0);
		else
			snprintf(found, fsz, "%s/%s", s->o->cwd, argv0);
		return stat(found, &sb) == 0 && S_ISREG(sb.st_mode) ? 0 : BF_ERR_NOTFOUND;
	}
	if ((dirs = getenv("PATH")) == NULL)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	for (p = dirs;; p = end + 1) {
		if ((end = strchr(p, ':')) == NULL)
			end = p + strlen(p);
		if ((size_t)snprintf(found, fsz, "%.*s/%s", end == p ? 1 : (int)(end - p),
		    end == p ? "." : p, argv0) < fsz &&
		    stat(found, &sb) == 0 && S_ISREG(sb.st_mode) && access(found, X_OK) == 0)
			return 0;
		if (*end == '\0')
			return BF_ERR_NOTFOUND;
	}
}

static int
snapshot_packaged(const char *path)
{
	static const char *const dirs[] = { "/usr/bin/", "/usr/sbin/", "/usr/lib/",
		"/usr/libexec/", "/usr/games/", "/bin/", "/sbin/", "/lib/", NULL };
	size_t i;

	for (i = 0; dirs[i] != NULL; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			return 1;
	return 0;
}

/* The first line of `cc --version` into s->val, from the cache while the
 * compiler it came from is unchanged. */
static int
snapshot_cc(struct snapshot_set *s)
{
	const char *cc = s->o->cc != NULL ? s->o->cc : "/usr/bin/cc";
	char key[CMDCACHE_MAX_KEY];
	int r, keyed;

	keyed = s->o->cc_cache != NULL && cmdcache_key(cc, key, sizeof(key)) == 0;
	if (keyed && cmdcache_get(s->o->cc_cache, key, s->val, sizeof(s->val)) == 0)
		return 0;
	if ((r = snapshot_cmd(s, (char *const[]){ (char *)cc, "--version", NULL })) == 0 &&
	    keyed)
		cmdcache_put(s->o->cc_cache, key, s->val);
	return r;
}

int
snapshot_bins(struct snapshot_set *s)
{
	char found[SNAPSHOT_MAX_PATH], real[PATH_MAX], key[SNAPSHOT_MAX_KEY + 32], hex[65];
	const char *const *b = s->o->bins;
	struct stat sb;
	size_t i, j, used = 0;
	int r, ok;

	for (i = 0; b != NULL && b[i] != NULL && used < BF_MAX_SNAPSHOT_BINS; i++) {
		for (j = 0; j < i && strcmp(b[j], b[i]) != 0; j++)
			;
		if (j < i || b[i][0] == '\0')
			continue;
		used++;
		ok = snapshot_which(s, b[i], found, sizeof(found)) == 0 &&
		    realpath(found, real) != NULL;
		snprintf(key, sizeof(key), "bin.%.*s.path", SNAPSHOT_MAX_KEY - 16, b[i]);
		if ((r = snapshot_add(s, key, ok ? real : NULL)) != 0)
			return r;
		snprintf(key, sizeof(key), "bin.%.*s.sha256", SNAPSHOT_MAX_KEY - 16, b[i]);
		if ((r = snapshot_add(s, key, ok && stat(real, &sb) == 0 &&
		    sb.st_size <= BF_MAX_SNAPSHOT_HASH && sha256_file(real, hex) == 0 ? hex : NULL))
		    != 0)
			return r;
		/* the agent is ours, and no package owns /usr/local, /opt, /home */
		snprintf(key, sizeof(key), "bin.%.*s.package", SNAPSHOT_MAX_KEY - 16, b[i]);
		if (strcmp(b[i], "@agent") != 0 && (r = snapshot_add(s, key, ok &&
		    snapshot_packaged(real) && snapshot_package(s, real) == 0 ? s->val : NULL)) != 0)
			return r;
	}
	if (s->o->run != NULL)
		return snapshot_add(s, "sw.cc", snapshot_cc(s) == 0 ? s->val : NULL);
	return 0;
}
