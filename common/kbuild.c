/*
 * kbuild.c: the build plan of a kernel spec (kbuild.h). Every value of
 * the spec lands in exactly one argv element, after an option that takes
 * it or after "--", so that nothing a submitter wrote is read as an
 * option of git, make or cp; kspec.c has already refused what a shell or
 * git would read specially, and nothing here goes through a shell.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kbuild.h"
#include "kspec.h"
#include "path.h"
#include "sha256.h"

static const struct {
	const char *uname_m;	/* as the machine says */
	const char *arch;	/* make ARCH= */
	const char *image;	/* under out/ */
} kbuild_arches[] = {
	{"x86_64", "x86", "arch/x86/boot/bzImage"},
	{"aarch64", "arm64", "arch/arm64/boot/Image"},
};
#define KBUILD_NARCH	(sizeof(kbuild_arches) / sizeof(kbuild_arches[0]))

static const char *const kbuild_base_targets[] = {
	[KSPEC_CONFIG_DEFCONFIG] = "defconfig",
	[KSPEC_CONFIG_TINYCONFIG] = "tinyconfig",
	[KSPEC_CONFIG_FILE] = "olddefconfig",
};

const char *
kbuild_arch(const char *uname_m)
{
	size_t i;

	for (i = 0; uname_m != NULL && i < KBUILD_NARCH; i++)
		if (strcmp(uname_m, kbuild_arches[i].uname_m) == 0)
			return kbuild_arches[i].arch;
	return NULL;
}

static const char *
kbuild_image(const char *uname_m)
{
	size_t i;

	for (i = 0; i < KBUILD_NARCH; i++)
		if (strcmp(uname_m, kbuild_arches[i].uname_m) == 0)
			return kbuild_arches[i].image;
	return NULL;
}

void
kbuild_plan_free(struct kbuild_plan *p)
{
	size_t i, j;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++) {
		for (j = 0; p->cmd[i].argv != NULL && p->cmd[i].argv[j] != NULL; j++)
			free(p->cmd[i].argv[j]);
		free(p->cmd[i].argv);
		free(p->cmd[i].unless_exists);
	}
	free(p->dir);
	free(p->repo);
	free(p->expect_tree);
	free(p->expect_sha256);
	free(p->fragment);
	free(p->fragment_path);
	free(p->image);
	free(p->config);
	free(p->sysmap);
	free(p->modules);
	free(p);
}

/* Append a command of the NULL-terminated string arguments. */
static int
kbuild_add(struct kbuild_plan *p, const char *what, int index, int capture, ...)
{
	struct kbuild_cmd *c;
	const char *a;
	va_list ap;
	size_t n = 0, i;

	if (p->n == KBUILD_MAX_CMDS)
		return BF_ERR_TOOBIG;
	va_start(ap, capture);
	while (va_arg(ap, const char *) != NULL)
		n++;
	va_end(ap);
	c = &p->cmd[p->n];
	if ((c->argv = calloc(n + 1, sizeof(*c->argv))) == NULL)
		return BF_ERR_ALLOC;
	c->what = what;
	c->index = index;
	c->capture = capture;
	p->n++;
	va_start(ap, capture);
	for (i = 0; i < n; i++) {
		a = va_arg(ap, const char *);
		if ((c->argv[i] = strdup(a)) == NULL) {
			va_end(ap);
			return BF_ERR_ALLOC;
		}
	}
	va_end(ap);
	return 0;
}

/* dir "/" name into a new string, or NULL. */
static char *
kbuild_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *s;

	if ((s = malloc(a + b + 2)) == NULL)
		return NULL;
	memcpy(s, dir, a);
	s[a] = '/';
	memcpy(s + a + 1, name, b + 1);
	return s;
}

/* The build directory and the arch, checked; *img the image's path under out/. */
static int
kbuild_check(const char *builddir, const char *arch, const char **img, struct bf_diag *d)
{
	const char *why = NULL;

	if (builddir == NULL || path_check_normal(builddir, strlen(builddir), &why) != 0 ||
	    builddir[0] != '/' || strcmp(builddir, "/") == 0 ||
	    strlen(builddir) > KBUILD_MAX_BUILDDIR) {
		bf_diag_set(d, "builddir", "\"%.64s\" %s", builddir ? builddir : "",
		    why ? why : "is not a build directory (absolute, normal, not /, at most "
		    "512 bytes)");
		return BF_ERR_INVALID;
	}
	if (arch == NULL || (*img = kbuild_image(arch)) == NULL) {
		bf_diag_set(d, "arch", "\"%.32s\" is not an arch kernels are built for here "
		    "(x86_64, aarch64)", arch ? arch : "");
		return BF_ERR_INVALID;
	}
	return 0;
}

int
kbuild_tree_dir(const char *builddir, const char *git, const char *arch, char *out,
    size_t outsz, struct bf_diag *d)
{
	const char *img = NULL;
	char h[65];
	int r;

	if ((r = kbuild_check(builddir, arch, &img, d)) != 0)
		return r;
	if (git == NULL || git[0] != '/') {
		bf_diag_set(d, "git", "\"%.64s\" is not an absolute path", git ? git : "");
		return BF_ERR_INVALID;
	}
	sha256_hex(git, strlen(git), h);
	if ((size_t)snprintf(out, outsz, "%s/" KBUILD_TREE_PREFIX "%.16s-%s", builddir, h,
	    arch) >= outsz) {
		bf_diag_set(d, "builddir", "too long");
		return BF_ERR_TOOBIG;
	}
	return 0;
}

struct kbuild_dirs {
	char *src, *out, *staging, *odir, *arch;	/* arch: "ARCH=x86" */
};

static void
kbuild_dirs_free(struct kbuild_dirs *k)
{
	free(k->src);
	free(k->out);
	free(k->staging);
	free(k->odir);
	free(k->arch);
}

static int
kbuild_dirs(const char *workdir, const char *arch, struct kbuild_dirs *k)
{
	memset(k, 0, sizeof(*k));
	k->src = kbuild_join(workdir, "src");
	k->out = kbuild_join(workdir, "out");
	k->staging = kbuild_join(workdir, "staging");
	if (k->out != NULL && (k->odir = malloc(strlen(k->out) + 3)) != NULL)
		snprintf(k->odir, strlen(k->out) + 3, "O=%s", k->out);
	if ((k->arch = malloc(strlen(kbuild_arch(arch)) + 6)) != NULL)
		snprintf(k->arch, strlen(kbuild_arch(arch)) + 6, "ARCH=%s", kbuild_arch(arch));
	if (k->src == NULL || k->out == NULL || k->staging == NULL || k->odir == NULL ||
	    k->arch == NULL) {
		kbuild_dirs_free(k);
		return BF_ERR_ALLOC;
	}
	return 0;
}

/* The fragment file's text: one line each, "\n" after each. */
static char *
kbuild_fragment_text(const struct kspec *k)
{
	size_t i, n = 1, off = 0, len;
	char *s;

	for (i = 0; i < k->nfragments; i++)
		n += strlen(k->fragments[i]) + 1;
	if ((s = malloc(n)) == NULL)
		return NULL;
	for (i = 0; i < k->nfragments; i++) {
		len = strlen(k->fragments[i]);
		memcpy(s + off, k->fragments[i], len);
		off += len;
		s[off++] = '\n';
	}
	s[off] = '\0';
	return s;
}

/* The last command added: reuse (its failure in a kept tree resets the
 * tree), skipped when path exists (NULL: never). */
static int
kbuild_mark(struct kbuild_plan *p, int reuse, const char *unless, const char *name)
{
	struct kbuild_cmd *c = &p->cmd[p->n - 1];

	c->reuse = reuse;
	if (unless != NULL && (c->unless_exists = kbuild_join(unless, name)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/*
 * The tree made as the spec says, in the kept tree of dirs: the clone once
 * (--shared: it borrows the source's objects, copies none), then each
 * time the source's branches and tags fetched (a branch names the
 * source's, as origin/NAME too), the commit checked out with --force
 * (only files that differ are written, so make rebuilds exactly what
 * they touch), everything not in it removed (the objects are not under
 * src), the patches, the tree id, the config. Every command is "prep".
 */
static int
kbuild_prep_cmds(struct kbuild_plan *p, const struct kspec *k, const struct kbuild_dirs *dirs)
{
	char *patch = NULL, *merge = NULL, *cfg = NULL, *ref = NULL, *frag = NULL;
	size_t i, first = p->n;
	int r;

	if ((ref = malloc(strlen(k->commit) + 16)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	/* origin/NAME in the clone is the source's branch NAME */
	if (strncmp(k->commit, "origin/", 7) == 0)
		snprintf(ref, strlen(k->commit) + 16, "refs/heads/%s^{commit}", k->commit + 7);
	else
		snprintf(ref, strlen(k->commit) + 16, "%s^{commit}", k->commit);
	if ((r = kbuild_add(p, "clone", -1, 0, "git", "-c", "core.hooksPath=/dev/null",
	    "clone", "--quiet", "--shared", "--no-checkout", "--", k->git, dirs->src,
	    NULL)) != 0 || (r = kbuild_mark(p, 1, dirs->src, ".git")) != 0 ||
	    (r = kbuild_add(p, "fetch", -1, 0, "git", "-C", dirs->src, "-c",
	    "core.hooksPath=/dev/null", "fetch", "--quiet", "--force", "--prune",
	    "--update-head-ok", "origin", "+refs/heads/*:refs/heads/*",
	    "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*", NULL)) != 0 ||
	    (r = kbuild_mark(p, 1, NULL, NULL)) != 0 ||
	    /* a ref the source does not have fails here, not as a broken tree:
	     * the checkout of one it has fails only in a broken clone */
	    (r = kbuild_add(p, "commit", -1, 0, "git", "-C", k->git, "rev-parse", "--quiet",
	    "--verify", ref, NULL)) != 0 ||
	    (r = kbuild_add(p, "checkout", -1, 0, "git", "-C", dirs->src, "-c",
	    "advice.detachedHead=false", "checkout", "--quiet", "--force", "--detach",
	    k->commit, "--", NULL)) != 0 || (r = kbuild_mark(p, 1, NULL, NULL)) != 0 ||
	    (r = kbuild_add(p, "clean", -1, 0, "git", "-C", dirs->src, "clean", "-ffdxq",
	    NULL)) != 0 || (r = kbuild_mark(p, 1, NULL, NULL)) != 0)
		goto out;
	for (i = 0; i < k->npatches; i++) {
		free(patch);
		if ((patch = k->patches[i][0] == '/' ? strdup(k->patches[i]) :
		    kbuild_join(k->git, k->patches[i])) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		if ((r = kbuild_add(p, "patch", (int)i, 0, "git", "-C", dirs->src, "apply",
		    "--index", "--", patch, NULL)) != 0)
			goto out;
	}
	if ((r = kbuild_add(p, "tree", -1, 1, "git", "-C", dirs->src, "write-tree", NULL)) != 0 ||
	    (r = kbuild_mark(p, 1, NULL, NULL)) != 0 ||
	    (r = kbuild_add(p, "mkdir", -1, 0, "mkdir", "-p", "--", dirs->out, NULL)) != 0)
		goto out;
	if ((cfg = kbuild_join(dirs->out, ".config")) == NULL ||
	    (frag = kbuild_join(dirs->out, KBUILD_FRAGMENT_FILE)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	/* the fragment file is written anew (never over an old one) */
	if ((r = kbuild_add(p, "config", -1, 0, "rm", "-f", "--", frag, NULL)) != 0)
		goto out;
	if (k->config == KSPEC_CONFIG_FILE &&
	    (r = kbuild_add(p, "config", -1, 0, "cp", "--", k->config_path, cfg, NULL)) != 0)
		goto out;
	if ((r = kbuild_add(p, "config", -1, 0, "make", "-s", "-C", dirs->src, dirs->odir,
	    dirs->arch, kbuild_base_targets[k->config], NULL)) != 0)
		goto out;
	if (k->nfragments > 0) {
		free(p->fragment);
		free(p->fragment_path);
		p->fragment_path = frag;
		frag = NULL;
		if ((p->fragment = kbuild_fragment_text(k)) == NULL ||
		    (merge = kbuild_join(dirs->src, "scripts/kconfig/merge_config.sh")) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		/* -m: merge only; the olddefconfig after it resolves the rest */
		if ((r = kbuild_add(p, "fragments", -1, 0, merge, "-m", "-O", dirs->out, cfg,
		    p->fragment_path, NULL)) != 0 ||
		    (r = kbuild_add(p, "config", -1, 0, "make", "-s", "-C", dirs->src, dirs->odir,
		    dirs->arch, "olddefconfig", NULL)) != 0)
			goto out;
	}
	for (i = first; i < p->n; i++)
		p->cmd[i].prep = 1;
	r = 0;
out:
	free(patch);
	free(merge);
	free(cfg);
	free(ref);
	free(frag);
	return r;
}

/* A plan with its tree: dirs made, p->dir and p->repo set. */
static int
kbuild_plan_new(const struct kspec *k, const char *builddir, const char *arch,
    struct kbuild_plan **pp, struct kbuild_dirs *dirs, struct bf_diag *d)
{
	char dir[KBUILD_MAX_BUILDDIR + 64];
	int r;

	*pp = NULL;
	if ((r = kbuild_tree_dir(builddir, k->git, arch, dir, sizeof(dir), d)) != 0)
		return r;
	if ((*pp = calloc(1, sizeof(**pp))) == NULL || ((*pp)->dir = strdup(dir)) == NULL ||
	    ((*pp)->repo = strdup(k->git)) == NULL || kbuild_dirs(dir, arch, dirs) != 0) {
		kbuild_plan_free(*pp);
		*pp = NULL;
		return BF_ERR_ALLOC;
	}
	return 0;
}

int
kbuild_prep(const struct kspec *k, const char *builddir, const char *arch,
    struct kbuild_plan **out, struct bf_diag *d)
{
	struct kbuild_plan *p = NULL;
	struct kbuild_dirs dirs;
	int r, have_dirs = 0;

	*out = NULL;
	if ((r = kbuild_plan_new(k, builddir, arch, &p, &dirs, d)) != 0)
		goto out;
	have_dirs = 1;
	if ((r = kbuild_prep_cmds(p, k, &dirs)) != 0)
		goto out;
	*out = p;
	p = NULL;
	r = 0;
out:
	if (have_dirs)
		kbuild_dirs_free(&dirs);
	kbuild_plan_free(p);
	return r;
}

int
kbuild_build(const struct kspec *k, const char *builddir, const char *arch, int jobs,
    const char *localversion, int modules, const char *tree, const char *config_sha256,
    struct kbuild_plan **out, struct bf_diag *d)
{
	struct kbuild_plan *p = NULL;
	struct kbuild_dirs dirs;
	char jn[16], lv[KSPEC_MAX_LOCALVERSION + 24], mp[KBUILD_MAX_BUILDDIR + 128];
	char tarball[KBUILD_MAX_BUILDDIR + 128];
	const char *img = NULL;
	size_t i;
	int r, have_dirs = 0;

	*out = NULL;
	if ((r = kbuild_check(builddir, arch, &img, d)) != 0)
		goto out;
	if (jobs < 1 || jobs > KBUILD_MAX_JOBS) {
		bf_diag_set(d, "jobs", "%d is not in 1..%d", jobs, KBUILD_MAX_JOBS);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (localversion == NULL || strlen(localversion) > KSPEC_MAX_LOCALVERSION + 12 ||
	    (localversion[0] != '\0' && kspec_check_localversion(localversion, "localversion",
	    d) != 0)) {
		bf_diag_set(d, "localversion", "\"%.64s\" is not a localversion",
		    localversion ? localversion : "");
		r = BF_ERR_INVALID;
		goto out;
	}
	for (i = 0; tree != NULL && tree[i] != '\0' && strchr("0123456789abcdef", tree[i]); i++)
		;
	if (tree == NULL || tree[i] != '\0' || (i != 40 && i != 64)) {
		bf_diag_set(d, "tree", "\"%.80s\" is not a git tree id", tree ? tree : "");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (config_sha256 == NULL || !sha256_is_hex(config_sha256)) {
		bf_diag_set(d, "config", "\"%.80s\" is not a sha256",
		    config_sha256 ? config_sha256 : "");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = kbuild_plan_new(k, builddir, arch, &p, &dirs, d)) != 0)
		goto out;
	have_dirs = 1;
	/* the tree again when another build moved it since the prep */
	if ((r = kbuild_prep_cmds(p, k, &dirs)) != 0)
		goto out;
	if ((p->expect_tree = strdup(tree)) == NULL ||
	    (p->expect_sha256 = strdup(config_sha256)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	snprintf(jn, sizeof(jn), "-j%d", jobs);
	snprintf(lv, sizeof(lv), "LOCALVERSION=%s", localversion);
	snprintf(mp, sizeof(mp), "INSTALL_MOD_PATH=%s", dirs.staging);
	snprintf(tarball, sizeof(tarball), "%s/modules.tar.gz", p->dir);
	/* the same user and host in every build: they are in the image */
	if ((r = kbuild_add(p, "make", -1, 0, "make", "-C", dirs.src, dirs.odir, dirs.arch, jn,
	    lv, "KBUILD_BUILD_USER=benchfleet", "KBUILD_BUILD_HOST=benchfleet", NULL)) != 0 ||
	    (r = kbuild_add(p, "release", -1, 1, "make", "-s", "-C", dirs.src, dirs.odir,
	    dirs.arch, lv, "kernelrelease", NULL)) != 0)
		goto out;
	/* the last build's modules are not this one's */
	if (modules &&
	    ((r = kbuild_add(p, "modules", -1, 0, "rm", "-rf", "--", dirs.staging, tarball,
	    NULL)) != 0 ||
	    (r = kbuild_add(p, "modules", -1, 0, "make", "-s", "-C", dirs.src, dirs.odir,
	    dirs.arch, lv, mp, "modules_install", NULL)) != 0 ||
	    (r = kbuild_add(p, "tar", -1, 0, "tar", "-C", dirs.staging, "-czf", tarball, "lib",
	    NULL)) != 0 || (p->modules = strdup(tarball)) == NULL)) {
		r = r ? r : BF_ERR_ALLOC;
		goto out;
	}
	if ((p->image = kbuild_join(dirs.out, img)) == NULL ||
	    (p->config = kbuild_join(dirs.out, ".config")) == NULL ||
	    (p->sysmap = kbuild_join(dirs.out, "System.map")) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	*out = p;
	p = NULL;
	r = 0;
out:
	if (have_dirs)
		kbuild_dirs_free(&dirs);
	kbuild_plan_free(p);
	return r;
}

/* The line of config[0..n) that starts with prefix, or NULL; *len its length. */
static const char *
kbuild_line(const char *config, size_t n, const char *prefix, size_t *len)
{
	size_t plen = strlen(prefix), off = 0, l;
	const char *nl;

	while (off < n) {
		nl = memchr(config + off, '\n', n - off);
		l = nl != NULL ? (size_t)(nl - (config + off)) : n - off;
		if (l >= plen && memcmp(config + off, prefix, plen) == 0) {
			*len = l;
			return config + off;
		}
		off += l + 1;
	}
	return NULL;
}

int
kbuild_config_tristate(const char *config, size_t n, const char *name)
{
	char prefix[BF_DIAG_FIELD];
	const char *l;
	size_t len;

	snprintf(prefix, sizeof(prefix), "CONFIG_%s=", name);
	if ((l = kbuild_line(config, n, prefix, &len)) == NULL || len != strlen(prefix) + 1)
		return 0;
	return l[len - 1] == 'y' || l[len - 1] == 'm' ? l[len - 1] : 0;
}

void
kbuild_config_cc(const char *config, size_t n, char *out, size_t outsz)
{
	static const char prefix[] = "CONFIG_CC_VERSION_TEXT=\"";
	const char *l;
	size_t len, vlen;

	out[0] = '\0';
	if ((l = kbuild_line(config, n, prefix, &len)) == NULL || len < sizeof(prefix) ||
	    l[len - 1] != '"')
		return;
	vlen = len - (sizeof(prefix) - 1) - 1;
	snprintf(out, outsz, "%.*s", (int)vlen, l + sizeof(prefix) - 1);
}

void
kbuild_error_line(const char *log, size_t n, char *out, size_t outsz)
{
	const char *l = NULL, *p, *nl, *make = NULL;
	size_t off = 0, len, mlen = 0, flen = 0;

	out[0] = '\0';
	while (off < n) {
		p = log + off;
		nl = memchr(p, '\n', n - off);
		len = nl != NULL ? (size_t)(nl - p) : n - off;
		if (l == NULL && len > 9 && memmem(p, len, ": error: ", 9) != NULL) {
			l = p;
			flen = len;
		}
		if (len > 4 && strncmp(p, "make", 4) == 0 && memmem(p, len, "Error", 5) != NULL) {
			make = p;
			mlen = len;
		}
		off += len + 1;
	}
	if (l == NULL) {
		l = make;
		flen = mlen;
	}
	if (l != NULL)
		snprintf(out, outsz, "%.*s", (int)(flen < outsz ? flen : outsz - 1), l);
}

int
kbuild_key(const struct kspec *k, const char *tree, const char *config, size_t n,
    const char *uname_m, char key[KSPEC_KEY_HEX + 1], char *localversion, size_t lvsz,
    struct bf_diag *d)
{
	char cc[256];
	size_t i, tl = strlen(tree);

	for (i = 0; i < tl; i++)
		if (!((tree[i] >= '0' && tree[i] <= '9') || (tree[i] >= 'a' && tree[i] <= 'f')))
			break;
	if (i != tl || (tl != 40 && tl != 64)) {
		bf_diag_set(d, "tree", "\"%.80s\" is not a git tree id", tree);
		return BF_ERR_INVALID;
	}
	if (kbuild_arch(uname_m) == NULL) {
		bf_diag_set(d, "arch", "\"%.32s\" is not an arch kernels are built for here",
		    uname_m ? uname_m : "");
		return BF_ERR_INVALID;
	}
	kbuild_config_cc(config, n, cc, sizeof(cc));
	if (cc[0] == '\0') {
		bf_diag_set(d, "config", "the .config has no CONFIG_CC_VERSION_TEXT: not "
		    "one kconfig made");
		return BF_ERR_INVALID;
	}
	kspec_build_key(tree, config, n, cc, uname_m, k->localversion, key);
	kspec_make_localversion(k->localversion, key, localversion, lvsz);
	return 0;
}

/* {"name": name, "path": path} appended to arts when path is set. */
static int
kbuild_doc_art(json_t *arts, const char *name, const char *path)
{
	if (path == NULL)
		return 0;
	return json_array_append_new(arts, json_pack("{s:s,s:s}", "name", name, "path", path));
}

int
kbuild_plan_doc(const struct kbuild_plan *p, int timeout_s, int64_t max_artifact,
    json_t **out)
{
	json_t *doc = NULL, *cmds, *arts, *c, *argv;
	size_t i, j;
	int r = BF_ERR_ALLOC;

	*out = NULL;
	if ((doc = json_pack("{s:[],s:[],s:i,s:I}", "cmds", "artifacts", "timeout_s", timeout_s,
	    "max_artifact", (json_int_t)max_artifact)) == NULL)
		goto out;
	if (p->dir != NULL && json_object_set_new(doc, "persist", json_pack("{s:s,s:s}", "dir",
	    p->dir, "repo", p->repo)) != 0)
		goto out;
	cmds = json_object_get(doc, "cmds");
	arts = json_object_get(doc, "artifacts");
	for (i = 0; i < p->n; i++) {
		if ((argv = json_array()) == NULL)
			goto out;
		for (j = 0; p->cmd[i].argv[j] != NULL; j++)
			if (json_array_append_new(argv, json_string(p->cmd[i].argv[j])) != 0) {
				json_decref(argv);
				goto out;
			}
		if ((c = json_pack("{s:s,s:i,s:b,s:b,s:b,s:o}", "what", p->cmd[i].what, "index",
		    p->cmd[i].index, "capture", p->cmd[i].capture, "prep", p->cmd[i].prep,
		    "reuse", p->cmd[i].reuse, "argv", argv)) == NULL ||
		    json_array_append_new(cmds, c) != 0)
			goto out;
		if (p->cmd[i].unless_exists != NULL && json_object_set_new(c, "unless_exists",
		    json_string(p->cmd[i].unless_exists)) != 0)
			goto out;
		if (strcmp(p->cmd[i].what, "tree") == 0 && p->expect_tree != NULL &&
		    p->config != NULL && json_object_set_new(doc, "expect", json_pack("{s:O,s:s,"
		    "s:s,s:s}", "argv", argv, "value", p->expect_tree, "file", p->config,
		    "sha256", p->expect_sha256)) != 0)
			goto out;
		if (strcmp(p->cmd[i].what, "fragments") == 0 && p->fragment != NULL &&
		    json_object_set_new(c, "write", json_pack("{s:s,s:s}", "path",
		    p->fragment_path, "text", p->fragment)) != 0)
			goto out;
	}
	if (kbuild_doc_art(arts, "image", p->image) != 0 ||
	    kbuild_doc_art(arts, "config", p->config) != 0 ||
	    kbuild_doc_art(arts, "sysmap", p->sysmap) != 0 ||
	    kbuild_doc_art(arts, "modules", p->modules) != 0)
		goto out;
	*out = doc;
	doc = NULL;
	r = 0;
out:
	json_decref(doc);
	return r;
}
