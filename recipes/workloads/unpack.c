/*
 * unpack.c: `work unpack --tar FILE --dir DIR`: unpack a source tarball
 * into DIR once and keep it there, so that a kernel-build step does not pay
 * half a minute of xz before every run. tar runs by execvp, no shell, and
 * reads the archive from a descriptor opened here (its /dev/fd/0).
 *
 * It runs as root on a lab machine with DIR taken from a job, so it never
 * deletes what it did not create:
 *   - the tarball is opened (a readable regular file) before anything else;
 *   - DIR.part is made fresh, and the stamp DIR.part/.benchfleet-workdir
 *     (UNPACK_STAMP_TEXT) is written into it first, before tar;
 *   - tar unpacks into DIR.part, which is renamed to DIR, and DIR/.bf-unpacked
 *     is written last: a complete unpack (then later calls say "cached");
 *   - a DIR or DIR.part left over is removed only when it holds our stamp
 *     (or is an empty directory); anything else is refused with an error,
 *     never removed. Removal walks by descriptor and follows no symlink.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "path.h"
#include "wl.h"

#define UNPACK_MAX_PATH		2048
#define UNPACK_STAMP		".benchfleet-workdir"
#define UNPACK_STAMP_TEXT	"benchfleet work unpack: this directory and all in it may be removed\n"
#define UNPACK_DONE		".bf-unpacked"
#define UNPACK_MAX_DEPTH	128	/* directory nesting removed; a kernel tree has ~12 */

/* Run argv with stdin from in_fd (or /dev/null's inheritance when -1). */
static int
unpack_run(char *const argv[], int in_fd)
{
	int status;
	pid_t pid;

	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		if (in_fd != -1 && dup2(in_fd, 0) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "benchfleet-agent: unpack: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Does directory dirfd hold our stamp: a regular file we own, with our text? */
static int
unpack_has_stamp(int dirfd)
{
	char buf[sizeof(UNPACK_STAMP_TEXT) + 1];
	struct stat sb;
	ssize_t n;
	int fd, ok = 0;

	if ((fd = openat(dirfd, UNPACK_STAMP, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY)) < 0)
		return 0;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
	    (n = read(fd, buf, sizeof(buf))) == (ssize_t)strlen(UNPACK_STAMP_TEXT) &&
	    memcmp(buf, UNPACK_STAMP_TEXT, (size_t)n) == 0)
		ok = 1;
	close(fd);
	return ok;
}

/*
 * Remove name in directory pfd and everything below it, on device dev
 * only, following no symlink (each level is opened O_NOFOLLOW by the fd of
 * the level above). 0 or -1 with errno.
 */
static int
unpack_rmtree_at(int pfd, const char *name, dev_t dev, int depth)
{
	struct dirent *de;
	struct stat sb;
	DIR *dir;
	int fd, removed, r = -1;

	if (depth > UNPACK_MAX_DEPTH) {
		errno = ELOOP;
		return -1;
	}
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		/* a symlink (ELOOP) or a file: the entry itself goes, not its target */
		if (errno == ENOTDIR || errno == ELOOP)
			return unlinkat(pfd, name, 0);
		return -1;
	}
	if (fstat(fd, &sb) != 0) {
		close(fd);
		return -1;
	}
	if (sb.st_dev != dev) {
		close(fd);
		errno = EXDEV;		/* something is mounted here: not ours */
		return -1;
	}
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	/* unlinking while reading may hide entries: read again until a pass
	 * finds nothing left */
	do {
		removed = 0;
		rewinddir(dir);
		while ((de = readdir(dir)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
				goto out;
			if (S_ISDIR(sb.st_mode)) {
				if (unpack_rmtree_at(fd, de->d_name, dev, depth + 1) != 0)
					goto out;
			} else if (unlinkat(fd, de->d_name, 0) != 0)
				goto out;
			removed = 1;
		}
	} while (removed);
	r = 0;
out:
	closedir(dir);
	if (r == 0)
		r = unlinkat(pfd, name, AT_REMOVEDIR);
	return r;
}

/*
 * Make way for a fresh unpack at path: nothing there, an empty directory
 * (removed), or a directory with our stamp (removed with all in it).
 * Anything else is left alone and refused.
 */
static int
unpack_clear(const char *path)
{
	char parent[UNPACK_MAX_PATH];
	const char *base;
	struct stat sb;
	int pfd = -1, fd = -1, r = -1;

	if (lstat(path, &sb) != 0) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "benchfleet-agent: unpack: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISLNK(sb.st_mode)) {
		fprintf(stderr, "benchfleet-agent: unpack: %s is a symbolic link; refusing to "
		    "touch it\n", path);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "benchfleet-agent: unpack: %s exists and is not a directory; "
		    "refusing to remove it\n", path);
		return -1;
	}
	base = strrchr(path, '/');
	snprintf(parent, sizeof(parent), "%.*s", base == path ? 1 : (int)(base - path), path);
	base++;
	if ((pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		fprintf(stderr, "benchfleet-agent: unpack: %s: %s\n", path, strerror(errno));
		goto out;
	}
	if (!unpack_has_stamp(fd)) {
		/* rmdir removes only an empty directory: nothing is lost */
		if (unlinkat(pfd, base, AT_REMOVEDIR) == 0) {
			r = 0;
			goto out;
		}
		fprintf(stderr, "benchfleet-agent: unpack: %s exists and was not made by work "
		    "unpack (no %s stamp in it); refusing to remove it: choose another workdir "
		    "or remove it yourself\n", path, UNPACK_STAMP);
		goto out;
	}
	if (unpack_rmtree_at(pfd, base, sb.st_dev, 0) != 0) {
		fprintf(stderr, "benchfleet-agent: unpack: removing %s: %s\n", path,
		    strerror(errno));
		goto out;
	}
	r = 0;
out:
	if (fd != -1)
		close(fd);
	if (pfd != -1)
		close(pfd);
	return r;
}

/* mkdir -p of path's parents, refusing a symlink on the way. */
static int
unpack_mkparents(const char *path)
{
	char cur[UNPACK_MAX_PATH];
	struct stat sb;
	size_t i, n = strlen(path);

	memcpy(cur, path, n + 1);
	for (i = 1; i < n; i++) {
		if (cur[i] != '/')
			continue;
		cur[i] = '\0';
		if (mkdir(cur, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "benchfleet-agent: unpack: %s: %s\n", cur, strerror(errno));
			return -1;
		}
		if (lstat(cur, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			fprintf(stderr, "benchfleet-agent: unpack: %s is not a directory (or is a "
			    "symbolic link)\n", cur);
			return -1;
		}
		cur[i] = '/';
	}
	return 0;
}

/* Create name in dir (no symlink followed, must not exist) holding text. */
static int
unpack_write_new(const char *dir, const char *name, const char *text)
{
	char p[UNPACK_MAX_PATH];
	size_t n = strlen(text);
	int fd, ok;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "benchfleet-agent: unpack: %s: %s\n", p, strerror(errno));
		return -1;
	}
	ok = write(fd, text, n) == (ssize_t)n;
	if (close(fd) != 0 || !ok) {
		fprintf(stderr, "benchfleet-agent: unpack: writing %s failed\n", p);
		return -1;
	}
	return 0;
}

/* dir is complete: our stamp and the done marker, neither a symlink. */
static int
unpack_cached(const char *dir)
{
	struct stat sb;
	char p[UNPACK_MAX_PATH];
	int fd, ok;

	snprintf(p, sizeof(p), "%s/%s", dir, UNPACK_DONE);
	if (lstat(p, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	ok = unpack_has_stamp(fd);
	close(fd);
	return ok;
}

int
unpack_main(int argc, char **argv)
{
	char part[UNPACK_MAX_PATH];
	const char *tar = NULL, *dir = NULL, *why = NULL;
	struct stat sb;
	int i, tfd = -1, r = 1;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--tar") == 0)
			tar = argv[i + 1];
		else if (strcmp(argv[i], "--dir") == 0)
			dir = argv[i + 1];
		else
			break;
	}
	if (i != argc || tar == NULL || dir == NULL) {
		fprintf(stderr, "benchfleet-agent: work unpack --tar FILE --dir /ABSOLUTE/DIR\n");
		return WL_EXIT_USAGE;
	}
	if (path_check_normal(dir, strlen(dir), &why) != 0 || strcmp(dir, "/") == 0 ||
	    strlen(dir) > UNPACK_MAX_PATH - 32) {
		fprintf(stderr, "benchfleet-agent: unpack: --dir \"%.200s\" %s\n", dir,
		    why != NULL ? why : "is not a directory below /");
		return WL_EXIT_USAGE;
	}
	if (unpack_cached(dir)) {
		printf("unpacked: cached\n");
		return 0;
	}
	/* the tarball first: a missing one must leave everything as it was */
	if ((tfd = open(tar, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		fprintf(stderr, "benchfleet-agent: unpack: tarball %s: %s (nothing was "
		    "touched)\n", tar, strerror(errno));
		goto out;
	}
	if (fstat(tfd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fprintf(stderr, "benchfleet-agent: unpack: tarball %s is not a regular file "
		    "(nothing was touched)\n", tar);
		goto out;
	}
	snprintf(part, sizeof(part), "%s.part", dir);
	if (unpack_clear(dir) != 0 || unpack_clear(part) != 0 || unpack_mkparents(part) != 0)
		goto out;
	if (mkdir(part, 0755) != 0) {
		fprintf(stderr, "benchfleet-agent: unpack: %s: %s\n", part, strerror(errno));
		goto out;
	}
	/* the stamp before tar: a half-finished part is ours to remove */
	if (unpack_write_new(part, UNPACK_STAMP, UNPACK_STAMP_TEXT) != 0)
		goto out;
	{
		/* /dev/fd/0, not "-": tar detects compression only on a file */
		char *tx[] = { "tar", "-x", "-f", "/dev/fd/0", "-C", part, NULL };

		if (unpack_run(tx, tfd) != 0) {
			fprintf(stderr, "benchfleet-agent: unpack: unpacking %s failed\n", tar);
			(void)unpack_clear(part);
			goto out;
		}
	}
	if (rename(part, dir) != 0) {
		fprintf(stderr, "benchfleet-agent: unpack: %s: %s\n", dir, strerror(errno));
		goto out;
	}
	if (unpack_write_new(dir, UNPACK_DONE, "") != 0)
		goto out;
	printf("unpacked: fresh\n");
	r = 0;
out:
	if (tfd != -1)
		close(tfd);
	return r;
}
