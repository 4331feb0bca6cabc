/*
 * boot.c: boot control of a lab machine. The boot methods are a table; each
 * builds one remote command line (every variable part through shquote())
 * that schedules the reboot and returns before it happens. boot_ensure()
 * reads the booted state, reboots only when it differs from the request,
 * waits for SSH with backoff, verifies, and power-cycles a machine that
 * does not come back right.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "boot.h"
#include "buf.h"
#include "caps.h"
#include "err.h"
#include "jx.h"
#include "shquote.h"
#include "ssh.h"

extern char **environ;

#define BOOT_STATE_MAX		(BOOT_MAX_CMDLINE + 1024)	/* uname + cmdline + boot_id */
#define BOOT_EXEC_MS		30000	/* one remote command */
#define BOOT_FIRST_WAIT_MS	1000	/* let the machine go down before knocking */
#define BOOT_BACKOFF_MIN_MS	500
#define BOOT_BACKOFF_MAX_MS	5000
#define BOOT_CONNECT_MS		10000	/* per attempt while waiting */

/* Build the remote command that schedules the boot into k with cmdline. */
typedef int (*boot_cmd_fn)(const struct boot_machine *m, const struct boot_kernel *k,
    const char *cmdline, struct buf *cmd, struct bf_diag *d);

struct boot_method {
	const char *name;
	boot_cmd_fn build;
	int needs_image;	/* each kernel needs "image" */
	int sets_cmdline;	/* can boot an arbitrary cmdline */
};

static int boot_cmd_kexec(const struct boot_machine *, const struct boot_kernel *,
    const char *, struct buf *, struct bf_diag *);
static int boot_cmd_grub_reboot(const struct boot_machine *, const struct boot_kernel *,
    const char *, struct buf *, struct bf_diag *);
static int boot_cmd_grubby(const struct boot_machine *, const struct boot_kernel *,
    const char *, struct buf *, struct bf_diag *);
static int boot_cmd_command(const struct boot_machine *, const struct boot_kernel *,
    const char *, struct buf *, struct bf_diag *);

static const struct boot_method boot_methods[] = {
	{ "kexec", boot_cmd_kexec, 1, 1 },
	{ "grub-reboot", boot_cmd_grub_reboot, 0, 0 },
	{ "grubby", boot_cmd_grubby, 1, 1 },
	{ "command", boot_cmd_command, 0, 1 },
};
#define BOOT_NMETHODS (sizeof(boot_methods) / sizeof(boot_methods[0]))

static double
boot_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
boot_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void
boot_log(const struct boot_hooks *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
boot_log(const struct boot_hooks *h, const char *fmt, ...)
{
	char line[BF_MAX_LOG_LINE];
	va_list ap;

	if (h == NULL || h->log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	h->log(h->arg, line);
}

static int
boot_cancelled(const struct boot_hooks *h)
{
	return h != NULL && h->cancel != NULL && *h->cancel != 0;
}

/* Copy at most dstsz-1 bytes; always terminates. */
static void
boot_strlcpy(char *dst, const char *src, size_t dstsz)
{
	size_t n = strlen(src);

	if (n >= dstsz)
		n = dstsz - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- validation ---- */

int
boot_check_release(const char *s, struct bf_diag *d)
{
	size_t i, n = s != NULL ? strlen(s) : 0;
	int r;

	if (n == 0 || n > BOOT_MAX_RELEASE) {
		bf_diag_set(d, "kernel", "a kernel release is 1..%d bytes, not %zu",
		    BOOT_MAX_RELEASE, n);
		r = BF_ERR_INVALID;
		goto out;
	}
	for (i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || strchr("._+~-", c) == NULL)) {
			bf_diag_set(d, "kernel", "\"%.*s\" is not a kernel release "
			    "([A-Za-z0-9._+~-], starting alphanumeric)", (int)(n > 80 ? 80 : n), s);
			r = BF_ERR_INVALID;
			goto out;
		}
	}
	r = 0;
out:
	return r;
}

/* Printable ASCII without quotes, backslash or backquote (a grub entry). */
static int
boot_check_plain(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '\'' ||
		    *s == '"' || *s == '`' || *s == '\\')
			return BF_ERR_INVALID;
	return 0;
}

/*
 * A kernel command line is params separated by spaces, each of
 * BOOT_CMDLINE_CHARS. The set is what real params use (console=ttyS0,115200
 * root=UUID=... isolcpus=1-3 crashkernel=256M@16M acpi_osi=!Linux) and no
 * shell syntax: even where a slot's quoting would hold, a value that is
 * plain on its way to the machine needs no trust in that quoting.
 */
#define BOOT_CMDLINE_CHARS	"._,:=+/@%~!-"

int
boot_check_cmdline(const char *s, struct bf_diag *d)
{
	size_t i, n = s != NULL ? strlen(s) : 0;
	int r;

	if (n > BOOT_MAX_CMDLINE) {
		bf_diag_set(d, "cmdline", "%zu bytes is over the limit of %d", n, BOOT_MAX_CMDLINE);
		r = BF_ERR_INVALID;
		goto out;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == ' ' || (c != '\0' && strchr(BOOT_CMDLINE_CHARS, c) != NULL))) {
			bf_diag_set(d, "cmdline", "byte %zu (0x%02x) is not allowed: params are "
			    "A-Z a-z 0-9 and %s, separated by spaces", i, c, BOOT_CMDLINE_CHARS);
			r = BF_ERR_INVALID;
			goto out;
		}
	}
	r = 0;
out:
	return r;
}

/* An absolute path of printable bytes, no newline, bounded. */
static int
boot_check_path(const char *s, const char *field, struct bf_diag *d)
{
	size_t i, n = strlen(s);
	int r;

	if (s[0] != '/' || n > BOOT_MAX_PATH) {
		bf_diag_set(d, field, "\"%.80s\" is not an absolute path of at most %d bytes",
		    s, BOOT_MAX_PATH);
		r = BF_ERR_INVALID;
		goto out;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f) {
			bf_diag_set(d, field, "control byte 0x%02x at %zu in a path", c, i);
			r = BF_ERR_INVALID;
			goto out;
		}
	}
	r = 0;
out:
	return r;
}

/* ---- cmdline tokens ---- */

/* 1 when the space-separated token tok (of length n) is in list. */
static int
boot_has_token(const char *list, const char *tok, size_t n)
{
	const char *p = list, *e;

	while (*p != '\0') {
		while (*p == ' ' || *p == '\t')
			p++;
		for (e = p; *e != '\0' && *e != ' ' && *e != '\t'; e++)
			;
		if (e > p && (size_t)(e - p) == n && memcmp(p, tok, n) == 0)
			return 1;
		p = e;
	}
	return 0;
}

/*
 * Every token of want is in have; writes the first missing one into
 * missing (when non-NULL). Returns 1 when all are there.
 */
static int
boot_tokens_in(const char *want, const char *have, char *missing, size_t missingsz)
{
	const char *p = want, *e;

	while (*p != '\0') {
		while (*p == ' ')
			p++;
		for (e = p; *e != '\0' && *e != ' '; e++)
			;
		if (e > p && !boot_has_token(have, p, (size_t)(e - p))) {
			if (missing != NULL)
				snprintf(missing, missingsz, "%.*s", (int)(e - p), p);
			return 0;
		}
		p = e;
	}
	return 1;
}

/* have holds no token outside want, bar those a boot loader adds itself. */
static int
boot_tokens_only(const char *have, const char *want)
{
	static const char *const loader[] = { "BOOT_IMAGE=", "initrd=" };
	const char *p = have, *e;
	size_t i;

	while (*p != '\0') {
		int skip = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		for (e = p; *e != '\0' && *e != ' ' && *e != '\t'; e++)
			;
		for (i = 0; i < sizeof(loader) / sizeof(loader[0]); i++)
			if (strncmp(p, loader[i], strlen(loader[i])) == 0)
				skip = 1;
		if (e > p && !skip && !boot_has_token(want, p, (size_t)(e - p)))
			return 0;
		p = e;
	}
	return 1;
}

/* ---- remote commands ---- */

/* "sudo -n " when configured. */
static int
boot_priv(const struct boot_machine *m, struct buf *cmd)
{
	return m->sudo ? buf_puts(cmd, "sudo -n ") : 0;
}

/*
 * Append `setsid sh -c 'sleep 0.3; INNER' >/dev/null 2>&1 </dev/null &`:
 * the reboot happens after the SSH command has returned its status.
 */
static int
boot_detach(struct buf *cmd, const char *inner)
{
	struct buf w;
	int r;

	buf_init(&w, BF_MAX_ARG);
	if ((r = buf_printf(&w, "sleep 0.3; %s", inner)) != 0 ||
	    (r = buf_puts(cmd, "setsid sh -c ")) != 0 || (r = shquote(cmd, w.data)) != 0 ||
	    (r = buf_puts(cmd, " >/dev/null 2>&1 </dev/null &")) != 0)
		goto out;
	r = 0;
out:
	buf_free(&w);
	return r;
}

/* kexec -l IMAGE [--initrd=INITRD] --append=CMDLINE || exit; then kexec -e. */
static int
boot_cmd_kexec(const struct boot_machine *m, const struct boot_kernel *k, const char *cmdline,
    struct buf *cmd, struct bf_diag *d)
{
	int r;

	if ((r = boot_priv(m, cmd)) != 0 || (r = buf_puts(cmd, "kexec -l ")) != 0 ||
	    (r = shquote(cmd, k->image)) != 0)
		goto out;
	if (k->initrd != NULL &&
	    ((r = buf_puts(cmd, " --initrd=")) != 0 || (r = shquote(cmd, k->initrd)) != 0))
		goto out;
	if ((r = buf_puts(cmd, " --append=")) != 0 || (r = shquote(cmd, cmdline)) != 0 ||
	    (r = buf_puts(cmd, " || exit 3; ")) != 0)
		goto out;
	r = boot_detach(cmd, m->kexec_systemctl ? (m->sudo ? "sudo -n systemctl kexec" :
	    "systemctl kexec") : (m->sudo ? "sudo -n kexec -e" : "kexec -e"));
out:
	if (r != 0)
		bf_diag_set(d, "boot", "cannot build the kexec command: %s", bf_err_str(r));
	return r;
}

/* grub-reboot ENTRY (one-shot: a hung boot falls back to the default). */
static int
boot_cmd_grub_reboot(const struct boot_machine *m, const struct boot_kernel *k,
    const char *cmdline, struct buf *cmd, struct bf_diag *d)
{
	int r;

	if ((r = boot_priv(m, cmd)) != 0 || (r = buf_puts(cmd, "grub-reboot ")) != 0 ||
	    (r = shquote(cmd, k->grub_entry != NULL ? k->grub_entry : k->release)) != 0 ||
	    (r = buf_puts(cmd, " || exit 3; ")) != 0 ||
	    (r = boot_detach(cmd, m->sudo ? "sudo -n reboot" : "reboot")) != 0)
		goto out;
	r = 0;
out:
	if (r != 0)
		bf_diag_set(d, "boot", "cannot build the grub-reboot command: %s", bf_err_str(r));
	return r;
}

/* grubby --set-default IMAGE; grubby --update-kernel IMAGE --args CMDLINE; reboot.
 * grubby's change is persistent, not one-shot. */
static int
boot_cmd_grubby(const struct boot_machine *m, const struct boot_kernel *k, const char *cmdline,
    struct buf *cmd, struct bf_diag *d)
{
	int r;

	if ((r = boot_priv(m, cmd)) != 0 || (r = buf_puts(cmd, "grubby --set-default=")) != 0 ||
	    (r = shquote(cmd, k->image)) != 0 || (r = buf_puts(cmd, " || exit 3; ")) != 0)
		goto out;
	if (cmdline[0] != '\0' &&
	    ((r = boot_priv(m, cmd)) != 0 || (r = buf_puts(cmd, "grubby --update-kernel=")) != 0 ||
	    (r = shquote(cmd, k->image)) != 0 || (r = buf_puts(cmd, " --args=")) != 0 ||
	    (r = shquote(cmd, cmdline)) != 0 || (r = buf_puts(cmd, " || exit 3; ")) != 0))
		goto out;
	r = boot_detach(cmd, m->sudo ? "sudo -n reboot" : "reboot");
out:
	if (r != 0)
		bf_diag_set(d, "boot", "cannot build the grubby command: %s", bf_err_str(r));
	return r;
}

/* The slots of a boot-command template, in boot_cmd_command's order. */
static const char *const boot_slots[] = { "{kernel}", "{image}", "{initrd}", "{cmdline}" };
#define BOOT_NSLOTS (sizeof(boot_slots) / sizeof(boot_slots[0]))

/* The slot that starts at p, or -1. */
static int
boot_slot_at(const char *p)
{
	size_t i;

	for (i = 0; i < BOOT_NSLOTS; i++)
		if (strncmp(p, boot_slots[i], strlen(boot_slots[i])) == 0)
			return (int)i;
	return -1;
}

/*
 * The boot-command profile: each word, its slots filled, becomes one
 * shquote()d word, so a value stays one argument whatever it holds and
 * wherever the slot sits in its word. The command itself must return
 * before the machine goes down.
 */
static int
boot_cmd_command(const struct boot_machine *m, const struct boot_kernel *k, const char *cmdline,
    struct buf *cmd, struct bf_diag *d)
{
	const char *vals[BOOT_NSLOTS] = { k->release, k->image != NULL ? k->image : "",
	    k->initrd != NULL ? k->initrd : "", cmdline };
	const char *p;
	struct buf w;
	size_t i;
	int r, s;

	buf_init(&w, BF_MAX_ARG);
	if (m->command == NULL || m->command->argv == NULL) {
		bf_diag_set(d, "boot.command", "boot-command profile %s has no command in this "
		    "process", m->command != NULL ? m->command->name : "(none)");
		r = BF_ERR_STATE;
		goto out;
	}
	for (i = 0; i < m->command->argc; i++) {
		buf_reset(&w);
		for (p = m->command->argv[i]; *p != '\0'; ) {
			if ((s = boot_slot_at(p)) >= 0) {
				if ((r = buf_puts(&w, vals[s])) != 0)
					goto out;
				p += strlen(boot_slots[s]);
			} else {
				if ((r = buf_append(&w, p, 1)) != 0)
					goto out;
				p++;
			}
		}
		if ((i > 0 && (r = buf_puts(cmd, " ")) != 0) ||
		    (r = shquote(cmd, w.data != NULL ? w.data : "")) != 0)
			goto out;
	}
	r = 0;
out:
	if (r != 0 && r != BF_ERR_STATE)
		bf_diag_set(d, "boot", "cannot build the boot command: %s", bf_err_str(r));
	buf_free(&w);
	return r;
}

/* ---- profiles ---- */

const char *const boot_profile_kinds[] = { "power", "boot-command", NULL };

/* boot_profiles_use(): written once at start, read-only after. */
static const struct boot_profiles *boot_pf;

/* Words that would hand a slot's value to a shell as code. */
static const char *const boot_shells[] = { "sh", "bash", "dash", "ash", "zsh", "ksh", "mksh",
    "busybox", "eval", NULL };

/* The "syntax" bytes a boot-command template may hold only in quotes. */
#define BOOT_TEMPLATE_SYNTAX	";&|<>()$`*?[]~"

/* Check a boot-command template (see boot.h). */
static int
boot_check_template(char *const *words, const unsigned char *quoted, size_t n,
    struct bf_diag *d)
{
	const char *p, *base;
	size_t i, j;
	int s;

	for (i = 0; i < n; i++) {
		base = strrchr(words[i], '/');
		base = base != NULL ? base + 1 : words[i];
		for (j = 0; boot_shells[j] != NULL; j++)
			if (strcmp(base, boot_shells[j]) == 0) {
				bf_diag_set(d, NULL, "word %zu is the shell %s, which would read slot "
				    "values as code; name the program itself", i + 1, boot_shells[j]);
				return BF_ERR_INVALID;
			}
		for (p = words[i]; *p != '\0'; p++) {
			if (*p == '{' && (s = boot_slot_at(p)) >= 0) {
				if (i == 0) {
					bf_diag_set(d, NULL, "the program (word 1) may not be a slot");
					return BF_ERR_INVALID;
				}
				if (quoted[i]) {
					bf_diag_set(d, NULL, "word %zu: slot %s inside quotes; each "
					    "word is quoted for the machine's shell already, so write "
					    "the slot bare", i + 1, boot_slots[s]);
					return BF_ERR_INVALID;
				}
				p += strlen(boot_slots[s]) - 1;
				continue;
			}
			if (*p == '{' || *p == '}') {
				bf_diag_set(d, NULL, "word %zu: '%c' is not part of a slot (slots: "
				    "{kernel} {image} {initrd} {cmdline})", i + 1, *p);
				return BF_ERR_INVALID;
			}
			if (!quoted[i] && strchr(BOOT_TEMPLATE_SYNTAX, *p) != NULL) {
				bf_diag_set(d, NULL, "word %zu: '%c' would be shell syntax, but a "
				    "boot command is one program and its words, each passed as "
				    "one; put a literal '%c' in single quotes", i + 1, *p, *p);
				return BF_ERR_INVALID;
			}
		}
	}
	return 0;
}

static const struct boot_profile *
boot_profile_find_in(const struct boot_profiles *pf, enum boot_profile_kind kind,
    const char *name)
{
	size_t i;

	for (i = 0; pf != NULL && name != NULL && i < pf->n; i++)
		if (pf->v[i].kind == kind && strcmp(pf->v[i].name, name) == 0)
			return &pf->v[i];
	return NULL;
}

static void
boot_profile_wipe(struct boot_profile *p)
{
	size_t i;

	if (p->argv == NULL)
		return;
	for (i = 0; i < p->argc; i++) {
		explicit_bzero(p->argv[i], strlen(p->argv[i]));
		free(p->argv[i]);
	}
	free(p->argv);
	p->argv = NULL;
}

int
boot_profiles_add(struct boot_profiles *pf, const char *kind, const char *name,
    char *const *words, const unsigned char *quoted, size_t n, struct bf_diag *d)
{
	struct boot_profile p, *nv;
	struct bf_diag d2;
	size_t i;
	int r, k;

	memset(&p, 0, sizeof(p));
	for (k = 0; boot_profile_kinds[k] != NULL; k++)
		if (strcmp(boot_profile_kinds[k], kind) == 0)
			break;
	if (boot_profile_kinds[k] == NULL) {
		bf_diag_set(d, NULL, "\"%.40s\" is not a profile kind (power, boot-command)", kind);
		r = BF_ERR_INVALID;
		goto out;
	}
	p.kind = (enum boot_profile_kind)k;
	if (jx_check_name(name, NULL, &d2) != 0) {
		bf_diag_set(d, NULL, "the profile name: %s", d2.msg);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (boot_profile_find_in(pf, p.kind, name) != NULL) {
		bf_diag_set(d, NULL, "profile %s.%s is declared twice", kind, name);
		r = BF_ERR_EXISTS;
		goto out;
	}
	if (n == 0 || n > BF_MAX_ARGV || words[0][0] == '\0') {
		bf_diag_set(d, NULL, "needs a program and at most %d words", BF_MAX_ARGV);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (p.kind == BOOT_PROFILE_COMMAND && (r = boot_check_template(words, quoted, n, d)) != 0)
		goto out;
	if ((p.name = strdup(name)) == NULL || (p.argv = calloc(n + 1, sizeof(char *))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (strlen(words[i]) > BF_MAX_ARG) {
			bf_diag_set(d, NULL, "word %zu is over %d bytes", i + 1, BF_MAX_ARG);
			r = BF_ERR_TOOBIG;
			goto out;
		}
		if ((p.argv[i] = strdup(words[i])) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		p.argc++;
	}
	if ((nv = realloc(pf->v, (pf->n + 1) * sizeof(*nv))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	pf->v = nv;
	pf->v[pf->n++] = p;
	memset(&p, 0, sizeof(p));
	r = 0;
out:
	boot_profile_wipe(&p);
	free(p.name);
	return r;
}

void
boot_profiles_clear(struct boot_profiles *pf)
{
	size_t i;

	if (pf == NULL)
		return;
	for (i = 0; i < pf->n; i++) {
		boot_profile_wipe(&pf->v[i]);
		free(pf->v[i].name);
	}
	free(pf->v);
	pf->v = NULL;
	pf->n = 0;
}

void
boot_profiles_strip(struct boot_profiles *pf)
{
	size_t i;

	for (i = 0; pf != NULL && i < pf->n; i++)
		boot_profile_wipe(&pf->v[i]);
}

void
boot_profiles_use(const struct boot_profiles *pf)
{
	boot_pf = pf;
}

const struct boot_profile *
boot_profile_find(enum boot_profile_kind kind, const char *name)
{
	return boot_profile_find_in(boot_pf, kind, name);
}

/* ---- config ---- */

const char *
boot_method_name(const struct boot_machine *m)
{
	return m != NULL && m->method != NULL ? m->method->name : "";
}

const struct boot_kernel *
boot_kernel_find(const struct boot_machine *m, const char *release)
{
	size_t i;

	for (i = 0; m != NULL && release != NULL && i < m->nkernels; i++)
		if (strcmp(m->kernels[i].release, release) == 0)
			return &m->kernels[i];
	return NULL;
}

void
boot_machine_free(struct boot_machine *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nkernels; i++) {
		free(m->kernels[i].release);
		free(m->kernels[i].image);
		free(m->kernels[i].initrd);
		free(m->kernels[i].grub_entry);
	}
	free(m->kernels);
	free(m->cmdline_base);
	free(m);
}

/* Optional string obj[key] of at most max bytes, duplicated into *out. */
static int
boot_dup_str(const json_t *obj, const char *key, int required, size_t max, char **out,
    const char *path, struct bf_diag *d)
{
	const char *s = NULL;
	int r;

	if ((r = jx_str(obj, key, required, max, &s, path, d)) != 0 || s == NULL)
		goto out;
	if ((*out = strdup(s)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = 0;
out:
	return r;
}

static int
boot_parse_kernel(const char *release, const json_t *v, const struct boot_method *meth,
    const char *path, struct boot_kernel *k, struct bf_diag *d)
{
	static const char *const keys[] = { "image", "initrd", "grub_entry", NULL };
	char p[BF_DIAG_FIELD], f[BF_DIAG_FIELD];
	struct bf_diag d2;
	int r;

	if (boot_check_release(release, &d2) != 0) {
		bf_diag_set(d, path, "\"%.80s\" is not a kernel release as uname -r prints it "
		    "([A-Za-z0-9._+~-], 1..%d bytes)", release, BOOT_MAX_RELEASE);
		r = BF_ERR_INVALID;
		goto out;
	}
	jx_path(p, sizeof(p), path, release);
	if (!json_is_object(v)) {
		bf_diag_set(d, p, "must be an object like {\"image\": \"/boot/vmlinuz-%.64s\"}, "
		    "not %s", release, jx_type_name(v));
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = jx_only_keys(v, keys, p, d)) != 0)
		goto out;
	if ((k->release = strdup(release)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = boot_dup_str(v, "image", meth->needs_image, BOOT_MAX_PATH, &k->image, p, d)) != 0 ||
	    (r = boot_dup_str(v, "initrd", JX_OPTIONAL, BOOT_MAX_PATH, &k->initrd, p, d)) != 0 ||
	    (r = boot_dup_str(v, "grub_entry", JX_OPTIONAL, BOOT_MAX_PATH, &k->grub_entry, p,
	    d)) != 0)
		goto out;
	if (k->image != NULL &&
	    (r = boot_check_path(k->image, jx_path(f, sizeof(f), p, "image"), d)) != 0)
		goto out;
	if (k->initrd != NULL &&
	    (r = boot_check_path(k->initrd, jx_path(f, sizeof(f), p, "initrd"), d)) != 0)
		goto out;
	if (k->grub_entry != NULL && boot_check_plain(k->grub_entry) != 0) {
		bf_diag_set(d, jx_path(f, sizeof(f), p, "grub_entry"), "%s",
		    "must be printable ASCII without quotes or backslashes");
		r = BF_ERR_INVALID;
		goto out;
	}
	r = 0;
out:
	return r;
}

/*
 * obj[key], a profile name of kind, resolved against boot_profiles_use()'s
 * table into *out (NULL when absent). Anything but a name (an older
 * release's argv or shell template) is refused with what to do instead,
 * never echoing the value: it may hold a password.
 */
static int
boot_parse_profile_ref(const json_t *obj, const char *key, enum boot_profile_kind kind,
    int required, const char *path, const struct boot_profile **out, struct bf_diag *d)
{
	const char *kname = boot_profile_kinds[kind], *name;
	char p[BF_DIAG_FIELD], known[256];
	const json_t *v = json_object_get(obj, key);
	size_t i;
	int r;

	*out = NULL;
	jx_path(p, sizeof(p), path, key);
	if (v == NULL) {
		if (required) {
			bf_diag_set(d, p, "is required: the name of a %s profile of the daemon's "
			    "config (%s.NAME = ...)", kname, kname);
			r = BF_ERR_INVALID;
			goto out;
		}
		r = 0;
		goto out;
	}
	if (!json_is_string(v) || jx_check_name(json_string_value(v), NULL, NULL) != 0) {
		bf_diag_set(d, p, "must name a %s profile, not give a command (%s): commands live "
		    "in the daemon's config file as %s.NAME = COMMAND..., and one stored by an "
		    "older benchfleet is never run; declare it there and register the machine "
		    "again with \"%s\": \"NAME\"", kname, json_is_string(v) ? "a command line" :
		    jx_type_name(v), kname, key);
		r = BF_ERR_INVALID;
		goto out;
	}
	name = json_string_value(v);
	if ((*out = boot_profile_find(kind, name)) == NULL) {
		known[0] = '\0';
		for (i = 0; boot_pf != NULL && i < boot_pf->n; i++)
			if (boot_pf->v[i].kind == kind)
				snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
				    known[0] ? ", " : "", boot_pf->v[i].name);
		if (known[0] != '\0')
			bf_diag_set(d, p, "no %s profile \"%s\" in the daemon's config (it "
			    "declares %s)", kname, name, known);
		else
			bf_diag_set(d, p, "no %s profile \"%s\": the daemon's config declares "
			    "no %s.NAME", kname, name, kname);
		r = BF_ERR_INVALID;
		goto out;
	}
	r = 0;
out:
	return r;
}

int
boot_config_parse(const json_t *obj, const char *path, struct boot_machine **out,
    struct bf_diag *d)
{
	static const char *const keys[] = { "method", "kernels", "cmdline_base", "timeout_s",
	    "power_cycle", "power_cycle_timeout_s", "command", "kexec_exec", "sudo", NULL };
	struct boot_machine *m = NULL;
	char p[BF_DIAG_FIELD], names[128];
	const char *s = NULL, *key;
	json_t *kernels = NULL, *v;
	int64_t n;
	size_t i;
	int r;

	if (path == NULL)
		path = "";
	if (!json_is_object(obj)) {
		bf_diag_set(d, path, "a boot config must be an object, not %s", jx_type_name(obj));
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = jx_only_keys(obj, keys, path, d)) != 0)
		goto out;
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = jx_str(obj, "method", JX_REQUIRED, BF_MAX_NAME, &s, path, d)) != 0)
		goto out;
	names[0] = '\0';
	for (i = 0; i < BOOT_NMETHODS; i++) {
		if (strcmp(s, boot_methods[i].name) == 0)
			m->method = &boot_methods[i];
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
		    i > 0 ? ", " : "", boot_methods[i].name);
	}
	if (m->method == NULL) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, "method"),
		    "\"%.64s\" is not one of %s", s, names);
		r = BF_ERR_INVALID;
		goto out;
	}

	/* kernels: release -> {image, initrd, grub_entry} */
	if ((r = jx_obj(obj, "kernels", strcmp(m->method->name, "command") != 0, &kernels, path,
	    d)) != 0)
		goto out;
	jx_path(p, sizeof(p), path, "kernels");
	if (kernels != NULL) {
		if (json_object_size(kernels) == 0 || json_object_size(kernels) > BOOT_MAX_KERNELS) {
			bf_diag_set(d, p, "must name 1..%d kernels, not %zu", BOOT_MAX_KERNELS,
			    json_object_size(kernels));
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((m->kernels = calloc(json_object_size(kernels), sizeof(*m->kernels))) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		json_object_foreach(kernels, key, v) {
			r = boot_parse_kernel(key, v, m->method, p, &m->kernels[m->nkernels], d);
			m->nkernels++;
			if (r != 0)
				goto out;
		}
	}

	if ((r = boot_dup_str(obj, "cmdline_base", JX_OPTIONAL, BOOT_MAX_CMDLINE,
	    &m->cmdline_base, path, d)) != 0)
		goto out;
	if (m->cmdline_base == NULL && (m->cmdline_base = strdup("")) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (boot_check_cmdline(m->cmdline_base, NULL) != 0) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, "cmdline_base"), "%s",
		    "must be printable ASCII params without quotes, backslashes or newlines");
		r = BF_ERR_INVALID;
		goto out;
	}
	n = 300;
	if ((r = jx_int(obj, "timeout_s", JX_OPTIONAL, 5, BOOT_MAX_TIMEOUT_S, &n, path, d)) != 0)
		goto out;
	m->timeout_s = (int)n;
	n = 60;
	if ((r = jx_int(obj, "power_cycle_timeout_s", JX_OPTIONAL, 1, 3600, &n, path, d)) != 0)
		goto out;
	m->power_cycle_timeout_s = (int)n;
	if ((r = boot_parse_profile_ref(obj, "power_cycle", BOOT_PROFILE_POWER, 0, path,
	    &m->power_cycle, d)) != 0)
		goto out;
	if (json_object_get(obj, "command") != NULL && strcmp(m->method->name, "command") != 0) {
		bf_diag_set(d, jx_path(p, sizeof(p), path, "command"),
		    "is only for method \"command\", not \"%s\"", m->method->name);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = boot_parse_profile_ref(obj, "command", BOOT_PROFILE_COMMAND,
	    strcmp(m->method->name, "command") == 0, path, &m->command, d)) != 0)
		goto out;
	s = NULL;
	if ((r = jx_str(obj, "kexec_exec", JX_OPTIONAL, BF_MAX_NAME, &s, path, d)) != 0)
		goto out;
	if (s != NULL) {
		if (strcmp(m->method->name, "kexec") != 0 ||
		    (strcmp(s, "kexec") != 0 && strcmp(s, "systemctl") != 0)) {
			bf_diag_set(d, jx_path(p, sizeof(p), path, "kexec_exec"),
			    "\"%.64s\" is not one of kexec, systemctl (and only for method kexec)", s);
			r = BF_ERR_INVALID;
			goto out;
		}
		m->kexec_systemctl = strcmp(s, "systemctl") == 0;
	}
	if ((r = jx_bool(obj, "sudo", JX_OPTIONAL, &m->sudo, path, d)) != 0)
		goto out;

	*out = m;
	m = NULL;
	r = 0;
out:
	boot_machine_free(m);
	return r;
}

int
boot_config_loads(const char *text, size_t len, struct boot_machine **out, struct bf_diag *d)
{
	json_t *doc = NULL;
	int r;

	if ((r = jx_loads(text, len, BF_MAX_API_BODY, &doc, d)) != 0)
		goto out;
	r = boot_config_parse(doc, "boot", out, d);
out:
	json_decref(doc);
	return r;
}

json_t *
boot_config_view(const char *text, char **errp)
{
	static const char *const refs[] = { "power_cycle", "command" };
	struct boot_machine *m = NULL;
	struct bf_diag d;
	json_t *doc = NULL, *v;
	size_t i;

	if (errp != NULL)
		*errp = NULL;
	bf_diag_clear(&d);
	if (text == NULL || jx_loads(text, strlen(text), BF_MAX_API_BODY, &doc, &d) != 0 ||
	    !json_is_object(doc)) {
		json_decref(doc);
		return NULL;
	}
	/* the messages never quote a command, so the error may be shown */
	if (boot_config_parse(doc, "boot", &m, &d) != 0 && errp != NULL)
		*errp = strdup(d.msg);
	boot_machine_free(m);
	for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		v = json_object_get(doc, refs[i]);
		if (v != NULL && (!json_is_string(v) ||
		    jx_check_name(json_string_value(v), NULL, NULL) != 0))
			json_object_del(doc, refs[i]);
	}
	return doc;
}

/* ---- the machine's state ---- */

struct boot_state {
	char kernel[BOOT_MAX_RELEASE + 1];
	char cmdline[BOOT_MAX_CMDLINE + 1];
	char boot_id[BOOT_BOOT_ID_LEN + 1];
};

/* Take the next line of [*p, end) into dst (cap dstsz-1, printable only). */
static int
boot_take_line(const char **p, const char *end, char *dst, size_t dstsz)
{
	const char *e = memchr(*p, '\n', (size_t)(end - *p));
	size_t n, i;
	int r;

	if (e == NULL)
		e = end;
	n = (size_t)(e - *p);
	if (n >= dstsz) {
		r = BF_ERR_TOOBIG;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if ((unsigned char)(*p)[i] < 0x20 || (unsigned char)(*p)[i] > 0x7e) {
			r = BF_ERR_PROTO;
			goto out;
		}
	}
	memcpy(dst, *p, n);
	dst[n] = '\0';
	*p = e < end ? e + 1 : e;
	r = 0;
out:
	return r;
}

/* uname -r, /proc/cmdline and boot_id, in one exec. */
static int
boot_read_state(struct ssh_conn *c, struct boot_state *st, struct bf_diag *d)
{
	struct buf out;
	const char *p, *end;
	int r, status = -1;
	size_t i;

	buf_init(&out, BOOT_STATE_MAX);
	if ((r = ssh_exec_capture(c, "uname -r; cat /proc/cmdline; "
	    "cat /proc/sys/kernel/random/boot_id", &out, NULL, BOOT_EXEC_MS, &status, d)) != 0)
		goto out;
	if (status != 0) {
		bf_diag_set(d, "boot", "reading uname -r, /proc/cmdline and boot_id exited %d",
		    status);
		r = BF_ERR_STATE;
		goto out;
	}
	p = out.data != NULL ? out.data : "";
	end = p + out.len;
	if ((r = boot_take_line(&p, end, st->kernel, sizeof(st->kernel))) != 0 ||
	    (r = boot_take_line(&p, end, st->cmdline, sizeof(st->cmdline))) != 0 ||
	    (r = boot_take_line(&p, end, st->boot_id, sizeof(st->boot_id))) != 0) {
		bf_diag_set(d, "boot", "the machine's uname -r / cmdline / boot_id output is "
		    "malformed (%s)", bf_err_str(r));
		r = BF_ERR_PROTO;
		goto out;
	}
	for (i = 0; st->boot_id[i] != '\0'; i++)
		if (strchr("0123456789abcdef-", st->boot_id[i]) == NULL)
			break;
	if (st->kernel[0] == '\0' || strlen(st->boot_id) != BOOT_BOOT_ID_LEN ||
	    st->boot_id[i] != '\0') {
		bf_diag_set(d, "boot", "the machine reported kernel \"%.64s\" and boot_id "
		    "\"%.40s\": not a release and a UUID", st->kernel, st->boot_id);
		r = BF_ERR_PROTO;
		goto out;
	}
	r = 0;
out:
	buf_free(&out);
	return r;
}

static void
boot_result_state(struct boot_result *res, const struct boot_state *st)
{
	boot_strlcpy(res->kernel, st->kernel, sizeof(res->kernel));
	boot_strlcpy(res->cmdline, st->cmdline, sizeof(res->cmdline));
	boot_strlcpy(res->boot_id, st->boot_id, sizeof(res->boot_id));
}

/*
 * Wait until the machine answers SSH with a boot_id other than old (and
 * other than also_old when non-empty), at most until deadline. Every
 * failure to connect or read (refused, reset, hung handshake, dropped
 * session) is retried with backoff. 0 with *connp and *st set;
 * BF_ERR_TIMEOUT (reason in why); BF_ERR_CANCELLED.
 */
static int
boot_wait(const struct ssh_target *t, const char *old, const char *also_old, double deadline,
    const struct boot_hooks *h, struct ssh_conn **connp, struct boot_state *st,
    struct boot_result *res, char *why, size_t whysz)
{
	struct ssh_target tt = *t;
	struct ssh_conn *c = NULL;
	struct bf_diag d2;
	char old1[BOOT_BOOT_ID_LEN + 1], old2[BOOT_BOOT_ID_LEN + 1];
	int r, backoff = BOOT_BACKOFF_MIN_MS, left_ms, same = 0;

	/* copies: old may point into *st, which each attempt overwrites */
	boot_strlcpy(old1, old, sizeof(old1));
	boot_strlcpy(old2, also_old != NULL ? also_old : "", sizeof(old2));
	old = old1;
	also_old = old2[0] != '\0' ? old2 : NULL;
	snprintf(why, whysz, "%s", "no SSH");
	boot_sleep_ms(BOOT_FIRST_WAIT_MS);
	for (;;) {
		if (boot_cancelled(h)) {
			r = BF_ERR_CANCELLED;
			goto out;
		}
		left_ms = (int)((deadline - boot_now()) * 1000);
		if (left_ms <= 0) {
			r = BF_ERR_TIMEOUT;
			goto out;
		}
		tt.connect_timeout_ms = left_ms < BOOT_CONNECT_MS ? left_ms : BOOT_CONNECT_MS;
		if (t->connect_timeout_ms > 0 && t->connect_timeout_ms < tt.connect_timeout_ms)
			tt.connect_timeout_ms = t->connect_timeout_ms;
		res->attempts++;
		bf_diag_clear(&d2);
		if ((r = ssh_connect(&tt, &c, &d2)) == 0 && (r = boot_read_state(c, st, &d2)) == 0) {
			if (strcmp(st->boot_id, old) != 0 &&
			    (also_old == NULL || strcmp(st->boot_id, also_old) != 0)) {
				*connp = c;
				c = NULL;
				r = 0;
				goto out;
			}
			/* still the old boot: the reboot has not happened yet */
			if (!same++)
				boot_log(h, "boot: still on boot %s; waiting", old);
			snprintf(why, whysz, "still on the old boot %s", old);
		} else {
			if (r == BF_ERR_HOSTKEY || r == BF_ERR_AUTH) {
				/* a changed key or a refused login will not heal by waiting */
				snprintf(why, whysz, "%s", d2.msg);
				goto out;
			}
			snprintf(why, whysz, "no SSH (last: %.300s)", d2.msg[0] ? d2.msg : bf_err_str(r));
		}
		ssh_close(c);
		c = NULL;
		boot_sleep_ms(backoff);
		backoff = backoff * 2 > BOOT_BACKOFF_MAX_MS ? BOOT_BACKOFF_MAX_MS : backoff * 2;
	}
out:
	ssh_close(c);
	return r;
}

/* Run the power-cycle argv locally: stdin /dev/null, stdout to stderr.
 * Returns its exit status, or -1 (could not run, killed, timed out). */
static int
boot_power_cycle(const struct boot_machine *m, const struct boot_hooks *h)
{
	posix_spawn_file_actions_t fa;
	double deadline;
	pid_t pid, w;
	int status = -1, ret = -1, fa_ok = 0;

	if (m->power_cycle == NULL)
		goto out;
	if (m->power_cycle->argv == NULL) {
		boot_log(h, "boot: power profile %s has no command in this process",
		    m->power_cycle->name);
		goto out;
	}
	if (posix_spawn_file_actions_init(&fa) != 0)
		goto out;
	fa_ok = 1;
	if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, 2, 1) != 0)
		goto out;
	if ((errno = posix_spawnp(&pid, m->power_cycle->argv[0], &fa, NULL,
	    m->power_cycle->argv, environ)) != 0) {
		boot_log(h, "boot: cannot run power profile %s: %s", m->power_cycle->name,
		    strerror(errno));
		goto out;
	}
	deadline = boot_now() + m->power_cycle_timeout_s;
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			goto out;
		if (boot_now() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			boot_log(h, "boot: power profile %s killed after %d s",
			    m->power_cycle->name, m->power_cycle_timeout_s);
			goto out;
		}
		boot_sleep_ms(50);
	}
	if (WIFEXITED(status))
		ret = WEXITSTATUS(status);
out:
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	return ret;
}

int
boot_ensure(const struct boot_machine *m, const struct ssh_target *t,
    struct ssh_conn **connp, const char *kernel, const char *cmdline,
    const struct boot_hooks *h, struct boot_result *res, struct bf_diag *d)
{
	const struct boot_kernel *k;
	struct boot_kernel bare;
	char relbuf[BOOT_MAX_RELEASE + 1];
	struct boot_state st, fail_st;
	struct buf want, cmd, err;
	char missing[128], why[BF_DIAG_MSG];
	double t0 = boot_now(), t_reboot = 0, deadline;
	int r, status = -1, fail_seen = 0;

	memset(res, 0, sizeof(*res));
	res->power_cycle_status = -1;
	memset(&st, 0, sizeof(st));
	buf_init(&want, BOOT_MAX_CMDLINE * 2 + 2);
	buf_init(&cmd, BF_MAX_ARG * 2);
	buf_init(&err, BF_MAX_LOG_LINE);
	if (cmdline == NULL)
		cmdline = "";
	if ((r = boot_check_cmdline(cmdline, d)) != 0)
		goto out;
	if (kernel != NULL && kernel[0] != '\0') {
		if ((r = boot_check_release(kernel, d)) != 0)
			goto out;
		/* without a map (grub-reboot, command) the release alone is passed on */
		if (boot_kernel_find(m, kernel) == NULL &&
		    (m->method->needs_image || m->nkernels > 0)) {
			bf_diag_set(d, "kernel", "\"%s\" is not among the machine's kernels", kernel);
			r = BF_ERR_NOTFOUND;
			goto out;
		}
	}
	if (!m->method->sets_cmdline && cmdline[0] != '\0') {
		bf_diag_set(d, "cmdline", "method %s cannot boot a one-shot command line; "
		    "give the params in the grub entry or use kexec", m->method->name);
		r = BF_ERR_INVALID;
		goto out;
	}
	/* the full command line: base, then the request */
	if ((r = buf_puts(&want, m->cmdline_base)) != 0 ||
	    (r = buf_puts(&want, m->cmdline_base[0] && cmdline[0] ? " " : "")) != 0 ||
	    (r = buf_puts(&want, cmdline)) != 0)
		goto out;
	if (want.len > BOOT_MAX_CMDLINE) {
		bf_diag_set(d, "cmdline", "base + request is %zu bytes, over %d", want.len,
		    BOOT_MAX_CMDLINE);
		r = BF_ERR_INVALID;
		goto out;
	}

	if (*connp == NULL || !ssh_alive(*connp)) {
		ssh_close(*connp);
		*connp = NULL;
		if ((r = ssh_connect(t, connp, d)) != 0)
			goto out;
	}
	if ((r = boot_read_state(*connp, &st, d)) != 0)
		goto out;
	boot_result_state(res, &st);
	boot_strlcpy(res->prev_boot_id, st.boot_id, sizeof(res->prev_boot_id));
	if (kernel == NULL || kernel[0] == '\0')
		kernel = st.kernel;
	if ((k = boot_kernel_find(m, kernel)) == NULL && m->method->needs_image) {
		bf_diag_set(d, "kernel", "the running kernel \"%s\" is not among the machine's "
		    "kernels", kernel);
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	if ((h == NULL || !h->fresh) && strcmp(st.kernel, kernel) == 0 &&
	    boot_tokens_in(want.data ? want.data : "", st.cmdline, NULL, 0) &&
	    boot_tokens_only(st.cmdline, want.data ? want.data : "")) {
		boot_log(h, "boot: already on %s with \"%s\"; no reboot", st.kernel, st.cmdline);
		r = 0;
		goto out;
	}
	if (k == NULL) {
		/* grub-reboot and command need no map entry: the release alone */
		boot_strlcpy(relbuf, kernel, sizeof(relbuf));
		memset(&bare, 0, sizeof(bare));
		bare.release = relbuf;
		k = &bare;
	}

	if ((r = m->method->build(m, k, want.data ? want.data : "", &cmd, d)) != 0)
		goto out;
	boot_log(h, "boot: %s -> %s \"%s\" by %s (boot %s)", st.kernel, kernel,
	    want.data ? want.data : "", m->method->name, st.boot_id);
	t_reboot = boot_now();
	res->rebooted = 1;
	r = ssh_exec_capture(*connp, cmd.data, NULL, &err, BOOT_EXEC_MS, &status, d);
	if (r == 0 && status != 0) {
		/* the machine is still up on its old kernel: nothing to recover */
		res->rebooted = 0;
		snprintf(res->reason, sizeof(res->reason), "%s reboot command exited %d: %.300s",
		    m->method->name, status, err.data != NULL ? err.data : "");
		bf_diag_set(d, "boot", "%s", res->reason);
		r = BF_ERR_STATE;
		goto out;
	}
	/* r != 0: the link broke mid-command; the boot may have started anyway */
	ssh_close(*connp);
	*connp = NULL;

	deadline = t_reboot + m->timeout_s;
	r = boot_wait(t, st.boot_id, NULL, deadline, h, connp, &st, res, why, sizeof(why));
	if (r == BF_ERR_CANCELLED)
		goto out;
	if (r == 0) {
		boot_result_state(res, &st);
		if (strcmp(st.kernel, kernel) != 0) {
			snprintf(res->reason, sizeof(res->reason), "booted kernel %s, not %s "
			    "(a fallback boot?)", st.kernel, kernel);
			r = BF_ERR_STATE;
		} else if (!boot_tokens_in(want.data ? want.data : "", st.cmdline, missing,
		    sizeof(missing))) {
			snprintf(res->reason, sizeof(res->reason), "/proc/cmdline lacks \"%s\": %.300s",
			    missing, st.cmdline);
			r = BF_ERR_STATE;
		}
		if (r == 0) {
			res->ssh_seconds = boot_now() - t_reboot;
			boot_log(h, "boot: verified %s \"%s\" (boot %s) after %.1f s", st.kernel,
			    st.cmdline, st.boot_id, res->ssh_seconds);
			goto out;
		}
		fail_st = st;
		fail_seen = 1;
		ssh_close(*connp);
		*connp = NULL;
	} else if (r == BF_ERR_HOSTKEY || r == BF_ERR_AUTH) {
		/* it came back as something else, or our key is gone */
		snprintf(res->reason, sizeof(res->reason), "SSH refused after the reboot: %.400s",
		    why);
		r = BF_ERR_STATE;
	} else {
		snprintf(res->reason, sizeof(res->reason), "no verified boot within %d s: %.400s",
		    m->timeout_s, why);
		r = BF_ERR_TIMEOUT;
	}

	/* Recovery: power-cycle and wait for the machine on any kernel. */
	boot_log(h, "boot: failed: %s; power-cycling", res->reason);
	if (m->power_cycle != NULL) {
		int rr;

		res->power_cycled = 1;
		res->power_cycle_status = boot_power_cycle(m, h);
		rr = boot_wait(t, res->prev_boot_id, fail_seen ? fail_st.boot_id : NULL,
		    boot_now() + m->timeout_s, h, connp, &st, res, why, sizeof(why));
		if (rr == 0) {
			res->recovered = 1;
			boot_result_state(res, &st);
			boot_log(h, "boot: back after power cycle on %s \"%s\"", st.kernel,
			    st.cmdline);
		} else {
			snprintf(res->reason + strlen(res->reason),
			    sizeof(res->reason) - strlen(res->reason),
			    "; not back %d s after the power cycle (status %d): %s", m->timeout_s,
			    res->power_cycle_status, why);
			res->kernel[0] = res->cmdline[0] = res->boot_id[0] = '\0';
		}
	} else {
		snprintf(res->reason + strlen(res->reason), sizeof(res->reason) - strlen(res->reason),
		    "; no power-cycle command configured");
		if (fail_seen) {
			/* it answered, only wrongly: reconnect for the caller */
			res->recovered = ssh_connect(t, connp, NULL) == 0;
		}
	}
	bf_diag_set(d, "boot", "%s", res->reason);
out:
	res->seconds = boot_now() - t0;
	buf_free(&want);
	buf_free(&cmd);
	buf_free(&err);
	return r;
}

int
boot_reboot_command(const struct boot_machine *m, const char *kernel, const char *cmdline,
    struct buf *out, struct bf_diag *d)
{
	const struct boot_kernel *k;
	struct boot_kernel bare;
	char relbuf[BOOT_MAX_RELEASE + 1];
	int r;

	if ((r = boot_check_release(kernel, d)) != 0 || (r = boot_check_cmdline(cmdline, d)) != 0)
		goto out;
	if ((k = boot_kernel_find(m, kernel)) == NULL) {
		if (m->method->needs_image || m->nkernels > 0) {
			bf_diag_set(d, "kernel", "\"%s\" is not among the machine's kernels", kernel);
			r = BF_ERR_NOTFOUND;
			goto out;
		}
		boot_strlcpy(relbuf, kernel, sizeof(relbuf));
		memset(&bare, 0, sizeof(bare));
		bare.release = relbuf;
		k = &bare;
	}
	r = m->method->build(m, k, cmdline, out, d);
out:
	return r;
}

json_t *
boot_result_json(const struct boot_result *res)
{
	return json_pack("{s:b, s:b, s:i, s:b, s:i, s:f, s:f, s:s, s:s, s:s, s:s, s:s}",
	    "rebooted", res->rebooted, "power_cycled", res->power_cycled,
	    "power_cycle_status", res->power_cycle_status, "recovered", res->recovered,
	    "attempts", res->attempts, "seconds", res->seconds, "ssh_seconds", res->ssh_seconds,
	    "kernel", res->kernel, "cmdline", res->cmdline, "boot_id", res->boot_id,
	    "prev_boot_id", res->prev_boot_id, "reason", res->reason);
}
