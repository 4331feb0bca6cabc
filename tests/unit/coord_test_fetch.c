/*
 * coord_test_fetch: the bundle fetcher's SSRF guard (fetch.c): every
 * spelling of a loopback, private, link-local, ... address refused, public
 * ones allowed, --peer-allow CIDRs honoured and malformed ones refused,
 * the open-socket check, the fetch slots, the node pre-scan, and one
 * generic error whatever the reason. Nothing here leaves the machine:
 * refused addresses are never connected to, public ones only judged.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "fetch.h"
#include "t.h"

/* URLs whose host is not public, each with a word of the reason. */
static const struct {
	const char *url;
	const char *why;
} refused[] = {
	{ "https://127.0.0.1/", "loopback" },
	{ "https://127.0.0.1:8443/x", "loopback" },
	{ "https://127.1/", "loopback" },
	{ "https://127.0.1/", "loopback" },
	{ "https://0x7f000001/", "loopback" },
	{ "https://0x7f.0.0.1/", "loopback" },
	{ "https://2130706433/", "loopback" },
	{ "https://017700000001/", "loopback" },
	{ "https://0177.0.0.1/", "loopback" },
	{ "https://127.255.255.254/", "loopback" },
	{ "https://localhost/", "loopback" },
	{ "https://LOCALHOST:8443/", "loopback" },
	{ "https://[::1]/", "loopback" },
	{ "https://[0:0:0:0:0:0:0:1]/", "loopback" },
	{ "https://[0000:0000:0000:0000:0000:0000:0000:0001]/", "loopback" },
	{ "https://[::ffff:127.0.0.1]/", "loopback" },
	{ "https://[::ffff:7f00:1]/", "loopback" },
	{ "https://0.0.0.0/", "unspecified" },
	{ "https://0/", "unspecified" },
	{ "https://[::]/", "unspecified" },
	{ "https://[::ffff:0.0.0.0]/", "unspecified" },
	{ "https://10.0.0.1/", "private" },
	{ "https://10.255.255.255/", "private" },
	{ "https://012.0.0.1/", "private" },
	{ "https://167772161/", "private" },
	{ "https://172.16.0.1/", "private" },
	{ "https://172.31.255.255/", "private" },
	{ "https://192.168.0.1/", "private" },
	{ "https://[::ffff:192.168.0.1]/", "private" },
	{ "https://169.254.169.254/", "link-local" },
	{ "https://0xa9fea9fe/", "link-local" },
	{ "https://0251.0376.0251.0376/", "link-local" },
	{ "https://[::ffff:169.254.169.254]/", "link-local" },
	{ "https://[::ffff:a9fe:a9fe]/", "link-local" },
	{ "https://100.64.0.1/", "CGNAT" },
	{ "https://100.127.255.255/", "CGNAT" },
	{ "https://224.0.0.1/", "multicast" },
	{ "https://239.255.255.250/", "multicast" },
	{ "https://255.255.255.255/", "broadcast" },
	{ "https://240.0.0.1/", "reserved" },
	{ "https://192.0.2.1/", "documentation" },
	{ "https://198.18.0.1/", "benchmarking" },
	{ "https://[fe80::1]/", "link-local" },
	{ "https://[febf::1]/", "link-local" },
	{ "https://[fec0::1]/", "site-local" },
	{ "https://[fc00::1]/", "unique-local" },
	{ "https://[fd12:3456:789a::1]/", "unique-local" },
	{ "https://[ff02::1]/", "multicast" },
	{ "https://[ff05::2]/", "multicast" },
	{ "https://[::127.0.0.1]/", "IPv4-compatible" },
	{ "https://[::8.8.8.8]/", "IPv4-compatible" },
	{ "https://[::ffff:0:127.0.0.1]/", "IPv4-translated" },
	{ "https://[64:ff9b::127.0.0.1]/", "NAT64" },
	{ "https://[64:ff9b::a00:1]/", "NAT64" },
	{ "https://[64:ff9b:1::1]/", "NAT64" },
	{ "https://[2002:7f00:1::1]/", "6to4" },
	{ "https://[2002:a9fe:a9fe::]/", "6to4" },
	{ "https://[2001::1]/", "Teredo" },
	{ "https://[2001:db8::1]/", "documentation" },
	{ "https://[100::1]/", "discard" },
	{ "https://[4000::1]/", "global unicast" },
	/* schemes, credentials, ports, forms */
	{ "http://8.8.8.8/", "scheme" },
	{ "HTTP://8.8.8.8/", "scheme" },
	{ "file:///etc/passwd", "scheme" },
	{ "gopher://8.8.8.8:70/_x", "scheme" },
	{ "ftp://8.8.8.8/", "scheme" },
	{ "dict://8.8.8.8:11211/stat", "scheme" },
	{ "ldap://8.8.8.8/", "scheme" },
	{ "https://user:pw@8.8.8.8/", "credentials" },
	{ "https://user@8.8.8.8/", "credentials" },
	{ "https://8.8.8.8:22/", "port 22" },
	{ "https://8.8.8.8:25/", "port 25" },
	{ "https://8.8.8.8:0/", "port" },
	{ "https://8.8.8.8:65536/", "URL" },
	{ "https://[fe80::1%25eth0]/", "scoped" },
	{ "https://ex\xc3\xa4mple.org/", "ASCII" },
	{ "https://", "URL" },
	{ "https://:8443/", "URL" },
	{ "8.8.8.8", "URL" },
	{ "", "URL" },
};

/* Public addresses: allowed by the policy (judged only, never fetched). */
static const char *const allowed[] = {
	"https://8.8.8.8/",
	"https://8.8.8.8:443/",
	"https://8.8.8.8:80/",
	"https://8.8.8.8:8443/bundle",
	"https://1.1.1.1/api/v1/jobs/3/bundle",
	"https://134744072/",		/* 8.8.8.8 */
	"https://0x08080808/",
	"https://11.0.0.1/",
	"https://126.255.255.255/",
	"https://128.0.0.1/",
	"https://172.15.255.255/",
	"https://172.32.0.1/",
	"https://100.63.255.255/",
	"https://100.128.0.1/",
	"https://169.253.255.255/",
	"https://192.167.255.255/",
	"https://192.169.0.1/",
	"https://223.255.255.255/",
	"https://[2606:4700:4700::1111]/",
	"https://[2a00:1450:4001::1]:8443/",
	"https://[::ffff:8.8.8.8]/",
	"https://[64:ff9b::808:808]/",
	"https://[2002:808:808::1]/",
};

static void
test_table(void)
{
	struct bf_diag d;
	size_t i;

	T_EQ_INT(fetch_config(NULL, &d), 0);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		bf_diag_clear(&d);
		if (fetch_check_url(refused[i].url, &d) != BF_ERR_INVALID) {
			T_CHECK(!"refused URL was allowed");
			fprintf(stderr, "  url %s\n", refused[i].url);
			continue;
		}
		T_CONTAINS(d.msg, refused[i].why);
	}
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		bf_diag_clear(&d);
		if (fetch_check_url(allowed[i], &d) != 0) {
			T_CHECK(!"public URL was refused");
			fprintf(stderr, "  url %s: %s\n", allowed[i], d.msg);
		}
	}
}

static socklen_t
sa4(struct sockaddr_storage *ss, const char *a)
{
	struct sockaddr_in *s = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	s->sin_family = AF_INET;
	s->sin_port = htons(443);
	T_EQ_INT(inet_pton(AF_INET, a, &s->sin_addr), 1);
	return sizeof(*s);
}

static socklen_t
sa6(struct sockaddr_storage *ss, const char *a)
{
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(443);
	T_EQ_INT(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
	return sizeof(*s);
}

static void
test_sockaddr(void)
{
	struct sockaddr_storage ss;
	socklen_t n;

	T_EQ_INT(fetch_config(NULL, NULL), 0);
	n = sa4(&ss, "127.0.0.1");
	T_CONTAINS(fetch_addr_refused((struct sockaddr *)&ss, n), "loopback");
	n = sa4(&ss, "93.184.216.34");
	T_CHECK(fetch_addr_refused((struct sockaddr *)&ss, n) == NULL);
	/* a sockaddr too short for its family */
	n = sa4(&ss, "93.184.216.34");
	T_CONTAINS(fetch_addr_refused((struct sockaddr *)&ss, n - 4), "not an IP");
	n = sa6(&ss, "::ffff:10.1.2.3");
	T_CONTAINS(fetch_addr_refused((struct sockaddr *)&ss, n), "private");
	n = sa6(&ss, "2606:4700:4700::1111");
	T_CHECK(fetch_addr_refused((struct sockaddr *)&ss, n) == NULL);
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	T_CONTAINS(fetch_addr_refused((struct sockaddr *)&ss, sizeof(ss)), "not an IP");
	T_CONTAINS(fetch_addr_refused(NULL, 0), "not an IP");
}

static void
test_allow(void)
{
	struct fetch_policy p = { 0 };
	struct bf_diag d;
	static const char *const now_ok[] = {
		"https://127.0.0.1/", "https://0x7f000001/", "https://2130706433/",
		"https://127.1:8443/", "https://[::1]/", "https://[0:0:0:0:0:0:0:1]/",
		"https://[::ffff:127.0.0.1]/", "https://localhost/", "https://10.1.2.3/",
		"https://[fd00::5]/", "https://[fdff:ffff::1]/", "https://8.8.8.8/",
	};
	static const char *const still_refused[] = {
		"https://10.2.0.1/", "https://[fc00::1]/", "https://169.254.169.254/",
		"https://[::2]/", "https://192.168.1.1/", "http://127.0.0.1:8080/",
	};
	size_t i;

	p.allow = "127.0.0.0/8, ::1/128,10.1.0.0/16 ,fd00::/8";
	T_EQ_INT(fetch_config(&p, &d), 0);
	for (i = 0; i < sizeof(now_ok) / sizeof(now_ok[0]); i++) {
		bf_diag_clear(&d);
		if (fetch_check_url(now_ok[i], &d) != 0) {
			T_CHECK(!"allowed URL refused");
			fprintf(stderr, "  url %s: %s\n", now_ok[i], d.msg);
		}
	}
	for (i = 0; i < sizeof(still_refused) / sizeof(still_refused[0]); i++)
		T_EQ_INT(fetch_check_url(still_refused[i], &d), BF_ERR_INVALID);

	/* plain http only with allow_http */
	p.allow_http = 1;
	T_EQ_INT(fetch_config(&p, &d), 0);
	T_EQ_INT(fetch_check_url("http://127.0.0.1:8080/", &d), 0);
	T_EQ_INT(fetch_check_url("HTTP://127.0.0.1:8080/", &d), 0);
	T_EQ_INT(fetch_check_url("http://10.2.0.1:8080/", &d), BF_ERR_INVALID);
	T_EQ_INT(fetch_check_url("gopher://127.0.0.1:8080/", &d), BF_ERR_INVALID);
	T_EQ_INT(fetch_check_url("http://127.0.0.1:22/", &d), BF_ERR_INVALID);

	/* every address of a name must pass: localhost is also ::1 when
	 * /etc/hosts says so, and ::1 is no longer listed */
	p.allow = "127.0.0.0/8";
	T_EQ_INT(fetch_config(&p, &d), 0);
	T_EQ_INT(fetch_check_url("http://127.0.0.1:8080/", &d), 0);
	T_EQ_INT(fetch_check_url("http://[::1]:8080/", &d), BF_ERR_INVALID);

	/* a whole-family allowance */
	p.allow = "0.0.0.0/0";
	T_EQ_INT(fetch_config(&p, &d), 0);
	T_EQ_INT(fetch_check_url("http://10.9.8.7:8080/", &d), 0);
	T_EQ_INT(fetch_check_url("http://[fc00::1]:8080/", &d), BF_ERR_INVALID);
	T_EQ_INT(fetch_config(NULL, &d), 0);
	T_EQ_INT(fetch_check_url("https://127.0.0.1/", &d), BF_ERR_INVALID);
}

static void
test_bad_cidr(void)
{
	static const struct {
		const char *allow;
		const char *msg;
	} bad[] = {
		{ "10.0.0.1/8", "expected 10.0.0.0/8" },
		{ "fd00::1/8", "expected fd00::/8" },
		{ "1.2.3.4/33", "not in 0..32" },
		{ "::1/129", "not in 0..128" },
		{ "1.2.3.4/", "prefix length" },
		{ "1.2.3.4/-1", "prefix length" },
		{ "1.2.3.4/8x", "prefix length" },
		{ "foo", "not an IPv4 or IPv6 address" },
		{ "127.1/8", "not an IPv4 or IPv6 address" },
		{ "0x7f000001/32", "not an IPv4 or IPv6 address" },
		{ "localhost", "not an IPv4 or IPv6 address" },
		{ "", "is not a CIDR" },
		{ "127.0.0.0/8,", "is not a CIDR" },
		{ "127.0.0.0/8,,::1/128", "is not a CIDR" },
	};
	struct fetch_policy p = { 0 };
	struct bf_diag d;
	char many[BF_MAX_PEER_ALLOW * 16 + 32];
	size_t i, off = 0;

	T_EQ_INT(fetch_config(NULL, &d), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bf_diag_clear(&d);
		p.allow = bad[i].allow;
		T_EQ_INT(fetch_config(&p, &d), BF_ERR_INVALID);
		T_EQ_STR(d.field, "peer-allow");
		T_CONTAINS(d.msg, bad[i].msg);
	}
	/* a refused configuration leaves the policy as it was */
	T_EQ_INT(fetch_check_url("https://127.0.0.1/", &d), BF_ERR_INVALID);
	for (i = 0; i <= BF_MAX_PEER_ALLOW; i++)
		off += (size_t)snprintf(many + off, sizeof(many) - off, "%s10.%zu.0.0/16",
		    i ? "," : "", i);
	p.allow = many;
	T_EQ_INT(fetch_config(&p, &d), BF_ERR_TOOBIG);
	T_CONTAINS(d.msg, "more than");
	p.allow = NULL;
	p.max_fetches = -1;
	T_EQ_INT(fetch_config(&p, &d), BF_ERR_RANGE);
	T_EQ_INT(fetch_config(NULL, &d), 0);
}

static void
test_opensocket(void)
{
	union {
		struct curl_sockaddr c;
		char pad[sizeof(struct curl_sockaddr) + sizeof(struct sockaddr_in6)];
	} u;
	struct sockaddr_in *s = (struct sockaddr_in *)&u.c.addr;
	struct fetch_policy p = { 0 };
	curl_socket_t fd;

	memset(&u, 0, sizeof(u));
	u.c.family = AF_INET;
	u.c.socktype = SOCK_STREAM;
	u.c.protocol = IPPROTO_TCP;
	u.c.addrlen = sizeof(*s);
	s->sin_family = AF_INET;
	s->sin_port = htons(8080);
	inet_pton(AF_INET, "127.0.0.1", &s->sin_addr);
	/* the address curl is about to connect to, whatever DNS said before */
	T_EQ_INT(fetch_config(NULL, NULL), 0);
	T_EQ_INT(fetch_opensocket(NULL, CURLSOCKTYPE_IPCXN, &u.c), CURL_SOCKET_BAD);
	inet_pton(AF_INET, "10.0.0.1", &s->sin_addr);
	T_EQ_INT(fetch_opensocket(NULL, CURLSOCKTYPE_IPCXN, &u.c), CURL_SOCKET_BAD);
	p.allow = "127.0.0.0/8";
	T_EQ_INT(fetch_config(&p, NULL), 0);
	T_EQ_INT(fetch_opensocket(NULL, CURLSOCKTYPE_IPCXN, &u.c), CURL_SOCKET_BAD);
	inet_pton(AF_INET, "127.0.0.1", &s->sin_addr);
	fd = fetch_opensocket(NULL, CURLSOCKTYPE_IPCXN, &u.c);
	T_CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	T_EQ_INT(fetch_opensocket(NULL, CURLSOCKTYPE_ACCEPT, &u.c), CURL_SOCKET_BAD);
	T_EQ_INT(fetch_config(NULL, NULL), 0);
}

static void
test_slots(void)
{
	struct fetch_policy p = { 0 };

	p.max_fetches = 2;
	T_EQ_INT(fetch_config(&p, NULL), 0);
	T_EQ_INT(fetch_slot_take(), 0);
	T_EQ_INT(fetch_slot_take(), 0);
	T_EQ_INT(fetch_slot_take(), BF_ERR_STATE);
	fetch_slot_give();
	T_EQ_INT(fetch_slot_take(), 0);
	T_EQ_INT(fetch_slot_take(), BF_ERR_STATE);
	fetch_slot_give();
	fetch_slot_give();
	fetch_slot_give();		/* one too many is harmless */
	T_EQ_INT(fetch_slot_take(), 0);
	T_EQ_INT(fetch_slot_take(), 0);
	T_EQ_INT(fetch_slot_take(), BF_ERR_STATE);
	fetch_slot_give();
	fetch_slot_give();
	T_EQ_INT(fetch_config(NULL, NULL), 0);
}

static void
test_nodes(void)
{
	static const struct {
		const char *text;
		size_t n;
	} t[] = {
		{ "{}", 2 },
		{ "[1,2,3]", 4 },
		{ "[{},{},{}]", 7 },
		{ "{\"a\":[1,2],\"b\":{\"c\":null}}", 6 },
		{ "[\"a,b,[c]{d}\",\"e\\\",[\"]", 3 },	/* inside strings, escapes */
		{ "[\"\\\\\",1]", 3 },
	};
	char *big;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		T_EQ_INT(fetch_json_nodes(t[i].text, strlen(t[i].text), 1000), t[i].n);
	T_EQ_INT(fetch_json_nodes("[1,2,3,4,5]", 11, 3), 4);
	/* the hostile shape of the issue: [{},{},...] */
	big = malloc(3 * 100000 + 2);
	T_CHECK(big != NULL);
	if (big == NULL)
		return;
	big[0] = '[';
	for (i = 0; i < 100000; i++)
		memcpy(big + 1 + 3 * i, "{},", 3);
	big[3 * 100000] = ']';
	T_CHECK(fetch_json_nodes(big, 3 * 100000 + 1, BF_MAX_URL_BUNDLE_NODES) > 199000);
	T_EQ_INT(fetch_json_nodes(big, 3 * 100000 + 1, 1000), 1001);
	free(big);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A loopback port nobody listens on. */
static int
closed_port(void)
{
	struct sockaddr_in s;
	socklen_t n = sizeof(s);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&s, sizeof(s));
	getsockname(fd, (struct sockaddr *)&s, &n);
	port = ntohs(s.sin_port);
	close(fd);
	return port;
}

static void
test_generic(void)
{
	static const char *const urls[] = {
		"https://127.0.0.1:8443/", "http://10.0.0.1/", "https://169.254.169.254/",
		"https://[::1]/", "https://0x7f000001/", "https://2130706433/",
		"https://localhost/", "file:///etc/passwd", "gopher://localhost:70/",
		"https://8.8.8.8:25/",
	};
	struct fetch_policy p = { 0 };
	struct bf_diag d, first;
	struct buf b;
	char url[64];
	double t0;
	size_t i;

	T_EQ_INT(fetch_config(NULL, NULL), 0);
	buf_init(&b, 1024);
	bf_diag_clear(&first);
	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		bf_diag_clear(&d);
		t0 = now_ms();
		T_EQ_INT(fetch_url(urls[i], 1024, &b, &d), BF_ERR_INVALID);
		/* refused by policy: at once, nothing connected */
		T_CHECK(now_ms() - t0 < 500);
		T_EQ_STR(d.field, "url");
		if (i == 0)
			first = d;
		T_EQ_STR(d.msg, first.msg);
		T_CHECK(b.data == NULL);
	}
	T_CONTAINS(first.msg, "could not be fetched");
	T_CHECK(strstr(first.msg, "127.0.0.1") == NULL && strstr(first.msg, "loopback") == NULL);
	/* a real network failure (allowed, closed port): the same text */
	p.allow = "127.0.0.0/8";
	p.allow_http = 1;
	T_EQ_INT(fetch_config(&p, NULL), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/x", closed_port());
	bf_diag_clear(&d);
	T_EQ_INT(fetch_url(url, 1024, &b, &d), BF_ERR_IO);
	T_EQ_STR(d.msg, first.msg);
	T_EQ_INT(fetch_config(NULL, NULL), 0);
	buf_free(&b);
}

int
main(void)
{
	test_table();
	test_sockaddr();
	test_allow();
	test_bad_cidr();
	test_opensocket();
	test_slots();
	test_nodes();
	test_generic();
	return t_done();
}
