/*
 * work.c: the dispatch table of the built-in workloads. The workloads
 * themselves live in recipes/workloads/ and are compiled into the agent,
 * so the one static binary (uploaded and sha256-checked) carries them.
 * Each prints "name: value" lines that recipes extract like any output.
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
	{ "cpu",	"cpu --loops N",			basic_cpu },
	{ "touch",	"touch --mb M [--passes P]",		basic_touch },
	{ "echo",	"echo ARG...",				basic_echo },
	{ "addr",	"addr",					basic_addr },
	{ "pagefault",	"pagefault --mb M [--mode file|anon]",	pagefault_main },
	{ "dtlb",	"dtlb --pages N --iters I",		tlb_dtlb },
	{ "zeropage",	"zeropage --pages N --iters I",		tlb_zeropage },
	{ "btree",	"btree --keys N --lookups L [--threads T]", btree_main },
	{ "gups",	"gups --log2 N --updates U",		gups_main },
	{ "ebizzy",	"ebizzy --chunks C --seconds S [--chunk-kb K] [--threads T]",
	  ebizzy_main },
	{ "unpack",	"unpack --tar FILE --dir /DIR (once; cached)",	unpack_main },
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
