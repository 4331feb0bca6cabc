/*
 * caps.h: every cap on untrusted input, by name. Change them here only.
 */
#ifndef BF_CAPS_H
#define BF_CAPS_H

#define BF_MAX_API_BODY		(1024 * 1024)	/* HTTP request body */
#define BF_MAX_RECIPE_FILE	(256 * 1024)	/* one recipe document */
#define BF_MAX_JSON_DEPTH	32		/* nesting of any JSON we parse */
#define BF_MAX_NAME		64		/* recipe, machine, param, axis names */
#define BF_MAX_STR		4096		/* a string parameter value */
#define BF_MAX_ARGV		256		/* elements of a command */
#define BF_MAX_ARG		8192		/* one rendered argv element */
#define BF_MAX_PARAMS		64		/* parameters of a recipe */
#define BF_MAX_METRICS		32		/* metrics of a recipe */
#define BF_MAX_AXES		16		/* axes of a matrix */
#define BF_MAX_AXIS_VALUES	64		/* values on one axis */
#define BF_MAX_CELLS		4096		/* cells of an expanded matrix */
#define BF_MAX_ITERATIONS	10000
#define BF_MAX_BOOTS		100
#define BF_MAX_LOG_LINE		4096		/* one log line; longer is cut */
#define BF_MAX_AGENT_LINE	(64 * 1024)	/* one JSON line from the agent */
#define BF_MAX_STEP		(256 * 1024)	/* step JSON sent to the agent */
#define BF_MAX_AGENT_OUTPUT	(16 * 1024 * 1024) /* one step's JSON lines */
#define BF_MAX_CAPTURE		(4 * 1024 * 1024) /* workload stdout kept by the agent */
#define BF_MAX_REGEX		512		/* a metric's extraction regex */
#define BF_MAX_HOST		253
#define BF_MAX_BUNDLE		(64 * 1024 * 1024) /* a result bundle posted to the API */
/* A bundle fetched by URL: the peer is anyone a submitter names, so far
 * less than a posted one, and its JSON tree is capped by node count
 * (jansson spends ~80 bytes per node: 256 Ki nodes are ~20 MB). */
#define BF_MAX_URL_BUNDLE	(4 * 1024 * 1024)
#define BF_MAX_URL_BUNDLE_NODES	(256 * 1024)
#define BF_MAX_FETCHES		2		/* URL fetches at once; more get 503 */
#define BF_FETCH_TIMEOUT_S	30		/* one fetch, start to end */
#define BF_FETCH_CONNECT_S	5		/* its TCP (and TLS) connect */
#define BF_FETCH_MIN_RATE	1024		/* bytes/s, below which for ... */
#define BF_FETCH_MIN_RATE_S	10		/* ... this long a fetch is dropped */
#define BF_MAX_PEER_ALLOW	64		/* CIDRs of --peer-allow */
#define BF_MAX_API_RESPONSE	(64 * 1024 * 1024) /* a response the CLI reads (reports, bundles) */

#endif
