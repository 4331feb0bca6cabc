/*
 * main.c: benchfleetd. Options (or a --config file of "key = value" lines
 * with the same names, read by config.c), then: open and recover the store,
 * load the recipes, start the API child (privilege separation, monitor.h),
 * the scheduler, and wait for SIGINT/SIGTERM. The API child is this same
 * binary run with --privsep-child: it opens the store, drops its
 * privileges and serves HTTP (api_child_main). --privsep no serves HTTP in
 * this process, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "auth.h"
#include "boot.h"
#include "bundle.h"
#include "caps.h"
#include "config.h"
#include "db.h"
#include "events.h"
#include "labkey.h"
#include "fetch.h"
#include "monitor.h"
#include "parse.h"
#include "kspec.h"
#include "kstore.h"
#include "path.h"
#include "recipes.h"
#include "sched.h"
#include "ssh.h"
#include "store.h"

#ifndef BF_SOURCE_DIR
#define BF_SOURCE_DIR "."
#endif

struct options {
	char *listen;
	char *store;
	char *recipes;
	char *web;
	char *known_hosts;
	char *agent;
	char *agent_remote;
	char *agent_aarch64;
	char *port_file;
	char *lease;
	char *connect_timeout;
	char *probe_interval;
	char *tls_cert;
	char *tls_key;
	char *auth;
	char *max_attempts;
	char *probe_failures;
	char *link_timeout;
	char *boot_failures;
	char *node;
	char *lab_key;
	char *peer_allow;
	char *workdir_root;
	char *kernel_git_roots;
	char *artifact_dir;
	char *allow_host;
	char *privsep;
	char *api_user;
	int insecure;
	int peer_allow_http;
	struct boot_profiles profiles;	/* power.NAME, boot-command.NAME of --config */
};

static const struct opt {
	const char *name;
	size_t off;		/* of the char * in struct options; of the int of a flag */
	const char *arg;
	const char *help;
} opts[] = {
	{ "listen", offsetof(struct options, listen), "ADDR:PORT",
	  "HTTP address (default 127.0.0.1:8080)" },
	{ "store", offsetof(struct options, store), "FILE|URL",
	  "SQLite file, or postgresql://USER@HOST/DB shared with other coordinators "
	  "(default var/benchfleet.db)" },
	{ "node", offsetof(struct options, node), "NAME",
	  "this coordinator's name in the run and machine leases of a shared store "
	  "(default: the host name; must differ between coordinators)" },
	{ "recipes", offsetof(struct options, recipes), "DIR", "recipe directory" },
	{ "lab-key", offsetof(struct options, lab_key), "FILE",
	  "the lab's ed25519 signing key, made on first start, mode 0600 (default: lab.key "
	  "next to a SQLite store, var/lab.key for PostgreSQL)" },
	{ "web", offsetof(struct options, web), "DIR", "dashboard files served at /" },
	{ "known-hosts", offsetof(struct options, known_hosts), "FILE",
	  "pinned SSH host keys (default var/known_hosts)" },
	{ "agent", offsetof(struct options, agent), "FILE",
	  "benchfleet-agent binary (default: next to benchfleetd)" },
	{ "agent-aarch64", offsetof(struct options, agent_aarch64), "FILE",
	  "benchfleet-agent built for aarch64 machines (default: next to benchfleetd, if built)" },
	{ "agent-remote", offsetof(struct options, agent_remote), "PATH",
	  "agent path on machines, relative to ~ (default .benchfleet/benchfleet-agent)" },
	{ "port-file", offsetof(struct options, port_file), "FILE",
	  "write the bound port here once listening" },
	{ "lease", offsetof(struct options, lease), "SECONDS",
	  "run and machine lease, renewed every third of it; another coordinator takes "
	  "over after it lapses (default 60)" },
	{ "connect-timeout", offsetof(struct options, connect_timeout), "MS",
	  "SSH connect timeout (default 10000)" },
	{ "probe-interval", offsetof(struct options, probe_interval), "SECONDS",
	  "health probe of idle machines and retry of offline ones (default 15)" },
	{ "max-attempts", offsetof(struct options, max_attempts), "N",
	  "attempts of a run whose machine is lost (default 3)" },
	{ "probe-failures", offsetof(struct options, probe_failures), "N",
	  "failed health probes in a row that make a machine offline (default 3)" },
	{ "boot-failures", offsetof(struct options, boot_failures), "N",
	  "boot failures in a row that quarantine a machine (default 3)" },
	{ "link-timeout", offsetof(struct options, link_timeout), "SECONDS",
	  "SSH silence, keepalives included, taken as a dead link (default 20)" },
	{ "tls-cert", offsetof(struct options, tls_cert), "FILE",
	  "serve HTTPS with this PEM certificate (chain), with --tls-key" },
	{ "tls-key", offsetof(struct options, tls_key), "FILE", "PEM private key of --tls-cert" },
	{ "auth", offsetof(struct options, auth), "auto|required",
	  "bearer tokens: auto (on once the store has a token; always off loopback) "
	  "or required" },
	{ "allow-host", offsetof(struct options, allow_host), "NAME[,NAME...]",
	  "more names (NAME or NAME:PORT) the API answers to in the Host header, besides "
	  "the listen address, localhost, 127.0.0.1 and [::1] (e.g. the name of a TLS "
	  "proxy in front)" },
	{ "workdir-root", offsetof(struct options, workdir_root), "DIR",
	  "path parameters of recipes (a build's workdir) must be below it; the agent "
	  "refuses symlinks under it (default " PATH_DEFAULT_ROOT ")" },
	{ "kernel-git-roots", offsetof(struct options, kernel_git_roots), "DIR[:DIR...]",
	  "directories whose git trees, config files and patches a job's \"kernels\" may "
	  "name (default: none; a job with kernels is refused)" },
	{ "artifact-dir", offsetof(struct options, artifact_dir), "DIR",
	  "kernel builds' artifacts, as files named by their sha256, mode 0711 (default: "
	  "artifacts next to a SQLite store, var/artifacts for PostgreSQL)" },
	{ "privsep", offsetof(struct options, privsep), "yes|no",
	  "serve HTTP in an unprivileged child process that holds no SSH or lab key "
	  "(default yes); no: one process, for debugging" },
	{ "api-user", offsetof(struct options, api_user), "NAME",
	  "the user of that child when benchfleetd runs as root or with CAP_SETUID and "
	  "CAP_SETGID (default nobody)" },
	{ "insecure", offsetof(struct options, insecure), NULL,
	  "allow listening on a non-loopback address without TLS" },
	{ "peer-allow", offsetof(struct options, peer_allow), "CIDR[,CIDR...]",
	  "let bundle URLs reach these addresses although they are loopback, private, "
	  "link-local, ... (default: public addresses only)" },
	{ "peer-allow-http", offsetof(struct options, peer_allow_http), NULL,
	  "let bundle URLs be plain http:// (default: https only)" },
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

/* The store's read-only connections: one per CPU, as the API's pool. */
static size_t
main_readers(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 2 ? 2 : (size_t)n;
}

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: benchfleetd [--config FILE] [options]\n"
	    "       benchfleetd token create|list|revoke ... (benchfleetd token --help)\n"
	    "  a --config FILE also declares the commands machines name: lines\n"
	    "  power.NAME = COMMAND... and boot-command.NAME = COMMAND... (docs/deploy.md)\n");
	for (i = 0; i < NOPTS; i++)
		fprintf(f, "  --%s%s%s\n      %s\n", opts[i].name, opts[i].arg ? " " : "",
		    opts[i].arg ? opts[i].arg : "", opts[i].help);
}

static const struct opt *
opt_find(const char *name)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

/* A flag's value is "yes" (the command line, or a file) or "no" (a file). */
static int
opt_set(struct options *o, const struct opt *op, const char *val)
{
	char **slot;

	if (op->arg == NULL) {
		*(int *)((char *)o + op->off) = strcmp(val, "no") != 0;
		return 0;
	}
	slot = (char **)((char *)o + op->off);
	free(*slot);
	if ((*slot = strdup(val)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/* The option table as config.c sees it. */
static enum config_kind
opt_kind(const char *name)
{
	const struct opt *op = opt_find(name);

	return op == NULL ? CONFIG_NONE : op->arg != NULL ? CONFIG_VALUE : CONFIG_FLAG;
}

static int
opt_set_name(void *o, const char *name, const char *val)
{
	return opt_set(o, opt_find(name), val);
}

static int
opt_profile(void *o, const char *kind, const char *name, const struct config_words *w,
    struct bf_diag *d)
{
	return boot_profiles_add(&((struct options *)o)->profiles, kind, name, w->word,
	    w->quoted, w->n, d);
}

static const struct config_ops opt_config = { opt_kind, opt_set_name, boot_profile_kinds,
    opt_profile };

static int
parse_listen(const char *s, char *addr, size_t addrsz, int *port)
{
	const char *colon;
	int64_t p;
	size_t alen;

	if (s[0] == '[') {
		if ((colon = strstr(s, "]:")) == NULL)
			return BF_ERR_PARSE;
		alen = (size_t)(colon - s - 1);
		if (alen >= addrsz)
			return BF_ERR_TOOBIG;
		memcpy(addr, s + 1, alen);
		addr[alen] = '\0';
		colon++;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			return BF_ERR_PARSE;
		alen = (size_t)(colon - s);
		if (alen >= addrsz)
			return BF_ERR_TOOBIG;
		memcpy(addr, s, alen);
		addr[alen] = '\0';
	}
	if (parse_i64(colon + 1, 0, 65535, &p) != 0)
		return BF_ERR_RANGE;
	*port = (int)p;
	return 0;
}

static int
is_loopback(const char *addr)
{
	return strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0;
}

static int
num_opt(const char *name, const char *v, int64_t min, int64_t max, int64_t def, int *out)
{
	int64_t x = def;

	if (v != NULL && parse_i64(v, min, max, &x) != 0) {
		fprintf(stderr, "benchfleetd: --%s: \"%s\" is not in %lld..%lld\n", name, v,
		    (long long)min, (long long)max);
		return BF_ERR_RANGE;
	}
	*out = (int)x;
	return 0;
}

/* mkdir -p of the directory part of path (one or two levels suffice for
 * var/...). */
static void
make_parent(const char *path)
{
	char dir[PATH_MAX], *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return;
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0750) != 0 && errno == ENOENT) {
		make_parent(dir);
		mkdir(dir, 0750);
	}
}

/* benchfleet-agent<suffix> next to this binary. */
static char *
default_agent(const char *suffix)
{
	char self[PATH_MAX], *slash, *out;
	ssize_t n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return strdup("benchfleet-agent");
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if (asprintf(&out, "%s/benchfleet-agent%s", self, suffix) < 0)
		return NULL;
	return out;
}

/* lab.key next to a SQLite store; var/lab.key for a PostgreSQL one. */
static char *
default_lab_key(const char *store)
{
	const char *slash;
	char *out;

	if (db_is_pg_target(store))
		return strdup("var/lab.key");
	if ((slash = strrchr(store, '/')) == NULL)
		return strdup("lab.key");
	if (asprintf(&out, "%.*s/lab.key", (int)(slash - store), store) < 0)
		return NULL;
	return out;
}

static char *
first_dir(const char *a, const char *b)
{
	struct stat sb;

	if (stat(a, &sb) == 0 && S_ISDIR(sb.st_mode))
		return strdup(a);
	return strdup(b);
}
/* The monitor's requests reach the scheduler through this; sc is set once
 * it runs (a kick before that is moot: the scheduler starts by looking). */
struct mon_ctx {
	_Atomic(struct sched *) sc;
	struct labkey *lk;		/* set before the child starts */
	struct store *st;		/* likewise */
};

/* The monitor's "sign": the lab key never leaves this process, and signs
 * only this store's own export of a job (bundle_sign_check), never bytes
 * a compromised child chose. */
static int
mon_sign(void *arg, const unsigned char *msg, size_t len, unsigned char sig[MONITOR_SIG_LEN])
{
	struct mon_ctx *x = arg;
	struct bf_diag d;
	int r;

	bf_diag_clear(&d);
	if ((r = bundle_sign_check(x->st, msg, len, &d)) != 0) {
		fprintf(stderr, "benchfleetd: monitor: sign refused: %s\n", d.msg[0] ? d.msg :
		    bf_err_str(r));
		return r;
	}
	return labkey_sign_cb(x->lk, msg, len, sig);
}

static void
mon_kick(void *arg, int machines)
{
	struct mon_ctx *x = arg;

	if (machines)
		sched_kick_machines(atomic_load(&x->sc));
	else
		sched_kick(atomic_load(&x->sc));
}

static int
mon_probe(void *arg, const char *name)
{
	struct mon_ctx *x = arg;
	struct sched *s = atomic_load(&x->sc);

	return s == NULL ? BF_ERR_NOTFOUND : sched_probe(s, name);
}

/* The privsep flags in the parent: the api user must exist and be another
 * user, when there is a user to change to. 0, or 2 (usage). */
static int
check_api_user(const char *user)
{
	struct passwd *pw;

	if (!monitor_can_setuid()) {
		fprintf(stderr, "benchfleetd: warning: not root and without CAP_SETUID/"
		    "CAP_SETGID, so the API child runs as uid %ld like the rest of benchfleetd "
		    "(it holds no keys, but the same user could read them); see docs/deploy.md, "
		    "\"Privilege separation\"\n", (long)getuid());
		return 0;
	}
	if ((pw = getpwnam(user)) == NULL) {
		fprintf(stderr, "benchfleetd: --api-user: no user \"%s\" (create it, or use "
		    "--api-user nobody)\n", user);
		return 2;
	}
	if (pw->pw_uid == 0 || pw->pw_uid == getuid()) {
		fprintf(stderr, "benchfleetd: --api-user: \"%s\" is %s; the API child needs a "
		    "user of its own\n", user, pw->pw_uid == 0 ? "root" : "benchfleetd's own user");
		return 2;
	}
	return 0;
}

/*
 * The API child (--privsep-child PPID:PORT, only ever given by the monitor):
 * open the store and read what needs privileges, drop them, serve HTTP on
 * the monitor's port, and end on SIGTERM or when the monitor goes away.
 */
static int
api_child_main(struct options *o, const char *addr, int port, int auth_required,
    const char *arg)
{
	struct store *st = NULL;
	struct recipes *rs = NULL;
	struct events *ev = NULL;
	struct api *api = NULL;
	struct monitor_client *mc = NULL;
	struct kstore *ks = NULL;
	struct api_config acfg;
	struct bf_diag d;
	struct stat sb;
	char *cert = NULL, *key = NULL;
	size_t certlen = 0, keylen = 0;
	const char *colon;
	int64_t ppid, cport;
	int ret = 1, shared = 0, sig;
	sigset_t set;

	bf_diag_clear(&d);
	memset(&acfg, 0, sizeof(acfg));
	/* Names keep resolving for POST /machines; no command word (a power
	 * profile may hold a password) stays in this process. */
	boot_profiles_strip(&o->profiles);
	if ((colon = strchr(arg, ':')) == NULL ||
	    parse_i64_n(arg, (size_t)(colon - arg), 2, INT32_MAX, &ppid) != 0 ||
	    parse_i64(colon + 1, 0, 65535, &cport) != 0 ||
	    fstat(MONITOR_CTL_FD, &sb) != 0 || !S_ISSOCK(sb.st_mode) ||
	    fstat(MONITOR_EV_FD, &sb) != 0 || !S_ISSOCK(sb.st_mode)) {
		fprintf(stderr, "benchfleetd: --privsep-child is for benchfleetd's own use\n");
		return 2;
	}
	fcntl(MONITOR_CTL_FD, F_SETFD, FD_CLOEXEC);
	fcntl(MONITOR_EV_FD, F_SETFD, FD_CLOEXEC);
	/* exec'd as /proc/self/exe: "exe" would say nothing in ps and ss */
	prctl(PR_SET_NAME, "benchfleetd-api", 0, 0, 0);
	/* Ctrl-C reaches the whole group: the monitor stops this process. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	/* Before the drop: the store may be 0600 to the daemon's user. */
	if (store_open(o->store, &st, &d) != 0) {
		fprintf(stderr, "benchfleetd (api): %s\n", d.msg);
		goto out;
	}
	if (o->node != NULL && store_set_node(st, o->node) != 0)
		goto out;
	/* a reader per pool thread of the API (api.c), before the drop too */
	if (store_readers_open(st, main_readers(), &d) != 0) {
		fprintf(stderr, "benchfleetd (api): store readers: %s\n", d.msg[0] ? d.msg :
		    store_last_error());
		goto out;
	}
	if (events_new(st, &ev) != 0) {
		fprintf(stderr, "benchfleetd (api): cannot start the event hub%s%s\n",
		    store_is_shared(st) ? " (LISTEN on the store): " : "",
		    store_is_shared(st) ? store_last_error() : "");
		goto out;
	}
	if (recipes_load_dir(o->recipes, &rs, &d) != 0) {
		fprintf(stderr, "benchfleetd (api): %s\n", d.msg);
		goto out;
	}
	if ((o->artifact_dir == NULL && (o->artifact_dir = kstore_default_dir(o->store,
	    db_is_pg_target(o->store))) == NULL) || kstore_open(o->artifact_dir, &ks, &d) != 0) {
		fprintf(stderr, "benchfleetd (api): %s\n", d.msg);
		goto out;
	}
	if (o->tls_cert != NULL &&
	    (api_read_pem(o->tls_cert, "tls-cert", &cert, &certlen, &d) != 0 ||
	    api_read_pem(o->tls_key, "tls-key", &key, &keylen, &d) != 0)) {
		fprintf(stderr, "benchfleetd (api): %s\n", d.msg);
		goto out;
	}
	/* The dashboard is served relative to the working directory, entered
	 * now: its parents (a clone under /root) need not be open to the
	 * api user. Every other path was opened above. */
	acfg.web_dir = o->web;
	if (o->web != NULL && chdir(o->web) == 0)
		acfg.web_dir = ".";
	if (monitor_drop_privileges(o->api_user != NULL ? o->api_user : "nobody", &shared,
	    &d) != 0) {
		fprintf(stderr, "benchfleetd (api): %s\n", d.msg);
		goto out;
	}
	/* After the drop, which clears it; a monitor already gone is seen here. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != (pid_t)ppid) {
		fprintf(stderr, "benchfleetd (api): the monitor is gone\n");
		goto out;
	}
	if (monitor_client_open(MONITOR_CTL_FD, MONITOR_EV_FD, &mc) != 0 ||
	    monitor_client_hello(mc, &acfg.has_lab_key, acfg.lab_pub) != 0) {
		fprintf(stderr, "benchfleetd (api): no answer from the monitor\n");
		goto out;
	}
	acfg.addr = addr;
	acfg.port = cport != 0 ? (int)cport : port;
	acfg.auth_required = auth_required;
	acfg.tls_cert = o->tls_cert;
	acfg.tls_key = o->tls_key;
	acfg.tls_cert_pem = cert;
	acfg.tls_key_pem = key;
	acfg.workdir_root = o->workdir_root;
	acfg.kernel_git_roots = o->kernel_git_roots;
	acfg.artifacts = ks;
	acfg.allow_hosts = o->allow_host;
	acfg.ctl = (struct api_ctl){ monitor_client_kick, monitor_client_probe,
	    monitor_client_key, mc };
	if (acfg.has_lab_key) {
		acfg.lab_sign = monitor_client_sign;
		acfg.lab_sign_arg = mc;
	}
	if (api_start(&acfg, st, rs, NULL, ev, &api, &d) != 0) {
		fprintf(stderr, "benchfleetd (api): %s\n", d.msg);
		goto out;
	}
	if (monitor_client_ready(mc, (uint16_t)api_port(api), ev) != 0) {
		fprintf(stderr, "benchfleetd (api): the monitor did not take ready\n");
		goto out;
	}
	while (sigwait(&set, &sig) == 0 && sig != SIGTERM)
		;
	ret = 0;
out:
	api_stop(api);
	monitor_client_free(mc);
	events_free(ev);
	store_close(st);
	kstore_close(ks);
	recipes_free(rs);
	if (key != NULL) {
		explicit_bzero(key, keylen);
		free(key);
	}
	free(cert);
	return ret;
}

int
main(int argc, char **argv)
{
	struct options o;
	struct store *st = NULL;
	struct recipes *rs = NULL;
	struct sched *sc = NULL;
	struct api *api = NULL;
	struct events *ev = NULL;
	struct labkey *lk = NULL;
	struct kstore *ks = NULL;
	struct monitor *mon = NULL;
	struct monitor_config mcfg;
	struct mon_ctx mctx;
	struct sched_config scfg;
	struct api_config acfg;
	struct fetch_policy fpol;
	struct bf_diag d;
	const struct opt *op;
	const char *child = NULL;
	char addr[128];
	int port, i, sig, lease, ctmo, probe, attempts, pfails, linkto, bootfails, ret = 1;
	int privsep, auth_required, bound;
	size_t nrequeued = 0;
	sigset_t set;

	memset(&o, 0, sizeof(o));
	atomic_init(&mctx.sc, NULL);
	mctx.lk = NULL;
	bf_diag_clear(&d);
	if (argc > 1 && strcmp(argv[1], "token") == 0)
		return cmd_token_main(argc - 1, argv + 1);
	if (config_load(argc, argv, &opt_config, &o, &d) != 0) {
		fprintf(stderr, "benchfleetd: %s\n", d.msg);
		ret = 2;
		goto out;
	}
	/* machines name these; boot-config.c resolves the names (before any thread) */
	boot_profiles_use(&o.profiles);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			ret = 0;
			goto out;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("benchfleetd %s\n", BF_VERSION);
			ret = 0;
			goto out;
		}
		if (strcmp(argv[i], "--config") == 0) {
			i++;
			continue;
		}
		/* internal: the monitor starting its API child (monitor.c) */
		if (strcmp(argv[i], "--privsep-child") == 0 && i == 1 && i + 1 < argc) {
			child = argv[++i];
			continue;
		}
		if (strncmp(argv[i], "--", 2) != 0 || (op = opt_find(argv[i] + 2)) == NULL) {
			fprintf(stderr, "benchfleetd: unknown option \"%s\"\n", argv[i]);
			usage(stderr);
			ret = 2;
			goto out;
		}
		if (op->arg != NULL && i + 1 >= argc) {
			fprintf(stderr, "benchfleetd: --%s needs %s\n", op->name, op->arg);
			ret = 2;
			goto out;
		}
		if (opt_set(&o, op, op->arg ? argv[++i] : "yes") != 0)
			goto out;
	}
	if ((o.listen == NULL && (o.listen = strdup("127.0.0.1:8080")) == NULL) ||
	    (o.store == NULL && (o.store = strdup("var/benchfleet.db")) == NULL) ||
	    (o.known_hosts == NULL && (o.known_hosts = strdup("var/known_hosts")) == NULL) ||
	    (o.agent_remote == NULL &&
	    (o.agent_remote = strdup(".benchfleet/benchfleet-agent")) == NULL) ||
	    (o.agent == NULL && (o.agent = default_agent("")) == NULL) ||
	    (o.recipes == NULL &&
	    (o.recipes = first_dir("recipes", BF_SOURCE_DIR "/recipes")) == NULL) ||
	    (o.web == NULL && (o.web = first_dir("web", BF_SOURCE_DIR "/web")) == NULL) ||
	    (o.workdir_root == NULL && (o.workdir_root = strdup(PATH_DEFAULT_ROOT)) == NULL) ||
	    (o.api_user == NULL && (o.api_user = strdup("nobody")) == NULL)) {
		fprintf(stderr, "benchfleetd: out of memory\n");
		goto out;
	}
	if (o.agent_aarch64 == NULL) {
		char *a64 = default_agent("-aarch64");

		if (a64 != NULL && access(a64, R_OK) == 0)
			o.agent_aarch64 = a64;
		else
			free(a64);
	}
	if (parse_listen(o.listen, addr, sizeof(addr), &port) != 0) {
		fprintf(stderr, "benchfleetd: --listen: \"%s\" is not ADDR:PORT\n", o.listen);
		ret = 2;
		goto out;
	}
	{
		const char *why = NULL;

		if (path_check_normal(o.workdir_root, strlen(o.workdir_root), &why) != 0 ||
		    strcmp(o.workdir_root, "/") == 0) {
			fprintf(stderr, "benchfleetd: --workdir-root: \"%s\" %s\n", o.workdir_root,
			    why != NULL ? why : "is the whole filesystem; name a directory");
			ret = 2;
			goto out;
		}
	}
	if (kspec_check_root_list(o.kernel_git_roots, &d) != 0) {
		fprintf(stderr, "benchfleetd: --%s\n", d.msg);
		ret = 2;
		goto out;
	}
	if ((o.tls_cert == NULL) != (o.tls_key == NULL)) {
		fprintf(stderr, "benchfleetd: --tls-cert and --tls-key go together\n");
		ret = 2;
		goto out;
	}
	if (o.auth != NULL && strcmp(o.auth, "auto") != 0 && strcmp(o.auth, "required") != 0) {
		fprintf(stderr, "benchfleetd: --auth: \"%s\" is not one of auto, required\n",
		    o.auth);
		ret = 2;
		goto out;
	}
	if (o.privsep != NULL && strcmp(o.privsep, "yes") != 0 && strcmp(o.privsep, "no") != 0) {
		fprintf(stderr, "benchfleetd: --privsep: \"%s\" is not one of yes, no\n",
		    o.privsep);
		ret = 2;
		goto out;
	}
	privsep = o.privsep == NULL || strcmp(o.privsep, "yes") == 0;
	if (!is_loopback(addr) && !o.insecure && o.tls_cert == NULL) {
		fprintf(stderr, "benchfleetd: refusing to listen on %s without TLS: use "
		    "--tls-cert/--tls-key, a loopback address behind a TLS reverse proxy, or "
		    "--insecure\n", addr);
		ret = 2;
		goto out;
	}
	if (num_opt("lease", o.lease, 3, 86400, 60, &lease) != 0 ||
	    num_opt("connect-timeout", o.connect_timeout, 100, 600000, 10000, &ctmo) != 0 ||
	    num_opt("probe-interval", o.probe_interval, 1, 86400, 15, &probe) != 0 ||
	    num_opt("max-attempts", o.max_attempts, 1, 100, 3, &attempts) != 0 ||
	    num_opt("probe-failures", o.probe_failures, 1, 100, 3, &pfails) != 0 ||
	    num_opt("link-timeout", o.link_timeout, 6, 3600, 20, &linkto) != 0 ||
	    num_opt("boot-failures", o.boot_failures, 1, 100, 3, &bootfails) != 0) {
		ret = 2;
		goto out;
	}
	memset(&fpol, 0, sizeof(fpol));
	fpol.allow = o.peer_allow;
	fpol.allow_http = o.peer_allow_http;
	if (fetch_config(&fpol, &d) != 0) {
		fprintf(stderr, "benchfleetd: --%s\n", d.msg);
		ret = 2;
		goto out;
	}
	/* Off loopback the API is never open, tokens or not. */
	auth_required = (o.auth != NULL && strcmp(o.auth, "required") == 0) ||
	    !is_loopback(addr);
	if (child != NULL) {
		ret = api_child_main(&o, addr, port, auth_required, child);
		goto out;
	}
	if (privsep && (ret = check_api_user(o.api_user)) != 0)
		goto out;
	ret = 1;
	/* No process of the same uid may ptrace the monitor for its keys. */
	if (privsep && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		fprintf(stderr, "benchfleetd: PR_SET_DUMPABLE: %s\n", strerror(errno));
		goto out;
	}

	/* Signals: SIGPIPE would kill us on a dropped SSH link; the others are
	 * taken by sigwait() in this thread only. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (!db_is_pg_target(o.store))
		make_parent(o.store);
	make_parent(o.known_hosts);
	if (store_open(o.store, &st, &d) != 0) {
		fprintf(stderr, "benchfleetd: %s\n", d.msg);
		goto out;
	}
	if (o.node != NULL && store_set_node(st, o.node) != 0) {
		fprintf(stderr, "benchfleetd: --node: \"%s\" must be 1 to %d printable bytes\n",
		    o.node, BF_MAX_NAME);
		ret = 2;
		goto out;
	}
	if (store_readers_open(st, main_readers(), &d) != 0) {
		fprintf(stderr, "benchfleetd: store readers: %s\n", d.msg[0] ? d.msg :
		    store_last_error());
		goto out;
	}
	if (store_recover(st, &nrequeued) != 0) {
		fprintf(stderr, "benchfleetd: store %s: recovery failed: %s\n",
		    db_target_safe(o.store), store_last_error());
		goto out;
	}
	if (nrequeued > 0)
		fprintf(stderr, "benchfleetd: re-queued %zu runs left running by the last "
		    "coordinator\n", nrequeued);
	if (o.lab_key == NULL && (o.lab_key = default_lab_key(o.store)) == NULL) {
		fprintf(stderr, "benchfleetd: out of memory\n");
		goto out;
	}
	make_parent(o.lab_key);
	{
		char fp[LABKEY_FP_LEN + 1];
		unsigned char pub[LABKEY_PUB_LEN];
		int made = 0;

		if (labkey_load_or_create(o.lab_key, &lk, &made, &d) != 0) {
			fprintf(stderr, "benchfleetd: %s\n", d.msg);
			goto out;
		}
		labkey_public(lk, pub);
		labkey_fingerprint(pub, fp);
		fprintf(stderr, "benchfleetd: lab key %s%s: %s\n", o.lab_key,
		    made ? " (made now)" : "", fp);
	}
	if ((o.artifact_dir == NULL && (o.artifact_dir = kstore_default_dir(o.store,
	    db_is_pg_target(o.store))) == NULL) || kstore_open(o.artifact_dir, &ks, &d) != 0 ||
	    kstore_prune(ks, st, KSTORE_DEFAULT_KEEP, &d) != 0) {
		fprintf(stderr, "benchfleetd: %s\n", o.artifact_dir != NULL ? d.msg :
		    "out of memory");
		goto out;
	}
	if (privsep) {
		memset(&mcfg, 0, sizeof(mcfg));
		mcfg.argv0 = argv[0];
		mcfg.args = argv + 1;
		mcfg.nargs = (size_t)argc - 1;
		mcfg.ops.kick = mon_kick;
		mcfg.ops.probe = mon_probe;
		mcfg.ops.sign = mon_sign;
		mcfg.ops.arg = &mctx;
		labkey_public(lk, mcfg.ops.lab_pub);
		mcfg.ops.has_lab_key = 1;
		mctx.lk = lk;
		mctx.st = st;
		if (monitor_new(&mcfg, &mon) != 0 ||
		    events_new_forward(st, monitor_forward, mon, &ev) != 0) {
			fprintf(stderr, "benchfleetd: cannot start the monitor\n");
			goto out;
		}
	} else if (events_new(st, &ev) != 0) {
		fprintf(stderr, "benchfleetd: cannot start the event hub%s%s\n",
		    store_is_shared(st) ? " (LISTEN on the store): " : "",
		    store_is_shared(st) ? store_last_error() : "");
		goto out;
	}
	if (recipes_load_dir(o.recipes, &rs, &d) != 0) {
		fprintf(stderr, "benchfleetd: %s\n", d.msg);
		goto out;
	}
	/* The API child first: it is exec'd before any SSH state or key exists
	 * here, and never sees them (each later one is exec'd afresh too). */
	if (privsep && monitor_start(mon, &d) != 0) {
		fprintf(stderr, "benchfleetd: %s\n", d.msg);
		goto out;
	}
	if (ssh_global_init() != 0) {
		fprintf(stderr, "benchfleetd: libssh2 initialisation failed\n");
		goto out;
	}
	memset(&scfg, 0, sizeof(scfg));
	scfg.known_hosts = o.known_hosts;
	scfg.agent_local = o.agent;
	scfg.agent_aarch64 = o.agent_aarch64;
	scfg.agent_remote = o.agent_remote;
	scfg.lease_s = lease;
	scfg.connect_timeout_ms = ctmo;
	scfg.probe_interval_s = probe;
	scfg.probe_failures = pfails;
	scfg.max_attempts = attempts;
	scfg.link_timeout_ms = linkto * 1000;
	scfg.boot_failures = bootfails;
	scfg.ev = ev;
	scfg.recipes = rs;
	scfg.workdir_root = o.workdir_root;
	scfg.ks = ks;
	if (sched_start(&scfg, st, &sc, &d) != 0) {
		fprintf(stderr, "benchfleetd: %s\n", d.msg);
		goto out;
	}
	atomic_store(&mctx.sc, sc);
	if (privsep) {
		bound = monitor_port(mon);
	} else {
		memset(&acfg, 0, sizeof(acfg));
		acfg.addr = addr;
		acfg.port = port;
		acfg.web_dir = o.web;
		acfg.auth_required = auth_required;
		acfg.tls_cert = o.tls_cert;
		acfg.tls_key = o.tls_key;
		acfg.lab_sign = labkey_sign_cb;
		acfg.lab_sign_arg = lk;
		labkey_public(lk, acfg.lab_pub);
		acfg.has_lab_key = 1;
		acfg.workdir_root = o.workdir_root;
		acfg.kernel_git_roots = o.kernel_git_roots;
		acfg.artifacts = ks;
		acfg.allow_hosts = o.allow_host;
		if (api_start(&acfg, st, rs, sc, ev, &api, &d) != 0) {
			fprintf(stderr, "benchfleetd: %s\n", d.msg);
			goto out;
		}
		bound = api_port(api);
	}
	if (o.port_file != NULL) {
		FILE *pf;
		char tmp[PATH_MAX];

		snprintf(tmp, sizeof(tmp), "%s.tmp", o.port_file);
		if ((pf = fopen(tmp, "w")) == NULL || fprintf(pf, "%d\n", bound) < 0 ||
		    fclose(pf) != 0 || rename(tmp, o.port_file) != 0) {
			fprintf(stderr, "benchfleetd: --port-file %s: %s\n", o.port_file,
			    strerror(errno));
			goto out;
		}
	}
	if (!auth_enabled(st, auth_required))
		fprintf(stderr, "benchfleetd: warning: the store has no API tokens, so the API "
		    "is open to every local user; create one with \"benchfleetd token create "
		    "--role admin\" (auth turns on at once) or start with --auth required\n");
	fprintf(stderr, "benchfleetd %s: listening on %s://%s%s%s:%d/ store %s (node %s), "
	    "%zu recipes from %s%s\n", BF_VERSION, o.tls_cert != NULL ? "https" : "http",
	    strchr(addr, ':') ? "[" : "", addr, strchr(addr, ':') ? "]" : "", bound,
	    db_target_safe(o.store), store_node(st), recipes_count(rs), o.recipes,
	    privsep ? ", HTTP in a child process" : ", one process (--privsep no)");
	while (sigwait(&set, &sig) == 0 && sig != SIGINT && sig != SIGTERM)
		;
	fprintf(stderr, "benchfleetd: signal %d, stopping\n", sig);
	ret = 0;
out:
	/* the API first: nothing new reaches the scheduler while it stops */
	monitor_stop(mon);
	api_stop(api);
	if (sched_stop(sc) != 0) {
		/* Busy workers still use the store: leave it to the OS, as after
		 * a kill; the next start recovers their runs. */
		fprintf(stderr, "benchfleetd: leaving runs in flight to the next start\n");
		_exit(ret);
	}
	events_free(ev);
	monitor_free(mon);
	store_close(st);
	kstore_close(ks);
	recipes_free(rs);
	labkey_free(lk);
	free(o.lab_key);
	free(o.listen);
	free(o.store);
	free(o.recipes);
	free(o.web);
	free(o.known_hosts);
	free(o.agent);
	free(o.agent_remote);
	free(o.agent_aarch64);
	free(o.port_file);
	free(o.lease);
	free(o.node);
	free(o.workdir_root);
	free(o.kernel_git_roots);
	free(o.artifact_dir);
	free(o.connect_timeout);
	free(o.probe_interval);
	free(o.tls_cert);
	free(o.tls_key);
	free(o.auth);
	free(o.max_attempts);
	free(o.probe_failures);
	free(o.link_timeout);
	free(o.boot_failures);
	free(o.peer_allow);
	boot_profiles_use(NULL);
	boot_profiles_clear(&o.profiles);
	free(o.allow_host);
	free(o.privsep);
	free(o.api_user);
	return ret;
}
