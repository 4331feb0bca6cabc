/*
 * store-claim.h: the scheduling policy, whole. The scheduler asks the store
 * for one run at a time per machine (store_run_claim_boot in store.h); this
 * is how the store picks it. The pick is one SQL statement per engine
 * (store-claim.c), so the rules below are the statement read aloud: change
 * one and the other together.
 *
 * Who may claim. The machine must be registered (else BF_ERR_NOTFOUND), this
 * coordinator must hold or take its lease (machines.owner; a live lease of
 * another coordinator means "nothing for you"), and it must not already have
 * a running run: a benchmark never shares its machine.
 *
 * Which runs are candidates. Queued runs of jobs that are queued or running
 * (cancelled and finished jobs offer nothing), whose job asks either for
 * the machine's class or names the machine in machine_names; and by the
 * job's machines.spread (job.h): a run with a req_machine (spread
 * "block": the plan made one run set per eligible machine) only for that
 * machine; a run of a "pin" job only for the job's pinned_machine once it
 * has one.
 *
 * Pinning. The first claim of a "pin" job's run sets jobs.pinned_machine
 * to the claiming machine, in the claim's transaction; every later run of
 * the job is that machine's (if it goes offline for good, the job waits:
 * cancel it). Two coordinators claiming a pin job's first runs at once for
 * two machines: the second's UPDATE finds the job pinned to the other and
 * its claim is undone (nothing for it this time).
 *
 * Boot groups. A run's boot group is "JOB:BOOT:KERNEL:CMDLINE"
 * (store_boot_group): the runs that can share one boot of a machine, since
 * they belong to the same repetition (boot) of the same job and need the
 * same kernel and command line. The scheduler passes the group of the boot
 * the machine is in now (its boot_key without the boot id), or NULL.
 *
 * One reboot per boot group. A run that needs a boot of its own (a kernel
 * or a command line) is not a candidate while another machine that is not
 * offline or quarantined has a run of its boot group running or done: that
 * machine booted for the group and will serve the rest of it. If that
 * machine goes offline or is quarantined the group is open again. Runs
 * for different req_machines (spread "block") are never one group: each
 * machine boots for its own set.
 *
 * A suite job's entries (job.h) share its boots: the runs of every entry
 * of one boot and boot configuration are one boot group, so a boot serves
 * every workload before the next reboot, and a suite reboots as often as
 * one of its workloads would alone (configurations x boots).
 *
 * Order, first rule that separates two candidates wins:
 *   1. runs of the boot group the machine is in: a boot serves all of its
 *      runs before the machine reboots;
 *   2. boot groups no other machine has started, before those another
 *      machine is already in (a group runs whole on one machine; again
 *      each block machine's set apart);
 *   3. the oldest job (smallest job id): jobs are served first come,
 *      first served, never interleaved with one another;
 *   4. within a job, by runs.run_order, the rank its plan gave the run
 *      (common/plan.h): for "interleaved" jobs, the default, boot-major,
 *      alternating the configurations boot by boot (A B A B), so a drift
 *      of the machine over time spreads evenly over the cells; for
 *      "sequential" ones cell-major, a cell's boots one after another;
 *   5. then run id, so the pick is total and repeatable.
 * An adaptive extra boot (store_run_finish's clone) gets the next boot
 * number of its cell and the cell's last rank plus PLAN_ORDER_BOOT_STEP,
 * which is one boot later in either order: it falls in behind the boots
 * already queued.
 *
 * What a claim does, in one transaction: the run becomes running with this
 * machine, started_at, owner (this coordinator) and lease_until = now +
 * lease; a "pin" job without a machine gets this one; its job becomes
 * running; the machine becomes running.
 *
 * How the order is taken: rules 1 and 2 are four probes, one after the
 * other until one finds a run (in the machine's group and not started
 * elsewhere; in its group; not started elsewhere; any), each taking the
 * first candidate by rules 3 to 5, which are the index's own order. So a
 * claim visits the queue from its head and stops at the first run that
 * fits, instead of ranking every queued run (bench/storebench: 2,000 runs
 * of one job claimed at 6.4 a second before, when each claim ranked them
 * all with an EXISTS per run).
 *
 * Engines. SQLite: BEGIN IMMEDIATE takes the write lock before the pick,
 * and a CROSS JOIN keeps jobs as the outer loop over the runs_claim index,
 * so a claim never sorts the fleet's queue. PostgreSQL: the pick locks its
 * row FOR UPDATE SKIP LOCKED, so coordinators claiming at the same moment
 * each take a different run instead of queueing behind one row lock; the
 * UPDATE still checks that the run is queued.
 *
 * Not for other modules: only store.c's statement table reads these.
 */
#ifndef BF_STORE_CLAIM_H
#define BF_STORE_CLAIM_H

/* The pick's four probes (store-claim.c says why four), in their order;
 * they bind ?1 machine class, ?2 machine name, and the two group probes
 * also ?3 its boot group and ?4 that group's job id. Each gives at most
 * one row: run id, job id, recipe (the run's, else its job's), spec,
 * values, label, boot, attempt, knobs, kernel, command line, cell index,
 * run_order, iterations, warmup, timeout_s, workload (a suite's), the
 * job's spread. */
extern const char store_claim_pick_group_fresh_sql[], store_claim_pick_group_sql[],
    store_claim_pick_fresh_sql[], store_claim_pick_any_sql[];
extern const char store_claim_pick_group_fresh_sql_pg[], store_claim_pick_group_sql_pg[],
    store_claim_pick_fresh_sql_pg[], store_claim_pick_any_sql_pg[];

#endif
