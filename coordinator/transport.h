/*
 * transport.h: how the runner and the scheduler reach a machine. One
 * interface over backends, in the way of curl's lib/vtls/vtls_int.h: the
 * libssh2 backend (transport-ssh.c, over ssh.c) for the fleet, and a
 * scripted in-process fake (tests/unit/transport-fake.c) so that runner,
 * scheduler and boot decisions have unit tests.
 *
 * A struct transport is used by one thread at a time (its worker). The
 * error codes and the meaning of the arguments are those of ssh.h:
 * BF_ERR_LOST / BF_ERR_TIMEOUT mean the link is gone (alive() then says 0).
 */
#ifndef BF_TRANSPORT_H
#define BF_TRANSPORT_H

#include <stdatomic.h>
#include <stddef.h>

#include "boot.h"
#include "buf.h"
#include "err.h"
#include "ssh.h"

struct transport;

struct transport_ops {
	const char *name;
	/* ssh_exec: run cmd, feed stdin, deliver output lines to cb */
	int (*exec)(struct transport *t, const char *cmd, const void *stdin_data,
	    size_t stdin_len, ssh_line_cb cb, void *arg, int idle_timeout_ms,
	    int total_timeout_ms, int *exit_status, struct bf_diag *d);
	/* ssh_exec_capture: stdout (and stderr) into buffers */
	int (*capture)(struct transport *t, const char *cmd, struct buf *out, struct buf *err,
	    int timeout_ms, int *exit_status, struct bf_diag *d);
	/* ssh_upload */
	int (*upload)(struct transport *t, const char *local_path, const char *remote_path,
	    int mode, int timeout_ms, struct bf_diag *d);
	/* boot_ensure on this link: may reboot, power-cycle and reconnect;
	 * afterwards alive() says whether the link is usable */
	int (*boot)(struct transport *t, const struct boot_machine *bm, const char *kernel,
	    const char *cmdline, const struct boot_hooks *hooks, struct boot_result *res,
	    struct bf_diag *d);
	void (*set_cancel)(struct transport *t, const atomic_int *flag);
	/* ssh_exec_prestart; NULL: the backend cannot, exec starts afresh */
	int (*prestart)(struct transport *t, const char *cmd, int timeout_ms,
	    struct bf_diag *d);
	int (*alive)(const struct transport *t);
	void (*close)(struct transport *t);	/* frees t */
};

struct transport {
	const struct transport_ops *ops;
};

/*
 * Open a link to the machine described by target (the strings are copied).
 * *out is freed with transport_close(). The scheduler takes one of these
 * (sched_config.connect); NULL there means transport_ssh_connect.
 */
typedef int (*transport_connect_fn)(void *arg, const struct ssh_target *target,
    struct transport **out, struct bf_diag *d);

/* The libssh2 backend (transport-ssh.c); arg is unused. */
int transport_ssh_connect(void *arg, const struct ssh_target *target, struct transport **out,
    struct bf_diag *d);

static inline int
transport_exec(struct transport *t, const char *cmd, const void *in, size_t inlen,
    ssh_line_cb cb, void *arg, int idle_ms, int total_ms, int *status, struct bf_diag *d)
{
	return t->ops->exec(t, cmd, in, inlen, cb, arg, idle_ms, total_ms, status, d);
}

static inline int
transport_capture(struct transport *t, const char *cmd, struct buf *out, struct buf *err,
    int timeout_ms, int *status, struct bf_diag *d)
{
	return t->ops->capture(t, cmd, out, err, timeout_ms, status, d);
}

static inline int
transport_upload(struct transport *t, const char *local, const char *remote, int mode,
    int timeout_ms, struct bf_diag *d)
{
	return t->ops->upload(t, local, remote, mode, timeout_ms, d);
}

static inline int
transport_boot(struct transport *t, const struct boot_machine *bm, const char *kernel,
    const char *cmdline, const struct boot_hooks *hooks, struct boot_result *res,
    struct bf_diag *d)
{
	return t->ops->boot(t, bm, kernel, cmdline, hooks, res, d);
}

/* Accept NULL, as every free and query does. */
static inline void
transport_set_cancel(struct transport *t, const atomic_int *flag)
{
	if (t != NULL)
		t->ops->set_cancel(t, flag);
}

static inline int
transport_prestart(struct transport *t, const char *cmd, int timeout_ms, struct bf_diag *d)
{
	if (t == NULL || t->ops->prestart == NULL)
		return 0;
	return t->ops->prestart(t, cmd, timeout_ms, d);
}

static inline int
transport_alive(const struct transport *t)
{
	return t != NULL && t->ops->alive(t);
}

static inline void
transport_close(struct transport *t)
{
	if (t != NULL)
		t->ops->close(t);
}

#endif
