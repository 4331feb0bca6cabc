/*
 * agent_test_work.c: the built-in workloads' options (issue 20, honest
 * built-ins), run through the real agent binary: --thp gives the memory
 * the THP mode asked for (the workload's own AnonHugePages, read from
 * /proc/self/smaps_rollup while mapped), gups threads take disjoint runs
 * of one HPCC stream, ebizzy's record options, pagefault's lmbench
 * mode against the file mode, and serve/fanout (N servers pinned, N
 * clients summed).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parse.h"
#include "t.h"

static const char *agent;
static char out[16384];		/* stdout and stderr of the last run */

/* Run `agent work ARGS...` (NULL-terminated); its exit status, out its output. */
static int
work(const char *const *args)
{
	char of[] = "/tmp/bf-work-test.XXXXXX";
	const char *av[32];
	int fd, status, i;
	ssize_t n;
	pid_t pid;

	if ((fd = mkstemp(of)) < 0)
		return -1;
	av[0] = agent;
	av[1] = "work";
	for (i = 0; args[i] != NULL && i < 29; i++)
		av[i + 2] = args[i];
	av[i + 2] = NULL;
	if ((pid = fork()) == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		execv(agent, (char *const *)av);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		close(fd);
		unlink(of);
		return -1;
	}
	n = pread(fd, out, sizeof(out) - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(of);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The number after "key: " in out, or -1. */
static double
num(const char *key)
{
	char pat[64], tok[64];
	const char *p;
	double v;
	size_t n;

	snprintf(pat, sizeof(pat), "%s: ", key);
	if ((p = strstr(out, pat)) == NULL)
		return -1;
	p += strlen(pat);
	n = strcspn(p, "\n");
	if (n >= sizeof(tok))
		return -1;
	memcpy(tok, p, n);
	tok[n] = '\0';
	return parse_double(tok, &v) == 0 ? v : -1;
}

/* The host's THP mode: the bracketed word of enabled. */
static void
thp_mode(char *buf, size_t bufsz)
{
	char line[128], *a, *b;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	snprintf(buf, bufsz, "absent");
	if (f == NULL)
		return;
	if (fgets(line, sizeof(line), f) != NULL && (a = strchr(line, '[')) != NULL &&
	    (b = strchr(a, ']')) != NULL) {
		*b = '\0';
		snprintf(buf, bufsz, "%s", a + 1);
	}
	fclose(f);
}

static void
test_thp(void)
{
	static const char *const bad[] = { "touch", "--mb", "4", "--thp", "always", NULL };
	static const char *const noval[] = { "dtlb", "--pages", "4", "--iters", "1", "--thp",
		NULL };
	static const char *const mad[] = { "touch", "--mb", "16", "--thp", "madvise", NULL };
	static const char *const noh[] = { "touch", "--mb", "16", "--thp", "nohugepage", NULL };
	static const char *const dt[] = { "dtlb", "--pages", "4096", "--iters", "2", "--thp",
		"madvise", NULL };
	static const char *const bt[] = { "btree", "--keys", "200000", "--lookups", "20000",
		"--threads", "2", "--thp", "madvise", NULL };
	static const char *const btn[] = { "btree", "--keys", "200000", "--lookups", "20000",
		"--threads", "2", "--thp", "nohugepage", NULL };
	char mode[32];

	T_EQ_INT(work(bad), 2);
	T_CONTAINS(out, "--thp \"always\" is not one of none, madvise, nohugepage");
	T_EQ_INT(work(noval), 2);
	T_CONTAINS(out, "--thp needs a value");
	thp_mode(mode, sizeof(mode));
	fprintf(stderr, "host THP enabled: %s\n", mode);
	/* 16 MiB 2 MiB-aligned: 8 huge pages where the system allows madvise */
	T_EQ_INT(work(mad), 0);
	if (strcmp(mode, "madvise") == 0 || strcmp(mode, "always") == 0)
		T_CHECK(num("anon_huge_kb") >= 2048);
	else
		T_EQ_INT((long)num("anon_huge_kb"), 0);
	/* refused even under always */
	T_EQ_INT(work(noh), 0);
	T_EQ_INT((long)num("anon_huge_kb"), 0);
	T_CHECK(num("faults") >= 4096);
	T_EQ_INT(work(dt), 0);
	T_CHECK(num("ns_per_touch") > 0);
	if (strcmp(mode, "madvise") == 0 || strcmp(mode, "always") == 0)
		T_CHECK(num("anon_huge_kb") >= 2048);
	T_EQ_INT(work(bt), 0);
	T_CHECK(num("lookups_per_s") > 0);
	T_CHECK(num("nodes") > 200000 / 31.0);
	/* the tree's arena (~6 MiB) is madvised: huge pages back it */
	if (strcmp(mode, "madvise") == 0 || strcmp(mode, "always") == 0)
		T_CHECK(num("anon_huge_kb") >= 2048);
	T_EQ_INT(work(btn), 0);
	T_EQ_INT((long)num("anon_huge_kb"), 0);
}

static void
test_gups(void)
{
	static const char *const one[] = { "gups", "--log2", "16", "--updates", "300001", NULL };
	static const char *const four[] = { "gups", "--log2", "16", "--updates", "300001",
		"--threads", "4", "--mode", "disjoint", NULL };
	static const char *const three[] = { "gups", "--log2", "16", "--updates", "1000",
		"--threads", "3", "--mode", "disjoint", NULL };
	static const char *const whole[] = { "gups", "--log2", "16", "--updates", "300001",
		"--threads", "3", "--thp", "madvise", NULL };
	static const char *const big[] = { "gups", "--log2", "20", "--updates", "100000",
		"--threads", "2", "--mode", "disjoint", "--thp", "madvise", NULL };
	static const char *const badmode[] = { "gups", "--log2", "16", "--updates", "10",
		"--mode", "half", NULL };
	char x1[64], mode[32];

	T_EQ_INT(work(one), 0);
	T_EQ_INT((long)num("errors"), 0);
	T_EQ_INT((long)num("threads"), 1);
	T_CHECK(num("gups") > 0);
	snprintf(x1, sizeof(x1), "%s", strstr(out, "table_xor: ") ? strstr(out, "table_xor: ") : "");
	x1[strcspn(x1, "\n")] = '\0';
	T_CHECK(strlen(x1) == strlen("table_xor: ") + 16);
	/* four threads, each a disjoint run of the same stream, into its own
	 * slice: the table's xor is the stream's, as with one thread, and no
	 * update is lost */
	T_EQ_INT(work(four), 0);
	T_EQ_INT((long)num("errors"), 0);
	T_EQ_INT((long)num("threads"), 4);
	T_CONTAINS(out, x1);
	/* whole table, unsynchronised: within HPCC's 1% of lost updates */
	T_EQ_INT(work(whole), 0);
	T_CHECK(num("errors") >= 0 && num("errors") <= 655);
	T_CHECK(num("gups") > 0);
	/* a table of 8 MiB, madvised: huge pages where the system allows madvise */
	thp_mode(mode, sizeof(mode));
	T_EQ_INT(work(big), 0);
	T_EQ_INT((long)num("errors"), 0);
	if (strcmp(mode, "madvise") == 0 || strcmp(mode, "always") == 0)
		T_CHECK(num("anon_huge_kb") >= 2048);
	T_EQ_INT(work(three), 2);
	T_CONTAINS(out, "needs --threads a power of two");
	T_EQ_INT(work(badmode), 2);
	T_CONTAINS(out, "--mode \"half\" is not one of whole, disjoint");
}

static void
test_ebizzy(void)
{
	static const char *const ok[] = { "ebizzy", "--chunks", "4", "--seconds", "1",
		"--chunk-kb", "64", "--record-size", "64", "--searches", "50", "--threads", "2",
		NULL };
	static const char *const odd[] = { "ebizzy", "--chunks", "4", "--seconds", "1",
		"--chunk-kb", "64", "--record-size", "24", NULL };
	static const char *const mad[] = { "ebizzy", "--chunks", "2", "--seconds", "1",
		"--chunk-kb", "2048", "--thp", "madvise", NULL };
	char tok[64], mode[32];
	double v = 0;
	size_t n;

	T_EQ_INT(work(ok), 0);
	/* 64 KiB of 64-byte records */
	T_EQ_INT((long)num("records_per_chunk"), 1024);
	/* "N records/s", ebizzy's line, first */
	n = strcspn(out, " ");
	T_CHECK(n < sizeof(tok));
	snprintf(tok, sizeof(tok), "%.*s", (int)n, out);
	T_CHECK(parse_double(tok, &v) == 0 && v > 0);
	T_CHECK(strncmp(out + n, " records/s\n", 11) == 0);
	T_EQ_INT(work(odd), 2);
	T_CONTAINS(out, "--record-size 24 must be a multiple of 8 that divides the chunk");
	T_EQ_INT(work(mad), 0);
	T_EQ_INT((long)num("records_per_chunk"), 262144);
	/* two 2 MiB chunks, madvised: huge pages where the system allows madvise */
	thp_mode(mode, sizeof(mode));
	if (strcmp(mode, "madvise") == 0 || strcmp(mode, "always") == 0)
		T_CHECK(num("anon_huge_kb") >= 2048);
	T_EQ_INT(work(ok), 0);
	if (strcmp(mode, "madvise") == 0)
		T_EQ_INT((long)num("anon_huge_kb"), 0);
}

/* lmbench re-maps the file every pass, so its faults are passes times the
 * file mode's single pass; its bare map cost is measured and taken off. */
static void
test_pagefault(void)
{
	static const char *const file[] = { "pagefault", "--mb", "16", "--mode", "file", NULL };
	static const char *const lm[] = { "pagefault", "--mb", "16", "--mode", "lmbench",
		"--passes", "4", NULL };
	static const char *const bad[] = { "pagefault", "--mb", "16", "--mode", "file",
		"--passes", "4", NULL };
	static const char *const anon[] = { "pagefault", "--mb", "16", "--mode", "anon",
		"--thp", "nohugepage", NULL };
	double ff, lf;

	T_EQ_INT(work(file), 0);
	ff = num("faults");
	T_CHECK(ff > 0 && num("pagefault_us") > 0);
	T_CHECK(strstr(out, "mmap_us") == NULL);
	T_EQ_INT(work(lm), 0);
	lf = num("faults");
	fprintf(stderr, "faults: file %.0f, lmbench x4 %.0f\n", ff, lf);
	T_CHECK(lf >= 3.5 * ff && lf <= 4.5 * ff + 64);
	T_CHECK(num("mmap_us") > 0);
	T_CHECK(num("pagefault_us") >= 0);
	/* the map cost is taken off: below the raw figure, by mmap_us per pass */
	T_CHECK(num("pagefault_us") < num("raw_us"));
	T_NEAR(num("raw_us") - num("pagefault_us"), num("mmap_us") * 4 / (16.0 * 256 * 4), 0.001);
	T_EQ_INT(work(bad), 2);
	T_CONTAINS(out, "--passes is for --mode lmbench");
	T_EQ_INT(work(anon), 0);
	T_CHECK(num("faults") >= 4096);
	T_EQ_INT((long)num("anon_huge_kb"), 0);
}

/* Two listening loopback ports in a row; the first, or -1. */
static int
two_ports(int fds[2])
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int p, i;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (p = 31000 + (int)(getpid() % 20000); p < 65000; p += 7) {
		for (i = 0; i < 2; i++) {
			int one = 1;

			fds[i] = socket(AF_INET, SOCK_STREAM, 0);
			setsockopt(fds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			sa.sin_port = htons((uint16_t)(p + i));
			if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
			    listen(fds[i], 8) != 0)
				break;
		}
		if (i == 2)
			return p;
		while (i >= 0) {
			if (fds[i] >= 0)
				close(fds[i]);
			i--;
		}
	}
	return -1;
}

/* fanout sums what each instance printed, with "%PORT%" its own port;
 * serve pins each instance to its CPUs. */
static void
test_multi(void)
{
	char bp[16], want[128];
	int fds[2], port = two_ports(fds), i;
	cpu_set_t have;

	T_CHECK(port > 0);
	if (port < 0)
		return;
	snprintf(bp, sizeof(bp), "%d", port);
	{
		const char *const after[] = { "fanout", "--instances", "2", "--base-port", bp,
			"--sum-after", "TPS: ", "--", agent, "work", "echo", "x TPS: 12.5 y",
			"TPS: %PORT%", NULL };
		const char *const csv[] = { "fanout", "--instances", "2", "--base-port", bp,
			"--sum-csv", "rps", "--", agent, "work", "echo", "\"test\",\"rps\",\"p50\"",
			"\"SET\",\"10.5\",\"1\"", "\"GET\",\"%PORT%\",\"1\"", NULL };
		const char *const miss[] = { "fanout", "--instances", "2", "--base-port", bp,
			"--sum-csv", "qps", "--", agent, "work", "echo", "\"test\",\"rps\"", NULL };
		const char *const fails[] = { "fanout", "--instances", "2", "--base-port", bp,
			"--sum-after", "TPS: ", "--", agent, "work", "nosuch", NULL };
		const char *const both[] = { "fanout", "--instances", "1", "--base-port", bp,
			"--", agent, "work", "echo", NULL };
		const char *const taken[] = { "serve", "--instances", "2", "--base-port", bp,
			"--", agent, "work", "echo", "taken-marker", NULL };
		char script[160];
		const char *const twin[] = { "fanout", "--instances", "2", "--base-port", bp,
			"--sum-after", "TPS: ", "--", "/bin/sh", "-c", script, "sh", "%PORT%", NULL };

		/* instance 1 (port+1) fails as memcaslap did; instance 0 succeeds */
		snprintf(script, sizeof(script), "if [ \"$1\" = %d ]; then echo 'TPS: 5'; "
		    "else echo 'servers: x' >&2; echo 'Bad configuration file, no configuration "
		    "find.' >&2; echo; exit 3; fi", port);

		/* the last "TPS: " of each: its own port */
		T_EQ_INT(work(after), 0);
		snprintf(want, sizeof(want), "TPS: %d.00", 2 * port + 1);
		T_CONTAINS(out, want);
		T_CONTAINS(out, "instances: 2");
		T_EQ_INT(work(csv), 0);
		T_CONTAINS(out, "\"test\",\"rps\"\n\"SET\",\"21.00\"\n");
		snprintf(want, sizeof(want), "\"GET\",\"%d.00\"", 2 * port + 1);
		T_CONTAINS(out, want);
		T_EQ_INT(work(miss), 1);
		T_CONTAINS(out, "instance 0: no CSV column \"qps\"");
		T_EQ_INT(work(fails), 1);
		T_CONTAINS(out, "instance 0 (port");
		/* one twin failing: named with its port, how it ended and its
		 * last words (memcaslap racing its twin on ~/.memslap.cnf said
		 * "Bad configuration file" and exit 1; the run said "status 256") */
		T_EQ_INT(work(twin), 1);
		snprintf(want, sizeof(want), "instance 1 (port %d) exited with status 3: "
		    "Bad configuration file, no configuration find.\n", port + 1);
		T_CONTAINS(out, want);
		T_CHECK(strstr(out, "instance 0 (port") == NULL || strstr(out, "--- instance 0") != NULL);
		snprintf(want, sizeof(want), "instance 0 (port %d) exited", port);
		T_CHECK(strstr(out, want) == NULL);
		T_EQ_INT(work(both), 2);
		T_CONTAINS(out, "needs one of --sum-csv COLUMN, --sum-after TOKEN");
		/* serve on ports another server holds refuses, naming the port,
		 * before starting anything (the clients would load that server) */
		T_EQ_INT(work(taken), 1);
		snprintf(want, sizeof(want), "work serve: 127.0.0.1:%d (instance 0) already accepts "
		    "connections", port);
		T_CONTAINS(out, want);
		T_CHECK(strstr(out, "taken-marker") == NULL);
	}
	close(fds[0]);
	close(fds[1]);
	{
		const char *const pin[] = { "serve", "--instances", "1", "--base-port", "1",
			"--cpus-per", "1", "--", "grep", "Cpus_allowed_list", "/proc/self/status", NULL };
		const char *const nodash[] = { "serve", "--instances", "1", "--base-port", "1",
			"grep", NULL };
		const char *const wide[] = { "serve", "--instances", "2", "--base-port", "65535",
			"--", "true", NULL };

		/* instance 0 on the first CPU this process may use; then it ends */
		T_OK(sched_getaffinity(0, sizeof(have), &have));
		for (i = 0; i < CPU_SETSIZE && !CPU_ISSET(i, &have); i++)
			;
		T_EQ_INT(work(pin), 1);
		snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d\n", i);
		T_CONTAINS(out, want);
		/* the instance that ended is named with its port and how it ended */
		T_CONTAINS(out, "work serve: instance 0 (port 1, pid ");
		T_CONTAINS(out, ") exited with status 0\n");
		T_EQ_INT(work(nodash), 2);
		T_CONTAINS(out, "needs -- and the program to run");
		T_EQ_INT(work(wide), 2);
		T_CONTAINS(out, "ports 65535..65536 go past 65535");
	}
	{
		/* --env: in the instances' environment, checked before anything runs */
		const char *const env[] = { "serve", "--instances", "1", "--base-port", "1",
			"--env", "MALLOC_CONF=thp:always", "--env", "BF_T2=x y", "--", "env",
			NULL };
		const char *const badname[] = { "serve", "--instances", "1", "--base-port", "1",
			"--env", "1X=y", "--", "true", NULL };
		const char *const noeq[] = { "serve", "--instances", "1", "--base-port", "1",
			"--env", "MALLOC_CONF", "--", "true", NULL };
		const char *const ctl[] = { "serve", "--instances", "1", "--base-port", "1",
			"--env", "A=b\nLD_PRELOAD=/tmp/x.so", "--", "true", NULL };

		T_CHECK(getenv("MALLOC_CONF") == NULL);
		T_EQ_INT(work(env), 1);
		T_CONTAINS(out, "\nMALLOC_CONF=thp:always\n");
		T_CONTAINS(out, "\nBF_T2=x y\n");
		T_EQ_INT(work(badname), 2);
		T_CONTAINS(out, "--env \"1X=y\": expected NAME=VALUE");
		T_EQ_INT(work(noeq), 2);
		T_CONTAINS(out, "expected NAME=VALUE");
		T_EQ_INT(work(ctl), 2);
		T_CONTAINS(out, "no control bytes");
	}
}

int
main(void)
{
	agent = getenv("BF_AGENT");
	if (agent == NULL) {
		fprintf(stderr, "BF_AGENT must name the built benchfleet-agent\n");
		return 1;
	}
	test_thp();
	test_gups();
	test_ebizzy();
	test_pagefault();
	test_multi();
	return t_done();
}
