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
 *
 * Profiles: a key "KIND.NAME" whose KIND is one of ops->profile_kinds
 * ("power.ipmi-a = ipmitool -I lanplus -H bmc-a chassis power cycle")
 * declares a named command, which only a file can do. Its value is split
 * into words on blanks; a part in single quotes ('a b#c') is taken
 * literally, blanks and '#' included, with no escapes (so a word cannot
 * hold a single quote); double quotes and backslashes are refused rather
 * than guessed at; a '#' that starts a word outside quotes starts a
 * comment. Each profile line goes to ops->profile; a KIND.NAME given twice
 * is the callback's to refuse.
 */
#ifndef BF_CONFIG_H
#define BF_CONFIG_H

#include "err.h"

#define CONFIG_MAX_LINE		4096	/* bytes of one line, newline excluded */
#define CONFIG_MAX_WORDS	64	/* words of one profile command */

enum config_kind {
	CONFIG_NONE = 0,	/* no such option */
	CONFIG_VALUE,		/* --name VALUE */
	CONFIG_FLAG		/* --name; "yes" or "no" in a file */
};

/* A profile's value split into words (see above). The strings live as
 * long as the callback runs; copy what you keep. */
struct config_words {
	char *word[CONFIG_MAX_WORDS + 1];	/* n words, then NULL */
	unsigned char quoted[CONFIG_MAX_WORDS];	/* word i had a '...' part */
	size_t n;				/* >= 1 */
};

/* The caller's option table, seen through two functions, and its profiles. */
struct config_ops {
	enum config_kind (*kind)(const char *name);
	/* Set option name (kind() said it exists) to value; a flag gets
	 * "yes" or "no". Returns 0 or a BF_ERR_* code. */
	int (*set)(void *arg, const char *name, const char *value);
	/* Profile kinds, NULL-terminated ("power", "boot-command"); NULL: a
	 * file has no profiles. */
	const char *const *profile_kinds;
	/* Declare profile kind.name; 0, or a BF_ERR_* code with d->msg saying
	 * why (the file and line are added). */
	int (*profile)(void *arg, const char *kind, const char *name,
	    const struct config_words *w, struct bf_diag *d);
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
