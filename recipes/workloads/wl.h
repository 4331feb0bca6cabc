/*
 * wl.h: the built-in workloads compiled into benchfleet-agent (`@agent work
 * NAME ...`; agent/work.c is the dispatch table). Each prints "name: value"
 * lines that recipes extract with a regex, and exits 2 on bad arguments.
 */
#ifndef BF_WL_H
#define BF_WL_H

#include <stddef.h>
#include <stdint.h>

#define WL_EXIT_USAGE	2
#define WL_PAGE		4096

/* Monotonic seconds. */
double wl_now(void);
/*
 * Parse "--opt N" pairs: opts[i] names an option, vals[i] receives it (and
 * keeps its default when absent). Returns 0, or WL_EXIT_USAGE after a
 * message on stderr (unknown option, missing value, out of range).
 */
struct wl_opt {
	const char *name;
	int64_t min, max;
	int64_t *val;
	int required;
};
int wl_parse(const char *work, int argc, char **argv, const struct wl_opt *opts, int nopts);
/* A splitmix64 step: a fast, seeded generator for workloads. */
uint64_t wl_rand(uint64_t *state);

/*
 * Take "--name WORD" out of argv (argc shrinks), WORD one of words[]
 * (NULL-terminated): *idx gets its index, and keeps its value when the
 * option is absent. WL_EXIT_USAGE after a message naming the option.
 */
int wl_word(const char *work, int *argc, char **argv, const char *name,
    const char *const *words, int *idx);

/*
 * The THP mode of a workload's memory (--thp none|madvise|nohugepage):
 * none leaves the mapping as mmap gives it (the system policy decides);
 * madvise aligns it to 2 MiB, so that huge pages can back it, and asks for
 * them (MADV_HUGEPAGE: what thp_enabled=madvise waits for); nohugepage
 * refuses them (MADV_NOHUGEPAGE, even under thp_enabled=always).
 */
enum wl_thp { WL_THP_NONE = 0, WL_THP_MADVISE, WL_THP_NOHUGEPAGE };
#define WL_HUGE		((size_t)2 << 20)
int wl_thp_opt(const char *work, int *argc, char **argv, int *thp);
/* Private anonymous memory of len bytes in THP mode thp (extra: more mmap
 * flags, e.g. MAP_NORESERVE); NULL after a message. Free with munmap. */
void *wl_map(const char *work, size_t len, int thp, int extra);
/* AnonHugePages of this process (/proc/self/smaps_rollup) in KiB, or -1:
 * printed as "anon_huge_kb: N" while the memory is mapped, the workload's
 * own evidence of what the THP mode gave it. */
long wl_anon_huge_kb(void);
/* madvise an existing mapping per thp; 0, or 1 after a message. */
int wl_advise(const char *work, void *p, size_t len, int thp);

int basic_cpu(int argc, char **argv);
int basic_touch(int argc, char **argv);
int basic_echo(int argc, char **argv);
int basic_addr(int argc, char **argv);
int pagefault_main(int argc, char **argv);
int tlb_dtlb(int argc, char **argv);
int tlb_zeropage(int argc, char **argv);
int btree_main(int argc, char **argv);
int gups_main(int argc, char **argv);
int ebizzy_main(int argc, char **argv);
int unpack_main(int argc, char **argv);
/* The algorithm workloads (wlx.h has their testable cores). */
int xsbench_main(int argc, char **argv);
int graph500_main(int argc, char **argv);
int pagerank_main(int argc, char **argv);
int hashjoin_main(int argc, char **argv);
int hint_main(int argc, char **argv);
int multi_serve(int argc, char **argv);
int multi_fanout(int argc, char **argv);

#endif
