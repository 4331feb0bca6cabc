/*
 * ssh.c: the SSH transport to lab machines on libssh2 1.10.
 *
 * Everything runs on a non-blocking session. Each libssh2 call that says
 * EAGAIN is retried after ssh_wait(), which polls the socket in the
 * directions libssh2 asks for, sends keepalives, and enforces the
 * operation's deadlines. Bytes from the peer are timestamped in our recv
 * callback, so "idle" means the peer sent nothing at all, keepalive replies
 * included: a quiet command on a live link is never idle, a dead link is.
 *
 * When the transport fails or times out, the socket is shut down at once
 * (ssh_mark_dead). After that every libssh2 call fails fast instead of
 * waiting, so the cleanup paths can never hang on a dead link.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "err.h"
#include "buf.h"
#include "caps.h"
#include "shquote.h"
#include "ssh.h"

#define SSH_DEFAULT_CONNECT_MS	10000
#define SSH_READ_CHUNK		16384
#define SSH_MAX_PATH		4096
#define SSH_CLOSE_MS		2000	/* bound on tidying a channel after an abort */
#define SSH_KEEPALIVE_MAX_S	15

struct ssh_conn {
	LIBSSH2_SESSION *s;
	int fd;
	int alive;
	int64_t last_rx;		/* monotonic ms of the last byte from the peer */
	int keepalive_s;		/* current libssh2 keepalive interval */
	const atomic_int *cancel;	/* set from another thread: stop (ssh_set_cancel) */
	char where[BF_MAX_HOST + 16];	/* "host:port" for messages */
};

/* Deadlines of one operation: total is absolute monotonic ms (0 = none),
 * idle_ms is the longest silence of the peer (0 = none). */
struct ssh_dl {
	int64_t total;
	int idle_ms;
};

static int64_t
ssh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
ssh_dl_set(struct ssh_dl *dl, int total_ms, int idle_ms)
{
	dl->total = total_ms > 0 ? ssh_now_ms() + total_ms : 0;
	dl->idle_ms = idle_ms > 0 ? idle_ms : 0;
}

/* Our socket I/O: timestamps what the peer sends and never raises SIGPIPE. */
static
LIBSSH2_RECV_FUNC(ssh_recv_cb)
{
	struct ssh_conn *c = *abstract;
	ssize_t n;

	n = recv(socket, buffer, length, flags);
	if (n < 0)
		return -errno;
	if (n > 0)
		c->last_rx = ssh_now_ms();
	return n;
}

static
LIBSSH2_SEND_FUNC(ssh_send_cb)
{
	ssize_t n;

	(void)abstract;
	n = send(socket, buffer, length, flags | MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

/* Shut the socket so every later libssh2 call fails at once. */
static void
ssh_mark_dead(struct ssh_conn *c)
{
	if (c->alive && c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
	c->alive = 0;
}

static const char *
ssh_lasterr(struct ssh_conn *c)
{
	char *msg = NULL;
	int len = 0;

	if (c->s == NULL)
		return "no session";
	libssh2_session_last_error(c->s, &msg, &len, 0);
	return msg != NULL && msg[0] != '\0' ? msg : "unknown libssh2 error";
}

static int
ssh_rc_is_socket(int rc)
{
	switch (rc) {
	case LIBSSH2_ERROR_SOCKET_NONE:
	case LIBSSH2_ERROR_BANNER_RECV:
	case LIBSSH2_ERROR_BANNER_SEND:
	case LIBSSH2_ERROR_SOCKET_SEND:
	case LIBSSH2_ERROR_SOCKET_RECV:
	case LIBSSH2_ERROR_SOCKET_DISCONNECT:
	case LIBSSH2_ERROR_SOCKET_TIMEOUT:
	case LIBSSH2_ERROR_BAD_SOCKET:
	case LIBSSH2_ERROR_TIMEOUT:
		return 1;
	default:
		return 0;
	}
}

/* Errors that concern one channel and leave the session usable. */
static int
ssh_rc_is_channel(int rc)
{
	switch (rc) {
	case LIBSSH2_ERROR_CHANNEL_FAILURE:
	case LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED:
	case LIBSSH2_ERROR_CHANNEL_UNKNOWN:
	case LIBSSH2_ERROR_CHANNEL_CLOSED:
	case LIBSSH2_ERROR_CHANNEL_EOF_SENT:
	case LIBSSH2_ERROR_REQUEST_DENIED:
	case LIBSSH2_ERROR_SFTP_PROTOCOL:
		return 1;
	default:
		return 0;
	}
}

/* Turn a libssh2 failure into a BF_ERR_* with a message, marking the
 * connection dead unless only a channel failed. */
static int
ssh_fail(struct ssh_conn *c, int rc, const char *what, struct bf_diag *d)
{
	if (rc == LIBSSH2_ERROR_ALLOC) {
		bf_diag_set(d, NULL, "%s: out of memory while %s", c->where, what);
		return BF_ERR_ALLOC;
	}
	if (ssh_rc_is_socket(rc)) {
		bf_diag_set(d, NULL, "%s: connection lost while %s (%s)", c->where, what,
		    ssh_lasterr(c));
		ssh_mark_dead(c);
		return BF_ERR_LOST;
	}
	bf_diag_set(d, NULL, "%s: SSH error while %s: %s (libssh2 %d)", c->where, what,
	    ssh_lasterr(c), rc);
	if (!ssh_rc_is_channel(rc))
		ssh_mark_dead(c);
	return BF_ERR_SSH;
}

/*
 * Wait until the socket is ready in the directions libssh2 is blocked on,
 * at most until the next keepalive is due. BF_ERR_TIMEOUT (connection
 * marked dead) when a deadline passed; BF_ERR_LOST on a socket error.
 */
static int
ssh_wait(struct ssh_conn *c, const struct ssh_dl *dl, const char *what, struct bf_diag *d)
{
	struct pollfd pfd;
	int64_t now, left = 1000;
	int dir, next = 0, rc;

	now = ssh_now_ms();
	if (c->cancel != NULL && atomic_load(c->cancel)) {
		bf_diag_set(d, NULL, "%s: stopped while %s: this coordinator no longer holds "
		    "the run's lease", c->where, what);
		ssh_mark_dead(c);
		return BF_ERR_LOST;
	}
	if (dl->total != 0 && now >= dl->total) {
		bf_diag_set(d, NULL, "%s: timed out while %s", c->where, what);
		ssh_mark_dead(c);
		return BF_ERR_TIMEOUT;
	}
	if (dl->idle_ms != 0 && now - c->last_rx >= dl->idle_ms) {
		bf_diag_set(d, NULL, "%s: nothing received for %d ms (keepalives included) "
		    "while %s; the link or the machine is down", c->where, dl->idle_ms, what);
		ssh_mark_dead(c);
		return BF_ERR_TIMEOUT;
	}
	if (c->keepalive_s > 0) {
		rc = libssh2_keepalive_send(c->s, &next);
		if (rc != 0 && rc != LIBSSH2_ERROR_EAGAIN && ssh_rc_is_socket(rc))
			return ssh_fail(c, rc, "sending a keepalive", d);
		if (next > 0 && (int64_t)next * 1000 < left)
			left = (int64_t)next * 1000;
	}
	if (dl->total != 0 && dl->total - now < left)
		left = dl->total - now;
	if (dl->idle_ms != 0 && c->last_rx + dl->idle_ms - now < left)
		left = c->last_rx + dl->idle_ms - now;
	if (left < 1)
		left = 1;

	dir = libssh2_session_block_directions(c->s);
	pfd.fd = c->fd;
	pfd.events = 0;
	if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
		pfd.events |= POLLIN;
	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		pfd.events |= POLLOUT;
	if (pfd.events == 0) {
		/* libssh2 said EAGAIN without a direction: wait briefly for
		 * input rather than spin. */
		pfd.events = POLLIN;
		if (left > 10)
			left = 10;
	}
	pfd.revents = 0;
	/* poll, not select: a daemon with many machines may hold an fd over
	 * FD_SETSIZE. */
	if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR) {
		bf_diag_set(d, NULL, "%s: poll: %s", c->where, strerror(errno));
		ssh_mark_dead(c);
		return BF_ERR_LOST;
	}
	return 0;
}

/* ---- connecting ---------------------------------------------------- */

/* Non-blocking TCP connect to one address within the deadline. */
static int
ssh_tcp_one(struct ssh_conn *c, const struct addrinfo *ai, int64_t deadline, int *fdp,
    struct bf_diag *d)
{
	struct pollfd pfd;
	socklen_t sl;
	int fd, r, n, err = 0, one = 1;
	int64_t left;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    ai->ai_protocol);
	if (fd < 0) {
		bf_diag_set(d, NULL, "%s: socket: %s", c->where, strerror(errno));
		r = BF_ERR_SYS;
		goto out;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (errno != EINPROGRESS) {
			err = errno;
			goto failed;
		}
		for (;;) {
			left = deadline - ssh_now_ms();
			if (left <= 0) {
				bf_diag_set(d, NULL, "%s: TCP connect timed out", c->where);
				r = BF_ERR_TIMEOUT;
				goto out;
			}
			pfd.fd = fd;
			pfd.events = POLLOUT;
			pfd.revents = 0;
			n = poll(&pfd, 1, (int)left);
			if (n > 0)
				break;
			if (n < 0 && errno != EINTR) {
				err = errno;
				goto failed;
			}
		}
		sl = sizeof(err);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0)
			err = errno;
		if (err != 0)
			goto failed;
	}
	/* Small request/response packets: do not wait for Nagle. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*fdp = fd;
	fd = -1;
	r = 0;
	goto out;
 failed:
	bf_diag_set(d, NULL, "%s: TCP connect: %s", c->where, strerror(err));
	r = BF_ERR_LOST;
 out:
	if (fd >= 0)
		close(fd);
	return r;
}

static int
ssh_tcp_connect(struct ssh_conn *c, const struct ssh_target *t, int64_t deadline,
    struct bf_diag *d)
{
	struct addrinfo hints, *res = NULL, *ai;
	char port[16];
	int r, g;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%d", t->port);
	if ((g = getaddrinfo(t->host, port, &hints, &res)) != 0) {
		bf_diag_set(d, NULL, "%s: cannot resolve host: %s", c->where, gai_strerror(g));
		r = BF_ERR_LOST;
		goto out;
	}
	r = BF_ERR_LOST;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((r = ssh_tcp_one(c, ai, deadline, &c->fd, d)) == 0 || r == BF_ERR_TIMEOUT)
			break;
	}
 out:
	if (res != NULL)
		freeaddrinfo(res);
	return r;
}

struct ssh_keytype {
	int hostkey_type;	/* LIBSSH2_HOSTKEY_TYPE_* */
	int kh_bit;		/* LIBSSH2_KNOWNHOST_KEY_* */
	const char *name;	/* for messages */
	const char *methods;	/* hostkey method names, in preference order */
};

/* Preference order when known_hosts says nothing: ed25519 first, because
 * libssh2 1.10 would otherwise pick ECDSA and miss an ed25519-only entry. */
static const struct ssh_keytype ssh_keytypes[] = {
	{ LIBSSH2_HOSTKEY_TYPE_ED25519, LIBSSH2_KNOWNHOST_KEY_ED25519, "ssh-ed25519",
	  "ssh-ed25519" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_256, LIBSSH2_KNOWNHOST_KEY_ECDSA_256,
	  "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_384, LIBSSH2_KNOWNHOST_KEY_ECDSA_384,
	  "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp384" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_521, LIBSSH2_KNOWNHOST_KEY_ECDSA_521,
	  "ecdsa-sha2-nistp521", "ecdsa-sha2-nistp521" },
	{ LIBSSH2_HOSTKEY_TYPE_RSA, LIBSSH2_KNOWNHOST_KEY_SSHRSA, "ssh-rsa",
	  "rsa-sha2-512,rsa-sha2-256,ssh-rsa" },
};
#define SSH_NKEYTYPES (sizeof(ssh_keytypes) / sizeof(ssh_keytypes[0]))

static const struct ssh_keytype *
ssh_keytype_by_hostkey(int type)
{
	size_t i;

	for (i = 0; i < SSH_NKEYTYPES; i++)
		if (ssh_keytypes[i].hostkey_type == type)
			return &ssh_keytypes[i];
	return NULL;
}

/* Offer first the key types known_hosts pins for this host, so a host with
 * several keys is checked against the one we hold. */
static int
ssh_hostkey_pref(struct ssh_conn *c, LIBSSH2_KNOWNHOSTS *kh, const struct ssh_target *t,
    struct bf_diag *d)
{
	struct libssh2_knownhost *e = NULL, *prev = NULL;
	char bracket[BF_MAX_HOST + 16];
	int have[SSH_NKEYTYPES] = { 0 };
	struct buf pref;
	const char **algs = NULL;
	const char *m;
	size_t i, mlen;
	int pass, r, j, nalg;

	buf_init(&pref, 1024);
	snprintf(bracket, sizeof(bracket), "[%s]:%d", t->host, t->port);
	while (libssh2_knownhost_get(kh, &e, prev) == 0) {
		prev = e;
		if (e->name == NULL)
			continue;	/* hashed: cannot tell which host */
		if (!(t->port == 22 && strcmp(e->name, t->host) == 0) &&
		    strcmp(e->name, bracket) != 0)
			continue;
		for (i = 0; i < SSH_NKEYTYPES; i++)
			if ((e->typemask & LIBSSH2_KNOWNHOST_KEY_MASK) == ssh_keytypes[i].kh_bit)
				have[i] = 1;
	}
	if ((nalg = libssh2_session_supported_algs(c->s, LIBSSH2_METHOD_HOSTKEY, &algs)) <= 0) {
		bf_diag_set(d, NULL, "%s: libssh2 lists no host key methods", c->where);
		r = BF_ERR_SSH;
		goto out;
	}
	/* Only names this libssh2 supports: 1.10's method_pref drops the
	 * others with an overlapping memcpy (seen under ASan). */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < SSH_NKEYTYPES; i++) {
			if (have[i] != (pass == 0))
				continue;
			for (m = ssh_keytypes[i].methods; *m != '\0'; m += mlen + (m[mlen] == ',')) {
				mlen = strcspn(m, ",");
				for (j = 0; j < nalg; j++)
					if (strlen(algs[j]) == mlen && strncmp(algs[j], m, mlen) == 0)
						break;
				if (j == nalg)
					continue;
				if ((r = buf_printf(&pref, "%s%.*s", pref.len ? "," : "", (int)mlen,
				    m)) != 0)
					goto out;
			}
		}
	}
	if (pref.len == 0) {
		bf_diag_set(d, NULL, "%s: libssh2 supports none of our host key methods",
		    c->where);
		r = BF_ERR_SSH;
		goto out;
	}
	if (libssh2_session_method_pref(c->s, LIBSSH2_METHOD_HOSTKEY, pref.data) != 0) {
		bf_diag_set(d, NULL, "%s: libssh2 accepts none of the host key methods %s",
		    c->where, pref.data);
		r = BF_ERR_SSH;
		goto out;
	}
	r = 0;
 out:
	if (algs != NULL)
		libssh2_free(c->s, algs);
	buf_free(&pref);
	return r;
}

/* "SHA256:<unpadded base64>", as ssh-keygen -l prints it. */
static void
ssh_fingerprint(struct ssh_conn *c, char *out, size_t outsz)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *h;
	size_t i, o = 0;
	uint32_t v;

	h = (const unsigned char *)libssh2_hostkey_hash(c->s, LIBSSH2_HOSTKEY_HASH_SHA256);
	if (h == NULL || outsz < 7 + 44) {
		snprintf(out, outsz, "SHA256:?");
		return;
	}
	memcpy(out, "SHA256:", 7);
	o = 7;
	for (i = 0; i < 32; i += 3) {
		v = (uint32_t)h[i] << 16;
		if (i + 1 < 32)
			v |= (uint32_t)h[i + 1] << 8;
		if (i + 2 < 32)
			v |= h[i + 2];
		out[o++] = b64[(v >> 18) & 63];
		out[o++] = b64[(v >> 12) & 63];
		if (i + 1 < 32)
			out[o++] = b64[(v >> 6) & 63];
		if (i + 2 < 32)
			out[o++] = b64[v & 63];
	}
	out[o] = '\0';
}

static int
ssh_check_hostkey(struct ssh_conn *c, LIBSSH2_KNOWNHOSTS *kh, const struct ssh_target *t,
    struct bf_diag *d)
{
	const struct ssh_keytype *kt;
	struct libssh2_knownhost *e = NULL;
	const char *key;
	char fp[64];
	size_t len = 0;
	int type = 0, rc;

	key = libssh2_session_hostkey(c->s, &len, &type);
	if (key == NULL) {
		bf_diag_set(d, NULL, "%s: the server sent no host key", c->where);
		return BF_ERR_HOSTKEY;
	}
	ssh_fingerprint(c, fp, sizeof(fp));
	if ((kt = ssh_keytype_by_hostkey(type)) == NULL) {
		bf_diag_set(d, NULL, "%s: host key type %d (%s) is not supported; refusing",
		    c->where, type, fp);
		return BF_ERR_HOSTKEY;
	}
	rc = libssh2_knownhost_checkp(kh, t->host, t->port, key, len,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | kt->kh_bit, &e);
	switch (rc) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		return 0;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		bf_diag_set(d, NULL, "host key for %s does not match known_hosts %s "
		    "(possible man-in-the-middle); refusing (server sent %s %s)", c->where,
		    t->known_hosts, kt->name, fp);
		return BF_ERR_HOSTKEY;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		bf_diag_set(d, NULL, "host key for %s (%s %s) is not in known_hosts %s; refusing",
		    c->where, kt->name, fp, t->known_hosts);
		return BF_ERR_HOSTKEY;
	default:
		bf_diag_set(d, NULL, "host key for %s (%s %s) could not be checked against "
		    "known_hosts %s; refusing", c->where, kt->name, fp, t->known_hosts);
		return BF_ERR_HOSTKEY;
	}
}

int
ssh_global_init(void)
{
	return libssh2_init(0) == 0 ? 0 : BF_ERR_SSH;
}

void
ssh_global_cleanup(void)
{
	libssh2_exit();
}

int
ssh_connect(const struct ssh_target *t, struct ssh_conn **out, struct bf_diag *d)
{
	struct ssh_conn *c = NULL;
	LIBSSH2_KNOWNHOSTS *kh = NULL;
	struct ssh_dl dl;
	char pub[SSH_MAX_PATH + 8];
	const char *pubp = NULL;
	int r, rc, n;

	*out = NULL;
	if (t == NULL || t->host == NULL || t->host[0] == '\0' ||
	    strlen(t->host) > BF_MAX_HOST) {
		bf_diag_set(d, "host", "host name is empty or over %d bytes", BF_MAX_HOST);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (t->port < 1 || t->port > 65535) {
		bf_diag_set(d, "port", "%s: port %d is not in 1..65535", t->host, t->port);
		r = BF_ERR_RANGE;
		goto out;
	}
	if (t->user == NULL || t->user[0] == '\0' || t->key_path == NULL ||
	    t->key_path[0] == '\0' || t->known_hosts == NULL || t->known_hosts[0] == '\0') {
		bf_diag_set(d, NULL, "%s:%d: user, key_path and known_hosts are required",
		    t->host, t->port);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (strlen(t->key_path) > SSH_MAX_PATH) {
		bf_diag_set(d, "key_path", "%s:%d: key path over %d bytes", t->host, t->port,
		    SSH_MAX_PATH);
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	c->fd = -1;
	snprintf(c->where, sizeof(c->where), "%s:%d", t->host, t->port);
	ssh_dl_set(&dl, t->connect_timeout_ms > 0 ? t->connect_timeout_ms :
	    SSH_DEFAULT_CONNECT_MS, 0);

	if (access(t->known_hosts, R_OK) != 0) {
		bf_diag_set(d, NULL, "%s: cannot read known_hosts %s: %s; refusing", c->where,
		    t->known_hosts, strerror(errno));
		r = BF_ERR_HOSTKEY;
		goto out;
	}
	if (access(t->key_path, R_OK) != 0) {
		/* no path: this text becomes last_error, which every viewer reads */
		bf_diag_set(d, NULL, "%s: cannot read the machine's private key: %s", c->where,
		    strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	snprintf(pub, sizeof(pub), "%s.pub", t->key_path);
	if (access(pub, R_OK) == 0)
		pubp = pub;

	if ((r = ssh_tcp_connect(c, t, dl.total, d)) != 0)
		goto out;
	c->alive = 1;
	c->last_rx = ssh_now_ms();
	if ((c->s = libssh2_session_init_ex(NULL, NULL, NULL, c)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	libssh2_session_callback_set(c->s, LIBSSH2_CALLBACK_RECV, (void *)ssh_recv_cb);
	libssh2_session_callback_set(c->s, LIBSSH2_CALLBACK_SEND, (void *)ssh_send_cb);
	libssh2_session_set_blocking(c->s, 0);

	if ((kh = libssh2_knownhost_init(c->s)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((n = libssh2_knownhost_readfile(kh, t->known_hosts,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH)) < 0) {
		bf_diag_set(d, NULL, "%s: known_hosts %s could not be parsed (%s); refusing",
		    c->where, t->known_hosts, ssh_lasterr(c));
		r = BF_ERR_HOSTKEY;
		goto out;
	}
	if ((r = ssh_hostkey_pref(c, kh, t, d)) != 0)
		goto out;

	while ((rc = libssh2_session_handshake(c->s, c->fd)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "in the SSH handshake", d)) != 0)
			goto out;
	if (rc != 0) {
		r = ssh_fail(c, rc, "in the SSH handshake", d);
		goto out;
	}
	if ((r = ssh_check_hostkey(c, kh, t, d)) != 0)
		goto out;

	while ((rc = libssh2_userauth_publickey_fromfile(c->s, t->user, pubp, t->key_path,
	    NULL)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "authenticating", d)) != 0)
			goto out;
	if (rc != 0) {
		if (ssh_rc_is_socket(rc)) {
			r = ssh_fail(c, rc, "authenticating", d);
			goto out;
		}
		bf_diag_set(d, NULL, "%s: public key authentication as %s refused (%s)",
		    c->where, t->user, ssh_lasterr(c));
		r = BF_ERR_AUTH;
		goto out;
	}
	*out = c;
	c = NULL;
	r = 0;
 out:
	if (kh != NULL)
		libssh2_knownhost_free(kh);
	ssh_close(c);
	return r;
}

void
ssh_close(struct ssh_conn *c)
{
	if (c == NULL)
		return;
	if (c->s != NULL) {
		/* One non-blocking try: a goodbye is a courtesy, not worth a wait. */
		if (c->alive)
			libssh2_session_disconnect(c->s, "bye");
		ssh_mark_dead(c);
		libssh2_session_free(c->s);
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

void
ssh_set_cancel(struct ssh_conn *c, const atomic_int *flag)
{
	if (c != NULL)
		c->cancel = flag;
}

int
ssh_alive(const struct ssh_conn *c)
{
	return c != NULL && c->alive;
}

/* Keepalives with a reply every third of the idle limit, so a live but
 * quiet peer is never idle (libssh2 turns 1 s into 2 s). */
static void
ssh_keepalive(struct ssh_conn *c, int idle_ms)
{
	int s = idle_ms > 0 ? idle_ms / 3000 : SSH_KEEPALIVE_MAX_S;

	if (s < 1)
		s = 1;
	if (s > SSH_KEEPALIVE_MAX_S)
		s = SSH_KEEPALIVE_MAX_S;
	if (s != c->keepalive_s) {
		libssh2_keepalive_config(c->s, 1, (unsigned)s);
		c->keepalive_s = s;
	}
}

/* ---- exec ------------------------------------------------------------ */

/* Where exec output goes: raw bytes per stream, then end of stream. */
struct ssh_sink {
	int (*data)(void *arg, int stream, const char *p, size_t n);
	int (*eof)(void *arg, int stream);
	void *arg;
};

/* Line splitting with a cut: a longer line is delivered cut, flagged
 * truncated, and its rest dropped up to the newline. stdout carries the
 * agent's JSON lines, whose log events may hold a whole escaped log line,
 * so it is cut at BF_MAX_AGENT_LINE; stderr at BF_MAX_LOG_LINE. */
struct ssh_lines {
	ssh_line_cb cb;
	void *arg;
	struct {
		char buf[BF_MAX_AGENT_LINE];
		size_t len;
		int dropping;
	} st[2];
};

static const size_t ssh_line_cap[2] = { BF_MAX_AGENT_LINE, BF_MAX_LOG_LINE };

static int
ssh_lines_data(void *arg, int stream, const char *p, size_t n)
{
	struct ssh_lines *l = arg;
	const char *nl;
	size_t seg, room;
	int r, i = stream == SSH_STDERR ? 1 : 0;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		seg = nl != NULL ? (size_t)(nl - p) : n;
		if (l->st[i].dropping) {
			if (nl != NULL)
				l->st[i].dropping = 0;
		} else {
			room = ssh_line_cap[i] - l->st[i].len;
			if (seg <= room) {
				memcpy(l->st[i].buf + l->st[i].len, p, seg);
				l->st[i].len += seg;
				if (nl != NULL) {
					r = l->cb(l->arg, stream, l->st[i].buf, l->st[i].len, 0);
					l->st[i].len = 0;
					if (r != 0)
						return r;
				}
			} else {
				memcpy(l->st[i].buf + l->st[i].len, p, room);
				l->st[i].dropping = nl == NULL;
				r = l->cb(l->arg, stream, l->st[i].buf, ssh_line_cap[i], 1);
				l->st[i].len = 0;
				if (r != 0)
					return r;
			}
		}
		if (nl == NULL)
			break;
		p += seg + 1;
		n -= seg + 1;
	}
	return 0;
}

static int
ssh_lines_eof(void *arg, int stream)
{
	struct ssh_lines *l = arg;
	int i = stream == SSH_STDERR ? 1 : 0, r = 0;

	if (l->st[i].len > 0 && !l->st[i].dropping)
		r = l->cb(l->arg, stream, l->st[i].buf, l->st[i].len, 0);
	l->st[i].len = 0;
	l->st[i].dropping = 0;
	return r;
}

/* Whether a cleanup call that said EAGAIN should be retried. Past its
 * deadline the connection is dead and retries fail fast; the spin cap is a
 * guard in case libssh2 keeps saying EAGAIN anyway (it then leaks). */
static int
ssh_cleanup_retry(struct ssh_conn *c, const struct ssh_dl *dl, int *spins)
{
	if (ssh_wait(c, dl, "cleaning up", NULL) == 0)
		return 1;
	return ++*spins < 50;
}

/* Free a channel; bounded, and fast once the connection is dead. */
static void
ssh_channel_done(struct ssh_conn *c, LIBSSH2_CHANNEL *ch)
{
	struct ssh_dl dl;
	int rc, spins = 0;

	if (ch == NULL)
		return;
	ssh_dl_set(&dl, SSH_CLOSE_MS, 0);
	while ((rc = libssh2_channel_free(ch)) == LIBSSH2_ERROR_EAGAIN)
		if (!ssh_cleanup_retry(c, &dl, &spins))
			break;
}

static int
ssh_exec_sink(struct ssh_conn *c, const char *cmd, const void *stdin_data, size_t stdin_len,
    const struct ssh_sink *sink, int idle_timeout_ms, int total_timeout_ms, int *exit_status,
    struct bf_diag *d)
{
	static const int streams[2] = { SSH_STDOUT, SSH_STDERR };
	LIBSSH2_CHANNEL *ch = NULL;
	struct ssh_dl dl;
	char rbuf[SSH_READ_CHUNK];
	char *sig = NULL;
	size_t off = 0, siglen = 0;
	ssize_t n;
	int r, rc, i, progress, eof_sent = 0, done[2] = { 0, 0 };

	if (exit_status != NULL)
		*exit_status = -1;
	if (c == NULL || cmd == NULL) {
		bf_diag_set(d, NULL, "ssh_exec: no connection or no command");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (!c->alive) {
		bf_diag_set(d, NULL, "%s: connection already lost", c->where);
		r = BF_ERR_LOST;
		goto out;
	}
	if (stdin_data == NULL)
		stdin_len = 0;
	ssh_dl_set(&dl, total_timeout_ms, idle_timeout_ms);
	ssh_keepalive(c, idle_timeout_ms);
	/* The idle clock starts now, not at the last exec. */
	c->last_rx = ssh_now_ms();

	while ((ch = libssh2_channel_open_session(c->s)) == NULL) {
		rc = libssh2_session_last_errno(c->s);
		if (rc != LIBSSH2_ERROR_EAGAIN) {
			r = ssh_fail(c, rc, "opening a channel", d);
			goto out;
		}
		if ((r = ssh_wait(c, &dl, "opening a channel", d)) != 0)
			goto out;
	}
	while ((rc = libssh2_channel_exec(ch, cmd)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "starting the command", d)) != 0)
			goto out;
	if (rc != 0) {
		r = ssh_fail(c, rc, "starting the command", d);
		goto out;
	}

	/* Write stdin and read both streams in one loop, so neither side's
	 * window can fill and stall the other. Wait only when nothing moved. */
	while (!done[0] || !done[1]) {
		progress = 0;
		if (dl.total != 0 && ssh_now_ms() >= dl.total) {
			bf_diag_set(d, NULL, "%s: command ran over its %d ms limit", c->where,
			    total_timeout_ms);
			ssh_mark_dead(c);
			r = BF_ERR_TIMEOUT;
			goto out;
		}
		if (!eof_sent && off < stdin_len) {
			n = libssh2_channel_write(ch, (const char *)stdin_data + off, stdin_len - off);
			if (n > 0) {
				off += (size_t)n;
				progress = 1;
			} else if (n != LIBSSH2_ERROR_EAGAIN && n != 0) {
				if (ssh_rc_is_socket((int)n)) {
					r = ssh_fail(c, (int)n, "writing stdin", d);
					goto out;
				}
				/* The command stopped reading: drop the rest. */
				off = stdin_len;
				eof_sent = 1;
			}
		}
		if (!eof_sent && off == stdin_len) {
			rc = libssh2_channel_send_eof(ch);
			if (rc == 0) {
				eof_sent = 1;
				progress = 1;
			} else if (rc != LIBSSH2_ERROR_EAGAIN) {
				if (ssh_rc_is_socket(rc)) {
					r = ssh_fail(c, rc, "sending EOF", d);
					goto out;
				}
				eof_sent = 1;
			}
		}
		for (i = 0; i < 2; i++) {
			if (done[i])
				continue;
			n = libssh2_channel_read_ex(ch, i == 0 ? 0 : SSH_EXTENDED_DATA_STDERR, rbuf,
			    sizeof(rbuf));
			if (n > 0) {
				progress = 1;
				if ((r = sink->data(sink->arg, streams[i], rbuf, (size_t)n)) != 0)
					goto aborted;
			} else if (n == 0) {
				if (libssh2_channel_eof(ch)) {
					done[i] = 1;
					progress = 1;
					if ((r = sink->eof(sink->arg, streams[i])) != 0)
						goto aborted;
				}
			} else if (n != LIBSSH2_ERROR_EAGAIN) {
				r = ssh_fail(c, (int)n, "reading output", d);
				goto out;
			}
		}
		if (!progress && (r = ssh_wait(c, &dl, "waiting for the command", d)) != 0)
			goto out;
	}
	/* The exit status comes before the peer's CLOSE, which can come after
	 * EOF when the command closed its output early. */
	while ((rc = libssh2_channel_wait_closed(ch)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "waiting for the exit status", d)) != 0)
			goto out;
	if (rc != 0) {
		r = ssh_fail(c, rc, "waiting for the exit status", d);
		goto out;
	}
	if (libssh2_channel_get_exit_signal(ch, &sig, &siglen, NULL, NULL, NULL, NULL) == 0 &&
	    sig != NULL && siglen > 0) {
		bf_diag_set(d, NULL, "%s: command killed by signal %.*s", c->where,
		    (int)(siglen > 32 ? 32 : siglen), sig);
		if (exit_status != NULL)
			*exit_status = -1;
	} else if (exit_status != NULL) {
		*exit_status = libssh2_channel_get_exit_status(ch);
	}
	r = 0;
	goto out;
 aborted:
	/* The sink gave up: leave the channel, keep the session if we can. */
	if (d != NULL && d->msg[0] == '\0')
		bf_diag_set(d, NULL, "%s: output handler stopped the command: %s", c->where,
		    bf_err_str(r));
 out:
	if (sig != NULL)
		libssh2_free(c->s, sig);
	if (ch != NULL)
		ssh_channel_done(c, ch);
	return r;
}

int
ssh_exec(struct ssh_conn *c, const char *cmd, const void *stdin_data, size_t stdin_len,
    ssh_line_cb cb, void *arg, int idle_timeout_ms, int total_timeout_ms,
    int *exit_status, struct bf_diag *d)
{
	struct ssh_lines *l = NULL;
	struct ssh_sink sink;
	int r;

	if (cb == NULL) {
		bf_diag_set(d, NULL, "ssh_exec: no line callback");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	l->cb = cb;
	l->arg = arg;
	sink.data = ssh_lines_data;
	sink.eof = ssh_lines_eof;
	sink.arg = l;
	r = ssh_exec_sink(c, cmd, stdin_data, stdin_len, &sink, idle_timeout_ms,
	    total_timeout_ms, exit_status, d);
 out:
	free(l);
	return r;
}

struct ssh_capture {
	struct buf *out, *err;
	int over;
};

/* Past a cap the output is drained and dropped, so the session survives;
 * the exec then fails with BF_ERR_TOOBIG. */
static int
ssh_capture_data(void *arg, int stream, const char *p, size_t n)
{
	struct ssh_capture *cap = arg;
	struct buf *b = stream == SSH_STDOUT ? cap->out : cap->err;
	int r;

	if (b == NULL)
		return 0;
	if ((r = buf_append(b, p, n)) == BF_ERR_TOOBIG)
		cap->over |= stream;
	else if (r != 0)
		return r;
	return 0;
}

static size_t
ssh_buf_max(const struct buf *b)
{
	return b->max != 0 ? b->max : BF_MAX_AGENT_OUTPUT;
}

static int
ssh_capture_eof(void *arg, int stream)
{
	return 0;
}

int
ssh_exec_capture(struct ssh_conn *c, const char *cmd, struct buf *out, struct buf *err,
    int timeout_ms, int *exit_status, struct bf_diag *d)
{
	struct ssh_capture cap;
	struct ssh_sink sink;
	int r;

	cap.out = out;
	cap.err = err;
	cap.over = 0;
	sink.data = ssh_capture_data;
	sink.eof = ssh_capture_eof;
	sink.arg = &cap;
	if ((r = ssh_exec_sink(c, cmd, NULL, 0, &sink, timeout_ms, timeout_ms, exit_status,
	    d)) != 0)
		goto out;
	if (cap.over != 0) {
		bf_diag_set(d, NULL, "%s: %s of the command is over its cap of %zu bytes",
		    c->where, (cap.over & SSH_STDOUT) ? "stdout" : "stderr",
		    ssh_buf_max((cap.over & SSH_STDOUT) ? out : err));
		r = BF_ERR_TOOBIG;
		goto out;
	}
	r = 0;
 out:
	return r;
}

/* ---- upload ------------------------------------------------------------ */

static int
ssh_sftp_fail(struct ssh_conn *c, LIBSSH2_SFTP *sftp, int rc, const char *what,
    const char *path, struct bf_diag *d)
{
	unsigned long fx;

	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL || sftp == NULL)
		return ssh_fail(c, rc, what, d);
	fx = libssh2_sftp_last_error(sftp);
	bf_diag_set(d, NULL, "%s: SFTP %s %s failed: %s (status %lu)", c->where, what, path,
	    fx == LIBSSH2_FX_NO_SUCH_FILE ? "no such file or directory" :
	    fx == LIBSSH2_FX_PERMISSION_DENIED ? "permission denied" :
	    fx == LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM ? "no space left" :
	    fx == LIBSSH2_FX_NO_SUCH_PATH ? "no such path" : "failure", fx);
	return fx == LIBSSH2_FX_PERMISSION_DENIED ? BF_ERR_IO : BF_ERR_SSH;
}

/* Make the parent of path (one level); an existing directory is fine. */
static int
ssh_sftp_parent(struct ssh_conn *c, LIBSSH2_SFTP *sftp, const char *path,
    const struct ssh_dl *dl, struct bf_diag *d)
{
	LIBSSH2_SFTP_ATTRIBUTES st;
	const char *slash = strrchr(path, '/');
	char dir[SSH_MAX_PATH + 1];
	size_t len;
	int rc;

	if (slash == NULL || slash == path)
		return 0;
	len = (size_t)(slash - path);
	memcpy(dir, path, len);
	dir[len] = '\0';
	while ((rc = libssh2_sftp_mkdir_ex(sftp, dir, (unsigned)len, 0755)) ==
	    LIBSSH2_ERROR_EAGAIN)
		if ((rc = ssh_wait(c, dl, "creating the directory", d)) != 0)
			return rc;
	if (rc == 0)
		return 0;
	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return ssh_fail(c, rc, "creating the directory", d);
	/* OpenSSH answers FAILURE, not FILE_ALREADY_EXISTS, for an existing
	 * directory: ask what is there. */
	while ((rc = libssh2_sftp_stat_ex(sftp, dir, (unsigned)len, LIBSSH2_SFTP_STAT, &st)) ==
	    LIBSSH2_ERROR_EAGAIN)
		if ((rc = ssh_wait(c, dl, "creating the directory", d)) != 0)
			return rc;
	if (rc == 0 && (st.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) &&
	    LIBSSH2_SFTP_S_ISDIR(st.permissions))
		return 0;
	if (rc == 0) {
		bf_diag_set(d, NULL, "%s: %s exists and is not a directory", c->where, dir);
		return BF_ERR_IO;
	}
	return ssh_sftp_fail(c, sftp, rc, "mkdir", dir, d);
}

/* OpenSSH's SFTP v3 rename refuses to replace a file; mv -f does it
 * atomically (rename(2)) on the remote side. */
static int
ssh_rename_fallback(struct ssh_conn *c, const char *from, const char *to, int timeout_ms,
    struct bf_diag *d)
{
	struct buf cmd, err;
	int r, status = -1;

	buf_init(&cmd, 3 * SSH_MAX_PATH);
	buf_init(&err, BF_MAX_LOG_LINE);
	if ((r = buf_puts(&cmd, "mv -f -- ")) != 0 || (r = shquote(&cmd, from)) != 0 ||
	    (r = buf_puts(&cmd, " ")) != 0 || (r = shquote(&cmd, to)) != 0)
		goto out;
	if ((r = ssh_exec_capture(c, cmd.data, NULL, &err, timeout_ms, &status, d)) != 0 &&
	    r != BF_ERR_TOOBIG)
		goto out;
	if (status != 0) {
		bf_diag_set(d, NULL, "%s: renaming %s to %s failed: %.200s", c->where, from, to,
		    err.data != NULL ? err.data : "");
		r = BF_ERR_IO;
		goto out;
	}
	r = 0;
 out:
	buf_free(&cmd);
	buf_free(&err);
	return r;
}

int
ssh_upload(struct ssh_conn *c, const char *local_path, const char *remote_path, int mode,
    int timeout_ms, struct bf_diag *d)
{
	LIBSSH2_SFTP *sftp = NULL;
	LIBSSH2_SFTP_HANDLE *h = NULL;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	struct ssh_dl dl;
	struct stat sb;
	char tmp[SSH_MAX_PATH + 8], chunk[32768];
	size_t len = 0, off = 0;
	ssize_t n;
	int fd = -1, r, rc, spins = 0;

	if (c == NULL || local_path == NULL || remote_path == NULL || remote_path[0] == '\0') {
		bf_diag_set(d, NULL, "ssh_upload: no connection or no path");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (!c->alive) {
		bf_diag_set(d, NULL, "%s: connection already lost", c->where);
		r = BF_ERR_LOST;
		goto out;
	}
	if (strlen(remote_path) > SSH_MAX_PATH) {
		bf_diag_set(d, NULL, "%s: remote path over %d bytes", c->where, SSH_MAX_PATH);
		r = BF_ERR_TOOBIG;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", remote_path);
	if ((fd = open(local_path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &sb) != 0) {
		bf_diag_set(d, NULL, "%s: cannot read %s: %s", c->where, local_path,
		    strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		bf_diag_set(d, NULL, "%s: %s is not a regular file", c->where, local_path);
		r = BF_ERR_IO;
		goto out;
	}
	ssh_dl_set(&dl, timeout_ms, timeout_ms);
	ssh_keepalive(c, timeout_ms);
	c->last_rx = ssh_now_ms();

	while ((sftp = libssh2_sftp_init(c->s)) == NULL) {
		rc = libssh2_session_last_errno(c->s);
		if (rc != LIBSSH2_ERROR_EAGAIN) {
			r = ssh_fail(c, rc, "starting SFTP", d);
			goto out;
		}
		if ((r = ssh_wait(c, &dl, "starting SFTP", d)) != 0)
			goto out;
	}
	if ((r = ssh_sftp_parent(c, sftp, remote_path, &dl, d)) != 0)
		goto out;
	while ((h = libssh2_sftp_open_ex(sftp, tmp, (unsigned)strlen(tmp),
	    LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC,
	    LIBSSH2_SFTP_S_IRUSR | LIBSSH2_SFTP_S_IWUSR, LIBSSH2_SFTP_OPENFILE)) == NULL) {
		rc = libssh2_session_last_errno(c->s);
		if (rc != LIBSSH2_ERROR_EAGAIN) {
			r = ssh_sftp_fail(c, sftp, rc, "open", tmp, d);
			goto out;
		}
		if ((r = ssh_wait(c, &dl, "opening the remote file", d)) != 0)
			goto out;
	}
	for (;;) {
		if (off == len) {
			n = read(fd, chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				bf_diag_set(d, NULL, "%s: reading %s: %s", c->where, local_path,
				    strerror(errno));
				r = BF_ERR_IO;
				goto out;
			}
			if (n == 0)
				break;
			len = (size_t)n;
			off = 0;
		}
		/* On EAGAIN libssh2 wants the same buffer again. */
		n = libssh2_sftp_write(h, chunk + off, len - off);
		if (n == LIBSSH2_ERROR_EAGAIN) {
			if ((r = ssh_wait(c, &dl, "writing the remote file", d)) != 0)
				goto out;
			continue;
		}
		if (n < 0) {
			r = ssh_sftp_fail(c, sftp, (int)n, "write", tmp, d);
			goto out;
		}
		off += (size_t)n;
	}
	while ((rc = libssh2_sftp_fsync(h)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "syncing the remote file", d)) != 0)
			goto out;
	if (rc != 0 && !(rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    libssh2_sftp_last_error(sftp) == LIBSSH2_FX_OP_UNSUPPORTED)) {
		r = ssh_sftp_fail(c, sftp, rc, "fsync", tmp, d);
		goto out;
	}
	memset(&attrs, 0, sizeof(attrs));
	attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
	attrs.permissions = (unsigned long)(mode & 07777);
	while ((rc = libssh2_sftp_fsetstat(h, &attrs)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "setting the mode", d)) != 0)
			goto out;
	if (rc != 0) {
		r = ssh_sftp_fail(c, sftp, rc, "chmod", tmp, d);
		goto out;
	}
	while ((rc = libssh2_sftp_close_handle(h)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "closing the remote file", d)) != 0)
			goto out;
	h = NULL;
	if (rc != 0) {
		r = ssh_sftp_fail(c, sftp, rc, "close", tmp, d);
		goto out;
	}
	while ((rc = libssh2_sftp_rename_ex(sftp, tmp, (unsigned)strlen(tmp), remote_path,
	    (unsigned)strlen(remote_path), LIBSSH2_SFTP_RENAME_OVERWRITE |
	    LIBSSH2_SFTP_RENAME_ATOMIC | LIBSSH2_SFTP_RENAME_NATIVE)) == LIBSSH2_ERROR_EAGAIN)
		if ((r = ssh_wait(c, &dl, "renaming the remote file", d)) != 0)
			goto out;
	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    (libssh2_sftp_last_error(sftp) == LIBSSH2_FX_FAILURE ||
	    libssh2_sftp_last_error(sftp) == LIBSSH2_FX_FILE_ALREADY_EXISTS)) {
		r = ssh_rename_fallback(c, tmp, remote_path, timeout_ms, d);
		goto out;
	}
	if (rc != 0) {
		r = ssh_sftp_fail(c, sftp, rc, "rename", tmp, d);
		goto out;
	}
	r = 0;
 out:
	if (h != NULL) {
		ssh_dl_set(&dl, SSH_CLOSE_MS, 0);
		while (libssh2_sftp_close_handle(h) == LIBSSH2_ERROR_EAGAIN)
			if (!ssh_cleanup_retry(c, &dl, &spins))
				break;
	}
	if (sftp != NULL) {
		ssh_dl_set(&dl, SSH_CLOSE_MS, 0);
		spins = 0;
		while (libssh2_sftp_shutdown(sftp) == LIBSSH2_ERROR_EAGAIN)
			if (!ssh_cleanup_retry(c, &dl, &spins))
				break;
	}
	if (fd >= 0)
		close(fd);
	return r;
}
