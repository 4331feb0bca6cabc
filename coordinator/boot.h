/*
 * boot.h: boot control of a lab machine. Reboot it into kernel X with
 * command line Y by one of a table of methods (kexec, grub-reboot, grubby,
 * an admin's command), wait for SSH with backoff, verify uname -r,
 * /proc/cmdline and a changed boot_id, and recover a machine that does not
 * come back by its power-cycle command (IPMI in a lab, the QEMU monitor in
 * tests).
 *
 * A machine's boot config is JSON (stored on the machine):
 *   {"method": "kexec",
 *    "kernels": {"6.1.0-28-cloud-amd64": {"image": "/boot/vmlinuz-6.1.0-28-cloud-amd64",
 *                                         "initrd": "/boot/initrd.img-6.1.0-28-cloud-amd64"}},
 *    "cmdline_base": "console=ttyS0 panic=-1",
 *    "timeout_s": 120,
 *    "power_cycle": "ipmi-a"}
 * Optional too: "kexec_exec": "kexec" (kexec -e, the default) or "systemctl"
 * (systemctl kexec); "sudo": true (prefix remote commands with sudo -n);
 * "command": "lab-grub" for method "command"; "power_cycle_timeout_s"
 * (default 60); per kernel "grub_entry" for method grub-reboot (default:
 * the release).
 *
 * Commands are never part of a machine's config: "power_cycle" and
 * "command" name PROFILES that the daemon's --config file declares
 * (config.h), so an API caller can only pick among commands the host's
 * admin wrote down:
 *   power.ipmi-a = ipmitool -I lanplus -H bmc-a -U admin -f /etc/benchfleet/bmc-a.pw chassis power cycle
 *   boot-command.lab-grub = sudo -n /usr/local/sbin/lab-boot {kernel} --append={cmdline}
 * A power profile is an argv run on the coordinator (no shell). A
 * boot-command profile is run on the machine over SSH: each word, with its
 * slots {kernel} {image} {initrd} {cmdline} filled in, is shquote()d as
 * one shell word, so no slot value is ever read as shell syntax. Such a
 * template is refused when it could not hold that promise: a slot inside
 * single quotes, a shell as a word (sh -c would run the value), or shell
 * syntax (; & | < > ( ) $ ` * ? [ ] ~) outside quotes.
 *
 * A store written by an older benchfleet may hold an inline argv in
 * "power_cycle" or a shell template in "command": such a config parses to
 * an error saying to re-declare it as a profile, so the machine runs
 * non-boot work as before but nothing of the stored command ever runs.
 */
#ifndef BF_BOOT_H
#define BF_BOOT_H

#include <stddef.h>
#include <jansson.h>

#include "buf.h"
#include "caps.h"
#include "err.h"
#include "ssh.h"

/* Caps of the boot config and of what a machine reports (move to caps.h). */
#define BOOT_MAX_KERNELS	64		/* kernels of one machine */
#define BOOT_MAX_RELEASE	64		/* a kernel release, as uname -r (UTS is 65) */
#define BOOT_MAX_PATH		1024		/* an image/initrd path on the machine */
#define BOOT_MAX_CMDLINE	BF_MAX_STR	/* a command line (the kernel's COMMAND_LINE_SIZE is 2048..4096) */
#define BOOT_MAX_TIMEOUT_S	7200
#define BOOT_BOOT_ID_LEN	36		/* 8-4-4-4-12 */

struct boot_method;

struct boot_kernel {
	char *release;		/* as uname -r prints it */
	char *image;		/* path on the machine (kexec, grubby) */
	char *initrd;		/* path on the machine, or NULL */
	char *grub_entry;	/* grub-reboot: menu entry (title, id or index), or NULL */
};

/* A named command of the daemon's config (see above). */
enum boot_profile_kind { BOOT_PROFILE_POWER = 0, BOOT_PROFILE_COMMAND };

struct boot_profile {
	char *name;
	enum boot_profile_kind kind;
	char **argv;		/* NULL-terminated; NULL after boot_profiles_strip() */
	size_t argc;
};

struct boot_profiles {
	struct boot_profile *v;
	size_t n;
};

/* The config kinds in profile_kinds order: "power", "boot-command". */
extern const char *const boot_profile_kinds[];

struct boot_machine {
	const struct boot_method *method;
	struct boot_kernel *kernels;
	size_t nkernels;
	char *cmdline_base;	/* "" when none */
	int timeout_s;		/* reboot command to verified SSH */
	const struct boot_profile *power_cycle;	/* run on the coordinator; NULL when none */
	int power_cycle_timeout_s;
	const struct boot_profile *command;	/* method "command": the template */
	int kexec_systemctl;	/* "kexec_exec": "systemctl" */
	int sudo;
};

/* What boot_ensure found and did. Strings are NUL-terminated. */
struct boot_result {
	int rebooted;		/* a reboot command was issued */
	int power_cycled;	/* the power-cycle command ran */
	int power_cycle_status;	/* its exit status (-1: killed, timed out or not run) */
	int recovered;		/* after a failure: the machine answered SSH again */
	int attempts;		/* SSH connect attempts while waiting */
	double seconds;		/* whole call */
	double ssh_seconds;	/* reboot command issued to verified SSH (0 without reboot) */
	char kernel[BOOT_MAX_RELEASE + 1];	/* booted now, as uname -r ("" if unknown) */
	char cmdline[BOOT_MAX_CMDLINE + 1];	/* /proc/cmdline now */
	char boot_id[BOOT_BOOT_ID_LEN + 1];	/* now */
	char prev_boot_id[BOOT_BOOT_ID_LEN + 1];/* before the request */
	char reason[BF_DIAG_MSG];		/* why the boot failed; "" on success */
};

/* Progress lines for the run log and a cancel flag; all may be NULL. */
struct boot_hooks {
	void (*log)(void *arg, const char *line);
	void *arg;
	const volatile int *cancel;	/* non-zero: give up waiting (BF_ERR_CANCELLED) */
	int fresh;			/* reboot even when the booted config matches (a
					 * fresh boot per repetition; e.g. for grub-reboot,
					 * which cannot carry a per-boot cmdline token) */
};

/*
 * Add profile kind.name (kind one of boot_profile_kinds) with the words of
 * its command; quoted[i] says word i had a quoted part (config.c). Checks
 * the name (jx_check_name), a boot-command template (see above), and that
 * kind.name is new (BF_ERR_EXISTS). The words are copied. Messages never
 * repeat the words: they may hold a password.
 */
int boot_profiles_add(struct boot_profiles *pf, const char *kind, const char *name,
    char *const *words, const unsigned char *quoted, size_t n, struct bf_diag *d);
/* Free every profile, wiping its words; pf itself is the caller's. Accepts NULL. */
void boot_profiles_clear(struct boot_profiles *pf);
/* Wipe and drop every argv, keeping the names: for a process that only
 * validates machine configs (an unprivileged API process). */
void boot_profiles_strip(struct boot_profiles *pf);
/*
 * The profiles boot_config_parse() resolves names against (NULL: none).
 * Set once at start, before any thread parses a config; pf must outlive
 * every boot_machine parsed after (each points into it).
 */
void boot_profiles_use(const struct boot_profiles *pf);
const struct boot_profile *boot_profile_find(enum boot_profile_kind kind, const char *name);

/*
 * Parse and validate a boot config (the JSON object above). path names obj
 * in messages ("machines.zen4-a.boot"). Messages name the field:
 * 'boot.kernels.6.1.image: "vmlinuz" is not an absolute path'.
 * *out is the caller's, freed with boot_machine_free().
 */
int boot_config_parse(const json_t *obj, const char *path, struct boot_machine **out,
    struct bf_diag *d);
/* The same from JSON text (at most BF_MAX_API_BODY bytes). */
int boot_config_loads(const char *text, size_t len, struct boot_machine **out, struct bf_diag *d);
void boot_machine_free(struct boot_machine *m);		/* accepts NULL */

/*
 * A stored boot config as API viewers may see it (new reference; NULL for
 * no or unparseable text): the JSON minus anything that is not a profile
 * name in "power_cycle" and "command" (an older release's inline argv).
 * *errp (errp may be NULL) is why the config cannot boot, or NULL: a new
 * string the caller frees.
 */
json_t *boot_config_view(const char *text, char **errp);

/* The method's name ("kexec", ...). */
const char *boot_method_name(const struct boot_machine *m);
/* The kernel of that release in m's map, or NULL. */
const struct boot_kernel *boot_kernel_find(const struct boot_machine *m, const char *release);

/* A kernel built for a run (kdispatch.h), installed at image (and initrd,
 * or NULL), added to m's map for this boot only: BF_ERR_INVALID for a bad
 * release or a relative path, BF_ERR_EXISTS when the map has the release. */
int boot_machine_add_kernel(struct boot_machine *m, const char *release, const char *image,
    const char *initrd);

/*
 * Check a requested kernel release (1..BOOT_MAX_RELEASE bytes of
 * [A-Za-z0-9._+~-], starting alphanumeric) and a requested command line
 * (printable ASCII, no quotes, backslash or backquote, no newline, at most
 * BOOT_MAX_CMDLINE bytes; params separated by spaces). BF_ERR_INVALID.
 */
int boot_check_release(const char *release, struct bf_diag *d);
int boot_check_cmdline(const char *cmdline, struct bf_diag *d);

/*
 * Bring machine m (reached as t) up on kernel `kernel` (a release in m's
 * map; NULL or "" = the one running now) with every param of `cmdline`
 * (NULL = "") on top of m->cmdline_base.
 *
 * *connp is an open connection or NULL; it may be replaced (the reboot
 * drops it). On return *connp is a live connection when the machine
 * answers, else NULL; the caller owns it either way.
 *
 * When the machine already runs that kernel with exactly base + cmdline
 * (ignoring BOOT_IMAGE= and initrd=), it is not rebooted (unless
 * hooks->fresh). Otherwise:
 * record boot_id, issue the method's reboot, wait for SSH with backoff up
 * to m->timeout_s, verify uname -r, that /proc/cmdline holds every
 * requested param, and that boot_id changed. On a timeout or a failed
 * check, run m->power_cycle, wait again and check that the machine is back
 * on some kernel (res->recovered).
 *
 * Returns 0 when verified. BF_ERR_TIMEOUT: no (new) SSH within the
 * timeout; BF_ERR_STATE: it came back wrong (kernel, cmdline, boot_id) or
 * the reboot command failed (then nothing was rebooted or power-cycled);
 * BF_ERR_NOTFOUND / BF_ERR_INVALID: bad request, nothing done;
 * BF_ERR_CANCELLED; or an SSH error reading the state before any reboot.
 * res->reason and d say why; the caller marks the run boot-failed on
 * TIMEOUT/STATE, and res->recovered == 0 means the machine is gone.
 */
int boot_ensure(const struct boot_machine *m, const struct ssh_target *t,
    struct ssh_conn **connp, const char *kernel, const char *cmdline,
    const struct boot_hooks *hooks, struct boot_result *res, struct bf_diag *d);

/* The remote command line the method would run to boot `kernel` with the
 * full command line `cmdline` (base included), appended to out. For review
 * and tests; boot_ensure() builds the same. */
int boot_reboot_command(const struct boot_machine *m, const char *kernel, const char *cmdline,
    struct buf *out, struct bf_diag *d);

/* res as a JSON object (new reference, or NULL on ENOMEM). */
json_t *boot_result_json(const struct boot_result *res);

#endif
