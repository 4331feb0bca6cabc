/*
 * coord_test_monitor.c: privilege separation's wire format and monitor
 * (coordinator/monitor*.c). A table of hostile frames each side must
 * refuse (truncated, oversized, unknown or the other side's type, bad
 * payloads), round trips of every type, the stream reader over a real
 * socket (split frames, EOF inside a frame, a header that claims 64 MiB,
 * timeouts), events_inject, and the monitor itself: it execs this binary as
 * its child (--privsep-child), whose scripted generations break the
 * protocol in two ways and must each be killed and replaced, then serve.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "monitor.h"
#include "t.h"

/* pid is gone or a zombie within 5 s. */
static int
gone_or_zombie(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int i, z;

	for (i = 0; i < 50; i++) {
		if (kill(pid, 0) != 0)
			return 1;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		z = 0;
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(buf, sizeof(buf), f) != NULL && (p = strrchr(buf, ')')) != NULL)
				z = p[1] == ' ' && p[2] == 'Z';
			fclose(f);
		}
		if (z)
			return 1;
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
	return 0;
}

/* A frame from its parts: len = 1 + n unless forced. */
static size_t
frame(unsigned char *out, uint32_t len, int type, const void *p, size_t n)
{
	out[0] = (unsigned char)(len >> 24);
	out[1] = (unsigned char)(len >> 16);
	out[2] = (unsigned char)(len >> 8);
	out[3] = (unsigned char)len;
	out[4] = (unsigned char)type;
	if (n > 0)
		memcpy(out + 5, p, n);
	return 5 + n;
}

static void
test_parse_table(void)
{
	static const struct {
		const char *what;
		enum monitor_from from;
		int type;
		int64_t len;		/* -1: 1 + n */
		const char *payload;
		size_t n;
		int want;		/* > 0: accepted (frame size); else the error */
	} cases[] = {
		{ "hello", MONITOR_FROM_CHILD, MONITOR_HELLO, -1, "", 0, 5 },
		{ "hello with payload", MONITOR_FROM_CHILD, MONITOR_HELLO, -1, "x", 1, BF_ERR_TOOBIG },
		{ "kick", MONITOR_FROM_CHILD, MONITOR_KICK, -1, "", 0, 5 },
		{ "kick-machines", MONITOR_FROM_CHILD, MONITOR_KICK_MACHINES, -1, "", 0, 5 },
		{ "kick-machines with payload", MONITOR_FROM_CHILD, MONITOR_KICK_MACHINES, -1, "x", 1,
		  BF_ERR_TOOBIG },
		{ "monitor sends kick-machines", MONITOR_FROM_MONITOR, MONITOR_KICK_MACHINES, -1, "",
		  0, BF_ERR_PROTO },
		{ "ready 8080", MONITOR_FROM_CHILD, MONITOR_READY, -1, "\x1f\x90", 2, 7 },
		{ "ready port 0", MONITOR_FROM_CHILD, MONITOR_READY, -1, "\0\0", 2, BF_ERR_PARSE },
		{ "ready short", MONITOR_FROM_CHILD, MONITOR_READY, -1, "\x1f", 1, BF_ERR_PARSE },
		{ "ready long", MONITOR_FROM_CHILD, MONITOR_READY, -1, "\x1f\x90\0", 3, BF_ERR_TOOBIG },
		{ "probe", MONITOR_FROM_CHILD, MONITOR_PROBE, -1, "bfp61", 5, 10 },
		{ "probe empty", MONITOR_FROM_CHILD, MONITOR_PROBE, -1, "", 0, BF_ERR_PARSE },
		{ "probe slash", MONITOR_FROM_CHILD, MONITOR_PROBE, -1, "a/b", 3, BF_ERR_PARSE },
		{ "probe NUL", MONITOR_FROM_CHILD, MONITOR_PROBE, -1, "a\0b", 3, BF_ERR_PARSE },
		{ "probe leading dot", MONITOR_FROM_CHILD, MONITOR_PROBE, -1, ".a", 2, BF_ERR_PARSE },
		{ "key", MONITOR_FROM_CHILD, MONITOR_KEY, -1, "/k/id", 5, 10 },
		{ "key relative", MONITOR_FROM_CHILD, MONITOR_KEY, -1, "k/id", 4, BF_ERR_PARSE },
		{ "key dotdot", MONITOR_FROM_CHILD, MONITOR_KEY, -1, "/a/../b", 7, BF_ERR_PARSE },
		{ "key trailing dotdot", MONITOR_FROM_CHILD, MONITOR_KEY, -1, "/a/..", 5, BF_ERR_PARSE },
		{ "key newline", MONITOR_FROM_CHILD, MONITOR_KEY, -1, "/a\nb", 4, BF_ERR_PARSE },
		{ "sign", MONITOR_FROM_CHILD, MONITOR_SIGN, -1, "\0\1\2", 3, 8 },
		{ "sign empty", MONITOR_FROM_CHILD, MONITOR_SIGN, -1, "", 0, 5 },
		{ "sign over the cap", MONITOR_FROM_CHILD, MONITOR_SIGN, 2 + (int64_t)MONITOR_MAX_SIGN,
		  "", 0, BF_ERR_TOOBIG },
		{ "length 0", MONITOR_FROM_CHILD, MONITOR_KICK, 0, "", 0, BF_ERR_PARSE },
		{ "length 4 GiB", MONITOR_FROM_CHILD, MONITOR_SIGN, 0xffffffff, "", 0, BF_ERR_TOOBIG },
		{ "unknown type 0", MONITOR_FROM_CHILD, 0, -1, "", 0, BF_ERR_PROTO },
		{ "unknown type 99", MONITOR_FROM_CHILD, 99, -1, "", 0, BF_ERR_PROTO },
		{ "unknown type 255", MONITOR_FROM_MONITOR, 255, -1, "", 0, BF_ERR_PROTO },
		{ "child sends a reply", MONITOR_FROM_CHILD, MONITOR_REPLY, -1, "\0\0\0\0", 4,
		  BF_ERR_PROTO },
		{ "child sends an event", MONITOR_FROM_CHILD, MONITOR_EVENT, -1, "\3run{}", 6,
		  BF_ERR_PROTO },
		{ "monitor sends a kick", MONITOR_FROM_MONITOR, MONITOR_KICK, -1, "", 0,
		  BF_ERR_PROTO },
		{ "reply 0", MONITOR_FROM_MONITOR, MONITOR_REPLY, -1, "\0\0\0\0", 4, 9 },
		{ "reply -6", MONITOR_FROM_MONITOR, MONITOR_REPLY, -1, "\xff\xff\xff\xfa", 4, 9 },
		{ "reply positive code", MONITOR_FROM_MONITOR, MONITOR_REPLY, -1, "\0\0\0\1", 4,
		  BF_ERR_PARSE },
		{ "reply unknown code", MONITOR_FROM_MONITOR, MONITOR_REPLY, -1, "\x80\0\0\0", 4,
		  BF_ERR_PARSE },
		{ "reply short", MONITOR_FROM_MONITOR, MONITOR_REPLY, -1, "\0\0", 2, BF_ERR_PARSE },
		{ "reply too long", MONITOR_FROM_MONITOR, MONITOR_REPLY, 1 + 4 + MONITOR_MAX_REPLY + 1,
		  "", 0, BF_ERR_TOOBIG },
		{ "event", MONITOR_FROM_MONITOR, MONITOR_EVENT, -1, "\3run{\"id\":1}", 12, 17 },
		{ "event type 0 bytes", MONITOR_FROM_MONITOR, MONITOR_EVENT, -1, "\0{}", 3,
		  BF_ERR_PARSE },
		{ "event type past the end", MONITOR_FROM_MONITOR, MONITOR_EVENT, -1, "\11run", 4,
		  BF_ERR_PARSE },
		{ "event type upper case", MONITOR_FROM_MONITOR, MONITOR_EVENT, -1, "\3Run{}", 6,
		  BF_ERR_PARSE },
		{ "event not an object", MONITOR_FROM_MONITOR, MONITOR_EVENT, -1, "\3run[1]", 7,
		  BF_ERR_PARSE },
		{ "event newline", MONITOR_FROM_MONITOR, MONITOR_EVENT, -1, "\3run{\n}", 7,
		  BF_ERR_PARSE },
	};
	unsigned char buf[256];
	struct monitor_msg m;
	struct bf_diag d;
	size_t i, n;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = frame(buf, cases[i].len < 0 ? (uint32_t)(1 + cases[i].n) : (uint32_t)cases[i].len,
		    cases[i].type, cases[i].payload, cases[i].n);
		bf_diag_clear(&d);
		r = monitor_msg_parse(cases[i].from, buf, n, &m, &d);
		if (r != cases[i].want)
			fprintf(stderr, "case \"%s\": got %d (%s), want %d\n", cases[i].what, r,
			    d.msg, cases[i].want);
		T_EQ_INT(r, cases[i].want);
		if (cases[i].want < 0)
			T_CHECK(d.msg[0] != '\0');
		/* every truncation of an accepted frame asks for more */
		if (cases[i].want > 0) {
			size_t k;

			for (k = 0; k < n; k++)
				T_EQ_INT(monitor_msg_parse(cases[i].from, buf, k, &m, NULL), 0);
		}
	}
	/* an oversized header is refused at once, before its payload arrives */
	n = frame(buf, 0x01000000, MONITOR_EVENT, "", 0);
	T_EQ_INT(monitor_msg_parse(MONITOR_FROM_MONITOR, buf, n, &m, NULL), BF_ERR_TOOBIG);
	/* fields of accepted frames */
	n = frame(buf, 6, MONITOR_PROBE, "bfp61", 5);
	T_EQ_INT(monitor_msg_parse(MONITOR_FROM_CHILD, buf, n, &m, NULL), 10);
	T_EQ_STR(m.str, "bfp61");
	n = frame(buf, 3, MONITOR_READY, "\x1f\x90", 2);
	T_EQ_INT(monitor_msg_parse(MONITOR_FROM_CHILD, buf, n, &m, NULL), 7);
	T_EQ_INT(m.port, 8080);
	n = frame(buf, 5, MONITOR_REPLY, "\xff\xff\xff\xfa", 4);
	T_EQ_INT(monitor_msg_parse(MONITOR_FROM_MONITOR, buf, n, &m, NULL), 9);
	T_EQ_INT(m.code, BF_ERR_NOTFOUND);
	T_EQ_INT(m.len, 0);
}

static void
test_roundtrip(void)
{
	unsigned char sig[MONITOR_SIG_LEN];
	struct monitor_msg m;
	struct buf b;
	size_t off = 0;
	int r, i;

	memset(sig, 0xab, sizeof(sig));
	buf_init(&b, MONITOR_HDR + MONITOR_MAX_FRAME);
	T_EQ_INT(monitor_put(&b, MONITOR_HELLO, NULL, 0), 0);
	T_EQ_INT(monitor_put_ready(&b, 65535), 0);
	T_EQ_INT(monitor_put(&b, MONITOR_PROBE, "m.1-x_y", 7), 0);
	T_EQ_INT(monitor_put(&b, MONITOR_SIGN, "abc", 3), 0);
	for (i = 0; i < 4; i++) {
		r = monitor_msg_parse(MONITOR_FROM_CHILD, (unsigned char *)b.data + off,
		    b.len - off, &m, NULL);
		T_CHECK(r > 0);
		if (r <= 0)
			break;
		off += (size_t)r;
		if (i == 1)
			T_EQ_INT(m.port, 65535);
		if (i == 2)
			T_EQ_STR(m.str, "m.1-x_y");
		if (i == 3)
			T_CHECK(m.len == 3 && memcmp(m.data, "abc", 3) == 0);
	}
	T_EQ_INT(off, b.len);
	buf_reset(&b);
	T_EQ_INT(monitor_put_reply(&b, 0, sig, sizeof(sig)), 0);
	T_EQ_INT(monitor_put_event(&b, "job", "{\"id\":7}"), 0);
	r = monitor_msg_parse(MONITOR_FROM_MONITOR, (unsigned char *)b.data, b.len, &m, NULL);
	T_EQ_INT(r, MONITOR_HDR + 4 + MONITOR_SIG_LEN);
	T_CHECK(m.len == MONITOR_SIG_LEN && memcmp(m.data, sig, sizeof(sig)) == 0);
	r = monitor_msg_parse(MONITOR_FROM_MONITOR, (unsigned char *)b.data + r, b.len - (size_t)r,
	    &m, NULL);
	T_CHECK(r > 0);
	T_EQ_STR(m.str, "job");
	T_CHECK(m.len == 8 && memcmp(m.data, "{\"id\":7}", 8) == 0);
	/* encoders refuse what no parser would take */
	T_EQ_INT(monitor_put_reply(&b, 0, sig, MONITOR_MAX_REPLY + 1), BF_ERR_TOOBIG);
	T_EQ_INT(monitor_put_event(&b, "a_very_long_event_type", "{}"), BF_ERR_TOOBIG);
	T_EQ_INT(monitor_put(&b, 300, NULL, 0), BF_ERR_TOOBIG);
	buf_free(&b);
}

static void
test_reader(void)
{
	unsigned char f[64];
	struct monitor_rd rd;
	struct monitor_msg m;
	struct bf_diag d;
	int sv[2], r;
	size_t n;

	T_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	monitor_rd_init(&rd);
	/* two frames in one write, then one split over two */
	n = frame(f, 1, MONITOR_KICK, "", 0);
	n += frame(f + n, 6, MONITOR_PROBE, "bfp62", 5);
	T_EQ_INT(monitor_write_all(sv[1], f, n), 0);
	T_EQ_INT(monitor_rd_next(sv[0], &rd, MONITOR_FROM_CHILD, 1000, &m, &d), 1);
	T_EQ_INT(m.type, MONITOR_KICK);
	T_EQ_INT(monitor_rd_next(sv[0], &rd, MONITOR_FROM_CHILD, 1000, &m, &d), 1);
	T_EQ_STR(m.str, "bfp62");
	n = frame(f, 3, MONITOR_READY, "\0\x50", 2);
	T_EQ_INT(monitor_write_all(sv[1], f, 3), 0);
	T_EQ_INT(monitor_rd_next(sv[0], &rd, MONITOR_FROM_CHILD, 100, &m, &d), BF_ERR_TIMEOUT);
	T_EQ_INT(monitor_write_all(sv[1], f + 3, n - 3), 0);
	T_EQ_INT(monitor_rd_next(sv[0], &rd, MONITOR_FROM_CHILD, 1000, &m, &d), 1);
	T_EQ_INT(m.port, 80);
	/* a header claiming nearly the cap, with 10 bytes behind it: the reader
	 * must not allocate what it claims, and waits for the rest */
	n = frame(f, MONITOR_MAX_SIGN, MONITOR_SIGN, "0123456789", 10);
	T_EQ_INT(monitor_write_all(sv[1], f, n), 0);
	T_EQ_INT(monitor_rd_next(sv[0], &rd, MONITOR_FROM_CHILD, 100, &m, &d), BF_ERR_TIMEOUT);
	T_CHECK(rd.b.cap < 1024 * 1024);
	/* EOF inside that frame */
	close(sv[1]);
	bf_diag_clear(&d);
	r = monitor_rd_next(sv[0], &rd, MONITOR_FROM_CHILD, 1000, &m, &d);
	T_EQ_INT(r, BF_ERR_PROTO);
	T_CONTAINS(d.msg, "inside a frame");
	close(sv[0]);
	monitor_rd_free(&rd);

	/* a clean EOF between frames is 0; a bad type is refused */
	T_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	monitor_rd_init(&rd);
	close(sv[1]);
	T_EQ_INT(monitor_rd_next(sv[0], &rd, MONITOR_FROM_CHILD, 1000, &m, &d), 0);
	close(sv[0]);
	monitor_rd_free(&rd);
	T_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	monitor_rd_init(&rd);
	n = frame(f, 1, 77, "", 0);
	T_EQ_INT(monitor_write_all(sv[1], f, n), 0);
	T_EQ_INT(monitor_rd_next(sv[0], &rd, MONITOR_FROM_CHILD, 1000, &m, &d), BF_ERR_PROTO);
	close(sv[0]);
	close(sv[1]);
	monitor_rd_free(&rd);
}

static void
test_inject(void)
{
	struct events *ev = NULL;
	struct events_rec rec[2];
	uint64_t last;
	int n;

	T_EQ_INT(events_new(NULL, &ev), 0);
	last = events_last_id(ev);
	T_CHECK(events_inject(ev, "run", "{\"id\":3}", 8) > 0);
	T_EQ_INT(events_inject(ev, "run", "{\"id\":\n3}", 9), 0);
	T_EQ_INT(events_inject(ev, "Run", "{}", 2), 0);
	T_EQ_INT(events_inject(ev, "run", "[]", 2), 0);
	n = events_wait(ev, last, 100, NULL, rec, 2);
	T_EQ_INT(n, 1);
	if (n == 1) {
		T_EQ_STR(rec[0].type, "run");
		T_EQ_STR(rec[0].data, "{\"id\":3}");
	}
	events_recs_clear(rec, n > 0 ? (size_t)n : 0);
	events_free(ev);
}

/* --- the monitor against scripted children (this binary, exec'd) --- */

static char tdir[256];
static int kicks, kicks_machines, probes_run;

static void
op_kick(void *arg, int machines)
{
	(void)arg;
	if (machines)
		kicks_machines++;
	else
		kicks++;
}

static int
op_probe(void *arg, const char *name)
{
	(void)arg;
	if (strcmp(name, "run") == 0)
		probes_run++;	/* the child saw the forwarded "run" event */
	return strcmp(name, "known") == 0 ? 0 : BF_ERR_NOTFOUND;
}

/* The child's generation: how many children wrote their pid before it. */
static int
child_generation(void)
{
	char p[300];
	FILE *f;
	int n = 0, c;

	snprintf(p, sizeof(p), "%s/pids", getenv("BF_TEST_MONDIR"));
	if ((f = fopen(p, "r")) != NULL) {
		while ((c = fgetc(f)) != EOF)
			n += c == '\n';
		fclose(f);
	}
	if ((f = fopen(p, "a")) != NULL) {
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
	}
	return n;
}

static int
child_call(int type, const void *p, size_t n, int32_t *code)
{
	struct monitor_rd rd;
	struct monitor_msg m;
	struct buf b;
	int r;

	buf_init(&b, 4096);
	monitor_put(&b, type, p, n);
	r = monitor_write_all(MONITOR_CTL_FD, b.data, b.len);
	buf_free(&b);
	if (r != 0)
		return r;
	monitor_rd_init(&rd);
	r = monitor_rd_next(MONITOR_CTL_FD, &rd, MONITOR_FROM_MONITOR, 5000, &m, NULL);
	if (r == 1)
		*code = m.code;
	monitor_rd_free(&rd);
	return r == 1 ? 0 : BF_ERR_PROTO;
}

/* Generation 0 breaks the protocol after ready (an unknown type), 1 sends
 * a kick before ready; 2 serves: probes, kicks, and echoes the first event
 * it reads as a probe of its type. */
static int
child_main(void)
{
	unsigned char raw[MONITOR_HDR];
	struct monitor_rd rd;
	struct monitor_msg m;
	int32_t code = 1;
	int gen = child_generation();

	if (child_call(MONITOR_HELLO, NULL, 0, &code) != 0 || code != 0)
		return 3;
	if (gen == 1) {
		child_call(MONITOR_KICK, NULL, 0, &code);
		pause();
		return 4;
	}
	if (child_call(MONITOR_READY, "\x10\xe1", 2, &code) != 0 || code != 0)
		return 3;
	if (gen == 0) {
		frame(raw, 1, 99, "", 0);
		monitor_write_all(MONITOR_CTL_FD, raw, sizeof(raw));
		pause();
		return 4;
	}
	if (child_call(MONITOR_PROBE, "known", 5, &code) != 0 || code != 0 ||
	    child_call(MONITOR_PROBE, "unknown", 7, &code) != 0 || code != BF_ERR_NOTFOUND ||
	    child_call(MONITOR_SIGN, "x", 1, &code) != 0 || code != BF_ERR_NOTFOUND ||
	    child_call(MONITOR_KEY, "/nonexistent/key", 16, &code) != 0 ||
	    code != BF_ERR_NOTFOUND ||
	    child_call(MONITOR_KICK, NULL, 0, &code) != 0 || code != 0 ||
	    child_call(MONITOR_KICK_MACHINES, NULL, 0, &code) != 0 || code != 0 ||
	    child_call(MONITOR_KICK_MACHINES, NULL, 0, &code) != 0 || code != 0)
		return 5;
	monitor_rd_init(&rd);
	if (monitor_rd_next(MONITOR_EV_FD, &rd, MONITOR_FROM_MONITOR, 10000, &m, NULL) == 1 &&
	    m.type == MONITOR_EVENT) {
		char type[sizeof(m.str)];

		memcpy(type, m.str, sizeof(type));
		child_call(MONITOR_PROBE, type, strlen(type), &code);
	}
	monitor_rd_free(&rd);
	/* until the monitor's SIGTERM */
	for (;;)
		pause();
}

static int
count_lines(const char *path)
{
	FILE *f;
	int n = 0, c;

	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* The pid on line n (0-based) of the children's pids file, or -1. */
static pid_t
pid_line(const char *path, int n)
{
	char line[32];
	FILE *f;
	long v = -1;

	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (n-- >= 0 && fgets(line, sizeof(line), f) != NULL)
		if (n < 0)
			v = strtol(line, NULL, 10);
	fclose(f);
	return (pid_t)v;
}

static void
test_monitor(const char *argv0)
{
	char *args[] = { "--some-option", NULL };
	struct monitor_config cfg;
	struct monitor *m = NULL;
	struct bf_diag d;
	char pids[300];
	pid_t first, pid;
	int i;

	snprintf(tdir, sizeof(tdir), "/tmp/bf-montest.XXXXXX");
	T_CHECK(mkdtemp(tdir) != NULL);
	setenv("BF_TEST_MONDIR", tdir, 1);
	snprintf(pids, sizeof(pids), "%s/pids", tdir);
	memset(&cfg, 0, sizeof(cfg));
	cfg.argv0 = argv0;
	cfg.exe = argv0;	/* not /proc/self/exe: under valgrind that is valgrind */
	cfg.args = args;
	cfg.nargs = 1;
	cfg.ops.kick = op_kick;
	cfg.ops.probe = op_probe;
	T_EQ_INT(monitor_new(&cfg, &m), 0);
	/* queued before any child exists (goes to the first) */
	monitor_forward(m, "run", "{\"id\":1}");
	bf_diag_clear(&d);
	T_EQ_INT(monitor_start(m, &d), 0);
	T_EQ_INT(monitor_port(m), 0x10e1);
	first = monitor_child_pid(m);
	T_CHECK(first >= 0);
	/* generation 0 is killed, 1 too (1 s backoff, then 2 s), 2 serves */
	for (i = 0; i < 150 && probes_run == 0; i++) {
		monitor_forward(m, "run", "{\"id\":1}");
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
	T_EQ_INT(count_lines(pids), 3);
	T_EQ_INT(probes_run, 1);
	T_EQ_INT(kicks, 1);
	T_EQ_INT(kicks_machines, 2);	/* kept apart: only these read the list */
	pid = monitor_child_pid(m);
	/* each child wrote its pid as it started: the first line is
	 * generation 0, the third the one serving now. `first` was read
	 * after monitor_start, when the monitor may have replaced generation
	 * 0 already (a main thread starved under valgrind: the likeliest
	 * reading of CI's two failed checks here, pid != first and first
	 * alive), so it is only one of the three, or 0 if the read fell
	 * between a kill and the next spawn (CI at 0bc84e2: `first > 0`
	 * and this check both failed). */
	T_CHECK(first == 0 || first == pid_line(pids, 0) || first == pid_line(pids, 1) ||
	    first == pid_line(pids, 2));
	T_CHECK(pid > 0 && pid == pid_line(pids, 2));
	first = pid_line(pids, 0);
	T_CHECK(first > 0 && first != pid);
	/* killed: gone, or a zombie the monitor's reaper has not got to yet
	 * (under valgrind that can take a while) */
	T_CHECK(gone_or_zombie(first));
	monitor_stop(m);
	T_CHECK(kill(pid, 0) != 0);
	monitor_free(m);
	unlink(pids);
	rmdir(tdir);
}

/* A first child that exits before it listens fails monitor_start. */
static void
test_monitor_fails(const char *argv0)
{
	struct monitor_config cfg;
	struct monitor *m = NULL;
	struct bf_diag d;

	setenv("BF_TEST_MONFAIL", "1", 1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.argv0 = argv0;
	cfg.exe = argv0;
	T_EQ_INT(monitor_new(&cfg, &m), 0);
	bf_diag_clear(&d);
	T_EQ_INT(monitor_start(m, &d), BF_ERR_SYS);
	T_CONTAINS(d.msg, "exited with status 7 before it listened");
	monitor_free(m);
	unsetenv("BF_TEST_MONFAIL");
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "--privsep-child") == 0) {
		if (getenv("BF_TEST_MONFAIL") != NULL)
			return 7;
		/* its arguments: PPID:PORT, then the monitor's own */
		if (argc != 4 || strcmp(argv[3], "--some-option") != 0 ||
		    strtol(argv[2], NULL, 10) != (long)getppid())
			return 6;
		return child_main();
	}
	signal(SIGPIPE, SIG_IGN);
	test_parse_table();
	test_roundtrip();
	test_reader();
	test_inject();
	test_monitor(argv[0]);
	test_monitor_fails(argv[0]);
	return t_done();
}
