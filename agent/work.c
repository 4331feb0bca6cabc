/*
 * work.c: the dispatch table of the built-in workloads. The workloads
 * themselves live in recipes/workloads/ and are compiled into the agent,
 * so the one static binary (uploaded and sha256-checked) carries them.
 * Each prints "name: value" lines that recipes extract like any output.
 * T, for --thp, is none, madvise or nohugepage (recipes/workloads/wl.h).
 */
#include <stdio.h>
#include <string.h>

#include "wl.h"
#include "work.h"

struct work_cmd {
	const char *name;
	const char *usage;
	int (*fn)(int argc, char **argv);
};

static const struct work_cmd work_cmds[] = {
	{ .name = "cpu", .usage = "cpu --loops N", .fn = basic_cpu },
	{ .name = "touch", .usage = "touch --mb M [--passes P] [--thp T]", .fn = basic_touch },
	{ .name = "echo", .usage = "echo ARG...", .fn = basic_echo },
	{ .name = "addr", .usage = "addr", .fn = basic_addr },
	{ .name = "pagefault",
	  .usage = "pagefault --mb M [--mode file|anon|lmbench] [--passes P] [--thp T]",
	  .fn = pagefault_main },
	{ .name = "dtlb", .usage = "dtlb --pages N --iters I [--thp T]", .fn = tlb_dtlb },
	{ .name = "zeropage", .usage = "zeropage --pages N --iters I [--thp T]",
	  .fn = tlb_zeropage },
	{ .name = "btree", .usage = "btree --keys N --lookups L [--threads N] [--thp T]",
	  .fn = btree_main },
	{ .name = "gups",
	  .usage = "gups --log2 N --updates U [--threads N] [--mode whole|disjoint] [--thp T]",
	  .fn = gups_main },
	{ .name = "ebizzy", .usage = "ebizzy --chunks C --seconds S [--chunk-kb K] [--threads N] "
	  "[--record-size B] [--searches Q] [--thp T]", .fn = ebizzy_main },
	{ .name = "serve", .usage = "serve --instances N --base-port P [--cpus-per C] "
	  "[--env NAME=VALUE]... -- ARGV",
	  .fn = multi_serve },
	{ .name = "fanout", .usage = "fanout --instances N --base-port P "
	  "(--sum-csv COLUMN | --sum-after TOKEN) -- ARGV", .fn = multi_fanout },
	{ .name = "xsbench", .usage = "xsbench [--isotopes N] [--gridpoints G] [--lookups L] "
	  "[--threads T] [--seed S] [--thp MODE]", .fn = xsbench_main },
	{ .name = "graph500", .usage = "graph500 --scale S [--edgefactor E] [--roots R] "
	  "[--threads T] [--seed S] [--thp MODE]", .fn = graph500_main },
	{ .name = "pagerank", .usage = "pagerank --scale S [--degree D] [--graph kronecker|uniform] "
	  "[--tolerance X] [--max-iters I] [--trials N] [--threads T] [--seed S] [--thp MODE]",
	  .fn = pagerank_main },
	{ .name = "hashjoin", .usage = "hashjoin --r-tuples R --s-tuples S [--selectivity PCT] "
	  "[--threads T] [--repeat N] [--thp MODE]", .fn = hashjoin_main },
	{ .name = "hint", .usage = "hint --max-kb K [--trial-ms MS] [--thp MODE]", .fn = hint_main },
	{ .name = "unpack", .usage = "unpack --tar FILE --dir /DIR (once; cached)", .fn = unpack_main },
};

int
work_main(int argc, char **argv)
{
	size_t i;

	for (i = 0; argc >= 1 && i < sizeof(work_cmds) / sizeof(work_cmds[0]); i++)
		if (strcmp(argv[0], work_cmds[i].name) == 0)
			return work_cmds[i].fn(argc, argv);
	fprintf(stderr, "benchfleet-agent: unknown workload \"%.64s\"; one of:\n",
	    argc >= 1 ? argv[0] : "");
	for (i = 0; i < sizeof(work_cmds) / sizeof(work_cmds[0]); i++)
		fprintf(stderr, "  work %s\n", work_cmds[i].usage);
	return WORK_EXIT_USAGE;
}
