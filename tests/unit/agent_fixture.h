/*
 * agent_fixture.h: what the agent's unit tests share: fake /sys and /proc
 * trees under a mktemp root, and one run of `benchfleet-agent step` with a
 * step on its stdin. Header-only, included by one test each.
 */
#ifndef BF_AGENT_FIXTURE_H
#define BF_AGENT_FIXTURE_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "t.h"

/* root + path := text, parents made. */
static inline void
fix_mk(const char *root, const char *path, const char *text)
{
	char full[PATH_MAX], *p;
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", root, path);
	for (p = full + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		(void)mkdir(full, 0755);
		*p = '/';
	}
	if ((f = fopen(full, "w")) == NULL) {
		fprintf(stderr, "cannot create %s: %s\n", full, strerror(errno));
		t_fails++;
		return;
	}
	fputs(text, f);
	fclose(f);
}

/* Run `agent step` with step on its stdin; its stdout into *raw (which the
 * caller has buf_init'ed and frees). Returns the wait status. */
static inline int
fix_agent_step(const char *agent, const char *step, struct buf *raw)
{
	char chunk[8192];
	int in[2], out[2], st = -1;
	ssize_t n;
	pid_t pid;

	T_EQ_INT(pipe(in), 0);
	T_EQ_INT(pipe(out), 0);
	if ((pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(agent, agent, "step", (char *)NULL);
		_exit(126);
	}
	close(in[0]);
	close(out[1]);
	T_EQ_INT(write(in[1], step, strlen(step)), (ssize_t)strlen(step));
	close(in[1]);
	while ((n = read(out[0], chunk, sizeof(chunk))) > 0)
		T_EQ_INT(buf_append(raw, chunk, (size_t)n), 0);
	close(out[0]);
	T_EQ_INT(waitpid(pid, &st, 0), pid);
	return st;
}

#endif
