/*
 * multi.c: services that scale (issue 20): N instances of a server, and N
 * load generators whose totals are summed.
 *
 * work serve --instances N --base-port P [--cpus-per C] [--env NAME=VALUE]...
 *         -- ARGV...
 *     runs N copies of ARGV (a step's service), instance i with every
 *     "%PORT%" in its arguments replaced by P+i and pinned to C CPUs of
 *     the agent's allowed set (instance i gets CPUs i*C .. i*C+C-1 of it,
 *     wrapping), so the servers neither share a port nor migrate onto each
 *     other. A port that already accepts connections (another server's)
 *     is refused before anything starts. --env (at most MULTI_MAX_ENV)
 *     puts NAME=VALUE in the instances' environment only, not the
 *     clients' nor the agent's (the redis recipe's MALLOC_CONF=thp:always
 *     in a madvise cell: jemalloc then madvises its arenas MADV_HUGEPAGE). It waits; one instance
 *     exiting ends it (exit 1): the step's service then reads as dead. The
 *     agent stops the lot by process group.
 * work fanout --instances N --base-port P (--sum-csv COLUMN | --sum-after TOKEN)
 *         -- ARGV...
 *     waits until every port P..P+N-1 accepts on 127.0.0.1 (10 s), runs N
 *     copies of ARGV at once (the same "%PORT%" rule), each instance's
 *     output to its own file, and prints the total:
 *       --sum-csv COLUMN: CSV with a header (redis-benchmark --csv): per row
 *         key (first field), the sum of COLUMN over the instances, printed
 *         as CSV "test","COLUMN" then "KEY","SUM";
 *       --sum-after TOKEN: the number after the last TOKEN of each output
 *         (memcaslap's "TPS: "), printed as TOKEN SUM.
 *     A client that fails, or an output without the column or token, fails
 *     the run (exit 1) with that instance named; a failed client's line
 *     says how it ended and quotes its last line of output. Each
 *     instance's output is copied to stderr (the run log) with its index.
 *     Clients run at once: one that writes a shared file on first use
 *     (memcaslap's ~/.memslap.cnf without -F) races its twins, so a
 *     recipe hands such a client its own file.
 * Nothing reaches a shell: ARGV is execvp'd with substituted elements.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"
#include "wl.h"

#define MULTI_MAX_INSTANCES	64
#define MULTI_MAX_ARGS		128
#define MULTI_MAX_ARG		4096
#define MULTI_MAX_OUT		(1 << 20)	/* bytes of one client's output read */
#define MULTI_MAX_ROWS		64
#define MULTI_READY_S		10
#define MULTI_MAX_ENV		8
#define MULTI_MAX_WHY		200	/* bytes of a failed client's last line quoted */

struct multi_opts {
	int64_t n, port, cpus_per;
	const char *sum_csv, *sum_after;
	const char *env[MULTI_MAX_ENV];	/* NAME=VALUE, checked */
	int nenv;
	char **argv;		/* after "--" */
	int argc;
};

/* NAME=VALUE with NAME [A-Za-z_][A-Za-z0-9_]* and VALUE free of control
 * bytes: 0, else -1. */
static int
multi_env_ok(const char *s)
{
	const char *p;

	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return -1;
	for (p = s + 1; *p != '=' && *p != '\0'; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '_'))
			return -1;
	if (*p != '=' || p - s > 64)
		return -1;
	for (p++; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return -1;
	return 0;
}

/* Options up to "--"; ARGV after it. */
static int
multi_parse(const char *work, int argc, char **argv, struct multi_opts *m)
{
	int i, dash = -1, k, r;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dash = i;
			break;
		}
	if (dash < 0 || dash + 1 >= argc || argc - dash - 1 > MULTI_MAX_ARGS) {
		fprintf(stderr, "benchfleet-agent: work %s: needs -- and the program to run "
		    "(at most %d arguments)\n", work, MULTI_MAX_ARGS);
		return WL_EXIT_USAGE;
	}
	m->argv = argv + dash + 1;
	m->argc = argc - dash - 1;
	/* the words first, then the numbers through wl_parse */
	{
		char *nums[16];
		int nn = 1;

		nums[0] = argv[0];
		for (k = 1; k < dash; k += 2) {
			if (k + 1 >= dash) {
				fprintf(stderr, "benchfleet-agent: work %s: %s needs a value\n", work,
				    argv[k]);
				return WL_EXIT_USAGE;
			}
			if (strcmp(argv[k], "--sum-csv") == 0)
				m->sum_csv = argv[k + 1];
			else if (strcmp(argv[k], "--sum-after") == 0)
				m->sum_after = argv[k + 1];
			else if (strcmp(argv[k], "--env") == 0) {
				if (m->nenv >= MULTI_MAX_ENV || multi_env_ok(argv[k + 1]) != 0) {
					fprintf(stderr, "benchfleet-agent: work %s: --env \"%.80s\": "
					    "expected NAME=VALUE (NAME of [A-Za-z0-9_], no control "
					    "bytes), at most %d of them\n", work, argv[k + 1],
					    MULTI_MAX_ENV);
					return WL_EXIT_USAGE;
				}
				m->env[m->nenv++] = argv[k + 1];
			} else if (nn + 2 <= 16) {
				nums[nn++] = argv[k];
				nums[nn++] = argv[k + 1];
			} else {
				fprintf(stderr, "benchfleet-agent: work %s: too many options\n", work);
				return WL_EXIT_USAGE;
			}
		}
		{
			struct wl_opt o[] = {
				{ "--instances", 1, MULTI_MAX_INSTANCES, &m->n, 1 },
				{ "--base-port", 1, 65535, &m->port, 1 },
				{ "--cpus-per", 1, CPU_SETSIZE, &m->cpus_per, 0 },
			};

			if ((r = wl_parse(work, nn, nums, o, 3)) != 0)
				return r;
		}
	}
	if (m->port + m->n - 1 > 65535) {
		fprintf(stderr, "benchfleet-agent: work %s: ports %lld..%lld go past 65535\n", work,
		    (long long)m->port, (long long)(m->port + m->n - 1));
		return WL_EXIT_USAGE;
	}
	return 0;
}

/* ARGV with "%PORT%" replaced by port, into av (strings in store). */
static int
multi_argv(const struct multi_opts *m, int64_t port, char **av, char (*store)[MULTI_MAX_ARG])
{
	char num[16];
	const char *s, *hit;
	size_t len, nl;
	int i;

	snprintf(num, sizeof(num), "%lld", (long long)port);
	nl = strlen(num);
	for (i = 0; i < m->argc; i++) {
		len = 0;
		for (s = m->argv[i]; (hit = strstr(s, "%PORT%")) != NULL; s = hit + 6) {
			if (len + (size_t)(hit - s) + nl >= MULTI_MAX_ARG)
				return -1;
			memcpy(store[i] + len, s, (size_t)(hit - s));
			len += (size_t)(hit - s);
			memcpy(store[i] + len, num, nl);
			len += nl;
		}
		if (len + strlen(s) >= MULTI_MAX_ARG)
			return -1;
		memcpy(store[i] + len, s, strlen(s) + 1);
		av[i] = store[i];
	}
	av[m->argc] = NULL;
	return 0;
}

/* Pin the calling process to CPUs i*per .. i*per+per-1 of its allowed set. */
static int
multi_pin(int64_t i, int64_t per)
{
	cpu_set_t have, want;
	int cpus[CPU_SETSIZE], n = 0, c;
	int64_t k;

	if (sched_getaffinity(0, sizeof(have), &have) != 0)
		return -1;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &have))
			cpus[n++] = c;
	if (n == 0)
		return -1;
	CPU_ZERO(&want);
	for (k = 0; k < per; k++)
		CPU_SET(cpus[(i * per + k) % n], &want);
	return sched_setaffinity(0, sizeof(want), &want);
}

/* Fork instance i: stdout/stderr to outfd when >= 0; its pid or -1. */
static pid_t
multi_spawn(const char *work, const struct multi_opts *m, int64_t i, int outfd, int pin)
{
	static char store[MULTI_MAX_ARGS][MULTI_MAX_ARG];
	char *av[MULTI_MAX_ARGS + 1];
	pid_t pid;
	int k;

	if (multi_argv(m, m->port + i, av, store) != 0) {
		fprintf(stderr, "benchfleet-agent: work %s: an argument is too long\n", work);
		return -1;
	}
	if ((pid = fork()) != 0)
		return pid;
	if (outfd >= 0 && (dup2(outfd, STDOUT_FILENO) < 0 || dup2(outfd, STDERR_FILENO) < 0))
		_exit(126);
	for (k = 0; k < m->nenv; k++)
		if (putenv((char *)m->env[k]) != 0)
			_exit(126);
	if (pin && multi_pin(i, m->cpus_per) != 0) {
		fprintf(stderr, "benchfleet-agent: work %s: instance %lld: sched_setaffinity: %s\n",
		    work, (long long)i, strerror(errno));
		_exit(126);
	}
	execvp(av[0], av);
	fprintf(stderr, "benchfleet-agent: work %s: %s: %s\n", work, av[0], strerror(errno));
	_exit(127);
}

/* One connect to 127.0.0.1:port: 1 accepted, 0 not, -1 no socket. */
static int
multi_accepts(int64_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd, ok;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* A wait status in words: "exited with status 1", "was killed by signal 9". */
static void
multi_status(int status, char *out, size_t outsz)
{
	if (WIFEXITED(status))
		snprintf(out, outsz, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, outsz, "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, outsz, "ended (wait status %d)", status);
}

/* The last non-empty line of text, control bytes as spaces, at most
 * MULTI_MAX_WHY bytes: what a failed client said last. */
static void
multi_last_line(const char *text, char *out, size_t outsz)
{
	const char *e = text + strlen(text), *b;
	size_t n, k;

	while (e > text && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
		e--;
	for (b = e; b > text && b[-1] != '\n'; b--)
		;
	n = (size_t)(e - b);
	if (n >= outsz)
		n = outsz - 1;
	for (k = 0; k < n; k++)
		out[k] = (unsigned char)b[k] < 0x20 || b[k] == 0x7f ? ' ' : b[k];
	out[n] = '\0';
}

int
multi_serve(int argc, char **argv)
{
	struct multi_opts m = { .cpus_per = 1 };
	pid_t pid, pids[MULTI_MAX_INSTANCES];
	char how[64];
	int64_t i;
	int r, status;

	if ((r = multi_parse("serve", argc, argv, &m)) != 0)
		return r;
	/* a port already taken would make that instance exit while the
	 * clients' readiness check passed on the other server */
	for (i = 0; i < m.n; i++)
		if (multi_accepts(m.port + i) == 1) {
			fprintf(stderr, "benchfleet-agent: work serve: 127.0.0.1:%lld (instance %lld) "
			    "already accepts connections: another server holds it (left from an "
			    "earlier step?)\n", (long long)(m.port + i), (long long)i);
			return 1;
		}
	for (i = 0; i < m.n; i++)
		if ((pids[i] = multi_spawn("serve", &m, i, -1, 1)) < 0)
			return 1;
	/* any instance ending ends the service: the step sees it die */
	while ((pid = wait(&status)) < 0 && errno == EINTR)
		;
	for (i = 0; i < m.n && pids[i] != pid; i++)
		;
	multi_status(status, how, sizeof(how));
	fprintf(stderr, "benchfleet-agent: work serve: instance %lld (port %lld, pid %d) %s\n",
	    (long long)i, (long long)(m.port + i), (int)pid, how);
	return 1;
}

/* Wait until 127.0.0.1:port accepts; 0, or -1 after MULTI_READY_S. */
static int
multi_ready(int64_t port)
{
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	double end = wl_now() + MULTI_READY_S;
	int ok;

	do {
		if ((ok = multi_accepts(port)) < 0)
			return -1;
		if (ok)
			return 0;
		nanosleep(&nap, NULL);
	} while (wl_now() < end);
	return -1;
}

/* Field f (0-based) of a CSV line, quotes stripped, into out. */
static int
multi_field(const char *line, int f, char *out, size_t outsz)
{
	const char *s = line, *e;
	size_t n;
	int i;

	for (i = 0; i < f; i++) {
		if ((s = strchr(s, ',')) == NULL)
			return -1;
		s++;
	}
	e = s + strcspn(s, ",\r\n");
	if (e > s && *s == '"') {
		s++;
		if (e > s && e[-1] == '"')
			e--;
	}
	n = (size_t)(e - s);
	if (n >= outsz)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

struct multi_row {
	char key[64];
	double sum;
	int64_t seen;
};

/* Add one instance's CSV into rows; 0, or -1 without the column. */
static int
multi_csv(char *text, const char *col, struct multi_row *rows, int *nrows)
{
	char f[128], *line, *save = NULL;
	int c = -1, i, k;
	double v;

	if ((line = strtok_r(text, "\n", &save)) == NULL)
		return -1;
	for (i = 0; multi_field(line, i, f, sizeof(f)) == 0; i++)
		if (strcmp(f, col) == 0) {
			c = i;
			break;
		}
	if (c < 0)
		return -1;
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		char key[64];

		if (multi_field(line, 0, key, sizeof(key)) != 0 ||
		    multi_field(line, c, f, sizeof(f)) != 0 || parse_double(f, &v) != 0)
			continue;
		for (k = 0; k < *nrows && strcmp(rows[k].key, key) != 0; k++)
			;
		if (k == *nrows) {
			if (*nrows == MULTI_MAX_ROWS)
				continue;
			snprintf(rows[k].key, sizeof(rows[k].key), "%s", key);
			(*nrows)++;
		}
		rows[k].sum += v;
		rows[k].seen++;
	}
	return 0;
}

/* The number after the last token in text; -1 when there is none. */
static int
multi_after(const char *text, const char *token, double *v)
{
	const char *p = NULL, *q;
	char num[64];
	size_t n;

	for (q = text; (q = strstr(q, token)) != NULL; q++)
		p = q;
	if (p == NULL || token[0] == '\0')
		return -1;
	p += strlen(token);
	n = strspn(p, "0123456789.");
	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, p, n);
	num[n] = '\0';
	return parse_double(num, v);
}

/* Read file f (from the start) into a malloc'd NUL-terminated buffer. */
static char *
multi_slurp(FILE *f)
{
	char *b = malloc(MULTI_MAX_OUT + 1);
	size_t n;

	if (b == NULL)
		return NULL;
	rewind(f);
	n = fread(b, 1, MULTI_MAX_OUT, f);
	b[n] = '\0';
	return b;
}

int
multi_fanout(int argc, char **argv)
{
	struct multi_opts m = { .cpus_per = 1 };
	struct multi_row rows[MULTI_MAX_ROWS];
	FILE *outs[MULTI_MAX_INSTANCES] = { NULL };
	pid_t pids[MULTI_MAX_INSTANCES];
	int statuses[MULTI_MAX_INSTANCES];
	int64_t i, started = 0;
	int r, nrows = 0, failed = 0;
	double total = 0, v;
	char *text, how[64], why[MULTI_MAX_WHY + 1];

	memset(rows, 0, sizeof(rows));
	if ((r = multi_parse("fanout", argc, argv, &m)) != 0)
		return r;
	if ((m.sum_csv == NULL) == (m.sum_after == NULL)) {
		fprintf(stderr, "benchfleet-agent: work fanout: needs one of --sum-csv COLUMN, "
		    "--sum-after TOKEN\n");
		return WL_EXIT_USAGE;
	}
	for (i = 0; i < m.n; i++)
		if (multi_ready(m.port + i) != 0) {
			fprintf(stderr, "benchfleet-agent: work fanout: 127.0.0.1:%lld (instance "
			    "%lld) did not accept within %d s\n", (long long)(m.port + i),
			    (long long)i, MULTI_READY_S);
			return 1;
		}
	r = 1;
	for (i = 0; i < m.n; i++) {
		if ((outs[i] = tmpfile()) == NULL ||
		    (pids[i] = multi_spawn("fanout", &m, i, fileno(outs[i]), 0)) < 0) {
			fprintf(stderr, "benchfleet-agent: work fanout: instance %lld: %s\n",
			    (long long)i, strerror(errno));
			failed = 1;
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++) {
		while (waitpid(pids[i], &statuses[i], 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(statuses[i]) || WEXITSTATUS(statuses[i]) != 0)
			failed = 1;
	}
	for (i = 0; i < started; i++) {
		if ((text = multi_slurp(outs[i])) == NULL) {
			failed = 1;
			continue;
		}
		fprintf(stderr, "--- instance %lld (port %lld)\n%.4096s\n", (long long)i,
		    (long long)(m.port + i), text);
		/* the status and the client's own last words in one line: the
		 * run's reason must say why, not only that (memcaslap's "Bad
		 * configuration file" was lost in a cut log) */
		if (!WIFEXITED(statuses[i]) || WEXITSTATUS(statuses[i]) != 0) {
			multi_status(statuses[i], how, sizeof(how));
			multi_last_line(text, why, sizeof(why));
			fprintf(stderr, "benchfleet-agent: work fanout: instance %lld (port %lld) %s%s%s\n",
			    (long long)i, (long long)(m.port + i), how, why[0] != '\0' ? ": " : "",
			    why);
		}
		if (!failed && m.sum_after != NULL) {
			if (multi_after(text, m.sum_after, &v) != 0) {
				fprintf(stderr, "benchfleet-agent: work fanout: instance %lld: no "
				    "number after \"%s\"\n", (long long)i, m.sum_after);
				failed = 1;
			} else
				total += v;
		} else if (!failed && multi_csv(text, m.sum_csv, rows, &nrows) != 0) {
			fprintf(stderr, "benchfleet-agent: work fanout: instance %lld: no CSV column "
			    "\"%s\"\n", (long long)i, m.sum_csv);
			failed = 1;
		}
		free(text);
	}
	if (failed)
		goto out;
	fprintf(stderr, "instances: %lld\n", (long long)m.n);
	if (m.sum_after != NULL)
		printf("%s%.2f\n", m.sum_after, total);
	else {
		printf("\"test\",\"%s\"\n", m.sum_csv);
		for (i = 0; i < nrows; i++) {
			if (rows[i].seen != m.n) {
				fprintf(stderr, "benchfleet-agent: work fanout: row \"%s\" in %lld of "
				    "%lld outputs\n", rows[i].key, (long long)rows[i].seen,
				    (long long)m.n);
				goto out;
			}
			printf("\"%s\",\"%.2f\"\n", rows[i].key, rows[i].sum);
		}
	}
	r = 0;
out:
	for (i = 0; i < m.n; i++)
		if (outs[i] != NULL)
			fclose(outs[i]);
	return r;
}
