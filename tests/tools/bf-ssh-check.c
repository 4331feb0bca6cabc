/*
 * bf-ssh-check: a small CLI over coordinator/ssh.c, driven by the
 * integration tests.
 *
 *   bf-ssh-check exec   HOST PORT USER KEY KNOWN_HOSTS CMD [STDIN]
 *   bf-ssh-check upload HOST PORT USER KEY KNOWN_HOSTS LOCAL REMOTE [MODE]
 *   bf-ssh-check bench  HOST PORT USER KEY KNOWN_HOSTS N
 *   bf-ssh-check capture HOST PORT USER KEY KNOWN_HOSTS CMD MAX
 *
 * exec prints each output line as "1 text" (stdout) or "2 text" (stderr);
 * a line cut at BF_MAX_LOG_LINE is printed "1~ text". Then "exit N" or
 * "exit -1 signal". Timings go to stderr as "connect_ms X" / "exec_ms X".
 * bench prints "connect_ms X", "first_exec_ms X" and min/median/max of the
 * next N-1 execs of `true`.
 * capture runs ssh_exec_capture with stdout capped at MAX bytes and prints
 * "len N", "exit N", then whether the session still works ("again ok").
 * With BF_SSH_ABORT_AFTER=N, exec's line callback aborts after N lines
 * (BF_ERR_CANCELLED); the tool then prints "alive 0|1" and, if alive,
 * runs `echo again` on the same session.
 * On failure: "bf-ssh-check: BF_ERR_NAME: message" on stderr, exit 1.
 * Environment: BF_SSH_CONNECT_MS, BF_SSH_IDLE_MS, BF_SSH_TOTAL_MS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "buf.h"
#include "err.h"
#include "caps.h"
#include "ssh.h"

static const struct {
	int code;
	const char *name;
} err_names[] = {
	{ BF_ERR_ALLOC, "BF_ERR_ALLOC" }, { BF_ERR_INVALID, "BF_ERR_INVALID" },
	{ BF_ERR_RANGE, "BF_ERR_RANGE" }, { BF_ERR_PARSE, "BF_ERR_PARSE" },
	{ BF_ERR_TOOBIG, "BF_ERR_TOOBIG" }, { BF_ERR_NOTFOUND, "BF_ERR_NOTFOUND" },
	{ BF_ERR_EXISTS, "BF_ERR_EXISTS" }, { BF_ERR_IO, "BF_ERR_IO" },
	{ BF_ERR_SYS, "BF_ERR_SYS" }, { BF_ERR_DB, "BF_ERR_DB" },
	{ BF_ERR_SSH, "BF_ERR_SSH" }, { BF_ERR_HOSTKEY, "BF_ERR_HOSTKEY" },
	{ BF_ERR_AUTH, "BF_ERR_AUTH" }, { BF_ERR_TIMEOUT, "BF_ERR_TIMEOUT" },
	{ BF_ERR_PROTO, "BF_ERR_PROTO" }, { BF_ERR_STATE, "BF_ERR_STATE" },
	{ BF_ERR_CANCELLED, "BF_ERR_CANCELLED" }, { BF_ERR_LOST, "BF_ERR_LOST" },
};

static const char *
err_name(int r)
{
	size_t i;

	for (i = 0; i < sizeof(err_names) / sizeof(err_names[0]); i++)
		if (err_names[i].code == r)
			return err_names[i].name;
	return "BF_ERR_?";
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
env_int(const char *name, int def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return def;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < 0 || n > 86400000L) {
		fprintf(stderr, "bf-ssh-check: %s=\"%s\" is not a number of ms\n", name, v);
		exit(2);
	}
	return (int)n;
}

static int
parse_int(const char *what, const char *s, long lo, long hi, int base)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, base);
	if (errno != 0 || *end != '\0' || end == s || n < lo || n > hi) {
		fprintf(stderr, "bf-ssh-check: %s \"%s\" is not in %ld..%ld\n", what, s, lo, hi);
		exit(2);
	}
	return (int)n;
}

static int abort_after = -1;

static int
print_line(void *arg, int stream, const char *line, size_t len, int truncated)
{
	if (abort_after >= 0 && abort_after-- == 0)
		return BF_ERR_CANCELLED;
	printf("%d%s ", stream, truncated ? "~" : "");
	fwrite(line, 1, len, stdout);
	putchar('\n');
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
fail(int r, const struct bf_diag *d)
{
	fprintf(stderr, "bf-ssh-check: %s: %s\n", err_name(r),
	    d->msg[0] != '\0' ? d->msg : bf_err_str(r));
	return 1;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: bf-ssh-check exec   HOST PORT USER KEY KNOWN_HOSTS CMD [STDIN]\n"
	    "       bf-ssh-check upload HOST PORT USER KEY KNOWN_HOSTS LOCAL REMOTE [MODE]\n"
	    "       bf-ssh-check bench  HOST PORT USER KEY KNOWN_HOSTS N\n"
	    "       bf-ssh-check capture HOST PORT USER KEY KNOWN_HOSTS CMD MAX\n"
	    "       bf-ssh-check prestart HOST PORT USER KEY KNOWN_HOSTS CMD STDIN\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct ssh_target t;
	struct ssh_conn *c = NULL;
	struct bf_diag d;
	double t0, *times = NULL;
	int r, status = -1, idle, total, i, n, ret = 1;

	if (argc < 8)
		usage();
	abort_after = getenv("BF_SSH_ABORT_AFTER") != NULL ?
	    env_int("BF_SSH_ABORT_AFTER", 0) : -1;
	memset(&t, 0, sizeof(t));
	t.host = argv[2];
	t.port = parse_int("port", argv[3], 1, 65535, 10);
	t.user = argv[4];
	t.key_path = argv[5];
	t.known_hosts = argv[6];
	t.connect_timeout_ms = env_int("BF_SSH_CONNECT_MS", 10000);
	idle = env_int("BF_SSH_IDLE_MS", 10000);
	total = env_int("BF_SSH_TOTAL_MS", 0);
	bf_diag_clear(&d);

	if (ssh_global_init() != 0) {
		fprintf(stderr, "bf-ssh-check: libssh2_init failed\n");
		return 1;
	}
	t0 = now_ms();
	if ((r = ssh_connect(&t, &c, &d)) != 0) {
		ret = fail(r, &d);
		goto out;
	}
	fprintf(stderr, "connect_ms %.1f\n", now_ms() - t0);

	if (strcmp(argv[1], "exec") == 0 && (argc == 8 || argc == 9)) {
		const char *in = argc == 9 ? argv[8] : NULL;

		t0 = now_ms();
		r = ssh_exec(c, argv[7], in, in != NULL ? strlen(in) : 0, print_line, NULL, idle,
		    total, &status, &d);
		fflush(stdout);
		fprintf(stderr, "exec_ms %.1f\n", now_ms() - t0);
		if (r == BF_ERR_CANCELLED && getenv("BF_SSH_ABORT_AFTER") != NULL) {
			printf("aborted\nalive %d\n", ssh_alive(c));
			if (!ssh_alive(c)) {
				ret = 0;
				goto out;
			}
			abort_after = -1;
			r = ssh_exec(c, "echo again", NULL, 0, print_line, NULL, idle, total,
			    &status, &d);
		}
		if (r != 0) {
			ret = fail(r, &d);
			goto out;
		}
		if (status == -1)
			printf("exit -1 signal (%s)\n", d.msg);
		else
			printf("exit %d\n", status);
		ret = 0;
	} else if (strcmp(argv[1], "capture") == 0 && argc == 9) {
		struct buf out;

		buf_init(&out, (size_t)parse_int("MAX", argv[8], 1, 1 << 30, 10));
		r = ssh_exec_capture(c, argv[7], &out, NULL, total ? total : 30000, &status, &d);
		printf("len %zu\n", out.len);
		buf_free(&out);
		if (r != 0) {
			fail(r, &d);
			printf("error %s\n", err_name(r));
		} else {
			printf("exit %d\n", status);
		}
		buf_init(&out, 100);
		if (ssh_exec_capture(c, "echo again", &out, NULL, 10000, &status, &d) == 0 &&
		    status == 0 && out.len == 6 && memcmp(out.data, "again\n", 6) == 0)
			printf("again ok\n");
		buf_free(&out);
		ret = 0;
	} else if (strcmp(argv[1], "prestart") == 0 && argc == 9) {
		/* CMD started ahead, another command run meanwhile (it must not
		 * take it), then CMD with STDIN: from the waiting channel if
		 * that still runs, afresh otherwise */
		if ((r = ssh_exec_prestart(c, argv[7], 10000, &d)) != 0 ||
		    (r = ssh_exec_prestart(c, argv[7], 10000, &d)) != 0) {	/* twice: one */
			ret = fail(r, &d);
			goto out;
		}
		usleep(500 * 1000);
		if ((r = ssh_exec(c, "echo other", NULL, 0, print_line, NULL, idle, total, &status,
		    &d)) != 0) {
			ret = fail(r, &d);
			goto out;
		}
		t0 = now_ms();
		r = ssh_exec(c, argv[7], argv[8], strlen(argv[8]), print_line, NULL, idle, total,
		    &status, &d);
		fflush(stdout);
		fprintf(stderr, "exec_ms %.1f\n", now_ms() - t0);
		if (r != 0) {
			ret = fail(r, &d);
			goto out;
		}
		printf("exit %d\n", status);
		ret = 0;
	} else if (strcmp(argv[1], "upload") == 0 && (argc == 9 || argc == 10)) {
		int mode = argc == 10 ? parse_int("mode", argv[9], 0, 07777, 8) : 0644;

		t0 = now_ms();
		if ((r = ssh_upload(c, argv[7], argv[8], mode, total ? total : 60000, &d)) != 0) {
			ret = fail(r, &d);
			goto out;
		}
		fprintf(stderr, "upload_ms %.1f\n", now_ms() - t0);
		printf("uploaded %s\n", argv[8]);
		ret = 0;
	} else if (strcmp(argv[1], "bench") == 0 && argc == 8) {
		n = parse_int("N", argv[7], 1, 100000, 10);
		if ((times = calloc((size_t)n, sizeof(*times))) == NULL) {
			fprintf(stderr, "bf-ssh-check: out of memory\n");
			goto out;
		}
		for (i = 0; i < n; i++) {
			t0 = now_ms();
			r = ssh_exec(c, "true", NULL, 0, print_line, NULL, idle, total, &status, &d);
			times[i] = now_ms() - t0;
			if (r != 0 || status != 0) {
				ret = r != 0 ? fail(r, &d) : 1;
				if (r == 0)
					fprintf(stderr, "bf-ssh-check: true exited %d\n", status);
				goto out;
			}
		}
		printf("first_exec_ms %.2f\n", times[0]);
		if (n > 1) {
			qsort(times + 1, (size_t)n - 1, sizeof(*times), cmp_double);
			printf("next_exec_ms min %.2f median %.2f max %.2f (n=%d)\n", times[1],
			    times[1 + (n - 1) / 2], times[n - 1], n - 1);
		}
		ret = 0;
	} else {
		usage();
	}
out:
	free(times);
	ssh_close(c);
	ssh_global_cleanup();
	return ret;
}
