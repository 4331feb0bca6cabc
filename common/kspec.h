/*
 * kspec.h: kernel specs, the "kernels" of a job (issue 18): a kernel to
 * build from a git tree and a config, which a job's "kernel" or
 * matrix.kernel then names instead of an installed release.
 *
 * "kernels": {
 *   "4lvl": {"git": "/srv/linux.git",             required; absolute, normal
 *                                                 (path.h), under one of the
 *                                                 coordinator's git roots
 *            "commit": "v6.10",                   required; a ref or a hex id
 *            "config": "defconfig",               "defconfig" (default) |
 *                                                 "tinyconfig" | an absolute
 *                                                 normal path under a git root
 *            "fragments": ["CONFIG_X86_5LEVEL=n"],  0..KSPEC_MAX_FRAGMENTS
 *            "patches": ["series/0001-x.patch"],  0..KSPEC_MAX_PATCHES, applied
 *                                                 in order with git apply
 *            "localversion": "-bf4l"}             optional; added before the
 *                                                 release's "-bf<key8>"
 * }
 *
 * Every string here ends up as one argv element of git or make on a
 * builder machine; none ever reaches a shell. The checks are still
 * strict (no leading '-', no "..", no shell metacharacters), so that a
 * value cannot turn into an option of git or make, or a path outside
 * the roots. A patch is a relative path (below the git path's directory)
 * or an absolute one under a git root.
 *
 * The build key (kspec_build_key) is what makes a build content-addressed:
 * equal keys are the same kernel, built once.
 */
#ifndef BF_KSPEC_H
#define BF_KSPEC_H

#include <stddef.h>
#include <jansson.h>

#include "err.h"

#define KSPEC_MAX_KERNELS	16	/* specs of one job */
#define KSPEC_MAX_FRAGMENTS	64	/* config lines of one spec */
#define KSPEC_MAX_FRAGMENT	256	/* bytes of one config line */
#define KSPEC_MAX_PATCHES	32	/* patches of one spec */
#define KSPEC_MAX_REF		128	/* bytes of a commit ref */
#define KSPEC_MAX_LOCALVERSION	32	/* bytes of a localversion */
#define KSPEC_MAX_ROOTS		16	/* the coordinator's git roots */
#define KSPEC_KEY_HEX		64	/* a build key: sha256, hex */
#define KSPEC_KEY_TAG		8	/* hex digits of it in "-bf<key8>" */

enum kspec_config {
	KSPEC_CONFIG_DEFCONFIG = 0,	/* make defconfig */
	KSPEC_CONFIG_TINYCONFIG,	/* make tinyconfig */
	KSPEC_CONFIG_FILE		/* a .config file, then make olddefconfig */
};

struct kspec {
	char *name;			/* the key in "kernels" */
	char *git;			/* absolute path of the repository */
	char *commit;			/* ref or object id */
	enum kspec_config config;
	char *config_path;		/* KSPEC_CONFIG_FILE: its absolute path; else NULL */
	char **fragments;		/* "CONFIG_X=v" lines */
	size_t nfragments;
	char **patches;			/* as given */
	size_t npatches;
	char *localversion;		/* "" when absent */
};

struct kspec_set {
	struct kspec *k;
	size_t n;
};

/* doc's "kernels" (absent: *out = NULL, 0). Errors name
 * "kernels.NAME.field[i]". *out freed with kspec_set_free(). */
int kspec_parse(const json_t *doc, struct kspec_set **out, struct bf_diag *d);
void kspec_set_free(struct kspec_set *s);
/* The spec called name, or NULL (s may be NULL). */
const struct kspec *kspec_find(const struct kspec_set *s, const char *name);

/* Every spec is named by kernel (may be NULL) or a value of axis (the
 * job's matrix.kernel, may be NULL): an unnamed spec is a mistake the
 * job's author wants to hear about ("kernels.x: is named by neither ..."). */
int kspec_check_named(const struct kspec_set *s, const char *kernel, const json_t *axis,
    struct bf_diag *d);

/* One check each; path names the field in messages. */
int kspec_check_ref(const char *s, const char *path, struct bf_diag *d);
int kspec_check_fragment(const char *s, const char *path, struct bf_diag *d);
int kspec_check_localversion(const char *s, const char *path, struct bf_diag *d);
/* A patch: a relative path of components [A-Za-z0-9._+~-] (none "." or
 * "..", none starting with '-'), or a normal absolute path. */
int kspec_check_patch(const char *s, const char *path, struct bf_diag *d);

/*
 * roots: the coordinator's allowed git roots, ':'-separated absolute
 * normal paths (NULL or "": none allowed). Every spec's git path, a config
 * file and every absolute patch must be under one of them (a relative
 * patch is under the git path's directory by construction). 0, or
 * BF_ERR_INVALID naming the field and the roots.
 */
int kspec_check_roots(const struct kspec_set *s, const char *roots, struct bf_diag *d);
/* roots itself is well formed (for the daemon's option). */
int kspec_check_root_list(const char *roots, struct bf_diag *d);

/*
 * The build key: sha256 over the tree id of the commit after its patches,
 * the final .config's bytes, the compiler's version line, the arch and the
 * spec's localversion (it is part of the release in the image), each
 * length-prefixed so no two inputs collide by concatenation. out gets 64
 * lowercase hex digits and a NUL.
 */
void kspec_build_key(const char *tree_id, const void *config, size_t configlen,
    const char *compiler, const char *arch, const char *localversion,
    char out[KSPEC_KEY_HEX + 1]);
/* The make LOCALVERSION of a build: localversion "-bf" key[0..8), into out
 * (at least KSPEC_MAX_LOCALVERSION + 12 bytes). */
void kspec_make_localversion(const char *localversion, const char *key, char *out,
    size_t outsz);

#endif
