/*
 * path.h: the one check of a filesystem path that came from a job (a
 * recipe's "path" parameter) or from the command line of `work unpack`.
 * libc only: the coordinator checks at submit, the agent again before use.
 *
 * A normal path is absolute and lexically canonical: no empty component
 * ("//"), no "." or "..", no trailing "/", no NUL or control bytes, at most
 * PATH_CHECK_MAX bytes. Such a path names one place whatever the current
 * directory is, and "under ROOT" is then a plain prefix test.
 */
#ifndef BF_PATH_H
#define BF_PATH_H

#include <stddef.h>

#define PATH_CHECK_MAX		4095	/* bytes; PATH_MAX less the NUL */
#define PATH_DEFAULT_ROOT	"/var/tmp/benchfleet"	/* benchfleetd --workdir-root */

/*
 * s[0..len) is a normal path (len is the value's length, so a NUL inside is
 * seen). 0, or BF_ERR_INVALID with *why a static phrase such as
 * "is not an absolute path" for a message.
 */
int path_check_normal(const char *s, size_t len, const char **why);

/* Both normal: is p strictly below root ("/a/b" is under "/a", "/a" and
 * "/ab" are not)? 1 or 0. */
int path_is_under(const char *p, const char *root);

/*
 * On this machine, before p (normal, under root) is used: root, if it
 * exists, is a real directory (not a symbolic link) owned by root or by us
 * and writable by nobody else; every component of p below root that exists
 * is not a symbolic link, and all but the last are directories. Components
 * that do not exist yet end the walk (they are created later, by us).
 * 0, or BF_ERR_INVALID / BF_ERR_SYS with why[] saying which component.
 */
int path_check_fs(const char *root, const char *p, char *why, size_t whysz);

#endif
