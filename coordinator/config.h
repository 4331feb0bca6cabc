/*
 * config.h: benchfleetd's --config FILE. A file holds lines "key = value",
 * where key is a long option without its dashes ("listen", "tls-cert") and
 * a flag option takes "yes" or "no". Blank lines and lines starting with
 * '#' are skipped; a '#' after a blank starts a trailing comment. Values are
 * taken literally (no quoting); a key given twice takes its last value.
 *
 * Every setting goes through the caller's own option table (struct
 * config_ops), the one the command line uses, and an option that the
 * command line also gives is left to the command line.
 */
#ifndef BF_CONFIG_H
#define BF_CONFIG_H

#include "err.h"

#define CONFIG_MAX_LINE		4096	/* bytes of one line, newline excluded */

enum config_kind {
	CONFIG_NONE = 0,	/* no such option */
	CONFIG_VALUE,		/* --name VALUE */
	CONFIG_FLAG		/* --name; "yes" or "no" in a file */
};

/* The caller's option table, seen through two functions. */
struct config_ops {
	enum config_kind (*kind)(const char *name);
	/* Set option name (kind() said it exists) to value; a flag gets
	 * "yes" or "no". Returns 0 or a BF_ERR_* code. */
	int (*set)(void *arg, const char *name, const char *value);
};

/*
 * Read the file of every "--config FILE" in argv[1..argc-1], in order,
 * skipping the values of other options, and set each of its options that
 * argv does not give. 0, or a BF_ERR_* code with d->msg naming the file
 * and line: "/etc/benchfleet/benchfleetd.conf:7: unknown option \"lisen\"".
 */
int config_load(int argc, char *const *argv, const struct config_ops *ops, void *arg,
    struct bf_diag *d);

/* One file: every line through ops->set, command line or not. */
int config_read(const char *path, const struct config_ops *ops, void *arg, struct bf_diag *d);

#endif
