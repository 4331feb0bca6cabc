/*
 * kbuild.h: what a builder runs to turn a kernel spec (kspec.h) into a
 * kernel, as argv arrays (issue 18, the build's plan). Pure: no I/O; the
 * coordinator sends these commands to the builder's agent, which runs
 * each with execvp, never through a shell.
 *
 * Two phases, because the build key (kspec_build_key) is known only once
 * the final .config exists:
 *
 *   prep  (kbuild_prep)   in the kept tree of the repository: clone it
 *                         once (git clone --shared, no copy of the
 *                         objects), fetch its branches and tags, check out
 *                         the commit with --force (only the files that
 *                         differ are written), git clean, apply the
 *                         patches to the index, print the tree id (git
 *                         write-tree), make the base config, merge the
 *                         fragments, make olddefconfig;
 *   build (kbuild_build)  the prep's commands again only when another
 *                         build moved the tree since (the document's
 *                         "expect": the tree id and the .config's sha256),
 *                         then make -jN with LOCALVERSION=<spec's>-bf<key8>
 *                         in the kept object directory (incremental: only
 *                         what changed is compiled), print the release,
 *                         modules_install into a staging directory and tar
 *                         it when CONFIG_MODULES.
 *
 * The kept tree W of (repository, arch) is BUILDDIR/t-<h16>-<uname -m>,
 * h16 the first 16 hex digits of sha256(the repository's path): W/src the
 * clone, W/out the objects (make O=), W/staging the modules,
 * W/modules.tar.gz. The agent locks it for each invocation and starts
 * from a clean tree when a build there was interrupted or the kept tree
 * cannot be reused (agent/build-tree.h). The build key does not depend on
 * it: an incremental build makes the same kernel as a clean one.
 * Refs are resolved in the clone after the fetch: a tag, a branch of the
 * source (also as origin/NAME) or an object id.
 */
#ifndef BF_KBUILD_H
#define BF_KBUILD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "err.h"
#include "kspec.h"

#define KBUILD_MAX_CMDS		(KSPEC_MAX_PATCHES + 16)
#define KBUILD_FRAGMENT_FILE	"bf-fragment.config"	/* under W/out */
#define KBUILD_MAX_JOBS		1024			/* make -jN */
#define KBUILD_MAX_BUILDDIR	512			/* bytes of the build directory */
#define KBUILD_TREE_PREFIX	"t-"			/* the kept trees' names */

struct kbuild_cmd {
	const char *what;	/* "clone", "patch", "tree", ... (static) */
	int index;		/* the patch's index for "patch", else -1 */
	int capture;		/* 1: its stdout is a value (tree id, release) */
	int prep;		/* 1: makes the tree and .config (skipped when as expected) */
	int reuse;		/* 1: its failure in a kept tree means: start clean */
	char *unless_exists;	/* skipped when this path exists, or NULL; owned */
	char **argv;		/* NULL-terminated, owned */
};

struct kbuild_plan {
	struct kbuild_cmd cmd[KBUILD_MAX_CMDS];
	size_t n;
	char *dir, *repo;	/* the kept tree and its repository ("persist") */
	char *expect_tree;	/* build: the prep's tree id and .config sha256, */
	char *expect_sha256;	/* the document's "expect" */
	char *fragment;		/* prep: W/out/KBUILD_FRAGMENT_FILE's text, or NULL */
	char *fragment_path;	/* ... and where it goes */
	/* build: the artifacts' paths */
	char *image;		/* W/out/arch/<x86|arm64>/boot/<bzImage|Image> */
	char *config;		/* W/out/.config */
	char *sysmap;		/* W/out/System.map */
	char *modules;		/* W/modules.tar.gz, or NULL without modules */
};

/* The kernel's name for a machine's arch ("x86_64" -> "x86"), or NULL
 * for an arch benchfleet does not build for. */
const char *kbuild_arch(const char *uname_m);

/* The kept tree of repository git for arch (uname -m) under builddir
 * into out. BF_ERR_INVALID (d says which) for a builddir that is not
 * absolute and normal, an arch not built for or a relative git. */
int kbuild_tree_dir(const char *builddir, const char *git, const char *arch, char *out,
    size_t outsz, struct bf_diag *d);
/* The prep phase of k in its kept tree under builddir for arch (uname
 * -m). *out freed with kbuild_plan_free(). BF_ERR_INVALID (d says which)
 * as kbuild_tree_dir. */
int kbuild_prep(const struct kspec *k, const char *builddir, const char *arch,
    struct kbuild_plan **out, struct bf_diag *d);
/* The build phase of k whose prep printed tree and left a .config of
 * sha256 config_sha256: make -j jobs (1..KBUILD_MAX_JOBS) with
 * LOCALVERSION localversion (kspec_make_localversion), modules when
 * CONFIG_MODULES=y. */
int kbuild_build(const struct kspec *k, const char *builddir, const char *arch, int jobs,
    const char *localversion, int modules, const char *tree, const char *config_sha256,
    struct kbuild_plan **out, struct bf_diag *d);
void kbuild_plan_free(struct kbuild_plan *p);
/* The document `benchfleet-agent build` reads (docs/agent-protocol.md):
 * the commands, the fragment file written before the merge, the kept
 * tree ("persist"), and for a build plan "expect" and its artifacts
 * (image, config, sysmap, modules). *out is a new
 * reference. BF_ERR_ALLOC. */
int kbuild_plan_doc(const struct kbuild_plan *p, int timeout_s, int64_t max_artifact,
    json_t **out);

/* The value of CONFIG_<name> in a .config's text (n bytes): 'y', 'm', or
 * 0 when unset; the compiler's line CONFIG_CC_VERSION_TEXT="..." into
 * out (empty when absent). For the build key and the modules decision. */
int kbuild_config_tristate(const char *config, size_t n, const char *name);
void kbuild_config_cc(const char *config, size_t n, char *out, size_t outsz);

/*
 * After prep: the build key of a spec whose prep printed tree (the tree
 * id) and left config (the final .config, n bytes) on a machine of arch
 * uname_m, the compiler taken from the .config's CONFIG_CC_VERSION_TEXT;
 * and the make LOCALVERSION of its build. BF_ERR_INVALID (d says why) for
 * a tree id that is not 40 or 64 hex digits or a .config without a
 * compiler line (not made by kconfig).
 */
int kbuild_key(const struct kspec *k, const char *tree, const char *config, size_t n,
    const char *uname_m, char key[KSPEC_KEY_HEX + 1], char *localversion, size_t lvsz,
    struct bf_diag *d);

/*
 * The compiler's error line in a build's output (n bytes): the first line
 * holding ": error: " (gcc, ld, kbuild's "Error" lines after it), else
 * the last line starting "make" with "Error", else "". For a failed
 * build's cells, so that they say why, not only that.
 */
void kbuild_error_line(const char *log, size_t n, char *out, size_t outsz);

#endif
