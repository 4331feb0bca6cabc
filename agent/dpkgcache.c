/*
 * dpkgcache.c: the dpkg owner of a binary, remembered between steps
 * (dpkgcache.h says why). The file is one key line naming the state of
 * dpkg's database, then "PATH\tPKG\tVERSION\n" lines (PKG empty: no
 * package owns PATH; VERSION empty: status does not say it is installed). It is read like any untrusted input: capped, and a line that is
 * not exactly that shape makes the whole file a miss.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "dpkgcache.h"
#include "err.h"

#define DPKGCACHE_MAX_PATH	4096
#define DPKGCACHE_MAX_KEY	512

/* The database's identity: inode, size and mtime of info/ and status. */
static int
dpkgcache_key(const char *root, char *key, size_t ksz)
{
	char p[DPKGCACHE_MAX_PATH];
	struct stat a, b;

	if ((size_t)snprintf(p, sizeof(p), "%s/var/lib/dpkg/info", root) >= sizeof(p) ||
	    stat(p, &a) != 0 ||
	    (size_t)snprintf(p, sizeof(p), "%s/var/lib/dpkg/status", root) >= sizeof(p) ||
	    stat(p, &b) != 0)
		return BF_ERR_NOTFOUND;
	snprintf(key, ksz, "benchfleet-dpkg-owner 2 %llu:%llu:%lld.%09ld %llu:%llu:%lld:%lld.%09ld\n",
	    (unsigned long long)a.st_dev, (unsigned long long)a.st_ino, (long long)a.st_mtim.tv_sec,
	    a.st_mtim.tv_nsec, (unsigned long long)b.st_dev, (unsigned long long)b.st_ino,
	    (long long)b.st_size, (long long)b.st_mtim.tv_sec, b.st_mtim.tv_nsec);
	return 0;
}

/* A path we store: absolute, no tab or newline, under the cap. */
static int
dpkgcache_path_ok(const char *path)
{
	size_t n = strlen(path);

	return path[0] == '/' && n < DPKGCACHE_MAX_PATH && strpbrk(path, "\t\n") == NULL;
}

/* A package name as dpkg writes it (with ":arch"), or "" for none. */
static int
dpkgcache_pkg_ok(const char *pkg, size_t len)
{
	size_t i;

	if (len >= DPKGCACHE_MAX_PKG)
		return 0;
	for (i = 0; i < len; i++)
		if (!((pkg[i] >= 'a' && pkg[i] <= 'z') || (pkg[i] >= '0' && pkg[i] <= '9') ||
		    (pkg[i] != '\0' && strchr("+-.:", pkg[i]) != NULL)))
			return 0;
	return 1;
}

/* A version as dpkg writes it ("1:9.1-1+b1~bpo"), or "" for none. */
static int
dpkgcache_ver_ok(const char *ver, size_t len)
{
	size_t i;

	if (len >= DPKGCACHE_MAX_VER)
		return 0;
	for (i = 0; i < len; i++)
		if (!((ver[i] >= 'a' && ver[i] <= 'z') || (ver[i] >= 'A' && ver[i] <= 'Z') ||
		    (ver[i] >= '0' && ver[i] <= '9') ||
		    (ver[i] != '\0' && strchr("+-.:~", ver[i]) != NULL)))
			return 0;
	return 1;
}

/* Read the file into b when its key line is key and every line after it
 * is well formed; BF_ERR_NOTFOUND otherwise. */
static int
dpkgcache_load(const char *file, const char *key, struct buf *b, size_t *nentries)
{
	char chunk[8192];
	const char *p, *end, *nl, *tab, *tab2;
	size_t klen = strlen(key), n = 0;
	ssize_t got;
	int fd, r = 0;

	*nentries = 0;
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0)
		return BF_ERR_NOTFOUND;
	for (;;) {
		got = read(fd, chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			r = got < 0 ? BF_ERR_IO : 0;
			break;
		}
		if ((r = buf_append(b, chunk, (size_t)got)) != 0)
			break;
	}
	close(fd);
	if (r != 0 || b->len < klen || memcmp(b->data, key, klen) != 0)
		return BF_ERR_NOTFOUND;
	for (p = b->data + klen, end = b->data + b->len; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL ||
		    (tab = memchr(p, '\t', (size_t)(nl - p))) == NULL || tab == p || *p != '/' ||
		    (tab2 = memchr(tab + 1, '\t', (size_t)(nl - tab - 1))) == NULL ||
		    !dpkgcache_pkg_ok(tab + 1, (size_t)(tab2 - tab - 1)) ||
		    !dpkgcache_ver_ok(tab2 + 1, (size_t)(nl - tab2 - 1)) ||
		    memchr(p, '\0', (size_t)(nl - p)) != NULL || ++n > DPKGCACHE_MAX_ENTRIES)
			return BF_ERR_NOTFOUND;
	}
	*nentries = n;
	return 0;
}

/* Whether the line [p, nl) is path's. */
static int
dpkgcache_line_is(const char *p, const char *nl, const char *path, size_t plen)
{
	return (size_t)(nl - p) > plen && memcmp(p, path, plen) == 0 && p[plen] == '\t';
}

/* The first line of path in a loaded file (after its key), or NULL. */
static const char *
dpkgcache_find(const struct buf *b, size_t klen, const char *path)
{
	const char *p, *end = b->data + b->len, *nl;
	size_t plen = strlen(path);

	for (p = b->data + klen; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (dpkgcache_line_is(p, nl, path, plen))
			return p;
	}
	return NULL;
}

int
dpkgcache_get(const char *file, const char *root, const char *path, char *pkg, size_t psz,
    char *ver, size_t vsz)
{
	char key[DPKGCACHE_MAX_KEY];
	const char *line, *v, *nl, *tab;
	struct buf b;
	size_t n;
	int r = BF_ERR_NOTFOUND;

	buf_init(&b, DPKGCACHE_MAX_FILE);
	if (file == NULL || !dpkgcache_path_ok(path) ||
	    dpkgcache_key(root, key, sizeof(key)) != 0 ||
	    dpkgcache_load(file, key, &b, &n) != 0 ||
	    (line = dpkgcache_find(&b, strlen(key), path)) == NULL)
		goto out;
	v = line + strlen(path) + 1;
	nl = memchr(v, '\n', (size_t)(b.data + b.len - v));
	tab = memchr(v, '\t', (size_t)(nl - v));	/* there: the load checked */
	if ((size_t)(tab - v) >= psz || (size_t)(nl - tab - 1) >= vsz)
		goto out;
	memcpy(pkg, v, (size_t)(tab - v));
	pkg[tab - v] = '\0';
	memcpy(ver, tab + 1, (size_t)(nl - tab - 1));
	ver[nl - tab - 1] = '\0';
	r = 0;
out:
	buf_free(&b);
	return r;
}

void
dpkgcache_put(const char *file, const char *root, const char *path, const char *pkg,
    const char *ver)
{
	char key[DPKGCACHE_MAX_KEY], tmp[DPKGCACHE_MAX_PATH + 32];
	const char *line, *nl;
	struct buf old, out;
	size_t n = 0, klen, plen;
	ssize_t w;
	int fd = -1;

	buf_init(&old, DPKGCACHE_MAX_FILE);
	buf_init(&out, DPKGCACHE_MAX_FILE);
	if (file == NULL || !dpkgcache_path_ok(path) || !dpkgcache_pkg_ok(pkg, strlen(pkg)) ||
	    !dpkgcache_ver_ok(ver, strlen(ver)) ||
	    dpkgcache_key(root, key, sizeof(key)) != 0 || buf_puts(&out, key) != 0)
		goto out;
	klen = strlen(key);
	/* keep the other entries of a file of the same database, if room;
	 * every line of path goes (a planted file may repeat it) */
	if (dpkgcache_load(file, key, &old, &n) == 0 && n < DPKGCACHE_MAX_ENTRIES) {
		plen = strlen(path);
		for (line = old.data + klen; line < old.data + old.len; line = nl + 1) {
			nl = memchr(line, '\n', (size_t)(old.data + old.len - line));
			if (dpkgcache_line_is(line, nl, path, plen))
				continue;
			if (buf_append(&out, line, (size_t)(nl + 1 - line)) != 0)
				goto out;
		}
	}
	if (buf_printf(&out, "%s\t%s\t%s\n", path, pkg, ver) != 0 ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", file, (long)getpid()) >= sizeof(tmp))
		goto out;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		goto out;
	w = write(fd, out.data, out.len);
	if (close(fd) != 0 || w < 0 || (size_t)w != out.len || rename(tmp, file) != 0)
		(void)unlink(tmp);
out:
	buf_free(&old);
	buf_free(&out);
}
