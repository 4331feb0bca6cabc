/*
 * api-conn.c: every HTTP connection from accept to close, so that slow
 * clients cannot hold the API. libmicrohttpd's idle timer is reset by any
 * byte, so a client trickling a header a byte every few seconds held its
 * connection (and its thread) for ever, and 1,000 of them stopped the
 * daemon. Here:
 *   - a connection whose request headers are not complete within
 *     BF_HTTP_HEADER_DEADLINE_S of its start (or of its previous answer,
 *     on keep-alive) is shut down by a reaper thread, trickling or not;
 *   - a request body must arrive within BF_HTTP_BODY_DEADLINE_S;
 *   - a new connection from an address that already has
 *     BF_MAX_CONN_SLOW_PER_IP connections waiting for headers evicts the
 *     oldest of them, and past BF_MAX_CONN_SLOW in all the oldest of any
 *     address: a flood of slow connections from 127.0.0.1 costs the
 *     flooder its oldest connections, not the owner his /healthz (a
 *     refusal at accept, libmicrohttpd's per-IP limit, would lock out the
 *     owner sharing that address). Connections younger than
 *     BF_CONN_EVICT_GRACE_MS are spared, up to BF_MAX_CONN_WAIT_PER_IP
 *     (BF_MAX_CONN_WAIT in all): a flood faster than the grace still
 *     never reaches libmicrohttpd's limits, which are left for
 *     connections past their headers (bodies and event streams).
 * An idle keep-alive connection (one request of it answered) counts as
 * waiting too, but is evicted after those that never sent a request, and
 * with a FIN, not into the tarpit: its client's next request on it must
 * fail at once and be retried, not hang (a browser's event stream sent on
 * a tarpitted socket stayed "connecting" for the 10 s deadline).
 * Answers (event streams included) have no deadline here; the streams are
 * capped by BF_MAX_SSE_CLIENTS.
 *
 * Closing is shutdown(2) of the socket under the registry's mutex: MHD
 * notifies MHD_CONNECTION_NOTIFY_CLOSED (which takes the same mutex to
 * unregister) before it close(2)s the descriptor, so the reaper never
 * touches a descriptor number that was reused. The connection's own thread
 * then sees the end of the stream and closes as after a client hang-up.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api-int.h"
#include "clock.h"

struct api_conn {
	struct api_conn *prev, *next;	/* oldest first */
	int fd;
	struct sockaddr_storage peer;
	enum api_conn_state state;
	double since;			/* CLOCK_MONOTONIC seconds of the state */
	int closing;			/* shut down; waiting for MHD to notice */
	int ready;			/* its request head is in the socket (conn_late) */
	int answered;			/* a request of it was answered (keep-alive) */
};

/* Evicted sockets held open, unread, until their deadline (see
 * conn_evict_locked): a ring of descriptors. */
struct api_tarpit {
	int fd;
	double until;
};

struct api_conns {
	pthread_mutex_t mu;
	struct api_tarpit pit[BF_MAX_CONN_TARPIT];
	size_t pit_head, pit_n;
	pthread_cond_t cv;
	struct api_conn *head, *tail;
	size_t n;			/* registered */
	size_t evicted;			/* shut down for a newer connection */
	size_t expired;			/* shut down past a deadline */
	int stop;
	int reaper_started;
	pthread_t reaper;
};

static int
conn_same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;
	const struct sockaddr_in *b4 = (const struct sockaddr_in *)b;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;

	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr)) == 0;
	return 0;
}

/* Caller holds mu. */
static void
conn_close_locked(struct api_conn *c)
{
	if (c->closing || c->fd == -1)
		return;
	c->closing = 1;
	shutdown(c->fd, SHUT_RDWR);
}

/*
 * Evict a connection waiting for headers without telling its client. A
 * flooder that reconnects on every close would otherwise make us accept
 * connections as fast as it can open them (each a thread), with /healthz
 * queued behind them in the listen backlog. So the client's socket moves
 * to the tarpit (a dup held open and unread: no thread, no MHD memory),
 * and MHD's descriptor number is pointed (dup3) at a dead socket, whose
 * end of stream MHD reads and closes, shutdown(SHUT_WR) included, without
 * a FIN reaching the client. shutdown(SHUT_RD) of the held socket sends
 * nothing either, but wakes MHD's poll() on it. The tarpit closes the
 * socket when the connection's header deadline passes, or when full.
 * Caller holds mu, so MHD has not closed c->fd yet (see the file comment).
 */
static void
conn_evict_locked(struct api_conns *cs, struct api_conn *c)
{
	struct api_tarpit *t;
	int keep = -1, sv[2] = { -1, -1 };

	if (c->closing || c->fd == -1)
		return;
	/* An idle keep-alive connection sent a whole request and had its
	 * answer: a client, not a trickler. It gets a FIN, so a request it
	 * sends now fails at once and is retried on a new connection (as
	 * browsers do on a reused socket); the tarpit would leave that
	 * request unanswered until the deadline. */
	if (c->answered) {
		conn_close_locked(c);
		return;
	}
	if ((keep = fcntl(c->fd, F_DUPFD_CLOEXEC, 0)) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
	    dup3(sv[0], c->fd, O_CLOEXEC) == -1) {
		/* no descriptors to spare: a plain close */
		if (keep != -1)
			close(keep);
		if (sv[0] != -1) {
			close(sv[0]);
			close(sv[1]);
		}
		conn_close_locked(c);
		return;
	}
	close(sv[0]);
	close(sv[1]);
	c->closing = 1;
	shutdown(keep, SHUT_RD);
	if (cs->pit_n == BF_MAX_CONN_TARPIT) {
		close(cs->pit[cs->pit_head].fd);
		cs->pit_head = (cs->pit_head + 1) % BF_MAX_CONN_TARPIT;
		cs->pit_n--;
	}
	t = &cs->pit[(cs->pit_head + cs->pit_n) % BF_MAX_CONN_TARPIT];
	t->fd = keep;
	t->until = c->since + BF_HTTP_HEADER_DEADLINE_S;
	cs->pit_n++;
}

/*
 * Whether a connection waiting for headers is only late, not slow: its
 * whole request head (or, on TLS, its whole first handshake record) is in
 * the socket, unread because its thread has not run yet. On a loaded box a
 * burst of honest clients (256 event streams opened at once) waits longer
 * than the grace, and must not be taken for a flood. A late connection is
 * marked and never evicted; its thread moves it on soon. A flooder cannot
 * use this to stay: a complete head is answered (or refused) at once.
 * Caller holds mu; c->fd is still MHD's socket (see the file comment).
 */
static int
conn_late(struct api_conn *c)
{
	unsigned char b[BF_CONN_PEEK];
	ssize_t n;

	if (c->ready)
		return 1;
	if (c->fd == -1 || (n = recv(c->fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT)) <= 0)
		return 0;
	if (b[0] == 0x16)	/* TLS handshake: type, version, 2-byte length */
		c->ready = n >= 5 && (size_t)n >= 5 + ((size_t)b[3] << 8 | b[4]);
	else
		c->ready = memmem(b, (size_t)n, "\r\n\r\n", 4) != NULL;
	return c->ready;
}

/* The oldest connection waiting for headers (from peer, when not NULL),
 * and how many such there are: of those past the grace (young == 0), or
 * of all (young == 1). Caller holds mu. */
static struct api_conn *
conn_oldest_waiting(struct api_conns *cs, const struct sockaddr_storage *peer, int young,
    size_t *np)
{
	struct api_conn *c, *oldest = NULL, *idle = NULL;
	double born = bf_mono() - BF_CONN_EVICT_GRACE_MS / 1000.0;
	size_t n = 0;

	/* A connection younger than the grace may have its headers in our
	 * socket buffer, its thread not yet run: a burst of honest clients
	 * (256 event streams opened at once) must not evict itself. */
	for (c = cs->head; c != NULL; c = c->next) {
		if (c->closing || c->ready || c->state != API_CONN_HEADERS ||
		    (!young && c->since > born))
			continue;
		if (peer != NULL && !conn_same_peer(&c->peer, peer))
			continue;
		if (c->answered) {
			if (idle == NULL)
				idle = c;
		} else if (oldest == NULL)
			oldest = c;
		n++;
	}
	*np = n;
	/* the oldest that never sent a request goes first; an idle client's
	 * keep-alive connection only when there is none */
	return oldest != NULL ? oldest : idle;
}

/*
 * Make room for a new connection (from peer, or from anyone when NULL):
 * past soft connections waiting for headers that are older than the grace,
 * the oldest of them goes; past hard waiting at all, the oldest goes
 * whatever its age. The hard rule is what keeps a flood that opens its
 * connections faster than the grace from filling libmicrohttpd's limits,
 * which refuse at accept, before any of this runs, and so would lock out
 * the owner sharing the flooder's address. Caller holds mu.
 */
static void
conn_make_room_locked(struct api_conns *cs, const struct sockaddr_storage *peer,
    size_t soft, size_t hard)
{
	struct api_conn *old;
	size_t n;

	for (;;) {
		if ((old = conn_oldest_waiting(cs, peer, 1, &n)) == NULL || n < hard) {
			if ((old = conn_oldest_waiting(cs, peer, 0, &n)) == NULL || n < soft)
				return;
		}
		if (!conn_late(old))
			break;
	}
	conn_evict_locked(cs, old);
	cs->evicted++;
}

/* Connections waiting for headers past the grace (from peer, or from
 * anyone when NULL). Caller holds mu. */
static size_t
conn_count_waiting(const struct api_conns *cs, const struct sockaddr_storage *peer, double born)
{
	const struct api_conn *c;
	size_t n = 0;

	for (c = cs->head; c != NULL; c = c->next)
		if (!c->closing && !c->ready && c->state == API_CONN_HEADERS && c->since <= born &&
		    (peer == NULL || conn_same_peer(&c->peer, peer)))
			n++;
	return n;
}

/*
 * Trim, as conn_make_room_locked does for a new connection, the waiting
 * connections spared by the grace once they have outgrown it: a flood
 * opened faster than the grace then costs BF_MAX_CONN_SLOW_PER_IP threads
 * per address again within a reaper tick, not BF_MAX_CONN_WAIT_PER_IP
 * until the header deadline. Oldest first, those that never sent a
 * request before idle keep-alive clients, until the soft caps hold.
 * Quadratic in the connections (BF_MAX_CONNECTIONS), only when more than
 * BF_MAX_CONN_SLOW_PER_IP wait. Caller holds mu.
 */
static void
conn_trim_locked(struct api_conns *cs, double now)
{
	struct api_conn *c;
	double born = now - BF_CONN_EVICT_GRACE_MS / 1000.0;
	int pass;

	if (conn_count_waiting(cs, NULL, born) <= BF_MAX_CONN_SLOW_PER_IP)
		return;
	for (pass = 0; pass < 2; pass++)
		for (c = cs->head; c != NULL; c = c->next) {
			if (c->closing || c->ready || c->state != API_CONN_HEADERS ||
			    c->since > born || c->answered != pass)
				continue;
			if ((conn_count_waiting(cs, &c->peer, born) > BF_MAX_CONN_SLOW_PER_IP ||
			    conn_count_waiting(cs, NULL, born) > BF_MAX_CONN_SLOW) && !conn_late(c)) {
				conn_evict_locked(cs, c);
				cs->evicted++;
			}
		}
}

static void *
conn_reaper(void *arg)
{
	struct api_conns *cs = arg;
	struct api_conn *c;
	struct timespec ts;
	double now;
	int paced;

	pthread_mutex_lock(&cs->mu);
	while (!cs->stop) {
		now = bf_mono();
		for (c = cs->head; c != NULL; c = c->next) {
			if (c->closing)
				continue;
			if ((c->state == API_CONN_HEADERS &&
			    now - c->since > BF_HTTP_HEADER_DEADLINE_S) ||
			    (c->state == API_CONN_BODY && now - c->since > BF_HTTP_BODY_DEADLINE_S)) {
				conn_close_locked(c);
				cs->expired++;
			}
		}
		conn_trim_locked(cs, now);
		/* The ring is in eviction order, about deadline order. Closes are
		 * paced: a flood evicted all at once must not come back all at
		 * once (each close is a reconnect of a flooder). */
		for (paced = 0; cs->pit_n > 0 && cs->pit[cs->pit_head].until <= now &&
		    paced < BF_CONN_TARPIT_PACE; paced++) {
			close(cs->pit[cs->pit_head].fd);
			cs->pit_head = (cs->pit_head + 1) % BF_MAX_CONN_TARPIT;
			cs->pit_n--;
		}
		bf_abstime(CLOCK_REALTIME, 250, &ts);
		pthread_cond_timedwait(&cs->cv, &cs->mu, &ts);
	}
	pthread_mutex_unlock(&cs->mu);
	return NULL;
}

int
api_conns_new(struct api_conns **out)
{
	struct api_conns *cs;
	int r;

	*out = NULL;
	if ((cs = calloc(1, sizeof(*cs))) == NULL)
		return BF_ERR_ALLOC;
	pthread_mutex_init(&cs->mu, NULL);
	pthread_cond_init(&cs->cv, NULL);
	if (pthread_create(&cs->reaper, NULL, conn_reaper, cs) != 0) {
		r = BF_ERR_SYS;
		goto out;
	}
	cs->reaper_started = 1;
	*out = cs;
	cs = NULL;
	r = 0;
out:
	api_conns_free(cs);
	return r;
}

void
api_conns_free(struct api_conns *cs)
{
	struct api_conn *c, *next;

	if (cs == NULL)
		return;
	if (cs->reaper_started) {
		pthread_mutex_lock(&cs->mu);
		cs->stop = 1;
		pthread_cond_signal(&cs->cv);
		pthread_mutex_unlock(&cs->mu);
		pthread_join(cs->reaper, NULL);
	}
	while (cs->pit_n > 0) {
		close(cs->pit[cs->pit_head].fd);
		cs->pit_head = (cs->pit_head + 1) % BF_MAX_CONN_TARPIT;
		cs->pit_n--;
	}
	/* MHD_stop_daemon notified every close; nothing should be left */
	for (c = cs->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	pthread_cond_destroy(&cs->cv);
	pthread_mutex_destroy(&cs->mu);
	free(cs);
}

void
api_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
    enum MHD_ConnectionNotificationCode toe)
{
	struct api *a = cls;
	struct api_conns *cs = a->conns;
	struct api_conn *c = *socket_context;
	const union MHD_ConnectionInfo *ci;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (c == NULL)
			return;
		pthread_mutex_lock(&cs->mu);
		if (c->prev != NULL)
			c->prev->next = c->next;
		else
			cs->head = c->next;
		if (c->next != NULL)
			c->next->prev = c->prev;
		else
			cs->tail = c->prev;
		cs->n--;
		pthread_mutex_unlock(&cs->mu);
		free(c);
		*socket_context = NULL;
		return;
	}
	if (toe != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	/* Out of memory: the connection goes untracked (MHD's idle timeout
	 * still applies) rather than refused. */
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	c->fd = ci != NULL ? ci->connect_fd : -1;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && ci->client_addr != NULL) {
		if (ci->client_addr->sa_family == AF_INET6)
			memcpy(&c->peer, ci->client_addr, sizeof(struct sockaddr_in6));
		else if (ci->client_addr->sa_family == AF_INET)
			memcpy(&c->peer, ci->client_addr, sizeof(struct sockaddr_in));
	}
	c->state = API_CONN_HEADERS;
	c->since = bf_mono();
	pthread_mutex_lock(&cs->mu);
	conn_make_room_locked(cs, &c->peer, BF_MAX_CONN_SLOW_PER_IP, BF_MAX_CONN_WAIT_PER_IP);
	conn_make_room_locked(cs, NULL, BF_MAX_CONN_SLOW, BF_MAX_CONN_WAIT);
	c->prev = cs->tail;
	if (cs->tail != NULL)
		cs->tail->next = c;
	else
		cs->head = c;
	cs->tail = c;
	cs->n++;
	pthread_mutex_unlock(&cs->mu);
	*socket_context = c;
}

void
api_conn_set_state(struct api *a, struct MHD_Connection *conn, enum api_conn_state st)
{
	const union MHD_ConnectionInfo *ci;
	struct api_conn *c;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci == NULL || (c = ci->socket_context) == NULL)
		return;
	pthread_mutex_lock(&a->conns->mu);
	if (c->state != st) {
		if (st == API_CONN_HEADERS)
			c->answered = 1;	/* back to waiting: its request is done */
		c->state = st;
		c->since = bf_mono();
		c->ready = 0;
	}
	pthread_mutex_unlock(&a->conns->mu);
}

void
api_conns_stats(struct api *a, struct api_conn_stats *out)
{
	struct api_conns *cs = a->conns;
	struct api_conn *c;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&cs->mu);
	out->open = cs->n;
	for (c = cs->head; c != NULL; c = c->next)
		if (!c->closing && c->state == API_CONN_HEADERS)
			out->waiting++;
	out->evicted = cs->evicted;
	out->expired = cs->expired;
	pthread_mutex_unlock(&cs->mu);
}
