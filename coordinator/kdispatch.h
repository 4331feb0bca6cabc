/*
 * kdispatch.h: a run whose kernel names one of its job's "kernels" specs
 * (kspec.h) gets that kernel built, installed and booted (issue 18).
 *
 *   kdispatch_resolve  on a builder (the target when its roles hold
 *                      "build", else the first reachable machine whose do),
 *                      over the same transport: `benchfleet-agent build`
 *                      of the prep plan (common/kbuild.h), the build key
 *                      from its tree id and .config, then the store's
 *                      kernel_builds row decides: done already -> reuse
 *                      (nothing built), failed -> the run fails with the
 *                      key's error, building elsewhere -> wait, new or its
 *                      lease lapsed -> build it here, streaming the output
 *                      into the run log, the artifacts into the artifact
 *                      directory (kstore.h), the row set done or failed.
 *   kdispatch_install  the image, .config and modules onto the target
 *                      under /boot and /lib/modules/<release>; an initramfs
 *                      by the distro's tool when there are modules.
 *   kdispatch_verify   after the boot: uname -r is the built release and
 *                      the running config's sha256 the built .config's.
 *
 * A build failure is the cells' that need that kernel, never the job's:
 * the run ends failed with the compiler's error line (kbuild_error_line).
 * Every spec value reaches git and make as one argv element through the
 * agent's execvp; the commands this module sends through a shell hold
 * only the builder's work directory (made here from the run id), hex
 * hashes and a release checked by boot_check_release, each shquote()d.
 */
#ifndef BF_KDISPATCH_H
#define BF_KDISPATCH_H

#include <stdatomic.h>

#include "boot.h"
#include "kspec.h"
#include "kstore.h"
#include "runner.h"
#include "transport.h"

#define KDISPATCH_DIR		"/var/tmp/benchfleet-kbuild"	/* on builders */
#define KDISPATCH_TIMEOUT_S	(3 * 3600)	/* prep or build */
#define KDISPATCH_MAX_LOG	((size_t)8 << 20)	/* a build's log artifact */
#define KDISPATCH_BUSY_POLL_S	5		/* asking again for a key built elsewhere */

struct kdispatch_env {
	const struct runner_env *renv;	/* the target's worker: store, sink, agents */
	struct kstore *ks;		/* the artifact directory */
	transport_connect_fn connect;	/* to reach a builder other than the target */
	void *connect_arg;
	const char *known_hosts;
	int connect_timeout_ms;
	const char *builddir;		/* NULL: KDISPATCH_DIR */
	int timeout_s;			/* 0: KDISPATCH_TIMEOUT_S */
	int busy_wait_s;		/* waiting for another's build before requeueing */
	const atomic_int *cancel;	/* the run's lease went: stop waiting; may be NULL */
};

/* The built kernel of a run, as resolved, installed and verified. */
struct kdispatch_kernel {
	char key[KSPEC_KEY_HEX + 1];
	char release[BOOT_MAX_RELEASE + 1];
	char image_sha256[65];
	char config_sha256[65];
	char modules_sha256[65];		/* "" without modules */
	char image[BOOT_MAX_PATH];		/* on the target, after install */
	char initrd[BOOT_MAX_PATH];		/* "" without */
	int built_here;				/* this call built it (not reused) */
};

/* The spec the claim's kernel names, or NULL: an installed kernel. */
const struct kspec *kdispatch_spec(const struct runner_claim *rc);

/* Build or reuse the claim's kernel: o->action RUN_PROCEED with *k filled,
 * or RUN_FINISH failed (the build failed; no builder; another arch) or
 * RUN_REQUEUE (the builder is away, or busy past busy_wait_s). */
void kdispatch_resolve(const struct kdispatch_env *env, const struct store_machine *m,
    struct transport *tr, int *agent_ok, const struct runner_claim *rc,
    struct kdispatch_kernel *k, struct run_outcome *o);
/* Put k on the target tr (skipped when its files are there already):
 * RUN_PROCEED with k->image / k->initrd set, RUN_RETRY (the link), or
 * RUN_FINISH failed. */
void kdispatch_install(const struct kdispatch_env *env, const struct store_machine *m,
    struct transport *tr, const struct runner_claim *rc, struct kdispatch_kernel *k,
    struct run_outcome *o);
/* After runner_boot's RUN_PROCEED: the release and the running config
 * hash, said in the run log; a mismatch is RUN_FINISH boot-failed. */
void kdispatch_verify(const struct kdispatch_env *env, struct transport *tr,
    const struct runner_claim *rc, const struct kdispatch_kernel *k, struct run_outcome *o);

#endif
