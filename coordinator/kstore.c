/*
 * kstore.c: the artifact directory (kstore.h): files named by the sha256
 * of their bytes, reached only through one directory descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "kstore.h"
#include "sha256.h"
#include "store.h"

struct kstore {
	int dfd;
};

int
kstore_open(const char *path, struct kstore **out, struct bf_diag *d)
{
	struct kstore *k = NULL;
	struct stat sb;
	int r, fd = -1;

	*out = NULL;
	if (mkdir(path, 0711) != 0 && errno != EEXIST) {
		bf_diag_set(d, "artifact-dir", "%s: cannot make it: %s", path, strerror(errno));
		r = BF_ERR_SYS;
		goto out;
	}
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		bf_diag_set(d, "artifact-dir", "%s: cannot open it as a directory (a symlink "
		    "is refused): %s", path, strerror(errno));
		r = BF_ERR_SYS;
		goto out;
	}
	if (fstat(fd, &sb) != 0 || sb.st_uid != geteuid() || (sb.st_mode & 022) != 0) {
		bf_diag_set(d, "artifact-dir", "%s: must be ours and writable by no one else "
		    "(mode %o)", path, (unsigned)(sb.st_mode & 07777));
		r = BF_ERR_INVALID;
		goto out;
	}
	/* search but no listing for others: benchfleetd's API child, which
	 * drops to nobody, opens a file it was given the name of */
	if ((sb.st_mode & 07777) != 0711 && fchmod(fd, 0711) != 0) {
		bf_diag_set(d, "artifact-dir", "%s: cannot make it mode 0711: %s", path,
		    strerror(errno));
		r = BF_ERR_SYS;
		goto out;
	}
	if ((k = calloc(1, sizeof(*k))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	k->dfd = fd;
	fd = -1;
	*out = k;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	return r;
}

char *
kstore_default_dir(const char *store, int pg)
{
	const char *slash = strrchr(store, '/');
	char *out;

	if (pg)
		return strdup("var/artifacts");
	if (slash == NULL)
		return strdup("artifacts");
	if (asprintf(&out, "%.*s/artifacts", (int)(slash - store), store) < 0)
		return NULL;
	return out;
}

void
kstore_close(struct kstore *k)
{
	if (k == NULL)
		return;
	close(k->dfd);
	free(k);
}

static int
kstore_write_all(int fd, const unsigned char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return BF_ERR_IO;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
kstore_put(struct kstore *k, const void *p, size_t n, char sha256[65])
{
	static unsigned long seq;
	struct stat sb;
	char tmp[96];
	int r, fd = -1;

	if (k == NULL || (int64_t)n > KSTORE_MAX_ARTIFACT)
		return k == NULL ? BF_ERR_INVALID : BF_ERR_TOOBIG;
	sha256_hex(p, n, sha256);
	if (fstatat(k->dfd, sha256, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_size == (off_t)n)
		return 0;
	snprintf(tmp, sizeof(tmp), ".tmp-%ld-%lu-%.16s", (long)getpid(),
	    __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED), sha256);
	if ((fd = openat(k->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644)) < 0) {
		r = BF_ERR_SYS;
		goto out;
	}
	if ((r = kstore_write_all(fd, p, n)) != 0)
		goto out;
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		r = BF_ERR_IO;
		goto out;
	}
	fd = -1;
	if (renameat(k->dfd, tmp, k->dfd, sha256) != 0) {
		r = BF_ERR_SYS;
		goto out;
	}
	tmp[0] = '\0';
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0] != '\0')
		unlinkat(k->dfd, tmp, 0);
	return r;
}

/* 64 lowercase hex digits, nothing else: the only names ever opened. */
static int
kstore_name_ok(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

int
kstore_open_blob(struct kstore *k, const char *sha256, int *fd, int64_t *size)
{
	struct stat sb;
	int f;

	*fd = -1;
	if (k == NULL || sha256 == NULL || !kstore_name_ok(sha256))
		return BF_ERR_INVALID;
	if ((f = openat(k->dfd, sha256, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ENOENT ? BF_ERR_NOTFOUND : BF_ERR_SYS;
	if (fstat(f, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > KSTORE_MAX_ARTIFACT) {
		close(f);
		return BF_ERR_INVALID;
	}
	*fd = f;
	*size = (int64_t)sb.st_size;
	return 0;
}

int
kstore_local_path(struct kstore *k, const char *sha256, char *out, size_t outsz)
{
	int64_t size;
	int r, fd = -1;

	if ((r = kstore_open_blob(k, sha256, &fd, &size)) != 0)
		return r;
	close(fd);
	if ((size_t)snprintf(out, outsz, "/proc/self/fd/%d/%s", k->dfd, sha256) >= outsz)
		return BF_ERR_TOOBIG;
	return 0;
}

int
kstore_read(struct kstore *k, const char *sha256, void **data, size_t *n)
{
	unsigned char *buf = NULL;
	char got[65];
	int64_t size;
	size_t off = 0;
	ssize_t rd;
	int r, fd = -1;

	*data = NULL;
	*n = 0;
	if ((r = kstore_open_blob(k, sha256, &fd, &size)) != 0)
		goto out;
	if ((buf = malloc((size_t)size + 1)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	while (off < (size_t)size) {
		if ((rd = read(fd, buf + off, (size_t)size - off)) < 0 && errno == EINTR)
			continue;
		if (rd <= 0) {
			r = BF_ERR_IO;
			goto out;
		}
		off += (size_t)rd;
	}
	sha256_hex(buf, off, got);
	if (strcmp(got, sha256) != 0) {
		r = BF_ERR_INVALID;
		goto out;
	}
	buf[off] = '\0';
	*data = buf;
	buf = NULL;
	*n = off;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

int
kstore_remove(struct kstore *k, const char *sha256)
{
	if (k == NULL || sha256 == NULL || !kstore_name_ok(sha256))
		return BF_ERR_INVALID;
	if (unlinkat(k->dfd, sha256, 0) != 0 && errno != ENOENT)
		return BF_ERR_SYS;
	return 0;
}

int
kstore_prune(struct kstore *k, struct store *st, int64_t keep, struct bf_diag *d)
{
	char (*v)[65] = NULL;
	size_t i, n = 0;
	int r;

	if ((r = store_kbuild_prune(st, keep, &v, &n)) != 0) {
		bf_diag_set(d, "artifact-dir", "retention: the store failed: %s", bf_err_str(r));
		return r;
	}
	/* a file left behind (the rows are gone) costs disk, not correctness */
	for (i = 0; i < n; i++)
		(void)kstore_remove(k, v[i]);
	free(v);
	return 0;
}
