/*
 * build-tree.c: the persistent tree of a kernel build on a builder
 * (build-tree.h): its lock, its stamp, its reset to a clean tree, and the
 * removal of trees whose repository is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "build-tree.h"
#include "emit.h"
#include "err.h"
#include "path.h"

#define BUILD_TREE_SAY_EVERY_S	30	/* a waiting build says so (and keeps its lease) */

void
build_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	(void)emit_log(0, "stderr", line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* rm -rf -- path, as a command of the build (its output in the log). */
static int
build_tree_rm(const char *path, time_t deadline)
{
	char *argv[] = { "rm", "-rf", "--", (char *)path, NULL };

	return build_cmd(argv, deadline) == 0 ? 0 : BF_ERR_IO;
}

/* dir and the stamp in it: made, the stamp holding our pid. */
static int
build_tree_stamp(struct build_tree *t, char *why, size_t whysz)
{
	char pid[32];
	int fd, n, r = 0;

	if (mkdir(t->dir, 0755) != 0 && errno != EEXIST) {
		snprintf(why, whysz, "mkdir %s: %s", t->dir, strerror(errno));
		return BF_ERR_SYS;
	}
	if ((fd = open(t->stamp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0644)) < 0) {
		snprintf(why, whysz, "%s: %s", t->stamp, strerror(errno));
		return BF_ERR_SYS;
	}
	t->stamped = 1;
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (write(fd, pid, (size_t)n) != n)
		r = BF_ERR_IO;
	if (close(fd) != 0)
		r = BF_ERR_IO;
	if (r != 0)
		snprintf(why, whysz, "%s: cannot write it", t->stamp);
	return r;
}

/* dir/repo := repo (replaced, never through a symlink). */
static int
build_tree_repo(const struct build_tree *t, const char *repo, char *why, size_t whysz)
{
	char path[sizeof(t->dir) + 8];
	size_t len = strlen(repo);
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/repo", t->dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
		snprintf(why, whysz, "%s: %s", path, strerror(errno));
		return BF_ERR_SYS;
	}
	if (write(fd, repo, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		r = BF_ERR_IO;
	if (close(fd) != 0)
		r = BF_ERR_IO;
	if (r != 0)
		snprintf(why, whysz, "%s: cannot write it", path);
	return r;
}

/* The sibling tree base/name: removed when the repository its repo file
 * names is gone and nobody holds its lock. */
static void
build_tree_prune_one(const char *base, const char *name, time_t deadline)
{
	char dir[PATH_MAX], rp[PATH_MAX], lk[PATH_MAX + 8], repo[PATH_MAX];
	struct stat sb;
	ssize_t n;
	int fd, lfd;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", base, name) >= sizeof(dir) ||
	    (size_t)snprintf(rp, sizeof(rp), "%s/repo", dir) >= sizeof(rp))
		return;
	if (lstat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return;
	if ((fd = open(rp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	n = read(fd, repo, sizeof(repo) - 1);
	close(fd);
	if (n <= 1 || repo[n - 1] != '\n')
		return;
	repo[n - 1] = '\0';
	if (repo[0] != '/' || stat(repo, &sb) == 0 || errno != ENOENT)
		return;
	snprintf(lk, sizeof(lk), "%s.lock", dir);
	if ((lfd = open(lk, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0)
		return;
	if (flock(lfd, LOCK_EX | LOCK_NB) == 0) {
		build_say("benchfleet-agent: removing the build tree %s: its repository %s is gone",
		    dir, repo);
		(void)build_tree_rm(dir, deadline);
	}
	close(lfd);
}

static void
build_tree_prune(const struct build_tree *t, time_t deadline)
{
	char base[sizeof(t->dir)], *slash;
	const char *self;
	struct dirent *e;
	DIR *d;
	int seen = 0;

	snprintf(base, sizeof(base), "%s", t->dir);
	if ((slash = strrchr(base, '/')) == NULL)
		return;
	self = slash + 1;
	*slash = '\0';
	if ((d = opendir(base[0] != '\0' ? base : "/")) == NULL)
		return;
	while ((e = readdir(d)) != NULL && seen < BUILD_TREE_MAX_PRUNE) {
		size_t len = strlen(e->d_name);

		if (strncmp(e->d_name, BUILD_TREE_PREFIX, strlen(BUILD_TREE_PREFIX)) != 0 ||
		    (len > 5 && strcmp(e->d_name + len - 5, ".lock") == 0) ||
		    strcmp(e->d_name, t->dir + (self - base)) == 0)
			continue;
		seen++;
		build_tree_prune_one(base, e->d_name, deadline);
	}
	closedir(d);
}

/* The directory that holds the trees and their locks, made as mkdir -p. */
static int
build_tree_parent(const struct build_tree *t, char *why, size_t whysz)
{
	char p[sizeof(t->dir)];
	size_t i, end;

	snprintf(p, sizeof(p), "%s", t->dir);
	end = (size_t)(strrchr(p, '/') - p);
	for (i = 1; i <= end; i++) {
		if (i < end && p[i] != '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			snprintf(why, whysz, "mkdir %s: %s", p, strerror(errno));
			return BF_ERR_SYS;
		}
		p[i] = '/';
	}
	return 0;
}

/* The lock, waited for up to the deadline. */
static int
build_tree_lock(struct build_tree *t, time_t deadline, char *why, size_t whysz)
{
	char lk[sizeof(t->dir) + 8];
	time_t said = 0, start = time(NULL);

	snprintf(lk, sizeof(lk), "%s.lock", t->dir);
	/* no O_CLOEXEC: the commands inherit the lock, so a make orphaned by
	 * an agent killed midway still holds it until it ends, and the next
	 * build never resets the tree under it */
	if ((t->lock_fd = open(lk, O_RDWR | O_CREAT | O_NOFOLLOW, 0644)) < 0) {
		snprintf(why, whysz, "%s: %s", lk, strerror(errno));
		return BF_ERR_SYS;
	}
	while (flock(t->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		time_t now = time(NULL);

		if ((errno != EWOULDBLOCK && errno != EINTR) || now >= deadline) {
			if (now >= deadline)
				snprintf(why, whysz, "%s is still held by another build", lk);
			else
				snprintf(why, whysz, "flock %s: %s", lk, strerror(errno));
			/* not ours: build_tree_end must not touch the tree */
			close(t->lock_fd);
			t->lock_fd = -1;
			return now >= deadline ? BF_ERR_TIMEOUT : BF_ERR_SYS;
		}
		if (now - said >= BUILD_TREE_SAY_EVERY_S) {
			build_say("benchfleet-agent: waiting for %s: another build uses the tree "
			    "(%lld s so far)", lk, (long long)(now - start));
			said = now;
		}
		usleep(200 * 1000);
	}
	return 0;
}

int
build_tree_reset(struct build_tree *t, const char *reason, time_t deadline, char *why,
    size_t whysz)
{
	build_say("benchfleet-agent: %s: removing the build tree %s, building from a clean tree",
	    reason, t->dir);
	t->stamped = 0;
	if (build_tree_rm(t->dir, deadline) != 0) {
		snprintf(why, whysz, "rm -rf %s failed", t->dir);
		return BF_ERR_IO;
	}
	return build_tree_stamp(t, why, whysz);
}

int
build_tree_begin(struct build_tree *t, const struct ajson *persist, time_t deadline,
    char *why, size_t whysz)
{
	const struct ajson *dir = ajson_get(persist, "dir"), *repo = ajson_get(persist, "repo");
	const char *pw = NULL, *last;
	struct stat sb;
	int r;

	t->lock_fd = -1;
	t->stamped = 0;
	t->dir[0] = t->stamp[0] = '\0';
	if (persist->type != AJSON_OBJ || dir == NULL || dir->type != AJSON_STR ||
	    dir->len >= sizeof(t->dir) || path_check_normal(dir->str, dir->len, &pw) != 0 ||
	    dir->str[0] != '/' || (last = strrchr(dir->str, '/')) == dir->str ||
	    strncmp(last + 1, BUILD_TREE_PREFIX, strlen(BUILD_TREE_PREFIX)) != 0 ||
	    repo == NULL || repo->type != AJSON_STR || repo->len == 0 || repo->len >= PATH_MAX ||
	    path_check_normal(repo->str, repo->len, &pw) != 0 || repo->str[0] != '/') {
		snprintf(why, whysz, "build: persist needs a dir (an absolute normal path, not at "
		    "the root, its name starting \"%s\") and an absolute normal repo",
		    BUILD_TREE_PREFIX);
		return BF_ERR_INVALID;
	}
	memcpy(t->dir, dir->str, dir->len + 1);
	snprintf(t->stamp, sizeof(t->stamp), "%s/%s", t->dir, BUILD_TREE_STAMP);
	if ((r = build_tree_parent(t, why, whysz)) != 0 ||
	    (r = build_tree_lock(t, deadline, why, whysz)) != 0)
		return r;
	build_tree_prune(t, deadline);
	if (lstat(t->stamp, &sb) == 0) {
		if ((r = build_tree_reset(t, "an earlier build here did not finish (its stamp "
		    BUILD_TREE_STAMP " is left)", deadline, why, whysz)) != 0)
			return r;
	} else if (lstat(t->dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		if ((r = build_tree_reset(t, "the tree is not a directory", deadline, why,
		    whysz)) != 0)
			return r;
	} else if ((r = build_tree_stamp(t, why, whysz)) != 0) {
		return r;
	}
	return build_tree_repo(t, repo->str, why, whysz);
}

void
build_tree_end(struct build_tree *t, int keep)
{
	if (t == NULL || t->lock_fd < 0)
		return;
	if (!keep && t->stamped)
		(void)unlink(t->stamp);
	close(t->lock_fd);
	t->lock_fd = -1;
}
