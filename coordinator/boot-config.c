/*
 * boot-config.c: a machine's boot config and the daemon's profiles:
 * parsing and validating them (kernel releases, command lines, paths,
 * boot-command templates, profile references), and the tables they are
 * checked against (the boot methods, the template slots). Nothing here
 * talks to a machine; boot.c does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "boot.h"
#include "boot-int.h"
#include "caps.h"
#include "err.h"
#include "jx.h"

/* The boot methods; each builds its reboot command in boot.c. */
static const struct boot_method boot_methods[] = {
	{ .name = "kexec", .build = boot_cmd_kexec, .needs_image = 1, .sets_cmdline = 1 },
	{ .name = "grub-reboot", .build = boot_cmd_grub_reboot, .needs_image = 0,
	  .sets_cmdline = 0 },
	{ .name = "grubby", .build = boot_cmd_grubby, .needs_image = 1, .sets_cmdline = 1 },
	{ .name = "command", .build = boot_cmd_command, .needs_image = 0, .sets_cmdline = 1 },
};
#define BOOT_NMETHODS (sizeof(boot_methods) / sizeof(boot_methods[0]))

/* ---- validation ---- */

int
boot_check_release(const char *s, struct bf_diag *d)
{
	size_t i, n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > BOOT_MAX_RELEASE) {
		bf_diag_set(d, "kernel", "a kernel release is 1..%d bytes, not %zu",
		    BOOT_MAX_RELEASE, n);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || strchr("._+~-", c) == NULL)) {
			bf_diag_set(d, "kernel", "\"%.*s\" is not a kernel release "
			    "([A-Za-z0-9._+~-], starting alphanumeric)", (int)(n > 80 ? 80 : n), s);
			return BF_ERR_INVALID;
		}
	}
	return 0;
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

	if (n > BOOT_MAX_CMDLINE) {
		bf_diag_set(d, "cmdline", "%zu bytes is over the limit of %d", n, BOOT_MAX_CMDLINE);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == ' ' || (c != '\0' && strchr(BOOT_CMDLINE_CHARS, c) != NULL))) {
			bf_diag_set(d, "cmdline", "byte %zu (0x%02x) is not allowed: params are "
			    "A-Z a-z 0-9 and %s, separated by spaces", i, c, BOOT_CMDLINE_CHARS);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

/* An absolute path of printable bytes, no newline, bounded. */
static int
boot_check_path(const char *s, const char *field, struct bf_diag *d)
{
	size_t i, n = strlen(s);

	if (s[0] != '/' || n > BOOT_MAX_PATH) {
		bf_diag_set(d, field, "\"%.80s\" is not an absolute path of at most %d bytes",
		    s, BOOT_MAX_PATH);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f) {
			bf_diag_set(d, field, "control byte 0x%02x at %zu in a path", c, i);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

/* The slots of a boot-command template (boot-int.h). */
const char *const boot_slots[BOOT_NSLOTS] = { "{kernel}", "{image}", "{initrd}", "{cmdline}" };

int
boot_slot_at(const char *p)
{
	size_t i;

	for (i = 0; i < BOOT_NSLOTS; i++)
		if (strncmp(p, boot_slots[i], strlen(boot_slots[i])) == 0)
			return (int)i;
	return -1;
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

int
boot_machine_add_kernel(struct boot_machine *m, const char *release, const char *image,
    const char *initrd)
{
	struct boot_kernel *v, *k;

	if (boot_check_release(release, NULL) != 0 || image == NULL || image[0] != '/' ||
	    (initrd != NULL && initrd[0] != '/'))
		return BF_ERR_INVALID;
	if (boot_kernel_find(m, release) != NULL)
		return BF_ERR_EXISTS;
	if (m->nkernels >= BOOT_MAX_KERNELS + 1 ||
	    (v = realloc(m->kernels, (m->nkernels + 1) * sizeof(*v))) == NULL)
		return BF_ERR_ALLOC;
	m->kernels = v;
	k = &v[m->nkernels];
	memset(k, 0, sizeof(*k));
	if ((k->release = strdup(release)) == NULL || (k->image = strdup(image)) == NULL ||
	    (initrd != NULL && (k->initrd = strdup(initrd)) == NULL)) {
		free(k->release);
		free(k->image);
		return BF_ERR_ALLOC;
	}
	m->nkernels++;
	return 0;
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
		return r;
	if ((*out = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
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
		return BF_ERR_INVALID;
	}
	jx_path(p, sizeof(p), path, release);
	if (!json_is_object(v)) {
		bf_diag_set(d, p, "must be an object like {\"image\": \"/boot/vmlinuz-%.64s\"}, "
		    "not %s", release, jx_type_name(v));
		return BF_ERR_INVALID;
	}
	if ((r = jx_only_keys(v, keys, p, d)) != 0)
		return r;
	if ((k->release = strdup(release)) == NULL)
		return BF_ERR_ALLOC;
	if ((r = boot_dup_str(v, "image", meth->needs_image, BOOT_MAX_PATH, &k->image, p, d)) != 0 ||
	    (r = boot_dup_str(v, "initrd", JX_OPTIONAL, BOOT_MAX_PATH, &k->initrd, p, d)) != 0 ||
	    (r = boot_dup_str(v, "grub_entry", JX_OPTIONAL, BOOT_MAX_PATH, &k->grub_entry, p,
	    d)) != 0)
		return r;
	if (k->image != NULL &&
	    (r = boot_check_path(k->image, jx_path(f, sizeof(f), p, "image"), d)) != 0)
		return r;
	if (k->initrd != NULL &&
	    (r = boot_check_path(k->initrd, jx_path(f, sizeof(f), p, "initrd"), d)) != 0)
		return r;
	if (k->grub_entry != NULL && boot_check_plain(k->grub_entry) != 0) {
		bf_diag_set(d, jx_path(f, sizeof(f), p, "grub_entry"), "%s",
		    "must be printable ASCII without quotes or backslashes");
		return BF_ERR_INVALID;
	}
	return 0;
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

	*out = NULL;
	jx_path(p, sizeof(p), path, key);
	if (v == NULL) {
		if (required) {
			bf_diag_set(d, p, "is required: the name of a %s profile of the daemon's "
			    "config (%s.NAME = ...)", kname, kname);
			return BF_ERR_INVALID;
		}
		return 0;
	}
	if (!json_is_string(v) || jx_check_name(json_string_value(v), NULL, NULL) != 0) {
		bf_diag_set(d, p, "must name a %s profile, not give a command (%s): commands live "
		    "in the daemon's config file as %s.NAME = COMMAND..., and one stored by an "
		    "older benchfleet is never run; declare it there and register the machine "
		    "again with \"%s\": \"NAME\"", kname, json_is_string(v) ? "a command line" :
		    jx_type_name(v), kname, key);
		return BF_ERR_INVALID;
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
		return BF_ERR_INVALID;
	}
	return 0;
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
