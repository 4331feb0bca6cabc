/*
 * path.c: normal absolute paths, confinement under a root, and the
 * symlink walk the agent does before a path parameter is used.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "path.h"

int
path_check_normal(const char *s, size_t len, const char **why)
{
	size_t i, comp = 0;

	*why = NULL;
	if (len == 0 || s[0] != '/') {
		*why = "is not an absolute path";
		return BF_ERR_INVALID;
	}
	if (len > PATH_CHECK_MAX) {
		*why = "is longer than 4095 bytes";
		return BF_ERR_INVALID;
	}
	if (len == 1)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0') {
			*why = "contains a NUL byte";
			return BF_ERR_INVALID;
		}
		if (c < 0x20 || c == 0x7f) {
			*why = "contains a control character";
			return BF_ERR_INVALID;
		}
		if (c != '/')
			continue;
		/* the component that ends here began at comp */
		if (i > 0 && i == comp) {
			*why = "has an empty component (\"//\")";
			return BF_ERR_INVALID;
		}
		if (i > 0 && ((i - comp == 1 && s[comp] == '.') ||
		    (i - comp == 2 && s[comp] == '.' && s[comp + 1] == '.'))) {
			*why = "has a \".\" or \"..\" component";
			return BF_ERR_INVALID;
		}
		comp = i + 1;
	}
	if (comp == len) {
		*why = "ends in \"/\"";
		return BF_ERR_INVALID;
	}
	if ((len - comp == 1 && s[comp] == '.') ||
	    (len - comp == 2 && s[comp] == '.' && s[comp + 1] == '.')) {
		*why = "has a \".\" or \"..\" component";
		return BF_ERR_INVALID;
	}
	return 0;
}

int
path_is_under(const char *p, const char *root)
{
	size_t rl = strlen(root);

	if (rl == 1 && root[0] == '/')
		return p[0] == '/' && p[1] != '\0';
	return strncmp(p, root, rl) == 0 && p[rl] == '/' && p[rl + 1] != '\0';
}

int
path_check_fs(const char *root, const char *p, char *why, size_t whysz)
{
	char cur[PATH_CHECK_MAX + 1];
	struct stat sb;
	size_t rl, i, n;

	rl = strlen(root);
	n = strlen(p);
	if (n > PATH_CHECK_MAX || !path_is_under(p, root)) {
		snprintf(why, whysz, "%.200s is not under %.200s", p, root);
		return BF_ERR_INVALID;
	}
	if (lstat(root, &sb) != 0) {
		if (errno == ENOENT)
			return 0;	/* nothing below it exists either */
		snprintf(why, whysz, "%.200s: %s", root, strerror(errno));
		return BF_ERR_SYS;
	}
	/* a root that others may write lets them plant a symlink after we look */
	if (S_ISLNK(sb.st_mode) || !S_ISDIR(sb.st_mode) ||
	    (sb.st_uid != 0 && sb.st_uid != geteuid()) || (sb.st_mode & 022) != 0) {
		snprintf(why, whysz, "the root %.200s is not a directory owned by root (or "
		    "us) and writable by no one else", root);
		return BF_ERR_INVALID;
	}
	memcpy(cur, p, n + 1);
	/* root "/" has length 1 and its first component starts at 1 too */
	for (i = rl == 1 ? 1 : rl + 1; i <= n; i++) {
		if (cur[i] != '/' && cur[i] != '\0')
			continue;
		cur[i] = '\0';
		if (lstat(cur, &sb) != 0) {
			if (errno == ENOENT)
				return 0;
			snprintf(why, whysz, "%.200s: %s", cur, strerror(errno));
			return BF_ERR_SYS;
		}
		if (S_ISLNK(sb.st_mode)) {
			snprintf(why, whysz, "%.200s is a symbolic link", cur);
			return BF_ERR_INVALID;
		}
		if (i < n && !S_ISDIR(sb.st_mode)) {
			snprintf(why, whysz, "%.200s is not a directory", cur);
			return BF_ERR_INVALID;
		}
		cur[i] = p[i];
	}
	return 0;
}
