/*
 * main.c: benchfleet-agent's command line. `step` is what the coordinator
 * runs over SSH; `work` holds the built-in workloads; `--version`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build.h"
#include "caps.h"
#include "probe.h"
#include "run.h"
#include "work.h"

#ifndef BF_VERSION
#define BF_VERSION "0.0.0"
#endif

struct main_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static int
main_step(int argc, char **argv)
{
	char *end = NULL;
	long w = 0;

	/* step [--wait S]: the step within S seconds, or exit */
	if (argc == 3 && strcmp(argv[1], "--wait") == 0) {
		errno = 0;
		w = strtol(argv[2], &end, 10);
		if (errno != 0 || end == argv[2] || *end != '\0' || w < 1 ||
		    w > BF_AGENT_STEP_WAIT_MAX) {
			fprintf(stderr, "benchfleet-agent: step --wait: \"%.32s\" is not 1..%d "
			    "seconds\n", argv[2], BF_AGENT_STEP_WAIT_MAX);
			return RUN_EXIT_ERROR;
		}
	} else if (argc != 1) {
		fprintf(stderr, "benchfleet-agent: usage: step [--wait SECONDS]\n");
		return RUN_EXIT_ERROR;
	}
	return run_step((int)w);
}

static int
main_work(int argc, char **argv)
{
	return work_main(argc - 1, argv + 1);
}

static int
main_version(int argc, char **argv)
{
	printf("benchfleet-agent %s\n", BF_VERSION);
	return 0;
}

static int
main_probe(int argc, char **argv)
{
	return probe_main(argc, argv);
}

static int
main_build(int argc, char **argv)
{
	if (argc != 1) {
		fprintf(stderr, "benchfleet-agent: build takes no arguments\n");
		return 2;
	}
	return build_main();
}

static const struct main_cmd main_cmds[] = {
	{ .name = "step",	.fn = main_step },
	{ .name = "build",	.fn = main_build },
	{ .name = "probe",	.fn = main_probe },
	{ .name = "work",	.fn = main_work },
	{ .name = "--version",	.fn = main_version },
};

/* A closed 0/1/2 would let a pipe land there and be clobbered by dup2. */
static void
main_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0 && fd <= STDERR_FILENO) {
		/* the std slot keeps the fd; it must survive exec for the workload */
		fcntl(fd, F_SETFD, 0);
	}
	if (fd > STDERR_FILENO)
		close(fd);
}

int
main(int argc, char **argv)
{
	size_t i;

	main_std_fds();
	for (i = 0; argc >= 2 && i < sizeof(main_cmds) / sizeof(main_cmds[0]); i++)
		if (strcmp(argv[1], main_cmds[i].name) == 0)
			return main_cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "usage: benchfleet-agent step < step.json\n"
	    "       benchfleet-agent probe\n"
	    "       benchfleet-agent work NAME ... (benchfleet-agent work lists them)\n"
	    "       benchfleet-agent --version\n");
	return RUN_EXIT_ERROR;
}
