/*
 * ssh.c: the SSH transport to lab machines on libssh2 1.10: the session,
 * connecting (TCP, handshake, key authentication), host-key pinning against
 * known_hosts, and the waiting and failing every operation shares
 * (ssh-int.h). Exec is in ssh-exec.c, SFTP upload in ssh-upload.c.
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
#include <unistd.h>

#include <libssh2.h>

#include "err.h"
#include "buf.h"
#include "caps.h"
#include "clock.h"
#include "ssh.h"
#include "ssh-int.h"

#define SSH_DEFAULT_CONNECT_MS	10000
#define SSH_KEEPALIVE_MAX_S	15

void
ssh_dl_set(struct ssh_dl *dl, int total_ms, int idle_ms)
{
	dl->total = total_ms > 0 ? bf_mono_ms() + total_ms : 0;
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
		c->last_rx = bf_mono_ms();
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
void
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

int
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
int
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
int
ssh_wait(struct ssh_conn *c, const struct ssh_dl *dl, const char *what, struct bf_diag *d)
{
	struct pollfd pfd;
	int64_t now, left = 1000;
	int dir, next = 0, rc;

	now = bf_mono_ms();
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
			left = deadline - bf_mono_ms();
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

int
ssh_banner_ready(const struct ssh_target *t, int timeout_ms)
{
	struct ssh_conn *c;
	struct pollfd pfd;
	struct bf_diag d;
	char got[4];
	size_t have = 0;
	ssize_t n;
	int64_t deadline = bf_mono_ms() + timeout_ms, left;
	int ok = 0;

	if (t == NULL || t->host == NULL || (c = calloc(1, sizeof(*c))) == NULL)
		return 0;
	c->fd = -1;
	snprintf(c->where, sizeof(c->where), "%s:%d", t->host, t->port);
	bf_diag_clear(&d);
	if (ssh_tcp_connect(c, t, deadline, &d) != 0)
		goto out;
	while (have < sizeof(got) && (left = deadline - bf_mono_ms()) > 0) {
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if ((n = poll(&pfd, 1, (int)left)) < 0 && errno != EINTR)
			goto out;
		if (n <= 0)
			continue;
		if ((n = read(c->fd, got + have, sizeof(got) - have)) <= 0) {
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			goto out;	/* closed: nobody behind the port yet */
		}
		have += (size_t)n;
	}
	ok = have == sizeof(got) && memcmp(got, "SSH-", 4) == 0;
out:
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	return ok;
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
	{ .hostkey_type = LIBSSH2_HOSTKEY_TYPE_ED25519, .kh_bit = LIBSSH2_KNOWNHOST_KEY_ED25519,
	  .name = "ssh-ed25519", .methods = "ssh-ed25519" },
	{ .hostkey_type = LIBSSH2_HOSTKEY_TYPE_ECDSA_256, .kh_bit = LIBSSH2_KNOWNHOST_KEY_ECDSA_256,
	  .name = "ecdsa-sha2-nistp256", .methods = "ecdsa-sha2-nistp256" },
	{ .hostkey_type = LIBSSH2_HOSTKEY_TYPE_ECDSA_384, .kh_bit = LIBSSH2_KNOWNHOST_KEY_ECDSA_384,
	  .name = "ecdsa-sha2-nistp384", .methods = "ecdsa-sha2-nistp384" },
	{ .hostkey_type = LIBSSH2_HOSTKEY_TYPE_ECDSA_521, .kh_bit = LIBSSH2_KNOWNHOST_KEY_ECDSA_521,
	  .name = "ecdsa-sha2-nistp521", .methods = "ecdsa-sha2-nistp521" },
	{ .hostkey_type = LIBSSH2_HOSTKEY_TYPE_RSA, .kh_bit = LIBSSH2_KNOWNHOST_KEY_SSHRSA,
	  .name = "ssh-rsa", .methods = "rsa-sha2-512,rsa-sha2-256,ssh-rsa" },
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
	c->last_rx = bf_mono_ms();
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
	free(c->pre_cmd);	/* the channel went with the session */
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
void
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

/* Whether a cleanup call that said EAGAIN should be retried. Past its
 * deadline the connection is dead and retries fail fast; the spin cap is a
 * guard in case libssh2 keeps saying EAGAIN anyway (it then leaks). */
int
ssh_cleanup_retry(struct ssh_conn *c, const struct ssh_dl *dl, int *spins)
{
	if (ssh_wait(c, dl, "cleaning up", NULL) == 0)
		return 1;
	return ++*spins < 50;
}
