/*
 * resolve.c: getaddrinfo(3) with a deadline (resolve.h). A job is shared
 * by the lookup's thread and its caller (refs), and freed by the last of
 * the two to let go: the caller may leave first, on timeout.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <time.h>

#include "caps.h"
#include "clock.h"
#include "err.h"
#include "resolve.h"

struct resolve_job {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;		/* the thread's and the caller's; under mu */
	int done;		/* under mu */
	int gai;		/* under mu, once done */
	struct addrinfo hints;
	struct addrinfo *ai;	/* owned by the job until the caller takes it */
	char host[256];
	char port[8];
};

/* lookups running, abandoned ones included; under resolve_mu */
static pthread_mutex_t resolve_mu = PTHREAD_MUTEX_INITIALIZER;
static int resolving;

static void
resolve_unref(struct resolve_job *j)
{
	int last;

	pthread_mutex_lock(&j->mu);
	last = --j->refs == 0;
	pthread_mutex_unlock(&j->mu);
	if (!last)
		return;
	if (j->ai != NULL)
		freeaddrinfo(j->ai);
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

static void *
resolve_main(void *arg)
{
	struct resolve_job *j = arg;
	struct addrinfo *ai = NULL;
	int gai;

	gai = getaddrinfo(j->host, j->port, &j->hints, &ai);
	pthread_mutex_lock(&j->mu);
	j->gai = gai;
	j->ai = gai == 0 ? ai : NULL;
	j->done = 1;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	pthread_mutex_lock(&resolve_mu);
	resolving--;
	pthread_mutex_unlock(&resolve_mu);
	resolve_unref(j);
	return NULL;
}

/* Is host an IPv4 or IPv6 address, which getaddrinfo reads without a
 * nameserver? */
static int
resolve_is_address(const char *host)
{
	unsigned char a[16];

	return inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
}

int
bf_resolve(const char *host, const char *port, const struct addrinfo *hints,
    int timeout_ms, struct addrinfo **aip, int *gai)
{
	struct resolve_job *j;
	struct addrinfo h;
	struct timespec ts;
	pthread_attr_t attr;
	pthread_t t;
	int r, g, busy;

	*aip = NULL;
	if (gai != NULL)
		*gai = 0;
	if (host == NULL || port == NULL || timeout_ms <= 0 ||
	    strlen(host) >= sizeof(j->host) || strlen(port) >= sizeof(j->port))
		return BF_ERR_INVALID;
	memset(&h, 0, sizeof(h));
	if (hints != NULL) {
		h.ai_family = hints->ai_family;
		h.ai_socktype = hints->ai_socktype;
		h.ai_protocol = hints->ai_protocol;
		h.ai_flags = hints->ai_flags;
	} else {
		h.ai_family = AF_UNSPEC;
		h.ai_socktype = SOCK_STREAM;
	}
	/* an address asks no nameserver: no thread, no slot */
	if (resolve_is_address(host)) {
		if ((g = getaddrinfo(host, port, &h, aip)) == 0)
			return 0;
		*aip = NULL;
		if (gai != NULL)
			*gai = g;
		return BF_ERR_NOTFOUND;
	}
	pthread_mutex_lock(&resolve_mu);
	busy = resolving >= BF_MAX_RESOLVING;
	if (!busy)
		resolving++;
	pthread_mutex_unlock(&resolve_mu);
	if (busy)
		return BF_ERR_STATE;
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		r = BF_ERR_ALLOC;
		goto undo;
	}
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	j->refs = 2;
	j->hints = h;
	memcpy(j->host, host, strlen(host) + 1);
	memcpy(j->port, port, strlen(port) + 1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	r = pthread_create(&t, &attr, resolve_main, j);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		j->refs = 1;
		resolve_unref(j);
		errno = r;
		r = BF_ERR_SYS;
		goto undo;
	}
	bf_abstime(CLOCK_REALTIME, timeout_ms, &ts);
	pthread_mutex_lock(&j->mu);
	while (!j->done && pthread_cond_timedwait(&j->cv, &j->mu, &ts) == 0)
		;
	if (!j->done) {
		r = BF_ERR_TIMEOUT;
	} else if (j->gai != 0) {
		if (gai != NULL)
			*gai = j->gai;
		r = BF_ERR_NOTFOUND;
	} else {
		*aip = j->ai;
		j->ai = NULL;
		r = 0;
	}
	pthread_mutex_unlock(&j->mu);
	resolve_unref(j);
	return r;
undo:
	pthread_mutex_lock(&resolve_mu);
	resolving--;
	pthread_mutex_unlock(&resolve_mu);
	return r;
}
