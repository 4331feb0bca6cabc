/*
 * coord_test_adaptive.c: the add-a-boot decision of two coordinators on one
 * store (SQLite file, or with BF_TEST_PG_URL a PostgreSQL database:
 * unit.coord_test_adaptive@pg). Two boots of one adaptive cell, each run by
 * another coordinator, finish at the same moment: coordinator A is inside
 * its finishing transaction, deciding, when coordinator B finishes its
 * boot. Decided outside the transaction (the process mutex of old), each
 * saw the other's boot still running and neither added one: the cell was
 * left short. Decided inside, after the job's row lock, B waits for A and
 * then sees both boots measured: the cell gets its extra boot, once.
 * test_race runs B on a thread with a connection of its own; test_procs
 * runs B as another process that opens the store itself, as a second
 * benchfleetd would (with-pg: two sessions of one real PostgreSQL).
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "coord_fixture.h"
#include "runner.h"
#include "t.h"

static char tmpdir[256], dbpath[300];
static const char *pg_url;

struct side {
	struct store *st;
	int64_t run_id;
	struct runner_adaptive ad;
	size_t n_seen;			/* samples its decision saw */
	int planned_seen;
	int calls;
	int r;				/* store_run_finish_adaptive's answer */
	struct side *other;		/* A starts B from inside its decision */
	pthread_t th;
	int started;
};

static void *finish_thread(void *arg);

static int
decide(void *arg, const double *v, const int *boot, size_t n, int planned)
{
	struct side *x = arg;

	x->calls++;
	x->n_seen = n;
	x->planned_seen = planned;
	if (x->other != NULL && !x->other->started) {
		/* B finishes now, while A holds its decision open */
		if (pthread_create(&x->other->th, NULL, finish_thread, x->other) == 0)
			x->other->started = 1;
		nanosleep(&(struct timespec){ 0, 500000000L }, NULL);
	}
	return runner_adaptive_decide(&x->ad, v, boot, n, planned);
}

/* B's finish, on its own coordinator's store handle, deciding by decide() too */
static void *
finish_thread(void *arg)
{
	struct side *b = arg;

	b->r = store_run_finish_adaptive(b->st, b->run_id, "done", 0, NULL, b->ad.metric,
	    decide, b);
	return NULL;
}

static struct store *
open_as(const char *node)
{
	struct store *st = NULL;
	struct bf_diag d;

	bf_diag_clear(&d);
	if (store_open(pg_url != NULL ? pg_url : dbpath, &st, &d) != 0) {
		fprintf(stderr, "store_open: %s\n", d.msg);
		return NULL;
	}
	if (store_set_node(st, node) != 0) {
		store_close(st);
		return NULL;
	}
	return st;
}

static void
add_samples(struct store *st, const struct store_claim *c, double base)
{
	struct store_sample s = { .metric = "wall_s", .unit = "s" };
	int i;

	for (i = 0; i < 2; i++) {
		s.value = base + 0.01 * i;
		T_EQ_INT(store_samples_add(st, c->run_id, c->boot, i, &s, 1), 0);
	}
}

/* The job it made. */
static int64_t
test_race(const struct recipes *rs)
{
	struct store *sa = open_as("coord-a"), *sb = open_as("coord-b");
	struct store_claim *ca = NULL, *cb = NULL;
	struct side a, b;
	struct bf_diag d;
	int64_t job = 0;
	size_t ns = 0;
	int held = 0;

	T_CHECK(sa != NULL && sb != NULL);
	if (sa == NULL || sb == NULL)
		goto out;
	bf_diag_clear(&d);
	T_EQ_INT(fix_machine(sa, "m-a", NULL), 0);
	T_EQ_INT(fix_machine(sa, "m-b", NULL), 0);
	T_EQ_INT(fix_submit(sa, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2,\"target_ci_pct\":0.5,\"min_boots\":2,"
	    "\"max_boots\":4}}", &job), 0);
	T_EQ_INT(store_machine_lease(sa, "m-a", 30, &held), 0);
	T_EQ_INT(store_machine_lease(sb, "m-b", 30, &held), 0);
	/* boot 0 on coordinator A, boot 1 on coordinator B; far apart */
	T_EQ_INT(store_run_claim(sa, "m-a", "fake", 30, &ca), 0);
	T_EQ_INT(store_run_claim(sb, "m-b", "fake", 30, &cb), 0);
	T_CHECK(ca != NULL && cb != NULL);
	if (ca == NULL || cb == NULL)
		goto out;
	T_EQ_INT(ca->boot, 0);
	T_EQ_INT(cb->boot, 1);
	add_samples(sa, ca, 1.0);
	add_samples(sb, cb, 2.0);

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.st = sa;
	a.run_id = ca->run_id;
	b.st = sb;
	b.run_id = cb->run_id;
	a.ad.target_ci_pct = b.ad.target_ci_pct = 0.5;
	a.ad.max_boots = b.ad.max_boots = 4;
	snprintf(a.ad.metric, sizeof(a.ad.metric), "wall_s");
	snprintf(b.ad.metric, sizeof(b.ad.metric), "wall_s");
	a.other = &b;		/* A's decision starts B's finish */
	T_EQ_INT(store_run_finish_adaptive(sa, a.run_id, "done", 0, NULL, a.ad.metric, decide,
	    &a), 0);
	if (b.started)
		pthread_join(b.th, NULL);
	T_EQ_INT(b.started, 1);
	T_EQ_INT(b.r, 0);
	/* A decided while B's boot was running: one boot measured of two */
	T_EQ_INT(a.calls, 1);
	T_EQ_INT(a.planned_seen, 2);
	T_EQ_INT(a.n_seen, 2);
	T_EQ_STR(a.ad.note, "");
	/* B, after A's commit, saw both boots measured and added the third */
	T_EQ_INT(b.calls, 1);
	T_EQ_INT(b.planned_seen, 2);
	T_EQ_INT(b.n_seen, 4);
	T_CONTAINS(b.ad.note, "adding boot 2");
	T_EQ_INT(fix_count(sa, job, NULL, NULL), 3);
	T_EQ_INT(fix_count(sa, job, "queued", NULL), 1);
	T_EQ_INT(fix_count(sa, job, "done", &ns), 2);
	T_EQ_INT(ns, 4);
out:
	store_claim_free(ca);
	store_claim_free(cb);
	store_close(sa);
	store_close(sb);
	return job;
}

/* What process B reports back to A over a pipe. */
struct proc_report {
	int r;
	int calls;
	int planned_seen;
	size_t n_seen;
	char note[sizeof(((struct runner_adaptive *)0)->note)];
};

struct proc_side {
	struct side self;		/* A */
	int64_t b_run;
	int go[2];			/* A -> B: finish now */
	int ready[2];			/* B -> A: 'o' store open, 'r' finishing */
	int result[2];			/* B -> A: its proc_report */
	pid_t pid;
};

/* One byte from fd equal to want, within a minute; 0 or -1. */
static int
wait_byte(int fd, char want)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, 60000) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return c == want ? 0 : -1;
}

/* B's decision, in its own process. */
static int
decide_b(void *arg, const double *v, const int *boot, size_t n, int planned)
{
	struct side *x = arg;

	x->calls++;
	x->n_seen = n;
	x->planned_seen = planned;
	return runner_adaptive_decide(&x->ad, v, boot, n, planned);
}

/* Process B: a store of its own as coord-b (opened before A's transaction
 * begins: SQLite's open waits for a writer), then, when A says so, finish
 * its boot. Never returns; touches nothing of A's (its connection is A's
 * too). */
static void
proc_b(struct proc_side *p)
{
	struct proc_report rep;
	struct side b;
	struct store *st;

	memset(&rep, 0, sizeof(rep));
	memset(&b, 0, sizeof(b));
	b.ad.target_ci_pct = 0.5;
	b.ad.max_boots = 4;
	snprintf(b.ad.metric, sizeof(b.ad.metric), "wall_s");
	rep.r = -1000;
	if ((st = open_as("coord-b")) == NULL || write(p->ready[1], "o", 1) != 1 ||
	    wait_byte(p->go[0], 'g') != 0 || write(p->ready[1], "r", 1) != 1)
		_exit(2);
	rep.r = store_run_finish_adaptive(st, p->b_run, "done", 0, NULL, b.ad.metric,
	    decide_b, &b);
	store_close(st);
	rep.calls = b.calls;
	rep.planned_seen = b.planned_seen;
	rep.n_seen = b.n_seen;
	snprintf(rep.note, sizeof(rep.note), "%s", b.ad.note);
	_exit(write(p->result[1], &rep, sizeof(rep)) == (ssize_t)sizeof(rep) ? 0 : 3);
}

/* A's decision: tell B to finish, wait until it is finishing, then hold
 * the decision open long enough for B to reach the job's lock. */
static int
decide_a(void *arg, const double *v, const int *boot, size_t n, int planned)
{
	struct proc_side *p = arg;

	p->self.calls++;
	p->self.n_seen = n;
	p->self.planned_seen = planned;
	if (p->self.calls == 1 && write(p->go[1], "g", 1) == 1 &&
	    wait_byte(p->ready[0], 'r') == 0)
		nanosleep(&(struct timespec){ 0, 500000000L }, NULL);
	return runner_adaptive_decide(&p->self.ad, v, boot, n, planned);
}

static void
test_procs(const struct recipes *rs, int64_t prev_job)
{
	struct store *sa = open_as("coord-a"), *sb = open_as("coord-b");
	struct store_claim *ca = NULL, *cb = NULL;
	struct proc_report rep;
	struct proc_side p;
	int64_t job = 0;
	size_t ns = 0, i;
	int held = 0, status = -1, *fds[] = { p.go, p.ready, p.result };

	memset(&p, 0, sizeof(p));
	for (i = 0; i < 3; i++)
		fds[i][0] = fds[i][1] = -1;
	T_CHECK(sa != NULL && sb != NULL);
	if (sa == NULL || sb == NULL || pipe(p.go) != 0 || pipe(p.ready) != 0 ||
	    pipe(p.result) != 0)
		goto out;
	/* a second job on the store test_race left */
	T_EQ_INT(fix_submit(sa, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2,\"target_ci_pct\":0.5,\"min_boots\":2,"
	    "\"max_boots\":4}}", &job), 0);
	/* test_race's extra boot must not be the next claim */
	T_EQ_INT(store_job_cancel(sa, prev_job), 0);
	T_EQ_INT(store_machine_lease(sa, "m-a", 30, &held), 0);
	T_EQ_INT(store_machine_lease(sb, "m-b", 30, &held), 0);
	T_EQ_INT(store_run_claim(sa, "m-a", "fake", 30, &ca), 0);
	T_EQ_INT(store_run_claim(sb, "m-b", "fake", 30, &cb), 0);
	T_CHECK(ca != NULL && cb != NULL);
	if (ca == NULL || cb == NULL)
		goto out;
	T_EQ_INT(ca->job_id, job);
	T_EQ_INT(cb->job_id, job);
	add_samples(sa, ca, 1.0);
	add_samples(sb, cb, 2.0);
	/* B's coordinator is the other process from here on */
	store_close(sb);
	sb = NULL;
	p.b_run = cb->run_id;
	fflush(NULL);
	if ((p.pid = fork()) == 0)
		proc_b(&p);
	T_CHECK(p.pid > 0);
	if (p.pid <= 0 || wait_byte(p.ready[0], 'o') != 0) {
		T_CHECK(0);
		goto out;
	}

	p.self.st = sa;
	p.self.ad.target_ci_pct = 0.5;
	p.self.ad.max_boots = 4;
	snprintf(p.self.ad.metric, sizeof(p.self.ad.metric), "wall_s");
	T_EQ_INT(store_run_finish_adaptive(sa, ca->run_id, "done", 0, NULL, p.self.ad.metric,
	    decide_a, &p), 0);
	T_EQ_INT(waitpid(p.pid, &status, 0), p.pid);
	T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	memset(&rep, 0, sizeof(rep));
	T_EQ_INT(read(p.result[0], &rep, sizeof(rep)), (long long)sizeof(rep));
	T_EQ_INT(rep.r, 0);
	/* A decided while B's boot was running; B, in another process, waited
	 * for A's commit, saw both boots and added the third, once */
	T_EQ_INT(p.self.calls, 1);
	T_EQ_INT(p.self.n_seen, 2);
	T_EQ_INT(rep.calls, 1);
	T_EQ_INT(rep.planned_seen, 2);
	T_EQ_INT(rep.n_seen, 4);
	T_CONTAINS(rep.note, "adding boot 2");
	T_EQ_INT(fix_count(sa, job, NULL, NULL), 3);
	T_EQ_INT(fix_count(sa, job, "queued", NULL), 1);
	T_EQ_INT(fix_count(sa, job, "done", &ns), 2);
	T_EQ_INT(ns, 4);
out:
	if (p.pid > 0 && status == -1) {
		kill(p.pid, SIGKILL);
		waitpid(p.pid, NULL, 0);
	}
	for (i = 0; i < 3; i++)
		if (fds[i][0] >= 0) {
			close(fds[i][0]);
			close(fds[i][1]);
		}
	store_claim_free(ca);
	store_claim_free(cb);
	store_close(sa);
	store_close(sb);
}

int
main(void)
{
	char path[600];
	const char *src = getenv("BF_SRC");
	struct recipes *rs = NULL;
	struct bf_diag d;

	pg_url = getenv("BF_TEST_PG_URL");
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bf-adaptive-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	snprintf(dbpath, sizeof(dbpath), "%s/store.db", tmpdir);
	snprintf(path, sizeof(path), "%s/recipes", src != NULL ? src : ".");
	bf_diag_clear(&d);
	if (recipes_load_dir(path, &rs, &d) != 0) {
		fprintf(stderr, "recipes: %s\n", d.msg);
		return 1;
	}
	test_procs(rs, test_race(rs));
	recipes_free(rs);
	snprintf(path, sizeof(path), "rm -rf -- '%s'", tmpdir);
	if (strncmp(tmpdir, "/tmp/bf-adaptive-", 17) == 0 && system(path) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return t_done();
}
