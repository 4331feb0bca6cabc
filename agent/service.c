/*
 * service.c: the step's services. Output goes to an anonymous memfd so a
 * chatty service never blocks on a full pipe nobody reads, and its tail can
 * be quoted when it dies. Readiness is a TCP connect to a numeric address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bind.h"
#include "exec.h"
#include "clock.h"
#include "service.h"

#define SERVICE_POLL_MS		50
#define SERVICE_TAIL		300	/* bytes of output quoted on failure */
#define SERVICE_REAP_MS		10000	/* for the rest of a killed service's group */

static struct {
	pid_t pid;
	int logfd;
} service_tab[STEP_MAX_SERVICES];
static volatile sig_atomic_t service_n;

/* The last bytes of a service's output, one line, for a message. */
static void
service_tail(int fd, char *out, size_t outsz)
{
	char buf[SERVICE_TAIL + 1];
	off_t end;
	ssize_t n;
	size_t i;

	out[0] = '\0';
	if (fd < 0 || (end = lseek(fd, 0, SEEK_END)) <= 0)
		return;
	n = pread(fd, buf, SERVICE_TAIL, end > SERVICE_TAIL ? end - SERVICE_TAIL : 0);
	if (n <= 0)
		return;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	for (i = 0; i < (size_t)n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = ' ';
	buf[n] = '\0';
	snprintf(out, outsz, ": %s", buf);
}

static void __attribute__((noreturn))
service_child(const struct step *st, const struct step_service *sv, int logfd)
{
	const char *what = "setup";
	char msg[160];
	int fd, n;

	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	{
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	if (setpgid(0, 0) != 0)
		goto fail;
	if ((fd = open("/dev/null", O_RDONLY)) < 0 || dup2(fd, STDIN_FILENO) < 0 ||
	    dup2(logfd, STDOUT_FILENO) < 0 || dup2(logfd, STDERR_FILENO) < 0)
		goto fail;
	if (st->cwd != NULL && chdir(st->cwd) != 0) {
		what = "chdir";
		goto fail;
	}
	if (bind_apply(&st->bind, &what) != 0)
		goto fail;
	what = "execvp";
	exec_search(strcmp(sv->cmd.argv[0], "@agent") == 0 ? "/proc/self/exe" : sv->cmd.argv[0],
	    sv->cmd.argv);
fail:
	n = snprintf(msg, sizeof(msg), "benchfleet-agent: %s: %s\n", what, strerror(errno));
	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n);
	_exit(127);
}

static int
service_connect(const struct step_service *sv)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	int fd, r = -1;

	memset(&a4, 0, sizeof(a4));
	memset(&a6, 0, sizeof(a6));
	if (inet_pton(AF_INET, sv->host, &a4.sin_addr) == 1) {
		a4.sin_family = AF_INET;
		a4.sin_port = htons((uint16_t)sv->port);
		if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			return -1;
		r = connect(fd, (struct sockaddr *)&a4, sizeof(a4));
	} else if (inet_pton(AF_INET6, sv->host, &a6.sin6_addr) == 1) {
		a6.sin6_family = AF_INET6;
		a6.sin6_port = htons((uint16_t)sv->port);
		if ((fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			return -1;
		r = connect(fd, (struct sockaddr *)&a6, sizeof(a6));
	} else
		return -2;
	close(fd);
	return r;
}

static void
service_status_text(int status, char *out, size_t outsz)
{
	if (WIFEXITED(status))
		snprintf(out, outsz, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, outsz, "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, outsz, "stopped");
}

int
service_start_all(const struct step *st, struct bf_diag *d)
{
	const struct timespec nap = { 0, SERVICE_POLL_MS * 1000000L };
	char field[32], tail[SERVICE_TAIL + 8], how[64];
	int64_t t0;
	size_t i;
	pid_t pid;
	int status, c, fd;

	for (i = 0; i < st->nservices; i++) {
		const struct step_service *sv = &st->services[i];

		snprintf(field, sizeof(field), "services[%zu]", i);
		/* a server already there (left from an earlier step, or someone
		 * else's) would pass the readiness check for ours, and the step
		 * would measure it */
		if ((c = service_connect(sv)) == 0) {
			bf_diag_set(d, field, "%s:%d already accepts connections before \"%.100s\" "
			    "started: another server holds it (left from an earlier step?)",
			    sv->host, sv->port, sv->cmd.argv[0]);
			return BF_ERR_STATE;
		}
		if (c == -2) {
			bf_diag_set(d, field, "ready.tcp: \"%s\" is not a numeric address", sv->host);
			return BF_ERR_INVALID;
		}
		if ((fd = memfd_create("bf-service", MFD_CLOEXEC)) < 0) {
			bf_diag_set(d, field, "memfd_create: %s", strerror(errno));
			return BF_ERR_SYS;
		}
		if ((pid = fork()) < 0) {
			close(fd);
			bf_diag_set(d, field, "fork: %s", strerror(errno));
			return BF_ERR_SYS;
		}
		if (pid == 0)
			service_child(st, sv, fd);
		(void)setpgid(pid, pid);
		service_tab[service_n].pid = pid;
		service_tab[service_n].logfd = fd;
		service_n = service_n + 1;
		(void)exec_keep(pid);
		t0 = bf_mono_ms();
		for (;;) {
			if (exec_kept_status(pid, &status) == 1) {
				service_status_text(status, how, sizeof(how));
				service_tail(fd, tail, sizeof(tail));
				bf_diag_set(d, field, "\"%.100s\" %s before it was ready%s",
				    sv->cmd.argv[0], how, tail);
				return BF_ERR_STATE;
			}
			if ((c = service_connect(sv)) == 0)
				break;
			if (c == -2) {
				bf_diag_set(d, field, "ready.tcp: \"%s\" is not a numeric address",
				    sv->host);
				return BF_ERR_INVALID;
			}
			if (bf_mono_ms() - t0 >= sv->timeout_s * 1000) {
				service_tail(fd, tail, sizeof(tail));
				bf_diag_set(d, field, "\"%.100s\" did not accept a connection on "
				    "%s:%d within %lld s%s", sv->cmd.argv[0], sv->host, sv->port,
				    (long long)sv->timeout_s, tail);
				return BF_ERR_TIMEOUT;
			}
			nanosleep(&nap, NULL);
		}
	}
	return 0;
}

int
service_check(const struct step *st, struct bf_diag *d)
{
	char field[32], tail[SERVICE_TAIL + 8], how[64];
	sig_atomic_t i;
	int status;

	for (i = 0; i < service_n; i++) {
		if (exec_kept_status(service_tab[i].pid, &status) != 1)
			continue;
		snprintf(field, sizeof(field), "services[%d]", (int)i);
		service_status_text(status, how, sizeof(how));
		service_tail(service_tab[i].logfd, tail, sizeof(tail));
		bf_diag_set(d, field, "\"%.100s\" %s during the step%s",
		    (size_t)i < st->nservices ? st->services[i].cmd.argv[0] : "?", how, tail);
		return BF_ERR_STATE;
	}
	return 0;
}

/*
 * Reap what is left of a killed service's group: children of the leader
 * (work serve's memcached instances) are reparented to us, the subreaper,
 * when it dies. Until each has exited its port and memory are still held,
 * so a knob restored next (nr_hugepages) or the next step's server on the
 * same port would race it. Bounded: a process stuck in D state is left.
 */
static void
service_reap_group(pid_t pgid)
{
	const struct timespec nap = { 0, 5 * 1000000L };
	int64_t end = bf_mono_ms() + SERVICE_REAP_MS;
	pid_t w;
	int status;

	for (;;) {
		if ((w = waitpid(-pgid, &status, WNOHANG)) > 0)
			continue;
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || bf_mono_ms() >= end)	/* ECHILD: none of ours left */
			return;
		nanosleep(&nap, NULL);
	}
}

void
service_stop_all(void)
{
	int status;

	while (service_n > 0) {
		sig_atomic_t i = service_n - 1;

		/* the leader is unreaped (zombie at worst): its group id is ours */
		kill(-service_tab[i].pid, SIGKILL);
		if (exec_kept_status(service_tab[i].pid, &status) == 0)
			while (waitpid(service_tab[i].pid, &status, 0) < 0 && errno == EINTR)
				;
		service_reap_group(service_tab[i].pid);
		exec_unkeep(service_tab[i].pid);
		if (service_tab[i].logfd >= 0)
			close(service_tab[i].logfd);
		service_n = i;
	}
}

void
service_kill_signal(void)
{
	sig_atomic_t i;

	for (i = 0; i < service_n; i++)
		if (service_tab[i].pid > 0)
			kill(-service_tab[i].pid, SIGKILL);
}
