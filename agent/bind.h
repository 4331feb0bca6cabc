/*
 * bind.h: where the workload runs: CPU list, NUMA memory binding
 * (set_mempolicy MPOL_BIND by the raw syscall, no libnuma), the nodes whose
 * CPUs it may use, and per-process ASLR off (personality). Parsed from the
 * step, resolved against the machine before the first fork, and applied
 * in each child (workload, setup, services) just before exec.
 */
#ifndef BF_AGENT_BIND_H
#define BF_AGENT_BIND_H

#include <sched.h>
#include <stddef.h>

#define BIND_MAX_CPUS	1024	/* CPU_SETSIZE */
#define BIND_MAX_NODES	1024
#define BIND_WORD_BITS	(8 * sizeof(unsigned long))
#define BIND_WORDS	(BIND_MAX_NODES / BIND_WORD_BITS)
#define BIND_MAX_LIST	4096	/* a "0-3,8" list as text */

struct bind {
	int cpus_set;
	unsigned long cpus[BIND_MAX_CPUS / BIND_WORD_BITS];
	int mem_set;
	unsigned long mem[BIND_WORDS];
	int nodes_set;
	unsigned long nodes[BIND_WORDS];
	int aslr_off;		/* personality(ADDR_NO_RANDOMIZE) */
	/* resolved by bind_resolve(): the affinity the child gets */
	int affinity_set;
	cpu_set_t affinity;
};

/*
 * Parse a Linux list ("0-3,8,10-11"; also "5") into mask of nbits bits.
 * Empty lists, descending ranges, numbers >= nbits, spaces and anything
 * else are refused with a reason in why.
 */
int bind_parse_list(const char *s, unsigned long *mask, size_t nbits, char *why,
    size_t whysz);
/* Format mask as a list ("0-3,8") into out. */
void bind_format_list(const unsigned long *mask, size_t nbits, char *out, size_t outsz);

/*
 * Compute the affinity: cpus, intersected with the CPUs of nodes
 * (/sys/devices/system/node/nodeN/cpulist). Fails with why when a node
 * does not exist or the result is empty.
 */
int bind_resolve(struct bind *b, char *why, size_t whysz);

/* In the child after fork: apply all of b. Returns 0, or -1 with errno set
 * and *what naming the call that failed. Async-signal-safe. */
int bind_apply(const struct bind *b, const char **what);

#endif
