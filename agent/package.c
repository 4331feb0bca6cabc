/*
 * package.c: checking the binaries of the Debian packages a step declares
 * (package.h). The lookup is execvp's: each PATH entry in order, an empty
 * entry being the current directory, which a step never relies on here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "package.h"

int
package_which(const char *name, const char *path, char *found, size_t fsz)
{
	const char *p, *end;
	struct stat sb;
	size_t n;

	if (path == NULL || path[0] == '\0')
		path = PACKAGE_DEFAULT_PATH;
	if (strchr(name, '/') != NULL || name[0] == '\0')
		return BF_ERR_NOTFOUND;
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		/* a relative entry would depend on the cwd: skipped */
		if (n > 0 && p[0] == '/' && (size_t)snprintf(found, fsz, "%.*s/%s", (int)n, p,
		    name) < fsz && stat(found, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    access(found, X_OK) == 0)
			return 0;
		if (end == NULL)
			break;
	}
	found[0] = '\0';
	return BF_ERR_NOTFOUND;
}

int
package_check(const struct step *st, struct bf_diag *d)
{
	char found[4096], field[48];
	const char *path = getenv("PATH");
	struct stat sb;
	size_t i;

	/* a program the lab installs itself, at a path a parameter gave */
	if (st->argv[0][0] == '/') {
		const char *why = NULL;

		if (stat(st->argv[0], &sb) != 0)
			why = strerror(errno);
		else if (!S_ISREG(sb.st_mode))
			why = "not a regular file";
		else if (access(st->argv[0], X_OK) != 0)
			why = strerror(errno);
		if (why != NULL) {
			bf_diag_set(d, "argv[0]", "\"%.200s\" is not an executable file on this "
			    "machine (%s); a program benchfleet does not install must be installed "
			    "there by the lab", st->argv[0], why);
			return BF_ERR_NOTFOUND;
		}
	}
	for (i = 0; i < st->npackages; i++) {
		if (package_which(st->packages[i].binary, path, found, sizeof(found)) == 0)
			continue;
		snprintf(field, sizeof(field), "packages[%zu].binary", i);
		bf_diag_set(d, field, "\"%s\" is not on PATH (%.200s); install the Debian "
		    "package %s", st->packages[i].binary, path != NULL && path[0] != '\0' ? path :
		    PACKAGE_DEFAULT_PATH, st->packages[i].debian);
		return BF_ERR_NOTFOUND;
	}
	return 0;
}
