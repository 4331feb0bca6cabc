/*
 * cmd.c: the subcommand table, in the way of tmux's cmd_table[]: each
 * subcommand is one entry naming its options, argument counts and
 * handler; this file finds the entry, parses its command line and prints
 * usage. The handlers live in cmd-*.c.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cmd_entry *const cmd_table[] = {
	&cmd_submit_entry,
	&cmd_status_entry,
	&cmd_runs_entry,
	&cmd_wait_entry,
	&cmd_watch_entry,
	&cmd_cancel_entry,
	&cmd_report_entry,
	&cmd_compare_entry,
	&cmd_log_entry,
	&cmd_export_entry,
	&cmd_profile_entry,
	&cmd_profile_diff_entry,
	&cmd_publish_entry,
	&cmd_reproduce_entry,
	&cmd_machines_entry,
	&cmd_machines_add_entry,
	&cmd_machines_rm_entry,
	&cmd_machines_show_entry,
	&cmd_machines_clear_entry,
	&cmd_machines_probe_entry,
	&cmd_recipes_entry,
	&cmd_recipes_import_entry,
	&cmd_labs_entry,
	&cmd_labs_trust_entry,
	&cmd_labs_untrust_entry,
	&cmd_audit_entry,
	NULL
};

static const char cmd_global_usage[] =
    "usage: benchfleet [--url URL] [--token TOKEN] [--json] [--timeout S] COMMAND [ARGS]\n";

static const char cmd_global_help[] =
    "global options:\n"
    "  --url URL       the coordinator (default $BENCHFLEET_URL, else " HTTP_DEFAULT_URL ")\n"
    "  --token TOKEN   bearer token (default $BENCHFLEET_TOKEN)\n"
    "  --json          print the API's JSON instead of tables\n"
    "  --timeout S     give up on one request after S seconds, name lookup and\n"
    "                  connect (at most 10 s of it) included (default 60)\n"
    "  --version       print the version\n"
    "\n"
    "exit status: 0 ok, 1 error or failed job, 2 usage, 3 coordinator unreachable,\n"
    "4 wait/watch timed out. \"benchfleet COMMAND --help\" describes a command.\n";

const struct cmd_entry *
cmd_find(int argc, char **argv, int *used)
{
	const struct cmd_entry *bare = NULL, *e;
	size_t i;

	for (i = 0; (e = cmd_table[i]) != NULL; i++) {
		if (strcmp(e->name, argv[0]) != 0)
			continue;
		if (e->sub == NULL)
			bare = e;
		else if (argc > 1 && strcmp(e->sub, argv[1]) == 0) {
			*used = 2;
			return e;
		}
	}
	*used = 1;
	return bare;
}

static void
cmd_usage_line(const struct cmd_entry *e, FILE *f, const char *lead)
{
	fprintf(f, "%sbenchfleet %s%s%s%s%s\n", lead, e->name, e->sub != NULL ? " " : "",
	    e->sub != NULL ? e->sub : "", *e->usage != '\0' ? " " : "", e->usage);
}

void
cmd_usage(const struct cmd_entry *e, FILE *f)
{
	cmd_usage_line(e, f, "usage: ");
	fprintf(f, "\n%s\n", e->summary);
	if (e->help != NULL)
		fprintf(f, "\n%s", e->help);
}

void
cmd_usage_all(FILE *f)
{
	const struct cmd_entry *e;
	char head[128];
	size_t i;

	fputs(cmd_global_usage, f);
	fputs("\ncommands:\n", f);
	for (i = 0; (e = cmd_table[i]) != NULL; i++) {
		snprintf(head, sizeof(head), "%s%s%s %s", e->name, e->sub != NULL ? " " : "",
		    e->sub != NULL ? e->sub : "", e->usage);
		if (strlen(head) > 42)
			fprintf(f, "  %s\n  %-42s %s\n", head, "", e->summary);
		else
			fprintf(f, "  %-42s %s\n", head, e->summary);
	}
	fprintf(f, "  %-42s %s\n\n", "help [COMMAND]", "describe the commands");
	fputs(cmd_global_help, f);
}

int
cmd_usage_error(const struct cmd_entry *e, const char *fmt, ...)
{
	va_list ap;

	fputs("benchfleet: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (e != NULL)
		cmd_usage_line(e, stderr, "usage: ");
	return CLI_EXIT_USAGE;
}

int
cmd_parse(const struct cmd_entry *e, int argc, char **argv, struct cmd_args *a)
{
	struct option lo[CMD_MAX_OPTS + 2];
	char so[3 * CMD_MAX_OPTS + 4], *sp = so;
	size_t n = 0, i;
	int ch, idx;

	memset(a, 0, sizeof(*a));
	*sp++ = ':';	/* report a missing argument as ':' */
	*sp++ = 'h';
	for (n = 0; e->opts != NULL && e->opts[n].name != NULL && n < CMD_MAX_OPTS; n++) {
		lo[n].name = e->opts[n].name;
		lo[n].has_arg = e->opts[n].has_arg ? required_argument : no_argument;
		lo[n].flag = NULL;
		lo[n].val = 256 + (int)n;
		if (e->opts[n].shortc != 0) {
			*sp++ = (char)e->opts[n].shortc;
			if (e->opts[n].has_arg)
				*sp++ = ':';
		}
	}
	*sp = '\0';
	lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };

	optind = 0;	/* glibc: start over, the global options used getopt too */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (ch == 'h') {
			cmd_usage(e, stdout);
			return -1;
		}
		if (ch == ':')
			return cmd_usage_error(e, "option %s needs a value", argv[optind - 1]);
		idx = -1;
		if (ch >= 256)
			idx = ch - 256;
		else if (ch != '?')
			for (i = 0; i < n; i++)
				if (e->opts[i].shortc == ch)
					idx = (int)i;
		if (idx < 0)
			return cmd_usage_error(e, "unknown option %s", argv[optind - 1]);
		a->opt[idx] = e->opts[idx].has_arg ? optarg : "";
	}
	if (argc - optind < e->minargs)
		return cmd_usage_error(e, "too few arguments");
	if (argc - optind > e->maxargs || argc - optind > CMD_MAX_ARGS)
		return cmd_usage_error(e, "too many arguments");
	for (; optind < argc; optind++)
		a->argv[a->argc++] = argv[optind];
	return 0;
}
