/*
 * bf-kbuild: a kernel spec's build documents for `benchfleet-agent build`,
 * made by common/kbuild.c as the coordinator will make them, for tests and
 * for measuring a real build (docs/PERFORMANCE.md).
 *
 *   bf-kbuild prep SPEC.json BUILDDIR ARCH       the prep document
 *   bf-kbuild key SPEC.json TREE CONFIG ARCH     "KEY LOCALVERSION MODULES"
 *   bf-kbuild build SPEC.json BUILDDIR ARCH JOBS LOCALVERSION MODULES(0|1)
 *                   TREE CONFIG_SHA256           the build document
 *   bf-kbuild tree SPEC.json BUILDDIR ARCH       the kept tree's directory
 *
 * SPEC.json is one spec as in a job's "kernels" (kspec.h); it is checked
 * as a job's would be.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "kbuild.h"
#include "kspec.h"
#include "parse.h"

static struct kspec_set *
load_spec(const char *path)
{
	struct kspec_set *s = NULL;
	struct bf_diag d;
	json_error_t je;
	json_t *spec, *doc;

	if ((spec = json_load_file(path, 0, &je)) == NULL) {
		fprintf(stderr, "bf-kbuild: %s: %s\n", path, je.text);
		return NULL;
	}
	doc = json_pack("{s:{s:o}}", "kernels", "k", spec);
	if (doc == NULL || kspec_parse(doc, &s, &d) != 0) {
		fprintf(stderr, "bf-kbuild: %s: %s\n", path, d.msg);
		s = NULL;
	}
	json_decref(doc);
	return s;
}

static int
print_doc(const struct kbuild_plan *p)
{
	json_t *doc = NULL;

	if (kbuild_plan_doc(p, 6 * 3600, (int64_t)256 << 20, &doc) != 0)
		return 1;
	json_dumpf(doc, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(doc);
	return 0;
}

int
main(int argc, char **argv)
{
	struct kspec_set *s = NULL;
	struct kbuild_plan *p = NULL;
	struct bf_diag d;
	char key[65], lv[80], *cfg = NULL, dir[KBUILD_MAX_BUILDDIR + 64];
	int64_t jobs, mods;
	size_t n = 0;
	FILE *f;
	int ret = 1;

	if (argc == 5 && strcmp(argv[1], "prep") == 0) {
		if ((s = load_spec(argv[2])) == NULL)
			goto out;
		if (kbuild_prep(&s->k[0], argv[3], argv[4], &p, &d) != 0) {
			fprintf(stderr, "bf-kbuild: %s\n", d.msg);
			goto out;
		}
		ret = print_doc(p);
	} else if (argc == 6 && strcmp(argv[1], "key") == 0) {
		if ((s = load_spec(argv[2])) == NULL || (f = fopen(argv[4], "r")) == NULL)
			goto out;
		if ((cfg = malloc(4 << 20)) != NULL)
			n = fread(cfg, 1, 4 << 20, f);
		fclose(f);
		if (cfg == NULL || kbuild_key(&s->k[0], argv[3], cfg, n, argv[5], key, lv,
		    sizeof(lv), &d) != 0) {
			fprintf(stderr, "bf-kbuild: %s\n", cfg ? d.msg : "out of memory");
			goto out;
		}
		printf("%s %s %d\n", key, lv, kbuild_config_tristate(cfg, n, "MODULES") == 'y');
		ret = 0;
	} else if (argc == 10 && strcmp(argv[1], "build") == 0) {
		bf_diag_clear(&d);
		if ((s = load_spec(argv[2])) == NULL ||
		    parse_i64(argv[5], 1, KBUILD_MAX_JOBS, &jobs) != 0 ||
		    parse_i64(argv[7], 0, 1, &mods) != 0 ||
		    kbuild_build(&s->k[0], argv[3], argv[4], (int)jobs, argv[6], (int)mods,
		    argv[8], argv[9], &p, &d) != 0) {
			fprintf(stderr, "bf-kbuild: %s\n", d.msg[0] ? d.msg : "bad arguments");
			goto out;
		}
		ret = print_doc(p);
	} else if (argc == 5 && strcmp(argv[1], "tree") == 0) {
		if ((s = load_spec(argv[2])) == NULL)
			goto out;
		if (kbuild_tree_dir(argv[3], s->k[0].git, argv[4], dir, sizeof(dir), &d) != 0) {
			fprintf(stderr, "bf-kbuild: %s\n", d.msg);
			goto out;
		}
		printf("%s\n", dir);
		ret = 0;
	} else {
		fprintf(stderr, "usage: bf-kbuild prep SPEC BUILDDIR ARCH | key SPEC TREE CONFIG "
		    "ARCH | build SPEC BUILDDIR ARCH JOBS LOCALVERSION MODULES TREE CONFIG_SHA256 | "
		    "tree SPEC BUILDDIR ARCH\n");
		ret = 2;
	}
out:
	free(cfg);
	kbuild_plan_free(p);
	kspec_set_free(s);
	return ret;
}
