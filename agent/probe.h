/*
 * probe.h: `benchfleet-agent probe`, the machine fingerprint: one JSON line
 * {"type":"fingerprint", ...} with CPU, topology, memory per node, kernel
 * and its config hash, cmdline, 5-level paging, THP/mTHP, cpufreq, distro,
 * compiler, and "sha256" over the identity fields (see probe_identity).
 * The text parsers are exposed for the unit tests.
 */
#ifndef BF_AGENT_PROBE_H
#define BF_AGENT_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define PROBE_STR	256

struct probe_cpu {
	char model[PROBE_STR];		/* "model name" (arm64: "CPU part" as text) */
	char vendor[64];		/* "vendor_id" (arm64: "CPU implementer") */
	int64_t family, model_no, stepping;	/* -1 when absent */
	char microcode[64];
	int64_t threads;		/* "processor" entries */
	int64_t sockets;		/* distinct "physical id" (1 when absent) */
	int64_t cores;			/* distinct (physical id, core id) (threads when absent) */
	int la57;			/* "la57" in flags */
};

/* Parse /proc/cpuinfo text. */
int probe_cpuinfo(const char *text, size_t len, struct probe_cpu *c);
/* PRETTY_NAME of /etc/os-release text, quotes removed; "" when absent. */
void probe_os_release(const char *text, size_t len, char *out, size_t outsz);
/* Is word one whole space-separated token (or key of key=value) of cmdline? */
int probe_cmdline_has(const char *cmdline, const char *word);
/* The compiler in /proc/version text: the second parenthesised group. */
void probe_compiler(const char *version, char *out, size_t outsz);
/* "MemTotal:  123 kB" from a meminfo text (also "Node 0 MemTotal:"); -1 if absent. */
int64_t probe_memtotal_kb(const char *text, size_t len);
/* The identity text hashed into "sha256". */
BF_WUR int probe_identity(const struct probe_cpu *c, int64_t nodes, int64_t mem_kb,
    struct buf *b);

/* Print the fingerprint line; returns the process exit status. */
int probe_main(int argc, char **argv);

#endif
