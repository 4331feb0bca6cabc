/*
 * bf-boot-check: a small CLI over coordinator/boot.c, driven by the
 * integration tests.
 *
 *   bf-boot-check [--config FILE] ensure HOST PORT USER KEY KNOWN_HOSTS BOOTCONFIG.json KERNEL CMDLINE
 *   bf-boot-check [--config FILE] parse BOOTCONFIG.json
 *   bf-boot-check [--config FILE] command BOOTCONFIG.json KERNEL CMDLINE
 *
 * --config FILE: a benchfleetd config file whose profiles (power.NAME,
 * boot-command.NAME) the boot config names; its other lines are refused.
 * ensure prints one JSON object: the boot result (boot_result_json) plus
 * "rc" (0 or the BF_ERR_* name), "state" ("ok" or "boot-failed" for
 * BF_ERR_TIMEOUT/BF_ERR_STATE, else "error") and "error" (the message).
 * KERNEL "" means the running kernel. Progress lines go to stderr. Exit 0
 * when the result was printed, 1 otherwise.
 * parse prints "ok method N kernels" or the validation message (exit 1).
 * command prints the remote command line the method would run.
 * Environment: BF_SSH_CONNECT_MS (default 10000); BF_BOOT_FRESH=1 reboots
 * even when the booted config matches (boot_hooks.fresh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "boot.h"
#include "buf.h"
#include "caps.h"
#include "config.h"
#include "err.h"
#include "ssh.h"

static const struct {
	int code;
	const char *name;
} err_names[] = {
	{ 0, "0" },
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

static struct boot_profiles profiles;

static enum config_kind
no_option(const char *name)
{
	return CONFIG_NONE;
}

static int
add_profile(void *arg, const char *kind, const char *name, const struct config_words *w,
    struct bf_diag *d)
{
	return boot_profiles_add(&profiles, kind, name, w->word, w->quoted, w->n, d);
}

static const struct config_ops profile_ops = { no_option, NULL, boot_profile_kinds,
    add_profile };

static void
log_line(void *arg, const char *line)
{
	fprintf(stderr, "%s\n", line);
}

static int
load_config(const char *path, struct boot_machine **mp, struct bf_diag *d)
{
	struct buf b;
	char chunk[4096];
	FILE *f = NULL;
	size_t n;
	int r;

	buf_init(&b, BF_MAX_API_BODY);
	if ((f = fopen(path, "r")) == NULL) {
		bf_diag_set(d, NULL, "%s: %s", path, strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if ((r = buf_append(&b, chunk, n)) != 0)
			goto out;
	r = boot_config_loads(b.data != NULL ? b.data : "", b.len, mp, d);
out:
	if (f != NULL)
		fclose(f);
	buf_free(&b);
	return r;
}

static int
parse_port(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || n < 1 || n > 65535) {
		fprintf(stderr, "bf-boot-check: port \"%s\" is not in 1..65535\n", s);
		exit(2);
	}
	return (int)n;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: bf-boot-check [--config FILE] ensure HOST PORT USER KEY KNOWN_HOSTS "
	    "BOOTCONFIG.json KERNEL CMDLINE\n"
	    "       bf-boot-check [--config FILE] parse BOOTCONFIG.json\n"
	    "       bf-boot-check [--config FILE] command BOOTCONFIG.json KERNEL CMDLINE\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct boot_machine *m = NULL;
	struct boot_result res;
	struct boot_hooks hooks = { log_line, NULL, NULL, 0 };
	struct ssh_target t;
	struct ssh_conn *c = NULL;
	struct bf_diag d;
	struct buf cmd;
	json_t *j = NULL;
	char *text = NULL;
	const char *cto;
	int r, ret = 1, inited = 0;

	bf_diag_clear(&d);
	buf_init(&cmd, BF_MAX_ARG * 2);
	if (argc >= 3 && strcmp(argv[1], "--config") == 0) {
		if (config_read(argv[2], &profile_ops, NULL, &d) != 0) {
			printf("config: %s\n", d.msg);
			goto out;
		}
		argc -= 2;
		argv += 2;
	}
	boot_profiles_use(&profiles);
	if (argc == 3 && strcmp(argv[1], "parse") == 0) {
		if ((r = load_config(argv[2], &m, &d)) != 0) {
			printf("%s: %s\n", err_name(r), d.msg);
			goto out;
		}
		printf("ok %s %zu kernels\n", boot_method_name(m), m->nkernels);
		ret = 0;
	} else if (argc == 5 && strcmp(argv[1], "command") == 0) {
		if ((r = load_config(argv[2], &m, &d)) != 0 ||
		    (r = boot_reboot_command(m, argv[3], argv[4], &cmd, &d)) != 0) {
			printf("%s: %s\n", err_name(r), d.msg);
			goto out;
		}
		printf("%s\n", cmd.data);
		ret = 0;
	} else if (argc == 10 && strcmp(argv[1], "ensure") == 0) {
		if ((r = load_config(argv[7], &m, &d)) != 0) {
			fprintf(stderr, "bf-boot-check: %s: %s\n", err_name(r), d.msg);
			goto out;
		}
		memset(&t, 0, sizeof(t));
		t.host = argv[2];
		t.port = parse_port(argv[3]);
		t.user = argv[4];
		t.key_path = argv[5];
		t.known_hosts = argv[6];
		cto = getenv("BF_SSH_CONNECT_MS");
		t.connect_timeout_ms = cto != NULL ? (int)strtol(cto, NULL, 10) : 10000;
		if (ssh_global_init() != 0) {
			fprintf(stderr, "bf-boot-check: libssh2_init failed\n");
			goto out;
		}
		inited = 1;
		hooks.fresh = getenv("BF_BOOT_FRESH") != NULL;
		r = boot_ensure(m, &t, &c, argv[8], argv[9], &hooks, &res, &d);
		if ((j = boot_result_json(&res)) == NULL ||
		    json_object_set_new(j, "rc", json_string(err_name(r))) != 0 ||
		    json_object_set_new(j, "state", json_string(r == 0 ? "ok" :
		    r == BF_ERR_TIMEOUT || r == BF_ERR_STATE ? "boot-failed" : "error")) != 0 ||
		    json_object_set_new(j, "error", json_string(r != 0 ? d.msg : "")) != 0 ||
		    json_object_set_new(j, "connected", json_boolean(c != NULL &&
		    ssh_alive(c))) != 0 ||
		    (text = json_dumps(j, JSON_SORT_KEYS)) == NULL) {
			fprintf(stderr, "bf-boot-check: out of memory\n");
			goto out;
		}
		printf("%s\n", text);
		/* a sanitizer's exit report must not swallow the result */
		fflush(stdout);
		ret = 0;
	} else {
		usage();
	}
out:
	free(text);
	json_decref(j);
	buf_free(&cmd);
	ssh_close(c);
	boot_machine_free(m);
	boot_profiles_use(NULL);
	boot_profiles_clear(&profiles);
	if (inited)
		ssh_global_cleanup();
	return ret;
}
