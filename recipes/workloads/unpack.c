/*
 * unpack.c: `work unpack --tar FILE --dir DIR`: unpack a source tarball
 * into DIR once and keep it there, so that a kernel-build step does not pay
 * half a minute of xz before every run. DIR/.bf-unpacked marks a complete
 * unpack (written last, after tar succeeded into DIR.part and the rename);
 * a half-finished one is removed and redone. tar runs by execvp, no shell.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl.h"

#define UNPACK_MAX_PATH	2048

static int
unpack_run(char *const argv[])
{
	int status;
	pid_t pid;

	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "benchfleet-agent: unpack: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int
unpack_main(int argc, char **argv)
{
	char stamp[UNPACK_MAX_PATH], part[UNPACK_MAX_PATH];
	const char *tar = NULL, *dir = NULL;
	struct stat sb;
	int i, fd;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--tar") == 0)
			tar = argv[i + 1];
		else if (strcmp(argv[i], "--dir") == 0)
			dir = argv[i + 1];
		else
			break;
	}
	if (i != argc || tar == NULL || dir == NULL || dir[0] != '/' ||
	    strlen(dir) > UNPACK_MAX_PATH - 16 || strstr(dir, "/..") != NULL) {
		fprintf(stderr, "benchfleet-agent: work unpack --tar FILE --dir /ABSOLUTE/DIR\n");
		return WL_EXIT_USAGE;
	}
	snprintf(stamp, sizeof(stamp), "%s/.bf-unpacked", dir);
	snprintf(part, sizeof(part), "%s.part", dir);
	if (stat(stamp, &sb) == 0) {
		printf("unpacked: cached\n");
		return 0;
	}
	{
		char *rm1[] = { "rm", "-rf", "--", (char *)dir, part, NULL };
		char *mk[] = { "mkdir", "-p", "--", part, NULL };
		char *tx[] = { "tar", "-xf", (char *)tar, "-C", part, NULL };

		if (unpack_run(rm1) != 0 || unpack_run(mk) != 0 || unpack_run(tx) != 0) {
			fprintf(stderr, "benchfleet-agent: unpack: unpacking %s failed\n", tar);
			return 1;
		}
	}
	if (rename(part, dir) != 0 ||
	    (fd = open(stamp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "benchfleet-agent: unpack: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	close(fd);
	printf("unpacked: fresh\n");
	return 0;
}
