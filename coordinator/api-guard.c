/*
 * api-guard.c: the checks every request passes once its headers are in,
 * before any route, token or body: the framing (one way to find the end of
 * the body, so that no proxy in front of us can disagree on it), the Host
 * (DNS rebinding: a page of evil.example resolved to 127.0.0.1 still says
 * Host: evil.example), and for the API the Origin, Sec-Fetch-Site and
 * Content-Type (a browser page of another origin may send a "simple"
 * POST, text/plain or a form, without asking; it can never send
 * application/json without a preflight we do not answer).
 * Each returns 1 to go on, or 0 with rs filled.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api-int.h"
#include "parse.h"

struct guard_framing {
	int n_cl;
	int n_te;
	int te_bad;
	int n_host;
	char blank_name[64];	/* a header name with a blank in it, or "" */
};

static enum MHD_Result
guard_count(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct guard_framing *f = cls;
	const char *v = value != NULL ? value : "";
	size_t n;

	(void)kind;
	/* "Transfer-Encoding : chunked" is no header to libmicrohttpd, which
	 * keeps the blank in the name, but a proxy that trims it reads a
	 * chunked body where we read Content-Length: RFC 9112 says 400 */
	if (f->blank_name[0] == '\0' && strpbrk(key, " \t") != NULL)
		snprintf(f->blank_name, sizeof(f->blank_name), "%s", key);
	if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0)
		f->n_host++;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
		f->n_cl++;
	else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->n_te++;
		/* "chunked" alone; MHD trims the value's outer blanks */
		while (*v == ' ' || *v == '\t')
			v++;
		n = strlen(v);
		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (n != 7 || strncasecmp(v, "chunked", 7) != 0)
			f->te_bad = 1;
	}
	return MHD_YES;
}

int
api_guard_framing(struct MHD_Connection *conn, struct api_resp *rs)
{
	struct guard_framing f = { 0, 0, 0, 0, "" };
	size_t i;

	MHD_get_connection_values(conn, MHD_HEADER_KIND, guard_count, &f);
	if (f.blank_name[0] != '\0') {
		for (i = 0; f.blank_name[i] != '\0'; i++)
			if ((unsigned char)f.blank_name[i] < 0x20 ||
			    (unsigned char)f.blank_name[i] > 0x7e)
				f.blank_name[i] = '?';
		api_error(rs, MHD_HTTP_BAD_REQUEST, f.blank_name, "header name \"%s\" holds "
		    "a blank (none may come before the colon)", f.blank_name);
		return 0;
	}
	if (f.n_host > 1) {
		/* which one a proxy in front routed by is anyone's guess */
		api_error(rs, MHD_HTTP_BAD_REQUEST, "Host", "Host is given %d times; send it "
		    "once", f.n_host);
		return 0;
	}
	if (f.n_cl > 0 && f.n_te > 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "Transfer-Encoding", "a request may not "
		    "carry both Content-Length and Transfer-Encoding");
		return 0;
	}
	if (f.n_cl > 1) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "Content-Length", "Content-Length is given "
		    "%d times; send it once", f.n_cl);
		return 0;
	}
	if (f.n_te > 1 || f.te_bad) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "Transfer-Encoding", "Transfer-Encoding "
		    "must be \"chunked\", once");
		return 0;
	}
	return 1;
}

/* Split "host[:port]" or "[v6][:port]" into host (brackets kept) and port
 * (0 when absent). 0 on success. */
static int
guard_split_host(const char *hp, char *host, size_t hostsz, int *port)
{
	const char *colon;
	size_t hlen;
	int64_t p;

	*port = 0;
	if (hp[0] == '[') {
		const char *rb = strchr(hp, ']');

		if (rb == NULL)
			return -1;
		hlen = (size_t)(rb - hp) + 1;
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] != '\0' && colon == NULL)
			return -1;
	} else {
		colon = strchr(hp, ':');
		hlen = colon != NULL ? (size_t)(colon - hp) : strlen(hp);
	}
	if (hlen == 0 || hlen >= hostsz)
		return -1;
	memcpy(host, hp, hlen);
	host[hlen] = '\0';
	if (colon != NULL) {
		if (parse_i64(colon + 1, 1, 65535, &p) != 0)
			return -1;
		*port = (int)p;
	}
	return 0;
}

/* An IP literal: a.b.c.d or [v6]. */
static int
guard_is_ip_literal(const char *host)
{
	struct in6_addr a6;
	struct in_addr a4;
	char v6[INET6_ADDRSTRLEN + 1];
	size_t n = strlen(host);

	if (inet_pton(AF_INET, host, &a4) == 1)
		return 1;
	if (n < 3 || host[0] != '[' || host[n - 1] != ']' || n - 2 >= sizeof(v6))
		return 0;
	memcpy(v6, host + 1, n - 2);
	v6[n - 2] = '\0';
	return inet_pton(AF_INET6, v6, &a6) == 1;
}

int
api_guard_host(struct api *a, struct MHD_Connection *conn, const char *version,
    struct api_resp *rs)
{
	static const char *const builtin[] = { "localhost", "127.0.0.1", "[::1]" };
	const char *hp;
	char host[BF_MAX_HOST + 3];
	size_t i;
	int port;

	hp = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (hp == NULL) {
		/* HTTP/1.0 may omit it; a browser never does */
		if (version != NULL && strcmp(version, MHD_HTTP_VERSION_1_0) == 0)
			return 1;
		api_error(rs, MHD_HTTP_BAD_REQUEST, "Host", "the Host header is required");
		return 0;
	}
	if (guard_split_host(hp, host, sizeof(host), &port) != 0)
		goto refuse;
	/* ours: the listen address, the loopback names, on our port */
	if (port == 0 || port == a->port) {
		if (strcasecmp(host, a->listen_host) == 0)
			return 1;
		for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
			if (strcasecmp(host, builtin[i]) == 0)
				return 1;
		/* a wildcard listener answers on any of the host's addresses;
		 * rebinding always brings a name, never an address */
		if (a->listen_any && guard_is_ip_literal(host))
			return 1;
	}
	for (i = 0; i < a->nallow_hosts; i++)
		if (strcasecmp(host, a->allow_hosts[i].name) == 0 &&
		    (a->allow_hosts[i].port == 0 || a->allow_hosts[i].port == port))
			return 1;
refuse:
	api_error(rs, MHD_HTTP_MISDIRECTED_REQUEST, "Host", "Host \"%.*s\" is not this "
	    "coordinator's address (%s, localhost, 127.0.0.1 or [::1] on port %d); list "
	    "the names it is reached by with --allow-host", BF_MAX_HOST, hp, a->listen_host,
	    a->port);
	return 0;
}

int
api_guard_origin(struct api *a, struct MHD_Connection *conn, struct api_resp *rs)
{
	const char *origin, *site, *hp, *rest;

	site = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Sec-Fetch-Site");
	if (site != NULL && strcasecmp(site, "cross-site") == 0) {
		api_error(rs, MHD_HTTP_FORBIDDEN, "Sec-Fetch-Site", "cross-site requests are "
		    "refused: use the dashboard this coordinator serves, or a client that is "
		    "not a browser");
		return 0;
	}
	origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN);
	if (origin == NULL)
		return 1;		/* curl, the CLI, same-origin GETs */
	hp = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	/* our own origin is scheme://Host; behind a TLS proxy on loopback the
	 * browser's scheme is https while ours is http */
	if (hp != NULL) {
		if (strncasecmp(origin, "https://", 8) == 0 && (a->tls || a->listen_loopback))
			rest = origin + 8;
		else if (strncasecmp(origin, "http://", 7) == 0 && !a->tls)
			rest = origin + 7;
		else
			rest = NULL;
		if (rest != NULL && strcasecmp(rest, hp) == 0)
			return 1;
	}
	api_error(rs, MHD_HTTP_FORBIDDEN, "Origin", "requests from the page of another "
	    "origin (%.200s) are refused; this coordinator's origin is %s://%.*s", origin,
	    a->tls ? "https" : "http", BF_MAX_HOST, hp != NULL ? hp : "");
	return 0;
}

int
api_guard_ctype(struct MHD_Connection *conn, const char *method, struct api_resp *rs)
{
	const char *ct, *p;

	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return 1;
	ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_TYPE);
	if (ct != NULL) {
		p = ct;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, "application/json", 16) == 0) {
			p += 16;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == '\0' || *p == ';')
				return 1;
		}
	}
	api_error(rs, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "Content-Type", "%s needs "
	    "Content-Type: application/json%s%.100s%s (also with an empty body)", method,
	    ct != NULL ? ", not \"" : "", ct != NULL ? ct : "", ct != NULL ? "\"" : "");
	return 0;
}

int
api_guard_hosts_parse(const char *list, struct api_allow_host **out, size_t *np,
    struct bf_diag *d)
{
	struct api_allow_host *v = NULL;
	const char *p = list, *e;
	size_t n = 0, len;
	char item[BF_MAX_HOST + 8];
	int r, port;

	*out = NULL;
	*np = 0;
	if (list == NULL || *list == '\0') {
		r = 0;
		goto out;
	}
	for (;;) {
		struct api_allow_host *nv;
		const char *c;

		e = strchr(p, ',');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		while (len > 0 && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == 0 || len >= sizeof(item)) {
			bf_diag_set(d, "allow-host", "entry %zu: %s", n + 1, len == 0 ?
			    "is empty" : "is longer than a host name");
			r = BF_ERR_INVALID;
			goto out;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		for (c = item; *c != '\0'; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			    (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == ':' ||
			    *c == '[' || *c == ']'))
				break;
		if (*c != '\0' || n >= BF_MAX_ALLOW_HOSTS) {
			bf_diag_set(d, "allow-host", "\"%s\": %s", item, *c != '\0' ?
			    "is not a host name or HOST:PORT" : "too many names");
			r = BF_ERR_INVALID;
			goto out;
		}
		if ((nv = realloc(v, (n + 1) * sizeof(*v))) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		v = nv;
		if (guard_split_host(item, v[n].name, sizeof(v[n].name), &port) != 0) {
			bf_diag_set(d, "allow-host", "\"%s\" is not a host name or HOST:PORT",
			    item);
			r = BF_ERR_INVALID;
			goto out;
		}
		v[n].port = port;
		n++;
		if (e == NULL)
			break;
		p = e + 1;
	}
	*out = v;
	*np = n;
	v = NULL;
	r = 0;
out:
	free(v);
	return r;
}
