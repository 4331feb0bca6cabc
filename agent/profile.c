/*
 * profile.c: one extra iteration under `perf record -g` and its artifacts.
 *
 * Hazards: perf record writes a build-id cache under $HOME unless told not
 * to (-N), which would leave state on the lab machine; perf script's text
 * can be far larger than a capture buffer, so it goes to a file in our
 * temporary directory and is folded from there in chunks; "@agent" means
 * /proc/self/exe to exec.c, but under perf that would be perf itself, so
 * the agent's own path is resolved first. On a VM without a hardware PMU
 * there is no cycles event: cpu-clock (a software timer) is used instead;
 * the event used is said on stderr (the run log), and as data in every
 * artifact_end line ("event"), which the coordinator keeps with the run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ajson.h"
#include "b64.h"
#include "buf.h"
#include "caps.h"
#include "emit.h"
#include "fold.h"
#include "profile.h"
#include "sha256.h"

#define PROFILE_DEFAULT_PATH	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define PROFILE_SCRIPT_S	600	/* perf script of one iteration */
#define PROFILE_ARGV_EXTRA	16	/* perf record's own arguments */

/* A regular file we may execute. */
static int
profile_is_exec(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

int
profile_find(struct profile *p, struct bf_diag *d)
{
	const char *path = getenv("PATH"), *s, *e;
	ssize_t n;
	int len;

	memset(p, 0, sizeof(*p));
	if (path == NULL || path[0] == '\0')
		path = PROFILE_DEFAULT_PATH;
	for (s = path; *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		if ((e = strchr(s, ':')) == NULL)
			e = s + strlen(s);
		if (e == s || s[0] != '/')
			continue;	/* relative PATH entries: not where perf lives */
		len = snprintf(p->perf, sizeof(p->perf), "%.*s/perf", (int)(e - s), s);
		if (len > 0 && (size_t)len < sizeof(p->perf) && profile_is_exec(p->perf))
			break;
		p->perf[0] = '\0';
	}
	if (p->perf[0] == '\0') {
		bf_diag_set(d, "profile", "perf not found (install linux-perf)");
		return BF_ERR_NOTFOUND;
	}
	if ((n = readlink("/proc/self/exe", p->self, sizeof(p->self) - 1)) <= 0) {
		bf_diag_set(d, "profile", "cannot resolve the agent's own path: %s",
		    strerror(errno));
		return BF_ERR_SYS;
	}
	p->self[n] = '\0';
	return 0;
}

/* cycles when the machine counts them for us (not under TCG), else cpu-clock. */
static void
profile_pick_event(struct profile *p)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0) {
		close((int)fd);
		p->event = "cycles";
		p->cycles_errno = 0;
		return;
	}
	p->cycles_errno = errno;
	p->event = "cpu-clock";
}

static int
profile_mkdir(struct profile *p)
{
	const char *t = getenv("TMPDIR");
	int n;

	if (t == NULL || t[0] != '/')
		t = "/tmp";
	n = snprintf(p->dir, sizeof(p->dir), "%s/bf-profile.XXXXXX", t);
	if (n < 0 || (size_t)n >= sizeof(p->dir) || mkdtemp(p->dir) == NULL) {
		p->dir[0] = '\0';
		return BF_ERR_SYS;
	}
	return 0;
}

int
profile_record(struct profile *p, const struct step *st, int64_t it,
    struct exec_result *res, struct bf_diag *d)
{
	char *argv[BF_MAX_ARGV + PROFILE_ARGV_EXTRA + 1];
	char freq[16], out[PATH_MAX + 16];
	size_t n = 0, i;
	int r;

	if ((r = profile_mkdir(p)) != 0) {
		bf_diag_set(d, "profile", "cannot make a temporary directory: %s",
		    strerror(errno));
		return r;
	}
	profile_pick_event(p);
	snprintf(freq, sizeof(freq), "%d", st->profile_freq);
	snprintf(out, sizeof(out), "%s/perf.data", p->dir);
	fprintf(stderr, "profile: perf record -e %s -F %d Hz%s%s%s\n", p->event,
	    st->profile_freq, p->cycles_errno ? " (no cycles event: " : "",
	    p->cycles_errno ? strerror(p->cycles_errno) : "", p->cycles_errno ? ")" : "");
	argv[n++] = p->perf;
	argv[n++] = "record";
	argv[n++] = "-g";
	argv[n++] = "-N";		/* no build-id cache under $HOME */
	argv[n++] = "-e";
	argv[n++] = (char *)p->event;
	argv[n++] = "-F";
	argv[n++] = freq;
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n++] = "--";
	for (i = 0; i < st->argc && n < sizeof(argv) / sizeof(argv[0]) - 1; i++)
		argv[n++] = i == 0 && strcmp(st->argv[0], "@agent") == 0 ? p->self : st->argv[i];
	argv[n] = NULL;
	return exec_run_cmd(st, argv, it, 1, st->timeout_s, res);
}

/* perf script into DIR/script.txt: its output does not fit a capture. */
static int
profile_script(const struct profile *p, char *txt, size_t txtsz)
{
	char data[PATH_MAX + 16];
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int fd = -1, nul = -1, status, waited;
	pid_t pid, w;

	snprintf(data, sizeof(data), "%s/perf.data", p->dir);
	snprintf(txt, txtsz, "%s/script.txt", p->dir);
	if ((fd = open(txt, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0 ||
	    (nul = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		if (fd >= 0)
			close(fd);
		return BF_ERR_SYS;
	}
	if ((pid = fork()) < 0) {
		close(fd);
		close(nul);
		return BF_ERR_SYS;
	}
	if (pid == 0) {
		char *argv[] = { (char *)p->perf, "script", "-i", data, "-F",
			"comm,tid,ip,sym,dso", "--no-inline", NULL };

		signal(SIGCHLD, SIG_DFL);
		(void)setpgid(0, 0);
		if (dup2(nul, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
		    dup2(nul, STDERR_FILENO) < 0)
			_exit(127);
		execv(p->perf, argv);
		_exit(127);
	}
	close(fd);
	close(nul);
	for (waited = 0; (w = waitpid(pid, &status, WNOHANG)) == 0 ||
	    (w < 0 && errno == EINTR); waited++) {
		if (waited > PROFILE_SCRIPT_S * 50) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			(void)waitpid(pid, &status, 0);
			return BF_ERR_TIMEOUT;
		}
		nanosleep(&ts, NULL);
	}
	if (w < 0)
		return BF_ERR_SYS;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : BF_ERR_STATE;
}

/* The end line of an artifact; the event perf sampled on goes with it as
 * data (docs/agent-protocol.md), not only in the log. */
static int
profile_end_line(const struct profile *p, const char *name, size_t bytes, const char *sha,
    const char *dropped)
{
	struct buf b;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if ((r = buf_printf(&b, "{\"type\":\"artifact_end\",\"name\":\"%s\",\"bytes\":%zu", name,
	    bytes)) != 0 ||
	    (sha != NULL && (r = buf_printf(&b, ",\"sha256\":\"%s\"", sha)) != 0) ||
	    (dropped != NULL && ((r = buf_puts(&b, ",\"dropped\":")) != 0 ||
	    (r = ajson_put_str(&b, dropped, strlen(dropped))) != 0)) ||
	    (p->event != NULL && (r = buf_printf(&b, ",\"event\":\"%s\"", p->event)) != 0) ||
	    (r = buf_puts(&b, "}")) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}

/* One artifact: its bytes in chunks from read_fn, then the end line. */
static int
profile_send(const struct profile *p, const char *name, const char *mem, size_t len, int fd)
{
	struct sha256_ctx h;
	char chunk[BF_ARTIFACT_CHUNK], hex[65];
	uint8_t dig[32];
	struct buf b;
	size_t off = 0, n, seq = 0;
	ssize_t got;
	int r = 0;

	sha256_init(&h);
	buf_init(&b, EMIT_MAX_LINE);
	while (off < len) {
		n = len - off < sizeof(chunk) ? len - off : sizeof(chunk);
		if (mem != NULL) {
			memcpy(chunk, mem + off, n);
		} else {
			got = read(fd, chunk, n);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				/* the file shrank under us: what was sent is not it */
				r = profile_end_line(p, name, len, NULL, "perf.data could not be read");
				goto out;
			}
			n = (size_t)got;
		}
		sha256_update(&h, chunk, n);
		buf_reset(&b);
		if ((r = buf_printf(&b, "{\"type\":\"artifact\",\"name\":\"%s\",\"seq\":%zu,"
		    "\"data\":\"", name, seq++)) != 0 ||
		    (r = b64_encode(&b, chunk, n)) != 0 ||
		    (r = buf_puts(&b, "\"}")) != 0 ||
		    (r = emit_line(&b)) != 0)
			goto out;
		off += n;
	}
	sha256_final(&h, dig);
	sha256_tohex(dig, hex);
	r = profile_end_line(p, name, len, hex, NULL);
out:
	buf_free(&b);
	return r;
}

/* perf script, folded: the "folded" artifact, or its end line saying why not. */
static int
profile_emit_folded(const struct profile *p)
{
	char txt[PATH_MAX + 16], chunk[64 * 1024], why[128];
	struct buf out;
	struct fold f;
	size_t total = 0;
	ssize_t n;
	int fd = -1, r;

	fold_init(&f, BF_MAX_ARTIFACT_FOLDED);
	buf_init(&out, BF_MAX_ARTIFACT_FOLDED);
	if ((r = profile_script(p, txt, sizeof(txt))) != 0) {
		snprintf(why, sizeof(why), "perf script failed (%s)", bf_err_str(r));
		r = profile_end_line(p, "folded", 0, NULL, why);
		goto out;
	}
	if ((fd = open(txt, O_RDONLY | O_CLOEXEC)) < 0) {
		r = profile_end_line(p, "folded", 0, NULL, "perf script's output cannot be read");
		goto out;
	}
	r = 0;
	while (r == 0 && (n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || total > BF_MAX_PERF_SCRIPT - (size_t)n) {
			r = n < 0 ? BF_ERR_IO : BF_ERR_TOOBIG;
			break;
		}
		total += (size_t)n;
		r = fold_feed(&f, chunk, (size_t)n);
	}
	if (r == 0)
		r = fold_finish(&f, &out);
	if (r == BF_ERR_TOOBIG) {
		snprintf(why, sizeof(why), "over the cap of %d bytes", BF_MAX_ARTIFACT_FOLDED);
		r = profile_end_line(p, "folded", 0, NULL, why);
	} else if (r != 0) {
		snprintf(why, sizeof(why), "folding failed (%s)", bf_err_str(r));
		r = profile_end_line(p, "folded", 0, NULL, why);
	} else {
		fprintf(stderr, "profile: %llu samples, %zu stacks, %llu odd lines skipped\n",
		    (unsigned long long)f.samples, f.stacks.n, (unsigned long long)f.odd);
		r = profile_send(p, "folded", out.data != NULL ? out.data : "", out.len, -1);
	}
out:
	if (fd >= 0)
		close(fd);
	fold_free(&f);
	buf_free(&out);
	return r;
}

int
profile_emit(struct profile *p, const struct step *st)
{
	char path[PATH_MAX + 16], why[128];
	struct stat sb;
	int fd = -1, r;

	(void)st;
	snprintf(path, sizeof(path), "%s/perf.data", p->dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 ||
	    fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		r = profile_end_line(p, "folded", 0, NULL, "perf record wrote no perf.data");
		if (r == 0)
			r = profile_end_line(p, "perf.data", 0, NULL, "perf record wrote no perf.data");
		goto out;
	}
	if ((r = profile_emit_folded(p)) != 0)
		goto out;
	if ((uint64_t)sb.st_size > BF_MAX_ARTIFACT_PERF) {
		snprintf(why, sizeof(why), "over the cap of %d bytes", BF_MAX_ARTIFACT_PERF);
		r = profile_end_line(p, "perf.data", (size_t)sb.st_size, NULL, why);
		goto out;
	}
	r = profile_send(p, "perf.data", NULL, (size_t)sb.st_size, fd);
out:
	if (fd >= 0)
		close(fd);
	return r;
}

void
profile_cleanup(struct profile *p)
{
	struct dirent *de;
	DIR *dir;
	int dfd;

	if (p == NULL || p->dir[0] == '\0')
		return;
	/* only what perf and we put there: plain files, no recursion */
	if ((dir = opendir(p->dir)) != NULL) {
		dfd = dirfd(dir);
		while ((de = readdir(dir)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				(void)unlinkat(dfd, de->d_name, 0);
		closedir(dir);
	}
	if (rmdir(p->dir) != 0)
		fprintf(stderr, "profile: cannot remove %s: %s\n", p->dir, strerror(errno));
	p->dir[0] = '\0';
}
