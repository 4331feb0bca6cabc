/*
 * ssh-upload.c: copying a file to a machine over SFTP: written to a
 * ".tmp" beside the target, synced, given its mode and renamed over the
 * target (with a remote mv -f where OpenSSH's rename will not replace).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "buf.h"
#include "caps.h"
#include "clock.h"
#include "err.h"
#include "shquote.h"
#include "ssh.h"
#include "ssh-int.h"

static int
ssh_sftp_fail(struct ssh_conn *c, LIBSSH2_SFTP *sftp, int rc, const char *what,
    const char *path, struct bf_diag *d)
{
	unsigned long fx;

	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL || sftp == NULL)
		return ssh_fail(c, rc, what, d);
	fx = libssh2_sftp_last_error(sftp);
	bf_diag_set(d, NULL, "%s: SFTP %s %s failed: %s (status %lu)", c->where, what, path,
	    fx == LIBSSH2_FX_NO_SUCH_FILE ? "no such file or directory" :
	    fx == LIBSSH2_FX_PERMISSION_DENIED ? "permission denied" :
	    fx == LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM ? "no space left" :
	    fx == LIBSSH2_FX_NO_SUCH_PATH ? "no such path" : "failure", fx);
	return fx == LIBSSH2_FX_PERMISSION_DENIED ? BF_ERR_IO : BF_ERR_SSH;
}

/* Make the parent of path (one level); an existing directory is fine. */
static int
ssh_sftp_parent(struct ssh_conn *c, LIBSSH2_SFTP *sftp, const char *path,
    const struct ssh_dl *dl, struct bf_diag *d)
{
	LIBSSH2_SFTP_ATTRIBUTES st;
	const char *slash = strrchr(path, '/');
	char dir[SSH_MAX_PATH + 1];
	size_t len;
	int rc;

	if (slash == NULL || slash == path)
		return 0;
	len = (size_t)(slash - path);
	memcpy(dir, path, len);
	dir[len] = '\0';
	while ((rc = libssh2_sftp_mkdir_ex(sftp, dir, (unsigned)len, 0755)) ==
	    LIBSSH2_ERROR_EAGAIN)
		if ((rc = ssh_wait(c, dl, "creating the directory", d)) != 0)
			return rc;
	if (rc == 0)
		return 0;
	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return ssh_fail(c, rc, "creating the directory", d);
	/* OpenSSH answers FAILURE, not FILE_ALREADY_EXISTS, for an existing
	 * directory: ask what is there. */
	while ((rc = libssh2_sftp_stat_ex(sftp, dir, (unsigned)len, LIBSSH2_SFTP_STAT, &st)) ==
	    LIBSSH2_ERROR_EAGAIN)
		if ((rc = ssh_wait(c, dl, "creating the directory", d)) != 0)
			return rc;
	if (rc == 0 && (st.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) &&
	    LIBSSH2_SFTP_S_ISDIR(st.permissions))
		return 0;
	if (rc == 0) {
		bf_diag_set(d, NULL, "%s: %s exists and is not a directory", c->where, dir);
		return BF_ERR_IO;
	}
	return ssh_sftp_fail(c, sftp, rc, "mkdir", dir, d);
}

/* OpenSSH's SFTP v3 rename refuses to replace a file; mv -f does it
 * atomically (rename(2)) on the remote side. */
static int
ssh_rename_fallback(struct ssh_conn *c, const char *from, const char *to, int timeout_ms,
    struct bf_diag *d)
{
	struct buf cmd, err;
	int r, status = -1;

	buf_init(&cmd, 3 * SSH_MAX_PATH);
	buf_init(&err, BF_MAX_LOG_LINE);
	if ((r = buf_puts(&cmd, "mv -f -- ")) != 0 || (r = shquote(&cmd, from)) != 0 ||
	    (r = buf_puts(&cmd, " ")) != 0 || (r = shquote(&cmd, to)) != 0)
		goto out;
	if ((r = ssh_exec_capture(c, cmd.data, NULL, &err, timeout_ms, &status, d)) != 0 &&
	    r != BF_ERR_TOOBIG)
		goto out;
	if (status != 0) {
		bf_diag_set(d, NULL, "%s: renaming %s to %s failed: %.200s", c->where, from, to,
		    err.data != NULL ? err.data : "");
		r = BF_ERR_IO;
		goto out;
	}
	r = 0;
out:
	buf_free(&cmd);
	buf_free(&err);
	return r;
}

int
ssh_upload(struct ssh_conn *c, const char *local_path, const char *remote_path, int mode,
    int timeout_ms, struct bf_diag *d)
{
	LIBSSH2_SFTP *sftp = NULL;
	LIBSSH2_SFTP_HANDLE *h = NULL;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	struct ssh_dl dl;
	struct stat sb;
	char tmp[SSH_MAX_PATH + 8], chunk[32768];
	size_t len = 0, off = 0;
	ssize_t n;
	int fd = -1, r, rc, spins = 0;

	if (c == NULL || local_path == NULL || remote_path == NULL || remote_path[0] == '\0') {
		bf_diag_set(d, NULL, "ssh_upload: no connection or no path");
		r = BF_ERR_INVALID;
		goto out;
	}
	ssh_pre_drop(c);	/* it would run the binary being replaced */
	if (!c->alive) {
		bf_diag_set(d, NULL, "%s: connection already lost", c->where);
		r = BF_ERR_LOST;
		goto out;
	}
	if (strlen(remote_path) > SSH_MAX_PATH) {
		bf_diag_set(d, NULL, "%s: remote path over %d bytes", c->where, SSH_MAX_PATH);
		r = BF_ERR_TOOBIG;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", remote_path);
	if ((fd = open(local_path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &sb) != 0) {
		bf_diag_set(d, NULL, "%s: cannot read %s: %s", c->where, local_path,
		    strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		bf_diag_set(d, NULL, "%s: %s is not a regular file", c->where, local_path);
		r = BF_ERR_IO;
		goto out;
	}
	ssh_dl_set(&dl, timeout_ms, timeout_ms);
	ssh_keepalive(c, timeout_ms);
	c->last_rx = bf_mono_ms();

	while ((sftp = libssh2_sftp_init(c->s)) == NULL) {
		rc = libssh2_session_last_errno(c->s);
		if (rc != LIBSSH2_ERROR_EAGAIN) {
			r = ssh_fail(c, rc, "starting SFTP", d);
			goto out;
		}
		if ((r = ssh_wait(c, &dl, "starting SFTP", d)) != 0)
			goto out;
	}
	if ((r = ssh_sftp_parent(c, sftp, remote_path, &dl, d)) != 0)
		goto out;
	while ((h = libssh2_sftp_open_ex(sftp, tmp, (unsigned)strlen(tmp),
	    LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC,
	    LIBSSH2_SFTP_S_IRUSR | LIBSSH2_SFTP_S_IWUSR, LIBSSH2_SFTP_OPENFILE)) == NULL) {
		rc = libssh2_session_last_errno(c->s);
		if (rc != LIBSSH2_ERROR_EAGAIN) {
			r = ssh_sftp_fail(c, sftp, rc, "open", tmp, d);
			goto out;
		}
		if ((r = ssh_wait(c, &dl, "opening the remote file", d)) != 0)
			goto out;
	}
	for (;;) {
		if (off == len) {
			n = read(fd, chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				bf_diag_set(d, NULL, "%s: reading %s: %s", c->where, local_path,
				    strerror(errno));
				r = BF_ERR_IO;
				goto out;
			}
			if (n == 0)
				break;
			len = (size_t)n;
			off = 0;
		}
		/* On EAGAIN libssh2 wants the same buffer again. */
		n = libssh2_sftp_write(h, chunk + off, len - off);
		if (n == LIBSSH2_ERROR_EAGAIN) {
			if ((r = ssh_wait(c, &dl, "writing the remote file", d)) != 0)
				goto out;
			continue;
		}
		if (n < 0) {
			r = ssh_sftp_fail(c, sftp, (int)n, "write", tmp, d);
			goto out;
		}
		off += (size_t)n;
	}
	while ((rc = libssh2_sftp_fsync(h)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "syncing the remote file", d)) != 0)
			goto out;
	if (rc != 0 && !(rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    libssh2_sftp_last_error(sftp) == LIBSSH2_FX_OP_UNSUPPORTED)) {
		r = ssh_sftp_fail(c, sftp, rc, "fsync", tmp, d);
		goto out;
	}
	memset(&attrs, 0, sizeof(attrs));
	attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
	attrs.permissions = (unsigned long)(mode & 07777);
	while ((rc = libssh2_sftp_fsetstat(h, &attrs)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "setting the mode", d)) != 0)
			goto out;
	if (rc != 0) {
		r = ssh_sftp_fail(c, sftp, rc, "chmod", tmp, d);
		goto out;
	}
	while ((rc = libssh2_sftp_close_handle(h)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "closing the remote file", d)) != 0)
			goto out;
	h = NULL;
	if (rc != 0) {
		r = ssh_sftp_fail(c, sftp, rc, "close", tmp, d);
		goto out;
	}
	while ((rc = libssh2_sftp_rename_ex(sftp, tmp, (unsigned)strlen(tmp), remote_path,
	    (unsigned)strlen(remote_path), LIBSSH2_SFTP_RENAME_OVERWRITE |
	    LIBSSH2_SFTP_RENAME_ATOMIC | LIBSSH2_SFTP_RENAME_NATIVE)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "renaming the remote file", d)) != 0)
			goto out;
	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    (libssh2_sftp_last_error(sftp) == LIBSSH2_FX_FAILURE ||
	    libssh2_sftp_last_error(sftp) == LIBSSH2_FX_FILE_ALREADY_EXISTS)) {
		r = ssh_rename_fallback(c, tmp, remote_path, timeout_ms, d);
		goto out;
	}
	if (rc != 0) {
		r = ssh_sftp_fail(c, sftp, rc, "rename", tmp, d);
		goto out;
	}
	r = 0;
out:
	if (h != NULL) {
		ssh_dl_set(&dl, SSH_CLOSE_MS, 0);
		while (libssh2_sftp_close_handle(h) == LIBSSH2_ERROR_EAGAIN)
			if (!ssh_cleanup_retry(c, &dl, &spins))
				break;
	}
	if (sftp != NULL) {
		ssh_dl_set(&dl, SSH_CLOSE_MS, 0);
		spins = 0;
		while (libssh2_sftp_shutdown(sftp) == LIBSSH2_ERROR_EAGAIN)
			if (!ssh_cleanup_retry(c, &dl, &spins))
				break;
	}
	if (fd >= 0)
		close(fd);
	return r;
}
