/*
 * main.c: benchfleet, the command-line client of benchfleetd. Parses the
 * global options (which come before the subcommand), sets up the HTTP
 * client and hands over to the subcommand's table entry. libcurl is not
 * started here: only an https:// URL loads it (cli/http-curl.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "parse.h"

#define MAIN_DEFAULT_TIMEOUT_MS	60000L
#define MAIN_CONNECT_MS		10000L
#define MAIN_MAX_TIMEOUT_S	(7.0 * 86400)

enum { OPT_URL = 256, OPT_TOKEN, OPT_JSON, OPT_TIMEOUT, OPT_VERSION };

static const struct option main_opts[] = {
	{ .name = "url", .has_arg = required_argument, .val = OPT_URL },
	{ .name = "token", .has_arg = required_argument, .val = OPT_TOKEN },
	{ .name = "json", .has_arg = no_argument, .val = OPT_JSON },
	{ .name = "timeout", .has_arg = required_argument, .val = OPT_TIMEOUT },
	{ .name = "version", .has_arg = no_argument, .val = OPT_VERSION },
	{ .name = "help", .has_arg = no_argument, .val = 'h' },
	{ .name = NULL }
};

/* "help [COMMAND [SUB]]" */
static int
main_help(int argc, char **argv)
{
	const struct cmd_entry *e;
	int used;

	if (argc == 0) {
		cmd_usage_all(stdout);
		return CLI_EXIT_OK;
	}
	if ((e = cmd_find(argc, argv, &used)) == NULL)
		return cmd_usage_error(NULL, "no command \"%s\"; see \"benchfleet help\"", argv[0]);
	cmd_usage(e, stdout);
	return CLI_EXIT_OK;
}

int
main(int argc, char **argv)
{
	const struct cmd_entry *e;
	struct cmd_args args;
	struct cli c;
	const char *url = getenv("BENCHFLEET_URL");
	char *token = NULL;
	long timeout_ms = MAIN_DEFAULT_TIMEOUT_MS;
	double secs;
	int ch, used, r;

	memset(&c, 0, sizeof(c));
	if (getenv("BENCHFLEET_TOKEN") != NULL &&
	    (token = strdup(getenv("BENCHFLEET_TOKEN"))) == NULL) {
		cli_err("out of memory");
		r = CLI_EXIT_FAIL;
		goto out;
	}
	opterr = 0;
	/* "+": stop at the subcommand; its options are its own. */
	while ((ch = getopt_long(argc, argv, "+:h", main_opts, NULL)) != -1) {
		switch (ch) {
		case OPT_URL:
			url = optarg;
			break;
		case OPT_TOKEN:
			if (token != NULL)
				explicit_bzero(token, strlen(token));
			free(token);
			if ((token = strdup(optarg)) == NULL) {
				cli_err("out of memory");
				r = CLI_EXIT_FAIL;
				goto out;
			}
			/* Keep the token out of ps(1). */
			explicit_bzero(optarg, strlen(optarg));
			break;
		case OPT_JSON:
			c.json = 1;
			break;
		case OPT_TIMEOUT:
			if (parse_double(optarg, &secs) != 0 || secs <= 0 ||
			    secs > MAIN_MAX_TIMEOUT_S) {
				r = cmd_usage_error(NULL, "--timeout: \"%s\" is not a number of "
				    "seconds in (0, %.0f]", optarg, MAIN_MAX_TIMEOUT_S);
				goto out;
			}
			timeout_ms = (long)(secs * 1000.0);
			if (timeout_ms < 1)
				timeout_ms = 1;
			break;
		case OPT_VERSION:
			printf("benchfleet %s\n", BF_VERSION);
			r = CLI_EXIT_OK;
			goto out;
		case 'h':
			cmd_usage_all(stdout);
			r = CLI_EXIT_OK;
			goto out;
		case ':':
			r = cmd_usage_error(NULL, "option %s needs a value", argv[optind - 1]);
			goto out;
		default:
			r = cmd_usage_error(NULL, "unknown option %s; see \"benchfleet help\"",
			    argv[optind - 1]);
			goto out;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		cmd_usage_all(stderr);
		r = CLI_EXIT_USAGE;
		goto out;
	}
	if (strcmp(argv[0], "help") == 0) {
		r = main_help(argc - 1, argv + 1);
		goto out;
	}
	if ((e = cmd_find(argc, argv, &used)) == NULL) {
		r = cmd_usage_error(NULL, "no command \"%s\"; see \"benchfleet help\"", argv[0]);
		goto out;
	}
	if ((r = cmd_parse(e, argc - used + 1, argv + used - 1, &args)) != 0) {
		if (r < 0)
			r = CLI_EXIT_OK;	/* --help */
		goto out;
	}

	r = http_init(&c.http, url, token, timeout_ms,
	    timeout_ms < MAIN_CONNECT_MS ? timeout_ms : MAIN_CONNECT_MS);
	if (token != NULL)
		explicit_bzero(token, strlen(token));
	if (r == BF_ERR_INVALID) {
		r = cmd_usage_error(NULL, "%s", c.http.errbuf);
		goto out;
	} else if (r != 0) {
		cli_err("cannot set up HTTP: %s", bf_err_str(r));
		r = CLI_EXIT_FAIL;
		goto out;
	}
	r = e->exec(&c, &args);
out:
	fflush(stdout);
	if (ferror(stdout) && r == CLI_EXIT_OK) {
		cli_err("writing to standard output failed");
		r = CLI_EXIT_FAIL;
	}
	http_free(&c.http);
	if (token != NULL)
		explicit_bzero(token, strlen(token));
	free(token);
	return r;
}
