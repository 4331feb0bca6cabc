/*
 * kdispatch-install.c: a built kernel onto its target and, after the
 * boot, checked to be the one running (kdispatch.h).
 *
 * The target's files: /boot/vmlinuz-<release>, /boot/config-<release>,
 * /lib/modules/<release> (only that member of the modules tarball is
 * unpacked, so a tarball cannot write elsewhere), /boot/initrd.img-<release>
 * by update-initramfs when there are modules and the distro has it. The
 * release carries "-bf<key8>": two builds never share a file. Staged under
 * the agent's directory (~/.benchfleet), moved with install(1) as root
 * (sudo -n for a lab user: its sudoers must allow install, tar and
 * update-initramfs).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "kdispatch-int.h"
#include "sha256.h"
#include "shquote.h"

#define KD_UPLOAD_MS	(600 * 1000)

/* " && " between commands; the privilege prefix of m's user. */
static int
kd_cmd(struct buf *cmd, int sudo, const char *first, ...)
{
	va_list ap;
	const char *s;
	int r, quote = 0;

	if (cmd->len > 0 && (r = buf_puts(cmd, " && ")) != 0)
		return r;
	if (sudo && (r = buf_puts(cmd, "sudo -n ")) != 0)
		return r;
	if ((r = buf_puts(cmd, first)) != 0)
		return r;
	/* the rest alternate: a word to quote, then literal text */
	va_start(ap, first);
	while ((s = va_arg(ap, const char *)) != NULL) {
		r = quote ? shquote(cmd, s) : buf_puts(cmd, s);
		quote = !quote;
		if (r != 0)
			break;
	}
	va_end(ap);
	return r;
}

/* Upload artifact sha to the staging path remote. */
static int
kd_upload(const struct kdispatch_env *env, struct transport *tr, const char *sha,
    const char *remote, struct bf_diag *d)
{
	char local[256];
	int r;

	if ((r = kstore_local_path(env->ks, sha, local, sizeof(local))) != 0) {
		bf_diag_set(d, NULL, "artifact %.12s is not in the artifact directory (%s)", sha,
		    bf_err_str(r));
		return r;
	}
	return transport_upload(tr, local, remote, 0600, KD_UPLOAD_MS, d);
}

void
kdispatch_install(const struct kdispatch_env *env, const struct store_machine *m,
    struct transport *tr, const struct runner_claim *rc, struct kdispatch_kernel *k,
    struct run_outcome *o)
{
	const char *name = rc->c->kernel;
	char img[BOOT_MAX_PATH], cfg[BOOT_MAX_PATH], initrd[BOOT_MAX_PATH];
	char st_img[128], st_cfg[128], st_mod[128], mods[BOOT_MAX_PATH], have[512];
	struct bf_diag d;
	struct buf cmd, out;
	int r, status = -1, sudo = m->user != NULL && strcmp(m->user, "root") != 0;

	memset(o, 0, sizeof(*o));
	bf_diag_clear(&d);
	buf_init(&cmd, 8192);
	buf_init(&out, 4096);
	if (boot_check_release(k->release, &d) != 0) {
		kdispatch_set(o, RUN_FINISH, "failed", "kernel %s: release: %s", name, d.msg);
		goto out;
	}
	snprintf(img, sizeof(img), "/boot/vmlinuz-%s", k->release);
	snprintf(cfg, sizeof(cfg), "/boot/config-%s", k->release);
	snprintf(initrd, sizeof(initrd), "/boot/initrd.img-%s", k->release);
	snprintf(mods, sizeof(mods), "lib/modules/%s", k->release);
	snprintf(st_img, sizeof(st_img), ".benchfleet/k-%.16s.image", k->key);
	snprintf(st_cfg, sizeof(st_cfg), ".benchfleet/k-%.16s.config", k->key);
	snprintf(st_mod, sizeof(st_mod), ".benchfleet/k-%.16s.modules.tar.gz", k->key);
	/* installed already (an earlier run of the key): the hashes say so */
	if ((r = kd_cmd(&cmd, 0, "sha256sum ", img, " ", cfg, " 2>/dev/null; test -e ",
	    initrd, " && echo initrd; true", NULL)) != 0 ||
	    (r = transport_capture(tr, cmd.data, &out, NULL, 60000, &status, &d)) != 0)
		goto lost;
	snprintf(have, sizeof(have), "%.*s", (int)out.len, out.data != NULL ? out.data : "");
	if (strstr(have, k->image_sha256) != NULL && strstr(have, k->config_sha256) != NULL &&
	    (k->modules_sha256[0] == '\0' || strstr(have, "initrd") != NULL)) {
		kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: %s is installed on %s already",
		    name, k->release, m->name);
		goto done;
	}
	if ((r = kd_upload(env, tr, k->image_sha256, st_img, &d)) != 0 ||
	    (r = kd_upload(env, tr, k->config_sha256, st_cfg, &d)) != 0 ||
	    (k->modules_sha256[0] != '\0' &&
	    (r = kd_upload(env, tr, k->modules_sha256, st_mod, &d)) != 0))
		goto lost;
	buf_reset(&cmd);
	if ((r = kd_cmd(&cmd, sudo, "install -m 0644 -- ", st_img, " ", img, "", NULL)) != 0 ||
	    (r = kd_cmd(&cmd, sudo, "install -m 0644 -- ", st_cfg, " ", cfg, "", NULL)) != 0 ||
	    (k->modules_sha256[0] != '\0' &&
	    ((r = kd_cmd(&cmd, sudo, "tar --no-same-owner -C / -xzf ", st_mod, " -- ", mods, "",
	    NULL)) != 0 ||
	    (r = buf_puts(&cmd, " && { ! command -v update-initramfs >/dev/null || ")) != 0 ||
	    (r = buf_puts(&cmd, sudo ? "sudo -n " : "")) != 0 ||
	    (r = buf_puts(&cmd, "update-initramfs -c -k ")) != 0 ||
	    (r = shquote(&cmd, k->release)) != 0 || (r = buf_puts(&cmd, " >&2; }")) != 0)))
		goto fail;
	/* what the staging left is removed whatever happened */
	if ((r = buf_puts(&cmd, "; rc=$?; rm -f -- ")) != 0 || (r = shquote(&cmd, st_img)) != 0 ||
	    (r = buf_puts(&cmd, " ")) != 0 || (r = shquote(&cmd, st_cfg)) != 0 ||
	    (r = buf_puts(&cmd, " ")) != 0 || (r = shquote(&cmd, st_mod)) != 0 ||
	    (r = buf_puts(&cmd, "; exit $rc")) != 0)
		goto fail;
	buf_reset(&out);
	if ((r = transport_capture(tr, cmd.data, &out, NULL, KD_UPLOAD_MS, &status, &d)) != 0)
		goto lost;
	if (status != 0) {
		kdispatch_set(o, RUN_FINISH, "failed", "kernel %s: installing %s on %s failed (status "
		    "%d)", name, k->release, m->name, status);
		goto out;
	}
	kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: installed %s on %s (%s, %s%s)", name,
	    k->release, m->name, img, cfg, k->modules_sha256[0] ? ", /lib/modules" : "");
done:
	snprintf(k->image, sizeof(k->image), "%s", img);
	k->initrd[0] = '\0';
	if (k->modules_sha256[0] != '\0') {
		buf_reset(&cmd);
		buf_reset(&out);
		if (kd_cmd(&cmd, 0, "test -e ", initrd, " && echo yes; true", NULL) == 0 &&
		    transport_capture(tr, cmd.data, &out, NULL, 30000, &status, &d) == 0 &&
		    out.len >= 3 && memcmp(out.data, "yes", 3) == 0)
			snprintf(k->initrd, sizeof(k->initrd), "%s", initrd);
	}
	o->action = RUN_PROCEED;
	goto out;
fail:
	kdispatch_set(o, RUN_FINISH, "failed", "kernel %s: cannot make the install command: %s", name,
	    bf_err_str(r));
	goto out;
lost:
	kdispatch_set(o, RUN_RETRY, NULL, "kernel %s: installing on %s: %s", name, m->name,
	    d.msg[0] ? d.msg : bf_err_str(r));
	o->link_lost = !transport_alive(tr);
out:
	buf_free(&cmd);
	buf_free(&out);
}

void
kdispatch_verify(const struct kdispatch_env *env, struct transport *tr,
    const struct runner_claim *rc, const struct kdispatch_kernel *k, struct run_outcome *o)
{
	static const char cmd[] =
	    "uname -r; if [ -r /proc/config.gz ]; then echo /proc/config.gz; "
	    "zcat /proc/config.gz | sha256sum; else echo \"/boot/config-$(uname -r)\"; "
	    "sha256sum < \"/boot/config-$(uname -r)\"; fi";
	char text[1024], rel[BOOT_MAX_RELEASE + 1] = "", src[256] = "", sha[65] = "";
	struct bf_diag d;
	int r;

	bf_diag_clear(&d);
	if ((r = kdispatch_capture(tr, cmd, text, sizeof(text), 60000, &d)) != 0) {
		kdispatch_set(o, RUN_RETRY, NULL, "kernel %s: verifying the boot: %s", rc->c->kernel,
		    d.msg[0] ? d.msg : bf_err_str(r));
		o->link_lost = !transport_alive(tr);
		return;
	}
	if (sscanf(text, "%64s %255s %64s", rel, src, sha) != 3 || !sha256_is_hex(sha)) {
		kdispatch_set(o, RUN_FINISH, "boot-failed", "kernel %s: the running kernel's release "
		    "and config hash could not be read: %.200s", rc->c->kernel, text);
		return;
	}
	if (strcmp(rel, k->release) != 0 || strcmp(sha, k->config_sha256) != 0) {
		kdispatch_set(o, RUN_FINISH, "boot-failed", "kernel %s: running %s with config sha256 "
		    "%.16s (%s), built %s with %.16s", rc->c->kernel, rel, sha, src, k->release,
		    k->config_sha256);
		return;
	}
	kdispatch_log(env, rc->c->run_id, "coord", "kernel %s: verified: running %s, config sha256 %s "
	    "(%s) is the build's (key %s)", rc->c->kernel, rel, sha, src, k->key);
}
