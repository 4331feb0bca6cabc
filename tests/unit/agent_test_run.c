/*
 * agent_test_run.c: runs the built benchfleet-agent (path in $BF_AGENT)
 * with steps on stdin and checks its JSON-lines output: hello, iterations
 * and warmup flags, exit codes, metrics, timeouts, exec failure, hostile
 * argv elements arriving literally, and that no workload process outlives
 * the agent (timeout, straggler, SIGTERM, stdout hangup).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "ajson.h"
#include "caps.h"
#include "parse.h"
#include "t.h"

#define RUN_MAX_LINES	1024

static const char *agent;
/* Private scratch directory, so parallel runs of this test do not collide. */
static char tmpdir[] = "/tmp/bf-agent-test.XXXXXX";

struct out {
	struct ajson *line[RUN_MAX_LINES];
	size_t n;
	int status;		/* exit status of the agent, -1 if killed */
	double secs;		/* how long the agent ran */
	struct buf raw;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
out_free(struct out *o)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		ajson_free(o->line[i]);
	buf_free(&o->raw);
	memset(o, 0, sizeof(*o));
}

/* Start the agent with `step`; *inw and *outr are our pipe ends. */
static pid_t
spawn(int *inw, int *outr)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(agent, agent, "step", (char *)NULL);
		_exit(126);
	}
	close(in[0]);
	close(out[1]);
	*inw = in[1];
	*outr = out[0];
	return pid;
}

static void
write_all(int fd, const char *s, size_t len)
{
	ssize_t n;

	while (len > 0 && (n = write(fd, s, len)) > 0) {
		s += n;
		len -= (size_t)n;
	}
}

/* Split raw output into parsed lines; every line must be valid JSON. */
static void
split_lines(struct out *o)
{
	char *p = o->raw.data, *nl;

	if (p == NULL)
		return;
	T_CHECK(o->raw.len == 0 || o->raw.data[o->raw.len - 1] == '\n');
	while ((nl = strchr(p, '\n')) != NULL && o->n < RUN_MAX_LINES) {
		struct ajson *j = NULL;
		int r = ajson_parse(p, (size_t)(nl - p), &j, NULL);

		if (r != 0)
			fprintf(stderr, "bad output line: %.*s\n", (int)(nl - p), p);
		T_EQ_INT(r, 0);
		T_CHECK(j == NULL || ajson_get(j, "type") != NULL);
		if (j != NULL)
			o->line[o->n++] = j;
		p = nl + 1;
	}
}

static void
run(const char *step, struct out *o)
{
	char chunk[4096];
	int inw, outr, st;
	double t0 = now_s();
	ssize_t n;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	buf_init(&o->raw, 0);
	pid = spawn(&inw, &outr);
	T_CHECK(pid > 0);
	if (pid <= 0)
		return;
	write_all(inw, step, strlen(step));
	close(inw);
	while ((n = read(outr, chunk, sizeof(chunk))) > 0)
		T_OK(buf_append(&o->raw, chunk, (size_t)n));
	close(outr);
	waitpid(pid, &st, 0);
	o->secs = now_s() - t0;
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	split_lines(o);
}

static const char *
type_of(const struct ajson *j)
{
	const struct ajson *t = ajson_get(j, "type");

	return t != NULL && t->type == AJSON_STR ? t->str : "";
}

/* The k-th line of a type, or NULL. */
static const struct ajson *
nth(const struct out *o, const char *type, size_t k)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (strcmp(type_of(o->line[i]), type) == 0 && k-- == 0)
			return o->line[i];
	return NULL;
}

static size_t
count(const struct out *o, const char *type)
{
	size_t i, c = 0;

	for (i = 0; i < o->n; i++)
		c += strcmp(type_of(o->line[i]), type) == 0;
	return c;
}

static int64_t
get_int(const struct ajson *j, const char *key)
{
	const struct ajson *v = ajson_get(j, key);

	return v != NULL && v->type == AJSON_NUM && v->is_int ? v->i : INT64_MIN;
}

static int
get_bool(const struct ajson *j, const char *key)
{
	const struct ajson *v = ajson_get(j, key);

	return v != NULL && v->type == AJSON_BOOL ? v->boolean : -1;
}

static const char *
get_str(const struct ajson *j, const char *key)
{
	const struct ajson *v = ajson_get(j, key);

	return v != NULL && v->type == AJSON_STR ? v->str : NULL;
}

/* The stream ends with exactly one done line, last. */
static void
check_done(const struct out *o, int ok, int64_t iters, int status)
{
	const struct ajson *d = nth(o, "done", 0);

	T_EQ_INT(count(o, "done"), 1);
	T_CHECK(o->n > 0 && d == o->line[o->n - 1]);
	T_EQ_INT(get_bool(d, "ok"), ok);
	T_EQ_INT(get_int(d, "iterations"), iters);
	T_EQ_INT(o->status, status);
}

/* No such process, or only a zombie waiting for its (new) parent. */
static int
gone(pid_t pid)
{
	char path[64], stat[256];
	double t0 = now_s();
	ssize_t n;
	int fd;

	while (now_s() - t0 < 3.0) {
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return 1;
		snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
		if ((fd = open(path, O_RDONLY)) >= 0) {
			n = read(fd, stat, sizeof(stat) - 1);
			close(fd);
			if (n > 0) {
				char *rp;

				stat[n] = '\0';
				if ((rp = strrchr(stat, ')')) != NULL && rp[1] == ' ' && rp[2] == 'Z')
					return 1;
			}
		}
		usleep(20000);
	}
	return 0;
}

static pid_t
log_pid(const struct ajson *log)
{
	const char *s = get_str(log, "line");
	int64_t v;

	if (s == NULL || parse_i64(s, 2, INT32_MAX, &v) != 0)
		return -1;
	return (pid_t)v;
}

static void
test_basic(void)
{
	struct out o;
	const struct ajson *h, *it, *m, *v;
	size_t i;

	run("{\"run\":5,\"argv\":[\"@agent\",\"work\",\"cpu\",\"--loops\",\"200000\"],"
	    "\"iterations\":2,\"warmup\":1,\"timeout_s\":30,"
	    "\"metrics\":[{\"name\":\"lps\",\"source\":\"stdout\",\"regex\":\"loops/s: ([0-9.,]+)\"},"
	    "{\"name\":\"nope\",\"source\":\"stderr\",\"regex\":\"never (here)\"}]}", &o);
	h = o.line[0];
	T_CHECK(o.n > 0);
	T_EQ_STR(type_of(h), "hello");
	T_EQ_STR(get_str(h, "agent"), "0.1.0");
	T_CHECK(get_str(h, "hostname") != NULL && get_str(h, "hostname")[0] != '\0');
	T_CHECK(get_str(h, "kernel") != NULL && get_str(h, "kernel")[0] != '\0');
	T_CHECK(get_str(h, "arch") != NULL && get_str(h, "arch")[0] != '\0');
	T_CHECK(get_str(h, "boot_id") != NULL && strlen(get_str(h, "boot_id")) == 36);
	T_CHECK(get_str(h, "cmdline") != NULL);
	T_CHECK(get_int(h, "pid") > 1);
	T_EQ_INT(count(&o, "hello"), 1);
	T_EQ_INT(count(&o, "iteration"), 3);
	T_EQ_INT(count(&o, "error"), 0);
	for (i = 0; i < 3; i++) {
		it = nth(&o, "iteration", i);
		T_EQ_INT(get_int(it, "iteration"), i);
		T_EQ_INT(get_bool(it, "warmup"), i == 0);
		T_EQ_INT(get_int(it, "exit"), 0);
		T_EQ_INT(get_int(it, "signal"), 0);
		T_EQ_INT(get_bool(it, "timeout"), 0);
		v = ajson_get(it, "wall_s");
		T_CHECK(v != NULL && v->type == AJSON_NUM && v->num > 0 && v->num < 30);
		T_CHECK(ajson_get(it, "user_s") != NULL && ajson_get(it, "sys_s") != NULL);
		T_CHECK(get_int(it, "maxrss_kb") > 0);
		m = ajson_get(it, "metrics");
		v = ajson_get(m, "lps");
		T_CHECK(v != NULL && v->type == AJSON_NUM && v->num > 0);
		T_CHECK(ajson_get(m, "nope") == NULL);
		v = ajson_get(it, "missing");
		T_CHECK(v != NULL && v->type == AJSON_ARR && v->n == 1 &&
		    v->items[0]->type == AJSON_STR && strcmp(v->items[0]->str, "nope") == 0);
		T_CHECK(ajson_get(it, "error") == NULL);
	}
	/* the log line of iteration 1 comes before the iteration line */
	T_EQ_INT(get_int(nth(&o, "log", 1), "iteration"), 1);
	T_EQ_STR(get_str(nth(&o, "log", 1), "stream"), "stdout");
	check_done(&o, 1, 2, 0);
	out_free(&o);
}

static void
test_exit_codes(void)
{
	char path[128], step[512];
	struct out o;
	const struct ajson *it;

	run("{\"run\":1,\"argv\":[\"sh\",\"-c\",\"exit 3\"],\"iterations\":1,\"timeout_s\":10}", &o);
	it = nth(&o, "iteration", 0);
	T_EQ_INT(get_int(it, "exit"), 3);
	T_EQ_INT(get_int(it, "signal"), 0);
	check_done(&o, 0, 1, 1);
	out_free(&o);

	run("{\"run\":1,\"argv\":[\"sh\",\"-c\",\"kill -9 $$\"],\"iterations\":2,\"timeout_s\":10}", &o);
	it = nth(&o, "iteration", 1);
	T_EQ_INT(get_int(it, "signal"), SIGKILL);
	T_EQ_INT(get_int(it, "exit"), 128 + SIGKILL);
	T_EQ_INT(get_bool(it, "timeout"), 0);
	check_done(&o, 0, 2, 1);
	out_free(&o);

	/* a failing warmup does not make the step fail */
	snprintf(path, sizeof(path), "%s/warm", tmpdir);
	snprintf(step, sizeof(step), "{\"run\":1,\"argv\":[\"sh\",\"-c\",\"test -e %s || "
	    "{ touch %s; exit 1; }\"],\"iterations\":1,\"warmup\":1,\"timeout_s\":10}", path, path);
	run(step, &o);
	T_EQ_INT(get_int(nth(&o, "iteration", 0), "exit"), 1);
	T_EQ_INT(get_int(nth(&o, "iteration", 1), "exit"), 0);
	check_done(&o, 1, 1, 0);
	unlink(path);
	out_free(&o);
}

static void
test_metrics(void)
{
	struct out o;
	const struct ajson *m, *v;

	run("{\"run\":1,\"argv\":[\"sh\",\"-c\",\"echo 'total: 1,234,567.5 ops/s'; echo lat=42 >&2; "
	    "echo 'bad: 1.2.3'\"],\"iterations\":1,\"timeout_s\":10,\"metrics\":["
	    "{\"name\":\"ops\",\"source\":\"stdout\",\"regex\":\"total: ([0-9.,]+) ops/s\"},"
	    "{\"name\":\"lat\",\"source\":\"stderr\",\"regex\":\"lat=([0-9]+)\"},"
	    "{\"name\":\"wrongstream\",\"source\":\"stdout\",\"regex\":\"lat=([0-9]+)\"},"
	    "{\"name\":\"bad\",\"source\":\"stdout\",\"regex\":\"bad: ([0-9.]+)\"}]}", &o);
	m = ajson_get(nth(&o, "iteration", 0), "metrics");
	v = ajson_get(m, "ops");
	T_CHECK(v != NULL);
	if (v != NULL)
		T_NEAR(v->num, 1234567.5, 0);
	v = ajson_get(m, "lat");
	T_CHECK(v != NULL && v->is_int && v->i == 42);
	v = ajson_get(nth(&o, "iteration", 0), "missing");
	T_CHECK(v != NULL && v->n == 2);
	T_EQ_INT(count(&o, "log"), 3);
	check_done(&o, 1, 1, 0);
	out_free(&o);
}

static void
test_env_cwd(void)
{
	struct out o;

	run("{\"run\":1,\"argv\":[\"sh\",\"-c\",\"echo \\\"$BF_T:$(pwd)\\\"\"],\"iterations\":1,"
	    "\"timeout_s\":10,\"env\":{\"BF_T\":\"hi there\"},\"cwd\":\"/tmp\"}", &o);
	T_EQ_STR(get_str(nth(&o, "log", 0), "line"), "hi there:/tmp");
	check_done(&o, 1, 1, 0);
	out_free(&o);

	/* a missing cwd is reported like an exec failure */
	run("{\"run\":1,\"argv\":[\"true\"],\"iterations\":1,\"timeout_s\":10,"
	    "\"cwd\":\"/nonexistent-bf-dir\"}", &o);
	T_EQ_INT(get_int(nth(&o, "iteration", 0), "exit"), 127);
	T_CONTAINS(get_str(nth(&o, "iteration", 0), "error"), "chdir");
	check_done(&o, 0, 0, 2);
	out_free(&o);
}

/* gap_ms: a pause before each iteration but the first, warmup included;
 * without it the same three iterations of true take milliseconds. */
static void
test_gap(void)
{
	struct out o;

	run("{\"run\":1,\"argv\":[\"true\"],\"iterations\":2,\"warmup\":1,"
	    "\"gap_ms\":200,\"timeout_s\":10}", &o);
	fprintf(stderr, "gap: 3 iterations with gap_ms 200 took %.3f s\n", o.secs);
	T_CHECK(o.secs >= 0.4);
	T_CHECK(nth(&o, "iteration", 2) != NULL);
	check_done(&o, 1, 2, 0);
	out_free(&o);
}

static void
test_timeout(void)
{
	struct out o;
	const struct ajson *it;
	pid_t pid;

	run("{\"run\":1,\"argv\":[\"sh\",\"-c\",\"echo $$; exec sleep 100\"],\"iterations\":1,"
	    "\"timeout_s\":1}", &o);
	T_CHECK(o.secs < 4.0);
	it = nth(&o, "iteration", 0);
	T_EQ_INT(get_bool(it, "timeout"), 1);
	T_EQ_INT(get_int(it, "signal"), SIGKILL);
	T_CHECK(ajson_get(it, "wall_s") != NULL && ajson_get(it, "wall_s")->num >= 1.0 &&
	    ajson_get(it, "wall_s")->num < 3.0);
	pid = log_pid(nth(&o, "log", 0));
	T_CHECK(pid > 0 && gone(pid));
	check_done(&o, 0, 1, 1);
	out_free(&o);

	/* the leader exits at once; the background sleep in its group must die too */
	run("{\"run\":1,\"argv\":[\"sh\",\"-c\",\"sleep 100 & echo $!\"],\"iterations\":1,"
	    "\"timeout_s\":60}", &o);
	T_CHECK(o.secs < 4.0);
	T_EQ_INT(get_int(nth(&o, "iteration", 0), "exit"), 0);
	pid = log_pid(nth(&o, "log", 0));
	T_CHECK(pid > 0 && gone(pid));
	check_done(&o, 1, 1, 0);
	out_free(&o);

	/* one that leaves the group with setsid is still found (we are its
	 * subreaper) and killed; its open stdout does not hold the agent up */
	run("{\"run\":1,\"argv\":[\"sh\",\"-c\",\"setsid sleep 100 & echo $!\"],\"iterations\":1,"
	    "\"timeout_s\":60}", &o);
	T_CHECK(o.secs < 4.0);
	pid = log_pid(nth(&o, "log", 0));
	T_CHECK(pid > 0 && gone(pid));
	check_done(&o, 1, 1, 0);
	out_free(&o);
}

static void
test_missing_binary(void)
{
	char path[128], flag[128], step[512];
	struct out o;
	const struct ajson *it, *e;

	run("{\"run\":1,\"argv\":[\"/nonexistent/bf-no-such-program\",\"x\"],\"iterations\":3,"
	    "\"warmup\":1,\"timeout_s\":10}", &o);
	/* an absolute program that is not there fails before anything runs */
	e = nth(&o, "error", 0);
	T_CONTAINS(get_str(e, "msg"), "argv[0]: \"/nonexistent/bf-no-such-program\" is not an "
	    "executable file on this machine (No such file or directory)");
	T_EQ_INT(count(&o, "iteration"), 0);
	check_done(&o, 0, 0, 2);
	out_free(&o);
	/* found on PATH but gone by exec time is the iteration's error: a
	 * relative name is looked up by execvp, so the same missing program */
	run("{\"run\":1,\"argv\":[\"bf-no-such-program\",\"x\"],\"iterations\":3,"
	    "\"warmup\":1,\"timeout_s\":10}", &o);
	it = nth(&o, "iteration", 0);
	T_EQ_INT(get_int(it, "exit"), 127);
	T_CONTAINS(get_str(it, "error"), "No such file or directory");
	e = nth(&o, "error", 0);
	T_CONTAINS(get_str(e, "msg"), "bf-no-such-program");
	T_EQ_INT(count(&o, "iteration"), 1);
	check_done(&o, 0, 0, 2);
	out_free(&o);

	/* a file without any x bit: EACCES even for root, also via PATH search */
	snprintf(path, sizeof(path), "%s/noexec", tmpdir);
	close(open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
	chmod(path, 0644);
	snprintf(step, sizeof(step), "{\"run\":1,\"argv\":[\"noexec\"],\"iterations\":1,"
	    "\"timeout_s\":10,\"env\":{\"PATH\":\"/nonexistent:%s\"}}", tmpdir);
	run(step, &o);
	T_EQ_INT(get_int(nth(&o, "iteration", 0), "exit"), 127);
	T_CONTAINS(get_str(nth(&o, "error", 0), "msg"), "Permission denied");
	out_free(&o);
	/* an executable text file without #! is not run by /bin/sh behind our back */
	snprintf(flag, sizeof(flag), "%s/pwned", tmpdir);
	{
		char body[256];
		int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

		snprintf(body, sizeof(body), "touch %s\n", flag);
		write_all(fd, body, strlen(body));
		close(fd);
	}
	chmod(path, 0755);
	snprintf(step, sizeof(step), "{\"run\":1,\"argv\":[\"%s\"],\"iterations\":1,"
	    "\"timeout_s\":10}", path);
	run(step, &o);
	T_EQ_INT(get_int(nth(&o, "iteration", 0), "exit"), 127);
	T_CONTAINS(get_str(nth(&o, "error", 0), "msg"), "Exec format error");
	T_CHECK(access(flag, F_OK) != 0);
	unlink(path);
	out_free(&o);
}

static void
test_hostile_argv(void)
{
	static const char *const want[] = { "; touch /tmp/bf-pwned", "$(id)", "a", "b",
	    "`id`", "' \" \\", "&& touch /tmp/bf-pwned #" };
	struct out o;
	size_t i;

	unlink("/tmp/bf-pwned");
	run("{\"run\":1,\"argv\":[\"@agent\",\"work\",\"echo\",\"; touch /tmp/bf-pwned\",\"$(id)\","
	    "\"a\\nb\",\"`id`\",\"' \\\" \\\\\",\"&& touch /tmp/bf-pwned #\"],\"iterations\":1,"
	    "\"timeout_s\":10}", &o);
	T_EQ_INT(count(&o, "log"), sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		T_EQ_STR(get_str(nth(&o, "log", i), "line"), want[i]);
	T_CHECK(access("/tmp/bf-pwned", F_OK) != 0);
	check_done(&o, 1, 1, 0);
	out_free(&o);
}

/* A service whose ready address another server already holds is not
 * started: its readiness check would pass on that server, and the step
 * would measure it (a server left from an earlier step, say). */
static void
test_service_port_taken(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char step[512];
	const char *msg;
	struct out o;
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	T_CHECK(fd >= 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 8) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
		T_CHECK(0);
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(step, sizeof(step), "{\"run\":1,\"argv\":[\"@agent\",\"work\",\"echo\",\"x\"],"
	    "\"iterations\":1,\"timeout_s\":10,\"services\":[{\"argv\":[\"sleep\",\"6179\"],"
	    "\"ready\":{\"tcp\":\"127.0.0.1:%d\",\"timeout_s\":2}}]}", ntohs(sa.sin_port));
	run(step, &o);
	msg = get_str(nth(&o, "error", 0), "msg");
	T_CHECK(msg != NULL);
	snprintf(step, sizeof(step), "services[0]: 127.0.0.1:%d already accepts connections before "
	    "\"sleep\" started", ntohs(sa.sin_port));
	T_CONTAINS(msg ? msg : "", step);
	T_EQ_INT(count(&o, "iteration"), 0);
	out_free(&o);
	close(fd);
}

static void
test_log_caps(void)
{
	struct out o;
	const struct ajson *l;
	char *step;
	size_t n;

	run("{\"run\":1,\"argv\":[\"seq\",\"1\",\"300\"],\"iterations\":1,\"timeout_s\":10}", &o);
	T_EQ_INT(count(&o, "log"), 201);
	T_EQ_STR(get_str(nth(&o, "log", 199), "line"), "200");
	l = nth(&o, "log", 200);
	T_EQ_INT(get_int(l, "dropped"), 100);
	T_EQ_STR(get_str(l, "stream"), "stdout");
	check_done(&o, 1, 1, 0);
	out_free(&o);

	/* a line over BF_MAX_LOG_LINE is cut; the next line is intact */
	step = malloc(BF_MAX_LOG_LINE * 2 + 256);
	T_CHECK(step != NULL);
	if (step == NULL)
		return;
	n = (size_t)snprintf(step, 256, "{\"run\":1,\"argv\":[\"@agent\",\"work\",\"echo\",\"");
	memset(step + n, 'x', BF_MAX_LOG_LINE + 100);
	n += BF_MAX_LOG_LINE + 100;
	snprintf(step + n, 256, "\",\"next\"],\"iterations\":1,\"timeout_s\":10}");
	run(step, &o);
	T_EQ_INT(count(&o, "log"), 2);
	T_CHECK(get_str(nth(&o, "log", 0), "line") != NULL &&
	    strlen(get_str(nth(&o, "log", 0), "line")) == BF_MAX_LOG_LINE);
	T_EQ_STR(get_str(nth(&o, "log", 1), "line"), "next");
	out_free(&o);
	free(step);

	/* binary output still gives valid JSON lines (checked in split_lines) */
	run("{\"run\":1,\"argv\":[\"printf\",\"\\\\377\\\\001\\\\033[1mok\\\\000z\\\\n\"],"
	    "\"iterations\":1,\"timeout_s\":10}", &o);
	T_EQ_INT(count(&o, "log"), 1);
	out_free(&o);
}

static void
test_bad_steps(void)
{
	static const char *const bad[] = {
		"",
		"{",
		"{\"run\":1,\"argv\":[\"true\"],\"iterations\":1,\"timeout_s\":10} trailing",
		"{\"run\":1,\"argv\":[\"true\"],\"iterations\":0,\"timeout_s\":10}",
		"{\"run\":1,\"argv\":\"true\",\"iterations\":1,\"timeout_s\":10}",
	};
	struct out o;
	size_t i;
	char *big;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run(bad[i], &o);
		T_EQ_STR(type_of(o.n > 0 ? o.line[0] : NULL), "hello");
		T_EQ_INT(count(&o, "error"), 1);
		T_EQ_INT(count(&o, "iteration"), 0);
		check_done(&o, 0, 0, 2);
		out_free(&o);
	}
	run("{\"run\":1,\"argv\":[\"true\"],\"iterations\":0,\"timeout_s\":10}", &o);
	T_CONTAINS(get_str(nth(&o, "error", 0), "msg"), "iterations: 0 is out of range");
	out_free(&o);
	/* over BF_MAX_STEP on stdin */
	big = malloc(BF_MAX_STEP + 2);
	T_CHECK(big != NULL);
	if (big == NULL)
		return;
	memset(big, ' ', BF_MAX_STEP + 1);
	big[BF_MAX_STEP + 1] = '\0';
	run(big, &o);
	T_CONTAINS(get_str(nth(&o, "error", 0), "msg"), "larger than");
	check_done(&o, 0, 0, 2);
	out_free(&o);
	free(big);
}

/* Start a long workload, wait for its pid on the log, then call fn. */
static void
kill_case(int how)
{
	const char *step = "{\"run\":1,\"argv\":[\"sh\",\"-c\",\"echo $$; exec sleep 100\"],"
	    "\"iterations\":1,\"timeout_s\":60}";
	char chunk[8192];
	struct buf raw;
	const char *p;
	int inw, outr, st;
	double t0;
	pid_t apid, wpid = -1;
	ssize_t n;
	struct pollfd pfd;

	buf_init(&raw, 0);
	apid = spawn(&inw, &outr);
	T_CHECK(apid > 0);
	if (apid <= 0)
		return;
	write_all(inw, step, strlen(step));
	close(inw);
	t0 = now_s();
	while (wpid < 0 && now_s() - t0 < 5.0) {
		pfd = (struct pollfd){ outr, POLLIN, 0 };
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if ((n = read(outr, chunk, sizeof(chunk))) <= 0)
			break;
		T_OK(buf_append(&raw, chunk, (size_t)n));
		if ((p = strstr(raw.data, "\"line\":\"")) != NULL) {
			int64_t v;
			const char *q = p + 8, *e = strchr(q, '"');

			if (e != NULL && parse_i64_n(q, (size_t)(e - q), 2, INT32_MAX, &v) == 0)
				wpid = (pid_t)v;
		}
	}
	T_CHECK(wpid > 0);
	if (how == 0)
		kill(apid, SIGTERM);
	else
		close(outr);	/* what a dropped SSH link looks like */
	t0 = now_s();
	waitpid(apid, &st, 0);
	T_CHECK(now_s() - t0 < 3.0);
	if (how == 0)
		T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	T_CHECK(wpid > 0 && gone(wpid));
	if (how == 0)
		close(outr);
	buf_free(&raw);
}

static void
test_agent_killed(void)
{
	kill_case(0);
	kill_case(1);
}

static void
test_work_args(void)
{
	static const char *const cmds[] = {
		"work cpu", "work cpu --loops", "work cpu --loops 0", "work cpu --loops -5",
		"work cpu --loops 12x", "work cpu --loops 99999999999999999999",
		"work touch", "work touch --mb 0", "work touch --mb 1 --passes 0",
		"work cpu --bogus 1", "work nosuch",
	};
	char *argv[8], line[128], *save, *tok;
	size_t i;
	int k, st;
	pid_t pid;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(line, sizeof(line), "%s", cmds[i]);
		argv[0] = (char *)agent;
		k = 1;
		for (tok = strtok_r(line, " ", &save); tok != NULL && k < 7;
		    tok = strtok_r(NULL, " ", &save))
			argv[k++] = tok;
		argv[k] = NULL;
		if ((pid = fork()) == 0) {
			int fd = open("/dev/null", O_WRONLY);

			dup2(fd, 2);
			execv(agent, argv);
			_exit(126);
		}
		waitpid(pid, &st, 0);
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 2))
			fprintf(stderr, "work args: %s\n", cmds[i]);
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	}
}

static void
test_touch(void)
{
	struct out o;
	const struct ajson *m, *v;

	run("{\"run\":1,\"argv\":[\"@agent\",\"work\",\"touch\",\"--mb\",\"16\",\"--passes\",\"2\"],"
	    "\"iterations\":1,\"timeout_s\":30,\"metrics\":["
	    "{\"name\":\"pps\",\"source\":\"stdout\",\"regex\":\"pages/s: ([0-9.]+)\"},"
	    "{\"name\":\"faults\",\"source\":\"stdout\",\"regex\":\"faults: ([0-9]+)\"}]}", &o);
	m = ajson_get(nth(&o, "iteration", 0), "metrics");
	v = ajson_get(m, "pps");
	T_CHECK(v != NULL && v->num > 0);
	v = ajson_get(m, "faults");
	/* 4096 pages of first touch (fewer with THP), none on the second pass */
	T_CHECK(v != NULL && v->num >= 1 && v->num < 8192);
	check_done(&o, 1, 1, 0);
	out_free(&o);
}

int
main(void)
{
	agent = getenv("BF_AGENT");
	if (agent == NULL || access(agent, X_OK) != 0) {
		fprintf(stderr, "BF_AGENT must name the built benchfleet-agent\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_basic();
	test_exit_codes();
	test_metrics();
	test_env_cwd();
	test_timeout();
	test_gap();
	test_missing_binary();
	test_hostile_argv();
	test_log_caps();
	test_service_port_taken();
	test_bad_steps();
	test_agent_killed();
	test_work_args();
	test_touch();
	rmdir(tmpdir);
	return t_done();
}
