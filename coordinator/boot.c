/*
 * boot.c: the boot sequence of a lab machine. Each boot method (a table in
 * boot-config.c, which also parses and checks the config) builds here one
 * remote command line (every variable part through shquote()) that
 * schedules the reboot and returns before it happens. boot_ensure() reads
 * the booted state, reboots only when it differs from the request, waits
 * for SSH with backoff, verifies, and power-cycles a machine that does not
 * come back right.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "boot.h"
#include "boot-int.h"
#include "buf.h"
#include "caps.h"
#include "clock.h"
#include "err.h"
#include "shquote.h"
#include "ssh.h"

extern char **environ;

#define BOOT_STATE_MAX		(BOOT_MAX_CMDLINE + 1024)	/* uname + cmdline + boot_id */
#define BOOT_EXEC_MS		30000	/* one remote command */
#define BOOT_FIRST_WAIT_MS	1000	/* let the machine go down before knocking */
/* Between attempts: 0.5 s, then every second. The boot ends at a moment
 * nobody knows and every ms past it is charged to the run (with the old
 * cap of 5 s, up to 5 s); a refused connect a second is nothing to a
 * machine that is booting. */
#define BOOT_BACKOFF_MIN_MS	500
#define BOOT_BACKOFF_MAX_MS	1000
#define BOOT_CONNECT_MS		10000	/* per attempt while waiting */
/* Each attempt knocks first: a fresh TCP connect that must bring sshd's
 * banner within this time (ssh_banner_ready), then the handshake. A
 * connect made while the machine is down can hang where a new one would
 * be answered at once: QEMU's user network holds it and sends its SYN to
 * the guest again 1, 3, 7 s later, so TCG boots whose sshd was up at
 * ~4 s were met at ~8 s, and at 12.4 s when a handshake ran out its 10 s
 * (bench item 6b). A real machine refuses the knock at once. */
#define BOOT_KNOCK_MS		1000

static void
boot_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void
boot_log(const struct boot_hooks *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
boot_log(const struct boot_hooks *h, const char *fmt, ...)
{
	char line[BF_MAX_LOG_LINE];
	va_list ap;

	if (h == NULL || h->log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	h->log(h->arg, line);
}

static int
boot_cancelled(const struct boot_hooks *h)
{
	return h != NULL && h->cancel != NULL && *h->cancel != 0;
}

/* Copy at most dstsz-1 bytes; always terminates. */
static void
boot_strlcpy(char *dst, const char *src, size_t dstsz)
{
	size_t n = strlen(src);

	if (n >= dstsz)
		n = dstsz - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- cmdline tokens ---- */

/* 1 when the space-separated token tok (of length n) is in list. */
static int
boot_has_token(const char *list, const char *tok, size_t n)
{
	const char *p = list, *e;

	while (*p != '\0') {
		while (*p == ' ' || *p == '\t')
			p++;
		for (e = p; *e != '\0' && *e != ' ' && *e != '\t'; e++)
			;
		if (e > p && (size_t)(e - p) == n && memcmp(p, tok, n) == 0)
			return 1;
		p = e;
	}
	return 0;
}

/*
 * Every token of want is in have; writes the first missing one into
 * missing (when non-NULL). Returns 1 when all are there.
 */
static int
boot_tokens_in(const char *want, const char *have, char *missing, size_t missingsz)
{
	const char *p = want, *e;

	while (*p != '\0') {
		while (*p == ' ')
			p++;
		for (e = p; *e != '\0' && *e != ' '; e++)
			;
		if (e > p && !boot_has_token(have, p, (size_t)(e - p))) {
			if (missing != NULL)
				snprintf(missing, missingsz, "%.*s", (int)(e - p), p);
			return 0;
		}
		p = e;
	}
	return 1;
}

/* have holds no token outside want, bar those a boot loader adds itself. */
static int
boot_tokens_only(const char *have, const char *want)
{
	static const char *const loader[] = { "BOOT_IMAGE=", "initrd=" };
	const char *p = have, *e;
	size_t i;

	while (*p != '\0') {
		int skip = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		for (e = p; *e != '\0' && *e != ' ' && *e != '\t'; e++)
			;
		for (i = 0; i < sizeof(loader) / sizeof(loader[0]); i++)
			if (strncmp(p, loader[i], strlen(loader[i])) == 0)
				skip = 1;
		if (e > p && !skip && !boot_has_token(want, p, (size_t)(e - p)))
			return 0;
		p = e;
	}
	return 1;
}

/* ---- remote commands ---- */

/* "sudo -n " when configured. */
static int
boot_priv(const struct boot_machine *m, struct buf *cmd)
{
	return m->sudo ? buf_puts(cmd, "sudo -n ") : 0;
}

/*
 * Append `setsid sh -c 'sleep 0.3; INNER' >/dev/null 2>&1 </dev/null &`:
 * the reboot happens after the SSH command has returned its status.
 */
static int
boot_detach(struct buf *cmd, const char *inner)
{
	struct buf w;
	int r;

	buf_init(&w, BF_MAX_ARG);
	if ((r = buf_printf(&w, "sleep 0.3; %s", inner)) != 0 ||
	    (r = buf_puts(cmd, "setsid sh -c ")) != 0 || (r = shquote(cmd, w.data)) != 0 ||
	    (r = buf_puts(cmd, " >/dev/null 2>&1 </dev/null &")) != 0)
		goto out;
	r = 0;
out:
	buf_free(&w);
	return r;
}

/* kexec -l IMAGE [--initrd=INITRD] --append=CMDLINE || exit; then kexec -e. */
int
boot_cmd_kexec(const struct boot_machine *m, const struct boot_kernel *k, const char *cmdline,
    struct buf *cmd, struct bf_diag *d)
{
	int r;

	if ((r = boot_priv(m, cmd)) != 0 || (r = buf_puts(cmd, "kexec -l ")) != 0 ||
	    (r = shquote(cmd, k->image)) != 0)
		goto out;
	if (k->initrd != NULL &&
	    ((r = buf_puts(cmd, " --initrd=")) != 0 || (r = shquote(cmd, k->initrd)) != 0))
		goto out;
	if ((r = buf_puts(cmd, " --append=")) != 0 || (r = shquote(cmd, cmdline)) != 0 ||
	    (r = buf_puts(cmd, " || exit 3; ")) != 0)
		goto out;
	r = boot_detach(cmd, m->kexec_systemctl ? (m->sudo ? "sudo -n systemctl kexec" :
	    "systemctl kexec") : (m->sudo ? "sudo -n kexec -e" : "kexec -e"));
out:
	if (r != 0)
		bf_diag_set(d, "boot", "cannot build the kexec command: %s", bf_err_str(r));
	return r;
}

/* grub-reboot ENTRY (one-shot: a hung boot falls back to the default). */
int
boot_cmd_grub_reboot(const struct boot_machine *m, const struct boot_kernel *k,
    const char *cmdline, struct buf *cmd, struct bf_diag *d)
{
	int r;

	if ((r = boot_priv(m, cmd)) != 0 || (r = buf_puts(cmd, "grub-reboot ")) != 0 ||
	    (r = shquote(cmd, k->grub_entry != NULL ? k->grub_entry : k->release)) != 0 ||
	    (r = buf_puts(cmd, " || exit 3; ")) != 0 ||
	    (r = boot_detach(cmd, m->sudo ? "sudo -n reboot" : "reboot")) != 0)
		goto out;
	r = 0;
out:
	if (r != 0)
		bf_diag_set(d, "boot", "cannot build the grub-reboot command: %s", bf_err_str(r));
	return r;
}

/* grubby --set-default IMAGE; grubby --update-kernel IMAGE --args CMDLINE; reboot.
 * grubby's change is persistent, not one-shot. */
int
boot_cmd_grubby(const struct boot_machine *m, const struct boot_kernel *k, const char *cmdline,
    struct buf *cmd, struct bf_diag *d)
{
	int r;

	if ((r = boot_priv(m, cmd)) != 0 || (r = buf_puts(cmd, "grubby --set-default=")) != 0 ||
	    (r = shquote(cmd, k->image)) != 0 || (r = buf_puts(cmd, " || exit 3; ")) != 0)
		goto out;
	if (cmdline[0] != '\0' &&
	    ((r = boot_priv(m, cmd)) != 0 || (r = buf_puts(cmd, "grubby --update-kernel=")) != 0 ||
	    (r = shquote(cmd, k->image)) != 0 || (r = buf_puts(cmd, " --args=")) != 0 ||
	    (r = shquote(cmd, cmdline)) != 0 || (r = buf_puts(cmd, " || exit 3; ")) != 0))
		goto out;
	r = boot_detach(cmd, m->sudo ? "sudo -n reboot" : "reboot");
out:
	if (r != 0)
		bf_diag_set(d, "boot", "cannot build the grubby command: %s", bf_err_str(r));
	return r;
}


/*
 * The boot-command profile: each word, its slots filled, becomes one
 * shquote()d word, so a value stays one argument whatever it holds and
 * wherever the slot sits in its word. The command itself must return
 * before the machine goes down.
 */
int
boot_cmd_command(const struct boot_machine *m, const struct boot_kernel *k, const char *cmdline,
    struct buf *cmd, struct bf_diag *d)
{
	const char *vals[BOOT_NSLOTS] = { k->release, k->image != NULL ? k->image : "",
	    k->initrd != NULL ? k->initrd : "", cmdline };
	const char *p;
	struct buf w;
	size_t i;
	int r, s;

	buf_init(&w, BF_MAX_ARG);
	if (m->command == NULL || m->command->argv == NULL) {
		bf_diag_set(d, "boot.command", "boot-command profile %s has no command in this "
		    "process", m->command != NULL ? m->command->name : "(none)");
		r = BF_ERR_STATE;
		goto out;
	}
	for (i = 0; i < m->command->argc; i++) {
		buf_reset(&w);
		for (p = m->command->argv[i]; *p != '\0'; ) {
			if ((s = boot_slot_at(p)) >= 0) {
				if ((r = buf_puts(&w, vals[s])) != 0)
					goto out;
				p += strlen(boot_slots[s]);
			} else {
				if ((r = buf_append(&w, p, 1)) != 0)
					goto out;
				p++;
			}
		}
		if ((i > 0 && (r = buf_puts(cmd, " ")) != 0) ||
		    (r = shquote(cmd, w.data != NULL ? w.data : "")) != 0)
			goto out;
	}
	r = 0;
out:
	if (r != 0 && r != BF_ERR_STATE)
		bf_diag_set(d, "boot", "cannot build the boot command: %s", bf_err_str(r));
	buf_free(&w);
	return r;
}

/* ---- the machine's state ---- */

struct boot_state {
	char kernel[BOOT_MAX_RELEASE + 1];
	char cmdline[BOOT_MAX_CMDLINE + 1];
	char boot_id[BOOT_BOOT_ID_LEN + 1];
};

/* Take the next line of [*p, end) into dst (cap dstsz-1, printable only). */
static int
boot_take_line(const char **p, const char *end, char *dst, size_t dstsz)
{
	const char *e = memchr(*p, '\n', (size_t)(end - *p));
	size_t n, i;

	if (e == NULL)
		e = end;
	n = (size_t)(e - *p);
	if (n >= dstsz)
		return BF_ERR_TOOBIG;
	for (i = 0; i < n; i++) {
		if ((unsigned char)(*p)[i] < 0x20 || (unsigned char)(*p)[i] > 0x7e)
			return BF_ERR_PROTO;
	}
	memcpy(dst, *p, n);
	dst[n] = '\0';
	*p = e < end ? e + 1 : e;
	return 0;
}

/* uname -r, /proc/cmdline and boot_id, in one exec. */
static int
boot_read_state(struct ssh_conn *c, struct boot_state *st, struct bf_diag *d)
{
	struct buf out;
	const char *p, *end;
	int r, status = -1;
	size_t i;

	buf_init(&out, BOOT_STATE_MAX);
	if ((r = ssh_exec_capture(c, "uname -r; cat /proc/cmdline; "
	    "cat /proc/sys/kernel/random/boot_id", &out, NULL, BOOT_EXEC_MS, &status, d)) != 0)
		goto out;
	if (status != 0) {
		bf_diag_set(d, "boot", "reading uname -r, /proc/cmdline and boot_id exited %d",
		    status);
		r = BF_ERR_STATE;
		goto out;
	}
	p = out.data != NULL ? out.data : "";
	end = p + out.len;
	if ((r = boot_take_line(&p, end, st->kernel, sizeof(st->kernel))) != 0 ||
	    (r = boot_take_line(&p, end, st->cmdline, sizeof(st->cmdline))) != 0 ||
	    (r = boot_take_line(&p, end, st->boot_id, sizeof(st->boot_id))) != 0) {
		bf_diag_set(d, "boot", "the machine's uname -r / cmdline / boot_id output is "
		    "malformed (%s)", bf_err_str(r));
		r = BF_ERR_PROTO;
		goto out;
	}
	for (i = 0; st->boot_id[i] != '\0'; i++)
		if (strchr("0123456789abcdef-", st->boot_id[i]) == NULL)
			break;
	if (st->kernel[0] == '\0' || strlen(st->boot_id) != BOOT_BOOT_ID_LEN ||
	    st->boot_id[i] != '\0') {
		bf_diag_set(d, "boot", "the machine reported kernel \"%.64s\" and boot_id "
		    "\"%.40s\": not a release and a UUID", st->kernel, st->boot_id);
		r = BF_ERR_PROTO;
		goto out;
	}
	r = 0;
out:
	buf_free(&out);
	return r;
}

static void
boot_result_state(struct boot_result *res, const struct boot_state *st)
{
	boot_strlcpy(res->kernel, st->kernel, sizeof(res->kernel));
	boot_strlcpy(res->cmdline, st->cmdline, sizeof(res->cmdline));
	boot_strlcpy(res->boot_id, st->boot_id, sizeof(res->boot_id));
}

/*
 * Wait until the machine answers SSH with a boot_id other than old (and
 * other than also_old when non-empty), at most until deadline. Every
 * failure to connect or read (refused, reset, hung handshake, dropped
 * session) is retried with backoff. 0 with *connp and *st set;
 * BF_ERR_TIMEOUT (reason in why); BF_ERR_CANCELLED.
 */
static int
boot_wait(const struct ssh_target *t, const char *old, const char *also_old, double deadline,
    const struct boot_hooks *h, struct ssh_conn **connp, struct boot_state *st,
    struct boot_result *res, char *why, size_t whysz)
{
	struct ssh_target tt = *t;
	struct ssh_conn *c = NULL;
	struct bf_diag d2;
	char old1[BOOT_BOOT_ID_LEN + 1], old2[BOOT_BOOT_ID_LEN + 1];
	int r, backoff = BOOT_BACKOFF_MIN_MS, left_ms, same = 0;

	/* copies: old may point into *st, which each attempt overwrites */
	boot_strlcpy(old1, old, sizeof(old1));
	boot_strlcpy(old2, also_old != NULL ? also_old : "", sizeof(old2));
	old = old1;
	also_old = old2[0] != '\0' ? old2 : NULL;
	snprintf(why, whysz, "%s", "no SSH");
	boot_sleep_ms(BOOT_FIRST_WAIT_MS);
	for (;;) {
		if (boot_cancelled(h)) {
			r = BF_ERR_CANCELLED;
			goto out;
		}
		left_ms = (int)((deadline - bf_mono()) * 1000);
		if (left_ms <= 0) {
			r = BF_ERR_TIMEOUT;
			goto out;
		}
		tt.connect_timeout_ms = left_ms < BOOT_CONNECT_MS ? left_ms : BOOT_CONNECT_MS;
		if (t->connect_timeout_ms > 0 && t->connect_timeout_ms < tt.connect_timeout_ms)
			tt.connect_timeout_ms = t->connect_timeout_ms;
		res->attempts++;
		bf_diag_clear(&d2);
		if (!ssh_banner_ready(&tt, left_ms < BOOT_KNOCK_MS ? left_ms : BOOT_KNOCK_MS)) {
			snprintf(why, whysz, "no SSH (no banner within %d ms of a connect)",
			    BOOT_KNOCK_MS);
		} else if ((r = ssh_connect(&tt, &c, &d2)) == 0 &&
		    (r = boot_read_state(c, st, &d2)) == 0) {
			if (strcmp(st->boot_id, old) != 0 &&
			    (also_old == NULL || strcmp(st->boot_id, also_old) != 0)) {
				*connp = c;
				c = NULL;
				r = 0;
				goto out;
			}
			/* still the old boot: the reboot has not happened yet */
			if (!same++)
				boot_log(h, "boot: still on boot %s; waiting", old);
			snprintf(why, whysz, "still on the old boot %s", old);
		} else {
			if (r == BF_ERR_HOSTKEY || r == BF_ERR_AUTH) {
				/* a changed key or a refused login will not heal by waiting */
				snprintf(why, whysz, "%s", d2.msg);
				goto out;
			}
			snprintf(why, whysz, "no SSH (last: %.300s)", d2.msg[0] ? d2.msg : bf_err_str(r));
		}
		ssh_close(c);
		c = NULL;
		boot_sleep_ms(backoff);
		backoff = backoff * 2 > BOOT_BACKOFF_MAX_MS ? BOOT_BACKOFF_MAX_MS : backoff * 2;
	}
out:
	ssh_close(c);
	return r;
}

/* Run the power-cycle argv locally: stdin /dev/null, stdout to stderr.
 * Returns its exit status, or -1 (could not run, killed, timed out). */
static int
boot_power_cycle(const struct boot_machine *m, const struct boot_hooks *h)
{
	posix_spawn_file_actions_t fa;
	double deadline;
	pid_t pid, w;
	int status = -1, ret = -1, fa_ok = 0;

	if (m->power_cycle == NULL)
		goto out;
	if (m->power_cycle->argv == NULL) {
		boot_log(h, "boot: power profile %s has no command in this process",
		    m->power_cycle->name);
		goto out;
	}
	if (posix_spawn_file_actions_init(&fa) != 0)
		goto out;
	fa_ok = 1;
	if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, 2, 1) != 0)
		goto out;
	if ((errno = posix_spawnp(&pid, m->power_cycle->argv[0], &fa, NULL,
	    m->power_cycle->argv, environ)) != 0) {
		boot_log(h, "boot: cannot run power profile %s: %s", m->power_cycle->name,
		    strerror(errno));
		goto out;
	}
	deadline = bf_mono() + m->power_cycle_timeout_s;
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			goto out;
		if (bf_mono() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			boot_log(h, "boot: power profile %s killed after %d s",
			    m->power_cycle->name, m->power_cycle_timeout_s);
			goto out;
		}
		boot_sleep_ms(50);
	}
	if (WIFEXITED(status))
		ret = WEXITSTATUS(status);
out:
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	return ret;
}

int
boot_ensure(const struct boot_machine *m, const struct ssh_target *t,
    struct ssh_conn **connp, const char *kernel, const char *cmdline,
    const struct boot_hooks *h, struct boot_result *res, struct bf_diag *d)
{
	const struct boot_kernel *k;
	struct boot_kernel bare;
	char relbuf[BOOT_MAX_RELEASE + 1];
	struct boot_state st, fail_st;
	struct buf want, cmd, err;
	char missing[128], why[BF_DIAG_MSG];
	double t0 = bf_mono(), t_reboot = 0, deadline;
	int r, status = -1, fail_seen = 0;

	memset(res, 0, sizeof(*res));
	res->power_cycle_status = -1;
	memset(&st, 0, sizeof(st));
	buf_init(&want, BOOT_MAX_CMDLINE * 2 + 2);
	buf_init(&cmd, BF_MAX_ARG * 2);
	buf_init(&err, BF_MAX_LOG_LINE);
	if (cmdline == NULL)
		cmdline = "";
	if ((r = boot_check_cmdline(cmdline, d)) != 0)
		goto out;
	if (kernel != NULL && kernel[0] != '\0') {
		if ((r = boot_check_release(kernel, d)) != 0)
			goto out;
		/* without a map (grub-reboot, command) the release alone is passed on */
		if (boot_kernel_find(m, kernel) == NULL &&
		    (m->method->needs_image || m->nkernels > 0)) {
			bf_diag_set(d, "kernel", "\"%s\" is not among the machine's kernels", kernel);
			r = BF_ERR_NOTFOUND;
			goto out;
		}
	}
	if (!m->method->sets_cmdline && cmdline[0] != '\0') {
		bf_diag_set(d, "cmdline", "method %s cannot boot a one-shot command line; "
		    "give the params in the grub entry or use kexec", m->method->name);
		r = BF_ERR_INVALID;
		goto out;
	}
	/* the full command line: base, then the request */
	if ((r = buf_puts(&want, m->cmdline_base)) != 0 ||
	    (r = buf_puts(&want, m->cmdline_base[0] && cmdline[0] ? " " : "")) != 0 ||
	    (r = buf_puts(&want, cmdline)) != 0)
		goto out;
	if (want.len > BOOT_MAX_CMDLINE) {
		bf_diag_set(d, "cmdline", "base + request is %zu bytes, over %d", want.len,
		    BOOT_MAX_CMDLINE);
		r = BF_ERR_INVALID;
		goto out;
	}

	if (*connp == NULL || !ssh_alive(*connp)) {
		ssh_close(*connp);
		*connp = NULL;
		if ((r = ssh_connect(t, connp, d)) != 0)
			goto out;
	}
	if ((r = boot_read_state(*connp, &st, d)) != 0)
		goto out;
	boot_result_state(res, &st);
	boot_strlcpy(res->prev_boot_id, st.boot_id, sizeof(res->prev_boot_id));
	if (kernel == NULL || kernel[0] == '\0')
		kernel = st.kernel;
	if ((k = boot_kernel_find(m, kernel)) == NULL && m->method->needs_image) {
		bf_diag_set(d, "kernel", "the running kernel \"%s\" is not among the machine's "
		    "kernels", kernel);
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	if ((h == NULL || !h->fresh) && strcmp(st.kernel, kernel) == 0 &&
	    boot_tokens_in(want.data ? want.data : "", st.cmdline, NULL, 0) &&
	    boot_tokens_only(st.cmdline, want.data ? want.data : "")) {
		boot_log(h, "boot: already on %s with \"%s\"; no reboot", st.kernel, st.cmdline);
		r = 0;
		goto out;
	}
	if (k == NULL) {
		/* grub-reboot and command need no map entry: the release alone */
		boot_strlcpy(relbuf, kernel, sizeof(relbuf));
		memset(&bare, 0, sizeof(bare));
		bare.release = relbuf;
		k = &bare;
	}

	if ((r = m->method->build(m, k, want.data ? want.data : "", &cmd, d)) != 0)
		goto out;
	boot_log(h, "boot: %s -> %s \"%s\" by %s (boot %s)", st.kernel, kernel,
	    want.data ? want.data : "", m->method->name, st.boot_id);
	t_reboot = bf_mono();
	res->rebooted = 1;
	r = ssh_exec_capture(*connp, cmd.data, NULL, &err, BOOT_EXEC_MS, &status, d);
	if (r == 0 && status != 0) {
		/* the machine is still up on its old kernel: nothing to recover */
		res->rebooted = 0;
		snprintf(res->reason, sizeof(res->reason), "%s reboot command exited %d: %.300s",
		    m->method->name, status, err.data != NULL ? err.data : "");
		bf_diag_set(d, "boot", "%s", res->reason);
		r = BF_ERR_STATE;
		goto out;
	}
	/* r != 0: the link broke mid-command; the boot may have started anyway */
	ssh_close(*connp);
	*connp = NULL;

	deadline = t_reboot + m->timeout_s;
	r = boot_wait(t, st.boot_id, NULL, deadline, h, connp, &st, res, why, sizeof(why));
	if (r == BF_ERR_CANCELLED)
		goto out;
	if (r == 0) {
		boot_result_state(res, &st);
		if (strcmp(st.kernel, kernel) != 0) {
			snprintf(res->reason, sizeof(res->reason), "booted kernel %s, not %s "
			    "(a fallback boot?)", st.kernel, kernel);
			r = BF_ERR_STATE;
		} else if (!boot_tokens_in(want.data ? want.data : "", st.cmdline, missing,
		    sizeof(missing))) {
			snprintf(res->reason, sizeof(res->reason), "/proc/cmdline lacks \"%s\": %.300s",
			    missing, st.cmdline);
			r = BF_ERR_STATE;
		}
		if (r == 0) {
			res->ssh_seconds = bf_mono() - t_reboot;
			boot_log(h, "boot: verified %s \"%s\" (boot %s) after %.1f s", st.kernel,
			    st.cmdline, st.boot_id, res->ssh_seconds);
			goto out;
		}
		fail_st = st;
		fail_seen = 1;
		ssh_close(*connp);
		*connp = NULL;
	} else if (r == BF_ERR_HOSTKEY || r == BF_ERR_AUTH) {
		/* it came back as something else, or our key is gone */
		snprintf(res->reason, sizeof(res->reason), "SSH refused after the reboot: %.400s",
		    why);
		r = BF_ERR_STATE;
	} else {
		snprintf(res->reason, sizeof(res->reason), "no verified boot within %d s: %.400s",
		    m->timeout_s, why);
		r = BF_ERR_TIMEOUT;
	}

	/* Recovery: power-cycle and wait for the machine on any kernel. */
	boot_log(h, "boot: failed: %s; power-cycling", res->reason);
	if (m->power_cycle != NULL) {
		int rr;

		res->power_cycled = 1;
		res->power_cycle_status = boot_power_cycle(m, h);
		rr = boot_wait(t, res->prev_boot_id, fail_seen ? fail_st.boot_id : NULL,
		    bf_mono() + m->timeout_s, h, connp, &st, res, why, sizeof(why));
		if (rr == 0) {
			res->recovered = 1;
			boot_result_state(res, &st);
			boot_log(h, "boot: back after power cycle on %s \"%s\"", st.kernel,
			    st.cmdline);
		} else {
			snprintf(res->reason + strlen(res->reason),
			    sizeof(res->reason) - strlen(res->reason),
			    "; not back %d s after the power cycle (status %d): %s", m->timeout_s,
			    res->power_cycle_status, why);
			res->kernel[0] = res->cmdline[0] = res->boot_id[0] = '\0';
		}
	} else {
		snprintf(res->reason + strlen(res->reason), sizeof(res->reason) - strlen(res->reason),
		    "; no power-cycle command configured");
		if (fail_seen) {
			/* it answered, only wrongly: reconnect for the caller */
			res->recovered = ssh_connect(t, connp, NULL) == 0;
		}
	}
	bf_diag_set(d, "boot", "%s", res->reason);
out:
	res->seconds = bf_mono() - t0;
	buf_free(&want);
	buf_free(&cmd);
	buf_free(&err);
	return r;
}

int
boot_reboot_command(const struct boot_machine *m, const char *kernel, const char *cmdline,
    struct buf *out, struct bf_diag *d)
{
	const struct boot_kernel *k;
	struct boot_kernel bare;
	char relbuf[BOOT_MAX_RELEASE + 1];
	int r;

	if ((r = boot_check_release(kernel, d)) != 0 || (r = boot_check_cmdline(cmdline, d)) != 0)
		return r;
	if ((k = boot_kernel_find(m, kernel)) == NULL) {
		if (m->method->needs_image || m->nkernels > 0) {
			bf_diag_set(d, "kernel", "\"%s\" is not among the machine's kernels", kernel);
			return BF_ERR_NOTFOUND;
		}
		boot_strlcpy(relbuf, kernel, sizeof(relbuf));
		memset(&bare, 0, sizeof(bare));
		bare.release = relbuf;
		k = &bare;
	}
	return m->method->build(m, k, cmdline, out, d);
}

json_t *
boot_result_json(const struct boot_result *res)
{
	return json_pack("{s:b, s:b, s:i, s:b, s:i, s:f, s:f, s:s, s:s, s:s, s:s, s:s}",
	    "rebooted", res->rebooted, "power_cycled", res->power_cycled,
	    "power_cycle_status", res->power_cycle_status, "recovered", res->recovered,
	    "attempts", res->attempts, "seconds", res->seconds, "ssh_seconds", res->ssh_seconds,
	    "kernel", res->kernel, "cmdline", res->cmdline, "boot_id", res->boot_id,
	    "prev_boot_id", res->prev_boot_id, "reason", res->reason);
}
