/*
 * ssh-exec.c: running one command over an SSH channel: stdin written and
 * both output streams read in one loop (neither side's window can stall
 * the other), the output cut into lines under their caps or captured
 * into buffers, and the exit status or signal read back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libssh2.h>

#include "buf.h"
#include "caps.h"
#include "clock.h"
#include "err.h"
#include "ssh.h"
#include "ssh-int.h"

#define SSH_READ_CHUNK		16384
#define SSH_PRE_MAX_EARLY	(64 * 1024)	/* a waiting agent's hello is < 8 KiB */

/* Where exec output goes: raw bytes per stream, then end of stream. */
struct ssh_sink {
	int (*data)(void *arg, int stream, const char *p, size_t n);
	int (*eof)(void *arg, int stream);
	void *arg;
};

/* Line splitting with a cut: a longer line is delivered cut, flagged
 * truncated, and its rest dropped up to the newline. stdout carries the
 * agent's JSON lines, whose log events may hold a whole escaped log line,
 * so it is cut at BF_MAX_AGENT_LINE; stderr at BF_MAX_LOG_LINE. */
struct ssh_lines {
	ssh_line_cb cb;
	void *arg;
	struct {
		char buf[BF_MAX_AGENT_LINE];
		size_t len;
		int dropping;
	} st[2];
};

static const size_t ssh_line_cap[2] = { BF_MAX_AGENT_LINE, BF_MAX_LOG_LINE };

static int
ssh_lines_data(void *arg, int stream, const char *p, size_t n)
{
	struct ssh_lines *l = arg;
	const char *nl;
	size_t seg, room;
	int r, i = stream == SSH_STDERR ? 1 : 0;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		seg = nl != NULL ? (size_t)(nl - p) : n;
		if (l->st[i].dropping) {
			if (nl != NULL)
				l->st[i].dropping = 0;
		} else {
			room = ssh_line_cap[i] - l->st[i].len;
			if (seg <= room) {
				memcpy(l->st[i].buf + l->st[i].len, p, seg);
				l->st[i].len += seg;
				if (nl != NULL) {
					r = l->cb(l->arg, stream, l->st[i].buf, l->st[i].len, 0);
					l->st[i].len = 0;
					if (r != 0)
						return r;
				}
			} else {
				memcpy(l->st[i].buf + l->st[i].len, p, room);
				l->st[i].dropping = nl == NULL;
				r = l->cb(l->arg, stream, l->st[i].buf, ssh_line_cap[i], 1);
				l->st[i].len = 0;
				if (r != 0)
					return r;
			}
		}
		if (nl == NULL)
			break;
		p += seg + 1;
		n -= seg + 1;
	}
	return 0;
}

static int
ssh_lines_eof(void *arg, int stream)
{
	struct ssh_lines *l = arg;
	int i = stream == SSH_STDERR ? 1 : 0, r = 0;

	if (l->st[i].len > 0 && !l->st[i].dropping)
		r = l->cb(l->arg, stream, l->st[i].buf, l->st[i].len, 0);
	l->st[i].len = 0;
	l->st[i].dropping = 0;
	return r;
}


/* Free a channel; bounded, and fast once the connection is dead. */
static void
ssh_channel_done(struct ssh_conn *c, LIBSSH2_CHANNEL *ch)
{
	struct ssh_dl dl;
	int rc, spins = 0;

	if (ch == NULL)
		return;
	ssh_dl_set(&dl, SSH_CLOSE_MS, 0);
	while ((rc = libssh2_channel_free(ch)) == LIBSSH2_ERROR_EAGAIN)
		if (!ssh_cleanup_retry(c, &dl, &spins))
			break;
}

void
ssh_pre_drop(struct ssh_conn *c)
{
	if (c == NULL || c->pre == NULL)
		return;
	ssh_channel_done(c, c->pre);
	c->pre = NULL;
	free(c->pre_cmd);
	c->pre_cmd = NULL;
}

int
ssh_exec_prestart(struct ssh_conn *c, const char *cmd, int timeout_ms, struct bf_diag *d)
{
	LIBSSH2_CHANNEL *ch = NULL;
	struct ssh_dl dl;
	char *dup = NULL;
	int r, rc;

	if (c == NULL || cmd == NULL)
		return BF_ERR_INVALID;
	if (c->pre != NULL && strcmp(c->pre_cmd, cmd) == 0 &&
	    bf_mono_ms() - c->pre_at < BF_PRESTART_KEEP_MS)
		return 0;
	ssh_pre_drop(c);
	if (!c->alive)
		return BF_ERR_LOST;
	if ((dup = strdup(cmd)) == NULL)
		return BF_ERR_ALLOC;
	ssh_dl_set(&dl, timeout_ms, 0);
	while ((ch = libssh2_channel_open_session(c->s)) == NULL) {
		rc = libssh2_session_last_errno(c->s);
		if (rc != LIBSSH2_ERROR_EAGAIN) {
			r = ssh_fail(c, rc, "opening a channel ahead", d);
			goto out;
		}
		if ((r = ssh_wait(c, &dl, "opening a channel ahead", d)) != 0)
			goto out;
	}
	while ((rc = libssh2_channel_exec(ch, cmd)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "starting a command ahead", d)) != 0)
			goto out;
	if (rc != 0) {
		r = ssh_fail(c, rc, "starting a command ahead", d);
		goto out;
	}
	c->pre = ch;
	c->pre_cmd = dup;
	c->pre_at = bf_mono_ms();
	ch = NULL;
	dup = NULL;
	r = 0;
out:
	ssh_channel_done(c, ch);
	free(dup);
	return r;
}

/*
 * The channel started ahead for cmd, if it is still running: what it
 * printed meanwhile is read into early[stream] (the agent's hello), then
 * its end of file is looked at. A channel that ended, failed to read, or
 * printed more than an agent's hello can is closed and NULL returned:
 * the caller starts cmd afresh, nothing having reached its sink.
 */
static LIBSSH2_CHANNEL *
ssh_pre_take(struct ssh_conn *c, const char *cmd, struct buf early[2])
{
	LIBSSH2_CHANNEL *ch = c->pre;
	char rbuf[SSH_READ_CHUNK];
	ssize_t n;
	int i;

	if (ch == NULL || strcmp(c->pre_cmd, cmd) != 0)
		return NULL;
	c->pre = NULL;
	/* near the agent's own limit (BF_AGENT_STEP_WAIT_S): it may be gone
	 * before the step reaches it, so start afresh */
	if (bf_mono_ms() - c->pre_at >= BF_PRESTART_KEEP_MS) {
		free(c->pre_cmd);
		c->pre_cmd = NULL;
		goto drop;
	}
	free(c->pre_cmd);
	c->pre_cmd = NULL;
	for (i = 0; i < 2; i++) {
		while ((n = libssh2_channel_read_ex(ch, i == 0 ? 0 : SSH_EXTENDED_DATA_STDERR, rbuf,
		    sizeof(rbuf))) > 0)
			if (buf_append(&early[i], rbuf, (size_t)n) != 0)
				goto drop;
		if (n < 0 && n != LIBSSH2_ERROR_EAGAIN)
			goto drop;
	}
	if (!libssh2_channel_eof(ch))
		return ch;
drop:
	ssh_channel_done(c, ch);
	buf_reset(&early[0]);
	buf_reset(&early[1]);
	return NULL;
}

static int
ssh_exec_sink(struct ssh_conn *c, const char *cmd, const void *stdin_data, size_t stdin_len,
    const struct ssh_sink *sink, int idle_timeout_ms, int total_timeout_ms, int *exit_status,
    struct bf_diag *d)
{
	static const int streams[2] = { SSH_STDOUT, SSH_STDERR };
	LIBSSH2_CHANNEL *ch = NULL;
	struct buf early[2];
	struct ssh_dl dl;
	char rbuf[SSH_READ_CHUNK];
	char *sig = NULL;
	size_t off = 0, siglen = 0;
	ssize_t n;
	int r, rc, i, progress, eof_sent = 0, fed = 0, done[2] = { 0, 0 };

	buf_init(&early[0], SSH_PRE_MAX_EARLY);
	buf_init(&early[1], SSH_PRE_MAX_EARLY);
	if (exit_status != NULL)
		*exit_status = -1;
	if (c == NULL || cmd == NULL) {
		bf_diag_set(d, NULL, "ssh_exec: no connection or no command");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (!c->alive) {
		bf_diag_set(d, NULL, "%s: connection already lost", c->where);
		r = BF_ERR_LOST;
		goto out;
	}
	if (stdin_data == NULL)
		stdin_len = 0;
	ssh_dl_set(&dl, total_timeout_ms, idle_timeout_ms);
	ssh_keepalive(c, idle_timeout_ms);
	/* The idle clock starts now, not at the last exec. */
	c->last_rx = bf_mono_ms();

	if ((ch = ssh_pre_take(c, cmd, early)) == NULL) {
		while ((ch = libssh2_channel_open_session(c->s)) == NULL) {
			rc = libssh2_session_last_errno(c->s);
			if (rc != LIBSSH2_ERROR_EAGAIN) {
				r = ssh_fail(c, rc, "opening a channel", d);
				goto out;
			}
			if ((r = ssh_wait(c, &dl, "opening a channel", d)) != 0)
				goto out;
		}
		while ((rc = libssh2_channel_exec(ch, cmd)) == LIBSSH2_ERROR_EAGAIN)
			if ((r = ssh_wait(c, &dl, "starting the command", d)) != 0)
				goto out;
		if (rc != 0) {
			r = ssh_fail(c, rc, "starting the command", d);
			goto out;
		}
	}

	/* Write stdin and read both streams in one loop, so neither side's
	 * window can fill and stall the other. Wait only when nothing moved. */
	while (!done[0] || !done[1]) {
		progress = 0;
		if (dl.total != 0 && bf_mono_ms() >= dl.total) {
			bf_diag_set(d, NULL, "%s: command ran over its %d ms limit", c->where,
			    total_timeout_ms);
			ssh_mark_dead(c);
			r = BF_ERR_TIMEOUT;
			goto out;
		}
		if (!eof_sent && off < stdin_len) {
			n = libssh2_channel_write(ch, (const char *)stdin_data + off, stdin_len - off);
			if (n > 0) {
				off += (size_t)n;
				progress = 1;
			} else if (n != LIBSSH2_ERROR_EAGAIN && n != 0) {
				if (ssh_rc_is_socket((int)n)) {
					r = ssh_fail(c, (int)n, "writing stdin", d);
					goto out;
				}
				/* The command stopped reading: drop the rest. */
				off = stdin_len;
				eof_sent = 1;
			}
		}
		if (!eof_sent && off == stdin_len) {
			rc = libssh2_channel_send_eof(ch);
			if (rc == 0) {
				eof_sent = 1;
				progress = 1;
			} else if (rc != LIBSSH2_ERROR_EAGAIN) {
				if (ssh_rc_is_socket(rc)) {
					r = ssh_fail(c, rc, "sending EOF", d);
					goto out;
				}
				eof_sent = 1;
			}
		}
		/* A command started ahead printed while it waited (the agent's
		 * hello): that goes to the sink after the first write of stdin
		 * (the sink may take a while; the step need not wait for it),
		 * and before anything newer. */
		if (!fed) {
			fed = 1;
			for (i = 0; i < 2; i++)
				if (early[i].len > 0 && (r = sink->data(sink->arg, streams[i],
				    early[i].data, early[i].len)) != 0)
					goto aborted;
		}
		for (i = 0; i < 2; i++) {
			if (done[i])
				continue;
			n = libssh2_channel_read_ex(ch, i == 0 ? 0 : SSH_EXTENDED_DATA_STDERR, rbuf,
			    sizeof(rbuf));
			if (n > 0) {
				progress = 1;
				if ((r = sink->data(sink->arg, streams[i], rbuf, (size_t)n)) != 0)
					goto aborted;
			} else if (n == 0) {
				if (libssh2_channel_eof(ch)) {
					done[i] = 1;
					progress = 1;
					if ((r = sink->eof(sink->arg, streams[i])) != 0)
						goto aborted;
				}
			} else if (n != LIBSSH2_ERROR_EAGAIN) {
				r = ssh_fail(c, (int)n, "reading output", d);
				goto out;
			}
		}
		if (!progress && (r = ssh_wait(c, &dl, "waiting for the command", d)) != 0)
			goto out;
	}
	/* The exit status comes before the peer's CLOSE, which can come after
	 * EOF when the command closed its output early. */
	while ((rc = libssh2_channel_wait_closed(ch)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "waiting for the exit status", d)) != 0)
			goto out;
	if (rc != 0) {
		r = ssh_fail(c, rc, "waiting for the exit status", d);
		goto out;
	}
	if (libssh2_channel_get_exit_signal(ch, &sig, &siglen, NULL, NULL, NULL, NULL) == 0 &&
	    sig != NULL && siglen > 0) {
		bf_diag_set(d, NULL, "%s: command killed by signal %.*s", c->where,
		    (int)(siglen > 32 ? 32 : siglen), sig);
		if (exit_status != NULL)
			*exit_status = -1;
	} else if (exit_status != NULL) {
		*exit_status = libssh2_channel_get_exit_status(ch);
	}
	r = 0;
	goto out;
aborted:
	/* The sink gave up: leave the channel, keep the session if we can. */
	if (d != NULL && d->msg[0] == '\0')
		bf_diag_set(d, NULL, "%s: output handler stopped the command: %s", c->where,
		    bf_err_str(r));
out:
	if (sig != NULL)
		libssh2_free(c->s, sig);
	if (ch != NULL)
		ssh_channel_done(c, ch);
	buf_free(&early[0]);
	buf_free(&early[1]);
	return r;
}

int
ssh_exec(struct ssh_conn *c, const char *cmd, const void *stdin_data, size_t stdin_len,
    ssh_line_cb cb, void *arg, int idle_timeout_ms, int total_timeout_ms,
    int *exit_status, struct bf_diag *d)
{
	struct ssh_lines *l = NULL;
	struct ssh_sink sink;
	int r;

	if (cb == NULL) {
		bf_diag_set(d, NULL, "ssh_exec: no line callback");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	l->cb = cb;
	l->arg = arg;
	sink.data = ssh_lines_data;
	sink.eof = ssh_lines_eof;
	sink.arg = l;
	r = ssh_exec_sink(c, cmd, stdin_data, stdin_len, &sink, idle_timeout_ms,
	    total_timeout_ms, exit_status, d);
out:
	free(l);
	return r;
}

struct ssh_capture {
	struct buf *out, *err;
	int over;
};

/* Past a cap the output is drained and dropped, so the session survives;
 * the exec then fails with BF_ERR_TOOBIG. */
static int
ssh_capture_data(void *arg, int stream, const char *p, size_t n)
{
	struct ssh_capture *cap = arg;
	struct buf *b = stream == SSH_STDOUT ? cap->out : cap->err;
	int r;

	if (b == NULL)
		return 0;
	if ((r = buf_append(b, p, n)) == BF_ERR_TOOBIG)
		cap->over |= stream;
	else if (r != 0)
		return r;
	return 0;
}

static size_t
ssh_buf_max(const struct buf *b)
{
	return b->max != 0 ? b->max : BF_MAX_AGENT_OUTPUT;
}

static int
ssh_capture_eof(void *arg, int stream)
{
	return 0;
}

int
ssh_exec_capture(struct ssh_conn *c, const char *cmd, struct buf *out, struct buf *err,
    int timeout_ms, int *exit_status, struct bf_diag *d)
{
	struct ssh_capture cap;
	struct ssh_sink sink;
	int r;

	cap.out = out;
	cap.err = err;
	cap.over = 0;
	sink.data = ssh_capture_data;
	sink.eof = ssh_capture_eof;
	sink.arg = &cap;
	if ((r = ssh_exec_sink(c, cmd, NULL, 0, &sink, timeout_ms, timeout_ms, exit_status,
	    d)) != 0)
		return r;
	if (cap.over != 0) {
		bf_diag_set(d, NULL, "%s: %s of the command is over its cap of %zu bytes",
		    c->where, (cap.over & SSH_STDOUT) ? "stdout" : "stderr",
		    ssh_buf_max((cap.over & SSH_STDOUT) ? out : err));
		return BF_ERR_TOOBIG;
	}
	return 0;
}
