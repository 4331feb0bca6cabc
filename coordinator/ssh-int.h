/*
 * ssh-int.h: what the SSH transport's files share and nobody else sees:
 * the connection, the deadlines of one operation, and the waiting and
 * failing every libssh2 call goes through (ssh.c); exec (ssh-exec.c) and
 * upload (ssh-upload.c) are built on them.
 */
#ifndef BF_SSH_INT_H
#define BF_SSH_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include <libssh2.h>

#include "caps.h"
#include "err.h"
#include "ssh.h"

#define SSH_MAX_PATH		4096
#define SSH_CLOSE_MS		2000	/* bound on tidying a channel after an abort */

struct ssh_conn {
	LIBSSH2_SESSION *s;
	int fd;
	int alive;
	int64_t last_rx;		/* monotonic ms of the last byte from the peer */
	int keepalive_s;		/* current libssh2 keepalive interval */
	const atomic_int *cancel;	/* set from another thread: stop (ssh_set_cancel) */
	char where[BF_MAX_HOST + 16];	/* "host:port" for messages */
	/* ssh_exec_prestart: a command started ahead on its own channel, not
	 * yet read from or written to; freed with the session */
	LIBSSH2_CHANNEL *pre;
	char *pre_cmd;
	int64_t pre_at;			/* monotonic ms it was started */
};

/* Deadlines of one operation: total is absolute monotonic ms (0 = none),
 * idle_ms is the longest silence of the peer (0 = none). */
struct ssh_dl {
	int64_t total;
	int idle_ms;
};

/* Close the command started ahead, if any (its agent reads EOF and
 * exits): before an upload may replace the binary it runs. */
void ssh_pre_drop(struct ssh_conn *c);
/* Set dl: total_ms from now (0 = none), idle_ms of silence (0 = none). */
void ssh_dl_set(struct ssh_dl *dl, int total_ms, int idle_ms);
/* Shut the socket so every later libssh2 call fails at once. */
void ssh_mark_dead(struct ssh_conn *c);
/* Whether a libssh2 error code means the socket is gone. */
int ssh_rc_is_socket(int rc);
/* Turn a libssh2 failure into a BF_ERR_* with a message, marking the
 * connection dead unless only a channel failed. */
int ssh_fail(struct ssh_conn *c, int rc, const char *what, struct bf_diag *d);
/*
 * Wait until the socket is ready in the directions libssh2 is blocked on,
 * at most until the next keepalive is due. BF_ERR_TIMEOUT (connection
 * marked dead) when a deadline passed; BF_ERR_LOST on a socket error or
 * when the cancel flag is set.
 */
int ssh_wait(struct ssh_conn *c, const struct ssh_dl *dl, const char *what, struct bf_diag *d);
/* Keepalives for an operation whose idle limit is idle_ms. */
void ssh_keepalive(struct ssh_conn *c, int idle_ms);
/* Whether a cleanup call that said EAGAIN should be retried (bounded). */
int ssh_cleanup_retry(struct ssh_conn *c, const struct ssh_dl *dl, int *spins);

#endif
