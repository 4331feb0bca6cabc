/*
 * exec.c: one iteration of the workload. The agent is quiet while the
 * workload runs: it only blocks in poll() on the output pipes, the exec
 * error pipe and a SIGCHLD self-pipe. The workload runs in its own process
 * group, which is SIGKILLed on timeout, when the leader exits (stragglers),
 * and when the agent itself is told to go (SIGTERM, SIGHUP, SIGPIPE, or its
 * stdout hanging up because the SSH link dropped).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bind.h"
#include "emit.h"
#include "err.h"
#include "clock.h"
#include "exec.h"
#include "caps.h"
#include "parse.h"

#define EXEC_AGENT_SELF	"/proc/self/exe"
#define EXEC_READ_CHUNK	(64 * 1024)
#define EXEC_MAX_PATH	4096	/* PATH_MAX */
/* Rounds of killing adopted orphans; each round catches one more generation. */
#define EXEC_SWEEP_ROUNDS	16

/* The process group to kill from a signal handler; 0 when none is running.
 * Set only while the leader is unreaped, so the id cannot have been reused. */
static volatile sig_atomic_t exec_pgid;
static int exec_chld_pipe[2] = { -1, -1 };
static void (*volatile exec_hook)(void);

/* Children that outlive iterations (services): exec_sweep leaves them be,
 * and records their exit if it reaps one. */
#define EXEC_MAX_KEEP	16
static struct {
	pid_t pid;
	int dead;
	int status;
} exec_keep_tab[EXEC_MAX_KEEP];

static const int exec_fatal_sigs[] = { SIGTERM, SIGHUP, SIGINT, SIGPIPE };

/* exec_set_attach: the hook, set for exec_run's command only, and the
 * pipe whose EOF lets the child go on to its exec. */
static void (*exec_attach_fn)(pid_t, void *);
static void *exec_attach_arg;
static int exec_attach_now;
static int exec_go[2] = { -1, -1 };

/* What the child sends back over the CLOEXEC pipe when it cannot exec. */
struct exec_report {
	int what;
	int err;
};

static const char *const exec_what_names[] = {
	"setup", "chdir", "execvp", "sched_setaffinity", "set_mempolicy", "personality"
};
enum { EXEC_W_SETUP, EXEC_W_CHDIR, EXEC_W_EXECVP, EXEC_W_AFFINITY, EXEC_W_MEMPOLICY,
	EXEC_W_PERSONALITY, EXEC_W_LAST = EXEC_W_PERSONALITY };

struct exec_stream {
	int fd;
	const char *name;
	struct buf *cap;
	char line[BF_MAX_LOG_LINE];
	size_t llen;
	int pending;		/* a line (maybe cut, maybe empty) is open */
	unsigned long sent;
	unsigned long dropped;
	int quiet;		/* capture only, no log lines (setup commands) */
	int nomem;		/* the capture could not grow: it is short */
};

static void
exec_on_fatal(int sig)
{
	int saved = errno;

	if (exec_pgid > 0)
		kill(-(pid_t)exec_pgid, SIGKILL);
	if (exec_hook != NULL)
		exec_hook();
	signal(sig, SIG_DFL);
	raise(sig);	/* delivered when the handler returns: we die of sig */
	errno = saved;
}

static void
exec_on_chld(int sig)
{
	int saved = errno;
	ssize_t n;

	(void)sig;
	n = write(exec_chld_pipe[1], "c", 1);	/* full pipe: a wakeup is pending anyway */
	(void)n;
	errno = saved;
}

int
exec_signals_init(void)
{
	struct sigaction sa;
	size_t i;

	if (exec_chld_pipe[0] < 0 && pipe2(exec_chld_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return BF_ERR_SYS;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = exec_on_fatal;
	for (i = 0; i < sizeof(exec_fatal_sigs) / sizeof(exec_fatal_sigs[0]); i++)
		if (sigaction(exec_fatal_sigs[i], &sa, NULL) != 0)
			return BF_ERR_SYS;
	/* orphans that escape the process group (setsid) are reparented to us,
	 * so exec_sweep() can still find and kill them */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	sa.sa_handler = exec_on_chld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	if (sigaction(SIGCHLD, &sa, NULL) != 0)
		return BF_ERR_SYS;
	return 0;
}

void
exec_set_fatal_hook(void (*fn)(void))
{
	exec_hook = fn;
}

int
exec_keep(pid_t pid)
{
	size_t i;

	for (i = 0; i < EXEC_MAX_KEEP; i++)
		if (exec_keep_tab[i].pid == 0) {
			exec_keep_tab[i].pid = pid;
			exec_keep_tab[i].dead = 0;
			return 0;
		}
	return BF_ERR_TOOBIG;
}

void
exec_unkeep(pid_t pid)
{
	size_t i;

	for (i = 0; i < EXEC_MAX_KEEP; i++)
		if (exec_keep_tab[i].pid == pid)
			exec_keep_tab[i].pid = 0;
}

static int
exec_kept(pid_t pid)
{
	size_t i;

	for (i = 0; i < EXEC_MAX_KEEP; i++)
		if (exec_keep_tab[i].pid == pid && pid != 0)
			return (int)i;
	return -1;
}

void
exec_set_attach(void (*fn)(pid_t pid, void *arg), void *arg)
{
	exec_attach_fn = fn;
	exec_attach_arg = arg;
}

size_t
exec_kept_pids(pid_t *pids, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < EXEC_MAX_KEEP && n < max; i++)
		if (exec_keep_tab[i].pid != 0 && !exec_keep_tab[i].dead)
			pids[n++] = exec_keep_tab[i].pid;
	return n;
}

int
exec_kept_status(pid_t pid, int *status)
{
	int i, st;
	pid_t w;

	if ((i = exec_kept(pid)) < 0)
		return -1;
	if (!exec_keep_tab[i].dead) {
		w = waitpid(pid, &st, WNOHANG);
		if (w == pid) {
			exec_keep_tab[i].dead = 1;
			exec_keep_tab[i].status = st;
		}
	}
	if (exec_keep_tab[i].dead)
		*status = exec_keep_tab[i].status;
	return exec_keep_tab[i].dead;
}

void
exec_result_init(struct exec_result *res)
{
	memset(res, 0, sizeof(*res));
	buf_init(&res->out, BF_MAX_CAPTURE);
	buf_init(&res->err, BF_MAX_CAPTURE);
}

void
exec_result_free(struct exec_result *res)
{
	if (res == NULL)
		return;
	buf_free(&res->out);
	buf_free(&res->err);
}

/* Monotonic nanoseconds as an integer, so a difference is exact and wall_s
 * prints as 1.004175340, not with the rounding noise of large doubles. */
static int64_t
exec_now_ns(void)
{
	return bf_mono_ns();
}

static double
exec_now(void)
{
	return (double)exec_now_ns() / 1e9;
}

/*
 * execvp's PATH search without its fallback of running a file that is not
 * an executable (ENOEXEC) through /bin/sh: a workload is never handed to a
 * shell behind the recipe's back. Runs in the child: no allocation.
 */
void
exec_search(const char *file, char *const argv[])
{
	char path[EXEC_MAX_PATH];
	const char *dirs, *p, *end;
	size_t dlen, flen = strlen(file);
	int seen_eacces = 0;

	if (strchr(file, '/') != NULL) {
		execv(file, argv);
		return;
	}
	if ((dirs = getenv("PATH")) == NULL)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	for (p = dirs;; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		dlen = (size_t)(end - p);
		/* an empty PATH element means the current directory, as in execvp */
		if (dlen == 0) {
			p = ".";
			dlen = 1;
		}
		if (dlen < sizeof(path) - 1 && flen < sizeof(path) - 1 - dlen) {
			memcpy(path, p, dlen);
			path[dlen] = '/';
			memcpy(path + dlen + 1, file, flen + 1);
			execv(path, argv);
			if (errno == EACCES)
				seen_eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE &&
			    errno != ELOOP && errno != ENAMETOOLONG && errno != ENODEV &&
			    errno != ETIMEDOUT)
				return;	/* a real failure of an existing file: report it */
		}
		if (*end == '\0')
			break;
	}
	errno = seen_eacces ? EACCES : ENOENT;
}

/* Only async-signal-safe calls past fork(): no allocation, no stdio. */
static void __attribute__((noreturn))
exec_child(const struct step *st, char *const *argv, int out_w, int err_w, int rep_w,
    const sigset_t *mask)
{
	struct exec_report rep = { EXEC_W_SETUP, 0 };
	const char *file, *what = NULL;
	size_t i;
	int fd;
	ssize_t n;

	for (i = 0; i < sizeof(exec_fatal_sigs) / sizeof(exec_fatal_sigs[0]); i++)
		signal(exec_fatal_sigs[i], SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (setpgid(0, 0) != 0)
		goto fail;
	/* the workload must not read the step channel (it is at EOF anyway) */
	if ((fd = open("/dev/null", O_RDONLY)) < 0 || dup2(fd, STDIN_FILENO) < 0)
		goto fail;
	if (fd > STDERR_FILENO)
		close(fd);
	if (dup2(out_w, STDOUT_FILENO) < 0 || dup2(err_w, STDERR_FILENO) < 0)
		goto fail;
	if (st->cwd != NULL && chdir(st->cwd) != 0) {
		rep.what = EXEC_W_CHDIR;
		goto fail;
	}
	if (bind_apply(&st->bind, &what) != 0) {
		rep.what = what[0] == 's' && what[1] == 'c' ? EXEC_W_AFFINITY :
		    what[0] == 's' ? EXEC_W_MEMPOLICY : EXEC_W_PERSONALITY;
		goto fail;
	}
	if (exec_go[0] >= 0) {	/* until the parent has attached its counters */
		char c;

		close(exec_go[1]);
		while (read(exec_go[0], &c, 1) < 0 && errno == EINTR)
			;
	}
	file = strcmp(argv[0], "@agent") == 0 ? EXEC_AGENT_SELF : argv[0];
	exec_search(file, argv);
	rep.what = EXEC_W_EXECVP;
fail:
	rep.err = errno;
	n = write(rep_w, &rep, sizeof(rep));
	(void)n;
	_exit(127);
}

static void
exec_stream_flush(struct exec_stream *s, int64_t iteration)
{
	if (!s->pending)
		return;
	if (s->quiet) {
		s->llen = 0;
		s->pending = 0;
		return;
	}
	if (s->sent < EXEC_MAX_LOG_LINES) {
		/* a failed write means stdout is gone; the poll loop notices */
		(void)emit_log(iteration, s->name, s->line, s->llen);
		s->sent++;
	} else
		s->dropped++;
	s->llen = 0;
	s->pending = 0;
}

/* Read what is there; returns 1 on EOF, 0 otherwise. */
static int
exec_stream_read(struct exec_stream *s, int64_t iteration)
{
	char chunk[EXEC_READ_CHUNK];
	const char *p, *end, *nl;
	size_t room, take;
	ssize_t n;

	n = read(s->fd, chunk, sizeof(chunk));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		exec_stream_flush(s, iteration);
		return 1;
	}
	room = BF_MAX_CAPTURE - s->cap->len;
	take = (size_t)n < room ? (size_t)n : room;
	/* take fits under the cap, so only memory can fail; the iteration is
	 * then an internal failure, never metrics parsed from a short capture */
	if (take > 0 && buf_append(s->cap, chunk, take) != 0)
		s->nomem = 1;
	p = chunk;
	end = chunk + n;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		take = (size_t)((nl != NULL ? nl : end) - p);
		room = sizeof(s->line) - s->llen;
		/* a line longer than the cap is cut: the tail is dropped */
		memcpy(s->line + s->llen, p, take < room ? take : room);
		s->llen += take < room ? take : room;
		s->pending = 1;
		if (nl == NULL)
			break;
		exec_stream_flush(s, iteration);
		p = nl + 1;
	}
	return 0;
}

static void
exec_drain_chld_pipe(void)
{
	char tmp[64];

	while (read(exec_chld_pipe[0], tmp, sizeof(tmp)) > 0)
		;
}

/* The agent's stdout is worth watching only when it can hang up. */
static int
exec_stdout_watchable(void)
{
	struct stat sb;

	return fstat(STDOUT_FILENO, &sb) == 0 && (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode));
}

static void
exec_fill_status(struct exec_result *res, int status, const struct rusage *ru)
{
	if (WIFEXITED(status)) {
		res->exit_code = WEXITSTATUS(status);
		res->signal = 0;
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->exit_code = 128 + res->signal;
	}
	res->user_s = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
	res->sys_s = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	res->maxrss_kb = ru->ru_maxrss;
	res->minflt = ru->ru_minflt;
	res->majflt = ru->ru_majflt;
}

/* Parent pid of pid from /proc/PID/stat, or -1. comm may hold ')' and
 * spaces, so the fields are taken after the last ')'. */
static pid_t
exec_ppid(const char *pid)
{
	char path[32 + sizeof(((struct dirent *)0)->d_name)], stat[512];
	const char *p, *e;
	int64_t v;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	stat[n] = '\0';
	/* "... (comm) S PPID ..." */
	if ((p = strrchr(stat, ')')) == NULL || p[1] != ' ' || p[2] == '\0' || p[3] != ' ')
		return -1;
	p += 4;
	if ((e = strchr(p, ' ')) == NULL || parse_i64_n(p, (size_t)(e - p), 0, INT32_MAX, &v) != 0)
		return -1;
	return (pid_t)v;
}

/*
 * Kill and reap every child we still have. Only the workload's escaped
 * descendants can be our children here (we are their subreaper), and an
 * unreaped child's pid cannot be reused, so kill(pid) hits the right one.
 */
static void
exec_sweep(void)
{
	struct dirent *de;
	pid_t self = getpid(), pid;
	int64_t v;
	int round, found, status, k;
	DIR *d;

	for (round = 0; round < EXEC_SWEEP_ROUNDS; round++) {
		/* ECHILD: no children at all, the usual case; skip the /proc scan */
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			if ((k = exec_kept(pid)) >= 0) {
				exec_keep_tab[k].dead = 1;
				exec_keep_tab[k].status = status;
			}
		if (pid < 0 && errno == ECHILD)
			return;
		found = 0;
		if ((d = opendir("/proc")) == NULL)
			return;
		while ((de = readdir(d)) != NULL) {
			if (parse_i64(de->d_name, 1, INT32_MAX, &v) != 0)
				continue;
			pid = (pid_t)v;
			if (exec_kept(pid) < 0 && exec_ppid(de->d_name) == self) {
				kill(pid, SIGKILL);
				(void)waitpid(pid, NULL, 0);
				found++;
			}
		}
		closedir(d);
		if (found == 0)
			return;
		(void)status;
	}
}

/* Kill the group while the leader is a zombie at worst (its id still
 * reserved), then reap it. */
static void
exec_reap(pid_t pid, struct exec_result *res, int64_t *end)
{
	struct rusage ru;
	int status = 0;
	pid_t w;

	kill(-pid, SIGKILL);
	exec_pgid = 0;
	do
		w = wait4(pid, &status, 0, &ru);
	while (w < 0 && errno == EINTR);
	*end = exec_now_ns();
	if (w == pid)
		exec_fill_status(res, status, &ru);
	exec_sweep();
}

/* The child's report of a failed exec, if any; returns 1 once the pipe is
 * finished with (report read, EOF from a successful exec, or an error). */
static int
exec_read_report(int fd, struct exec_result *res)
{
	struct exec_report rep;
	ssize_t n;

	n = read(fd, &rep, sizeof(rep));
	if (n == (ssize_t)sizeof(rep)) {
		res->exec_errno = rep.err != 0 ? rep.err : EIO;
		snprintf(res->exec_what, sizeof(res->exec_what), "%s",
		    rep.what >= 0 && rep.what <= EXEC_W_LAST ?
		    exec_what_names[rep.what] : "setup");
	}
	return !(n < 0 && errno == EINTR);
}

int
exec_run(const struct step *st, int64_t iteration, struct exec_result *res)
{
	int r;

	exec_attach_now = exec_attach_fn != NULL;
	r = exec_run_cmd(st, st->argv, iteration, 1, st->timeout_s, res);
	exec_attach_now = 0;
	return r;
}

int
exec_run_cmd(const struct step *st, char *const *argv, int64_t iteration, int forward,
    int64_t timeout_s, struct exec_result *res)
{
	struct exec_stream so = { -1, "stdout", NULL, "", 0, 0, 0, 0, 0, 0 };
	struct exec_stream se = { -1, "stderr", NULL, "", 0, 0, 0, 0, 0, 0 };
	int out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 }, rep_p[2] = { -1, -1 };
	sigset_t block, old;
	struct pollfd pfd[5];
	double deadline, drain_until = 0;
	int64_t start, end = 0;
	int r, blocked = 0, reaped = 0, rep_open = 1, watch_out, lost = 0;
	pid_t pid = -1;
	siginfo_t si;
	nfds_t nfd;
	size_t i;

	so.cap = &res->out;
	se.cap = &res->err;
	so.quiet = se.quiet = !forward;
	if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0 ||
	    pipe2(rep_p, O_CLOEXEC) != 0 ||
	    (exec_attach_now && pipe2(exec_go, O_CLOEXEC) != 0)) {
		r = BF_ERR_SYS;
		goto out;
	}
	so.fd = out_p[0];
	se.fd = err_p[0];
	watch_out = exec_stdout_watchable();
	/* no fatal signal may run its handler between fork and exec_pgid set */
	sigemptyset(&block);
	for (i = 0; i < sizeof(exec_fatal_sigs) / sizeof(exec_fatal_sigs[0]); i++)
		sigaddset(&block, exec_fatal_sigs[i]);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	blocked = 1;
	exec_drain_chld_pipe();
	start = exec_now_ns();
	if ((pid = fork()) < 0) {
		r = BF_ERR_SYS;
		goto out;
	}
	if (pid == 0)
		exec_child(st, argv, out_p[1], err_p[1], rep_p[1], &old);
	/* both sides set the group, so kill(-pid) works whoever runs first */
	(void)setpgid(pid, pid);
	exec_pgid = pid;
	if (exec_go[0] >= 0) {
		int64_t t = exec_now_ns();

		exec_attach_fn(pid, exec_attach_arg);
		close(exec_go[0]);
		close(exec_go[1]);	/* EOF: the child goes on to exec */
		exec_go[0] = exec_go[1] = -1;
		start += exec_now_ns() - t;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	blocked = 0;
	close(out_p[1]);
	close(err_p[1]);
	close(rep_p[1]);
	out_p[1] = err_p[1] = rep_p[1] = -1;
	deadline = (double)start / 1e9 + (double)timeout_s;

	for (;;) {
		double now = exec_now(), until;
		int ms;

		if (reaped && so.fd < 0 && se.fd < 0)
			break;
		if (!reaped && now >= deadline) {
			res->timeout = 1;
			exec_reap(pid, res, &end);
			reaped = 1;
			drain_until = exec_now() + EXEC_DRAIN_MS / 1000.0;
			continue;
		}
		if (reaped && now >= drain_until)
			break;
		until = reaped ? drain_until : deadline;
		ms = (int)((until - now) * 1000.0) + 1;
		nfd = 0;
		pfd[nfd++] = (struct pollfd){ so.fd, POLLIN, 0 };
		pfd[nfd++] = (struct pollfd){ se.fd, POLLIN, 0 };
		pfd[nfd++] = (struct pollfd){ rep_open ? rep_p[0] : -1, POLLIN, 0 };
		pfd[nfd++] = (struct pollfd){ reaped ? -1 : exec_chld_pipe[0], POLLIN, 0 };
		pfd[nfd++] = (struct pollfd){ watch_out ? STDOUT_FILENO : -1, 0, 0 };
		if (poll(pfd, nfd, ms) < 0) {
			if (errno == EINTR)
				continue;
			r = BF_ERR_SYS;
			goto out;
		}
		if (pfd[4].revents & (POLLERR | POLLHUP)) {
			/* nobody is listening any more: stop the workload, stop us */
			lost = 1;
			if (!reaped) {
				exec_reap(pid, res, &end);
				reaped = 1;
			}
			break;
		}
		if (pfd[0].revents && exec_stream_read(&so, iteration)) {
			close(so.fd);
			so.fd = out_p[0] = -1;
		}
		if (pfd[1].revents && exec_stream_read(&se, iteration)) {
			close(se.fd);
			se.fd = err_p[0] = -1;
		}
		if (pfd[2].revents && exec_read_report(rep_p[0], res))
			rep_open = 0;
		if (pfd[3].revents) {
			exec_drain_chld_pipe();
			/* WNOWAIT: look without reaping, so the group id stays ours */
			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == pid) {
				exec_reap(pid, res, &end);
				reaped = 1;
				drain_until = exec_now() + EXEC_DRAIN_MS / 1000.0;
			}
		}
	}
	/* the leader is reaped, so every writer of the report pipe is gone and
	 * this read cannot block */
	if (rep_open)
		(void)exec_read_report(rep_p[0], res);
	if (!lost) {
		exec_stream_flush(&so, iteration);
		exec_stream_flush(&se, iteration);
		if (so.dropped > 0)
			(void)emit_dropped(iteration, "stdout", so.dropped);
		if (se.dropped > 0)
			(void)emit_dropped(iteration, "stderr", se.dropped);
	}
	res->wall_s = (double)(end - start) / 1e9;
	r = lost ? BF_ERR_LOST : so.nomem || se.nomem ? BF_ERR_ALLOC : 0;
out:
	if (pid > 0 && !reaped)
		exec_reap(pid, res, &end);
	if (blocked)
		sigprocmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < 2; i++) {
		if (out_p[i] >= 0)
			close(out_p[i]);
		if (err_p[i] >= 0)
			close(err_p[i]);
		if (rep_p[i] >= 0)
			close(rep_p[i]);
		if (exec_go[i] >= 0)
			close(exec_go[i]);
		exec_go[i] = -1;
	}
	return r;
}
