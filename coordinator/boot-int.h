/*
 * boot-int.h: what boot.c (the boot sequence and the reboot commands) and
 * boot-config.c (parsing and validating a machine's boot config and the
 * daemon's profiles, and their tables) share, and nobody else sees.
 */
#ifndef BF_BOOT_INT_H
#define BF_BOOT_INT_H

#include "boot.h"
#include "buf.h"
#include "err.h"

/* Build the remote command that schedules the boot into k with cmdline
 * (the full command line, base included), appended to cmd. */
typedef int (*boot_cmd_fn)(const struct boot_machine *m, const struct boot_kernel *k,
    const char *cmdline, struct buf *cmd, struct bf_diag *d);

/* One entry of boot-config.c's method table. */
struct boot_method {
	const char *name;
	boot_cmd_fn build;
	int needs_image;	/* each kernel needs "image" */
	int sets_cmdline;	/* can boot an arbitrary cmdline */
};

/* The builders of the methods (boot.c). */
int boot_cmd_kexec(const struct boot_machine *, const struct boot_kernel *,
    const char *, struct buf *, struct bf_diag *);
int boot_cmd_grub_reboot(const struct boot_machine *, const struct boot_kernel *,
    const char *, struct buf *, struct bf_diag *);
int boot_cmd_grubby(const struct boot_machine *, const struct boot_kernel *,
    const char *, struct buf *, struct bf_diag *);
int boot_cmd_command(const struct boot_machine *, const struct boot_kernel *,
    const char *, struct buf *, struct bf_diag *);

/* The slots of a boot-command template, in boot_cmd_command's order of
 * values: {kernel} {image} {initrd} {cmdline} (boot-config.c). */
#define BOOT_NSLOTS	4
extern const char *const boot_slots[BOOT_NSLOTS];
/* The slot that starts at p, or -1. */
int boot_slot_at(const char *p);

#endif
