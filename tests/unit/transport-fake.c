/*
 * transport-fake.c: the scripted in-process transport of transport-fake.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transport-fake.h"

struct transport_fake {
	struct transport base;
	struct fake_script *fs;
	int alive;
	const atomic_int *cancel;
};

static struct transport_fake *
tf(struct transport *t)
{
	return (struct transport_fake *)t;
}

/* The rule answering cmd, its use counted; NULL: none (counted too). */
static struct fake_rule *
fake_pick(struct fake_script *fs, const char *cmd)
{
	size_t i;

	pthread_mutex_lock(&fs->mu);
	for (i = 0; i < fs->nrules; i++) {
		struct fake_rule *r = &fs->rules[i];

		if (strstr(cmd, r->match) != NULL && (r->uses == 0 || r->used < r->uses)) {
			r->used++;
			pthread_mutex_unlock(&fs->mu);
			return r;
		}
	}
	fs->unmatched++;
	pthread_mutex_unlock(&fs->mu);
	return NULL;
}

static void
fake_bump(struct fake_script *fs, int *p)
{
	pthread_mutex_lock(&fs->mu);
	(*p)++;
	pthread_mutex_unlock(&fs->mu);
}

/* Note c in fs->order, under fs->mu. */
static void
fake_order(struct fake_script *fs, char c)
{
	size_t n = strlen(fs->order);

	if (n + 1 < sizeof(fs->order)) {
		fs->order[n] = c;
		fs->order[n + 1] = '\0';
	}
}

static int
fake_exec(struct transport *t, const char *cmd, const void *in, size_t inlen,
    ssh_line_cb cb, void *arg, int idle_ms, int total_ms, int *status, struct bf_diag *d)
{
	struct transport_fake *f = tf(t);
	struct fake_rule *r;
	const char *p, *nl;
	int n = 0, ret;

	(void)idle_ms;
	(void)total_ms;
	*status = -1;
	fake_bump(f->fs, &f->fs->execs);
	pthread_mutex_lock(&f->fs->mu);
	snprintf(f->fs->stdin_last, sizeof(f->fs->stdin_last), "%.*s",
	    (int)(inlen < 511 ? inlen : 511), in != NULL ? (const char *)in : "");
	if (strstr(cmd, " step") != NULL)
		fake_order(f->fs, 'S');
	pthread_mutex_unlock(&f->fs->mu);
	if (!f->alive || (f->cancel != NULL && atomic_load(f->cancel))) {
		f->alive = 0;
		bf_diag_set(d, NULL, "fake: the link is down");
		return BF_ERR_LOST;
	}
	if ((r = fake_pick(f->fs, cmd)) == NULL) {
		bf_diag_set(d, NULL, "fake: no rule for \"%.80s\"", cmd);
		return BF_ERR_PROTO;
	}
	for (p = r->out ? r->out : ""; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		if (r->drop_after > 0 && n == r->drop_after)
			break;
		if (r->pause_before > 0 && n == r->pause_before)
			nanosleep(&(struct timespec){ r->pause_ms / 1000,
			    (long)(r->pause_ms % 1000) * 1000000L }, NULL);
		if ((ret = cb(arg, SSH_STDOUT, p, (size_t)(nl - p), 0)) != 0)
			return ret;
		n++;
		if (f->cancel != NULL && atomic_load(f->cancel)) {
			f->alive = 0;
			bf_diag_set(d, NULL, "fake: cancelled");
			return BF_ERR_LOST;
		}
	}
	if (r->drop_after > 0) {
		f->alive = 0;
		bf_diag_set(d, NULL, "fake: link dropped after %d lines", n);
		return BF_ERR_LOST;
	}
	if (r->ret == BF_ERR_LOST || r->ret == BF_ERR_TIMEOUT)
		f->alive = 0;
	if (r->ret != 0)
		bf_diag_set(d, NULL, "fake: scripted %s", bf_err_str(r->ret));
	*status = r->status;
	return r->ret;
}

static int
fake_capture(struct transport *t, const char *cmd, struct buf *out, struct buf *err,
    int timeout_ms, int *status, struct bf_diag *d)
{
	struct transport_fake *f = tf(t);
	struct fake_rule *r;

	(void)err;
	(void)timeout_ms;
	*status = -1;
	fake_bump(f->fs, &f->fs->captures);
	if (!f->alive) {
		bf_diag_set(d, NULL, "fake: the link is down");
		return BF_ERR_LOST;
	}
	if ((r = fake_pick(f->fs, cmd)) == NULL) {
		bf_diag_set(d, NULL, "fake: no rule for \"%.80s\"", cmd);
		return BF_ERR_PROTO;
	}
	if (r->ret != 0) {
		if (r->ret == BF_ERR_LOST || r->ret == BF_ERR_TIMEOUT)
			f->alive = 0;
		bf_diag_set(d, NULL, "fake: scripted %s", bf_err_str(r->ret));
		return r->ret;
	}
	if (out != NULL && r->out != NULL && buf_puts(out, r->out) != 0)
		return BF_ERR_TOOBIG;
	*status = r->status;
	return 0;
}

static int
fake_upload(struct transport *t, const char *local, const char *remote, int mode,
    int timeout_ms, struct bf_diag *d)
{
	struct fake_script *fs = tf(t)->fs;

	(void)mode;
	(void)timeout_ms;
	fake_bump(fs, &fs->uploads);
	pthread_mutex_lock(&fs->mu);
	if (access(local, R_OK) != 0)
		fs->upload_unreadable++;
	if (strlen(fs->uploaded) + strlen(remote) + 2 < sizeof(fs->uploaded)) {
		strcat(fs->uploaded, remote);
		strcat(fs->uploaded, "|");
	}
	pthread_mutex_unlock(&fs->mu);
	if (!tf(t)->alive) {
		bf_diag_set(d, NULL, "fake: the link is down");
		return BF_ERR_LOST;
	}
	return 0;
}

static int
fake_boot(struct transport *t, const struct boot_machine *bm, const char *kernel,
    const char *cmdline, const struct boot_hooks *hooks, struct boot_result *res,
    struct bf_diag *d)
{
	struct transport_fake *f = tf(t);
	struct fake_script *fs = f->fs;
	const struct fake_boot *b = NULL;

	const struct boot_kernel *bk = boot_kernel_find(bm, kernel);

	memset(res, 0, sizeof(*res));
	pthread_mutex_lock(&fs->mu);
	fs->boots_tried++;
	snprintf(fs->boot_kernel, sizeof(fs->boot_kernel), "%s", kernel ? kernel : "");
	snprintf(fs->boot_image, sizeof(fs->boot_image), "%s", bk != NULL ? bk->image : "");
	snprintf(fs->boot_initrd, sizeof(fs->boot_initrd), "%s",
	    bk != NULL && bk->initrd != NULL ? bk->initrd : "");
	if (fs->boots_used < fs->nboots)
		b = &fs->boots[fs->boots_used++];
	pthread_mutex_unlock(&fs->mu);
	if (b == NULL) {
		bf_diag_set(d, NULL, "fake: no boot scripted");
		return BF_ERR_PROTO;
	}
	if (hooks != NULL && hooks->log != NULL)
		hooks->log(hooks->arg, "fake: booting");
	res->rebooted = b->rebooted;
	res->power_cycled = b->power_cycled;
	res->recovered = b->recovered;
	snprintf(res->kernel, sizeof(res->kernel), "%s", kernel ? kernel : "fake-kernel");
	snprintf(res->cmdline, sizeof(res->cmdline), "%s", cmdline ? cmdline : "");
	snprintf(res->boot_id, sizeof(res->boot_id), "%s", b->boot_id ? b->boot_id : "");
	snprintf(res->reason, sizeof(res->reason), "%s", b->reason ? b->reason : "");
	if (b->drop)
		f->alive = 0;
	else if (b->ret == 0)
		f->alive = 1;	/* boot_ensure reconnects a dropped link */
	if (b->ret != 0)
		bf_diag_set(d, NULL, "fake: boot %s", b->reason ? b->reason : "failed");
	return b->ret;
}

/* A command started ahead: counted and noted only (the next exec runs
 * its rule as ever). */
static int
fake_prestart(struct transport *t, const char *cmd, int timeout_ms, struct bf_diag *d)
{
	struct fake_script *fs = tf(t)->fs;

	(void)cmd;
	(void)timeout_ms;
	pthread_mutex_lock(&fs->mu);
	fs->prestarts++;
	fake_order(fs, 'P');
	pthread_mutex_unlock(&fs->mu);
	if (!tf(t)->alive) {
		bf_diag_set(d, NULL, "fake: the link is down");
		return BF_ERR_LOST;
	}
	return 0;
}

static void
fake_set_cancel(struct transport *t, const atomic_int *flag)
{
	tf(t)->cancel = flag;
}

static int
fake_alive(const struct transport *t)
{
	return ((const struct transport_fake *)t)->alive;
}

static void
fake_close(struct transport *t)
{
	if (t == NULL)
		return;
	fake_bump(tf(t)->fs, &tf(t)->fs->closes);
	free(t);
}

static const struct transport_ops fake_ops = {
	.name = "fake",
	.exec = fake_exec,
	.capture = fake_capture,
	.upload = fake_upload,
	.boot = fake_boot,
	.prestart = fake_prestart,
	.set_cancel = fake_set_cancel,
	.alive = fake_alive,
	.close = fake_close,
};

void
fake_script_init(struct fake_script *fs, struct fake_rule *rules, size_t nrules,
    const struct fake_boot *boots, size_t nboots)
{
	memset(fs, 0, sizeof(*fs));
	pthread_mutex_init(&fs->mu, NULL);
	fs->rules = rules;
	fs->nrules = nrules;
	fs->boots = boots;
	fs->nboots = nboots;
}

int
fake_connect(void *arg, const struct ssh_target *target, struct transport **out,
    struct bf_diag *d)
{
	struct fake_script *fs = arg;
	struct transport_fake *f;

	(void)target;
	*out = NULL;
	pthread_mutex_lock(&fs->mu);
	fs->connects++;
	if (fs->connect_fails > 0) {
		fs->connect_fails--;
		pthread_mutex_unlock(&fs->mu);
		bf_diag_set(d, NULL, "fake: connection refused");
		return BF_ERR_LOST;
	}
	pthread_mutex_unlock(&fs->mu);
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return BF_ERR_ALLOC;
	f->base.ops = &fake_ops;
	f->fs = fs;
	f->alive = 1;
	*out = &f->base;
	return 0;
}

int
fake_count(struct fake_script *fs, const int *p)
{
	int v;

	pthread_mutex_lock(&fs->mu);
	v = *p;
	pthread_mutex_unlock(&fs->mu);
	return v;
}
