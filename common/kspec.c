/*
 * kspec.c: parse and check a job's "kernels" (kspec.h), and the build key.
 * Everything here is untrusted input from the HTTP API that later becomes
 * argv elements of git and make on a builder: the checks are by
 * character class and form, never by "looks harmless".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jx.h"
#include "kspec.h"
#include "path.h"
#include "sha256.h"

static const char *const kspec_keys[] = {
	"git", "commit", "config", "fragments", "patches", "localversion", NULL
};

static const struct {
	const char *name;
	enum kspec_config config;
} kspec_configs[] = {
	{"defconfig", KSPEC_CONFIG_DEFCONFIG},
	{"tinyconfig", KSPEC_CONFIG_TINYCONFIG},
};

static int
kspec_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/*
 * A git ref or object id as git check-ref-format would take it, narrowed:
 * [A-Za-z0-9._/-], alphanumeric first, no "..", "//", "/." or ".lock"
 * component end, not ending in '/' or '.'. No ~ ^ : @{ (revision syntax
 * is not a commit's name) and nothing a shell or git's option parser reads.
 */
int
kspec_check_ref(const char *s, const char *path, struct bf_diag *d)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > KSPEC_MAX_REF) {
		bf_diag_set(d, path, "a commit is 1 to %d bytes, not %zu", KSPEC_MAX_REF, n);
		return BF_ERR_INVALID;
	}
	if (!kspec_alnum((unsigned char)s[0])) {
		bf_diag_set(d, path, "\"%.64s\" must start with a letter or digit (a ref, a tag "
		    "or a commit id; not an option)", s);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!kspec_alnum(c) && c != '.' && c != '_' && c != '/' && c != '-') {
			bf_diag_set(d, path, "\"%.64s\" has byte 0x%02x at %zu; a commit is "
			    "[A-Za-z0-9._/-]", s, c, i);
			return BF_ERR_INVALID;
		}
	}
	if (strstr(s, "..") != NULL || strstr(s, "//") != NULL || strstr(s, "/.") != NULL ||
	    strstr(s, ".lock/") != NULL || s[n - 1] == '/' || s[n - 1] == '.' ||
	    (n >= 5 && strcmp(s + n - 5, ".lock") == 0)) {
		bf_diag_set(d, path, "\"%.64s\" is not a valid ref name (no \"..\", \"//\", "
		    "\"/.\", \".lock\" or trailing '/' or '.')", s);
		return BF_ERR_INVALID;
	}
	return 0;
}

/* The value of a config line: y, m, n, a decimal or 0x hex integer, or a
 * "string" of printable bytes without '"' or '\'. */
static int
kspec_config_value(const char *v)
{
	size_t i, n = strlen(v);

	if (strcmp(v, "y") == 0 || strcmp(v, "m") == 0 || strcmp(v, "n") == 0)
		return 1;
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		for (i = 1; i + 1 < n; i++)
			if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] >= 0x7f ||
			    v[i] == '"' || v[i] == '\\')
				return 0;
		return 1;
	}
	if (n > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		for (i = 2; i < n; i++)
			if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f') ||
			    (v[i] >= 'A' && v[i] <= 'F')))
				return 0;
		return n <= 18;
	}
	i = v[0] == '-' ? 1 : 0;
	if (i == n || n - i > 19)
		return 0;
	for (; i < n; i++)
		if (v[i] < '0' || v[i] > '9')
			return 0;
	return 1;
}

/* CONFIG_[A-Z0-9_]+=(y|m|n|"..."|int) */
int
kspec_check_fragment(const char *s, const char *path, struct bf_diag *d)
{
	size_t i, n = strlen(s);
	const char *eq;

	if (n > KSPEC_MAX_FRAGMENT) {
		bf_diag_set(d, path, "a config line is at most %d bytes, not %zu",
		    KSPEC_MAX_FRAGMENT, n);
		return BF_ERR_INVALID;
	}
	if (strncmp(s, "CONFIG_", 7) != 0 || (eq = strchr(s, '=')) == NULL || eq == s + 7)
		goto bad;
	for (i = 7; s + i < eq; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			goto bad;
	if (kspec_config_value(eq + 1))
		return 0;
bad:
	bf_diag_set(d, path, "\"%.64s\" is not a config line CONFIG_[A-Z0-9_]+=(y|m|n|\"text\"|"
	    "integer)", s);
	return BF_ERR_INVALID;
}

/* "-bf4l": '-' then 1.. of [a-z0-9.+_-] (what a release may carry). */
int
kspec_check_localversion(const char *s, const char *path, struct bf_diag *d)
{
	size_t i, n = strlen(s);

	if (n < 2 || n > KSPEC_MAX_LOCALVERSION || s[0] != '-')
		goto bad;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '.' || s[i] == '+' || s[i] == '_' || s[i] == '-'))
			goto bad;
	return 0;
bad:
	bf_diag_set(d, path, "\"%.64s\" is not a localversion: '-' then 1 to %d of "
	    "[a-z0-9.+_-]", s, KSPEC_MAX_LOCALVERSION - 1);
	return BF_ERR_INVALID;
}

int
kspec_check_patch(const char *s, const char *path, struct bf_diag *d)
{
	const char *why = NULL, *c;
	size_t n = strlen(s), len;

	if (n == 0 || n > PATH_CHECK_MAX) {
		bf_diag_set(d, path, "a patch path is 1 to %d bytes, not %zu", PATH_CHECK_MAX, n);
		return BF_ERR_INVALID;
	}
	if (s[0] == '/') {
		if (path_check_normal(s, n, &why) != 0) {
			bf_diag_set(d, path, "\"%.64s\" %s", s, why);
			return BF_ERR_INVALID;
		}
		return 0;
	}
	for (c = s; *c != '\0'; c += len + (c[len] == '/')) {
		len = strcspn(c, "/");
		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && strncmp(c, "..", 2) == 0) ||
		    c[0] == '-' || strspn(c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._+~-") < len || (c[len] == '/' && c[len + 1] == '\0')) {
			bf_diag_set(d, path, "\"%.64s\" is not a patch path (components of "
			    "[A-Za-z0-9._+~-], none empty, \".\", \"..\" or starting with '-')", s);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

static void
kspec_free_one(struct kspec *k)
{
	size_t i;

	free(k->name);
	free(k->git);
	free(k->commit);
	free(k->config_path);
	for (i = 0; i < k->nfragments; i++)
		free(k->fragments[i]);
	free(k->fragments);
	for (i = 0; i < k->npatches; i++)
		free(k->patches[i]);
	free(k->patches);
	free(k->localversion);
}

void
kspec_set_free(struct kspec_set *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		kspec_free_one(&s->k[i]);
	free(s->k);
	free(s);
}

const struct kspec *
kspec_find(const struct kspec_set *s, const char *name)
{
	size_t i;

	for (i = 0; s != NULL && i < s->n; i++)
		if (strcmp(s->k[i].name, name) == 0)
			return &s->k[i];
	return NULL;
}

/* An array of strings at obj[key], each through check; *out/ *n owned. */
static int
kspec_strings(const json_t *obj, const char *key, size_t max, size_t maxlen,
    int (*check)(const char *, const char *, struct bf_diag *), const char *path,
    char ***out, size_t *n, struct bf_diag *d)
{
	char ep[BF_DIAG_FIELD], ap[BF_DIAG_FIELD];
	const char *s;
	json_t *arr = NULL, *v;
	size_t i;
	int r;

	if ((r = jx_arr(obj, key, JX_OPTIONAL, 0, max, &arr, path, d)) != 0 || arr == NULL)
		return r;
	if (json_array_size(arr) > 0 && (*out = calloc(json_array_size(arr), sizeof(**out))) ==
	    NULL)
		return BF_ERR_ALLOC;
	jx_path(ap, sizeof(ap), path, key);
	json_array_foreach(arr, i, v) {
		jx_path_idx(ep, sizeof(ep), ap, i);
		if ((r = jx_as_str(v, maxlen, &s, ep, d)) != 0 || (r = check(s, ep, d)) != 0)
			return r;
		if (((*out)[i] = strdup(s)) == NULL)
			return BF_ERR_ALLOC;
		(*n)++;
	}
	return 0;
}

static int
kspec_parse_one(struct kspec *k, const json_t *o, const char *path, struct bf_diag *d)
{
	char fp[BF_DIAG_FIELD];
	const char *s = NULL, *why = NULL;
	size_t i;
	int r;

	if (!json_is_object(o)) {
		bf_diag_set(d, path, "expected an object, got %s", jx_type_name(o));
		return BF_ERR_INVALID;
	}
	if ((r = jx_only_keys(o, kspec_keys, path, d)) != 0 ||
	    (r = jx_str(o, "git", JX_REQUIRED, PATH_CHECK_MAX, &s, path, d)) != 0)
		return r;
	if (path_check_normal(s, strlen(s), &why) != 0) {
		bf_diag_set(d, jx_path(fp, sizeof(fp), path, "git"), "\"%.64s\" %s", s, why);
		return BF_ERR_INVALID;
	}
	if ((k->git = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	if ((r = jx_str(o, "commit", JX_REQUIRED, KSPEC_MAX_REF, &s, path, d)) != 0 ||
	    (r = kspec_check_ref(s, jx_path(fp, sizeof(fp), path, "commit"), d)) != 0)
		return r;
	if ((k->commit = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	s = NULL;
	if ((r = jx_str(o, "config", JX_OPTIONAL, PATH_CHECK_MAX, &s, path, d)) != 0)
		return r;
	k->config = KSPEC_CONFIG_DEFCONFIG;
	for (i = 0; s != NULL && s[0] != '/' && i < sizeof(kspec_configs) /
	    sizeof(kspec_configs[0]); i++)
		if (strcmp(s, kspec_configs[i].name) == 0)
			break;
	if (s != NULL && s[0] != '/' && i == sizeof(kspec_configs) / sizeof(kspec_configs[0])) {
		bf_diag_set(d, jx_path(fp, sizeof(fp), path, "config"), "\"%.64s\" is not one "
		    "of defconfig, tinyconfig or an absolute path", s);
		return BF_ERR_INVALID;
	}
	if (s != NULL && s[0] != '/')
		k->config = kspec_configs[i].config;
	else if (s != NULL) {
		if (path_check_normal(s, strlen(s), &why) != 0) {
			bf_diag_set(d, jx_path(fp, sizeof(fp), path, "config"), "\"%.64s\" %s", s,
			    why);
			return BF_ERR_INVALID;
		}
		k->config = KSPEC_CONFIG_FILE;
		if ((k->config_path = strdup(s)) == NULL)
			return BF_ERR_ALLOC;
	}
	if ((r = kspec_strings(o, "fragments", KSPEC_MAX_FRAGMENTS, KSPEC_MAX_FRAGMENT,
	    kspec_check_fragment, path, &k->fragments, &k->nfragments, d)) != 0 ||
	    (r = kspec_strings(o, "patches", KSPEC_MAX_PATCHES, PATH_CHECK_MAX, kspec_check_patch,
	    path, &k->patches, &k->npatches, d)) != 0)
		return r;
	s = "";
	if ((r = jx_str(o, "localversion", JX_OPTIONAL, KSPEC_MAX_LOCALVERSION, &s, path,
	    d)) != 0 || (*s != '\0' &&
	    (r = kspec_check_localversion(s, jx_path(fp, sizeof(fp), path, "localversion"),
	    d)) != 0))
		return r;
	if ((k->localversion = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

int
kspec_parse(const json_t *doc, struct kspec_set **out, struct bf_diag *d)
{
	char kp[BF_DIAG_FIELD];
	struct kspec_set *s = NULL;
	const char *name;
	json_t *kernels = NULL, *o;
	size_t n;
	int r;

	*out = NULL;
	if ((r = jx_obj(doc, "kernels", JX_OPTIONAL, &kernels, "", d)) != 0 || kernels == NULL)
		goto out;
	if ((n = json_object_size(kernels)) == 0 || n > KSPEC_MAX_KERNELS) {
		bf_diag_set(d, "kernels", "has %zu kernels; 1 to %d allowed", n,
		    KSPEC_MAX_KERNELS);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL || (s->k = calloc(n, sizeof(*s->k))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	json_object_foreach(kernels, name, o) {
		jx_path(kp, sizeof(kp), "kernels", name);
		if ((r = jx_check_name(name, kp, d)) != 0)
			goto out;
		if ((s->k[s->n].name = strdup(name)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		s->n++;
		if ((r = kspec_parse_one(&s->k[s->n - 1], o, kp, d)) != 0)
			goto out;
	}
	*out = s;
	s = NULL;
	r = 0;
out:
	kspec_set_free(s);
	return r;
}

/* Is p under one of the ':'-separated roots? */
static int
kspec_under(const char *p, const char *roots)
{
	char root[PATH_CHECK_MAX + 1];
	const char *c;
	size_t len;

	for (c = roots; c != NULL && *c != '\0'; c += len + (c[len] == ':')) {
		len = strcspn(c, ":");
		if (len == 0 || len > PATH_CHECK_MAX)
			continue;
		memcpy(root, c, len);
		root[len] = '\0';
		if (path_is_under(p, root))
			return 1;
	}
	return 0;
}

int
kspec_check_root_list(const char *roots, struct bf_diag *d)
{
	char root[PATH_CHECK_MAX + 1];
	const char *c, *why = NULL;
	size_t len, n = 0;

	for (c = roots; c != NULL && *c != '\0'; c += len + (c[len] == ':')) {
		len = strcspn(c, ":");
		if (++n > KSPEC_MAX_ROOTS) {
			bf_diag_set(d, "kernel-git-roots", "at most %d roots", KSPEC_MAX_ROOTS);
			return BF_ERR_INVALID;
		}
		if (len > PATH_CHECK_MAX || path_check_normal(c, len, &why) != 0) {
			bf_diag_set(d, "kernel-git-roots", "root %zu %s", n,
			    why != NULL ? why : "is too long");
			return BF_ERR_INVALID;
		}
		memcpy(root, c, len);
		root[len] = '\0';
		if (strcmp(root, "/") == 0) {
			bf_diag_set(d, "kernel-git-roots", "root %zu is \"/\": name the "
			    "directories that hold kernel trees", n);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

int
kspec_check_roots(const struct kspec_set *s, const char *roots, struct bf_diag *d)
{
	char fp[BF_DIAG_FIELD], kp[BF_DIAG_FIELD], ep[BF_DIAG_FIELD];
	const struct kspec *k;
	size_t i, j;
	const char *shown = roots != NULL && *roots != '\0' ? roots : "none";

	for (i = 0; s != NULL && i < s->n; i++) {
		k = &s->k[i];
		jx_path(kp, sizeof(kp), "kernels", k->name);
		if (!kspec_under(k->git, roots)) {
			bf_diag_set(d, jx_path(fp, sizeof(fp), kp, "git"), "\"%.64s\" is not under "
			    "a git root of this coordinator (--kernel-git-roots: %.200s)", k->git,
			    shown);
			return BF_ERR_INVALID;
		}
		if (k->config_path != NULL && !kspec_under(k->config_path, roots)) {
			bf_diag_set(d, jx_path(fp, sizeof(fp), kp, "config"), "\"%.64s\" is not "
			    "under a git root of this coordinator (%.200s)", k->config_path, shown);
			return BF_ERR_INVALID;
		}
		for (j = 0; j < k->npatches; j++) {
			if (k->patches[j][0] != '/' || kspec_under(k->patches[j], roots))
				continue;
			jx_path(fp, sizeof(fp), kp, "patches");
			bf_diag_set(d, jx_path_idx(ep, sizeof(ep), fp, j), "\"%.64s\" is not under "
			    "a git root of this coordinator (%.200s)", k->patches[j], shown);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

static void
kspec_key_part(struct sha256_ctx *c, const void *p, size_t n)
{
	uint8_t len[8];
	size_t i;

	for (i = 0; i < 8; i++)
		len[i] = (uint8_t)((uint64_t)n >> (56 - 8 * i));
	sha256_update(c, len, sizeof(len));
	sha256_update(c, p, n);
}

void
kspec_build_key(const char *tree_id, const void *config, size_t configlen,
    const char *compiler, const char *arch, const char *localversion,
    char out[KSPEC_KEY_HEX + 1])
{
	static const char tag[] = "benchfleet-kernel-build-1";
	struct sha256_ctx c;
	uint8_t dig[32];

	sha256_init(&c);
	kspec_key_part(&c, tag, sizeof(tag) - 1);
	kspec_key_part(&c, tree_id, strlen(tree_id));
	kspec_key_part(&c, config, configlen);
	kspec_key_part(&c, compiler, strlen(compiler));
	kspec_key_part(&c, arch, strlen(arch));
	kspec_key_part(&c, localversion, strlen(localversion));
	sha256_final(&c, dig);
	sha256_tohex(dig, out);
}

void
kspec_make_localversion(const char *localversion, const char *key, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s-bf%.*s", localversion, KSPEC_KEY_TAG, key);
}

int
kspec_check_named(const struct kspec_set *s, const char *kernel, const json_t *axis,
    struct bf_diag *d)
{
	char kp[BF_DIAG_FIELD];
	const json_t *v;
	size_t i, j;
	int named;

	for (i = 0; s != NULL && i < s->n; i++) {
		named = kernel != NULL && strcmp(kernel, s->k[i].name) == 0;
		json_array_foreach(axis, j, v)
			if (json_is_string(v) && strcmp(json_string_value(v), s->k[i].name) == 0)
				named = 1;
		if (!named) {
			bf_diag_set(d, jx_path(kp, sizeof(kp), "kernels", s->k[i].name),
			    "is named by neither \"kernel\" nor a value of matrix.kernel");
			return BF_ERR_INVALID;
		}
	}
	return 0;
}
