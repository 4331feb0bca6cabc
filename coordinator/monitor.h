/*
 * monitor.h: privilege separation of benchfleetd, after OpenSSH's sshd and
 * its network child. The privileged process (the monitor: scheduler,
 * runner, SSH, boot, the lab key) forks and execs an API child, which opens
 * its own store connection, drops to --api-user and serves HTTP. The two
 * share the store (and, on PostgreSQL, its notifications); what the store
 * cannot carry goes over two socketpairs:
 *   ctl  child -> monitor requests, one at a time, each answered by a reply
 *   ev   monitor -> child: the events the monitor publishes (events.h)
 * A frame is a u32 length (big-endian) of what follows, a u8 type and the
 * payload. Each direction admits only its own types, each with a strict
 * payload parser (monitor_msg_parse); a malformed or unknown request, or a
 * request out of order, is logged and the child killed and started again.
 *
 * monitor.c is the privileged side, monitor-child.c the child's, and
 * monitor-msg.c the wire format both use.
 */
#ifndef BF_MONITOR_H
#define BF_MONITOR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "caps.h"
#include "err.h"

struct events;

enum monitor_type {
	MONITOR_HELLO = 1,	/* child: (empty) first, once; answered with the lab key */
	MONITOR_READY = 2,	/* child: u16 port it listens on; second, once */
	MONITOR_KICK = 3,	/* child: (empty) new work: a job, a run */
	MONITOR_PROBE = 4,	/* child: a machine name: fingerprint it again */
	MONITOR_SIGN = 5,	/* child: bytes to sign with the lab key */
	MONITOR_KEY = 6,	/* child: an absolute path: can the monitor read it? */
	MONITOR_KICK_MACHINES = 7,	/* child: (empty) the machine list changed */
	MONITOR_REPLY = 64,	/* monitor: i32 code (BF_ERR_*), the answer's bytes */
	MONITOR_EVENT = 65,	/* monitor: u8 n, n bytes of event type, JSON text */
};

/* Who sent a frame: each side parses only what the other may send. */
enum monitor_from {
	MONITOR_FROM_CHILD,
	MONITOR_FROM_MONITOR,
};

#define MONITOR_HDR		5		/* u32 length + u8 type */
#define MONITOR_MAX_SIGN	BF_MAX_BUNDLE	/* a message to sign (a whole bundle) */
#define MONITOR_MAX_PATH	1024		/* a key path, as POST /machines takes */
#define MONITOR_MAX_EVENT	(64 * 1024)	/* an event's JSON text */
#define MONITOR_MAX_EVTYPE	15		/* an event type (events.h: type[16]) */
#define MONITOR_MAX_REPLY	64		/* a reply's answer (a signature) */
#define MONITOR_SIG_LEN		64		/* ed25519 */
#define MONITOR_PUB_LEN		32
#define MONITOR_HELLO_REPLY	(1 + MONITOR_PUB_LEN)	/* has_lab_key, lab_pub */
/* The largest frame either side accepts, type byte and payload. */
#define MONITOR_MAX_FRAME	(1 + MONITOR_MAX_SIGN)

/* The descriptors the child finds its sockets on after exec. */
#define MONITOR_CTL_FD		3
#define MONITOR_EV_FD		4

/* One parsed frame. Pointers point into the parsed buffer. */
struct monitor_msg {
	int type;
	uint16_t port;				/* READY */
	int32_t code;				/* REPLY */
	const unsigned char *data;		/* SIGN message, REPLY answer, EVENT JSON */
	size_t len;
	char str[MONITOR_MAX_PATH + 1];		/* PROBE name, KEY path, EVENT type */
};

/*
 * Parse the frame at the start of buf (the len bytes read so far) as sent by
 * from. Returns the frame's size (> 0) with *m filled; 0 when buf holds only
 * the start of a frame whose header is acceptable (read more); BF_ERR_PROTO
 * for a type that is unknown or not this sender's, BF_ERR_TOOBIG for a
 * length over the type's cap, BF_ERR_PARSE for a payload that does not fit
 * its type. d (may be NULL) says which. Never reads past buf + len.
 */
int monitor_msg_parse(enum monitor_from from, const unsigned char *buf, size_t len,
    struct monitor_msg *m, struct bf_diag *d);

/* A path the monitor takes in a key request: absolute, 1..MONITOR_MAX_PATH
 * bytes, no control byte, no ".." component. BF_ERR_PARSE (d says why). */
int monitor_check_path(const char *p, size_t n, struct bf_diag *d);

/* Append one frame to b (b's cap must hold it). Data may be NULL with n 0. */
int monitor_put(struct buf *b, int type, const void *data, size_t n);
int monitor_put_ready(struct buf *b, uint16_t port);
int monitor_put_reply(struct buf *b, int32_t code, const void *data, size_t n);
int monitor_put_event(struct buf *b, const char *type, const char *json);

/* Write all of p to fd (EINTR, short writes). 0 or BF_ERR_SYS. */
int monitor_write_all(int fd, const void *p, size_t n);

/*
 * A reader of frames from a stream socket. monitor_rd_next returns 1 with
 * *m (valid until the next call) when a frame arrived, 0 on a clean EOF
 * between frames, BF_ERR_TIMEOUT after timeout_ms (-1: none) without a
 * whole frame, or a parse error / BF_ERR_SYS / BF_ERR_PROTO (EOF inside a
 * frame). Memory grows with what arrives, never with what a header claims.
 */
struct monitor_rd {
	struct buf b;
	size_t used;		/* bytes of the last frame returned */
};
void monitor_rd_init(struct monitor_rd *rd);
int monitor_rd_next(int fd, struct monitor_rd *rd, enum monitor_from from, int timeout_ms,
    struct monitor_msg *m, struct bf_diag *d);
void monitor_rd_free(struct monitor_rd *rd);

/* --- the privileged side (monitor.c) --- */

/* What the child may ask for. Each runs on the monitor's thread. */
struct monitor_ops {
	void (*kick)(void *arg, int machines);	/* machines: the list changed */
	int (*probe)(void *arg, const char *name);	/* BF_ERR_NOTFOUND: no worker */
	/* The lab key's signature; NULL (no lab key): the child is told so. */
	int (*sign)(void *arg, const unsigned char *msg, size_t len,
	    unsigned char sig[MONITOR_SIG_LEN]);
	void *arg;
	unsigned char lab_pub[MONITOR_PUB_LEN];
	int has_lab_key;
};

struct monitor_config {
	/* The child's arguments after argv[0] (the daemon's own options);
	 * "--privsep-child PPID:PORT" is put in front of them. */
	char *const *args;
	size_t nargs;
	const char *argv0;
	/* The binary to exec; NULL: /proc/self/exe, this very binary even if
	 * the file was replaced since (a test under valgrind names itself). */
	const char *exe;
	struct monitor_ops ops;
};

struct monitor;

/* Allocate; no child yet. Events forwarded now are queued for it. */
int monitor_new(const struct monitor_config *cfg, struct monitor **out);
/*
 * Fork and exec the first child and wait (up to 60 s) until it listens.
 * Then a thread serves it and starts another, with a backoff, whenever it
 * dies. BF_ERR_SYS with d set when the first child fails to start.
 */
int monitor_start(struct monitor *m, struct bf_diag *d);
/* The port the child listens on (the same for every child). */
int monitor_port(const struct monitor *m);
/* The current child's pid, 0 while none runs. */
pid_t monitor_child_pid(struct monitor *m);
/* events.h's forward hook: queue an event for the child; never blocks (a
 * full queue drops it and counts). arg is the struct monitor. */
void monitor_forward(void *arg, const char *type, const char *json);
/* Events dropped because the child read too slowly or the queue was full. */
uint64_t monitor_dropped(struct monitor *m);
/* SIGTERM the child (SIGKILL after 3 s) and join the threads; events
 * forwarded after this are dropped. Accepts NULL. */
void monitor_stop(struct monitor *m);
/* After the last monitor_forward (the hub freed). Accepts NULL. */
void monitor_free(struct monitor *m);

/* --- the API child (monitor-child.c) --- */

struct monitor_client;

/* The child's end of the sockets (MONITOR_CTL_FD, MONITOR_EV_FD). Caller
 * frees with monitor_client_free. */
int monitor_client_open(int ctl_fd, int ev_fd, struct monitor_client **out);
/* The first request: whether the monitor holds a lab key, its public half. */
int monitor_client_hello(struct monitor_client *c, int *has_lab_key,
    unsigned char pub[MONITOR_PUB_LEN]);
/*
 * Tell the monitor the port (once listening); requests of other threads
 * wait until this is done. Then start the thread that publishes the
 * monitor's events into ev (events_inject); when the monitor goes away it
 * sends this process SIGTERM.
 */
int monitor_client_ready(struct monitor_client *c, uint16_t port, struct events *ev);
/* api_ctl and lab_sign of api.h; arg is the struct monitor_client. */
void monitor_client_kick(void *arg, int machines);
int monitor_client_probe(void *arg, const char *name);
int monitor_client_key(void *arg, const char *path);
int monitor_client_sign(void *arg, const unsigned char *msg, size_t len,
    unsigned char sig[MONITOR_SIG_LEN]);
void monitor_client_free(struct monitor_client *c);	/* accepts NULL */

/*
 * Drop this process's privileges for good: with root or CAP_SETUID and
 * CAP_SETGID, setgroups(0), setgid and setuid to user, every capability
 * cleared and setuid(0) checked to fail. Then, always, PR_SET_NO_NEW_PRIVS.
 * *shared is set when there was nothing to drop (the child keeps the
 * monitor's uid). d names the step that failed.
 */
int monitor_drop_privileges(const char *user, int *shared, struct bf_diag *d);
/* Whether this process could change its uid (root, or CAP_SETUID and
 * CAP_SETGID in its effective set). */
int monitor_can_setuid(void);

#endif
