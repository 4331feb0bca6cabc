/*
 * err.h: the one error space of benchfleet. Functions return int: 0 on
 * success, a negative BF_ERR_* code on failure. A struct bf_diag carries a
 * message for a person (which field, which value, what was expected).
 */
#ifndef BF_ERR_H
#define BF_ERR_H

#include <stddef.h>

enum {
	BF_OK = 0,
	BF_ERR_ALLOC = -1,	/* out of memory */
	BF_ERR_INVALID = -2,	/* a value is not acceptable */
	BF_ERR_RANGE = -3,	/* a number is out of its range */
	BF_ERR_PARSE = -4,	/* malformed input (JSON, integer, line) */
	BF_ERR_TOOBIG = -5,	/* input over its cap */
	BF_ERR_NOTFOUND = -6,	/* no such job, run, machine, recipe */
	BF_ERR_EXISTS = -7,	/* already exists */
	BF_ERR_IO = -8,		/* file read/write failed */
	BF_ERR_SYS = -9,	/* a system call failed; see errno */
	BF_ERR_DB = -10,	/* the store failed */
	BF_ERR_SSH = -11,	/* SSH transport failed */
	BF_ERR_HOSTKEY = -12,	/* host key unknown or changed */
	BF_ERR_AUTH = -13,	/* authentication refused */
	BF_ERR_TIMEOUT = -14,	/* timed out */
	BF_ERR_PROTO = -15,	/* the peer broke the protocol */
	BF_ERR_STATE = -16,	/* not allowed in the current state */
	BF_ERR_CANCELLED = -17,	/* cancelled by a user */
	BF_ERR_LOST = -18,	/* connection to a machine lost */
	BF_ERR_LAST = -19
};

/* Static text of an error code; never NULL. */
const char *bf_err_str(int r);

#define BF_DIAG_MSG	512
#define BF_DIAG_FIELD	160

/*
 * A diagnostic for a person. field is the JSON path of the value at fault
 * ("matrix.thp[2]"), msg the whole sentence including the field, e.g.
 * 'matrix.thp[2]: "alwayz" is not one of never, madvise, always'.
 */
struct bf_diag {
	char field[BF_DIAG_FIELD];
	char msg[BF_DIAG_MSG];
};

/* Set d (may be NULL): field, and msg = "field: <formatted>" (or just the
 * formatted text when field is NULL or empty). Returns nothing. */
void bf_diag_set(struct bf_diag *d, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void bf_diag_clear(struct bf_diag *d);

/*
 * Every field error of one document (a job a person fixes in a form), not
 * only the first: one per field, the first BF_DIAG_LIST_MAX kept, total
 * counting those past the cap too. The caller owns it (~21 KiB: heap, not
 * stack); nothing in it needs freeing.
 */
#define BF_DIAG_LIST_MAX	32
struct bf_diag_list {
	struct bf_diag item[BF_DIAG_LIST_MAX];
	size_t n;		/* kept, in the order found */
	size_t total;		/* found, including those past the cap */
};
void bf_diag_list_clear(struct bf_diag_list *l);
/* A copy of d into l, unless l is NULL, d has no message, or an error of
 * d's field is in l already (the first said about a field stands). */
void bf_diag_list_add(struct bf_diag_list *l, const struct bf_diag *d);

#endif
