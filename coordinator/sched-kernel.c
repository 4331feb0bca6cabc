/*
 * sched-kernel.c: a worker's run whose kernel is one of its job's specs
 * (kdispatch.h): built or reused and installed before runner_boot, which
 * boots it as rc->built, and verified after the boot (sched.c ws_run).
 */
#include <stdio.h>
#include <string.h>

#include "kdispatch.h"
#include "sched-int.h"

/* What a kernel build of this worker's run needs (kdispatch.h). */
static struct kdispatch_env
kenv_of(const struct worker_ctx *x)
{
	struct kdispatch_env e;

	memset(&e, 0, sizeof(e));
	e.renv = &x->env;
	e.ks = x->s->cfg.ks;
	e.connect = x->s->connect;
	e.connect_arg = x->s->cfg.connect_arg;
	e.known_hosts = x->s->known_hosts;
	e.connect_timeout_ms = x->s->cfg.connect_timeout_ms;
	e.builddir = x->s->cfg.kbuild_dir;
	e.busy_wait_s = x->s->cfg.lease_s;
	e.cancel = &x->w->lease_lost;
	return e;
}

/*
 * A run whose kernel is one of its job's specs: built (or reused) and
 * installed before the boot, which then boots it as rc->built. 0: boot;
 * else *o says how the run ends.
 */
int
sched_kernel_prepare(struct worker_ctx *x, struct runner_claim *rc, struct kdispatch_kernel *k,
    struct boot_kernel *bk, struct run_outcome *o)
{
	struct kdispatch_env e = kenv_of(x);

	if (kdispatch_spec(rc) == NULL)
		return 0;
	if (e.ks == NULL) {
		memset(o, 0, sizeof(*o));
		o->action = RUN_FINISH;
		o->state = "failed";
		o->exit_status = -1;
		snprintf(o->message, sizeof(o->message), "kernel %s: this coordinator has no "
		    "artifact directory for kernel builds", rc->c->kernel);
		return -1;
	}
	kdispatch_resolve(&e, x->m, x->tr, &x->agent_ok, rc, k, o);
	if (o->action == RUN_PROCEED)
		kdispatch_install(&e, x->m, x->tr, rc, k, o);
	if (o->action != RUN_PROCEED)
		return -1;
	memset(bk, 0, sizeof(*bk));
	bk->release = k->release;
	bk->image = k->image;
	bk->initrd = k->initrd[0] ? k->initrd : NULL;
	rc->built = bk;
	return 0;
}

void
sched_kernel_verify(struct worker_ctx *x, const struct runner_claim *rc,
    const struct kdispatch_kernel *k, struct run_outcome *o)
{
	struct kdispatch_env e = kenv_of(x);

	kdispatch_verify(&e, x->tr, rc, k, o);
}
