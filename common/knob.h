/*
 * knob.h: the knob table. A knob is a piece of kernel or machine state an
 * experiment varies (THP mode, mTHP per size, hugetlb pools, NUMA
 * balancing, ASLR, cpufreq governor, boost, SMT, C-states) or an action
 * done before each iteration (drop_caches, compact_memory). Each is one
 * table entry: its name, the files it is made of, the values it accepts,
 * and how it is read back. libc only: the
 * static agent compiles this file, and the coordinator uses the same table
 * to validate jobs (knob_validate) before anything reaches a machine.
 *
 * Values are text. Integer knobs accept a decimal integer in their range;
 * the others one of a fixed list. Nothing outside the table ever becomes a
 * path: a size (mthp_64kB, nr_hugepages_2048kB) or a node
 * (nr_hugepages_2048kB_node1) is parsed as an integer and the path rebuilt
 * from it.
 */
#ifndef BF_KNOB_H
#define BF_KNOB_H

#include <stddef.h>
#include <stdint.h>

#define KNOB_MAX_VALUE	64	/* a knob value, as text */
#define KNOB_MAX_PATH	256	/* one file of a knob */
#define KNOB_MAX_FILES	4096	/* files of one knob (governor: one per cpu; cpuidle:
				   one per cpu and state) */
#define KNOB_MAX_WHY	512	/* a reason, for a person */

enum knob_kind {
	KNOB_BRACKET,		/* sysfs "always [madvise] never": the bracketed word */
	KNOB_INT,		/* a file holding one integer */
	KNOB_GOVERNOR,		/* every cpu's cpufreq/scaling_governor */
	KNOB_BOOST,		/* cpufreq/boost, or intel_pstate/no_turbo (inverted) */
	KNOB_ACTION,		/* not state: done before each iteration (drop_caches) */
	KNOB_SMT,		/* smt/control written; smt/active read back as on/off */
	KNOB_CPUIDLE		/* cpuidle states above N us disabled, on every cpu */
};

enum knob_family {
	KNOB_FAM_NONE,		/* name is the knob's name */
	KNOB_FAM_SIZE,		/* name is a prefix: <prefix><N>kB */
	KNOB_FAM_SIZE_NODE	/* <prefix><N>kB_node<M> */
};

struct knob {
	const char *name;	/* "thp_enabled"; a family's prefix ("mthp_") */
	enum knob_family family;
	enum knob_kind kind;
	const char *path;	/* the file, or the part before the (first) number */
	const char *mid;	/* _NODE: between the node and the size */
	const char *tail;	/* after the number (cpuN, hugepages-NkB), or NULL */
	const char *sizes;	/* a family: the directory listing its hugepages-NkB */
	int pool;		/* a hugetlb pool: the kernel may give fewer pages */
	const char *const *values;	/* allowed words, NULL-terminated; NULL for ints */
	int64_t min, max;	/* integer range */
	const char *help;
};

/* The table entry for name ("mthp_64kB" finds the mthp_ family), or NULL. */
const struct knob *knob_find(const char *name);
/* Every entry, for listings; *np gets the count. */
const struct knob *knob_table(size_t *np);

/*
 * Is value acceptable for knob name? 0 or BF_ERR_INVALID/BF_ERR_NOTFOUND
 * with the reason in why: '"alwayz" is not one of never, madvise, always'.
 * Does not look at the machine (an mTHP size is checked when applied).
 */
int knob_check(const char *name, const char *value, char *why, size_t whysz);
/* knob_check with the field in front: 'knobs.thp_enabled: "alwayz" is not ...'. */
int knob_validate(const char *name, const char *value, char *errbuf, size_t errsz);

/*
 * The bracketed word of a sysfs choice file ("always [madvise] never\n" ->
 * "madvise"). BF_ERR_PARSE when there is not exactly one [word] or the word
 * is empty, has spaces or is longer than outsz-1.
 */
int knob_bracket(const char *text, size_t len, char *out, size_t outsz);

/* Root prepended to every path ("" by default); tests point it at a fake
 * sysfs tree. At most KNOB_MAX_PATH/2 bytes. */
int knob_set_root(const char *root);

/* The mTHP sizes of this machine, ascending, as "16kB, 32kB, 64kB" (or
 * "none"). 0, or BF_ERR_IO when the directory cannot be read. */
int knob_mthp_sizes(char *out, size_t outsz);

/*
 * The files knob name is made of, into paths[KNOB_MAX_FILES][KNOB_MAX_PATH],
 * *np of them. BF_ERR_NOTFOUND with why ("no such mTHP size 3kB; available:
 * 16kB, 64kB", "no cpufreq on this machine") when the machine lacks it.
 */
int knob_files(const char *name, char (*paths)[KNOB_MAX_PATH], size_t max, size_t *np,
    char *why, size_t whysz);

/*
 * The one file of knob name as the table names it (no root, not looked
 * for): "nr_hugepages_2048kB_node1" ->
 * /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages;
 * *node gets the node of a _node family member, else -1. BF_ERR_INVALID for
 * the knobs of many files (governor, cpuidle) and BF_ERR_NOTFOUND for no knob.
 */
int knob_path(const char *name, char *out, size_t outsz, long long *node);

/* One file's value in the form that writing it back restores it: the
 * bracketed word, or the trimmed content. */
int knob_file_get(const char *name, const char *path, char *out, size_t outsz, char *why,
    size_t whysz);
/* Write value to path (one write(2), no newline). why gets strerror. */
int knob_file_put(const char *path, const char *value, char *why, size_t whysz);

/*
 * The knob's current value as the user sees it: for the governor the common
 * value of every cpu, or "cpu0:x,cpu1:y" when they differ; for boost 1 when
 * boost is on, whichever file says it.
 */
int knob_read(const char *name, char *out, size_t outsz, char *why, size_t whysz);
/* Set the knob to value (checked with knob_check first). */
int knob_write(const char *name, const char *value, char *why, size_t whysz);
/*
 * Does the read-back got equal the requested want (integers numerically)?
 * For cpuidle_max_latency_us the read-back is a range "X..Y" (enabled
 * states reach X us, disabled ones start at Y; "X.." none disabled) and
 * want N matches when X <= N < Y.
 */
int knob_same(const char *name, const char *want, const char *got);
/* Why a read-back got does not match want, for a person: "set to a but
 * reads back b", or for a hugetlb pool the pages asked and obtained. */
void knob_mismatch(const char *name, const char *want, const char *got, char *why,
    size_t whysz);
/* Does the machine have action knob name's file (drop_caches, compact_memory)? */
int knob_action_exists(const char *name, char *why, size_t whysz);

/* The value a knob the machine lacks reads back as, with knobs_optional. */
#define KNOB_ABSENT	"absent"

#endif
