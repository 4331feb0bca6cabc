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
 * A command may also carry "unless_exists": a path (skipped when it
 * exists), "prep": true (part of the tree's preparation: skipped when
 * "expect" finds the tree as the prep left it, else run and then checked
 * against expect) and "reuse": true (its failure in a kept tree resets
 * the tree and runs everything again, once). "persist" and "expect":
 * build-tree.h, docs/agent-protocol.md.
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
#include "build-tree.h"
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
build_cmd(char **argv, time_t deadline)
{
	struct build_out o;

	memset(&o, 0, sizeof(o));
	return build_exec(argv, 0, deadline, &o);
}

/* The command's argv into argv (pointing into the document). */
static int
build_argv(const struct ajson *av, char **argv)
{
	size_t j;

	if (av == NULL || av->type != AJSON_ARR || av->n == 0 || av->n > BF_MAX_ARGV)
		return BF_ERR_INVALID;
	for (j = 0; j < av->n; j++) {
		if (av->items[j]->type != AJSON_STR)
			return BF_ERR_INVALID;
		argv[j] = av->items[j]->str;
	}
	argv[av->n] = NULL;
	return 0;
}

static int
build_flag(const struct ajson *c, const char *name)
{
	const struct ajson *v = ajson_get(c, name);

	return v != NULL && v->type == AJSON_BOOL && v->boolean;
}

/*
 * "expect" of a build document: {"argv": the tree's command, "value": the
 * tree id the prep printed, "file": the .config, "sha256": the prep's}.
 * 0 when the tree and the .config are still as the prep left them.
 */
static int
build_expect(const struct ajson *e, time_t deadline, struct build_out *o, char *why,
    size_t whysz)
{
	const struct ajson *val = ajson_get(e, "value"), *file = ajson_get(e, "file");
	const struct ajson *sha = ajson_get(e, "sha256");
	char *argv[BF_MAX_ARGV + 1], got[65];
	int st;

	if (build_argv(ajson_get(e, "argv"), argv) != 0 || val == NULL ||
	    val->type != AJSON_STR || file == NULL || file->type != AJSON_STR ||
	    sha == NULL || sha->type != AJSON_STR) {
		snprintf(why, whysz, "a malformed expect");
		return -1;
	}
	o->have_value = 0;
	if ((st = build_exec(argv, 1, deadline, o)) != 0 || !o->have_value ||
	    strcmp(o->value, val->str) != 0) {
		snprintf(why, whysz, "the tree is %.64s, the prep's was %.64s",
		    st == 0 && o->have_value ? o->value : "unreadable", val->str);
		return 1;
	}
	if (sha256_file(file->str, got) != 0 || strcmp(got, sha->str) != 0) {
		snprintf(why, whysz, "%.200s is not the prep's (sha256 %.64s)", file->str, sha->str);
		return 1;
	}
	return 0;
}

enum build_end { BUILD_OK, BUILD_FAILED, BUILD_RETRY, BUILD_MALFORMED };

struct build_ctx {
	const struct ajson *cmds, *expect;
	time_t deadline;
	int skip_prep;		/* the tree is as the prep left it: its commands skipped */
	int can_retry;		/* a "reuse" command's failure may reset the tree */
	int killed;		/* a command was killed at the deadline */
	struct build_out o;
};

/* Every command in order, until one fails; the failure said unless it
 * is BUILD_RETRY (a "reuse" command failed, the tree can be reset). */
static enum build_end
build_cmds(struct build_ctx *x)
{
	char *argv[BF_MAX_ARGV + 1], why[300];
	const struct ajson *cmds = x->cmds;
	struct stat sb;
	size_t i;
	int st, prepped = 0, checked = x->expect == NULL || x->skip_prep;

	for (i = 0; i < cmds->n; i++) {
		const struct ajson *c = cmds->items[i], *what = ajson_get(c, "what");
		const struct ajson *w = ajson_get(c, "write"), *ix = ajson_get(c, "index");
		const struct ajson *ue = ajson_get(c, "unless_exists");
		const char *wn = what != NULL && what->type == AJSON_STR ? what->str : "command";
		int index = ix != NULL && ix->is_int && ix->i >= 0 && ix->i < 1000 ? (int)ix->i : -1;
		int capture = build_flag(c, "capture"), prep = build_flag(c, "prep");

		if (build_argv(ajson_get(c, "argv"), argv) != 0) {
			build_bad("build: each command needs an argv of 1..256 strings");
			return BUILD_MALFORMED;
		}
		if (prep && x->skip_prep)
			continue;
		if (!prep && prepped && !checked) {
			checked = 1;
			if (build_expect(x->expect, x->deadline, &x->o, why, sizeof(why)) != 0) {
				build_failed_line("expect", -1, 127, why);
				emit_done(0, 0);
				return BUILD_FAILED;
			}
		}
		prepped |= prep;
		if (ue != NULL && ue->type == AJSON_STR && lstat(ue->str, &sb) == 0)
			continue;
		if (w != NULL && build_write(w, why, sizeof(why)) != 0) {
			emit_error(why);
			build_failed_line(wn, index, 127, why);
			emit_done(0, 0);
			return BUILD_FAILED;
		}
		x->o.have_value = 0;
		if ((st = build_exec(argv, capture, x->deadline, &x->o)) != 0) {
			if (st > 0 && x->can_retry && build_flag(c, "reuse")) {
				build_say("benchfleet-agent: %s failed with status %d in the kept tree",
				    wn, st);
				return BUILD_RETRY;
			}
			x->killed = st < 0;
			build_failed_line(wn, index, st, st < 0 ? "timeout" : NULL);
			emit_done(0, 0);
			return BUILD_FAILED;
		}
		if (capture)
			build_value_line(wn, x->o.have_value ? x->o.value : "");
	}
	if (prepped && !checked && build_expect(x->expect, x->deadline, &x->o, why,
	    sizeof(why)) != 0) {
		build_failed_line("expect", -1, 127, why);
		emit_done(0, 0);
		return BUILD_FAILED;
	}
	return BUILD_OK;
}

static int
build_check(const struct ajson *doc)
{
	const struct ajson *cmds = ajson_get(doc, "cmds"), *arts = ajson_get(doc, "artifacts");
	const struct ajson *to = ajson_get(doc, "timeout_s"), *mx = ajson_get(doc, "max_artifact");
	const struct ajson *ex = ajson_get(doc, "expect"), *ue;
	const char *pw = NULL;
	size_t i;

	if (doc == NULL || doc->type != AJSON_OBJ || cmds == NULL || cmds->type != AJSON_ARR ||
	    cmds->n == 0 || cmds->n > BUILD_MAX_CMDS || to == NULL || !to->is_int ||
	    to->i < 1 || to->i > BUILD_MAX_TIMEOUT_S ||
	    (arts != NULL && (arts->type != AJSON_ARR || arts->n > BUILD_MAX_ARTIFACTS)) ||
	    (mx != NULL && (!mx->is_int || mx->i < 1 || mx->i > BUILD_MAX_ARTIFACT)) ||
	    (ex != NULL && ex->type != AJSON_OBJ))
		return BF_ERR_INVALID;
	for (i = 0; i < cmds->n; i++)
		if ((ue = ajson_get(cmds->items[i], "unless_exists")) != NULL &&
		    (ue->type != AJSON_STR || path_check_normal(ue->str, ue->len, &pw) != 0))
			return BF_ERR_INVALID;
	return 0;
}

int
build_run(const struct ajson *doc)
{
	const struct ajson *arts = ajson_get(doc, "artifacts"), *mx = ajson_get(doc, "max_artifact");
	const struct ajson *persist = ajson_get(doc, "persist");
	struct build_tree t = { .lock_fd = -1 };
	struct build_ctx x;
	enum build_end end;
	char why[512];
	size_t i;
	int r, ret = 1;

	if (build_check(doc) != 0)
		return build_bad("build: cmds (1..64), timeout_s, artifacts (<= 8), max_artifact, "
		    "expect and unless_exists are required to be well formed");
	memset(&x, 0, sizeof(x));
	x.cmds = ajson_get(doc, "cmds");
	x.expect = ajson_get(doc, "expect");
	x.deadline = time(NULL) + (time_t)ajson_get(doc, "timeout_s")->i;
	if (persist != NULL && (r = build_tree_begin(&t, persist, x.deadline, why,
	    sizeof(why))) != 0) {
		if (r == BF_ERR_INVALID) {
			ret = build_bad(why);
			goto out;
		}
		emit_error(why);
		build_failed_line("tree", -1, 127, r == BF_ERR_TIMEOUT ? "timeout" : why);
		emit_done(0, 0);
		goto out;
	}
	x.can_retry = persist != NULL;
	if (x.expect != NULL) {
		x.skip_prep = build_expect(x.expect, x.deadline, &x.o, why, sizeof(why)) == 0;
		build_say(x.skip_prep ? "benchfleet-agent: the tree and .config are as the prep "
		    "left them" : "benchfleet-agent: preparing again: %s", why);
	}
	while ((end = build_cmds(&x)) == BUILD_RETRY) {
		x.can_retry = 0;
		x.skip_prep = 0;
		if ((r = build_tree_reset(&t, "the kept tree cannot be reused", x.deadline, why,
		    sizeof(why))) != 0) {
			emit_error(why);
			build_failed_line("tree", -1, 127, why);
			emit_done(0, 0);
			goto out;
		}
	}
	if (end == BUILD_MALFORMED) {
		ret = 2;
		goto out;
	}
	if (end == BUILD_FAILED)
		goto out;
	if (x.o.dropped > 0)
		emit_dropped(0, "stdout", x.o.dropped);
	for (i = 0; arts != NULL && i < arts->n; i++) {
		const struct ajson *a = arts->items[i], *nm = ajson_get(a, "name");
		const struct ajson *pa = ajson_get(a, "path");
		const char *pw = NULL;

		if (nm == NULL || nm->type != AJSON_STR || nm->len == 0 || nm->len > 15 ||
		    pa == NULL || pa->type != AJSON_STR || path_check_normal(pa->str, pa->len,
		    &pw) != 0) {
			ret = build_bad("build: an artifact is a name (1..15 bytes) and a "
			    "normal path");
			goto out;
		}
		if (build_send(nm->str, pa->str, mx != NULL ? mx->i : BUILD_MAX_ARTIFACT) != 0)
			goto out;
	}
	emit_done(1, 0);
	ret = 0;
out:
	build_tree_end(&t, x.killed);
	return ret;
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
