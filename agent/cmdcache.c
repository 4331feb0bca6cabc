/*
 * cmdcache.c: a command's one-line answer about a binary, remembered
 * between steps (cmdcache.h says why and how it is keyed). The file is the
 * key line, then the answer line; it is read like any untrusted input:
 * capped, not through a symbolic link, and anything but exactly those two
 * lines is a miss.
 */
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
#include "err.h"

#define CMDCACHE_MAX_FILE	(CMDCACHE_MAX_KEY + CMDCACHE_MAX_VALUE + 2)

int
cmdcache_key(const char *bin, char *key, size_t ksz)
{
	char real[PATH_MAX];
	struct stat sb;

	if (realpath(bin, real) == NULL || strchr(real, '\n') != NULL ||
	    stat(real, &sb) != 0 || !S_ISREG(sb.st_mode))
		return BF_ERR_NOTFOUND;
	if ((size_t)snprintf(key, ksz, "benchfleet-cmd-cache 1 %llu:%llu:%lld:%lld.%09ld:"
	    "%lld.%09ld %s\n", (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino,
	    (long long)sb.st_size, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec,
	    (long long)sb.st_ctim.tv_sec, sb.st_ctim.tv_nsec, real) >= ksz)
		return BF_ERR_NOTFOUND;
	return 0;
}

int
cmdcache_get(const char *file, const char *key, char *val, size_t vsz)
{
	char data[CMDCACHE_MAX_FILE + 1];
	size_t klen = strlen(key), len = 0, vlen;
	ssize_t got;
	int fd;

	if (file == NULL || (fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) < 0)
		return BF_ERR_NOTFOUND;
	while (len < sizeof(data)) {
		got = read(fd, data + len, sizeof(data) - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	/* the whole file: one line of key, one of answer, nothing more */
	if (len >= sizeof(data) || len <= klen || memcmp(data, key, klen) != 0)
		return BF_ERR_NOTFOUND;
	vlen = len - klen - 1;
	if (data[len - 1] != '\n' || vlen > CMDCACHE_MAX_VALUE || vlen >= vsz ||
	    memchr(data + klen, '\n', vlen) != NULL || memchr(data + klen, '\0', vlen) != NULL)
		return BF_ERR_NOTFOUND;
	memcpy(val, data + klen, vlen);
	val[vlen] = '\0';
	return 0;
}

void
cmdcache_put(const char *file, const char *key, const char *val)
{
	char tmp[PATH_MAX + 32];
	struct buf out;
	ssize_t w;
	int fd;

	buf_init(&out, CMDCACHE_MAX_FILE);
	if (file == NULL || strlen(val) > CMDCACHE_MAX_VALUE || strchr(val, '\n') != NULL ||
	    strlen(key) > CMDCACHE_MAX_KEY || buf_printf(&out, "%s%s\n", key, val) != 0 ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", file, (long)getpid()) >= sizeof(tmp))
		goto out;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		goto out;
	w = write(fd, out.data, out.len);
	if (close(fd) != 0 || w < 0 || (size_t)w != out.len || rename(tmp, file) != 0)
		(void)unlink(tmp);
out:
	buf_free(&out);
}
