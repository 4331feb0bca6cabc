/*
 * exec.h: running one iteration of a workload: fork, execvp (never a
 * shell), capture, forward log lines, time, and kill on timeout.
 */
#ifndef BF_AGENT_EXEC_H
#define BF_AGENT_EXEC_H

#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "step.h"

/* Log lines sent per iteration per stream; the rest are counted. */
#define EXEC_MAX_LOG_LINES	200
/* After the workload's leader exits, how long its output may still drain
 * (a daemonized grandchild outside its process group can hold the pipe). */
#define EXEC_DRAIN_MS		2000

struct exec_result {
	int exit_code;		/* exit status; 128+signal when killed */
	int signal;		/* terminating signal, 0 if none */
	int timeout;		/* killed because timeout_s expired */
	double wall_s, user_s, sys_s;
	long maxrss_kb;
	long minflt, majflt;	/* wait4 rusage: the workload's and its reaped children's */
	int exec_errno;		/* set when the child failed before running argv */
	char exec_what[24];	/* which call failed: "execvp", "chdir", ... */
	struct buf out;		/* captured stdout, at most BF_MAX_CAPTURE */
	struct buf err;		/* captured stderr, at most BF_MAX_CAPTURE */
};

/* Handlers that kill a running workload's process group when the agent
 * gets SIGTERM/SIGHUP/SIGINT/SIGPIPE. Call once before exec_run(). */
int exec_signals_init(void);

/*
 * Run st->argv once as iteration number iteration, forwarding its output
 * as log lines. res is filled in (init it with exec_result_init, free it
 * with exec_result_free). Returns 0 when the iteration ran (whatever its
 * exit status, including exec failure reported in res), BF_ERR_LOST when
 * the agent's own stdout went away, another BF_ERR_* on internal failure.
 * No process of the workload's group is left when it returns.
 */
int exec_run(const struct step *st, int64_t iteration, struct exec_result *res);
/* Same for any command of the step (setup, pre_iteration): argv instead of
 * st->argv, its own timeout; forward 0 captures without log lines. The
 * step's cwd and bind/aslr apply. */
int exec_run_cmd(const struct step *st, char *const *argv, int64_t iteration, int forward,
    int64_t timeout_s, struct exec_result *res);

/*
 * For exec_run only: fn(pid, arg) runs in the parent after fork while the
 * child waits just before its exec, so counters opened on pid with
 * enable_on_exec start at the exec; its time is not in wall_s. NULL: none.
 */
void exec_set_attach(void (*fn)(pid_t pid, void *arg), void *arg);
/* The kept children (services) still running, at most max, into pids. */
size_t exec_kept_pids(pid_t *pids, size_t max);
/* Called from the fatal-signal handler after the workload is killed (must be
 * async-signal-safe): stops services, restores knobs. */
void exec_set_fatal_hook(void (*fn)(void));
/* A long-lived child (a service) that exec_sweep must not kill; at most 16.
 * exec_kept_status: 1 and *status when it has exited, 0 while it runs,
 * -1 when pid is not kept. */
int exec_keep(pid_t pid);
void exec_unkeep(pid_t pid);
int exec_kept_status(pid_t pid, int *status);
/* execvp's PATH search without the /bin/sh fallback; returns only on
 * failure, errno set. Async-signal-safe. */
void exec_search(const char *file, char *const argv[]);
void exec_result_init(struct exec_result *res);
void exec_result_free(struct exec_result *res);	/* accepts NULL */

#endif
