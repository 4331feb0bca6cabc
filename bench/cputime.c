/*
 * cputime.c: run a command and print, on stderr, the CPU time that it and
 * every descendant it waited for used, with wait4's microsecond rusage
 * ("CPUTIME wall_s user_s sys_s"). bench/run runs the agent's step under it
 * on a fleet host: the agent's own CPU is this total minus the rusage the
 * agent reports for its workload. /usr/bin/time rounds to 10 ms, too coarse.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: cputime CMD [ARG...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("wait4");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "CPUTIME %.6f %.6f %.6f\n",
	    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	    (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
