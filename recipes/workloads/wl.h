/*
 * wl.h: the built-in workloads compiled into benchfleet-agent (`@agent work
 * NAME ...`; agent/work.c is the dispatch table). Each prints "name: value"
 * lines that recipes extract with a regex, and exits 2 on bad arguments.
 */
#ifndef BF_WL_H
#define BF_WL_H

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

#endif
