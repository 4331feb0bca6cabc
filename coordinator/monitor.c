/*
 * monitor.c: the privileged side of privilege separation (monitor.h). One
 * thread forks and execs the API child, serves its requests from a table
 * (one strict parser per type in monitor-msg.c; anything else, or anything
 * out of order, kills the child), and starts another with a backoff when
 * it dies. A second thread writes the events the scheduler and runner
 * publish to the child; publishers only queue them, so a slow or stopped
 * child never holds up the scheduler: past the queue's caps events are
 * dropped and counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "monitor.h"

#define MONITOR_EVQ_MAX		4096		/* events queued for the child */
#define MONITOR_EVQ_BYTES	(8 * 1024 * 1024)	/* their bytes */
#define MONITOR_BACKOFF_MAX	30		/* seconds between restarts, at most */
#define MONITOR_STABLE_S	30		/* a child that lived this long resets it */
#define MONITOR_START_S		60		/* the first child must listen by then */
#define MONITOR_TERM_MS		3000		/* SIGTERM to SIGKILL */
#define MONITOR_STALE_MAX	8		/* children we could not stop, reaped later */

enum monitor_state { MON_STARTING, MON_READY, MON_FAILED };

struct monitor_evq {
	struct monitor_evq *next;
	size_t len;
	char frame[];
};

struct monitor {
	struct monitor_config cfg;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* state, queue, ev_busy, stopping */
	enum monitor_state state;	/* under mu */
	char fail[BF_DIAG_MSG];		/* why the first child did not start */
	int stopping;			/* under mu */
	pid_t pid;			/* under mu; 0: no child */
	int port;			/* the first READY's; under mu */
	int ctl_fd;			/* the monitor thread's */
	int ev_fd;			/* under mu; -1: no child */
	int ev_busy;			/* under mu: the writer is writing on ev_fd */
	int ev_broken;			/* under mu: a write on ev_fd failed */
	struct monitor_evq *head, *tail;	/* under mu */
	size_t qn, qbytes;
	uint64_t dropped;
	time_t drop_logged;
	pthread_t thread, writer;
	int thread_started, writer_started;
	/* children that outlived a stop we could not signal: reaped later */
	pid_t stale[MONITOR_STALE_MAX];
};

static void monitor_reap_stale(struct monitor *m);

int
monitor_new(const struct monitor_config *cfg, struct monitor **out)
{
	struct monitor *m;

	*out = NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return BF_ERR_ALLOC;
	m->cfg = *cfg;
	m->ctl_fd = -1;
	m->ev_fd = -1;
	if (pthread_mutex_init(&m->mu, NULL) != 0) {
		free(m);
		return BF_ERR_SYS;
	}
	if (pthread_cond_init(&m->cv, NULL) != 0) {
		pthread_mutex_destroy(&m->mu);
		free(m);
		return BF_ERR_SYS;
	}
	*out = m;
	return 0;
}

/* In the forked child: only async-signal-safe calls until the exec. */
static void __attribute__((noreturn))
monitor_exec_child(const char *exe, int ctl, int ev, char **argv, int maxfd)
{
	sigset_t none;
	int a, b, fd;

	if ((a = fcntl(ctl, F_DUPFD, 10)) < 0 || (b = fcntl(ev, F_DUPFD, 10)) < 0 ||
	    dup2(a, MONITOR_CTL_FD) < 0 || dup2(b, MONITOR_EV_FD) < 0)
		_exit(126);
	/* nothing else of the monitor's (SSH sockets, the store) crosses */
	if (close_range(MONITOR_EV_FD + 1, ~0U, 0) != 0)	/* a seccomp filter */
		for (fd = MONITOR_EV_FD + 1; fd < maxfd; fd++)
			close(fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv(exe, argv);
	_exit(127);
}

/* Fork and exec a child; sets pid, ctl_fd and ev_fd. */
static int
monitor_spawn(struct monitor *m, struct bf_diag *d)
{
	int ctl[2] = { -1, -1 }, ev[2] = { -1, -1 }, r = BF_ERR_SYS, port;
	char **argv = NULL, arg[64];
	struct rlimit rl;
	int maxfd = 65536;
	size_t i;
	pid_t pid;

	pthread_mutex_lock(&m->mu);
	port = m->port;
	pthread_mutex_unlock(&m->mu);
	snprintf(arg, sizeof(arg), "%ld:%d", (long)getpid(), port);
	if ((argv = calloc(m->cfg.nargs + 4, sizeof(*argv))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	argv[0] = (char *)m->cfg.argv0;
	argv[1] = "--privsep-child";
	argv[2] = arg;
	for (i = 0; i < m->cfg.nargs; i++)
		argv[3 + i] = m->cfg.args[i];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ev) != 0) {
		bf_diag_set(d, NULL, "socketpair: %s", strerror(errno));
		goto out;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		maxfd = rl.rlim_cur > (1u << 20) ? 1 << 20 : (int)rl.rlim_cur;
	if ((pid = fork()) < 0) {
		bf_diag_set(d, NULL, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		monitor_exec_child(m->cfg.exe != NULL ? m->cfg.exe : "/proc/self/exe", ctl[1],
		    ev[1], argv, maxfd);
	pthread_mutex_lock(&m->mu);
	m->ctl_fd = ctl[0];
	ctl[0] = -1;
	m->pid = pid;
	m->ev_fd = ev[0];
	m->ev_broken = 0;
	ev[0] = -1;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	r = 0;
out:
	for (i = 0; i < 2; i++) {
		if (ctl[i] != -1)
			close(ctl[i]);
		if (ev[i] != -1)
			close(ev[i]);
	}
	free(argv);
	return r;
}

static int
monitor_reply(struct monitor *m, int32_t code, const void *data, size_t n)
{
	unsigned char raw[MONITOR_HDR + 4 + MONITOR_MAX_REPLY];
	struct buf b;
	int r;

	buf_init(&b, sizeof(raw) + 1);
	if ((r = monitor_put_reply(&b, code, data, n)) == 0)
		r = monitor_write_all(m->ctl_fd, b.data, b.len);
	buf_free(&b);
	return r;
}

/*
 * One request of the child; BF_ERR_PROTO (with d) kills it. *phase: 0
 * before hello, 1 before ready, 2 serving. Hello and ready come once, in
 * that order, before anything else.
 */
static int
monitor_dispatch(struct monitor *m, const struct monitor_msg *q, int *phase,
    struct bf_diag *d)
{
	unsigned char ans[MONITOR_MAX_REPLY];
	int r, want = q->type == MONITOR_HELLO ? 0 : q->type == MONITOR_READY ? 1 : 2;

	if (want != *phase) {
		bf_diag_set(d, NULL, "message type %d %s", q->type, *phase < want ?
		    "before hello and ready" : "a second time");
		return BF_ERR_PROTO;
	}
	switch (q->type) {
	case MONITOR_HELLO:
		*phase = 1;
		ans[0] = m->cfg.ops.has_lab_key != 0;
		memcpy(ans + 1, m->cfg.ops.lab_pub, MONITOR_PUB_LEN);
		return monitor_reply(m, 0, ans, MONITOR_HELLO_REPLY);
	case MONITOR_READY:
		pthread_mutex_lock(&m->mu);
		if (m->port != 0 && m->port != q->port) {
			pthread_mutex_unlock(&m->mu);
			bf_diag_set(d, NULL, "ready on port %u, not %d", q->port, m->port);
			return BF_ERR_PROTO;
		}
		m->port = q->port;
		m->state = MON_READY;
		pthread_cond_broadcast(&m->cv);
		pthread_mutex_unlock(&m->mu);
		*phase = 2;
		return monitor_reply(m, 0, NULL, 0);
	case MONITOR_KICK:
	case MONITOR_KICK_MACHINES:
		if (m->cfg.ops.kick != NULL)
			m->cfg.ops.kick(m->cfg.ops.arg, q->type == MONITOR_KICK_MACHINES);
		return monitor_reply(m, 0, NULL, 0);
	case MONITOR_PROBE:
		r = m->cfg.ops.probe != NULL ? m->cfg.ops.probe(m->cfg.ops.arg, q->str) :
		    BF_ERR_NOTFOUND;
		return monitor_reply(m, r, NULL, 0);
	case MONITOR_KEY:
		r = access(q->str, R_OK) == 0 ? 0 : BF_ERR_NOTFOUND;
		return monitor_reply(m, r, NULL, 0);
	case MONITOR_SIGN:
		if (m->cfg.ops.sign == NULL) {
			fprintf(stderr, "benchfleetd: monitor: sign: no lab key\n");
			return monitor_reply(m, BF_ERR_NOTFOUND, NULL, 0);
		}
		if ((r = m->cfg.ops.sign(m->cfg.ops.arg, q->data, q->len, ans)) != 0)
			return monitor_reply(m, r, NULL, 0);
		r = monitor_reply(m, 0, ans, MONITOR_SIG_LEN);
		explicit_bzero(ans, sizeof(ans));
		return r;
	default:
		/* monitor_msg_parse admits only the child's types */
		bf_diag_set(d, NULL, "message type %d", q->type);
		return BF_ERR_PROTO;
	}
}

static int
monitor_stopping(struct monitor *m)
{
	int s;

	pthread_mutex_lock(&m->mu);
	s = m->stopping;
	pthread_mutex_unlock(&m->mu);
	return s;
}

/*
 * Serve one child until it dies, breaks the protocol or we stop. Returns
 * 0 when it went away by itself, BF_ERR_PROTO when it must be killed now
 * (d says why), BF_ERR_TIMEOUT when it ignored the SIGTERM of a stop.
 */
static int
monitor_serve(struct monitor *m, struct bf_diag *d)
{
	struct monitor_rd rd;
	struct monitor_msg q;
	int64_t stop_at = 0;
	int r, phase = 0, status;

	monitor_rd_init(&rd);
	for (;;) {
		r = monitor_rd_next(m->ctl_fd, &rd, MONITOR_FROM_CHILD, 500, &q, d);
		if (r == 1) {
			if ((r = monitor_dispatch(m, &q, &phase, d)) == BF_ERR_PROTO)
				break;
			if (r != 0) {
				r = 0;	/* the socket broke: the child is going */
				break;
			}
			continue;
		}
		if (r != BF_ERR_TIMEOUT) {
			r = r == 0 || r == BF_ERR_SYS ? 0 : r;	/* EOF, or a broken frame */
			if (r != 0 && d->msg[0] == '\0')
				bf_diag_set(d, NULL, "%s", bf_err_str(r));
			if (r != 0)
				r = BF_ERR_PROTO;
			break;
		}
		monitor_reap_stale(m);
		if (waitpid(m->pid, &status, WNOHANG) == m->pid) {
			/* reaped here: tell the caller by a fake exit */
			pthread_mutex_lock(&m->mu);
			m->pid = -status - 1;
			pthread_mutex_unlock(&m->mu);
			r = 0;
			break;
		}
		if (monitor_stopping(m)) {
			if (stop_at == 0)
				stop_at = bf_mono_ms();
			else if (bf_mono_ms() - stop_at > MONITOR_TERM_MS) {
				r = BF_ERR_TIMEOUT;	/* deaf to SIGTERM */
				break;
			}
		}
	}
	monitor_rd_free(&rd);
	return r;
}

/*
 * Signal the child. A monitor that is not root has CAP_SETUID but not
 * necessarily CAP_KILL, and may not signal another uid: then close its
 * sockets instead, on which it ends by itself (monitor-child.c). Called
 * with mu held.
 */
static void
monitor_signal(struct monitor *m, int sig)
{
	if (m->pid <= 0)
		return;
	if (kill(m->pid, sig) != 0 && errno == EPERM) {
		if (m->ctl_fd != -1)
			shutdown(m->ctl_fd, SHUT_RDWR);
		if (m->ev_fd != -1)
			shutdown(m->ev_fd, SHUT_RDWR);
	}
}

static void
monitor_reap_stale(struct monitor *m)
{
	int i, status;

	for (i = 0; i < MONITOR_STALE_MAX; i++)
		if (m->stale[i] > 0 && waitpid(m->stale[i], &status, WNOHANG) != 0)
			m->stale[i] = 0;
}

/* Reap the child (SIGKILL when kill is set or it lingers); text of how it ended. */
static void
monitor_reap(struct monitor *m, int kill_now, char *how, size_t howsz)
{
	pid_t pid, w = 0;
	int status = 0, i;

	pthread_mutex_lock(&m->mu);
	pid = m->pid;
	if (kill_now)
		monitor_signal(m, SIGKILL);
	pthread_mutex_unlock(&m->mu);
	if (pid < 0) {
		status = -(pid + 1);
	} else if (pid > 0) {
		/* a child exiting by itself (its leak check, its log) gets a moment */
		for (i = 0; i < 30 && (w = waitpid(pid, &status, WNOHANG)) == 0; i++)
			nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
		if (w == 0) {
			pthread_mutex_lock(&m->mu);
			monitor_signal(m, SIGKILL);
			pthread_mutex_unlock(&m->mu);
			for (i = 0; i < 50 && (w = waitpid(pid, &status, WNOHANG)) == 0; i++)
				nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
		}
		if (w == 0) {
			fprintf(stderr, "benchfleetd: monitor: cannot stop the API child (pid %ld): "
			    "it ignores its closed sockets and benchfleetd may not signal it (give "
			    "it CAP_KILL); leaving it\n", (long)pid);
			for (i = 0; i < MONITOR_STALE_MAX && m->stale[i] > 0; i++)
				;
			if (i < MONITOR_STALE_MAX)
				m->stale[i] = pid;
			snprintf(how, howsz, "could not be stopped");
		}
	}
	if (w != 0 || pid <= 0) {
		if (WIFSIGNALED(status))
			snprintf(how, howsz, "was killed by signal %d", WTERMSIG(status));
		else
			snprintf(how, howsz, "exited with status %d", WEXITSTATUS(status));
	}
	pthread_mutex_lock(&m->mu);
	if (m->ctl_fd != -1)
		close(m->ctl_fd);
	m->ctl_fd = -1;
	m->pid = 0;
	if (m->ev_fd != -1) {
		/* a blocked write returns at once; the writer lets go of the fd */
		shutdown(m->ev_fd, SHUT_RDWR);
		while (m->ev_busy)
			pthread_cond_wait(&m->cv, &m->mu);
		close(m->ev_fd);
		m->ev_fd = -1;
	}
	pthread_mutex_unlock(&m->mu);
}

/* Sleep up to s seconds; 1 when stopping. */
static int
monitor_nap(struct monitor *m, int s)
{
	struct timespec ts;
	int stop;

	bf_abstime(CLOCK_REALTIME, (int64_t)s * 1000, &ts);
	pthread_mutex_lock(&m->mu);
	while (!m->stopping)
		if (pthread_cond_timedwait(&m->cv, &m->mu, &ts) != 0)
			break;
	stop = m->stopping;
	pthread_mutex_unlock(&m->mu);
	return stop;
}

/*
 * This thread must live as long as the child: PR_SET_PDEATHSIG fires when
 * the thread that forked it ends, not the process.
 */
static void *
monitor_main(void *arg)
{
	struct monitor *m = arg;
	struct bf_diag d;
	char how[64];
	int backoff = 1, r, first = 1;
	pid_t pid;
	int64_t born;

	for (;;) {
		bf_diag_clear(&d);
		if (monitor_spawn(m, &d) != 0) {
			fprintf(stderr, "benchfleetd: monitor: cannot start the API child: %s\n",
			    d.msg);
			if (first)
				goto failed;
			if (monitor_nap(m, backoff))
				break;
			continue;
		}
		born = bf_mono_ms();
		pthread_mutex_lock(&m->mu);
		pid = m->pid;
		pthread_mutex_unlock(&m->mu);
		bf_diag_clear(&d);
		r = monitor_serve(m, &d);
		if (r == BF_ERR_PROTO)
			fprintf(stderr, "benchfleetd: monitor: the API child (pid %ld) broke the "
			    "protocol: %s; killing it\n", (long)pid, d.msg);
		monitor_reap(m, r == BF_ERR_PROTO || r == BF_ERR_TIMEOUT, how, sizeof(how));
		pthread_mutex_lock(&m->mu);
		if (m->state == MON_STARTING) {
			pthread_mutex_unlock(&m->mu);
			snprintf(d.msg, sizeof(d.msg), "the API child %s before it listened", how);
			goto failed;
		}
		pthread_mutex_unlock(&m->mu);
		first = 0;
		if (monitor_stopping(m))
			break;
		if (bf_mono_ms() - born >= MONITOR_STABLE_S * 1000)
			backoff = 1;
		fprintf(stderr, "benchfleetd: monitor: the API child (pid %ld) %s; starting "
		    "another in %d s\n", (long)pid, how, backoff);
		if (monitor_nap(m, backoff))
			break;
		if ((backoff *= 2) > MONITOR_BACKOFF_MAX)
			backoff = MONITOR_BACKOFF_MAX;
	}
	return NULL;
failed:
	pthread_mutex_lock(&m->mu);
	snprintf(m->fail, sizeof(m->fail), "%s", d.msg);
	m->state = MON_FAILED;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

static void *
monitor_writer(void *arg)
{
	struct monitor *m = arg;
	struct monitor_evq *e;
	int fd, r;

	pthread_mutex_lock(&m->mu);
	for (;;) {
		while (!m->stopping && (m->head == NULL || m->ev_fd == -1 || m->ev_broken))
			pthread_cond_wait(&m->cv, &m->mu);
		if (m->stopping)
			break;
		e = m->head;
		if ((m->head = e->next) == NULL)
			m->tail = NULL;
		m->qn--;
		m->qbytes -= e->len;
		fd = m->ev_fd;
		m->ev_busy = 1;
		pthread_mutex_unlock(&m->mu);
		r = monitor_write_all(fd, e->frame, e->len);
		free(e);
		pthread_mutex_lock(&m->mu);
		m->ev_busy = 0;
		if (r != 0) {
			m->ev_broken = 1;	/* until the next child */
			m->dropped++;
		}
		pthread_cond_broadcast(&m->cv);
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

void
monitor_forward(void *arg, const char *type, const char *json)
{
	struct monitor *m = arg;
	struct monitor_evq *e = NULL;
	struct buf b;
	uint64_t dropped = 0;
	time_t now;

	buf_init(&b, MONITOR_HDR + MONITOR_MAX_FRAME);
	if (monitor_put_event(&b, type, json) == 0 &&
	    (e = malloc(sizeof(*e) + b.len)) != NULL) {
		e->next = NULL;
		e->len = b.len;
		memcpy(e->frame, b.data, b.len);
	}
	buf_free(&b);
	pthread_mutex_lock(&m->mu);
	if (e != NULL && !m->stopping && m->qn < MONITOR_EVQ_MAX &&
	    m->qbytes + e->len <= MONITOR_EVQ_BYTES) {
		if (m->tail != NULL)
			m->tail->next = e;
		else
			m->head = e;
		m->tail = e;
		m->qn++;
		m->qbytes += e->len;
		e = NULL;
		pthread_cond_broadcast(&m->cv);
	} else {
		m->dropped++;
		now = time(NULL);
		if (!m->stopping && now - m->drop_logged >= 10) {
			m->drop_logged = now;
			dropped = m->dropped;
		}
	}
	pthread_mutex_unlock(&m->mu);
	free(e);
	if (dropped > 0)
		fprintf(stderr, "benchfleetd: monitor: the API child does not keep up with the "
		    "events: %llu dropped so far\n", (unsigned long long)dropped);
}

int
monitor_start(struct monitor *m, struct bf_diag *d)
{
	struct timespec ts;
	int r = BF_ERR_SYS;

	if (pthread_create(&m->writer, NULL, monitor_writer, m) != 0) {
		bf_diag_set(d, NULL, "cannot start the event writer thread");
		return BF_ERR_SYS;
	}
	m->writer_started = 1;
	if (pthread_create(&m->thread, NULL, monitor_main, m) != 0) {
		bf_diag_set(d, NULL, "cannot start the monitor thread");
		return BF_ERR_SYS;
	}
	m->thread_started = 1;
	bf_abstime(CLOCK_REALTIME, (int64_t)MONITOR_START_S * 1000, &ts);
	pthread_mutex_lock(&m->mu);
	while (m->state == MON_STARTING)
		if (pthread_cond_timedwait(&m->cv, &m->mu, &ts) != 0)
			break;
	if (m->state == MON_READY)
		r = 0;
	else if (m->state == MON_FAILED)
		bf_diag_set(d, NULL, "%s", m->fail);
	else
		bf_diag_set(d, NULL, "the API child did not listen within %d s",
		    MONITOR_START_S);
	pthread_mutex_unlock(&m->mu);
	return r;
}

int
monitor_port(const struct monitor *m)
{
	return m->port;
}

pid_t
monitor_child_pid(struct monitor *m)
{
	pid_t p;

	pthread_mutex_lock(&m->mu);
	p = m->pid > 0 ? m->pid : 0;
	pthread_mutex_unlock(&m->mu);
	return p;
}

uint64_t
monitor_dropped(struct monitor *m)
{
	uint64_t n;

	pthread_mutex_lock(&m->mu);
	n = m->dropped;
	pthread_mutex_unlock(&m->mu);
	return n;
}

void
monitor_stop(struct monitor *m)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	m->stopping = 1;
	monitor_signal(m, SIGTERM);
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	if (m->thread_started)
		pthread_join(m->thread, NULL);
	if (m->writer_started)
		pthread_join(m->writer, NULL);
	m->thread_started = m->writer_started = 0;
}

void
monitor_free(struct monitor *m)
{
	struct monitor_evq *e, *next;

	if (m == NULL)
		return;
	monitor_stop(m);
	for (e = m->head; e != NULL; e = next) {
		next = e->next;
		free(e);
	}
	if (m->ctl_fd != -1)
		close(m->ctl_fd);
	if (m->ev_fd != -1)
		close(m->ev_fd);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m);
}
