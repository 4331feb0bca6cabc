/*
 * transport-ssh.c: the libssh2 backend of transport.h, a thin shell over
 * ssh.c and boot_ensure(). It keeps its own copy of the target, since a
 * reboot reconnects long after the machine row it came from was freed.
 */
#include <stdlib.h>
#include <string.h>

#include "transport.h"

struct transport_ssh {
	struct transport base;		/* first: a struct transport * is one of these */
	struct ssh_conn *conn;		/* NULL once a boot left the machine gone */
	struct ssh_target target;
	char *host, *user, *key_path, *known_hosts;
	const atomic_int *cancel;
};

static struct transport_ssh *
tssh(struct transport *t)
{
	return (struct transport_ssh *)t;
}

static int
tssh_exec(struct transport *t, const char *cmd, const void *in, size_t inlen,
    ssh_line_cb cb, void *arg, int idle_ms, int total_ms, int *status, struct bf_diag *d)
{
	if (tssh(t)->conn == NULL)
		return BF_ERR_LOST;
	return ssh_exec(tssh(t)->conn, cmd, in, inlen, cb, arg, idle_ms, total_ms, status, d);
}

static int
tssh_capture(struct transport *t, const char *cmd, struct buf *out, struct buf *err,
    int timeout_ms, int *status, struct bf_diag *d)
{
	if (tssh(t)->conn == NULL)
		return BF_ERR_LOST;
	return ssh_exec_capture(tssh(t)->conn, cmd, out, err, timeout_ms, status, d);
}

static int
tssh_upload(struct transport *t, const char *local, const char *remote, int mode,
    int timeout_ms, struct bf_diag *d)
{
	if (tssh(t)->conn == NULL)
		return BF_ERR_LOST;
	return ssh_upload(tssh(t)->conn, local, remote, mode, timeout_ms, d);
}

static int
tssh_boot(struct transport *t, const struct boot_machine *bm, const char *kernel,
    const char *cmdline, const struct boot_hooks *hooks, struct boot_result *res,
    struct bf_diag *d)
{
	struct transport_ssh *ts = tssh(t);
	int r;

	r = boot_ensure(bm, &ts->target, &ts->conn, kernel, cmdline, hooks, res, d);
	/* a reconnection is a new ssh_conn: it must watch the same flag */
	if (ts->conn != NULL)
		ssh_set_cancel(ts->conn, ts->cancel);
	return r;
}

static void
tssh_set_cancel(struct transport *t, const atomic_int *flag)
{
	tssh(t)->cancel = flag;
	if (tssh(t)->conn != NULL)
		ssh_set_cancel(tssh(t)->conn, flag);
}

static int
tssh_prestart(struct transport *t, const char *cmd, int timeout_ms, struct bf_diag *d)
{
	if (tssh(t)->conn == NULL)
		return BF_ERR_LOST;
	return ssh_exec_prestart(tssh(t)->conn, cmd, timeout_ms, d);
}

static int
tssh_alive(const struct transport *t)
{
	const struct transport_ssh *ts = (const struct transport_ssh *)t;

	return ts->conn != NULL && ssh_alive(ts->conn);
}

static void
tssh_close(struct transport *t)
{
	struct transport_ssh *ts = tssh(t);

	if (ts == NULL)
		return;
	ssh_close(ts->conn);
	free(ts->host);
	free(ts->user);
	free(ts->key_path);
	free(ts->known_hosts);
	free(ts);
}

static const struct transport_ops tssh_ops = {
	.name = "ssh",
	.exec = tssh_exec,
	.capture = tssh_capture,
	.upload = tssh_upload,
	.boot = tssh_boot,
	.set_cancel = tssh_set_cancel,
	.prestart = tssh_prestart,
	.alive = tssh_alive,
	.close = tssh_close,
};

static int
dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (s == NULL)
		return 0;
	return (*out = strdup(s)) == NULL ? BF_ERR_ALLOC : 0;
}

int
transport_ssh_connect(void *arg, const struct ssh_target *target, struct transport **out,
    struct bf_diag *d)
{
	struct transport_ssh *ts = NULL;
	int r;

	(void)arg;
	*out = NULL;
	if ((ts = calloc(1, sizeof(*ts))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	ts->base.ops = &tssh_ops;
	if ((r = dup_opt(target->host, &ts->host)) != 0 ||
	    (r = dup_opt(target->user, &ts->user)) != 0 ||
	    (r = dup_opt(target->key_path, &ts->key_path)) != 0 ||
	    (r = dup_opt(target->known_hosts, &ts->known_hosts)) != 0)
		goto out;
	ts->target = *target;
	ts->target.host = ts->host;
	ts->target.user = ts->user;
	ts->target.key_path = ts->key_path;
	ts->target.known_hosts = ts->known_hosts;
	if ((r = ssh_connect(&ts->target, &ts->conn, d)) != 0)
		goto out;
	*out = &ts->base;
	ts = NULL;
	r = 0;
out:
	if (ts != NULL)
		tssh_close(&ts->base);
	return r;
}
