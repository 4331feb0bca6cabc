/*
 * monitor-child.c: the API child's side of privilege separation
 * (monitor.h): the client of the monitor's request table, the thread that
 * publishes the monitor's events into this process's hub, and the drop of
 * every privilege the child holds.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "events.h"
#include "monitor.h"

#define MONITOR_CALL_MS		30000	/* a request's answer, at most */

struct monitor_client {
	int ctl, ev;
	pthread_mutex_t mu;		/* one request at a time */
	pthread_cond_t cv;		/* ready */
	int ready;			/* under mu: READY was answered */
	int broken;			/* under mu: the ctl stream is out of step */
	struct monitor_rd rd;		/* replies on ctl */
	struct events *hub;
	pthread_t evth;
	int evth_started;
	atomic_int stop;
};

int
monitor_client_open(int ctl_fd, int ev_fd, struct monitor_client **out)
{
	struct monitor_client *c;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return BF_ERR_ALLOC;
	c->ctl = ctl_fd;
	c->ev = ev_fd;
	monitor_rd_init(&c->rd);
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c);
		return BF_ERR_SYS;
	}
	if (pthread_cond_init(&c->cv, NULL) != 0) {
		pthread_mutex_destroy(&c->mu);
		free(c);
		return BF_ERR_SYS;
	}
	*out = c;
	return 0;
}

/* The monitor is gone or out of step: this process ends (SIGTERM to
 * itself, taken by main's sigwait) and the monitor starts a new one. */
static void
client_broken(struct monitor_client *c, const char *why)
{
	if (!c->broken)
		fprintf(stderr, "benchfleetd (api): the monitor %s; exiting\n", why);
	c->broken = 1;
	pthread_cond_broadcast(&c->cv);
	kill(getpid(), SIGTERM);
}

/*
 * One request and its reply. The reply's code is returned; its answer
 * must be exactly anslen bytes when the code is 0 (ans may be NULL with 0).
 */
static int
client_call(struct monitor_client *c, int type, const void *data, size_t n, void *ans,
    size_t anslen)
{
	struct monitor_msg msg;
	struct bf_diag d;
	struct buf b;
	int r;

	bf_diag_clear(&d);
	buf_init(&b, MONITOR_HDR + MONITOR_MAX_FRAME);
	pthread_mutex_lock(&c->mu);
	while (!c->ready && !c->broken && type != MONITOR_READY && type != MONITOR_HELLO)
		pthread_cond_wait(&c->cv, &c->mu);
	if (c->broken) {
		r = BF_ERR_PROTO;
		goto out;
	}
	if ((r = monitor_put(&b, type, data, n)) != 0)
		goto out;
	if ((r = monitor_write_all(c->ctl, b.data, b.len)) != 0) {
		client_broken(c, "does not take requests");
		goto out;
	}
	r = monitor_rd_next(c->ctl, &c->rd, MONITOR_FROM_MONITOR, MONITOR_CALL_MS, &msg, &d);
	if (r != 1 || msg.type != MONITOR_REPLY) {
		client_broken(c, r == BF_ERR_TIMEOUT ? "did not answer in time" :
		    r == 0 ? "closed the socket" : "sent what is not a reply");
		r = BF_ERR_PROTO;
		goto out;
	}
	if ((r = msg.code) == 0) {
		if (msg.len != anslen) {
			client_broken(c, "sent an answer of the wrong size");
			r = BF_ERR_PROTO;
			goto out;
		}
		if (anslen > 0)
			memcpy(ans, msg.data, anslen);
	}
out:
	pthread_mutex_unlock(&c->mu);
	buf_free(&b);
	return r;
}

static void *
client_events(void *arg)
{
	struct monitor_client *c = arg;
	struct monitor_msg msg;
	struct monitor_rd rd;
	struct bf_diag d;
	int r;

	monitor_rd_init(&rd);
	while (!atomic_load(&c->stop)) {
		bf_diag_clear(&d);
		r = monitor_rd_next(c->ev, &rd, MONITOR_FROM_MONITOR, 500, &msg, &d);
		if (r == BF_ERR_TIMEOUT)
			continue;
		if (r != 1 || msg.type != MONITOR_EVENT) {
			if (!atomic_load(&c->stop)) {
				pthread_mutex_lock(&c->mu);
				client_broken(c, r == 0 ? "is gone (end of the event stream)" :
				    "sent a bad event");
				pthread_mutex_unlock(&c->mu);
			}
			break;
		}
		events_inject(c->hub, msg.str, (const char *)msg.data, msg.len);
	}
	monitor_rd_free(&rd);
	return NULL;
}

int
monitor_client_hello(struct monitor_client *c, int *has_lab_key,
    unsigned char pub[MONITOR_PUB_LEN])
{
	unsigned char ans[MONITOR_HELLO_REPLY];
	int r;

	if ((r = client_call(c, MONITOR_HELLO, NULL, 0, ans, sizeof(ans))) != 0)
		return r;
	*has_lab_key = ans[0] != 0;
	memcpy(pub, ans + 1, MONITOR_PUB_LEN);
	return 0;
}

int
monitor_client_ready(struct monitor_client *c, uint16_t port, struct events *ev)
{
	unsigned char p[2] = { (unsigned char)(port >> 8), (unsigned char)port };
	int r;

	if ((r = client_call(c, MONITOR_READY, p, sizeof(p), NULL, 0)) != 0)
		return r;
	c->hub = ev;
	if (pthread_create(&c->evth, NULL, client_events, c) != 0)
		return BF_ERR_SYS;
	c->evth_started = 1;
	pthread_mutex_lock(&c->mu);
	c->ready = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

void
monitor_client_kick(void *arg, int machines)
{
	client_call(arg, machines ? MONITOR_KICK_MACHINES : MONITOR_KICK, NULL, 0, NULL, 0);
}

int
monitor_client_probe(void *arg, const char *name)
{
	/* the route admits only names (jx_check_name), as the monitor does */
	if (*name == '\0' || strlen(name) > BF_MAX_NAME)
		return BF_ERR_INVALID;
	return client_call(arg, MONITOR_PROBE, name, strlen(name), NULL, 0);
}

/* A path the monitor would refuse is answered here: sending it would be a
 * protocol error, and the monitor would kill this process for it. */
int
monitor_client_key(void *arg, const char *path)
{
	if (monitor_check_path(path, strlen(path), NULL) != 0)
		return BF_ERR_INVALID;
	return client_call(arg, MONITOR_KEY, path, strlen(path), NULL, 0);
}

int
monitor_client_sign(void *arg, const unsigned char *msg, size_t len,
    unsigned char sig[MONITOR_SIG_LEN])
{
	if (len > MONITOR_MAX_SIGN)
		return BF_ERR_TOOBIG;
	return client_call(arg, MONITOR_SIGN, msg, len, sig, MONITOR_SIG_LEN);
}

void
monitor_client_free(struct monitor_client *c)
{
	if (c == NULL)
		return;
	atomic_store(&c->stop, 1);
	if (c->evth_started)
		pthread_join(c->evth, NULL);
	monitor_rd_free(&c->rd);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* --- privileges --- */

static int
caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	memset(data, 0, 2 * sizeof(*data));
	return (int)syscall(SYS_capget, &h, data);
}

int
monitor_can_setuid(void)
{
	struct __user_cap_data_struct data[2];
	uint32_t need = (1u << CAP_SETUID) | (1u << CAP_SETGID);

	if (geteuid() == 0)
		return 1;
	return caps_get(data) == 0 && (data[0].effective & need) == need;
}

int
monitor_drop_privileges(const char *user, int *shared, struct bf_diag *d)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2];
	struct passwd pw, *pwp = NULL;
	char pwbuf[4096];
	uid_t uid;
	gid_t gid;
	int e;

	*shared = 0;
	if (!monitor_can_setuid()) {
		*shared = 1;
		goto nnp;
	}
	if ((e = getpwnam_r(user, &pw, pwbuf, sizeof(pwbuf), &pwp)) != 0 || pwp == NULL) {
		bf_diag_set(d, "api-user", "--api-user: no user \"%s\"%s%s", user,
		    e != 0 ? ": " : "", e != 0 ? strerror(e) : "");
		return BF_ERR_NOTFOUND;
	}
	uid = pw.pw_uid;
	gid = pw.pw_gid;
	if (uid == 0 || uid == getuid()) {
		bf_diag_set(d, "api-user", "--api-user: \"%s\" is %s", user,
		    uid == 0 ? "root" : "the daemon's own user");
		return BF_ERR_INVALID;
	}
	if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 ||
	    setresuid(uid, uid, uid) != 0) {
		bf_diag_set(d, "api-user", "--api-user %s: changing to uid %ld gid %ld: %s", user,
		    (long)uid, (long)gid, strerror(errno));
		return BF_ERR_SYS;
	}
	/* From a non-root uid with CAP_SETUID (the systemd unit), setuid
	 * keeps every capability: clear them. */
	memset(none, 0, sizeof(none));
	if (syscall(SYS_capset, &h, none) != 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
		bf_diag_set(d, "api-user", "clearing capabilities: %s", strerror(errno));
		return BF_ERR_SYS;
	}
	if (setuid(0) == 0 || setgid(0) == 0 || getuid() != uid || geteuid() != uid ||
	    getgid() != gid || getegid() != gid || monitor_can_setuid()) {
		bf_diag_set(d, "api-user", "the API child could regain its privileges after "
		    "changing to %s", user);
		return BF_ERR_STATE;
	}
nnp:
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		bf_diag_set(d, NULL, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return BF_ERR_SYS;
	}
	return 0;
}
