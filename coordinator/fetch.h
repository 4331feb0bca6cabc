/*
 * fetch.h: the coordinator's only outgoing HTTP client (bundles and keys of
 * peer labs), hardened against SSRF: the URL comes from a submitter, so it
 * must not reach what the coordinator can reach and the submitter cannot.
 *
 * A fetch resolves the host itself and refuses every address that is not
 * public (loopback, unspecified, link-local, private, CGNAT, unique-local,
 * multicast, broadcast, documentation and benchmarking ranges, and IPv6
 * forms embedding any of those) unless the policy's allow list holds it;
 * pins curl to the addresses it checked and checks the connected address
 * again as curl opens the socket. https only unless the policy allows
 * http; no redirects; no proxies; ports below 1024 other than 80 and 443
 * are refused. The caller gets one generic error; the reason goes to the
 * daemon's log (stderr).
 */
#ifndef BF_FETCH_H
#define BF_FETCH_H

#include <stddef.h>
#include <sys/socket.h>
#include <curl/curl.h>

#include "buf.h"
#include "err.h"

#define FETCH_MAX_URL		2048

struct fetch_policy {
	const char *allow;	/* "CIDR[,CIDR...]" allowed despite the classifier, or NULL */
	int allow_http;		/* plain http:// too (tests, a lab's private network) */
	int max_fetches;	/* at once; 0 means BF_MAX_FETCHES */
};

/*
 * Install p, made once at start (and by unit tests at will). A malformed
 * CIDR is BF_ERR_INVALID with d naming it and what was expected; the
 * policy in force is then left as it was. p == NULL restores the default
 * (nothing allowed, https only, BF_MAX_FETCHES).
 */
int fetch_config(const struct fetch_policy *p, struct bf_diag *d);

/*
 * Why the policy refuses to connect to sa ("loopback", "private
 * (10.0.0.0/8)", ...): a static string; NULL when it may. An address the
 * allow list holds is never refused. IPv4-mapped IPv6 is judged as IPv4.
 */
const char *fetch_addr_refused(const struct sockaddr *sa, socklen_t len);

/*
 * Everything fetch_url checks before connecting: the URL's form, scheme,
 * credentials, port, and every address its host resolves to. 0 when it
 * may be fetched; else BF_ERR_INVALID with the reason in d (detail meant
 * for the log, not for the caller: it tells addresses apart).
 */
int fetch_check_url(const char *url, struct bf_diag *d);

/*
 * A slot among the policy's max_fetches: 0, or BF_ERR_STATE when all are
 * taken (the caller answers 503). Each 0 is paired with fetch_slot_give.
 */
int fetch_slot_take(void);
void fetch_slot_give(void);

/*
 * GET url into out (re-initialised, cap max; freed on failure), within
 * BF_FETCH_TIMEOUT_S and the low-speed limit; a body over max is cut off
 * as it arrives, never buffered whole. Takes no slot (see repro_fetch).
 * On any failure: BF_ERR_INVALID (the URL or its addresses are refused),
 * BF_ERR_TOOBIG, BF_ERR_TIMEOUT, BF_ERR_PROTO (not HTTP 200) or BF_ERR_IO,
 * with the reason logged to stderr and d holding only the generic
 * "url: could not be fetched" text, the same for every failure.
 */
int fetch_url(const char *url, size_t max, struct buf *out, struct bf_diag *d);

/* Log "benchfleetd: fetch URL failed: why" to stderr, both cut and with
 * anything unprintable as '?': the reason a caller was not told. */
void fetch_log_failure(const char *url, const char *why);

/*
 * An upper bound on the values of the JSON text (containers + commas + 1,
 * outside strings), for refusing a tree too large to build before jansson
 * builds it. Counting stops past limit (returns limit + 1).
 */
size_t fetch_json_nodes(const char *text, size_t len, size_t limit);

/* The CURLOPT_OPENSOCKETFUNCTION of fetch_url (exported for the unit
 * test): CURL_SOCKET_BAD for a refused address, else a new socket. arg is
 * NULL or fetch_url's context. */
curl_socket_t fetch_opensocket(void *arg, curlsocktype purpose, struct curl_sockaddr *a);

#endif
