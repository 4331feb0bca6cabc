/*
 * build.c: `benchfleet-agent build`, a kernel build's commands on a
 * builder (issue 18). The coordinator sends, as JSON on stdin, the argv
 * arrays of common/kbuild.h's plan; each runs with execvp, never through
 * a shell, in order, under one deadline, its output streamed as log lines
 * (capped), until one fails. Then the named files go back as artifacts
 * (the profile's chunk protocol, docs/agent-protocol.md).
 *
 * {"cmds": [{"what": "tree", "argv": ["git", ...], "capture": true,
 *            "write": {"path": "/abs", "text": "..."}}],   write: before it
 *  "timeout_s": 3600, "artifacts": [{"name": "image", "path": "/abs"}],
 *  "max_artifact": bytes}
 *
 * Lines: log (iteration 0, stream stdout/stderr), build_value {what,
 * value} for a captured command (its first stdout line), build_failed
 * {what, index, status | "timeout"}, artifact/artifact_end, done.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ajson.h"
#include "b64.h"
#include "build.h"
#include "buf.h"
#include "caps.h"
#include "emit.h"
#include "err.h"
#include "path.h"
#include "sha256.h"

#define BUILD_MAX_CMDS		64
#define BUILD_MAX_ARTIFACTS	8
#define BUILD_MAX_LOG_LINES	20000		/* a build's lines sent; the rest counted */
#define BUILD_MAX_TIMEOUT_S	(6 * 3600)
#define BUILD_MAX_ARTIFACT	((int64_t)1 << 30)

struct build_out {
	unsigned long lines, dropped;
	char value[256];	/* the first stdout line of a captured command */
	int have_value;
};

static int
build_value_line(const char *what, const char *value)
{
	struct buf b;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if ((r = buf_puts(&b, "{\"type\":\"build_value\",\"what\":")) != 0 ||
	    (r = ajson_put_str(&b, what, strlen(what))) != 0 ||
	    (r = buf_puts(&b, ",\"value\":")) != 0 ||
	    (r = ajson_put_str(&b, value, strlen(value))) != 0 || (r = buf_puts(&b, "}")) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}

static int
build_failed_line(const char *what, int index, int status, const char *why)
{
	struct buf b;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if ((r = buf_puts(&b, "{\"type\":\"build_failed\",\"what\":")) != 0 ||
	    (r = ajson_put_str(&b, what, strlen(what))) != 0 ||
	    (r = buf_printf(&b, ",\"index\":%d,\"status\":", index)) != 0 ||
	    (r = why != NULL ? ajson_put_str(&b, why, strlen(why)) :
	    buf_printf(&b, "%d", status)) != 0 || (r = buf_puts(&b, "}")) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}

/* The complete lines of acc go out as log lines; a partial one waits. */
static void
build_lines(struct buf *acc, const char *stream, int capture, struct build_out *o, int flush)
{
	size_t off = 0, len;
	char *nl;

	while (off < acc->len) {
		nl = memchr(acc->data + off, '\n', acc->len - off);
		if (nl == NULL && !flush && acc->len - off < BF_MAX_LOG_LINE)
			break;
		len = nl != NULL ? (size_t)(nl - (acc->data + off)) : acc->len - off;
		if (capture && !o->have_value && strcmp(stream, "stdout") == 0) {
			snprintf(o->value, sizeof(o->value), "%.*s", (int)len, acc->data + off);
			o->have_value = 1;
		}
		if (o->lines < BUILD_MAX_LOG_LINES) {
			(void)emit_log(0, stream, acc->data + off, len < BF_MAX_LOG_LINE ? len :
			    BF_MAX_LOG_LINE);
			o->lines++;
		} else {
			o->dropped++;
		}
		off += len + (nl != NULL);
	}
	memmove(acc->data, acc->data + off, acc->len - off);
	acc->len -= off;
}

/* Run argv to its end or the deadline: 0 exit 0, else status > 0, -1 timeout. */
static int
build_exec(char **argv, int capture, time_t deadline, struct build_out *o)
{
	static const char *const names[2] = { "stdout", "stderr" };
	struct pollfd pf[2];
	struct buf acc[2];
	char chunk[8192];
	int p[2][2] = { { -1, -1 }, { -1, -1 } }, i, st = 0, open_fds = 2, ret;
	ssize_t n;
	pid_t pid;

	for (i = 0; i < 2; i++)
		buf_init(&acc[i], BF_MAX_LOG_LINE + sizeof(chunk));
	if (pipe2(p[0], O_CLOEXEC) != 0 || pipe2(p[1], O_CLOEXEC) != 0) {
		ret = 127;
		goto out;
	}
	if ((pid = fork()) < 0) {
		ret = 127;
		goto out;
	}
	if (pid == 0) {
		int dn = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		dup2(dn, 0);
		dup2(p[0][1], 1);
		dup2(p[1][1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid);
	close(p[0][1]);
	close(p[1][1]);
	p[0][1] = p[1][1] = -1;
	for (i = 0; i < 2; i++)
		pf[i] = (struct pollfd){ .fd = p[i][0], .events = POLLIN };
	while (open_fds > 0) {
		time_t now = time(NULL);

		if (now >= deadline || poll(pf, 2, (int)(deadline - now) * 1000) == 0) {
			kill(-pid, SIGKILL);
			(void)waitpid(pid, &st, 0);
			ret = -1;
			goto out;
		}
		for (i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || pf[i].revents == 0)
				continue;
			n = read(pf[i].fd, chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				build_lines(&acc[i], names[i], capture, o, 1);
				pf[i].fd = -1;
				open_fds--;
				continue;
			}
			/* build_lines leaves under BF_MAX_LOG_LINE bytes: a chunk fits */
			if (buf_append(&acc[i], chunk, (size_t)n) != 0) {
				ret = 127;
				kill(-pid, SIGKILL);
				(void)waitpid(pid, &st, 0);
				goto out;
			}
			build_lines(&acc[i], names[i], capture, o, 0);
		}
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ret = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
out:
	for (i = 0; i < 2; i++) {
		if (p[i][0] >= 0)
			close(p[i][0]);
		if (p[i][1] >= 0)
			close(p[i][1]);
		buf_free(&acc[i]);
	}
	return ret;
}

/* A command's "write": a new file (never an existing one, never through a
 * symlink) at a normal path. */
static int
build_write(const struct ajson *w, char *why, size_t whysz)
{
	const struct ajson *path = ajson_get(w, "path"), *text = ajson_get(w, "text");
	const char *pw = NULL;
	size_t off = 0;
	ssize_t n;
	int fd;

	if (path == NULL || path->type != AJSON_STR || text == NULL || text->type != AJSON_STR ||
	    path_check_normal(path->str, path->len, &pw) != 0) {
		snprintf(why, whysz, "write: a normal path and a text are required");
		return BF_ERR_INVALID;
	}
	if ((fd = open(path->str, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644)) < 0) {
		snprintf(why, whysz, "write %s: %s", path->str, strerror(errno));
		return BF_ERR_SYS;
	}
	while (off < text->len) {
		if ((n = write(fd, text->str + off, text->len - off)) < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			snprintf(why, whysz, "write %s: %s", path->str, strerror(errno));
			return BF_ERR_IO;
		}
		off += (size_t)n;
	}
	return close(fd) == 0 ? 0 : BF_ERR_IO;
}

static int
build_end_line(const char *name, size_t bytes, const char *sha, const char *dropped)
{
	struct buf b;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if ((r = buf_puts(&b, "{\"type\":\"artifact_end\",\"name\":")) != 0 ||
	    (r = ajson_put_str(&b, name, strlen(name))) != 0 ||
	    (r = buf_printf(&b, ",\"bytes\":%zu", bytes)) != 0 ||
	    (sha != NULL && (r = buf_printf(&b, ",\"sha256\":\"%s\"", sha)) != 0) ||
	    (dropped != NULL && ((r = buf_puts(&b, ",\"dropped\":")) != 0 ||
	    (r = ajson_put_str(&b, dropped, strlen(dropped))) != 0)) ||
	    (r = buf_puts(&b, "}")) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}

/* One file as an artifact: chunks, then its end line (or why not). */
static int
build_send(const char *name, const char *path, int64_t max)
{
	char chunk[BF_ARTIFACT_CHUNK], hex[65], why[160];
	struct sha256_ctx h;
	struct stat sb;
	struct buf b;
	uint8_t dig[32];
	size_t off = 0, seq = 0;
	ssize_t n;
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 || fstat(fd, &sb) != 0 ||
	    !S_ISREG(sb.st_mode) || sb.st_size > max) {
		snprintf(why, sizeof(why), "%s: %s", path, fd < 0 ? strerror(errno) :
		    "not a regular file within the artifact cap");
		if (fd >= 0)
			close(fd);
		return build_end_line(name, 0, NULL, why);
	}
	sha256_init(&h);
	buf_init(&b, EMIT_MAX_LINE);
	while (off < (size_t)sb.st_size) {
		if ((n = read(fd, chunk, sizeof(chunk))) < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = build_end_line(name, (size_t)sb.st_size, NULL, "the file shrank");
			goto out;
		}
		sha256_update(&h, chunk, (size_t)n);
		buf_reset(&b);
		if ((r = buf_puts(&b, "{\"type\":\"artifact\",\"name\":")) != 0 ||
		    (r = ajson_put_str(&b, name, strlen(name))) != 0 ||
		    (r = buf_printf(&b, ",\"seq\":%zu,\"data\":\"", seq++)) != 0 ||
		    (r = b64_encode(&b, chunk, (size_t)n)) != 0 || (r = buf_puts(&b, "\"}")) != 0 ||
		    (r = emit_line(&b)) != 0)
			goto out;
		off += (size_t)n;
	}
	sha256_final(&h, dig);
	sha256_tohex(dig, hex);
	r = build_end_line(name, off, hex, NULL);
out:
	close(fd);
	buf_free(&b);
	return r;
}

static int
build_bad(const char *msg)
{
	emit_error(msg);
	emit_done(0, 0);
	return 2;
}

int
build_run(const struct ajson *doc)
{
	const struct ajson *cmds = ajson_get(doc, "cmds"), *arts = ajson_get(doc, "artifacts");
	const struct ajson *to = ajson_get(doc, "timeout_s"), *mx = ajson_get(doc, "max_artifact");
	char *argv[BF_MAX_ARGV + 1], why[256];
	struct build_out o;
	time_t deadline;
	size_t i, j;
	int st;

	if (doc == NULL || doc->type != AJSON_OBJ || cmds == NULL || cmds->type != AJSON_ARR ||
	    cmds->n == 0 || cmds->n > BUILD_MAX_CMDS || to == NULL || !to->is_int ||
	    to->i < 1 || to->i > BUILD_MAX_TIMEOUT_S ||
	    (arts != NULL && (arts->type != AJSON_ARR || arts->n > BUILD_MAX_ARTIFACTS)) ||
	    (mx != NULL && (!mx->is_int || mx->i < 1 || mx->i > BUILD_MAX_ARTIFACT)))
		return build_bad("build: cmds (1..64), timeout_s, artifacts (<= 8) and "
		    "max_artifact are required to be well formed");
	memset(&o, 0, sizeof(o));
	deadline = time(NULL) + (time_t)to->i;
	for (i = 0; i < cmds->n; i++) {
		const struct ajson *c = cmds->items[i], *what = ajson_get(c, "what");
		const struct ajson *av = ajson_get(c, "argv"), *cap = ajson_get(c, "capture");
		const struct ajson *w = ajson_get(c, "write"), *ix = ajson_get(c, "index");
		const char *wn = what != NULL && what->type == AJSON_STR ? what->str : "command";
		int index = ix != NULL && ix->is_int && ix->i >= 0 && ix->i < 1000 ? (int)ix->i : -1;

		if (av == NULL || av->type != AJSON_ARR || av->n == 0 || av->n > BF_MAX_ARGV)
			return build_bad("build: each command needs an argv of 1..256 strings");
		for (j = 0; j < av->n; j++) {
			if (av->items[j]->type != AJSON_STR)
				return build_bad("build: argv elements are strings");
			argv[j] = av->items[j]->str;
		}
		argv[av->n] = NULL;
		if (w != NULL && build_write(w, why, sizeof(why)) != 0) {
			emit_error(why);
			build_failed_line(wn, index, 127, why);
			emit_done(0, 0);
			return 1;
		}
		o.have_value = 0;
		st = build_exec(argv, cap != NULL && cap->type == AJSON_BOOL && cap->boolean,
		    deadline, &o);
		if (st != 0) {
			build_failed_line(wn, index, st, st < 0 ? "timeout" : NULL);
			emit_done(0, 0);
			return 1;
		}
		if (cap != NULL && cap->type == AJSON_BOOL && cap->boolean)
			build_value_line(wn, o.have_value ? o.value : "");
	}
	if (o.dropped > 0)
		emit_dropped(0, "stdout", o.dropped);
	for (i = 0; arts != NULL && i < arts->n; i++) {
		const struct ajson *a = arts->items[i], *nm = ajson_get(a, "name");
		const struct ajson *pa = ajson_get(a, "path");
		const char *pw = NULL;

		if (nm == NULL || nm->type != AJSON_STR || nm->len == 0 || nm->len > 15 ||
		    pa == NULL || pa->type != AJSON_STR || path_check_normal(pa->str, pa->len,
		    &pw) != 0)
			return build_bad("build: an artifact is a name (1..15 bytes) and a "
			    "normal path");
		if (build_send(nm->str, pa->str, mx != NULL ? mx->i : BUILD_MAX_ARTIFACT) != 0)
			return 1;
	}
	emit_done(1, 0);
	return 0;
}

int
build_main(void)
{
	struct ajson *doc = NULL;
	struct bf_diag d;
	struct buf in;
	char chunk[8192];
	ssize_t n;
	int r;

	buf_init(&in, BF_MAX_STEP);
	while ((n = read(STDIN_FILENO, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || buf_append(&in, chunk, (size_t)n) != 0) {
			buf_free(&in);
			return build_bad("build: the document is unreadable or over its cap");
		}
	}
	if (ajson_parse(in.data != NULL ? in.data : "", in.len, &doc, &d) != 0) {
		buf_free(&in);
		return build_bad(d.msg);
	}
	buf_free(&in);
	r = build_run(doc);
	ajson_free(doc);
	return r;
}
