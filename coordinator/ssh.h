/*
 * ssh.h: the SSH transport to lab machines, on libssh2. Host keys are
 * pinned in a known_hosts file: an unknown or changed key refuses the
 * machine (BF_ERR_HOSTKEY) and says which. Authentication is by key only.
 * All I/O is non-blocking with select() on the session's directions and a
 * deadline, so a dead link becomes BF_ERR_TIMEOUT / BF_ERR_LOST, never a
 * hang. A connection keeps its session so the next exec is cheap; each exec
 * opens a new channel.
 *
 * A struct ssh_conn is used by one thread at a time.
 *
 * Errors: BF_ERR_HOSTKEY (key not in known_hosts, changed, or known_hosts
 * unreadable), BF_ERR_AUTH (key refused), BF_ERR_IO (local key or file
 * unreadable), BF_ERR_LOST (cannot reach the machine: refused, unreachable,
 * unresolvable; or the connection broke), BF_ERR_TIMEOUT (a deadline
 * passed), BF_ERR_SSH (other protocol failures). Every message names
 * host:port.
 */
#ifndef BF_SSH_H
#define BF_SSH_H

#include <stdatomic.h>
#include <stddef.h>

#include "err.h"
#include "buf.h"

struct ssh_conn;

struct ssh_target {
	const char *host;		/* name or address */
	int port;
	const char *user;
	const char *key_path;		/* private key; public is key_path + ".pub" if present */
	const char *known_hosts;	/* OpenSSH known_hosts file */
	int connect_timeout_ms;		/* TCP connect + handshake + auth */
};

/* Library init; call once at start-up (not thread-safe). */
int ssh_global_init(void);
void ssh_global_cleanup(void);

int ssh_connect(const struct ssh_target *t, struct ssh_conn **out, struct bf_diag *d);
/* Whether t's SSH server sends the start of its banner ("SSH-") within
 * timeout_ms of a fresh TCP connect: 1 yes, 0 no (refused, silent, closed,
 * or not SSH). Nothing is sent. The boot wait knocks with it: cheap, and a
 * connect held open by a NAT in front of a booting guest is dropped after
 * timeout_ms instead of hanging a whole handshake's time. */
int ssh_banner_ready(const struct ssh_target *t, int timeout_ms);
void ssh_close(struct ssh_conn *c);		/* accepts NULL */

#define SSH_STDOUT 1
#define SSH_STDERR 2

/* Called for each complete line (without "\n"); a line over its stream's cap
 * (stdout: BF_MAX_AGENT_LINE, stderr: BF_MAX_LOG_LINE) is delivered cut at
 * that length with truncated = 1, its rest dropped.
 * A final unterminated line is delivered at EOF. Non-zero return aborts the
 * exec with that code. */
typedef int (*ssh_line_cb)(void *arg, int stream, const char *line, size_t len, int truncated);

/*
 * Run cmd (a fixed command line: callers shquote() any variable part), write
 * stdin_data then send EOF, deliver output lines to cb, and wait for the
 * exit status. idle_timeout_ms: no byte from the peer for that long is
 * BF_ERR_TIMEOUT; total_timeout_ms bounds the whole exec (0 = none). A
 * broken connection is BF_ERR_LOST and the connection is then unusable.
 * *exit_status is the remote status, or -1 when killed by a signal.
 *
 * "Idle" counts keepalive replies as bytes from the peer: keepalives go out
 * every idle/3 s (2..15 s), so a command that prints nothing for hours on a
 * live link is never idle, while a dead link or machine is noticed after
 * idle_timeout_ms. Keep it >= 5000. After BF_ERR_TIMEOUT the connection is
 * unusable too (ssh_alive() returns 0): the channel is abandoned mid-way.
 * When cb aborts, the channel is closed within 2 s if the command ends,
 * else the connection is dropped (check ssh_alive()).
 */
int ssh_exec(struct ssh_conn *c, const char *cmd, const void *stdin_data, size_t stdin_len,
    ssh_line_cb cb, void *arg, int idle_timeout_ms, int total_timeout_ms,
    int *exit_status, struct bf_diag *d);
/* ssh_exec collecting stdout into out (capped by out->max); stderr into err
 * when non-NULL. Raw bytes, not cut into lines; out may be NULL too. Past a
 * cap the rest is drained and dropped and the call returns BF_ERR_TOOBIG
 * (the connection stays usable). timeout_ms is both the idle and total. */
int ssh_exec_capture(struct ssh_conn *c, const char *cmd, struct buf *out, struct buf *err,
    int timeout_ms, int *exit_status, struct bf_diag *d);

/*
 * Start cmd on a channel of its own now and leave it waiting (for
 * benchfleet-agent step: its hello printed, blocked reading the step), so
 * that the next ssh_exec of the same cmd skips the channel open, the exec
 * request, sshd's fork and the program's start. One at a time: a
 * different cmd replaces it; ssh_exec of another cmd leaves it alone;
 * ssh_upload closes it. ssh_exec takes it only while it is still running
 * (output it printed meanwhile is delivered first), else runs cmd afresh.
 * 0 when it is started or already waiting.
 */
int ssh_exec_prestart(struct ssh_conn *c, const char *cmd, int timeout_ms, struct bf_diag *d);

/* Upload a local file over SFTP to remote_path + ".tmp", fsync, chmod mode,
 * rename over remote_path. Creates the parent directory (one level).
 * remote_path may be relative to the login home. OpenSSH's SFTP rename
 * will not replace a file, so that case falls back to a remote `mv -f`. */
int ssh_upload(struct ssh_conn *c, const char *local_path, const char *remote_path, int mode,
    int timeout_ms, struct bf_diag *d);

/* While *flag is set (from any thread) every wait on c fails with
 * BF_ERR_LOST within about a second and c is marked dead; NULL: none. */
void ssh_set_cancel(struct ssh_conn *c, const atomic_int *flag);

/* 1 while the connection is believed usable. */
int ssh_alive(const struct ssh_conn *c);

#endif
