/*
 * fetch.c: outgoing HTTP for bundles (and keys) of peer labs (fetch.h).
 *
 * The URL is a submitter's, so the fetcher is an SSRF oracle unless it
 * refuses to reach what the submitter cannot: the coordinator's own
 * loopback services, the lab's private network, the cloud metadata
 * address. The host is resolved here and every address it has is judged
 * by the classifier (one table per family); curl is then pinned to those
 * addresses (CURLOPT_RESOLVE), and the address it really connects to is
 * judged again in the open-socket callback, so a DNS answer that changes
 * between the two (rebinding) does not help. Every failure, refused or
 * network, reaches the caller as the same text; the reason goes to stderr.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "clock.h"
#include "fetch.h"
#include "parse.h"
#include "resolve.h"

#ifndef BF_VERSION
#define BF_VERSION "0"
#endif

/* What every failed fetch tells the caller: nothing that tells a refused
 * address from a closed port, an open one, or a peer's answer. */
#define FETCH_GENERIC	"could not be fetched (the coordinator's log says why)"
#define FETCH_MAX_PIN	16	/* addresses of one host pinned for curl */

struct cidr {
	int family;
	unsigned char a[16];	/* network order; 4 bytes for AF_INET */
	unsigned int bits;
};

/* The policy in force; pol_busy counts the slots taken. */
static pthread_mutex_t pol_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cidr pol_allow[BF_MAX_PEER_ALLOW];
static size_t pol_nallow;
static int pol_http;
static int pol_max = BF_MAX_FETCHES;
static int pol_busy;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void
curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* --- the classifier --- */

/* IPv4 ranges that are not the public internet (RFC 6890 and kin). */
static const struct v4range {
	uint32_t net;
	unsigned int bits;
	const char *why;
} v4ranges[] = {
	{ 0x00000000, 8, "unspecified (0.0.0.0/8)" },
	{ 0x0a000000, 8, "private (10.0.0.0/8)" },
	{ 0x64400000, 10, "shared address space, CGNAT (100.64.0.0/10)" },
	{ 0x7f000000, 8, "loopback (127.0.0.0/8)" },
	{ 0xa9fe0000, 16, "link-local, cloud metadata (169.254.0.0/16)" },
	{ 0xac100000, 12, "private (172.16.0.0/12)" },
	{ 0xc0000000, 24, "IETF protocol assignments (192.0.0.0/24)" },
	{ 0xc0000200, 24, "documentation (192.0.2.0/24)" },
	{ 0xc0586300, 24, "6to4 relay anycast (192.88.99.0/24)" },
	{ 0xc0a80000, 16, "private (192.168.0.0/16)" },
	{ 0xc6120000, 15, "benchmarking (198.18.0.0/15)" },
	{ 0xc6336400, 24, "documentation (198.51.100.0/24)" },
	{ 0xcb007100, 24, "documentation (203.0.113.0/24)" },
	{ 0xe0000000, 4, "multicast (224.0.0.0/4)" },
	{ 0xf0000000, 4, "reserved, broadcast (240.0.0.0/4)" },
};

/*
 * IPv6 ranges, most specific first. embed >= 0: an IPv4 address sits at
 * that byte and is judged too (refused with why_embedded); why == NULL:
 * the range itself is fine (NAT64 and 6to4 of a public address).
 */
static const struct v6range {
	unsigned char p[16];
	unsigned int bits;
	int embed;
	const char *why;
	const char *why_embedded;
} v6ranges[] = {
	{ { 0 }, 128, -1, "unspecified (::)", NULL },
	{ { [15] = 1 }, 128, -1, "loopback (::1)", NULL },
	{ { 0 }, 96, 12, "IPv4-compatible (::/96)", NULL },
	{ { [8] = 0xff, [9] = 0xff }, 96, 12, "IPv4-translated (::ffff:0:0:0/96)", NULL },
	{ { 0, 0x64, 0xff, 0x9b }, 96, 12, NULL,
	  "NAT64 (64:ff9b::/96) of a non-public IPv4 address" },
	{ { 0, 0x64, 0xff, 0x9b, 0, 1 }, 48, -1, "local-use NAT64 (64:ff9b:1::/48)", NULL },
	{ { 1 }, 64, -1, "discard-only (100::/64)", NULL },
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, -1, "documentation (2001:db8::/32)", NULL },
	{ { 0x20, 0x01 }, 23, -1, "IETF protocol assignments, Teredo (2001::/23)", NULL },
	{ { 0x20, 0x02 }, 16, 2, NULL, "6to4 (2002::/16) of a non-public IPv4 address" },
	{ { 0xfc }, 7, -1, "unique-local (fc00::/7)", NULL },
	{ { 0xfe, 0x80 }, 10, -1, "link-local (fe80::/10)", NULL },
	{ { 0xfe, 0xc0 }, 10, -1, "site-local (fec0::/10)", NULL },
	{ { 0xff }, 8, -1, "multicast (ff00::/8)", NULL },
};

static int
prefix_match(const unsigned char *a, const unsigned char *p, unsigned int bits)
{
	unsigned int full = bits / 8, rest = bits % 8;

	if (memcmp(a, p, full) != 0)
		return 0;
	return rest == 0 || ((a[full] ^ p[full]) & (0xff << (8 - rest)) & 0xff) == 0;
}

static const char *
v4_refused(const unsigned char *a)
{
	uint32_t x = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	size_t i;

	for (i = 0; i < sizeof(v4ranges) / sizeof(v4ranges[0]); i++)
		if ((x ^ v4ranges[i].net) >> (32 - v4ranges[i].bits) == 0)
			return v4ranges[i].why;
	return NULL;
}

static const char *
v6_refused(const unsigned char *a)
{
	const struct v6range *r;
	size_t i;

	for (i = 0; i < sizeof(v6ranges) / sizeof(v6ranges[0]); i++) {
		r = &v6ranges[i];
		if (!prefix_match(a, r->p, r->bits))
			continue;
		if (r->why != NULL)
			return r->why;
		if (r->embed >= 0 && v4_refused(a + r->embed) != NULL)
			return r->why_embedded;
		if (r->p[0] == 0)	/* NAT64 of a public address */
			return NULL;
		break;
	}
	return (a[0] & 0xe0) == 0x20 ? NULL : "not global unicast (outside 2000::/3)";
}

/* Caller holds pol_mu. */
static int
allowed_locked(int family, const unsigned char *a)
{
	size_t i;

	for (i = 0; i < pol_nallow; i++)
		if (pol_allow[i].family == family && prefix_match(a, pol_allow[i].a,
		    pol_allow[i].bits))
			return 1;
	return 0;
}

const char *
fetch_addr_refused(const struct sockaddr *sa, socklen_t len)
{
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct sockaddr_storage ss;
	unsigned char a[16];
	int family, ok;

	if (sa == NULL || len < sizeof(sa_family_t) || len > sizeof(ss))
		return "not an IP address";
	memcpy(&ss, sa, len);
	if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memcpy(a, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		family = AF_INET;
	} else if (ss.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		memcpy(a, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
		family = AF_INET6;
		/* An IPv4-mapped address connects to the IPv4 one: judge that. */
		if (memcmp(a, mapped, 12) == 0) {
			memmove(a, a + 12, 4);
			family = AF_INET;
		}
	} else {
		return "not an IP address";
	}
	pthread_mutex_lock(&pol_mu);
	ok = allowed_locked(family, a);
	pthread_mutex_unlock(&pol_mu);
	if (ok)
		return NULL;
	return family == AF_INET ? v4_refused(a) : v6_refused(a);
}

/* --- the policy --- */

/* One "ADDR[/BITS]" of len bytes at s, with no host bits set. */
static int
cidr_parse(const char *s, size_t len, struct cidr *c, struct bf_diag *d)
{
	char txt[INET6_ADDRSTRLEN + 8], *slash;
	int64_t bits;
	unsigned int max;

	if (len == 0 || len >= sizeof(txt)) {
		bf_diag_set(d, "peer-allow", "\"%.*s\" is not a CIDR (ADDRESS/BITS, e.g. "
		    "127.0.0.0/8 or ::1/128)", (int)(len > 64 ? 64 : len), s);
		return BF_ERR_INVALID;
	}
	memcpy(txt, s, len);
	txt[len] = '\0';
	memset(c, 0, sizeof(*c));
	if ((slash = strchr(txt, '/')) != NULL)
		*slash = '\0';
	if (inet_pton(AF_INET, txt, c->a) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, txt, c->a) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else {
		bf_diag_set(d, "peer-allow", "\"%.*s\": \"%s\" is not an IPv4 or IPv6 address "
		    "(expected ADDRESS/BITS, e.g. 127.0.0.0/8 or ::1/128)", (int)len, s, txt);
		return BF_ERR_INVALID;
	}
	bits = max;
	if (slash != NULL && parse_i64(slash + 1, 0, max, &bits) != 0) {
		bf_diag_set(d, "peer-allow", "\"%.*s\": the prefix length \"%s\" is not in 0..%u",
		    (int)len, s, slash + 1, max);
		return BF_ERR_INVALID;
	}
	c->bits = (unsigned int)bits;
	{
		unsigned char net[16];
		unsigned int i;

		memcpy(net, c->a, sizeof(net));
		for (i = c->bits; i < max; i++)
			net[i / 8] &= (unsigned char)~(0x80 >> (i % 8));
		if (memcmp(net, c->a, max / 8) != 0) {
			char want[INET6_ADDRSTRLEN];

			inet_ntop(c->family, net, want, sizeof(want));
			bf_diag_set(d, "peer-allow", "\"%.*s\" has bits set past the prefix; "
			    "expected %s/%u", (int)len, s, want, c->bits);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

int
fetch_config(const struct fetch_policy *p, struct bf_diag *d)
{
	struct cidr allow[BF_MAX_PEER_ALLOW];
	const char *s, *e;
	size_t n = 0, len;
	int r;

	if (p != NULL && p->allow != NULL) {
		for (s = p->allow;; s = e + 1) {
			while (*s == ' ' || *s == '\t')
				s++;
			if ((e = strchr(s, ',')) == NULL)
				e = s + strlen(s);
			len = (size_t)(e - s);
			while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
				len--;
			if (n == BF_MAX_PEER_ALLOW) {
				bf_diag_set(d, "peer-allow", "more than %d CIDRs", BF_MAX_PEER_ALLOW);
				return BF_ERR_TOOBIG;
			}
			if ((r = cidr_parse(s, len, &allow[n], d)) != 0)
				return r;
			n++;
			if (*e == '\0')
				break;
		}
	}
	if (p != NULL && (p->max_fetches < 0 || p->max_fetches > 1000)) {
		bf_diag_set(d, "max-fetches", "%d is not in 0..1000", p->max_fetches);
		return BF_ERR_RANGE;
	}
	pthread_mutex_lock(&pol_mu);
	memcpy(pol_allow, allow, n * sizeof(allow[0]));
	pol_nallow = n;
	pol_http = p != NULL && p->allow_http;
	pol_max = p != NULL && p->max_fetches > 0 ? p->max_fetches : BF_MAX_FETCHES;
	pthread_mutex_unlock(&pol_mu);
	return 0;
}

int
fetch_slot_take(void)
{
	int r;

	pthread_mutex_lock(&pol_mu);
	r = pol_busy < pol_max ? (pol_busy++, 0) : BF_ERR_STATE;
	pthread_mutex_unlock(&pol_mu);
	return r;
}

void
fetch_slot_give(void)
{
	pthread_mutex_lock(&pol_mu);
	if (pol_busy > 0)
		pol_busy--;
	pthread_mutex_unlock(&pol_mu);
}

/* --- before connecting --- */

static const char *
addr_text(const struct sockaddr *sa, char *buf, size_t bufsz)
{
	const void *a = sa->sa_family == AF_INET ?
	    (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
	    (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (inet_ntop(sa->sa_family, a, buf, (socklen_t)bufsz) == NULL)
		snprintf(buf, bufsz, "?");
	return buf;
}

/* The name's lookup, within BF_FETCH_RESOLVE_S (resolve.h): 0 and *aip
 * (the caller frees it), or BF_ERR_INVALID with d set. */
static int
fetch_resolve(const char *host, const char *port, struct addrinfo **aip, struct bf_diag *d)
{
	struct addrinfo hints;
	int r, gai;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	r = bf_resolve(host, port, &hints, BF_FETCH_RESOLVE_S * 1000, aip, &gai);
	switch (r) {
	case 0:
		return 0;
	case BF_ERR_TIMEOUT:
		bf_diag_set(d, "url", "%s does not resolve within %d s", host, BF_FETCH_RESOLVE_S);
		break;
	case BF_ERR_NOTFOUND:
		bf_diag_set(d, "url", "%s does not resolve: %s", host, gai_strerror(gai));
		break;
	case BF_ERR_STATE:
		bf_diag_set(d, "url", "%s: %d lookups are already waiting for their nameserver",
		    host, BF_MAX_RESOLVING);
		break;
	case BF_ERR_INVALID:
		bf_diag_set(d, "url", "the host or port is too long");
		break;
	default:
		return r;
	}
	return BF_ERR_INVALID;
}

/* A host curl and getaddrinfo read alike: ASCII name or address only (an
 * IDN would be converted by curl after our lookup, escaping the pin). */
static int
host_chars_ok(const char *h)
{
	for (; *h != '\0'; h++)
		if (!((*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') ||
		    (*h >= '0' && *h <= '9') || *h == '.' || *h == '-' || *h == '_' ||
		    *h == ':' || *h == '[' || *h == ']'))
			return 0;
	return 1;
}

/*
 * Parse and judge url; on success *up is the parsed URL for CURLOPT_CURLU
 * and *pinp the CURLOPT_RESOLVE list (NULL for an address literal), both
 * the caller's; *httpp whether plain http is allowed.
 */
static int
fetch_prepare(const char *url, CURLU **up, struct curl_slist **pinp, int *httpp,
    struct bf_diag *d)
{
	struct addrinfo *ai = NULL, *p;
	struct curl_slist *pin = NULL;
	unsigned char lit[16];
	char *scheme = NULL, *host = NULL, *port = NULL, *extra = NULL, bare[256];
	char line[512], txt[INET6_ADDRSTRLEN];
	const char *why;
	CURLU *u = NULL;
	CURLUcode uc;
	int64_t pn;
	size_t off, npin = 0, hl;
	int r, http;

	*up = NULL;
	*pinp = NULL;
	pthread_mutex_lock(&pol_mu);
	http = pol_http;
	pthread_mutex_unlock(&pol_mu);
	*httpp = http;
	if (url == NULL || strlen(url) > FETCH_MAX_URL) {
		bf_diag_set(d, "url", "expected a URL of at most %d bytes", FETCH_MAX_URL);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((u = curl_url()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((uc = curl_url_set(u, CURLUPART_URL, url, 0)) != CURLUE_OK) {
		bf_diag_set(d, "url", "not a URL curl accepts (error %d)", (int)uc);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    !(strcmp(scheme, "https") == 0 || (http && strcmp(scheme, "http") == 0))) {
		bf_diag_set(d, "url", "scheme \"%s\" refused: %s", scheme ? scheme : "",
		    http ? "expected http or https" : "expected https (plain http needs "
		    "--peer-allow-http)");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (curl_url_get(u, CURLUPART_USER, &extra, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PASSWORD, &extra, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_OPTIONS, &extra, 0) == CURLUE_OK) {
		bf_diag_set(d, "url", "credentials in a URL are refused");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (curl_url_get(u, CURLUPART_ZONEID, &extra, 0) == CURLUE_OK) {
		bf_diag_set(d, "url", "a scoped IPv6 address is refused");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || host[0] == '\0' ||
	    (hl = strlen(host)) >= sizeof(bare) || !host_chars_ok(host)) {
		bf_diag_set(d, "url", "the host \"%.64s\" is not an ASCII name or an address",
		    host ? host : "");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
	    parse_i64(port, 1, 65535, &pn) != 0) {
		bf_diag_set(d, "url", "no valid port");
		r = BF_ERR_INVALID;
		goto out;
	}
	/* Below 1024 live ssh, smtp, ldap and the rest: a web peer is on 80,
	 * 443 or an unprivileged port, and a fetch elsewhere is only a probe. */
	if (pn < 1024 && pn != 80 && pn != 443) {
		bf_diag_set(d, "url", "port %lld refused: below 1024 only 80 and 443",
		    (long long)pn);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (host[0] == '[') {
		memcpy(bare, host + 1, hl - 2);
		bare[hl - 2] = '\0';
	} else {
		memcpy(bare, host, hl + 1);
	}
	if ((r = fetch_resolve(bare, port, &ai, d)) != 0)
		goto out;
	off = (size_t)snprintf(line, sizeof(line), "%s:%s:", bare, port);
	/* Every address must pass: a name that also points inside is refused. */
	for (p = ai; p != NULL; p = p->ai_next) {
		if ((why = fetch_addr_refused(p->ai_addr, p->ai_addrlen)) != NULL) {
			addr_text(p->ai_addr, txt, sizeof(txt));
			if (strcmp(txt, bare) == 0)
				bf_diag_set(d, "url", "%s is refused: %s", bare, why);
			else
				bf_diag_set(d, "url", "%s is %s, refused: %s", bare, txt, why);
			r = BF_ERR_INVALID;
			goto out;
		}
		if (npin < FETCH_MAX_PIN && off < sizeof(line)) {
			addr_text(p->ai_addr, txt, sizeof(txt));
			off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s%s%s",
			    npin > 0 ? "," : "", p->ai_family == AF_INET6 ? "[" : "", txt,
			    p->ai_family == AF_INET6 ? "]" : "");
			npin++;
		}
	}
	if (off >= sizeof(line)) {
		bf_diag_set(d, "url", "%s has too many addresses", bare);
		r = BF_ERR_INVALID;
		goto out;
	}
	/* A literal is connected to as it is; a name is pinned to what was
	 * judged, so curl resolves nothing itself. */
	if (inet_pton(AF_INET, bare, lit) != 1 && inet_pton(AF_INET6, bare, lit) != 1 &&
	    (pin = curl_slist_append(NULL, line)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	*up = u;
	u = NULL;
	*pinp = pin;
	pin = NULL;
	r = 0;
out:
	if (ai != NULL)
		freeaddrinfo(ai);
	curl_slist_free_all(pin);
	curl_url_cleanup(u);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(extra);
	return r;
}

int
fetch_check_url(const char *url, struct bf_diag *d)
{
	struct curl_slist *pin = NULL;
	CURLU *u = NULL;
	int r, http;

	pthread_once(&curl_once, curl_init_once);
	r = fetch_prepare(url, &u, &pin, &http, d);
	curl_slist_free_all(pin);
	curl_url_cleanup(u);
	return r;
}

/* --- the transfer --- */

struct fetch_ctx {
	struct buf *out;
	int over;		/* the body passed the cap */
	char refused[192];	/* a connect the open-socket callback refused */
};

/* Keeps at most the buffer's cap; past it, returning short makes curl stop. */
static size_t
fetch_write(char *p, size_t size, size_t n, void *arg)
{
	struct fetch_ctx *fc = arg;
	size_t len = size * n;

	if (buf_append(fc->out, p, len) != 0) {
		fc->over = 1;
		return 0;
	}
	return len;
}

curl_socket_t
fetch_opensocket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct fetch_ctx *fc = arg;
	const char *why;
	char txt[INET6_ADDRSTRLEN];

	why = purpose != CURLSOCKTYPE_IPCXN ? "not an outgoing connection" :
	    fetch_addr_refused(&a->addr, a->addrlen);
	if (why != NULL) {
		if (fc != NULL)
			snprintf(fc->refused, sizeof(fc->refused), "connect to %s refused: %s",
			    a->family == AF_INET || a->family == AF_INET6 ?
			    addr_text(&a->addr, txt, sizeof(txt)) : "?", why);
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* s cut to max bytes with anything unprintable as '?', for one log line. */
static const char *
printable(const char *s, size_t len, size_t max, char *buf, size_t bufsz)
{
	size_t i, n = len < max ? len : max;

	if (n >= bufsz)
		n = bufsz - 1;
	for (i = 0; i < n; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[n] = '\0';
	return buf;
}

void
fetch_log_failure(const char *url, const char *why)
{
	char ubuf[201], wbuf[BF_DIAG_MSG];

	if (strncmp(why, "url: ", 5) == 0)
		why += 5;
	fprintf(stderr, "benchfleetd: fetch %s failed: %s\n", url != NULL ?
	    printable(url, strlen(url), 200, ubuf, sizeof(ubuf)) : "(null)",
	    printable(why, strlen(why), sizeof(wbuf) - 1, wbuf, sizeof(wbuf)));
}

int
fetch_url(const char *url, size_t max, struct buf *out, struct bf_diag *d)
{
	struct fetch_ctx fc;
	struct curl_slist *hdr = NULL, *pin = NULL;
	struct bf_diag why;
	char errbuf[CURL_ERROR_SIZE], ubuf[201], bbuf[81];
	CURLU *u = NULL;
	CURL *c = NULL;
	CURLcode cc;
	long status = 0;
	int r, http;

	pthread_once(&curl_once, curl_init_once);
	buf_free(out);
	buf_init(out, max);
	memset(&fc, 0, sizeof(fc));
	fc.out = out;
	errbuf[0] = '\0';
	bf_diag_clear(&why);
	if ((r = fetch_prepare(url, &u, &pin, &http, &why)) != 0)
		goto out;
	if ((c = curl_easy_init()) == NULL ||
	    (hdr = curl_slist_append(NULL, "X-Benchfleet-Peer: " BF_VERSION)) == NULL ||
	    (hdr = curl_slist_append(hdr, "Accept: application/json")) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_CURLU, u);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, http ? "http,https" : "https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, http ? "http,https" : "https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTPS | (http ? CURLPROTO_HTTP : 0)));
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS,
	    (long)(CURLPROTO_HTTPS | (http ? CURLPROTO_HTTP : 0)));
#endif
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 0L);
	/* No proxy from the environment: it would connect for us, unjudged. */
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_RESOLVE, pin);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, fetch_opensocket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &fc);
	curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)BF_FETCH_CONNECT_S);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)BF_FETCH_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, (long)BF_FETCH_MIN_RATE);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)BF_FETCH_MIN_RATE_S);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fetch_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &fc);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (fc.refused[0] != '\0') {
		bf_diag_set(&why, "url", "%s", fc.refused);
		r = BF_ERR_INVALID;
	} else if (fc.over || cc == CURLE_FILESIZE_EXCEEDED) {
		bf_diag_set(&why, "url", "the body is larger than %zu bytes", max);
		r = BF_ERR_TOOBIG;
	} else if (cc != CURLE_OK) {
		bf_diag_set(&why, "url", "%s%s%s", curl_easy_strerror(cc),
		    errbuf[0] ? ": " : "", errbuf);
		r = cc == CURLE_OPERATION_TIMEDOUT ? BF_ERR_TIMEOUT : BF_ERR_IO;
	} else if (status != 200) {
		bf_diag_set(&why, "url", "the peer answered HTTP %ld%s, body \"%s\"", status,
		    status == 404 ? " (no such job, or not published)" : "",
		    printable(out->data ? out->data : "", out->len, 80, bbuf, sizeof(bbuf)));
		r = BF_ERR_PROTO;
	} else {
		fprintf(stderr, "benchfleetd: fetched %zu bytes from %s\n", out->len,
		    printable(url, strlen(url), 200, ubuf, sizeof(ubuf)));
		r = 0;
	}
out:
	if (r != 0) {
		fetch_log_failure(url, why.msg[0] != '\0' ? why.msg : bf_err_str(r));
		bf_diag_set(d, "url", FETCH_GENERIC);
		buf_free(out);
	}
	curl_slist_free_all(hdr);
	if (c != NULL)
		curl_easy_cleanup(c);
	curl_slist_free_all(pin);
	curl_url_cleanup(u);
	return r;
}

/* --- the node pre-scan --- */

size_t
fetch_json_nodes(const char *s, size_t len, size_t limit)
{
	size_t i, n = 1;
	int in_str = 0;

	for (i = 0; i < len; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = 0;
			continue;
		}
		switch (s[i]) {
		case '"':
			in_str = 1;
			break;
		case '{':
		case '[':
		case ',':
			if (++n > limit)
				return limit + 1;
			break;
		}
	}
	return n;
}
