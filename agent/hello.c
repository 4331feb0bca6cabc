/*
 * hello.c: machine identity for the hello line. Everything is read from
 * uname(2) and small /proc files; a file that cannot be read gives null.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "emit.h"
#include "err.h"
#include "hello.h"
#include "ajson.h"
#include "caps.h"

#ifndef BF_VERSION
#define BF_VERSION "0.0.0"
#endif

/* /proc/cmdline is at most COMMAND_LINE_SIZE (2 KiB on x86, 4 KiB on arm64). */
#define HELLO_MAX_FILE	BF_MAX_STR

/* Contents of a small file with trailing newlines removed; BF_ERR_IO if unreadable. */
static int
hello_read(const char *path, char *dst, size_t dstsz, size_t *lenp)
{
	size_t len = 0;
	ssize_t n;
	int fd = -1, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		r = BF_ERR_IO;
		goto out;
	}
	while (len < dstsz) {
		n = read(fd, dst + len, dstsz - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = BF_ERR_IO;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	while (len > 0 && (dst[len - 1] == '\n' || dst[len - 1] == '\0'))
		len--;
	*lenp = len;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	return r;
}

static int
hello_put_file(struct buf *b, const char *key, const char *path)
{
	char data[HELLO_MAX_FILE];
	size_t len;
	int r;

	if ((r = buf_printf(b, ",\"%s\":", key)) != 0)
		return r;
	if (hello_read(path, data, sizeof(data), &len) != 0)
		r = buf_puts(b, "null");
	else
		r = ajson_put_str(b, data, len);
	return r;
}

int
hello_build(struct buf *b)
{
	struct utsname u;
	char host[BF_MAX_HOST + 2];
	int r;

	if (uname(&u) != 0)
		return BF_ERR_SYS;
	/* gethostname may leave the name unterminated when it is cut */
	memset(host, 0, sizeof(host));
	if (gethostname(host, sizeof(host) - 1) != 0)
		memcpy(host, u.nodename, strnlen(u.nodename, sizeof(u.nodename)));
	if ((r = buf_puts(b, "{\"type\":\"hello\",\"agent\":")) != 0 ||
	    (r = ajson_put_str(b, BF_VERSION, strlen(BF_VERSION))) != 0 ||
	    (r = buf_puts(b, ",\"hostname\":")) != 0 ||
	    (r = ajson_put_str(b, host, strlen(host))) != 0 ||
	    (r = buf_puts(b, ",\"kernel\":")) != 0 ||
	    (r = ajson_put_str(b, u.release, strnlen(u.release, sizeof(u.release)))) != 0 ||
	    (r = buf_puts(b, ",\"arch\":")) != 0 ||
	    (r = ajson_put_str(b, u.machine, strnlen(u.machine, sizeof(u.machine)))) != 0 ||
	    (r = hello_put_file(b, "boot_id", "/proc/sys/kernel/random/boot_id")) != 0 ||
	    (r = hello_put_file(b, "cmdline", "/proc/cmdline")) != 0 ||
	    (r = buf_printf(b, ",\"pid\":%ld}", (long)getpid())) != 0)
		return r;
	return 0;
}

int
hello_emit(void)
{
	struct buf b;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if ((r = hello_build(&b)) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}
