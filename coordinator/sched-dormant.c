/*
 * sched-dormant.c: offline machines without a thread.
 *
 * A worker thread per machine is what a run needs (it owns the SSH link
 * and blocks in it while a step runs), but an offline machine has no link
 * and no run: its thread only slept out its back-off and woke to read and
 * lease its row. A lab of 10,000 registered machines, most of them down,
 * paid 10,000 threads and a store write per machine every few seconds.
 *
 * So a worker whose machine goes offline hands it over here and ends. One
 * prober thread keeps the dormant machines in a list (under s->mu) and,
 * on the worker's own back-off schedule (sched_retry_delay, the same
 * jitter seed), tries a TCP connect to each one's SSH port: non-blocking,
 * up to SCHED_PROBE_BATCH at once under one poll() and connect_timeout_ms.
 * Nothing is written to the store meanwhile (the machine row already says
 * offline and why). When the port answers, a worker is started for the
 * machine with its failure count, and does everything a worker does (the
 * SSH handshake, host key, agent, fingerprint); a machine whose port
 * answers but whose SSH fails goes offline and dormant again.
 *
 * Only machines with a numeric address go dormant (a host name would need
 * a resolver call that can block the prober for every machine); and only
 * with the SSH transport, or a reach function (the unit tests' fake).
 * A dormant machine does not renew its machine lease: on a shared store
 * another coordinator may take it over, which is harmless for a machine
 * nobody can reach; a worker started later finds the lease held and waits.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "sched-int.h"

#define SCHED_PROBE_BATCH	256	/* TCP connects in flight at once */
#define SCHED_DORMANT_IDLE_MS	5000	/* the prober looks at least this often */

struct dormant {
	char *name;
	char *host;
	int port;
	int fails;		/* connection failures in a row */
	uint32_t seed;		/* sched_retry_delay()'s jitter, the worker's */
	time_t next_try;
	int probe_wanted;	/* POST .../probe: try now, fingerprint after */
	int inflight;		/* in a try outside s->mu: the prober frees it */
	int deleted;		/* unlinked while in flight */
	struct dormant *next, *prev;
};

/* One connect of a batch, outside s->mu. */
struct dormant_try {
	struct dormant *d;	/* inflight: linked or deleted, never freed meanwhile */
	struct sockaddr_storage ss;
	socklen_t sslen;
	int fd;
	int up;			/* 1 reachable */
};

/*
 * Seconds before reconnecting after fails failures: 0, 1, 2, 4 ... max,
 * each step of 4 s or more spread by +-25% with a jitter fixed by the
 * worker's seed and the failure count, so that a lab's machines, offline
 * together after a power cut, do not come back in lock-step. Reset to 0 by
 * a connection that works.
 */
time_t
sched_retry_delay(int fails, int max, uint32_t seed)
{
	time_t d;
	uint32_t h;

	if (fails <= 0)
		return 0;
	d = fails > 20 || (1L << (fails - 1)) > max ? max : (time_t)1 << (fails - 1);
	if (d < 4)
		return d;
	h = seed ^ ((uint32_t)fails * 2654435761u);
	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	return d - d / 4 + (time_t)(h % (uint32_t)(d / 2 + 1));
}

/* Take d out of s->dormant, under s->mu. */
static void
dormant_unlink(struct sched *s, struct dormant *d)
{
	if (d->prev != NULL)
		d->prev->next = d->next;
	else
		s->dormant = d->next;
	if (d->next != NULL)
		d->next->prev = d->prev;
	d->next = d->prev = NULL;
	s->ndormant--;
}

static void
dormant_free(struct dormant *d)
{
	if (d == NULL)
		return;
	free(d->name);
	free(d->host);
	free(d);
}

/* host:port as a socket address, numeric only; -1 when it is a name. */
static int
dormant_addr(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (port <= 0 || port > 65535)
		return -1;
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
		return 0;
	}
	return -1;
}

int
sched_dormant_enabled(const struct sched *s, const char *host, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (s->cfg.reach != NULL)
		return 1;
	return s->cfg.connect == NULL && dormant_addr(host, port, &ss, &len) == 0;
}

int
sched_dormant_add_locked(struct sched *s, const char *name, const char *host, int port,
    int fails, uint32_t seed, time_t next_try)
{
	struct dormant *d;

	if ((d = calloc(1, sizeof(*d))) == NULL || (d->name = strdup(name)) == NULL ||
	    (d->host = strdup(host)) == NULL) {
		dormant_free(d);
		return BF_ERR_ALLOC;
	}
	d->port = port;
	d->fails = fails;
	d->seed = seed;
	d->next_try = next_try;
	d->next = s->dormant;
	if (s->dormant != NULL)
		s->dormant->prev = d;
	s->dormant = d;
	s->ndormant++;
	sched_wake_locked(s, SCHED_WAKE_PROBER);	/* it may sleep longer */
	return 0;
}

size_t
sched_dormant_names_locked(const struct sched *s, char **out, size_t cap)
{
	const struct dormant *d;
	size_t n = 0;

	for (d = s->dormant; d != NULL && n < cap; d = d->next)
		out[n++] = d->name;
	return n;
}

static int
dormant_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
sched_dormant_sync_locked(struct sched *s, char *const *sorted, size_t n)
{
	struct dormant *d, *next;

	for (d = s->dormant; d != NULL; d = next) {
		next = d->next;
		if (n > 0 && bsearch(&d->name, sorted, n, sizeof(*sorted),
		    dormant_name_cmp) != NULL)
			continue;
		/* deleted */
		dormant_unlink(s, d);
		if (d->inflight)
			d->deleted = 1;		/* the prober frees it */
		else
			dormant_free(d);
	}
}

int
sched_dormant_probe_locked(struct sched *s, const char *name)
{
	struct dormant *d;

	for (d = s->dormant; d != NULL; d = d->next)
		if (strcmp(d->name, name) == 0) {
			d->probe_wanted = 1;
			d->next_try = 0;
			sched_wake_locked(s, SCHED_WAKE_PROBER);
			return 0;
		}
	return BF_ERR_NOTFOUND;
}

/* Start a TCP connect of t; 1 done already (t->up says how), 0 pending. */
static int
dormant_connect(struct dormant_try *t)
{
	t->fd = socket(t->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->fd == -1)
		return 1;
	if (connect(t->fd, (struct sockaddr *)&t->ss, t->sslen) == 0) {
		t->up = 1;
		return 1;
	}
	return errno == EINPROGRESS ? 0 : 1;
}

/* Try every t[0..n) at once, within timeout_ms: each t->up set. */
static void
dormant_try_all(struct dormant_try *t, size_t n, int timeout_ms)
{
	struct pollfd pfd[SCHED_PROBE_BATCH];
	size_t map[SCHED_PROBE_BATCH], np = 0, i;
	int64_t deadline = bf_mono_ms() + timeout_ms, left;
	int e;
	socklen_t el;

	for (i = 0; i < n; i++) {
		t[i].fd = -1;
		t[i].up = 0;
		if (dormant_connect(&t[i]) == 0) {
			pfd[np].fd = t[i].fd;
			pfd[np].events = POLLOUT;
			map[np++] = i;
		}
	}
	while (np > 0 && (left = deadline - bf_mono_ms()) > 0) {
		if (poll(pfd, np, (int)left) < 0 && errno != EINTR)
			break;
		for (i = 0; i < np;) {
			if (pfd[i].revents == 0) {
				i++;
				continue;
			}
			e = 0;
			el = sizeof(e);
			if (getsockopt(pfd[i].fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0)
				t[map[i]].up = 1;
			pfd[i] = pfd[np - 1];
			map[i] = map[np - 1];
			np--;
		}
	}
	for (i = 0; i < n; i++)
		if (t[i].fd != -1)
			close(t[i].fd);
}

/* Ask the test's reach function instead (cfg.reach). */
static void
dormant_reach_all(struct sched *s, struct dormant_try *t, size_t n,
    const char *const *host, const int *port)
{
	size_t i;

	for (i = 0; i < n; i++)
		t[i].up = s->cfg.reach(s->cfg.connect_arg, host[i], port[i]) == 0;
}

/*
 * Take the due machines (at most SCHED_PROBE_BATCH) into t, under s->mu;
 * their count. *wait_ms: how long until the next one is due.
 */
static size_t
dormant_due_locked(struct sched *s, struct dormant_try *t, char **host, int *port,
    time_t now, int *wait_ms)
{
	struct dormant *d;
	time_t next = now + SCHED_DORMANT_IDLE_MS / 1000;
	size_t n = 0;

	for (d = s->dormant; d != NULL; d = d->next) {
		if (d->next_try > now) {
			if (d->next_try < next)
				next = d->next_try;
			continue;
		}
		if (n == SCHED_PROBE_BATCH) {
			next = now;
			break;
		}
		if (d->inflight)
			continue;
		if (s->cfg.reach == NULL &&
		    dormant_addr(d->host, d->port, &t[n].ss, &t[n].sslen) != 0) {
			d->next_try = now + s->cfg.probe_interval_s;	/* cannot be */
			continue;
		}
		if ((host[n] = strdup(d->host)) == NULL)
			break;		/* the next pass takes it */
		port[n] = d->port;
		t[n].d = d;
		d->inflight = 1;
		/* not due again while this try is in flight */
		d->next_try = now + s->cfg.probe_interval_s;
		n++;
	}
	*wait_ms = next <= now ? 0 : (int)(next - now) * 1000;
	return n;
}

/* The outcome of each try, under s->mu: a worker, or the next back-off. */
static void
dormant_settle_locked(struct sched *s, const struct dormant_try *t, size_t n, time_t now)
{
	struct dormant *d;
	size_t i;

	for (i = 0; i < n; i++) {
		d = t[i].d;
		d->inflight = 0;
		if (d->deleted) {	/* while in flight */
			dormant_free(d);
			continue;
		}
		if (s->stopping)
			continue;	/* no new worker now: sched_dormant_stop frees it */
		if (!t[i].up) {
			d->fails++;
			d->probe_wanted = 0;
			d->next_try = now + sched_retry_delay(d->fails, s->cfg.probe_interval_s,
			    d->seed);
			continue;
		}
		if (sched_spawn_locked(s, d->name, d->fails, d->seed, d->probe_wanted) != 0) {
			d->next_try = now + 1;	/* no thread now: again soon */
			continue;
		}
		dormant_unlink(s, d);
		dormant_free(d);
		s->woken++;
	}
}

static void *
dormant_main(void *arg)
{
	struct sched *s = arg;
	struct dormant_try *t = NULL;
	char *host[SCHED_PROBE_BATCH];
	int port[SCHED_PROBE_BATCH];
	struct timespec ts;
	size_t n, i;
	int wait_ms;

	if ((t = calloc(SCHED_PROBE_BATCH, sizeof(*t))) == NULL)
		return NULL;
	pthread_mutex_lock(&s->mu);
	while (!s->stopping) {
		s->prober_passes++;
		n = dormant_due_locked(s, t, host, port, time(NULL), &wait_ms);
		if (n == 0) {
			bf_abstime(CLOCK_REALTIME, wait_ms, &ts);
			(void)pthread_cond_timedwait(&s->dcv, &s->mu, &ts);
			continue;
		}
		pthread_mutex_unlock(&s->mu);
		if (s->cfg.reach != NULL)
			dormant_reach_all(s, t, n, (const char *const *)host, port);
		else
			dormant_try_all(t, n, s->cfg.connect_timeout_ms);
		for (i = 0; i < n; i++)
			free(host[i]);
		pthread_mutex_lock(&s->mu);
		s->probed += n;
		dormant_settle_locked(s, t, n, time(NULL));
	}
	pthread_mutex_unlock(&s->mu);
	free(t);
	return NULL;
}

int
sched_dormant_start(struct sched *s)
{
	if (pthread_create(&s->prober, NULL, dormant_main, s) != 0)
		return BF_ERR_SYS;
	s->prober_started = 1;
	return 0;
}

void
sched_dormant_stop(struct sched *s)
{
	struct dormant *d, *next;

	if (s->prober_started)
		pthread_join(s->prober, NULL);
	s->prober_started = 0;
	for (d = s->dormant; d != NULL; d = next) {
		next = d->next;
		dormant_free(d);
	}
	s->dormant = NULL;
	s->ndormant = 0;
}
