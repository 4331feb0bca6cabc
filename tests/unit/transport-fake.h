/*
 * transport-fake.h: an in-process transport for unit tests, scripted by a
 * table of rules. A command is answered by the first rule whose match is a
 * substring of it and that has uses left: its stdout (capture) or its lines
 * (exec, delivered one by one to the runner's callback), then its exit
 * status, or a dropped link after drop_after lines. Boots take the next
 * scripted boot result in order. Everything it did is counted, for the
 * test to check.
 *
 * Ownership: the script, its rules and strings are the test's and must
 * outlive every transport connected with it.
 */
#ifndef BF_TRANSPORT_FAKE_H
#define BF_TRANSPORT_FAKE_H

#include <pthread.h>

#include "transport.h"

struct fake_rule {
	const char *match;	/* substring of the command line; "" matches any */
	int uses;		/* how many commands it answers; 0: any number */
	int ret;		/* returned after the output (BF_ERR_LOST: the link drops) */
	int status;		/* the exit status */
	const char *out;	/* capture: stdout; exec: lines, each ending in \n */
	int drop_after;		/* exec: > 0, the link drops after that many lines */
	int pause_before;	/* exec: > 0, pause_ms pass before that line (0-based) */
	int pause_ms;
	int used;		/* counted by the fake */
};

struct fake_boot {
	int ret;		/* boot_ensure's answer */
	int rebooted, power_cycled, recovered;
	int drop;		/* the link is gone afterwards */
	const char *boot_id;
	const char *reason;
};

struct fake_script {
	pthread_mutex_t mu;		/* the fake locks it: a sched test reads counts */
	struct fake_rule *rules;
	size_t nrules;
	const struct fake_boot *boots;
	size_t nboots;
	size_t boots_used;
	int connect_fails;		/* the next that many connects fail BF_ERR_LOST */
	int connects, execs, captures, uploads, boots_tried, closes;
	int unmatched;			/* commands no rule answered (BF_ERR_PROTO) */
	int upload_unreadable;		/* uploads whose local file could not be read */
	char uploaded[1024];		/* every upload's remote path, "|"-separated */
	char boot_kernel[128];		/* the last boot's kernel ... */
	char boot_image[256];		/* ... and its image in the boot map ("" none) */
	char boot_initrd[256];		/* ... and its initrd there ("" none) */
	char stdin_last[512];		/* the start of the last exec's stdin */
	int prestarts;			/* transport_prestart calls */
	char order[64];			/* 'S' a step exec'd, 'P' a prestart, in order */
};

void fake_script_init(struct fake_script *fs, struct fake_rule *rules, size_t nrules,
    const struct fake_boot *boots, size_t nboots);
/* A transport_connect_fn; arg is the struct fake_script. */
int fake_connect(void *arg, const struct ssh_target *target, struct transport **out,
    struct bf_diag *d);
/* The counter *p read under the script's lock. */
int fake_count(struct fake_script *fs, const int *p);

#endif
