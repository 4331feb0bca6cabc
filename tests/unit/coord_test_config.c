/*
 * coord_test_config.c: benchfleetd's --config file (coordinator/config.c):
 * parsing (comments, blanks, CRLF, '=' in values, flags), the command line
 * winning over the file, several files, and bad lines: an unknown key, no
 * '=', a flag with a bad value, an empty value, an over-long line, a NUL
 * byte, a missing file, --config without FILE; each error names the file
 * and the line. Profiles (power.NAME, boot-command.NAME): word splitting
 * and its quoting rule, refused templates, duplicates and unknown kinds,
 * and boot-config.c resolving machine configs against them: a name resolves, an
 * argv or a shell template (an older release's) is refused without being
 * echoed, each template word reaches the remote shell as one quoted word.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "buf.h"
#include "config.h"
#include "err.h"
#include "t.h"

/* A small option table in the shape of benchfleetd's. */
struct topts {
	char listen[256], store[256], tls_cert[256];
	int insecure;
	int nset;		/* calls of set */
	int fail_set;		/* set returns BF_ERR_ALLOC when non-zero */
};

static const struct {
	const char *name;
	enum config_kind kind;
} tnames[] = {
	{ "listen", CONFIG_VALUE }, { "store", CONFIG_VALUE },
	{ "tls-cert", CONFIG_VALUE }, { "insecure", CONFIG_FLAG },
};

static enum config_kind
tkind(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(tnames) / sizeof(tnames[0]); i++)
		if (strcmp(tnames[i].name, name) == 0)
			return tnames[i].kind;
	return CONFIG_NONE;
}

static int
tset(void *arg, const char *name, const char *value)
{
	struct topts *o = arg;

	o->nset++;
	if (o->fail_set)
		return BF_ERR_ALLOC;
	if (strcmp(name, "insecure") == 0)
		o->insecure = strcmp(value, "yes") == 0;
	else if (strcmp(name, "listen") == 0)
		snprintf(o->listen, sizeof(o->listen), "%s", value);
	else if (strcmp(name, "store") == 0)
		snprintf(o->store, sizeof(o->store), "%s", value);
	else if (strcmp(name, "tls-cert") == 0)
		snprintf(o->tls_cert, sizeof(o->tls_cert), "%s", value);
	return 0;
}

static const struct config_ops tops = { tkind, tset, NULL, NULL };

/* The same table with benchfleetd's profile kinds, into boot-config.c's table. */
static struct boot_profiles tprof;

static int
tprofile(void *arg, const char *kind, const char *name, const struct config_words *w,
    struct bf_diag *d)
{
	return boot_profiles_add(&tprof, kind, name, w->word, w->quoted, w->n, d);
}

static const struct config_ops tops_prof = { tkind, tset, boot_profile_kinds, tprofile };
static char tmpdir[64];

/* Write text (len bytes) to tmpdir/name; returns the path (static). */
static const char *
tfile(const char *name, const char *text, size_t len)
{
	static char p[4][256];
	static int n;
	char *path = p[n++ % 4];
	FILE *f;

	snprintf(path, sizeof(p[0]), "%s/%s", tmpdir, name);
	if ((f = fopen(path, "w")) == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	return path;
}

static const char *
tconf(const char *name, const char *text)
{
	return tfile(name, text, strlen(text));
}

static void
test_parse(void)
{
	struct topts o;
	struct bf_diag d;
	const char *p;

	p = tconf("good.conf",
	    "# benchfleetd\n"
	    "\n"
	    "   \t\n"
	    "  # indented comment\n"
	    "listen = 127.0.0.1:8080\n"
	    "store=postgresql://bf@db.example.org/bench?sslmode=require   # trailing\n"
	    "\ttls-cert\t=\t/etc/benchfleet/cert#1.pem \r\n"
	    "insecure = yes\n"
	    "listen = 127.0.0.1:9090");		/* last wins; no final newline */
	memset(&o, 0, sizeof(o));
	bf_diag_clear(&d);
	T_EQ_INT(config_read(p, &tops, &o, &d), 0);
	T_EQ_STR(d.msg, "");
	T_EQ_STR(o.listen, "127.0.0.1:9090");
	/* '=' inside a value stays; " #" starts a comment, "t#1" does not */
	T_EQ_STR(o.store, "postgresql://bf@db.example.org/bench?sslmode=require");
	T_EQ_STR(o.tls_cert, "/etc/benchfleet/cert#1.pem");
	T_EQ_INT(o.insecure, 1);
	T_EQ_INT(o.nset, 5);

	p = tconf("flagno.conf", "insecure = yes\ninsecure = no\n");
	memset(&o, 0, sizeof(o));
	T_EQ_INT(config_read(p, &tops, &o, &d), 0);
	T_EQ_INT(o.insecure, 0);

	/* An empty file and one of comments only set nothing. */
	p = tconf("empty.conf", "");
	memset(&o, 0, sizeof(o));
	T_EQ_INT(config_read(p, &tops, &o, &d), 0);
	T_EQ_INT(o.nset, 0);
	p = tconf("comments.conf", "# a\n#listen = x\n\n");
	T_EQ_INT(config_read(p, &tops, &o, &d), 0);
	T_EQ_INT(o.nset, 0);

	/* A line of exactly CONFIG_MAX_LINE bytes is fine. */
	{
		char line[CONFIG_MAX_LINE + 2];

		memset(line, 'a', sizeof(line));
		memcpy(line, "store = ", 8);
		line[CONFIG_MAX_LINE] = '\n';
		p = tfile("max.conf", line, CONFIG_MAX_LINE + 1);
		memset(&o, 0, sizeof(o));
		T_EQ_INT(config_read(p, &tops, &o, &d), 0);
		T_EQ_INT(o.nset, 1);
	}
}

static void
test_load_override(void)
{
	struct topts o;
	struct bf_diag d;
	const char *p, *q;

	p = tconf("base.conf", "listen = 127.0.0.1:8080\nstore = /var/lib/benchfleet/bf.db\n"
	    "insecure = yes\n");
	q = tconf("more.conf", "tls-cert = /etc/benchfleet/cert.pem\nstore = /srv/bf.db\n");
	{
		char *argv[] = { "benchfleetd", "--store", "/tmp/x.db", "--config", (char *)p,
		    "--insecure", NULL };

		memset(&o, 0, sizeof(o));
		bf_diag_clear(&d);
		T_EQ_INT(config_load(6, argv, &tops, &o, &d), 0);
		T_EQ_STR(o.listen, "127.0.0.1:8080");
		/* given on the command line: the file does not set them */
		T_EQ_STR(o.store, "");
		T_EQ_INT(o.insecure, 0);
		T_EQ_INT(o.nset, 1);
	}
	{
		/* Two files in order; the second's store wins over the first's. */
		char *argv[] = { "benchfleetd", "--config", (char *)p, "--config", (char *)q, NULL };

		memset(&o, 0, sizeof(o));
		T_EQ_INT(config_load(5, argv, &tops, &o, &d), 0);
		T_EQ_STR(o.store, "/srv/bf.db");
		T_EQ_STR(o.tls_cert, "/etc/benchfleet/cert.pem");
		T_EQ_INT(o.insecure, 1);
	}
	{
		/* "--config" as the value of another option is that value, and a
		 * value that looks like an option name does not override. */
		char *argv[] = { "benchfleetd", "--tls-cert", "--config", "--listen", "--store",
		    "--config", (char *)p, NULL };

		memset(&o, 0, sizeof(o));
		T_EQ_INT(config_load(7, argv, &tops, &o, &d), 0);
		T_EQ_STR(o.listen, "");		/* --listen is on the command line */
		T_EQ_STR(o.store, "/var/lib/benchfleet/bf.db");	/* "--store" was a value */
	}
	{
		char *argv[] = { "benchfleetd", "--listen", "x:1", NULL };

		memset(&o, 0, sizeof(o));
		T_EQ_INT(config_load(3, argv, &tops, &o, &d), 0);
		T_EQ_INT(o.nset, 0);
	}
	{
		char *argv[] = { "benchfleetd", "--config", NULL };

		bf_diag_clear(&d);
		T_EQ_INT(config_load(2, argv, &tops, &o, &d), BF_ERR_INVALID);
		T_EQ_STR(d.msg, "--config needs FILE");
	}
	{
		/* An error in the file stops benchfleetd even for an option the
		 * command line overrides. */
		char *argv[] = { "benchfleetd", "--insecure", "--config", NULL, NULL };

		argv[3] = (char *)tconf("badflag2.conf", "insecure = maybe\n");
		bf_diag_clear(&d);
		T_EQ_INT(config_load(4, argv, &tops, &o, &d), BF_ERR_INVALID);
		T_CONTAINS(d.msg, "badflag2.conf:1: insecure: \"maybe\" is not yes or no");
	}
}

static void
test_bad(void)
{
	static const struct {
		const char *text;
		int r;
		const char *msg;	/* after "DIR/bad.conf" */
	} cases[] = {
		{ "# x\n\nlisten = 127.0.0.1:8080\n\n\n\nlisen = 127.0.0.1:8080\n",
		  BF_ERR_INVALID, ":7: unknown option \"lisen\"" },
		{ "listen 127.0.0.1:8080\n", BF_ERR_PARSE,
		  ":1: \"listen 127.0.0.1:8080\": expected \"key = value\"" },
		{ "store = a\ninsecure\n", BF_ERR_PARSE, ":2: \"insecure\": expected \"key = value\"" },
		{ "insecure = true\n", BF_ERR_INVALID, ":1: insecure: \"true\" is not yes or no" },
		{ "insecure = Yes\n", BF_ERR_INVALID, ":1: insecure: \"Yes\" is not yes or no" },
		{ "insecure =\n", BF_ERR_INVALID, ":1: insecure: \"\" is not yes or no" },
		{ "store =   # nothing\n", BF_ERR_INVALID, ":1: store needs a value" },
		{ " = x\n", BF_ERR_PARSE, ":1: no option name before '='" },
		{ "config = /etc/other.conf\n", BF_ERR_INVALID, ":1: unknown option \"config\"" },
		{ "--listen = x:1\n", BF_ERR_INVALID, ":1: unknown option \"--listen\"" },
		/* control bytes in the echoed text are shown as '?' */
		{ "li\033[2Jsten = x\n", BF_ERR_INVALID, ":1: unknown option \"li?[2Jsten\"" },
	};
	struct topts o;
	struct bf_diag d;
	char want[512];
	const char *p;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = tconf("bad.conf", cases[i].text);
		memset(&o, 0, sizeof(o));
		bf_diag_clear(&d);
		T_EQ_INT(config_read(p, &tops, &o, &d), cases[i].r);
		snprintf(want, sizeof(want), "%s%s", p, cases[i].msg);
		T_EQ_STR(d.msg, want);
	}

	/* Over-long line: CONFIG_MAX_LINE + 1 bytes before the newline. */
	{
		char *big = malloc(CONFIG_MAX_LINE + 64);

		memset(big, 'x', CONFIG_MAX_LINE + 64);
		memcpy(big, "listen = 1:1\nstore = ", 21);
		big[13 + CONFIG_MAX_LINE + 1] = '\n';
		p = tfile("long.conf", big, 13 + CONFIG_MAX_LINE + 2);
		free(big);
		bf_diag_clear(&d);
		memset(&o, 0, sizeof(o));
		T_EQ_INT(config_read(p, &tops, &o, &d), BF_ERR_TOOBIG);
		snprintf(want, sizeof(want), "%s:2: line longer than %d bytes", p, CONFIG_MAX_LINE);
		T_EQ_STR(d.msg, want);
		T_EQ_STR(o.store, "");
	}
	/* A NUL byte. */
	p = tfile("nul.conf", "listen = 1:1\nstore = a\0b\n", 25);
	bf_diag_clear(&d);
	T_EQ_INT(config_read(p, &tops, &o, &d), BF_ERR_PARSE);
	snprintf(want, sizeof(want), "%s:2: NUL byte in the line", p);
	T_EQ_STR(d.msg, want);

	/* A missing file, straight and through --config. */
	snprintf(want, sizeof(want), "%s/nope.conf", tmpdir);
	bf_diag_clear(&d);
	T_EQ_INT(config_read(want, &tops, &o, &d), BF_ERR_IO);
	T_CONTAINS(d.msg, "nope.conf: No such file or directory");
	{
		char *argv[] = { "benchfleetd", "--config", want, NULL };

		bf_diag_clear(&d);
		T_EQ_INT(config_load(3, argv, &tops, &o, &d), BF_ERR_IO);
		T_CONTAINS(d.msg, "nope.conf: No such file or directory");
	}
	/* A directory is not a file. */
	bf_diag_clear(&d);
	T_CHECK(config_read(tmpdir, &tops, &o, &d) != 0);
	T_CONTAINS(d.msg, tmpdir);

	/* The setter's failure is passed on, with file, line and key. */
	p = tconf("setfail.conf", "\nlisten = 1:1\n");
	memset(&o, 0, sizeof(o));
	o.fail_set = 1;
	bf_diag_clear(&d);
	T_EQ_INT(config_read(p, &tops, &o, &d), BF_ERR_ALLOC);
	snprintf(want, sizeof(want), "%s:2: listen: out of memory", p);
	T_EQ_STR(d.msg, want);
}

static const struct boot_profile *
tfind(enum boot_profile_kind kind, const char *name)
{
	size_t i;

	for (i = 0; i < tprof.n; i++)
		if (tprof.v[i].kind == kind && strcmp(tprof.v[i].name, name) == 0)
			return &tprof.v[i];
	return NULL;
}

/* built_initrd: the initrd a built kernel without its own boots with; a
 * path like the kernels' ones, refused by field otherwise. */
static void
test_built_initrd(void)
{
	static const struct {
		const char *val, *msg;
	} bad[] = {
		{ "\"boot/initrd\"", "is not an absolute path" },
		{ "\"/boot/initrd\\n-x\"", "control byte 0x0a at 12" },
		{ "7", "expected a string, got an integer" },
		{ "\"\"", "must not be empty" },
	};
	struct boot_machine *m = NULL;
	struct bf_diag d;
	char j[512];
	size_t i;

	snprintf(j, sizeof(j), "{\"method\":\"kexec\",\"kernels\":{\"6.1\":{\"image\":\"/x\"}},"
	    "\"built_initrd\":\"/boot/initrd.img-6.1\"}");
	bf_diag_clear(&d);
	T_EQ_INT(boot_config_loads(j, strlen(j), &m, &d), 0);
	T_EQ_STR(d.msg, "");
	T_CHECK(m != NULL && m->built_initrd != NULL);
	if (m != NULL && m->built_initrd != NULL)
		T_EQ_STR(m->built_initrd, "/boot/initrd.img-6.1");
	boot_machine_free(m);
	m = NULL;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(j, sizeof(j), "{\"method\":\"kexec\",\"kernels\":{\"6.1\":"
		    "{\"image\":\"/x\"}},\"built_initrd\":%s}", bad[i].val);
		bf_diag_clear(&d);
		T_EQ_INT(boot_config_loads(j, strlen(j), &m, &d), BF_ERR_INVALID);
		T_CHECK(m == NULL);
		T_EQ_STR(d.field, "boot.built_initrd");
		T_CONTAINS(d.msg, bad[i].msg);
	}
	/* a config without it: none */
	snprintf(j, sizeof(j), "{\"method\":\"kexec\",\"kernels\":{\"6.1\":{\"image\":\"/x\"}}}");
	T_EQ_INT(boot_config_loads(j, strlen(j), &m, &d), 0);
	T_CHECK(m != NULL && m->built_initrd == NULL);
	boot_machine_free(m);
}

static void
test_profiles(void)
{
	const struct boot_profile *pp;
	struct boot_machine *m = NULL;
	struct topts o;
	struct bf_diag d;
	struct buf cmd;
	json_t *v;
	char *err = NULL, *text;
	const char *p, *j;

	p = tconf("prof.conf",
	    "listen = 127.0.0.1:1\n"
	    "power.ipmi-a = ipmitool -I lanplus -H 10.0.0.9 -U admin -P 'se cr#et' chassis "
	    "power cycle   # a comment\n"
	    "boot-command.lab = /usr/local/sbin/lab-boot {kernel} --append={cmdline} "
	    "'$literal;' x'y z'w ''\n"
	    "power.vm1 = /bin/true\n");
	memset(&o, 0, sizeof(o));
	bf_diag_clear(&d);
	T_EQ_INT(config_read(p, &tops_prof, &o, &d), 0);
	T_EQ_STR(d.msg, "");
	T_EQ_STR(o.listen, "127.0.0.1:1");
	T_EQ_INT(tprof.n, 3);
	T_CHECK((pp = tfind(BOOT_PROFILE_POWER, "ipmi-a")) != NULL);
	if (pp != NULL) {
		T_EQ_INT(pp->argc, 12);
		T_EQ_STR(pp->argv[0], "ipmitool");
		T_EQ_STR(pp->argv[8], "se cr#et");	/* quoted: blank and '#' kept */
		T_EQ_STR(pp->argv[11], "cycle");	/* the comment is gone */
		T_CHECK(pp->argv[12] == NULL);
	}
	T_CHECK((pp = tfind(BOOT_PROFILE_COMMAND, "lab")) != NULL);
	if (pp != NULL) {
		T_EQ_INT(pp->argc, 6);
		T_EQ_STR(pp->argv[3], "$literal;");
		T_EQ_STR(pp->argv[4], "xy zw");
		T_EQ_STR(pp->argv[5], "");
	}
	T_CHECK(tfind(BOOT_PROFILE_COMMAND, "ipmi-a") == NULL);	/* kinds apart */

	/* Machine configs name profiles. */
	boot_profiles_use(&tprof);
	j = "{\"method\":\"command\",\"command\":\"lab\",\"power_cycle\":\"ipmi-a\"}";
	bf_diag_clear(&d);
	T_EQ_INT(boot_config_loads(j, strlen(j), &m, &d), 0);
	T_EQ_STR(d.msg, "");
	if (m != NULL) {
		T_EQ_STR(m->power_cycle->name, "ipmi-a");
		buf_init(&cmd, BF_MAX_ARG * 2);
		/* every word one shquote()d word, slots wherever they sit */
		T_EQ_INT(boot_reboot_command(m, "6.1.0-x", "a=b c", &cmd, &d), 0);
		T_EQ_STR(cmd.data, "'/usr/local/sbin/lab-boot' '6.1.0-x' '--append=a=b c' "
		    "'$literal;' 'xy zw' ''");
		/* a cmdline with shell syntax never gets that far */
		T_EQ_INT(boot_reboot_command(m, "6.1", "x$(touch /tmp/M)", &cmd, &d),
		    BF_ERR_INVALID);
		T_CONTAINS(d.msg, "cmdline: byte 1 (0x24) is not allowed");
		buf_free(&cmd);
	}
	boot_machine_free(m);
	m = NULL;

	/* An older release's inline argv or template: refused, never echoed. */
	static const struct {
		const char *json, *field, *msg;
	} legacy[] = {
		{ "{\"method\":\"kexec\",\"kernels\":{\"6.1\":{\"image\":\"/x\"}},"
		  "\"power_cycle\":[\"touch\",\"/tmp/MARK-pw\"]}", "boot.power_cycle",
		  "boot.power_cycle: must name a power profile, not give a command (an array): "
		  "commands live in the daemon's config file as power.NAME = COMMAND..." },
		{ "{\"method\":\"command\",\"command\":\"/sbin/lab-boot \\\"{cmdline}\\\" "
		  "MARK-pw\"}", "boot.command",
		  "boot.command: must name a boot-command profile, not give a command (a command "
		  "line)" },
		{ "{\"method\":\"command\",\"command\":\"nope\"}", "boot.command",
		  "boot.command: no boot-command profile \"nope\" in the daemon's config (it "
		  "declares lab)" },
		{ "{\"method\":\"command\"}", "boot.command", "boot.command: is required" },
		{ "{\"method\":\"kexec\",\"kernels\":{\"6.1\":{\"image\":\"/x\"}},"
		  "\"command\":\"lab\"}", "boot.command", "is only for method \"command\"" },
		{ "{\"method\":\"kexec\",\"kernels\":{\"6.1\":{\"image\":\"/x\"}},"
		  "\"power_cycle\":\"vm2\"}", "boot.power_cycle",
		  "no power profile \"vm2\" in the daemon's config (it declares ipmi-a, vm1)" },
	};
	size_t i;

	for (i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++) {
		bf_diag_clear(&d);
		T_EQ_INT(boot_config_loads(legacy[i].json, strlen(legacy[i].json), &m, &d),
		    BF_ERR_INVALID);
		T_CHECK(m == NULL);
		T_EQ_STR(d.field, legacy[i].field);
		T_CONTAINS(d.msg, legacy[i].msg);
		T_CHECK(strstr(d.msg, "MARK") == NULL);
		/* viewers: no command in the view, the reason in boot_error */
		v = boot_config_view(legacy[i].json, &err);
		T_CHECK(v != NULL);
		text = v != NULL ? json_dumps(v, JSON_COMPACT) : NULL;
		T_CHECK(text != NULL && strstr(text, "MARK") == NULL && strstr(text, "touch") == NULL);
		T_CONTAINS(err, legacy[i].field);
		T_CHECK(err != NULL && strstr(err, "MARK") == NULL);
		free(text);
		free(err);
		json_decref(v);
	}
	v = boot_config_view(j, &err);
	T_CHECK(err == NULL);
	T_EQ_STR(json_string_value(json_object_get(v, "power_cycle")), "ipmi-a");
	json_decref(v);
	T_CHECK(boot_config_view("not json", &err) == NULL && err == NULL);

	/* strip: names stay (configs still parse), every argv is gone */
	boot_profiles_strip(&tprof);
	T_EQ_INT(boot_config_loads(j, strlen(j), &m, &d), 0);
	T_CHECK(m != NULL && m->power_cycle != NULL && m->power_cycle->argv == NULL);
	boot_machine_free(m);
	m = NULL;
	boot_profiles_use(NULL);
	boot_profiles_clear(&tprof);
}

static void
test_profiles_bad(void)
{
	static const struct {
		const char *text;
		int r;
		const char *msg;	/* after "DIR/badp.conf" */
	} cases[] = {
		{ "power.a = /bin/true\n\npower.a = /bin/false\n", BF_ERR_EXISTS,
		  ":3: power.a: profile power.a is declared twice" },
		{ "powr.a = /bin/true\n", BF_ERR_INVALID,
		  ":1: unknown option \"powr.a\"; profiles are power.NAME, boot-command.NAME" },
		{ "power.-a = /bin/true\n", BF_ERR_INVALID,
		  ":1: power.-a: the profile name: \"-a\" is not a valid name" },
		{ "power. = /bin/true\n", BF_ERR_INVALID, ":1: power.: the profile name: " },
		{ "power.a =   # nothing\n", BF_ERR_INVALID, ":1: power.a needs a command" },
		{ "power.a = ipmitool -P \"secret\"\n", BF_ERR_INVALID,
		  ":1: power.a: word 3: '\"' is not quoting here; put a literal part in single "
		  "quotes" },
		{ "power.a = ipmitool -P se\\cret\n", BF_ERR_INVALID,
		  ":1: power.a: word 3: '\\' is not quoting here" },
		{ "power.a = ipmitool -P 'secret\n", BF_ERR_PARSE,
		  ":1: power.a: word 3: unclosed single quote" },
		{ "power.a = a\tb\001\n", BF_ERR_INVALID, ":1: power.a: control byte 0x01 in word 2" },
		{ "boot-command.q = /sbin/lab-boot \"{cmdline}\"\n", BF_ERR_INVALID,
		  ":1: boot-command.q: word 2: '\"' is not quoting here" },
		{ "boot-command.q = /sbin/lab-boot '{cmdline}'\n", BF_ERR_INVALID,
		  ":1: boot-command.q: word 2: slot {cmdline} inside quotes" },
		{ "boot-command.q = /sbin/lab-boot x'y'{cmdline}\n", BF_ERR_INVALID,
		  ":1: boot-command.q: word 2: slot {cmdline} inside quotes" },
		{ "boot-command.q = sh -c {cmdline}\n", BF_ERR_INVALID,
		  ":1: boot-command.q: word 1 is the shell sh, which would read slot values as code" },
		{ "boot-command.q = /usr/bin/sudo -n /bin/bash -c x{cmdline}\n", BF_ERR_INVALID,
		  ":1: boot-command.q: word 3 is the shell bash" },
		{ "boot-command.q = /sbin/lab-boot {cmdline}; reboot\n", BF_ERR_INVALID,
		  ":1: boot-command.q: word 2: ';' would be shell syntax" },
		{ "boot-command.q = /sbin/lab-boot $(id)\n", BF_ERR_INVALID,
		  ":1: boot-command.q: word 2: '$' would be shell syntax" },
		{ "boot-command.q = /sbin/lab-boot {cmdlin}\n", BF_ERR_INVALID,
		  ":1: boot-command.q: word 2: '{' is not part of a slot" },
		{ "boot-command.q = {kernel} x\n", BF_ERR_INVALID,
		  ":1: boot-command.q: the program (word 1) may not be a slot" },
	};
	struct topts o;
	struct bf_diag d;
	char want[512];
	const char *p;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = tconf("badp.conf", cases[i].text);
		memset(&o, 0, sizeof(o));
		bf_diag_clear(&d);
		T_EQ_INT(config_read(p, &tops_prof, &o, &d), cases[i].r);
		snprintf(want, sizeof(want), "%s%s", p, cases[i].msg);
		T_CONTAINS(d.msg, want);
		T_CHECK(strstr(d.msg, "secret") == NULL);
		boot_profiles_clear(&tprof);
	}
	/* a table without profiles: a dotted key is an unknown option */
	p = tconf("badp.conf", "power.a = /bin/true\n");
	bf_diag_clear(&d);
	T_EQ_INT(config_read(p, &tops, &o, &d), BF_ERR_INVALID);
	snprintf(want, sizeof(want), "%s:1: unknown option \"power.a\"", p);
	T_EQ_STR(d.msg, want);
}

int
main(void)
{
	char cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bf-config.XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_parse();
	test_load_override();
	test_bad();
	test_profiles();
	test_built_initrd();
	test_profiles_bad();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return t_done();
}
