/*
 * workdir.c: the step's private working directory (workdir.h). Every
 * file is opened relative to the directory's descriptor with O_NOFOLLOW,
 * and removal walks with openat/unlinkat without following links, so a
 * workload that leaves a symbolic link behind cannot make the agent read or
 * delete anything outside.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workdir.h"

static int
workdir_write(int dfd, const struct step_file *f, struct bf_diag *d)
{
	size_t off = 0;
	ssize_t n;
	int fd, r = 0;

	if ((fd = openat(dfd, f->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644)) < 0) {
		bf_diag_set(d, STEP_FIELD_FILES, "%s: %s", f->name, strerror(errno));
		return BF_ERR_SYS;
	}
	while (off < f->len) {
		n = write(fd, f->text + off, f->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			bf_diag_set(d, STEP_FIELD_FILES, "%s: %s", f->name,
			    n < 0 ? strerror(errno) : "short write");
			r = BF_ERR_IO;
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) != 0 && r == 0) {
		bf_diag_set(d, STEP_FIELD_FILES, "%s: %s", f->name, strerror(errno));
		r = BF_ERR_IO;
	}
	return r;
}

int
workdir_make(struct step *st, const char *base, struct bf_diag *d)
{
	char tmpl[STEP_MAX_PATH];
	size_t i;
	int dfd = -1, r;

	if (!st->workdir)
		return 0;
	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/benchfleet-step.XXXXXX", base) >=
	    sizeof(tmpl)) {
		bf_diag_set(d, STEP_FIELD_FILES, "workdir base too long");
		return BF_ERR_TOOBIG;
	}
	if (mkdtemp(tmpl) == NULL) {
		bf_diag_set(d, STEP_FIELD_FILES, "cannot make a workdir in %s: %s", base,
		    strerror(errno));
		return BF_ERR_SYS;
	}
	/* st->cwd is set first, so workdir_remove cleans up after a failure */
	if ((st->cwd = strdup(tmpl)) == NULL) {
		(void)rmdir(tmpl);
		return BF_ERR_ALLOC;
	}
	if ((dfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		bf_diag_set(d, STEP_FIELD_FILES, "%s: %s", tmpl, strerror(errno));
		r = BF_ERR_SYS;
		goto out;
	}
	for (i = 0; i < st->nfiles; i++)
		if ((r = workdir_write(dfd, &st->files[i], d)) != 0)
			goto out;
	r = 0;
out:
	if (dfd >= 0)
		close(dfd);
	return r;
}

/* Empty directory dfd (which it closes), depth levels deep at most. */
static int
workdir_empty(int dfd, int depth)
{
	struct dirent *de;
	struct stat sb;
	DIR *dir;
	int fd, r = 0;

	if ((dir = fdopendir(dfd)) == NULL) {
		close(dfd);
		return BF_ERR_SYS;
	}
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(dir), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
			r = BF_ERR_SYS;
			continue;
		}
		if (S_ISDIR(sb.st_mode)) {
			if (depth <= 0 || (fd = openat(dirfd(dir), de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
			    workdir_empty(fd, depth - 1) != 0 ||
			    unlinkat(dirfd(dir), de->d_name, AT_REMOVEDIR) != 0)
				r = BF_ERR_SYS;
			/* the listing changed under readdir: start over */
			rewinddir(dir);
			if (r != 0)
				break;
		} else if (unlinkat(dirfd(dir), de->d_name, 0) != 0)
			r = BF_ERR_SYS;
	}
	closedir(dir);
	return r;
}

int
workdir_remove(struct step *st)
{
	int fd, r;

	if (st == NULL || !st->workdir || st->cwd == NULL)
		return 0;
	if ((fd = open(st->cwd, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : BF_ERR_SYS;
	r = workdir_empty(fd, WORKDIR_DEPTH);
	if (rmdir(st->cwd) != 0)
		r = BF_ERR_SYS;
	return r;
}

int
workdir_read(const struct step *st, const char *name, struct buf *b)
{
	char chunk[16 * 1024], path[STEP_MAX_PATH + STEP_MAX_FILE_NAME + 2];
	struct stat sb;
	ssize_t n;
	int fd, r = 0;

	if (st->cwd == NULL)
		return BF_ERR_NOTFOUND;
	snprintf(path, sizeof(path), "%s/%s", st->cwd, name);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return errno == ENOENT ? BF_ERR_NOTFOUND : BF_ERR_INVALID;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return BF_ERR_INVALID;
	}
	while (r == 0) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = BF_ERR_IO;
		else if (n == 0)
			break;
		else if (b->len + (size_t)n > b->max)
			r = buf_append(b, chunk, b->max - b->len);	/* the head is kept */
		else
			r = buf_append(b, chunk, (size_t)n);
		if (r == 0 && b->len >= b->max)
			break;
	}
	close(fd);
	return r;
}

void
workdir_unlink(const struct step *st, const char *name)
{
	char path[STEP_MAX_PATH + STEP_MAX_FILE_NAME + 2];

	if (st->cwd == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", st->cwd, name);
	(void)unlink(path);
}
